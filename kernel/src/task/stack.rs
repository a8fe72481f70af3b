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

/// End of the auxiliary vector.
pub const AT_NULL: u64 = 0;
/// Address of the program headers.
pub const AT_PHDR: u64 = 3;
/// Size of one program header.
pub const AT_PHENT: u64 = 4;
/// Number of program headers.
pub const AT_PHNUM: u64 = 5;
/// Page size.
pub const AT_PAGESZ: u64 = 6;
/// Where the interpreter was loaded; 0, as there is none.
pub const AT_BASE: u64 = 7;
/// Flags; always 0.
pub const AT_FLAGS: u64 = 8;
/// The program's entry point.
pub const AT_ENTRY: u64 = 9;
pub const AT_UID: u64 = 11;
pub const AT_EUID: u64 = 12;
pub const AT_GID: u64 = 13;
pub const AT_EGID: u64 = 14;
/// CPU features (`HWCAP_*`), what `getauxval(AT_HWCAP)` reports.
pub const AT_HWCAP: u64 = 16;
/// Clock ticks per second, for `times(2)`.
pub const AT_CLKTCK: u64 = 17;
/// Non-zero for a set-uid program: the C library then ignores `LD_*`.
pub const AT_SECURE: u64 = 23;
/// Address of 16 random bytes, which seed the C library's stack protector
/// and pointer mangling.
pub const AT_RANDOM: u64 = 25;
/// More CPU features (`HWCAP2_*`).
pub const AT_HWCAP2: u64 = 26;
/// Address of the file name given to `execve`.
pub const AT_EXECFN: u64 = 31;
/// Address of the platform's name (Linux arm64's `ELF_PLATFORM`,
/// "aarch64"), which ld.so uses in library search paths.
pub const AT_PLATFORM: u64 = 15;
/// The smallest signal stack a handler's frame fits on (arm64's
/// `ARCH_DLINFO` adds it, with `AT_SYSINFO_EHDR`).
pub const AT_MINSIGSTKSZ: u64 = 51;
/// Where the vDSO's ELF header is mapped.
pub const AT_SYSINFO_EHDR: u64 = 33;

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
    pub sp: u64,
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
    sp: u64,
    bytes: Vec<u8>,
}

impl Writer {
    fn put_bytes(&mut self, addr: u64, data: &[u8]) {
        let at = (addr - self.sp) as usize;
        self.bytes[at..at + data.len()].copy_from_slice(data);
    }
}

