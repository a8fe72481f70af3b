//! The EL1 virtual generic timer: per-CPU ticks and a monotonic clock
//! (Arm ARM D11, "The Generic Timer"; CNTV_* registers).
//! Linux: `drivers/clocksource/arm_arch_timer.c`.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    ReadWriteable, Readable, Writeable, CNTFRQ_EL0, CNTKCTL_EL1, CNTVCT_EL0, CNTV_CTL_EL0,
    CNTV_CVAL_EL0, CNTV_TVAL_EL0,
};

/// Counter frequency in Hz (62.5 MHz on QEMU virt).
pub fn frequency() -> u64 {
    CNTFRQ_EL0.get()
}

/// The virtual counter (CNTVCT_EL0); under `-icount shift=0` one tick of
/// virtual time per ~16 instructions at 62.5 MHz.
#[inline(always)]
pub fn counter() -> u64 {
    // The ISB keeps the read from being taken early, before the
    // instructions it is meant to time.
    barrier::isb(barrier::SY);
    CNTVCT_EL0.get()
}

/// Lets EL0 read the virtual counter and its frequency (CNTKCTL_EL1.EL0VCTEN,
/// Arm ARM D23.8), as Linux does for its vDSO clock: user programs time
/// short stretches, such as one page fault, without a system call.
pub fn allow_user_counter() {
    CNTKCTL_EL1.modify(CNTKCTL_EL1::EL0VCTEN::TrappedNone);
    barrier::isb(barrier::SY);
}

/// Fires the timer interrupt `ticks` counter ticks from now.
pub fn set_next_event(ticks: u64) {
    CNTV_TVAL_EL0.set(ticks);
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::SET + CNTV_CTL_EL0::IMASK::CLEAR);
    barrier::isb(barrier::SY);
}

/// Fires the timer interrupt when the counter reaches `at`, at once if it
/// has (CNTV_CVAL_EL0: the condition is CNTVCT - CVAL >= 0).
pub fn set_event_at(at: u64) {
    CNTV_CVAL_EL0.set(at);
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::SET + CNTV_CTL_EL0::IMASK::CLEAR);
    barrier::isb(barrier::SY);
}
