//! Folios: a naturally aligned, physically contiguous block of 2^order
//! pages handled as one unit, as the page cache and the fault path see
//! memory (Linux: `struct folio` in `include/linux/mm_types.h`,
//! `folio_alloc`, `folio_get`, `folio_put`).
//!
//! Each frame has a `FolioMeta` next to its buddy `Page` (Linux keeps both
//! in one `struct page` union). Only a folio's first frame, its head, holds
//! the folio's state; every frame records how far its head is, so a PFN
//! read from a page table leads back to its folio. `Folio` is a counted
//! reference: cloning it is `folio_get`, dropping it is `folio_put`, and the
//! last put returns the frames to the page allocator.

use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::uaccess::{ReadDest, WriteSource};
use crate::mm::{frame, vmstat};

/// Set once every byte of the folio holds the file's data (Linux: `PG_uptodate`).
const PG_UPTODATE: u32 = 1 << 0;
/// Written since it was last clean (Linux: `PG_dirty`).
const PG_DIRTY: u32 = 1 << 1;
/// Anonymous memory (a process's private page), not page cache (Linux:
/// `folio_test_anon`).
const PG_ANON: u32 = 1 << 2;
/// In a file's page cache (Linux: `folio->mapping` is set). A fault that
/// found the folio without locks checks it again under the page-table lock,
/// so it never maps a folio truncation has just removed.
const PG_CACHED: u32 = 1 << 3;

/// Per page, not per folio: the page is mapped by one private anonymous
/// entry only, so a write may reuse it and mprotect may make it writable
/// (Linux: `PageAnonExclusive`). Set for every page of a new anonymous
/// folio, cleared when fork shares the page, set again when a write fault
/// finds the page is the process's alone.
const PG_ANON_EXCLUSIVE: u32 = 1 << 4;

/// The flags by name, as `Folio`'s `Debug` and gdb's `fl-folio` show them.
pub const FOLIO_FLAG_NAMES: [(&str, u32); 4] = [
    ("uptodate", PG_UPTODATE),
    ("dirty", PG_DIRTY),
    ("anon", PG_ANON),
    ("cached", PG_CACHED),
];

/// Per-frame folio state; meaningful on a folio's head frame. Sixteen
/// bytes, four to a cache line: a fault-around touches the state of every
/// folio it maps, so this array's size is part of the fault path's memory
/// footprint (Linux packs `struct page` into 64 bytes for the same reason).
/// The folio's index in its file is not kept here: the page cache knows it.
/// All zero bytes are a frame no folio owns (no references, no flags, order
/// 0): how boot sets the whole array, with one memset.
#[repr(C, align(16))]
pub struct FolioMeta {
    /// Two counts in one word. Low half: references to the folio (Linux's
    /// `_refcount`), one per `Folio` value and one per page-table entry
    /// mapping a page of it; the last put frees it. High half, an `i32`:
    /// page-table entries mapping pages of this folio (Linux: the folio's
    /// total mapcount). Where we differ: Linux keeps them apart, but
    /// mapping or unmapping pages changes both, and together that is one
    /// atomic instruction instead of two, each a load-exclusive and
    /// store-exclusive loop on a CPU without LSE atomics (cortex-a72).
    counts: AtomicU64,
    /// `PG_*` bits above (Linux's `flags`).
    flags: AtomicU32,
    /// This frame's distance from its folio's head, in frames.
    head_offset: AtomicU16,
    /// log2 of the folio's size in pages (Linux's `folio_order`).
    order: AtomicU8,
    /// For a frame holding a PTE table instead: its lock (`mm/ptlock.rs`).
    ptl: AtomicBool,
}

const _: () = assert!(core::mem::size_of::<FolioMeta>() == 16);

/// One reference, in `FolioMeta::counts`.
const REF: u64 = 1;
/// One mapping, in `FolioMeta::counts`.
const MAP: u64 = 1 << 32;

/// The references in a `counts` word.
const fn refs(counts: u64) -> u32 {
    counts as u32
}

