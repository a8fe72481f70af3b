//! Locks: an IRQ-safe spin lock for short critical sections and a sleeping
//! mutex for long ones.
mod mutex;
mod spinlock;

pub use mutex::{Mutex, MutexGuard};
pub use spinlock::{SpinLock, SpinLockGuard};
