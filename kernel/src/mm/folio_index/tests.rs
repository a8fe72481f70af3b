//! Host tests of the page-cache index, against a per-page model.

use super::*;
use crate::mm::addr::PAGE_SIZE;
use crate::mm::truncate::{undo_range_plan, UndoAction};
use std::vec;
use std::vec::Vec;

const PAGE: u64 = PAGE_SIZE as u64;

/// An index holding `(start, order)` folios, each item its own start.
pub(crate) fn index_of(folios: &[(u64, u8)]) -> FolioIndex<u64> {
    let mut index = FolioIndex::new();
    for &(start, order) in folios {
        index.insert(start, order, start).unwrap();
    }
    index
}

fn plan<T>(index: &FolioIndex<T>, start: u64, end: u64) -> Vec<UndoAction> {
    undo_range_plan(index, start, end).collect()
}

fn heads<T>(index: &FolioIndex<T>, start: u64, end: u64) -> Vec<(u64, u8)> {
    index.range(start, end).map(|(s, o, _)| (s, o)).collect()
}

#[test]
fn lookup_of_every_page_in_a_folio_returns_its_head() {
    for order in 0..=MAX_PAGECACHE_ORDER {
        let nr = 1u64 << order;
        let start = 3 * nr;
        let index = index_of(&[(start, order)]);
        for page in start..start + nr {
            assert_eq!(index.lookup(page), Some((start, order, &start)));
        }
        assert_eq!(index.lookup(start - 1), None);
        assert_eq!(index.lookup(start + nr), None);
    }
}

#[test]
fn lookup_misses_in_holes_and_past_the_end() {
    let index = index_of(&[(0, 2), (8, 3), (32, 0)]);
    for page in [4, 5, 6, 7, 16, 20, 31, 33, 1000, MAX_INDEX, u64::MAX] {
        assert_eq!(index.lookup(page), None, "page {page}");
    }
    assert!(FolioIndex::<u64>::new().lookup(0).is_none());
}

#[test]
fn insert_rejects_misaligned_folios_and_gives_the_item_back() {
    let mut index = FolioIndex::new();
    for order in 1..=MAX_PAGECACHE_ORDER {
        let nr = 1u64 << order;
        // Aligned to every smaller order but not this one, and to none.
        for start in [nr / 2, 5 * nr + 1, nr + nr - 1] {
            assert_eq!(
                index.insert(start, order, 7),
                Err((InsertError::Misaligned, 7))
            );
        }
    }
    assert_eq!(index.nr_folios(), 0);
    assert_eq!(index.nr_pages(), 0);
    // Order 0 fits anywhere.
    assert_eq!(index.insert(12345, 0, 7), Ok(()));
}

#[test]
fn insert_rejects_orders_past_the_largest_folio() {
    let mut index = FolioIndex::new();
    for order in [MAX_PAGECACHE_ORDER + 1, 63, 64, u8::MAX] {
        assert_eq!(index.insert(0, order, 1), Err((InsertError::BadOrder, 1)));
    }
    assert_eq!(index.nr_folios(), 0);
}

#[test]
fn insert_rejects_folios_past_the_last_index() {
    let mut index = FolioIndex::new();
    let last_2m = MAX_INDEX + 1 - 512;
    assert_eq!(
        index.insert(MAX_INDEX + 1, 0, 1),
        Err((InsertError::OutOfRange, 1))
    );
    assert_eq!(
        index.insert(u64::MAX, 0, 1),
        Err((InsertError::OutOfRange, 1))
    );
    assert_eq!(
        index.insert(MAX_INDEX + 1 + 512, 9, 1),
        Err((InsertError::OutOfRange, 1))
    );
    assert_eq!(index.insert(last_2m, 9, 1), Ok(()));
    assert_eq!(index.lookup(MAX_INDEX), Some((last_2m, 9, &1)));
    assert_eq!(index.next_hole(last_2m), MAX_INDEX + 1);
    assert!(!index.range_is_empty(MAX_INDEX, u64::MAX));
}

