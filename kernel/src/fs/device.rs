//! Character devices and pipes: files whose reads and writes go to code
//! rather than to a page cache (Linux: `struct file_operations` of a char
//! device; `fs/pipe.c`). Readiness (`poll`, `poll_wait`) is described in
//! `fs/poll.rs`.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::any::Any;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::poll::{
    PollQueue, PollWaiter, DEFAULT_POLLMASK, POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM,
    POLLWRNORM,
};
use crate::fs::vfs::{O_ACCMODE, O_NONBLOCK, O_RDONLY, O_WRONLY};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::heap::BOUNCE_MAX;
use crate::mm::uaccess::{ReadDest, WriteSource};
use crate::sync::SpinLock;
pub use uapi::ioctls::FIONREAD;

/// A device seen as `Any`, so the system calls of one kind of file
/// (sockets, epoll, signalfd) can find their object behind an fd
/// (`File::device`; Linux compares `file->f_op` and takes
/// `file->private_data`).
pub trait AsAny {
    /// The device as `&dyn Any`, to `downcast_ref` to its concrete type.
    fn as_any(&self) -> &dyn Any;
    /// The device as `Arc<dyn Any>`, to `downcast` to an `Arc` of its type.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<T: Any + Send + Sync> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// What a character device, pipe, socket or other special file does for its
/// open files (Linux: the `struct file_operations` its inode gives a `struct
/// file`). Only `read` and `write` are required.
pub trait Device: AsAny + Send + Sync {
    /// `nonblock`: O_NONBLOCK, EAGAIN instead of waiting.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize>;
    /// Writes from `data`, returning how many bytes were taken; a short count
    /// is allowed. `nonblock`: O_NONBLOCK, EAGAIN instead of waiting.
    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize>;
    /// Reads into `dst`, which may be user memory (Linux:
    /// `file_operations.read_iter`). Default: `read` into a kernel buffer
    /// of at most `BOUNCE_MAX` bytes, then a copy.
    fn read_iter(&self, dst: ReadDest, nonblock: bool) -> KResult<usize> {
        dst.with_buffer(BOUNCE_MAX, |buf| self.read(buf, nonblock))
    }
    /// Writes from `src`, which may be user memory (Linux:
    /// `file_operations.write_iter`). Default: `write` from a kernel
    /// buffer, `BOUNCE_MAX` bytes at a time, until a short write.
    fn write_iter(&self, src: WriteSource, nonblock: bool) -> KResult<usize> {
        let mut done = 0;
        while done < src.len() {
            let chunk = src.skip(done).take(BOUNCE_MAX);
            let n = match chunk.with_bytes(|bytes| self.write(bytes, nonblock)) {
                Ok(n) => n,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            done += n;
            if n < chunk.len() {
                break;
            }
        }
        Ok(done)
    }
    /// ioctl(2) `cmd` with its argument `arg`, often a user pointer the
    /// device reads or writes itself (Linux: `unlocked_ioctl`). Default:
    /// not a terminal.
    fn ioctl(&self, _cmd: u32, _arg: usize) -> KResult<i64> {
        Err(Errno::ENOTTY)
    }
    /// Does mmap(2) of this device map anonymous memory (Linux: the `mmap`
    /// of `zero_fops`, `mmap_zero`)? Default: no, it cannot be mapped
    /// (ENODEV, as a file without `mmap`).
    fn maps_anonymous_memory(&self) -> bool {
        false
    }
    /// A read by an open file whose position is `pos` (Linux: `read_iter`
    /// with its `ki_pos`): a device that keeps a place per open file
    /// (/dev/kmsg: the next record) reads from it and moves it. Default:
    /// `read_iter`, no place.
    fn read_pos(&self, dst: ReadDest, _pos: &SpinLock<u64>, nonblock: bool) -> KResult<usize> {
        self.read_iter(dst, nonblock)
    }
    /// lseek(2) on an open file whose position is `pos` (Linux:
    /// `file_operations.llseek`); ESPIPE for a device without places.
    fn llseek(&self, _pos: &SpinLock<u64>, _offset: i64, _whence: u32) -> KResult<u64> {
        Err(Errno::ESPIPE)
    }
    /// An open file of this device is being made, with open flags `flags`
    /// (O_ACCMODE, O_NONBLOCK); an error fails the open (Linux:
    /// `file_operations.open`).
    fn opened(&self, _flags: u32) -> KResult<()> {
        Ok(())
    }
    /// An open file of this device, opened with `flags`, is gone (Linux:
    /// `file_operations.release`).
    fn released(&self, _flags: u32) {}
    /// Which POLL* bits hold now for an open file with open flags `flags`
    /// (Linux: `file_operations.poll`). Default: always ready, as a char
    /// device without a poll method.
    fn poll(&self, _flags: u32) -> u32 {
        DEFAULT_POLLMASK
    }
    /// Puts `w` on the queues woken when `poll` may change (Linux:
    /// `poll_wait`); returns a counter value at which to poll again if the
    /// readiness can change with nothing to wake the queue.
    fn poll_wait(&self, _w: &Arc<PollWaiter>) -> Option<u64> {
        None
    }
}

/// Bytes a new pipe holds before writers wait (Linux: 16 pages).
pub const PIPE_SIZE: usize = 65536;

/// `fs.pipe-max-size`: the most F_SETPIPE_SZ gives a caller without
/// CAP_SYS_RESOURCE (Linux: `pipe_max_size`, 1 MiB).
pub static PIPE_MAX_SIZE: AtomicUsize = AtomicUsize::new(1 << 20);

/// A pipe size as Linux rounds it (`round_pipe_size`): at least a page, a
/// power of two; None past 2^31 bytes.
pub fn round_pipe_size(size: u64) -> Option<usize> {
    match size {
        s if s > 1 << 31 => None,
        s if s < PAGE_SIZE as u64 => Some(PAGE_SIZE),
        s => Some(s.next_power_of_two() as usize),
    }
}

/// A pipe: a bounded byte queue between writers and readers; pipe(2)'s
/// or a named one's (a FIFO), whose opens wait for the other end.
pub struct Pipe {
    /// A named pipe (Linux: `fifo_open` rather than `create_pipe_files`):
    /// an open for one end waits for the other, and the data goes when
    /// the last file of either end closes.
    fifo: bool,
    /// The bytes written and not yet read, oldest first, at most
    /// `capacity` (Linux: the ring of `pipe_buffer`s in `struct
    /// pipe_inode_info`).
    buf: SpinLock<VecDeque<u8>>,
    /// How many bytes it holds before writers wait: PIPE_SIZE, or what
    /// F_SETPIPE_SZ set (Linux: `max_usage` pages).
    capacity: AtomicUsize,
    /// Open files of the read end (Linux: `pipe->readers`); at 0, writers get
    /// EPIPE and SIGPIPE.
    readers: AtomicUsize,
    /// Open files of the write end (Linux: `pipe->writers`); at 0, an empty
    /// pipe reads as end of file.
    writers: AtomicUsize,
    /// Opens of the read end so far, which a FIFO's writer waiting for a
    /// reader watches change (Linux: `r_counter`).
    r_counter: AtomicUsize,
    /// Opens of the write end so far (Linux: `w_counter`).
    w_counter: AtomicUsize,
    /// Readers, writers and pollers (Linux: `pipe->rd_wait` and `wr_wait`
    /// in one).
    wait: PollQueue,
}

impl Pipe {
    /// An empty pipe with no ends open yet; each file opened on it counts
    /// itself through `opened` (Linux: `alloc_pipe_info`).
    pub fn new() -> Arc<Pipe> {
        Pipe::with_kind(false)
    }

