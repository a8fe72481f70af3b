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
//! Where we simplify: only the values faultline uses, as plain integer
//! constants of the type the C header's users pass them as.
#![no_std]

/// Plain data that may be copied to and from user memory byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value, and the type must have no
/// padding that could leak kernel memory.
pub unsafe trait Pod: Copy {}
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

/// Defines the constants as `pub const`, and `ALL`: each one's name and
/// value, for the host test that compares them with Linux's headers.
macro_rules! uapi_consts {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*

        /// Every constant of this module: its name and value.
        pub const ALL: &[(&str, i128)] = &[$((stringify!($name), $name as i128)),*];
    };
}

pub mod errno;
pub mod mqueue;
pub mod shm;
pub mod signal;
pub mod stat;
pub mod statfs;
pub mod unistd;
