//! System V IPC and POSIX message queue system calls (Linux: the
//! `SYSCALL_DEFINE`s of `ipc/shm.c` and `ipc/mqueue.c`): argument checks
//! and user copies around `ipc::shm` and `ipc::mqueue`.

use super::fs::{file, install, path_arg};
use super::time::deadline_at_clock;
use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::fs::vfs::{File, O_ACCMODE, O_NONBLOCK, O_RDONLY, O_WRONLY, S_IFMT};
use crate::ipc::mqueue::{
    self, MqAttr, MsgQueue, MQ_PRIO_MAX, SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD,
};
use crate::ipc::shm::{self, Ctl, ShmidDs, IPC_64, IPC_RMID, IPC_SET, IPC_STAT};
use crate::mm::mm_struct::Mm;
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::task::clock::CLOCK_REALTIME;
use alloc::sync::Arc;
use alloc::vec;
use uapi::stat::S_IFSOCK;

/// The caller's address space.
fn mm() -> KResult<Arc<Mm>> {
    crate::task::current_mm().ok_or(Errno::EINVAL)
}

/// shmget(2): the id of the segment `key` names, or a new one.
pub fn shmget(key: i32, size: usize, flags: u32) -> SysResult {
    shm::shmget(key, size, flags).map(|id| id as i64)
}

/// shmat(2): attach segment `id`; returns the address.
pub fn shmat(id: i32, addr: usize, flags: u32) -> SysResult {
    shm::shmat(&mm()?, id, addr, flags).map(|a| a as i64)
}

/// shmdt(2): detach the segment attached at `addr`.
pub fn shmdt(addr: usize) -> SysResult {
    shm::shmdt(&mm()?, addr).map(|_| 0)
}

/// SHM_LOCK: keep the segment's pages in memory, charged to
/// RLIMIT_MEMLOCK.
const SHM_LOCK: i32 = 11;
/// SHM_UNLOCK: undo SHM_LOCK.
const SHM_UNLOCK: i32 = 12;

