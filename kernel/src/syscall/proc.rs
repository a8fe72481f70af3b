//! Process and thread system calls (Linux: `kernel/fork.c`, `kernel/exit.c`,
//! `kernel/sys.c`, `kernel/sched/syscalls.c`).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::{SysResult, MAX_RW_COUNT};
use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use crate::fs::pidfd;
use crate::mm::addr::PAGE_SIZE;
use crate::mm::uaccess::{
    copy_from_user, copy_to_user, read_user, strncpy_bytes_from_user, strncpy_from_user, write_user,
};
use crate::task::cred::{Caps, Cred, Ids, NGROUPS_MAX};
use crate::task::process::{self, ptrace_may_access, Process};
use crate::task::sched_policy::SchedPolicy;
use crate::task::signal_abi::exited;
use crate::task::{current, current_process, exec, exit, fork};
use uapi::misc::{GRND_INSECURE, GRND_NONBLOCK, GRND_RANDOM};
use uapi::prctl::{
    PR_GET_CHILD_SUBREAPER, PR_GET_DUMPABLE, PR_GET_MDWE, PR_GET_NAME, PR_GET_NO_NEW_PRIVS,
    PR_GET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, PR_SET_MDWE, PR_SET_NAME,
    PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG,
};
use uapi::resource::{
    PRIO_PGRP, PRIO_PROCESS, PRIO_USER, RUSAGE_CHILDREN, RUSAGE_SELF, RUSAGE_THREAD,
};
use uapi::sched::CLONE_NEWNS;
use uapi::unistd::{
    __NR_geteuid, __NR_getgid, __NR_getresuid, __NR_getrlimit, __NR_getuid, __NR_setfsuid,
    __NR_setresuid, __NR_setreuid, __NR_setuid,
};
use uapi::wait::{P_ALL, P_PGID, P_PID, P_PIDFD};

/// exit(2): ends the calling thread; the last thread out ends the process,
/// with exit status `code`'s low byte.
pub fn exit(code: i32) -> SysResult {
    exit::do_exit(exited(code) as u32)
}

/// exit_group(2): ends every thread of the process, with exit status
/// `code`'s low byte (Linux: `do_group_exit`).
pub fn exit_group(code: i32) -> SysResult {
    exit::do_group_exit(exited(code) as u32)
}

/// getpid(2): the caller's process id (Linux: its `tgid`).
pub fn getpid() -> SysResult {
    Ok(current_process().ok_or(Errno::ESRCH)?.pid as i64)
}

/// getppid(2): the parent's process id; 0 for init, which has none.
pub fn getppid() -> SysResult {
    let current = crate::task::current_ref();
    Ok(current.user.as_ref().map_or(0, |u| u.process.ppid()) as i64)
}

/// gettid(2): the caller's thread id.
pub fn gettid() -> SysResult {
    Ok(current().user.as_ref().ok_or(Errno::ESRCH)?.tid as i64)
}

/// set_tid_address(2): `uaddr` becomes the thread's `clear_child_tid`,
/// zeroed and futex-woken when it exits; returns its TID.
pub fn set_tid_address(uaddr: usize) -> SysResult {
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::ESRCH)?;
    u.clear_child_tid.store(uaddr, Ordering::Relaxed);
    Ok(u.tid as i64)
}

/// The caller's credentials.
fn my_cred() -> KResult<Cred> {
    Ok(current_process().ok_or(Errno::ESRCH)?.cred.lock().clone())
}

/// getuid(2), geteuid(2), getgid(2), getegid(2): the real
/// or effective user or group id.
#[allow(non_upper_case_globals)] // Linux's names
pub fn getid(nr: usize) -> SysResult {
    let c = my_cred()?;
    let id = match nr {
        __NR_getuid => c.uid,
        __NR_geteuid => c.euid,
        __NR_getgid => c.gid,
        _ => c.egid,
    };
    Ok(id as i64)
}

/// getresuid(2) (148) or getresgid(2) (150): real, effective and saved
/// ids.
pub fn getresid(nr: usize, ureal: usize, ueffective: usize, usaved: usize) -> SysResult {
    let c = my_cred()?;
    let ids = if nr == __NR_getresuid {
        [c.uid, c.euid, c.suid]
    } else {
        [c.gid, c.egid, c.sgid]
    };
    for (u, id) in [ureal, ueffective, usaved].into_iter().zip(ids) {
        write_user(u, &id)?;
    }
    Ok(0)
}

/// An id argument of the set*id calls: -1 leaves the id as it is.
fn id_arg(id: u32) -> Option<u32> {
    (id != u32::MAX).then_some(id)
}

/// Replaces the caller's credentials by what `change` makes of them;
/// EPERM if it refuses (the set*id calls, Linux: `commit_creds`). A
/// process that changes whom it acts as may no longer be dumped
/// (`fs.suid_dumpable` 0), so its /proc files become root's.
fn set_cred(change: impl FnOnce(&Cred) -> Option<Cred>) -> SysResult {
    let p = current_process().ok_or(Errno::ESRCH)?;
    let mut cred = p.cred.lock();
    let new = change(&cred).ok_or(Errno::EPERM)?;
    if cred.changes_dumpability(&new) {
        p.dumpable.store(0, Ordering::Release);
    }
    *cred = new;
    Ok(0)
}

/// setresuid(2) (147), setresgid(2) (149): see [`Cred::setresuid`].
#[allow(non_upper_case_globals)] // Linux's names
pub fn setresid(nr: usize, r: u32, e: u32, s: u32) -> SysResult {
    let ids: Ids = (id_arg(r), id_arg(e), id_arg(s));
    match nr {
        __NR_setresuid => set_cred(|c| c.setresuid(ids)),
        _ => set_cred(|c| c.setresgid(ids)),
    }
}

