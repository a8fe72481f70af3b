//! Interval timers and POSIX timers (Linux: `kernel/time/itimer.c`,
//! `kernel/time/posix-timers.c`, `kernel/time/posix-cpu-timers.c`).
//!
//! ITIMER_REAL and the POSIX timers on the wall clocks (CLOCK_REALTIME,
//! MONOTONIC, BOOTTIME, TAI and the two ALARM clocks) hold a deadline on
//! the counter; processes with one armed are listed in `ARMED`, and the
//! timer tick fires what is due, so a timer fires on the first tick at or
//! after its time (1/HZ resolution; Linux uses hrtimers).
//!
//! CPU-time timers (ITIMER_VIRTUAL and ITIMER_PROF, and POSIX timers on a
//! process's or a thread's CPU clock) hold an expiry on their clock, in
//! nanoseconds; the tick of a CPU running a thread of the process checks
//! them against the clock (Linux: `run_posix_cpu_timers` from
//! `update_process_times`), so they too fire on the first tick past it.
//!
//! A periodic POSIX timer whose signal is queued waits, unarmed, until the
//! signal is delivered; then it moves on past the present and the signal
//! carries how many expiries were missed meanwhile (Linux:
//! `posixtimer_rearm`, `it_requeue_pending`).
//!
//! Where we simplify: an absolute CLOCK_REALTIME timer is converted to the
//! counter when armed, so a later clock_settime does not move it.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::clock;
use crate::task::process::{find_thread, Process};
use crate::task::signal;
use crate::task::signal_abi::{SigInfo, SIGALRM, SIGPROF, SIGVTALRM};
use crate::task::Thread;
pub use uapi::time::{ITIMER_PROF, ITIMER_REAL, ITIMER_VIRTUAL};

/// The most POSIX timers one process may hold (Linux bounds them by
/// RLIMIT_SIGPENDING); more is EAGAIN.
const MAX_POSIX_TIMERS: usize = 1024;

/// Which CPU time a CPU clock counts (Linux: `CPUCLOCK_PROF`,
/// `CPUCLOCK_VIRT`, `CPUCLOCK_SCHED`).
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum CpuSample {
    /// User and system time.
    Prof,
    /// User time.
    Virt,
    /// Time on a CPU, exactly (what CLOCK_*_CPUTIME_ID count).
    Sched,
}

/// Whose CPU time a CPU clock counts.
#[derive(Clone)]
pub enum CpuTarget {
    /// Every thread of a process, those gone included.
    Process(Weak<Process>),
    /// One thread.
    Thread(Weak<Thread>),
}

/// A CPU-time clock (Linux: the clock ids `MAKE_PROCESS_CPUCLOCK` and
/// `MAKE_THREAD_CPUCLOCK` make).
#[derive(Clone)]
pub struct CpuClock {
    /// Whose time.
    pub target: CpuTarget,
    /// Which part of it.
    pub sample: CpuSample,
}

/// (user, system) nanoseconds as `sample` wants them: one of the two
/// clocks a (user, system) pair makes, or the exact `runtime`.
fn pick(sample: CpuSample, (user, system): (u64, u64), runtime: u64) -> u64 {
    match sample {
        CpuSample::Prof => user + system,
        CpuSample::Virt => user,
        CpuSample::Sched => runtime,
    }
}

impl CpuClock {
    /// The clock's time now, in nanoseconds; None once its process or
    /// thread is gone (Linux: `cpu_clock_sample`,
    /// `cpu_clock_sample_group`).
    pub fn now(&self) -> Option<u64> {
        match &self.target {
            CpuTarget::Process(p) => {
                let times = p.upgrade()?.cputime();
                Some(pick(self.sample, times, times.0 + times.1))
            }
            CpuTarget::Thread(t) => {
                let t = t.upgrade()?;
                Some(pick(self.sample, t.cputime(), t.runtime_ns()))
            }
        }
    }

