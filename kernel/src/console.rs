//! The kernel console: `print!`/`println!` from any CPU, from interrupt
//! handlers and from inside a panic; the text is kept in the kernel log
//! too (`printk`, what dmesg reads).
//!
//! One lock serialises whole lines. It remembers its owner CPU so that a
//! fault taken while printing (same CPU) prints instead of deadlocking, and a
//! panicking CPU stops waiting after a bounded spin: the panic message matters
//! more than tidy output.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::arch::cpu::{cpu_id, local_irq_restore, local_irq_save};
use crate::arch::pl011::Pl011;
use crate::mm::addr::{phys_to_virt, PhysAddr};

/// `OWNER` when no CPU holds the console lock.
const NO_OWNER: usize = usize::MAX;
/// How long a panicking CPU waits for the console before printing anyway.
const PANIC_SPIN_LIMIT: usize = 10_000_000;

/// The PL011's virtual address in the linear map; 0 until `init` (text
/// printed before then reaches only the kernel log).
static UART_VA: AtomicUsize = AtomicUsize::new(0);
/// The CPU that holds the console lock, or `NO_OWNER` (a CPU id, so a
/// nested print on the same CPU can tell it already holds it).
static OWNER: AtomicUsize = AtomicUsize::new(NO_OWNER);
/// Set once by `enter_panic_mode`: lock waits become bounded
/// (as Linux's `oops_in_progress` lets `printk` barge in).
static PANICKING: AtomicBool = AtomicBool::new(false);

/// Starts console output on the PL011 at `base` (from the DTB).
pub fn init(base: PhysAddr) {
    let va = phys_to_virt(base);
    // SAFETY: the linear map covers the UART (boot map, then the kernel map).
    unsafe { Pl011::new(va) }.init();
    UART_VA.store(va, Ordering::Release);
}

/// From now on every CPU's console lock waits are bounded.
pub fn enter_panic_mode() {
    PANICKING.store(true, Ordering::SeqCst);
}

/// The UART as a `fmt::Write` sink, turning `\n` into `\r\n` for the terminal.
struct Uart(Pl011);

impl Write for Uart {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.0.putc(b'\r');
            }
            self.0.putc(b);
        }
        Ok(())
    }
}

/// Takes the console for this CPU; returns whether we took it (false = we
/// already held it, or barged in during a panic).
fn console_lock() -> bool {
    let me = cpu_id();
    if OWNER.load(Ordering::Relaxed) == me {
        return false;
    }
    let mut spins = 0;
    while OWNER
        .compare_exchange_weak(NO_OWNER, me, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        spins += 1;
        if PANICKING.load(Ordering::Relaxed) && spins > PANIC_SPIN_LIMIT {
            return false;
        }
        core::hint::spin_loop();
    }
    true
}

/// The UART, if there is one yet, and the kernel log (`printk`), as one
/// `fmt::Write` sink: every piece of text goes to both.
struct Tee(Option<Uart>);

impl Write for Tee {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        crate::printk::log_kernel_text(s);
        match &mut self.0 {
            Some(uart) => uart.write_str(s),
            None => Ok(()),
        }
    }
}

#[doc(hidden)]
pub fn _print(args: fmt::Arguments) {
    let va = UART_VA.load(Ordering::Acquire);
    let daif = local_irq_save();
    let took = console_lock();
    // SAFETY: `va`, once set, is init()'s from the DTB's PL011 address.
    let uart = (va != 0).then(|| Uart(unsafe { Pl011::new(va) }));
    let _ = Tee(uart).write_fmt(args);
    if took {
        OWNER.store(NO_OWNER, Ordering::Release);
    }
    local_irq_restore(daif);
}

/// Writes bytes as they are, under the console lock: the terminal's
/// output, which its line discipline has already processed.
pub fn write_raw(data: &[u8]) {
    let va = UART_VA.load(Ordering::Acquire);
    if va == 0 {
        return;
    }
    let daif = local_irq_save();
    let took = console_lock();
    // SAFETY: `va` was set by init() from the DTB's PL011 address.
    let uart = unsafe { Pl011::new(va) };
    for &b in data {
        uart.putc(b);
    }
    if took {
        OWNER.store(NO_OWNER, Ordering::Release);
    }
    local_irq_restore(daif);
}

/// Acknowledges the UART's receive interrupt, then hands every byte
/// waiting in it to `f`. In that order: a byte arriving after the FIFO
/// reads empty raises the interrupt again, where clearing it last would
/// drop that interrupt and leave the byte unread until the next one came
/// (with the FIFO off, QEMU sends no next byte until this one is read).
pub fn receive(mut f: impl FnMut(u8)) {
    let va = UART_VA.load(Ordering::Acquire);
    if va == 0 {
        return;
    }
    // SAFETY: as in write_raw.
    let uart = unsafe { Pl011::new(va) };
    uart.clear_rx_interrupt();
    while let Some(b) = uart.getc() {
        f(b);
    }
}

/// Has the UART raise an interrupt for input.
pub fn enable_input_interrupt() {
    let va = UART_VA.load(Ordering::Acquire);
    if va != 0 {
        // SAFETY: as in write_raw.
        unsafe { Pl011::new(va) }.enable_rx_interrupt();
    }
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => ($crate::console::_print(format_args!($($arg)*)));
}

#[macro_export]
macro_rules! println {
    () => ($crate::print!("\n"));
    ($($arg:tt)*) => ($crate::console::_print(format_args!("{}\n", format_args!($($arg)*))));
}
