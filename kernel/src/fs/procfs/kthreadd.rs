//! `/proc/2`: Linux's `kthreadd`, the parent of the kernel's threads,
//! which programs and Linux's own tests expect there (Linux: kernel
//! threads are tasks with `PF_KTHREAD`, no address space and no open
//! files; `proc_pid_status` prints `Kthread: 1`). Where we simplify:
//! faultline's kernel threads have no PIDs of their own, so this one
//! directory stands for them all, a process with nothing in it.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::fs::vfs::{self, Inode, InodeKind, PseudoDir, PseudoFile};
use crate::task::process::KTHREADD_PID;

/// Linux's `PF_KTHREAD`, a task flag `/proc/PID/stat` shows.
const PF_KTHREAD: u32 = 0x0020_0000;

/// What one of kthreadd's files shows.
type Show = fn() -> String;

/// One of kthreadd's files: fixed text.
struct Text(Show);

impl PseudoFile for Text {
    fn show(&self) -> String {
        (self.0)()
    }
}

/// `status`: the lines of `proc_pid_status` a kernel thread has.
fn status() -> String {
    format!(
        "Name:\tkthreadd\nUmask:\t0000\nState:\tS (sleeping)\nTgid:\t{p}\nNgid:\t0\nPid:\t{p}\n\
         PPid:\t0\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t0\nGroups:\t \n\
         NStgid:\t{p}\nNSpid:\t{p}\nNSpgid:\t0\nNSsid:\t0\nKthread:\t1\nThreads:\t1\n",
        p = KTHREADD_PID
    )
}

/// `stat`: `do_task_stat`'s 52 fields for a sleeping kernel thread, its
/// flags (the ninth) holding `PF_KTHREAD`, every count and address 0.
fn stat() -> String {
    let mut fields: Vec<String> = Vec::new();
    fields.push(format!(
        "{KTHREADD_PID} (kthreadd) S 0 0 0 0 -1 {PF_KTHREAD}"
    ));
    // Fields 10 to 52; the 20th (threads) is 1 and the 19th (nice) 0.
    for field in 10..=52 {
        fields.push(String::from(if field == 20 { "1" } else { "0" }));
    }
    format!("{}\n", fields.join(" "))
}

/// The directory's files and what each shows.
const FILES: [(&str, Show); 4] = [
    ("cmdline", String::new),
    ("comm", || String::from("kthreadd\n")),
    ("stat", stat),
    ("status", status),
];

/// `fd/`: a kernel thread has no open files.
struct NoFiles;

impl PseudoDir for NoFiles {
    fn lookup(&self, _dir: &Arc<Inode>, _name: &str) -> Option<Arc<Inode>> {
        None
    }

    fn names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The directory `/proc/2`, under `proc`.
pub fn dir(proc: &Arc<Inode>) -> Arc<Inode> {
    let this = Inode::new_pseudo_dir(proc, None);
    let d = this.dir().expect("a directory");
    for (name, show) in FILES {
        let inode = Inode::new(
            vfs::S_IFREG | 0o444,
            InodeKind::Pseudo(Box::new(Text(show))),
        );
        d.link(&this, name, inode).expect("fresh directory");
    }
    let fd = Inode::new_pseudo_dir(&this, Some(Box::new(NoFiles)));
    d.link(&this, "fd", fd).expect("fresh directory");
    this
}
