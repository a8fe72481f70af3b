//! A file's page cache, `struct address_space` (Linux: `mm/filemap.c`):
//! the folios holding the file's data, indexed by page offset, and the list
//! of mappings of the file (`i_mmap`) that truncation must unmap.
//!
//! The folio index sits under a spin lock (Linux: the xarray's `xa_lock`);
//! lookups take a folio reference under it and then work without it, so
//! copying data never holds the lock. `filemap_map_pages` is fault-around's
//! half that reads the cache.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE};
use crate::mm::fault::{do_set_pmd, pte_alloc};
use crate::mm::fault_range::none_run;
use crate::mm::folio::Folio;
use crate::mm::folio_index::FolioIndex;
use crate::mm::memory::{self, FaultProt};
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::Level;
use crate::mm::truncate::{undo_range_plan, UndoAction};
use crate::mm::vm_fault::VmFault;
use crate::mm::vma::{VM_MAYWRITE, VM_SHARED};
use crate::sync::SpinLock;

/// A file's page cache and the mms that map it (Linux's `struct
/// address_space`), embedded in every tmpfs file.
pub struct AddressSpace {
    /// The cached folios by page index (Linux's `i_pages` xarray); each holds
    /// one folio reference, taken in `add_folio`.
    i_pages: SpinLock<FolioIndex<Folio>>,
    /// Address spaces that map this file, by address (Linux: the `i_mmap`
    /// tree of VMAs; we keep the mms and look their VMAs up): a tree, so
    /// that ten thousand forks of one program each register in log time.
    i_mmap: SpinLock<BTreeMap<usize, Weak<Mm>>>,
}

impl Default for AddressSpace {
    fn default() -> Self {
        Self::new()
    }
}

impl AddressSpace {
    /// An empty cache with no mappers.
    pub const fn new() -> Self {
        AddressSpace {
            i_pages: SpinLock::new(FolioIndex::new()),
            i_mmap: SpinLock::new(BTreeMap::new()),
        }
    }

    /// The folio caching page `index`, with a reference, and the page's
    /// position inside it (Linux: `filemap_get_folio`).
    pub fn get_folio(&self, index: u64) -> Option<(Folio, usize)> {
        let pages = self.i_pages.lock();
        let (start, _, folio) = pages.lookup(index)?;
        Some((folio.clone(), (index - start) as usize))
    }

    /// Calls `f(first index, folio)` for each cached folio overlapping pages
    /// `[start, end)`, last first, under one hold of the index's lock (Linux:
    /// `next_uptodate_folio`'s walk of the xarray in `filemap_map_pages`).
    pub fn for_each_folio(&self, start: u64, end: u64, mut f: impl FnMut(u64, &Folio)) {
        self.i_pages
            .lock()
            .for_each_rev(start, end, |head, _, folio| f(head, folio));
    }

    /// Inserts `folio` as the cache of pages `[index, index + nr)`; gives it
    /// back if any of them is cached already (Linux: `filemap_add_folio`).
    pub fn add_folio(&self, folio: Folio, index: u64) -> Result<(), Folio> {
        folio.set_cached(true);
        let order = folio.order();
        self.i_pages
            .lock()
            .insert(index, order, folio)
            .map_err(|(_, folio)| {
                folio.set_cached(false);
                folio
            })
    }

    /// Moves pages `[index, index + nr)` into `folio`, of `nr` pages,
    /// copying their data, if each is cached in a smaller folio that only
    /// the cache holds (no mapping, no reference in flight), all under one
    /// hold of the index's lock so no lookup sees the move half done
    /// (Linux: khugepaged's `collapse_file`, which locks and isolates the
    /// old folios instead). False, changing nothing, otherwise.
    pub fn collapse(&self, index: u64, folio: Folio) -> bool {
        let nr = folio.nr_pages() as u64;
        let mut pages = self.i_pages.lock();
        let mut at = index;
        while at < index + nr {
            match pages.lookup(at) {
                Some((start, order, old))
                    if start == at
                        && order < folio.order()
                        && old.mapcount() == 0
                        && old.refcount() == 1
                        && old.is_uptodate() =>
                {
                    at += 1 << order;
                }
                _ => return false,
            }
        }
        let mut at = index;
        while at < index + nr {
            let (order, old) = pages.remove(at).expect("checked just above");
            let offset = (at - index) as usize * crate::mm::addr::PAGE_SIZE;
            // SAFETY: two distinct folios' bytes in the linear map; nothing
            // else reads or writes the old one (only the cache held it).
            unsafe {
                core::ptr::copy_nonoverlapping(old.as_ptr(), folio.as_ptr().add(offset), old.size())
            };
            if old.is_dirty() {
                folio.mark_dirty();
            }
            old.set_cached(false);
            at += 1 << order;
        }
        folio.mark_uptodate();
        folio.set_cached(true);
        let order = folio.order();
        pages
            .insert(index, order, folio)
            .map_err(|_| ())
            .expect("the range was just emptied");
        true
    }

