//! Extended attributes: named values beside a file's data (Linux:
//! `fs/xattr.c`'s checks, and tmpfs's store, `simple_xattr_*` there with
//! `mm/shmem.c`'s handlers).
//!
//! A name is `namespace.rest`. tmpfs keeps `security.`, `trusted.` and
//! `user.` attributes, listed by name from the last (Linux's tree
//! compares names the other way round); `trusted.` is for CAP_SYS_ADMIN
//! alone (others read nothing there and may not write), and `user.`
//! attributes belong to regular files and directories only. Any other namespace is EOPNOTSUPP, as is every name on a file
//! system without attributes (/proc, /sys, /dev, pipes). Each attribute
//! is charged to its mount's inode space (Linux: `free_ispace`), so
//! `nr_inodes=` bounds the memory they take.
//!
//! Where we simplify: the POSIX ACL names (`system.posix_acl_access`,
//! `system.posix_acl_default`) read as no ACL (ENODATA) and removing them
//! succeeds, but tmpfs here stores no ACL (setting one is EOPNOTSUPP);
//! no immutable or append-only inodes.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{Inode, S_IFDIR, S_IFMT, S_IFREG};
use crate::errno::{Errno, KResult};
use crate::fs::vfs::permission::{MAY_READ, MAY_WRITE};
use crate::sync::SpinLock;
use crate::task::cred::CAP_SYS_ADMIN;
use uapi::xattr::{XATTR_CREATE, XATTR_REPLACE};

/// The POSIX ACL attributes, which Linux routes to its ACL code.
const POSIX_ACL_NAMES: [&[u8]; 2] = [b"system.posix_acl_access", b"system.posix_acl_default"];

/// An inode's attributes, by full name (Linux: `struct simple_xattrs`).
pub struct SimpleXattrs(SpinLock<BTreeMap<Vec<u8>, Vec<u8>>>);

impl SimpleXattrs {
    /// None yet.
    pub const fn new() -> Self {
        SimpleXattrs(SpinLock::new(BTreeMap::new()))
    }

    /// Inode space all of them take (see [`space`]).
    pub fn space(&self) -> u64 {
        let map = self.0.lock();
        map.iter().map(|(n, v)| space(n, v.len())).sum()
    }
}

/// What an attribute costs its mount's inode space (Linux:
/// `simple_xattr_space`, 40 standing for its header).
fn space(name: &[u8], size: usize) -> u64 {
    (40 + name.len() + size) as u64
}

/// The namespaces a name can be in (Linux: the `xattr_handler`s).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Namespace {
    /// `security.`: a security module's labels, any file's.
    Security,
    /// `system.`: the kernel's own (POSIX ACLs); tmpfs stores none here.
    System,
    /// `trusted.`: for CAP_SYS_ADMIN only.
    Trusted,
    /// `user.`: anyone's, with the file's permissions.
    User,
}

/// The namespace of `name`, by its prefix (Linux: `xattr_resolve_name`):
/// EOPNOTSUPP for any other, EINVAL for a prefix with nothing after it.
fn namespace(name: &[u8]) -> KResult<Namespace> {
    let known = [
        (&b"security."[..], Namespace::Security),
        (b"system.", Namespace::System),
        (b"trusted.", Namespace::Trusted),
        (b"user.", Namespace::User),
    ];
    for (prefix, ns) in known {
        if let Some(rest) = name.strip_prefix(prefix) {
            return if rest.is_empty() {
                Err(Errno::EINVAL)
            } else {
                Ok(ns)
            };
        }
    }
    Err(Errno::EOPNOTSUPP)
}

/// May the caller read (MAY_READ) or write (MAY_WRITE) attribute `name`
/// of `inode` (Linux: `xattr_permission`)? `security.` and `system.` are
/// left to the file system; `trusted.` needs CAP_SYS_ADMIN, and without
/// it reads find nothing; `user.` is for regular files and directories
/// (a sticky directory's for its owner), with the file's own permission.
fn permission(inode: &Inode, name: &[u8], mask: u32) -> KResult<()> {
    let denied = if mask & MAY_WRITE != 0 {
        Errno::EPERM
    } else {
        Errno::ENODATA
    };
    match namespace(name) {
        Ok(Namespace::Security | Namespace::System) => return Ok(()),
        Ok(Namespace::Trusted) if !crate::task::capable(CAP_SYS_ADMIN) => return Err(denied),
        Ok(Namespace::User) => {
            let mode = inode.mode();
            let kind = mode & S_IFMT;
            if kind != S_IFREG && kind != S_IFDIR {
                return Err(denied);
            }
            let sticky = kind == S_IFDIR && mode & 0o1000 != 0;
            if sticky && mask & MAY_WRITE != 0 && !inode.owner_or_capable() {
                return Err(Errno::EPERM);
            }
        }
        _ => {}
    }
    inode.permission(mask)
}

