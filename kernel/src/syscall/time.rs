//! Clocks, sleeping and timers (Linux: `kernel/time/posix-timers.c`,
//! `kernel/time/posix-cpu-timers.c`, `kernel/time/itimer.c`,
//! `kernel/time/hrtimer.c`), on the generic timer's counter and the
//! realtime offset of `task/clock.rs`.

use alloc::sync::Arc;

use super::SysResult;
use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{read_user, write_user};
use crate::task::clock::{self, NSEC_PER_SEC};
use crate::task::process::{find_process, find_thread};
use crate::task::timers;

/// CLOCK_REALTIME: wall-clock time since the epoch; clock_settime(2)
/// moves it.
pub(super) const CLOCK_REALTIME: i32 = 0;
/// CLOCK_MONOTONIC: time since boot, which nothing sets.
pub(super) const CLOCK_MONOTONIC: i32 = 1;
/// CLOCK_PROCESS_CPUTIME_ID: CPU time of the calling process, all its
/// threads.
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
/// CLOCK_THREAD_CPUTIME_ID: CPU time of the calling thread.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
/// CLOCK_MONOTONIC_RAW: CLOCK_MONOTONIC without NTP's adjustments; the
/// same clock here.
const CLOCK_MONOTONIC_RAW: i32 = 4;
/// CLOCK_REALTIME_COARSE: CLOCK_REALTIME at tick resolution, cheaper on
/// Linux; full resolution here.
const CLOCK_REALTIME_COARSE: i32 = 5;
/// CLOCK_MONOTONIC_COARSE: CLOCK_MONOTONIC at tick resolution on Linux;
/// full resolution here.
const CLOCK_MONOTONIC_COARSE: i32 = 6;
/// CLOCK_BOOTTIME: CLOCK_MONOTONIC plus time spent suspended; the same
/// clock here.
const CLOCK_BOOTTIME: i32 = 7;
/// TIMER_ABSTIME: the time given is a time on the clock, not an interval
/// from now.
const TIMER_ABSTIME: u32 = 1;

/// Is `clock` one of the fixed clock ids, CLOCK_REALTIME to
/// CLOCK_BOOTTIME? EINVAL if not.
fn known(clock: i32) -> KResult<()> {
    match clock {
        CLOCK_REALTIME..=CLOCK_BOOTTIME => Ok(()),
        _ => Err(Errno::EINVAL),
    }
}

/// Nanoseconds since boot (CLOCK_MONOTONIC).
fn now_ns() -> u64 {
    clock::monotonic_ns()
}

/// Nanoseconds as a `struct timespec`, `[tv_sec, tv_nsec]`.
fn to_timespec(ns: u64) -> [i64; 2] {
    [(ns / NSEC_PER_SEC) as i64, (ns % NSEC_PER_SEC) as i64]
}

/// A `struct timespec` in nanoseconds, saturating; EINVAL for negative
/// seconds or `tv_nsec` outside 0..1e9 (Linux: `timespec64_valid`).
fn from_timespec(ts: [i64; 2]) -> KResult<u64> {
    if ts[0] < 0 || !(0..1_000_000_000).contains(&ts[1]) {
        return Err(Errno::EINVAL);
    }
    Ok((ts[0] as u64)
        .saturating_mul(NSEC_PER_SEC)
        .saturating_add(ts[1] as u64))
}

/// The counter value `ts` (relative) from now.
pub fn deadline_after(ts: [i64; 2]) -> KResult<u64> {
    let ns = from_timespec(ts)?;
    Ok(timer::counter().saturating_add(clock::ns_to_counter(ns)))
}

/// The counter value at `ts` on `clock` (a counter clock).
pub fn deadline_at_clock(clock: i32, ts: [i64; 2]) -> KResult<u64> {
    let target = from_timespec(ts)? as i64;
    let mono = match clock {
        CLOCK_REALTIME | CLOCK_REALTIME_COARSE => target.saturating_sub(clock::realtime_offset()),
        _ => target,
    };
    Ok(clock::ns_to_counter(mono.max(0) as u64))
}

