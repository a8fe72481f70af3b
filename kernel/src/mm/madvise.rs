//! madvise(2): advice about a range, VMA by VMA (Linux: `mm/madvise.c`,
//! `do_madvise`, `madvise_walk_vmas`, `madvise_vma_behavior`).
//!
//! Where we simplify: there is no swap and no reclaim to steer, so the
//! hints about access patterns only set their flags, MADV_WILLNEED and
//! MADV_COLD do nothing, MADV_FREE frees at once as MADV_DONTNEED does,
//! and MADV_PAGEOUT drops only MAP_DROPPABLE pages (Linux would also
//! unmap file pages, which tmpfs without swap keeps cached anyway).

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::errno::{Errno, KResult};
use crate::fs::vfs::{Inode, InodeKind};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::fault::{Access, FaultError};
use crate::mm::gup::fault_in;
use crate::mm::huge_memory;
use crate::mm::memory;
use crate::mm::mm_struct::{Mm, MmMap};
use crate::mm::mmap::vma_modify_flags;
use crate::mm::vma::{
    Vma, VM_DONTCOPY, VM_DONTDUMP, VM_DONTEXPAND, VM_DROPPABLE, VM_HUGEPAGE, VM_LOCKED,
    VM_MAYWRITE, VM_NOHUGEPAGE, VM_RAND_READ, VM_READ, VM_SEALED, VM_SEQ_READ, VM_SHARED,
    VM_WIPEONFORK, VM_WRITE,
};
pub use uapi::mman::{
    MADV_COLD, MADV_COLLAPSE, MADV_DODUMP, MADV_DOFORK, MADV_DONTDUMP, MADV_DONTFORK,
    MADV_DONTNEED, MADV_DONTNEED_LOCKED, MADV_FREE, MADV_HUGEPAGE, MADV_KEEPONFORK,
    MADV_NOHUGEPAGE, MADV_NORMAL, MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
    MADV_RANDOM, MADV_REMOVE, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_WIPEONFORK,
};

/// madvise(2) (Linux: `do_madvise`): EINVAL for advice it does not know
/// (KSM's MADV_MERGEABLE among them, as Linux without CONFIG_KSM), a
/// misaligned start or a range that wraps; then the advice for each VMA
/// over the range, holes skipped but answered with ENOMEM at the end.
pub fn madvise(mm: &Arc<Mm>, start: usize, len: usize, advice: u32) -> KResult<()> {
    let changes_flags = matches!(
        advice,
        MADV_NORMAL
            | MADV_RANDOM
            | MADV_SEQUENTIAL
            | MADV_DONTFORK
            | MADV_DOFORK
            | MADV_HUGEPAGE
            | MADV_NOHUGEPAGE
            | MADV_DONTDUMP
            | MADV_DODUMP
            | MADV_WIPEONFORK
            | MADV_KEEPONFORK
    );
    let other = matches!(
        advice,
        MADV_WILLNEED
            | MADV_DONTNEED
            | MADV_DONTNEED_LOCKED
            | MADV_FREE
            | MADV_REMOVE
            | MADV_COLD
            | MADV_PAGEOUT
            | MADV_POPULATE_READ
            | MADV_POPULATE_WRITE
            | MADV_COLLAPSE
    );
    if !(changes_flags || other) || !start.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let Some(end) = len
        .checked_next_multiple_of(PAGE_SIZE)
        .and_then(|len| start.checked_add(len))
    else {
        return Err(Errno::EINVAL);
    };
    if end == start {
        return Ok(());
    }
    if matches!(advice, MADV_POPULATE_READ | MADV_POPULATE_WRITE) {
        return madvise_populate(mm, start, end, advice == MADV_POPULATE_WRITE);
    }
    if advice == MADV_COLLAPSE {
        return huge_memory::collapse::madvise_collapse(mm, start, end);
    }
    if changes_flags {
        let mut map = mm.mmap_write_lock();
        let (parts, hole) = mapped_parts(&map, start, end);
        for (s, e, _) in parts {
            vma_modify_flags(
                &mut map,
                s,
                e,
                |_, _, vma| {
                    if is_madv_discard(advice) && vma.flags & VM_SEALED != 0 && is_ro_anon(vma) {
                        return Err(Errno::EPERM);
                    }
                    new_flags(vma, advice)
                },
                |_, _, _, _| {},
            )?;
        }
        return if hole { Err(Errno::ENOMEM) } else { Ok(()) };
    }
    // Linux: `madvise_need_mmap_write` is false; faults may run on.
    let map = mm.mmap_lock_readonly();
    let (parts, hole) = mapped_parts(&map, start, end);
    // Hole punches run after `mmap_lock` is dropped, as they unmap the
    // file's pages from every process mapping it (Linux drops it too).
    let mut punches = Vec::new();
    let mut result = if hole { Err(Errno::ENOMEM) } else { Ok(()) };
    for (s, e, vma) in parts {
        if let Err(err) = vma_behavior(mm, &map, s, e, &vma, advice, &mut punches) {
            result = Err(err);
            break;
        }
    }
    drop(map);
    for (inode, offset, len) in punches {
        if let InodeKind::File(file) = &inode.kind {
            file.punch_hole(offset, offset + len)?;
        }
    }
    result
}

