//! Mounting (Linux: `fs/namespace.c`, `fs/fsopen.c`): mount(2) and
//! umount2(2), and the new mount API, fsopen(2), fsconfig(2), fsmount(2)
//! and move_mount(2), for the file systems `fs::fs_context` can make.
//! Each needs CAP_SYS_ADMIN (EPERM), as on Linux.

use alloc::string::String;
use alloc::sync::Arc;

use super::fs::{file, install, nonempty_path_arg, start_dir, AT_FDCWD};
use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::fs::fs_context::{self, FsContext, Value};
use crate::fs::vfs::{self, File, Inode, InodeKind, O_DIRECTORY, O_RDONLY, O_RDWR};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::uaccess::{copy_from_user, strncpy_from_user};
use crate::task::cred::CAP_SYS_ADMIN;
use uapi::mount::{
    FSMOUNT_CLOEXEC, FSOPEN_CLOEXEC, MNT_DETACH, MNT_FORCE, MOVE_MOUNT_F_EMPTY_PATH,
    MOVE_MOUNT_T_EMPTY_PATH, MS_BIND, MS_MOVE, MS_REMOUNT,
};

/// EPERM unless the caller may mount (Linux: `may_mount`).
fn may_mount() -> KResult<()> {
    if crate::task::capable(CAP_SYS_ADMIN) {
        Ok(())
    } else {
        Err(Errno::EPERM)
    }
}

/// mount(2) of a new tmpfs or /proc (Linux: `do_mount` -> `do_new_mount`):
/// ENODEV for any other type, EINVAL for flags that ask for more than a
/// new mount (remount, bind, move, propagation changes) or a bad option.
pub fn mount(usource: usize, utarget: usize, utype: usize, flags: u64, udata: usize) -> SysResult {
    // MS_UNBINDABLE, MS_PRIVATE, MS_SLAVE, MS_SHARED (1 << 15 is
    // MS_SILENT, which busybox's mount always passes).
    const MS_PROPAGATION: u64 = (1 << 17) | (1 << 18) | (1 << 19) | (1 << 20);
    may_mount()?;
    let target = nonempty_path_arg(utarget)?;
    let source = match usource {
        0 => String::from("none"),
        u => strncpy_from_user(u, PAGE_SIZE - 1)?,
    };
    let fstype = strncpy_from_user(utype, 64)?;
    let options = if udata == 0 {
        String::new()
    } else {
        strncpy_from_user(udata, PAGE_SIZE - 1)?
    };
    if flags & (MS_REMOUNT | MS_BIND | MS_MOVE | MS_PROPAGATION) != 0 {
        return Err(Errno::EINVAL);
    }
    let (fstype, root, shown) = fs_context::new_fs(&fstype, &options)?;
    let covered = vfs::lookup(&start_dir(AT_FDCWD, &target)?, &target, true)?;
    vfs::mount_over(covered, root, fstype, &source, &shown).map(|_| 0)
}

/// umount2(2) of a mount mount(2) or move_mount(2) made (flags beyond
/// MNT_DETACH: EINVAL).
pub fn umount2(utarget: usize, flags: u32) -> SysResult {
    may_mount()?;
    if flags & !(MNT_FORCE | MNT_DETACH) != 0 {
        return Err(Errno::EINVAL);
    }
    let target = nonempty_path_arg(utarget)?;
    vfs::umount(&start_dir(AT_FDCWD, &target)?, &target).map(|_| 0)
}

/// The longest key or string value fsconfig takes, with its NUL (Linux:
/// `strndup_user(_key, 256)`).
const PARAM_MAX: usize = 256;

/// fsopen(2): a context for a new file system of type `uname` (Linux:
/// `SYSCALL_DEFINE2(fsopen)`). EINVAL for flags but FSOPEN_CLOEXEC,
/// ENODEV for an unknown type.
pub fn fsopen(uname: usize, flags: u32) -> SysResult {
    may_mount()?;
    if flags & !FSOPEN_CLOEXEC != 0 {
        return Err(Errno::EINVAL);
    }
    let name = strncpy_from_user(uname, PAGE_SIZE - 1)?;
    let context = FsContext::new(fs_context::fs_type(&name)?);
    let inode = Inode::new(0o600, InodeKind::Device(context));
    install(File::new(inode, O_RDWR)?, flags & FSOPEN_CLOEXEC != 0)
}

/// The context open at `fd`: EBADF if none is, EINVAL for another file.
fn context_at(fd: i32) -> KResult<Arc<FsContext>> {
    file(fd)?.device::<FsContext>().ok_or(Errno::EINVAL)
}

/// A key or string parameter from user memory: EINVAL if longer than
/// `PARAM_MAX` less its NUL.
fn param_arg(uaddr: usize) -> KResult<String> {
    strncpy_from_user(uaddr, PARAM_MAX - 1).map_err(|e| match e {
        Errno::ENAMETOOLONG => Errno::EINVAL,
        e => e,
    })
}

