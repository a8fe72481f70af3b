//! /sys: the transparent-hugepage knobs for shmem, readable and writable
//! with Linux's formats (Linux: `mm/huge_memory.c`'s sysfs attributes and
//! `mm/shmem.c`'s `shmem_enabled_show/store`), seed 004's hex flags
//! `thp_exec_enabled` and `thp_mapping_align`, and faultline's own on/off
//! switches (1 or 0), a file under `kernel/mm/` for each row of
//! `switches.rs`; and `kernel/debug/fault_around_bytes` and `kernel/debug/split_huge_pages`
//! (Linux keeps them in debugfs). A bad value is EINVAL and changes nothing.
//! `devices/system/cpu/online` lists the online CPUs. Each
//! `hugepages-<N>kB/stats/` holds Linux's per-size counters of folios
//! allocated and fallen back from, for shmem and anonymous faults.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::vfs::{Inode, InodeKind, PseudoFile, S_IFREG};
use crate::errno::{Errno, KResult};
use crate::mm::addr::{PAGE_SIZE, PMD_SIZE};
use crate::mm::fault::FAULT_AROUND_BYTES;
use crate::mm::huge_memory::knobs::{per_size_name, HexFlagsShow, HugeKnob, InvalidSetting};
use crate::mm::huge_memory::order::{MIN_LARGE_ORDER, PMD_ORDER};
use crate::mm::huge_memory::settings::HugeSettings;
use crate::mm::huge_memory::{huge_settings, update_huge_settings};
use crate::mm::thpmaps;
use crate::mm::vmstat::{self, Counter};
use crate::switches::SWITCHES;

/// `shmem_enabled` at the top (None) or for one folio order.
struct ShmemEnabledKnob(Option<u8>);

impl PseudoFile for ShmemEnabledKnob {
    fn show(&self) -> String {
        let s = huge_settings();
        match self.0 {
            None => format!("{}", s.shmem_enabled.sysfs_show()),
            Some(order) => format!("{}", s.per_size(order).sysfs_show()),
        }
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        update_huge_settings(|s| match self.0 {
            None => s.store_shmem_enabled(data),
            Some(order) => s.store_per_size(order, data),
        })
        .map_err(|_| Errno::EINVAL)
    }
}

/// `enabled` (None) or `hugepages-<N>kB/enabled` (Some(order)): large
/// folios for anonymous memory (Linux: `enabled_show/store`,
/// `thpsize_enabled_show/store`).
struct AnonEnabledKnob(Option<u8>);

impl PseudoFile for AnonEnabledKnob {
    fn show(&self) -> String {
        let s = huge_settings();
        match self.0 {
            None => format!("{}", s.anon_enabled.sysfs_show()),
            Some(order) => format!("{}", s.anon_per_size(order).sysfs_show()),
        }
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        update_huge_settings(|s| match self.0 {
            None => s.store_anon_enabled(data),
            Some(order) => s.store_anon_per_size(order, data),
        })
        .map_err(|_| Errno::EINVAL)
    }
}

/// One of seed 004's hex-flag knobs (Linux: `thp_exec_enabled_show/store`,
/// `thp_mapping_align_show/store`): the bits it shows and how it stores.
struct ThpFlags {
    /// Reads the knob's bits from the settings.
    get: fn(&HugeSettings) -> u32,
    /// Parses a written value into the settings; an error leaves them as they
    /// were.
    store: fn(&mut HugeSettings, &str) -> Result<(), InvalidSetting>,
}

impl PseudoFile for ThpFlags {
    fn show(&self) -> String {
        format!("{}", HexFlagsShow((self.get)(&huge_settings())))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        update_huge_settings(|s| (self.store)(s, data)).map_err(|_| Errno::EINVAL)
    }
}

