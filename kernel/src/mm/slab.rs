//! Slabs: small kernel objects of one size class, many to a block of
//! pages (Linux: `mm/slub.c`, the caches behind `kmalloc`). Pure logic
//! over blocks a [`PageSource`] gives, host-tested; `mm/heap.rs` puts one
//! cache per size class behind the kernel's `#[global_allocator]`.
//!
//! A slab is a naturally aligned block of 2^order pages. Its first object
//! slots hold a [`SlabHeader`]; the others are the objects, the free ones
//! threaded into a list through their first word. So the slab of an object
//! is its address rounded down to the slab's size, and freeing needs no
//! lookup. A cache keeps its slabs that have free objects on a list
//! (Linux: the `partial` list); a full slab is on no list, and an empty
//! one goes back to the page source, except one kept per cache so that an
//! object allocated and freed in turn does not take and give a page each
//! time.
//!
//! Where we simplify: no per-CPU slabs (each cache has one lock, in
//! `heap.rs`), no debugging red zones, and the header lives in the slab
//! itself rather than in `struct page`.

use core::ptr::NonNull;

/// Where slabs come from: naturally aligned blocks of 2^order pages, as
/// kernel addresses.
pub trait PageSource {
    /// A naturally aligned block of 2^order pages, as its kernel address, or
    /// None when memory ran out.
    fn alloc(&mut self, order: usize) -> Option<usize>;
    /// Gives back a block `alloc` returned, with the same order.
    fn free(&mut self, addr: usize, order: usize);
}

/// What a slab knows of itself, in its first object slots.
#[repr(C)]
struct SlabHeader {
    /// The first free object, or None when the slab is full.
    free: Option<NonNull<FreeObject>>,
    /// Objects handed out.
    inuse: usize,
    /// Neighbours on the cache's partial list.
    prev: Option<NonNull<SlabHeader>>,
    /// The next slab on the partial list, or None at its end.
    next: Option<NonNull<SlabHeader>>,
}

/// A free object: the link to the next free one, in its first word.
struct FreeObject {
    /// The next free object in the same slab, or None for the last.
    next: Option<NonNull<FreeObject>>,
}

/// The objects of one size, in slabs of 2^order pages (Linux: a
/// `kmem_cache`, `kmalloc-<size>`).
pub struct SlabCache {
    /// Bytes per object: a power of two, at least a word (Linux's
    /// `kmem_cache->size`).
    size: usize,
    /// log2 of the pages in each slab (Linux's `oo_order`).
    order: usize,
    /// Slabs with at least one free object.
    partial: Option<NonNull<SlabHeader>>,
    /// An empty slab kept for the next allocation.
    spare: Option<NonNull<SlabHeader>>,
    /// Slabs this cache holds, spare included.
    slabs: usize,
    /// Objects handed out, in all its slabs.
    objects: usize,
}

/// A cache's numbers, as `/proc/slabinfo` shows them.
pub struct SlabStats {
    /// Bytes per object (`<objsize>`).
    pub object_size: usize,
    /// Objects handed out (`<active_objs>`).
    pub active_objects: usize,
    /// Objects in all the cache's slabs, free or not (`<num_objs>`).
    pub objects: usize,
    /// Objects one slab holds (`<objperslab>`).
    pub objects_per_slab: usize,
    /// Pages per slab (`<pagesperslab>`).
    pub pages_per_slab: usize,
    /// Slabs the cache holds, its spare included (`<num_slabs>`).
    pub slabs: usize,
}

// SAFETY: the cache owns its slabs outright; `heap.rs` guards each cache
// with a lock.
unsafe impl Send for SlabCache {}

/// The page size slabs are measured in; a constant of its own, as this file
/// is also built for host tests.
const PAGE_SIZE: usize = 4096;

impl SlabCache {
    /// A cache of `size`-byte objects (a power of two, at least a word) in
    /// slabs of 2^order pages.
    pub const fn new(size: usize, order: usize) -> Self {
        assert!(size.is_power_of_two() && size >= core::mem::size_of::<FreeObject>());
        assert!(size <= (PAGE_SIZE << order) / 2);
        SlabCache {
            size,
            order,
            partial: None,
            spare: None,
            slabs: 0,
            objects: 0,
        }
    }

    /// What the cache holds now (Linux: `/proc/slabinfo`'s line).
    pub fn stats(&self) -> SlabStats {
        SlabStats {
            object_size: self.size,
            active_objects: self.objects,
            objects: self.slabs * self.objects_per_slab(),
            objects_per_slab: self.objects_per_slab(),
            pages_per_slab: 1 << self.order,
            slabs: self.slabs,
        }
    }

