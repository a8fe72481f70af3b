//! The page-cache index of one file: which folio holds each page of the file,
//! where folios are naturally aligned blocks of 2^order pages (Linux: the
//! `mapping->i_pages` xarray with multi-index entries, `mm/filemap.c`).
//!
//! A large folio is one entry covering all of its pages, so a lookup of any
//! page inside it finds the folio's first page (its head). Linux stores that
//! one entry in every slot of the xarray the folio spans; we store it once,
//! in the slot of its first page, and answer "which folio covers page i"
//! with the last folio starting at or before i. Folios never overlap, so
//! that is the only one that can.
//!
//! The slots live in leaves of 64, as the xarray's do (`XA_CHUNK_SIZE`),
//! each with a bitmap of the slots in use, so finding the last folio at or
//! before a page is a mask and a count of leading zeros. A `BTreeMap` finds
//! the leaves in place of the xarray's upper levels. A file's index costs
//! about 25 bytes a page where it is dense; a fault-around reads one leaf.
//!
//! The second half of the file plans truncation and hole punching
//! (`shmem_undo_range`, `truncate_inode_pages_range`): given a byte range,
//! which folios go and which only get zeroed.
//!
//! Where we simplify: no marks (dirty, writeback), no shadow or swap value
//! entries, no RCU readers (the caller holds the file's lock for every call),
//! and large folios are never split, so a folio only partly inside a removed
//! range is zeroed and kept whole.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;

use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE};

/// Largest folio the page cache holds: 2^9 pages, one 2 MiB PMD (Linux:
/// `MAX_PAGECACHE_ORDER`, which is `HPAGE_PMD_ORDER` with 4K pages).
pub const MAX_PAGECACHE_ORDER: u8 = 9;

/// The last page index a file can have: the page holding byte `u64::MAX`.
/// Bounding indices here keeps every "one past the last page" sum in a
/// `u64` (Linux bounds files by `MAX_LFS_FILESIZE` for the same reason).
pub const MAX_INDEX: u64 = u64::MAX >> PAGE_SHIFT;

/// Why `FolioIndex::insert` refused a folio. The index is untouched whenever
/// it does, and the item comes back with the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// `order` is above `MAX_PAGECACHE_ORDER`.
    BadOrder,
    /// `start` is not a multiple of 2^order, so the folio is not naturally
    /// aligned.
    Misaligned,
    /// The folio would reach past `MAX_INDEX`.
    OutOfRange,
    /// Some page of the folio is already covered by another folio (Linux:
    /// `filemap_add_folio` failing with `-EEXIST`).
    Occupied,
}

/// One folio in the index, in the slot of its first page.
#[derive(Debug)]
struct Entry<T> {
    order: u8,
    item: T,
}

/// log2 of the slots in a leaf.
const LEAF_SHIFT: u32 = 6;
/// Slots in a leaf (Linux: `XA_CHUNK_SIZE`).
const LEAF_SLOTS: usize = 1 << LEAF_SHIFT;

/// The folios that start in 64 consecutive pages. Never empty while in
/// the index.
#[derive(Debug)]
struct Leaf<T> {
    /// Bit i set: slot i holds a folio.
    used: u64,
    slots: [Option<Entry<T>>; LEAF_SLOTS],
}

/// The set bits of a word, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let bit = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            bit
        })
    }
}

/// The leaf holding page `index`, and its slot there.
const fn leaf_of(index: u64) -> (u64, usize) {
    (
        index >> LEAF_SHIFT,
        (index & (LEAF_SLOTS as u64 - 1)) as usize,
    )
}

/// The folios of one file, by page index (Linux: `struct address_space`'s
/// `i_pages` and `nrpages`).
#[derive(Debug)]
pub struct FolioIndex<T> {
    leaves: BTreeMap<u64, Box<Leaf<T>>>,
    /// Pages covered by all folios together, kept as they come and go so
    /// `nr_pages` needs no walk (Linux: `mapping->nrpages`).
    nr_pages: u64,
    nr_folios: usize,
}

impl<T> Default for FolioIndex<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Pages in a folio of `order`.
const fn folio_nr_pages(order: u8) -> u64 {
    1 << order
}

