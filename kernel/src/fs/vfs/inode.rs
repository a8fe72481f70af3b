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
use crate::fs::vfs::permission::{self, Owner};
use crate::fs::vfs::xattr::SimpleXattrs;
use crate::mm::filemap::AddressSpace;
use crate::mm::vm_ops::VmOperations;
use crate::sync::SpinLock;
use crate::task::cred::CAP_FSETID;
use crate::task::process::Process;
use spin::Once;
pub use uapi::limits::NAME_MAX;
pub use uapi::stat::{S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG};

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

/// A /proc file read and written at a position, on the live state at
/// each call rather than on text made when it was opened (Linux: a proc
/// file with its own `read`, `write` and `llseek` file operations, as
/// `proc_pagemap_operations`, `proc_mem_operations` and /proc/kpageflags
/// have). Its size is 0 and any position may be sought.
pub trait RawFile: Send + Sync {
    /// Reads into `buf` from position `offset`; 0 at the end.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> KResult<usize>;
    /// May the file be opened for writing?
    fn is_writable(&self) -> bool {
        false
    }
    /// Writes `data` at position `offset` (called only if `is_writable`).
    fn write_at(&self, _offset: u64, _data: &[u8]) -> KResult<usize> {
        Err(Errno::EINVAL)
    }
    /// ioctl(2) `cmd` with its argument `arg` (Linux: `unlocked_ioctl`).
    fn ioctl(&self, _cmd: u32, _arg: usize) -> KResult<i64> {
        Err(Errno::ENOTTY)
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

/// What an inode is, and where its contents live (Linux spreads this over the
/// inode's `i_op`, `i_fop` and private data).
pub enum InodeKind {
    /// A regular file on tmpfs, its data in the page cache.
    File(ShmemFile),
    /// A character device or a pipe.
    Device(Arc<dyn crate::fs::device::Device>),
    /// A directory.
    Dir(Directory),
    /// A symbolic link, holding its target path (Linux: `i_link`).
    Symlink(String),
    /// A /proc link the kernel resolves itself (see `MagicLink`).
    MagicLink(Box<dyn MagicLink>),
    /// A /proc or /sys file whose text the kernel makes (see `PseudoFile`).
    Pseudo(Box<dyn PseudoFile>),
    /// A /proc file read and written at a position (see `RawFile`).
    Raw(Box<dyn RawFile>),
}

/// A directory's contents (Linux: the child dentries of its dentry).
pub struct Directory {
    /// The linked entries by name, in the sorted order getdents lists them;
    /// `.` and `..` are not stored.
    pub(super) entries: SpinLock<BTreeMap<String, Arc<Inode>>>,
    /// The directory this one is linked in, weakly, for `..`; the root is its
    /// own parent (Linux: `d_parent`).
    parent: SpinLock<Weak<Inode>>,
    /// The tmpfs that new entries are created in; None for /proc and /sys,
    /// whose trees only the kernel builds.
    pub sb: Option<Arc<TmpfsSb>>,
    /// Entries made up at lookup, after the linked ones.
    dynamic: Option<Box<dyn PseudoDir>>,
}

/// A file of any type (Linux: `struct inode`), shared by all its names and
/// open files and freed when the last of them goes.
pub struct Inode {
    /// The inode number, unique since boot across every file system (Linux:
    /// `i_ino`).
    pub ino: u64,
    /// File type and permission bits (`st_mode`): chmod changes the low 12
    /// bits, the type never changes.
    mode: AtomicU32,
    /// Names linking it, plus `.` and its subdirectories' `..` for a
    /// directory (Linux: `i_nlink`).
    nlink: AtomicU32,
    /// The owner (`i_uid`): who the owner's permission bits are for.
    uid: AtomicU32,
    /// The group (`i_gid`): whom the group's bits are for.
    gid: AtomicU32,
    /// Last access, modification and change (`i_atime`, `i_mtime`,
    /// `i_ctime`).
    times: SpinLock<Times>,
    /// The tmpfs mount this inode lives on, where it has one (statfs,
    /// linkat's EXDEV); set once, when it is made there.
    sb: Once<Arc<TmpfsSb>>,
    /// The device number of the pseudo file system (/proc, /sys, /dev, or
    /// a /proc mounted again) it belongs to (see `set_pseudo_dev`); 0 for
    /// an inode on none (a pipe, a socket), which shows 0:1.
    pseudo_dev: AtomicU64,
    /// `i_rdev` of a device node: its number (Linux's, for /dev's nodes),
    /// by which its driver was found.
    rdev: Option<u64>,
    /// The name of a file the kernel made linked nowhere (a memfd's
    /// `memfd:NAME`, a System V segment's `SYSV%08x`), which /proc shows
    /// as `/NAME (deleted)` (Linux: the dentry name of a file on the
    /// internal shm mount).
    anon_name: Once<String>,
    /// For a /proc/PID entry, the process whose ids own it, looked up
    /// at each check (Linux: `pid_update_inode` -> `task_dump_owner`).
    task_owner: Once<Weak<Process>>,
    /// Its extended attributes, where its file system keeps them (see
    /// `xattr`; Linux: `shmem_inode_info.xattrs`).
    pub(super) xattrs: SimpleXattrs,
    /// What it is, with its contents.
    pub kind: InodeKind,
}

impl Drop for Inode {
    /// Gives the inode's count, and its attributes' space, back to its
    /// tmpfs mount.
    fn drop(&mut self) {
        if let Some(sb) = self.sb.get() {
            sb.inode_freed();
            sb.uncharge_ispace(self.xattrs.space());
        }
    }
}

/// A point in CLOCK_REALTIME as `struct timespec` holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timespec {
    /// Seconds since the Unix epoch (negative before it).
    pub sec: i64,
    /// Nanoseconds into the second, below 1 000 000 000.
    pub nsec: u32,
}

impl Timespec {
    /// The time now (Linux: `current_time`, without the filesystem's
    /// granularity: tmpfs keeps nanoseconds).
    pub fn now() -> Timespec {
        let ns = crate::task::clock::realtime_ns();
        Timespec {
            sec: ns.div_euclid(1_000_000_000),
            nsec: ns.rem_euclid(1_000_000_000) as u32,
        }
    }
}

/// An inode's three timestamps.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    /// Last access (`i_atime`), moved as relatime says.
    pub atime: Timespec,
    /// Last change to the contents (`i_mtime`).
    pub mtime: Timespec,
    /// Last change to the contents or the attributes (`i_ctime`).
    pub ctime: Timespec,
}

