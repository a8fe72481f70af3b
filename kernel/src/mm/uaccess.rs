//! Checked access to user memory for system calls (Linux:
//! `copy_from_user`, `copy_to_user`, `strncpy_from_user`,
//! `get_user`/`put_user`). Every user pointer a system call is given goes
//! through here: the range is checked against the user half, pages are
//! faulted in as needed, and anything unmapped is `EFAULT`, never a panic.

use alloc::string::String;
use alloc::vec::Vec;

use crate::arch::uaccess::copy_user;
use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SIZE, USER_TOP};

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
    match unsafe { copy_user(dst.as_mut_ptr(), src as *const u8, dst.len()) } {
        0 => Ok(()),
        _ => Err(Errno::EFAULT),
    }
}

/// Copies `src` to user address `dst`.
pub fn copy_to_user(dst: usize, src: &[u8]) -> KResult<()> {
    check_range(dst, src.len())?;
    // SAFETY: src is a kernel buffer; dst is a checked user range.
    match unsafe { copy_user(dst as *mut u8, src.as_ptr(), src.len()) } {
        0 => Ok(()),
        _ => Err(Errno::EFAULT),
    }
}

/// Plain data that may be copied to and from user memory byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value, and the type must have no
/// padding that could leak kernel memory.
pub unsafe trait Pod: Copy {}
// SAFETY: integers have no invalid values and no padding.
unsafe impl Pod for u8 {}
unsafe impl Pod for u32 {}
unsafe impl Pod for i32 {}
unsafe impl Pod for u64 {}
unsafe impl Pod for i64 {}
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

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
    // SAFETY: Pod types have no padding to leak.
    let bytes = unsafe {
        core::slice::from_raw_parts(value as *const T as *const u8, core::mem::size_of::<T>())
    };
    copy_to_user(dst, bytes)
}

/// A NUL-terminated string from user memory, at most `max` bytes before
/// the NUL (ENAMETOOLONG beyond), as UTF-8 (EINVAL otherwise). Copies a page
/// piece at a time, so a string ending just before an unmapped page reads.
pub fn strncpy_from_user(src: usize, max: usize) -> KResult<String> {
    let mut out = Vec::new();
    let mut addr = src;
    // Small pieces, never crossing a page: kernel stacks are small.
    let mut buf = [0u8; 256];
    loop {
        let chunk = (PAGE_SIZE - addr % PAGE_SIZE).min(buf.len());
        copy_from_user(&mut buf[..chunk], addr)?;
        if let Some(nul) = buf[..chunk].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..nul]);
            break;
        }
        out.extend_from_slice(&buf[..chunk]);
        if out.len() > max {
            return Err(Errno::ENAMETOOLONG);
        }
        addr += chunk;
    }
    if out.len() > max {
        return Err(Errno::ENAMETOOLONG);
    }
    String::from_utf8(out).map_err(|_| Errno::EINVAL)
}
