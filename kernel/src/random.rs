//! Random bytes for AT_RANDOM and getrandom(2): a splitmix64 generator
//! seeded at boot from the DTB's `rng-seed` and the clock. Not
//! cryptographic (Linux: `drivers/char/random.c`, far stronger).

use crate::sync::SpinLock;

/// The splitmix64 state; every caller of `fill` advances it under the lock.
static STATE: SpinLock<u64> = SpinLock::new(0x9e37_79b9_7f4a_7c15);

/// Mixes `seed` into the state (XOR, so seeding twice adds entropy rather
/// than replacing it), as Linux's `add_device_randomness`.
pub fn seed(seed: u64) {
    *STATE.lock() ^= seed;
}

/// One splitmix64 step: advances `state` by the golden-ratio increment and
/// returns the mixed 64-bit output.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` with generator output, 8 bytes per step (Linux's
/// `get_random_bytes`).
pub fn fill(buf: &mut [u8]) {
    let mut state = STATE.lock();
    for chunk in buf.chunks_mut(8) {
        let v = next(&mut state).to_ne_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}
