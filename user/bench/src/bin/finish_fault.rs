//! Seed 000's measurement, by the seed's steps: the knobs set to `always`
//! through sysfs (with `--set-knobs`; else as the system has them), a 2M
//! memfd mapped MAP_SHARED and
//! populated by one store (the fault allocates the 2M folio), and a
//! `size`-byte MAP_SHARED view of it at offset 0; per iteration, 8 stores
//! 4K apart, then MADV_DONTNEED. Reports nanoseconds and minor faults per
//! iteration, the PTEs one fault maps, and that fault's own cost
//! (`fault_ns`). `user/c/seed000.c` is the same steps in C against glibc.
//!
//! `finish_fault --set-knobs size=65536 iters=1000`
#![no_std]
#![no_main]

use core::ptr::write_volatile;
use faultline_user_bench::*;
use ulib::mm::*;

ulib::entry!(main);

/// What `--help` prints.
const HELP: &str = "\
finish_fault [size=BYTES] [iters=N] [align=HEX] [--set-knobs]
Seed 000's measurement: a 2M memfd mapped shared and populated by one
store, then a size-byte shared view of it (default 65536); per iteration 8
stores 4K apart and MADV_DONTNEED. Reports ns and minor faults per
iteration, the PTEs one fault maps and that fault's own cost (fault_ns).
The seed sets shmem_enabled=always for the 2M folio: --set-knobs does.
align=HEX writes thp_mapping_align first (make bench runs with 0x1, which
places the view at 64K, where its entries take the contiguous bit).";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    if let Some(bits) = args.clone().find_map(|a| a.strip_prefix("align=")) {
        set_knob(
            c"/sys/kernel/mm/transparent_hugepage/thp_mapping_align",
            bits,
        );
    }
    let size = arg(&args, "size", 64 * 1024) as usize;
    let iters = arg(&args, "iters", 1000);
    let Ok(fd) = populated_2m_memfd(set_knobs_asked(&args)) else {
        return 1;
    };
    // SAFETY: a new shared view the kernel places.
    let Ok(addr) = (unsafe { mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }) else {
        return 1;
    };
    let (mut ns, mut faults) = (0, 0);
    for _ in 0..iters {
        // getrusage outside the timed part, as the seed times only stores.
        let f0 = minflt();
        let t0 = now_ns();
        for page in 0..8 {
            // SAFETY: inside the view (size >= 32K).
            unsafe { write_volatile((addr + page * PAGE_SIZE) as *mut u8, 2) };
        }
        ns += now_ns() - t0;
        faults += minflt() - f0;
        // SAFETY: our own shared view; the memfd keeps the data.
        if unsafe { madvise(addr, size, MADV_DONTNEED) }.is_err() {
            return 1;
        }
    }
    // What one fault maps (seed 000: 16 PTEs for the 64K view, 8 for 32K).
    // SAFETY: inside the view, as above.
    unsafe { write_volatile(addr as *mut u8, 2) };
    let ptes = mapped_pages(addr).unwrap_or(0);
    // SAFETY: as above.
    if unsafe { madvise(addr, size, MADV_DONTNEED) }.is_err() {
        return 1;
    }
    // Then the first fault alone, timed on the counter.
    let mut fault_ns = 0;
    for _ in 0..iters {
        // SAFETY (the closure): inside the view, as above.
        fault_ns += time_fault(|| unsafe { write_volatile(addr as *mut u8, 2) });
        // SAFETY: as above.
        if unsafe { madvise(addr, size, MADV_DONTNEED) }.is_err() {
            return 1;
        }
    }
    report(
        "finish_fault",
        &[
            ("size", &size),
            ("ns_per_iter", &(ns / iters)),
            ("faults_per_iter", &Hundredths(faults * 100 / iters)),
            ("ptes_per_fault", &ptes),
            ("fault_ns", &(fault_ns / iters as i64)),
        ],
    );
    0
}
