//! GICv3 distributor, redistributors and system-register CPU interface
//! (`-M virt,gic-version=3`). Arm GICv3/v4 Architecture Specification
//! (IHI 0069), 12.9 (GICD), 12.10-12.11 (GICR), 12.2 (ICC_*).
//! Linux: `drivers/irqchip/irq-gic-v3.c`.
//!
//! The ICC_* CPU-interface registers are written with `asm!`: aarch64-cpu
//! has none of the EL1 ones used here (SRE, PMR, BPR1, IGRPEN1, IAR1,
//! EOIR1, SGI1R); barriers come from the crate.

use core::arch::asm;

use aarch64_cpu::asm::barrier;
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::registers::{ReadOnly, ReadWrite};
use tock_registers::{register_bitfields, register_structs};

register_bitfields! [u32,
    /// GICD_CTLR, non-secure view (IHI 0069 12.9.4).
    GICD_CTLR [
        /// Register Write Pending: a write to GICD_CTLR has not taken effect yet.
        RWP OFFSET(31) NUMBITS(1) [],
        /// Affinity routing for the non-secure state: SPIs go where
        /// GICD_IROUTER's MPIDR affinity says, not by target lists.
        ARE_NS OFFSET(4) NUMBITS(1) [],
        /// Enables non-secure group 1 interrupts, the group the kernel uses.
        ENABLE_GRP1A OFFSET(1) NUMBITS(1) []
    ],
    /// GICR_WAKER (IHI 0069 12.11.42).
    GICR_WAKER [
        /// ChildrenAsleep: the redistributor's interface to its CPU is quiescent;
        /// after a wake-up, wait for it to clear.
        CHILDREN_ASLEEP OFFSET(2) NUMBITS(1) [],
        /// ProcessorSleep: set while the CPU is asleep; clearing it wakes the
        /// redistributor.
        PROCESSOR_SLEEP OFFSET(1) NUMBITS(1) []
    ]
];

register_structs! {
    /// GICD_*, the distributor's registers (IHI 0069 12.9); with affinity
    /// routing it serves SPIs only, the redistributors SGIs and PPIs.
    Distributor {
        /// GICD_CTLR: affinity routing and the group enables.
        (0x0000 => ctlr: ReadWrite<u32, GICD_CTLR::Register>),
        (0x0004 => _r0),
        /// GICD_IGROUPRn: one bit per INTID; 1 = group 1, the kernel's.
        (0x0080 => igroupr: [ReadWrite<u32>; 32]),
        /// GICD_ISENABLERn: writing 1 to bit n % 32 of register n / 32 enables
        /// INTID n; zeros are ignored.
        (0x0100 => isenabler: [ReadWrite<u32>; 32]),
        (0x0180 => _r1),
        /// GICD_IPRIORITYRn: one priority byte per INTID, four to a register;
        /// lower values are more urgent.
        (0x0400 => ipriorityr: [ReadWrite<u32>; 255]),
        (0x07fc => _r2),
        /// GICD_IROUTERn: SPI n's target CPU as MPIDR affinity fields, indexed
        /// by INTID (entries 0-31 are reserved).
        (0x6000 => irouter: [ReadWrite<u64>; 1020]),
        (0x7fe0 => @END),
    },
    /// RD_base frame of one redistributor.
    RdBase {
        (0x0000 => _r0),
        /// GICR_TYPER: bits 63:32 the affinity of the CPU this redistributor
        /// serves; bit 4 (Last) marks the region's last redistributor.
        (0x0008 => typer: ReadOnly<u64>),
        (0x0010 => _r1),
        /// GICR_WAKER: puts the redistributor to sleep and wakes it.
        (0x0014 => waker: ReadWrite<u32, GICR_WAKER::Register>),
        (0x0018 => @END),
    },
    /// SGI_base frame (64K after RD_base): this CPU's SGIs and PPIs.
    SgiBase {
        (0x0000 => _r0),
        /// GICR_IGROUPR0: the group of each SGI and PPI (INTID 0-31); 1 = group 1.
        (0x0080 => igroupr0: ReadWrite<u32>),
        (0x0084 => _r1),
        /// GICR_ISENABLER0: writing 1 to bit n enables SGI or PPI n.
        (0x0100 => isenabler0: ReadWrite<u32>),
        (0x0104 => _r2),
        /// GICR_IPRIORITYRn: one priority byte per SGI and PPI; lower values are
        /// more urgent.
        (0x0400 => ipriorityr: [ReadWrite<u32>; 8]),
        (0x0420 => @END),
    }
}

