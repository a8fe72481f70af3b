//! The extended-attribute calls, each by path (following a final link),
//! by path without following it (`l...`) and by descriptor (`f...`)
//! (Linux: `fs/xattr.c`'s system calls); the rules are `vfs::xattr`'s.

use super::*;
use crate::fs::vfs::xattr;
use crate::mm::uaccess::strncpy_bytes_from_user;
use uapi::limits::{XATTR_LIST_MAX, XATTR_NAME_MAX, XATTR_SIZE_MAX};
use uapi::xattr::{XATTR_CREATE, XATTR_REPLACE};

/// Which file a call names: a path, followed to the end or not, or a
/// descriptor.
#[derive(Clone, Copy)]
pub enum Target {
    /// setxattr, getxattr, ...: the path, a final link followed.
    Path(usize),
    /// lsetxattr, ...: the path, a final link itself.
    LinkPath(usize),
    /// fsetxattr, ...: the open file.
    Fd(i32),
}

impl Target {
    /// The inode named (Linux: `user_path_at` or `fdget`).
    fn inode(self) -> KResult<Arc<Inode>> {
        let (upath, follow) = match self {
            Target::Fd(fd) => return Ok(file(fd)?.inode.clone()),
            Target::Path(upath) => (upath, true),
            Target::LinkPath(upath) => (upath, false),
        };
        let path = nonempty_path_arg(upath)?;
        vfs::lookup(&start_dir(AT_FDCWD, &path)?, &path, follow)
    }
}

/// An attribute name from user memory: ERANGE if empty or longer than
/// `XATTR_NAME_MAX` (Linux: `import_xattr_name`).
fn name_arg(uname: usize) -> KResult<Vec<u8>> {
    match strncpy_bytes_from_user(uname, XATTR_NAME_MAX) {
        Ok(name) if name.is_empty() => Err(Errno::ERANGE),
        Err(Errno::ENAMETOOLONG) => Err(Errno::ERANGE),
        r => r,
    }
}

/// Copies `data` out to a caller's buffer of `size` bytes, or only says
/// how long it is when `size` is 0; ERANGE if it does not fit.
fn give(data: &[u8], ubuf: usize, size: usize) -> SysResult {
    if size != 0 {
        if data.len() > size {
            return Err(Errno::ERANGE);
        }
        copy_to_user(ubuf, data)?;
    }
    Ok(data.len() as i64)
}

/// setxattr(2), lsetxattr(2), fsetxattr(2): sets attribute `uname` to the
/// `size` bytes at `uvalue`. The arguments are checked before the file is
/// looked up, as Linux's `setxattr_copy` does.
pub fn setxattr(target: Target, uname: usize, uvalue: usize, size: usize, flags: u32) -> SysResult {
    if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
        return Err(Errno::EINVAL);
    }
    let name = name_arg(uname)?;
    if size > XATTR_SIZE_MAX {
        return Err(Errno::E2BIG);
    }
    let mut value = Vec::new();
    value.try_reserve(size).map_err(|_| Errno::ENOMEM)?;
    value.resize(size, 0);
    copy_from_user(&mut value, uvalue)?;
    xattr::set(&*target.inode()?, &name, &value, flags)?;
    Ok(0)
}

/// getxattr(2), lgetxattr(2), fgetxattr(2): attribute `uname`'s value into
/// the `size` bytes at `uvalue`, or its length when `size` is 0.
pub fn getxattr(target: Target, uname: usize, uvalue: usize, size: usize) -> SysResult {
    let name = name_arg(uname)?;
    let value = xattr::get(&*target.inode()?, &name)?;
    give(&value, uvalue, size.min(XATTR_SIZE_MAX))
}

/// listxattr(2), llistxattr(2), flistxattr(2): the names set, each ending
/// in a NUL, into the `size` bytes at `ulist`, or their length when `size`
/// is 0.
pub fn listxattr(target: Target, ulist: usize, size: usize) -> SysResult {
    let names = xattr::list(&*target.inode()?)?;
    give(&names, ulist, size.min(XATTR_LIST_MAX))
}

/// removexattr(2), lremovexattr(2), fremovexattr(2).
pub fn removexattr(target: Target, uname: usize) -> SysResult {
    let name = name_arg(uname)?;
    xattr::remove(&*target.inode()?, &name)?;
    Ok(0)
}
