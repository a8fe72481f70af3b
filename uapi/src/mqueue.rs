//! POSIX message queues' `struct mq_attr` (Linux:
//! `include/uapi/linux/mqueue.h`).

use crate::Pod;

/// `struct mq_attr`: a queue's limits and state.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct MqAttr {
    /// O_NONBLOCK of the descriptor, or 0.
    pub flags: i64,
    /// The most messages the queue holds.
    pub maxmsg: i64,
    /// The largest message, in bytes.
    pub msgsize: i64,
    /// The messages in the queue now.
    pub curmsgs: i64,
    /// Reserved, zero.
    pub reserved: [i64; 4],
}

// SAFETY: repr(C) 64-bit integers, no padding.
unsafe impl Pod for MqAttr {}