/// fsconfig(2) (Linux: `SYSCALL_DEFINE5(fsconfig)`): `cmd` sets the
/// parameter `ukey` to a flag, a string, a blob of `aux` bytes, a path or
/// a descriptor, or creates the file system. The arguments each command
/// must and must not have are checked first (EINVAL), then the descriptor
/// (EBADF, EINVAL for another file); EOPNOTSUPP for an unknown command.
pub fn fsconfig(fd: i32, cmd: u32, ukey: usize, uvalue: usize, aux: i32) -> SysResult {
    const SET_FLAG: u32 = 0;
    const SET_STRING: u32 = 1;
    const SET_BINARY: u32 = 2;
    const SET_PATH: u32 = 3;
    const SET_PATH_EMPTY: u32 = 4;
    const SET_FD: u32 = 5;
    const CMD_CREATE: u32 = 6;
    const CMD_RECONFIGURE: u32 = 7;
    const CMD_CREATE_EXCL: u32 = 8;
    if fd < 0 {
        return Err(Errno::EINVAL);
    }
    let (key, value) = (ukey != 0, uvalue != 0);
    let args_ok = match cmd {
        SET_FLAG => key && !value && aux == 0,
        SET_STRING => key && value && aux == 0,
        SET_BINARY => key && value && aux > 0 && aux <= 1 << 20,
        SET_PATH | SET_PATH_EMPTY => key && value && (aux == AT_FDCWD || aux >= 0),
        SET_FD => key && !value && aux >= 0,
        CMD_CREATE | CMD_CREATE_EXCL | CMD_RECONFIGURE => !key && !value && aux == 0,
        _ => return Err(Errno::EOPNOTSUPP),
    };
    if !args_ok {
        return Err(Errno::EINVAL);
    }
    let context = context_at(fd)?;
    match cmd {
        CMD_CREATE | CMD_CREATE_EXCL => return context.create().map(|_| 0),
        // A new file system has no superblock to reconfigure yet.
        CMD_RECONFIGURE => return Err(Errno::EBUSY),
        _ => {}
    }
    let key = param_arg(ukey)?;
    let value = match cmd {
        SET_FLAG => Value::Flag,
        SET_STRING => Value::String(param_arg(uvalue)?),
        SET_BINARY => {
            let mut blob = crate::mm::heap::try_zeroed(aux as usize)?;
            copy_from_user(&mut blob, uvalue)?;
            Value::Other
        }
        SET_FD => {
            file(aux)?;
            Value::Other
        }
        _ => Value::Other,
    };
    context.set_param(&key, value).map(|_| 0)
}

/// fsmount(2): the created file system of context `fd` as a detached
/// mount, whose root the new descriptor is open on (Linux opens it
/// O_PATH; here it is a read-only directory descriptor). EINVAL for flags
/// but FSMOUNT_CLOEXEC, or attributes beyond the access-time ones, which
/// this kernel does not keep.
pub fn fsmount(fd: i32, flags: u32, attr_flags: u32) -> SysResult {
    // MOUNT_ATTR_RELATIME is 0; NOATIME and STRICTATIME.
    const MOUNT_ATTR_ATIME: u32 = 0x10 | 0x20;
    may_mount()?;
    if flags & !FSMOUNT_CLOEXEC != 0 || attr_flags & !MOUNT_ATTR_ATIME != 0 {
        return Err(Errno::EINVAL);
    }
    if attr_flags == MOUNT_ATTR_ATIME {
        return Err(Errno::EINVAL);
    }
    let root = context_at(fd)?.mount()?;
    install(
        File::new(root, O_RDONLY | O_DIRECTORY)?,
        flags & FSMOUNT_CLOEXEC != 0,
    )
}

/// The inode `upath` names from `dirfd`, or with `empty` (the
/// `*_EMPTY_PATH` flag) and an empty path the file `dirfd` is open on.
fn at_path(dirfd: i32, upath: usize, empty: bool) -> KResult<Arc<Inode>> {
    let path = super::fs::path_arg(upath)?;
    if path.is_empty() {
        if !empty {
            return Err(Errno::ENOENT);
        }
        return match dirfd {
            AT_FDCWD => Ok(super::fs::me()?.cwd.lock().clone()),
            fd => Ok(file(fd)?.inode.clone()),
        };
    }
    vfs::lookup(&start_dir(dirfd, &path)?, &path, true)
}

/// move_mount(2) of a detached mount fsmount made onto the directory
/// `to_path` names (Linux: `do_move_mount`). EINVAL for unknown flags, or
/// for a source that is no detached mount: moving a mounted file system
/// elsewhere is not supported here.
pub fn move_mount(
    from_dfd: i32,
    from_path: usize,
    to_dfd: i32,
    to_path: usize,
    flags: u32,
) -> SysResult {
    // F_SYMLINKS, F_AUTOMOUNTS, F_EMPTY_PATH, the T_ three, SET_GROUP and
    // BENEATH.
    const MOVE_MOUNT_MASK: u32 = 0x377;
    may_mount()?;
    if flags & !MOVE_MOUNT_MASK != 0 {
        return Err(Errno::EINVAL);
    }
    let root = at_path(from_dfd, from_path, flags & MOVE_MOUNT_F_EMPTY_PATH != 0)?;
    let covered = at_path(to_dfd, to_path, flags & MOVE_MOUNT_T_EMPTY_PATH != 0)?;
    fs_context::attach(&root, |fstype, source, options| {
        vfs::mount_over(covered, root.clone(), fstype, source, options)
    })
    .map(|_| 0)
}
