//! Leaving: a thread exits, the last thread takes its process with it, and
//! the parent reaps it with `wait4` (Linux: `kernel/exit.c` `do_exit`,
//! `do_group_exit`, `release_task`, `do_wait`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::mm::uaccess::write_user;
use crate::task::process::{self, Process};
use crate::task::signal_abi::sigmask;
use crate::task::{current, futex, signal};

/// wait4 options.
pub const WNOHANG: u32 = 1;

/// Ends the calling thread (exit(2)). If it was the last one, the process
/// ends with `status` (a wait status).
///
/// Nothing reference-counted may be held by a caller of this: the thread
/// never returns to drop it. Hence the work is done in `exit_thread`.
pub fn do_exit(status: u32) -> ! {
    exit_thread(status);
    crate::task::exit_current_thread();
}

fn exit_thread(status: u32) {
    let me = current();
    let user = me.user.as_ref().expect("a user thread exits");
    let process = user.process.clone();
    process::unregister_thread(&me);
    let last = process.nr_threads.fetch_sub(1, Ordering::AcqRel) == 1;
    // Robust futexes this thread still holds pass to their waiters marked
    // FUTEX_OWNER_DIED (Linux: `futex_exit_release`, before the tid clear).
    let robust = user.robust_list.load(Ordering::Relaxed);
    if robust != 0 {
        futex::exit_robust_list(robust, user.tid);
    }
    // CLONE_CHILD_CLEARTID: tell a joiner we are gone (after leaving the
    // count, so a joiner that then exits knows it is the last).
    let ctid = user.clear_child_tid.load(Ordering::Relaxed);
    if ctid != 0 && write_user(ctid, &0u32).is_ok() {
        let _ = futex::wake(ctid, 1, futex::MATCH_ANY);
    }
    if last {
        // The last thread out: its status is the process's, unless a group
        // exit already set one.
        if !process.exiting.swap(true, Ordering::AcqRel) {
            process.exit_status.store(status, Ordering::Release);
        }
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
    // Closing files may wake others: not under the lock.
    let files = core::mem::take(&mut *p.files.lock());
    drop(files);
    // Children go to init, which reaps them.
    let orphans = core::mem::take(&mut *p.children.lock());
    let init = process::init_process();
    if let Some(init) = init.as_ref().filter(|i| !Arc::ptr_eq(i, p)) {
        for c in orphans {
            *c.parent.lock() = Arc::downgrade(init);
            init.children.lock().push(c);
        }
        init.child_wait.wake_all();
    }
    p.vfork_released.store(true, Ordering::Release);
    p.vfork_done.wake_all();
    if init.as_ref().is_some_and(|i| Arc::ptr_eq(i, p)) {
        crate::init_exited(status);
    }
    p.zombie.store(true, Ordering::Release);
    if let Some(parent) = p.parent() {
        signal::send_child_signal(&parent, p.pid, status);
        parent.child_wait.wake_all();
    }
}

/// Waits for a child to end and reaps it (Linux: `wait4`): `pid` -1 for
/// any child, > 0 for that one. Returns (pid, wait status), or pid 0 with
/// WNOHANG when none has ended yet.
pub fn wait4(pid: i32, options: u32) -> KResult<(u32, u32)> {
    let me = crate::task::current_process().ok_or(Errno::ECHILD)?;
    let matches = |c: &Arc<Process>| pid == -1 || pid == c.pid as i32;
    let mut found = None;
    let reap = |found: &mut Option<(u32, u32)>| {
        let mut children = me.children.lock();
        if let Some(i) = children
            .iter()
            .position(|c| matches(c) && c.zombie.load(Ordering::Acquire))
        {
            let child = children.remove(i);
            process::forget_process(child.pid);
            *found = Some((child.pid, child.exit_status.load(Ordering::Acquire)));
        }
        found.is_some()
    };
    loop {
        if reap(&mut found) {
            return Ok(found.expect("set by reap"));
        }
        if !me.children.lock().iter().any(matches) {
            return Err(Errno::ECHILD);
        }
        if options & WNOHANG != 0 {
            return Ok((0, 0));
        }
        me.child_wait.wait_interruptible(|| {
            me.children
                .lock()
                .iter()
                .any(|c| matches(c) && c.zombie.load(Ordering::Acquire))
        })?;
    }
}
