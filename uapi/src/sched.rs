//! clone(2) flags and scheduling policies (Linux:
//! `include/uapi/linux/sched.h`).

uapi_consts! {
    CLONE_NEWNS: i32 = 0x20000;
    /// CLONE_VM: share the caller's address space instead of taking a
    /// copy-on-write copy of it.
    CLONE_VM: u64 = 0x100;
    /// CLONE_FS: share the working directory and umask. Accepted, but only
    /// threads share them here; a new process gets copies.
    CLONE_FS: u64 = 0x200;
    /// CLONE_FILES: share the fd table. Accepted, but only threads share it
    /// here; a new process gets a copy.
    CLONE_FILES: u64 = 0x400;
    /// CLONE_SIGHAND: share the signal handlers; CLONE_THREAD needs it. A new
    /// process gets a copy all the same.
    CLONE_SIGHAND: u64 = 0x800;
    /// CLONE_VFORK: the caller sleeps until the child execs or exits.
    CLONE_VFORK: u64 = 0x4000;
    /// CLONE_THREAD: a new thread of the caller's process (thread group), not
    /// a new process.
    CLONE_THREAD: u64 = 0x10000;
    /// CLONE_SYSVSEM: share System V semaphore undo lists. Accepted and
    /// ignored: there are no System V semaphores.
    CLONE_SYSVSEM: u64 = 0x40000;
    /// CLONE_SETTLS: the child's thread pointer (TPIDR_EL0) is `tls`.
    CLONE_SETTLS: u64 = 0x80000;
    /// CLONE_PARENT_SETTID: store the child's TID at `parent_tid`.
    CLONE_PARENT_SETTID: u64 = 0x100000;
    /// CLONE_CHILD_CLEARTID: when the child exits, zero the word at
    /// `child_tid` and futex-wake it (how `pthread_join` waits).
    CLONE_CHILD_CLEARTID: u64 = 0x200000;
    /// CLONE_CHILD_SETTID: the child stores its TID at `child_tid`, in its
    /// own address space, when it first runs.
    CLONE_CHILD_SETTID: u64 = 0x1000000;
    /// CLONE_PIDFD: a pidfd for the child, its number stored at `pidfd`
    /// (clone's `parent_tid` argument, clone3's `pidfd` field).
    CLONE_PIDFD: u64 = 0x1000;
    /// CLONE_DETACHED: an old flag clone ignores and clone3 refuses; kept
    /// from CLONE_PIDFD so that it may mean something with it later.
    CLONE_DETACHED: u64 = 0x400000;
    /// CLONE_CLEAR_SIGHAND (clone3 only): the child's handlers are reset to
    /// SIG_DFL, ignored signals staying ignored.
    CLONE_CLEAR_SIGHAND: u64 = 4294967296;
    /// CLONE_INTO_CGROUP (clone3 only): start the child in the cgroup
    /// `cgroup` names; ignored, as on a Linux without cgroups.
    CLONE_INTO_CGROUP: u64 = 8589934592;
    /// The low byte of clone's flags: the signal to send the parent at exit
    /// (SIGCHLD for fork); clone3 has a field for it and refuses these bits.
    CSIGNAL: u64 = 0xff;
    /// `struct clone_args`' size in its first version, and its size now
    /// (Linux: `CLONE_ARGS_SIZE_VER0`, `CLONE_ARGS_SIZE_VER2`).
    CLONE_ARGS_SIZE_VER0: usize = 64;
    /// The size of `struct clone_args` now, with `set_tid` and `cgroup`.
    CLONE_ARGS_SIZE_VER2: usize = 88;
    CLONE_NEWTIME: u64 = 0x80;
    /// SCHED_NORMAL (SCHED_OTHER): the default, time-shared policy.
    SCHED_NORMAL: u32 = 0;
    /// SCHED_FIFO: real-time, first in first out.
    SCHED_FIFO: u32 = 1;
    /// SCHED_RR: real-time, round robin.
    SCHED_RR: u32 = 2;
    /// SCHED_BATCH: time-shared, for CPU-bound work.
    SCHED_BATCH: u32 = 3;
    /// SCHED_IDLE: runs only when nothing else would.
    SCHED_IDLE: u32 = 5;
    /// SCHED_DEADLINE: set only through sched_setattr with its runtime,
    /// deadline and period, so sched_setscheduler refuses it.
    SCHED_DEADLINE: u32 = 6;
    /// SCHED_EXT: the BPF-defined class, not configured in (Debian's 6.12
    /// neither), which sched_get_priority_max and _min still know.
    SCHED_EXT: u32 = 7;
    /// Or-ed into a policy: a child of this thread starts as SCHED_NORMAL.
    SCHED_RESET_ON_FORK: u32 = 0x40000000;
}
