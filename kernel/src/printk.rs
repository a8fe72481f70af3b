//! The kernel log: every line the kernel prints, kept with a sequence
//! number and the time since boot, for dmesg through /dev/kmsg (one
//! record per read) or syslog(2) (Linux: `kernel/printk/printk.c`).
//!
//! `console::_print` hands each piece of text here as it goes to the
//! UART; a record is committed at each newline. Programs add records by
//! writing to /dev/kmsg. The newest `LOG_RECORDS` records are kept.
//!
//! Where we simplify: a fixed number of records of at most `LINE_MAX`
//! bytes each (a longer line is cut) rather than Linux's byte ring;
//! every kernel line is at level 6 (`KERN_INFO`); no console log levels.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::sync::SpinLock;

/// Records kept; the oldest goes when a new one needs its slot.
const LOG_RECORDS: usize = 512;
/// Bytes of text a record holds.
pub const LINE_MAX: usize = 256;
/// The log's size as syslog(2) reports it (SYSLOG_ACTION_SIZE_BUFFER).
pub const LOG_BUF_LEN: usize = LOG_RECORDS * LINE_MAX;

/// `KERN_INFO`, the level of the kernel's own lines.
const LOGLEVEL_INFO: u8 = 6;

/// One line of the log.
#[derive(Clone, Copy)]
struct Slot {
    /// When it was logged, nanoseconds since boot.
    ts_ns: u64,
    /// `facility << 3 | level`, as `<N>` or /dev/kmsg's first field.
    prefix: u8,
    /// Bytes of `text` used.
    len: u16,
    /// The line, without its newline.
    text: [u8; LINE_MAX],
}

/// A record read back: its number, time, prefix and text.
pub struct Record {
    /// Its sequence number, from 0 at boot.
    pub seq: u64,
    /// Nanoseconds since boot when it was logged.
    pub ts_ns: u64,
    /// `facility << 3 | level`.
    pub prefix: u8,
    /// The line.
    pub text: Vec<u8>,
}

/// The log: a ring of slots, record `seq` in slot `seq % LOG_RECORDS`.
struct Log {
    /// The records, `seq % LOG_RECORDS` each.
    slots: [Slot; LOG_RECORDS],
    /// The number the next record gets (Linux: `prb_next_seq`).
    next_seq: u64,
    /// The first record SYSLOG_ACTION_CLEAR left (Linux: `clear_seq`).
    clear_seq: u64,
    /// The next record SYSLOG_ACTION_READ returns (Linux: `syslog_seq`).
    syslog_seq: u64,
    /// The kernel's line so far, until its newline.
    pending: [u8; LINE_MAX],
    /// Bytes of `pending` used.
    pending_len: usize,
}

/// The one kernel log (Linux: `prb`, the printk ring buffer).
static LOG: SpinLock<Log> = SpinLock::new(Log {
    slots: [Slot {
        ts_ns: 0,
        prefix: 0,
        len: 0,
        text: [0; LINE_MAX],
    }; LOG_RECORDS],
    next_seq: 0,
    clear_seq: 0,
    syslog_seq: 0,
    pending: [0; LINE_MAX],
    pending_len: 0,
});

/// Nanoseconds since boot, from the counter itself: the log sits below
/// the clocks of `task`, which print.
fn boot_ns() -> u64 {
    let ticks = crate::arch::timer::counter() as u128;
    (ticks * 1_000_000_000 / crate::arch::timer::frequency().max(1) as u128) as u64
}

impl Log {
    /// The oldest record still kept.
    fn first_seq(&self) -> u64 {
        self.next_seq.saturating_sub(LOG_RECORDS as u64)
    }

    /// Appends a record.
    fn commit(&mut self, prefix: u8, text: &[u8]) {
        let len = text.len().min(LINE_MAX);
        let slot = &mut self.slots[(self.next_seq % LOG_RECORDS as u64) as usize];
        slot.ts_ns = boot_ns();
        slot.prefix = prefix;
        slot.len = len as u16;
        slot.text[..len].copy_from_slice(&text[..len]);
        self.next_seq += 1;
    }

    /// Copies of the records from `seq` on (from the oldest kept, if
    /// `seq` is gone), so they are formatted after the lock is dropped:
    /// the kernel's printing waits for it.
    fn copy_from(&self, seq: u64) -> Vec<Record> {
        (seq.max(self.first_seq())..self.next_seq)
            .filter_map(|seq| self.get(seq))
            .collect()
    }

    /// Record `seq`, if still kept.
    fn get(&self, seq: u64) -> Option<Record> {
        if seq < self.first_seq() || seq >= self.next_seq {
            return None;
        }
        let slot = &self.slots[(seq % LOG_RECORDS as u64) as usize];
        Some(Record {
            seq,
            ts_ns: slot.ts_ns,
            prefix: slot.prefix,
            text: slot.text[..slot.len as usize].to_vec(),
        })
    }
}

/// How many times the kernel's printing tries for a busy log.
const LOG_SPIN_LIMIT: usize = 100_000;

