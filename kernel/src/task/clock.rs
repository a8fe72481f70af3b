//! The kernel's clocks (Linux: `kernel/time/timekeeping.c`): CLOCK_MONOTONIC
//! counts from boot on the generic timer's counter, CLOCK_REALTIME is that
//! plus an offset, taken from the PL031 RTC at boot and moved by
//! clock_settime(2). The offset is also published in the vDSO's data page
//! (`[vvar]`, Linux: `struct vdso_data`), so the vDSO's CLOCK_REALTIME and
//! the system call's agree.
//!
//! CLOCK_TAI is CLOCK_REALTIME plus the TAI offset adjtimex(2) sets (0 at
//! boot, as on Linux until NTP says otherwise); the data page carries it
//! too.
//!
//! Where we simplify: no NTP slewing (see `ntp.rs`), no leap seconds;
//! CLOCK_BOOTTIME is CLOCK_MONOTONIC (nothing suspends), and the ALARM
//! clocks are their plain twins (nothing sleeps for them to wake).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::arch::timer;
use crate::fs::vfs::{Inode, InodeKind};
use crate::mm::addr::{phys_to_virt, PAGE_SIZE};
use crate::sync::SpinLock;
pub use uapi::time::{
    CLOCK_BOOTTIME, CLOCK_BOOTTIME_ALARM, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE,
    CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_REALTIME_ALARM, CLOCK_REALTIME_COARSE, CLOCK_TAI,
};

