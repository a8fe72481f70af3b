//! Locks that are safe against this CPU's own interrupt handlers.
mod spinlock;

pub use spinlock::SpinLock;
