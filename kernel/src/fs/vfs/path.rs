//! Path lookup and the operations that change the namespace: create,
//! mkdir, unlink, rmdir, rename, symlink (Linux: `fs/namei.c`).
//!
//! Paths are absolute (from the root) or relative to a starting directory;
//! `.` and `..` are handled as the walk goes, symbolic links are followed
//! (at most `MAX_SYMLINKS` of them). Namespace changes lock one directory
//! at a time; rename additionally holds one global mutex, as Linux's
//! `s_vfs_rename_mutex` does, so two renames can never deadlock.

use alloc::string::String;
use alloc::sync::Arc;

use spin::Once;

use super::inode::{Inode, InodeKind, NAME_MAX, S_IFIFO, S_IFLNK, S_IFMT, T_CTIME, T_MTIME};
use super::permission::{self, MAY_EXEC, MAY_WRITE};
use crate::errno::{Errno, KResult};
use crate::sync::Mutex;
pub use uapi::limits::PATH_MAX;

/// Symbolic links followed in one lookup before ELOOP (Linux: 40).
const MAX_SYMLINKS: usize = 40;

/// The root directory, set once at boot by `set_root`.
static ROOT: Once<Arc<Inode>> = Once::new();
/// Held across a whole rename, so that only one runs at a time (Linux:
/// `s_vfs_rename_mutex`, per file system).
static RENAME_LOCK: Mutex<()> = Mutex::new(());

/// Makes `root` the root directory (once, at boot).
pub fn set_root(root: Arc<Inode>) {
    if let InodeKind::Dir(d) = &root.kind {
        d.set_parent(&root);
    }
    ROOT.call_once(|| root);
}

/// The root directory; panics before `set_root` has run.
pub fn root() -> Arc<Inode> {
    ROOT.get().expect("no root filesystem").clone()
}

/// ENOENT for an empty path, ENAMETOOLONG for one of `PATH_MAX` bytes or
/// more.
fn check_path(path: &str) -> KResult<()> {
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    if path.len() >= PATH_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(())
}

/// One component of a walk: `name` in the directory `dir`, with `.` and `..`
/// (the root's `..` is the root) (Linux: `walk_component`). ENOTDIR if `dir`
/// is not a directory.
fn step(dir: &Arc<Inode>, name: &str) -> KResult<Arc<Inode>> {
    let d = dir.dir()?;
    // Linux: `may_lookup`, search permission on every directory walked.
    dir.permission(MAY_EXEC)?;
    match name {
        "" | "." => Ok(dir.clone()),
        ".." => Ok(d.parent().unwrap_or_else(|| dir.clone())),
        _ if crate::ustr::to_bytes(name).len() > NAME_MAX => Err(Errno::ENAMETOOLONG),
        _ => d.find(dir, name).ok_or(Errno::ENOENT),
    }
}

/// Follows `link` (found in `dir`) to what it names.
fn follow(dir: &Arc<Inode>, link: &Arc<Inode>, budget: &mut usize) -> KResult<Arc<Inode>> {
    if *budget == 0 {
        return Err(Errno::ELOOP);
    }
    *budget -= 1;
    match &link.kind {
        InodeKind::Symlink(target) => walk(dir, target, true, budget),
        InodeKind::MagicLink(magic) => magic.follow(),
        _ => Ok(link.clone()),
    }
}

/// Resolves `path` from `start`, or from the root if it is absolute, one
/// component at a time (Linux: `link_path_walk`). Symbolic links are followed
/// on the way, and at the end with `follow_last` or a trailing slash; each
/// uses up one of `budget`.
fn walk(
    start: &Arc<Inode>,
    path: &str,
    follow_last: bool,
    budget: &mut usize,
) -> KResult<Arc<Inode>> {
    check_path(path)?;
    let mut cur = if path.starts_with('/') {
        root()
    } else {
        start.clone()
    };
    // A trailing slash asks for a directory: a link there is followed.
    let follow_last = follow_last || path.ends_with('/');
    let mut names = path.split('/').filter(|n| !n.is_empty()).peekable();
    while let Some(name) = names.next() {
        let next = step(&cur, name)?;
        let last = names.peek().is_none();
        cur = if next.mode() & S_IFMT == S_IFLNK && (!last || follow_last) {
            follow(&cur, &next, budget)?
        } else {
            next
        };
    }
    if path.ends_with('/') && !cur.is_dir() {
        return Err(Errno::ENOTDIR);
    }
    Ok(cur)
}

