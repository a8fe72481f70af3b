//! Fast user-space mutexes (Linux: `kernel/futex/`): a wait sleeps while a
//! user word still holds an expected value, a wake wakes sleepers on a
//! word, as glibc's mutexes, condition variables, semaphores, rwlocks and
//! `pthread_join` use them. This file is Linux's `core.c`: how a word is
//! named, the hash buckets sleepers queue in, and what a dying thread's
//! robust list and PI locks pass on; `waitwake.rs` has WAIT, WAKE, WAKE_OP
//! and futex_waitv, `requeue.rs` the requeues, `pi.rs` the
//! priority-inheritance locks.
//!
//! A word is named as Linux names it (`get_futex_key`): a private futex
//! (FUTEX_PRIVATE_FLAG) by its address space and address; a shared one in
//! a page of a file's page cache (a MAP_SHARED mapping, or a private file
//! mapping not yet copied) by the file and offset, so every process
//! mapping it meets there; a shared one in anonymous memory by address
//! space and address again, marked shared (such a page is shared only by
//! fork, until a write copies it). So the name survives copy-on-write,
//! which moves the word to another frame. Waiters hang in one of 64 hash
//! buckets by that name, in priority order (Linux's `plist`); a requeue
//! moves them to another name's bucket.

mod pi;
mod requeue;
mod waitwake;

pub use pi::{lock_pi, unlock_pi};
pub use requeue::{requeue, wait_requeue_pi};
pub use waitwake::{wait, waitv, wake, wake_op, WaitvEntry};

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::vfs::InodeKind;
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::fault::Access;
use crate::mm::gup::fault_in;
use crate::mm::memory;
use crate::mm::pgtable;
use crate::mm::uaccess::read_user;
use crate::sync::{SpinLock, SpinLockGuard};
use crate::task::process::UserThread;
use crate::task::{current, Thread};

use pi::PiState;
use uapi::futex::{FUTEX_OWNER_DIED, FUTEX_TID_MASK, FUTEX_WAITERS, ROBUST_LIST_LIMIT};

/// How many hash buckets waiters are spread over (Linux sizes its
/// `futex_queues` by the number of CPUs).
const BUCKETS: usize = 64;

/// A bitset that matches every other (Linux: `FUTEX_BITSET_MATCH_ANY`),
/// what plain FUTEX_WAIT and FUTEX_WAKE use.
pub const MATCH_ANY: u32 = u32::MAX;

/// A futex's name (Linux: `union futex_key`): what it lives in (an
/// address space or a file, by address) and where in that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    /// The address space (`Mm`) or file (`Inode`) the word lives in, by the
    /// address of that object.
    space: usize,
    /// Where in `space`: for an address space, the user address shifted
    /// left one, its bit 0 free for [`MM_SHARED`]; for a file, the byte
    /// offset in the file.
    offset: u64,
}

/// Marks a shared futex in anonymous memory apart from a private one at
/// the same address (Linux: `FUT_OFF_MMSHARED`).
const MM_SHARED: u64 = 1;

/// [`FutexQ::state`]: still queued, asleep or about to be.
const Q_QUEUED: u8 = 0;
/// [`FutexQ::state`]: a wake took it out of its bucket.
const Q_WOKEN: u8 = 1;
/// [`FutexQ::state`]: it holds the PI lock it waited for: handed over by
/// an unlock or taken for it by a requeue (out of the bucket, the word
/// already naming it), or left to it by a dying owner (still in the
/// bucket, the word for it to fix; Linux: `fixup_pi_owner`).
const Q_LOCKED: u8 = 2;

/// One sleeping thread's part of a wait, shared by the sleeper and whoever
/// wakes or moves it (Linux: `struct futex_q`).
struct FutexQ {
    /// The futex it is queued on; a requeue rewrites it, holding both
    /// buckets' locks, so the sleeper finds its entry again.
    key: SpinLock<Key>,
    /// The sleeping thread, for `wake_up`.
    thread: Arc<Thread>,
    /// Its TID, what a PI lock word holds for it.
    tid: u32,
    /// Q_QUEUED, Q_WOKEN or Q_LOCKED, changed under the bucket lock.
    state: AtomicU8,
}

