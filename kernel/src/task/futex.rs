//! Fast user-space mutexes (Linux: `kernel/futex/`): FUTEX_WAIT sleeps
//! while a user word still holds an expected value, FUTEX_WAKE wakes
//! sleepers on a word. A word is named by its physical address, which is
//! the same for every process mapping it, so private and shared futexes
//! work alike (Linux keys private ones by (mm, address) to save work).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::errno::{Errno, KResult};
use crate::mm::addr::{phys_to_virt, PhysAddr};
use crate::mm::pgtable;
use crate::mm::uaccess::read_user;
use crate::sync::SpinLock;
use crate::task::{current, Thread};

const BUCKETS: usize = 64;

struct Waiter {
    key: PhysAddr,
    thread: Arc<Thread>,
    woken: Arc<AtomicBool>,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: SpinLock<Vec<Waiter>> = SpinLock::new(Vec::new());
static QUEUES: [SpinLock<Vec<Waiter>>; BUCKETS] = [EMPTY; BUCKETS];

fn bucket(key: PhysAddr) -> &'static SpinLock<Vec<Waiter>> {
    &QUEUES[(key.0 as usize >> 2) % BUCKETS]
}

/// The physical address of user word `uaddr`, faulting it in first.
fn key_of(uaddr: usize) -> KResult<PhysAddr> {
    if !uaddr.is_multiple_of(4) {
        return Err(Errno::EINVAL);
    }
    read_user::<u32>(uaddr)?;
    let mm = crate::task::current_mm().ok_or(Errno::EFAULT)?;
    let _ptl = mm.page_table_lock.lock();
    pgtable::translate(&&*mm, mm.pgd, uaddr)
        .map(|t| t.pa)
        .ok_or(Errno::EFAULT)
}

/// FUTEX_WAIT: sleep until woken, if `*uaddr == val`; EAGAIN if not;
/// ETIMEDOUT at `deadline` (a counter value); EINTR on a signal.
pub fn wait(uaddr: usize, val: u32, deadline: Option<u64>) -> KResult<()> {
    let key = key_of(uaddr)?;
    let woken = Arc::new(AtomicBool::new(false));
    {
        let mut q = bucket(key).lock();
        // Read through the kernel's own mapping: no fault while we hold the
        // lock, and a waker must take the same lock after changing the word.
        // SAFETY: key is a mapped user page's frame, in the linear map.
        let now = unsafe { core::ptr::read_volatile(phys_to_virt(key) as *const u32) };
        if now != val {
            return Err(Errno::EAGAIN);
        }
        q.push(Waiter {
            key,
            thread: current(),
            woken: woken.clone(),
        });
    }
    let result = loop {
        if woken.load(Ordering::Acquire) {
            break Ok(());
        }
        if crate::task::signal::signal_pending() {
            break Err(Errno::EINTR);
        }
        let d = deadline.unwrap_or(u64::MAX);
        if crate::arch::timer::counter() >= d {
            break Err(Errno::ETIMEDOUT);
        }
        crate::task::sleep_until(d, || {
            woken.load(Ordering::Acquire) || crate::task::signal::signal_pending()
        });
    };
    if result.is_err() {
        bucket(key)
            .lock()
            .retain(|w| !Arc::ptr_eq(&w.woken, &woken));
        if woken.load(Ordering::Acquire) {
            return Ok(());
        }
    }
    result
}

/// FUTEX_WAKE: wake up to `n` threads waiting on `uaddr`; returns how many.
pub fn wake(uaddr: usize, n: usize) -> usize {
    let Ok(key) = key_of(uaddr) else { return 0 };
    let mut woken = Vec::new();
    {
        let mut q = bucket(key).lock();
        let mut i = 0;
        while i < q.len() && woken.len() < n {
            if q[i].key == key {
                let w = q.remove(i);
                w.woken.store(true, Ordering::Release);
                woken.push(w.thread);
            } else {
                i += 1;
            }
        }
    }
    for t in &woken {
        crate::task::wake_up(t);
    }
    woken.len()
}
