//! Readiness: the POLL* bits a file reports, the queues a file wakes when
//! they may have changed, and the wait loop poll, select and epoll share
//! (Linux: `include/uapi/asm-generic/poll.h`, `fs/select.c` `do_poll`,
//! `wait_queue_head_t` and the `poll_table` entries `poll_wait` adds).
//!
//! The interface a pollable device implements (`Device::poll` and
//! `Device::poll_wait`, a tty included):
//! - `poll(flags)` says, without sleeping, which POLL* bits hold now for an
//!   open file with open flags `flags` (a pipe's read and write ends differ);
//! - `poll_wait(waiter)` puts `waiter` on the device's `PollQueue`s, and the
//!   device calls `PollQueue::wake` after every change that may make a bit
//!   true (data arrived, room freed, the other end closed). A device whose
//!   readiness changes with no event to wake from (a timer expiring, a
//!   UART with no receive interrupt) returns the counter value at which the
//!   waiter must look again.
//!
//! Where we simplify: a queue entry is taken off the queue when it is woken
//! (Linux leaves it until the poller tears its table down), so every scan
//! registers again; entries of pollers that have gone are dropped lazily.

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::fs::vfs::{File, InodeKind};
use crate::sync::SpinLock;
use crate::task::Thread;
pub use uapi::poll::{
    POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT, POLLPRI, POLLRDBAND, POLLRDHUP, POLLRDNORM,
    POLLWRBAND, POLLWRNORM,
};

/// What a file with no poll method reports: always readable and writable
/// (Linux: `DEFAULT_POLLMASK`), as regular files, directories and /proc do.
pub const DEFAULT_POLLMASK: u32 = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

/// Who a woken `PollWaiter` tells (Linux: the wait-queue entry's function:
/// `pollwake` for poll/select, `ep_poll_callback` for an epoll item).
enum Notify {
    /// A thread sleeping in poll, select, epoll_wait or a device's read.
    Thread(Arc<Thread>),
    /// An epoll item: wake whoever waits on its epoll instance.
    Queue(Weak<PollQueue>),
}

/// One poller's entry on the queues of the files it watches (Linux:
/// `struct poll_table_entry` / `struct eppoll_entry`).
pub struct PollWaiter {
    /// Set when a queue wakes this entry: the poller must look again. A plain
    /// poller reads it; epoll takes it as an edge for EPOLLET.
    woken: AtomicBool,
    /// Who is told when a queue wakes this entry.
    notify: Notify,
    /// The POLL* bits this entry cares about: a keyed wake for none of
    /// them passes it by (Linux: `ep_poll_callback`'s key test).
    interest: u32,
}

impl PollWaiter {
    /// An entry that wakes the calling thread.
    pub fn for_current() -> Arc<PollWaiter> {
        Arc::new(PollWaiter {
            woken: AtomicBool::new(false),
            notify: Notify::Thread(crate::task::current()),
            interest: u32::MAX,
        })
    }

    /// An entry that wakes everyone on `queue` (an epoll instance's),
    /// for changes to the bits of `interest`.
    pub fn for_queue(queue: &Arc<PollQueue>, interest: u32) -> Arc<PollWaiter> {
        Arc::new(PollWaiter {
            woken: AtomicBool::new(false),
            notify: Notify::Queue(Arc::downgrade(queue)),
            interest,
        })
    }

    /// Has a queue woken this entry since it was made or last taken?
    pub fn woken(&self) -> bool {
        self.woken.load(Ordering::Acquire)
    }

    /// Reads and clears the woken flag (an edge for EPOLLET).
    pub fn take_woken(&self) -> bool {
        self.woken.swap(false, Ordering::AcqRel)
    }

    /// Marks the entry woken without a queue (an epoll item just added).
    pub fn set_woken(&self) {
        self.woken.store(true, Ordering::Release);
    }

    /// Marks the entry woken and tells its thread or epoll instance (Linux:
    /// `pollwake`, `ep_poll_callback`).
    fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        match &self.notify {
            Notify::Thread(t) => crate::task::wake_up(t),
            Notify::Queue(q) => {
                if let Some(q) = q.upgrade() {
                    q.wake();
                }
            }
        }
    }
}

/// The pollers and sleepers of one file (Linux: `wait_queue_head_t`).
pub struct PollQueue {
    /// The entries on the queue, weakly: a woken entry is taken off, and one
    /// whose poller has gone is dropped at the next add or wake (Linux: the
    /// `head` list of `wait_queue_head_t`, under its lock).
    waiters: SpinLock<Vec<Weak<PollWaiter>>>,
}

impl Default for PollQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl PollQueue {
    /// An empty queue (Linux: `init_waitqueue_head`).
    pub const fn new() -> Self {
        PollQueue {
            waiters: SpinLock::new(Vec::new()),
        }
    }

