//! Advisory file locks (Linux: `fs/locks.c`): whole-file `flock(2)` locks,
//! owned by an open file description; POSIX record locks (`F_SETLK`),
//! owned by a descriptor table (Linux's `fl_owner = current->files`) and
//! dropped when that table closes any descriptor of the file or goes away;
//! and open-file-description record locks (`F_OFD_SETLK`), owned by the
//! open file like flock's. POSIX and OFD locks conflict with each other;
//! flock locks only with flock locks.
//!
//! Where we simplify: one list for the whole system, searched linearly,
//! and one wait queue that every unlock wakes (Linux keeps a list per
//! inode and wakes only the blocked requests a release may satisfy);
//! no deadlock detection (EDEADLK).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::WaitQueue;

/// Who holds a lock.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Owner {
    /// A POSIX lock of the descriptor table with this id.
    Posix(u64),
    /// An OFD lock of the open file at this address.
    Ofd(usize),
    /// A flock lock of the open file at this address.
    Flock(usize),
}

impl Owner {
    /// Is this a flock lock? Those conflict only with each other.
    fn is_flock(self) -> bool {
        matches!(self, Owner::Flock(_))
    }
}

/// One held lock on bytes `start..=end` of inode `ino` (Linux: `struct
/// file_lock`); `end == u64::MAX` reaches past any end of file.
#[derive(Clone, Copy, Debug)]
pub struct FileLock {
    /// The inode number of the locked file.
    pub ino: u64,
    /// Who holds it; an owner's own locks never conflict with each other.
    pub owner: Owner,
    /// A write (exclusive) lock, else a read (shared) one (Linux: `F_WRLCK`,
    /// `F_RDLCK`).
    pub write: bool,
    /// The first byte locked.
    pub start: u64,
    /// The last byte locked, inclusive; `u64::MAX` for up to any end of file.
    pub end: u64,
    /// The process that took it: F_GETLK reports it for POSIX locks.
    pub pid: i32,
}

impl FileLock {
    /// Does it cover any byte of `start..=end`?
    fn overlaps(&self, start: u64, end: u64) -> bool {
        self.start <= end && start <= self.end
    }

    /// Does `self` stand in the way of `want`? (Linux:
    /// `posix_locks_conflict` / `flock_locks_conflict`.)
    fn conflicts(&self, want: &FileLock) -> bool {
        self.ino == want.ino
            && self.owner != want.owner
            && self.owner.is_flock() == want.owner.is_flock()
            && (self.write || want.write)
            && self.overlaps(want.start, want.end)
    }
}

/// Every lock held in the system, in no order (Linux keeps a list per inode,
/// in `i_flctx`).
static LOCKS: SpinLock<Vec<FileLock>> = SpinLock::new(Vec::new());
/// Locks held, so closing a file need not take `LOCKS` when there are none.
static NR_LOCKS: AtomicUsize = AtomicUsize::new(0);
/// Blocked F_SETLKW and flock requests, woken by every release.
static BLOCKED: WaitQueue = WaitQueue::new();

/// The conflicting lock that starts first (Linux walks a list kept in
/// order of start per owner, so it reports the lowest one).
fn first_conflict(locks: &[FileLock], want: &FileLock) -> Option<FileLock> {
    locks
        .iter()
        .filter(|l| l.conflicts(want))
        .min_by_key(|l| l.start)
        .copied()
}

/// F_GETLK / F_OFD_GETLK: the first lock that would block `want`.
pub fn test_lock(want: &FileLock) -> Option<FileLock> {
    first_conflict(&LOCKS.lock(), want)
}

/// Takes `want` once nothing conflicts: at once or EAGAIN without `wait`,
/// otherwise sleeping until a release lets it in (EINTR on a signal).
/// `apply` puts it into the list.
fn acquire(want: &FileLock, wait: bool, apply: fn(&mut Vec<FileLock>, &FileLock)) -> KResult<()> {
    let mut taken = false;
    let try_take = || {
        let mut locks = LOCKS.lock();
        if first_conflict(&locks, want).is_some() {
            return false;
        }
        apply(&mut locks, want);
        NR_LOCKS.store(locks.len(), Ordering::Relaxed);
        true
    };
    if try_take() {
        return Ok(());
    }
    if !wait {
        return Err(Errno::EAGAIN);
    }
    BLOCKED.wait_interruptible(|| {
        taken = taken || try_take();
        taken
    })?;
    Ok(())
}

