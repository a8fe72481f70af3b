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
//! before a page is a mask and a count of leading zeros. Leaf 0, a file's
//! first 64 pages, sits at the top, found with no search, as the xarray
//! holds a file that small in one node at its head (`xa_head`); the
//! others hang in a tree of nodes of 64 slots, as the xarray's upper
//! levels do (`xa_node.rs`). A file's index costs about 25 bytes a page
//! where it is dense; a fault-around reads one leaf.
//!
//! Which folios a truncation or hole punch removes is `mm::truncate`'s.
//!
//! Where we simplify: no marks (dirty, writeback), no shadow or swap value
//! entries, no RCU readers (the caller holds the file's lock for every call),
//! and large folios are never split, so a folio only partly inside a removed
//! range is zeroed and kept whole.

use alloc::boxed::Box;

use crate::mm::addr::PAGE_SHIFT;

mod xa_node;
use xa_node::LeafTree;

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
    /// log2 of the folio's size in pages: the entry covers 2^order slots'
    /// pages, starting with its own.
    order: u8,
    /// The folio itself (`Folio` in the kernel; a plain value in host tests).
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
    /// Slot i holds the folio starting at the leaf's page i, if any.
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
    /// Leaf 0 (pages 0-63), if it has folios: most files need no more.
    head: Option<Box<Leaf<T>>>,
    /// The other non-empty leaves by leaf number (page index >>
    /// `LEAF_SHIFT`): the xarray's upper levels.
    leaves: LeafTree<Leaf<T>>,
    /// Pages covered by all folios together, kept as they come and go so
    /// `nr_pages` needs no walk (Linux: `mapping->nrpages`).
    nr_pages: u64,
    /// Folios in the index, a large folio counting once.
    nr_folios: usize,
}

impl<T> Default for FolioIndex<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Pages in a folio of `order`.
pub const fn folio_nr_pages(order: u8) -> u64 {
    1 << order
}

/// Whether the folio starting at `head` covers page `index` (>= `head`).
/// `head | (nr - 1)` is its last page; it cannot overflow the way
/// `head + nr` could, because `head` is aligned to `nr`.
const fn covers(head: u64, order: u8, index: u64) -> bool {
    index <= head | (folio_nr_pages(order) - 1)
}

impl<T> FolioIndex<T> {
    /// An empty index.
    pub const fn new() -> Self {
        FolioIndex {
            head: None,
            leaves: LeafTree::new(),
            nr_pages: 0,
            nr_folios: 0,
        }
    }

    /// The folio starting last at or before page `index`: the only one
    /// that can cover it. Most lookups end in the page's own leaf, so that
    /// is searched for first, and most of those in the page's own slot, as
    /// the page is a folio's first (every page of a small folio is).
    fn last_at_or_before(&self, index: u64) -> Option<(u64, &Entry<T>)> {
        let (leaf_index, slot) = leaf_of(index);
        if let Some(leaf) = self.leaf(leaf_index) {
            if let Some(entry) = &leaf.slots[slot] {
                return Some((index, entry));
            }
            let below = leaf.used & (u64::MAX >> (63 - slot));
            if below != 0 {
                return Self::last_in(leaf_index, leaf, below);
            }
        }
        let (at, leaf) = self.leaf_at_or_before(leaf_index.checked_sub(1)?)?;
        Self::last_in(at, leaf, leaf.used)
    }

    /// The non-empty leaf numbered last at or before `at`: most often `at`
    /// itself, found by a plain lookup; else searched for in the tree, else
    /// the head.
    fn leaf_at_or_before(&self, at: u64) -> Option<(u64, &Leaf<T>)> {
        if let Some(leaf) = self.leaf(at) {
            return Some((at, leaf));
        }
        self.leaves
            .last_at_or_before(at)
            .or_else(|| Some((0, self.head.as_deref()?)))
    }

    /// The non-empty leaf numbered first at or after `at`.
    fn leaf_at_or_after(&self, at: u64) -> Option<(u64, &Leaf<T>)> {
        match self.head.as_deref() {
            Some(head) if at == 0 => Some((0, head)),
            _ => self.leaves.first_at_or_after(at.max(1)),
        }
    }

    /// Leaf `at`, if it has folios.
    #[inline(always)]
    fn leaf(&self, at: u64) -> Option<&Leaf<T>> {
        if at == 0 {
            self.head.as_deref()
        } else {
            self.leaves.get(at)
        }
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
        let new_leaf = || Leaf {
            used: 0,
            slots: [const { None }; LEAF_SLOTS],
        };
        let leaf = if leaf_index == 0 {
            self.head.get_or_insert_with(|| Box::new(new_leaf()))
        } else {
            self.leaves.get_or_insert_with(leaf_index, new_leaf)
        };
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
        let leaf = if leaf_index == 0 {
            self.head.as_deref_mut()?
        } else {
            self.leaves.get_mut(leaf_index)?
        };
        let entry = leaf.slots[slot].take()?;
        leaf.used &= !(1 << slot);
        if leaf.used == 0 {
            if leaf_index == 0 {
                self.head = None;
            } else {
                self.leaves.remove(leaf_index);
            }
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
        let in_range = move |(at, _): &(u64, &Leaf<T>)| *at <= last;
        let mut next = self.leaf_at_or_after(first).filter(in_range);
        let leaves = core::iter::from_fn(move || {
            let (at, leaf) = next?;
            next = at
                .checked_add(1)
                .and_then(|after| self.leaf_at_or_after(after))
                .filter(in_range);
            Some((at, leaf))
        });
        leaves.flat_map(|(at, leaf)| {
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
        let mut next = self.leaf_at_or_before(last_leaf);
        while let Some((at, leaf)) = next {
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
                // Only a folio starting before `start` can end before it.
                if head < start && !covers(head, entry.order, start) {
                    return;
                }
                f(head, entry.order, &entry.item);
            }
            next = at
                .checked_sub(1)
                .and_then(|below| self.leaf_at_or_before(below));
        }
    }

    /// Folios in the index, a large folio counting once.
    pub fn nr_folios(&self) -> usize {
        self.nr_folios
    }

    /// Pages covered by all folios together (Linux's `mapping->nrpages`).
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

#[cfg(test)]
pub(crate) mod tests;
