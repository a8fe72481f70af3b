//! The kernel's own `memcpy` and `memset` (arch/aarch64/string.rs), whose
//! 64-byte loads and stores take any alignment: every source and
//! destination offset mod 16 and lengths around each loop's edges, against
//! a byte-at-a-time reference, with guard bytes either side; and
//! `clear_pages` (DC ZVA), on whole pages between two it must not touch.

use super::{ensure, Test, TestResult};
use core::hint::black_box;

/// The string routines' tests.
pub const TESTS: &[Test] = &[
    Test {
        name: "string_memcpy_memset_any_alignment",
        run: any_alignment,
    },
    Test {
        name: "string_clear_pages_zeroes_those_pages_alone",
        run: clear_pages_alone,
    },
];

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

/// Clears the middle two of four pages filled with 0xaa, once and then
/// one page at a time: they read as zeros, the outer two as they were.
fn clear_pages_alone() -> TestResult {
    use crate::mm::addr::{phys_to_virt, PAGE_SIZE};
    use crate::mm::frame;
    let pa = frame::alloc_kernel_pages(2).ok_or("no 4 pages")?;
    // SAFETY: four pages just allocated, ours alone, in the linear map.
    let pages =
        unsafe { core::slice::from_raw_parts_mut(phys_to_virt(pa) as *mut u8, 4 * PAGE_SIZE) };
    let mut result = Ok(());
    for step in [2 * PAGE_SIZE, PAGE_SIZE] {
        pages.fill(0xaa);
        for at in (PAGE_SIZE..3 * PAGE_SIZE).step_by(step) {
            // SAFETY: whole pages inside the block above.
            unsafe { crate::arch::string::clear_pages(pages[at..].as_mut_ptr(), step) };
        }
        let (outer, middle) = (
            pages[..PAGE_SIZE].iter().chain(&pages[3 * PAGE_SIZE..]),
            &pages[PAGE_SIZE..3 * PAGE_SIZE],
        );
        if !middle.iter().all(|&b| b == 0) {
            result = Err(alloc::format!("{step} bytes at a time: not all zero"));
        } else if !outer.into_iter().all(|&b| b == 0xaa) {
            result = Err(alloc::format!("{step} bytes at a time: cleared outside"));
        }
    }
    frame::free_pages(pa, 2).map_err(|_| "free")?;
    result
}
