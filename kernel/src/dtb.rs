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

use crate::mm::addr::{PhysAddr, PAGE_SIZE};
use core::fmt;
use core::ops::Deref;
use fdt::node::FdtNode;
use fdt::Fdt;

/// Most `/memory` regions kept; more are ignored (which only wastes RAM).
pub const MAX_MEM_REGIONS: usize = 8;
/// Most reserved regions accepted; more is an error, because ignoring one
/// would hand out memory that someone else owns.
pub const MAX_RESERVED_REGIONS: usize = 16;
/// Most CPUs brought up; further `/cpus` entries are counted in
/// [`BootInfo::nr_cpus_ignored`] and otherwise ignored.
pub const MAX_CPUS: usize = 8;

const FDT_MAGIC: u32 = 0xd00d_feed;
/// The header is ten big-endian `u32`s.
const FDT_HEADER_SIZE: usize = 40;
/// `size_dt_struct`, which `fdt` relies on, first appeared in version 17.
const FDT_MIN_VERSION: u32 = 17;
/// A blob whose `last_comp_version` is newer than this needs a newer parser.
const FDT_LAST_COMP_VERSION: u32 = 17;
/// Size of one `/memreserve/` entry: a `u64` address and a `u64` size.
const FDT_RSV_ENTRY_SIZE: usize = 16;
/// Deeper trees are rejected: `fdt` tracks parents in a fixed 64-entry array,
/// and real trees are a handful of levels deep.
const FDT_MAX_DEPTH: usize = 32;

const FDT_BEGIN_NODE: u32 = 0x1;
const FDT_END_NODE: u32 = 0x2;
const FDT_PROP: u32 = 0x3;
const FDT_END: u32 = 0x9;

/// Positions of the header fields we read, in `u32`s from the start.
const HDR_TOTALSIZE: usize = 1;
const HDR_OFF_DT_STRUCT: usize = 2;
const HDR_OFF_DT_STRINGS: usize = 3;
const HDR_OFF_MEM_RSVMAP: usize = 4;
const HDR_VERSION: usize = 5;
const HDR_LAST_COMP_VERSION: usize = 6;
const HDR_SIZE_DT_STRINGS: usize = 8;
const HDR_SIZE_DT_STRUCT: usize = 9;

const GIC_V2_COMPATIBLE: &[&str] = &["arm,gic-400", "arm,cortex-a15-gic"];
const GIC_V3_COMPATIBLE: &[&str] = &["arm,gic-v3"];
const PL011_COMPATIBLE: &[&str] = &["arm,pl011"];
const PL031_COMPATIBLE: &[&str] = &["arm,pl031"];
const ARCH_TIMER_COMPATIBLE: &[&str] = &["arm,armv8-timer"];
const PSCI_COMPATIBLE: &[&str] = &["arm,psci-1.0", "arm,psci-0.2", "arm,psci"];

/// Index of the virtual timer in the arch timer's `interrupts` (Linux:
/// `enum arch_timer_ppi_nr`: secure phys, non-secure phys, virt, hyp).
const ARCH_TIMER_VIRT_PPI: usize = 2;
/// A GIC interrupt specifier is three cells: type, number, flags.
const GIC_INTERRUPT_CELLS_SIZE: usize = 12;
/// First cell of a GIC interrupt specifier for a per-CPU interrupt.
const GIC_PPI: u32 = 1;
/// PPIs are INTIDs 16..32; the specifier numbers them from 0.
const GIC_PPI_BASE: u32 = 16;
const GIC_NR_PPIS: u32 = 16;
/// First cell of a GIC interrupt specifier for a shared peripheral
/// interrupt; SPIs are INTIDs 32 and up.
const GIC_SPI: u32 = 0;
const GIC_SPI_BASE: u32 = 32;

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
    NoPsci,
    NoGic,
    NoUart,
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
    pub base: PhysAddr,
    pub size: u64,
}

impl MemRegion {
    /// First address past the region. A DTB can claim a region running off
    /// the top of the address space; it is cut off there.
    pub fn end(&self) -> PhysAddr {
        PhysAddr(self.base.0.saturating_add(self.size))
    }
}

/// A list of at most `N` items, stored inline because there is no heap yet.
/// Reads go through `Deref` to a slice of the items pushed so far.
#[derive(Clone, Copy)]
pub struct FixedVec<T, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> FixedVec<T, N> {
    fn new() -> Self {
        FixedVec {
            items: [T::default(); N],
            len: 0,
        }
    }

    /// Appends `item`, or returns `false` if the list is full.
    fn push(&mut self, item: T) -> bool {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = item;
                self.len += 1;
                true
            }
            None => false,
        }
    }
}

impl<T, const N: usize> Deref for FixedVec<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

/// Prints only the items pushed, not the unused slots.
impl<T: fmt::Debug, const N: usize> fmt::Debug for FixedVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// How to call PSCI firmware (Linux: `enum arm_smccc_conduit`): `hvc` when
/// a hypervisor sits at EL2 (QEMU's default), `smc` when the firmware runs
/// at EL3 or QEMU emulates EL2 itself (`virtualization=on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsciConduit {
    Hvc,
    Smc,
}

/// Where the interrupt controller's registers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GicInfo {
    /// GICv2: the distributor (GICD) and the per-CPU interface (GICC), which
    /// is memory-mapped and banked per CPU.
    V2 { dist: MemRegion, cpu_if: MemRegion },
    /// GICv3: the distributor and the first redistributor region (GICR),
    /// one 128K frame per CPU laid end to end. The CPU interface is system
    /// registers, so it has no address.
    V3 { dist: MemRegion, redist: MemRegion },
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
    pub psci: PsciConduit,
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
    pub cpu_logical_map: FixedVec<u64, MAX_CPUS>,
    /// CPUs in the tree beyond [`MAX_CPUS`], left off `cpu_logical_map`.
    pub nr_cpus_ignored: usize,
    /// Size of the DTB in bytes (header `totalsize`), so the kernel can keep
    /// it out of the page allocator.
    pub dtb_size: usize,
}

