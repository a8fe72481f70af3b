//! A process's file descriptor table (Linux: `struct files_struct`,
//! `fs/file.c`): small integers naming open files, lowest free first.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::file::File;
use super::locks;
use crate::errno::{Errno, KResult};
pub use uapi::limits::NR_OPEN;

/// The id the next table gets as its lock owner; ids are never reused.
static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);

/// A process's descriptor table (Linux: `struct files_struct` and its
/// `fdtable`): slot `fd` of `files` and of `cloexec` describe descriptor
/// `fd`, and the two grow together.
pub struct FdTable {
    /// Names this table as the owner of POSIX record locks.
    id: u64,
    /// The open file of each descriptor, None for a free one (Linux:
    /// `fdtable.fd`).
    files: Vec<Option<Arc<File>>>,
    /// FD_CLOEXEC, per descriptor.
    cloexec: Vec<bool>,
}

impl Default for FdTable {
    fn default() -> Self {
        FdTable {
            id: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
            files: Vec::new(),
            cloexec: Vec::new(),
        }
    }
}

/// Cloning gives a forked child the same open files (Linux: `dup_fd`), but
/// not the parent's POSIX locks: the copy is a new owner.
impl Clone for FdTable {
    fn clone(&self) -> Self {
        FdTable {
            files: self.files.clone(),
            cloexec: self.cloexec.clone(),
            ..FdTable::default()
        }
    }
}

/// The table's process is gone: its POSIX locks go with it.
impl Drop for FdTable {
    fn drop(&mut self) {
        locks::drop_table(self.id);
    }
}

impl FdTable {
    /// An empty table, with a lock-owner id of its own.
    pub fn new() -> Self {
        Self::default()
    }

    /// The open descriptors and their files, lowest first (/proc/PID/fd).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Arc<File>)> {
        self.files
            .iter()
            .enumerate()
            .filter_map(|(fd, f)| Some((fd, f.as_ref()?)))
    }

    /// The owner id of this table's POSIX locks.
    pub fn lock_owner(&self) -> u64 {
        self.id
    }

    /// `file` left the table: this table's POSIX locks on its inode go
    /// (Linux: `filp_close` -> `locks_remove_posix`).
    fn closed(&self, file: &File) {
        locks::close_posix(self.id, file.inode.ino);
    }

    /// close_range(2): closes (or with `cloexec` marks FD_CLOEXEC) every
    /// open descriptor in `first..=last`.
    pub fn close_range(&mut self, first: usize, last: usize, cloexec: bool) {
        let end = last.saturating_add(1).min(self.files.len());
        for fd in first.min(end)..end {
            if cloexec {
                if self.files[fd].is_some() {
                    self.cloexec[fd] = true;
                }
            } else if let Some(f) = self.files[fd].take() {
                self.cloexec[fd] = false;
                self.closed(&f);
            }
        }
    }

    /// Puts `file` in the lowest free slot (Linux: `get_unused_fd` +
    /// `fd_install`).
    pub fn install(&mut self, file: Arc<File>) -> KResult<usize> {
        self.install_from(file, 0, false)
    }

    /// Puts `file` in the lowest free slot at or above `min` (F_DUPFD),
    /// with FD_CLOEXEC if `cloexec`.
    pub fn install_from(&mut self, file: Arc<File>, min: usize, cloexec: bool) -> KResult<usize> {
        let free = (min..self.files.len()).find(|&fd| self.files[fd].is_none());
        let fd = match free {
            Some(fd) => fd,
            None if self.files.len().max(min) < NR_OPEN => {
                let fd = self.files.len().max(min);
                self.files.resize(fd + 1, None);
                self.cloexec.resize(fd + 1, false);
                fd
            }
            None => return Err(Errno::EMFILE),
        };
        self.files[fd] = Some(file);
        self.cloexec[fd] = cloexec;
        Ok(fd)
    }

    /// F_GETFD: is `fd` close-on-exec? EBADF if it is not open.
    pub fn cloexec(&self, fd: usize) -> KResult<bool> {
        self.get(fd)?;
        Ok(self.cloexec[fd])
    }

    /// F_SETFD: marks `fd` close-on-exec or not; EBADF if it is not open.
    pub fn set_cloexec(&mut self, fd: usize, on: bool) -> KResult<()> {
        self.get(fd)?;
        self.cloexec[fd] = on;
        Ok(())
    }

    /// Closes every FD_CLOEXEC descriptor (at execve).
    pub fn close_on_exec(&mut self) {
        for fd in 0..self.files.len() {
            if self.cloexec[fd] {
                if let Some(f) = self.files[fd].take() {
                    self.closed(&f);
                }
                self.cloexec[fd] = false;
            }
        }
    }

    /// The file open as `fd` (Linux: `fget`); EBADF if none is.
    pub fn get(&self, fd: usize) -> KResult<Arc<File>> {
        self.files.get(fd).cloned().flatten().ok_or(Errno::EBADF)
    }

    /// close(2): frees `fd` and drops this table's POSIX locks on its file
    /// (Linux: `close_fd`); EBADF if it was not open.
    pub fn close(&mut self, fd: usize) -> KResult<()> {
        let f = self
            .files
            .get_mut(fd)
            .and_then(Option::take)
            .ok_or(Errno::EBADF)?;
        self.closed(&f);
        Ok(())
    }

    /// Makes `newfd` refer to `oldfd`'s file (Linux: `dup3`).
    pub fn dup_to(&mut self, oldfd: usize, newfd: usize, cloexec: bool) -> KResult<usize> {
        let file = self.get(oldfd)?;
        if oldfd == newfd {
            return Err(Errno::EINVAL);
        }
        if newfd >= NR_OPEN {
            return Err(Errno::EBADF);
        }
        if self.files.len() <= newfd {
            self.files.resize(newfd + 1, None);
            self.cloexec.resize(newfd + 1, false);
        }
        if let Some(old) = self.files[newfd].replace(file) {
            self.closed(&old);
        }
        self.cloexec[newfd] = cloexec;
        Ok(newfd)
    }
}
