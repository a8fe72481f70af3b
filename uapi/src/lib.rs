//! The Linux aarch64 user-space ABI, one source for the kernel, ulib and
//! the host tests (Linux: `include/uapi/`, `arch/arm64/include/uapi/`).
//! Each module is one uapi header's worth, its values named as Linux
//! names them; `kernel/pure/tests/linux_abi.rs` checks every one of them
//! against Linux's own headers through each module's `ALL` table.
//!
//! Where we simplify: only the values faultline uses, as plain integer
//! constants of the type the C header's users pass them as.
#![no_std]

/// Defines the constants as `pub const`, and `ALL`: each one's name and
/// value, for the host test that compares them with Linux's headers.
macro_rules! uapi_consts {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*

        /// Every constant of this module: its name and value.
        pub const ALL: &[(&str, i128)] = &[$((stringify!($name), $name as i128)),*];
    };
}

pub mod signal;
