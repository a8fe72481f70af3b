//! The benchmark driver (`make bench` boots into `/init run /bin/bench/bench`):
//! runs each benchmark with each relevant switch off and on, setting the
//! knobs in /sys between runs, then puts them back. Each run prints its own
//! `result` line; `scripts/bench.sh` turns them into a table.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::ffi::CString;
use alloc::vec::Vec;
use core::ffi::CStr;
use ulib::process::{execve, exit_group, fork, wait_for};

use faultline_user_bench::{help_asked, set_knob};

ulib::entry!(main);

const MULTI: &CStr = c"/sys/kernel/mm/finish_fault/multi_page";
const SHMEM_ENABLED: &CStr = c"/sys/kernel/mm/transparent_hugepage/shmem_enabled";
const THP_2M: &CStr = c"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled";
const MAPPING_ALIGN: &CStr = c"/sys/kernel/mm/transparent_hugepage/thp_mapping_align";
const VMA_LOCK: &CStr = c"/sys/kernel/mm/vma_lock/enabled";

/// Runs `/bin/bench/<name> args...` to the end; false if it failed.
fn run(name: &str, args: &[&str]) -> bool {
    let path = CString::new(alloc::format!("/bin/bench/{name}")).unwrap_or_default();
    let owned: Vec<CString> = args.iter().filter_map(|a| CString::new(*a).ok()).collect();
    let mut argv: Vec<&CStr> = alloc::vec![path.as_c_str()];
    argv.extend(owned.iter().map(|a| a.as_c_str()));
    match fork() {
        Ok(0) => {
            execve(&path, &argv, &[]);
            exit_group(127)
        }
        Ok(pid) => wait_for(pid).is_ok_and(|s| s.exit_code() == Some(0)),
        Err(_) => false,
    }
}

/// What `--help` prints.
const HELP: &str = "\
bench [quick|scaling]
The make bench driver: runs each benchmark with each switch off and on,
setting the knobs between runs (it passes --set-knobs to seed 000's
programs); quick: fewer iterations; scaling: seed 002's MTTCG runs.";

fn main(args: ulib::Args) -> i32 {
    if help_asked(&args, HELP) {
        return 0;
    }
    // init's start, from power-on: the boot's length, on faultline.
    if let Some(ns) = ulib::env("FAULTLINE_BOOT_NS") {
        ulib::println!("result boot first_user_ns={ns}");
    }
    if args.clone().any(|a| a == "scaling") {
        return scaling();
    }
    let quick = args.clone().any(|a| a == "quick");
    let iters = if quick { "iters=50" } else { "iters=500" };
    let mut ok = true;
    // Views under 2M go at 64K boundaries, where 64K folios can map with
    // contiguous PTEs (off by default, as in seed 004).
    set_knob(MAPPING_ALIGN, "0x1");
    // Seed 000: a 2M folio, 64K and 32K views, one page vs the whole range;
    // the Rust benchmark and the seed's own steps in C (seed000), which set
    // the knobs themselves when asked (--set-knobs).
    for multi in ["0", "1"] {
        set_knob(MULTI, multi);
        for size in ["size=65536", "size=32768"] {
            ok &= run("finish_fault", &["--set-knobs", size, iters]);
            ok &= run("seed000", &["--set-knobs", size, iters]);
        }
    }
    set_knob(SHMEM_ENABLED, "never");
    set_knob(THP_2M, "inherit");
    set_knob(MULTI, "1");
    // Fault-around off and on, over a page cache of 4K pages.
    let lat_iters = if quick { "iters=2" } else { "iters=10" };
    for around in ["around=4096", "around=65536"] {
        ok &= run("lat_pagefault", &["pages=512", lat_iters, around]);
    }
    // Seed 002: threads fault while others mmap and munmap, under
    // mmap_lock (per-VMA locks off) and under their VMAs' locks.
    // Files of will-it-scale's 128M each, or 4M for a quick look; rates
    // sampled over 100 virtual ms (under icount the vCPUs take turns, so
    // they share that time).
    let (time, size) = if quick {
        (["warmup_ms=5", "ms=20"], "size=4194304")
    } else {
        (["warmup_ms=20", "ms=100"], "size=134217728")
    };
    for vma_lock in ["0", "1"] {
        set_knob(VMA_LOCK, vma_lock);
        for tasks in ["tasks=1", "tasks=2", "tasks=4"] {
            ok &= run(
                "page_fault4",
                &["mode=threads", tasks, time[0], time[1], size],
            );
        }
    }
    for tasks in ["tasks=1", "tasks=2", "tasks=4"] {
        ok &= run(
            "page_fault4",
            &["mode=processes", tasks, time[0], time[1], size],
        );
    }
    // The scaling stage's controls, once each here: under icount a null
    // system call's rate is its cost in instructions (1e9 / ops_per_sec).
    ok &= run("getppid1", &["tasks=1", "mode=threads", time[0], time[1]]);
    ok &= run("spin", &["tasks=1", "mode=threads", time[0], time[1]]);
    // A clock read through glibc (the vDSO) and as a system call.
    ok &= run("clock_gettime", &[iters]);
    set_knob(MAPPING_ALIGN, "0x0");
    if ok {
        0
    } else {
        1
    }
}

/// Seed 002's scaling claim, for MTTCG (no icount, one host thread per
/// vCPU) on 2 CPUs: page_fault4 in threads mode with 1 and then 2 threads,
/// 5 times over, and the same for two controls: `spin`, which never enters
/// the kernel (what the host gives two busy vCPUs), and `getppid1`, which
/// does little else (how far QEMU lets exceptions run in parallel).
/// Alternating keeps a slow spell of the host from landing on one side only.
fn scaling() -> i32 {
    let mut ok = true;
    for _ in 0..5 {
        for tasks in ["tasks=1", "tasks=2"] {
            ok &= run("page_fault4", &["mode=threads", tasks, "ms=1000"]);
            ok &= run("spin", &["mode=threads", tasks, "ms=1000"]);
            ok &= run("getppid1", &["mode=threads", tasks, "ms=1000"]);
        }
    }
    if ok {
        0
    } else {
        1
    }
}
