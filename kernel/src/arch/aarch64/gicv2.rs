//! GICv2 distributor and CPU interface, the default interrupt controller of
//! QEMU `virt` (Arm GIC Architecture Specification v2, IHI 0048B, 4.3-4.4).
//! Linux: `drivers/irqchip/irq-gic.c`.

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::registers::{ReadOnly, ReadWrite, WriteOnly};
use tock_registers::{register_bitfields, register_structs};

register_bitfields! [u32,
    /// GICD_SGIR (IHI 0048B 4.3.15).
    SGIR [
        /// Which CPUs get the SGI: those in CPU_TARGET_LIST, all but the sender,
        /// or the sender alone.
        TARGET_LIST_FILTER OFFSET(24) NUMBITS(2) [List = 0, AllOthers = 1, SelfOnly = 2],
        /// One bit per CPU interface 0-7, for the `List` filter.
        CPU_TARGET_LIST OFFSET(16) NUMBITS(8) [],
        /// The SGI to send, 0-15.
        INTID OFFSET(0) NUMBITS(4) []
    ]
];

register_structs! {
    /// GICD_*, the distributor's registers (IHI 0048B 4.3), one block all CPUs
    /// share; the SGI and PPI parts are banked per CPU.
    Distributor {
        /// GICD_CTLR: bit 0 enables forwarding interrupts to the CPU interfaces.
        (0x000 => ctlr: ReadWrite<u32>),
        (0x004 => _r0),
        /// GICD_ISENABLERn: writing 1 to bit n % 32 of register n / 32 enables
        /// INTID n; zeros are ignored.
        (0x100 => isenabler: [ReadWrite<u32>; 32]),
        (0x180 => _r1),
        /// GICD_IPRIORITYRn: one priority byte per INTID, four to a register;
        /// lower values are more urgent.
        (0x400 => ipriorityr: [ReadWrite<u32>; 255]),
        (0x7fc => _r2),
        /// GICD_ITARGETSRn: one byte per INTID, the CPU interfaces an SPI goes to;
        /// for SGIs and PPIs read-only and banked, naming the reader.
        (0x800 => itargetsr: [ReadWrite<u32>; 255]),
        (0xbfc => _r3),
        /// GICD_SGIR: a write sends an SGI.
        (0xf00 => sgir: WriteOnly<u32, SGIR::Register>),
        (0xf04 => @END),
    },
    /// GICC_*, the CPU interface's registers (IHI 0048B 4.4), banked: each CPU
    /// reaches its own at the same address.
    CpuInterface {
        /// GICC_CTLR: bit 0 enables signalling interrupts to this CPU.
        (0x000 => ctlr: ReadWrite<u32>),
        /// GICC_PMR, the priority mask: only interrupts more urgent (lower) than
        /// it are signalled.
        (0x004 => pmr: ReadWrite<u32>),
        /// GICC_BPR, the binary point: how a priority splits into the group
        /// priority that preempts and a subpriority.
        (0x008 => bpr: ReadWrite<u32>),
        /// GICC_IAR: a read acknowledges the most urgent pending interrupt and
        /// returns its INTID (1023: none).
        (0x00c => iar: ReadOnly<u32>),
        /// GICC_EOIR: writing an IAR value back ends that interrupt.
        (0x010 => eoir: WriteOnly<u32>),
        (0x014 => @END),
    }
}

/// IAR value meaning "no pending interrupt".
const SPURIOUS: u32 = 1023;

/// A GICv2 (Linux: `struct gic_chip_data` in `irq-gic.c`): the distributor
/// all CPUs share, and the CPU interface, banked per CPU at one address.
pub struct GicV2 {
    /// GICD_*, the distributor: enables, prioritises and routes interrupts.
    dist: &'static Distributor,
    /// GICC_*, the CPU interface: each CPU reaches its own bank here.
    cpu: &'static CpuInterface,
}