/// The CPU-time clock `clock` names, if it is one (Linux:
/// `posix_cpu_clock_get`): PROCESS/THREAD_CPUTIME_ID, or glibc's
/// `clock_getcpuclockid` ids, `~pid << 3 | 2` (process) and
/// `pthread_getcpuclockid`'s `~tid << 3 | 6` (thread); 0 in the pid
/// part means the caller. EINVAL for a bad id or an unknown pid.
fn cpu_clock_ns(clock: i32) -> KResult<Option<u64>> {
    const CPUCLOCK_PERTHREAD: i32 = 4;
    const CPUCLOCK_SCHED: i32 = 2;
    const CLOCKFD: i32 = 3;
    match clock {
        CLOCK_PROCESS_CPUTIME_ID => {
            let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
            let (u, s) = p.cputime();
            return Ok(Some(u + s));
        }
        CLOCK_THREAD_CPUTIME_ID => return Ok(Some(crate::task::current().runtime_ns())),
        c if c >= 0 => return Ok(None),
        _ => {}
    }
    // Negative ids: CPU clocks of another process or thread. Only the
    // SCHED flavour (what glibc makes) is supported, as runtime; the
    // PROF/VIRT ones are EINVAL here.
    if clock & 3 == CLOCKFD || clock & 3 != CPUCLOCK_SCHED {
        return Err(Errno::EINVAL);
    }
    let pid = !(clock >> 3) as u32;
    if clock & CPUCLOCK_PERTHREAD != 0 {
        let t = if pid == 0 {
            crate::task::current()
        } else {
            find_thread(pid).ok_or(Errno::EINVAL)?
        };
        // Only threads of the caller's process (Linux: same thread group).
        let mine = crate::task::current_process();
        let same = t
            .user
            .as_ref()
            .zip(mine)
            .is_some_and(|(u, p)| Arc::ptr_eq(&u.process, &p));
        if !same {
            return Err(Errno::EINVAL);
        }
        return Ok(Some(t.runtime_ns()));
    }
    let p = if pid == 0 {
        crate::task::current_process().ok_or(Errno::EINVAL)?
    } else {
        find_process(pid).ok_or(Errno::EINVAL)?
    };
    let (u, s) = p.cputime();
    Ok(Some(u + s))
}

/// clock_gettime(2): the time on `clock`, as a timespec at `uts`: a fixed
/// clock, or the CPU-time clock of a process or thread (see
/// `cpu_clock_ns`).
pub fn clock_gettime(clock: i32, uts: usize) -> SysResult {
    if let Some(ns) = cpu_clock_ns(clock)? {
        return write_user(uts, &to_timespec(ns)).map(|_| 0);
    }
    known(clock)?;
    let _ = (CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE);
    let ts = match clock {
        CLOCK_REALTIME | CLOCK_REALTIME_COARSE => realtime_timespec(),
        _ => to_timespec(now_ns()),
    };
    write_user(uts, &ts).map(|_| 0)
}

/// CLOCK_REALTIME as a timespec (seconds may be negative before 1970).
fn realtime_timespec() -> [i64; 2] {
    let ns = clock::realtime_ns();
    [
        ns.div_euclid(NSEC_PER_SEC as i64),
        ns.rem_euclid(NSEC_PER_SEC as i64),
    ]
}

/// clock_settime(2): only CLOCK_REALTIME can be set (Linux:
/// `do_sys_settimeofday64`); EINVAL for the others and for a bad time.
pub fn clock_settime(clock: i32, uts: usize) -> SysResult {
    let ts: [i64; 2] = read_user(uts)?;
    if clock != CLOCK_REALTIME {
        return Err(Errno::EINVAL);
    }
    let ns = from_timespec(ts)?;
    clock::set_realtime(ns.min(i64::MAX as u64) as i64);
    Ok(0)
}

/// gettimeofday(2): CLOCK_REALTIME in microseconds; the time zone, where
/// asked for, is UTC.
pub fn gettimeofday(utv: usize, utz: usize) -> SysResult {
    if utv != 0 {
        let ts = realtime_timespec();
        write_user(utv, &[ts[0], ts[1] / 1000])?;
    }
    if utz != 0 {
        write_user(utz, &[0i32; 2])?;
    }
    Ok(0)
}

