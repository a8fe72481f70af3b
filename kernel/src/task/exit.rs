//! Leaving: a thread exits, the last thread takes its process with it, and
//! the parent reaps it with `wait4` or `waitid`, which also report
//! children that stopped or continued (Linux: `kernel/exit.c` `do_exit`,
//! `do_group_exit`, `release_task`, `do_wait`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::mm::uaccess::write_user;
use crate::task::process::{self, Process};
use crate::task::signal_abi::{
    sigmask, stopped, CLD_CONTINUED, CLD_DUMPED, CLD_EXITED, CLD_KILLED, CLD_STOPPED,
    CONTINUED_STATUS, SIGCHLD, SIGCONT,
};
use crate::task::{current, futex, signal};
pub use uapi::wait::{WCONTINUED, WEXITED, WNOHANG, WNOWAIT, WSTOPPED};

/// Ends the calling thread (exit(2)). If it was the last one, the process
/// ends with `status` (a wait status).
///
/// Nothing reference-counted may be held by a caller of this: the thread
/// never returns to drop it. Hence the work is done in `exit_thread`.
pub fn do_exit(status: u32) -> ! {
    exit_thread(status);
    crate::task::exit_current_thread();
}

/// The work of [`do_exit`], in a frame of its own so that every reference
/// it takes is dropped before the thread dies (Linux: `do_exit` up to
/// `do_task_dead`): release its robust futexes and PI locks, account the
/// thread's time to its process, release a vfork parent and
/// `clear_child_tid`, and if it was the last thread, drop the address
/// space and end the process.
fn exit_thread(status: u32) {
    let me = current();
    let user = me.user.as_ref().expect("a user thread exits");
    let process = user.process.clone();
    // Robust futexes and PI locks this thread still holds pass to their
    // waiters marked FUTEX_OWNER_DIED, while its TID still names it and
    // before a vfork parent goes on (Linux: `futex_exit_release` in
    // `exit_mm`, before `mm_release` and the unhash).
    futex::exit_release(user);
    {
        // The thread's CPU time passes to the process as it leaves the
        // list the process adds live threads' from (Linux:
        // `__exit_signal`), so no reader counts it twice or not at all.
        let mut times = process.times.lock();
        let (utime, stime) = me.cputime();
        times.utime += utime;
        times.stime += stime;
        times.min_flt += me.min_flt();
        process::unregister_thread(&me);
    }
    process::release_vfork_parent(user);
    // Pidfds of this thread (PIDFD_THREAD) read as exited.
    process.pidfd_wait.wake();
    // The last thread to begin exiting gives the process its status,
    // unless a group exit already set one (Linux: `synchronize_group_exit`),
    // before a joiner below may wake and exit in turn.
    if process.quick_threads.fetch_sub(1, Ordering::AcqRel) == 1
        && !process.exiting.swap(true, Ordering::AcqRel)
    {
        process.exit_status.store(status, Ordering::Release);
    }
    // CLONE_CHILD_CLEARTID: tell a joiner we are gone (Linux: in
    // `mm_release`), while still counted in `nr_threads`, so that this
    // thread's last use of the address space comes before the last thread
    // frees it and the parent hears of the exit.
    let ctid = user.clear_child_tid.load(Ordering::Relaxed);
    if ctid != 0 && write_user(ctid, &0u32).is_ok() {
        // A shared wake, as Linux's `mm_release` (glibc's pthread_join
        // waits shared).
        let _ = futex::wake(ctid, true, 1, futex::MATCH_ANY);
    }
    if process.nr_threads.fetch_sub(1, Ordering::AcqRel) == 1 {
        // Once the parent may reap us, our address space can be freed at
        // any moment: stop using it (no walk of freed tables, even
        // speculative).
        crate::arch::mmu::switch_to_empty();
        // Linux's exit_mm: unmap and free the tables now, before the parent
        // can see us gone (not under the lock: it zaps and frees).
        let mm = process.mm.replace(None);
        drop(mm);
        exit_process(&process);
    }
}

/// Ends every thread of the process (exit_group(2), fatal signals).
pub fn do_group_exit(status: u32) -> ! {
    {
        let process = crate::task::current_process().expect("a user thread");
        if !process.exiting.swap(true, Ordering::AcqRel) {
            process.exit_status.store(status, Ordering::Release);
        }
        for t in process.live_threads() {
            if let Some(u) = &t.user {
                u.pending
                    .fetch_or(sigmask(signal::SIGKILL), Ordering::AcqRel);
                u.set_sigpending();
            }
            crate::task::wake_up(&t);
        }
    }
    do_exit(status)
}

