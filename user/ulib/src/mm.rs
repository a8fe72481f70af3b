//! Address-space calls: mmap and its relatives, and brk. Most are `unsafe`:
//! they can unmap or change memory that Rust code is using, which the
//! compiler cannot check.

use crate::errno::Errno;
use crate::sys::*;
use crate::syscall;
pub use uapi::mman::{
    MADV_DONTNEED, MAP_ANONYMOUS, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_NORESERVE, MAP_PRIVATE,
    MAP_SHARED, MREMAP_FIXED, MREMAP_MAYMOVE, MS_ASYNC, MS_SYNC, PROT_EXEC, PROT_NONE, PROT_READ,
    PROT_WRITE,
};

pub const PAGE_SIZE: usize = 4096;

/// Maps `len` bytes and returns the address.
///
/// # Safety
/// With `MAP_FIXED` the new mapping replaces whatever was at `addr`, which
/// must not be memory that Rust code still uses.
pub unsafe fn mmap(
    addr: usize,
    len: usize,
    prot: u32,
    flags: u32,
    fd: i32,
    offset: usize,
) -> Result<usize, Errno> {
    syscall!(__NR_mmap, addr, len, prot, flags, fd, offset)
}

/// An anonymous private read-write mapping: the common case, which cannot
/// disturb existing memory.
pub fn map_anon(len: usize) -> Result<usize, Errno> {
    map_anon_flags(len, 0)
}

/// [`map_anon`] with MAP_NORESERVE: not counted by the overcommit check,
/// so it may be larger than RAM (as on Linux), for a test that touches
/// little of it.
pub fn map_anon_noreserve(len: usize) -> Result<usize, Errno> {
    map_anon_flags(len, MAP_NORESERVE)
}

/// An anonymous private read-write mapping with `flags` added.
fn map_anon_flags(len: usize, flags: u32) -> Result<usize, Errno> {
    // SAFETY: without MAP_FIXED the kernel picks an unused range.
    unsafe {
        mmap(
            0,
            len,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    }
}

/// # Safety
/// Nothing may use the range afterwards.
pub unsafe fn munmap(addr: usize, len: usize) -> Result<(), Errno> {
    syscall!(__NR_munmap, addr, len).map(drop)
}

/// # Safety
/// Code that accesses the range must expect the new protection (a test that
/// means to fault on it, say).
pub unsafe fn mprotect(addr: usize, len: usize, prot: u32) -> Result<(), Errno> {
    syscall!(__NR_mprotect, addr, len, prot).map(drop)
}

/// # Safety
/// Some advice (`MADV_DONTNEED`) discards the contents of the range.
pub unsafe fn madvise(addr: usize, len: usize, advice: u32) -> Result<(), Errno> {
    syscall!(__NR_madvise, addr, len, advice).map(drop)
}

/// Resizes or moves a mapping; returns its (possibly new) address.
///
/// # Safety
/// The old range may be unmapped, and with `MREMAP_FIXED` whatever was at
/// `new_addr` is replaced.
pub unsafe fn mremap(
    old_addr: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> Result<usize, Errno> {
    syscall!(__NR_mremap, old_addr, old_len, new_len, flags, new_addr)
}

/// Writes a shared file mapping back to its file.
pub fn msync(addr: usize, len: usize, flags: u32) -> Result<(), Errno> {
    // SAFETY: msync changes no memory contents.
    unsafe { syscall!(__NR_msync, addr, len, flags) }.map(drop)
}

/// Fills `vec` with one byte per page of the range, bit 0 set where the
/// page is resident.
pub fn mincore(addr: usize, len: usize, vec: &mut [u8]) -> Result<(), Errno> {
    assert!(
        vec.len() >= len.div_ceil(PAGE_SIZE),
        "mincore: vec too short"
    );
    // SAFETY: the kernel writes one byte per page, which fits in vec.
    unsafe { syscall!(__NR_mincore, addr, len, vec.as_mut_ptr()) }.map(drop)
}

/// Moves the program break to `addr` (0 asks where it is) and returns the
/// break. It never fails with an errno: on failure the old break comes back.
///
/// # Safety
/// Lowering the break unmaps the memory above it.
pub unsafe fn brk(addr: usize) -> usize {
    crate::syscall::raw(__NR_brk, [addr, 0, 0, 0, 0, 0]) as usize
}
