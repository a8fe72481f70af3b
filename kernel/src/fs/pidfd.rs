//! pidfd: a file that names a process, so that it can be signalled,
//! polled for its exit and waited for without the race of a PID that may
//! name another process by then (Linux: `fs/pidfs.c`, `pidfd_create` and
//! `pidfd_poll` in `kernel/pid.c` and `kernel/fork.c`). clone's
//! CLONE_PIDFD and pidfd_open(2) make one; pidfd_send_signal(2),
//! pidfd_getfd(2) and waitid(P_PIDFD) take one.
//!
//! Where we simplify: a pidfd names a whole process (PIDFD_THREAD, a
//! pidfd for one thread, is refused); Linux's holds a `struct pid`, ours
//! the process itself, which PIDs never reused make equivalent.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollWaiter, POLLHUP, POLLIN, POLLRDNORM};
use crate::fs::vfs::{File, Inode, InodeKind, O_NONBLOCK, O_RDWR};
use crate::task::process::{self, Process};

/// PIDFD_NONBLOCK: waitid(P_PIDFD) on the file does not wait (it is
/// O_NONBLOCK, `include/uapi/linux/pidfd.h`).
pub const PIDFD_NONBLOCK: u32 = O_NONBLOCK;

/// One pidfd's process (Linux: the `struct pid` in `file->private_data`).
pub struct PidFd {
    /// The process the file names; kept, zombie or reaped, as long as
    /// the file is open.
    process: Arc<Process>,
}

impl PidFd {
    /// The process this pidfd names.
    pub fn process(&self) -> &Arc<Process> {
        &self.process
    }

    /// Has the process been reaped, its PID freed (Linux: no task left
    /// on the `struct pid`)?
    pub fn reaped(&self) -> bool {
        process::find_process(self.process.pid).is_none()
    }
}

impl Device for PidFd {
    /// A pidfd has no read method (Linux: `pidfs_file_operations`).
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// Nor a write method.
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// Readable once the whole process has exited, and hung up once it has
    /// been reaped too (Linux: `pidfd_poll`).
    fn poll(&self, _flags: u32) -> u32 {
        if self.reaped() {
            POLLIN | POLLRDNORM | POLLHUP
        } else if self.process.is_zombie() {
            POLLIN | POLLRDNORM
        } else {
            0
        }
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.process.pidfd_wait.add(w);
        None
    }
}

/// A new pidfd file for `process`, O_RDWR and, with PIDFD_NONBLOCK in
/// `flags`, O_NONBLOCK (Linux: `pidfd_prepare`); the caller installs it
/// close-on-exec.
pub fn new_file(process: Arc<Process>, flags: u32) -> KResult<Arc<File>> {
    let inode = Inode::new(0o600, InodeKind::Device(Arc::new(PidFd { process })));
    File::new(inode, O_RDWR | (flags & PIDFD_NONBLOCK))
}

/// The pidfd `file` is, if it is one (Linux: `pidfd_pid`, whose EBADF
/// the callers return for any other file).
pub fn of_file(file: &File) -> KResult<Arc<PidFd>> {
    match &file.inode.kind {
        InodeKind::Device(d) => d.clone().into_any().downcast::<PidFd>().ok(),
        _ => None,
    }
    .ok_or(Errno::EBADF)
}