/// The mappings in a `counts` word.
const fn maps(counts: u64) -> i32 {
    (counts >> 32) as i32
}

/// The per-frame folio state (Linux: `mem_map`), set once at boot. Plain
/// statics rather than a `Once`: every folio operation on the fault path
/// starts here, so the lookup is a subtraction, a bounds check and an add.
static META: AtomicPtr<FolioMeta> = AtomicPtr::new(core::ptr::null_mut());
/// Entries in the `META` array: one per frame from `BASE_PFN` on.
static META_LEN: AtomicUsize = AtomicUsize::new(0);
/// The PFN `META[0]` describes: the first frame of RAM.
static BASE_PFN: AtomicUsize = AtomicUsize::new(0);

/// `BASE_PFN` less `META`'s address in `FolioMeta`s (wrapping): a state's
/// address in those units plus this is its frame's PFN, one load where
/// `META` and `BASE_PFN` would be two (Linux: arm64's `vmemmap`, placed so
/// that `page_to_pfn` is one subtraction).
static PFN_BIAS: AtomicUsize = AtomicUsize::new(0);

/// The zero page's frame once it exists, else 0 (Linux: `zero_pfn`).
static ZERO_PFN: AtomicUsize = AtomicUsize::new(0);

/// The zero page, made the first time it is asked for: a zeroed frame
/// splitting an anonymous folio maps read-only where a page held nothing
/// but zeros (Linux: `ZERO_PAGE(0)`, mapped by
/// `try_to_map_unused_to_zeropage`). A folio neither anonymous nor cached,
/// so a write to it copies it, whose first reference is kept for ever.
/// None if no frame is free for it then. Where we simplify: a read fault
/// on anonymous memory still allocates a page of its own.
pub fn zero_folio() -> Option<Folio> {
    let pfn = match ZERO_PFN.load(Ordering::Acquire) {
        0 => {
            let folio = Folio::alloc(0)?;
            let pfn = folio.pfn();
            match ZERO_PFN.compare_exchange(0, pfn, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => core::mem::forget(folio), // the kernel's reference
                Err(winner) => return zero_folio_at(winner),
            }
            pfn
        }
        pfn => pfn,
    };
    zero_folio_at(pfn)
}

/// A new reference on the zero page at `pfn`.
fn zero_folio_at(pfn: usize) -> Option<Folio> {
    // SAFETY: the zero page's first reference is never dropped.
    Some(unsafe { Folio::from_pfn(pfn) })
}

/// Is `pfn` the zero page's frame (Linux: `is_zero_pfn`)? Its mappings
/// count in no process's memory use.
pub fn is_zero_pfn(pfn: usize) -> bool {
    pfn == ZERO_PFN.load(Ordering::Relaxed)
}

/// Installs the per-frame folio state for frames from `base_pfn` on.
pub(super) fn init(base_pfn: usize, meta: &'static [FolioMeta]) {
    BASE_PFN.store(base_pfn, Ordering::Relaxed);
    META_LEN.store(meta.len(), Ordering::Relaxed);
    let meta_units = meta.as_ptr() as usize / core::mem::size_of::<FolioMeta>();
    PFN_BIAS.store(base_pfn.wrapping_sub(meta_units), Ordering::Relaxed);
    META.store(meta.as_ptr() as *mut FolioMeta, Ordering::Release);
}

/// The folio state of frame `pfn`; panics if `pfn` is outside RAM.
fn meta(pfn: usize) -> &'static FolioMeta {
    let i = pfn.wrapping_sub(BASE_PFN.load(Ordering::Relaxed));
    assert!(
        i < META_LEN.load(Ordering::Relaxed),
        "pfn {pfn:#x} has no folio state"
    );
    // SAFETY: `init` stored a 'static slice of META_LEN entries, set before
    // any frame was allocated; `i` is inside it.
    unsafe { &*META.load(Ordering::Relaxed).add(i) }
}

