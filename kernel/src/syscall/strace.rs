//! `strace` on the kernel command line: each system call as strace(1)
//! prints it, by name with its arguments decoded, after it returns:
//! `[TID] openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3`,
//! `mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1,
//! 0) = 0xfffefffee000`, an error as `= -1 ENOENT`. Linux has no such
//! switch (strace uses ptrace); this is for following a program on a
//! kernel without one.
//!
//! The decoding here is pure: user memory comes through [`UserMemory`],
//! so the host tests can hand it strings of their own.
//!
//! Where we simplify: the calls programs make most are decoded (the
//! table below); any other shows its six registers in hex. Strings show
//! their first 32 bytes, as strace's default `-s 32`; structures show
//! their address.

// The table uses Linux's names for the numbers, lower case and all.
#![allow(non_upper_case_globals)]

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use uapi::fcntl::AT_FDCWD;
use uapi::unistd::*;

/// The traced process's memory, for the strings and buffers shown.
pub trait UserMemory {
    /// The NUL-terminated string at `addr`, None if it cannot be read.
    fn string(&self, addr: u64) -> Option<Vec<u8>>;
    /// `len` bytes at `addr`, None if they cannot be read.
    fn bytes(&self, addr: u64, len: usize) -> Option<Vec<u8>>;
}

/// How an argument is shown.
#[derive(Clone, Copy)]
enum Arg {
    /// A signed number.
    Int,
    /// An unsigned number (a size, a count).
    Uint,
    /// A number in hex (flags not decoded, an offset).
    Hex,
    /// An address: NULL or hex.
    Ptr,
    /// A descriptor, or AT_FDCWD.
    Fd,
    /// A NUL-terminated string in user memory (a path).
    Str,
    /// A buffer the call reads, its length in argument N.
    BufIn(usize),
    /// A buffer the call fills, as many bytes as it returned.
    BufOut,
    /// open's flags: O_RDONLY|O_CREAT|...
    OpenFlags,
    /// A mode, in octal.
    Mode,
    /// mmap's and mprotect's PROT_* bits.
    Prot,
    /// mmap's MAP_* flags.
    MapFlags,
    /// A signal number: SIGTERM.
    Signal,
}

use Arg::*;

/// The calls decoded, with their arguments (strace's `sysent` table).
fn signature(nr: usize) -> Option<&'static [Arg]> {
    Some(match nr {
        __NR_read => &[Fd, BufOut, Uint],
        __NR_write => &[Fd, BufIn(2), Uint],
        __NR_pread64 => &[Fd, BufOut, Uint, Int],
        __NR_pwrite64 => &[Fd, BufIn(2), Uint, Int],
        __NR_openat => &[Fd, Str, OpenFlags, Mode],
        __NR_close => &[Fd],
        __NR_dup => &[Fd],
        __NR_dup3 => &[Fd, Fd, OpenFlags],
        __NR_fcntl => &[Fd, Int, Hex],
        __NR_ioctl => &[Fd, Hex, Ptr],
        __NR_lseek => &[Fd, Int, Int],
        __NR_getdents64 => &[Fd, Ptr, Uint],
        __NR_newfstatat => &[Fd, Str, Ptr, Hex],
        __NR_fstat => &[Fd, Ptr],
        __NR_statx => &[Fd, Str, Hex, Hex, Ptr],
        __NR_readlinkat => &[Fd, Str, BufOut, Uint],
        __NR_faccessat | __NR_faccessat2 => &[Fd, Str, Int, Hex],
        __NR_mkdirat => &[Fd, Str, Mode],
        __NR_unlinkat => &[Fd, Str, Hex],
        __NR_renameat2 => &[Fd, Str, Fd, Str, Hex],
        __NR_chdir => &[Str],
        __NR_mount => &[Str, Str, Str, Hex, Ptr],
        __NR_umount2 => &[Str, Hex],
        __NR_getcwd => &[Ptr, Uint],
        __NR_pipe2 => &[Ptr, OpenFlags],
        __NR_mmap => &[Ptr, Uint, Prot, MapFlags, Fd, Hex],
        __NR_munmap => &[Ptr, Uint],
        __NR_mprotect => &[Ptr, Uint, Prot],
        __NR_madvise => &[Ptr, Uint, Int],
        __NR_brk => &[Ptr],
        __NR_execve => &[Str, Ptr, Ptr],
        __NR_exit | __NR_exit_group => &[Int],
        __NR_clone => &[Hex, Ptr, Ptr, Ptr, Ptr],
        __NR_wait4 => &[Int, Ptr, Hex, Ptr],
        __NR_kill => &[Int, Signal],
        __NR_tgkill => &[Int, Int, Signal],
        __NR_rt_sigaction => &[Signal, Ptr, Ptr, Uint],
        __NR_rt_sigprocmask => &[Int, Ptr, Ptr, Uint],
        __NR_futex => &[Ptr, Int, Int, Ptr],
        __NR_set_tid_address => &[Ptr],
        __NR_set_robust_list => &[Ptr, Uint],
        __NR_getpid | __NR_getppid | __NR_gettid | __NR_getuid | __NR_geteuid | __NR_getgid
        | __NR_getegid | __NR_sched_yield => &[],
        __NR_uname => &[Ptr],
        __NR_clock_gettime => &[Int, Ptr],
        __NR_clock_nanosleep => &[Int, Hex, Ptr, Ptr],
        __NR_nanosleep => &[Ptr, Ptr],
        __NR_prlimit64 => &[Int, Int, Ptr, Ptr],
        __NR_getrandom => &[Ptr, Uint, Hex],
        __NR_memfd_create => &[Str, Hex],
        __NR_ftruncate => &[Fd, Int],
        __NR_ppoll => &[Ptr, Uint, Ptr, Ptr, Uint],
        _ => return None,
    })
}

