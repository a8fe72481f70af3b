//! Exceptions taken by the kernel: the trap frame, the handlers that the
//! vectors in `vectors.S` call, and exception-table fixups (Linux:
//! `arch/arm64/kernel/entry-common.c`, `arch/arm64/mm/extable.c`).
//!
//! A kernel data abort at an instruction listed in `__ex_table` is expected:
//! a probe resumes at its fixup with x0 = ESR and x1 = FAR; a user-memory
//! access (uaccess.rs) first tries to fault the page in, as a user access
//! would, and only then resumes at its fixup (EFAULT). Any other unexpected
//! kernel exception prints the decoded ESR, FAR, ELR and registers, then
//! panics. Exceptions from EL0 go to the system-call, page-fault and signal
//! code.

use core::arch::{asm, global_asm};
use core::fmt;
use core::mem::offset_of;

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Readable, Writeable, ESR_EL1, FAR_EL1, VBAR_EL1};

use super::esr::{Esr, ExceptionClass};
use super::fault::{access_of, do_uaccess_fault, do_user_fault};
use crate::mm::addr::USER_TOP;

/// Registers saved on exception entry by `vectors.S`, which takes the
/// offsets of these fields from here.
#[repr(C)]
pub struct TrapFrame {
    /// x0-x30 as they were at the exception (Linux: `pt_regs.regs`); the exit
    /// path restores them, so a handler's changes (a system call's result in
    /// x0) reach the interrupted code.
    pub x: [u64; 31],
    /// SP_EL0, the user stack pointer (Linux: `pt_regs.sp`); for an exception
    /// taken at EL1 it is simply what SP_EL0 held.
    pub sp_el0: u64,
    /// ELR_EL1, where `eret` resumes: the faulting or interrupted instruction,
    /// or the one after an SVC (Linux: `pt_regs.pc`).
    pub elr: u64,
    /// SPSR_EL1, the PSTATE `eret` restores: the exception level, the DAIF
    /// masks and the NZCV flags (Linux: `pt_regs.pstate`).
    pub spsr: u64,
    /// Frame record (x29, elr + 4) so backtraces continue past the exception.
    frame_record: [u64; 2],
}

// vectors.S saves and restores with paired loads and stores: x30 with
// sp_el0, elr with spsr, so each pair must lie side by side. The stack
// pointer must stay 16-byte aligned while the frame is on it.
const _: () = {
    assert!(offset_of!(TrapFrame, sp_el0) == offset_of!(TrapFrame, x) + 31 * 8);
    assert!(offset_of!(TrapFrame, spsr) == offset_of!(TrapFrame, elr) + 8);
    assert!(size_of::<TrapFrame>().is_multiple_of(16));
};

// The exception vectors, with the frame's layout defined for the
// assembler from the struct above (as the moss kernel does), so the two
// cannot drift apart.
global_asm!(
    ".equ TRAP_FRAME_SIZE, {size}",
    ".equ TF_X, {x}",
    ".equ TF_ELR, {elr}",
    ".equ TF_FRAME_RECORD, {frame_record}",
    include_str!("vectors.S"),
    size = const size_of::<TrapFrame>(),
    x = const offset_of!(TrapFrame, x),
    elr = const offset_of!(TrapFrame, elr),
    frame_record = const offset_of!(TrapFrame, frame_record),
);

/// PSTATE.I: IRQs masked.
const PSR_I: u64 = 1 << 7;

