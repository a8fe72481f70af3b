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
    Ok(current_process()
        .and_then(|p| p.parent())
        .map_or(0, |p| p.pid) as i64)
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

/// The size of `struct robust_list_head`, the only one Linux accepts.
const ROBUST_LIST_HEAD_SIZE: usize = 24;

/// set_robust_list(2): where this thread's robust futexes are listed
/// (Linux: `kernel/futex/syscalls.c`).
pub fn set_robust_list(head: usize, len: usize) -> SysResult {
    if len != ROBUST_LIST_HEAD_SIZE {
        return Err(Errno::EINVAL);
    }
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::ESRCH)?;
    u.robust_list.store(head, Ordering::Relaxed);
    Ok(0)
}

/// get_robust_list(2): the list head of thread `tid` (0: the caller) and
/// its size. Every process runs as root, which Linux lets read any.
pub fn get_robust_list(tid: i32, uhead: usize, ulen: usize) -> SysResult {
    let thread = match tid {
        0 => current(),
        t if t > 0 => crate::task::process::find_thread(t as u32).ok_or(Errno::ESRCH)?,
        _ => return Err(Errno::ESRCH),
    };
    let u = thread.user.as_ref().ok_or(Errno::ESRCH)?;
    write_user(uhead, &(u.robust_list.load(Ordering::Relaxed) as u64))?;
    write_user(ulen, &(ROBUST_LIST_HEAD_SIZE as u64))?;
    Ok(0)
}

/// getresuid(2) and getresgid(2): real, effective and saved ids, all root.
pub fn getresid(ureal: usize, ueffective: usize, usaved: usize) -> SysResult {
    for u in [ureal, ueffective, usaved] {
        write_user(u, &0u32)?;
    }
    Ok(0)
}

/// getgroups(2): root with no supplementary groups; EINVAL for a negative
/// size.
pub fn getgroups(size: i32, _ulist: usize) -> SysResult {
    if size < 0 {
        return Err(Errno::EINVAL);
    }
    Ok(0)
}

/// sysinfo(2): uptime, memory in bytes (`mem_unit` 1) and the process
/// count; no swap, load averages 0 (Linux: `do_sysinfo`).
pub fn sysinfo(uinfo: usize) -> SysResult {
    use crate::mm::{addr::PAGE_SIZE, frame, vmstat};
    let page = PAGE_SIZE as u64;
    // struct sysinfo on arm64: 112 bytes.
    let mut info = [0u64; 14];
    info[0] = super::time::uptime_secs();
    info[4] = frame::total_pages() as u64 * page;
    info[5] = frame::free_stats().free_pages as u64 * page;
    info[6] = vmstat::NR_SHMEM.get() * page;
    // procs (u16) at byte 80, mem_unit (u32) at byte 104.
    info[10] = crate::task::process::nr_processes().min(u16::MAX as usize) as u64;
    info[13] = 1;
    write_user(uinfo, &info).map(|_| 0)
}

/// sched_getaffinity(2): every online CPU. Returns the bytes of mask
/// written, a whole number of longs covering the CPUs; EINVAL for a
/// buffer smaller than that or not a multiple of a long (Linux:
/// `sched_getaffinity`).
pub fn sched_getaffinity(pid: i32, len: usize, umask: usize) -> SysResult {
    let cpus = crate::task::nr_cpus_online();
    let size = cpus.div_ceil(64) * 8;
    if len < size || !len.is_multiple_of(8) {
        return Err(Errno::EINVAL);
    }
    if pid < 0 || (pid > 0 && crate::task::process::find_thread(pid as u32).is_none()) {
        return Err(Errno::ESRCH);
    }
    let mut mask = alloc::vec![0u8; size];
    for cpu in 0..cpus {
        mask[cpu / 8] |= 1 << (cpu % 8);
    }
    crate::mm::uaccess::copy_to_user(umask, &mask)?;
    Ok(size as i64)
}