/// The call's name (`__NR_openat` without `__NR_`), from uapi's table.
fn name(nr: usize) -> Option<&'static str> {
    ALL.iter()
        .find(|(_, value, _)| *value == nr as i128)
        .map(|(name, _, _)| name.trim_start_matches("__NR_"))
}

/// `names` of the bits set in `value` joined by `|`, with what is left in
/// hex; `zero` if none is set.
fn bits(out: &mut String, value: u64, names: &[(&str, u64)], zero: &str) {
    let mut left = value;
    let mut first = true;
    for &(name, bit) in names {
        if bit != 0 && left & bit == bit {
            let _ = write!(out, "{}{name}", if first { "" } else { "|" });
            left &= !bit;
            first = false;
        }
    }
    if left != 0 || first {
        let sep = if first { "" } else { "|" };
        match (left, first) {
            (0, true) => out.push_str(zero),
            _ => {
                let _ = write!(out, "{sep}{left:#x}");
            }
        }
    }
}

/// Bytes as strace quotes them: printable ASCII as is, the usual escapes,
/// anything else in octal; cut after `STRING_MAX` with `...`.
fn quoted(out: &mut String, bytes: &[u8], more: bool) {
    /// strace's default `-s`: bytes of a string shown.
    const STRING_MAX: usize = 32;
    out.push('"');
    let shown = &bytes[..bytes.len().min(STRING_MAX)];
    for (i, &b) in shown.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b' '..=b'~' => out.push(b as char),
            _ => {
                // Three digits where a digit follows, so it cannot join it.
                let next_digit = shown.get(i + 1).is_some_and(|c| c.is_ascii_digit());
                let _ = if next_digit {
                    write!(out, "\\{b:03o}")
                } else {
                    write!(out, "\\{b:o}")
                };
            }
        }
    }
    out.push('"');
    if more || bytes.len() > STRING_MAX {
        out.push_str("...");
    }
}

/// Bytes of a buffer read to show it (as many as a string shows).
const BUFFER_SHOWN: usize = 32;

/// A user buffer of `len` bytes at `addr`, quoted; its address if it
/// cannot be read.
fn buffer(out: &mut String, mem: &dyn UserMemory, addr: u64, len: usize) {
    let n = len.min(BUFFER_SHOWN);
    match mem.bytes(addr, n) {
        Some(bytes) => quoted(out, &bytes, len > n),
        None => {
            let _ = write!(out, "{addr:#x}");
        }
    }
}

