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
    fn __copy_kernel(dst: *mut u8, src: *const u8, n: usize) -> usize;
}

/// One copy routine per direction: x0 = dst, x1 = src, x2 = bytes; returns
/// bytes NOT copied. 8 bytes at a time, then bytes. A fault on an 8-byte
/// chunk goes on byte by byte from that chunk, so the count stops exactly
/// at the first byte that is not there, as Linux's copy_from_user does (a
/// write() from a buffer running into a hole is short by exactly the
/// missing part). `$ld`/`$st` are the 8-byte accesses, `$ldb`/`$stb` the
/// byte ones; a copy that touches user memory (`user`) lists the four in
/// `__ex_table` (kind 1: a user access), the kernel's own (`kernel`) none.
macro_rules! copy_routine {
    ($name:literal, $ld:literal, $st:literal, $ldb:literal, $stb:literal, user) => {
        copy_routine!(@emit $name, $ld, $st, $ldb, $stb,
            ".pushsection __ex_table, \"a\"\n.quad 1b, 3b, 1\n.quad 2b, 3b, 1\n\
             .quad 4b, 9b, 1\n.quad 5b, 9b, 1\n.popsection");
    };
    ($name:literal, $ld:literal, $st:literal, $ldb:literal, $stb:literal, kernel) => {
        copy_routine!(@emit $name, $ld, $st, $ldb, $stb, "");
    };
    (@emit $name:literal, $ld:literal, $st:literal, $ldb:literal, $stb:literal, $fixups:literal) => {
        global_asm!(
            ".section .text",
            concat!(".global ", $name),
            concat!($name, ":"),
            "    cmp x2, #8",
            "    b.lo 3f",
            concat!("1:  ", $ld, " x3, [x1]"),
            concat!("2:  ", $st, " x3, [x0]"),
            "    add x0, x0, #8",
            "    add x1, x1, #8",
            "    sub x2, x2, #8",
            "    cmp x2, #8",
            "    b.hs 1b",
            "3:  cbz x2, 9f",
            concat!("4:  ", $ldb, " w3, [x1]"),
            concat!("5:  ", $stb, " w3, [x0]"),
            "    add x0, x0, #1",
            "    add x1, x1, #1",
            "    sub x2, x2, #1",
            "    b 3b",
            "9:  mov x0, x2",
            "    ret",
            $fixups,
        );
    };
}

copy_routine!("__copy_from_user", "ldtr", "str", "ldtrb", "strb", user);
copy_routine!("__copy_to_user", "ldr", "sttr", "ldrb", "sttrb", user);
copy_routine!("__copy_kernel", "ldr", "str", "ldrb", "strb", kernel);

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

/// Copies `n` bytes of kernel memory, 8 at a time whatever the alignment
/// (the built-in memcpy goes byte by byte when source and destination
/// differ mod 8).
///
/// # Safety
/// Both sides must be valid kernel memory for `n` bytes, not overlapping.
pub unsafe fn copy_kernel(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: per the caller.
    unsafe { __copy_kernel(dst, src, n) };
}
