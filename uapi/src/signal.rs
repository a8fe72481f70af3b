//! Signals: their numbers, `sigaction` flags, `sigaltstack` flags, how
//! `sigprocmask` changes a mask, `sigevent` notifications and the
//! `si_code` values that say why a signal came (Linux:
//! `include/uapi/asm-generic/signal.h`, `signal-defs.h`, `siginfo.h`).

uapi_consts! {
    /// Sent by kill(2).
    SI_USER: i32 = 0;
    /// Sent by the kernel on its own behalf.
    SI_KERNEL: i32 = 0x80;
    /// Sent by tkill(2) or tgkill(2).
    SI_TKILL: i32 = -6;
    /// A POSIX timer expired.
    SI_TIMER: i32 = -2;
    /// SIGSEGV: nothing is mapped at the address.
    SEGV_MAPERR: i32 = 1;
    /// SIGSEGV: mapped, but not with the access the thread tried.
    SEGV_ACCERR: i32 = 2;
    /// SIGBUS: misaligned address.
    BUS_ADRALN: i32 = 1;
    /// SIGBUS: no memory behind the address (e.g. past the end of a
    /// mapped file).
    BUS_ADRERR: i32 = 2;
    /// SIGILL: undefined instruction.
    ILL_ILLOPC: i32 = 1;
    /// SIGTRAP: a breakpoint instruction.
    TRAP_BRKPT: i32 = 1;
    /// SIGCHLD: the child exited; `si_status` is its exit code.
    CLD_EXITED: i32 = 1;
    /// SIGCHLD: a signal killed the child; `si_status` is the signal.
    CLD_KILLED: i32 = 2;
    /// SIGCHLD: as CLD_KILLED, and the signal dumps core.
    CLD_DUMPED: i32 = 3;
    /// SIGCHLD: a signal stopped the child; `si_status` is the signal.
    CLD_STOPPED: i32 = 5;
    /// SIGCHLD: SIGCONT resumed the stopped child.
    CLD_CONTINUED: i32 = 6;
    /// SIGINT, from the INTR character.
    SIGINT: u32 = 2;
    /// SIGQUIT, from the QUIT character.
    SIGQUIT: u32 = 3;
    /// SIGTSTP, from the SUSP character.
    SIGTSTP: u32 = 20;
    /// mq_notify's `sigev_notify`: a signal.
    SIGEV_SIGNAL: i32 = 0;
    /// mq_notify's `sigev_notify`: register, and send nothing.
    SIGEV_NONE: i32 = 1;
    /// mq_notify's `sigev_notify`: glibc's thread through a netlink socket.
    SIGEV_THREAD: i32 = 2;
    /// `si_code` of a message queue's notification.
    SI_MESGQ: i32 = -3;
    SIG_BLOCK: i32 = 0;
    SIG_UNBLOCK: i32 = 1;
    SIG_SETMASK: i32 = 2;
    SIGEV_THREAD_ID: i32 = 4;
    /// SIGHUP: the controlling terminal hung up, or its controlling process died.
    SIGHUP: u32 = 1;
    /// SIGILL: illegal (undefined) instruction.
    SIGILL: u32 = 4;
    /// SIGTRAP: trace or breakpoint trap (`brk`).
    SIGTRAP: u32 = 5;
    /// SIGABRT: abort(3).
    SIGABRT: u32 = 6;
    /// SIGBUS: bus error, a bad memory access such as past the end of a mapped
    /// file.
    SIGBUS: u32 = 7;
    /// SIGFPE: arithmetic exception.
    SIGFPE: u32 = 8;
    /// SIGKILL: kill; cannot be caught, blocked or ignored.
    SIGKILL: u32 = 9;
    /// SIGUSR1: user-defined signal 1.
    SIGUSR1: u32 = 10;
    /// SIGSEGV: invalid memory reference.
    SIGSEGV: u32 = 11;
    /// SIGUSR2: user-defined signal 2.
    SIGUSR2: u32 = 12;
    /// SIGPIPE: write to a pipe or socket with no reader left.
    SIGPIPE: u32 = 13;
    /// SIGALRM: the alarm(2) / `ITIMER_REAL` timer expired.
    SIGALRM: u32 = 14;
    /// SIGTERM: polite request to terminate, kill(1)'s default.
    SIGTERM: u32 = 15;
    /// SIGSTKFLT: coprocessor stack fault; unused, kept for its number.
    SIGSTKFLT: u32 = 16;
    /// SIGCHLD: a child stopped, continued or exited.
    SIGCHLD: u32 = 17;
    /// SIGCONT: continue if stopped.
    SIGCONT: u32 = 18;
    /// SIGSTOP: stop; cannot be caught, blocked or ignored.
    SIGSTOP: u32 = 19;
    /// SIGTTIN: a background process read from its controlling terminal.
    SIGTTIN: u32 = 21;
    /// SIGTTOU: a background process wrote to its controlling terminal with
    /// TOSTOP set (our terminal never sends it).
    SIGTTOU: u32 = 22;
    /// SIGURG: urgent (out-of-band) data on a socket.
    SIGURG: u32 = 23;
    /// SIGXCPU: CPU time limit (`RLIMIT_CPU`) exceeded.
    SIGXCPU: u32 = 24;
    /// SIGXFSZ: file size limit (`RLIMIT_FSIZE`) exceeded.
    SIGXFSZ: u32 = 25;
    /// SIGVTALRM: the `ITIMER_VIRTUAL` timer (user CPU time) expired.
    SIGVTALRM: u32 = 26;
    /// SIGPROF: the `ITIMER_PROF` timer (user and system CPU time) expired.
    SIGPROF: u32 = 27;
    /// SIGWINCH: the terminal's window size changed.
    SIGWINCH: u32 = 28;
    /// SIGIO (SIGPOLL): I/O is possible on a file descriptor.
    SIGIO: u32 = 29;
    /// SIGPWR: power failure.
    SIGPWR: u32 = 30;
    /// SIGSYS: bad system call.
    SIGSYS: u32 = 31;
    /// Real-time signals are `SIGRTMIN..=SIGRTMAX`. The C library keeps the first
    /// few for itself (glibc: 32 and 33), so its `SIGRTMIN` is higher than ours.
    SIGRTMIN: u32 = 32;
    /// The highest real-time signal, which is also the highest signal (`_NSIG`).
    SIGRTMAX: u32 = 64;
    /// SIGCHLD only: no SIGCHLD when a child stops or continues.
    SA_NOCLDSTOP: u64 = 0x1;
    /// Call the handler as `handler(sig, siginfo_t *, ucontext_t *)`.
    SA_SIGINFO: u64 = 0x4;
    /// Run the handler on the alternate signal stack, if the thread has one.
    SA_ONSTACK: u64 = 0x8000000;
    /// `sa_restorer` is valid: the handler returns there, to call `rt_sigreturn`.
    SA_RESTORER: u64 = 0x4000000;
    /// Restart system calls the signal interrupted instead of failing them with
    /// EINTR.
    SA_RESTART: u64 = 0x10000000;
    /// Don't block the signal while its own handler runs.
    SA_NODEFER: u64 = 0x40000000;
    /// Reset the disposition to SIG_DFL once the handler has been entered.
    SA_RESETHAND: u64 = 0x80000000;
    /// `ss_flags`: the thread is running on its alternate signal stack.
    SS_ONSTACK: u32 = 1;
    /// `ss_flags`: the thread has no alternate signal stack.
    SS_DISABLE: u32 = 2;
    /// `ss_flags`: disarm the stack while a handler runs on it (restored by
    /// `rt_sigreturn`).
    SS_AUTODISARM: u32 = 2147483648;
    /// The smallest alternate stack sigaltstack(2) accepts on arm64.
    MINSIGSTKSZ: u64 = 5120;
}
