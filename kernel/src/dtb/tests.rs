//! Host tests of the DTB parser on QEMU's own trees and broken ones.

use super::check::*;
use super::*;
use std::vec::Vec;

const SMP1_128M: &[u8] = include_bytes!("../../pure/fixtures/virt-smp1-128M.dtb");
const SMP4_1G: &[u8] = include_bytes!("../../pure/fixtures/virt-smp4-1G.dtb");
const SMP8_4G: &[u8] = include_bytes!("../../pure/fixtures/virt-smp8-4G.dtb");
const EL2: &[u8] = include_bytes!("../../pure/fixtures/virt-el2.dtb");
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
        for cpu in 0..NR_CPUS as u32 + 2 {
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
