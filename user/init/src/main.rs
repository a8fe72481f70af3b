//! `/init`, the first user program (PID 1 on faultline). The kernel starts
//! it with the words of its command line after `--` as arguments:
//!
//! - `/init test`: run every program in the tests directory
//!   (`$FAULTLINE_TESTS_DIR`, default `/bin/tests`) in name order, pass their
//!   output through, and end with the one line `N passed, M failed`;
//! - `/init` alone (what `make run` boots): the same, showing only each
//!   program's summary and anything that did not pass;
//! - `/init run PROG ARGS...`: run one program and exit with its status.
//!
//! init exits 0 when everything passed, 1 otherwise; on faultline PID 1's
//! exit powers the machine off and hands that status to the host. On Linux
//! (under qemu-aarch64) init is an ordinary process, and exiting is right
//! there too.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::ffi::CString;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::CStr;
use core::sync::atomic::{AtomicU64, Ordering};
use ulib::fs::*;
use ulib::process::*;
use ulib::signal::signal_name;
use ulib::{eprintln, println, Errno};

ulib::entry!(main);

const DEFAULT_TESTS_DIR: &str = "/bin/tests";

fn main(args: ulib::Args) -> i32 {
    BOOT_NS.store(ulib::time::counter_ns(), Ordering::Relaxed);
    mount_tmpfs();
    let args: Vec<&str> = args.collect();
    match args.get(1..).unwrap_or_default() {
        [] | ["test"] => {
            let dir = ulib::env("FAULTLINE_TESTS_DIR").unwrap_or(DEFAULT_TESTS_DIR);
            let verbose = !args[1..].is_empty();
            println!("init: running the tests in {dir}");
            run_tests(dir, verbose)
        }
        ["run", prog, ..] => run(prog, &args[2..]),
        _ => {
            eprintln!("usage: /init [test | run PROG ARGS...]");
            2
        }
    }
}

/// The file systems a Linux program expects to write to, as a Linux
/// init's fstab mounts them: tmpfs on /tmp and /dev/shm (glibc's
/// `shm_open` lives there). Not under qemu-user (`make test-linux`),
/// where the mounts would land on the host.
fn mount_tmpfs() {
    if ulib::system::running_on_linux() {
        return;
    }
    for dir in [c"/tmp", c"/dev/shm"] {
        let _ = mkdirat(AT_FDCWD, dir, 0o1777);
        if let Err(e) = mount(c"tmpfs", dir, c"tmpfs") {
            eprintln!("init: mounting tmpfs on {dir:?}: {e:?}");
        }
    }
}

/// When init began, in virtual-counter nanoseconds from power-on: how long
/// the machine took to reach user space (`make bench` reports it).
static BOOT_NS: AtomicU64 = AtomicU64::new(0);

/// Where programs are looked for, as a Linux init sets it (the kernel
/// gives init only HOME and TERM).
const PATH: &str = "PATH=/sbin:/usr/sbin:/bin:/usr/bin";

/// The environment init was given, passed on to every program it starts,
/// with `PATH` if it had none and `FAULTLINE_BOOT_NS` (see `BOOT_NS`).
fn environment() -> Vec<CString> {
    let boot = format!("FAULTLINE_BOOT_NS={}", BOOT_NS.load(Ordering::Relaxed));
    let given: Vec<&CStr> = ulib::start::environ().collect();
    let has_path = given.iter().any(|e| e.to_bytes().starts_with(b"PATH="));
    let path = (!has_path).then(|| CString::new(PATH).unwrap());
    given
        .into_iter()
        .map(CString::from)
        .chain(path)
        .chain(CString::new(boot))
        .collect()
}

/// `run PROG ARGS...`: the program's exit status, or 128 + the signal that
/// killed it (the shell's convention), or 127 if it could not be started.
fn run(prog: &str, argv: &[&str]) -> i32 {
    let path = CString::new(prog).unwrap();
    let argv: Vec<CString> = argv.iter().map(|a| CString::new(*a).unwrap()).collect();
    let argv: Vec<&CStr> = argv.iter().map(|a| a.as_c_str()).collect();
    let pid = match fork() {
        Ok(0) => {
            let env = environment();
            let env: Vec<&CStr> = env.iter().map(|e| e.as_c_str()).collect();
            let errno = execve(&path, &argv, &env);
            eprintln!("init: cannot run {prog}: {errno}");
            exit_group(127);
        }
        Ok(pid) => pid,
        Err(errno) => {
            eprintln!("init: fork: {errno}");
            return 127;
        }
    };
    match reap(pid) {
        Ok(status) => match (status.exit_code(), status.term_signal()) {
            (Some(code), _) => code,
            (_, Some(sig)) => {
                eprintln!("init: {prog} killed by signal {sig} ({})", signal_name(sig));
                128 + sig
            }
            _ => 127,
        },
        Err(errno) => {
            eprintln!("init: wait4: {errno}");
            127
        }
    }
}

