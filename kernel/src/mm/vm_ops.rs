//! What a file mapping's backing does when the mapping faults (Linux:
//! `struct vm_operations_struct`, `vma->vm_ops`). Generic mm asks the VMA
//! for its operations and calls them; the file system implements them:
//! tmpfs as Linux's shmem does (`shmem_fault`, and the page cache's own
//! `filemap_map_pages` for fault-around).
//!
//! Where we simplify: only the two operations the fault path uses, and
//! the VMA finds its operations from its file rather than holding them.

use crate::mm::fault::FaultError;
use crate::mm::folio::Folio;
use crate::mm::vm_fault::VmFault;

/// A mapping's operations on a fault (Linux: `struct vm_operations_struct`).
pub trait VmOperations {
    /// The folio holding file page `vmf.pgoff`, found in the page cache or
    /// made, and the page's index in it (Linux: `vm_ops->fault`, which
    /// sets `vmf->page`).
    fn fault(&self, vmf: &VmFault) -> Result<(Folio, usize), FaultError>;

    /// Maps what the page cache already holds of file pages `start..=end`
    /// onto the fault's empty entries, reading nothing (Linux:
    /// `vm_ops->map_pages`, fault-around's).
    fn map_pages(&self, vmf: &mut VmFault, start: u64, end: u64);
}
