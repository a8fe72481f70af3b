//! Page allocator and kernel heap on real RAM.

use alloc::vec::Vec;

use super::{ensure, Test, TestResult};
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::buddy::{BuddyError, MAX_ORDER};
use crate::mm::folio::Folio;
use crate::mm::{frame, heap};

/// The page allocator and heap tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "frames_every_order_naturally_aligned",
        run: every_order_aligned,
    },
    Test {
        name: "frames_no_overlap_and_all_come_back",
        run: no_overlap_and_all_come_back,
    },
    Test {
        name: "frames_bad_free_rejected",
        run: bad_free_rejected,
    },
    Test {
        name: "heap_takes_pages_and_gives_them_back",
        run: heap_takes_and_gives_back,
    },
    Test {
        name: "folio_split_frees_what_nothing_maps",
        run: folio_split_frees_what_nothing_maps,
    },
];

/// Fills the order-`order` block at `pa` with a pattern derived from `tag`
/// (each 64-bit word is `tag ^ index`), through the linear map.
fn fill(pa: PhysAddr, order: usize, tag: u64) {
    let words = (PAGE_SIZE << order) / 8;
    let p = phys_to_virt(pa) as *mut u64;
    for i in 0..words {
        // SAFETY: the block is ours, mapped by the linear map.
        unsafe { p.add(i).write_volatile(tag ^ i as u64) };
    }
}

/// Whether the block at `pa` still holds the pattern `fill` wrote with `tag`.
fn check(pa: PhysAddr, order: usize, tag: u64) -> bool {
    let words = (PAGE_SIZE << order) / 8;
    let p = phys_to_virt(pa) as *const u64;
    // SAFETY: as in fill.
    (0..words).all(|i| unsafe { p.add(i).read_volatile() } == tag ^ i as u64)
}

/// Every frame is back and every block merged back into the same shape.
fn unchanged_since(before: &frame::FreeStats) -> TestResult {
    let after = frame::free_stats();
    ensure!(
        after.free_pages == before.free_pages,
        "free pages {} -> {}",
        before.free_pages,
        after.free_pages
    );
    ensure!(
        after.nr_free == before.nr_free,
        "free blocks per order {:?} -> {:?}",
        before.nr_free,
        after.nr_free
    );
    Ok(())
}

/// Allocates one block of every order up to `MAX_ORDER`, checks each is
/// naturally aligned (an order-n block on a `PAGE_SIZE << n` boundary) and
/// holds what was written, then frees it; the free lists end as they began.
fn every_order_aligned() -> TestResult {
    let before = frame::free_stats();
    for order in 0..=MAX_ORDER {
        let pa =
            frame::alloc_pages(order).ok_or_else(|| alloc::format!("order {} failed", order))?;
        ensure!(
            pa.is_aligned(PAGE_SIZE << order),
            "order {} block at {:#x} misaligned",
            order,
            pa.0
        );
        fill(pa, order, 0x5a5a_0000 + order as u64);
        ensure!(
            check(pa, order, 0x5a5a_0000 + order as u64),
            "order {} readback",
            order
        );
        frame::free_pages(pa, order).map_err(|e| alloc::format!("{:?}", e))?;
    }
    unchanged_since(&before)
}

/// Holds 600 blocks of mixed orders at once: none overlaps another, none is
/// overwritten by the others' patterns, and freeing them in reverse order
/// merges every buddy back into the free lists as they were.
fn no_overlap_and_all_come_back() -> TestResult {
    // Reserve the Vec's room first so the heap does not grow mid-test.
    let mut blocks: Vec<(PhysAddr, usize)> = Vec::with_capacity(600);
    let before = frame::free_stats();
    for i in 0..600 {
        let order = [0, 0, 1, 0, 3, 2, 0, 5][i % 8];
        let pa = frame::alloc_pages(order).ok_or("out of memory")?;
        fill(pa, order, i as u64);
        blocks.push((pa, order));
    }
    let mut sorted = blocks.clone();
    sorted.sort();
    for w in sorted.windows(2) {
        let end = w[0].0 .0 + (PAGE_SIZE << w[0].1) as u64;
        ensure!(
            end <= w[1].0 .0,
            "blocks {:#x} and {:#x} overlap",
            w[0].0 .0,
            w[1].0 .0
        );
    }
    // A heap block of its own: back before the count.
    drop(sorted);
    for (i, &(pa, order)) in blocks.iter().enumerate() {
        ensure!(
            check(pa, order, i as u64),
            "block {} at {:#x} was overwritten",
            i,
            pa.0
        );
    }
    for &(pa, order) in blocks.iter().rev() {
        frame::free_pages(pa, order).map_err(|e| alloc::format!("{:?}", e))?;
    }
    unchanged_since(&before)
}

