//! Processes (Linux: the process half of `struct task_struct`,
//! `kernel/fork.c`, `kernel/exit.c`): an address space, open files, a
//! working directory, signal handlers and a set of threads; the parent and
//! child links that `wait4` follows.
//!
//! Process groups and sessions are ids kept in each process (Linux keeps
//! `struct pid` lists); finding a group's members walks every process.
//!
//! Where we simplify: one thread group per process (threads share
//! everything; `CLONE_*` flags that split mm, files or handlers between
//! threads are not supported), credentials per process (`cred.rs`), and a
//! process exiting leaves its children to the nearest child subreaper
//! above it, else PID 1.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use crate::errno::{Errno, KResult};
use crate::fs::poll::PollQueue;
use crate::fs::vfs::{FdTable, File, Inode};
use crate::mm::mm_struct::Mm;
use crate::sync::SpinLock;
use crate::task::cred::Cred;
use crate::task::sched_policy::SchedPolicy;
use crate::task::signal_abi::{AltStack, SigAction, SigInfo, NSIG};
use crate::task::thread::Thread;
use crate::task::WaitQueue;
pub use uapi::resource::RLIM_NLIMITS;
use uapi::resource::{
    MLOCK_LIMIT, RLIMIT_MEMLOCK, RLIMIT_MSGQUEUE, RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_STACK,
    RLIM_INFINITY,
};

