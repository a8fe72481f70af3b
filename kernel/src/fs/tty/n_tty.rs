//! The line discipline (Linux: `drivers/tty/n_tty.c`): what happens to
//! each byte typed before a program reads it, and to each byte a program
//! writes before the terminal shows it, as `struct termios` says.
//!
//! In canonical mode (ICANON) input is collected into a line that the
//! erase (DEL), word-erase (^W) and kill (^U) characters edit; a read
//! returns at most one line, once it is ended by a newline or ^D (^D on an
//! empty line reads as end of file). Otherwise bytes are readable at once,
//! `VMIN` at a time. With ISIG, ^C, ^\ and ^Z are not input but signals
//! for the foreground process group. ECHO shows what was typed, control
//! characters as `^X` (ECHOCTL) and erasures as backspace-space-backspace
//! (ECHOE).
//!
//! Where we simplify: no flow control (IXON's ^S/^Q are plain input), no
//! ^R reprint, ^V literal-next, ^O discard, or parity handling; VTIME is
//! not honoured (with VMIN 0 a read returns at once).

use alloc::collections::VecDeque;
use alloc::vec::Vec;
pub use uapi::signal::{SIGINT, SIGQUIT, SIGTSTP};
pub use uapi::termios::{
    B38400, CREAD, CS8, ECHO, ECHOCTL, ECHOE, ECHOK, ECHOKE, ECHONL, HUPCL, ICANON, ICRNL, IEXTEN,
    IGNCR, INLCR, ISIG, ISTRIP, IXON, NCCS, NOFLSH, ONLCR, OPOST, VEOF, VEOL, VEOL2, VERASE, VINTR,
    VKILL, VMIN, VQUIT, VSUSP, VWERASE,
};

// c_iflag bits (asm-generic termbits.h).
// c_oflag.
// c_cflag: 38400 baud, 8 bits, receiver on, hang up on last close.
// c_lflag.

// c_cc indexes.

// The signals the line discipline raises (Linux's numbers).

/// Longest line canonical mode holds; further bytes are dropped
/// (Linux: `N_TTY_BUF_SIZE`, less one for the newline).
pub const MAX_CANON: usize = 4095;

/// `struct termios` as the arm64 ioctls pass it (asm-generic termbits:
/// four flag words, the line discipline number, 19 control characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Termios {
    /// `c_iflag`: input processing (ICRNL, ISTRIP...).
    pub iflag: u32,
    /// `c_oflag`: output processing (OPOST, ONLCR).
    pub oflag: u32,
    /// `c_cflag`: line settings (baud rate, character size); kept and
    /// reported, nothing acts on them.
    pub cflag: u32,
    /// `c_lflag`: local modes (ICANON, ECHO, ISIG...).
    pub lflag: u32,
    /// `c_line`: the line discipline number, 0 for N_TTY, the only one.
    pub line: u8,
    /// `c_cc`: the control characters, indexed by VINTR, VMIN and the rest.
    pub cc: [u8; NCCS],
}

/// Size of `struct termios` in bytes.
pub const TERMIOS_SIZE: usize = 36;

impl Termios {
    /// What a new terminal starts with (Linux: `tty_std_termios`).
    pub const STD: Termios = Termios {
        iflag: ICRNL | IXON,
        oflag: OPOST | ONLCR,
        cflag: B38400 | CS8 | CREAD | HUPCL,
        lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
        line: 0,
        // INIT_C_CC: ^C ^\ DEL ^U ^D, VTIME 0, VMIN 1, then ^Q ^S ^Z, ^R ^O
        // ^W ^V.
        cc: [
            3, 0o34, 0o177, 0o25, 4, 0, 1, 0, 0o21, 0o23, 0o32, 0, 0o22, 0o17, 0o27, 0o26, 0, 0, 0,
        ],
    };

    /// The bytes TCGETS copies out.
    pub fn to_bytes(self) -> [u8; TERMIOS_SIZE] {
        let mut b = [0u8; TERMIOS_SIZE];
        for (i, word) in [self.iflag, self.oflag, self.cflag, self.lflag]
            .iter()
            .enumerate()
        {
            b[i * 4..i * 4 + 4].copy_from_slice(&word.to_ne_bytes());
        }
        b[16] = self.line;
        b[17..].copy_from_slice(&self.cc);
        b
    }

