//! will-it-scale's `page_fault4` ("separate file private mapping page read
//! fault"): each task has its own tmpfs file of `size` bytes (will-it-scale:
//! 128M, the default) and loops mmap MAP_PRIVATE, read one byte per page,
//! munmap. Tasks are threads (`mode=threads`) or processes
//! (`mode=processes`); reports operations (mapped-and-read pages) per
//! second of all tasks together, sampled over `ms` after `warmup_ms`, as
//! will-it-scale does (see `scale.rs`).
//!
//! `page_fault4 tasks=2 mode=threads ms=1000 warmup_ms=200 size=134217728`
#![no_std]
#![no_main]

use core::ptr::read_volatile;
use faultline_user_bench::scale::{self, Task};
use faultline_user_bench::*;
use ulib::mm::*;

ulib::entry!(main);

/// One task: fills its file of `len` bytes, then maps, reads and unmaps
/// it until stopped, counting the pages read.
fn testcase(task: &mut Task, len: usize) -> bool {
    let Ok(fd) = filled_memfd(len) else {
        return false;
    };
    task.start();
    while !task.stopped() {
        // SAFETY: a new private view the kernel places.
        let Ok(addr) = (unsafe { mmap(0, len, PROT_READ, MAP_PRIVATE, fd, 0) }) else {
            return false;
        };
        for off in (0..len).step_by(PAGE_SIZE) {
            // SAFETY: inside the view.
            unsafe { read_volatile((addr + off) as *const u8) };
            task.add(1);
        }
        // SAFETY: our own view.
        let _ = unsafe { munmap(addr, len) };
    }
    true
}

/// What `--help` prints.
const HELP: &str = "\
page_fault4 [tasks=N] [mode=threads|processes] [ms=N] [warmup_ms=N] [size=BYTES]
will-it-scale's page_fault4: each task loops mmap MAP_PRIVATE of its own
tmpfs file (default 128M), reading a byte per page, and munmap. Reports
pages mapped and read per second of all tasks, sampled over ms after
warmup_ms.";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    let len = arg(&args, "size", 128 << 20) as usize;
    let run = scale::Run::from_args(&args);
    let counters = || ["pgfault", "vma_lock_success"].map(|k| vmstat(k).unwrap_or(0));
    let before = counters();
    let Some(ops_per_sec) = scale::run(&run, move |task| testcase(task, len)) else {
        return 1;
    };
    let after = counters();
    report(
        "page_fault4",
        &[
            ("tasks", &run.tasks),
            ("threads", &(run.threads as u64)),
            ("ops_per_sec", &ops_per_sec),
            // Every fault in the run (filling the files included), and
            // those handled under a VMA lock alone: equal when no fault
            // ever needed mmap_lock.
            ("faults", &(after[0] - before[0])),
            ("vma_lock_success", &(after[1] - before[1])),
        ],
    );
    0
}
