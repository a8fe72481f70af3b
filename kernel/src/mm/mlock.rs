//! mlock, mlock2, munlock, mlockall and munlockall (Linux: `mm/mlock.c`):
//! the VMAs' VM_LOCKED and VM_LOCKONFAULT, and populating what is locked.
//!
//! Where we simplify: pages are never reclaimed here, so locking changes
//! only the flags and the population. The caller passes the
//! RLIMIT_MEMLOCK that binds it (none with CAP_IPC_LOCK), and the bytes
//! locked are counted off the VMAs (Linux keeps `mm->locked_vm`).

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SIZE, USER_TOP};
use crate::mm::mm_struct::{Mm, MmMap, MmapWriteGuard};
use crate::mm::mmap::{populate, vma_modify_flags};
use crate::mm::vma::{Vma, VM_DONTEXPAND, VM_DROPPABLE, VM_LOCKED, VM_LOCKED_MASK, VM_LOCKONFAULT};
pub use uapi::mman::{MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT, MLOCK_ONFAULT};

/// The flags `vma` takes when its lock bits become `lock` (Linux:
/// `mlock_fixup`'s exceptions): the vDSO and `[vvar]` (Linux's
/// VM_SPECIAL, which VM_DONTEXPAND stands for here) and droppable memory
/// are never locked.
fn locked_flags(vma: &Vma, lock: u64) -> u64 {
    if vma.flags & (VM_DONTEXPAND | VM_DROPPABLE) != 0 {
        return vma.flags;
    }
    (vma.flags & !VM_LOCKED_MASK) | lock
}

/// Gives the VMAs over [start, end) the lock bits `lock` (Linux:
/// `apply_vma_lock_flags`): ENOMEM for a hole, the VMAs before it changed.
/// Returns the VMA parts over the range with their flags, to populate.
fn apply_vma_lock_flags(
    map: &mut MmapWriteGuard,
    start: usize,
    end: usize,
    lock: u64,
) -> KResult<Vec<(usize, usize, u64)>> {
    let mut locked = Vec::new();
    vma_modify_flags(
        map,
        start,
        end,
        |_, _, vma| Ok(locked_flags(vma, lock)),
        |_, _, _, _| {},
    )?;
    for (s, e, vma) in map.vmas.range(start, end) {
        locked.push((s.max(start), e.min(end), vma.flags));
    }
    Ok(locked)
}

/// Bytes of VM_LOCKED mappings within [start, end) (Linux:
/// `mm->locked_vm`, and `count_mm_mlocked_page_nr` for a range).
pub fn locked_bytes(map: &MmMap, start: usize, end: usize) -> usize {
    map.vmas
        .range(start, end)
        .filter(|(_, _, vma)| vma.flags & VM_LOCKED != 0)
        .map(|(s, e, _)| e.min(end) - s.max(start))
        .sum()
}

/// The page-aligned range mlock and munlock work on: `addr` rounded down
/// and the end up rather than refused; EINVAL if it wraps, None if empty
/// (Linux: `do_mlock` and `apply_vma_lock_flags`'s checks).
fn lock_range(addr: usize, len: usize) -> KResult<Option<(usize, usize)>> {
    let start = addr & !(PAGE_SIZE - 1);
    let len = len
        .checked_add(addr - start)
        .and_then(|l| l.checked_next_multiple_of(PAGE_SIZE))
        .unwrap_or(0);
    match start.checked_add(len) {
        None => Err(Errno::EINVAL),
        Some(end) if end == start => Ok(None),
        Some(end) => Ok(Some((start, end))),
    }
}

