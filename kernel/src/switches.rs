//! faultline's own on/off switches, one row each: the mechanism, the
//! command-line word that turns it off at boot and the file under
//! `/sys/kernel/mm/` that turns it off and on at run time. Linux has no
//! such switches; they are here so one boot can measure both sides of
//! each mechanism (docs/seeds.md). Every switch starts on, but those of
//! a hardware feature the CPU lacks, which stay off.
//!
//! `kernel_main` applies the command line through this table, sysfs makes
//! a file for each row, and `scripts/check-docs.py` checks that the book
//! names each switch as the table does.

use core::sync::atomic::{AtomicBool, Ordering};

use crate::cmdline::Cmdline;

/// One switch.
pub struct Switch {
    /// The flag the mechanism reads (true: on).
    pub flag: &'static AtomicBool,
    /// `NAME=OFF` on the command line turns it off: NAME.
    pub cmdline: &'static str,
    /// ... and OFF.
    pub off: &'static str,
    /// Its file under `/sys/kernel/mm/` (1 on, 0 off).
    pub sysfs: &'static str,
    /// Whether it can be on: false where the CPU lacks the hardware
    /// feature, and then it is off from boot and 1 is refused.
    pub available: fn() -> bool,
}

/// Every switch.
pub static SWITCHES: [Switch; 6] = [
    // Seed 000: finish_fault maps as much of a folio as it may.
    Switch {
        flag: &crate::mm::fault::FINISH_FAULT_MULTI,
        cmdline: "finish_fault",
        off: "single",
        sysfs: "finish_fault/multi_page",
        available: always,
    },
    // Seed 002: faults under the VMA's own lock.
    Switch {
        flag: &crate::mm::vma_lock::PER_VMA_LOCK,
        cmdline: "vma_lock",
        off: "off",
        sysfs: "vma_lock/enabled",
        available: always,
    },
    // The contiguous bit on 16 PTEs mapping 64K of one folio.
    Switch {
        flag: &crate::arch::pgtable::CONTPTE_ENABLED,
        cmdline: "contpte",
        off: "off",
        sysfs: "contpte/enabled",
        available: always,
    },
    // FEAT_HAFDBS: the hardware sets the access flag, so fault-around maps
    // what it prefaults old (TCR_EL1.HA is set at boot unless `hw_af=off`).
    Switch {
        flag: &crate::arch::cpufeature::HW_AF,
        cmdline: "hw_af",
        off: "off",
        sysfs: "hw_af/enabled",
        available: crate::arch::cpufeature::hw_af_capable,
    },
    // FEAT_HAFDBS: the MMU sets the dirty state of clean writable entries
    // (TCR_EL1.HD; each CPU follows the switch at its next tick).
    Switch {
        flag: &crate::arch::cpufeature::HW_DIRTY,
        cmdline: "hw_dirty",
        off: "off",
        sysfs: "hw_dirty/enabled",
        available: crate::arch::cpufeature::hw_dirty_capable,
    },
    // FEAT_TLBIRANGE: ranges of user pages invalidated by TLBI RVALE1IS.
    Switch {
        flag: &crate::arch::cpufeature::TLBI_RANGE,
        cmdline: "tlbi_range",
        off: "off",
        sysfs: "tlbi_range/enabled",
        available: crate::arch::cpufeature::tlbi_range_capable,
    },
];

/// `available` for a switch of software alone.
fn always() -> bool {
    true
}

/// Turns off each switch the command line names with its off word.
pub fn apply_cmdline(cmdline: &Cmdline) {
    for switch in &SWITCHES {
        if cmdline.get(switch.cmdline) == Some(switch.off) {
            switch.flag.store(false, Ordering::Relaxed);
        }
    }
}