/// shmctl(2): IPC_STAT into `ubuf`, IPC_SET from it, IPC_RMID, SHM_LOCK or
/// SHM_UNLOCK; IPC_64 is ignored, every structure being the 64-bit one. EINVAL for
/// another command, a negative id or command; EFAULT for `ubuf`.
pub fn shmctl(id: i32, cmd: i32, ubuf: usize) -> SysResult {
    if id < 0 || cmd < 0 {
        return Err(Errno::EINVAL);
    }
    match cmd & !IPC_64 {
        IPC_STAT => write_user(ubuf, &shm::shmctl(id, Ctl::Stat)?).map(|_| 0),
        IPC_SET => {
            let new: ShmidDs = read_user(ubuf)?;
            shm::shmctl(id, Ctl::Set(new)).map(|_| 0)
        }
        IPC_RMID => shm::shmctl(id, Ctl::Rmid).map(|_| 0),
        SHM_LOCK | SHM_UNLOCK => {
            let p = crate::task::current_process().ok_or(Errno::ESRCH)?;
            let limit = p.memlock_limit();
            shm::shmctl(id, Ctl::Lock(cmd & !IPC_64 == SHM_LOCK, limit)).map(|_| 0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// A `struct mq_attr` from user memory.
fn read_attr(uattr: usize) -> KResult<MqAttr> {
    let a: [i64; 8] = read_user(uattr)?;
    Ok(MqAttr {
        flags: a[0],
        maxmsg: a[1],
        msgsize: a[2],
        curmsgs: a[3],
        reserved: [a[4], a[5], a[6], a[7]],
    })
}

/// mq_open(2) (glibc passes the name without its leading slash): the
/// attributes are read whenever given (EFAULT even without O_CREAT, as
/// Linux); the descriptor is always close-on-exec.
pub fn mq_open(uname: usize, oflag: u32, mode: u32, uattr: usize) -> SysResult {
    let attr = match uattr {
        0 => None,
        u => Some(read_attr(u)?),
    };
    let name = path_arg(uname)?;
    install(mqueue::mq_open(&name, oflag, mode, attr)?, true)
}

/// mq_unlink(2).
pub fn mq_unlink(uname: usize) -> SysResult {
    mqueue::mq_unlink(&path_arg(uname)?).map(|_| 0)
}

/// The absolute CLOCK_REALTIME timeout at `uts` as a counter value; None
/// for a null pointer (wait for ever). EINVAL for a bad timespec, found
/// before the descriptor is looked at (Linux: `prepare_timeout`).
fn abs_timeout(uts: usize) -> KResult<Option<u64>> {
    match uts {
        0 => Ok(None),
        u => deadline_at_clock(CLOCK_REALTIME, read_user(u)?).map(Some),
    }
}

/// The open message queue at `mqd`, and the file; EBADF for another kind
/// of file, or one not open for the access `need` (O_RDONLY to receive,
/// O_WRONLY to send).
fn queue_at(mqd: i32, need: Option<u32>) -> KResult<(Arc<File>, Arc<MsgQueue>)> {
    let f = file(mqd)?;
    let q = mqueue::queue_of(&f)?;
    let mode = f.flags() & O_ACCMODE;
    match need {
        Some(O_RDONLY) if mode == O_WRONLY => Err(Errno::EBADF),
        Some(O_WRONLY) if mode == O_RDONLY => Err(Errno::EBADF),
        _ => Ok((f, q)),
    }
}

/// mq_timedsend(2): EINVAL for a priority of MQ_PRIO_MAX or more.
pub fn mq_timedsend(mqd: i32, umsg: usize, len: usize, prio: u32, uts: usize) -> SysResult {
    let deadline = abs_timeout(uts)?;
    if prio >= MQ_PRIO_MAX {
        return Err(Errno::EINVAL);
    }
    let (f, q) = queue_at(mqd, Some(O_WRONLY))?;
    if len > q.attr(0).msgsize as usize {
        return Err(Errno::EMSGSIZE);
    }
    let mut msg = vec![0u8; len];
    copy_from_user(&mut msg, umsg)?;
    q.send(msg, prio, f.flags() & O_NONBLOCK != 0, deadline)
        .map(|_| 0)
}

/// mq_timedreceive(2): the message's length; its priority is stored at
/// `uprio` if that is not null. A message taken is gone even if copying
/// it out faults (EFAULT), as on Linux.
pub fn mq_timedreceive(mqd: i32, ubuf: usize, len: usize, uprio: usize, uts: usize) -> SysResult {
    let deadline = abs_timeout(uts)?;
    let (f, q) = queue_at(mqd, Some(O_RDONLY))?;
    let (msg, prio) = q.receive(len, f.flags() & O_NONBLOCK != 0, deadline)?;
    if uprio != 0 {
        write_user(uprio, &prio)?;
    }
    copy_to_user(ubuf, &msg)?;
    Ok(msg.len() as i64)
}

/// mq_notify(2): a null `struct sigevent` removes the caller's
/// registration. EINVAL for another `sigev_notify` than SIGEV_NONE,
/// SIGEV_SIGNAL and SIGEV_THREAD, or a bad signal; SIGEV_THREAD wants a
/// netlink socket's descriptor in `sigev_signo`, which cannot exist here:
/// EBADF, ENOTSOCK or EINVAL as Linux says for what is there instead.
pub fn mq_notify(mqd: i32, usev: usize) -> SysResult {
    let request = match usev {
        0 => None,
        u => {
            // struct sigevent: sigev_value (8), sigev_signo, sigev_notify.
            let (value, signo, how): (u64, i32, i32) = {
                let words: [u32; 4] = read_user(u)?;
                (
                    words[0] as u64 | (words[1] as u64) << 32,
                    words[2] as i32,
                    words[3] as i32,
                )
            };
            match how {
                SIGEV_NONE => Some(None),
                SIGEV_SIGNAL if mqueue::valid_signal(signo as u32) => {
                    Some(Some((signo as u32, value)))
                }
                SIGEV_THREAD => {
                    let sock = file(signo)?;
                    return Err(if sock.inode.mode() & S_IFMT == S_IFSOCK {
                        Errno::EINVAL
                    } else {
                        Errno::ENOTSOCK
                    });
                }
                _ => return Err(Errno::EINVAL),
            }
        }
    };
    let (_, q) = queue_at(mqd, None)?;
    q.notify(request).map(|_| 0)
}

/// mq_getsetattr(2): the attributes before (with the descriptor's
/// O_NONBLOCK as `mq_flags`) to `uold`, and O_NONBLOCK from `unew`, the
/// only flag it may set (EINVAL for others).
pub fn mq_getsetattr(mqd: i32, unew: usize, uold: usize) -> SysResult {
    let new = match unew {
        0 => None,
        u => Some(read_attr(u)?),
    };
    if new.is_some_and(|n| n.flags & !(O_NONBLOCK as i64) != 0) {
        return Err(Errno::EINVAL);
    }
    let (f, q) = queue_at(mqd, None)?;
    let old = q.attr((f.flags() & O_NONBLOCK) as i64);
    if let Some(n) = new {
        let keep = f.flags() & !O_NONBLOCK;
        f.set_status_flags(keep | n.flags as u32);
    }
    if uold != 0 {
        let a = [old.flags, old.maxmsg, old.msgsize, old.curmsgs, 0, 0, 0, 0];
        write_user(uold, &a)?;
    }
    Ok(0)
}
