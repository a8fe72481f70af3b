//! User page tables seen from user space: contiguous-bit blocks
//! ("contpte") over 64K folios and PMD blocks over 2M folios of a memfd,
//! read back through faultline's `/proc/self/ptdump` after faults,
//! `MADV_DONTNEED`, `mprotect` and with the `contpte` knob off; the same in
//! `/proc/self/smaps`; page-table pages counted and returned; and threads
//! on every CPU reading while the blocks change under them; seed 004's
//! knobs: 64K folios for executable files (`thp_exec_enabled`) and 64K
//! placement of mappings (`thp_mapping_align`). Skipped on Linux, which has
//! no ptdump file.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::CStr;
use core::ptr::read_volatile;
use core::sync::atomic::{AtomicUsize, Ordering};
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::{exit_group, fork, getrusage, wait_for, RUSAGE_SELF};
use ulib::signal::*;
use ulib::system::running_on_linux;
use ulib::test::{Scratch, TestError, TestResult};
use ulib::thread::spawn;
use ulib::{check, check_eq, skip, Errno};

ulib::tests!(
    tests: [
        ascending_faults_fold_at_the_last_entry,
        misaligned_file_offset_stays_plain,
        dontneed_of_part_of_a_block_unfolds_it,
        mprotect_of_whole_and_half_blocks,
        knob_off_maps_plain_ptes,
        pmd_block_maps_a_2m_folio,
        dontneed_of_part_of_a_pmd_clears_it_whole,
        mprotect_of_whole_and_half_pmds,
        misaligned_window_of_a_2m_folio_stays_plain,
        smaps_counts_blocks,
        page_tables_come_back_after_exit,
        munmap_frees_whole_page_tables_at_once,
        readers_on_all_cpus_while_blocks_change,
        one_fault_maps_a_64k_view,
        one_fault_maps_a_32k_view_without_the_bit,
        single_page_switch_takes_a_fault_per_page,
        fault_around_maps_cached_neighbours,
        tmpfs_mappings_go_where_pmds_fit,
        shmem_folio_maps_whole_past_eof,
        fault_around_stops_at_the_page_table,
        shared_write_fault_maps_one_page,
        refault_after_dontneed_maps_the_hole,
        thp_flag_knobs_are_hex_bits,
        exec_file_maps_with_contiguous_ptes,
        thpmaps_counts_folios_by_how_they_are_mapped,
        thpmaps_counts_exited_address_spaces_when_asked,
        file_mappings_align_to_64k_with_the_file_bit,
        anon_mappings_align_to_64k_with_the_anon_bit,
        anon_64k_folio_maps_with_one_fault,
        anon_64k_folio_maps_whole_whatever_finish_fault_does,
        faults_on_an_empty_memfd_map_64k_blocks,
    ],
    helpers: [exit_with],
);

const PAGE: usize = PAGE_SIZE;
const BLOCK: usize = 16 * PAGE;
const PMD: usize = 512 * PAGE;
const KNOB_64K: &CStr = c"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled";
const KNOB_2M: &CStr = c"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled";
const CONTPTE_KNOB: &CStr = c"/sys/kernel/mm/contpte/enabled";
const MULTI_KNOB: &CStr = c"/sys/kernel/mm/finish_fault/multi_page";
const AROUND_KNOB: &CStr = c"/sys/kernel/debug/fault_around_bytes";
const EXEC_KNOB: &CStr = c"/sys/kernel/mm/transparent_hugepage/thp_exec_enabled";
const ALIGN_KNOB: &CStr = c"/sys/kernel/mm/transparent_hugepage/thp_mapping_align";

fn write_knob(path: &CStr, value: &str) -> Result<(), Errno> {
    let fd = open(path, O_WRONLY | O_CLOEXEC, 0)?;
    let written = write(fd, value.as_bytes());
    close(fd)?;
    written.map(drop)
}

/// The bracketed choice of a `shmem_enabled` file.
fn knob_choice(path: &CStr) -> Result<String, Errno> {
    let text = String::from_utf8(read_file(path)?).map_err(|_| Errno::EIO)?;
    let start = text.find('[').ok_or(Errno::EIO)? + 1;
    let end = text.find(']').ok_or(Errno::EIO)?;
    Ok(String::from(&text[start..end]))
}

/// Allocates the first `len` bytes of `fd`'s page cache while the per-size
/// `knob` says `always`, then puts the knob back, so the data written next
/// lands in those folios whatever its writes' sizes.
fn allocate_with(fd: i32, len: usize, knob: &CStr) -> Result<(), Errno> {
    let old = knob_choice(knob)?;
    write_knob(knob, "always")?;
    let allocated = fallocate(fd, 0, 0, len);
    write_knob(knob, &old)?;
    allocated
}

/// A shared mapping of `len` bytes of a new memfd at file offset `offset`,
/// placed at a 64K-aligned address. The memfd was allocated while 64K
/// folios were allowed, so its page cache holds them; file page `i` holds
/// `pattern(i)` bytes. Nothing is faulted in yet.
fn map_memfd(len: usize, offset: usize) -> Result<usize, TestError> {
    map_memfd_folios(len, offset, KNOB_64K, BLOCK)
}

/// Like `map_memfd`, with folios of `folio` bytes (the size `knob` turns
/// on) and the mapping placed at a multiple of `folio`.
fn map_memfd_folios(
    len: usize,
    offset: usize,
    knob: &CStr,
    folio: usize,
) -> Result<usize, TestError> {
    let fd = memfd_create(c"pgtables", MFD_CLOEXEC)?;
    let size = (offset + len).next_multiple_of(folio) + folio;
    let data: Vec<u8> = (0..size).map(|i| pattern(i / PAGE)).collect();
    allocate_with(fd, size, knob)?;
    check_eq!(pwrite64(fd, &data, 0)?, size);
    let reserve = map_anon(len + folio)?;
    let addr = (reserve + folio - 1) & !(folio - 1);
    let prot = PROT_READ | PROT_WRITE;
    // SAFETY: replaces part of the reservation made just above.
    let mapped = unsafe { mmap(addr, len, prot, MAP_SHARED | MAP_FIXED, fd, offset) };
    close(fd)?;
    check_eq!(mapped?, addr);
    Ok(addr)
}