/// What `advice` other than a flag change does to [start, end) of `vma`
/// (Linux: `madvise_vma_behavior`); MADV_REMOVE's hole punches are added
/// to `punches` (file, offset, length) for the caller.
fn vma_behavior(
    mm: &Mm,
    map: &MmMap,
    start: usize,
    end: usize,
    vma: &Vma,
    advice: u32,
    punches: &mut Vec<(Arc<Inode>, u64, u64)>,
) -> KResult<()> {
    if is_madv_discard(advice) && vma.flags & VM_SEALED != 0 && is_ro_anon(vma) {
        return Err(Errno::EPERM);
    }
    match advice {
        MADV_DONTNEED | MADV_DONTNEED_LOCKED | MADV_FREE => {
            if advice != MADV_DONTNEED_LOCKED && vma.flags & VM_LOCKED != 0 {
                return Err(Errno::EINVAL);
            }
            if advice == MADV_FREE && (vma.file.is_some() || vma.is_shared()) {
                return Err(Errno::EINVAL);
            }
            memory::zap_range(mm, start, end);
        }
        MADV_REMOVE => punches.push(madvise_remove(map, start, end, vma)?),
        MADV_COLD | MADV_PAGEOUT => {
            if vma.flags & VM_LOCKED != 0 {
                return Err(Errno::EINVAL);
            }
            if advice == MADV_PAGEOUT && vma.flags & VM_DROPPABLE != 0 {
                memory::zap_range(mm, start, end);
            }
        }
        _ => {} // MADV_WILLNEED
    }
    Ok(())
}

/// The parts of VMAs inside [start, end), in order, and whether a hole
/// lies between them (Linux: the walk of `madvise_walk_vmas`).
fn mapped_parts(map: &MmMap, start: usize, end: usize) -> (Vec<(usize, usize, Arc<Vma>)>, bool) {
    let mut at = start;
    let mut hole = false;
    let mut parts = Vec::new();
    for (s, e, vma) in map.vmas.range(start, end) {
        hole |= s > at;
        parts.push((s.max(start), e.min(end), vma.clone()));
        at = e;
    }
    (parts, hole || at < end)
}

