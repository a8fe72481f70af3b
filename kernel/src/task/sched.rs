//! Per-CPU run queues, `schedule()`, the timer tick and sleeping (Linux:
//! `kernel/sched/core.c`: `__schedule`, `try_to_wake_up`, `scheduler_tick`;
//! round-robin instead of CFS).

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::arch::context::switch_to;
use crate::arch::cpu::{self, cpu_id, local_irq_restore, local_irq_save, wait_for_interrupt};
use crate::arch::{smp, timer};
use crate::config::NR_CPUS;
use crate::sync::SpinLock;
use crate::task::thread::{State, Thread};

/// Timer ticks per second; also the round-robin time slice (1 / HZ s).
pub const HZ: u64 = 100;

/// One CPU's run queue (Linux: `struct rq`), under `Cpu::rq`'s lock.
struct RunQueue {
    /// Runnable threads waiting for this CPU, run front first (round robin).
    queue: VecDeque<Arc<Thread>>,
    /// The thread running on this CPU (Linux: `rq->curr`); `None` only
    /// inside `schedule()`.
    current: Option<Arc<Thread>>,
    /// This CPU's idle thread, run when `queue` is empty (Linux: `rq->idle`).
    idle: Option<Arc<Thread>>,
    /// A dead thread we switched away from, dropped by the next thread once
    /// its stack is no longer in use (Linux: `finish_task_switch`).
    prev_dead: Option<Arc<Thread>>,
    /// Threads in `msleep`, with the counter value to wake them at.
    sleepers: Vec<(u64, Arc<Thread>)>,
}

/// One CPU's scheduler state, on cache lines of its own: every exception
/// reads `curr` and `need_resched`, and a neighbour's run-queue lock must
/// not share a line with them.
#[repr(align(64))]
struct Cpu {
    /// The run queue; other CPUs take its lock to queue threads they wake
    /// for this one.
    rq: SpinLock<RunQueue>,
    /// `rq.current`, readable without the lock by the thread it points to
    /// (Linux: `current`, a per-CPU pointer). The run queue's `Arc` keeps
    /// it alive while it runs, and threads never change CPU.
    curr: AtomicPtr<Thread>,
    /// Set when a thread waits for this CPU (a wake-up, the tick): call
    /// `schedule()` at the next chance (Linux: TIF_NEED_RESCHED).
    need_resched: AtomicBool,
    /// The CPU has run [`init_this_cpu`] and takes threads.
    online: AtomicBool,
    /// Timer ticks taken on this CPU since it came up.
    ticks: AtomicU64,
    /// Ticks that found the CPU idle (/proc/uptime's second field), in
    /// user code and in the kernel (/proc/stat's cpu lines).
    idle_ticks: AtomicU64,
    /// Ticks that interrupted user code.
    user_ticks: AtomicU64,
    /// Ticks that interrupted a thread in the kernel.
    system_ticks: AtomicU64,
    /// Switches from one thread to another (/proc/stat's `ctxt`).
    switches: AtomicU64,
    /// The counter value the next tick is due at.
    next_tick: AtomicU64,
    /// The counter value the timer interrupt is set for: the next tick,
    /// or a sleeper's deadline before it.
    next_event: AtomicU64,
}

/// A CPU not yet online, with empty run queue and counters, to build
/// [`CPUS`] from.
#[allow(clippy::declare_interior_mutable_const)]
const CPU_INIT: Cpu = Cpu {
    rq: SpinLock::new(RunQueue {
        queue: VecDeque::new(),
        current: None,
        idle: None,
        prev_dead: None,
        sleepers: Vec::new(),
    }),
    curr: AtomicPtr::new(core::ptr::null_mut()),
    need_resched: AtomicBool::new(false),
    online: AtomicBool::new(false),
    ticks: AtomicU64::new(0),
    idle_ticks: AtomicU64::new(0),
    user_ticks: AtomicU64::new(0),
    system_ticks: AtomicU64::new(0),
    switches: AtomicU64::new(0),
    next_tick: AtomicU64::new(0),
    next_event: AtomicU64::new(0),
};

/// The scheduler state of each CPU, indexed by CPU number (Linux: the
/// per-CPU `runqueues`).
static CPUS: [Cpu; NR_CPUS] = [CPU_INIT; NR_CPUS];
/// How many CPUs have come online.
static NR_ONLINE: AtomicUsize = AtomicUsize::new(0);

/// Makes CPU `id` the one the caller runs on: its number and its entry of
/// [`CPUS`], for `this_cpu`. The first thing each CPU does.
pub fn set_this_cpu(id: usize) {
    const { assert!(align_of::<Cpu>() > cpu::CPU_ID_MASK) };
    cpu::set_cpu(id, &CPUS[id] as *const Cpu as usize);
}

