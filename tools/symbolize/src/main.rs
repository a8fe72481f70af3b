//! `symbolize KERNEL_ELF`: the console filter the QEMU run script pipes the
//! kernel's serial output through.
//!
//! This file owns the whole tool: the stdin → stdout pass-through loop, the
//! parser for the kernel's backtrace lines, and the address → function/source
//! lookup in the kernel ELF (DWARF via `addr2line`, symbol table via `object`).
//!
//! Every byte read is written back out. A line of exactly the form
//!
//! ```text
//!   #<n> pc 0x<16 hex digits>
//! ```
//!
//! (optionally followed by spaces, tabs or a CR) additionally gets
//! ` <function> at <file>:<line>` appended, and for code inlined at that pc one
//! extra line per enclosing function, outward, ending at the function that
//! owns the stack frame:
//!
//! ```text
//!   #1 pc 0xffff000040081234 core::option::unwrap_failed at /rustc/.../option.rs:2015
//!         (inlined) faultline::mm::map at kernel/src/mm/mod.rs:88
//! ```
//!
//! Every pc is looked up exactly: the kernel prints the address of the call
//! instruction (return address - 4) for each frame, and the faulting pc for
//! a frame that crosses an exception, so a call that ends a function (to a
//! `-> !` function such as a panic) is not reported as whatever comes next.
//!
//! The tool never hides kernel output: an unreadable ELF, a missing argument or
//! an unknown address only turn the annotation into ` ??`.

use std::borrow::Cow;
use std::env;
use std::fmt;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind, SymbolSection};

/// How long a held-back partial line that looks like the start of a backtrace
/// line may wait for the rest of it. The kernel prints such a line in one go,
/// so this only matters if it stalls mid-line; then the bytes must still reach
/// the console.
const HOLD_TIMEOUT: Duration = Duration::from_millis(100);

/// Frame numbers are small; capping the digits keeps the value in a `u32`.
const MAX_FRAME_DIGITS: usize = 9;
const PC_DIGITS: usize = 16;
const INLINED_PREFIX: &str = "        (inlined) ";

fn main() {
    let args: Vec<_> = env::args_os().skip(1).collect();
    let symbolizer = match args.as_slice() {
        [elf] => Symbolizer::open(Path::new(elf)).unwrap_or_else(|err| {
            eprintln!(
                "symbolize: cannot load {}: {err}; backtraces stay unsymbolized",
                Path::new(elf).display()
            );
            Symbolizer::unavailable()
        }),
        _ => {
            eprintln!("usage: symbolize KERNEL_ELF  (passing output through unsymbolized)");
            Symbolizer::unavailable()
        }
    };

    let chunks = spawn_stdin_reader();
    let mut filter = Filter::new(&symbolizer, io::stdout().lock());
    // A write error means the console is gone; there is no one left to show
    // anything to, so just stop.
    let _ = pump(&chunks, &mut filter);
}

/// Reads stdin on its own thread so the main loop can wait with a timeout
/// (see [`HOLD_TIMEOUT`]). The channel closes at end of input or on a read
/// error, which the main loop treats the same.
fn spawn_stdin_reader() -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    rx
}

fn pump<W: Write>(chunks: &Receiver<Vec<u8>>, filter: &mut Filter<'_, W>) -> io::Result<()> {
    loop {
        let next = if filter.is_holding() {
            chunks.recv_timeout(HOLD_TIMEOUT)
        } else {
            chunks.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        match next {
            Ok(chunk) => filter.feed(&chunk)?,
            Err(RecvTimeoutError::Timeout) => filter.release_held()?,
            Err(RecvTimeoutError::Disconnected) => return filter.finish(),
        }
    }
}

/// The byte-level pass-through. Bytes are forwarded as soon as they arrive,
/// except that a partial line which could still turn into a backtrace line is
/// held back until its newline, so the annotation can go before the line
/// ending (after a CR it would overwrite the start of the line on screen).
struct Filter<'s, W: Write> {
    symbolizer: &'s Symbolizer,
    out: W,
    /// The current line so far, without its newline.
    line: Vec<u8>,
    /// How many bytes of `line` have already been written out.
    written: usize,
}

