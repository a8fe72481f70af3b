//! Host tests of `buddy`.

use super::*;
use std::vec;
use std::vec::Vec;

/// A host stand-in for the kernel's mem_map. Leaked, as the kernel's is
/// never freed either.
fn mem_map(nr_pages: usize) -> &'static mut [Page] {
    (0..nr_pages)
        .map(|_| Page::new_reserved())
        .collect::<Vec<_>>()
        .leak()
}

/// An allocator over [base_pfn, base_pfn + nr_pages), all of it free.
fn buddy(base_pfn: usize, nr_pages: usize) -> BuddyAllocator {
    let mut buddy = BuddyAllocator::from_slice(mem_map(nr_pages), base_pfn);
    buddy.free_range(base_pfn, base_pfn + nr_pages);
    buddy
}

fn nr_free_by_order(buddy: &BuddyAllocator) -> [usize; NR_PAGE_ORDERS] {
    core::array::from_fn(|order| buddy.nr_free(order))
}

/// Deterministic xorshift64, so a failing stress run can be replayed.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize % n
    }
}

/// Walks every free list and checks it against `free`, the frames the
/// test believes are free (indexed from base_pfn): links consistent,
/// counts right, blocks aligned, in range and disjoint, covering exactly
/// `free`, with PG_buddy on list heads only and no two free buddies left
/// unmerged.
fn check(buddy: &BuddyAllocator, free: &[bool]) {
    let len = buddy.mem_map.len();
    let mut covered = vec![false; len];
    let mut blocks = 0;
    for order in 0..NR_PAGE_ORDERS {
        let mut count = 0;
        let mut prev = PAGE_NIL;
        let mut index = buddy.free_area[order].free_list;
        while index != PAGE_NIL {
            let i = index as usize;
            let page = &buddy.mem_map[i];
            let pfn = buddy.base_pfn + i;
            assert!(page.is_buddy() && !page.is_head() && !page.is_reserved());
            assert_eq!(page.order(), order, "pfn {pfn:#x} on the wrong list");
            assert_eq!(page.buddy_prev, prev, "pfn {pfn:#x}: broken back link");
            assert!(is_aligned(pfn, 1 << order), "pfn {pfn:#x} misaligned");
            assert!(i + (1 << order) <= len, "pfn {pfn:#x} overruns mem_map");
            for frame in &mut covered[i..i + (1 << order)] {
                assert!(!*frame, "free blocks overlap at pfn {pfn:#x}");
                *frame = true;
            }
            if order < MAX_ORDER {
                if let Some(b) = buddy.index_of(pfn ^ (1 << order)) {
                    let other = &buddy.mem_map[b];
                    assert!(
                        !(other.is_buddy() && other.order() == order),
                        "pfn {pfn:#x} and its buddy are both free at order {order}"
                    );
                }
            }
            count += 1;
            assert!(count <= len, "cycle in the order {order} list");
            prev = index;
            index = page.buddy_next;
        }
        assert_eq!(count, buddy.nr_free(order), "nr_free({order})");
        blocks += count;
    }
    assert!(covered == free, "free lists disagree with the model");
    // What /proc/kpageflags reads frame by frame agrees with the lists.
    for (i, &f) in free.iter().enumerate() {
        assert_eq!(buddy.is_free(buddy.base_pfn + i), Some(f), "is_free at {i}");
    }
    assert_eq!(buddy.is_free(buddy.base_pfn + len), None);
    let heads = buddy.mem_map.iter().filter(|p| p.is_buddy()).count();
    assert_eq!(heads, blocks, "PG_buddy on a page that is on no list");
    assert_eq!(buddy.free_pages(), free.iter().filter(|&&f| f).count());
}

/// Does the model hold a free, aligned block of this order?
fn model_fits(buddy: &BuddyAllocator, free: &[bool], order: usize) -> bool {
    let size = 1 << order;
    (0..free.len()).any(|i| {
        is_aligned(buddy.base_pfn + i, size)
            && i + size <= free.len()
            && free[i..i + size].iter().all(|&f| f)
    })
}

#[test]
fn new_allocator_is_empty_and_resets_stale_pages() {
    let stale = mem_map(64);
    stale[3].take_reserved();
    stale[4].set_buddy(2);
    stale[8].set_head(3);
    let mut buddy = BuddyAllocator::from_slice(stale, 0x1000);
    assert!(buddy.mem_map.iter().all(|p| p.is_reserved()));
    assert_eq!(buddy.free_pages(), 0);
    assert_eq!(nr_free_by_order(&buddy), [0; NR_PAGE_ORDERS]);
    assert_eq!(buddy.alloc(0), None);
    assert_eq!(buddy.free(0x1008, 3), Err(BuddyError::NotAllocated));
    check(&buddy, &[false; 64]);
}

