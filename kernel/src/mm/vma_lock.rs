//! Per-VMA locks: how a page fault finds and holds its VMA without the
//! address space's `mmap_lock` (Linux: `vma_start_read`, `vma_end_read`,
//! `vma_start_write`, `vma_end_write_all` in `include/linux/mm.h`, and
//! `lock_vma_under_rcu` in `mm/memory.c`; seed 002).
//!
//! The protocol, as in Linux:
//! - Each VMA has a lock sequence number (`vm_lock_seq`) and a reader count;
//!   the address space has `mm_lock_seq`. A VMA is write-locked while its
//!   sequence equals the address space's.
//! - A writer holds `mmap_lock` and write-locks every VMA it changes: it waits
//!   for the VMA's readers to drain, then copies `mm_lock_seq` into it.
//!   Releasing `mmap_lock` bumps `mm_lock_seq`, which unlocks them all at once.
//! - A fault looks its VMA up without `mmap_lock`, takes a reader reference
//!   unless the VMA is write-locked, and checks it was not detached (removed
//!   or replaced) meanwhile. Anything else falls back to `mmap_lock`.
//!
//! Where we simplify, and how the lookup stays safe without RCU:
//! - Lockless readers search a *published copy* of the VMA tree (a sorted
//!   array), replaced whole when a writer releases `mmap_lock`, with
//!   `PublishedVmas` standing in for RCU: a fault never waits for another
//!   VMA's mmap or munmap, nor for anything else.
//! - A reader takes no reference on its VMA: it read-locks the VMA while
//!   the published copy (which holds an `Arc<Vma>` of each) keeps it alive,
//!   and from then on the tree does, since a writer write-locks a VMA, so
//!   waiting for its readers, before it removes it. The copy a writer
//!   replaced is freed once no reader can still be in it (RCU's deferred
//!   free).
//! - A VMA's range and flags never change in place: every change replaces the
//!   VMA with a new one and detaches the old (see `Splittable::split`). So a
//!   locked, attached VMA still covers what the copy said, and Linux's range
//!   re-check after locking has nothing to find here.
//! - The reader count is a spinning reader/writer lock, not an rw semaphore:
//!   readers never wait (they fall back), and a writer yields the CPU while
//!   readers drain.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;
use core::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

use crate::arch::cpu::{cpu_id, local_irq_restore, local_irq_save};
use crate::config::NR_CPUS;

use crate::mm::mm_struct::Mm;
use crate::mm::vma::Vma;
use crate::mm::vma_tree::VmaTree;
use crate::mm::vmstat;

/// May faults take per-VMA locks? Off (`vma_lock=off` on the command line,
/// 0 in `/sys/kernel/mm/vma_lock/enabled`) sends every fault through
/// `mmap_lock`, the path before seed 002, for comparison.
pub static PER_VMA_LOCK: AtomicBool = AtomicBool::new(true);

/// Set in `VmaLock::state` while a writer waits for readers to drain.
pub const WRITER: u32 = 1 << 31;
/// `vm_lock_seq` of a VMA never write-locked.
pub const NEVER_LOCKED: u64 = u64::MAX;

/// One VMA's lock (Linux: `vm_lock_seq`, `vm_lock->lock`, `detached`).
pub struct VmaLock {
    /// The `mm_lock_seq` of the write cycle that last write-locked the VMA
    /// (Linux's `vm_lock_seq`): equal to the mm's current one means locked now,
    /// until that cycle ends; `NEVER_LOCKED` at first.
    seq: AtomicU64,
    /// Readers holding the VMA, plus `WRITER` while a writer drains them.
    state: AtomicU32,
    /// Set once the VMA has left its tree (Linux's `detached`): a fault that
    /// read-locked it from a stale snapshot must search again.
    detached: AtomicBool,
}

impl VmaLock {
    /// A lock never write-locked, no readers, attached.
    pub const fn new() -> Self {
        VmaLock {
            seq: AtomicU64::new(NEVER_LOCKED),
            state: AtomicU32::new(0),
            detached: AtomicBool::new(false),
        }
    }

