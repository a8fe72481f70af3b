//! signalfd: pending signals read from a file as `struct
//! signalfd_siginfo` records instead of run as handlers (Linux:
//! `fs/signalfd.c`). The signals are the reading thread's (and its
//! process's), as on Linux; they are normally blocked so that only the
//! file sees them.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollWaiter, POLLIN};
use crate::task::signal_abi::{SigFields, SigInfo, SIG_KERNEL_ONLY_MASK};
use uapi::signalfd::SignalfdSiginfo;
use uapi::Pod;

/// Bytes of one `struct signalfd_siginfo`.
pub const SIGNALFD_SIGINFO_SIZE: usize = size_of::<SignalfdSiginfo>();

/// One signalfd (Linux: `struct signalfd_ctx`): the signals it takes.
pub struct SignalFd {
    /// The signals this file reads: bit `signo - 1` for each, never SIGKILL
    /// or SIGSTOP (Linux: `signalfd_ctx.sigmask`).
    mask: AtomicU64,
}

impl SignalFd {
    /// A signalfd for the signals of `mask`, SIGKILL and SIGSTOP left out
    /// (Linux: the new-file half of `do_signalfd4`).
    pub fn new(mask: u64) -> Arc<SignalFd> {
        Arc::new(SignalFd {
            mask: AtomicU64::new(mask & !SIG_KERNEL_ONLY_MASK),
        })
    }

    /// signalfd4 on an existing signalfd: a new mask (SIGKILL and SIGSTOP
    /// never join it).
    pub fn set_mask(&self, mask: u64) {
        self.mask
            .store(mask & !SIG_KERNEL_ONLY_MASK, Ordering::Release);
    }

    /// The signals this file reads now; signalfd4 may change them at any
    /// time.
    fn mask(&self) -> u64 {
        self.mask.load(Ordering::Acquire)
    }

    /// Is a signal of the mask pending for the calling thread?
    fn pending(&self) -> bool {
        match &crate::task::current().user {
            Some(u) => {
                let set = u.pending.load(Ordering::Acquire)
                    | u.process.shared_pending.load(Ordering::Acquire);
                set & self.mask() != 0
            }
            None => false,
        }
    }
}

/// A `struct signalfd_siginfo` from a dequeued signal (Linux:
/// `signalfd_copyinfo`).
fn signalfd_copyinfo(info: &SigInfo) -> SignalfdSiginfo {
    let mut out = SignalfdSiginfo {
        ssi_signo: info.signo,
        ssi_code: info.code,
        ..SignalfdSiginfo::default()
    };
    match info.fields {
        SigFields::Kill { pid, uid } => {
            (out.ssi_pid, out.ssi_uid) = (pid as u32, uid);
        }
        SigFields::Fault { addr } => out.ssi_addr = addr,
        SigFields::Rt { pid, uid, value } => {
            (out.ssi_pid, out.ssi_uid) = (pid as u32, uid);
            (out.ssi_int, out.ssi_ptr) = (value as i32, value);
        }
        SigFields::Child {
            pid,
            uid,
            status,
            utime,
            stime,
        } => {
            (out.ssi_pid, out.ssi_uid, out.ssi_status) = (pid as u32, uid, status);
            (out.ssi_utime, out.ssi_stime) = (utime as u64, stime as u64);
        }
        SigFields::Timer {
            tid,
            overrun,
            value,
        } => {
            (out.ssi_tid, out.ssi_overrun) = (tid as u32, overrun as u32);
            (out.ssi_int, out.ssi_ptr) = (value as i32, value);
        }
    }
    out
}

impl Device for SignalFd {
    /// Linux: `signalfd_read`: as many records as fit (EINVAL for none),
    /// waiting (or EAGAIN) only for the first.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        let room = buf.len() / SIGNALFD_SIGINFO_SIZE;
        if room == 0 {
            return Err(Errno::EINVAL);
        }
        let mut n = 0;
        while n < room {
            let Some(info) = crate::task::signal::dequeue_signal(self.mask()) else {
                if n > 0 {
                    break;
                }
                if nonblock {
                    return Err(Errno::EAGAIN);
                }
                // A signal sent to us wakes the thread itself.
                while !self.pending() {
                    if crate::task::signal::signal_pending() {
                        return Err(Errno::EINTR);
                    }
                    crate::task::sleep_until(u64::MAX, || {
                        self.pending() || crate::task::signal::signal_pending()
                    });
                }
                continue;
            };
            let at = n * SIGNALFD_SIGINFO_SIZE;
            let record = signalfd_copyinfo(&info);
            buf[at..at + SIGNALFD_SIGINFO_SIZE].copy_from_slice(record.as_bytes());
            n += 1;
        }
        Ok(n * SIGNALFD_SIGINFO_SIZE)
    }

    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// Linux: `signalfd_poll`: readable while a signal of the mask is
    /// pending for the polling thread.
    fn poll(&self, _flags: u32) -> u32 {
        if self.pending() {
            POLLIN
        } else {
            0
        }
    }

    /// Sending a signal wakes the receiving threads themselves, and the
    /// poll loop notices the pending set change: no queue is needed.
    fn poll_wait(&self, _w: &Arc<PollWaiter>) -> Option<u64> {
        None
    }
}