/// mlock(2) and mlock2(2) (Linux: `do_mlock`): the VMAs over the range get
/// VM_LOCKED (and VM_LOCKONFAULT with MLOCK_ONFAULT); without ONFAULT the
/// range is populated. ENOMEM if part of it is unmapped or if the bytes
/// locked would pass `limit` (the caller's RLIMIT_MEMLOCK, None for no
/// limit), EINVAL for flags.
pub fn mlock(mm: &Arc<Mm>, addr: usize, len: usize, flags: u32, limit: Option<u64>) -> KResult<()> {
    if flags & !MLOCK_ONFAULT != 0 {
        return Err(Errno::EINVAL);
    }
    let Some((start, end)) = lock_range(addr, len)? else {
        return Ok(());
    };
    let lock = VM_LOCKED
        | if flags & MLOCK_ONFAULT != 0 {
            VM_LOCKONFAULT
        } else {
            0
        };
    let mut map = mm.mmap_write_lock();
    if let Some(limit) = limit {
        let all = locked_bytes(&map, 0, USER_TOP);
        let after = all - locked_bytes(&map, start, end) + (end - start);
        if after as u64 > limit {
            return Err(Errno::ENOMEM);
        }
    }
    let parts = apply_vma_lock_flags(&mut map, start, end, lock)?;
    drop(map);
    // Linux: `__mm_populate` of the range, whatever got locked.
    for (s, e, vm_flags) in parts {
        populate(mm, s, e, vm_flags);
    }
    Ok(())
}

/// munlock(2): the VMAs over the range lose VM_LOCKED and VM_LOCKONFAULT.
pub fn munlock(mm: &Arc<Mm>, addr: usize, len: usize) -> KResult<()> {
    let Some((start, end)) = lock_range(addr, len)? else {
        return Ok(());
    };
    apply_vma_lock_flags(&mut mm.mmap_write_lock(), start, end, 0).map(|_| ())
}

/// mlockall(2) and munlockall(2) (`flags` 0; Linux:
/// `apply_mlockall_flags`): MCL_FUTURE locks every later mapping
/// (`def_flags`), MCL_CURRENT every mapping there is, populating it
/// without MCL_ONFAULT.
fn apply_mlockall_flags(mm: &Arc<Mm>, flags: u32) {
    let onfault = if flags & MCL_ONFAULT != 0 {
        VM_LOCKONFAULT
    } else {
        0
    };
    let mut map = mm.mmap_write_lock();
    map.def_flags &= !VM_LOCKED_MASK;
    if flags & MCL_FUTURE != 0 {
        map.def_flags |= VM_LOCKED | onfault;
        if flags & MCL_CURRENT == 0 {
            return;
        }
    }
    let lock = if flags & MCL_CURRENT != 0 {
        VM_LOCKED | onfault
    } else {
        0
    };
    let ranges: Vec<(usize, usize)> = map.vmas.iter().map(|(s, e, _)| (s, e)).collect();
    for (s, e) in ranges {
        let _ = apply_vma_lock_flags(&mut map, s, e, lock);
    }
    let parts: Vec<_> = map.vmas.iter().map(|(s, e, v)| (s, e, v.flags)).collect();
    drop(map);
    if lock != 0 {
        for (s, e, vm_flags) in parts {
            populate(mm, s, e, vm_flags);
        }
    }
}

/// mlockall(2): EINVAL for no flags, unknown ones or MCL_ONFAULT alone;
/// ENOMEM with MCL_CURRENT if all that is mapped passes `limit` (Linux
/// compares `total_vm`).
pub fn mlockall(mm: &Arc<Mm>, flags: u32, limit: Option<u64>) -> KResult<()> {
    if flags == 0 || flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags == MCL_ONFAULT
    {
        return Err(Errno::EINVAL);
    }
    if let (Some(limit), true) = (limit, flags & MCL_CURRENT != 0) {
        let total: usize = mm
            .mmap_lock_readonly()
            .vmas
            .iter()
            .map(|(s, e, _)| e - s)
            .sum();
        if total as u64 > limit {
            return Err(Errno::ENOMEM);
        }
    }
    apply_mlockall_flags(mm, flags);
    Ok(())
}

/// munlockall(2): no mapping locked, now or later.
pub fn munlockall(mm: &Arc<Mm>) -> KResult<()> {
    apply_mlockall_flags(mm, 0);
    Ok(())
}
