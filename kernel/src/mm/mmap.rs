//! The memory-mapping system calls' work on an address space (Linux:
//! `mm/mmap.c` `do_mmap`, `do_munmap`, `do_brk_flags`; `mm/mprotect.c`;
//! `mm/madvise.c`; `mm/mremap.c`; `mm/mincore.c`). Each takes `mmap_lock`
//! for the whole change, for writing if it changes VMAs, and write-locks
//! each VMA before changing it or its pages, so faults running under
//! per-VMA locks (`mm/vma_lock.rs`) have finished with it.

use alloc::sync::Arc;

use crate::arch::contpte::CONT_PTE_SIZE;
use crate::arch::desc::{PgProt, Pte};
use crate::errno::{Errno, KResult};
use crate::fs::tmpfs;
use crate::fs::vfs::{File, Inode, InodeKind};
use crate::mm::addr::{align_up, PAGE_SIZE, PMD_SIZE};
use crate::mm::fault::{fault_in, Access};
use crate::mm::folio;
use crate::mm::huge_memory;
use crate::mm::memory;
use crate::mm::mm_struct::{Mm, MmMap, MmapWriteGuard, MMAP_BOTTOM, MMAP_TOP};
use crate::mm::vma::{
    Vma, VM_DONTCOPY, VM_DONTDUMP, VM_EXEC, VM_GROWSDOWN, VM_HUGEPAGE, VM_LOCKED, VM_LOCKONFAULT,
    VM_MAYWRITE, VM_NOHUGEPAGE, VM_READ, VM_SHARED, VM_WRITE,
};

/// PROT_READ: the pages may be read (the VMA gets VM_READ).
pub const PROT_READ: u32 = 1;
/// PROT_WRITE: the pages may be written (VM_WRITE).
pub const PROT_WRITE: u32 = 2;
/// PROT_EXEC: the pages may be executed (VM_EXEC).
pub const PROT_EXEC: u32 = 4;
/// MAP_SHARED: writes reach the file and every other mapper (VM_SHARED).
pub const MAP_SHARED: u32 = 0x01;
/// MAP_PRIVATE: copy-on-write; writes stay in this process.
pub const MAP_PRIVATE: u32 = 0x02;
/// MAP_SHARED_VALIDATE: MAP_SHARED, refusing unknown flags (here all
/// unknown flags are refused anyway).
pub const MAP_SHARED_VALIDATE: u32 = 0x03;
/// MAP_FIXED: map exactly at `addr`, replacing whatever was there.
pub const MAP_FIXED: u32 = 0x10;
/// MAP_ANONYMOUS: zeroed memory with no file behind it; `fd` is ignored.
pub const MAP_ANONYMOUS: u32 = 0x20;
/// MAP_POPULATE: fault every page in before mmap returns.
pub const MAP_POPULATE: u32 = 0x8000;
/// MAP_FIXED_NOREPLACE: map exactly at `addr`, EEXIST if anything is there.
pub const MAP_FIXED_NOREPLACE: u32 = 0x100000;
/// MAP_GROWSDOWN: the VMA gets VM_GROWSDOWN.
pub const MAP_GROWSDOWN: u32 = 0x100;
/// MAP_LOCKED: mlock the new mapping (Linux: VM_LOCKED, then populate).
pub const MAP_LOCKED: u32 = 0x2000;
/// MAP_NORESERVE: no swap to reserve here, so accepted and ignored.
const MAP_NORESERVE: u32 = 0x4000;
/// The accepted-and-ignored flags as one mask: MAP_DENYWRITE (0x800),
/// MAP_EXECUTABLE (0x1000), MAP_NORESERVE, MAP_NONBLOCK (0x10000) and
/// MAP_STACK (0x20000).
const MAP_IGNORED: u32 = 0x800 | 0x1000 | 0x4000 | 0x10000 | 0x20000;