impl<'s, W: Write> Filter<'s, W> {
    fn new(symbolizer: &'s Symbolizer, out: W) -> Self {
        Filter {
            symbolizer,
            out,
            line: Vec::new(),
            written: 0,
        }
    }

    fn is_holding(&self) -> bool {
        self.written < self.line.len()
    }

    fn feed(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while let Some(newline) = bytes.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&bytes[..newline]);
            self.end_line()?;
            bytes = &bytes[newline + 1..];
        }
        self.line.extend_from_slice(bytes);
        if scan(&self.line) == Scan::NoMatch {
            self.write_pending()?;
        }
        self.out.flush()
    }

    fn release_held(&mut self) -> io::Result<()> {
        self.write_pending()?;
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.release_held()
    }

    fn write_pending(&mut self) -> io::Result<()> {
        self.out.write_all(&self.line[self.written..])?;
        self.written = self.line.len();
        Ok(())
    }

    fn end_line(&mut self) -> io::Result<()> {
        if let Scan::Complete { pc, .. } = scan(&self.line) {
            let content_len = self.line.len() - count_trailing_blanks(&self.line);
            if self.written < content_len {
                self.out.write_all(&self.line[self.written..content_len])?;
            }
            let eol = if self.line.ends_with(b"\r") {
                "\r\n"
            } else {
                "\n"
            };
            let mut frames = self.symbolizer.describe(pc).into_iter();
            let innermost = frames.next().unwrap_or_else(|| "??".to_owned());
            write!(self.out, " {innermost}{eol}")?;
            for caller in frames {
                write!(self.out, "{INLINED_PREFIX}{caller}{eol}")?;
            }
        } else {
            self.write_pending()?;
            self.out.write_all(b"\n")?;
        }
        self.line.clear();
        self.written = 0;
        Ok(())
    }
}

/// What [`scan`] makes of a line, or of the start of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// A whole backtrace line.
    Complete { frame: u32, pc: u64 },
    /// Not a backtrace line yet, but more bytes could make it one.
    Prefix,
    /// Can never become a backtrace line.
    NoMatch,
}

/// Matches `  #<n> pc 0x<16 hex digits>` followed only by spaces, tabs or CRs.
fn scan(line: &[u8]) -> Scan {
    let parse = || -> Result<(u32, u64), Scan> {
        let mut cursor = Cursor { line, pos: 0 };
        cursor.literal(b"  #")?;
        let frame = cursor.number(10, 1, MAX_FRAME_DIGITS)?;
        cursor.literal(b" pc 0x")?;
        let pc = cursor.number(16, PC_DIGITS, PC_DIGITS)?;
        cursor.only_blanks()?;
        let frame = u32::try_from(frame).map_err(|_| Scan::NoMatch)?;
        Ok((frame, pc))
    };
    match parse() {
        Ok((frame, pc)) => Scan::Complete { frame, pc },
        Err(scan) => scan,
    }
}

/// The full line, if it is a backtrace line: `(frame number, pc)`.
#[cfg(test)]
fn parse_backtrace_line(line: &[u8]) -> Option<(u32, u64)> {
    match scan(line) {
        Scan::Complete { frame, pc } => Some((frame, pc)),
        _ => None,
    }
}

