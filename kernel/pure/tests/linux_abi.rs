//! The Linux ABI values faultline speaks, against linux-raw-sys (the
//! bindgen output of Linux's uapi headers that rustix builds on): every
//! system-call number, errno, flag and limit must have its Linux name's
//! value on aarch64.
//!
//! Three choices, and why:
//!
//! - **One source, compiled in.** Every such value lives in the uapi
//!   crate, which the kernel, ulib and this test build alike; the test
//!   walks `uapi::MODULES`. So that no value escapes the check, the test
//!   also reads the kernel's and ulib's sources and fails on any `const`
//!   with a Linux name that is not uapi's (a typed copy, `= uapi::...`, is
//!   allowed: ulib passes signals as C's `int`). The dispatch table is
//!   read as text for the `__NR_` names its arms use.
//! - **linux-raw-sys's side is its aarch64 source.** The crate picks its
//!   architecture with `cfg(target_arch)`: on an x86_64 host,
//!   `linux_raw_sys::general::__NR_mmap` is x86_64's 9, not aarch64's 222,
//!   and `O_DIRECTORY` and `SIGSTKSZ` differ too. Compiling the test for
//!   aarch64 Linux would need that target's std and an emulator to run it.
//!   Instead the test asks cargo where the crate's source is and reads
//!   `src/aarch64/*.rs`, whose constants bindgen writes one per line, as
//!   `pub const NAME: T = N;`.
//! - **That reading is checked against the compiler.** The same reader
//!   run over the host's own directory must give what the compiled crate
//!   (a dev-dependency, built for the host) says, so the values compared
//!   are the crate's and not a misreading of it.
//!
//! Errno values agree between x86_64 and aarch64; system-call numbers and
//! a few flags do not, so every value is taken from the aarch64 files.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Constants faultline names as Linux does but means differently: what
/// Linux calls them in uapi is a historical limit its own code no longer
/// applies, and faultline keeps the limit Linux applies.
const OWN_MEANING: &[(&str, &str)] = &[
    (
        "ARG_MAX",
        "syscall/proc.rs: execve's room for argv and envp, a quarter of \
         the 8M stack (Linux: bprm_stack_limits), not uapi's 128K",
    ),
    (
        "MAX_CANON",
        "fs/tty/n_tty.rs: a canonical line's length (Linux: \
         N_TTY_BUF_SIZE less one), not POSIX's minimum of 255",
    ),
];

/// Dispatch-table arms whose handler is named after another call it also
/// serves: (Linux's name for the arm's number, faultline's handler).
const SERVED_BY: &[(&str, &str)] = &[
    ("renameat", "renameat2"),
    ("faccessat", "faccessat2"),
    ("fchmodat", "fchmodat2"),
    ("fdatasync", "fsync"),
    ("accept", "accept4"),
    ("getrlimit", "prlimit64"),
    ("getresuid", "getresid"),
    ("getresgid", "getresid"),
    ("getuid", "getid"),
    ("geteuid", "getid"),
    ("getgid", "getid"),
    ("getegid", "getid"),
    ("setuid", "setid"),
    ("setgid", "setid"),
    ("setreuid", "setreid"),
    ("setregid", "setreid"),
    ("setresuid", "setresid"),
    ("setresgid", "setresid"),
    ("setfsuid", "setfsid"),
    ("setfsgid", "setfsid"),
    ("rt_sigreturn", "sigreturn"),
    ("lsetxattr", "setxattr"),
    ("fsetxattr", "setxattr"),
    ("lgetxattr", "getxattr"),
    ("fgetxattr", "getxattr"),
    ("llistxattr", "listxattr"),
    ("flistxattr", "listxattr"),
    ("lremovexattr", "removexattr"),
    ("fremovexattr", "removexattr"),
];

/// The directory of the linux-raw-sys this package was built with, as
/// `cargo metadata` reports it (a registry, a vendor directory or a git
/// checkout: wherever cargo took it from). Not `--offline`: metadata
/// reads every workspace member's dependencies, and a plain `cargo test`
/// has fetched only the host's; `--locked` keeps Cargo.lock as it is.
fn linux_raw_sys_dir() -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = String::from_utf8(out.stdout).expect("cargo metadata prints UTF-8");
    json.split("\"manifest_path\":\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(path, _)| PathBuf::from(path)))
        .filter(|manifest| {
            fs::read_to_string(manifest)
                .is_ok_and(|text| text.lines().any(|l| l.trim() == "name = \"linux-raw-sys\""))
        })
        .map(|manifest| {
            manifest
                .parent()
                .expect("a manifest's directory")
                .to_path_buf()
        })
        .next()
        .expect("linux-raw-sys among the dependencies cargo metadata lists")
}

