//! Host tests of `elf`.

use super::*;
use elf::abi::PT_GNU_STACK;
use std::vec;
use std::vec::Vec;

/// Real programs, built from `fixtures/hello.c` (which says how) and
/// checked against `aarch64-linux-gnu-readelf -l`.
const HELLO_STATIC: &[u8] = include_bytes!("../../../pure/fixtures/hello-static.elf");
const HELLO_STATIC_PIE: &[u8] = include_bytes!("../../../pure/fixtures/hello-static-pie.elf");
const HELLO_DYNAMIC: &[u8] = include_bytes!("../../../pure/fixtures/hello-dynamic.elf");

/// `parse` of a whole file in memory.
fn parse(image: &[u8]) -> Result<LoadPlan, ElfError> {
    super::parse(image.len() as u64, &mut |offset, buf| {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|o| image.get(o..))
            .unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        n
    })
}

const RX: u32 = PF_R | PF_X;
const RW: u32 = PF_R | PF_W;
const EHDR_SIZE: usize = 64;

// Offsets of the ELF header fields the tests change.
const E_TYPE: usize = 16;
const E_MACHINE: usize = 18;
const E_ENTRY: usize = 24;
const E_PHOFF: usize = 32;
const E_PHENTSIZE: usize = 54;
const E_PHNUM: usize = 56;

