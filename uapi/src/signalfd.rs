//! `struct signalfd_siginfo` (Linux: `include/uapi/linux/signalfd.h`):
//! one record read from a signalfd, a dequeued signal's siginfo at fixed
//! offsets.

use crate::Pod;

/// One signal, as read(2) on a signalfd returns it: 128 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalfdSiginfo {
    /// The signal number.
    pub ssi_signo: u32,
    /// An errno value (unused: zero).
    pub ssi_errno: i32,
    /// Why the signal came (`si_code`).
    pub ssi_code: i32,
    /// The sender's PID (kill, sigqueue, a child's exit).
    pub ssi_pid: u32,
    /// The sender's real user id.
    pub ssi_uid: u32,
    /// A file descriptor (SIGIO; unused).
    pub ssi_fd: i32,
    /// The POSIX timer's id.
    pub ssi_tid: u32,
    /// A band event (SIGIO; unused).
    pub ssi_band: u32,
    /// The POSIX timer's overrun count.
    pub ssi_overrun: u32,
    /// The trap number of a hardware fault (unused).
    pub ssi_trapno: u32,
    /// A child's exit status or signal (SIGCHLD).
    pub ssi_status: i32,
    /// The low 32 bits of the value sigqueue or a timer sent.
    pub ssi_int: i32,
    /// The whole value sigqueue or a timer sent.
    pub ssi_ptr: u64,
    /// A child's user CPU time, in clock ticks (SIGCHLD).
    pub ssi_utime: u64,
    /// A child's system CPU time, in clock ticks (SIGCHLD).
    pub ssi_stime: u64,
    /// The faulting address (SIGSEGV, SIGBUS, SIGILL, SIGTRAP).
    pub ssi_addr: u64,
    /// The address's least significant bit (unused).
    pub ssi_addr_lsb: u16,
    /// Padding.
    pub __pad2: u16,
    /// The system call (SIGSYS; unused).
    pub ssi_syscall: i32,
    /// The system call's address (SIGSYS; unused).
    pub ssi_call_addr: u64,
    /// The system call's architecture (SIGSYS; unused).
    pub ssi_arch: u32,
    /// Room for fields to come.
    pub __pad: [u8; 28],
}

const _: () = assert!(core::mem::size_of::<SignalfdSiginfo>() == 128);
const _: () = assert!(core::mem::offset_of!(SignalfdSiginfo, ssi_tid) == 24);
const _: () = assert!(core::mem::offset_of!(SignalfdSiginfo, ssi_ptr) == 48);
const _: () = assert!(core::mem::offset_of!(SignalfdSiginfo, ssi_addr) == 72);
const _: () = assert!(core::mem::offset_of!(SignalfdSiginfo, ssi_arch) == 96);

// SAFETY: repr(C) integers with the padding spelled out as fields (128
// bytes, no gaps, as the offsets above pin), so every bit pattern is
// valid and none is hidden.
unsafe impl Pod for SignalfdSiginfo {}
