//! Fast user-space mutexes (Linux: `kernel/futex/`): a wait sleeps while a
//! user word still holds an expected value, a wake wakes sleepers on a
//! word, as glibc's mutexes, condition variables, semaphores, rwlocks and
//! `pthread_join` use them: FUTEX_WAIT and WAIT_BITSET (`waitwake.c`),
//! WAKE and WAKE_BITSET, REQUEUE and CMP_REQUEUE (`requeue.c`), and
//! WAKE_OP (`waitwake.c`, `futex_atomic_op_inuser`); and the robust list a
//! dying thread's locks are released from (`core.c`, `exit_robust_list`).
//!
//! A word is named as Linux names it (`get_futex_key`): a private futex
//! (FUTEX_PRIVATE_FLAG) by its address space and address; a shared one in
//! a page of a file's page cache (a MAP_SHARED mapping, or a private file
//! mapping not yet copied) by the file and offset, so every process
//! mapping it meets there; a shared one in anonymous memory by address
//! space and address again, marked shared (such a page is shared only by
//! fork, until a write copies it). So the name survives copy-on-write,
//! which moves the word to another frame. Waiters hang in one of 64 hash
//! buckets by that name; a requeue moves them to another name's bucket.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::vfs::InodeKind;
use crate::mm::addr::{phys_to_virt, PhysAddr, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::fault::{fault_in, Access};
use crate::mm::memory;
use crate::mm::pgtable;
use crate::mm::uaccess::read_user;
use crate::sync::SpinLock;
use crate::task::{current, Thread};

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

/// One sleeping thread. `key` is shared with the sleeper, which must find
/// its entry again after a timeout or signal even if a requeue moved it.
struct Waiter {
    /// The futex this thread waits on; a requeue rewrites it, under the
    /// bucket lock.
    key: Arc<SpinLock<Key>>,
    /// Which wakes this waiter answers: a wake's bitset must share a bit with
    /// it (FUTEX_WAIT_BITSET; [`MATCH_ANY`] for plain FUTEX_WAIT).
    bitset: u32,
    /// The sleeping thread, for `wake_up`.
    thread: Arc<Thread>,
    /// Set by the waker as it takes the entry out of its bucket; the sleeper
    /// tests it to tell a wake from a timeout or signal.
    woken: Arc<AtomicBool>,
}

impl Waiter {
    /// The futex this waiter is on now (a requeue may have moved it).
    fn key(&self) -> Key {
        *self.key.lock()
    }
}

/// An empty bucket, to build [`QUEUES`] from.
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: SpinLock<Vec<Waiter>> = SpinLock::new(Vec::new());
/// The hash buckets of sleeping waiters (Linux: `futex_queues`), each
/// under its own lock, oldest waiter first.
static QUEUES: [SpinLock<Vec<Waiter>>; BUCKETS] = [EMPTY; BUCKETS];

/// The bucket `key` hashes to (Linux: `futex_hash`).
fn bucket_index(key: Key) -> usize {
    ((key.space >> 4) ^ (key.offset as usize >> 2)) % BUCKETS
}

/// The bucket for `key`, which its waiters are queued in.
fn bucket(key: Key) -> &'static SpinLock<Vec<Waiter>> {
    &QUEUES[bucket_index(key)]
}

