//! A tmpfs regular file: its size and its page cache of large folios, and
//! the read, write, truncate and fallocate paths over them (Linux:
//! `mm/shmem.c`: `shmem_file_read_iter`, `shmem_write_begin`/`write_end`
//! under `generic_perform_write`, `shmem_get_folio_gfp`,
//! `shmem_alloc_and_add_folio`, `shmem_setattr`, `shmem_fallocate`).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::TmpfsSb;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE};
use crate::mm::fault::{Access, FaultError};
use crate::mm::fault_range::thp_vma_suitable;
use crate::mm::filemap::{filemap_map_pages, AddressSpace};
use crate::mm::folio::Folio;
use crate::mm::uaccess::{ReadDest, WriteSource};
use crate::mm::vm_fault::VmFault;
use crate::mm::vm_ops::VmOperations;
use crate::mm::vma::{VM_EXEC, VM_HUGEPAGE};
use crate::mm::vmstat;
use crate::sync::{Mutex, SpinLock};
pub use uapi::fcntl::{
    F_SEAL_EXEC, F_SEAL_FUTURE_WRITE, F_SEAL_GROW, F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_WRITE,
};

/// Largest file size (Linux: `MAX_LFS_FILESIZE`).
pub const MAX_FILE_SIZE: u64 = i64::MAX as u64;
/// The PMD order: 2M folios.
const PMD_ORDER: u8 = 9;

/// The tmpfs half of a regular file's inode: its size, page cache and seals
/// (Linux: `struct shmem_inode_info`, with its inode's `i_size` and
/// `i_mapping`).
pub struct ShmemFile {
    /// The mount it is on, charged for every page it caches.
    sb: Arc<TmpfsSb>,
    /// Serialises size changes and writers (Linux: `inode->i_rwsem`).
    lock: Mutex<()>,
    /// `i_size`, in bytes: changed only under `lock`, read without it.
    size: AtomicU64,
    /// The page cache of the file's folios (Linux: `inode->i_mapping`); mmap
    /// maps the file's pages from here.
    pub mapping: AddressSpace,
    /// The pages a hole punch is dropping now, if one is running (Linux:
    /// the `shmem_falloc` left in `inode->i_private`).
    punching: SpinLock<Option<(u64, u64)>>,
    /// Is `punching` set? So faults need not take its lock to find out.
    punch_running: AtomicBool,
    /// memfd seals, `F_SEAL_*` (Linux: `shmem_inode_info.seals`): a file
    /// not made by memfd_create(MFD_ALLOW_SEALING) starts with F_SEAL_SEAL.
    seals: AtomicU32,
}

/// Seals that forbid writing through write(2) and new writable mappings.
pub const F_SEAL_ANY_WRITE: u32 = F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;

/// The index of the page holding byte `pos` of the file.
fn index_of(pos: u64) -> u64 {
    pos >> PAGE_SHIFT
}

impl ShmemFile {
    /// An empty file on `sb`, sealed with F_SEAL_SEAL until memfd_create
    /// allows sealing (Linux: `shmem_get_inode`).
    pub fn new(sb: Arc<TmpfsSb>) -> Self {
        ShmemFile {
            sb,
            lock: Mutex::new(()),
            size: AtomicU64::new(0),
            mapping: AddressSpace::new(),
            punching: SpinLock::new(None),
            punch_running: AtomicBool::new(false),
            seals: AtomicU32::new(F_SEAL_SEAL),
        }
    }

    /// F_GET_SEALS.
    pub fn seals(&self) -> u32 {
        self.seals.load(Ordering::Acquire)
    }

    /// memfd_create(MFD_ALLOW_SEALING): no seals yet.
    pub fn allow_sealing(&self) {
        self.seals.store(0, Ordering::Release);
    }