/// MADV_NORMAL: no special access pattern (a no-op here).
pub const MADV_NORMAL: u32 = 0;
/// MADV_RANDOM: expect random access (a no-op here).
pub const MADV_RANDOM: u32 = 1;
/// MADV_SEQUENTIAL: expect sequential access (a no-op here).
pub const MADV_SEQUENTIAL: u32 = 2;
/// MADV_WILLNEED: expect access soon (a no-op here).
pub const MADV_WILLNEED: u32 = 3;
/// MADV_DONTNEED: drop the pages now; anonymous memory reads back as zeros,
/// a file mapping as the file.
pub const MADV_DONTNEED: u32 = 4;
/// MADV_FREE: the pages may be freed (here at once, as MADV_DONTNEED);
/// private anonymous memory only.
pub const MADV_FREE: u32 = 8;
/// MADV_DONTFORK: the range is not copied into a child at fork (sets
/// VM_DONTCOPY).
pub const MADV_DONTFORK: u32 = 10;
/// MADV_DOFORK: undoes MADV_DONTFORK (clears VM_DONTCOPY).
pub const MADV_DOFORK: u32 = 11;
/// MADV_HUGEPAGE: large folios wanted here (sets VM_HUGEPAGE, clears
/// VM_NOHUGEPAGE).
pub const MADV_HUGEPAGE: u32 = 14;
/// MADV_NOHUGEPAGE: no large folios here (sets VM_NOHUGEPAGE, clears
/// VM_HUGEPAGE).
pub const MADV_NOHUGEPAGE: u32 = 15;
/// MADV_DONTDUMP: leave the range out of a core dump (sets VM_DONTDUMP).
pub const MADV_DONTDUMP: u32 = 16;
/// MADV_DODUMP: undoes MADV_DONTDUMP (clears VM_DONTDUMP).
pub const MADV_DODUMP: u32 = 17;
/// MADV_COLLAPSE: map the range's anonymous 2Ms with PMD blocks now
/// (`huge_memory::collapse`).
pub const MADV_COLLAPSE: u32 = 25;

/// MLOCK_ONFAULT (mlock2): lock pages as they are faulted in instead of
/// populating the range now (VM_LOCKONFAULT).
pub const MLOCK_ONFAULT: u32 = 1;
/// MCL_CURRENT: mlockall locks every current mapping.
pub const MCL_CURRENT: u32 = 1;
/// MCL_FUTURE: mlockall locks every later mapping too (`def_flags`).
pub const MCL_FUTURE: u32 = 2;
/// MCL_ONFAULT: with MCL_CURRENT or MCL_FUTURE, lock on fault, not now.
pub const MCL_ONFAULT: u32 = 4;

/// MREMAP_MAYMOVE: mremap may move the mapping if it cannot grow in place.
pub const MREMAP_MAYMOVE: u32 = 1;
/// MREMAP_FIXED: move the mapping to exactly `new_addr` (needs
/// MREMAP_MAYMOVE).
pub const MREMAP_FIXED: u32 = 2;

/// The VM_READ/VM_WRITE/VM_EXEC bits for a `PROT_*` mask (Linux's
/// `calc_vm_prot_bits`).
fn prot_flags(prot: u32) -> u32 {
    (if prot & PROT_READ != 0 { VM_READ } else { 0 })
        | (if prot & PROT_WRITE != 0 { VM_WRITE } else { 0 })
        | (if prot & PROT_EXEC != 0 { VM_EXEC } else { 0 })
}

/// May `bytes` more of private memory be promised? Not more than all of
/// RAM in one request (Linux: `__vm_enough_memory` in the default
/// heuristic mode, `OVERCOMMIT_GUESS`, with no swap): a mapping that
/// could never be backed fails at once with ENOMEM; one that could is
/// backed as it is touched, and the OOM killer settles who gets memory.
fn enough_memory(bytes: usize) -> bool {
    bytes / PAGE_SIZE <= crate::mm::frame::total_pages()
}

/// A length a user gave, rounded up to whole pages; ENOMEM if that does
/// not fit a `usize` (Linux: `PAGE_ALIGN` wrapping to 0, then ENOMEM).
fn page_align(len: usize) -> KResult<usize> {
    len.checked_next_multiple_of(PAGE_SIZE).ok_or(Errno::ENOMEM)
}

/// Checks a range a user gave: `addr` page-aligned and `len` non-zero
/// (EINVAL), rounded up to pages and below `USER_TOP` (ENOMEM); returns
/// its end.
fn check_range(addr: usize, len: usize) -> KResult<usize> {
    if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
        return Err(Errno::EINVAL);
    }
    let len = page_align(len)?;
    match addr.checked_add(len) {
        Some(end) if end <= crate::mm::addr::USER_TOP => Ok(end),
        _ => Err(Errno::ENOMEM),
    }
}