    /// Puts `w` on the queue (Linux: `poll_wait` -> `add_wait_queue`), once.
    pub fn add(&self, w: &Arc<PollWaiter>) {
        let mut waiters = self.waiters.lock();
        waiters.retain(|x| x.strong_count() > 0 && !core::ptr::eq(x.as_ptr(), Arc::as_ptr(w)));
        waiters.push(Arc::downgrade(w));
    }

    /// Wakes every entry; each re-tests what it waits for.
    pub fn wake(&self) {
        self.wake_key(0);
    }

    /// Wakes the entries interested in the bits of `key` (0: all), for a
    /// change that can only make those bits true (Linux:
    /// `wake_up_interruptible_poll(wq, key)`): a pipe read frees room
    /// (POLLOUT), a write brings data (POLLIN).
    pub fn wake_key(&self, key: u32) {
        let woken: Vec<Arc<PollWaiter>> = {
            let mut waiters = self.waiters.lock();
            let mut woken = Vec::new();
            waiters.retain(|x| match x.upgrade() {
                Some(w) if key == 0 || w.interest & key != 0 => {
                    woken.push(w);
                    false
                }
                Some(_) => true,
                None => false,
            });
            woken
        };
        for w in woken {
            w.wake();
        }
    }

    /// Sleeps until `cond()` holds; EINTR on a signal (Linux:
    /// `wait_event_interruptible`). For a device's blocking read or write.
    pub fn wait_event(&self, cond: impl Fn() -> bool) -> KResult<()> {
        self.wait_event_timeout(cond, || u64::MAX)
    }

    /// As `wait_event`, also waking at the counter value `deadline()`, for
    /// conditions that become true with time (a timer's expiry).
    pub fn wait_event_timeout(
        &self,
        cond: impl Fn() -> bool,
        deadline: impl Fn() -> u64,
    ) -> KResult<()> {
        loop {
            let w = PollWaiter::for_current();
            self.add(&w);
            if cond() {
                return Ok(());
            }
            if crate::task::signal::signal_pending() {
                return Err(Errno::EINTR);
            }
            crate::task::sleep_until(deadline(), || {
                w.woken() || crate::task::signal::signal_pending() || cond()
            });
        }
    }
}

/// The readiness of an open file (Linux: `vfs_poll`).
pub fn file_poll(f: &File) -> u32 {
    match &f.inode.kind {
        InodeKind::Device(d) => d.poll(f.flags()),
        _ => DEFAULT_POLLMASK,
    }
}

/// Registers `w` with the file's queues; the counter value by which to
/// look again without a wake, if any (see the module comment).
pub fn file_poll_wait(f: &File, w: &Arc<PollWaiter>) -> Option<u64> {
    match &f.inode.kind {
        InodeKind::Device(d) => d.poll_wait(w),
        _ => None,
    }
}

/// Does the file have a poll method? (Linux: `file_can_poll`; epoll_ctl
/// refuses the others with EPERM.)
pub fn file_can_poll(f: &File) -> bool {
    matches!(f.inode.kind, InodeKind::Device(_))
}

/// Signals pending for the calling thread, its own and its process's.
fn pending_set() -> u64 {
    match &crate::task::current().user {
        Some(u) => {
            u.pending.load(Ordering::Acquire) | u.process.shared_pending.load(Ordering::Acquire)
        }
        None => 0,
    }
}

/// The loop of poll, select and epoll_wait (Linux: `do_poll`, `ep_poll`):
/// `scan(w)` registers `w` with every watched file, and returns how many
/// are ready and the earliest time to look again; sleep until one is
/// ready, the counter reaches `deadline` (u64::MAX: never) or a signal
/// comes (EINTR). Returns the ready count, 0 on timeout.
pub fn wait_ready(
    deadline: u64,
    mut scan: impl FnMut(&Arc<PollWaiter>) -> KResult<(usize, Option<u64>)>,
) -> KResult<usize> {
    loop {
        let w = PollWaiter::for_current();
        // A signal sent to a mask a signalfd watches wakes us but is not
        // "pending" for signal_pending: notice any change of the set.
        let pending = pending_set();
        let (ready, recheck) = scan(&w)?;
        if ready > 0 {
            return Ok(ready);
        }
        if timer::counter() >= deadline {
            return Ok(0);
        }
        if crate::task::signal::signal_pending() {
            return Err(Errno::EINTR);
        }
        let until = recheck.map_or(deadline, |r| r.min(deadline));
        crate::task::sleep_until(until, || {
            w.woken() || crate::task::signal::signal_pending() || pending_set() != pending
        });
    }
}

/// Nanoseconds to counter ticks, for timeouts.
pub fn ns_to_ticks(ns: u64) -> u64 {
    (ns as u128 * timer::frequency() as u128 / 1_000_000_000).min(u64::MAX as u128) as u64
}

/// Counter ticks to nanoseconds, for remaining times.
pub fn ticks_to_ns(ticks: u64) -> u64 {
    (ticks as u128 * 1_000_000_000 / timer::frequency() as u128).min(u64::MAX as u128) as u64
}
