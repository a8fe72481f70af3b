//! Random bytes for AT_RANDOM and getrandom(2): a splitmix64 generator
//! seeded at boot from the DTB's `rng-seed` and the clock. Not
//! cryptographic (Linux: `drivers/char/random.c`, far stronger).

use crate::sync::SpinLock;

static STATE: SpinLock<u64> = SpinLock::new(0x9e37_79b9_7f4a_7c15);

pub fn seed(seed: u64) {
    *STATE.lock() ^= seed;
}

fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn fill(buf: &mut [u8]) {
    let mut state = STATE.lock();
    for chunk in buf.chunks_mut(8) {
        let v = next(&mut state).to_ne_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}
