//! Host tests of `vma_tree`.

use super::*;
use crate::mm::folio_index::tests::XorShift;
use std::vec;
use std::vec::Vec;

const SZ_1M: usize = 1 << 20;
const SZ_2M: usize = 2 << 20;

/// Address of page `n`.
const fn pg(n: usize) -> usize {
    n * PAGE_SIZE
}

/// A payload that knows where it came from: the start of the VMA it
/// was first inserted as, and how far into that VMA it now begins. So
/// `origin + offset` is its own start, and `split` can check that
/// the tree told it the truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    origin: usize,
    offset: usize,
    prot: u32,
}

fn piece(origin: usize) -> Piece {
    Piece {
        origin,
        offset: 0,
        prot: 0,
    }
}

impl Splittable for Piece {
    fn split(&self, start: usize, at: usize) -> (Self, Self) {
        assert_eq!(
            start,
            self.origin + self.offset,
            "split given the wrong start"
        );
        assert!(
            start < at && is_aligned(at, PAGE_SIZE),
            "bad cut at {at:#x}"
        );
        let upper = Piece {
            offset: self.offset + (at - start),
            ..*self
        };
        (*self, upper)
    }
}

impl Mergeable for Piece {
    /// Pieces of one VMA, side by side as they were cut, with one prot.
    fn merge(&self, start: usize, mid: usize, next: &Self, _: bool) -> Option<Self> {
        assert_eq!(
            start,
            self.origin + self.offset,
            "merge given the wrong start"
        );
        (next.origin == self.origin
            && next.offset == self.offset + (mid - start)
            && next.prot == self.prot)
            .then_some(*self)
    }
}

/// A tree of `(start, end)` VMAs, each payload a fresh `piece`.
fn tree_of(vmas: &[(usize, usize)]) -> VmaTree<Piece> {
    let mut tree = VmaTree::new();
    for &(start, end) in vmas {
        tree.insert(start, end, piece(start)).unwrap();
    }
    tree
}

fn layout(tree: &VmaTree<Piece>) -> Vec<(usize, usize, Piece)> {
    tree.iter()
        .map(|(start, end, p)| (start, end, *p))
        .collect()
}

/// The piece of a VMA first inserted at `origin`, now starting at `start`.
fn cut(origin: usize, start: usize) -> Piece {
    Piece {
        origin,
        offset: start - origin,
        prot: 0,
    }
}

/// Pages [10, 20), [30, 40), [40, 50) and [60, 70): holes below, between
/// and above, and two VMAs that touch.
fn sample() -> VmaTree<Piece> {
    tree_of(&[
        (pg(10), pg(20)),
        (pg(30), pg(40)),
        (pg(40), pg(50)),
        (pg(60), pg(70)),
    ])
}

#[test]
fn find_includes_the_start_and_excludes_the_end() {
    let tree = sample();
    let first = piece(pg(10));
    assert_eq!(tree.find(pg(10)), Some((pg(10), pg(20), &first)));
    assert_eq!(tree.find(pg(10) + 1), Some((pg(10), pg(20), &first)));
    assert_eq!(tree.find(pg(20) - 1), Some((pg(10), pg(20), &first)));
    assert_eq!(tree.find(pg(20)), None);
    assert_eq!(tree.find(pg(10) - 1), None);
    // Where two VMAs touch, the address belongs to the upper one.
    assert_eq!(tree.find(pg(40) - 1).map(|v| v.0), Some(pg(30)));
    assert_eq!(tree.find(pg(40)).map(|v| v.0), Some(pg(40)));
}

#[test]
fn find_misses_holes_and_the_empty_tree() {
    let tree = sample();
    for addr in [0, pg(5), pg(25), pg(50), pg(55), pg(70), usize::MAX] {
        assert_eq!(tree.find(addr), None, "addr {addr:#x}");
    }
    assert_eq!(VmaTree::<Piece>::new().find(0), None);
    assert_eq!(VmaTree::<Piece>::new().find(usize::MAX), None);
}

#[test]
fn find_from_returns_the_containing_vma_or_the_next_one_up() {
    let tree = sample();
    let start_of = |addr| tree.find_from(addr).map(|(start, _, _)| start);
    assert_eq!(start_of(0), Some(pg(10)));
    assert_eq!(start_of(pg(10)), Some(pg(10)));
    assert_eq!(start_of(pg(20) - 1), Some(pg(10)));
    // An end is exclusive: at it, the next VMA is the answer.
    assert_eq!(start_of(pg(20)), Some(pg(30)));
    assert_eq!(start_of(pg(30) - 1), Some(pg(30)));
    assert_eq!(start_of(pg(40) - 1), Some(pg(30)));
    assert_eq!(start_of(pg(40)), Some(pg(40)));
    assert_eq!(start_of(pg(50)), Some(pg(60)));
    assert_eq!(start_of(pg(70) - 1), Some(pg(60)));
    assert_eq!(start_of(pg(70)), None);
    assert_eq!(start_of(usize::MAX), None);
    assert_eq!(
        tree.find_from(pg(55)),
        Some((pg(60), pg(70), &piece(pg(60))))
    );
}

