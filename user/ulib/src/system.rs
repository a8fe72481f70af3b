//! Whole-system calls: uname, getrandom, reboot.

use crate::errno::Errno;
use crate::sys::*;
use crate::syscall;
use core::ffi::CStr;
pub use uapi::misc::{
    GRND_NONBLOCK, LINUX_REBOOT_CMD_POWER_OFF, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
};

/// `struct utsname`: six NUL-terminated fields of 65 bytes.
#[repr(C)]
pub struct Utsname {
    pub sysname: [u8; 65],
    pub nodename: [u8; 65],
    pub release: [u8; 65],
    pub version: [u8; 65],
    pub machine: [u8; 65],
    pub domainname: [u8; 65],
}

/// The text of a utsname field, up to its NUL; "" if it has none or is not
/// UTF-8.
pub fn field(bytes: &[u8; 65]) -> &str {
    CStr::from_bytes_until_nul(bytes)
        .ok()
        .and_then(|s| s.to_str().ok())
        .unwrap_or("")
}

pub fn uname() -> Result<Utsname, Errno> {
    let mut uts = Utsname {
        sysname: [0; 65],
        nodename: [0; 65],
        release: [0; 65],
        version: [0; 65],
        machine: [0; 65],
        domainname: [0; 65],
    };
    // SAFETY: the kernel writes one Utsname into uts.
    unsafe { syscall!(__NR_uname, &mut uts as *mut Utsname) }?;
    Ok(uts)
}

/// True on Linux, false on faultline (which reports sysname "Linux", as
/// programs expect, and a release ending in "-faultline"): tests of
/// faultline-only interfaces skip themselves when this is true.
pub fn running_on_linux() -> bool {
    uname().is_ok_and(|uts| {
        field(&uts.sysname) == "Linux" && !field(&uts.release).ends_with("-faultline")
    })
}

/// True under qemu-user (`qemu-aarch64` user-mode emulation), the Linux the
/// tests are checked against. qemu 7.2 emulates a few calls loosely, and
/// the tests that meet one of those say so where they allow for it. Real
/// arm64 Linux always maps a vDSO and passes its address as
/// AT_SYSINFO_EHDR; qemu 7.2 does not.
pub fn running_on_qemu_user() -> bool {
    running_on_linux() && crate::auxv(crate::start::AT_SYSINFO_EHDR).is_none()
}

/// Fills `buf` with random bytes; returns how many.
pub fn getrandom(buf: &mut [u8], flags: u32) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe { syscall!(__NR_getrandom, buf.as_mut_ptr(), buf.len(), flags) }
}

/// reboot(2). With both magic numbers right and the privilege to do so,
/// `LINUX_REBOOT_CMD_POWER_OFF` turns the machine off and does not return.
pub fn reboot(magic1: u32, magic2: u32, cmd: u32) -> Result<(), Errno> {
    // SAFETY: no memory is passed (the RESTART2 argument is NULL).
    unsafe { syscall!(__NR_reboot, magic1, magic2, cmd, 0) }.map(drop)
}
