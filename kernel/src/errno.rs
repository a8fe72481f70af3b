//! Linux error numbers (`include/uapi/asm-generic/errno-base.h`, `errno.h`),
//! the values user space sees as `-errno` from a system call. Kernel code
//! returns `Result<T, Errno>` all the way up.

/// A Linux errno value, named as Linux names it.
#[allow(clippy::upper_case_acronyms)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Errno {
    EPERM = 1,
    ENOENT = 2,
    ESRCH = 3,
    EINTR = 4,
    EIO = 5,
    ENXIO = 6,
    E2BIG = 7,
    ENOEXEC = 8,
    EBADF = 9,
    ECHILD = 10,
    EAGAIN = 11,
    ENOMEM = 12,
    EACCES = 13,
    EFAULT = 14,
    EBUSY = 16,
    EEXIST = 17,
    EXDEV = 18,
    ENODEV = 19,
    ENOTDIR = 20,
    EISDIR = 21,
    EINVAL = 22,
    EMFILE = 24,
    ENOTTY = 25,
    EFBIG = 27,
    ESPIPE = 29,
    ENOSPC = 28,
    EPIPE = 32,
    ERANGE = 34,
    EDEADLK = 35,
    ENAMETOOLONG = 36,
    ENOSYS = 38,
    ENOTEMPTY = 39,
    ELOOP = 40,
    ENODATA = 61,
    EOVERFLOW = 75,
    ENOTSOCK = 88,
    EMSGSIZE = 90,
    EPROTOTYPE = 91,
    ENOPROTOOPT = 92,
    EPROTONOSUPPORT = 93,
    ESOCKTNOSUPPORT = 94,
    EOPNOTSUPP = 95,
    EAFNOSUPPORT = 97,
    EADDRINUSE = 98,
    ENOBUFS = 105,
    EISCONN = 106,
    ENOTCONN = 107,
    ETIMEDOUT = 110,
    ECONNREFUSED = 111,
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