/// Size of the DTB whose first bytes are `header`, read from the header's
/// `totalsize` field, or `None` if `header` does not start like a DTB.
///
/// The kernel gets only a pointer in `x0`: it reads the header through it,
/// asks this for the length, and then hands a slice that long to [`parse`].
pub fn total_size(header: &[u8]) -> Option<usize> {
    if be32_at(header, 0)? != FDT_MAGIC {
        return None;
    }
    let size = be32_at(header, HDR_TOTALSIZE * 4)? as usize;
    (size >= FDT_HEADER_SIZE).then_some(size)
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

impl BootInfo<'_> {
    /// Fills `out` with the RAM the page allocator may use, as page-aligned
    /// `[start, end)` ranges sorted by address, and returns how many it wrote.
    ///
    /// That is [`memory`](Self::memory) minus [`reserved`](Self::reserved),
    /// the initrd, the DTB itself (loaded at `dtb_base`), and
    /// `extra_reserved` (the kernel image, say), each `[start, end)`. Any
    /// page that is even partly reserved is left out, and an empty or
    /// inverted range reserves nothing.
    ///
    /// Ranges that do not fit in `out` are dropped. It always has room if
    /// its length is at least `memory.len() + reserved.len() +
    /// extra_reserved.len() + 2` (the initrd and the DTB): each reservation
    /// splits at most one free range in two.
    pub fn free_ranges(
        &self,
        dtb_base: PhysAddr,
        extra_reserved: &[(PhysAddr, PhysAddr)],
        out: &mut [(PhysAddr, PhysAddr)],
    ) -> usize {
        let dtb = MemRegion {
            base: dtb_base,
            size: self.dtb_size as u64,
        };
        let reservations = || {
            core::iter::once(dtb)
                .chain(self.initrd)
                .chain(self.reserved.iter().copied())
                .map(|region| (region.base, region.end()))
                .chain(extra_reserved.iter().copied())
        };

        let mut count = 0;
        for ram in self.memory.iter() {
            let end = ram.end();
            let mut cursor = ram.base;
            while cursor < end {
                // The lowest reservation that still overlaps [cursor, end):
                // RAM up to its start is free, and the next search starts
                // past its end. Taking the lowest each time handles
                // reservations that overlap one another.
                let next = reservations()
                    .filter(|&(start, stop)| start < stop && stop > cursor && start < end)
                    .min_by_key(|&(start, _)| start);
                let (free_end, next_cursor) = match next {
                    Some((start, stop)) => (start.max(cursor), stop),
                    None => (end, end),
                };
                if let Some(range) = page_range(cursor, free_end) {
                    if let Some(slot) = out.get_mut(count) {
                        *slot = range;
                        count += 1;
                    }
                }
                cursor = next_cursor;
            }
        }
        count
    }
}

/// The whole pages inside `[start, end)`, or `None` if there are none.
fn page_range(start: PhysAddr, end: PhysAddr) -> Option<(PhysAddr, PhysAddr)> {
    // Not PhysAddr::align_up: `start` can be within a page of the top of
    // the address space, and rounding it up must not overflow.
    let start = PhysAddr(start.0.checked_next_multiple_of(PAGE_SIZE as u64)?);
    let end = end.align_down(PAGE_SIZE);
    (start < end).then_some((start, end))
}

/// Validates the header and the structure block, so that nothing the `fdt`
/// crate does afterwards can panic, and returns the blob cut to `totalsize`.
fn check_blob(dtb: &[u8]) -> Result<&[u8], DtbError> {
    if dtb.len() < FDT_HEADER_SIZE {
        return Err(DtbError::Truncated);
    }
    // In bounds now that the whole header is known to be there.
    let field = |index: usize| be32_at(dtb, index * 4).unwrap_or(0);
    if field(0) != FDT_MAGIC {
        return Err(DtbError::BadMagic);
    }
    let size = total_size(dtb).ok_or(DtbError::BadHeader)?;
    let blob = dtb.get(..size).ok_or(DtbError::Truncated)?;
    if field(HDR_VERSION) < FDT_MIN_VERSION || field(HDR_LAST_COMP_VERSION) > FDT_LAST_COMP_VERSION
    {
        return Err(DtbError::BadVersion);
    }

    let block = |offset: usize, size: usize| {
        let start = field(offset) as usize;
        blob.get(start..start + field(size) as usize)
            .ok_or(DtbError::BadHeader)
    };
    let structs = block(HDR_OFF_DT_STRUCT, HDR_SIZE_DT_STRUCT)?;
    let strings = block(HDR_OFF_DT_STRINGS, HDR_SIZE_DT_STRINGS)?;
    let rsvmap = blob
        .get(field(HDR_OFF_MEM_RSVMAP) as usize..)
        .ok_or(DtbError::BadHeader)?;
    let terminated = rsvmap
        .chunks_exact(FDT_RSV_ENTRY_SIZE)
        .any(|entry| entry.iter().all(|&byte| byte == 0));
    if !terminated {
        return Err(DtbError::BadHeader);
    }

    check_structure(structs, strings)?;
    Ok(blob)
}

/// Walks the structure block token by token and checks that it is the one
/// shape `fdt` can read: a single root with an empty name, balanced nodes,
/// each node's properties before its children, every name a NUL-terminated
/// UTF-8 string inside its block, every value inside the structure block.
fn check_structure(structs: &[u8], strings: &[u8]) -> Result<(), DtbError> {
    let bad = DtbError::BadStructure;
    let mut pos = 0;
    let mut depth: usize = 0;
    let mut seen_root = false;
    // Set once the current node has had a child: no property may follow.
    let mut after_child = false;

    loop {
        let token = be32_at(structs, pos).ok_or(bad)?;
        pos += 4;
        match token {
            FDT_BEGIN_NODE => {
                let name = c_str_at(structs, pos).ok_or(bad)?;
                let is_root = depth == 0;
                if is_root && (seen_root || !name.is_empty()) {
                    return Err(bad);
                }
                depth += 1;
                if depth > FDT_MAX_DEPTH {
                    return Err(bad);
                }
                seen_root = true;
                after_child = false;
                pos = align4(pos + name.len() + 1);
            }
            FDT_END_NODE => {
                depth = depth.checked_sub(1).ok_or(bad)?;
                after_child = true;
            }
            FDT_PROP => {
                if depth == 0 || after_child {
                    return Err(bad);
                }
                let len = be32_at(structs, pos).ok_or(bad)? as usize;
                let name_offset = be32_at(structs, pos + 4).ok_or(bad)? as usize;
                let name = c_str_at(strings, name_offset).ok_or(bad)?;
                // fdt reads these two as a u32 without checking the length.
                if matches!(name, "#address-cells" | "#size-cells") && len != 4 {
                    return Err(bad);
                }
                let value_end = pos + 8 + len;
                if value_end > structs.len() {
                    return Err(bad);
                }
                pos = align4(value_end);
            }
            FDT_END if seen_root && depth == 0 => return Ok(()),
            _ => return Err(bad),
        }
    }
}

