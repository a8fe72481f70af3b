//! A kernel thread (Linux: `struct task_struct` reduced to what a kernel
//! thread needs): its saved context, its kernel stack, its state.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use crate::arch::context::Context;
use crate::arch::trap::TrapFrame;
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::frame;
use crate::sync::SpinLock;
use crate::task::process::UserThread;
use crate::task::sched;
use crate::task::wait::WaitQueue;

/// 32K kernel stacks (arm64 Linux uses 16K; our Rust frames are larger);
/// 64K in the unoptimised build `make gdb` steps, whose frames are larger
/// still: 32K overflows there in deep path lookups (40 symlinks).
pub const KSTACK_ORDER: usize = if cfg!(debug_assertions) { 4 } else { 3 };
/// Pages in kernel stacks (Linux: `NR_KERNEL_STACK_KB`), for
/// `/proc/meminfo`'s `KernelStack`.
pub static KERNEL_STACK_PAGES: AtomicUsize = AtomicUsize::new(0);
/// Written at the bottom of every kernel stack and checked at each switch:
/// a thread that overran its stack is caught before it corrupts more
/// (Linux catches it with guard pages around vmapped stacks).
const STACK_CANARY: u64 = 0x57ac_c0de_57ac_c0de;

/// Where a thread is in its life, as the scheduler sees it (Linux:
/// `task->__state` together with `on_rq`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// On a CPU now.
    Running = 0,
    /// Waiting in a run queue.
    Runnable = 1,
    /// Asleep until someone wakes it.
    Blocked = 2,
    /// Finished; freed once nothing refers to it.
    Dead = 3,
}

/// A schedulable thread: kernel or user, with its saved context, kernel
/// stack and state (Linux: `struct task_struct`; the user-process half is
/// [`UserThread`]).
pub struct Thread {
    /// The process this thread runs user code for; None for kernel threads.
    pub user: Option<UserThread>,
    /// The CPU whose run queue this thread lives on.
    pub cpu: usize,
    /// A [`State`] as its `u8`; `try_wake` and `try_set_running` change it
    /// with a compare-exchange, so a waker and the sleeper agree on who wins.
    state: AtomicU8,
    /// The callee-saved registers, `sp`, TPIDR_EL0 and FP/SIMD state
    /// `switch_to` saves when the thread leaves its CPU and loads when it comes
    /// back (Linux: `thread_struct`'s `cpu_context`).
    context: UnsafeCell<Context>,
    /// None for a CPU's idle thread, which runs on its boot stack.
    kstack: Option<PhysAddr>,
    /// The closure a new thread runs first, taken by the thread itself in
    /// `thread_main`; then None.
    entry: UnsafeCell<Option<Box<dyn FnOnce() + Send>>>,
    /// Where [`Thread::join`] waits for the thread to be Dead.
    exited: WaitQueue,
    /// CPU time accounting (Linux: `se.sum_exec_runtime`, `utime`, `stime`).
    acct: SpinLock<CpuAcct>,
}

/// A thread's CPU time: exact time on a CPU from the counter, read at each
/// switch (Linux: `update_curr`), and how many ticks found it in user
/// space or in the kernel, which split that time into user and system
/// (Linux: tick-based `account_process_tick` and `cputime_adjust`).
#[derive(Default)]
struct CpuAcct {
    /// Counter ticks spent on a CPU, up to `exec_start`.
    sum_exec: u64,
    /// The counter when the thread last went on a CPU, if it is on one.
    exec_start: Option<u64>,
    /// Ticks that found the thread in user space (Linux: `account_user_time`).
    user_ticks: u64,
    /// Ticks that found the thread in the kernel (Linux:
    /// `account_system_time`).
    system_ticks: u64,
}

// SAFETY: `context` and `entry` are only touched by the scheduler of the
// thread's own CPU with interrupts masked (context) or by the thread itself
// on its first run (entry).
unsafe impl Sync for Thread {}
// SAFETY: as for Sync: a Thread moves between run queues only while no
// CPU runs it, and its cells are touched by one party at a time.
unsafe impl Send for Thread {}

/// The round-robin cursor [`spawn`] spreads kernel threads with.
static NEXT_CPU: AtomicUsize = AtomicUsize::new(0);

impl Thread {
    /// The thread a CPU was already running when it came up.
    pub(super) fn new_idle(cpu: usize) -> Arc<Thread> {
        Arc::new(Thread {
            user: None,
            cpu,
            state: AtomicU8::new(State::Running as u8),
            context: UnsafeCell::new(Context::default()),
            kstack: None,
            entry: UnsafeCell::new(None),
            exited: WaitQueue::new(),
            acct: SpinLock::new(CpuAcct::default()),
        })
    }

    /// The thread goes on a CPU at counter value `now`.
    pub(super) fn account_start(&self, now: u64) {
        self.acct.lock().exec_start = Some(now);
    }

