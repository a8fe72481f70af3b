//! Threads and the scheduler.
//!
//! Each CPU has its own run queue and an idle thread (the CPU's boot
//! context); threads stay on the CPU they were given at spawn (no load
//! balancing, unlike Linux's CFS). Preemption happens on the timer tick when
//! interrupts were enabled, which is never while a spin lock is held.

mod sched;
mod thread;
mod wait;

pub use sched::{
    cpu_online, init_this_cpu, msleep, nr_cpus_online, preempt_on_irq_exit, set_need_resched,
    start_idle_loop, this_cpu_ticks, tick, yield_now, HZ,
};
pub use thread::{spawn, spawn_on};
pub use wait::WaitQueue;
