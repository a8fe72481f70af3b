//! Threads, SMP, the tick and preemption.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{ensure, frames_in_use, Test, TestResult};
use crate::arch::{cpu, timer};
use crate::task::{self, WaitQueue};

/// The scheduler and SMP tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "smp_every_cpu_runs_threads",
        run: every_cpu_runs_threads,
    },
    Test {
        name: "sched_timer_ticks_on_every_cpu",
        run: ticks_on_every_cpu,
    },
    Test {
        name: "sched_preemption_stops_a_spinner_starving_others",
        run: preemption,
    },
    Test {
        name: "sched_msleep_sleeps_long_enough",
        run: msleep_duration,
    },
    Test {
        name: "sched_waitqueue_wakes_across_cpus",
        run: waitqueue_across_cpus,
    },
    Test {
        name: "sched_many_threads_and_stacks_come_back",
        run: many_threads,
    },
];

/// A thread pinned to each online CPU (`spawn_on`) runs on that CPU.
fn every_cpu_runs_threads() -> TestResult {
    let n = task::nr_cpus_online();
    let ran_on: Arc<Vec<AtomicUsize>> =
        Arc::new((0..n).map(|_| AtomicUsize::new(usize::MAX)).collect());
    let threads: Vec<_> = (0..n)
        .map(|c| {
            let ran_on = ran_on.clone();
            task::spawn_on(c, move || ran_on[c].store(cpu::cpu_id(), Ordering::SeqCst))
        })
        .collect();
    threads.iter().for_each(|t| t.join());
    for (c, r) in ran_on.iter().enumerate() {
        ensure!(
            r.load(Ordering::SeqCst) == c,
            "thread for CPU {} ran on {}",
            c,
            r.load(Ordering::SeqCst)
        );
    }
    Ok(())
}

/// The timer tick keeps arriving on every CPU: at least 3 ticks in a
/// 50 ms `msleep`.
fn ticks_on_every_cpu() -> TestResult {
    let n = task::nr_cpus_online();
    let deltas: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let threads: Vec<_> = (0..n)
        .map(|c| {
            let deltas = deltas.clone();
            task::spawn_on(c, move || {
                let before = task::this_cpu_ticks();
                task::msleep(50);
                deltas[c].store((task::this_cpu_ticks() - before) as usize, Ordering::SeqCst);
            })
        })
        .collect();
    threads.iter().for_each(|t| t.join());
    for (c, d) in deltas.iter().enumerate() {
        ensure!(
            d.load(Ordering::SeqCst) >= 3,
            "CPU {} ticked {} times in 50 ms",
            c,
            d.load(Ordering::SeqCst)
        );
    }
    Ok(())
}

/// Two threads on one CPU: the first spins, never yielding, until the
/// second sets a flag. Only the timer tick can let the second run.
fn preemption() -> TestResult {
    let cpu = task::nr_cpus_online() - 1;
    let flag = Arc::new(AtomicBool::new(false));
    let saw_flag = Arc::new(AtomicBool::new(false));
    let (f1, s1, f2) = (flag.clone(), saw_flag.clone(), flag.clone());
    let spinner = task::spawn_on(cpu, move || {
        let deadline = timer::counter() + timer::frequency(); // 1 s
        while timer::counter() < deadline {
            if f1.load(Ordering::SeqCst) {
                s1.store(true, Ordering::SeqCst);
                return;
            }
            core::hint::spin_loop();
        }
    });
    let setter = task::spawn_on(cpu, move || f2.store(true, Ordering::SeqCst));
    spinner.join();
    setter.join();
    ensure!(
        saw_flag.load(Ordering::SeqCst),
        "the spinner starved the other thread for 1 s"
    );
    Ok(())
}

/// `msleep(30)` sleeps at least 30 ms by the generic timer's counter.
fn msleep_duration() -> TestResult {
    let start = timer::counter();
    task::msleep(30);
    let ms = (timer::counter() - start) * 1000 / timer::frequency();
    ensure!(ms >= 30, "msleep(30) returned after {} ms", ms);
    Ok(())
}

/// A waiter on every CPU stays asleep until the condition is set, and one
/// `wake_all` wakes them all (Linux's `wait_event`/`wake_up_all`).
fn waitqueue_across_cpus() -> TestResult {
    let n = task::nr_cpus_online();
    let wq = Arc::new(WaitQueue::new());
    let ready = Arc::new(AtomicBool::new(false));
    let woke = Arc::new(AtomicUsize::new(0));
    let waiters: Vec<_> = (0..n)
        .map(|c| {
            let (wq, ready, woke) = (wq.clone(), ready.clone(), woke.clone());
            task::spawn_on(c, move || {
                wq.wait_until(|| ready.load(Ordering::SeqCst));
                woke.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    task::msleep(20);
    ensure!(
        woke.load(Ordering::SeqCst) == 0,
        "a waiter ran before the wake-up"
    );
    ready.store(true, Ordering::SeqCst);
    wq.wake_all();
    waiters.iter().for_each(|t| t.join());
    ensure!(
        woke.load(Ordering::SeqCst) == n,
        "{} of {} waiters woke",
        woke.load(Ordering::SeqCst),
        n
    );
    Ok(())
}

/// 128 threads in four rounds, each yielding ten times, all run to the
/// end, and every kernel stack is freed afterwards.
fn many_threads() -> TestResult {
    // Threads of earlier tests are freed at their CPU's next switch.
    task::msleep(30);
    let before = frames_in_use();
    let counter = Arc::new(AtomicUsize::new(0));
    for _round in 0..4 {
        let threads: Vec<_> = (0..32)
            .map(|_| {
                let counter = counter.clone();
                task::spawn(move || {
                    for _ in 0..10 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        task::yield_now();
                    }
                })
            })
            .collect();
        threads.iter().for_each(|t| t.join());
    }
    ensure!(
        counter.load(Ordering::SeqCst) == 4 * 32 * 10,
        "count {}",
        counter.load(Ordering::SeqCst)
    );
    // Each dead thread is freed at its CPU's next switch; let every CPU tick.
    task::msleep(30);
    let after = frames_in_use();
    ensure!(
        after == before,
        "frames in use {} -> {}: kernel stacks leaked",
        before,
        after
    );
    Ok(())
}
