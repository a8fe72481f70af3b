//! What a file and its file system are: stat(2), statx(2), readlinkat(2),
//! statfs(2) (Linux: `fs/stat.c`, `fs/statfs.c`).

use super::*;
use uapi::fcntl::{AT_NO_AUTOMOUNT, AT_STATX_SYNC_TYPE};
use uapi::magic::{PIPEFS_MAGIC, PROC_SUPER_MAGIC, SYSFS_MAGIC, TMPFS_MAGIC};
use uapi::stat::{dev_major, dev_minor, STATX_BASIC_STATS};

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

/// STATX_RESERVED: a mask bit kept for a bigger `struct statx` (EINVAL).
const STATX_RESERVED: u32 = 0x8000_0000;

/// statx(2): the `struct statx` of `upath` relative to `dirfd`, as
/// fstatat finds it; every basic field, whatever `mask` asks (Linux:
/// `do_statx`, `cp_statx`; it too may return more than was asked).
pub fn statx(dirfd: i32, upath: usize, flags: u32, mask: u32, ubuf: usize) -> SysResult {
    if mask & STATX_RESERVED != 0 || flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE {
        return Err(Errno::EINVAL);
    }
    let st = stat_at(dirfd, upath, flags & !AT_STATX_SYNC_TYPE)?.stat();
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
    put(128, &dev_major(st.st_rdev).to_ne_bytes());
    put(132, &dev_minor(st.st_rdev).to_ne_bytes());
    put(136, &dev_major(st.st_dev).to_ne_bytes());
    put(140, &dev_minor(st.st_dev).to_ne_bytes());
    copy_to_user(ubuf, &b)?;
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

/// The filesystem `inode` lives on, as statfs reports it (Linux: each
/// filesystem's `statfs`; `shmem_statfs` for tmpfs). /dev is devtmpfs, a
/// tmpfs, on Linux; pipes are on pipefs; anything else the kernel builds
/// is /proc, or /sys when it is found under /sys.
fn statfs_of(inode: &Arc<Inode>) -> Statfs {
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