#[test]
fn insert_rejects_every_kind_of_overlap_and_gives_the_value_back() {
    // Each against the VMAs [10, 20), [30, 40), [40, 50), [60, 70).
    let overlapping = [
        (10, 20, "the same range"),
        (12, 15, "inside one VMA"),
        (10, 11, "the first page of one"),
        (19, 20, "the last page of one"),
        (5, 11, "across a start"),
        (19, 25, "across an end"),
        (5, 25, "around one"),
        (35, 45, "across two touching VMAs"),
        (15, 35, "across a hole between two"),
        (0, 100, "around all"),
        (49, 61, "from one VMA's last page to the next one's first"),
    ];
    for (start, end, what) in overlapping {
        let mut tree = sample();
        let before = layout(&tree);
        assert_eq!(
            tree.insert(pg(start), pg(end), piece(1)),
            Err(piece(1)),
            "{what}"
        );
        assert_eq!(layout(&tree), before, "{what}");
    }
}

#[test]
fn insert_accepts_touching_neighbours() {
    let mut tree = sample();
    // Right below, right above, and filling a hole exactly.
    assert_eq!(tree.insert(pg(5), pg(10), piece(pg(5))), Ok(()));
    assert_eq!(tree.insert(pg(70), pg(71), piece(pg(70))), Ok(()));
    assert_eq!(tree.insert(pg(50), pg(60), piece(pg(50))), Ok(()));
    assert_eq!(tree.insert(pg(20), pg(30), piece(pg(20))), Ok(()));
    assert_eq!(tree.len(), 8);
    let bounds: Vec<_> = tree.iter().map(|(start, end, _)| (start, end)).collect();
    assert_eq!(
        bounds,
        vec![
            (pg(5), pg(10)),
            (pg(10), pg(20)),
            (pg(20), pg(30)),
            (pg(30), pg(40)),
            (pg(40), pg(50)),
            (pg(50), pg(60)),
            (pg(60), pg(70)),
            (pg(70), pg(71)),
        ]
    );
    assert_eq!(tree.find(pg(20)), Some((pg(20), pg(30), &piece(pg(20)))));
}

#[test]
fn insert_rejects_empty_and_misaligned_ranges() {
    let mut tree = VmaTree::new();
    for (start, end) in [
        (pg(4), pg(4)),
        (pg(5), pg(4)),
        (pg(4) + 1, pg(5)),
        (pg(4), pg(5) - 1),
        (pg(4), pg(5) + 0x800),
    ] {
        assert_eq!(
            tree.insert(start, end, piece(7)),
            Err(piece(7)),
            "{start:#x}..{end:#x}"
        );
    }
    assert!(tree.is_empty());
    assert_eq!(tree.insert(0, pg(1), piece(0)), Ok(()));
    assert_eq!(tree.len(), 1);
}

#[test]
fn overlaps_means_sharing_at_least_one_byte() {
    let tree = sample();
    assert!(tree.overlaps(pg(10), pg(20)));
    assert!(tree.overlaps(pg(19), pg(21)));
    assert!(tree.overlaps(pg(20) - 1, pg(20)));
    assert!(tree.overlaps(pg(0), pg(10) + 1));
    assert!(tree.overlaps(pg(25), pg(65)));
    assert!(!tree.overlaps(pg(0), pg(10)));
    assert!(!tree.overlaps(pg(20), pg(30)));
    assert!(!tree.overlaps(pg(50), pg(60)));
    assert!(!tree.overlaps(pg(70), usize::MAX));
    // Empty ranges, even inside a VMA.
    assert!(!tree.overlaps(pg(15), pg(15)));
    assert!(!tree.overlaps(pg(15), pg(12)));
}

#[test]
fn range_yields_every_vma_meeting_it_in_order() {
    let tree = sample();
    let starts = |start, end| -> Vec<usize> {
        tree.range(start, end)
            .map(|(vma_start, _, _)| vma_start)
            .collect()
    };
    assert_eq!(starts(0, usize::MAX), vec![pg(10), pg(30), pg(40), pg(60)]);
    // Partly covered VMAs at both ends count.
    assert_eq!(starts(pg(15), pg(31)), vec![pg(10), pg(30)]);
    assert_eq!(starts(pg(45), pg(61)), vec![pg(40), pg(60)]);
    assert_eq!(starts(pg(12), pg(13)), vec![pg(10)]);
    // Ends are exclusive on both sides.
    assert_eq!(starts(pg(20), pg(30)), vec![]);
    assert_eq!(starts(pg(40), pg(60)), vec![pg(40)]);
    assert_eq!(starts(pg(50), pg(60)), vec![]);
    // Empty and reversed ranges meet nothing.
    assert_eq!(starts(pg(15), pg(15)), vec![]);
    assert_eq!(starts(pg(65), pg(15)), vec![]);
    let all: Vec<_> = tree.range(pg(35), pg(36)).collect();
    assert_eq!(all, vec![(pg(30), pg(40), &piece(pg(30)))]);
}

