//! Anonymous memory mapped by PMD blocks (Linux: the PMD half of
//! `mm/huge_memory.c`): a 2M anonymous folio mapped whole by one level-2
//! block, copied write-protected at fork, moved whole by mremap, and taken
//! apart into a table of 512 PTEs mapping the same pages, every byte kept,
//! wherever an operation covers only part of it.
//!
//! As in Linux, each anonymous block has a PTE table put aside for it when
//! it is mapped (`deposit`), so taking it apart never needs memory. Every
//! function here runs under the mm's `page_table_lock`, which guards the
//! PMD level; a fault that finds a block being changed (an invalid, not
//! none, entry) lets the access retry.

use core::mem::ManuallyDrop;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::desc::{PgProt, Pte};
use crate::arch::mmu;
use crate::arch::pgtable::set_ptes;
use crate::mm::addr::{PhysAddr, PTRS_PER_TABLE};
use crate::mm::folio::Folio;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Alloc, Level, PageTable, PgtableMem};
use crate::mm::vmstat;

/// Keeps `table`, a zeroed PTE-table page of `mm`, for the split of one
/// anonymous block (Linux: `pgtable_trans_huge_deposit`). The tables kept
/// are all alike, so one list per mm serves every block (Linux's
/// `mm->pmd_huge_pte`, without split PMD locks).
pub fn deposit(mm: &Mm, table: PhysAddr) {
    let next = mm.pmd_huge_pte.load(Ordering::Relaxed);
    // SAFETY: a table page of this mm that no entry points to.
    let kept = unsafe { mm.table_at(table) };
    kept[0].store(next as u64, Ordering::Relaxed);
    mm.pmd_huge_pte.store(table.0 as usize, Ordering::Relaxed);
}

/// Takes back a table `deposit` kept, zeroed again (Linux:
/// `pgtable_trans_huge_withdraw`); None once none is left.
pub fn withdraw(mm: &Mm) -> Option<PhysAddr> {
    let head = mm.pmd_huge_pte.load(Ordering::Relaxed);
    if head == 0 {
        return None;
    }
    let table = PhysAddr(head as u64);
    // SAFETY: a kept table page of this mm that no entry points to.
    let next = unsafe { mm.table_at(table) }[0].swap(0, Ordering::Relaxed);
    mm.pmd_huge_pte.store(next as usize, Ordering::Relaxed);
    Some(table)
}

/// Maps the anonymous PMD-sized `folio` with one block in `pmd`, the
/// level-2 entry of a 2M-aligned VA, and keeps `table` for its split
/// (Linux: `__do_huge_pmd_anonymous_page`), unless a fault elsewhere in
/// the 2M filled the entry first: then both go back. Takes
/// `page_table_lock` itself. `prot` is the VMA's for its own copy: dirty.
pub fn set_huge_pmd(mm: &Mm, pmd: &AtomicU64, folio: Folio, prot: PgProt, table: PhysAddr) {
    let ptl = mm.page_table_lock.lock();
    let block = Pte::block(folio.phys(), prot).0;
    if pmd
        .compare_exchange(0, block, Ordering::Release, Ordering::Relaxed)
        .is_err()
    {
        drop(ptl);
        let mut mem = mm;
        mem.free_table(table);
        return;
    }
    mmu::publish_table_writes();
    deposit(mm, table);
    if folio.add_pmd_mapping() {
        vmstat::NR_ANON_THPS.inc();
    }
    folio.into_mapping();
}

/// Is the block `pte` an anonymous folio's? Read under `page_table_lock`.
pub fn is_anon_block(pte: Pte) -> bool {
    // SAFETY: the valid block holds a reference, kept while the lock is
    // held; this one is only borrowed, never dropped.
    let folio = ManuallyDrop::new(unsafe { Folio::from_mapped_pfn(pte.addr().pfn()) });
    folio.is_anon()
}

/// Clears the PMD entry in `slot` and returns it: a block's folio
/// reference is now the caller's to drop once the TLB is flushed, and an
/// anonymous block's kept table goes back (Linux: `zap_huge_pmd`); a table
/// is the caller's to free.
pub fn zap_huge_pmd(mm: &Mm, slot: &AtomicU64) -> Pte {
    let old = Pte(slot.swap(0, Ordering::AcqRel));
    if old.is_valid() && !old.is_table() && is_anon_block(old) {
        forget_anon_block(mm, old);
    }
    old
}

/// An anonymous block `old` no longer maps its folio: its kept table goes
/// back and its folio counts one PMD mapping less.
fn forget_anon_block(mm: &Mm, old: Pte) {
    if let Some(table) = withdraw(mm) {
        let mut mem = mm;
        mem.free_table(table);
    }
    // SAFETY: as in `is_anon_block`: borrowed, never dropped.
    let folio = ManuallyDrop::new(unsafe { Folio::from_mapped_pfn(old.addr().pfn()) });
    if folio.remove_pmd_mapping() {
        vmstat::NR_ANON_THPS.dec();
    }
}

