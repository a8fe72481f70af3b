//! /dev: the character devices every Linux program expects, in a tree the
//! kernel builds at boot (Linux: devtmpfs, and `drivers/char/mem.c` for
//! the memory devices). `/dev/null` swallows writes and reads as EOF,
//! `/dev/zero` reads as zeros, `/dev/full` reads as zeros and refuses
//! writes with ENOSPC, `/dev/random` and `/dev/urandom` read the kernel's
//! random source; `/dev/console` and `/dev/tty` are the console's terminal (`tty/`);
//! `/dev/rtc0` (and the link `/dev/rtc` udev makes) is the hardware clock
//! (`rtc/`). `/dev/shm`
//! is an empty directory for init to mount a tmpfs on. `/dev/fd` and
//! `/dev/std{in,out,err}` are links into `/proc/self/fd`, as a
//! distribution's boot makes them (systemd-tmpfiles or udev; devtmpfs has
//! none): bash's `<(...)` names its pipe `/dev/fd/N`.
//!
//! Where we simplify: the tree is fixed (no mknod), and the nodes have no
//! device numbers (`st_rdev` 0).

use alloc::sync::Arc;

use super::device::Device;
use super::vfs::{Inode, InodeKind, S_IFCHR, S_IFLNK};
use crate::errno::{Errno, KResult};
use crate::mm::heap::BOUNCE_MAX;
use crate::mm::uaccess::{ReadDest, WriteSource};

/// `/dev/null`, `/dev/zero` and `/dev/full` (Linux: `null_fops`,
/// `zero_fops`, `full_fops`), and the random ones (`random_fops`).
enum Mem {
    /// `/dev/null`: reads see end of file, writes are swallowed.
    Null,
    /// `/dev/zero`: reads give zeros, writes are swallowed.
    Zero,
    /// `/dev/full`: reads give zeros, writes fail with ENOSPC.
    Full,
    /// `/dev/random` and `/dev/urandom`: reads give the kernel's random bytes
    /// (Linux's two have not differed since 5.18), writes are dropped.
    Random,
}

impl Device for Mem {
    fn read(&self, buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        match self {
            Mem::Null => Ok(0),
            Mem::Zero | Mem::Full => {
                buf.fill(0);
                Ok(buf.len())
            }
            Mem::Random => {
                crate::random::fill(buf);
                Ok(buf.len())
            }
        }
    }
    fn write(&self, data: &[u8], _nonblock: bool) -> KResult<usize> {
        match self {
            Mem::Full => Err(Errno::ENOSPC),
            // Writes to the random devices mix into the pool in Linux;
            // here they are accepted and dropped.
            _ => Ok(data.len()),
        }
    }
    /// Zeros straight into user memory, end of file for /dev/null (Linux:
    /// `read_iter_zero`, `read_iter_null`).
    fn read_iter(&self, mut dst: ReadDest, nonblock: bool) -> KResult<usize> {
        match self {
            Mem::Null => Ok(0),
            Mem::Zero | Mem::Full => match (dst.len(), dst.zero(0, dst.len())) {
                (0, _) => Ok(0),
                (_, 0) => Err(Errno::EFAULT),
                (_, n) => Ok(n),
            },
            Mem::Random => dst.with_buffer(BOUNCE_MAX, |buf| self.read(buf, nonblock)),
        }
    }
    /// /dev/null and /dev/zero take a write without reading it (Linux:
    /// `write_iter_null`).
    fn write_iter(&self, src: WriteSource, _nonblock: bool) -> KResult<usize> {
        match self {
            Mem::Full => Err(Errno::ENOSPC),
            _ => Ok(src.len()),
        }
    }
    fn maps_anonymous_memory(&self) -> bool {
        matches!(self, Mem::Zero)
    }
}

/// Makes the character device `name` in `dir` with permission bits `mode`,
/// backed by `device`.
fn node(dir: &Arc<Inode>, name: &str, mode: u32, device: Arc<dyn Device>) {
    let inode = Inode::new(S_IFCHR | mode, InodeKind::Device(device));
    let d = dir.dir().expect("a directory");
    d.link(dir, name, inode).expect("fresh name");
}

/// Builds the /dev tree.
pub fn build() -> Arc<Inode> {
    let dev = Inode::new_dir(0o755, None);
    node(&dev, "null", 0o666, Arc::new(Mem::Null));
    node(&dev, "zero", 0o666, Arc::new(Mem::Zero));
    node(&dev, "full", 0o666, Arc::new(Mem::Full));
    node(&dev, "random", 0o666, Arc::new(Mem::Random));
    node(&dev, "urandom", 0o666, Arc::new(Mem::Random));
    let console = super::tty::Console(super::tty::console());
    node(&dev, "console", 0o600, Arc::new(console));
    node(&dev, "tty", 0o666, super::tty::console());
    if let Some(rtc) = super::rtc::Rtc::new() {
        node(&dev, "rtc0", 0o600, rtc);
    }
    let shm = Inode::new_dir(0o1777, None);
    let d = dev.dir().expect("a directory");
    d.link(&dev, "shm", shm).expect("fresh name");
    for (name, target) in [
        ("rtc", "rtc0"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let link = Inode::new(S_IFLNK | 0o777, InodeKind::Symlink(target.into()));
        d.link(&dev, name, link).expect("fresh name");
    }
    dev
}
