//! The panic handler: message, CPU, and a backtrace from the frame-pointer
//! chain, then QEMU exits non-zero. `qemu-run.sh` pipes the console through
//! `tools/symbolize`, which turns each `#n pc 0x...` into a function and
//! source line.

use crate::arch;

/// Frames printed at most (a corrupted chain might loop).
const MAX_FRAMES: usize = 32;

/// Walks the AArch64 frame records (x29 -> [saved x29, saved x30]) from the
/// caller's frame. Each record is read with `probe_load`, so a corrupt chain
/// ends the walk instead of faulting again.
pub fn print_backtrace() {
    println!("Backtrace:");
    let mut fp = arch::cpu::frame_pointer();
    for n in 0..MAX_FRAMES {
        if fp == 0 || fp % 8 != 0 {
            break;
        }
        let (Ok(next), Ok(lr)) = (arch::trap::probe_load(fp), arch::trap::probe_load(fp + 8)) else {
            break;
        };
        if lr == 0 {
            break;
        }
        println!("  #{} pc {:#018x}", n, lr);
        fp = next as usize;
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::console::enter_panic_mode();
    println!("\nKernel panic on CPU {}: {}", arch::cpu::cpu_id(), info);
    print_backtrace();
    println!("---[ end Kernel panic ]---");
    arch::semihosting::exit(1);
}