    /// Does the clock count `thread`'s time (it, or its process)?
    fn counts(&self, process: &Process, thread: &Thread) -> bool {
        match &self.target {
            CpuTarget::Process(p) => core::ptr::eq(p.as_ptr(), process),
            CpuTarget::Thread(t) => core::ptr::eq(t.as_ptr(), thread),
        }
    }
}

/// The clock a POSIX timer runs on.
#[derive(Clone)]
pub enum TimerClock {
    /// A wall clock (its id), its expiries on the counter.
    Counter(i32),
    /// A CPU-time clock, its expiries in its nanoseconds.
    Cpu(CpuClock),
}

impl TimerClock {
    /// The clock's time now, in its units; None once a CPU clock's
    /// process or thread is gone.
    fn now(&self) -> Option<u64> {
        match self {
            TimerClock::Counter(_) => Some(timer::counter()),
            TimerClock::Cpu(c) => c.now(),
        }
    }

    /// `ns` nanoseconds in the clock's units.
    fn units_of_ns(&self, ns: u64) -> u64 {
        match self {
            TimerClock::Counter(_) => clock::ns_to_counter(ns),
            TimerClock::Cpu(_) => ns,
        }
    }

    /// `units` of the clock in nanoseconds.
    fn ns_of_units(&self, units: u64) -> u64 {
        match self {
            TimerClock::Counter(_) => clock::counter_to_ns(units),
            TimerClock::Cpu(_) => units,
        }
    }
}

/// An interval timer on CPU time: its expiry on the process's clock (0:
/// disarmed) and the interval it re-arms with (Linux: `struct
/// cpu_itimer`).
#[derive(Copy, Clone, Default)]
struct CpuItimer {
    /// The clock's time at which it fires, in nanoseconds; 0 when
    /// disarmed.
    expires: u64,
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
    /// The clock it runs on.
    clock: TimerClock,
    /// What an expiry does (`sigev_notify`).
    notify: Notify,
    /// The next expiry, in the clock's units; 0 when disarmed.
    expires: u64,
    /// Re-arm interval in the clock's units; 0 for a one-shot timer.
    interval: u64,
    /// Its signal is queued and not yet delivered: the timer waits, and
    /// moves on when it is delivered (Linux: `it_requeue_pending`).
    requeue_pending: bool,
    /// Intervals the timer moved on by since its signal was queued, less
    /// one: the expiries missed (Linux: `it_overrun`, from -1).
    overrun: i64,
    /// The overrun count the last delivered signal carried (Linux:
    /// `it_overrun_last`), what timer_getoverrun(2) returns.
    overrun_last: i32,
}

impl PosixTimer {
    /// Is it waiting to fire on its clock (not disarmed, not waiting for
    /// its signal's delivery, and not SIGEV_NONE, which never fires)?
    fn armed(&self) -> bool {
        self.expires != 0 && !self.requeue_pending && !matches!(self.notify, Notify::None)
    }

    /// Moves a periodic timer past `now`, counting the intervals as
    /// overruns (Linux: `timer_forward`).
    fn forward(&mut self, now: u64) {
        if self.interval != 0 && self.expires != 0 {
            let (expires, advanced) = forward(self.expires, self.interval, now);
            self.expires = expires;
            self.overrun = self.overrun.saturating_add(advanced as i64);
        }
    }
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
    cpu: [CpuItimer; 2],
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
            .filter(|t| matches!(t.clock, TimerClock::Counter(_)) && t.armed())
            .map(|t| t.expires)
            .min();
        match (real, posix) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Does a POSIX timer on a CPU clock wait to fire?
    fn cpu_timer_armed(&self) -> bool {
        self.posix
            .values()
            .any(|t| matches!(t.clock, TimerClock::Cpu(_)) && t.armed())
    }
}

/// Processes that may have a counter timer armed.
static ARMED: SpinLock<Vec<Weak<Process>>> = SpinLock::new(Vec::new());
/// The earliest deadline among them (u64::MAX: none), so a tick with
/// nothing due costs one load.
static NEXT: AtomicU64 = AtomicU64::new(u64::MAX);
/// One CPU at a time runs the expired timers.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// Processes that may own a POSIX timer armed on a CPU clock (whose
/// clock may be another process's), and how many: a tick with none costs
/// one load.
static CPU_ARMED: SpinLock<Vec<Weak<Process>>> = SpinLock::new(Vec::new());
/// `CPU_ARMED`'s length.
static NR_CPU_ARMED: AtomicUsize = AtomicUsize::new(0);

