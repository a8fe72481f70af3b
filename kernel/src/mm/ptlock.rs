//! Split page-table locks: one spin lock per PTE table page, so faults in
//! different 2M stretches of one address space never wait for each other
//! (Linux: `USE_SPLIT_PTE_PTLOCKS`, `pte_lockptr`, with the lock in the
//! table page's `struct ptdesc`). Whoever changes an entry of a PTE table
//! holds that table's lock; `Mm::page_table_lock` guards the levels above
//! (PMD blocks, unhooking whole tables), and walkers that must not see a
//! table freed under them.

use core::sync::atomic::{AtomicBool, Ordering};

use crate::arch::cpu::{local_irq_restore, local_irq_save};
use crate::mm::addr::virt_to_phys;
use crate::mm::folio;
use crate::mm::pgtable::PageTable;

/// A PTE table's lock, held; IRQs stay masked meanwhile, as for `SpinLock`.
pub struct PteLockGuard {
    /// The table page's lock flag, in its frame's `FolioMeta` (Linux's
    /// `ptdesc->ptl`).
    lock: &'static AtomicBool,
    /// DAIF as it was before the lock masked IRQs, restored at unlock.
    daif: u64,
}

/// Takes the lock of the PTE table `table` (Linux: `pte_offset_map_lock`).
pub fn pte_lock(table: &PageTable) -> PteLockGuard {
    // SAFETY: the linear map, where every table lies, maps RAM alone.
    let lock = unsafe { folio::table_lock(virt_to_phys(table.as_ptr() as usize).pfn()) };
    let daif = local_irq_save();
    while lock
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    PteLockGuard { lock, daif }
}

impl Drop for PteLockGuard {
    fn drop(&mut self) {
        // Unlock first, then unmask: an interrupt must not find it held.
        self.lock.store(false, Ordering::Release);
        local_irq_restore(self.daif);
    }
}
