//! pidfd: a file that names a process, so that it can be signalled,
//! polled for its exit and waited for without the race of a PID that may
//! name another process by then (Linux: `fs/pidfs.c`, `pidfd_create` and
//! `pidfd_poll` in `kernel/pid.c` and `kernel/fork.c`). clone's
//! CLONE_PIDFD and pidfd_open(2) make one; pidfd_send_signal(2),
//! pidfd_getfd(2) and waitid(P_PIDFD) take one.
//!
//! A pidfd names a whole process, or with PIDFD_THREAD one of its
//! threads. Linux's holds a `struct pid`; ours the process and the
//! thread's id, which PIDs never reused make equivalent.

use alloc::sync::Arc;

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollWaiter, POLLHUP, POLLIN, POLLRDNORM};
use crate::fs::vfs::{File, Inode, InodeKind, O_NONBLOCK, O_RDWR};
use crate::task::process::{self, Process};

/// PIDFD_NONBLOCK: waitid(P_PIDFD) on the file does not wait (it is
/// O_NONBLOCK, `include/uapi/linux/pidfd.h`).
pub const PIDFD_NONBLOCK: u32 = O_NONBLOCK;
/// PIDFD_THREAD: the pidfd names one thread, not its process (O_EXCL's
/// value).
pub const PIDFD_THREAD: u32 = 0o200;

/// One pidfd's process or thread (Linux: the `struct pid` in
/// `file->private_data`, and PIDFD_THREAD in `f_flags`).
pub struct PidFd {
    /// The process the file names, or whose thread it names; kept,
    /// zombie or reaped, as long as the file is open.
    process: Arc<Process>,
    /// PIDFD_THREAD: the thread's id.
    tid: Option<u32>,
}

impl PidFd {
    /// The process this pidfd names, or whose thread it names.
    pub fn process(&self) -> &Arc<Process> {
        &self.process
    }

    /// The id the pidfd stands for: the thread's, or the process's.
    pub fn pid(&self) -> u32 {
        self.tid.unwrap_or(self.process.pid)
    }

    /// Does it name one thread (PIDFD_THREAD)?
    pub fn is_thread(&self) -> bool {
        self.tid.is_some()
    }

    /// Is no task left for its id (Linux: `pid_task(pid, PIDTYPE_PID)`
    /// is NULL): another thread has exited, a process or its first thread
    /// has been reaped.
    pub fn reaped(&self) -> bool {
        let pid = self.pid();
        process::find_process(self.process.pid).is_none()
            || (pid != self.process.pid && process::find_thread(pid).is_none())
    }

    /// Has what it names exited: the whole process, or for PIDFD_THREAD
    /// the thread (Linux: `exit_state`, with an empty thread group for a
    /// process)?
    pub fn exited(&self) -> bool {
        match self.tid {
            Some(tid) => process::find_thread(tid).is_none(),
            None => self.process.is_zombie(),
        }
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

    /// Readable once the whole process (or the thread) has exited, and
    /// hung up once no task is left (Linux: `pidfd_poll`).
    fn poll(&self, _flags: u32) -> u32 {
        if self.reaped() {
            POLLIN | POLLRDNORM | POLLHUP
        } else if self.exited() {
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

/// A new pidfd file for `process`, or with `tid` for that thread of it,
/// O_RDWR and, with PIDFD_NONBLOCK in `flags`, O_NONBLOCK (Linux:
/// `pidfd_prepare`); the caller installs it close-on-exec.
pub fn new_file(process: Arc<Process>, tid: Option<u32>, flags: u32) -> KResult<Arc<File>> {
    let inode = Inode::new(0o600, InodeKind::Device(Arc::new(PidFd { process, tid })));
    File::new(inode, O_RDWR | (flags & PIDFD_NONBLOCK))
}

/// The pidfd `file` is, if it is one (Linux: `pidfd_pid`, whose EBADF
/// the callers return for any other file).
pub fn of_file(file: &File) -> KResult<Arc<PidFd>> {
    file.device::<PidFd>().ok_or(Errno::EBADF)
}