/// A user word of the caller's: its name, and the frame that holds it
/// now, faulted in for `access` first (a write for WAKE_OP, so a
/// copy-on-write page is copied before the kernel changes it).
struct Word {
    /// The futex's name, what waiters on it are queued under.
    key: Key,
    /// The physical address of the word now, for reading and changing it
    /// through the linear map.
    pa: PhysAddr,
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
    if !shared {
        return Ok(Word { key: private, pa });
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
    let key = file.unwrap_or(Key {
        offset: private.offset | MM_SHARED,
        ..private
    });
    Ok(Word { key, pa })
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

/// The user word at `pa`, through the kernel's own mapping: no fault
/// while a bucket lock is held.
fn word(pa: PhysAddr) -> &'static AtomicU32 {
    // SAFETY: pa is in the frame of a mapped user page, in the linear map,
    // 4-aligned (word_at checks); the page may change under us, which an
    // atomic tolerates.
    unsafe { &*(phys_to_virt(pa) as *const AtomicU32) }
}

/// Does `uaddr` still lie in the frame at `pa` (writable, for a write)?
/// Asked under the bucket lock: since `word_at` found it, a copy-on-write
/// may have moved the word to a new frame, or a zap or a fork taken or
/// shared the old one, and a word read or changed there would be the wrong
/// one (a waiter reading the old frame sleeps through the wake meant for
/// it). Then the caller looks again. Linux reads and writes the word
/// through the user address under the bucket lock, with page faults
/// disabled, and retries on a fault.
fn still_at(uaddr: usize, pa: PhysAddr, access: Access) -> bool {
    let Some(mm) = crate::task::current_mm() else {
        return false;
    };
    let _ptl = mm.page_table_lock.lock();
    pgtable::translate(&&*mm, mm.pgd, uaddr)
        .is_some_and(|t| t.pa == pa && (access == Access::Read || t.pte.prot().is_user_writable()))
}

/// FUTEX_WAIT / WAIT_BITSET: sleep until a wake whose bitset meets
/// `bitset`, if `*uaddr == val`; EAGAIN if not; ETIMEDOUT at `deadline` (a
/// counter value); EINTR on a signal; EINVAL for an empty bitset (Linux:
/// `futex_wait`).
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
    let woken = Arc::new(AtomicBool::new(false));
    let my_key = loop {
        let Word { key, pa } = word_at(uaddr, Access::Read, shared)?;
        let mut q = bucket(key).lock();
        if !still_at(uaddr, pa, Access::Read) {
            continue;
        }
        // A waker changes the word before it takes this lock, so the word
        // read under it decides.
        if word(pa).load(Ordering::Acquire) != val {
            return Err(Errno::EAGAIN);
        }
        let my_key = Arc::new(SpinLock::new(key));
        q.push(Waiter {
            key: my_key.clone(),
            bitset,
            thread: current(),
            woken: woken.clone(),
        });
        break my_key;
    };
    let result = loop {
        if woken.load(Ordering::Acquire) {
            break Ok(());
        }
        if crate::task::signal::signal_pending() {
            break Err(Errno::EINTR);
        }
        let d = deadline.unwrap_or(u64::MAX);
        if crate::arch::timer::counter() >= d {
            break Err(Errno::ETIMEDOUT);
        }
        crate::task::sleep_until(d, || {
            woken.load(Ordering::Acquire) || crate::task::signal::signal_pending()
        });
    };
    if result.is_err() && !unqueue(&my_key, &woken) {
        return Ok(()); // woken on the way out: the wake counts
    }
    result
}

/// Takes a sleeper that gave up out of its bucket, wherever a requeue put
/// it; false if a wake took it first.
fn unqueue(key: &SpinLock<Key>, woken: &Arc<AtomicBool>) -> bool {
    loop {
        let at = *key.lock();
        let mut q = bucket(at).lock();
        if *key.lock() != at {
            continue; // requeued meanwhile: look in the new bucket
        }
        if let Some(i) = q.iter().position(|w| Arc::ptr_eq(&w.woken, woken)) {
            q.remove(i);
            return true;
        }
        return false;
    }
}

/// Wakes up to `n` of the waiters on `key` in `q` whose bitset meets
/// `bitset`, oldest first, into `woken`.
fn wake_locked(q: &mut Vec<Waiter>, key: Key, n: usize, bitset: u32, woken: &mut Vec<Arc<Thread>>) {
    let mut i = 0;
    let mut left = n;
    while i < q.len() && left > 0 {
        if q[i].key() == key && q[i].bitset & bitset != 0 {
            let w = q.remove(i);
            w.woken.store(true, Ordering::Release);
            woken.push(w.thread);
            left -= 1;
        } else {
            i += 1;
        }
    }
}

/// Wakes each thread `wake_locked` took, once the bucket locks are
/// dropped.
fn wake_up_all(woken: &[Arc<Thread>]) {
    for t in woken {
        crate::task::wake_up(t);
    }
}

/// FUTEX_WAKE / WAKE_BITSET: wake up to `n` threads waiting on `uaddr`
/// whose bitset meets `bitset`; returns how many (Linux: `futex_wake`).
pub fn wake(uaddr: usize, shared: bool, n: usize, bitset: u32) -> KResult<usize> {
    if bitset == 0 {
        return Err(Errno::EINVAL);
    }
    let key = key_at(uaddr, shared)?;
    let mut woken = Vec::new();
    wake_locked(&mut bucket(key).lock(), key, n, bitset, &mut woken);
    wake_up_all(&woken);
    Ok(woken.len())
}

