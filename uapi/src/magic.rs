//! File system magic numbers, as statfs(2) reports them (Linux:
//! `include/uapi/linux/magic.h`).

uapi_consts! {
    TMPFS_MAGIC: u64 = 0x1021994;
    PROC_SUPER_MAGIC: u64 = 0x9fa0;
    SYSFS_MAGIC: u64 = 0x62656572;
    PIPEFS_MAGIC: u64 = 0x50495045;
}