#[test]
fn aligned_range_becomes_max_order_blocks() {
    let buddy = buddy(0x40000, 4 << MAX_ORDER);
    let mut expected = [0; NR_PAGE_ORDERS];
    expected[MAX_ORDER] = 4;
    assert_eq!(nr_free_by_order(&buddy), expected);
    check(&buddy, &[true; 4 << MAX_ORDER]);
}

#[test]
fn free_range_odd_boundaries() {
    let mut buddy = BuddyAllocator::from_slice(mem_map(16), 0);
    // 1..12 carves into 1 (order 0), 2..4 (1), 4..8 (2), 8..12 (2).
    buddy.free_range(1, 12);
    assert_eq!(nr_free_by_order(&buddy)[..4], [1, 1, 2, 0]);
    let mut free = [true; 16];
    free[0] = false;
    free[12..].fill(false);
    check(&buddy, &free);

    // Filling the holes merges everything into one order-4 block.
    buddy.free_range(12, 16);
    buddy.free_range(0, 1);
    assert_eq!(nr_free_by_order(&buddy)[..6], [0, 0, 0, 0, 1, 0]);
    check(&buddy, &[true; 16]);
}

#[test]
fn free_range_in_pieces_matches_one_call() {
    let (base, len) = (0x40201, 5000);
    let whole = buddy(base, len);

    let mut pieces = BuddyAllocator::from_slice(mem_map(len), base);
    let cuts = [0, 7, 300, 301, 2049, 4999, 5000];
    for &k in &[3, 0, 5, 1, 4, 2] {
        pieces.free_range(base + cuts[k], base + cuts[k + 1]);
    }
    assert_eq!(nr_free_by_order(&pieces), nr_free_by_order(&whole));
    check(&whole, &vec![true; len]);
    check(&pieces, &vec![true; len]);
}

#[test]
fn empty_free_range_is_a_no_op() {
    let mut buddy = BuddyAllocator::from_slice(mem_map(8), 0x100);
    buddy.free_range(0x104, 0x104);
    assert_eq!(buddy.free_pages(), 0);
}

#[test]
#[should_panic(expected = "a frame of 0x4..0x5 already free or in use")]
fn free_range_twice_panics() {
    let mut buddy = buddy(0, 16);
    buddy.free_range(4, 5);
}

#[test]
#[should_panic(expected = "outside mem_map")]
fn free_range_outside_panics() {
    let mut buddy = BuddyAllocator::from_slice(mem_map(16), 0x100);
    buddy.free_range(0x108, 0x111);
}

#[test]
fn split_then_merge_back() {
    let mut buddy = buddy(0, 1 << MAX_ORDER);
    assert_eq!(buddy.alloc(0), Some(0));
    // Splitting one max-order block leaves one free block of each
    // smaller order.
    let mut expected = [1; NR_PAGE_ORDERS];
    expected[MAX_ORDER] = 0;
    assert_eq!(nr_free_by_order(&buddy), expected);
    let mut free = [true; 1 << MAX_ORDER];
    free[0] = false;
    check(&buddy, &free);

    assert_eq!(buddy.free(0, 0), Ok(()));
    let mut expected = [0; NR_PAGE_ORDERS];
    expected[MAX_ORDER] = 1;
    assert_eq!(nr_free_by_order(&buddy), expected);
}

#[test]
fn every_order_is_naturally_aligned() {
    // 0x40201 is odd, so mem_map index alignment and pfn alignment differ.
    for base in [0, 0x40201, 0x403ff] {
        let len = (3 << MAX_ORDER) + 517;
        let end = base + len;
        for order in 0..=MAX_ORDER {
            let size = 1 << order;
            let mut buddy = buddy(base, len);
            let mut used = vec![false; len];
            let mut count = 0;
            while let Some(pfn) = buddy.alloc(order) {
                assert!(is_aligned(pfn, size), "order {order}: pfn {pfn:#x}");
                assert!(
                    base <= pfn && pfn + size <= end,
                    "pfn {pfn:#x} out of range"
                );
                for frame in &mut used[pfn - base..pfn - base + size] {
                    assert!(!*frame, "pfn {pfn:#x} handed out twice");
                    *frame = true;
                }
                count += 1;
            }
            // Every aligned block inside the range must have been found.
            assert_eq!(count, end / size - base.div_ceil(size), "order {order}");
            let free: Vec<bool> = used.iter().map(|&u| !u).collect();
            check(&buddy, &free);
        }
    }
}

