//! The bits `/proc/PID/pagemap`, `/proc/kpageflags` and `/proc/kpagecount`
//! report, as Linux defines them (Documentation/admin-guide/mm/pagemap.rst;
//! Linux: `make_pme` and the `PM_*` bits in `fs/proc/task_mmu.c`,
//! `stable_page_flags` in `fs/proc/page.c`, the `KPF_*` numbers in
//! `include/uapi/linux/kernel-page-flags.h`). Pure: `mm/pagemap.rs` reads
//! the page tables and the frames' state, this turns it into the bits.
//!
//! Where we simplify: faultline counts mappings per folio, not per page
//! (Linux's `folio_precise_page_mapcount`), so a page of a large folio
//! counts as mapped as often as the folio's pages are on average, and as
//! exclusively mapped while the folio has no more mappings than pages.

/// Bits 0-54 of a pagemap entry: the page frame number, when present.
pub const PM_PFRAME_MASK: u64 = (1 << 55) - 1;
/// Bit 56: the page is mapped exactly once (Linux: `PM_MMAP_EXCLUSIVE`).
pub const PM_MMAP_EXCLUSIVE: u64 = 1 << 56;
/// Bit 61: a file page or shared anonymous memory (Linux: `PM_FILE`).
pub const PM_FILE: u64 = 1 << 61;
/// Bit 63: the page is present (Linux: `PM_PRESENT`).
pub const PM_PRESENT: u64 = 1 << 63;

/// What one page-table entry maps, as pagemap describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedPage {
    /// The frame it maps.
    pub pfn: usize,
    /// Its folio is anonymous memory (not page cache, shared memory
    /// included).
    pub anon: bool,
    /// Mappings of its folio, in every address space.
    pub mapcount: u32,
    /// Pages in its folio; 1 for a PMD block, which maps each of them once.
    pub nr_pages: usize,
    /// The zero page: present, but neither a file page nor anyone's own
    /// (Linux: `vm_normal_page` finds no page behind the entry).
    pub zero: bool,
}

/// The pagemap entry of a virtual page: 0 for one nothing maps (Linux:
/// `pte_to_pagemap_entry` and `make_pme`, without swap or soft-dirty,
/// which faultline has not: arm64 Linux keeps no soft-dirty bit either).
pub fn pagemap_entry(page: Option<MappedPage>) -> u64 {
    let Some(p) = page else {
        return 0;
    };
    let mut entry = PM_PRESENT | (p.pfn as u64 & PM_PFRAME_MASK);
    if p.zero {
        return entry;
    }
    if !p.anon {
        entry |= PM_FILE;
    }
    if p.mapcount as usize <= p.nr_pages {
        entry |= PM_MMAP_EXCLUSIVE;
    }
    entry
}

/// Bit numbers of a `/proc/kpageflags` entry, from here on: the page holds
/// its data.
pub const KPF_UPTODATE: u32 = 3;
/// Written since it was last clean.
pub const KPF_DIRTY: u32 = 4;
/// On an LRU list (in Linux every user and page-cache folio is).
pub const KPF_LRU: u32 = 5;
/// A free page of the buddy allocator.
pub const KPF_BUDDY: u32 = 10;
/// Mapped into some address space.
pub const KPF_MMAP: u32 = 11;
/// Anonymous memory.
pub const KPF_ANON: u32 = 12;
/// Backed by swap (anonymous memory and shmem).
pub const KPF_SWAPBACKED: u32 = 14;
/// The first page of a large folio.
pub const KPF_COMPOUND_HEAD: u32 = 15;
/// Another page of a large folio.
pub const KPF_COMPOUND_TAIL: u32 = 16;
/// No page here: a hole in the physical address space.
pub const KPF_NOPAGE: u32 = 20;
/// Part of a transparent huge page: any large anonymous or page-cache
/// folio, PMD-sized or not.
pub const KPF_THP: u32 = 22;
/// The zero page.
pub const KPF_ZERO_PAGE: u32 = 24;
/// Reserved: firmware, the kernel image, `mem_map`.
pub const KPF_RESERVED: u32 = 32;

/// What a frame is, for `/proc/kpageflags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameState {
    /// No RAM at this frame number.
    NoPage,
    /// Never handed to the page allocator.
    Reserved,
    /// On the buddy allocator's free lists.
    Free,
    /// Allocated, but to no folio: kernel memory, page tables.
    Kernel,
    /// A page of a live folio.
    Folio(FolioPage),
}

