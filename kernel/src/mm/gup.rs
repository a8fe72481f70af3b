//! Faulting in another context's user memory (Linux: `mm/gup.c`'s
//! `fixup_user_fault`): for a futex word, `MAP_POPULATE` and
//! `MADV_POPULATE_*`, and another process's memory (`mm/remote.rs`).
//!
//! Where we simplify: no `struct page` pinning; the caller walks the
//! page tables again once the page is in.

use alloc::sync::Arc;

use crate::mm::addr::PAGE_SIZE;
use crate::mm::fault::{handle_mm_fault, Access, FaultError};
use crate::mm::mm_struct::Mm;
use crate::mm::vma::{VM_MAYWRITE, VM_READ, VM_SHARED};
use uapi::signal::{SEGV_ACCERR, SEGV_MAPERR};

/// Makes `addr` accessible in `mm` as `access` asks, as a fault there
/// would, under `mmap_lock` (Linux: `fixup_user_fault`); unlike a fault it
/// grows no stack. `force` (Linux: `FOLL_FORCE`, `check_vma_flags`) also
/// lets a write reach a readable private mapping that is not writable:
/// the write fault then makes a private copy, mapped read-only as the VMA
/// says.
pub fn fault_in(mm: &Arc<Mm>, addr: usize, access: Access, force: bool) -> Result<(), FaultError> {
    loop {
        match fault_in_once(mm, addr & !(PAGE_SIZE - 1), access, force) {
            // The lock is dropped: let whatever we wait for finish.
            Err(FaultError::Retry) => crate::task::yield_now(),
            result => return result,
        }
    }
}

/// One attempt under `mmap_lock` held for reading; `Retry` has dropped
/// the lock for `fault_in` to wait and try again.
fn fault_in_once(mm: &Arc<Mm>, addr: usize, access: Access, force: bool) -> Result<(), FaultError> {
    let map = mm.mmap_lock_readonly();
    let (start, end, vma) = map.vmas.find(addr).ok_or(FaultError::Segv(SEGV_MAPERR))?;
    // A forced write needs a private mapping that may become writable
    // and that the page can be mapped readable in (we keep no PROT_NONE
    // entries, so a forced access to one is refused).
    let forced = force
        && access == Access::Write
        && vma.flags & (VM_SHARED | VM_MAYWRITE | VM_READ) == VM_MAYWRITE | VM_READ;
    if !access.allowed_by(vma.flags) && !forced {
        return Err(FaultError::Segv(SEGV_ACCERR));
    }
    let vma = vma.clone();
    let result = handle_mm_fault(mm, &vma, start..end, addr, access);
    drop(map);
    result
}
