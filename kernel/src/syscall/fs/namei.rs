//! Making and removing names: directories, links, nodes, renames (Linux:
//! `fs/namei.c`).

use super::*;
use uapi::fcntl::{AT_REMOVEDIR, AT_SYMLINK_FOLLOW, RENAME_NOREPLACE};
use uapi::stat::{S_IFBLK, S_IFSOCK};

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

/// linkat(2) (Linux: `do_linkat`): the old path's last link is not
/// followed unless AT_SYMLINK_FOLLOW.
pub fn linkat(olddir: i32, uold: usize, newdir: i32, unew: usize, flags: u32) -> SysResult {
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
/// device or socket node: a character device opens its driver, found by
/// number (`devfs::chrdev`); a block device or socket node has none here
/// (opening one is ENXIO); a directory is EPERM, an unknown type EINVAL.
pub fn mknodat(dirfd: i32, upath: usize, mode: u32, dev: u32) -> SysResult {
    let path = nonempty_path_arg(upath)?;
    let start = start_dir(dirfd, &path)?;
    let perm = masked(mode & 0o7777)?;
    match mode & vfs::S_IFMT {
        0 | vfs::S_IFREG => vfs::create_file(&start, &path, vfs::S_IFREG | perm).map(|_| 0),
        t @ (S_IFIFO | S_IFCHR | S_IFBLK | S_IFSOCK) => {
            let rdev = if t == S_IFCHR || t == S_IFBLK { dev } else { 0 } as u64;
            let device = match t {
                S_IFCHR => crate::fs::devfs::chrdev(rdev),
                _ => None,
            };
            let device = device.unwrap_or_else(|| Arc::new(vfs::NoDevice));
            vfs::mknod(&start, &path, t | perm, rdev, device).map(|_| 0)
        }
        vfs::S_IFDIR => Err(Errno::EPERM),
        _ => Err(Errno::EINVAL),
    }
}
