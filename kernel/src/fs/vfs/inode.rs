//! Inodes: files, directories, symbolic links and pseudo files, and the
//! `stat` view of them (Linux: `struct inode`, `struct dentry` folded in:
//! a directory maps names straight to child inodes; there is no dentry
//! cache because every filesystem here lives in memory).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::tmpfs::{ShmemFile, TmpfsSb};
use crate::sync::SpinLock;

pub const S_IFMT: u32 = 0o170000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFLNK: u32 = 0o120000;
pub const S_IFCHR: u32 = 0o020000;
pub const S_IFIFO: u32 = 0o010000;

/// Longest name of one path component (Linux: `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// A file whose contents the kernel makes up on the spot: `/proc` and
/// `/sys` (Linux: `seq_file` show / sysfs `store`).
pub trait PseudoFile: Send + Sync {
    /// The whole text of the file, produced when it is opened.
    fn show(&self) -> String;
    /// May the file be opened for writing?
    fn is_writable(&self) -> bool {
        false
    }
    /// Handles a write of `data` (called only if `is_writable`).
    fn store(&self, _data: &str) -> KResult<()> {
        Err(Errno::EACCES)
    }
}

/// Directory entries the kernel makes up when they are looked up, beside
/// the ones linked in (Linux: procfs's `proc_pid_lookup` and
/// `proc_pid_readdir`): /proc's per-process directories, /proc/PID/fd.
pub trait PseudoDir: Send + Sync {
    /// The entry `name` of `dir` (this directory), made now.
    fn lookup(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>>;
    /// The names `lookup` finds now, in the order getdents lists them.
    fn names(&self) -> Vec<String>;
}

/// A symbolic link the kernel resolves itself rather than through a
/// stored path (Linux: procfs's "magic links", `proc_get_link`): following
/// /proc/PID/exe or /proc/PID/fd/N reaches the inode itself, even one no
/// longer linked anywhere.
pub trait MagicLink: Send + Sync {
    /// What readlink(2) says.
    fn readlink(&self) -> KResult<String>;
    /// The inode the link stands for.
    fn follow(&self) -> KResult<Arc<Inode>>;
}

pub enum InodeKind {
    File(ShmemFile),
    /// A character device or a pipe.
    Device(Arc<dyn crate::fs::device::Device>),
    Dir(Directory),
    Symlink(String),
    MagicLink(Box<dyn MagicLink>),
    Pseudo(Box<dyn PseudoFile>),
}

pub struct Directory {
    pub(super) entries: SpinLock<BTreeMap<String, Arc<Inode>>>,
    parent: SpinLock<Weak<Inode>>,
    /// The tmpfs that new entries are created in; None for /proc and /sys,
    /// whose trees only the kernel builds.
    pub sb: Option<Arc<TmpfsSb>>,
    /// Entries made up at lookup, after the linked ones.
    dynamic: Option<Box<dyn PseudoDir>>,
}

pub struct Inode {
    pub ino: u64,
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
    nlink: AtomicU32,
    pub kind: InodeKind,
}

static NEXT_INO: AtomicU64 = AtomicU64::new(1);

impl Inode {
    pub fn new(mode: u32, kind: InodeKind) -> Arc<Inode> {
        let nlink = if matches!(kind, InodeKind::Dir(_)) {
            2
        } else {
            1
        };
        Arc::new(Inode {
            ino: NEXT_INO.fetch_add(1, Ordering::Relaxed),
            mode,
            nlink: AtomicU32::new(nlink),
            kind,
        })
    }

    /// A new empty directory; `parent` is set when it is linked in.
    pub fn new_dir(perm: u32, sb: Option<Arc<TmpfsSb>>) -> Arc<Inode> {
        Inode::new_dir_with(perm, sb, None)
    }

    /// A new /proc directory under `parent`, whose entries `dynamic` makes
    /// up besides any linked in.
    pub fn new_pseudo_dir(parent: &Arc<Inode>, dynamic: Option<Box<dyn PseudoDir>>) -> Arc<Inode> {
        let dir = Inode::new_dir_with(0o555, None, dynamic);
        if let InodeKind::Dir(d) = &dir.kind {
            d.set_parent(parent);
        }
        dir
    }

    fn new_dir_with(
        perm: u32,
        sb: Option<Arc<TmpfsSb>>,
        dynamic: Option<Box<dyn PseudoDir>>,
    ) -> Arc<Inode> {
        Inode::new(
            S_IFDIR | (perm & 0o7777),
            InodeKind::Dir(Directory {
                entries: SpinLock::new(BTreeMap::new()),
                parent: SpinLock::new(Weak::new()),
                sb,
                dynamic,
            }),
        )
    }

    /// What readlink(2) says of this inode: EINVAL if it is no link.
    pub fn readlink(&self) -> KResult<String> {
        match &self.kind {
            InodeKind::Symlink(target) => Ok(target.clone()),
            InodeKind::MagicLink(link) => link.readlink(),
            _ => Err(Errno::EINVAL),
        }
    }

    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }

