//! What the profiler needs to know about the code it traces, read straight
//! from the ELF images: which kernel instructions call, return or leave an
//! exception (the shadow call stack follows them), where the exception
//! vectors are, and which system call each user `svc` makes.
//!
//! QEMU's exec log gives only pcs, so the kind of instruction at a pc must
//! come from the image. Decoding the few encodings involved here replaces
//! a disassembler run (objdump) and its text parsing.

use std::collections::{HashMap, HashSet};

use object::{Object, ObjectSection, ObjectSymbol, SectionKind};

/// How an instruction moves the shadow call stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// `bl` or `blr`: the next instruction runs one frame deeper.
    Call,
    /// `ret`, `retaa`, `retab`: back to a caller.
    Return,
    /// `eret`: out of an exception.
    ExceptionReturn,
}

/// The kind of branch `word` is, if it is one the call stack follows.
/// The pointer-authenticating calls (`blraa`...) are left out, as the
/// kernel does not use them.
pub fn branch(word: u32) -> Option<Branch> {
    const RETAA: u32 = 0xd65f_0bff;
    const RETAB: u32 = 0xd65f_0fff;
    const ERET: u32 = 0xd69f_03e0;
    if word & 0xfc00_0000 == 0x9400_0000 || word & 0xffff_fc1f == 0xd63f_0000 {
        Some(Branch::Call)
    } else if word & 0xffff_fc1f == 0xd65f_0000 || word == RETAA || word == RETAB {
        Some(Branch::Return)
    } else if word == ERET {
        Some(Branch::ExceptionReturn)
    } else {
        None
    }
}

/// Whether `word` is `svc #imm` (any immediate: Linux's ABI uses 0).
pub fn is_svc(word: u32) -> bool {
    word & 0xffe0_001f == 0xd400_0001
}

/// The value `word` puts in x8/w8 if it is `mov x8, #imm` (MOVZ, either
/// width, any shift): how a system call's number is loaded. Numbers are
/// far below 65536, so the assembler never needs MOVN or ORR for them.
pub fn syscall_number_load(word: u32) -> Option<u64> {
    // sf opc=10 100101 hw imm16 Rd: 0x52800000 for w, 0xd2800000 for x.
    if word & 0x7f80_0000 != 0x5280_0000 || word & 0x1f != 8 {
        return None;
    }
    let imm16 = u64::from((word >> 5) & 0xffff);
    let shift = 16 * ((word >> 21) & 0x3);
    let is_64bit = word & 0x8000_0000 != 0;
    // hw = 2 or 3 is only valid with sf = 1.
    (is_64bit || shift < 32).then_some(imm16 << shift)
}

/// How far before an `svc` to look for the load of its number (what a
/// compiler puts between the two is short: argument moves, at most).
const SVC_LOOKBACK: usize = 8;

/// An instruction of an image's code, with its link-time address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    /// Where it sits.
    pub address: u64,
    /// Its encoding.
    pub word: u32,
    /// Whether a symbol starts here: the look-back for an `svc`'s number
    /// stays within one function.
    pub starts_symbol: bool,
}

/// The instructions of an ELF image's code sections, in address order per
/// section, without the data (literal pools, jump tables) that AArch64's
/// `$d` mapping symbols mark.
pub fn instructions(data: &[u8]) -> object::Result<Vec<Insn>> {
    let file = object::File::parse(data)?;
    let mut insns = Vec::new();
    for section in file.sections() {
        if section.kind() != SectionKind::Text {
            continue;
        }
        // Mapping symbols ($x code, $d data) and the names that start
        // functions, inside this section.
        let mut mapping = Vec::new();
        let mut starts = HashSet::new();
        for symbol in file.symbols() {
            if symbol.section_index() != Some(section.index()) {
                continue;
            }
            let Ok(name) = symbol.name() else { continue };
            if let Some(kind) = name.strip_prefix('$') {
                match kind.split('.').next() {
                    Some("x") => mapping.push((symbol.address(), true)),
                    Some("d") => mapping.push((symbol.address(), false)),
                    _ => {}
                }
            } else if !name.is_empty() {
                starts.insert(symbol.address());
            }
        }
        insns.extend(code_words(
            section.address(),
            section.data()?,
            mapping,
            &starts,
        ));
    }
    Ok(insns)
}