/// A user process, a thread group: the threads that share one address space,
/// fd table, working directory and set of signal handlers (Linux: the
/// process-wide half of `task_struct`, with `signal_struct` and
/// `sighand_struct`).
pub struct Process {
    /// The process id, the TID of its first thread (Linux: `task_struct`'s
    /// `tgid`).
    pub pid: u32,
    /// The address space; None once the last thread has exited (Linux:
    /// `exit_mm` drops it before the parent is told).
    pub mm: MmSlot,
    /// The open file descriptors, shared by every thread (Linux:
    /// `files_struct`).
    pub files: SpinLock<FdTable>,
    /// The current working directory, where relative paths start (Linux:
    /// `fs->pwd`).
    pub cwd: SpinLock<Arc<Inode>>,
    /// What this process last exec'd, for /proc.
    pub exe: SpinLock<Arc<ExecImage>>,
    /// The parent, which `wait4` reports to; an orphan is moved to its new
    /// reaper (Linux: `real_parent`). Weak: a parent holds its children, not
    /// the other way round. Changed only through `set_parent`.
    parent: SpinLock<Weak<Process>>,
    /// The parent's pid, 0 for none, kept with `parent` so that getppid(2)
    /// reads one word (Linux reads `real_parent` under RCU, with no lock
    /// and no reference taken).
    ppid: AtomicU32,
    /// Children not yet reaped, zombies included: what `wait4` searches
    /// (Linux: the `children` list).
    pub children: SpinLock<Vec<Arc<Process>>>,
    /// The threads, weak; each leaves the list as it exits (Linux:
    /// `signal->thread_head`).
    pub threads: SpinLock<Vec<Weak<Thread>>>,
    /// Signal handlers, shared by all threads (Linux: `sighand_struct`).
    pub actions: SpinLock<Box<[SigAction; NSIG as usize]>>,
    /// Signals sent to the process as a whole, not yet taken by a thread,
    /// and what each is about.
    pub shared_pending: AtomicU64,
    /// The `siginfo_t` of each signal in `shared_pending`, at index `sig - 1`:
    /// one per signal, real-time ones too, from the latest sending.
    pub shared_info: SpinLock<Box<[Option<SigInfo>; NSIG as usize]>>,
    /// Set once the process is on its way out (exit_group, a fatal signal);
    /// `exit_status` holds its wait status.
    pub exiting: AtomicBool,
    /// The wait status (`exited()` or `signaled()`) the parent will be told,
    /// valid once `exiting` is set (Linux: `signal->group_exit_code`).
    pub exit_status: AtomicU32,
    /// True once every thread has gone: the parent may reap it.
    pub zombie: AtomicBool,
    /// Children changing state wake the parent here (Linux: `wait_chldexit`).
    pub child_wait: WaitQueue,
    /// Pollers of the process's pidfds, woken when it becomes a zombie
    /// (Linux: `struct pid`'s `wait_pidfd`).
    pub pidfd_wait: PollQueue,
    /// Resource limits, (soft, hard) per RLIMIT_* (Linux: `signal->rlim`).
    pub rlimits: SpinLock<[[u64; 2]; RLIM_NLIMITS]>,
    /// Threads not yet exited; the one that takes it to 0 ends the process.
    pub nr_threads: AtomicUsize,
    /// Threads that have not begun to exit; the one that takes it to 0
    /// gives the process its status, before it wakes a joiner (Linux:
    /// `signal->quick_threads`, in `synchronize_group_exit`).
    pub quick_threads: AtomicUsize,
    /// User and group ids and capabilities (`cred.rs`; Linux:
    /// `task->cred`, per thread there).
    pub cred: SpinLock<Cred>,
    /// PR_SET_NO_NEW_PRIVS was asked for (Linux: per thread, inherited).
    pub no_new_privs: AtomicBool,
    /// The file mode creation mask, taken from new files' and directories'
    /// modes (Linux: `fs->umask`); 022 for init, inherited across fork.
    pub umask: AtomicU32,
    /// CLOCK_MONOTONIC when the process was made (`/proc/PID/stat`'s
    /// starttime; Linux: `start_boottime`).
    pub start_time_ns: u64,
    /// Process group and session (Linux: `task_pgrp_nr`, `task_session_nr`):
    /// init's are 1 and 1, a child inherits its parent's, setpgid(2) and
    /// setsid(2) change them.
    pub pgid: AtomicU32,
    /// The session id; see `pgid`.
    pub sid: AtomicU32,
    /// Set once the process has exec'd: its parent may no longer move it
    /// to another group (Linux: a cleared `PF_FORKNOEXEC`).
    pub did_exec: AtomicBool,
    /// The nice value, -20..=19 (Linux: `static_prio`; only kept, the
    /// round-robin scheduler does not weigh it).
    pub nice: AtomicI32,
    /// PR_SET_PDEATHSIG: the signal this process gets when its parent dies
    /// (Linux keeps it per thread, `pdeath_signal`); cleared by fork.
    pub pdeath_signal: AtomicU32,
    /// The signal the parent gets when this process exits, 0 for none:
    /// SIGCHLD, or what clone asked for (Linux: `task->exit_signal`).
    /// Only wait's __WCLONE or __WALL reap a child with another signal.
    pub exit_signal: AtomicU32,
    /// PR_SET_DUMPABLE (Linux: `mm->flags` MMF_DUMPABLE), 1 by default.
    pub dumpable: AtomicU32,
    /// PR_SET_CHILD_SUBREAPER: orphaned descendants come here, not to init
    /// (Linux: `signal->is_child_subreaper`).
    pub child_subreaper: AtomicBool,
    /// Job control (Linux: `signal->flags` SIGNAL_STOP_STOPPED): every
    /// thread sleeps on `stop_wait` until SIGCONT or SIGKILL.
    pub stopped: AtomicBool,
    /// The stop signal not yet reported by a WUNTRACED wait (Linux: the
    /// `exit_code` of a stopped task), 0 once reported.
    pub stop_report: AtomicU32,
    /// A SIGCONT resumed us and no WCONTINUED wait has reported it yet
    /// (Linux: SIGNAL_STOP_CONTINUED).
    pub continued_report: AtomicBool,
    /// Where the threads of a stopped process sleep until SIGCONT or SIGKILL.
    pub stop_wait: WaitQueue,
    /// The OOM killer chose it: its memory is on the way back.
    pub oom_killed: AtomicBool,
    /// CPU time of exited threads and of reaped children.
    pub times: SpinLock<ProcessTimes>,
    /// Interval timers and POSIX timers (`timers.rs`).
    pub timers: SpinLock<crate::task::timers::ProcessTimers>,
}

/// CPU time in nanoseconds, and minor faults, that no live thread carries
/// any more (Linux: `signal->utime`, `stime`, `cutime`, `cstime`,
/// `min_flt`, `cmin_flt`).
#[derive(Copy, Clone, Default)]
pub struct ProcessTimes {
    /// Threads of this process that have exited.
    pub utime: u64,
    /// System time of the threads of this process that have exited.
    pub stime: u64,
    /// Children (and their reaped descendants) this process waited for.
    pub cutime: u64,
    /// System time of the children this process waited for.
    pub cstime: u64,
    /// Minor faults of the threads of this process that have exited.
    pub min_flt: u64,
    /// Minor faults of the children this process waited for, theirs
    /// included.
    pub cmin_flt: u64,
}

/// What exec leaves for /proc to show (Linux keeps `mm->exe_file` and
/// reads the argument and environment strings from the new stack, where
/// a program may since have changed them; faultline keeps copies made at
/// exec).
#[derive(Default)]
pub struct ExecImage {
    /// The program's absolute path, symbolic links resolved.
    pub path: String,
    /// The program file itself (what `/proc/PID/exe` opens).
    pub file: Option<Arc<Inode>>,
    /// argv and envp, each string NUL-terminated (`/proc/PID/cmdline`,
    /// `/proc/PID/environ`).
    pub cmdline: Vec<u8>,
    /// The environment strings (envp), each NUL-terminated
    /// (`/proc/PID/environ`).
    pub environ: Vec<u8>,
}

