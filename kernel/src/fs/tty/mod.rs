//! The console terminal (Linux: `drivers/tty/tty_io.c`, `tty_jobctrl.c`,
//! `tty_ioctl.c`, with `n_tty.c` as `n_tty.rs`): /dev/console, /dev/tty
//! and init's fds 0-2.
//!
//! Input arrives by interrupt: the PL011's handler only queues the bytes
//! (Linux: the flip buffer, `tty_insert_flip_char`), and a kernel thread
//! runs them through the line discipline (Linux: `flush_to_ldisc` on a
//! workqueue), which echoes, edits lines, and turns ^C, ^\ and ^Z into
//! signals for the foreground process group.
//!
//! Job control: a session leader makes the console its controlling
//! terminal with TIOCSCTTY; TIOCSPGRP picks the foreground process group;
//! a background process that reads /dev/tty gets SIGTTIN (EIO if it
//! ignores it, or its group is orphaned). Reads through /dev/console (and
//! init's fds 0-2, which are /dev/console) are never stopped, as Linux's
//! `job_control` says ("don't stop on /dev/console").
//!
//! Where we simplify: one terminal; /dev/tty always opens the console
//! (Linux: ENXIO without a controlling terminal), and opening it does not
//! make it the controlling terminal (only TIOCSCTTY does); background
//! writes never raise SIGTTOU (TOSTOP is not honoured), nor does TIOCSPGRP
//! from the background; there is no hang-up.

