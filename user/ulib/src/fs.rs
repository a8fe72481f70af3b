//! Files and file descriptors: open/read/write and friends, directories,
//! stat, pipes, dup3, fcntl, ioctl, the working directory, memfd. Paths are
//! `&CStr` (write `c"/tmp/x"`); descriptors are `i32`, as in the ABI.

use crate::errno::Errno;
use crate::sys::*;
use crate::syscall;
use core::ffi::CStr;
use core::marker::PhantomData;
pub use uapi::dirent::{DT_DIR, DT_REG};
pub use uapi::fcntl::{
    AT_EMPTY_PATH, AT_FDCWD, AT_REMOVEDIR, FALLOC_FL_KEEP_SIZE, F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD,
    F_GETFL, F_SETFD, F_SETFL, O_ACCMODE, O_APPEND, O_CLOEXEC, O_CREAT, O_DIRECTORY, O_EXCL,
    O_NONBLOCK, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY, RENAME_NOREPLACE, SEEK_CUR, SEEK_END,
    SEEK_SET,
};
pub use uapi::ioctls::TCGETS;
pub use uapi::mman::MFD_CLOEXEC;
pub use uapi::stat::{S_IFDIR, S_IFIFO, S_IFMT, S_IFREG};

// open(2) flags; arm64 uses the asm-generic values.

// uapi's values, typed as this API takes them.
pub const FD_CLOEXEC: usize = uapi::fcntl::FD_CLOEXEC as usize;

// st_mode file types.

// getdents64 d_type values.

/// `struct stat`, as the kernel fills it.
pub use uapi::stat::Stat;

/// One buffer of a writev(2): `struct iovec` borrowing a slice.
#[repr(C)]
pub struct IoSlice<'a> {
    base: *const u8,
    len: usize,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> IoSlice<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        IoSlice {
            base: buf.as_ptr(),
            len: buf.len(),
            _borrow: PhantomData,
        }
    }
}

/// One buffer of a readv(2): `struct iovec` borrowing a mutable slice.
#[repr(C)]
pub struct IoSliceMut<'a> {
    base: *mut u8,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> IoSliceMut<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        IoSliceMut {
            base: buf.as_mut_ptr(),
            len: buf.len(),
            _borrow: PhantomData,
        }
    }
}

pub fn openat(dirfd: i32, path: &CStr, flags: u32, mode: u32) -> Result<i32, Errno> {
    // SAFETY: path is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_openat, dirfd, path.as_ptr(), flags, mode) }.map(|fd| fd as i32)
}

/// openat(AT_FDCWD, ...): there is no open(2) on arm64.
pub fn open(path: &CStr, flags: u32, mode: u32) -> Result<i32, Errno> {
    openat(AT_FDCWD, path, flags, mode)
}

pub fn close(fd: i32) -> Result<(), Errno> {
    // SAFETY: closing a descriptor touches no memory of ours.
    unsafe { syscall!(__NR_close, fd) }.map(drop)
}

pub fn read(fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe { syscall!(__NR_read, fd, buf.as_mut_ptr(), buf.len()) }
}

pub fn write(fd: i32, buf: &[u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel only reads buf.
    unsafe { syscall!(__NR_write, fd, buf.as_ptr(), buf.len()) }
}

/// Returns the new offset.
pub fn lseek(fd: i32, offset: i64, whence: u32) -> Result<usize, Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_lseek, fd, offset, whence) }
}

pub fn pread64(fd: i32, buf: &mut [u8], offset: usize) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe { syscall!(__NR_pread64, fd, buf.as_mut_ptr(), buf.len(), offset) }
}

pub fn pwrite64(fd: i32, buf: &[u8], offset: usize) -> Result<usize, Errno> {
    // SAFETY: the kernel only reads buf.
    unsafe { syscall!(__NR_pwrite64, fd, buf.as_ptr(), buf.len(), offset) }
}

pub fn readv(fd: i32, iov: &mut [IoSliceMut]) -> Result<usize, Errno> {
    // SAFETY: each iovec describes a borrowed, writable slice.
    unsafe { syscall!(__NR_readv, fd, iov.as_mut_ptr(), iov.len()) }
}

pub fn writev(fd: i32, iov: &[IoSlice]) -> Result<usize, Errno> {
    // SAFETY: each iovec describes a borrowed slice the kernel only reads.
    unsafe { syscall!(__NR_writev, fd, iov.as_ptr(), iov.len()) }
}

pub fn ftruncate(fd: i32, len: usize) -> Result<(), Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_ftruncate, fd, len) }.map(drop)
}

pub fn fallocate(fd: i32, mode: u32, offset: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_fallocate, fd, mode, offset, len) }.map(drop)
}

/// Removes a file, or with `AT_REMOVEDIR` an empty directory.
pub fn unlinkat(dirfd: i32, path: &CStr, flags: u32) -> Result<(), Errno> {
    // SAFETY: path is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_unlinkat, dirfd, path.as_ptr(), flags) }.map(drop)
}

/// chmod(2).
pub fn chmod(path: &CStr, mode: u32) -> Result<(), Errno> {
    // SAFETY: path is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_fchmodat, AT_FDCWD, path.as_ptr(), mode) }.map(drop)
}

pub fn mkdirat(dirfd: i32, path: &CStr, mode: u32) -> Result<(), Errno> {
    // SAFETY: path is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_mkdirat, dirfd, path.as_ptr(), mode) }.map(drop)
}

