//! File system calls on the VFS, one file per Linux source file:
//! `open.rs` (`fs/open.c`), `read_write.rs` (`fs/read_write.c`),
//! `namei.rs` (`fs/namei.c`), `stat.rs` (`fs/stat.c`, `fs/statfs.c`) and
//! `file.rs` (`fs/file.c`, `fs/fcntl.c`, `fs/ioctl.c`, `fs/locks.c`),
//! `xattr.rs` (`fs/xattr.c`).
//! Here: what they share (descriptor and path arguments, the `*at` rules)
//! and the calls whose Linux files hold little else: getdents64
//! (`fs/readdir.c`), fsync and syncfs (`fs/sync.c`), pipe2 (`fs/pipe.c`),
//! getcwd (`fs/d_path.c`), memfd_create (`mm/memfd.c`) and utimensat
//! (`fs/utimes.c`).

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
    copy_from_user, copy_to_user, read_user, strncpy_from_user, write_user, ReadDest, WriteSource,
};
use crate::net::unix::UnixSocket;
use crate::task::current_process;
use crate::task::process::Process;
use uapi::fcntl::{
    AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, FD_CLOEXEC, F_DUPFD, F_GETLK, UTIME_NOW, UTIME_OMIT,
};
pub(super) use uapi::fcntl::{AT_FDCWD, O_CLOEXEC};
use uapi::statfs::Statfs;

pub mod file;
pub mod namei;
pub mod open;
pub mod read_write;
pub mod stat;
pub mod xattr;

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

/// getdents64(2): the entries of directory `fd` from its position on, as
/// `struct linux_dirent64` records, as many as fit in `len` bytes at
/// `ubuf`; returns the bytes written, 0 at the end.
pub fn getdents64(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    let mut buf = heap::bounce_buffer(len, heap::BOUNCE_MAX)?;
    let n = f.getdents64(&mut buf)?;
    copy_to_user(ubuf, &buf[..n])?;
    Ok(n as i64)
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

/// utimensat(2) (Linux: `do_utimes`): NULL `times` or UTIME_NOW means now,
/// UTIME_OMIT leaves a time alone; a NULL path means the file `dirfd`
/// (glibc's futimens).
pub fn utimensat(dirfd: i32, upath: usize, utimes: usize, flags: u32) -> SysResult {
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