pub mod n_tty;

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use self::n_tty::{Ldisc, Termios, ICANON, TERMIOS_SIZE};
use super::device::Device;
use super::poll::{PollQueue, PollWaiter, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::sync::SpinLock;
use crate::task::process::{self, Process};
use crate::task::signal_abi::{SIGTTIN, SIGWINCH};
use crate::task::WaitQueue;
use uapi::ioctls::{
    FIONREAD, TCFLSH, TCGETS, TCSBRK, TCSETS, TCSETSF, TCSETSW, TCXONC, TIOCGPGRP, TIOCGSID,
    TIOCGWINSZ, TIOCNOTTY, TIOCOUTQ, TIOCSCTTY, TIOCSPGRP, TIOCSTI, TIOCSWINSZ,
};

// ioctl numbers (asm-generic ioctls.h).
/// TCFLSH's TCIFLUSH argument: discard unread input.
const TCFLSH_INPUT: usize = 0;
/// TCFLSH's TCIOFLUSH argument: discard input and output (only input is ever
/// held).
const TCFLSH_BOTH: usize = 2;

/// Bytes the interrupt handler holds for the line discipline; more are
/// dropped (Linux: the flip buffer's limit, 64K).
const FLIP_SIZE: usize = 4096;

/// The console terminal.
pub struct Tty {
    /// The line discipline: termios and the input being edited (Linux:
    /// `tty->disc_data`, n_tty's `struct n_tty_data`).
    ldisc: SpinLock<Ldisc>,
    /// Bytes received and not yet through the line discipline.
    flip: SpinLock<VecDeque<u8>>,
    /// The line-discipline thread waits here for `flip`.
    flip_wait: WaitQueue,
    /// Readers and pollers wait here for input (Linux: `tty->read_wait`).
    read_wait: PollQueue,
    /// The session whose controlling terminal this is (0: none), and its
    /// foreground process group (Linux: `tty->ctrl.session`, `.pgrp`).
    session: AtomicU32,
    /// The foreground process group (0: none): it reads without SIGTTIN and
    /// gets the signals typed keys and TIOCSWINSZ send.
    pgrp: AtomicU32,
    /// `struct winsize`: rows, columns, and two pixel sizes.
    winsize: SpinLock<[u16; 4]>,
}

/// The console terminal, made on first use.
static CONSOLE: spin::Once<Arc<Tty>> = spin::Once::new();

/// The console's terminal.
pub fn console() -> Arc<Tty> {
    CONSOLE
        .call_once(|| {
            Arc::new(Tty {
                ldisc: SpinLock::new(Ldisc::new()),
                flip: SpinLock::new(VecDeque::new()),
                flip_wait: WaitQueue::new(),
                read_wait: PollQueue::new(),
                session: AtomicU32::new(0),
                pgrp: AtomicU32::new(0),
                // What a Linux serial console reports: no size known.
                winsize: SpinLock::new([0; 4]),
            })
        })
        .clone()
}

/// Starts interrupt-driven console input: the line-discipline thread,
/// then the UART's interrupt. Without an interrupt, reads poll.
pub fn start_console_input(uart_intid: Option<u32>) {
    let tty = console();
    let Some(intid) = uart_intid else { return };
    let worker = tty.clone();
    crate::task::spawn_on(0, move || worker.flush_to_ldisc());
    crate::arch::irq::enable_console_irq(intid);
}

/// The UART's interrupt handler: queues what arrived (Linux:
/// `pl011_fifo_to_tty`, `tty_flip_buffer_push`).
pub fn console_interrupt() {
    let tty = console();
    {
        let mut flip = tty.flip.lock();
        crate::console::receive(|byte| {
            if flip.len() < FLIP_SIZE {
                flip.push_back(byte);
            }
        });
    }
    tty.flip_wait.wake_all();
}

impl Tty {
    /// The line-discipline thread (Linux: `flush_to_ldisc`): feeds queued
    /// bytes to the line discipline.
    fn flush_to_ldisc(&self) {
        loop {
            self.flip_wait.wait_until(|| !self.flip.lock().is_empty());
            let bytes: Vec<u8> = self.flip.lock().drain(..).collect();
            self.input(&bytes);
        }
    }

    /// Runs typed bytes through `n_tty`, shows the echo, sends the signals
    /// to the foreground group and wakes readers (Linux:
    /// `tty_ldisc_receive_buf`).
    fn input(&self, bytes: &[u8]) {
        let mut echo = Vec::new();
        let mut shown = Vec::new();
        let mut signals = Vec::new();
        {
            let mut ldisc = self.ldisc.lock();
            for &byte in bytes {
                signals.extend(ldisc.receive(byte, &mut echo));
            }
            ldisc.output(&echo, &mut shown);
        }
        crate::console::write_raw(&shown);
        let pgrp = self.pgrp.load(Ordering::Acquire);
        for sig in signals {
            if pgrp != 0 {
                let _ = crate::task::process::kill_pgrp(pgrp, sig);
            }
        }
        self.read_wait.wake();
    }

    /// `p`'s controlling terminal as `/proc/PID/stat` shows it: the
    /// device number (ttyAMA0, 204:64, in `new_encode_dev`'s form) and the
    /// foreground group; (0, -1) with none.
    pub fn stat_fields(&self, p: &Process) -> (u32, i32) {
        if self.controls(p) {
            ((204 << 8) | 64, self.pgrp.load(Ordering::Acquire) as i32)
        } else {
            (0, -1)
        }
    }

    /// Is the console the controlling terminal of `p`'s session?
    fn controls(&self, p: &Process) -> bool {
        let session = self.session.load(Ordering::Acquire);
        session != 0 && session == p.sid.load(Ordering::Acquire)
    }

    /// A read from outside the foreground process group (Linux:
    /// `__tty_check_change` for SIGTTIN): EIO if the signal would be lost,
    /// else the group gets SIGTTIN and the read ends with EINTR.
    fn check_background_read(&self) -> KResult<()> {
        let Some(p) = crate::task::current_process() else {
            return Ok(());
        };
        let pgid = p.pgid.load(Ordering::Acquire);
        if !self.controls(&p) || pgid == self.pgrp.load(Ordering::Acquire) {
            return Ok(());
        }
        if crate::task::signal::ignored_or_blocked(SIGTTIN) || process::is_orphaned_pgrp(pgid) {
            return Err(Errno::EIO);
        }
        crate::task::process::kill_pgrp(pgid, SIGTTIN)?;
        Err(Errno::EINTR)
    }

    /// Polled input, where the UART has no interrupt: whatever it holds
    /// goes through the line discipline now.
    fn poll_uart(&self) {
        if crate::arch::irq::console_irq_enabled() {
            return;
        }
        let mut bytes = Vec::new();
        crate::console::receive(|byte| bytes.push(byte));
        if !bytes.is_empty() {
            self.input(&bytes);
        }
    }

    /// Can a read of `len` bytes finish now?
    fn read_ready(&self, len: usize) -> bool {
        self.poll_uart();
        let ldisc = self.ldisc.lock();
        if ldisc.termios.lflag & ICANON != 0 {
            ldisc.readable()
        } else {
            ldisc.bytes_ready() >= ldisc.min_bytes(len)
        }
    }

    /// TCSETS, TCSETSW and TCSETSF (Linux: `set_termios`): the termios at
    /// user address `arg` becomes current, unread input discarded first if
    /// `flush`.
    fn set_termios(&self, arg: usize, flush: bool) -> KResult<i64> {
        let mut raw = [0u8; TERMIOS_SIZE];
        copy_from_user(&mut raw, arg)?;
        let mut ldisc = self.ldisc.lock();
        if flush {
            ldisc.flush_input();
        }
        ldisc.set_termios(Termios::from_bytes(&raw));
        drop(ldisc);
        self.read_wait.wake();
        Ok(0)
    }

    /// TIOCSCTTY (Linux: `tiocsctty`): a session leader without a terminal
    /// takes this one; taking it from another session needs `steal` (and
    /// privilege, which everyone has).
    fn set_controlling(&self, p: &Process, steal: bool) -> KResult<i64> {
        let sid = p.sid.load(Ordering::Acquire);
        if sid != p.pid {
            return Err(Errno::EPERM);
        }
        if self.controls(p) {
            return Ok(0);
        }
        let owner = self.session.load(Ordering::Acquire);
        if owner != 0 && !steal && process::session_exists(owner) {
            return Err(Errno::EPERM);
        }
        self.session.store(sid, Ordering::Release);
        self.pgrp
            .store(p.pgid.load(Ordering::Acquire), Ordering::Release);
        Ok(0)
    }

    /// TIOCSPGRP (Linux: `tiocspgrp`): the group must be in the caller's
    /// session.
    fn set_pgrp(&self, p: &Process, arg: usize) -> KResult<i64> {
        if !self.controls(p) {
            return Err(Errno::ENOTTY);
        }
        let pgrp: i32 = read_user(arg)?;
        if pgrp < 0 {
            return Err(Errno::EINVAL);
        }
        if !process::pgrp_in_session(pgrp as u32, p.sid.load(Ordering::Acquire)) {
            return Err(Errno::EPERM);
        }
        self.pgrp.store(pgrp as u32, Ordering::Release);
        Ok(0)
    }
}

/// /dev/console: the console's terminal without the background-read
/// check (Linux: `redirected_tty_write` marks such files).
pub struct Console(pub Arc<Tty>);

impl Device for Console {
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        self.0.read_input(buf, nonblock)
    }
    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        self.0.write(data, nonblock)
    }
    fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        self.0.ioctl(cmd, arg)
    }
    fn poll(&self, flags: u32) -> u32 {
        self.0.poll(flags)
    }
    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.0.poll_wait(w)
    }
}

