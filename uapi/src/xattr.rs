//! Extended attributes' flags (Linux: `include/uapi/linux/xattr.h`); the
//! size limits are in `limits`.

uapi_consts! {
    /// setxattr(2): fail with EEXIST if the name is set.
    XATTR_CREATE: u32 = 1;
    /// setxattr(2): fail with ENODATA if the name is not set.
    XATTR_REPLACE: u32 = 2;
}
