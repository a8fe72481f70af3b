//! The fault path under concurrency: threads on every CPU fault on shared
//! and private memory while other threads mmap, munmap, mprotect and
//! MADV_DONTNEED neighbouring VMAs and the same ones. Nothing may crash,
//! nothing written to tmpfs may be lost, SIGSEGV comes only where a VMA is
//! really gone, and every frame comes back when the process exits. And
//! the per-VMA lock counters (the reference's cases 21 to 24): faults on
//! one VMA never wait for mmap/munmap of others, faults on a VMA being
//! changed fall back to mmap_lock and see the change, a retried fault
//! counts once, and munmap under faulting threads leaves only SIGSEGV.
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
use ulib::process::{exit_group, getrusage, RUSAGE_SELF};
use ulib::signal::*;
use ulib::test::TestResult;
use ulib::thread::spawn;
use ulib::time::sleep;
use ulib::{check, skip};

ulib::tests!(
    faults_while_vmas_change,
    faults_take_no_mmap_lock_while_other_vmas_change,
    faults_on_a_vma_being_mprotected_fall_back,
    a_retried_fault_counts_once,
    munmap_under_faulting_threads_leaves_sigsegv,
);

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

const LOCK_KEYS: [&str; 4] = [
    "pgfault",
    "vma_lock_success",
    "vma_lock_abort",
    "vma_lock_retry",
];

/// Case 21 at scale, and page_fault4's claim: while another thread maps
/// and unmaps its own VMAs without pause, every fault on a cached tmpfs
/// mapping is handled under its VMA's lock: `vma_lock_success` grows by
/// exactly the faults taken, with no abort and no retry.
fn faults_take_no_mmap_lock_while_other_vmas_change() -> TestResult {
    if ulib::system::running_on_linux() {
        skip!("Linux counts vma_lock_* only with CONFIG_PER_VMA_LOCK_STATS");
    }
    const LEN: usize = 4 << 20;
    let fd = memfd_create(c"no-mmap-lock", MFD_CLOEXEC)?;
    fallocate(fd, 0, 0, LEN)?;
    // SAFETY: a new shared mapping the kernel places.
    let view = unsafe { mmap(0, LEN, PROT_READ, MAP_SHARED, fd, 0) }?;
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        spawn(move || {
            let mut rounds = 0usize;
            while !stop.load(Ordering::Acquire) {
                if let Ok(other) = map_anon(64 << 10) {
                    // SAFETY: our own mapping, never touched.
                    let _ = unsafe { munmap(other, 64 << 10) };
                    rounds += 1;
                }
            }
            rounds
        })?
    };
    // Once before: the first read may fault in heap pages of its own.
    vmstats(&LOCK_KEYS)?;
    let before = vmstats(&LOCK_KEYS)?;
    for _ in 0..8 {
        for page in (0..LEN).step_by(PAGE) {
            // SAFETY: inside our read-only mapping.
            unsafe { read_volatile((view + page) as *const u8) };
        }
        // SAFETY: our own mapping; the file keeps the data.
        unsafe { madvise(view, LEN, MADV_DONTNEED) }?;
    }
    let after = vmstats(&LOCK_KEYS)?;
    stop.store(true, Ordering::Release);
    let rounds = churn.join().unwrap_or(0);
    // SAFETY: our own mapping.
    unsafe { munmap(view, LEN) }?;
    close(fd)?;
    let delta: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    check!(rounds > 0, "the churning thread never ran");
    check!(delta[0] >= 8 * 64, "only {} faults", delta[0]);
    check_eq!((delta[1], delta[2], delta[3]), (delta[0], 0, 0));
    Ok(())
}

