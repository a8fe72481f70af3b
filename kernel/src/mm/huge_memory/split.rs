//! Splitting large anonymous folios into smaller ones (Linux:
//! `split_huge_page_to_list_to_order` and `__split_huge_page` in
//! `mm/huge_memory.c`): debugfs's `split_huge_pages` asks for it over a
//! range of a process (`split_huge_pages_pid`), and a large folio a zap
//! left partly mapped is split when memory runs short, its unmapped pages
//! freed (the deferred split: `deferred_split_folio`,
//! `deferred_split_scan`).
//!
//! Where we simplify: faultline keeps no reverse map, so a folio is split
//! only when every entry mapping it is found where we look: anywhere in
//! the one address space for `split_huge_pages`, in the one PTE table the
//! zap left it in for the deferred split. One also mapped elsewhere (after
//! fork) stays whole, as does one with references from outside the page
//! tables (Linux's `can_split_folio`). The deferred queue holds page
//! tables (their mm and VA), since a folio has no way back to what maps
//! it. Page-cache folios are not split.

use alloc::sync::Weak;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use crate::arch::desc::Pte;
use crate::arch::mmu;
use crate::arch::pgtable::prepare_split;
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE, PTRS_PER_TABLE, USER_TOP};
use crate::mm::folio::{self, Folio};
use crate::mm::huge_memory::order::PMD_ORDER;
use crate::mm::huge_memory::pmd;
use crate::mm::mm_struct::{Mm, MmMap};
use crate::mm::pgtable::{self, Alloc, Found, Level, PageTable};
use crate::mm::ptlock::pte_lock;
use crate::mm::vma::VM_LOCKED;
use crate::mm::vmstat;
use crate::sync::SpinLock;

/// One PTE mapping a page of the folio being split.
struct Mapping<'a> {
    /// The PTE table holding it.
    table: &'a PageTable,
    /// The VA the table's entry 0 maps.
    table_va: usize,
    /// Its index in the table.
    idx: usize,
    /// Which page of the folio it maps.
    page: usize,
    /// Whether a zero-filled page may become the zero page here: a private
    /// anonymous VMA, not locked (Linux: `try_to_map_unused_to_zeropage`'s
    /// checks).
    zero_ok: bool,
}

/// Splits `folio` into folios of 2^`new_order` pages, given every PTE
/// mapping it (`maps`), held steady by the caller's locks, and no PMD block
/// (Linux: `split_huge_page_to_list_to_order` once the folio is unmapped).
/// Refused, false, if anything else holds a reference or maps it (Linux:
/// `can_split_folio`). Contiguous blocks that would span new folios are
/// unfolded first, as Linux's new folios are mapped one PTE at a time.
fn split_mapped(mm: &Mm, folio: Folio, new_order: u8, maps: &[Mapping]) -> bool {
    let (mapcount, pmd_sized) = (folio.mapcount(), folio.order() == PMD_ORDER);
    if maps.len() != mapcount as usize || folio.refcount() != mapcount + 1 {
        if pmd_sized {
            vmstat::THP_SPLIT_PAGE_FAILED.inc();
        }
        return false;
    }
    for m in maps {
        prepare_split(mm, m.table, m.table_va, m.idx, new_order);
    }
    let mut counts = [0u16; PTRS_PER_TABLE];
    for m in maps {
        counts[m.page] += 1;
    }
    if pmd_sized {
        vmstat::THP_SPLIT_PAGE.inc();
    }
    folio.split(new_order, |page| u32::from(counts[page]));
    true
}

/// Does the page at `pa` hold nothing but zeros (Linux: `pages_identical`
/// with the zero page)?
fn page_is_zero(pa: PhysAddr) -> bool {
    // SAFETY: a mapped page, kept by its entry while the caller's locks
    // hold; it is only read.
    let words = unsafe { &*(phys_to_virt(pa) as *const [u64; PAGE_SIZE / 8]) };
    words.iter().all(|&w| w == 0)
}

/// Maps the zero page, read-only, where `m` maps a page of a folio just
/// split to single pages that holds only zeros, and frees that page
/// (Linux: `try_to_map_unused_to_zeropage`, as the split remaps the folio):
/// the memory goes back, and reads still find zeros.
fn map_zero_page(mm: &Mm, m: &Mapping) {
    let slot = &m.table[m.idx];
    let old = Pte(slot.load(Ordering::Acquire));
    if !m.zero_ok || !page_is_zero(old.addr()) {
        return;
    }
    let Some(zero) = folio::zero_folio() else {
        return;
    };
    let new = Pte::page(zero.phys(), old.prot()).wrprotect();
    slot.store(0, Ordering::Release);
    mmu::flush_tlb_user_page(mm.asid, m.table_va + m.idx * PAGE_SIZE);
    slot.store(new.0, Ordering::Release);
    zero.into_mapping();
    // SAFETY: the old entry's reference, now ours, to a page that is its
    // own folio since the split.
    let page = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
    page.unmapped();
}

