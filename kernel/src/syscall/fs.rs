//! File system calls on the VFS (Linux: `fs/open.c`, `fs/read_write.c`,
//! `fs/namei.c`, `fs/stat.c`, `fs/fcntl.c`, `fs/pipe.c`, `fs/d_path.c`).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::fs::device::{Console, Pipe};
use crate::fs::tmpfs;
use crate::fs::vfs::{self, File, Inode, InodeKind, PATH_MAX, S_IFCHR, S_IFIFO};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::uaccess::{
    copy_from_user, copy_to_user, read_user, strncpy_from_user, write_user, WriteSource,
};
use crate::task::current_process;
use crate::task::process::Process;

const AT_FDCWD: i32 = -100;
const AT_REMOVEDIR: u32 = 0x200;
const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
const AT_EMPTY_PATH: u32 = 0x1000;
pub(super) const O_CLOEXEC: u32 = 0o2000000;
const F_DUPFD: u32 = 0;
const F_GETFD: u32 = 1;
const F_SETFD: u32 = 2;
const F_GETFL: u32 = 3;
const F_SETFL: u32 = 4;
const F_DUPFD_CLOEXEC: u32 = 1030;
const FD_CLOEXEC: u64 = 1;
/// Most bytes one read/write moves through the kernel buffer at a time.
const CHUNK: usize = 64 * 1024;

pub(super) fn me() -> KResult<Arc<Process>> {
    current_process().ok_or(Errno::EPERM)
}

pub(super) fn file(fd: i32) -> KResult<Arc<File>> {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    me()?.files.lock().get(fd as usize)
}

/// A new descriptor for `file`, below the process's RLIMIT_NOFILE.
pub(super) fn install(file: Arc<File>, cloexec: bool) -> SysResult {
    install_from(file, 0, cloexec)
}

fn install_from(file: Arc<File>, min: usize, cloexec: bool) -> SysResult {
    let p = me()?;
    let limit = p.rlimits.lock()[7][0] as usize;
    let mut files = p.files.lock();
    let fd = files.install_from(file, min, cloexec)?;
    if fd >= limit {
        let _ = files.close(fd);
        return Err(Errno::EMFILE);
    }
    Ok(fd as i64)
}

fn path_arg(uaddr: usize) -> KResult<String> {
    strncpy_from_user(uaddr, PATH_MAX - 1)
}

/// A path that must not be empty (without AT_EMPTY_PATH, Linux says ENOENT
/// before looking at the directory fd).
fn nonempty_path_arg(uaddr: usize) -> KResult<String> {
    let path = path_arg(uaddr)?;
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    Ok(path)
}

/// Where a path relative to `dirfd` starts (Linux: `path_init`).
fn start_dir(dirfd: i32, path: &str) -> KResult<Arc<Inode>> {
    if path.starts_with('/') {
        return Ok(vfs::root());
    }
    if dirfd == AT_FDCWD {
        return Ok(me()?.cwd.lock().clone());
    }
    let f = file(dirfd)?;
    f.inode.dir()?;
    Ok(f.inode.clone())
}

/// `mode` less the caller's umask, for a file or directory it creates.
fn masked(mode: u32) -> KResult<u32> {
    Ok(mode & !me()?.umask.load(Ordering::Relaxed))
}

pub fn openat(dirfd: i32, upath: usize, flags: u32, mode: u32) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    let start = start_dir(dirfd, &path)?;
    let f = vfs::open(&start, &path, flags & !O_CLOEXEC, masked(mode)?)?;
    install(f, flags & O_CLOEXEC != 0)
}

pub fn close(fd: i32) -> SysResult {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    me()?.files.lock().close(fd as usize).map(|_| 0)
}

