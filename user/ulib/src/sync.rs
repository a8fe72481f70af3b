//! Futexes and the mutex built on them. A futex is a 32-bit word in user
//! memory: FUTEX_WAIT sleeps while the word still holds an expected value,
//! FUTEX_WAKE wakes sleepers. The kernel only keeps the wait queues; the
//! lock state lives in the word.

use crate::errno::Errno;
use crate::sys::__NR_futex;
use crate::syscall;
use crate::time::Timespec;
use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};
pub use uapi::futex::{FUTEX_PRIVATE_FLAG, FUTEX_WAIT, FUTEX_WAKE};

/// Sleeps while `*word == expected`, at most `timeout` (relative) if given.
/// `flags` is 0 or `FUTEX_PRIVATE_FLAG`. Fails with EAGAIN if the word
/// already differs, ETIMEDOUT when the timeout passes.
pub fn futex_wait(
    word: &AtomicU32,
    expected: u32,
    timeout: Option<&Timespec>,
    flags: u32,
) -> Result<(), Errno> {
    let timeout = timeout.map_or(ptr::null(), |t| t as *const Timespec);
    // SAFETY: the kernel reads the word and the timeout, and writes neither.
    unsafe {
        syscall!(
            __NR_futex,
            word.as_ptr(),
            FUTEX_WAIT | flags,
            expected,
            timeout
        )
    }
    .map(drop)
}

/// Wakes at most `count` sleepers on `word`; returns how many woke. The
/// count is Linux's `int`: all of them is `i32::MAX`, and a count of 0 or
/// below wakes one.
pub fn futex_wake(word: &AtomicU32, count: i32, flags: u32) -> Result<usize, Errno> {
    // SAFETY: FUTEX_WAKE does not access memory.
    unsafe { syscall!(__NR_futex, word.as_ptr(), FUTEX_WAKE | flags, count) }
}

/// A mutex for the threads of one process (Drepper's "Futexes Are Tricky",
/// mutex 2). The word is 0 when unlocked, 1 when locked, 2 when locked with
/// possible sleepers, so an unlock only enters the kernel if someone sleeps.
pub struct Mutex<T> {
    state: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out the value to one thread at a time.
unsafe impl<T: Send> Sync for Mutex<T> {}

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Self {
        Mutex {
            state: AtomicU32::new(UNLOCKED),
            value: UnsafeCell::new(value),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Mark the lock contended before sleeping, so the holder's
            // unlock knows to wake us.
            while self.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
                let _ = futex_wait(&self.state, CONTENDED, None, FUTEX_PRIVATE_FLAG);
            }
        }
        MutexGuard { mutex: self }
    }
}

pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if self.mutex.state.swap(UNLOCKED, Ordering::Release) == CONTENDED {
            let _ = futex_wake(&self.mutex.state, 1, FUTEX_PRIVATE_FLAG);
        }
    }
}
