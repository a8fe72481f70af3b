//! The control for page_fault4's scaling: the same harness (`scale.rs`)
//! running a pure compute loop that never enters the kernel, so its
//! scaling is what the host gives QEMU's vCPU threads, whatever the
//! kernel does.
//!
//! `spin tasks=2 mode=threads ms=1000 warmup_ms=200`
#![no_std]
#![no_main]

use core::hint::black_box;
use faultline_user_bench::scale::{self, Task};

use faultline_user_bench::help_asked;

ulib::entry!(main);

/// Rounds of xorshift, counted a thousand at a time.
fn testcase(task: &mut Task) -> bool {
    task.start();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while !task.stopped() {
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        black_box(x);
        task.add(1);
    }
    true
}

/// What `--help` prints.
const HELP: &str = "\
spin [tasks=N] [mode=threads|processes] [ms=N] [warmup_ms=N]
The scaling control: a compute loop that never enters the kernel. Reports
rounds per second of all tasks.";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    scale::main("spin", &args, testcase)
}
