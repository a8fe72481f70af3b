//! Threads: [`spawn`] creates one with clone(2) on its own mmap'd stack;
//! [`JoinHandle::join`] waits for it by futex-waiting on its tid word, which
//! the kernel clears and wakes when the thread exits (CLONE_CHILD_CLEARTID).
//! ulib keeps no thread-local data: TPIDR_EL0 (the TLS register) is set to
//! the address of the thread's shared packet, so tests can check that the
//! kernel keeps it per thread.

use crate::errno::Errno;
use crate::mm::{mprotect, munmap, PAGE_SIZE, PROT_NONE};
use crate::process::*;
use crate::sync::futex_wait;
use crate::sys::{__NR_clone, __NR_sched_yield};
use crate::syscall;
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::arch::asm;
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicU32, Ordering};

/// Each thread's stack, above one PROT_NONE guard page.
const STACK_SIZE: usize = 256 * 1024;

const THREAD_FLAGS: usize = CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID;

/// Where a thread leaves its closure's return value for join.
struct Packet<T> {
    result: UnsafeCell<Option<T>>,
}

// SAFETY: result is written only by the thread and read only after the
// kernel has cleared the tid word, i.e. after the thread is gone.
unsafe impl<T: Send> Sync for Packet<T> {}

/// An owned permission to wait for a thread. Dropping it detaches the
/// thread, and its stack is never freed.
pub struct JoinHandle<T> {
    packet: Arc<Packet<T>>,
    /// The base of the guard page + stack mapping.
    stack: usize,
    tid: i32,
}

/// The thread's tid while it runs, 0 once it has exited: the kernel writes
/// it at both ends (CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID). It sits in
/// the 16 bytes above the thread's initial sp, so it lives exactly as long
/// as the stack mapping, which a detached thread never gives back.
fn tid_word(stack: usize) -> *mut u32 {
    (stack + PAGE_SIZE + STACK_SIZE - 16) as *mut u32
}

// The child half of clone: the parent returns the tid (or -errno); the child
// comes back from svc on its new stack, where nothing of the parent's frame
// exists, so it calls entry(arg) straight from here and never returns.
core::arch::global_asm!(
    ".globl __ulib_clone_thread",
    ".type __ulib_clone_thread, %function",
    "__ulib_clone_thread:",
    "mov x9, x5",
    "mov x10, x6",
    "mov x8, #{clone}",
    "svc #0",
    "cbz x0, 1f",
    "ret",
    "1:",
    "mov x29, xzr",
    "mov x30, xzr",
    "mov x0, x10",
    "blr x9",
    "brk #0",
    clone = const __NR_clone,
);

extern "C" {
    fn __ulib_clone_thread(
        flags: usize,
        stack: usize,
        parent_tid: *mut u32,
        tls: usize,
        child_tid: *mut u32,
        entry: extern "C" fn(*mut c_void) -> !,
        arg: *mut c_void,
    ) -> isize;
}

type Main = Box<dyn FnOnce() + Send>;

/// The first Rust code of a new thread: run its closure, then end only this
/// thread.
extern "C" fn thread_start(main: *mut c_void) -> ! {
    // SAFETY: spawn leaked this Box<Main> for us.
    let main = unsafe { Box::from_raw(main as *mut Main) };
    main();
    exit(0)
}

/// Starts a thread running `f`.
pub fn spawn<F, T>(f: F) -> Result<JoinHandle<T>, Errno>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let packet = Arc::new(Packet {
        result: UnsafeCell::new(None),
    });
    let stack = crate::mm::map_anon(PAGE_SIZE + STACK_SIZE)?;
    // SAFETY: the guard page is the bottom of a mapping we just made.
    unsafe { mprotect(stack, PAGE_SIZE, PROT_NONE) }?;
    let theirs = packet.clone();
    let main: Main = Box::new(move || {
        let result = f();
        // SAFETY: only this thread touches result until it exits.
        unsafe { *theirs.result.get() = Some(result) };
    });
    let main = Box::into_raw(Box::new(main));
    let tid = tid_word(stack);
    // SAFETY: the child starts below its tid word on its own stack, in
    // thread_start, and never returns here.
    let ret = unsafe {
        __ulib_clone_thread(
            THREAD_FLAGS,
            tid as usize,
            tid,
            Arc::as_ptr(&packet) as usize,
            tid,
            thread_start,
            main as *mut c_void,
        )
    };
    match syscall::check(ret) {
        Ok(tid) => Ok(JoinHandle {
            packet,
            stack,
            tid: tid as i32,
        }),
        Err(errno) => {
            // SAFETY: no thread was created, so nothing else owns these.
            unsafe {
                drop(Box::from_raw(main));
                let _ = munmap(stack, PAGE_SIZE + STACK_SIZE);
            }
            Err(errno)
        }
    }
}

impl<T> JoinHandle<T> {
    /// The thread's id.
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// The TPIDR_EL0 value the thread was started with.
    pub fn tls(&self) -> usize {
        Arc::as_ptr(&self.packet) as usize
    }

    /// Waits for the thread to exit and returns what its closure returned,
    /// or None if it ended some other way (it called `exit`, say).
    pub fn join(self) -> Option<T> {
        // SAFETY: the word is in the stack mapping, which stays mapped
        // until the munmap below.
        let word = unsafe { AtomicU32::from_ptr(tid_word(self.stack)) };
        loop {
            let tid = word.load(Ordering::Acquire);
            if tid == 0 {
                break;
            }
            // Not FUTEX_PRIVATE_FLAG: the kernel's wake at thread exit is a
            // shared-futex wake, as in Linux's mm_release().
            let _ = futex_wait(word, tid, None, 0);
        }
        // SAFETY: the thread has exited, so nothing runs on its stack.
        unsafe {
            let _ = munmap(self.stack, PAGE_SIZE + STACK_SIZE);
        }
        // SAFETY: the thread has exited, so nothing else touches result.
        unsafe { (*self.packet.result.get()).take() }
    }
}

/// Gives up the CPU to another runnable thread, if any.
pub fn sched_yield() {
    // SAFETY: no memory is passed.
    let _ = unsafe { syscall!(__NR_sched_yield) };
}

/// The calling thread's TPIDR_EL0.
pub fn tls_register() -> usize {
    let value: usize;
    // SAFETY: EL0 may read TPIDR_EL0.
    unsafe { asm!("mrs {}, tpidr_el0", out(reg) value, options(nomem, nostack)) };
    value
}
