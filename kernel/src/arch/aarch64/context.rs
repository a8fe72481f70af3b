//! Thread context switch (Linux: `cpu_switch_to` in
//! `arch/arm64/kernel/entry.S`, `fpsimd_thread_switch`). Switched: the
//! callee-saved registers (everything else was saved by the caller of
//! `switch_to`, or by the trap frame when a thread is preempted from an
//! interrupt), and the user state the kernel itself never touches: the
//! FP/SIMD registers (the kernel is built soft-float) and TPIDR_EL0.
//! Linux switches FP state lazily; we save and load it every time.

use core::arch::global_asm;
use core::mem::offset_of;

use aarch64_cpu::registers::{Readable, Writeable, TPIDR_EL0};

/// The FP/SIMD registers (Linux: `struct user_fpsimd_state`).
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
pub struct FpsimdState {
    /// V0-V31, the 128-bit SIMD&FP registers (Linux: `vregs`): bytes 0-511,
    /// stored pairwise by `__fpsimd_save`.
    pub vregs: [u128; 32],
    /// FPSR: the cumulative floating-point exception flags (IOC, DZC...) and
    /// the saturation flag QC.
    pub fpsr: u64,
    /// FPCR: the rounding mode, flush-to-zero and default-NaN controls; saved
    /// with FPSR by one `stp`, so it must follow it.
    pub fpcr: u64,
}

/// Saved state of a thread that is not running. The assembly below reaches
/// the fields through the `CTX_*` offsets, taken from this struct.
#[repr(C, align(16))]
#[derive(Default)]
pub struct Context {
    /// The callee-saved registers x19-x28 (AAPCS64; Linux: `cpu_context`).
    /// A new thread keeps its entry point in x19 and its argument in x20 for
    /// `__thread_start`.
    x19_x28: [u64; 10],
    /// x29, the frame pointer: where a backtrace of the switched-out thread
    /// starts (Linux: `cpu_context.fp`).
    fp: u64,
    /// x30, where `__switch_to` returns when the thread runs again:
    /// `__thread_start` for a new thread (Linux: `cpu_context.pc`).
    lr: u64,
    /// The kernel stack pointer at the switch (Linux: `cpu_context.sp`).
    sp: u64,
    /// TPIDR_EL0, the user thread pointer that TLS hangs off (Linux:
    /// `thread_struct.uw.tp_value`).
    pub tpidr_el0: u64,
    /// The user FP/SIMD registers (Linux: `thread_struct.uw.fpsimd_state`).
    pub fpsimd: FpsimdState,
}

/// Where `__switch_to` stores x19-x28, five pairs in a row.
const CTX_X19: usize = offset_of!(Context, x19_x28);
/// Where it stores x29 and x30, one pair.
const CTX_FP: usize = offset_of!(Context, fp);
/// Where it stores SP and TPIDR_EL0, one pair.
const CTX_SP: usize = offset_of!(Context, sp);
/// The FP/SIMD state it hands to `__fpsimd_save` and `__fpsimd_load`.
const CTX_FPSIMD: usize = offset_of!(Context, fpsimd);
/// Where `__fpsimd_save` stores FPSR and FPCR, one pair.
const FPSIMD_FPSR: usize = offset_of!(FpsimdState, fpsr);

// Each `stp`/`ldp` pair needs its second field right after the first.
const _: () = assert!(offset_of!(Context, lr) == CTX_FP + 8);
const _: () = assert!(offset_of!(Context, tpidr_el0) == CTX_SP + 8);
const _: () = assert!(offset_of!(FpsimdState, fpcr) == FPSIMD_FPSR + 8);
const _: () = assert!(offset_of!(FpsimdState, vregs) == 0);

impl Context {
    /// A context that starts at `entry(arg)` on the stack ending at `stack_top`.
    pub fn new(stack_top: usize, entry: extern "C" fn(usize) -> !, arg: usize) -> Context {
        let mut ctx = Context {
            lr: __thread_start as *const () as u64,
            sp: stack_top as u64,
            ..Default::default()
        };
        ctx.x19_x28[0] = entry as *const () as u64;
        ctx.x19_x28[1] = arg as u64;
        ctx
    }
}

extern "C" {
    fn __switch_to(prev: *mut Context, next: *const Context);
    fn __thread_start();
    fn __fpsimd_save(state: *mut FpsimdState);
    fn __fpsimd_load(state: *const FpsimdState);
}