#[test]
fn iter_len_and_is_empty_track_inserts_and_removals() {
    let mut tree = VmaTree::new();
    assert!(tree.is_empty());
    assert_eq!(tree.len(), 0);
    assert_eq!(tree.iter().count(), 0);
    tree.insert(pg(8), pg(9), piece(pg(8))).unwrap();
    tree.insert(pg(2), pg(4), piece(pg(2))).unwrap();
    assert!(!tree.is_empty());
    assert_eq!(tree.len(), 2);
    assert_eq!(
        layout(&tree),
        vec![(pg(2), pg(4), piece(pg(2))), (pg(8), pg(9), piece(pg(8)))]
    );
    tree.remove_range(0, pg(100));
    assert!(tree.is_empty());
}

#[test]
fn remove_range_of_exactly_one_vma_takes_it_whole() {
    let mut tree = sample();
    assert_eq!(
        tree.remove_range(pg(30), pg(40)),
        vec![(pg(30), pg(40), piece(pg(30)))]
    );
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(20), piece(pg(10))),
            (pg(40), pg(50), piece(pg(40))),
            (pg(60), pg(70), piece(pg(60))),
        ]
    );
}

#[test]
fn remove_range_in_the_middle_of_a_vma_leaves_two_pieces() {
    let mut tree = tree_of(&[(pg(10), pg(20))]);
    let removed = tree.remove_range(pg(12), pg(15));
    // The removed piece and the upper one each come from split, with
    // offsets from the original start; the lower one keeps its value.
    assert_eq!(removed, vec![(pg(12), pg(15), cut(pg(10), pg(12)))]);
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(12), piece(pg(10))),
            (pg(15), pg(20), cut(pg(10), pg(15))),
        ]
    );
    // And again inside the upper piece, whose start is no longer the
    // original one: split must be told the piece's own start.
    let removed = tree.remove_range(pg(16), pg(17));
    assert_eq!(removed, vec![(pg(16), pg(17), cut(pg(10), pg(16)))]);
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(12), piece(pg(10))),
            (pg(15), pg(16), cut(pg(10), pg(15))),
            (pg(17), pg(20), cut(pg(10), pg(17))),
        ]
    );
}

#[test]
fn remove_range_from_a_vma_start_or_to_its_end_cuts_once() {
    let mut tree = tree_of(&[(pg(10), pg(20))]);
    assert_eq!(
        tree.remove_range(pg(10), pg(13)),
        vec![(pg(10), pg(13), piece(pg(10)))]
    );
    assert_eq!(layout(&tree), vec![(pg(13), pg(20), cut(pg(10), pg(13)))]);
    assert_eq!(
        tree.remove_range(pg(18), pg(20)),
        vec![(pg(18), pg(20), cut(pg(10), pg(18)))]
    );
    assert_eq!(layout(&tree), vec![(pg(13), pg(18), cut(pg(10), pg(13)))]);
}

#[test]
fn remove_range_across_several_vmas_cuts_the_partial_ends() {
    let mut tree = sample();
    let removed = tree.remove_range(pg(15), pg(45));
    assert_eq!(
        removed,
        vec![
            (pg(15), pg(20), cut(pg(10), pg(15))),
            (pg(30), pg(40), piece(pg(30))),
            (pg(40), pg(45), piece(pg(40))),
        ]
    );
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(15), piece(pg(10))),
            (pg(45), pg(50), cut(pg(40), pg(45))),
            (pg(60), pg(70), piece(pg(60))),
        ]
    );
}

#[test]
fn remove_range_over_holes_takes_only_the_vmas() {
    let mut tree = sample();
    // Starting and ending in holes, with holes between.
    let removed = tree.remove_range(pg(25), pg(55));
    assert_eq!(
        removed,
        vec![
            (pg(30), pg(40), piece(pg(30))),
            (pg(40), pg(50), piece(pg(40)))
        ]
    );
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(20), piece(pg(10))),
            (pg(60), pg(70), piece(pg(60)))
        ]
    );
    // Everything, from address 0 to the last page boundary.
    let removed = tree.remove_range(0, usize::MAX & !(PAGE_SIZE - 1));
    assert_eq!(removed.len(), 2);
    assert!(tree.is_empty());
}

