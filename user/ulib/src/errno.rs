//! Error numbers. A failed system call returns `-errno`; [`Errno`] carries
//! the positive number and prints as its Linux name (`ENOENT`), which is what
//! test failures should show.

use core::fmt;

/// A Linux error number, as returned (negated) by a failed system call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

macro_rules! errnos {
    ($($name:ident,)*) => {
        impl Errno {
            $(pub const $name: Errno = Errno(uapi::errno::$name);)*
        }
    };
}

errnos! {
    EPERM,
    ENOENT,
    ESRCH,
    EINTR,
    EIO,
    ENXIO,
    E2BIG,
    ENOEXEC,
    EBADF,
    ECHILD,
    EAGAIN,
    ENOMEM,
    EACCES,
    EFAULT,
    EBUSY,
    EEXIST,
    EXDEV,
    ENODEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENFILE,
    EMFILE,
    ENOTTY,
    ETXTBSY,
    EFBIG,
    ENOSPC,
    ESPIPE,
    EROFS,
    EMLINK,
    EPIPE,
    ERANGE,
    EDEADLK,
    ENAMETOOLONG,
    ENOSYS,
    ENOTEMPTY,
    ELOOP,
    EOVERFLOW,
    EOPNOTSUPP,
    ETIMEDOUT,
}

impl Errno {
    /// The Linux name of this error, if uapi knows it.
    pub fn name(self) -> Option<&'static str> {
        let value = i128::from(self.0);
        uapi::errno::ALL
            .iter()
            .find(|&&(_, v, _)| v == value)
            .map(|&(name, _, _)| name)
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "errno {}", self.0),
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
