//! Per-CPU lists of free single frames in front of the buddy allocator
//! (Linux: `struct per_cpu_pages`, `rmqueue_pcplist`, `drain_all_pages`).
//!
//! A CPU that needs a frame takes one from its own list; an empty list is
//! refilled with one block of 16 frames, split into single frames. So what
//! one CPU allocates in a row lies together: two threads filling files at
//! once get runs of 16 frames each, not frames taken turn about, whose
//! folio state (`mm/folio.rs`, four frames to a cache line) the two CPUs
//! would then keep pulling from each other on every fault.
//!
//! Where we simplify: frames are freed straight back to the buddy
//! allocator, which checks every free, rather than onto the lists; the
//! lists only hand out. Frames waiting in a list are not free to the buddy
//! allocator, so anything that reports free memory drains them first.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch::cpu::cpu_id;
use crate::config::NR_CPUS;
use crate::sync::SpinLock;

/// log2 of the frames a refill takes (Linux: `pcp->batch`, 63 by default).
const BATCH_ORDER: usize = 4;
/// Frames a refill takes: 16, one order-`BATCH_ORDER` block.
const BATCH: usize = 1 << BATCH_ORDER;

/// One CPU's list, alone on its cache line. The lock is only ever taken by
/// another CPU to drain it.
#[repr(align(64))]
struct PerCpuPages(SpinLock<Frames>);

/// The frames left from the last refill, handed out lowest first.
struct Frames {
    /// Frames left in `pfns`; the next one handed out is `pfns[count - 1]`.
    count: usize,
    /// The PFNs of the last refill's frames, highest first, so they go out
    /// lowest first.
    pfns: [usize; BATCH],
}

/// Each CPU's list, indexed by CPU id (Linux's `zone->per_cpu_pageset`).
static PCP: [PerCpuPages; NR_CPUS] = [const {
    PerCpuPages(SpinLock::new(Frames {
        count: 0,
        pfns: [0; BATCH],
    }))
}; NR_CPUS];

/// Frames in all lists together.
static LISTED: AtomicUsize = AtomicUsize::new(0);

/// Frames waiting in the lists (free, but not to the buddy allocator).
pub fn listed() -> usize {
    LISTED.load(Ordering::Relaxed)
}

/// A free frame from this CPU's list. An empty list is refilled by
/// `refill`, handed the block's size; it returns the first frame of a
/// split block of that many, or None, and then so does this.
pub fn alloc(refill: impl FnOnce(usize) -> Option<usize>) -> Option<usize> {
    let mut list = PCP[cpu_id()].0.lock();
    if list.count == 0 {
        let first = refill(BATCH_ORDER)?;
        for (i, pfn) in list.pfns.iter_mut().enumerate() {
            *pfn = first + BATCH - 1 - i;
        }
        list.count = BATCH;
        LISTED.fetch_add(BATCH, Ordering::Relaxed);
    }
    list.count -= 1;
    LISTED.fetch_sub(1, Ordering::Relaxed);
    Some(list.pfns[list.count])
}

/// Empties every CPU's list through `free` (Linux: `drain_all_pages`).
pub fn drain_all(mut free: impl FnMut(usize)) {
    if LISTED.load(Ordering::Relaxed) == 0 {
        return;
    }
    for pcp in &PCP {
        let mut list = pcp.0.lock();
        let n = list.count;
        for &pfn in &list.pfns[..n] {
            free(pfn);
        }
        list.count = 0;
        LISTED.fetch_sub(n, Ordering::Relaxed);
    }
}
