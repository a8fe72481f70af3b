//! `/proc/PID/`: one directory per process, made when it is looked up
//! (Linux: `fs/proc/base.c`, `tid_base_stuff`; `fs/proc/array.c` for
//! `status`; `fs/proc/fd.c`). `/proc/self` is a link to the caller's.
//!
//! Each file holds a weak reference to its process and shows it when
//! read; a process gone by then shows an empty file (Linux: ESRCH).
//! `task/TID` is a directory per thread, and `/proc/thread-self` links to
//! the caller's. Where we simplify: a thread's directory shows its
//! process's files.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::fs::vfs::{self, Inode, InodeKind, MagicLink, PseudoDir, PseudoFile, S_IFLNK, S_IFMT};
use crate::task::process::{self, Process};

/// A per-process file: `show` makes its text from the process.
struct ProcFile {
    /// The process shown; gone once it has been reaped.
    process: Weak<Process>,
    /// Makes the file's text from the process.
    show: Show,
}

impl PseudoFile for ProcFile {
    fn show(&self) -> String {
        self.process
            .upgrade()
            .map_or_else(String::new, |p| (self.show)(&p))
    }
}

/// What a per-process file shows.
type Show = fn(&Process) -> String;

/// The files of a process directory and what each shows.
const FILES: [(&str, Show); 13] = [
    ("cmdline", cmdline),
    ("comm", comm),
    ("environ", environ),
    ("maps", maps),
    // One mount namespace: every process sees the same table.
    ("mountinfo", |_| super::mounts::mountinfo()),
    ("mounts", |_| super::mounts::mounts()),
    ("ptdump", ptdump),
    ("smaps", smaps),
    ("stat", stat),
    ("statm", statm),
    ("status", status),
    ("thpmaps", thpmaps),
    ("wchan", wchan),
];

/// The links of a process directory (Linux: `proc_exe_link`,
/// `proc_cwd_link`, `proc_root_link`).
#[derive(Clone, Copy)]
enum Which {
    /// `exe`: the program the process runs (Linux: `proc_exe_link`).
    Exe,
    /// `cwd`: its working directory (Linux: `proc_cwd_link`).
    Cwd,
    /// `root`: its root directory, always the one root here (Linux:
    /// `proc_root_link`).
    Root,
    /// `fd/N`: the file open on descriptor N (Linux: `proc_fd_link`).
    Fd(usize),
}

/// A symlink of a process directory: `exe`, `cwd`, `root` or `fd/N`, which
/// reads as a path and, followed, goes to the inode itself (Linux:
/// `proc_pid_get_link`), even one no path reaches any more.
struct ProcLink {
    /// The process whose link this is; ESRCH once it has been reaped.
    process: Weak<Process>,
    /// Which of its links this is.
    which: Which,
}

impl MagicLink for ProcLink {
    fn readlink(&self) -> KResult<String> {
        let inode = self.follow()?;
        Ok(match self.which {
            Which::Exe => self.process().map(|p| p.exe.lock().path.clone())?,
            Which::Cwd | Which::Root => vfs::path_of(&inode),
            Which::Fd(_) => file_name(&inode),
        })
    }

    fn follow(&self) -> KResult<Arc<Inode>> {
        let p = self.process()?;
        match self.which {
            Which::Exe => p.exe.lock().file.clone().ok_or(Errno::ENOENT),
            Which::Cwd => Ok(p.cwd.lock().clone()),
            Which::Root => Ok(vfs::root()),
            Which::Fd(fd) => Ok(p
                .files
                .lock()
                .get(fd)
                .map_err(|_| Errno::ENOENT)?
                .inode
                .clone()),
        }
    }
}

impl ProcLink {
    /// The process, or ESRCH once it has been reaped.
    fn process(&self) -> KResult<Arc<Process>> {
        self.process.upgrade().ok_or(Errno::ESRCH)
    }
}

/// What /proc/PID/fd/N says of an open file (Linux: `d_path`, or
/// `pipe:[ino]` for a pipe); `anon_inode:[ino]` for the rest of the
/// files linked nowhere.
fn file_name(inode: &Arc<Inode>) -> String {
    if let Some(path) = inode.proc_path() {
        return path;
    }
    match inode.mode() & S_IFMT {
        vfs::S_IFIFO => format!("pipe:[{}]", inode.ino),
        _ => format!("anon_inode:[{}]", inode.ino),
    }
}

/// A new link inode (mode 0777) for `which` of `process`.
fn link(process: &Arc<Process>, which: Which) -> Arc<Inode> {
    Inode::new(
        S_IFLNK | 0o777,
        InodeKind::MagicLink(Box::new(ProcLink {
            process: Arc::downgrade(process),
            which,
        })),
    )
}

