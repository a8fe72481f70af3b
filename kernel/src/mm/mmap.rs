//! mmap, munmap and brk: making and removing mappings (Linux: `mm/mmap.c`
//! `do_mmap`, `mmap_region`, `do_munmap`, `brk`, and `mm/vma.c`). Beside
//! them, what the other memory system calls share: the checks of a range
//! a user gave, the overcommit check, populating a range, and the walk
//! that changes the flags of the VMAs over a range (`vma_modify_flags`).
//! mprotect, madvise, mlock, mremap, mseal, mincore and msync have their
//! own files, as in Linux.
//!
//! Each call takes `mmap_lock` for the whole change, for writing if it
//! changes VMAs, and write-locks each VMA before changing it or its pages,
//! so faults running under per-VMA locks (`mm/vma_lock.rs`) have finished
//! with it.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch::pgtable::CONT_PTE_SIZE;
use crate::errno::{Errno, KResult};
use crate::fs::tmpfs;
use crate::fs::vfs::{File, Inode, InodeKind};
use crate::mm::addr::{align_up, PAGE_SHIFT, PAGE_SIZE, PMD_SIZE, USER_TOP};
use crate::mm::fault::Access;
use crate::mm::gup::fault_in;
use crate::mm::huge_memory;
use crate::mm::memory;
use crate::mm::mm_struct::{Mm, MmMap, MmapWriteGuard, MMAP_BOTTOM, MMAP_TOP, MMF_HAS_MDWE};
use crate::mm::vma::{
    Vma, VM_ACCOUNT, VM_DATA_DEFAULT_FLAGS, VM_DONTDUMP, VM_DROPPABLE, VM_EXEC, VM_GROWSDOWN,
    VM_LOCKED, VM_LOCKONFAULT, VM_MAYEXEC, VM_MAYREAD, VM_MAYSHARE, VM_MAYWRITE, VM_NOHUGEPAGE,
    VM_NORESERVE, VM_READ, VM_SEALED, VM_SHARED, VM_WIPEONFORK, VM_WRITE,
};
use uapi::mman::MAP_TYPE;
pub use uapi::mman::{
    MAP_ANONYMOUS, MAP_DROPPABLE, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_GROWSDOWN, MAP_HUGETLB,
    MAP_LOCKED, MAP_NONBLOCK, MAP_NORESERVE, MAP_POPULATE, MAP_PRIVATE, MAP_SHARED,
    MAP_SHARED_VALIDATE, MAP_STACK, PROT_EXEC, PROT_READ, PROT_SEM, PROT_WRITE,
};

/// The flags MAP_SHARED_VALIDATE accepts for a file (Linux:
/// `LEGACY_MAP_MASK`): MAP_DENYWRITE (0x800), MAP_EXECUTABLE (0x1000),
/// MAP_UNINITIALIZED (0x4000000) and MAP_HUGE_2MB / MAP_HUGE_1GB besides
/// the ones above; MAP_SYNC is for DAX files, which tmpfs is not.
const LEGACY_MAP_MASK: u32 = MAP_SHARED
    | MAP_PRIVATE
    | MAP_FIXED
    | MAP_ANONYMOUS
    | 0x800
    | 0x1000
    | 0x400_0000
    | MAP_GROWSDOWN
    | MAP_LOCKED
    | MAP_NORESERVE
    | MAP_POPULATE
    | MAP_NONBLOCK
    | MAP_STACK
    | MAP_HUGETLB
    | (21 << 26)
    | (30 << 26);

/// The VM_READ/VM_WRITE/VM_EXEC bits for a `PROT_*` mask (Linux's
/// `calc_vm_prot_bits`).
pub fn calc_vm_prot_bits(prot: u32) -> u64 {
    (if prot & PROT_READ != 0 { VM_READ } else { 0 })
        | (if prot & PROT_WRITE != 0 { VM_WRITE } else { 0 })
        | (if prot & PROT_EXEC != 0 { VM_EXEC } else { 0 })
}

