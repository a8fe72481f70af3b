//! lmbench's `lat_pagefault`: map a file read-only and touch its pages in
//! a pseudo-random permutation; report the cost per page touched.
//!
//! `lat_pagefault pages=512 iters=10`
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::ptr::read_volatile;
use faultline_user_bench::*;
use ulib::mm::*;

ulib::entry!(main);

/// What `--help` prints.
const HELP: &str = "\
lat_pagefault [pages=N] [iters=N] [samples=N] [around=BYTES]
lmbench's lat_pagefault: a memfd of N pages (default 512) written through,
mapped read-only and touched in a fixed pseudo-random order, iters times
(default 10). Reports ns per page touched, faults per page and one
fault's cost (fault_ns, the mean of samples faults, default 100, each in
a fresh view). Fault-around is /sys/kernel/debug/fault_around_bytes;
around=BYTES writes it first (4096 turns it off; faultline only).";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    if let Some(bytes) = args.clone().find_map(|a| a.strip_prefix("around=")) {
        set_knob(c"/sys/kernel/debug/fault_around_bytes", bytes);
    }
    let pages = arg(&args, "pages", 512) as usize;
    let iters = arg(&args, "iters", 10);
    let len = pages * PAGE_SIZE;
    let Ok(fd) = filled_memfd(len) else { return 1 };
    // A fixed permutation (multiplication by an odd number modulo a power
    // of two), so every run touches the same order.
    let order: Vec<usize> = (0..pages).map(|i| (i * 2_654_435_761) % pages).collect();
    let (mut ns, mut faults) = (0, 0);
    // The touching loop is the TLB model's window 1 (make bench TLB=1).
    let touched_all = tlb_window(1, || {
        for _ in 0..iters {
            // SAFETY: a new read-only view the kernel places.
            let Ok(addr) = (unsafe { mmap(0, len, PROT_READ, MAP_SHARED, fd, 0) }) else {
                return false;
            };
            // getrusage outside the timed part, as the seed times only stores.
            let f0 = minflt();
            let t0 = now_ns();
            for &p in &order {
                // SAFETY: inside the view.
                unsafe { read_volatile((addr + p * PAGE_SIZE) as *const u8) };
            }
            ns += now_ns() - t0;
            faults += minflt() - f0;
            // SAFETY: our own view.
            if unsafe { munmap(addr, len) }.is_err() {
                return false;
            }
        }
        true
    });
    if !touched_all {
        return 1;
    }
    // Then one read fault (with what fault-around maps) alone, timed on
    // the counter, once a first fault has made the page table.
    // A hundred of them by default, whatever `iters` is: a mean of ten
    // moved by +-15 ns from one kernel build to the next (lat_pagefault
    // iters=2, 10, 40, 160 gave 536, 539, 548, 543), and each costs a few
    // microseconds, not a pass over the file.
    let samples = arg(&args, "samples", 100).max(1) as i64;
    let mut fault_ns = 0;
    for _ in 0..samples {
        // SAFETY: a new read-only view the kernel places.
        let Ok(addr) = (unsafe { mmap(0, len, PROT_READ, MAP_SHARED, fd, 0) }) else {
            return 1;
        };
        // SAFETY: inside the view.
        unsafe { read_volatile(addr as *const u8) };
        let mid = addr + len / 2;
        fault_ns += time_fault(|| {
            // SAFETY: inside the view.
            unsafe { read_volatile(mid as *const u8) };
        });
        // SAFETY: our own view.
        if unsafe { munmap(addr, len) }.is_err() {
            return 1;
        }
    }
    let touched = iters * pages as u64;
    report(
        "lat_pagefault",
        &[
            ("pages", &pages),
            ("ns_per_page", &(ns / touched)),
            ("faults_per_page", &Hundredths(faults * 100 / touched)),
            ("fault_ns", &(fault_ns / samples)),
        ],
    );
    0
}