impl TrapFrame {
    /// Registers for a first entry to EL0 at `pc` with stack `sp`
    /// (SPSR = EL0t, interrupts unmasked).
    pub fn new_user(pc: u64, sp: u64) -> TrapFrame {
        TrapFrame {
            x: [0; 31],
            sp_el0: sp,
            elr: pc,
            spsr: 0,
            frame_record: [0; 2],
        }
    }
    /// Linux AArch64 system-call convention: number in x8, arguments in
    /// x0-x5, result in x0.
    pub fn syscall_nr(&self) -> usize {
        self.x[8] as usize
    }
    /// System-call argument `i`, i.e. register x`i` (0-5 by the convention
    /// above; Linux: `regs->regs[i]`).
    pub fn arg(&self, i: usize) -> u64 {
        self.x[i]
    }
    /// Sets register x`i` (0-30) to the value `v` the thread returns with.
    pub fn set_reg(&mut self, i: usize, v: u64) {
        self.x[i] = v;
    }
    /// Sets a system call's result in x0: a value, or a negative errno.
    pub fn set_return(&mut self, v: i64) {
        self.x[0] = v as u64;
    }
    /// The address `eret` resumes at, the saved ELR (Linux:
    /// `instruction_pointer`).
    pub fn pc(&self) -> u64 {
        self.elr
    }
    /// Makes `eret` resume at `pc` (Linux: `instruction_pointer_set`).
    pub fn set_pc(&mut self, pc: u64) {
        self.elr = pc;
    }
    /// The user stack pointer, the saved SP_EL0 (Linux: `user_stack_pointer`).
    pub fn sp(&self) -> u64 {
        self.sp_el0
    }
    /// Sets the user stack pointer the thread returns to EL0 with.
    pub fn set_sp(&mut self, sp: u64) {
        self.sp_el0 = sp;
    }
    /// The saved PSTATE, SPSR_EL1's value (Linux: `regs->pstate`).
    pub fn pstate(&self) -> u64 {
        self.spsr
    }
    /// Sets the PSTATE `eret` restores; for a return to user space it must
    /// name EL0, or `eret` would enter EL1 with user-chosen registers.
    pub fn set_pstate(&mut self, pstate: u64) {
        self.spsr = pstate;
    }
}

/// Leaves the kernel for EL0 with the registers in `tf`, which must lie at
/// the top of the current thread's kernel stack (where exceptions from EL0
/// will put the next trap frame).
pub fn return_to_user(tf: *const TrapFrame) -> ! {
    // SAFETY: ret_from_exception restores every register from the frame
    // and erets; nothing on this stack below the frame is needed again.
    unsafe { asm!("mov sp, {}", "b ret_from_exception", in(reg) tf, options(noreturn)) }
}

impl fmt::Display for TrapFrame {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (i, pair) in self.x.chunks(2).enumerate() {
            for (j, v) in pair.iter().enumerate() {
                write!(f, "  x{:<2} {:#018x}", 2 * i + j, v)?;
            }
            if i % 2 == 1 || pair.len() == 1 {
                writeln!(f)?;
            }
        }
        writeln!(
            f,
            "  sp_el0 {:#018x}  elr {:#018x}  spsr {:#010x}",
            self.sp_el0, self.elr, self.spsr
        )
    }
}

/// The syndrome and the faulting address of the exception being handled,
/// read first: a nested exception taken by the handler overwrites both.
fn read_esr_far() -> (Esr, u64) {
    (Esr(ESR_EL1.get()), FAR_EL1.get())
}

/// One `__ex_table` entry: a faulting instruction, where to resume, and
/// what kind of access it is.
#[repr(C)]
struct ExTableEntry {
    /// Absolute address of the instruction that may fault (Linux stores an
    /// offset relative to the entry).
    insn: u64,
    /// Where execution resumes if it faults: the handler sets ELR to it.
    fixup: u64,
    /// How such a fault is handled: `EX_PROBE` or `EX_UACCESS` (Linux:
    /// `exception_table_entry.type`).
    kind: u64,
}

/// `ExTableEntry::kind`: a probe (report ESR/FAR in x0/x1).
const EX_PROBE: u64 = 0;
/// `ExTableEntry::kind`: a user-memory access (fault the page in first).
const EX_UACCESS: u64 = 1;

/// The `__ex_table` entry for the instruction at `pc`, if it has one, by a
/// linear search of the short table (Linux: `search_exception_tables`,
/// over a sorted table).
fn search_exception_table(pc: u64) -> Option<&'static ExTableEntry> {
    extern "C" {
        static __start___ex_table: ExTableEntry;
        static __stop___ex_table: ExTableEntry;
    }
    // SAFETY: the linker script brackets the table with these symbols.
    let table = unsafe {
        let start = &raw const __start___ex_table;
        let stop = &raw const __stop___ex_table;
        core::slice::from_raw_parts(start, stop.offset_from(start) as usize)
    };
    table.iter().find(|e| e.insn == pc)
}