/// An integer literal as Rust writes it: decimal, `0x`, `0o` or `0b`,
/// with `_` separators and an optional type suffix.
fn int_literal(text: &str) -> Option<i128> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let (radix, body) = match digits.get(..2) {
        Some("0x") => (16, &digits[2..]),
        Some("0o") => (8, &digits[2..]),
        Some("0b") => (2, &digits[2..]),
        _ => (10, &digits[..]),
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    let suffix = &body[end..];
    let is_suffix = suffix.is_empty() || INT_TYPES.contains(&suffix);
    if end == 0 || !is_suffix {
        return None;
    }
    i128::from_str_radix(&body[..end], radix).ok()
}

/// Rust's integer types, the suffixes a literal may carry.
const INT_TYPES: &[&str] = &[
    "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "usize", "isize", "u128", "i128",
];

/// The integer constants of one linux-raw-sys file: bindgen's
/// `pub const NAME: T = N;` lines (the byte-string ones are skipped).
fn bindgen_consts(text: &str, into: &mut BTreeMap<String, i128>) {
    for line in text.lines() {
        let Some(item) = line.strip_prefix("pub const ") else {
            continue;
        };
        let Some((name, rest)) = item.split_once(": ") else {
            continue;
        };
        let Some((_, value)) = rest.split_once(" = ") else {
            continue;
        };
        let value = value.strip_suffix(';').unwrap_or(value);
        let parsed = match value.strip_prefix('-') {
            Some(v) => int_literal(v).map(|v| -v),
            None => int_literal(value),
        };
        if let Some(v) = parsed {
            // One name, one value across the crate's modules, or the
            // lookup by name below would be a guess.
            if let Some(old) = into.insert(name.to_string(), v) {
                assert_eq!(old, v, "linux-raw-sys has two values for {name}");
            }
        }
    }
}

/// Every integer constant linux-raw-sys has for `arch`, across its modules.
fn linux_values(arch: &str) -> BTreeMap<String, i128> {
    let dir = linux_raw_sys_dir().join("src").join(arch);
    let mut values = BTreeMap::new();
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        bindgen_consts(&fs::read_to_string(&path).expect("readable"), &mut values);
    }
    values
}

/// Do `ours`, a constant of `width` bits, and Linux's `theirs` hold the
/// same bits? Linux's value must fit the width (as a signed or unsigned
/// number): a `u32` of ours equal in its low bits to a 64-bit Linux value
/// is a mismatch, not a match.
fn same_bits(ours: i128, theirs: i128, width: u32) -> bool {
    if width >= 128 {
        return ours == theirs;
    }
    let fits = (theirs >> width) == 0 || (theirs >> (width - 1)) == -1;
    let mask = (1i128 << width) - 1;
    fits && ours & mask == theirs & mask
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[test]
fn the_aarch64_reader_reads_what_the_compiler_compiles() {
    let host = linux_values(std::env::consts::ARCH);
    let compiled: [(&str, i128); 8] = [
        ("__NR_mmap", linux_raw_sys::general::__NR_mmap.into()),
        ("__NR_openat", linux_raw_sys::general::__NR_openat.into()),
        ("O_DIRECTORY", linux_raw_sys::general::O_DIRECTORY.into()),
        ("MAP_SHARED", linux_raw_sys::general::MAP_SHARED.into()),
        ("SIGSTKSZ", linux_raw_sys::general::SIGSTKSZ.into()),
        ("AT_FDCWD", linux_raw_sys::general::AT_FDCWD.into()),
        (
            "RLIM_INFINITY",
            linux_raw_sys::general::RLIM_INFINITY.into(),
        ),
        ("EOWNERDEAD", linux_raw_sys::errno::EOWNERDEAD.into()),
    ];
    for (name, value) in compiled {
        assert_eq!(
            host.get(name),
            Some(&value),
            "{name} as read from the source"
        );
    }
    let aarch64 = linux_values("aarch64");
    assert_eq!(
        aarch64.get("__NR_mmap"),
        Some(&222),
        "aarch64's own numbers"
    );
    assert!(aarch64.len() > 5000, "{} constants read", aarch64.len());
}

#[test]
fn linux_named_constants_live_in_uapi() {
    let linux = linux_values("aarch64");
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("kernel/src"), &mut files);
    rust_files(&Path::new(ROOT).join("user/ulib/src"), &mut files);
    let mut own_meaning_seen = Vec::new();
    let mut derived = 0;
    let mut outside = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path).expect("readable");
        let shown = path
            .strip_prefix(ROOT)
            .unwrap_or(path)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            let item = line.trim_start();
            let item = item.strip_prefix("pub ").or_else(|| {
                item.strip_prefix("pub(")
                    .and_then(|r| r.split_once(") ").map(|(_, r)| r))
            });
            let item = item.unwrap_or(line.trim_start());
            let Some(rest) = item.strip_prefix("const ") else {
                continue;
            };
            let Some((name, value)) = rest
                .split_once(':')
                .zip(rest.split_once('='))
                .map(|((n, _), (_, v))| (n.trim(), v.trim()))
            else {
                continue;
            };
            if !linux.contains_key(name) {
                continue;
            }
            if OWN_MEANING.iter().any(|(own, _)| *own == name) {
                own_meaning_seen.push(name.to_string());
            } else if value.starts_with("uapi::") {
                derived += 1; // uapi's value, in the type this API takes
            } else {
                outside.push(format!("{shown}:{}: {name}", n + 1));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "Linux's names defined outside uapi (move them there):\n{}",
        outside.join("\n")
    );
    for (name, why) in OWN_MEANING {
        assert!(
            own_meaning_seen.iter().any(|seen| seen == name),
            "OWN_MEANING's {name} is defined nowhere now ({why})"
        );
    }
    assert!(
        derived > 20,
        "only {derived} typed copies of uapi values found"
    );
}

