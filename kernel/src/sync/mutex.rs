//! A sleeping mutex (Linux: `struct mutex`, `kernel/locking/mutex.c`): a
//! waiter blocks on a wait queue instead of spinning, so it may be held
//! across long work (copying megabytes into the page cache) and while
//! sleeping, unlike `SpinLock`. Only threads may take it, never interrupt
//! handlers. No owner tracking or optimistic spinning.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

use crate::task::WaitQueue;

/// A lock whose waiters sleep instead of spinning (Linux: `struct mutex`).
pub struct Mutex<T: ?Sized> {
    /// Set while a thread holds the lock (Linux tracks this in `owner`, which
    /// also names the holder; here nobody records who).
    locked: AtomicBool,
    /// Threads sleeping until the lock is released (Linux: `wait_list`);
    /// every unlock wakes them all and they race to take it again.
    waiters: WaitQueue,
    /// The protected data, reached only through a `MutexGuard`.
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `value`.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// SAFETY: the value moves with the mutex; T itself may move between threads.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}

/// Proof that this thread holds `mutex`: derefs to the data and unlocks on
/// drop (Linux has no guard; the caller pairs `mutex_lock` with
/// `mutex_unlock`).
pub struct MutexGuard<'a, T: ?Sized> {
    /// The mutex this guard holds.
    mutex: &'a Mutex<T>,
}

impl<T> Mutex<T> {
    /// An unlocked mutex around `value` (Linux: `DEFINE_MUTEX` /
    /// `mutex_init`).
    pub const fn new(value: T) -> Self {
        Mutex {
            locked: AtomicBool::new(false),
            waiters: WaitQueue::new(),
            value: UnsafeCell::new(value),
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the lock if it is free, without sleeping; true if we got it
    /// (Linux: `mutex_trylock`).
    fn try_acquire(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// The value, through exclusive access (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// Takes the lock, sleeping until it is free (Linux: `mutex_lock`). Must
    /// not be called from an interrupt handler or with a `SpinLock` held.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        if !self.try_acquire() {
            self.waiters.wait_until(|| self.try_acquire());
        }
        MutexGuard { mutex: self }
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: we hold the lock.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: we hold the lock.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.locked.store(false, Ordering::Release);
        self.mutex.waiters.wake_all();
    }
}