/// The instructions in `bytes`, a code section loaded at `start`: every
/// 4-byte word except those a `$d` mapping symbol marks as data, up to the
/// next `$x`. `mapping` holds (address, is code) for each mapping symbol,
/// in any order; `starts` the addresses where symbols begin.
fn code_words(
    start: u64,
    bytes: &[u8],
    mut mapping: Vec<(u64, bool)>,
    starts: &HashSet<u64>,
) -> Vec<Insn> {
    mapping.sort_unstable();
    let mut next_mapping = mapping.iter().peekable();
    let mut is_code = true;
    let mut insns = Vec::new();
    for (address, chunk) in (start..).step_by(4).zip(bytes.chunks_exact(4)) {
        while let Some(&&(at, code)) = next_mapping.peek() {
            if at > address {
                break;
            }
            is_code = code;
            next_mapping.next();
        }
        if is_code {
            insns.push(Insn {
                address,
                word: u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]),
                starts_symbol: starts.contains(&address),
            });
        }
    }
    insns
}

/// Every call, return and `eret` among `insns`, by address.
pub fn branches(insns: &[Insn]) -> HashMap<u64, Branch> {
    insns
        .iter()
        .filter_map(|insn| Some((insn.address, branch(insn.word)?)))
        .collect()
}

/// Every `svc` among `insns`, with the system-call number loaded into x8
/// shortly before it in the same function (None if there is no such load,
/// e.g. a generic `syscall(nr, ...)` wrapper that takes it as an argument).
pub fn syscall_sites(insns: &[Insn]) -> HashMap<u64, Option<u64>> {
    let mut sites = HashMap::new();
    for (i, insn) in insns.iter().enumerate() {
        if !is_svc(insn.word) {
            continue;
        }
        let mut number = None;
        let mut next = insn.address;
        for earlier in insns[..i].iter().rev().take(SVC_LOOKBACK) {
            // Contiguous code only: a gap (data, another section) or the
            // start of the svc's own function ends the search.
            if earlier.address + 4 != next {
                break;
            }
            if let Some(nr) = syscall_number_load(earlier.word) {
                number = Some(nr);
                break;
            }
            if earlier.starts_symbol {
                break;
            }
            next = earlier.address;
        }
        sites.insert(insn.address, number);
    }
    sites
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_branches_the_stack_follows() {
        assert_eq!(branch(0x9400_0010), Some(Branch::Call)); // bl .+0x40
        assert_eq!(branch(0x97ff_fff0), Some(Branch::Call)); // bl .-0x40
        assert_eq!(branch(0xd63f_0100), Some(Branch::Call)); // blr x8
        assert_eq!(branch(0xd65f_03c0), Some(Branch::Return)); // ret
        assert_eq!(branch(0xd65f_0200), Some(Branch::Return)); // ret x16
        assert_eq!(branch(0xd65f_0bff), Some(Branch::Return)); // retaa
        assert_eq!(branch(0xd65f_0fff), Some(Branch::Return)); // retab
        assert_eq!(branch(0xd69f_03e0), Some(Branch::ExceptionReturn)); // eret
        assert_eq!(branch(0x1400_0010), None); // b
        assert_eq!(branch(0xd61f_0200), None); // br x16
        assert_eq!(branch(0xd503_201f), None); // nop
        assert_eq!(branch(0xd400_0001), None); // svc #0
    }

    #[test]
    fn decodes_svc_and_the_syscall_number_load() {
        assert!(is_svc(0xd400_0001)); // svc #0
        assert!(is_svc(0xd400_0021)); // svc #1
        assert!(!is_svc(0xd400_0002)); // hvc #0
        assert_eq!(syscall_number_load(0xd280_1d28), Some(233)); // mov x8, #233
        assert_eq!(syscall_number_load(0x5280_0e28), Some(113)); // mov w8, #113
        assert_eq!(syscall_number_load(0xd2a0_0028), Some(0x1_0000)); // mov x8, #0x10000
        assert_eq!(syscall_number_load(0xd280_1d29), None); // mov x9, #233
        assert_eq!(syscall_number_load(0xf280_1d28), None); // movk x8, #233
        assert_eq!(syscall_number_load(0x92800008), None); // mov x8, #-1 (movn)
        assert_eq!(syscall_number_load(0x52c0_0028), None); // hw=2 on w: invalid
    }

    /// An instruction, for short.
    fn insn(address: u64, word: u32, starts_symbol: bool) -> Insn {
        Insn {
            address,
            word,
            starts_symbol,
        }
    }

    #[test]
    fn finds_each_svc_number_within_its_function() {
        const SVC: u32 = 0xd400_0001;
        const NOP: u32 = 0xd503_201f;
        const MOV_X8_233: u32 = 0xd280_1d28;
        const MOV_X8_64: u32 = 0xd280_0808;
        let insns = [
            // madvise(): the number, argument moves, svc.
            insn(0x1000, MOV_X8_233, true),
            insn(0x1004, NOP, false),
            insn(0x1008, SVC, false),
            // syscall(nr, ...): no load of its own. The previous function's
            // load must not leak into it.
            insn(0x100c, NOP, true),
            insn(0x1010, SVC, false),
            // A later load wins over an earlier one.
            insn(0x2000, MOV_X8_233, true),
            insn(0x2004, MOV_X8_64, false),
            insn(0x2008, SVC, false),
        ];
        let sites = syscall_sites(&insns);
        assert_eq!(sites.len(), 3);
        assert_eq!(sites[&0x1008], Some(233));
        assert_eq!(sites[&0x1010], None);
        assert_eq!(sites[&0x2008], Some(64));

        let far: Vec<_> = std::iter::once(insn(0x3000, MOV_X8_64, true))
            .chain((1..=SVC_LOOKBACK as u64).map(|i| insn(0x3000 + 4 * i, NOP, false)))
            .chain(std::iter::once(insn(0x3000 + 4 * 9, SVC, false)))
            .collect();
        assert_eq!(syscall_sites(&far)[&0x3024], None, "load too far back");

        // Data between the load and the svc: not the same stretch of code.
        let gap = [insn(0x4000, MOV_X8_64, true), insn(0x4008, SVC, false)];
        assert_eq!(syscall_sites(&gap)[&0x4008], None);
    }

    #[test]
    fn branch_map_holds_only_branches() {
        let insns = [
            insn(0x10, 0x9400_0010, true),
            insn(0x14, 0xd503_201f, false),
            insn(0x18, 0xd65f_03c0, false),
        ];
        let map = branches(&insns);
        assert_eq!(map.len(), 2);
        assert_eq!(map[&0x10], Branch::Call);
        assert_eq!(map[&0x18], Branch::Return);
    }

    #[test]
    fn skips_data_that_mapping_symbols_mark() {
        let words: [u32; 5] = [
            0x9400_0010,
            0x1234_5678,
            0xd65f_03c0,
            0xd503_201f,
            0xd65f_03c0,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        // Code, one data word (a ret's encoding, as data), code again; a
        // trailing partial word is not an instruction.
        let mapping = vec![(0x108, false), (0x100, true), (0x10c, true)];
        let starts = HashSet::from([0x100]);
        let mut with_tail = bytes.clone();
        with_tail.extend([0xaa, 0xbb]);
        let insns = code_words(0x100, &with_tail, mapping, &starts);
        let addresses: Vec<_> = insns.iter().map(|i| i.address).collect();
        assert_eq!(addresses, [0x100, 0x104, 0x10c, 0x110]);
        assert!(insns[0].starts_symbol && !insns[1].starts_symbol);
        assert_eq!(insns[1].word, 0x1234_5678);
        assert_eq!(branches(&insns).len(), 2);
        // No mapping symbols at all: everything is code.
        assert_eq!(code_words(0, &bytes, Vec::new(), &starts).len(), 5);
    }
}