/// A page of a folio, for `/proc/kpageflags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FolioPage {
    /// This page is the folio's first.
    pub head: bool,
    /// log2 of the folio's size in pages.
    pub order: u8,
    /// Page-table entries mapping the folio, in every address space.
    pub mapcount: u32,
    /// Of those, PMD blocks mapping it whole.
    pub entire_mapcount: u32,
    /// The zero page, which no process counts as its own (Linux:
    /// `is_zero_folio`).
    pub zero: bool,
    /// Anonymous memory.
    pub anon: bool,
    /// In a file's page cache.
    pub cached: bool,
    /// Holds its data (Linux sets this on every anonymous folio too).
    pub uptodate: bool,
    /// Written since it was last clean.
    pub dirty: bool,
}

impl FolioPage {
    /// How many entries map this page: its `/proc/kpagecount` entry (Linux:
    /// `folio_precise_page_mapcount`; here each PMD block mapping the folio,
    /// and the folio's average of the rest, rounded up). 0 for the zero
    /// page, which Linux does not count.
    pub fn page_mapcount(&self) -> u64 {
        if self.zero {
            return 0;
        }
        let ptes = self.mapcount.saturating_sub(self.entire_mapcount);
        u64::from(self.entire_mapcount) + u64::from(ptes).div_ceil(1 << self.order)
    }
}

