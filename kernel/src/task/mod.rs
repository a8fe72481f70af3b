//! Threads, processes and the scheduler.
//!
//! Each CPU has its own run queue and an idle thread (the CPU's boot
//! context); threads stay on the CPU they were given at spawn (no load
//! balancing, unlike Linux's CFS). Preemption happens on the timer tick when
//! interrupts were enabled, which is never while a spin lock is held.
//! A user thread is a kernel thread with a `UserThread`: a process it
//! belongs to, whose address space the scheduler switches to.

pub mod binfmt_script;
pub mod clock;
pub mod cred;
pub mod elf;
pub mod exec;
pub mod exit;
pub mod fork;
pub mod futex;
pub mod ntp;
pub mod process;
mod sched;
pub mod sched_policy;
pub mod signal;
pub mod signal_abi;
pub mod stack;
pub mod thread;
pub mod timers;
mod wait;

use alloc::sync::Arc;

use crate::arch::trap::TrapFrame;
use crate::mm::mm_struct::Mm;
pub use sched::{
    cpu_online, cpu_stat, current, current_ref, exit_current_thread, idle_ticks, init_this_cpu,
    msleep, nr_cpus_online, nr_running, preempt_on_irq_exit, set_need_resched, set_this_cpu,
    sleep_until, start_idle_loop, this_cpu_ticks, tick_interval, timer_interrupt, wake_up,
    yield_now, HZ,
};
pub use thread::{spawn, spawn_on, spawn_user, Thread};
pub use wait::WaitQueue;

use process::Process;

/// The process of the running thread, if it is a user thread.
pub fn current_process() -> Option<Arc<Process>> {
    current().user.as_ref().map(|u| u.process.clone())
}

/// The running thread's credentials: its process's, or root's for a
/// kernel thread (Linux: `current_cred()`, `init_cred`).
pub fn current_cred() -> cred::Cred {
    current_process().map_or_else(cred::Cred::root, |p| p.cred.lock().clone())
}

/// Does the running thread hold capability `cap` (Linux: `capable`)?
pub fn capable(cap: u32) -> bool {
    current_process().is_none_or(|p| p.cred.lock().capable(cap))
}

/// The address space user memory accesses and faults go to.
pub fn current_mm() -> Option<Arc<Mm>> {
    current_process().and_then(|p| p.mm())
}

/// The way back to EL0 after any kernel entry (Linux:
/// `exit_to_user_mode`): deliver pending signals, die if the process is
/// exiting, reschedule if asked.
pub fn exit_to_user(tf: &mut TrapFrame) {
    crate::mm::oom_kill::check();
    signal::do_signal(tf);
    preempt_on_irq_exit();
}
