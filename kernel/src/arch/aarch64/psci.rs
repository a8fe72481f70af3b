//! PSCI calls to firmware: start a CPU, power the machine off (Arm Power
//! State Coordination Interface, DEN0022; SMC Calling Convention DEN0028),
//! made through the smccc crate. Linux: `drivers/firmware/psci/psci.c`.

use core::sync::atomic::{AtomicBool, Ordering};

use smccc::psci;
use smccc::{Hvc, Smc};

use crate::dtb::PsciConduit;
use crate::mm::addr::PhysAddr;

pub use smccc::psci::Error;

/// Whether the DTB's PSCI node says `method = "smc"` (firmware at EL3)
/// rather than "hvc" (QEMU's own PSCI, or a hypervisor at EL2).
static USE_SMC: AtomicBool = AtomicBool::new(false);

/// Records the conduit the DTB names, SMC or HVC, for every later call;
/// called before any of them (Linux: `get_set_conduit_method`).
pub fn init(conduit: PsciConduit) {
    USE_SMC.store(conduit == PsciConduit::Smc, Ordering::Relaxed);
}

/// Starts the CPU with affinity `mpidr` at physical `entry` with x0 = `context`.
pub fn cpu_on(mpidr: u64, entry: PhysAddr, context: u64) -> Result<(), Error> {
    if USE_SMC.load(Ordering::Relaxed) {
        psci::cpu_on::<Smc>(mpidr, entry.0, context)
    } else {
        psci::cpu_on::<Hvc>(mpidr, entry.0, context)
    }
}

/// Powers the machine off; QEMU exits with status 0.
pub fn system_off() -> ! {
    // Only a failed call returns, and there is nothing to do then but idle.
    let _ = if USE_SMC.load(Ordering::Relaxed) {
        psci::system_off::<Smc>()
    } else {
        psci::system_off::<Hvc>()
    };
    loop {
        super::cpu::wait_for_interrupt();
    }
}
