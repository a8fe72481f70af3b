//! Signal system calls (Linux: `kernel/signal.c`).

use core::sync::atomic::Ordering;

use super::SysResult;
use crate::errno::Errno;
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::task::process::{find_process, find_thread};
use crate::task::signal::{self, SigSource};
use crate::task::signal_abi::{SigAction, NSIG, SIGACTION_SIZE, SIGSET_SIZE, SIG_KERNEL_ONLY_MASK};
use crate::task::{current, current_process};

fn check_sig(sig: i32) -> Result<u32, Errno> {
    if sig < 0 || sig as u32 > NSIG {
        Err(Errno::EINVAL)
    } else {
        Ok(sig as u32)
    }
}

fn my_pid() -> u32 {
    current_process().map_or(0, |p| p.pid)
}

pub fn kill(pid: i32, sig: i32) -> SysResult {
    let sig = check_sig(sig)?;
    if pid <= 0 {
        // Process groups are not modelled: 0 and -1 mean ourselves.
        let p = current_process().ok_or(Errno::ESRCH)?;
        signal::send_to_process(&p, sig, SigSource::Kill(p.pid));
        return Ok(0);
    }
    // A zombie still exists until it is reaped: kill(pid, 0) finds it.
    let p = find_process(pid as u32).ok_or(Errno::ESRCH)?;
    signal::send_to_process(&p, sig, SigSource::Kill(my_pid()));
    Ok(0)
}

pub fn tkill(tid: i32, sig: i32) -> SysResult {
    tgkill(-1, tid, sig)
}

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
    signal::send_to_thread(&t, sig, SigSource::Tkill(my_pid()));
    Ok(0)
}

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
    u.sigmask
        .store(set & !SIG_KERNEL_ONLY_MASK, Ordering::Release);
    while !signal::signal_pending() {
        crate::task::sleep_until(u64::MAX, signal::signal_pending);
    }
    Err(Errno::EINTR)
}

pub fn rt_sigprocmask(how: i32, unew: usize, uold: usize, sigsetsize: usize) -> SysResult {
    const SIG_BLOCK: i32 = 0;
    const SIG_UNBLOCK: i32 = 1;
    const SIG_SETMASK: i32 = 2;
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
        u.sigmask
            .store(new & !SIG_KERNEL_ONLY_MASK, Ordering::Release);
    }
    if uold != 0 {
        write_user(uold, &old)?;
    }
    Ok(0)
}