    /// F_ADD_SEALS (Linux: `memfd_add_seals`): EINVAL for unknown seals,
    /// EPERM once F_SEAL_SEAL is set, EBUSY for F_SEAL_WRITE while
    /// `writable_mapped()` says a shared mapping could still write. On a
    /// file whose `mode` has an execute bit, F_SEAL_EXEC brings every
    /// write seal with it, so it stays write-xor-execute. Under the file's
    /// lock, so writers see the seal or finish first.
    pub fn add_seals(
        &self,
        mut seals: u32,
        mode: u32,
        writable_mapped: impl FnOnce() -> bool,
    ) -> KResult<()> {
        let all = F_SEAL_SEAL
            | F_SEAL_SHRINK
            | F_SEAL_GROW
            | F_SEAL_WRITE
            | F_SEAL_FUTURE_WRITE
            | F_SEAL_EXEC;
        if seals & !all != 0 {
            return Err(Errno::EINVAL);
        }
        let _i_rwsem = self.lock.lock();
        let cur = self.seals();
        if cur & F_SEAL_SEAL != 0 {
            return Err(Errno::EPERM);
        }
        if seals & F_SEAL_EXEC != 0 && mode & 0o111 != 0 {
            seals |= F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;
        }
        if seals & F_SEAL_WRITE != 0 && cur & F_SEAL_WRITE == 0 && writable_mapped() {
            return Err(Errno::EBUSY);
        }
        self.seals.store(cur | seals, Ordering::Release);
        Ok(())
    }

    /// May a write reaching byte `end` go ahead? (Linux: `shmem_write_begin`'s checks.)
    fn check_write_seals(&self, end: u64) -> KResult<()> {
        let seals = self.seals();
        if seals & F_SEAL_ANY_WRITE != 0 || (seals & F_SEAL_GROW != 0 && end > self.size()) {
            return Err(Errno::EPERM);
        }
        Ok(())
    }