/// setreuid(2) (145), setregid(2) (143): see [`Cred::setreuid`].
#[allow(non_upper_case_globals)] // Linux's names
pub fn setreid(nr: usize, r: u32, e: u32) -> SysResult {
    match nr {
        __NR_setreuid => set_cred(|c| c.setreuid(id_arg(r), id_arg(e))),
        _ => set_cred(|c| c.setregid(id_arg(r), id_arg(e))),
    }
}

/// setuid(2) (146), setgid(2) (144): see [`Cred::setuid`]; EINVAL for
/// -1, which names no id.
#[allow(non_upper_case_globals)] // Linux's names
pub fn setid(nr: usize, id: u32) -> SysResult {
    let id = id_arg(id).ok_or(Errno::EINVAL)?;
    match nr {
        __NR_setuid => set_cred(|c| c.setuid(id)),
        _ => set_cred(|c| c.setgid(id)),
    }
}

/// setfsuid(2) (151), setfsgid(2) (152): see [`Cred::setfsuid`]; returns
/// the old id, changed or not (-1 changes nothing).
pub fn setfsid(nr: usize, id: u32) -> SysResult {
    let old = my_cred()?;
    if let Some(id) = id_arg(id) {
        set_cred(|c| {
            Some(if nr == __NR_setfsuid {
                c.setfsuid(id)
            } else {
                c.setfsgid(id)
            })
        })?;
    }
    Ok(if nr == __NR_setfsuid {
        old.fsuid
    } else {
        old.fsgid
    } as i64)
}

/// getgroups(2) (Linux: `groups_to_user`): the supplementary groups
/// into `ulist`, or with a `size` of 0 just their number; EINVAL for a
/// `size` too small for them or negative.
pub fn getgroups(size: i32, ulist: usize) -> SysResult {
    let groups = my_cred()?.groups;
    let size = usize::try_from(size).map_err(|_| Errno::EINVAL)?;
    if size != 0 {
        if size < groups.len() {
            return Err(Errno::EINVAL);
        }
        let bytes: Vec<u8> = groups.iter().flat_map(|g| g.to_ne_bytes()).collect();
        copy_to_user(ulist, &bytes)?;
    }
    Ok(groups.len() as i64)
}

/// setgroups(2) (Linux: `__sys_setgroups`): EPERM without CAP_SETGID,
/// EINVAL for more than NGROUPS_MAX (a negative `size` is one), ENOMEM if
/// the kernel cannot hold the list.
pub fn setgroups(size: i32, ulist: usize) -> SysResult {
    if !crate::task::capable(crate::task::cred::CAP_SETGID) {
        return Err(Errno::EPERM);
    }
    let n = usize::try_from(size)
        .ok()
        .filter(|&n| n <= NGROUPS_MAX)
        .ok_or(Errno::EINVAL)?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n * 4).map_err(|_| Errno::ENOMEM)?;
    bytes.resize(n * 4, 0);
    copy_from_user(&mut bytes, ulist)?;
    let list: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    set_cred(|c| c.setgroups(&list))
}

/// The `_LINUX_CAPABILITY_VERSION_*` of a capget/capset header.
const CAP_VERSION_1: u32 = 0x1998_0330;
/// `_LINUX_CAPABILITY_VERSION_2`: two data structs, 64-bit sets; deprecated
/// in favour of version 3, which reads the same.
const CAP_VERSION_2: u32 = 0x2007_1026;
/// `_LINUX_CAPABILITY_VERSION_3`: two data structs, 64-bit sets; the
/// preferred version.
const CAP_VERSION_3: u32 = 0x2008_0522;

/// How many 32-bit `__user_cap_data_struct`s a header's version carries
/// (Linux: `cap_validate_magic`); an unknown version is answered with the
/// preferred one written back, and EINVAL.
fn cap_validate_magic(header: usize) -> KResult<usize> {
    match read_user::<u32>(header)? {
        CAP_VERSION_1 => Ok(1),
        CAP_VERSION_2 | CAP_VERSION_3 => Ok(2),
        _ => {
            write_user(header, &CAP_VERSION_3)?;
            Err(Errno::EINVAL)
        }
    }
}

/// capget(2) (Linux: `kernel/capability.c`): the capability sets of the
/// caller, or of the process `pid` names (each thread of a process holds
/// the same sets here). A NULL `dataptr` with an unknown version is how
/// libcap asks for the preferred version: 0.
pub fn capget(header: usize, dataptr: usize) -> SysResult {
    let structs = match cap_validate_magic(header) {
        Err(Errno::EINVAL) if dataptr == 0 => return Ok(0),
        r => r?,
    };
    if dataptr == 0 {
        return Ok(0);
    }
    let pid: i32 = read_user(header + 4)?;
    if pid < 0 {
        return Err(Errno::EINVAL);
    }
    let p = if pid == 0 {
        current_process().ok_or(Errno::ESRCH)?
    } else {
        let t = process::find_thread(pid as u32).ok_or(Errno::ESRCH)?;
        t.user.as_ref().ok_or(Errno::ESRCH)?.process.clone()
    };
    let c = p.cred.lock().caps;
    // struct __user_cap_data_struct { effective, permitted, inheritable }:
    // the low 32 capabilities, then the high ones.
    for i in 0..structs {
        let shift = 32 * i;
        let data = [c.effective, c.permitted, c.inheritable].map(|set| (set >> shift) as u32);
        write_user(dataptr + 12 * i, &data)?;
    }
    Ok(0)
}