/// The `VM_*` bits mmap's `flags` ask for (Linux's `calc_vm_flag_bits`).
fn calc_vm_flag_bits(flags: u32) -> u64 {
    (if flags & MAP_GROWSDOWN != 0 {
        VM_GROWSDOWN
    } else {
        0
    }) | (if flags & MAP_LOCKED != 0 {
        VM_LOCKED
    } else {
        0
    }) | (if flags & MAP_STACK != 0 {
        VM_NOHUGEPAGE
    } else {
        0
    })
}

/// May `bytes` more of private memory be promised? Not more than all of
/// RAM in one request (Linux: `__vm_enough_memory` in the default
/// heuristic mode, `OVERCOMMIT_GUESS`, with no swap): a mapping that
/// could never be backed fails at once with ENOMEM; one that could is
/// backed as it is touched, and the OOM killer settles who gets memory.
pub fn enough_memory(bytes: usize) -> bool {
    bytes / PAGE_SIZE <= crate::mm::frame::total_pages()
}

/// Is a private writable mapping with `vm_flags` charged to the overcommit
/// check (Linux: `accountable_mapping`)?
fn accountable_mapping(vm_flags: u64) -> bool {
    vm_flags & (VM_NORESERVE | VM_SHARED | VM_WRITE) == VM_WRITE
}

/// A length a user gave, rounded up to whole pages; ENOMEM if that does
/// not fit a `usize` (Linux: `PAGE_ALIGN` wrapping to 0, then ENOMEM).
pub fn page_align(len: usize) -> KResult<usize> {
    len.checked_next_multiple_of(PAGE_SIZE).ok_or(Errno::ENOMEM)
}

/// Is every page of [start, end) inside some VMA?
pub fn fully_mapped(map: &MmMap, start: usize, end: usize) -> bool {
    let mut at = start;
    for (s, e, _) in map.vmas.range(start, end) {
        if s > at {
            return false;
        }
        at = e;
    }
    at >= end
}

/// Does memory-deny-write-execute (prctl PR_SET_MDWE) forbid a VMA with
/// `old` flags to take `new` ones: writable and executable at once, or
/// executable where it was not (Linux: `map_deny_write_exec`)?
pub fn map_deny_write_exec(mm: &Mm, old: u64, new: u64) -> bool {
    mm.flags.load(Ordering::Acquire) & MMF_HAS_MDWE != 0
        && new & VM_EXEC != 0
        && (new & VM_WRITE != 0 || old & VM_EXEC == 0)
}

/// Is no VMA over [start, end) sealed (Linux: `can_modify_vma` over a
/// range, as `vms_gather_munmap_vmas` checks before an unmap)?
pub fn can_modify_range(map: &MmMap, start: usize, end: usize) -> bool {
    map.vmas
        .range(start, end)
        .all(|(_, _, v)| v.flags & VM_SEALED == 0)
}

