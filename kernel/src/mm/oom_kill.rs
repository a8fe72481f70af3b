//! When memory runs out: choose a process and kill it, so that its memory
//! comes back (Linux: `mm/oom_kill.c`, `out_of_memory`, `oom_badness`,
//! `oom_kill_process`).
//!
//! Two ways in. A page fault that finds no frame calls [`out_of_memory`]
//! and tries again. A kernel allocation that had to take from the
//! reserve (`frame::alloc_kernel_pages`) only calls [`memory_short`]: it
//! may hold any lock, so the killing waits for the next return to user
//! space ([`check`]). The victim is the process mapping the most memory
//! (its resident pages and page tables; Linux adds swap and
//! `oom_score_adj`), never init; one already dying is waited for rather
//! than a second killed. The console says so, in Linux's words.
//!
//! Where we simplify: no oom_reaper (the victim's memory comes back as it
//! exits), no memory cgroups, no `oom_score_adj`.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::mm::addr::PAGE_SIZE;
use crate::mm::{frame, smaps, vmstat};
use crate::task::process::{self, Process};
use crate::task::signal::{self, SigSource, SIGKILL};

/// A kernel allocation dipped into the reserve since the last kill.
static SHORT: AtomicBool = AtomicBool::new(false);

/// Memory is short: kill something at the next safe point.
pub fn memory_short() {
    SHORT.store(true, Ordering::Relaxed);
}

/// On the way back to user space: act on `memory_short`, if memory is
/// still short (a process may have died and given it back meanwhile).
#[inline(always)] // on every return to user space: one load
pub fn check() {
    if SHORT.load(Ordering::Relaxed) {
        check_short();
    }
}

/// `check` when memory was short: kill, unless that is over.
#[cold]
#[inline(never)]
fn check_short() {
    if SHORT.swap(false, Ordering::Relaxed) && frame::below_reserve() {
        out_of_memory();
    }
}

/// Pages `p` would give back by dying, and its address space's sizes in
/// kB for the report: (badness, total-vm, anon-rss, shmem-rss, pgtables).
fn badness(p: &Process) -> Option<(usize, [usize; 4])> {
    let mm = p.mm()?;
    let (anon, shmem) = smaps::rss(&mm);
    let tables = mm.pt_pages.load(Ordering::Relaxed) * PAGE_SIZE;
    let size: usize = mm
        .mmap_lock_readonly()
        .vmas
        .iter()
        .map(|(s, e, _)| e - s)
        .sum();
    let kb = [size / 1024, anon / 1024, shmem / 1024, tables / 1024];
    Some(((anon + shmem + tables) / PAGE_SIZE, kb))
}

/// Kills the process whose death frees the most memory (Linux:
/// `out_of_memory` -> `select_bad_process` -> `oom_kill_process`). False
/// if there is none to kill; true also when a victim is still dying.
pub fn out_of_memory() -> bool {
    let mut victim: Option<(Arc<Process>, usize, [usize; 4])> = None;
    for p in process::all_processes() {
        if p.pid == 1 || p.zombie.load(Ordering::Acquire) {
            continue;
        }
        if p.exiting.load(Ordering::Acquire) || p.oom_killed.load(Ordering::Acquire) {
            return true; // its memory is on its way back: wait for it
        }
        if let Some((points, kb)) = badness(&p) {
            if victim.as_ref().is_none_or(|(_, best, _)| points > *best) {
                victim = Some((p, points, kb));
            }
        }
    }
    let Some((p, _, [total_vm, anon, shmem, tables])) = victim else {
        return false;
    };
    let comm = p.comm();
    println!(
        "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task={},pid={},uid=0",
        comm, p.pid
    );
    println!(
        "Out of memory: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:0kB, shmem-rss:{}kB, UID:0 pgtables:{}kB oom_score_adj:0",
        p.pid, comm, total_vm, anon, shmem, tables
    );
    p.oom_killed.store(true, Ordering::Release);
    vmstat::OOM_KILL.inc();
    signal::send_to_process(&p, SIGKILL, SigSource::Kernel);
    true
}

/// A user fault found no memory: kill a process so that some comes back,
/// and let the access fault again once it has had a moment to die (Linux:
/// `pagefault_out_of_memory`). The faulting process may be the one
/// killed; if nothing can be killed, it dies itself.
pub fn pagefault_out_of_memory() {
    // Partly unmapped large folios give back their unmapped pages first
    // (Linux: the deferred split shrinker, run by reclaim before the OOM
    // killer); then the access faults again.
    if crate::mm::huge_memory::split::deferred_split_scan() > 0 {
        return;
    }
    if out_of_memory() {
        crate::task::msleep(1000 / crate::task::HZ);
    } else {
        signal::send_to_current(SIGKILL);
    }
}
