//! Another address space's memory, read and written by the kernel: exec
//! filling a new process's stack, `/proc/PID/mem` (Linux:
//! `access_remote_vm` and `__access_remote_vm` in `mm/memory.c`, over
//! `get_user_pages_remote`, with `FOLL_FORCE` as /proc/PID/mem and ptrace
//! use it). Each page is faulted in as the access would fault it, then
//! copied through the kernel's linear map while a reference keeps its folio.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::fault::Access;
use crate::mm::folio::Folio;
use crate::mm::gup::fault_in;
use crate::mm::memory::follow_page;
use crate::mm::mm_struct::Mm;
use crate::mm::vma::VM_SHARED;

/// Which way a remote access copies.
pub enum RemoteBuf<'a> {
    /// From the address space into the buffer.
    Read(&'a mut [u8]),
    /// From the buffer into the address space.
    Write(&'a [u8]),
}

#[allow(clippy::len_without_is_empty)] // a copy's length, never a collection
impl RemoteBuf<'_> {
    /// Bytes to copy.
    pub fn len(&self) -> usize {
        match self {
            RemoteBuf::Read(b) => b.len(),
            RemoteBuf::Write(b) => b.len(),
        }
    }
}

/// Copies between `buf` and `mm` from `addr` on, page by page; returns how
/// many bytes it copied, stopping at the first page that cannot be had
/// (Linux: `__access_remote_vm`). With `force` (Linux: `FOLL_FORCE`) a
/// read-only private mapping is written too, in a private copy of the page
/// made as a write fault would make it, never in the file; a shared
/// read-only one is not.
pub fn access_remote_vm(mm: &Arc<Mm>, mut addr: usize, mut buf: RemoteBuf, force: bool) -> usize {
    let total = buf.len();
    let mut done = 0;
    let access = match buf {
        RemoteBuf::Read(_) => Access::Read,
        RemoteBuf::Write(_) => Access::Write,
    };
    while done < total {
        let Some((pa, folio)) = page_for(mm, addr, access, force) else {
            break;
        };
        let n = (PAGE_SIZE - addr % PAGE_SIZE).min(total - done);
        let kva = phys_to_virt(pa) as *mut u8;
        match &mut buf {
            // SAFETY: `folio`'s reference keeps the page from being freed
            // while it is read through the linear map; `n` stays inside it.
            RemoteBuf::Read(b) => unsafe {
                core::ptr::copy_nonoverlapping(kva, b[done..].as_mut_ptr(), n)
            },
            // SAFETY: as above; the page may be written (see `page_for`).
            RemoteBuf::Write(b) => unsafe {
                core::ptr::copy_nonoverlapping(b[done..].as_ptr(), kva, n)
            },
        }
        drop(folio);
        addr += n;
        done += n;
    }
    done
}

/// The byte at `addr` of `mm` and a reference on its folio, after
/// faulting it in for `access`; for a write to a private mapping, only
/// once it is the process's own copy (another thread may have zapped and
/// refaulted it from the file since). None if it cannot be had.
fn page_for(mm: &Arc<Mm>, addr: usize, access: Access, force: bool) -> Option<(PhysAddr, Folio)> {
    // A few rounds against threads that unmap what we just faulted in.
    for _ in 0..8 {
        fault_in(mm, addr, access, force).ok()?;
        let shared = {
            let map = mm.mmap_lock_readonly();
            let (_, _, vma) = map.vmas.find(addr)?;
            vma.flags & VM_SHARED != 0
        };
        if let Some((pa, folio)) = follow_page(mm, addr) {
            if access == Access::Read || shared || folio.is_anon() {
                return Some((pa, folio));
            }
        }
    }
    None
}

/// Copies `bytes` to `addr` in `mm`, which need not be the current address
/// space, as a user store would (Linux: `access_remote_vm` without
/// `FOLL_FORCE`); EFAULT if any of it cannot be written.
pub fn copy_to_mm(mm: &Arc<Mm>, addr: usize, bytes: &[u8]) -> KResult<()> {
    if access_remote_vm(mm, addr, RemoteBuf::Write(bytes), false) == bytes.len() {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}
