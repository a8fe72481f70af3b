//! The RAM the page allocator may use: the `/memory` regions less every
//! reservation (Linux: what `arm64_memblock_init()` leaves free in
//! memblock, reduced to a list of ranges).

use super::{BootInfo, MemRegion};
use crate::mm::addr::{PhysAddr, PAGE_SIZE};

impl BootInfo<'_> {
    /// Fills `out` with the RAM the page allocator may use, as page-aligned
    /// `[start, end)` ranges sorted by address, and returns how many it wrote.
    ///
    /// That is [`memory`](Self::memory) minus [`reserved`](Self::reserved),
    /// the initrd, the DTB itself (loaded at `dtb_base`), and
    /// `extra_reserved` (the kernel image, say), each `[start, end)`. Any
    /// page that is even partly reserved is left out, and an empty or
    /// inverted range reserves nothing.
    ///
    /// Ranges that do not fit in `out` are dropped. It always has room if
    /// its length is at least `memory.len() + reserved.len() +
    /// extra_reserved.len() + 2` (the initrd and the DTB): each reservation
    /// splits at most one free range in two.
    pub fn free_ranges(
        &self,
        dtb_base: PhysAddr,
        extra_reserved: &[(PhysAddr, PhysAddr)],
        out: &mut [(PhysAddr, PhysAddr)],
    ) -> usize {
        let dtb = MemRegion {
            base: dtb_base,
            size: self.dtb_size as u64,
        };
        let reservations = || {
            core::iter::once(dtb)
                .chain(self.initrd)
                .chain(self.reserved.iter().copied())
                .map(|region| (region.base, region.end()))
                .chain(extra_reserved.iter().copied())
        };

        let mut count = 0;
        for ram in self.memory.iter() {
            let end = ram.end();
            let mut cursor = ram.base;
            while cursor < end {
                // The lowest reservation that still overlaps [cursor, end):
                // RAM up to its start is free, and the next search starts
                // past its end. Taking the lowest each time handles
                // reservations that overlap one another.
                let next = reservations()
                    .filter(|&(start, stop)| start < stop && stop > cursor && start < end)
                    .min_by_key(|&(start, _)| start);
                let (free_end, next_cursor) = match next {
                    Some((start, stop)) => (start.max(cursor), stop),
                    None => (end, end),
                };
                if let Some(range) = page_range(cursor, free_end) {
                    if let Some(slot) = out.get_mut(count) {
                        *slot = range;
                        count += 1;
                    }
                }
                cursor = next_cursor;
            }
        }
        count
    }
}

/// The whole pages inside `[start, end)`, or `None` if there are none.
fn page_range(start: PhysAddr, end: PhysAddr) -> Option<(PhysAddr, PhysAddr)> {
    // Not PhysAddr::align_up: `start` can be within a page of the top of
    // the address space, and rounding it up must not overflow.
    let start = PhysAddr(start.0.checked_next_multiple_of(PAGE_SIZE as u64)?);
    let end = end.align_down(PAGE_SIZE);
    (start < end).then_some((start, end))
}
