//! The Linux aarch64 user-space ABI, one source for the kernel, ulib and
//! the host tests (Linux: `include/uapi/`, `arch/arm64/include/uapi/`).
//! Each module is one uapi header's worth, its values named as Linux
//! names them; `kernel/pure/tests/linux_abi.rs` checks every one of them
//! against Linux's own headers through each module's `ALL` table.
//!
//! ABI structs are `#[repr(C)]` with every padding byte a named field, and
//! implement [`Pod`], so the kernel copies them to and from user memory
//! without `unsafe` of its own.
//!
//! Where we simplify: only the values faultline uses (and every system
//! call's number), as plain integer constants of the type the kernel
//! handles them in; ulib keeps typed copies where its API differs.
#![no_std]

/// Plain data that may be copied to and from user memory byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value, and the type must have no
/// padding that could leak kernel memory.
pub unsafe trait Pod: Copy {
    /// The value's bytes, as user memory gets them.
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: a Pod value has no padding, so all its bytes are
        // initialised; the slice borrows the value.
        unsafe { core::slice::from_raw_parts(self as *const Self as *const u8, size_of::<Self>()) }
    }
}
// SAFETY: integers have no invalid values and no padding.
unsafe impl Pod for u8 {}
// SAFETY: as for u8.
unsafe impl Pod for u16 {}
// SAFETY: as for u8.
unsafe impl Pod for u32 {}
// SAFETY: as for u8.
unsafe impl Pod for i32 {}
// SAFETY: as for u8.
unsafe impl Pod for u64 {}
// SAFETY: as for u8.
unsafe impl Pod for i64 {}
// SAFETY: an array of Pod has its elements' bit patterns, and no padding
// between them (an array's stride is its element's size).
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// Defines the constants as `pub const`, and `ALL`: each one's name,
/// value and width in bits, for the host test that compares them with
/// Linux's headers (and for anything that names a value, as strace does).
macro_rules! uapi_consts {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*

        /// Every constant of this module: its name, value and width.
        pub const ALL: &[$crate::Value] = &[$((stringify!($name), $name as i128, <$ty>::BITS)),*];
    };
}

pub mod auxvec;
pub mod capability;
pub mod dirent;
pub mod errno;
pub mod eventfd;
pub mod fcntl;
pub mod futex;
pub mod hwcap;
pub mod ioctls;
pub mod limits;
pub mod magic;
pub mod misc;
pub mod mman;
pub mod mount;
pub mod mqueue;
pub mod poll;
pub mod prctl;
pub mod ptrace;
pub mod resource;
pub mod rtc;
pub mod sched;
pub mod shm;
pub mod signal;
pub mod signalfd;
pub mod socket;
pub mod stat;
pub mod statfs;
pub mod termios;
pub mod time;
pub mod unistd;
pub mod wait;
pub mod xattr;

/// One constant of a module's `ALL`: its name, value and width in bits.
pub type Value = (&'static str, i128, u32);

/// Every module's `ALL`, by module name.
pub const MODULES: &[(&str, &[Value])] = &[
    ("auxvec", auxvec::ALL),
    ("capability", capability::ALL),
    ("dirent", dirent::ALL),
    ("errno", errno::ALL),
    ("eventfd", eventfd::ALL),
    ("fcntl", fcntl::ALL),
    ("futex", futex::ALL),
    ("hwcap", hwcap::ALL),
    ("ioctls", ioctls::ALL),
    ("limits", limits::ALL),
    ("magic", magic::ALL),
    ("misc", misc::ALL),
    ("mman", mman::ALL),
    ("mount", mount::ALL),
    ("poll", poll::ALL),
    ("prctl", prctl::ALL),
    ("ptrace", ptrace::ALL),
    ("resource", resource::ALL),
    ("rtc", rtc::ALL),
    ("sched", sched::ALL),
    ("signal", signal::ALL),
    ("socket", socket::ALL),
    ("stat", stat::ALL),
    ("termios", termios::ALL),
    ("time", time::ALL),
    ("unistd", unistd::ALL),
    ("wait", wait::ALL),
    ("xattr", xattr::ALL),
];
