//! Per-VMA locks, driven from kernel threads so each race can be staged in
//! order (the reference's cases 21-23): a fault on one VMA while a writer
//! holds `mmap_lock` and another VMA, a fault on the VMA being changed, a
//! fault that must retry, and a removed VMA that stays readable.

use alloc::format;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

use super::{ensure, Test, TestResult};
use crate::arch::fault::do_page_fault;
use crate::fs::tmpfs;
use crate::fs::vfs::{File, InodeKind};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::fault::{Access, FaultError};
use crate::mm::memory;
use crate::mm::mm_struct::Mm;
use crate::mm::mmap::{self, MAP_ANONYMOUS, MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE};
use crate::mm::vma::VM_WRITE;
use crate::mm::vma_lock::lock_vma_under_rcu;
use crate::mm::vmstat;
use crate::sync::SpinLock;
use crate::task;
use crate::task::signal::SEGV_ACCERR;

/// The per-VMA lock tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "vma_lock_fault_while_another_vma_is_written",
        run: fault_while_another_vma_is_written,
    },
    Test {
        name: "vma_lock_fault_on_a_changing_vma_falls_back",
        run: fault_on_a_changing_vma_falls_back,
    },
    Test {
        name: "vma_lock_retry_is_counted_once",
        run: retry_is_counted_once,
    },
    Test {
        name: "vma_lock_removed_vma_stays_readable_and_detached",
        run: removed_vma_stays_readable,
    },
];

/// Bytes in each of `setup`'s two mappings: 1 MiB.
const LEN: usize = 1 << 20;

/// An errno's `Debug` text, for `map_err` into a `TestResult`.
fn e(err: crate::errno::Errno) -> alloc::string::String {
    format!("{err:?}")
}

/// An address space with a 1M shared mapping of a memfd whose first page
/// is written (the rest a hole), and a 1M private anonymous mapping.
fn setup() -> Result<(Arc<Mm>, Arc<File>, usize, usize), alloc::string::String> {
    let mm = Mm::new().map_err(e)?;
    let file = tmpfs::memfd_create("vma-lock", 0).map_err(e)?;
    file.ftruncate(LEN as i64).map_err(e)?;
    file.pwrite(&[0x5a; PAGE_SIZE], 0).map_err(e)?;
    let rw = PROT_READ | PROT_WRITE;
    let shared = mmap::mmap(&mm, 0, LEN, rw, MAP_SHARED, Some(file.clone()), 0).map_err(e)?;
    let anon = mmap::mmap(&mm, 0, LEN, rw, MAP_PRIVATE | MAP_ANONYMOUS, None, 0).map_err(e)?;
    Ok((mm, file, shared, anon))
}

/// Case 21: with `mmap_lock` held for writing and the anonymous VMA
/// write-locked, a fault on the file VMA still completes, in this very
/// thread (had it taken `mmap_lock`, it would deadlock here).
fn fault_while_another_vma_is_written() -> TestResult {
    let (mm, _file, shared, anon) = setup()?;
    let writer = mm.mmap_write_lock();
    writer.vma_start_write(anon, anon + LEN);
    let (success, abort) = (vmstat::VMA_LOCK_SUCCESS.get(), vmstat::VMA_LOCK_ABORT.get());
    do_page_fault(&mm, shared + 5 * PAGE_SIZE, Access::Read).map_err(|f| format!("{f:?}"))?;
    ensure!(
        memory::is_mapped(&mm, shared),
        "fault-around mapped nothing"
    );
    ensure!(
        vmstat::VMA_LOCK_SUCCESS.get() == success + 1,
        "not under the VMA lock"
    );
    ensure!(
        lock_vma_under_rcu(&mm, anon).is_none(),
        "write-locked VMA read-locked"
    );
    ensure!(
        vmstat::VMA_LOCK_ABORT.get() == abort + 1,
        "abort not counted"
    );
    drop(writer);
    ensure!(
        lock_vma_under_rcu(&mm, anon).is_some(),
        "still locked after unlock"
    );
    Ok(())
}

/// A fault run on its own thread: (finished, result).
type Outcome = Arc<(AtomicBool, SpinLock<Option<Result<(), FaultError>>>)>;

