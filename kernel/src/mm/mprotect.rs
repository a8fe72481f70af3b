//! mprotect(2): new access rights for the VMAs over a range and the page
//! entries already there (Linux: `mm/mprotect.c`, `do_mprotect_pkey` and
//! `mprotect_fixup`).

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::arch::desc::{PgProt, Pte};
use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::folio;
use crate::mm::memory;
use crate::mm::mm_struct::Mm;
use crate::mm::mmap::{
    calc_vm_prot_bits, enough_memory, map_deny_write_exec, page_align, populate, vma_modify_flags,
    PROT_EXEC, PROT_READ, PROT_SEM, PROT_WRITE,
};
use crate::mm::vma::{
    VM_ACCOUNT, VM_EXEC, VM_GROWSDOWN, VM_LOCKED, VM_NORESERVE, VM_READ, VM_SEALED, VM_SHARED,
    VM_WRITE,
};
pub use uapi::mman::{PROT_GROWSDOWN, PROT_GROWSUP};

/// VM_READ, VM_WRITE and VM_EXEC: what mprotect sets (Linux:
/// `VM_ACCESS_FLAGS`).
const VM_ACCESS_FLAGS: u64 = VM_READ | VM_WRITE | VM_EXEC;

/// mprotect(2): `prot` for whole pages, VMA by VMA from the first, as
/// Linux does: a hole (ENOMEM), a right the VMA may not have (EACCES:
/// VM_MAYWRITE..., or memory-deny-write-execute) or a sealed VMA (EPERM)
/// stops it, with the VMAs before it already changed. A private VMA
/// turning writable is accounted (VM_ACCOUNT), and stops being so when it
/// turns read-only before any anonymous page was mapped in it.
pub fn mprotect(mm: &Arc<Mm>, start: usize, len: usize, prot: u32) -> KResult<()> {
    let grows = prot & (PROT_GROWSDOWN | PROT_GROWSUP);
    let prot = prot & !grows;
    if grows == PROT_GROWSDOWN | PROT_GROWSUP || !start.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    if len == 0 {
        return Ok(());
    }
    let end = match page_align(len).ok().and_then(|l| start.checked_add(l)) {
        Some(end) if end > start => end,
        _ => return Err(Errno::ENOMEM),
    };
    if prot & !(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM) != 0 {
        return Err(Errno::EINVAL);
    }
    let mut map = mm.mmap_write_lock();
    let Some((vstart, _, first)) = map.vmas.find_from(start) else {
        return Err(Errno::ENOMEM);
    };
    let start = if grows & PROT_GROWSDOWN != 0 {
        if vstart >= end {
            return Err(Errno::ENOMEM);
        }
        if first.flags & VM_GROWSDOWN == 0 {
            return Err(Errno::EINVAL);
        }
        vstart
    } else {
        if vstart > start {
            return Err(Errno::ENOMEM);
        }
        if grows & PROT_GROWSUP != 0 {
            return Err(Errno::EINVAL);
        }
        start
    };
    let wanted = calc_vm_prot_bits(prot);
    let mut to_populate = Vec::new();
    let result = vma_modify_flags(
        &mut map,
        start,
        end,
        |vs, ve, vma| {
            let mut new = wanted | (vma.flags & !VM_ACCESS_FLAGS);
            // Each VM_MAY* bit sits four above its VM_* bit.
            if (new & !(new >> 4)) & VM_ACCESS_FLAGS != 0 || map_deny_write_exec(mm, vma.flags, new)
            {
                return Err(Errno::EACCES);
            }
            if vma.flags & VM_SEALED != 0 {
                return Err(Errno::EPERM);
            }
            let old = vma.flags;
            if new & VM_WRITE != 0 {
                if old & (VM_ACCOUNT | VM_WRITE | VM_SHARED | VM_NORESERVE) == 0 {
                    if !enough_memory(ve.min(end) - vs.max(start)) {
                        return Err(Errno::ENOMEM);
                    }
                    new |= VM_ACCOUNT;
                }
            } else if old & VM_ACCOUNT != 0 && vma.file.is_none() && !vma.anon_vma.is_set() {
                new &= !VM_ACCOUNT;
            }
            Ok(new)
        },
        |s, e, old, new| {
            change_protection(mm, s, e, new);
            // A private locked VMA turning writable breaks copy-on-write now.
            if old & (VM_WRITE | VM_SHARED | VM_LOCKED) == VM_LOCKED && new & VM_WRITE != 0 {
                to_populate.push((s, e, new));
            }
        },
    );
    drop(map);
    for (s, e, flags) in to_populate {
        populate(mm, s, e, flags);
    }
    result
}

/// Rewrites the entries of [start, end) for a VMA whose flags are now
/// `flags` (Linux: `change_protection`): PROT_NONE keeps each page but
/// makes every access fault; otherwise writable only where the page is
/// the VMA's own (shared, or an exclusive anonymous page), so
/// copy-on-write still happens.
fn change_protection(mm: &Mm, start: usize, end: usize, flags: u64) {
    let shared = flags & VM_SHARED != 0;
    memory::change_protection(mm, start, end, |pte| {
        let prot = if flags & VM_ACCESS_FLAGS == 0 {
            PgProt::user_none()
        } else {
            // A private page may become writable only if it is the
            // process's own (Linux: `can_change_pte_writable`): after fork
            // a shared page must still fault and be copied.
            let own = shared || folio::page_anon_exclusive(pte.addr().pfn());
            PgProt::user(flags & VM_WRITE != 0 && own, flags & VM_EXEC != 0)
        };
        let new = Pte::page(pte.addr(), prot);
        // The dirty state survives (Linux: `pte_modify`).
        if pte.is_dirty() {
            new.mkdirty()
        } else {
            new
        }
    });
}
