//! A process's address space (Linux: `struct mm_struct`): its page tables,
//! its ASID, its VMAs and heap break, under `mmap_lock`, and the copy of
//! the VMA tree that faults search without it (`mm/vma_lock.rs`).
//!
//! Where we simplify: `mmap_lock` is a sleeping mutex (Linux: an rw
//! semaphore), so its readers (faults that fell back, /proc readers) take
//! turns.

use alloc::sync::{Arc, Weak};
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::arch::asid::{alloc_asid, free_asid};
use crate::arch::mmu;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{phys_to_virt, PhysAddr};
use crate::mm::frame;
use crate::mm::memory;
use crate::mm::pgtable::{PageTable, PgtableMem};
use crate::mm::pmd_cache::PmdCache;
use crate::mm::vma::Vma;
use crate::mm::vma_lock::{PublishedVmas, VmaSnapshot};
use crate::mm::vma_tree::VmaTree;
use crate::mm::vmstat;
use crate::sync::{Mutex, MutexGuard, SpinLock};

/// Where mmap looks for free space, top down (Linux: `mmap_base`, below a
/// stack gap), and where it gives up.
pub const MMAP_TOP: usize = 0x0000_ffff_0000_0000;
/// Where that search gives up: no mapping is placed, and no stack grows,
/// below 256 MiB.
pub const MMAP_BOTTOM: usize = 0x0000_0000_1000_0000;

/// What `mmap_lock` protects.
pub struct MmMap {
    /// The VMAs by address range (Linux's maple tree `mm_mt`); faults under the
    /// per-VMA lock read `vmas_published` instead.
    pub vmas: VmaTree<Arc<Vma>>,
    /// The heap: [start_brk, brk), grown and shrunk by brk(2).
    pub start_brk: usize,
    /// The heap's current end (Linux's `mm->brk`).
    pub brk: usize,
    /// Where exec mapped the vDSO (0: nowhere), for signal returns
    /// (Linux: `mm->context.vdso`).
    pub vdso: usize,
    /// Flags every new mapping gets: VM_LOCKED after mlockall(MCL_FUTURE)
    /// (Linux: `mm->def_flags`).
    pub def_flags: u64,
}

/// A user address space (Linux's `struct mm_struct`): its page tables,
/// ASID, VMAs under `mmap_lock`, and the counts /proc reports.
pub struct Mm {
    /// Physical address of the level-0 table; TTBR0 holds it while a thread of
    /// this mm runs (Linux's `mm->pgd`).
    pub pgd: PhysAddr,
    /// The ASID that tags this mm's TLB entries (Linux's `mm->context.id`).
    pub asid: u16,
    /// Take it with `mmap_lock_readonly` or `mmap_write_lock`.
    mmap_lock: Mutex<MmMap>,
    /// The VMA tree as the last writer left it, for lockless faults.
    pub vmas_published: PublishedVmas,
    /// Bumped as each write cycle of `mmap_lock` ends (Linux: `mm_lock_seq`).
    pub mm_lock_seq: AtomicU64,
    /// Serialises changes above the PTE tables (PMD blocks, unhooking
    /// tables) and walks that must not see a table freed; each PTE table
    /// has its own lock for its entries (`mm/ptlock.rs`; Linux: the
    /// mm-wide `page_table_lock` and the split PTE locks).
    pub page_table_lock: SpinLock<()>,
    /// The PMD tables faults walked to lately, where the next fault's walk
    /// starts (`mm/pmd_cache.rs`).
    pub pmd_cache: PmdCache,
    /// Page-table pages allocated, pgd included.
    pub pt_pages: AtomicUsize,
    /// `MMF_*` bits (Linux: `mm->flags`): what prctl(PR_SET_MDWE) set.
    pub flags: AtomicU32,
    /// PTE tables kept for splitting the anonymous PMD blocks of this mm,
    /// one per block (`huge_memory::pmd::deposit`; Linux's `pmd_huge_pte`):
    /// the physical address of the first, each holding the next in its
    /// entry 0; 0 for none. Under `page_table_lock`.
    pub pmd_huge_pte: AtomicUsize,
    /// This mm itself, for what must find it again later without keeping
    /// it alive (the deferred split queue, `huge_memory::split`).
    me: Weak<Mm>,
}

/// MMF_HAS_MDWE: memory-deny-write-execute (PR_MDWE_REFUSE_EXEC_GAIN): no
/// mapping may become both writable and executable, or executable later.
pub const MMF_HAS_MDWE: u32 = 1 << 28;
/// MMF_HAS_MDWE_NO_INHERIT: MMF_HAS_MDWE ends at fork and exec.
pub const MMF_HAS_MDWE_NO_INHERIT: u32 = 1 << 29;