#[test]
fn insert_rejects_a_folio_covering_a_smaller_one() {
    // The existing order-0 page sits at the first, a middle and the last
    // page of the order-4 folio [16, 32) that tries to cover it.
    for small in [16, 23, 31] {
        let mut index = index_of(&[(small, 0)]);
        assert_eq!(index.insert(16, 4, 99), Err((InsertError::Occupied, 99)));
        assert_eq!(index.nr_folios(), 1);
        assert_eq!(index.nr_pages(), 1);
        assert_eq!(
            index.lookup(20),
            if small == 20 {
                Some((20, 0, &20))
            } else {
                None
            }
        );
    }
    // And an order-2 folio inside the range of an order-9 one.
    let mut index = index_of(&[(508, 2)]);
    assert_eq!(index.insert(0, 9, 99), Err((InsertError::Occupied, 99)));
}

#[test]
fn insert_rejects_a_folio_inside_a_larger_one() {
    let mut index = index_of(&[(64, 3)]);
    for page in 64..72 {
        assert_eq!(index.insert(page, 0, 99), Err((InsertError::Occupied, 99)));
    }
    for start in [64, 66, 68, 70] {
        assert_eq!(index.insert(start, 1, 99), Err((InsertError::Occupied, 99)));
    }
    assert_eq!(index.insert(64, 3, 99), Err((InsertError::Occupied, 99)));
    assert_eq!(index.nr_folios(), 1);
    assert_eq!(index.nr_pages(), 8);
    assert_eq!(index.lookup(64), Some((64, 3, &64)));
}

#[test]
fn insert_accepts_touching_neighbours() {
    // A 2M folio [512, 1024), an order-8 one ending where it starts, a
    // page starting where it ends, and a 2M folio further on.
    let mut index = index_of(&[(512, 9)]);
    assert_eq!(index.insert(256, 8, 256), Ok(()));
    assert_eq!(index.insert(1024, 0, 1024), Ok(()));
    assert_eq!(index.insert(1536, 9, 1536), Ok(()));
    assert_eq!(index.nr_folios(), 4);
    assert_eq!(index.nr_pages(), 512 + 256 + 1 + 512);
    assert_eq!(index.lookup(511), Some((256, 8, &256)));
    assert_eq!(index.lookup(512), Some((512, 9, &512)));
    assert_eq!(index.lookup(1023), Some((512, 9, &512)));
    assert_eq!(index.lookup(1024), Some((1024, 0, &1024)));
    assert_eq!(index.lookup(1025), None);
    assert_eq!(index.lookup(1536), Some((1536, 9, &1536)));

    // Single pages on both sides of a large folio.
    let mut index = index_of(&[(8, 3)]);
    assert_eq!(index.insert(7, 0, 7), Ok(()));
    assert_eq!(index.insert(16, 0, 16), Ok(()));
    assert_eq!(index.nr_pages(), 10);
}

#[test]
fn remove_takes_a_folio_only_by_its_first_index() {
    let mut index = index_of(&[(0, 0), (8, 3)]);
    assert_eq!(index.remove(9), None);
    assert_eq!(index.remove(15), None);
    assert_eq!(index.remove(16), None);
    assert_eq!(index.nr_folios(), 2);
    assert_eq!(index.remove(8), Some((3, 8)));
    assert_eq!(index.remove(8), None);
    assert!(index.range_is_empty(8, 8));
    assert_eq!(index.lookup(0), Some((0, 0, &0)));
    // Its pages are free for new folios again.
    assert_eq!(index.insert(12, 2, 12), Ok(()));
}

#[test]
fn nr_pages_follows_inserts_and_removes() {
    let mut index = FolioIndex::new();
    index.insert(0, 9, ()).unwrap();
    index.insert(512, 0, ()).unwrap();
    index.insert(520, 3, ()).unwrap();
    assert_eq!(index.nr_pages(), 521);
    assert_eq!(index.nr_folios(), 3);
    // A failed insert counts nothing.
    assert!(index.insert(0, 0, ()).is_err());
    assert_eq!(index.nr_pages(), 521);
    index.remove(0).unwrap();
    assert_eq!(index.nr_pages(), 9);
    index.remove(520).unwrap();
    assert_eq!(index.nr_pages(), 1);
    // A missed remove counts nothing.
    assert!(index.remove(520).is_none());
    index.remove(512).unwrap();
    assert_eq!(index.nr_pages(), 0);
    assert_eq!(index.nr_folios(), 0);
}

