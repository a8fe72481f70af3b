//! The virtual memory areas (VMAs) of one address space, by address (Linux:
//! the maple tree `mm->mm_mt` with `vma_lookup`, `find_vma`, `__split_vma`,
//! the splitting in `do_vmi_munmap`, and `vm_unmapped_area` in `mm/mmap.c`).
//!
//! A VMA covers a page-aligned, half-open range [start, end) and carries a
//! payload `T` (in the kernel, the VMA's protection, backing file and
//! offset). VMAs never overlap. They sit in a `BTreeMap` keyed by start, so
//! the VMA holding an address can only be the last one starting at or below
//! it. The tree knows two things about the payload: how to cut it in two
//! (`Splittable`), which is all munmap and mprotect need when a range ends
//! in the middle of a VMA, and whether two neighbours may become one again
//! (`Mergeable`), after a change made them alike.
//!
//! Where we simplify:
//! - A `BTreeMap` instead of a maple tree, and no RCU readers: the caller
//!   holds the address space's lock (Linux: `mmap_lock`) for every call.
//! - Neighbours are merged only where a VMA changes (`merge_range`, after
//!   mprotect, madvise, mlock and brk), not when mmap places a new VMA next
//!   to an alike one, as Linux's `vma_merge_new_range` does.
//! - The free-area search walks the gaps one by one from the top. Linux
//!   stores the largest gap under each maple node and skips whole subtrees.
//! - No guard gap below stack VMAs (Linux: `stack_guard_gap`,
//!   `vm_start_gap`): a free range may end right where a stack begins, so
//!   nothing keeps a stack that grows down from reaching the mapping below.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::mm::addr::{is_aligned, PAGE_SIZE};

/// What the tree needs from a VMA's payload to cut the VMA in two.
pub trait Splittable: Sized {
    /// The payloads of the parts below and from `at`, when the VMA that
    /// `self` describes, covering [start, end), is cut at `at` (start < at <
    /// end, page-aligned). A file VMA, for one, gives the upper part a file
    /// offset `at - start` further on (Linux: `__split_vma` advancing the new
    /// VMA's `vm_pgoff`). The lower part gets a payload of its own too, not
    /// `self`: in the kernel a VMA's range never changes in place, so a
    /// lockless reader still holding the old VMA can tell it is gone (see
    /// `mm/vma_lock.rs`).
    fn split(&self, start: usize, at: usize) -> (Self, Self);
}

/// What the tree needs from a VMA's payload to join two neighbours.
pub trait Mergeable: Sized {
    /// The payload of one VMA covering both `self`, which covers
    /// [start, mid), and `next`, which begins at `mid`; None unless the two
    /// differ in nothing but their ranges (Linux: `is_mergeable_vma` and the
    /// file-offset check of `can_vma_merge_after`). `next_changed`: `next`
    /// is the VMA the caller changed and `self` its neighbour, not the
    /// other way round (Linux's checks are not symmetric).
    fn merge(&self, start: usize, mid: usize, next: &Self, next_changed: bool) -> Option<Self>;
}

/// One VMA in the map, stored under its start address.
#[derive(Debug, Clone)]
struct Entry<T> {
    /// End of the VMA's range (exclusive, page-aligned); ranges never overlap.
    end: usize,
    /// The VMA's payload (`Arc<Vma>` in the kernel, plain values in host tests).
    value: T,
}

/// The VMAs of one address space (Linux: `struct mm_struct`'s `mm_mt`).
#[derive(Debug, Clone)]
pub struct VmaTree<T> {
    /// Every VMA, keyed by its start.
    vmas: BTreeMap<usize, Entry<T>>,
}

impl<T> Default for VmaTree<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A map entry as callers see it: (start, end, &payload).
fn view<'a, T>((&start, entry): (&usize, &'a Entry<T>)) -> (usize, usize, &'a T) {
    (start, entry.end, &entry.value)
}

impl<T> VmaTree<T> {
    /// An empty tree: no VMAs.
    pub const fn new() -> Self {
        VmaTree {
            vmas: BTreeMap::new(),
        }
    }

    /// How many VMAs there are (Linux: `mm->map_count`).
    pub fn map_count(&self) -> usize {
        self.vmas.len()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.vmas.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.vmas.is_empty()
    }

    /// The VMA containing `addr`, as (start, end, &payload) (Linux:
    /// `vma_lookup`).
    pub fn find(&self, addr: usize) -> Option<(usize, usize, &T)> {
        let (start, end, value) = self.vmas.range(..=addr).next_back().map(view)?;
        (addr < end).then_some((start, end, value))
    }

