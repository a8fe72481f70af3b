//! The vDSO image (`vdso/vdso.c`, built by `kernel/build.rs`) and where
//! in it a signal handler returns (Linux: `arch/arm64/kernel/vdso.c`).

/// The vDSO's bytes: an ELF shared object linked at address 0.
pub static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vdso.so"));

/// The offset of the exported symbol `name` in the image, from its
/// dynamic symbol table; None if the image has no such symbol.
pub fn symbol_offset(name: &str) -> Option<u64> {
    let file = elf::ElfBytes::<elf::endian::LittleEndian>::minimal_parse(IMAGE).ok()?;
    let (symbols, strings) = file.dynamic_symbol_table().ok()??;
    symbols
        .iter()
        .find(|s| strings.get(s.st_name as usize).ok() == Some(name))
        .map(|s| s.st_value)
}
