//! The kernel's NTP state, what adjtimex(2) reads and sets (Linux:
//! `kernel/time/ntp.c` `__do_adjtimex`, `process_adjtimex_modes`, and
//! `do_adjtimex` in `kernel/time/timekeeping.c`): the clock's status,
//! error estimates, time constant, frequency and tick, the TAI offset,
//! and ADJ_SETOFFSET's step of CLOCK_REALTIME.
//!
//! Where we simplify: no phase-locked loop. A frequency, an offset to
//! slew or a tick length is recorded and reported back, but the clock
//! keeps running at the counter's rate; ADJ_SETOFFSET and ADJ_TAI do
//! change the clocks.

use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::clock::{self, NSEC_PER_SEC};

// `modes` bits (`include/uapi/linux/timex.h`).
/// ADJ_OFFSET: `offset` is a phase offset to slew by.
const ADJ_OFFSET: u32 = 0x0001;
/// ADJ_FREQUENCY: `freq` is the frequency offset (ppm << 16).
const ADJ_FREQUENCY: u32 = 0x0002;
/// ADJ_MAXERROR: `maxerror` is the maximum error, in microseconds.
const ADJ_MAXERROR: u32 = 0x0004;
/// ADJ_ESTERROR: `esterror` is the estimated error, in microseconds.
const ADJ_ESTERROR: u32 = 0x0008;
/// ADJ_STATUS: `status` holds new STA_* bits.
const ADJ_STATUS: u32 = 0x0010;
/// ADJ_TIMECONST: `constant` is the PLL time constant.
const ADJ_TIMECONST: u32 = 0x0020;
/// ADJ_TAI: `constant` is the new TAI offset, in seconds.
const ADJ_TAI: u32 = 0x0080;
/// ADJ_SETOFFSET: `time` is a step to add to CLOCK_REALTIME.
const ADJ_SETOFFSET: u32 = 0x0100;
/// ADJ_MICRO: times are in microseconds from now on.
const ADJ_MICRO: u32 = 0x1000;
/// ADJ_NANO: times are in nanoseconds from now on.
const ADJ_NANO: u32 = 0x2000;
/// ADJ_TICK: `tick` is the length of a tick, in microseconds.
const ADJ_TICK: u32 = 0x4000;
/// ADJ_OFFSET_SINGLESHOT: adjtime(3)'s old-style offset.
const ADJ_OFFSET_SINGLESHOT: u32 = 0x8001;
/// ADJ_OFFSET_SS_READ: adjtime(3) asking for the offset left.
const ADJ_OFFSET_READONLY: u32 = 0x2000;
/// The bits that mean an adjtime(3) call (ADJ_OFFSET_SINGLESHOT less
/// ADJ_OFFSET).
const ADJ_ADJTIME: u32 = 0x8000;

// `status` bits.
/// STA_PLL..STA_CLK: the status bits a caller may set; the rest are the
/// kernel's, read-only (Linux: `STA_RONLY`).
const STA_RONLY: i32 = 0x0100 | 0x0200 | 0x0400 | 0x0800 | 0x1000 | 0x2000 | 0x4000 | 0x8000;
/// STA_UNSYNC: the clock is not synchronised, as at boot.
const STA_UNSYNC: i32 = 0x0040;
/// STA_NANO: times are in nanoseconds.
const STA_NANO: i32 = 0x2000;

/// TIME_OK: the clock is synchronised, no leap second pending.
const TIME_OK: i64 = 0;
/// TIME_ERROR: the clock is not synchronised (STA_UNSYNC).
const TIME_ERROR: i64 = 5;

/// NTP_PHASE_LIMIT: the largest error there is, in microseconds (16 s).
const NTP_PHASE_LIMIT: i64 = 16_000_000;
/// MAXTC: the largest time constant.
const MAXTC: i64 = 10;
/// The largest TAI offset ADJ_TAI takes (Linux: `MAX_TAI_OFFSET`).
const MAX_TAI_OFFSET: i64 = 100_000;
/// 500 ppm in `freq`'s units, scaled 2^16: the largest frequency offset
/// and what adjtimex reports as `tolerance`.
const MAXFREQ_PPM16: i64 = 500 << 16;
/// USER_HZ's tick in microseconds, what `tick` says at boot.
const USER_TICK_USEC: i64 = 1_000_000 / 100;