/// `/proc/PID/fd`: one link per open descriptor.
struct FdDir(Weak<Process>);

impl PseudoDir for FdDir {
    fn lookup(&self, _dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        let p = self.0.upgrade()?;
        let fd = name_to_int(name)? as usize;
        p.files.lock().get(fd).ok()?;
        Some(link(&p, Which::Fd(fd)))
    }

    fn names(&self) -> Vec<String> {
        self.0.upgrade().map_or_else(Vec::new, |p| {
            p.files
                .lock()
                .iter()
                .map(|(fd, _)| fd.to_string())
                .collect()
        })
    }
}

/// A /proc name that must be a number, read as Linux's `name_to_int`
/// reads it: decimal digits only, no sign, no leading zero but in "0"
/// itself, at most `u32::MAX`.
pub fn name_to_int(name: &str) -> Option<u32> {
    let digits = !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit());
    if !digits || (name.len() > 1 && name.starts_with('0')) {
        return None;
    }
    name.parse().ok()
}

/// `/proc/PID/task`: a directory per thread, named by its TID (Linux:
/// `proc_task_lookup`, `proc_task_readdir`).
struct TaskDir(Weak<Process>);

impl TaskDir {
    /// The TIDs of the process's live threads.
    fn tids(&self) -> Vec<u32> {
        self.0.upgrade().map_or_else(Vec::new, |p| {
            p.live_threads()
                .iter()
                .filter_map(|t| t.user.as_ref().map(|u| u.tid))
                .collect()
        })
    }
}

impl PseudoDir for TaskDir {
    fn lookup(&self, dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        let tid = name_to_int(name)?;
        let p = self.0.upgrade()?;
        self.tids()
            .contains(&tid)
            .then(|| fill(Inode::new_pseudo_dir(dir, None), &p, false))
    }

    fn names(&self) -> Vec<String> {
        self.tids().iter().map(|t| t.to_string()).collect()
    }
}

/// `/proc/PID/map_files`: a link per mapping of a file, named `start-end`
/// in hex, to the file itself (Linux: `proc_map_files_lookup`,
/// `proc_map_files_readdir`).
struct MapFilesDir(Weak<Process>);

/// A `/proc/PID/map_files/` link: the mapped file (Linux:
/// `map_files_get_link`).
struct MapFile(Arc<Inode>);

impl MagicLink for MapFile {
    fn readlink(&self) -> KResult<String> {
        Ok(file_name(&self.0))
    }

    fn follow(&self) -> KResult<Arc<Inode>> {
        Ok(self.0.clone())
    }
}

/// The `start-end` a map_files name gives, parsed as Linux's
/// `dname_to_vma_addr` does: hex numbers with no leading zeros, that fit.
fn dname_to_vma_addr(name: &str) -> Option<(usize, usize)> {
    let (start, end) = name.split_once('-')?;
    let hex = |s: &str| {
        let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
        if !ok || (s.len() > 1 && s.starts_with('0')) {
            return None;
        }
        usize::from_str_radix(s, 16).ok()
    };
    Some((hex(start)?, hex(end)?))
}

impl MapFilesDir {
    /// Each file mapping's range and file.
    fn mappings(&self) -> Vec<(usize, usize, Arc<Inode>)> {
        let Some(mm) = self.0.upgrade().and_then(|p| p.mm()) else {
            return Vec::new();
        };
        let map = mm.mmap_lock_readonly();
        map.vmas
            .iter()
            .filter_map(|(start, end, vma)| Some((start, end, vma.vm_file()?.clone())))
            .collect()
    }
}

impl PseudoDir for MapFilesDir {
    fn lookup(&self, _dir: &Arc<Inode>, name: &str) -> Option<Arc<Inode>> {
        let (start, end) = dname_to_vma_addr(name)?;
        let (_, _, file) = self
            .mappings()
            .into_iter()
            .find(|&(s, e, _)| (s, e) == (start, end))?;
        Some(Inode::new(
            S_IFLNK | 0o400,
            InodeKind::MagicLink(Box::new(MapFile(file))),
        ))
    }

    fn names(&self) -> Vec<String> {
        self.mappings()
            .iter()
            .map(|(s, e, _)| format!("{s:x}-{e:x}"))
            .collect()
    }
}

/// The directory `/proc/PID` of `process`, under `proc`.
pub fn dir(proc: &Arc<Inode>, process: &Arc<Process>) -> Arc<Inode> {
    fill(Inode::new_pseudo_dir(proc, None), process, true)
}

