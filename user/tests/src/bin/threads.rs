//! Thread tests: spawn/join (CLONE_CHILD_CLEARTID + futex wake), what
//! threads share (memory, descriptors, working directory), futex WAIT and
//! WAKE semantics (values, timeouts, wake counts, shared futexes across
//! fork), a futex mutex under contention, and per-thread CPU state the
//! kernel must switch: TPIDR_EL0 and the FP/SIMD registers; and which
//! thread's exit(2) the parent hears of.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::arch::asm;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use core::time::Duration;
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::*;
use ulib::sync::*;
use ulib::test::{Scratch, TestResult};
use ulib::thread::{sched_yield, spawn, tls_register};
use ulib::time::*;
use ulib::{check, check_eq, check_err, Errno};

ulib::tests!(
    spawn_and_join,
    many_threads,
    threads_share_memory_and_files,
    threads_share_cwd,
    atomic_counter,
    mutex_counter,
    mutex_holder_sleeps,
    futex_wrong_value_is_eagain,
    futex_wait_times_out,
    futex_wake_counts,
    futex_shared_across_fork,
    tls_register_is_per_thread,
    tls_register_survives_fork_and_syscalls,
    fp_simd_registers_are_per_thread,
    the_last_threads_exit_status_is_the_processs,
);

/// Threads that run at once in the concurrent tests: more than faultline's
/// usual two CPUs, so the kernel must switch between them.
const THREADS: usize = 4;

fn spawn_and_join() -> TestResult {
    let t = spawn(|| 6 * 7)?;
    check!(t.tid() > 0 && t.tid() != gettid());
    check_eq!(t.join(), Some(42));
    // Joining a thread that is already gone returns at once.
    let t = spawn(|| 1)?;
    sleep(Duration::from_millis(10));
    check_eq!(t.join(), Some(1));
    Ok(())
}

fn many_threads() -> TestResult {
    let handles: Vec<_> = (0..32)
        .map(|i| spawn(move || i * 2))
        .collect::<Result<_, _>>()?;
    let mut tids: Vec<i32> = handles.iter().map(|h| h.tid()).collect();
    for (i, h) in handles.into_iter().enumerate() {
        check_eq!(h.join(), Some(i * 2));
    }
    tids.sort();
    tids.dedup();
    check_eq!(tids.len(), 32);
    Ok(())
}

fn threads_share_memory_and_files() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    let page = map_anon(PAGE_SIZE)?;
    let fd = spawn(move || {
        // SAFETY: page is mapped and shared by all threads (CLONE_VM).
        unsafe { core::ptr::write_volatile(page as *mut u8, 77) };
        let fd = open(&path, O_RDWR | O_CREAT, 0o644)?;
        write(fd, b"from thread")?;
        Ok::<i32, Errno>(fd)
    })?
    .join()
    .unwrap()?;
    check_eq!(try_read(page), Ok(77));
    // The descriptor the thread opened is ours too (CLONE_FILES).
    check_eq!(pread64(fd, &mut [0u8; 11], 0)?, 11);
    Ok(())
}

fn threads_share_cwd() -> TestResult {
    let scratch = Scratch::new()?;
    let dir = alloc::ffi::CString::from(scratch.dir());
    spawn(move || chdir(&dir))?.join().unwrap()?;
    let mut buf = [0u8; 512];
    let n = getcwd(&mut buf)?;
    check_eq!(&buf[..n], scratch.dir().to_bytes_with_nul());
    chdir(c"/")?;
    Ok(())
}