/// Faults in every page of `[addr, addr + len)` in ascending order.
fn touch_ascending(addr: usize, len: usize) -> TestResult {
    for p in 0..len / PAGE {
        let read = try_read(addr + p * PAGE);
        check!(read.is_ok(), "reading {:#x}: {read:?}", addr + p * PAGE);
    }
    Ok(())
}

/// One line of `/proc/self/ptdump`: its VA range and the text after it.
struct Run {
    start: usize,
    end: usize,
    text: String,
}

fn ptdump() -> Result<Vec<Run>, Errno> {
    let text = String::from_utf8(read_file(c"/proc/self/ptdump")?).map_err(|_| Errno::EIO)?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let (range, rest) = line.split_once(' ')?;
            let (s, e) = range.split_once('-')?;
            Some(Run {
                start: usize::from_str_radix(s, 16).ok()?,
                end: usize::from_str_radix(e, 16).ok()?,
                text: String::from(rest),
            })
        })
        .collect())
}

/// Bytes of `[addr, addr + len)` mapped by runs `pick` accepts.
fn bytes_where(addr: usize, len: usize, pick: impl Fn(&Run) -> bool) -> Result<usize, Errno> {
    Ok(ptdump()?
        .iter()
        .filter(|r| pick(r))
        .map(|r| r.end.min(addr + len).saturating_sub(r.start.max(addr)))
        .sum())
}

fn mapped(addr: usize, len: usize) -> Result<usize, Errno> {
    bytes_where(addr, len, |_| true)
}

fn contiguous(addr: usize, len: usize) -> Result<usize, Errno> {
    bytes_where(addr, len, |r| r.text.contains(" cont"))
}

fn ascending_faults_fold_at_the_last_entry() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    // One page per fault, so the block fills entry by entry.
    write_knob(MULTI_KNOB, "0")?;
    write_knob(AROUND_KNOB, "4096")?;
    let result = fold_at_entry_15();
    write_knob(AROUND_KNOB, "65536")?;
    write_knob(MULTI_KNOB, "1")?;
    result
}

fn fold_at_entry_15() -> TestResult {
    let addr = map_memfd(2 * BLOCK, 0)?;
    let folds = vmstat("contpte_fold")?;
    touch_ascending(addr, BLOCK - PAGE)?;
    check_eq!(mapped(addr, BLOCK)?, BLOCK - PAGE);
    // 15 of 16 entries: no block yet.
    check_eq!(contiguous(addr, BLOCK)?, 0);
    touch_ascending(addr + BLOCK - PAGE, PAGE + BLOCK)?;
    // entry 15 folds each block.
    check_eq!(contiguous(addr, 2 * BLOCK)?, 2 * BLOCK);
    check!(vmstat("contpte_fold")? >= folds + 2);
    for p in 0..2 * BLOCK / PAGE {
        check_eq!(try_read(addr + p * PAGE), Ok(pattern(p)));
    }
    Ok(())
}

fn misaligned_file_offset_stays_plain() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    // VA 64K-aligned, file offset 4K: each 64K of VA spans two folios.
    let addr = map_memfd(2 * BLOCK, PAGE)?;
    touch_ascending(addr, 2 * BLOCK)?;
    check_eq!(mapped(addr, 2 * BLOCK)?, 2 * BLOCK);
    check_eq!(contiguous(addr, 2 * BLOCK)?, 0);
    Ok(())
}

fn dontneed_of_part_of_a_block_unfolds_it() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_memfd(2 * BLOCK, 0)?;
    touch_ascending(addr, 2 * BLOCK)?;
    let unfolds = vmstat("contpte_unfold")?;
    // SAFETY: three pages of our own shared mapping; the file keeps them.
    unsafe { madvise(addr + 4 * PAGE, 3 * PAGE, MADV_DONTNEED) }?;
    check_eq!(mapped(addr, BLOCK)?, BLOCK - 3 * PAGE);
    // the cut block is unfolded.
    check_eq!(contiguous(addr, BLOCK)?, 0);
    // its neighbour is not.
    check_eq!(contiguous(addr + BLOCK, BLOCK)?, BLOCK);
    check!(vmstat("contpte_unfold")? > unfolds);
    for p in 0..2 * BLOCK / PAGE {
        check_eq!(try_read(addr + p * PAGE), Ok(pattern(p)));
    }
    Ok(())
}

fn mprotect_of_whole_and_half_blocks() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_memfd(2 * BLOCK, 0)?;
    touch_ascending(addr, 2 * BLOCK)?;
    let second = addr + BLOCK;
    // SAFETY: our own mapping.
    unsafe { mprotect(second, BLOCK, PROT_READ) }?;
    // a whole block stays folded.
    check_eq!(contiguous(second, BLOCK)?, BLOCK);
    check_eq!(
        bytes_where(second, BLOCK, |r| r.text.contains(" r-- "))?,
        BLOCK
    );
    check_eq!(
        try_write(second + 5 * PAGE, 1),
        Err(Fault {
            signo: SIGSEGV,
            code: SEGV_ACCERR,
            addr: second + 5 * PAGE
        })
    );
    // SAFETY: our own mapping.
    unsafe { mprotect(addr, BLOCK / 2, PROT_READ) }?;
    // half a block unfolds it.
    check_eq!(contiguous(addr, BLOCK)?, 0);
    check_eq!(mapped(addr, BLOCK)?, BLOCK);
    check_eq!(
        try_write(addr + PAGE, 1),
        Err(Fault {
            signo: SIGSEGV,
            code: SEGV_ACCERR,
            addr: addr + PAGE
        })
    );
    check_eq!(try_write(addr + BLOCK / 2 + PAGE, 7), Ok(()));
    check_eq!(try_read(addr + BLOCK / 2 + PAGE), Ok(7));
    check_eq!(try_read(addr + PAGE), Ok(pattern(1)));
    Ok(())
}