/// mmap(2) (Linux: `do_mmap` and `mmap_region`): `len` bytes of `file` from
/// page `pgoff`, or anonymous memory, at `addr` or where it fits; returns
/// the address mapped. The errors come in Linux's order.
pub fn mmap(
    mm: &Arc<Mm>,
    addr: usize,
    len: usize,
    prot: u32,
    mut flags: u32,
    file: Option<Arc<File>>,
    pgoff: u64,
) -> KResult<usize> {
    if len == 0 {
        return Err(Errno::EINVAL);
    }
    if flags & MAP_FIXED_NOREPLACE != 0 {
        flags |= MAP_FIXED;
    }
    let len = page_align(len)?;
    if pgoff.checked_add((len >> PAGE_SHIFT) as u64).is_none() {
        return Err(Errno::EOVERFLOW);
    }
    let mut map = mm.mmap_write_lock();
    let mut vm_flags = calc_vm_prot_bits(prot)
        | calc_vm_flag_bits(flags)
        | map.def_flags
        | VM_MAYREAD
        | VM_MAYWRITE
        | VM_MAYEXEC;
    let start = if flags & MAP_FIXED != 0 {
        // Linux: `__get_unmapped_area`'s checks of a fixed address.
        if len > USER_TOP || addr > USER_TOP - len {
            return Err(Errno::ENOMEM);
        }
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(Errno::EINVAL);
        }
        addr
    } else {
        let hint = addr.checked_next_multiple_of(PAGE_SIZE).filter(|&a| a != 0);
        // Shared anonymous memory becomes a tmpfs file, placed as one
        // (Linux: `__get_unmapped_area` choosing `shmem_get_unmapped_area`).
        let (shmem, offset) = match file {
            Some(_) => (true, (pgoff as usize).wrapping_mul(PAGE_SIZE)),
            None => (flags & MAP_TYPE == MAP_SHARED, 0),
        };
        unmapped_area(&map, len, hint, shmem, offset)?
    };
    let end = start + len;
    if flags & MAP_FIXED_NOREPLACE != 0 && map.vmas.overlaps(start, end) {
        return Err(Errno::EEXIST);
    }
    let mut vma = match &file {
        Some(f) => {
            vm_flags = file_vm_flags(f, flags, prot, pgoff, len, vm_flags)?;
            match &f.inode.kind {
                InodeKind::File(_) => Vma::new(vm_flags, Some(f.inode.clone()), pgoff),
                // /dev/zero (Linux: `mmap_zero`): anonymous memory, named
                // by the device unless shared.
                _ if vm_flags & VM_SHARED != 0 => {
                    Vma::new(vm_flags, Some(shmem_zero_setup(len)?), pgoff)
                }
                _ => {
                    let mut vma = Vma::new(vm_flags, None, pgoff);
                    vma.dev_file = Some(f.inode.clone());
                    vma
                }
            }
        }
        None => match anon_vm_flags(flags, vm_flags)? {
            (vm_flags, true) => Vma::new(vm_flags, Some(shmem_zero_setup(len)?), 0),
            (vm_flags, false) => Vma::anon(vm_flags),
        },
    };
    if flags & MAP_NORESERVE != 0 {
        vma.set_flags(vma.flags | VM_NORESERVE);
    }
    let vm_flags = vma.flags;
    let detached = mmap_region(mm, &mut map, start, end, vma)?;
    drop(map);
    // The per-page work of what was there, with no lock held.
    drop(detached);
    // A locked mapping is populated as MAP_POPULATE's is (Linux: `mm_populate`).
    let locked = vm_flags & (VM_LOCKED | VM_LOCKONFAULT) == VM_LOCKED;
    if locked || flags & (MAP_POPULATE | MAP_NONBLOCK) == MAP_POPULATE {
        populate(mm, start, end, vm_flags);
    }
    Ok(start)
}

/// The flags of a file mapping, or why it may not be made (Linux: the
/// `if (file)` half of `do_mmap`): the mapping type against how the file
/// is open, and the memfd seals (`memfd_check_seals_mmap`).
fn file_vm_flags(
    f: &File,
    flags: u32,
    prot: u32,
    pgoff: u64,
    len: usize,
    mut vm_flags: u64,
) -> KResult<u64> {
    // Linux: `file_mmap_ok`, with MAX_LFS_FILESIZE.
    let max = (i64::MAX as u64 - len as u64) >> PAGE_SHIFT;
    if pgoff > max {
        return Err(Errno::EOVERFLOW);
    }
    let access = f.flags() & crate::fs::vfs::O_ACCMODE;
    let readable = access != crate::fs::vfs::O_WRONLY;
    let writable = access != crate::fs::vfs::O_RDONLY;
    match flags & MAP_TYPE {
        MAP_SHARED | MAP_SHARED_VALIDATE => {
            if flags & MAP_TYPE == MAP_SHARED_VALIDATE && flags & !LEGACY_MAP_MASK != 0 {
                return Err(Errno::EOPNOTSUPP);
            }
            if prot & PROT_WRITE != 0 && !writable {
                return Err(Errno::EACCES);
            }
            vm_flags |= VM_SHARED | VM_MAYSHARE;
            if !writable {
                vm_flags &= !(VM_MAYWRITE | VM_SHARED);
            }
        }
        MAP_PRIVATE => {}
        _ => return Err(Errno::EINVAL),
    }
    if !readable {
        return Err(Errno::EACCES);
    }
    let seals = match &f.inode.kind {
        InodeKind::File(sf) => sf.seals(),
        InodeKind::Device(d) if d.maps_anonymous_memory() => 0,
        _ => return Err(Errno::ENODEV),
    };
    if vm_flags & VM_GROWSDOWN != 0 {
        return Err(Errno::EINVAL);
    }
    // A write-sealed memfd maps shared only read-only, and for good:
    // EPERM for PROT_WRITE, no VM_MAYWRITE.
    if seals & tmpfs::F_SEAL_ANY_WRITE != 0 && vm_flags & VM_SHARED != 0 {
        if vm_flags & VM_WRITE != 0 {
            return Err(Errno::EPERM);
        }
        vm_flags &= !VM_MAYWRITE;
    }
    Ok(vm_flags)
}