#[test]
fn remove_range_with_nothing_inside_changes_nothing() {
    let mut tree = sample();
    let before = layout(&tree);
    for (start, end) in [
        (pg(0), pg(10)),
        (pg(20), pg(30)),
        (pg(50), pg(60)),
        (pg(70), pg(1000)),
        // Empty and reversed ranges, even inside a VMA: no cut either.
        (pg(15), pg(15)),
        (pg(35), pg(12)),
    ] {
        assert_eq!(
            tree.remove_range(start, end),
            vec![],
            "{start:#x}..{end:#x}"
        );
        assert_eq!(layout(&tree), before, "{start:#x}..{end:#x}");
    }
    assert_eq!(VmaTree::<Piece>::new().remove_range(0, pg(1)), vec![]);
}

#[test]
#[should_panic(expected = "is not page-aligned")]
fn remove_range_panics_on_a_misaligned_range() {
    sample().remove_range(pg(12) + 0x10, pg(15));
}

#[test]
fn splits_needed_counts_the_cuts_split_at_boundaries_makes() {
    let tree = sample();
    for (start, end, want) in [
        (pg(15), pg(45), 2), // inside [10,20) and inside [40,50)
        (pg(10), pg(20), 0), // exactly a VMA
        (pg(12), pg(14), 2), // both inside one VMA
        (pg(20), pg(30), 0), // a hole
        (pg(25), pg(35), 1), // a hole, then inside [30,40)
        (pg(40), pg(40), 0), // empty
    ] {
        let mut cut = sample();
        let before = cut.len();
        cut.split_at_boundaries(start, end);
        assert_eq!(tree.splits_needed(start, end), want, "{start:#x}..{end:#x}");
        assert_eq!(cut.len() - before, want);
    }
}

#[test]
fn split_at_boundaries_then_range_mut_changes_exactly_the_range() {
    // What mprotect does: cut, then change what lies inside.
    let mut tree = sample();
    tree.split_at_boundaries(pg(15), pg(45));
    for (_, _, p) in tree.range_mut(pg(15), pg(45)) {
        p.prot = 7;
    }
    let protected = |origin, start| Piece {
        prot: 7,
        ..cut(origin, start)
    };
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(15), piece(pg(10))),
            (pg(15), pg(20), protected(pg(10), pg(15))),
            (pg(30), pg(40), protected(pg(30), pg(30))),
            (pg(40), pg(45), protected(pg(40), pg(40))),
            (pg(45), pg(50), cut(pg(40), pg(45))),
            (pg(60), pg(70), piece(pg(60))),
        ]
    );

    // Both cuts inside one VMA leave three pieces.
    let mut tree = tree_of(&[(pg(10), pg(20))]);
    tree.split_at_boundaries(pg(12), pg(14));
    let changed: Vec<_> = tree
        .range_mut(pg(12), pg(14))
        .map(|(start, end, p)| {
            p.prot = 1;
            (start, end)
        })
        .collect();
    assert_eq!(changed, vec![(pg(12), pg(14))]);
    assert_eq!(
        layout(&tree),
        vec![
            (pg(10), pg(12), piece(pg(10))),
            (
                pg(12),
                pg(14),
                Piece {
                    prot: 1,
                    ..cut(pg(10), pg(12))
                }
            ),
            (pg(14), pg(20), cut(pg(10), pg(14))),
        ]
    );
}

#[test]
fn range_mut_skips_vmas_only_partly_inside() {
    let mut tree = sample();
    let inside: Vec<_> = tree
        .range_mut(pg(15), pg(45))
        .map(|(start, end, _)| (start, end))
        .collect();
    assert_eq!(inside, vec![(pg(30), pg(40))]);
    assert_eq!(tree.range_mut(pg(12), pg(14)).count(), 0);
    assert_eq!(tree.range_mut(pg(40), pg(30)).count(), 0);
    assert_eq!(tree.range_mut(0, usize::MAX).count(), 4);
}

#[test]
fn split_at_existing_boundaries_or_in_holes_changes_nothing() {
    let mut tree = sample();
    let before = layout(&tree);
    tree.split_at_boundaries(pg(10), pg(20));
    tree.split_at_boundaries(pg(30), pg(50));
    tree.split_at_boundaries(pg(25), pg(55));
    tree.split_at_boundaries(0, pg(1000));
    tree.split_at_boundaries(pg(15), pg(15));
    tree.split_at_boundaries(pg(15), pg(12));
    assert_eq!(layout(&tree), before);
}

#[test]
#[should_panic(expected = "is not page-aligned")]
fn split_at_boundaries_panics_on_a_misaligned_range() {
    sample().split_at_boundaries(pg(12), pg(15) - 1);
}