fn knob_off_maps_plain_ptes() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    write_knob(CONTPTE_KNOB, "0")?;
    check_eq!(read_file(CONTPTE_KNOB)?, b"0\n");
    let plain = map_memfd(BLOCK, 0).and_then(|a| {
        touch_ascending(a, BLOCK)?;
        Ok((mapped(a, BLOCK)?, contiguous(a, BLOCK)?))
    });
    write_knob(CONTPTE_KNOB, "1")?;
    check_eq!(plain?, (BLOCK, 0));
    check_eq!(write_knob(CONTPTE_KNOB, "2"), Err(Errno::EINVAL));
    Ok(())
}

fn map_2m(len: usize, offset: usize) -> Result<usize, TestError> {
    map_memfd_folios(len, offset, KNOB_2M, PMD)
}

fn pmd_mapped(addr: usize, len: usize) -> Result<usize, Errno> {
    bytes_where(addr, len, |r| r.text.starts_with("PMD "))
}

fn pmd_block_maps_a_2m_folio() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_2m(PMD, 0)?;
    let maps = vmstat("thp_file_mapped")?;
    check_eq!(try_read(addr + 5 * PAGE), Ok(pattern(5)));
    // One fault maps the whole folio with one block.
    check_eq!(pmd_mapped(addr, PMD)?, PMD);
    check!(vmstat("thp_file_mapped")? > maps);
    for p in (0..PMD / PAGE).step_by(37) {
        check_eq!(try_read(addr + p * PAGE), Ok(pattern(p)));
    }
    check_eq!(try_write(addr + PMD - 1, 9), Ok(()));
    check_eq!(try_read(addr + PMD - 1), Ok(9));
    Ok(())
}

fn dontneed_of_part_of_a_pmd_clears_it_whole() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_2m(PMD, 0)?;
    check_eq!(try_write(addr + 3 * PAGE, 42), Ok(()));
    let splits = vmstat("thp_split_pmd")?;
    // SAFETY: one page of our own shared mapping; the file keeps it.
    unsafe { madvise(addr + 100 * PAGE, PAGE, MADV_DONTNEED) }?;
    check_eq!(mapped(addr, PMD)?, 0);
    check!(vmstat("thp_split_pmd")? > splits);
    // Nothing is lost: the next fault maps the block again.
    check_eq!(try_read(addr + 3 * PAGE), Ok(42));
    check_eq!(try_read(addr + 100 * PAGE), Ok(pattern(100)));
    check_eq!(pmd_mapped(addr, PMD)?, PMD);
    Ok(())
}

fn mprotect_of_whole_and_half_pmds() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_2m(2 * PMD, 0)?;
    touch_ascending(addr, 2 * PMD)?;
    check_eq!(pmd_mapped(addr, 2 * PMD)?, 2 * PMD);
    let second = addr + PMD;
    // SAFETY: our own mapping.
    unsafe { mprotect(second, PMD, PROT_READ) }?;
    check_eq!(
        bytes_where(second, PMD, |r| r.text.starts_with("PMD ")
            && r.text.contains(" r-- "))?,
        PMD
    );
    let segv = |addr| Fault {
        signo: SIGSEGV,
        code: SEGV_ACCERR,
        addr,
    };
    check_eq!(try_write(second + 7, 1), Err(segv(second + 7)));
    // SAFETY: our own mapping.
    unsafe { mprotect(addr, PMD / 2, PROT_READ) }?;
    check_eq!(mapped(addr, PMD)?, 0);
    touch_ascending(addr, PMD)?;
    // The halves refault as pages, folded into 64K blocks: the 2M folio
    // is 2M-aligned in memory.
    check_eq!(pmd_mapped(addr, PMD)?, 0);
    check_eq!(contiguous(addr, PMD)?, PMD);
    check_eq!(try_write(addr + PAGE, 1), Err(segv(addr + PAGE)));
    check_eq!(try_write(addr + PMD / 2, 5), Ok(()));
    check_eq!(try_read(addr + PMD / 2), Ok(5));
    check_eq!(try_read(addr + PAGE), Ok(pattern(1)));
    Ok(())
}

fn misaligned_window_of_a_2m_folio_stays_plain() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    // 64K of VA, 64K-aligned, over file pages 1..17 of one 2M folio: one
    // folio and contiguous frames, but a misaligned PA.
    let addr = map_2m(BLOCK, PAGE)?;
    touch_ascending(addr, BLOCK)?;
    check_eq!(mapped(addr, BLOCK)?, BLOCK);
    check_eq!(contiguous(addr, BLOCK)?, 0);
    check_eq!(try_read(addr), Ok(pattern(1)));
    Ok(())
}

/// The `name:` line of the smaps block of the VMA starting at `addr`, in kB.
fn smaps_kb(addr: usize, name: &str) -> Result<usize, TestError> {
    let text = String::from_utf8(read_file(c"/proc/self/smaps")?).map_err(|_| Errno::EIO)?;
    let head = alloc::format!("{addr:08x}-");
    let block = text.split_once(head.as_str()).map(|(_, rest)| rest);
    // The block: the header's rest, then "Name:   N kB" lines.
    let value = block.and_then(|b| {
        b.lines()
            .skip(1)
            .take_while(|l| l.ends_with(" kB"))
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().strip_suffix(" kB")?.parse().ok())
    });
    check!(value.is_some(), "no {name} for the VMA at {addr:#x}");
    Ok(value.unwrap_or(0))
}