fn align4(x: usize) -> usize {
    x.next_multiple_of(4)
}

fn be32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let word = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_be_bytes(word.try_into().ok()?))
}

/// The NUL-terminated UTF-8 string starting at `offset`.
fn c_str_at(bytes: &[u8], offset: usize) -> Option<&str> {
    let rest = bytes.get(offset..)?;
    let len = rest.iter().position(|&byte| byte == 0)?;
    core::str::from_utf8(&rest[..len]).ok()
}

/// A value of one or two big-endian cells; `None` if it is wider than
/// 64 bits. Zero cells (a `#size-cells = <0>` size) read as 0.
fn be_cells(bytes: &[u8]) -> Option<u64> {
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
fn reg<'a>(node: FdtNode<'_, 'a>) -> impl Iterator<Item = Option<MemRegion>> + 'a {
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
fn reg_entry(node: FdtNode<'_, '_>, index: usize) -> Result<MemRegion, DtbError> {
    reg(node)
        .nth(index)
        .flatten()
        .ok_or(DtbError::BadProperty("reg"))
}

/// The child of `node` called exactly `name`.
fn child<'b, 'a>(node: FdtNode<'b, 'a>, name: &str) -> Option<FdtNode<'b, 'a>> {
    node.children().find(|child| child.name == name)
}

fn property_str<'a>(node: FdtNode<'_, 'a>, name: &'static str) -> Result<&'a str, DtbError> {
    node.property(name)
        .and_then(|prop| prop.as_str())
        .ok_or(DtbError::BadProperty(name))
}

fn has_device_type(node: FdtNode<'_, '_>, device_type: &str) -> bool {
    node.property("device_type").and_then(|prop| prop.as_str()) == Some(device_type)
}