    /// The thread leaves its CPU at counter value `now`.
    pub(super) fn account_stop(&self, now: u64) {
        let mut a = self.acct.lock();
        if let Some(start) = a.exec_start.take() {
            a.sum_exec += now.saturating_sub(start);
        }
    }

    /// A timer tick found this thread running, in user space or not.
    pub(super) fn account_tick(&self, user: bool) {
        let mut a = self.acct.lock();
        if user {
            a.user_ticks += 1;
        } else {
            a.system_ticks += 1;
        }
    }

    /// Nanoseconds on a CPU so far (CLOCK_THREAD_CPUTIME_ID).
    pub fn runtime_ns(&self) -> u64 {
        let a = self.acct.lock();
        let running = a
            .exec_start
            .map_or(0, |s| crate::arch::timer::counter().saturating_sub(s));
        crate::task::clock::counter_to_ns(a.sum_exec + running)
    }

    /// Minor page faults the thread has taken; none for a kernel thread.
    pub fn min_flt(&self) -> u64 {
        self.user
            .as_ref()
            .map_or(0, |u| u.min_flt.load(Ordering::Relaxed))
    }

    /// (user, system) nanoseconds: the runtime split as the ticks were
    /// (Linux: `cputime_adjust`, which also gives all of it to one side
    /// when the other saw no tick).
    pub fn cputime(&self) -> (u64, u64) {
        let rtime = self.runtime_ns();
        let (u, s) = {
            let a = self.acct.lock();
            (a.user_ticks, a.system_ticks)
        };
        match (u, s) {
            (_, 0) => (rtime, 0),
            (0, _) => (0, rtime),
            _ => {
                let utime = (rtime as u128 * u as u128 / (u + s) as u128) as u64;
                (utime, rtime - utime)
            }
        }
    }

    /// The thread's [`State`] now; another CPU may change it a moment later.
    pub fn state(&self) -> State {
        match self.state.load(Ordering::Acquire) {
            0 => State::Running,
            1 => State::Runnable,
            2 => State::Blocked,
            _ => State::Dead,
        }
    }

    /// Sets the state outright; the scheduler's part, on the thread's
    /// own CPU (waking goes through `try_wake`).
    pub(super) fn set_state(&self, s: State) {
        self.state.store(s as u8, Ordering::Release);
    }

