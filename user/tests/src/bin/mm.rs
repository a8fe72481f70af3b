//! Address-space tests: mmap (anonymous, fixed, hinted, file-backed shared
//! and private), munmap, mprotect, madvise, mremap, msync, mincore, brk,
//! and the signals that bad accesses raise (SIGSEGV with SEGV_MAPERR or
//! SEGV_ACCERR, SIGBUS with BUS_ADRERR past the end of a file), each with
//! the exact faulting address in si_addr; and ulib's heap, which sits on
//! mmap.
#![no_std]
#![no_main]

extern crate alloc;

use core::arch::asm;
use core::ptr::{read_volatile, write_volatile};
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::{getrusage, RUSAGE_SELF};
use ulib::signal::*;
use ulib::system::{running_on_linux, running_on_qemu_user};
use ulib::test::{Scratch, TestResult};
use ulib::{check, check_eq, check_err, fail, skip, Errno};

ulib::tests!(
    anon_is_zero_filled,
    anon_keeps_writes,
    map_fixed_replaces,
    map_fixed_noreplace,
    hint_address_is_used,
    mmap_errors,
    prot_none_faults_accerr,
    unmapped_faults_maperr,
    munmap_middle_splits,
    munmap_errors,
    mprotect_read_only,
    mprotect_middle_splits,
    mprotect_errors,
    exec_on_noexec_page_faults,
    jit_code_runs,
    text_and_rodata_are_read_only,
    shared_file_mapping_is_coherent,
    private_file_mapping_is_private,
    sigbus_past_end_of_file,
    sigbus_after_truncate,
    madvise_dontneed_private_anon,
    madvise_dontneed_shared_file,
    madvise_dontneed_private_file,
    mincore_reports_residency,
    mremap_shrinks,
    mremap_grows_and_moves,
    mremap_errors,
    msync_shared_mapping,
    brk_grows_and_shrinks,
    minor_faults_are_counted,
    memfd_shared_mappings,
    lazy_large_mapping,
    deep_stack,
    ptdump_shows_mapping,
    heap_small_blocks_and_large_mappings,
);

const PAGE: usize = PAGE_SIZE;

/// A fresh private anonymous read-write mapping of `pages` pages.
fn anon(pages: usize) -> Result<usize, Errno> {
    map_anon(pages * PAGE)
}

/// A fault of kind (signo, code) at `addr`, as catch_fault reports it.
fn fault(signo: i32, code: i32, addr: usize) -> Fault {
    Fault { signo, code, addr }
}

/// A scratch file of `len` bytes of `pattern`, opened read-write.
fn pattern_file(scratch: &Scratch, len: usize) -> Result<i32, Errno> {
    let data: alloc::vec::Vec<u8> = (0..len).map(pattern).collect();
    let path = scratch.path("file");
    write_file(&path, &data)?;
    open(&path, O_RDWR | O_CLOEXEC, 0)
}

fn anon_is_zero_filled() -> TestResult {
    let addr = anon(16)?;
    check_eq!(addr % PAGE, 0);
    for i in 0..16 * PAGE {
        // SAFETY: addr maps 16 readable pages.
        let byte = unsafe { read_volatile((addr + i) as *const u8) };
        check!(byte == 0, "byte {i:#x} of a fresh mapping is {byte:#x}");
    }
    Ok(())
}

fn anon_keeps_writes() -> TestResult {
    let addr = anon(8)?;
    // SAFETY: addr maps 8 writable pages that nothing else uses.
    let mem = unsafe { core::slice::from_raw_parts_mut(addr as *mut u8, 8 * PAGE) };
    for (i, byte) in mem.iter_mut().enumerate() {
        *byte = pattern(i);
    }
    for (i, byte) in mem.iter().enumerate() {
        check_eq!(*byte, pattern(i));
    }
    // SAFETY: mem is not used after this.
    unsafe { munmap(addr, 8 * PAGE) }?;
    Ok(())
}