impl Process {
    /// The soft RLIMIT_STACK: how far a stack may grow down.
    pub fn stack_limit(&self) -> u64 {
        self.rlimits.lock()[RLIMIT_STACK][0]
    }

    /// The soft RLIMIT_MEMLOCK: how many bytes the process may lock
    /// without CAP_IPC_LOCK.
    pub fn memlock_limit(&self) -> u64 {
        self.rlimits.lock()[RLIMIT_MEMLOCK][0]
    }

    /// The soft RLIMIT_NPROC: how many processes the real user may have
    /// before fork refuses one without CAP_SYS_RESOURCE.
    pub fn nproc_limit(&self) -> u64 {
        self.rlimits.lock()[RLIMIT_NPROC][0]
    }

    /// The soft RLIMIT_MSGQUEUE: how many bytes of POSIX message queues
    /// the process's real user may have.
    pub fn msgqueue_limit(&self) -> u64 {
        self.rlimits.lock()[RLIMIT_MSGQUEUE][0]
    }

    /// Puts `file` in the lowest free descriptor at or above `min`, with
    /// FD_CLOEXEC if `cloexec`; EMFILE unless that is below the soft
    /// RLIMIT_NOFILE (Linux: `get_unused_fd_flags` + `fd_install`).
    pub fn install_fd(&self, file: Arc<File>, min: usize, cloexec: bool) -> KResult<usize> {
        let limit = self.rlimits.lock()[RLIMIT_NOFILE][0] as usize;
        let mut files = self.files.lock();
        let fd = files.install_from(file, min, cloexec)?;
        if fd >= limit {
            let _ = files.close(fd);
            return Err(Errno::EMFILE);
        }
        Ok(fd)
    }
}
/// May the caller look into `target`'s files and memory (Linux:
/// `ptrace_may_access` in PTRACE_MODE_REALCREDS; see [`Cred::may_ptrace`])?
/// Always its own. ESRCH for a caller that is no process.
pub fn ptrace_may_access(target: &Process) -> KResult<bool> {
    let me = crate::task::current_process().ok_or(Errno::ESRCH)?;
    if me.pid == target.pid {
        return Ok(true);
    }
    let mine = me.cred.lock().clone();
    let theirs = target.cred.lock().clone();
    // A process whose memory is gone has no dumpable flag left to refuse.
    let dumpable = target.dumpable.load(Ordering::Acquire) == 1 || target.mm().is_none();
    Ok(mine.may_ptrace(&theirs, dumpable))
}

/// The RLIMIT_MSGQUEUE a process starts with (Linux: `MQ_BYTES_MAX`).
const MQ_BYTES_MAX: u64 = 819200;

/// The limits a new process starts with, as (soft, hard) pairs: none,
/// except the stack (soft limit [`STACK_SIZE`](crate::task::exec::STACK_SIZE)),
/// open files ([`NR_OPEN`](crate::fs::vfs::NR_OPEN)), locked memory
/// ([`MLOCK_LIMIT`]) and message queues ([`MQ_BYTES_MAX`]), as Linux's
/// `INIT_RLIMITS`. Linux sizes RLIMIT_NPROC by memory at boot; here it
/// starts unlimited.
fn default_rlimits() -> [[u64; 2]; RLIM_NLIMITS] {
    let mut r = [[RLIM_INFINITY; 2]; RLIM_NLIMITS];
    r[RLIMIT_STACK] = [crate::task::exec::STACK_SIZE as u64, RLIM_INFINITY];
    r[RLIMIT_NOFILE] = [crate::fs::vfs::NR_OPEN as u64; 2];
    r[RLIMIT_MSGQUEUE] = [MQ_BYTES_MAX; 2];
    r[RLIMIT_MEMLOCK] = [MLOCK_LIMIT; 2];
    r
}

