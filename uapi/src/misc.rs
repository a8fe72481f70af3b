//! getrandom(2) flags and reboot(2) magic (Linux:
//! `include/uapi/linux/random.h`, `include/uapi/linux/reboot.h`).

uapi_consts! {
    GRND_NONBLOCK: u32 = 1;
    GRND_RANDOM: u32 = 2;
    GRND_INSECURE: u32 = 4;
    LINUX_REBOOT_MAGIC1: u32 = 0xfee1dead;
    LINUX_REBOOT_MAGIC2: u32 = 0x28121969;
    LINUX_REBOOT_CMD_POWER_OFF: u32 = 0x4321fedc;
}
