//! Clocks and sleeping: clock_gettime, nanosleep, clock_nanosleep, and the
//! virtual counter read directly.

use crate::errno::Errno;
use crate::sys::*;
use crate::syscall;
use core::ptr;
use core::time::Duration;
pub use uapi::time::TIMER_ABSTIME;

// uapi's values, typed as this API takes them.
pub const CLOCK_REALTIME: u32 = uapi::time::CLOCK_REALTIME as u32;
pub const CLOCK_MONOTONIC: u32 = uapi::time::CLOCK_MONOTONIC as u32;
pub const CLOCK_BOOTTIME: u32 = uapi::time::CLOCK_BOOTTIME as u32;

/// `struct timespec`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

impl Timespec {
    pub fn as_nanos(&self) -> i128 {
        self.tv_sec as i128 * 1_000_000_000 + self.tv_nsec as i128
    }
}

impl From<Duration> for Timespec {
    fn from(d: Duration) -> Self {
        Timespec {
            tv_sec: d.as_secs() as i64,
            tv_nsec: d.subsec_nanos() as i64,
        }
    }
}

/// Nanoseconds on the virtual counter (CNTVCT_EL0), read without a system
/// call, as Linux's vDSO does: since power-on on faultline (under QEMU's
/// `-icount shift=0`, one nanosecond per instruction), and fine enough to
/// time one page fault.
pub fn counter_ns() -> u64 {
    let (count, freq): (u64, u64);
    // SAFETY: reads the virtual counter and its frequency, which EL0 may
    // read on Linux and on faultline; the ISB keeps the read in order.
    unsafe {
        core::arch::asm!("isb", "mrs {c}, cntvct_el0", "mrs {f}, cntfrq_el0",
                         c = out(reg) count, f = out(reg) freq, options(nomem, nostack))
    };
    (count / freq) * 1_000_000_000 + (count % freq) * 1_000_000_000 / freq
}

pub fn clock_gettime(clock: u32) -> Result<Timespec, Errno> {
    let mut ts = Timespec::default();
    // SAFETY: the kernel writes one Timespec into ts.
    unsafe { syscall!(__NR_clock_gettime, clock, &mut ts as *mut Timespec) }?;
    Ok(ts)
}

/// CLOCK_MONOTONIC in nanoseconds, for measuring intervals.
pub fn monotonic_nanos() -> i128 {
    clock_gettime(CLOCK_MONOTONIC)
        .expect("clock_gettime")
        .as_nanos()
}

pub fn nanosleep(req: &Timespec) -> Result<(), Errno> {
    // SAFETY: the kernel reads req; the remaining-time pointer is NULL.
    unsafe {
        syscall!(
            __NR_nanosleep,
            req as *const Timespec,
            ptr::null::<Timespec>()
        )
    }
    .map(drop)
}

pub fn clock_nanosleep(clock: u32, flags: u32, req: &Timespec) -> Result<(), Errno> {
    // SAFETY: the kernel reads req; the remaining-time pointer is NULL.
    unsafe {
        syscall!(
            __NR_clock_nanosleep,
            clock,
            flags,
            req as *const Timespec,
            ptr::null::<Timespec>()
        )
    }
    .map(drop)
}

/// Sleeps at least `d`, retrying if a signal cuts the sleep short.
pub fn sleep(d: Duration) {
    let deadline = monotonic_nanos() + d.as_nanos() as i128;
    loop {
        let left = deadline - monotonic_nanos();
        if left <= 0 {
            return;
        }
        let _ = nanosleep(&Duration::from_nanos(left as u64).into());
    }
}
