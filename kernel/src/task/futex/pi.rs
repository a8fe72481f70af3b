//! Priority-inheritance futexes (Linux: `kernel/futex/pi.c`): a lock word
//! holds its owner's TID, with FUTEX_WAITERS once someone sleeps for it;
//! user space takes and drops a free lock with a compare-and-swap, and
//! comes to the kernel only when that fails: FUTEX_LOCK_PI (and LOCK_PI2,
//! TRYLOCK_PI) to sleep for it, FUTEX_UNLOCK_PI to hand it to the first
//! waiter, the kernel writing the new owner's TID into the word itself.
//!
//! Simplified: a lock's waiters are queued in priority order and the
//! highest gets it, but no owner is boosted to a waiter's priority (no
//! rt_mutex priority chain; faultline's scheduler has no priorities to
//! boost), and no deadlock chain is walked beyond a thread waiting for a
//! lock it holds itself.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use super::{
    bucket, enqueue, lock_q, position, sleep, top_waiter, wake_up_all, wake_waiter, word_at,
    Bucket, FutexQ, Key, Waiter, Word, FUTEX_OWNER_DIED, FUTEX_STATE_EXITING, FUTEX_STATE_OK,
    FUTEX_TID_MASK, FUTEX_WAITERS, MATCH_ANY, QUEUES, Q_LOCKED, Q_QUEUED,
};
use crate::errno::{Errno, KResult};
use crate::mm::fault::Access;
use crate::mm::uaccess::read_user;

/// What the kernel knows of a PI lock that has waiters (Linux: `struct
/// futex_pi_state`): shared by the waiters queued for it, gone with the
/// last of them.
pub(super) struct PiState {
    /// The owner's TID; 0 once it died, until the waiter it was left to
    /// fixes the word (Linux: `pi_state->owner` NULL).
    pub(super) owner: AtomicU32,
}

impl PiState {
    /// The state of a lock `owner` holds.
    pub(super) fn new(owner: u32) -> Arc<PiState> {
        Arc::new(PiState {
            owner: AtomicU32::new(owner),
        })
    }

    /// The owner's TID, 0 if it died.
    fn owner(&self) -> u32 {
        self.owner.load(Ordering::Acquire)
    }
}

/// What [`lock_pi_atomic`] did.
pub(super) enum Atomic {
    /// The lock was free: the word now names the new owner.
    Acquired,
    /// The lock is held: sleep on this state (FUTEX_WAITERS is set).
    Wait(Arc<PiState>),
    /// The word changed or moved under us, or its owner is exiting: look
    /// again, with no lock held.
    Retry,
}

/// Takes the lock at `word` for thread `tid` if it is free, or finds what
/// to sleep on, under the bucket lock `hb` (Linux:
/// `futex_lock_pi_atomic`): EDEADLK if `tid` holds it already; the
/// waiters' state if there are any (`attach_to_pi_state`); else
/// FUTEX_WAITERS set and a new state for the owner the word names
/// (`attach_to_pi_owner`), ESRCH if no such thread. `set_waiters` sets
/// FUTEX_WAITERS on a free lock taken too, as a requeue does that queues
/// more waiters behind.
pub(super) fn lock_pi_atomic(
    word: &Word,
    hb: &Bucket,
    key: Key,
    tid: u32,
    set_waiters: bool,
) -> KResult<Atomic> {
    let Some(uval) = word.load() else {
        return Ok(Atomic::Retry);
    };
    if uval & FUTEX_TID_MASK == tid {
        return Err(Errno::EDEADLK);
    }
    if let Some(top) = top_waiter(hb, key) {
        return attach_to_pi_state(uval, hb[top].pi_state.as_ref()).map(Atomic::Wait);
    }
    if uval & FUTEX_TID_MASK == 0 {
        let waiters = if set_waiters { FUTEX_WAITERS } else { 0 };
        let new = (uval & FUTEX_OWNER_DIED) | tid | waiters;
        return Ok(match word.cmpxchg(uval, new) {
            Some(old) if old == uval => Atomic::Acquired,
            _ => Atomic::Retry,
        });
    }
    let new = uval | FUTEX_WAITERS;
    match word.cmpxchg(uval, new) {
        Some(old) if old == uval => {}
        _ => return Ok(Atomic::Retry),
    }
    let owner = new & FUTEX_TID_MASK;
    let state = crate::task::process::find_thread(owner)
        .and_then(|t| Some(t.user.as_ref()?.futex_state.load(Ordering::Acquire)));
    match state {
        Some(FUTEX_STATE_OK) => return Ok(Atomic::Wait(PiState::new(owner))),
        // Releasing its futexes: look again once it has, when the word
        // will say whether it passed the lock on (Linux: -EBUSY and
        // `wait_for_owner_exiting`).
        Some(FUTEX_STATE_EXITING) => return Ok(Atomic::Retry),
        _ => {}
    }
    // No such thread, or it has released its futexes (Linux:
    // `handle_exit_race`): if the word is unchanged nobody owns it any
    // more who could release it.
    match word.load() {
        Some(now) if now == new => Err(Errno::ESRCH),
        _ => Ok(Atomic::Retry),
    }
}