fn map_fixed_replaces() -> TestResult {
    let addr = anon(4)?;
    for page in 0..4 {
        try_write(addr + page * PAGE, 0xaa).unwrap();
    }
    // SAFETY: the range is our own mapping, replaced on purpose.
    let got = unsafe {
        mmap(
            addr + PAGE,
            PAGE,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
            -1,
            0,
        )
    }?;
    check_eq!(got, addr + PAGE);
    check_eq!(try_read(addr), Ok(0xaa));
    check_eq!(try_read(addr + PAGE), Ok(0));
    check_eq!(try_read(addr + 2 * PAGE), Ok(0xaa));
    Ok(())
}

fn map_fixed_noreplace() -> TestResult {
    let addr = anon(2)?;
    // SAFETY: MAP_FIXED_NOREPLACE never replaces a mapping.
    let over = unsafe {
        mmap(
            addr,
            PAGE,
            PROT_READ,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if running_on_qemu_user() {
        // qemu 7.2 takes MAP_FIXED_NOREPLACE as a hint, as Linux before
        // 4.17 did: it maps elsewhere instead of failing.
        check!(over != Ok(addr), "MAP_FIXED_NOREPLACE replaced a mapping");
    } else {
        check_err!(over, Errno::EEXIST);
    }
    // SAFETY: the second page is ours to unmap.
    unsafe { munmap(addr + PAGE, PAGE) }?;
    // SAFETY: the range is free now.
    let got = unsafe {
        mmap(
            addr + PAGE,
            PAGE,
            PROT_READ,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    }?;
    check_eq!(got, addr + PAGE);
    Ok(())
}

fn hint_address_is_used() -> TestResult {
    let free = anon(8)?;
    // SAFETY: our own mapping, given back to leave a known free range.
    unsafe { munmap(free, 8 * PAGE) }?;
    // SAFETY: without MAP_FIXED a hint never replaces anything.
    let got = unsafe {
        mmap(
            free + 2 * PAGE,
            PAGE,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS,
            -1,
            0,
        )
    }?;
    check_eq!(got, free + 2 * PAGE);
    // A hint over an existing mapping is moved elsewhere, not an error.
    // SAFETY: as above.
    let moved = unsafe { mmap(got, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }?;
    check!(moved != got);
    Ok(())
}

fn mmap_errors() -> TestResult {
    let rw = PROT_READ | PROT_WRITE;
    let anon_private = MAP_PRIVATE | MAP_ANONYMOUS;
    // SAFETY: each call is invalid and must map nothing.
    unsafe {
        check_err!(mmap(0, 0, rw, anon_private, -1, 0), Errno::EINVAL);
        check_err!(mmap(0, PAGE, rw, MAP_ANONYMOUS, -1, 0), Errno::EINVAL);
        check_err!(
            mmap(0x1234_5001, PAGE, rw, anon_private | MAP_FIXED, -1, 0),
            Errno::EINVAL
        );
        check_err!(mmap(0, 1 << 62, rw, anon_private, -1, 0), Errno::ENOMEM);
        check_err!(mmap(0, PAGE, rw, MAP_PRIVATE, 999, 0), Errno::EBADF);
    }
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, PAGE)?;
    // SAFETY: as above.
    unsafe {
        check_err!(mmap(0, PAGE, rw, MAP_SHARED, fd, 100), Errno::EINVAL);
    }
    let ro = open(&scratch.path("file"), O_RDONLY | O_CLOEXEC, 0)?;
    // SAFETY: as above.
    unsafe {
        check_err!(mmap(0, PAGE, rw, MAP_SHARED, ro, 0), Errno::EACCES);
    }
    Ok(())
}

fn prot_none_faults_accerr() -> TestResult {
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }?;
    check_eq!(
        try_read(addr + 0x123),
        Err(fault(SIGSEGV, SEGV_ACCERR, addr + 0x123))
    );
    check_eq!(
        try_write(addr + PAGE + 7, 1),
        Err(fault(SIGSEGV, SEGV_ACCERR, addr + PAGE + 7))
    );
    // SAFETY: our own mapping.
    unsafe { mprotect(addr, 2 * PAGE, PROT_READ | PROT_WRITE) }?;
    check_eq!(try_write(addr + 0x123, 5), Ok(()));
    check_eq!(try_read(addr + 0x123), Ok(5));
    Ok(())
}

fn unmapped_faults_maperr() -> TestResult {
    check_eq!(try_read(0x10), Err(fault(SIGSEGV, SEGV_MAPERR, 0x10)));
    let addr = anon(1)?;
    // SAFETY: our own mapping, unmapped to leave a hole.
    unsafe { munmap(addr, PAGE) }?;
    check_eq!(
        try_read(addr + 8),
        Err(fault(SIGSEGV, SEGV_MAPERR, addr + 8))
    );
    check_eq!(
        try_write(addr + 9, 1),
        Err(fault(SIGSEGV, SEGV_MAPERR, addr + 9))
    );
    Ok(())
}

fn munmap_middle_splits() -> TestResult {
    let addr = anon(3)?;
    for page in 0..3 {
        try_write(addr + page * PAGE, page as u8 + 1).unwrap();
    }
    // SAFETY: the middle page of our own mapping.
    unsafe { munmap(addr + PAGE, PAGE) }?;
    check_eq!(try_read(addr), Ok(1));
    check_eq!(try_read(addr + 2 * PAGE), Ok(3));
    check_eq!(
        try_read(addr + PAGE),
        Err(fault(SIGSEGV, SEGV_MAPERR, addr + PAGE))
    );
    check_eq!(try_write(addr + PAGE - 1, 9), Ok(()));
    check_eq!(try_write(addr + 2 * PAGE, 9), Ok(()));
    // Both halves can still be unmapped on their own.
    // SAFETY: our own pages.
    unsafe {
        munmap(addr, PAGE)?;
        munmap(addr + 2 * PAGE, PAGE)?;
    }
    check_eq!(
        try_read(addr + 2 * PAGE),
        Err(fault(SIGSEGV, SEGV_MAPERR, addr + 2 * PAGE))
    );
    Ok(())
}

fn munmap_errors() -> TestResult {
    let addr = anon(1)?;
    // SAFETY: none of these may unmap anything in use.
    unsafe {
        check_err!(munmap(addr + 1, PAGE), Errno::EINVAL);
        check_err!(munmap(addr, 0), Errno::EINVAL);
        munmap(addr, PAGE)?;
        // Unmapping a hole is not an error.
        munmap(addr, PAGE)?;
    }
    Ok(())
}

fn mprotect_read_only() -> TestResult {
    let addr = anon(1)?;
    try_write(addr, 42).unwrap();
    // SAFETY: our own mapping.
    unsafe { mprotect(addr, PAGE, PROT_READ) }?;
    check_eq!(try_read(addr), Ok(42));
    check_eq!(
        try_write(addr + 100, 1),
        Err(fault(SIGSEGV, SEGV_ACCERR, addr + 100))
    );
    check_eq!(try_read(addr + 100), Ok(0));
    // SAFETY: our own mapping.
    unsafe { mprotect(addr, PAGE, PROT_READ | PROT_WRITE) }?;
    check_eq!(try_write(addr + 100, 1), Ok(()));
    check_eq!(try_read(addr), Ok(42));
    Ok(())
}

fn mprotect_middle_splits() -> TestResult {
    let addr = anon(3)?;
    // SAFETY: the middle page of our own mapping.
    unsafe { mprotect(addr + PAGE, PAGE, PROT_NONE) }?;
    check_eq!(try_write(addr + PAGE - 1, 1), Ok(()));
    check_eq!(try_write(addr + 2 * PAGE, 1), Ok(()));
    check_eq!(
        try_read(addr + PAGE + 5),
        Err(fault(SIGSEGV, SEGV_ACCERR, addr + PAGE + 5))
    );
    Ok(())
}

fn mprotect_errors() -> TestResult {
    let addr = anon(1)?;
    // SAFETY: none of these may change memory in use.
    unsafe {
        check_err!(mprotect(addr + 1, PAGE, PROT_READ), Errno::EINVAL);
        check_err!(mprotect(addr, PAGE, 0x100), Errno::EINVAL);
        munmap(addr, PAGE)?;
        check_err!(mprotect(addr, PAGE, PROT_READ), Errno::ENOMEM);
    }
    Ok(())
}

/// `mov w0, #42; ret`
const RETURN_42: [u32; 2] = [0x5280_0540, 0xd65f_03c0];

/// Copies RETURN_42 to `addr` and makes it visible to instruction fetch,
/// as Linux's __clear_cache does: clean the data cache to the point of
/// unification, then invalidate the instruction cache.
///
/// # Safety
/// `addr` must be writable memory holding nothing else.
unsafe fn plant_code(addr: usize) {
    core::ptr::copy_nonoverlapping(RETURN_42.as_ptr(), addr as *mut u32, RETURN_42.len());
    asm!(
        "dc cvau, {a}",
        "dsb ish",
        "ic ivau, {a}",
        "dsb ish",
        "isb",
        a = in(reg) addr,
        options(nostack),
    );
}

fn exec_on_noexec_page_faults() -> TestResult {
    let addr = anon(1)?;
    // SAFETY: a fresh page of our own.
    unsafe { plant_code(addr) };
    // SAFETY: the call faults on instruction fetch, and catch_fault takes
    // us back; a kernel that executes it anyway returns 42.
    let result = unsafe {
        catch_fault(|| {
            let f: extern "C" fn() -> u32 = core::mem::transmute(addr);
            f()
        })
    };
    check_eq!(result, Err(fault(SIGSEGV, SEGV_ACCERR, addr)));
    Ok(())
}

fn jit_code_runs() -> TestResult {
    let addr = anon(1)?;
    // SAFETY: a fresh page of our own, then made executable for the call.
    let got = unsafe {
        plant_code(addr);
        mprotect(addr, PAGE, PROT_READ | PROT_EXEC)?;
        let f: extern "C" fn() -> u32 = core::mem::transmute(addr);
        f()
    };
    check_eq!(got, 42);
    Ok(())
}

static READ_ONLY: [u8; 16] = [7; 16];

fn text_and_rodata_are_read_only() -> TestResult {
    let text = text_and_rodata_are_read_only as *const () as usize;
    check_eq!(try_write(text, 0), Err(fault(SIGSEGV, SEGV_ACCERR, text)));
    let rodata = READ_ONLY.as_ptr() as usize;
    check_eq!(
        try_write(rodata, 0),
        Err(fault(SIGSEGV, SEGV_ACCERR, rodata))
    );
    check_eq!(try_read(rodata), Ok(7));
    Ok(())
}

fn shared_file_mapping_is_coherent() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, 2 * PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    check_eq!(try_read(addr + 5), Ok(pattern(5)));
    check_eq!(try_read(addr + PAGE + 5), Ok(pattern(PAGE + 5)));
    // write(2) shows through the mapping...
    pwrite64(fd, b"XY", PAGE + 10)?;
    check_eq!(try_read(addr + PAGE + 10), Ok(b'X'));
    check_eq!(try_read(addr + PAGE + 11), Ok(b'Y'));
    // ...and a store through the mapping shows in read(2).
    try_write(addr + 20, b'Z').unwrap();
    let mut buf = [0u8; 1];
    pread64(fd, &mut buf, 20)?;
    check_eq!(buf[0], b'Z');
    // A second mapping of the file sees the same page.
    // SAFETY: as above.
    let again = unsafe { mmap(0, PAGE, PROT_READ, MAP_SHARED, fd, 0) }?;
    check_eq!(try_read(again + 20), Ok(b'Z'));
    Ok(())
}

fn private_file_mapping_is_private() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, 2 * PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) }?;
    check_eq!(try_read(addr + PAGE + 3), Ok(pattern(PAGE + 3)));
    try_write(addr + 3, !pattern(3)).unwrap();
    check_eq!(try_read(addr + 3), Ok(!pattern(3)));
    let mut buf = [0u8; 1];
    pread64(fd, &mut buf, 3)?;
    check_eq!(buf[0], pattern(3));
    // Another private mapping sees the file, not our copy.
    // SAFETY: as above.
    let other = unsafe { mmap(0, PAGE, PROT_READ, MAP_PRIVATE, fd, 0) }?;
    check_eq!(try_read(other + 3), Ok(pattern(3)));
    Ok(())
}