/// An on/off file of faultline's (Linux has none of these): a switch, here
/// so the benchmarks can show what each feature buys, or
/// `thpmaps/exited`, which has `/proc/thpmaps` count exiting address spaces.
/// Writing 1 is EINVAL where the hardware lacks what it turns on.
struct SwitchFile(&'static AtomicBool, fn() -> bool);

impl PseudoFile for SwitchFile {
    fn show(&self) -> String {
        format!("{}\n", self.0.load(Ordering::Relaxed) as u8)
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let on = match data.trim() {
            "1" if (self.1)() => true,
            "0" => false,
            _ => return Err(Errno::EINVAL),
        };
        self.0.store(on, Ordering::Relaxed);
        Ok(())
    }
}

/// A THP knob Linux has and faultline keeps without acting on it, a
/// number up to `max`: `defrag`'s khugepaged cousins (faultline has no
/// khugepaged) and `use_zero_page` (it has no huge zero page: 0 only).
/// Programs that save and restore the THP settings (Linux's selftests)
/// read and write them back (Linux: khugepaged's sysfs attributes,
/// `use_zero_page_store`).
struct Kept {
    /// The value shown.
    value: AtomicU64,
    /// The largest value taken; EINVAL above.
    max: u64,
}

impl Kept {
    /// A knob showing `value`, taking up to `max`.
    fn new(value: u64, max: u64) -> Self {
        Kept {
            value: AtomicU64::new(value),
            max,
        }
    }
}

impl PseudoFile for Kept {
    fn show(&self) -> String {
        format!("{}\n", self.value.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let v: u64 = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        if v > self.max {
            return Err(Errno::EINVAL);
        }
        self.value.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// `defrag`: how hard a THP allocation may try, one of Linux's choices,
/// kept without effect (faultline never compacts memory; Linux:
/// `defrag_show/store`).
struct Defrag(AtomicUsize);

/// `defrag`'s choices, in Linux's order.
const DEFRAG: [&str; 5] = ["always", "defer", "defer+madvise", "madvise", "never"];

impl PseudoFile for Defrag {
    fn show(&self) -> String {
        let chosen = self.0.load(Ordering::Relaxed);
        let words: alloc::vec::Vec<String> = DEFRAG
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == chosen {
                    format!("[{w}]")
                } else {
                    String::from(*w)
                }
            })
            .collect();
        format!("{}\n", words.join(" "))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let i = DEFRAG
            .iter()
            .position(|w| *w == data.trim())
            .ok_or(Errno::EINVAL)?;
        self.0.store(i, Ordering::Relaxed);
        Ok(())
    }
}

/// `hpage_pmd_size`: the bytes a PMD maps, where programs learn the THP
/// size (Linux: `hpage_pmd_size_show`).
struct HpagePmdSize;

impl PseudoFile for HpagePmdSize {
    fn show(&self) -> String {
        format!("{PMD_SIZE}\n")
    }
}

/// `devices/system/cpu/online`: the online CPUs as a range list, "0-3"
/// (Linux: `drivers/base/cpu.c`), which glibc reads to count them.
struct CpusOnline;

impl PseudoFile for CpusOnline {
    fn show(&self) -> String {
        cpu_list(crate::task::nr_cpus_online())
    }
}

/// `possible` and `present`: every CPU the DTB describes (faultline has no
/// hotplug, so the two are the same).
struct CpusPossible;

impl PseudoFile for CpusPossible {
    fn show(&self) -> String {
        cpu_list(crate::arch::smp::nr_possible())
    }
}

/// The `cpulist` format of the first `n` CPUs (Linux: `"%*pbl"`).
fn cpu_list(n: usize) -> String {
    match n {
        0 | 1 => String::from("0\n"),
        n => format!("0-{}\n", n - 1),
    }
}

/// `cpuN/online` (Linux: `drivers/base/cpu.c`): 1 once the CPU has come up.
struct CpuOnline(usize);

impl PseudoFile for CpuOnline {
    fn show(&self) -> String {
        format!("{}\n", u8::from(crate::task::cpu_online(self.0)))
    }
}

/// `fault_around_bytes` (Linux: `mm/memory.c` `fault_around_bytes_set`):
/// at most 2M, rounded down to a power of two, at least a page.
struct FaultAroundBytes;

impl PseudoFile for FaultAroundBytes {
    fn show(&self) -> String {
        format!("{}\n", FAULT_AROUND_BYTES.load(Ordering::Relaxed))
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        let bytes: usize = data.trim().parse().map_err(|_| Errno::EINVAL)?;
        if bytes > PMD_SIZE {
            return Err(Errno::EINVAL);
        }
        let rounded = bytes.checked_ilog2().map_or(0, |log| 1 << log);
        FAULT_AROUND_BYTES.store(rounded.max(PAGE_SIZE), Ordering::Relaxed);
        Ok(())
    }
}

/// `kernel/debug/split_huge_pages` (Linux: `split_huge_pages_write`, in
/// debugfs), written to split large folios: `PID,0xSTART,0xEND[,ORDER]`
/// splits those that process maps in that range to 2^ORDER pages (0 if
/// left out; `huge_memory::split::split_huge_pages_pid`), and `1` alone
/// those of every process. `/PATH,0xSTART,0xEND[,ORDER]` names a range of
/// a file's pages: faultline does not split page-cache folios, so the
/// write succeeds and changes nothing, as Linux's does when no folio there
/// will split. EINVAL for anything else or a path that does not resolve,
/// ESRCH for no such process.
struct SplitHugePages;

/// A `0x`-prefixed hex number, as `sscanf`'s `0x%lx` reads one.
fn parse_0x(field: &str) -> KResult<usize> {
    let hex = field.trim().strip_prefix("0x").ok_or(Errno::EINVAL)?;
    usize::from_str_radix(hex, 16).map_err(|_| Errno::EINVAL)
}

/// The optional `ORDER` field: 0 when absent; any larger order than a
/// folio's leaves it whole.
fn parse_order(field: Option<&str>) -> KResult<u8> {
    field.map_or(Ok(0), |f| {
        let order: u32 = f.trim().parse().map_err(|_| Errno::EINVAL)?;
        Ok(order.min(u32::from(u8::MAX)) as u8)
    })
}

impl PseudoFile for SplitHugePages {
    fn show(&self) -> String {
        String::new()
    }
    fn is_writable(&self) -> bool {
        true
    }
    fn store(&self, data: &str) -> KResult<()> {
        use crate::mm::huge_memory::split::{split_huge_pages_all, split_huge_pages_pid};
        use crate::task::process;
        let data = data.trim_end_matches(['\n', '\0']);
        let mut fields = data.split(',');
        let first = fields.next().unwrap_or_default();
        let range = |fields: &mut core::str::Split<'_, char>| -> KResult<(usize, usize, u8)> {
            let start = parse_0x(fields.next().ok_or(Errno::EINVAL)?)?;
            let end = parse_0x(fields.next().ok_or(Errno::EINVAL)?)?;
            Ok((start, end, parse_order(fields.next())?))
        };
        if first.starts_with('/') {
            range(&mut fields)?;
            super::vfs::lookup(&super::vfs::root(), first, true).map_err(|_| Errno::EINVAL)?;
            return Ok(());
        }
        let pid: u32 = first.trim().parse().map_err(|_| Errno::EINVAL)?;
        if pid == 1 && data.trim() == "1" {
            for p in process::all_processes() {
                if let Some(mm) = p.mm() {
                    split_huge_pages_all(&mm);
                }
            }
            return Ok(());
        }
        let (start, end, order) = range(&mut fields)?;
        let thread = process::find_thread(pid).ok_or(Errno::ESRCH)?;
        let user = thread.user.as_ref().ok_or(Errno::EINVAL)?;
        let mm = user.process.mm().ok_or(Errno::EINVAL)?;
        split_huge_pages_pid(&mm, start, end, order);
        Ok(())
    }
}

/// A read-only counter (Linux: the `hugepages-<N>kB/stats/` files).
struct Stat(&'static Counter);

impl PseudoFile for Stat {
    fn show(&self) -> String {
        format!("{}\n", self.0.get())
    }
}

/// Makes the directory `name` in `parent` (mode 0755) and returns it.
fn add_dir(parent: &Arc<Inode>, name: &str) -> Arc<Inode> {
    let dir = Inode::new_dir(0o755, None);
    parent
        .dir()
        .expect("a directory")
        .link(parent, name, dir.clone())
        .expect("fresh name");
    dir
}

/// Makes the file `name` in `dir` (mode 0644), read and written through
/// `knob` (Linux: a `kobj_attribute`'s show and store).
fn add_knob(dir: &Arc<Inode>, name: &str, knob: impl PseudoFile + 'static) {
    let inode = Inode::new(S_IFREG | 0o644, InodeKind::Pseudo(Box::new(knob)));
    dir.dir()
        .expect("a directory")
        .link(dir, name, inode)
        .expect("fresh name");
}

/// Builds the /sys tree.
pub fn build() -> Arc<Inode> {
    let sys = Inode::new_dir(0o555, None);
    let cpu = add_dir(&add_dir(&add_dir(&sys, "devices"), "system"), "cpu");
    add_knob(&cpu, "online", CpusOnline);
    add_knob(&cpu, "possible", CpusPossible);
    add_knob(&cpu, "present", CpusPossible);
    // Programs count CPUs by these directories (stress-ng, lscpu).
    for n in 0..crate::arch::smp::nr_possible() {
        add_knob(&add_dir(&cpu, &format!("cpu{n}")), "online", CpuOnline(n));
    }
    let kernel = add_dir(&sys, "kernel");
    let debug = add_dir(&kernel, "debug");
    add_knob(&debug, "fault_around_bytes", FaultAroundBytes);
    add_knob(&debug, "split_huge_pages", SplitHugePages);
    let mm = add_dir(&kernel, "mm");
    for switch in &SWITCHES {
        let (dir, file) = switch.sysfs.split_once('/').expect("DIR/FILE");
        add_knob(
            &add_dir(&mm, dir),
            file,
            SwitchFile(switch.flag, switch.available),
        );
    }
    let thpmaps = add_dir(&mm, "thpmaps");
    add_knob(
        &thpmaps,
        "exited",
        SwitchFile(&thpmaps::COUNT_EXITED, || true),
    );
    let thp = add_dir(&mm, "transparent_hugepage");
    add_knob(&thp, "shmem_enabled", ShmemEnabledKnob(None));
    add_knob(&thp, "enabled", AnonEnabledKnob(None));
    for order in MIN_LARGE_ORDER..=PMD_ORDER {
        let dir = add_dir(&thp, per_size_name(order));
        add_knob(&dir, "shmem_enabled", ShmemEnabledKnob(Some(order)));
        add_knob(&dir, "enabled", AnonEnabledKnob(Some(order)));
        let stats = add_dir(&dir, "stats");
        let o = order as usize;
        add_knob(
            &stats,
            "anon_fault_alloc",
            Stat(&vmstat::MTHP_ANON_FAULT_ALLOC[o]),
        );
        add_knob(
            &stats,
            "anon_fault_fallback",
            Stat(&vmstat::MTHP_ANON_FAULT_FALLBACK[o]),
        );
        add_knob(&stats, "shmem_alloc", Stat(&vmstat::MTHP_SHMEM_ALLOC[o]));
        add_knob(
            &stats,
            "shmem_fallback",
            Stat(&vmstat::MTHP_SHMEM_FALLBACK[o]),
        );
    }
    let exec = ThpFlags {
        get: |s| s.thp_exec_enabled,
        store: HugeSettings::store_thp_exec_enabled,
    };
    add_knob(&thp, "thp_exec_enabled", exec);
    let align = ThpFlags {
        get: |s| s.thp_mapping_align,
        store: HugeSettings::store_thp_mapping_align,
    };
    add_knob(&thp, "thp_mapping_align", align);
    add_knob(&thp, "hpage_pmd_size", HpagePmdSize);
    add_knob(&thp, "defrag", Defrag(AtomicUsize::new(3)));
    add_knob(&thp, "use_zero_page", Kept::new(0, 0));
    // Linux's defaults, for a 2M PMD of 512 pages.
    let khugepaged = add_dir(&thp, "khugepaged");
    for (name, value) in [
        ("defrag", 1),
        ("alloc_sleep_millisecs", 60_000),
        ("scan_sleep_millisecs", 10_000),
        ("max_ptes_none", 511),
        ("max_ptes_swap", 64),
        ("max_ptes_shared", 256),
        ("pages_to_scan", 4096),
    ] {
        add_knob(&khugepaged, name, Kept::new(value, u64::from(u32::MAX)));
    }
    sys
}
