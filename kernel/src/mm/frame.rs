//! The physical page allocator the rest of the kernel calls (Linux:
//! `alloc_pages` / `__free_pages` and `mem_map` set-up in `mm/mm_init.c`).
//!
//! At boot `init` places `mem_map` (one `Page` per frame of RAM) in the first
//! free range big enough, then hands every other free frame to the buddy
//! allocator. One lock guards it; single frames come through per-CPU lists
//! in front of it (`mm/pcp.rs`).

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::buddy::{BuddyAllocator, BuddyError, MAX_ORDER};
use crate::mm::folio::{self, FolioMeta};
use crate::mm::page::Page;
use crate::mm::page_flags::FrameState;
use crate::mm::pcp;
use crate::sync::SpinLock;

/// The one buddy allocator for all of RAM (Linux's single zone), behind the
/// lock that `BuddyAllocator` leaves to its caller (Linux's `zone->lock`);
/// `None` until `init`.
static BUDDY: SpinLock<Option<BuddyAllocator>> = SpinLock::new(None);
/// Frames handed to the allocator, at boot and by `free_boot_range`
/// (Linux's `totalram_pages`).
static TOTAL_PAGES: AtomicUsize = AtomicUsize::new(0);

/// Builds `mem_map` (and the folio state beside it) for RAM `[ram_start,
/// ram_end)` and frees `free` (page-aligned `[start, end)` ranges, sorted)
/// into the allocator.
pub fn init(ram_start: PhysAddr, ram_end: PhysAddr, free: &[(PhysAddr, PhysAddr)]) {
    let nr_pages = (ram_end.0 - ram_start.0) as usize / PAGE_SIZE;
    let page_bytes = (nr_pages * core::mem::size_of::<Page>())
        .next_multiple_of(core::mem::align_of::<FolioMeta>());
    let map_bytes = page_bytes + nr_pages * core::mem::size_of::<FolioMeta>();
    let (map_index, map_pa) = free
        .iter()
        .enumerate()
        .find(|(_, r)| (r.1 .0 - r.0 .0) as usize >= map_bytes)
        .map(|(i, r)| (i, r.0))
        .expect("no free range can hold mem_map");
    let map_end = map_pa.add(map_bytes).align_up(PAGE_SIZE);

    // SAFETY: [map_pa, map_end) is free RAM, reached through the linear map,
    // and from here on belongs to these two arrays alone; both are
    // initialised before the slices are made (from_slice then resets Page).
    // A FolioMeta of zero bytes (atomics at 0) is a frame no folio owns: no
    // references, no flags, order 0. One memset sets every frame's, where
    // writing each cost 3 instructions a frame, 1.6M for 2G of RAM.
    let (mem_map, folio_meta) = unsafe {
        let ptr = phys_to_virt(map_pa) as *mut Page;
        core::ptr::write_bytes(ptr, 0, nr_pages);
        let meta = phys_to_virt(map_pa.add(page_bytes)) as *mut FolioMeta;
        core::ptr::write_bytes(meta, 0, nr_pages);
        (
            core::slice::from_raw_parts_mut(ptr, nr_pages),
            core::slice::from_raw_parts(meta, nr_pages),
        )
    };
    folio::init(ram_start.pfn(), folio_meta);
    let mut buddy = BuddyAllocator::from_slice(mem_map, ram_start.pfn());
    for (i, &(start, end)) in free.iter().enumerate() {
        let start = if i == map_index { map_end } else { start };
        if start < end {
            buddy.free_range(start.pfn(), end.pfn());
        }
    }
    TOTAL_PAGES.store(buddy.free_pages(), Ordering::Relaxed);
    *BUDDY.lock() = Some(buddy);
}

/// Gives RAM that boot kept aside (the initrd, once unpacked) to the
/// allocator (Linux: `free_initrd_mem`).
pub fn free_boot_range(start: PhysAddr, end: PhysAddr) {
    if start < end {
        let pages = with_buddy(|b| {
            b.free_range(start.pfn(), end.pfn());
            (end.0 - start.0) as usize / PAGE_SIZE
        });
        TOTAL_PAGES.fetch_add(pages, Ordering::Relaxed);
    }
}

/// Runs `f` on the buddy allocator under its lock; panics before `init`.
fn with_buddy<R>(f: impl FnOnce(&mut BuddyAllocator) -> R) -> R {
    f(BUDDY
        .lock()
        .as_mut()
        .expect("frame allocator used before init"))
}

/// A naturally aligned block of 2^order frames (Linux: `alloc_pages`).
pub fn alloc_pages(order: usize) -> Option<PhysAddr> {
    let listed = if order == 0 { pcp::alloc(refill) } else { None };
    listed
        .or_else(|| with_buddy(|b| b.alloc(order)))
        .map(PhysAddr::from_pfn)
}

