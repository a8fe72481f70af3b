//! will-it-scale's `page_fault4` ("separate file private mapping page read
//! fault"): each task has its own tmpfs file and loops mmap MAP_PRIVATE,
//! read one byte per page, munmap. Tasks are threads (`mode=threads`) or
//! processes (`mode=processes`); reports operations (mapped-and-read
//! pages) per virtual second over all tasks.
//!
//! `page_fault4 tasks=2 mode=threads loops=20`
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::ptr::read_volatile;
use faultline_user_bench::*;
use ulib::mm::*;
use ulib::process::{exit_group, fork, wait_for};

ulib::entry!(main);

/// 128K per mapping, as will-it-scale's MEMSIZE is 128M split into loops.
const LEN: usize = 128 * 1024;

/// One task's loops; returns the pages it read.
fn task(loops: u64) -> u64 {
    let Ok(fd) = filled_memfd(LEN) else { return 0 };
    let mut pages = 0;
    for _ in 0..loops {
        // SAFETY: a new private view the kernel places.
        let Ok(addr) = (unsafe { mmap(0, LEN, PROT_READ, MAP_PRIVATE, fd, 0) }) else {
            return pages;
        };
        for off in (0..LEN).step_by(PAGE_SIZE) {
            // SAFETY: inside the view.
            unsafe { read_volatile((addr + off) as *const u8) };
            pages += 1;
        }
        // SAFETY: our own view.
        let _ = unsafe { munmap(addr, LEN) };
    }
    pages
}

fn main(args: ulib::Args) -> i32 {
    let tasks = arg(&args, "tasks", 1).max(1);
    let loops = arg(&args, "loops", 20);
    let threads = args.clone().any(|a| a == "mode=threads");
    let t0 = now_ns();
    let ops: u64 = if threads {
        let handles: Vec<_> = (0..tasks)
            .filter_map(|_| ulib::thread::spawn(move || task(loops)).ok())
            .collect();
        handles.into_iter().filter_map(|h| h.join()).sum()
    } else {
        let mut children = Vec::new();
        for _ in 0..tasks {
            match fork() {
                Ok(0) => exit_group(if task(loops) == loops * (LEN / PAGE_SIZE) as u64 {
                    0
                } else {
                    1
                }),
                Ok(pid) => children.push(pid),
                Err(_) => return 1,
            }
        }
        let ok = children
            .into_iter()
            .filter(|&pid| wait_for(pid).is_ok_and(|s| s.exit_code() == Some(0)));
        ok.count() as u64 * loops * (LEN / PAGE_SIZE) as u64
    };
    let ns = (now_ns() - t0).max(1);
    report(
        "page_fault4",
        &[
            ("tasks", tasks),
            ("threads", threads as u64),
            ("ops_per_sec", ops * 1_000_000_000 / ns),
        ],
    );
    0
}