/// capset(2): the caller's new sets, within what `Caps::set` allows
/// (EPERM otherwise, and for another process). faultline records them and
/// capget reports them, but checks no permission against them.
pub fn capset(header: usize, data: usize) -> SysResult {
    let structs = cap_validate_magic(header)?;
    let pid: i32 = read_user(header + 4)?;
    let p = current_process().ok_or(Errno::ESRCH)?;
    if pid != 0 && pid as u32 != p.pid {
        return Err(Errno::EPERM);
    }
    let mut sets = [0u64; 3];
    for i in 0..structs {
        let part: [u32; 3] = read_user(data + 12 * i)?;
        for (set, word) in sets.iter_mut().zip(part) {
            *set |= (word as u64) << (32 * i);
        }
    }
    let [effective, permitted, inheritable] = sets;
    let new = Caps {
        effective,
        permitted,
        inheritable,
    };
    let mut cred = p.cred.lock();
    cred.caps = cred.caps.set(new).ok_or(Errno::EPERM)?;
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

/// sched_yield(2): lets the other runnable threads of this CPU go first.
pub fn sched_yield() -> SysResult {
    crate::task::yield_now();
    Ok(0)
}

/// clone(2): a new thread or process as `flags` say (see [`fork::clone`]);
/// returns the child's TID, while the child itself sees 0.
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

/// The namespace flags of clone and unshare (`CLONE_NEWTIME`, `NEWNS`,
/// `NEWCGROUP`, `NEWUTS`, `NEWIPC`, `NEWUSER`, `NEWPID`, `NEWNET`).
const CLONE_NEW_ANY: u64 = 0x80
    | 0x2_0000
    | 0x0200_0000
    | 0x0400_0000
    | 0x0800_0000
    | 0x1000_0000
    | 0x2000_0000
    | 0x4000_0000;

/// unshare(2): stop sharing what `flags` names with other processes and
/// threads (Linux: `ksys_unshare`). A process shares its descriptor table,
/// working directory and handlers with no other process here, so for a
/// process of one thread CLONE_FILES, CLONE_FS, CLONE_SYSVSEM,
/// CLONE_SIGHAND, CLONE_VM and CLONE_THREAD are done already, as they are
/// on Linux. Where we simplify: a process's threads always share all of
/// these, so with more than one thread they are EINVAL (Linux gives the
/// thread its own copies of files and fs); and faultline has no
/// namespaces, so every CLONE_NEW* is EINVAL, Linux's answer for a
/// namespace it was built without (`copy_namespaces`).
pub fn unshare(flags: u64) -> SysResult {
    let shareable = fork::CLONE_THREAD
        | fork::CLONE_FS
        | fork::CLONE_SIGHAND
        | fork::CLONE_VM
        | fork::CLONE_FILES
        | fork::CLONE_SYSVSEM;
    if flags & !(shareable | CLONE_NEW_ANY) != 0 || flags & CLONE_NEW_ANY != 0 {
        return Err(Errno::EINVAL);
    }
    let p = current_process().ok_or(Errno::EINVAL)?;
    if flags != 0 && p.live_threads().len() > 1 {
        return Err(Errno::EINVAL);
    }
    Ok(0)
}

/// What argv and envp may take of the new stack, strings and pointers
/// together (Linux: `bprm_stack_limits`, a quarter of the 8M stack limit).
const ARG_MAX: usize = 2 << 20;

/// How many pointers a NULL-terminated user array holds; E2BIG once their
/// room alone passes `ARG_MAX`, before any string is copied (Linux:
/// `count`, then `bprm_stack_limits`' check of argc + envc pointers).
fn count_strings(uaddr: usize, room: usize) -> KResult<usize> {
    if uaddr == 0 {
        return Ok(0);
    }
    let mut n = 0;
    while read_user::<u64>(uaddr + n * 8)? != 0 {
        n += 1;
        if n * core::mem::size_of::<u64>() >= room {
            return Err(Errno::E2BIG);
        }
    }
    Ok(n)
}

/// The `n` strings of a user array (argv, envp), E2BIG once they and
/// their pointers pass `room` (Linux: `copy_strings`).
fn string_array(uaddr: usize, n: usize, room: &mut usize) -> KResult<Vec<Vec<u8>>> {
    let mut out = crate::mm::heap::try_vec(n)?;
    for i in 0..n {
        let ptr: u64 = read_user(uaddr + i * 8)?;
        let s = strncpy_bytes_from_user(ptr as usize, crate::task::stack::MAX_ARG_STRLEN).map_err(
            |e| match e {
                Errno::ENAMETOOLONG => Errno::E2BIG,
                e => e,
            },
        )?;
        let cost = s.len() + 1 + core::mem::size_of::<u64>();
        *room = room.checked_sub(cost).ok_or(Errno::E2BIG)?;
        out.push(s);
    }
    Ok(out)
}

/// execve(2): [`execveat`] of a path from the working directory.
pub fn execve(tf: &mut TrapFrame, upath: usize, uargv: usize, uenvp: usize) -> SysResult {
    execveat(tf, exec::AT_FDCWD, upath, uargv, uenvp, 0)
}

/// execveat(2) (Linux: `do_execveat_common`): copies in the path, opens
/// the program it names from `dirfd` (see [`exec::open_execat`]), then
/// copies argv and envp (E2BIG past [`ARG_MAX`] together) and replaces the
/// caller's program; on success the new program starts with 0 in x0
/// instead of a return.
pub fn execveat(
    tf: &mut TrapFrame,
    dirfd: i32,
    upath: usize,
    uargv: usize,
    uenvp: usize,
    flags: u32,
) -> SysResult {
    let path = strncpy_from_user(upath, crate::fs::vfs::PATH_MAX - 1)?;
    let me = current_process().ok_or(Errno::ESRCH)?;
    let target = exec::open_execat(&me, dirfd, &path, flags)?;
    drop(me);
    let argc = count_strings(uargv, ARG_MAX)?;
    let envc = count_strings(uenvp, ARG_MAX - argc * core::mem::size_of::<u64>())?;
    let mut room = ARG_MAX;
    let argv = string_array(uargv, argc, &mut room)?;
    let envp = string_array(uenvp, envc, &mut room)?;
    exec::execve(tf, &target, &argv, &envp).map(|_| 0)
}

/// A `struct rusage` for `utime`/`stime` nanoseconds and `minflt` minor
/// faults: two timevals, then 14 longs from ru_maxrss, ru_minflt the fifth.
fn rusage_words(utime: u64, stime: u64, minflt: u64) -> [i64; 18] {
    let mut words = [0i64; 18];
    words[0] = (utime / 1_000_000_000) as i64;
    words[1] = (utime % 1_000_000_000 / 1000) as i64;
    words[2] = (stime / 1_000_000_000) as i64;
    words[3] = (stime % 1_000_000_000 / 1000) as i64;
    words[8] = minflt as i64;
    words
}

/// Which children a wait4 `pid` means: < -1 the group -pid, -1 any, 0 the
/// caller's group, > 0 that child.
fn wait_target(pid: i32) -> KResult<exit::WaitFor> {
    Ok(match pid {
        -1 => exit::WaitFor::Any,
        0 => exit::WaitFor::Pgid(
            current_process()
                .ok_or(Errno::ECHILD)?
                .pgid
                .load(Ordering::Acquire),
        ),
        p if p < 0 => exit::WaitFor::Pgid(p.unsigned_abs()),
        p => exit::WaitFor::Pid(p as u32),
    })
}

/// wait4(2): waitpid's options WNOHANG, WUNTRACED, WCONTINUED (Linux:
/// `kernel_wait4`).
pub fn wait4(pid: i32, ustatus: usize, options: u32, urusage: usize) -> SysResult {
    if options & !(exit::WNOHANG | exit::WSTOPPED | exit::WCONTINUED | exit::WTHREAD_FLAGS) != 0
        || pid == i32::MIN
    {
        return Err(Errno::EINVAL);
    }
    let Some(r) = exit::do_wait(wait_target(pid)?, options | exit::WEXITED)? else {
        return Ok(0);
    };
    if ustatus != 0 {
        write_user(ustatus, &(r.status as i32))?;
    }
    if urusage != 0 {
        write_user(urusage, &rusage_words(r.utime, r.stime, r.min_flt))?;
    }
    Ok(r.pid as i64)
}

/// waitid(2) (Linux: `kernel_waitid`): P_ALL, P_PID, P_PGID (id 0: the
/// caller's group), P_PIDFD (the process a pidfd names; a non-blocking
/// pidfd waits as WNOHANG, and says EAGAIN where that finds nothing); at
/// least one of WEXITED, WSTOPPED, WCONTINUED. The siginfo says who and
/// how; all zero when WNOHANG finds nothing.
pub fn waitid(idtype: i32, id: i32, uinfo: usize, options: u32, urusage: usize) -> SysResult {
    let allowed = exit::WNOHANG
        | exit::WNOWAIT
        | exit::WEXITED
        | exit::WSTOPPED
        | exit::WCONTINUED
        | exit::WTHREAD_FLAGS;
    if options & !allowed != 0 || options & (exit::WEXITED | exit::WSTOPPED | exit::WCONTINUED) == 0
    {
        return Err(Errno::EINVAL);
    }
    let mut options = options;
    let mut nonblock_pidfd = false;
    let which = match idtype {
        P_ALL => exit::WaitFor::Any,
        P_PID if id > 0 => exit::WaitFor::Pid(id as u32),
        P_PGID if id > 0 => exit::WaitFor::Pgid(id as u32),
        P_PGID if id == 0 => exit::WaitFor::Pgid(
            current_process()
                .ok_or(Errno::ECHILD)?
                .pgid
                .load(Ordering::Acquire),
        ),
        P_PIDFD if id >= 0 => {
            let file = super::fs::file(id)?;
            let pid = pidfd::of_file(&file)?.pid();
            if file.flags() & pidfd::PIDFD_NONBLOCK != 0 && options & exit::WNOHANG == 0 {
                options |= exit::WNOHANG;
                nonblock_pidfd = true;
            }
            exit::WaitFor::Pid(pid)
        }
        P_PIDFD => return Err(Errno::EINVAL),
        _ => return Err(Errno::EINVAL),
    };
    let r = exit::do_wait(which, options)?;
    if r.is_none() && nonblock_pidfd {
        return Err(Errno::EAGAIN);
    }
    if uinfo != 0 {
        let info = match r {
            Some(r) => {
                crate::task::signal_abi::SigInfo::child(r.code, r.pid as i32, 0, r.si_status, 0, 0)
                    .to_bytes()
            }
            None => [0u8; crate::task::signal_abi::SIGINFO_SIZE],
        };
        // waitid fills only si_signo, si_errno, si_code, si_pid, si_uid
        // and si_status (Linux: `kernel_waitid`'s puts): the first 28 bytes.
        copy_to_user(uinfo, &info[..28])?;
    }
    if urusage != 0 {
        let (u, st, mf) = r.map_or((0, 0, 0), |r| (r.utime, r.stime, r.min_flt));
        write_user(urusage, &rusage_words(u, st, mf))?;
    }
    Ok(0)
}

/// The process a pidfd argument names (Linux: `pidfd_get_pid`): EBADF
/// for a descriptor that is not open or not a pidfd.
fn pidfd_process(fd: i32) -> KResult<Arc<Process>> {
    let file = super::fs::file(fd)?;
    Ok(pidfd::of_file(&file)?.process().clone())
}

/// pidfd_open(2) (Linux: `kernel/pid.c`): a pidfd, close-on-exec, for
/// process `pid` (EINVAL for a thread that is not the first of its
/// process), or with PIDFD_THREAD for thread `pid`; ESRCH once nothing
/// has that id. PIDFD_NONBLOCK makes waitid on it not wait.
pub fn pidfd_open(pid: i32, flags: u32) -> SysResult {
    if flags & !(pidfd::PIDFD_NONBLOCK | pidfd::PIDFD_THREAD) != 0 || pid <= 0 {
        return Err(Errno::EINVAL);
    }
    let pid = pid as u32;
    let thread = process::find_thread(pid);
    let (p, tid) = match process::find_process(pid) {
        // A process whose first thread has exited still stands for it.
        Some(p) => (p, Some(pid)),
        None => match &thread {
            Some(t) if flags & pidfd::PIDFD_THREAD != 0 => {
                let u = t.user.as_ref().ok_or(Errno::ESRCH)?;
                (u.process.clone(), Some(pid))
            }
            Some(_) => return Err(Errno::EINVAL),
            None => return Err(Errno::ESRCH),
        },
    };
    let tid = tid.filter(|_| flags & pidfd::PIDFD_THREAD != 0);
    let file = pidfd::new_file(p, tid, flags)?;
    super::fs::install(file, true)
}

/// pidfd_getfd(2) (Linux: `kernel/pid.c`): a copy, close-on-exec, of the
/// file that the process a pidfd names has open as `fd`: EPERM if the
/// caller may not look into it, EBADF if it has no such descriptor, ESRCH
/// once it has exited. `flags` must be 0.
pub fn pidfd_getfd(pidfd: i32, fd: i32, flags: u32) -> SysResult {
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    let target = pidfd_process(pidfd)?;
    if process::find_process(target.pid).is_none() {
        return Err(Errno::ESRCH);
    }
    if !ptrace_may_access(&target)? {
        return Err(Errno::EPERM);
    }
    let file = match usize::try_from(fd).map(|fd| target.files.lock().get(fd)) {
        Ok(Ok(file)) => file,
        // Its files are gone with it (Linux: PF_EXITING turns EBADF into
        // ESRCH).
        _ if target.is_exiting() => return Err(Errno::ESRCH),
        _ => return Err(Errno::EBADF),
    };
    super::fs::install(file, true)
}

/// kcmp(2) (Linux: `kernel/kcmp.c`): do threads `pid1` and `pid2` share
/// the resource `kind` names (`idx1`, `idx2`: descriptors for KCMP_FILE)?
/// 0 if so, else 1 or 2 as an order of the two objects that says nothing
/// of their addresses. KCMP_SYSVSEM is EOPNOTSUPP (no System V semaphores here),
/// as is KCMP_EPOLL_TFD (a simplification).
pub fn kcmp(pid1: i32, pid2: i32, kind: i32, idx1: u64, idx2: u64) -> SysResult {
    const KCMP_FILE: i32 = 0;
    const KCMP_VM: i32 = 1;
    const KCMP_FILES: i32 = 2;
    const KCMP_FS: i32 = 3;
    const KCMP_SIGHAND: i32 = 4;
    const KCMP_IO: i32 = 5;
    const KCMP_SYSVSEM: i32 = 6;
    const KCMP_EPOLL_TFD: i32 = 7;
    let process_of_tid = |tid: i32| -> KResult<Arc<Process>> {
        let t = u32::try_from(tid)
            .ok()
            .and_then(process::find_thread)
            .ok_or(Errno::ESRCH)?;
        Ok(t.user.as_ref().ok_or(Errno::ESRCH)?.process.clone())
    };
    let (p1, p2) = (process_of_tid(pid1)?, process_of_tid(pid2)?);
    if !ptrace_may_access(&p1)? || !ptrace_may_access(&p2)? {
        return Err(Errno::EPERM);
    }
    // Each process has one fd table, working directory and handler table
    // here: the process itself stands for them.
    let (a, b) = match kind {
        KCMP_FILE => {
            let get = |p: &Process, fd: u64| {
                let f = p
                    .files
                    .lock()
                    .get(usize::try_from(fd).map_err(|_| Errno::EBADF)?)?;
                Ok::<usize, Errno>(Arc::as_ptr(&f) as usize)
            };
            (get(&p1, idx1)?, get(&p2, idx2)?)
        }
        KCMP_VM => {
            let mm = |p: &Process| p.mm().map_or(0, |mm| Arc::as_ptr(&mm) as usize);
            (mm(&p1), mm(&p2))
        }
        KCMP_FILES | KCMP_FS | KCMP_SIGHAND => {
            (Arc::as_ptr(&p1) as usize, Arc::as_ptr(&p2) as usize)
        }
        // No I/O contexts: none on either side, which compare equal.
        KCMP_IO => (0, 0),
        KCMP_SYSVSEM | KCMP_EPOLL_TFD => return Err(Errno::EOPNOTSUPP),
        _ => return Err(Errno::EINVAL),
    };
    Ok(kcmp_order(kind as u64, a, b))
}

/// 0 for the same object, else 1 or 2 by an order of the addresses
/// scrambled with a secret of this boot, so that no address leaks (Linux:
/// `kcmp_ptr`'s cookies).
fn kcmp_order(kind: u64, a: usize, b: usize) -> i64 {
    static COOKIE: spin::Once<[u64; 2]> = spin::Once::new();
    let cookie = COOKIE.call_once(|| {
        let mut bytes = [0u8; 16];
        crate::random::fill(&mut bytes);
        let word = |i: usize| u64::from_ne_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        [word(0), word(8) | 1]
    });
    let scramble = |p: usize| ((p as u64 ^ cookie[0] ^ kind).wrapping_mul(cookie[1])) as i64;
    let (t1, t2) = (scramble(a), scramble(b));
    (t1 < t2) as i64 | (((t1 > t2) as i64) << 1)
}

/// setns(2) (Linux: `kernel/nsproxy.c`). The mount namespace is the only
/// one, as on a Linux built without the others: there are no namespace
/// files, so only a pidfd is taken, with CLONE_NEWNS alone (any other
/// flag, or none, is EINVAL, as `check_setns_flags` says for namespaces
/// configured out); joining the namespace one is already in moves the
/// working directory to its root (Linux: `mntns_install`), EINVAL for a
/// caller with other threads sharing it. Any other file: EINVAL.
pub fn setns(fd: i32, nstype: i32) -> SysResult {
    let file = super::fs::file(fd)?;
    let pidfd = pidfd::of_file(&file).map_err(|_| Errno::EINVAL)?;
    if nstype != CLONE_NEWNS {
        return Err(Errno::EINVAL);
    }
    // An exited task has left its namespaces.
    if pidfd.exited() || pidfd.reaped() {
        return Err(Errno::ESRCH);
    }
    let target = pidfd.process();
    if !ptrace_may_access(target)? {
        return Err(Errno::EPERM);
    }
    let me = current_process().ok_or(Errno::ESRCH)?;
    if me.live_threads().len() != 1 {
        return Err(Errno::EINVAL);
    }
    *me.cwd.lock() = crate::fs::vfs::root();
    Ok(0)
}

/// clone3(2): see [`fork::clone3`].
pub fn clone3(tf: &TrapFrame, uargs: usize, size: usize) -> SysResult {
    fork::clone3(tf, uargs, size).map(|tid| tid as i64)
}

/// The process `pid` names: 0 or the caller's own pid is the caller.
fn process_of(pid: i32) -> KResult<Arc<Process>> {
    match pid {
        0 => current_process().ok_or(Errno::ESRCH),
        p if p > 0 => process::find_process(p as u32).ok_or(Errno::ESRCH),
        _ => Err(Errno::ESRCH),
    }
}

/// setpgid(2) (Linux: `kernel/sys.c`): moves the caller or one of its
/// children that has not exec'd into group `pgid` (0: its own pid) of the
/// same session.
pub fn setpgid(pid: i32, pgid: i32) -> SysResult {
    if pgid < 0 {
        return Err(Errno::EINVAL);
    }
    let me = current_process().ok_or(Errno::ESRCH)?;
    let p = if pid == 0 || pid as u32 == me.pid {
        me.clone()
    } else {
        let p = process_of(pid)?;
        // Only the caller and its own children.
        if !p.parent().is_some_and(|pp| Arc::ptr_eq(&pp, &me)) {
            return Err(Errno::ESRCH);
        }
        if p.sid.load(Ordering::Acquire) != me.sid.load(Ordering::Acquire) {
            return Err(Errno::EPERM);
        }
        if p.did_exec.load(Ordering::Acquire) {
            return Err(Errno::EACCES);
        }
        p
    };
    let pgid = if pgid == 0 { p.pid } else { pgid as u32 };
    let sid = p.sid.load(Ordering::Acquire);
    // A session leader stays in its group.
    if sid == p.pid {
        return Err(Errno::EPERM);
    }
    // Join an existing group of the same session, or make one named after
    // the process itself.
    if pgid != p.pid && !process::pgrp_in_session(pgid, sid) {
        return Err(Errno::EPERM);
    }
    p.pgid.store(pgid, Ordering::Release);
    Ok(0)
}

/// getpgid(2).
pub fn getpgid(pid: i32) -> SysResult {
    Ok(process_of(pid)?.pgid.load(Ordering::Acquire) as i64)
}

/// getsid(2).
pub fn getsid(pid: i32) -> SysResult {
    Ok(process_of(pid)?.sid.load(Ordering::Acquire) as i64)
}

/// setsid(2): a new session and group led by the caller; EPERM if a group
/// with its pid already exists (it leads one already).
pub fn setsid() -> SysResult {
    let me = current_process().ok_or(Errno::ESRCH)?;
    if process::pgrp_exists(me.pid) {
        return Err(Errno::EPERM);
    }
    me.sid.store(me.pid, Ordering::Release);
    me.pgid.store(me.pid, Ordering::Release);
    Ok(me.pid as i64)
}

/// prctl(2) (Linux: `kernel/sys.c`): the options below; EINVAL for others.
pub fn prctl(option: i32, arg2: u64, rest: [u64; 3]) -> SysResult {
    let me = current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    let p = &u.process;
    match option {
        PR_SET_PDEATHSIG => {
            if arg2 > crate::task::signal_abi::NSIG as u64 {
                return Err(Errno::EINVAL);
            }
            p.pdeath_signal.store(arg2 as u32, Ordering::Release);
            Ok(0)
        }
        PR_GET_PDEATHSIG => {
            write_user(
                arg2 as usize,
                &(p.pdeath_signal.load(Ordering::Acquire) as i32),
            )?;
            Ok(0)
        }
        PR_GET_DUMPABLE => Ok(p.dumpable.load(Ordering::Acquire) as i64),
        PR_SET_DUMPABLE => {
            if arg2 > 1 {
                return Err(Errno::EINVAL);
            }
            p.dumpable.store(arg2 as u32, Ordering::Release);
            Ok(0)
        }
        PR_SET_NAME => {
            let mut name = [0u8; process::TASK_COMM_LEN];
            let s = strncpy_from_user_truncated(arg2 as usize, process::TASK_COMM_LEN - 1)?;
            name[..s.len()].copy_from_slice(&s);
            *u.comm.lock() = name;
            Ok(0)
        }
        PR_GET_NAME => {
            let name = *u.comm.lock();
            copy_to_user(arg2 as usize, &name)?;
            Ok(0)
        }
        // Once set, kept for good, across fork and exec; faultline has no
        // set-user-ID programs or file capabilities for it to hold back.
        PR_SET_NO_NEW_PRIVS if arg2 == 1 && rest == [0; 3] => {
            p.no_new_privs.store(true, Ordering::Release);
            Ok(0)
        }
        PR_GET_NO_NEW_PRIVS if arg2 == 0 && rest == [0; 3] => {
            Ok(p.no_new_privs.load(Ordering::Acquire) as i64)
        }
        PR_SET_NO_NEW_PRIVS | PR_GET_NO_NEW_PRIVS => Err(Errno::EINVAL),
        PR_SET_CHILD_SUBREAPER => {
            p.child_subreaper.store(arg2 != 0, Ordering::Release);
            Ok(0)
        }
        PR_GET_CHILD_SUBREAPER => {
            let v = p.child_subreaper.load(Ordering::Acquire) as i32;
            write_user(arg2 as usize, &v)?;
            Ok(0)
        }
        PR_SET_MDWE => super::mm::prctl_set_mdwe(arg2, rest),
        PR_GET_MDWE => super::mm::prctl_get_mdwe([arg2, rest[0], rest[1], rest[2]]),
        _ => Err(Errno::EINVAL),
    }
}

/// Up to `max` bytes of the string at `uaddr`, cut there if it is longer
/// (Linux: `strncpy_from_user` into a fixed buffer, as PR_SET_NAME does).
fn strncpy_from_user_truncated(uaddr: usize, max: usize) -> KResult<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..max {
        let b: u8 = read_user(uaddr + i)?;
        if b == 0 {
            break;
        }
        out.push(b);
    }
    Ok(out)
}

