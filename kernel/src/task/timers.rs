//! Interval timers and POSIX timers (Linux: `kernel/time/itimer.c`,
//! `kernel/time/posix-timers.c`, and the ITIMER_VIRTUAL/ITIMER_PROF part of
//! `kernel/time/posix-cpu-timers.c`).
//!
//! ITIMER_REAL and the POSIX timers on CLOCK_REALTIME, CLOCK_MONOTONIC and
//! CLOCK_BOOTTIME hold a deadline on the counter; processes with one armed
//! are listed in `ARMED`, and the timer tick fires what is due, so a timer
//! fires on the first tick at or after its time (1/HZ resolution; Linux
//! uses hrtimers). ITIMER_VIRTUAL and ITIMER_PROF count down by one tick's
//! worth of CPU time whenever a tick finds the process running (in user
//! space for VIRTUAL), as Linux's tick-based accounting does.
//!
//! Where we simplify: an absolute CLOCK_REALTIME timer is converted to the
//! counter when armed, so a later clock_settime does not move it; POSIX
//! timers on CPU-time clocks are not supported (EINVAL).

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::clock::{self, NSEC_PER_SEC};
use crate::task::process::{find_thread, Process};
use crate::task::signal;
use crate::task::signal_abi::{SigInfo, SIGALRM, SIGPROF, SIGVTALRM};

/// ITIMER_REAL: counts down in real time, SIGALRM when it expires.
pub const ITIMER_REAL: u32 = 0;
/// ITIMER_VIRTUAL: counts down the process's user CPU time, SIGVTALRM
/// when it expires.
pub const ITIMER_VIRTUAL: u32 = 1;
/// ITIMER_PROF: counts down the process's user and system CPU time,
/// SIGPROF when it expires.
pub const ITIMER_PROF: u32 = 2;

/// The most POSIX timers one process may hold (Linux bounds them by
/// RLIMIT_SIGPENDING); more is EAGAIN.
const MAX_POSIX_TIMERS: usize = 1024;

/// An interval timer on CPU time: nanoseconds left (0: disarmed) and the
/// interval it re-arms with.
#[derive(Copy, Clone, Default)]
struct CpuTimer {
    /// Nanoseconds of CPU time until it fires; 0 when disarmed.
    left: u64,
    /// Nanoseconds it re-arms with when it fires; 0 for a one-shot timer.
    interval: u64,
}

/// How a POSIX timer tells the process it expired (`struct sigevent`).
#[derive(Copy, Clone)]
pub enum Notify {
    /// SIGEV_NONE: nothing; timer_gettime shows it.
    None,
    /// SIGEV_SIGNAL (any thread) or SIGEV_THREAD_ID (thread `tid`).
    Signal {
        /// `sigev_signo`: the signal to send.
        sig: u32,
        /// `sigev_value`, handed to the handler as `si_value`.
        value: u64,
        /// SIGEV_THREAD_ID's thread; None for any thread of the process. No
        /// signal is sent once that thread has gone.
        tid: Option<u32>,
    },
}

/// One POSIX timer (Linux: `struct k_itimer`).
struct PosixTimer {
    /// The clock it was created on (its absolute times are on it).
    clock: i32,
    /// What an expiry does (`sigev_notify`).
    notify: Notify,
    /// Counter deadline; 0 when disarmed.
    deadline: u64,
    /// Re-arm interval in counter ticks; 0 for a one-shot timer.
    interval: u64,
    /// Its signal is queued and not yet delivered: expiries meanwhile only
    /// count as overruns (Linux: `it_sigqueue_seq`, `it_overrun`).
    pending: bool,
    /// Expiries missed since the signal was queued (Linux: `it_overrun`),
    /// moved to `overrun_last` when it is delivered.
    overrun: u64,
    /// The overrun count the last delivered signal carried (Linux:
    /// `it_overrun_last`), what timer_getoverrun(2) returns.
    overrun_last: i32,
}

/// A process's timers (Linux: `signal->real_timer`, `it[]`,
/// `posix_timers`). A fork child starts with none; exec keeps the
/// interval timers and deletes the POSIX ones.
#[derive(Default)]
pub struct ProcessTimers {
    /// ITIMER_REAL: counter deadline (0: disarmed) and interval in counter
    /// ticks.
    real: (u64, u64),
    /// ITIMER_VIRTUAL and ITIMER_PROF.
    cpu: [CpuTimer; 2],
    /// The POSIX timers, by the id timer_create(2) returned (Linux:
    /// `signal->posix_timers`).
    posix: BTreeMap<i32, PosixTimer>,
}

