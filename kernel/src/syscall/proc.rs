//! Process and thread system calls (Linux: `kernel/fork.c`, `kernel/exit.c`,
//! `kernel/sys.c`, `kernel/futex/syscalls.c`).

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::SysResult;
use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{copy_to_user, read_user, strncpy_from_user, write_user};
use crate::task::signal_abi::exited;
use crate::task::{current, current_process, exec, exit, fork, futex};

pub fn exit(code: i32) -> SysResult {
    exit::do_exit(exited(code) as u32)
}

pub fn exit_group(code: i32) -> SysResult {
    exit::do_group_exit(exited(code) as u32)
}

pub fn getpid() -> SysResult {
    Ok(current_process().ok_or(Errno::ESRCH)?.pid as i64)
}

pub fn getppid() -> SysResult {
    Ok(current_process().and_then(|p| p.parent()).map_or(0, |p| p.pid) as i64)
}

pub fn gettid() -> SysResult {
    Ok(current().user.as_ref().ok_or(Errno::ESRCH)?.tid as i64)
}

pub fn set_tid_address(uaddr: usize) -> SysResult {
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::ESRCH)?;
    u.clear_child_tid.store(uaddr, Ordering::Relaxed);
    Ok(u.tid as i64)
}

pub fn sched_yield() -> SysResult {
    crate::task::yield_now();
    Ok(0)
}

pub fn clone(tf: &TrapFrame, flags: u64, newsp: u64, parent_tid: usize, tls: u64, child_tid: usize) -> SysResult {
    fork::clone(tf, flags, newsp, parent_tid, tls, child_tid).map(|tid| tid as i64)
}

/// A NULL-terminated array of user string pointers (argv, envp).
fn string_array(uaddr: usize) -> KResult<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    if uaddr == 0 {
        return Ok(out);
    }
    let mut total = 0;
    for i in 0.. {
        let ptr: u64 = read_user(uaddr + i * 8)?;
        if ptr == 0 {
            break;
        }
        let s = strncpy_from_user(ptr as usize, crate::task::stack::MAX_ARG_STRLEN).map_err(|e| {
            if e == Errno::ENAMETOOLONG { Errno::E2BIG } else { e }
        })?;
        total += s.len() + 1;
        if total > 2 << 20 {
            return Err(Errno::E2BIG);
        }
        out.push(s.into_bytes());
    }
    Ok(out)
}

pub fn execve(tf: &mut TrapFrame, upath: usize, uargv: usize, uenvp: usize) -> SysResult {
    let path = strncpy_from_user(upath, crate::fs::vfs::PATH_MAX - 1)?;
    let argv = string_array(uargv)?;
    let envp = string_array(uenvp)?;
    exec::execve(tf, &path, &argv, &envp).map(|_| 0)
}

pub fn wait4(pid: i32, ustatus: usize, options: u32, urusage: usize) -> SysResult {
    const WUNTRACED: u32 = 2;
    const WCONTINUED: u32 = 8;
    if options & !(exit::WNOHANG | WUNTRACED | WCONTINUED) != 0 || pid == 0 || pid < -1 {
        return Err(Errno::EINVAL);
    }
    let (child, status) = exit::wait4(pid, options)?;
    if child != 0 && ustatus != 0 {
        write_user(ustatus, &(status as i32))?;
    }
    if urusage != 0 {
        copy_to_user(urusage, &[0u8; 144])?;
    }
    Ok(child as i64)
}

pub fn futex(uaddr: usize, op: u32, val: u32, utimeout: usize) -> SysResult {
    const FUTEX_WAIT: u32 = 0;
    const FUTEX_WAKE: u32 = 1;
    const FUTEX_PRIVATE_FLAG: u32 = 128;
    const FUTEX_CLOCK_REALTIME: u32 = 256;
    match op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME) {
        FUTEX_WAIT => {
            let deadline = if utimeout == 0 {
                None
            } else {
                let ts: [i64; 2] = read_user(utimeout)?;
                Some(super::time::deadline_after(ts)?)
            };
            futex::wait(uaddr, val, deadline).map(|_| 0)
        }
        FUTEX_WAKE => Ok(futex::wake(uaddr, val as usize) as i64),
        _ => Err(Errno::ENOSYS),
    }
}

pub fn uname(ubuf: usize) -> SysResult {
    // struct utsname: six 65-byte fields.
    let mut buf = [0u8; 6 * 65];
    let fields: [&[u8]; 6] = [b"Linux", b"faultline", b"6.12.0-faultline", b"#1 SMP", b"aarch64", b"(none)"];
    for (i, f) in fields.iter().enumerate() {
        buf[i * 65..i * 65 + f.len()].copy_from_slice(f);
    }
    copy_to_user(ubuf, &buf).map(|_| 0)
}

pub fn prlimit64(nr: usize, a: [u64; 6]) -> SysResult {
    const RLIMIT_STACK: u64 = 3;
    const RLIMIT_NOFILE: u64 = 7;
    const RLIM_INFINITY: u64 = u64::MAX;
    // getrlimit(resource, old) or prlimit64(pid, resource, new, old).
    let (resource, old) = if nr == 163 { (a[0], a[1] as usize) } else { (a[1], a[3] as usize) };
    let limit = match resource {
        RLIMIT_STACK => [exec::STACK_SIZE as u64, RLIM_INFINITY],
        RLIMIT_NOFILE => [crate::fs::vfs::NR_OPEN as u64; 2],
        0..=15 => [RLIM_INFINITY; 2],
        _ => return Err(Errno::EINVAL),
    };
    if old != 0 {
        write_user(old, &limit)?;
    }
    Ok(0)
}

pub fn getrusage(who: i32, uaddr: usize) -> SysResult {
    const RUSAGE_SELF: i32 = 0;
    const RUSAGE_CHILDREN: i32 = -1;
    const RUSAGE_THREAD: i32 = 1;
    if !matches!(who, RUSAGE_SELF | RUSAGE_CHILDREN | RUSAGE_THREAD) {
        return Err(Errno::EINVAL);
    }
    // struct rusage: two timevals, then 14 longs; ru_minflt is the 3rd long.
    let mut words = [0i64; 18];
    if who != RUSAGE_CHILDREN {
        words[6] = current_process().map_or(0, |p| p.minflt.load(Ordering::Relaxed)) as i64;
    }
    write_user(uaddr, &words).map(|_| 0)
}

pub fn getrandom(ubuf: usize, len: usize, flags: u32) -> SysResult {
    const GRND_NONBLOCK: u32 = 1;
    const GRND_RANDOM: u32 = 2;
    const GRND_INSECURE: u32 = 4;
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0 {
        return Err(Errno::EINVAL);
    }
    let len = len.min(1 << 20);
    let mut buf = alloc::vec![0u8; len];
    crate::random::fill(&mut buf);
    copy_to_user(ubuf, &buf).map(|_| len as i64)
}