/// The lock of the page-table page at frame `pfn` (Linux keeps it in the
/// page's `struct ptdesc`, which overlays `struct page` as ours does).
/// Every fault takes one, so it is found by arithmetic alone, without
/// `meta`'s bounds check, as Linux's `virt_to_ptdesc` is.
///
/// # Safety
/// `pfn` must be a frame of RAM: a page table in the linear map is.
pub unsafe fn table_lock(pfn: usize) -> &'static AtomicBool {
    let i = pfn.wrapping_sub(BASE_PFN.load(Ordering::Relaxed));
    // SAFETY: `init` stored a 'static slice with an entry for every frame
    // of RAM from `BASE_PFN` on, set before any frame was allocated; the
    // caller's frame is one of them.
    unsafe { &(*META.load(Ordering::Relaxed).add(i)).ptl }
}

/// Is page `pfn` of an anonymous folio mapped by one private entry only
/// (Linux: `PageAnonExclusive`)? Read under the lock of an entry mapping it.
pub fn page_anon_exclusive(pfn: usize) -> bool {
    meta(pfn).flags.load(Ordering::Relaxed) & PG_ANON_EXCLUSIVE != 0
}

/// Sets (a write fault found the page is the process's alone) or clears
/// (fork shares it) page `pfn`'s `PG_ANON_EXCLUSIVE` (Linux:
/// `SetPageAnonExclusive`, `ClearPageAnonExclusive`).
pub fn set_page_anon_exclusive(pfn: usize, exclusive: bool) {
    if exclusive {
        meta(pfn)
            .flags
            .fetch_or(PG_ANON_EXCLUSIVE, Ordering::Relaxed);
    } else {
        meta(pfn)
            .flags
            .fetch_and(!PG_ANON_EXCLUSIVE, Ordering::Relaxed);
    }
}

/// What frame `pfn` is as a page of a folio, read without a reference
/// (Linux: `stable_page_flags` reading `page_folio(page)->flags`): None
/// outside RAM or when no live folio holds it. A snapshot, racing with
/// allocation and freeing as Linux's reads of /proc/kpageflags do.
pub fn folio_page(pfn: usize) -> Option<crate::mm::page_flags::FolioPage> {
    let i = pfn.checked_sub(BASE_PFN.load(Ordering::Relaxed))?;
    if i >= META_LEN.load(Ordering::Relaxed) {
        return None;
    }
    let head_pfn = pfn.checked_sub(meta(pfn).head_offset.load(Ordering::Relaxed) as usize)?;
    let head = meta(head_pfn);
    let order = head.order.load(Ordering::Relaxed);
    // A stale offset left by a freed folio leads to a head that is free, or
    // that heads a folio too small to hold `pfn`.
    let counts = head.counts.load(Ordering::Relaxed);
    if refs(counts) == 0 || pfn >= head_pfn + (1 << order) {
        return None;
    }
    let flags = head.flags.load(Ordering::Relaxed);
    let entire = match order {
        0 => 0,
        _ => maps(meta(head_pfn + 1).counts.load(Ordering::Relaxed)).max(0) as u32,
    };
    Some(crate::mm::page_flags::FolioPage {
        head: head_pfn == pfn,
        order,
        mapcount: maps(counts).max(0) as u32,
        entire_mapcount: entire,
        zero: is_zero_pfn(pfn),
        anon: flags & PG_ANON != 0,
        cached: flags & PG_CACHED != 0,
        uptodate: flags & PG_UPTODATE != 0,
        dirty: flags & PG_DIRTY != 0,
    })
}

/// A counted reference to a folio: a pointer to its head frame's state,
/// as Linux's `struct folio *` is; the frame number follows from where that
/// state sits in the array. One word, so the page cache's slots stay small.
pub struct Folio {
    /// The head frame's state; the reference this `Folio` counts is on it.
    head: &'static FolioMeta,
}

