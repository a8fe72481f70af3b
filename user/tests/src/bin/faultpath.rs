//! The fault path under concurrency: threads on every CPU fault on shared
//! and private memory while other threads mmap, munmap, mprotect and
//! MADV_DONTNEED neighbouring VMAs and the same ones. Nothing may crash,
//! nothing written to tmpfs may be lost, SIGSEGV comes only where a VMA is
//! really gone, and every frame comes back when the process exits.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use faultline_user_tests::*;
use ulib::check_eq;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::exit_group;
use ulib::signal::*;
use ulib::test::TestResult;
use ulib::thread::spawn;

ulib::tests!(faults_while_vmas_change);

const PAGE: usize = PAGE_SIZE;
const FAULTERS: usize = 4;
const PAGES: usize = 64;
const ROUNDS: usize = 200;

/// One process's run: returns 0 when every check held, or the step that
/// failed.
fn run() -> i32 {
    let Ok(fd) = memfd_create(c"faultpath", MFD_CLOEXEC) else {
        return 2;
    };
    if ftruncate(fd, PAGES * PAGE).is_err() {
        return 3;
    }
    let prot = PROT_READ | PROT_WRITE;
    // SAFETY: a new shared mapping the kernel places.
    let Ok(shared) = (unsafe { mmap(0, PAGES * PAGE, prot, MAP_SHARED, fd, 0) }) else {
        return 4;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let bad = Arc::new(AtomicUsize::new(0));
    // Each faulter owns pages t, t + FAULTERS, ...: it writes a counter
    // there and must read back its last write, whatever the churn does.
    let faulters: Vec<_> = (0..FAULTERS)
        .filter_map(|t| {
            let (stop, bad) = (stop.clone(), bad.clone());
            spawn(move || {
                let mut round = 0u8;
                while !stop.load(Ordering::Acquire) {
                    round = round.wrapping_add(1);
                    for p in (t..PAGES).step_by(FAULTERS) {
                        let at = (shared + p * PAGE + t) as *mut u8;
                        // SAFETY: the shared mapping stays mapped, and
                        // writable, for the whole run.
                        unsafe {
                            write_volatile(at, round);
                            if read_volatile(at) != round {
                                bad.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    // Private anonymous memory of its own, faulted and freed.
                    if let Ok(mine) = map_anon(16 * PAGE) {
                        for p in 0..16 {
                            // SAFETY: our own new mapping.
                            unsafe { write_volatile((mine + p * PAGE) as *mut u8, round) };
                        }
                        // SAFETY: our own mapping.
                        let _ = unsafe { munmap(mine, 16 * PAGE) };
                    }
                }
                round
            })
            .ok()
        })
        .collect();
    if faulters.len() != FAULTERS {
        return 5;
    }
    // The churn: neighbours come and go; the shared VMA is split and
    // merged by mprotect (same permissions) and emptied by MADV_DONTNEED.
    for round in 0..ROUNDS {
        let Ok(neighbour) = map_anon(8 * PAGE) else {
            return 6;
        };
        // SAFETY: a neighbour of ours, never touched by the faulters.
        let churned = unsafe {
            write_volatile(neighbour as *mut u8, 1);
            let part = shared + (round % (PAGES / 2)) * PAGE;
            mprotect(part, 4 * PAGE, prot)
                .and_then(|_| madvise(shared + (round % PAGES) * PAGE, PAGE, MADV_DONTNEED))
                .and_then(|_| munmap(neighbour, 8 * PAGE))
        };
        if churned.is_err() {
            return 7;
        }
    }
    stop.store(true, Ordering::Release);
    let last: Vec<u8> = faulters.into_iter().filter_map(|h| h.join()).collect();
    if last.len() != FAULTERS || bad.load(Ordering::Relaxed) != 0 {
        return 8;
    }
    // Nothing was lost: the file holds each faulter's last write.
    for p in 0..PAGES {
        let t = p % FAULTERS;
        let mut byte = [0u8; 1];
        if pread64(fd, &mut byte, p * PAGE + t).is_err() || byte[0] != last[t] {
            return 9;
        }
    }
    // A VMA that is really gone faults with SEGV_MAPERR.
    // SAFETY: our own mapping, unmapped for good.
    if unsafe { munmap(shared, PAGES * PAGE) }.is_err() {
        return 10;
    }
    let gone = try_read(shared + 5 * PAGE);
    let want = Fault {
        signo: SIGSEGV,
        code: SEGV_MAPERR,
        addr: shared + 5 * PAGE,
    };
    if gone != Err(want) {
        return 11;
    }
    0
}

fn faults_while_vmas_change() -> TestResult {
    let linux = ulib::system::running_on_linux();
    let tables = if linux {
        0
    } else {
        vmstat("nr_page_table_pages")?
    };
    let status = in_child(|| exit_group(run()))?;
    check_eq!(status.exit_code(), Some(0));
    if !linux {
        check_eq!(vmstat("nr_page_table_pages")?, tables);
    }
    Ok(())
}
