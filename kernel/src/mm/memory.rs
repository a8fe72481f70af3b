//! Page-table work on user address spaces (Linux: `mm/memory.c`):
//! installing a page (`set_pte_at`), removing a range (`zap_page_range`),
//! copying a range at fork (`copy_page_range`) and freeing the tables
//! (`free_pgtables`). Each mapped entry holds one reference on its folio.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::desc::{PgProt, Pte};
use crate::arch::mmu;
use crate::mm::folio::Folio;
use crate::mm::frame;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Level};

/// Above this many pages, one flush of the whole ASID beats page flushes.
const FLUSH_ALL_THRESHOLD: usize = 64;

/// Maps page `page` of `folio` at `addr` with `prot`, handing the PTE the
/// reference in `folio`. The caller holds the page-table lock and has
/// checked the entry is none; none -> valid needs no TLB flush.
pub fn set_pte(mm: &Mm, slot: &AtomicU64, folio: Folio, page: usize, prot: PgProt) {
    let pa = folio.phys().add(page * crate::mm::addr::PAGE_SIZE);
    slot.store(Pte::leaf(pa, prot, true).0, Ordering::Release);
    mmu::publish_table_writes();
    mm.rss.fetch_add(1, Ordering::Relaxed);
    folio.into_mapping();
}

/// Replaces a valid entry (a write fault upgrading or copying a page):
/// the old entry is cleared and flushed before the new one is written
/// (break-before-make). Returns the folio reference the old entry held.
pub fn replace_pte(mm: &Mm, slot: &AtomicU64, addr: usize, new: Pte) -> Folio {
    let old = Pte(slot.swap(0, Ordering::AcqRel));
    mmu::flush_tlb_user_page(mm.asid, addr);
    slot.store(new.0, Ordering::Release);
    mmu::publish_table_writes();
    // SAFETY: the old entry's reference, now ours.
    let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
    folio.unmapped();
    folio
}

/// Unmaps `[start, end)`: clears every entry, flushes the TLB, then drops
/// the folio references (never before the flush: another CPU could still
/// reach the page through a stale TLB entry).
pub fn zap_range(mm: &Mm, start: usize, end: usize) {
    let mut folios = Vec::new();
    let mut addrs = Vec::new();
    {
        let _ptl = mm.page_table_lock.lock();
        pgtable::for_each_leaf_slot(&mm, mm.pgd, start, end, &mut |va, level, slot| {
            debug_assert_eq!(level, Level::Pte, "user blocks come later");
            let old = Pte(slot.swap(0, Ordering::AcqRel));
            // SAFETY: the entry's reference, now ours.
            let folio = unsafe { Folio::from_mapped_pfn(old.addr().pfn()) };
            folio.unmapped();
            folios.push(folio);
            addrs.push(va);
        });
    }
    if addrs.len() > FLUSH_ALL_THRESHOLD {
        mmu::flush_tlb_asid(mm.asid);
    } else {
        for &va in &addrs {
            mmu::flush_tlb_user_page(mm.asid, va);
        }
    }
    mm.rss.fetch_sub(folios.len(), Ordering::Relaxed);
    drop(folios);
}

/// Copies the entries of `[start, end)` from `src` into `dst` at fork
/// (Linux: `copy_page_range`). With `cow`, a writable private page becomes
/// read-only in both, so the first write by either copies it.
pub fn copy_range(dst: &Mm, src: &Mm, start: usize, end: usize, cow: bool) -> bool {
    let mut ok = true;
    let mut wrprotected = false;
    let _ptl = src.page_table_lock.lock();
    let mut dst_mem = dst;
    pgtable::for_each_leaf_slot(&src, src.pgd, start, end, &mut |va, _, slot| {
        let mut pte = Pte(slot.load(Ordering::Acquire));
        if cow && pte.prot().is_writable() {
            pte = pte.wrprotect();
            slot.store(pte.0, Ordering::Release);
            wrprotected = true;
        }
        let Some(dst_slot) = pgtable::pte_slot(&mut dst_mem, dst.pgd, va, true) else {
            ok = false;
            return;
        };
        let folio = Folio::from_pfn(pte.addr().pfn());
        dst_slot.store(pte.0, Ordering::Release);
        dst.rss.fetch_add(1, Ordering::Relaxed);
        folio.into_mapping();
    });
    if wrprotected {
        mmu::flush_tlb_asid(src.asid);
    }
    mmu::publish_table_writes();
    ok
}

