//! clone(2): a new thread in this process, or a new process with a copy
//! of this one's address space (copy-on-write), files and handlers
//! (Linux: `kernel/fork.c` `kernel_clone`, `copy_process`, `dup_mmap`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::arch::context::read_tpidr_el0;
use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::frame;
use crate::mm::memory;
use crate::mm::mm_struct::Mm;
use crate::mm::uaccess::write_user;
use crate::mm::vma::{VM_SHARED, VM_WIPEONFORK, VM_WRITE};
use crate::task::process::{self, Process, UserThread, VforkDone};
use crate::task::{current, spawn_user};

/// CLONE_VM: share the caller's address space instead of taking a
/// copy-on-write copy of it.
pub const CLONE_VM: u64 = 0x100;
/// CLONE_FS: share the working directory and umask. Accepted, but only
/// threads share them here; a new process gets copies.
pub const CLONE_FS: u64 = 0x200;
/// CLONE_FILES: share the fd table. Accepted, but only threads share it
/// here; a new process gets a copy.
pub const CLONE_FILES: u64 = 0x400;
/// CLONE_SIGHAND: share the signal handlers; CLONE_THREAD needs it. A new
/// process gets a copy all the same.
pub const CLONE_SIGHAND: u64 = 0x800;
/// CLONE_VFORK: the caller sleeps until the child execs or exits.
pub const CLONE_VFORK: u64 = 0x4000;
/// CLONE_THREAD: a new thread of the caller's process (thread group), not
/// a new process.
pub const CLONE_THREAD: u64 = 0x10000;
/// CLONE_SYSVSEM: share System V semaphore undo lists. Accepted and
/// ignored: there are no System V semaphores.
pub const CLONE_SYSVSEM: u64 = 0x40000;
/// CLONE_SETTLS: the child's thread pointer (TPIDR_EL0) is `tls`.
pub const CLONE_SETTLS: u64 = 0x80000;
/// CLONE_PARENT_SETTID: store the child's TID at `parent_tid`.
pub const CLONE_PARENT_SETTID: u64 = 0x100000;
/// CLONE_CHILD_CLEARTID: when the child exits, zero the word at
/// `child_tid` and futex-wake it (how `pthread_join` waits).
pub const CLONE_CHILD_CLEARTID: u64 = 0x200000;
/// CLONE_CHILD_SETTID: the child stores its TID at `child_tid`, in its
/// own address space, when it first runs.
pub const CLONE_CHILD_SETTID: u64 = 0x1000000;
/// The low byte: the signal to send the parent at exit (SIGCHLD for fork).
const CSIGNAL: u64 = 0xff;

/// Every flag clone accepts; any other bit is EINVAL.
const SUPPORTED: u64 = CSIGNAL
    | CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_VFORK
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_CHILD_SETTID;

/// A copy of `src` for a forked child: the same VMAs; shared pages shared,
/// private pages copy-on-write (Linux: `dup_mmap`).
fn dup_mm(src: &Arc<Mm>) -> KResult<Arc<Mm>> {
    let dst = Mm::new()?;
    dst.inherit_flags(src);
    // Linux's `dup_mmap` too write-locks the parent's VMAs: a fault must not
    // map a writable page after its table was copied read-only.
    let map = src.mmap_write_lock();
    map.vma_start_write_all();
    let mut dst_map = dst.mmap_write_lock();
    dst_map.start_brk = map.start_brk;
    dst_map.brk = map.brk;
    dst_map.vdso = map.vdso;
    for (start, end, vma) in map.vmas.iter() {
        let Some(child_vma) = vma.dup_for_fork() else {
            continue;
        };
        let cow = vma.flags & VM_SHARED == 0 && vma.flags & VM_WRITE != 0;
        let wipe = vma.flags & VM_WIPEONFORK != 0;
        if !wipe && !memory::copy_range(&dst, src, start, end, cow) {
            return Err(Errno::ENOMEM);
        }
        vma.register_with_file(&dst);
        let _ = dst_map.vmas.insert(start, end, Arc::new(child_vma));
    }
    drop(dst_map);
    Ok(dst)
}