fn sigbus_past_end_of_file() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, 100)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    check_eq!(try_read(addr + 99), Ok(pattern(99)));
    // The rest of the last page of the file reads as zeros...
    check_eq!(try_read(addr + 100), Ok(0));
    check_eq!(try_read(addr + PAGE - 1), Ok(0));
    // ...and the pages wholly past the end raise SIGBUS.
    check_eq!(
        try_read(addr + PAGE + 8),
        Err(fault(SIGBUS, BUS_ADRERR, addr + PAGE + 8))
    );
    check_eq!(
        try_write(addr + 2 * PAGE, 1),
        Err(fault(SIGBUS, BUS_ADRERR, addr + 2 * PAGE))
    );
    Ok(())
}

fn sigbus_after_truncate() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, 2 * PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    check_eq!(try_read(addr + PAGE + 1), Ok(pattern(PAGE + 1)));
    ftruncate(fd, PAGE)?;
    check_eq!(try_read(addr + 1), Ok(pattern(1)));
    check_eq!(
        try_read(addr + PAGE + 1),
        Err(fault(SIGBUS, BUS_ADRERR, addr + PAGE + 1))
    );
    // Growing the file again brings the page back, now zero-filled.
    ftruncate(fd, 2 * PAGE)?;
    check_eq!(try_read(addr + PAGE + 1), Ok(0));
    Ok(())
}

