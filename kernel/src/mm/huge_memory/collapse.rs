//! `MADV_COLLAPSE` for anonymous memory (Linux: `madvise_collapse`,
//! `hpage_collapse_scan_pmd` and `collapse_huge_page` in
//! `mm/khugepaged.c`): each 2M-aligned 2M of the range that one anonymous
//! VMA covers and a table of PTEs maps is copied into a new 2M folio,
//! which one PMD block then maps in place of the table; the old pages lose
//! those mappings.
//!
//! Where we simplify: no khugepaged thread collapses anything in the
//! background, and shmem is not collapsed (EINVAL, as for any VMA whose
//! memory cannot be a THP).

use core::sync::atomic::Ordering;

use crate::arch::desc::Pte;
use crate::arch::mmu;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{align_up, phys_to_virt, PAGE_SIZE, PMD_SIZE, PTRS_PER_TABLE};
use crate::mm::folio::{is_zero_pfn, Folio};
use crate::mm::huge_memory::order::PMD_ORDER;
use crate::mm::huge_memory::pmd;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Alloc, Level, PageTable};
use crate::mm::vma::{Vma, VM_NOHUGEPAGE};
use crate::mm::vmstat;

/// Why a 2M range was not collapsed (Linux's `enum scan_result`, the ones
/// that can arise here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// No PTE table there: nothing was ever mapped (`SCAN_PMD_NULL`).
    PmdNull,
    /// No entry is writable, so nothing would gain (`SCAN_PAGE_RO`).
    PageRo,
    /// A page held from outside the page tables, by a pipe say
    /// (`SCAN_PAGE_COUNT`).
    PageCount,
    /// A page that is not anonymous memory (`SCAN_PAGE_ANON`).
    PageAnon,
    /// No 2M folio to be had (`SCAN_ALLOC_HUGE_PAGE_FAIL`).
    AllocFail,
}

impl Scan {
    /// Whether the next 2M is still tried after this one (Linux: the
    /// results `madvise_collapse` lets it go on after).
    fn goes_on(self) -> bool {
        matches!(self, Scan::PmdNull | Scan::PageRo | Scan::PageCount)
    }

    /// The errno `MADV_COLLAPSE` reports (Linux: `madvise_collapse_errno`).
    fn errno(self) -> Errno {
        match self {
            Scan::AllocFail => Errno::ENOMEM,
            Scan::PageCount => Errno::EAGAIN,
            _ => Errno::EINVAL,
        }
    }
}

/// `madvise(MADV_COLLAPSE)` over `[start, end)` of `mm`, every page of it
/// in some VMA (ENOMEM otherwise, as for any madvise): 0 once every
/// 2M-aligned 2M inside one VMA is mapped by a PMD block, else the errno of
/// the last 2M that was not. EINVAL for a VMA that may not have THPs
/// (`MADV_NOHUGEPAGE`, a file); the THP knobs do not matter, as in Linux.
/// Under `mmap_lock` and every VMA's write lock, so no fault changes an
/// entry meanwhile.
pub fn madvise_collapse(mm: &Mm, start: usize, end: usize) -> KResult<()> {
    let map = mm.mmap_write_lock();
    map.vma_start_write(start, end);
    let mut at = start;
    for (vstart, vend, vma) in map.vmas.range(start, end) {
        if vstart > at {
            return Err(Errno::ENOMEM);
        }
        at = vend;
        if vma.file.is_some() || vma.flags & VM_NOHUGEPAGE != 0 {
            return Err(Errno::EINVAL);
        }
        // One VMA's 2Ms, as Linux's madvise walk hands `madvise_collapse`
        // one VMA at a time and stops at its error.
        let first = align_up(start.max(vstart), PMD_SIZE);
        let last = end.min(vend) & !(PMD_SIZE - 1);
        let mut failed = None;
        for haddr in (first..last.max(first)).step_by(PMD_SIZE) {
            match collapse_huge_page(mm, vma, haddr) {
                Ok(()) => {}
                Err(r) if r.goes_on() => failed = Some(r),
                Err(r) => return Err(r.errno()),
            }
        }
        if let Some(r) = failed {
            return Err(r.errno());
        }
    }
    if at < end {
        return Err(Errno::ENOMEM);
    }
    Ok(())
}