/// Checks that word value `uval` agrees with the state of the lock's
/// waiters before a new one joins them (Linux: `attach_to_pi_state`):
/// EINVAL if there is none (a plain waiter on a PI word) or the word names
/// another owner; a word whose owner died with no TID in it joins them.
fn attach_to_pi_state(uval: u32, pi_state: Option<&Arc<PiState>>) -> KResult<Arc<PiState>> {
    let ps = pi_state.ok_or(Errno::EINVAL)?;
    let (pid, owner) = (uval & FUTEX_TID_MASK, ps.owner());
    let agrees = if uval & FUTEX_OWNER_DIED != 0 {
        pid == 0 || pid == owner
    } else {
        owner != 0 && pid == owner
    };
    agrees.then(|| ps.clone()).ok_or(Errno::EINVAL)
}

/// The caller's TID.
fn my_tid() -> KResult<u32> {
    let me = crate::task::current();
    Ok(me.user.as_ref().ok_or(Errno::ESRCH)?.tid)
}

/// FUTEX_LOCK_PI, LOCK_PI2 and (`trylock`) TRYLOCK_PI: take the PI lock at
/// `uaddr`, sleeping until its owner hands it over if it is held (Linux:
/// `futex_lock_pi`). EDEADLK if the caller holds it, EAGAIN (EWOULDBLOCK)
/// if held under `trylock`, ESRCH if the word names no thread, EINVAL if
/// it disagrees with the waiters, ETIMEDOUT at `deadline`; a signal
/// restarts the call after its handler (ERESTARTNOINTR).
pub fn lock_pi(uaddr: usize, shared: bool, deadline: Option<u64>, trylock: bool) -> KResult<()> {
    let tid = my_tid()?;
    let q = loop {
        let w = word_at(uaddr, Access::Write, shared)?;
        let mut hb = bucket(w.key).lock();
        match lock_pi_atomic(&w, &hb, w.key, tid, false)? {
            Atomic::Acquired => return Ok(()),
            Atomic::Retry => {
                drop(hb);
                crate::task::yield_now();
                continue;
            }
            Atomic::Wait(_) if trylock => return Err(Errno::EAGAIN),
            Atomic::Wait(ps) => {
                let q = FutexQ::new(w.key);
                enqueue(
                    &mut hb,
                    Waiter {
                        q: q.clone(),
                        prio: super::waitwake::my_prio(),
                        bitset: MATCH_ANY,
                        requeue_pi_key: None,
                        pi_state: Some(ps),
                    },
                );
                break q;
            }
        }
    };
    let slept = sleep(|| q.state() != Q_QUEUED, deadline);
    finish_pi_wait(&q, uaddr, shared, slept).map_err(|e| match e {
        Errno::EINTR => Errno::ERESTARTNOINTR,
        e => e,
    })
}

/// The end of a sleep for a PI lock, for FUTEX_LOCK_PI and a requeued
/// FUTEX_WAIT_REQUEUE_PI (Linux: `rt_mutex_wait_proxy_lock`'s aftermath,
/// `fixup_pi_owner`): Ok if the lock is ours, whatever `slept` says, after
/// writing our TID into the word if its owner died and left it to us;
/// else out of the queue with `slept`'s error.
pub(super) fn finish_pi_wait(
    q: &Arc<FutexQ>,
    uaddr: usize,
    shared: bool,
    slept: KResult<()>,
) -> KResult<()> {
    // The word, once we know it needs fixing: found with no lock held, as
    // it may need faulting in.
    let mut word = None;
    loop {
        let mut hb = lock_q(q);
        match (q.state(), position(&hb, q)) {
            (Q_LOCKED, None) => return Ok(()),
            (Q_LOCKED, Some(i)) => {
                let Some(w) = &word else {
                    drop(hb);
                    word = Some(word_at(uaddr, Access::Write, shared));
                    continue;
                };
                // A word that is gone leaves the lock ours anyway, and we
                // say so.
                if let Ok(w) = w {
                    if fixup_owner(w, q.tid).is_none() {
                        drop(hb);
                        word = None; // moved: look again
                        continue;
                    }
                }
                if let Some(ps) = &hb[i].pi_state {
                    ps.owner.store(q.tid, Ordering::Release);
                }
                hb.remove(i);
                return w.as_ref().map(|_| ()).map_err(|e| *e);
            }
            // Not ours: a timeout or a signal (a PI waiter has no other
            // way out).
            (_, Some(i)) => {
                hb.remove(i);
                return Err(slept.err().unwrap_or(Errno::EAGAIN));
            }
            (_, None) => return Err(slept.err().unwrap_or(Errno::EAGAIN)),
        }
    }
}

