//! The mounts mount(2) and move_mount(2) make (Linux: `fs/namespace.c`):
//! a new file system's root takes a directory's place until umount.
//! Where we simplify: there is no mount tree; the root is linked where
//! the directory was in its parent (`Directory::replace`), so a path
//! walks into it with no crossing, and one mount covers each directory.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::{lookup, path_of, Inode};
use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;

/// A new anonymous device number for a mounted file system's `st_dev`
/// (Linux: `get_anon_bdev`, major 0), so that programs comparing it (df,
/// find -xdev) tell mounts apart.
pub fn anon_dev() -> u64 {
    // Minors from 32 up; 1..31 are left to the pseudo file systems.
    static NEXT_DEV: AtomicU64 = AtomicU64::new(32);
    NEXT_DEV.fetch_add(1, Ordering::Relaxed)
}

/// A mount: its root, the directory it covers, and where that directory
/// is linked.
struct Mounted {
    /// The file system's root directory, linked where `covered` was.
    root: Arc<Inode>,
    /// The directory the mount hides; umount links it back.
    covered: Arc<Inode>,
    /// The directory that held `covered` and now holds `root`.
    parent: Arc<Inode>,
    /// The name of both in `parent`.
    name: String,
    /// The file system type, for /proc/mounts.
    fstype: &'static str,
    /// What it was mounted from, for /proc/mounts (`none` if nothing).
    source: String,
    /// The options it was mounted with, for /proc/mounts.
    options: String,
}

/// The mounts made, oldest first. Its lock is held across the relinking,
/// so mount and umount do not race.
static MOUNTED: SpinLock<Vec<Mounted>> = SpinLock::new(Vec::new());

/// Puts the file system whose root is `root` over the directory `covered`
/// (Linux: `do_new_mount`, or `do_move_mount` of a detached mount).
/// ENOTDIR for another file, EBUSY for the root directory.
pub fn mount_over(
    covered: Arc<Inode>,
    root: Arc<Inode>,
    fstype: &'static str,
    source: &str,
    options: &str,
) -> KResult<()> {
    let parent = covered.dir()?.parent().ok_or(Errno::EBUSY)?;
    if Arc::ptr_eq(&parent, &covered) {
        return Err(Errno::EBUSY);
    }
    let mut mounted = MOUNTED.lock();
    let d = parent.dir()?;
    let name = d.name_of(&covered).ok_or(Errno::ENOENT)?;
    d.replace(&parent, &name, &covered, root.clone())?;
    mounted.push(Mounted {
        root,
        covered,
        parent,
        name,
        fstype,
        source: String::from(source),
        options: String::from(options),
    });
    Ok(())
}

/// Each mount as /proc/mounts shows it: source, where it is, type and
/// options.
pub fn mounts() -> Vec<(String, String, &'static str, String)> {
    MOUNTED
        .lock()
        .iter()
        .map(|m| {
            (
                m.source.clone(),
                path_of(&m.root),
                m.fstype,
                m.options.clone(),
            )
        })
        .collect()
}

/// umount2(2) of a mount `mount_over` made: the covered directory comes
/// back; EINVAL if `target` is no mount's root. Where we simplify: as with
/// `MNT_DETACH`, files still open there stay usable (Linux says EBUSY
/// without it).
pub fn umount(start: &Arc<Inode>, target: &str) -> KResult<()> {
    let root = lookup(start, target, true)?;
    let mut mounted = MOUNTED.lock();
    let at = mounted
        .iter()
        .position(|m| Arc::ptr_eq(&m.root, &root))
        .ok_or(Errno::EINVAL)?;
    let m = &mounted[at];
    m.parent
        .dir()?
        .replace(&m.parent, &m.name, &m.root, m.covered.clone())?;
    mounted.remove(at);
    Ok(())
}
