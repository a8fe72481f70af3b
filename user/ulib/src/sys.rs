//! System call numbers of the Linux aarch64 ABI (the asm-generic table,
//! `include/uapi/asm-generic/unistd.h`). faultline uses the same numbers, so
//! one binary runs on both kernels.

pub use uapi::unistd::*;
