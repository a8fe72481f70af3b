//! Address-space identifiers (Linux: `arch/arm64/mm/context.c`, much
//! simplified). Every user address space gets its own ASID for life, so
//! switching between processes needs no TLB flush. An ASID is flushed from
//! every TLB when its address space dies, before anyone may reuse it; that
//! is how ASIDs roll over here, instead of Linux's generations. ASID 0 is
//! never given out: TTBR0's empty table uses it.

use super::mmu::{asid_bits, flush_tlb_asid};
use crate::sync::SpinLock;

/// How many ASIDs the bitmap tracks: 2^16, for 16-bit ASIDs. With 8-bit
/// ASIDs (`asid_bits`) only the first 256 are handed out.
const MAX_ASIDS: usize = 1 << 16;

/// The ASID allocator's state (Linux: `asid_map` in
/// `arch/arm64/mm/context.c`, without its generations).
struct AsidMap {
    /// One bit per ASID, set while an address space owns it. ASID 0's bit
    /// is never set: ASID 0 belongs to the empty table and is skipped.
    used: [u64; MAX_ASIDS / 64],
    /// Where the next search starts, so freed ASIDs are reused last.
    next: usize,
}

/// The one allocator every CPU shares (Linux: `asid_map` under
/// `cpu_asid_lock`); the search starts at ASID 1.
static ASIDS: SpinLock<AsidMap> = SpinLock::new(AsidMap {
    used: [0; MAX_ASIDS / 64],
    next: 1,
});

/// A free ASID, or None when every one is in use.
pub fn alloc_asid() -> Option<u16> {
    let limit = 1usize << asid_bits();
    let mut map = ASIDS.lock();
    let start = map.next;
    for i in 0..limit {
        let asid = (start + i) % limit;
        if asid == 0 || map.used[asid / 64] & (1 << (asid % 64)) != 0 {
            continue;
        }
        map.used[asid / 64] |= 1 << (asid % 64);
        map.next = asid + 1;
        return Some(asid as u16);
    }
    None
}

/// Returns an address space's ASID once nothing runs with it any more.
pub fn free_asid(asid: u16) {
    flush_tlb_asid(asid);
    let a = asid as usize;
    ASIDS.lock().used[a / 64] &= !(1 << (a % 64));
}