impl PgtableMem for &Mm {
    fn alloc_table(&mut self) -> Option<PhysAddr> {
        let pa = frame::alloc_zeroed_pages(0)?;
        self.pt_pages.fetch_add(1, Ordering::Relaxed);
        vmstat::NR_PAGETABLE.inc();
        Some(pa)
    }
    fn free_table(&mut self, pa: PhysAddr) {
        frame::free_pages(pa, 0).expect("a table freed twice");
        self.pt_pages.fetch_sub(1, Ordering::Relaxed);
        vmstat::NR_PAGETABLE.dec();
    }
    fn table(&self, pa: PhysAddr) -> &PageTable {
        // SAFETY: the walker (`mm::pgtable`) asks only for the pgd and the
        // tables this mm's entries point to.
        unsafe { Mm::table_at(self, pa) }
    }
}

impl Mm {
    /// An empty address space (Linux: `mm_alloc`).
    pub fn new() -> KResult<Arc<Mm>> {
        let asid = alloc_asid().ok_or(Errno::EAGAIN)?;
        let Some(pgd) = frame::alloc_zeroed_pages(0) else {
            free_asid(asid);
            return Err(Errno::ENOMEM);
        };
        vmstat::NR_PAGETABLE.inc();
        Ok(Arc::new_cyclic(|me| Mm {
            pgd,
            asid,
            mmap_lock: Mutex::new(MmMap {
                vmas: VmaTree::new(),
                start_brk: 0,
                brk: 0,
                vdso: 0,
                def_flags: 0,
            }),
            vmas_published: PublishedVmas::new(),
            pmd_cache: PmdCache::new(),
            mm_lock_seq: AtomicU64::new(0),
            page_table_lock: SpinLock::new(()),
            pt_pages: AtomicUsize::new(1),
            flags: AtomicU32::new(0),
            pmd_huge_pte: AtomicUsize::new(0),
            me: me.clone(),
        }))
    }

    /// A weak reference to this mm.
    pub fn weak(&self) -> Weak<Mm> {
        self.me.clone()
    }

    /// What a new address space keeps of the one it replaces (exec) or
    /// copies (fork), `parent` (Linux: `mm_init` with `mmf_init_flags`):
    /// the MDWE bits, unless they said not to be inherited.
    pub fn inherit_flags(&self, parent: &Mm) {
        let mut flags = parent.flags.load(Ordering::Acquire);
        if flags & MMF_HAS_MDWE_NO_INHERIT != 0 {
            flags &= !(MMF_HAS_MDWE | MMF_HAS_MDWE_NO_INHERIT);
        }
        self.flags.store(flags & MMF_HAS_MDWE, Ordering::Release);
    }

    /// The page-table page at `pa`.
    ///
    /// # Safety
    ///
    /// `pa` must be one of this address space's page-table pages (the pgd,
    /// or one its walk allocated), and stay one while the reference lives.
    pub unsafe fn table_at(&self, pa: PhysAddr) -> &PageTable {
        // SAFETY: the caller's `pa` is a table page of this Mm, which
        // lives as long as the Mm does.
        unsafe { &*(phys_to_virt(pa) as *const PageTable) }
    }

    /// `mmap_lock` to read the VMAs, unchanged while held (Linux:
    /// `mmap_read_lock`, which is shared; this is the same mutex
    /// `mmap_write_lock` takes, so readers exclude each other, hence the
    /// name).
    pub fn mmap_lock_readonly(&self) -> MmapReadOnlyGuard<'_> {
        MmapReadOnlyGuard(self.mmap_lock.lock())
    }

    /// `mmap_lock` for writing (Linux: `mmap_write_lock`): changes to the
    /// VMAs are published to lockless faults when it is dropped.
    pub fn mmap_write_lock(&self) -> MmapWriteGuard<'_> {
        MmapWriteGuard {
            mm: self,
            map: self.mmap_lock.lock(),
            changed: false,
        }
    }

    /// Makes this address space the one user space on this CPU sees.
    pub fn activate(&self) {
        mmu::switch_mm(self.pgd, self.asid);
    }
}