/// Like Linux, trusts `device_type = "memory"` rather than the node name.
fn parse_memory(root: FdtNode<'_, '_>) -> Result<FixedVec<MemRegion, MAX_MEM_REGIONS>, DtbError> {
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
fn sort_and_merge<const N: usize>(list: &mut FixedVec<MemRegion, N>) {
    let regions = &mut list.items[..list.len];
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
    list.len = merged;
}

fn parse_reserved(
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
fn parse_initrd(chosen: FdtNode<'_, '_>) -> Result<Option<MemRegion>, DtbError> {
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

fn parse_bootargs<'a>(chosen: Option<FdtNode<'_, 'a>>) -> Result<&'a str, DtbError> {
    match chosen.and_then(|node| node.property("bootargs")) {
        Some(prop) => prop.as_str().ok_or(DtbError::BadProperty("bootargs")),
        None => Ok(""),
    }
}

fn parse_psci(fdt: &Fdt<'_>) -> Result<PsciConduit, DtbError> {
    let node = fdt
        .find_compatible(PSCI_COMPATIBLE)
        .ok_or(DtbError::NoPsci)?;
    match property_str(node, "method")? {
        "hvc" => Ok(PsciConduit::Hvc),
        "smc" => Ok(PsciConduit::Smc),
        _ => Err(DtbError::BadProperty("method")),
    }
}

fn parse_gic(fdt: &Fdt<'_>) -> Result<GicInfo, DtbError> {
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
fn parse_uart<'b, 'a>(
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
fn spi_intid(node: FdtNode<'_, '_>) -> Option<u32> {
    let specifier = node.property("interrupts")?.value;
    let kind = be32_at(specifier, 0)?;
    let number = be32_at(specifier, 4)?;
    (kind == GIC_SPI).then(|| GIC_SPI_BASE + number)
}

/// Resolves `stdout-path`: a node path or an alias, either of which may be
/// followed by `:options` such as `:115200n8`.
fn stdout_node<'b, 'a>(root: FdtNode<'b, 'a>, chosen: FdtNode<'b, 'a>) -> Option<FdtNode<'b, 'a>> {
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
fn find_by_path<'b, 'a>(root: FdtNode<'b, 'a>, path: &str) -> Option<FdtNode<'b, 'a>> {
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
fn parse_timer(fdt: &Fdt<'_>) -> Result<u32, DtbError> {
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
fn ppi_intid(specifier: &[u8]) -> Option<u32> {
    let kind = be32_at(specifier, 0)?;
    let number = be32_at(specifier, 4)?;
    (kind == GIC_PPI && number < GIC_NR_PPIS).then(|| GIC_PPI_BASE + number)
}

/// The MPIDR (first `reg` entry) of each `/cpus` child with
/// `device_type = "cpu"`, which skips `cpu-map`.
fn parse_cpus(root: FdtNode<'_, '_>) -> Result<(FixedVec<u64, MAX_CPUS>, usize), DtbError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    const SMP1_128M: &[u8] = include_bytes!("../pure/fixtures/virt-smp1-128M.dtb");
    const SMP4_1G: &[u8] = include_bytes!("../pure/fixtures/virt-smp4-1G.dtb");
    const SMP8_4G: &[u8] = include_bytes!("../pure/fixtures/virt-smp8-4G.dtb");
    const EL2: &[u8] = include_bytes!("../pure/fixtures/virt-el2.dtb");
    const FIXTURES: [&[u8]; 4] = [SMP1_128M, SMP4_1G, SMP8_4G, EL2];

    fn region(base: u64, size: u64) -> MemRegion {
        MemRegion {
            base: PhysAddr(base),
            size,
        }
    }

    fn list<const N: usize>(regions: &[(u64, u64)]) -> FixedVec<MemRegion, N> {
        let mut list = FixedVec::new();
        for &(base, size) in regions {
            assert!(list.push(region(base, size)));
        }
        list
    }

    /// `info.free_ranges()` with plain numbers in and out.
    fn free(info: &BootInfo<'_>, dtb_base: u64, extra: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let extra: Vec<_> = extra
            .iter()
            .map(|&(start, end)| (PhysAddr(start), PhysAddr(end)))
            .collect();
        let mut out = [(PhysAddr(0), PhysAddr(0)); 32];
        let n = info.free_ranges(PhysAddr(dtb_base), &extra, &mut out);
        out[..n]
            .iter()
            .map(|&(start, end)| (start.0, end.0))
            .collect()
    }

    /// A `BootInfo` with only RAM and reservations, to exercise `free_ranges`.
    fn memory_map(memory: &[(u64, u64)], reserved: &[(u64, u64)]) -> BootInfo<'static> {
        BootInfo {
            memory: list(memory),
            reserved: list(reserved),
            initrd: None,
            bootargs: "",
            psci: PsciConduit::Hvc,
            gic: GicInfo::V2 {
                dist: MemRegion::default(),
                cpu_if: MemRegion::default(),
            },
            uart: MemRegion::default(),
            rtc: None,
            uart_intid: None,
            timer_virt_intid: 0,
            cpu_logical_map: FixedVec::new(),
            nr_cpus_ignored: 0,
            // An empty DTB, so that only `reserved` and `extra` matter.
            dtb_size: 0,
        }
    }

    /// Writes DTBs for the cases the QEMU fixtures do not cover.
    #[derive(Default)]
    struct DtbBuilder {
        structs: Vec<u8>,
        strings: Vec<u8>,
        memreserve: Vec<(u64, u64)>,
    }

    impl DtbBuilder {
        fn token(&mut self, token: u32) -> &mut Self {
            self.structs.extend_from_slice(&token.to_be_bytes());
            self
        }

        fn pad(&mut self) {
            self.structs.resize(align4(self.structs.len()), 0);
        }

        fn begin_node(&mut self, name: &str) -> &mut Self {
            self.token(FDT_BEGIN_NODE);
            self.structs.extend_from_slice(name.as_bytes());
            self.structs.push(0);
            self.pad();
            self
        }

        fn end_node(&mut self) -> &mut Self {
            self.token(FDT_END_NODE)
        }

        fn prop(&mut self, name: &str, value: &[u8]) -> &mut Self {
            let name_offset = self.strings.len() as u32;
            self.strings.extend_from_slice(name.as_bytes());
            self.strings.push(0);
            self.token(FDT_PROP)
                .token(value.len() as u32)
                .token(name_offset);
            self.structs.extend_from_slice(value);
            self.pad();
            self
        }

        fn prop_cells(&mut self, name: &str, cells: &[u32]) -> &mut Self {
            let value: Vec<u8> = cells.iter().flat_map(|cell| cell.to_be_bytes()).collect();
            self.prop(name, &value)
        }

        /// A string property; `\0` inside `value` separates a string list.
        fn prop_str(&mut self, name: &str, value: &str) -> &mut Self {
            let mut bytes = value.as_bytes().to_vec();
            bytes.push(0);
            self.prop(name, &bytes)
        }

        /// Header, memory reservation block, structure block, strings.
        fn finish(&self) -> Vec<u8> {
            let mut rsvmap = Vec::new();
            for &(address, size) in self.memreserve.iter().chain([(0, 0)].iter()) {
                rsvmap.extend_from_slice(&address.to_be_bytes());
                rsvmap.extend_from_slice(&size.to_be_bytes());
            }
            let mut structs = self.structs.clone();
            structs.extend_from_slice(&FDT_END.to_be_bytes());

            let off_rsvmap = FDT_HEADER_SIZE;
            let off_struct = off_rsvmap + rsvmap.len();
            let off_strings = off_struct + structs.len();
            let total = off_strings + self.strings.len();
            let header = [
                FDT_MAGIC,
                total as u32,
                off_struct as u32,
                off_strings as u32,
                off_rsvmap as u32,
                17,
                16,
                0,
                self.strings.len() as u32,
                structs.len() as u32,
            ];
            let mut blob: Vec<u8> = header.iter().flat_map(|word| word.to_be_bytes()).collect();
            blob.extend_from_slice(&rsvmap);
            blob.extend_from_slice(&structs);
            blob.extend_from_slice(&self.strings);
            blob
        }
    }

    /// A minimal QEMU `virt`-like tree. The top-level nodes named in `omit`
    /// (`memory`, `cpus`, `psci`, `intc`, `pl011`, `timer`, `chosen`) are
    /// left out, and `extra` adds more nodes at the end of the root.
    fn virt_board(omit: &[&str], extra: impl FnOnce(&mut DtbBuilder)) -> Vec<u8> {
        let mut dt = DtbBuilder::default();
        dt.begin_node("")
            .prop_cells("#address-cells", &[2])
            .prop_cells("#size-cells", &[2]);
        if !omit.contains(&"memory") {
            dt.begin_node("memory@40000000")
                .prop_str("device_type", "memory")
                .prop_cells("reg", &[0, 0x4000_0000, 0, 0x800_0000])
                .end_node();
        }
        if !omit.contains(&"cpus") {
            dt.begin_node("cpus")
                .prop_cells("#address-cells", &[1])
                .prop_cells("#size-cells", &[0])
                .begin_node("cpu@0")
                .prop_str("device_type", "cpu")
                .prop_cells("reg", &[0])
                .end_node()
                .end_node();
        }
        if !omit.contains(&"psci") {
            dt.begin_node("psci")
                .prop_str("compatible", "arm,psci-1.0\0arm,psci-0.2\0arm,psci")
                .prop_str("method", "hvc")
                .end_node();
        }
        if !omit.contains(&"intc") {
            dt.begin_node("intc@8000000")
                .prop_str("compatible", "arm,cortex-a15-gic")
                .prop_cells(
                    "reg",
                    &[0, 0x800_0000, 0, 0x1_0000, 0, 0x801_0000, 0, 0x1_0000],
                )
                .end_node();
        }
        if !omit.contains(&"pl011") {
            dt.begin_node("pl011@9000000")
                .prop_str("compatible", "arm,pl011\0arm,primecell")
                .prop_cells("reg", &[0, 0x900_0000, 0, 0x1000])
                .prop_cells("interrupts", &[0, 1, 4])
                .end_node();
        }
        if !omit.contains(&"timer") {
            dt.begin_node("timer")
                .prop_str("compatible", "arm,armv8-timer\0arm,armv7-timer")
                .prop_cells(
                    "interrupts",
                    &[1, 13, 0x104, 1, 14, 0x104, 1, 11, 0x104, 1, 10, 0x104],
                )
                .end_node();
        }
        if !omit.contains(&"chosen") {
            dt.begin_node("chosen")
                .prop_str("stdout-path", "/pl011@9000000")
                .end_node();
        }
        extra(&mut dt);
        dt.end_node();
        dt.finish()
    }

    /// Deterministic pseudo-random numbers (xorshift64) for the fuzz tests.
    fn next_random(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn total_size_reads_the_header() {
        for dtb in FIXTURES {
            assert_eq!(total_size(dtb), Some(dtb.len()));
            assert_eq!(total_size(&dtb[..8]), Some(dtb.len()));
        }
        assert_eq!(total_size(&SMP1_128M[..7]), None);
        assert_eq!(total_size(&[0; 64]), None);
        // A "DTB" smaller than its own header.
        assert_eq!(total_size(&[0xd0, 0x0d, 0xfe, 0xed, 0, 0, 0, 39]), None);
    }

    #[test]
    fn qemu_smp1_128m() {
        let info = parse(SMP1_128M).unwrap();
        assert_eq!(&*info.memory, &[region(0x4000_0000, 0x800_0000)]);
        assert!(info.reserved.is_empty());
        assert_eq!(info.initrd, None);
        assert_eq!(info.bootargs, "");
        assert_eq!(info.psci, PsciConduit::Hvc);
        assert_eq!(
            info.gic,
            GicInfo::V2 {
                dist: region(0x800_0000, 0x1_0000),
                cpu_if: region(0x801_0000, 0x1_0000),
            }
        );
        assert_eq!(info.uart, region(0x900_0000, 0x1000));
        assert_eq!(info.uart_intid, Some(33));
        assert_eq!(info.timer_virt_intid, 27);
        assert_eq!(&*info.cpu_logical_map, &[0]);
        assert_eq!(info.nr_cpus_ignored, 0);
        assert_eq!(info.dtb_size, SMP1_128M.len());
    }

    #[test]
    fn qemu_smp4_1g_has_initrd_and_bootargs() {
        let info = parse(SMP4_1G).unwrap();
        assert_eq!(&*info.memory, &[region(0x4000_0000, 0x4000_0000)]);
        assert_eq!(info.initrd, Some(region(0x4800_0000, 0x2_0000)));
        assert_eq!(info.bootargs, "test panic=test");
        assert_eq!(info.psci, PsciConduit::Hvc);
        assert!(matches!(info.gic, GicInfo::V2 { .. }));
        assert_eq!(info.uart.base, PhysAddr(0x900_0000));
        assert_eq!(info.timer_virt_intid, 27);
        assert_eq!(&*info.cpu_logical_map, &[0, 1, 2, 3]);
    }

    #[test]
    fn qemu_smp8_4g_has_gicv3() {
        let info = parse(SMP8_4G).unwrap();
        assert_eq!(&*info.memory, &[region(0x4000_0000, 0x1_0000_0000)]);
        assert_eq!(
            info.gic,
            GicInfo::V3 {
                dist: region(0x800_0000, 0x1_0000),
                redist: region(0x80a_0000, 0xf6_0000),
            }
        );
        assert_eq!(info.uart.base, PhysAddr(0x900_0000));
        assert_eq!(info.timer_virt_intid, 27);
        assert_eq!(&*info.cpu_logical_map, &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(info.nr_cpus_ignored, 0);
    }

    #[test]
    fn qemu_el2_uses_smc() {
        let info = parse(EL2).unwrap();
        assert_eq!(info.psci, PsciConduit::Smc);
        assert_eq!(&*info.memory, &[region(0x4000_0000, 0x1000_0000)]);
        // The GICH and GICV entries that follow in `reg` are not ours.
        assert_eq!(
            info.gic,
            GicInfo::V2 {
                dist: region(0x800_0000, 0x1_0000),
                cpu_if: region(0x801_0000, 0x1_0000),
            }
        );
        assert_eq!(info.timer_virt_intid, 27);
        assert_eq!(&*info.cpu_logical_map, &[0, 1]);
    }

    #[test]
    fn bytes_past_totalsize_are_ignored() {
        let mut padded = SMP1_128M.to_vec();
        padded.extend_from_slice(&[0xff; 100]);
        assert_eq!(parse(&padded).unwrap().dtb_size, SMP1_128M.len());
    }

    #[test]
    fn free_ranges_of_a_qemu_boot() {
        // QEMU puts the DTB at the start of RAM; say the kernel image is at
        // 2M..4M. The DTB's partial last page stays reserved.
        let image = (0x4020_0000, 0x4040_0000);
        let info = parse(SMP1_128M).unwrap();
        assert_eq!(
            free(&info, 0x4000_0000, &[image]),
            [(0x4000_2000, 0x4020_0000), (0x4040_0000, 0x4800_0000)]
        );
        let info = parse(SMP4_1G).unwrap();
        assert_eq!(
            free(&info, 0x4000_0000, &[image]),
            [
                (0x4000_2000, 0x4020_0000),
                (0x4040_0000, 0x4800_0000),
                (0x4802_0000, 0x8000_0000),
            ]
        );
    }

    #[test]
    fn free_ranges_without_reservations_is_all_ram() {
        let info = memory_map(&[(0x4000_0000, 0x10_0000), (0x8000_0000, 0x10_0000)], &[]);
        assert_eq!(
            free(&info, 0, &[]),
            [(0x4000_0000, 0x4010_0000), (0x8000_0000, 0x8010_0000)]
        );
    }

    #[test]
    fn free_ranges_with_overlapping_reservations() {
        let info = memory_map(
            &[(0x1000_0000, 0x10_0000)],
            &[(0x1002_0000, 0x2_0000), (0x1004_8000, 0x1000)],
        );
        // The extra range overlaps both `reserved` entries and is listed
        // out of order; a duplicate changes nothing.
        let extra = [(0x1003_0000, 0x1005_0000), (0x1002_0000, 0x1004_0000)];
        assert_eq!(
            free(&info, 0, &extra),
            [(0x1000_0000, 0x1002_0000), (0x1005_0000, 0x1010_0000)]
        );
    }

    #[test]
    fn free_ranges_with_reservations_straddling_region_edges() {
        let info = memory_map(&[(0x1000, 0xf000), (0x2_0000, 0x1_0000)], &[]);
        let extra = [
            (0x0, 0x2000),          // across the start of the first region
            (0xf000, 0x2_1000),     // across the gap between the two
            (0x2_f000, 0x10_0000),  // across the end of the second
            (0x50_0000, 0x60_0000), // outside RAM altogether
        ];
        assert_eq!(
            free(&info, 0, &extra),
            [(0x2000, 0xf000), (0x2_1000, 0x2_f000)]
        );
    }

    #[test]
    fn free_ranges_are_page_aligned() {
        // Unaligned RAM shrinks to whole pages, and an unaligned
        // reservation takes every page it touches.
        let info = memory_map(&[(0x1234, 0x8642)], &[(0x4100, 0x100)]);
        assert_eq!(free(&info, 0, &[]), [(0x2000, 0x4000), (0x5000, 0x9000)]);
        // A region with no whole page in it yields nothing.
        let info = memory_map(&[(0x1800, 0x1000)], &[]);
        assert_eq!(free(&info, 0, &[]), []);
    }

    #[test]
    fn free_ranges_of_fully_reserved_ram_is_empty() {
        let info = memory_map(&[(0x4000_0000, 0x10_0000)], &[(0x3000_0000, 0x2000_0000)]);
        assert_eq!(free(&info, 0, &[]), []);
    }

    #[test]
    fn free_ranges_ignores_empty_reservations() {
        let info = memory_map(&[(0x4000_0000, 0x10_0000)], &[]);
        let extra = [(0x4000_8000, 0x4000_8000), (0x4000_9000, 0x4000_1000)];
        assert_eq!(free(&info, 0, &extra), [(0x4000_0000, 0x4010_0000)]);
    }

    #[test]
    fn free_ranges_stops_when_out_is_full() {
        let info = memory_map(
            &[(0x1_0000, 0x1_0000)],
            &[(0x1_2000, 0x1000), (0x1_4000, 0x1000)],
        );
        let mut out = [(PhysAddr(0), PhysAddr(0)); 2];
        assert_eq!(info.free_ranges(PhysAddr(0), &[], &mut out), 2);
        assert_eq!(
            out,
            [
                (PhysAddr(0x1_0000), PhysAddr(0x1_2000)),
                (PhysAddr(0x1_3000), PhysAddr(0x1_4000)),
            ]
        );
    }

    #[test]
    fn free_ranges_at_the_top_of_the_address_space() {
        // The region claims to run past 2^64; rounding must not overflow.
        let info = memory_map(&[(u64::MAX - 0x1fff, 0x3000)], &[]);
        assert_eq!(
            free(&info, 0, &[]),
            [(0xffff_ffff_ffff_e000, 0xffff_ffff_ffff_f000)]
        );
    }

    #[test]
    fn memory_is_sorted_and_merged() {
        let dtb = virt_board(&["memory"], |dt| {
            dt.begin_node("memory@80000000")
                .prop_str("device_type", "memory")
                .prop_cells(
                    "reg",
                    &[0, 0x8000_0000, 0, 0x100_0000, 0, 0x4000_0000, 0, 0x100_0000],
                )
                .end_node()
                .begin_node("memory@40800000")
                .prop_str("device_type", "memory")
                .prop_cells(
                    "reg",
                    &[0, 0x4080_0000, 0, 0x100_0000, 0, 0x9000_0000, 0, 0],
                )
                .end_node();
        });
        let info = parse(&dtb).unwrap();
        assert_eq!(
            &*info.memory,
            &[
                region(0x4000_0000, 0x180_0000),
                region(0x8000_0000, 0x100_0000)
            ]
        );
    }

    #[test]
    fn reservations_and_32_bit_initrd() {
        let dtb = virt_board(&["chosen"], |dt| {
            dt.memreserve.push((0x4100_0000, 0x1000));
            dt.begin_node("chosen")
                .prop_str("bootargs", "console=ttyAMA0")
                .prop_cells("linux,initrd-start", &[0x4400_0000])
                .prop_cells("linux,initrd-end", &[0x4410_0000])
                .end_node()
                .begin_node("reserved-memory")
                .prop_cells("#address-cells", &[2])
                .prop_cells("#size-cells", &[2])
                .prop("ranges", &[])
                .begin_node("secmon@42000000")
                .prop_cells("reg", &[0, 0x4200_0000, 0, 0x10_0000])
                .prop("no-map", &[])
                .end_node()
                // Dynamic: no `reg`, so nothing to reserve here.
                .begin_node("linux,cma")
                .prop_cells("size", &[0, 0x400_0000])
                .end_node()
                .end_node();
        });
        let info = parse(&dtb).unwrap();
        assert_eq!(
            &*info.reserved,
            &[region(0x4100_0000, 0x1000), region(0x4200_0000, 0x10_0000)]
        );
        assert_eq!(info.initrd, Some(region(0x4400_0000, 0x10_0000)));
        assert_eq!(info.bootargs, "console=ttyAMA0");
        assert_eq!(
            free(&info, 0x4000_0000, &[]),
            [
                (0x4000_1000, 0x4100_0000),
                (0x4100_1000, 0x4200_0000),
                (0x4210_0000, 0x4400_0000),
                (0x4410_0000, 0x4800_0000),
            ]
        );
    }

    #[test]
    fn initrd_must_be_whole() {
        let chosen = |start: &[u32], end: &[u32]| {
            let (start, end) = (start.to_vec(), end.to_vec());
            virt_board(&["chosen"], move |dt| {
                dt.begin_node("chosen");
                if !start.is_empty() {
                    dt.prop_cells("linux,initrd-start", &start);
                }
                if !end.is_empty() {
                    dt.prop_cells("linux,initrd-end", &end);
                }
                dt.end_node();
            })
        };
        let bad_start = Err(DtbError::BadProperty("linux,initrd-start"));
        let bad_end = Err(DtbError::BadProperty("linux,initrd-end"));
        assert_eq!(parse(&chosen(&[], &[])).unwrap().initrd, None);
        assert_eq!(
            parse(&chosen(&[0x4400_0000], &[0, 0x4400_1000]))
                .unwrap()
                .initrd,
            Some(region(0x4400_0000, 0x1000))
        );
        assert_eq!(parse(&chosen(&[0x4400_0000], &[])).map(|_| ()), bad_end);
        assert_eq!(parse(&chosen(&[], &[0x4400_0000])).map(|_| ()), bad_start);
        assert_eq!(
            parse(&chosen(&[0, 0, 1], &[0x4400_0000])).map(|_| ()),
            bad_start
        );
        // Ends before it starts.
        assert_eq!(
            parse(&chosen(&[0x4400_1000], &[0x4400_0000])).map(|_| ()),
            bad_end
        );
    }

    #[test]
    fn cpus_beyond_max_are_ignored() {
        let dtb = virt_board(&["cpus"], |dt| {
            // Two-cell MPIDRs, as on real machines, and a cpu-map to skip.
            dt.begin_node("cpus")
                .prop_cells("#address-cells", &[2])
                .prop_cells("#size-cells", &[0])
                .begin_node("cpu-map")
                .end_node();
            for cpu in 0..MAX_CPUS as u32 + 2 {
                let mpidr = ((cpu / 4) << 8) | (cpu % 4);
                dt.begin_node("cpu")
                    .prop_str("device_type", "cpu")
                    .prop_cells("reg", &[0, mpidr])
                    .end_node();
            }
            dt.end_node();
        });
        let info = parse(&dtb).unwrap();
        assert_eq!(
            &*info.cpu_logical_map,
            &[0x0, 0x1, 0x2, 0x3, 0x100, 0x101, 0x102, 0x103]
        );
        assert_eq!(info.nr_cpus_ignored, 2);
    }

    #[test]
    fn uart_follows_stdout_path() {
        let second_uart = |stdout_path: &'static str| {
            virt_board(&["chosen"], move |dt| {
                dt.begin_node("pl011@9040000")
                    .prop_str("compatible", "arm,pl011\0arm,primecell")
                    .prop_cells("reg", &[0, 0x904_0000, 0, 0x1000])
                    .end_node()
                    .begin_node("aliases")
                    .prop_str("serial1", "/pl011@9040000")
                    .prop_str("rtc0", "/pl031@9010000")
                    .end_node()
                    .begin_node("pl031@9010000")
                    .prop_str("compatible", "arm,pl031\0arm,primecell")
                    .prop_cells("reg", &[0, 0x901_0000, 0, 0x1000])
                    .end_node()
                    .begin_node("chosen")
                    .prop_str("stdout-path", stdout_path)
                    .end_node();
            })
        };
        let uart = |stdout_path| parse(&second_uart(stdout_path)).unwrap().uart.base;
        assert_eq!(uart("/pl011@9040000"), PhysAddr(0x904_0000));
        assert_eq!(uart("serial1:115200n8"), PhysAddr(0x904_0000));
        // Without the unit address, the first node of that name.
        assert_eq!(uart("/pl011"), PhysAddr(0x900_0000));
        // Not a PL011, or nothing at all: fall back to the first PL011.
        assert_eq!(uart("rtc0"), PhysAddr(0x900_0000));
        assert_eq!(uart("/nowhere@0"), PhysAddr(0x900_0000));
        assert_eq!(uart("serial9"), PhysAddr(0x900_0000));
    }

    #[test]
    fn gic_400_is_v2() {
        let dtb = virt_board(&["intc"], |dt| {
            dt.begin_node("interrupt-controller@2c001000")
                .prop_str("compatible", "arm,gic-400")
                .prop_cells(
                    "reg",
                    &[0, 0x2c00_1000, 0, 0x1000, 0, 0x2c00_2000, 0, 0x2000],
                )
                .end_node();
        });
        assert_eq!(
            parse(&dtb).unwrap().gic,
            GicInfo::V2 {
                dist: region(0x2c00_1000, 0x1000),
                cpu_if: region(0x2c00_2000, 0x2000),
            }
        );
    }

    #[test]
    fn missing_required_nodes() {
        let missing = |node| parse(&virt_board(&[node], |_| {})).map(|_| ());
        assert_eq!(missing("memory"), Err(DtbError::NoMemory));
        assert_eq!(missing("cpus"), Err(DtbError::NoCpus));
        assert_eq!(missing("psci"), Err(DtbError::NoPsci));
        assert_eq!(missing("intc"), Err(DtbError::NoGic));
        assert_eq!(missing("pl011"), Err(DtbError::NoUart));
        assert_eq!(missing("timer"), Err(DtbError::NoTimer));
        // /chosen is optional.
        assert!(missing("chosen").is_ok());
    }

    #[test]
    fn malformed_properties() {
        let psci = virt_board(&["psci"], |dt| {
            dt.begin_node("psci")
                .prop_str("compatible", "arm,psci-0.2")
                .prop_str("method", "svc")
                .end_node();
        });
        assert_eq!(
            parse(&psci).map(|_| ()),
            Err(DtbError::BadProperty("method"))
        );

        // Only the secure physical timer listed.
        let timer = virt_board(&["timer"], |dt| {
            dt.begin_node("timer")
                .prop_str("compatible", "arm,armv8-timer")
                .prop_cells("interrupts", &[1, 13, 0x104])
                .end_node();
        });
        assert_eq!(
            parse(&timer).map(|_| ()),
            Err(DtbError::BadProperty("interrupts"))
        );

        // An SPI (type 0) cannot be a per-CPU timer.
        let timer = virt_board(&["timer"], |dt| {
            dt.begin_node("timer")
                .prop_str("compatible", "arm,armv8-timer")
                .prop_cells("interrupts", &[1, 13, 4, 1, 14, 4, 0, 11, 4, 1, 10, 4])
                .end_node();
        });
        assert_eq!(
            parse(&timer).map(|_| ()),
            Err(DtbError::BadProperty("interrupts"))
        );

        let gic = virt_board(&["intc"], |dt| {
            dt.begin_node("intc@8000000")
                .prop_str("compatible", "arm,gic-v3")
                .prop_cells("reg", &[0, 0x800_0000, 0, 0x1_0000])
                .end_node();
        });
        assert_eq!(parse(&gic).map(|_| ()), Err(DtbError::BadProperty("reg")));
    }

    #[test]
    fn too_many_reservations_is_an_error() {
        let dtb = virt_board(&[], |dt| {
            for i in 0..=MAX_RESERVED_REGIONS as u64 {
                dt.memreserve.push((0x4000_0000 + i * 0x1000, 0x1000));
            }
        });
        assert_eq!(parse(&dtb).map(|_| ()), Err(DtbError::TooManyReserved));
    }

    #[test]
    fn bad_headers() {
        let mut dtb = SMP1_128M.to_vec();
        dtb[0] = 0xd1;
        assert_eq!(parse(&dtb).map(|_| ()), Err(DtbError::BadMagic));

        let mut dtb = SMP1_128M.to_vec();
        dtb[HDR_VERSION * 4 + 3] = 16;
        assert_eq!(parse(&dtb).map(|_| ()), Err(DtbError::BadVersion));

        // The strings block runs past totalsize.
        let mut dtb = SMP1_128M.to_vec();
        dtb[HDR_SIZE_DT_STRINGS * 4 + 2] = 0x10;
        assert_eq!(parse(&dtb).map(|_| ()), Err(DtbError::BadHeader));
    }

    #[test]
    fn truncated_dtb_is_an_error() {
        for len in 0..SMP4_1G.len() {
            assert_eq!(parse(&SMP4_1G[..len]).map(|_| ()), Err(DtbError::Truncated));
        }
    }

    #[test]
    fn malformed_structure_is_an_error() {
        type Build = fn(&mut DtbBuilder) -> &mut DtbBuilder;
        let cases: [(&str, Build); 10] = [
            ("no root", |dt| dt),
            ("unclosed root", |dt| dt.begin_node("")),
            ("extra END_NODE", |dt| {
                dt.begin_node("").end_node().end_node()
            }),
            ("named root", |dt| dt.begin_node("root").end_node()),
            ("second root", |dt| {
                dt.begin_node("").end_node().begin_node("").end_node()
            }),
            ("property after child", |dt| {
                dt.begin_node("")
                    .begin_node("a")
                    .end_node()
                    .prop("b", &[])
                    .end_node()
            }),
            // fdt 0.1.5 skips NOPs in some places and not others.
            ("NOP", |dt| dt.begin_node("").token(4).end_node()),
            // fdt would read four bytes of it.
            ("one-byte #address-cells", |dt| {
                dt.begin_node("").prop("#address-cells", &[2]).end_node()
            }),
            // Names itself after the "x" already in the strings block.
            ("value past the block", |dt| {
                dt.begin_node("")
                    .prop("x", &[])
                    .token(FDT_PROP)
                    .token(0x1000)
                    .token(0)
                    .end_node()
            }),
            ("non-UTF-8 name", |dt| {
                dt.begin_node("")
                    .token(FDT_BEGIN_NODE)
                    .token(0xff00_0000)
                    .end_node()
                    .end_node()
            }),
        ];
        for (what, build) in cases {
            let mut dt = DtbBuilder::default();
            build(&mut dt);
            assert_eq!(
                parse(&dt.finish()).map(|_| ()),
                Err(DtbError::BadStructure),
                "{what}"
            );
        }

        let mut too_deep = DtbBuilder::default();
        too_deep.begin_node("");
        for _ in 0..FDT_MAX_DEPTH {
            too_deep.begin_node("n");
        }
        for _ in 0..=FDT_MAX_DEPTH {
            too_deep.end_node();
        }
        assert_eq!(
            parse(&too_deep.finish()).map(|_| ()),
            Err(DtbError::BadStructure)
        );
    }

    #[test]
    fn random_bytes_are_an_error() {
        let mut state = 0x2545_f491_4f6c_dd1d;
        for len in 0..512 {
            let bytes: Vec<u8> = (0..len).map(|_| next_random(&mut state) as u8).collect();
            assert!(parse(&bytes).is_err());
        }
    }

    #[test]
    fn corrupted_fixtures_never_panic() {
        // Random byte changes anywhere in real DTBs: each parse may succeed
        // or fail, but must not panic, and neither may free_ranges after it.
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut out = [(PhysAddr(0), PhysAddr(0)); 32];
        for dtb in FIXTURES {
            for _ in 0..1000 {
                let mut corrupt = dtb.to_vec();
                for _ in 0..1 + next_random(&mut state) % 4 {
                    let pos = next_random(&mut state) as usize % corrupt.len();
                    corrupt[pos] = next_random(&mut state) as u8;
                }
                if let Ok(info) = parse(&corrupt) {
                    info.free_ranges(PhysAddr(0x4000_0000), &[], &mut out);
                }
            }
        }
    }
}
