//! Memory system calls: argument checks and user copies around `mm::mmap`.

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::mm::mm_struct::Mm;
use crate::mm::mmap;
use alloc::sync::Arc;

/// The caller's address space; EFAULT from a kernel thread, which has none.
fn mm() -> KResult<Arc<Mm>> {
    crate::task::current_mm().ok_or(Errno::EFAULT)
}

/// mmap(2): map `len` bytes of the file at `fd` from offset `off`, or
/// anonymous memory under MAP_ANONYMOUS, with `prot` and `flags`
/// (Linux: `ksys_mmap_pgoff`); returns the address. EBADF for a file
/// mapping without an open `fd`.
pub fn mmap(addr: usize, len: usize, prot: u32, flags: u32, fd: i32, off: i64) -> SysResult {
    let file = if flags & mmap::MAP_ANONYMOUS == 0 {
        let p = crate::task::current_process().ok_or(Errno::EBADF)?;
        let f = if fd < 0 {
            Err(Errno::EBADF)
        } else {
            p.files.lock().get(fd as usize)
        };
        Some(f?)
    } else {
        None
    };
    mmap::mmap(&mm()?, addr, len, prot, flags, file, off).map(|a| a as i64)
}

/// munmap(2): unmap the pages of `[addr, addr + len)`.
pub fn munmap(addr: usize, len: usize) -> SysResult {
    mmap::munmap(&mm()?, addr, len).map(|_| 0)
}

/// mprotect(2): give the pages of `[addr, addr + len)` the access `prot`.
pub fn mprotect(addr: usize, len: usize, prot: u32) -> SysResult {
    mmap::mprotect(&mm()?, addr, len, prot).map(|_| 0)
}

/// madvise(2): act on `advice` (`MADV_*`) for the pages of
/// `[addr, addr + len)`.
pub fn madvise(addr: usize, len: usize, advice: u32) -> SysResult {
    mmap::madvise(&mm()?, addr, len, advice).map(|_| 0)
}

/// brk(2): move the end of the heap to `addr`; returns the end, which
/// stays where it was if it cannot move (so brk(0) asks where it is).
pub fn brk(addr: usize) -> SysResult {
    Ok(mmap::brk(&mm()?, addr) as i64)
}

/// mremap(2): shrink the mapping at `old` from `old_len` to `new_len`
/// bytes in place, or move it elsewhere (MREMAP_MAYMOVE, MREMAP_FIXED at
/// `new_addr`); returns where it is now.
pub fn mremap(
    old: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> SysResult {
    mmap::mremap(&mm()?, old, old_len, new_len, flags, new_addr).map(|a| a as i64)
}

/// msync(2): write back the mapped file range; only checks it, as tmpfs
/// keeps everything in memory.
pub fn msync(addr: usize, len: usize, flags: u32) -> SysResult {
    mmap::msync(&mm()?, addr, len, flags).map(|_| 0)
}

/// mincore(2): one byte per page of `[addr, addr + len)` into `uvec`, 1
/// if the page is in memory.
pub fn mincore(addr: usize, len: usize, uvec: usize) -> SysResult {
    mmap::mincore(&mm()?, addr, len, uvec).map(|_| 0)
}

/// mlock(2).
pub fn mlock(addr: usize, len: usize) -> SysResult {
    mmap::mlock(&mm()?, addr, len, 0).map(|_| 0)
}

/// mlock2(2): mlock with MLOCK_ONFAULT.
pub fn mlock2(addr: usize, len: usize, flags: u32) -> SysResult {
    mmap::mlock(&mm()?, addr, len, flags).map(|_| 0)
}

/// munlock(2).
pub fn munlock(addr: usize, len: usize) -> SysResult {
    mmap::munlock(&mm()?, addr, len).map(|_| 0)
}

/// mlockall(2).
pub fn mlockall(flags: u32) -> SysResult {
    mmap::mlockall(&mm()?, flags).map(|_| 0)
}

/// munlockall(2).
pub fn munlockall() -> SysResult {
    mmap::munlockall(&mm()?).map(|_| 0)
}
