//! Waiting on a futex word and waking its waiters (Linux:
//! `kernel/futex/waitwake.c`): FUTEX_WAIT and WAIT_BITSET, WAKE and
//! WAKE_BITSET, WAKE_OP (`futex_atomic_op_inuser`), and futex_waitv(2),
//! one sleep on many words.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{
    bucket, enqueue, key_at, sleep, unqueue, wake_up_all, wake_waiter, with_two, word_at, Bucket,
    FutexQ, Key, Waiter, MATCH_ANY, Q_QUEUED, Q_WOKEN,
};
use crate::errno::{Errno, KResult};
use crate::mm::fault::Access;
use crate::task::Thread;

/// The priority the calling thread queues with.
pub(super) fn my_prio() -> u32 {
    crate::task::current()
        .user
        .as_ref()
        .map_or(crate::task::sched_policy::MAX_RT_PRIO, |u| {
            u.sched.lock().futex_prio()
        })
}

/// Queues `q` on the word at `uaddr` if it holds `val`, checking under
/// the bucket lock (Linux: `futex_wait_setup`); EAGAIN if it does not.
pub(super) fn wait_setup(
    uaddr: usize,
    shared: bool,
    val: u32,
    bitset: u32,
    requeue_pi_key: Option<Key>,
) -> KResult<Arc<FutexQ>> {
    loop {
        let w = word_at(uaddr, Access::Read, shared)?;
        let mut hb = bucket(w.key).lock();
        // A waker changes the word before it takes this lock, so the word
        // read under it decides.
        match w.load() {
            None => continue,
            Some(v) if v != val => return Err(Errno::EAGAIN),
            Some(_) => {}
        }
        // The requeue target must be another futex (Linux checks the
        // keys, as two addresses may name one shared word).
        if requeue_pi_key == Some(w.key) {
            return Err(Errno::EINVAL);
        }
        let q = FutexQ::new(w.key);
        enqueue(
            &mut hb,
            Waiter {
                q: q.clone(),
                prio: my_prio(),
                bitset,
                requeue_pi_key,
                pi_state: None,
            },
        );
        return Ok(q);
    }
}

/// FUTEX_WAIT / WAIT_BITSET: sleep until a wake whose bitset meets
/// `bitset`, if `*uaddr == val`; EAGAIN if not; ETIMEDOUT at `deadline` (a
/// counter value); EINVAL for an empty bitset (Linux: `futex_wait`). A
/// signal ends a wait without a deadline with ERESTARTSYS, to run again
/// after an SA_RESTART handler; one with a deadline with EINTR, where
/// Linux runs it again, to the same deadline, if no handler runs (its
/// restart block, which faultline does not have).
pub fn wait(
    uaddr: usize,
    shared: bool,
    val: u32,
    deadline: Option<u64>,
    bitset: u32,
) -> KResult<()> {
    if bitset == 0 {
        return Err(Errno::EINVAL);
    }
    let q = wait_setup(uaddr, shared, val, bitset, None)?;
    match sleep(|| q.state() != Q_QUEUED, deadline) {
        Err(e) if unqueue(&q) => Err(match e {
            Errno::EINTR if deadline.is_none() => Errno::ERESTARTSYS,
            e => e,
        }),
        _ => Ok(()), // woken, maybe on the way out: the wake counts
    }
}

/// Wakes up to `n` of the waiters on `key` in `hb` whose bitset meets
/// `bitset`, first in queue order first, into `woken`; EINVAL on meeting a
/// PI waiter, which only PI operations may wake (Linux's wake loops).
pub(super) fn wake_matching(
    hb: &mut Bucket,
    key: Key,
    n: usize,
    bitset: u32,
    woken: &mut Vec<Arc<Thread>>,
) -> KResult<usize> {
    let (mut i, mut done) = (0, 0);
    while i < hb.len() && done < n {
        if hb[i].key() != key {
            i += 1;
            continue;
        }
        if hb[i].is_pi() {
            return Err(Errno::EINVAL);
        }
        if hb[i].bitset & bitset == 0 {
            i += 1;
            continue;
        }
        wake_waiter(hb, i, Q_WOKEN, woken);
        done += 1;
    }
    Ok(done)
}