/// Is every page of [start, end) inside some VMA?
fn fully_mapped(map: &MmMap, start: usize, end: usize) -> bool {
    let mut at = start;
    for (s, e, _) in map.vmas.range(start, end) {
        if s > at {
            return false;
        }
        at = e;
    }
    at >= end
}

/// mmap(2). Returns the address mapped.
pub fn mmap(
    mm: &Arc<Mm>,
    addr: usize,
    len: usize,
    prot: u32,
    flags: u32,
    file: Option<Arc<File>>,
    off: i64,
) -> KResult<usize> {
    if len == 0 || off < 0 || !(off as usize).is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let shared = match flags & MAP_SHARED_VALIDATE {
        MAP_SHARED | MAP_SHARED_VALIDATE => true,
        MAP_PRIVATE => false,
        _ => return Err(Errno::EINVAL),
    };
    let known = MAP_SHARED_VALIDATE
        | MAP_FIXED
        | MAP_ANONYMOUS
        | MAP_POPULATE
        | MAP_FIXED_NOREPLACE
        | MAP_GROWSDOWN
        | MAP_LOCKED
        | MAP_IGNORED;
    if flags & !known != 0 {
        return Err(Errno::EINVAL);
    }
    let len = page_align(len)?;
    // Private writable memory is promised: not more than RAM at once
    // (MAP_NORESERVE asks for no promise).
    let private_writable = !shared && prot & PROT_WRITE != 0 && flags & MAP_NORESERVE == 0;
    if len > MMAP_TOP || (private_writable && !enough_memory(len)) {
        return Err(Errno::ENOMEM);
    }
    let mut vflags = prot_flags(prot) | if shared { VM_SHARED } else { 0 };
    if flags & MAP_GROWSDOWN != 0 {
        vflags |= VM_GROWSDOWN;
    }
    if flags & MAP_LOCKED != 0 {
        vflags |= VM_LOCKED;
    }
    let (inode, pgoff) = if flags & MAP_ANONYMOUS != 0 {
        if shared {
            // Shared anonymous memory is a file on the internal tmpfs.
            let f = tmpfs::memfd_create("dev/zero", 0)?;
            f.ftruncate(len as i64)?;
            (Some(f.inode.clone()), 0)
        } else {
            (None, 0)
        }
    } else {
        let f = file.ok_or(Errno::EBADF)?;
        if !matches!(f.inode.kind, InodeKind::File(_)) {
            return Err(Errno::ENODEV);
        }
        let access = f.flags() & crate::fs::vfs::O_ACCMODE;
        if access == crate::fs::vfs::O_WRONLY {
            return Err(Errno::EACCES);
        }
        let writable_file = access == crate::fs::vfs::O_RDWR;
        if shared && prot & PROT_WRITE != 0 && !writable_file {
            return Err(Errno::EACCES);
        }
        // A write-sealed memfd maps shared only read-only, and for good:
        // EPERM for PROT_WRITE, no VM_MAYWRITE (Linux: `memfd_check_seals_mmap`).
        let write_sealed = match &f.inode.kind {
            InodeKind::File(sf) => shared && sf.seals() & tmpfs::F_SEAL_ANY_WRITE != 0,
            _ => false,
        };
        if write_sealed && prot & PROT_WRITE != 0 {
            return Err(Errno::EPERM);
        }
        if !shared || (writable_file && !write_sealed) {
            vflags |= VM_MAYWRITE;
        }
        (Some(f.inode.clone()), (off as usize / PAGE_SIZE) as u64)
    };
    if inode.is_none() || flags & MAP_ANONYMOUS != 0 {
        vflags |= VM_MAYWRITE;
    }
    let mut map = mm.mmap_write_lock();
    vflags |= map.def_flags;
    // What a MAP_FIXED mapping replaces goes as munmap's does, page tables
    // and all (Linux: `unmap_region`), so the new one starts with empty PMD
    // entries where PMD blocks may go.
    let mut detached = None;
    let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
        let end = check_range(addr, len)?;
        if map.vmas.overlaps(addr, end) {
            if flags & MAP_FIXED_NOREPLACE != 0 {
                return Err(Errno::EEXIST);
            }
            map.vma_start_write(addr, end);
            map.vmas.remove_range(addr, end);
            detached = Some(memory::unmap_range(mm, addr, end, &map.vmas));
        }
        addr
    } else {
        let hint = (addr != 0 && addr.is_multiple_of(PAGE_SIZE)).then_some(addr);
        unmapped_area(&map, len, hint, inode.as_ref(), pgoff as usize * PAGE_SIZE)?
    };
    let vma = Vma::new(vflags, inode, pgoff);
    vma.register_with_file(mm);
    map.vmas
        .insert(start, start + len, Arc::new(vma))
        .map_err(|_| Errno::ENOMEM)?;
    drop(map);
    drop(detached); // the per-page work, with no lock held
                    // A locked mapping is populated as MAP_POPULATE's is (Linux: `mm_populate`).
    let locked = vflags & (VM_LOCKED | VM_LOCKONFAULT) == VM_LOCKED;
    if flags & MAP_POPULATE != 0 || locked {
        populate(mm, start, start + len, vflags);
    }
    Ok(start)
}

