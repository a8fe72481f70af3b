//! The global allocator behind `alloc` (Box, Vec, String), on the
//! `linked_list_allocator` crate. Small blocks (up to 2 KiB, counting
//! their alignment) come from arenas: 64 KiB chunks of anonymous mmap
//! memory, each managed by its own first-fit `Heap`, added as the old ones
//! fill and never returned. Anything larger gets its own mapping, unmapped
//! on free, so a big buffer's memory goes back to the kernel at once. One
//! futex mutex serialises it all.
//!
//! Why arenas and not one growing `Heap`: `Heap::extend` needs the new
//! memory right after the old, which only brk could promise, and brk
//! belongs to the program (the tests move it up and down). mmap places
//! each chunk wherever it fits, so each chunk is a heap of its own.

use crate::mm::{map_anon, munmap, PAGE_SIZE};
use crate::sync::Mutex;
use core::alloc::{GlobalAlloc, Layout};
use core::mem::size_of;
use core::ptr::{self, NonNull};
use linked_list_allocator::Heap;

/// The largest block (size or alignment) an arena serves; larger ones get
/// a mapping of their own, where a free returns the memory to the kernel.
const MAX_SMALL: usize = 2048;
/// Each arena's mapping: big enough for 32 of the largest small blocks,
/// small enough that a program with a few strings touches little.
const CHUNK: usize = 64 * 1024;

/// One chunk: this header at its start, its `Heap` over the rest.
struct Arena {
    heap: Heap,
    /// The arena made before this one.
    older: Option<NonNull<Arena>>,
}

struct Arenas {
    /// The arena made last: the one with room most likely.
    newest: Option<NonNull<Arena>>,
}

// SAFETY: the arenas are memory of the whole process, not of a thread;
// the mutex around `Arenas` is what reaches them.
unsafe impl Send for Arenas {}

/// The process's heap.
struct Allocator(Mutex<Arenas>);

#[global_allocator]
static ALLOCATOR: Allocator = Allocator(Mutex::new(Arenas { newest: None }));

fn is_small(layout: Layout) -> bool {
    layout.size().max(layout.align()) <= MAX_SMALL
}

impl Arenas {
    /// The arenas, newest first.
    fn iter(&self) -> impl Iterator<Item = NonNull<Arena>> {
        // SAFETY: every arena in the list stays mapped for good.
        core::iter::successors(self.newest, |arena| unsafe { arena.as_ref().older })
    }

    fn alloc_small(&mut self, layout: Layout) -> *mut u8 {
        for mut arena in self.iter() {
            // SAFETY: the list's arenas are live, and the lock held by our
            // caller makes this the only reference.
            if let Ok(block) = unsafe { arena.as_mut() }.heap.allocate_first_fit(layout) {
                return block.as_ptr();
            }
        }
        let Some(mut arena) = self.new_arena() else {
            return ptr::null_mut();
        };
        // SAFETY: as above; an empty arena fits any small block.
        let heap = unsafe { &mut arena.as_mut().heap };
        heap.allocate_first_fit(layout)
            .map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    /// Maps a chunk and puts it at the head of the list.
    fn new_arena(&mut self) -> Option<NonNull<Arena>> {
        let chunk = map_anon(CHUNK).ok()? as *mut Arena;
        let header = size_of::<Arena>();
        // SAFETY: the chunk is fresh, private and CHUNK bytes long; the
        // header takes its (page-aligned) start, the heap the rest.
        unsafe {
            let heap = Heap::new(chunk.cast::<u8>().add(header), CHUNK - header);
            chunk.write(Arena {
                heap,
                older: self.newest,
            });
        }
        self.newest = NonNull::new(chunk);
        self.newest
    }

    /// # Safety
    /// `block` came from `alloc_small` with this `layout`, and is not
    /// freed yet.
    unsafe fn free_small(&mut self, block: *mut u8, layout: Layout) {
        let addr = block as usize;
        for mut arena in self.iter() {
            // SAFETY: as in `alloc_small`.
            let heap = unsafe { &mut arena.as_mut().heap };
            if (heap.bottom() as usize..heap.top() as usize).contains(&addr) {
                // SAFETY: the block came from this heap with this layout.
                unsafe { heap.deallocate(NonNull::new_unchecked(block), layout) };
                return;
            }
        }
    }
}

// SAFETY: small blocks come from `Heap::allocate_first_fit`, which meets
// the layout and hands a block out once until it is freed; each large
// block is its own page-aligned mapping.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_small(layout) {
            self.0.lock().alloc_small(layout)
        } else if layout.align() <= PAGE_SIZE {
            map_anon(layout.size()).map_or(ptr::null_mut(), |addr| addr as *mut u8)
        } else {
            ptr::null_mut()
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if is_small(layout) {
            // SAFETY: GlobalAlloc's contract: `block` is ours, with `layout`.
            unsafe { self.0.lock().free_small(block, layout) };
        } else {
            // SAFETY: a large block is a whole mapping of its own.
            let _ = unsafe { munmap(block as usize, layout.size()) };
        }
    }
}