#[test]
fn range_is_empty_at_the_edges_of_a_folio() {
    let index = index_of(&[(8, 3)]); // pages [8, 16)
    assert!(index.range_is_empty(0, 8));
    assert!(!index.range_is_empty(0, 9));
    assert!(index.range_is_empty(7, 1));
    assert!(!index.range_is_empty(7, 2));
    assert!(!index.range_is_empty(8, 1));
    assert!(!index.range_is_empty(15, 1));
    assert!(!index.range_is_empty(10, 2));
    assert!(!index.range_is_empty(0, 100));
    assert!(index.range_is_empty(16, 100));
    assert!(index.range_is_empty(16, u64::MAX));
    assert!(!index.range_is_empty(0, u64::MAX));
    for start in [0, 8, 12, 16] {
        assert!(index.range_is_empty(start, 0));
    }
}

#[test]
fn range_includes_folios_straddling_both_ends() {
    let index = index_of(&[(0, 9), (512, 0), (520, 3), (1024, 9)]);
    let all = vec![(0, 9), (512, 0), (520, 3), (1024, 9)];
    assert_eq!(heads(&index, 100, 1100), all);
    assert_eq!(heads(&index, 0, u64::MAX), all);
    assert_eq!(heads(&index, 511, 512), vec![(0, 9)]);
    assert_eq!(heads(&index, 511, 513), vec![(0, 9), (512, 0)]);
    assert_eq!(heads(&index, 513, 520), vec![]);
    assert_eq!(heads(&index, 527, 1024), vec![(520, 3)]);
    assert_eq!(heads(&index, 527, 1025), vec![(520, 3), (1024, 9)]);
    assert_eq!(heads(&index, 1535, 1536), vec![(1024, 9)]);
    assert_eq!(heads(&index, 1536, u64::MAX), vec![]);
    // Empty and backwards ranges hold nothing, even inside a folio.
    assert_eq!(heads(&index, 100, 100), vec![]);
    assert_eq!(heads(&index, 300, 200), vec![]);
    assert_eq!(heads(&index, 1100, 1030), vec![]);
}

#[test]
fn range_rev_is_range_backwards() {
    let index = index_of(&[(0, 9), (512, 0), (520, 3), (1024, 9)]);
    for (start, end) in [
        (100, 1100),
        (0, u64::MAX),
        (511, 512),
        (511, 513),
        (513, 520),
        (527, 1025),
        (1535, 1536),
        (1536, u64::MAX),
        (100, 100),
        (300, 200),
    ] {
        let mut backwards = Vec::new();
        index.for_each_rev(start, end, |s, o, _| backwards.push((s, o)));
        backwards.reverse();
        assert_eq!(backwards, heads(&index, start, end), "{start}..{end}");
    }
}

#[test]
fn next_data_and_next_hole_skip_to_the_right_page() {
    // Data at [0, 4), [4, 8) touching, then [16, 32), then page 40.
    let index = index_of(&[(0, 2), (4, 2), (16, 4), (40, 0)]);
    assert_eq!(index.next_data(0), Some(0));
    assert_eq!(index.next_data(6), Some(6));
    assert_eq!(index.next_data(8), Some(16));
    assert_eq!(index.next_data(31), Some(31));
    assert_eq!(index.next_data(32), Some(40));
    assert_eq!(index.next_data(41), None);
    assert_eq!(index.next_data(u64::MAX), None);

    assert_eq!(index.next_hole(0), 8);
    assert_eq!(index.next_hole(5), 8);
    assert_eq!(index.next_hole(8), 8);
    assert_eq!(index.next_hole(17), 32);
    assert_eq!(index.next_hole(40), 41);
    assert_eq!(index.next_hole(u64::MAX), u64::MAX);
    assert_eq!(FolioIndex::<()>::new().next_hole(7), 7);
    assert_eq!(FolioIndex::<()>::new().next_data(0), None);
}

/// Deterministic pseudo-random numbers (Marsaglia's xorshift64): a fixed
/// sequence, so a failure replays the same way. The VMA tree's model test
/// draws from it too.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`, as `u64` or `usize`.
    pub(crate) fn below<T: TryFrom<u64> + TryInto<u64>>(&mut self, n: T) -> T {
        let n: u64 = n.try_into().ok().expect("a bound that fits u64");
        T::try_from(self.next() % n).ok().expect("below the bound")
    }
}

