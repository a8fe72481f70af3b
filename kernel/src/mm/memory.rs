//! Page-table work on user address spaces (Linux: `mm/memory.c`):
//! installing a page (`set_pte_at`), removing a range (`zap_page_range`),
//! copying a range at fork (`copy_page_range`) and freeing the tables
//! (`free_pgtables`). Each mapped entry holds one reference on its folio.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::cont_block;
use crate::arch::contpte::CONT_PTES;
use crate::arch::cpufeature::arch_wants_old_prefaulted_pte;
use crate::arch::desc::{PgProt, Pte};
use crate::arch::mmu;
use crate::arch::pgtable::{get_and_clear_ptes, modify_prot_ptes, ptep_clear_flush, set_ptes};
use crate::mm::addr::{align_up, PhysAddr, PAGE_SIZE, PMD_SIZE, PTRS_PER_TABLE};
use crate::mm::fault::Access;
use crate::mm::folio::{self, Folio};
use crate::mm::frame;
use crate::mm::huge_memory::{pmd, split};
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Alloc, Found, Level, PageTable, PgtableMem};
use crate::mm::ptlock::pte_lock;
use crate::mm::vm_fault::VmFault;
use crate::mm::vma::Vma;
use crate::mm::vma_tree::VmaTree;
use crate::mm::vmstat;

/// Maps pages `page..page + nr` of `folio` from `addr`, all in the fault's
/// PTE table, as the VMA allows: writable where it is writable and the
/// page is shared or the process's own (an anonymous folio); a private
/// page-cache page starts read-only (Linux: `set_pte_range` -> `set_ptes`).
/// Entries are dirty for a write fault and for anonymous memory (its
/// protection is); a shared page read in stays clean until written.
/// Each entry holds a folio reference of its own, which the caller takes
/// and counts with the mappings (`Folio::add_mappings`, `into_mappings`),
/// as Linux's callers take them (`folio_ref_add`). The caller
/// holds the table's lock and has checked the entries are none; none ->
/// valid needs no TLB flush, and a fault's entries need no barrier either
/// (Linux's `__set_pte` has one for kernel entries only): an access that
/// beats the walker to them faults again and finds them.
#[inline(always)] // every mapping path: left to itself the compiler calls it per folio
pub fn set_pte_range(vmf: &VmFault, folio: &Folio, page: usize, nr: usize, addr: usize) {
    FaultProt::new(vmf, folio.is_anon()).set_pte_range(vmf, folio, page, nr, addr);
}

/// What `set_pte_range` takes from the fault alone, the same for every
/// folio it maps: the protection and whether prefaulted entries start old.
/// Linux works it out inside `set_pte_range`, per call; fault-around, which
/// maps up to 16 folios in one fault, works it out once, before its loop.
#[derive(Clone, Copy)]
pub struct FaultProt {
    /// The VMA's protection for the folios' kind, dirty for a write fault.
    prot: PgProt,
    /// Entries mapped ahead of need start old (Linux:
    /// `arch_wants_old_prefaulted_pte`).
    old_prefault: bool,
}

impl FaultProt {
    /// For `vmf`'s folios: anonymous ones (`anon`), or the page cache's.
    #[inline(always)]
    pub fn new(vmf: &VmFault, anon: bool) -> Self {
        let prot = vmf.vma.page_prot(anon);
        FaultProt {
            prot: if vmf.access == Access::Write {
                prot.mkdirty()
            } else {
                prot
            },
            old_prefault: arch_wants_old_prefaulted_pte(),
        }
    }

    /// [`set_pte_range`] with this protection, for a folio of its kind.
    #[inline(always)]
    pub fn set_pte_range(self, vmf: &VmFault, folio: &Folio, page: usize, nr: usize, addr: usize) {
        debug_assert!(
            Level::Pte.index(addr) + nr <= PTRS_PER_TABLE && page + nr <= folio.nr_pages()
        );
        let mut pte = Pte::page(folio.phys().add(page * PAGE_SIZE), self.prot);
        if self.old_prefault {
            pte = old_if_prefault(vmf, pte, addr, nr);
        }
        set_ptes(vmf.mm, vmf.table(), addr, pte, nr, folio);
    }
}

