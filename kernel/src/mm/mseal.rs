//! mseal(2): seal the VMAs over a range, so they can no longer be unmapped,
//! moved, resized, given other rights, or have read-only anonymous pages
//! thrown away (Linux: `mm/mseal.c`). The checks sit where each call
//! changes VMAs: `mmap::can_modify_range` (munmap, MAP_FIXED, brk,
//! mremap's targets), mremap's source, mprotect's loop, madvise's discards.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::mm_struct::Mm;
use crate::mm::mmap::{fully_mapped, vma_modify_flags};
use crate::mm::vma::VM_SEALED;

/// mseal(2) (Linux: `do_mseal`): EINVAL for any flag, a misaligned start
/// or a range that wraps; nothing for an empty range; ENOMEM, with nothing
/// sealed, if part of the range is unmapped.
pub fn mseal(mm: &Arc<Mm>, start: usize, len: usize, flags: u64) -> KResult<()> {
    if flags != 0 || !start.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    let Some(end) = len
        .checked_next_multiple_of(PAGE_SIZE)
        .and_then(|len| start.checked_add(len))
    else {
        return Err(Errno::EINVAL);
    };
    if end == start {
        return Ok(());
    }
    let mut map = mm.mmap_write_lock();
    if !fully_mapped(&map, start, end) {
        return Err(Errno::ENOMEM);
    }
    vma_modify_flags(
        &mut map,
        start,
        end,
        |_, _, vma| Ok(vma.flags | VM_SEALED),
        |_, _, _, _| {},
    )
}