fn smaps_counts_blocks() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let pmd = map_2m(PMD, 0)?;
    check_eq!(try_read(pmd), Ok(pattern(0)));
    check_eq!(smaps_kb(pmd, "Size")?, 2048);
    check_eq!(smaps_kb(pmd, "Rss")?, 2048);
    check_eq!(smaps_kb(pmd, "ShmemPmdMapped")?, 2048);
    check_eq!(smaps_kb(pmd, "ContPTE")?, 0);
    let cont = map_memfd(2 * BLOCK, 0)?;
    // One fault maps the first 64K folio, folded, and nothing of the next.
    touch_ascending(cont, PAGE)?;
    check_eq!(smaps_kb(cont, "Rss")?, 64);
    check_eq!(smaps_kb(cont, "ContPTE")?, 64);
    check_eq!(smaps_kb(cont, "ShmemPmdMapped")?, 0);
    check_eq!(smaps_kb(cont, "Anonymous")?, 0);
    // Holes on both sides, so it joins no neighbouring anonymous VMA.
    let anon = map_anon(6 * PAGE)? + PAGE;
    // SAFETY: the guard pages of our own mapping.
    unsafe {
        munmap(anon - PAGE, PAGE)?;
        munmap(anon + 4 * PAGE, PAGE)?;
    }
    for p in 0..3 {
        try_write(anon + p * PAGE, 1).unwrap();
    }
    check_eq!(smaps_kb(anon, "Rss")?, 12);
    check_eq!(smaps_kb(anon, "Anonymous")?, 12);
    check_eq!(smaps_kb(anon, "Private_Dirty")?, 12);
    check_eq!(smaps_kb(anon, "Shared_Dirty")?, 0);
    Ok(())
}

fn page_tables_come_back_after_exit() -> TestResult {
    if running_on_linux() {
        skip!("nr_page_table_pages moves with the whole system there");
    }
    let child = |tables: u64| {
        // One page in each of 64 2M regions: 64 new PTE tables at least.
        let Ok(addr) = map_anon_noreserve(128 << 20) else {
            return 2;
        };
        for region in 0..64 {
            let _ = try_write(addr + region * PMD, 1);
        }
        let Ok(now) = vmstat("nr_page_table_pages") else {
            return 3;
        };
        if now < tables + 64 {
            return 4;
        }
        exit_group(0)
    };
    let tables = vmstat("nr_page_table_pages")?;
    children_give_back_memory(|| child(tables))
}

/// munmap of 128M, one page touched in each 2M: the 64 pages and their 64
/// PTE tables come back when munmap returns (faultline unhooks whole
/// tables and frees them after dropping mmap_lock), and the range faults
/// afresh: SIGSEGV, no stale translation.
fn munmap_frees_whole_page_tables_at_once() -> TestResult {
    if running_on_linux() {
        skip!("nr_page_table_pages moves with the whole system there");
    }
    // 2M-aligned, so every touched page has a PTE table of its own.
    let addr = map_anon_noreserve((128 << 20) + PMD)?.next_multiple_of(PMD);
    let tables = vmstat("nr_page_table_pages")?;
    for region in 0..64 {
        check!(try_write(addr + region * PMD, 7).is_ok(), "region {region}");
    }
    let (touched, free) = (vmstat("nr_page_table_pages")?, vmstat("nr_free_pages")?);
    check!(touched >= tables + 64, "{tables} -> {touched} page tables");
    // SAFETY: our own mapping.
    unsafe { munmap(addr, 128 << 20) }?;
    let (after, now_free) = (vmstat("nr_page_table_pages")?, vmstat("nr_free_pages")?);
    check_eq!(touched - after, 64);
    // The kernel heap takes and gives back pages as it goes (reading
    // /proc/vmstat alone may take one): a few either way.
    check!(
        now_free + 4 >= free + 128,
        "only {} frames back",
        now_free as i64 - free as i64
    );
    check_eq!(
        try_read(addr + 5 * PMD).map_err(|f| f.code),
        Err(SEGV_MAPERR)
    );
    Ok(())
}

fn readers_on_all_cpus_while_blocks_change() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    const READERS: usize = 4;
    const LEN: usize = 4 * BLOCK;
    let addr = map_memfd(LEN, 0)?;
    touch_ascending(addr, LEN)?;
    // 0: read and check; 1: stop and report; 2: expect zeros (after munmap).
    let phase = Arc::new(AtomicUsize::new(0));
    let parked = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (phase, parked) = (phase.clone(), parked.clone());
            spawn(move || {
                let (mut reads, mut wrong) = (0usize, 0usize);
                let page = |p: usize| {
                    // SAFETY: the mapping stays valid while phase is 0, and
                    // is an anonymous one of the same size in phase 2.
                    unsafe { read_volatile((addr + p * PAGE + r) as *const u8) }
                };
                while phase.load(Ordering::Acquire) == 0 {
                    for p in 0..LEN / PAGE {
                        wrong += (page(p) != pattern(p)) as usize;
                        reads += 1;
                    }
                }
                parked.fetch_add(1, Ordering::AcqRel);
                while phase.load(Ordering::Acquire) != 2 {
                    core::hint::spin_loop();
                }
                // A stale TLB entry would still show the memfd's data.
                let stale = (0..LEN / PAGE).filter(|&p| page(p) != 0).count();
                (reads, wrong, stale)
            })
        })
        .collect::<Result<_, _>>()?;
    let (folds, unfolds) = (vmstat("contpte_fold")?, vmstat("contpte_unfold")?);
    for round in 0..100 {
        let cut = addr + (round % 4) * BLOCK + (round % 15 + 1) * PAGE;
        // SAFETY: our own shared mapping: the file keeps the data.
        unsafe { madvise(cut, PAGE, MADV_DONTNEED) }?;
        touch_ascending(addr, LEN)?;
        // SAFETY: as above.
        unsafe { madvise(addr, LEN, MADV_DONTNEED) }?;
        touch_ascending(addr, LEN)?;
        // SAFETY: our own mapping; the readers only read.
        unsafe { mprotect(addr, LEN, PROT_READ) }?;
        // SAFETY: as above.
        unsafe { mprotect(addr, LEN, PROT_READ | PROT_WRITE) }?;
    }
    check!(vmstat("contpte_fold")? > folds && vmstat("contpte_unfold")? > unfolds);
    phase.store(1, Ordering::Release);
    while parked.load(Ordering::Acquire) != READERS {
        core::hint::spin_loop();
    }
    // SAFETY: every reader is parked; the new mapping takes the old place.
    unsafe {
        munmap(addr, LEN)?;
        let again = mmap(
            addr,
            LEN,
            PROT_READ,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
            -1,
            0,
        )?;
        check_eq!(again, addr);
    }
    phase.store(2, Ordering::Release);
    for reader in readers {
        let (reads, wrong, stale) = reader.join().unwrap_or((0, 1, 1));
        check!(reads > 0);
        check_eq!((wrong, stale), (0, 0));
    }
    Ok(())
}