/// A synchronous exception taken by the kernel itself (vector slot 4;
/// Linux: `el1h_64_sync_handler`): an abort at an `__ex_table` instruction
/// is fixed up as its kind says; anything else is fatal.
#[no_mangle]
extern "C" fn handle_el1_sync(tf: &mut TrapFrame, _kind: u64) {
    let (esr, far) = read_esr_far();
    let entry = esr
        .class()
        .is_abort()
        .then(|| search_exception_table(tf.elr))
        .flatten();
    match entry.map(|e| (e.kind, e.fixup)) {
        Some((EX_UACCESS, fixup)) => {
            // The copy touched user memory: resolve it as a user fault
            // would (that may sleep: let interrupts in if they were on),
            // and retry the instruction if that worked.
            if tf.spsr & PSR_I == 0 {
                super::cpu::local_irq_enable();
            }
            let resolved = match access_of(esr) {
                Some(access) if (far as usize) < USER_TOP => do_uaccess_fault(far as usize, access),
                _ => false,
            };
            super::cpu::local_irq_save();
            if !resolved {
                tf.elr = fixup;
            }
        }
        Some((EX_PROBE, fixup)) => {
            tf.x[0] = esr.0;
            tf.x[1] = far;
            tf.elr = fixup;
        }
        _ => die("kernel exception", tf, esr, far),
    }
}

/// A synchronous exception from user space: a system call, a page fault,
/// or something that becomes a signal (Linux: `el0t_64_sync_handler`).
#[no_mangle]
extern "C" fn handle_el0_sync(tf: &mut TrapFrame, _kind: u64) {
    let (esr, far) = read_esr_far();
    super::cpu::local_irq_enable();
    if esr.is_svc64() {
        el0_svc(tf)
    } else {
        el0_other(tf, esr, far)
    }
}

/// A system call, then the way back to EL0 (Linux: `el0_svc`). Each kind
/// of exception has its own function, as in Linux, so each saves only the
/// registers it uses: inlined together, every fault would save the
/// syscall table's.
#[inline(never)]
fn el0_svc(tf: &mut TrapFrame) {
    crate::syscall::syscall(tf);
    crate::task::exit_to_user(tf);
}

/// Any other synchronous exception from EL0, then the way back (Linux:
/// `el0_da`, `el0_ia`, `el0_pc`, `el0_sp`, `el0_dbg`, `el0_inv`): a page
/// fault, or a signal.
#[inline(never)]
fn el0_other(tf: &mut TrapFrame, esr: Esr, far: u64) {
    use crate::task::signal::{self, force_fault_signal};
    // An abort from EL0 is EL0's, whichever of the two classes it has.
    if let Some(access) = access_of(esr) {
        do_user_fault(far as usize, access);
        crate::task::exit_to_user(tf);
        return;
    }
    match esr.class() {
        ExceptionClass::PcAlignment | ExceptionClass::SpAlignment => {
            force_fault_signal(signal::SIGBUS, signal::BUS_ADRALN, far)
        }
        ExceptionClass::Brk64 => force_fault_signal(signal::SIGTRAP, signal::TRAP_BRKPT, tf.pc()),
        _ => force_fault_signal(signal::SIGILL, signal::ILL_ILLOPC, tf.pc()),
    }
    crate::task::exit_to_user(tf);
}

/// What each of the 16 vector slots catches, indexed by the slot's `kind`:
/// EL1 with SP_EL0 (t), EL1 with SP_EL1 (h), EL0 AArch64 and EL0 AArch32,
/// each with sync, IRQ, FIQ and SError.
const VECTOR_NAMES: [&str; 16] = [
    "EL1t sync",
    "EL1t IRQ",
    "EL1t FIQ",
    "EL1t SError",
    "EL1h sync",
    "EL1h IRQ",
    "EL1h FIQ",
    "EL1h SError",
    "EL0 sync",
    "EL0 IRQ",
    "EL0 FIQ",
    "EL0 SError",
    "EL0 (AArch32) sync",
    "EL0 (AArch32) IRQ",
    "EL0 (AArch32) FIQ",
    "EL0 (AArch32) SError",
];