    /// The pipe of a FIFO mknod or mkfifo makes.
    pub fn new_fifo() -> Arc<Pipe> {
        Pipe::with_kind(true)
    }

    /// An empty pipe, named if `fifo`.
    fn with_kind(fifo: bool) -> Arc<Pipe> {
        Arc::new(Pipe {
            fifo,
            buf: SpinLock::new(VecDeque::new()),
            capacity: AtomicUsize::new(PIPE_SIZE),
            readers: AtomicUsize::new(0),
            writers: AtomicUsize::new(0),
            r_counter: AtomicUsize::new(0),
            w_counter: AtomicUsize::new(0),
            wait: PollQueue::new(),
        })
    }

    /// Sleeps until `counter` moves past `seen`: the other end was opened
    /// (Linux: `wait_for_partner`); ERESTARTSYS on a signal.
    fn wait_for_partner(&self, counter: &AtomicUsize, seen: usize) -> KResult<()> {
        self.wait
            .wait_event(|| counter.load(Ordering::Acquire) != seen)
            .map_err(|_| Errno::ERESTARTSYS)
    }
}

impl Pipe {
    /// How many bytes the pipe holds before writers wait (F_GETPIPE_SZ).
    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Acquire)
    }

    /// F_SETPIPE_SZ (Linux: `pipe_set_size`): the capacity becomes `size`
    /// rounded by `round_pipe_size` (EINVAL past 2^31), at most
    /// `fs.pipe-max-size` above the current one unless `privileged`
    /// (EPERM), and no less than what it holds now (EBUSY). Returns the
    /// new capacity.
    pub fn set_capacity(&self, size: u64, privileged: bool) -> KResult<usize> {
        let size = round_pipe_size(size).ok_or(Errno::EINVAL)?;
        if size > self.capacity() && size > PIPE_MAX_SIZE.load(Ordering::Relaxed) && !privileged {
            return Err(Errno::EPERM);
        }
        let buf = self.buf.lock();
        if buf.len() > size {
            return Err(Errno::EBUSY);
        }
        self.capacity.store(size, Ordering::Release);
        drop(buf);
        self.wait.wake_key(POLLOUT);
        Ok(size)
    }

