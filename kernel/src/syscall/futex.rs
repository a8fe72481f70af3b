//! Futex system calls (Linux: `kernel/futex/syscalls.c`): futex(2) with
//! its operations, futex_waitv(2), and the robust-list registration;
//! the work is in `task/futex/`.

use core::sync::atomic::Ordering;

use super::time::{deadline_after, deadline_at_clock};
use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{read_user, write_user};
use crate::task::clock::{CLOCK_MONOTONIC, CLOCK_REALTIME};
use crate::task::{current, futex};
use uapi::futex::{
    FUTEX2_PRIVATE, FUTEX2_SIZE_MASK, FUTEX2_SIZE_U32, FUTEX_CLOCK_REALTIME, FUTEX_CMP_REQUEUE,
    FUTEX_CMP_REQUEUE_PI, FUTEX_LOCK_PI, FUTEX_LOCK_PI2, FUTEX_PRIVATE_FLAG, FUTEX_REQUEUE,
    FUTEX_TRYLOCK_PI, FUTEX_UNLOCK_PI, FUTEX_WAIT, FUTEX_WAITV_MAX, FUTEX_WAIT_BITSET,
    FUTEX_WAIT_REQUEUE_PI, FUTEX_WAKE, FUTEX_WAKE_BITSET, FUTEX_WAKE_OP,
};

/// The size of `struct robust_list_head`, the only one Linux accepts.
const ROBUST_LIST_HEAD_SIZE: usize = 24;

/// set_robust_list(2): where this thread's robust futexes are listed.
pub fn set_robust_list(head: usize, len: usize) -> SysResult {
    if len != ROBUST_LIST_HEAD_SIZE {
        return Err(Errno::EINVAL);
    }
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::ESRCH)?;
    u.robust_list.store(head, Ordering::Relaxed);
    Ok(0)
}

/// get_robust_list(2): the list head of thread `tid` (0: the caller) and
/// its size. Every process runs as root, which Linux lets read any.
pub fn get_robust_list(tid: i32, uhead: usize, ulen: usize) -> SysResult {
    let thread = match tid {
        0 => current(),
        t if t > 0 => crate::task::process::find_thread(t as u32).ok_or(Errno::ESRCH)?,
        _ => return Err(Errno::ESRCH),
    };
    let u = thread.user.as_ref().ok_or(Errno::ESRCH)?;
    write_user(ulen, &(ROBUST_LIST_HEAD_SIZE as u64))?;
    write_user(uhead, &(u.robust_list.load(Ordering::Relaxed) as u64))?;
    Ok(0)
}