/// The inode `path` names, following symbolic links (`stat`) or not at the
/// last component (`lstat`).
pub fn lookup(start: &Arc<Inode>, path: &str, follow_last: bool) -> KResult<Arc<Inode>> {
    walk(start, path, follow_last, &mut MAX_SYMLINKS.clone())
}

/// The directory that would hold `path`'s last component, and that name.
/// The name may be "." or ".." (callers reject those where they must).
pub fn lookup_parent<'p>(start: &Arc<Inode>, path: &'p str) -> KResult<(Arc<Inode>, &'p str)> {
    check_path(path)?;
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        // "/" itself: its "parent" is the root and its name is ".".
        return Ok((root(), "."));
    }
    let (dir_path, name) = match trimmed.rfind('/') {
        Some(0) => ("/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (".", trimmed),
    };
    if crate::ustr::to_bytes(name).len() > NAME_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    let dir = lookup(start, dir_path, true)?;
    dir.dir()?;
    Ok((dir, name))
}

/// Creates a new inode of `make(sb)` as `path` (Linux: `vfs_create`,
/// `vfs_mkdir`, `vfs_symlink`). EEXIST if the name is taken; EPERM in
/// /proc and /sys, whose trees only the kernel builds.
fn create(
    start: &Arc<Inode>,
    path: &str,
    make: impl FnOnce(&Arc<crate::fs::tmpfs::TmpfsSb>) -> KResult<Arc<Inode>>,
) -> KResult<Arc<Inode>> {
    let (dir, name) = lookup_parent(start, path)?;
    if name == "." || name == ".." {
        return Err(Errno::EEXIST);
    }
    let d = dir.dir()?;
    let sb = d.sb.as_ref().ok_or(Errno::EPERM)?;
    if d.lookup(name).is_some() {
        return Err(Errno::EEXIST);
    }
    dir.permission(MAY_WRITE | MAY_EXEC)?;
    sb.may_add_inode()?;
    let inode = make(sb)?;
    inode.init_owner(Some(&dir));
    inode.set_sb(sb);
    d.link(&dir, name, inode.clone())?;
    Ok(inode)
}

/// A new special file as `path` (Linux: `vfs_mknod`): a named pipe (FIFO)
/// whose openers all share one pipe, or a device node `rdev` whose driver
/// is `device` (the caller's look-up by number; [`NoDevice`] if none).
pub fn mknod(
    start: &Arc<Inode>,
    path: &str,
    mode: u32,
    rdev: u64,
    device: Arc<dyn crate::fs::device::Device>,
) -> KResult<()> {
    create(start, path, |_| {
        Ok(match mode & S_IFMT {
            S_IFIFO => Inode::new(mode, InodeKind::Device(crate::fs::device::Pipe::new_fifo())),
            _ => Inode::new_node(mode, Some(rdev), InodeKind::Device(device)),
        })
    })
    .map(|_| ())
}

/// What stands behind a device node whose number has no driver: opening
/// it is ENXIO (Linux: `chrdev_open` finding no `cdev`), so reads and
/// writes are never reached.
pub struct NoDevice;

impl crate::fs::device::Device for NoDevice {
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::ENXIO)
    }
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::ENXIO)
    }
    fn opened(&self, _flags: u32) -> KResult<()> {
        Err(Errno::ENXIO)
    }
}