    /// Linux: `vma_start_read`. False if the VMA is write-locked now.
    fn start_read(&self, mm_lock_seq: &AtomicU64) -> bool {
        if self.seq.load(Ordering::Acquire) == mm_lock_seq.load(Ordering::Acquire) {
            return false;
        }
        let readers = self.state.load(Ordering::Relaxed);
        if readers & WRITER != 0
            || self
                .state
                .compare_exchange(readers, readers + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        // A writer may have locked it between the check and the reference:
        // its sequence store is ordered before it let readers in again.
        if self.seq.load(Ordering::Acquire) == mm_lock_seq.load(Ordering::Acquire) {
            self.end_read();
            return false;
        }
        true
    }

    /// Linux: `vma_end_read`.
    fn end_read(&self) {
        self.state.fetch_sub(1, Ordering::Release);
    }

    /// Linux: `vma_start_write`. The caller holds `mmap_lock` for writing,
    /// whose sequence number is `mm_lock_seq`.
    pub fn start_write(&self, mm_lock_seq: u64) {
        if self.seq.load(Ordering::Relaxed) == mm_lock_seq {
            return; // locked already in this write cycle
        }
        self.state.fetch_or(WRITER, Ordering::Acquire);
        while self.state.load(Ordering::Acquire) != WRITER {
            crate::task::yield_now();
        }
        self.seq.store(mm_lock_seq, Ordering::Release);
        self.state.fetch_and(!WRITER, Ordering::Release);
    }

    /// Was this VMA write-locked in the write cycle `mm_lock_seq`?
    pub fn is_write_locked(&self, mm_lock_seq: u64) -> bool {
        self.seq.load(Ordering::Relaxed) == mm_lock_seq
    }

    /// Marks the VMA removed from its tree (Linux: `vma_mark_detached`).
    pub fn detach(&self) {
        self.detached.store(true, Ordering::Release);
    }

    /// Whether the VMA has been removed from its tree (Linux's
    /// `vma_is_detached`).
    pub fn is_detached(&self) -> bool {
        self.detached.load(Ordering::Acquire)
    }
}

impl Default for VmaLock {
    fn default() -> Self {
        Self::new()
    }
}

/// A copy of a VMA is a new VMA: unlocked and attached, whatever the
/// original's state.
impl Clone for VmaLock {
    fn clone(&self) -> Self {
        VmaLock::new()
    }
}

/// The VMAs as the last writer left them, for lockless lookups: a sorted
/// array searched by bisection (Linux: the maple tree, a B-tree built for
/// RCU readers). Rebuilt whole when published, which is cheap next to the
/// work of any mmap or munmap.
#[derive(Default)]
pub struct VmaSnapshot {
    /// (start, end, VMA), in address order.
    vmas: Vec<(usize, usize, Arc<Vma>)>,
    /// Where the last lookup found its VMA: faults come in runs in one
    /// VMA, so it is looked at before bisecting (Linux before 6.1 kept a
    /// small per-thread cache of VMAs for the same reason, `vmacache`).
    /// Only a guess: any value is safe, and racing lookups may overwrite
    /// each other's.
    hint: AtomicUsize,
}

impl VmaSnapshot {
    /// A snapshot of every VMA in `tree`, in address order, each `Arc` cloned.
    pub fn of(tree: &VmaTree<Arc<Vma>>) -> Self {
        VmaSnapshot {
            vmas: tree.iter().map(|(s, e, v)| (s, e, v.clone())).collect(),
            hint: AtomicUsize::new(0),
        }
    }

    /// The VMA holding `addr`, as (start, end, &vma).
    pub fn find(&self, addr: usize) -> Option<(usize, usize, &Arc<Vma>)> {
        let hint = self.hint.load(Ordering::Relaxed);
        if let Some((start, end, vma)) = self.vmas.get(hint) {
            if (*start..*end).contains(&addr) {
                return Some((*start, *end, vma));
            }
        }
        // The first VMA ending above `addr` is the only one that can hold it.
        let i = self.vmas.partition_point(|&(_, end, _)| end <= addr);
        let (start, end, vma) = self.vmas.get(i)?;
        self.hint.store(i, Ordering::Relaxed);
        (*start <= addr).then_some((*start, *end, vma))
    }

    /// Every VMA in the snapshot as (start, end, &vma), in address order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, &Arc<Vma>)> {
        self.vmas.iter().map(|(s, e, v)| (*s, *e, v))
    }
}

/// The published VMAs and their readers: our stand-in for RCU. A reader
/// marks its CPU busy (with interrupts masked, so one reader per CPU, and
/// briefly: a bisection and a VMA's read lock) and reads the pointer; a
/// writer swaps the pointer, then waits until it has seen every CPU idle
/// once before freeing the old copy: any reader still on it was already
/// busy (Linux: `rcu_read_lock` and `synchronize_rcu`). Readers never wait,
/// and share no cache line written per fault.
pub struct PublishedVmas {
    /// The snapshot readers see now; from `Box::into_raw`, swapped by
    /// `publish` (Linux's RCU-protected `mm_mt` root).
    current: AtomicPtr<VmaSnapshot>,
    /// Per CPU: set while a reader on that CPU may be using `current`.
    busy: [CpuFlag; NR_CPUS],
}

