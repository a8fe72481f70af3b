//! Kernel-thread context switch (Linux: `cpu_switch_to` in
//! `arch/arm64/kernel/entry.S`). Only callee-saved registers are switched:
//! everything else was saved by the caller of `switch_to` (or by the trap
//! frame, when a thread is preempted from an interrupt).

use core::arch::global_asm;

/// Saved state of a thread that is not running. User FP/SIMD state and
/// TPIDR_EL0 will join it when threads run user code.
#[repr(C)]
#[derive(Default)]
pub struct Context {
    x19_x28: [u64; 10],
    fp: u64,
    lr: u64,
    sp: u64,
}

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
}

global_asm!(
    ".section .text",
    ".global __switch_to",
    "__switch_to:",
    "    stp x19, x20, [x0, #16 * 0]",
    "    stp x21, x22, [x0, #16 * 1]",
    "    stp x23, x24, [x0, #16 * 2]",
    "    stp x25, x26, [x0, #16 * 3]",
    "    stp x27, x28, [x0, #16 * 4]",
    "    stp x29, x30, [x0, #16 * 5]",
    "    mov x9, sp",
    "    str x9, [x0, #16 * 6]",
    "    ldp x19, x20, [x1, #16 * 0]",
    "    ldp x21, x22, [x1, #16 * 1]",
    "    ldp x23, x24, [x1, #16 * 2]",
    "    ldp x25, x26, [x1, #16 * 3]",
    "    ldp x27, x28, [x1, #16 * 4]",
    "    ldp x29, x30, [x1, #16 * 5]",
    "    ldr x9, [x1, #16 * 6]",
    "    mov sp, x9",
    "    ret",
    // A new thread 'returns' here from its first switch: x19 = entry,
    // x20 = argument; a zero frame pointer ends backtraces.
    ".global __thread_start",
    "__thread_start:",
    "    mov x29, xzr",
    "    mov x0, x20",
    "    blr x19",
    "    brk #0",
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