/// Steps through a line; running out of input is `Err(Scan::Prefix)`, a byte
/// that does not fit is `Err(Scan::NoMatch)`.
struct Cursor<'a> {
    line: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn literal(&mut self, expected: &[u8]) -> Result<(), Scan> {
        for &want in expected {
            match self.line.get(self.pos) {
                None => return Err(Scan::Prefix),
                Some(&got) if got == want => self.pos += 1,
                Some(_) => return Err(Scan::NoMatch),
            }
        }
        Ok(())
    }

    /// Between `min` and `max` digits. Digits beyond `max` are left for the
    /// next step, which rejects them.
    fn number(&mut self, radix: u32, min: usize, max: usize) -> Result<u64, Scan> {
        let mut value = 0u64;
        let mut count = 0;
        while count < max {
            let Some(digit) = self
                .line
                .get(self.pos)
                .and_then(|&b| char::from(b).to_digit(radix))
            else {
                break;
            };
            value = value * u64::from(radix) + u64::from(digit);
            count += 1;
            self.pos += 1;
        }
        if count >= min {
            Ok(value)
        } else if self.pos == self.line.len() {
            Err(Scan::Prefix)
        } else {
            Err(Scan::NoMatch)
        }
    }

    fn only_blanks(&mut self) -> Result<(), Scan> {
        let rest = &self.line[self.pos..];
        if count_trailing_blanks(rest) == rest.len() {
            Ok(())
        } else {
            Err(Scan::NoMatch)
        }
    }
}

fn count_trailing_blanks(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r'))
        .count()
}

/// Turns addresses in the kernel ELF into function names and source lines.
struct Symbolizer {
    dwarf: Option<addr2line::Loader>,
    symbols: SymbolTable,
    /// Source paths under this directory are printed relative to it.
    root: Option<PathBuf>,
}