/// What a thread of a user process carries besides its kernel thread.
pub struct UserThread {
    /// The process, the thread group, this thread is one of.
    pub process: Arc<Process>,
    /// The thread id (Linux: `task_struct`'s `pid`); the first thread's is
    /// the process's pid.
    pub tid: u32,
    /// CLONE_CHILD_CLEARTID / set_tid_address: zeroed and futex-woken at
    /// exit, which is how pthread_join learns a thread has finished.
    pub clear_child_tid: AtomicUsize,
    /// CLONE_CHILD_SETTID: where the child stores its TID on its first run.
    pub set_child_tid: AtomicUsize,
    /// set_robust_list: the head of the robust futexes this thread holds,
    /// released for it when it dies (glibc's robust mutexes).
    pub robust_list: AtomicUsize,
    /// How far the release of its futexes at exit has got (Linux:
    /// `futex_state`), which a PI locker waits out: `task::futex`'s
    /// FUTEX_STATE_OK, EXITING or DEAD.
    pub futex_state: AtomicU8,
    /// sched_setscheduler: the thread's policy and real-time priority.
    pub sched: SpinLock<SchedPolicy>,
    /// The signals this thread blocks (Linux: `task->blocked`); never holds
    /// SIGKILL or SIGSTOP.
    pub sigmask: AtomicU64,
    /// Signals sent to this thread, and what each is about (a fault's
    /// address, a tgkill's sender).
    pub pending: AtomicU64,
    /// The `siginfo_t` of each signal in `pending`, at index `sig - 1`.
    pub info: SpinLock<Box<[Option<SigInfo>; NSIG as usize]>>,
    /// A system call just failed with EINTR: its first argument, so a
    /// SA_RESTART handler can have it run again (Linux: `orig_x0`). Only
    /// the thread itself reads and writes it, so no lock.
    pub restart_x0: AtomicU64,
    /// `restart_x0` holds a call to restart: signal handling runs it again
    /// if no handler runs, or the handler has SA_RESTART.
    pub restart_pending: AtomicBool,
    /// The mask rt_sigsuspend replaced, put back once the signal that
    /// ended it is handled (Linux: `saved_sigmask`, TIF_RESTORE_SIGMASK).
    pub saved_sigmask: AtomicU64,
    /// `saved_sigmask` is to be put back once the pending signal has been
    /// handled (Linux: TIF_RESTORE_SIGMASK).
    pub restore_sigmask: AtomicBool,
    /// There may be work for `do_signal` on the way back to user space: a
    /// signal queued, the mask changed, a stop or an exit to join, a call
    /// to restart, a mask to put back (Linux: TIF_SIGPENDING). Set by
    /// whoever makes the work, after making it (`set_sigpending`); taken
    /// down by the thread itself before it looks. Only a hint, so that
    /// every return to user space tests one flag: the fields above decide.
    pub sigpending: AtomicBool,
    /// Minor page faults this thread has taken (Linux: `task->min_flt`).
    /// Only the thread itself adds to it, so a load and a store do, with
    /// no atomic read-modify-write; others only read it.
    pub min_flt: AtomicU64,
    /// sigaltstack(2): the alternate signal stack (Linux: `sas_ss_sp`,
    /// `sas_ss_size`, `sas_ss_flags`); `flags` holds only SS_DISABLE or
    /// SS_AUTODISARM, SS_ONSTACK is computed from the stack pointer.
    pub altstack: SpinLock<AltStack>,
    /// The signals rt_sigtimedwait is waiting for, kept from being
    /// discarded as ignored meanwhile (Linux: `real_blocked`).
    pub waiting_for: AtomicU64,
    /// The thread's name (Linux: `task->comm`, 16 bytes with the NUL): the
    /// exec'd file's name, or what PR_SET_NAME set; what /proc shows.
    pub comm: SpinLock<[u8; TASK_COMM_LEN]>,
    /// Made by clone(CLONE_VFORK): the parent waits on it until this
    /// thread execs or exits (Linux: `task->vfork_done`).
    pub vfork_done: SpinLock<Option<Arc<VforkDone>>>,
}

/// What a vfork parent waits for (Linux: a `struct completion`).
pub struct VforkDone {
    /// Set once the child has exec'd or exited: the parent may go on.
    released: AtomicBool,
    /// The vfork parent sleeps here until `released` is set.
    wait: WaitQueue,
}

impl VforkDone {
    /// A completion not yet released, for a child made with CLONE_VFORK.
    pub fn new() -> Arc<VforkDone> {
        Arc::new(VforkDone {
            released: AtomicBool::new(false),
            wait: WaitQueue::new(),
        })
    }

    /// The parent's wait (EINTR on a signal).
    pub fn wait(&self) -> KResult<()> {
        self.wait
            .wait_interruptible(|| self.released.load(Ordering::Acquire))
    }
}

/// The thread no longer uses the memory it shares with a vfork parent:
/// let the parent go (Linux: `mm_release` -> `complete_vfork_done`, at
/// exec and at exit).
pub fn release_vfork_parent(user: &UserThread) {
    if let Some(done) = user.vfork_done.lock().take() {
        done.released.store(true, Ordering::Release);
        done.wait.wake_all();
    }
}

