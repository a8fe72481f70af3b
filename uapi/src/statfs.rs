//! `struct statfs` (Linux: `include/uapi/asm-generic/statfs.h`, with
//! arm64's 64-bit words): what statfs(2) and fstatfs(2) fill in.

use crate::Pod;

/// `struct statfs` on arm64 (`asm-generic/statfs.h`, 64-bit words).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Statfs {
    /// The filesystem's magic number (`TMPFS_MAGIC`, `PROC_SUPER_MAGIC`,
    /// ...).
    pub f_type: u64,
    /// The best block size for I/O, in bytes: a page.
    pub f_bsize: u64,
    /// Size of the filesystem, in `f_frsize` units.
    pub f_blocks: u64,
    /// Free blocks.
    pub f_bfree: u64,
    /// Free blocks an unprivileged user may take (all of them, for tmpfs).
    pub f_bavail: u64,
    /// How many inodes the filesystem may hold.
    pub f_files: u64,
    /// How many more inodes it may take.
    pub f_ffree: u64,
    /// The filesystem id; zero.
    pub f_fsid: [i32; 2],
    /// The longest name in a directory, in bytes (`NAME_MAX`).
    pub f_namelen: u64,
    /// The unit of `f_blocks`, in bytes: a page.
    pub f_frsize: u64,
    /// The mount flags (`ST_*`); ST_VALID says the field is filled in.
    pub f_flags: u64,
    /// Padding, zero.
    pub f_spare: [u64; 4],
}

const _: () = assert!(core::mem::size_of::<Statfs>() == 120);

// SAFETY: repr(C) 64-bit words (and two i32s filling one), 120 bytes with
// no gaps: every bit pattern is valid and none is hidden.
unsafe impl Pod for Statfs {}
