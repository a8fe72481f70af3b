//! clone(2): a new thread in this process, or a new process with a copy
//! of this one's address space (copy-on-write), files and handlers
//! (Linux: `kernel/fork.c` `kernel_clone`, `copy_process`, `dup_mmap`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::arch::context::read_tpidr_el0;
use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use crate::fs::pidfd;
use crate::mm::addr::PAGE_SIZE;
use crate::mm::addr::USER_TOP;
use crate::mm::frame;
use crate::mm::memory;
use crate::mm::mm_struct::Mm;
use crate::mm::uaccess::{copy_from_user, read_user, write_user};
use crate::mm::vma::{VM_SHARED, VM_WIPEONFORK, VM_WRITE};
use crate::task::cred::{CAP_SYS_ADMIN, CAP_SYS_RESOURCE};
use crate::task::process::{self, Process, UserThread, VforkDone};
use crate::task::signal_abi::{SigAction, SIG_DFL, SIG_IGN};
use crate::task::{current, spawn_user};
use uapi::sched::{
    CLONE_ARGS_SIZE_VER0, CLONE_ARGS_SIZE_VER2, CLONE_DETACHED, CLONE_NEWTIME, CSIGNAL,
};
pub use uapi::sched::{
    CLONE_CHILD_CLEARTID, CLONE_CHILD_SETTID, CLONE_CLEAR_SIGHAND, CLONE_FILES, CLONE_FS,
    CLONE_INTO_CGROUP, CLONE_PARENT_SETTID, CLONE_PIDFD, CLONE_SETTLS, CLONE_SIGHAND,
    CLONE_SYSVSEM, CLONE_THREAD, CLONE_VFORK, CLONE_VM,
};

/// Every flag a clone may carry here; any other bit is EINVAL.
const SUPPORTED: u64 = CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_PIDFD
    | CLONE_VFORK
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_CHILD_SETTID
    | CLONE_CLEAR_SIGHAND
    | CLONE_INTO_CGROUP;

/// What a clone asks for, from clone(2) or clone3(2) (Linux: `struct
/// kernel_clone_args`).
#[derive(Clone, Copy, Default)]
pub struct CloneArgs {
    /// The CLONE_* flags, without the exit signal.
    pub flags: u64,
    /// CLONE_PIDFD: where the pidfd's number goes.
    pub pidfd: usize,
    /// CLONE_CHILD_SETTID / CLONE_CHILD_CLEARTID: the child's TID word.
    pub child_tid: usize,
    /// CLONE_PARENT_SETTID: where the parent finds the child's TID.
    pub parent_tid: usize,
    /// The signal the parent gets when the child exits (0: none).
    pub exit_signal: u32,
    /// The child's stack pointer; 0 keeps the caller's.
    pub stack: u64,
    /// CLONE_SETTLS: the child's thread pointer.
    pub tls: u64,
}

/// clone(2) with the Linux arm64 argument order: flags, newsp,
/// parent_tid, tls, child_tid; only the low 32 bits of `flags` count, the
/// low byte being the exit signal (Linux: `sys_clone`). Returns the
/// child's TID.
pub fn clone(
    tf: &TrapFrame,
    flags: u64,
    newsp: u64,
    parent_tid: usize,
    tls: u64,
    child_tid: usize,
) -> KResult<u32> {
    let flags = flags & 0xffff_ffff;
    kernel_clone(
        tf,
        CloneArgs {
            flags: flags & !CSIGNAL,
            // With CLONE_PIDFD the pidfd goes where a TID would.
            pidfd: parent_tid,
            child_tid,
            parent_tid,
            exit_signal: (flags & CSIGNAL) as u32,
            stack: newsp,
            tls,
        },
    )
}

