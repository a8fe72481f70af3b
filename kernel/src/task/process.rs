//! Processes (Linux: the process half of `struct task_struct`,
//! `kernel/fork.c`, `kernel/exit.c`): an address space, open files, a
//! working directory, signal handlers and a set of threads; the parent and
//! child links that `wait4` follows.
//!
//! Where we simplify: one thread group per process (threads share
//! everything; `CLONE_*` flags that split mm, files or handlers between
//! threads are not supported), no sessions, process groups or credentials
//! (everyone is root), and a process exiting leaves its children to PID 1.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::mem::ManuallyDrop;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::fs::vfs::{FdTable, Inode};
use crate::mm::mm_struct::Mm;
use crate::sync::SpinLock;
use crate::task::signal_abi::{SigAction, SigInfo, NSIG};
use crate::task::thread::Thread;
use crate::task::WaitQueue;

pub struct Process {
    pub pid: u32,
    /// The address space; None once the last thread has exited (Linux:
    /// `exit_mm` drops it before the parent is told).
    pub mm: MmSlot,
    pub files: SpinLock<FdTable>,
    pub cwd: SpinLock<Arc<Inode>>,
    /// What this process last exec'd, for /proc.
    pub exe: SpinLock<Arc<ExecImage>>,
    pub parent: SpinLock<Weak<Process>>,
    pub children: SpinLock<Vec<Arc<Process>>>,
    pub threads: SpinLock<Vec<Weak<Thread>>>,
    /// Signal handlers, shared by all threads (Linux: `sighand_struct`).
    pub actions: SpinLock<Box<[SigAction; NSIG as usize]>>,
    /// Signals sent to the process as a whole, not yet taken by a thread,
    /// and what each is about.
    pub shared_pending: AtomicU64,
    pub shared_info: SpinLock<Box<[Option<SigInfo>; NSIG as usize]>>,
    /// Set once the process is on its way out (exit_group, a fatal signal);
    /// `exit_status` holds its wait status.
    pub exiting: AtomicBool,
    pub exit_status: AtomicU32,
    /// True once every thread has gone: the parent may reap it.
    pub zombie: AtomicBool,
    /// Children changing state wake the parent here (Linux: `wait_chldexit`).
    pub child_wait: WaitQueue,
    /// A vfork parent waits here until the child execs or exits.
    pub vfork_done: WaitQueue,
    pub vfork_released: AtomicBool,
    /// Minor page faults (getrusage's `ru_minflt`).
    pub minflt: AtomicU64,
    /// Resource limits, (soft, hard) per RLIMIT_* (Linux: `signal->rlim`).
    pub rlimits: SpinLock<[[u64; 2]; RLIM_NLIMITS]>,
    /// Threads not yet exited; the one that takes it to 0 ends the process.
    pub nr_threads: AtomicUsize,
    /// The file mode creation mask, taken from new files' and directories'
    /// modes (Linux: `fs->umask`); 022 for init, inherited across fork.
    pub umask: AtomicU32,
}

/// What exec leaves for /proc to show (Linux keeps `mm->exe_file` and
/// reads the argument and environment strings from the new stack, where
/// a program may since have changed them; faultline keeps copies made at
/// exec).
#[derive(Default)]
pub struct ExecImage {
    /// The program's absolute path, symbolic links resolved.
    pub path: String,
    /// The last part of the path exec was given, at most 15 bytes (Linux:
    /// `task->comm`, from `bprm->filename`; a script's own name).
    pub comm: String,
    /// The program file itself (what `/proc/PID/exe` opens).
    pub file: Option<Arc<Inode>>,
    /// argv and envp, each string NUL-terminated (`/proc/PID/cmdline`,
    /// `/proc/PID/environ`).
    pub cmdline: Vec<u8>,
    pub environ: Vec<u8>,
}

pub const RLIM_NLIMITS: usize = 16;
const RLIM_INFINITY: u64 = u64::MAX;
const RLIMIT_STACK: usize = 3;
const RLIMIT_NOFILE: usize = 7;

fn default_rlimits() -> [[u64; 2]; RLIM_NLIMITS] {
    let mut r = [[RLIM_INFINITY; 2]; RLIM_NLIMITS];
    r[RLIMIT_STACK] = [crate::task::exec::STACK_SIZE as u64, RLIM_INFINITY];
    r[RLIMIT_NOFILE] = [crate::fs::vfs::NR_OPEN as u64; 2];
    r
}

