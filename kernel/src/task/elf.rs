//! Reading an executable's ELF headers into a [`LoadPlan`]: which bytes of
//! the file go where in the new address space, with what access, and where
//! the program starts (Linux: `load_elf_binary` in `fs/binfmt_elf.c`).
//!
//! Only the ELF header and the program headers are read, as Linux does:
//! sections are the linker's view of a file, segments the loader's. Each
//! `PT_LOAD` segment asks for `memsz` bytes at `vaddr`, the first `filesz` of
//! them copied from the file at `offset` and the rest zero (that is `.bss`):
//!
//! ```text
//!   file:    | ELF header, program headers, .text, .rodata | .data |
//!   memory:  0x400000  r-x  [ headers .text .rodata ]
//!            0x401fe8  rw-  [ .data | .bss, zero-filled ]
//! ```
//!
//! The file comes from user space, so every field is checked before it is
//! used: a malformed file is an [`ElfError`] (`execve` fails with ENOEXEC),
//! never a panic or an overflow.
//!
//! A dynamically linked program names its interpreter (`ld.so`) in
//! `PT_INTERP`: the plan carries that path, and exec loads the interpreter
//! with a plan of its own.
//!
//! Where we simplify:
//! - `PT_LOAD` segments must come in address order and no two may share a
//!   page, so each user page belongs to one segment. Linux maps them in turn
//!   and lets a later mapping replace a shared page.
//! - A segment must lie inside the file, and the entry point inside an
//!   executable segment. Linux checks neither: the program gets SIGBUS or
//!   SIGSEGV when it first touches the bad page.
//! - An `ET_DYN` file goes wherever the caller says with
//!   [`LoadPlan::with_base`], and [`LoadPlan::align`] says what Linux
//!   aligns that to; Linux adds a random offset, which we leave out.
//! - `PT_GNU_STACK` is ignored, as faultline's user stack is never
//!   executable. Linux makes it executable when that header has `PF_X`.
//! - No arm64 extras: `PT_GNU_PROPERTY` (BTI) and `PT_AARCH64_MEMTAG_MTE`
//!   are ignored.

use alloc::vec::Vec;

use elf::abi::{EI_NIDENT, EM_AARCH64, ET_DYN, ET_EXEC, PF_R, PF_W, PF_X, PT_INTERP, PT_LOAD};
use elf::endian::LittleEndian;
use elf::file::{parse_ident, Class, FileHeader, ELF64_EHDR_TAILSIZE};
use elf::segment::{ProgramHeader, SegmentTable};
use elf::ParseError;

use crate::mm::addr::PAGE_SIZE;

/// The end of the user half of the address space: 48-bit virtual addresses
/// through TTBR0 (Linux: `TASK_SIZE_64`). No segment may reach past it.
pub const TASK_SIZE: u64 = 1 << 48;

/// Size of one ELF64 program header, the only `e_phentsize` accepted, and
/// what the kernel passes to the program as `AT_PHENT`.
pub const PHENT_SIZE: u16 = 56;

/// More program headers than this is a malformed file, not a real program
/// (Linux's own cap is whatever fits in 64 KiB and one page).
const MAX_PHNUM: u16 = 64;

const PAGE_MASK: u64 = PAGE_SIZE as u64 - 1;

/// How a segment may be accessed once mapped, from its `p_flags` (Linux:
/// `make_prot`, which turns them into `mmap`'s `PROT_*` bits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Prot {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

/// One `PT_LOAD` segment: `memsz` bytes at `vaddr`, the first `filesz` of
/// them from the file at `offset`, the rest zero. `vaddr` and `offset` are
/// equal modulo the page size, so whole file pages can be mapped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub filesz: u64,
    pub offset: u64,
    pub prot: Prot,
}