    pub fn dir(&self) -> KResult<&Directory> {
        match &self.kind {
            InodeKind::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    pub fn nlink(&self) -> u32 {
        self.nlink.load(Ordering::Relaxed)
    }
    pub(super) fn inc_nlink(&self) {
        self.nlink.fetch_add(1, Ordering::Relaxed);
    }
    pub(super) fn dec_nlink(&self) {
        self.nlink.fetch_sub(1, Ordering::Relaxed);
    }

    /// The `stat` of this inode (Linux: `generic_fillattr`).
    pub fn stat(&self) -> Stat {
        let (size, blocks) = match &self.kind {
            InodeKind::File(f) => (f.size(), f.nr_pages() * 8),
            InodeKind::Symlink(target) => (target.len() as u64, 0),
            InodeKind::MagicLink(link) => (link.readlink().map_or(0, |t| t.len() as u64), 0),
            InodeKind::Dir(d) => (d.entries.lock().len() as u64 * 20, 0),
            InodeKind::Pseudo(_) | InodeKind::Device(_) => (0, 0),
        };
        Stat {
            st_dev: 0,
            st_ino: self.ino,
            st_mode: self.mode,
            st_nlink: self.nlink(),
            st_size: size as i64,
            st_blksize: 4096,
            st_blocks: blocks as i64,
            ..Stat::default()
        }
    }
}

impl Directory {
    pub fn lookup(&self, name: &str) -> Option<Arc<Inode>> {
        self.entries.lock().get(name).cloned()
    }

    /// `lookup`, then the entries made up at lookup; `dir` is this
    /// directory's inode.
    pub fn find(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        self.lookup(name)
            .or_else(|| self.dynamic.as_ref()?.lookup(dir, name))
    }

    /// Every entry's name and inode, linked ones first (getdents).
    pub fn list(&self, dir: &Arc<Inode>) -> Vec<(String, Arc<Inode>)> {
        let mut all: Vec<_> = self
            .entries
            .lock()
            .iter()
            .map(|(n, i)| (n.clone(), i.clone()))
            .collect();
        if let Some(dynamic) = &self.dynamic {
            for name in dynamic.names() {
                if let Some(inode) = dynamic.lookup(dir, &name) {
                    all.push((name, inode));
                }
            }
        }
        all
    }

    pub fn parent(&self) -> Option<Arc<Inode>> {
        self.parent.lock().upgrade()
    }

    /// Links `child` in as `name` (Linux: `d_instantiate` after `create`).
    pub fn link(&self, dir: &Arc<Inode>, name: &str, child: Arc<Inode>) -> KResult<()> {
        let mut entries = self.entries.lock();
        if entries.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        if let InodeKind::Dir(d) = &child.kind {
            *d.parent.lock() = Arc::downgrade(dir);
            dir.inc_nlink();
        }
        entries.insert(String::from(name), child);
        Ok(())
    }

    /// The name `child` is linked under here.
    pub fn name_of(&self, child: &Arc<Inode>) -> Option<String> {
        let entries = self.entries.lock();
        let (name, _) = entries.iter().find(|(_, i)| Arc::ptr_eq(i, child))?;
        Some(name.clone())
    }

    /// Puts `new` where `old` is linked as `name`, for a mount covering a
    /// directory and for its umount (Linux keeps both in a mount tree and
    /// switches at lookup; faultline swaps the entry). EINVAL if `name` is
    /// not `old`.
    pub fn replace(
        &self,
        dir: &Arc<Inode>,
        name: &str,
        old: &Arc<Inode>,
        new: Arc<Inode>,
    ) -> KResult<()> {
        let mut entries = self.entries.lock();
        match entries.get_mut(name) {
            Some(entry) if Arc::ptr_eq(entry, old) => {
                if let InodeKind::Dir(d) = &new.kind {
                    *d.parent.lock() = Arc::downgrade(dir);
                }
                *entry = new;
                Ok(())
            }
            _ => Err(Errno::EINVAL),
        }
    }

    pub(super) fn set_parent(&self, parent: &Arc<Inode>) {
        *self.parent.lock() = Arc::downgrade(parent);
    }
}

/// `struct stat` as the Linux arm64 ABI lays it out (`asm-generic/stat.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_mode: u32,
    pub st_nlink: u32,
    pub st_uid: u32,
    pub st_gid: u32,
    pub st_rdev: u64,
    pub __pad1: u64,
    pub st_size: i64,
    pub st_blksize: i32,
    pub __pad2: i32,
    /// 512-byte blocks allocated.
    pub st_blocks: i64,
    pub st_atime: i64,
    pub st_atime_nsec: u64,
    pub st_mtime: i64,
    pub st_mtime_nsec: u64,
    pub st_ctime: i64,
    pub st_ctime_nsec: u64,
    pub __unused: [u32; 2],
}

const _: () = assert!(core::mem::size_of::<Stat>() == 128);
