//! Exceptions: a deliberate fault is taken, decoded and survived.

use super::{ensure, Test, TestResult};
use crate::arch::esr::{ExceptionClass, FaultStatus};
use crate::arch::trap::{probe_load, probe_store};

/// The exception tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "trap_unmapped_read_decoded",
        run: unmapped_read_decoded,
    },
    Test {
        name: "trap_unmapped_write_decoded",
        run: unmapped_write_decoded,
    },
    Test {
        name: "trap_user_half_unmapped_in_kernel",
        run: user_half_unmapped,
    },
];

/// In the kernel half but above the linear map: nothing is mapped here.
const HOLE: usize = 0xffff_f000_dead_b000;

/// A kernel read of an unmapped address is a same-EL data abort with a
/// translation fault, a read, and FAR = the address.
fn unmapped_read_decoded() -> TestResult {
    let f = probe_load(HOLE + 0x10)
        .err()
        .ok_or("read of a hole succeeded")?;
    ensure!(
        f.esr.class() == ExceptionClass::DataAbortSameEl,
        "class {:?}",
        f.esr.class()
    );
    ensure!(
        matches!(f.esr.fault_status(), Some(FaultStatus::Translation(_))),
        "status {:?}",
        f.esr.fault_status()
    );
    ensure!(!f.esr.is_write(), "read reported as write");
    ensure!(f.far == (HOLE + 0x10) as u64, "FAR {:#x}", f.far);
    Ok(())
}

/// A kernel write to an unmapped address is a same-EL data abort reported
/// as a write, with FAR = the address.
fn unmapped_write_decoded() -> TestResult {
    // SAFETY: the address is unmapped; the store can only fault.
    let f = unsafe { probe_store(HOLE + 0x28, 1) }
        .err()
        .ok_or("write to a hole succeeded")?;
    ensure!(
        f.esr.class() == ExceptionClass::DataAbortSameEl,
        "class {:?}",
        f.esr.class()
    );
    ensure!(f.esr.is_write(), "write reported as read");
    ensure!(f.far == (HOLE + 0x28) as u64, "FAR {:#x}", f.far);
    Ok(())
}

/// A kernel access to a low (TTBR0) address faults at level 0: the boot
/// identity map is gone and TTBR0 holds an empty table.
fn user_half_unmapped() -> TestResult {
    // TTBR0 holds an empty table once the kernel runs at its high address:
    // the boot identity map is gone, so the walk faults at level 0.
    let f = probe_load(0x4020_0000)
        .err()
        .ok_or("identity map still present")?;
    ensure!(
        f.esr.fault_status() == Some(FaultStatus::Translation(0)),
        "status {:?}",
        f.esr.fault_status()
    );
    Ok(())
}
