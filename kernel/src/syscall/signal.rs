//! Signal system calls (Linux: `kernel/signal.c`).

use core::sync::atomic::Ordering;

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::fs::pidfd;
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::task::process::{all_processes, find_process, find_thread, pgrp_members, Process};
use crate::task::signal::{self, SigSource};
use crate::task::signal_abi::{
    AltStack, SigAction, SigFields, SigInfo, NSIG, SIGACTION_SIZE, SIGCONT, SIGINFO_SIZE,
    SIGSET_SIZE, SIG_KERNEL_ONLY_MASK, SI_TKILL, SI_USER,
};
use crate::task::{current, current_process};
use uapi::signal::{SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK};

/// A signal argument as a number, `0..=NSIG` (0: only check that the
/// target exists); EINVAL otherwise (Linux: `valid_signal`).
fn check_sig(sig: i32) -> Result<u32, Errno> {
    if sig < 0 || sig as u32 > NSIG {
        Err(Errno::EINVAL)
    } else {
        Ok(sig as u32)
    }
}

/// May the caller send `sig` to `target` (Linux:
/// `check_kill_permission`)? See `Cred::may_kill`; SIGCONT also within
/// the caller's session. EPERM if not.
fn check_kill_permission(target: &Process, sig: u32) -> KResult<()> {
    let me = current_process().ok_or(Errno::ESRCH)?;
    let mine = me.cred.lock().clone();
    let theirs = target.cred.lock().clone();
    let same_session = me.sid.load(Ordering::Acquire) == target.sid.load(Ordering::Acquire);
    if mine.may_kill(&theirs) || (sig == SIGCONT && same_session) {
        Ok(())
    } else {
        Err(Errno::EPERM)
    }
}

/// The caller's pid and real uid, a signal's `si_pid` and `si_uid`.
fn sender() -> (u32, u32) {
    current_process().map_or((0, 0), |p| (p.pid, p.cred.lock().uid))
}

/// kill(2) (Linux: `kill_something_info`): `pid` > 0 that process, 0 the
/// caller's group, -1 every process but init and the caller, < -1 the
/// group -pid. ESRCH when nothing matched; signal 0 only checks. A group
/// signal succeeds if it reached anyone, else fails as the last member
/// did (EPERM); -1 succeeds if it found anyone at all.
pub fn kill(pid: i32, sig: i32) -> SysResult {
    let sig = check_sig(sig)?;
    let me = current_process().ok_or(Errno::ESRCH)?;
    let (spid, suid) = sender();
    let source = SigSource::Kill(spid, suid);
    let targets = match pid {
        p if p > 0 => {
            // A zombie still exists until it is reaped: kill(pid, 0) finds it.
            let p = find_process(p as u32).ok_or(Errno::ESRCH)?;
            check_kill_permission(&p, sig)?;
            signal::send_to_process(&p, sig, source);
            return Ok(0);
        }
        0 => pgrp_members(me.pgid.load(Ordering::Acquire)),
        -1 => {
            let mut all = all_processes();
            all.retain(|p| p.pid != 1 && p.pid != me.pid && !p.zombie.load(Ordering::Acquire));
            all
        }
        i32::MIN => return Err(Errno::ESRCH),
        p => pgrp_members(p.unsigned_abs()),
    };
    let mut result = Err(Errno::ESRCH);
    if pid == -1 && !targets.is_empty() {
        result = Ok(0);
    }
    for p in targets {
        match check_kill_permission(&p, sig) {
            Ok(()) => {
                signal::send_to_process(&p, sig, source);
                result = Ok(0);
            }
            Err(e) if result.is_err() => result = Err(e),
            Err(_) => {}
        }
    }
    result
}