/// A new name `path` for `inode` (Linux: `vfs_link`): EPERM for a
/// directory, EXDEV across mounts, ENOENT for an inode with no names left.
pub fn link(inode: &Arc<Inode>, start: &Arc<Inode>, path: &str) -> KResult<()> {
    if inode.is_dir() {
        return Err(Errno::EPERM);
    }
    let (dir, name) = lookup_parent(start, path)?;
    if name == "." || name == ".." {
        return Err(Errno::EEXIST);
    }
    let d = dir.dir()?;
    let sb = d.sb.as_ref().ok_or(Errno::EPERM)?;
    match inode.tmpfs_sb() {
        Some(isb) if Arc::ptr_eq(isb, sb) => {}
        _ => return Err(Errno::EXDEV),
    }
    if inode.nlink() == 0 {
        return Err(Errno::ENOENT);
    }
    dir.permission(MAY_WRITE | MAY_EXEC)?;
    // Each extra name takes an inode of `nr_inodes=` (Linux: `shmem_link`).
    sb.may_add_inode()?;
    d.link(&dir, name, inode.clone())?;
    sb.inode_added();
    inode.inc_nlink();
    inode.touch(T_CTIME);
    Ok(())
}

/// A new empty regular file (the O_CREAT half of `open`).
pub fn create_file(start: &Arc<Inode>, path: &str, mode: u32) -> KResult<Arc<Inode>> {
    if path.ends_with('/') {
        return Err(Errno::EISDIR);
    }
    create(start, path, |sb| Ok(sb.new_file(mode)))
}

/// mkdir(2): a new, empty directory `path` with mode `mode` (Linux:
/// `vfs_mkdir`); EEXIST if the name is taken.
pub fn mkdir(start: &Arc<Inode>, path: &str, mode: u32) -> KResult<()> {
    create(start, path, |sb| Ok(Inode::new_dir(mode, Some(sb.clone())))).map(|_| ())
}

/// symlink(2): a new symbolic link `path` holding `target`, which need not
/// exist (Linux: `vfs_symlink`); ENOENT for an empty target.
pub fn symlink(target: &str, start: &Arc<Inode>, path: &str) -> KResult<()> {
    if target.is_empty() {
        return Err(Errno::ENOENT);
    }
    create(start, path, |_| {
        Ok(Inode::new(
            S_IFLNK | 0o777,
            InodeKind::Symlink(String::from(target)),
        ))
    })
    .map(|_| ())
}

/// Removes a name; the inode lives on while open files still hold it
/// (Linux: `vfs_unlink`).
pub fn unlink(start: &Arc<Inode>, path: &str) -> KResult<()> {
    let (dir, name) = lookup_parent(start, path)?;
    let d = dir.dir()?;
    if d.sb.is_none() {
        return Err(Errno::EPERM);
    }
    let mut entries = d.entries.lock();
    let inode = entries.get(name).ok_or(Errno::ENOENT)?;
    may_delete(&dir, inode)?;
    if inode.is_dir() || name == "." || name == ".." {
        return Err(Errno::EISDIR);
    }
    if path.ends_with('/') {
        return Err(Errno::ENOTDIR);
    }
    let inode = entries.remove(name).expect("looked up above");
    drop_name(&inode);
    dir.touch(T_MTIME | T_CTIME);
    Ok(())
}

/// A name of `inode` is gone: one link fewer, and an extra name's inode
/// back to its mount's `nr_inodes=` (Linux: `shmem_unlink`); the last
/// name's goes when the inode is freed.
fn drop_name(inode: &Inode) {
    if inode.nlink() > 1 && !inode.is_dir() {
        if let Some(sb) = inode.tmpfs_sb() {
            sb.inode_freed();
        }
    }
    inode.dec_nlink();
}