#[test]
fn get_unmapped_area_in_an_empty_tree_takes_the_top() {
    let tree = VmaTree::<Piece>::new();
    let high = 0x40_0000_0000;
    assert_eq!(
        tree.get_unmapped_area(pg(3), PAGE_SIZE, None, 0, high),
        Some(high - pg(3))
    );
    // A `high` that is not itself aligned: the start is aligned down.
    assert_eq!(
        tree.get_unmapped_area(pg(3), PAGE_SIZE, None, 0, high + 0x123),
        Some(high - pg(3))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(1), SZ_2M, None, 0, high - pg(1)),
        Some(high - SZ_2M)
    );
    // The whole window, exactly.
    assert_eq!(
        tree.get_unmapped_area(pg(8), PAGE_SIZE, None, pg(8), pg(16)),
        Some(pg(8))
    );
}

#[test]
fn get_unmapped_area_takes_the_highest_gap_that_fits() {
    // Gaps: [70, 100) above everything, [50, 60), [20, 30), [0, 10).
    let tree = sample();
    let find = |pages| tree.get_unmapped_area(pg(pages), PAGE_SIZE, None, 0, pg(100));
    assert_eq!(find(1), Some(pg(99)));
    assert_eq!(find(30), Some(pg(70)));
    // Below page 72 the top gap is [70, 72): anything bigger goes to
    // the next gap down that fits, at its top.
    let below_72 = |pages| tree.get_unmapped_area(pg(pages), PAGE_SIZE, None, 0, pg(72));
    assert_eq!(below_72(2), Some(pg(70)));
    assert_eq!(below_72(3), Some(pg(57)));
    assert_eq!(below_72(10), Some(pg(50)));
    assert_eq!(below_72(11), None);
    // Window ending inside a VMA: the gap above it does not count.
    let below_65 = |pages| tree.get_unmapped_area(pg(pages), PAGE_SIZE, None, 0, pg(65));
    assert_eq!(below_65(4), Some(pg(56)));
    // Window starting inside a gap: the gap is cut at `low`.
    assert_eq!(
        tree.get_unmapped_area(pg(3), PAGE_SIZE, None, pg(25), pg(60)),
        Some(pg(57))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(10), PAGE_SIZE, None, pg(25), pg(60)),
        Some(pg(50))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(5), PAGE_SIZE, None, pg(25), pg(50)),
        Some(pg(25))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(6), PAGE_SIZE, None, pg(25), pg(50)),
        None
    );
    // Below page 50, [20, 30) and [0, 10) both fit 10 pages exactly:
    // the higher one wins until the window cuts into it.
    assert_eq!(
        tree.get_unmapped_area(pg(10), PAGE_SIZE, None, 0, pg(50)),
        Some(pg(20))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(10), PAGE_SIZE, None, 0, pg(30)),
        Some(pg(20))
    );
    assert_eq!(
        tree.get_unmapped_area(pg(10), PAGE_SIZE, None, 0, pg(29)),
        Some(pg(0))
    );
}

#[test]
fn get_unmapped_area_aligns_inside_the_gap() {
    // Gaps [0, 1M) and [2M+4K, 5M-4K). The upper one is wide enough
    // for 2M, but the only 2M multiple inside it is 4M, and 2M itself
    // is the lower VMA's last page.
    let mut tree = VmaTree::new();
    tree.insert(SZ_1M, SZ_2M + pg(1), piece(SZ_1M)).unwrap();
    tree.insert(5 * SZ_1M - pg(1), 6 * SZ_1M, piece(5 * SZ_1M - pg(1)))
        .unwrap();
    let high = 6 * SZ_1M;
    // Just under 1M, 2M-aligned: at 4M.
    assert_eq!(
        tree.get_unmapped_area(SZ_1M - pg(1), SZ_2M, None, 0, high),
        Some(4 * SZ_1M)
    );
    // 2M long and 2M-aligned fits nowhere up there; [0, 1M) is too small.
    assert_eq!(tree.get_unmapped_area(SZ_2M, SZ_2M, None, 0, high), None);
    // Page-aligned, the same 2M fits at the top of the upper gap.
    assert_eq!(
        tree.get_unmapped_area(SZ_2M, PAGE_SIZE, None, 0, high),
        Some(5 * SZ_1M - pg(1) - SZ_2M)
    );
    // 1M-aligned: 3M is the highest 1M multiple leaving room below 5M-4K.
    assert_eq!(
        tree.get_unmapped_area(SZ_1M, SZ_1M, None, 0, high),
        Some(3 * SZ_1M)
    );
    // A gap wide enough for `len` but with no aligned start in it is
    // passed over for a lower one: [0, 1M) holds 64K at 960K.
    assert_eq!(
        tree.get_unmapped_area(pg(16), 0x10000, None, 0, SZ_2M + pg(16) + 0x8000),
        Some(SZ_1M - 0x10000)
    );
}