/// `pte` made old if its `nr` pages from `addr` are mapped ahead of need
/// (fault-around), not for the fault itself: where the hardware sets the
/// access flag, that tells the pages used apart from those only mapped
/// (Linux: `set_pte_range`'s `prefault` test). Out of line, so CPUs
/// without the feature pay one test of the switch.
#[cold]
#[inline(never)]
fn old_if_prefault(vmf: &VmFault, pte: Pte, addr: usize, nr: usize) -> Pte {
    if (addr..addr + nr * PAGE_SIZE).contains(&vmf.address) {
        pte
    } else {
        pte.mkold()
    }
}

/// Replaces a valid entry (a write fault upgrading or copying a page):
/// the old entry is cleared and flushed before the new one is written
/// (break-before-make), its block unfolded first. Returns the folio
/// reference the old entry held.
pub fn replace_pte(mm: &Mm, table: &PageTable, addr: usize, new: Pte) -> Folio {
    let old = ptep_clear_flush(mm, table, addr);
    table[Level::Pte.index(addr)].store(new.0, Ordering::Release);
    mmu::publish_table_writes();
    // SAFETY: the old entry's reference, now ours.
    let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
    folio.unmapped();
    folio
}

/// Maps the PMD-sized `folio` with one block descriptor in `pmd`, the
/// level-2 entry for a 2M-aligned VA (Linux: `do_set_pmd`), if the entry is
/// still none: a fault elsewhere in the 2M may install a PTE table there
/// without the page-table lock. The caller holds `mm.page_table_lock`. The
/// block holds one folio reference, as a PTE does; it is dirty if a write
/// maps it.
pub fn set_pmd(pmd: &AtomicU64, folio: Folio, prot: PgProt, write: bool) {
    let mut block = Pte::block(folio.phys(), prot);
    if write {
        block = block.mkdirty();
    }
    let block = block.0;
    if pmd
        .compare_exchange(0, block, Ordering::Release, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    mmu::publish_table_writes();
    vmstat::THP_FILE_MAPPED.inc();
    folio.into_mapping();
}

/// Unmaps `[start, end)` (Linux: `zap_page_range_single`): clears every
/// entry, flushes the TLB, then drops the folio references (never before
/// the flush: another CPU could still reach the page through a stale TLB
/// entry). A dirty entry dirties its folio. A PMD block the range covers
/// only in part is taken apart first (`pmd::split_huge_pmd`): an anonymous
/// one into PTEs, of which only those in the range go; a shared file one
/// is unmapped whole, the rest refaulting from the page cache, as Linux
/// does for shmem. A table left mapping part of a large anonymous folio
/// is queued for the folio's split (`split::deferred_split_table`).
pub fn zap_range(mm: &Mm, start: usize, end: usize) {
    let mut tlb = Gather::new(mm);
    let mut partly = Vec::new();
    let ptl = mm.page_table_lock.lock();
    let mut take = |old: Pte, va: usize, size: usize| {
        // SAFETY: the entry's reference, now ours.
        let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
        if old.is_dirty() {
            folio.mark_dirty();
        }
        let large_anon = folio.order() > 0 && folio.is_anon();
        tlb.add(folio, va, size);
        large_anon
    };
    pgtable::for_each_pte_table(&mm, mm.pgd, start, end, &mut |va, found| {
        let (table, idx) = match found {
            Found::Table(table, idx) => (table, idx),
            Found::Block(level, slot) if va >= start && va + level.size() <= end => {
                take(pmd::zap_huge_pmd(mm, slot), va, level.size());
                return;
            }
            Found::Block(level, slot) => match pmd::split_huge_pmd(mm, slot, va) {
                Some(table) => (table, pte_indices(va, level, start, end)),
                None => return,
            },
        };
        let _pte = pte_lock(table);
        let whole = idx.len() == PTRS_PER_TABLE;
        let mut large_anon = false;
        get_and_clear_ptes(mm, table, va, idx, |i, old| {
            large_anon |= take(old, va + i * PAGE_SIZE, PAGE_SIZE)
        });
        if large_anon && !whole && partly.try_reserve(1).is_ok() {
            partly.push(va);
        }
    });
    drop(ptl);
    drop(tlb); // the flush, and the references, before the folios are looked at
    for va in partly {
        split::deferred_split_table(mm, va);
    }
}

/// The entries of the PTE table that maps the 2M (a `level` block) at `va`
/// which lie in `[start, end)`.
fn pte_indices(va: usize, level: Level, start: usize, end: usize) -> Range<usize> {
    let (first, last) = (start.max(va), end.min(va + level.size()));
    Level::Pte.index(first)..Level::Pte.index(last - 1) + 1
}

/// Unmaps `[start, end)` like [`zap_range`], but whole 2M stretches cheaply:
/// their PTE tables are only unhooked from the PMD (and the TLB flushed)
/// now; the per-page work of dropping what those tables map, and freeing
/// them, is left to the returned [`DetachedTables`], which munmap drops
/// after releasing `mmap_lock`. Nothing can reach an unhooked table, so the
/// work needs no lock, and the munmaps of two threads run side by side
/// (Linux does it all under `mmap_lock`; its faults cost far more than a
/// zap, ours do not). User memory only: the kernel's own mappings go with
/// `pgtable::unmap_kernel_range`. The 2M stretch at either end goes whole
/// too, its table with it, when no VMA of `vmas` (the VMAs that stay) meets
/// it (Linux: `free_pgtables` between the neighbours' `floor` and
/// `ceiling`), so a later mapping there starts with an empty PMD entry,
/// where a PMD block may go. PMD and PUD tables stay until the `Mm` goes:
/// `mm/pmd_cache.rs` relies on it.
pub fn unmap_range<'a>(
    mm: &'a Mm,
    start: usize,
    end: usize,
    vmas: &VmaTree<Arc<Vma>>,
) -> DetachedTables<'a> {
    let unused = |s: usize| !vmas.overlaps(s, s + PMD_SIZE);
    let (down, up) = (start & !(PMD_SIZE - 1), end & !(PMD_SIZE - 1));
    let first = match down != start && unused(down) {
        true => down,
        false => align_up(start, PMD_SIZE),
    };
    let last = match up != end && unused(up) {
        true => up + PMD_SIZE,
        false => up,
    };
    if first >= last {
        zap_range(mm, start, end);
        return DetachedTables {
            mm,
            tables: Vec::new(),
        };
    }
    zap_range(mm, start, first.max(start));
    zap_range(mm, last.min(end), end);
    let mut tables = Vec::new();
    let mut tlb = Gather::new(mm);
    {
        let _ptl = mm.page_table_lock.lock();
        let mut mem = mm;
        let mut va = first;
        while va < last {
            let Some(pmds) = pgtable::table_for(&mut mem, mm.pgd, va, Level::Pmd, Alloc::Never)
            else {
                // No PMD table: nothing is mapped in this 1G (the PUD
                // entry's reach). Stepping 2M at a time through an empty
                // terabyte took minutes (Linux: `pud_none_or_clear_bad`
                // skips it too).
                va = align_up(va + 1, PMD_SIZE * PTRS_PER_TABLE).min(last);
                continue;
            };
            let old = pmd::zap_huge_pmd(mm, &pmds[Level::Pmd.index(va)]);
            if old.is_table() {
                tables.push(old.addr());
                tlb.lo = tlb.lo.min(va);
                tlb.hi = tlb.hi.max(va + PMD_SIZE);
                tlb.pages += PMD_SIZE / PAGE_SIZE;
            } else if old.is_valid() {
                // SAFETY: the block's reference, now ours.
                let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
                tlb.add(folio, va, PMD_SIZE);
            }
            va += PMD_SIZE;
        }
    }
    drop(tlb); // the flush, before anything the tables map may go
    DetachedTables { mm, tables }
}

