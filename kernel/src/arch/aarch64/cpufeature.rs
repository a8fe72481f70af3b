//! What this CPU's MMU offers beyond ARMv8.0, and turning it on (Linux:
//! `arch/arm64/kernel/cpufeature.c`, and `__cpu_setup` in
//! `arch/arm64/mm/proc.S` for TCR_EL1): FEAT_HAFDBS's hardware access flag
//! and FEAT_TLBIRANGE's range invalidation. cortex-a72 has neither; QEMU's
//! `max` and `neoverse-n2` have both.
//!
//! Each is a switch (switches.rs: `hw_af=off`, `tlbi_range=off` at boot,
//! `/sys/kernel/mm/hw_af/enabled` and `tlbi_range/enabled` at run time)
//! that can only be on where the CPU has the feature.
//!
//! Where we simplify: the boot CPU's ID registers speak for every CPU
//! (QEMU's are alike; Linux takes the system-wide safe value); the
//! hardware dirty state (TCR_EL1.HD, the DBM bit) is not used, so dirty
//! state stays in software, as on cortex-a72.

use core::arch::asm;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    ReadWriteable, Readable, ID_AA64ISAR0_EL1, ID_AA64MMFR1_EL1, TCR_EL1,
};

use crate::cmdline::Cmdline;

/// The hardware sets the access flag (TCR_EL1.HA), so fault-around maps
/// the pages it prefaults old and the hardware marks those used (Linux:
/// `arch_wants_old_prefaulted_pte`, true when `cpu_has_hw_af()`).
pub static HW_AF: AtomicBool = AtomicBool::new(false);
/// TCR_EL1.HA is set on every CPU: what `HW_AF` may be turned on over.
static HW_AF_CAPABLE: AtomicBool = AtomicBool::new(false);

/// TLB ranges are invalidated with `TLBI RVALE1IS` (Linux:
/// `system_supports_tlb_range`).
pub static TLBI_RANGE: AtomicBool = AtomicBool::new(false);
/// The CPU has FEAT_TLBIRANGE.
static TLBI_RANGE_CAPABLE: AtomicBool = AtomicBool::new(false);

/// ID_AA64ISAR0_EL1.TLB (bits 59:56, which aarch64-cpu does not name):
/// 0b0010 is FEAT_TLBIOS and FEAT_TLBIRANGE.
fn has_tlbi_range() -> bool {
    (ID_AA64ISAR0_EL1.get() >> 56) & 0xf == 0b0010
}

/// Reads the features on the boot CPU, before the others start, and turns
/// on what the CPU has and the command line leaves on.
pub fn init(cmdline: &Cmdline) {
    let hafdbs = ID_AA64MMFR1_EL1.read(ID_AA64MMFR1_EL1::HAFDBS);
    let ha = hafdbs >= 1 && cmdline.get("hw_af") != Some("off");
    HW_AF_CAPABLE.store(ha, Relaxed);
    HW_AF.store(ha, Relaxed);
    let range = has_tlbi_range();
    TLBI_RANGE_CAPABLE.store(range, Relaxed);
    TLBI_RANGE.store(range && cmdline.get("tlbi_range") != Some("off"), Relaxed);
}

/// Sets TCR_EL1.HA on this CPU if `init` chose it, then drops whatever the
/// TLB cached under the old TCR value (Linux: `cpu_enable_hw_dbm` does the
/// same for HD).
pub fn enable_this_cpu() {
    if !HW_AF_CAPABLE.load(Relaxed) {
        return;
    }
    TCR_EL1.modify(TCR_EL1::HA::Enable);
    barrier::isb(barrier::SY);
    // SAFETY: TLB maintenance only.
    unsafe { asm!("tlbi vmalle1", options(nostack)) };
    barrier::dsb(barrier::NSH);
    barrier::isb(barrier::SY);
}

/// Whether `hw_af/enabled` may be 1: every CPU has TCR_EL1.HA set.
pub fn hw_af_capable() -> bool {
    HW_AF_CAPABLE.load(Relaxed)
}

/// Whether `tlbi_range/enabled` may be 1: the CPU has FEAT_TLBIRANGE.
pub fn tlbi_range_capable() -> bool {
    TLBI_RANGE_CAPABLE.load(Relaxed)
}

/// Map prefaulted pages old? (Linux: `arch_wants_old_prefaulted_pte`.)
#[inline(always)]
pub fn arch_wants_old_prefaulted_pte() -> bool {
    HW_AF.load(Relaxed)
}

/// The banner's words for what is on: e.g. "hardware access flag, range TLBI".
pub fn describe() -> &'static str {
    match (HW_AF.load(Relaxed), TLBI_RANGE.load(Relaxed)) {
        (true, true) => "hardware access flag, range TLBI",
        (true, false) => "hardware access flag",
        (false, true) => "range TLBI",
        (false, false) => "none",
    }
}