fn madvise_dontneed_private_anon() -> TestResult {
    let addr = anon(2)?;
    try_write(addr, 1).unwrap();
    try_write(addr + PAGE, 2).unwrap();
    // SAFETY: our own mapping; its contents are meant to go.
    unsafe { madvise(addr, 2 * PAGE, MADV_DONTNEED) }?;
    check_eq!(try_read(addr), Ok(0));
    check_eq!(try_read(addr + PAGE), Ok(0));
    Ok(())
}

fn madvise_dontneed_shared_file() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    try_write(addr + 1, 0x5a).unwrap();
    // SAFETY: our own mapping.
    unsafe { madvise(addr, PAGE, MADV_DONTNEED) }?;
    check_eq!(try_read(addr + 1), Ok(0x5a));
    check_eq!(try_read(addr + 2), Ok(pattern(2)));
    Ok(())
}

fn madvise_dontneed_private_file() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) }?;
    try_write(addr + 1, !pattern(1)).unwrap();
    // SAFETY: our own mapping; the private copy is meant to go.
    unsafe { madvise(addr, PAGE, MADV_DONTNEED) }?;
    check_eq!(try_read(addr + 1), Ok(pattern(1)));
    Ok(())
}

fn mincore_reports_residency() -> TestResult {
    let addr = anon(4)?;
    let mut vec = [0xffu8; 4];
    mincore(addr, 4 * PAGE, &mut vec)?;
    check_eq!(vec.map(|v| v & 1), [0, 0, 0, 0]);
    try_write(addr + PAGE, 1).unwrap();
    try_write(addr + 3 * PAGE, 1).unwrap();
    mincore(addr, 4 * PAGE, &mut vec)?;
    check_eq!(vec.map(|v| v & 1), [0, 1, 0, 1]);
    check_err!(mincore(addr + 1, PAGE, &mut vec), Errno::EINVAL);
    // SAFETY: our own mapping.
    unsafe { munmap(addr, 4 * PAGE) }?;
    check_err!(mincore(addr, PAGE, &mut vec), Errno::ENOMEM);
    Ok(())
}

