//! Boot-time device tree parsing: turns the flattened device tree (DTB) that
//! QEMU hands the kernel in `x0` into a [`BootInfo`], and derives from it the
//! free physical memory the page allocator starts with (Linux: the
//! `early_init_dt_scan_*` functions of `drivers/of/fdt.c`, plus the memblock
//! bookkeeping `arm64_memblock_init()` does with their results).
//!
//! This runs before the kernel has a heap, so every list lives in a
//! fixed-capacity [`FixedVec`] inside `BootInfo`, and strings borrow the DTB.
//!
//! Where we simplify:
//! - Only what QEMU `virt` needs is read. Devices are found by `compatible`
//!   and their `reg` addresses are used as-is, with no `ranges` translation,
//!   because `virt` puts every device we use directly under `/`.
//! - The GIC, UART, timer and PSCI are required: on `virt` they are always
//!   there, and the kernel cannot run without them.
//! - `/reserved-memory` children that ask for a dynamic allocation (`size`
//!   without `reg`) are ignored; `no-map` is not distinguished from plain
//!   reservations.
//! - The `fdt` crate walks the tree, but it trusts the blob and panics on a
//!   malformed structure block. So [`parse`] first checks the whole blob,
//!   like libfdt's `fdt_check_full()`, and a bad DTB is an `Err`, never a
//!   panic. That check also rejects `FDT_NOP` tokens, which `fdt` 0.1.5
//!   skips in some places and not others; QEMU's DTBs contain none.
//!
//! The pieces: `check` (the blob validator and `total_size`), `nodes` (one
//! parser per node this kernel reads), `fixed_vec` (the lists), `memblock`
//! (the free RAM the page allocator starts with).

mod check;
mod fixed_vec;
mod memblock;
mod nodes;
#[cfg(test)]
mod tests;

use fdt::Fdt;

use crate::config::NR_CPUS;
use crate::mm::addr::PhysAddr;
use check::check_blob;
pub use check::total_size;
pub use fixed_vec::FixedVec;
use nodes::{
    child, parse_bootargs, parse_cpus, parse_gic, parse_initrd, parse_memory, parse_psci,
    parse_reserved, parse_timer, parse_uart, reg_entry, spi_intid, PL031_COMPATIBLE,
};

/// Most `/memory` regions kept; more are ignored (which only wastes RAM).
pub const MAX_MEM_REGIONS: usize = 8;
/// Most reserved regions accepted; more is an error, because ignoring one
/// would hand out memory that someone else owns.
pub const MAX_RESERVED_REGIONS: usize = 16;

/// Why a DTB could not be turned into a [`BootInfo`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DtbError {
    /// Shorter than the header, or than the header's `totalsize`.
    Truncated,
    /// Does not start with `0xd00dfeed`.
    BadMagic,
    /// A format version this parser does not read.
    BadVersion,
    /// The header's offsets and sizes point outside the blob, or the
    /// `/memreserve/` list has no terminating entry.
    BadHeader,
    /// The structure block is malformed: unknown token, unbalanced nodes,
    /// a name or value running past the block, and so on.
    BadStructure,
    /// No `device_type = "memory"` node with a non-empty `reg`.
    NoMemory,
    /// No `/cpus/cpu@N` node.
    NoCpus,
    /// No node compatible with `arm,psci*`.
    NoPsci,
    /// No GICv2 or GICv3 node.
    NoGic,
    /// No PL011 UART node.
    NoUart,
    /// No `arm,armv8-timer` node.
    NoTimer,
    /// More reserved regions than [`MAX_RESERVED_REGIONS`].
    TooManyReserved,
    /// The named property is missing or malformed on a node that must have it.
    BadProperty(&'static str),
}

/// A range of physical memory, as a device tree `reg` entry describes it
/// (Linux: `struct memblock_region`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRegion {
    /// First byte of the region.
    pub base: PhysAddr,
    /// Length in bytes.
    pub size: u64,
}

impl MemRegion {
    /// First address past the region. A DTB can claim a region running off
    /// the top of the address space; it is cut off there.
    pub fn end(&self) -> PhysAddr {
        PhysAddr(self.base.0.saturating_add(self.size))
    }
}

/// How to call PSCI firmware (Linux: `enum arm_smccc_conduit`): `hvc` when
/// a hypervisor sits at EL2 (QEMU's default), `smc` when the firmware runs
/// at EL3 or QEMU emulates EL2 itself (`virtualization=on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsciConduit {
    /// `hvc #0`: the call traps to the hypervisor at EL2.
    Hvc,
    /// `smc #0`: the call traps to the secure monitor at EL3.
    Smc,
}