/// `free_pages` refuses a tail page, the wrong order and a double free
/// (as Linux's `bad_page` checks would catch them), and frees the block once.
fn bad_free_rejected() -> TestResult {
    let pa = frame::alloc_pages(2).ok_or("out of memory")?;
    ensure!(
        frame::free_pages(pa.add(PAGE_SIZE), 0) == Err(BuddyError::NotAllocated),
        "freeing a tail page"
    );
    ensure!(
        frame::free_pages(pa, 1) == Err(BuddyError::WrongOrder),
        "freeing with the wrong order"
    );
    ensure!(frame::free_pages(pa, 2).is_ok(), "the real free");
    ensure!(
        frame::free_pages(pa, 2) == Err(BuddyError::NotAllocated),
        "double free accepted"
    );
    Ok(())
}

/// The kernel heap takes frames for a 1 MiB vector and 10,000 small boxes,
/// reads them back, and returns all but at most one empty slab per size
/// class to the page allocator.
fn heap_takes_and_gives_back() -> TestResult {
    let (heap_before, free_before) = (heap::pages(), frame::free_stats().free_pages);
    let big: Vec<u64> = (0..(1 << 17)).collect(); // 1 MiB: a block of its own
    ensure!(
        heap::pages() >= heap_before + 256,
        "1 MiB took {} pages",
        heap::pages() - heap_before
    );
    ensure!(
        big.iter().enumerate().all(|(i, &v)| v == i as u64),
        "1 MiB vector readback"
    );
    let small: Vec<alloc::boxed::Box<u32>> = (0..10_000).map(alloc::boxed::Box::new).collect();
    ensure!(
        small.iter().enumerate().all(|(i, b)| **b == i as u32),
        "small boxes readback"
    );
    drop((big, small));
    // Each size class may keep one empty slab.
    let kept = heap::pages().saturating_sub(heap_before);
    ensure!(kept <= 8 * 4, "{} pages kept after freeing", kept);
    ensure!(
        frame::free_stats().free_pages + kept >= free_before,
        "frames did not come back"
    );
    Ok(())
}

/// A 64K folio, three of whose pages page-table entries map (here: as
/// many references and mappings added as the fault path adds), split into
/// single pages, and another into 16K folios: each new folio keeps the
/// references of the entries mapping its pages, every other one goes back
/// to the page allocator, and once the "entries" drop theirs, every frame
/// is back.
fn folio_split_frees_what_nothing_maps() -> TestResult {
    let before = frame::free_stats();
    for (new_order, mapped) in [(0u8, [0usize, 3, 5]), (2, [5, 6, 13])] {
        let folio = Folio::alloc(4).ok_or("out of memory")?;
        let pfn = folio.pfn();
        folio.mark_anon();
        folio.add_mappings(mapped.len());
        let taken = frame::free_stats().free_pages;
        folio.split(new_order, |page| u32::from(mapped.contains(&page)));
        // The new folios no entry maps went back, the first one too, once
        // the splitter's reference went.
        let nr = 1usize << new_order;
        let kept = (0..16)
            .step_by(nr)
            .filter(|&first| mapped.iter().any(|&p| p / nr * nr == first))
            .count();
        let freed = frame::free_stats().free_pages - taken;
        ensure!(
            freed == 16 - kept * nr,
            "order {new_order}: {freed} pages freed, {kept} folios kept"
        );
        for &page in &mapped {
            let state =
                crate::mm::folio::folio_page(pfn + page).ok_or("a mapped page was freed")?;
            ensure!(
                state.order == new_order && state.anon && state.mapcount >= 1,
                "order {new_order}: page {page} is {state:?}"
            );
            // SAFETY: the reference one of the added mappings stands for.
            let page_folio = unsafe { Folio::from_mapped_pfn(pfn + page) };
            page_folio.unmapped();
        }
    }
    unchanged_since(&before)
}