/// The scheduler state of the CPU the caller runs on. Threads never
/// change CPU, so the answer stays right after a preemption.
#[inline(always)]
fn this_cpu() -> &'static Cpu {
    // SAFETY: `set_this_cpu` recorded this CPU's entry of the static
    // `CPUS` before anything else ran here; it is never written through
    // a pointer, only through its atomics and locks.
    unsafe { &*(cpu::cpu_local() as *const Cpu) }
}

/// Makes the code running on this CPU its idle thread and marks the CPU
/// online, ready to take threads.
pub fn init_this_cpu() {
    let cpu = cpu_id();
    let idle = Thread::new_idle(cpu);
    {
        let mut rq = CPUS[cpu].rq.lock();
        CPUS[cpu]
            .curr
            .store(Arc::as_ptr(&idle) as *mut Thread, Ordering::Relaxed);
        rq.current = Some(idle.clone());
        rq.idle = Some(idle);
    }
    CPUS[cpu].online.store(true, Ordering::Release);
    NR_ONLINE.fetch_add(1, Ordering::AcqRel);
}

/// Has CPU `cpu` come online (Linux: `cpu_online`)?
pub fn cpu_online(cpu: usize) -> bool {
    cpu < NR_CPUS && CPUS[cpu].online.load(Ordering::Acquire)
}

/// How many CPUs are online (Linux: `num_online_cpus`).
pub fn nr_cpus_online() -> usize {
    NR_ONLINE.load(Ordering::Acquire)
}

/// The calling thread, borrowed rather than counted (Linux: `current`,
/// without `get_task_struct`): for hot paths (a fault, the return to user
/// space) that only look. Not `Send`: it means "the thread running here".
pub struct CurrentRef {
    /// The thread, as this CPU's run queue holds it.
    thread: NonNull<Thread>,
    /// Makes the type neither `Send` nor `Sync`.
    _not_send: PhantomData<*const Thread>,
}

impl core::ops::Deref for CurrentRef {
    type Target = Thread;

    fn deref(&self) -> &Thread {
        // SAFETY: the calling thread, kept alive by this CPU's run queue
        // while it runs; a thread is freed only after it has switched away
        // for good, and this value cannot outlive the code that made it on
        // that thread (it is not `Send`).
        unsafe { self.thread.as_ref() }
    }
}

/// The calling thread, borrowed (see [`CurrentRef`]).
pub fn current_ref() -> CurrentRef {
    let curr = this_cpu().curr.load(Ordering::Relaxed);
    CurrentRef {
        thread: NonNull::new(curr).expect("no current thread"),
        _not_send: PhantomData,
    }
}

/// The thread running on this CPU, with a reference of its own (Linux:
/// `current`, `get_task_struct`).
pub fn current() -> Arc<Thread> {
    let curr = this_cpu().curr.load(Ordering::Relaxed);
    assert!(!curr.is_null(), "no current thread");
    // SAFETY: `curr` is the calling thread, which this CPU's run queue
    // holds an `Arc` of while it runs; we add a reference of our own.
    unsafe {
        Arc::increment_strong_count(curr);
        Arc::from_raw(curr)
    }
}

/// Asks this CPU to reschedule at the next chance: on the way out of
/// the current interrupt, or at the next `schedule()` (Linux:
/// `set_tsk_need_resched`).
pub fn set_need_resched() {
    this_cpu().need_resched.store(true, Ordering::Relaxed);
}

/// Timer ticks taken on this CPU since it came up.
pub fn this_cpu_ticks() -> u64 {
    this_cpu().ticks.load(Ordering::Relaxed)
}

/// Ticks CPU `cpu` has spent idle.
pub fn idle_ticks(cpu: usize) -> u64 {
    CPUS[cpu].idle_ticks.load(Ordering::Relaxed)
}

/// CPU `cpu`'s ticks in user code, in the kernel and idle, and its thread
/// switches (Linux: `kcpustat_cpu`, `nr_context_switches_cpu`).
pub fn cpu_stat(cpu: usize) -> [u64; 4] {
    let c = &CPUS[cpu];
    [
        c.user_ticks.load(Ordering::Relaxed),
        c.system_ticks.load(Ordering::Relaxed),
        c.idle_ticks.load(Ordering::Relaxed),
        c.switches.load(Ordering::Relaxed),
    ]
}

/// Threads on a CPU or waiting in a run queue (/proc/loadavg).
pub fn nr_running() -> usize {
    (0..NR_CPUS).map(cpu_nr_running).sum()
}

/// Threads CPU `cpu` has to run: those queued, and the one running
/// unless it is the idle thread (Linux: `rq->nr_running`).
fn cpu_nr_running(cpu: usize) -> usize {
    let rq = CPUS[cpu].rq.lock();
    rq.queue.len() + usize::from(rq.current.as_ref().is_some_and(|t| !t.is_idle()))
}