/// Writes the caller's TID, with FUTEX_WAITERS and FUTEX_OWNER_DIED, into
/// a lock word whose dying owner left the lock to it, keeping nothing else
/// (Linux: `__fixup_pi_state_owner`). None if the word moved.
fn fixup_owner(word: &Word, tid: u32) -> Option<()> {
    let new = tid | FUTEX_WAITERS | FUTEX_OWNER_DIED;
    let mut uval = word.load()?;
    loop {
        let now = word.cmpxchg(uval, (uval & FUTEX_OWNER_DIED) | new)?;
        if now == uval {
            return Some(());
        }
        uval = now;
    }
}

/// FUTEX_UNLOCK_PI: release the PI lock at `uaddr`, which the caller must
/// hold (EPERM), handing it to the first of its waiters, whose TID the
/// word then holds, with FUTEX_WAITERS; with none, the word becomes 0
/// (Linux: `futex_unlock_pi`). EINVAL if the waiters disagree that the
/// caller holds it; EAGAIN if user space changed the word meanwhile.
pub fn unlock_pi(uaddr: usize, shared: bool) -> KResult<()> {
    let tid = my_tid()?;
    let mut woken = Vec::new();
    loop {
        let uval: u32 = read_user(uaddr)?;
        if uval & FUTEX_TID_MASK != tid {
            return Err(Errno::EPERM);
        }
        let w = word_at(uaddr, Access::Write, shared)?;
        let mut hb = bucket(w.key).lock();
        let Some(uval) = w.load() else {
            continue;
        };
        if uval & FUTEX_TID_MASK != tid {
            continue;
        }
        if let Some(top) = top_waiter(&hb, w.key) {
            let ps = hb[top].pi_state.clone().ok_or(Errno::EINVAL)?;
            if ps.owner() != tid {
                return Err(Errno::EINVAL);
            }
            let next = hb.iter().position(|o| {
                o.q.state() == Q_QUEUED && o.pi_state.as_ref().is_some_and(|p| Arc::ptr_eq(p, &ps))
            });
            if let Some(next) = next {
                let new_owner = hb[next].q.tid;
                match w.cmpxchg(uval, FUTEX_WAITERS | new_owner) {
                    None => continue,
                    Some(now) if now == uval => {}
                    // A waiter set FUTEX_WAITERS on a word that had only
                    // our TID: look again. Anything else is user space's
                    // doing.
                    Some(now) if now & FUTEX_TID_MASK == uval => continue,
                    Some(_) => return Err(Errno::EINVAL),
                }
                ps.owner.store(new_owner, Ordering::Release);
                wake_waiter(&mut hb, next, Q_LOCKED, &mut woken);
                drop(hb);
                wake_up_all(&woken);
                return Ok(());
            }
        }
        return match w.cmpxchg(uval, 0) {
            None => continue,
            Some(now) if now == uval => Ok(()),
            Some(_) => Err(Errno::EAGAIN),
        };
    }
}

/// A dying thread's PI locks pass to their first waiters (Linux:
/// `exit_pi_state_list`): each state it owns is left ownerless and its
/// first waiter woken holding the lock, to write its own TID, with
/// FUTEX_OWNER_DIED, into the word ([`finish_pi_wait`]). Linux keeps a
/// list of the states a thread owns; this looks through every bucket.
pub(super) fn exit_pi_state_list(tid: u32) {
    let mut woken = Vec::new();
    for queue in &QUEUES {
        let hb = queue.lock();
        let mut i = 0;
        while i < hb.len() {
            let Some(ps) = hb[i].pi_state.clone().filter(|ps| ps.owner() == tid) else {
                i += 1;
                continue;
            };
            ps.owner.store(0, Ordering::Release);
            let next = hb.iter().position(|o| {
                o.q.state() == Q_QUEUED && o.pi_state.as_ref().is_some_and(|p| Arc::ptr_eq(p, &ps))
            });
            if let Some(next) = next {
                // It stays queued, so the state stays visible, until it
                // has fixed the word.
                hb[next].q.state.store(Q_LOCKED, Ordering::Release);
                woken.push(hb[next].q.thread.clone());
            }
        }
    }
    wake_up_all(&woken);
}
