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
    /// Its mount ID (Linux: `mnt_id`), as /proc/PID/mountinfo shows it.
    id: u64,
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
    // IDs after the boot-time mounts', never reused (Linux: `mnt_alloc_id`).
    static NEXT_ID: AtomicU64 = AtomicU64::new(BOOT_MOUNTS.len() as u64 + 1);
    let mut mounted = MOUNTED.lock();
    let d = parent.dir()?;
    let name = d.name_of(&covered).ok_or(Errno::ENOENT)?;
    d.replace(&parent, &name, &covered, root.clone())?;
    mounted.push(Mounted {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
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

/// The file systems the kernel mounts at boot, before any mount(2):
/// (mount point, type, source), the first with ID 1, and so on.
const BOOT_MOUNTS: [(&str, &str, &str); 4] = [
    ("/", "rootfs", "rootfs"),
    ("/proc", "proc", "proc"),
    ("/sys", "sysfs", "sysfs"),
    ("/dev", "devtmpfs", "devtmpfs"),
];

/// One mount as /proc/PID/mounts and mountinfo show it.
pub struct MountInfo {
    /// The mount ID.
    pub id: u64,
    /// Where it is.
    pub path: String,
    /// The file system type.
    pub fstype: &'static str,
    /// What it was mounted from (`none` if nothing).
    pub source: String,
    /// The file system's own options, `,`-separated (may be empty).
    pub options: String,
    /// `st_dev` of its files.
    pub dev: u64,
}

/// Every mount, oldest first: the boot-time ones, then mount(2)'s.
pub fn mounts() -> Vec<MountInfo> {
    let dev_of = |root: &Arc<Inode>| root.stat().st_dev;
    let boot = (1..)
        .zip(BOOT_MOUNTS)
        .filter_map(|(id, (path, fstype, source))| {
            let root = lookup(&super::root(), path, true).ok()?;
            Some(MountInfo {
                id,
                path: String::from(path),
                fstype,
                source: String::from(source),
                options: String::new(),
                dev: dev_of(&root),
            })
        });
    let mut all: Vec<MountInfo> = boot.collect();
    all.extend(MOUNTED.lock().iter().map(|m| MountInfo {
        id: m.id,
        path: path_of(&m.root),
        fstype: m.fstype,
        source: m.source.clone(),
        options: m.options.clone(),
        dev: dev_of(&m.root),
    }));
    all
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
