//! User page tables read back by the MMU (`AT S1E0R/W`): a 64K folio
//! folded into one contiguous block, a 2M folio under one PMD block, and
//! what zap and mprotect leave of them. The address space is built by the
//! same functions the fault path uses, then switched to with IRQs masked
//! so the walker sees it.

use alloc::format;
use alloc::sync::Arc;

use super::{ensure, Test, TestResult};
use crate::arch::cpu::{local_irq_restore, local_irq_save};
use crate::arch::desc::{PgProt, Pte};
use crate::arch::mmu::{self, at_translate, AtAccess};
use crate::arch::pgtable::set_ptes;
use crate::mm::addr::{PhysAddr, PAGE_SIZE, PMD_SIZE};
use crate::mm::folio::Folio;
use crate::mm::memory;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Alloc, Level};

/// The user page table tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "user_contpte_block_seen_by_at",
        run: contpte_block_seen_by_at,
    },
    Test {
        name: "user_pmd_block_seen_by_at",
        run: pmd_block_seen_by_at,
    },
    Test {
        name: "user_pmd_cache_names_the_walks_table_across_munmap",
        run: pmd_cache_names_the_walks_table_across_munmap,
    },
];

/// A 64K-aligned user address, away from anything.
const VA: usize = 0x10_0000_0000;

/// What `AT` says for `va` in `mm`, for a read and for a write.
fn at(mm: &Mm, va: usize) -> (Option<PhysAddr>, Option<PhysAddr>) {
    let daif = local_irq_save();
    mm.activate();
    let read = at_translate(va, AtAccess::UserRead).ok();
    let write = at_translate(va, AtAccess::UserWrite).ok();
    mmu::switch_to_empty();
    local_irq_restore(daif);
    (read, write)
}

/// Maps all of `folio` at `va` with one `set_ptes`, as `set_pte_range` does
/// for a write fault: dirty, so a writable `prot` is read-write.
fn map_pages(mm: &Mm, va: usize, folio: &Folio, prot: PgProt) -> TestResult {
    let mut mem = mm;
    let table = pgtable::table_for(&mut mem, mm.pgd, va, Level::Pte, Alloc::IfMissing)
        .ok_or("no page table")?;
    let _ptl = crate::mm::ptlock::pte_lock(table);
    set_ptes(
        mm,
        table,
        va,
        Pte::page(folio.phys(), prot).mkdirty(),
        folio.nr_pages(),
        folio,
    );
    folio.add_mappings(folio.nr_pages());
    mmu::publish_table_writes();
    Ok(())
}

/// The leaf entry the software walker finds for `va` in `mm`, if any.
fn entry(mm: &Mm, va: usize) -> Option<Pte> {
    pgtable::translate(&mm, mm.pgd, va).map(|t| t.pte)
}

/// A 64K folio mapped by one `set_pte_range` is folded into a contiguous
/// (contpte) block that `AT` translates page by page; mprotect keeps the
/// block, a zap of half unfolds the rest, and the mapcount follows.
fn contpte_block_seen_by_at() -> TestResult {
    let mm: Arc<Mm> = Mm::new().map_err(|e| format!("{e:?}"))?;
    let folio = Folio::alloc(4).ok_or("no 64K folio")?;
    let rw = PgProt::user(true, false);
    map_pages(&mm, VA, &folio, rw)?;
    for page in 0..16 {
        let va = VA + page * PAGE_SIZE;
        ensure!(
            entry(&mm, va).is_some_and(|p| p.is_contiguous()),
            "page {page} not in a block"
        );
        let pa = folio.phys().add(page * PAGE_SIZE + 0x123);
        ensure!(
            at(&mm, va + 0x123) == (Some(pa), Some(pa)),
            "AT at page {page}"
        );
    }
    // mprotect of the whole block: still one block, now read-only.
    memory::change_protection(&mm, VA, VA + 16 * PAGE_SIZE, |p| p.wrprotect());
    ensure!(
        entry(&mm, VA + 0x5000).is_some_and(|p| p.is_contiguous()),
        "unfolded by mprotect"
    );
    ensure!(
        at(&mm, VA + 0x5000) == (Some(folio.phys().add(0x5000)), None),
        "read-only block"
    );
    // Zap of half the block: the rest stays, unfolded, still translating.
    memory::zap_range(&mm, VA, VA + 8 * PAGE_SIZE);
    ensure!(at(&mm, VA) == (None, None), "zapped page still translates");
    let kept = VA + 9 * PAGE_SIZE;
    ensure!(
        entry(&mm, kept).is_some_and(|p| !p.is_contiguous()),
        "kept half still folded"
    );
    ensure!(
        at(&mm, kept).0 == Some(folio.phys().add(9 * PAGE_SIZE)),
        "kept half lost"
    );
    ensure!(
        folio.mapcount() == 8,
        "mapcount {} with 8 pages mapped",
        folio.mapcount()
    );
    // (No VMA covers these entries, so Mm's drop would not zap them.)
    memory::zap_range(&mm, VA, VA + 16 * PAGE_SIZE);
    ensure!(
        folio.refcount() == 1,
        "refcount {} after the zap",
        folio.refcount()
    );
    Ok(())
}