/// pidfd_send_signal(2) (Linux: `kernel/signal.c`): `sig` to what a
/// pidfd names, a process or (PIDFD_THREAD) a thread, or by the flags to
/// the thread with its id (PIDFD_SIGNAL_THREAD), its thread group
/// (PIDFD_SIGNAL_THREAD_GROUP) or the process group it leads
/// (PIDFD_SIGNAL_PROCESS_GROUP); ESRCH once nothing has that id. A
/// caller's `info` must name the same signal, and only a thread
/// signalling its own id may give a non-negative si_code or SI_TKILL
/// (EPERM). Without `info`: SI_USER, or SI_TKILL for a thread.
pub fn pidfd_send_signal(pidfd: i32, sig: i32, uinfo: usize, flags: u32) -> SysResult {
    const PIDFD_SIGNAL_THREAD: u32 = 1;
    const PIDFD_SIGNAL_THREAD_GROUP: u32 = 2;
    const PIDFD_SIGNAL_PROCESS_GROUP: u32 = 4;
    let known = PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP | PIDFD_SIGNAL_PROCESS_GROUP;
    if flags & !known != 0 || flags.count_ones() > 1 {
        return Err(Errno::EINVAL);
    }
    let sig = check_sig(sig)?;
    let file = super::fs::file(pidfd)?;
    let target = pidfd::of_file(&file)?;
    /// What a pidfd signal goes to (Linux: `enum pid_type`).
    #[derive(PartialEq)]
    enum To {
        Thread,
        Process,
        Group,
    }
    let to = match flags {
        PIDFD_SIGNAL_THREAD => To::Thread,
        PIDFD_SIGNAL_THREAD_GROUP => To::Process,
        PIDFD_SIGNAL_PROCESS_GROUP => To::Group,
        _ if target.is_thread() => To::Thread,
        _ => To::Process,
    };
    let pid = target.pid();
    let info = if uinfo != 0 {
        let raw: [u8; SIGINFO_SIZE] = read_user(uinfo)?;
        let word = |at: usize| u32::from_ne_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
        let code = word(8) as i32;
        if word(0) != sig {
            return Err(Errno::EINVAL);
        }
        let own = current().user.as_ref().is_some_and(|u| u.tid == pid);
        if (!own || to == To::Group) && (code >= 0 || code == SI_TKILL) {
            return Err(Errno::EPERM);
        }
        let value = u64::from_ne_bytes(raw[24..32].try_into().map_err(|_| Errno::EFAULT)?);
        SigInfo {
            signo: sig,
            code,
            fields: SigFields::Rt {
                pid: word(16) as i32,
                uid: word(20),
                value,
            },
        }
    } else {
        let code = if to == To::Thread { SI_TKILL } else { SI_USER };
        let (spid, suid) = sender();
        SigInfo::kill(sig, code, spid as i32, suid)
    };
    if target.reaped() {
        return Err(Errno::ESRCH);
    }
    match to {
        To::Group => {
            let members = pgrp_members(pid);
            if members.is_empty() {
                return Err(Errno::ESRCH);
            }
            for p in members {
                check_kill_permission(&p, sig)?;
                signal::queue_signal(&p, sig, info);
            }
        }
        // A first thread that has exited before its process takes nothing.
        To::Thread => {
            check_kill_permission(target.process(), sig)?;
            if let Some(t) = find_thread(pid) {
                signal::queue_for_thread(&t, sig, info);
            }
        }
        To::Process => {
            check_kill_permission(target.process(), sig)?;
            signal::queue_signal(target.process(), sig, info);
        }
    }
    Ok(0)
}

/// tkill(2): [`tgkill`] without checking which process thread `tid` is
/// in.
pub fn tkill(tid: i32, sig: i32) -> SysResult {
    tgkill(-1, tid, sig)
}

/// tgkill(2): `sig` to thread `tid` alone, which must be in process
/// `tgid` (ESRCH if not); `si_code` SI_TKILL (Linux: `do_tkill`).
pub fn tgkill(tgid: i32, tid: i32, sig: i32) -> SysResult {
    let sig = check_sig(sig)?;
    if tid <= 0 || tgid == 0 || tgid < -1 {
        return Err(Errno::EINVAL);
    }
    let t = find_thread(tid as u32).ok_or(Errno::ESRCH)?;
    let u = t.user.as_ref().ok_or(Errno::ESRCH)?;
    if tgid > 0 && u.process.pid != tgid as u32 {
        return Err(Errno::ESRCH);
    }
    check_kill_permission(&u.process, sig)?;
    let (spid, suid) = sender();
    signal::send_to_thread(&t, sig, SigSource::Tkill(spid, suid));
    Ok(0)
}

/// rt_sigaction(2): installs the action at `unew` for `sig` and stores the
/// one it replaced at `uold` (either may be NULL). SIGKILL's and SIGSTOP's
/// cannot change (EINVAL); `sigsetsize` must be 8.
pub fn rt_sigaction(sig: i32, unew: usize, uold: usize, sigsetsize: usize) -> SysResult {
    if sigsetsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let sig = check_sig(sig)?;
    let new = if unew != 0 {
        let mut bytes = [0u8; SIGACTION_SIZE];
        copy_from_user(&mut bytes, unew)?;
        Some(SigAction::from_bytes(&bytes))
    } else {
        None
    };
    let old = signal::sigaction(sig, new)?;
    if uold != 0 {
        copy_to_user(uold, &old.to_bytes())?;
    }
    Ok(0)
}

