//! will-it-scale's harness (its `main.c`): `tasks` copies of a testcase,
//! as threads or as processes, each counting its iterations in its own
//! slot of a shared page. The parent starts them together, lets them warm
//! up, then samples the sum of the slots over a fixed time. A task that
//! starts late or finishes last costs nothing, so the rate is that of all
//! tasks running at once, as will-it-scale reports it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use ulib::mm::*;
use ulib::process::{exit_group, fork, wait_for};
use ulib::sync::{futex_wait, futex_wake};

/// The most tasks one run can have: the slots that fit in the page.
pub const MAX_TASKS: usize = PAGE_SIZE / 64 - 1;

/// One task's iteration count, alone on its cache line so that counting
/// never bounces a line between CPUs.
#[repr(align(64))]
struct Slot(AtomicU64);

/// The shared page: the start barrier, the stop flag and the slots. Waits
/// sleep on futexes, so a waiting task never holds up a working one.
#[repr(align(64))]
struct Shared {
    ready: AtomicU32,
    go: AtomicU32,
    stop: AtomicU32,
    slots: [Slot; MAX_TASKS],
}

/// Sleeps until `word` is no longer `value`.
fn wait_while(word: &AtomicU32, value: u32) {
    while word.load(Ordering::Acquire) == value {
        let _ = futex_wait(word, value, None, 0);
    }
}

/// What a testcase sees of the harness.
pub struct Task {
    shared: &'static Shared,
    slot: &'static AtomicU64,
    count: u64,
    started: bool,
}

impl Task {
    /// Reports this task ready (its setup done) and waits for the start.
    pub fn start(&mut self) {
        self.ready();
        wait_while(&self.shared.go, 0);
    }

    fn ready(&mut self) {
        if !self.started {
            self.started = true;
            self.shared.ready.fetch_add(1, Ordering::AcqRel);
            let _ = futex_wake(&self.shared.ready, i32::MAX, 0);
        }
    }

    /// Runs `testcase` as this task; a task that gave up before `start`
    /// still counts as ready, so the others are not kept waiting.
    fn run(mut self, testcase: impl FnOnce(&mut Task) -> bool) -> bool {
        let ok = testcase(&mut self);
        self.ready();
        ok
    }

    /// Counts `n` more iterations (will-it-scale's `(*iterations)++`).
    pub fn add(&mut self, n: u64) {
        self.count += n;
        self.slot.store(self.count, Ordering::Relaxed);
    }

    /// Whether the parent has taken its last sample.
    pub fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed) != 0
    }
}

/// How to run: how many tasks, threads or processes, and for how long.
pub struct Run {
    pub tasks: u64,
    pub threads: bool,
    pub warmup: Duration,
    pub time: Duration,
}

impl Run {
    /// From the arguments every harnessed benchmark takes: `tasks=N`
    /// (1), `mode=threads` (else processes), `warmup_ms=` (200), `ms=`
    /// (1000).
    pub fn from_args(args: &ulib::Args) -> Run {
        let ms = |key, default| Duration::from_millis(crate::arg(args, key, default));
        Run {
            tasks: crate::arg(args, "tasks", 1),
            threads: args.clone().any(|a| a == "mode=threads"),
            warmup: ms("warmup_ms", 200),
            time: ms("ms", 1000),
        }
    }
}

/// The sum of all slots.
fn total(shared: &Shared, tasks: usize) -> u64 {
    shared.slots[..tasks]
        .iter()
        .map(|s| s.0.load(Ordering::Relaxed))
        .sum()
}

/// Runs `testcase` in `run.tasks` tasks; the iterations per second of all
/// of them together, or None if a task failed (the testcase returned false,
/// or a task could not be started).
pub fn run<F>(run: &Run, testcase: F) -> Option<u64>
where
    F: Fn(&mut Task) -> bool + Copy + Send + 'static,
{
    let tasks = (run.tasks as usize).clamp(1, MAX_TASKS);
    let flags = MAP_SHARED | MAP_ANONYMOUS;
    let len = core::mem::size_of::<Shared>().next_multiple_of(PAGE_SIZE);
    // SAFETY: new shared pages, which forked children share.
    let page = unsafe { mmap(0, len, PROT_READ | PROT_WRITE, flags, -1, 0) }.ok()?;
    // SAFETY: the pages are zeroed, a valid `Shared`, and are never unmapped.
    let shared: &'static Shared = unsafe { &*(page as *const Shared) };
    let task = move |i: usize| Task {
        shared,
        slot: &shared.slots[i].0,
        count: 0,
        started: false,
    };
    let mut threads = Vec::new();
    let mut pids = Vec::new();
    let mut started = true;
    for i in 0..tasks {
        if run.threads {
            match ulib::thread::spawn(move || task(i).run(testcase)) {
                Ok(h) => threads.push(h),
                Err(_) => started = false,
            }
        } else {
            match fork() {
                Ok(0) => exit_group(!task(i).run(testcase) as i32),
                Ok(pid) => pids.push(pid),
                Err(_) => started = false,
            }
        }
    }
    // Every task is ready (or gave up) before the clock starts.
    let running = threads.len() + pids.len();
    loop {
        let ready = shared.ready.load(Ordering::Acquire);
        if ready as usize >= running {
            break;
        }
        wait_while(&shared.ready, ready);
    }
    shared.go.store(1, Ordering::Release);
    let _ = futex_wake(&shared.go, i32::MAX, 0);
    let mut rate = None;
    if started {
        ulib::time::sleep(run.warmup);
        let (c0, t0) = (total(shared, tasks), crate::now_ns());
        ulib::time::sleep(run.time);
        let (c1, t1) = (total(shared, tasks), crate::now_ns());
        rate = Some((c1 - c0) * 1_000_000_000 / (t1 - t0).max(1));
    }
    shared.stop.store(1, Ordering::Relaxed);
    let mut ok = started;
    for h in threads {
        ok &= h.join() == Some(true);
    }
    for pid in pids {
        ok &= wait_for(pid).is_ok_and(|s| s.exit_code() == Some(0));
    }
    rate.filter(|_| ok)
}

/// The whole `main` of a benchmark that is only a testcase: runs it as
/// `args` say and reports `result <name> tasks=.. threads=.. ops_per_sec=..`.
pub fn main<F>(name: &str, args: &ulib::Args, testcase: F) -> i32
where
    F: Fn(&mut Task) -> bool + Copy + Send + 'static,
{
    let how = Run::from_args(args);
    let Some(ops_per_sec) = run(&how, testcase) else {
        return 1;
    };
    let threads = how.threads as u64;
    crate::report(
        name,
        &[
            ("tasks", &how.tasks),
            ("threads", &threads),
            ("ops_per_sec", &ops_per_sec),
        ],
    );
    0
}