fn mremap_shrinks() -> TestResult {
    let addr = anon(4)?;
    try_write(addr + PAGE, 7).unwrap();
    // SAFETY: our own mapping.
    let got = unsafe { mremap(addr, 4 * PAGE, 2 * PAGE, 0, 0) }?;
    check_eq!(got, addr);
    check_eq!(try_read(addr + PAGE), Ok(7));
    check_eq!(
        try_read(addr + 2 * PAGE),
        Err(fault(SIGSEGV, SEGV_MAPERR, addr + 2 * PAGE))
    );
    Ok(())
}

fn mremap_grows_and_moves() -> TestResult {
    let addr = anon(2)?;
    try_write(addr + 1, 1).unwrap();
    try_write(addr + PAGE + 2, 2).unwrap();
    // Pin the page after the mapping so it cannot grow in place.
    // SAFETY: MAP_FIXED_NOREPLACE only takes a free page.
    let blocker = unsafe {
        mmap(
            addr + 2 * PAGE,
            PAGE,
            PROT_READ,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    // SAFETY: our own mapping.
    let got = unsafe { mremap(addr, 2 * PAGE, 8 * PAGE, MREMAP_MAYMOVE, 0) }?;
    if blocker.is_ok() {
        check!(got != addr, "grew into the page mapped after it");
    }
    check_eq!(try_read(got + 1), Ok(1));
    check_eq!(try_read(got + PAGE + 2), Ok(2));
    check_eq!(try_read(got + 7 * PAGE), Ok(0));
    if got != addr {
        check_eq!(try_read(addr), Err(fault(SIGSEGV, SEGV_MAPERR, addr)));
    }
    Ok(())
}

fn mremap_errors() -> TestResult {
    let addr = anon(2)?;
    // SAFETY: none of these may move memory in use.
    unsafe {
        // Growing in place over the next mapping is refused without
        // MREMAP_MAYMOVE.
        let next = mmap(
            addr + 2 * PAGE,
            PAGE,
            PROT_READ,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
            -1,
            0,
        );
        if next.is_ok() {
            check_err!(mremap(addr, 2 * PAGE, 4 * PAGE, 0, 0), Errno::ENOMEM);
        }
        check_err!(mremap(addr + 1, PAGE, PAGE, 0, 0), Errno::EINVAL);
        check_err!(mremap(addr, PAGE, PAGE, 0x100, 0), Errno::EINVAL);
        check_err!(
            mremap(addr, PAGE, PAGE, MREMAP_FIXED, addr + 8 * PAGE),
            Errno::EINVAL
        );
    }
    Ok(())
}

fn msync_shared_mapping() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = pattern_file(&scratch, PAGE)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) }?;
    try_write(addr, b'M').unwrap();
    msync(addr, PAGE, MS_SYNC)?;
    msync(addr, PAGE, MS_ASYNC)?;
    let mut buf = [0u8; 1];
    pread64(fd, &mut buf, 0)?;
    check_eq!(buf[0], b'M');
    check_err!(msync(addr, PAGE, MS_SYNC | MS_ASYNC), Errno::EINVAL);
    check_err!(msync(addr + 1, PAGE, MS_SYNC), Errno::EINVAL);
    // SAFETY: our own mapping.
    unsafe { munmap(addr, PAGE) }?;
    check_err!(msync(addr, PAGE, MS_SYNC), Errno::ENOMEM);
    Ok(())
}