/// One CPU's reader flag, alone on its cache line.
#[repr(align(64))]
struct CpuFlag(AtomicBool);

impl PublishedVmas {
    /// Publishes an empty snapshot, with no reader on any CPU.
    pub fn new() -> Self {
        PublishedVmas {
            current: AtomicPtr::new(Box::into_raw(Box::default())),
            busy: [const { CpuFlag(AtomicBool::new(false)) }; NR_CPUS],
        }
    }

    /// Runs `f` on the VMAs as last published (Linux: an RCU read section).
    pub fn read<R>(&self, f: impl FnOnce(&VmaSnapshot) -> R) -> R {
        let daif = local_irq_save();
        let busy = &self.busy[cpu_id()].0;
        busy.store(true, Ordering::Relaxed);
        // Seen before we read the pointer, or we read the new one.
        fence(Ordering::SeqCst);
        // SAFETY: a pointer from `Box::into_raw`, freed only by `publish`
        // after this CPU was seen idle, which it is not until we return.
        let result = f(unsafe { &*self.current.load(Ordering::Acquire) });
        busy.store(false, Ordering::Release);
        local_irq_restore(daif);
        result
    }

    /// Makes `new` what readers see, and hands back the old copy once no
    /// reader can still be using it (Linux: `rcu_assign_pointer` and
    /// `synchronize_rcu`).
    pub fn publish(&self, new: VmaSnapshot) -> Box<VmaSnapshot> {
        let old = self
            .current
            .swap(Box::into_raw(Box::new(new)), Ordering::SeqCst);
        fence(Ordering::SeqCst);
        for flag in &self.busy {
            while flag.0.load(Ordering::Acquire) {
                core::hint::spin_loop();
            }
        }
        // SAFETY: from `Box::into_raw`, no longer published, no reader left.
        unsafe { Box::from_raw(old) }
    }
}

impl Default for PublishedVmas {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PublishedVmas {
    fn drop(&mut self) {
        // SAFETY: from `Box::into_raw`; with `&mut self` nobody reads it.
        drop(unsafe { Box::from_raw(*self.current.get_mut()) });
    }
}

/// A VMA held for reading by a fault; dropping it is `vma_end_read`.
pub struct VmaReadGuard<'a> {
    /// The VMA, read-locked: no writer changes or removes it until the guard
    /// drops, so it stays in the tree, alive, that long.
    pub vma: &'a Vma,
    /// The VMA's range, which cannot change while it is held.
    pub range: Range<usize>,
}

impl Drop for VmaReadGuard<'_> {
    fn drop(&mut self) {
        self.vma.lock.end_read();
    }
}

/// What one look in the published VMAs found.
enum Lookup<'a> {
    /// The VMA, read-locked.
    Locked(VmaReadGuard<'a>),
    /// No VMA there, or one being changed.
    Abort,
    /// One replaced since it was published: look again.
    Detached,
}

/// Finds the VMA holding `addr` and read-locks it, without `mmap_lock` and
/// without a reference (Linux: `lock_vma_under_rcu`). None, counted as
/// `vma_lock_abort`: no VMA there, or it is being changed; the caller
/// falls back to `mmap_lock`.
pub fn lock_vma_under_rcu(mm: &Mm, addr: usize) -> Option<VmaReadGuard<'_>> {
    loop {
        // The read lock is taken inside the read section, as Linux takes
        // it under rcu_read_lock: the snapshot keeps the VMA alive until
        // then, and from then on the tree does, since a writer write-locks
        // every VMA before it leaves the tree (MmapWriteGuard's drop
        // checks), and so waits for this reader to let go.
        let found = mm.vmas_published.read(|vmas| {
            let Some((start, end, vma)) = vmas.find(addr) else {
                return Lookup::Abort;
            };
            if !vma.lock.start_read(&mm.mm_lock_seq) {
                return Lookup::Abort;
            }
            // SAFETY: read-locked, so alive as long as `mm`'s tree is
            // (above); the guard's lifetime is `mm`'s borrow.
            let vma: &Vma = unsafe { &*Arc::as_ptr(vma) };
            let guard = VmaReadGuard {
                vma,
                range: start..end,
            };
            if vma.lock.is_detached() {
                return Lookup::Detached;
            }
            Lookup::Locked(guard)
        });
        match found {
            Lookup::Locked(guard) => return Some(guard),
            Lookup::Abort => {
                vmstat::VMA_LOCK_ABORT.inc();
                return None;
            }
            Lookup::Detached => vmstat::VMA_LOCK_MISS.inc(),
        }
    }
}