#[test]
fn get_unmapped_area_takes_a_free_hint() {
    let tree = sample();
    let at = |hint, pages| tree.get_unmapped_area(pg(pages), PAGE_SIZE, Some(hint), 0, pg(100));
    assert_eq!(at(pg(20), 10), Some(pg(20)));
    assert_eq!(at(pg(0), 10), Some(pg(0)));
    assert_eq!(at(pg(52), 3), Some(pg(52)));
    assert_eq!(at(pg(90), 10), Some(pg(90)));
    // An aligned hint with a larger alignment.
    assert_eq!(
        tree.get_unmapped_area(pg(4), pg(4), Some(pg(24)), 0, pg(100)),
        Some(pg(24))
    );
}

#[test]
fn get_unmapped_area_ignores_a_hint_it_cannot_take() {
    let tree = sample();
    let top = Some(pg(99));
    let with_hint = |hint, pages, low, high| {
        tree.get_unmapped_area(pg(pages), PAGE_SIZE, Some(hint), low, high)
    };
    // Overlapping a VMA: by its first page, its last, or from inside one.
    assert_eq!(with_hint(pg(5), 6, 0, pg(100)), Some(pg(94)));
    assert_eq!(with_hint(pg(19), 1, 0, pg(100)), top);
    assert_eq!(with_hint(pg(45), 1, 0, pg(100)), top);
    assert_eq!(with_hint(pg(20), 11, 0, pg(100)), Some(pg(89)));
    // Outside [low, high), or running past `high`.
    assert_eq!(with_hint(pg(80), 1, pg(90), pg(100)), top);
    assert_eq!(with_hint(pg(99), 2, 0, pg(100)), Some(pg(98)));
    assert_eq!(with_hint(pg(100), 1, 0, pg(100)), top);
    // Not a multiple of the page size, or of the alignment asked for.
    assert_eq!(with_hint(pg(80) + 1, 1, 0, pg(100)), top);
    assert_eq!(
        tree.get_unmapped_area(pg(2), pg(2), Some(pg(81)), 0, pg(100)),
        Some(pg(98))
    );
    // So close to the top of the address space that hint + len wraps.
    assert_eq!(
        tree.get_unmapped_area(
            pg(2),
            PAGE_SIZE,
            Some(usize::MAX & !(PAGE_SIZE - 1)),
            0,
            usize::MAX
        ),
        Some((usize::MAX & !(PAGE_SIZE - 1)) - pg(2))
    );
}

#[test]
fn get_unmapped_area_without_room_finds_nothing() {
    let full = tree_of(&[(pg(0), pg(10)), (pg(10), pg(100))]);
    assert_eq!(
        full.get_unmapped_area(pg(1), PAGE_SIZE, None, 0, pg(100)),
        None
    );
    assert_eq!(
        full.get_unmapped_area(pg(1), PAGE_SIZE, Some(pg(50)), 0, pg(100)),
        None
    );
    // Room only outside the window.
    assert_eq!(
        full.get_unmapped_area(pg(1), PAGE_SIZE, None, 0, pg(101)),
        Some(pg(100))
    );
    let tree = sample();
    assert_eq!(
        tree.get_unmapped_area(pg(11), PAGE_SIZE, None, 0, pg(70)),
        None
    );
    assert_eq!(
        tree.get_unmapped_area(pg(1), PAGE_SIZE, None, pg(30), pg(50)),
        None
    );
    // Empty and reversed windows.
    assert_eq!(
        tree.get_unmapped_area(pg(1), PAGE_SIZE, None, pg(80), pg(80)),
        None
    );
    assert_eq!(
        tree.get_unmapped_area(pg(1), PAGE_SIZE, None, pg(90), pg(80)),
        None
    );
}

#[test]
fn get_unmapped_area_rejects_bad_lengths_and_alignments() {
    let tree = VmaTree::<Piece>::new();
    let high = 1 << 40;
    for len in [0, 1, PAGE_SIZE + 1, PAGE_SIZE - 1] {
        assert_eq!(
            tree.get_unmapped_area(len, PAGE_SIZE, None, 0, high),
            None,
            "len {len:#x}"
        );
    }
    for align in [0, 1, 2048, PAGE_SIZE + 1, 3 * PAGE_SIZE] {
        assert_eq!(
            tree.get_unmapped_area(PAGE_SIZE, align, None, 0, high),
            None,
            "align {align:#x}"
        );
    }
    // Longer than the window.
    assert_eq!(
        tree.get_unmapped_area(high + pg(1), PAGE_SIZE, None, 0, high),
        None
    );
    assert_eq!(
        tree.get_unmapped_area(high + pg(1), PAGE_SIZE, Some(0), 0, high),
        None
    );
    // The longest length there is fits only at 0; a hint whose end
    // would wrap past the top of the address space is ignored.
    let biggest = usize::MAX & !(PAGE_SIZE - 1);
    assert_eq!(
        tree.get_unmapped_area(biggest, PAGE_SIZE, Some(pg(1)), 0, usize::MAX),
        Some(0)
    );
    assert_eq!(
        tree.get_unmapped_area(biggest, PAGE_SIZE, None, pg(1), usize::MAX),
        None
    );
    // An alignment above the window finds nothing but address 0.
    assert_eq!(
        tree.get_unmapped_area(pg(1), 1 << 41, None, 0, high),
        Some(0)
    );
    assert_eq!(
        tree.get_unmapped_area(pg(1), 1 << 41, None, pg(1), high),
        None
    );
}

