//! System V shared memory's `struct shmid64_ds` (Linux:
//! `include/uapi/asm-generic/shmbuf.h`, `ipcbuf.h`): what shmctl(2)'s
//! IPC_STAT fills in.

use crate::Pod;

/// `struct shmid64_ds` as arm64 lays it out: `struct ipc64_perm` (key,
/// uid, gid, cuid, cgid, mode, seq, padding, two unused longs), then
/// size, the three times, the creator's and last PIDs, the attach count
/// and two unused longs: 112 bytes.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct ShmidDs {
    /// The key.
    pub key: i32,
    /// Owner.
    pub uid: u32,
    /// Owner's group.
    pub gid: u32,
    /// Creator.
    pub cuid: u32,
    /// Creator's group.
    pub cgid: u32,
    /// Permissions, SHM_DEST.
    pub mode: u32,
    /// The slot's sequence number.
    pub seq: u16,
    /// Padding (`__pad2` and the alignment of `__unused1`).
    pub pad: [u16; 3],
    /// Unused.
    pub unused1: [u64; 2],
    /// Size in bytes.
    pub segsz: u64,
    /// Last attach.
    pub atime: i64,
    /// Last detach.
    pub dtime: i64,
    /// Last change.
    pub ctime: i64,
    /// Creator's PID.
    pub cpid: i32,
    /// Last attacher's or detacher's PID.
    pub lpid: i32,
    /// How many attaches.
    pub nattch: u64,
    /// Unused.
    pub unused2: [u64; 2],
}

const _: () = assert!(core::mem::size_of::<ShmidDs>() == 112);

// SAFETY: repr(C) integers with the padding spelled out as fields (112
// bytes, no gaps), so every bit pattern is valid and none is hidden.
unsafe impl Pod for ShmidDs {}
