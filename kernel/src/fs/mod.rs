//! Files: the VFS, tmpfs with its page cache of large folios, the /proc and
//! /sys pseudo filesystems, the /dev tree, and the initramfs unpacked at
//! boot.
//!
//! No `unsafe` here: raw memory and registers are mm's, task's and arch's.
#![deny(unsafe_code)]

pub mod cpio;
pub mod devfs;
pub mod device;
pub mod eventfd;
pub mod eventpoll;
pub mod fs_context;
pub mod initramfs;
pub mod pidfd;
pub mod poll;
pub mod procfs;
pub mod rtc;
pub mod signalfd;
pub mod sysfs;
pub mod timerfd;
pub mod tmpfs;
pub mod tty;
pub mod vfs;

use alloc::sync::Arc;

use crate::cmdline::Cmdline;
use vfs::Inode;

/// Mounts the root tmpfs with /proc, /sys and /dev on it, applies the huge-page
/// knobs from the command line, and unpacks the initrd into it.
pub fn init(cmdline: Cmdline, initrd: Option<&[u8]>) -> Option<initramfs::Unpacked> {
    eventpoll::init(crate::mm::frame::total_pages());
    crate::mm::huge_memory::init_huge_settings();
    crate::mm::huge_memory::apply_cmdline(cmdline);
    tmpfs::apply_cmdline(cmdline);
    let root = tmpfs::new_mount("").expect("default tmpfs options");
    vfs::set_root(root.clone());
    link(&root, "proc", procfs::build());
    link(&root, "sys", sysfs::build());
    link(&root, "dev", devfs::build());
    initrd.map(|archive| initramfs::unpack(&root, archive))
}

/// Links the pseudo filesystem root `dir` into the root tmpfs as `name`
/// (where Linux would mount it), with a device number of its own, as
/// each of Linux's is a file system of its own; a clash is a boot bug, so
/// it panics.
fn link(root: &Arc<Inode>, name: &str, dir: Arc<Inode>) {
    dir.set_pseudo_dev(vfs::anon_dev());
    root.dir()
        .expect("root is a directory")
        .link(root, name, dir)
        .expect("fresh root");
}