fn align_down(addr: u64, align: u64) -> u64 {
    addr & !(align - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::vec;
    use std::vec::Vec;

    const TOP: u64 = 0x0000_ffff_ffff_f000;
    const RANDOM: [u8; 16] = *b"0123456789abcdef";

    /// What the kernel passes, with recognisable values.
    const AUXV: &[(u64, u64)] = &[
        (AT_HWCAP, 0x8ff),
        (AT_PAGESZ, 4096),
        (AT_CLKTCK, 100),
        (AT_PHDR, 0x40_0040),
        (AT_PHENT, 56),
        (AT_PHNUM, 4),
        (AT_BASE, 0),
        (AT_FLAGS, 0),
        (AT_ENTRY, 0x40_0120),
        (AT_UID, 1000),
        (AT_EUID, 1001),
        (AT_GID, 1002),
        (AT_EGID, 1003),
        (AT_SECURE, 0),
    ];

    fn args<'a>(argv: &'a [&'a [u8]], envp: &'a [&'a [u8]]) -> ExecArgs<'a> {
        ExecArgs {
            argv,
            envp,
            execfn: b"/bin/prog",
            random: RANDOM,
            hwcap2: 0x2,
            platform: b"aarch64",
            auxv: AUXV,
        }
    }

    /// The stack as the program sees it.
    #[derive(Debug)]
    struct Seen {
        argv: Vec<Vec<u8>>,
        envp: Vec<Vec<u8>>,
        auxv: Vec<(u64, u64)>,
    }

    /// Reads `stack` the way a C library's start-up code does, from `sp`
    /// and through the pointers, checking every read lands in the stack.
    fn read_back(stack: &InitialStack, top: u64) -> Seen {
        assert_eq!(stack.sp % 16, 0, "sp must be 16-aligned");
        assert_eq!(stack.sp + stack.bytes.len() as u64, top);
        let word = |addr: u64| {
            assert!(
                addr >= stack.sp && addr + 8 <= top,
                "word at {addr:#x} off the stack"
            );
            assert_eq!(addr % 8, 0);
            let at = (addr - stack.sp) as usize;
            u64::from_le_bytes(stack.bytes[at..at + 8].try_into().unwrap())
        };
        let string = |addr: u64| {
            assert!(
                addr >= stack.sp && addr < top,
                "string at {addr:#x} off the stack"
            );
            let tail = &stack.bytes[(addr - stack.sp) as usize..];
            let len = tail
                .iter()
                .position(|&b| b == 0)
                .expect("string without NUL");
            tail[..len].to_vec()
        };
        let mut at = stack.sp;
        let mut next = || {
            at += 8;
            word(at - 8)
        };
        let argc = next();
        let argv = (0..argc).map(|_| string(next())).collect();
        assert_eq!(next(), 0, "argv not NULL-terminated");
        let mut envp = Vec::new();
        loop {
            match next() {
                0 => break,
                addr => envp.push(string(addr)),
            }
        }
        let mut auxv = Vec::new();
        loop {
            let pair = (next(), next());
            auxv.push(pair);
            if pair.0 == AT_NULL {
                break;
            }
        }
        Seen { argv, envp, auxv }
    }

    fn aux_value(seen: &Seen, key: u64) -> u64 {
        let mut matches = seen.auxv.iter().filter(|&&(k, _)| k == key);
        let (_, value) = *matches.next().expect("auxv entry missing");
        assert!(matches.next().is_none(), "auxv entry {key} twice");
        value
    }

    fn bytes_at(stack: &InitialStack, addr: u64, len: usize) -> &[u8] {
        let at = (addr - stack.sp) as usize;
        &stack.bytes[at..at + len]
    }

    #[test]
    fn program_sees_its_arguments_environment_and_auxv() {
        let argv: &[&[u8]] = &[b"/bin/prog", b"-v", b"hello world"];
        let envp: &[&[u8]] = &[b"HOME=/", b"TERM=vt100"];
        let stack = create_elf_tables(TOP, 1 << 20, &args(argv, envp)).unwrap();
        let seen = read_back(&stack, TOP);

        assert_eq!(seen.argv, argv);
        assert_eq!(seen.envp, envp);
        // The caller's entries in order, then the five added here, in
        // Linux's order.
        assert_eq!(&seen.auxv[..AUXV.len()], AUXV);
        let added: Vec<u64> = seen.auxv[AUXV.len()..].iter().map(|&(k, _)| k).collect();
        assert_eq!(
            added,
            [AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM, AT_NULL]
        );
        assert_eq!(aux_value(&seen, AT_HWCAP2), 0x2);
        assert_eq!(seen.auxv.last(), Some(&(AT_NULL, 0)));
    }

    #[test]
    fn at_random_points_at_the_random_bytes() {
        let stack = create_elf_tables(TOP, 1 << 20, &args(&[b"prog"], &[])).unwrap();
        let seen = read_back(&stack, TOP);
        let random = aux_value(&seen, AT_RANDOM);
        assert_eq!(bytes_at(&stack, random, 16), RANDOM);
    }

    #[test]
    fn at_platform_is_right_below_the_strings_and_above_the_random_bytes() {
        let stack = create_elf_tables(TOP, 1 << 20, &args(&[b"prog"], &[])).unwrap();
        let seen = read_back(&stack, TOP);
        let platform = aux_value(&seen, AT_PLATFORM);
        assert_eq!(bytes_at(&stack, platform, 8), b"aarch64\0");
        // As Linux: below the 16-aligned strings, the random bytes below it.
        let argv0 = u64::from_le_bytes(bytes_at(&stack, stack.sp + 8, 8).try_into().unwrap());
        assert_eq!(platform, align_down(argv0, 16) - 8);
        assert_eq!(aux_value(&seen, AT_RANDOM), platform - 16);
    }

    #[test]
    fn at_execfn_is_the_last_string_below_the_end_marker() {
        let mut a = args(&[b"prog"], &[b"A=1"]);
        a.execfn = b"./relative/path/to/prog";
        let stack = create_elf_tables(TOP, 1 << 20, &a).unwrap();
        let seen = read_back(&stack, TOP);
        let execfn = aux_value(&seen, AT_EXECFN);
        let len = a.execfn.len() as u64;
        assert_eq!(execfn, TOP - 8 - (len + 1));
        assert_eq!(
            bytes_at(&stack, execfn, len as usize + 1),
            b"./relative/path/to/prog\0"
        );
        assert_eq!(bytes_at(&stack, TOP - 8, 8), [0; 8]);
    }

    #[test]
    fn strings_are_one_ascending_run() {
        let argv: &[&[u8]] = &[b"a", b"bb", b""];
        let envp: &[&[u8]] = &[b"X=1", b"Y="];
        let stack = create_elf_tables(TOP, 1 << 20, &args(argv, envp)).unwrap();
        let seen = read_back(&stack, TOP);
        let argv0 = u64::from_le_bytes(bytes_at(&stack, stack.sp + 8, 8).try_into().unwrap());
        let run = b"a\0bb\0\0X=1\0Y=\0/bin/prog\0\0\0\0\0\0\0\0\0";
        assert_eq!(argv0, TOP - run.len() as u64);
        assert_eq!(bytes_at(&stack, argv0, run.len()), run);
        assert_eq!(seen.argv, argv);
    }

    #[test]
    fn empty_argv_becomes_one_empty_string() {
        let stack = create_elf_tables(TOP, 1 << 20, &args(&[], &[])).unwrap();
        let seen = read_back(&stack, TOP);
        assert_eq!(seen.argv, [b""]);
        assert!(seen.envp.is_empty());
    }

    #[test]
    fn empty_environment() {
        let stack = create_elf_tables(TOP, 1 << 20, &args(&[b"prog"], &[])).unwrap();
        let seen = read_back(&stack, TOP);
        assert_eq!(seen.argv, [b"prog"]);
        assert!(seen.envp.is_empty());
    }

    #[test]
    fn empty_auxv_still_gets_the_five_added_entries() {
        let mut a = args(&[b"prog"], &[]);
        a.auxv = &[];
        let stack = create_elf_tables(TOP, 1 << 20, &a).unwrap();
        let seen = read_back(&stack, TOP);
        let keys: Vec<u64> = seen.auxv.iter().map(|&(k, _)| k).collect();
        assert_eq!(
            keys,
            [AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM, AT_NULL]
        );
    }

    #[test]
    fn many_arguments() {
        let owned: Vec<Vec<u8>> = (0..5000).map(|i| format!("arg{i}").into_bytes()).collect();
        let argv: Vec<&[u8]> = owned.iter().map(|s| s.as_slice()).collect();
        let envp: Vec<&[u8]> = argv.iter().rev().copied().collect();
        let stack = create_elf_tables(TOP, 1 << 20, &args(&argv, &envp)).unwrap();
        let seen = read_back(&stack, TOP);
        assert_eq!(seen.argv, argv);
        assert_eq!(seen.envp, envp);
    }

    #[test]
    fn sp_is_16_aligned_whatever_the_sizes() {
        let owned: Vec<Vec<u8>> = (0..40).map(|n| vec![b'x'; n]).collect();
        for top in [TOP, TOP - 1, TOP - 8, TOP - 13] {
            for argc in 0..6 {
                for envc in 0..6 {
                    for len in [0, 1, 7, 8, 15, 39] {
                        let argv: Vec<&[u8]> =
                            (0..argc).map(|i| &owned[(len + i) % 40][..]).collect();
                        let envp: Vec<&[u8]> =
                            (0..envc).map(|i| &owned[(len * i) % 40][..]).collect();
                        let mut a = args(&argv, &envp);
                        a.auxv = &AUXV[..(argc + envc) % AUXV.len()];
                        let stack = create_elf_tables(top, 1 << 20, &a).unwrap();
                        let seen = read_back(&stack, top);
                        assert_eq!(seen.argv.len(), argc.max(1));
                        assert_eq!(seen.envp, envp);
                        // The padding is less than 16 bytes in each of its
                        // two places.
                        let words = 1 + argc.max(1) + 1 + envc + 1 + 2 * (a.auxv.len() + 5);
                        let strings: usize =
                            argv.iter().chain(&envp).map(|s| s.len() + 1).sum::<usize>()
                                + usize::from(argc == 0)
                                + a.execfn.len()
                                + 1
                                + 8;
                        let tight = strings + a.platform.len() + 1 + 16 + words * 8;
                        assert!(stack.bytes.len() >= tight && stack.bytes.len() < tight + 32);
                    }
                }
            }
        }
    }

    #[test]
    fn longest_string_is_max_arg_strlen_with_its_nul() {
        let longest = vec![b'a'; MAX_ARG_STRLEN - 1];
        let too_long = vec![b'a'; MAX_ARG_STRLEN];
        let limit = 1 << 22;
        assert!(create_elf_tables(TOP, limit, &args(&[&longest], &[])).is_ok());
        for (argv, envp, execfn) in [
            (&[&too_long[..]][..], &[][..], &b"/bin/prog"[..]),
            (&[&b"prog"[..]][..], &[&too_long[..]][..], &b"/bin/prog"[..]),
            (&[&b"prog"[..]][..], &[][..], &too_long[..]),
        ] {
            let mut a = args(argv, envp);
            a.execfn = execfn;
            assert_eq!(
                create_elf_tables(TOP, limit, &a),
                Err(StackError::ArgTooLong)
            );
        }
    }

    #[test]
    fn limit_counts_every_byte() {
        let argv: &[&[u8]] = &[b"prog", b"arg"];
        let envp: &[&[u8]] = &[b"A=B"];
        let size = create_elf_tables(TOP, usize::MAX, &args(argv, envp))
            .unwrap()
            .bytes
            .len();
        assert!(create_elf_tables(TOP, size, &args(argv, envp)).is_ok());
        assert_eq!(
            create_elf_tables(TOP, size - 1, &args(argv, envp)),
            Err(StackError::TooBig)
        );
        assert_eq!(
            create_elf_tables(TOP, 0, &args(&[], &[])),
            Err(StackError::TooBig)
        );
    }

    #[test]
    fn too_close_to_address_zero() {
        for top in [0, 1, 8, 64, 200] {
            assert_eq!(
                create_elf_tables(top, usize::MAX, &args(&[b"prog"], &[])),
                Err(StackError::TooBig),
                "stack_top {top}"
            );
        }
        // Just enough room below the top, all the way down to address 0.
        let size = create_elf_tables(TOP, usize::MAX, &args(&[b"prog"], &[]))
            .unwrap()
            .bytes
            .len();
        let stack = create_elf_tables(size as u64, usize::MAX, &args(&[b"prog"], &[])).unwrap();
        assert_eq!(stack.sp, 0);
    }

    #[test]
    fn random_inputs_read_back_intact() {
        let mut state: u64 = 0x5eed_1234_abcd_0001;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..500 {
            let strings: Vec<Vec<u8>> = (0..next() % 20)
                .map(|_| (0..next() % 50).map(|_| 1 + (next() % 255) as u8).collect())
                .collect();
            let split = (next() as usize) % (strings.len() + 1);
            let argv: Vec<&[u8]> = strings[..split].iter().map(|s| &s[..]).collect();
            let envp: Vec<&[u8]> = strings[split..].iter().map(|s| &s[..]).collect();
            let top = TOP - next() % 4096;
            let mut a = args(&argv, &envp);
            a.random = next().to_le_bytes().repeat(2).try_into().unwrap();
            let stack = create_elf_tables(top, 1 << 20, &a).unwrap();
            let seen = read_back(&stack, top);
            if argv.is_empty() {
                assert_eq!(seen.argv, [b""]);
            } else {
                assert_eq!(seen.argv, argv);
            }
            assert_eq!(seen.envp, envp);
            assert_eq!(bytes_at(&stack, aux_value(&seen, AT_RANDOM), 16), a.random);
        }
    }
}