    /// The termios from the bytes TCSETS copied in.
    pub fn from_bytes(b: &[u8; TERMIOS_SIZE]) -> Termios {
        let word = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut cc = [0u8; NCCS];
        cc.copy_from_slice(&b[17..]);
        Termios {
            iflag: word(0),
            oflag: word(4),
            cflag: word(8),
            lflag: word(12),
            line: b[16],
            cc,
        }
    }

    /// Is local-mode flag `flag` (an `ECHO`, `ICANON`...) set?
    fn l(&self, flag: u32) -> bool {
        self.lflag & flag != 0
    }
}

/// The input side of one terminal.
pub struct Ldisc {
    /// The settings in force (Linux: `tty->termios`).
    pub termios: Termios,
    /// Canonical mode: the line being edited.
    line: Vec<u8>,
    /// Bytes a read may take. In canonical mode only whole lines get here.
    ready: VecDeque<u8>,
    /// Canonical mode: where each ended line in `ready` ends (an offset
    /// counted from the front of `ready`); a ^D line has no terminator
    /// byte, so an empty one reads as end of file.
    line_ends: VecDeque<usize>,
}

impl Default for Ldisc {
    fn default() -> Self {
        Self::new()
    }
}

impl Ldisc {
    /// A line discipline with `Termios::STD` and no input.
    pub fn new() -> Ldisc {
        Ldisc {
            termios: Termios::STD,
            line: Vec::new(),
            ready: VecDeque::new(),
            line_ends: VecDeque::new(),
        }
    }

    /// Is it in canonical mode (ICANON)?
    fn canonical(&self) -> bool {
        self.termios.l(ICANON)
    }

    /// Takes one byte typed on the terminal (Linux: `n_tty_receive_char`).
    /// What to show goes into `echo`; a signal for the foreground process
    /// group is returned.
    pub fn receive(&mut self, byte: u8, echo: &mut Vec<u8>) -> Option<u32> {
        let t = self.termios;
        let mut c = if t.iflag & ISTRIP != 0 {
            byte & 0x7f
        } else {
            byte
        };
        if c == b'\r' {
            if t.iflag & IGNCR != 0 {
                return None;
            }
            if t.iflag & ICRNL != 0 {
                c = b'\n';
            }
        } else if c == b'\n' && t.iflag & INLCR != 0 {
            c = b'\r';
        }
        if t.l(ISIG) {
            let signal = match c {
                _ if c == t.cc[VINTR] && c != 0 => Some(SIGINT),
                _ if c == t.cc[VQUIT] && c != 0 => Some(SIGQUIT),
                _ if c == t.cc[VSUSP] && c != 0 => Some(SIGTSTP),
                _ => None,
            };
            if let Some(sig) = signal {
                if !t.l(NOFLSH) {
                    self.flush_input();
                }
                self.echo_char(c, echo);
                return Some(sig);
            }
        }
        if !self.canonical() {
            self.ready.push_back(c);
            self.echo_char(c, echo);
            return None;
        }
        match c {
            _ if c == t.cc[VERASE] && c != 0 => self.erase(1, echo),
            _ if c == t.cc[VWERASE] && c != 0 && t.l(IEXTEN) => {
                let word = self
                    .line
                    .iter()
                    .rev()
                    .skip_while(|b| b.is_ascii_whitespace());
                let len = word.take_while(|b| !b.is_ascii_whitespace()).count();
                let blanks = self
                    .line
                    .iter()
                    .rev()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
                self.erase(blanks + len, echo);
            }
            _ if c == t.cc[VKILL] && c != 0 => {
                if t.l(ECHOKE) || !t.l(ECHOK) {
                    self.erase(self.line.len(), echo);
                } else {
                    self.line.clear();
                    self.echo_char(c, echo);
                    if t.l(ECHO) {
                        echo.push(b'\n');
                    }
                }
            }
            _ if c == t.cc[VEOF] && c != 0 => self.end_line(),
            _ if c == b'\n' || (c != 0 && (c == t.cc[VEOL] || c == t.cc[VEOL2])) => {
                self.line.push(c);
                if t.l(ECHO) || (c == b'\n' && t.l(ECHONL)) {
                    echo.push(c);
                }
                self.end_line();
            }
            _ if self.line.len() < MAX_CANON => {
                self.line.push(c);
                self.echo_char(c, echo);
            }
            _ => {}
        }
        None
    }

    /// Shows `c` as typed: control characters as `^X` with ECHOCTL (but
    /// tab and newline as themselves).
    fn echo_char(&self, c: u8, echo: &mut Vec<u8>) {
        if !self.termios.l(ECHO) {
            return;
        }
        if self.termios.l(ECHOCTL) && (c < 0x20 || c == 0x7f) && c != b'\t' && c != b'\n' {
            echo.extend_from_slice(&[b'^', c ^ 0x40]);
        } else {
            echo.push(c);
        }
    }