/// Adds `p` to `list` unless it is there.
fn list_add(list: &SpinLock<Vec<Weak<Process>>>, p: &Arc<Process>) -> usize {
    let mut l = list.lock();
    if !l.iter().any(|w| core::ptr::eq(w.as_ptr(), Arc::as_ptr(p))) {
        l.push(Arc::downgrade(p));
    }
    l.len()
}

/// `p` has armed a counter timer for `deadline`: make the tick look at it.
fn watch(p: &Arc<Process>, deadline: u64) {
    list_add(&ARMED, p);
    NEXT.fetch_min(deadline, Ordering::AcqRel);
}

/// `p` has armed a timer on a CPU clock: make the ticks look at it.
fn watch_cpu(p: &Arc<Process>) {
    NR_CPU_ARMED.store(list_add(&CPU_ARMED, p), Ordering::Release);
}

/// Arms timer `t` of `p` with the tick that will fire it.
fn watch_timer(p: &Arc<Process>, t: &PosixTimer) {
    if !t.armed() {
        return;
    }
    match t.clock {
        TimerClock::Counter(_) => watch(p, t.expires),
        TimerClock::Cpu(_) => watch_cpu(p),
    }
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

/// The expiry after `expires` passed at `now`, for an `interval` timer,
/// and how many intervals that moved it by (Linux: `hrtimer_forward`).
fn forward(expires: u64, interval: u64, now: u64) -> (u64, u64) {
    if now < expires {
        return (expires, 0);
    }
    let advanced = (now - expires) / interval + 1;
    (expires + advanced * interval, advanced)
}

/// Fires `p`'s counter timers that are due at `now`, under its timers'
/// lock (Linux: `it_real_fn`, `posix_timer_fn`): SIGALRM for ITIMER_REAL,
/// each POSIX timer's signal. A periodic ITIMER_REAL moves on to its next
/// deadline after `now`.
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
        if matches!(timer.clock, TimerClock::Counter(_)) && timer.armed() && timer.expires <= now {
            fire(p, id, timer, now);
        }
    }
}

/// POSIX timer `id` of `p` expired at `now` on its clock: queue its
/// signal and wait for its delivery, or, if the signal was ignored, move
/// a periodic timer on at once (Linux: `posix_timer_fn`, `cpu_timer_fire`).
fn fire(p: &Arc<Process>, id: i32, timer: &mut PosixTimer, now: u64) {
    let Notify::Signal { sig, value, tid } = timer.notify else {
        return;
    };
    let info = SigInfo::timer(sig, id, 0, value);
    let queued = match tid.and_then(find_thread) {
        Some(thread) => signal::queue_for_thread(&thread, sig, info),
        None if tid.is_some() => false,
        None => signal::queue_signal(p, sig, info),
    };
    if timer.interval == 0 {
        timer.expires = 0;
    } else if queued {
        timer.requeue_pending = true;
    } else {
        timer.forward(now);
    }
}

/// A POSIX timer's signal is being delivered: a periodic timer moves on
/// past the present, and the signal carries the expiries it missed
/// (Linux: `posixtimer_rearm`). Returns that overrun count.
pub fn timer_signal_dequeued(p: &Arc<Process>, id: i32) -> i32 {
    let mut timers = p.timers.lock();
    let Some(t) = timers.posix.get_mut(&id) else {
        return 0;
    };
    if !t.requeue_pending {
        return 0;
    }
    t.requeue_pending = false;
    if let Some(now) = t.clock.now() {
        t.forward(now);
    }
    t.overrun_last = t.overrun.clamp(0, i32::MAX as i64) as i32;
    t.overrun = -1;
    watch_timer(p, t);
    t.overrun_last
}

