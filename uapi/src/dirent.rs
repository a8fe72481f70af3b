//! Directory entry types (Linux: `include/linux/fs_types.h`'s `DT_*`, as
//! getdents64 reports them).

uapi_consts! {
    DT_DIR: u8 = 4;
    DT_REG: u8 = 8;
}
