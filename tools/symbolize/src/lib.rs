//! Address lookup in a faultline ELF: which function, source line and
//! inlined callers a code address belongs to.
//!
//! This file owns the lookup that both host tools share: the `symbolize`
//! console filter (src/main.rs) annotates panic backtraces with it, and
//! `tools/profile` names every instruction of an execution trace. DWARF is
//! read through `addr2line`; the ELF symbol table, through `object`, names
//! what DWARF does not cover (assembly) and says which addresses are code.

use std::borrow::Cow;
use std::env;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind, SymbolSection};

/// Turns addresses in the kernel ELF into function names and source lines.
pub struct Symbolizer {
    dwarf: Option<addr2line::Loader>,
    symbols: SymbolTable,
    /// Source paths under this directory are printed relative to it.
    root: Option<PathBuf>,
}

/// One level of a pc's (possibly inlined) call chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFrame {
    /// The function's demangled name (Rust paths without the hash).
    pub function: Option<String>,
    /// The source file, relative to the workspace root when under it.
    pub file: Option<String>,
    /// The line in `file`.
    pub line: Option<u32>,
}

impl fmt::Display for SourceFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at ", self.function.as_deref().unwrap_or("??"))?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}"),
            (Some(file), None) => write!(f, "{file}"),
            (None, _) => write!(f, "??"),
        }
    }
}

impl Symbolizer {
    /// Loads `elf`'s DWARF and symbol table; an error says why not.
    pub fn open(elf: &Path) -> Result<Self, String> {
        let dwarf = addr2line::Loader::new(elf).map_err(|err| err.to_string())?;
        let data = std::fs::read(elf).map_err(|err| err.to_string())?;
        let symbols = SymbolTable::parse(&data).map_err(|err| err.to_string())?;
        Ok(Symbolizer {
            dwarf: Some(dwarf),
            symbols,
            root: workspace_root(),
        })
    }

    /// A symbolizer that knows nothing, for when the ELF cannot be read: the
    /// console filter must pass output through all the same.
    pub fn unavailable() -> Self {
        Symbolizer {
            dwarf: None,
            symbols: SymbolTable::default(),
            root: None,
        }
    }

    /// The annotation for a backtrace frame at `pc`: innermost (inlined)
    /// function first, the function owning the stack frame last. Empty when
    /// nothing is known about the address.
    pub fn describe(&self, pc: u64) -> Vec<String> {
        // DWARF for functions the linker discarded still claims addresses
        // near 0, so a pc that is not in code would get a bogus name.
        if !self.symbols.is_code(pc) {
            return Vec::new();
        }
        let frames = self.frames(pc);
        if !frames.is_empty() {
            return frames.iter().map(ToString::to_string).collect();
        }
        // No DWARF for this address (e.g. assembly): the symbol table can
        // still name the function, and the offset places the pc within it.
        match self.symbols.lookup(pc) {
            Some((name, start)) => vec![format!("{name}+{:#x}", pc.wrapping_sub(start))],
            None => Vec::new(),
        }
    }

    /// DWARF's view of `addr`, innermost first. Frames that carry neither a
    /// name nor a location are dropped, so an empty result means unknown.
    pub fn frames(&self, addr: u64) -> Vec<SourceFrame> {
        let Some(dwarf) = &self.dwarf else {
            return Vec::new();
        };
        let mut frames = Vec::new();
        if let Ok(mut iter) = dwarf.find_frames(addr) {
            // A DWARF error part-way keeps the levels decoded so far.
            while let Ok(Some(frame)) = iter.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|name| name.demangle().ok())
                    .map(Cow::into_owned);
                let (file, line) = match frame.location {
                    Some(location) => (location.file.map(|f| self.shorten(f)), location.line),
                    None => (None, None),
                };
                frames.push(SourceFrame {
                    function,
                    file,
                    line,
                });
            }
        }
        // Line info without a function DIE (assembly with debug lines): the
        // symbol table supplies the name.
        if frames.iter().all(|f| f.function.is_none()) {
            if let Some(frame) = frames.last_mut() {
                frame.function = self.symbols.lookup(addr).map(|(name, _)| name.to_owned());
            }
        }
        frames.retain(|f| f.function.is_some() || f.file.is_some());
        frames
    }

    /// The ELF symbol table this symbolizer falls back on.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    fn shorten(&self, file: &str) -> String {
        match &self.root {
            Some(root) => match Path::new(file).strip_prefix(root) {
                Ok(relative) => relative.display().to_string(),
                Err(_) => file.to_owned(),
            },
            None => file.to_owned(),
        }
    }
}

/// The workspace root: the nearest directory at or above the current one that
/// holds a `Cargo.lock`, so paths come out the same wherever in the tree the
/// run script is started; the current directory itself if there is none.
pub fn workspace_root() -> Option<PathBuf> {
    let cwd = env::current_dir().ok()?;
    let root = cwd
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(&cwd);
    Some(root.to_path_buf())
}

/// Function symbols with their extents, sorted by address, and where the
/// code sections lie.
#[derive(Default)]
pub struct SymbolTable {
    symbols: Vec<TableSymbol>,
    code: Vec<Range<u64>>,
}

/// One named stretch of code.
struct TableSymbol {
    address: u64,
    /// Where the symbol stops covering addresses: its size if it has one, else
    /// the end of its section (assembly labels often have no `.size`).
    end: u64,
    /// Sized `STT_FUNC` symbols win over bare labels at the same address.
    is_function: bool,
    name: String,
}

