//! The kernel's and ulib's Linux ABI values against linux-raw-sys (the
//! bindgen output of Linux's uapi headers that rustix builds on): every
//! system-call number, errno and flag they define under a Linux name must
//! have that name's value on aarch64.
//!
//! Three choices, and why:
//!
//! - **The uapi crate's values are compiled in**: errno, system-call
//!   numbers and signal codes, through each module's `ALL` table (the
//!   kernel's `Errno` and ulib's take their values from it); the dispatch table
//!   is read as text for the names its arms use.
//! - **The rest of faultline's side is read as source text.** The kernel
//!   still keeps many values as private constants in files that need the
//!   whole kernel around them (`mm/mmap.rs`, `syscall/fs/`), so no host
//!   build can name them; ulib is a `no_std` runtime with its own
//!   `_start`. The test reads every `const NAME: T = EXPR;` of
//!   `kernel/src/` and `user/ulib/src/`, so new values
//!   are checked as they come, until they move to uapi.
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
    let is_suffix = suffix.is_empty() || INT_TYPES.iter().any(|(t, _)| *t == suffix);
    if end == 0 || !is_suffix {
        return None;
    }
    i128::from_str_radix(&body[..end], radix).ok()
}

/// Rust's integer types and their widths (64-bit targets).
const INT_TYPES: &[(&str, u32)] = &[
    ("u8", 8),
    ("i8", 8),
    ("u16", 16),
    ("i16", 16),
    ("u32", 32),
    ("i32", 32),
    ("u64", 64),
    ("i64", 64),
    ("usize", 64),
    ("isize", 64),
    ("u128", 128),
    ("i128", 128),
];

/// The width of integer type `ty`; None for any other type.
fn int_width(ty: &str) -> Option<u32> {
    INT_TYPES.iter().find(|(t, _)| *t == ty).map(|&(_, w)| w)
}

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

/// One `const` of faultline's source: where, its type and its expression.
struct Const {
    /// `path:line`, for the failure message.
    at: String,
    /// Its type as written: only integer types are compared.
    ty: String,
    /// Its value as written, for `Eval`.
    expr: String,
}

/// The `const NAME: T = EXPR;` items of a Rust file, by name, an item
/// running over several lines included.
fn rust_consts(path: &Path) -> BTreeMap<String, Const> {
    let text = fs::read_to_string(path).expect("readable");
    let mut consts = BTreeMap::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let mut item = line.trim_start();
        if let Some(rest) = item.strip_prefix("pub") {
            item = match rest.strip_prefix('(') {
                Some(scoped) => scoped.split_once(')').map_or("", |(_, r)| r),
                None => rest,
            }
            .trim_start();
        }
        let Some(item) = item.strip_prefix("const ") else {
            continue;
        };
        if item.starts_with("fn ") || item.starts_with("unsafe fn ") {
            continue;
        }
        let mut item = item.to_string();
        while !item.trim_end().ends_with(';') {
            let Some((_, more)) = lines.next() else {
                break;
            };
            item.push(' ');
            item.push_str(more.trim());
        }
        let Some((name, rest)) = item.split_once(':') else {
            continue;
        };
        let Some((ty, expr)) = rest.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let expr = expr.trim().trim_end_matches(';').trim().to_string();
        let shown = path.strip_prefix(ROOT).unwrap_or(path);
        let at = format!("{}:{}", shown.display(), n + 1);
        let ty = ty.trim().to_string();
        consts.insert(name.to_string(), Const { at, ty, expr });
    }
    consts
}

/// A constant expression of the forms faultline's constants take:
/// literals, other constants of the same file, `T::MAX`, parentheses,
/// unary `-` and `!`, `as` casts (the declared type decides the width in
/// the end), and `* + - << >> & ^ |` with Rust's precedence.
struct Eval<'a> {
    /// Words (literals, names, paths) and operators.
    tokens: Vec<String>,
    /// The next token to read.
    pos: usize,
    /// The constants of the expression's file, for the names it uses.
    file: &'a BTreeMap<String, Const>,
    /// How many names deep this expression is, to stop a cycle.
    depth: u32,
}