/// mount(2) of a file system of type `fstype` on `target`, with no flags
/// and no options.
pub fn mount(source: &CStr, target: &CStr, fstype: &CStr) -> Result<(), Errno> {
    // SAFETY: the strings are NUL-terminated; the kernel only reads them.
    unsafe {
        syscall!(
            __NR_mount,
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            0
        )
    }
    .map(drop)
}

pub fn renameat2(
    olddirfd: i32,
    old: &CStr,
    newdirfd: i32,
    new: &CStr,
    flags: u32,
) -> Result<(), Errno> {
    // SAFETY: both paths are NUL-terminated; the kernel only reads them.
    unsafe {
        syscall!(
            __NR_renameat2,
            olddirfd,
            old.as_ptr(),
            newdirfd,
            new.as_ptr(),
            flags
        )
    }
    .map(drop)
}

/// Fills `buf` with `linux_dirent64` records; parse them with [`dirents`].
/// Returns 0 at the end of the directory.
pub fn getdents64(fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe { syscall!(__NR_getdents64, fd, buf.as_mut_ptr(), buf.len()) }
}

/// One directory entry from getdents64.
pub struct Dirent<'a> {
    pub ino: u64,
    pub d_type: u8,
    pub name: &'a CStr,
}

/// The `linux_dirent64` records in the first `len` bytes a getdents64 call
/// filled: `u64 d_ino, i64 d_off, u16 d_reclen, u8 d_type, char d_name[]`.
/// Stops at the first malformed record.
pub fn dirents(buf: &[u8]) -> impl Iterator<Item = Dirent<'_>> {
    let mut rest = buf;
    core::iter::from_fn(move || {
        if rest.len() < 20 {
            return None;
        }
        let reclen = u16::from_ne_bytes([rest[16], rest[17]]) as usize;
        if reclen < 20 || reclen > rest.len() {
            return None;
        }
        let (record, tail) = rest.split_at(reclen);
        rest = tail;
        Some(Dirent {
            ino: u64::from_ne_bytes(record[..8].try_into().unwrap()),
            d_type: record[18],
            name: CStr::from_bytes_until_nul(&record[19..]).ok()?,
        })
    })
}

pub fn newfstatat(dirfd: i32, path: &CStr, flags: u32) -> Result<Stat, Errno> {
    let mut st = Stat::default();
    // SAFETY: path is NUL-terminated; the kernel writes one Stat into st.
    unsafe {
        syscall!(
            __NR_newfstatat,
            dirfd,
            path.as_ptr(),
            &mut st as *mut Stat,
            flags
        )
    }?;
    Ok(st)
}

pub fn stat(path: &CStr) -> Result<Stat, Errno> {
    newfstatat(AT_FDCWD, path, 0)
}

pub fn fstat(fd: i32) -> Result<Stat, Errno> {
    let mut st = Stat::default();
    // SAFETY: the kernel writes one Stat into st.
    unsafe { syscall!(__NR_fstat, fd, &mut st as *mut Stat) }?;
    Ok(st)
}

/// Makes `newfd` a copy of `oldfd`; flags may be `O_CLOEXEC`.
pub fn dup3(oldfd: i32, newfd: i32, flags: u32) -> Result<i32, Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_dup3, oldfd, newfd, flags) }.map(|fd| fd as i32)
}

/// Returns `[read end, write end]`.
pub fn pipe2(flags: u32) -> Result<[i32; 2], Errno> {
    let mut fds = [0i32; 2];
    // SAFETY: the kernel writes two ints into fds.
    unsafe { syscall!(__NR_pipe2, fds.as_mut_ptr(), flags) }?;
    Ok(fds)
}

/// # Safety
/// If `request` takes a pointer, `arg` must point at memory valid for it.
pub unsafe fn ioctl(fd: i32, request: u32, arg: usize) -> Result<usize, Errno> {
    syscall!(__NR_ioctl, fd, request, arg)
}

/// # Safety
/// If `cmd` takes a pointer (the lock commands), `arg` must point at memory
/// valid for it. The integer commands (F_DUPFD, F_GETFD, F_SETFD, F_GETFL,
/// F_SETFL) are always safe.
pub unsafe fn fcntl(fd: i32, cmd: u32, arg: usize) -> Result<usize, Errno> {
    syscall!(__NR_fcntl, fd, cmd, arg)
}

/// Writes the working directory, NUL-terminated, into `buf` and returns its
/// length including the NUL (what the syscall returns, unlike libc's).
pub fn getcwd(buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe { syscall!(__NR_getcwd, buf.as_mut_ptr(), buf.len()) }
}

pub fn chdir(path: &CStr) -> Result<(), Errno> {
    // SAFETY: path is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_chdir, path.as_ptr()) }.map(drop)
}

/// Reads a symbolic link into `buf` (no NUL is added); returns its length.
pub fn readlinkat(dirfd: i32, path: &CStr, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: path is NUL-terminated; the kernel writes at most buf.len()
    // bytes into buf.
    unsafe {
        syscall!(
            __NR_readlinkat,
            dirfd,
            path.as_ptr(),
            buf.as_mut_ptr(),
            buf.len()
        )
    }
}

/// An anonymous file in memory, sized with ftruncate.
pub fn memfd_create(name: &CStr, flags: u32) -> Result<i32, Errno> {
    // SAFETY: name is NUL-terminated; the kernel only reads it.
    unsafe { syscall!(__NR_memfd_create, name.as_ptr(), flags) }.map(|fd| fd as i32)
}
