//! System V IPC system calls (Linux: `ipc/shm.c`'s `SYSCALL_DEFINE`s):
//! argument checks and user copies around `ipc::shm`.

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::ipc::shm::{self, Ctl, ShmidDs, IPC_64, IPC_RMID, IPC_SET, IPC_STAT};
use crate::mm::mm_struct::Mm;
use crate::mm::uaccess::{read_user, write_user};
use alloc::sync::Arc;

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

/// shmctl(2): IPC_STAT into `ubuf`, IPC_SET from it, or IPC_RMID;
/// IPC_64 is ignored, every structure being the 64-bit one. EINVAL for
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
        _ => Err(Errno::EINVAL),
    }
}