/// Starts `do_page_fault(mm, addr, access)` on a new kernel thread; the
/// returned `Outcome` says when it has finished and how.
fn fault_in_thread(mm: &Arc<Mm>, addr: usize, access: Access) -> (Arc<task::Thread>, Outcome) {
    let outcome: Outcome = Arc::new((AtomicBool::new(false), SpinLock::new(None)));
    let (mm, out) = (mm.clone(), outcome.clone());
    let thread = task::spawn(move || {
        *out.1.lock() = Some(do_page_fault(&mm, addr, access));
        out.0.store(true, Ordering::SeqCst);
    });
    (thread, outcome)
}

/// 20 ms on, the fault in `outcome` still waits (for `what`), and `counter`
/// has grown by exactly one from `before`.
fn waits_counted_once(
    outcome: &Outcome,
    counter: &vmstat::Counter,
    before: u64,
    what: &str,
) -> TestResult {
    task::msleep(20);
    ensure!(
        !outcome.0.load(Ordering::SeqCst),
        "fault did not wait for {what}"
    );
    ensure!(
        counter.get() == before + 1,
        "{} not counted once",
        counter.name
    );
    Ok(())
}

/// Case 22: a write fault on a VMA an mprotect-like writer has locked and
/// made read-only aborts, waits for `mmap_lock`, and then sees the new
/// protection: SIGSEGV (SEGV_ACCERR), nothing mapped.
fn fault_on_a_changing_vma_falls_back() -> TestResult {
    let (mm, _file, _shared, anon) = setup()?;
    let mut writer = mm.mmap_write_lock();
    writer.vma_start_write(anon, anon + LEN);
    for (_, _, vma) in writer.vmas.range_mut(anon, anon + LEN) {
        let mut read_only = (**vma).clone();
        read_only.flags &= !VM_WRITE;
        *vma = Arc::new(read_only);
    }
    let abort = vmstat::VMA_LOCK_ABORT.get();
    let (thread, outcome) = fault_in_thread(&mm, anon, Access::Write);
    waits_counted_once(&outcome, &vmstat::VMA_LOCK_ABORT, abort, "the writer")?;
    drop(writer);
    thread.join();
    let result = *outcome.1.lock();
    ensure!(
        result == Some(Err(FaultError::Segv(SEGV_ACCERR))),
        "fault gave {result:?}, not the new protection's SIGSEGV"
    );
    ensure!(
        !memory::is_mapped(&mm, anon),
        "mapped a read-only VMA writable"
    );
    Ok(())
}

/// Case 23: a fault on a page a hole punch is dropping returns RETRY from
/// under the VMA lock, counted once as `vma_lock_retry`, however long it
/// then waits under `mmap_lock`; it completes when the punch is over.
fn retry_is_counted_once() -> TestResult {
    let (mm, file, shared, _anon) = setup()?;
    let InodeKind::File(shmem) = &file.inode.kind else {
        return Err("not a tmpfs file".into());
    };
    let punching = shmem.start_punch(0, LEN as u64);
    let (success, retry) = (vmstat::VMA_LOCK_SUCCESS.get(), vmstat::VMA_LOCK_RETRY.get());
    // Page 8 is a hole: fault-around finds nothing, the fault needs a folio.
    let (thread, outcome) = fault_in_thread(&mm, shared + 8 * PAGE_SIZE, Access::Read);
    waits_counted_once(&outcome, &vmstat::VMA_LOCK_RETRY, retry, "the punch")?;
    drop(punching);
    thread.join();
    ensure!(
        *outcome.1.lock() == Some(Ok(())),
        "fault failed after the punch"
    );
    ensure!(
        vmstat::VMA_LOCK_SUCCESS.get() == success,
        "a retried fault counted as success"
    );
    ensure!(
        memory::is_mapped(&mm, shared + 8 * PAGE_SIZE),
        "page not mapped"
    );
    Ok(())
}

/// A VMA a fault may still hold stays valid memory after munmap removes it,
/// and is marked detached, so a late reader knows to search again.
fn removed_vma_stays_readable() -> TestResult {
    let (mm, _file, _shared, anon) = setup()?;
    let held = mm
        .vmas_published
        .read(|vmas| vmas.find(anon).map(|(_, _, vma)| vma.clone()))
        .ok_or("anon VMA not published")?;
    ensure!(!held.lock.is_detached(), "detached before munmap");
    mmap::munmap(&mm, anon, LEN).map_err(e)?;
    ensure!(held.lock.is_detached(), "not detached by munmap");
    ensure!(held.flags & VM_WRITE != 0, "VMA contents changed");
    ensure!(
        lock_vma_under_rcu(&mm, anon).is_none(),
        "found after munmap"
    );
    Ok(())
}
