//! Open files (Linux: `struct file`, `fs/open.c`, `fs/read_write.c`,
//! `fs/readdir.c`): an inode, the access mode and flags it was opened
//! with, and a file position shared by everyone using this open file.

use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::inode::{Inode, InodeKind, Stat, S_IFMT, S_IFREG, T_CTIME, T_MTIME};
use super::path;
use super::permission::{self, MAY_EXEC, MAY_READ, MAY_WRITE};
use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::heap::BOUNCE_MAX;
use crate::mm::uaccess::{ReadDest, WriteSource};
use crate::sync::SpinLock;
use uapi::fcntl::{__O_TMPFILE, O_NOATIME, O_TMPFILE};
pub use uapi::fcntl::{
    FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, O_ACCMODE, O_APPEND, O_CREAT, O_DIRECTORY, O_EXCL,
    O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY, SEEK_CUR, SEEK_DATA, SEEK_END,
    SEEK_HOLE, SEEK_SET,
};

// open(2) flags, Linux arm64 values (`asm-generic/fcntl.h`).

/// An open file description (Linux: `struct file`): one open, shared by every
/// descriptor dup and fork make from it; its last reference going releases
/// its device end and its locks.
pub struct File {
    /// The file opened (Linux: `f_inode`).
    pub inode: Arc<Inode>,
    /// Access mode and status flags; F_SETFL may change O_APPEND and
    /// O_NONBLOCK.
    flags: AtomicU32,
    /// The file position in bytes; for a directory, the entries read so far
    /// (Linux: `f_pos`, under `f_pos_lock`).
    pos: SpinLock<u64>,
    /// A pseudo file's text, made when it was opened and made again by
    /// each later read from offset 0 (Linux: the seq_file buffer, which a
    /// read at position 0 refills; the first read here gets what open
    /// made, so it shows the moment of open and not the read's own
    /// buffers), and whether it has been read: reads in pieces see one
    /// snapshot, and a program polling a file with pread at 0 sees it
    /// change.
    text: SpinLock<(String, bool)>,
    /// Has this open file taken an OFD or flock lock? Then its last close
    /// must release them.
    locked: AtomicBool,
}

/// Opens (and with O_CREAT maybe creates) `path` (Linux: `do_sys_openat2`).
pub fn open(start: &Arc<Inode>, path: &str, flags: u32, mode: u32) -> KResult<Arc<File>> {
    if flags & __O_TMPFILE != 0 {
        return open_tmpfile(start, path, flags, mode);
    }
    let inode = match path::lookup(start, path, flags & O_NOFOLLOW == 0) {
        Ok(_) if flags & O_CREAT != 0 && flags & O_EXCL != 0 => return Err(Errno::EEXIST),
        Ok(inode) => {
            may_open(&inode, flags)?;
            inode
        }
        Err(Errno::ENOENT) if flags & O_CREAT != 0 => {
            // What the caller creates it may open as it asks, whatever
            // mode it gave the file (Linux: `FMODE_CREATED` skips
            // `may_open`'s permission check).
            match path::create_file(start, path, S_IFREG | (mode & 0o7777)) {
                // Lost a race with another creator: open theirs.
                Err(Errno::EEXIST) if flags & O_EXCL == 0 => {
                    let inode = path::lookup(start, path, true)?;
                    may_open(&inode, flags)?;
                    inode
                }
                other => other?,
            }
        }
        Err(e) => return Err(e),
    };
    File::new(inode, flags)
}

/// May the running process open `inode` with `flags` (Linux:
/// `may_open`)? Read and/or write permission as the access mode asks, and
/// write for O_TRUNC: EACCES; O_NOATIME only for the owner or
/// CAP_FOWNER: EPERM. A symbolic link or a directory opened for writing
/// is left to `File::new`'s ELOOP and EISDIR, which come first.
fn may_open(inode: &Inode, flags: u32) -> KResult<()> {
    let mut mask = match flags & O_ACCMODE {
        O_RDONLY => MAY_READ,
        O_WRONLY => MAY_WRITE,
        _ => MAY_READ | MAY_WRITE,
    };
    if flags & O_TRUNC != 0 {
        mask |= MAY_WRITE;
    }
    match &inode.kind {
        InodeKind::Symlink(_) | InodeKind::MagicLink(_) => return Ok(()),
        InodeKind::Dir(_) if mask & MAY_WRITE != 0 => return Ok(()),
        _ => {}
    }
    inode.permission(mask)?;
    if flags & O_NOATIME != 0
        && !permission::owner_or_capable(&crate::task::current_cred(), inode.owner())
    {
        return Err(Errno::EPERM);
    }
    Ok(())
}

