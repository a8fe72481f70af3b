//! Processes: fork (clone), vfork + execve, execve, exit, wait4 and the
//! status it reports, ids, set_tid_address, resource usage and limits.

use crate::errno::Errno;
use crate::signal::{signal_name, SIGCHLD};
use crate::sys::*;
use crate::syscall;
use alloc::vec::Vec;
use core::arch::asm;
use core::ffi::{c_char, CStr};
use core::fmt;
pub use uapi::resource::{RUSAGE_CHILDREN, RUSAGE_SELF};
pub use uapi::wait::WNOHANG;

// uapi's values, typed as this API takes them.
pub const CLONE_VM: usize = uapi::sched::CLONE_VM as usize;
pub const CLONE_FS: usize = uapi::sched::CLONE_FS as usize;
pub const CLONE_FILES: usize = uapi::sched::CLONE_FILES as usize;
pub const CLONE_SIGHAND: usize = uapi::sched::CLONE_SIGHAND as usize;
pub const CLONE_VFORK: usize = uapi::sched::CLONE_VFORK as usize;
pub const CLONE_THREAD: usize = uapi::sched::CLONE_THREAD as usize;
pub const CLONE_SYSVSEM: usize = uapi::sched::CLONE_SYSVSEM as usize;
pub const CLONE_SETTLS: usize = uapi::sched::CLONE_SETTLS as usize;
pub const CLONE_PARENT_SETTID: usize = uapi::sched::CLONE_PARENT_SETTID as usize;
pub const CLONE_CHILD_CLEARTID: usize = uapi::sched::CLONE_CHILD_CLEARTID as usize;

pub const RLIMIT_STACK: u32 = uapi::resource::RLIMIT_STACK as u32;
pub const RLIMIT_NOFILE: u32 = uapi::resource::RLIMIT_NOFILE as u32;

/// Creates a child process with a copy of this one's memory (copy on write)
/// and returns its pid, or 0 in the child. Only the calling thread is
/// copied, so locks other threads hold stay held in the child.
pub fn fork() -> Result<i32, Errno> {
    // SAFETY: without CLONE_VM the child runs on its own copy of this
    // stack, so returning into Rust code is fine in both processes.
    unsafe { syscall!(__NR_clone, SIGCHLD, 0, 0, 0, 0) }.map(|pid| pid as i32)
}

/// clone(2) in arm64's argument order: flags, stack, parent_tid, tls,
/// child_tid.
///
/// # Safety
/// With `CLONE_VM` the child shares this stack unless given another, and
/// cannot return into Rust code: create threads with
/// [`thread::spawn`](crate::thread::spawn) instead.
pub unsafe fn clone(
    flags: usize,
    stack: usize,
    parent_tid: *mut i32,
    tls: usize,
    child_tid: *mut i32,
) -> Result<i32, Errno> {
    syscall!(__NR_clone, flags, stack, parent_tid, tls, child_tid).map(|pid| pid as i32)
}

// vfork's child borrows the parent's memory, stack included, until it
// execs or exits, so it must not touch the stack: the whole child path is
// this assembly, which execs or exits with status 127.
core::arch::global_asm!(
    ".globl __ulib_vfork_execve",
    ".type __ulib_vfork_execve, %function",
    "__ulib_vfork_execve:",
    "mov x9, x0",
    "mov x10, x1",
    "mov x11, x2",
    "mov x0, #{flags}",
    "mov x1, xzr",
    "mov x2, xzr",
    "mov x3, xzr",
    "mov x4, xzr",
    "mov x8, #{clone}",
    "svc #0",
    "cbz x0, 1f",
    "ret",
    "1:",
    "mov x0, x9",
    "mov x1, x10",
    "mov x2, x11",
    "mov x8, #{execve}",
    "svc #0",
    "mov x0, #127",
    "mov x8, #{exit}",
    "svc #0",
    flags = const CLONE_VM | CLONE_VFORK | SIGCHLD as usize,
    clone = const __NR_clone,
    execve = const __NR_execve,
    exit = const __NR_exit_group,
);

extern "C" {
    fn __ulib_vfork_execve(
        path: *const c_char,
        argv: *const *const c_char,
        envp: *const *const c_char,
    ) -> isize;
}

