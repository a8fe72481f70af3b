//! What the tests of the library and of the filter symbolize: marker
//! functions in the test binary itself, found through its own ELF. One
//! file, pulled into both test binaries, so both look up the same names.

use std::env;
use std::hint::black_box;

use object::{Object, ObjectSymbol, SymbolKind};

use crate::Symbolizer;

pub const MARKER_FIRST_LINE: u32 = line!();
#[inline(never)]
pub fn symbolize_test_marker(x: u64) -> u64 {
    black_box(x).wrapping_mul(3)
}
pub const MARKER_LAST_LINE: u32 = line!();

#[inline(always)]
fn symbolize_test_inlined(x: u64) -> u64 {
    black_box(x).rotate_left(7) ^ 0x5a5a
}

#[inline(never)]
fn symbolize_test_caller(x: u64) -> u64 {
    symbolize_test_inlined(black_box(x)) + 1
}

/// Link-time address and size of the function whose mangled name contains
/// `ident`. Link-time, not runtime: the test binary is PIE, and DWARF
/// speaks in link-time addresses just like the kernel's does.
pub fn symbol_extent(elf: &[u8], ident: &str) -> (u64, u64) {
    let file = object::File::parse(elf).unwrap();
    let matches: Vec<_> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text)
        .filter(|s| s.name().is_ok_and(|n| n.contains(ident)))
        .map(|s| (s.address(), s.size()))
        .collect();
    assert_eq!(matches.len(), 1, "symbol for {ident}: {matches:?}");
    matches[0]
}

pub fn open_self() -> (Symbolizer, Vec<u8>) {
    // Keep the markers alive: a never-called function could be dropped.
    assert_eq!(symbolize_test_marker(black_box(5)), 15);
    assert_ne!(symbolize_test_caller(black_box(5)), 0);
    let exe = env::current_exe().unwrap();
    let symbolizer = Symbolizer::open(&exe).unwrap();
    (symbolizer, std::fs::read(&exe).unwrap())
}