/// Where a call on attribute `name` goes, once allowed.
enum Target<'a> {
    /// A POSIX ACL name: the ACL code's, which keeps no ACL here.
    Acl,
    /// A stored attribute of these.
    Stored(&'a SimpleXattrs),
}

/// The checks every call on one name makes (Linux: `xattr_permission`,
/// then `xattr_resolve_name`): may the caller `mask` it, does the file
/// system keep attributes (tmpfs), and is it a name it keeps?
fn resolve<'a>(inode: &'a Inode, name: &[u8], mask: u32) -> KResult<Target<'a>> {
    permission(inode, name, mask)?;
    if inode.tmpfs_sb().is_none() {
        return Err(Errno::EOPNOTSUPP);
    }
    if POSIX_ACL_NAMES.contains(&name) {
        return Ok(Target::Acl);
    }
    match namespace(name)? {
        Namespace::System => Err(Errno::EOPNOTSUPP),
        _ => Ok(Target::Stored(&inode.xattrs)),
    }
}

/// setxattr(2)'s work once the name and value are copied in (Linux:
/// `vfs_setxattr` -> `shmem_xattr_handler_set` -> `simple_xattr_set`).
pub fn set(inode: &Inode, name: &[u8], value: &[u8], flags: u32) -> KResult<()> {
    let Target::Stored(xattrs) = resolve(inode, name, MAY_WRITE)? else {
        return Err(Errno::EOPNOTSUPP);
    };
    let sb = inode.tmpfs_sb().ok_or(Errno::EOPNOTSUPP)?;
    let mut map = xattrs.0.lock();
    let old = map.get(name).map(Vec::len);
    match (old, flags) {
        (Some(_), XATTR_CREATE) => return Err(Errno::EEXIST),
        (None, XATTR_REPLACE) => return Err(Errno::ENODATA),
        _ => {}
    }
    let new = space(name, value.len());
    sb.charge_ispace(new)?;
    if let Some(size) = old {
        sb.uncharge_ispace(space(name, size));
    }
    let mut copy = Vec::new();
    let mut key = Vec::new();
    if copy.try_reserve(value.len()).is_err() || key.try_reserve(name.len()).is_err() {
        sb.uncharge_ispace(new);
        return Err(Errno::ENOMEM);
    }
    copy.extend_from_slice(value);
    key.extend_from_slice(name);
    map.insert(key, copy);
    Ok(())
}

/// getxattr(2)'s work: the value of `name` (Linux: `vfs_getxattr` ->
/// `simple_xattr_get`); ENODATA if it is not set.
pub fn get(inode: &Inode, name: &[u8]) -> KResult<Vec<u8>> {
    let Target::Stored(xattrs) = resolve(inode, name, MAY_READ)? else {
        return Err(Errno::ENODATA); // no ACL
    };
    let map = xattrs.0.lock();
    let value = map.get(name).ok_or(Errno::ENODATA)?;
    let mut copy = Vec::new();
    copy.try_reserve(value.len()).map_err(|_| Errno::ENOMEM)?;
    copy.extend_from_slice(value);
    Ok(copy)
}

/// listxattr(2)'s work: every name the caller may see, each followed by a
/// NUL, last name first (Linux: `simple_xattr_list`'s walk of a tree
/// ordered by reversed `strcmp`; it hides `trusted.` from those without
/// CAP_SYS_ADMIN); empty where none are kept.
pub fn list(inode: &Inode) -> KResult<Vec<u8>> {
    if inode.tmpfs_sb().is_none() {
        return Ok(Vec::new());
    }
    let trusted = crate::task::capable(CAP_SYS_ADMIN);
    let map = inode.xattrs.0.lock();
    let mut out = Vec::new();
    for name in map.keys().rev() {
        if name.starts_with(b"trusted.") && !trusted {
            continue;
        }
        out.try_reserve(name.len() + 1).map_err(|_| Errno::ENOMEM)?;
        out.extend_from_slice(name);
        out.push(0);
    }
    Ok(out)
}

/// removexattr(2)'s work (Linux: `vfs_removexattr`, a set to nothing with
/// XATTR_REPLACE): ENODATA if `name` is not set.
pub fn remove(inode: &Inode, name: &[u8]) -> KResult<()> {
    let Target::Stored(xattrs) = resolve(inode, name, MAY_WRITE)? else {
        return Ok(()); // no ACL to take away
    };
    let (key, value) = xattrs.0.lock().remove_entry(name).ok_or(Errno::ENODATA)?;
    if let Some(sb) = inode.tmpfs_sb() {
        sb.uncharge_ispace(space(&key, value.len()));
    }
    Ok(())
}