/// The flags madvise's `advice` gives `vma`, or EINVAL where it does not
/// apply (Linux: the flag cases of `madvise_vma_behavior`).
fn new_flags(vma: &Vma, advice: u32) -> KResult<u64> {
    let f = vma.flags;
    Ok(match advice {
        MADV_NORMAL => f & !(VM_RAND_READ | VM_SEQ_READ),
        MADV_SEQUENTIAL => (f & !VM_RAND_READ) | VM_SEQ_READ,
        MADV_RANDOM => (f & !VM_SEQ_READ) | VM_RAND_READ,
        MADV_DONTFORK => f | VM_DONTCOPY,
        MADV_DOFORK => f & !VM_DONTCOPY,
        MADV_WIPEONFORK if vma.file.is_some() || f & VM_SHARED != 0 => return Err(Errno::EINVAL),
        MADV_WIPEONFORK => f | VM_WIPEONFORK,
        MADV_KEEPONFORK if f & VM_DROPPABLE != 0 => return Err(Errno::EINVAL),
        MADV_KEEPONFORK => f & !VM_WIPEONFORK,
        MADV_DONTDUMP => f | VM_DONTDUMP,
        // VM_DONTEXPAND stands for Linux's VM_SPECIAL (the vDSO, [vvar]).
        MADV_DODUMP if f & VM_DONTEXPAND != 0 => return Err(Errno::EINVAL),
        MADV_DODUMP => f & !VM_DONTDUMP,
        MADV_HUGEPAGE => (f & !VM_NOHUGEPAGE) | VM_HUGEPAGE,
        MADV_NOHUGEPAGE => (f & !VM_HUGEPAGE) | VM_NOHUGEPAGE,
        _ => f,
    })
}

/// Does `advice` throw data away (Linux: `is_madv_discard`), which a
/// sealed read-only anonymous mapping refuses?
fn is_madv_discard(advice: u32) -> bool {
    matches!(
        advice,
        MADV_FREE
            | MADV_DONTNEED
            | MADV_DONTNEED_LOCKED
            | MADV_REMOVE
            | MADV_DONTFORK
            | MADV_WIPEONFORK
    )
}

/// Private anonymous memory that may not be written (Linux: `is_ro_anon`):
/// discarding its pages would change what it reads as.
fn is_ro_anon(vma: &Vma) -> bool {
    vma.file.is_none() && vma.flags & VM_SHARED == 0 && vma.flags & VM_WRITE == 0
}

/// MADV_REMOVE's checks (Linux: `madvise_remove`): a shared writable file
/// mapping, not locked; returns the file range [start, end) maps, for the
/// caller to punch out of the file so it reads back as zeros.
fn madvise_remove(
    map: &MmMap,
    start: usize,
    end: usize,
    vma: &Vma,
) -> KResult<(Arc<Inode>, u64, u64)> {
    if vma.flags & VM_LOCKED != 0 {
        return Err(Errno::EINVAL);
    }
    let Some(inode) = vma.file.clone() else {
        return Err(Errno::EINVAL);
    };
    if vma.flags & (VM_SHARED | VM_MAYWRITE) != VM_SHARED | VM_MAYWRITE {
        return Err(Errno::EACCES);
    }
    let vstart = map.vmas.find(start).map_or(start, |(s, _, _)| s);
    let offset = vma.pgoff_of(vstart, start) * PAGE_SIZE as u64;
    Ok((inode, offset, (end - start) as u64))
}

/// MADV_POPULATE_READ / MADV_POPULATE_WRITE (Linux: `madvise_populate` and
/// `faultin_page_range`): faults every page in, as a read or a write would.
/// ENOMEM at a hole or out of memory, EINVAL for a VMA that forbids the
/// access, EFAULT where the fault would signal; what came before stays.
fn madvise_populate(mm: &Arc<Mm>, start: usize, end: usize, write: bool) -> KResult<()> {
    let mut at = start;
    while at < end {
        let (vma_end, flags) = {
            let map = mm.mmap_lock_readonly();
            let (_, e, vma) = map.vmas.find(at).ok_or(Errno::ENOMEM)?;
            (e, vma.flags)
        };
        let needed = if write { VM_WRITE } else { VM_READ };
        if flags & needed == 0 {
            return Err(Errno::EINVAL);
        }
        let access = if write { Access::Write } else { Access::Read };
        while at < vma_end.min(end) {
            match fault_in(mm, at, access, false) {
                Ok(()) => at += PAGE_SIZE,
                Err(FaultError::Oom) => return Err(Errno::ENOMEM),
                Err(_) => return Err(Errno::EFAULT),
            }
        }
    }
    Ok(())
}