/// Case 22: while another thread mprotects a VMA over and over (each time
/// write-locking it), this thread's faults on it abort the VMA lock
/// (`vma_lock_abort` grows), wait for mmap_lock, and complete; once an
/// mprotect to read-only has returned, a write gets SEGV_ACCERR and the
/// data is still there.
fn faults_on_a_vma_being_mprotected_fall_back() -> TestResult {
    if ulib::system::running_on_linux() {
        skip!("Linux counts vma_lock_* only with CONFIG_PER_VMA_LOCK_STATS");
    }
    const LEN: usize = 64 * PAGE;
    let vma = map_anon(LEN)?;
    let stop = Arc::new(AtomicBool::new(false));
    let protector = {
        let stop = stop.clone();
        spawn(move || {
            let mut changes = 0usize;
            while !stop.load(Ordering::Acquire) {
                // Execute on and off: a change of flags each time (an
                // mprotect that changes nothing locks nothing, as in
                // Linux), and writes stay allowed throughout.
                let exec = if changes.is_multiple_of(2) {
                    PROT_EXEC
                } else {
                    0
                };
                // SAFETY: our mapping; it stays readable and writable.
                if unsafe { mprotect(vma, LEN, PROT_READ | PROT_WRITE | exec) }.is_ok() {
                    changes += 1;
                }
                // mmap_lock is not fair: leave the faults a turn at it.
                sleep(core::time::Duration::from_micros(50));
            }
            changes
        })?
    };
    let aborts = vmstat("vma_lock_abort")?;
    // At least 20 rounds, and on until a fault has met the write lock: how
    // soon one does depends on how the host schedules the two vCPUs.
    for round in 0..2000usize {
        let value = round as u8;
        for page in (0..LEN).step_by(PAGE) {
            check!(
                try_write(vma + page, value).is_ok(),
                "write to page {page:#x}"
            );
        }
        for page in (0..LEN).step_by(PAGE) {
            check_eq!(try_read(vma + page).ok(), Some(value));
        }
        // SAFETY: our mapping; emptied so the next round faults again.
        unsafe { madvise(vma, LEN, MADV_DONTNEED) }?;
        if round >= 20 && vmstat("vma_lock_abort")? > aborts {
            break;
        }
    }
    let aborts = vmstat("vma_lock_abort")? - aborts;
    stop.store(true, Ordering::Release);
    let changes = protector.join().unwrap_or(0);
    check!(changes > 0, "the other thread never mprotected");
    check!(aborts > 0, "no fault found the VMA write-locked");
    check!(try_write(vma, 1).is_ok(), "write before the change");
    // SAFETY: our mapping.
    unsafe { mprotect(vma, LEN, PROT_READ) }?;
    check_eq!(try_write(vma, 2).map_err(|f| f.code), Err(SEGV_ACCERR));
    check_eq!(try_read(vma).ok(), Some(1));
    // SAFETY: our mapping.
    unsafe { munmap(vma, LEN) }?;
    Ok(())
}

const FALLOC_FL_PUNCH_HOLE: u32 = 2;