/// clone(2) with the Linux arm64 argument order: flags, newsp, parent_tid,
/// tls, child_tid. Returns the child's TID.
pub fn clone(
    tf: &TrapFrame,
    flags: u64,
    newsp: u64,
    parent_tid: usize,
    tls: u64,
    child_tid: usize,
) -> KResult<u32> {
    if flags & !SUPPORTED != 0 {
        return Err(Errno::EINVAL);
    }
    let thread_flags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    if flags & CLONE_THREAD != 0 && flags & thread_flags != thread_flags {
        return Err(Errno::EINVAL);
    }
    let me = current();
    let parent_user = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let parent = parent_user.process.clone();
    if process::nr_threads() >= max_threads() {
        return Err(Errno::EAGAIN);
    }
    let tid = process::alloc_pid();
    // A bad pointer here is not an error: Linux ignores what `put_user`
    // returns, and the child is made all the same.
    if flags & CLONE_PARENT_SETTID != 0 {
        let _ = write_user(parent_tid, &tid);
    }

    let process = if flags & CLONE_THREAD != 0 {
        parent.clone()
    } else {
        // A live process (the caller's) always has its address space.
        let parent_mm = parent.mm().ok_or(Errno::EINVAL)?;
        let mm = if flags & CLONE_VM != 0 {
            parent_mm
        } else {
            dup_mm(&parent_mm)?
        };
        let files = parent.files.lock().clone();
        let cwd = parent.cwd.lock().clone();
        let actions = **parent.actions.lock();
        let child = Process::new_with_pid(tid, mm, files, cwd, Arc::downgrade(&parent), actions);
        *child.exe.lock() = parent.exe.lock().clone();
        let umask = parent.umask.load(Ordering::Relaxed);
        child.umask.store(umask, Ordering::Relaxed);
        *child.caps.lock() = *parent.caps.lock();
        *child.rlimits.lock() = *parent.rlimits.lock();
        let no_new_privs = parent.no_new_privs.load(Ordering::Acquire);
        child.no_new_privs.store(no_new_privs, Ordering::Release);
        // The group, session, nice value and dumpable flag are inherited;
        // timers, the parent-death signal and subreaping are not (Linux:
        // `copy_signal`, `copy_process`).
        for (to, from) in [
            (&child.pgid, &parent.pgid),
            (&child.sid, &parent.sid),
            (&child.dumpable, &parent.dumpable),
        ] {
            to.store(from.load(Ordering::Acquire), Ordering::Release);
        }
        let nice = parent.nice.load(Ordering::Acquire);
        child.nice.store(nice, Ordering::Release);
        parent.children.lock().push(child.clone());
        child
    };

    let mut frame = TrapFrame::new_user(tf.pc(), if newsp != 0 { newsp } else { tf.sp() });
    for i in 1..31 {
        frame.set_reg(i, tf.arg(i));
    }
    frame.set_reg(0, 0);
    frame.set_pstate(tf.pstate());
    let tls = if flags & CLONE_SETTLS != 0 {
        tls
    } else {
        read_tpidr_el0()
    };
    let user = UserThread::new(
        process.clone(),
        tid,
        parent_user.sigmask.load(Ordering::Relaxed),
    );
    *user.comm.lock() = *parent_user.comm.lock();
    *user.sched.lock() = parent_user.sched.lock().for_child();
    // A new process keeps the alternate signal stack (it is a copy of the
    // same memory); a thread sharing the memory gets none (Linux:
    // `copy_process` clears sas_ss_* for CLONE_VM without CLONE_VFORK).
    if flags & CLONE_VM == 0 || flags & CLONE_VFORK != 0 {
        *user.altstack.lock() = *parent_user.altstack.lock();
    }
    if flags & CLONE_CHILD_CLEARTID != 0 {
        user.clear_child_tid.store(child_tid, Ordering::Relaxed);
    }
    if flags & CLONE_CHILD_SETTID != 0 {
        // Written by the child itself, in its own address space, when it
        // first runs (Linux: `schedule_tail`).
        user.set_child_tid.store(child_tid, Ordering::Relaxed);
    }
    // The parent waits for this thread's exec or exit, not the process's:
    // a CLONE_THREAD|CLONE_VFORK child is one thread of the caller's own.
    let vfork = (flags & CLONE_VFORK != 0).then(VforkDone::new);
    *user.vfork_done.lock() = vfork.clone();
    let cpu = process::next_cpu();
    if spawn_user(cpu, user, frame, tls).is_none() {
        // No kernel stack: the child never ran, so no one else knows of
        // a new process but its parent and the pid table.
        if flags & CLONE_THREAD == 0 {
            parent.children.lock().retain(|c| !Arc::ptr_eq(c, &process));
            process::forget_process(tid);
        }
        return Err(Errno::ENOMEM);
    }
    if let Some(done) = vfork {
        let _ = done.wait();
    }
    Ok(tid)
}

/// The most threads there may be (Linux: `max_threads`, set by
/// `fork_init` so kernel stacks take at most an eighth of RAM): past it,
/// clone and fork fail with EAGAIN, as a fork bomb meets them on Linux.
pub fn max_threads() -> usize {
    let stack_bytes = PAGE_SIZE << crate::task::thread::KSTACK_ORDER;
    (frame::total_pages() * PAGE_SIZE / (8 * stack_bytes)).max(MIN_THREADS)
}

/// Linux's floor for `max_threads`.
const MIN_THREADS: usize = 20;
