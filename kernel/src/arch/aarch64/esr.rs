//! Decoding the Exception Syndrome Register: why an exception was taken.
//! Arm ARM (DDI 0487) D19.2 "ESR_EL1" and D24.2.40 ISS encodings (section
//! numbers vary by revision; the field names do not). Pure logic, host-tested.

use core::fmt;

/// ESR_EL1.EC, the exception class (bits 31:26).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExceptionClass {
    /// 0x00: an unknown reason, chiefly an undefined or unallocated instruction
    /// (Linux: `ESR_ELx_EC_UNKNOWN`, which `do_el0_undef` handles).
    Unknown,
    /// 0x01: a WFI or WFE trapped by SCTLR_EL1.nTWI/nTWE (Linux:
    /// `ESR_ELx_EC_WFx`).
    WfiWfe,
    /// 0x07: an FP/SIMD instruction trapped because CPACR_EL1.FPEN forbids it
    /// (Linux: `ESR_ELx_EC_FP_ASIMD`).
    FpSimdAccess,
    /// 0x0e: illegal execution state, PSTATE.IL set by an exception return to
    /// an invalid mode or with a bad SPSR (Linux: `ESR_ELx_EC_ILL`).
    IllegalState,
    /// 0x15: an SVC instruction in AArch64 state, a system call; the number is
    /// in x8 (Linux: `ESR_ELx_EC_SVC64`).
    Svc64,
    /// 0x18: a trapped MSR, MRS or system instruction, e.g. an EL0 cache
    /// maintenance or CTR_EL0 read that SCTLR_EL1 traps (Linux:
    /// `ESR_ELx_EC_SYS64`).
    SysRegTrap,
    /// 0x20: an instruction abort from EL0, a user instruction fetch that
    /// faulted (Linux: `ESR_ELx_EC_IABT_LOW`).
    InstrAbortLowerEl,
    /// 0x21: an instruction abort at EL1, a kernel instruction fetch that
    /// faulted (Linux: `ESR_ELx_EC_IABT_CUR`).
    InstrAbortSameEl,
    /// 0x22: an instruction fetch from a PC that is not 4-byte aligned (Linux:
    /// `ESR_ELx_EC_PC_ALIGN`).
    PcAlignment,
    /// 0x24: a data abort from EL0, a user load or store that faulted (Linux:
    /// `ESR_ELx_EC_DABT_LOW`).
    DataAbortLowerEl,
    /// 0x25: a data abort at EL1, a kernel load or store that faulted; uaccess
    /// faults are these (Linux: `ESR_ELx_EC_DABT_CUR`).
    DataAbortSameEl,
    /// 0x26: SP not 16-byte aligned when used as a load or store base, with
    /// SCTLR_EL1.SA/SA0 checking (Linux: `ESR_ELx_EC_SP_ALIGN`).
    SpAlignment,
    /// 0x2c: a floating-point exception from AArch64 that FPCR enabled as a trap
    /// (Linux: `ESR_ELx_EC_FP_EXC64`).
    Fp64,
    /// 0x2f: an SError interrupt, an asynchronous abort such as a bus error
    /// on a buffered write (Linux: `ESR_ELx_EC_SERROR`).
    SError,
    /// 0x30: a hardware breakpoint hit at EL0 (Linux: `ESR_ELx_EC_BREAKPT_LOW`).
    BreakpointLowerEl,
    /// 0x31: a hardware breakpoint hit at EL1 (Linux: `ESR_ELx_EC_BREAKPT_CUR`).
    BreakpointSameEl,
    /// 0x32: a single step (MDSCR_EL1.SS) completed at EL0 (Linux:
    /// `ESR_ELx_EC_SOFTSTP_LOW`).
    SoftwareStepLowerEl,
    /// 0x33: a single step completed at EL1 (Linux: `ESR_ELx_EC_SOFTSTP_CUR`).
    SoftwareStepSameEl,
    /// 0x34: a hardware watchpoint hit by an EL0 access (Linux:
    /// `ESR_ELx_EC_WATCHPT_LOW`).
    WatchpointLowerEl,
    /// 0x35: a hardware watchpoint hit by an EL1 access (Linux:
    /// `ESR_ELx_EC_WATCHPT_CUR`).
    WatchpointSameEl,
    /// 0x3c: a BRK instruction in AArch64 state, its immediate in `ISS[15:0]`,
    /// e.g. the `brk #0` `__thread_start` reaches if a thread's entry returns
    /// (Linux: `ESR_ELx_EC_BRK64`).
    Brk64,
    /// Any class not named above, with its raw 6-bit EC.
    Other(u8),
}