/// futex(2) (Linux: `sys_futex`, `futex_init_timeout`, `do_futex`). The
/// fourth argument is a timeout for the waits and the PI locks, and a count
/// (`val2`) for the requeues and WAKE_OP. FUTEX_WAIT's timeout is
/// relative, on CLOCK_MONOTONIC; FUTEX_LOCK_PI's absolute on
/// CLOCK_REALTIME; the others' absolute, on CLOCK_MONOTONIC unless
/// FUTEX_CLOCK_REALTIME, which only WAIT_BITSET, WAIT_REQUEUE_PI and
/// LOCK_PI2 accept (ENOSYS).
pub fn futex(
    uaddr: usize,
    op: u32,
    val: u32,
    utimeout: usize,
    uaddr2: usize,
    val3: u32,
) -> SysResult {
    let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
    let timed = matches!(
        cmd,
        FUTEX_WAIT | FUTEX_LOCK_PI | FUTEX_LOCK_PI2 | FUTEX_WAIT_BITSET | FUTEX_WAIT_REQUEUE_PI
    );
    let deadline = match utimeout {
        0 => None,
        _ if !timed => None,
        u => {
            let ts: [i64; 2] = read_user(u)?;
            Some(match cmd {
                FUTEX_WAIT => deadline_after(ts)?,
                FUTEX_LOCK_PI => deadline_at_clock(CLOCK_REALTIME, ts)?,
                _ if realtime => deadline_at_clock(CLOCK_REALTIME, ts)?,
                _ => deadline_at_clock(CLOCK_MONOTONIC, ts)?,
            })
        }
    };
    if realtime
        && !matches!(
            cmd,
            FUTEX_WAIT_BITSET | FUTEX_WAIT_REQUEUE_PI | FUTEX_LOCK_PI2
        )
    {
        return Err(Errno::ENOSYS);
    }
    // Linux takes the counts as ints. A wake wakes one waiter before it
    // compares, so a count of 0 or below (u32::MAX is -1) wakes one; a
    // requeue refuses negative counts with EINVAL.
    let at_least_one = |n: u32| (n as i32).max(1) as usize;
    let count = |n: u32| usize::try_from(n as i32).map_err(|_| Errno::EINVAL);
    let val2 = utimeout as u32;
    let shared = op & FUTEX_PRIVATE_FLAG == 0;
    let done = |r: KResult<()>| r.map(|_| 0);
    let counted = |r: KResult<usize>| r.map(|n| n as i64);
    match cmd {
        FUTEX_WAIT => done(futex::wait(uaddr, shared, val, deadline, futex::MATCH_ANY)),
        FUTEX_WAIT_BITSET => done(futex::wait(uaddr, shared, val, deadline, val3)),
        FUTEX_WAKE => counted(futex::wake(
            uaddr,
            shared,
            at_least_one(val),
            futex::MATCH_ANY,
        )),
        FUTEX_WAKE_BITSET => counted(futex::wake(uaddr, shared, at_least_one(val), val3)),
        FUTEX_REQUEUE | FUTEX_CMP_REQUEUE | FUTEX_CMP_REQUEUE_PI => {
            let cmp = (cmd != FUTEX_REQUEUE).then_some(val3);
            let (n, n2) = (count(val)?, count(val2)?);
            let pi = cmd == FUTEX_CMP_REQUEUE_PI;
            counted(futex::requeue(uaddr, uaddr2, shared, n, n2, cmp, pi))
        }
        FUTEX_WAKE_OP => {
            let (n, n2) = (at_least_one(val), at_least_one(val2));
            counted(futex::wake_op(uaddr, uaddr2, shared, n, n2, val3))
        }
        FUTEX_LOCK_PI | FUTEX_LOCK_PI2 => done(futex::lock_pi(uaddr, shared, deadline, false)),
        FUTEX_TRYLOCK_PI => done(futex::lock_pi(uaddr, shared, None, true)),
        FUTEX_UNLOCK_PI => done(futex::unlock_pi(uaddr, shared)),
        FUTEX_WAIT_REQUEUE_PI => done(futex::wait_requeue_pi(uaddr, shared, val, deadline, uaddr2)),
        _ => Err(Errno::ENOSYS),
    }
}

/// futex_waitv(2): sleep on up to 128 words (`struct futex_waitv { u64
/// val, uaddr; u32 flags, __reserved; }`) until a wake on one of them;
/// returns its index (Linux: `sys_futex_waitv`, `futex_parse_waitv`). The
/// deadline is absolute on `clockid`, CLOCK_MONOTONIC or CLOCK_REALTIME.
/// EINVAL for flags, no words or too many, a bad clock, an entry with
/// other flags than a 32-bit size and FUTEX2_PRIVATE, a value wider than
/// 32 bits or a misaligned word; EFAULT for memory it cannot read; EAGAIN
/// if a word does not hold its value.
pub fn futex_waitv(
    uwaiters: usize,
    nr: u32,
    flags: u32,
    utimeout: usize,
    clockid: i32,
) -> SysResult {
    if flags != 0 || nr == 0 || nr > FUTEX_WAITV_MAX || uwaiters == 0 {
        return Err(Errno::EINVAL);
    }
    let deadline = match utimeout {
        0 => None,
        u => {
            if clockid != CLOCK_REALTIME && clockid != CLOCK_MONOTONIC {
                return Err(Errno::EINVAL);
            }
            Some(deadline_at_clock(clockid, read_user(u)?)?)
        }
    };
    let mut entries = alloc::vec::Vec::with_capacity(nr as usize);
    for i in 0..nr as usize {
        let [val, uaddr, flags]: [u64; 3] = read_user(uwaiters + i * 24)?;
        let (flags, reserved) = (flags as u32, (flags >> 32) as u32);
        if flags & !(FUTEX2_SIZE_MASK | FUTEX2_PRIVATE) != 0
            || reserved != 0
            || flags & FUTEX2_SIZE_MASK != FUTEX2_SIZE_U32
            || val >> 32 != 0
        {
            return Err(Errno::EINVAL);
        }
        entries.push(futex::WaitvEntry {
            uaddr: uaddr as usize,
            val: val as u32,
            shared: flags & FUTEX2_PRIVATE == 0,
        });
    }
    Ok(futex::waitv(&entries, deadline)? as i64)
}