/// The strings a call was given, read as it entered: execve's are gone
/// from the process once it has succeeded (strace reads them at entry
/// too).
pub struct Entry([Option<Vec<u8>>; 6]);

/// What `line` will need of call `nr`'s arguments from before it runs.
pub fn entry(mem: &dyn UserMemory, nr: usize, args: &[u64; 6]) -> Entry {
    let kinds = signature(nr).unwrap_or(&[]);
    Entry(core::array::from_fn(|i| match kinds.get(i) {
        Some(Str) => mem.string(args[i]),
        _ => None,
    }))
}

/// One argument, shown as `kind` says; a string is `given` (from entry).
/// `args` are all six registers and `ret` the result (for a buffer the
/// call filled).
fn arg(
    out: &mut String,
    mem: &dyn UserMemory,
    (kind, value, given): (Arg, u64, Option<&[u8]>),
    args: &[u64; 6],
    ret: i64,
) {
    match kind {
        Int => {
            let _ = write!(out, "{}", value as i64);
        }
        Uint => {
            let _ = write!(out, "{value}");
        }
        // C's `%#x`, as strace prints: plain 0 for zero.
        Hex if value == 0 => out.push('0'),
        Hex => {
            let _ = write!(out, "{value:#x}");
        }
        Ptr if value == 0 => out.push_str("NULL"),
        Ptr => {
            let _ = write!(out, "{value:#x}");
        }
        Fd if value as i32 == AT_FDCWD => out.push_str("AT_FDCWD"),
        Fd => {
            let _ = write!(out, "{}", value as i32);
        }
        Str => match given {
            Some(s) => quoted(out, s, false),
            None => arg(out, mem, (Ptr, value, None), args, ret),
        },
        BufIn(len) => buffer(out, mem, value, args[len] as usize),
        BufOut if ret >= 0 => buffer(out, mem, value, ret as usize),
        BufOut => arg(out, mem, (Ptr, value, None), args, ret),
        OpenFlags => open_flags(out, value),
        // C's `%#03o`, as strace prints: 0644, 000.
        Mode if value == 0 => out.push_str("000"),
        Mode => {
            let _ = write!(out, "0{value:o}");
        }
        Prot => {
            use uapi::mman::{PROT_EXEC, PROT_READ, PROT_WRITE};
            let names = [
                ("PROT_READ", PROT_READ as u64),
                ("PROT_WRITE", PROT_WRITE as u64),
                ("PROT_EXEC", PROT_EXEC as u64),
            ];
            bits(out, value, &names, "PROT_NONE");
        }
        MapFlags => map_flags(out, value),
        Signal => match uapi::signal::ALL
            .iter()
            .find(|(n, v, _)| n.starts_with("SIG") && *v == value as i128)
        {
            Some((n, _, _)) => out.push_str(n),
            None => {
                let _ = write!(out, "{}", value as i32);
            }
        },
    }
}

/// A value whose `mask` bits are one field named by `kinds` (open's access
/// mode, mmap's mapping type) and whose other bits are `names`.
fn field_and_bits(
    out: &mut String,
    value: u64,
    mask: u64,
    kinds: &[(&str, u64)],
    names: &[(&str, u64)],
) {
    let kind = kinds.iter().find(|(_, v)| *v == value & mask);
    let kind = kind.map_or("", |(name, _)| name);
    out.push_str(kind);
    let rest = value & !mask;
    if rest != 0 || kind.is_empty() {
        if !kind.is_empty() {
            out.push('|');
        }
        bits(out, rest, names, "0");
    }
}

