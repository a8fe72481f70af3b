//! The EL1 virtual generic timer: per-CPU ticks and a monotonic clock
//! (Arm ARM D11, "The Generic Timer"; CNTV_* registers).
//! Linux: `drivers/clocksource/arm_arch_timer.c`.

use core::arch::asm;

/// Counter frequency in Hz (62.5 MHz on QEMU virt).
pub fn frequency() -> u64 {
    let f: u64;
    // SAFETY: reads CNTFRQ_EL0.
    unsafe { asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
    f
}

/// The virtual counter (CNTVCT_EL0); under `-icount shift=0` one tick of
/// virtual time per ~16 instructions at 62.5 MHz.
#[inline(always)]
pub fn counter() -> u64 {
    let c: u64;
    // SAFETY: the ISB orders the read after earlier instructions.
    unsafe { asm!("isb", "mrs {}, cntvct_el0", out(reg) c, options(nomem, nostack)) };
    c
}

/// Lets EL0 read the virtual counter and its frequency (CNTKCTL_EL1.EL0VCTEN,
/// Arm ARM D23.8), as Linux does for its vDSO clock: user programs time
/// short stretches, such as one page fault, without a system call.
pub fn allow_user_counter() {
    const EL0VCTEN: u64 = 1 << 1;
    // SAFETY: read-modify-write of this CPU's CNTKCTL_EL1; only EL0 access
    // to the virtual counter changes.
    unsafe {
        asm!("mrs {t}, cntkctl_el1", "orr {t}, {t}, {bit}", "msr cntkctl_el1, {t}", "isb",
             t = out(reg) _, bit = in(reg) EL0VCTEN, options(nomem, nostack))
    };
}

/// Fires the timer interrupt `ticks` counter ticks from now.
pub fn set_next_event(ticks: u64) {
    // SAFETY: programs this CPU's virtual timer; ENABLE=1, IMASK=0.
    unsafe {
        asm!("msr cntv_tval_el0, {}", "msr cntv_ctl_el0, {}", "isb",
             in(reg) ticks, in(reg) 1u64, options(nomem, nostack))
    };
}