/// Seconds since boot, for sysinfo.
pub fn uptime_secs() -> u64 {
    now_ns() / NSEC_PER_SEC
}

/// Nanoseconds since boot (/proc/uptime).
pub fn uptime_ns() -> u64 {
    now_ns()
}

/// clock_getres(2): the resolution of `clock` at `uts`, if not NULL: one
/// counter period for the fixed clocks, 1 ns for CPU-time clocks.
pub fn clock_getres(clock: i32, uts: usize) -> SysResult {
    let res = if cpu_clock_ns(clock)?.is_some() {
        1
    } else {
        known(clock)?;
        NSEC_PER_SEC / timer::frequency()
    };
    if uts != 0 {
        write_user(uts, &to_timespec(res))?;
    }
    Ok(0)
}

/// A `struct timeval` (seconds, microseconds) to nanoseconds; EINVAL out
/// of range (Linux: `timeval_valid`).
fn from_timeval(tv: [i64; 2]) -> KResult<u64> {
    if tv[0] < 0 || !(0..1_000_000).contains(&tv[1]) {
        return Err(Errno::EINVAL);
    }
    Ok((tv[0] as u64)
        .saturating_mul(NSEC_PER_SEC)
        .saturating_add(tv[1] as u64 * 1000))
}

/// Nanoseconds to a timeval, rounding up so a running timer never reads 0.
fn to_timeval(ns: u64) -> [i64; 2] {
    let us = ns.div_ceil(1000);
    [(us / 1_000_000) as i64, (us % 1_000_000) as i64]
}

/// getitimer(2).
pub fn getitimer(which: i32, uval: usize) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let (value, interval) = timers::getitimer(&p, which as u32)?;
    write_user(uval, &[to_timeval(interval), to_timeval(value)]).map(|_| 0)
}

/// setitimer(2): `struct itimerval { it_interval; it_value; }`; a null new
/// value disarms, as on Linux.
pub fn setitimer(which: i32, unew: usize, uold: usize) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let new = if unew != 0 {
        let v: [[i64; 2]; 2] = read_user(unew)?;
        (from_timeval(v[1])?, from_timeval(v[0])?)
    } else {
        (0, 0)
    };
    if which < 0 {
        return Err(Errno::EINVAL);
    }
    let (value, interval) = timers::setitimer(&p, which as u32, new)?;
    if uold != 0 {
        write_user(uold, &[to_timeval(interval), to_timeval(value)])?;
    }
    Ok(0)
}

/// timer_create(2) (Linux: `do_timer_create`): CLOCK_REALTIME, MONOTONIC
/// and BOOTTIME; SIGEV_SIGNAL, SIGEV_NONE and SIGEV_THREAD_ID (a thread of
/// the caller). A null sigevent means SIGEV_SIGNAL with SIGALRM and the
/// timer id as its value. Writes the new id to `uid`.
pub fn timer_create(clock: i32, usev: usize, uid: usize) -> SysResult {
    const SIGEV_SIGNAL: i32 = 0;
    const SIGEV_NONE: i32 = 1;
    const SIGEV_THREAD_ID: i32 = 4;
    if !matches!(clock, CLOCK_REALTIME | CLOCK_MONOTONIC | CLOCK_BOOTTIME) {
        // CPU-time clocks exist (clock_gettime) but have no timers here.
        return Err(Errno::EINVAL);
    }
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let notify = if usev == 0 {
        None
    } else {
        // struct sigevent: sigev_value (8), sigev_signo, sigev_notify, then
        // the union whose first int is the thread id (64 bytes in all).
        let sev: [u8; 64] = read_user(usev)?;
        let word = |at: usize| i32::from_le_bytes([sev[at], sev[at + 1], sev[at + 2], sev[at + 3]]);
        let value = u64::from_le_bytes(sev[..8].try_into().map_err(|_| Errno::EFAULT)?);
        let (signo, how, tid) = (word(8), word(12), word(16));
        let sig_ok = signo > 0 && signo as u32 <= crate::task::signal_abi::NSIG;
        Some(match how {
            SIGEV_NONE => timers::Notify::None,
            SIGEV_SIGNAL if sig_ok => timers::Notify::Signal {
                sig: signo as u32,
                value,
                tid: None,
            },
            SIGEV_THREAD_ID if sig_ok => {
                let t = find_thread(tid.max(0) as u32).ok_or(Errno::EINVAL)?;
                if !t.user.as_ref().is_some_and(|u| Arc::ptr_eq(&u.process, &p)) {
                    return Err(Errno::EINVAL);
                }
                timers::Notify::Signal {
                    sig: signo as u32,
                    value,
                    tid: Some(tid as u32),
                }
            }
            _ => return Err(Errno::EINVAL),
        })
    };
    let id = timers::timer_create(&p, clock, notify.unwrap_or(timers::Notify::None))?;
    if notify.is_none() {
        let _ = timers::timer_delete(&p, id);
        let id2 = timers::timer_create(
            &p,
            clock,
            timers::Notify::Signal {
                sig: crate::task::signal_abi::SIGALRM,
                value: id as u64,
                tid: None,
            },
        )?;
        return finish_create(&p, id2, uid);
    }
    finish_create(&p, id, uid)
}