/// Linux's `TASK_COMM_LEN`: 15 characters and a NUL.
pub const TASK_COMM_LEN: usize = 16;

/// The `comm` for an exec'd `path`: its last component, cut to 15 bytes
/// (Linux: `__set_task_comm(me, kbasename(filename))`).
pub fn comm_of_path(path: &str) -> [u8; TASK_COMM_LEN] {
    let name = path.rsplit('/').next().unwrap_or(path).as_bytes();
    let mut comm = [0u8; TASK_COMM_LEN];
    let n = name.len().min(TASK_COMM_LEN - 1);
    comm[..n].copy_from_slice(&name[..n]);
    comm
}

/// The next PID/TID to hand out. Numbers are never reused.
static NEXT_PID: AtomicU32 = AtomicU32::new(1);
/// Every process not yet reaped, by PID (Linux: the pid hash). Weak:
/// its parent's `children` and its threads keep a process alive.
static PROCESSES: SpinLock<BTreeMap<u32, Weak<Process>>> = SpinLock::new(BTreeMap::new());
/// Every user thread that has not exited, by TID.
static THREADS: SpinLock<BTreeMap<u32, Weak<Thread>>> = SpinLock::new(BTreeMap::new());

/// The PID Linux's `kthreadd` has, parent of every kernel thread: /proc
/// shows the kernel's threads there (`fs/procfs/kthreadd.rs`), so no
/// process gets it.
pub const KTHREADD_PID: u32 = 2;

/// A new PID/TID (one number space, as in Linux).
pub fn alloc_pid() -> u32 {
    let pid = NEXT_PID.fetch_add(1, Ordering::Relaxed);
    if pid == KTHREADD_PID {
        return alloc_pid();
    }
    pid
}

/// The CPU a new user thread goes to: the one with the fewest threads to
/// run (`sched::select_cpu`).
pub fn next_cpu() -> usize {
    super::sched::select_cpu()
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
            ppid: AtomicU32::new(parent.upgrade().map_or(0, |p| p.pid)),
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
            pidfd_wait: PollQueue::new(),
            rlimits: SpinLock::new(default_rlimits()),
            cred: SpinLock::new(Cred::root()),
            no_new_privs: AtomicBool::new(false),
            umask: AtomicU32::new(0o022),
            start_time_ns: crate::task::clock::monotonic_ns(),
            nr_threads: AtomicUsize::new(0),
            quick_threads: AtomicUsize::new(0),
            pgid: AtomicU32::new(pid),
            sid: AtomicU32::new(pid),
            did_exec: AtomicBool::new(false),
            nice: AtomicI32::new(0),
            pdeath_signal: AtomicU32::new(0),
            exit_signal: AtomicU32::new(crate::task::signal_abi::SIGCHLD),
            dumpable: AtomicU32::new(1),
            child_subreaper: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            stop_report: AtomicU32::new(0),
            continued_report: AtomicBool::new(false),
            stop_wait: WaitQueue::new(),
            oom_killed: AtomicBool::new(false),
            times: SpinLock::new(ProcessTimes::default()),
            timers: SpinLock::new(Default::default()),
        });
        PROCESSES.lock().insert(pid, Arc::downgrade(&p));
        p
    }

    /// The address space, if it has one (a zombie has none), with a
    /// reference of its own: any thread may ask, of any process (Linux:
    /// `get_task_mm`).
    pub fn mm(&self) -> Option<Arc<Mm>> {
        self.mm.get()
    }

    /// The command name: its first thread's `comm` (Linux: `task->comm`).
    pub fn comm(&self) -> String {
        let threads = self.live_threads();
        let Some(u) = threads.first().and_then(|t| t.user.as_ref()) else {
            return String::new();
        };
        let comm = *u.comm.lock();
        let len = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
        String::from_utf8_lossy(&comm[..len]).into_owned()
    }

    /// The parent process (Linux: `task->real_parent`); None for init, or
    /// once nothing holds the parent any more.
    pub fn parent(&self) -> Option<Arc<Process>> {
        self.parent.lock().upgrade()
    }

    /// The parent's pid, 0 for init (Linux: getppid's `task_tgid_vnr` of
    /// `real_parent`).
    pub fn ppid(&self) -> u32 {
        self.ppid.load(Ordering::Acquire)
    }

    /// Makes `parent` the process's parent: an orphan's new reaper.
    pub fn set_parent(&self, parent: &Arc<Process>) {
        let mut slot = self.parent.lock();
        *slot = Arc::downgrade(parent);
        self.ppid.store(parent.pid, Ordering::Release);
    }

    /// The threads still alive, each with a reference of its own (Linux:
    /// `for_each_thread`).
    pub fn live_threads(&self) -> Vec<Arc<Thread>> {
        self.threads
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// The process's CPU time so far, (user, system) in nanoseconds: its
    /// exited threads' and its live threads' (Linux:
    /// `thread_group_cputime_adjusted`).
    pub fn cputime(&self) -> (u64, u64) {
        let times = self.times.lock();
        let (mut utime, mut stime) = (times.utime, times.stime);
        for t in self.live_threads() {
            let (u, s) = t.cputime();
            utime += u;
            stime += s;
        }
        (utime, stime)
    }

    /// The process's minor faults so far: its exited threads' and its live
    /// threads' (Linux: `getrusage`'s sum over the thread group).
    pub fn min_flt(&self) -> u64 {
        let times = self.times.lock();
        let live = self.live_threads().iter().map(|t| t.min_flt()).sum::<u64>();
        times.min_flt + live
    }

    /// Is the process a zombie or on its way out?
    pub fn is_exiting(&self) -> bool {
        self.exiting.load(Ordering::Acquire)
    }

    /// Have all its threads gone, so that its parent may reap it (Linux:
    /// the leader's `exit_state` with an empty thread group)?
    pub fn is_zombie(&self) -> bool {
        self.zombie.load(Ordering::Acquire)
    }
}