/// PTE tables unhooked by [`unmap_range`] and already flushed from the TLB:
/// dropping this drops every folio reference they hold and frees them.
pub struct DetachedTables<'a> {
    /// The address space the tables belonged to; their frames go back to it.
    mm: &'a Mm,
    /// The unhooked PTE tables' frames, each still holding its entries.
    tables: Vec<PhysAddr>,
}

impl Drop for DetachedTables<'_> {
    fn drop(&mut self) {
        let mut mem = self.mm;
        for &pa in &self.tables {
            // Entries of one folio in a row give their references back at once.
            let mut run: Option<(Folio, usize)> = None;
            // SAFETY: a table of this mm unhooked by `unmap_range`; only
            // this drop frees it.
            let table = unsafe { self.mm.table_at(pa) };
            // Most of a table is often empty: a 64K block of it is skipped
            // after one look at its 16 entries, read in pairs.
            let (blocks, _) = table.as_chunks::<CONT_PTES>();
            let used = blocks.iter().filter(|block| !cont_block::none(block));
            for slot in used.flatten() {
                let pte = Pte(slot.load(Ordering::Relaxed));
                if !pte.is_valid() {
                    continue;
                }
                // SAFETY: the entry's reference; nothing can reach the table.
                let folio = unsafe { Folio::from_mapped_pfn(pte.addr().pfn()) };
                if pte.is_dirty() {
                    folio.mark_dirty();
                }
                match &mut run {
                    Some((last, nr)) if last.is(&folio) => {
                        *nr += 1;
                        core::mem::forget(folio); // counted in nr
                    }
                    _ => {
                        if let Some((last, nr)) = run.replace((folio, 1)) {
                            last.unmapped_many(nr);
                        }
                    }
                }
            }
            if let Some((last, nr)) = run {
                last.unmapped_many(nr);
            }
            mem.free_table(pa);
        }
    }
}