/// Each GICv3 redistributor is two 64K frames.
const REDIST_STRIDE: usize = 0x2_0000;
/// GICR_TYPER.Last (bit 4): this is the last redistributor of the region.
const GICR_TYPER_LAST: u64 = 1 << 4;
/// ICC_IAR1_EL1's INTID when no interrupt is pending: the spurious INTID.
const SPURIOUS: u32 = 1023;

/// A GICv3 (Linux: `struct gic_chip_data` in `irq-gic-v3.c`): the
/// distributor, and the redistributor region each CPU finds its own in;
/// the CPU interface is system registers.
pub struct GicV3 {
    /// GICD_*, the distributor: enables, prioritises and routes SPIs.
    dist: &'static Distributor,
    /// Virtual address of the first redistributor's RD_base frame.
    redist_base: usize,
    /// Bytes of the redistributor region (from the DTB); the search for a
    /// CPU's redistributor stops at its end.
    redist_size: usize,
}

// SAFETY: the registers are MMIO; the ones shared between CPUs (GICD) are
// written only during boot or are write-to-act (SGIR), and the per-CPU ones
// are banked, so concurrent use from several CPUs is what the GIC expects.
unsafe impl Sync for GicV3 {}
// SAFETY: the MMIO addresses are the same from every CPU.
unsafe impl Send for GicV3 {}

impl GicV3 {
    /// # Safety
    /// The addresses must be the mapped distributor and redistributor region.
    pub unsafe fn new(dist: usize, redist_base: usize, redist_size: usize) -> Self {
        GicV3 {
            // SAFETY: per the caller.
            dist: unsafe { &*(dist as *const Distributor) },
            redist_base,
            redist_size,
        }
    }

    /// Enables affinity routing (ARE_NS) and non-secure group 1 interrupts,
    /// then waits for GICD_CTLR.RWP to clear, i.e. for the write to take
    /// effect (Linux: `gic_dist_init`).
    pub fn init_distributor(&self) {
        self.dist
            .ctlr
            .write(GICD_CTLR::ARE_NS::SET + GICD_CTLR::ENABLE_GRP1A::SET);
        while self.dist.ctlr.is_set(GICD_CTLR::RWP) {
            core::hint::spin_loop();
        }
    }

    /// Enables a shared interrupt (SPI) in group 1 and routes it to the CPU
    /// whose affinity is `mpidr` (GICD_IROUTER, IHI 0069 12.9.22).
    pub fn enable_shared(&self, intid: u32, mpidr: u64) {
        let i = intid as usize;
        // IROUTER keeps the affinity fields where MPIDR has them.
        self.dist.irouter[i].set(mpidr & 0xff_00ff_ffff);
        let group = self.dist.igroupr[i / 32].get();
        self.dist.igroupr[i / 32].set(group | 1 << (i % 32));
        let shift = (i % 4) * 8;
        let prio = self.dist.ipriorityr[i / 4].get() & !(0xff << shift);
        self.dist.ipriorityr[i / 4].set(prio | (0x80 << shift));
        self.dist.isenabler[i / 32].set(1 << (i % 32));
    }

    /// The redistributor whose GICR_TYPER affinity matches `mpidr`.
    fn redistributor(&self, mpidr: u64) -> Option<usize> {
        let aff = ((mpidr >> 8) & 0xff00_0000) | (mpidr & 0x00ff_ffff);
        let mut base = self.redist_base;
        while base + REDIST_STRIDE <= self.redist_base + self.redist_size {
            // SAFETY: base lies inside the mapped redistributor region.
            let rd = unsafe { &*(base as *const RdBase) };
            let typer = rd.typer.get();
            if typer >> 32 == aff {
                return Some(base);
            }
            if typer & GICR_TYPER_LAST != 0 {
                break;
            }
            base += REDIST_STRIDE;
        }
        None
    }