/// open's flags: the access mode by name, then the other bits.
fn open_flags(out: &mut String, value: u64) {
    use uapi::fcntl::*;
    let modes = [
        ("O_RDONLY", O_RDONLY as u64),
        ("O_WRONLY", O_WRONLY as u64),
        ("O_RDWR", O_RDWR as u64),
    ];
    let names = [
        ("O_CREAT", O_CREAT as u64),
        ("O_EXCL", O_EXCL as u64),
        ("O_TRUNC", O_TRUNC as u64),
        ("O_APPEND", O_APPEND as u64),
        ("O_NONBLOCK", O_NONBLOCK as u64),
        ("O_TMPFILE", O_TMPFILE as u64),
        ("O_DIRECTORY", O_DIRECTORY as u64),
        ("O_NOFOLLOW", O_NOFOLLOW as u64),
        ("O_NOATIME", O_NOATIME as u64),
        ("O_CLOEXEC", O_CLOEXEC as u64),
    ];
    field_and_bits(out, value, O_ACCMODE as u64, &modes, &names);
}

/// mmap's flags: the mapping type by name, then the other bits.
fn map_flags(out: &mut String, value: u64) {
    use uapi::mman::*;
    let kinds = [
        ("MAP_SHARED", MAP_SHARED as u64),
        ("MAP_PRIVATE", MAP_PRIVATE as u64),
        ("MAP_SHARED_VALIDATE", MAP_SHARED_VALIDATE as u64),
        ("MAP_DROPPABLE", MAP_DROPPABLE as u64),
    ];
    let names = [
        ("MAP_FIXED", MAP_FIXED as u64),
        ("MAP_ANONYMOUS", MAP_ANONYMOUS as u64),
        ("MAP_GROWSDOWN", MAP_GROWSDOWN as u64),
        ("MAP_LOCKED", MAP_LOCKED as u64),
        ("MAP_NORESERVE", MAP_NORESERVE as u64),
        ("MAP_POPULATE", MAP_POPULATE as u64),
        ("MAP_NONBLOCK", MAP_NONBLOCK as u64),
        ("MAP_STACK", MAP_STACK as u64),
        ("MAP_HUGETLB", MAP_HUGETLB as u64),
        ("MAP_FIXED_NOREPLACE", MAP_FIXED_NOREPLACE as u64),
    ];
    field_and_bits(out, value, MAP_TYPE as u64, &kinds, &names);
}

