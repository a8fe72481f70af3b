//! What the benchmarks share: the clock, the minor-fault count, mapping a
//! fresh memfd, and the one machine-readable line each prints:
//!
//! `result <bench> key=value key=value ...`
//!
//! Times are CLOCK_MONOTONIC nanoseconds; under QEMU's
//! `-icount shift=0,sleep=off` (what `make bench` uses) one nanosecond is
//! one instruction, so the numbers repeat exactly from run to run.
#![no_std]

extern crate alloc;

use alloc::string::String;
use core::fmt::Write;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::{getrusage, RUSAGE_SELF};
use ulib::Errno;

pub mod scale;

pub use ulib::time::counter_ns;

/// Nanoseconds on the monotonic clock, read as glibc's clock_gettime
/// reads it through the vDSO on Linux and on faultline: the virtual
/// counter at EL0, with no system call.
pub fn now_ns() -> u64 {
    counter_ns()
}

/// Counts what `f` does as window `label` of the TLB model
/// (`./qemu-run.sh --tlb`, tools/tlb; user/c/tlb-mark.h for the C
/// programs): between two `hint #114`s, which every Arm CPU runs as NOPs,
/// x0 = 2 starting the count and x0 = 3 reporting it under x1.
pub fn tlb_window<T>(label: u64, f: impl FnOnce() -> T) -> T {
    tlb_mark(2, 0);
    let r = f();
    tlb_mark(3, label);
    r
}

/// One TLB-model mark; see `tlb_window`.
fn tlb_mark(op: u64, label: u64) {
    // SAFETY: a hint, which the architecture runs as a NOP; not `nomem`, so
    // the window's accesses stay on their side of it.
    unsafe { core::arch::asm!("hint #114", in("x0") op, in("x1") label, options(nostack)) };
}

/// The cost of one faulting access, `fault`, less that of the same access
/// once mapped, timed with `counter_ns`: under `-icount shift=0` one
/// nanosecond is one instruction, exception entry to return included.
pub fn time_fault(fault: impl Fn()) -> i64 {
    let t0 = counter_ns();
    fault();
    let t1 = counter_ns();
    fault();
    let t2 = counter_ns();
    (t1 - t0) as i64 - (t2 - t1) as i64
}

/// Minor faults this process has taken so far.
pub fn minflt() -> u64 {
    getrusage(RUSAGE_SELF).map_or(0, |r| r.ru_minflt as u64)
}

/// A memfd of `len` bytes, every page written (so the page cache holds it,
/// in whatever folio sizes the knobs choose).
pub fn filled_memfd(len: usize) -> Result<i32, Errno> {
    let fd = memfd_create(c"bench", MFD_CLOEXEC)?;
    ftruncate(fd, len)?;
    fallocate(fd, 0, 0, len)?;
    let page = [1u8; PAGE_SIZE];
    for off in (0..len).step_by(PAGE_SIZE) {
        pwrite64(fd, &page, off)?;
    }
    Ok(fd)
}

const PMD_SIZE: usize = 2 << 20;

/// The shmem knobs seed 000 sets: the top-level one and the 2M one.
pub const SEED_KNOBS: [&core::ffi::CStr; 2] = [
    c"/sys/kernel/mm/transparent_hugepage/shmem_enabled",
    c"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled",
];