/// O_TMPFILE (Linux: `build_open_flags`' checks, then `do_tmpfile`): a new
/// regular file with `mode` on the file system of the directory `path`,
/// linked nowhere, so it goes when its last descriptor closes. EINVAL
/// unless opened for writing with O_DIRECTORY and without O_CREAT,
/// ENOTDIR if `path` is not a directory, EOPNOTSUPP where the file system
/// cannot make files (/proc, /sys).
fn open_tmpfile(start: &Arc<Inode>, path: &str, flags: u32, mode: u32) -> KResult<Arc<File>> {
    if flags & (O_TMPFILE | O_CREAT) != O_TMPFILE || flags & O_ACCMODE == O_RDONLY {
        return Err(Errno::EINVAL);
    }
    let dir = path::lookup(start, path, flags & O_NOFOLLOW == 0)?;
    let sb = dir.dir().map_err(|_| Errno::ENOTDIR)?.sb.clone();
    let sb = sb.ok_or(Errno::EOPNOTSUPP)?;
    dir.permission(MAY_WRITE | MAY_EXEC)?;
    sb.may_add_inode()?;
    let inode = sb.new_file(S_IFREG | (mode & 0o7777));
    inode.init_owner(Some(&dir));
    File::new(inode, flags & !(O_TMPFILE | O_CREAT | O_EXCL | O_TRUNC))
}

impl File {
    /// An open file for `inode`, after the checks `open` makes.
    pub fn new(inode: Arc<Inode>, flags: u32) -> KResult<Arc<File>> {
        let writable = flags & O_ACCMODE != O_RDONLY;
        if flags & O_ACCMODE == O_ACCMODE {
            return Err(Errno::EINVAL);
        }
        match &inode.kind {
            InodeKind::Dir(_) if writable || flags & O_CREAT != 0 => return Err(Errno::EISDIR),
            InodeKind::Dir(_) => {}
            _ if flags & O_DIRECTORY != 0 => return Err(Errno::ENOTDIR),
            InodeKind::Symlink(_) | InodeKind::MagicLink(_) => return Err(Errno::ELOOP),
            InodeKind::Pseudo(p) if writable && !p.is_writable() => return Err(Errno::EACCES),
            InodeKind::Raw(r) if writable && !r.is_writable() => return Err(Errno::EACCES),
            InodeKind::File(f) if writable && flags & O_TRUNC != 0 => {
                f.truncate(0)?;
                inode.touch(T_MTIME | T_CTIME);
            }
            _ => {}
        }
        let text = match &inode.kind {
            InodeKind::Pseudo(p) if flags & O_ACCMODE != O_WRONLY => p.show(),
            InodeKind::Device(d) => {
                d.opened(flags)?;
                String::new()
            }
            _ => String::new(),
        };
        Ok(Arc::new(File {
            inode,
            flags: AtomicU32::new(flags & !(O_CREAT | O_EXCL | O_TRUNC)),
            pos: SpinLock::new(0),
            text: SpinLock::new((text, false)),
            locked: AtomicBool::new(false),
        }))
    }

    /// Opened for reading: O_RDONLY or O_RDWR (Linux: `FMODE_READ`).
    fn readable(&self) -> bool {
        self.flags() & O_ACCMODE != O_WRONLY
    }
    /// Opened for writing: O_WRONLY or O_RDWR (Linux: `FMODE_WRITE`).
    fn writable(&self) -> bool {
        self.flags() & O_ACCMODE != O_RDONLY
    }
    /// O_NONBLOCK: a device read or write fails with EAGAIN instead of
    /// waiting.
    fn nonblock(&self) -> bool {
        self.flags() & O_NONBLOCK != 0
    }