/// Puts the files and links of `process` in the directory `this`, and
/// `task/` too unless this is a thread's directory (Linux: `tgid_base_stuff`
/// and `tid_base_stuff`).
fn fill(this: Arc<Inode>, process: &Arc<Process>, with_task: bool) -> Arc<Inode> {
    let d = this.dir().expect("a directory");
    let weak = Arc::downgrade(process);
    for (name, show) in FILES {
        let file = ProcFile {
            process: weak.clone(),
            show,
        };
        let inode = Inode::new(vfs::S_IFREG | 0o444, InodeKind::Pseudo(Box::new(file)));
        d.link(&this, name, inode).expect("fresh directory");
    }
    // The files made at each read, with Linux's modes.
    let pagemap = InodeKind::Raw(Box::new(super::raw::Pagemap(weak.clone())));
    let mem = InodeKind::Raw(Box::new(super::raw::Mem(weak.clone())));
    let syscall = InodeKind::Raw(Box::new(super::raw::Syscall(weak.clone())));
    for (name, mode, kind) in [
        ("pagemap", 0o400, pagemap),
        ("mem", 0o600, mem),
        ("syscall", 0o400, syscall),
    ] {
        d.link(&this, name, Inode::new(vfs::S_IFREG | mode, kind))
            .expect("fresh directory");
    }
    for (name, which) in [
        ("cwd", Which::Cwd),
        ("exe", Which::Exe),
        ("root", Which::Root),
    ] {
        d.link(&this, name, link(process, which))
            .expect("fresh directory");
    }
    // Only the owner may list or follow these (Linux: mode 0500).
    let fd = Inode::new_pseudo_dir(&this, Some(Box::new(FdDir(weak.clone()))));
    fd.set_perm(0o500);
    d.link(&this, "fd", fd).expect("fresh directory");
    let map_files = Inode::new_pseudo_dir(&this, Some(Box::new(MapFilesDir(weak.clone()))));
    map_files.set_perm(0o500);
    d.link(&this, "map_files", map_files)
        .expect("fresh directory");
    if with_task {
        let task = Inode::new_pseudo_dir(&this, Some(Box::new(TaskDir(weak.clone()))));
        d.link(&this, "task", task).expect("fresh directory");
    }
    this.set_task_owner(&weak);
    this
}

/// The caller's PID: what `/proc/self` names.
pub fn self_pid() -> KResult<u32> {
    crate::task::current_process()
        .map(|p| p.pid)
        .ok_or(Errno::ENOENT)
}

/// Every process's directory name, kthreadd's among them, for listing
/// /proc.
pub fn names() -> Vec<String> {
    let mut pids = process::all_pids();
    pids.push(process::KTHREADD_PID);
    pids.sort_unstable();
    pids.iter().map(|p| p.to_string()).collect()
}

/// `/proc/PID/wchan`: where the process sleeps in the kernel; "0", as
/// Linux shows it when it will not say (Linux: `proc_pid_wchan` without a
/// symbol for it), since faultline keeps no such address.
fn wchan(_p: &Process) -> String {
    String::from("0")
}

/// `/proc/PID/cmdline`: the arguments exec was given, each ending in a NUL
/// (Linux: `proc_pid_cmdline_read`).
fn cmdline(p: &Process) -> String {
    bytes_text(&p.exe.lock().cmdline)
}

/// `/proc/PID/environ`: the environment exec was given, `NAME=value` strings
/// each ending in a NUL (Linux: `environ_read`).
fn environ(p: &Process) -> String {
    bytes_text(&p.exe.lock().environ)
}

/// The text of NUL-separated strings, bytes that are no UTF-8 replaced
/// (pseudo files hold text).
fn bytes_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The name of the process's first thread (Linux: the group leader's
/// `comm`): what exec set, or PR_SET_NAME since.
fn comm(p: &Process) -> String {
    format!("{}\n", p.comm())
}

/// `/proc/PID/maps`: one line per mapping (Linux: `show_map`); empty for a
/// process without an address space.
fn maps(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::smaps::maps(&mm))
}

/// `/proc/PID/thpmaps`: how its memory is mapped, folio by folio
/// (faultline's; Linux's `tools/mm/thpmaps` works it out from pagemap).
fn thpmaps(p: &Process) -> String {
    p.mm().map_or_else(String::new, |mm| {
        crate::mm::thpmaps::Summary::of(&mm).show()
    })
}

/// `/proc/PID/smaps`: `maps` with each mapping's sizes and counts (Linux:
/// `show_smap`).
fn smaps(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::smaps::smaps(&mm))
}

