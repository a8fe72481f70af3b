//! PSCI calls to firmware: start a CPU, power the machine off (Arm Power
//! State Coordination Interface, DEN0022; SMC Calling Convention DEN0028).
//! Linux: `drivers/firmware/psci/psci.c`.

use core::arch::asm;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::dtb::PsciConduit;
use crate::mm::addr::PhysAddr;

const PSCI_CPU_ON: u64 = 0xc400_0003;
const PSCI_SYSTEM_OFF: u64 = 0x8400_0008;

static USE_SMC: AtomicBool = AtomicBool::new(false);

pub fn init(conduit: PsciConduit) {
    USE_SMC.store(conduit == PsciConduit::Smc, Ordering::Relaxed);
}

fn call(func: u64, a1: u64, a2: u64, a3: u64) -> i64 {
    let ret: i64;
    // SAFETY: an SMCCC call; firmware clobbers at most x0-x17.
    unsafe {
        if USE_SMC.load(Ordering::Relaxed) {
            asm!("smc #0", inout("x0") func => ret, inout("x1") a1 => _, inout("x2") a2 => _,
                 inout("x3") a3 => _, out("x4") _, out("x5") _, out("x6") _, out("x7") _,
                 out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
                 out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                 options(nostack));
        } else {
            asm!("hvc #0", inout("x0") func => ret, inout("x1") a1 => _, inout("x2") a2 => _,
                 inout("x3") a3 => _, out("x4") _, out("x5") _, out("x6") _, out("x7") _,
                 out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
                 out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                 options(nostack));
        }
    }
    ret
}

/// Starts the CPU with affinity `mpidr` at physical `entry` with x0 = `context`.
pub fn cpu_on(mpidr: u64, entry: PhysAddr, context: u64) -> Result<(), i64> {
    match call(PSCI_CPU_ON, mpidr, entry.0, context) {
        0 => Ok(()),
        err => Err(err),
    }
}

/// Powers the machine off; QEMU exits with status 0.
pub fn system_off() -> ! {
    call(PSCI_SYSTEM_OFF, 0, 0, 0);
    loop {
        super::cpu::wait_for_interrupt();
    }
}
