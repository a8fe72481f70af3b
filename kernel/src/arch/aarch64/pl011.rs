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
        /// UARTFR.TXFF: the transmit FIFO is full; wait before writing UARTDR.
        TXFF OFFSET(5) NUMBITS(1) [],
        /// UARTFR.RXFE: the receive FIFO is empty, nothing to read.
        RXFE OFFSET(4) NUMBITS(1) [],
        /// UARTFR.BUSY: the UART is still sending, from the FIFO or the shift
        /// register.
        BUSY OFFSET(3) NUMBITS(1) []
    ],
    /// Control register (PL011 TRM 3.3.8).
    CR [
        /// UARTCR.RXE: receive enable.
        RXE OFFSET(9) NUMBITS(1) [],
        /// UARTCR.TXE: transmit enable.
        TXE OFFSET(8) NUMBITS(1) [],
        /// UARTCR.UARTEN: the UART enable; clear, it neither sends nor receives.
        UARTEN OFFSET(0) NUMBITS(1) []
    ],
    /// Interrupt mask, raw/masked status and clear registers (PL011 TRM
    /// 3.3.10-3.3.13): receive and receive-timeout.
    INT [
        /// Receive timeout: bytes have waited in the receive FIFO for 32 bit
        /// periods without reaching the trigger level.
        RTI OFFSET(6) NUMBITS(1) [],
        /// Receive: the receive FIFO has reached its trigger level.
        RXI OFFSET(4) NUMBITS(1) []
    ]
];

/// The PL011's register block, UARTDR to UARTICR (PL011 TRM 3.2); the
/// registers this driver never uses are padding.
#[repr(C)]
struct Registers {
    /// 0x000 UARTDR: a write sends a byte; a read takes one from the receive
    /// FIFO (bits 11:8 carry its error flags).
    dr: ReadWrite<u32>,
    /// 0x004-0x014: UARTRSR/UARTECR and reserved space, unused.
    _reserved0: [u32; 5],
    /// 0x018 UARTFR, the flag register: FIFO full or empty, UART busy.
    fr: ReadOnly<u32, FR::Register>,
    /// 0x01c-0x02c: reserved, UARTILPR, the baud divisors UARTIBRD/UARTFBRD
    /// and UARTLCR_H, none of which QEMU needs set.
    _reserved1: [u32; 5],
    /// 0x030 UARTCR, the control register: UART, transmit and receive enables.
    cr: WriteOnly<u32, CR::Register>,
    /// 0x034 UARTIFLS: the FIFO levels that raise interrupts, left at reset.
    _ifls: u32,
    /// 0x038 UARTIMSC: which interrupts are unmasked, i.e. reach the GIC.
    imsc: ReadWrite<u32, INT::Register>,
    /// 0x03c UARTRIS: raw interrupt status, unused.
    _ris: u32,
    /// 0x040 UARTMIS: masked interrupt status, unused.
    _mis: u32,
    /// 0x044 UARTICR: writing 1 to a bit clears that interrupt.
    icr: WriteOnly<u32, INT::Register>,
}

/// A PL011 UART at a fixed MMIO address (Linux:
/// `drivers/tty/serial/amba-pl011.c`, much reduced).
pub struct Pl011 {
    /// Kernel virtual address of the register block, mapped as Device memory.
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

    /// The register block, valid for as long as `self` by `new`'s contract.
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

    /// Sends byte `c`, spinning while the transmit FIFO is full (UARTFR.TXFF);
    /// polled, so it works with interrupts masked (Linux: `pl011_putc`).
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

    /// The next byte from the receive FIFO, or None when it is empty
    /// (UARTFR.RXFE); never waits.
    pub fn getc(&self) -> Option<u8> {
        if self.regs().fr.is_set(FR::RXFE) {
            None
        } else {
            Some(self.regs().dr.get() as u8)
        }
    }
}
