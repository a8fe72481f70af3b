//! /proc: `meminfo`, `vmstat` and `self/ptdump`, generated when opened (Linux:
//! `fs/proc/meminfo.c`, `mm/vmstat.c`'s `vmstat_show`).

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

/// Builds the /proc tree.
pub fn build() -> Arc<Inode> {
    let proc = Inode::new_dir(0o555, None);
    let d = proc.dir().expect("a directory");
    for (name, file) in [
        ("meminfo", Box::new(MemInfo) as Box<dyn PseudoFile>),
        ("vmstat", Box::new(VmStat)),
    ] {
        let inode = Inode::new(super::vfs::S_IFREG | 0o444, InodeKind::Pseudo(file));
        d.link(&proc, name, inode).expect("fresh directory");
    }
    let this = Inode::new_dir(0o555, None);
    let ptdump = Inode::new(
        super::vfs::S_IFREG | 0o444,
        InodeKind::Pseudo(Box::new(PtDump)),
    );
    this.dir()
        .expect("a directory")
        .link(&this, "ptdump", ptdump)
        .expect("fresh directory");
    d.link(&proc, "self", this).expect("fresh directory");
    proc
}
