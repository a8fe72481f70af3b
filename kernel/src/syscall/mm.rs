//! Memory system calls: argument checks and user copies around `mm::mmap`
//! and its siblings (`mm::mprotect`, `mm::madvise`, `mm::mlock`...).

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::mm_struct::{Mm, MMF_HAS_MDWE, MMF_HAS_MDWE_NO_INHERIT};
use crate::mm::{madvise, mincore, mlock, mmap, mprotect, mremap, mseal, msync};
use crate::task::cred::CAP_IPC_LOCK;
use alloc::sync::Arc;
use core::sync::atomic::Ordering;
use uapi::prctl::{PR_MDWE_NO_INHERIT, PR_MDWE_REFUSE_EXEC_GAIN};

/// The caller's address space; EFAULT from a kernel thread, which has none.
fn mm() -> KResult<Arc<Mm>> {
    crate::task::current_mm().ok_or(Errno::EFAULT)
}

/// mmap(2): map `len` bytes of the file at `fd` from offset `off`, or
/// anonymous memory under MAP_ANONYMOUS, with `prot` and `flags`; returns
/// the address (Linux: arm64's `sys_mmap`, then `ksys_mmap_pgoff`): EINVAL
/// for an offset not a multiple of the page size, EBADF for a file mapping
/// without an open `fd`, EINVAL for MAP_HUGETLB (no huge page sizes here).
pub fn mmap(addr: usize, len: usize, prot: u32, flags: u32, fd: i32, off: i64) -> SysResult {
    if !(off as usize).is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
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
    if flags & mmap::MAP_HUGETLB != 0 {
        return Err(Errno::EINVAL);
    }
    let pgoff = off as u64 / PAGE_SIZE as u64;
    mmap::mmap(&mm()?, addr, len, prot, flags, file, pgoff).map(|a| a as i64)
}

/// munmap(2): unmap the pages of `[addr, addr + len)`.
pub fn munmap(addr: usize, len: usize) -> SysResult {
    mmap::munmap(&mm()?, addr, len).map(|_| 0)
}

/// mprotect(2): give the pages of `[addr, addr + len)` the access `prot`.
pub fn mprotect(addr: usize, len: usize, prot: u32) -> SysResult {
    mprotect::mprotect(&mm()?, addr, len, prot).map(|_| 0)
}

/// madvise(2): act on `advice` (`MADV_*`) for the pages of
/// `[addr, addr + len)`.
pub fn madvise(addr: usize, len: usize, advice: u32) -> SysResult {
    madvise::madvise(&mm()?, addr, len, advice).map(|_| 0)
}

/// brk(2): move the end of the heap to `addr`; returns the end, which
/// stays where it was if it cannot move (so brk(0) asks where it is).
pub fn brk(addr: usize) -> SysResult {
    Ok(mmap::brk(&mm()?, addr) as i64)
}