extern "C" {
    /// The end of .bss, from user.ld.
    static _end: u8;
}

fn brk_grows_and_shrinks() -> TestResult {
    // SAFETY: nothing in this program uses the heap above the break.
    unsafe {
        let start = brk(0);
        let end_of_bss = &_end as *const u8 as usize;
        check!(
            start >= end_of_bss,
            "brk {start:#x} below _end {end_of_bss:#x}"
        );
        let top = start + 3 * PAGE;
        check_eq!(brk(top), top);
        check_eq!(brk(0), top);
        check_eq!(try_read(start), Ok(0));
        check_eq!(try_write(top - 1, 9), Ok(()));
        check_eq!(brk(start), start);
        let gone = start.next_multiple_of(PAGE) + PAGE;
        // qemu 7.2 keeps the pages above a lowered break mapped.
        if !running_on_qemu_user() {
            check_eq!(try_read(gone), Err(fault(SIGSEGV, SEGV_MAPERR, gone)));
        }
        // Growing again brings back zeros, not the old contents.
        check_eq!(brk(top), top);
        check_eq!(try_read(top - 1), Ok(0));
        // A break that cannot be had leaves the old one.
        check_eq!(brk(1 << 60), top);
        check_eq!(brk(start), start);
    }
    Ok(())
}

fn minor_faults_are_counted() -> TestResult {
    let pages = 64;
    let addr = anon(pages)?;
    let before = getrusage(RUSAGE_SELF)?.ru_minflt;
    for page in 0..pages {
        // SAFETY: addr maps `pages` writable pages.
        unsafe { write_volatile((addr + page * PAGE) as *mut u8, 1) };
    }
    let after = getrusage(RUSAGE_SELF)?.ru_minflt;
    check!(
        after > before,
        "ru_minflt {before} -> {after} after touching {pages} new pages"
    );
    Ok(())
}

