//! will-it-scale's `page_fault4` ("separate file private mapping page read
//! fault"): each task has its own tmpfs file of `size` bytes (will-it-scale:
//! 128M, the default) and loops mmap MAP_PRIVATE, read one byte per page,
//! munmap. Tasks are threads (`mode=threads`) or processes
//! (`mode=processes`); reports operations (mapped-and-read pages) per
//! second over all tasks.
//!
//! `page_fault4 tasks=2 mode=threads loops=20 size=134217728`
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::ptr::read_volatile;
use core::sync::atomic::{AtomicU32, Ordering};
use faultline_user_bench::*;
use ulib::mm::*;
use ulib::process::{exit_group, fork, wait_for};
use ulib::sync::{futex_wait, futex_wake};

ulib::entry!(main);

/// Where the tasks meet before the timed part: how many have their file
/// ready, and the start signal. In a shared page, so processes see it too;
/// waits sleep on futexes, so a waiting task never holds up a working one.
struct Start {
    ready: AtomicU32,
    go: AtomicU32,
}

/// Sleeps until `word` is no longer `value`.
fn wait_while(word: &AtomicU32, value: u32) {
    while word.load(Ordering::Acquire) == value {
        let _ = futex_wait(word, value, None, 0);
    }
}

/// One task: fills its file of `len` bytes, waits for the start, then runs
/// its loops; returns the pages it read.
fn task(start: &Start, loops: u64, len: usize) -> u64 {
    let fd = filled_memfd(len);
    start.ready.fetch_add(1, Ordering::AcqRel);
    let _ = futex_wake(&start.ready, u32::MAX, 0);
    wait_while(&start.go, 0);
    let Ok(fd) = fd else { return 0 };
    let mut pages = 0;
    for _ in 0..loops {
        // SAFETY: a new private view the kernel places.
        let Ok(addr) = (unsafe { mmap(0, len, PROT_READ, MAP_PRIVATE, fd, 0) }) else {
            return pages;
        };
        for off in (0..len).step_by(PAGE_SIZE) {
            // SAFETY: inside the view.
            unsafe { read_volatile((addr + off) as *const u8) };
            pages += 1;
        }
        // SAFETY: our own view.
        let _ = unsafe { munmap(addr, len) };
    }
    pages
}

fn main(args: ulib::Args) -> i32 {
    let tasks = arg(&args, "tasks", 1).max(1);
    let loops = arg(&args, "loops", 20);
    let len = arg(&args, "size", 128 << 20) as usize;
    let threads = args.clone().any(|a| a == "mode=threads");
    let flags = MAP_SHARED | MAP_ANONYMOUS;
    // SAFETY: a new shared page, which forked children share.
    let Ok(page) = (unsafe { mmap(0, PAGE_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0) }) else {
        return 1;
    };
    // SAFETY: the page is zeroed, a valid `Start`, and lives to the end.
    let start: &'static Start = unsafe { &*(page as *const Start) };
    let counters = || ["pgfault", "vma_lock_success"].map(|k| vmstat(k).unwrap_or(0));
    let expected = loops * (len / PAGE_SIZE) as u64;
    let mut pids = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..tasks {
        if threads {
            match ulib::thread::spawn(move || task(start, loops, len)) {
                Ok(h) => handles.push(h),
                Err(_) => return 1,
            }
        } else {
            match fork() {
                Ok(0) => exit_group((task(start, loops, len) != expected) as i32),
                Ok(pid) => pids.push(pid),
                Err(_) => return 1,
            }
        }
    }
    // Time the loops only, from when every file is ready.
    loop {
        let ready = start.ready.load(Ordering::Acquire);
        if ready as u64 >= tasks {
            break;
        }
        wait_while(&start.ready, ready);
    }
    let before = counters();
    let t0 = now_ns();
    start.go.store(1, Ordering::Release);
    let _ = futex_wake(&start.go, u32::MAX, 0);
    let threads_ops: u64 = handles.into_iter().filter_map(|h| h.join()).sum();
    let finished = pids
        .into_iter()
        .filter(|&pid| wait_for(pid).is_ok_and(|s| s.exit_code() == Some(0)));
    let ops = threads_ops + finished.count() as u64 * expected;
    let ns = (now_ns() - t0).max(1);
    let after = counters();
    report(
        "page_fault4",
        &[
            ("tasks", tasks),
            ("threads", threads as u64),
            ("ops_per_sec", ops * 1_000_000_000 / ns),
            // Every fault in the run (filling the files included), and
            // those handled under a VMA lock alone: equal when no fault
            // ever needed mmap_lock.
            ("faults", after[0] - before[0]),
            ("vma_lock_success", after[1] - before[1]),
        ],
    );
    0
}
