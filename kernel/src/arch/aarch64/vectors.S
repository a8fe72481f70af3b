// Exception vector table and trap-frame save/restore (Linux:
// arch/arm64/kernel/entry.S). Every exception builds a TrapFrame
// (trap.rs) on the current kernel stack and calls into Rust with x0 = frame.
//
// The frame's size and offsets are not written here: trap.rs assembles this
// file with them defined from `struct TrapFrame` itself (offset_of!):
// TRAP_FRAME_SIZE, and TF_X, TF_ELR, TF_FRAME_RECORD for its fields. trap.rs
// also asserts what the paired stores below assume: sp_el0 follows x[30],
// spsr follows elr.

.macro kernel_entry
    sub     sp, sp, #TRAP_FRAME_SIZE
    stp     x0, x1, [sp, #TF_X + 8 * 0]
    stp     x2, x3, [sp, #TF_X + 8 * 2]
    stp     x4, x5, [sp, #TF_X + 8 * 4]
    stp     x6, x7, [sp, #TF_X + 8 * 6]
    stp     x8, x9, [sp, #TF_X + 8 * 8]
    stp     x10, x11, [sp, #TF_X + 8 * 10]
    stp     x12, x13, [sp, #TF_X + 8 * 12]
    stp     x14, x15, [sp, #TF_X + 8 * 14]
    stp     x16, x17, [sp, #TF_X + 8 * 16]
    stp     x18, x19, [sp, #TF_X + 8 * 18]
    stp     x20, x21, [sp, #TF_X + 8 * 20]
    stp     x22, x23, [sp, #TF_X + 8 * 22]
    stp     x24, x25, [sp, #TF_X + 8 * 24]
    stp     x26, x27, [sp, #TF_X + 8 * 26]
    stp     x28, x29, [sp, #TF_X + 8 * 28]
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #TF_X + 8 * 30]      // x30, sp_el0
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #TF_ELR]             // elr, spsr
    // A frame record (fp, lr) = (interrupted x29, interrupted pc + 4), so a
    // backtrace taken in the handler continues into the interrupted code;
    // the unwinder prints lr - 4, which is then exactly the faulting pc.
    add     x24, x22, #4
    stp     x29, x24, [sp, #TF_FRAME_RECORD]
    add     x29, sp, #TF_FRAME_RECORD
.endm

.macro kernel_exit
    ldp     x22, x23, [sp, #TF_ELR]
    msr     elr_el1, x22
    msr     spsr_el1, x23
    ldp     x30, x21, [sp, #TF_X + 8 * 30]
    msr     sp_el0, x21
    ldp     x0, x1, [sp, #TF_X + 8 * 0]
    ldp     x2, x3, [sp, #TF_X + 8 * 2]
    ldp     x4, x5, [sp, #TF_X + 8 * 4]
    ldp     x6, x7, [sp, #TF_X + 8 * 6]
    ldp     x8, x9, [sp, #TF_X + 8 * 8]
    ldp     x10, x11, [sp, #TF_X + 8 * 10]
    ldp     x12, x13, [sp, #TF_X + 8 * 12]
    ldp     x14, x15, [sp, #TF_X + 8 * 14]
    ldp     x16, x17, [sp, #TF_X + 8 * 16]
    ldp     x18, x19, [sp, #TF_X + 8 * 18]
    ldp     x20, x21, [sp, #TF_X + 8 * 20]
    ldp     x22, x23, [sp, #TF_X + 8 * 22]
    ldp     x24, x25, [sp, #TF_X + 8 * 24]
    ldp     x26, x27, [sp, #TF_X + 8 * 26]
    ldp     x28, x29, [sp, #TF_X + 8 * 28]
    add     sp, sp, #TRAP_FRAME_SIZE
    eret
.endm

// One 128-byte slot per (source, kind): save the frame, call the handler
// with x0 = frame and x1 = the slot's kind, return through kernel_exit.
// The whole save runs inside the slot (28 of its 32 instructions); the
// .org at its end stops the assembler if it ever outgrows it, instead of
// letting it run silently into the next slot (Linux: kernel_ventry).
//
// The .cfi lines tell a debugger how to unwind through the slot, as the
// frame record tells the kernel's own unwinder: once the frame is saved,
// the "caller" of a kernel exception (el 1) is the interrupted code, with
// its sp above the frame and, as return address, the frame record's
// ELR + 4 (a debugger looks up the line of return address - 1: the
// interrupted instruction's). Before that, and for every exception from
// user space (el 0), the slot is the outermost frame: gdb's backtrace
// ends here, as Linux's final frame record ends an EL0 entry's.
.macro vector_entry handler, kind, el
.balign 128
.Lvector_start\@:
    .cfi_startproc
    .cfi_undefined x30
    kernel_entry
    .if \el == 1
    .cfi_def_cfa sp, TRAP_FRAME_SIZE
    .cfi_offset x29, TF_X + 8 * 29 - TRAP_FRAME_SIZE
    .cfi_offset x30, TF_FRAME_RECORD + 8 - TRAP_FRAME_SIZE
    .endif
    mov     x0, sp
    mov     x1, #\kind
    bl      \handler
    b       ret_from_exception
    .cfi_endproc
    .org    .Lvector_start\@ + 128
.endm

.section .text
.balign 2048
.global exception_vectors
exception_vectors:
    // Current EL with SP_EL0: never used (the kernel runs on SP_EL1).
    vector_entry handle_unexpected, 0, 1
    vector_entry handle_unexpected, 1, 1
    vector_entry handle_unexpected, 2, 1
    vector_entry handle_unexpected, 3, 1
    // Current EL with SP_ELx: the kernel.
    vector_entry handle_el1_sync, 4, 1
    vector_entry handle_irq, 5, 1
    vector_entry handle_unexpected, 6, 1
    vector_entry handle_unexpected, 7, 1
    // Lower EL, AArch64: user space.
    vector_entry handle_el0_sync, 8, 0
    vector_entry handle_el0_irq, 9, 0
    vector_entry handle_unexpected, 10, 0
    vector_entry handle_unexpected, 11, 0
    // Lower EL, AArch32: not supported.
    vector_entry handle_unexpected, 12, 0
    vector_entry handle_unexpected, 13, 0
    vector_entry handle_unexpected, 14, 0
    vector_entry handle_unexpected, 15, 0

// Interrupts are masked from here to the eret: an IRQ taken between
// restoring ELR/SPSR and the eret would overwrite them.
.global ret_from_exception
ret_from_exception:
    msr     daifset, #2
    kernel_exit