/// Bytes of `struct __kernel_timex` on a 64-bit kernel.
pub const TIMEX_SIZE: usize = 208;

/// The NTP variables (Linux: the `time_*` globals of `ntp.c`).
struct Ntp {
    /// STA_* bits (`time_status`).
    status: i32,
    /// Maximum error, microseconds (`time_maxerror`).
    maxerror: i64,
    /// Estimated error, microseconds (`time_esterror`).
    esterror: i64,
    /// PLL time constant (`time_constant`).
    constant: i64,
    /// Frequency offset, ppm << 16, as reported (`time_freq` scaled).
    freq: i64,
    /// The phase offset last asked for, in `offset`'s units.
    offset: i64,
    /// Tick length in microseconds (`tick_usec`).
    tick: i64,
    /// adjtime(3)'s offset left to slew, microseconds (`time_adjust`).
    adjust: i64,
}

/// The state at boot (Linux: `ntp_clear`, `ntp_init`).
static NTP: SpinLock<Ntp> = SpinLock::new(Ntp {
    status: STA_UNSYNC,
    maxerror: NTP_PHASE_LIMIT,
    esterror: NTP_PHASE_LIMIT,
    constant: 2,
    freq: 0,
    offset: 0,
    tick: USER_TICK_USEC,
    adjust: 0,
});

/// A `struct __kernel_timex`'s fields at their byte offsets.
mod field {
    /// `modes` (u32).
    pub const MODES: usize = 0;
    /// `offset` (i64).
    pub const OFFSET: usize = 8;
    /// `freq` (i64).
    pub const FREQ: usize = 16;
    /// `maxerror` (i64).
    pub const MAXERROR: usize = 24;
    /// `esterror` (i64).
    pub const ESTERROR: usize = 32;
    /// `status` (i32).
    pub const STATUS: usize = 40;
    /// `constant` (i64).
    pub const CONSTANT: usize = 48;
    /// `precision` (i64).
    pub const PRECISION: usize = 56;
    /// `tolerance` (i64).
    pub const TOLERANCE: usize = 64;
    /// `time.tv_sec` (i64).
    pub const TIME_SEC: usize = 72;
    /// `time.tv_usec` (i64; nanoseconds under STA_NANO).
    pub const TIME_USEC: usize = 80;
    /// `tick` (i64).
    pub const TICK: usize = 88;
    /// `tai` (i32).
    pub const TAI: usize = 160;
}

/// The `i64` at byte `at` of a timex.
fn get64(t: &[u8; TIMEX_SIZE], at: usize) -> i64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&t[at..at + 8]);
    i64::from_ne_bytes(b)
}

/// The `i32` at byte `at` of a timex.
fn get32(t: &[u8; TIMEX_SIZE], at: usize) -> i32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&t[at..at + 4]);
    i32::from_ne_bytes(b)
}