/// Seed 000's measurement: 8 stores 4K apart into a fresh `len`-byte
/// shared view of a memfd of 64K folios. Returns (minor faults taken,
/// bytes mapped, bytes mapped with the contiguous bit).
fn eight_stores(len: usize) -> Result<(i64, usize, usize), TestError> {
    let addr = map_memfd(len, 0)?;
    let before = getrusage(RUSAGE_SELF)?.ru_minflt;
    for p in 0..8 {
        // SAFETY: inside the shared view just mapped.
        unsafe { core::ptr::write_volatile((addr + p * PAGE) as *mut u8, 1) };
    }
    let faults = getrusage(RUSAGE_SELF)?.ru_minflt - before;
    Ok((faults, mapped(addr, len)?, contiguous(addr, len)?))
}

fn one_fault_maps_a_64k_view() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    check_eq!(eight_stores(BLOCK)?, (1, BLOCK, BLOCK));
    Ok(())
}

fn one_fault_maps_a_32k_view_without_the_bit() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    check_eq!(eight_stores(BLOCK / 2)?, (1, BLOCK / 2, 0));
    Ok(())
}

fn single_page_switch_takes_a_fault_per_page() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    write_knob(MULTI_KNOB, "0")?;
    let single = eight_stores(BLOCK);
    write_knob(MULTI_KNOB, "1")?;
    check_eq!(single?, (8, 8 * PAGE, 0));
    Ok(())
}

/// Page `p` of `addr` read, with the minor faults it took and the bytes of
/// `[addr, addr + len)` mapped afterwards.
fn read_fault(addr: usize, len: usize, p: usize) -> Result<(i64, usize), TestError> {
    let before = getrusage(RUSAGE_SELF)?.ru_minflt;
    check_eq!(try_read(addr + p * PAGE), Ok(pattern(p)));
    let faults = getrusage(RUSAGE_SELF)?.ru_minflt - before;
    Ok((faults, mapped(addr, len)?))
}

fn fault_around_maps_cached_neighbours() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    // Written with the default knobs: a page cache of 4K folios.
    let len = 2 * BLOCK;
    let fd = memfd_create(c"around", MFD_CLOEXEC)?;
    let data: Vec<u8> = (0..len).map(|i| pattern(i / PAGE)).collect();
    check_eq!(pwrite64(fd, &data, 0)?, len);
    let reserve = map_anon(len + BLOCK)?;
    let addr = (reserve + BLOCK - 1) & !(BLOCK - 1);
    // SAFETY: replaces part of the reservation made just above.
    let mapped_at = unsafe { mmap(addr, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) };
    close(fd)?;
    check_eq!(mapped_at?, addr);
    check_eq!(read_file(AROUND_KNOB)?, b"65536\n");
    // One fault maps the aligned 64K around it, then the next 64K.
    check_eq!(read_fault(addr, len, 5)?, (1, BLOCK));
    check_eq!(read_fault(addr, len, 16 + 9)?, (1, len));
    // 4096 turns fault-around off; odd sizes round down; over 2M is EINVAL.
    // SAFETY: our own private read-only mapping of a file that keeps the data.
    unsafe { madvise(addr, len, MADV_DONTNEED) }?;
    write_knob(AROUND_KNOB, "4096")?;
    let single = read_fault(addr, len, 5);
    check_eq!(write_knob(AROUND_KNOB, "4194304"), Err(Errno::EINVAL));
    write_knob(AROUND_KNOB, "100000")?;
    check_eq!(read_file(AROUND_KNOB)?, b"65536\n");
    check_eq!(single?, (1, PAGE));
    Ok(())
}

fn tmpfs_mappings_go_where_pmds_fit() -> TestResult {
    if running_on_linux() {
        skip!("Linux aligns only when the huge policy allows 2M folios");
    }
    let fd = memfd_create(c"aligned", MFD_CLOEXEC)?;
    allocate_with(fd, 2 * PMD, KNOB_2M)?;
    // SAFETY: new mappings the kernel places.
    let (whole, offset) = unsafe {
        (
            mmap(0, 2 * PMD, PROT_READ, MAP_SHARED, fd, 0)?,
            mmap(0, PMD, PROT_READ, MAP_SHARED, fd, PMD)?,
        )
    };
    close(fd)?;
    check_eq!(whole % PMD, 0);
    check_eq!(offset % PMD, 0);
    // With no help from the caller, one fault maps a 2M block.
    check_eq!(try_read(whole + PMD + 5), Ok(0));
    check_eq!(pmd_mapped(whole, 2 * PMD)?, PMD);
    Ok(())
}

/// The reference's case 9: a 1-byte file whose page cache is one 2M folio,
/// mapped 2M: the first read maps the whole folio with a PMD block, and a
/// read 1M in takes no fault and sees zeros, not SIGBUS (shmem maps a folio
/// whole even past i_size).
fn shmem_folio_maps_whole_past_eof() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let fd = memfd_create(c"one-byte", MFD_CLOEXEC)?;
    allocate_with(fd, PMD, KNOB_2M)?;
    check_eq!(pwrite64(fd, &[7], 0)?, 1);
    ftruncate(fd, 1)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, PMD, PROT_READ, MAP_SHARED, fd, 0) }?;
    close(fd)?;
    check_eq!(try_read(addr), Ok(7));
    check_eq!(pmd_mapped(addr, PMD)?, PMD);
    let before = getrusage(RUSAGE_SELF)?.ru_minflt;
    check_eq!(try_read(addr + PMD / 2), Ok(0));
    check_eq!(getrusage(RUSAGE_SELF)?.ru_minflt, before);
    Ok(())
}