/// Everything `execve` needs from the ELF headers to build the new address
/// space and the program's auxiliary vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    /// Where the program starts (`e_entry`, `AT_ENTRY`).
    pub entry: u64,
    /// The `PT_LOAD` segments, in address order, none sharing a page.
    pub segments: Vec<Segment>,
    /// Where the program headers are in memory, for `AT_PHDR`: the C library
    /// walks them to find its TLS template. 0 when no segment loads them (as
    /// in Linux, where `AT_PHDR` is then just the load bias).
    pub phdr_vaddr: u64,
    /// Number of program headers (`AT_PHNUM`); each is [`PHENT_SIZE`] bytes.
    pub phnum: u16,
    /// `ET_DYN`: a PIE or a shared object (ld.so), linked at 0 and
    /// runnable at any page-aligned base; see [`LoadPlan::with_base`].
    /// `ET_EXEC` runs where it was linked.
    pub is_dyn: bool,
    /// The largest power-of-two `p_align` of the `PT_LOAD` segments, at
    /// least a page: Linux aligns an `ET_DYN` program's base to it
    /// (`maximum_alignment`), so 64K-aligned segments stay 64K-aligned.
    pub align: u64,
    /// The interpreter's path from `PT_INTERP`, without its NUL: the
    /// program is dynamically linked and `ld.so` must be loaded too.
    pub interp: Option<Vec<u8>>,
}

/// Why a file can't be run. `execve` returns ENOEXEC for all of these (Linux
/// returns EINVAL for some of the address checks).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// No ELF magic, or an unknown `EI_VERSION`.
    NotElf,
    /// A 32-bit (or unknown class) file.
    NotElf64,
    /// Big-endian (or unknown) byte order.
    NotLittleEndian,
    /// Built for another architecture (`e_machine` isn't `EM_AARCH64`).
    NotAarch64,
    /// Not an executable: a relocatable object, core dump, ...
    NotExecutable,
    /// A `PT_INTERP` that is empty, longer than `PATH_MAX` or not
    /// NUL-terminated.
    BadInterp,
    /// `e_phentsize` isn't the size of an ELF64 program header.
    BadPhentsize,
    /// More than 64 program headers.
    TooManyPhdrs,
    /// The file ends inside its ELF header or program headers.
    Truncated,
    /// Nothing to load: no `PT_LOAD` segment (with a non-zero size).
    NoLoadSegment,
    /// A segment takes more bytes from the file than it has in memory.
    FileszOverMemsz,
    /// A segment's file bytes run past the end of the file.
    SegmentOutsideFile,
    /// Segments out of address order, overlapping or sharing a page.
    SegmentsOverlap,
    /// A segment's `vaddr` and `offset` differ within a page, so its file
    /// pages can't be mapped in place; or a load base isn't page-aligned.
    Misaligned,
    /// A segment wraps around or reaches past [`TASK_SIZE`].
    BadAddress,
    /// The entry point isn't inside an executable segment.
    EntryNotExecutable,
    /// [`LoadPlan::with_base`] on an `ET_EXEC` file, which can't move.
    NotRelocatable,
}

/// Longest `PT_INTERP` path, with its NUL (Linux: `PATH_MAX`).
const PATH_MAX: u64 = 4096;

