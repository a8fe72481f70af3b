//! What gdb's helpers (`scripts/gdb/faultline/`) need to know that the
//! debug information cannot tell them: constants, which Rust compiles into
//! the code and describes nowhere (Linux: `kernel/vmcore_info.c`, the
//! `VMCOREINFO` note that crash and makedumpfile read, and
//! `scripts/gdb/linux/constants.py.in`). One static with a plain symbol
//! name, read by field name, built from the constants themselves: change
//! one, and gdb sees the change.

use crate::mm::addr::{PAGE_OFFSET, PAGE_SHIFT, USER_TOP};
use crate::mm::folio::FOLIO_FLAG_NAMES;
use crate::mm::page::{PG_BUDDY, PG_HEAD, PG_RESERVED};
use crate::mm::vma::VM_FLAG_NAMES;
use crate::mm::vma_lock::{NEVER_LOCKED, WRITER};
use crate::task::exec::STACK_TOP;

/// The constants, by name. Nothing in the kernel reads them.
#[allow(dead_code)]
#[repr(C)]
pub struct VmCoreInfo {
    /// The linear map: kernel VA = `page_offset` + PA.
    page_offset: usize,
    /// `PAGE_SHIFT`: log2 of the page size in bytes, to turn addresses into PFNs.
    page_shift: u32,
    /// User addresses lie below it.
    user_top: usize,
    /// Where the stack VMA ends (`/proc/PID/maps` calls it `[stack]`).
    stack_top: usize,
    /// `Vma::flags` bits, with Linux's smaps `VmFlags` names.
    vm_flags: [(&'static str, u64); VM_FLAG_NAMES.len()],
    /// Folio flag bits (`mm/folio.rs`).
    folio_flags: [(&'static str, u32); FOLIO_FLAG_NAMES.len()],
    /// The buddy allocator's flags on `mem_map` (`mm/page.rs`).
    page_flags: [(&'static str, u32); 3],
    /// `VmaLock::state`'s bit for a writer draining readers, and
    /// `vm_lock_seq` of a VMA never write-locked.
    vma_lock_writer: u32,
    /// `NEVER_LOCKED`: the `vm_lock_seq` a VMA has before its first write lock.
    vma_never_locked: u64,
}

/// The one instance gdb reads by its unmangled symbol name; `#[used]` keeps
/// it in the image though nothing refers to it.
#[used]
#[no_mangle]
pub static VMCOREINFO: VmCoreInfo = VmCoreInfo {
    page_offset: PAGE_OFFSET,
    page_shift: PAGE_SHIFT,
    user_top: USER_TOP,
    stack_top: STACK_TOP,
    vm_flags: VM_FLAG_NAMES,
    folio_flags: FOLIO_FLAG_NAMES,
    page_flags: [
        ("reserved", PG_RESERVED),
        ("buddy", PG_BUDDY),
        ("head", PG_HEAD),
    ],
    vma_lock_writer: WRITER,
    vma_never_locked: NEVER_LOCKED,
};