/// Frees every page-table page of `mm` (all leaves already zapped).
pub fn free_pgtables(mm: &Mm) {
    pgtable::free_tables(&mm, mm.pgd, &mut |pa| {
        frame::free_pages(pa, 0).expect("page table freed twice");
    });
    frame::free_pages(mm.pgd, 0).expect("pgd freed twice");
}

/// Rewrites every present entry of `[start, end)` with `f(old)` (Linux:
/// `change_protection`): each one is cleared and flushed before the new
/// one is written, as a permission change on a live entry requires.
pub fn change_protection(mm: &Mm, start: usize, end: usize, mut f: impl FnMut(Pte) -> Pte) {
    let _ptl = mm.page_table_lock.lock();
    pgtable::for_each_leaf_slot(&mm, mm.pgd, start, end, &mut |va, _, slot| {
        let old = Pte(slot.swap(0, Ordering::AcqRel));
        mmu::flush_tlb_user_page(mm.asid, va);
        slot.store(f(old).0, Ordering::Release);
    });
    mmu::publish_table_writes();
}

/// Moves the entries of `[old, old + len)` to `[new, new + len)` (Linux:
/// `move_page_tables`, for mremap). False if a page table could not be
/// allocated; what moved stays moved.
pub fn move_range(mm: &Mm, old: usize, new: usize, len: usize) -> bool {
    let mut entries = Vec::new();
    {
        let _ptl = mm.page_table_lock.lock();
        pgtable::for_each_leaf_slot(&mm, mm.pgd, old, old + len, &mut |va, _, slot| {
            entries.push((va, slot.swap(0, Ordering::AcqRel)));
        });
    }
    mmu::flush_tlb_asid(mm.asid);
    let _ptl = mm.page_table_lock.lock();
    let mut mem = mm;
    for (va, pte) in entries {
        match pgtable::pte_slot(&mut mem, mm.pgd, va - old + new, true) {
            Some(slot) => slot.store(pte, Ordering::Release),
            None => {
                // SAFETY: the entry's reference, which nothing maps now.
                let folio = unsafe { Folio::from_mapped_pfn(Pte(pte).addr().pfn()) };
                folio.unmapped();
                mm.rss.fetch_sub(1, Ordering::Relaxed);
                return false;
            }
        }
    }
    mmu::publish_table_writes();
    true
}

/// Is a page mapped at `va`? (mincore.)
pub fn is_mapped(mm: &Mm, va: usize) -> bool {
    let _ptl = mm.page_table_lock.lock();
    pgtable::translate(&mm, mm.pgd, va).is_some()
}

/// The user page tables of `mm` as text, one line per run of entries that
/// map consecutive frames with the same attributes (faultline's
/// `/proc/self/ptdump`):
/// `start-end level pa=... perms [cont] [young] [dirty]`.
pub fn ptdump(mm: &Mm) -> alloc::string::String {
    use core::fmt::Write;
    let mut out = alloc::string::String::new();
    let mut run: Option<(usize, usize, Level, u64, Pte)> = None;
    let flush = |out: &mut alloc::string::String, run: &(usize, usize, Level, u64, Pte)| {
        let (start, end, level, pa, pte) = *run;
        let prot = pte.prot();
        let level = match level {
            Level::Pmd => "PMD",
            Level::Pud => "PUD",
            _ => "PTE",
        };
        let _ = writeln!(
            out,
            "{:012x}-{:012x} {} pa={:x} {}{}{} user{}{}",
            start,
            end,
            level,
            pa,
            if prot.is_user_readable() { 'r' } else { '-' },
            if prot.is_user_writable() { 'w' } else { '-' },
            if prot.is_user_exec() { 'x' } else { '-' },
            if pte.is_contiguous() { " cont" } else { "" },
            if pte.is_young() { " young" } else { "" },
        );
    };
    let _ptl = mm.page_table_lock.lock();
    pgtable::for_each_leaf(
        &mm,
        mm.pgd,
        0,
        crate::mm::addr::USER_TOP,
        &mut |va, level, pte| {
            let size = level.size();
            let extends = matches!(&run, Some((s, end, l, pa, p)) if *end == va && *l == level
            && p.prot() == pte.prot() && pa + (*end - *s) as u64 == pte.addr().0);
            if extends {
                if let Some(r) = &mut run {
                    r.1 += size;
                }
            } else {
                if let Some(r) = &run {
                    flush(&mut out, r);
                }
                run = Some((va, va + size, level, pte.addr().0, pte));
            }
        },
    );
    if let Some(r) = &run {
        flush(&mut out, r);
    }
    out
}