/// Stores `v` at byte `at` of a timex.
fn put64(t: &mut [u8; TIMEX_SIZE], at: usize, v: i64) {
    t[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Stores `v` at byte `at` of a timex.
fn put32(t: &mut [u8; TIMEX_SIZE], at: usize, v: i32) {
    t[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

/// adjtimex(2) on CLOCK_REALTIME, `t` the caller's `struct timex`, which
/// is rewritten with the state after the change (Linux: `do_adjtimex`):
/// EINVAL for a bad tick, step or frequency, EPERM for a change without
/// CAP_SYS_TIME (`may_set`). Returns the clock state, TIME_ERROR while
/// unsynchronised.
pub fn do_adjtimex(t: &mut [u8; TIMEX_SIZE], may_set: bool) -> KResult<i64> {
    let modes = get32(t, field::MODES) as u32;
    // timekeeping_validate_timex.
    if modes & ADJ_ADJTIME != 0 {
        if modes & ADJ_OFFSET_SINGLESHOT != ADJ_OFFSET_SINGLESHOT {
            return Err(Errno::EINVAL);
        }
        if modes & ADJ_OFFSET_READONLY == 0 && !may_set {
            return Err(Errno::EPERM);
        }
    } else {
        if modes != 0 && !may_set {
            return Err(Errno::EPERM);
        }
        let tick = get64(t, field::TICK);
        if modes & ADJ_TICK != 0 && !(900_000 / 100..=1_100_000 / 100).contains(&tick) {
            return Err(Errno::EINVAL);
        }
    }
    let step = (get64(t, field::TIME_SEC), get64(t, field::TIME_USEC));
    if modes & ADJ_SETOFFSET != 0 {
        let limit = if modes & ADJ_NANO != 0 {
            NSEC_PER_SEC as i64
        } else {
            1_000_000
        };
        if !(0..limit).contains(&step.1) {
            return Err(Errno::EINVAL);
        }
    }
    // Linux: `PPM_SCALE` times `freq` must not overflow.
    const PPM_SCALE: i64 = 65_536_000;
    if modes & ADJ_FREQUENCY != 0 && get64(t, field::FREQ).checked_mul(PPM_SCALE).is_none() {
        return Err(Errno::EINVAL);
    }
    if modes & ADJ_SETOFFSET != 0 {
        let nsec = if modes & ADJ_NANO != 0 {
            step.1
        } else {
            step.1 * 1000
        };
        clock::inject_offset(
            step.0
                .saturating_mul(NSEC_PER_SEC as i64)
                .saturating_add(nsec),
        );
    }
    let mut ntp = NTP.lock();
    if modes & ADJ_ADJTIME != 0 {
        let left = ntp.adjust;
        if modes & ADJ_OFFSET_READONLY == 0 {
            ntp.adjust = get64(t, field::OFFSET);
        }
        put64(t, field::OFFSET, left);
    } else {
        process_modes(&mut ntp, t, modes);
        put64(t, field::OFFSET, ntp.offset);
    }
    let state = if ntp.status & STA_UNSYNC != 0 {
        TIME_ERROR
    } else {
        TIME_OK
    };
    put64(t, field::FREQ, ntp.freq);
    put64(t, field::MAXERROR, ntp.maxerror);
    put64(t, field::ESTERROR, ntp.esterror);
    put32(t, field::STATUS, ntp.status);
    put64(t, field::CONSTANT, ntp.constant);
    put64(t, field::PRECISION, 1);
    put64(t, field::TOLERANCE, MAXFREQ_PPM16);
    put64(t, field::TICK, ntp.tick);
    put32(t, field::TAI, clock::tai_offset() as i32);
    let now = clock::realtime_ns();
    let nsec = now.rem_euclid(NSEC_PER_SEC as i64);
    put64(t, field::TIME_SEC, now.div_euclid(NSEC_PER_SEC as i64));
    let frac = if ntp.status & STA_NANO != 0 {
        nsec
    } else {
        nsec / 1000
    };
    put64(t, field::TIME_USEC, frac);
    Ok(state)
}

/// Applies the ntp_adjtime modes of `t` (Linux: `process_adjtimex_modes`).
fn process_modes(ntp: &mut Ntp, t: &[u8; TIMEX_SIZE], modes: u32) {
    if modes & ADJ_STATUS != 0 {
        let asked = get32(t, field::STATUS);
        ntp.status = (ntp.status & STA_RONLY) | (asked & !STA_RONLY);
    }
    if modes & ADJ_NANO != 0 {
        ntp.status |= STA_NANO;
    }
    if modes & ADJ_MICRO != 0 {
        ntp.status &= !STA_NANO;
    }
    if modes & ADJ_FREQUENCY != 0 {
        ntp.freq = get64(t, field::FREQ).clamp(-MAXFREQ_PPM16, MAXFREQ_PPM16);
    }
    if modes & ADJ_MAXERROR != 0 {
        ntp.maxerror = get64(t, field::MAXERROR).clamp(0, NTP_PHASE_LIMIT);
    }
    if modes & ADJ_ESTERROR != 0 {
        ntp.esterror = get64(t, field::ESTERROR).clamp(0, NTP_PHASE_LIMIT);
    }
    let constant = get64(t, field::CONSTANT);
    if modes & ADJ_TIMECONST != 0 {
        let c = constant.clamp(0, MAXTC);
        let c = if ntp.status & STA_NANO == 0 { c + 4 } else { c };
        ntp.constant = c.clamp(0, MAXTC);
    }
    if modes & ADJ_TAI != 0 && (0..=MAX_TAI_OFFSET).contains(&constant) {
        clock::set_tai_offset(constant);
    }
    if modes & ADJ_OFFSET != 0 {
        ntp.offset = get64(t, field::OFFSET);
    }
    if modes & ADJ_TICK != 0 {
        ntp.tick = get64(t, field::TICK);
    }
}