/// Folio references taken from cleared entries, held until their TLB entries
/// are flushed (Linux: `struct mmu_gather`): the first ones on the stack, so
/// small zaps allocate nothing; past that on the heap (Linux allocates more
/// batch pages too), so a big munmap still flushes once, at the end. As in
/// Linux, a gather that is full (`GATHER_MAX`) or gets no memory for more
/// flushes early and starts again. Entries of one folio cleared in a row
/// share one slot.
struct Gather<'a> {
    /// The address space whose ASID the flush invalidates.
    mm: &'a Mm,
    /// The first `GATHER_SLOTS` runs of entries, on the stack: a folio and how
    /// many of its references (one per cleared entry) are held.
    folios: [Option<(Folio, usize)>; GATHER_SLOTS],
    /// Slots of `folios` in use.
    len: usize,
    /// Runs past the first `GATHER_SLOTS`, on the heap, at most `GATHER_MAX`.
    more: Vec<(Folio, usize)>,
    /// The VAs cleared: [lo, hi), and how many pages.
    lo: usize,
    /// End of the cleared range (exclusive); 0 while nothing is gathered.
    hi: usize,
    /// Pages cleared since the last flush; above `mmu::flush_range_limit`
    /// the flush takes the whole ASID.
    pages: usize,
}

/// Runs of entries a gather holds on the stack before it allocates
/// (Linux's `MMU_GATHER_BUNDLE`).
const GATHER_SLOTS: usize = 32;
/// Folios a gather holds on the heap at most, 64K of them (Linux:
/// `MAX_GATHER_BATCH_COUNT` batch pages).
const GATHER_MAX: usize = 4096;