/// A 2M folio under one PMD block entry translates through `AT`, and a
/// zap of a single page clears the whole block and drops its mapping.
fn pmd_block_seen_by_at() -> TestResult {
    let mm: Arc<Mm> = Mm::new().map_err(|e| format!("{e:?}"))?;
    let folio = Folio::alloc(9).ok_or("no 2M folio")?;
    let va = VA + PMD_SIZE;
    {
        let mut mem: &Mm = &mm;
        let pmds = pgtable::table_for(&mut mem, mm.pgd, va, Level::Pmd, Alloc::IfMissing)
            .ok_or("no pmd")?;
        let _ptl = mm.page_table_lock.lock();
        let pmd = &pmds[Level::Pmd.index(va)];
        // SAFETY: `folio` is ours, referenced.
        let entry_ref = unsafe { Folio::from_pfn(folio.pfn()) };
        memory::set_pmd(pmd, entry_ref, PgProt::user(true, false), true);
    }
    let t = pgtable::translate(&&*mm, mm.pgd, va + 0x12_3456).ok_or("no translation")?;
    ensure!(t.level == Level::Pmd, "mapped at {:?}", t.level);
    let pa = folio.phys().add(0x12_3456);
    ensure!(
        at(&mm, va + 0x12_3456) == (Some(pa), Some(pa)),
        "AT through the block"
    );
    // A zap of one page clears the whole block.
    memory::zap_range(&mm, va + PAGE_SIZE, va + 2 * PAGE_SIZE);
    ensure!(
        at(&mm, va + 0x12_3456) == (None, None),
        "block survived a partial zap"
    );
    ensure!(
        folio.mapcount() == 0,
        "the block's reference was not dropped"
    );
    Ok(())
}

/// `Mm::pmd_cache` holds, after a fault, the PMD table the walk finds, and
/// still does after the whole mapping is unmapped and mapped again: it is
/// never invalidated, so this fails if unmapping ever frees a PMD table.
fn pmd_cache_names_the_walks_table_across_munmap() -> TestResult {
    use crate::arch::fault::do_page_fault;
    use crate::mm::fault::Access;
    use crate::mm::mmap::{self, MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, PROT_READ, PROT_WRITE};
    let mm: Arc<Mm> = Mm::new().map_err(|e| format!("{e:?}"))?;
    let walk = |mm: &Mm| {
        let mut mem = mm;
        let puds = pgtable::table_below(&mut mem, mm.pgd, Level::Pgd, VA, Alloc::Never)?;
        pgtable::table_below(&mut mem, puds, Level::Pud, VA, Alloc::Never)
    };
    let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
    let len = 4 * PMD_SIZE;
    ensure!(mm.pmd_cache.get(VA).is_none(), "a new Mm remembers a table");
    let mut tables = alloc::vec::Vec::new();
    for round in 0..2 {
        mmap::mmap(&mm, VA, len, PROT_READ | PROT_WRITE, flags, None, 0)
            .map_err(|e| format!("mmap: {e:?}"))?;
        do_page_fault(&mm, VA, Access::Write).map_err(|f| format!("fault: {f:?}"))?;
        let (cached, walked) = (mm.pmd_cache.get(VA), walk(&mm));
        ensure!(
            cached.is_some() && cached == walked,
            "round {round}: cache {cached:?}, walk {walked:?}"
        );
        tables.push(cached);
        mmap::munmap(&mm, VA, len).map_err(|e| format!("munmap: {e:?}"))?;
        ensure!(
            walk(&mm) == cached,
            "round {round}: munmap changed the PMD table the cache names"
        );
    }
    ensure!(tables[0] == tables[1], "a second PMD table for one region");
    Ok(())
}