/// clone3(2): the arguments as a `struct clone_args` of `size` bytes at
/// `uargs`, checked as Linux's `copy_clone_args_from_user` and
/// `clone3_args_valid` do. Where we simplify: `set_tid` (choosing the
/// child's PID) is refused with EINVAL.
pub fn clone3(tf: &TrapFrame, uargs: usize, size: usize) -> KResult<u32> {
    if size > PAGE_SIZE {
        return Err(Errno::E2BIG);
    }
    if size < CLONE_ARGS_SIZE_VER0 {
        return Err(Errno::EINVAL);
    }
    let mut raw = [0u8; CLONE_ARGS_SIZE_VER2];
    let known = size.min(CLONE_ARGS_SIZE_VER2);
    copy_from_user(&mut raw[..known], uargs)?;
    // A newer caller's extra fields must be zero (Linux:
    // `copy_struct_from_user`).
    for at in CLONE_ARGS_SIZE_VER2..size {
        if read_user::<u8>(uargs + at)? != 0 {
            return Err(Errno::E2BIG);
        }
    }
    let field = |i: usize| u64::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
    let (flags, pidfd, child_tid, parent_tid) = (field(0), field(1), field(2), field(3));
    let (exit_signal, stack, stack_size, tls) = (field(4), field(5), field(6), field(7));
    let (set_tid, set_tid_size, cgroup) = (field(8), field(9), field(10));
    const MAX_PID_NS_LEVEL: u64 = 32;
    if set_tid_size > MAX_PID_NS_LEVEL || (set_tid == 0) != (set_tid_size == 0) {
        return Err(Errno::EINVAL);
    }
    if exit_signal > crate::task::signal_abi::NSIG as u64 {
        return Err(Errno::EINVAL);
    }
    if flags & CLONE_INTO_CGROUP != 0 && (cgroup > i32::MAX as u64 || size < CLONE_ARGS_SIZE_VER2) {
        return Err(Errno::EINVAL);
    }
    // clone3_args_valid: no unknown flags, none of the old exit-signal
    // byte, not both SIGHAND and CLEAR_SIGHAND, no exit signal for a
    // thread, and a stack that is all there or not at all.
    let legacy = 0xffff_ffff | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP;
    let stack_ok = match (stack, stack_size) {
        (0, 0) => true,
        (0, _) | (_, 0) => false,
        (s, n) => s.checked_add(n).is_some_and(|end| end <= USER_TOP as u64),
    };
    if flags & !legacy != 0
        || flags & (CLONE_DETACHED | (CSIGNAL & !CLONE_NEWTIME)) != 0
        || flags & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND) == CLONE_SIGHAND | CLONE_CLEAR_SIGHAND
        || (flags & CLONE_THREAD != 0 && exit_signal != 0)
        || !stack_ok
        || set_tid != 0
    {
        return Err(Errno::EINVAL);
    }
    kernel_clone(
        tf,
        CloneArgs {
            flags,
            pidfd: pidfd as usize,
            child_tid: child_tid as usize,
            parent_tid: parent_tid as usize,
            exit_signal: exit_signal as u32,
            // The stack grows down from its top.
            stack: stack + stack_size,
            tls,
        },
    )
}

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

