//! The interrupt controller front end: GICv2 or GICv3, whichever the DTB
//! describes, behind one small interface (ack, end, enable a per-CPU
//! interrupt, send an IPI).

use core::sync::atomic::{AtomicUsize, Ordering};

use spin::Once;

use super::gicv2::GicV2;
use super::gicv3::GicV3;
use crate::dtb::GicInfo;
use crate::mm::addr::phys_to_virt;

/// The interrupt controller the DTB describes, picked once at boot (Linux
/// probes the matching driver through `IRQCHIP_DECLARE`).
enum Gic {
    /// A GICv2: memory-mapped distributor and CPU interface (QEMU `virt`'s
    /// default).
    V2(GicV2),
    /// A GICv3: distributor, per-CPU redistributors and the ICC_* system
    /// register CPU interface (`-M virt,gic-version=3`).
    V3(GicV3),
}

/// The system's GIC, set by `init` on the boot CPU before any other CPU
/// starts.
static GIC: Once<Gic> = Once::new();

/// A CPU whose SGI target is not known yet: the initial value of every
/// `CPU_IF` slot (a const, as array repeat needs one).
#[allow(clippy::declare_interior_mutable_const)]
const NO_CPU_IF: AtomicUsize = AtomicUsize::new(0);
/// Each logical CPU's SGI target, indexed by CPU number; 0 until the CPU's
/// `init_this_cpu` publishes it. Only GICv2 IPIs read it: GICv3 targets a
/// CPU by MPIDR.
static CPU_IF: [AtomicUsize; crate::config::NR_CPUS] = [NO_CPU_IF; crate::config::NR_CPUS];

/// The GIC `init` set up; panics if called before.
fn gic() -> &'static Gic {
    GIC.get().expect("GIC used before gic::init")
}

/// Sets up the distributor (boot CPU, once).
pub fn init(info: &GicInfo) {
    let gic = GIC.call_once(|| match *info {
        GicInfo::V2 { dist, cpu_if } => {
            // SAFETY: the DTB's register ranges, reachable through the
            // linear map.
            let gic = unsafe { GicV2::new(phys_to_virt(dist.base), phys_to_virt(cpu_if.base)) };
            Gic::V2(gic)
        }
        GicInfo::V3 { dist, redist } => Gic::V3(
            // SAFETY: as for GICv2.
            unsafe {
                GicV3::new(
                    phys_to_virt(dist.base),
                    phys_to_virt(redist.base),
                    redist.size as usize,
                )
            },
        ),
    });
    match gic {
        Gic::V2(g) => g.init_distributor(),
        Gic::V3(g) => g.init_distributor(),
    }
}

/// Which GIC architecture is in use, 2 or 3 (for the boot banner).
pub fn version() -> u8 {
    match gic() {
        Gic::V2(_) => 2,
        Gic::V3(_) => 3,
    }
}

/// Sets up this CPU's interface and enables the private interrupts it uses.
pub fn init_this_cpu(cpu: usize, private_irqs: &[u32]) {
    let handle = match gic() {
        Gic::V2(g) => {
            g.init_cpu_interface();
            g.this_cpu_target() as usize
        }
        Gic::V3(g) => g.init_cpu_interface(super::cpu::mpidr()),
    };
    // Published before the CPU is marked online, so IPI senders see it.
    CPU_IF[cpu].store(handle, Ordering::Release);
    for &intid in private_irqs {
        match gic() {
            Gic::V2(g) => g.enable_private(intid),
            Gic::V3(g) => g.enable_private(handle, intid),
        }
    }
}

/// Enables shared peripheral interrupt `intid` and routes it to the
/// calling CPU (Linux: `gic_irq_enable` with the affinity set to it).
pub fn enable_spi(intid: u32) {
    match gic() {
        Gic::V2(g) => g.enable_shared(intid, g.this_cpu_target()),
        Gic::V3(g) => g.enable_shared(intid, super::cpu::mpidr()),
    }
}

/// An acknowledged interrupt: pass it back to `end_of_interrupt`.
pub struct Ack {
    /// The interrupt ID (INTID): 0-15 SGIs, 16-31 PPIs, 32-1019 SPIs.
    pub intid: u32,
    /// The IAR value as read, which the EOI write must repeat: on GICv2 it
    /// also holds an SGI's source CPU in bits 12:10.
    raw: u32,
}

/// Acknowledges the highest-priority interrupt pending for this CPU
/// (GICC_IAR or ICC_IAR1_EL1), making it active; None when there is none,
/// the spurious INTID 1023 (Linux: `gic_handle_irq`).
pub fn acknowledge() -> Option<Ack> {
    match gic() {
        Gic::V2(g) => g.ack().map(|raw| Ack {
            intid: raw & 0x3ff,
            raw,
        }),
        Gic::V3(g) => g.ack().map(|intid| Ack { intid, raw: intid }),
    }
}

/// Ends an interrupt `acknowledge` returned (GICC_EOIR or ICC_EOIR1_EL1):
/// it is no longer active and may be signalled again.
pub fn end_of_interrupt(ack: Ack) {
    match gic() {
        Gic::V2(g) => g.eoi(ack.raw),
        Gic::V3(g) => g.eoi(ack.raw),
    }
}

/// Sends software-generated interrupt `intid` to logical CPU `cpu`, whose
/// MPIDR is `mpidr`.
pub fn send_ipi(cpu: usize, mpidr: u64, intid: u32) {
    match gic() {
        Gic::V2(g) => g.send_sgi(CPU_IF[cpu].load(Ordering::Acquire) as u32, intid),
        Gic::V3(g) => g.send_sgi(mpidr, intid),
    }
}
