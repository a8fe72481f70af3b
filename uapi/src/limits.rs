//! Limits (Linux: `include/uapi/linux/limits.h`).

uapi_consts! {
    /// Most descriptors one table holds (Linux's default `RLIMIT_NOFILE`).
    NR_OPEN: usize = 1024;
    /// Longest name of one path component (Linux: `NAME_MAX`).
    NAME_MAX: usize = 255;
    /// Longest path accepted (Linux: `PATH_MAX`, counting the NUL).
    PATH_MAX: usize = 4096;
    /// The most supplementary groups setgroups(2) takes (Linux:
    /// `NGROUPS_MAX`).
    NGROUPS_MAX: usize = 65536;
    /// Longest extended-attribute name, in bytes without the NUL.
    XATTR_NAME_MAX: usize = 255;
    /// Largest extended-attribute value.
    XATTR_SIZE_MAX: usize = 65536;
    /// Largest list listxattr returns.
    XATTR_LIST_MAX: usize = 65536;
}
