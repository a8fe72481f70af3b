//! One fault's description, handed down the fault path (Linux:
//! `struct vm_fault` in `include/linux/mm.h`). Every handler from
//! `handle_mm_fault` down to `finish_fault` takes it instead of the same
//! five arguments.
//!
//! Where we simplify: faultline's `Vma` does not hold its own range (the
//! VMA tree keys it), so the fault carries it; `flags` is one `Access`
//! rather than Linux's `FAULT_FLAG_*` bits; `pte` is the whole PTE table,
//! whose entry for `address` Linux's `vmf->pte` points at; and `ptl` is a
//! method, as the lock is found from the table (split page-table locks).

use core::ops::Range;
use core::sync::atomic::AtomicU64;

use crate::arch::desc::Pte;
use crate::mm::addr::PhysAddr;
use crate::mm::fault::Access;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::PageTable;
use crate::mm::ptlock::{pte_lock, PteLockGuard};
use crate::mm::vma::Vma;

/// A page fault being handled (Linux: `struct vm_fault`).
pub struct VmFault<'a> {
    /// The address space (Linux: `vmf->vma->vm_mm`).
    pub mm: &'a Mm,
    /// The VMA the address lies in, locked by the caller (Linux:
    /// `vmf->vma`).
    pub vma: &'a Vma,
    /// The VMA's extent (Linux: `vma->vm_start..vma->vm_end`).
    pub range: Range<usize>,
    /// The faulting address, page aligned (Linux: `vmf->address`).
    pub address: usize,
    /// The file page at `address`, as if every VMA mapped a file (Linux:
    /// `vmf->pgoff`, also set for anonymous VMAs).
    pub pgoff: u64,
    /// What the access was (Linux: `vmf->flags`, `FAULT_FLAG_WRITE` and
    /// `FAULT_FLAG_INSTRUCTION`).
    pub access: Access,
    /// The level-2 entry covering `address` (Linux: `vmf->pmd`).
    pub pmd: &'a AtomicU64,
    /// The table holding `pmd`, for installing a PTE table under it (Linux
    /// finds it from `vmf->pmd`).
    pub pmds: PhysAddr,
    /// The PTE table under `pmd` (Linux: `vmf->pte`, after
    /// `pte_offset_map`); None while the entry is none and a file fault may
    /// still map a PMD block there (`finish_fault` decides).
    pub pte: Option<&'a PageTable>,
    /// The entry for `address` as first read, without the lock (Linux:
    /// `vmf->orig_pte`); handlers read it again under the lock.
    pub orig_pte: Pte,
}

impl<'a> VmFault<'a> {
    /// The PTE table; every handler that looks at entries has one (only
    /// `do_fault`'s way to `finish_fault` may start without).
    pub fn table(&self) -> &'a PageTable {
        self.pte.expect("a PTE-level fault has its table")
    }

    /// Takes the PTE table's lock (Linux: `vmf->ptl`, taken by
    /// `pte_offset_map_lock`).
    pub fn ptl(&self) -> PteLockGuard {
        pte_lock(self.table())
    }
}