/// The last thread is gone: release what the process holds and leave a
/// zombie for the parent (or power off if this was init).
fn exit_process(p: &Arc<Process>) {
    let status = p.exit_status.load(Ordering::Acquire);
    // Killed while stopped: no longer one of the stopped.
    p.set_stopped(false);
    crate::task::timers::on_exit(p);
    // Closing files may wake others: not under the lock.
    let files = core::mem::take(&mut *p.files.lock());
    drop(files);
    kill_orphaned_pgrp(p);
    // Children go to the nearest child subreaper above us, else to init,
    // which reap them (Linux: `forget_original_parent`).
    let orphans = core::mem::take(&mut *p.children.lock());
    let init = process::init_process();
    let reaper = find_new_reaper(p).or_else(|| init.clone());
    if let Some(reaper) = reaper.as_ref().filter(|r| !Arc::ptr_eq(r, p)) {
        for c in orphans {
            c.set_parent(reaper);
            // A new parent hears SIGCHLD, whatever the old one asked for
            // (Linux: `reparent_leader`).
            c.exit_signal.store(SIGCHLD, Ordering::Release);
            let pdeath = c.pdeath_signal.load(Ordering::Acquire);
            reaper.children.lock().push(c.clone());
            if pdeath != 0 {
                signal::send_to_process(&c, pdeath, signal::SigSource::Kernel);
            }
        }
        reaper.child_wait.wake_all();
    }
    if init.as_ref().is_some_and(|i| Arc::ptr_eq(i, p)) {
        crate::init_exited(status);
    }
    p.zombie.store(true, Ordering::Release);
    // Its pidfds read as exited (Linux: `do_notify_pidfd`).
    p.pidfd_wait.wake();
    if let Some(parent) = p.parent() {
        let sig = p.exit_signal.load(Ordering::Acquire);
        signal::send_child_signal(&parent, sig, p.pid, status);
        parent.child_wait.wake_all();
    }
}

/// The closest living ancestor of `p` that asked for PR_SET_CHILD_SUBREAPER
/// (Linux: `find_new_reaper`).
fn find_new_reaper(p: &Arc<Process>) -> Option<Arc<Process>> {
    let mut up = p.parent();
    while let Some(a) = up {
        if a.child_subreaper.load(Ordering::Acquire) && !a.is_exiting() {
            return Some(a);
        }
        up = a.parent();
    }
    None
}

/// Does group `pgid` have a stopped member (Linux: `has_stopped_jobs`)?
fn has_stopped_jobs(pgid: u32) -> bool {
    process::any_stopped()
        && process::pgrp_members(pgid)
            .iter()
            .any(|m| m.stopped.load(Ordering::Acquire))
}

/// POSIX: a process group that our exit orphans and that has stopped
/// members gets SIGHUP then SIGCONT, or it would stay stopped for ever
/// (Linux: `kill_orphaned_pgrp`), our own group and our children's.
fn kill_orphaned_pgrp(p: &Arc<Process>) {
    // The cheap question first: mostly no group has stopped jobs.
    let hup = |pgid: u32| {
        if has_stopped_jobs(pgid) && process::will_become_orphaned_pgrp(pgid, Some(p)) {
            let _ = process::kill_pgrp(pgid, crate::task::signal_abi::SIGHUP);
            let _ = process::kill_pgrp(pgid, crate::task::signal_abi::SIGCONT);
        }
    };
    let (pgid, sid) = (
        p.pgid.load(Ordering::Acquire),
        p.sid.load(Ordering::Acquire),
    );
    if let Some(parent) = p.parent() {
        if parent.pgid.load(Ordering::Acquire) != pgid && parent.sid.load(Ordering::Acquire) == sid
        {
            hup(pgid);
        }
    }
    let children: alloc::vec::Vec<_> = p.children.lock().clone();
    for c in children {
        let cpgid = c.pgid.load(Ordering::Acquire);
        if cpgid != pgid && c.sid.load(Ordering::Acquire) == sid {
            hup(cpgid);
        }
    }
}

/// __WNOTHREAD: only the calling thread's children; every thread's
/// children are the process's here, so it changes nothing.
pub const WNOTHREAD: u32 = 0x2000_0000;
/// __WALL: children whatever their exit signal.
pub const WALL: u32 = 0x4000_0000;
/// __WCLONE: only "clone" children, whose exit signal is not SIGCHLD.
pub const WCLONE: u32 = 0x8000_0000;
/// The three thread flags together, which wait4 and waitid accept.
pub const WTHREAD_FLAGS: u32 = WNOTHREAD | WALL | WCLONE;

/// Which children a wait is for (Linux: `enum pid_type` of `do_wait`).
#[derive(Copy, Clone)]
pub enum WaitFor {
    /// Any child (pid -1; Linux `PIDTYPE_MAX`).
    Any,
    /// The child with this PID (Linux `PIDTYPE_PID`).
    Pid(u32),
    /// Any child in this process group (pid 0 or -pgid; Linux `PIDTYPE_PGID`).
    Pgid(u32),
}

/// What a wait found (Linux: `struct waitid_info`), with the child's CPU
/// time and its reaped children's, in nanoseconds, for the rusage.
#[derive(Copy, Clone, Default)]
pub struct WaitResult {
    /// The child's PID.
    pub pid: u32,
    /// The wait4 status word.
    pub status: u32,
    /// `si_code` (CLD_*) and `si_status` for waitid.
    pub code: i32,
    /// `si_status`: the exit code for CLD_EXITED, else the signal number.
    pub si_status: i32,
    /// The child's user CPU time and its reaped children's, in nanoseconds.
    pub utime: u64,
    /// The child's system CPU time and its reaped children's, in nanoseconds.
    pub stime: u64,
    /// The child's minor faults and its reaped children's.
    pub min_flt: u64,
}

