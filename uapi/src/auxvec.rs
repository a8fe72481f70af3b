//! The auxiliary vector's keys (Linux: `include/uapi/linux/auxvec.h`,
//! `arch/arm64/include/uapi/asm/auxvec.h`): what exec tells a new program
//! beside argv and envp.

uapi_consts! {
    /// End of the auxiliary vector.
    AT_NULL: u64 = 0;
    /// Address of the program headers.
    AT_PHDR: u64 = 3;
    /// Size of one program header.
    AT_PHENT: u64 = 4;
    /// Number of program headers.
    AT_PHNUM: u64 = 5;
    /// Page size.
    AT_PAGESZ: u64 = 6;
    /// Where the interpreter was loaded; 0, as there is none.
    AT_BASE: u64 = 7;
    /// Flags; always 0.
    AT_FLAGS: u64 = 8;
    /// The program's entry point.
    AT_ENTRY: u64 = 9;
    /// The real user id; always 0 (everyone is root).
    AT_UID: u64 = 11;
    /// The effective user id; always 0.
    AT_EUID: u64 = 12;
    /// The real group id; always 0.
    AT_GID: u64 = 13;
    /// The effective group id; always 0.
    AT_EGID: u64 = 14;
    /// CPU features (`HWCAP_*`), what `getauxval(AT_HWCAP)` reports.
    AT_HWCAP: u64 = 16;
    /// Clock ticks per second, for `times(2)`.
    AT_CLKTCK: u64 = 17;
    /// Non-zero for a set-uid program: the C library then ignores `LD_*`.
    AT_SECURE: u64 = 23;
    /// Address of 16 random bytes, which seed the C library's stack protector
    /// and pointer mangling.
    AT_RANDOM: u64 = 25;
    /// More CPU features (`HWCAP2_*`).
    AT_HWCAP2: u64 = 26;
    /// Address of the file name given to `execve`.
    AT_EXECFN: u64 = 31;
    /// Address of the platform's name (Linux arm64's `ELF_PLATFORM`,
    /// "aarch64"), which ld.so uses in library search paths.
    AT_PLATFORM: u64 = 15;
    /// The smallest signal stack a handler's frame fits on (arm64's
    /// `ARCH_DLINFO` adds it, with `AT_SYSINFO_EHDR`).
    AT_MINSIGSTKSZ: u64 = 51;
    /// Where the vDSO's ELF header is mapped.
    AT_SYSINFO_EHDR: u64 = 33;
}
