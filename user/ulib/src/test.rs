//! The test harness of the `/bin/tests/*` programs. [`tests!`](crate::tests!)
//! makes a program's main run each listed test in a forked child, so a test
//! that crashes or hangs cannot take the others down, and print:
//!
//! ```text
//! test <bin>::<name> ... ok
//! test <bin>::<name> ... FAILED: <why>
//! test <bin>::<name> ... skipped: <why>
//! <bin>: N passed, M failed            (", K skipped" added when K > 0)
//! ```
//!
//! The program exits 0 iff no test failed. A child reports through its exit
//! status (0 ok, 1 failed, 2 skipped) and, for the last two, a message on a
//! pipe. `<bin> --run NAME...` runs only the named tests; `<bin> --helper
//! NAME ARGS...` runs helper NAME instead, for tests that exec their own
//! program.

use crate::errno::Errno;
use crate::fs::*;
use crate::print::_print;
use crate::process::*;
use crate::signal::{kill, signal_name, SIGKILL};
use crate::time::{monotonic_nanos, nanosleep, Timespec};
use crate::Args;
use alloc::ffi::CString;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::CStr;
use core::fmt;
use core::panic::Location;
use core::sync::atomic::{AtomicI32, Ordering};
use core::time::Duration;

/// Why a test did not pass.
#[derive(Debug)]
pub enum TestError {
    Failed(String),
    /// The test does not apply here (a faultline-only interface on Linux).
    Skipped(String),
}

pub type TestResult = Result<(), TestError>;

/// `?` on a failed system call fails the test at the `?`.
impl From<Errno> for TestError {
    #[track_caller]
    fn from(errno: Errno) -> Self {
        let at = Location::caller();
        failed(at.file(), at.line(), format_args!("unexpected {errno}"))
    }
}

/// A failure message with its source location, for the check macros.
pub fn failed(file: &str, line: u32, why: fmt::Arguments) -> TestError {
    let file = file.rsplit('/').next().unwrap_or(file);
    TestError::Failed(format!("{file}:{line}: {why}"))
}

/// A skip with its reason, for [`skip!`](crate::skip!).
pub fn skipped(why: fmt::Arguments) -> TestError {
    TestError::Skipped(format!("{why}"))
}

/// One entry of a [`tests!`](crate::tests!) list.
pub struct Test {
    pub name: &'static str,
    pub run: fn() -> TestResult,
}

/// A program a test can start by exec'ing its own binary with
/// `--helper NAME ARGS...`; its return value is the exit status.
pub struct Helper {
    pub name: &'static str,
    pub run: fn(&[&str]) -> i32,
}

/// `tests!(a, b, c);` makes a program that runs tests `a`, `b`, `c` (each a
/// `fn() -> TestResult`). `tests!(tests: [a, b], helpers: [h]);` also
/// names helpers (`fn(&[&str]) -> i32`).
#[macro_export]
macro_rules! tests {
    ($($test:ident),* $(,)?) => {
        $crate::tests!(tests: [$($test),*], helpers: []);
    };
    (tests: [$($test:ident),* $(,)?], helpers: [$($helper:ident),* $(,)?] $(,)?) => {
        fn __ulib_tests_main(args: $crate::Args) -> i32 {
            $crate::test::run(
                env!("CARGO_BIN_NAME"),
                args,
                &[$($crate::test::Test { name: stringify!($test), run: $test }),*],
                &[$($crate::test::Helper { name: stringify!($helper), run: $helper }),*],
            )
        }
        $crate::entry!(__ulib_tests_main);
    };
}

/// Fails the test unless `cond` holds; an optional message replaces the
/// default one.
#[macro_export]
macro_rules! check {
    ($cond:expr $(,)?) => {
        if !$cond {
            return Err($crate::test::failed(
                file!(),
                line!(),
                format_args!("check failed: {}", stringify!($cond)),
            ));
        }
    };
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err($crate::test::failed(file!(), line!(), format_args!($($why)+)));
        }
    };
}