    /// Bytes in one slab.
    fn slab_bytes(&self) -> usize {
        PAGE_SIZE << self.order
    }

    /// Object slots the header takes (at least one).
    fn header_slots(&self) -> usize {
        core::mem::size_of::<SlabHeader>().div_ceil(self.size)
    }

    /// Objects one slab holds.
    pub fn objects_per_slab(&self) -> usize {
        self.slab_bytes() / self.size - self.header_slots()
    }

    /// Pages this cache holds now.
    #[cfg(test)]
    pub fn pages(&self) -> usize {
        self.stats().slabs << self.order
    }

    /// One object, or None when the page source has no slab to give.
    pub fn alloc(&mut self, pages: &mut impl PageSource) -> Option<NonNull<u8>> {
        let slab = match self.partial {
            Some(slab) => slab,
            None => {
                let slab = match self.spare.take() {
                    Some(slab) => slab,
                    None => self.new_slab(pages)?,
                };
                self.push_partial(slab);
                slab
            }
        };
        // SAFETY: a slab on the partial list is ours and has a free object.
        unsafe {
            let header = &mut *slab.as_ptr();
            let object = header.free.expect("a partial slab has a free object");
            header.free = (*object.as_ptr()).next;
            header.inuse += 1;
            self.objects += 1;
            if header.free.is_none() {
                self.remove_partial(slab);
            }
            Some(object.cast())
        }
    }

    /// Gives back an object from this cache's `alloc`.
    ///
    /// # Safety
    /// `object` came from `alloc` on this cache and is not in use any more.
    pub unsafe fn free(&mut self, object: NonNull<u8>, pages: &mut impl PageSource) {
        let slab_addr = object.as_ptr() as usize & !(self.slab_bytes() - 1);
        let slab = NonNull::new(slab_addr as *mut SlabHeader).expect("an object in a slab");
        // SAFETY: the caller's object lies in one of our slabs, whose header
        // is at its start.
        unsafe {
            let header = &mut *slab.as_ptr();
            let was_full = header.free.is_none();
            let object = object.cast::<FreeObject>();
            (*object.as_ptr()).next = header.free;
            header.free = Some(object);
            header.inuse -= 1;
            self.objects -= 1;
            if was_full {
                self.push_partial(slab);
            }
            if header.inuse == 0 {
                self.remove_partial(slab);
                if let Some(old) = self.spare.replace(slab) {
                    pages.free(old.as_ptr() as usize, self.order);
                    self.slabs -= 1;
                }
            }
        }
    }

    /// A fresh slab from `pages`: its header written and every object after
    /// it on its free list; on no list yet.
    fn new_slab(&mut self, pages: &mut impl PageSource) -> Option<NonNull<SlabHeader>> {
        let base = pages.alloc(self.order)?;
        let first = self.header_slots();
        let count = self.objects_per_slab();
        // SAFETY: a fresh block of slab_bytes() bytes, ours alone: the header
        // at its start, the free list threaded through the objects after it.
        unsafe {
            let object = |i: usize| (base + (first + i) * self.size) as *mut FreeObject;
            for i in 0..count {
                let next = (i + 1 < count).then(|| NonNull::new_unchecked(object(i + 1)));
                object(i).write(FreeObject { next });
            }
            let header = base as *mut SlabHeader;
            header.write(SlabHeader {
                free: Some(NonNull::new_unchecked(object(0))),
                inuse: 0,
                prev: None,
                next: None,
            });
            self.slabs += 1;
            Some(NonNull::new_unchecked(header))
        }
    }

    /// Puts `slab` at the head of the partial list (Linux's `add_partial`).
    fn push_partial(&mut self, slab: NonNull<SlabHeader>) {
        // SAFETY: our slabs' headers; the list is only touched under the
        // cache's own `&mut self`.
        unsafe {
            let header = &mut *slab.as_ptr();
            header.prev = None;
            header.next = self.partial;
            if let Some(next) = self.partial {
                (*next.as_ptr()).prev = Some(slab);
            }
        }
        self.partial = Some(slab);
    }

