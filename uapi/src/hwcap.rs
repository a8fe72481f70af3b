//! arm64 hardware capabilities, `AT_HWCAP`'s bits (Linux:
//! `arch/arm64/include/uapi/asm/hwcap.h`).

uapi_consts! {
    /// AT_HWCAP: only what the kernel really enables: FP and Advanced SIMD.
    HWCAP_FP: u64 = 1;
    /// AT_HWCAP bit: Advanced SIMD (NEON) is available.
    HWCAP_ASIMD: u64 = 2;
}
