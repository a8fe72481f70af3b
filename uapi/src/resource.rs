//! Resource limits, usage and priorities (Linux:
//! `include/uapi/linux/resource.h`, `asm-generic/resource.h`).

uapi_consts! {
    /// PRIO_PROCESS: `who` is a process id (0: the caller).
    PRIO_PROCESS: i32 = 0;
    /// PRIO_PGRP: `who` is a process group id (0: the caller's group).
    PRIO_PGRP: i32 = 1;
    /// PRIO_USER: `who` is a user id; user 0 (root) owns every process.
    PRIO_USER: i32 = 2;
    RUSAGE_SELF: i32 = 0;
    RUSAGE_CHILDREN: i32 = -1;
    RUSAGE_THREAD: i32 = 1;
    /// How many `RLIMIT_*` resources there are (Linux `RLIM_NLIMITS`).
    RLIM_NLIMITS: usize = 16;
    /// A limit of "no limit" (Linux `RLIM_INFINITY`, all ones).
    RLIM_INFINITY: u64 = -1i64 as u64;
    /// `RLIMIT_STACK`: how large the main thread's stack may grow, in bytes.
    RLIMIT_STACK: usize = 3;
    /// `RLIMIT_NOFILE`: one more than the highest file descriptor the
    /// process may open.
    RLIMIT_NOFILE: usize = 7;
    /// `RLIMIT_NPROC`: processes per real user.
    RLIMIT_NPROC: usize = 6;
    /// `RLIMIT_MEMLOCK`: bytes a process may lock in memory.
    RLIMIT_MEMLOCK: usize = 8;
    /// The RLIMIT_MEMLOCK a process starts with (Linux: `MLOCK_LIMIT`, 8 MiB).
    MLOCK_LIMIT: u64 = 8388608;
    /// `RLIMIT_MSGQUEUE`: bytes of POSIX message queues per real user.
    RLIMIT_MSGQUEUE: usize = 12;
}