/// The frame whose state is `head` (Linux: `folio_pfn`).
fn pfn_of(head: &'static FolioMeta) -> usize {
    let units = head as *const FolioMeta as usize / core::mem::size_of::<FolioMeta>();
    units.wrapping_add(PFN_BIAS.load(Ordering::Relaxed))
}

impl Folio {
    /// A new, zeroed folio of 2^order pages with one reference (Linux:
    /// `folio_alloc` with `__GFP_ZERO`), never from the kernel's reserve.
    /// Counts the allocation by order.
    pub fn alloc(order: u8) -> Option<Folio> {
        let pa = frame::alloc_pages_above_min(order as usize)?;
        // SAFETY: a fresh block, ours alone, in the linear map.
        unsafe {
            crate::arch::string::clear_pages(phys_to_virt(pa) as *mut u8, PAGE_SIZE << order)
        };
        let pfn = pa.pfn();
        let head = meta(pfn);
        head.counts.store(REF, Ordering::Relaxed);
        head.flags.store(0, Ordering::Relaxed);
        head.order.store(order, Ordering::Relaxed);
        if order > 0 {
            meta(pfn + 1).counts.store(0, Ordering::Relaxed); // no PMD maps it
        }
        for i in 0..1usize << order {
            let page = meta(pfn + i);
            page.head_offset.store(i as u16, Ordering::Relaxed);
            if i > 0 {
                page.flags.store(0, Ordering::Relaxed); // no stale per-page bits
            }
        }
        vmstat::FOLIO_ALLOC[order as usize].inc();
        Some(Folio { head })
    }

    /// The folio containing frame `pfn`, with a new reference (Linux:
    /// `page_folio` + `folio_get`).
    ///
    /// # Safety
    ///
    /// The frame must belong to a live folio, one that cannot be freed
    /// while this runs: a reference must be held somewhere, typically by a
    /// page-table entry the caller reads under the lock that keeps it.
    pub unsafe fn from_pfn(pfn: usize) -> Folio {
        // SAFETY: the caller's frame belongs to a live folio; the reference
        // this `Folio` stands for is the one added on the next line.
        let folio = unsafe { Folio::from_mapped_pfn(pfn) };
        folio.head().counts.fetch_add(REF, Ordering::Relaxed);
        folio
    }

    /// Takes over the reference a page-table entry held on the folio of
    /// frame `pfn` (the entry is being cleared), without adding one.
    ///
    /// # Safety
    /// The caller must own that reference: each mapped entry holds one, and
    /// it may be taken over once.
    pub unsafe fn from_mapped_pfn(pfn: usize) -> Folio {
        let head = pfn - meta(pfn).head_offset.load(Ordering::Relaxed) as usize;
        Folio { head: meta(head) }
    }

    /// Hands one reference to a page-table entry that now maps a page of
    /// the folio (the entry keeps it until `from_mapped_pfn` takes it back),
    /// and counts the mapping.
    pub fn into_mapping(self) {
        self.into_mappings(1);
    }

    /// [`Folio::into_mapping`] for `nr` new entries at once: the caller's
    /// reference becomes the first one's and `nr - 1` more are taken
    /// (Linux: `finish_fault`'s `folio_ref_add(folio, nr_pages - 1)`), in
    /// one atomic add with the mappings.
    pub fn into_mappings(self, nr: usize) {
        let nr = nr as u64;
        self.head()
            .counts
            .fetch_add(nr * MAP + (nr - 1) * REF, Ordering::Relaxed);
        core::mem::forget(self);
    }

    /// New references for `nr` entries that now map pages of this folio,
    /// counted as mappings (Linux: `folio_ref_add` +
    /// `folio_add_file_rmap_ptes`), in one atomic add.
    pub fn add_mappings(&self, nr: usize) {
        let nr = nr as u64;
        self.head()
            .counts
            .fetch_add(nr * (REF + MAP), Ordering::Relaxed);
    }

