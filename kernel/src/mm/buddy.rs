//! The binary buddy allocator: hands out physically contiguous, naturally
//! aligned blocks of 2^order page frames (Linux: `mm/page_alloc.c`,
//! `__rmqueue_smallest`, `expand` and `__free_one_page`).
//!
//! The block of order k at pfn p has a buddy at p ^ (1 << k): the other half
//! of the order k+1 block holding both. Freeing a block whose buddy is free
//! merges the two, and the merged block tries again one order up, so free
//! memory always sits in the largest blocks it can. Allocating takes the
//! smallest free block that is big enough and splits it, putting the unused
//! halves back on the free lists.
//!
//! The free lists run through `mem_map` (a free block's first `Page` holds
//! its links), so the allocator needs no heap and works before one exists.
//!
//! Where we simplify: one zone and no migrate types, so one free list per
//! order; no per-CPU page lists; no watermarks or reclaim, so an empty list
//! just fails the allocation. The caller provides the lock.

use crate::mm::addr::is_aligned;
use crate::mm::page::{Page, PAGE_NIL};

/// Largest block handed out: 2^10 frames, 4 MiB (Linux: `MAX_PAGE_ORDER`).
pub const MAX_ORDER: usize = 10;
/// How many orders there are, 0 to `MAX_ORDER` (Linux's `NR_PAGE_ORDERS`).
const NR_PAGE_ORDERS: usize = MAX_ORDER + 1;

/// Why `BuddyAllocator::free` refused a block. The free lists are untouched
/// whenever it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuddyError {
    /// `order` is above `MAX_ORDER`, so no allocation could have that size.
    BadOrder,
    /// `pfn` is not a multiple of 2^order, so no block of that order starts there.
    Misaligned,
    /// The block is not wholly inside the frames this allocator manages.
    OutOfRange,
    /// `pfn` does not start an allocated block: a double free, a frame in the
    /// middle of a block, or a reserved frame.
    NotAllocated,
    /// `pfn` starts an allocated block of another order.
    WrongOrder,
}

/// The free blocks of one order (Linux: `struct free_area`).
#[derive(Clone, Copy)]
struct FreeArea {
    /// `mem_map` index of the first free block, or `PAGE_NIL`.
    free_list: u32,
    /// How many blocks of this order are on `free_list` (Linux's
    /// `free_area.nr_free`, which `/proc/buddyinfo` prints).
    nr_free: usize,
}

/// The page allocator for one range of frames (Linux: the `free_area` half
/// of `struct zone`).
pub struct BuddyAllocator {
    /// `mem_map[i]` describes frame `base_pfn + i`.
    mem_map: &'static mut [Page],
    /// The PFN of `mem_map[0]`: the first frame this allocator describes.
    base_pfn: usize,
    /// One free list per order, `free_area[k]` holding free blocks of 2^k frames.
    free_area: [FreeArea; NR_PAGE_ORDERS],
}

impl BuddyAllocator {
    /// Manages the frames described by `mem_map`: frame `base_pfn + i` is
    /// `mem_map[i]`. Every frame starts reserved; hand frames over with
    /// `free_range`.
    pub fn from_slice(mem_map: &'static mut [Page], base_pfn: usize) -> Self {
        // Links are u32 indices, and PAGE_NIL must not be one of them.
        assert!(mem_map.len() < PAGE_NIL as usize, "mem_map too large");
        assert!(
            base_pfn.checked_add(mem_map.len()).is_some(),
            "pfn overflow"
        );
        // Whatever the array held, nothing is free until free_range says so.
        for page in mem_map.iter_mut() {
            *page = Page::new_reserved();
        }
        BuddyAllocator {
            mem_map,
            base_pfn,
            free_area: [FreeArea {
                free_list: PAGE_NIL,
                nr_free: 0,
            }; NR_PAGE_ORDERS],
        }
    }

