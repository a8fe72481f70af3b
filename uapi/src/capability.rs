//! Capabilities (Linux: `include/uapi/linux/capability.h`): bit numbers
//! of the privileges a process may hold.

uapi_consts! {
    /// CAP_WAKE_ALARM, which timers and sleeps on the ALARM clocks need.
    CAP_WAKE_ALARM: u32 = 35;
    /// CAP_CHOWN: change a file's owner.
    CAP_CHOWN: u32 = 0;
    /// CAP_DAC_OVERRIDE: bypass file permission checks.
    CAP_DAC_OVERRIDE: u32 = 1;
    /// CAP_DAC_READ_SEARCH: bypass read and search permission checks.
    CAP_DAC_READ_SEARCH: u32 = 2;
    /// CAP_FOWNER: act as the owner of any file.
    CAP_FOWNER: u32 = 3;
    /// CAP_FSETID: keep set-ID bits when a file changes.
    CAP_FSETID: u32 = 4;
    /// CAP_KILL: signal any process.
    CAP_KILL: u32 = 5;
    /// CAP_SETGID: set any group id.
    CAP_SETGID: u32 = 6;
    /// CAP_SETUID: set any user id.
    CAP_SETUID: u32 = 7;
    /// CAP_IPC_LOCK: lock memory past RLIMIT_MEMLOCK.
    CAP_IPC_LOCK: u32 = 14;
    /// CAP_IPC_OWNER: bypass System V IPC permission checks.
    CAP_IPC_OWNER: u32 = 15;
    /// CAP_SYS_PTRACE: look into any process.
    CAP_SYS_PTRACE: u32 = 19;
    /// CAP_SYS_ADMIN: mount file systems, among much else.
    CAP_SYS_ADMIN: u32 = 21;
    /// CAP_SYS_RESOURCE: go past resource limits (message queue sizes, the
    /// RTC's fastest periodic rates).
    CAP_SYS_RESOURCE: u32 = 24;
    /// CAP_SYS_TIME: set the clocks.
    CAP_SYS_TIME: u32 = 25;
    /// CAP_MKNOD: make device files.
    CAP_MKNOD: u32 = 27;
    /// CAP_MAC_OVERRIDE: bypass mandatory access control.
    CAP_MAC_OVERRIDE: u32 = 32;
    /// CAP_SYSLOG: read the kernel log (with `dmesg_restrict`, as Debian's).
    CAP_SYSLOG: u32 = 34;
}
