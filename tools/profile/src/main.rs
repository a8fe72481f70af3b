//! `profile`: an instruction-level profile of faultline under QEMU. Where
//! do the guest instructions go between two occurrences of a system call?
//!
//! It boots through qemu-run.sh with QEMU logging every instruction it
//! executes into a FIFO (never to disk), and counts them as they come
//! (trace.rs); then names them with the kernel's DWARF (symbols.rs, through
//! tools/symbolize) and prints the report (report.rs). USAGE says what it
//! measures. This file owns the command's flow: the images, the FIFO, the
//! QEMU run and the output files.

mod code;
mod options;
mod report;
mod symbols;
mod trace;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};
use std::{env, thread};

use options::Options;
use report::{Report, Settings};
use symbols::{ElfSymbols, Symbols};
use trace::{Code, Tracer, Window};

/// The command's help, as `--help` prints it.
const USAGE: &str = "\
Instruction-level profile of faultline under QEMU: where do the guest
instructions go between two occurrences of a syscall?

  scripts/profile.sh [--iter-syscall NR] [--every K] [--span NR] [--user BIN] [--top N] [--out DIR]
                     [qemu-run.sh options ...]

Boots through ./qemu-run.sh (all its options pass through: --smp, --mem,
--append, --run, ...) with QEMU logging every executed instruction
(`-singlestep -d exec,nochain`, one instruction per TB, into a FIFO, never
to disk) and analyses the stream on the fly:
  * the measured window runs from the first user `svc` of syscall NR
    (--iter-syscall, default 233 = madvise) to the last one; each stretch
    between two of them is one \"iteration\" (with --every K, only every
    K-th occurrence, from the first, is a boundary), and every count is printed
    per iteration (what precedes the first and follows the last is boot
    and setup, and is dropped);
  * --span NR (default 113 = clock_gettime): instructions from one entry
    of syscall NR to the next, pairwise (1st-2nd, 3rd-4th, ...): a window
    timed by two clock_gettime system calls (the benchmarks themselves
    read the counter, without one);
  * every kernel entry from EL0 is classed: `sys NAME` (the syscall number
    is read from the `mov x8, #N` before the `svc` in --user BIN, default
    the program named by `-- run PROG` in --append/--run), `fault` (any
    other EL0 sync exception: the page faults) or `irq`; user instructions
    are class `user`;
  * a shadow call stack (bl/blr push, ret pops, vector entry/eret for
    nested exceptions) plus DWARF's inline frames gives each kernel
    instruction a full stack, so functions get exclusive (self) and
    inclusive counts, per class and overall, and each instruction also
    lands in one \"bucket\" (the innermost frame matching a bucket's
    patterns: locks, TLB, heap, folio refcounts, contpte, ...).
One instruction is one virtual ns under --icount, so the per-iteration
totals are comparable with the benchmarks' ns figures.

Examples (smp 1 keeps the stream to one CPU; use few iterations: QEMU
logs ~600K instructions/s this way, boot is ~15M):
  scripts/profile.sh --smp 1 --mem 1G --icount \\
      --append \"thp_shmem=2M:always -- run /bin/bench/finish_fault size=65536 iters=20 align=0x1\"
  scripts/profile.sh --iter-syscall 222 --smp 1 --mem 1G --icount \\
      --append \"-- run /bin/bench/lat_pagefault pages=512 iters=3 samples=3\"
(finish_fault: the bench driver sets hugepages-2048kB/shmem_enabled to
`always`, which `thp_shmem=2M:always` does at boot; fault-around is
`fault_around_bytes=65536` by default, 4096 turns it off via /sys.)
Output: a report on stdout, and with --out DIR also DIR/report.txt and
DIR/stacks.txt (folded stacks \"class;f1;f2;... count\", summed over all
the iterations, flamegraph.pl-compatible) and DIR/pcs.txt (kernel
instructions by address, \"class;pc count\", to read beside objdump -d;
spaces in class names become _). Run with --smp 1: the stack
tracking follows one CPU.";

/// How many lines of the console to show when qemu-run.sh fails.
const CONSOLE_TAIL: usize = 20;

/// The kernel `make build` makes, relative to the workspace root.
const KERNEL: &str = "target/aarch64-unknown-none-softfloat/release/faultline";