impl SymbolTable {
    /// The code symbols of the ELF image `data`, names demangled.
    pub fn parse(data: &[u8]) -> object::Result<Self> {
        let file = object::File::parse(data)?;
        let code = file
            .sections()
            .filter(|section| section.kind() == SectionKind::Text)
            .map(|section| section.address()..section.address().saturating_add(section.size()))
            .collect();
        let mut symbols = Vec::new();
        for symbol in file.symbols() {
            let SymbolSection::Section(index) = symbol.section() else {
                continue;
            };
            let Ok(section) = file.section_by_index(index) else {
                continue;
            };
            let is_function = symbol.kind() == SymbolKind::Text;
            let is_label = symbol.kind() == SymbolKind::Unknown;
            let Ok(name) = symbol.name() else { continue };
            // `$x` / `$d` are AArch64 mapping symbols, not names.
            if section.kind() != SectionKind::Text
                || !(is_function || is_label)
                || name.is_empty()
                || name.starts_with('$')
            {
                continue;
            }
            let end = if symbol.size() > 0 {
                symbol.address().saturating_add(symbol.size())
            } else {
                section.address().saturating_add(section.size())
            };
            symbols.push(TableSymbol {
                address: symbol.address(),
                end,
                is_function,
                name: addr2line::demangle_auto(Cow::Borrowed(name), None).into_owned(),
            });
        }
        // Within one address, put the preferred symbol last: lookup takes the
        // last symbol at or below the address.
        symbols.sort_by_key(|s| (s.address, s.is_function));
        Ok(SymbolTable { symbols, code })
    }

    /// Whether `addr` lies in a code section. Without section headers there
    /// is nothing to check against, so everything counts as code.
    fn is_code(&self, addr: u64) -> bool {
        self.code.is_empty() || self.code.iter().any(|range| range.contains(&addr))
    }

    /// The function containing `addr`, and its start address.
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let below = self.symbols.partition_point(|s| s.address <= addr);
        let symbol = self.symbols[..below].last()?;
        (addr < symbol.end).then_some((symbol.name.as_str(), symbol.address))
    }

    /// The address of the code symbol called `name` (demangled), if any.
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.symbols
            .iter()
            .find(|symbol| symbol.name == name)
            .map(|symbol| symbol.address)
    }
}

#[cfg(test)]
#[path = "self_fixture.rs"]
mod self_fixture;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_fixture::*;

    #[test]
    fn resolves_a_function_in_its_own_elf() {
        let (symbolizer, elf) = open_self();
        let (addr, _) = symbol_extent(&elf, "symbolize_test_marker");

        let frames = symbolizer.frames(addr);
        assert_eq!(frames.len(), 1, "{frames:?}");
        let frame = &frames[0];
        assert_eq!(
            frame.function.as_deref(),
            Some("symbolize::self_fixture::symbolize_test_marker")
        );
        // `cargo test` runs in the package directory, below the workspace root.
        assert_eq!(
            frame.file.as_deref(),
            Some("tools/symbolize/src/self_fixture.rs")
        );
        let line = frame.line.unwrap();
        assert!(
            (MARKER_FIRST_LINE..=MARKER_LAST_LINE).contains(&line),
            "line {line}"
        );
        assert_eq!(
            symbolizer.describe(addr),
            [format!(
                "symbolize::self_fixture::symbolize_test_marker at tools/symbolize/src/self_fixture.rs:{line}"
            )]
        );
    }

    #[test]
    fn reports_inlined_frames() {
        let (symbolizer, elf) = open_self();
        let (start, size) = symbol_extent(&elf, "symbolize_test_caller");
        let inlined = (start..start + size)
            .map(|addr| symbolizer.frames(addr))
            .find(|frames| frames.len() == 2)
            .expect("no address in the caller maps to the inlined function");
        assert_eq!(
            inlined[0].function.as_deref(),
            Some("symbolize::self_fixture::symbolize_test_inlined")
        );
        assert_eq!(
            inlined[1].function.as_deref(),
            Some("symbolize::self_fixture::symbolize_test_caller")
        );
    }

    #[test]
    fn unknown_addresses_are_unknown() {
        let (symbolizer, _) = open_self();
        assert!(symbolizer.describe(0).is_empty());
        assert!(symbolizer.describe(u64::MAX - 7).is_empty());
        assert!(Symbolizer::unavailable().describe(0x4008_0000).is_empty());
    }

    #[test]
    fn symbol_table_covers_code_without_dwarf() {
        let (symbolizer, elf) = open_self();
        let (addr, _) = symbol_extent(&elf, "symbolize_test_marker");
        let name = "symbolize::self_fixture::symbolize_test_marker";
        assert_eq!(symbolizer.symbols().lookup(addr + 2), Some((name, addr)));
        assert_eq!(symbolizer.symbols().address_of(name), Some(addr));
        assert!(symbolizer.symbols().is_code(addr));
        assert_eq!(symbolizer.symbols().address_of("no such symbol"), None);
    }

    #[test]
    fn unreadable_elf_is_an_error_not_a_panic() {
        assert!(Symbolizer::open(Path::new("/nonexistent/faultline.elf")).is_err());
        let not_elf = env::temp_dir().join(format!("symbolize-not-elf-{}", std::process::id()));
        std::fs::write(&not_elf, b"definitely not an ELF file").unwrap();
        let result = Symbolizer::open(&not_elf);
        std::fs::remove_file(&not_elf).unwrap();
        assert!(result.is_err());
    }
}