/// With hugepages-64kB/shmem_enabled=always, a store into each 64K block
/// of a 64K-aligned shared mapping of an empty memfd faults in a 64K folio,
/// mapped whole as one contiguous block. (faultline lets the per-size
/// knobs size a memfd's folios; Linux 6.12 applies them to shared
/// anonymous memory only, which user/c/tests/shmem-folios.c checks on
/// both kernels.)
fn faults_on_an_empty_memfd_map_64k_blocks() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let fd = memfd_create(c"faults", MFD_CLOEXEC)?;
    ftruncate(fd, 4 * BLOCK)?;
    let reserve = map_anon(5 * BLOCK)?;
    let addr = (reserve + BLOCK - 1) & !(BLOCK - 1);
    // SAFETY: replaces part of the reservation made just above.
    let mapped = unsafe {
        mmap(
            addr,
            4 * BLOCK,
            PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_FIXED,
            fd,
            0,
        )
    };
    close(fd)?;
    check_eq!(mapped?, addr);
    let old = knob_choice(KNOB_64K)?;
    write_knob(KNOB_64K, "always")?;
    let stores: Vec<_> = (0..4)
        .map(|b| try_write(addr + b * BLOCK + 3 * PAGE, b as u8))
        .collect();
    write_knob(KNOB_64K, &old)?;
    check!(stores.iter().all(Result::is_ok), "stores: {stores:?}");
    check_eq!(contiguous(addr, 4 * BLOCK)?, 4 * BLOCK);
    check_eq!(smaps_kb(addr, "ContPTE")?, 256);
    check_eq!(try_read(addr + 2 * BLOCK + 3 * PAGE), Ok(2));
    Ok(())
}

/// A memfd of `len` bytes written with the default knobs (4K folios),
/// mapped shared with `prot` where the kernel places it.
fn small_folio_view(len: usize, prot: u32) -> Result<usize, TestError> {
    let fd = memfd_create(c"small", MFD_CLOEXEC)?;
    let data: Vec<u8> = (0..len).map(|i| pattern(i / PAGE)).collect();
    check_eq!(pwrite64(fd, &data, 0)?, len);
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, len, prot, MAP_SHARED, fd, 0) };
    close(fd)?;
    Ok(addr?)
}

/// The reference's case 3: a read fault at the last entry of a page table
/// maps entries 496-511 and nothing in the next table.
fn fault_around_stops_at_the_page_table() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = small_folio_view(2 * PMD, PROT_READ)?;
    check_eq!(addr % PMD, 0);
    check_eq!(read_fault(addr, 2 * PMD, 511)?, (1, 16 * PAGE));
    check_eq!(mapped(addr + 496 * PAGE, 16 * PAGE)?, 16 * PAGE);
    check_eq!(mapped(addr + PMD, PMD)?, 0);
    Ok(())
}

/// The reference's case 6: a write fault on a shared mapping of 4K folios
/// maps exactly one page (no fault-around for writes).
fn shared_write_fault_maps_one_page() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = small_folio_view(2 * BLOCK, PROT_READ | PROT_WRITE)?;
    check_eq!(try_write(addr + 5 * PAGE, 1), Ok(()));
    check_eq!(mapped(addr, 2 * BLOCK)?, PAGE);
    Ok(())
}

/// The reference's case 12: after MADV_DONTNEED of pages 0-1 of a mapped
/// 64K folio, one fault on page 0 maps both again.
fn refault_after_dontneed_maps_the_hole() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = map_memfd(BLOCK, 0)?;
    touch_ascending(addr, PAGE)?;
    check_eq!(mapped(addr, BLOCK)?, BLOCK);
    // SAFETY: our own shared mapping; the memfd keeps the data.
    unsafe { madvise(addr, 2 * PAGE, MADV_DONTNEED) }?;
    check_eq!(mapped(addr, BLOCK)?, BLOCK - 2 * PAGE);
    check_eq!(read_fault(addr, BLOCK, 0)?, (1, BLOCK));
    check_eq!(try_read(addr + PAGE), Ok(pattern(1)));
    Ok(())
}

/// The per-size knob of 64K anonymous folios (Linux's mTHP).
const ANON_64K_KNOB: &CStr = c"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled";

/// The first write into the 64K block at `base` of fresh anonymous memory
/// (its sixth page): the faults it took, and how much of the block is then
/// mapped, and mapped with the contiguous bit.
fn first_anon_write(base: usize) -> Result<(i64, usize, usize), TestError> {
    let before = getrusage(RUSAGE_SELF)?.ru_minflt;
    // SAFETY: the caller's own anonymous mapping covers the block.
    unsafe { core::ptr::write_volatile((base + 5 * PAGE) as *mut u8, 7) };
    let faults = getrusage(RUSAGE_SELF)?.ru_minflt - before;
    Ok((faults, mapped(base, BLOCK)?, contiguous(base, BLOCK)?))
}

/// Large anonymous folios (Linux's mTHP): with `hugepages-64kB/enabled` at
/// `always`, one write into a 64K-aligned stretch of fresh anonymous memory
/// takes one fault and maps a zeroed 64K folio as one contiguous block;
/// with `never`, one page. The knob is put back.
fn anon_64k_folio_maps_with_one_fault() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let old = knob_choice(ANON_64K_KNOB)?;
    let addr = map_anon(4 * BLOCK)?.next_multiple_of(BLOCK);
    write_knob(ANON_64K_KNOB, "always")?;
    let large = first_anon_write(addr);
    let zeroed = (0..BLOCK / PAGE).all(|p| p == 5 || try_read(addr + p * PAGE) == Ok(0));
    write_knob(ANON_64K_KNOB, "never")?;
    let small = first_anon_write(addr + BLOCK);
    write_knob(ANON_64K_KNOB, &old)?;
    check_eq!(large?, (1, BLOCK, BLOCK));
    check!(zeroed, "a new anonymous folio is not all zeros");
    check_eq!(small?, (1, PAGE, 0));
    // SAFETY: our own mapping.
    unsafe { munmap(addr, 3 * BLOCK) }?;
    Ok(())
}