/// Where mmap puts `len` bytes of `inode` from byte `offset` (or of
/// anonymous memory) when not told exactly (Linux: `get_unmapped_area`
/// with the file's own). Without a hint, a tmpfs mapping of 2M or more at
/// a 2M-aligned offset goes at a 2M-aligned address, where its folios can
/// map with PMD blocks (Linux: `shmem_get_unmapped_area`; we do not ask
/// the huge policy first). Seed 004's `thp_mapping_align` (0x0 at boot)
/// adds 64K for 64K or more at a 64K-aligned offset, for contiguous PTEs:
/// bit 0 for files, bit 1 for private anonymous memory (Linux:
/// `folio_get_unmapped_area`, which also wants an anonymous mTHP size on;
/// we have none). Failing that, anywhere.
pub fn unmapped_area(
    map: &MmMap,
    len: usize,
    hint: Option<usize>,
    inode: Option<&Arc<Inode>>,
    offset: usize,
) -> KResult<usize> {
    let bits = huge_memory::huge_settings().thp_mapping_align;
    let mthp_bit = match inode {
        Some(_) => huge_memory::knobs::FILE_MAPPING_ALIGN,
        None => huge_memory::knobs::ANON_MAPPING_ALIGN,
    };
    let align = [
        (PMD_SIZE, inode.is_some()),
        (CONT_PTE_SIZE, bits & mthp_bit != 0),
    ]
    .into_iter()
    .find(|&(a, on)| on && hint.is_none() && len >= a && offset.is_multiple_of(a))
    .map(|(a, _)| a);
    let aligned = align.and_then(|a| {
        map.vmas
            .get_unmapped_area(len, a, hint, MMAP_BOTTOM, MMAP_TOP)
    });
    aligned
        .or_else(|| {
            map.vmas
                .get_unmapped_area(len, PAGE_SIZE, hint, MMAP_BOTTOM, MMAP_TOP)
        })
        .ok_or(Errno::ENOMEM)
}

/// Faults in every page of `[start, end)` of a mapping with `vflags`, for
/// writing where it is private and writable (breaking copy-on-write), as
/// Linux's `populate_vma_page_range` does; stops at the first failure.
fn populate(mm: &Arc<Mm>, start: usize, end: usize, vflags: u32) {
    if vflags & (VM_READ | VM_WRITE | VM_EXEC) == 0 {
        return;
    }
    let access = if vflags & (VM_WRITE | VM_SHARED) == VM_WRITE {
        Access::Write
    } else {
        Access::Read
    };
    for page in (start..end).step_by(PAGE_SIZE) {
        if fault_in(mm, page, access, false).is_err() {
            break;
        }
    }
}

/// Sets `set` and clears `clear` in the flags of every VMA over
/// `[start, end)`, splitting at the edges; ENOMEM unless it is all mapped.
fn change_vma_flags(
    map: &mut MmapWriteGuard,
    start: usize,
    end: usize,
    set: u32,
    clear: u32,
) -> KResult<()> {
    if !fully_mapped(map, start, end) {
        return Err(Errno::ENOMEM);
    }
    map.vma_start_write(start, end);
    map.vma_adjust_trans_huge(start, end);
    map.vmas.split_at_boundaries(start, end);
    for (_, _, vma) in map.vmas.range_mut(start, end) {
        let mut v = (**vma).clone();
        v.flags = (v.flags & !clear) | set;
        *vma = Arc::new(v);
    }
    map.vma_merge(start, end);
    Ok(())
}

