//! Host tests of `stack`.

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
                    let argv: Vec<&[u8]> = (0..argc).map(|i| &owned[(len + i) % 40][..]).collect();
                    let envp: Vec<&[u8]> = (0..envc).map(|i| &owned[(len * i) % 40][..]).collect();
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