/// `/proc/PID/ptdump`: its user page tables as text (faultline's; Linux dumps
/// only the kernel's tables, through debugfs).
fn ptdump(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::ptdump::ptdump(&mm))
}

/// The state letter of `ps` (Linux: `task_state_array`): zombie, running
/// if a thread is on a CPU or queued, else sleeping.
fn state(p: &Process) -> (char, &'static str) {
    use crate::task::thread::State;
    if p.zombie.load(Ordering::Acquire) {
        return ('Z', "zombie");
    }
    let running = p
        .live_threads()
        .iter()
        .any(|t| matches!(t.state(), State::Running | State::Runnable));
    if running {
        ('R', "running")
    } else {
        ('S', "sleeping")
    }
}

/// Clock ticks (USER_HZ, 100 a second) in `ns` nanoseconds.
fn ticks(ns: u64) -> u64 {
    ns / (1_000_000_000 / crate::task::HZ)
}

/// The one line `ps` and `top` read (Linux: `do_task_stat`), its 52
/// fields in Linux's order.
fn stat(p: &Process) -> String {
    let (state, _) = state(p);
    let ppid = p.parent().map_or(0, |q| q.pid);
    let (tty_nr, tpgid) = crate::fs::tty::console().stat_fields(p);
    let (utime, stime) = p.cputime();
    let (cutime, cstime, cmin_flt) = {
        let t = p.times.lock();
        (t.cutime, t.cstime, t.cmin_flt)
    };
    let threads = p.live_threads();
    let (blocked, pending, cpu) = threads.first().map_or((0, 0, 0), |t| {
        t.user.as_ref().map_or((0, 0, t.cpu), |u| {
            (
                u.sigmask.load(Ordering::Relaxed),
                u.pending.load(Ordering::Relaxed),
                t.cpu,
            )
        })
    });
    let (ignored, caught) = dispositions(p);
    let nice = p.nice.load(Ordering::Relaxed);
    let (vsize, rss, layout) = match p.mm() {
        Some(mm) => {
            let c = crate::mm::smaps::counters(&mm);
            let rss = (c.rss_anon + c.rss_shmem) / crate::mm::addr::PAGE_SIZE;
            (c.size, rss, Some(crate::mm::smaps::layout(&mm)))
        }
        None => (0, 0, None),
    };
    let l = layout.unwrap_or(crate::mm::smaps::Layout {
        start_code: 0,
        end_code: 0,
        start_stack: 0,
        start_brk: 0,
    });
    let exit_code = if p.zombie.load(Ordering::Acquire) {
        p.exit_status.load(Ordering::Relaxed)
    } else {
        0
    };
    format!(
        "{} ({}) {} {} {} {} {} {} 0 {} {} 0 0 {} {} {} {} {} {} {} 0 {} {} {} {} {} {} {} 0 0 {} {} {} {} \
         0 0 0 17 {} 0 0 0 0 0 0 0 {} 0 0 0 0 {}\n",
        p.pid,
        p.comm(),
        state,
        ppid,
        p.pgid.load(Ordering::Acquire),
        p.sid.load(Ordering::Acquire),
        tty_nr,
        tpgid,
        p.min_flt(),
        cmin_flt,
        ticks(utime),
        ticks(stime),
        ticks(cutime),
        ticks(cstime),
        20 + nice,
        nice,
        threads.len(),
        ticks(p.start_time_ns),
        vsize,
        rss,
        u64::MAX,
        l.start_code,
        l.end_code,
        l.start_stack,
        pending | p.shared_pending.load(Ordering::Relaxed),
        blocked,
        ignored,
        caught,
        cpu,
        l.start_brk,
        exit_code,
    )
}

/// `/proc/PID/statm`: sizes in pages (Linux: `task_statm`): total,
/// resident, shared (file-backed resident), text, 0, data and stack, 0.
fn statm(p: &Process) -> String {
    let Some(mm) = p.mm() else {
        return String::from("0 0 0 0 0 0 0\n");
    };
    let c = crate::mm::smaps::counters(&mm);
    let page = crate::mm::addr::PAGE_SIZE;
    format!(
        "{} {} {} {} 0 {} 0\n",
        c.size / page,
        (c.rss_anon + c.rss_shmem) / page,
        c.rss_shmem / page,
        c.exe / page,
        (c.data + c.stack) / page,
    )
}