/// The page-aligned range mlock and munlock work on: they round `addr`
/// down and the end up rather than refuse (Linux: `do_mlock`).
fn lock_range(addr: usize, len: usize) -> KResult<Option<(usize, usize)>> {
    let start = addr & !(PAGE_SIZE - 1);
    let len = len
        .checked_add(addr - start)
        .ok_or(Errno::ENOMEM)?
        .next_multiple_of(PAGE_SIZE);
    if len == 0 {
        return Ok(None);
    }
    check_range(start, len).map(|end| Some((start, end)))
}

/// mlock(2) and mlock2(2) (Linux: `do_mlock`): the VMAs over the range get
/// VM_LOCKED (and VM_LOCKONFAULT with MLOCK_ONFAULT); without ONFAULT the
/// range is populated. ENOMEM if part of it is unmapped, EINVAL for flags.
/// Where we simplify: locked pages are never reclaimed anyway, so a lock
/// changes only the flags and the population.
pub fn mlock(mm: &Arc<Mm>, addr: usize, len: usize, flags: u32) -> KResult<()> {
    if flags & !MLOCK_ONFAULT != 0 {
        return Err(Errno::EINVAL);
    }
    let Some((start, end)) = lock_range(addr, len)? else {
        return Ok(());
    };
    let onfault = if flags & MLOCK_ONFAULT != 0 {
        VM_LOCKONFAULT
    } else {
        0
    };
    let mut map = mm.mmap_write_lock();
    change_vma_flags(
        &mut map,
        start,
        end,
        VM_LOCKED | onfault,
        VM_LOCKONFAULT & !onfault,
    )?;
    let ranges: alloc::vec::Vec<_> = map
        .vmas
        .range(start, end)
        .map(|(s, e, v)| (s.max(start), e.min(end), v.flags))
        .collect();
    drop(map);
    if onfault == 0 {
        for (s, e, vflags) in ranges {
            populate(mm, s, e, vflags);
        }
    }
    Ok(())
}

/// munlock(2).
pub fn munlock(mm: &Arc<Mm>, addr: usize, len: usize) -> KResult<()> {
    let Some((start, end)) = lock_range(addr, len)? else {
        return Ok(());
    };
    change_vma_flags(
        &mut mm.mmap_write_lock(),
        start,
        end,
        0,
        VM_LOCKED | VM_LOCKONFAULT,
    )
}

/// mlockall(2) (Linux: `apply_mlockall_flags`): MCL_CURRENT locks (and
/// populates, without MCL_ONFAULT) every mapping, MCL_FUTURE every later
/// one; EINVAL for no flags, unknown ones or MCL_ONFAULT alone.
pub fn mlockall(mm: &Arc<Mm>, flags: u32) -> KResult<()> {
    if flags == 0 || flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags == MCL_ONFAULT
    {
        return Err(Errno::EINVAL);
    }
    let lock = VM_LOCKED
        | if flags & MCL_ONFAULT != 0 {
            VM_LOCKONFAULT
        } else {
            0
        };
    let mut map = mm.mmap_write_lock();
    map.def_flags = if flags & MCL_FUTURE != 0 { lock } else { 0 };
    if flags & MCL_CURRENT == 0 {
        return Ok(());
    }
    map.vma_start_write_all();
    let mut ranges = alloc::vec::Vec::new();
    for (s, e, vma) in map.vmas.range_mut(0, crate::mm::addr::USER_TOP) {
        let mut v = (**vma).clone();
        v.flags = (v.flags & !VM_LOCKONFAULT) | lock;
        ranges.push((s, e, v.flags));
        *vma = Arc::new(v);
    }
    map.vma_merge(0, crate::mm::addr::USER_TOP);
    drop(map);
    if lock & VM_LOCKONFAULT == 0 {
        for (s, e, vflags) in ranges {
            populate(mm, s, e, vflags);
        }
    }
    Ok(())
}

/// munlockall(2): no mapping locked, now or later.
pub fn munlockall(mm: &Arc<Mm>) -> KResult<()> {
    let mut map = mm.mmap_write_lock();
    map.def_flags = 0;
    map.vma_start_write_all();
    for (_, _, vma) in map.vmas.range_mut(0, crate::mm::addr::USER_TOP) {
        if vma.flags & (VM_LOCKED | VM_LOCKONFAULT) != 0 {
            let mut v = (**vma).clone();
            v.flags &= !(VM_LOCKED | VM_LOCKONFAULT);
            *vma = Arc::new(v);
        }
    }
    map.vma_merge(0, crate::mm::addr::USER_TOP);
    Ok(())
}