impl Tty {
    /// A read once job control has let it through (Linux: `n_tty_read`).
    fn read_input(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.read_ready(buf.len()) {
                return Ok(self.ldisc.lock().read(buf));
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            if crate::arch::irq::console_irq_enabled() {
                self.read_wait.wait_event(|| self.read_ready(buf.len()))?;
            } else {
                if crate::task::signal::signal_pending() {
                    return Err(Errno::EINTR);
                }
                crate::task::msleep(10);
            }
        }
    }
}

impl Device for Tty {
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        self.check_background_read()?;
        self.read_input(buf, nonblock)
    }

    /// Readable when a read would not wait (a whole line in canonical
    /// mode), always writable (Linux: `n_tty_poll`).
    fn poll(&self, _flags: u32) -> u32 {
        let input = if self.read_ready(1) {
            POLLIN | POLLRDNORM
        } else {
            0
        };
        input | POLLOUT | POLLWRNORM
    }

    /// Input wakes the queue; without the UART's interrupt, pollers look
    /// again every 10 ms, as a polled read does.
    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.read_wait.add(w);
        if crate::arch::irq::console_irq_enabled() {
            return None;
        }
        let f = crate::arch::timer::frequency();
        Some(crate::arch::timer::counter() + f / 100)
    }

    fn write(&self, data: &[u8], _nonblock: bool) -> KResult<usize> {
        // Up to a write's chunk (64K) and its expansion (\n -> \r\n).
        let mut out = crate::mm::heap::try_vec(data.len() + data.len() / 8)?;
        self.ldisc.lock().output(data, &mut out);
        crate::console::write_raw(&out);
        Ok(data.len())
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        let p = crate::task::current_process().ok_or(Errno::ENOTTY)?;
        match cmd {
            TCGETS => {
                let termios = self.ldisc.lock().termios.to_bytes();
                copy_to_user(arg, &termios).map(|_| 0)
            }
            TCSETS | TCSETSW => self.set_termios(arg, false),
            TCSETSF => self.set_termios(arg, true),
            // Output is written out synchronously: nothing to drain or
            // suspend.
            TCSBRK | TCXONC => Ok(0),
            TCFLSH => match arg {
                TCFLSH_INPUT | TCFLSH_BOTH => {
                    self.ldisc.lock().flush_input();
                    Ok(0)
                }
                1 => Ok(0),
                _ => Err(Errno::EINVAL),
            },
            TIOCOUTQ => write_user(arg, &0i32).map(|_| 0),
            FIONREAD => {
                let n = self.ldisc.lock().bytes_ready() as i32;
                write_user(arg, &n).map(|_| 0)
            }
            TIOCGWINSZ => {
                let ws = *self.winsize.lock();
                write_user(arg, &ws).map(|_| 0)
            }
            TIOCSWINSZ => {
                let ws: [u16; 4] = read_user(arg)?;
                let changed = core::mem::replace(&mut *self.winsize.lock(), ws) != ws;
                let pgrp = self.pgrp.load(Ordering::Acquire);
                if changed && pgrp != 0 {
                    let _ = crate::task::process::kill_pgrp(pgrp, SIGWINCH);
                }
                Ok(0)
            }
            // Everyone is root, so anyone may type into the terminal
            // (Linux: `tiocsti` needs CAP_SYS_ADMIN for another's tty).
            TIOCSTI => {
                let byte: u8 = read_user(arg)?;
                self.input(&[byte]);
                Ok(0)
            }
            TIOCSCTTY => self.set_controlling(&p, arg == 1),
            TIOCNOTTY => {
                if !self.controls(&p) {
                    return Err(Errno::ENOTTY);
                }
                if p.sid.load(Ordering::Acquire) == p.pid {
                    self.session.store(0, Ordering::Release);
                    self.pgrp.store(0, Ordering::Release);
                }
                Ok(0)
            }
            TIOCGPGRP | TIOCGSID => {
                if !self.controls(&p) {
                    return Err(Errno::ENOTTY);
                }
                let v = if cmd == TIOCGPGRP {
                    self.pgrp.load(Ordering::Acquire)
                } else {
                    self.session.load(Ordering::Acquire)
                };
                write_user(arg, &(v as i32)).map(|_| 0)
            }
            TIOCSPGRP => self.set_pgrp(&p, arg),
            _ => Err(Errno::ENOTTY),
        }
    }
}
