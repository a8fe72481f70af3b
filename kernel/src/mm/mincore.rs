//! mincore(2): which pages of a range are in memory (Linux:
//! `mm/mincore.c`).
//!
//! Where we simplify: a page counts as in memory when it is mapped here
//! now; Linux also counts a file page that is cached but not mapped.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SIZE, USER_TOP};
use crate::mm::memory;
use crate::mm::mm_struct::Mm;

/// mincore(2) (Linux: `sys_mincore`): EINVAL for a misaligned start,
/// ENOMEM for a range past the user half, EFAULT for a result vector
/// past it; then one byte per page into `uvec`, 1 if the page is in
/// memory, a block at a time (Linux: a page of results) and each block
/// within one VMA, so an unmapped page is ENOMEM after the results
/// before it were stored.
pub fn mincore(mm: &Arc<Mm>, start: usize, len: usize, uvec: usize) -> KResult<()> {
    if !start.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    if start.checked_add(len).is_none_or(|end| end > USER_TOP) {
        return Err(Errno::ENOMEM);
    }
    let mut pages = len.div_ceil(PAGE_SIZE);
    if uvec.checked_add(pages).is_none_or(|end| end > USER_TOP) {
        return Err(Errno::EFAULT);
    }
    let mut block = [0u8; 256];
    let (mut addr, mut out) = (start, uvec);
    while pages > 0 {
        let n = {
            let map = mm.mmap_lock_readonly();
            let (_, vend, _) = map.vmas.find(addr).ok_or(Errno::ENOMEM)?;
            let n = pages.min(block.len()).min((vend - addr) / PAGE_SIZE);
            for (i, present) in block[..n].iter_mut().enumerate() {
                *present = memory::is_mapped(mm, addr + i * PAGE_SIZE) as u8;
            }
            n
        };
        crate::mm::uaccess::copy_to_user(out, &block[..n])?;
        pages -= n;
        out += n;
        addr += n * PAGE_SIZE;
    }
    Ok(())
}
