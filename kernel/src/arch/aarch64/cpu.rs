//! Per-CPU register access: interrupt masking, the CPU number, waiting.
//!
//! TPIDR_EL1 holds this CPU's number (Linux keeps its per-CPU offset there).

use core::arch::asm;

/// Masks IRQs on this CPU and returns the previous DAIF, for
/// `local_irq_restore` (Linux: `local_irq_save`).
#[inline(always)]
pub fn local_irq_save() -> u64 {
    let daif: u64;
    // SAFETY: reading DAIF and masking IRQs has no memory effects.
    unsafe {
        asm!("mrs {}, daif", "msr daifset, #2", out(reg) daif, options(nomem, nostack));
    }
    daif
}

#[inline(always)]
pub fn local_irq_restore(daif: u64) {
    // SAFETY: restores a DAIF value previously read by local_irq_save.
    unsafe { asm!("msr daif, {}", in(reg) daif, options(nomem, nostack)) }
}

#[inline(always)]
pub fn local_irq_enable() {
    // SAFETY: unmasking IRQs; callers are outside any IRQ-safe lock.
    unsafe { asm!("msr daifclr, #2", options(nomem, nostack)) }
}

/// This CPU's logical number (0 = boot CPU).
#[inline(always)]
pub fn cpu_id() -> usize {
    let id: usize;
    // SAFETY: reads TPIDR_EL1, set once per CPU by set_cpu_id.
    unsafe { asm!("mrs {}, tpidr_el1", out(reg) id, options(nomem, nostack, preserves_flags)) };
    id
}

pub fn set_cpu_id(id: usize) {
    // SAFETY: TPIDR_EL1 is reserved for the CPU number, written at CPU bring-up.
    unsafe { asm!("msr tpidr_el1, {}", in(reg) id, options(nomem, nostack)) };
}

/// MPIDR_EL1 affinity fields (Aff3..Aff0), as the DTB's cpu `reg` gives them.
pub fn mpidr() -> u64 {
    let v: u64;
    // SAFETY: reads an ID register.
    unsafe { asm!("mrs {}, mpidr_el1", out(reg) v, options(nomem, nostack)) };
    v & 0xff_00ff_ffff
}

#[inline(always)]
pub fn wait_for_interrupt() {
    // SAFETY: WFI only pauses the CPU until an interrupt or event.
    unsafe { asm!("wfi", options(nomem, nostack)) }
}

/// The current frame pointer (x29), where the panic backtrace starts.
#[inline(always)]
pub fn frame_pointer() -> usize {
    let fp: usize;
    // SAFETY: reads x29.
    unsafe { asm!("mov {}, x29", out(reg) fp, options(nomem, nostack)) };
    fp
}

/// Lets EL0 and EL1 use the FP/SIMD registers without trapping
/// (CPACR_EL1.FPEN = 0b11). The kernel is soft-float and touches them only
/// to save and restore user state.
pub fn enable_fpsimd() {
    // SAFETY: changes only whether FP/SIMD instructions trap.
    unsafe {
        asm!("mrs {t}, cpacr_el1", "orr {t}, {t}, #(3 << 20)", "msr cpacr_el1, {t}", "isb", t = out(reg) _, options(nomem, nostack))
    };
}

/// MIDR_EL1, who made this CPU and which part it is (/proc/cpuinfo).
pub fn midr() -> u64 {
    let midr: u64;
    // SAFETY: MIDR_EL1 is a read-only identification register.
    unsafe { asm!("mrs {}, midr_el1", out(reg) midr, options(nomem, nostack, preserves_flags)) };
    midr
}
