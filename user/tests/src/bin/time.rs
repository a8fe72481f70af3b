//! Time tests: clock_gettime on the monotonic, boot-time and real-time
//! clocks, nanosleep and clock_nanosleep (relative and absolute), and the
//! errors for bad clocks, bad times and bad pointers.
#![no_std]
#![no_main]

extern crate alloc;

use core::time::Duration;
use ulib::sys::*;
use ulib::syscall;
use ulib::test::TestResult;
use ulib::time::*;
use ulib::{check, check_err, fail, Errno};

ulib::tests!(
    monotonic_never_goes_back,
    monotonic_advances,
    realtime_and_boottime,
    clock_gettime_errors,
    nanosleep_sleeps_long_enough,
    nanosleep_zero_returns,
    nanosleep_errors,
    clock_nanosleep_relative,
    clock_nanosleep_absolute,
    clock_nanosleep_errors,
);

const MS: i128 = 1_000_000;

fn monotonic_never_goes_back() -> TestResult {
    let mut last = clock_gettime(CLOCK_MONOTONIC)?;
    for _ in 0..10_000 {
        let now = clock_gettime(CLOCK_MONOTONIC)?;
        check!(now >= last, "{now:?} < {last:?}");
        check!((0..1_000_000_000).contains(&now.tv_nsec), "{now:?}");
        last = now;
    }
    Ok(())
}

fn monotonic_advances() -> TestResult {
    // The clock ticks finer than a millisecond: some pair of back-to-back
    // reads sees it move by less than 1 ms (one pair could be split by
    // preemption, not all of them).
    let mut last = clock_gettime(CLOCK_MONOTONIC)?.as_nanos();
    let mut smallest = i128::MAX;
    for _ in 0..100_000 {
        let now = clock_gettime(CLOCK_MONOTONIC)?.as_nanos();
        if now > last {
            smallest = smallest.min(now - last);
            if smallest < MS {
                return Ok(());
            }
        }
        last = now;
    }
    fail!("smallest CLOCK_MONOTONIC step in 100000 reads: {smallest} ns")
}

fn realtime_and_boottime() -> TestResult {
    let boot = clock_gettime(CLOCK_BOOTTIME)?;
    let mono = clock_gettime(CLOCK_MONOTONIC)?;
    check!(
        boot.as_nanos() + 10 * MS >= mono.as_nanos(),
        "boottime {boot:?} < monotonic {mono:?}"
    );
    let a = clock_gettime(CLOCK_REALTIME)?;
    sleep(Duration::from_millis(20));
    let b = clock_gettime(CLOCK_REALTIME)?;
    check!((0..1_000_000_000).contains(&a.tv_nsec));
    let step = b.as_nanos() - a.as_nanos();
    check!(
        (15 * MS..10_000 * MS).contains(&step),
        "realtime moved {step} ns in 20 ms"
    );
    Ok(())
}

fn clock_gettime_errors() -> TestResult {
    check_err!(clock_gettime(999), Errno::EINVAL);
    // SAFETY: the kernel must refuse the bad address.
    unsafe {
        check_err!(
            syscall!(__NR_clock_gettime, CLOCK_MONOTONIC, 0x10),
            Errno::EFAULT
        );
        check_err!(
            syscall!(__NR_clock_gettime, CLOCK_REALTIME, 0x10),
            Errno::EFAULT
        );
    }
    Ok(())
}

fn nanosleep_sleeps_long_enough() -> TestResult {
    for ms in [1, 20, 50] {
        let start = monotonic_nanos();
        nanosleep(&Duration::from_millis(ms).into())?;
        let slept = monotonic_nanos() - start;
        check!(slept >= ms as i128 * MS, "asked {ms} ms, slept {slept} ns");
        check!(
            slept < ms as i128 * MS + 2_000 * MS,
            "asked {ms} ms, slept {slept} ns"
        );
    }
    Ok(())
}

fn nanosleep_zero_returns() -> TestResult {
    let start = monotonic_nanos();
    nanosleep(&Timespec::default())?;
    check!(monotonic_nanos() - start < 1_000 * MS);
    Ok(())
}

fn nanosleep_errors() -> TestResult {
    for bad in [
        Timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000_000,
        },
        Timespec {
            tv_sec: 0,
            tv_nsec: -1,
        },
        Timespec {
            tv_sec: -1,
            tv_nsec: 0,
        },
    ] {
        check_err!(nanosleep(&bad), Errno::EINVAL);
    }
    Ok(())
}

fn clock_nanosleep_relative() -> TestResult {
    let start = monotonic_nanos();
    clock_nanosleep(CLOCK_MONOTONIC, 0, &Duration::from_millis(15).into())?;
    check!(monotonic_nanos() - start >= 15 * MS);
    Ok(())
}

fn clock_nanosleep_absolute() -> TestResult {
    let now = clock_gettime(CLOCK_MONOTONIC)?;
    let deadline = Timespec {
        tv_sec: now.tv_sec + (now.tv_nsec + 20_000_000) / 1_000_000_000,
        tv_nsec: (now.tv_nsec + 20_000_000) % 1_000_000_000,
    };
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline)?;
    let woke = clock_gettime(CLOCK_MONOTONIC)?;
    check!(woke >= deadline, "woke at {woke:?}, deadline {deadline:?}");
    // A deadline in the past returns at once.
    let start = monotonic_nanos();
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &now)?;
    check!(monotonic_nanos() - start < 1_000 * MS);
    Ok(())
}

fn clock_nanosleep_errors() -> TestResult {
    let ms = Timespec::from(Duration::from_millis(1));
    check_err!(clock_nanosleep(999, 0, &ms), Errno::EINVAL);
    let bad = Timespec {
        tv_sec: 0,
        tv_nsec: 2_000_000_000,
    };
    check_err!(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad), Errno::EINVAL);
    Ok(())
}