/// The processes a getpriority/setpriority `which`/`who` pair names.
fn prio_targets(which: i32, who: i32) -> KResult<Vec<Arc<Process>>> {
    let me = current_process().ok_or(Errno::ESRCH)?;
    let v = match which {
        PRIO_PROCESS => alloc::vec![process_of(who)?],
        PRIO_PGRP => {
            let pgid = if who == 0 {
                me.pgid.load(Ordering::Acquire)
            } else {
                who as u32
            };
            process::pgrp_members(pgid)
        }
        // Everyone is root: user 0 owns every process.
        PRIO_USER if who == 0 => {
            let mut all = process::all_processes();
            all.retain(|p| !p.zombie.load(Ordering::Acquire));
            all
        }
        PRIO_USER => Vec::new(),
        _ => return Err(Errno::EINVAL),
    };
    if v.is_empty() {
        return Err(Errno::ESRCH);
    }
    Ok(v)
}

/// getpriority(2): the raw system call returns 20 - nice (1..40), which
/// glibc turns back into the nice value; the highest of the targets.
pub fn getpriority(which: i32, who: i32) -> SysResult {
    let best = prio_targets(which, who)?
        .iter()
        .map(|p| p.nice.load(Ordering::Acquire))
        .min()
        .unwrap_or(0);
    Ok((20 - best) as i64)
}

