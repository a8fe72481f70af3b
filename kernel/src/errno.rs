//! Linux error numbers (`include/uapi/asm-generic/errno-base.h`, `errno.h`),
//! the values user space sees as `-errno` from a system call. Kernel code
//! returns `Result<T, Errno>` all the way up. The values are the uapi
//! crate's.

use uapi::errno;

/// A Linux errno value, named as Linux names it; each one's meaning is
/// documented at its value in `uapi::errno`.
#[allow(clippy::upper_case_acronyms, clippy::missing_docs_in_private_items)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Errno {
    EPERM = errno::EPERM,
    ENOENT = errno::ENOENT,
    ESRCH = errno::ESRCH,
    EINTR = errno::EINTR,
    EIO = errno::EIO,
    ENXIO = errno::ENXIO,
    E2BIG = errno::E2BIG,
    ENOEXEC = errno::ENOEXEC,
    EBADF = errno::EBADF,
    ECHILD = errno::ECHILD,
    EAGAIN = errno::EAGAIN,
    ENOMEM = errno::ENOMEM,
    EACCES = errno::EACCES,
    EFAULT = errno::EFAULT,
    EBUSY = errno::EBUSY,
    EEXIST = errno::EEXIST,
    EXDEV = errno::EXDEV,
    ENODEV = errno::ENODEV,
    ENOTDIR = errno::ENOTDIR,
    EISDIR = errno::EISDIR,
    EINVAL = errno::EINVAL,
    EMFILE = errno::EMFILE,
    ENOTTY = errno::ENOTTY,
    EFBIG = errno::EFBIG,
    ESPIPE = errno::ESPIPE,
    ENOSPC = errno::ENOSPC,
    EPIPE = errno::EPIPE,
    ERANGE = errno::ERANGE,
    EDEADLK = errno::EDEADLK,
    ENAMETOOLONG = errno::ENAMETOOLONG,
    ENOSYS = errno::ENOSYS,
    ENOTEMPTY = errno::ENOTEMPTY,
    ELOOP = errno::ELOOP,
    ENODATA = errno::ENODATA,
    EOVERFLOW = errno::EOVERFLOW,
    ENOTSOCK = errno::ENOTSOCK,
    EMSGSIZE = errno::EMSGSIZE,
    EPROTOTYPE = errno::EPROTOTYPE,
    ENOPROTOOPT = errno::ENOPROTOOPT,
    EPROTONOSUPPORT = errno::EPROTONOSUPPORT,
    ESOCKTNOSUPPORT = errno::ESOCKTNOSUPPORT,
    EOPNOTSUPP = errno::EOPNOTSUPP,
    EAFNOSUPPORT = errno::EAFNOSUPPORT,
    EADDRINUSE = errno::EADDRINUSE,
    ENOBUFS = errno::ENOBUFS,
    EISCONN = errno::EISCONN,
    ENOTCONN = errno::ENOTCONN,
    ETIMEDOUT = errno::ETIMEDOUT,
    ECONNREFUSED = errno::ECONNREFUSED,
    /// EINTR to user space unless the system call is run again: after an
    /// SA_RESTART handler, or when no handler runs (Linux's kernel-internal
    /// `ERESTARTSYS`, `include/linux/errno.h`).
    ERESTARTSYS = 512,
    /// Never seen by user space: the system call is run again once the
    /// signal that interrupted it is handled, handler or not (Linux's
    /// kernel-internal `ERESTARTNOINTR`, `include/linux/errno.h`).
    ERESTARTNOINTR = 513,
}

/// What every fallible kernel function returns: a value or an errno.
pub type KResult<T> = Result<T, Errno>;

impl Errno {
    /// What a system call returns for this error: `-errno`.
    pub const fn as_neg(self) -> i64 {
        -(self as i32 as i64)
    }
}
