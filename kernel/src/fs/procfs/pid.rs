//! `/proc/PID/`: one directory per process, made when it is looked up
//! (Linux: `fs/proc/base.c`, `tid_base_stuff`; `fs/proc/array.c` for
//! `status`; `fs/proc/fd.c`). `/proc/self` is a link to the caller's.
//!
//! Each file holds a weak reference to its process and shows it when
//! opened; a process gone by then shows an empty file (Linux: ESRCH).

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
    process: Weak<Process>,
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
const FILES: [(&str, Show); 7] = [
    ("cmdline", cmdline),
    ("comm", comm),
    ("environ", environ),
    ("maps", maps),
    ("ptdump", ptdump),
    ("smaps", smaps),
    ("status", status),
];

/// The links of a process directory (Linux: `proc_exe_link`,
/// `proc_cwd_link`, `proc_root_link`).
#[derive(Clone, Copy)]
enum Which {
    Exe,
    Cwd,
    Root,
    Fd(usize),
}

struct ProcLink {
    process: Weak<Process>,
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
    fn process(&self) -> KResult<Arc<Process>> {
        self.process.upgrade().ok_or(Errno::ESRCH)
    }
}

/// What /proc/PID/fd/N says of an open file (Linux: `d_path`, or
/// `pipe:[ino]` for a pipe); `anon_inode:[ino]` for the rest of the
/// files linked nowhere.
fn file_name(inode: &Arc<Inode>) -> String {
    if let Some(path) = vfs::find_path(inode) {
        return path;
    }
    match inode.mode() & S_IFMT {
        vfs::S_IFIFO => format!("pipe:[{}]", inode.ino),
        _ => format!("anon_inode:[{}]", inode.ino),
    }
}

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
        let fd: usize = name.parse().ok()?;
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

/// The directory `/proc/PID` of `process`, under `proc`.
pub fn dir(proc: &Arc<Inode>, process: &Arc<Process>) -> Arc<Inode> {
    let this = Inode::new_pseudo_dir(proc, None);
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
    for (name, which) in [
        ("cwd", Which::Cwd),
        ("exe", Which::Exe),
        ("root", Which::Root),
    ] {
        d.link(&this, name, link(process, which))
            .expect("fresh directory");
    }
    let fd = Inode::new_pseudo_dir(&this, Some(Box::new(FdDir(weak))));
    d.link(&this, "fd", fd).expect("fresh directory");
    this
}

/// The caller's PID: what `/proc/self` names.
pub fn self_pid() -> KResult<u32> {
    crate::task::current_process()
        .map(|p| p.pid)
        .ok_or(Errno::ENOENT)
}

/// Every process's directory name, for listing /proc.
pub fn names() -> Vec<String> {
    process::all_pids().iter().map(|p| p.to_string()).collect()
}

fn cmdline(p: &Process) -> String {
    bytes_text(&p.exe.lock().cmdline)
}

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
fn comm_of(p: &Process) -> String {
    let threads = p.live_threads();
    let Some(u) = threads.first().and_then(|t| t.user.as_ref()) else {
        return String::new();
    };
    let comm = *u.comm.lock();
    let len = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
    String::from_utf8_lossy(&comm[..len]).into_owned()
}

fn comm(p: &Process) -> String {
    format!("{}\n", comm_of(p))
}

fn maps(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::smaps::maps(&mm))
}

fn smaps(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::smaps::smaps(&mm))
}

fn ptdump(p: &Process) -> String {
    p.mm()
        .map_or_else(String::new, |mm| crate::mm::memory::ptdump(&mm))
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

fn status(p: &Process) -> String {
    let mut s = String::new();
    let (letter, name) = state(p);
    let ppid = p.parent().map_or(0, |q| q.pid);
    let threads = p.live_threads();
    let _ = write!(
        s,
        "Name:\t{}\nUmask:\t{:04o}\nState:\t{} ({})\nTgid:\t{}\nNgid:\t0\nPid:\t{}\nPPid:\t{}\n\
         TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t{}\nGroups:\t\n\
         NStgid:\t{}\nNSpid:\t{}\n",
        comm_of(p),
        p.umask.load(Ordering::Relaxed),
        letter,
        name,
        p.pid,
        p.pid,
        ppid,
        vfs::NR_OPEN,
        p.pid,
        p.pid,
    );
    if let Some(mm) = p.mm() {
        let c = crate::mm::smaps::counters(&mm);
        let kb = |bytes: usize| bytes / 1024;
        for (name, bytes) in [
            ("VmSize", c.size),
            ("VmLck", 0),
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
    let mut caught = 0u64;
    let mut ignored = 0u64;
    for (i, a) in p.actions.lock().iter().enumerate().skip(1) {
        match a.handler {
            crate::task::signal_abi::SIG_DFL => {}
            crate::task::signal_abi::SIG_IGN => ignored |= 1 << (i - 1),
            _ => caught |= 1 << (i - 1),
        }
    }
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
    let _ = write!(
        s,
        "Threads:\t{}\nSigPnd:\t{:016x}\nShdPnd:\t{:016x}\nSigBlk:\t{:016x}\nSigIgn:\t{:016x}\n\
         SigCgt:\t{:016x}\nCpus_allowed:\t{:x}\nCpus_allowed_list:\t0-{}\n",
        threads.len(),
        pending,
        p.shared_pending.load(Ordering::Relaxed),
        blocked,
        ignored,
        caught,
        u64::MAX >> (64 - cpus),
        cpus - 1,
    );
    s
}