/// setpriority(2): the nice value, clamped to -20..=19.
pub fn setpriority(which: i32, who: i32, nice: i32) -> SysResult {
    let nice = nice.clamp(-20, 19);
    for p in prio_targets(which, who)? {
        p.nice.store(nice, Ordering::Release);
    }
    Ok(0)
}

/// The thread a sched_* `pid` names (0: the caller).
fn sched_thread(pid: i32) -> KResult<Arc<crate::task::Thread>> {
    match pid {
        0 => Ok(current()),
        p if p > 0 => process::find_thread(p as u32).ok_or(Errno::ESRCH),
        _ => Err(Errno::EINVAL),
    }
}

/// Runs `f` on the policy of the thread a sched_* `pid` names, under its
/// lock.
fn with_sched<R>(pid: i32, f: impl FnOnce(&mut SchedPolicy) -> R) -> KResult<R> {
    let t = sched_thread(pid)?;
    let user = t.user.as_ref().ok_or(Errno::ESRCH)?;
    let mut sched = user.sched.lock();
    Ok(f(&mut sched))
}

/// The policy and real-time priority of thread `pid`, `policy` None
/// keeping its policy (Linux: `do_sched_setscheduler`). Every process runs
/// as root, which may set any; faultline keeps them without a real-time
/// class (`sched_policy.rs`).
fn do_sched_setscheduler(pid: i32, policy: Option<u32>, uparam: usize) -> SysResult {
    if uparam == 0 || pid < 0 {
        return Err(Errno::EINVAL);
    }
    let priority: i32 = read_user(uparam)?;
    with_sched(pid, |sched| {
        *sched = sched.set(policy, priority).ok_or(Errno::EINVAL)?;
        Ok(0)
    })?
}