/// debugfs's `split_huge_pages` for one process (Linux:
/// `split_huge_pages_pid`): splits each large anonymous folio mapped in
/// `[start, end)` of `mm`, up to the first address no VMA covers, to
/// `new_order`, taking apart the PMD blocks that map it first; one that
/// cannot be split is left as it is, as in Linux. Split to single pages, a
/// page of zeros becomes the zero page. Where Linux holds `mmap_lock` for
/// reading, we write-lock every VMA as well, so no fault changes an entry
/// meanwhile (the page-table walks here take no PTE locks).
pub fn split_huge_pages_pid(mm: &Mm, start: usize, end: usize, new_order: u8) {
    split_huge_pages_in(
        mm,
        start & !(PAGE_SIZE - 1),
        end.min(USER_TOP),
        new_order,
        true,
    );
}

/// `split_huge_pages_pid` over every VMA of `mm`, to single pages: what
/// writing `1` asks for every process (Linux: `split_huge_pages_all`).
pub fn split_huge_pages_all(mm: &Mm) {
    split_huge_pages_in(mm, 0, USER_TOP, 0, false);
}

/// Splits the large anonymous folios mapped in `[start, end)` of `mm` to
/// `new_order`, stopping at the first hole with `stop_at_hole`. The
/// folios are found first, by a walk that visits only the page tables
/// there are, then split one by one.
fn split_huge_pages_in(mm: &Mm, start: usize, end: usize, new_order: u8, stop_at_hole: bool) {
    let map = mm.mmap_write_lock();
    map.vma_start_write_all();
    let _ptl = mm.page_table_lock.lock();
    let mut folios: Vec<Folio> = Vec::new();
    let mut found = |pte: Pte| {
        // SAFETY: a valid entry holds a reference, kept under the lock.
        let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
        let seen = |f: &Folio| f.is(&folio);
        if !folio.is_anon()
            || folio.order() <= new_order
            || folios.last().is_some_and(seen)
            || folios.iter().any(seen)
        {
            return;
        }
        if folios.try_reserve(1).is_ok() {
            folios.push(folio);
        }
    };
    let mut at = start;
    for (vstart, vend, _) in map.vmas.range(start, end) {
        if stop_at_hole && vstart > at {
            break;
        }
        at = vend;
        let (from, to) = (start.max(vstart), end.min(vend));
        pgtable::for_each_pte_table(&mm, mm.pgd, from, to, &mut |_, entries| match entries {
            Found::Table(table, idx) => {
                for pte in idx.map(|i| Pte(table[i].load(Ordering::Acquire))) {
                    if pte.is_valid() {
                        found(pte);
                    }
                }
            }
            Found::Block(_, slot) => found(Pte(slot.load(Ordering::Acquire))),
        });
    }
    for folio in folios {
        split_anon_folio(mm, &map, folio, new_order);
    }
}

/// Splits `folio` to `new_order` wherever `map`'s VMAs map it in `mm`: its
/// PMD blocks taken apart, then its PTEs found (see `split_huge_pages_pid`
/// for the locks).
fn split_anon_folio(mm: &Mm, map: &MmMap, folio: Folio, new_order: u8) {
    let pfns = folio.pfn()..folio.pfn() + folio.nr_pages();
    for (start, end, _) in map.vmas.iter() {
        pgtable::for_each_pte_table(&mm, mm.pgd, start, end, &mut |va, found| {
            if let Found::Block(_, slot) = found {
                if Pte(slot.load(Ordering::Acquire)).addr().pfn() == pfns.start {
                    pmd::split_huge_pmd(mm, slot, va);
                }
            }
        });
    }
    let mut maps = Vec::new();
    let mut out_of_memory = false;
    for (start, end, vma) in map.vmas.iter() {
        let zero_ok = vma.file.is_none() && vma.flags & VM_LOCKED == 0;
        pgtable::for_each_pte_table(&mm, mm.pgd, start, end, &mut |va, found| {
            let Found::Table(table, idx) = found else {
                return;
            };
            for i in idx {
                let pte = Pte(table[i].load(Ordering::Acquire));
                if !pte.is_valid() || !pfns.contains(&pte.addr().pfn()) {
                    continue;
                }
                if maps.try_reserve(1).is_err() {
                    out_of_memory = true;
                    return;
                }
                maps.push(Mapping {
                    table,
                    table_va: va,
                    idx: i,
                    page: pte.addr().pfn() - pfns.start,
                    zero_ok,
                });
            }
        });
    }
    if out_of_memory || !split_mapped(mm, folio, new_order, &maps) {
        return;
    }
    if new_order == 0 {
        for m in &maps {
            map_zero_page(mm, m);
        }
    }
}

