//! Moving waiters from one futex to another (Linux:
//! `kernel/futex/requeue.c`): FUTEX_REQUEUE and CMP_REQUEUE, so a
//! condition variable's broadcast wakes one thread rather than a herd, and
//! their PI pair: FUTEX_WAIT_REQUEUE_PI waits on a condition variable's
//! word to be moved, by FUTEX_CMP_REQUEUE_PI, onto the PI mutex it must
//! hold on return, taking the mutex there if it is free.

use alloc::vec::Vec;

use super::pi::{finish_pi_wait, lock_pi_atomic, Atomic, PiState};
use super::waitwake::wait_setup;
use super::{
    enqueue, lock_q, position, sleep, top_waiter, wake_up_all, wake_waiter, with_two, word_at,
    Bucket, MATCH_ANY, Q_LOCKED, Q_QUEUED, Q_WOKEN,
};
use crate::errno::{Errno, KResult};
use crate::mm::fault::Access;

/// FUTEX_REQUEUE, CMP_REQUEUE and (`requeue_pi`) CMP_REQUEUE_PI: wake up
/// to `nr_wake` waiters on `uaddr`, then move up to `nr_requeue` more to
/// wait on `uaddr2`. With `cmp`, EAGAIN unless `*uaddr` still holds it.
/// Returns the woken and moved together (Linux: `futex_requeue`).
///
/// Under `requeue_pi`, `nr_wake` must be 1 and the two words differ
/// (EINVAL): the first waiter takes the PI lock at `uaddr2` if it is free
/// and wakes holding it; the rest, and the first if the lock is held, are
/// queued for the lock, to get it from an unlock. Every waiter met must be
/// in FUTEX_WAIT_REQUEUE_PI for `uaddr2` (EINVAL), and a plain requeue
/// meets none (EINVAL); EDEADLK if a waiter holds the lock itself.
pub fn requeue(
    uaddr: usize,
    uaddr2: usize,
    shared: bool,
    nr_wake: usize,
    nr_requeue: usize,
    cmp: Option<u32>,
    requeue_pi: bool,
) -> KResult<usize> {
    if requeue_pi && (uaddr == uaddr2 || nr_wake != 1) {
        return Err(Errno::EINVAL);
    }
    let mut woken = Vec::new();
    let result = loop {
        let first = word_at(uaddr, Access::Read, shared)?;
        let access2 = if requeue_pi {
            Access::Write
        } else {
            Access::Read
        };
        let second = word_at(uaddr2, access2, shared)?;
        let (key1, key2) = (first.key, second.key);
        if requeue_pi && key1 == key2 {
            return Err(Errno::EINVAL);
        }
        let done = with_two(key1, key2, |hb1, hb2| -> Option<KResult<usize>> {
            if let Some(c) = cmp {
                match first.load()? {
                    v if v != c => return Some(Err(Errno::EAGAIN)),
                    _ => {}
                }
            }
            let mut task_count = 0;
            let mut pi_state = None;
            // Take the PI lock for the first waiter if we can (Linux:
            // `futex_proxy_trylock_atomic`).
            if let Some(top) = top_waiter(hb1, key1).filter(|_| requeue_pi) {
                let t = &hb1[top];
                if t.pi_state.is_some() || t.requeue_pi_key != Some(key2) {
                    return Some(Err(Errno::EINVAL));
                }
                let tid = t.q.tid;
                let target: &Bucket = hb2.as_deref().unwrap_or(hb1);
                match lock_pi_atomic(&second, target, key2, tid, nr_requeue > 0) {
                    Err(e) => return Some(Err(e)),
                    Ok(Atomic::Retry) => return None,
                    Ok(Atomic::Wait(ps)) => pi_state = Some(ps),
                    Ok(Atomic::Acquired) => {
                        *hb1[top].q.key.lock() = key2;
                        wake_waiter(hb1, top, Q_LOCKED, &mut woken);
                        task_count += 1;
                        pi_state = Some(PiState::new(tid));
                    }
                }
            }
            let mut moved = Vec::new();
            let mut failed = None;
            let mut i = 0;
            while i < hb1.len() && task_count < nr_wake + nr_requeue {
                let w = &hb1[i];
                if w.key() != key1 {
                    i += 1;
                    continue;
                }
                if w.pi_state.is_some() || w.requeue_pi_key.is_some() != requeue_pi {
                    failed = Some(Errno::EINVAL);
                    break;
                }
                if !requeue_pi {
                    task_count += 1;
                    if task_count <= nr_wake {
                        wake_waiter(hb1, i, Q_WOKEN, &mut woken);
                    } else {
                        let w = hb1.remove(i);
                        *w.q.key.lock() = key2;
                        moved.push(w);
                    }
                    continue;
                }
                if w.requeue_pi_key != Some(key2) {
                    failed = Some(Errno::EINVAL);
                    break;
                }
                let Some(ps) = pi_state.clone() else {
                    break;
                };
                // Queueing a waiter for a lock it holds would never end
                // (Linux: the rt_mutex's deadlock check).
                if ps.owner.load(core::sync::atomic::Ordering::Acquire) == w.q.tid {
                    failed = Some(Errno::EDEADLK);
                    break;
                }
                let mut w = hb1.remove(i);
                *w.q.key.lock() = key2;
                w.pi_state = Some(ps);
                moved.push(w);
                task_count += 1;
            }
            let target = hb2.unwrap_or(hb1);
            for w in moved {
                enqueue(target, w);
            }
            Some(failed.map_or(Ok(task_count), Err))
        });
        if let Some(done) = done {
            break done;
        }
        // The word moved, or the lock's owner is exiting: let it run.
        crate::task::yield_now();
    };
    wake_up_all(&woken);
    result
}

/// FUTEX_WAIT_REQUEUE_PI: wait on `uaddr` while it holds `val`, to be
/// requeued by FUTEX_CMP_REQUEUE_PI onto the PI lock at `uaddr2` and
/// return holding it (Linux: `futex_wait_requeue_pi`). EINVAL if the two
/// are one futex; ETIMEDOUT at `deadline`, before the requeue or after;
/// a signal before the requeue restarts the call after its handler
/// (ERESTARTNOINTR), one after it ends it with EAGAIN (EWOULDBLOCK), as
/// `uaddr` has changed by then and a restart would say so.
pub fn wait_requeue_pi(
    uaddr: usize,
    shared: bool,
    val: u32,
    deadline: Option<u64>,
    uaddr2: usize,
) -> KResult<()> {
    if uaddr == uaddr2 {
        return Err(Errno::EINVAL);
    }
    let key2 = word_at(uaddr2, Access::Write, shared)?.key;
    let q = wait_setup(uaddr, shared, val, MATCH_ANY, Some(key2))?;
    let slept = sleep(|| q.state() != Q_QUEUED, deadline);
    {
        let mut hb = lock_q(&q);
        if let Some(i) = position(&hb, &q).filter(|&i| hb[i].pi_state.is_none()) {
            // Still on `uaddr`: a timeout or a signal came first (Linux:
            // `handle_early_requeue_pi_wakeup`).
            hb.remove(i);
            return Err(match slept {
                Err(Errno::EINTR) => Errno::ERESTARTNOINTR,
                Err(e) => e,
                Ok(()) => Errno::EAGAIN,
            });
        }
    }
    finish_pi_wait(&q, uaddr2, shared, slept).map_err(|e| match e {
        Errno::EINTR => Errno::EAGAIN,
        e => e,
    })
}
