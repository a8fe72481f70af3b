//! /dev: the character devices every Linux program expects, in a tree the
//! kernel builds at boot (Linux: devtmpfs, and `drivers/char/mem.c` for
//! the memory devices). `/dev/null` swallows writes and reads as EOF,
//! `/dev/zero` reads as zeros, `/dev/full` reads as zeros and refuses
//! writes with ENOSPC, `/dev/random` and `/dev/urandom` read the kernel's
//! random source, `/dev/kmsg` is the kernel log (`printk`) for dmesg; `/dev/console` and `/dev/tty` are the console's terminal (`tty/`);
//! `/dev/rtc0` (and the link `/dev/rtc` udev makes) is the hardware clock
//! (`rtc/`). `/dev/shm`
//! is an empty directory for init to mount a tmpfs on. `/dev/fd` and
//! `/dev/std{in,out,err}` are links into `/proc/self/fd`, as a
//! distribution's boot makes them (systemd-tmpfiles or udev; devtmpfs has
//! none): bash's `<(...)` names its pipe `/dev/fd/N`.
//!
//! Each node has Linux's device number (`st_rdev`: /dev/null is 1:3),
//! and a driver is found by number, so a node mknod makes elsewhere with
//! the same number opens the same device ([`chrdev`]).
//!
//! Where we simplify: the tree is fixed (/dev is no tmpfs here, so
//! nothing can be made in it), and `rtc0` has the major Linux 6.12
//! happens to give it on QEMU's `virt` (249; Linux hands it out at boot).

use alloc::sync::Arc;

use super::device::Device;
use super::vfs::{Inode, InodeKind, S_IFCHR, S_IFLNK};
use crate::errno::{Errno, KResult};
use crate::mm::heap::BOUNCE_MAX;
use crate::mm::uaccess::{ReadDest, WriteSource};
use crate::sync::SpinLock;
use spin::Once;
use uapi::capability::{CAP_SYSLOG, CAP_SYS_ADMIN};
use uapi::fcntl::{O_ACCMODE, O_WRONLY, SEEK_DATA, SEEK_END, SEEK_SET};
use uapi::stat::{dev_major, dev_minor, makedev};

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

/// `/dev/kmsg`, the kernel log as records (Linux: `devkmsg_fops` in
/// `kernel/printk/printk.c`): each read returns one, as
/// `PREFIX,SEQ,MICROSECONDS,-;TEXT` (`printk::kmsg_format`), from the
/// file's own place, which starts at the oldest kept; a read waits for
/// the next line, or is EAGAIN with O_NONBLOCK; EINVAL if the buffer is
/// too small (the record is skipped, as Linux does). Each write is one
/// record, `<N>` at its start giving its facility and level (default
/// `<12>`: LOG_USER, LOG_WARNING). Reading needs CAP_SYSLOG
/// (`dmesg_restrict`). Where we simplify: a reader the log overtook goes
/// on from the oldest record kept without an EPIPE first.
struct Kmsg;

/// How often a blocking read of /dev/kmsg looks for a new line: the log
/// wakes no one (it is written from anywhere, interrupts included).
const KMSG_POLL_MS: u64 = 10;

/// The longest write /dev/kmsg takes (Linux: `PRINTKRB_RECORD_MAX`).
const KMSG_RECORD_MAX: usize = 1024;

/// The prefix of a /dev/kmsg write without `<N>` (Linux:
/// `default_message_loglevel` 4 at facility LOG_USER).
const KMSG_DEFAULT_PREFIX: u8 = 1 << 3 | 4;

