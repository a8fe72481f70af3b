//! The kernel's own `memcpy` and `memset` (arch/aarch64/string.rs), whose
//! 64-byte loads and stores take any alignment: every source and
//! destination offset mod 16 and lengths around each loop's edges, against
//! a byte-at-a-time reference, with guard bytes either side.

use super::{ensure, Test, TestResult};
use core::hint::black_box;

/// The string routines' tests.
pub const TESTS: &[Test] = &[Test {
    name: "string_memcpy_memset_any_alignment",
    run: any_alignment,
}];

/// Lengths on either side of the 8- and 64-byte loops' edges.
const LENS: [usize; 12] = [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 200, 1000];

/// Copies and fills at every offset pair and length, checking the bytes
/// and that nothing outside moved.
fn any_alignment() -> TestResult {
    let src: alloc::vec::Vec<u8> = (0..1100).map(|i| (i * 37 + 11) as u8).collect();
    let mut dst = alloc::vec![0u8; 1100];
    for len in LENS {
        for so in 0..16 {
            for d in 0..16 {
                dst.fill(0xee);
                let n = black_box(len);
                dst[d..d + n].copy_from_slice(&src[so..so + n]);
                ensure!(
                    dst[d..d + n] == src[so..so + n],
                    "memcpy {n} bytes +{so} -> +{d}"
                );
                ensure!(
                    dst[..d].iter().chain(&dst[d + n..]).all(|&b| b == 0xee),
                    "memcpy {n} bytes +{so} -> +{d} wrote outside"
                );
                dst[d..d + n].fill(black_box(0x5a));
                ensure!(
                    dst[d..d + n].iter().all(|&b| b == 0x5a),
                    "memset {n} bytes at +{d}"
                );
                ensure!(
                    dst[..d].iter().chain(&dst[d + n..]).all(|&b| b == 0xee),
                    "memset {n} bytes at +{d} wrote outside"
                );
            }
        }
    }
    Ok(())
}