impl Eval<'_> {
    /// The value of `expr`, a constant of `file`; None if it is not of
    /// the forms above.
    fn value(expr: &str, file: &BTreeMap<String, Const>, depth: u32) -> Option<i128> {
        if depth > 8 {
            return None;
        }
        let mut tokens = Vec::new();
        let mut chars = expr.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
            } else if c.is_alphanumeric() || c == '_' || c == ':' {
                let mut word = String::new();
                while let Some(&c) = chars
                    .peek()
                    .filter(|c| c.is_alphanumeric() || **c == '_' || **c == ':')
                {
                    word.push(c);
                    chars.next();
                }
                tokens.push(word);
            } else if c == '<' || c == '>' {
                chars.next();
                if chars.next() != Some(c) {
                    return None;
                }
                tokens.push(format!("{c}{c}"));
            } else {
                chars.next();
                tokens.push(c.to_string());
            }
        }
        let mut eval = Eval {
            tokens,
            pos: 0,
            file,
            depth,
        };
        let v = eval.binary(0)?;
        (eval.pos == eval.tokens.len()).then_some(v)
    }

    /// The next token, left in place.
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    /// The next token, taken.
    fn advance(&mut self) -> Option<String> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// Binary operators from loosest (level 0, `|`) to tightest (`*`).
    fn binary(&mut self, level: usize) -> Option<i128> {
        const LEVELS: [&[&str]; 6] = [&["|"], &["^"], &["&"], &["<<", ">>"], &["+", "-"], &["*"]];
        if level == LEVELS.len() {
            return self.cast();
        }
        let mut v = self.binary(level + 1)?;
        while let Some(op) = self.peek().filter(|t| LEVELS[level].contains(t)) {
            let op = op.to_string();
            self.advance();
            let r = self.binary(level + 1)?;
            v = match op.as_str() {
                "|" => v | r,
                "^" => v ^ r,
                "&" => v & r,
                "<<" => v.checked_shl(u32::try_from(r).ok()?)?,
                ">>" => v.checked_shr(u32::try_from(r).ok()?)?,
                "+" => v.checked_add(r)?,
                "-" => v.checked_sub(r)?,
                _ => v.checked_mul(r)?,
            };
        }
        Some(v)
    }

    /// A unary expression and the casts after it.
    fn cast(&mut self) -> Option<i128> {
        let v = self.unary()?;
        while self.peek() == Some("as") {
            self.advance();
            int_width(&self.advance()?)?;
        }
        Some(v)
    }

    /// `-x`, `!x`, `(x)`, a literal, `T::MAX` or a constant's name.
    fn unary(&mut self) -> Option<i128> {
        match self.peek()? {
            "-" => {
                self.advance();
                Some(-self.unary()?)
            }
            "!" => {
                self.advance();
                Some(!self.unary()?)
            }
            "(" => {
                self.advance();
                let v = self.binary(0)?;
                (self.advance()? == ")").then_some(v)
            }
            _ => {
                let word = self.advance()?;
                if let Some(v) = int_literal(&word) {
                    return Some(v);
                }
                if let Some(ty) = word.strip_suffix("::MAX") {
                    let width = int_width(ty)?;
                    let signed = ty.starts_with('i');
                    return Some((1i128 << (width - u32::from(signed))) - 1);
                }
                let c = self.file.get(&word)?;
                Eval::value(&c.expr, self.file, self.depth + 1)
            }
        }
    }
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
fn constants_have_linux_aarch64_values() {
    let linux = linux_values("aarch64");
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("kernel/src"), &mut files);
    rust_files(&Path::new(ROOT).join("user/ulib/src"), &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    let mut own_meaning_seen = Vec::new();
    for path in &files {
        let consts = rust_consts(path);
        for (name, c) in &consts {
            let Some(&theirs) = linux.get(name) else {
                continue;
            };
            let Some(width) = int_width(&c.ty) else {
                continue;
            };
            let ours = Eval::value(&c.expr, &consts, 0);
            if let Some((_, why)) = OWN_MEANING.iter().find(|(n, _)| n == name) {
                assert_ne!(
                    ours,
                    Some(theirs),
                    "{}: {name} now has Linux's value; drop it from OWN_MEANING ({why})",
                    c.at
                );
                own_meaning_seen.push(name.clone());
                continue;
            }
            match ours {
                Some(v) if same_bits(v, theirs, width) => checked += 1,
                Some(v) => wrong.push(format!("{}: {name} = {v}, Linux has {theirs}", c.at)),
                None => wrong.push(format!("{}: {name} = {}: cannot evaluate it", c.at, c.expr)),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} values differ from Linux's:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    for (name, _) in OWN_MEANING {
        assert!(
            own_meaning_seen.iter().any(|seen| seen == name),
            "OWN_MEANING's {name} is defined nowhere now"
        );
    }
    // Far fewer means the reader lost its way, not that all is well.
    assert!(checked > 500, "only {checked} constants checked");
}

#[test]
fn the_dispatch_table_calls_each_handler_by_its_linux_name() {
    let table =
        fs::read_to_string(Path::new(ROOT).join("kernel/src/syscall/mod.rs")).expect("readable");
    let known: Vec<&str> = uapi::unistd::ALL.iter().map(|(name, _)| *name).collect();
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
    let modules: [(&str, &[(&str, i128)]); 2] =
        [("signal", uapi::signal::ALL), ("unistd", uapi::unistd::ALL)];
    let mut checked = 0;
    for (module, values) in modules {
        for &(name, ours) in values {
            assert_eq!(
                linux.get(name),
                Some(&ours),
                "uapi::{module}::{name} = {ours}"
            );
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} uapi values checked");
}
