//! /proc/sys: the kernel's tunables as files (Linux: `fs/proc/proc_sysctl.c`
//! and the tables that register them), those memory management has:
//! `vm/mmap_min_addr`, `vm/memfd_noexec` and `vm/drop_caches`, and the
//! System V shared memory limits `kernel/shmmax` and `kernel/shmmni`, and
//! the POSIX message queue limits in `fs/mqueue/` (their values live here,
//! below `ipc/shm.rs` and `ipc/mqueue.rs`, which obey them).
//!
//! Where we simplify: `mmap_min_addr` is Linux's default, 4096, and only
//! shown (faultline runs everything as root, which Linux lets map below
//! it anyway); `memfd_noexec` is one setting for the whole system, where
//! Linux has one per pid namespace.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::super::vfs::{Inode, InodeKind, PseudoFile, S_IFREG};
use crate::errno::{Errno, KResult};
use crate::fs::device::{round_pipe_size, PIPE_MAX_SIZE};
use crate::fs::eventpoll::MAX_USER_WATCHES;
use crate::fs::tmpfs::{MEMFD_NOEXEC_SCOPE, MEMFD_NOEXEC_SCOPE_NOEXEC_ENFORCED};
use crate::mm::mmap::MAX_MAP_COUNT;

/// `vm.mmap_min_addr` (Linux: `CONFIG_DEFAULT_MMAP_MIN_ADDR`, as Debian's
/// arm64 kernel has it).
const MMAP_MIN_ADDR: u32 = 4096;

/// An integer tunable read with `show` and, if it has a `max`, written as
/// a number from `min` to it (Linux: `proc_dointvec_minmax`).
struct IntSysctl {
    /// Where the value lives.
    value: &'static AtomicU32,
    /// The smallest value a write may set.
    min: u32,
    /// The largest value a write may set; None: read-only.
    max: Option<u32>,
}

