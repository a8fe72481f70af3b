//! /proc: the system's files (`meminfo`, `vmstat`, `cpuinfo`, `mounts`,
//! `stat`, `uptime`, `loadavg`, `version`, `filesystems`), made when
//! opened, the mount table's (`mounts.rs`, also as `PID/mounts` and
//! `PID/mountinfo`), `kpageflags` and `kpagecount` (`raw.rs`, read at a position),
//! one directory per process (`pid.rs`), with `/proc/self` naming the
//! caller's and `/proc/thread-self` its thread's, and the tunables under
//! /proc/sys (`sysctl.rs`) (Linux: `fs/proc/`, `mm/vmstat.c`'s
//! `vmstat_show`). mount(2) makes more instances, each with its own
//! device number and options (`options.rs`: `hidepid=`, `subset=pid`).
//!
//! Where we simplify: `hidepid=noaccess` lists every process and lets
//! every directory be entered; faultline checks no file permissions
//! (`invisible` and `ptraceable` do hide what the caller may not trace).

mod kthreadd;
mod mounts;
mod options;
mod pid;
mod raw;
pub mod sysctl;

pub use options::ProcOptions;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::Ordering;

use options::HidePid;

use super::vfs::{self, Inode, InodeKind, MagicLink, PseudoDir, PseudoFile, S_IFLNK};
use crate::errno::{Errno, KResult};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::huge_memory::order::PMD_ORDER;
use crate::mm::pagemap::PerFrame;
use crate::mm::{frame, vmstat};
use crate::sync::SpinLock;

/// A system-wide file: `show` makes its text.
struct SysFile(Show);

impl PseudoFile for SysFile {
    fn show(&self) -> String {
        (self.0)()
    }
}

/// `pages` pages in KiB, the unit of /proc/meminfo (Linux: `K()`).
fn kb(pages: u64) -> u64 {
    pages * (PAGE_SIZE as u64 / 1024)
}

/// `/proc/meminfo` (Linux: `meminfo_proc_show`): the lines free(1) and top
/// read, in KiB. Nothing is reclaimable here, so MemAvailable is MemFree, and
/// the page cache is all shmem.
fn meminfo() -> String {
    let free = frame::free_stats().free_pages as u64;
    let shmem = vmstat::NR_SHMEM.get();
    let rows = [
        ("MemTotal:", frame::total_pages() as u64),
        ("MemFree:", free),
        ("MemAvailable:", free),
        ("Cached:", shmem),
        ("Shmem:", shmem),
        ("AnonHugePages:", vmstat::NR_ANON_THPS.get() << PMD_ORDER),
        ("ShmemHugePages:", vmstat::NR_SHMEM_HUGEPAGES.get()),
        ("Slab:", crate::mm::heap::pages() as u64),
        (
            "KernelStack:",
            crate::task::thread::KERNEL_STACK_PAGES.load(Ordering::Relaxed) as u64,
        ),
        ("PageTables:", vmstat::NR_PAGETABLE.get()),
    ];
    let mut s = String::new();
    for (name, pages) in rows {
        // Linux's layout: name padded to 16 columns, value to 8, " kB".
        let _ = writeln!(s, "{:<16}{:>8} kB", name, kb(pages));
    }
    s
}

/// `/proc/vmstat` (Linux: `vmstat_show`): `nr_free_pages`, then every counter
/// of `mm::vmstat`, one `name value` line each.
fn vmstat() -> String {
    let mut s = format!("nr_free_pages {}\n", frame::free_stats().free_pages);
    vmstat::for_each(|name, value| {
        let _ = writeln!(s, "{} {}", name, value);
    });
    s
}

/// One block per CPU, as arm64 Linux's `c_show` prints them: the MIDR
/// fields and the features exec announces in AT_HWCAP.
fn cpuinfo() -> String {
    let midr = crate::arch::cpu::midr();
    let freq = crate::arch::timer::frequency();
    let mut s = String::new();
    for cpu in (0..crate::config::NR_CPUS).filter(|&c| crate::task::cpu_online(c)) {
        // BogoMIPS: twice the timer's rate in MHz (Linux: from
        // loops_per_jiffy, which arm64 derives from the timer).
        let _ = write!(
            s,
            "processor\t: {}\nBogoMIPS\t: {}.{:02}\nFeatures\t: fp asimd\n\
             CPU implementer\t: {:#04x}\nCPU architecture: 8\nCPU variant\t: {:#x}\n\
             CPU part\t: {:#05x}\nCPU revision\t: {}\n\n",
            cpu,
            2 * freq / 1_000_000,
            (2 * freq / 10_000) % 100,
            (midr >> 24) & 0xff,
            (midr >> 20) & 0xf,
            (midr >> 4) & 0xfff,
            midr & 0xf,
        );
    }
    s
}

