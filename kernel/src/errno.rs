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
    ENXIO = 6,
    EBADF = 9,
    EACCES = 13,
    EBUSY = 16,
    EEXIST = 17,
    EXDEV = 18,
    ENODEV = 19,
    ENOTDIR = 20,
    EISDIR = 21,
    EINVAL = 22,
    EMFILE = 24,
    EFBIG = 27,
    ENOSPC = 28,
    ENAMETOOLONG = 36,
    ENOTEMPTY = 39,
    ELOOP = 40,
    EOPNOTSUPP = 95,
}

pub type KResult<T> = Result<T, Errno>;