#[test]
fn exhaustion_returns_none() {
    let mut buddy = buddy(0x40201, 37);
    assert_eq!(buddy.alloc(6), None, "37 frames hold no 64-frame block");
    assert_eq!(buddy.alloc(MAX_ORDER + 1), None);
    assert_eq!(buddy.alloc(usize::MAX), None);
    for _ in 0..37 {
        assert!(buddy.alloc(0).is_some());
    }
    assert_eq!(buddy.free_pages(), 0);
    assert_eq!(buddy.alloc(0), None);
    check(&buddy, &[false; 37]);
}

#[test]
fn buddy_outside_range_is_not_merged() {
    // The buddy of 0x8..0x10 at order 3 is 0x0..0x8, below base_pfn.
    let mut buddy = buddy(0x8, 8);
    assert_eq!(nr_free_by_order(&buddy)[..5], [0, 0, 0, 1, 0]);
    assert_eq!(buddy.alloc(3), Some(0x8));
    assert_eq!(buddy.free(0x8, 3), Ok(()));
    assert_eq!(nr_free_by_order(&buddy)[..5], [0, 0, 0, 1, 0]);
    check(&buddy, &[true; 8]);
}

#[test]
fn reserved_frames_are_never_handed_out() {
    let mut buddy = BuddyAllocator::from_slice(mem_map(64), 0);
    buddy.free_range(0, 16);
    buddy.free_range(32, 64);
    let mut got = Vec::new();
    while let Some(pfn) = buddy.alloc(0) {
        assert!(!(16..32).contains(&pfn), "reserved pfn {pfn} handed out");
        got.push(pfn);
    }
    assert_eq!(got.len(), 48);
    assert_eq!(buddy.free(20, 0), Err(BuddyError::NotAllocated));
}

#[test]
fn double_free_is_rejected() {
    let mut buddy = buddy(0, 64);
    let a = buddy.alloc(2).unwrap();
    let b = buddy.alloc(2).unwrap();
    assert_eq!(buddy.free(a, 2), Ok(()));
    assert_eq!(buddy.free(a, 2), Err(BuddyError::NotAllocated));
    // Once a has merged with b, a is in the middle of a bigger free block.
    assert_eq!(buddy.free(b, 2), Ok(()));
    assert_eq!(buddy.free(a, 2), Err(BuddyError::NotAllocated));
    assert_eq!(buddy.free(b, 2), Err(BuddyError::NotAllocated));
    check(&buddy, &[true; 64]);
}

#[test]
fn freeing_inside_a_free_block_is_rejected() {
    let mut buddy = buddy(0, 1 << MAX_ORDER);
    assert_eq!(buddy.free(8, 0), Err(BuddyError::NotAllocated));
    assert_eq!(buddy.free(0, MAX_ORDER), Err(BuddyError::NotAllocated));
    check(&buddy, &[true; 1 << MAX_ORDER]);
}

#[test]
fn freeing_part_of_a_block_is_rejected() {
    let mut buddy = buddy(0x40000, 64);
    let pfn = buddy.alloc(3).unwrap();
    let before = nr_free_by_order(&buddy);
    assert_eq!(buddy.free(pfn + 4, 2), Err(BuddyError::NotAllocated));
    assert_eq!(buddy.free(pfn, 2), Err(BuddyError::WrongOrder));
    assert_eq!(buddy.free(pfn, 0), Err(BuddyError::WrongOrder));
    assert_eq!(nr_free_by_order(&buddy), before);
    assert_eq!(buddy.free(pfn, 3), Ok(()));
    check(&buddy, &[true; 64]);
}

#[test]
fn misaligned_free_is_rejected() {
    let mut buddy = buddy(0x40000, 64);
    let pfn = buddy.alloc(3).unwrap();
    assert_eq!(buddy.free(pfn + 1, 3), Err(BuddyError::Misaligned));
    assert_eq!(buddy.free(pfn + 4, 3), Err(BuddyError::Misaligned));
    assert_eq!(buddy.free(pfn, 3), Ok(()));
}

#[test]
fn out_of_range_free_is_rejected() {
    let (base, len) = (0x40201, 100);
    let mut buddy = buddy(base, len);
    let before = nr_free_by_order(&buddy);
    assert_eq!(buddy.free(base - 1, 0), Err(BuddyError::OutOfRange));
    assert_eq!(buddy.free(base + len, 0), Err(BuddyError::OutOfRange));
    // Starts inside, ends past the last frame (0x40264).
    assert_eq!(buddy.free(0x40264, 2), Err(BuddyError::OutOfRange));
    assert_eq!(buddy.free(0, 0), Err(BuddyError::OutOfRange));
    let top = usize::MAX & !((1 << MAX_ORDER) - 1);
    assert_eq!(buddy.free(top, MAX_ORDER), Err(BuddyError::OutOfRange));
    assert_eq!(buddy.free(base, MAX_ORDER + 1), Err(BuddyError::BadOrder));
    assert_eq!(buddy.free(base, usize::MAX), Err(BuddyError::BadOrder));
    assert_eq!(nr_free_by_order(&buddy), before);
    check(&buddy, &[true; 100]);
}