/// F_SETLK(W) / F_OFD_SETLK(W) for a read or write lock (Linux:
/// `posix_lock_inode`): the owner's own locks over the range are replaced,
/// and the new one merges with the owner's same-type neighbours.
pub fn set_record_lock(want: &FileLock, wait: bool) -> KResult<()> {
    acquire(want, wait, |locks, want| {
        carve_out(locks, want.ino, want.owner, want.start, want.end);
        let mut new = *want;
        locks.retain(|l| {
            let touches = l.ino == new.ino
                && l.owner == new.owner
                && l.write == new.write
                && l.start <= new.end.saturating_add(1)
                && new.start <= l.end.saturating_add(1);
            if touches {
                new.start = new.start.min(l.start);
                new.end = new.end.max(l.end);
            }
            !touches
        });
        locks.push(new);
    })
}

/// F_UNLCK over `start..=end` for `owner`: never blocks.
pub fn unlock_record(ino: u64, owner: Owner, start: u64, end: u64) {
    let mut locks = LOCKS.lock();
    carve_out(&mut locks, ino, owner, start, end);
    NR_LOCKS.store(locks.len(), Ordering::Relaxed);
    drop(locks);
    BLOCKED.wake_all();
}

/// Removes `start..=end` from `owner`'s locks on `ino`, splitting a lock
/// that covers more than that.
fn carve_out(locks: &mut Vec<FileLock>, ino: u64, owner: Owner, start: u64, end: u64) {
    let mut kept = Vec::new();
    locks.retain(|l| {
        if l.ino != ino || l.owner != owner || !l.overlaps(start, end) {
            return true;
        }
        if l.start < start {
            kept.push(FileLock {
                end: start - 1,
                ..*l
            });
        }
        if l.end > end {
            kept.push(FileLock {
                start: end + 1,
                ..*l
            });
        }
        false
    });
    locks.extend(kept);
}

/// flock(2) LOCK_SH / LOCK_EX (Linux: `flock_lock_inode`): a lock the file
/// already holds is converted, by dropping it first, as Linux does.
pub fn flock(ino: u64, file: usize, write: bool, wait: bool, pid: i32) -> KResult<()> {
    let owner = Owner::Flock(file);
    let want = FileLock {
        ino,
        owner,
        write,
        start: 0,
        end: u64::MAX,
        pid,
    };
    {
        let locks = LOCKS.lock();
        if locks
            .iter()
            .any(|l| l.ino == ino && l.owner == owner && l.write == write)
        {
            return Ok(());
        }
    }
    release(|l| l.ino == ino && l.owner == owner);
    acquire(&want, wait, |locks, want| locks.push(*want))
}

/// flock(2) LOCK_UN.
pub fn funlock(ino: u64, file: usize) {
    release(|l| l.ino == ino && l.owner == Owner::Flock(file));
}

/// Drops every lock `which` picks and wakes the blocked.
fn release(which: impl Fn(&FileLock) -> bool) {
    if NR_LOCKS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut locks = LOCKS.lock();
    let before = locks.len();
    locks.retain(|l| !which(l));
    let changed = locks.len() != before;
    NR_LOCKS.store(locks.len(), Ordering::Relaxed);
    drop(locks);
    if changed {
        BLOCKED.wake_all();
    }
}

/// A descriptor table closed a descriptor of `ino`: its POSIX locks on the
/// file go, whichever descriptor took them (Linux: `locks_remove_posix`).
pub fn close_posix(table: u64, ino: u64) {
    release(|l| l.ino == ino && l.owner == Owner::Posix(table));
}

/// A descriptor table is gone (its process exited): all its POSIX locks go.
pub fn drop_table(table: u64) {
    release(|l| l.owner == Owner::Posix(table));
}

/// The last reference to an open file is gone: its OFD and flock locks go
/// (Linux: `locks_remove_file`).
pub fn drop_file(file: usize) {
    release(|l| l.owner == Owner::Ofd(file) || l.owner == Owner::Flock(file));
}