impl FutexQ {
    /// The calling thread's entry for a wait on `key`.
    fn new(key: Key) -> Arc<FutexQ> {
        let thread = current();
        let tid = thread.user.as_ref().map_or(0, |u| u.tid);
        Arc::new(FutexQ {
            key: SpinLock::new(key),
            thread,
            tid,
            state: AtomicU8::new(Q_QUEUED),
        })
    }

    /// The futex it is on now (a requeue may have moved it).
    fn key(&self) -> Key {
        *self.key.lock()
    }

    /// Q_QUEUED, Q_WOKEN or Q_LOCKED.
    fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }
}

/// An entry in a bucket: a sleeper and what it waits for.
struct Waiter {
    /// The sleeper, shared with it.
    q: Arc<FutexQ>,
    /// Its place in the queue, lower first, arrival order among equals
    /// (Linux: the `plist` priority, [`SchedPolicy::futex_prio`]).
    ///
    /// [`SchedPolicy::futex_prio`]: crate::task::sched_policy::SchedPolicy::futex_prio
    prio: u32,
    /// Which wakes it answers: a wake's bitset must share a bit with it
    /// (FUTEX_WAIT_BITSET; [`MATCH_ANY`] otherwise).
    bitset: u32,
    /// FUTEX_WAIT_REQUEUE_PI: the PI futex it may be requeued to and
    /// nothing else may wake it (Linux: `requeue_pi_key`, `rt_waiter`).
    requeue_pi_key: Option<Key>,
    /// Waiting for a PI lock: that lock's state (Linux: `pi_state`).
    pi_state: Option<Arc<PiState>>,
}

impl Waiter {
    /// The futex it is on now.
    fn key(&self) -> Key {
        self.q.key()
    }

    /// Is it waiting in a PI operation, which only PI operations may wake
    /// or move (Linux: `pi_state || rt_waiter`)?
    fn is_pi(&self) -> bool {
        self.pi_state.is_some() || self.requeue_pi_key.is_some()
    }
}

/// A bucket's waiters, in queue order.
type Bucket = Vec<Waiter>;

/// An empty bucket, to build [`QUEUES`] from.
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: SpinLock<Bucket> = SpinLock::new(Vec::new());
/// The hash buckets of sleeping waiters (Linux: `futex_queues`), each
/// under its own lock.
static QUEUES: [SpinLock<Bucket>; BUCKETS] = [EMPTY; BUCKETS];

/// The bucket `key` hashes to (Linux: `futex_hash`).
fn bucket_index(key: Key) -> usize {
    ((key.space >> 4) ^ (key.offset as usize >> 2)) % BUCKETS
}

/// The bucket for `key`, which its waiters are queued in.
fn bucket(key: Key) -> &'static SpinLock<Bucket> {
    &QUEUES[bucket_index(key)]
}

/// Queues `w` behind every waiter of its priority or better (Linux:
/// `plist_add`).
fn enqueue(hb: &mut Bucket, w: Waiter) {
    let at = hb.iter().position(|o| o.prio > w.prio).unwrap_or(hb.len());
    hb.insert(at, w);
}

/// The first waiter on `key` in `hb` (Linux: `futex_top_waiter`).
fn top_waiter(hb: &Bucket, key: Key) -> Option<usize> {
    hb.iter().position(|w| w.key() == key)
}

/// Where `q` is in `hb`, if it is still there.
fn position(hb: &Bucket, q: &Arc<FutexQ>) -> Option<usize> {
    hb.iter().position(|w| Arc::ptr_eq(&w.q, q))
}

/// Takes `hb[i]` out for a wake: marks it `state`, and adds its thread to
/// `woken`, to be woken once the bucket locks are dropped.
fn wake_waiter(hb: &mut Bucket, i: usize, state: u8, woken: &mut Vec<Arc<Thread>>) {
    let w = hb.remove(i);
    w.q.state.store(state, Ordering::Release);
    woken.push(w.q.thread.clone());
}

/// Wakes each thread a wake took, once the bucket locks are dropped.
fn wake_up_all(woken: &[Arc<Thread>]) {
    for t in woken {
        crate::task::wake_up(t);
    }
}