/// How much unmapped space a stack keeps below it as it grows (Linux:
/// `stack_guard_gap`, 256 pages).
const STACK_GUARD_GAP: usize = 256 * PAGE_SIZE;

/// A fault at `addr`, below a VM_GROWSDOWN VMA, grows that VMA down to
/// cover its page (Linux: `expand_stack` -> `expand_downwards`); false if
/// it may not: no such VMA, a file mapping, the stack would pass
/// `limit` bytes, or come within the guard gap of the mapping below.
pub fn expand_stack(mm: &Arc<Mm>, addr: usize, limit: u64) -> bool {
    let new_start = addr & !(PAGE_SIZE - 1);
    let mut map = mm.mmap_write_lock();
    let Some((start, end, vma)) = map.vmas.find_from(addr) else {
        return false;
    };
    if start <= addr {
        return true; // another fault grew it first
    }
    if vma.flags & VM_GROWSDOWN == 0 || vma.file.is_some() || (end - new_start) as u64 > limit {
        return false;
    }
    let below = map
        .vmas
        .iter()
        .take_while(|(s, _, _)| *s < start)
        .last()
        .map(|(_, e, v)| (e, v.flags));
    if let Some((below_end, flags)) = below {
        if flags & VM_GROWSDOWN == 0 && new_start < below_end.saturating_add(STACK_GUARD_GAP) {
            return false;
        }
    }
    if new_start < MMAP_BOTTOM {
        return false;
    }
    let grown = Arc::new(Vma::new(vma.flags, None, 0));
    map.vma_start_write(start, end);
    map.vmas.remove_range(start, end);
    map.vmas.insert(new_start, end, grown).is_ok()
}

/// munmap(2).
pub fn munmap(mm: &Arc<Mm>, addr: usize, len: usize) -> KResult<()> {
    let end = check_range(addr, len)?;
    let mut map = mm.mmap_write_lock();
    map.vma_start_write(addr, end);
    map.vmas.remove_range(addr, end);
    let detached = memory::unmap_range(mm, addr, end, &map.vmas);
    drop(map);
    drop(detached); // the per-page work, with no lock held
    Ok(())
}

/// mprotect(2): new permissions for whole pages, splitting VMAs at the
/// edges and rewriting the entries already present.
pub fn mprotect(mm: &Arc<Mm>, addr: usize, len: usize, prot: u32) -> KResult<()> {
    if prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let end = check_range(addr, len)?;
    let mut map = mm.mmap_write_lock();
    if !fully_mapped(&map, addr, end) {
        return Err(Errno::ENOMEM);
    }
    if prot & PROT_WRITE != 0
        && map
            .vmas
            .range(addr, end)
            .any(|(_, _, v)| v.flags & VM_MAYWRITE == 0)
    {
        return Err(Errno::EACCES);
    }
    map.vma_start_write(addr, end);
    map.vmas.split_at_boundaries(addr, end);
    let new_flags = prot_flags(prot);
    for (start, vend, vma) in map.vmas.range_mut(addr, end) {
        let mut v = (**vma).clone();
        v.flags = (v.flags & !(VM_READ | VM_WRITE | VM_EXEC)) | new_flags;
        let shared = v.flags & VM_SHARED != 0;
        memory::change_protection(mm, start, vend, |pte| {
            if new_flags & VM_READ == 0 && new_flags & VM_EXEC == 0 && new_flags & VM_WRITE == 0 {
                // PROT_NONE: keep the page but make every access fault.
                return protnone(pte);
            }
            // A private page may become writable only if it is the
            // process's own (Linux: `can_change_pte_writable`): after fork
            // a shared page must still fault and be copied.
            let own = shared || folio::page_anon_exclusive(pte.addr().pfn());
            let write = new_flags & VM_WRITE != 0 && own;
            Pte::page(pte.addr(), PgProt::user(write, new_flags & VM_EXEC != 0))
        });
        *vma = Arc::new(v);
    }
    map.vma_merge(addr, end);
    Ok(())
}