/// Reads the headers of a `file_len`-byte file through `read_at` (which
/// fills a buffer from a file offset, as pread: the bytes it read) and
/// describes how to load it. Only the ELF header, the program headers and
/// the interpreter's path are read (Linux: `elf_read` of each), never the
/// whole file.
pub fn parse(
    file_len: u64,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> usize,
) -> Result<LoadPlan, ElfError> {
    let mut head = [0u8; EI_NIDENT + ELF64_EHDR_TAILSIZE];
    let got = read_at(0, &mut head);
    let ehdr = parse_ehdr(&head[..got])?;
    let table = read_phdrs(read_at, &ehdr)?;
    let phdrs = SegmentTable::new(ehdr.endianness, ehdr.class, &table);
    let phdrs_len = u64::from(ehdr.e_phnum) * u64::from(PHENT_SIZE);

    let mut segments: Vec<Segment> = Vec::new();
    let mut phdr_vaddr = None;
    let mut interp = None;
    let mut align = PAGE_SIZE as u64;
    for ph in phdrs.iter() {
        match ph.p_type {
            // The first one counts, as in Linux.
            PT_INTERP if interp.is_none() => interp = Some(read_interp(read_at, &ph, file_len)?),
            PT_LOAD => {
                let segment = check_load(&ph, file_len)?;
                if ph.p_align.is_power_of_two() {
                    align = align.max(ph.p_align);
                }
                // Linux maps nothing for an empty segment, so neither do we.
                if segment.memsz == 0 {
                    continue;
                }
                if let Some(prev) = segments.last() {
                    if page_down(segment.vaddr) < page_up(prev.vaddr + prev.memsz) {
                        return Err(ElfError::SegmentsOverlap);
                    }
                }
                // Like Linux (since 5.18), find the headers in whichever
                // segment loads them, rather than trusting PT_PHDR, which
                // nothing obliges a file to have. read_phdrs() has checked
                // e_phoff is inside the file, so nothing here overflows.
                if phdr_vaddr.is_none() && ehdr.e_phoff >= segment.offset {
                    let in_segment = ehdr.e_phoff - segment.offset;
                    if in_segment + phdrs_len <= segment.filesz {
                        phdr_vaddr = Some(segment.vaddr + in_segment);
                    }
                }
                segments.push(segment);
            }
            _ => {}
        }
    }

    if segments.is_empty() {
        return Err(ElfError::NoLoadSegment);
    }
    let entry = ehdr.e_entry;
    let entry_ok = segments
        .iter()
        .any(|s| s.prot.exec && s.vaddr <= entry && entry - s.vaddr < s.memsz);
    if !entry_ok {
        return Err(ElfError::EntryNotExecutable);
    }

    Ok(LoadPlan {
        entry,
        segments,
        phdr_vaddr: phdr_vaddr.unwrap_or(0),
        phnum: ehdr.e_phnum,
        is_dyn: ehdr.e_type == ET_DYN,
        align,
        interp,
    })
}

/// Fills `buf` from the file at `offset`: false if the file ends first.
fn read_exact(
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    offset: u64,
    buf: &mut [u8],
) -> bool {
    read_at(offset, buf) == buf.len()
}

/// The interpreter's path of a `PT_INTERP` header (Linux: checked in
/// `load_elf_binary`: 2 to `PATH_MAX` bytes, the last a NUL).
fn read_interp(
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ph: &ProgramHeader,
    file_len: u64,
) -> Result<Vec<u8>, ElfError> {
    if ph.p_filesz < 2 || ph.p_filesz > PATH_MAX {
        return Err(ElfError::BadInterp);
    }
    match ph.p_offset.checked_add(ph.p_filesz) {
        Some(end) if end <= file_len => {}
        _ => return Err(ElfError::Truncated),
    }
    let mut path = alloc::vec![0u8; ph.p_filesz as usize];
    if !read_exact(read_at, ph.p_offset, &mut path) {
        return Err(ElfError::Truncated);
    }
    if path.pop() != Some(0) || path.contains(&0) {
        return Err(ElfError::BadInterp);
    }
    Ok(path)
}