pub fn sched_yield() -> SysResult {
    crate::task::yield_now();
    Ok(0)
}

pub fn clone(
    tf: &TrapFrame,
    flags: u64,
    newsp: u64,
    parent_tid: usize,
    tls: u64,
    child_tid: usize,
) -> SysResult {
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
        let s =
            strncpy_from_user(ptr as usize, crate::task::stack::MAX_ARG_STRLEN).map_err(|e| {
                if e == Errno::ENAMETOOLONG {
                    Errno::E2BIG
                } else {
                    e
                }
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

/// futex(2) (Linux: `kernel/futex/syscalls.c` `do_futex`). The fourth
/// argument is a timeout for the waits and a count (`val2`) for the
/// requeues and WAKE_OP. WAIT's timeout is relative, on CLOCK_MONOTONIC;
/// WAIT_BITSET's absolute, on CLOCK_REALTIME with FUTEX_CLOCK_REALTIME,
/// which any other operation refuses with ENOSYS. PI futexes: ENOSYS
/// (glibc's default mutexes never use them).
pub fn futex(
    uaddr: usize,
    op: u32,
    val: u32,
    utimeout: usize,
    uaddr2: usize,
    val3: u32,
) -> SysResult {
    const FUTEX_WAIT: u32 = 0;
    const FUTEX_WAKE: u32 = 1;
    const FUTEX_REQUEUE: u32 = 3;
    const FUTEX_CMP_REQUEUE: u32 = 4;
    const FUTEX_WAKE_OP: u32 = 5;
    const FUTEX_WAIT_BITSET: u32 = 9;
    const FUTEX_WAKE_BITSET: u32 = 10;
    const FUTEX_PRIVATE_FLAG: u32 = 128;
    const FUTEX_CLOCK_REALTIME: u32 = 256;
    let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    if op & FUTEX_CLOCK_REALTIME != 0 && !matches!(cmd, FUTEX_WAIT | FUTEX_WAIT_BITSET) {
        return Err(Errno::ENOSYS);
    }
    let timeout = |absolute: bool| -> KResult<Option<u64>> {
        if utimeout == 0 {
            return Ok(None);
        }
        let ts: [i64; 2] = read_user(utimeout)?;
        match absolute {
            true => super::time::deadline_at(ts).map(Some),
            false => super::time::deadline_after(ts).map(Some),
        }
    };
    // Linux takes the counts as ints. A wake wakes one waiter before it
    // compares, so a count of 0 or below (u32::MAX is -1) wakes one; a
    // requeue refuses negative counts with EINVAL.
    let at_least_one = |n: u32| (n as i32).max(1) as usize;
    let count = |n: u32| usize::try_from(n as i32).map_err(|_| Errno::EINVAL);
    let val2 = utimeout as u32;
    match cmd {
        FUTEX_WAIT => futex::wait(uaddr, val, timeout(false)?, futex::MATCH_ANY).map(|_| 0),
        FUTEX_WAIT_BITSET => futex::wait(uaddr, val, timeout(true)?, val3).map(|_| 0),
        FUTEX_WAKE => Ok(futex::wake(uaddr, at_least_one(val), futex::MATCH_ANY)? as i64),
        FUTEX_WAKE_BITSET => Ok(futex::wake(uaddr, at_least_one(val), val3)? as i64),
        FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
            let cmp = (cmd == FUTEX_CMP_REQUEUE).then_some(val3);
            Ok(futex::requeue(uaddr, uaddr2, count(val)?, count(val2)?, cmp)? as i64)
        }
        FUTEX_WAKE_OP => {
            let (n, n2) = (at_least_one(val), at_least_one(val2));
            Ok(futex::wake_op(uaddr, uaddr2, n, n2, val3)? as i64)
        }
        _ => Err(Errno::ENOSYS),
    }
}

pub fn uname(ubuf: usize) -> SysResult {
    // struct utsname: six 65-byte fields.
    let mut buf = [0u8; 6 * 65];
    // Programs check for "Linux" and a kernel version before they use a
    // call (glibc, busybox, Python): say Linux and the 6.12 ABI we follow,
    // and name faultline in the release and version.
    let fields: [&[u8]; 6] = [
        b"Linux",
        b"faultline",
        b"6.12.0-faultline",
        b"#1 SMP faultline 0.1.0",
        b"aarch64",
        b"(none)",
    ];
    for (i, f) in fields.iter().enumerate() {
        buf[i * 65..i * 65 + f.len()].copy_from_slice(f);
    }
    copy_to_user(ubuf, &buf).map(|_| 0)
}

/// getrlimit(resource, old) or prlimit64(pid, resource, new, old): the
/// limits are kept per process; only RLIMIT_NOFILE is enforced.
pub fn prlimit64(nr: usize, a: [u64; 6]) -> SysResult {
    let (pid, resource, new, old) = if nr == 163 {
        (0, a[0], 0, a[1] as usize)
    } else {
        (a[0] as i32, a[1], a[2] as usize, a[3] as usize)
    };
    let p = if pid == 0 {
        current_process().ok_or(Errno::ESRCH)?
    } else {
        crate::task::process::find_process(pid as u32).ok_or(Errno::ESRCH)?
    };
    let r = resource as usize;
    if r >= crate::task::process::RLIM_NLIMITS {
        return Err(Errno::EINVAL);
    }
    let current = p.rlimits.lock()[r];
    if new != 0 {
        let limit: [u64; 2] = read_user(new)?;
        if limit[0] > limit[1] {
            return Err(Errno::EINVAL);
        }
        p.rlimits.lock()[r] = limit;
    }
    if old != 0 {
        write_user(old, &current)?;
    }
    Ok(0)
}

pub fn setrlimit(resource: u64, unew: usize) -> SysResult {
    prlimit64(261, [0, resource, unew as u64, 0, 0, 0])
}

/// reboot(2): with Linux's magic numbers, power off (there is nothing to
/// restart into); anything else is EINVAL.
pub fn reboot(magic1: u32, magic2: u32, cmd: u32) -> SysResult {
    const MAGIC1: u32 = 0xfee1_dead;
    const MAGIC2: [u32; 4] = [672_274_793, 85_072_278, 369_367_448, 537_993_216];
    const CMD_POWER_OFF: u32 = 0x4321_fedc;
    const CMD_HALT: u32 = 0xcdef_0123;
    const CMD_RESTART: u32 = 0x0123_4567;
    const CMD_CAD_ON: u32 = 0x89ab_cdef;
    const CMD_CAD_OFF: u32 = 0;
    if magic1 != MAGIC1 || !MAGIC2.contains(&magic2) {
        return Err(Errno::EINVAL);
    }
    match cmd {
        CMD_CAD_ON | CMD_CAD_OFF => Ok(0),
        CMD_POWER_OFF | CMD_HALT | CMD_RESTART => {
            println!("faultline: reboot({:#x}): powering off", cmd);
            crate::arch::psci::system_off()
        }
        _ => Err(Errno::EINVAL),
    }
}

pub fn getrusage(who: i32, uaddr: usize) -> SysResult {
    const RUSAGE_SELF: i32 = 0;
    const RUSAGE_CHILDREN: i32 = -1;
    const RUSAGE_THREAD: i32 = 1;
    if !matches!(who, RUSAGE_SELF | RUSAGE_CHILDREN | RUSAGE_THREAD) {
        return Err(Errno::EINVAL);
    }
    // struct rusage: two timevals (4 words), then 14 longs from ru_maxrss;
    // ru_minflt is the fifth of them.
    let mut words = [0i64; 18];
    if who != RUSAGE_CHILDREN {
        words[8] = current_process().map_or(0, |p| p.minflt.load(Ordering::Relaxed)) as i64;
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
