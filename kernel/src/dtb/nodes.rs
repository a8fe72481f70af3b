//! One parser per device-tree node the kernel reads (Linux: the
//! `early_init_dt_scan_*` functions and the drivers' probe-time lookups),
//! each on a blob `check` has already validated.

use fdt::node::FdtNode;
use fdt::Fdt;

use super::check::be32_at;
use super::{DtbError, FixedVec, GicInfo, MemRegion, PsciConduit};
use super::{MAX_MEM_REGIONS, MAX_RESERVED_REGIONS};
use crate::config::NR_CPUS;
use crate::mm::addr::PhysAddr;

/// `compatible` strings of a GICv2 (or the GICv2-compatible Cortex-A15 GIC).
pub(super) const GIC_V2_COMPATIBLE: &[&str] = &["arm,gic-400", "arm,cortex-a15-gic"];
/// `compatible` string of a GICv3.
pub(super) const GIC_V3_COMPATIBLE: &[&str] = &["arm,gic-v3"];
/// `compatible` string of the PL011 UART.
pub(super) const PL011_COMPATIBLE: &[&str] = &["arm,pl011"];
/// `compatible` string of the PL031 real-time clock.
pub(super) const PL031_COMPATIBLE: &[&str] = &["arm,pl031"];
/// `compatible` string of the ARMv8 generic timer.
pub(super) const ARCH_TIMER_COMPATIBLE: &[&str] = &["arm,armv8-timer"];
/// `compatible` strings of PSCI firmware, newest first.
pub(super) const PSCI_COMPATIBLE: &[&str] = &["arm,psci-1.0", "arm,psci-0.2", "arm,psci"];

/// Index of the virtual timer in the arch timer's `interrupts` (Linux:
/// `enum arch_timer_ppi_nr`: secure phys, non-secure phys, virt, hyp).
pub(super) const ARCH_TIMER_VIRT_PPI: usize = 2;
/// A GIC interrupt specifier is three cells: type, number, flags.
pub(super) const GIC_INTERRUPT_CELLS_SIZE: usize = 12;
/// First cell of a GIC interrupt specifier for a per-CPU interrupt.
pub(super) const GIC_PPI: u32 = 1;
/// PPIs are INTIDs 16..32; the specifier numbers them from 0.
pub(super) const GIC_PPI_BASE: u32 = 16;
/// How many PPIs there are; a specifier numbering one past them is broken.
pub(super) const GIC_NR_PPIS: u32 = 16;
/// First cell of a GIC interrupt specifier for a shared peripheral
/// interrupt; SPIs are INTIDs 32 and up.
pub(super) const GIC_SPI: u32 = 0;
/// The INTID of SPI 0: a specifier's SPI number is added to it.
pub(super) const GIC_SPI_BASE: u32 = 32;

/// A value of one or two big-endian cells; `None` if it is wider than
/// 64 bits. Zero cells (a `#size-cells = <0>` size) read as 0.
pub(super) fn be_cells(bytes: &[u8]) -> Option<u64> {
    if bytes.len() > 8 {
        return None;
    }
    let mut value = 0;
    for &byte in bytes {
        value = (value << 8) | u64::from(byte);
    }
    Some(value)
}

/// The entries of `node`'s `reg`, decoded with its parent's `#address-cells`
/// and `#size-cells`; `None` for an entry wider than 64 bits.
pub(super) fn reg<'a>(node: FdtNode<'_, 'a>) -> impl Iterator<Item = Option<MemRegion>> + 'a {
    node.raw_reg()
        .into_iter()
        .flatten()
        // With `#address-cells = <0>` raw_reg would yield empty entries forever.
        .take_while(|entry| !entry.address.is_empty())
        .map(|entry| {
            Some(MemRegion {
                base: PhysAddr(be_cells(entry.address)?),
                size: be_cells(entry.size)?,
            })
        })
}

/// Entry `index` of `node`'s `reg`.
pub(super) fn reg_entry(node: FdtNode<'_, '_>, index: usize) -> Result<MemRegion, DtbError> {
    reg(node)
        .nth(index)
        .flatten()
        .ok_or(DtbError::BadProperty("reg"))
}

/// The child of `node` called exactly `name`.
pub(super) fn child<'b, 'a>(node: FdtNode<'b, 'a>, name: &str) -> Option<FdtNode<'b, 'a>> {
    node.children().find(|child| child.name == name)
}

/// The string value of `node`'s property `name`, or `BadProperty(name)`
/// if it is missing or not a NUL-terminated string.
pub(super) fn property_str<'a>(
    node: FdtNode<'_, 'a>,
    name: &'static str,
) -> Result<&'a str, DtbError> {
    node.property(name)
        .and_then(|prop| prop.as_str())
        .ok_or(DtbError::BadProperty(name))
}

/// Whether `node` has `device_type = "<device_type>"`.
pub(super) fn has_device_type(node: FdtNode<'_, '_>, device_type: &str) -> bool {
    node.property("device_type").and_then(|prop| prop.as_str()) == Some(device_type)
}