impl Drop for Mm {
    /// The last user is gone (Linux: `exit_mmap` + `mmdrop`): unmap
    /// everything, free the page tables, give the ASID back.
    fn drop(&mut self) {
        let me = self as *const Mm;
        crate::mm::thpmaps::account_exit(self);
        let map = self.mmap_lock.get_mut();
        for (_, _, vma) in map.vmas.iter() {
            vma.unregister_from_file(me);
        }
        let vmas: alloc::vec::Vec<_> = map.vmas.iter().map(|(s, e, _)| (s, e)).collect();
        for (start, end) in vmas {
            memory::zap_range(self, start, end);
        }
        memory::free_pgtables(self);
        crate::mm::huge_memory::split::forget_mm(me);
        free_asid(self.asid);
    }
}

/// `mmap_lock` held for reading.
pub struct MmapReadOnlyGuard<'a>(MutexGuard<'a, MmMap>);

impl Deref for MmapReadOnlyGuard<'_> {
    type Target = MmMap;
    fn deref(&self) -> &MmMap {
        &self.0
    }
}

/// `mmap_lock` held for writing. Every VMA a writer changes, it first
/// write-locks (`vma_start_write`); dropping the guard publishes the new
/// tree, detaches the VMAs that left it, and ends the write cycle (Linux:
/// `mmap_write_unlock` -> `vma_end_write_all`).
pub struct MmapWriteGuard<'a> {
    /// The address space whose lock this is.
    mm: &'a Mm,
    /// The held `mmap_lock`, through which the writer reaches the map.
    map: MutexGuard<'a, MmMap>,
    /// Was the map borrowed mutably, so the tree may have changed?
    changed: bool,
}

impl MmapWriteGuard<'_> {
    /// Write-locks every VMA meeting [start, end) (Linux: `vma_start_write`
    /// on each), waiting for faults holding them to finish.
    pub fn vma_start_write(&self, start: usize, end: usize) {
        let seq = self.mm.mm_lock_seq.load(Ordering::Relaxed);
        for (_, _, vma) in self.map.vmas.range(start, end) {
            vma.lock.start_write(seq);
        }
    }

    /// Joins the VMAs over [start, end) with each other and with their
    /// neighbours where alike (`VmaTree::merge_range`; Linux:
    /// `vma_merge_existing_range`), write-locking the VMAs it replaces, and
    /// only those, first.
    pub fn vma_merge(&mut self, start: usize, end: usize) {
        let seq = self.mm.mm_lock_seq.load(Ordering::Relaxed);
        self.vmas.merge_range(start, end, |lower, upper| {
            lower.lock.start_write(seq);
            upper.lock.start_write(seq);
        });
    }

    /// Takes apart the PMD blocks that map across `start` or `end`, where
    /// the VMAs are about to be split without their entries changing
    /// (madvise, mlock), so that no block maps two VMAs (Linux:
    /// `vma_adjust_trans_huge`, from `__split_vma`).
    pub fn vma_adjust_trans_huge(&self, start: usize, end: usize) {
        memory::split_huge_pmd_address(self.mm, start);
        memory::split_huge_pmd_address(self.mm, end);
    }

    /// Write-locks every VMA (fork, so no fault races the COW marking).
    pub fn vma_start_write_all(&self) {
        self.vma_start_write(0, usize::MAX);
    }
}

impl Deref for MmapWriteGuard<'_> {
    type Target = MmMap;
    fn deref(&self) -> &MmMap {
        &self.map
    }
}

impl DerefMut for MmapWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut MmMap {
        self.changed = true;
        &mut self.map
    }
}

impl Drop for MmapWriteGuard<'_> {
    fn drop(&mut self) {
        let seq = self.mm.mm_lock_seq.load(Ordering::Relaxed);
        if self.changed {
            let new = VmaSnapshot::of(&self.map.vmas);
            // The VMAs that left are detached before the new copy goes
            // out: a fault that finds one in the old copy cannot lock it
            // meanwhile, since it is write-locked until `mm_lock_seq`
            // moves on below. Both copies are arrays in address order:
            // one walk down each.
            self.mm.vmas_published.read(|old| {
                let mut now = new.iter().peekable();
                for (start, end, vma) in old.iter() {
                    while now.next_if(|&(s, _, _)| s < start).is_some() {}
                    let kept = now
                        .peek()
                        .is_some_and(|&(s, e, v)| (s, e) == (start, end) && Arc::ptr_eq(v, vma));
                    if !kept {
                        // A fault may have found it in the old copy; it
                        // must have been write-locked before it changed.
                        assert!(vma.lock.is_write_locked(seq), "VMA changed unlocked");
                        vma.lock.detach();
                    }
                }
            });
            drop(self.mm.vmas_published.publish(new));
        }
        self.mm.mm_lock_seq.store(seq + 1, Ordering::Release);
    }
}
