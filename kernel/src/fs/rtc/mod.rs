//! /dev/rtc0: the hardware clock as Linux's RTC class device shows it
//! (Linux: `drivers/rtc/dev.c` and `interface.c`). RTC_RD_TIME and
//! RTC_SET_TIME read and set the PL031 as a calendar time (`lib.rs`); a
//! reader waits for periodic interrupts (RTC_PIE_ON, at RTC_IRQP_SET's
//! rate) and update interrupts (RTC_UIE_ON, at each second of the wall
//! clock), and each read(2) returns how many came since the last, and of
//! which kinds. One process may have it open at a time.
//!
//! Where we simplify: Linux emulates both interrupts with kernel timers
//! (`rtc_pie_update_irq`, the update timer); here they are counted from
//! the counter when the device is read or polled, as `timerfd.rs` counts
//! expirations, and a reader sleeps until the next one is due. The PL031's
//! alarm is not used: the alarm ioctls are EINVAL, as Linux says for an
//! RTC without alarms.

pub mod lib;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::arch::{pl031, timer};
use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollQueue, PollWaiter, POLLIN, POLLRDNORM};
use crate::mm::uaccess::{read_user, write_user};
use crate::sync::SpinLock;
use crate::task::cred::{CAP_SYS_RESOURCE, CAP_SYS_TIME};
use crate::task::{capable, clock};
use lib::{time64_to_tm, tm_to_time64, valid_tm, RtcTime};
use uapi::rtc::{
    RTC_AIE_OFF, RTC_AIE_ON, RTC_ALM_READ, RTC_ALM_SET, RTC_IRQP_READ, RTC_IRQP_SET, RTC_PIE_OFF,
    RTC_PIE_ON, RTC_RD_TIME, RTC_SET_TIME, RTC_UIE_OFF, RTC_UIE_ON, RTC_WKALM_RD, RTC_WKALM_SET,
};

// The ioctl numbers (`include/uapi/linux/rtc.h`): `_IO('p', n)`, and
// `_IOR`/`_IOW` with a `struct rtc_time` (36 bytes), an `unsigned long`
// or a `struct rtc_wkalrm` (40 bytes).

/// In a read's data: a periodic interrupt came.
const RTC_PF: u64 = 0x40;
/// In a read's data: an update interrupt came.
const RTC_UF: u64 = 0x10;
/// In a read's data: some interrupt came.
const RTC_IRQF: u64 = 0x80;
/// The fastest periodic rate (Linux: `RTC_MAX_FREQ`).
const RTC_MAX_FREQ: i64 = 8192;
/// The fastest rate a caller without CAP_SYS_RESOURCE may ask for (Linux:
/// `rtc->max_user_freq`'s default).
const MAX_USER_FREQ: u64 = 64;

/// Interrupts due at a fixed period from a start, counted as they pass.
#[derive(Clone, Copy)]
struct Periodic {
    /// The counter value the period is counted from.
    start: u64,
    /// Periods per second.
    freq: u64,
    /// Periods already counted into the data.
    counted: u64,
}

impl Periodic {
    /// Periods ended between `start` and `now`.
    fn ended(&self, now: u64) -> u64 {
        let elapsed = now.saturating_sub(self.start) as u128;
        (elapsed * self.freq as u128 / timer::frequency() as u128) as u64
    }

    /// The counter value the next uncounted period ends at.
    fn next(&self) -> u64 {
        let f = timer::frequency() as u128;
        let ticks = ((self.counted + 1) as u128 * f).div_ceil(self.freq as u128);
        self.start.saturating_add(ticks as u64)
    }
}

/// What the device's lock protects (Linux: fields of `rtc_device`).
struct State {
    /// The periodic rate (Linux: `irq_freq`, 1 until set).
    freq: u64,
    /// Periodic interrupts, while on.
    pie: Option<Periodic>,
    /// Update interrupts, while on: one period a second, from a second
    /// of the wall clock.
    uie: Option<Periodic>,
    /// Interrupts not yet read: their count times 256, with the `RTC_*F`
    /// bits of their kinds (Linux: `irq_data`).
    data: u64,
}

impl State {
    /// Adds the interrupts due by `now` to `data` (Linux:
    /// `rtc_handle_legacy_irq` from each timer).
    fn update(&mut self, now: u64) {
        for (source, kind) in [(&mut self.pie, RTC_PF), (&mut self.uie, RTC_UF)] {
            if let Some(p) = source {
                let ended = p.ended(now);
                if ended > p.counted {
                    self.data = (self.data + ((ended - p.counted) << 8)) | RTC_IRQF | kind;
                    p.counted = ended;
                }
            }
        }
    }

    /// When the next interrupt is due, if any are on.
    fn next(&self) -> Option<u64> {
        let pie = self.pie.map(|p| p.next());
        let uie = self.uie.map(|p| p.next());
        pie.into_iter().chain(uie).min()
    }
}

/// The RTC device (Linux: `struct rtc_device` with its char device).
pub struct Rtc {
    /// Rates, interrupts on, and interrupts unread.
    state: SpinLock<State>,
    /// Readers and pollers (Linux: `irq_queue`).
    wait: PollQueue,
    /// Open (Linux: `RTC_DEV_BUSY`).
    busy: AtomicBool,
}

impl Rtc {
    /// The device, or None without a PL031.
    pub fn new() -> Option<Arc<Rtc>> {
        pl031::read_seconds()?;
        Some(Arc::new(Rtc {
            state: SpinLock::new(State {
                freq: 1,
                pie: None,
                uie: None,
                data: 0,
            }),
            wait: PollQueue::new(),
            busy: AtomicBool::new(false),
        }))
    }