impl ExceptionClass {
    /// Decodes the EC field of a raw ESR value (Linux: `ESR_ELx_EC(esr)`).
    pub fn from_esr(esr: u64) -> Self {
        use ExceptionClass::*;
        match ((esr >> 26) & 0x3f) as u8 {
            0x00 => Unknown,
            0x01 => WfiWfe,
            0x07 => FpSimdAccess,
            0x0e => IllegalState,
            0x15 => Svc64,
            0x18 => SysRegTrap,
            0x20 => InstrAbortLowerEl,
            0x21 => InstrAbortSameEl,
            0x22 => PcAlignment,
            0x24 => DataAbortLowerEl,
            0x25 => DataAbortSameEl,
            0x26 => SpAlignment,
            0x2c => Fp64,
            0x2f => SError,
            0x30 => BreakpointLowerEl,
            0x31 => BreakpointSameEl,
            0x32 => SoftwareStepLowerEl,
            0x33 => SoftwareStepSameEl,
            0x34 => WatchpointLowerEl,
            0x35 => WatchpointSameEl,
            0x3c => Brk64,
            ec => Other(ec),
        }
    }

    /// An instruction or data abort from either EL: the classes whose ISS
    /// holds a fault status code (`FaultStatus`).
    pub fn is_abort(self) -> bool {
        matches!(
            self,
            Self::InstrAbortLowerEl
                | Self::InstrAbortSameEl
                | Self::DataAbortLowerEl
                | Self::DataAbortSameEl
        )
    }
}

/// The fault status code of an instruction or data abort (ISS bits 5:0).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FaultStatus {
    /// FSC 0b0000LL: address size fault at lookup level LL, an output or table
    /// address wider than the configured size (Linux: `ESR_ELx_FSC_ADDRSZ`).
    AddressSize(i8),
    /// FSC 0b0001LL: translation fault at level LL, the walk met an invalid
    /// entry; an ordinary page fault (Linux: `ESR_ELx_FSC_FAULT`).
    Translation(i8),
    /// FSC 0b0010LL: access flag fault at level LL (1-3), the leaf's AF was
    /// clear (Linux: `ESR_ELx_FSC_ACCESS`).
    AccessFlag(i8),
    /// FSC 0b0011LL: permission fault at level LL (1-3), the entry forbids the
    /// access, e.g. a write to a copy-on-write page (Linux: `ESR_ELx_FSC_PERM`).
    Permission(i8),
    /// FSC 0x21: an unaligned access where alignment is required, e.g. an
    /// exclusive or a Device-memory access (Linux: `ESR_ELx_FSC_ALIGN`).
    Alignment,
    /// FSC 0x30: TLB conflict abort, more than one TLB entry matched the
    /// address, e.g. after a break-before-make violation.
    TlbConflict,
    /// FSC 0x10: synchronous external abort, not on a table walk: the memory
    /// system answered the access with an error (Linux: `ESR_ELx_FSC_EXTABT`).
    SyncExternal,
    /// Any other fault status code, raw (bits 5:0).
    Other(u8),
}

impl FaultStatus {
    /// Decodes ISS.IFSC/DFSC (bits 5:0) of a raw ESR value; meaningful only for
    /// aborts, which `Esr::fault_status` checks.
    pub fn from_esr(esr: u64) -> Self {
        let fsc = (esr & 0x3f) as u8;
        let level = (fsc & 3) as i8;
        match fsc {
            0x00..=0x03 => FaultStatus::AddressSize(level),
            0x04..=0x07 => FaultStatus::Translation(level),
            0x09..=0x0b => FaultStatus::AccessFlag(level),
            0x0d..=0x0f => FaultStatus::Permission(level),
            0x10 => FaultStatus::SyncExternal,
            0x21 => FaultStatus::Alignment,
            0x30 => FaultStatus::TlbConflict,
            _ => FaultStatus::Other(fsc),
        }
    }
}

/// A decoded ESR value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Esr(pub u64);

impl Esr {
    /// The exception class, bits 31:26 (ESR_ELx.EC).
    pub fn class(self) -> ExceptionClass {
        ExceptionClass::from_esr(self.0)
    }

    /// Is it an SVC from AArch64 (EC 0x15)? The system call path's first
    /// question, answered without decoding the class (Linux:
    /// `el0t_64_sync_handler`'s `switch (ESR_ELx_EC(esr))`).
    pub fn is_svc64(self) -> bool {
        (self.0 >> 26) & 0x3f == 0x15
    }

