//! ulib: the runtime every faultline user program links against.
//!
//! It owns the process entry (`_start`, in [`start`]), raw and typed system
//! calls of the Linux aarch64 ABI, `print!`, the heap behind `alloc`,
//! threads, futexes, signals and the test harness. A program is
//! `#![no_std] #![no_main]` and names its main with [`entry!`]. Because it
//! speaks only the Linux ABI, the same static binary runs on Linux (under
//! `qemu-aarch64`) and on faultline.
//!
//! The wrappers keep Linux's names and argument order and return
//! `Result<_, Errno>`; calls that can break memory safety (mmap with
//! MAP_FIXED, munmap, clone, ...) are `unsafe fn`.
#![no_std]

extern crate alloc;

pub mod errno;
pub mod fs;
mod heap;
pub mod mm;
pub mod print;
pub mod process;
pub mod signal;
pub mod start;
pub mod sync;
pub mod sys;
pub mod syscall;
pub mod system;
pub mod test;
pub mod thread;
pub mod time;

pub use errno::Errno;
pub use start::{args, auxv, env, Args};

/// A panic ends the process with status 101 (`test::EXIT_PANIC`). Inside a
/// test the message goes to the harness; elsewhere to stderr.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    if !test::report_panic(format_args!("{info}")) {
        eprintln!("{info}");
    }
    process::exit_group(test::EXIT_PANIC)
}
