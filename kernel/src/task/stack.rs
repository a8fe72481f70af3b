//! The initial user stack of a new program: argc, the argument and
//! environment strings with their pointer arrays, and the auxiliary vector,
//! laid out as a C library's `_start` expects to find them (Linux:
//! `create_elf_tables` in `fs/binfmt_elf.c`, strings placed by
//! `copy_strings` in `fs/exec.c`).
//!
//! From `stack_top` down:
//!
//! ```text
//!   stack_top -> +----------------------------------+
//!                | 8 zero bytes (end marker)        |
//!                | execfn string                    |  AT_EXECFN points here
//!                | envp strings                     |
//!                | argv strings, argv[0] lowest     |  each NUL-terminated
//!                | padding to 16                    |
//!                | "aarch64"                        |  AT_PLATFORM points here
//!                | 16 random bytes                  |  AT_RANDOM points here
//!                | padding to 16                    |
//!                | auxv: (type, value) pairs        |
//!                | ... ending with (AT_NULL, 0)     |
//!                | NULL                             |
//!                | envp[0] .. envp[envc - 1]        |
//!                | NULL                             |
//!                | argv[0] .. argv[argc - 1]        |
//!         sp ->  | argc                             |  16-aligned, as AAPCS64 requires
//!                +----------------------------------+
//! ```
//!
//! Everything is built here in a buffer, with pointers already holding the
//! user addresses the strings will have; the caller copies the buffer to
//! `sp` in the new address space and starts the program there.
//!
//! Where we simplify:
//! - No random offset below the strings (Linux's `arch_align_stack`), so the
//!   layout only depends on the inputs.
//! - The size limit is a parameter. Linux derives it from `RLIMIT_STACK`
//!   (a quarter of it, at most 6 MiB) and counts only strings and pointers.

use alloc::vec;
use alloc::vec::Vec;
pub use uapi::auxvec::{
    AT_BASE, AT_CLKTCK, AT_EGID, AT_ENTRY, AT_EUID, AT_EXECFN, AT_FLAGS, AT_GID, AT_HWCAP,
    AT_HWCAP2, AT_MINSIGSTKSZ, AT_NULL, AT_PAGESZ, AT_PHDR, AT_PHENT, AT_PHNUM, AT_PLATFORM,
    AT_RANDOM, AT_SECURE, AT_SYSINFO_EHDR, AT_UID,
};

/// Longest string `execve` copies, counting its NUL (Linux: 32 pages).
pub const MAX_ARG_STRLEN: usize = 131_072;

/// Linux leaves a pointer-sized zero word at the very top of the stack
/// (`__bprm_mm_init`).
const END_MARKER: u64 = 8;

/// What goes on a new program's stack.
pub struct ExecArgs<'a> {
    /// Arguments, without their NULs. None at all is treated as one empty
    /// string, as Linux does since 5.18 (programs assume `argv[0]` exists).
    pub argv: &'a [&'a [u8]],
    /// Environment, `NAME=value` strings without their NULs.
    pub envp: &'a [&'a [u8]],
    /// The path given to `execve`, without its NUL.
    pub execfn: &'a [u8],
    /// Bytes for `AT_RANDOM`, from the kernel's random source.
    pub random: [u8; 16],
    /// `AT_HWCAP2`.
    pub hwcap2: u64,
    /// The platform's name for `AT_PLATFORM`, without its NUL.
    pub platform: &'a [u8],
    /// The auxiliary vector up to `AT_SECURE`; what follows it in Linux's
    /// order (`AT_RANDOM`, `AT_HWCAP2`, `AT_EXECFN`, `AT_PLATFORM`) and the
    /// closing `AT_NULL` are added here.
    pub auxv: &'a [(u64, u64)],
}

/// A built stack: `bytes` are the contents of `[sp, stack_top)`.
#[derive(Debug, PartialEq, Eq)]
pub struct InitialStack {
    /// The new program's initial `sp`, 16-aligned: where argc is.
    pub sp: u64,
    /// The stack's contents from `sp` up to `stack_top`, to copy out.
    pub bytes: Vec<u8>,
}

/// Why a stack can't be built; `execve` returns E2BIG for both.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StackError {
    /// A string is longer than [`MAX_ARG_STRLEN`] with its NUL.
    ArgTooLong,
    /// Everything together is more than the limit, or more than fits below
    /// `stack_top`.
    TooBig,
}

