//! Descriptors and their flags: dup, close_range, fcntl, ioctl, flock
//! (Linux: `fs/file.c`, `fs/fcntl.c`, `fs/ioctl.c`, `fs/locks.c`).

use super::*;
use uapi::fcntl::{
    F_ADD_SEALS, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, F_GETPIPE_SZ, F_GET_SEALS, F_OFD_GETLK,
    F_OFD_SETLK, F_OFD_SETLKW, F_RDLCK, F_SETFD, F_SETFL, F_SETLK, F_SETLKW, F_SETPIPE_SZ, F_UNLCK,
    F_WRLCK, LOCK_EX, LOCK_NB, LOCK_SH, LOCK_UN,
};

/// dup(2): a new descriptor, the lowest free, for the file at `fd`,
/// without FD_CLOEXEC.
pub fn dup(fd: i32) -> SysResult {
    let f = file(fd)?;
    install(f, false)
}

/// dup3(2): make descriptor `new` refer to `old`'s file, closing what it
/// held; `flags` may only be O_CLOEXEC. EINVAL if `old == new`.
pub fn dup3(old: i32, new: i32, flags: u32) -> SysResult {
    file(old)?;
    if new < 0 {
        return Err(Errno::EBADF);
    }
    if flags & !O_CLOEXEC != 0 || old == new {
        return Err(Errno::EINVAL);
    }
    me()?
        .files
        .lock()
        .dup_to(old as usize, new as usize, flags & O_CLOEXEC != 0)
        .map(|fd| fd as i64)
}

/// fcntl(2): descriptor and status flags, duplication, record locks and
/// seals (Linux: `do_fcntl`); any other `cmd` is EINVAL.
pub fn fcntl(fd: i32, cmd: u32, arg: u64) -> SysResult {
    let f = file(fd)?;
    let p = me()?;
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => install_from(f, arg as usize, cmd == F_DUPFD_CLOEXEC),
        F_GETFD => p.files.lock().cloexec(fd as usize).map(|c| c as i64),
        F_SETFD => p
            .files
            .lock()
            .set_cloexec(fd as usize, arg & FD_CLOEXEC != 0)
            .map(|_| 0),
        F_GETFL => Ok(f.flags() as i64),
        F_SETFL => {
            f.set_status_flags(arg as u32);
            Ok(0)
        }
        F_GETLK | F_SETLK | F_SETLKW | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW => {
            fcntl_lock(&f, cmd, arg as usize)
        }
        F_ADD_SEALS | F_GET_SEALS => fcntl_seals(&f, cmd, arg as u32),
        // Linux: `pipe_fcntl`, EBADF for anything but a pipe.
        F_SETPIPE_SZ => {
            let pipe = f.device::<Pipe>().ok_or(Errno::EBADF)?;
            let privileged = crate::task::capable(crate::task::cred::CAP_SYS_RESOURCE);
            Ok(pipe.set_capacity(arg as u32 as u64, privileged)? as i64)
        }
        F_GETPIPE_SZ => Ok(f.device::<Pipe>().ok_or(Errno::EBADF)?.capacity() as i64),
        _ => Err(Errno::EINVAL),
    }
}

/// ioctl(2): `cmd` and `arg` go to the open file's own `ioctl` (the
/// terminal's and the sockets' requests).
pub fn ioctl(fd: i32, cmd: u32, arg: usize) -> SysResult {
    file(fd)?.ioctl(cmd, arg)
}

/// close_range(2) (Linux: `__close_range`). Where we simplify:
/// CLOSE_RANGE_UNSHARE is accepted but the table stays shared with the
/// process's threads (they always share one here).
pub fn close_range(first: u32, last: u32, flags: u32) -> SysResult {
    const CLOSE_RANGE_UNSHARE: u32 = 2;
    const CLOSE_RANGE_CLOEXEC: u32 = 4;
    if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
        return Err(Errno::EINVAL);
    }
    let p = me()?;
    let mut files = p.files.lock();
    files.close_range(
        first as usize,
        last as usize,
        flags & CLOSE_RANGE_CLOEXEC != 0,
    );
    Ok(0)
}

