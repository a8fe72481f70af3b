//! In-kernel tests: what can only be checked on the (emulated) hardware —
//! the allocator on real RAM, the live kernel and user page tables (read
//! back with `AT`), exceptions, SMP and preemption. Pure logic is tested on
//! the host instead (`cargo test`). Booting with `ktest` on the command
//! line runs them all, one line each, ending with `N passed, N failed`.
//!
//! A test returns `Err(reason)` rather than panicking, so one failure does
//! not hide the rest.

use alloc::string::String;

mod frames;
mod fs;
mod pgtable;
mod sched;
mod string;
mod trap;
mod user;
mod user_pgtable;
mod vma_lock;

/// What a test returns: `Ok`, or `Err` with the reason it failed.
pub type TestResult = Result<(), String>;

/// Frames in use outside the kernel heap, whose slabs come and go as the
/// tests allocate: what a workload that gave everything back leaves the
/// same.
pub fn frames_in_use() -> usize {
    use crate::mm::{frame, heap};
    frame::total_pages() - frame::free_stats().free_pages - heap::pages()
}

/// `ensure!(cond, "why {}", x)`: fail the test with a message unless `cond`.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(alloc::format!($($msg)+));
        }
    };
}
pub(crate) use ensure;

/// One in-kernel test: a name for the `ktest NAME ... ok` line and the
/// function to run.
pub struct Test {
    /// Printed on the result line; prefixed by the subsystem it tests.
    pub name: &'static str,
    /// The test itself, run once on the thread `run_all` is called from.
    pub run: fn() -> TestResult,
}

/// Runs every test whose name contains `only` (every test, if None);
/// returns (passed, failed).
pub fn run_all(verbose: bool, only: Option<&str>) -> (usize, usize) {
    let suites: [&[Test]; 9] = [
        frames::TESTS,
        pgtable::TESTS,
        trap::TESTS,
        string::TESTS,
        sched::TESTS,
        fs::TESTS,
        user_pgtable::TESTS,
        vma_lock::TESTS,
        user::TESTS,
    ];
    let (mut passed, mut failed) = (0, 0);
    let chosen = |test: &&Test| only.is_none_or(|part| test.name.contains(part));
    for test in suites.iter().flat_map(|s| s.iter()).filter(chosen) {
        match (test.run)() {
            Ok(()) => {
                passed += 1;
                if verbose {
                    println!("ktest {} ... ok", test.name);
                }
            }
            Err(why) => {
                failed += 1;
                println!("ktest {} ... FAILED: {}", test.name, why);
            }
        }
    }
    (passed, failed)
}
