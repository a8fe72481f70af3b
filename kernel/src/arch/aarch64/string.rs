//! The kernel's `memcpy` and `memset` (Linux: `arch/arm64/lib/memcpy.S`,
//! `memset.S`), and `clear_pages` (Linux: `clear_page.S`). The first two
//! stand in place of the compiler's built-in ones, which move at
//! most 8 bytes a loop and go byte by byte, with shifts, whenever source
//! and destination differ mod 8 (as a page-cache read into a pipe's ring
//! or an initrd's 4-aligned file data do). Normal memory takes unaligned
//! loads and stores, so these move 128 (memcpy) or 64 (memset) bytes a
//! loop whatever the alignment, then 8, then single bytes: simpler than
//! Linux's, which also aligns the destination and handles small sizes
//! without loops.

use core::arch::global_asm;

// memcpy(x0 = dst, x1 = src, x2 = bytes) -> dst; the ranges do not overlap.
// 128 bytes a loop (a page in 32), then 8, then 1.
global_asm!(
    ".section .text.memcpy, \"ax\"",
    ".global memcpy",
    "memcpy:",
    "    mov x11, x0",
    "0:  subs x2, x2, #128",
    "    b.lo 4f",
    "    ldp x3, x4, [x1]",
    "    ldp x5, x6, [x1, #16]",
    "    ldp x7, x8, [x1, #32]",
    "    ldp x9, x10, [x1, #48]",
    "    stp x3, x4, [x11]",
    "    stp x5, x6, [x11, #16]",
    "    stp x7, x8, [x11, #32]",
    "    stp x9, x10, [x11, #48]",
    "    ldp x3, x4, [x1, #64]",
    "    ldp x5, x6, [x1, #80]",
    "    ldp x7, x8, [x1, #96]",
    "    ldp x9, x10, [x1, #112]",
    "    stp x3, x4, [x11, #64]",
    "    stp x5, x6, [x11, #80]",
    "    stp x7, x8, [x11, #96]",
    "    stp x9, x10, [x11, #112]",
    "    add x11, x11, #128",
    "    add x1, x1, #128",
    "    b 0b",
    "4:  add x2, x2, #128",
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

// __clear_pages(x0 = page-aligned address, x1 = bytes, a multiple of 4K):
// DC ZVA zeroes a whole block (DCZID_EL0.BS: 4 << BS bytes, 64 on the
// Cortex-A72) an instruction, four blocks a loop; where DCZID_EL0.DZP
// forbids it, 64-byte stores.
global_asm!(
    ".section .text.clear_pages, \"ax\"",
    ".global __clear_pages",
    "__clear_pages:",
    "    mrs x2, dczid_el0",
    "    tbnz w2, #4, 3f",
    "    and w2, w2, #0xf",
    "    mov x3, #4",
    "    lsl x3, x3, x2",
    "    lsl x4, x3, #2",
    "    sub x5, x4, #1",
    "    tst x1, x5",
    "    b.ne 2f",
    "1:  dc zva, x0",
    "    add x0, x0, x3",
    "    dc zva, x0",
    "    add x0, x0, x3",
    "    dc zva, x0",
    "    add x0, x0, x3",
    "    dc zva, x0",
    "    add x0, x0, x3",
    "    subs x1, x1, x4",
    "    b.ne 1b",
    "    ret",
    "2:  dc zva, x0",
    "    add x0, x0, x3",
    "    subs x1, x1, x3",
    "    b.ne 2b",
    "    ret",
    "3:  stp xzr, xzr, [x0]",
    "    stp xzr, xzr, [x0, #16]",
    "    stp xzr, xzr, [x0, #32]",
    "    stp xzr, xzr, [x0, #48]",
    "    add x0, x0, #64",
    "    subs x1, x1, #64",
    "    b.ne 3b",
    "    ret",
);

extern "C" {
    fn __clear_pages(addr: *mut u8, bytes: usize);
}

/// Zeroes `bytes` of whole pages at `addr` (Linux: `clear_page`), a block
/// an instruction where the CPU allows DC ZVA.
///
/// # Safety
/// `addr` must be page-aligned kernel memory (Normal memory, as the linear
/// map is: DC ZVA faults on Device memory), writable for `bytes`, a
/// multiple of the page size and not 0.
pub unsafe fn clear_pages(addr: *mut u8, bytes: usize) {
    debug_assert!((addr as usize).is_multiple_of(crate::mm::addr::PAGE_SIZE));
    debug_assert!(bytes > 0 && bytes.is_multiple_of(crate::mm::addr::PAGE_SIZE));
    // SAFETY: per the caller.
    unsafe { __clear_pages(addr, bytes) }
}
