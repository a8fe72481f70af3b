//! The routines that touch user memory from the kernel (Linux:
//! `__arch_copy_from_user` / `__arch_copy_to_user` in
//! `arch/arm64/lib/copy_*_user.S`). Every user access in them is listed in
//! `__ex_table` as a user access: a fault there is first handled like a
//! user page fault (the page is brought in and the access retried), and if
//! that fails the copy stops and reports how much it could not do.
//!
//! The user side is reached with the unprivileged loads and stores, LDTR
//! and STTR, as Linux does: they check the page's EL0 permissions, so the
//! kernel cannot read or write user memory its owner may not (a PROT_NONE
//! page, whose entry only EL1 may use, faults, and the copy is EFAULT).
//! Kernel and user halves are mapped at the same time (TTBR1 and TTBR0).

use core::arch::global_asm;

extern "C" {
    fn __copy_from_user(dst: *mut u8, src: *const u8, n: usize) -> usize;
    fn __copy_to_user(dst: *mut u8, src: *const u8, n: usize) -> usize;
    fn __clear_user(dst: *mut u8, n: usize) -> usize;
}

// `uaccess INSN, REG, BASE, OFF, FIXUP`: one user access, `INSN REG,
// [BASE, #OFF]`, listed in `__ex_table` (kind 1) so that a fault there
// resumes at FIXUP (Linux: `user_ldst` with `_asm_extable_uaccess`).
global_asm!(
    ".macro uaccess insn, reg, base, off, fixup",
    "9998: \\insn \\reg, [\\base, #\\off]",
    "    .pushsection __ex_table, \"a\"",
    "    .quad 9998b, \\fixup, 1",
    "    .popsection",
    ".endm",
);

/// One copy routine per direction: x0 = dst, x1 = src, x2 = bytes; returns
/// bytes NOT copied. 64 bytes at a time (Linux's `copy_template.S` does the
/// same), then 8, then bytes. A fault in a 64- or 8-byte chunk goes on from
/// that chunk with the next smaller size (nothing is counted as copied
/// until a whole chunk is), so the count stops exactly at the first byte
/// that is not there, as Linux's copy_from_user does (a write() from a
/// buffer running into a hole is short by exactly the missing part).
/// `$block` copies the 64 bytes at [x1] to [x0] through x3-x10, `$ld`/`$st`
/// are the 8-byte accesses, `$ldb`/`$stb` the byte ones; in a copy that
/// touches user memory, the user side's accesses go through `uaccess`.
macro_rules! copy_routine {
    ($name:literal, $block:literal, $ld:literal, $st:literal, $ldb:literal, $stb:literal) => {
        global_asm!(
            ".section .text",
            concat!(".global ", $name),
            concat!($name, ":"),
            "0:  cmp x2, #64",
            "    b.lo 1f",
            $block,
            "    add x0, x0, #64",
            "    add x1, x1, #64",
            "    sub x2, x2, #64",
            "    b 0b",
            "1:  cmp x2, #8",
            "    b.lo 3f",
            $ld,
            $st,
            "    add x0, x0, #8",
            "    add x1, x1, #8",
            "    sub x2, x2, #8",
            "    b 1b",
            "3:  cbz x2, 9f",
            $ldb,
            $stb,
            "    add x0, x0, #1",
            "    add x1, x1, #1",
            "    sub x2, x2, #1",
            "    b 3b",
            "9:  mov x0, x2",
            "    ret",
        );
    };
}

// The user side has no load or store pair (LDTR and STTR take one
// register), so it moves 8 registers one at a time, as Linux's
// `user_ldp`/`user_stp` do.
copy_routine!(
    "__copy_from_user",
    "uaccess ldtr, x3, x1, 0, 1f\n uaccess ldtr, x4, x1, 8, 1f
     uaccess ldtr, x5, x1, 16, 1f\n uaccess ldtr, x6, x1, 24, 1f
     uaccess ldtr, x7, x1, 32, 1f\n uaccess ldtr, x8, x1, 40, 1f
     uaccess ldtr, x9, x1, 48, 1f\n uaccess ldtr, x10, x1, 56, 1f
     stp x3, x4, [x0]\n stp x5, x6, [x0, #16]\n stp x7, x8, [x0, #32]\n stp x9, x10, [x0, #48]",
    "uaccess ldtr, x3, x1, 0, 3f",
    "str x3, [x0]",
    "uaccess ldtrb, w3, x1, 0, 9f",
    "strb w3, [x0]"
);
copy_routine!(
    "__copy_to_user",
    "ldp x3, x4, [x1]\n ldp x5, x6, [x1, #16]\n ldp x7, x8, [x1, #32]\n ldp x9, x10, [x1, #48]
     uaccess sttr, x3, x0, 0, 1f\n uaccess sttr, x4, x0, 8, 1f
     uaccess sttr, x5, x0, 16, 1f\n uaccess sttr, x6, x0, 24, 1f
     uaccess sttr, x7, x0, 32, 1f\n uaccess sttr, x8, x0, 40, 1f
     uaccess sttr, x9, x0, 48, 1f\n uaccess sttr, x10, x0, 56, 1f",
    "ldr x3, [x1]",
    "uaccess sttr, x3, x0, 0, 3f",
    "ldrb w3, [x1]",
    "uaccess sttrb, w3, x0, 0, 9f"
);

// __clear_user(x0 = dst, x1 = bytes) -> bytes NOT zeroed (Linux:
// `__arch_clear_user`): 8 bytes at a time, then bytes, a fault on an
// 8-byte store going on byte by byte as the copies do.
global_asm!(
    ".section .text",
    ".global __clear_user",
    "__clear_user:",
    "1:  cmp x1, #8",
    "    b.lo 3f",
    "    uaccess sttr, xzr, x0, 0, 3f",
    "    add x0, x0, #8",
    "    sub x1, x1, #8",
    "    b 1b",
    "3:  cbz x1, 9f",
    "    uaccess sttrb, wzr, x0, 0, 9f",
    "    add x0, x0, #1",
    "    sub x1, x1, #1",
    "    b 3b",
    "9:  mov x0, x1",
    "    ret",
);

/// Copies `n` bytes from user address `src` to kernel memory `dst`;
/// returns how many bytes at the end were not copied (0 = all).
///
/// # Safety
/// `dst` must be valid kernel memory for `n` bytes; `src` must lie below
/// `USER_TOP` (faults there are handled, not fatal).
pub unsafe fn copy_from_user(dst: *mut u8, src: *const u8, n: usize) -> usize {
    // SAFETY: per the caller; faults on the user side are fixed up.
    unsafe { __copy_from_user(dst, src, n) }
}

/// Copies `n` bytes from kernel memory `src` to user address `dst`;
/// returns how many bytes at the end were not copied.
///
/// # Safety
/// `src` must be valid kernel memory for `n` bytes; `dst` must lie below
/// `USER_TOP`.
pub unsafe fn copy_to_user(dst: *mut u8, src: *const u8, n: usize) -> usize {
    // SAFETY: per the caller; faults on the user side are fixed up.
    unsafe { __copy_to_user(dst, src, n) }
}

/// Zeroes `n` bytes at user address `dst`; returns how many bytes at the
/// end were not zeroed.
///
/// # Safety
/// `dst` must lie below `USER_TOP`.
pub unsafe fn clear_user(dst: *mut u8, n: usize) -> usize {
    // SAFETY: per the caller; faults on the user side are fixed up.
    unsafe { __clear_user(dst, n) }
}
