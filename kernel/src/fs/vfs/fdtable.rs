//! A process's file descriptor table (Linux: `struct files_struct`,
//! `fs/file.c`): small integers naming open files, lowest free first.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::file::File;
use crate::errno::{Errno, KResult};

/// Most descriptors one table holds (Linux's default `RLIMIT_NOFILE`).
pub const NR_OPEN: usize = 1024;

#[derive(Default)]
pub struct FdTable {
    files: Vec<Option<Arc<File>>>,
}

impl FdTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts `file` in the lowest free slot (Linux: `get_unused_fd` +
    /// `fd_install`).
    pub fn install(&mut self, file: Arc<File>) -> KResult<usize> {
        let fd = match self.files.iter().position(Option::is_none) {
            Some(fd) => fd,
            None if self.files.len() < NR_OPEN => {
                self.files.push(None);
                self.files.len() - 1
            }
            None => return Err(Errno::EMFILE),
        };
        self.files[fd] = Some(file);
        Ok(fd)
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

    /// Makes `newfd` refer to `oldfd`'s file (Linux: `dup3` without flags).
    pub fn dup_to(&mut self, oldfd: usize, newfd: usize) -> KResult<usize> {
        let file = self.get(oldfd)?;
        if oldfd == newfd {
            return Err(Errno::EINVAL);
        }
        if newfd >= NR_OPEN {
            return Err(Errno::EBADF);
        }
        if self.files.len() <= newfd {
            self.files.resize(newfd + 1, None);
        }
        self.files[newfd] = Some(file);
        Ok(newfd)
    }
}