/// Where the interrupt controller's registers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GicInfo {
    /// GICv2: the distributor (GICD) and the per-CPU interface (GICC), which
    /// is memory-mapped and banked per CPU.
    V2 {
        /// The distributor (GICD): routing and enabling of shared interrupts.
        dist: MemRegion,
        /// The CPU interface (GICC): acknowledge and end-of-interrupt.
        cpu_if: MemRegion,
    },
    /// GICv3: the distributor and the first redistributor region (GICR),
    /// one 128K frame per CPU laid end to end. The CPU interface is system
    /// registers, so it has no address.
    V3 {
        /// The distributor (GICD): routing and enabling of shared interrupts.
        dist: MemRegion,
        /// The redistributors (GICR), one 128K frame per CPU.
        redist: MemRegion,
    },
}

/// Everything the kernel learns from the device tree at boot.
#[derive(Clone, Copy, Debug)]
pub struct BootInfo<'a> {
    /// RAM from the `/memory` nodes, sorted by address, overlaps merged.
    pub memory: FixedVec<MemRegion, MAX_MEM_REGIONS>,
    /// Memory never to be handed out: the DTB's `/memreserve/` entries and
    /// the `/reserved-memory` children that have a `reg`.
    pub reserved: FixedVec<MemRegion, MAX_RESERVED_REGIONS>,
    /// The initial ramdisk the bootloader loaded, if any.
    pub initrd: Option<MemRegion>,
    /// `/chosen/bootargs`: the kernel command line, `""` if there is none.
    pub bootargs: &'a str,
    /// How to call PSCI firmware to start CPUs and power off.
    pub psci: PsciConduit,
    /// Where the interrupt controller's registers are, and which version it is.
    pub gic: GicInfo,
    /// The PL011 UART registers; the one `/chosen/stdout-path` names if it
    /// names a PL011, otherwise the first in the tree.
    pub uart: MemRegion,
    /// The PL031 real-time clock's registers, if the machine has one.
    pub rtc: Option<MemRegion>,
    /// The UART's interrupt (an SPI: 33 on `virt`), if its node gives one;
    /// without it console input is polled.
    pub uart_intid: Option<u32>,
    /// GIC INTID of the EL1 virtual timer, the one the kernel uses (27 on
    /// `virt`).
    pub timer_virt_intid: u32,
    /// MPIDR of each CPU in tree order: logical CPU `n` is the one whose
    /// MPIDR is `cpu_logical_map[n]` (Linux: `cpu_logical_map()`). Its
    /// length is the number of CPUs the kernel will use.
    pub cpu_logical_map: FixedVec<u64, NR_CPUS>,
    /// CPUs in the tree beyond [`NR_CPUS`], left off `cpu_logical_map`.
    pub nr_cpus_ignored: usize,
    /// Size of the DTB in bytes (header `totalsize`), so the kernel can keep
    /// it out of the page allocator.
    pub dtb_size: usize,
}

/// Parses the DTB at the start of `dtb`. Bytes past its `totalsize` are
/// ignored.
pub fn parse(dtb: &[u8]) -> Result<BootInfo<'_>, DtbError> {
    let blob = check_blob(dtb)?;
    let fdt = Fdt::new(blob).map_err(|_| DtbError::BadHeader)?;
    // Nodes are looked up among the root's children rather than with
    // fdt.find_node(), which on a miss goes on to resolve the path as an
    // alias and can recurse forever on an alias that names itself. "/"
    // itself cannot miss in a checked blob.
    let root = fdt.find_node("/").ok_or(DtbError::BadStructure)?;
    let chosen = child(root, "chosen");
    let timer_virt_intid = parse_timer(&fdt)?;
    let (cpu_logical_map, nr_cpus_ignored) = parse_cpus(root)?;
    let uart = parse_uart(&fdt, root, chosen)?;

    Ok(BootInfo {
        memory: parse_memory(root)?,
        reserved: parse_reserved(&fdt, root)?,
        initrd: chosen.map(parse_initrd).transpose()?.flatten(),
        bootargs: parse_bootargs(chosen)?,
        psci: parse_psci(&fdt)?,
        gic: parse_gic(&fdt)?,
        rtc: fdt
            .find_compatible(PL031_COMPATIBLE)
            .and_then(|node| reg_entry(node, 0).ok()),
        uart: reg_entry(uart, 0)?,
        uart_intid: spi_intid(uart),
        timer_virt_intid,
        cpu_logical_map,
        nr_cpus_ignored,
        dtb_size: blob.len(),
    })
}