/// Collapses the 2M at `haddr` of the anonymous `vma` (Linux:
/// `hpage_collapse_scan_pmd` then `collapse_huge_page`): already a block,
/// nothing to do; a PTE table whose pages are all anonymous, held only by
/// their entries, one of them writable, is copied into a new 2M folio (its
/// empty entries as zeros), which a writable block maps in place of the
/// table; the table is kept for the block's split, as Linux deposits it.
fn collapse_huge_page(mm: &Mm, vma: &Vma, haddr: usize) -> Result<(), Scan> {
    let mut mem = mm;
    let pmds = pgtable::table_for(&mut mem, mm.pgd, haddr, Level::Pmd, Alloc::Never);
    let slot = &pmds.ok_or(Scan::PmdNull)?[Level::Pmd.index(haddr)];
    let entry = Pte(slot.load(Ordering::Acquire));
    if entry.is_none() {
        return Err(Scan::PmdNull);
    }
    if !entry.is_table() {
        return Ok(()); // a PMD block already (Linux: `SCAN_PMD_MAPPED`)
    }
    // SAFETY: a table of this mm, kept while its VMAs are write-locked.
    let table = unsafe { mm.table_at(entry.addr()) };
    scan(table, false)?;
    let huge = Folio::alloc(PMD_ORDER).ok_or(Scan::AllocFail)?;
    vmstat::THP_COLLAPSE_ALLOC.inc();
    // References taken from outside since the scan would show now.
    let _ptl = mm.page_table_lock.lock();
    scan(table, true)?;
    for (i, slot) in table.iter().enumerate() {
        let pte = Pte(slot.load(Ordering::Acquire));
        if pte.is_valid() && !is_zero_pfn(pte.addr().pfn()) {
            // SAFETY: a mapped page, kept by its entry; the new folio is
            // ours alone.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    phys_to_virt(pte.addr()) as *const u8,
                    huge.as_ptr().add(i * PAGE_SIZE),
                    PAGE_SIZE,
                )
            };
        }
    }
    huge.mark_anon();
    slot.store(entry.invalid().0, Ordering::Release);
    mmu::flush_tlb_asid(mm.asid);
    for slot in table.iter() {
        let old = Pte(slot.swap(0, Ordering::AcqRel));
        if old.is_valid() {
            // SAFETY: the cleared entry's reference, now ours, flushed.
            let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
            folio.unmapped();
        }
    }
    pmd::deposit(mm, entry.addr());
    // The process's own copy: writable as the VMA is, and dirty.
    let prot = vma.page_prot(true);
    slot.store(Pte::block(huge.phys(), prot).0, Ordering::Release);
    mmu::publish_table_writes();
    if huge.add_pmd_mapping() {
        vmstat::NR_ANON_THPS.inc();
    }
    huge.into_mapping();
    Ok(())
}

/// Checks the PTEs of `table` may be collapsed (Linux:
/// `hpage_collapse_scan_pmd`'s checks; empty entries and the zero page are
/// fine, as `MADV_COLLAPSE` allows any number): every page anonymous, held
/// by its entries alone (with `locked`, under `page_table_lock`, so that
/// stays true), and some entry writable.
fn scan(table: &PageTable, locked: bool) -> Result<(), Scan> {
    let mut writable = false;
    let mut last_head = None;
    for slot in table.iter().take(PTRS_PER_TABLE) {
        let pte = Pte(slot.load(Ordering::Acquire));
        if !pte.is_valid() || is_zero_pfn(pte.addr().pfn()) {
            continue;
        }
        writable |= pte.prot().is_writable();
        // SAFETY: a valid entry holds a reference; its VMA is write-locked.
        let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
        if !folio.is_anon() {
            return Err(Scan::PageAnon);
        }
        if last_head == Some(folio.pfn()) {
            continue;
        }
        last_head = Some(folio.pfn());
        // Each entry holds one reference, and this `Folio` one (Linux:
        // `is_refcount_suitable`).
        if locked && folio.refcount() != folio.mapcount() + 1 {
            return Err(Scan::PageCount);
        }
    }
    if !writable {
        return Err(Scan::PageRo);
    }
    Ok(())
}