/// Pages of the model file; every folio of the test lies below this.
const MODEL_PAGES: u64 = 4 * 512;

/// The plain answer: for each page, the folio covering it as
/// (first index, order, item).
type Model = Vec<Option<(u64, u8, u32)>>;

fn model_folios(model: &Model, start: u64, end: u64) -> Vec<(u64, u8, u32)> {
    let mut folios: Vec<(u64, u8, u32)> = Vec::new();
    for page in start..end.min(MODEL_PAGES) {
        if let Some(folio) = model[page as usize] {
            if folios.last() != Some(&folio) {
                folios.push(folio);
            }
        }
    }
    folios
}

fn check_against_model(index: &FolioIndex<u32>, model: &Model, rng: &mut XorShift) {
    let folios = model_folios(model, 0, MODEL_PAGES);
    assert_eq!(index.nr_folios(), folios.len());
    assert_eq!(index.nr_pages(), model.iter().flatten().count() as u64);
    for page in 0..MODEL_PAGES {
        let want = model[page as usize];
        assert_eq!(index.lookup(page).map(|(s, o, &id)| (s, o, id)), want);
    }
    for _ in 0..16 {
        let start = rng.below(MODEL_PAGES + 8);
        let nr = rng.below(600);
        let end = start + nr;
        let want: Vec<_> = model_folios(model, start, end);
        let got: Vec<_> = index
            .range(start, end)
            .map(|(s, o, &id)| (s, o, id))
            .collect();
        assert_eq!(got, want, "range({start}, {end})");
        let mut rev = Vec::new();
        index.for_each_rev(start, end, |s, o, &id| rev.push((s, o, id)));
        rev.reverse();
        assert_eq!(rev, want, "for_each_rev({start}, {end})");
        assert_eq!(index.range_is_empty(start, nr), want.is_empty());

        let covered = |p: u64| p < MODEL_PAGES && model[p as usize].is_some();
        let data = (start..MODEL_PAGES).find(|&p| covered(p));
        assert_eq!(index.next_data(start), data, "next_data({start})");
        let hole = (start..).find(|&p| !covered(p)).unwrap();
        assert_eq!(index.next_hole(start), hole, "next_hole({start})");
    }
}

/// What the plan for bytes [start, end) must be, worked out from the
/// per-page model alone.
fn model_plan(model: &Model, start: u64, end: u64) -> Vec<UndoAction> {
    if start >= end {
        return Vec::new();
    }
    let mut plan = Vec::new();
    for (head, order, _) in model_folios(model, 0, MODEL_PAGES) {
        let first = head * PAGE;
        let last = first + (PAGE << order);
        let (lo, hi) = (start.max(first), end.min(last));
        if lo >= hi {
            continue;
        }
        plan.push(if (lo, hi) == (first, last) {
            UndoAction::Remove { start: head }
        } else {
            UndoAction::Zero {
                start: head,
                from: (lo - first) as usize,
                to: (hi - first) as usize,
            }
        });
    }
    plan
}