/// FUTEX_WAKE / WAKE_BITSET: wake up to `n` threads waiting on `uaddr`
/// whose bitset meets `bitset`; returns how many (Linux: `futex_wake`).
pub fn wake(uaddr: usize, shared: bool, n: usize, bitset: u32) -> KResult<usize> {
    if bitset == 0 {
        return Err(Errno::EINVAL);
    }
    let key = key_at(uaddr, shared)?;
    let mut woken = Vec::new();
    let done = wake_matching(&mut bucket(key).lock(), key, n, bitset, &mut woken);
    wake_up_all(&woken);
    done
}

/// FUTEX_WAKE_OP: change `*uaddr2` by the operation encoded in `op` and,
/// atomically with it, wake up to `n` waiters on `uaddr`, then up to `n2`
/// on `uaddr2` if the old value passes the encoded comparison. Returns how
/// many woke (Linux: `futex_wake_op`, `futex_atomic_op_inuser`). ENOSYS
/// for an unknown operation (the word unchanged) or comparison (the word
/// already changed), as Linux.
pub fn wake_op(
    uaddr: usize,
    uaddr2: usize,
    shared: bool,
    n: usize,
    n2: usize,
    op: u32,
) -> KResult<usize> {
    let encoded = WakeOp::decode(op).ok_or(Errno::ENOSYS)?;
    let key = key_at(uaddr, shared)?;
    let mut woken = Vec::new();
    let done = loop {
        let second = word_at(uaddr2, Access::Write, shared)?;
        let key2 = second.key;
        let done = with_two(key, key2, |q, q2| {
            let old = second.with(|w| {
                w.fetch_update(
                    core::sync::atomic::Ordering::AcqRel,
                    core::sync::atomic::Ordering::Acquire,
                    |v| Some(encoded.apply(v)),
                )
                .unwrap_or_else(|v| v)
            })?;
            let Some(passed) = encoded.compare(old) else {
                return Some(Err(Errno::ENOSYS));
            };
            let mut done = match wake_matching(q, key, n, MATCH_ANY, &mut woken) {
                Ok(d) => d,
                Err(e) => return Some(Err(e)),
            };
            if passed {
                let q2 = q2.unwrap_or(q);
                match wake_matching(q2, key2, n2, MATCH_ANY, &mut woken) {
                    Ok(d) => done += d,
                    Err(e) => return Some(Err(e)),
                }
            }
            Some(Ok(done))
        });
        if let Some(done) = done {
            break done;
        }
    };
    wake_up_all(&woken);
    done
}

/// FUTEX_OP(op, oparg, cmp, cmparg) unpacked (Linux: `FUTEX_OP_*` in
/// `include/uapi/linux/futex.h`).
struct WakeOp {
    /// FUTEX_OP_SET, ADD, OR, ANDN or XOR (0 to 4).
    op: u32,
    /// The operand; already `1 << oparg` under FUTEX_OP_OPARG_SHIFT.
    oparg: u32,
    /// FUTEX_OP_CMP_EQ, NE, LT, LE, GT or GE (0 to 5); others are ENOSYS
    /// once the operation is done.
    cmp: u32,
    /// What the old value is compared with, sign-extended from 12 bits.
    cmparg: i32,
}

impl WakeOp {
    /// Unpacks WAKE_OP's `val3`: op in bits 28-30 with bit 31 the
    /// OPARG_SHIFT flag, cmp in 24-27, oparg in 12-23, cmparg in 0-11. None
    /// for an op Linux does not know. A shift outside 0..=31 is taken
    /// modulo 32, as Linux does (with a warning).
    fn decode(encoded: u32) -> Option<WakeOp> {
        let op = (encoded >> 28) & 7;
        // 12-bit fields, sign-extended.
        let mut oparg = ((encoded << 8) as i32 >> 20) as u32;
        let cmparg = (encoded << 20) as i32 >> 20;
        if encoded & (1 << 31) != 0 {
            oparg = 1 << (oparg & 31);
        }
        (op <= 4).then_some(WakeOp {
            op,
            oparg,
            cmp: (encoded >> 24) & 0xf,
            cmparg,
        })
    }