    /// Reads at the file position and advances it (Linux: `vfs_read`).
    /// A /proc or /sys file (and most devices) fills a kernel buffer, so a
    /// user destination takes at most `BOUNCE_MAX` bytes from one call.
    pub fn read<'a>(&self, dst: impl Into<ReadDest<'a>>) -> KResult<usize> {
        let dst = dst.into();
        if let InodeKind::Device(d) = &self.inode.kind {
            return if self.readable() {
                d.read_pos(dst, &self.pos, self.nonblock())
            } else {
                Err(Errno::EBADF)
            };
        }
        let pos = *self.pos.lock();
        let n = self.pread(dst, pos)?;
        *self.pos.lock() = pos + n as u64;
        Ok(n)
    }

    /// Writes at the file position (at the end with O_APPEND) and advances
    /// it (Linux: `vfs_write`).
    pub fn write<'a>(&self, data: impl Into<WriteSource<'a>>) -> KResult<usize> {
        let data = data.into();
        if !self.writable() {
            return Err(Errno::EBADF);
        }
        if let InodeKind::Device(d) = &self.inode.kind {
            return d.write_iter(data, self.nonblock());
        }
        if let InodeKind::File(f) = &self.inode.kind {
            if self.flags() & O_APPEND != 0 {
                let (n, end) = f.append(data)?;
                self.modified(n);
                *self.pos.lock() = end;
                return Ok(n);
            }
        }
        let pos = *self.pos.lock();
        let n = self.pwrite(data, pos)?;
        *self.pos.lock() = pos + n as u64;
        Ok(n)
    }

    /// pread(2): reads at `offset`, leaving the file position alone (Linux:
    /// `vfs_read` at an explicit position). A pseudo file reads from its
    /// text (see `text`); ESPIPE for a device, EISDIR for a directory.
    pub fn pread<'a>(&self, dst: impl Into<ReadDest<'a>>, offset: u64) -> KResult<usize> {
        let dst = dst.into();
        if !self.readable() {
            return Err(Errno::EBADF);
        }
        match &self.inode.kind {
            InodeKind::File(f) => {
                let n = f.read_at(offset, dst)?;
                self.inode.accessed();
                Ok(n)
            }
            InodeKind::Dir(_) => Err(Errno::EISDIR),
            InodeKind::Pseudo(p) => dst.with_buffer(BOUNCE_MAX, |buf| {
                let mut guard = self.text.lock();
                let (text, read) = &mut *guard;
                if offset == 0 && core::mem::replace(read, true) {
                    *text = p.show();
                }
                let text = text.as_bytes();
                let start = (offset as usize).min(text.len());
                let n = buf.len().min(text.len() - start);
                buf[..n].copy_from_slice(&text[start..start + n]);
                Ok(n)
            }),
            InodeKind::Raw(r) => dst.with_buffer(BOUNCE_MAX, |buf| r.read_at(offset, buf)),
            InodeKind::Symlink(_) | InodeKind::MagicLink(_) => Err(Errno::EINVAL),
            InodeKind::Device(_) => Err(Errno::ESPIPE),
        }
    }

    /// pwrite(2): writes at `offset`, leaving the file position alone, except
    /// that an O_APPEND file appends, as on Linux. A pseudo file takes up to
    /// a page of text as its new value; ESPIPE for a device.
    pub fn pwrite<'a>(&self, data: impl Into<WriteSource<'a>>, offset: u64) -> KResult<usize> {
        let data = data.into();
        if !self.writable() {
            return Err(Errno::EBADF);
        }
        match &self.inode.kind {
            // Linux appends even for pwrite on an O_APPEND file (pwrite(2), BUGS).
            InodeKind::File(f) if self.flags() & O_APPEND != 0 => {
                let (n, _) = f.append(data)?;
                self.modified(n);
                Ok(n)
            }
            InodeKind::File(f) => {
                let n = f.write_at(offset, data)?;
                self.modified(n);
                Ok(n)
            }
            // A page at most, as sysfs and procfs stores take (Linux:
            // `kernfs_fop_write_iter`): a longer write is short.
            InodeKind::Pseudo(p) => data.take(PAGE_SIZE).with_bytes(|bytes| {
                let text = core::str::from_utf8(bytes).map_err(|_| Errno::EINVAL)?;
                p.store(text).map(|_| bytes.len())
            }),
            InodeKind::Raw(r) => data.with_bytes(|bytes| r.write_at(offset, bytes)),
            InodeKind::Dir(_) => Err(Errno::EISDIR),
            InodeKind::Symlink(_) | InodeKind::MagicLink(_) => Err(Errno::EINVAL),
            InodeKind::Device(_) => Err(Errno::ESPIPE),
        }
    }

    /// A write of `n` bytes reached the file: its set-ID bits go and its
    /// modification and change times move (Linux: `file_modified` before
    /// the copy, for a non-empty write).
    fn modified(&self, n: usize) {
        if n > 0 {
            self.inode.remove_privs();
            self.inode.touch(T_MTIME | T_CTIME);
        }
    }

    /// Is the file open for writing? (Linux: `FMODE_WRITE`.)
    pub fn is_writable(&self) -> bool {
        self.writable()
    }

    /// Is the file open for reading? (Linux: `FMODE_READ`.)
    pub fn is_readable(&self) -> bool {
        self.readable()
    }

    /// Notes that this open file holds OFD or flock locks.
    pub fn note_locked(&self) {
        self.locked.store(true, Ordering::Relaxed);
    }

    /// The device behind this file if it is a `T`: the system calls of
    /// one kind of file (sockets, epoll, timerfd...) find their object so
    /// (Linux compares `f_op` and takes `private_data`).
    pub fn device<T: core::any::Any + Send + Sync>(&self) -> Option<Arc<T>> {
        match &self.inode.kind {
            InodeKind::Device(d) => d.clone().into_any().downcast::<T>().ok(),
            _ => None,
        }
    }

    /// The open flags (F_GETFL).
    pub fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// F_SETFL: only O_APPEND and O_NONBLOCK change.
    pub fn set_status_flags(&self, new: u32) {
        let keep = !(O_APPEND | O_NONBLOCK);
        let _ = self
            .flags
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some((f & keep) | (new & (O_APPEND | O_NONBLOCK)))
            });
    }

    /// A device's ioctl (the terminal's, a pipe's FIONREAD) or a /proc
    /// file's (pagemap's PAGEMAP_SCAN).
    pub fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        match &self.inode.kind {
            InodeKind::Device(d) => d.ioctl(cmd, arg),
            InodeKind::Raw(r) => r.ioctl(cmd, arg),
            _ => Err(Errno::ENOTTY),
        }
    }

    /// Moves the file position (Linux: `generic_file_llseek`, plus
    /// SEEK_DATA / SEEK_HOLE as shmem implements them).
    pub fn lseek(&self, offset: i64, whence: u32) -> KResult<u64> {
        if let InodeKind::Device(d) = &self.inode.kind {
            return d.llseek(&self.pos, offset, whence);
        }
        let mut pos = self.pos.lock();
        let size = match &self.inode.kind {
            InodeKind::File(f) => f.size(),
            _ => 0,
        };
        let new = match whence {
            SEEK_SET => offset,
            SEEK_CUR => (*pos as i64).checked_add(offset).ok_or(Errno::EINVAL)?,
            SEEK_END => (size as i64).checked_add(offset).ok_or(Errno::EINVAL)?,
            SEEK_DATA | SEEK_HOLE => {
                let InodeKind::File(f) = &self.inode.kind else {
                    return Err(Errno::EINVAL);
                };
                if offset < 0 {
                    return Err(Errno::ENXIO);
                }
                f.seek_data_hole(offset as u64, whence == SEEK_DATA)? as i64
            }
            _ => return Err(Errno::EINVAL),
        };
        if new < 0 {
            return Err(Errno::EINVAL);
        }
        *pos = new as u64;
        Ok(new as u64)
    }

    /// ftruncate(2): sets a regular file's size in bytes (Linux:
    /// `do_ftruncate`); EINVAL for a negative length, a file not open for
    /// writing, or one that is not a regular file.
    pub fn ftruncate(&self, length: i64) -> KResult<()> {
        let InodeKind::File(f) = &self.inode.kind else {
            return Err(Errno::EINVAL);
        };
        if length < 0 || !self.writable() {
            return Err(Errno::EINVAL);
        }
        f.truncate(length as u64)?;
        self.inode.remove_privs();
        self.inode.touch(T_MTIME | T_CTIME);
        Ok(())
    }

    /// fallocate(2) (Linux: `vfs_fallocate`, `shmem_fallocate`): mode 0 or
    /// FALLOC_FL_KEEP_SIZE caches every page of the range, PUNCH_HOLE with
    /// KEEP_SIZE frees them; any other mode is EOPNOTSUPP.
    pub fn fallocate(&self, mode: u32, offset: i64, len: i64) -> KResult<()> {
        if offset < 0 || len <= 0 {
            return Err(Errno::EINVAL);
        }
        if !self.writable() {
            return Err(Errno::EBADF);
        }
        let InodeKind::File(f) = &self.inode.kind else {
            return Err(if self.inode.is_dir() {
                Errno::EISDIR
            } else {
                Errno::ENODEV
            });
        };
        let end = (offset as u64)
            .checked_add(len as u64)
            .ok_or(Errno::EFBIG)?;
        match mode {
            0 | FALLOC_FL_KEEP_SIZE => f.allocate(offset as u64, end, mode == 0)?,
            m if m == FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE => {
                f.punch_hole(offset as u64, end)?
            }
            FALLOC_FL_PUNCH_HOLE => return Err(Errno::EINVAL),
            _ => return Err(Errno::EOPNOTSUPP),
        }
        // Linux: `shmem_fallocate` -> `file_modified`.
        self.inode.touch(T_MTIME | T_CTIME);
        Ok(())
    }

    /// fstat(2): the attributes of the open inode (Linux: `vfs_getattr`).
    pub fn fstat(&self) -> Stat {
        self.inode.stat()
    }

    /// Fills `buf` with `struct linux_dirent64` records and advances the
    /// position by the entries returned (Linux: `getdents64`; the position is
    /// an entry count: 0 = ".", 1 = "..", then names in sorted order).
    pub fn getdents64(&self, buf: &mut [u8]) -> KResult<usize> {
        let dir = self.inode.dir()?;
        let mut pos = self.pos.lock();
        let parent = dir.parent().unwrap_or_else(|| self.inode.clone());
        let entries = dir.list(&self.inode);
        let specials = [(".", self.inode.clone()), ("..", parent)];
        let all = specials
            .iter()
            .map(|(n, i)| (*n, i.clone()))
            .chain(entries.iter().map(|(n, i)| (n.as_str(), i.clone())));
        let mut written = 0;
        for (name, inode) in all.skip(*pos as usize) {
            let name = crate::ustr::to_bytes(name);
            let reclen = (19 + name.len() + 1).next_multiple_of(8);
            if written + reclen > buf.len() {
                if written == 0 {
                    return Err(Errno::EINVAL);
                }
                break;
            }
            let rec = &mut buf[written..written + reclen];
            rec.fill(0);
            rec[0..8].copy_from_slice(&inode.ino.to_ne_bytes());
            rec[8..16].copy_from_slice(&(*pos as i64 + 1).to_ne_bytes());
            rec[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
            rec[18] = dirent_type(inode.mode());
            rec[19..19 + name.len()].copy_from_slice(&name);
            written += reclen;
            *pos += 1;
        }
        Ok(written)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if let InodeKind::Device(d) = &self.inode.kind {
            d.released(self.flags());
        }
        if self.locked.load(Ordering::Relaxed) {
            super::locks::drop_file(self as *const File as usize);
        }
    }
}

/// `d_type` of a directory entry (Linux: `fs_umode_to_dtype`).
fn dirent_type(mode: u32) -> u8 {
    ((mode & S_IFMT) >> 12) as u8
}