/// Locks the buckets of two keys, lower index first, once if they share
/// one, and runs `f` with them (the second None when shared).
fn with_two<R>(
    a: Key,
    b: Key,
    f: impl FnOnce(&mut Vec<Waiter>, Option<&mut Vec<Waiter>>) -> R,
) -> R {
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

/// FUTEX_REQUEUE / CMP_REQUEUE: wake up to `n_wake` waiters on `uaddr`,
/// then move up to `n_requeue` more to wait on `uaddr2`, so a broadcast
/// wakes one thread rather than a herd. With `cmp`, EAGAIN unless
/// `*uaddr` still holds it. Returns the woken and requeued together
/// (Linux: `futex_requeue`).
pub fn requeue(
    uaddr: usize,
    uaddr2: usize,
    shared: bool,
    n_wake: usize,
    n_requeue: usize,
    cmp: Option<u32>,
) -> KResult<usize> {
    let mut woken = Vec::new();
    let moved = loop {
        let first = word_at(uaddr, Access::Read, shared)?;
        let (from, to) = (first.key, word_at(uaddr2, Access::Read, shared)?.key);
        let moved = with_two(from, to, |q, q2| -> Option<KResult<usize>> {
            if cmp.is_some() && !still_at(uaddr, first.pa, Access::Read) {
                return None;
            }
            if cmp.is_some_and(|c| word(first.pa).load(Ordering::Acquire) != c) {
                return Some(Err(Errno::EAGAIN));
            }
            wake_locked(q, from, n_wake, MATCH_ANY, &mut woken);
            let mut moved = 0;
            let mut i = 0;
            let mut taken = Vec::new();
            while i < q.len() && moved < n_requeue {
                if q[i].key() == from {
                    let w = q.remove(i);
                    *w.key.lock() = to;
                    taken.push(w);
                    moved += 1;
                } else {
                    i += 1;
                }
            }
            match q2 {
                Some(q2) => q2.extend(taken),
                None => q.extend(taken),
            }
            Some(Ok(moved))
        });
        if let Some(moved) = moved {
            break moved?;
        }
    };
    wake_up_all(&woken);
    Ok(woken.len() + moved)
}

/// FUTEX_WAKE_OP: change `*uaddr2` by the operation encoded in `op` and,
/// atomically with it, wake up to `n` waiters on `uaddr`, then up to `n2`
/// on `uaddr2` if the old value passes the encoded comparison. Returns how
/// many woke (Linux: `futex_wake_op`, `futex_atomic_op_inuser`). ENOSYS
/// for an unknown operation or comparison, as Linux.
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
    loop {
        let second = word_at(uaddr2, Access::Write, shared)?;
        let key2 = second.key;
        let done = with_two(key, key2, |q, q2| {
            if !still_at(uaddr2, second.pa, Access::Write) {
                return false;
            }
            let old = word(second.pa)
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                    Some(encoded.apply(v))
                })
                .unwrap_or_else(|v| v);
            wake_locked(q, key, n, MATCH_ANY, &mut woken);
            if encoded.compare(old) {
                let q2 = q2.unwrap_or(q);
                wake_locked(q2, key2, n2, MATCH_ANY, &mut woken);
            }
            true
        });
        if done {
            break;
        }
    }
    wake_up_all(&woken);
    Ok(woken.len())
}

/// FUTEX_WAITERS: in a robust lock word, some thread is waiting for it.
const FUTEX_WAITERS: u32 = 0x8000_0000;
/// FUTEX_OWNER_DIED: in a robust lock word, the holder died without
/// unlocking it.
const FUTEX_OWNER_DIED: u32 = 0x4000_0000;
/// FUTEX_TID_MASK: the bits of a robust lock word that hold the
/// holder's TID.
const FUTEX_TID_MASK: u32 = 0x3fff_ffff;
/// Most entries walked in a robust list, so a looped one cannot hang an
/// exit (Linux: `ROBUST_LIST_LIMIT`).
const ROBUST_LIST_LIMIT: usize = 2048;