/// Nanoseconds in a second (Linux `NSEC_PER_SEC`).
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, in nanoseconds (Linux:
/// `tk->offs_real`).
static REALTIME_OFFSET: AtomicI64 = AtomicI64::new(0);
/// CLOCK_TAI minus CLOCK_REALTIME, in seconds (Linux: `tk->tai_offset`).
static TAI_OFFSET: AtomicI64 = AtomicI64::new(0);
/// Serialises writers of the offset and of the data page.
static SETTIME: SpinLock<()> = SpinLock::new(());

/// The data page's file and the kernel address of its one page.
static VVAR: spin::Once<(Arc<Inode>, usize)> = spin::Once::new();
/// The kernel address of the data page, 0 until [`init_vvar`] has made
/// it; `publish` writes nothing before then.
static VVAR_VA: AtomicUsize = AtomicUsize::new(0);

/// The data page's layout, shared with `arch/aarch64/vdso/vdso.c`: a
/// sequence count (odd while a writer is changing the page), then the
/// realtime offset (Linux: `vdso_data.seq` and the `CS_HRES_COARSE` base).
const VVAR_SEQ: usize = 0;
/// Byte offset of the realtime offset, an `i64` in nanoseconds.
const VVAR_REALTIME_OFFSET: usize = 8;
/// Byte offset of [`MULT`], a `u64`, for the vDSO's ticks-to-ns sum.
const VVAR_MULT: usize = 16;
/// Byte offset of the TAI offset, an `i64` in seconds.
const VVAR_TAI_OFFSET: usize = 24;
/// Byte offset of the random generator's generation, a `u64` the vDSO's
/// getrandom takes a new key at whenever it changes (Linux:
/// `vdso_rng_data.generation`); never 0.
const VVAR_RNG_GENERATION: usize = 32;
/// Byte offset of a `u32`, 1 once the random generator is ready (Linux:
/// `vdso_rng_data.is_ready`).
const VVAR_RNG_READY: usize = 40;

/// Counter ticks become nanoseconds as `(ticks * mult) >> MULT_SHIFT`, in
/// 128 bits (Linux: a clocksource's `mult` and `shift`, which the vDSO also
/// reads), so a clock read costs a multiply rather than divisions; the
/// kernel and the vDSO use the same `mult` and agree to the nanosecond.
pub const MULT_SHIFT: u32 = 32;
/// The `mult` for [`MULT_SHIFT`]: nanoseconds per counter tick, times
/// 2^32; 0 until [`mult`] first works it out.
static MULT: AtomicU64 = AtomicU64::new(0);

/// The multiplier for this CPU's counter frequency, worked out once.
fn mult() -> u64 {
    match MULT.load(Ordering::Relaxed) {
        0 => {
            let m = ((NSEC_PER_SEC as u128) << MULT_SHIFT) / timer::frequency() as u128;
            let m = m.min(u64::MAX as u128) as u64;
            MULT.store(m, Ordering::Relaxed);
            m
        }
        m => m,
    }
}

/// Nanoseconds since boot (CLOCK_MONOTONIC).
pub fn monotonic_ns() -> u64 {
    counter_to_ns(timer::counter())
}

/// Nanoseconds since the epoch (CLOCK_REALTIME); negative only if someone
/// set the clock before 1970.
pub fn realtime_ns() -> i64 {
    (monotonic_ns() as i64).wrapping_add(REALTIME_OFFSET.load(Ordering::Acquire))
}

/// The realtime offset: what to subtract from a CLOCK_REALTIME time to get
/// a CLOCK_MONOTONIC one.
pub fn realtime_offset() -> i64 {
    REALTIME_OFFSET.load(Ordering::Acquire)
}

/// Nanoseconds to counter ticks (rounded down).
pub fn ns_to_counter(ns: u64) -> u64 {
    (ns as u128 * timer::frequency() as u128 / NSEC_PER_SEC as u128).min(u64::MAX as u128) as u64
}

/// Counter ticks to nanoseconds.
pub fn counter_to_ns(c: u64) -> u64 {
    ((c as u128 * mult() as u128) >> MULT_SHIFT).min(u64::MAX as u128) as u64
}

/// Sets CLOCK_REALTIME to `ns` since the epoch (Linux:
/// `do_settimeofday64`), here and in the vDSO's page.
pub fn set_realtime(ns: i64) {
    let _guard = SETTIME.lock();
    let offset = ns.wrapping_sub(monotonic_ns() as i64);
    REALTIME_OFFSET.store(offset, Ordering::Release);
    publish();
}

/// Moves CLOCK_REALTIME by `delta` nanoseconds (Linux:
/// `timekeeping_inject_offset`, adjtimex's ADJ_SETOFFSET).
pub fn inject_offset(delta: i64) {
    let _guard = SETTIME.lock();
    let offset = REALTIME_OFFSET.load(Ordering::Acquire).wrapping_add(delta);
    REALTIME_OFFSET.store(offset, Ordering::Release);
    publish();
}

/// The TAI offset: CLOCK_TAI minus CLOCK_REALTIME, in seconds.
pub fn tai_offset() -> i64 {
    TAI_OFFSET.load(Ordering::Acquire)
}

/// Sets the TAI offset (Linux: `__timekeeping_set_tai_offset`), here and
/// in the vDSO's page.
pub fn set_tai_offset(secs: i64) {
    let _guard = SETTIME.lock();
    TAI_OFFSET.store(secs, Ordering::Release);
    publish();
}

/// What a wall clock adds to CLOCK_MONOTONIC, in nanoseconds; None for
/// an id that names no wall clock (Linux: the `k_clock`s of
/// `posix_clocks[]` that read timekeeping).
pub fn wall_offset(clock: i32) -> Option<i64> {
    match clock {
        CLOCK_REALTIME | CLOCK_REALTIME_COARSE | CLOCK_REALTIME_ALARM => Some(realtime_offset()),
        CLOCK_TAI => {
            Some(realtime_offset().wrapping_add(tai_offset().wrapping_mul(NSEC_PER_SEC as i64)))
        }
        CLOCK_MONOTONIC
        | CLOCK_MONOTONIC_RAW
        | CLOCK_MONOTONIC_COARSE
        | CLOCK_BOOTTIME
        | CLOCK_BOOTTIME_ALARM => Some(0),
        _ => None,
    }
}

/// Writes the offsets into the data page under its sequence count
/// (Linux: `vdso_write_begin`/`vdso_write_end`). Caller holds SETTIME.
fn publish() {
    let va = VVAR_VA.load(Ordering::Acquire);
    if va == 0 {
        return;
    }
    // SAFETY: `va` is the kernel address of the data page's folio, which
    // its file keeps in the page cache for good (VVAR is never dropped);
    // the words are naturally aligned inside it.
    let (seq, off, tai) = unsafe {
        (
            &*((va + VVAR_SEQ) as *const AtomicU32),
            &*((va + VVAR_REALTIME_OFFSET) as *const AtomicI64),
            &*((va + VVAR_TAI_OFFSET) as *const AtomicI64),
        )
    };
    seq.fetch_add(1, Ordering::AcqRel);
    core::sync::atomic::fence(Ordering::Release);
    off.store(REALTIME_OFFSET.load(Ordering::Acquire), Ordering::Relaxed);
    tai.store(TAI_OFFSET.load(Ordering::Acquire), Ordering::Relaxed);
    core::sync::atomic::fence(Ordering::Release);
    seq.fetch_add(1, Ordering::Release);
}

/// At boot: CLOCK_REALTIME starts at the RTC's `secs` since the epoch.
pub fn init_realtime(secs: u64) {
    set_realtime((secs * NSEC_PER_SEC) as i64);
}

/// Makes the vDSO's data page, once at boot (after the file systems):
/// one page of a tmpfs file, mapped read-only into every process below
/// the vDSO.
pub fn init_vvar() {
    let (_, va) = VVAR.call_once(|| {
        let file = crate::fs::tmpfs::memfd_create("[vvar]", 0).expect("a file for [vvar]");
        file.write(&[0u8; PAGE_SIZE][..]).expect("the [vvar] page");
        let InodeKind::File(f) = &file.inode.kind else {
            unreachable!("memfd_create makes tmpfs files")
        };
        let (folio, _) = f.mapping.get_folio(0).expect("the [vvar] page is cached");
        (file.inode.clone(), phys_to_virt(folio.phys()))
    });
    // SAFETY: as in `publish`; the words are aligned, and no process maps
    // the page before this returns.
    unsafe {
        (*((*va + VVAR_MULT) as *const AtomicU64)).store(mult(), Ordering::Release);
        (*((*va + VVAR_RNG_GENERATION) as *const AtomicU64)).store(1, Ordering::Release);
        (*((*va + VVAR_RNG_READY) as *const AtomicU32)).store(1, Ordering::Release);
    }
    VVAR_VA.store(*va, Ordering::Release);
    let _guard = SETTIME.lock();
    publish();
}

/// A fork made a copy of a process's memory, and with it of any vDSO
/// getrandom state in it: a new generation makes every such state take
/// a fresh key before it gives out another byte (Linux instead wipes
/// those states in the child: they live in MAP_DROPPABLE memory).
pub fn new_rng_generation() {
    let va = VVAR_VA.load(Ordering::Acquire);
    if va == 0 {
        return;
    }
    // SAFETY: as in `publish`; the word is aligned.
    let generation = unsafe { &*((va + VVAR_RNG_GENERATION) as *const AtomicU64) };
    // Wrapping past 0 would read as "no key yet": skip it.
    if generation.fetch_add(1, Ordering::AcqRel) == u64::MAX {
        generation.store(1, Ordering::Release);
    }
}

/// The data page's file, for exec to map.
pub fn vvar_inode() -> Option<Arc<Inode>> {
    VVAR.get().map(|(inode, _)| inode.clone())
}