    /// Removes the last `n` bytes of the line being edited, rubbing each
    /// out on the screen with ECHOE (two columns for a `^X`).
    fn erase(&mut self, n: usize, echo: &mut Vec<u8>) {
        for _ in 0..n.min(self.line.len()) {
            let c = self.line.pop().expect("counted above");
            if self.termios.l(ECHO) && self.termios.l(ECHOE) {
                let width = if self.termios.l(ECHOCTL) && (c < 0x20 || c == 0x7f) {
                    2
                } else {
                    1
                };
                for _ in 0..width {
                    echo.extend_from_slice(b"\x08 \x08");
                }
            }
        }
    }

    /// Ends the line being edited: it becomes readable.
    fn end_line(&mut self) {
        self.ready.extend(self.line.drain(..));
        self.line_ends.push_back(self.ready.len());
    }

    /// Is there something for a read to take (or an end of file)?
    pub fn readable(&self) -> bool {
        if self.canonical() {
            !self.line_ends.is_empty()
        } else {
            !self.ready.is_empty()
        }
    }

    /// Bytes a read could take now (FIONREAD).
    pub fn bytes_ready(&self) -> usize {
        if self.canonical() {
            self.line_ends.back().copied().unwrap_or(0)
        } else {
            self.ready.len()
        }
    }

    /// Non-canonical mode: how many bytes a read of `len` waits for (VMIN,
    /// at most `len`; 0 means a read never waits).
    pub fn min_bytes(&self, len: usize) -> usize {
        (self.termios.cc[VMIN] as usize).min(len)
    }