/// Every process not yet reaped, zombies included.
pub fn all_processes() -> Vec<Arc<Process>> {
    PROCESSES
        .lock()
        .values()
        .filter_map(Weak::upgrade)
        .collect()
}

/// Processes stopped now, so an exit can tell at once that no group has
/// stopped jobs to continue (the common case: a fork bomb's thousands of
/// exits would each walk every process).
static NR_STOPPED: AtomicUsize = AtomicUsize::new(0);

impl Process {
    /// Marks the process stopped or not; true if that changed it.
    pub fn set_stopped(&self, stopped: bool) -> bool {
        let changed = self.stopped.swap(stopped, Ordering::AcqRel) != stopped;
        if changed && stopped {
            NR_STOPPED.fetch_add(1, Ordering::AcqRel);
        } else if changed {
            NR_STOPPED.fetch_sub(1, Ordering::AcqRel);
        }
        changed
    }
}

/// Is any process stopped?
pub fn any_stopped() -> bool {
    NR_STOPPED.load(Ordering::Acquire) != 0
}

/// The live members of process group `pgid` (Linux: `do_each_pid_task(pgrp,
/// PIDTYPE_PGID)`), zombies left out.
pub fn pgrp_members(pgid: u32) -> Vec<Arc<Process>> {
    let mut v = all_processes();
    v.retain(|p| p.pgid.load(Ordering::Acquire) == pgid && !p.zombie.load(Ordering::Acquire));
    v
}

/// Is there a process group `pgid` in session `sid`? Members that have
/// exited but are not yet reaped count, as their PID still names the group
/// in Linux (`find_vpid` in setpgid(2) and TIOCSPGRP).
pub fn pgrp_in_session(pgid: u32, sid: u32) -> bool {
    all_processes()
        .iter()
        .any(|p| p.pgid.load(Ordering::Acquire) == pgid && p.sid.load(Ordering::Acquire) == sid)
}

/// Does session `sid` have a live member?
pub fn session_exists(sid: u32) -> bool {
    all_processes()
        .iter()
        .any(|p| p.sid.load(Ordering::Acquire) == sid && !p.zombie.load(Ordering::Acquire))
}

/// Does process group `pgid` have a live member?
pub fn pgrp_exists(pgid: u32) -> bool {
    !pgrp_members(pgid).is_empty()
}

/// Is process group `pgid` orphaned: no member has a parent in another
/// group of the same session (POSIX; Linux: `will_become_orphaned_pgrp`
/// with no process to ignore, which also counts a group whose members'
/// parents are all init as orphaned)? The terminal driver uses it to
/// refuse SIGTTIN/SIGTTOU stops, signal delivery to drop SIGTSTP and
/// friends, and exit to send SIGHUP and SIGCONT to newly orphaned groups.
pub fn is_orphaned_pgrp(pgid: u32) -> bool {
    will_become_orphaned_pgrp(pgid, None)
}

/// As `is_orphaned_pgrp`, as if `ignore` (an exiting process) were gone.
pub fn will_become_orphaned_pgrp(pgid: u32, ignore: Option<&Process>) -> bool {
    for p in pgrp_members(pgid) {
        if ignore.is_some_and(|i| core::ptr::eq(i, &*p)) || p.is_exiting() {
            continue;
        }
        let Some(parent) = p.parent() else { continue };
        if parent.pid == 1 {
            continue;
        }
        if parent.pgid.load(Ordering::Acquire) != pgid
            && parent.sid.load(Ordering::Acquire) == p.sid.load(Ordering::Acquire)
        {
            return false;
        }
    }
    true
}

