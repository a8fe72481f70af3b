//! Per-CPU register access: interrupt masking, the CPU number, waiting.
//!
//! TPIDR_EL1 holds this CPU's number in its low 6 bits (`CPU_ID_MASK`)
//! and, above them, the address of the scheduler's state for this CPU, so
//! finding `current` is one register read and one load (Linux keeps its
//! per-CPU offset there). The gdb helpers and the TLB plugin read the
//! number the same way.
//!
//! System registers go through aarch64-cpu's typed registers. Interrupt
//! masking stays `asm!`: the crate has no form of `msr daifset/daifclr, #imm`,
//! and its DAIF accessors are not the compiler barriers masking must be.

use core::arch::asm;

use crate::config::NR_CPUS;

use aarch64_cpu::asm::{barrier, wfi};
use aarch64_cpu::registers::{
    ReadWriteable, Readable, Writeable, CPACR_EL1, FP, MIDR_EL1, MPIDR_EL1, TPIDR_EL1,
};

// Masking and unmasking clobber memory (no `nomem`), as Linux's
// `arch_local_irq_*` do, so each is a compiler barrier. With `nomem` the
// compiler may move memory accesses, atomics included, across them:
// Acquire and Release order the spin lock against the data it guards, not
// against DAIF, which the compiler does not see as memory. The lock's
// compare-exchange could then be hoisted above the mask, or its releasing
// store sunk below the restore, and an interrupt whose handler takes the
// same lock, arriving in that window, would spin forever on this CPU.
// (aarch64-cpu's DAIF accessors are `nomem` too, so they cannot serve.)

/// Masks IRQs on this CPU and returns the previous DAIF, for
/// `local_irq_restore` (Linux: `local_irq_save`).
#[inline(always)]
pub fn local_irq_save() -> u64 {
    let daif: u64;
    // SAFETY: reads DAIF and masks IRQs; touches no memory.
    unsafe {
        asm!("mrs {}, daif", "msr daifset, #2", out(reg) daif, options(nostack));
    }
    daif
}

/// Puts back the DAIF that `local_irq_save` returned, so IRQs are unmasked
/// again only if they were before (Linux: `local_irq_restore`).
#[inline(always)]
pub fn local_irq_restore(daif: u64) {
    // SAFETY: restores a DAIF value previously read by local_irq_save.
    unsafe { asm!("msr daif, {}", in(reg) daif, options(nostack)) }
}

/// Unmasks IRQs on this CPU, clearing DAIF.I (Linux: `local_irq_enable`).
#[inline(always)]
pub fn local_irq_enable() {
    // SAFETY: unmasking IRQs; callers are outside any IRQ-safe lock.
    unsafe { asm!("msr daifclr, #2", options(nostack)) }
}

/// The bits of TPIDR_EL1 that hold the CPU number.
pub const CPU_ID_MASK: usize = 63;

/// This CPU's logical number (0 = boot CPU), below `NR_CPUS`: main.rs
/// hands out no other. The modulo (an AND, `NR_CPUS` being a power of
/// two no larger than the mask) says so to the compiler, which then
/// indexes the per-CPU arrays (run queues, vmstat slots) with no bounds
/// check on every fault.
#[inline(always)]
pub fn cpu_id() -> usize {
    const { assert!(NR_CPUS.is_power_of_two() && NR_CPUS <= CPU_ID_MASK + 1) };
    tpidr() % NR_CPUS
}

/// TPIDR_EL1, read so that the compiler may reuse one read for the rest
/// of the function (`pure`, `nomem`): the value is fixed for the thread,
/// which never changes CPU, and set once before anything reads it (Linux's
/// `__my_cpu_offset` is cached for the same reason). aarch64-cpu's reader
/// is never merged, so a fault that asks for `current`, a counter's slot
/// and the reschedule flag would read the register three times.
#[inline(always)]
fn tpidr() -> usize {
    let value: usize;
    // SAFETY: reads a system register; touches no memory.
    unsafe {
        asm!("mrs {}, tpidr_el1", out(reg) value, options(pure, nomem, nostack, preserves_flags));
    }
    value
}

/// Records this CPU's logical number and the address of its own state in
/// the layer above (`cpu_local`), once, at its bring-up. `local` is
/// aligned to 64 bytes, so the number fits below it. Out of line, and
/// first thing in each CPU's entry function: the reads (`tpidr`) are free
/// to move, so none shares a function body with this write.
#[inline(never)]
pub fn set_cpu(id: usize, local: usize) {
    assert!(id < NR_CPUS && local & CPU_ID_MASK == 0);
    // A safe write that memory safety still rests on: the run queues are
    // indexed by cpu_id() and found through cpu_local(), and two CPUs
    // with one number would resume the same thread's context and stack at
    // once. `id` is this CPU's alone (main.rs hands out each once).
    TPIDR_EL1.set((local | id) as u64);
}

/// The address `set_cpu` recorded for this CPU (Linux: `__my_cpu_offset`).
#[inline(always)]
pub fn cpu_local() -> usize {
    tpidr() & !CPU_ID_MASK
}

/// MPIDR_EL1 affinity fields (Aff3..Aff0), as the DTB's cpu `reg` gives them.
pub fn mpidr() -> u64 {
    MPIDR_EL1.get() & 0xff_00ff_ffff
}

/// Sleeps in WFI until an interrupt or another wake-up event arrives: the
/// idle loop's wait (Linux: `cpu_do_idle`).
#[inline(always)]
pub fn wait_for_interrupt() {
    wfi();
}

/// The current frame pointer (x29), where the panic backtrace starts.
#[inline(always)]
pub fn frame_pointer() -> usize {
    FP.get() as usize
}

/// Lets EL0 and EL1 use the FP/SIMD registers without trapping
/// (CPACR_EL1.FPEN = 0b11). The kernel is soft-float and touches them only
/// to save and restore user state.
pub fn enable_fpsimd() {
    CPACR_EL1.modify(CPACR_EL1::FPEN::TrapNothing);
    barrier::isb(barrier::SY);
}

/// MIDR_EL1, who made this CPU and which part it is (/proc/cpuinfo).
pub fn midr() -> u64 {
    MIDR_EL1.get()
}
