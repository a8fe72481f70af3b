//! The PTE accessors generic mm calls (Linux: `arch/arm64/include/asm/pgtable.h`
//! `set_ptes`, `ptep_get`, `ptep_clear_flush`, `get_and_clear_full_ptes`,
//! which route through `arch/arm64/mm/contpte.c`). Generic mm never sees
//! the contiguous bit: these fold and unfold blocks as they write
//! (`contpte.rs`), flush the address space's ASID and count the folds.
//!
//! Where we simplify: the caller hands over the PTE table and the folio
//! (Linux finds the table from `ptep` and the folio from the page), and
//! range operations take table indices.

use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::contpte::{self, ContpteOps};
use super::desc::Pte;
use super::mmu;
use crate::mm::addr::{PAGE_SIZE, PMD_SIZE};
use crate::mm::folio::Folio;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{Level, PageTable};
use crate::mm::vmstat;

pub use super::contpte::CONT_PTE_SIZE;

/// May user mappings fold into contiguous-bit blocks? (`contpte=off` on the
/// command line, `/sys/kernel/mm/contpte/enabled`.) Turning it off stops
/// new folds; blocks already folded stay until they change.
pub static CONTPTE_ENABLED: AtomicBool = AtomicBool::new(true);

/// The contpte logic's view of one PTE table of `mm`, whose entry 0 maps
/// `table_va`.
struct TableOps<'a> {
    /// The address space the table belongs to: its ASID for TLB flushes.
    mm: &'a Mm,
    /// The user VA entry 0 of the table maps: 2M-aligned.
    table_va: usize,
}

impl<'a> TableOps<'a> {
    /// The view of the PTE table that maps `va` (any address in its 2M).
    fn new(mm: &'a Mm, va: usize) -> Self {
        TableOps {
            mm,
            table_va: va & !(PMD_SIZE - 1),
        }
    }
}

impl ContpteOps for TableOps<'_> {
    fn enabled(&self) -> bool {
        CONTPTE_ENABLED.load(Ordering::Relaxed)
    }
    fn flush(&mut self, idx: Range<usize>) {
        let va = |i| self.table_va + i * PAGE_SIZE;
        mmu::flush_tlb_user_range(self.mm.asid, va(idx.start), va(idx.end));
    }
    fn converted(&mut self, fold: bool) {
        if fold {
            vmstat::CONTPTE_FOLD.inc();
        } else {
            vmstat::CONTPTE_UNFOLD.inc();
        }
    }
}

/// Entry `idx` of `table` as software should see it: a block's young and
/// dirty bits gathered over its 16 entries (Linux: `ptep_get`).
#[inline]
pub fn ptep_get(table: &PageTable, idx: usize) -> Pte {
    contpte::ptep_get(table, idx)
}

/// Writes `nr` entries from `addr`, mapping consecutive pages of `folio`
/// from `pte`'s, onto entries that were none (Linux: `set_ptes`). Whole
/// aligned 64K blocks are written folded; a single entry completing a
/// block folds it. No TLB flush (the entries were none); the caller
/// publishes the writes once it has made them all.
#[inline(always)]
pub fn set_ptes(mm: &Mm, table: &PageTable, addr: usize, pte: Pte, nr: usize, folio: &Folio) {
    let whole = || folio.phys()..folio.phys().add(folio.size());
    let idx = Level::Pte.index(addr);
    contpte::set_ptes(table, idx, pte, nr, whole, &mut TableOps::new(mm, addr));
}

/// Marks the entry for `addr` young, and dirty for a write, with the rest
/// of its block (Linux: `ptep_set_access_flags`): what a fault on a
/// present entry does, such as a write to a clean one where the MMU does
/// not set the dirty state itself. After a write, a stale read-only TLB
/// entry for the page is dropped, even if another CPU's MMU made the entry
/// dirty first: else the write would fault again.
pub fn ptep_set_access_flags(mm: &Mm, table: &PageTable, addr: usize, dirty: bool) {
    contpte::set_access_flags(table, Level::Pte.index(addr), dirty);
    if dirty {
        mmu::flush_tlb_user_page(mm.asid, addr);
    }
}

/// [`ptep_set_access_flags`] for the PMD block `pmd` mapping the 2M at
/// `haddr` (Linux: `pmdp_set_access_flags`).
pub fn pmdp_set_access_flags(mm: &Mm, pmd: &AtomicU64, haddr: usize, dirty: bool) {
    contpte::set_access_flags_one(pmd, dirty);
    if dirty {
        mmu::flush_tlb_user_page(mm.asid, haddr);
    }
}

/// Clears the entry for `addr` and flushes it from the TLB, unfolding its
/// block first so the entry can change alone (Linux: `ptep_clear_flush`).
/// Returns the old entry.
pub fn ptep_clear_flush(mm: &Mm, table: &PageTable, addr: usize) -> Pte {
    let idx = Level::Pte.index(addr);
    contpte::unfold(table, idx, &mut TableOps::new(mm, addr));
    let old = Pte(table[idx].swap(0, Ordering::AcqRel));
    mmu::flush_tlb_user_page(mm.asid, addr);
    old
}

/// Clears entries `idx` of the table mapping `va`, handing each valid one
/// to `f(idx, old)` with its block's young and dirty bits (Linux:
/// `get_and_clear_full_ptes`). The TLB flush is the caller's.
pub fn get_and_clear_ptes(
    mm: &Mm,
    table: &PageTable,
    va: usize,
    idx: Range<usize>,
    f: impl FnMut(usize, Pte),
) {
    contpte::clear_range(table, idx, &mut TableOps::new(mm, va), f);
}

/// Replaces each valid entry `idx` of the table mapping `va` with
/// `f(old)`, break-before-make (Linux: `ptep_modify_prot_start` and
/// `_commit`, as `change_pte_range` runs them).
pub fn modify_prot_ptes(
    mm: &Mm,
    table: &PageTable,
    va: usize,
    idx: Range<usize>,
    f: &mut impl FnMut(Pte) -> Pte,
) {
    contpte::change_range(table, idx, &mut TableOps::new(mm, va), f);
}

/// Before a folio mapped at entry `idx` of the table mapping `table_va`
/// splits into folios of `new_order`: unfolds the entry's block if the
/// new folios are smaller than a block, so each maps with plain PTEs as
/// Linux's remapped ones do (Linux: `contpte_try_unfold`, from the
/// `set_pte_at` of each remapped page).
pub fn prepare_split(mm: &Mm, table: &PageTable, table_va: usize, idx: usize, new_order: u8) {
    if (1usize << new_order) < contpte::CONT_PTES {
        contpte::unfold(table, idx, &mut TableOps::new(mm, table_va));
    }
}
