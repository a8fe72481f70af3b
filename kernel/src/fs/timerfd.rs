//! timerfd: a timer whose expirations are read from a file (Linux:
//! `fs/timerfd.c`). A read returns, as 8 bytes, how many times the timer
//! expired since it was set or last read.
//!
//! Where we simplify: there is no timer interrupt per timer; expirations
//! are counted from the counter whenever the file is read or polled, and a
//! sleeper or poller wakes at the next expiry through its sleep deadline.
//! An absolute CLOCK_REALTIME time is turned into the counter value it
//! falls on when the timer is set, so a later clock_settime does not move
//! it, and TFD_TIMER_CANCEL_ON_SET never fires.

use alloc::sync::Arc;

use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollQueue, PollWaiter, POLLIN};
use crate::sync::SpinLock;
pub use uapi::time::{TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET};

/// The armed state, in counter ticks.
#[derive(Default)]
struct TimerState {
    /// The next expiry; None when disarmed.
    next: Option<u64>,
    /// The period after each expiry; 0 for a one-shot timer.
    interval: u64,
    /// Expirations not yet read (Linux: `ctx->ticks`).
    ticks: u64,
}

impl TimerState {
    /// Counts the expirations up to `now` (Linux: `timerfd_tmrproc`,
    /// and `hrtimer_forward_now` for a periodic timer).
    fn update(&mut self, now: u64) {
        let Some(next) = self.next else { return };
        if now < next {
            return;
        }
        match (now - next).checked_div(self.interval) {
            None => {
                self.ticks += 1;
                self.next = None;
            }
            Some(periods) => {
                let n = periods + 1;
                self.ticks = self.ticks.saturating_add(n);
                self.next = Some(next.saturating_add(n.saturating_mul(self.interval)));
            }
        }
    }
}

/// One timerfd (Linux: `struct timerfd_ctx`).
pub struct TimerFd {
    /// When the timer expires next and the expirations not yet read, updated
    /// from the counter whenever the file is looked at.
    state: SpinLock<TimerState>,
    /// Readers and pollers; woken when timerfd_settime changes the timer (an
    /// expiry itself wakes nobody: they sleep until the next one).
    wait: PollQueue,
    /// Counts CLOCK_REALTIME (or its _ALARM twin), whose absolute times
    /// are offset from the counter's.
    pub realtime: bool,
}

/// A timer's value as timerfd_gettime reports it: (interval, remaining),
/// in counter ticks.
pub type TimerValue = (u64, u64);

impl TimerFd {
    /// A disarmed timer (Linux: `timerfd_create`); `realtime` for the
    /// CLOCK_REALTIME clocks, whose absolute times the caller converts.
    pub fn new(realtime: bool) -> Arc<TimerFd> {
        Arc::new(TimerFd {
            state: SpinLock::new(TimerState::default()),
            wait: PollQueue::new(),
            realtime,
        })
    }

    /// `st` as timerfd_gettime reports it at counter value `now`: (interval,
    /// ticks left until the next expiry, 0 if disarmed).
    fn value(st: &TimerState, now: u64) -> TimerValue {
        (st.interval, st.next.map_or(0, |n| n.saturating_sub(now)))
    }

    /// The current value (Linux: `timerfd_gettime`).
    pub fn get(&self) -> TimerValue {
        let now = timer::counter();
        let mut st = self.state.lock();
        st.update(now);
        Self::value(&st, now)
    }

    /// Arms the timer to expire at counter value `first` (None: disarm)
    /// and every `interval` ticks after; returns the old value and drops
    /// unread expirations (Linux: `do_timerfd_settime`).
    pub fn set(&self, first: Option<u64>, interval: u64) -> TimerValue {
        let now = timer::counter();
        let mut st = self.state.lock();
        st.update(now);
        let old = Self::value(&st, now);
        *st = TimerState {
            next: first,
            interval: if first.is_some() { interval } else { 0 },
            ticks: 0,
        };
        drop(st);
        self.wait.wake();
        old
    }

    /// Brings the expiration count up to now; true if there are expirations
    /// to read.
    fn expired(&self) -> bool {
        let mut st = self.state.lock();
        st.update(timer::counter());
        st.ticks > 0
    }
}

impl Device for TimerFd {
    /// Linux: `timerfd_read`: EINVAL under 8 bytes; waits (or EAGAIN)
    /// until an expiry.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        if buf.len() < 8 {
            return Err(Errno::EINVAL);
        }
        loop {
            {
                let mut st = self.state.lock();
                st.update(timer::counter());
                if st.ticks > 0 {
                    let ticks = core::mem::take(&mut st.ticks);
                    buf[..8].copy_from_slice(&ticks.to_ne_bytes());
                    return Ok(8);
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            self.wait.wait_event_timeout(
                || self.expired(),
                || self.state.lock().next.unwrap_or(u64::MAX),
            )?;
        }
    }

    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    fn poll(&self, _flags: u32) -> u32 {
        if self.expired() {
            POLLIN
        } else {
            0
        }
    }

    /// Woken by timerfd_settime; the next expiry is the time to look again.
    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        self.state.lock().next
    }
}
