//! Mount flags and the new mount API's (Linux: `include/uapi/linux/mount.h`).

uapi_consts! {
    MS_REMOUNT: u64 = 32;
    MS_BIND: u64 = 4096;
    MS_MOVE: u64 = 8192;
    MNT_FORCE: u32 = 1;
    MNT_DETACH: u32 = 2;
    FSOPEN_CLOEXEC: u32 = 1;
    FSMOUNT_CLOEXEC: u32 = 1;
    MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
    MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;
}
