//! The interrupt controller front end: GICv2 or GICv3, whichever the DTB
//! describes, behind one small interface (ack, end, enable a per-CPU
//! interrupt, send an IPI).

use core::sync::atomic::{AtomicUsize, Ordering};

use spin::Once;

use super::gicv2::GicV2;
use super::gicv3::GicV3;
use crate::dtb::GicInfo;
use crate::mm::addr::phys_to_virt;

enum Gic {
    V2(GicV2),
    V3(GicV3),
}

static GIC: Once<Gic> = Once::new();

/// Per-CPU SGI target: the GICv2 CPU-interface mask, or the GICv3 SGI frame.
#[allow(clippy::declare_interior_mutable_const)]
const NO_CPU_IF: AtomicUsize = AtomicUsize::new(0);
static CPU_IF: [AtomicUsize; crate::config::NR_CPUS] = [NO_CPU_IF; crate::config::NR_CPUS];

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
    pub intid: u32,
    raw: u32,
}

pub fn acknowledge() -> Option<Ack> {
    match gic() {
        Gic::V2(g) => g.ack().map(|raw| Ack {
            intid: raw & 0x3ff,
            raw,
        }),
        Gic::V3(g) => g.ack().map(|intid| Ack { intid, raw: intid }),
    }
}

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
