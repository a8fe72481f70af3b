//! The one routine that touches user memory from the kernel (Linux:
//! `__arch_copy_from_user` / `__arch_copy_to_user` in
//! `arch/arm64/lib/copy_*_user.S`). Every load and store in it is listed in
//! `__ex_table` as a user access: a fault there is first handled like a
//! user page fault (the page is brought in and the access retried), and if
//! that fails the copy stops and reports how much it could not do.
//!
//! Kernel and user halves are mapped at the same time (TTBR1 and TTBR0), so
//! one routine copies in both directions. No PAN: we rely on every caller
//! going through `mm::uaccess`, which checks addresses first.

use core::arch::global_asm;

extern "C" {
    fn __copy_user(dst: *mut u8, src: *const u8, n: usize) -> usize;
}

// x0 = dst, x1 = src, x2 = bytes; returns bytes NOT copied. 8 bytes at a
// time, then bytes. A fault on an 8-byte chunk goes on byte by byte from
// that chunk, so the count stops exactly at the first byte that is not
// there, as Linux's copy_from_user does (a write() from a buffer running
// into a hole is short by exactly the missing part).
global_asm!(
    ".section .text",
    ".global __copy_user",
    "__copy_user:",
    "    cmp x2, #8",
    "    b.lo 3f",
    "1:  ldr x3, [x1]",
    "2:  str x3, [x0]",
    "    add x0, x0, #8",
    "    add x1, x1, #8",
    "    sub x2, x2, #8",
    "    cmp x2, #8",
    "    b.hs 1b",
    "3:  cbz x2, 9f",
    "4:  ldrb w3, [x1]",
    "5:  strb w3, [x0]",
    "    add x0, x0, #1",
    "    add x1, x1, #1",
    "    sub x2, x2, #1",
    "    b 3b",
    "9:  mov x0, x2",
    "    ret",
    ".pushsection __ex_table, \"a\"",
    ".quad 1b, 3b, 1",
    ".quad 2b, 3b, 1",
    ".quad 4b, 9b, 1",
    ".quad 5b, 9b, 1",
    ".popsection",
);

/// Copies `n` bytes from `src` to `dst`, either of which may be a user
/// address; returns how many bytes at the end were not copied (0 = all).
///
/// # Safety
/// The kernel side of the copy must be valid for `n` bytes; the user side
/// must lie below `USER_TOP` (faults there are handled, not fatal).
pub unsafe fn copy_user(dst: *mut u8, src: *const u8, n: usize) -> usize {
    // SAFETY: per the caller; faults on the user side are fixed up.
    unsafe { __copy_user(dst, src, n) }
}