    /// Appends what of `src` fits below the capacity, copied straight into
    /// the ring; ENOMEM if the kernel has no memory for it (Linux:
    /// `alloc_page` failing in `pipe_write`), EFAULT if not a byte of a
    /// user buffer could be read.
    fn push(&self, src: WriteSource) -> KResult<usize> {
        let mut buf = self.buf.lock();
        let old = buf.len();
        let n = self.capacity().saturating_sub(old).min(src.len());
        buf.try_reserve(n).map_err(|_| Errno::ENOMEM)?;
        buf.resize(old + n, 0);
        // The new bytes' place in the ring: the end of its first part, the
        // start of its second, or both.
        let (head, tail) = buf.as_mut_slices();
        let (first, second) = if old >= head.len() {
            (
                &mut tail[old - head.len()..old - head.len() + n],
                &mut [][..],
            )
        } else {
            let k = head.len() - old;
            (&mut head[old..], &mut tail[..n - k])
        };
        let mut copied = src.copy_into(0, first);
        if copied == first.len() {
            copied += src.copy_into(copied, second);
        }
        buf.truncate(old + copied);
        drop(buf);
        if copied == 0 && n > 0 {
            return Err(Errno::EFAULT);
        }
        self.wait.wake_key(POLLIN);
        Ok(copied)
    }

    /// Is there room for a write?
    fn has_room(&self) -> bool {
        self.buf.lock().len() < self.capacity()
    }

    /// Takes what of `data` fits, waiting only while the pipe is full
    /// (Linux: `vmsplice_to_pipe`: `wait_for_space`, then as many pages as
    /// there are free slots), where a write would wait until all of it went.
    pub fn splice_in(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        if self.readers.load(Ordering::Acquire) == 0 {
            crate::task::signal::send_to_current(crate::task::signal_abi::SIGPIPE);
            return Err(Errno::EPIPE);
        }
        if nonblock && !self.has_room() {
            return Err(Errno::EAGAIN);
        }
        self.wait
            .wait_event(|| self.has_room() || self.readers.load(Ordering::Acquire) == 0)?;
        self.push(WriteSource::Kernel(data))
    }
}

