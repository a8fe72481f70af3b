//! eventfd: a 64-bit counter as a file, for one thread or process to wake
//! another (Linux: `fs/eventfd.c`). A write adds to the counter, a read
//! takes all of it (or 1 with EFD_SEMAPHORE); 8 bytes each way.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollQueue, PollWaiter, POLLERR, POLLIN, POLLOUT};
use crate::sync::SpinLock;
pub use uapi::eventfd::EFD_SEMAPHORE;

/// The counter's largest value: a write that would pass it waits.
const MAX: u64 = u64::MAX - 1;

/// One eventfd (Linux: `struct eventfd_ctx`).
pub struct EventFd {
    /// The counter, 0 to `MAX` (Linux: `eventfd_ctx.count`).
    count: SpinLock<u64>,
    /// EFD_SEMAPHORE: a read takes 1 from the counter instead of all of it.
    semaphore: bool,
    /// Readers and writers waiting on the counter, and pollers (Linux:
    /// `eventfd_ctx.wqh`).
    wait: PollQueue,
}

impl EventFd {
    /// An eventfd whose counter starts at `initval` (Linux: `do_eventfd`).
    /// Only EFD_SEMAPHORE of `flags` matters here; EFD_NONBLOCK and
    /// EFD_CLOEXEC are the caller's, on the file and the descriptor.
    pub fn new(initval: u32, flags: u32) -> Arc<EventFd> {
        Arc::new(EventFd {
            count: SpinLock::new(initval as u64),
            semaphore: flags & EFD_SEMAPHORE != 0,
            wait: PollQueue::new(),
        })
    }
}

impl Device for EventFd {
    /// Linux: `eventfd_read`: EINVAL under 8 bytes, EAGAIN or a wait at 0.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        if buf.len() < 8 {
            return Err(Errno::EINVAL);
        }
        loop {
            {
                let mut count = self.count.lock();
                if *count > 0 {
                    let take = if self.semaphore { 1 } else { *count };
                    *count -= take;
                    drop(count);
                    buf[..8].copy_from_slice(&take.to_ne_bytes());
                    self.wait.wake();
                    return Ok(8);
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            self.wait.wait_event(|| *self.count.lock() > 0)?;
        }
    }

    /// Linux: `eventfd_write`: EINVAL under 8 bytes or for 2^64-1; waits
    /// (or EAGAIN) while the sum would pass 2^64-2.
    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        let Some(bytes) = data.get(..8) else {
            return Err(Errno::EINVAL);
        };
        let mut value = [0u8; 8];
        value.copy_from_slice(bytes);
        let value = u64::from_ne_bytes(value);
        if value == u64::MAX {
            return Err(Errno::EINVAL);
        }
        let fits = |count: u64| MAX - count >= value;
        loop {
            {
                let mut count = self.count.lock();
                if fits(*count) {
                    *count += value;
                    drop(count);
                    self.wait.wake();
                    return Ok(8);
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            self.wait.wait_event(|| fits(*self.count.lock()))?;
        }
    }

    /// Linux: `eventfd_poll`.
    fn poll(&self, _flags: u32) -> u32 {
        let count = *self.count.lock();
        let mut mask = 0;
        if count > 0 {
            mask |= POLLIN;
        }
        if count == u64::MAX {
            mask |= POLLERR;
        }
        if count < MAX {
            mask |= POLLOUT;
        }
        mask
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        None
    }
}