/// Locks the bucket `q` is queued in now, wherever a requeue put it.
fn lock_q(q: &FutexQ) -> SpinLockGuard<'static, Bucket> {
    loop {
        let at = q.key();
        let hb = bucket(at).lock();
        if q.key() == at {
            return hb;
        }
    }
}

/// Takes a sleeper that gave up out of its bucket; false if a wake took
/// it first (Linux: `futex_unqueue`).
fn unqueue(q: &Arc<FutexQ>) -> bool {
    let mut hb = lock_q(q);
    match position(&hb, q) {
        Some(i) => {
            hb.remove(i);
            true
        }
        None => false,
    }
}

/// Sleeps until `done()`, a signal (EINTR) or `deadline`, a counter value
/// (ETIMEDOUT) (Linux: `futex_wait_queue`'s `schedule`, the hrtimer).
fn sleep(done: impl Fn() -> bool, deadline: Option<u64>) -> KResult<()> {
    let d = deadline.unwrap_or(u64::MAX);
    loop {
        if done() {
            return Ok(());
        }
        if crate::task::signal::signal_pending() {
            return Err(Errno::EINTR);
        }
        if crate::arch::timer::counter() >= d {
            return Err(Errno::ETIMEDOUT);
        }
        crate::task::sleep_until(d, || done() || crate::task::signal::signal_pending());
    }
}

/// Locks the buckets of two keys, lower index first, once if they share
/// one, and runs `f` with them (the second None when shared; Linux:
/// `double_lock_hb`).
fn with_two<R>(a: Key, b: Key, f: impl FnOnce(&mut Bucket, Option<&mut Bucket>) -> R) -> R {
    let (ia, ib) = (bucket_index(a), bucket_index(b));
    if ia == ib {
        return f(&mut QUEUES[ia].lock(), None);
    }
    let (first, second) = (QUEUES[ia.min(ib)].lock(), QUEUES[ia.max(ib)].lock());
    let (mut qa, mut qb) = if ia < ib {
        (first, second)
    } else {
        (second, first)
    };
    f(&mut qa, Some(&mut qb))
}

/// A user word of the caller's: its name, and the frame that holds it
/// now, faulted in for `access` first (a write for the operations that
/// change it, so a copy-on-write page is copied before the kernel does).
struct Word {
    /// The user address.
    uaddr: usize,
    /// The futex's name, what waiters on it are queued under.
    key: Key,
    /// The physical address of the word now, for reading and changing it
    /// through the linear map.
    pa: PhysAddr,
    /// What it was faulted in for.
    access: Access,
}

impl Word {
    /// Runs `f` on the word if `uaddr` still lies in the frame at `pa`
    /// (writable, for a write), holding the page-table lock so no zap
    /// takes the frame meanwhile; None if not. Called under a bucket lock:
    /// since `word_at` found it, a copy-on-write may have moved the word
    /// to a new frame, or a zap or a fork taken or shared the old one, and
    /// a word read or changed there would be the wrong one (a waiter
    /// reading the old frame sleeps through the wake meant for it). Then
    /// the caller looks again. Linux reads and writes the word through the
    /// user address under the bucket lock, with page faults disabled, and
    /// retries on a fault.
    fn with<R>(&self, f: impl FnOnce(&AtomicU32) -> R) -> Option<R> {
        let mm = crate::task::current_mm()?;
        let _ptl = mm.page_table_lock.lock();
        let t = pgtable::translate(&&*mm, mm.pgd, self.uaddr)?;
        // A write needs the entry writable and dirty already: the word
        // is written through the linear map, which dirties no entry.
        let writable = t.pte.prot().is_user_writable() && t.pte.is_dirty();
        if t.pa != self.pa || (self.access == Access::Write && !writable) {
            return None;
        }
        // SAFETY: pa is in the frame of a mapped user page, in the linear
        // map, 4-aligned (word_at checks), and the page-table lock keeps it
        // mapped; user space may change it meanwhile, which an atomic
        // tolerates.
        Some(f(unsafe { &*(phys_to_virt(self.pa) as *const AtomicU32) }))
    }