/// One level of a pc's (possibly inlined) call chain.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SourceFrame {
    function: Option<String>,
    file: Option<String>,
    line: Option<u32>,
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
    fn open(elf: &Path) -> Result<Self, String> {
        let dwarf = addr2line::Loader::new(elf).map_err(|err| err.to_string())?;
        let data = std::fs::read(elf).map_err(|err| err.to_string())?;
        let symbols = SymbolTable::parse(&data).map_err(|err| err.to_string())?;
        Ok(Symbolizer {
            dwarf: Some(dwarf),
            symbols,
            root: workspace_root(),
        })
    }

    fn unavailable() -> Self {
        Symbolizer {
            dwarf: None,
            symbols: SymbolTable::default(),
            root: None,
        }
    }

    /// The annotation for a backtrace frame at `pc`: innermost (inlined)
    /// function first, the function owning the stack frame last. Empty when
    /// nothing is known about the address.
    fn describe(&self, pc: u64) -> Vec<String> {
        let probe = pc;
        // DWARF for functions the linker discarded still claims addresses
        // near 0, so a pc that is not in code would get a bogus name.
        if !self.symbols.is_code(probe) {
            return Vec::new();
        }
        let frames = self.frames(probe);
        if !frames.is_empty() {
            return frames.iter().map(ToString::to_string).collect();
        }
        // No DWARF for this address (e.g. assembly): the symbol table can
        // still name the function, and the offset places the pc within it.
        match self.symbols.lookup(probe) {
            Some((name, start)) => vec![format!("{name}+{:#x}", pc.wrapping_sub(start))],
            None => Vec::new(),
        }
    }

    /// DWARF's view of `addr`, innermost first. Frames that carry neither a
    /// name nor a location are dropped, so an empty result means unknown.
    fn frames(&self, addr: u64) -> Vec<SourceFrame> {
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
fn workspace_root() -> Option<PathBuf> {
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
struct SymbolTable {
    symbols: Vec<TableSymbol>,
    code: Vec<Range<u64>>,
}

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
    fn parse(data: &[u8]) -> object::Result<Self> {
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

    /// Without section headers there is nothing to check against, so
    /// everything counts as code.
    fn is_code(&self, addr: u64) -> bool {
        self.code.is_empty() || self.code.iter().any(|range| range.contains(&addr))
    }

    /// The function containing `addr`, and its start address.
    fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let below = self.symbols.partition_point(|s| s.address <= addr);
        let symbol = self.symbols[..below].last()?;
        (addr < symbol.end).then_some((symbol.name.as_str(), symbol.address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    // ---- line parser ----

    #[test]
    fn parses_backtrace_lines() {
        assert_eq!(
            parse_backtrace_line(b"  #0 pc 0xffff000040081234"),
            Some((0, 0xffff_0000_4008_1234))
        );
        assert_eq!(
            parse_backtrace_line(b"  #12 pc 0x00000000DEADBEEF"),
            Some((12, 0xdead_beef))
        );
        assert_eq!(
            parse_backtrace_line(b"  #3 pc 0x0000000040080000  \t\r"),
            Some((3, 0x4008_0000))
        );
    }

    #[test]
    fn rejects_near_misses() {
        for line in [
            &b""[..],
            b"#0 pc 0xffff000040081234",
            b" #0 pc 0xffff000040081234",
            b"   #0 pc 0xffff000040081234",
            b"  0 pc 0xffff000040081234",
            b"  # pc 0xffff000040081234",
            b"  #x pc 0xffff000040081234",
            b"  #0 pc 0xffff00004008123",   // 15 digits
            b"  #0 pc 0xffff0000400812345", // 17 digits
            b"  #0 pc 0xffff00004008123g",
            b"  #0 pc ffff000040081234",
            b"  #0 pc 0Xffff000040081234",
            b"  #0 pc0xffff000040081234",
            b"  #0  pc 0xffff000040081234",
            b"  #0 PC 0xffff000040081234",
            b"  #0 lr 0xffff000040081234",
            b"  #0 pc 0xffff000040081234 extra",
            b"  #1234567890 pc 0xffff000040081234",
            b"panicked at pc 0xffff000040081234",
        ] {
            assert_eq!(
                parse_backtrace_line(line),
                None,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn prefixes_are_recognised_for_holding() {
        let full = b"  #7 pc 0xffff000040081234\r";
        for len in 0..full.len() - 1 {
            assert_ne!(scan(&full[..len]), Scan::NoMatch, "prefix of length {len}");
        }
        assert_eq!(scan(b"  #7 pc 0xq"), Scan::NoMatch);
        assert_eq!(scan(b"hello"), Scan::NoMatch);
        assert_eq!(scan(b" x"), Scan::NoMatch);
    }

    // ---- stream filtering (no ELF) ----

    fn filter_chunks(symbolizer: &Symbolizer, chunks: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut filter = Filter::new(symbolizer, &mut out);
        for chunk in chunks {
            filter.feed(chunk).unwrap();
        }
        filter.finish().unwrap();
        out
    }

    #[test]
    fn passes_everything_through_without_an_elf() {
        let symbolizer = Symbolizer::unavailable();
        let input: &[u8] = b"boot\r\n\xff\xfe not utf8\n  #0 pc 0xffff000040081234\r\n  #1 pc 0x0000000040080004\nprompt> ";
        let out = filter_chunks(&symbolizer, &[input]);
        assert_eq!(
            out,
            b"boot\r\n\xff\xfe not utf8\n  #0 pc 0xffff000040081234 ??\r\n  #1 pc 0x0000000040080004 ??\nprompt> "
        );
    }

    #[test]
    fn byte_at_a_time_input_gives_the_same_output() {
        let symbolizer = Symbolizer::unavailable();
        let input: &[u8] = b"x\n  #2 pc 0x0000000040080004  \r\n  #3 pc\nend";
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(
            filter_chunks(&symbolizer, &bytes),
            b"x\n  #2 pc 0x0000000040080004 ??\r\n  #3 pc\nend"
        );
    }

    #[test]
    fn partial_lines_are_forwarded_at_once_unless_they_may_be_backtraces() {
        let symbolizer = Symbolizer::unavailable();
        let mut out = Vec::new();
        let mut filter = Filter::new(&symbolizer, &mut out);
        filter.feed(b"login: ").unwrap();
        assert!(!filter.is_holding());
        filter.feed(b"root\n  #0 pc 0x00").unwrap();
        assert!(filter.is_holding());
        // A stalled line still reaches the console.
        filter.release_held().unwrap();
        assert!(!filter.is_holding());
        assert_eq!(out, b"login: root\n  #0 pc 0x00");
    }

    // ---- end to end, against this test binary's own ELF ----

    const MARKER_FIRST_LINE: u32 = line!();
    #[inline(never)]
    fn symbolize_test_marker(x: u64) -> u64 {
        black_box(x).wrapping_mul(3)
    }
    const MARKER_LAST_LINE: u32 = line!();

    #[inline(always)]
    fn symbolize_test_inlined(x: u64) -> u64 {
        black_box(x).rotate_left(7) ^ 0x5a5a
    }

    #[inline(never)]
    fn symbolize_test_caller(x: u64) -> u64 {
        symbolize_test_inlined(black_box(x)) + 1
    }

    /// Link-time address and size of the function whose mangled name contains
    /// `ident`. Link-time, not runtime: the test binary is PIE, and DWARF
    /// speaks in link-time addresses just like the kernel's does.
    fn symbol_extent(elf: &[u8], ident: &str) -> (u64, u64) {
        let file = object::File::parse(elf).unwrap();
        let matches: Vec<_> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text)
            .filter(|s| s.name().is_ok_and(|n| n.contains(ident)))
            .map(|s| (s.address(), s.size()))
            .collect();
        assert_eq!(matches.len(), 1, "symbol for {ident}: {matches:?}");
        matches[0]
    }

    fn open_self() -> (Symbolizer, Vec<u8>) {
        // Keep the markers alive: a never-called function could be dropped.
        assert_eq!(symbolize_test_marker(black_box(5)), 15);
        assert_ne!(symbolize_test_caller(black_box(5)), 0);
        let exe = env::current_exe().unwrap();
        let symbolizer = Symbolizer::open(&exe).unwrap();
        (symbolizer, std::fs::read(&exe).unwrap())
    }

    #[test]
    fn resolves_a_function_in_its_own_elf() {
        let (symbolizer, elf) = open_self();
        let (addr, _) = symbol_extent(&elf, "symbolize_test_marker");

        let frames = symbolizer.frames(addr);
        assert_eq!(frames.len(), 1, "{frames:?}");
        let frame = &frames[0];
        assert_eq!(
            frame.function.as_deref(),
            Some("symbolize::tests::symbolize_test_marker")
        );
        // `cargo test` runs in the package directory, below the workspace root.
        assert_eq!(frame.file.as_deref(), Some("tools/symbolize/src/main.rs"));
        let line = frame.line.unwrap();
        assert!(
            (MARKER_FIRST_LINE..=MARKER_LAST_LINE).contains(&line),
            "line {line}"
        );

        let out = filter_chunks(
            &symbolizer,
            &[format!("  #0 pc 0x{addr:016x}\r\n").as_bytes()],
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "  #0 pc 0x{addr:016x} symbolize::tests::symbolize_test_marker \
                 at tools/symbolize/src/main.rs:{line}\r\n"
            )
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
            Some("symbolize::tests::symbolize_test_inlined")
        );
        assert_eq!(
            inlined[1].function.as_deref(),
            Some("symbolize::tests::symbolize_test_caller")
        );

        let pc = (start..start + size)
            .find(|&addr| symbolizer.frames(addr).len() == 2)
            .unwrap();
        let out = filter_chunks(&symbolizer, &[format!("  #0 pc 0x{pc:016x}\n").as_bytes()]);
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<_> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].contains(" symbolize::tests::symbolize_test_inlined at "));
        assert!(lines[1].starts_with("        (inlined) symbolize::tests::symbolize_test_caller at tools/symbolize/src/main.rs:"));
    }

    #[test]
    fn unknown_addresses_get_question_marks() {
        let (symbolizer, _) = open_self();
        assert!(symbolizer.describe(0).is_empty());
        assert!(symbolizer.describe(u64::MAX - 7).is_empty());
        let out = filter_chunks(&symbolizer, &[b"  #4 pc 0xfffffffffffffff0\n"]);
        assert_eq!(out, b"  #4 pc 0xfffffffffffffff0 ??\n");
    }

    #[test]
    fn symbol_table_covers_code_without_dwarf() {
        let (symbolizer, elf) = open_self();
        let (addr, _) = symbol_extent(&elf, "symbolize_test_marker");
        assert_eq!(
            symbolizer.symbols.lookup(addr + 2),
            Some(("symbolize::tests::symbolize_test_marker", addr))
        );
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
