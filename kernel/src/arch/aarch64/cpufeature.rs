//! What this CPU's MMU offers beyond ARMv8.0, and turning it on (Linux:
//! `arch/arm64/kernel/cpufeature.c`, and `__cpu_setup` in
//! `arch/arm64/mm/proc.S` for TCR_EL1): FEAT_HAFDBS's hardware access flag
//! and dirty state, and FEAT_TLBIRANGE's range invalidation. cortex-a72
//! has none; QEMU's `max` and `neoverse-n2` have all three.
//!
//! Each is a switch (switches.rs: `hw_af=off`, `hw_dirty=off`,
//! `tlbi_range=off` at boot, `/sys/kernel/mm/hw_af/enabled`,
//! `hw_dirty/enabled` and `tlbi_range/enabled` at run time) that can only
//! be on where the CPU has the feature.
//!
//! Where we simplify: the boot CPU's ID registers speak for every CPU
//! (QEMU's are alike; Linux takes the system-wide safe value); turning
//! `hw_dirty` on or off at run time reaches each other CPU's TCR_EL1 at
//! its next tick (Linux has no such switch). Either way is safe
//! meanwhile: the kernel reads both the MMU's dirty state and its own.

use alloc::string::String;
use alloc::vec::Vec;
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

/// The MMU sets the dirty state (TCR_EL1.HD): the first write to a clean
/// writable entry (read-only, DBM set) makes it read-write with no fault
/// (Linux: `ARM64_HW_DBM`, "Hardware dirty bit management"). Off, that
/// write faults and `ptep_set_access_flags` does the same.
pub static HW_DIRTY: AtomicBool = AtomicBool::new(false);
/// The CPU has FEAT_HAFDBS's dirty state and TCR_EL1.HA is set, without
/// which HD does nothing.
static HW_DIRTY_CAPABLE: AtomicBool = AtomicBool::new(false);

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
    let hd = ha && hafdbs >= 2;
    HW_DIRTY_CAPABLE.store(hd, Relaxed);
    HW_DIRTY.store(hd && cmdline.get("hw_dirty") != Some("off"), Relaxed);
    let range = has_tlbi_range();
    TLBI_RANGE_CAPABLE.store(range, Relaxed);
    TLBI_RANGE.store(range && cmdline.get("tlbi_range") != Some("off"), Relaxed);
}

/// Sets TCR_EL1.HA on this CPU if `init` chose it, and HD as `HW_DIRTY`
/// says.
pub fn enable_this_cpu() {
    if !HW_AF_CAPABLE.load(Relaxed) {
        return;
    }
    TCR_EL1.modify(TCR_EL1::HA::Enable);
    sync_hw_dirty();
}

/// Brings this CPU's TCR_EL1.HD in line with `HW_DIRTY`, the switch: at
/// boot, at each tick and at once on the CPU that writes the switch's file.
/// A change drops whatever the TLB cached under the old TCR value (Linux:
/// `cpu_enable_hw_dbm`).
pub fn sync_hw_dirty() {
    let want = HW_DIRTY.load(Relaxed);
    if TCR_EL1.is_set(TCR_EL1::HD) == want {
        return;
    }
    TCR_EL1.modify(if want {
        TCR_EL1::HD::Enable
    } else {
        TCR_EL1::HD::Disable
    });
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

/// Whether `hw_dirty/enabled` may be 1: the CPU has the dirty state and
/// TCR_EL1.HA is set.
pub fn hw_dirty_capable() -> bool {
    HW_DIRTY_CAPABLE.load(Relaxed)
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

/// The banner's words for what is on: e.g. "hardware access flag,
/// hardware dirty state, range TLBI".
pub fn describe() -> String {
    let on = [
        (HW_AF.load(Relaxed), "hardware access flag"),
        (HW_DIRTY.load(Relaxed), "hardware dirty state"),
        (TLBI_RANGE.load(Relaxed), "range TLBI"),
    ];
    let words: Vec<&str> = on.iter().filter(|(on, _)| *on).map(|(_, w)| *w).collect();
    if words.is_empty() {
        "none".into()
    } else {
        words.join(", ")
    }
}