    /// The word's value, or None if it moved (see [`Word::with`]).
    fn load(&self) -> Option<u32> {
        self.with(|w| w.load(Ordering::Acquire))
    }

    /// Replaces `old` with `new` if the word still holds it; returns what
    /// it held (Linux: `futex_cmpxchg_value_locked`). None if it moved.
    fn cmpxchg(&self, old: u32, new: u32) -> Option<u32> {
        self.with(|w| {
            w.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
                .unwrap_or_else(|v| v)
        })
    }
}

/// The [`Word`] at user address `uaddr` of the caller, after faulting the
/// page in for `access`: named privately, or by file and offset if
/// `shared` and it is in the page cache (Linux: `get_futex_key`). EINVAL
/// if `uaddr` is not 4-aligned, EFAULT if it cannot be faulted in.
fn word_at(uaddr: usize, access: Access, shared: bool) -> KResult<Word> {
    if !uaddr.is_multiple_of(4) {
        return Err(Errno::EINVAL);
    }
    let mm = crate::task::current_mm().ok_or(Errno::EFAULT)?;
    // Another thread may unmap the page again between the fault and the
    // look-up (a zap, a contiguous block repainted break-before-make):
    // fault it in again, as Linux's futex code retries `get_user`. Only a
    // fault that fails is EFAULT.
    let (pa, folio) = loop {
        fault_in(&mm, uaddr, access, false).map_err(|_| Errno::EFAULT)?;
        if let Some(found) = memory::follow_page(&mm, uaddr) {
            break found;
        }
    };
    let private = private_key(&mm, uaddr);
    let word = |key| Word {
        uaddr,
        key,
        pa,
        access,
    };
    if !shared {
        return Ok(word(private));
    }
    // A page of a file's page cache is named by the file; a private
    // (anonymous, or copied) page by the address space.
    let map = mm.mmap_lock_readonly();
    let file = map.vmas.find(uaddr).and_then(|(start, _, vma)| {
        let inode = vma.file.as_ref()?;
        let cached = !folio.is_anon();
        (cached && matches!(inode.kind, InodeKind::File(_))).then(|| Key {
            space: Arc::as_ptr(inode) as usize,
            offset: (vma.pgoff_of(start, uaddr) << PAGE_SHIFT) + (uaddr % PAGE_SIZE) as u64,
        })
    });
    Ok(word(file.unwrap_or(Key {
        offset: private.offset | MM_SHARED,
        ..private
    })))
}

/// A private futex's name: the address space and the address (Linux:
/// `get_futex_key` without FLAGS_SHARED, which never looks at the page).
fn private_key(mm: &Arc<crate::mm::mm_struct::Mm>, uaddr: usize) -> Key {
    Key {
        space: Arc::as_ptr(mm) as usize,
        offset: (uaddr as u64) << 1,
    }
}

/// The name of the futex at `uaddr`, for a wake: a private one needs no
/// page, so a wake on memory just unmapped wakes nobody rather than
/// failing, as on Linux.
fn key_at(uaddr: usize, shared: bool) -> KResult<Key> {
    if shared {
        return Ok(word_at(uaddr, Access::Read, true)?.key);
    }
    if !uaddr.is_multiple_of(4) {
        return Err(Errno::EINVAL);
    }
    let mm = crate::task::current_mm().ok_or(Errno::EFAULT)?;
    Ok(private_key(&mm, uaddr))
}

/// [`UserThread::futex_state`]: the thread's futexes are its own.
pub const FUTEX_STATE_OK: u8 = 0;
/// [`UserThread::futex_state`]: they are being released; a PI locker
/// waits and looks again (Linux: `-EBUSY` from `attach_to_pi_owner`).
const FUTEX_STATE_EXITING: u8 = 1;
/// [`UserThread::futex_state`]: released at exit; a PI lock that still
/// names the thread has no owner left to release it.
const FUTEX_STATE_DEAD: u8 = 2;

/// What an exiting thread's futexes pass on, while its TID still finds it
/// (Linux: `futex_exit_release`, in `exit_mm` before anything else is
/// let go): the locks on its robust list, then the PI locks threads wait
/// for it to release.
pub fn exit_release(user: &UserThread) {
    futex_cleanup(user, FUTEX_STATE_DEAD);
}