/// Puts a Runnable thread on its CPU's run queue and pokes that CPU.
pub(super) fn enqueue(t: Arc<Thread>) {
    let cpu = t.cpu;
    CPUS[cpu].rq.lock().queue.push_back(t);
    if cpu == cpu_id() {
        set_need_resched();
    } else {
        CPUS[cpu].need_resched.store(true, Ordering::Release);
        smp::send_reschedule(cpu);
    }
}

/// The online CPU with the fewest threads to run, for a new thread; on a
/// tie the caller's own, then the next ones up (Linux:
/// `select_task_rq_fair` at fork and exec picks the idlest CPU by load; we
/// count threads). Threads never move once placed, so this is all the
/// balancing there is: a pipeline's stages spread over the CPUs instead
/// of queueing on one while another idles, and a harness's two workers
/// land on two CPUs (the second one beside the harness, which then
/// sleeps, rather than beside the first).
pub fn select_cpu() -> usize {
    let (n, here) = (nr_cpus_online(), cpu_id());
    (0..n)
        .map(|k| (here + k) % n)
        .min_by_key(|&cpu| cpu_nr_running(cpu))
        .unwrap_or(0)
}

/// Wakes a Blocked thread (Linux: `try_to_wake_up`); no-op otherwise.
pub fn wake_up(t: &Arc<Thread>) {
    if t.try_wake() {
        enqueue(t.clone());
    }
}

/// Picks the next thread on this CPU and switches to it (Linux:
/// `__schedule`). The current thread's state says what happens to it:
/// Running goes to the back of the queue, Runnable is already queued by a
/// waker, Blocked waits for `wake_up`, Dead is freed after the switch.
pub fn schedule() {
    let daif = local_irq_save();
    let cpu = this_cpu();
    cpu.need_resched.store(false, Ordering::Relaxed);
    let mut rq = cpu.rq.lock();
    let prev = rq.current.take().expect("no current thread");
    prev.check_stack();
    match prev.state() {
        State::Running if !prev.is_idle() => {
            prev.set_state(State::Runnable);
            rq.queue.push_back(prev.clone());
        }
        State::Dead => rq.prev_dead = Some(prev.clone()),
        _ => {}
    }
    let next = match rq.queue.pop_front() {
        Some(t) => t,
        None => rq.idle.clone().expect("no idle thread"),
    };
    if !Arc::ptr_eq(&prev, &next) {
        cpu.switches.fetch_add(1, Ordering::Relaxed);
        let now = timer::counter();
        prev.account_stop(now);
        next.account_start(now);
    }
    next.set_state(State::Running);
    cpu.curr
        .store(Arc::as_ptr(&next) as *mut Thread, Ordering::Relaxed);
    rq.current = Some(next.clone());
    if Arc::ptr_eq(&prev, &next) {
        drop(rq);
        local_irq_restore(daif);
        return;
    }
    // The next thread's user address space (kernel threads get an empty
    // one, so no CPU walks the tables of a process that is going away).
    match next.user.as_ref().and_then(|u| u.process.mm()) {
        Some(mm) => mm.activate(),
        None => crate::arch::mmu::switch_to_empty(),
    }
    let (prev_ctx, next_ctx) = (prev.context(), next.context());
    // Drop our references before switching: the run queue (or prev_dead)
    // keeps both threads alive across the switch.
    drop(prev);
    drop(next);
    drop(rq);
    // SAFETY: IRQs are masked; next's context was saved by its last switch
    // (or made by spawn) and only this CPU resumes threads of this queue.
    unsafe { switch_to(prev_ctx, next_ctx) };
    finish_task_switch();
    local_irq_restore(daif);
}

/// Runs on the new thread right after a switch: frees the dead thread we
/// came from, now that its stack is no longer in use.
pub(super) fn finish_task_switch() {
    let dead = this_cpu().rq.lock().prev_dead.take();
    drop(dead);
}

/// Gives up the CPU to the next queued thread, if any; the caller goes
/// to the back of the queue (Linux: `sched_yield`).
pub fn yield_now() {
    set_need_resched();
    schedule();
}

/// Counter ticks from one tick to the next: CNTFRQ_EL0 / HZ, so the tick
/// comes HZ times a second.
pub fn tick_interval() -> u64 {
    timer::frequency() / HZ
}

