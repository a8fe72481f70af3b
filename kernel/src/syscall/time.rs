//! Clocks, sleeping and timers (Linux: `kernel/time/posix-timers.c`,
//! `kernel/time/posix-cpu-timers.c`, `kernel/time/itimer.c`,
//! `kernel/time/hrtimer.c`), on the generic timer's counter and the
//! realtime offset of `task/clock.rs`.

use alloc::sync::Arc;

use super::SysResult;
use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::task::clock::{self, NSEC_PER_SEC};
use crate::task::clock::{
    CLOCK_BOOTTIME, CLOCK_BOOTTIME_ALARM, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_REALTIME_ALARM,
    CLOCK_TAI,
};
use crate::task::cred::CAP_SYS_TIME;
use crate::task::process::{find_process, find_thread};
use crate::task::timers::{self, CpuClock, CpuSample, CpuTarget, TimerClock};
use crate::task::{capable, ntp, Thread};
use uapi::capability::CAP_WAKE_ALARM;
use uapi::signal::{SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD_ID};
use uapi::time::{CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, TIMER_ABSTIME};

/// The wall clock `clock` names: what it adds to CLOCK_MONOTONIC; EINVAL
/// for an id that names none.
fn wall(clock: i32) -> KResult<i64> {
    clock::wall_offset(clock).ok_or(Errno::EINVAL)
}

/// Nanoseconds since boot (CLOCK_MONOTONIC).
fn now_ns() -> u64 {
    clock::monotonic_ns()
}

/// Nanoseconds as a `struct timespec`, `[tv_sec, tv_nsec]`.
fn to_timespec(ns: u64) -> [i64; 2] {
    [(ns / NSEC_PER_SEC) as i64, (ns % NSEC_PER_SEC) as i64]
}