    /// Hands the reserved frames [start_pfn, end_pfn) to the allocator,
    /// carved into the largest naturally aligned blocks that fit (Linux:
    /// `__free_pages_memory` in `mm/memblock.c`).
    ///
    /// # Panics
    ///
    /// If the range leaves the managed frames or holds a frame that is not
    /// reserved. Both are boot-time bugs that would corrupt the free lists.
    pub fn free_range(&mut self, start_pfn: usize, end_pfn: usize) {
        assert!(
            self.base_pfn <= start_pfn
                && start_pfn <= end_pfn
                && end_pfn - self.base_pfn <= self.mem_map.len(),
            "free_range {start_pfn:#x}..{end_pfn:#x} outside mem_map"
        );
        let mut pfn = start_pfn;
        while pfn < end_pfn {
            // trailing_zeros is the largest order pfn is aligned to; it is 64
            // for pfn 0, hence the min.
            let mut order = MAX_ORDER.min(pfn.trailing_zeros() as usize);
            while pfn + (1 << order) > end_pfn {
                order -= 1;
            }
            let index = pfn - self.base_pfn;
            let block = &mut self.mem_map[index..index + (1 << order)];
            // One pass, no branch per frame: boot frees all of RAM here.
            let all_reserved = block
                .iter_mut()
                .fold(true, |all, page| page.take_reserved() & all);
            assert!(
                all_reserved,
                "a frame of {pfn:#x}..{:#x} already free or in use",
                pfn + (1 << order)
            );
            self.free_one_page(index, order);
            pfn += 1 << order;
        }
    }

    /// Takes a free block of 2^order frames and returns its first pfn, a
    /// multiple of 2^order; `None` if no free block is that large (Linux:
    /// `__rmqueue_smallest`).
    pub fn alloc(&mut self, order: usize) -> Option<usize> {
        let current = (order..NR_PAGE_ORDERS).find(|&o| self.free_area[o].free_list != PAGE_NIL)?;
        let index = self.free_area[current].free_list as usize;
        self.del_page_from_free_list(index, current);
        self.expand(index, order, current);
        self.mem_map[index].set_head(order);
        Some(self.base_pfn + index)
    }

    /// Gives back the block of 2^order frames at `pfn`, which `alloc(order)`
    /// must have returned (Linux: `__free_pages`).
    pub fn free(&mut self, pfn: usize, order: usize) -> Result<(), BuddyError> {
        if order > MAX_ORDER {
            return Err(BuddyError::BadOrder);
        }
        if !is_aligned(pfn, 1 << order) {
            return Err(BuddyError::Misaligned);
        }
        let len = self.mem_map.len();
        // Written as a subtraction so a block at the top of the address space
        // cannot overflow.
        let index = pfn
            .checked_sub(self.base_pfn)
            .filter(|&i| i < len && (1 << order) <= len - i)
            .ok_or(BuddyError::OutOfRange)?;
        let page = &mut self.mem_map[index];
        if !page.is_head() {
            return Err(BuddyError::NotAllocated);
        }
        if page.order() != order {
            return Err(BuddyError::WrongOrder);
        }
        page.clear_head();
        self.free_one_page(index, order);
        Ok(())
    }

    /// Turns the allocated block of 2^order frames at `pfn` into allocated
    /// blocks of 2^`new_order` frames, each to be freed on its own (Linux:
    /// `split_page` for single frames, `split_page_memcg`'s caller
    /// `__split_huge_page` for larger ones).
    ///
    /// # Panics
    ///
    /// If `pfn` does not start an allocated block of that order, or
    /// `new_order` is above it.
    pub fn split(&mut self, pfn: usize, order: usize, new_order: usize) {
        assert!(new_order <= order, "split to a larger order");
        let index = self
            .index_of(pfn)
            .filter(|&i| self.mem_map[i].is_head() && self.mem_map[i].order() == order)
            .expect("split of a block that is not allocated");
        let blocks = self.mem_map[index..index + (1 << order)].chunks_mut(1 << new_order);
        for block in blocks {
            block[0].set_head(new_order);
        }
    }

    /// The frame just past the last one we manage.
    pub fn end_pfn(&self) -> usize {
        self.base_pfn + self.mem_map.len()
    }