/// The timer interrupt (Linux: `hrtimer_interrupt`, the tick being one of
/// its timers, `tick_sched_timer`): the tick if it is due, the sleepers
/// whose deadline came in any case, then the timer set for whichever is
/// next. A sleeper is woken at its deadline, not at the tick after it.
pub fn timer_interrupt(user: bool) {
    let cpu = this_cpu();
    let now = timer::counter();
    if now >= cpu.next_tick.load(Ordering::Relaxed) {
        cpu.next_tick
            .store(now + tick_interval(), Ordering::Relaxed);
        tick(user);
    } else {
        wake_sleepers(cpu, now);
    }
    let next = {
        let rq = cpu.rq.lock();
        let earliest = rq.sleepers.iter().map(|(d, _)| *d).min();
        earliest
            .map_or(u64::MAX, |d| d)
            .min(cpu.next_tick.load(Ordering::Relaxed))
    };
    cpu.next_event.store(next, Ordering::Relaxed);
    timer::set_event_at(next);
}

/// The tick's work (Linux: `scheduler_tick`, `update_process_times`):
/// charge the tick to the running thread (`user`: it interrupted user
/// space), run due timers, follow the `hw_dirty` switch, wake sleepers
/// whose time has come, and ask for a reschedule when others wait.
fn tick(user: bool) {
    let cpu = this_cpu();
    cpu.ticks.fetch_add(1, Ordering::Relaxed);
    let t = current_ref();
    if t.is_idle() {
        cpu.idle_ticks.fetch_add(1, Ordering::Relaxed);
    } else {
        t.account_tick(user);
        let ticks = if user {
            &cpu.user_ticks
        } else {
            &cpu.system_ticks
        };
        ticks.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(u) = &t.user {
        crate::task::timers::cpu_tick(&u.process, &t);
    }
    crate::task::timers::run_expired();
    crate::arch::cpufeature::sync_hw_dirty();
    wake_sleepers(cpu, timer::counter());
    if !cpu.rq.lock().queue.is_empty() {
        cpu.need_resched.store(true, Ordering::Relaxed);
    }
}

/// Wakes the sleepers of `cpu` whose deadline is `now` or earlier.
fn wake_sleepers(cpu: &Cpu, now: u64) {
    let mut woken = Vec::new();
    cpu.rq.lock().sleepers.retain(|(deadline, t)| {
        let due = *deadline <= now;
        if due {
            woken.push(t.clone());
        }
        !due
    });
    for t in woken {
        wake_up(&t);
    }
}

/// Called on the way out of an interrupt: preempt if asked to.
pub fn preempt_on_irq_exit() {
    if this_cpu().need_resched.load(Ordering::Relaxed) {
        schedule();
    }
}

/// Sleeps for at least `ms` milliseconds.
pub fn msleep(ms: u64) {
    let deadline = timer::counter() + ms * timer::frequency() / 1000;
    while timer::counter() < deadline {
        sleep_until(deadline, || false);
    }
}

/// Sleeps until the counter reaches `deadline` (u64::MAX: no deadline) or
/// someone wakes the thread (a futex wake, a signal), unless `woken()` is
/// already true. `woken` is tested after the thread is marked Blocked, so a
/// waker that sets it and then calls `wake_up` is never missed. Callers
/// re-check what they wait for. Interrupts stay masked from Blocked to
/// `schedule()`, as in `wait_until`.
pub fn sleep_until(deadline: u64, woken: impl Fn() -> bool) {
    let me = current();
    let daif = local_irq_save();
    let cpu = this_cpu();
    {
        let mut rq = cpu.rq.lock();
        me.set_state(State::Blocked);
        if deadline != u64::MAX {
            rq.sleepers.push((deadline, me.clone()));
        }
    }
    // A deadline before the next tick sets the timer for it.
    if deadline < cpu.next_event.load(Ordering::Relaxed) {
        cpu.next_event.store(deadline, Ordering::Relaxed);
        timer::set_event_at(deadline);
    }
    if woken() && me.try_set_running() {
        // Nobody queued us: carry on.
    } else {
        schedule();
    }
    // Woken early: our timer entry must not keep the thread alive.
    this_cpu()
        .rq
        .lock()
        .sleepers
        .retain(|(_, t)| !Arc::ptr_eq(t, &me));
    drop(me);
    local_irq_restore(daif);
}

/// Ends the calling thread: it is Dead once it switches away, and freed by
/// the next thread on this CPU.
pub fn exit_current_thread() -> ! {
    local_irq_save();
    let me = current();
    me.set_state(State::Dead);
    me.wake_joiners();
    drop(me);
    schedule();
    unreachable!("a dead thread was scheduled");
}

/// The idle loop every CPU ends in: run threads, else wait for an interrupt.
pub fn start_idle_loop() -> ! {
    loop {
        let daif = local_irq_save();
        let cpu = this_cpu();
        if cpu.need_resched.load(Ordering::Relaxed) || !cpu.rq.lock().queue.is_empty() {
            local_irq_restore(daif);
            schedule();
        } else {
            // WFI with IRQs masked still wakes on a pending interrupt, so
            // a wake-up between the check and the WFI is not lost.
            wait_for_interrupt();
            local_irq_restore(daif);
        }
    }
}