/// Which timestamps `Inode::touch` sets to now (Linux: `S_ATIME`,
/// `S_MTIME`, `S_CTIME` of `inode_update_time`).
pub const T_ATIME: u32 = 1;
/// T_MTIME: the modification time.
pub const T_MTIME: u32 = 2;
/// T_CTIME: the change time.
pub const T_CTIME: u32 = 4;

/// The next inode number to give out; numbers are never reused.
static NEXT_INO: AtomicU64 = AtomicU64::new(1);

impl Inode {
    /// The page cache of a regular file (Linux: `i_mapping`); None for
    /// any other inode.
    pub fn mapping(&self) -> Option<&AddressSpace> {
        match &self.kind {
            InodeKind::File(file) => Some(&file.mapping),
            _ => None,
        }
    }

    /// What a mapping of this inode does on a fault (Linux: what the
    /// file's `->mmap` sets as `vma->vm_ops`); None for an inode that
    /// cannot be mapped by pages.
    pub fn vm_ops(&self) -> Option<&dyn VmOperations> {
        match &self.kind {
            InodeKind::File(file) => Some(file),
            _ => None,
        }
    }

    /// A new inode with mode `mode` (type and permission bits), one link (two
    /// for a directory) and every timestamp now.
    pub fn new(mode: u32, kind: InodeKind) -> Arc<Inode> {
        Inode::new_node(mode, None, kind)
    }