    /// Is no page of `[index, index + nr)` cached?
    pub fn range_is_empty(&self, index: u64, nr: u64) -> bool {
        self.i_pages.lock().range_is_empty(index, nr)
    }

    /// Pages cached, large folios counting every page (Linux's `nrpages`).
    pub fn nr_pages(&self) -> u64 {
        self.i_pages.lock().nr_pages()
    }

    /// Folios cached, a large folio counting once.
    pub fn nr_folios(&self) -> usize {
        self.i_pages.lock().nr_folios()
    }

    /// First cached page at or after `index` (SEEK_DATA) and first uncached
    /// one (SEEK_HOLE).
    pub fn next_data(&self, index: u64) -> Option<u64> {
        self.i_pages.lock().next_data(index)
    }
    /// The first page at or after `index` that no folio caches (SEEK_HOLE).
    pub fn next_hole(&self, index: u64) -> u64 {
        self.i_pages.lock().next_hole(index)
    }

    /// Drops the cache of bytes `[start, end)`: folios wholly inside go,
    /// folios partly inside have that part zeroed (Linux:
    /// `truncate_inode_pages_range`, which splits large folios where it can;
    /// we never split). `removed` gets each removed folio, so the caller can
    /// update its accounting before it is dropped. A batch of folios at a
    /// time under the lock, as Linux's `folio_batch`: no memory is needed
    /// however large the file.
    pub fn remove_range(&self, start: u64, end: u64, mut removed: impl FnMut(Folio)) {
        /// Folios per batch (Linux: `PAGEVEC_SIZE`, 31).
        const BATCH: usize = 16;
        let mut from = start;
        loop {
            let mut gone: [Option<Folio>; BATCH] = core::array::from_fn(|_| None);
            let mut done = 0;
            {
                let mut pages = self.i_pages.lock();
                let mut plan = [None; BATCH];
                for (slot, action) in plan.iter_mut().zip(undo_range_plan(&pages, from, end)) {
                    *slot = Some(action);
                }
                for action in plan.into_iter().map_while(|a| a) {
                    from = match action {
                        UndoAction::Remove { start } => {
                            let Some((order, folio)) = pages.remove(start) else {
                                break;
                            };
                            folio.set_cached(false);
                            gone[done] = Some(folio);
                            (start + (1u64 << order)) << PAGE_SHIFT
                        }
                        UndoAction::Zero { start, from, to } => {
                            if let Some((_, _, folio)) = pages.lookup(start) {
                                folio.zero_range(from, to);
                            }
                            (start << PAGE_SHIFT) + to as u64
                        }
                    };
                    done += 1;
                }
            }
            gone.into_iter().flatten().for_each(&mut removed);
            if done < BATCH {
                return;
            }
        }
    }

    /// Notes that `mm` maps this file, so truncation can find it.
    pub fn add_mm(&self, mm: &Arc<Mm>) {
        self.i_mmap
            .lock()
            .entry(Arc::as_ptr(mm) as usize)
            .or_insert_with(|| Arc::downgrade(mm));
    }

    /// Forgets an address space that is going away, so its last
    /// reference (a `Weak`, which keeps the `Mm`'s memory) goes with it
    /// (Linux: `unlink_file_vma` as each VMA is freed).
    pub fn remove_mm(&self, mm: *const Mm) {
        self.i_mmap.lock().remove(&(mm as usize));
    }