impl<'a> Gather<'a> {
    /// An empty gather for `mm`: nothing to flush yet.
    fn new(mm: &'a Mm) -> Self {
        Gather {
            mm,
            folios: [const { None }; GATHER_SLOTS],
            len: 0,
            more: Vec::new(),
            lo: usize::MAX,
            hi: 0,
            pages: 0,
        }
    }

    /// One cleared entry mapping `size` bytes at `va`, and its reference.
    fn add(&mut self, folio: Folio, va: usize, size: usize) {
        self.lo = self.lo.min(va);
        self.hi = self.hi.max(va + size);
        self.pages += size / PAGE_SIZE;
        let last = match self.more.last_mut() {
            Some(last) => Some(last),
            None => self
                .len
                .checked_sub(1)
                .and_then(|i| self.folios[i].as_mut()),
        };
        if let Some((last, nr)) = last {
            if last.is(&folio) {
                *nr += 1;
                core::mem::forget(folio); // its reference is counted in nr
                return;
            }
        }
        if self.len < GATHER_SLOTS {
            self.folios[self.len] = Some((folio, 1));
            self.len += 1;
        } else if self.more.len() < GATHER_MAX && self.more.try_reserve(1).is_ok() {
            self.more.push((folio, 1));
        } else {
            // The flush forgets the range: this entry's was just counted.
            self.flush();
            self.add(folio, va, size);
        }
    }

    /// One TLB invalidation for everything cleared, page by page or the
    /// whole ASID when that is cheaper (Linux: `tlb_flush_mmu` via
    /// `flush_tlb_range`); then the references go.
    fn flush(&mut self) {
        if self.pages == 0 {
            return;
        }
        vmstat::TLB_RANGE_FLUSH.inc();
        let limit = mmu::flush_range_limit();
        if self.pages > limit || (self.hi - self.lo) / PAGE_SIZE > limit {
            mmu::flush_tlb_asid(self.mm.asid);
        } else {
            mmu::flush_tlb_user_range(self.mm.asid, self.lo, self.hi);
        }
        let stacked = self.folios[..self.len].iter_mut().filter_map(Option::take);
        for (folio, nr) in stacked.chain(self.more.drain(..)) {
            folio.unmapped_many(nr);
        }
        (self.len, self.lo, self.hi, self.pages) = (0, usize::MAX, 0, 0);
    }
}

impl Drop for Gather<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Copies the entries of `[start, end)` from `src` into `dst` at fork
/// (Linux: `copy_page_range`). With `cow`, a writable private page becomes
/// read-only in both, so the first write by either copies it.
pub fn copy_range(dst: &Mm, src: &Mm, start: usize, end: usize, cow: bool) -> bool {
    let mut ok = true;
    let mut wrprotected = false;
    let _ptl = src.page_table_lock.lock();
    let mut dst_mem = dst;
    // The child's PTE table for the 2M the last entry was in, as (its VA,
    // the table): entries come in address order, so the child's tables are
    // walked once per table, not once per entry (Linux: `copy_pte_range`
    // holds both tables for its whole 2M).
    let mut dst_table: Option<(usize, PhysAddr)> = None;
    // A PMD block reaching outside the range (a VMA split inside it) is
    // taken apart first, so the child gets only the range's pages.
    pgtable::for_each_pte_table(&src, src.pgd, start, end, &mut |va, found| {
        if let Found::Block(level, slot) = found {
            if va < start || va + level.size() > end {
                pmd::split_huge_pmd(src, slot, va);
            }
        }
    });
    pgtable::for_each_leaf_slot(&src, src.pgd, start, end, &mut |va, level, slot| {
        if level != Level::Pte {
            let pte = Pte(slot.load(Ordering::Acquire));
            if !pmd::is_anon_block(pte) {
                return; // a PMD-mapped shared file folio: the child refaults it
            }
            match pmd::copy_huge_pmd(dst, slot, va, cow) {
                Some(wp) => wrprotected |= wp,
                None => ok = false,
            }
            return;
        }
        let mut pte = Pte(slot.load(Ordering::Acquire));
        if cow && pte.prot().is_writable() {
            pte = pte.wrprotect();
            slot.store(pte.0, Ordering::Release);
            wrprotected = true;
        }
        let base = va & !(PMD_SIZE - 1);
        let table = match dst_table {
            Some((b, pa)) if b == base => Some(pa),
            _ => pgtable::table_pa_for(&mut dst_mem, dst.pgd, va, Level::Pte, Alloc::IfMissing),
        };
        let Some(table) = table else {
            ok = false;
            return;
        };
        dst_table = Some((base, table));
        let dst_slot = &dst_mem.table(table)[Level::Pte.index(va)];
        // SAFETY: the valid entry holds a reference; fork holds the
        // parent's mmap_lock and every VMA lock, so no fault or zap
        // changes it.
        let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
        if cow && folio.is_anon() {
            // Two processes map it now: a write must copy it (Linux:
            // `folio_try_dup_anon_rmap_ptes` clearing `PageAnonExclusive`).
            folio::set_page_anon_exclusive(pte.addr().pfn(), false);
        }
        dst_slot.store(pte.0, Ordering::Release);
        folio.into_mapping();
    });
    if wrprotected {
        mmu::flush_tlb_asid(src.asid);
    }
    mmu::publish_table_writes();
    ok
}