    /// `i_size`, in bytes.
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Acquire)
    }

    /// Pages cached (what `st_blocks` counts).
    pub fn nr_pages(&self) -> u64 {
        self.mapping.nr_pages()
    }

    /// Copies from the page cache to `dst`, a user buffer straight from
    /// the folios; holes read as zeros without allocating (Linux:
    /// `shmem_file_read_iter` with `SGP_READ`). Short if the user buffer
    /// runs out part-way, EFAULT if not a byte could be copied.
    pub fn read_at<'a>(&self, pos: u64, dst: impl Into<ReadDest<'a>>) -> KResult<usize> {
        let mut dst = dst.into();
        let size = self.size();
        if pos >= size || dst.is_empty() {
            return Ok(0);
        }
        let len = dst.len().min((size - pos) as usize);
        let mut done = 0;
        while done < len {
            let cur = pos + done as u64;
            let (want, got) = match self.mapping.get_folio(index_of(cur)) {
                Some((folio, page)) => {
                    let off = page * PAGE_SIZE + (cur as usize % PAGE_SIZE);
                    let n = (folio.size() - off).min(len - done);
                    (n, folio.copy_to(off, &mut dst, done, n))
                }
                None => {
                    let n = (PAGE_SIZE - cur as usize % PAGE_SIZE).min(len - done);
                    (n, dst.zero(done, n))
                }
            };
            done += got;
            if got < want {
                return if done == 0 {
                    Err(Errno::EFAULT)
                } else {
                    Ok(done)
                };
            }
        }
        Ok(done)
    }

    /// Writes at `pos` (Linux: `generic_perform_write`), copying from `src`
    /// straight into the page cache. The whole write's end is what sizes each
    /// new folio, so one large write gets large folios however it is copied.
    /// Returns a short count if memory, the mount's size limit or the
    /// caller's buffer runs out part-way; ENOSPC or EFAULT if not a byte
    /// could be written.
    pub fn write_at<'a>(&self, pos: u64, src: impl Into<WriteSource<'a>>) -> KResult<usize> {
        let _i_rwsem = self.lock.lock();
        self.write_locked(pos, src.into())
    }

    /// An O_APPEND write: the position is the size, under the same lock.
    /// Returns the bytes written and the new end.
    pub fn append(&self, src: WriteSource) -> KResult<(usize, u64)> {
        let _i_rwsem = self.lock.lock();
        let pos = self.size();
        let n = self.write_locked(pos, src)?;
        Ok((n, pos + n as u64))
    }

    /// `write_at` with `lock` held: checks the seals, then copies folio by
    /// folio through `write_begin`, moving `size` as the bytes land.
    fn write_locked(&self, pos: u64, src: WriteSource) -> KResult<usize> {
        if src.is_empty() {
            return Ok(0);
        }
        if pos >= MAX_FILE_SIZE {
            return Err(Errno::EFBIG);
        }
        let len = src.len().min((MAX_FILE_SIZE - pos) as usize);
        let end = pos + len as u64;
        self.check_write_seals(end)?;
        let mut done = 0;
        while done < len {
            let cur = pos + done as u64;
            let (folio, page) = match self.write_begin(index_of(cur), end) {
                Ok(found) => found,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            let off = page * PAGE_SIZE + (cur as usize % PAGE_SIZE);
            let want = (folio.size() - off).min(len - done);
            let n = folio.copy_from(off, &src, done, want);
            // shmem_write_end: the folio was zeroed at allocation, so it is
            // uptodate however much of it this write covered.
            folio.mark_uptodate();
            folio.mark_dirty();
            done += n;
            if cur + n as u64 > self.size() {
                self.size.store(cur + n as u64, Ordering::Release);
            }
            if n < want {
                if done == 0 {
                    return Err(Errno::EFAULT);
                }
                break;
            }
        }
        Ok(done)
    }

    /// The folio caching page `index`, allocating one if there is none
    /// (Linux: `shmem_write_begin` -> `shmem_get_folio`). `write_end` is
    /// the byte the write reaches: it bounds the folio size.
    fn write_begin(&self, index: u64, write_end: u64) -> KResult<(Folio, usize)> {
        loop {
            if let Some(found) = self.mapping.get_folio(index) {
                return Ok(found);
            }
            let orders = self.sb.write_orders(self.size(), index, write_end, |s, n| {
                self.mapping.range_is_empty(s, n)
            });
            match self.alloc_and_add_folio(index, orders)? {
                Some(found) => return Ok(found),
                // Another thread cached the page first: use theirs.
                None => continue,
            }
        }
    }

    /// Allocates a folio of the first order in `orders` that the page
    /// allocator and the mount's size limit can give, and caches it at its
    /// aligned index (Linux: `shmem_alloc_and_add_folio`, and its caller
    /// `shmem_get_folio_gfp` falling back to order 0). An order the page
    /// allocator cannot give counts a fallback and the next is tried; a
    /// large folio the size limit has no room for goes straight to one page
    /// and counts none, as `shmem_inode_acct_blocks` failing does in Linux.
    /// Ok(None): somebody else filled the range first.
    fn alloc_and_add_folio(
        &self,
        index: u64,
        orders: impl Iterator<Item = u8>,
    ) -> KResult<Option<(Folio, usize)>> {
        let mut over_limit = false;
        for order in orders {
            if over_limit && order > 0 {
                continue;
            }
            let nr = 1u64 << order;
            if !self.sb.charge(nr) {
                over_limit = true;
                continue;
            }
            let Some(folio) = Folio::alloc(order) else {
                self.sb.uncharge(nr);
                vmstat::FOLIO_FALLBACK[order as usize].inc();
                if order > 0 {
                    vmstat::MTHP_SHMEM_FALLBACK[order as usize].inc();
                }
                if order == PMD_ORDER {
                    vmstat::THP_FILE_FALLBACK.inc();
                }
                continue;
            };
            let start = index & !(nr - 1);
            if let Err(folio) = self.mapping.add_folio(folio.clone(), start) {
                self.sb.uncharge(nr);
                drop(folio);
                return Ok(None);
            }
            vmstat::NR_SHMEM.add(nr);
            if order > 0 {
                vmstat::MTHP_SHMEM_ALLOC[order as usize].inc();
            }
            if order == PMD_ORDER {
                vmstat::THP_FILE_ALLOC.inc();
                vmstat::NR_SHMEM_HUGEPAGES.add(nr);
            }
            return Ok(Some((folio, (index - start) as usize)));
        }
        Err(Errno::ENOSPC)
    }

    /// Before a fault through an executable mapping at page `index`: the
    /// naturally aligned 64K of text around it in one folio, so it can map
    /// with one contiguous block (seed 004: Linux's
    /// `do_sync_mmap_readahead` reads that range into one folio when the
    /// page is not cached yet, if `thp_exec_enabled` has bit 1).
    ///
    /// Where we differ: tmpfs stands in for the disk here, so the data is
    /// cached from the start, in the folios its writer got (the initramfs
    /// unpack writes 4K at a time). The first executable fault on the
    /// range, which is when Linux would read it, moves those pages into a
    /// new 64K folio instead, as khugepaged's `collapse_file` does for
    /// read-only text, but only while nothing maps them or holds them (a
    /// page some process already maps stays where it is), the range lies
    /// within the file and memory has a 64K block free.
    pub fn exec_readahead(&self, index: u64) {
        let Some(order) = self.sb.exec_order() else {
            return;
        };
        let nr = 1u64 << order;
        let start = index & !(nr - 1);
        if start + nr > self.size() / PAGE_SIZE as u64 {
            return;
        }
        match self.mapping.get_folio(index) {
            Some((folio, _)) if folio.order() < order => {}
            _ => return,
        }
        let Some(folio) = Folio::alloc(order) else {
            return;
        };
        self.mapping.collapse(start, folio);
    }

    /// The folio caching file page `index` for a fault through a mapping,
    /// allocating one if there is none (Linux: `shmem_fault` ->
    /// `shmem_get_folio_gfp`). Past the end of the file: SIGBUS (Err).
    ///
    /// A new folio is the largest the policy allows a fault
    /// (`TmpfsSb::fault_orders`: the knobs, the mount, `vma_hugepage` for
    /// `MADV_HUGEPAGE`), that the faulting VMA can map whole (`vma_fits`
    /// says so per order) and whose aligned range of the file is still a
    /// hole; then smaller ones, down to one page, as memory or the mount's
    /// size limit runs short.
    ///
    /// EAGAIN while a hole punch is dropping this page: the fault must let go
    /// of its lock, let the punch finish and try again, rather than refill
    /// the hole as it is being made (Linux: `shmem_falloc_wait` returning
    /// `VM_FAULT_RETRY`).
    pub fn fault_folio(
        &self,
        index: u64,
        vma_hugepage: bool,
        vma_fits: impl Fn(u8) -> bool,
    ) -> KResult<(Folio, usize)> {
        let punching = self.punch_running.load(Ordering::Acquire)
            && matches!(*self.punching.lock(), Some((start, end)) if (start..end).contains(&index));
        if punching {
            return Err(Errno::EAGAIN);
        }
        match self.find_cached(index)? {
            Some(found) => Ok(found),
            None => self.fault_hole(index, vma_hugepage, &vma_fits),
        }
    }

    /// The cached folio holding page `index`, if any; EFAULT past the end
    /// of the file.
    #[inline(always)] // the common fault's whole lookup
    fn find_cached(&self, index: u64) -> KResult<Option<(Folio, usize)>> {
        if index >= self.size().div_ceil(PAGE_SIZE as u64) {
            return Err(Errno::EFAULT);
        }
        Ok(self.mapping.get_folio(index))
    }

    /// `fault_folio` on a hole: fill it, unless another thread does first,
    /// then take what is there. Out of line, so that the common fault, on
    /// a cached page, pays nothing for the policy.
    #[inline(never)]
    fn fault_hole(
        &self,
        index: u64,
        vma_hugepage: bool,
        vma_fits: &dyn Fn(u8) -> bool,
    ) -> KResult<(Folio, usize)> {
        loop {
            if let Some(found) = self.fault_alloc(self.size(), index, vma_hugepage, vma_fits)? {
                return Ok(found);
            }
            if let Some(found) = self.find_cached(index)? {
                return Ok(found);
            }
        }
    }

    /// `fault_hole`'s allocation: the new folio, or None if another thread
    /// filled the range first.
    fn fault_alloc(
        &self,
        size: u64,
        index: u64,
        vma_hugepage: bool,
        vma_fits: &dyn Fn(u8) -> bool,
    ) -> KResult<Option<(Folio, usize)>> {
        let orders = self
            .sb
            .fault_orders(size, index, vma_hugepage, vma_fits, |s, n| {
                self.mapping.range_is_empty(s, n)
            });
        let found = self.alloc_and_add_folio(index, orders)?;
        if let Some((folio, _)) = &found {
            folio.mark_uptodate();
        }
        Ok(found)
    }

    /// Forgets folios that left the cache: accounting, then the reference.
    fn release(&self, folio: Folio) {
        let nr = folio.nr_pages() as u64;
        self.sb.uncharge(nr);
        vmstat::NR_SHMEM.sub(nr);
        if folio.order() == PMD_ORDER {
            vmstat::NR_SHMEM_HUGEPAGES.sub(nr);
        }
    }

    /// Sets the size (Linux: `shmem_setattr` -> `truncate_setsize` +
    /// `shmem_truncate_range`): growing leaves a hole; shrinking frees the
    /// folios wholly past the new end and zeroes the tail of a folio that
    /// straddles it. Order: set i_size, unmap, drop the cache, unmap again,
    /// so a racing fault sees either the old page or SIGBUS, never stale data.
    pub fn truncate(&self, new_size: u64) -> KResult<()> {
        if new_size > MAX_FILE_SIZE {
            return Err(Errno::EFBIG);
        }
        let _i_rwsem = self.lock.lock();
        let old = self.size();
        // Linux: `shmem_setattr`.
        let seals = self.seals();
        if (new_size < old && seals & F_SEAL_SHRINK != 0)
            || (new_size > old && seals & F_SEAL_GROW != 0)
        {
            return Err(Errno::EPERM);
        }
        self.size.store(new_size, Ordering::Release);
        if new_size < old {
            self.drop_range(new_size, u64::MAX);
        }
        Ok(())
    }

    /// Drops the cached pages of bytes `[start, end)`, zeroing the parts of
    /// folios that straddle its edges, and unmaps them before and after, so
    /// no mapping keeps a page that left the cache (Linux:
    /// `shmem_truncate_range` between two `unmap_mapping_range` calls).
    fn drop_range(&self, start: u64, end: u64) {
        let (first, last) = (
            index_of(start),
            index_of(end.saturating_add(PAGE_SIZE as u64 - 1)),
        );
        self.mapping.unmap_mapping_range(first, last);
        self.mapping
            .remove_range(start, end, |folio| self.release(folio));
        self.mapping.unmap_mapping_range(first, last);
    }

    /// FALLOC_FL_PUNCH_HOLE: drop the cache of `[start, end)`, zeroing the
    /// parts of folios that straddle its edges; the size does not change.
    /// EPERM under a write seal (Linux: `shmem_fallocate`).
    pub fn punch_hole(&self, start: u64, end: u64) -> KResult<()> {
        let _i_rwsem = self.lock.lock();
        if self.seals() & F_SEAL_ANY_WRITE != 0 {
            return Err(Errno::EPERM);
        }
        let _punching = self.start_punch(start, end);
        self.drop_range(start, end);
        Ok(())
    }

    /// Tells faults that a hole punch of `[start, end)` is running, until
    /// the guard is dropped (Linux: `shmem_fallocate` setting `i_private`).
    pub fn start_punch(&self, start: u64, end: u64) -> Punching<'_> {
        let pages = (
            index_of(start),
            index_of(end.saturating_add(PAGE_SIZE as u64 - 1)),
        );
        *self.punching.lock() = Some(pages);
        self.punch_running.store(true, Ordering::Release);
        Punching(self)
    }

    /// fallocate mode 0 / KEEP_SIZE: make sure every page of `[start, end)`
    /// is cached (zero-filled where new), growing the size if `extend`.
    /// EINTR for a signal on the way, keeping what it cached (Linux gives
    /// back the pages this call added).
    pub fn allocate(&self, start: u64, end: u64, extend: bool) -> KResult<()> {
        if end > MAX_FILE_SIZE {
            return Err(Errno::EFBIG);
        }
        let _i_rwsem = self.lock.lock();
        if extend && end > self.size() && self.seals() & F_SEAL_GROW != 0 {
            return Err(Errno::EPERM);
        }
        let end_index = index_of(end - 1) + 1;
        let mut index = index_of(start);
        while index < end_index {
            // A long fallocate stops for a signal, SIGKILL above all
            // (Linux: `shmem_fallocate`, whose man page allows EINTR).
            if crate::task::signal::signal_pending() {
                return Err(Errno::EINTR);
            }
            let (folio, page) = self.write_begin(index, end)?;
            folio.mark_uptodate();
            index += (folio.nr_pages() - page) as u64;
        }
        if extend && end > self.size() {
            self.size.store(end, Ordering::Release);
        }
        Ok(())
    }

    /// SEEK_DATA / SEEK_HOLE from `offset` (Linux: `shmem_file_llseek`):
    /// cached pages are data, everything else (and EOF) a hole.
    pub fn seek_data_hole(&self, offset: u64, data: bool) -> KResult<u64> {
        let size = self.size();
        if offset >= size {
            return Err(Errno::ENXIO);
        }
        let index = index_of(offset);
        let found = if data {
            let next = self.mapping.next_data(index).ok_or(Errno::ENXIO)?;
            (next << PAGE_SHIFT).max(offset)
        } else {
            (self.mapping.next_hole(index) << PAGE_SHIFT).max(offset)
        };
        match found.min(size) {
            pos if data && pos >= size => Err(Errno::ENXIO),
            pos => Ok(pos),
        }
    }
}