    /// Wakes this CPU's redistributor and enables the system-register CPU
    /// interface. Returns this CPU's SGI frame for enabling PPIs.
    pub fn init_cpu_interface(&self, mpidr: u64) -> usize {
        let base = self
            .redistributor(mpidr)
            .expect("no GICv3 redistributor for this CPU");
        // SAFETY: found by redistributor() inside the mapped region.
        let rd = unsafe { &*(base as *const RdBase) };
        rd.waker.write(GICR_WAKER::PROCESSOR_SLEEP::CLEAR);
        while rd.waker.is_set(GICR_WAKER::CHILDREN_ASLEEP) {
            core::hint::spin_loop();
        }
        let sgi_base = base + 0x1_0000;
        // SAFETY: the SGI frame follows RD_base.
        let sgi = unsafe { &*(sgi_base as *const SgiBase) };
        sgi.igroupr0.set(0xffff_ffff);
        // SAFETY: ICC_* system registers; ICC_SRE_EL2.Enable was set in
        // boot.S when we came from EL2.
        unsafe {
            asm!(
                "mrs {t}, icc_sre_el1",
                "orr {t}, {t}, #1",
                "msr icc_sre_el1, {t}",
                t = out(reg) _,
                options(nostack)
            );
        }
        barrier::isb(barrier::SY);
        // SAFETY: as above; priority mask, binary point, group 1 enable.
        unsafe {
            asm!(
                "msr icc_pmr_el1, {pmr}",
                "msr icc_bpr1_el1, xzr",
                "msr icc_igrpen1_el1, {one}",
                pmr = in(reg) 0xffu64,
                one = in(reg) 1u64,
                options(nostack)
            );
        }
        barrier::isb(barrier::SY);
        sgi_base
    }

    /// Enables SGI or PPI `intid` (0-31) at priority 0x80 in the SGI frame
    /// `sgi_base` of this CPU's redistributor (GICR_IPRIORITYR,
    /// GICR_ISENABLER0).
    pub fn enable_private(&self, sgi_base: usize, intid: u32) {
        // SAFETY: sgi_base came from init_cpu_interface.
        let sgi = unsafe { &*(sgi_base as *const SgiBase) };
        let reg = (intid / 4) as usize;
        let shift = (intid % 4) * 8;
        let prio = sgi.ipriorityr[reg].get() & !(0xff << shift);
        sgi.ipriorityr[reg].set(prio | (0x80 << shift));
        sgi.isenabler0.set(1 << intid);
    }

    /// Reads ICC_IAR1_EL1, acknowledging the highest-priority pending group 1
    /// interrupt; its INTID, or None for the spurious INTID 1023.
    pub fn ack(&self) -> Option<u32> {
        let iar: u64;
        // SAFETY: acknowledges the highest-priority pending interrupt.
        unsafe { asm!("mrs {}, icc_iar1_el1", out(reg) iar, options(nostack)) };
        let intid = (iar & 0xff_ffff) as u32;
        (intid != SPURIOUS).then_some(intid)
    }

    /// Writes ICC_EOIR1_EL1 to end `intid`, the value `ack` returned: its
    /// priority is dropped and it may be signalled again.
    pub fn eoi(&self, intid: u32) {
        // SAFETY: ends the interrupt acknowledged by ack().
        unsafe { asm!("msr icc_eoir1_el1, {}", in(reg) intid as u64, options(nostack)) };
        barrier::isb(barrier::SY);
    }

    /// Sends SGI `intid` to the CPU with affinity `mpidr` (ICC_SGI1R_EL1).
    pub fn send_sgi(&self, mpidr: u64, intid: u32) {
        let aff0 = mpidr & 0xf;
        let aff1 = (mpidr >> 8) & 0xff;
        let aff2 = (mpidr >> 16) & 0xff;
        let aff3 = (mpidr >> 32) & 0xff;
        let v = (aff3 << 48) | (aff2 << 32) | ((intid as u64) << 24) | (aff1 << 16) | (1 << aff0);
        // Whatever the target is to see is visible before the interrupt.
        barrier::dsb(barrier::ISHST);
        // SAFETY: generates an SGI; no memory effects.
        unsafe { asm!("msr icc_sgi1r_el1, {}", in(reg) v, options(nostack)) };
        barrier::isb(barrier::SY);
    }
}