/// The line for call `nr` of thread `tid` with registers `args`, which
/// returned `ret` (`-errno` on failure), with the strings `given` at its
/// entry and buffers read from `mem`.
pub fn line(
    mem: &dyn UserMemory,
    given: &Entry,
    tid: u32,
    nr: usize,
    args: &[u64; 6],
    ret: i64,
) -> String {
    let mut out = String::new();
    let _ = write!(out, "[{tid}] ");
    match name(nr) {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "syscall_{nr}");
        }
    }
    out.push('(');
    match signature(nr) {
        Some(kinds) => {
            // open's mode only matters, and strace shows it only, when it
            // creates a file.
            let creates = uapi::fcntl::O_CREAT | uapi::fcntl::O_TMPFILE;
            let kinds = match nr {
                __NR_openat if args[2] as u32 & creates == 0 => &kinds[..3],
                _ => kinds,
            };
            for (i, &kind) in kinds.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let string = given.0[i].as_deref();
                arg(&mut out, mem, (kind, args[i], string), args, ret);
            }
        }
        None => {
            for (i, value) in args.iter().enumerate() {
                let _ = write!(out, "{}{value:#x}", if i > 0 { ", " } else { "" });
            }
        }
    }
    out.push_str(") = ");
    if (-4095..0).contains(&ret) {
        let name = uapi::errno::ALL
            .iter()
            .find(|(_, v, _)| *v == -ret as i128)
            .map_or("E?", |(n, _, _)| n);
        let _ = write!(out, "-1 {name}");
    } else if matches!(nr, __NR_mmap | __NR_brk | __NR_mremap) {
        let _ = write!(out, "{ret:#x}");
    } else {
        let _ = write!(out, "{ret}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    /// Memory holding one string, "/etc/passwd", at 0x1000.
    struct OneString;

    impl UserMemory for OneString {
        fn string(&self, addr: u64) -> Option<Vec<u8>> {
            (addr == 0x1000).then(|| b"/etc/passwd".to_vec())
        }
        fn bytes(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
            let s = self.string(addr)?;
            Some(s[..len.min(s.len())].to_vec())
        }
    }

    /// A process whose memory is gone (after an execve).
    struct NoMemory;

    impl UserMemory for NoMemory {
        fn string(&self, _addr: u64) -> Option<Vec<u8>> {
            None
        }
        fn bytes(&self, _addr: u64, _len: usize) -> Option<Vec<u8>> {
            None
        }
    }

    fn line_of(nr: usize, args: [u64; 6], ret: i64) -> String {
        let given = entry(&OneString, nr, &args);
        line(&OneString, &given, 1, nr, &args, ret)
    }

    #[test]
    fn paths_and_buffers_are_read_from_the_process() {
        let open = line_of(
            __NR_openat,
            [AT_FDCWD as i64 as u64, 0x1000, 0x80000, 0, 0, 0],
            3,
        );
        assert_eq!(
            open,
            "[1] openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY|O_CLOEXEC) = 3"
        );
        let read = line_of(__NR_read, [3, 0x1000, 100, 0, 0, 0], 4);
        assert_eq!(read, "[1] read(3, \"/etc\", 100) = 4");
        let bad = line_of(__NR_chdir, [0x2000, 0, 0, 0, 0, 0], -14);
        assert_eq!(bad, "[1] chdir(0x2000) = -1 EFAULT");
        // Read at entry: an execve that succeeded has no old memory left.
        let given = entry(&OneString, __NR_execve, &[0x1000, 0, 0, 0, 0, 0]);
        let exec = line(
            &NoMemory,
            &given,
            1,
            __NR_execve,
            &[0x1000, 0, 0, 0, 0, 0],
            0,
        );
        assert_eq!(exec, "[1] execve(\"/etc/passwd\", NULL, NULL) = 0");
    }

    #[test]
    fn mmap_decodes_protection_and_flags() {
        let args = [0, 65536, 3, 0x22, u64::MAX, 0];
        assert_eq!(
            line_of(__NR_mmap, args, 0xfffe_fffe_e000),
            "[1] mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0xfffefffee000"
        );
        let none = line_of(__NR_mprotect, [0x1000, 4096, 0, 0, 0, 0], 0);
        assert_eq!(none, "[1] mprotect(0x1000, 4096, PROT_NONE) = 0");
    }

    #[test]
    fn modes_and_offsets_print_as_c_does() {
        let mk = line_of(
            __NR_mkdirat,
            [AT_FDCWD as i64 as u64, 0x1000, 0o1777, 0, 0, 0],
            0,
        );
        assert_eq!(mk, "[1] mkdirat(AT_FDCWD, \"/etc/passwd\", 01777) = 0");
        let map = line_of(__NR_mmap, [0, 4096, 1, 1, 3, 0x2000], 0x7000);
        assert_eq!(
            map,
            "[1] mmap(NULL, 4096, PROT_READ, MAP_SHARED, 3, 0x2000) = 0x7000"
        );
    }

    #[test]
    fn errors_show_their_name_and_unknown_calls_their_registers() {
        let l = line_of(__NR_close, [99, 0, 0, 0, 0, 0], -9);
        assert_eq!(l, "[1] close(99) = -1 EBADF");
        let l = line_of(__NR_io_setup, [1, 2, 3, 4, 5, 6], -38);
        assert_eq!(l, "[1] io_setup(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = -1 ENOSYS");
    }

    #[test]
    fn open_flags_and_strings_quote_as_strace() {
        let mut s = String::new();
        open_flags(
            &mut s,
            (uapi::fcntl::O_WRONLY | uapi::fcntl::O_CREAT | 0x4000_0000) as u64,
        );
        assert_eq!(s, "O_WRONLY|O_CREAT|0x40000000");
        let mut s = String::new();
        quoted(&mut s, b"\x7fELF\x02\x01\x011\n\"", false);
        assert_eq!(s, "\"\\177ELF\\2\\1\\0011\\n\\\"\"");
        let mut s = String::new();
        quoted(&mut s, &[b'a'; 40], false);
        assert_eq!(s, format!("\"{}\"...", "a".repeat(32)));
    }
}