/// The signals `p` ignores and catches, as bit masks.
fn dispositions(p: &Process) -> (u64, u64) {
    let mut caught = 0u64;
    let mut ignored = 0u64;
    for (i, a) in p.actions.lock().iter().enumerate().skip(1) {
        match a.handler {
            crate::task::signal_abi::SIG_DFL => {}
            crate::task::signal_abi::SIG_IGN => ignored |= 1 << (i - 1),
            _ => caught |= 1 << (i - 1),
        }
    }
    (ignored, caught)
}

/// `/proc/PID/status` (Linux: `proc_pid_status`): name, state, ids, memory
/// sizes in KiB and signal masks, one `Name:\tvalue` line each; the
/// ids real, effective, saved and file-system (Linux: `task_state`).
fn status(p: &Process) -> String {
    let mut s = String::new();
    let (letter, name) = state(p);
    let ppid = p.parent().map_or(0, |q| q.pid);
    let threads = p.live_threads();
    let c = p.cred.lock().clone();
    // Linux: space-separated, and a trailing space even for none.
    let mut groups = String::new();
    for (i, g) in c.groups.iter().enumerate() {
        let _ = write!(groups, "{}{}", if i > 0 { " " } else { "" }, g);
    }
    groups.push(' ');
    let _ = write!(
        s,
        "Name:\t{}\nUmask:\t{:04o}\nState:\t{} ({})\nTgid:\t{}\nNgid:\t0\nPid:\t{}\nPPid:\t{}\n\
         TracerPid:\t0\nUid:\t{}\t{}\t{}\t{}\nGid:\t{}\t{}\t{}\t{}\nFDSize:\t{}\nGroups:\t{}\n\
         NStgid:\t{}\nNSpid:\t{}\nNSpgid:\t{}\nNSsid:\t{}\nKthread:\t0\n",
        p.comm(),
        p.umask.load(Ordering::Relaxed),
        letter,
        name,
        p.pid,
        p.pid,
        ppid,
        c.uid,
        c.euid,
        c.suid,
        c.fsuid,
        c.gid,
        c.egid,
        c.sgid,
        c.fsgid,
        vfs::NR_OPEN,
        groups,
        p.pid,
        p.pid,
        p.pgid.load(Ordering::Acquire),
        p.sid.load(Ordering::Acquire),
    );
    if let Some(mm) = p.mm() {
        let c = crate::mm::smaps::counters(&mm);
        let kb = |bytes: usize| bytes / 1024;
        for (name, bytes) in [
            ("VmSize", c.size),
            ("VmLck", c.locked),
            ("VmRSS", c.rss_anon + c.rss_shmem),
            ("RssAnon", c.rss_anon),
            ("RssFile", 0),
            ("RssShmem", c.rss_shmem),
            ("VmData", c.data),
            ("VmStk", c.stack),
            ("VmExe", c.exe),
            ("VmLib", 0),
            ("VmPTE", c.pte),
            ("VmSwap", 0),
        ] {
            // Linux's layout: the value right-aligned in 8 columns.
            let _ = writeln!(s, "{}:\t{:>8} kB", name, kb(bytes));
        }
    }
    let (ignored, caught) = dispositions(p);
    let (blocked, pending) = threads
        .first()
        .and_then(|t| t.user.as_ref())
        .map_or((0, 0), |u| {
            (
                u.sigmask.load(Ordering::Relaxed),
                u.pending.load(Ordering::Relaxed),
            )
        });
    let cpus = crate::task::nr_cpus_online();
    // Linux: `task_cap` (every capability in the bounding set, no
    // ambient ones here) and `task_seccomp` (no seccomp here).
    let _ = write!(
        s,
        "Threads:\t{}\nSigPnd:\t{:016x}\nShdPnd:\t{:016x}\nSigBlk:\t{:016x}\nSigIgn:\t{:016x}\n\
         SigCgt:\t{:016x}\nCapInh:\t{:016x}\nCapPrm:\t{:016x}\nCapEff:\t{:016x}\n\
         CapBnd:\t{:016x}\nCapAmb:\t{:016x}\nNoNewPrivs:\t{}\nSeccomp:\t0\nSeccomp_filters:\t0\n\
         Cpus_allowed:\t{:x}\nCpus_allowed_list:\t0-{}\n",
        threads.len(),
        pending,
        p.shared_pending.load(Ordering::Relaxed),
        blocked,
        ignored,
        caught,
        c.caps.inheritable,
        c.caps.permitted,
        c.caps.effective,
        crate::task::cred::Caps::FULL_SET,
        0,
        u32::from(p.no_new_privs.load(Ordering::Relaxed)),
        u64::MAX >> (64 - cpus),
        cpus - 1,
    );
    s
}
