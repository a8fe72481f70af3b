//! The kernel heap behind `Box`, `Vec` and `Arc`: a buddy heap (the
//! `buddy_system_allocator` crate) that grows by taking blocks from the page
//! allocator when it runs dry. Memory never goes back to the page
//! allocator (Linux's slab would shrink; we keep it simple).

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;

use crate::mm::addr::{phys_to_virt, PAGE_SHIFT};
use crate::mm::buddy::MAX_ORDER;
use crate::mm::frame;
use crate::sync::SpinLock;

/// Smallest growth step: 256K, so small allocations rarely hit the page
/// allocator.
const MIN_GROW_ORDER: usize = 6;

struct KernelHeap(SpinLock<buddy_system_allocator::Heap<32>>);

#[global_allocator]
static HEAP: KernelHeap = KernelHeap(SpinLock::new(buddy_system_allocator::Heap::empty()));

/// Bytes the heap has taken from the page allocator so far.
pub fn heap_size() -> usize {
    HEAP.0.lock().stats_total_bytes()
}

fn grow(heap: &mut buddy_system_allocator::Heap<32>, layout: Layout) -> bool {
    // A block of the request's power-of-two size, aligned to it, holds it
    // exactly: the buddy heap splits what it is given into aligned blocks.
    let need = layout.size().max(layout.align()).next_power_of_two();
    let order = (need.trailing_zeros() as usize)
        .saturating_sub(PAGE_SHIFT as usize)
        .max(MIN_GROW_ORDER);
    if order > MAX_ORDER {
        return false;
    }
    let Some(pa) = frame::alloc_pages(order) else {
        return false;
    };
    let start = phys_to_virt(pa);
    // SAFETY: a fresh block of 2^order frames, handed to the heap for good.
    unsafe { heap.add_to_heap(start, start + (4096 << order)) };
    true
}

// SAFETY: the heap lock serialises all use; blocks come from the buddy heap.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut heap = self.0.lock();
        loop {
            if let Ok(p) = heap.alloc(layout) {
                return p.as_ptr();
            }
            if !grow(&mut heap, layout) {
                return core::ptr::null_mut();
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: ptr came from alloc with this layout.
        self.0
            .lock()
            .dealloc(unsafe { NonNull::new_unchecked(ptr) }, layout);
    }
}