// SAFETY: the registers are MMIO; the ones shared between CPUs (GICD) are
// written only during boot or are write-to-act (SGIR), and the per-CPU ones
// are banked, so concurrent use from several CPUs is what the GIC expects.
unsafe impl Sync for GicV2 {}
// SAFETY: the MMIO addresses are the same from every CPU.
unsafe impl Send for GicV2 {}

impl GicV2 {
    /// # Safety
    /// The addresses must be the mapped distributor and CPU interface.
    pub unsafe fn new(dist: usize, cpu: usize) -> Self {
        // SAFETY: per the caller, these are the devices' register blocks.
        unsafe {
            GicV2 {
                dist: &*(dist as *const Distributor),
                cpu: &*(cpu as *const CpuInterface),
            }
        }
    }

    /// Turns the distributor on (GICD_CTLR bit 0), so it forwards pending
    /// interrupts to the CPU interfaces (Linux: `gic_dist_init`).
    pub fn init_distributor(&self) {
        self.dist.ctlr.set(1);
    }

    /// Sets up this CPU's interface (Linux: `gic_cpu_init`): priority mask
    /// 0xff lets every priority through, binary point 0, then GICC_CTLR bit 0
    /// enables signalling to the CPU.
    pub fn init_cpu_interface(&self) {
        self.cpu.pmr.set(0xff);
        self.cpu.bpr.set(0);
        self.cpu.ctlr.set(1);
    }

    /// Enables a private interrupt (SGI/PPI, banked per CPU) on this CPU.
    pub fn enable_private(&self, intid: u32) {
        let reg = (intid / 4) as usize;
        let shift = (intid % 4) * 8;
        let prio = self.dist.ipriorityr[reg].get() & !(0xff << shift);
        self.dist.ipriorityr[reg].set(prio | (0x80 << shift));
        self.dist.isenabler[(intid / 32) as usize].set(1 << (intid % 32));
    }

    /// Enables a shared interrupt (SPI) and sends it to the CPUs in
    /// `target_mask` (GICD_ITARGETSR, one byte per INTID).
    pub fn enable_shared(&self, intid: u32, target_mask: u32) {
        let reg = (intid / 4) as usize;
        let shift = (intid % 4) * 8;
        let prio = self.dist.ipriorityr[reg].get() & !(0xff << shift);
        self.dist.ipriorityr[reg].set(prio | (0x80 << shift));
        let targets = self.dist.itargetsr[reg].get() & !(0xff << shift);
        self.dist.itargetsr[reg].set(targets | ((target_mask & 0xff) << shift));
        self.dist.isenabler[(intid / 32) as usize].set(1 << (intid % 32));
    }

    /// This CPU's bit in SGI target lists: ITARGETSR0 is banked and reads
    /// back the caller's own CPU-interface mask.
    pub fn this_cpu_target(&self) -> u32 {
        self.dist.itargetsr[0].get() & 0xff
    }

    /// Reads GICC_IAR, acknowledging the highest-priority pending interrupt;
    /// the raw IAR (INTID in bits 9:0, an SGI's source CPU in bits 12:10), or
    /// None for the spurious INTID 1023.
    pub fn ack(&self) -> Option<u32> {
        let iar = self.cpu.iar.get();
        let intid = iar & 0x3ff;
        (intid != SPURIOUS).then_some(iar)
    }

    /// Writes the IAR value `ack` returned to GICC_EOIR: the interrupt is no
    /// longer active and may be signalled again.
    pub fn eoi(&self, iar: u32) {
        self.cpu.eoir.set(iar);
    }

    /// Sends SGI `intid` (0-15) to the CPU interfaces in `target_mask`, one bit
    /// each, through GICD_SGIR (Linux: `gic_ipi_send_mask`).
    pub fn send_sgi(&self, target_mask: u32, intid: u32) {
        self.dist.sgir.write(
            SGIR::TARGET_LIST_FILTER::List
                + SGIR::CPU_TARGET_LIST.val(target_mask)
                + SGIR::INTID.val(intid),
        );
    }
}