/// Parses the command line and runs the profile; exits with qemu-run.sh's
/// status, or 2 when it cannot start.
fn main() -> ExitCode {
    match options::parse(env::args().skip(1)) {
        Ok(options::Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(options::Command::Profile(options)) => match profile(&options) {
            Ok(code) => code,
            Err(err) => {
                eprintln!("profile: {err}");
                ExitCode::from(2)
            }
        },
        Err(err) => {
            eprintln!("profile: {err} (--help for usage)");
            ExitCode::from(2)
        }
    }
}

/// A directory of this run's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    /// Creates it under the system's temporary directory.
    fn new() -> io::Result<Self> {
        let path = env::temp_dir().join(format!("faultline-profile-{}", std::process::id()));
        fs::create_dir(&path)?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Nothing to do about a temporary directory that will not go.
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Boots, traces and reports; the exit code is qemu-run.sh's.
fn profile(options: &Options) -> Result<ExitCode, String> {
    // Paths (the kernel, qemu-run.sh, the default --user) are the
    // workspace's, wherever the command starts.
    if let Some(root) = symbolize::workspace_root() {
        env::set_current_dir(&root).map_err(|err| format!("{}: {err}", root.display()))?;
    }
    let kernel = Path::new(KERNEL);
    if !kernel.is_file() {
        return Err("no kernel, run 'make build'".into());
    }
    let kernel_data = fs::read(kernel).map_err(|err| format!("{KERNEL}: {err}"))?;
    let kernel_insns =
        code::instructions(&kernel_data).map_err(|err| format!("{KERNEL}: {err}"))?;
    let branches = code::branches(&kernel_insns);
    let user_data = options.user.as_deref().and_then(|path| {
        fs::read(path)
            .inspect_err(|err| eprintln!("profile: cannot read {}: {err}", path.display()))
            .ok()
    });
    let syscalls = match &user_data {
        Some(data) => code::syscall_sites(
            &code::instructions(data).map_err(|err| format!("user program: {err}"))?,
        ),
        None => Default::default(),
    };
    let symbols = ElfSymbols::open(kernel, user_data.as_deref())?;
    let vectors = symbols
        .kernel_address("exception_vectors")
        .ok_or("the kernel has no exception_vectors symbol")?;
    let window = Window {
        iter_syscall: options.iter_syscall,
        every: options.every,
        span_syscall: options.span_syscall,
    };
    let user_symbol = |pc| symbols.user_symbol(pc);
    let tracer = Tracer::new(
        Code {
            branches: &branches,
            vectors,
            syscalls: &syscalls,
            has_user: user_data.is_some(),
            user_symbol: &user_symbol,
        },
        window,
    );

    let tmp = TempDir::new().map_err(|err| format!("temporary directory: {err}"))?;
    let (profile, status, console) = trace_boot(&tmp.0, &options.qemu_run, tracer)?;
    for line in console.lines() {
        if line.starts_with("result ") || line.contains("panic") || line.contains("error") {
            println!("{line}");
        }
    }
    if !status.success() {
        // The console went to a file: show why the boot failed.
        let lines: Vec<&str> = console.lines().collect();
        eprintln!("profile: ./qemu-run.sh: {status}; the console's last lines:");
        for line in &lines[lines.len().saturating_sub(CONSOLE_TAIL)..] {
            eprintln!("  {line}");
        }
    }
    let settings = Settings {
        window,
        top: options.top,
    };
    match report::report(&profile, &symbols, settings) {
        Report::NoIteration(line) => println!("{line}"),
        Report::Done { text, folded, pcs } => {
            println!("{text}");
            if let Some(dir) = &options.out {
                let write = |name: &str, contents: &str| {
                    fs::write(dir.join(name), contents)
                        .map_err(|err| format!("{}: {err}", dir.join(name).display()))
                };
                fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
                write("report.txt", &format!("{text}\n"))?;
                write("stacks.txt", &folded)?;
                write("pcs.txt", &pcs)?;
            }
        }
    }
    let code = status.code().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Runs qemu-run.sh with `args` and QEMU's exec log going into a FIFO in
/// `tmp`, and feeds the log to `tracer` as it comes. Returns the counts,
/// qemu-run.sh's status and its console output.
fn trace_boot(
    tmp: &Path,
    args: &[String],
    mut tracer: Tracer<'_>,
) -> Result<(trace::Profile, ExitStatus, String), String> {
    let fifo = tmp.join("trace");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .map_err(|err| format!("mkfifo: {err}"))?;
    if !made.success() {
        return Err(format!("mkfifo {} failed", fifo.display()));
    }
    // A writer of our own from the start, so that opening the FIFO to read
    // does not wait for QEMU (which might never come, if qemu-run.sh fails
    // first); it goes when qemu-run.sh has exited, and then the reader
    // sees the end of the log.
    let keepalive = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .map_err(|err| format!("{}: {err}", fifo.display()))?;
    let console_path = tmp.join("console");
    let console = File::create(&console_path).map_err(|err| format!("console log: {err}"))?;
    let console_err = console
        .try_clone()
        .map_err(|err| format!("console log: {err}"))?;
    let fifo_arg = fifo.to_str().ok_or("temporary path is not UTF-8")?;
    let mut child = Command::new("./qemu-run.sh")
        .args(args)
        // One instruction per translation block, each logged as it runs
        // (no chaining, which would skip the log), into the FIFO.
        .args(["--qemu-arg", "-singlestep"])
        .args(["--qemu-arg", "-d", "--qemu-arg", "exec,nochain"])
        .args(["--qemu-arg", "-D", "--qemu-arg", fifo_arg])
        .stdout(console)
        .stderr(console_err)
        .spawn()
        .map_err(|err| format!("./qemu-run.sh: {err}"))?;
    let waiter = thread::spawn(move || {
        let status = child.wait();
        drop(keepalive);
        status
    });

    let reader = File::open(&fifo).map_err(|err| format!("{}: {err}", fifo.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut line = Vec::with_capacity(256);
    let read_result = loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break Ok(()),
            Ok(_) => {
                if let Some((cpu, pc)) = trace::parse_exec_line(&line) {
                    tracer.step(cpu, pc);
                }
            }
            Err(err) => break Err(err),
        }
    };
    // Keep draining on a read error: QEMU would block on a full FIFO.
    if let Err(err) = read_result {
        eprintln!("profile: reading the trace: {err}");
        let _ = io::copy(&mut reader, &mut io::sink());
    }
    let status = waiter
        .join()
        .map_err(|_| "the thread waiting for qemu-run.sh panicked")?
        .map_err(|err| format!("./qemu-run.sh: {err}"))?;
    let console = fs::read(&console_path).map_err(|err| format!("console log: {err}"))?;
    Ok((
        tracer.finish(),
        status,
        String::from_utf8_lossy(&console).into_owned(),
    ))
}
