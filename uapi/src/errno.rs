//! Error numbers (Linux: `include/uapi/asm-generic/errno-base.h` and
//! `errno.h`): a failed system call returns `-errno`. Each line's comment
//! is glibc's `strerror` text for it.

uapi_consts! {
    /// Operation not permitted.
    EPERM: i32 = 1;
    /// No such file or directory.
    ENOENT: i32 = 2;
    /// No such process.
    ESRCH: i32 = 3;
    /// Interrupted system call.
    EINTR: i32 = 4;
    /// Input/output error.
    EIO: i32 = 5;
    /// No such device or address.
    ENXIO: i32 = 6;
    /// Argument list too long.
    E2BIG: i32 = 7;
    /// Exec format error.
    ENOEXEC: i32 = 8;
    /// Bad file descriptor.
    EBADF: i32 = 9;
    /// No child processes.
    ECHILD: i32 = 10;
    /// Resource temporarily unavailable.
    EAGAIN: i32 = 11;
    /// Cannot allocate memory.
    ENOMEM: i32 = 12;
    /// Permission denied.
    EACCES: i32 = 13;
    /// Bad address.
    EFAULT: i32 = 14;
    /// Device or resource busy.
    EBUSY: i32 = 16;
    /// File exists.
    EEXIST: i32 = 17;
    /// Invalid cross-device link.
    EXDEV: i32 = 18;
    /// No such device.
    ENODEV: i32 = 19;
    /// Not a directory.
    ENOTDIR: i32 = 20;
    /// Is a directory.
    EISDIR: i32 = 21;
    /// Invalid argument.
    EINVAL: i32 = 22;
    /// Too many open files in system.
    ENFILE: i32 = 23;
    /// Too many open files.
    EMFILE: i32 = 24;
    /// Inappropriate ioctl for device.
    ENOTTY: i32 = 25;
    /// Text file busy.
    ETXTBSY: i32 = 26;
    /// File too large.
    EFBIG: i32 = 27;
    /// No space left on device.
    ENOSPC: i32 = 28;
    /// Illegal seek.
    ESPIPE: i32 = 29;
    /// Read-only file system.
    EROFS: i32 = 30;
    /// Too many links.
    EMLINK: i32 = 31;
    /// Broken pipe.
    EPIPE: i32 = 32;
    /// Numerical result out of range.
    ERANGE: i32 = 34;
    /// Resource deadlock avoided.
    EDEADLK: i32 = 35;
    /// File name too long.
    ENAMETOOLONG: i32 = 36;
    /// Function not implemented.
    ENOSYS: i32 = 38;
    /// Directory not empty.
    ENOTEMPTY: i32 = 39;
    /// Too many levels of symbolic links.
    ELOOP: i32 = 40;
    /// No data available.
    ENODATA: i32 = 61;
    /// Value too large for defined data type.
    EOVERFLOW: i32 = 75;
    /// Socket operation on non-socket.
    ENOTSOCK: i32 = 88;
    /// Message too long.
    EMSGSIZE: i32 = 90;
    /// Protocol wrong type for socket.
    EPROTOTYPE: i32 = 91;
    /// Protocol not available.
    ENOPROTOOPT: i32 = 92;
    /// Protocol not supported.
    EPROTONOSUPPORT: i32 = 93;
    /// Socket type not supported.
    ESOCKTNOSUPPORT: i32 = 94;
    /// Operation not supported.
    EOPNOTSUPP: i32 = 95;
    /// Address family not supported by protocol.
    EAFNOSUPPORT: i32 = 97;
    /// Address already in use.
    EADDRINUSE: i32 = 98;
    /// No buffer space available.
    ENOBUFS: i32 = 105;
    /// Transport endpoint is already connected.
    EISCONN: i32 = 106;
    /// Transport endpoint is not connected.
    ENOTCONN: i32 = 107;
    /// Connection timed out.
    ETIMEDOUT: i32 = 110;
    /// Connection refused.
    ECONNREFUSED: i32 = 111;
}
