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
use uapi::limits::PATH_MAX;

/// The end of the user half of the address space: 48-bit virtual addresses
/// through TTBR0 (Linux: `TASK_SIZE_64`). No segment may reach past it.
pub const TASK_SIZE: u64 = 1 << 48;

/// Size of one ELF64 program header, the only `e_phentsize` accepted, and
/// what the kernel passes to the program as `AT_PHENT`.
pub const PHENT_SIZE: u16 = 56;

/// More program headers than this is a malformed file, not a real program
/// (Linux's own cap is whatever fits in 64 KiB and one page).
const MAX_PHNUM: u16 = 64;

/// The bits of an address below the page size: its offset in its page.
const PAGE_MASK: u64 = PAGE_SIZE as u64 - 1;

/// How a segment may be accessed once mapped, from its `p_flags` (Linux:
/// `make_prot`, which turns them into `mmap`'s `PROT_*` bits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Prot {
    /// `PF_R`: the segment may be read (`PROT_READ`).
    pub read: bool,
    /// `PF_W`: the segment may be written (`PROT_WRITE`).
    pub write: bool,
    /// `PF_X`: the segment may be executed (`PROT_EXEC`).
    pub exec: bool,
}

/// One `PT_LOAD` segment: `memsz` bytes at `vaddr`, the first `filesz` of
/// them from the file at `offset`, the rest zero. `vaddr` and `offset` are
/// equal modulo the page size, so whole file pages can be mapped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `p_vaddr`: where the segment starts in memory (for `ET_DYN`, plus
    /// the base [`LoadPlan::with_base`] adds).
    pub vaddr: u64,
    /// `p_memsz`: its size in memory, in bytes; never less than `filesz`.
    pub memsz: u64,
    /// `p_filesz`: how many of its bytes come from the file.
    pub filesz: u64,
    /// `p_offset`: where in the file those bytes start.
    pub offset: u64,
    /// The access `p_flags` allows.
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
    if ph.p_filesz < 2 || ph.p_filesz > PATH_MAX as u64 {
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

/// `addr` rounded down to a page boundary. Only called on addresses at or
/// below [`TASK_SIZE`], so neither this nor [`page_up`] can overflow.
fn page_down(addr: u64) -> u64 {
    addr & !PAGE_MASK
}

/// `addr` rounded up to a page boundary (see [`page_down`]).
fn page_up(addr: u64) -> u64 {
    (addr + PAGE_MASK) & !PAGE_MASK
}

#[cfg(test)]
mod tests;
