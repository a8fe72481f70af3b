//! Names for the addresses a profile counts: the kernel's through
//! `symbolize`'s lookup (DWARF inline frames, then the symbol table), the
//! user program's through its symbol table.

use std::path::Path;

use symbolize::{SymbolTable, Symbolizer};

/// Where the report's names come from. A trait so that the report can be
/// tested on synthetic stacks without an ELF.
pub trait Symbols {
    /// The functions a kernel pc is in, innermost first: the inlined ones,
    /// then the one that owns the code. Empty if DWARF does not know it.
    fn inline_frames(&self, pc: u64) -> Vec<String>;
    /// The kernel's ELF symbol containing `pc`, if any.
    fn kernel_symbol(&self, pc: u64) -> Option<String>;
    /// The user program's function containing `pc`: `??` if unknown,
    /// `user` if no user program was given.
    fn user_symbol(&self, pc: u64) -> String;
}

/// Names from the kernel ELF and, if given, the user program's.
pub struct ElfSymbols {
    kernel: Symbolizer,
    user: Option<SymbolTable>,
}

impl ElfSymbols {
    /// Loads the kernel's DWARF and symbols, and the user program's
    /// symbols (`user_elf`, already read; None if there is none).
    pub fn open(kernel: &Path, user_elf: Option<&[u8]>) -> Result<Self, String> {
        let kernel = Symbolizer::open(kernel)?;
        let user = match user_elf {
            Some(data) => Some(SymbolTable::parse(data).map_err(|err| err.to_string())?),
            None => None,
        };
        Ok(ElfSymbols { kernel, user })
    }

    /// The address of a kernel symbol, by its (demangled) name.
    pub fn kernel_address(&self, name: &str) -> Option<u64> {
        self.kernel.symbols().address_of(name)
    }
}

impl Symbols for ElfSymbols {
    fn inline_frames(&self, pc: u64) -> Vec<String> {
        self.kernel
            .frames(pc)
            .into_iter()
            .filter_map(|frame| frame.function)
            .collect()
    }

    fn kernel_symbol(&self, pc: u64) -> Option<String> {
        let (name, _) = self.kernel.symbols().lookup(pc)?;
        Some(name.to_owned())
    }

    fn user_symbol(&self, pc: u64) -> String {
        match &self.user {
            Some(table) => table.lookup(pc).map_or("??", |(name, _)| name).to_owned(),
            None => "user".to_owned(),
        }
    }
}

/// The longest function name the report prints whole.
const MAX_NAME: usize = 89;

/// A function's name as the report prints it: `<impl ...>` blocks as
/// `impl`, without the kernel crate's own `faultline::` prefix, and cut to
/// fit a line.
pub fn short(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(start) = rest.find("<impl ") {
        let Some(len) = rest[start..].find('>') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str("impl");
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    let out = out.replace("faultline::", "");
    if out.chars().count() <= MAX_NAME {
        out
    } else {
        let cut: String = out.chars().take(MAX_NAME - 2).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_names_for_the_report() {
        assert_eq!(
            short("faultline::mm::fault::do_page_fault"),
            "mm::fault::do_page_fault"
        );
        assert_eq!(
            short("<impl core::fmt::Write for faultline::console::Console>::write_str"),
            "impl::write_str"
        );
        // Only up to the first `>`, as the old script's regex did.
        assert_eq!(
            short("<impl Foo<T>>::f and <impl Bar>::g"),
            "impl>::f and impl::g"
        );
        assert_eq!(
            short("<fs::procfs::pid::ProcFile as X>::show"),
            "<fs::procfs::pid::ProcFile as X>::show"
        );
        let long = "a".repeat(120);
        let cut = short(&long);
        assert_eq!(cut.len(), 90);
        assert!(cut.ends_with("..."));
        assert_eq!(short(&"b".repeat(89)), "b".repeat(89));
        assert_eq!(short("<impl unterminated"), "<impl unterminated");
    }
}