/// Seconds since boot and seconds the CPUs were idle, both to 1/100 s
/// (Linux: `fs/proc/uptime.c`).
fn uptime() -> String {
    let ticks = |t: u64| format!("{}.{:02}", t / 100, t % 100);
    let hz = crate::task::HZ;
    let up = crate::task::clock::monotonic_ns() / 10_000_000;
    let idle: u64 = (0..crate::config::NR_CPUS)
        .filter(|&c| crate::task::cpu_online(c))
        .map(|c| crate::task::idle_ticks(c) * 100 / hz)
        .sum();
    format!("{} {}\n", ticks(up), ticks(idle))
}

/// Load averages (faultline keeps none: 0.00), runnable and all
/// threads, and the last PID handed out (Linux: `fs/proc/loadavg.c`).
fn loadavg() -> String {
    format!(
        "0.00 0.00 0.00 {}/{} {}\n",
        crate::task::nr_running(),
        crate::task::process::nr_threads(),
        crate::task::process::last_pid()
    )
}

/// CPU time by CPU, in USER_HZ ticks, and the system's counts (Linux:
/// `fs/proc/stat.c`'s `show_stat`). faultline has no nice, iowait, irq,
/// softirq, steal or guest time of its own: those columns are 0.
fn stat() -> String {
    let cpus: Vec<usize> = (0..crate::config::NR_CPUS)
        .filter(|&c| crate::task::cpu_online(c))
        .collect();
    let per_cpu: Vec<[u64; 4]> = cpus.iter().map(|&c| crate::task::cpu_stat(c)).collect();
    let line =
        |name: &str, t: [u64; 4]| format!("{name} {} 0 {} {} 0 0 0 0 0 0\n", t[0], t[1], t[2]);
    let mut total = [0u64; 4];
    for t in &per_cpu {
        for (sum, v) in total.iter_mut().zip(t) {
            *sum += v;
        }
    }
    let mut s = line("cpu ", total);
    for (c, t) in cpus.iter().zip(&per_cpu) {
        s.push_str(&line(&format!("cpu{c}"), *t));
    }
    let boot_secs = crate::task::clock::realtime_offset().div_euclid(1_000_000_000);
    let _ = write!(
        s,
        "intr {}\nctxt {}\nbtime {}\nprocesses {}\nprocs_running {}\nprocs_blocked 0\n",
        crate::arch::irq::nr_irqs(),
        total[3],
        boot_secs,
        crate::task::process::last_pid(),
        crate::task::nr_running(),
    );
    s
}

/// `/proc/version` (Linux: `version_proc_show`): the Linux release faultline
/// answers as, for programs that parse it.
fn version() -> String {
    String::from("Linux version 6.12.0-faultline (faultline 0.1.0) #1 SMP\n")
}

/// `/proc/filesystems` (Linux: `filesystems_proc_show`): the file system
/// types there are, all `nodev` (none needs a block device).
fn filesystems() -> String {
    String::from("nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\n")
}

/// What a system-wide file shows.
type Show = fn() -> String;

/// The system-wide files of /proc, by name, with what each shows.
const FILES: [(&str, Show); 11] = [
    ("cpuinfo", cpuinfo),
    ("filesystems", filesystems),
    ("loadavg", loadavg),
    ("meminfo", meminfo),
    ("mounts", mounts::mounts),
    ("slabinfo", crate::mm::heap::slabinfo),
    ("stat", stat),
    ("thpmaps", crate::mm::thpmaps::exited),
    ("uptime", uptime),
    ("version", version),
    ("vmstat", vmstat),
];

/// Files other subsystems add, as (directory, name, text), to every /proc
/// built after (Linux: `proc_create_seq` from their init calls).
static REGISTERED: SpinLock<Vec<(&str, &str, Show)>> = SpinLock::new(Vec::new());

/// Adds /proc/`dir`/`name`, whose text `show` makes, to every /proc
/// built from now on.
pub fn register(dir: &'static str, name: &'static str, show: Show) {
    REGISTERED.lock().push((dir, name, show));
}

/// /proc's made-up entries: a directory per process, those `hidepid=`
/// lets the caller see.
struct PidDirs(HidePid, Option<u32>);

impl PidDirs {
    /// May the caller see the directory of process `pid` (Linux:
    /// `has_pid_permissions` at HIDEPID_INVISIBLE)? kthreadd, a kernel
    /// thread, is traced by none but CAP_SYS_PTRACE.
    fn visible(&self, pid: u32) -> bool {
        if matches!(self.0, HidePid::Off | HidePid::NoAccess) {
            return true;
        }
        let Some(me) = crate::task::current_process() else {
            return true;
        };
        let cred = me.cred.lock().clone();
        if self.0 == HidePid::Invisible && self.1.is_some_and(|gid| cred.fsgid == gid) {
            return true;
        }
        if pid == crate::task::process::KTHREADD_PID {
            return cred.capable(crate::task::cred::CAP_SYS_PTRACE);
        }
        crate::task::process::find_process(pid)
            .is_some_and(|p| crate::task::process::ptrace_may_access(&p).unwrap_or(false))
    }
}