fn atomic_counter() -> TestResult {
    let counter = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let counter = counter.clone();
            spawn(move || {
                for _ in 0..20_000 {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect::<Result<_, _>>()?;
    for h in handles {
        h.join();
    }
    check_eq!(counter.load(Ordering::Relaxed), THREADS * 20_000);
    Ok(())
}

fn mutex_counter() -> TestResult {
    // A plain (non-atomic) read-modify-write under the lock.
    let counter = Arc::new(Mutex::new(0usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let counter = counter.clone();
            spawn(move || {
                for i in 0..5_000 {
                    let mut n = counter.lock();
                    let v = core::hint::black_box(*n);
                    if i % 64 == 0 {
                        sched_yield();
                    }
                    *n = v + 1;
                }
            })
        })
        .collect::<Result<_, _>>()?;
    for h in handles {
        h.join();
    }
    check_eq!(*counter.lock(), THREADS * 5_000);
    Ok(())
}

fn mutex_holder_sleeps() -> TestResult {
    // Waiters must sleep in FUTEX_WAIT while the holder sleeps, and all
    // get the lock in the end.
    let state = Arc::new(Mutex::new(Vec::new()));
    let guard = state.lock();
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let state = state.clone();
            spawn(move || state.lock().push(i))
        })
        .collect::<Result<_, _>>()?;
    sleep(Duration::from_millis(30));
    drop(guard);
    for h in handles {
        h.join();
    }
    let mut got = state.lock().clone();
    got.sort();
    check_eq!(got, (0..THREADS).collect::<Vec<_>>());
    Ok(())
}

fn futex_wrong_value_is_eagain() -> TestResult {
    let word = AtomicU32::new(1);
    check_err!(
        futex_wait(&word, 0, None, FUTEX_PRIVATE_FLAG),
        Errno::EAGAIN
    );
    check_err!(futex_wait(&word, 0, None, 0), Errno::EAGAIN);
    check_eq!(futex_wake(&word, 1, FUTEX_PRIVATE_FLAG)?, 0);
    // SAFETY: an unknown futex op touches nothing.
    let bad_op = unsafe { ulib::syscall!(ulib::sys::__NR_futex, word.as_ptr(), 99, 0) };
    check_err!(bad_op, Errno::ENOSYS);
    // SAFETY: the kernel must refuse the misaligned word.
    let misaligned = unsafe {
        ulib::syscall!(
            ulib::sys::__NR_futex,
            word.as_ptr() as usize + 1,
            FUTEX_WAIT,
            0
        )
    };
    check_err!(misaligned, Errno::EINVAL);
    Ok(())
}

fn futex_wait_times_out() -> TestResult {
    let word = AtomicU32::new(0);
    let start = monotonic_nanos();
    let timeout = Timespec::from(Duration::from_millis(20));
    check_err!(
        futex_wait(&word, 0, Some(&timeout), FUTEX_PRIVATE_FLAG),
        Errno::ETIMEDOUT
    );
    let waited = monotonic_nanos() - start;
    check!(waited >= 20_000_000, "woke after {waited} ns");
    let bad = Timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000_000,
    };
    check_err!(futex_wait(&word, 0, Some(&bad), 0), Errno::EINVAL);
    Ok(())
}

