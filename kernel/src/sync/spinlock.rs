//! An IRQ-safe spin lock: interrupts are masked on this CPU while it is held
//! (Linux: `spin_lock_irqsave`), so an interrupt handler that takes the same
//! lock can never deadlock against the code it interrupted, and a holder is
//! never preempted (preemption only happens on the timer interrupt).

use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

use crate::arch::cpu::{local_irq_restore, local_irq_save};

/// A spin lock taken with IRQs masked on this CPU (Linux: `spinlock_t` used
/// through `spin_lock_irqsave` / `spin_unlock_irqrestore`).
pub struct SpinLock<T: ?Sized> {
    /// The spinning lock itself, from the `spin` crate (Linux:
    /// `raw_spinlock_t`).
    inner: spin::Mutex<T>,
}

/// Proof that this CPU holds the lock with IRQs masked: derefs to the data,
/// and on drop unlocks and then restores the saved interrupt mask.
pub struct SpinLockGuard<'a, T: ?Sized> {
    /// The held `spin` lock; dropped by hand in `drop` so that the unlock
    /// happens before `daif` is restored.
    guard: ManuallyDrop<spin::MutexGuard<'a, T>>,
    /// DAIF as it was before `lock` masked IRQs, restored on drop (the
    /// `flags` of `spin_lock_irqsave`).
    daif: u64,
}

impl<T> SpinLock<T> {
    /// An unlocked spin lock around `value` (Linux: `DEFINE_SPINLOCK`).
    pub const fn new(value: T) -> Self {
        SpinLock {
            inner: spin::Mutex::new(value),
        }
    }
}

impl<T: ?Sized> SpinLock<T> {
    /// Masks IRQs on this CPU, then spins until the lock is free (Linux:
    /// `spin_lock_irqsave`). Keep the critical section short and never sleep
    /// in it.
    pub fn lock(&self) -> SpinLockGuard<'_, T> {
        let daif = local_irq_save();
        SpinLockGuard {
            guard: ManuallyDrop::new(self.inner.lock()),
            daif,
        }
    }

    /// As `lock`, but None at once if the lock is held (Linux:
    /// `spin_trylock_irqsave`).
    pub fn try_lock(&self) -> Option<SpinLockGuard<'_, T>> {
        let daif = local_irq_save();
        match self.inner.try_lock() {
            Some(guard) => Some(SpinLockGuard {
                guard: ManuallyDrop::new(guard),
                daif,
            }),
            None => {
                local_irq_restore(daif);
                None
            }
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