/// Like Linux, trusts `device_type = "memory"` rather than the node name.
pub(super) fn parse_memory(
    root: FdtNode<'_, '_>,
) -> Result<FixedVec<MemRegion, MAX_MEM_REGIONS>, DtbError> {
    let mut memory = FixedVec::new();
    let memory_nodes = root
        .children()
        .filter(|node| has_device_type(*node, "memory"));
    for node in memory_nodes {
        for region in reg(node) {
            let region = region.ok_or(DtbError::BadProperty("reg"))?;
            if region.size != 0 {
                // A full list drops the region: less RAM, but nothing unsafe.
                memory.push(region);
            }
        }
    }
    if memory.is_empty() {
        return Err(DtbError::NoMemory);
    }
    sort_and_merge(&mut memory);
    Ok(memory)
}

/// Sorts `list` by address and merges regions that overlap or touch, so
/// that no byte of RAM is listed twice (Linux: `memblock_merge_regions`).
pub(super) fn sort_and_merge<const N: usize>(list: &mut FixedVec<MemRegion, N>) {
    let regions = list.as_mut_slice();
    regions.sort_unstable_by_key(|region| region.base);
    // regions[..merged] is the result so far: each region in turn either
    // extends its last entry or becomes a new one.
    let mut merged = 0;
    for i in 0..regions.len() {
        let region = regions[i];
        if merged > 0 && region.base <= regions[merged - 1].end() {
            let last = &mut regions[merged - 1];
            last.size = last.end().max(region.end()).0 - last.base.0;
        } else {
            regions[merged] = region;
            merged += 1;
        }
    }
    list.truncate(merged);
}

/// The reserved regions: the blob's `/memreserve/` table and every
/// `/reserved-memory` child with a `reg` (Linux's
/// `early_init_fdt_scan_reserved_mem`); zero-sized entries are skipped.
pub(super) fn parse_reserved(
    fdt: &Fdt<'_>,
    root: FdtNode<'_, '_>,
) -> Result<FixedVec<MemRegion, MAX_RESERVED_REGIONS>, DtbError> {
    let memreserve = fdt.memory_reservations().map(|entry| {
        Some(MemRegion {
            base: PhysAddr(entry.address() as u64),
            size: entry.size() as u64,
        })
    });
    let reserved_memory = child(root, "reserved-memory")
        .into_iter()
        .flat_map(|node| node.children())
        .flat_map(reg);

    let mut reserved = FixedVec::new();
    for region in memreserve.chain(reserved_memory) {
        let region = region.ok_or(DtbError::BadProperty("reg"))?;
        if region.size != 0 && !reserved.push(region) {
            return Err(DtbError::TooManyReserved);
        }
    }
    Ok(reserved)
}

/// `linux,initrd-start` and `linux,initrd-end` (exclusive), each one or two
/// cells depending on the bootloader.
pub(super) fn parse_initrd(chosen: FdtNode<'_, '_>) -> Result<Option<MemRegion>, DtbError> {
    let address = |name: &'static str| {
        chosen.property(name).map(|prop| match prop.value.len() {
            4 | 8 => be_cells(prop.value).ok_or(DtbError::BadProperty(name)),
            _ => Err(DtbError::BadProperty(name)),
        })
    };
    match (address("linux,initrd-start"), address("linux,initrd-end")) {
        (None, None) => Ok(None),
        (Some(start), Some(end)) => {
            let (start, end) = (start?, end?);
            let size = end
                .checked_sub(start)
                .ok_or(DtbError::BadProperty("linux,initrd-end"))?;
            Ok(Some(MemRegion {
                base: PhysAddr(start),
                size,
            }))
        }
        (None, Some(_)) => Err(DtbError::BadProperty("linux,initrd-start")),
        (Some(_), None) => Err(DtbError::BadProperty("linux,initrd-end")),
    }
}

/// `/chosen/bootargs`, or `""` if there is no `/chosen` or no `bootargs`.
pub(super) fn parse_bootargs<'a>(chosen: Option<FdtNode<'_, 'a>>) -> Result<&'a str, DtbError> {
    match chosen.and_then(|node| node.property("bootargs")) {
        Some(prop) => prop.as_str().ok_or(DtbError::BadProperty("bootargs")),
        None => Ok(""),
    }
}

/// How to call PSCI: the PSCI node's `method` property, `hvc` or `smc`
/// (Linux's `get_set_conduit_method`).
pub(super) fn parse_psci(fdt: &Fdt<'_>) -> Result<PsciConduit, DtbError> {
    let node = fdt
        .find_compatible(PSCI_COMPATIBLE)
        .ok_or(DtbError::NoPsci)?;
    match property_str(node, "method")? {
        "hvc" => Ok(PsciConduit::Hvc),
        "smc" => Ok(PsciConduit::Smc),
        _ => Err(DtbError::BadProperty("method")),
    }
}