fn futex_wake_counts() -> TestResult {
    let word = Arc::new(AtomicU32::new(0));
    let arrived = Arc::new(AtomicUsize::new(0));
    let woken = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let (word, arrived, woken) = (word.clone(), arrived.clone(), woken.clone());
            spawn(move || {
                arrived.fetch_add(1, Ordering::SeqCst);
                let _ = futex_wait(&word, 0, None, FUTEX_PRIVATE_FLAG);
                woken.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect::<Result<_, _>>()?;
    while arrived.load(Ordering::SeqCst) < 3 {
        sched_yield();
    }
    // A waker cannot tell whether a thread has reached FUTEX_WAIT yet, so
    // wake one at a time until one wakes; it must wake exactly one. A
    // count of -1 (u32::MAX, as some callers pass for "all") is Linux's
    // int -1, which wakes one too.
    let deadline = monotonic_nanos() + 5_000_000_000;
    let mut total = 0;
    for (count, want) in [(1, 1), (-1, 2)] {
        while total < want && monotonic_nanos() < deadline {
            let n = futex_wake(&word, count, FUTEX_PRIVATE_FLAG)?;
            check!(n <= 1, "FUTEX_WAKE of {count} woke {n}");
            total += n;
            sched_yield();
        }
        check_eq!(total, want);
        sleep(Duration::from_millis(20));
        check_eq!(woken.load(Ordering::SeqCst), want);
    }
    // Then the rest at once.
    while total < 3 && monotonic_nanos() < deadline {
        total += futex_wake(&word, i32::MAX, FUTEX_PRIVATE_FLAG)?;
        sched_yield();
    }
    check_eq!(total, 3);
    for h in handles {
        h.join();
    }
    check_eq!(woken.load(Ordering::SeqCst), 3);
    Ok(())
}

fn futex_shared_across_fork() -> TestResult {
    // SAFETY: a new mapping the kernel places.
    let page = unsafe {
        mmap(
            0,
            PAGE_SIZE,
            PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS,
            -1,
            0,
        )
    }?;
    // SAFETY: page is a live shared mapping, aligned for a u32.
    let word = unsafe { AtomicU32::from_ptr(page as *mut u32) };
    let pid = fork()?;
    if pid == 0 {
        sleep(Duration::from_millis(30));
        word.store(1, Ordering::SeqCst);
        // Not private: the waiter is another process.
        let woke = futex_wake(word, 1, 0).unwrap_or(99);
        exit_group(woke as i32);
    }
    let timeout = Timespec::from(Duration::from_secs(5));
    let waited = futex_wait(word, 0, Some(&timeout), 0);
    let status = wait_for(pid)?;
    match waited {
        // We slept and the child's wake woke us.
        Ok(()) => check_eq!(status.exit_code(), Some(1)),
        // The child was first; nothing to wake.
        Err(Errno::EAGAIN) => check_eq!(status.exit_code(), Some(0)),
        Err(errno) => return Err(errno.into()),
    }
    check_eq!(word.load(Ordering::SeqCst), 1);
    Ok(())
}

fn tls_register_is_per_thread() -> TestResult {
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            spawn(|| {
                let first = tls_register();
                for _ in 0..200 {
                    sched_yield();
                    if tls_register() != first {
                        return Err(first);
                    }
                }
                Ok(first)
            })
        })
        .collect::<Result<_, _>>()?;
    let mut seen = Vec::new();
    for h in handles {
        let want = h.tls();
        match h.join() {
            Some(Ok(got)) => check_eq!(got, want),
            Some(Err(first)) => check!(false, "TPIDR_EL0 changed from {first:#x}"),
            None => check!(false, "thread died"),
        }
        seen.push(want);
    }
    seen.sort();
    seen.dedup();
    check_eq!(seen.len(), THREADS);
    Ok(())
}

/// Sets the calling thread's TPIDR_EL0, which EL0 may write.
fn set_tls_register(value: usize) {
    // SAFETY: ulib keeps nothing in TPIDR_EL0 for the main thread.
    unsafe { asm!("msr tpidr_el0, {}", in(reg) value, options(nomem, nostack)) };
}

fn tls_register_survives_fork_and_syscalls() -> TestResult {
    set_tls_register(0x1234_5678_9abc_def0);
    sched_yield();
    sleep(Duration::from_millis(5));
    check_eq!(tls_register(), 0x1234_5678_9abc_def0);
    let status = in_child(|| (tls_register() != 0x1234_5678_9abc_def0) as i32)?;
    check_eq!(status.exit_code(), Some(0));
    check_eq!(tls_register(), 0x1234_5678_9abc_def0);
    Ok(())
}

