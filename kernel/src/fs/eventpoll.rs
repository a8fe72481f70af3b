//! epoll: a file that watches other files and reports which are ready
//! (Linux: `fs/eventpoll.c`). Each watched (fd, file) is an item with its
//! own entry on the file's queues, which wakes the epoll instance's queue
//! when the file's readiness changes (Linux: `ep_poll_callback`); that is
//! also the edge EPOLLET reports.
//!
//! Where we simplify: there is no ready list; epoll_wait polls every item
//! (level-triggered items that were reported move to the back, so a small
//! `maxevents` still sees them all in turn, as Linux's ready list does).
//! An item holds its file weakly: it goes once the file is closed for the
//! last time, as on Linux. Each item counts against its creator's
//! `fs.epoll.max_user_watches`, kernel memory a user could otherwise
//! multiply without end.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{
    file_can_poll, file_poll, file_poll_wait, PollQueue, PollWaiter, POLLIN, POLLRDNORM,
};
use crate::fs::vfs::File;
use crate::sync::SpinLock;
pub use uapi::poll::{
    EPOLLERR, EPOLLET, EPOLLEXCLUSIVE, EPOLLHUP, EPOLLONESHOT, EPOLLWAKEUP, EPOLL_CTL_ADD,
    EPOLL_CTL_DEL, EPOLL_CTL_MOD,
};

/// Flags that are not events (Linux: `EP_PRIVATE_BITS`).
const EP_PRIVATE_BITS: u32 = EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE;
/// Deepest nesting of epoll instances in one another (Linux: `EP_MAX_NESTS`).
const EP_MAX_NESTS: usize = 4;

/// `fs.epoll.max_user_watches`: the items one real user may have, all
/// epoll instances together (Linux: 4% of memory over `EP_ITEM_COST`,
/// set at boot by `init`).
pub static MAX_USER_WATCHES: AtomicUsize = AtomicUsize::new(0);
/// What Linux counts an item as (`EP_ITEM_COST`: an epitem and its
/// eppoll_entry, on 64-bit).
const EP_ITEM_COST: usize = 200;

/// Items per real user now (Linux: `user->epoll_watches`).
static USER_WATCHES: SpinLock<BTreeMap<u32, usize>> = SpinLock::new(BTreeMap::new());

/// Sets `max_user_watches` from the memory there is (Linux: `eventpoll_init`).
pub fn init(total_pages: usize) {
    let max = total_pages / 25 * crate::mm::addr::PAGE_SIZE / EP_ITEM_COST;
    MAX_USER_WATCHES.store(max, Ordering::Relaxed);
}

/// One item's charge to its user, given back when the item goes.
struct Watch(u32);

impl Watch {
    /// Charges an item to the caller's real user; ENOSPC at
    /// `max_user_watches` (Linux: `ep_insert`).
    fn charge() -> KResult<Watch> {
        let uid = crate::task::current_cred().uid;
        let mut users = USER_WATCHES.lock();
        let n = users.entry(uid).or_insert(0);
        if *n >= MAX_USER_WATCHES.load(Ordering::Relaxed) {
            return Err(Errno::ENOSPC);
        }
        *n += 1;
        Ok(Watch(uid))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut users = USER_WATCHES.lock();
        if let Some(n) = users.get_mut(&self.0) {
            *n -= 1;
            if *n == 0 {
                users.remove(&self.0);
            }
        }
    }
}

/// One watched file (Linux: `struct epitem`).
struct EpItem {
    /// The descriptor the file was added under; with `file`, the item's key
    /// (Linux: `epitem.ffd`).
    fd: i32,
    /// The watched file, weakly: the item goes once its last reference does.
    file: Weak<File>,
    /// The events asked for, with EPOLLERR|EPOLLHUP and the flags.
    events: u32,
    /// The caller's `epoll_event.data`, handed back with every event.
    data: u64,
    /// Its entry on the file's queues.
    waiter: Arc<PollWaiter>,
    /// The events it had at the last scan: a change from none to some is
    /// an edge too, for files whose readiness changes with no wake.
    last: u32,
    /// Its count against its user's `max_user_watches`.
    _watch: Watch,
}

/// An epoll instance (Linux: `struct eventpoll`).
pub struct EventPoll {
    /// The watched files (Linux: the `rbr` tree of epitems), in the order
    /// epoll_wait scans them; items of closed files are pruned on each scan.
    items: SpinLock<Vec<EpItem>>,
    /// epoll_wait sleepers and pollers of this epoll file; every item's
    /// entry wakes it.
    queue: Arc<PollQueue>,
}

/// The epoll instance behind an open file, if it is one.
pub fn epoll_of(f: &File) -> Option<Arc<EventPoll>> {
    f.device::<EventPoll>()
}

impl EventPoll {
    /// An instance watching nothing (Linux: `ep_alloc`, for epoll_create1).
    pub fn new() -> Arc<EventPoll> {
        Arc::new(EventPoll {
            items: SpinLock::new(Vec::new()),
            queue: Arc::new(PollQueue::new()),
        })
    }

