//! The kernel's `memcpy` and `memset` (Linux: `arch/arm64/lib/memcpy.S`,
//! `memset.S`), in place of the compiler's built-in ones, which move at
//! most 8 bytes a loop and go byte by byte, with shifts, whenever source
//! and destination differ mod 8 (as a page-cache read into a pipe's ring
//! or an initrd's 4-aligned file data do). Normal memory takes unaligned
//! loads and stores, so these move 64 bytes a loop whatever the alignment,
//! then 8, then single bytes: simpler than Linux's, which also aligns the
//! destination and handles small sizes without loops.

use core::arch::global_asm;

// memcpy(x0 = dst, x1 = src, x2 = bytes) -> dst; the ranges do not overlap.
global_asm!(
    ".section .text.memcpy, \"ax\"",
    ".global memcpy",
    "memcpy:",
    "    mov x11, x0",
    "0:  cmp x2, #64",
    "    b.lo 1f",
    "    ldp x3, x4, [x1]",
    "    ldp x5, x6, [x1, #16]",
    "    ldp x7, x8, [x1, #32]",
    "    ldp x9, x10, [x1, #48]",
    "    stp x3, x4, [x11]",
    "    stp x5, x6, [x11, #16]",
    "    stp x7, x8, [x11, #32]",
    "    stp x9, x10, [x11, #48]",
    "    add x11, x11, #64",
    "    add x1, x1, #64",
    "    sub x2, x2, #64",
    "    b 0b",
    "1:  cmp x2, #8",
    "    b.lo 2f",
    "    ldr x3, [x1], #8",
    "    str x3, [x11], #8",
    "    sub x2, x2, #8",
    "    b 1b",
    "2:  cbz x2, 3f",
    "    ldrb w3, [x1], #1",
    "    strb w3, [x11], #1",
    "    sub x2, x2, #1",
    "    b 2b",
    "3:  ret",
);

// memset(x0 = dst, w1 = byte, x2 = bytes) -> dst.
global_asm!(
    ".section .text.memset, \"ax\"",
    ".global memset",
    "memset:",
    "    mov x11, x0",
    "    and x1, x1, #0xff",
    "    mov x3, #0x0101010101010101",
    "    mul x3, x3, x1",
    "0:  cmp x2, #64",
    "    b.lo 1f",
    "    stp x3, x3, [x11]",
    "    stp x3, x3, [x11, #16]",
    "    stp x3, x3, [x11, #32]",
    "    stp x3, x3, [x11, #48]",
    "    add x11, x11, #64",
    "    sub x2, x2, #64",
    "    b 0b",
    "1:  cmp x2, #8",
    "    b.lo 2f",
    "    str x3, [x11], #8",
    "    sub x2, x2, #8",
    "    b 1b",
    "2:  cbz x2, 3f",
    "    strb w3, [x11], #1",
    "    sub x2, x2, #1",
    "    b 2b",
    "3:  ret",
);