/// Page tables a zap left mapping part of a large anonymous folio: their
/// mm, and the VA their entry 0 maps (Linux: `deferred_split_queue`, which
/// lists the folios).
static DEFERRED: SpinLock<Vec<(Weak<Mm>, usize)>> = SpinLock::new(Vec::new());

/// Queues the PTE table of `mm` mapping `table_va`, which a zap left
/// mapping part of a large anonymous folio, for `deferred_split_scan`
/// (Linux: `deferred_split_folio`). Not queued if memory for the queue is
/// short: the folio then stays whole until it is unmapped.
pub fn deferred_split_table(mm: &Mm, table_va: usize) {
    let me: *const Mm = mm;
    let mut queue = DEFERRED.lock();
    let queued = |(w, va): &(Weak<Mm>, usize)| *va == table_va && core::ptr::eq(w.as_ptr(), me);
    if queue.iter().any(queued) || queue.try_reserve(1).is_err() {
        return;
    }
    queue.push((mm.weak(), table_va));
    vmstat::THP_DEFERRED_SPLIT_PAGE.inc();
}

/// Drops the queue's entries for `mm`, which is going away.
pub fn forget_mm(mm: *const Mm) {
    let gone: Vec<_> = {
        let mut queue = DEFERRED.lock();
        let (gone, kept) = core::mem::take(&mut *queue)
            .into_iter()
            .partition(|(w, _)| core::ptr::eq(w.as_ptr(), mm));
        *queue = kept;
        gone
    };
    drop(gone); // the weak references, outside the lock
}

/// Splits, to single pages, the partly mapped large anonymous folios in
/// every queued table, freeing their unmapped pages, and empties the queue
/// (Linux: `deferred_split_scan`, the shrinker reclaim runs when memory is
/// short; here the fault path calls it before giving up on a 2M folio, or
/// before the OOM killer). Returns how many pages went back.
pub fn deferred_split_scan() -> usize {
    let queue = core::mem::take(&mut *DEFERRED.lock());
    let mut freed = 0;
    for (mm, table_va) in queue {
        if let Some(mm) = mm.upgrade() {
            freed += split_partly_mapped(&mm, table_va);
        }
    }
    freed
}

/// `deferred_split_scan` for the PTE table of `mm` mapping `table_va`:
/// under `page_table_lock` and the table's lock, which keep its entries,
/// each large anonymous folio it maps in part, and nowhere else, is split.
fn split_partly_mapped(mm: &Mm, table_va: usize) -> usize {
    let mut maps = Vec::new();
    if maps.try_reserve(PTRS_PER_TABLE).is_err() {
        return 0;
    }
    let _ptl = mm.page_table_lock.lock();
    let mut mem = mm;
    let Some(table) = pgtable::table_for(&mut mem, mm.pgd, table_va, Level::Pte, Alloc::Never)
    else {
        return 0;
    };
    let _pte = pte_lock(table);
    let mut freed = 0;
    let mut last_head = None;
    for i in 0..PTRS_PER_TABLE {
        let pte = Pte(table[i].load(Ordering::Acquire));
        if !pte.is_valid() {
            continue;
        }
        // SAFETY: a valid entry holds a reference, kept under the locks.
        let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
        if folio.order() == 0 || !folio.is_anon() || last_head == Some(folio.pfn()) {
            continue;
        }
        last_head = Some(folio.pfn());
        let pfns = folio.pfn()..folio.pfn() + folio.nr_pages();
        maps.clear();
        for (idx, slot) in table.iter().enumerate() {
            let e = Pte(slot.load(Ordering::Acquire));
            if e.is_valid() && pfns.contains(&e.addr().pfn()) {
                let page = e.addr().pfn() - pfns.start;
                let zero_ok = false; // the VMA is not known here
                maps.push(Mapping {
                    table,
                    table_va,
                    idx,
                    page,
                    zero_ok,
                });
            }
        }
        let unmapped = folio.nr_pages() - maps.len().min(folio.nr_pages());
        if unmapped > 0 && split_mapped(mm, folio, 0, &maps) {
            freed += unmapped;
        }
    }
    freed
}
