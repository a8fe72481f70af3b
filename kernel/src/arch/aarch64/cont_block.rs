//! One whole contiguous block's 16 PTEs, read or written two at a time:
//! `ldp` and `stp` move two neighbouring entries per instruction, where
//! Linux's `pte_range_none` and `__set_ptes` take one `READ_ONCE` or
//! `WRITE_ONCE` per entry. Each of the pair's two 64-bit accesses is
//! single-copy atomic (Arm ARM B2.2.1: an aligned `ldp`/`stp` of two
//! X registers is two atomic 64-bit accesses), so a table walker or a
//! lockless `ptep_get` on another CPU sees each entry old or new, never
//! torn: the same promise the one-entry accesses give, in half the
//! instructions. Rust's atomics never pair, hence the asm.
//!
//! The usual multi-page fault, a 64K folio's, is one such block: its
//! `finish_fault` checks 16 entries and stores 16.

use core::arch::asm;
use core::sync::atomic::AtomicU64;

use super::contpte::CONT_PTES;
use crate::mm::addr::PAGE_SIZE;

/// Are all 16 entries of `block` none (Linux: `pte_range_none` over one
/// block)? Relaxed loads, as `ptep_get`'s: the caller holds the table's
/// lock, or nothing can reach the table, so the answer stays true.
#[inline(always)]
pub fn none(block: &[AtomicU64; CONT_PTES]) -> bool {
    let any: u64;
    // SAFETY: reads the 128 bytes of `block`, a live, 8-aligned array of
    // atomics, as 64-bit atomic loads; writes only the named registers.
    unsafe {
        asm!(
            "ldp {a}, {b}, [{p}]",
            "orr {any}, {a}, {b}",
            ".irp off, 16, 32, 48, 64, 80, 96, 112",
            "ldp {a}, {b}, [{p}, #\\off]",
            "orr {any}, {any}, {a}",
            "orr {any}, {any}, {b}",
            ".endr",
            p = in(reg) block.as_ptr(),
            a = out(reg) _,
            b = out(reg) _,
            any = out(reg) any,
            options(nostack, readonly, preserves_flags),
        );
    }
    any == 0
}

/// Writes `block`'s 16 entries with `first` and the 15 after it, each
/// mapping the next page: adding a page to the descriptor moves its output
/// address alone. Relaxed stores, as `contpte`'s `write_run`: the caller
/// orders the folio's contents before them and publishes them after.
#[inline(always)]
pub fn write(block: &[AtomicU64; CONT_PTES], first: u64) {
    const _: () = assert!(PAGE_SIZE == 0x1000 && CONT_PTES == 16);
    // SAFETY: stores into the 128 bytes of `block`, a live, 8-aligned
    // array of atomics, as 64-bit atomic stores; writes only the named
    // registers besides.
    unsafe {
        asm!(
            "add {b}, {a}, #0x1000",
            ".irp off, 0, 16, 32, 48, 64, 80, 96",
            "stp {a}, {b}, [{p}, #\\off]",
            "add {a}, {a}, #0x2000",
            "add {b}, {b}, #0x2000",
            ".endr",
            "stp {a}, {b}, [{p}, #112]",
            p = in(reg) block.as_ptr(),
            a = inout(reg) first => _,
            b = out(reg) _,
            options(nostack, preserves_flags),
        );
    }
}
