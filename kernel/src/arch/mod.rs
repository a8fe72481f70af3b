//! The architecture layer. faultline runs on AArch64 only; the indirection
//! keeps generic code saying `arch::` rather than naming the architecture.

pub mod aarch64;
pub use aarch64::*;
