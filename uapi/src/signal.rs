//! Signal `si_code` values (Linux: `include/uapi/asm-generic/siginfo.h`):
//! why a signal came, as `siginfo_t.si_code` tells the handler.

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
}