    /// SET, ADD, OR, ANDN, XOR.
    fn apply(&self, old: u32) -> u32 {
        match self.op {
            0 => self.oparg,
            1 => old.wrapping_add(self.oparg),
            2 => old | self.oparg,
            3 => old & !self.oparg,
            _ => old ^ self.oparg,
        }
    }

    /// EQ, NE, LT, LE, GT, GE, signed; None for an unknown comparison.
    fn compare(&self, old: u32) -> Option<bool> {
        let (old, arg) = (old as i32, self.cmparg);
        Some(match self.cmp {
            0 => old == arg,
            1 => old != arg,
            2 => old < arg,
            3 => old <= arg,
            4 => old > arg,
            5 => old >= arg,
            _ => return None,
        })
    }
}

/// One word of a futex_waitv(2) call, checked (Linux: `struct
/// futex_waitv` after `futex_parse_waitv`).
pub struct WaitvEntry {
    /// The word's user address.
    pub uaddr: usize,
    /// The value it must hold to sleep.
    pub val: u32,
    /// Not FUTEX2_PRIVATE.
    pub shared: bool,
}

/// futex_waitv(2): sleep on every word of `entries` while each holds its
/// value, until a wake on any; returns the index of one woken (Linux:
/// `futex_wait_multiple`). EAGAIN if a word differs, EFAULT or EINVAL for
/// a bad one, ETIMEDOUT at `deadline`; a signal ends it with ERESTARTSYS,
/// to run again after an SA_RESTART handler (the deadline is absolute).
pub fn waitv(entries: &[WaitvEntry], deadline: Option<u64>) -> KResult<usize> {
    // Every name first, as Linux takes every key before it reads a value:
    // a misaligned word, or a shared one that cannot be faulted in, fails
    // the call whatever the words before it hold.
    for e in entries {
        key_at(e.uaddr, e.shared)?;
    }
    let prio = my_prio();
    loop {
        let mut qs: Vec<Arc<FutexQ>> = Vec::with_capacity(entries.len());
        for e in entries {
            let queued = loop {
                let w = match word_at(e.uaddr, Access::Read, e.shared) {
                    Ok(w) => w,
                    Err(err) => break Err(err),
                };
                let mut hb = bucket(w.key).lock();
                match w.load() {
                    None => continue,
                    Some(v) if v != e.val => break Err(Errno::EAGAIN),
                    Some(_) => {}
                }
                let q = FutexQ::new(w.key);
                enqueue(
                    &mut hb,
                    Waiter {
                        q: q.clone(),
                        prio,
                        bitset: MATCH_ANY,
                        requeue_pi_key: None,
                        pi_state: None,
                    },
                );
                break Ok(q);
            };
            match queued {
                Ok(q) => qs.push(q),
                // A wake that came meanwhile wins over the error.
                Err(err) => return unqueue_multiple(&qs).ok_or(err),
            }
        }
        let result = sleep(|| qs.iter().any(|q| q.state() != Q_QUEUED), deadline);
        if let Some(i) = unqueue_multiple(&qs) {
            return Ok(i);
        }
        result.map_err(|e| match e {
            Errno::EINTR => Errno::ERESTARTSYS,
            e => e,
        })?;
    }
}

/// Takes every entry of a waitv out of its bucket; returns the index of
/// the last one a wake had taken already, if any (Linux:
/// `futex_unqueue_multiple`).
fn unqueue_multiple(qs: &[Arc<FutexQ>]) -> Option<usize> {
    let mut woken = None;
    for (i, q) in qs.iter().enumerate() {
        if !unqueue(q) {
            woken = Some(i);
        }
    }
    woken
}
