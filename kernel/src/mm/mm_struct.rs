//! A process's address space (Linux: `struct mm_struct`): its page tables,
//! its ASID, its VMAs and heap break, under `mmap_lock`.
//!
//! Where we simplify: `mmap_lock` is a sleeping mutex (Linux: an rw
//! semaphore), so faults of one process take turns; the page-table lock is
//! one spin lock per address space (Linux: one per page-table page).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch::asid::{alloc_asid, free_asid};
use crate::arch::mmu;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{phys_to_virt, PhysAddr};
use crate::mm::frame;
use crate::mm::memory;
use crate::mm::pgtable::{PageTable, PgtableMem};
use crate::mm::vma::Vma;
use crate::mm::vma_tree::VmaTree;
use crate::mm::vmstat;
use crate::sync::{Mutex, SpinLock};

/// Where mmap looks for free space, top down (Linux: `mmap_base`, below a
/// stack gap), and where it gives up.
pub const MMAP_TOP: usize = 0x0000_ffff_0000_0000;
pub const MMAP_BOTTOM: usize = 0x0000_0000_1000_0000;

/// What `mmap_lock` protects.
pub struct MmMap {
    pub vmas: VmaTree<Arc<Vma>>,
    /// The heap: [start_brk, brk), grown and shrunk by brk(2).
    pub start_brk: usize,
    pub brk: usize,
}

pub struct Mm {
    pub pgd: PhysAddr,
    pub asid: u16,
    pub mmap_lock: Mutex<MmMap>,
    /// Serialises changes to the page-table entries (Linux: the PTL).
    pub page_table_lock: SpinLock<()>,
    /// Pages mapped (Linux: the RSS counters).
    pub rss: AtomicUsize,
    /// Page-table pages allocated, pgd included.
    pub pt_pages: AtomicUsize,
}

impl PgtableMem for &Mm {
    fn alloc_table(&mut self) -> Option<PhysAddr> {
        let pa = frame::alloc_zeroed_pages(0)?;
        self.pt_pages.fetch_add(1, Ordering::Relaxed);
        vmstat::NR_PAGETABLE.inc();
        Some(pa)
    }
    fn table(&self, pa: PhysAddr) -> &PageTable {
        // SAFETY: table pages come from alloc_table (or are the pgd) and
        // live as long as the Mm.
        unsafe { &*(phys_to_virt(pa) as *const PageTable) }
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
        Ok(Arc::new(Mm {
            pgd,
            asid,
            mmap_lock: Mutex::new(MmMap {
                vmas: VmaTree::new(),
                start_brk: 0,
                brk: 0,
            }),
            page_table_lock: SpinLock::new(()),
            rss: AtomicUsize::new(0),
            pt_pages: AtomicUsize::new(1),
        }))
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
        let map = self.mmap_lock.get_mut();
        let vmas: alloc::vec::Vec<_> = map.vmas.iter().map(|(s, e, _)| (s, e)).collect();
        for (start, end) in vmas {
            memory::zap_range(self, start, end);
        }
        memory::free_pgtables(self);
        free_asid(self.asid);
    }
}