#[test]
fn random_operations_match_a_per_page_model() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut index: FolioIndex<u32> = FolioIndex::new();
    let mut model: Model = vec![None; MODEL_PAGES as usize];
    let mut next_id = 0u32;

    for step in 0..3000 {
        match rng.below(10) {
            // Insert, mostly small folios, sometimes misaligned.
            0..=5 => {
                let order = match rng.below(4) {
                    0 => rng.below(MAX_PAGECACHE_ORDER as u64 + 1) as u8,
                    _ => rng.below(4) as u8,
                };
                let nr = 1u64 << order;
                let mut start = rng.below(MODEL_PAGES / nr) * nr;
                if rng.below(8) == 0 && order > 0 {
                    start += 1 + rng.below(nr - 1);
                }
                let id = next_id;
                next_id += 1;
                let want = if !start.is_multiple_of(nr) {
                    Err((InsertError::Misaligned, id))
                } else if (start..start + nr).any(|p| model[p as usize].is_some()) {
                    Err((InsertError::Occupied, id))
                } else {
                    for p in start..start + nr {
                        model[p as usize] = Some((start, order, id));
                    }
                    Ok(())
                };
                assert_eq!(index.insert(start, order, id), want, "step {step}");
            }
            // Remove, by a head or by any page.
            6..=7 => {
                let page = rng.below(MODEL_PAGES);
                let want = match model[page as usize] {
                    Some((head, order, id)) if head == page => {
                        for p in head..head + (1 << order) {
                            model[p as usize] = None;
                        }
                        Some((order, id))
                    }
                    _ => None,
                };
                assert_eq!(index.remove(page), want, "step {step}");
            }
            // Truncate or punch a hole, then carry out the plan.
            _ => {
                let size = MODEL_PAGES * PAGE;
                let start = rng.below(size);
                let end = if rng.below(4) == 0 {
                    u64::MAX
                } else {
                    start + rng.below(size / 4)
                };
                let plan = plan(&index, start, end);
                assert_eq!(plan, model_plan(&model, start, end), "step {step}");
                for action in plan {
                    if let UndoAction::Remove { start } = action {
                        let (order, _) = index.remove(start).unwrap();
                        for p in start..start + (1 << order) {
                            model[p as usize] = None;
                        }
                    }
                }
            }
        }
        check_against_model(&index, &model, &mut rng);
    }
    // The walk must have reached a busy index, not stayed near empty.
    assert!(next_id > 1000);
}

#[test]
fn leaf_zero_at_the_head_works_with_the_leaves_after_it() {
    let mut index: FolioIndex<u32> = FolioIndex::new();
    // Pages 0-127: leaf 0 (the head) and leaf 1 (the map) share a folio.
    index.insert(0, 7, 1).unwrap();
    assert_eq!(
        index.lookup(100),
        Some((0, 7, &1)),
        "leaf 1 finds the head's folio"
    );
    index.insert(128, 0, 2).unwrap();
    assert_eq!(heads(&index, 0, 200), [(0, 7), (128, 0)]);
    let mut rev = Vec::new();
    index.for_each_rev(0, 200, |head, order, _| rev.push((head, order)));
    assert_eq!(rev, [(128, 0), (0, 7)]);
    assert_eq!(index.remove(0), Some((7, 1)));
    assert_eq!(index.lookup(5), None);
    assert_eq!(index.next_data(0), Some(128));
    index.insert(0, 0, 3).unwrap();
    assert_eq!(
        index.lookup(0),
        Some((0, 0, &3)),
        "a new head after the old one went"
    );
}

#[test]
fn folios_far_apart_are_found_through_every_level_of_nodes() {
    // Leaves 1, 64 and 4096 sit one, two and three node levels down; the
    // last folio ends at the last index a file can have.
    let folios = [
        (0, 0),
        (64, 6),
        (64 * 64 + 8, 3),
        (64 * 4096, 9),
        (1 << 40, 0),
        (MAX_INDEX - 511, 9),
    ];
    let mut index = index_of(&folios);
    for &(head, order) in &folios {
        for page in [head, head + (1 << order) - 1] {
            assert_eq!(
                index.lookup(page).map(|(h, o, _)| (h, o)),
                Some((head, order)),
                "{page}"
            );
        }
        // Each is followed by a hole.
        assert_eq!(index.lookup(head + (1 << order)), None);
    }
    assert_eq!(heads(&index, 0, u64::MAX), folios);
    let mut backwards = Vec::new();
    index.for_each_rev(0, u64::MAX, |head, order, _| backwards.push((head, order)));
    backwards.reverse();
    assert_eq!(backwards, folios);
    assert_eq!(index.next_data(200), Some(64 * 64 + 8));
    assert_eq!(index.next_hole(64), 128);
    assert!(index.range_is_empty(128, 64 * 64 - 120));
    assert!(!index.range_is_empty(128, 64 * 64 - 119));
    for &(head, order) in folios.iter().rev() {
        assert_eq!(index.remove(head).map(|(o, _)| o), Some(order));
    }
    assert_eq!((index.nr_folios(), index.nr_pages()), (0, 0));
    assert_eq!(heads(&index, 0, u64::MAX), []);
    index.insert(1 << 20, 0, 0).unwrap();
    assert_eq!(index.lookup(1 << 20).map(|(h, _, _)| h), Some(1 << 20));
}
