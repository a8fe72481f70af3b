//! Raw system calls. On aarch64 Linux a program puts the number in x8 and
//! up to six arguments in x0..x5, then executes `svc #0`; the kernel returns
//! the result in x0 and preserves every other register. A result in
//! -4095..=-1 is a negated errno. Everything else in ulib is built on
//! [`raw`] through the [`syscall!`](crate::syscall!) macro.

use crate::errno::Errno;
use core::arch::asm;

/// Issues system call `nr` with six arguments and returns x0 unchanged.
///
/// # Safety
/// The kernel does whatever `nr` says with the arguments: it may write
/// through them as pointers, unmap memory Rust code is using, or end the
/// process. The caller must make the arguments valid for that call.
#[inline(always)]
pub unsafe fn raw(nr: usize, args: [usize; 6]) -> isize {
    let ret: isize;
    asm!(
        "svc #0",
        in("x8") nr,
        inlateout("x0") args[0] => ret,
        in("x1") args[1],
        in("x2") args[2],
        in("x3") args[3],
        in("x4") args[4],
        in("x5") args[5],
        options(nostack),
    );
    ret
}

/// Pads the arguments of a call with fewer than six to six, with zeros.
pub const fn args<const N: usize>(given: [usize; N]) -> [usize; 6] {
    let mut all = [0; 6];
    let mut i = 0;
    while i < N {
        all[i] = given[i];
        i += 1;
    }
    all
}

/// Splits a raw return value into a result and a negated errno.
pub fn check(ret: isize) -> Result<usize, Errno> {
    if (-4095..0).contains(&ret) {
        Err(Errno(-ret as i32))
    } else {
        Ok(ret as usize)
    }
}

/// `syscall!(__NR_x, a, b, ...)`: a system call with up to six arguments, each
/// cast to `usize`, returning `Result<usize, Errno>`. It expands to a call of
/// the unsafe [`raw`], so it must be used inside `unsafe`.
#[macro_export]
macro_rules! syscall {
    ($nr:expr $(, $arg:expr)* $(,)?) => {
        $crate::syscall::check($crate::syscall::raw(
            $nr,
            $crate::syscall::args([$($arg as usize),*]),
        ))
    };
}