    /// Takes back the references of `nr` entries that mapped pages of this
    /// folio and were cleared (and flushed), `self` being one of them.
    pub fn unmapped_many(self, nr: usize) {
        let nr = nr as u64;
        // We hold `nr` references; this leaves the one `self` drops.
        self.head()
            .counts
            .fetch_sub(nr * MAP + (nr - 1) * REF, Ordering::Relaxed);
    }

    /// Page-table entries mapping this folio, in every address space.
    pub fn mapcount(&self) -> u32 {
        maps(self.head().counts.load(Ordering::Relaxed)).max(0) as u32
    }

    /// An entry stopped mapping a page of this folio.
    pub fn unmapped(&self) {
        self.head().counts.fetch_sub(MAP, Ordering::Relaxed);
    }

    /// PMD blocks mapping this large folio whole (Linux: `_entire_mapcount`,
    /// which it keeps in the folio's second page as we do); each also
    /// counts once in `mapcount`.
    fn entire(&self) -> &'static AtomicU64 {
        debug_assert!(self.order() > 0);
        &meta(self.pfn() + 1).counts
    }

    /// A PMD block now maps this large folio (Linux:
    /// `folio_add_anon_rmap_pmd`); true if it is the first.
    pub fn add_pmd_mapping(&self) -> bool {
        maps(self.entire().fetch_add(MAP, Ordering::Relaxed)) == 0
    }

    /// A PMD block stopped mapping this large folio (Linux:
    /// `folio_remove_rmap_pmd`); true if it was the last.
    pub fn remove_pmd_mapping(&self) -> bool {
        maps(self.entire().fetch_sub(MAP, Ordering::Relaxed)) == 1
    }

    /// The head frame's state, where the whole folio's state lives.
    fn head(&self) -> &'static FolioMeta {
        self.head
    }

    /// The folio's first frame (Linux's `folio_pfn`).
    pub fn pfn(&self) -> usize {
        pfn_of(self.head)
    }
    /// Whether `other` refers to this same folio.
    pub fn is(&self, other: &Folio) -> bool {
        core::ptr::eq(self.head, other.head)
    }
    /// The physical address of the folio's first byte (Linux: `folio_pfn` << `PAGE_SHIFT`).
    pub fn phys(&self) -> PhysAddr {
        PhysAddr::from_pfn(self.pfn())
    }
    /// log2 of the folio's size in pages (Linux's `folio_order`).
    pub fn order(&self) -> u8 {
        self.head().order.load(Ordering::Relaxed)
    }
    /// Pages in the folio, 2^order (Linux's `folio_nr_pages`).
    pub fn nr_pages(&self) -> usize {
        1 << self.order()
    }
    /// The folio's size in bytes (Linux's `folio_size`).
    pub fn size(&self) -> usize {
        PAGE_SIZE << self.order()
    }
    /// References held right now (Linux's `folio_ref_count`); only a snapshot.
    pub fn refcount(&self) -> u32 {
        refs(self.head().counts.load(Ordering::Relaxed))
    }
    /// Whether every byte holds the file's data (Linux's
    /// `folio_test_uptodate`); acquire, so once true the data reads back.
    pub fn is_uptodate(&self) -> bool {
        self.head().flags.load(Ordering::Acquire) & PG_UPTODATE != 0
    }
    /// Marks the data complete (Linux's `folio_mark_uptodate`); release, after
    /// the writes that filled it.
    pub fn mark_uptodate(&self) {
        self.head().flags.fetch_or(PG_UPTODATE, Ordering::Release);
    }
    /// Whether the folio was written since it was last clean (Linux's
    /// `folio_test_dirty`).
    pub fn is_dirty(&self) -> bool {
        self.head().flags.load(Ordering::Relaxed) & PG_DIRTY != 0
    }
    /// Marks the folio written (Linux's `folio_mark_dirty`), looking first,
    /// as Linux's `noop_dirty_folio` does: most writes find it dirty
    /// already, and a load is cheaper than an atomic OR.
    pub fn mark_dirty(&self) {
        if !self.is_dirty() {
            self.head().flags.fetch_or(PG_DIRTY, Ordering::Relaxed);
        }
    }
    /// Whether the folio is anonymous memory, not page cache (Linux's
    /// `folio_test_anon`).
    pub fn is_anon(&self) -> bool {
        self.head().flags.load(Ordering::Relaxed) & PG_ANON != 0
    }
    /// Marks a new folio as anonymous memory (Linux sets `PAGE_MAPPING_ANON`),
    /// each of its pages exclusive to the one process about to map it
    /// (Linux: `folio_add_new_anon_rmap` with `RMAP_EXCLUSIVE`).
    pub fn mark_anon(&self) {
        self.head().flags.fetch_or(PG_ANON, Ordering::Relaxed);
        let pfn = self.pfn();
        for i in 0..self.nr_pages() {
            meta(pfn + i)
                .flags
                .fetch_or(PG_ANON_EXCLUSIVE, Ordering::Relaxed);
        }
    }
    /// Sets or clears `PG_ANON_EXCLUSIVE` on every page: a PMD block maps
    /// them all at once (Linux keeps the bit of the head page for the
    /// block, and hands it to every page when the block is split).
    pub fn set_anon_exclusive(&self, exclusive: bool) {
        let pfn = self.pfn();
        for i in 0..self.nr_pages() {
            set_page_anon_exclusive(pfn + i, exclusive);
        }
    }

    /// Splits this large folio into folios of 2^`new_order` pages (Linux:
    /// `__split_huge_page`). `mapped(page)` says how many page-table
    /// entries map each page: a new folio takes the sum over its pages as
    /// its references and mapcount, the old folio's flags, and each page
    /// keeps its own `PG_ANON_EXCLUSIVE`; a new folio no entry maps goes
    /// back to the page allocator. The reference `self` holds stays with
    /// the first, and goes when it is dropped here. The caller has made
    /// sure that those entries, and `self`, are all the references there
    /// are, that no PMD block maps the folio, and that none of them can
    /// change meanwhile.
    pub fn split(self, new_order: u8, mapped: impl Fn(usize) -> u32) {
        let (pfn, order) = (self.pfn(), self.order());
        assert!(new_order < order, "split to a smaller order");
        let flags = self.head().flags.load(Ordering::Relaxed) & !PG_ANON_EXCLUSIVE;
        frame::split_pages(self.phys(), order as usize, new_order as usize);
        let nr = 1usize << new_order;
        for first in (0..1usize << order).step_by(nr) {
            let entries: u32 = (first..first + nr).map(&mapped).sum();
            for i in first..first + nr {
                meta(pfn + i)
                    .head_offset
                    .store((i - first) as u16, Ordering::Relaxed);
            }
            let head = meta(pfn + first);
            head.order.store(new_order, Ordering::Relaxed);
            let own = head.flags.load(Ordering::Relaxed) & PG_ANON_EXCLUSIVE;
            head.flags.store(flags | own, Ordering::Relaxed);
            if new_order > 0 {
                meta(pfn + first + 1).counts.store(0, Ordering::Relaxed);
            }
            // As many mappings as entries, and `self`'s reference on the first.
            let held = entries + u32::from(first == 0);
            let counts = u64::from(entries) * MAP + u64::from(held) * REF;
            head.counts.store(counts, Ordering::Release);
            if held == 0 {
                let pa = PhysAddr::from_pfn(pfn + first);
                frame::free_pages(pa, new_order as usize).expect("a split folio freed twice");
            }
        }
    }

    /// Whether the folio is in a file's page cache; faults recheck it under the
    /// page-table lock so as not to map a folio truncation removed.
    pub fn is_cached(&self) -> bool {
        self.head().flags.load(Ordering::Acquire) & PG_CACHED != 0
    }
    /// Whether the folio is still anonymous or in a page cache (Linux:
    /// `folio->mapping` not NULL): what `finish_fault` rechecks under the
    /// page-table lock, in one load.
    pub fn has_mapping(&self) -> bool {
        self.head().flags.load(Ordering::Acquire) & (PG_ANON | PG_CACHED) != 0
    }
    /// Sets or clears `PG_CACHED` as the page cache adds or removes the folio
    /// (Linux sets and clears `folio->mapping`).
    pub fn set_cached(&self, cached: bool) {
        if cached {
            self.head().flags.fetch_or(PG_CACHED, Ordering::Release);
        } else {
            self.head().flags.fetch_and(!PG_CACHED, Ordering::Release);
        }
    }

    /// The folio's bytes, through the linear map.
    ///
    /// The page cache lets several threads read and write a file's folio at
    /// once, as Linux does: concurrent writers to the same bytes race, and
    /// readers may see a mix, exactly as with `write()` on Linux.
    pub fn as_ptr(&self) -> *mut u8 {
        phys_to_virt(self.phys()) as *mut u8
    }

    /// Copies `src` into the folio at byte `offset`.
    pub fn write_at(&self, offset: usize, src: &[u8]) {
        assert!(offset + src.len() <= self.size());
        // SAFETY: in bounds of the folio, which we hold a reference on.
        unsafe {
            core::ptr::copy_nonoverlapping(src.as_ptr(), self.as_ptr().add(offset), src.len())
        };
    }

    /// Copies `n` bytes of `src`, from its byte `from`, into the folio at
    /// byte `offset`; returns how many it copied (short when user memory
    /// runs out).
    pub fn copy_from(&self, offset: usize, src: &WriteSource, from: usize, n: usize) -> usize {
        assert!(offset + n <= self.size());
        // SAFETY: in bounds of the folio, which we hold a reference on.
        unsafe { src.copy_to(from, self.as_ptr().add(offset), n) }
    }

    /// Copies `n` bytes at `offset` out of the folio to `dst` from its byte
    /// `to`; returns how many it copied (short when user memory runs out).
    pub fn copy_to(&self, offset: usize, dst: &mut ReadDest, to: usize, n: usize) -> usize {
        assert!(offset + n <= self.size());
        // SAFETY: in bounds of the folio, which we hold a reference on.
        let src = unsafe { core::slice::from_raw_parts(self.as_ptr().add(offset), n) };
        dst.copy_from(to, src)
    }

    /// Copies bytes at `offset` out of the folio into `dst`.
    pub fn read_at(&self, offset: usize, dst: &mut [u8]) {
        assert!(offset + dst.len() <= self.size());
        // SAFETY: in bounds of the folio, which we hold a reference on.
        unsafe {
            core::ptr::copy_nonoverlapping(self.as_ptr().add(offset), dst.as_mut_ptr(), dst.len())
        };
    }

    /// Zeroes bytes [from, to) of the folio (Linux: `folio_zero_range`).
    pub fn zero_range(&self, from: usize, to: usize) {
        assert!(from <= to && to <= self.size());
        // SAFETY: in bounds of the folio, which we hold a reference on.
        unsafe { core::ptr::write_bytes(self.as_ptr().add(from), 0, to - from) };
    }
}

impl Clone for Folio {
    fn clone(&self) -> Self {
        self.head().counts.fetch_add(REF, Ordering::Relaxed);
        Folio { head: self.head }
    }
}

impl Drop for Folio {
    fn drop(&mut self) {
        if refs(self.head().counts.fetch_sub(REF, Ordering::AcqRel)) == 1 {
            frame::free_pages(self.phys(), self.order() as usize).expect("folio freed twice");
        }
    }
}

impl core::fmt::Debug for Folio {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "Folio(pfn {:#x}, order {}", self.pfn(), self.order())?;
        let flags = self.head().flags.load(Ordering::Relaxed);
        for (name, _) in FOLIO_FLAG_NAMES.iter().filter(|(_, bit)| flags & bit != 0) {
            write!(f, ", {name}")?;
        }
        write!(f, ")")
    }
}