    /// The lowest VMA ending above `addr`: the one containing `addr`, or
    /// else the first one above it (Linux: `find_vma`, which the fault path
    /// uses because a stack just above a faulting address may grow down to
    /// cover it).
    pub fn find_from(&self, addr: usize) -> Option<(usize, usize, &T)> {
        self.find(addr)
            .or_else(|| self.vmas.range(addr..).next().map(view))
    }

    /// True if some VMA covers part of [start, end). An empty range overlaps
    /// nothing.
    pub fn overlaps(&self, start: usize, end: usize) -> bool {
        start < end
            && self
                .find_from(start)
                .is_some_and(|(vma_start, _, _)| vma_start < end)
    }

    /// Adds a VMA covering [start, end). Refuses, handing `value` back, a
    /// range that is empty, not page-aligned, or overlaps a VMA already here;
    /// sharing only a boundary with a neighbour is fine.
    pub fn insert(&mut self, start: usize, end: usize, value: T) -> Result<(), T> {
        if start >= end
            || !is_aligned(start, PAGE_SIZE)
            || !is_aligned(end, PAGE_SIZE)
            || self.overlaps(start, end)
        {
            return Err(value);
        }
        self.vmas.insert(start, Entry { end, value });
        Ok(())
    }

    /// Every VMA in address order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, &T)> {
        self.vmas.iter().map(view)
    }

    /// The VMAs covering part of [start, end), in address order, including
    /// one that begins below `start` or runs past `end`.
    pub fn range(&self, start: usize, end: usize) -> impl Iterator<Item = (usize, usize, &T)> {
        // Only the VMA containing `start` can begin below it; every other
        // one that meets the range begins inside it.
        let (first, end) = if start < end {
            (
                self.find(start)
                    .map_or(start, |(vma_start, _, _)| vma_start),
                end,
            )
        } else {
            (start, start)
        };
        self.vmas.range(first..end).map(view)
    }

    /// The VMAs lying wholly inside [start, end), in address order, with
    /// their payloads open for change. One only partly inside is skipped, so
    /// call `split_at_boundaries` first to change exactly [start, end) (what
    /// mprotect does).
    pub fn range_mut(
        &mut self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = (usize, usize, &mut T)> {
        // `end.max(start)`: `BTreeMap` panics on a reversed range.
        self.vmas
            .range_mut(start..end.max(start))
            .filter(move |(_, entry)| entry.end <= end)
            .map(|(&vma_start, entry)| (vma_start, entry.end, &mut entry.value))
    }

    /// The highest start, a multiple of `align`, of a free range of `len`
    /// bytes inside [low, high), searching from the top down (Linux:
    /// `vm_unmapped_area` with `VM_UNMAPPED_AREA_TOPDOWN`, as
    /// `arch_get_unmapped_area_topdown` calls it).
    ///
    /// A `hint` (Linux: mmap's `addr` without `MAP_FIXED`) is taken as it is
    /// if [hint, hint + len) is free and inside [low, high); otherwise the
    /// search goes on as if there were none. Linux rounds a hint up to a page
    /// boundary; here one that is not a multiple of `align` is ignored, so
    /// every answer is aligned.
    ///
    /// `len` must be a non-zero multiple of `PAGE_SIZE` and `align` a power
    /// of two no smaller than `PAGE_SIZE`; anything else finds nothing.
    pub fn get_unmapped_area(
        &self,
        len: usize,
        align: usize,
        hint: Option<usize>,
        low: usize,
        high: usize,
    ) -> Option<usize> {
        if len == 0 || !is_aligned(len, PAGE_SIZE) || !align.is_power_of_two() || align < PAGE_SIZE
        {
            return None;
        }
        if let Some(addr) = hint {
            let fits = is_aligned(addr, align)
                && addr >= low
                && addr
                    .checked_add(len)
                    .is_some_and(|end| end <= high && !self.overlaps(addr, end));
            if fits {
                return Some(addr);
            }
        }
        // The gaps from the top: first the one from `high` down to the
        // highest VMA starting below it, then the one below each VMA.
        let mut gap_end = high;
        for (&vma_start, entry) in self.vmas.range(..high).rev() {
            if let Some(addr) = highest_fit(entry.end.max(low), gap_end, len, align) {
                return Some(addr);
            }
            if vma_start <= low {
                // Every gap further down lies below `low`.
                return None;
            }
            gap_end = vma_start;
        }
        highest_fit(low, gap_end, len, align)
    }
}

