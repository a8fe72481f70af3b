//! File system calls on the VFS (Linux: `fs/open.c`, `fs/read_write.c`,
//! `fs/namei.c`, `fs/stat.c`, `fs/fcntl.c`, `fs/pipe.c`, `fs/d_path.c`).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::{SysResult, MAX_RW_COUNT};
use crate::errno::{Errno, KResult};
use crate::fs::device::Pipe;
use crate::fs::tmpfs;
use crate::fs::vfs::permission::{self, MAY_EXEC, MAY_WRITE};
use crate::fs::vfs::{self, File, Inode, InodeKind, PATH_MAX, S_IFCHR, S_IFIFO};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::heap;
use crate::mm::uaccess::{
    copy_from_user, copy_to_user, read_user, strncpy_from_user, write_user, WriteSource,
};
use crate::net::unix::UnixSocket;
use crate::task::current_process;
use crate::task::process::Process;
use uapi::statfs::Statfs;

/// AT_FDCWD: a `dirfd` that means the current working directory.
pub(super) const AT_FDCWD: i32 = -100;
/// AT_REMOVEDIR: unlinkat removes a directory, as rmdir(2).
const AT_REMOVEDIR: u32 = 0x200;
/// AT_SYMLINK_NOFOLLOW: act on a symbolic link at the end of the path
/// itself, not on what it points to.
const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
/// AT_EMPTY_PATH: an empty path names `dirfd` itself.
const AT_EMPTY_PATH: u32 = 0x1000;
/// O_CLOEXEC: the new descriptor gets FD_CLOEXEC.
pub(super) const O_CLOEXEC: u32 = 0o2000000;
/// F_DUPFD: duplicate to the lowest free descriptor at or above `arg`.
const F_DUPFD: u32 = 0;
/// F_GETFD: the descriptor's flags (FD_CLOEXEC).
const F_GETFD: u32 = 1;
/// F_SETFD: set the descriptor's flags.
const F_SETFD: u32 = 2;
/// F_GETFL: the open file's access mode and status flags (`O_*`).
const F_GETFL: u32 = 3;
/// F_SETFL: set the open file's status flags (O_APPEND, O_NONBLOCK, ...).
const F_SETFL: u32 = 4;
/// F_DUPFD_CLOEXEC: F_DUPFD, with FD_CLOEXEC on the new descriptor.
const F_DUPFD_CLOEXEC: u32 = 1030;
/// FD_CLOEXEC: close the descriptor when the process execs.
const FD_CLOEXEC: u64 = 1;
/// Most bytes one read/write moves through the kernel buffer at a time.
const CHUNK: usize = 64 * 1024;

/// The calling process; EPERM from a kernel thread, which has none.
pub(super) fn me() -> KResult<Arc<Process>> {
    current_process().ok_or(Errno::EPERM)
}

/// The open file at the caller's descriptor `fd` (Linux: `fdget`); EBADF
/// if there is none.
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

/// As [`install`], at the lowest free descriptor at or above `min`
/// (F_DUPFD); EMFILE if that is not below RLIMIT_NOFILE.
fn install_from(file: Arc<File>, min: usize, cloexec: bool) -> SysResult {
    Ok(me()?.install_fd(file, min, cloexec)? as i64)
}

/// A path argument from user memory, at most `PATH_MAX` bytes with its
/// NUL (Linux: `getname`); it may be empty.
pub(super) fn path_arg(uaddr: usize) -> KResult<String> {
    strncpy_from_user(uaddr, PATH_MAX - 1)
}

/// A path that must not be empty (without AT_EMPTY_PATH, Linux says ENOENT
/// before looking at the directory fd).
pub(super) fn nonempty_path_arg(uaddr: usize) -> KResult<String> {
    let path = path_arg(uaddr)?;
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    Ok(path)
}