global_asm!(
    ".section .text",
    ".arch_extension fp",
    ".arch_extension simd",
    // x0 = FpsimdState to fill from the live registers. Clobbers x9-x11.
    ".global __fpsimd_save",
    "__fpsimd_save:",
    "    stp q0, q1, [x0, #32 * 0]",
    "    stp q2, q3, [x0, #32 * 1]",
    "    stp q4, q5, [x0, #32 * 2]",
    "    stp q6, q7, [x0, #32 * 3]",
    "    stp q8, q9, [x0, #32 * 4]",
    "    stp q10, q11, [x0, #32 * 5]",
    "    stp q12, q13, [x0, #32 * 6]",
    "    stp q14, q15, [x0, #32 * 7]",
    "    stp q16, q17, [x0, #32 * 8]",
    "    stp q18, q19, [x0, #32 * 9]",
    "    stp q20, q21, [x0, #32 * 10]",
    "    stp q22, q23, [x0, #32 * 11]",
    "    stp q24, q25, [x0, #32 * 12]",
    "    stp q26, q27, [x0, #32 * 13]",
    "    stp q28, q29, [x0, #32 * 14]",
    "    stp q30, q31, [x0, #32 * 15]",
    "    mrs x9, fpsr",
    "    mrs x10, fpcr",
    "    add x11, x0, #{fpsr}",
    "    stp x9, x10, [x11]",
    "    ret",
    // x0 = FpsimdState to load into the registers. Clobbers x9-x11.
    ".global __fpsimd_load",
    "__fpsimd_load:",
    "    ldp q0, q1, [x0, #32 * 0]",
    "    ldp q2, q3, [x0, #32 * 1]",
    "    ldp q4, q5, [x0, #32 * 2]",
    "    ldp q6, q7, [x0, #32 * 3]",
    "    ldp q8, q9, [x0, #32 * 4]",
    "    ldp q10, q11, [x0, #32 * 5]",
    "    ldp q12, q13, [x0, #32 * 6]",
    "    ldp q14, q15, [x0, #32 * 7]",
    "    ldp q16, q17, [x0, #32 * 8]",
    "    ldp q18, q19, [x0, #32 * 9]",
    "    ldp q20, q21, [x0, #32 * 10]",
    "    ldp q22, q23, [x0, #32 * 11]",
    "    ldp q24, q25, [x0, #32 * 12]",
    "    ldp q26, q27, [x0, #32 * 13]",
    "    ldp q28, q29, [x0, #32 * 14]",
    "    ldp q30, q31, [x0, #32 * 15]",
    "    add x11, x0, #{fpsr}",
    "    ldp x9, x10, [x11]",
    "    msr fpsr, x9",
    "    msr fpcr, x10",
    "    ret",
    ".global __switch_to",
    "__switch_to:",
    "    stp x19, x20, [x0, #{x19} + 16 * 0]",
    "    stp x21, x22, [x0, #{x19} + 16 * 1]",
    "    stp x23, x24, [x0, #{x19} + 16 * 2]",
    "    stp x25, x26, [x0, #{x19} + 16 * 3]",
    "    stp x27, x28, [x0, #{x19} + 16 * 4]",
    "    stp x29, x30, [x0, #{fp}]",
    "    mov x9, sp",
    "    mrs x10, tpidr_el0",
    "    stp x9, x10, [x0, #{sp}]",
    "    mov x19, x0",
    "    mov x20, x1",
    "    add x0, x19, #{fpsimd}",
    "    bl __fpsimd_save",
    "    add x0, x20, #{fpsimd}",
    "    bl __fpsimd_load",
    "    mov x1, x20",
    "    ldp x19, x20, [x1, #{x19} + 16 * 0]",
    "    ldp x21, x22, [x1, #{x19} + 16 * 1]",
    "    ldp x23, x24, [x1, #{x19} + 16 * 2]",
    "    ldp x25, x26, [x1, #{x19} + 16 * 3]",
    "    ldp x27, x28, [x1, #{x19} + 16 * 4]",
    "    ldp x29, x30, [x1, #{fp}]",
    "    ldp x9, x10, [x1, #{sp}]",
    "    mov sp, x9",
    "    msr tpidr_el0, x10",
    "    ret",
    // A new thread 'returns' here from its first switch: x19 = entry,
    // x20 = argument; a zero frame pointer ends backtraces.
    ".global __thread_start",
    "__thread_start:",
    "    mov x29, xzr",
    "    mov x0, x20",
    "    blr x19",
    "    brk #0",
    x19 = const CTX_X19,
    fp = const CTX_FP,
    sp = const CTX_SP,
    fpsimd = const CTX_FPSIMD,
    fpsr = const FPSIMD_FPSR,
);

/// Saves the running thread's registers in `prev` and resumes `next`.
///
/// # Safety
/// `next` must hold a context saved by `switch_to` or made by
/// `Context::new` whose stack is still alive, and nothing else may be
/// resuming it; interrupts must be masked.
pub unsafe fn switch_to(prev: *mut Context, next: *const Context) {
    // SAFETY: per the caller's contract.
    unsafe { __switch_to(prev, next) }
}

/// The running thread's FP/SIMD registers (for fork and signal frames).
pub fn fpsimd_save() -> FpsimdState {
    let mut state = FpsimdState::default();
    // SAFETY: writes only into `state`.
    unsafe { __fpsimd_save(&mut state) };
    state
}

/// Loads FP/SIMD registers (at sigreturn and exec).
pub fn fpsimd_load(state: &FpsimdState) {
    // SAFETY: reads only `state`; the kernel itself never uses FP registers.
    unsafe { __fpsimd_load(state) };
}

/// The running thread's TLS register (TPIDR_EL0).
pub fn read_tpidr_el0() -> u64 {
    TPIDR_EL0.get()
}

/// Sets the running thread's TLS register; the kernel itself never reads it.
pub fn write_tpidr_el0(v: u64) {
    TPIDR_EL0.set(v);
}
