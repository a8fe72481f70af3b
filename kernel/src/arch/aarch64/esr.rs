//! Decoding the Exception Syndrome Register: why an exception was taken.
//! Arm ARM (DDI 0487) D19.2 "ESR_EL1" and D24.2.40 ISS encodings (section
//! numbers vary by revision; the field names do not). Pure logic, host-tested.

use core::fmt;

/// ESR_EL1.EC, the exception class (bits 31:26).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExceptionClass {
    Unknown,
    WfiWfe,
    FpSimdAccess,
    IllegalState,
    Svc64,
    SysRegTrap,
    InstrAbortLowerEl,
    InstrAbortSameEl,
    PcAlignment,
    DataAbortLowerEl,
    DataAbortSameEl,
    SpAlignment,
    Fp64,
    SError,
    BreakpointLowerEl,
    BreakpointSameEl,
    SoftwareStepLowerEl,
    SoftwareStepSameEl,
    WatchpointLowerEl,
    WatchpointSameEl,
    Brk64,
    Other(u8),
}

impl ExceptionClass {
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
    AddressSize(i8),
    Translation(i8),
    AccessFlag(i8),
    Permission(i8),
    Alignment,
    TlbConflict,
    SyncExternal,
    Other(u8),
}

impl FaultStatus {
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
    pub fn class(self) -> ExceptionClass {
        ExceptionClass::from_esr(self.0)
    }

    /// For aborts: what went wrong, and at which translation level.
    pub fn fault_status(self) -> Option<FaultStatus> {
        self.class()
            .is_abort()
            .then(|| FaultStatus::from_esr(self.0))
    }

    /// For data aborts: was it a write (ISS.WnR, bit 6)? Cache maintenance
    /// (ISS.CM, bit 8) also reports WnR = 1, so exclude it.
    pub fn is_write(self) -> bool {
        matches!(
            self.class(),
            ExceptionClass::DataAbortLowerEl | ExceptionClass::DataAbortSameEl
        ) && self.0 & (1 << 6) != 0
            && self.0 & (1 << 8) == 0
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