/// mremap(2): shrink, grow or move the mapping at `old` from `old_len` to
/// `new_len` bytes (MREMAP_MAYMOVE, MREMAP_FIXED at `new_addr`,
/// MREMAP_DONTUNMAP); returns where it is now.
pub fn mremap(
    old: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> SysResult {
    mremap::mremap(&mm()?, old, old_len, new_len, flags, new_addr).map(|a| a as i64)
}

/// msync(2): write back the mapped file range; only checks it, as tmpfs
/// keeps everything in memory.
pub fn msync(addr: usize, len: usize, flags: u32) -> SysResult {
    msync::msync(&mm()?, addr, len, flags).map(|_| 0)
}

/// mincore(2): one byte per page of `[addr, addr + len)` into `uvec`, 1
/// if the page is in memory.
pub fn mincore(addr: usize, len: usize, uvec: usize) -> SysResult {
    mincore::mincore(&mm()?, addr, len, uvec).map(|_| 0)
}

/// The most bytes the caller may lock (Linux: `can_do_mlock` and the
/// RLIMIT_MEMLOCK checks of `do_mlock`): None, no limit, with
/// CAP_IPC_LOCK; EPERM for a soft limit of 0 without it.
fn memlock_limit() -> KResult<Option<u64>> {
    if crate::task::capable(CAP_IPC_LOCK) {
        return Ok(None);
    }
    let p = crate::task::current_process().ok_or(Errno::ESRCH)?;
    match p.memlock_limit() {
        0 => Err(Errno::EPERM),
        limit => Ok(Some(limit)),
    }
}

/// mlock(2).
pub fn mlock(addr: usize, len: usize) -> SysResult {
    mlock::mlock(&mm()?, addr, len, 0, memlock_limit()?).map(|_| 0)
}

/// mlock2(2): mlock with MLOCK_ONFAULT.
pub fn mlock2(addr: usize, len: usize, flags: u32) -> SysResult {
    mlock::mlock(&mm()?, addr, len, flags, memlock_limit()?).map(|_| 0)
}

/// munlock(2).
pub fn munlock(addr: usize, len: usize) -> SysResult {
    mlock::munlock(&mm()?, addr, len).map(|_| 0)
}

/// mlockall(2).
pub fn mlockall(flags: u32) -> SysResult {
    mlock::mlockall(&mm()?, flags, memlock_limit()?).map(|_| 0)
}

/// munlockall(2).
pub fn munlockall() -> SysResult {
    mlock::munlockall(&mm()?).map(|_| 0)
}

/// mseal(2): seal the mappings of `[addr, addr + len)`.
pub fn mseal(addr: usize, len: usize, flags: u64) -> SysResult {
    mseal::mseal(&mm()?, addr, len, flags).map(|_| 0)
}

/// The caller's PR_MDWE_* bits (Linux: `get_current_mdwe`).
fn current_mdwe(mm: &Mm) -> u64 {
    let flags = mm.flags.load(Ordering::Acquire);
    (if flags & MMF_HAS_MDWE != 0 {
        PR_MDWE_REFUSE_EXEC_GAIN
    } else {
        0
    }) | (if flags & MMF_HAS_MDWE_NO_INHERIT != 0 {
        PR_MDWE_NO_INHERIT
    } else {
        0
    })
}

/// prctl(PR_SET_MDWE) (Linux: `prctl_set_mdwe`): EINVAL for other
/// arguments, unknown bits or NO_INHERIT alone; EPERM to change bits once
/// set.
pub fn prctl_set_mdwe(bits: u64, rest: [u64; 3]) -> SysResult {
    if rest != [0; 3]
        || bits & !(PR_MDWE_REFUSE_EXEC_GAIN | PR_MDWE_NO_INHERIT) != 0
        || (bits & PR_MDWE_NO_INHERIT != 0 && bits & PR_MDWE_REFUSE_EXEC_GAIN == 0)
    {
        return Err(Errno::EINVAL);
    }
    let mm = mm().map_err(|_| Errno::EINVAL)?;
    let current = current_mdwe(&mm);
    if current != 0 && current != bits {
        return Err(Errno::EPERM);
    }
    let mut set = 0;
    if bits & PR_MDWE_NO_INHERIT != 0 {
        set |= MMF_HAS_MDWE_NO_INHERIT;
    }
    if bits & PR_MDWE_REFUSE_EXEC_GAIN != 0 {
        set |= MMF_HAS_MDWE;
    }
    mm.flags.fetch_or(set, Ordering::AcqRel);
    Ok(0)
}

/// prctl(PR_GET_MDWE): the PR_MDWE_* bits; EINVAL for other arguments.
pub fn prctl_get_mdwe(args: [u64; 4]) -> SysResult {
    if args != [0; 4] {
        return Err(Errno::EINVAL);
    }
    let mm = mm().map_err(|_| Errno::EINVAL)?;
    Ok(current_mdwe(&mm) as i64)
}
