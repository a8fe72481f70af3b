//! Memory system calls: argument checks and user copies around `mm::mmap`.

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::mm::mm_struct::Mm;
use crate::mm::mmap;
use alloc::sync::Arc;

fn mm() -> KResult<Arc<Mm>> {
    crate::task::current_mm().ok_or(Errno::EFAULT)
}

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

pub fn munmap(addr: usize, len: usize) -> SysResult {
    mmap::munmap(&mm()?, addr, len).map(|_| 0)
}

pub fn mprotect(addr: usize, len: usize, prot: u32) -> SysResult {
    mmap::mprotect(&mm()?, addr, len, prot).map(|_| 0)
}

pub fn madvise(addr: usize, len: usize, advice: u32) -> SysResult {
    mmap::madvise(&mm()?, addr, len, advice).map(|_| 0)
}

pub fn brk(addr: usize) -> SysResult {
    Ok(mmap::brk(&mm()?, addr) as i64)
}

pub fn mremap(
    old: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> SysResult {
    mmap::mremap(&mm()?, old, old_len, new_len, flags, new_addr).map(|a| a as i64)
}

pub fn msync(addr: usize, len: usize, flags: u32) -> SysResult {
    mmap::msync(&mm()?, addr, len, flags).map(|_| 0)
}

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
