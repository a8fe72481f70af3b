//! PL031 real-time clock, QEMU `virt`'s RTC at 0x0901_0000 (Arm PrimeCell
//! RTC TRM, DDI 0224): a free-running seconds counter that QEMU starts at
//! the host's UTC time. Linux: `drivers/rtc/rtc-pl031.c`. Read at boot to
//! start CLOCK_REALTIME, and by /dev/rtc0 (`fs/rtc.rs`), which may also
//! set it.

use spin::Once;
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::registers::{ReadOnly, ReadWrite};

use crate::mm::addr::{phys_to_virt, PhysAddr};

/// The PL031's register block (TRM 3.2), as far as it is used.
#[repr(C)]
struct Registers {
    /// RTCDR: the current time, seconds since the epoch (TRM 3.3.1).
    dr: ReadOnly<u32>,
    /// RTCMR: the match (alarm) value, unused here.
    _mr: ReadWrite<u32>,
    /// RTCLR: a write loads the counter with a new time (TRM 3.3.3).
    lr: ReadWrite<u32>,
}

/// The PL031's physical address, once the DTB has named it.
static BASE: Once<PhysAddr> = Once::new();

/// Records the PL031 at physical `base`, which the kernel map must cover.
pub fn init(base: PhysAddr) {
    BASE.call_once(|| base);
}

/// The registers, if there is a PL031.
fn regs() -> Option<&'static Registers> {
    let base = BASE.get()?;
    // SAFETY: `base` is the PL031 the DTB describes, mapped as device
    // memory by kmap for the kernel's lifetime; its registers are 32-bit
    // accesses with no side effects beyond the documented ones.
    Some(unsafe { &*(phys_to_virt(*base) as *const Registers) })
}

/// Seconds since the epoch; None without a PL031.
pub fn read_seconds() -> Option<u64> {
    regs().map(|r| r.dr.get() as u64)
}

/// Sets the counter to `secs` since the epoch, which must fit in 32 bits
/// (Linux: `pl031_set_time`). False without a PL031.
pub fn set_seconds(secs: u32) -> bool {
    regs().map(|r| r.lr.set(secs)).is_some()
}