/// Seed 000's set-up: with `set_knobs` (`--set-knobs`), both knobs set to
/// `always` through sysfs, as the seed does (else they stay as they are);
/// a 2M memfd mapped MAP_SHARED, and one store through that mapping, whose
/// fault allocates the folio the knobs allow and maps it. The mapping
/// stays, as in the seed.
pub fn populated_2m_memfd(set_knobs: bool) -> Result<i32, Errno> {
    if set_knobs {
        for knob in SEED_KNOBS {
            let fd = open(knob, O_WRONLY | O_CLOEXEC, 0)?;
            write(fd, b"always")?;
            close(fd)?;
        }
    }
    let fd = memfd_create(c"willitscale-shmem", MFD_CLOEXEC)?;
    ftruncate(fd, PMD_SIZE)?;
    // SAFETY: a new shared mapping the kernel places.
    let c = unsafe { mmap(0, PMD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    // SAFETY: the first byte of the mapping just made.
    unsafe { core::ptr::write_volatile(c as *mut u8, 0) };
    Ok(fd)
}

/// What every benchmark's `--help` ends with: the options they share.
const COMMON_HELP: &str = "\
Options every benchmark takes:
  --help        this text
  --set-knobs   set the knobs the seed sets (seed 000: shmem_enabled and
                hugepages-2048kB/shmem_enabled to always) before measuring;
                without it the system's settings stay as they are
The result line ends with the settings the run had: faultline's switches
(multi_page, contpte, fault_around_bytes, vma_lock, hw_af, hw_dirty,
tlbi_range; absent on Linux) and
the shmem knobs (shmem_enabled, shmem_2m).";

/// `--help` among `args`: prints `usage` (what the benchmark measures and
/// its arguments) and the common options; the caller exits 0.
pub fn help_asked(args: &ulib::Args, usage: &str) -> bool {
    let asked = args.clone().any(|a| a == "--help" || a == "-h");
    if asked {
        ulib::println!("{usage}\n\n{COMMON_HELP}");
    }
    asked
}

/// `--set-knobs` among `args`: the benchmark may set the knobs its seed
/// sets; without it, it measures the system as it finds it.
pub fn set_knobs_asked(args: &ulib::Args) -> bool {
    args.clone().any(|a| a == "--set-knobs")
}

/// faultline's fault-path switches, as `report` names them.
const SWITCHES: [(&str, &core::ffi::CStr); 7] = [
    ("multi_page", c"/sys/kernel/mm/finish_fault/multi_page"),
    ("contpte", c"/sys/kernel/mm/contpte/enabled"),
    (
        "fault_around_bytes",
        c"/sys/kernel/debug/fault_around_bytes",
    ),
    ("vma_lock", c"/sys/kernel/mm/vma_lock/enabled"),
    ("hw_af", c"/sys/kernel/mm/hw_af/enabled"),
    ("hw_dirty", c"/sys/kernel/mm/hw_dirty/enabled"),
    ("tlbi_range", c"/sys/kernel/mm/tlbi_range/enabled"),
];

/// The whole of a /proc file, or None.
fn read_proc(path: &core::ffi::CStr) -> Option<String> {
    let fd = open(path, O_RDONLY | O_CLOEXEC, 0).ok()?;
    let mut text = alloc::vec![0u8; 4096];
    let mut len = 0;
    loop {
        if len == text.len() {
            text.resize(len * 2, 0);
        }
        match read(fd, &mut text[len..]) {
            Ok(n @ 1..) => len += n,
            _ => break,
        }
    }
    let _ = close(fd);
    text.truncate(len);
    String::from_utf8(text).ok()
}

/// The value of counter `key` in /proc/vmstat; None where there is no such
/// line (Linux without CONFIG_PER_VMA_LOCK_STATS, for the vma_lock ones).
pub fn vmstat(key: &str) -> Option<u64> {
    read_proc(c"/proc/vmstat")?
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
}

/// Pages of the mapping starting at `addr` that page tables map now: its
/// `Rss` in /proc/self/smaps (Linux has the same file), in 4K pages.
pub fn mapped_pages(addr: usize) -> Option<u64> {
    let smaps = read_proc(c"/proc/self/smaps")?;
    let head = alloc::format!("{addr:08x}-");
    let rss = smaps
        .lines()
        .skip_while(|l| !l.starts_with(&head))
        .find_map(|l| l.strip_prefix("Rss:"))?;
    let kb: u64 = rss.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb / 4)
}

/// A count in hundredths, printed as the plain number: 100 is `1.00`.
pub struct Hundredths(pub u64);

impl core::fmt::Display for Hundredths {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

/// Prints `result <name> k=v ...`, followed by the value of each switch
/// (absent on Linux) and of the shmem knobs, so every line says what it
/// measured and how the system was set.
pub fn report(name: &str, fields: &[(&str, &dyn core::fmt::Display)]) {
    let mut line = String::from("result ");
    line.push_str(name);
    for (k, v) in fields {
        let _ = write!(line, " {k}={v}");
    }
    for (k, path) in SWITCHES {
        let mut buf = [0u8; 32];
        let Ok(fd) = open(path, O_RDONLY | O_CLOEXEC, 0) else {
            continue;
        };
        let n = read(fd, &mut buf).unwrap_or(0);
        let _ = close(fd);
        let v = core::str::from_utf8(&buf[..n]).unwrap_or("?").trim();
        let _ = write!(line, " {k}={v}");
    }
    for (k, path) in [
        ("shmem_enabled", SEED_KNOBS[0]),
        ("shmem_2m", SEED_KNOBS[1]),
    ] {
        if let Some(v) = read_proc(path).as_deref().and_then(selected) {
            let _ = write!(line, " {k}={v}");
        }
    }
    ulib::println!("{line}");
}

/// The `[chosen]` word of a sysfs knob's text (`always within_size
/// advise [never] deny force` -> `never`).
fn selected(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(&text[start..start + len])
}

/// Writes `value` to the sysfs or debugfs knob `knob`; a knob the kernel
/// lacks (Linux has none of faultline's switches) is left alone.
pub fn set_knob(knob: &core::ffi::CStr, value: &str) {
    if let Ok(fd) = open(knob, O_WRONLY | O_CLOEXEC, 0) {
        let _ = write(fd, value.as_bytes());
        let _ = close(fd);
    }
}

/// The integer value of argument `key=` in `args`, or `default`.
pub fn arg(args: &ulib::Args, key: &str, default: u64) -> u64 {
    args.clone()
        .filter_map(|a| a.strip_prefix(key)?.strip_prefix('='))
        .find_map(|v| v.parse().ok())
        .unwrap_or(default)
}