/// Reads through a kernel buffer in chunks, stopping early on a short read.
fn read_into_user(
    f: &File,
    ubuf: usize,
    len: usize,
    mut read: impl FnMut(&File, &mut [u8], u64) -> KResult<usize>,
) -> SysResult {
    let mut done = 0usize;
    let mut buf = vec![0u8; len.min(CHUNK)];
    while done < len {
        let want = (len - done).min(CHUNK);
        let n = match read(f, &mut buf[..want], done as u64) {
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        copy_to_user(ubuf + done, &buf[..n])?;
        done += n;
        // A device (pipe, socket) returns what it has: asking again
        // would wait for more.
        if n < want || matches!(f.inode.kind, InodeKind::Device(_)) {
            break;
        }
    }
    Ok(done as i64)
}

/// A write from user memory: straight into the page cache for a regular
/// file, in one call however long; through a kernel buffer, a chunk at a
/// time, for anything else.
fn write_from_user(
    f: &File,
    ubuf: usize,
    len: usize,
    mut write: impl FnMut(&File, WriteSource, u64) -> KResult<usize>,
) -> SysResult {
    if matches!(f.inode.kind, InodeKind::File(_)) {
        return Ok(write(f, WriteSource::User { addr: ubuf, len }, 0)? as i64);
    }
    let mut done = 0usize;
    let mut buf = vec![0u8; len.min(CHUNK)];
    while done < len {
        let want = (len - done).min(CHUNK);
        if let Err(e) = copy_from_user(&mut buf[..want], ubuf + done) {
            return if done == 0 { Err(e) } else { Ok(done as i64) };
        }
        let n = match write(f, WriteSource::Kernel(&buf[..want]), done as u64) {
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        done += n;
        if n < want {
            break;
        }
    }
    Ok(done as i64)
}

pub fn read(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    read_into_user(&f, ubuf, len, |f, b, _| f.read(b))
}

pub fn write(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    write_from_user(&f, ubuf, len, |f, b, _| f.write(b))
}

pub fn pread64(fd: i32, ubuf: usize, len: usize, off: i64) -> SysResult {
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    read_into_user(&f, ubuf, len, |f, b, done| f.pread(b, off as u64 + done))
}

pub fn pwrite64(fd: i32, ubuf: usize, len: usize, off: i64) -> SysResult {
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    write_from_user(&f, ubuf, len, |f, b, done| f.pwrite(b, off as u64 + done))
}

/// The (base, len) pairs of a user `struct iovec` array.
fn iovecs(uiov: usize, count: usize) -> KResult<Vec<(usize, usize)>> {
    if count > 1024 {
        return Err(Errno::EINVAL);
    }
    (0..count)
        .map(|i| {
            let pair: [u64; 2] = read_user(uiov + i * 16)?;
            Ok((pair[0] as usize, pair[1] as usize))
        })
        .collect()
}

pub fn readv(fd: i32, uiov: usize, count: usize) -> SysResult {
    let mut total = 0;
    for (base, len) in iovecs(uiov, count)? {
        let n = read(fd, base, len)?;
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

pub fn writev(fd: i32, uiov: usize, count: usize) -> SysResult {
    let mut total = 0;
    for (base, len) in iovecs(uiov, count)? {
        let n = write(fd, base, len)?;
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

pub fn lseek(fd: i32, off: i64, whence: u32) -> SysResult {
    file(fd)?.lseek(off, whence).map(|p| p as i64)
}

pub fn ftruncate(fd: i32, len: i64) -> SysResult {
    file(fd)?.ftruncate(len).map(|_| 0)
}

pub fn fallocate(fd: i32, mode: u32, off: i64, len: i64) -> SysResult {
    file(fd)?.fallocate(mode, off, len).map(|_| 0)
}

pub fn getdents64(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    let mut buf = vec![0u8; len.min(CHUNK)];
    let n = f.getdents64(&mut buf)?;
    copy_to_user(ubuf, &buf[..n])?;
    Ok(n as i64)
}

fn stat_out(inode: &Inode, ustat: usize) -> SysResult {
    let mut st = inode.stat();
    if let InodeKind::Device(_) = &inode.kind {
        st.st_mode = inode.mode;
    }
    // SAFETY: Stat is repr(C) plain data with explicit padding fields.
    let bytes = unsafe {
        core::slice::from_raw_parts(&st as *const _ as *const u8, core::mem::size_of_val(&st))
    };
    copy_to_user(ustat, bytes).map(|_| 0)
}

pub fn fstat(fd: i32, ustat: usize) -> SysResult {
    stat_out(&file(fd)?.inode, ustat)
}

pub fn newfstatat(dirfd: i32, upath: usize, ustat: usize, flags: u32) -> SysResult {
    const AT_NO_AUTOMOUNT: u32 = 0x800;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT) != 0 {
        return Err(Errno::EINVAL);
    }
    let path = path_arg(upath)?;
    if path.is_empty() {
        return if flags & AT_EMPTY_PATH != 0 {
            fstat(dirfd, ustat)
        } else {
            Err(Errno::ENOENT)
        };
    }
    let start = start_dir(dirfd, &path)?;
    let inode = vfs::lookup(&start, &path, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    stat_out(&inode, ustat)
}

/// umask(2): sets the creation mask, returns the old one.
pub fn umask(mask: u32) -> SysResult {
    Ok(me()?.umask.swap(mask & 0o777, Ordering::Relaxed) as i64)
}

/// fsync(2) and fdatasync(2): tmpfs keeps everything in memory, so there
/// is nothing to write back (Linux: `noop_fsync`); EINVAL for a file with
/// nothing to sync, a pipe or the console, as Linux says for them.
pub fn fsync(fd: i32) -> SysResult {
    match file(fd)?.inode.kind {
        InodeKind::File(_) | InodeKind::Dir(_) => Ok(0),
        _ => Err(Errno::EINVAL),
    }
}

/// syncfs(2): nothing to write back either, for any open file.
pub fn syncfs(fd: i32) -> SysResult {
    file(fd).map(|_| 0)
}

/// faccessat2(2), and faccessat with no flags: may the caller reach `path`
/// as `mode` (F_OK, or R_OK | W_OK | X_OK) asks? (Linux: `do_faccessat`.)
/// Every process runs as root, which Linux lets read and write anything;
/// execute needs a directory or an execute bit.
pub fn faccessat2(dirfd: i32, upath: usize, mode: u32, flags: u32) -> SysResult {
    const AT_EACCESS: u32 = 0x200;
    const X_OK: u32 = 1;
    if mode & !7 != 0 || flags & !(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let path = path_arg(upath)?;
    let inode = if path.is_empty() {
        if flags & AT_EMPTY_PATH == 0 {
            return Err(Errno::ENOENT);
        }
        match dirfd {
            AT_FDCWD => me()?.cwd.lock().clone(),
            fd => file(fd)?.inode.clone(),
        }
    } else {
        let start = start_dir(dirfd, &path)?;
        vfs::lookup(&start, &path, flags & AT_SYMLINK_NOFOLLOW == 0)?
    };
    if mode & X_OK != 0 && !inode.is_dir() && inode.mode & 0o111 == 0 {
        return Err(Errno::EACCES);
    }
    Ok(0)
}

/// mount(2), for tmpfs only (Linux: `do_mount` -> `do_new_mount`): ENODEV
/// for any other type, EINVAL for flags that ask for more than a new mount
/// (remount, bind, move, propagation changes).
pub fn mount(_usource: usize, utarget: usize, utype: usize, flags: u64, udata: usize) -> SysResult {
    const MS_REMOUNT: u64 = 32;
    const MS_BIND: u64 = 4096;
    const MS_MOVE: u64 = 8192;
    const MS_PROPAGATION: u64 = (1 << 15) | (1 << 17) | (1 << 18) | (1 << 19) | (1 << 20);
    let target = nonempty_path_arg(utarget)?;
    let fstype = strncpy_from_user(utype, 64)?;
    let options = if udata == 0 {
        String::new()
    } else {
        strncpy_from_user(udata, PAGE_SIZE - 1)?
    };
    if flags & (MS_REMOUNT | MS_BIND | MS_MOVE | MS_PROPAGATION) != 0 {
        return Err(Errno::EINVAL);
    }
    if fstype != "tmpfs" {
        return Err(Errno::ENODEV);
    }
    tmpfs::mount_over(&start_dir(AT_FDCWD, &target)?, &target, &options).map(|_| 0)
}

/// umount2(2) of a tmpfs mount(2) made (flags beyond MNT_DETACH: EINVAL).
pub fn umount2(utarget: usize, flags: u32) -> SysResult {
    const MNT_FORCE: u32 = 1;
    const MNT_DETACH: u32 = 2;
    if flags & !(MNT_FORCE | MNT_DETACH) != 0 {
        return Err(Errno::EINVAL);
    }
    let target = nonempty_path_arg(utarget)?;
    tmpfs::umount(&start_dir(AT_FDCWD, &target)?, &target).map(|_| 0)
}

pub fn mkdirat(dirfd: i32, upath: usize, mode: u32) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    vfs::mkdir(&start_dir(dirfd, &path)?, &path, masked(mode)?).map(|_| 0)
}

pub fn unlinkat(dirfd: i32, upath: usize, flags: u32) -> SysResult {
    if flags & !AT_REMOVEDIR != 0 {
        return Err(Errno::EINVAL);
    }
    let path = nonempty_path_arg(upath)?;
    let start = start_dir(dirfd, &path)?;
    if flags & AT_REMOVEDIR != 0 {
        vfs::rmdir(&start, &path).map(|_| 0)
    } else {
        vfs::unlink(&start, &path).map(|_| 0)
    }
}

pub fn renameat2(olddir: i32, uold: usize, newdir: i32, unew: usize, flags: u32) -> SysResult {
    const RENAME_NOREPLACE: u32 = 1;
    if flags & !RENAME_NOREPLACE != 0 {
        return Err(Errno::EINVAL);
    }
    let (old, new) = (nonempty_path_arg(uold)?, nonempty_path_arg(unew)?);
    let old_start = start_dir(olddir, &old)?;
    let new_start = start_dir(newdir, &new)?;
    if flags & RENAME_NOREPLACE != 0 && vfs::lookup(&new_start, &new, false).is_ok() {
        return Err(Errno::EEXIST);
    }
    vfs::rename_at(&old_start, &old, &new_start, &new).map(|_| 0)
}

pub fn dup(fd: i32) -> SysResult {
    let f = file(fd)?;
    install(f, false)
}

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
        _ => Err(Errno::EINVAL),
    }
}

pub fn ioctl(fd: i32, cmd: u32, arg: usize) -> SysResult {
    match file(fd)?.ioctl(cmd)? {
        Some(bytes) => copy_to_user(arg, &bytes).map(|_| 0),
        None => Ok(0),
    }
}

pub fn pipe2(ufds: usize, flags: u32) -> SysResult {
    if flags & !(O_CLOEXEC | vfs::O_NONBLOCK) != 0 {
        return Err(Errno::EINVAL);
    }
    let pipe = Pipe::new();
    let inode = Inode::new(S_IFIFO | 0o600, InodeKind::Device(pipe));
    let nonblock = flags & vfs::O_NONBLOCK;
    let r = File::new(inode.clone(), vfs::O_RDONLY | nonblock)?;
    let w = File::new(inode, vfs::O_WRONLY | nonblock)?;
    let cloexec = flags & O_CLOEXEC != 0;
    let p = me()?;
    let rfd = install(r, cloexec)? as usize;
    let wfd = match install(w, cloexec) {
        Ok(fd) => fd as usize,
        Err(e) => {
            let _ = p.files.lock().close(rfd);
            return Err(e);
        }
    };
    if let Err(e) = write_user(ufds, &[rfd as i32, wfd as i32]) {
        let mut files = p.files.lock();
        let _ = files.close(rfd);
        let _ = files.close(wfd);
        return Err(e);
    }
    Ok(0)
}

pub fn getcwd(ubuf: usize, size: usize) -> SysResult {
    let cwd = me()?.cwd.lock().clone();
    let path = vfs::path_of(&cwd);
    if path.len() + 1 > size {
        return Err(Errno::ERANGE);
    }
    let mut bytes = path.into_bytes();
    bytes.push(0);
    copy_to_user(ubuf, &bytes)?;
    Ok(bytes.len() as i64)
}

pub fn chdir(upath: usize) -> SysResult {
    let path = path_arg(upath)?;
    let p = me()?;
    let start = p.cwd.lock().clone();
    let dir = vfs::lookup(&start, &path, true)?;
    dir.dir()?;
    *p.cwd.lock() = dir;
    Ok(0)
}

pub fn readlinkat(dirfd: i32, upath: usize, ubuf: usize, size: usize) -> SysResult {
    let path = path_arg(upath)?;
    if size == 0 {
        return Err(Errno::EINVAL);
    }
    let target = if path == "/proc/self/exe" {
        me()?.exe.lock().clone()
    } else {
        let inode = vfs::lookup(&start_dir(dirfd, &path)?, &path, false)?;
        match &inode.kind {
            InodeKind::Symlink(t) => t.clone(),
            _ => return Err(Errno::EINVAL),
        }
    };
    let n = target.len().min(size);
    copy_to_user(ubuf, &target.as_bytes()[..n])?;
    Ok(n as i64)
}

pub fn memfd_create(uname: usize, flags: u32) -> SysResult {
    let name = strncpy_from_user(uname, 249).map_err(|e| {
        if e == Errno::ENAMETOOLONG {
            Errno::EINVAL
        } else {
            e
        }
    })?;
    let f = tmpfs::memfd_create(&name, flags)?;
    install(f, flags & tmpfs::MFD_CLOEXEC != 0)
}

/// fds 0, 1 and 2 of init: the console.
pub fn console_files() -> KResult<[Arc<File>; 3]> {
    let inode = Inode::new(S_IFCHR | 0o620, InodeKind::Device(Arc::new(Console)));
    Ok([
        File::new(inode.clone(), vfs::O_RDONLY)?,
        File::new(inode.clone(), vfs::O_WRONLY)?,
        File::new(inode, vfs::O_WRONLY)?,
    ])
}