impl Device for Pipe {
    fn read(&self, out: &mut [u8], nonblock: bool) -> KResult<usize> {
        self.read_iter(ReadDest::Kernel(out), nonblock)
    }

    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        self.write_iter(WriteSource::Kernel(data), nonblock)
    }

    /// Copies out of the ring straight into `dst` (Linux: `pipe_read`). A
    /// user buffer that runs out part-way takes nothing: EFAULT, and the
    /// bytes stay in the pipe, as Linux does when the copy of its first
    /// `pipe_buffer` comes up short. Where we simplify: Linux keeps the
    /// whole pages it copied before that one; one ring has no pages.
    fn read_iter(&self, mut dst: ReadDest, nonblock: bool) -> KResult<usize> {
        if dst.is_empty() {
            return Ok(0);
        }
        if nonblock && self.buf.lock().is_empty() && self.writers.load(Ordering::Acquire) != 0 {
            return Err(Errno::EAGAIN);
        }
        self.wait.wait_event(|| {
            !self.buf.lock().is_empty() || self.writers.load(Ordering::Acquire) == 0
        })?;
        let mut buf = self.buf.lock();
        let n = dst.len().min(buf.len());
        let (head, tail) = buf.as_slices();
        let k = n.min(head.len());
        let mut copied = dst.copy_from(0, &head[..k]);
        if copied == k && n > k {
            copied += dst.copy_from(k, &tail[..n - k]);
        }
        if copied < n {
            return Err(Errno::EFAULT);
        }
        buf.drain(..n);
        drop(buf);
        self.wait.wake_key(POLLOUT);
        Ok(n)
    }

    /// Copies `src` straight into the ring, waiting for room until all of
    /// it went (Linux: `pipe_write`).
    fn write_iter(&self, src: WriteSource, nonblock: bool) -> KResult<usize> {
        let mut done = 0;
        while done < src.len() {
            if nonblock && !self.has_room() {
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
            let waited = self
                .wait
                .wait_event(|| self.has_room() || self.readers.load(Ordering::Acquire) == 0)
                .and_then(|_| self.push(src.skip(done)));
            match waited {
                Ok(n) => done += n,
                Err(e) => return if done > 0 { Ok(done) } else { Err(e) },
            }
        }
        Ok(done)
    }

    /// Counts the new file's ends; a FIFO's open for one end waits for the
    /// other, unless O_NONBLOCK (a writer then fails with ENXIO while no
    /// reader has it open); O_RDWR never waits (Linux: `fifo_open`).
    fn opened(&self, flags: u32) -> KResult<()> {
        let nonblock = flags & O_NONBLOCK != 0;
        let (read, write) = match flags & O_ACCMODE {
            O_RDONLY => (true, false),
            O_WRONLY => (false, true),
            _ => (true, true),
        };
        if self.fifo && write && !read && nonblock && self.readers.load(Ordering::Acquire) == 0 {
            return Err(Errno::ENXIO);
        }
        if read {
            self.r_counter.fetch_add(1, Ordering::AcqRel);
            self.readers.fetch_add(1, Ordering::AcqRel);
        }
        if write {
            self.w_counter.fetch_add(1, Ordering::AcqRel);
            self.writers.fetch_add(1, Ordering::AcqRel);
        }
        self.wait.wake();
        if !self.fifo || (read && write) || nonblock {
            return Ok(());
        }
        let (other, counter) = if read {
            (&self.writers, &self.w_counter)
        } else {
            (&self.readers, &self.r_counter)
        };
        let seen = counter.load(Ordering::Acquire);
        if other.load(Ordering::Acquire) == 0 {
            if let Err(e) = self.wait_for_partner(counter, seen) {
                self.released(flags);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Uncounts the file's ends, waking whoever waits on them; a FIFO's
    /// last file takes the data with it (Linux: `pipe_release` freeing
    /// the `pipe_inode_info`).
    fn released(&self, flags: u32) {
        let accmode = flags & O_ACCMODE;
        if accmode != O_WRONLY {
            self.readers.fetch_sub(1, Ordering::AcqRel);
        }
        if accmode != O_RDONLY {
            self.writers.fetch_sub(1, Ordering::AcqRel);
        }
        if self.fifo
            && self.readers.load(Ordering::Acquire) == 0
            && self.writers.load(Ordering::Acquire) == 0
        {
            self.buf.lock().clear();
        }
        self.wait.wake();
    }

    /// The read end: POLLIN with data, POLLHUP once no writer is left; the
    /// write end: POLLOUT with room, POLLERR once no reader is left
    /// (Linux: `pipe_poll`).
    fn poll(&self, flags: u32) -> u32 {
        let len = self.buf.lock().len();
        let mut mask = 0;
        if flags & O_ACCMODE != O_WRONLY {
            if len > 0 {
                mask |= POLLIN | POLLRDNORM;
            }
            if self.writers.load(Ordering::Acquire) == 0 {
                mask |= POLLHUP;
            }
        }
        if flags & O_ACCMODE != O_RDONLY {
            if len < self.capacity() {
                mask |= POLLOUT | POLLWRNORM;
            }
            if self.readers.load(Ordering::Acquire) == 0 {
                mask |= POLLERR;
            }
        }
        mask
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        None
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        match cmd {
            FIONREAD => {
                let len = self.buf.lock().len() as i32;
                crate::mm::uaccess::write_user(arg, &len).map(|_| 0)
            }
            _ => Err(Errno::ENOTTY),
        }
    }
}