#[test]
fn freeing_everything_coalesces_back() {
    let (base, len) = (0x40201, 5000);
    let mut buddy = buddy(base, len);
    let start = nr_free_by_order(&buddy);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);

    // Fill memory with mixed orders, falling back to smaller ones.
    let mut live = Vec::new();
    while buddy.free_pages() > 0 {
        let mut order = rng.below(MAX_ORDER + 1);
        loop {
            if let Some(pfn) = buddy.alloc(order) {
                live.push((pfn, order));
                break;
            }
            order -= 1;
        }
    }
    assert_eq!(buddy.alloc(0), None);

    // Free in a random order.
    while !live.is_empty() {
        let (pfn, order) = live.swap_remove(rng.below(live.len()));
        assert_eq!(buddy.free(pfn, order), Ok(()));
    }
    assert_eq!(nr_free_by_order(&buddy), start);
    check(&buddy, &vec![true; len]);
}

#[test]
fn random_stress_against_model() {
    // Odd at both ends, so partial blocks sit at the edges.
    let (base, len) = (0x40203, 3001);
    let mut buddy = buddy(base, len);
    let start = nr_free_by_order(&buddy);
    let mut free = vec![true; len];
    let mut live: Vec<(usize, usize)> = Vec::new();
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);

    for step in 0..10_000 {
        if live.is_empty() || rng.below(100) < 55 {
            // Mostly small orders, like a kernel's real demand.
            let order = if rng.below(4) == 0 {
                rng.below(MAX_ORDER + 1)
            } else {
                rng.below(3)
            };
            match buddy.alloc(order) {
                Some(pfn) => {
                    assert!(is_aligned(pfn, 1 << order), "step {step}");
                    let i = pfn - base;
                    for frame in &mut free[i..i + (1 << order)] {
                        assert!(*frame, "step {step}: pfn {pfn:#x} already in use");
                        *frame = false;
                    }
                    live.push((pfn, order));
                }
                None => assert!(
                    !model_fits(&buddy, &free, order),
                    "step {step}: order {order} failed with room left"
                ),
            }
        } else {
            let (pfn, order) = live.swap_remove(rng.below(live.len()));
            assert_eq!(buddy.free(pfn, order), Ok(()), "step {step}");
            free[pfn - base..pfn - base + (1 << order)].fill(true);
            // Freeing it again must fail and change nothing.
            assert_eq!(buddy.free(pfn, order), Err(BuddyError::NotAllocated));
        }
        check(&buddy, &free);
    }

    for (pfn, order) in live {
        assert_eq!(buddy.free(pfn, order), Ok(()));
    }
    assert_eq!(nr_free_by_order(&buddy), start);
    check(&buddy, &vec![true; len]);
}

#[test]
fn a_split_block_frees_frame_by_frame_and_merges_back() {
    let mut b = buddy(0, 64);
    let before = nr_free_by_order(&b);
    let pfn = b.alloc(4).unwrap();
    b.split(pfn, 4, 0);
    // The block is no longer one allocation of order 4...
    assert_eq!(b.free(pfn, 4), Err(BuddyError::WrongOrder));
    // ...but sixteen of order 0, freed in any order.
    for i in (0..16).rev() {
        assert_eq!(b.free(pfn + i, 0), Ok(()));
    }
    assert_eq!(b.free(pfn + 3, 0), Err(BuddyError::NotAllocated));
    assert_eq!(nr_free_by_order(&b), before);
}

#[test]
fn a_block_splits_into_smaller_blocks() {
    let mut b = buddy(0, 64);
    let before = nr_free_by_order(&b);
    let pfn = b.alloc(4).unwrap();
    // Four blocks of order 2, as a 64K folio split into 16K folios.
    b.split(pfn, 4, 2);
    assert_eq!(b.free(pfn + 1, 0), Err(BuddyError::NotAllocated));
    assert_eq!(b.free(pfn, 0), Err(BuddyError::WrongOrder));
    for i in [12, 0, 8, 4] {
        assert_eq!(b.free(pfn + i, 2), Ok(()));
    }
    assert_eq!(nr_free_by_order(&b), before);
}