    /// For aborts: what went wrong, and at which translation level.
    pub fn fault_status(self) -> Option<FaultStatus> {
        self.class()
            .is_abort()
            .then(|| FaultStatus::from_esr(self.0))
    }

    /// Is it a data abort, from EL0 or EL1 (EC 0x24 or 0x25)? Tested on
    /// the raw bits, as `is_svc64`, for the fault path.
    pub fn is_data_abort(self) -> bool {
        (self.0 >> 26) & 0x3e == 0x24
    }

    /// Is it an instruction abort, from EL0 or EL1 (EC 0x20 or 0x21)?
    pub fn is_instr_abort(self) -> bool {
        (self.0 >> 26) & 0x3e == 0x20
    }

    /// For data aborts: was it a write (ISS.WnR, bit 6)? Cache maintenance
    /// (ISS.CM, bit 8) also reports WnR = 1, so exclude it.
    pub fn is_write(self) -> bool {
        self.is_data_abort() && self.0 & (1 << 6) != 0 && self.0 & (1 << 8) == 0
    }
}

impl fmt::Display for Esr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:#010x} ({:?}", self.0, self.class())?;
        if let Some(fs) = self.fault_status() {
            write!(f, ", {:?}", fs)?;
            if matches!(
                self.class(),
                ExceptionClass::DataAbortLowerEl | ExceptionClass::DataAbortSameEl
            ) {
                f.write_str(if self.is_write() { ", write" } else { ", read" })?;
            }
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn classes_decode_by_name() {
        assert_eq!(Esr(0x9600_0004).class(), ExceptionClass::DataAbortSameEl);
        assert_eq!(Esr(0x9200_0004).class(), ExceptionClass::DataAbortLowerEl);
        assert_eq!(Esr(0x5600_0000).class(), ExceptionClass::Svc64);
        assert_eq!(Esr(0x8600_000f).class(), ExceptionClass::InstrAbortSameEl);
        assert_eq!(Esr(0xf200_0001).class(), ExceptionClass::Brk64);
        assert_eq!(Esr(0x1fe0_0000).class(), ExceptionClass::FpSimdAccess);
        assert_eq!(Esr(0x0200_0000).class(), ExceptionClass::Unknown);
        assert_eq!(Esr(0x3f << 26).class(), ExceptionClass::Other(0x3f));
    }

    #[test]
    fn raw_class_tests_agree_with_the_decoded_class() {
        for ec in 0..64u64 {
            let esr = Esr(ec << 26 | 0x4f);
            use ExceptionClass::*;
            let class = esr.class();
            assert_eq!(esr.is_svc64(), class == Svc64, "EC {ec:#x}");
            let data = matches!(class, DataAbortLowerEl | DataAbortSameEl);
            assert_eq!(esr.is_data_abort(), data, "EC {ec:#x}");
            let instr = matches!(class, InstrAbortLowerEl | InstrAbortSameEl);
            assert_eq!(esr.is_instr_abort(), instr, "EC {ec:#x}");
            // WnR is set in every one of them; only data aborts write.
            assert_eq!(esr.is_write(), data, "EC {ec:#x}");
        }
    }

    #[test]
    fn data_abort_details() {
        // Translation fault, level 3, on a read.
        let e = Esr(0x9600_0007);
        assert_eq!(e.fault_status(), Some(FaultStatus::Translation(3)));
        assert!(!e.is_write());
        // Permission fault, level 3, write (WnR).
        let e = Esr(0x9600_004f);
        assert_eq!(e.fault_status(), Some(FaultStatus::Permission(3)));
        assert!(e.is_write());
        // Cache maintenance sets WnR but is not a write.
        assert!(!Esr(0x9600_0147).is_write());
        // Access flag fault at level 2 (a block).
        assert_eq!(
            Esr(0x9600_000a).fault_status(),
            Some(FaultStatus::AccessFlag(2))
        );
        assert_eq!(
            Esr(0x9600_0021).fault_status(),
            Some(FaultStatus::Alignment)
        );
        // Not an abort: no fault status.
        assert_eq!(Esr(0x5600_0000).fault_status(), None);
    }

    #[test]
    fn display_names_everything() {
        let s = format!("{}", Esr(0x9600_004f));
        assert_eq!(s, "0x9600004f (DataAbortSameEl, Permission(3), write)");
        assert_eq!(format!("{}", Esr(0xf200_0001)), "0xf2000001 (Brk64)");
    }
}
