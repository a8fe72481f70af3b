//! `print!`, `println!`, `eprint!` and `eprintln!`. Each call formats into a
//! line buffer on its own stack and hands every full line to one write(2),
//! so lines from different threads or processes do not interleave mid-line,
//! and there is no shared buffer for fork to duplicate.

use crate::errno::Errno;
use crate::fs::write;
use core::fmt;

/// Collects formatted output and writes it to `fd` a line at a time.
struct LineWriter {
    fd: i32,
    buf: [u8; 512],
    len: usize,
}

impl LineWriter {
    fn flush(&mut self) {
        write_all(self.fd, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl fmt::Write for LineWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &byte in s.as_bytes() {
            self.buf[self.len] = byte;
            self.len += 1;
            if byte == b'\n' || self.len == self.buf.len() {
                self.flush();
            }
        }
        Ok(())
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR. Errors
/// are dropped: there is nowhere left to report them.
pub fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

#[doc(hidden)]
pub fn _print(fd: i32, args: fmt::Arguments) {
    let mut out = LineWriter {
        fd,
        buf: [0; 512],
        len: 0,
    };
    let _ = fmt::Write::write_fmt(&mut out, args);
    out.flush();
}

/// Prints to standard output (fd 1).
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::print::_print(1, format_args!($($arg)*)) };
}

/// Prints a line to standard output (fd 1).
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::print::_print(1, format_args!("{}\n", format_args!($($arg)*))) };
}

/// Prints to standard error (fd 2).
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::print::_print(2, format_args!($($arg)*)) };
}

/// Prints a line to standard error (fd 2).
#[macro_export]
macro_rules! eprintln {
    () => { $crate::eprint!("\n") };
    ($($arg:tt)*) => { $crate::print::_print(2, format_args!("{}\n", format_args!($($arg)*))) };
}