/// The highest multiple of `align` at which `len` bytes fit inside the gap
/// [gap_start, gap_end), if any.
fn highest_fit(gap_start: usize, gap_end: usize, len: usize, align: usize) -> Option<usize> {
    // Aligning `gap_end - len` down keeps the range inside the gap at the
    // top and cannot overflow, as adding `len` to a candidate could.
    let addr = gap_end.checked_sub(len)? & !(align - 1);
    (addr >= gap_start).then_some(addr)
}

impl<T: Splittable> VmaTree<T> {
    /// Takes out the parts of every VMA inside [start, end), cutting a VMA
    /// that crosses `start` or `end` in two and keeping the part outside
    /// (Linux: `do_vmi_munmap`). Returns the parts in address order, for
    /// munmap to tear down or for mprotect and madvise to put back changed.
    /// An empty range removes nothing.
    ///
    /// Panics if `start` or `end` is not page-aligned: callers check user
    /// input first, as munmap does with `EINVAL`.
    pub fn remove_range(&mut self, start: usize, end: usize) -> Vec<(usize, usize, T)> {
        self.split_at_boundaries(start, end);
        // No VMA crosses `start` now, so the ones meeting the range are
        // exactly those beginning inside it; take them all.
        self.vmas
            .extract_if(start..end.max(start), |_, _| true)
            .map(|(vma_start, entry)| (vma_start, entry.end, entry.value))
            .collect()
    }

    /// How many new VMAs `split_at_boundaries(start, end)` would make: one
    /// for each of `start` and `end` strictly inside a VMA (Linux counts
    /// each `__split_vma` against `vm.max_map_count`).
    pub fn splits_needed(&self, start: usize, end: usize) -> usize {
        if start >= end {
            return 0;
        }
        [start, end]
            .into_iter()
            .filter(|&a| self.find(a).is_some_and(|(s, _, _)| s < a))
            .count()
    }

    /// Cuts the VMAs crossing `start` or `end` there, so that both are VMA
    /// boundaries and every VMA is wholly inside [start, end) or wholly
    /// outside it. Nothing is removed. An empty range cuts nothing.
    ///
    /// Panics if `start` or `end` is not page-aligned, like `remove_range`.
    pub fn split_at_boundaries(&mut self, start: usize, end: usize) {
        assert!(
            is_aligned(start, PAGE_SIZE) && is_aligned(end, PAGE_SIZE),
            "VMA range {start:#x}..{end:#x} is not page-aligned"
        );
        if start < end {
            self.split_at(start);
            self.split_at(end);
        }
    }

    /// Cuts the VMA that `addr` lies strictly inside, if any, so `addr`
    /// becomes a boundary (Linux: `__split_vma`).
    fn split_at(&mut self, addr: usize) {
        let Some((&start, entry)) = self.vmas.range_mut(..addr).next_back() else {
            return;
        };
        if addr >= entry.end {
            return;
        }
        let (lower, upper) = entry.value.split(start, addr);
        let upper = Entry {
            end: entry.end,
            value: upper,
        };
        entry.end = addr;
        entry.value = lower;
        self.vmas.insert(addr, upper);
    }
}

impl<T: Mergeable> VmaTree<T> {
    /// Joins every pair of touching VMAs that meet [start, end), or touch it
    /// from either side, wherever `Mergeable::merge` allows (Linux:
    /// `vma_merge_existing_range`, which `vma_modify` calls after mprotect,
    /// madvise and mlock). So splitting a range and changing it back leaves
    /// the VMA it began as, and a heap grown page by page stays one VMA.
    /// `joining(lower, upper)` hears of each pair just before they become
    /// one (the kernel write-locks them).
    pub fn merge_range(&mut self, start: usize, end: usize, mut joining: impl FnMut(&T, &T)) {
        // Begin with the VMA ending at `start`, if one does.
        let mut at = match self.vmas.range(..start).next_back() {
            Some((&below, entry)) if entry.end == start => below,
            _ => start,
        };
        // The upper VMA of every pair to try begins at or below `end`: a
        // VMA further up is not the caller's to replace.
        while let Some((&lower, entry)) = self.vmas.range(at..end.max(at)).next() {
            let mid = entry.end;
            if mid > end {
                break;
            }
            let merged = self.vmas.get(&mid).and_then(|upper| {
                let value = entry.value.merge(lower, mid, &upper.value, mid < end)?;
                joining(&entry.value, &upper.value);
                Some(value)
            });
            match merged {
                Some(value) => {
                    let upper = self.vmas.remove(&mid).expect("looked up above");
                    let entry = self.vmas.get_mut(&lower).expect("looked up above");
                    entry.end = upper.end;
                    entry.value = value;
                    at = lower; // and try the next neighbour up
                }
                None => at = mid,
            }
        }
    }
}

#[cfg(test)]
mod tests;