/// Where a path relative to `dirfd` starts (Linux: `path_init`).
pub(super) fn start_dir(dirfd: i32, path: &str) -> KResult<Arc<Inode>> {
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

/// Reads through a kernel buffer in chunks, stopping early on a short read.
fn read_into_user(
    f: &File,
    ubuf: usize,
    len: usize,
    mut read: impl FnMut(&File, &mut [u8], u64) -> KResult<usize>,
) -> SysResult {
    let len = len.min(MAX_RW_COUNT);
    let mut done = 0usize;
    let mut buf = heap::bounce_buffer(len, CHUNK)?;
    while done < len {
        let want = (len - done).min(buf.len());
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
    let len = len.min(MAX_RW_COUNT);
    if matches!(f.inode.kind, InodeKind::File(_)) {
        return Ok(write(f, WriteSource::User { addr: ubuf, len }, 0)? as i64);
    }
    let mut done = 0usize;
    let mut buf = heap::bounce_buffer(len, CHUNK)?;
    while done < len {
        let want = (len - done).min(buf.len());
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

/// read(2): up to `len` bytes from `fd`'s position into `ubuf`; returns
/// how many (Linux: `ksys_read`).
pub fn read(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    if UnixSocket::of_file(&f).is_some() {
        return super::net::sock_readv(fd, &[(ubuf, len)]);
    }
    read_into_user(&f, ubuf, len, |f, b, _| f.read(b))
}

/// write(2): up to `len` bytes from `ubuf` to `fd` at its position (its
/// end under O_APPEND); returns how many (Linux: `ksys_write`).
pub fn write(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    if UnixSocket::of_file(&f).is_some() {
        return super::net::sock_writev(fd, &[(ubuf, len)]);
    }
    write_from_user(&f, ubuf, len, |f, b, _| f.write(b))
}

/// pread64(2): read as [`read()`] does, but at offset `off`, leaving the
/// file position alone; EINVAL for a negative offset.
pub fn pread64(fd: i32, ubuf: usize, len: usize, off: i64) -> SysResult {
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    read_into_user(&f, ubuf, len, |f, b, done| f.pread(b, off as u64 + done))
}

/// pwrite64(2): write as [`write()`] does, but at offset `off`, leaving the
/// file position alone; EINVAL for a negative offset.
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
    let mut out = heap::try_vec(count)?;
    for i in 0..count {
        let pair: [u64; 2] = read_user(uiov + i * 16)?;
        out.push((pair[0] as usize, pair[1] as usize));
    }
    Ok(out)
}

/// readv(2): [`read()`] into each of the `count` buffers of the `iovec`
/// array at `uiov` in turn, stopping after a short read (Linux:
/// `do_readv`); on a socket, one receive into them all.
pub fn readv(fd: i32, uiov: usize, count: usize) -> SysResult {
    let iov = iovecs(uiov, count)?;
    if UnixSocket::of_file(&*file(fd)?).is_some() {
        return super::net::sock_readv(fd, &iov);
    }
    let mut total = 0;
    for (base, len) in iov {
        let n = read(fd, base, len)?;
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

/// writev(2): [`write()`] from each of the `count` buffers of the `iovec`
/// array at `uiov` in turn, stopping after a short write (Linux:
/// `do_writev`); on a socket, one send of them all.
pub fn writev(fd: i32, uiov: usize, count: usize) -> SysResult {
    let iov = iovecs(uiov, count)?;
    if UnixSocket::of_file(&*file(fd)?).is_some() {
        return super::net::sock_writev(fd, &iov);
    }
    let mut total = 0;
    for (base, len) in iov {
        let n = write(fd, base, len)?;
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

/// SPLICE_F_MOVE, SPLICE_F_NONBLOCK, SPLICE_F_MORE and SPLICE_F_GIFT: the
/// flags vmsplice knows (`include/linux/splice.h`).
const SPLICE_F_ALL: u32 = 0xf;
/// SPLICE_F_NONBLOCK: do not wait for room in the pipe.
const SPLICE_F_NONBLOCK: u32 = 0x2;

/// vmsplice(2): user memory into a pipe opened for writing, as much as
/// fits once there is room, or out of one opened for reading, as readv
/// (Linux: `vmsplice` in `fs/splice.c`). Where we simplify: Linux lends
/// the pages themselves to the pipe and a reader sees them as they are
/// when it reads; here they are copied at once, which a caller keeping
/// vmsplice's contract (leave the pages alone until they are read) cannot
/// tell apart. EBADF for a descriptor that is no pipe, EINVAL for an
/// unknown flag.
pub fn vmsplice(fd: i32, uiov: usize, count: usize, flags: u32) -> SysResult {
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    let pipe = f.device::<Pipe>().ok_or(Errno::EBADF)?;
    if !f.is_writable() {
        return readv(fd, uiov, count);
    }
    // No more than the pipe can hold: that is all one call moves.
    let room = pipe.capacity();
    let mut data = heap::try_vec(room)?;
    for (base, len) in iovecs(uiov, count)? {
        let n = len.min(room - data.len());
        let start = data.len();
        data.resize(start + n, 0);
        copy_from_user(&mut data[start..], base)?;
    }
    let nonblock = f.flags() & vfs::O_NONBLOCK != 0 || flags & SPLICE_F_NONBLOCK != 0;
    Ok(pipe.splice_in(&data, nonblock)? as i64)
}

/// lseek(2): move `fd`'s position to `off` from where `whence` says
/// (SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE); returns the new
/// position.
pub fn lseek(fd: i32, off: i64, whence: u32) -> SysResult {
    file(fd)?.lseek(off, whence).map(|p| p as i64)
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

/// getdents64(2): the entries of directory `fd` from its position on, as
/// `struct linux_dirent64` records, as many as fit in `len` bytes at
/// `ubuf`; returns the bytes written, 0 at the end.
pub fn getdents64(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    let mut buf = heap::bounce_buffer(len, CHUNK)?;
    let n = f.getdents64(&mut buf)?;
    copy_to_user(ubuf, &buf[..n])?;
    Ok(n as i64)
}

/// Copies `inode`'s `struct stat` to `ustat` in user memory (Linux:
/// `cp_new_stat`), with a device node's own mode.
fn stat_out(inode: &Inode, ustat: usize) -> SysResult {
    let mut st = inode.stat();
    if let InodeKind::Device(_) = &inode.kind {
        st.st_mode = inode.mode();
    }
    write_user(ustat, &st).map(|_| 0)
}

/// fstat(2): the `struct stat` of the file open at `fd`.
pub fn fstat(fd: i32, ustat: usize) -> SysResult {
    stat_out(&file(fd)?.inode, ustat)
}

/// newfstatat(2) (fstatat): the `struct stat` of `upath`, relative to
/// `dirfd`; a final symbolic link is followed unless AT_SYMLINK_NOFOLLOW,
/// and an empty path with AT_EMPTY_PATH means `dirfd` itself.
pub fn newfstatat(dirfd: i32, upath: usize, ustat: usize, flags: u32) -> SysResult {
    stat_out(&*stat_at(dirfd, upath, flags)?, ustat)
}

/// The inode fstatat and statx report: `upath` relative to `dirfd` as
/// `flags` say (Linux: `vfs_statx`'s look-up).
fn stat_at(dirfd: i32, upath: usize, flags: u32) -> KResult<Arc<Inode>> {
    const AT_NO_AUTOMOUNT: u32 = 0x800;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT) != 0 {
        return Err(Errno::EINVAL);
    }
    let path = path_arg(upath)?;
    if path.is_empty() {
        return if flags & AT_EMPTY_PATH != 0 {
            Ok(file(dirfd)?.inode.clone())
        } else {
            Err(Errno::ENOENT)
        };
    }
    let start = start_dir(dirfd, &path)?;
    vfs::lookup(&start, &path, flags & AT_SYMLINK_NOFOLLOW == 0)
}

/// AT_STATX_SYNC_TYPE: statx's two bits of how fresh the answer must be;
/// both set is EINVAL, any value is the same here (nothing is remote).
const AT_STATX_SYNC_TYPE: u32 = 0x6000;
/// STATX_RESERVED: a mask bit kept for a bigger `struct statx` (EINVAL).
const STATX_RESERVED: u32 = 0x8000_0000;
/// STATX_BASIC_STATS: the fields of `struct stat`, all that is filled in.
const STATX_BASIC_STATS: u32 = 0x7ff;

/// statx(2): the `struct statx` of `upath` relative to `dirfd`, as
/// fstatat finds it; every basic field, whatever `mask` asks (Linux:
/// `do_statx`, `cp_statx`; it too may return more than was asked).
pub fn statx(dirfd: i32, upath: usize, flags: u32, mask: u32, ubuf: usize) -> SysResult {
    if mask & STATX_RESERVED != 0 || flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE {
        return Err(Errno::EINVAL);
    }
    let st = stat_at(dirfd, upath, flags & !AT_STATX_SYNC_TYPE)?.stat();
    // The 64-bit device number's halves (glibc's `gnu_dev_major/minor`).
    let major = |d: u64| ((d >> 8) & 0xfff) as u32 | ((d >> 32) as u32 & !0xfff);
    let minor = |d: u64| (d & 0xff) as u32 | ((d >> 12) as u32 & !0xff);
    let mut b = [0u8; 256];
    let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &STATX_BASIC_STATS.to_ne_bytes());
    put(4, &(st.st_blksize as u32).to_ne_bytes());
    put(16, &st.st_nlink.to_ne_bytes());
    put(20, &st.st_uid.to_ne_bytes());
    put(24, &st.st_gid.to_ne_bytes());
    put(28, &(st.st_mode as u16).to_ne_bytes());
    put(32, &st.st_ino.to_ne_bytes());
    put(40, &st.st_size.to_ne_bytes());
    put(48, &st.st_blocks.to_ne_bytes());
    // Each `struct statx_timestamp`: i64 seconds, u32 nanoseconds, padding;
    // atime at 64, (no btime at 80), ctime at 96, mtime at 112.
    for (at, sec, nsec) in [
        (64, st.st_atime, st.st_atime_nsec),
        (96, st.st_ctime, st.st_ctime_nsec),
        (112, st.st_mtime, st.st_mtime_nsec),
    ] {
        put(at, &sec.to_ne_bytes());
        put(at + 8, &(nsec as u32).to_ne_bytes());
    }
    put(128, &major(st.st_rdev).to_ne_bytes());
    put(132, &minor(st.st_rdev).to_ne_bytes());
    put(136, &major(st.st_dev).to_ne_bytes());
    put(140, &minor(st.st_dev).to_ne_bytes());
    copy_to_user(ubuf, &b)?;
    Ok(0)
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
/// Asked with the real ids, as a set-user-ID program asks whether its
/// user may, unless AT_EACCESS: with the effective ones. Linux's
/// `access_override_creds`: the fs ids become the real ones, and the
/// capabilities are all permitted ones for a real root, none otherwise.
pub fn faccessat2(dirfd: i32, upath: usize, mode: u32, flags: u32) -> SysResult {
    const AT_EACCESS: u32 = 0x200;
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

/// mkdirat(2): make the directory `upath`, relative to `dirfd`, with
/// `mode` less the umask.
pub fn mkdirat(dirfd: i32, upath: usize, mode: u32) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    vfs::mkdir(&start_dir(dirfd, &path)?, &path, masked(mode)?).map(|_| 0)
}

/// unlinkat(2): remove the name `upath`, relative to `dirfd`; with
/// AT_REMOVEDIR, an empty directory.
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

/// renameat2(2): move `uold` (relative to `olddir`) to `unew` (relative
/// to `newdir`), replacing what is there unless RENAME_NOREPLACE
/// (EEXIST); any other flag is EINVAL.
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

/// pipe2(2): a new pipe; its read and its write descriptor are stored as
/// two ints at `ufds`. `flags`: O_CLOEXEC, O_NONBLOCK.
pub fn pipe2(ufds: usize, flags: u32) -> SysResult {
    if flags & !(O_CLOEXEC | vfs::O_NONBLOCK) != 0 {
        return Err(Errno::EINVAL);
    }
    let pipe = Pipe::new();
    let inode = Inode::new(S_IFIFO | 0o600, InodeKind::Device(pipe));
    inode.init_owner(None);
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

/// getcwd(2): the working directory's absolute path, with its NUL, into
/// `ubuf` of `size` bytes (ERANGE if it does not fit); returns the
/// length with the NUL, as the raw system call does.
pub fn getcwd(ubuf: usize, size: usize) -> SysResult {
    let cwd = me()?.cwd.lock().clone();
    let mut bytes = crate::ustr::to_bytes(&vfs::path_of(&cwd)).into_owned();
    bytes.push(0);
    if bytes.len() > size {
        return Err(Errno::ERANGE);
    }
    copy_to_user(ubuf, &bytes)?;
    Ok(bytes.len() as i64)
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

/// readlinkat(2): the target of the symbolic link `upath`, relative to
/// `dirfd`, into `ubuf`, cut to `size` bytes and without a NUL; returns
/// the bytes written. EINVAL for a zero `size` or a path that is no link.
pub fn readlinkat(dirfd: i32, upath: usize, ubuf: usize, size: usize) -> SysResult {
    let path = path_arg(upath)?;
    if size == 0 {
        return Err(Errno::EINVAL);
    }
    let target = vfs::lookup(&start_dir(dirfd, &path)?, &path, false)?.readlink()?;
    let target = crate::ustr::to_bytes(&target);
    let n = target.len().min(size);
    copy_to_user(ubuf, &target[..n])?;
    Ok(n as i64)
}

/// memfd_create(2): a new anonymous tmpfs file, in no directory, open
/// read-write at a new descriptor; `flags` are `MFD_*`. A name longer
/// than 249 bytes is EINVAL; MFD_HUGETLB, checked last as in Linux, is
/// ENOSYS (no hugetlbfs: Linux's `hugetlb_file_setup` without it).
pub fn memfd_create(uname: usize, flags: u32) -> SysResult {
    let flags = match tmpfs::memfd_check_flags(flags) {
        Err(Errno::EACCES) => {
            let p = me()?;
            println!(
                "{}[{}]: memfd_create() requires MFD_NOEXEC_SEAL with vm.memfd_noexec={}",
                p.comm(),
                p.pid,
                tmpfs::MEMFD_NOEXEC_SCOPE_NOEXEC_ENFORCED
            );
            return Err(Errno::EACCES);
        }
        result => result?,
    };
    let name = strncpy_from_user(uname, tmpfs::MFD_NAME_MAX).map_err(|e| {
        if e == Errno::ENAMETOOLONG {
            Errno::EINVAL
        } else {
            e
        }
    })?;
    if flags & tmpfs::MFD_HUGETLB != 0 {
        return Err(Errno::ENOSYS);
    }
    let f = tmpfs::memfd_create(&alloc::format!("memfd:{}", name), flags)?;
    install(f, flags & tmpfs::MFD_CLOEXEC != 0)
}

/// The inode an `*at` call names: `path` from `dirfd`, or with an empty
/// path and AT_EMPTY_PATH the file `dirfd` itself (the cwd for AT_FDCWD);
/// `follow`: follow a symbolic link at the end (Linux: `user_path_at`).
fn at_inode(dirfd: i32, upath: usize, flags: u32, follow: bool) -> KResult<Arc<Inode>> {
    let path = path_arg(upath)?;
    if path.is_empty() {
        if flags & AT_EMPTY_PATH == 0 {
            return Err(Errno::ENOENT);
        }
        return match dirfd {
            AT_FDCWD => Ok(me()?.cwd.lock().clone()),
            fd => Ok(file(fd)?.inode.clone()),
        };
    }
    vfs::lookup(&start_dir(dirfd, &path)?, &path, follow)
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

/// utimensat(2) (Linux: `do_utimes`): NULL `times` or UTIME_NOW means now,
/// UTIME_OMIT leaves a time alone; a NULL path means the file `dirfd`
/// (glibc's futimens).
pub fn utimensat(dirfd: i32, upath: usize, utimes: usize, flags: u32) -> SysResult {
    const UTIME_NOW: i64 = (1 << 30) - 1;
    const UTIME_OMIT: i64 = (1 << 30) - 2;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let times: Option<[[i64; 2]; 2]> = if utimes == 0 {
        None
    } else {
        Some(read_user(utimes)?)
    };
    let mut set = [None, None];
    let now = vfs::Timespec::now();
    for (i, t) in set.iter_mut().enumerate() {
        *t = match times {
            None => Some(now),
            Some(ts) => match ts[i][1] {
                UTIME_NOW => Some(now),
                UTIME_OMIT => None,
                0..=999_999_999 => Some(vfs::Timespec {
                    sec: ts[i][0],
                    nsec: ts[i][1] as u32,
                }),
                _ => return Err(Errno::EINVAL),
            },
        };
    }
    let inode = if upath == 0 && dirfd != AT_FDCWD {
        if flags & AT_SYMLINK_NOFOLLOW != 0 {
            return Err(Errno::EINVAL);
        }
        file(dirfd)?.inode.clone()
    } else {
        at_inode(dirfd, upath, flags, flags & AT_SYMLINK_NOFOLLOW == 0)?
    };
    if set == [None, None] {
        return Ok(0);
    }
    // Linux: `vfs_utimes` -> `setattr_prepare`: times of the caller's
    // choosing only for the owner (EPERM); now for anyone who may write.
    let cred = crate::task::current_cred();
    if !permission::owner_or_capable(&cred, inode.owner()) {
        let only_now =
            times.is_none_or(|ts| ts.iter().all(|t| matches!(t[1], UTIME_NOW | UTIME_OMIT)));
        if !only_now {
            return Err(Errno::EPERM);
        }
        inode.permission(MAY_WRITE)?;
    }
    inode.set_times(set[0], set[1]);
    Ok(0)
}

/// linkat(2) (Linux: `do_linkat`): the old path's last link is not
/// followed unless AT_SYMLINK_FOLLOW.
pub fn linkat(olddir: i32, uold: usize, newdir: i32, unew: usize, flags: u32) -> SysResult {
    const AT_SYMLINK_FOLLOW: u32 = 0x400;
    if flags & !(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let inode = at_inode(olddir, uold, flags, flags & AT_SYMLINK_FOLLOW != 0)?;
    let new = nonempty_path_arg(unew)?;
    vfs::link(&inode, &start_dir(newdir, &new)?, &new).map(|_| 0)
}

/// symlinkat(2).
pub fn symlinkat(utarget: usize, newdir: i32, upath: usize) -> SysResult {
    let target = path_arg(utarget)?;
    let path = nonempty_path_arg(upath)?;
    vfs::symlink(&target, &start_dir(newdir, &path)?, &path).map(|_| 0)
}

/// mknodat(2) (Linux: `do_mknodat`, as root): a regular file, a FIFO, or a
/// device or socket node (which has no driver or socket behind it here:
/// opening one is ENXIO); a directory is EPERM, an unknown type EINVAL.
pub fn mknodat(dirfd: i32, upath: usize, mode: u32, dev: u32) -> SysResult {
    const S_IFBLK: u32 = 0o060000;
    const S_IFSOCK: u32 = 0o140000;
    let path = nonempty_path_arg(upath)?;
    let start = start_dir(dirfd, &path)?;
    let perm = masked(mode & 0o7777)?;
    match mode & vfs::S_IFMT {
        0 | vfs::S_IFREG => vfs::create_file(&start, &path, vfs::S_IFREG | perm).map(|_| 0),
        t @ (S_IFIFO | S_IFCHR | S_IFBLK | S_IFSOCK) => {
            let rdev = if t == S_IFCHR || t == S_IFBLK { dev } else { 0 };
            vfs::mknod(&start, &path, t | perm, rdev as u64).map(|_| 0)
        }
        vfs::S_IFDIR => Err(Errno::EPERM),
        _ => Err(Errno::EINVAL),
    }
}

/// fchdir(2).
pub fn fchdir(fd: i32) -> SysResult {
    let dir = file(fd)?.inode.clone();
    dir.dir()?;
    dir.permission(MAY_EXEC)?;
    *me()?.cwd.lock() = dir;
    Ok(0)
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

/// The filesystem `inode` lives on, as statfs reports it (Linux: each
/// filesystem's `statfs`; `shmem_statfs` for tmpfs). /dev is devtmpfs, a
/// tmpfs, on Linux; pipes are on pipefs; anything else the kernel builds
/// is /proc, or /sys when it is found under /sys.
fn statfs_of(inode: &Arc<Inode>) -> Statfs {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    const PROC_SUPER_MAGIC: u64 = 0x9fa0;
    const SYSFS_MAGIC: u64 = 0x6265_6572;
    const PIPEFS_MAGIC: u64 = 0x5049_5045;
    const ST_VALID: u64 = 0x20;
    const ST_RELATIME: u64 = 0x1000;
    let base = Statfs {
        f_bsize: PAGE_SIZE as u64,
        f_frsize: PAGE_SIZE as u64,
        f_namelen: vfs::NAME_MAX as u64,
        f_flags: ST_VALID | ST_RELATIME,
        ..Statfs::default()
    };
    if let Some(sb) = inode.tmpfs_sb() {
        let (total, free) = sb.statfs_pages();
        let (inodes, free_inodes) = sb.statfs_inodes();
        return Statfs {
            f_type: TMPFS_MAGIC,
            f_blocks: total,
            f_bfree: free,
            f_bavail: free,
            f_files: inodes,
            f_ffree: free_inodes,
            ..base
        };
    }
    let f_type = match &inode.kind {
        InodeKind::Device(_) if inode.mode() & vfs::S_IFMT == S_IFIFO => PIPEFS_MAGIC,
        InodeKind::Device(_) => TMPFS_MAGIC,
        _ if under(&vfs::root(), "sys", inode) => SYSFS_MAGIC,
        _ => PROC_SUPER_MAGIC,
    };
    Statfs { f_type, ..base }
}

/// Is `inode` in the tree under `dir`/`name`?
fn under(dir: &Arc<Inode>, name: &str, inode: &Arc<Inode>) -> bool {
    fn search(d: &Arc<Inode>, inode: &Arc<Inode>, depth: usize) -> bool {
        if Arc::ptr_eq(d, inode) {
            return true;
        }
        let Ok(dir) = d.dir() else { return false };
        depth < 16 && dir.children().iter().any(|c| search(c, inode, depth + 1))
    }
    match dir.dir().ok().and_then(|d| d.lookup(name)) {
        Some(top) => search(&top, inode, 0),
        None => false,
    }
}

/// Copies the `struct statfs` of the filesystem `inode` is on to `ubuf`
/// in user memory.
fn statfs_out(inode: &Arc<Inode>, ubuf: usize) -> SysResult {
    write_user(ubuf, &statfs_of(inode)).map(|_| 0)
}

/// statfs(2).
pub fn statfs(upath: usize, ubuf: usize) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    statfs_out(
        &vfs::lookup(&start_dir(AT_FDCWD, &path)?, &path, true)?,
        ubuf,
    )
}

/// fstatfs(2).
pub fn fstatfs(fd: i32, ubuf: usize) -> SysResult {
    statfs_out(&file(fd)?.inode, ubuf)
}

/// Copies up to `len` bytes with `read` and `write` through a kernel
/// buffer, stopping at end of input or a short write; an error after some
/// bytes moved ends the copy with their count (Linux: `splice_direct_to_actor`).
fn copy_between(
    len: usize,
    mut read: impl FnMut(&mut [u8], u64) -> KResult<usize>,
    mut write: impl FnMut(&[u8], u64) -> KResult<usize>,
) -> SysResult {
    let len = len.min(MAX_RW_COUNT);
    let mut buf = heap::bounce_buffer(len, CHUNK)?;
    let mut done = 0usize;
    while done < len {
        let want = (len - done).min(buf.len());
        let n = match read(&mut buf[..want], done as u64) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        let mut written = 0;
        while written < n {
            match write(&buf[written..n], (done + written) as u64) {
                Ok(0) => break,
                Ok(w) => written += w,
                Err(e) if done + written == 0 => return Err(e),
                Err(_) => break,
            }
        }
        done += written;
        if written < n || n < want {
            break;
        }
    }
    Ok(done as i64)
}

/// sendfile(2) (Linux: `do_sendfile`): from `in_fd` at `*uoffset` (which
/// it advances, leaving the file position alone) or at its position, to
/// `out_fd` at its position. EBADF unless in is readable and out writable,
/// EINVAL for an O_APPEND output.
pub fn sendfile(out_fd: i32, in_fd: i32, uoffset: usize, count: usize) -> SysResult {
    let (inf, outf) = (file(in_fd)?, file(out_fd)?);
    if !inf.is_readable() || !outf.is_writable() {
        return Err(Errno::EBADF);
    }
    if outf.flags() & vfs::O_APPEND != 0 {
        return Err(Errno::EINVAL);
    }
    let write = |b: &[u8], _| outf.write(WriteSource::Kernel(b));
    if uoffset == 0 {
        return copy_between(count, |b, _| inf.read(b), write);
    }
    let off: i64 = read_user(uoffset)?;
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let n = copy_between(count, |b, done| inf.pread(b, off as u64 + done), write)?;
    write_user(uoffset, &(off + n))?;
    Ok(n)
}

/// copy_file_range(2) between regular files (Linux: `vfs_copy_file_range`
/// falling back to `splice`): each side at `*uoff` (advanced) or at its
/// file position; EINVAL for flags, non-regular files or an overlapping
/// copy within one file, EBADF for wrong access modes or O_APPEND output.
pub fn copy_file_range(
    fd_in: i32,
    uoff_in: usize,
    fd_out: i32,
    uoff_out: usize,
    len: usize,
    flags: u32,
) -> SysResult {
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    let (inf, outf) = (file(fd_in)?, file(fd_out)?);
    if !inf.is_readable() || !outf.is_writable() || outf.flags() & vfs::O_APPEND != 0 {
        return Err(Errno::EBADF);
    }
    for f in [&inf, &outf] {
        match f.inode.kind {
            InodeKind::File(_) => {}
            InodeKind::Dir(_) => return Err(Errno::EISDIR),
            _ => return Err(Errno::EINVAL),
        }
    }
    let offset = |uoff: usize, f: &File| -> KResult<i64> {
        if uoff == 0 {
            return f.lseek(0, vfs::SEEK_CUR).map(|p| p as i64);
        }
        match read_user::<i64>(uoff)? {
            o if o < 0 => Err(Errno::EINVAL),
            o => Ok(o),
        }
    };
    let (pos_in, pos_out) = (
        offset(uoff_in, &inf)? as u64,
        offset(uoff_out, &outf)? as u64,
    );
    let len = len.min(MAX_RW_COUNT) as u64;
    if Arc::ptr_eq(&inf.inode, &outf.inode) && pos_in < pos_out + len && pos_out < pos_in + len {
        return Err(Errno::EINVAL);
    }
    let n = copy_between(
        len as usize,
        |b, done| inf.pread(b, pos_in + done),
        |b, done| outf.pwrite(WriteSource::Kernel(b), pos_out + done),
    )?;
    for (uoff, f, pos) in [(uoff_in, &inf, pos_in), (uoff_out, &outf, pos_out)] {
        let end = pos as i64 + n;
        if uoff == 0 {
            f.lseek(end, vfs::SEEK_SET)?;
        } else {
            write_user(uoff, &end)?;
        }
    }
    Ok(n)
}

/// flock(2) (Linux: `sys_flock`): LOCK_SH, LOCK_EX or LOCK_UN, with LOCK_NB
/// EWOULDBLOCK (EAGAIN) rather than waiting; waiting is interruptible.
pub fn flock(fd: i32, op: u32) -> SysResult {
    const LOCK_SH: u32 = 1;
    const LOCK_EX: u32 = 2;
    const LOCK_NB: u32 = 4;
    const LOCK_UN: u32 = 8;
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

/// F_GETLK: would this POSIX record lock conflict? The answer is the
/// conflicting lock, or F_UNLCK.
const F_GETLK: u32 = 5;
/// F_SETLK: take or release a POSIX record lock, failing at once on a
/// conflict.
const F_SETLK: u32 = 6;
/// F_SETLKW: F_SETLK, but waiting (interruptibly) for a conflicting lock
/// to go.
const F_SETLKW: u32 = 7;
/// F_OFD_GETLK: F_GETLK for a lock owned by the open file, not the
/// process.
const F_OFD_GETLK: u32 = 36;
/// F_OFD_SETLK: F_SETLK for a lock owned by the open file.
const F_OFD_SETLK: u32 = 37;
/// F_OFD_SETLKW: F_SETLKW for a lock owned by the open file.
const F_OFD_SETLKW: u32 = 38;
/// F_SETPIPE_SZ: set a pipe's capacity.
const F_SETPIPE_SZ: u32 = 1031;
/// F_GETPIPE_SZ: a pipe's capacity.
const F_GETPIPE_SZ: u32 = 1032;
/// F_ADD_SEALS: add `F_SEAL_*` seals to a tmpfs file.
const F_ADD_SEALS: u32 = 1033;
/// F_GET_SEALS: the seals of a tmpfs file.
const F_GET_SEALS: u32 = 1034;

/// `struct flock` on arm64: l_type, l_whence (16 bits each), l_start,
/// l_len, l_pid, padding; 32 bytes.
#[derive(Clone, Copy, Default)]
struct Flock {
    /// F_RDLCK, F_WRLCK or F_UNLCK.
    l_type: i16,
    /// What `l_start` counts from: SEEK_SET, SEEK_CUR or SEEK_END.
    l_whence: i16,
    /// The range's start, in bytes from `l_whence` (may be negative).
    l_start: i64,
    /// The range's length in bytes: 0 for up to the end of the file and
    /// beyond, negative for the bytes before `l_start`.
    l_len: i64,
    /// F_GETLK's answer: the PID of the conflicting lock's holder (-1 for an
    /// OFD lock). OFD commands want 0 here.
    l_pid: i32,
}

impl Flock {
    /// Reads a `struct flock` from user memory at `uaddr`.
    fn read(uaddr: usize) -> KResult<Flock> {
        let raw: [u64; 4] = read_user(uaddr)?;
        Ok(Flock {
            l_type: raw[0] as i16,
            l_whence: (raw[0] >> 16) as i16,
            l_start: raw[1] as i64,
            l_len: raw[2] as i64,
            l_pid: raw[3] as i32,
        })
    }

    /// Writes this `struct flock` to user memory at `uaddr`, F_GETLK's answer.
    fn write(&self, uaddr: usize) -> KResult<()> {
        let raw: [u64; 4] = [
            (self.l_type as u16 as u64) | (self.l_whence as u16 as u64) << 16,
            self.l_start as u64,
            self.l_len as u64,
            self.l_pid as u32 as u64,
        ];
        write_user(uaddr, &raw)
    }
}

/// fcntl's record locks (Linux: `fcntl_getlk`, `fcntl_setlk`): POSIX locks
/// belong to the descriptor table, OFD locks to the open file.
fn fcntl_lock(f: &Arc<File>, cmd: u32, uarg: usize) -> SysResult {
    const F_RDLCK: i16 = 0;
    const F_WRLCK: i16 = 1;
    const F_UNLCK: i16 = 2;
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
