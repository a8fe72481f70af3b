//! Checked access to user memory for system calls (Linux:
//! `copy_from_user`, `copy_to_user`, `strncpy_from_user`,
//! `get_user`/`put_user`). Every user pointer a system call is given goes
//! through here: the range is checked against the user half, pages are
//! faulted in as needed, and anything unmapped is `EFAULT`, never a panic.

use alloc::string::String;
use alloc::vec::Vec;

use crate::arch::uaccess;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SIZE, USER_TOP};

/// EFAULT unless `[uaddr, uaddr + len)` lies wholly below `USER_TOP`
/// (Linux's `access_ok`); the copy itself catches unmapped pages.
fn check_range(uaddr: usize, len: usize) -> KResult<()> {
    match uaddr.checked_add(len) {
        Some(end) if end <= USER_TOP => Ok(()),
        _ => Err(Errno::EFAULT),
    }
}

/// Fills `dst` from user address `src`.
pub fn copy_from_user(dst: &mut [u8], src: usize) -> KResult<()> {
    check_range(src, dst.len())?;
    // SAFETY: dst is a kernel buffer of that length; src is a checked user range.
    match unsafe { uaccess::copy_from_user(dst.as_mut_ptr(), src as *const u8, dst.len()) } {
        0 => Ok(()),
        _ => Err(Errno::EFAULT),
    }
}

/// Copies `src` to user address `dst`.
pub fn copy_to_user(dst: usize, src: &[u8]) -> KResult<()> {
    check_range(dst, src.len())?;
    // SAFETY: src is a kernel buffer; dst is a checked user range.
    match unsafe { uaccess::copy_to_user(dst as *mut u8, src.as_ptr(), src.len()) } {
        0 => Ok(()),
        _ => Err(Errno::EFAULT),
    }
}

/// Where bytes `[at, at + n)` of a user buffer at `addr` start, None if
/// they wrap or reach the kernel half.
fn user_range(addr: usize, at: usize, n: usize) -> Option<usize> {
    let start = addr.checked_add(at)?;
    check_range(start, n).ok().map(|_| start)
}

/// The bytes a write copies into a file (Linux: the `iov_iter` of a write):
/// kernel memory, or a user buffer, copied straight into the page cache with
/// no bounce buffer between, so one `write()` reaches the file whole and its
/// length can choose the folio size.
#[derive(Clone, Copy)]
pub enum WriteSource<'a> {
    /// Bytes already in kernel memory.
    Kernel(&'a [u8]),
    /// A user buffer, copied with the user-access routines, which fault
    /// pages in or fail with EFAULT.
    User {
        /// The buffer's user virtual address.
        addr: usize,
        /// The buffer's length in bytes.
        len: usize,
    },
}

impl<'a, T: AsRef<[u8]> + ?Sized> From<&'a T> for WriteSource<'a> {
    fn from(data: &'a T) -> Self {
        WriteSource::Kernel(data.as_ref())
    }
}

impl WriteSource<'_> {
    /// Bytes to copy.
    pub fn len(&self) -> usize {
        match self {
            WriteSource::Kernel(data) => data.len(),
            WriteSource::User { len, .. } => *len,
        }
    }

    /// Whether there is nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` bytes at most.
    pub fn take(self, n: usize) -> Self {
        match self {
            WriteSource::Kernel(data) => WriteSource::Kernel(&data[..n.min(data.len())]),
            WriteSource::User { addr, len } => WriteSource::User {
                addr,
                len: len.min(n),
            },
        }
    }

    /// The bytes after the first `n`.
    pub fn skip(self, n: usize) -> Self {
        match self {
            WriteSource::Kernel(data) => WriteSource::Kernel(&data[n.min(data.len())..]),
            WriteSource::User { addr, len } => WriteSource::User {
                addr: addr + n.min(len),
                len: len - n.min(len),
            },
        }
    }

    /// Calls `f` on the bytes as one kernel slice, copying a user buffer in
    /// first: for files that take a slice (devices, /proc and /sys).
    pub fn with_bytes<R>(self, f: impl FnOnce(&[u8]) -> KResult<R>) -> KResult<R> {
        match self {
            WriteSource::Kernel(data) => f(data),
            WriteSource::User { addr, len } => {
                let mut buf = crate::mm::heap::try_zeroed(len)?;
                copy_from_user(&mut buf, addr)?;
                f(&buf)
            }
        }
    }

    /// Fills `dst` with the source's bytes from `from`; returns how many
    /// it copied before user memory ran out.
    pub fn copy_into(&self, from: usize, dst: &mut [u8]) -> usize {
        // SAFETY: dst is a kernel slice of that length; copy_to checks the
        // source's bounds.
        unsafe { self.copy_to(from, dst.as_mut_ptr(), dst.len()) }
    }

    /// Copies bytes `[from, from + n)` of the source to `dst`; returns how
    /// many were copied before user memory ran out (Linux:
    /// `copy_page_from_iter_atomic`'s short copy).
    ///
    /// # Safety
    /// `dst` must be valid kernel memory for `n` bytes, and `from + n` at
    /// most the source's length.
    pub unsafe fn copy_to(&self, from: usize, dst: *mut u8, n: usize) -> usize {
        assert!(from + n <= self.len());
        match self {
            WriteSource::Kernel(data) => {
                // SAFETY: in bounds of `data` (asserted) and, per the
                // caller, of `dst`.
                unsafe { core::ptr::copy_nonoverlapping(data.as_ptr().add(from), dst, n) };
                n
            }
            WriteSource::User { addr, .. } => {
                // A buffer that wraps or reaches the kernel half copies
                // nothing: EFAULT.
                let Some(start) = user_range(*addr, from, n) else {
                    return 0;
                };
                // SAFETY: dst per the caller; the user side is a checked range.
                n - unsafe { uaccess::copy_from_user(dst, start as *const u8, n) }
            }
        }
    }
}