impl ProcessTimers {
    /// The earliest counter deadline, if any timer on the counter is armed.
    fn next_deadline(&self) -> Option<u64> {
        let real = (self.real.0 != 0).then_some(self.real.0);
        let posix = self
            .posix
            .values()
            .filter(|t| t.deadline != 0)
            .map(|t| t.deadline)
            .min();
        match (real, posix) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Processes that may have a counter timer armed.
static ARMED: SpinLock<Vec<Weak<Process>>> = SpinLock::new(Vec::new());
/// The earliest deadline among them (u64::MAX: none), so a tick with
/// nothing due costs one load.
static NEXT: AtomicU64 = AtomicU64::new(u64::MAX);
/// One CPU at a time runs the expired timers.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// `p` has armed a counter timer for `deadline`: make the tick look at it.
fn watch(p: &Arc<Process>, deadline: u64) {
    let mut armed = ARMED.lock();
    if !armed
        .iter()
        .any(|w| core::ptr::eq(w.as_ptr(), Arc::as_ptr(p)))
    {
        armed.push(Arc::downgrade(p));
    }
    NEXT.fetch_min(deadline, Ordering::AcqRel);
}

/// From the timer tick: fire every counter timer that is due (Linux:
/// `hrtimer_interrupt` running `it_real_fn` and `posix_timer_fn`).
pub fn run_expired() {
    let now = timer::counter();
    if now < NEXT.load(Ordering::Acquire) || RUNNING.swap(true, Ordering::Acquire) {
        return;
    }
    let mut armed = ARMED.lock();
    let mut next = u64::MAX;
    armed.retain(|w| {
        let Some(p) = w.upgrade() else { return false };
        let mut timers = p.timers.lock();
        fire_due(&p, &mut timers, now);
        match timers.next_deadline() {
            Some(d) => {
                next = next.min(d);
                true
            }
            None => false,
        }
    });
    NEXT.store(next, Ordering::Release);
    drop(armed);
    RUNNING.store(false, Ordering::Release);
}

/// The deadline after `deadline` passed at `now`, for an `interval`
/// timer, and how many periods were skipped (Linux: `hrtimer_forward`).
fn forward(deadline: u64, interval: u64, now: u64) -> (u64, u64) {
    let missed = (now - deadline) / interval;
    (deadline + (missed + 1) * interval, missed)
}

/// Fires `p`'s counter timers that are due at `now`, under its timers'
/// lock (Linux: `it_real_fn`, `posix_timer_fn`): SIGALRM for ITIMER_REAL,
/// each POSIX timer's signal, or an overrun while its last signal is
/// still pending. Periodic timers move on to their next deadline after
/// `now`.
fn fire_due(p: &Arc<Process>, t: &mut ProcessTimers, now: u64) {
    let (deadline, interval) = t.real;
    if deadline != 0 && deadline <= now {
        t.real.0 = if interval != 0 {
            forward(deadline, interval, now).0
        } else {
            0
        };
        signal::send_to_process(p, SIGALRM, signal::SigSource::Kernel);
    }
    for (&id, timer) in t.posix.iter_mut() {
        if timer.deadline == 0 || timer.deadline > now {
            continue;
        }
        let missed = if timer.interval != 0 {
            let (d, missed) = forward(timer.deadline, timer.interval, now);
            timer.deadline = d;
            missed
        } else {
            timer.deadline = 0;
            0
        };
        let Notify::Signal { sig, value, tid } = timer.notify else {
            continue;
        };
        if timer.pending {
            timer.overrun += 1 + missed;
            continue;
        }
        timer.overrun = missed;
        let info = SigInfo::timer(sig, id, 0, value);
        let queued = match tid.and_then(find_thread) {
            Some(thread) => signal::queue_for_thread(&thread, sig, info),
            None if tid.is_some() => false,
            None => signal::queue_signal(p, sig, info),
        };
        // A signal that was ignored away never comes back to clear this.
        timer.pending = queued;
    }
}

/// A POSIX timer's signal is being delivered: the overrun count it carries
/// (Linux: `posixtimer_deliver_signal`).
pub fn timer_signal_dequeued(p: &Process, id: i32) -> i32 {
    let mut timers = p.timers.lock();
    let Some(t) = timers.posix.get_mut(&id) else {
        return 0;
    };
    t.pending = false;
    t.overrun_last = t.overrun.min(i32::MAX as u64) as i32;
    t.overrun = 0;
    t.overrun_last
}

/// From the timer tick, for the process of the running thread: count
/// ITIMER_VIRTUAL (if the tick came from user space) and ITIMER_PROF
/// down (Linux: `check_cpu_itimer`).
pub fn cpu_tick(p: &Arc<Process>, user: bool) {
    let tick_ns = NSEC_PER_SEC / crate::task::HZ;
    let mut expired = [false; 2];
    {
        let mut timers = p.timers.lock();
        for (i, t) in timers.cpu.iter_mut().enumerate() {
            if t.left == 0 || (i == 0 && !user) {
                continue;
            }
            if t.left > tick_ns {
                t.left -= tick_ns;
            } else {
                t.left = t.interval;
                expired[i] = true;
            }
        }
    }
    for (i, sig) in [SIGVTALRM, SIGPROF].into_iter().enumerate() {
        if expired[i] {
            signal::send_to_process(p, sig, signal::SigSource::Kernel);
        }
    }
}

/// An interval timer's (value, interval) in nanoseconds.
pub type ItimerVal = (u64, u64);

/// getitimer(2) for the process.
pub fn getitimer(p: &Process, which: u32) -> KResult<ItimerVal> {
    let timers = p.timers.lock();
    match which {
        ITIMER_REAL => {
            let (deadline, interval) = timers.real;
            let left = if deadline == 0 {
                0
            } else {
                // An armed timer never reads as 0 (Linux: it_real_remaining
                // rounds a passed deadline up to the smallest value).
                clock::counter_to_ns(deadline.saturating_sub(timer::counter())).max(1000)
            };
            Ok((left, clock::counter_to_ns(interval)))
        }
        ITIMER_VIRTUAL | ITIMER_PROF => {
            let t = timers.cpu[which as usize - 1];
            Ok((t.left, t.interval))
        }
        _ => Err(Errno::EINVAL),
    }
}

/// setitimer(2): arms (value != 0) or disarms interval timer `which`;
/// returns what it held before (Linux: `do_setitimer`).
pub fn setitimer(p: &Arc<Process>, which: u32, new: ItimerVal) -> KResult<ItimerVal> {
    let old = getitimer(p, which)?;
    let (value, interval) = new;
    let mut timers = p.timers.lock();
    match which {
        ITIMER_REAL => {
            let deadline = if value == 0 {
                0
            } else {
                timer::counter() + clock::ns_to_counter(value).max(1)
            };
            timers.real = (deadline, clock::ns_to_counter(interval));
            drop(timers);
            if deadline != 0 {
                watch(p, deadline);
            }
        }
        _ => {
            timers.cpu[which as usize - 1] = CpuTimer {
                left: value,
                interval: if value == 0 { 0 } else { interval },
            };
        }
    }
    Ok(old)
}

/// timer_create(2) after the clock and sigevent were checked: a new,
/// disarmed timer; returns its id (Linux hands out the lowest free one).
pub fn timer_create(p: &Process, clock: i32, notify: Notify) -> KResult<i32> {
    let mut timers = p.timers.lock();
    if timers.posix.len() >= MAX_POSIX_TIMERS {
        return Err(Errno::EAGAIN);
    }
    let id = (0..).find(|i| !timers.posix.contains_key(i)).unwrap_or(0);
    timers.posix.insert(
        id,
        PosixTimer {
            clock,
            notify,
            deadline: 0,
            interval: 0,
            pending: false,
            overrun: 0,
            overrun_last: 0,
        },
    );
    Ok(id)
}

/// The clock timer `id` runs on.
pub fn timer_clock(p: &Process, id: i32) -> KResult<i32> {
    let timers = p.timers.lock();
    Ok(timers.posix.get(&id).ok_or(Errno::EINVAL)?.clock)
}

/// timer_delete(2).
pub fn timer_delete(p: &Process, id: i32) -> KResult<()> {
    p.timers
        .lock()
        .posix
        .remove(&id)
        .map(|_| ())
        .ok_or(Errno::EINVAL)
}

/// timer_gettime(2): (time left, interval) in nanoseconds.
pub fn timer_gettime(p: &Process, id: i32) -> KResult<ItimerVal> {
    let timers = p.timers.lock();
    let t = timers.posix.get(&id).ok_or(Errno::EINVAL)?;
    let left = if t.deadline == 0 {
        0
    } else {
        clock::counter_to_ns(t.deadline.saturating_sub(timer::counter())).max(1)
    };
    Ok((left, clock::counter_to_ns(t.interval)))
}

/// timer_settime(2): arms timer `id` to fire at counter value `deadline`
/// (0: disarm) and every `interval` counter ticks after; returns the old
/// setting as timer_gettime would.
pub fn timer_settime(
    p: &Arc<Process>,
    id: i32,
    deadline: u64,
    interval: u64,
) -> KResult<ItimerVal> {
    let old = timer_gettime(p, id)?;
    let mut timers = p.timers.lock();
    let t = timers.posix.get_mut(&id).ok_or(Errno::EINVAL)?;
    t.deadline = deadline;
    t.interval = if deadline == 0 { 0 } else { interval };
    t.overrun = 0;
    drop(timers);
    if deadline != 0 {
        watch(p, deadline);
    }
    Ok(old)
}

/// timer_getoverrun(2).
pub fn timer_getoverrun(p: &Process, id: i32) -> KResult<i32> {
    let timers = p.timers.lock();
    Ok(timers.posix.get(&id).ok_or(Errno::EINVAL)?.overrun_last)
}

/// exec: POSIX timers are deleted, interval timers kept (Linux:
/// `exit_itimers` in `begin_new_exec`).
pub fn on_exec(p: &Process) {
    p.timers.lock().posix.clear();
}

/// The process is gone: nothing fires for it any more.
pub fn on_exit(p: &Process) {
    *p.timers.lock() = ProcessTimers::default();
}