#[test]
fn the_dispatch_table_calls_each_handler_by_its_linux_name() {
    let table =
        fs::read_to_string(Path::new(ROOT).join("kernel/src/syscall/mod.rs")).expect("readable");
    let known: Vec<&str> = uapi::unistd::ALL.iter().map(|(name, _, _)| *name).collect();
    // Each arm: its `__NR_` names, then its text up to the next arm, whose
    // first call is the handler.
    let mut arms: Vec<(Vec<String>, String)> = Vec::new();
    for line in table.lines() {
        let names = line.trim().split_once("=>").and_then(|(pattern, _)| {
            let names: Vec<String> = pattern.split('|').map(|p| p.trim().to_string()).collect();
            names
                .iter()
                .all(|n| n.starts_with("__NR_"))
                .then_some(names)
        });
        if let Some(names) = names {
            arms.push((names, line.split_once("=>").unwrap().1.to_string()));
        } else if let Some((_, text)) = arms.last_mut() {
            text.push_str(line);
        }
    }
    assert!(arms.len() > 150, "only {} arms found", arms.len());
    let mut served = Vec::new();
    for (names, text) in &arms {
        let call = text.split_once('(').map_or("", |(path, _)| path);
        let handler = call.rsplit("::").next().unwrap_or("").trim();
        for name in names {
            assert!(
                known.contains(&name.as_str()),
                "{name} is not in uapi::unistd"
            );
            let linux = &name["__NR_".len()..];
            if linux == handler {
                continue;
            }
            // An arm that answers without a handler names its calls in
            // its comment instead.
            if ["Ok", "Err"].contains(&handler) && text.contains(linux) {
                continue;
            }
            let alias = SERVED_BY.iter().find(|(l, h)| *l == linux && *h == handler);
            let alias = alias.unwrap_or_else(|| panic!("the arm for {name} calls {handler}"));
            served.push(*alias);
        }
    }
    for alias in SERVED_BY {
        assert!(
            served.contains(alias),
            "SERVED_BY's {alias:?} is in the table no more"
        );
    }
}

#[test]
fn uapi_values_are_linux_aarch64_values() {
    let linux = linux_values("aarch64");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (module, values) in uapi::MODULES {
        for &(name, ours, width) in *values {
            match linux.get(name) {
                Some(&theirs) if same_bits(ours, theirs, width) => checked += 1,
                theirs => wrong.push(format!(
                    "uapi::{module}::{name} = {ours}, Linux: {theirs:?}"
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Far fewer means a module went missing from MODULES.
    assert!(checked > 800, "only {checked} uapi values checked");
}
