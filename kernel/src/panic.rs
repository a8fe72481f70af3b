//! The panic handler: message, CPU, and a backtrace from the frame-pointer
//! chain (one `#n pc 0x...` line per frame, the address of the call or of
//! the faulting instruction), then QEMU exits non-zero. `qemu-run.sh` pipes the console through
//! `tools/symbolize`, which turns each `#n pc 0x...` into a function and
//! source line.

use crate::arch;

/// Frames printed at most (a corrupted chain might loop).
const MAX_FRAMES: usize = 32;

/// Walks the AArch64 frame records (x29 -> [saved x29, saved x30]),
/// starting with the caller of the panic handler. Each record is read with
/// `probe_load`, so a corrupt chain ends the walk instead of faulting again.
#[inline(always)]
fn print_backtrace() {
    println!("Backtrace:");
    // Our own record returns into core's panic machinery: skip it.
    let mut fp = arch::trap::probe_load(arch::cpu::frame_pointer()).unwrap_or(0) as usize;
    for n in 0..MAX_FRAMES {
        if fp == 0 || !fp.is_multiple_of(8) {
            break;
        }
        let (Ok(next), Ok(lr)) = (arch::trap::probe_load(fp), arch::trap::probe_load(fp + 8))
        else {
            break;
        };
        if lr == 0 {
            break;
        }
        // The call instruction, not the return address after it: a call
        // that ends a function would otherwise name the next function.
        println!("  #{} pc {:#018x}", n, lr - 4);
        fp = next as usize;
    }
}

/// The Rust panic handler (Linux's `panic()`): bounds console lock waits,
/// prints the message and a backtrace, and exits QEMU with status 1.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::console::enter_panic_mode();
    println!("\nKernel panic on CPU {}: {}", arch::cpu::cpu_id(), info);
    print_backtrace();
    println!("---[ end Kernel panic ]---");
    arch::semihosting::exit(1);
}