/// A PROT_NONE entry: still holding its page, but with no EL0 access.
fn protnone(pte: Pte) -> Pte {
    Pte::page(pte.addr(), PgProt::user_none())
}

/// madvise(2). MADV_FREE, for private anonymous memory only (EINVAL for
/// anything else, as Linux), drops the pages at once as MADV_DONTNEED does
/// (Linux frees them lazily; either way they may read back as zeros).
/// MADV_DONTFORK / MADV_DOFORK set and clear VM_DONTCOPY, MADV_DONTDUMP /
/// MADV_DODUMP VM_DONTDUMP, MADV_HUGEPAGE / MADV_NOHUGEPAGE VM_HUGEPAGE and
/// VM_NOHUGEPAGE, each clearing the other; MADV_COLLAPSE is
/// `huge_memory::collapse`'s.
pub fn madvise(mm: &Arc<Mm>, addr: usize, len: usize, advice: u32) -> KResult<()> {
    if !addr.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let (set, clear) = match advice {
        MADV_NORMAL | MADV_RANDOM | MADV_SEQUENTIAL | MADV_WILLNEED | MADV_DONTNEED | MADV_FREE
        | MADV_COLLAPSE => (0, 0),
        MADV_HUGEPAGE => (VM_HUGEPAGE, VM_NOHUGEPAGE),
        MADV_NOHUGEPAGE => (VM_NOHUGEPAGE, VM_HUGEPAGE),
        MADV_DONTFORK => (VM_DONTCOPY, 0),
        MADV_DOFORK => (0, VM_DONTCOPY),
        MADV_DONTDUMP => (VM_DONTDUMP, 0),
        MADV_DODUMP => (0, VM_DONTDUMP),
        _ => return Err(Errno::EINVAL),
    };
    if len == 0 {
        return Ok(());
    }
    let end = check_range(addr, len)?;
    if advice == MADV_COLLAPSE {
        return huge_memory::collapse::madvise_collapse(mm, addr, end);
    }
    if set == 0 && clear == 0 {
        // Linux: `madvise_need_mmap_write` is false; faults may run on.
        let map = mm.mmap_lock_readonly();
        if !fully_mapped(&map, addr, end) {
            return Err(Errno::ENOMEM);
        }
        if advice == MADV_FREE
            && map
                .vmas
                .range(addr, end)
                .any(|(_, _, v)| v.file.is_some() || v.is_shared())
        {
            return Err(Errno::EINVAL);
        }
        if advice == MADV_DONTNEED || advice == MADV_FREE {
            memory::zap_range(mm, addr, end);
        }
        // Other hints about access patterns change nothing here.
        return Ok(());
    }
    change_vma_flags(&mut mm.mmap_write_lock(), addr, end, set, clear)
}

/// brk(2): moves the end of the heap; returns the (possibly unchanged) end
/// (Linux: `brk` in `mm/mmap.c`). Below the heap's start, past the user
/// half, into another mapping, or growing by more than memory could hold
/// (the overcommit heuristic): unchanged.
pub fn brk(mm: &Arc<Mm>, new: usize) -> usize {
    let mut map = mm.mmap_write_lock();
    let (start, old) = (map.start_brk, map.brk);
    if new < start || new > MMAP_TOP {
        return old;
    }
    let (old_end, new_end) = (align_up(old, PAGE_SIZE), align_up(new, PAGE_SIZE));
    if new_end > old_end {
        if map.vmas.overlaps(old_end, new_end) || !enough_memory(new_end - old_end) {
            return old;
        }
        let vma = Vma::anon(VM_READ | VM_WRITE | VM_MAYWRITE);
        if map.vmas.insert(old_end, new_end, Arc::new(vma)).is_err() {
            return old;
        }
        // The heap stays one VMA as it grows (Linux: `do_brk_flags`
        // expanding the VMA below).
        map.vma_merge(old_end, new_end);
    } else if new_end < old_end {
        map.vma_start_write(new_end, old_end);
        map.vmas.remove_range(new_end, old_end);
        memory::zap_range(mm, new_end, old_end);
    }
    map.brk = new;
    new
}