/// A block of 2^order frames split into single ones, for a per-CPU list;
/// none once the allocator is down to its reserve (then single frames come
/// straight from it, where the reserve is checked frame by frame).
fn refill(order: usize) -> Option<usize> {
    with_buddy(|b| {
        if b.free_pages() < min_free_pages() + (1 << order) {
            return None;
        }
        let pfn = b.alloc(order)?;
        b.split(pfn, order, 0);
        Some(pfn)
    })
}

/// Frames only the kernel itself may take (Linux: the `min` watermark,
/// `min_free_kbytes`): page-cache and user memory stop short of them, so
/// the kernel heap can still grow, and the kernel keep working, when a
/// file system fills memory.
pub fn min_free_pages() -> usize {
    (total_pages() / 128).max(256)
}

/// Is free memory down in the kernel's reserve?
pub fn below_reserve() -> bool {
    with_buddy(|b| b.free_pages()) + pcp::listed() < min_free_pages()
}

/// Like `alloc_pages`, but fails rather than dip into the kernel's reserve:
/// for memory user space can make the kernel allocate without bound.
pub fn alloc_pages_above_min(order: usize) -> Option<PhysAddr> {
    // A listed frame was taken above the reserve when its list was filled.
    let listed = if order == 0 { pcp::alloc(refill) } else { None };
    listed
        .or_else(|| {
            with_buddy(|b| {
                if b.free_pages() < min_free_pages() + (1 << order) {
                    return None;
                }
                b.alloc(order)
            })
        })
        .map(PhysAddr::from_pfn)
}

/// A block for the kernel's own use (the heap, kernel stacks, page
/// tables): above the reserve while there is memory there, else from the
/// reserve, and then memory is short: the OOM killer is told, so a process
/// dies and gives memory back before the reserve runs out (Linux:
/// `__alloc_pages_slowpath` -> `out_of_memory`).
pub fn alloc_kernel_pages(order: usize) -> Option<PhysAddr> {
    alloc_pages_above_min(order).or_else(|| {
        crate::mm::oom_kill::memory_short();
        alloc_pages(order)
    })
}

/// Like `alloc_kernel_pages`, with the block zeroed (Linux: `__GFP_ZERO`):
/// page tables.
pub fn alloc_zeroed_pages(order: usize) -> Option<PhysAddr> {
    let pa = alloc_kernel_pages(order)?;
    // SAFETY: a freshly allocated block, ours alone, in the linear map.
    unsafe { crate::arch::string::clear_pages(phys_to_virt(pa) as *mut u8, PAGE_SIZE << order) };
    Some(pa)
}

/// Returns a block from `alloc_pages` (Linux: `__free_pages`).
pub fn free_pages(pa: PhysAddr, order: usize) -> Result<(), BuddyError> {
    with_buddy(|b| b.free(pa.pfn(), order))
}

/// Turns a block of 2^order frames from `alloc_pages` into blocks of
/// 2^`new_order`, each to be freed on its own (Linux: `split_page`).
pub fn split_pages(pa: PhysAddr, order: usize, new_order: usize) {
    with_buddy(|b| b.split(pa.pfn(), order, new_order))
}

/// Free frames now, in total and as free blocks per order (Linux:
/// `/proc/buddyinfo`).
pub struct FreeStats {
    /// Free frames, single frames and blocks together (Linux's `nr_free_pages`).
    pub free_pages: usize,
    /// `nr_free[k]`: free blocks of order k, as a `/proc/buddyinfo` row lists them.
    pub nr_free: [usize; MAX_ORDER + 1],
}

/// The free memory now, after draining the per-CPU lists back into the
/// buddy allocator so that the counts are exact (`/proc/buddyinfo`, MemFree).
pub fn free_stats() -> FreeStats {
    // Listed frames are free, but not to the buddy allocator: give them
    // back first, so the counts are exact.
    pcp::drain_all(|pfn| with_buddy(|b| b.free(pfn, 0)).expect("a listed frame"));
    with_buddy(|b| FreeStats {
        free_pages: b.free_pages(),
        nr_free: core::array::from_fn(|order| b.nr_free(order)),
    })
}

/// Frames given to the allocator at boot (Linux: `totalram_pages`).
pub fn total_pages() -> usize {
    TOTAL_PAGES.load(Ordering::Relaxed)
}

/// What frame `pfn` is now, for /proc/kpageflags (Linux:
/// `pfn_to_online_page`, then what `stable_page_flags` reads): a
/// snapshot that may be stale by the time it is shown, as Linux's is.
pub fn frame_state(pfn: usize) -> FrameState {
    let (reserved, free) = match with_buddy(|b| (b.is_reserved(pfn), b.is_free(pfn))) {
        (Some(reserved), Some(free)) => (reserved, free),
        _ => return FrameState::NoPage,
    };
    if reserved {
        FrameState::Reserved
    } else if free {
        FrameState::Free
    } else {
        folio::folio_page(pfn).map_or(FrameState::Kernel, FrameState::Folio)
    }
}

/// The frame number just past the last frame of RAM (Linux:
/// `max_pfn`, the end of /proc/kpageflags).
pub fn max_pfn() -> usize {
    with_buddy(|b| b.end_pfn())
}