/// Is `c` one of the children `which` picks, and of the kind `options`
/// asks for: without __WALL, children that exit with SIGCHLD, or with
/// __WCLONE those that do not (Linux: `eligible_child`)?
fn selected(which: WaitFor, options: u32, c: &Process) -> bool {
    let picked = match which {
        WaitFor::Any => true,
        WaitFor::Pid(pid) => c.pid == pid,
        WaitFor::Pgid(pgid) => c.pgid.load(Ordering::Acquire) == pgid,
    };
    let clone_child = c.exit_signal.load(Ordering::Acquire) != SIGCHLD;
    picked && (options & WALL != 0 || clone_child == (options & WCLONE != 0))
}

/// Can `c` report something `options` asks for?
fn reportable(c: &Process, options: u32) -> bool {
    (options & WEXITED != 0 && c.zombie.load(Ordering::Acquire))
        || (options & WSTOPPED != 0 && c.stop_report.load(Ordering::Acquire) != 0)
        || (options & WCONTINUED != 0 && c.continued_report.load(Ordering::Acquire))
}

/// The child's CPU time and minor faults with its reaped children's
/// (Linux: `getrusage(p, RUSAGE_BOTH)`).
fn child_usage(c: &Process) -> (u64, u64, u64) {
    let (u, s) = c.cputime();
    let min_flt = c.min_flt();
    let t = *c.times.lock();
    (u + t.cutime, s + t.cstime, min_flt + t.cmin_flt)
}

/// Takes what child `c` has to report (Linux: `wait_task_zombie`,
/// `wait_task_stopped`, `wait_task_continued`), reaping it or clearing the
/// report unless WNOWAIT.
fn take_report(c: &Arc<Process>, options: u32) -> Option<WaitResult> {
    let keep = options & WNOWAIT != 0;
    // The usage is summed over the child's threads: only for a child that
    // has something to report, as a wait looks at every candidate.
    let report = |status: u32, code: i32, si_status: i32| {
        let (utime, stime, min_flt) = child_usage(c);
        Some(WaitResult {
            pid: c.pid,
            status,
            code,
            si_status,
            utime,
            stime,
            min_flt,
        })
    };
    if options & WEXITED != 0 && c.zombie.load(Ordering::Acquire) {
        let status = c.exit_status.load(Ordering::Acquire);
        let (code, si_status) = match status & 0x7f {
            0 => (CLD_EXITED, ((status >> 8) & 0xff) as i32),
            sig if status & 0x80 != 0 => (CLD_DUMPED, sig as i32),
            sig => (CLD_KILLED, sig as i32),
        };
        return report(status, code, si_status);
    }
    if options & WSTOPPED != 0 {
        let sig = if keep {
            c.stop_report.load(Ordering::Acquire)
        } else {
            c.stop_report.swap(0, Ordering::AcqRel)
        };
        if sig != 0 {
            return report(stopped(sig) as u32, CLD_STOPPED, sig as i32);
        }
    }
    if options & WCONTINUED != 0 {
        let cont = if keep {
            c.continued_report.load(Ordering::Acquire)
        } else {
            c.continued_report.swap(false, Ordering::AcqRel)
        };
        if cont {
            return report(CONTINUED_STATUS as u32, CLD_CONTINUED, SIGCONT as i32);
        }
    }
    None
}

/// Waits for a child selected by `which` to exit, stop or continue, as
/// `options` asks (Linux: `do_wait`). Returns None with WNOHANG when no
/// child has anything to report yet; ECHILD when no child matches.
pub fn do_wait(which: WaitFor, options: u32) -> KResult<Option<WaitResult>> {
    let me = crate::task::current_process().ok_or(Errno::ECHILD)?;
    loop {
        let candidates: alloc::vec::Vec<Arc<Process>> = me
            .children
            .lock()
            .iter()
            .filter(|c| selected(which, options, c))
            .cloned()
            .collect();
        if candidates.is_empty() {
            return Err(Errno::ECHILD);
        }
        for c in &candidates {
            if let Some(r) = take_report(c, options) {
                if options & WNOWAIT == 0
                    && c.zombie.load(Ordering::Acquire)
                    && options & WEXITED != 0
                {
                    let mut children = me.children.lock();
                    let Some(i) = children.iter().position(|x| Arc::ptr_eq(x, c)) else {
                        // Another thread reaped it first.
                        continue;
                    };
                    children.remove(i);
                    drop(children);
                    process::forget_process(c.pid);
                    let mut t = me.times.lock();
                    t.cutime += r.utime;
                    t.cstime += r.stime;
                    t.cmin_flt += r.min_flt;
                }
                return Ok(Some(r));
            }
        }
        if options & WNOHANG != 0 {
            return Ok(None);
        }
        me.child_wait.wait_interruptible(|| {
            me.children
                .lock()
                .iter()
                .any(|c| selected(which, options, c) && reportable(c, options))
        })?;
    }
}
