//! Futex operations and bits (Linux: `include/uapi/linux/futex.h`).

uapi_consts! {
    /// futex(2)'s operations (`include/uapi/linux/futex.h`).
    FUTEX_WAIT: u32 = 0;
    /// Wake waiters.
    FUTEX_WAKE: u32 = 1;
    /// Wake some waiters, move others.
    FUTEX_REQUEUE: u32 = 3;
    /// FUTEX_REQUEUE if the word still holds a value.
    FUTEX_CMP_REQUEUE: u32 = 4;
    /// Change a second word and wake on both.
    FUTEX_WAKE_OP: u32 = 5;
    /// Take a PI lock, with a CLOCK_REALTIME deadline.
    FUTEX_LOCK_PI: u32 = 6;
    /// Release a PI lock.
    FUTEX_UNLOCK_PI: u32 = 7;
    /// Take a PI lock if free.
    FUTEX_TRYLOCK_PI: u32 = 8;
    /// Wait, for wakes with a matching bitset, to an absolute deadline.
    FUTEX_WAIT_BITSET: u32 = 9;
    /// Wake waiters with a matching bitset.
    FUTEX_WAKE_BITSET: u32 = 10;
    /// Wait to be requeued onto a PI lock.
    FUTEX_WAIT_REQUEUE_PI: u32 = 11;
    /// Requeue waiters onto a PI lock.
    FUTEX_CMP_REQUEUE_PI: u32 = 12;
    /// FUTEX_LOCK_PI with a CLOCK_MONOTONIC deadline unless
    /// FUTEX_CLOCK_REALTIME.
    FUTEX_LOCK_PI2: u32 = 13;
    /// The word is private to the process: named by address alone.
    FUTEX_PRIVATE_FLAG: u32 = 128;
    /// A deadline on CLOCK_REALTIME.
    FUTEX_CLOCK_REALTIME: u32 = 256;
    /// The most words one futex_waitv(2) waits on (Linux: `FUTEX_WAITV_MAX`).
    FUTEX_WAITV_MAX: u32 = 128;
    /// FUTEX2_SIZE_U32: a 32-bit word, the only size Linux 6.12 waits on.
    FUTEX2_SIZE_U32: u32 = 2;
    /// The size bits of a futex2 flags word.
    FUTEX2_SIZE_MASK: u32 = 3;
    /// FUTEX2_PRIVATE: as FUTEX_PRIVATE_FLAG.
    FUTEX2_PRIVATE: u32 = 128;
    /// FUTEX_WAITERS: in a lock word, some thread is waiting for it.
    FUTEX_WAITERS: u32 = 0x80000000;
    /// FUTEX_OWNER_DIED: in a lock word, the holder died without unlocking it.
    FUTEX_OWNER_DIED: u32 = 0x40000000;
    /// FUTEX_TID_MASK: the bits of a lock word that hold the holder's TID.
    FUTEX_TID_MASK: u32 = 0x3fffffff;
    /// Most entries walked in a robust list, so a looped one cannot hang an
    /// exit (Linux: `ROBUST_LIST_LIMIT`).
    ROBUST_LIST_LIMIT: usize = 2048;
}
