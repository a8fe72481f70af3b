//! `symbolize KERNEL_ELF`: the console filter the QEMU run script pipes the
//! kernel's serial output through.
//!
//! This file owns the stdin → stdout pass-through loop and the parser for the
//! kernel's backtrace lines; the address → function/source lookup in the
//! kernel ELF is the library's (src/lib.rs), which `tools/profile` shares.
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

use std::env;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use symbolize::Symbolizer;

/// How long a held-back partial line that looks like the start of a backtrace
/// line may wait for the rest of it. The kernel prints such a line in one go,
/// so this only matters if it stalls mid-line; then the bytes must still reach
/// the console.
const HOLD_TIMEOUT: Duration = Duration::from_millis(100);

/// Frame numbers are small; capping the digits keeps the value in a `u32`.
const MAX_FRAME_DIGITS: usize = 9;
/// The kernel prints every pc zero-padded to 64 bits.
const PC_DIGITS: usize = 16;
/// Indents inlined callers under the frame's address, and marks them.
const INLINED_PREFIX: &str = "        (inlined) ";

/// Opens the ELF named on the command line, then filters stdin to stdout.
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

/// Feeds the filter until input ends, releasing a held line that stalls.
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

#[cfg(test)]
#[path = "self_fixture.rs"]
mod self_fixture;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_fixture::*;

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

    #[test]
    fn annotates_a_function_in_its_own_elf() {
        let (symbolizer, elf) = open_self();
        let (addr, _) = symbol_extent(&elf, "symbolize_test_marker");
        let line = symbolizer.describe(addr)[0]
            .rsplit_once(':')
            .and_then(|(_, line)| line.parse::<u32>().ok())
            .unwrap();
        assert!(
            (MARKER_FIRST_LINE..=MARKER_LAST_LINE).contains(&line),
            "line {line}"
        );

        let out = filter_chunks(
            &symbolizer,
            &[format!("  #0 pc 0x{addr:016x}\r\n").as_bytes()],
        );
        // `cargo test` runs in the package directory, below the workspace root.
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "  #0 pc 0x{addr:016x} symbolize::self_fixture::symbolize_test_marker \
                 at tools/symbolize/src/self_fixture.rs:{line}\r\n"
            )
        );
    }

    #[test]
    fn prints_inlined_callers_on_lines_of_their_own() {
        let (symbolizer, elf) = open_self();
        let (start, size) = symbol_extent(&elf, "symbolize_test_caller");
        let pc = (start..start + size)
            .find(|&addr| symbolizer.frames(addr).len() == 2)
            .expect("no address in the caller maps to the inlined function");
        let out = filter_chunks(&symbolizer, &[format!("  #0 pc 0x{pc:016x}\n").as_bytes()]);
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<_> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].contains(" symbolize::self_fixture::symbolize_test_inlined at "));
        assert!(lines[1].starts_with("        (inlined) symbolize::self_fixture::symbolize_test_caller at tools/symbolize/src/self_fixture.rs:"));
    }

    #[test]
    fn unknown_addresses_get_question_marks() {
        let (symbolizer, _) = open_self();
        let out = filter_chunks(&symbolizer, &[b"  #4 pc 0xfffffffffffffff0\n"]);
        assert_eq!(out, b"  #4 pc 0xfffffffffffffff0 ??\n");
    }
}
