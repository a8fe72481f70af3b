//! An IRQ-safe spin lock: interrupts are masked on this CPU while it is held
//! (Linux: `spin_lock_irqsave`), so an interrupt handler that takes the same
//! lock can never deadlock against the code it interrupted, and a holder is
//! never preempted (preemption only happens on the timer interrupt).

use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

use crate::arch::cpu::{local_irq_restore, local_irq_save};

pub struct SpinLock<T: ?Sized> {
    inner: spin::Mutex<T>,
}

pub struct SpinLockGuard<'a, T: ?Sized> {
    guard: ManuallyDrop<spin::MutexGuard<'a, T>>,
    daif: u64,
}

impl<T> SpinLock<T> {
    pub const fn new(value: T) -> Self {
        SpinLock {
            inner: spin::Mutex::new(value),
        }
    }
}

impl<T: ?Sized> SpinLock<T> {
    pub fn lock(&self) -> SpinLockGuard<'_, T> {
        let daif = local_irq_save();
        SpinLockGuard {
            guard: ManuallyDrop::new(self.inner.lock()),
            daif,
        }
    }
}

impl<T: ?Sized> Deref for SpinLockGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: ?Sized> DerefMut for SpinLockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T: ?Sized> Drop for SpinLockGuard<'_, T> {
    fn drop(&mut self) {
        // Unlock first, then unmask: an interrupt must not find the lock held.
        // local_irq_restore clobbers memory, so the compiler keeps this order.
        // SAFETY: the guard is dropped exactly once, here.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        local_irq_restore(self.daif);
    }
}
