//! `struct stat` (Linux: `include/uapi/asm-generic/stat.h`, which arm64
//! uses): what stat(2), fstat(2) and fstatat(2) fill in.

use crate::Pod;

/// `struct stat` as the Linux arm64 ABI lays it out (`asm-generic/stat.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// The file system's device number: a tmpfs mount's own, 1 for the pseudo
    /// file systems.
    pub st_dev: u64,
    /// The inode number.
    pub st_ino: u64,
    /// The file type and permission bits.
    pub st_mode: u32,
    /// The number of names linking it.
    pub st_nlink: u32,
    /// The owner's user id.
    pub st_uid: u32,
    /// The group id.
    pub st_gid: u32,
    /// A device node's number (`i_rdev`); 0 for any other file.
    pub st_rdev: u64,
    /// Padding, where the ABI has it.
    pub __pad1: u64,
    /// Size in bytes: a file's length, a link's target length; for a
    /// directory 20 per entry, as tmpfs reports (`BOGO_DIRENT_SIZE`).
    pub st_size: i64,
    /// The preferred I/O size in bytes: a page.
    pub st_blksize: i32,
    /// Padding, where the ABI has it.
    pub __pad2: i32,
    /// 512-byte blocks allocated.
    pub st_blocks: i64,
    /// Last access, seconds since the epoch.
    pub st_atime: i64,
    /// Last access, nanoseconds into that second.
    pub st_atime_nsec: u64,
    /// Last modification, seconds since the epoch.
    pub st_mtime: i64,
    /// Last modification, nanoseconds into that second.
    pub st_mtime_nsec: u64,
    /// Last change, seconds since the epoch.
    pub st_ctime: i64,
    /// Last change, nanoseconds into that second.
    pub st_ctime_nsec: u64,
    /// Reserved by the ABI, always zero.
    pub __unused: [u32; 2],
}

const _: () = assert!(core::mem::size_of::<Stat>() == 128);

// SAFETY: repr(C) integers with the ABI's padding as named fields (128
// bytes, no gaps), so every bit pattern is valid and none is hidden.
unsafe impl Pod for Stat {}

uapi_consts! {
    /// The file type bits of [`Entry::mode`]; the rest are the permission bits
    /// (Linux: `include/uapi/linux/stat.h`).
    S_IFMT: u32 = 0o170000;
    /// S_IFDIR: a directory.
    S_IFDIR: u32 = 0o40000;
    /// S_IFREG: a regular file.
    S_IFREG: u32 = 0o100000;
    /// S_IFLNK: a symbolic link.
    S_IFLNK: u32 = 0o120000;
    /// S_IFCHR: a character device.
    S_IFCHR: u32 = 0o20000;
    /// S_IFIFO: a named pipe (FIFO).
    S_IFIFO: u32 = 0o10000;
    /// The sticky bit: in a directory, only a name's owner (or the
    /// directory's) may remove it.
    S_ISVTX: u32 = 0o1000;
    /// The set-group-ID bit.
    S_ISGID: u32 = 0o2000;
    /// `S_IFSOCK` (`include/uapi/linux/stat.h`).
    S_IFSOCK: u32 = 0o140000;
    S_IFBLK: u32 = 0o60000;
    /// STATX_BASIC_STATS: the fields of `struct stat`, all that is filled in.
    STATX_BASIC_STATS: u32 = 0x7ff;
    /// S_ISUID: exec runs the program as its owner.
    S_ISUID: u32 = 0o4000;
}

/// A device number from its major and minor, as `st_dev` and `st_rdev`
/// hold it (Linux: `new_encode_dev`; glibc's `makedev`).
pub const fn makedev(major: u32, minor: u32) -> u64 {
    let (major, minor) = (major as u64, minor as u64);
    (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & !0xff) << 12) | ((major & !0xfff) << 32)
}

/// A device number's major (glibc's `gnu_dev_major`).
pub const fn dev_major(dev: u64) -> u32 {
    (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32
}

/// A device number's minor (glibc's `gnu_dev_minor`).
pub const fn dev_minor(dev: u64) -> u32 {
    ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32
}