impl Device for Kmsg {
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL) // reads go through `read_pos`
    }

    fn read_pos(&self, dst: ReadDest, pos: &SpinLock<u64>, nonblock: bool) -> KResult<usize> {
        let record = loop {
            let seq = *pos.lock();
            match crate::printk::record(seq) {
                Ok(r) => break r,
                Err(Some(first)) => *pos.lock() = first,
                Err(None) if nonblock => return Err(Errno::EAGAIN),
                Err(None) => {
                    if crate::task::signal::signal_pending() {
                        return Err(Errno::ERESTARTSYS);
                    }
                    crate::task::msleep(KMSG_POLL_MS);
                }
            }
        };
        *pos.lock() = record.seq + 1;
        let text = crate::printk::kmsg_format(&record);
        if text.len() > dst.len() {
            return Err(Errno::EINVAL);
        }
        dst.with_buffer(BOUNCE_MAX, |buf| {
            buf[..text.len()].copy_from_slice(text.as_bytes());
            Ok(text.len())
        })
    }

    /// SEEK_SET to 0: the oldest record; SEEK_DATA: the first after the
    /// last SYSLOG_ACTION_CLEAR; SEEK_END: past the newest (Linux:
    /// `devkmsg_llseek`); the position is always 0.
    fn llseek(&self, pos: &SpinLock<u64>, offset: i64, whence: u32) -> KResult<u64> {
        if offset != 0 {
            return Err(Errno::ESPIPE);
        }
        let (first, next) = crate::printk::bounds();
        *pos.lock() = match whence {
            SEEK_SET => first,
            SEEK_DATA => crate::printk::clear_seq(),
            SEEK_END => next,
            _ => return Err(Errno::EINVAL),
        };
        Ok(0)
    }

    /// One write, one record: EINVAL past Linux's largest record
    /// (`PRINTKRB_RECORD_MAX`, 1024 bytes), so no write is cut in two.
    fn write_iter(&self, src: WriteSource, nonblock: bool) -> KResult<usize> {
        if src.len() > KMSG_RECORD_MAX {
            return Err(Errno::EINVAL);
        }
        src.with_bytes(|bytes| self.write(bytes, nonblock))
    }

    fn write(&self, data: &[u8], _nonblock: bool) -> KResult<usize> {
        let line = data.strip_suffix(b"\n").unwrap_or(data);
        crate::printk::log_user_line(KMSG_DEFAULT_PREFIX, line);
        Ok(data.len())
    }

    fn opened(&self, flags: u32) -> KResult<()> {
        let reads = flags & O_ACCMODE != O_WRONLY;
        if reads && !crate::task::capable(CAP_SYSLOG) && !crate::task::capable(CAP_SYS_ADMIN) {
            return Err(Errno::EPERM);
        }
        Ok(())
    }
}

/// The memory devices' major (Linux: `MEM_MAJOR`, `drivers/char/mem.c`).
const MEM_MAJOR: u32 = 1;
/// The terminal aliases' major: 5:0 /dev/tty, 5:1 /dev/console (Linux:
/// `TTYAUX_MAJOR`).
const TTYAUX_MAJOR: u32 = 5;
/// The RTC's major as Linux 6.12 gives it on QEMU's `virt`.
const RTC_MAJOR: u32 = 249;

/// The one RTC device: every open shares its state (one opener at a time).
fn rtc() -> Option<Arc<dyn Device>> {
    static RTC: Once<Option<Arc<super::rtc::Rtc>>> = Once::new();
    let rtc = RTC.call_once(super::rtc::Rtc::new).clone()?;
    Some(rtc)
}

/// The driver of character device number `rdev`, None if there is none
/// (Linux: `chrdev_open`'s look-up in `cdev_map`; the memory devices by
/// minor from `mem.c`'s `devlist`).
pub fn chrdev(rdev: u64) -> Option<Arc<dyn Device>> {
    Some(match (dev_major(rdev), dev_minor(rdev)) {
        (MEM_MAJOR, 3) => Arc::new(Mem::Null),
        (MEM_MAJOR, 5) => Arc::new(Mem::Zero),
        (MEM_MAJOR, 7) => Arc::new(Mem::Full),
        (MEM_MAJOR, 8 | 9) => Arc::new(Mem::Random),
        (MEM_MAJOR, 11) => Arc::new(Kmsg),
        (TTYAUX_MAJOR, 0) => super::tty::console(),
        (TTYAUX_MAJOR, 1) => Arc::new(super::tty::Console(super::tty::console())),
        (RTC_MAJOR, 0) => rtc()?,
        _ => return None,
    })
}

/// Makes the character device `name` in `dir` with permission bits `mode`
/// and number `major:minor`, if there is a driver for it.
fn node(dir: &Arc<Inode>, name: &str, mode: u32, major: u32, minor: u32) {
    let rdev = makedev(major, minor);
    let Some(device) = chrdev(rdev) else {
        return;
    };
    let inode = Inode::new_node(S_IFCHR | mode, Some(rdev), InodeKind::Device(device));
    let d = dir.dir().expect("a directory");
    d.link(dir, name, inode).expect("fresh name");
}

/// Builds the /dev tree.
pub fn build() -> Arc<Inode> {
    let dev = Inode::new_dir(0o755, None);
    node(&dev, "null", 0o666, MEM_MAJOR, 3);
    node(&dev, "zero", 0o666, MEM_MAJOR, 5);
    node(&dev, "full", 0o666, MEM_MAJOR, 7);
    node(&dev, "random", 0o666, MEM_MAJOR, 8);
    node(&dev, "urandom", 0o666, MEM_MAJOR, 9);
    node(&dev, "kmsg", 0o644, MEM_MAJOR, 11);
    node(&dev, "console", 0o600, TTYAUX_MAJOR, 1);
    node(&dev, "tty", 0o666, TTYAUX_MAJOR, 0);
    node(&dev, "rtc0", 0o600, RTC_MAJOR, 0);
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