/// What a thread of a user process carries besides its kernel thread.
pub struct UserThread {
    pub process: Arc<Process>,
    pub tid: u32,
    /// CLONE_CHILD_CLEARTID / set_tid_address: zeroed and futex-woken at
    /// exit, which is how pthread_join learns a thread has finished.
    pub clear_child_tid: AtomicUsize,
    /// CLONE_CHILD_SETTID: where the child stores its TID on its first run.
    pub set_child_tid: AtomicUsize,
    /// set_robust_list: the head of the robust futexes this thread holds,
    /// released for it when it dies (glibc's robust mutexes).
    pub robust_list: AtomicUsize,
    pub sigmask: AtomicU64,
    /// Signals sent to this thread, and what each is about (a fault's
    /// address, a tgkill's sender).
    pub pending: AtomicU64,
    pub info: SpinLock<Box<[Option<SigInfo>; NSIG as usize]>>,
    /// A system call just failed with EINTR: its first argument, so a
    /// SA_RESTART handler can have it run again (Linux: `orig_x0`). Only
    /// the thread itself reads and writes it, so no lock.
    pub restart_x0: AtomicU64,
    pub restart_pending: AtomicBool,
    /// The mask rt_sigsuspend replaced, put back once the signal that
    /// ended it is handled (Linux: `saved_sigmask`, TIF_RESTORE_SIGMASK).
    pub saved_sigmask: AtomicU64,
    pub restore_sigmask: AtomicBool,
}

static NEXT_PID: AtomicU32 = AtomicU32::new(1);
static PROCESSES: SpinLock<BTreeMap<u32, Weak<Process>>> = SpinLock::new(BTreeMap::new());
static THREADS: SpinLock<BTreeMap<u32, Weak<Thread>>> = SpinLock::new(BTreeMap::new());

/// A new PID/TID (one number space, as in Linux).
pub fn alloc_pid() -> u32 {
    NEXT_PID.fetch_add(1, Ordering::Relaxed)
}

static NEXT_CPU: AtomicUsize = AtomicUsize::new(0);

/// The CPU a new user thread goes to: round robin over the online CPUs.
pub fn next_cpu() -> usize {
    NEXT_CPU.fetch_add(1, Ordering::Relaxed) % crate::task::nr_cpus_online()
}

/// A new thread's first act before it enters user space (Linux:
/// `schedule_tail`): store its TID where CLONE_CHILD_SETTID asked.
pub fn schedule_tail(user: &UserThread) {
    let at = user.set_child_tid.swap(0, Ordering::Relaxed);
    if at != 0 {
        let _ = crate::mm::uaccess::write_user(at, &user.tid);
    }
}

impl Process {
    /// A new process numbered `pid` (the TID of its first thread).
    pub fn new_with_pid(
        pid: u32,
        mm: Arc<Mm>,
        files: FdTable,
        cwd: Arc<Inode>,
        parent: Weak<Process>,
        actions: [SigAction; NSIG as usize],
    ) -> Arc<Process> {
        let p = Arc::new(Process {
            pid,
            mm: MmSlot::new(mm),
            files: SpinLock::new(files),
            cwd: SpinLock::new(cwd),
            exe: SpinLock::new(Arc::new(ExecImage::default())),
            parent: SpinLock::new(parent),
            children: SpinLock::new(Vec::new()),
            threads: SpinLock::new(Vec::new()),
            actions: SpinLock::new(Box::new(actions)),
            shared_pending: AtomicU64::new(0),
            shared_info: SpinLock::new(Box::new([None; NSIG as usize])),
            exiting: AtomicBool::new(false),
            exit_status: AtomicU32::new(0),
            zombie: AtomicBool::new(false),
            child_wait: WaitQueue::new(),
            vfork_done: WaitQueue::new(),
            vfork_released: AtomicBool::new(false),
            minflt: AtomicU64::new(0),
            rlimits: SpinLock::new(default_rlimits()),
            umask: AtomicU32::new(0o022),
            nr_threads: AtomicUsize::new(0),
        });
        PROCESSES.lock().insert(pid, Arc::downgrade(&p));
        p
    }

    pub fn mm(&self) -> Option<Arc<Mm>> {
        self.mm.with(Arc::clone)
    }

    pub fn parent(&self) -> Option<Arc<Process>> {
        self.parent.lock().upgrade()
    }

    pub fn live_threads(&self) -> Vec<Arc<Thread>> {
        self.threads
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }
}

/// The process that plays init: it adopts orphans, and its end powers off.
static INIT: SpinLock<Weak<Process>> = SpinLock::new(Weak::new());