/// Loads v0..v31 from `values`, yields `rounds` times in a loop (so the
/// kernel switches to other threads), and stores v0..v31 into `out`. FPCR
/// is set to `fpcr` for the loop and its value at the end is returned.
fn hold_fp_registers(values: &[u8; 512], out: &mut [u8; 512], rounds: usize, fpcr: usize) -> usize {
    let end_fpcr: usize;
    // SAFETY: the block only uses the declared registers and the two
    // 512-byte buffers; it restores FPCR to the value it read.
    unsafe {
        asm!(
            "mrs x10, fpcr",
            "msr fpcr, {fpcr}",
            "ld1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{src}], #64",
            "ld1 {{v4.16b, v5.16b, v6.16b, v7.16b}}, [{src}], #64",
            "ld1 {{v8.16b, v9.16b, v10.16b, v11.16b}}, [{src}], #64",
            "ld1 {{v12.16b, v13.16b, v14.16b, v15.16b}}, [{src}], #64",
            "ld1 {{v16.16b, v17.16b, v18.16b, v19.16b}}, [{src}], #64",
            "ld1 {{v20.16b, v21.16b, v22.16b, v23.16b}}, [{src}], #64",
            "ld1 {{v24.16b, v25.16b, v26.16b, v27.16b}}, [{src}], #64",
            "ld1 {{v28.16b, v29.16b, v30.16b, v31.16b}}, [{src}], #64",
            "2:",
            "mov x8, #{sched_yield}",
            "svc #0",
            "subs {rounds}, {rounds}, #1",
            "b.ne 2b",
            "mrs {fpcr}, fpcr",
            "msr fpcr, x10",
            "st1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{dst}], #64",
            "st1 {{v4.16b, v5.16b, v6.16b, v7.16b}}, [{dst}], #64",
            "st1 {{v8.16b, v9.16b, v10.16b, v11.16b}}, [{dst}], #64",
            "st1 {{v12.16b, v13.16b, v14.16b, v15.16b}}, [{dst}], #64",
            "st1 {{v16.16b, v17.16b, v18.16b, v19.16b}}, [{dst}], #64",
            "st1 {{v20.16b, v21.16b, v22.16b, v23.16b}}, [{dst}], #64",
            "st1 {{v24.16b, v25.16b, v26.16b, v27.16b}}, [{dst}], #64",
            "st1 {{v28.16b, v29.16b, v30.16b, v31.16b}}, [{dst}], #64",
            src = inout(reg) values.as_ptr() => _,
            dst = inout(reg) out.as_mut_ptr() => _,
            rounds = inout(reg) rounds => _,
            fpcr = inout(reg) fpcr => end_fpcr,
            sched_yield = const ulib::sys::__NR_sched_yield,
            out("x0") _, out("x8") _, out("x10") _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _,
            out("v5") _, out("v6") _, out("v7") _, out("v8") _, out("v9") _,
            out("v10") _, out("v11") _, out("v12") _, out("v13") _, out("v14") _,
            out("v15") _, out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _, out("v24") _,
            out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
            out("v30") _, out("v31") _,
        );
    }
    end_fpcr
}

fn fp_simd_registers_are_per_thread() -> TestResult {
    // Each thread (and the main one) holds its own values in all 32
    // vector registers and its own FPCR rounding mode while yielding.
    let run = |seed: usize| {
        let values: [u8; 512] = core::array::from_fn(|i| pattern(i * 13 + seed * 101));
        let mut out = [0u8; 512];
        let fpcr = (seed % 4) << 22;
        let end_fpcr = hold_fp_registers(&values, &mut out, 300, fpcr);
        values == out && end_fpcr == fpcr
    };
    let handles: Vec<_> = (1..=THREADS)
        .map(|seed| spawn(move || run(seed)))
        .collect::<Result<_, _>>()?;
    let main_ok = run(0);
    for (i, h) in handles.into_iter().enumerate() {
        check!(h.join() == Some(true), "thread {i}: FP/SIMD state changed");
    }
    check!(main_ok, "main thread: FP/SIMD state changed");
    Ok(())
}

/// The main thread exit(2)s with 7 while another thread runs on and then
/// exits with 0: the parent is told 0, the status of the thread that left
/// last (Linux: `synchronize_group_exit`).
fn the_last_threads_exit_status_is_the_processs() -> TestResult {
    let status = in_child(|| {
        let spawned = spawn(|| {
            sleep(Duration::from_millis(50));
            exit(0)
        });
        match spawned {
            Ok(_) => exit(7),
            Err(_) => 2,
        }
    })?;
    check_eq!(status.exit_code(), Some(0));
    Ok(())
}
