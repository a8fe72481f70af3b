//! mremap(2): shrink, grow or move a mapping, its page tables with it
//! (Linux: `mm/mremap.c`, `mremap`, `mremap_to`, `vma_to_resize`,
//! `move_vma`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE, USER_TOP};
use crate::mm::memory;
use crate::mm::mm_struct::{Mm, MmapWriteGuard};
use crate::mm::mmap::{do_munmap, enough_memory, populate, unmapped_area, vma_modify_flags};
use crate::mm::vma::{
    Vma, VM_ACCOUNT, VM_DONTEXPAND, VM_LOCKED, VM_LOCKED_MASK, VM_MAYSHARE, VM_SEALED, VM_SHARED,
};
pub use uapi::mman::{MREMAP_DONTUNMAP, MREMAP_FIXED, MREMAP_MAYMOVE};

/// mremap(2) (Linux: `mremap`): EINVAL for bad flags or a misaligned
/// `addr`, EFAULT where no VMA holds `[addr, addr + old_len)`, EPERM for a
/// sealed one; shrinking unmaps the tail, growing takes the space after
/// the VMA if it is free, and otherwise (MREMAP_MAYMOVE) the mapping moves
/// (`mremap_to` for MREMAP_FIXED and MREMAP_DONTUNMAP). Returns where the
/// mapping is now.
pub fn mremap(
    mm: &Arc<Mm>,
    addr: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> KResult<usize> {
    if flags & !(MREMAP_FIXED | MREMAP_MAYMOVE | MREMAP_DONTUNMAP) != 0
        || (flags & MREMAP_FIXED != 0 && flags & MREMAP_MAYMOVE == 0)
        || (flags & MREMAP_DONTUNMAP != 0 && (flags & MREMAP_MAYMOVE == 0 || old_len != new_len))
        || !addr.is_multiple_of(PAGE_SIZE)
    {
        return Err(Errno::EINVAL);
    }
    // Linux's PAGE_ALIGN wraps to 0 (then EINVAL below, or a zero
    // `old_len`).
    let old_len = old_len.checked_next_multiple_of(PAGE_SIZE).unwrap_or(0);
    let new_len = new_len.checked_next_multiple_of(PAGE_SIZE).unwrap_or(0);
    if new_len == 0 {
        return Err(Errno::EINVAL);
    }
    let mut map = mm.mmap_write_lock();
    let (vstart, vend, vma) = map
        .vmas
        .find(addr)
        .map(|(s, e, v)| (s, e, v.clone()))
        .ok_or(Errno::EFAULT)?;
    if vma.flags & VM_SEALED != 0 {
        return Err(Errno::EPERM);
    }
    if flags & (MREMAP_FIXED | MREMAP_DONTUNMAP) != 0 {
        return mremap_to(mm, map, addr, old_len, new_addr, new_len, flags);
    }
    if old_len >= new_len {
        if old_len > new_len {
            let detached = do_munmap(mm, &mut map, addr + new_len, old_len - new_len)?;
            drop(map);
            drop(detached);
        }
        return Ok(addr);
    }
    vma_to_resize(&vma, vstart, vend, addr, old_len, new_len, flags)?;
    let delta = new_len - old_len;
    // The whole rest of the VMA grows in place if the space after is free.
    if old_len == vend - addr {
        let fits = vend
            .checked_add(delta)
            .is_some_and(|end| end <= USER_TOP && !map.vmas.overlaps(vend, end));
        if fits {
            if vma.flags & VM_ACCOUNT != 0 && !enough_memory(delta) {
                return Err(Errno::ENOMEM);
            }
            let mut grown = (*vma).clone();
            grown.pgoff = vma.pgoff_of(vstart, vend);
            map.vmas
                .insert(vend, vend + delta, Arc::new(grown))
                .map_err(|_| Errno::ENOMEM)?;
            map.vma_merge(vstart, vend + delta);
            drop(map);
            if vma.flags & VM_LOCKED != 0 {
                populate(mm, vend, vend + delta, vma.flags);
            }
            return Ok(addr);
        }
    }
    if flags & MREMAP_MAYMOVE == 0 {
        return Err(Errno::ENOMEM);
    }
    let target = unmapped_area(
        &map,
        new_len,
        None,
        vma.file.is_some(),
        vma.pgoff_of(vstart, addr) as usize * PAGE_SIZE,
    )?;
    move_vma(mm, map, &vma, vstart, addr, old_len, target, new_len, flags)
}

/// Can `[addr, addr + old_len)` of `vma` (which spans [vstart, vend))
/// become `new_len` long (Linux: `vma_to_resize`)? EINVAL to duplicate a
/// private mapping (`old_len` 0) or for MREMAP_DONTUNMAP of the vDSO,
/// EFAULT past the VMA's end or to grow the vDSO.
fn vma_to_resize(
    vma: &Vma,
    vstart: usize,
    vend: usize,
    addr: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
) -> KResult<()> {
    if old_len == 0 && vma.flags & (VM_SHARED | VM_MAYSHARE) == 0 {
        return Err(Errno::EINVAL);
    }
    if flags & MREMAP_DONTUNMAP != 0 && vma.flags & VM_DONTEXPAND != 0 {
        return Err(Errno::EINVAL);
    }
    if old_len > vend - addr {
        return Err(Errno::EFAULT);
    }
    if new_len == old_len {
        return Ok(());
    }
    let pgoff = vma.pgoff_of(vstart, addr);
    if pgoff.checked_add((new_len >> PAGE_SHIFT) as u64).is_none() {
        return Err(Errno::EINVAL);
    }
    if vma.flags & VM_DONTEXPAND != 0 {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// mremap to `new_addr` with MREMAP_FIXED, or anywhere (`new_addr` a hint)
/// with MREMAP_DONTUNMAP (Linux: `mremap_to`): EINVAL for a misaligned or
/// overlapping target; what is at a fixed target is unmapped first (EPERM
/// if sealed), then the tail beyond `new_len`.
fn mremap_to(
    mm: &Arc<Mm>,
    mut map: MmapWriteGuard,
    addr: usize,
    mut old_len: usize,
    new_addr: usize,
    new_len: usize,
    flags: u32,
) -> KResult<usize> {
    if !new_addr.is_multiple_of(PAGE_SIZE) || new_len > USER_TOP || new_addr > USER_TOP - new_len {
        return Err(Errno::EINVAL);
    }
    if addr + old_len > new_addr && new_addr + new_len > addr {
        return Err(Errno::EINVAL);
    }
    if flags & MREMAP_FIXED != 0 {
        drop(do_munmap(mm, &mut map, new_addr, new_len)?);
    }
    if old_len > new_len {
        drop(do_munmap(mm, &mut map, addr + new_len, old_len - new_len)?);
        old_len = new_len;
    }
    let (vstart, vend, vma) = map
        .vmas
        .find(addr)
        .map(|(s, e, v)| (s, e, v.clone()))
        .ok_or(Errno::EFAULT)?;
    vma_to_resize(&vma, vstart, vend, addr, old_len, new_len, flags)?;
    let target = if flags & MREMAP_FIXED != 0 {
        new_addr
    } else {
        let hint = (new_addr != 0).then_some(new_addr);
        let offset = vma.pgoff_of(vstart, addr) as usize * PAGE_SIZE;
        unmapped_area(&map, new_len, hint, vma.file.is_some(), offset)?
    };
    move_vma(mm, map, &vma, vstart, addr, old_len, target, new_len, flags)
}

/// Moves `[old, old + old_len)` of `vma` (which starts at `vstart`) to a
/// new VMA at `[target, target + new_len)`, page tables and all (Linux:
/// `move_vma`); the old range is unmapped, or with MREMAP_DONTUNMAP left
/// mapped and empty, no longer locked. A locked mapping's new part is
/// populated.
#[allow(clippy::too_many_arguments)]
fn move_vma(
    mm: &Arc<Mm>,
    mut map: MmapWriteGuard,
    vma: &Vma,
    vstart: usize,
    old: usize,
    old_len: usize,
    target: usize,
    new_len: usize,
    flags: u32,
) -> KResult<usize> {
    // Linux: `move_vma` wants room for more than three VMAs (the cuts
    // around the old range and the new one).
    if map.vmas.map_count() + 3 >= super::mmap::MAX_MAP_COUNT.load(Ordering::Relaxed) {
        return Err(Errno::ENOMEM);
    }
    let dontunmap = flags & MREMAP_DONTUNMAP != 0;
    let charge = if dontunmap {
        new_len
    } else {
        new_len.saturating_sub(old_len)
    };
    if vma.flags & VM_ACCOUNT != 0 && !enough_memory(charge) {
        return Err(Errno::ENOMEM);
    }
    let mut moved = vma.clone();
    moved.pgoff = vma.pgoff_of(vstart, old);
    map.vma_start_write(old, old + old_len);
    map.vmas
        .insert(target, target + new_len, Arc::new(moved))
        .map_err(|_| Errno::ENOMEM)?;
    if !memory::move_range(mm, old, target, old_len) {
        map.vmas.remove_range(target, target + new_len);
        memory::zap_range(mm, target, target + new_len);
        return Err(Errno::ENOMEM);
    }
    map.vma_merge(target, target + new_len);
    if dontunmap {
        // The old range stays, empty and unlocked (Linux clears
        // VM_LOCKED_MASK on it).
        let _ = vma_modify_flags(
            &mut map,
            old,
            old + old_len,
            |_, _, v| Ok(v.flags & !VM_LOCKED_MASK),
            |_, _, _, _| {},
        );
        return Ok(target);
    }
    map.vmas.remove_range(old, old + old_len);
    drop(map);
    if vma.flags & VM_LOCKED != 0 && new_len > old_len {
        populate(mm, target + old_len, target + new_len, vma.flags);
    }
    Ok(target)
}