/// Whether the folio starting at `head` covers page `index` (>= `head`).
/// `head | (nr - 1)` is its last page; it cannot overflow the way
/// `head + nr` could, because `head` is aligned to `nr`.
const fn covers(head: u64, order: u8, index: u64) -> bool {
    index <= head | (folio_nr_pages(order) - 1)
}

impl<T> FolioIndex<T> {
    pub const fn new() -> Self {
        FolioIndex {
            leaves: BTreeMap::new(),
            nr_pages: 0,
            nr_folios: 0,
        }
    }

    /// The folio starting last at or before page `index`: the only one
    /// that can cover it. Most lookups end in the page's own leaf, so that
    /// is searched for first.
    fn last_at_or_before(&self, index: u64) -> Option<(u64, &Entry<T>)> {
        let (leaf_index, slot) = leaf_of(index);
        if let Some(leaf) = self.leaves.get(&leaf_index) {
            let below = leaf.used & (u64::MAX >> (63 - slot));
            if below != 0 {
                return Self::last_in(leaf_index, leaf, below);
            }
        }
        let (&at, leaf) = self.leaves.range(..leaf_index).next_back()?;
        Self::last_in(at, leaf, leaf.used)
    }

    /// The last folio of leaf `at` among the slots set in `used` (not 0).
    fn last_in(at: u64, leaf: &Leaf<T>, used: u64) -> Option<(u64, &Entry<T>)> {
        let bit = 63 - used.leading_zeros() as usize;
        let entry = leaf.slots[bit].as_ref()?;
        Some(((at << LEAF_SHIFT) | bit as u64, entry))
    }

    /// The folio covering page `index`: (first index, order, &item)
    /// (Linux: `filemap_get_entry`).
    pub fn lookup(&self, index: u64) -> Option<(u64, u8, &T)> {
        let (head, entry) = self.last_at_or_before(index)?;
        covers(head, entry.order, index).then_some((head, entry.order, &entry.item))
    }

    /// Adds a folio covering pages [start, start + 2^order) (Linux:
    /// `filemap_add_folio`).
    pub fn insert(&mut self, start: u64, order: u8, item: T) -> Result<(), (InsertError, T)> {
        if order > MAX_PAGECACHE_ORDER {
            return Err((InsertError::BadOrder, item));
        }
        let nr = folio_nr_pages(order);
        if !start.is_multiple_of(nr) {
            return Err((InsertError::Misaligned, item));
        }
        // MAX_INDEX + 1 is a multiple of every folio size, so an aligned
        // folio starting at or below MAX_INDEX also ends there.
        if start > MAX_INDEX {
            return Err((InsertError::OutOfRange, item));
        }
        if !self.range_is_empty(start, nr) {
            return Err((InsertError::Occupied, item));
        }
        let (leaf_index, slot) = leaf_of(start);
        let leaf = self.leaves.entry(leaf_index).or_insert_with(|| {
            Box::new(Leaf {
                used: 0,
                slots: [const { None }; LEAF_SLOTS],
            })
        });
        leaf.used |= 1 << slot;
        leaf.slots[slot] = Some(Entry { order, item });
        self.nr_pages += nr;
        self.nr_folios += 1;
        Ok(())
    }

    /// Takes out the folio whose first page is `start`. A page in the middle
    /// of a folio is not a way to name it: that returns `None` (Linux:
    /// `filemap_remove_folio`, which is handed the folio itself).
    pub fn remove(&mut self, start: u64) -> Option<(u8, T)> {
        let (leaf_index, slot) = leaf_of(start);
        let leaf = self.leaves.get_mut(&leaf_index)?;
        let entry = leaf.slots[slot].take()?;
        leaf.used &= !(1 << slot);
        if leaf.used == 0 {
            self.leaves.remove(&leaf_index);
        }
        self.nr_pages -= folio_nr_pages(entry.order);
        self.nr_folios -= 1;
        Some((entry.order, entry.item))
    }

    /// True if no folio covers any page in [start, start + nr_pages) (Linux:
    /// `xa_find` over the range coming back empty). A range running past the
    /// end of the index space is cut off there.
    pub fn range_is_empty(&self, start: u64, nr_pages: u64) -> bool {
        if nr_pages == 0 {
            return true;
        }
        let last = start.saturating_add(nr_pages - 1);
        // Of the folios starting at or before `last`, the one starting last
        // ends last too (none overlap), so if it ends before `start` they
        // all do.
        match self.last_at_or_before(last) {
            Some((head, entry)) => !covers(head, entry.order, start),
            None => true,
        }
    }