/// Lays out `args` below `stack_top`, using at most `limit` bytes.
pub fn create_elf_tables(
    stack_top: u64,
    limit: usize,
    args: &ExecArgs,
) -> Result<InitialStack, StackError> {
    let argv: &[&[u8]] = if args.argv.is_empty() {
        &[b""]
    } else {
        args.argv
    };
    let strings = argv.iter().chain(args.envp).chain([&args.execfn]);

    // Work out every address before allocating anything, so a request that
    // is too big fails without touching memory.
    let mut strings_len: u64 = END_MARKER;
    for s in strings.clone() {
        // Linux counts the NUL too.
        if s.len() >= MAX_ARG_STRLEN {
            return Err(StackError::ArgTooLong);
        }
        strings_len = strings_len
            .checked_add(s.len() as u64 + 1)
            .ok_or(StackError::TooBig)?;
    }
    let strings_start = stack_top
        .checked_sub(strings_len)
        .ok_or(StackError::TooBig)?;
    // Linux's arch_align_stack() rounds down to 16 here, after moving down
    // by a random amount, which we leave out; the platform's name and the
    // random bytes go right below.
    let platform = align_down(strings_start, 16)
        .checked_sub(args.platform.len() as u64 + 1)
        .ok_or(StackError::TooBig)?;
    let random = platform.checked_sub(16).ok_or(StackError::TooBig)?;
    // argc, argv + NULL, envp + NULL, and two words per auxv entry, five of
    // which are added here.
    let words = (argv.len() as u64 + 1)
        .checked_add(args.envp.len() as u64 + 1)
        .and_then(|w| w.checked_add(1))
        .and_then(|w| w.checked_add(2 * (args.auxv.len() as u64 + 5)))
        .ok_or(StackError::TooBig)?;
    let sp = words
        .checked_mul(8)
        .and_then(|bytes| random.checked_sub(bytes))
        .map(|sp| align_down(sp, 16))
        .ok_or(StackError::TooBig)?;
    let size = usize::try_from(stack_top - sp).map_err(|_| StackError::TooBig)?;
    if size > limit {
        return Err(StackError::TooBig);
    }

    let mut stack = Writer {
        sp,
        bytes: vec![0; size],
    };
    // The strings in ascending order, so argv and envp each form one run of
    // memory (what /proc/<pid>/cmdline and environ show); the end marker is
    // already zero.
    let mut at = strings_start;
    let mut addresses = Vec::with_capacity(argv.len() + args.envp.len() + 1);
    for s in strings {
        addresses.push(at);
        stack.put_bytes(at, s);
        at += s.len() as u64 + 1;
    }
    let (argv_addrs, rest) = addresses.split_at(argv.len());
    let (envp_addrs, execfn) = rest.split_at(args.envp.len());
    let added = [
        (AT_RANDOM, random),
        (AT_HWCAP2, args.hwcap2),
        (AT_EXECFN, execfn[0]),
        (AT_PLATFORM, platform),
        (AT_NULL, 0),
    ];
    stack.put_bytes(random, &args.random);
    stack.put_bytes(platform, args.platform);

    let mut at = sp;
    let mut push = |word: u64| {
        stack.put_bytes(at, &word.to_le_bytes());
        at += 8;
    };
    push(argv.len() as u64);
    for &addr in argv_addrs {
        push(addr);
    }
    push(0);
    for &addr in envp_addrs {
        push(addr);
    }
    push(0);
    for (key, value) in args.auxv.iter().copied().chain(added) {
        push(key);
        push(value);
    }

    Ok(InitialStack {
        sp,
        bytes: stack.bytes,
    })
}

/// The stack being built, addressed by the user addresses it will have.
struct Writer {
    /// The lowest user address of the stack; `bytes[0]` goes there.
    sp: u64,
    /// The contents of `[sp, stack_top)`, zero where nothing is written.
    bytes: Vec<u8>,
}

impl Writer {
    /// Writes `data` at user address `addr`, which lies in `[sp, stack_top)`.
    fn put_bytes(&mut self, addr: u64, data: &[u8]) {
        let at = (addr - self.sp) as usize;
        self.bytes[at..at + data.len()].copy_from_slice(data);
    }
}

/// Rounds `addr` down to a multiple of `align`, a power of two.
fn align_down(addr: u64, align: u64) -> u64 {
    addr & !(align - 1)
}

#[cfg(test)]
mod tests;
