//! Clocks and sleeping (Linux: `kernel/time/posix-timers.c`,
//! `kernel/time/hrtimer.c`), on the generic timer's counter.

use super::SysResult;
use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{read_user, write_user};

const CLOCK_REALTIME: i32 = 0;
const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
const CLOCK_MONOTONIC_RAW: i32 = 4;
const CLOCK_REALTIME_COARSE: i32 = 5;
const CLOCK_MONOTONIC_COARSE: i32 = 6;
const CLOCK_BOOTTIME: i32 = 7;
const TIMER_ABSTIME: u32 = 1;

fn known(clock: i32) -> KResult<()> {
    match clock {
        CLOCK_REALTIME..=CLOCK_BOOTTIME => Ok(()),
        _ => Err(Errno::EINVAL),
    }
}

/// Nanoseconds since boot. With no real-time clock read, REALTIME is the
/// same (the epoch is the boot).
fn now_ns() -> u64 {
    let (c, f) = (timer::counter(), timer::frequency());
    // Whole seconds and the rest apart: 64-bit divides, no 128-bit
    // arithmetic (the rest times 10^9 fits while f < 18 GHz).
    (c / f) * 1_000_000_000 + (c % f) * 1_000_000_000 / f
}

fn to_timespec(ns: u64) -> [i64; 2] {
    [(ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64]
}

fn from_timespec(ts: [i64; 2]) -> KResult<u64> {
    if ts[0] < 0 || !(0..1_000_000_000).contains(&ts[1]) {
        return Err(Errno::EINVAL);
    }
    Ok(ts[0] as u64 * 1_000_000_000 + ts[1] as u64)
}

/// The counter value `ts` (relative) from now.
pub fn deadline_after(ts: [i64; 2]) -> KResult<u64> {
    let ns = from_timespec(ts)? as u128;
    Ok(timer::counter().saturating_add((ns * timer::frequency() as u128 / 1_000_000_000) as u64))
}

/// The counter value at `ts`, a time on CLOCK_MONOTONIC, which is also
/// CLOCK_REALTIME here (see `now_ns`).
pub fn deadline_at(ts: [i64; 2]) -> KResult<u64> {
    let target = from_timespec(ts)? as u128;
    Ok((target * timer::frequency() as u128 / 1_000_000_000) as u64)
}

pub fn clock_gettime(clock: i32, uts: usize) -> SysResult {
    known(clock)?;
    let _ = (
        CLOCK_PROCESS_CPUTIME_ID,
        CLOCK_THREAD_CPUTIME_ID,
        CLOCK_MONOTONIC_RAW,
        CLOCK_REALTIME_COARSE,
        CLOCK_MONOTONIC_COARSE,
        CLOCK_MONOTONIC,
    );
    write_user(uts, &to_timespec(now_ns())).map(|_| 0)
}

/// gettimeofday(2): CLOCK_REALTIME in microseconds; the time zone, where
/// asked for, is UTC.
pub fn gettimeofday(utv: usize, utz: usize) -> SysResult {
    let ns = now_ns();
    if utv != 0 {
        write_user(
            utv,
            &[
                (ns / 1_000_000_000) as i64,
                (ns % 1_000_000_000 / 1000) as i64,
            ],
        )?;
    }
    if utz != 0 {
        write_user(utz, &[0i32; 2])?;
    }
    Ok(0)
}

/// CLOCK_REALTIME in nanoseconds, for inode timestamps (Linux:
/// `ktime_get_real_ts64`).
pub fn realtime_ns() -> u64 {
    now_ns()
}

/// Seconds since boot, for sysinfo.
pub fn uptime_secs() -> u64 {
    now_ns() / 1_000_000_000
}

pub fn clock_getres(clock: i32, uts: usize) -> SysResult {
    known(clock)?;
    if uts != 0 {
        write_user(uts, &to_timespec(1_000_000_000 / timer::frequency()))?;
    }
    Ok(0)
}

/// Sleeps until the counter reaches `deadline`; EINTR on a signal.
fn sleep_until(deadline: u64) -> KResult<()> {
    while timer::counter() < deadline {
        if crate::task::signal::signal_pending() {
            return Err(Errno::EINTR);
        }
        crate::task::sleep_until(deadline, crate::task::signal::signal_pending);
    }
    Ok(())
}

pub fn nanosleep(ureq: usize, _urem: usize) -> SysResult {
    let ts: [i64; 2] = read_user(ureq)?;
    sleep_until(deadline_after(ts)?).map(|_| 0)
}

pub fn clock_nanosleep(clock: i32, flags: u32, ureq: usize, _urem: usize) -> SysResult {
    known(clock)?;
    let ts: [i64; 2] = read_user(ureq)?;
    let deadline = if flags & TIMER_ABSTIME != 0 {
        deadline_at(ts)?
    } else {
        deadline_after(ts)?
    };
    sleep_until(deadline).map(|_| 0)
}
