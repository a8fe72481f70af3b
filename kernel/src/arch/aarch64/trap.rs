//! Exceptions taken by the kernel: the trap frame, the handlers that the
//! vectors in `vectors.S` call, and exception-table fixups (Linux:
//! `arch/arm64/kernel/entry-common.c`, `arch/arm64/mm/extable.c`).
//!
//! A kernel data abort at an instruction listed in `__ex_table` is expected
//! (a probe, later a user copy): it resumes at the fixup with x0 = ESR and
//! x1 = FAR. Any other unexpected exception prints the decoded ESR, FAR,
//! ELR and registers, then panics.

use core::arch::{asm, global_asm};
use core::fmt;

use super::esr::Esr;

/// Registers saved on exception entry; layout shared with `vectors.S`.
#[repr(C)]
pub struct TrapFrame {
    pub x: [u64; 31],
    pub sp_el0: u64,
    pub elr: u64,
    pub spsr: u64,
    /// Frame record (x29, elr + 4) so backtraces continue past the exception.
    frame_record: [u64; 2],
}

const _: () = assert!(core::mem::size_of::<TrapFrame>() == 36 * 8);

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

fn read_esr_far() -> (Esr, u64) {
    let (esr, far): (u64, u64);
    // SAFETY: reads the syndrome registers of the exception being handled.
    unsafe {
        asm!("mrs {}, esr_el1", "mrs {}, far_el1", out(reg) esr, out(reg) far, options(nomem, nostack))
    };
    (Esr(esr), far)
}

/// One `__ex_table` entry: a faulting instruction and where to resume.
#[repr(C)]
struct ExTableEntry {
    insn: u64,
    fixup: u64,
}

fn search_exception_table(pc: u64) -> Option<u64> {
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
    table.iter().find(|e| e.insn == pc).map(|e| e.fixup)
}

#[no_mangle]
extern "C" fn handle_el1_sync(tf: &mut TrapFrame, _kind: u64) {
    let (esr, far) = read_esr_far();
    if esr.class().is_abort() {
        if let Some(fixup) = search_exception_table(tf.elr) {
            tf.x[0] = esr.0;
            tf.x[1] = far;
            tf.elr = fixup;
            return;
        }
    }
    die("kernel exception", tf, esr, far);
}

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

#[no_mangle]
extern "C" fn handle_unexpected(tf: &mut TrapFrame, kind: u64) {
    let (esr, far) = read_esr_far();
    die(VECTOR_NAMES[kind as usize & 15], tf, esr, far);
}

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
    pub esr: Esr,
    pub far: u64,
}

/// (ESR, FAR) in x0/x1 (AAPCS64 returns a 16-byte struct in registers).
#[repr(C)]
struct ProbeRet {
    esr: u64,
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
    ".quad 1b, 2b",
    ".quad 3b, 4b",
    ".popsection",
);

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
    // SAFETY: VBAR_EL1 gets the 2K-aligned table from vectors.S.
    unsafe {
        asm!("msr vbar_el1, {}", "isb", in(reg) &raw const exception_vectors, options(nostack))
    };
}