/// Signed nanoseconds as a timespec, seconds rounded down (a time before
/// 1970 has negative seconds and a positive `tv_nsec`).
fn to_timespec_signed(ns: i64) -> [i64; 2] {
    [
        ns.div_euclid(NSEC_PER_SEC as i64),
        ns.rem_euclid(NSEC_PER_SEC as i64),
    ]
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

/// `ts`, a time on wall clock `clock`, as nanoseconds of CLOCK_MONOTONIC
/// (0 for a time before boot).
fn monotonic_at(clock: i32, ts: [i64; 2]) -> KResult<u64> {
    let target = from_timespec(ts)? as i64;
    Ok(target.saturating_sub(wall(clock)?).max(0) as u64)
}

/// The counter value at `ts` on wall clock `clock`.
pub fn deadline_at_clock(clock: i32, ts: [i64; 2]) -> KResult<u64> {
    Ok(clock::ns_to_counter(monotonic_at(clock, ts)?))
}

/// The calling thread's TID.
fn my_tid() -> u32 {
    crate::task::current().user.as_ref().map_or(0, |u| u.tid)
}

/// The CPU-time clock `clock` names, if it is one (Linux:
/// `pid_for_clock`): PROCESS/THREAD_CPUTIME_ID, or the ids
/// `clock_getcpuclockid` and `pthread_getcpuclockid` make, `~pid << 3`
/// with the PERTHREAD bit (4) and PROF (0), VIRT (1) or SCHED (2); 0 in
/// the pid part means the caller. EINVAL for a bad id, an unknown pid or
/// another process's thread; `gettime` also lets a thread's TID name its
/// process, as clock_gettime does.
fn cpu_clock(clock: i32, gettime: bool) -> KResult<Option<CpuClock>> {
    const CPUCLOCK_PERTHREAD: i32 = 4;
    let (pid, thread, which) = match clock {
        CLOCK_PROCESS_CPUTIME_ID => (0, false, 2),
        CLOCK_THREAD_CPUTIME_ID => (0, true, 2),
        c if c >= 0 => return Ok(None),
        c => (!(c >> 3) as u32, c & CPUCLOCK_PERTHREAD != 0, c & 3),
    };
    let sample = match which {
        0 => CpuSample::Prof,
        1 => CpuSample::Virt,
        2 => CpuSample::Sched,
        // CLOCKFD (3): a dynamic clock's descriptor; there are none.
        _ => return Err(Errno::EINVAL),
    };
    let me = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let target = if thread {
        let t: Arc<Thread> = if pid == 0 {
            crate::task::current()
        } else {
            find_thread(pid).ok_or(Errno::EINVAL)?
        };
        // Only threads of the caller's process (Linux: same thread group).
        if !t
            .user
            .as_ref()
            .is_some_and(|u| Arc::ptr_eq(&u.process, &me))
        {
            return Err(Errno::EINVAL);
        }
        CpuTarget::Thread(Arc::downgrade(&t))
    } else if pid == 0 || (gettime && my_tid() == pid) {
        CpuTarget::Process(Arc::downgrade(&me))
    } else {
        CpuTarget::Process(Arc::downgrade(&find_process(pid).ok_or(Errno::EINVAL)?))
    };
    Ok(Some(CpuClock { target, sample }))
}

/// clock_gettime(2): the time on `clock`, as a timespec at `uts`: a wall
/// clock, or the CPU-time clock of a process or thread (see
/// `cpu_clock`).
pub fn clock_gettime(clock: i32, uts: usize) -> SysResult {
    if let Some(c) = cpu_clock(clock, true)? {
        let ns = c.now().ok_or(Errno::EINVAL)?;
        return write_user(uts, &to_timespec(ns)).map(|_| 0);
    }
    let ns = (now_ns() as i64).wrapping_add(wall(clock)?);
    write_user(uts, &to_timespec_signed(ns)).map(|_| 0)
}

/// clock_settime(2): only CLOCK_REALTIME can be set (Linux:
/// `do_sys_settimeofday64`); EINVAL for the others and for a bad time,
/// EPERM without CAP_SYS_TIME.
pub fn clock_settime(clock: i32, uts: usize) -> SysResult {
    let ts: [i64; 2] = read_user(uts)?;
    if clock != CLOCK_REALTIME {
        return Err(Errno::EINVAL);
    }
    let ns = from_timespec(ts)?;
    if !capable(CAP_SYS_TIME) {
        return Err(Errno::EPERM);
    }
    clock::set_realtime(ns.min(i64::MAX as u64) as i64);
    Ok(0)
}

/// gettimeofday(2): CLOCK_REALTIME in microseconds; the time zone, where
/// asked for, is UTC.
pub fn gettimeofday(utv: usize, utz: usize) -> SysResult {
    if utv != 0 {
        let ts = to_timespec_signed(clock::realtime_ns());
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

/// clock_getres(2): the resolution of `clock` at `uts`, if not NULL: one
/// counter period for the wall clocks; for CPU-time clocks 1 ns (the
/// exact ones) or a tick (user and system time, which ticks split)
/// (Linux: `posix_cpu_clock_getres`).
pub fn clock_getres(clock: i32, uts: usize) -> SysResult {
    let res = match cpu_clock(clock, false)? {
        Some(c) if c.sample == CpuSample::Sched => 1,
        Some(_) => NSEC_PER_SEC / crate::task::HZ,
        None => {
            wall(clock)?;
            NSEC_PER_SEC / timer::frequency()
        }
    };
    if uts != 0 {
        write_user(uts, &to_timespec(res))?;
    }
    Ok(0)
}

/// adjtimex(2): [`clock_adjtime`] of CLOCK_REALTIME.
pub fn adjtimex(utx: usize) -> SysResult {
    clock_adjtime(CLOCK_REALTIME, utx)
}

/// clock_adjtime(2) (Linux: `do_clock_adjtime`): reads and tunes the NTP
/// state of CLOCK_REALTIME through the `struct timex` at `utx` (see
/// `task/ntp.rs`); the other clocks cannot be tuned (EOPNOTSUPP), unknown
/// ids are EINVAL. Returns the clock state.
pub fn clock_adjtime(clock: i32, utx: usize) -> SysResult {
    if cpu_clock(clock, false)?.is_none() {
        wall(clock)?;
    }
    if clock != CLOCK_REALTIME {
        return Err(Errno::EOPNOTSUPP);
    }
    let mut tx = [0u8; ntp::TIMEX_SIZE];
    copy_from_user(&mut tx, utx)?;
    let state = ntp::do_adjtimex(&mut tx, capable(CAP_SYS_TIME))?;
    copy_to_user(utx, &tx)?;
    Ok(state)
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

/// timer_create(2) (Linux: `do_timer_create`): the wall clocks
/// REALTIME, MONOTONIC, BOOTTIME, TAI and the ALARM ones (which need
/// CAP_WAKE_ALARM), and CPU-time clocks; MONOTONIC_RAW and the COARSE
/// clocks have no timers (EOPNOTSUPP). SIGEV_SIGNAL, SIGEV_NONE and
/// SIGEV_THREAD_ID (a thread of the caller). A null sigevent means
/// SIGEV_SIGNAL with SIGALRM and the timer id as its value. Writes the
/// new id to `uid`.
pub fn timer_create(clock: i32, usev: usize, uid: usize) -> SysResult {
    let timer_clock = match cpu_clock(clock, false)? {
        Some(c) => TimerClock::Cpu(c),
        None => match clock {
            CLOCK_REALTIME | CLOCK_MONOTONIC | CLOCK_BOOTTIME | CLOCK_TAI => {
                TimerClock::Counter(clock)
            }
            CLOCK_REALTIME_ALARM | CLOCK_BOOTTIME_ALARM if capable(CAP_WAKE_ALARM) => {
                TimerClock::Counter(clock)
            }
            CLOCK_REALTIME_ALARM | CLOCK_BOOTTIME_ALARM => return Err(Errno::EPERM),
            c => {
                wall(c)?;
                return Err(Errno::EOPNOTSUPP);
            }
        },
    };
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
    let id = timers::timer_create(&p, timer_clock, notify)?;
    if let Err(e) = write_user(uid, &id) {
        let _ = timers::timer_delete(&p, id);
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
    let mut value = from_timespec(v[1])?;
    let absolute = flags & TIMER_ABSTIME != 0;
    if absolute && value != 0 {
        if let Some(wall_clock) = timers::timer_wall_clock(&p, id)? {
            // On CLOCK_MONOTONIC's scale; a time already past fires at once.
            value = monotonic_at(wall_clock, v[1])?.max(1);
        }
    }
    let old = timers::timer_settime(&p, id, absolute, value, interval)?;
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

/// clock_nanosleep(2): [`nanosleep`] on a wall clock, or with
/// TIMER_ABSTIME until a time on it. A CLOCK_REALTIME time becomes a
/// counter deadline at the start, so a clock_settime meanwhile does not
/// move it. The ALARM clocks need CAP_WAKE_ALARM (Linux:
/// `alarm_timer_nsleep`); CPU-time clocks are EINVAL here.
pub fn clock_nanosleep(clock: i32, flags: u32, ureq: usize, _urem: usize) -> SysResult {
    wall(clock)?;
    if matches!(clock, CLOCK_REALTIME_ALARM | CLOCK_BOOTTIME_ALARM) && !capable(CAP_WAKE_ALARM) {
        return Err(Errno::EPERM);
    }
    let ts: [i64; 2] = read_user(ureq)?;
    let deadline = if flags & TIMER_ABSTIME != 0 {
        deadline_at_clock(clock, ts)?
    } else {
        deadline_after(ts)?
    };
    sleep_until(deadline).map(|_| 0)
}
