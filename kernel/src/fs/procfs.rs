//! /proc: `meminfo`, `vmstat`, `self/smaps` and `self/ptdump`, generated
//! when opened (Linux: `fs/proc/meminfo.c`, `mm/vmstat.c`'s `vmstat_show`,
//! `fs/proc/task_mmu.c`).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt::Write;

use super::vfs::{Inode, InodeKind, PseudoFile};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::{frame, vmstat};

struct MemInfo;
struct VmStat;
/// `/proc/self/ptdump`: the calling process's page tables.
struct PtDump;

/// `/proc/self/smaps`: the calling process's VMAs and their memory use.
struct Smaps;

impl PseudoFile for Smaps {
    fn show(&self) -> String {
        crate::task::current_mm().map_or_else(String::new, |mm| crate::mm::smaps::smaps(&mm))
    }
}

impl PseudoFile for PtDump {
    fn show(&self) -> String {
        crate::task::current_mm().map_or_else(String::new, |mm| crate::mm::memory::ptdump(&mm))
    }
}

fn kb(pages: u64) -> u64 {
    pages * (PAGE_SIZE as u64 / 1024)
}

impl PseudoFile for MemInfo {
    fn show(&self) -> String {
        let free = frame::free_stats().free_pages as u64;
        let shmem = vmstat::NR_SHMEM.get();
        let rows = [
            ("MemTotal:", frame::total_pages() as u64),
            ("MemFree:", free),
            ("MemAvailable:", free),
            ("Cached:", shmem),
            ("Shmem:", shmem),
            ("ShmemHugePages:", vmstat::NR_SHMEM_HUGEPAGES.get()),
            ("PageTables:", vmstat::NR_PAGETABLE.get()),
        ];
        let mut s = String::new();
        for (name, pages) in rows {
            // Linux's layout: name padded to 16 columns, value to 8, " kB".
            let _ = writeln!(s, "{:<16}{:>8} kB", name, kb(pages));
        }
        s
    }
}

impl PseudoFile for VmStat {
    fn show(&self) -> String {
        let mut s = format!("nr_free_pages {}\n", frame::free_stats().free_pages);
        vmstat::for_each(|name, value| {
            let _ = writeln!(s, "{} {}", name, value);
        });
        s
    }
}

/// Links read-only pseudo files into the directory `dir`.
fn add_files(dir: &Arc<Inode>, files: [(&str, Box<dyn PseudoFile>); 2]) {
    for (name, file) in files {
        let inode = Inode::new(super::vfs::S_IFREG | 0o444, InodeKind::Pseudo(file));
        dir.dir()
            .expect("a directory")
            .link(dir, name, inode)
            .expect("fresh directory");
    }
}

/// Builds the /proc tree.
pub fn build() -> Arc<Inode> {
    let proc = Inode::new_dir(0o555, None);
    add_files(
        &proc,
        [("meminfo", Box::new(MemInfo)), ("vmstat", Box::new(VmStat))],
    );
    let this = Inode::new_dir(0o555, None);
    add_files(
        &this,
        [("ptdump", Box::new(PtDump)), ("smaps", Box::new(Smaps))],
    );
    proc.dir()
        .expect("a directory")
        .link(&proc, "self", this)
        .expect("fresh directory");
    proc
}