/// flock(2) (Linux: `sys_flock`): LOCK_SH, LOCK_EX or LOCK_UN, with LOCK_NB
/// EWOULDBLOCK (EAGAIN) rather than waiting; waiting is interruptible.
pub fn flock(fd: i32, op: u32) -> SysResult {
    let f = file(fd)?;
    let id = Arc::as_ptr(&f) as usize;
    match op & !LOCK_NB {
        LOCK_UN => {
            vfs::locks::funlock(f.inode.ino, id);
            Ok(0)
        }
        cmd @ (LOCK_SH | LOCK_EX) => {
            f.note_locked();
            let pid = me()?.pid as i32;
            vfs::locks::flock(f.inode.ino, id, cmd == LOCK_EX, op & LOCK_NB == 0, pid).map(|_| 0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// fcntl's record locks (Linux: `fcntl_getlk`, `fcntl_setlk`): POSIX locks
/// belong to the descriptor table, OFD locks to the open file.
fn fcntl_lock(f: &Arc<File>, cmd: u32, uarg: usize) -> SysResult {
    let mut fl = Flock::read(uarg)?;
    let ofd = matches!(cmd, F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW);
    if ofd && fl.l_pid != 0 {
        return Err(Errno::EINVAL);
    }
    if !matches!(fl.l_type, F_RDLCK | F_WRLCK | F_UNLCK) {
        return Err(Errno::EINVAL);
    }
    // The byte range (Linux: `flock_to_posix_lock`).
    let base = match fl.l_whence as u32 {
        vfs::SEEK_SET => 0,
        vfs::SEEK_CUR => f.lseek(0, vfs::SEEK_CUR)? as i64,
        vfs::SEEK_END => f.fstat().st_size,
        _ => return Err(Errno::EINVAL),
    };
    let mut start = base.checked_add(fl.l_start).ok_or(Errno::EOVERFLOW)?;
    if start < 0 {
        return Err(Errno::EINVAL);
    }
    let end = match fl.l_len {
        0 => u64::MAX,
        len if len > 0 => (start.checked_add(len - 1).ok_or(Errno::EOVERFLOW)?) as u64,
        len => {
            let end = start - 1;
            start += len;
            if start < 0 {
                return Err(Errno::EINVAL);
            }
            end as u64
        }
    };
    let p = me()?;
    let owner = if ofd {
        vfs::locks::Owner::Ofd(Arc::as_ptr(f) as usize)
    } else {
        vfs::locks::Owner::Posix(p.files.lock().lock_owner())
    };
    let want = vfs::locks::FileLock {
        ino: f.inode.ino,
        owner,
        write: fl.l_type == F_WRLCK,
        start: start as u64,
        end,
        pid: p.pid as i32,
    };
    match cmd {
        F_GETLK | F_OFD_GETLK => {
            if fl.l_type == F_UNLCK {
                return Err(Errno::EINVAL);
            }
            match vfs::locks::test_lock(&want) {
                None => fl.l_type = F_UNLCK,
                Some(l) => {
                    fl.l_type = if l.write { F_WRLCK } else { F_RDLCK };
                    fl.l_whence = vfs::SEEK_SET as i16;
                    fl.l_start = l.start as i64;
                    fl.l_len = if l.end == u64::MAX {
                        0
                    } else {
                        (l.end - l.start + 1) as i64
                    };
                    fl.l_pid = match l.owner {
                        vfs::locks::Owner::Posix(_) => l.pid,
                        _ => -1,
                    };
                }
            }
            fl.write(uarg).map(|_| 0)
        }
        _ => {
            if fl.l_type == F_UNLCK {
                vfs::locks::unlock_record(want.ino, owner, want.start, want.end);
                return Ok(0);
            }
            let allowed = if want.write {
                f.is_writable()
            } else {
                f.is_readable()
            };
            if !allowed {
                return Err(Errno::EBADF);
            }
            if ofd {
                f.note_locked();
            }
            let wait = matches!(cmd, F_SETLKW | F_OFD_SETLKW);
            vfs::locks::set_record_lock(&want, wait).map(|_| 0)
        }
    }
}

/// F_ADD_SEALS / F_GET_SEALS (Linux: `memfd_fcntl`): any tmpfs file has
/// seals (F_SEAL_SEAL unless memfd_create allowed sealing); anything else
/// is EINVAL. Adding needs the file open for writing (EPERM).
fn fcntl_seals(f: &File, cmd: u32, arg: u32) -> SysResult {
    let InodeKind::File(sf) = &f.inode.kind else {
        return Err(Errno::EINVAL);
    };
    if cmd == F_GET_SEALS {
        return Ok(sf.seals() as i64);
    }
    if !f.is_writable() {
        return Err(Errno::EPERM);
    }
    sf.add_seals(arg, f.inode.mode(), || sf.mapping.writably_mapped())
        .map(|_| 0)
}