    /// A new inode, a device node with number `rdev` if that is given
    /// (Linux: `shmem_get_inode` -> `init_special_inode`).
    pub fn new_node(mode: u32, rdev: Option<u64>, kind: InodeKind) -> Arc<Inode> {
        let nlink = if matches!(kind, InodeKind::Dir(_)) {
            2
        } else {
            1
        };
        let now = Timespec::now();
        Arc::new(Inode {
            ino: NEXT_INO.fetch_add(1, Ordering::Relaxed),
            mode: AtomicU32::new(mode),
            nlink: AtomicU32::new(nlink),
            uid: AtomicU32::new(0),
            gid: AtomicU32::new(0),
            times: SpinLock::new(Times {
                atime: now,
                mtime: now,
                ctime: now,
            }),
            sb: Once::new(),
            pseudo_dev: AtomicU64::new(0),
            rdev,
            anon_name: Once::new(),
            task_owner: Once::new(),
            xattrs: SimpleXattrs::new(),
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

    /// A new directory with permission bits `perm`, on the tmpfs `sb` if
    /// given, whose made-up entries come from `dynamic`.
    fn new_dir_with(
        perm: u32,
        sb: Option<Arc<TmpfsSb>>,
        dynamic: Option<Box<dyn PseudoDir>>,
    ) -> Arc<Inode> {
        let inode = Inode::new(
            S_IFDIR | (perm & 0o7777),
            InodeKind::Dir(Directory {
                entries: SpinLock::new(BTreeMap::new()),
                parent: SpinLock::new(Weak::new()),
                sb: sb.clone(),
                dynamic,
            }),
        );
        if let Some(sb) = sb {
            inode.set_sb(&sb);
        }
        inode
    }

    /// Records the tmpfs mount the inode was made on, which counts it
    /// against its `nr_inodes=` until it is freed.
    pub fn set_sb(&self, sb: &Arc<TmpfsSb>) {
        self.sb.call_once(|| {
            sb.inode_added();
            sb.clone()
        });
    }

    /// The tmpfs mount the inode lives on, if any.
    pub fn tmpfs_sb(&self) -> Option<&Arc<TmpfsSb>> {
        self.sb.get()
    }

    /// Gives this inode, and all linked below it, the device number `dev`
    /// of a pseudo file system mounted again; entries made up at lookup
    /// get it from their directory (`Directory::find`).
    pub fn set_pseudo_dev(&self, dev: u64) {
        self.pseudo_dev.store(dev, Ordering::Relaxed);
        if let InodeKind::Dir(d) = &self.kind {
            for child in d.children() {
                child.set_pseudo_dev(dev);
            }
        }
    }

    /// `i_mode`: the file type and permission bits.
    pub fn mode(&self) -> u32 {
        self.mode.load(Ordering::Relaxed)
    }

    /// Names a file the kernel made, linked nowhere (see `anon_name`).
    pub fn set_anon_name(&self, name: String) {
        self.anon_name.call_once(|| name);
    }

    /// Where /proc says the file is (Linux: `d_path`): its path, or for
    /// one the kernel made linked nowhere, `/NAME (deleted)`; None for a
    /// pipe, a socket, or anything else with neither.
    pub fn proc_path(self: &Arc<Self>) -> Option<String> {
        super::path::find_path(self)
            .or_else(|| Some(alloc::format!("/{} (deleted)", self.anon_name.get()?)))
    }

    /// Makes this /proc/PID entry, and all linked below it, owned by
    /// `process`: by its effective ids while it is dumpable, by root
    /// otherwise (Linux: `task_dump_owner`).
    pub fn set_task_owner(&self, process: &Weak<Process>) {
        self.task_owner.call_once(|| process.clone());
        if let InodeKind::Dir(d) = &self.kind {
            for child in d.children() {
                child.set_task_owner(process);
            }
        }
    }

    /// The mode and owner permission checks read.
    pub fn owner(&self) -> Owner {
        let (uid, gid) = match self.task_owner.get().and_then(Weak::upgrade) {
            Some(p) if p.dumpable.load(Ordering::Acquire) == 1 => {
                let c = p.cred.lock();
                (c.euid, c.egid)
            }
            Some(_) => (0, 0),
            None => (
                self.uid.load(Ordering::Relaxed),
                self.gid.load(Ordering::Relaxed),
            ),
        };
        Owner {
            mode: self.mode(),
            uid,
            gid,
        }
    }

    /// May the running process access this inode as `mask` asks
    /// (MAY_READ, MAY_WRITE, MAY_EXEC)? EACCES if not (Linux:
    /// `inode_permission` -> `generic_permission`).
    pub fn permission(&self, mask: u32) -> KResult<()> {
        permission::generic_permission(&crate::task::current_cred(), self.owner(), mask)
    }

    /// Is the running process the owner, or may it act as one (Linux:
    /// `inode_owner_or_capable`)?
    pub fn owner_or_capable(&self) -> bool {
        permission::owner_or_capable(&crate::task::current_cred(), self.owner())
    }

    /// Makes the running process the owner of this new inode, made in
    /// `dir` if it has a directory (Linux: `inode_init_owner`; see
    /// `permission::init_owner`); a pipe's, socket's or memfd's gets the
    /// caller's fsuid and fsgid.
    pub fn init_owner(&self, dir: Option<&Inode>) {
        let dir = dir.map_or(
            Owner {
                mode: 0,
                uid: 0,
                gid: 0,
            },
            Inode::owner,
        );
        let o = permission::init_owner(&crate::task::current_cred(), dir, self.mode());
        self.mode.store(o.mode, Ordering::Relaxed);
        self.uid.store(o.uid, Ordering::Relaxed);
        self.gid.store(o.gid, Ordering::Relaxed);
    }

    /// A write or truncate by a caller without CAP_FSETID takes a regular
    /// file's set-user-ID bit, and set-group-ID where there is group
    /// execute or the caller is outside the group, so no one can change a
    /// privileged program and keep it privileged (Linux:
    /// `file_remove_privs` -> `setattr_should_drop_suidgid`).
    pub fn remove_privs(&self) {
        let mode = self.mode();
        if mode & 0o6000 == 0 {
            return;
        }
        let cred = crate::task::current_cred();
        let gid = self.gid.load(Ordering::Relaxed);
        let sgid = mode & 0o2000 != 0 && (mode & 0o010 != 0 || !cred.in_group(gid));
        let kill = (mode & 0o4000) | if sgid { 0o2000 } else { 0 };
        if kill != 0 && mode & S_IFMT == S_IFREG && !cred.capable(CAP_FSETID) {
            self.mode.fetch_and(!kill, Ordering::Relaxed);
            self.touch(T_CTIME);
        }
    }

    /// chmod: new permission bits (the low 12), keeping the file type;
    /// the change time moves (Linux: `chmod_common` -> `notify_change`).
    pub fn set_perm(&self, perm: u32) {
        let _ = self
            .mode
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
                Some((m & S_IFMT) | (perm & 0o7777))
            });
        self.touch(T_CTIME);
    }

    /// chown: a new owner and/or group (None: unchanged), the change time
    /// moves. As Linux's `chown_common` does for anything but a directory,
    /// it clears set-user-ID, and set-group-ID where group execute is set.
    pub fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) {
        if let Some(uid) = uid {
            self.uid.store(uid, Ordering::Relaxed);
        }
        if let Some(gid) = gid {
            self.gid.store(gid, Ordering::Relaxed);
        }
        if !self.is_dir() {
            let _ = self
                .mode
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
                    let sgid = if m & 0o010 != 0 { 0o2000 } else { 0 };
                    Some(m & !(0o4000 | sgid))
                });
        }
        self.touch(T_CTIME);
    }

    /// Sets the timestamps `which` names to now.
    pub fn touch(&self, which: u32) {
        let now = Timespec::now();
        let mut t = self.times.lock();
        if which & T_ATIME != 0 {
            t.atime = now;
        }
        if which & T_MTIME != 0 {
            t.mtime = now;
        }
        if which & T_CTIME != 0 {
            t.ctime = now;
        }
    }

    /// A read happened: the access time moves as under Linux's default
    /// `relatime` (`relatime_need_update`): when it is not newer than the
    /// modification or change time, or a day old.
    pub fn accessed(&self) {
        let now = Timespec::now();
        let mut t = self.times.lock();
        if t.atime <= t.mtime || t.atime <= t.ctime || now.sec - t.atime.sec >= 24 * 60 * 60 {
            t.atime = now;
        }
    }

    /// utimensat: set the access and/or modification time (None: leave it);
    /// the change time becomes now (Linux: `vfs_utimes`).
    pub fn set_times(&self, atime: Option<Timespec>, mtime: Option<Timespec>) {
        let now = Timespec::now();
        let mut t = self.times.lock();
        if let Some(a) = atime {
            t.atime = a;
        }
        if let Some(m) = mtime {
            t.mtime = m;
        }
        t.ctime = now;
    }

    /// The three timestamps, read together.
    pub fn times(&self) -> Times {
        *self.times.lock()
    }

    /// What readlink(2) says of this inode: EINVAL if it is no link.
    pub fn readlink(&self) -> KResult<String> {
        match &self.kind {
            InodeKind::Symlink(target) => Ok(target.clone()),
            InodeKind::MagicLink(link) => link.readlink(),
            _ => Err(Errno::EINVAL),
        }
    }

    /// Is it a directory (by its mode)?
    pub fn is_dir(&self) -> bool {
        self.mode() & S_IFMT == S_IFDIR
    }

    /// Its directory contents; ENOTDIR if it is not a directory.
    pub fn dir(&self) -> KResult<&Directory> {
        match &self.kind {
            InodeKind::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    /// `i_nlink`: the names linking it (see the field).
    pub fn nlink(&self) -> u32 {
        self.nlink.load(Ordering::Relaxed)
    }
    /// One name more (Linux: `inc_nlink`).
    pub(super) fn inc_nlink(&self) {
        self.nlink.fetch_add(1, Ordering::Relaxed);
    }
    /// One name fewer; an unlinked inode's change time moves (Linux:
    /// `vfs_unlink` -> `shmem_unlink` sets `ctime`).
    pub(super) fn dec_nlink(&self) {
        self.nlink.fetch_sub(1, Ordering::Relaxed);
        self.touch(T_CTIME);
    }

    /// The `stat` of this inode (Linux: `generic_fillattr`).
    pub fn stat(&self) -> Stat {
        let (size, blocks) = match &self.kind {
            InodeKind::File(f) => (f.size(), f.nr_pages() * 8),
            InodeKind::Symlink(target) => (target.len() as u64, 0),
            InodeKind::MagicLink(link) => (link.readlink().map_or(0, |t| t.len() as u64), 0),
            InodeKind::Dir(d) => (d.entries.lock().len() as u64 * 20, 0),
            InodeKind::Pseudo(_) | InodeKind::Raw(_) | InodeKind::Device(_) => (0, 0),
        };
        let t = self.times();
        let owner = self.owner();
        Stat {
            // A pipe, socket or anonymous inode, on no file system: 0:1.
            st_dev: self.tmpfs_sb().map_or_else(
                || match self.pseudo_dev.load(Ordering::Relaxed) {
                    0 => 1,
                    dev => dev,
                },
                |sb| sb.dev,
            ),
            st_ino: self.ino,
            st_mode: self.mode(),
            st_nlink: self.nlink(),
            st_uid: owner.uid,
            st_rdev: self.rdev.unwrap_or(0),
            st_gid: owner.gid,
            st_size: size as i64,
            st_blksize: 4096,
            st_blocks: blocks as i64,
            st_atime: t.atime.sec,
            st_atime_nsec: t.atime.nsec as u64,
            st_mtime: t.mtime.sec,
            st_mtime_nsec: t.mtime.nsec as u64,
            st_ctime: t.ctime.sec,
            st_ctime_nsec: t.ctime.nsec as u64,
            ..Stat::default()
        }
    }
}

impl Directory {
    /// The inode linked here as `name`, leaving out the entries made up at
    /// lookup (see `find`).
    pub fn lookup(&self, name: &str) -> Option<Arc<Inode>> {
        self.entries.lock().get(name).cloned()
    }

    /// `lookup`, then the entries made up at lookup; `dir` is this
    /// directory's inode.
    pub fn find(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        self.lookup(name).or_else(|| self.made_up(dir, name))
    }

    /// The entry `dynamic` makes up for `name`, on the directory's device.
    fn made_up(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        let inode = self.dynamic.as_ref()?.lookup(dir, name)?;
        let dev = dir.pseudo_dev.load(Ordering::Relaxed);
        if dev != 0 {
            inode.set_pseudo_dev(dev);
        }
        Some(inode)
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
                if let Some(inode) = self.made_up(dir, &name) {
                    all.push((name, inode));
                }
            }
        }
        all
    }

    /// The directory this one is linked in; None before it is linked, or once
    /// that directory is gone.
    pub fn parent(&self) -> Option<Arc<Inode>> {
        self.parent.lock().upgrade()
    }

    /// The inodes linked here, at this moment.
    pub fn children(&self) -> alloc::vec::Vec<Arc<Inode>> {
        self.entries.lock().values().cloned().collect()
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
        dir.touch(T_MTIME | T_CTIME);
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

    /// Makes `parent` this directory's `..`.
    pub(super) fn set_parent(&self, parent: &Arc<Inode>) {
        *self.parent.lock() = Arc::downgrade(parent);
    }
}

pub use uapi::stat::Stat;