/// Removes an empty directory (Linux: `vfs_rmdir`).
pub fn rmdir(start: &Arc<Inode>, path: &str) -> KResult<()> {
    let (dir, name) = lookup_parent(start, path)?;
    match name {
        "." => return Err(Errno::EINVAL),
        ".." => return Err(Errno::ENOTEMPTY),
        _ => {}
    }
    let d = dir.dir()?;
    if d.sb.is_none() {
        return Err(Errno::EPERM);
    }
    let mut entries = d.entries.lock();
    let victim = entries.get(name).ok_or(Errno::ENOENT)?;
    may_delete(&dir, victim)?;
    let vd = victim.dir()?;
    if !same_sb(d, vd) {
        return Err(Errno::EBUSY);
    }
    if !vd.entries.lock().is_empty() {
        return Err(Errno::ENOTEMPTY);
    }
    let victim = entries.remove(name).expect("looked up above");
    victim.dec_nlink();
    dir.dec_nlink();
    dir.touch(T_MTIME | T_CTIME);
    Ok(())
}

/// May the running process remove `victim`'s name from `dir` (Linux:
/// `may_delete`)? It must be able to write and search `dir` (EACCES),
/// and in a sticky directory own one of the two (EPERM).
fn may_delete(dir: &Inode, victim: &Inode) -> KResult<()> {
    dir.permission(MAY_WRITE | MAY_EXEC)?;
    permission::may_delete_sticky(&crate::task::current_cred(), dir.owner(), victim.owner())
}