/// The file behind `len` bytes of shared anonymous memory: a file of the
/// internal tmpfs, as in Linux (`shmem_zero_setup`).
fn shmem_zero_setup(len: usize) -> KResult<Arc<Inode>> {
    let f = tmpfs::memfd_create("dev/zero", 0)?;
    f.ftruncate(len as i64)?;
    Ok(f.inode.clone())
}

/// The flags of an anonymous mapping and whether it is shared, or EINVAL
/// (Linux: the `else` half of `do_mmap`). MAP_DROPPABLE memory is neither
/// locked nor a stack, and is not copied at fork or dumped.
fn anon_vm_flags(flags: u32, mut vm_flags: u64) -> KResult<(u64, bool)> {
    match flags & MAP_TYPE {
        MAP_SHARED => {
            if vm_flags & VM_GROWSDOWN != 0 {
                return Err(Errno::EINVAL);
            }
            Ok((vm_flags | VM_SHARED | VM_MAYSHARE, true))
        }
        MAP_DROPPABLE => {
            if flags & (MAP_LOCKED | MAP_HUGETLB) != 0 || vm_flags & VM_GROWSDOWN != 0 {
                return Err(Errno::EINVAL);
            }
            vm_flags |= VM_DROPPABLE | VM_NORESERVE | VM_WIPEONFORK | VM_DONTDUMP;
            Ok((vm_flags, false))
        }
        MAP_PRIVATE => Ok((vm_flags, false)),
        _ => Err(Errno::EINVAL),
    }
}

/// Maps `vma` at [start, end) (Linux: `mmap_region`): refused under
/// memory-deny-write-execute (EACCES), over a sealed mapping (EPERM), or
/// past the overcommit check (ENOMEM); otherwise whatever was there goes
/// as munmap's does, page tables and all (Linux: `unmap_region`), so the
/// new VMA starts with empty PMD entries where PMD blocks may go; what the
/// old tables mapped is freed when the result is dropped. The new VMA
/// joins alike neighbours.
fn mmap_region<'a>(
    mm: &'a Arc<Mm>,
    map: &mut MmapWriteGuard,
    start: usize,
    end: usize,
    mut vma: Vma,
) -> KResult<Option<memory::DetachedTables<'a>>> {
    // Linux: `do_mmap`'s check, which lets the count reach one past.
    if map.vmas.map_count() > max_map_count() {
        return Err(Errno::ENOMEM);
    }
    let vm_flags = vma.flags;
    if map_deny_write_exec(mm, vm_flags, vm_flags) {
        return Err(Errno::EACCES);
    }
    if !can_modify_range(map, start, end) {
        return Err(Errno::EPERM);
    }
    if accountable_mapping(vm_flags) {
        if !enough_memory(end - start) {
            return Err(Errno::ENOMEM);
        }
        vma.set_flags(vma.flags | VM_ACCOUNT);
    }
    let mut detached = None;
    if map.vmas.overlaps(start, end) {
        map.vma_start_write(start, end);
        map.vmas.remove_range(start, end);
        detached = Some(memory::unmap_range(mm, start, end, &map.vmas));
    }
    vma.register_with_file(mm);
    map.vmas
        .insert(start, end, Arc::new(vma))
        .map_err(|_| Errno::ENOMEM)?;
    map.vma_merge(start, end);
    Ok(detached)
}