/// sched_setscheduler(2): the thread's policy and real-time priority.
pub fn sched_setscheduler(pid: i32, policy: i32, uparam: usize) -> SysResult {
    let policy = u32::try_from(policy).map_err(|_| Errno::EINVAL)?;
    do_sched_setscheduler(pid, Some(policy), uparam)
}

/// sched_setparam(2): the thread's real-time priority, under its policy.
pub fn sched_setparam(pid: i32, uparam: usize) -> SysResult {
    do_sched_setscheduler(pid, None, uparam)
}

/// sched_getscheduler(2): the thread's policy, with SCHED_RESET_ON_FORK.
pub fn sched_getscheduler(pid: i32) -> SysResult {
    with_sched(pid, |sched| sched.reported() as i64)
}

/// sched_getparam(2): the thread's real-time priority, 0 under a
/// time-shared policy.
pub fn sched_getparam(pid: i32, uparam: usize) -> SysResult {
    if uparam == 0 || pid < 0 {
        return Err(Errno::EINVAL);
    }
    let priority = with_sched(pid, |sched| sched.rt_priority as i32)?;
    write_user(uparam, &priority).map(|_| 0)
}

/// The priorities `policy` takes (Linux: `sched_get_priority_max` and
/// `_min`): 1..=99 for SCHED_FIFO and SCHED_RR, 0 for the other policies
/// Linux knows (SCHED_EXT, 7, included), EINVAL for the rest.
fn priority_range(policy: i32) -> KResult<(i64, i64)> {
    use crate::task::sched_policy::{
        MAX_RT_PRIO, SCHED_BATCH, SCHED_DEADLINE, SCHED_EXT, SCHED_FIFO, SCHED_IDLE, SCHED_NORMAL,
        SCHED_RR,
    };
    match u32::try_from(policy).map_err(|_| Errno::EINVAL)? {
        SCHED_FIFO | SCHED_RR => Ok((1, MAX_RT_PRIO as i64 - 1)),
        SCHED_NORMAL | SCHED_BATCH | SCHED_IDLE | SCHED_DEADLINE | SCHED_EXT => Ok((0, 0)),
        _ => Err(Errno::EINVAL),
    }
}