/// From the timer tick on a CPU running `thread` of process `p`: fire
/// ITIMER_VIRTUAL and ITIMER_PROF, and the POSIX timers on a CPU clock
/// that counts the thread's time, that are due (Linux:
/// `run_posix_cpu_timers`, `check_process_timers`, `check_cpu_itimer`).
pub fn cpu_tick(p: &Arc<Process>, thread: &Thread) {
    let mut expired = [false; 2];
    {
        let mut timers = p.timers.lock();
        if timers.cpu.iter().any(|t| t.expires != 0) {
            let (user, system) = p.cputime();
            for (i, t) in timers.cpu.iter_mut().enumerate() {
                let now = if i == 0 { user } else { user + system };
                if t.expires == 0 || t.expires > now {
                    continue;
                }
                t.expires = if t.interval != 0 {
                    t.expires + t.interval
                } else {
                    0
                };
                expired[i] = true;
            }
        }
    }
    for (i, sig) in [SIGVTALRM, SIGPROF].into_iter().enumerate() {
        if expired[i] {
            signal::send_to_process(p, sig, signal::SigSource::Kernel);
        }
    }
    if NR_CPU_ARMED.load(Ordering::Acquire) != 0 {
        run_cpu_timers(p, thread);
    }
}

/// Fires the POSIX timers on CPU clocks counting `thread`'s time that are
/// due; forgets owners with none armed.
fn run_cpu_timers(p: &Process, thread: &Thread) {
    let mut owners = CPU_ARMED.lock();
    owners.retain(|w| {
        let Some(owner) = w.upgrade() else {
            return false;
        };
        let mut timers = owner.timers.lock();
        for (&id, t) in timers.posix.iter_mut() {
            let TimerClock::Cpu(c) = &t.clock else {
                continue;
            };
            if !t.armed() || !c.counts(p, thread) {
                continue;
            }
            match c.now() {
                Some(now) if now >= t.expires => fire(&owner, id, t, now),
                Some(_) => {}
                // Its process or thread has gone: it never fires again.
                None => t.expires = 0,
            }
        }
        timers.cpu_timer_armed()
    });
    NR_CPU_ARMED.store(owners.len(), Ordering::Release);
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
            drop(timers);
            if t.expires == 0 {
                return Ok((0, t.interval));
            }
            let (user, system) = p.cputime();
            let now = if which == ITIMER_VIRTUAL {
                user
            } else {
                user + system
            };
            // About to fire: one tick left (Linux: `get_cpu_itimer`).
            let tick_ns = clock::NSEC_PER_SEC / crate::task::HZ;
            let left = t.expires.checked_sub(now).filter(|&l| l > 0);
            Ok((left.unwrap_or(tick_ns), t.interval))
        }
        _ => Err(Errno::EINVAL),
    }
}

/// setitimer(2): arms (value != 0) or disarms interval timer `which`;
/// returns what it held before (Linux: `do_setitimer`, `set_cpu_itimer`).
pub fn setitimer(p: &Arc<Process>, which: u32, new: ItimerVal) -> KResult<ItimerVal> {
    let old = getitimer(p, which)?;
    let (value, interval) = new;
    match which {
        ITIMER_REAL => {
            let deadline = if value == 0 {
                0
            } else {
                timer::counter() + clock::ns_to_counter(value).max(1)
            };
            p.timers.lock().real = (deadline, clock::ns_to_counter(interval));
            if deadline != 0 {
                watch(p, deadline);
            }
        }
        _ => {
            let (user, system) = p.cputime();
            let now = if which == ITIMER_VIRTUAL {
                user
            } else {
                user + system
            };
            p.timers.lock().cpu[which as usize - 1] = if value == 0 {
                CpuItimer::default()
            } else {
                CpuItimer {
                    expires: now + value,
                    interval,
                }
            };
        }
    }
    Ok(old)
}

