//! PL031 real-time clock, QEMU `virt`'s RTC at 0x0901_0000 (Arm PrimeCell
//! RTC TRM, DDI 0224): a free-running seconds counter that QEMU starts at
//! the host's UTC time. Linux: `drivers/rtc/rtc-pl031.c`. Only read, once
//! at boot, to start CLOCK_REALTIME.

use tock_registers::interfaces::Readable;
use tock_registers::registers::ReadOnly;

use crate::mm::addr::{phys_to_virt, PhysAddr};

/// The PL031's register block (TRM 3.2); only its first register, RTCDR,
/// is read.
#[repr(C)]
struct Registers {
    /// RTCDR: the current time, seconds since the epoch (TRM 3.3.1).
    dr: ReadOnly<u32>,
}

/// Seconds since the epoch from the PL031 at physical `base`, which the
/// kernel map must cover.
pub fn read_seconds(base: PhysAddr) -> u64 {
    // SAFETY: `base` is the PL031 the DTB describes, mapped as device
    // memory by kmap; RTCDR is a side-effect-free 32-bit read.
    let regs = unsafe { &*(phys_to_virt(base) as *const Registers) };
    regs.dr.get() as u64
}
