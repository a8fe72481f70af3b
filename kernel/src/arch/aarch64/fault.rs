//! arm64's half of a page fault (Linux: `arch/arm64/mm/fault.c`): what
//! the abort asked for, the lock the fault runs under, and what becomes
//! of a fault that fails: a signal with Linux's `si_code`, the OOM
//! killer, or EFAULT for a kernel copy. Generic mm (`mm/fault.rs`,
//! `handle_mm_fault` and below) decides what the page tables get.
//!
//! The lock: first the VMA's own (`lock_vma_under_rcu`), else, or when
//! that attempt asks to retry, `mmap_lock` (Linux: `lock_mm_and_find_vma`),
//! growing a stack the address is just below, and retrying after a
//! handler dropped the lock to wait.
//!
//! Where we simplify: no kprobes, no `FAULT_FLAG_*` bits beyond the access
//! (no killable waits, no userfaultfd), and the fault is counted once
//! here rather than by `mm_account_fault`'s perf events.

use core::sync::atomic::Ordering;

use super::esr::Esr;
use crate::mm::addr::PAGE_SIZE;
use crate::mm::fault::{handle_mm_fault, Access, FaultError};
use crate::mm::mm_struct::Mm;
use crate::mm::vma_lock::{lock_vma_under_rcu, PER_VMA_LOCK};
use crate::mm::{mmap, oom_kill, vmstat};
use crate::task::signal::{self, force_fault_signal};

/// What an abort asked for; None if `esr` is no data or instruction
/// abort. The data abort, the usual fault, is asked about first.
#[inline(always)]
pub fn access_of(esr: Esr) -> Option<Access> {
    if esr.is_data_abort() {
        Some(if esr.is_write() {
            Access::Write
        } else {
            Access::Read
        })
    } else if esr.is_instr_abort() {
        Some(Access::Exec)
    } else {
        None
    }
}

/// A fault from EL0: resolve it or signal the thread (Linux:
/// `do_page_fault` for a user address, then `__do_user_fault` or
/// `pagefault_out_of_memory`).
pub fn do_user_fault(addr: usize, access: Access) {
    match do_current_fault(addr, access) {
        Ok(()) => {}
        Err(FaultError::Segv(code)) => force_fault_signal(signal::SIGSEGV, code, addr as u64),
        Err(FaultError::Bus(code)) => force_fault_signal(signal::SIGBUS, code, addr as u64),
        Err(FaultError::Oom) => oom_kill::pagefault_out_of_memory(),
        Err(FaultError::Retry) => {
            force_fault_signal(signal::SIGBUS, signal::BUS_ADRERR, addr as u64)
        }
    }
}

/// A fault the kernel took copying to or from user memory; false means
/// the copy must fail with EFAULT (also when memory ran out, as Linux
/// does for a fault in kernel mode; the OOM killer acts on the way back
/// to user space).
pub fn do_uaccess_fault(addr: usize, access: Access) -> bool {
    match do_current_fault(addr, access) {
        Ok(()) => true,
        Err(FaultError::Oom) => {
            oom_kill::memory_short();
            false
        }
        Err(_) => false,
    }
}

/// A fault of the current thread (user or uaccess) in its process's `mm`,
/// counted in `pgfault` and the thread's `min_flt` when it succeeds;
/// SEGV_MAPERR for a kernel thread.
fn do_current_fault(addr: usize, access: Access) -> Result<(), FaultError> {
    let no_mm = FaultError::Segv(signal::SEGV_MAPERR);
    let current = crate::task::current_ref();
    let user = current.user.as_ref().ok_or(no_mm)?;
    let mm = user.process.mm.borrow().ok_or(no_mm)?;
    do_page_fault(&mm, addr, access)?;
    // Counted once per fault, never per attempt (Linux: `mm_account_fault`).
    vmstat::PGFAULT.inc();
    let min_flt = &user.min_flt; // written by this thread alone
    min_flt.store(min_flt.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    Ok(())
}

/// The locking around one fault (Linux: arm64 `do_page_fault`): under the
/// VMA's lock if it can be had, else, or if that attempt asks to retry,
/// under `mmap_lock`.
pub fn do_page_fault(mm: &Mm, addr: usize, access: Access) -> Result<(), FaultError> {
    let page = addr & !(PAGE_SIZE - 1);
    if PER_VMA_LOCK.load(Ordering::Relaxed) {
        if let Some(locked) = lock_vma_under_rcu(mm, addr) {
            let result = if access.allowed_by(locked.vma.flags) {
                handle_mm_fault(mm, locked.vma, locked.range.clone(), page, access)
            } else {
                Err(FaultError::Segv(signal::SEGV_ACCERR))
            };
            drop(locked);
            if result != Err(FaultError::Retry) {
                vmstat::VMA_LOCK_SUCCESS.inc();
                return result;
            }
            vmstat::VMA_LOCK_RETRY.inc();
        }
    }
    loop {
        match fault_under_mmap_lock(mm, page, access) {
            // The lock is dropped: let whatever we wait for finish.
            Err(FaultError::Retry) => crate::task::yield_now(),
            result => return result,
        }
    }
}

/// One attempt under `mmap_lock` held for reading (Linux:
/// `lock_mm_and_find_vma`, then `handle_mm_fault`): find the VMA, growing
/// a stack `addr` is just below, check the access, and handle the fault;
/// `Retry` has dropped the lock for the caller to wait and try again.
fn fault_under_mmap_lock(mm: &Mm, addr: usize, access: Access) -> Result<(), FaultError> {
    let map = mm.mmap_lock_readonly();
    let Some((start, end, vma)) = map.vmas.find(addr) else {
        drop(map);
        let limit = crate::task::current_process()
            .map_or(crate::task::exec::STACK_SIZE as u64, |p| p.stack_limit());
        if mmap::expand_stack(mm, addr, limit) {
            return fault_under_mmap_lock(mm, addr, access);
        }
        return Err(FaultError::Segv(signal::SEGV_MAPERR));
    };
    if !access.allowed_by(vma.flags) {
        return Err(FaultError::Segv(signal::SEGV_ACCERR));
    }
    let vma = vma.clone();
    let result = handle_mm_fault(mm, &vma, start..end, addr, access);
    drop(map);
    result
}
