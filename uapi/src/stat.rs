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
