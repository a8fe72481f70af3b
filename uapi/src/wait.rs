//! waitid(2) and wait4(2) options and id types (Linux:
//! `include/uapi/linux/wait.h`).

uapi_consts! {
    P_ALL: i32 = 0;
    P_PID: i32 = 1;
    P_PGID: i32 = 2;
    P_PIDFD: i32 = 3;
    /// wait options (Linux: `include/uapi/linux/wait.h`).
    WNOHANG: u32 = 1;
    /// WSTOPPED (alias WUNTRACED): report children that have stopped.
    WSTOPPED: u32 = 2;
    /// WEXITED: report children that have exited (wait4 always asks for it).
    WEXITED: u32 = 4;
    /// WCONTINUED: report stopped children that SIGCONT resumed.
    WCONTINUED: u32 = 8;
    /// WNOWAIT: leave the child waitable; report without reaping or clearing.
    WNOWAIT: u32 = 0x1000000;
}
