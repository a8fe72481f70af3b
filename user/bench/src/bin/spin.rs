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

fn main(args: ulib::Args) -> i32 {
    scale::main("spin", &args, testcase)
}