/// Takes apart the PMD block mapping `addr`, if one does and `addr` is
/// not 2M-aligned (Linux: `split_huge_pmd_address`): a VMA edge is about
/// to fall inside it.
pub fn split_huge_pmd_address(mm: &Mm, addr: usize) {
    if addr.is_multiple_of(PMD_SIZE) {
        return;
    }
    let _ptl = mm.page_table_lock.lock();
    let mut mem = mm;
    if let Some(pmds) = pgtable::table_for(&mut mem, mm.pgd, addr, Level::Pmd, Alloc::Never) {
        pmd::split_huge_pmd(mm, &pmds[Level::Pmd.index(addr)], addr & !(PMD_SIZE - 1));
    }
}

/// Frees every page-table page of `mm` (all leaves already zapped), and
/// the tables kept for PMD blocks.
pub fn free_pgtables(mm: &Mm) {
    pmd::free_deposited(mm);
    pgtable::free_tables(&mm, mm.pgd, &mut |pa| {
        frame::free_pages(pa, 0).expect("page table freed twice");
        vmstat::NR_PAGETABLE.dec();
    });
    frame::free_pages(mm.pgd, 0).expect("pgd freed twice");
    vmstat::NR_PAGETABLE.dec();
}

/// Rewrites every present entry of `[start, end)` with `f(old)` (Linux:
/// `change_protection`): each is cleared and flushed before the new one is
/// written, as a permission change on a live entry requires. Whole
/// contiguous blocks and PMD blocks keep their size; a contiguous block the
/// range cuts is unfolded, a PMD block it cuts is taken apart
/// (`pmd::split_huge_pmd`: an anonymous one into PTEs, of which those in
/// the range change; a shared file one is unmapped, its pages refaulting
/// under the new VMAs).
pub fn change_protection(mm: &Mm, start: usize, end: usize, mut f: impl FnMut(Pte) -> Pte) {
    let _ptl = mm.page_table_lock.lock();
    pgtable::for_each_pte_table(&mm, mm.pgd, start, end, &mut |va, found| {
        let (table, idx) = match found {
            Found::Table(table, idx) => (table, idx),
            Found::Block(level, slot) if va >= start && va + level.size() <= end => {
                let old = Pte(slot.swap(0, Ordering::AcqRel));
                mmu::flush_tlb_asid(mm.asid);
                let new = f(old);
                slot.store(Pte::block(new.addr(), new.prot()).0, Ordering::Release);
                return;
            }
            Found::Block(level, slot) => match pmd::split_huge_pmd(mm, slot, va) {
                Some(table) => (table, pte_indices(va, level, start, end)),
                None => return,
            },
        };
        let _pte = pte_lock(table);
        modify_prot_ptes(mm, table, va, idx, &mut f);
    });
    mmu::publish_table_writes();
}