/// Fails the test unless `left == right`, showing both.
#[macro_export]
macro_rules! check_eq {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left != *right {
                    return Err($crate::test::failed(
                        file!(),
                        line!(),
                        format_args!(
                            "{} == {}: {:?} != {:?}",
                            stringify!($left),
                            stringify!($right),
                            left,
                            right
                        ),
                    ));
                }
            }
        }
    };
}

/// Fails the test unless `result` is `Err(errno)`.
#[macro_export]
macro_rules! check_err {
    ($result:expr, $errno:expr $(,)?) => {
        match $result {
            Err(e) if e == $errno => {}
            other => {
                return Err($crate::test::failed(
                    file!(),
                    line!(),
                    format_args!(
                        "{}: expected Err({:?}), got {:?}",
                        stringify!($result),
                        $errno,
                        other
                    ),
                ))
            }
        }
    };
}

/// Fails the test with a message.
#[macro_export]
macro_rules! fail {
    ($($why:tt)+) => {
        return Err($crate::test::failed(file!(), line!(), format_args!($($why)+)))
    };
}

/// Ends the test as skipped, with a reason.
#[macro_export]
macro_rules! skip {
    ($($why:tt)+) => {
        return Err($crate::test::skipped(format_args!($($why)+)))
    };
}

const EXIT_FAILED: i32 = 1;
const EXIT_SKIPPED: i32 = 2;
/// The exit status of a process that panicked.
pub const EXIT_PANIC: i32 = 101;

/// A test that has not finished by then is killed and fails.
const TIMEOUT: Duration = Duration::from_secs(30);

/// In a test's child process: the pipe for its failure message.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

/// Sends a panic message to the harness, when running as a test's child.
/// Returns false elsewhere.
pub(crate) fn report_panic(message: fmt::Arguments) -> bool {
    let fd = REPORT_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        _print(fd, message);
    }
    fd >= 0
}

/// The main of a test program; see the module documentation.
pub fn run(bin: &str, args: Args, tests: &[Test], helpers: &[Helper]) -> i32 {
    let args: Vec<&str> = args.collect();
    let mut only: &[&str] = &[];
    match args.get(1).copied() {
        Some("--helper") => return run_helper(bin, &args[2..], helpers),
        Some("--run") => {
            only = &args[2..];
            if let Some(name) = only.iter().find(|n| !tests.iter().any(|t| t.name == **n)) {
                crate::eprintln!("{bin}: no test named '{name}'");
                return EXIT_FAILED;
            }
        }
        _ => {}
    }
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for test in tests {
        if !only.is_empty() && !only.contains(&test.name) {
            continue;
        }
        match run_one(test) {
            Ok(()) => {
                passed += 1;
                crate::println!("test {bin}::{} ... ok", test.name);
            }
            Err(TestError::Failed(why)) => {
                failed += 1;
                crate::println!("test {bin}::{} ... FAILED: {why}", test.name);
            }
            Err(TestError::Skipped(why)) => {
                skipped += 1;
                crate::println!("test {bin}::{} ... skipped: {why}", test.name);
            }
        }
    }
    if skipped > 0 {
        crate::println!("{bin}: {passed} passed, {failed} failed, {skipped} skipped");
    } else {
        crate::println!("{bin}: {passed} passed, {failed} failed");
    }
    if failed == 0 {
        0
    } else {
        EXIT_FAILED
    }
}

/// `--helper NAME ARGS...`: runs helper NAME with ARGS.
fn run_helper(bin: &str, args: &[&str], helpers: &[Helper]) -> i32 {
    let name = args.first().copied().unwrap_or("");
    match helpers.iter().find(|h| h.name == name) {
        Some(helper) => (helper.run)(&args[1..]),
        None => {
            crate::eprintln!("{bin}: no helper named '{name}'");
            EXIT_FAILED
        }
    }
}