    /// EPOLL_CTL_ADD, MOD and DEL of `fd`, open as `file` (Linux:
    /// `do_epoll_ctl`); `event` is (events, data), None for DEL.
    pub fn ctl(
        self: &Arc<Self>,
        op: i32,
        fd: i32,
        file: &Arc<File>,
        event: Option<(u32, u64)>,
    ) -> KResult<()> {
        if !file_can_poll(file) {
            return Err(Errno::EPERM);
        }
        let nested = epoll_of(file);
        if nested.as_ref().is_some_and(|n| Arc::ptr_eq(n, self)) {
            return Err(Errno::EINVAL);
        }
        if op == EPOLL_CTL_ADD {
            if let Some(n) = &nested {
                n.check_loop(Arc::as_ptr(self), 1)?;
            }
        }
        let mut items = self.items.lock();
        items.retain(|i| i.file.strong_count() > 0);
        let at = items
            .iter()
            .position(|i| i.fd == fd && core::ptr::eq(i.file.as_ptr(), Arc::as_ptr(file)));
        match (op, at, event) {
            (EPOLL_CTL_ADD, Some(_), _) => return Err(Errno::EEXIST),
            (EPOLL_CTL_ADD, None, Some((events, data))) => {
                let events = events | EPOLLERR | EPOLLHUP;
                let item = EpItem {
                    fd,
                    file: Arc::downgrade(file),
                    events,
                    data,
                    waiter: PollWaiter::for_queue(&self.queue, events & !EP_PRIVATE_BITS),
                    last: 0,
                    _watch: Watch::charge()?,
                };
                // Ready already: that is the first edge (Linux: ep_insert
                // queues the item if its poll says so).
                item.waiter.set_woken();
                file_poll_wait(file, &item.waiter);
                items.push(item);
            }
            (EPOLL_CTL_MOD, Some(at), Some((events, data))) => {
                if events & EPOLLEXCLUSIVE != 0 || items[at].events & EPOLLEXCLUSIVE != 0 {
                    return Err(Errno::EINVAL);
                }
                let events = events | EPOLLERR | EPOLLHUP;
                let item = &mut items[at];
                item.events = events;
                item.data = data;
                item.waiter = PollWaiter::for_queue(&self.queue, events & !EP_PRIVATE_BITS);
                item.waiter.set_woken();
                item.last = 0;
                file_poll_wait(file, &item.waiter);
            }
            (EPOLL_CTL_DEL, Some(at), _) => {
                items.remove(at);
            }
            (EPOLL_CTL_MOD | EPOLL_CTL_DEL, None, _) => return Err(Errno::ENOENT),
            _ => return Err(Errno::EINVAL),
        }
        drop(items);
        // Sleepers in epoll_wait look at the new set.
        self.queue.wake();
        Ok(())
    }

    /// ELOOP if `target` is reachable from this instance, or nesting
    /// would pass EP_MAX_NESTS (Linux: `ep_loop_check`).
    fn check_loop(&self, target: *const EventPoll, depth: usize) -> KResult<()> {
        if core::ptr::eq(self, target) || depth > EP_MAX_NESTS {
            return Err(Errno::ELOOP);
        }
        // Look at the children with our lock dropped: no two locks at once.
        let children: Vec<Arc<EventPoll>> = self
            .items
            .lock()
            .iter()
            .filter_map(|i| i.file.upgrade())
            .filter_map(|f| epoll_of(&f))
            .collect();
        children
            .iter()
            .try_for_each(|c| c.check_loop(target, depth + 1))
    }

    /// Polls every item, registering its entry again. With `out`, takes
    /// the events to report, at most `max` (edges and one-shots are used
    /// up); without, only counts. Returns the count and the earliest
    /// time an item asks to be looked at again.
    fn scan(&self, max: usize, mut out: Option<&mut Vec<(u32, u64)>>) -> (usize, Option<u64>) {
        let mut items = self.items.lock();
        items.retain(|i| i.file.strong_count() > 0);
        let mut count = 0;
        let mut recheck: Option<u64> = None;
        let mut reported = Vec::new();
        for (idx, item) in items.iter_mut().enumerate() {
            let Some(file) = item.file.upgrade() else {
                continue;
            };
            if let Some(r) = file_poll_wait(&file, &item.waiter) {
                recheck = Some(recheck.map_or(r, |c| c.min(r)));
            }
            if count >= max {
                continue;
            }
            let collect = out.is_some();
            let edge = if collect {
                item.waiter.take_woken()
            } else {
                item.waiter.woken()
            };
            let revents = file_poll(&file) & item.events & !EP_PRIVATE_BITS;
            let newly = item.last == 0;
            if collect {
                item.last = revents;
            }
            if revents == 0 || (item.events & EPOLLET != 0 && !edge && !newly) {
                continue;
            }
            count += 1;
            if let Some(out) = out.as_deref_mut() {
                out.push((revents, item.data));
                if item.events & EPOLLONESHOT != 0 {
                    item.events &= EP_PRIVATE_BITS;
                } else if item.events & EPOLLET == 0 {
                    reported.push(idx);
                }
            }
        }
        // Reported level-triggered items go to the back of the line.
        if !reported.is_empty() {
            let mut moved = Vec::with_capacity(reported.len());
            for idx in reported.into_iter().rev() {
                moved.push(items.remove(idx));
            }
            items.extend(moved.into_iter().rev());
        }
        (count, recheck)
    }

    /// epoll_wait: up to `max` ready events, waiting until the counter
    /// reaches `deadline` (u64::MAX: no limit; Linux: `ep_poll`).
    pub fn wait(&self, max: usize, deadline: u64) -> KResult<Vec<(u32, u64)>> {
        let mut events = Vec::new();
        crate::fs::poll::wait_ready(deadline, |w| {
            self.queue.add(w);
            Ok(self.scan(max, Some(&mut events)))
        })?;
        Ok(events)
    }
}

impl Device for EventPoll {
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }
    /// Readable while an item would be reported (Linux: `ep_eventpoll_poll`).
    fn poll(&self, _flags: u32) -> u32 {
        if self.scan(usize::MAX, None).0 > 0 {
            POLLIN | POLLRDNORM
        } else {
            0
        }
    }
    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.queue.add(w);
        self.scan(0, None).1
    }
}