/// timer_create(2) after the clock and sigevent were checked: a new,
/// disarmed timer; returns its id (Linux hands out the lowest free one).
/// No `notify` means SIGEV_SIGNAL with SIGALRM and the id as its value.
pub fn timer_create(p: &Process, clock: TimerClock, notify: Option<Notify>) -> KResult<i32> {
    let mut timers = p.timers.lock();
    if timers.posix.len() >= MAX_POSIX_TIMERS {
        return Err(Errno::EAGAIN);
    }
    let id = (0..).find(|i| !timers.posix.contains_key(i)).unwrap_or(0);
    let notify = notify.unwrap_or(Notify::Signal {
        sig: SIGALRM,
        value: id as u64,
        tid: None,
    });
    timers.posix.insert(
        id,
        PosixTimer {
            clock,
            notify,
            expires: 0,
            interval: 0,
            requeue_pending: false,
            overrun: -1,
            overrun_last: 0,
        },
    );
    Ok(id)
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

/// timer_gettime(2): (time left, interval) in nanoseconds (Linux:
/// `common_timer_get`): a periodic timer waiting for its signal's
/// delivery, or a SIGEV_NONE one, is first moved on past the present; a
/// signalling timer that is due reads 1 ns, one fired for good 0.
pub fn timer_gettime(p: &Process, id: i32) -> KResult<ItimerVal> {
    let mut timers = p.timers.lock();
    let t = timers.posix.get_mut(&id).ok_or(Errno::EINVAL)?;
    let interval = t.clock.ns_of_units(t.interval);
    let sig_none = matches!(t.notify, Notify::None);
    if t.expires == 0 || (t.interval == 0 && t.requeue_pending) {
        return Ok((0, interval));
    }
    let Some(now) = t.clock.now() else {
        return Ok((0, interval));
    };
    if t.requeue_pending || sig_none {
        t.forward(now);
    }
    let left = match t.expires.checked_sub(now).filter(|&l| l > 0) {
        Some(l) => t.clock.ns_of_units(l).max(1),
        None if sig_none => 0,
        None => 1,
    };
    Ok((left, interval))
}

/// timer_settime(2): arms timer `id` to fire `value` nanoseconds from now
/// or, with `absolute`, at `value` on its clock (a wall clock's already
/// on CLOCK_MONOTONIC's scale), then every `interval` nanoseconds; 0
/// disarms. Returns the old setting as timer_gettime would (Linux:
/// `common_timer_set`, `posix_cpu_timer_set`).
pub fn timer_settime(
    p: &Arc<Process>,
    id: i32,
    absolute: bool,
    value: u64,
    interval: u64,
) -> KResult<ItimerVal> {
    let old = timer_gettime(p, id)?;
    let mut timers = p.timers.lock();
    let t = timers.posix.get_mut(&id).ok_or(Errno::EINVAL)?;
    // A signal already queued no longer moves the timer on (Linux: the
    // new `it_requeue_pending` generation).
    t.requeue_pending = false;
    t.overrun = -1;
    t.overrun_last = 0;
    t.interval = if value == 0 {
        0
    } else {
        t.clock.units_of_ns(interval)
    };
    t.expires = match (value, &t.clock) {
        (0, _) => 0,
        (_, TimerClock::Counter(_)) if absolute => clock::ns_to_counter(value).max(1),
        (_, TimerClock::Counter(_)) => timer::counter() + clock::ns_to_counter(value).max(1),
        (_, TimerClock::Cpu(c)) if absolute => {
            c.now().ok_or(Errno::ESRCH)?;
            value
        }
        (_, TimerClock::Cpu(c)) => c.now().ok_or(Errno::ESRCH)? + value,
    };
    watch_timer(p, t);
    Ok(old)
}

/// The wall clock timer `id` runs on, None for a CPU clock (for
/// timer_settime's absolute times).
pub fn timer_wall_clock(p: &Process, id: i32) -> KResult<Option<i32>> {
    let timers = p.timers.lock();
    Ok(match timers.posix.get(&id).ok_or(Errno::EINVAL)?.clock {
        TimerClock::Counter(c) => Some(c),
        TimerClock::Cpu(_) => None,
    })
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