    /// Takes `slab` off the partial list (Linux's `remove_partial`).
    fn remove_partial(&mut self, slab: NonNull<SlabHeader>) {
        // SAFETY: as in push_partial; `slab` is on the list.
        unsafe {
            let header = &mut *slab.as_ptr();
            match header.prev {
                Some(prev) => (*prev.as_ptr()).next = header.next,
                None => self.partial = header.next,
            }
            if let Some(next) = header.next {
                (*next.as_ptr()).prev = header.prev;
            }
            header.prev = None;
            header.next = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{alloc, dealloc, Layout};
    use std::collections::BTreeMap;
    use std::vec::Vec;

    /// Blocks from the host's allocator, aligned as the buddy allocator's.
    #[derive(Default)]
    struct HostPages {
        live: BTreeMap<usize, usize>,
    }

    impl PageSource for HostPages {
        fn alloc(&mut self, order: usize) -> Option<usize> {
            let size = PAGE_SIZE << order;
            // SAFETY: a non-zero size and a power-of-two alignment.
            let p = unsafe { alloc(Layout::from_size_align(size, size).unwrap()) } as usize;
            self.live.insert(p, order);
            Some(p)
        }
        fn free(&mut self, addr: usize, order: usize) {
            assert_eq!(
                self.live.remove(&addr),
                Some(order),
                "freed what was not given"
            );
            let size = PAGE_SIZE << order;
            // SAFETY: allocated above with this layout.
            unsafe {
                dealloc(
                    addr as *mut u8,
                    Layout::from_size_align(size, size).unwrap(),
                )
            };
        }
    }

    impl Drop for HostPages {
        fn drop(&mut self) {
            for (&addr, &order) in &self.live {
                let size = PAGE_SIZE << order;
                // SAFETY: as in free.
                unsafe {
                    dealloc(
                        addr as *mut u8,
                        Layout::from_size_align(size, size).unwrap(),
                    )
                };
            }
        }
    }

    #[test]
    fn objects_are_distinct_aligned_and_inside_their_slab() {
        for (size, order) in [(16, 0), (64, 0), (512, 0), (2048, 2)] {
            let mut pages = HostPages::default();
            let mut cache = SlabCache::new(size, order);
            let n = 3 * cache.objects_per_slab() + 1;
            let objects: Vec<usize> = (0..n)
                .map(|_| cache.alloc(&mut pages).unwrap().as_ptr() as usize)
                .collect();
            let mut sorted = objects.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), n, "size {size}: an object handed out twice");
            for &o in &objects {
                assert_eq!(o % size, 0, "size {size}: misaligned");
                let slab = o & !((PAGE_SIZE << order) - 1);
                assert!(o >= slab + size * cache.header_slots(), "over the header");
                assert!(pages.live.contains_key(&slab), "outside every slab");
            }
            assert_eq!(cache.pages(), 4 << order, "size {size}: four slabs");
            for o in objects {
                // SAFETY: from alloc above, freed once.
                unsafe { cache.free(NonNull::new(o as *mut u8).unwrap(), &mut pages) };
            }
        }
    }

    #[test]
    fn empty_slabs_go_back_but_one() {
        let mut pages = HostPages::default();
        let mut cache = SlabCache::new(128, 0);
        let per = cache.objects_per_slab();
        assert_eq!(per, 4096 / 128 - 1);
        let objects: Vec<_> = (0..5 * per)
            .map(|_| cache.alloc(&mut pages).unwrap())
            .collect();
        assert_eq!(pages.live.len(), 5);
        for o in objects {
            // SAFETY: from alloc above, freed once.
            unsafe { cache.free(o, &mut pages) };
        }
        assert_eq!(pages.live.len(), 1, "one empty slab kept");
        assert_eq!(cache.pages(), 1);
    }

    #[test]
    fn freed_objects_are_reused_and_a_full_slab_returns_to_the_list() {
        let mut pages = HostPages::default();
        let mut cache = SlabCache::new(1024, 0);
        let per = cache.objects_per_slab();
        let objects: Vec<_> = (0..per).map(|_| cache.alloc(&mut pages).unwrap()).collect();
        assert_eq!(pages.live.len(), 1, "one slab, full");
        // SAFETY: from alloc above.
        unsafe { cache.free(objects[1], &mut pages) };
        assert_eq!(
            cache.alloc(&mut pages),
            Some(objects[1]),
            "the freed object, again"
        );
        assert_eq!(pages.live.len(), 1, "no new slab for it");
        let extra = cache.alloc(&mut pages).unwrap();
        assert_eq!(pages.live.len(), 2);
        // SAFETY: from alloc above, each freed once.
        unsafe {
            cache.free(extra, &mut pages);
            for &o in &objects {
                cache.free(o, &mut pages);
            }
        }
        assert_eq!(pages.live.len(), 1);
    }

    #[test]
    fn no_pages_no_object() {
        struct NoPages;
        impl PageSource for NoPages {
            fn alloc(&mut self, _: usize) -> Option<usize> {
                None
            }
            fn free(&mut self, _: usize, _: usize) {
                unreachable!()
            }
        }
        assert_eq!(SlabCache::new(32, 0).alloc(&mut NoPages), None);
    }
}