    /// Is frame `pfn` inside a free block, on a free list (Linux:
    /// `is_free_buddy_page`)? None if we do not manage it.
    pub fn is_free(&self, pfn: usize) -> Option<bool> {
        self.index_of(pfn)?;
        // The block holding it, if free, heads at `pfn` aligned down to
        // its order (Linux's walk up the orders).
        Some((0..NR_PAGE_ORDERS).any(|order| {
            self.index_of(pfn & !((1 << order) - 1))
                .is_some_and(|head| {
                    let page = &self.mem_map[head];
                    page.is_buddy() && page.order() >= order
                })
        }))
    }

    /// Is frame `pfn` reserved, never handed to the allocator (Linux:
    /// `PageReserved`)? None if we do not manage it.
    pub fn is_reserved(&self, pfn: usize) -> Option<bool> {
        Some(self.mem_map[self.index_of(pfn)?].is_reserved())
    }

    /// Free blocks of exactly 2^order frames: one column of /proc/buddyinfo.
    pub fn nr_free(&self, order: usize) -> usize {
        self.free_area[order].nr_free
    }

    /// Free frames, over all orders (Linux: `NR_FREE_PAGES`).
    pub fn free_pages(&self) -> usize {
        self.free_area
            .iter()
            .enumerate()
            .map(|(order, area)| area.nr_free << order)
            .sum()
    }

    /// `mem_map` index of `pfn`, if we manage it.
    fn index_of(&self, pfn: usize) -> Option<usize> {
        pfn.checked_sub(self.base_pfn)
            .filter(|&i| i < self.mem_map.len())
    }

    /// Puts the order `order` block at `index` on the free lists, merging it
    /// with its buddy for as long as the buddy is free and whole (Linux:
    /// `__free_one_page`).
    fn free_one_page(&mut self, mut index: usize, mut order: usize) {
        while order < MAX_ORDER {
            // Buddies pair up by absolute pfn, not by mem_map index: base_pfn
            // need not be aligned, and the blocks must be physically aligned.
            let buddy_pfn = (self.base_pfn + index) ^ (1 << order);
            // Frames outside mem_map are not ours to merge with.
            let Some(buddy) = self.index_of(buddy_pfn) else {
                break;
            };
            // A free buddy of a smaller order means part of it is still in
            // use (Linux: `page_is_buddy`).
            let page = &self.mem_map[buddy];
            if !page.is_buddy() || page.order() != order {
                break;
            }
            self.del_page_from_free_list(buddy, order);
            index = index.min(buddy);
            order += 1;
        }
        self.add_to_free_list(index, order);
    }

    /// Splits the order `high` block at `index` down to order `low`, freeing
    /// the upper half at each step (Linux: `expand`).
    fn expand(&mut self, index: usize, low: usize, mut high: usize) {
        while high > low {
            high -= 1;
            self.add_to_free_list(index + (1 << high), high);
        }
    }

    /// Pushes at the front, so the block freed last, likeliest still in the
    /// cache, is the next one handed out (Linux: `add_to_free_list`).
    fn add_to_free_list(&mut self, index: usize, order: usize) {
        let area = &mut self.free_area[order];
        let next = area.free_list;
        area.free_list = index as u32;
        area.nr_free += 1;
        if next != PAGE_NIL {
            self.mem_map[next as usize].buddy_prev = index as u32;
        }
        let page = &mut self.mem_map[index];
        page.set_buddy(order);
        page.buddy_prev = PAGE_NIL;
        page.buddy_next = next;
    }

    /// Linux: `del_page_from_free_list`.
    fn del_page_from_free_list(&mut self, index: usize, order: usize) {
        let page = &mut self.mem_map[index];
        page.clear_buddy();
        let (prev, next) = (page.buddy_prev, page.buddy_next);
        if prev == PAGE_NIL {
            self.free_area[order].free_list = next;
        } else {
            self.mem_map[prev as usize].buddy_next = next;
        }
        if next != PAGE_NIL {
            self.mem_map[next as usize].buddy_prev = prev;
        }
        self.free_area[order].nr_free -= 1;
    }
}

#[cfg(test)]
mod tests;