/// Pages in the randomized test's address range.
const NR_PAGES: usize = 256;
/// Where that range begins: aligned well beyond any alignment the test
/// asks for.
const BASE: usize = 1 << 30;

/// For each page of [BASE, BASE + NR_PAGES pages): the origin of the VMA
/// covering it, if any.
type Model = [Option<usize>; NR_PAGES];

fn page_addr(page: usize) -> usize {
    BASE + pg(page)
}

fn model_is_free(model: &Model, start: usize, end: usize) -> bool {
    (start..end).all(|page| model[page].is_none())
}

/// The answer `get_unmapped_area` should give, by trying every page.
fn model_unmapped_area(
    model: &Model,
    pages: usize,
    align: usize,
    hint: Option<usize>,
    low: usize,
    high: usize,
) -> Option<usize> {
    if pages == 0 {
        return None;
    }
    let fits = |page: usize| {
        let addr = page_addr(page);
        addr.is_multiple_of(align)
            && addr >= low
            && addr + pg(pages) <= high
            && model_is_free(model, page, page + pages)
    };
    if let Some(page) = hint.filter(|&page| fits(page)) {
        return Some(page_addr(page));
    }
    (0..NR_PAGES).rev().find(|&page| fits(page)).map(page_addr)
}

/// Checks the tree against the model: the same pages covered, by
/// VMAs from the same origins, each payload's start its real one, and
/// every VMA non-empty, page-aligned and in order.
fn check(tree: &VmaTree<Piece>, model: &Model) {
    let mut covered = [None; NR_PAGES];
    let mut last_end = 0;
    for (start, end, p) in tree.iter() {
        assert!(last_end <= start && start < end);
        assert!(is_aligned(start, PAGE_SIZE) && is_aligned(end, PAGE_SIZE));
        assert_eq!(p.origin + p.offset, start, "payload of {start:#x}");
        for addr in (start..end).step_by(PAGE_SIZE) {
            covered[(addr - BASE) / PAGE_SIZE] = Some(p.origin);
        }
        last_end = end;
    }
    assert_eq!(&covered, model);
}

#[test]
fn random_operations_match_a_page_model() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut tree = VmaTree::new();
    let mut model: Model = [None; NR_PAGES];
    let (mut inserted, mut removed, mut found) = (0, 0, 0);
    for step in 0..20_000 {
        // Page bounds, occasionally empty or reversed.
        let a = rng.below(NR_PAGES + 1);
        let b = if rng.below(4) == 0 {
            rng.below(NR_PAGES + 1)
        } else {
            (a + 1 + rng.below(16)).min(NR_PAGES)
        };
        match rng.below(5) {
            0 | 1 => {
                let ok = a < b && model_is_free(&model, a, b);
                let result = tree.insert(page_addr(a), page_addr(b), piece(page_addr(a)));
                assert_eq!(result.is_ok(), ok, "step {step}: insert {a}..{b}");
                if ok {
                    model[a..b].fill(Some(page_addr(a)));
                    inserted += 1;
                }
            }
            2 => {
                let pieces = tree.remove_range(page_addr(a), page_addr(b));
                let mut expected = [None; NR_PAGES];
                if a < b {
                    expected[a..b].copy_from_slice(&model[a..b]);
                    model[a..b].fill(None);
                }
                let mut got = [None; NR_PAGES];
                let mut last_end = page_addr(a);
                for (start, end, p) in pieces {
                    assert!(last_end <= start && start < end && end <= page_addr(b));
                    assert_eq!(p.origin + p.offset, start, "step {step}");
                    for addr in (start..end).step_by(PAGE_SIZE) {
                        got[(addr - BASE) / PAGE_SIZE] = Some(p.origin);
                    }
                    last_end = end;
                    removed += 1;
                }
                assert_eq!(got, expected, "step {step}: remove {a}..{b}");
            }
            3 => {
                tree.split_at_boundaries(page_addr(a), page_addr(b));
                if a < b {
                    for addr in [page_addr(a), page_addr(b)] {
                        let inside = tree.find(addr).is_some_and(|(start, _, _)| start < addr);
                        assert!(!inside, "step {step}: {addr:#x} still inside a VMA");
                    }
                }
            }
            _ => {
                let pages = rng.below(17);
                let align = PAGE_SIZE << rng.below(6);
                let hint = (rng.below(2) == 0).then(|| rng.below(NR_PAGES));
                let (low, high) = (page_addr(a.min(b)), page_addr(a.max(b)));
                // Sometimes bounds that are not page-aligned.
                let (low, high) = if rng.below(4) == 0 {
                    (
                        low + rng.below(PAGE_SIZE),
                        high.saturating_sub(rng.below(PAGE_SIZE)),
                    )
                } else {
                    (low, high)
                };
                let want = model_unmapped_area(&model, pages, align, hint, low, high);
                let got = tree.get_unmapped_area(pg(pages), align, hint.map(page_addr), low, high);
                assert_eq!(
                    got, want,
                    "step {step}: {pages}p align {align:#x} hint {hint:?} {low:#x}..{high:#x}"
                );
                found += usize::from(got.is_some());
            }
        }
        // Lookups against the model, at a random page.
        let page = rng.below(NR_PAGES);
        let addr = page_addr(page) + rng.below(PAGE_SIZE);
        assert_eq!(tree.find(addr).map(|(_, _, p)| p.origin), model[page]);
        let next = (page..NR_PAGES).find(|&q| model[q].is_some());
        let from = tree.find_from(addr);
        assert_eq!(from.map(|(_, _, p)| p.origin), next.and_then(|q| model[q]));
        if let (Some((start, end, _)), Some(q)) = (from, next) {
            assert!(start <= page_addr(q) && page_addr(q) < end);
        }
        if a < b {
            let busy = !model_is_free(&model, a, b);
            assert_eq!(tree.overlaps(page_addr(a), page_addr(b)), busy);
            assert_eq!(
                tree.range(page_addr(a), page_addr(b)).next().is_some(),
                busy
            );
        }
        check(&tree, &model);
    }
    // The walk really exercised each path.
    assert!(inserted > 1000 && removed > 1000 && found > 1000);
}