/// Case 23: a fault on a page a hole punch is dropping must retry (Linux:
/// `shmem_falloc_wait`). Racing a punch of 32M against a read of a hole
/// beyond the cached part, until one fault lands inside the punch: that
/// fault counts once in `pgfault` and the minor faults, once as a retry,
/// and never as a success.
fn a_retried_fault_counts_once() -> TestResult {
    if ulib::system::running_on_linux() {
        skip!("Linux counts vma_lock_* only with CONFIG_PER_VMA_LOCK_STATS");
    }
    const CACHED: usize = 32 << 20;
    let fd = memfd_create(c"retry", MFD_CLOEXEC)?;
    ftruncate(fd, 2 * CACHED)?;
    // SAFETY: a new shared mapping the kernel places.
    let view = unsafe { mmap(0, 2 * CACHED, PROT_READ, MAP_SHARED, fd, 0) }?;
    let mut retried = false;
    for attempt in 0..20 {
        fallocate(fd, 0, 0, CACHED)?;
        let started = Arc::new(AtomicBool::new(false));
        let puncher = {
            let started = started.clone();
            spawn(move || {
                started.store(true, Ordering::Release);
                let mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
                fallocate(fd, mode, 0, CACHED + (CACHED / 2)).is_ok()
            })?
        };
        while !started.load(Ordering::Acquire) {
            core::hint::spin_loop();
        }
        vmstats(&LOCK_KEYS)?;
        let before = vmstats(&LOCK_KEYS)?;
        let minflt = getrusage(RUSAGE_SELF)?.ru_minflt;
        // A hole inside the punched range, a new one each time.
        let hole = view + CACHED + attempt * PAGE;
        // SAFETY: inside our mapping and the file.
        let byte = unsafe { read_volatile(hole as *const u8) };
        let minflt = getrusage(RUSAGE_SELF)?.ru_minflt - minflt;
        let after = vmstats(&LOCK_KEYS)?;
        check!(puncher.join() == Some(true), "hole punch failed");
        check_eq!(byte, 0);
        check_eq!(minflt, 1);
        check_eq!(after[0] - before[0], 1);
        if after[3] > before[3] {
            check_eq!(after[3] - before[3], 1);
            check_eq!(after[1], before[1]);
            retried = true;
            break;
        }
    }
    // SAFETY: our own mapping.
    unsafe { munmap(view, 2 * CACHED) }?;
    close(fd)?;
    check!(retried, "no fault landed inside a hole punch in 20 tries");
    Ok(())
}

/// Where the threads of `munmap_under_faulting_threads_leaves_sigsegv`
/// fault, and whether it is unmapped yet.
static VICTIM: AtomicUsize = AtomicUsize::new(0);
static UNMAPPED: AtomicBool = AtomicBool::new(false);
const VICTIM_PAGES: usize = 256;

/// The first SIGSEGV ends the process: 0 if it came after munmap began,
/// inside the unmapped VMA, as SEGV_MAPERR.
extern "C" fn victim_fault(_sig: i32, info: &SigInfo, _ctx: &mut UContext) {
    let start = VICTIM.load(Ordering::Acquire);
    let inside = (start..start + VICTIM_PAGES * PAGE).contains(&info.addr());
    let ok = UNMAPPED.load(Ordering::Acquire) && inside && info.si_code == SEGV_MAPERR;
    exit_group(if ok { 0 } else { 20 })
}

/// Case 24: threads on every CPU write to a VMA that munmap takes away
/// under them. The process must end by the first SIGSEGV, raised for an
/// address in the VMA after munmap began; no crash, and every page table
/// and frame comes back.
fn munmap_under_faulting_threads_leaves_sigsegv() -> TestResult {
    let child = || {
        let Ok(victim) = map_anon(VICTIM_PAGES * PAGE) else {
            return 2;
        };
        VICTIM.store(victim, Ordering::Release);
        if sigaction(SIGSEGV, Disposition::Handle(victim_fault), 0).is_err() {
            return 3;
        }
        for t in 0..FAULTERS {
            let writer = spawn(move || loop {
                for p in (t..VICTIM_PAGES).step_by(FAULTERS) {
                    // SAFETY: the victim VMA, until munmap takes it, and
                    // then the fault ends the process.
                    unsafe { write_volatile((victim + p * PAGE) as *mut u8, 1) };
                }
                // SAFETY: as above; emptied so the next round faults again.
                let _ = unsafe { madvise(victim, VICTIM_PAGES * PAGE, MADV_DONTNEED) };
            });
            if writer.is_err() {
                return 4;
            }
        }
        sleep(core::time::Duration::from_millis(20));
        UNMAPPED.store(true, Ordering::Release);
        // SAFETY: the threads' VMA; their next access must fault.
        if unsafe { munmap(victim, VICTIM_PAGES * PAGE) }.is_err() {
            return 5;
        }
        sleep(core::time::Duration::from_secs(2));
        6 // no SIGSEGV
    };
    if ulib::system::running_on_linux() {
        check_eq!(in_child(child)?.exit_code(), Some(0));
        return Ok(());
    }
    children_give_back_memory(child)
}
