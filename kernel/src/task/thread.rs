//! A kernel thread (Linux: `struct task_struct` reduced to what a kernel
//! thread needs): its saved context, its kernel stack, its state.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use crate::arch::context::Context;
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SIZE};
use crate::mm::frame;
use crate::task::sched;
use crate::task::wait::WaitQueue;

/// 16K kernel stacks, as on arm64 Linux.
const KSTACK_ORDER: usize = 2;

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

pub struct Thread {
    /// The CPU whose run queue this thread lives on.
    pub cpu: usize,
    state: AtomicU8,
    context: UnsafeCell<Context>,
    /// None for a CPU's idle thread, which runs on its boot stack.
    kstack: Option<PhysAddr>,
    entry: UnsafeCell<Option<Box<dyn FnOnce() + Send>>>,
    exited: WaitQueue,
}

// SAFETY: `context` and `entry` are only touched by the scheduler of the
// thread's own CPU with interrupts masked (context) or by the thread itself
// on its first run (entry).
unsafe impl Sync for Thread {}
unsafe impl Send for Thread {}

static NEXT_CPU: AtomicUsize = AtomicUsize::new(0);

impl Thread {
    /// The thread a CPU was already running when it came up.
    pub(super) fn new_idle(cpu: usize) -> Arc<Thread> {
        Arc::new(Thread {
            cpu,
            state: AtomicU8::new(State::Running as u8),
            context: UnsafeCell::new(Context::default()),
            kstack: None,
            entry: UnsafeCell::new(None),
            exited: WaitQueue::new(),
        })
    }

    pub fn state(&self) -> State {
        match self.state.load(Ordering::Acquire) {
            0 => State::Running,
            1 => State::Runnable,
            2 => State::Blocked,
            _ => State::Dead,
        }
    }

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

    pub(super) fn context(&self) -> *mut Context {
        self.context.get()
    }

    pub fn is_idle(&self) -> bool {
        self.kstack.is_none()
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
    let f = unsafe { (*t.entry.get()).take() }.expect("thread entry run twice");
    f();
    // No preemption from here: a preempted Dead thread never runs again,
    // and its joiners would wait for the wake-up below forever.
    crate::arch::cpu::local_irq_save();
    t.set_state(State::Dead);
    t.exited.wake_all();
    sched::schedule();
    unreachable!("a dead thread was scheduled");
}

/// Starts `f` in a new kernel thread on CPU `cpu`.
pub fn spawn_on(cpu: usize, f: impl FnOnce() + Send + 'static) -> Arc<Thread> {
    let stack = frame::alloc_pages(KSTACK_ORDER).expect("no memory for a kernel stack");
    let stack_top = phys_to_virt(stack) + (PAGE_SIZE << KSTACK_ORDER);
    let t = Arc::new(Thread {
        cpu,
        state: AtomicU8::new(State::Runnable as u8),
        context: UnsafeCell::new(Context::default()),
        kstack: Some(stack),
        entry: UnsafeCell::new(Some(Box::new(f))),
        exited: WaitQueue::new(),
    });
    // SAFETY: the thread is not yet visible to any scheduler.
    unsafe { *t.context.get() = Context::new(stack_top, thread_main, Arc::as_ptr(&t) as usize) };
    sched::enqueue(t.clone());
    t
}

/// Starts `f` in a new kernel thread, spreading threads over online CPUs.
pub fn spawn(f: impl FnOnce() + Send + 'static) -> Arc<Thread> {
    let cpu = NEXT_CPU.fetch_add(1, Ordering::Relaxed) % sched::nr_cpus_online();
    spawn_on(cpu, f)
}