/// The GIC's register ranges: a GICv3 if the tree has one (distributor,
/// redistributors), else a GICv2 (distributor, CPU interface).
pub(super) fn parse_gic(fdt: &Fdt<'_>) -> Result<GicInfo, DtbError> {
    if let Some(node) = fdt.find_compatible(GIC_V3_COMPATIBLE) {
        return Ok(GicInfo::V3 {
            dist: reg_entry(node, 0)?,
            redist: reg_entry(node, 1)?,
        });
    }
    // Any further GICv2 `reg` entries are the virtualization interfaces.
    let node = fdt
        .find_compatible(GIC_V2_COMPATIBLE)
        .ok_or(DtbError::NoGic)?;
    Ok(GicInfo::V2 {
        dist: reg_entry(node, 0)?,
        cpu_if: reg_entry(node, 1)?,
    })
}

/// The PL011 `/chosen/stdout-path` names, else the first PL011 in the tree.
pub(super) fn parse_uart<'b, 'a>(
    fdt: &'b Fdt<'a>,
    root: FdtNode<'b, 'a>,
    chosen: Option<FdtNode<'b, 'a>>,
) -> Result<FdtNode<'b, 'a>, DtbError> {
    let is_pl011 = |node: &FdtNode<'_, '_>| {
        node.compatible()
            .is_some_and(|compatible| compatible.all().any(|c| PL011_COMPATIBLE.contains(&c)))
    };
    chosen
        .and_then(|chosen| stdout_node(root, chosen))
        .filter(is_pl011)
        .or_else(|| fdt.find_compatible(PL011_COMPATIBLE))
        .ok_or(DtbError::NoUart)
}

/// The INTID of a device's first interrupt, if it is a GIC SPI.
pub(super) fn spi_intid(node: FdtNode<'_, '_>) -> Option<u32> {
    let specifier = node.property("interrupts")?.value;
    let kind = be32_at(specifier, 0)?;
    let number = be32_at(specifier, 4)?;
    (kind == GIC_SPI).then(|| GIC_SPI_BASE + number)
}

/// Resolves `stdout-path`: a node path or an alias, either of which may be
/// followed by `:options` such as `:115200n8`.
pub(super) fn stdout_node<'b, 'a>(
    root: FdtNode<'b, 'a>,
    chosen: FdtNode<'b, 'a>,
) -> Option<FdtNode<'b, 'a>> {
    let stdout_path = chosen.property("stdout-path")?.as_str()?;
    let path = stdout_path.split(':').next()?;
    if path.starts_with('/') {
        return find_by_path(root, path);
    }
    let aliases = child(root, "aliases")?;
    find_by_path(root, aliases.property(path)?.as_str()?)
}

/// The node at `path`, where a component without `@unit` matches the first
/// node of that name whatever its unit address.
pub(super) fn find_by_path<'b, 'a>(root: FdtNode<'b, 'a>, path: &str) -> Option<FdtNode<'b, 'a>> {
    path.split('/')
        .filter(|component| !component.is_empty())
        .try_fold(root, |node, component| {
            node.children().find(|child| {
                child.name == component
                    || (!component.contains('@') && child.name.split('@').next() == Some(component))
            })
        })
}

/// INTIDs of the non-secure physical and the virtual EL1 timers.
pub(super) fn parse_timer(fdt: &Fdt<'_>) -> Result<u32, DtbError> {
    let node = fdt
        .find_compatible(ARCH_TIMER_COMPATIBLE)
        .ok_or(DtbError::NoTimer)?;
    let interrupts = node
        .property("interrupts")
        .ok_or(DtbError::BadProperty("interrupts"))?
        .value;
    let ppi = |index: usize| {
        interrupts
            .chunks_exact(GIC_INTERRUPT_CELLS_SIZE)
            .nth(index)
            .and_then(ppi_intid)
            .ok_or(DtbError::BadProperty("interrupts"))
    };
    ppi(ARCH_TIMER_VIRT_PPI)
}

/// The INTID a three-cell GIC interrupt specifier names, if it is a PPI: the
/// timers are per-CPU, so anything else is a broken tree.
pub(super) fn ppi_intid(specifier: &[u8]) -> Option<u32> {
    let kind = be32_at(specifier, 0)?;
    let number = be32_at(specifier, 4)?;
    (kind == GIC_PPI && number < GIC_NR_PPIS).then(|| GIC_PPI_BASE + number)
}

/// The MPIDR (first `reg` entry) of each `/cpus` child with
/// `device_type = "cpu"`, which skips `cpu-map`.
pub(super) fn parse_cpus(
    root: FdtNode<'_, '_>,
) -> Result<(FixedVec<u64, NR_CPUS>, usize), DtbError> {
    let cpus = child(root, "cpus").ok_or(DtbError::NoCpus)?;
    let mut logical_map = FixedVec::new();
    let mut ignored = 0;
    for cpu in cpus.children().filter(|node| has_device_type(*node, "cpu")) {
        let mpidr = reg_entry(cpu, 0)?.base.0;
        if !logical_map.push(mpidr) {
            ignored += 1;
        }
    }
    if logical_map.is_empty() {
        return Err(DtbError::NoCpus);
    }
    Ok((logical_map, ignored))
}