    /// Every folio whose first page is in leaves [first, last], in index
    /// order: (first index, entry).
    fn heads(&self, first: u64, last: u64) -> impl Iterator<Item = (u64, &Entry<T>)> {
        self.leaves.range(first..=last).flat_map(|(&at, leaf)| {
            Bits(leaf.used).filter_map(move |bit| {
                let entry = leaf.slots[bit].as_ref()?;
                Some(((at << LEAF_SHIFT) | bit as u64, entry))
            })
        })
    }

    /// Folios overlapping page range [start, end), in index order, including
    /// one that begins before `start` or runs past `end`.
    pub fn range(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u8, &T)> {
        let (first, end) = if start < end {
            (self.lookup(start).map_or(start, |(head, _, _)| head), end)
        } else {
            (1, 0)
        };
        self.heads(first >> LEAF_SHIFT, end.saturating_sub(1) >> LEAF_SHIFT)
            .skip_while(move |&(head, _)| head < first)
            .take_while(move |&(head, _)| head < end)
            .map(|(head, entry)| (head, entry.order, &entry.item))
    }

    /// Calls `f(first index, order, &item)` for each folio `range` yields,
    /// last first (fault-around, where order does not matter): a walk back
    /// from the end, over each leaf's bitmap, that stops at the first folio
    /// ending before `start`.
    pub fn for_each_rev(&self, start: u64, end: u64, mut f: impl FnMut(u64, u8, &T)) {
        if start >= end {
            return;
        }
        let (last_leaf, last_slot) = leaf_of(end - 1);
        for (&at, leaf) in self.leaves.range(..=last_leaf).rev() {
            let mut used = if at == last_leaf {
                leaf.used & (u64::MAX >> (63 - last_slot))
            } else {
                leaf.used
            };
            while used != 0 {
                let bit = 63 - used.leading_zeros() as usize;
                used &= !(1 << bit);
                let Some(entry) = &leaf.slots[bit] else {
                    continue;
                };
                let head = (at << LEAF_SHIFT) | bit as u64;
                if !covers(head, entry.order, start) {
                    return;
                }
                f(head, entry.order, &entry.item);
            }
        }
    }

    pub fn nr_folios(&self) -> usize {
        self.nr_folios
    }

    pub fn nr_pages(&self) -> u64 {
        self.nr_pages
    }

    /// Smallest page index >= `from` that a folio covers, or `None` if no
    /// folio lies at or past `from` (what `SEEK_DATA` reports, in pages).
    pub fn next_data(&self, from: u64) -> Option<u64> {
        if self.lookup(from).is_some() {
            return Some(from);
        }
        self.heads(from >> LEAF_SHIFT, u64::MAX)
            .map(|(head, _)| head)
            .find(|&head| head >= from)
    }

    /// Smallest page index >= `from` that no folio covers (what `SEEK_HOLE`
    /// reports, in pages). There always is one: at the latest, one past the
    /// last folio, which `MAX_INDEX` keeps inside a `u64`.
    pub fn next_hole(&self, from: u64) -> u64 {
        let mut hole = from;
        // Walk the run of touching folios that covers `from`, if any.
        for (head, order, _) in self.range(from, u64::MAX) {
            if head > hole {
                break;
            }
            hole = head + folio_nr_pages(order);
        }
        hole
    }
}

/// Pages needed to hold `bytes` bytes: ceil(bytes / PAGE_SIZE), without the
/// overflow of `bytes + PAGE_SIZE - 1` near `u64::MAX`.
pub const fn pages_for_bytes(bytes: u64) -> u64 {
    (bytes >> PAGE_SHIFT) + (bytes & (PAGE_SIZE as u64 - 1) != 0) as u64
}

/// What to do to one folio when the byte range [start, end) of a file is
/// removed (truncate: end = `u64::MAX`; hole punch: a finite range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoAction {
    /// The folio lies wholly inside the range: take it out of the index and
    /// free it.
    Remove {
        /// The folio's first page index.
        start: u64,
    },
    /// The folio lies partly inside the range: keep it, but zero the bytes
    /// [from, to) of it, counted from the folio's first byte, so that reads
    /// of the removed range see zeroes.
    Zero {
        /// The folio's first page index.
        start: u64,
        from: usize,
        to: usize,
    },
}