impl Drop for ShmemFile {
    /// The last reference to the inode is gone: free its page cache
    /// (Linux: `shmem_evict_inode`).
    fn drop(&mut self) {
        self.mapping
            .remove_range(0, u64::MAX, |folio| self.release(folio));
    }
}

/// A hole punch in progress: faults on its pages retry until it is dropped.
pub struct Punching<'a>(&'a ShmemFile);

impl Drop for Punching<'_> {
    fn drop(&mut self) {
        self.0.punch_running.store(false, Ordering::Release);
        *self.0.punching.lock() = None;
    }
}

/// tmpfs's mapping operations (Linux: `shmem_vm_ops`).
impl VmOperations for ShmemFile {
    fn fault(&self, vmf: &VmFault) -> Result<(Folio, usize), FaultError> {
        shmem_fault(self, vmf)
    }

    fn map_pages(&self, vmf: &mut VmFault, start: u64, end: u64) {
        exec_readahead(self, vmf);
        // Pages past the end of the file must fault, and SIGBUS.
        let last = self.size().div_ceil(PAGE_SIZE as u64);
        if start < last {
            filemap_map_pages(vmf, &self.mapping, start, end.min(last - 1));
        }
    }
}

/// The folio holding the fault's page (Linux: `shmem_fault`): found in the
/// page cache, or a new one as large as the shmem policy allows and the
/// VMA can map whole (Linux: `shmem_allowable_huge_orders`,
/// `thp_vma_suitable_order`); SIGBUS past the end of the file, RETRY while
/// a hole punch drops the page.
pub fn shmem_fault(file: &ShmemFile, vmf: &VmFault) -> Result<(Folio, usize), FaultError> {
    exec_readahead(file, vmf);
    let vma = vmf.vma;
    // Linux: `shmem_allowable_huge_orders` asks `vma_thp_disabled` too.
    let fits = |order| {
        (order == 0 || !vma.thp_disabled())
            && thp_vma_suitable(vmf.address, vmf.range.clone(), vma.pgoff, order)
    };
    file.fault_folio(vmf.pgoff, vma.flags & VM_HUGEPAGE != 0, fits)
        .map_err(|e| match e {
            Errno::EAGAIN => FaultError::Retry,
            _ => FaultError::PAST_EOF,
        })
}

/// A read fault through an executable mapping first gets the folio size
/// seed 004 wants for text (`ShmemFile::exec_readahead`; in Linux,
/// `filemap_fault`'s `do_sync_mmap_readahead`), before fault-around maps it.
fn exec_readahead(file: &ShmemFile, vmf: &VmFault) {
    if vmf.vma.flags & VM_EXEC != 0 && vmf.access != Access::Write {
        file.exec_readahead(vmf.pgoff);
    }
}