/// mremap(2): shrink in place, or move (MREMAP_MAYMOVE) to a new place,
/// page tables and all. Growing in place is not attempted.
pub fn mremap(
    mm: &Arc<Mm>,
    old: usize,
    old_len: usize,
    new_len: usize,
    flags: u32,
    new_addr: usize,
) -> KResult<usize> {
    if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED) != 0
        || (flags & MREMAP_FIXED != 0 && flags & MREMAP_MAYMOVE == 0)
    {
        return Err(Errno::EINVAL);
    }
    let old_end = check_range(old, old_len)?;
    if new_len == 0 {
        return Err(Errno::EINVAL);
    }
    let new_len = page_align(new_len)?;
    let old_len = old_end - old;
    if flags & MREMAP_FIXED == 0 && new_len <= old_len {
        // Shrinking is always allowed: it unmaps the tail, whatever
        // mappings it spans (Linux: `mremap`'s shrink, before any VMA
        // lookup).
        if new_len < old_len {
            munmap(mm, old + new_len, old_len - new_len)?;
        }
        return Ok(old);
    }
    let mut map = mm.mmap_write_lock();
    let Some((vstart, vend, vma)) = map.vmas.find(old).map(|(s, e, v)| (s, e, v.clone())) else {
        return Err(Errno::EFAULT);
    };
    if old_end > vend {
        return Err(Errno::EFAULT);
    }
    if flags & MREMAP_MAYMOVE == 0
        || (vma.flags & (VM_WRITE | VM_SHARED) == VM_WRITE
            && !enough_memory(new_len.saturating_sub(old_len)))
    {
        return Err(Errno::ENOMEM);
    }
    let target = if flags & MREMAP_FIXED != 0 {
        let end = check_range(new_addr, new_len)?;
        if new_addr < old_end && old < end {
            return Err(Errno::EINVAL);
        }
        map.vma_start_write(new_addr, end);
        map.vmas.remove_range(new_addr, end);
        memory::zap_range(mm, new_addr, end);
        new_addr
    } else {
        map.vmas
            .get_unmapped_area(new_len, PAGE_SIZE, None, MMAP_BOTTOM, MMAP_TOP)
            .ok_or(Errno::ENOMEM)?
    };
    let moved = Vma {
        pgoff: vma.pgoff_of(vstart, old),
        ..(*vma).clone()
    };
    map.vma_start_write(old, old_end);
    map.vmas.remove_range(old, old_end);
    map.vmas
        .insert(target, target + new_len, Arc::new(moved))
        .map_err(|_| Errno::ENOMEM)?;
    let keep = old_len.min(new_len);
    if !memory::move_range(mm, old, target, keep) {
        return Err(Errno::ENOMEM);
    }
    memory::zap_range(mm, old + keep, old_end);
    Ok(target)
}

/// msync(2): tmpfs has nothing to write back; only the range is checked.
pub fn msync(mm: &Arc<Mm>, addr: usize, len: usize, flags: u32) -> KResult<()> {
    const MS_ASYNC: u32 = 1;
    const MS_INVALIDATE: u32 = 2;
    const MS_SYNC: u32 = 4;
    if !addr.is_multiple_of(PAGE_SIZE)
        || flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0
        || flags & MS_ASYNC != 0 && flags & MS_SYNC != 0
    {
        return Err(Errno::EINVAL);
    }
    if len == 0 {
        return Ok(());
    }
    let end = check_range(addr, len)?;
    if !fully_mapped(&mm.mmap_lock_readonly(), addr, end) {
        return Err(Errno::ENOMEM);
    }
    Ok(())
}

/// mincore(2): one byte per page into user memory at `uvec`, 1 if it is
/// mapped in memory now; a block of results at a time through the stack,
/// as Linux copies a page of them at a time, whatever the length.
pub fn mincore(mm: &Arc<Mm>, addr: usize, len: usize, uvec: usize) -> KResult<()> {
    let end = check_range(addr, len)?;
    if !fully_mapped(&mm.mmap_lock_readonly(), addr, end) {
        return Err(Errno::ENOMEM);
    }
    let mut block = [0u8; 256];
    let mut out = uvec;
    for first in (addr..end).step_by(block.len() * PAGE_SIZE) {
        let pages = (end - first).div_ceil(PAGE_SIZE).min(block.len());
        for (i, present) in block[..pages].iter_mut().enumerate() {
            *present = memory::is_mapped(mm, first + i * PAGE_SIZE) as u8;
        }
        crate::mm::uaccess::copy_to_user(out, &block[..pages])?;
        out += pages;
    }
    Ok(())
}
