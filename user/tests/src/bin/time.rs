//! Clocks, sleeping and whole-system calls: clock_gettime, nanosleep,
//! clock_nanosleep, uname, getrandom, reboot.
#![no_std]
#![no_main]

extern crate alloc;

use ulib::time::*;
use ulib::test::TestResult;
use ulib::{check, check_err};
use ulib::Errno;

ulib::tests!(monotonic_increases, clock_gettime_bad_pointer);

fn monotonic_increases() -> TestResult {
    let a = clock_gettime(CLOCK_MONOTONIC)?;
    let b = clock_gettime(CLOCK_MONOTONIC)?;
    check!(b >= a);
    Ok(())
}

fn clock_gettime_bad_pointer() -> TestResult {
    // SAFETY: the kernel must refuse the unmapped address.
    check_err!(unsafe { ulib::syscall!(ulib::sys::SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, 0x10) }, Errno::EFAULT);
    Ok(())
}
