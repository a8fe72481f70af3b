//! syslog(2), the kernel log's system call (Linux: `do_syslog` in
//! `kernel/printk/printk.c`); dmesg uses it where /dev/kmsg cannot be
//! read. The log itself is `printk`'s.
//!
//! Where we simplify: the console on/off and level actions change
//! nothing (the console prints every line); `dmesg_restrict` is on, as
//! Debian sets it, so every action needs CAP_SYSLOG.

use super::SysResult;
use crate::errno::Errno;
use crate::mm::uaccess::copy_to_user;
use crate::printk;
use uapi::capability::CAP_SYSLOG;

/// Close the log: nothing to do (Linux: `SYSLOG_ACTION_CLOSE`).
const SYSLOG_ACTION_CLOSE: i32 = 0;
/// Open the log: nothing to do.
const SYSLOG_ACTION_OPEN: i32 = 1;
/// Read lines not yet read this way, waiting for one.
const SYSLOG_ACTION_READ: i32 = 2;
/// Read the newest lines that fit, from the last clear on.
const SYSLOG_ACTION_READ_ALL: i32 = 3;
/// READ_ALL, then CLEAR.
const SYSLOG_ACTION_READ_CLEAR: i32 = 4;
/// Later READ_ALLs start after what is logged now.
const SYSLOG_ACTION_CLEAR: i32 = 5;
/// Console messages off (here: nothing changes).
const SYSLOG_ACTION_CONSOLE_OFF: i32 = 6;
/// Console messages on (here: nothing changes).
const SYSLOG_ACTION_CONSOLE_ON: i32 = 7;
/// The console's level, 1 to 8 (here: nothing changes).
const SYSLOG_ACTION_CONSOLE_LEVEL: i32 = 8;
/// Bytes READ would give now.
const SYSLOG_ACTION_SIZE_UNREAD: i32 = 9;
/// The log's size.
const SYSLOG_ACTION_SIZE_BUFFER: i32 = 10;

/// How often a SYSLOG_ACTION_READ waiting for a line looks again: the
/// log wakes no one (it is written from anywhere, interrupts included).
const READ_POLL_MS: u64 = 10;

/// syslog(2): `action` on the kernel log, reading into the `len` bytes at
/// `ubuf` where it reads.
pub fn syslog(action: i32, ubuf: usize, len: i32) -> SysResult {
    if !crate::task::capable(CAP_SYSLOG) && !crate::task::capable(uapi::capability::CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    let reads = matches!(
        action,
        SYSLOG_ACTION_READ | SYSLOG_ACTION_READ_ALL | SYSLOG_ACTION_READ_CLEAR
    );
    if reads {
        if ubuf == 0 || len < 0 {
            return Err(Errno::EINVAL);
        }
        if len == 0 {
            return Ok(0);
        }
    }
    let len = len.max(0) as usize;
    let give = |text: &str| copy_to_user(ubuf, text.as_bytes()).map(|_| text.len() as i64);
    match action {
        SYSLOG_ACTION_CLOSE | SYSLOG_ACTION_OPEN => Ok(0),
        SYSLOG_ACTION_READ => loop {
            let text = printk::read_unread(len);
            if !text.is_empty() {
                return give(&text);
            }
            if crate::task::signal::signal_pending() {
                return Err(Errno::ERESTARTSYS);
            }
            crate::task::msleep(READ_POLL_MS);
        },
        SYSLOG_ACTION_READ_ALL | SYSLOG_ACTION_READ_CLEAR => {
            give(&printk::read_all(len, action == SYSLOG_ACTION_READ_CLEAR))
        }
        SYSLOG_ACTION_CLEAR => {
            printk::clear();
            Ok(0)
        }
        SYSLOG_ACTION_CONSOLE_OFF | SYSLOG_ACTION_CONSOLE_ON => Ok(0),
        SYSLOG_ACTION_CONSOLE_LEVEL if (1..=8).contains(&len) => Ok(0),
        SYSLOG_ACTION_SIZE_UNREAD => Ok(printk::unread_bytes() as i64),
        SYSLOG_ACTION_SIZE_BUFFER => Ok(printk::LOG_BUF_LEN as i64),
        _ => Err(Errno::EINVAL),
    }
}
