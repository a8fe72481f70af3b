//! User processes seen from the kernel: a real test program from the
//! initrd runs (forking, mapping, faulting, exiting) and every frame it
//! used comes back.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::{ensure, frames_in_use, Test, TestResult};
use crate::task::{self, exec};

/// The user process test, run last by `run_all`.
pub const TESTS: &[Test] = &[Test {
    name: "user_process_frames_all_come_back",
    run: frames_come_back,
}];

/// Runs `/bin/tests/mm` (anonymous, file and shared mappings, fork with
/// copy-on-write, munmap, mremap...) to the end; afterwards the frames in
/// use, page tables and kernel stacks included, are what they were.
fn frames_come_back() -> TestResult {
    if crate::fs::vfs::lookup(&crate::fs::vfs::root(), "/bin/tests/mm", true).is_err() {
        return Err("no /bin/tests/mm in the initrd".into());
    }
    task::msleep(30);
    let before = frames_in_use();
    let argv: Vec<Vec<u8>> = [b"/bin/tests/mm".to_vec()].into();
    let p =
        exec::spawn_process("/bin/tests/mm", &argv, &[]).map_err(|e| alloc::format!("{:?}", e))?;
    let mut waited = 0;
    while !p.zombie.load(Ordering::Acquire) {
        ensure!(waited < 120_000, "/bin/tests/mm still running after 120 s");
        task::msleep(20);
        waited += 20;
    }
    let status = p.exit_status.load(Ordering::Acquire);
    crate::task::process::forget_process(p.pid);
    drop(p);
    // Dead threads are freed at their CPU's next switch.
    task::msleep(50);
    ensure!(
        status == 0,
        "/bin/tests/mm exited with wait status {:#x}",
        status
    );
    let after = frames_in_use();
    ensure!(
        after == before,
        "frames in use {} before, {} after the process",
        before,
        after
    );
    Ok(())
}