    /// Takes what a read of `buf` gets now (Linux: `n_tty_read`): at most
    /// one line in canonical mode, else what is there. 0 at end of file.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let avail = if self.canonical() {
            self.line_ends.front().copied().unwrap_or(0)
        } else {
            self.ready.len()
        };
        let n = avail.min(buf.len());
        for (slot, byte) in buf.iter_mut().zip(self.ready.drain(..n)) {
            *slot = byte;
        }
        if self.canonical() && !self.line_ends.is_empty() {
            for end in self.line_ends.iter_mut() {
                *end -= n;
            }
            if self.line_ends[0] == 0 {
                self.line_ends.pop_front();
            }
        }
        n
    }

    /// Drops all input, ended lines and the line being edited (TCFLSH,
    /// TCSETSF, and the signal characters without NOFLSH).
    pub fn flush_input(&mut self) {
        self.line.clear();
        self.ready.clear();
        self.line_ends.clear();
    }

    /// A program's output as the terminal is sent it (Linux:
    /// `do_output_char`): with OPOST and ONLCR, "\n" becomes "\r\n".
    pub fn output(&self, data: &[u8], out: &mut Vec<u8>) {
        let o = self.termios.oflag;
        if o & OPOST == 0 || o & ONLCR == 0 {
            out.extend_from_slice(data);
            return;
        }
        for &b in data {
            if b == b'\n' {
                out.push(b'\r');
            }
            out.push(b);
        }
    }

    /// New settings (TCSETS*): leaving canonical mode makes the line being
    /// edited readable, as Linux's `n_tty_set_termios` does.
    pub fn set_termios(&mut self, t: Termios) {
        let was_canonical = self.canonical();
        self.termios = t;
        if was_canonical && !self.canonical() {
            self.ready.extend(self.line.drain(..));
            self.line_ends.clear();
        } else if !was_canonical && self.canonical() && !self.ready.is_empty() {
            // What raw mode left unread counts as one ended line.
            self.line_ends.push_back(self.ready.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    fn type_in(l: &mut Ldisc, text: &[u8]) -> (Vec<u8>, Vec<u32>) {
        let (mut echo, mut signals) = (Vec::new(), Vec::new());
        for &b in text {
            signals.extend(l.receive(b, &mut echo));
        }
        (echo, signals)
    }

    fn read_all(l: &mut Ldisc, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        let n = l.read(&mut buf);
        buf.truncate(n);
        buf
    }

    #[test]
    fn termios_round_trips_through_bytes() {
        let t = Termios::STD;
        assert_eq!(Termios::from_bytes(&t.to_bytes()), t);
        // The values a Linux console reports: lflag 0105073, cc[VMIN] 1.
        assert_eq!(t.lflag, 0o105073);
        assert_eq!(t.iflag, 0o2400);
        assert_eq!(t.to_bytes()[17 + VMIN], 1);
    }

    #[test]
    fn canonical_reads_wait_for_a_whole_line_and_take_one() {
        let mut l = Ldisc::new();
        let (echo, _) = type_in(&mut l, b"ab");
        assert_eq!(echo, b"ab");
        assert!(!l.readable());
        // The console sends CR for Enter; ICRNL makes it a newline.
        type_in(&mut l, b"\rcd\r");
        assert!(l.readable());
        assert_eq!(l.bytes_ready(), 6);
        assert_eq!(read_all(&mut l, 100), b"ab\n");
        // A short read takes part of the next line, then the rest.
        assert_eq!(read_all(&mut l, 1), b"c");
        assert_eq!(read_all(&mut l, 100), b"d\n");
        assert!(!l.readable());
    }

    #[test]
    fn erase_word_erase_and_kill_edit_the_line() {
        let mut l = Ldisc::new();
        let (echo, _) = type_in(&mut l, b"abc\x7f");
        assert_eq!(echo, b"abc\x08 \x08");
        type_in(&mut l, b" two words\x17\x17x\n");
        assert_eq!(read_all(&mut l, 100), b"ab x\n");
        let (echo, _) = type_in(&mut l, b"gone\x15kept\n");
        assert!(echo.starts_with(b"gone\x08 \x08\x08 \x08\x08 \x08\x08 \x08kept"));
        assert_eq!(read_all(&mut l, 100), b"kept\n");
        // Erasing an empty line does nothing.
        let (echo, _) = type_in(&mut l, b"\x7f");
        assert!(echo.is_empty());
    }

    #[test]
    fn eof_ends_a_line_and_reads_as_zero_on_an_empty_one() {
        let mut l = Ldisc::new();
        type_in(&mut l, b"no newline\x04");
        assert_eq!(read_all(&mut l, 100), b"no newline");
        type_in(&mut l, b"\x04");
        assert!(l.readable());
        assert_eq!(read_all(&mut l, 100), b"");
        assert!(!l.readable());
    }

    #[test]
    fn signal_characters_flush_and_echo_as_caret() {
        let mut l = Ldisc::new();
        let (echo, signals) = type_in(&mut l, b"half\x03");
        assert_eq!(signals, [SIGINT]);
        assert_eq!(echo, b"half^C");
        type_in(&mut l, b"\n");
        assert_eq!(read_all(&mut l, 100), b"\n");
        let (_, signals) = type_in(&mut l, b"\x1c\x1a");
        assert_eq!(signals, [SIGQUIT, SIGTSTP]);
        // Without ISIG they are input.
        l.termios.lflag &= !ISIG;
        let (echo, signals) = type_in(&mut l, b"\x03\n");
        assert!(signals.is_empty());
        assert_eq!(echo, b"^C\n");
        assert_eq!(read_all(&mut l, 100), b"\x03\n");
    }

    #[test]
    fn raw_mode_passes_bytes_at_once_and_keeps_a_partial_line() {
        let mut l = Ldisc::new();
        type_in(&mut l, b"par");
        let mut raw = l.termios;
        raw.lflag &= !(ICANON | ECHO);
        raw.iflag &= !ICRNL;
        l.set_termios(raw);
        let (echo, _) = type_in(&mut l, b"t\r\x7f");
        assert!(echo.is_empty());
        assert_eq!(l.min_bytes(10), 1);
        assert_eq!(read_all(&mut l, 2), b"pa");
        assert_eq!(read_all(&mut l, 100), b"rt\r\x7f");
        // Back to canonical: unread raw input is one line.
        type_in(&mut l, b"xy");
        l.set_termios(Termios::STD);
        assert_eq!(read_all(&mut l, 100), b"xy");
    }

    #[test]
    fn output_maps_newlines_under_opost_onlcr() {
        let mut l = Ldisc::new();
        let mut out = Vec::new();
        l.output(b"a\nb", &mut out);
        assert_eq!(out, b"a\r\nb");
        l.termios.oflag &= !OPOST;
        out.clear();
        l.output(b"a\nb", &mut out);
        assert_eq!(out, b"a\nb");
    }

    #[test]
    fn a_line_longer_than_the_buffer_is_cut() {
        let mut l = Ldisc::new();
        l.termios.lflag &= !ECHO;
        type_in(&mut l, &vec![b'x'; MAX_CANON + 10]);
        type_in(&mut l, b"\n");
        assert_eq!(l.bytes_ready(), MAX_CANON + 1);
    }
}