impl PseudoFile for IntSysctl {
    fn show(&self) -> String {
        format!("{}\n", self.value.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        self.max.is_some()
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: u32 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        if v < self.min || self.max.is_none_or(|max| v > max) {
            return Err(Errno::EINVAL);
        }
        self.value.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// `/proc/sys/vm/drop_caches` (Linux: `drop_caches_sysctl_handler`): a
/// write of 1 to 4 asks the kernel to drop clean caches, which it accepts
/// and drops nothing: every cached page here is tmpfs's, which Linux
/// keeps too. Anything else is EINVAL. Shows the last value written.
struct DropCaches(AtomicU32);

impl PseudoFile for DropCaches {
    fn show(&self) -> String {
        format!("{}\n", self.0.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: u32 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        if !(1..=4).contains(&v) {
            return Err(Errno::EINVAL);
        }
        self.0.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// `kernel.shmmax`: the largest System V shared memory segment, in bytes
/// (Linux: `shm_ctlmax`, by default `SHMMAX`, ULONG_MAX - 2^24).
pub static SHM_CTLMAX: AtomicU64 = AtomicU64::new(u64::MAX - (1 << 24));
/// `kernel.shmmni`: the most segments at once (Linux: `shm_ctlmni`, by
/// default `SHMMNI`).
pub static SHM_CTLMNI: AtomicU32 = AtomicU32::new(4096);
/// The most `kernel.shmmni` may be (Linux: `IPCMNI`).
const IPCMNI: u32 = 32768;

/// `fs.mqueue.queues_max`: how many message queues may exist (Linux:
/// `mq_queues_max`, by default `DFLT_QUEUESMAX`).
pub static MQ_QUEUES_MAX: AtomicU32 = AtomicU32::new(256);
/// `fs.mqueue.msg_max`: the most messages in a queue a caller without
/// CAP_SYS_RESOURCE may make (Linux: `DFLT_MSGMAX`).
pub static MQ_MSG_MAX: AtomicU32 = AtomicU32::new(10);
/// `fs.mqueue.msgsize_max`: the largest message such a caller may ask
/// for (Linux: `DFLT_MSGSIZEMAX`).
pub static MQ_MSGSIZE_MAX: AtomicU32 = AtomicU32::new(8192);
/// `fs.mqueue.msg_default`: the messages of a queue made without
/// attributes (Linux: `DFLT_MSG`).
pub static MQ_MSG_DEFAULT: AtomicU32 = AtomicU32::new(10);
/// `fs.mqueue.msgsize_default`: the message size of such a queue (Linux:
/// `DFLT_MSGSIZE`).
pub static MQ_MSGSIZE_DEFAULT: AtomicU32 = AtomicU32::new(8192);
/// The bounds of `msg_max` and `msg_default` (Linux: `MIN_MSGMAX`,
/// `HARD_MSGMAX`).
const MSG_LIMITS: (u32, u32) = (1, 65536);
/// The bounds of `msgsize_max` and `msgsize_default` (Linux:
/// `MIN_MSGSIZEMAX`, `HARD_MSGSIZEMAX`).
const MSGSIZE_LIMITS: (u32, u32) = (128, 16 << 20);

/// An unsigned long tunable, any value (Linux: `proc_doulongvec_minmax`
/// with no bounds).
struct ULongSysctl(&'static AtomicU64);

impl PseudoFile for ULongSysctl {
    fn show(&self) -> String {
        format!("{}\n", self.0.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: u64 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        self.0.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// `fs.pipe-max-size` (Linux: `proc_dopipe_max_size`): a write is
/// cut to 32 bits and rounded as F_SETPIPE_SZ rounds (0 to a page);
/// EINVAL past 2^31.
struct PipeMaxSize;

impl PseudoFile for PipeMaxSize {
    fn show(&self) -> String {
        format!("{}\n", PIPE_MAX_SIZE.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: u64 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        let size = round_pipe_size(v as u32 as u64).ok_or(Errno::EINVAL)?;
        PIPE_MAX_SIZE.store(size, Ordering::Relaxed);
        Ok(())
    }
}

/// A count tunable, 0 or more (Linux: `proc_dointvec_minmax` or
/// `proc_doulongvec_minmax` with a minimum of 0): `vm.max_map_count`,
/// `fs.epoll.max_user_watches`.
struct CountSysctl(&'static AtomicUsize);

impl PseudoFile for CountSysctl {
    fn show(&self) -> String {
        format!("{}\n", self.0.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: i64 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        let v = usize::try_from(v).map_err(|_| Errno::EINVAL)?;
        self.0.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// The value `vm/mmap_min_addr` shows.
static MMAP_MIN_ADDR_VALUE: AtomicU32 = AtomicU32::new(MMAP_MIN_ADDR);

/// Makes the directory `name` in `parent` and returns it.
fn add_dir(parent: &Arc<Inode>, name: &str) -> Arc<Inode> {
    let dir = Inode::new_dir(0o555, None);
    parent
        .dir()
        .expect("a directory")
        .link(parent, name, dir.clone())
        .expect("fresh name");
    dir
}

/// Makes the tunable `name` in `dir` with permission bits `mode`.
fn add_file(dir: &Arc<Inode>, name: &str, mode: u32, file: Box<dyn PseudoFile>) {
    let inode = Inode::new(S_IFREG | mode, InodeKind::Pseudo(file));
    dir.dir()
        .expect("a directory")
        .link(dir, name, inode)
        .expect("fresh name");
}

/// Makes the integer tunable `name` in `dir`: mode 0644, or 0444 if
/// read-only.
fn add_sysctl(dir: &Arc<Inode>, name: &str, sysctl: IntSysctl) {
    let mode = if sysctl.is_writable() { 0o644 } else { 0o444 };
    add_file(dir, name, mode, Box::new(sysctl));
}

/// Builds /proc/sys in `proc`.
pub fn build(proc: &Arc<Inode>) {
    let sys = add_dir(proc, "sys");
    let kernel = add_dir(&sys, "kernel");
    add_file(&kernel, "shmmax", 0o644, Box::new(ULongSysctl(&SHM_CTLMAX)));
    add_sysctl(
        &kernel,
        "shmmni",
        IntSysctl {
            value: &SHM_CTLMNI,
            min: 0,
            max: Some(IPCMNI),
        },
    );
    let fs = add_dir(&sys, "fs");
    add_file(&fs, "pipe-max-size", 0o644, Box::new(PipeMaxSize));
    let epoll = add_dir(&fs, "epoll");
    add_file(
        &epoll,
        "max_user_watches",
        0o644,
        Box::new(CountSysctl(&MAX_USER_WATCHES)),
    );
    let mqueue = add_dir(&fs, "mqueue");
    for (name, value, (min, max)) in [
        ("msg_default", &MQ_MSG_DEFAULT, MSG_LIMITS),
        ("msg_max", &MQ_MSG_MAX, MSG_LIMITS),
        ("msgsize_default", &MQ_MSGSIZE_DEFAULT, MSGSIZE_LIMITS),
        ("msgsize_max", &MQ_MSGSIZE_MAX, MSGSIZE_LIMITS),
        ("queues_max", &MQ_QUEUES_MAX, (0, i32::MAX as u32)),
    ] {
        let max = Some(max);
        add_sysctl(&mqueue, name, IntSysctl { value, min, max });
    }
    let vm = add_dir(&sys, "vm");
    add_file(
        &vm,
        "drop_caches",
        0o200,
        Box::new(DropCaches(AtomicU32::new(0))),
    );
    add_sysctl(
        &vm,
        "memfd_noexec",
        IntSysctl {
            value: &MEMFD_NOEXEC_SCOPE,
            min: 0,
            max: Some(MEMFD_NOEXEC_SCOPE_NOEXEC_ENFORCED),
        },
    );
    add_file(
        &vm,
        "max_map_count",
        0o644,
        Box::new(CountSysctl(&MAX_MAP_COUNT)),
    );
    add_sysctl(
        &vm,
        "mmap_min_addr",
        IntSysctl {
            value: &MMAP_MIN_ADDR_VALUE,
            min: 0,
            max: None,
        },
    );
}