impl PseudoDir for PidDirs {
    fn lookup(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        let pid = pid::name_to_int(name)?;
        if !self.visible(pid) {
            return None;
        }
        if pid == crate::task::process::KTHREADD_PID {
            return Some(kthreadd::dir(dir));
        }
        let process = crate::task::process::find_process(pid)?;
        Some(pid::dir(dir, &process))
    }

    fn names(&self) -> Vec<String> {
        let mut names = pid::names();
        names.retain(|n| pid::name_to_int(n).is_some_and(|p| self.visible(p)));
        names
    }
}

/// `/proc/self`: the caller's directory (Linux: `proc_self_get_link`), in
/// the /proc whose root it holds weakly (the root holds the link).
struct SelfLink(Weak<Inode>);

impl MagicLink for SelfLink {
    fn readlink(&self) -> KResult<String> {
        pid::self_pid().map(|p| format!("{p}"))
    }

    fn follow(&self) -> KResult<Arc<Inode>> {
        let name = self.readlink()?;
        let proc = self.0.upgrade().ok_or(Errno::ENOENT)?;
        let found = proc.dir()?.find(&proc, &name);
        found.ok_or(Errno::ENOENT)
    }
}

/// `/proc/thread-self`: the caller's thread's directory, `PID/task/TID`
/// (Linux: `proc_thread_self_get_link`), as `SelfLink`.
struct ThreadSelfLink(Weak<Inode>);

impl MagicLink for ThreadSelfLink {
    fn readlink(&self) -> KResult<String> {
        let current = crate::task::current();
        let u = current.user.as_ref().ok_or(Errno::ENOENT)?;
        Ok(format!("{}/task/{}", u.process.pid, u.tid))
    }

    fn follow(&self) -> KResult<Arc<Inode>> {
        let name = self.readlink()?;
        let mut dir = self.0.upgrade().ok_or(Errno::ENOENT)?;
        for part in name.split('/') {
            dir = dir.dir()?.find(&dir, part).ok_or(Errno::ENOENT)?;
        }
        Ok(dir)
    }
}

/// Builds the /proc tree (under the root, which must be set).
pub fn build() -> Arc<Inode> {
    build_with(ProcOptions::default())
}

/// A /proc instance for mount(2) or fsmount(2), with its own device
/// number (Linux: `proc_fill_super`).
pub fn new_instance(options: ProcOptions) -> Arc<Inode> {
    let proc = build_with(options);
    proc.set_pseudo_dev(vfs::anon_dev());
    proc
}

/// Builds a /proc tree with `options`.
fn build_with(options: ProcOptions) -> Arc<Inode> {
    let pids = PidDirs(options.hidepid, options.gid);
    let proc = Inode::new_pseudo_dir(&vfs::root(), Some(Box::new(pids)));
    let d = proc.dir().expect("a directory");
    add_self_links(&proc);
    if options.subset_pid {
        return proc;
    }
    for (name, show) in FILES {
        let inode = Inode::new(
            vfs::S_IFREG | 0o444,
            InodeKind::Pseudo(Box::new(SysFile(show))),
        );
        d.link(&proc, name, inode).expect("fresh directory");
    }
    for (name, which) in [
        ("kpageflags", PerFrame::Flags),
        ("kpagecount", PerFrame::Count),
    ] {
        let inode = Inode::new(
            vfs::S_IFREG | 0o400,
            InodeKind::Raw(Box::new(raw::Kpage(which))),
        );
        d.link(&proc, name, inode).expect("fresh directory");
    }
    for (dir, name, show) in REGISTERED.lock().iter() {
        let parent = d.lookup(dir).unwrap_or_else(|| {
            let made = Inode::new_pseudo_dir(&proc, None);
            d.link(&proc, dir, made.clone()).expect("fresh name");
            made
        });
        let inode = Inode::new(
            vfs::S_IFREG | 0o444,
            InodeKind::Pseudo(Box::new(SysFile(*show))),
        );
        let pd = parent.dir().expect("a directory");
        pd.link(&parent, name, inode).expect("fresh name");
    }
    sysctl::build(&proc);
    proc
}

/// Links `self` and `thread-self` into the new tree `proc`.
fn add_self_links(proc: &Arc<Inode>) {
    let d = proc.dir().expect("a directory");
    let this = Inode::new(
        S_IFLNK | 0o777,
        InodeKind::MagicLink(Box::new(SelfLink(Arc::downgrade(proc)))),
    );
    d.link(proc, "self", this).expect("fresh directory");
    let thread_self = Inode::new(
        S_IFLNK | 0o777,
        InodeKind::MagicLink(Box::new(ThreadSelfLink(Arc::downgrade(proc)))),
    );
    d.link(proc, "thread-self", thread_self)
        .expect("fresh directory");
}
