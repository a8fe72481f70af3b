//! The kernel heap behind `Box`, `Vec` and `Arc` (Linux: `kmalloc` and
//! `kfree`, `mm/slab_common.c`): an object of up to 2048 bytes comes from
//! the slab cache of its power-of-two size (`mm/slab.rs`), a larger one is
//! a whole block from the page allocator (Linux: `kmalloc_large`). Both
//! go back to the page allocator when freed, so kernel memory returns to
//! MemFree; `/proc/meminfo` counts what the heap holds as `Slab`.
//!
//! A block larger than the page allocator's largest (4 MiB) cannot be had:
//! such an allocation fails, as `kmalloc` fails above `KMALLOC_MAX_SIZE`.
//! Code that allocates what user space asks for uses the fallible forms
//! (`try_reserve`) and answers ENOMEM.

use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::errno::{Errno, KResult};
use crate::mm::addr::{phys_to_virt, virt_to_phys, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::buddy::MAX_ORDER;
use crate::mm::frame;
use crate::mm::slab::{PageSource, SlabCache};
use crate::sync::SpinLock;

/// The size classes: 16 bytes to 2K, one cache each; the two largest in
/// 16K slabs, so a slab holds more than one of them.
const CLASSES: usize = 8;
/// log2 of the smallest size class: 16 bytes (Linux's `KMALLOC_SHIFT_LOW`).
const SMALLEST_SHIFT: usize = 4;

/// The `kmalloc-<size>` caches (Linux's `kmalloc_caches`), one per size
/// class, smallest first, each with its own lock; the second number is the
/// slab's order.
static CACHES: [SpinLock<SlabCache>; CLASSES] = [
    SpinLock::new(SlabCache::new(16, 0)),
    SpinLock::new(SlabCache::new(32, 0)),
    SpinLock::new(SlabCache::new(64, 0)),
    SpinLock::new(SlabCache::new(128, 0)),
    SpinLock::new(SlabCache::new(256, 0)),
    SpinLock::new(SlabCache::new(512, 0)),
    SpinLock::new(SlabCache::new(1024, 2)),
    SpinLock::new(SlabCache::new(2048, 2)),
];

/// Pages the heap holds: slabs and large blocks (Linux: `NR_SLAB_*`).
static PAGES: AtomicUsize = AtomicUsize::new(0);

/// Frames the kernel heap holds now.
pub fn pages() -> usize {
    PAGES.load(Ordering::Relaxed)
}

/// `/proc/slabinfo`: each size class's objects in use, its objects in all,
/// and its slabs (Linux: `slabinfo_show`, version 2.1 without the
/// tunables it does not have here).
pub fn slabinfo() -> alloc::string::String {
    use core::fmt::Write;
    let mut s = alloc::string::String::from(
        "slabinfo - version: 2.1\n# name            <active_objs> <num_objs> <objsize> \
         <objperslab> <pagesperslab> : slabdata <active_slabs> <num_slabs>\n",
    );
    let mut slab_pages = 0;
    for cache in &CACHES {
        let st = cache.lock().stats();
        slab_pages += st.slabs * st.pages_per_slab;
        let name = alloc::format!("kmalloc-{}", st.object_size);
        let _ = writeln!(
            s,
            "{:<17} {:>6} {:>6} {:>6} {:>4} {:>4} : slabdata {:>6} {:>6}",
            name,
            st.active_objects,
            st.objects,
            st.object_size,
            st.objects_per_slab,
            st.pages_per_slab,
            st.slabs,
            st.slabs
        );
    }
    // Blocks too large for a slab: Linux counts them in `Slab` too.
    let large = pages().saturating_sub(slab_pages);
    let _ = writeln!(s, "# kmalloc-large: {} pages", large);
    s
}

/// Slabs come from the page allocator and are counted.
struct KernelPages;

impl PageSource for KernelPages {
    fn alloc(&mut self, order: usize) -> Option<usize> {
        let pa = frame::alloc_kernel_pages(order)?;
        PAGES.fetch_add(1 << order, Ordering::Relaxed);
        Some(phys_to_virt(pa))
    }
    fn free(&mut self, addr: usize, order: usize) {
        frame::free_pages(virt_to_phys(addr), order).expect("a heap block freed twice");
        PAGES.fetch_sub(1 << order, Ordering::Relaxed);
    }
}

/// The cache for `layout`, or None for a large block.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size().max(layout.align()).max(1 << SMALLEST_SHIFT);
    let class = size.next_power_of_two().trailing_zeros() as usize - SMALLEST_SHIFT;
    (class < CLASSES).then_some(class)
}

/// The order of the block a large allocation takes.
fn large_order(layout: Layout) -> usize {
    let size = layout.size().max(layout.align());
    (size.next_power_of_two().trailing_zeros() as usize).saturating_sub(PAGE_SHIFT as usize)
}

/// The Rust global allocator: small objects from `CACHES`, large ones as
/// whole page blocks (Linux's `kmalloc`/`kfree`).
struct KernelHeap;

/// What `Box`, `Vec` and `Arc` allocate from.
#[global_allocator]
static HEAP: KernelHeap = KernelHeap;

// SAFETY: each cache is used under its lock; large blocks are the page
// allocator's, handed out whole and taken back with the same order.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(class) => CACHES[class]
                .lock()
                .alloc(&mut KernelPages)
                .map_or(core::ptr::null_mut(), NonNull::as_ptr),
            None if large_order(layout) <= MAX_ORDER => KernelPages
                .alloc(large_order(layout))
                .map_or(core::ptr::null_mut(), |addr| addr as *mut u8),
            None => core::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let ptr = NonNull::new(ptr).expect("freeing null");
        match class_of(layout) {
            // SAFETY: from this cache's alloc (the same layout maps to the
            // same class), given back once.
            Some(class) => unsafe { CACHES[class].lock().free(ptr, &mut KernelPages) },
            None => KernelPages.free(ptr.as_ptr() as usize, large_order(layout)),
        }
    }
}

/// Room for `n` items, or ENOMEM: for a vector whose length a user chose
/// (`Vec::with_capacity` would panic where `kmalloc` returns NULL).
pub fn try_vec<T>(n: usize) -> KResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Errno::ENOMEM)?;
    Ok(v)
}

/// `n` zero bytes, or ENOMEM.
pub fn try_zeroed(n: usize) -> KResult<Vec<u8>> {
    let mut v = try_vec(n)?;
    v.resize(n, 0);
    Ok(v)
}

/// Most bytes one read or write moves through a kernel buffer at a time.
pub const BOUNCE_MAX: usize = 64 * 1024;

/// A buffer for moving up to `len` bytes between user memory and the
/// kernel a piece at a time: `min(len, max)` bytes, or less when memory
/// is short and no block that large is free (a page at the least), or
/// ENOMEM (Linux copies through the page cache and needs none).
pub fn bounce_buffer(len: usize, max: usize) -> KResult<Vec<u8>> {
    let mut size = len.min(max);
    loop {
        match try_zeroed(size) {
            Err(_) if size > PAGE_SIZE => size = (size / 2).max(PAGE_SIZE),
            result => return result,
        }
    }
}
