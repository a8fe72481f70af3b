//! Character devices and pipes: files whose reads and writes go to code
//! rather than to a page cache (Linux: `struct file_operations` of a char
//! device; `fs/pipe.c`).

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::errno::{Errno, KResult};
use crate::sync::SpinLock;
use crate::task::WaitQueue;

pub trait Device: Send + Sync {
    /// `nonblock`: O_NONBLOCK, EAGAIN instead of waiting.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize>;
    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize>;
    /// ioctl(2) `cmd` with its argument `arg`, often a user pointer the
    /// device reads or writes itself (Linux: `unlocked_ioctl`). Default:
    /// not a terminal.
    fn ioctl(&self, _cmd: u32, _arg: usize) -> KResult<i64> {
        Err(Errno::ENOTTY)
    }
    /// An open file of this device was made (`write_end`: opened for writing).
    fn opened(&self, _write_end: bool) {}
    /// An open file of this device is gone.
    fn released(&self, _write_end: bool) {}
}

/// Bytes a pipe holds before writers wait (Linux: 16 pages).
const PIPE_SIZE: usize = 65536;

/// A pipe: a bounded byte queue between writers and readers.
pub struct Pipe {
    buf: SpinLock<VecDeque<u8>>,
    readers: AtomicUsize,
    writers: AtomicUsize,
    wait: WaitQueue,
}

impl Pipe {
    pub fn new() -> Arc<Pipe> {
        Arc::new(Pipe {
            buf: SpinLock::new(VecDeque::new()),
            readers: AtomicUsize::new(0),
            writers: AtomicUsize::new(0),
            wait: WaitQueue::new(),
        })
    }
}

impl Device for Pipe {
    fn read(&self, out: &mut [u8], nonblock: bool) -> KResult<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if nonblock && self.buf.lock().is_empty() && self.writers.load(Ordering::Acquire) != 0 {
            return Err(Errno::EAGAIN);
        }
        self.wait.wait_interruptible(|| {
            !self.buf.lock().is_empty() || self.writers.load(Ordering::Acquire) == 0
        })?;
        let mut buf = self.buf.lock();
        let n = out.len().min(buf.len());
        for (o, b) in out.iter_mut().zip(buf.drain(..n)) {
            *o = b;
        }
        drop(buf);
        self.wait.wake_all();
        Ok(n)
    }

    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        let mut done = 0;
        while done < data.len() {
            if nonblock && self.buf.lock().len() >= PIPE_SIZE {
                return if done > 0 {
                    Ok(done)
                } else {
                    Err(Errno::EAGAIN)
                };
            }
            if self.readers.load(Ordering::Acquire) == 0 {
                crate::task::signal::send_to_current(crate::task::signal_abi::SIGPIPE);
                return if done > 0 {
                    Ok(done)
                } else {
                    Err(Errno::EPIPE)
                };
            }
            let waited = self.wait.wait_interruptible(|| {
                self.buf.lock().len() < PIPE_SIZE || self.readers.load(Ordering::Acquire) == 0
            });
            if let Err(e) = waited {
                return if done > 0 { Ok(done) } else { Err(e) };
            }
            let mut buf = self.buf.lock();
            let n = (PIPE_SIZE - buf.len().min(PIPE_SIZE)).min(data.len() - done);
            buf.extend(&data[done..done + n]);
            drop(buf);
            done += n;
            self.wait.wake_all();
        }
        Ok(done)
    }

    fn opened(&self, write_end: bool) {
        let count = if write_end {
            &self.writers
        } else {
            &self.readers
        };
        count.fetch_add(1, Ordering::AcqRel);
    }

    fn released(&self, write_end: bool) {
        let count = if write_end {
            &self.writers
        } else {
            &self.readers
        };
        count.fetch_sub(1, Ordering::AcqRel);
        self.wait.wake_all();
    }
}
