//! Opening, closing and changing a file or the working directory (Linux:
//! `fs/open.c`; umask(2), whose mask open applies, is `kernel/sys.c`'s).

use super::*;
use uapi::fcntl::AT_EACCESS;

/// openat(2): open `upath`, relative to `dirfd`, and return a new
/// descriptor for it (Linux: `do_sys_openat2`). A file O_CREAT makes gets
/// `mode` less the umask.
pub fn openat(dirfd: i32, upath: usize, flags: u32, mode: u32) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    let start = start_dir(dirfd, &path)?;
    let f = vfs::open(&start, &path, flags & !O_CLOEXEC, masked(mode)?)?;
    install(f, flags & O_CLOEXEC != 0)
}

/// close(2): frees descriptor `fd`; the open file goes when nothing else
/// refers to it (Linux: `close_fd`).
pub fn close(fd: i32) -> SysResult {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    me()?.files.lock().close(fd as usize).map(|_| 0)
}

/// ftruncate(2): make the file open at `fd` `len` bytes long.
pub fn ftruncate(fd: i32, len: i64) -> SysResult {
    file(fd)?.ftruncate(len).map(|_| 0)
}

/// fallocate(2): allocate (or, as `mode` says, punch out) the bytes
/// `[off, off + len)` of the file at `fd` (Linux: `vfs_fallocate`).
pub fn fallocate(fd: i32, mode: u32, off: i64, len: i64) -> SysResult {
    file(fd)?.fallocate(mode, off, len).map(|_| 0)
}

/// umask(2): sets the creation mask, returns the old one.
pub fn umask(mask: u32) -> SysResult {
    Ok(me()?.umask.swap(mask & 0o777, Ordering::Relaxed) as i64)
}

/// faccessat2(2), and faccessat with no flags: may the caller reach `path`
/// as `mode` (F_OK, or R_OK | W_OK | X_OK) asks? (Linux: `do_faccessat`.)
/// Asked with the real ids, as a set-user-ID program asks whether its
/// user may, unless AT_EACCESS: with the effective ones. Linux's
/// `access_override_creds`: the fs ids become the real ones, and the
/// capabilities are all permitted ones for a real root, none otherwise.
pub fn faccessat2(dirfd: i32, upath: usize, mode: u32, flags: u32) -> SysResult {
    if mode & !7 != 0 || flags & !(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let inode = at_inode(dirfd, upath, flags, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    if mode == 0 {
        return Ok(0);
    }
    let mut cred = crate::task::current_cred();
    if flags & AT_EACCESS == 0 {
        cred.fsuid = cred.uid;
        cred.fsgid = cred.gid;
        cred.caps.effective = if cred.uid == 0 {
            cred.caps.permitted
        } else {
            0
        };
    }
    // R_OK, W_OK and X_OK are MAY_READ, MAY_WRITE and MAY_EXEC.
    permission::generic_permission(&cred, inode.owner(), mode)?;
    Ok(0)
}

/// chdir(2): make `upath` the working directory; ENOTDIR if it is none.
pub fn chdir(upath: usize) -> SysResult {
    let path = path_arg(upath)?;
    let p = me()?;
    let start = p.cwd.lock().clone();
    let dir = vfs::lookup(&start, &path, true)?;
    dir.dir()?;
    dir.permission(MAY_EXEC)?;
    *p.cwd.lock() = dir;
    Ok(0)
}

/// chmod on an inode (Linux: `chmod_common` -> `shmem_setattr`): EPERM
/// for anyone but the owner (see `permission::chmod`), or where
/// F_SEAL_EXEC forbids changing the execute bits.
fn chmod_inode(inode: &Inode, mode: u32) -> SysResult {
    let mode = permission::chmod(&crate::task::current_cred(), inode.owner(), mode & 0o7777)?;
    if let InodeKind::File(f) = &inode.kind {
        if f.seals() & tmpfs::F_SEAL_EXEC != 0 && (inode.mode() ^ mode) & 0o111 != 0 {
            return Err(Errno::EPERM);
        }
    }
    inode.set_perm(mode);
    Ok(0)
}

/// fchmod(2).
pub fn fchmod(fd: i32, mode: u32) -> SysResult {
    chmod_inode(&file(fd)?.inode, mode)
}

/// fchmodat2(2), and fchmodat(2) with no flags: a symbolic link itself
/// cannot be chmodded (EOPNOTSUPP, as Linux's `do_fchmodat` says).
pub fn fchmodat2(dirfd: i32, upath: usize, mode: u32, flags: u32) -> SysResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let inode = at_inode(dirfd, upath, flags, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    if matches!(inode.kind, InodeKind::Symlink(_)) {
        return Err(Errno::EOPNOTSUPP);
    }
    chmod_inode(&inode, mode)
}

/// An id argument of chown: -1 leaves it as it is.
fn chown_id(id: u32) -> Option<u32> {
    (id != u32::MAX).then_some(id)
}

/// chown on an inode (Linux: `chown_common`): who may give what to
/// whom is `permission::chown`.
fn chown_inode(inode: &Inode, uid: u32, gid: u32) -> SysResult {
    let (uid, gid) = (chown_id(uid), chown_id(gid));
    permission::chown(&crate::task::current_cred(), inode.owner(), uid, gid)?;
    inode.set_owner(uid, gid);
    Ok(0)
}

/// fchownat(2) (Linux: `do_fchownat`): AT_SYMLINK_NOFOLLOW changes a
/// link itself.
pub fn fchownat(dirfd: i32, upath: usize, uid: u32, gid: u32, flags: u32) -> SysResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let inode = at_inode(dirfd, upath, flags, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    chown_inode(&inode, uid, gid)
}

/// fchown(2).
pub fn fchown(fd: i32, uid: u32, gid: u32) -> SysResult {
    chown_inode(&file(fd)?.inode, uid, gid)
}

/// fchdir(2).
pub fn fchdir(fd: i32) -> SysResult {
    let dir = file(fd)?.inode.clone();
    dir.dir()?;
    dir.permission(MAY_EXEC)?;
    *me()?.cwd.lock() = dir;
    Ok(0)
}

/// truncate(2) by path (Linux: `do_sys_truncate`): EISDIR for a directory,
/// EINVAL for anything else not a regular file or a negative length.
pub fn truncate(upath: usize, len: i64) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    let inode = vfs::lookup(&start_dir(AT_FDCWD, &path)?, &path, true)?;
    if len < 0 {
        return Err(Errno::EINVAL);
    }
    match &inode.kind {
        InodeKind::File(f) => {
            inode.permission(MAY_WRITE)?;
            f.truncate(len as u64)?;
            inode.remove_privs();
            inode.touch(vfs::T_MTIME | vfs::T_CTIME);
            Ok(0)
        }
        InodeKind::Dir(_) => Err(Errno::EISDIR),
        _ => Err(Errno::EINVAL),
    }
}