/// Makes the thread or process `args` asks for (Linux: `kernel_clone`,
/// `copy_process`); returns the child's TID. Where we simplify: the exit
/// signal is sent whatever the parent's SIGCHLD action.
pub fn kernel_clone(tf: &TrapFrame, args: CloneArgs) -> KResult<u32> {
    let flags = args.flags;
    if flags & !SUPPORTED != 0 {
        return Err(Errno::EINVAL);
    }
    let thread_flags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    if flags & CLONE_THREAD != 0 && flags & thread_flags != thread_flags {
        return Err(Errno::EINVAL);
    }
    // The pidfd and the child's TID cannot share one word.
    if flags & CLONE_PIDFD != 0 && flags & CLONE_PARENT_SETTID != 0 && args.pidfd == args.parent_tid
    {
        return Err(Errno::EINVAL);
    }
    let me = current();
    let parent_user = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let parent = parent_user.process.clone();
    if process::nr_threads() >= max_threads() {
        return Err(Errno::EAGAIN);
    }
    // Linux: `copy_process`'s RLIMIT_NPROC check, which root's real id,
    // CAP_SYS_RESOURCE and CAP_SYS_ADMIN pass.
    let uid = parent.cred.lock().uid;
    if uid != 0
        && !crate::task::capable(CAP_SYS_RESOURCE)
        && !crate::task::capable(CAP_SYS_ADMIN)
        && process::user_tasks(uid) as u64 >= parent.nproc_limit()
    {
        return Err(Errno::EAGAIN);
    }
    let tid = process::alloc_pid();
    // A bad pointer here is not an error: Linux ignores what `put_user`
    // returns, and the child is made all the same.
    if flags & CLONE_PARENT_SETTID != 0 {
        let _ = write_user(args.parent_tid, &tid);
    }

    let process = if flags & CLONE_THREAD != 0 {
        parent.clone()
    } else {
        copy_process(&parent, tid, &args)?
    };
    // A new process that will never run: no one else knows of it but its
    // parent and the pid table.
    let forget = || {
        if flags & CLONE_THREAD == 0 {
            parent.children.lock().retain(|c| !Arc::ptr_eq(c, &process));
            process::forget_process(tid);
        }
    };
    // The pidfd goes into the parent's table only, after the child's copy
    // was taken (Linux: `__pidfd_prepare` after `copy_files`); a thread's
    // names the thread (PIDFD_THREAD).
    let pidfd = if flags & CLONE_PIDFD != 0 {
        let thread = (flags & CLONE_THREAD != 0).then_some(tid);
        let installed = pidfd::new_file(process.clone(), thread, 0)
            .and_then(|file| parent.install_fd(file, 0, true));
        let fd = match installed {
            Ok(fd) => fd,
            Err(e) => {
                forget();
                return Err(e);
            }
        };
        if let Err(e) = write_user(args.pidfd, &(fd as i32)) {
            let _ = parent.files.lock().close(fd);
            forget();
            return Err(e);
        }
        Some(fd)
    } else {
        None
    };

    let sp = if args.stack != 0 { args.stack } else { tf.sp() };
    let mut frame = TrapFrame::new_user(tf.pc(), sp);
    for i in 1..31 {
        frame.set_reg(i, tf.arg(i));
    }
    frame.set_reg(0, 0);
    frame.set_pstate(tf.pstate());
    let tls = if flags & CLONE_SETTLS != 0 {
        args.tls
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
        user.clear_child_tid
            .store(args.child_tid, Ordering::Relaxed);
    }
    if flags & CLONE_CHILD_SETTID != 0 {
        // Written by the child itself, in its own address space, when it
        // first runs (Linux: `schedule_tail`).
        user.set_child_tid.store(args.child_tid, Ordering::Relaxed);
    }
    // The parent waits for this thread's exec or exit, not the process's:
    // a CLONE_THREAD|CLONE_VFORK child is one thread of the caller's own.
    let vfork = (flags & CLONE_VFORK != 0).then(VforkDone::new);
    *user.vfork_done.lock() = vfork.clone();
    let cpu = process::next_cpu();
    if spawn_user(cpu, user, frame, tls).is_none() {
        // No kernel stack: the child never ran.
        if let Some(fd) = pidfd {
            let _ = parent.files.lock().close(fd);
        }
        forget();
        return Err(Errno::ENOMEM);
    }
    if let Some(done) = vfork {
        let _ = done.wait();
    }
    Ok(tid)
}

/// The new process a clone without CLONE_THREAD makes (Linux: the
/// process half of `copy_process`): the parent's memory shared or
/// copied, copies of its files, working directory and handlers (reset
/// with CLONE_CLEAR_SIGHAND), and what else a child inherits.
fn copy_process(parent: &Arc<Process>, tid: u32, args: &CloneArgs) -> KResult<Arc<Process>> {
    let flags = args.flags;
    // A live process (the caller's) always has its address space.
    let parent_mm = parent.mm().ok_or(Errno::EINVAL)?;
    let mm = if flags & CLONE_VM != 0 {
        parent_mm
    } else {
        // The copy holds any vDSO getrandom state: make it rekey.
        crate::task::clock::new_rng_generation();
        dup_mm(&parent_mm)?
    };
    let files = parent.files.lock().clone();
    let cwd = parent.cwd.lock().clone();
    let mut actions = **parent.actions.lock();
    if flags & CLONE_CLEAR_SIGHAND != 0 {
        // Linux: `flush_signal_handlers(p, 0)`: ignored signals stay so.
        for a in actions.iter_mut() {
            let handler = if a.handler == SIG_IGN {
                SIG_IGN
            } else {
                SIG_DFL
            };
            *a = SigAction {
                handler,
                ..SigAction::default()
            };
        }
    }
    let child = Process::new_with_pid(tid, mm, files, cwd, Arc::downgrade(parent), actions);
    *child.exe.lock() = parent.exe.lock().clone();
    let umask = parent.umask.load(Ordering::Relaxed);
    child.umask.store(umask, Ordering::Relaxed);
    *child.cred.lock() = parent.cred.lock().clone();
    *child.rlimits.lock() = *parent.rlimits.lock();
    let no_new_privs = parent.no_new_privs.load(Ordering::Acquire);
    child.no_new_privs.store(no_new_privs, Ordering::Release);
    child.exit_signal.store(args.exit_signal, Ordering::Release);
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
    Ok(child)
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