/// A program header as the tests write it.
#[derive(Copy, Clone)]
struct Phdr {
    p_type: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

fn load(offset: u64, vaddr: u64, filesz: u64, memsz: u64, flags: u32) -> Phdr {
    Phdr {
        p_type: PT_LOAD,
        flags,
        offset,
        vaddr,
        filesz,
        memsz,
    }
}

fn other(p_type: u32, flags: u32) -> Phdr {
    Phdr {
        p_type,
        flags,
        offset: 0,
        vaddr: 0,
        filesz: 0,
        memsz: 0,
    }
}

/// An ELF64 AArch64 file written byte by byte, independent of the `elf`
/// crate: the header, the program headers right after it, and zeros up
/// to the end of the furthest segment.
fn build(e_type: u16, entry: u64, phdrs: &[Phdr]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"\x7fELF");
    out.extend_from_slice(&[2, 1, 1]); // ELFCLASS64, ELFDATA2LSB, EV_CURRENT
    out.resize(EI_NIDENT, 0);
    out.extend_from_slice(&e_type.to_le_bytes());
    out.extend_from_slice(&EM_AARCH64.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // e_version
    out.extend_from_slice(&entry.to_le_bytes());
    out.extend_from_slice(&(EHDR_SIZE as u64).to_le_bytes()); // e_phoff
    out.extend_from_slice(&0u64.to_le_bytes()); // e_shoff: no sections
    out.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    out.extend_from_slice(&(EHDR_SIZE as u16).to_le_bytes());
    out.extend_from_slice(&PHENT_SIZE.to_le_bytes());
    out.extend_from_slice(&(phdrs.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0; 6]); // e_shentsize, e_shnum, e_shstrndx
    assert_eq!(out.len(), EHDR_SIZE);
    for ph in phdrs {
        out.extend_from_slice(&ph.p_type.to_le_bytes());
        out.extend_from_slice(&ph.flags.to_le_bytes());
        out.extend_from_slice(&ph.offset.to_le_bytes());
        out.extend_from_slice(&ph.vaddr.to_le_bytes());
        out.extend_from_slice(&ph.vaddr.to_le_bytes()); // p_paddr
        out.extend_from_slice(&ph.filesz.to_le_bytes());
        out.extend_from_slice(&ph.memsz.to_le_bytes());
        out.extend_from_slice(&0x1000u64.to_le_bytes()); // p_align
    }
    let end = phdrs
        .iter()
        .filter(|ph| ph.p_type == PT_LOAD)
        .map(|ph| ph.offset.saturating_add(ph.filesz))
        .max()
        .unwrap_or(0);
    // Segments the tests put past a sane file size stay past the end.
    if end < 1 << 20 {
        out.resize(out.len().max(end as usize), 0);
    }
    out
}

/// The usual shape: text with the headers in it, then data and bss.
fn text_and_data() -> Vec<Phdr> {
    vec![
        load(0, 0x40_0000, 0x1000, 0x1000, RX),
        load(0x1000, 0x41_1000, 0x100, 0x2000, RW),
        other(PT_GNU_STACK, RW),
    ]
}

fn exec_with(phdrs: &[Phdr]) -> Vec<u8> {
    build(ET_EXEC, 0x40_0100, phdrs)
}

fn put_u16(image: &mut [u8], at: usize, value: u16) {
    image[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(image: &mut [u8], at: usize, value: u64) {
    image[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn rx() -> Prot {
    Prot {
        read: true,
        write: false,
        exec: true,
    }
}

fn rw() -> Prot {
    Prot {
        read: true,
        write: true,
        exec: false,
    }
}

/// What every accepted plan promises, checked independently of `parse`.
fn assert_sane(plan: &LoadPlan, file_len: usize) {
    assert!(!plan.segments.is_empty());
    for s in &plan.segments {
        assert!(s.memsz > 0 && s.filesz <= s.memsz);
        assert!(s.offset as u128 + s.filesz as u128 <= file_len as u128);
        assert!(s.vaddr as u128 + s.memsz as u128 <= TASK_SIZE as u128);
        assert_eq!(s.vaddr % 4096, s.offset % 4096);
    }
    for pair in plan.segments.windows(2) {
        let prev_last_page = (pair[0].vaddr + pair[0].memsz - 1) / 4096;
        assert!(pair[1].vaddr / 4096 > prev_last_page);
    }
    assert!(plan
        .segments
        .iter()
        .any(|s| s.prot.exec && (s.vaddr..s.vaddr + s.memsz).contains(&plan.entry)));
}

#[test]
fn real_static_executable() {
    let plan = parse(HELLO_STATIC).unwrap();
    assert_eq!(
        plan,
        LoadPlan {
            entry: 0x40_0120,
            segments: vec![
                Segment {
                    vaddr: 0x40_0000,
                    memsz: 0x1b0,
                    filesz: 0x1b0,
                    offset: 0,
                    prot: rx(),
                },
                Segment {
                    vaddr: 0x40_1fe8,
                    memsz: 0x2008,
                    filesz: 0x8,
                    offset: 0xfe8,
                    prot: rw(),
                },
            ],
            // The headers sit right after the ELF header, in the text.
            phdr_vaddr: 0x40_0040,
            phnum: 4,
            is_dyn: false,
            align: 0x1000,
            interp: None,
        }
    );
    assert_sane(&plan, HELLO_STATIC.len());
}

#[test]
fn real_static_pie_loads_at_any_page_aligned_base() {
    let plan = parse(HELLO_STATIC_PIE).unwrap();
    assert!(plan.is_dyn);
    assert_eq!((plan.entry, plan.phdr_vaddr, plan.phnum), (0x1cc, 0x40, 6));
    assert_eq!(
        plan.segments,
        vec![
            Segment {
                vaddr: 0,
                memsz: 0x270,
                filesz: 0x270,
                offset: 0,
                prot: rx(),
            },
            Segment {
                vaddr: 0x1f10,
                memsz: 0x20f8,
                filesz: 0xf8,
                offset: 0xf10,
                prot: rw(),
            },
        ]
    );

    let base = 0xaaaa_0000_0000;
    let moved = plan.with_base(base).unwrap();
    assert_eq!(moved.entry, base + 0x1cc);
    assert_eq!(moved.phdr_vaddr, base + 0x40);
    assert_eq!(moved.segments[0].vaddr, base);
    assert_eq!(moved.segments[1].vaddr, base + 0x1f10);
    // Only addresses move: the file side and the rest stay as they were.
    for (a, b) in plan.segments.iter().zip(&moved.segments) {
        assert_eq!(
            (a.offset, a.filesz, a.memsz, a.prot),
            (b.offset, b.filesz, b.memsz, b.prot)
        );
    }
    assert_eq!((moved.phnum, moved.is_dyn), (6, true));
    assert_sane(&moved, HELLO_STATIC_PIE.len());
    assert_eq!(plan.with_base(0), Ok(plan.clone()));
}

#[test]
fn built_executable_parses() {
    let image = exec_with(&text_and_data());
    let plan = parse(&image).unwrap();
    assert_eq!(plan.entry, 0x40_0100);
    assert_eq!(plan.phdr_vaddr, 0x40_0040);
    assert_eq!(plan.phnum, 3);
    assert!(!plan.is_dyn);
    assert_eq!(plan.segments.len(), 2);
    assert_eq!(plan.segments[1].memsz, 0x2000);
    assert_sane(&plan, image.len());
}

#[test]
fn prot_follows_p_flags() {
    let mut phdrs = vec![load(0, 0x40_0000, 0x1000, 0x1000, RX)];
    let cases = [
        (0, 0, false, false, false),
        (1, PF_R, true, false, false),
        (2, PF_W, false, true, false),
        (3, PF_R | PF_W | PF_X, true, true, true),
        (4, PF_X, false, false, true),
    ];
    let mut expected = Vec::new();
    for (page, flags, read, write, exec) in cases {
        phdrs.push(load(0, 0x50_0000 + page * 0x1000, 0, 0x10, flags));
        expected.push(Prot { read, write, exec });
    }
    let plan = parse(&exec_with(&phdrs)).unwrap();
    let prots: Vec<Prot> = plan.segments[1..].iter().map(|s| s.prot).collect();
    assert_eq!(prots, expected);
}

#[test]
fn phdr_vaddr_is_found_in_whichever_segment_holds_the_headers() {
    // The text starts at file offset 0x1000: the headers aren't in it.
    let phdrs = [
        load(0, 0x40_0000, 0x100, 0x100, PF_R),
        load(0x1000, 0x40_1000, 0x1000, 0x1000, RX),
    ];
    let plan = parse(&build(ET_EXEC, 0x40_1000, &phdrs)).unwrap();
    assert_eq!(plan.phdr_vaddr, 0x40_0040);

    // Headers in no segment: 0, plus the base for ET_DYN, as in Linux.
    let phdrs = [load(0x1000, 0x40_1000, 0x1000, 0x1000, RX)];
    assert_eq!(
        parse(&build(ET_EXEC, 0x40_1000, &phdrs))
            .unwrap()
            .phdr_vaddr,
        0
    );

    // Headers only partly loaded (filesz ends inside them): not found.
    let phdrs = [
        load(0, 0x40_0000, EHDR_SIZE as u64 + 8, 0x1000, PF_R),
        load(0x1000, 0x40_1000, 0x1000, 0x1000, RX),
    ];
    assert_eq!(
        parse(&build(ET_EXEC, 0x40_1000, &phdrs))
            .unwrap()
            .phdr_vaddr,
        0
    );
}

#[test]
fn empty_load_segments_are_skipped() {
    let mut phdrs = text_and_data();
    phdrs.insert(1, load(0, 0x40_0000, 0, 0, RW));
    let plan = parse(&exec_with(&phdrs)).unwrap();
    assert_eq!(plan.segments.len(), 2);
    assert_eq!(plan.phnum, 4);
}

#[test]
fn not_elf() {
    assert_eq!(parse(&[]), Err(ElfError::NotElf));
    assert_eq!(parse(b"\x7fELF"), Err(ElfError::NotElf));
    assert_eq!(parse(&[0; 4096]), Err(ElfError::NotElf));
    let mut image = exec_with(&text_and_data());
    image[1] = b'e';
    assert_eq!(parse(&image), Err(ElfError::NotElf));
    let mut image = exec_with(&text_and_data());
    image[6] = 2; // EI_VERSION
    assert_eq!(parse(&image), Err(ElfError::NotElf));
}

#[test]
fn not_elf64() {
    for class in [0, 1, 3] {
        let mut image = exec_with(&text_and_data());
        image[4] = class;
        assert_eq!(parse(&image), Err(ElfError::NotElf64), "class {class}");
    }
}

#[test]
fn not_little_endian() {
    for data in [0, 2, 3] {
        let mut image = exec_with(&text_and_data());
        image[5] = data;
        assert_eq!(parse(&image), Err(ElfError::NotLittleEndian), "data {data}");
    }
}

#[test]
fn not_aarch64() {
    let mut image = exec_with(&text_and_data());
    put_u16(&mut image, E_MACHINE, elf::abi::EM_X86_64);
    assert_eq!(parse(&image), Err(ElfError::NotAarch64));
}

#[test]
fn not_an_executable() {
    for e_type in [0, elf::abi::ET_REL, elf::abi::ET_CORE, 0xfe00] {
        let image = build(e_type, 0x40_0100, &text_and_data());
        assert_eq!(parse(&image), Err(ElfError::NotExecutable), "type {e_type}");
    }
}

#[test]
fn real_dynamic_executable_names_its_interpreter() {
    let plan = parse(HELLO_DYNAMIC).unwrap();
    assert_eq!(
        plan.interp.as_deref(),
        Some(&b"/lib/ld-linux-aarch64.so.1"[..])
    );
    assert!(plan.is_dyn);
    assert_eq!((plan.entry, plan.phdr_vaddr, plan.phnum), (0x25c, 0x40, 8));
    assert_eq!(plan.segments.len(), 2);
    assert_sane(&plan, HELLO_DYNAMIC.len());
    assert_eq!(parse(HELLO_STATIC).unwrap().interp, None);
}

/// A program whose `PT_INTERP` holds `path` (its NUL included), put at
/// the end of the file.
fn with_interp(path: &[u8]) -> Vec<u8> {
    let mut phdrs = text_and_data();
    phdrs.insert(0, other(PT_INTERP, PF_R));
    let mut image = exec_with(&phdrs);
    let at = image.len() as u64;
    image.extend_from_slice(path);
    // The PT_INTERP header is the first: p_offset at 8, p_filesz at 32.
    let ph = EHDR_SIZE;
    put_u64(&mut image, ph + 8, at);
    put_u64(&mut image, ph + 32, path.len() as u64);
    image
}

#[test]
fn interpreter_path_is_checked_as_linux_does() {
    let plan = parse(&with_interp(b"/lib/ld.so\0")).unwrap();
    assert_eq!(plan.interp.as_deref(), Some(&b"/lib/ld.so"[..]));
    // Too short, not NUL-terminated, a NUL inside, longer than PATH_MAX.
    for path in [&b"\0"[..], b"/lib/ld.so", b"/lib\0ld.so\0"] {
        assert_eq!(
            parse(&with_interp(path)),
            Err(ElfError::BadInterp),
            "{path:?}"
        );
    }
    let mut long = vec![b'a'; 4096];
    long.push(0);
    assert_eq!(parse(&with_interp(&long)), Err(ElfError::BadInterp));
    // Past the end of the file.
    let mut image = with_interp(b"/lib/ld.so\0");
    image.truncate(image.len() - 1);
    assert_eq!(parse(&image), Err(ElfError::Truncated));
}

#[test]
fn align_is_the_largest_power_of_two_p_align() {
    let mut image = exec_with(&text_and_data());
    assert_eq!(parse(&image).unwrap().align, 0x1000);
    // p_align of the second header (the data segment) at 48.
    let data = EHDR_SIZE + usize::from(PHENT_SIZE);
    put_u64(&mut image, data + 48, 0x1_0000);
    assert_eq!(parse(&image).unwrap().align, 0x1_0000);
    // Not a power of two, or below a page: ignored.
    put_u64(&mut image, data + 48, 0x3_0000);
    assert_eq!(parse(&image).unwrap().align, 0x1000);
    put_u64(&mut image, data + 48, 8);
    assert_eq!(parse(&image).unwrap().align, 0x1000);
}

#[test]
fn truncated() {
    let image = exec_with(&text_and_data());
    assert_eq!(parse(&image[..EI_NIDENT]), Err(ElfError::Truncated));
    assert_eq!(parse(&image[..EHDR_SIZE - 1]), Err(ElfError::Truncated));
    // The program headers run past the end of the file.
    let headers_end = EHDR_SIZE + 3 * usize::from(PHENT_SIZE);
    assert_eq!(parse(&image[..headers_end - 1]), Err(ElfError::Truncated));
    for phoff in [image.len() as u64, u64::MAX - 8, u64::MAX] {
        let mut image = image.clone();
        put_u64(&mut image, E_PHOFF, phoff);
        assert_eq!(
            parse(&image),
            Err(ElfError::Truncated),
            "e_phoff {phoff:#x}"
        );
    }
}

#[test]
fn bad_phentsize() {
    for size in [0, 32, 55, 57, 64, u16::MAX] {
        let mut image = exec_with(&text_and_data());
        put_u16(&mut image, E_PHENTSIZE, size);
        assert_eq!(
            parse(&image),
            Err(ElfError::BadPhentsize),
            "e_phentsize {size}"
        );
    }
}

#[test]
fn at_most_64_program_headers() {
    let mut phdrs = text_and_data();
    phdrs.resize(64, other(elf::abi::PT_NOTE, PF_R));
    assert_eq!(parse(&exec_with(&phdrs)).unwrap().phnum, 64);
    phdrs.push(other(elf::abi::PT_NOTE, PF_R));
    assert_eq!(parse(&exec_with(&phdrs)), Err(ElfError::TooManyPhdrs));

    let mut image = exec_with(&text_and_data());
    put_u16(&mut image, E_PHNUM, 0xffff); // PN_XNUM
    assert_eq!(parse(&image), Err(ElfError::TooManyPhdrs));
}

#[test]
fn no_load_segment() {
    assert_eq!(parse(&exec_with(&[])), Err(ElfError::NoLoadSegment));
    let phdrs = [other(PT_GNU_STACK, RW), load(0, 0x40_0000, 0, 0, RX)];
    assert_eq!(parse(&exec_with(&phdrs)), Err(ElfError::NoLoadSegment));
}

#[test]
fn filesz_over_memsz() {
    let mut phdrs = text_and_data();
    phdrs[1].filesz = phdrs[1].memsz + 1;
    assert_eq!(parse(&exec_with(&phdrs)), Err(ElfError::FileszOverMemsz));
}

#[test]
fn segment_outside_file() {
    let image = exec_with(&text_and_data());
    // The data segment's last file byte is the file's last byte.
    assert_eq!(
        parse(&image[..image.len() - 1]),
        Err(ElfError::SegmentOutsideFile)
    );

    for (offset, filesz) in [(1 << 30, 0x100), (0x1000, u64::MAX - 0x1000), (u64::MAX, 1)] {
        let mut phdrs = text_and_data();
        phdrs[1].offset = offset;
        phdrs[1].filesz = filesz;
        phdrs[1].memsz = u64::MAX;
        let image = exec_with(&phdrs);
        assert_eq!(
            parse(&image),
            Err(ElfError::SegmentOutsideFile),
            "{offset:#x}+{filesz:#x}"
        );
    }
}

#[test]
fn segments_out_of_order_or_overlapping() {
    let text = load(0, 0x40_0000, 0x1000, 0x1000, RX);
    let cases = [
        // Out of order.
        [text, load(0x1000, 0x30_0000, 0x100, 0x100, RW)],
        // Overlapping bytes.
        [text, load(0x1000, 0x40_0000, 0x100, 0x100, RW)],
        // Disjoint bytes, but the data starts in the text's last page.
        [
            load(0, 0x40_0000, 0x800, 0x800, RX),
            load(0x1900, 0x40_0900, 0x100, 0x100, RW),
        ],
    ];
    for (i, phdrs) in cases.iter().enumerate() {
        assert_eq!(
            parse(&exec_with(phdrs)),
            Err(ElfError::SegmentsOverlap),
            "case {i}"
        );
    }
    // Back to back on the next page is fine.
    let phdrs = [text, load(0x1000, 0x40_1000, 0x100, 0x100, RW)];
    assert!(parse(&exec_with(&phdrs)).is_ok());
}

#[test]
fn vaddr_and_offset_must_agree_within_a_page() {
    let mut phdrs = text_and_data();
    phdrs[1].vaddr += 8;
    assert_eq!(parse(&exec_with(&phdrs)), Err(ElfError::Misaligned));
    // Unaligned is fine as long as both are off by the same amount.
    let mut phdrs = text_and_data();
    phdrs[1].vaddr += 8;
    phdrs[1].offset += 8;
    assert!(parse(&exec_with(&phdrs)).is_ok());
}

#[test]
fn addresses_must_fit_below_task_size() {
    // The last segment may end exactly at TASK_SIZE, not a byte past it.
    let top = TASK_SIZE - 0x2000;
    let mut phdrs = text_and_data();
    phdrs[1].vaddr = top;
    phdrs[1].offset = 0x1000;
    phdrs[1].memsz = 0x2000;
    assert!(parse(&exec_with(&phdrs)).is_ok());
    phdrs[1].memsz = 0x2001;
    assert_eq!(parse(&exec_with(&phdrs)), Err(ElfError::BadAddress));

    for (vaddr, memsz) in [
        (TASK_SIZE, 0x100),
        (0xffff_0000_0000_0000, 0x100),  // a kernel address
        (0xffff_ffff_ffff_f000, 0x1000), // wraps to 0
        (0x41_1000, u64::MAX),
    ] {
        let mut phdrs = text_and_data();
        phdrs[1].vaddr = vaddr;
        phdrs[1].memsz = memsz;
        assert_eq!(
            parse(&exec_with(&phdrs)),
            Err(ElfError::BadAddress),
            "{vaddr:#x}"
        );
    }
}

#[test]
fn entry_must_be_in_an_executable_segment() {
    for entry in [
        0,
        0x3f_ffff,
        0x40_1000, // one past the end of the text
        0x41_1000, // in the data
        0x41_2fff, // in the bss
        u64::MAX,
    ] {
        let mut image = exec_with(&text_and_data());
        put_u64(&mut image, E_ENTRY, entry);
        assert_eq!(
            parse(&image),
            Err(ElfError::EntryNotExecutable),
            "{entry:#x}"
        );
    }
    let mut image = exec_with(&text_and_data());
    put_u64(&mut image, E_ENTRY, 0x40_0fff);
    assert_eq!(parse(&image).unwrap().entry, 0x40_0fff);
}

#[test]
fn with_base_checks_the_base() {
    let exec = parse(HELLO_STATIC).unwrap();
    assert_eq!(exec.with_base(0), Err(ElfError::NotRelocatable));
    assert_eq!(exec.with_base(0x1000), Err(ElfError::NotRelocatable));

    let pie = parse(HELLO_STATIC_PIE).unwrap();
    for base in [1, 0x800, 0x1_0000_0008] {
        assert_eq!(pie.with_base(base), Err(ElfError::Misaligned), "{base:#x}");
    }
    // The data segment ends at 0x4008: the highest base leaves it ending
    // at TASK_SIZE.
    let highest = TASK_SIZE - 0x5000;
    assert!(pie.with_base(highest).is_ok());
    for base in [highest + 0x1000, TASK_SIZE, 0xffff_ffff_ffff_f000] {
        assert_eq!(pie.with_base(base), Err(ElfError::BadAddress), "{base:#x}");
    }
}

#[test]
fn header_fields_set_to_anything_never_panic() {
    let image = exec_with(&text_and_data());
    let fields: &[(usize, usize)] = &[
        (E_TYPE, 2),
        (E_ENTRY, 8),
        (E_PHOFF, 8),
        (E_PHENTSIZE, 2),
        (E_PHNUM, 2),
    ];
    let mut state = 0x2545_f491_4f6c_dd1d;
    for _ in 0..20_000 {
        let mut image = image.clone();
        let (at, len) = fields[next_random(&mut state) as usize % fields.len()];
        let value = interesting(&mut state).to_le_bytes();
        image[at..at + len].copy_from_slice(&value[..len]);
        if let Ok(plan) = parse(&image) {
            assert_sane(&plan, image.len());
        }
    }
}

#[test]
fn program_header_fields_set_to_anything_never_panic() {
    let phdrs = text_and_data();
    let image = exec_with(&phdrs);
    let mut state = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..50_000 {
        let mut image = image.clone();
        for _ in 0..1 + next_random(&mut state) % 3 {
            let ph = EHDR_SIZE + usize::from(PHENT_SIZE) * (next_random(&mut state) as usize % 3);
            // p_type/p_flags are 4 bytes, the rest 8.
            let (at, len) = match next_random(&mut state) % 8 {
                0 => (0, 4),
                1 => (4, 4),
                field => (8 * (field as usize - 1), 8),
            };
            let value = interesting(&mut state).to_le_bytes();
            image[ph + at..ph + at + len].copy_from_slice(&value[..len]);
        }
        if let Ok(plan) = parse(&image) {
            assert_sane(&plan, image.len());
            if let Ok(moved) = plan.with_base(next_random(&mut state) & 0xffff_f000) {
                assert_sane(&moved, image.len());
            }
        }
    }
}

#[test]
fn corrupted_real_binaries_never_panic() {
    let mut state = 0x0123_4567_89ab_cdef;
    for original in [HELLO_STATIC, HELLO_STATIC_PIE] {
        for _ in 0..20_000 {
            let mut image = original.to_vec();
            // Mostly hit the headers, where the parser looks.
            for _ in 0..1 + next_random(&mut state) % 8 {
                let span = if next_random(&mut state).is_multiple_of(4) {
                    image.len()
                } else {
                    0x200
                };
                let at = next_random(&mut state) as usize % span;
                image[at] = next_random(&mut state) as u8;
            }
            let keep = match next_random(&mut state) % 8 {
                0 => next_random(&mut state) as usize % image.len(),
                _ => image.len(),
            };
            image.truncate(keep);
            if let Ok(plan) = parse(&image) {
                assert_sane(&plan, image.len());
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut state = 0xdead_beef_cafe_f00d;
    for _ in 0..20_000 {
        let len = next_random(&mut state) as usize % 1024;
        let mut image: Vec<u8> = (0..len).map(|_| next_random(&mut state) as u8).collect();
        if len >= EHDR_SIZE && next_random(&mut state).is_multiple_of(2) {
            // A valid ELF header over random program headers, so the
            // random bytes reach the segment checks.
            let header = build(ET_EXEC, interesting(&mut state), &[]);
            image[..EHDR_SIZE].copy_from_slice(&header);
            let phnum = next_random(&mut state) % 8;
            put_u16(&mut image, E_PHNUM, phnum as u16);
            put_u64(&mut image, E_PHOFF, next_random(&mut state) % 512);
        }
        if let Ok(plan) = parse(&image) {
            assert_sane(&plan, image.len());
        }
    }
}

/// Deterministic pseudo-random numbers (xorshift64), so a failure replays.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A random value, often one near a boundary the parser checks.
fn interesting(state: &mut u64) -> u64 {
    const EDGES: [u64; 12] = [
        0,
        1,
        8,
        0x38,
        0x40,
        0xfff,
        0x1000,
        0x40_0000,
        TASK_SIZE - 0x1000,
        TASK_SIZE,
        u64::MAX - 0xfff,
        u64::MAX,
    ];
    let r = next_random(state);
    match r % 4 {
        0 => r >> 2,
        1 => (r >> 2) % 0x2_0000,
        _ => EDGES[(r >> 2) as usize % EDGES.len()],
    }
}
