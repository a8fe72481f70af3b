//! arm64 PSTATE bits user space sees in a signal frame (Linux:
//! `arch/arm64/include/uapi/asm/ptrace.h`).

uapi_consts! {
    /// `PSTATE.M[3:0]`: the exception level and which stack pointer it uses.
    PSR_MODE_MASK: u64 = 0xf;
    /// `M[4]`: set when the interrupted code is AArch32.
    PSR_MODE32_BIT: u64 = 16;
}
