//! The global allocator behind `alloc` (Box, Vec, String). Small blocks come
//! in eight power-of-two size classes, 16 bytes to 2 KiB, carved from 64 KiB
//! chunks of anonymous mmap memory and recycled through a free list per
//! class; chunks are never returned. Anything larger gets its own mapping,
//! unmapped on free. One futex mutex serialises it all.

use crate::mm::{map_anon, munmap, PAGE_SIZE};
use crate::sync::Mutex;
use core::alloc::{GlobalAlloc, Layout};
use core::ptr;

const MIN_BLOCK: usize = 16;
const MAX_BLOCK: usize = 2048;
const CLASSES: usize = 8;
const CHUNK: usize = 64 * 1024;

struct Heap {
    state: Mutex<State>,
}

struct State {
    /// Head of each class's free list; a free block's first word links to
    /// the next.
    free: [usize; CLASSES],
    /// The unused part of the current chunk.
    next: usize,
    end: usize,
}

#[global_allocator]
static HEAP: Heap = Heap {
    state: Mutex::new(State {
        free: [0; CLASSES],
        next: 0,
        end: 0,
    }),
};

/// The block size serving `layout` (also its alignment), if it is small.
fn block_size(layout: Layout) -> Option<usize> {
    let size = layout.size().max(layout.align()).max(MIN_BLOCK);
    let size = size.next_power_of_two();
    (size <= MAX_BLOCK).then_some(size)
}

fn class(size: usize) -> usize {
    (size / MIN_BLOCK).trailing_zeros() as usize
}

impl State {
    fn alloc_small(&mut self, size: usize) -> *mut u8 {
        let class = class(size);
        let head = self.free[class];
        if head != 0 {
            // SAFETY: a free-list entry is a free block whose first word
            // holds the next entry.
            self.free[class] = unsafe { *(head as *const usize) };
            return head as *mut u8;
        }
        // Blocks are aligned to their size; chunks are page-aligned.
        let mut start = self.next.next_multiple_of(size);
        if start + size > self.end {
            let Ok(chunk) = map_anon(CHUNK) else {
                return ptr::null_mut();
            };
            start = chunk;
            self.end = chunk + CHUNK;
        }
        self.next = start + size;
        start as *mut u8
    }

    fn free_small(&mut self, block: *mut u8, size: usize) {
        let class = class(size);
        // SAFETY: the block is free and at least one word long.
        unsafe { *(block as *mut usize) = self.free[class] };
        self.free[class] = block as usize;
    }
}

// SAFETY: small blocks are handed out once until freed, and each large
// block is its own page-aligned mapping; both meet the requested layout.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match block_size(layout) {
            Some(size) => self.state.lock().alloc_small(size),
            None if layout.align() <= PAGE_SIZE => {
                map_anon(layout.size()).map_or(ptr::null_mut(), |addr| addr as *mut u8)
            }
            None => ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match block_size(layout) {
            Some(size) => self.state.lock().free_small(block, size),
            None => {
                let _ = munmap(block as usize, layout.size());
            }
        }
    }
}