impl LoadPlan {
    /// The same plan for an `ET_DYN` file loaded `base` bytes up from where
    /// it was linked (Linux's `load_bias`): every address moves by `base`.
    pub fn with_base(&self, base: u64) -> Result<LoadPlan, ElfError> {
        if !self.is_dyn {
            return Err(ElfError::NotRelocatable);
        }
        // Moving by whole pages keeps each vaddr congruent to its offset.
        if base & PAGE_MASK != 0 {
            return Err(ElfError::Misaligned);
        }
        let moved = |addr: u64| addr.checked_add(base).ok_or(ElfError::BadAddress);
        let segments = self
            .segments
            .iter()
            .map(|s| {
                let vaddr = moved(s.vaddr)?;
                check_user_range(vaddr, s.memsz)?;
                Ok(Segment { vaddr, ..*s })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LoadPlan {
            entry: moved(self.entry)?,
            segments,
            phdr_vaddr: moved(self.phdr_vaddr)?,
            interp: self.interp.clone(),
            ..*self
        })
    }
}

/// The ELF header, checked to be a little-endian ELF64 AArch64 executable.
fn parse_ehdr(image: &[u8]) -> Result<FileHeader<LittleEndian>, ElfError> {
    let ident = image.get(..EI_NIDENT).ok_or(ElfError::NotElf)?;
    // Parsing as LittleEndian makes a big-endian file an error here.
    let ident = parse_ident::<LittleEndian>(ident).map_err(|err| match err {
        ParseError::UnsupportedElfClass(_) => ElfError::NotElf64,
        ParseError::UnsupportedElfEndianness(_) => ElfError::NotLittleEndian,
        _ => ElfError::NotElf,
    })?;
    if ident.1 != Class::ELF64 {
        return Err(ElfError::NotElf64);
    }
    let tail = image
        .get(EI_NIDENT..EI_NIDENT + ELF64_EHDR_TAILSIZE)
        .ok_or(ElfError::Truncated)?;
    let ehdr = FileHeader::parse_tail(ident, tail).map_err(|_| ElfError::Truncated)?;

    if ehdr.e_machine != EM_AARCH64 {
        return Err(ElfError::NotAarch64);
    }
    if ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN {
        return Err(ElfError::NotExecutable);
    }
    Ok(ehdr)
}

/// The program header table, read from the file.
fn read_phdrs(
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ehdr: &FileHeader<LittleEndian>,
) -> Result<Vec<u8>, ElfError> {
    if ehdr.e_phentsize != PHENT_SIZE {
        return Err(ElfError::BadPhentsize);
    }
    // Also catches PN_XNUM (0xffff), the escape to a count stored in the
    // first section header: a real program has a handful.
    if ehdr.e_phnum > MAX_PHNUM {
        return Err(ElfError::TooManyPhdrs);
    }
    let len = usize::from(ehdr.e_phnum) * usize::from(PHENT_SIZE);
    let mut table = alloc::vec![0u8; len];
    if ehdr.e_phoff.checked_add(len as u64).is_none()
        || !read_exact(read_at, ehdr.e_phoff, &mut table)
    {
        return Err(ElfError::Truncated);
    }
    Ok(table)
}

/// A `PT_LOAD` header checked on its own; its neighbours are the caller's.
fn check_load(ph: &ProgramHeader, file_len: u64) -> Result<Segment, ElfError> {
    if ph.p_filesz > ph.p_memsz {
        return Err(ElfError::FileszOverMemsz);
    }
    match ph.p_offset.checked_add(ph.p_filesz) {
        Some(end) if end <= file_len => {}
        _ => return Err(ElfError::SegmentOutsideFile),
    }
    if (ph.p_vaddr ^ ph.p_offset) & PAGE_MASK != 0 {
        return Err(ElfError::Misaligned);
    }
    check_user_range(ph.p_vaddr, ph.p_memsz)?;
    Ok(Segment {
        vaddr: ph.p_vaddr,
        memsz: ph.p_memsz,
        filesz: ph.p_filesz,
        offset: ph.p_offset,
        prot: Prot {
            read: ph.p_flags & PF_R != 0,
            write: ph.p_flags & PF_W != 0,
            exec: ph.p_flags & PF_X != 0,
        },
    })
}

/// `[vaddr, vaddr + memsz)` must not wrap around or reach past [`TASK_SIZE`].
fn check_user_range(vaddr: u64, memsz: u64) -> Result<(), ElfError> {
    match vaddr.checked_add(memsz) {
        Some(end) if end <= TASK_SIZE => Ok(()),
        _ => Err(ElfError::BadAddress),
    }
}

// Only called on addresses at or below TASK_SIZE, so neither can overflow.
fn page_down(addr: u64) -> u64 {
    addr & !PAGE_MASK
}

fn page_up(addr: u64) -> u64 {
    (addr + PAGE_MASK) & !PAGE_MASK
}

#[cfg(test)]
mod tests {
    use super::*;
    use elf::abi::PT_GNU_STACK;
    use std::vec;
    use std::vec::Vec;

    /// Real programs, built from `fixtures/hello.c` (which says how) and
    /// checked against `aarch64-linux-gnu-readelf -l`.
    const HELLO_STATIC: &[u8] = include_bytes!("../../pure/fixtures/hello-static.elf");
    const HELLO_STATIC_PIE: &[u8] = include_bytes!("../../pure/fixtures/hello-static-pie.elf");
    const HELLO_DYNAMIC: &[u8] = include_bytes!("../../pure/fixtures/hello-dynamic.elf");

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
                let ph =
                    EHDR_SIZE + usize::from(PHENT_SIZE) * (next_random(&mut state) as usize % 3);
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
}