/// The `/proc/kpageflags` entry of a frame (Linux: `stable_page_flags`).
pub fn stable_page_flags(state: FrameState) -> u64 {
    let bit = |b: u32| 1u64 << b;
    let f = match state {
        FrameState::NoPage => return bit(KPF_NOPAGE),
        FrameState::Reserved => return bit(KPF_RESERVED),
        FrameState::Free => return bit(KPF_BUDDY),
        FrameState::Kernel => return 0,
        FrameState::Folio(f) if f.zero => return bit(KPF_ZERO_PAGE) | bit(KPF_RESERVED),
        FrameState::Folio(f) => f,
    };
    // Anonymous and page-cache folios are the ones on the LRU and in the
    // rmap (Linux: `folio_test_large_rmappable`); both are swap-backed here,
    // the page cache being all shmem.
    let user = f.anon || f.cached;
    let mut u = 0;
    for (set, b) in [
        (f.mapcount > 0, KPF_MMAP),
        (f.anon, KPF_ANON),
        (f.order > 0 && f.head, KPF_COMPOUND_HEAD),
        (f.order > 0 && !f.head, KPF_COMPOUND_TAIL),
        (f.order > 0 && user, KPF_THP),
        (f.uptodate || f.anon, KPF_UPTODATE),
        (f.dirty, KPF_DIRTY),
        (user, KPF_LRU),
        (user, KPF_SWAPBACKED),
    ] {
        if set {
            u |= bit(b);
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(pfn: usize, anon: bool, mapcount: u32, nr_pages: usize) -> Option<MappedPage> {
        Some(MappedPage {
            pfn,
            anon,
            mapcount,
            nr_pages,
            zero: false,
        })
    }

    #[test]
    fn pagemap_entries_as_linux_documents_them() {
        assert_eq!(pagemap_entry(None), 0);
        // An anonymous page mapped once: present, exclusive, its PFN.
        assert_eq!(
            pagemap_entry(page(0x4_1234, true, 1, 1)),
            (1 << 63) | (1 << 56) | 0x4_1234
        );
        // After fork both processes map it: no longer exclusive.
        assert_eq!(pagemap_entry(page(7, true, 2, 1)), (1 << 63) | 7);
        // A shmem page is a file page.
        assert_eq!(
            pagemap_entry(page(7, false, 1, 1)),
            (1 << 63) | (1 << 61) | (1 << 56) | 7
        );
        // A 64K folio mapped whole by one process; then by two.
        assert_ne!(pagemap_entry(page(16, true, 16, 16)) & PM_MMAP_EXCLUSIVE, 0);
        assert_eq!(pagemap_entry(page(16, true, 32, 16)) & PM_MMAP_EXCLUSIVE, 0);
        // A PMD block mapped by this process alone, then after fork.
        assert_ne!(pagemap_entry(page(512, true, 1, 1)) & PM_MMAP_EXCLUSIVE, 0);
        assert_eq!(pagemap_entry(page(512, true, 2, 1)) & PM_MMAP_EXCLUSIVE, 0);
        // The zero page: present, nothing else.
        let zero = MappedPage {
            zero: true,
            ..page(9, false, 1, 1).unwrap()
        };
        assert_eq!(pagemap_entry(Some(zero)), (1 << 63) | 9);
        // The PFN field is 55 bits wide.
        assert_eq!(
            pagemap_entry(page(usize::MAX, true, 1, 1)) & PM_PFRAME_MASK,
            PM_PFRAME_MASK
        );
    }

    fn folio_page(order: u8, mapcount: u32) -> FolioPage {
        FolioPage {
            head: true,
            order,
            mapcount,
            entire_mapcount: 0,
            zero: false,
            anon: true,
            cached: false,
            uptodate: true,
            dirty: false,
        }
    }

    #[test]
    fn page_mapcount_is_the_folio_average() {
        assert_eq!(folio_page(0, 2).page_mapcount(), 2);
        assert_eq!(folio_page(4, 16).page_mapcount(), 1);
        assert_eq!(folio_page(4, 17).page_mapcount(), 2);
        assert_eq!(folio_page(4, 0).page_mapcount(), 0);
        // A 2M folio under one PMD block, then under two after fork, then
        // with 512 PTEs too once one of them is split.
        let pmd = |entire, mapcount| FolioPage {
            entire_mapcount: entire,
            ..folio_page(9, mapcount)
        };
        assert_eq!(pmd(1, 1).page_mapcount(), 1);
        assert_eq!(pmd(2, 2).page_mapcount(), 2);
        assert_eq!(pmd(1, 513).page_mapcount(), 2);
        let zero = FolioPage {
            zero: true,
            ..folio_page(0, 7)
        };
        assert_eq!(zero.page_mapcount(), 0);
    }

    fn folio(head: bool, order: u8, anon: bool, cached: bool) -> FrameState {
        FrameState::Folio(FolioPage {
            head,
            order,
            mapcount: 1,
            entire_mapcount: 0,
            zero: false,
            anon,
            cached,
            uptodate: cached,
            dirty: false,
        })
    }

    #[test]
    fn kpageflags_of_each_kind_of_frame() {
        assert_eq!(stable_page_flags(FrameState::NoPage), 1 << 20);
        assert_eq!(stable_page_flags(FrameState::Free), 1 << 10);
        assert_eq!(stable_page_flags(FrameState::Reserved), 1 << 32);
        assert_eq!(stable_page_flags(FrameState::Kernel), 0);
        // A small anonymous page: mmap, anon, uptodate, lru, swapbacked.
        let small = stable_page_flags(folio(true, 0, true, false));
        assert_eq!(
            small,
            (1 << 11) | (1 << 12) | (1 << 3) | (1 << 5) | (1 << 14)
        );
        // A 64K anonymous folio: its head and a tail are THP pages.
        let head = stable_page_flags(folio(true, 4, true, false));
        let tail = stable_page_flags(folio(false, 4, true, false));
        assert_eq!(
            head & ((1 << 15) | (1 << 16) | (1 << 22)),
            (1 << 15) | (1 << 22)
        );
        assert_eq!(
            tail & ((1 << 15) | (1 << 16) | (1 << 22)),
            (1 << 16) | (1 << 22)
        );
        // A 2M shmem folio: THP, not anonymous.
        let shmem = stable_page_flags(folio(true, 9, false, true));
        assert_ne!(shmem & (1 << 22), 0);
        assert_eq!(shmem & (1 << 12), 0);
        // A large folio of neither kind is compound but no THP.
        assert_eq!(
            stable_page_flags(folio(true, 2, false, false)) & (1 << 22),
            0
        );
        // The zero page: that, and reserved, whoever maps it.
        let zero = FrameState::Folio(FolioPage {
            zero: true,
            ..folio_page(0, 3)
        });
        assert_eq!(stable_page_flags(zero), (1 << 24) | (1 << 32));
        // Unmapped: no KPF_MMAP.
        let unmapped = FrameState::Folio(folio_page(0, 0));
        assert_eq!(stable_page_flags(unmapped) & (1 << 11), 0);
    }
}