/// Sends `sig` to every process of group `pgid` (Linux: `kill_pgrp`, as
/// from the kernel: si_code SI_KERNEL); ESRCH if the group is empty. For
/// the terminal's SIGINT, SIGTSTP, SIGWINCH and SIGHUP.
pub fn kill_pgrp(pgid: u32, sig: u32) -> KResult<()> {
    if sig > NSIG {
        return Err(Errno::EINVAL);
    }
    let members = pgrp_members(pgid);
    if members.is_empty() {
        return Err(Errno::ESRCH);
    }
    for p in members {
        crate::task::signal::send_to_process(&p, sig, crate::task::signal::SigSource::Kernel);
    }
    Ok(())
}

/// The process that plays init: it adopts orphans, and its end powers off.
static INIT: SpinLock<Weak<Process>> = SpinLock::new(Weak::new());

/// Makes `p` init: the process that adopts orphans, and whose end powers
/// the machine off.
pub fn set_init(p: &Arc<Process>) {
    *INIT.lock() = Arc::downgrade(p);
}

/// The init process, unless it has gone.
pub fn init_process() -> Option<Arc<Process>> {
    INIT.lock().upgrade()
}

/// The process with PID `pid`, zombies included, if it has not been
/// reaped (Linux: `find_task_by_vpid` of a thread group leader).
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

/// How many tasks the real user `uid` has: the threads of its processes,
/// a zombie counting one until it is reaped (Linux: the user's
/// UCOUNT_RLIMIT_NPROC, which RLIMIT_NPROC bounds).
pub fn user_tasks(uid: u32) -> usize {
    all_processes()
        .iter()
        .filter(|p| p.cred.lock().uid == uid)
        .map(|p| p.nr_threads.load(Ordering::Acquire).max(1))
        .sum()
}

/// Every process's PID, zombies included, in order (/proc's listing).
pub fn all_pids() -> Vec<u32> {
    PROCESSES.lock().keys().copied().collect()
}

/// How many processes exist, zombies included (sysinfo's `procs`).
pub fn nr_processes() -> usize {
    PROCESSES.lock().len()
}

/// The user thread with TID `tid`, if it has not exited (Linux:
/// `find_task_by_vpid`).
pub fn find_thread(tid: u32) -> Option<Arc<Thread>> {
    THREADS.lock().get(&tid).and_then(Weak::upgrade)
}

/// Makes `thread` findable by its TID and a member of its process.
pub fn register_thread(thread: &Arc<Thread>) {
    let user = thread.user.as_ref().expect("a user thread");
    THREADS.lock().insert(user.tid, Arc::downgrade(thread));
    user.process.threads.lock().push(Arc::downgrade(thread));
    user.process.nr_threads.fetch_add(1, Ordering::AcqRel);
    user.process.quick_threads.fetch_add(1, Ordering::AcqRel);
}

/// Undoes [`register_thread`] as `thread` exits: its TID finds it no
/// more and its process no longer lists it (Linux: `__unhash_process`).
pub fn unregister_thread(thread: &Thread) {
    let user = thread.user.as_ref().expect("a user thread");
    THREADS.lock().remove(&user.tid);
    user.process
        .threads
        .lock()
        .retain(|t| t.upgrade().is_some_and(|t| !core::ptr::eq(&*t, thread)));
}

/// Removes `pid` from the process table: its parent reaped it, or the
/// fork that made it failed (Linux: `detach_pid` in `release_task`).
pub fn forget_process(pid: u32) {
    PROCESSES.lock().remove(&pid);
}

impl UserThread {
    /// Tells the thread to look at its signals on its next way back to
    /// user space (Linux: `set_tsk_thread_flag(t, TIF_SIGPENDING)`). The
    /// caller has made the work it is to find.
    pub fn set_sigpending(&self) {
        self.sigpending.store(true, Ordering::Release);
    }

    /// Makes `mask` the signals the thread blocks; one it unblocks may be
    /// pending, so the thread looks on its way out (Linux:
    /// `set_current_blocked`, whose `recalc_sigpending` sets the flag).
    pub fn set_sigmask(&self, mask: u64) {
        self.sigmask.store(mask, Ordering::Release);
        self.set_sigpending();
    }