/// `vm.max_map_count`: the most VMAs a process may have, each a piece of
/// kernel memory a program could otherwise multiply without end by
/// mapping pages one by one (Linux: `sysctl_max_map_count`,
/// `DEFAULT_MAX_MAP_COUNT`).
pub static MAX_MAP_COUNT: AtomicUsize = AtomicUsize::new(65530);

/// The current `vm.max_map_count`.
fn max_map_count() -> usize {
    MAX_MAP_COUNT.load(Ordering::Relaxed)
}

/// May cutting the VMAs at `start` and `end` go ahead (Linux: `split_vma`
/// refuses a cut once `map_count` has reached `vm.max_map_count`)?
fn may_split(map: &MmMap, start: usize, end: usize) -> bool {
    map.vmas.map_count() + map.vmas.splits_needed(start, end) <= max_map_count()
}

/// Where mmap puts `len` bytes of a tmpfs file (`shmem`) from byte
/// `offset`, or of private anonymous memory, when not told exactly (Linux: `get_unmapped_area`
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
    shmem: bool,
    offset: usize,
) -> KResult<usize> {
    let bits = huge_memory::huge_settings().thp_mapping_align;
    let mthp_bit = match shmem {
        true => huge_memory::knobs::FILE_MAPPING_ALIGN,
        false => huge_memory::knobs::ANON_MAPPING_ALIGN,
    };
    let align = [(PMD_SIZE, shmem), (CONT_PTE_SIZE, bits & mthp_bit != 0)]
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
/// Nothing for an inaccessible or lock-on-fault mapping.
pub fn populate(mm: &Arc<Mm>, start: usize, end: usize, vflags: u64) {
    if vflags & (VM_READ | VM_WRITE | VM_EXEC) == 0 || vflags & VM_LOCKONFAULT != 0 {
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

/// Walks the VMAs over [start, end) as Linux's mprotect, mlock and madvise
/// loops do (Linux: `vma_modify_flags` for each): `newflags` gives each
/// (with its whole range) its new flags, or an error that ends the walk; a VMA whose flags change
/// is cut at the range's edges and its part replaced, and `changed` hears
/// of each such part (start, end, old flags, new flags). A hole is ENOMEM,
/// at the start before anything changes, further on after the VMAs before
/// it changed, as in Linux. The changed VMAs rejoin alike neighbours.
pub fn vma_modify_flags(
    map: &mut MmapWriteGuard,
    start: usize,
    end: usize,
    mut newflags: impl FnMut(usize, usize, &Vma) -> KResult<u64>,
    mut changed: impl FnMut(usize, usize, u64, u64),
) -> KResult<()> {
    let mut at = start;
    let result = loop {
        if at >= end {
            break Ok(());
        }
        let Some((s, e, vma)) = map.vmas.find(at).map(|(s, e, v)| (s, e, v.clone())) else {
            break Err(Errno::ENOMEM);
        };
        let part_end = e.min(end);
        let new = match newflags(s, e, &vma) {
            Ok(new) => new,
            Err(e) => break Err(e),
        };
        if new != vma.flags {
            if !may_split(map, at, part_end) {
                break Err(Errno::ENOMEM);
            }
            map.vma_start_write(s, e);
            map.vma_adjust_trans_huge(at, part_end);
            map.vmas.split_at_boundaries(at, part_end);
            for (_, _, v) in map.vmas.range_mut(at, part_end) {
                let mut copy = (**v).clone();
                copy.set_flags(new);
                *v = Arc::new(copy);
            }
            changed(at, part_end, vma.flags, new);
        }
        at = part_end;
    };
    if at > start {
        // From the start of the VMA holding `start`, which may not have
        // been cut there, so its neighbour below is tried too.
        let from = map.vmas.find(start).map_or(start, |(s, _, _)| s);
        map.vma_merge(from, at);
    }
    result
}

/// munmap(2) (Linux: `do_vmi_munmap`): EINVAL for a misaligned start, an
/// empty range or one past the user half; EPERM if a sealed VMA meets it.
pub fn munmap(mm: &Arc<Mm>, addr: usize, len: usize) -> KResult<()> {
    let mut map = mm.mmap_write_lock();
    let detached = do_munmap(mm, &mut map, addr, len)?;
    drop(map);
    drop(detached); // the per-page work, with no lock held
    Ok(())
}

/// munmap's work under `mmap_lock`, for mremap too (Linux: `do_munmap`);
/// what the unhooked page tables map is freed when the result is dropped.
pub fn do_munmap<'a>(
    mm: &'a Arc<Mm>,
    map: &mut MmapWriteGuard,
    addr: usize,
    len: usize,
) -> KResult<memory::DetachedTables<'a>> {
    if !addr.is_multiple_of(PAGE_SIZE) || addr > USER_TOP || len > USER_TOP - addr {
        return Err(Errno::EINVAL);
    }
    let end = addr + page_align(len)?;
    if end == addr {
        return Err(Errno::EINVAL);
    }
    if !can_modify_range(map, addr, end) {
        return Err(Errno::EPERM);
    }
    // A hole in the middle of one VMA leaves one more (Linux:
    // `vms_gather_munmap_vmas`' map_count check).
    let middle = map
        .vmas
        .find(addr)
        .is_some_and(|(s, e, _)| s < addr && end < e);
    if middle && map.vmas.map_count() >= max_map_count() {
        return Err(Errno::ENOMEM);
    }
    map.vma_start_write(addr, end);
    map.vmas.remove_range(addr, end);
    Ok(memory::unmap_range(mm, addr, end, &map.vmas))
}

/// How much unmapped space a stack keeps below it as it grows (Linux:
/// `stack_guard_gap`, 256 pages).
const STACK_GUARD_GAP: usize = 256 * PAGE_SIZE;

/// A fault at `addr`, below a VM_GROWSDOWN VMA, grows that VMA down to
/// cover its page (Linux: `expand_stack` -> `expand_downwards`); false if
/// it may not: no such VMA, a file mapping, the stack would pass
/// `limit` bytes, or come within the guard gap of the mapping below.
pub fn expand_stack(mm: &Mm, addr: usize, limit: u64) -> bool {
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
    // The same VMA, lower: its flags and whether it has had pages.
    let grown = Arc::new((**vma).clone());
    map.vma_start_write(start, end);
    map.vmas.remove_range(start, end);
    map.vmas.insert(new_start, end, grown).is_ok()
}

/// brk(2): moves the end of the heap; returns the (possibly unchanged) end
/// (Linux: `brk` in `mm/mmap.c`). Below the heap's start, past the user
/// half, into another mapping, over a sealed one, or growing by more than
/// memory could hold (the overcommit heuristic): unchanged.
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
        let vma = Vma::anon(VM_DATA_DEFAULT_FLAGS | VM_ACCOUNT | map.def_flags);
        if map.vmas.insert(old_end, new_end, Arc::new(vma)).is_err() {
            return old;
        }
        // The heap stays one VMA as it grows (Linux: `do_brk_flags`
        // expanding the VMA below).
        map.vma_merge(old_end, new_end);
    } else if new_end < old_end {
        if !can_modify_range(&map, new_end, old_end) {
            return old;
        }
        map.vma_start_write(new_end, old_end);
        map.vmas.remove_range(new_end, old_end);
        memory::zap_range(mm, new_end, old_end);
    }
    map.brk = new;
    new
}