/// rt_sigsuspend(2) (and so glibc's sigsuspend and pause): waits with
/// `umask` as the signal mask until a signal is delivered, then returns
/// EINTR, even under SA_RESTART; the old mask comes back once the handler
/// returns (Linux: `sigsuspend`, `set_restore_sigmask`).
pub fn rt_sigsuspend(umask: usize, sigsetsize: usize) -> SysResult {
    if sigsetsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let set: u64 = read_user(umask)?;
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let old = u.sigmask.load(Ordering::Acquire);
    u.saved_sigmask.store(old, Ordering::Relaxed);
    u.restore_sigmask.store(true, Ordering::Relaxed);
    u.set_sigmask(set & !SIG_KERNEL_ONLY_MASK);
    while !signal::signal_pending() {
        crate::task::sleep_until(u64::MAX, signal::signal_pending);
    }
    Err(Errno::EINTR)
}

/// rt_sigprocmask(2): SIG_BLOCK, SIG_UNBLOCK or SIG_SETMASK the set at
/// `unew` into the caller's blocked set, and store the set as it was at
/// `uold` (either may be NULL). SIGKILL and SIGSTOP stay unblocked
/// whatever the set says; `sigsetsize` must be 8.
pub fn rt_sigprocmask(how: i32, unew: usize, uold: usize, sigsetsize: usize) -> SysResult {
    if sigsetsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let old = u.sigmask.load(Ordering::Acquire);
    if unew != 0 {
        let set: u64 = read_user(unew)?;
        let new = match how {
            SIG_BLOCK => old | set,
            SIG_UNBLOCK => old & !set,
            SIG_SETMASK => set,
            _ => return Err(Errno::EINVAL),
        };
        u.set_sigmask(new & !SIG_KERNEL_ONLY_MASK);
    }
    if uold != 0 {
        write_user(uold, &old)?;
    }
    Ok(0)
}

/// sigaltstack(2) (Linux: `do_sigaltstack`): the old stack is written only
/// if the change, if any, succeeded.
pub fn sigaltstack(tf: &crate::arch::trap::TrapFrame, unew: usize, uold: usize) -> SysResult {
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let sp = tf.sp();
    let old = signal::get_altstack(u, sp);
    if unew != 0 {
        // stack_t: ss_sp, ss_flags (an int, then 4 bytes of padding), ss_size.
        let raw: [u64; 3] = read_user(unew)?;
        let new = AltStack {
            sp: raw[0],
            flags: raw[1] as u32,
            size: raw[2],
        };
        signal::set_altstack(u, new, sp)?;
    }
    if uold != 0 {
        write_user(uold, &[old.sp, old.flags as u64, old.size])?;
    }
    Ok(0)
}

/// rt_sigtimedwait(2) (and sigwaitinfo, sigtimedwait): takes a pending
/// signal of `uset`, waiting for one up to the relative timeout `uts`;
/// EAGAIN when it runs out, EINTR when another signal is delivered first.
pub fn rt_sigtimedwait(uset: usize, uinfo: usize, uts: usize, sigsetsize: usize) -> SysResult {
    if sigsetsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let set: u64 = read_user::<u64>(uset)? & !SIG_KERNEL_ONLY_MASK;
    let deadline = if uts != 0 {
        let ts: [i64; 2] = read_user(uts)?;
        Some(super::time::deadline_after(ts)?)
    } else {
        None
    };
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    // Signals of the set are not discarded as ignored while we wait for
    // them (Linux: `real_blocked`).
    u.waiting_for.store(set, Ordering::Release);
    let pending_in_set = || {
        (u.pending.load(Ordering::Acquire) | u.process.shared_pending.load(Ordering::Acquire)) & set
            != 0
    };
    let result = loop {
        if let Some((sig, info)) = signal::dequeue_from(u, set) {
            break Ok((sig, info));
        }
        if signal::signal_pending() {
            break Err(Errno::EINTR);
        }
        let until = deadline.unwrap_or(u64::MAX);
        if crate::arch::timer::counter() >= until {
            break Err(Errno::EAGAIN);
        }
        crate::task::sleep_until(until, || pending_in_set() || signal::signal_pending());
    };
    u.waiting_for.store(0, Ordering::Release);
    let (sig, info) = result?;
    if uinfo != 0 {
        copy_to_user(uinfo, &info.to_bytes())?;
    }
    Ok(sig as i64)
}
