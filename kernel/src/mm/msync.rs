//! msync(2): write a mapped file range back (Linux: `mm/msync.c`). tmpfs
//! keeps everything in memory, so only the checks remain.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::mm_struct::Mm;
use crate::mm::vma::VM_LOCKED;
use uapi::mman::{MS_ASYNC, MS_INVALIDATE, MS_SYNC};

/// msync(2) (Linux: `sys_msync`): EINVAL for unknown flags, MS_ASYNC with
/// MS_SYNC, or a misaligned start; ENOMEM for a range that wraps or has
/// unmapped pages (found after the VMAs before them, unless MS_ASYNC alone
/// asks for nothing more); EBUSY to invalidate a locked mapping.
pub fn msync(mm: &Arc<Mm>, start: usize, len: usize, flags: u32) -> KResult<()> {
    if flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0
        || !start.is_multiple_of(PAGE_SIZE)
        || (flags & MS_ASYNC != 0 && flags & MS_SYNC != 0)
    {
        return Err(Errno::EINVAL);
    }
    let Some(end) = len
        .checked_next_multiple_of(PAGE_SIZE)
        .and_then(|len| start.checked_add(len))
    else {
        return Err(Errno::ENOMEM);
    };
    let map = mm.mmap_lock_readonly();
    let mut at = start;
    let mut result = Ok(());
    for (s, e, vma) in map.vmas.range(start, end) {
        if s > at {
            if flags == MS_ASYNC {
                return Err(Errno::ENOMEM);
            }
            result = Err(Errno::ENOMEM);
        }
        if flags & MS_INVALIDATE != 0 && vma.flags & VM_LOCKED != 0 {
            return Err(Errno::EBUSY);
        }
        at = e;
    }
    if at < end {
        return Err(Errno::ENOMEM);
    }
    result
}
