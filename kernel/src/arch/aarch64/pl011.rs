//! PL011 UART, the console of QEMU `virt` (Arm PrimeCell UART TRM, DDI 0183).
//!
//! Polled output: the console must work from any CPU, with interrupts
//! masked and inside a panic, so it never waits for an interrupt. Input
//! raises the receive interrupt, whose handler drains the FIFO into the
//! tty (`fs/tty`).

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_bitfields;
use tock_registers::registers::{ReadOnly, ReadWrite, WriteOnly};

register_bitfields! [u32,
    /// Flag register (PL011 TRM 3.3.3).
    FR [
        TXFF OFFSET(5) NUMBITS(1) [],
        RXFE OFFSET(4) NUMBITS(1) [],
        BUSY OFFSET(3) NUMBITS(1) []
    ],
    /// Control register (PL011 TRM 3.3.8).
    CR [
        RXE OFFSET(9) NUMBITS(1) [],
        TXE OFFSET(8) NUMBITS(1) [],
        UARTEN OFFSET(0) NUMBITS(1) []
    ],
    /// Interrupt mask, raw/masked status and clear registers (PL011 TRM
    /// 3.3.10-3.3.13): receive and receive-timeout.
    INT [
        RTI OFFSET(6) NUMBITS(1) [],
        RXI OFFSET(4) NUMBITS(1) []
    ]
];

#[repr(C)]
struct Registers {
    dr: ReadWrite<u32>,
    _reserved0: [u32; 5],
    fr: ReadOnly<u32, FR::Register>,
    _reserved1: [u32; 5],
    cr: WriteOnly<u32, CR::Register>,
    _ifls: u32,
    imsc: ReadWrite<u32, INT::Register>,
    _ris: u32,
    _mis: u32,
    icr: WriteOnly<u32, INT::Register>,
}

pub struct Pl011 {
    regs: *const Registers,
}

// SAFETY: the registers are MMIO at a fixed address; callers serialise
// access through the console lock.
unsafe impl Send for Pl011 {}
// SAFETY: as for Send: shared use goes through the console lock.
unsafe impl Sync for Pl011 {}

impl Pl011 {
    /// # Safety
    /// `base` must be the kernel virtual address of a mapped PL011.
    pub const unsafe fn new(base: usize) -> Self {
        Pl011 {
            regs: base as *const Registers,
        }
    }

    fn regs(&self) -> &Registers {
        // SAFETY: `new`'s contract: base points at the device's registers.
        unsafe { &*self.regs }
    }

    /// QEMU's PL011 needs no baud set-up; just enable transmit and receive.
    pub fn init(&self) {
        self.regs()
            .cr
            .write(CR::UARTEN::SET + CR::TXE::SET + CR::RXE::SET);
    }

    pub fn putc(&self, c: u8) {
        while self.regs().fr.is_set(FR::TXFF) {
            core::hint::spin_loop();
        }
        self.regs().dr.set(c as u32);
    }

    /// Raise the interrupt when a byte arrives (or has waited in the FIFO).
    pub fn enable_rx_interrupt(&self) {
        self.regs().imsc.write(INT::RXI::SET + INT::RTI::SET);
    }

    /// Acknowledges the receive interrupts; call it before draining the
    /// FIFO, so a byte that arrives meanwhile raises them again.
    pub fn clear_rx_interrupt(&self) {
        self.regs().icr.write(INT::RXI::SET + INT::RTI::SET);
    }

    pub fn getc(&self) -> Option<u8> {
        if self.regs().fr.is_set(FR::RXFE) {
            None
        } else {
            Some(self.regs().dr.get() as u8)
        }
    }
}