    /// A new thread `tid` of `process`, blocking `sigmask`: nothing pending,
    /// no alternate signal stack, an empty `comm`.
    pub fn new(process: Arc<Process>, tid: u32, sigmask: u64) -> UserThread {
        UserThread {
            process,
            tid,
            clear_child_tid: AtomicUsize::new(0),
            set_child_tid: AtomicUsize::new(0),
            robust_list: AtomicUsize::new(0),
            futex_state: AtomicU8::new(crate::task::futex::FUTEX_STATE_OK),
            sched: SpinLock::new(SchedPolicy::default()),
            sigmask: AtomicU64::new(sigmask),
            pending: AtomicU64::new(0),
            info: SpinLock::new(Box::new([None; NSIG as usize])),
            restart_x0: AtomicU64::new(0),
            restart_pending: AtomicBool::new(false),
            saved_sigmask: AtomicU64::new(0),
            restore_sigmask: AtomicBool::new(false),
            // Whatever was sent before the thread could be found is looked
            // for on its first return to user space.
            sigpending: AtomicBool::new(true),
            min_flt: AtomicU64::new(0),
            altstack: SpinLock::new(AltStack::DISABLED),
            waiting_for: AtomicU64::new(0),
            comm: SpinLock::new([0; TASK_COMM_LEN]),
            vfork_done: SpinLock::new(None),
        }
    }
}

/// A process's address space (Linux: `task->mm`). Its own threads read
/// it without a lock (`with`): it changes only when no other thread of the
/// process can run, at exec, which needs the process single-threaded, and
/// when the last thread exits. Anyone else (`/proc/PID/`, the OOM killer)
/// takes a reference under `remote` (`get`), which a change also takes
/// (Linux: `task_lock`).
pub struct MmSlot {
    /// The address space, as `Arc::into_raw` left it (the slot owns that
    /// reference), or null once there is none.
    mm: AtomicPtr<Mm>,
    /// Held by `get` and `replace`, so that no one takes a reference to an
    /// address space as it is being swapped out (Linux: `task_lock`).
    remote: SpinLock<()>,
}

/// An address space borrowed from its slot (`MmSlot::borrow`): the slot's
/// own reference, lent for as long as the slot is borrowed.
pub struct MmRef<'a>(ManuallyDrop<Arc<Mm>>, PhantomData<&'a MmSlot>);

impl core::ops::Deref for MmRef<'_> {
    type Target = Arc<Mm>;

    fn deref(&self) -> &Arc<Mm> {
        &self.0
    }
}

impl MmSlot {
    /// A slot that owns `mm`'s reference.
    fn new(mm: Arc<Mm>) -> Self {
        MmSlot {
            mm: AtomicPtr::new(Arc::into_raw(mm) as *mut Mm),
            remote: SpinLock::new(()),
        }
    }

    /// The address space, borrowed rather than counted, if there still is
    /// one (Linux: `current->mm`). The caller is a thread of the process,
    /// or the scheduler about to run one.
    pub fn borrow(&self) -> Option<MmRef<'_>> {
        let mm = self.mm.load(Ordering::Acquire);
        if mm.is_null() {
            return None;
        }
        // SAFETY: `mm` came from `Arc::into_raw`, and the reference the slot
        // holds stays until `replace`, which cannot run while a thread of
        // the process (the caller) may still use it; borrowed, not dropped.
        Some(MmRef(
            ManuallyDrop::new(unsafe { Arc::from_raw(mm) }),
            PhantomData,
        ))
    }

    /// A reference to the address space, from any thread.
    pub fn get(&self) -> Option<Arc<Mm>> {
        let _remote = self.remote.lock();
        let mm = self.mm.load(Ordering::Acquire);
        if mm.is_null() {
            return None;
        }
        // SAFETY: the slot's reference lives until `replace`, which waits
        // for `remote`; we add one of our own.
        unsafe {
            Arc::increment_strong_count(mm);
            Some(Arc::from_raw(mm))
        }
    }

    /// Puts in a new address space (exec) or none (the last exit), handing
    /// back the old one. The caller is the process's only thread.
    pub fn replace(&self, new: Option<Arc<Mm>>) -> Option<Arc<Mm>> {
        let new = new.map_or(core::ptr::null_mut(), |mm| Arc::into_raw(mm) as *mut Mm);
        let old = {
            let _remote = self.remote.lock();
            self.mm.swap(new, Ordering::AcqRel)
        };
        // SAFETY: the slot's own reference, from `Arc::into_raw`, now ours.
        (!old.is_null()).then(|| unsafe { Arc::from_raw(old) })
    }
}

impl Drop for MmSlot {
    fn drop(&mut self) {
        drop(self.replace(None));
    }
}
