//! will-it-scale's `getppid1`: each task calls getppid(2) in a loop, so
//! nearly all of its time is exception entry and return. Under MTTCG this
//! shows how far QEMU itself lets exceptions run in parallel (QEMU 7.2
//! takes its global lock on every exception), the cap on any fault path's
//! scaling there.
//!
//! `getppid1 tasks=2 mode=threads ms=1000 warmup_ms=200`
#![no_std]
#![no_main]

use core::hint::black_box;
use faultline_user_bench::scale::{self, Task};
use ulib::process::getppid;

use faultline_user_bench::help_asked;

ulib::entry!(main);

/// System calls, counted a hundred at a time.
fn testcase(task: &mut Task) -> bool {
    task.start();
    while !task.stopped() {
        for _ in 0..100 {
            black_box(getppid());
        }
        task.add(100);
    }
    true
}

/// What `--help` prints.
const HELP: &str = "\
getppid1 [tasks=N] [mode=threads|processes] [ms=N] [warmup_ms=N]
will-it-scale's getppid1: getppid(2) in a loop, nearly all exception entry
and return. Reports calls per second of all tasks.";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    scale::main("getppid1", &args, testcase)
}