/// A new anonymous folio is mapped whole (Linux's `do_anonymous_page`
/// maps every page of the folio it allocates): seed 000's switch is about
/// how much of a *found* file folio `finish_fault` maps, and with it off
/// a 64K anonymous folio must not be left with 15 pages allocated that
/// nothing maps.
fn anon_64k_folio_maps_whole_whatever_finish_fault_does() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump and the finish_fault switch are faultline's");
    }
    let old = knob_choice(ANON_64K_KNOB)?;
    let addr = map_anon(2 * BLOCK)?.next_multiple_of(BLOCK);
    write_knob(ANON_64K_KNOB, "always")?;
    write_knob(MULTI_KNOB, "0")?;
    let seen = first_anon_write(addr);
    write_knob(MULTI_KNOB, "1")?;
    write_knob(ANON_64K_KNOB, &old)?;
    check_eq!(seen?, (1, BLOCK, BLOCK));
    // SAFETY: our own mapping.
    unsafe { munmap(addr, BLOCK) }?;
    Ok(())
}

/// `exit_with N`: exits with status N, to show a copied binary runs.
fn exit_with(args: &[&str]) -> i32 {
    args.first().and_then(|a| a.parse().ok()).unwrap_or(99)
}

/// Seed 004's knobs: "0x%lx\n", hex in (with or without 0x), EINVAL for
/// unknown bits or junk. thp_exec_enabled keeps only bit 1 (mTHP): bit 0
/// (PMD THP through khugepaged) is accepted and dropped, as by a Linux
/// without CONFIG_READ_ONLY_THP_FOR_FS.
fn thp_flag_knobs_are_hex_bits() -> TestResult {
    if running_on_linux() {
        skip!("seed 004's knobs are openEuler's, not mainline Linux's");
    }
    check_eq!(read_file(EXEC_KNOB)?, b"0x0\n");
    check_eq!(read_file(ALIGN_KNOB)?, b"0x0\n");
    let checks = (|| -> TestResult {
        write_knob(ALIGN_KNOB, "0x3\n")?;
        check_eq!(read_file(ALIGN_KNOB)?, b"0x3\n");
        write_knob(ALIGN_KNOB, "2")?;
        check_eq!(read_file(ALIGN_KNOB)?, b"0x2\n");
        write_knob(EXEC_KNOB, "0x2")?;
        check_eq!(read_file(EXEC_KNOB)?, b"0x2\n");
        write_knob(EXEC_KNOB, "0x3")?;
        check_eq!(read_file(EXEC_KNOB)?, b"0x2\n");
        write_knob(EXEC_KNOB, "1")?;
        check_eq!(read_file(EXEC_KNOB)?, b"0x0\n");
        for knob in [EXEC_KNOB, ALIGN_KNOB] {
            for bad in ["0x4", "0x", "on", "\n", "-1"] {
                check!(write_knob(knob, bad) == Err(Errno::EINVAL), "{bad:?} taken");
            }
        }
        check_eq!(read_file(ALIGN_KNOB)?, b"0x2\n");
        Ok(())
    })();
    write_knob(EXEC_KNOB, "0x0")?;
    write_knob(ALIGN_KNOB, "0x0")?;
    checks
}

/// A copy of this program written 4K at a time into a new tmpfs file
/// (mode 0644, as Debian's libraries), mapped with `prot` at a 64K
/// boundary and read through while thp_exec_enabled is `exec_knob`:
/// returns the bytes mapped with the contiguous bit and the whole length.
fn exec_copy_cont(
    scratch: &Scratch,
    name: &str,
    prot: u32,
    exec_knob: &str,
) -> Result<(usize, usize), TestError> {
    let image = read_file(&own_path())?;
    let path = scratch.path(name);
    let fd = open(&path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)?;
    for chunk in image.chunks(PAGE) {
        write(fd, chunk)?;
    }
    close(fd)?;
    let len = image.len() / BLOCK * BLOCK;
    check!(len > 0, "the test binary is under 64K");
    let fd = open(&path, O_RDONLY | O_CLOEXEC, 0)?;
    let reserve = map_anon(len + BLOCK)?;
    let addr = (reserve + BLOCK - 1) & !(BLOCK - 1);
    // SAFETY: replaces part of the reservation made just above.
    let mapped = unsafe { mmap(addr, len, prot, MAP_PRIVATE | MAP_FIXED, fd, 0) };
    close(fd)?;
    check_eq!(mapped?, addr);
    write_knob(EXEC_KNOB, exec_knob)?;
    let touched = touch_ascending(addr, len);
    write_knob(EXEC_KNOB, "0x0")?;
    touched?;
    let cont = contiguous(addr, len)?;
    // SAFETY: our own reservation and the view inside it.
    unsafe { munmap(reserve, len + BLOCK) }?;
    Ok((cont, len))
}

/// Seed 004's exec folio order: a file written 4K at a time is cached in
/// 4K folios; faulted through a PROT_EXEC view while thp_exec_enabled has
/// bit 1, its text moves into 64K folios, which map with contiguous PTEs.
/// Without the bit, or through a view that is not executable, nothing is
/// contiguous. The copy, now in 64K folios, runs.
fn exec_file_maps_with_contiguous_ptes() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let scratch = Scratch::new()?;
    let exec = PROT_READ | PROT_EXEC;
    let (cont, len) = exec_copy_cont(&scratch, "exec-64k", exec, "0x2")?;
    check_eq!(cont, len);
    check_eq!(exec_copy_cont(&scratch, "exec-off", exec, "0x0")?.0, 0);
    check_eq!(exec_copy_cont(&scratch, "data-64k", PROT_READ, "0x2")?.0, 0);
    let path = scratch.path("exec-64k");
    chmod(&path, 0o755)?;
    let argv = [path.as_c_str(), c"--helper", c"exit_with", c"42"];
    let (status, _) = run_capture(&path, &argv, &[])?;
    check_eq!(status.exit_code(), Some(42));
    Ok(())
}

/// /proc/self/thpmaps as `label -> kB`.
fn thpmaps() -> Result<alloc::collections::BTreeMap<String, usize>, TestError> {
    thpmaps_of(c"/proc/self/thpmaps")
}

/// A thpmaps file (/proc/self/thpmaps, /proc/thpmaps) as `label -> kB`.
fn thpmaps_of(path: &CStr) -> Result<alloc::collections::BTreeMap<String, usize>, TestError> {
    let text = String::from_utf8(read_file(path)?).map_err(|_| Errno::EIO)?;
    let mut out = alloc::collections::BTreeMap::new();
    for line in text.lines() {
        let (label, rest) = line.split_once(':').ok_or(Errno::EIO)?;
        let kb = rest.split_whitespace().next().ok_or(Errno::EIO)?;
        out.insert(String::from(label), kb.parse().map_err(|_| Errno::EIO)?);
    }
    Ok(out)
}