/// vfork(2) + execve(2): starts `path` in a new process and returns its pid.
/// The parent is suspended until the child has exec'd or exited; a child
/// whose execve fails exits with status 127.
pub fn vfork_execve(path: &CStr, argv: &[&CStr], envp: &[&CStr]) -> Result<i32, Errno> {
    let argv = c_array(argv);
    let envp = c_array(envp);
    // SAFETY: the arrays are NULL-terminated and outlive the call, which
    // only returns once the child no longer uses this memory.
    let ret = unsafe { __ulib_vfork_execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    syscall::check(ret).map(|pid| pid as i32)
}

/// A NULL-terminated array of pointers to the strings, for execve.
fn c_array(strings: &[&CStr]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(core::iter::once(core::ptr::null()))
        .collect()
}

/// Replaces this program with `path`. Returns only on failure.
pub fn execve(path: &CStr, argv: &[&CStr], envp: &[&CStr]) -> Errno {
    let argv = c_array(argv);
    let envp = c_array(envp);
    // SAFETY: path is NUL-terminated and the arrays NULL-terminated; on
    // success this process's memory is replaced and nothing here runs on.
    match unsafe { syscall!(__NR_execve, path.as_ptr(), argv.as_ptr(), envp.as_ptr()) } {
        Err(errno) => errno,
        Ok(_) => unreachable!("execve returned success"),
    }
}

/// Ends the calling thread only; the process ends with its last thread.
pub fn exit(code: i32) -> ! {
    // SAFETY: exit does not return.
    unsafe { asm!("svc #0", in("x8") __NR_exit, in("x0") code, options(noreturn, nostack)) }
}

/// Ends the whole process, every thread, with status `code`.
pub fn exit_group(code: i32) -> ! {
    // SAFETY: exit_group does not return.
    unsafe {
        asm!(
            "svc #0",
            in("x8") __NR_exit_group,
            in("x0") code,
            options(noreturn, nostack)
        )
    }
}

/// A wait status as wait4 encodes it: exit code in bits 8..16 for a normal
/// exit, the signal number in bits 0..7 (and 0x80 for a core dump) for a
/// death by signal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WaitStatus(pub i32);

impl WaitStatus {
    /// WIFEXITED + WEXITSTATUS.
    pub fn exit_code(self) -> Option<i32> {
        (self.0 & 0x7f == 0).then_some((self.0 >> 8) & 0xff)
    }

    /// WIFSIGNALED + WTERMSIG.
    pub fn term_signal(self) -> Option<i32> {
        let sig = self.0 & 0x7f;
        (sig != 0 && sig != 0x7f).then_some(sig)
    }
}

impl fmt::Debug for WaitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.exit_code(), self.term_signal()) {
            (Some(code), _) => write!(f, "exited with {code}"),
            (_, Some(sig)) => write!(f, "killed by {}", signal_name(sig)),
            _ => write!(f, "wait status {:#x}", self.0),
        }
    }
}

/// Waits for a child (`pid`, or -1 for any) and returns its pid and status;
/// with `WNOHANG`, pid 0 means none has changed state yet.
pub fn wait4(pid: i32, options: u32) -> Result<(i32, WaitStatus), Errno> {
    let mut status = 0i32;
    // SAFETY: the kernel writes one int into status; rusage is NULL.
    let pid = unsafe { syscall!(__NR_wait4, pid, &mut status as *mut i32, options, 0) }?;
    Ok((pid as i32, WaitStatus(status)))
}

/// Waits for child `pid` to end and returns its status, retrying EINTR.
pub fn wait_for(pid: i32) -> Result<WaitStatus, Errno> {
    loop {
        match wait4(pid, 0) {
            Err(Errno::EINTR) => continue,
            result => return result.map(|(_, status)| status),
        }
    }
}

pub fn getpid() -> i32 {
    // SAFETY: no memory is passed.
    unsafe { syscall::raw(__NR_getpid, [0; 6]) as i32 }
}

pub fn getppid() -> i32 {
    // SAFETY: no memory is passed.
    unsafe { syscall::raw(__NR_getppid, [0; 6]) as i32 }
}

pub fn gettid() -> i32 {
    // SAFETY: no memory is passed.
    unsafe { syscall::raw(__NR_gettid, [0; 6]) as i32 }
}

/// Sets the word the kernel clears (and futex-wakes) when this thread
/// exits; returns the caller's tid.
///
/// # Safety
/// `tidptr` must stay valid, and free for the kernel to write, until the
/// thread exits or sets another.
pub unsafe fn set_tid_address(tidptr: *mut i32) -> i32 {
    syscall::raw(__NR_set_tid_address, [tidptr as usize, 0, 0, 0, 0, 0]) as i32
}

/// `struct robust_list_head`: the list of robust futexes a thread holds.
#[repr(C)]
pub struct RobustListHead {
    pub list: usize,
    pub futex_offset: isize,
    pub list_op_pending: usize,
}

/// # Safety
/// `head` must stay valid until the thread exits: the kernel walks the list
/// then.
pub unsafe fn set_robust_list(head: *mut RobustListHead, len: usize) -> Result<(), Errno> {
    syscall!(__NR_set_robust_list, head, len).map(drop)
}

#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Timeval {
    pub tv_sec: i64,
    pub tv_usec: i64,
}

/// `struct rusage`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Rusage {
    pub ru_utime: Timeval,
    pub ru_stime: Timeval,
    pub ru_maxrss: i64,
    pub ru_ixrss: i64,
    pub ru_idrss: i64,
    pub ru_isrss: i64,
    /// Page faults served without I/O.
    pub ru_minflt: i64,
    pub ru_majflt: i64,
    pub ru_nswap: i64,
    pub ru_inblock: i64,
    pub ru_oublock: i64,
    pub ru_msgsnd: i64,
    pub ru_msgrcv: i64,
    pub ru_nsignals: i64,
    pub ru_nvcsw: i64,
    pub ru_nivcsw: i64,
}

pub fn getrusage(who: i32) -> Result<Rusage, Errno> {
    let mut usage = Rusage::default();
    // SAFETY: the kernel writes one Rusage into usage.
    unsafe { syscall!(__NR_getrusage, who, &mut usage as *mut Rusage) }?;
    Ok(usage)
}

#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Rlimit {
    pub cur: u64,
    pub max: u64,
}

/// Reads (and with `new`, sets) a resource limit of process `pid` (0: this
/// one); returns the old limit.
pub fn prlimit64(pid: i32, resource: u32, new: Option<&Rlimit>) -> Result<Rlimit, Errno> {
    let mut old = Rlimit::default();
    let new = new.map_or(core::ptr::null(), |r| r as *const Rlimit);
    // SAFETY: the kernel reads one Rlimit from new (or none) and writes one
    // into old.
    unsafe { syscall!(__NR_prlimit64, pid, resource, new, &mut old as *mut Rlimit) }?;
    Ok(old)
}