/// sched_get_priority_max(2): the highest priority `policy` takes.
pub fn sched_get_priority_max(policy: i32) -> SysResult {
    Ok(priority_range(policy)?.1)
}

/// sched_get_priority_min(2): the lowest priority `policy` takes.
pub fn sched_get_priority_min(policy: i32) -> SysResult {
    Ok(priority_range(policy)?.0)
}

/// sched_setaffinity(2): threads stay on the CPU they started on, so a
/// mask is only checked: it must name an online CPU (else EINVAL).
pub fn sched_setaffinity(pid: i32, len: usize, umask: usize) -> SysResult {
    sched_thread(pid)?;
    let cpus = crate::task::nr_cpus_online();
    let n = len.min(cpus.div_ceil(8));
    let mut mask = alloc::vec![0u8; n];
    crate::mm::uaccess::copy_from_user(&mut mask, umask)?;
    if !(0..cpus).any(|c| c / 8 < n && mask[c / 8] & (1 << (c % 8)) != 0) {
        return Err(Errno::EINVAL);
    }
    Ok(0)
}

/// times(2): the process's and its reaped children's CPU time in clock
/// ticks (USER_HZ 100); returns ticks since boot (Linux: `do_sys_times`).
pub fn times(ubuf: usize) -> SysResult {
    const TICK_NS: u64 = 10_000_000;
    let p = current_process().ok_or(Errno::ESRCH)?;
    if ubuf != 0 {
        let (u, s) = p.cputime();
        let t = *p.times.lock();
        let tms = [
            (u / TICK_NS) as i64,
            (s / TICK_NS) as i64,
            (t.cutime / TICK_NS) as i64,
            (t.cstime / TICK_NS) as i64,
        ];
        write_user(ubuf, &tms)?;
    }
    Ok((crate::task::clock::monotonic_ns() / TICK_NS) as i64)
}