/// Are both directories on the same tmpfs mount? False if either belongs to a
/// pseudo file system. Renames may not cross mounts, and rmdir may not remove
/// a mount's root.
fn same_sb(a: &super::inode::Directory, b: &super::inode::Directory) -> bool {
    match (&a.sb, &b.sb) {
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// Is `inode` `dir` or one of its ancestors? (A directory may not move
/// into its own subtree.)
fn is_ancestor(inode: &Arc<Inode>, dir: &Arc<Inode>) -> bool {
    let mut cur = dir.clone();
    loop {
        if Arc::ptr_eq(&cur, inode) {
            return true;
        }
        match cur.dir().ok().and_then(|d| d.parent()) {
            Some(p) if !Arc::ptr_eq(&p, &cur) => cur = p,
            _ => return false,
        }
    }
}

/// Moves `old` to `new`, replacing a compatible `new` (Linux: `vfs_rename`
/// without flags).
pub fn rename(start: &Arc<Inode>, old: &str, new: &str) -> KResult<()> {
    rename_at(start, old, start, new)
}

/// rename with each path relative to its own directory (renameat2).
pub fn rename_at(
    old_start: &Arc<Inode>,
    old: &str,
    new_start: &Arc<Inode>,
    new: &str,
) -> KResult<()> {
    let _serialise = RENAME_LOCK.lock();
    let (old_dir, old_name) = lookup_parent(old_start, old)?;
    let (new_dir, new_name) = lookup_parent(new_start, new)?;
    for n in [old_name, new_name] {
        if n == "." || n == ".." {
            return Err(Errno::EBUSY);
        }
    }
    let (od, nd) = (old_dir.dir()?, new_dir.dir()?);
    if od.sb.is_none() || nd.sb.is_none() {
        return Err(Errno::EPERM);
    }
    if !same_sb(od, nd) {
        return Err(Errno::EXDEV);
    }
    let inode = od.lookup(old_name).ok_or(Errno::ENOENT)?;
    // Linux: `vfs_rename`'s `may_delete` and `may_create`, and write
    // permission on a directory whose ".." changes.
    may_delete(&old_dir, &inode)?;
    match nd.lookup(new_name) {
        Some(target) => may_delete(&new_dir, &target)?,
        None => new_dir.permission(MAY_WRITE | MAY_EXEC)?,
    }
    if inode.is_dir() && !Arc::ptr_eq(&old_dir, &new_dir) {
        inode.permission(MAY_WRITE)?;
    }
    if (old.ends_with('/') || new.ends_with('/')) && !inode.is_dir() {
        return Err(Errno::ENOTDIR);
    }
    if inode.is_dir() && is_ancestor(&inode, &new_dir) {
        return Err(Errno::EINVAL);
    }
    if let Some(target) = nd.lookup(new_name) {
        if Arc::ptr_eq(&target, &inode) {
            return Ok(());
        }
        match (inode.is_dir(), target.is_dir()) {
            (false, true) => return Err(Errno::EISDIR),
            (true, false) => return Err(Errno::ENOTDIR),
            (true, true) if !target.dir()?.entries.lock().is_empty() => {
                return Err(Errno::ENOTEMPTY)
            }
            _ => {}
        }
    }
    od.entries.lock().remove(old_name);
    if inode.is_dir() {
        old_dir.dec_nlink();
    }
    let replaced = nd
        .entries
        .lock()
        .insert(String::from(new_name), inode.clone());
    if let Some(old_target) = replaced {
        drop_name(&old_target);
        if old_target.is_dir() {
            new_dir.dec_nlink();
        }
    }
    if let InodeKind::Dir(d) = &inode.kind {
        d.set_parent(&new_dir);
        new_dir.inc_nlink();
    }
    // Linux: `shmem_rename2` moves both directories' times and the inode's ctime.
    old_dir.touch(T_MTIME | T_CTIME);
    new_dir.touch(T_MTIME | T_CTIME);
    inode.touch(T_CTIME);
    Ok(())
}

/// The absolute path of directory `dir` (getcwd), found by walking up
/// through ".." and looking each directory up in its parent.
pub fn path_of(dir: &Arc<Inode>) -> String {
    let mut names = alloc::vec::Vec::new();
    let mut cur = dir.clone();
    while let Some(parent) = cur.dir().ok().and_then(|d| d.parent()) {
        if Arc::ptr_eq(&parent, &cur) {
            break;
        }
        match parent.dir().expect("a parent is a directory").name_of(&cur) {
            Some(name) => names.push(name),
            None => break,
        }
        cur = parent;
    }
    let mut path = String::new();
    for name in names.iter().rev() {
        path.push('/');
        path.push_str(name);
    }
    if path.is_empty() {
        path.push('/');
    }
    path
}

/// The absolute path of what `path` names, every symbolic link resolved
/// (Linux: `d_path` of the file an open of `path` reaches; realpath(3)).
pub fn realpath(start: &Arc<Inode>, path: &str) -> KResult<String> {
    let mut budget = MAX_SYMLINKS;
    let (mut dir, name) = lookup_parent(start, path)?;
    let mut name = String::from(name);
    loop {
        let inode = step(&dir, &name)?;
        if let InodeKind::MagicLink(link) = &inode.kind {
            let target = link.follow()?;
            return find_path(&target).ok_or(Errno::ENOENT);
        }
        if let InodeKind::Symlink(target) = &inode.kind {
            if budget == 0 {
                return Err(Errno::ELOOP);
            }
            budget -= 1;
            let (d, n) = lookup_parent(&dir, target)?;
            name = String::from(n);
            dir = d;
            continue;
        }
        if inode.is_dir() {
            return Ok(path_of(&inode));
        }
        let mut full = path_of(&dir);
        if !full.ends_with('/') {
            full.push('/');
        }
        full.push_str(&name);
        return Ok(full);
    }
}

/// A path that names `inode` now, found by searching the tree from the
/// root (Linux: `d_path` of the file's dentry; faultline has no dentries).
/// The made-up /proc entries are not searched. None for a file linked
/// nowhere: a pipe, a memfd, one unlinked while open.
pub fn find_path(inode: &Arc<Inode>) -> Option<String> {
    fn search(dir: &Arc<Inode>, want: &Arc<Inode>, path: &mut String) -> bool {
        let Ok(d) = dir.dir() else { return false };
        let entries: alloc::vec::Vec<_> = d
            .entries
            .lock()
            .iter()
            .map(|(n, i)| (n.clone(), i.clone()))
            .collect();
        for (name, child) in entries {
            let len = path.len();
            path.push('/');
            path.push_str(&name);
            if Arc::ptr_eq(&child, want) || (child.is_dir() && search(&child, want, path)) {
                return true;
            }
            path.truncate(len);
        }
        false
    }
    let root = root();
    if Arc::ptr_eq(&root, inode) {
        return Some(String::from("/"));
    }
    let mut path = String::new();
    search(&root, inode, &mut path).then_some(path)
}