/// The same at execve, the thread living on with no robust list: the new
/// program registers its own (Linux: `futex_exec_release`).
pub fn exec_release(user: &UserThread) {
    futex_cleanup(user, FUTEX_STATE_OK);
}

/// Releases `user`'s robust list and PI locks between the EXITING state
/// and `end`, which a PI locker of a lock it holds waits for (Linux:
/// `futex_cleanup_begin`, `futex_cleanup`, `futex_cleanup_end`). A locker
/// checks the state under a bucket lock, and `exit_pi_state_list` takes
/// each bucket lock after the state is EXITING: a locker that saw it OK
/// is queued by the time the walk comes to its bucket.
fn futex_cleanup(user: &UserThread, end: u8) {
    user.futex_state
        .store(FUTEX_STATE_EXITING, Ordering::Release);
    let head = user.robust_list.swap(0, Ordering::Relaxed);
    if head != 0 {
        exit_robust_list(head, user.tid);
    }
    pi::exit_pi_state_list(user.tid);
    user.futex_state.store(end, Ordering::Release);
}

/// A dying thread's robust list (Linux: `exit_robust_list`): `head` is a
/// `struct robust_list_head { next, futex_offset, list_op_pending }` in
/// user memory; each entry (and the pending one) names a lock word at
/// entry + futex_offset, which `handle_futex_death` releases; bit 0 of an
/// entry's pointer marks a PI lock. A bad pointer ends the walk quietly,
/// as in Linux.
fn exit_robust_list(head: usize, tid: u32) {
    let Ok([first, offset, pending]) = read_user::<[u64; 3]>(head) else {
        return;
    };
    let (mut entry, mut pi) = (first as usize & !1, first & 1 != 0);
    let (pending, pending_pi) = (pending as usize & !1, pending & 1 != 0);
    for _ in 0..ROBUST_LIST_LIMIT {
        if entry == head {
            break;
        }
        // The next entry first: releasing this one lets its waiter run and
        // reuse the memory.
        let next = read_user::<u64>(entry);
        if entry != pending
            && handle_futex_death(entry.wrapping_add(offset as usize), tid, pi, false).is_none()
        {
            return;
        }
        let Ok(next) = next else {
            return;
        };
        (entry, pi) = (next as usize & !1, next & 1 != 0);
    }
    if pending != 0 {
        handle_futex_death(pending.wrapping_add(offset as usize), tid, pending_pi, true);
    }
}

/// Releases a robust lock word that dying thread `tid` may hold (Linux:
/// `handle_futex_death`): if it holds it, the word keeps FUTEX_WAITERS and
/// becomes FUTEX_OWNER_DIED with no owner, and for a plain lock one waiter
/// is woken to take it over (a PI lock's waiters get it from
/// `exit_pi_state_list`). A plain lock it was still taking or releasing
/// (`pending`) that is free, or taken by a thread that had no waiters,
/// gets a wake too, so no waiter is left asleep. The wakes are shared, as
/// Linux's, which glibc matches by treating robust mutexes as shared. None
/// for a word that cannot be read or changed, which ends the walk.
fn handle_futex_death(uaddr: usize, tid: u32, pi: bool, pending: bool) -> Option<()> {
    if !uaddr.is_multiple_of(4) {
        return None;
    }
    let mut cur: u32 = read_user(uaddr).ok()?;
    loop {
        let owner = cur & FUTEX_TID_MASK;
        if owner != tid {
            if pending && !pi && (owner == 0 || cur & FUTEX_WAITERS == 0) {
                let _ = wake(uaddr, true, 1, MATCH_ANY);
            }
            return Some(());
        }
        let new = (cur & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
        let at = word_at(uaddr, Access::Write, true).ok()?;
        match at.cmpxchg(cur, new) {
            Some(now) if now == cur => break,
            Some(now) => cur = now,
            None => continue,
        }
    }
    if !pi && cur & FUTEX_WAITERS != 0 {
        let _ = wake(uaddr, true, 1, MATCH_ANY);
    }
    Some(())
}