/// Moves the entries of `[old, old + len)` to `[new, new + len)` (Linux:
/// `move_page_tables`, for mremap). The moved entries lose the contiguous
/// bit (the new VA need not be 64K-aligned like the old). An anonymous PMD
/// block the range covers whole moves whole when its new place is
/// 2M-aligned and empty (`pmd::move_huge_pmd`); otherwise it is taken
/// apart and its PTEs move. A shared file block is unmapped and refaults
/// at the new place. False if a page table could not be allocated: what
/// moved stays moved, the rest is unmapped.
pub fn move_range(mm: &Mm, old: usize, new: usize, len: usize) -> bool {
    let mut entries = Vec::new();
    {
        let _ptl = mm.page_table_lock.lock();
        pgtable::for_each_pte_table(&mm, mm.pgd, old, old + len, &mut |va, found| {
            let (table, idx) = match found {
                Found::Table(table, idx) => (table, idx),
                Found::Block(level, slot) => {
                    let to = va.wrapping_sub(old).wrapping_add(new);
                    let whole = va >= old && va + level.size() <= old + len;
                    let anon = pmd::is_anon_block(Pte(slot.load(Ordering::Acquire)));
                    if whole
                        && anon
                        && to.is_multiple_of(PMD_SIZE)
                        && pmd::move_huge_pmd(mm, slot, to)
                    {
                        return;
                    }
                    match pmd::split_huge_pmd(mm, slot, va) {
                        Some(table) => (table, pte_indices(va, level, old, old + len)),
                        None => return,
                    }
                }
            };
            let _pte = pte_lock(table);
            get_and_clear_ptes(mm, table, va, idx, |i, pte| {
                entries.push((va + i * PAGE_SIZE, pte.with_cont(false)));
            });
        });
    }
    mmu::flush_tlb_asid(mm.asid);
    let _ptl = mm.page_table_lock.lock();
    let mut mem = mm;
    let mut ok = true;
    for (va, pte) in entries {
        let to = va - old + new;
        let table = if ok {
            pgtable::table_for(&mut mem, mm.pgd, to, Level::Pte, Alloc::IfMissing)
        } else {
            None
        };
        match table {
            Some(table) => {
                let _pte = pte_lock(table);
                table[Level::Pte.index(to)].store(pte.0, Ordering::Release);
            }
            None => {
                ok = false;
                // SAFETY: the entry's reference, which nothing maps now.
                let folio = unsafe { Folio::from_mapped_pfn(pte.addr().pfn()) };
                folio.unmapped();
            }
        }
    }
    mmu::publish_table_writes();
    ok
}

/// The byte mapped at `va` and a new reference on its folio (Linux:
/// `follow_page`, `folio_walk_start`), read under the locks that keep the
/// entry: `page_table_lock` for blocks, the PTE table's own for pages, as
/// faults change those under it alone. None if nothing is mapped.
pub fn follow_page(mm: &Mm, va: usize) -> Option<(PhysAddr, Folio)> {
    let _ptl = mm.page_table_lock.lock();
    let mut mem = mm;
    let table = pgtable::table_for(&mut mem, mm.pgd, va, Level::Pte, Alloc::Never);
    let _pte = table.map(pte_lock);
    let t = pgtable::translate(&mm, mm.pgd, va)?;
    // SAFETY: a valid entry holds a reference on its folio, and the locks
    // held keep the entry.
    Some((t.pa, unsafe { Folio::from_pfn(t.pa.pfn()) }))
}

/// Is a page mapped at `va`? (mincore.)
pub fn is_mapped(mm: &Mm, va: usize) -> bool {
    let _ptl = mm.page_table_lock.lock();
    pgtable::translate(&mm, mm.pgd, va).is_some()
}