/// The plan for removing byte range [start, end) of a file: one action per
/// folio overlapping it, in index order (Linux: `shmem_undo_range` and
/// `truncate_inode_pages_range`), made as it is walked: the caller carries
/// it out a batch at a time (Linux: a `folio_batch`), so a file of any
/// size is truncated with no memory of its own.
///
/// A folio wholly inside the range is removed. A folio only partly inside
/// keeps all its pages and has the part inside zeroed. Linux first tries to
/// split such a folio so the pages wholly inside can be freed, and zeroes
/// only when the split fails (`truncate_inode_partial_folio`); we never
/// split, so a punched hole inside a large folio still holds memory and
/// still reads as data to `SEEK_HOLE`, just zeroed.
pub fn undo_range_plan<T>(
    index: &FolioIndex<T>,
    start: u64,
    end: u64,
) -> impl Iterator<Item = UndoAction> + '_ {
    // An empty range walks nothing.
    let (first, last) = if start < end {
        (start >> PAGE_SHIFT, pages_for_bytes(end))
    } else {
        (1, 0)
    };
    index.range(first, last).map(move |(head, order, _)| {
        // Offsets relative to the folio's first byte: its absolute end
        // can be 2^64 for the last folio a file can have.
        let first_byte = head << PAGE_SHIFT;
        let size = folio_nr_pages(order) << PAGE_SHIFT;
        let from = start.saturating_sub(first_byte);
        let to = (end - first_byte).min(size);
        if from == 0 && to == size {
            UndoAction::Remove { start: head }
        } else {
            UndoAction::Zero {
                start: head,
                from: from as usize,
                to: to as usize,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const PAGE: u64 = PAGE_SIZE as u64;
    const SZ_2M: usize = 2 << 20;

    /// An index holding `(start, order)` folios, each item its own start.
    fn index_of(folios: &[(u64, u8)]) -> FolioIndex<u64> {
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

    #[test]
    fn pages_for_bytes_rounds_up() {
        assert_eq!(pages_for_bytes(0), 0);
        assert_eq!(pages_for_bytes(1), 1);
        assert_eq!(pages_for_bytes(PAGE - 1), 1);
        assert_eq!(pages_for_bytes(PAGE), 1);
        assert_eq!(pages_for_bytes(PAGE + 1), 2);
        assert_eq!(pages_for_bytes(u64::MAX), MAX_INDEX + 1);
    }

    #[test]
    fn truncate_to_zero_removes_every_folio() {
        let index = index_of(&[(0, 9), (512, 0), (1024, 3)]);
        assert_eq!(
            plan(&index, 0, u64::MAX),
            vec![
                UndoAction::Remove { start: 0 },
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 1024 },
            ]
        );
    }

    #[test]
    fn truncate_inside_a_2m_folio_zeroes_its_tail() {
        let index = index_of(&[(0, 9), (512, 9)]);
        assert_eq!(
            plan(&index, 5000, u64::MAX),
            vec![
                UndoAction::Zero {
                    start: 0,
                    from: 5000,
                    to: SZ_2M
                },
                UndoAction::Remove { start: 512 },
            ]
        );
        // Within the second folio: its offsets count from its own start.
        assert_eq!(
            plan(&index, (512 * PAGE) + 100, u64::MAX),
            vec![UndoAction::Zero {
                start: 512,
                from: 100,
                to: SZ_2M
            }]
        );
    }

    #[test]
    fn truncate_at_a_folio_boundary_zeroes_nothing() {
        let index = index_of(&[(0, 9), (512, 2), (516, 0)]);
        assert_eq!(
            plan(&index, 512 * PAGE, u64::MAX),
            vec![
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 516 }
            ]
        );
        assert_eq!(
            plan(&index, 516 * PAGE, u64::MAX),
            vec![UndoAction::Remove { start: 516 }]
        );
        assert_eq!(plan(&index, 517 * PAGE, u64::MAX), vec![]);
        // One byte less and the folio before has its last byte zeroed.
        assert_eq!(
            plan(&index, 516 * PAGE - 1, u64::MAX),
            vec![
                UndoAction::Zero {
                    start: 512,
                    from: 4 * PAGE_SIZE - 1,
                    to: 4 * PAGE_SIZE
                },
                UndoAction::Remove { start: 516 },
            ]
        );
    }

    #[test]
    fn punch_inside_one_large_folio_zeroes_it_once() {
        let index = index_of(&[(0, 0), (512, 9), (1024, 0)]);
        let base = 512 * PAGE;
        // Whole pages inside the folio, but not the whole folio: still zero.
        assert_eq!(
            plan(&index, base + PAGE, base + 3 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: PAGE_SIZE,
                to: 3 * PAGE_SIZE
            }]
        );
        // Touching the folio's first byte, and its last.
        assert_eq!(
            plan(&index, base, base + 10),
            vec![UndoAction::Zero {
                start: 512,
                from: 0,
                to: 10
            }]
        );
        assert_eq!(
            plan(&index, base + 10, base + 512 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: 10,
                to: SZ_2M
            }]
        );
    }

    #[test]
    fn punch_across_folios_removes_the_middle_and_zeroes_the_ends() {
        // [0, 512) order 9, 512, [514, 516), a hole, [520, 528), [1024, 1536).
        let index = index_of(&[(0, 9), (512, 0), (514, 1), (520, 3), (1024, 9)]);
        let start = 100 * PAGE + 7;
        let end = 1024 * PAGE + 9000;
        assert_eq!(
            plan(&index, start, end),
            vec![
                UndoAction::Zero {
                    start: 0,
                    from: 100 * PAGE_SIZE + 7,
                    to: SZ_2M
                },
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 514 },
                UndoAction::Remove { start: 520 },
                UndoAction::Zero {
                    start: 1024,
                    from: 0,
                    to: 9000
                },
            ]
        );
        // Ends exactly on folio edges: nothing is zeroed.
        assert_eq!(
            plan(&index, 512 * PAGE, 528 * PAGE),
            vec![
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 514 },
                UndoAction::Remove { start: 520 },
            ]
        );
    }

    #[test]
    fn punch_over_holes_does_nothing() {
        let index = index_of(&[(0, 0), (512, 9)]);
        assert_eq!(plan(&index, PAGE, 512 * PAGE), vec![]);
        assert_eq!(plan(&index, PAGE + 5, 2 * PAGE - 5), vec![]);
        assert_eq!(plan(&index, 1024 * PAGE, u64::MAX), vec![]);
        assert_eq!(plan(&FolioIndex::<()>::new(), 0, u64::MAX), vec![]);
        // An empty or backwards byte range touches nothing, even in data.
        assert_eq!(plan(&index, 100, 100), vec![]);
        assert_eq!(plan(&index, 200, 100), vec![]);
    }

    #[test]
    fn one_byte_punch_zeroes_one_byte() {
        let index = index_of(&[(0, 9), (512, 0)]);
        assert_eq!(
            plan(&index, 5000, 5001),
            vec![UndoAction::Zero {
                start: 0,
                from: 5000,
                to: 5001
            }]
        );
        assert_eq!(
            plan(&index, 512 * PAGE + 904, 512 * PAGE + 905),
            vec![UndoAction::Zero {
                start: 512,
                from: 904,
                to: 905
            }]
        );
        assert_eq!(
            plan(&index, 513 * PAGE - 1, 513 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: PAGE_SIZE - 1,
                to: PAGE_SIZE
            }]
        );
    }

    #[test]
    fn undo_plan_of_the_last_folio_a_file_can_have() {
        // Its end, in bytes, is 2^64: the plan must not overflow.
        let last = MAX_INDEX + 1 - 512;
        let index = index_of(&[(last, 9)]);
        let base = last * PAGE;
        assert_eq!(
            plan(&index, base, u64::MAX),
            vec![UndoAction::Zero {
                start: last,
                from: 0,
                to: SZ_2M - 1
            }]
        );
        assert_eq!(
            plan(&index, base + 1, base + 2),
            vec![UndoAction::Zero {
                start: last,
                from: 1,
                to: 2
            }]
        );
    }

    /// Deterministic pseudo-random numbers (Marsaglia's xorshift64).
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
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
}