/// uname(2): a `struct utsname` saying Linux 6.12 on aarch64, with
/// faultline as the node name and in the release and version.
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
/// limits are kept per process; RLIMIT_NOFILE and RLIMIT_MSGQUEUE are
/// enforced, and RLIMIT_STACK bounds the main stack's growth.
pub fn prlimit64(nr: usize, a: [u64; 6]) -> SysResult {
    let (pid, resource, new, old) = if nr == __NR_getrlimit {
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

/// setrlimit(2): [`prlimit64`] of the caller, without the old limits.
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

/// getrusage(2): CPU time and minor faults of the process, the calling
/// thread, or the reaped children.
pub fn getrusage(who: i32, uaddr: usize) -> SysResult {
    let p = current_process().ok_or(Errno::EINVAL)?;
    let words = match who {
        RUSAGE_SELF => {
            let (u, s) = p.cputime();
            rusage_words(u, s, p.min_flt())
        }
        RUSAGE_THREAD => {
            let me = current();
            let (u, s) = me.cputime();
            rusage_words(u, s, me.min_flt())
        }
        RUSAGE_CHILDREN => {
            let t = *p.times.lock();
            rusage_words(t.cutime, t.cstime, t.cmin_flt)
        }
        _ => return Err(Errno::EINVAL),
    };
    write_user(uaddr, &words).map(|_| 0)
}

/// getrandom(2): `len` bytes into `ubuf` from the kernel's random source;
/// it never blocks, so GRND_NONBLOCK, GRND_RANDOM and GRND_INSECURE change
/// nothing. A long request may stop short at a signal; returns the bytes
/// written.
pub fn getrandom(ubuf: usize, len: usize, flags: u32) -> SysResult {
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0 {
        return Err(Errno::EINVAL);
    }
    // A piece at a time through the stack (Linux: `get_random_bytes_user`,
    // a block at a time); a fault after some bytes ends it short.
    let len = len.min(MAX_RW_COUNT);
    let mut block = [0u8; 256];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(block.len());
        // Long requests stop for signals (Linux: every page).
        if done % PAGE_SIZE == 0 && done > 0 && crate::task::signal::signal_pending() {
            break;
        }
        crate::random::fill(&mut block[..n]);
        if let Err(e) = copy_to_user(ubuf + done, &block[..n]) {
            return if done == 0 { Err(e) } else { Ok(done as i64) };
        }
        done += n;
    }
    Ok(done as i64)
}
