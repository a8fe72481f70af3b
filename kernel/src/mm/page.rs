//! `Page`: the metadata kept for every physical page frame, one entry per
//! frame in the `mem_map` array (Linux: `struct page` in
//! `include/linux/mm_types.h`, flag helpers from `include/linux/page-flags.h`).
//!
//! For now a `Page` holds only what the buddy allocator (`mm/buddy.rs`)
//! needs. Where we simplify:
//! - The free-list links are `u32` indices into `mem_map` instead of Linux's
//!   `list_head` of two pointers. That halves the size (at 16 bytes per 4K
//!   frame, `mem_map` costs 0.4% of RAM) and needs no pointer arithmetic,
//!   so the list code is safe Rust.
//! - `PG_BUDDY` is a flag bit; Linux keeps it in `page_type` so that it can
//!   share storage with `_mapcount`, which we do not have yet.
//! - Every allocated block has `PG_HEAD` and its order on its first page.
//!   Linux does that only for compound pages (`__GFP_COMP`); we do it always
//!   so that freeing a pfn/order that was never handed out is an error
//!   instead of a corrupted free list.

/// Never handed to the allocator: firmware, the kernel image, `mem_map`
/// itself, or RAM not yet given to the buddy. Every frame starts reserved.
pub const PG_RESERVED: u32 = 1 << 0;
/// First page of a free block sitting on a buddy free list.
pub const PG_BUDDY: u32 = 1 << 1;
/// First page of an allocated block.
pub const PG_HEAD: u32 = 1 << 2;

/// The "no page" value of a free-list link (an index into `mem_map`).
pub const PAGE_NIL: u32 = u32::MAX;

/// The buddy allocator's state of one page frame (Linux's `struct page`),
/// 16 bytes; `mem_map[i]` describes frame `base_pfn + i`.
#[repr(C)]
#[derive(Debug)]
pub struct Page {
    /// `PG_*` bits above (Linux's `page->flags`).
    flags: u32,
    /// Size of the block this page heads, as a power of two; meaningful only
    /// under `PG_BUDDY` or `PG_HEAD` (Linux: `buddy_order()`/`folio_order()`).
    order: u32,
    /// Free-list neighbours, as indices into `mem_map`; meaningful only
    /// under `PG_BUDDY` (Linux: `page->buddy_list`).
    pub(super) buddy_prev: u32,
    /// The next block on the same free list, or `PAGE_NIL` at the end.
    pub(super) buddy_next: u32,
}

impl Page {
    /// A frame the allocator may not touch until it is explicitly freed to
    /// it: every entry of `mem_map` starts like this (Linux: `memmap_init`
    /// marks all pages reserved until memblock releases them).
    pub const fn new_reserved() -> Self {
        Page {
            flags: PG_RESERVED,
            order: 0,
            buddy_prev: PAGE_NIL,
            buddy_next: PAGE_NIL,
        }
    }

    /// Linux: `PageReserved`.
    pub fn is_reserved(&self) -> bool {
        self.flags & PG_RESERVED != 0
    }

    /// Linux: `PageBuddy`.
    pub fn is_buddy(&self) -> bool {
        self.flags & PG_BUDDY != 0
    }

    /// Linux: `PageHead`.
    pub fn is_head(&self) -> bool {
        self.flags & PG_HEAD != 0
    }

    /// Order of the free or allocated block this page heads.
    pub fn order(&self) -> usize {
        debug_assert!(self.is_buddy() || self.is_head());
        self.order as usize
    }

    /// Linux: `__ClearPageReserved`; whether the frame was reserved.
    pub(super) fn take_reserved(&mut self) -> bool {
        let was = self.is_reserved();
        self.flags &= !PG_RESERVED;
        was
    }

    /// Linux: `__SetPageBuddy` plus `set_buddy_order`.
    pub(super) fn set_buddy(&mut self, order: usize) {
        self.flags |= PG_BUDDY;
        self.order = order as u32;
    }

    /// Linux: `__ClearPageBuddy`.
    pub(super) fn clear_buddy(&mut self) {
        self.flags &= !PG_BUDDY;
    }

    /// Linux: `__SetPageHead` plus `folio_set_order`.
    pub(super) fn set_head(&mut self, order: usize) {
        self.flags |= PG_HEAD;
        self.order = order as u32;
    }

    /// Linux: `__ClearPageHead`.
    pub(super) fn clear_head(&mut self) {
        self.flags &= !PG_HEAD;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_16_bytes() {
        // mem_map's share of RAM is size_of::<Page>() / PAGE_SIZE; growing
        // Page should be a decision, not an accident.
        assert_eq!(core::mem::size_of::<Page>(), 16);
    }

    #[test]
    fn new_page_is_reserved_only() {
        let page = Page::new_reserved();
        assert!(page.is_reserved());
        assert!(!page.is_buddy());
        assert!(!page.is_head());
        assert_eq!(page.buddy_prev, PAGE_NIL);
        assert_eq!(page.buddy_next, PAGE_NIL);
    }

    #[test]
    fn flags_are_independent() {
        let mut page = Page::new_reserved();
        assert!(page.take_reserved());
        assert!(!page.is_reserved());
        assert!(!page.take_reserved());

        page.set_buddy(7);
        assert!(page.is_buddy() && !page.is_head() && !page.is_reserved());
        assert_eq!(page.order(), 7);
        page.clear_buddy();
        assert!(!page.is_buddy());

        page.set_head(3);
        assert!(page.is_head() && !page.is_buddy() && !page.is_reserved());
        assert_eq!(page.order(), 3);
        page.clear_head();
        assert!(!page.is_head());
        assert_eq!(page.flags, 0);
    }
}