/// The vector of every slot that should never be taken (the SP_EL0 and
/// AArch32 slots, FIQ, SError): reports it and panics (Linux:
/// `__panic_unhandled`).
#[no_mangle]
extern "C" fn handle_unexpected(tf: &mut TrapFrame, kind: u64) {
    let (esr, far) = read_esr_far();
    die(VECTOR_NAMES[kind as usize & 15], tf, esr, far);
}

/// Prints the fatal exception `what` with its decoded ESR, FAR, ELR and
/// every register, then panics (Linux: arm64's `die`); the console first
/// enters panic mode so the report gets out.
fn die(what: &str, tf: &TrapFrame, esr: Esr, far: u64) -> ! {
    crate::console::enter_panic_mode();
    println!(
        "\nUnexpected {} on CPU {}: ESR {}\n  FAR {:#018x}  ELR {:#018x}",
        what,
        super::cpu::cpu_id(),
        esr,
        far,
        tf.elr
    );
    print!("{}", tf);
    panic!("unhandled {} at {:#x}", what, tf.elr);
}

/// What a faulting probe saw: the decoded syndrome and the faulting address.
#[derive(Copy, Clone, Debug)]
pub struct ProbeFault {
    /// The fault's ESR_EL1: why the access failed.
    pub esr: Esr,
    /// The fault's FAR_EL1: the address the access faulted on.
    pub far: u64,
}

/// (ESR, FAR) in x0/x1 (AAPCS64 returns a 16-byte struct in registers).
#[repr(C)]
struct ProbeRet {
    /// x0: the raw ESR of the fault, or 0 if the access succeeded.
    esr: u64,
    /// x1: the FAR of the fault, or 0 if the access succeeded.
    far: u64,
}

extern "C" {
    fn __probe_load(addr: usize, out: *mut u64) -> ProbeRet;
    fn __probe_store(addr: usize, value: u64) -> ProbeRet;
}

// Each probe's single access is in __ex_table; its fixup returns the ESR and
// FAR the handler put in x0/x1. The normal path returns (0, 0).
global_asm!(
    ".section .text",
    ".global __probe_load",
    "__probe_load:",
    "1: ldr x2, [x0]",
    "   str x2, [x1]",
    "   mov x0, xzr",
    "   mov x1, xzr",
    "2: ret",
    ".global __probe_store",
    "__probe_store:",
    "3: str x1, [x0]",
    "   mov x0, xzr",
    "   mov x1, xzr",
    "4: ret",
    ".pushsection __ex_table, \"a\"",
    ".quad 1b, 2b, 0",
    ".quad 3b, 4b, 0",
    ".popsection",
);

/// Ok when the probe returned ESR 0, i.e. did not fault (no abort has a
/// zero ESR), else the decoded fault.
fn probe_result(r: ProbeRet) -> Result<(), ProbeFault> {
    if r.esr == 0 {
        Ok(())
    } else {
        Err(ProbeFault {
            esr: Esr(r.esr),
            far: r.far,
        })
    }
}

/// Reads a u64 at `addr`, returning the fault instead of dying if it faults.
pub fn probe_load(addr: usize) -> Result<u64, ProbeFault> {
    let mut v = 0;
    // SAFETY: the access is covered by the exception table, so a fault
    // returns here instead of panicking; `v` is a valid out-pointer.
    probe_result(unsafe { __probe_load(addr, &mut v) }).map(|_| v)
}

/// Writes a u64 at `addr`, returning the fault instead of dying if it faults.
///
/// # Safety
/// If the store succeeds it really writes: `addr` must be memory the caller
/// may clobber (or expects to fault).
pub unsafe fn probe_store(addr: usize, value: u64) -> Result<(), ProbeFault> {
    // SAFETY: as probe_load; the caller vouches for the write.
    probe_result(unsafe { __probe_store(addr, value) })
}

/// Installs the vector table on this CPU.
pub fn init_this_cpu() {
    extern "C" {
        static exception_vectors: u8;
    }
    // SAFETY: a safe write that memory safety still rests on: every
    // exception from here on runs the code at VBAR_EL1, which must be the
    // 2K-aligned table of vectors.S, saving the frame this file reads.
    VBAR_EL1.set(&raw const exception_vectors as u64);
    barrier::isb(barrier::SY);
}