    /// The state with the interrupts due by now counted.
    fn state(&self) -> crate::sync::SpinLockGuard<'_, State> {
        let mut s = self.state.lock();
        s.update(timer::counter());
        s
    }
}

/// Periodic interrupts from now at `freq` a second.
fn periodic(freq: u64) -> Periodic {
    Periodic {
        start: timer::counter(),
        freq,
        counted: 0,
    }
}

/// Update interrupts: a period a second, starting at the wall clock's
/// last whole second, so each ends as a second begins.
fn updates() -> Periodic {
    let now = timer::counter();
    let into_second = clock::realtime_ns().rem_euclid(1_000_000_000) as u64;
    Periodic {
        start: now.saturating_sub(clock::ns_to_counter(into_second)),
        freq: 1,
        counted: 0,
    }
}

impl Device for Rtc {
    /// Linux: `rtc_dev_read`: waits until an interrupt came, then returns
    /// the data, as an unsigned long (or an unsigned int, for a 4-byte
    /// read), and clears it. EINVAL for any other size under 8 bytes.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        if buf.len() != 4 && buf.len() < 8 {
            return Err(Errno::EINVAL);
        }
        loop {
            let w = PollWaiter::for_current();
            self.wait.add(&w);
            let next = {
                let mut s = self.state();
                if s.data != 0 {
                    let data = core::mem::take(&mut s.data);
                    drop(s);
                    return Ok(if buf.len() == 4 {
                        buf[..4].copy_from_slice(&(data as u32).to_ne_bytes());
                        4
                    } else {
                        buf[..8].copy_from_slice(&data.to_ne_bytes());
                        8
                    });
                }
                s.next()
            };
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            if crate::task::signal::signal_pending() {
                return Err(Errno::ERESTARTSYS);
            }
            crate::task::sleep_until(next.unwrap_or(u64::MAX), || {
                w.woken() || crate::task::signal::signal_pending()
            });
        }
    }

    /// The RTC takes no writes (Linux's rtc_dev_fops has no `write`).
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// Linux: `rtc_dev_ioctl`, with the permission checks it makes before
    /// anything else.
    fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        match cmd {
            RTC_SET_TIME if !capable(CAP_SYS_TIME) => return Err(Errno::EACCES),
            RTC_IRQP_SET if arg as u64 > MAX_USER_FREQ && !capable(CAP_SYS_RESOURCE) => {
                return Err(Errno::EACCES)
            }
            RTC_PIE_ON if self.state.lock().freq > MAX_USER_FREQ && !capable(CAP_SYS_RESOURCE) => {
                return Err(Errno::EACCES)
            }
            _ => {}
        }
        match cmd {
            RTC_RD_TIME => {
                let secs = pl031::read_seconds().ok_or(Errno::ENODEV)?;
                write_user(arg, &time64_to_tm(secs as i64).to_words())?;
            }
            RTC_SET_TIME => {
                let tm = RtcTime::from_words(read_user(arg)?);
                if !valid_tm(&tm) {
                    return Err(Errno::EINVAL);
                }
                // The PL031 counts 32 bits of seconds (Linux: its
                // `range_max`, checked by `rtc_valid_range`).
                let secs = u32::try_from(tm_to_time64(&tm)).map_err(|_| Errno::ERANGE)?;
                pl031::set_seconds(secs);
            }
            RTC_IRQP_READ => write_user(arg, &self.state.lock().freq)?,
            RTC_IRQP_SET => {
                // Linux's `rtc_irq_set_freq` takes an int.
                let freq = arg as i32 as i64;
                if freq <= 0 || freq > RTC_MAX_FREQ {
                    return Err(Errno::EINVAL);
                }
                let mut s = self.state();
                s.freq = freq as u64;
                if s.pie.is_some() {
                    s.pie = Some(periodic(freq as u64));
                }
            }
            RTC_PIE_ON => {
                let mut s = self.state();
                if s.pie.is_none() {
                    s.pie = Some(periodic(s.freq));
                }
            }
            RTC_PIE_OFF => self.state().pie = None,
            RTC_UIE_ON => {
                let mut s = self.state();
                if s.uie.is_none() {
                    s.uie = Some(updates());
                }
            }
            RTC_UIE_OFF => self.state().uie = None,
            RTC_AIE_ON | RTC_AIE_OFF | RTC_ALM_SET | RTC_ALM_READ | RTC_WKALM_SET
            | RTC_WKALM_RD => return Err(Errno::EINVAL),
            _ => return Err(Errno::ENOTTY),
        }
        // A reader may now wait for a nearer interrupt.
        self.wait.wake();
        Ok(0)
    }

    /// Linux: `rtc_dev_open`: EBUSY while another file has it open.
    fn opened(&self, _flags: u32) -> KResult<()> {
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(Errno::EBUSY);
        }
        Ok(())
    }

    /// Linux: `rtc_dev_release`: the interrupts stop with the file.
    fn released(&self, _flags: u32) {
        let mut s = self.state();
        s.pie = None;
        s.uie = None;
        drop(s);
        self.busy.store(false, Ordering::Release);
    }

    /// Linux: `rtc_dev_poll`.
    fn poll(&self, _flags: u32) -> u32 {
        if self.state().data != 0 {
            POLLIN | POLLRDNORM
        } else {
            0
        }
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        self.state.lock().next()
    }
}