/// Where a read's bytes go (Linux: the `iov_iter` of a read): kernel
/// memory, or a user buffer, which a regular file's read fills straight
/// from the page cache with no bounce buffer between.
pub enum ReadDest<'a> {
    /// A kernel buffer.
    Kernel(&'a mut [u8]),
    /// A user buffer, written with the user-access routines, which fault
    /// pages in or stop short.
    User {
        /// The buffer's user virtual address.
        addr: usize,
        /// The buffer's length in bytes.
        len: usize,
    },
}

impl<'a, T: AsMut<[u8]> + ?Sized> From<&'a mut T> for ReadDest<'a> {
    fn from(buf: &'a mut T) -> Self {
        ReadDest::Kernel(buf.as_mut())
    }
}

impl ReadDest<'_> {
    /// Bytes it takes.
    pub fn len(&self) -> usize {
        match self {
            ReadDest::Kernel(buf) => buf.len(),
            ReadDest::User { len, .. } => *len,
        }
    }

    /// Whether it takes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `src` to the destination's bytes from `to`; returns how many
    /// were copied before user memory ran out (Linux: `copy_to_iter`'s
    /// short copy).
    pub fn copy_from(&mut self, to: usize, src: &[u8]) -> usize {
        assert!(to + src.len() <= self.len());
        match self {
            ReadDest::Kernel(buf) => {
                buf[to..to + src.len()].copy_from_slice(src);
                src.len()
            }
            ReadDest::User { addr, .. } => {
                let Some(start) = user_range(*addr, to, src.len()) else {
                    return 0;
                };
                // SAFETY: src is kernel memory; the user side is a checked range.
                src.len()
                    - unsafe { uaccess::copy_to_user(start as *mut u8, src.as_ptr(), src.len()) }
            }
        }
    }

    /// Zeroes the destination's bytes `[to, to + n)`, as a read of a hole
    /// does; returns how many it zeroed (Linux: `iov_iter_zero`).
    pub fn zero(&mut self, to: usize, n: usize) -> usize {
        assert!(to + n <= self.len());
        match self {
            ReadDest::Kernel(buf) => {
                buf[to..to + n].fill(0);
                n
            }
            ReadDest::User { addr, .. } => {
                let Some(start) = user_range(*addr, to, n) else {
                    return 0;
                };
                // SAFETY: a checked user range.
                n - unsafe { uaccess::clear_user(start as *mut u8, n) }
            }
        }
    }

    /// Calls `fill` on a kernel buffer and copies what it filled to the
    /// destination: for files that fill a slice (devices, /proc and /sys).
    /// A user destination gets a bounce buffer of at most `max` bytes, so
    /// one call moves no more; EFAULT if the user buffer is not there.
    pub fn with_buffer(
        self,
        max: usize,
        fill: impl FnOnce(&mut [u8]) -> KResult<usize>,
    ) -> KResult<usize> {
        match self {
            ReadDest::Kernel(buf) => fill(buf),
            ReadDest::User { addr, len } => {
                let mut buf = crate::mm::heap::bounce_buffer(len, max)?;
                let n = fill(&mut buf)?;
                copy_to_user(addr, &buf[..n])?;
                Ok(n)
            }
        }
    }
}

/// Plain data that may be copied to and from user memory byte for byte.
pub use uapi::Pod;

/// Reads a `T` from user memory (Linux: `get_user` for a struct).
pub fn read_user<T: Pod>(src: usize) -> KResult<T> {
    let mut value = core::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: the bytes of a zeroed T, which Pod makes a valid T.
    let bytes = unsafe {
        core::slice::from_raw_parts_mut(value.as_mut_ptr() as *mut u8, core::mem::size_of::<T>())
    };
    copy_from_user(bytes, src)?;
    // SAFETY: every byte was written, and any bytes make a valid T.
    Ok(unsafe { value.assume_init() })
}

/// Writes a `T` to user memory (Linux: `put_user`).
pub fn write_user<T: Pod>(dst: usize, value: &T) -> KResult<()> {
    copy_to_user(dst, value.as_bytes())
}

/// A NUL-terminated name or path from user memory, at most `max` bytes
/// before the NUL (ENAMETOOLONG beyond), as a string whose bytes outside
/// UTF-8 are escaped (`ustr`).
pub fn strncpy_from_user(src: usize, max: usize) -> KResult<String> {
    strncpy_bytes_from_user(src, max).map(crate::ustr::from_bytes)
}

/// A NUL-terminated string from user memory as its bytes, at most `max`
/// before the NUL (ENAMETOOLONG beyond; Linux: `strncpy_from_user`).
/// Copies a page piece at a time, so a string ending just before an
/// unmapped page reads.
pub fn strncpy_bytes_from_user(src: usize, max: usize) -> KResult<Vec<u8>> {
    let mut out = Vec::new();
    let mut addr = src;
    // Small pieces, never crossing a page: kernel stacks are small.
    let mut buf = [0u8; 256];
    loop {
        let chunk = (PAGE_SIZE - addr % PAGE_SIZE).min(buf.len());
        copy_from_user(&mut buf[..chunk], addr)?;
        let piece = match buf[..chunk].iter().position(|&b| b == 0) {
            Some(nul) => &buf[..nul],
            None => &buf[..chunk],
        };
        out.try_reserve(piece.len()).map_err(|_| Errno::ENOMEM)?;
        out.extend_from_slice(piece);
        if piece.len() < chunk {
            break;
        }
        if out.len() > max {
            return Err(Errno::ENAMETOOLONG);
        }
        addr += chunk;
    }
    if out.len() > max {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(out)
}
