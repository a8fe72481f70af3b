//! `/proc/PID/pagemap`, `/proc/kpageflags` and `/proc/kpagecount`: what
//! maps each virtual page of an address space, and what each physical
//! frame is, one 64-bit entry each (Linux: `pagemap_read` and its page
//! walk in `fs/proc/task_mmu.c`; `kpageflags_read` and `kpagecount_read`
//! in `fs/proc/page.c`). The entries' bits are `page_flags.rs`'s.

use crate::mm::addr::{PAGE_SIZE, USER_TOP};
use crate::mm::folio::{is_zero_pfn, Folio};
use crate::mm::frame;
use crate::mm::mm_struct::Mm;
use crate::mm::page_flags::{self, FrameState, MappedPage};
use crate::mm::smaps::for_each_mapping;

/// Bytes of one entry of each of the three files (Linux: `PM_ENTRY_BYTES`,
/// `KPMSIZE`): reads must start and end on an entry.
pub const ENTRY_BYTES: usize = 8;

/// Fills `out` with the pagemap entries of the virtual pages from number
/// `vpfn` on, up to the top of user space; returns how many it filled,
/// 0 past the top (Linux: `pagemap_read`, its walk under `mmap_lock`).
pub fn pagemap_read(mm: &Mm, vpfn: u64, out: &mut [u64]) -> usize {
    let top = (USER_TOP / PAGE_SIZE) as u64;
    if vpfn >= top {
        return 0;
    }
    let n = out.len().min((top - vpfn) as usize);
    let start = vpfn as usize * PAGE_SIZE;
    let end = start + n * PAGE_SIZE;
    out[..n].fill(0);
    let _map = mm.mmap_lock_readonly();
    let _ptl = mm.page_table_lock.lock();
    for_each_mapping(mm, start, end, &mut |va, pte, bytes| {
        let pfn = pte.addr().pfn();
        // SAFETY: for_each_mapping's entries are read under their locks.
        let folio = unsafe { Folio::from_pfn(pfn) };
        // A PMD block gives each of its pages' frames in turn, each mapped
        // once by it.
        let nr_pages = if bytes > PAGE_SIZE {
            1
        } else {
            folio.nr_pages()
        };
        for i in 0..bytes / PAGE_SIZE {
            let page_va = va + i * PAGE_SIZE;
            if (start..end).contains(&page_va) {
                out[(page_va - start) / PAGE_SIZE] = page_flags::pagemap_entry(Some(MappedPage {
                    pfn: pfn + i,
                    anon: folio.is_anon(),
                    mapcount: folio.mapcount(),
                    nr_pages,
                    zero: is_zero_pfn(pfn),
                }));
            }
        }
    });
    n
}

/// Which of the two per-frame files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerFrame {
    /// `/proc/kpageflags`: what the frame is, `KPF_*` bits.
    Flags,
    /// `/proc/kpagecount`: how many page-table entries map it.
    Count,
}

/// Fills `out` with the entries of the frames from number `pfn` on, up to
/// the end of RAM; returns how many, 0 past the end (Linux:
/// `kpageflags_read`, `kpagecount_read`).
pub fn kpage_read(which: PerFrame, pfn: u64, out: &mut [u64]) -> usize {
    let max = frame::max_pfn() as u64;
    if pfn >= max {
        return 0;
    }
    let n = out.len().min((max - pfn) as usize);
    for (i, entry) in out[..n].iter_mut().enumerate() {
        let state = frame::frame_state(pfn as usize + i);
        *entry = match (which, state) {
            (PerFrame::Flags, state) => page_flags::stable_page_flags(state),
            (PerFrame::Count, FrameState::Folio(page)) => page.page_mapcount(),
            (PerFrame::Count, _) => 0,
        };
    }
    n
}