/// A dying thread's robust list (Linux: `exit_robust_list`): `head` is a
/// `struct robust_list_head { next, futex_offset, list_op_pending }` in
/// user memory; each entry (and the pending one) names a lock word at
/// entry + futex_offset, which `handle_futex_death` releases. A bad
/// pointer ends the walk quietly, as in Linux.
pub fn exit_robust_list(head: usize, tid: u32) {
    let Ok([first, offset, pending]) = read_user::<[u64; 3]>(head) else {
        return;
    };
    // Bit 0 of an entry marks a PI futex.
    let (mut entry, pending) = (first as usize, pending as usize);
    for _ in 0..ROBUST_LIST_LIMIT {
        if entry & !1 == head {
            break;
        }
        // The next entry first: releasing this one lets its waiter run and
        // reuse the memory.
        let Ok(next) = read_user::<u64>(entry & !1) else {
            return;
        };
        if entry != pending {
            handle_futex_death((entry & !1).wrapping_add(offset as usize), tid, false);
        }
        entry = next as usize;
    }
    if pending != 0 {
        handle_futex_death((pending & !1).wrapping_add(offset as usize), tid, true);
    }
}

/// Releases a robust lock word that dying thread `tid` may hold (Linux:
/// `handle_futex_death`): if it holds it, the word becomes
/// FUTEX_OWNER_DIED (keeping FUTEX_WAITERS) and one waiter is woken to
/// take it over. A lock it was still acquiring (`pending`) and nobody
/// holds gets a wake too, so a waiter is not left asleep. The wakes are
/// shared, as Linux's, which glibc matches by treating robust mutexes as
/// shared.
fn handle_futex_death(uaddr: usize, tid: u32, pending: bool) {
    let Ok(at) = word_at(uaddr, Access::Write, true) else {
        return;
    };
    let w = word(at.pa);
    let mut cur = w.load(Ordering::Acquire);
    loop {
        if pending && cur == 0 {
            let _ = wake(uaddr, true, 1, MATCH_ANY);
            return;
        }
        if cur & FUTEX_TID_MASK != tid {
            return;
        }
        let new = (cur & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
        match w.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(now) => cur = now,
        }
    }
    if cur & FUTEX_WAITERS != 0 {
        let _ = wake(uaddr, true, 1, MATCH_ANY);
    }
}

/// FUTEX_OP(op, oparg, cmp, cmparg) unpacked (Linux: `FUTEX_OP_*` in
/// `include/uapi/linux/futex.h`).
struct WakeOp {
    /// FUTEX_OP_SET, ADD, OR, ANDN or XOR (0 to 4).
    op: u32,
    /// The operand; already `1 << oparg` under FUTEX_OP_OPARG_SHIFT.
    oparg: u32,
    /// FUTEX_OP_CMP_EQ, NE, LT, LE, GT or GE (0 to 5).
    cmp: u32,
    /// What the old value is compared with, sign-extended from 12 bits.
    cmparg: i32,
}

impl WakeOp {
    /// Unpacks WAKE_OP's `val3`: op in bits 28-31 (bit 31 the OPARG_SHIFT
    /// flag), cmp in 24-27, oparg in 12-23, cmparg in 0-11. None for an op or
    /// comparison Linux does not know.
    fn decode(encoded: u32) -> Option<WakeOp> {
        const OPARG_SHIFT: u32 = 8;
        let mut op = (encoded >> 28) & 0xf;
        // 12-bit fields, sign-extended.
        let mut oparg = ((encoded << 8) as i32 >> 20) as u32;
        let cmparg = (encoded << 20) as i32 >> 20;
        if op & OPARG_SHIFT != 0 {
            op &= !OPARG_SHIFT;
            if oparg > 31 {
                return None;
            }
            oparg = 1 << oparg;
        }
        let cmp = (encoded >> 24) & 0xf;
        (op <= 4 && cmp <= 5).then_some(WakeOp {
            op,
            oparg,
            cmp,
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

    /// EQ, NE, LT, LE, GT, GE, signed.
    fn compare(&self, old: u32) -> bool {
        let (old, arg) = (old as i32, self.cmparg);
        match self.cmp {
            0 => old == arg,
            1 => old != arg,
            2 => old < arg,
            3 => old <= arg,
            4 => old > arg,
            _ => old >= arg,
        }
    }
}