pub fn set_init(p: &Arc<Process>) {
    *INIT.lock() = Arc::downgrade(p);
}

pub fn init_process() -> Option<Arc<Process>> {
    INIT.lock().upgrade()
}

pub fn find_process(pid: u32) -> Option<Arc<Process>> {
    PROCESSES.lock().get(&pid).and_then(Weak::upgrade)
}

/// The PID handed out last (/proc/loadavg).
pub fn last_pid() -> u32 {
    NEXT_PID.load(Ordering::Relaxed) - 1
}

/// How many user threads exist (/proc/loadavg).
pub fn nr_threads() -> usize {
    THREADS.lock().len()
}

/// Every process's PID, zombies included, in order (/proc's listing).
pub fn all_pids() -> Vec<u32> {
    PROCESSES.lock().keys().copied().collect()
}

/// How many processes exist, zombies included (sysinfo's `procs`).
pub fn nr_processes() -> usize {
    PROCESSES.lock().len()
}

pub fn find_thread(tid: u32) -> Option<Arc<Thread>> {
    THREADS.lock().get(&tid).and_then(Weak::upgrade)
}

/// Makes `thread` findable by its TID and a member of its process.
pub fn register_thread(thread: &Arc<Thread>) {
    let user = thread.user.as_ref().expect("a user thread");
    THREADS.lock().insert(user.tid, Arc::downgrade(thread));
    user.process.threads.lock().push(Arc::downgrade(thread));
    user.process.nr_threads.fetch_add(1, Ordering::AcqRel);
}

pub fn unregister_thread(thread: &Thread) {
    let user = thread.user.as_ref().expect("a user thread");
    THREADS.lock().remove(&user.tid);
    user.process
        .threads
        .lock()
        .retain(|t| t.upgrade().is_some_and(|t| !core::ptr::eq(&*t, thread)));
}

pub fn forget_process(pid: u32) {
    PROCESSES.lock().remove(&pid);
}

impl UserThread {
    pub fn new(process: Arc<Process>, tid: u32, sigmask: u64) -> UserThread {
        UserThread {
            process,
            tid,
            clear_child_tid: AtomicUsize::new(0),
            set_child_tid: AtomicUsize::new(0),
            robust_list: AtomicUsize::new(0),
            sigmask: AtomicU64::new(sigmask),
            pending: AtomicU64::new(0),
            info: SpinLock::new(Box::new([None; NSIG as usize])),
            restart_x0: AtomicU64::new(0),
            restart_pending: AtomicBool::new(false),
            saved_sigmask: AtomicU64::new(0),
            restore_sigmask: AtomicBool::new(false),
        }
    }
}

/// A process's address space, read without a lock (Linux: `task->mm`).
/// Only the process's own threads read it (and the scheduler, about to run
/// one of them), and it changes only when no other thread of the process
/// can run: at exec, which needs the process single-threaded, and when the
/// last thread exits. So a reader never sees it go away under it.
pub struct MmSlot(AtomicPtr<Mm>);

impl MmSlot {
    fn new(mm: Arc<Mm>) -> Self {
        MmSlot(AtomicPtr::new(Arc::into_raw(mm) as *mut Mm))
    }

    /// Runs `f` on the address space, if there still is one. The caller is
    /// a thread of the process, or the scheduler about to run one.
    pub fn with<R>(&self, f: impl FnOnce(&Arc<Mm>) -> R) -> Option<R> {
        let mm = self.0.load(Ordering::Acquire);
        if mm.is_null() {
            return None;
        }
        // SAFETY: `mm` came from `Arc::into_raw`, and the reference the slot
        // holds stays until `replace`, which cannot run while a thread of
        // the process (the caller) may still use it; borrowed, not dropped.
        let mm = ManuallyDrop::new(unsafe { Arc::from_raw(mm) });
        Some(f(&mm))
    }

    /// Puts in a new address space (exec) or none (the last exit), handing
    /// back the old one. The caller is the process's only thread.
    pub fn replace(&self, new: Option<Arc<Mm>>) -> Option<Arc<Mm>> {
        let new = new.map_or(core::ptr::null_mut(), |mm| Arc::into_raw(mm) as *mut Mm);
        let old = self.0.swap(new, Ordering::AcqRel);
        // SAFETY: the slot's own reference, from `Arc::into_raw`, now ours.
        (!old.is_null()).then(|| unsafe { Arc::from_raw(old) })
    }
}

impl Drop for MmSlot {
    fn drop(&mut self) {
        drop(self.replace(None));
    }
}
