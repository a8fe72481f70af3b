//! A process's file descriptor table (Linux: `struct files_struct`,
//! `fs/file.c`): small integers naming open files, lowest free first.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::file::File;
use crate::errno::{Errno, KResult};

/// Most descriptors one table holds (Linux's default `RLIMIT_NOFILE`).
pub const NR_OPEN: usize = 1024;

/// Cloning gives a forked child the same open files (Linux: `dup_fd`).
#[derive(Default, Clone)]
pub struct FdTable {
    files: Vec<Option<Arc<File>>>,
    /// FD_CLOEXEC, per descriptor.
    cloexec: Vec<bool>,
}

impl FdTable {
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

    pub fn cloexec(&self, fd: usize) -> KResult<bool> {
        self.get(fd)?;
        Ok(self.cloexec[fd])
    }

    pub fn set_cloexec(&mut self, fd: usize, on: bool) -> KResult<()> {
        self.get(fd)?;
        self.cloexec[fd] = on;
        Ok(())
    }

    /// Closes every FD_CLOEXEC descriptor (at execve).
    pub fn close_on_exec(&mut self) {
        for fd in 0..self.files.len() {
            if self.cloexec[fd] {
                self.files[fd] = None;
                self.cloexec[fd] = false;
            }
        }
    }

    pub fn get(&self, fd: usize) -> KResult<Arc<File>> {
        self.files.get(fd).cloned().flatten().ok_or(Errno::EBADF)
    }

    pub fn close(&mut self, fd: usize) -> KResult<()> {
        self.files
            .get_mut(fd)
            .and_then(Option::take)
            .map(|_| ())
            .ok_or(Errno::EBADF)
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
        self.files[newfd] = Some(file);
        self.cloexec[newfd] = cloexec;
        Ok(newfd)
    }
}
