//! The IRQ entry point called by the vectors: acknowledge, dispatch, end,
//! then give the scheduler its chance to preempt (Linux: `el1_interrupt`,
//! `gic_handle_irq`).

use core::sync::atomic::{AtomicU32, Ordering};

use super::trap::TrapFrame;
use super::{gic, smp, timer};
use crate::task;

/// The INTID of the virtual timer's PPI, from the DTB: `dispatch` takes it
/// as the tick. A PPI has the same INTID on every CPU, so one value serves.
static TIMER_INTID: AtomicU32 = AtomicU32::new(0);
/// Interrupts taken on all CPUs (/proc/stat's `intr`).
static NR_IRQS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How many interrupts the CPUs have taken.
pub fn nr_irqs() -> u64 {
    NR_IRQS.load(Ordering::Relaxed)
}

/// The console UART's interrupt, once enabled (0: input is polled).
static CONSOLE_INTID: AtomicU32 = AtomicU32::new(0);

/// Routes the console UART's interrupt `intid` to this CPU and has the
/// UART raise it for input.
pub fn enable_console_irq(intid: u32) {
    CONSOLE_INTID.store(intid, Ordering::Release);
    gic::enable_spi(intid);
    crate::console::enable_input_interrupt();
}

/// Does console input arrive by interrupt?
pub fn console_irq_enabled() -> bool {
    CONSOLE_INTID.load(Ordering::Acquire) != 0
}

/// Enables this CPU's tick (the virtual timer's PPI `timer_intid`) and IPIs.
pub fn init_this_cpu(cpu: usize, timer_intid: u32) {
    TIMER_INTID.store(timer_intid, Ordering::Relaxed);
    gic::init_this_cpu(cpu, &[timer_intid, smp::IPI_RESCHEDULE]);
    timer::allow_user_counter();
    timer::set_next_event(task::tick_interval());
}

/// The vector for an IRQ taken at EL1 (slot 5): handles every pending
/// interrupt, and may preempt the interrupted kernel code on the way out
/// (Linux: `el1_interrupt`).
#[no_mangle]
extern "C" fn handle_irq(_tf: &mut TrapFrame, _kind: u64) {
    dispatch(false);
}

/// Acknowledges and handles every pending interrupt; `from_user` says
/// whether it arrived while user code ran (the tick charges it there).
fn dispatch(from_user: bool) {
    while let Some(ack) = gic::acknowledge() {
        let intid = ack.intid;
        NR_IRQS.fetch_add(1, Ordering::Relaxed);
        if intid == TIMER_INTID.load(Ordering::Relaxed) {
            task::timer_interrupt(from_user);
        } else if intid == smp::IPI_RESCHEDULE {
            task::set_need_resched();
        } else if intid == CONSOLE_INTID.load(Ordering::Relaxed) {
            crate::fs::tty::console_interrupt();
        } else {
            println!("irq: unexpected interrupt {}", intid);
        }
        gic::end_of_interrupt(ack);
    }
    task::preempt_on_irq_exit();
}

/// An interrupt that arrived while user code ran: on the way back, deliver
/// signals and reschedule as after any kernel entry from EL0.
#[no_mangle]
extern "C" fn handle_el0_irq(tf: &mut TrapFrame, _kind: u64) {
    dispatch(true);
    task::exit_to_user(tf);
}