/// Stores timer_create's new timer `id` at `uid`, deleting the timer
/// again if that faults.
fn finish_create(p: &Arc<crate::task::process::Process>, id: i32, uid: usize) -> SysResult {
    if let Err(e) = write_user(uid, &id) {
        let _ = timers::timer_delete(p, id);
        return Err(e);
    }
    Ok(0)
}

/// Writes a (value, interval) pair as `struct itimerspec { it_interval;
/// it_value; }`.
fn write_itimerspec(uaddr: usize, (value, interval): timers::ItimerVal) -> KResult<()> {
    write_user(uaddr, &[to_timespec(interval), to_timespec(value)])
}

/// timer_settime(2): TIMER_ABSTIME makes `it_value` a time on the timer's
/// clock; a zero `it_value` disarms.
pub fn timer_settime(id: i32, flags: u32, unew: usize, uold: usize) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let v: [[i64; 2]; 2] = read_user(unew)?;
    let interval = from_timespec(v[0])?;
    let value = from_timespec(v[1])?;
    let deadline = if value == 0 {
        0
    } else if flags & TIMER_ABSTIME != 0 {
        deadline_at_clock(timers::timer_clock(&p, id)?, v[1])?.max(1)
    } else {
        timer::counter() + clock::ns_to_counter(value).max(1)
    };
    let old = timers::timer_settime(&p, id, deadline, clock::ns_to_counter(interval))?;
    if uold != 0 {
        write_itimerspec(uold, old)?;
    }
    Ok(0)
}

/// timer_gettime(2): the time to timer `id`'s next expiry and its
/// interval, as a `struct itimerspec` at `ucur`.
pub fn timer_gettime(id: i32, ucur: usize) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    write_itimerspec(ucur, timers::timer_gettime(&p, id)?).map(|_| 0)
}

/// timer_getoverrun(2): the overrun count timer `id`'s last delivered
/// signal carried.
pub fn timer_getoverrun(id: i32) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    Ok(timers::timer_getoverrun(&p, id)? as i64)
}

/// timer_delete(2): disarms and removes timer `id`.
pub fn timer_delete(id: i32) -> SysResult {
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    timers::timer_delete(&p, id).map(|_| 0)
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

/// nanosleep(2): sleeps for the timespec at `ureq`; EINTR on a signal,
/// without writing the time left to `_urem`.
pub fn nanosleep(ureq: usize, _urem: usize) -> SysResult {
    let ts: [i64; 2] = read_user(ureq)?;
    sleep_until(deadline_after(ts)?).map(|_| 0)
}

/// clock_nanosleep(2): [`nanosleep`] on `clock`, or with TIMER_ABSTIME
/// until a time on it. A CLOCK_REALTIME time becomes a counter deadline
/// at the start, so a clock_settime meanwhile does not move it.
pub fn clock_nanosleep(clock: i32, flags: u32, ureq: usize, _urem: usize) -> SysResult {
    known(clock)?;
    let ts: [i64; 2] = read_user(ureq)?;
    let deadline = if flags & TIMER_ABSTIME != 0 {
        deadline_at_clock(clock, ts)?
    } else {
        deadline_after(ts)?
    };
    sleep_until(deadline).map(|_| 0)
}