/// Runs one test in a child process and turns how it ended into a result.
fn run_one(test: &Test) -> TestResult {
    let [report_rd, report_wr] = pipe2(O_CLOEXEC | O_NONBLOCK)?;
    let pid = fork()?;
    if pid == 0 {
        let _ = close(report_rd);
        REPORT_FD.store(report_wr, Ordering::Relaxed);
        let code = match (test.run)() {
            Ok(()) => 0,
            Err(TestError::Failed(why)) => {
                _print(report_wr, format_args!("{why}"));
                EXIT_FAILED
            }
            Err(TestError::Skipped(why)) => {
                _print(report_wr, format_args!("{why}"));
                EXIT_SKIPPED
            }
        };
        exit_group(code);
    }
    let _ = close(report_wr);
    let status = wait_with_timeout(pid);
    let message = read_report(report_rd);
    let _ = close(report_rd);
    let status = status?;
    match (status.exit_code(), status.term_signal()) {
        (Some(0), _) => Ok(()),
        (Some(EXIT_FAILED), _) => Err(TestError::Failed(message)),
        (Some(EXIT_SKIPPED), _) => Err(TestError::Skipped(message)),
        (Some(EXIT_PANIC), _) => Err(TestError::Failed(message)),
        (_, Some(sig)) => Err(TestError::Failed(format!(
            "killed by signal {sig} ({})",
            signal_name(sig)
        ))),
        _ => Err(TestError::Failed(format!("{status:?} {message}"))),
    }
}

/// Waits for the test's child, killing it once it has run for TIMEOUT.
/// Polls with WNOHANG, napping 50 us at first and at most 10 ms.
fn wait_with_timeout(pid: i32) -> Result<WaitStatus, TestError> {
    let deadline = monotonic_nanos() + TIMEOUT.as_nanos() as i128;
    let mut nap = Duration::from_micros(50);
    loop {
        match wait4(pid, WNOHANG) {
            Ok((0, _)) | Err(Errno::EINTR) => {}
            Ok((_, status)) => return Ok(status),
            Err(errno) => return Err(errno.into()),
        }
        if monotonic_nanos() > deadline {
            let _ = kill(pid, SIGKILL);
            let _ = wait_for(pid);
            return Err(TestError::Failed(format!(
                "timed out after {} s",
                TIMEOUT.as_secs()
            )));
        }
        let _ = nanosleep(&Timespec::from(nap));
        nap = (nap * 2).min(Duration::from_millis(10));
    }
}

/// Whatever the child wrote to the report pipe, on one line.
fn read_report(fd: i32) -> String {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 512];
    while let Ok(n @ 1..) = read(fd, &mut buf) {
        bytes.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&bytes).trim().replace('\n', " ")
}

/// A scratch directory for one test, `/tmp/ulib-test.<pid>`, removed with
/// everything in it when dropped. /tmp is created if missing.
pub struct Scratch {
    dir: CString,
}

impl Scratch {
    pub fn new() -> Result<Scratch, Errno> {
        match mkdirat(AT_FDCWD, c"/tmp", 0o777) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(errno) => return Err(errno),
        }
        let dir = CString::new(format!("/tmp/ulib-test.{}", getpid())).unwrap();
        mkdirat(AT_FDCWD, &dir, 0o755)?;
        Ok(Scratch { dir })
    }

    /// The directory itself.
    pub fn dir(&self) -> &CStr {
        &self.dir
    }

    /// The path of `name` inside the directory.
    pub fn path(&self, name: &str) -> CString {
        CString::new(format!("{}/{name}", self.dir.to_str().unwrap())).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove_tree(AT_FDCWD, &self.dir);
    }
}

/// Removes `path` and, if it is a directory, everything below it.
fn remove_tree(dirfd: i32, path: &CStr) {
    match unlinkat(dirfd, path, 0) {
        Err(Errno::EISDIR) | Err(Errno::EPERM) => {}
        _ => return,
    }
    if let Ok(fd) = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) {
        let mut buf = [0u8; 1024];
        let mut names: Vec<CString> = Vec::new();
        while let Ok(n @ 1..) = getdents64(fd, &mut buf) {
            names.extend(
                dirents(&buf[..n])
                    .map(|d| d.name)
                    .filter(|name| *name != c"." && *name != c"..")
                    .map(CString::from),
            );
        }
        for name in names {
            remove_tree(fd, &name);
        }
        let _ = close(fd);
    }
    let _ = unlinkat(dirfd, path, AT_REMOVEDIR);
}