fn memfd_shared_mappings() -> TestResult {
    let fd = memfd_create(c"ulib-test", MFD_CLOEXEC)?;
    ftruncate(fd, 2 * PAGE)?;
    // SAFETY: new mappings the kernel places.
    let (a, b) = unsafe {
        let prot = PROT_READ | PROT_WRITE;
        (
            mmap(0, 2 * PAGE, prot, MAP_SHARED, fd, 0)?,
            mmap(0, 2 * PAGE, prot, MAP_SHARED, fd, 0)?,
        )
    };
    check!(a != b);
    check_eq!(try_read(a + PAGE), Ok(0));
    try_write(a + PAGE + 3, 33).unwrap();
    check_eq!(try_read(b + PAGE + 3), Ok(33));
    let mut buf = [0u8; 1];
    pread64(fd, &mut buf, PAGE + 3)?;
    check_eq!(buf[0], 33);
    check_eq!(fstat(fd)?.st_size, 2 * PAGE as i64);
    Ok(())
}

fn lazy_large_mapping() -> TestResult {
    // Far more than faultline's RAM would hold if it were filled eagerly;
    // more than all of it on a small machine, where only MAP_NORESERVE
    // gets it (as on Linux).
    let len = 256 << 20;
    let addr = map_anon_noreserve(len)?;
    for offset in [0, len / 2, len - 1] {
        check_eq!(try_write(addr + offset, 3), Ok(()));
        check_eq!(try_read(addr + offset), Ok(3));
    }
    // SAFETY: our own mapping.
    unsafe { munmap(addr, len) }?;
    Ok(())
}

/// Uses about 4 KiB of stack per level.
#[inline(never)]
fn recurse(depth: usize) -> u8 {
    let mut frame = [0u8; 4000];
    frame[depth % 4000] = depth as u8;
    let frame = core::hint::black_box(frame);
    if depth == 0 {
        frame[0]
    } else {
        frame[depth % 4000].wrapping_add(recurse(depth - 1))
    }
}

fn deep_stack() -> TestResult {
    // 256 KiB below the caller: the main stack must have (or grow to) it.
    check_eq!(
        recurse(64),
        (0..=64u32).map(|d| d as u8).fold(0u8, u8::wrapping_add)
    );
    Ok(())
}

fn ptdump_shows_mapping() -> TestResult {
    if running_on_linux() {
        skip!("/proc/self/ptdump is faultline's");
    }
    let addr = anon(1)?;
    try_write(addr, 1).unwrap();
    let dump = read_file(c"/proc/self/ptdump")?;
    let dump = core::str::from_utf8(&dump).unwrap_or("");
    let hex = alloc::format!("{addr:x}");
    if !dump.contains(&hex) {
        fail!("/proc/self/ptdump does not mention {hex}");
    }
    Ok(())
}

/// ulib's heap (`ulib/src/heap.rs`): small blocks fill more than one
/// 64K arena and keep their contents, come back aligned as asked, and a
/// large block is a mapping of its own, gone from the address space once
/// freed.
fn heap_small_blocks_and_large_mappings() -> TestResult {
    use alloc::alloc::{alloc, dealloc, Layout};
    use alloc::boxed::Box;
    use alloc::vec::Vec;
    // 192K of 1K blocks, three arenas' worth, each filled with its index.
    let blocks: Vec<Box<[u8; 1024]>> = (0..192).map(|i| Box::new([i as u8; 1024])).collect();
    for (i, block) in blocks.iter().enumerate() {
        check!(
            block.iter().all(|&b| b == i as u8),
            "block {i} was overwritten"
        );
    }
    drop(blocks);
    for align in [16, 64, 256, 2048] {
        let layout = Layout::from_size_align(24, align).unwrap();
        // SAFETY: a layout of non-zero size, freed with the same layout.
        let block = unsafe { alloc(layout) };
        check!(
            !block.is_null() && (block as usize).is_multiple_of(align),
            "{block:?}: not {align}-aligned"
        );
        // SAFETY: allocated just above with this layout.
        unsafe { dealloc(block, layout) };
    }
    let len = 1 << 20;
    let big: Vec<u8> = Vec::with_capacity(len);
    let addr = big.as_ptr() as usize;
    let mut vec = [0u8; 256];
    mincore(addr, len, &mut vec)?;
    drop(big);
    check_err!(mincore(addr, len, &mut vec), Errno::ENOMEM);
    Ok(())
}