/// Text the kernel printed (from `console::_print`): each completed line
/// becomes a record at `KERN_INFO`. Waits a bounded time: text printed
/// while this CPU holds the log (a panic inside it) reaches only the
/// console.
pub fn log_kernel_text(text: &str) {
    let Some(mut log) = (0..LOG_SPIN_LIMIT).find_map(|_| LOG.try_lock()) else {
        return;
    };
    for &b in text.as_bytes() {
        if b == b'\n' {
            let line = log.pending;
            let len = log.pending_len;
            log.commit(LOGLEVEL_INFO, &line[..len]);
            log.pending_len = 0;
        } else if log.pending_len < LINE_MAX {
            let at = log.pending_len;
            log.pending[at] = b;
            log.pending_len += 1;
        }
    }
}

/// A record from user space (a write to /dev/kmsg): one per line, each
/// with its `<N>` prefix if it starts with one, else `default_prefix`
/// (Linux: `devkmsg_write`).
pub fn log_user_line(default_prefix: u8, line: &[u8]) {
    let (prefix, text) = parse_prefix(line).unwrap_or((default_prefix, line));
    LOG.lock().commit(prefix, text);
}

/// `<N>` at the start of `line`: N (a facility and level) and the rest.
fn parse_prefix(line: &[u8]) -> Option<(u8, &[u8])> {
    let rest = line.strip_prefix(b"<")?;
    let end = rest.iter().position(|&b| b == b'>')?;
    let n: u32 = core::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    // Facility 0 is the kernel's: user space may not claim it (Linux
    // makes such a record LOG_USER).
    let n = if n >> 3 == 0 { n | 1 << 3 } else { n };
    Some((n.min(u8::MAX as u32) as u8, &rest[end + 1..]))
}

/// The oldest record kept and the number the next will get.
pub fn bounds() -> (u64, u64) {
    let log = LOG.lock();
    (log.first_seq(), log.next_seq)
}

/// Record `seq`, or the error /dev/kmsg gives: Err(Some(first)) if it is
/// gone (the reader skips to `first`), Err(None) if it is not written yet.
pub fn record(seq: u64) -> Result<Record, Option<u64>> {
    let log = LOG.lock();
    if seq < log.first_seq() {
        return Err(Some(log.first_seq()));
    }
    log.get(seq).ok_or(None)
}

/// The first record SYSLOG_ACTION_CLEAR left (what SEEK_DATA finds on
/// /dev/kmsg).
pub fn clear_seq() -> u64 {
    let log = LOG.lock();
    log.clear_seq.max(log.first_seq())
}

/// Record `r` as /dev/kmsg gives it: `PREFIX,SEQ,MICROSECONDS,-;TEXT\n`,
/// bytes outside printable ASCII as `\xHH` (Linux: `info_print_ext_header`
/// and `msg_print_ext_body`).
pub fn kmsg_format(r: &Record) -> String {
    let mut s = String::new();
    let _ = write!(s, "{},{},{},-;", r.prefix, r.seq, r.ts_ns / 1000);
    for &b in &r.text {
        if !(b' '..127).contains(&b) || b == b'\\' {
            let _ = write!(s, "\\x{b:02x}");
        } else {
            s.push(b as char);
        }
    }
    s.push('\n');
    s
}

/// Record `r` as syslog(2) gives it: `<PREFIX>[SECONDS.MICROS] TEXT\n`
/// (Linux: `record_print_text` with the time on).
fn syslog_format(r: &Record) -> String {
    let us = r.ts_ns / 1000;
    let mut s = String::new();
    let _ = write!(
        s,
        "<{}>[{:5}.{:06}] ",
        r.prefix,
        us / 1_000_000,
        us % 1_000_000
    );
    s.push_str(&String::from_utf8_lossy(&r.text));
    s.push('\n');
    s
}

/// SYSLOG_ACTION_READ_ALL: the newest records from `clear_seq` on that fit
/// in `len` bytes, formatted; CLEAR after if `clear` (READ_CLEAR).
pub fn read_all(len: usize, clear: bool) -> String {
    let records = {
        let mut log = LOG.lock();
        let first = log.clear_seq.max(log.first_seq());
        let records = log.copy_from(first);
        if clear {
            log.clear_seq = log.next_seq;
        }
        records
    };
    let texts: Vec<String> = records.iter().map(syslog_format).collect();
    // The newest that fit, oldest first (Linux drops from the front).
    let mut total = 0;
    let from = texts
        .iter()
        .rposition(|t| {
            total += t.len();
            total > len
        })
        .map_or(0, |i| i + 1);
    texts[from..].concat()
}

/// SYSLOG_ACTION_READ: records not yet read this way, as many whole ones
/// as fit in `len` bytes, marked read; empty if there are none.
pub fn read_unread(len: usize) -> String {
    let mut log = LOG.lock();
    log.syslog_seq = log.syslog_seq.max(log.first_seq());
    let mut out = String::new();
    while let Some(r) = log.get(log.syslog_seq) {
        let text = syslog_format(&r);
        if out.len() + text.len() > len && !out.is_empty() {
            break;
        }
        out.push_str(&text[..text.len().min(len - out.len())]);
        log.syslog_seq += 1;
        if out.len() >= len {
            break;
        }
    }
    out
}

/// SYSLOG_ACTION_SIZE_UNREAD: bytes SYSLOG_ACTION_READ would return now.
pub fn unread_bytes() -> usize {
    let records = {
        let log = LOG.lock();
        log.copy_from(log.syslog_seq)
    };
    records.iter().map(|r| syslog_format(r).len()).sum()
}

/// SYSLOG_ACTION_CLEAR: READ_ALL starts after what is logged now.
pub fn clear() {
    let mut log = LOG.lock();
    log.clear_seq = log.next_seq;
}