/// Waits for child `pid`. As PID 1, init inherits every orphan, so it waits
/// for any child and lets the others' exits pass.
fn reap(pid: i32) -> Result<WaitStatus, Errno> {
    loop {
        match wait4(-1, 0) {
            Ok((reaped, status)) if reaped == pid => return Ok(status),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
}

/// `test`: runs every program in `dir` and sums their results; without
/// `verbose`, passing tests' lines are not shown.
fn run_tests(dir: &str, verbose: bool) -> i32 {
    let (mut passed, mut failed) = (0, 0);
    match list_programs(dir) {
        Ok(names) if !names.is_empty() => {
            for name in names {
                let (p, f) = run_test_program(dir, &name, verbose);
                passed += p;
                failed += f;
            }
        }
        Ok(_) => {
            eprintln!("init: no test programs in {dir}");
            failed += 1;
        }
        Err(errno) => {
            eprintln!("init: cannot list {dir}: {errno}");
            failed += 1;
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        0
    } else {
        1
    }
}

/// The names of the executable files in `dir`, sorted.
fn list_programs(dir: &str) -> Result<Vec<String>, Errno> {
    let dir_path = CString::new(dir).unwrap();
    let fd = open(&dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)?;
    let mut names = Vec::new();
    let mut buf = [0u8; 2048];
    loop {
        let n = match getdents64(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(errno) => {
                let _ = close(fd);
                return Err(errno);
            }
        };
        for entry in dirents(&buf[..n]) {
            let executable = newfstatat(fd, entry.name, 0)
                .is_ok_and(|st| st.st_mode & S_IFMT == S_IFREG && st.st_mode & 0o111 != 0);
            if executable {
                names.push(String::from(entry.name.to_str().unwrap_or("?")));
            }
        }
    }
    let _ = close(fd);
    names.sort();
    Ok(names)
}

/// Runs one test program with its stdout on a pipe, copies that to init's
/// stdout, and returns its (passed, failed) counts from its summary line.
/// A program that crashes, exits non-zero without reporting a failure, or
/// prints no summary counts one failure more.
fn run_test_program(dir: &str, name: &str, verbose: bool) -> (u32, u32) {
    let path = format!("{dir}/{name}");
    let c_path = CString::new(path.as_str()).unwrap();
    let [out_rd, out_wr] = match pipe2(O_CLOEXEC) {
        Ok(fds) => fds,
        Err(errno) => {
            eprintln!("init: pipe2: {errno}");
            return (0, 1);
        }
    };
    let pid = match fork() {
        Ok(0) => {
            let _ = dup3(out_wr, 1, 0);
            let env = environment();
            let env: Vec<&CStr> = env.iter().map(|e| e.as_c_str()).collect();
            let errno = execve(&c_path, &[&c_path], &env);
            eprintln!("init: cannot run {path}: {errno}");
            exit_group(127);
        }
        Ok(pid) => pid,
        Err(errno) => {
            eprintln!("init: fork: {errno}");
            return (0, 1);
        }
    };
    let _ = close(out_wr);
    let summary = copy_output(out_rd, verbose);
    let _ = close(out_rd);
    let status = reap(pid);
    let (passed, mut failed) = summary.unwrap_or((0, 0));
    match status {
        Ok(status) if status.exit_code() == Some(0) && summary.is_some() => {}
        Ok(status) if status.exit_code().is_some_and(|c| c != 0) && failed > 0 => {}
        Ok(status) => {
            let why = if summary.is_none() {
                ", no summary line"
            } else {
                ""
            };
            println!("init: {path} {status:?}{why}");
            failed += 1;
        }
        Err(errno) => {
            println!("init: wait4 for {path}: {errno}");
            failed += 1;
        }
    }
    (passed, failed)
}

/// Copies the pipe to stdout until EOF (without `verbose`, only lines that
/// are not a passing test's) and returns the counts from the last line of
/// the form `<bin>: N passed, M failed[, K skipped]`.
fn copy_output(fd: i32, verbose: bool) -> Option<(u32, u32)> {
    let mut summary = None;
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match read(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        };
        if verbose {
            ulib::print::write_all(1, &buf[..n]);
        }
        for &byte in &buf[..n] {
            if byte == b'\n' {
                summary = parse_summary(&line).or(summary);
                if !verbose && !line.ends_with(b" ... ok") {
                    line.push(b'\n');
                    ulib::print::write_all(1, &line);
                }
                line.clear();
            } else {
                line.push(byte);
            }
        }
    }
    summary
}

/// Parses `<bin>: N passed, M failed` (a `, K skipped` may follow).
fn parse_summary(line: &[u8]) -> Option<(u32, u32)> {
    let line = core::str::from_utf8(line).ok()?;
    let (_, counts) = line.split_once(": ")?;
    let mut parts = counts.split(", ");
    let passed = parts.next()?.strip_suffix(" passed")?.parse().ok()?;
    let failed = parts.next()?.strip_suffix(" failed")?.parse().ok()?;
    Some((passed, failed))
}