    /// The live address spaces that map this file (Linux walks `i_mmap`).
    fn mapping_mms(&self) -> Vec<Arc<Mm>> {
        self.i_mmap
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Does any process map this file shared with the right to write
    /// (`VM_SHARED | VM_MAYWRITE`)? (Linux: `mapping_writably_mapped`, which
    /// counts such mappings in `i_mmap_writable`; we look them up.)
    pub fn writably_mapped(&self) -> bool {
        let mms = self.mapping_mms();
        let shared_maywrite = VM_SHARED | VM_MAYWRITE;
        mms.iter().any(|mm| {
            let map = mm.mmap_lock_readonly();
            let found = map
                .vmas
                .iter()
                .any(|(_, _, v)| v.maps(self) && v.flags & shared_maywrite == shared_maywrite);
            found
        })
    }

    /// Unmaps file pages `[start, end)` from every process mapping them
    /// (Linux: `unmap_mapping_range` over `i_mmap`), so later accesses
    /// fault and see the file as it is now (or SIGBUS past its end).
    pub fn unmap_mapping_range(&self, start: u64, end: u64) {
        let mms = self.mapping_mms();
        for mm in mms {
            let map = mm.mmap_lock_readonly();
            for (vstart, vend, vma) in map.vmas.iter() {
                if !vma.maps(self) {
                    continue;
                }
                let first = vma.pgoff;
                let last = first + ((vend - vstart) >> PAGE_SHIFT) as u64;
                let (s, e) = (start.max(first), end.min(last));
                if s < e {
                    let va = |pg: u64| vstart + ((pg - first) as usize) * PAGE_SIZE;
                    memory::zap_range(&mm, va(s), va(e));
                }
            }
        }
    }
}

/// Fault-around with no PTE table under the fault's PMD entry yet (Linux:
/// `filemap_map_pmd`): the fault's page cached in an uptodate 2M folio is
/// mapped by one block (`do_set_pmd`); otherwise the table is made for
/// the PTEs. False: nothing more to map here.
#[cold]
fn filemap_map_pmd(vmf: &mut VmFault, mapping: &AddressSpace) -> bool {
    if let Some((folio, page)) = mapping.get_folio(vmf.pgoff) {
        if folio.is_uptodate() && do_set_pmd(vmf, &folio, page).is_some() {
            return false;
        }
    }
    pte_alloc(vmf) == Ok(true)
}

/// Maps the cached, uptodate pages of `mapping` among file pages
/// `start..=end` onto the fault's empty entries, a folio's worth at a time,
/// allocating and reading nothing (Linux: `filemap_map_pages`, fault-around's
/// `vm_ops->map_pages`). One walk of the page cache and one hold of the
/// page table's lock cover the whole window. The caller has cut `end` at
/// the end of the file and of the window.
pub fn filemap_map_pages(vmf: &mut VmFault, mapping: &AddressSpace, start: u64, end: u64) {
    if vmf.pte.is_none() && !filemap_map_pmd(vmf, mapping) {
        return;
    }
    let (vma, range, table) = (vmf.vma, &vmf.range, vmf.table());
    let none = |va| table[Level::Pte.index(va)].load(core::sync::atomic::Ordering::Relaxed) == 0;
    // The VA where file page `index` is mapped (may lie outside the window).
    let va_of = |index: u64| {
        let pages = index.wrapping_sub(vma.pgoff) as usize;
        range.start.wrapping_add(pages.wrapping_mul(PAGE_SIZE))
    };
    let window = va_of(start)..va_of(end) + PAGE_SIZE;
    // Page-cache folios are never anonymous: one protection for them all.
    let prot = FaultProt::new(vmf, false);
    let _ptl = vmf.ptl();
    mapping.for_each_folio(start, end + 1, |head, folio| {
        if !folio.is_uptodate() {
            return;
        }
        let folio_va = va_of(head);
        if folio.nr_pages() == 1 {
            // Linux: `filemap_map_order0_folio`. The page lies in the
            // window, as its index does.
            if none(folio_va) {
                prot.set_pte_range(vmf, folio, 0, 1, folio_va);
                folio.add_mappings(1);
            }
            return;
        }
        // Linux: `filemap_map_folio_range`, a run of empty entries at a time.
        let (from, to) = (
            window.start.max(folio_va),
            window.end.min(folio_va + folio.size()),
        );
        let mut va = from;
        while va < to {
            let run = none_run(va..to, va, none);
            if run.is_empty() {
                va += PAGE_SIZE;
                continue;
            }
            let page = (run.start - folio_va) / PAGE_SIZE;
            let nr = run.len() / PAGE_SIZE;
            prot.set_pte_range(vmf, folio, page, nr, run.start);
            folio.add_mappings(nr);
            va = run.end;
        }
    });
    // No barrier after the entries, as after `finish_fault`'s.
}