    /// Blocked -> Runnable; false if the thread was not blocked.
    pub(super) fn try_wake(&self) -> bool {
        self.state
            .compare_exchange(
                State::Blocked as u8,
                State::Runnable as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Blocked -> Running, for a thread that finds its condition true
    /// before sleeping; false if a waker got there first.
    pub(super) fn try_set_running(&self) -> bool {
        self.state
            .compare_exchange(
                State::Blocked as u8,
                State::Running as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Where `switch_to` saves and restores this thread's registers; only
    /// this thread's CPU's scheduler, with interrupts masked, may use it.
    pub(super) fn context(&self) -> *mut Context {
        self.context.get()
    }

    /// Where this user thread's registers are saved while it is in the
    /// kernel: the top of its kernel stack.
    pub fn user_frame(&self) -> *mut TrapFrame {
        let stack = self.kstack.expect("a user thread has a kernel stack");
        (phys_to_virt(stack) + (PAGE_SIZE << KSTACK_ORDER) - core::mem::size_of::<TrapFrame>())
            as *mut TrapFrame
    }

    /// A copy of the registers this user thread saved on entering the
    /// kernel (for `/proc/PID/syscall`). Meaningful only while the thread
    /// stays in the kernel: it is the caller, or it sleeps there; read
    /// while it runs, the copy may mix two entries' registers.
    pub fn saved_user_regs(&self) -> TrapFrame {
        // SAFETY: the frame lies in this thread's kernel stack, which
        // lives as long as the thread; a volatile read of plain registers
        // is at worst stale, never invalid.
        unsafe { core::ptr::read_volatile(self.user_frame()) }
    }

    /// Panics if this thread has overrun its kernel stack.
    pub(super) fn check_stack(&self) {
        if let Some(stack) = self.kstack {
            // SAFETY: the lowest word of this thread's own stack.
            let canary = unsafe { *(phys_to_virt(stack) as *const u64) };
            assert!(canary == STACK_CANARY, "kernel stack overflow");
        }
    }

    /// Is this a CPU's idle thread (the only kind without a kernel stack of
    /// its own)?
    pub fn is_idle(&self) -> bool {
        self.kstack.is_none()
    }

    /// Wakes the threads in [`Thread::join`], as the thread dies.
    pub(super) fn wake_joiners(&self) {
        self.exited.wake_all();
    }

    /// Waits until the thread has finished.
    pub fn join(&self) {
        self.exited.wait_until(|| self.state() == State::Dead);
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        if let Some(stack) = self.kstack {
            frame::free_pages(stack, KSTACK_ORDER).expect("kernel stack freed twice");
            KERNEL_STACK_PAGES.fetch_sub(1 << KSTACK_ORDER, Ordering::Relaxed);
        }
    }
}

/// Entry of every new thread, on its own stack (see `Context::new`).
extern "C" fn thread_main(thread: usize) -> ! {
    sched::finish_task_switch();
    crate::arch::cpu::local_irq_enable();
    // SAFETY: `thread` is the Arc pointer spawn() kept alive in the run
    // queue; entry is taken once, by the thread itself.
    let t = unsafe { &*(thread as *const Thread) };
    // SAFETY: only the thread itself, here, on its first run, touches
    // `entry` after spawn() filled it.
    let f = unsafe { (*t.entry.get()).take() }.expect("thread entry run twice");
    f();
    sched::exit_current_thread();
}

/// Starts `f` in a new kernel thread on CPU `cpu`.
pub fn spawn_on(cpu: usize, f: impl FnOnce() + Send + 'static) -> Arc<Thread> {
    spawn_with(cpu, None, f).expect("no memory for a kernel stack")
}

/// Starts a thread of a user process on CPU `cpu`: it enters user space
/// with the registers in `frame` (Linux: `copy_thread` + `ret_from_fork`).
/// Also copies the caller's FP/SIMD registers, as fork and clone do, and
/// sets TPIDR_EL0 to `tls`.
pub fn spawn_user(cpu: usize, user: UserThread, frame: TrapFrame, tls: u64) -> Option<Arc<Thread>> {
    let t = spawn_with(cpu, Some((user, frame, tls)), || {})?;
    Some(t)
}

/// The work of [`spawn_on`] and [`spawn_user`] (Linux: `copy_process`'s
/// stack and context set-up): allocate and mark the kernel stack, put
/// `user`'s registers at its top, and queue the thread on `cpu`. None if
/// there is no memory for the stack.
fn spawn_with(
    cpu: usize,
    user: Option<(UserThread, TrapFrame, u64)>,
    f: impl FnOnce() + Send + 'static,
) -> Option<Arc<Thread>> {
    let stack = frame::alloc_kernel_pages(KSTACK_ORDER)?;
    KERNEL_STACK_PAGES.fetch_add(1 << KSTACK_ORDER, Ordering::Relaxed);
    // SAFETY: the bottom word of a fresh stack, ours alone.
    unsafe { (phys_to_virt(stack) as *mut u64).write(STACK_CANARY) };
    let mut stack_top = phys_to_virt(stack) + (PAGE_SIZE << KSTACK_ORDER);
    let (user, tls, fpsimd) = match user {
        Some((u, tf, tls)) => {
            // The user registers sit at the very top of the kernel stack,
            // where every later exception from EL0 will put them too.
            stack_top -= core::mem::size_of::<TrapFrame>();
            // SAFETY: the top of a fresh stack, ours alone.
            unsafe { (stack_top as *mut TrapFrame).write(tf) };
            (Some(u), tls, crate::arch::context::fpsimd_save())
        }
        None => (None, 0, Default::default()),
    };
    let is_user = user.is_some();
    let t = Arc::new(Thread {
        user,
        cpu,
        state: AtomicU8::new(State::Runnable as u8),
        context: UnsafeCell::new(Context::default()),
        kstack: Some(stack),
        entry: UnsafeCell::new(Some(Box::new(f))),
        exited: WaitQueue::new(),
        acct: SpinLock::new(CpuAcct::default()),
    });
    let entry = if is_user {
        user_thread_main
    } else {
        thread_main
    };
    let mut ctx = Context::new(stack_top, entry, Arc::as_ptr(&t) as usize);
    ctx.tpidr_el0 = tls;
    ctx.fpsimd = fpsimd;
    // SAFETY: the thread is not yet visible to any scheduler.
    unsafe { *t.context.get() = ctx };
    if is_user {
        // Counted in its process before it can run (and exit).
        crate::task::process::register_thread(&t);
    }
    sched::enqueue(t.clone());
    Some(t)
}

/// Entry of a new user thread: straight out to EL0 through the registers
/// spawn_user left at the top of its stack.
extern "C" fn user_thread_main(thread: usize) -> ! {
    sched::finish_task_switch();
    // SAFETY: as in thread_main: the run queue keeps the thread alive.
    let t = unsafe { &*(thread as *const Thread) };
    crate::arch::cpu::local_irq_enable();
    crate::task::process::schedule_tail(t.user.as_ref().expect("a user thread"));
    crate::arch::trap::return_to_user(t.user_frame())
}

/// Starts `f` in a new kernel thread, spreading threads over online CPUs.
pub fn spawn(f: impl FnOnce() + Send + 'static) -> Arc<Thread> {
    let cpu = NEXT_CPU.fetch_add(1, Ordering::Relaxed) % sched::nr_cpus_online();
    spawn_on(cpu, f)
}