/// mprotect [from, to) to `prot`, as the kernel does it: cut, change,
/// merge.
fn protect(tree: &mut VmaTree<Piece>, from: usize, to: usize, prot: u32) {
    tree.split_at_boundaries(from, to);
    for (_, _, p) in tree.range_mut(from, to) {
        p.prot = prot;
    }
    tree.merge_range(from, to, |_, _| {});
}

#[test]
fn merge_range_joins_what_a_change_made_alike_again() {
    let mut tree = sample();
    let before = layout(&tree);
    protect(&mut tree, pg(12), pg(14), 7);
    protect(&mut tree, pg(16), pg(18), 7);
    assert_eq!(
        tree.len(),
        8,
        "[10,12) [12,14) [14,16) [16,18) [18,20), three more"
    );
    protect(&mut tree, pg(12), pg(18), 7);
    assert_eq!(
        layout(&tree)[..3],
        [
            (pg(10), pg(12), piece(pg(10))),
            (
                pg(12),
                pg(18),
                Piece {
                    prot: 7,
                    ..cut(pg(10), pg(12))
                }
            ),
            (pg(18), pg(20), cut(pg(10), pg(18))),
        ]
    );
    protect(&mut tree, pg(11), pg(19), 0);
    assert_eq!(layout(&tree), before, "back to where it began");
}

#[test]
fn merge_range_leaves_unlike_neighbours_and_holes_apart() {
    let mut tree = sample();
    let before = layout(&tree);
    // [30, 40) and [40, 50) touch but came from different VMAs; [20, 30)
    // and [50, 60) are holes.
    tree.merge_range(pg(0), pg(100), |_, _| {});
    assert_eq!(layout(&tree), before);
    protect(&mut tree, pg(44), pg(46), 1);
    protect(&mut tree, pg(45), pg(50), 1);
    assert_eq!(
        layout(&tree)[2..4],
        [
            (pg(40), pg(44), piece(pg(40))),
            (
                pg(44),
                pg(50),
                Piece {
                    prot: 1,
                    ..cut(pg(40), pg(44))
                }
            ),
        ]
    );
}

#[test]
fn merge_range_reaches_only_the_neighbours_touching_it() {
    // [0,2) [2,4)=1 [4,6) [6,8) [8,10): cut, but left unmerged.
    let mut tree = tree_of(&[(pg(0), pg(10))]);
    for (from, prot) in [(pg(2), 1), (pg(4), 0), (pg(6), 0)] {
        tree.split_at_boundaries(from, from + pg(2));
        for (_, _, p) in tree.range_mut(from, from + pg(2)) {
            p.prot = prot;
        }
    }
    assert_eq!(tree.len(), 5);
    for (_, _, p) in tree.range_mut(pg(2), pg(4)) {
        p.prot = 0;
    }
    tree.merge_range(pg(2), pg(4), |_, _| {});
    assert_eq!(
        layout(&tree)
            .iter()
            .map(|&(s, e, _)| (s, e))
            .collect::<Vec<_>>(),
        vec![(pg(0), pg(6)), (pg(6), pg(8)), (pg(8), pg(10))],
        "only [2,4) and the neighbours touching it joined"
    );
}