/// Takes apart the PMD block in `slot`, which maps the 2M at `haddr`
/// (Linux: `__split_huge_pmd_locked`): an anonymous block becomes its kept
/// PTE table, mapping the same 512 pages with the same attributes (in
/// contiguous blocks where those may fold), and that table is returned; a
/// shared file block is only unmapped, its pages refault from the page
/// cache, and None is returned, as it is if `slot` holds no block. Break
/// before make: the entry is invalid, never none, while the TLB is
/// flushed, so no fault fills it meanwhile.
pub fn split_huge_pmd<'m>(mm: &'m Mm, slot: &AtomicU64, haddr: usize) -> Option<&'m PageTable> {
    let old = Pte(slot.load(Ordering::Acquire));
    if !old.is_valid() || old.is_table() {
        return None;
    }
    vmstat::THP_SPLIT_PMD.inc();
    if !is_anon_block(old) {
        slot.store(0, Ordering::Release);
        mmu::flush_tlb_user_page(mm.asid, haddr);
        // SAFETY: the cleared block's reference, now ours.
        let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
        if old.is_dirty() {
            folio.mark_dirty();
        }
        folio.unmapped();
        return None;
    }
    let table_pa = withdraw(mm).expect("an anonymous PMD block has its table kept");
    // SAFETY: a kept table page of this mm, about to be hooked in.
    let table = unsafe { mm.table_at(table_pa) };
    // SAFETY: the block's reference, ours once it is gone from the TLB.
    let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
    // Each of the 512 entries takes a reference and a mapping of its own.
    let pte = Pte::page(folio.phys(), old.prot());
    set_ptes(mm, table, haddr, pte, PTRS_PER_TABLE, &folio);
    folio.add_mappings(PTRS_PER_TABLE);
    slot.store(old.invalid().0, Ordering::Release);
    mmu::flush_tlb_user_page(mm.asid, haddr);
    if folio.remove_pmd_mapping() {
        vmstat::NR_ANON_THPS.dec();
    }
    folio.unmapped();
    drop(folio); // the block's reference
    slot.store(Pte::table(table_pa).0, Ordering::Release);
    mmu::publish_table_writes();
    Some(table)
}

/// Rewrites the block in `slot`, mapping the 2M at `haddr`, as `new`
/// (Linux: `pmdp_set_access_flags` after `pmdp_invalidate`): invalid,
/// flushed, then written.
pub fn set_pmd_at(mm: &Mm, slot: &AtomicU64, haddr: usize, new: Pte) {
    let old = Pte(slot.load(Ordering::Acquire));
    slot.store(old.invalid().0, Ordering::Release);
    mmu::flush_tlb_user_page(mm.asid, haddr);
    slot.store(new.0, Ordering::Release);
    mmu::publish_table_writes();
}

/// Copies the anonymous block in `slot` of the parent (under its
/// `page_table_lock`), which maps `va`, into `dst` at fork (Linux:
/// `copy_huge_pmd`): with `cow` it becomes read-only in both and its pages
/// neither's alone, so the first write by either takes it apart and copies
/// a page. The child keeps a table of its own for the split. Returns
/// whether the parent's entry was write-protected (its TLB needs a flush),
/// or None if `dst` got no memory for its tables.
pub fn copy_huge_pmd(dst: &Mm, slot: &AtomicU64, va: usize, cow: bool) -> Option<bool> {
    let mut mem = dst;
    let table = mem.alloc_table()?;
    let Some(pmds) = pgtable::table_for(&mut mem, dst.pgd, va, Level::Pmd, Alloc::IfMissing) else {
        mem.free_table(table);
        return None;
    };
    let mut pte = Pte(slot.load(Ordering::Acquire));
    let wrprotect = cow && pte.prot().is_writable();
    if wrprotect {
        pte = pte.wrprotect();
        slot.store(pte.0, Ordering::Release);
    }
    // SAFETY: the parent's block holds a reference, kept under its lock;
    // this new one is the child's entry's.
    let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
    if cow {
        folio.set_anon_exclusive(false);
    }
    {
        let _ptl = dst.page_table_lock.lock();
        deposit(dst, table);
        pmds[Level::Pmd.index(va)].store(pte.0, Ordering::Release);
    }
    folio.add_pmd_mapping();
    folio.into_mapping();
    Some(wrprotect)
}

/// Moves the anonymous block in `slot` to `new_addr`, 2M-aligned, if the
/// PMD entry there is empty (Linux: `move_huge_pmd`); false, the block left
/// in place, if it is not or no PMD table can be had there. The old VA's
/// TLB entries are the caller's to flush.
pub fn move_huge_pmd(mm: &Mm, slot: &AtomicU64, new_addr: usize) -> bool {
    let mut mem = mm;
    let Some(pmds) = pgtable::table_for(&mut mem, mm.pgd, new_addr, Level::Pmd, Alloc::IfMissing)
    else {
        return false;
    };
    let dst = &pmds[Level::Pmd.index(new_addr)];
    if dst.load(Ordering::Acquire) != 0 {
        return false;
    }
    dst.store(slot.swap(0, Ordering::AcqRel), Ordering::Release);
    true
}

/// Frees the tables still kept for `mm`, which is going away (all its
/// blocks are gone, so none should be).
pub fn free_deposited(mm: &Mm) {
    let mut mem = mm;
    while let Some(table) = withdraw(mm) {
        mem.free_table(table);
    }
}