/// /proc/self/thpmaps sorts mapped memory as Linux's tools/mm/thpmaps
/// does: 128K of 64K folios mapped at a 64K boundary is aligned (and
/// contiguous); the same file mapped from offset 4K holds one 64K folio
/// whole at an address 4K off a boundary (unaligned, not contiguous) and
/// 60K and 4K of its neighbours (partial).
fn thpmaps_counts_folios_by_how_they_are_mapped() -> TestResult {
    if running_on_linux() {
        skip!("/proc/PID/thpmaps is faultline's (thpmaps works it out from pagemap)");
    }
    let before = thpmaps()?;
    let aligned = map_memfd(2 * BLOCK, 0)?;
    touch_ascending(aligned, 2 * BLOCK)?;
    let shifted = map_memfd(2 * BLOCK, PAGE)?;
    touch_ascending(shifted, 2 * BLOCK)?;
    let after = thpmaps()?;
    let grew = |label: &str| {
        after.get(label).copied().unwrap_or(0) - before.get(label).copied().unwrap_or(0)
    };
    check_eq!(grew("file-rss"), 4 * BLOCK / 1024);
    check_eq!(grew("file-thp-pte-aligned-64kB"), 2 * BLOCK / 1024);
    check_eq!(grew("file-thp-pte-unaligned-64kB"), BLOCK / 1024);
    check_eq!(grew("file-thp-pte-partial"), BLOCK / 1024);
    check_eq!(grew("file-cont-pte-aligned-64kB"), 2 * BLOCK / 1024);
    check_eq!(grew("text-rss"), 0);
    // SAFETY: the two views made above.
    unsafe {
        munmap(aligned, 2 * BLOCK)?;
        munmap(shifted, 2 * BLOCK)?;
    }
    Ok(())
}

/// /proc/thpmaps counts an address space as it goes only while
/// /sys/kernel/mm/thpmaps/exited is 1: a child that maps and touches a
/// 64K-aligned 128K of memfd and exits adds its 128K of file memory with
/// the switch on, and nothing with it off (the default).
fn thpmaps_counts_exited_address_spaces_when_asked() -> TestResult {
    if running_on_linux() {
        skip!("/proc/thpmaps is faultline's");
    }
    const EXITED: &CStr = c"/sys/kernel/mm/thpmaps/exited";
    check_eq!(read_file(EXITED)?, b"0\n");
    let child_maps = || -> Result<usize, TestError> {
        let before = thpmaps_of(c"/proc/thpmaps")?;
        let pid = fork()?;
        if pid == 0 {
            let ok = map_memfd(2 * BLOCK, 0).and_then(|view| touch_ascending(view, 2 * BLOCK));
            exit_group(if ok.is_ok() { 0 } else { 1 });
        }
        check_eq!(wait_for(pid)?.exit_code(), Some(0));
        let after = thpmaps_of(c"/proc/thpmaps")?;
        let rss = |m: &alloc::collections::BTreeMap<String, usize>| m.get("file-rss").copied();
        Ok(rss(&after).unwrap_or(0) - rss(&before).unwrap_or(0))
    };
    check_eq!(child_maps()?, 0);
    write_file(EXITED, b"1")?;
    let counted = child_maps();
    write_file(EXITED, b"0")?;
    // The view, and the child's binary (file memory too).
    check!(
        counted? >= 2 * BLOCK / 1024,
        "the exited child's 128K of file memory not counted"
    );
    Ok(())
}

/// Where the kernel places eight hint-less 68K mappings made by `map`
/// while thp_mapping_align is `bits`: how many of them are 64K-aligned.
fn aligned_of_eight(
    bits: &str,
    map: impl Fn(usize) -> Result<usize, Errno>,
) -> Result<usize, TestError> {
    let len = BLOCK + PAGE;
    write_knob(ALIGN_KNOB, bits)?;
    let addrs: Vec<Result<usize, Errno>> = (0..8).map(|_| map(len)).collect();
    write_knob(ALIGN_KNOB, "0x0")?;
    let mut aligned = 0;
    for addr in addrs {
        let addr = addr?;
        aligned += usize::from(addr % BLOCK == 0);
        // SAFETY: a mapping made just above.
        unsafe { munmap(addr, len) }?;
    }
    Ok(aligned)
}

/// thp_mapping_align bit 0: a memfd mapping of 64K or more at a 64K-aligned
/// offset goes at a 64K boundary; without it (the default) consecutive
/// mappings pack at 4K, and 68K ones cannot all be aligned.
fn file_mappings_align_to_64k_with_the_file_bit() -> TestResult {
    if running_on_linux() {
        skip!("seed 004's knobs are openEuler's, not mainline Linux's");
    }
    let fd = memfd_create(c"align", MFD_CLOEXEC)?;
    ftruncate(fd, PMD)?;
    let map = |len| {
        // SAFETY: a new mapping the kernel places.
        unsafe { mmap(0, len, PROT_READ, MAP_SHARED, fd, 0) }
    };
    let on = aligned_of_eight("0x1", map);
    let anon_bit_only = aligned_of_eight("0x2", map);
    let off = aligned_of_eight("0x0", map);
    close(fd)?;
    check_eq!(on?, 8);
    check!(anon_bit_only? < 8);
    check!(off? < 8);
    Ok(())
}

/// thp_mapping_align bit 1: private anonymous mappings of 64K or more go at
/// a 64K boundary; the file bit alone leaves them packed.
fn anon_mappings_align_to_64k_with_the_anon_bit() -> TestResult {
    if running_on_linux() {
        skip!("seed 004's knobs are openEuler's, not mainline Linux's");
    }
    check_eq!(aligned_of_eight("0x2", map_anon)?, 8);
    check!(aligned_of_eight("0x1", map_anon)? < 8);
    check!(aligned_of_eight("0x0", map_anon)? < 8);
    Ok(())
}
