//! Wait queues: sleep until a condition holds (Linux: `wait_event` /
//! `wake_up_all`, `kernel/sched/wait.c`).

use alloc::collections::VecDeque;
use alloc::sync::Arc;

use crate::arch::cpu::{local_irq_restore, local_irq_save};
use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::sched;
use crate::task::thread::{State, Thread};

/// Threads sleeping until a condition holds (Linux: `wait_queue_head_t`);
/// waking wakes them all, and each re-tests its condition.
pub struct WaitQueue {
    /// The sleepers, in the order they queued; `wake_all` empties it.
    waiters: SpinLock<VecDeque<Arc<Thread>>>,
}

impl Default for WaitQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitQueue {
    /// An empty queue; `const`, so statics can hold one.
    pub const fn new() -> Self {
        WaitQueue {
            waiters: SpinLock::new(VecDeque::new()),
        }
    }

    /// Sleeps until `cond()` is true. The thread marks itself Blocked and
    /// queues itself *before* testing `cond`, so a waker that makes `cond`
    /// true after the test still finds it (no lost wake-up). `cond` runs with
    /// interrupts masked and must not sleep.
    ///
    /// Interrupts stay masked from marking Blocked to `schedule()`: a tick
    /// preempting us in between would switch away from a Blocked thread that
    /// may already have missed its wake-up, and it would never run again.
    pub fn wait_until(&self, mut cond: impl FnMut() -> bool) {
        let me = sched::current();
        loop {
            let daif = local_irq_save();
            {
                let mut w = self.waiters.lock();
                me.set_state(State::Blocked);
                w.push_back(me.clone());
            }
            if cond() {
                self.waiters.lock().retain(|t| !Arc::ptr_eq(t, &me));
                if !me.try_set_running() {
                    // A waker already queued us: let the scheduler consume
                    // that run-queue entry rather than run twice.
                    sched::schedule();
                }
                local_irq_restore(daif);
                return;
            }
            sched::schedule();
            local_irq_restore(daif);
        }
    }

    /// Like `wait_until`, but a signal for the calling user thread ends the
    /// wait early with EINTR (Linux: `wait_event_interruptible`).
    pub fn wait_interruptible(&self, mut cond: impl FnMut() -> bool) -> KResult<()> {
        let mut interrupted = false;
        self.wait_until(|| {
            interrupted = crate::task::signal::signal_pending();
            interrupted || cond()
        });
        if interrupted {
            Err(Errno::EINTR)
        } else {
            Ok(())
        }
    }

    /// Wakes every waiter; each re-tests its condition.
    pub fn wake_all(&self) {
        let waiters = core::mem::take(&mut *self.waiters.lock());
        for t in waiters {
            sched::wake_up(&t);
        }
    }
}
