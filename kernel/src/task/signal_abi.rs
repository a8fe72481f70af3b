//! The Linux arm64 signal ABI, byte for byte: signal numbers and default
//! actions, wait statuses, `struct sigaction` and `siginfo_t` as user space
//! hands them over and reads them back, and the `rt_sigframe` that signal
//! delivery pushes on the user stack and `rt_sigreturn` takes down again.
//! Linux: `arch/arm64/kernel/signal.c`; uapi `asm/{sigcontext,ucontext}.h`, `asm-generic/{signal,siginfo}.h`.
//!
//! Everything here is pure: it builds and checks byte images, and the caller
//! copies them to and from user memory. glibc, musl and our own runtime read
//! these bytes directly (a handler's `ucontext_t *`, `siglongjmp`'s saved
//! mask), so every offset is the one the uapi headers give; the tests pin
//! them to numbers printed by a C program built against those headers.
//!
//! Simplified: FP/SIMD is the only register extension we record (no SVE,
//! SME, MTE, BTI, GCS or POE records, and no `extra_context`); bytes of
//! the frame we do not fill are zero, where Linux leaves whatever the stack
//! held. Little-endian only, like every arm64 Linux user space we run.

/// A set of signals, bit `sig - 1` for signal `sig` (Linux `sigset_t`; on
/// arm64 the kernel's set is one 64-bit word).
pub type SigSet = u64;

/// The `sigsetsize` that `rt_sigaction`/`rt_sigprocmask` insist on.
pub const SIGSET_SIZE: usize = 8;

/// Signals are numbered `1..=NSIG` (Linux `_NSIG`).
pub const NSIG: u32 = 64;

/// The bit for `sig` (`1..=NSIG`) in a [`SigSet`].
pub const fn sigmask(sig: u32) -> SigSet {
    debug_assert!(sig >= 1 && sig <= NSIG);
    1 << (sig - 1)
}

/// SIGKILL and SIGSTOP: they cannot be caught, ignored or blocked, so every
/// mask user space sets is stripped of them.
pub const SIG_KERNEL_ONLY_MASK: SigSet = sigmask(SIGKILL) | sigmask(SIGSTOP);

/// The name of signal `sig`, for messages.
pub fn signal_name(sig: u32) -> &'static str {
    match sig {
        SIGHUP => "SIGHUP",
        SIGINT => "SIGINT",
        SIGQUIT => "SIGQUIT",
        SIGILL => "SIGILL",
        SIGTRAP => "SIGTRAP",
        SIGABRT => "SIGABRT",
        SIGBUS => "SIGBUS",
        SIGFPE => "SIGFPE",
        SIGKILL => "SIGKILL",
        SIGUSR1 => "SIGUSR1",
        SIGSEGV => "SIGSEGV",
        SIGUSR2 => "SIGUSR2",
        SIGPIPE => "SIGPIPE",
        SIGALRM => "SIGALRM",
        SIGTERM => "SIGTERM",
        SIGSTKFLT => "SIGSTKFLT",
        SIGCHLD => "SIGCHLD",
        SIGCONT => "SIGCONT",
        SIGSTOP => "SIGSTOP",
        SIGTSTP => "SIGTSTP",
        SIGTTIN => "SIGTTIN",
        SIGTTOU => "SIGTTOU",
        SIGURG => "SIGURG",
        SIGXCPU => "SIGXCPU",
        SIGXFSZ => "SIGXFSZ",
        SIGVTALRM => "SIGVTALRM",
        SIGPROF => "SIGPROF",
        SIGWINCH => "SIGWINCH",
        SIGIO => "SIGIO",
        SIGPWR => "SIGPWR",
        SIGSYS => "SIGSYS",
        SIGRTMIN..=SIGRTMAX => "SIGRT",
        _ => "?",
    }
}

/// What a signal does to a thread that has not installed a handler.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultAction {
    /// Terminate the process, every thread of it, without [`WCOREFLAG`].
    Terminate,
    /// Terminate, with [`WCOREFLAG`] in the wait status. We write no core
    /// file, but the parent still learns that one was due.
    CoreDump,
    /// Discard the signal, as if its disposition were SIG_IGN.
    Ignore,
    /// Stop every thread of the process until a SIGCONT (job control).
    Stop,
    /// Resume the process if it is stopped; otherwise nothing happens.
    Continue,
}

/// The table in `man 7 signal` (Linux keeps it as the `SIG_KERNEL_*_MASK`
/// sets in `include/linux/signal.h`).
pub const fn default_action(sig: u32) -> DefaultAction {
    match sig {
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | SIGXCPU | SIGXFSZ
        | SIGSYS => DefaultAction::CoreDump,
        SIGCHLD | SIGURG | SIGWINCH => DefaultAction::Ignore,
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Stop,
        SIGCONT => DefaultAction::Continue,
        _ => DefaultAction::Terminate,
    }
}

/// Set in a wait status when the signal that killed the process dumped core.
pub const WCOREFLAG: i32 = 0x80;

/// The `wait4` status of a process that called `exit(code)`: only the low
/// byte of the code survives, which is why `exit(256)` looks like success.
pub const fn exited(code: i32) -> i32 {
    (code & 0xff) << 8
}

/// The `wait4` status of a process killed by `sig`.
pub const fn signaled(sig: u32, core: bool) -> i32 {
    sig as i32 | if core { WCOREFLAG } else { 0 }
}

/// The `wait4` status of a child stopped by `sig` (`WIFSTOPPED`).
pub const fn stopped(sig: u32) -> i32 {
    ((sig as i32) << 8) | 0x7f
}

/// The `wait4` status of a child resumed by SIGCONT (`WIFCONTINUED`).
pub const CONTINUED_STATUS: i32 = 0xffff;

// struct sigaction, as rt_sigaction passes it (not the C library's own
// struct sigaction, which carries a 128-byte sigset_t).

/// `sa_handler` value: take the default action.
pub const SIG_DFL: u64 = 0;
/// `sa_handler` value: discard the signal.
pub const SIG_IGN: u64 = 1;

/// `sizeof(struct sigaction)` as `rt_sigaction` reads and writes it: 32 bytes.
pub const SIGACTION_SIZE: usize = 32;

/// `struct sigaction { sa_handler; sa_flags; sa_restorer; sa_mask; }`, four
/// 64-bit words in that order.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SigAction {
    /// [`SIG_DFL`], [`SIG_IGN`] or the handler's address.
    pub handler: u64,
    /// `SA_*` flags.
    pub flags: u64,
    /// `sa_restorer`: under [`SA_RESTORER`], where the handler returns (the C
    /// library's stub that calls `rt_sigreturn`).
    pub restorer: u64,
    /// Blocked, on top of the thread's mask, while the handler runs.
    pub mask: SigSet,
}

impl SigAction {
    /// Decode the bytes `rt_sigaction` copied in from its `act` argument.
    pub fn from_bytes(bytes: &[u8; SIGACTION_SIZE]) -> Self {
        Self {
            handler: read_u64(bytes, 0),
            flags: read_u64(bytes, 8),
            restorer: read_u64(bytes, 16),
            mask: read_u64(bytes, 24),
        }
    }

    /// Encode for `rt_sigaction`'s `oldact`, in the layout
    /// [`SigAction::from_bytes`] reads.
    pub fn to_bytes(self) -> [u8; SIGACTION_SIZE] {
        let mut bytes = [0; SIGACTION_SIZE];
        write_u64(&mut bytes, 0, self.handler);
        write_u64(&mut bytes, 8, self.flags);
        write_u64(&mut bytes, 16, self.restorer);
        write_u64(&mut bytes, 24, self.mask);
        bytes
    }
}

// siginfo_t.

/// `sizeof(siginfo_t)`: 128 bytes whichever union member is live (Linux
/// `SI_MAX_SIZE`).
pub const SIGINFO_SIZE: usize = 128;

use uapi::ptrace::{PSR_MODE32_BIT, PSR_MODE_MASK};
/// `si_code` values, from the uapi crate.
pub use uapi::signal::{
    BUS_ADRALN, BUS_ADRERR, CLD_CONTINUED, CLD_DUMPED, CLD_EXITED, CLD_KILLED, CLD_STOPPED,
    ILL_ILLOPC, SEGV_ACCERR, SEGV_MAPERR, SI_KERNEL, SI_TIMER, SI_TKILL, SI_USER, TRAP_BRKPT,
};
pub use uapi::signal::{
    MINSIGSTKSZ, SA_NOCLDSTOP, SA_NODEFER, SA_ONSTACK, SA_RESETHAND, SA_RESTART, SA_RESTORER,
    SA_SIGINFO, SIGABRT, SIGALRM, SIGBUS, SIGCHLD, SIGCONT, SIGFPE, SIGHUP, SIGILL, SIGINT, SIGIO,
    SIGKILL, SIGPIPE, SIGPROF, SIGPWR, SIGQUIT, SIGRTMAX, SIGRTMIN, SIGSEGV, SIGSTKFLT, SIGSTOP,
    SIGSYS, SIGTERM, SIGTRAP, SIGTSTP, SIGTTIN, SIGTTOU, SIGURG, SIGUSR1, SIGUSR2, SIGVTALRM,
    SIGWINCH, SIGXCPU, SIGXFSZ, SS_AUTODISARM, SS_DISABLE, SS_ONSTACK,
};

/// Byte offsets in `siginfo_t`. Three ints, then the `_sifields` union,
/// which holds pointers and so starts 8-aligned at 16; which member of the
/// union is live depends on the signal and `si_code`.
mod siginfo {
    /// `si_signo`: the signal number.
    pub const SIGNO: usize = 0;
    /// `si_errno`: always 0 from us.
    pub const ERRNO: usize = 4;
    /// `si_code`: who sent the signal or why it was raised.
    pub const CODE: usize = 8;
    /// `_kill` and `_sigchld`: the sender or the child.
    pub const PID: usize = 16;
    /// `_kill` and `_sigchld`: the sender's or the child's real user id.
    pub const UID: usize = 20;
    /// `_sigchld`: exit code or signal, then CPU times in clock ticks
    /// (`clock_t` is a long, so 8-aligned after the int status).
    pub const STATUS: usize = 24;
    /// `_sigchld`: user CPU time, in clock ticks.
    pub const UTIME: usize = 32;
    /// `_sigchld`: system CPU time, in clock ticks.
    pub const STIME: usize = 40;
    /// `_timer`: the timer's id, its overrun count, then the `sigval`.
    pub const TID: usize = 16;
    /// `_timer`: `si_overrun`, how many expiries were missed.
    pub const OVERRUN: usize = 20;
    /// `_timer`: `si_value`, the timer's `sigev_value`.
    pub const SIGVAL: usize = 24;
    /// `_sigfault`: the faulting data or instruction address.
    pub const ADDR: usize = 16;
}

/// The part of `siginfo_t` after `si_signo`, `si_errno` and `si_code`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SigFields {
    /// Sent by kill(2) or tgkill(2), or by the kernel with pid and uid 0.
    Kill {
        /// `si_pid`: the sender's process id (0 for the kernel).
        pid: i32,
        /// `si_uid`: the sender's real user id.
        uid: u32,
    },
    /// SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP raised by an instruction.
    Fault {
        /// `si_addr`: the faulting data or instruction address.
        addr: u64,
    },
    /// SIGCHLD: which child changed state and how.
    Child {
        /// `si_pid`: the child's process id.
        pid: i32,
        /// `si_uid`: the child's real user id.
        uid: u32,
        /// `si_status`: the exit code for [`CLD_EXITED`], else the signal
        /// number (not a wait status).
        status: i32,
        /// `si_utime`: the child's user CPU time, in clock ticks.
        utime: i64,
        /// `si_stime`: the child's system CPU time, in clock ticks.
        stime: i64,
    },
    /// A caller's own siginfo (pidfd_send_signal's `info`, as
    /// rt_sigqueueinfo's): its `_rt` fields, sender and value; the rest of
    /// what it gave is not kept.
    Rt {
        /// `si_pid`: the sender the caller named.
        pid: i32,
        /// `si_uid`: the user id the caller named.
        uid: u32,
        /// `si_value`: the caller's `sigval`.
        value: u64,
    },
    /// A POSIX timer's signal: which timer, how many expiries it missed
    /// since the last signal was delivered, and `sigev_value`.
    Timer {
        /// `si_timerid`: the kernel's id for the timer.
        tid: i32,
        /// `si_overrun`: expiries missed since the last signal was delivered.
        overrun: i32,
        /// `si_value`: the timer's `sigev_value`.
        value: u64,
    },
}

/// A `siginfo_t` with one of the layouts we deliver. `si_errno` is always 0,
/// as it is for every signal Linux itself raises.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SigInfo {
    /// `si_signo`: the signal number.
    pub signo: u32,
    /// `si_code`: where the signal came from (`SI_*`) or why the kernel
    /// raised it (`SEGV_*`, `BUS_*`, `ILL_*`, `CLD_*`).
    pub code: i32,
    /// The `_sifields` member that `signo` and `code` make live.
    pub fields: SigFields,
}

impl SigInfo {
    /// `code` is [`SI_USER`] for kill(2), [`SI_TKILL`] for tgkill(2),
    /// [`SI_KERNEL`] for the kernel's own signals.
    pub const fn kill(sig: u32, code: i32, pid: i32, uid: u32) -> Self {
        Self {
            signo: sig,
            code,
            fields: SigFields::Kill { pid, uid },
        }
    }

    /// A signal raised by a faulting instruction (SIGSEGV, SIGBUS, SIGILL,
    /// ...): `code` is a `SEGV_*`, `BUS_*` or `ILL_*` value and `addr`
    /// becomes `si_addr`.
    pub const fn fault(sig: u32, code: i32, addr: u64) -> Self {
        Self {
            signo: sig,
            code,
            fields: SigFields::Fault { addr },
        }
    }

    /// SIGCHLD for the parent: `code` is a `CLD_*` value and `status` the
    /// exit code or signal number (not a wait status).
    pub const fn child(code: i32, pid: i32, uid: u32, status: i32, utime: i64, stime: i64) -> Self {
        Self {
            signo: SIGCHLD,
            code,
            fields: SigFields::Child {
                pid,
                uid,
                status,
                utime,
                stime,
            },
        }
    }

    /// A POSIX timer's signal (`si_code` [`SI_TIMER`]).
    pub const fn timer(sig: u32, tid: i32, overrun: i32, value: u64) -> Self {
        Self {
            signo: sig,
            code: SI_TIMER,
            fields: SigFields::Timer {
                tid,
                overrun,
                value,
            },
        }
    }

    /// The [`SIGINFO_SIZE`]-byte `siginfo_t` to copy to user memory (a
    /// handler's `siginfo_t *`, `rt_sigtimedwait`'s `info`, `waitid`'s
    /// `infop`).
    pub fn to_bytes(self) -> [u8; SIGINFO_SIZE] {
        let mut bytes = [0; SIGINFO_SIZE];
        write_u32(&mut bytes, siginfo::SIGNO, self.signo);
        write_u32(&mut bytes, siginfo::ERRNO, 0);
        write_u32(&mut bytes, siginfo::CODE, self.code as u32);
        match self.fields {
            SigFields::Kill { pid, uid } => {
                write_u32(&mut bytes, siginfo::PID, pid as u32);
                write_u32(&mut bytes, siginfo::UID, uid);
            }
            SigFields::Fault { addr } => write_u64(&mut bytes, siginfo::ADDR, addr),
            SigFields::Rt { pid, uid, value } => {
                write_u32(&mut bytes, siginfo::PID, pid as u32);
                write_u32(&mut bytes, siginfo::UID, uid);
                write_u64(&mut bytes, siginfo::SIGVAL, value);
            }
            SigFields::Child {
                pid,
                uid,
                status,
                utime,
                stime,
            } => {
                write_u32(&mut bytes, siginfo::PID, pid as u32);
                write_u32(&mut bytes, siginfo::UID, uid);
                write_u32(&mut bytes, siginfo::STATUS, status as u32);
                write_u64(&mut bytes, siginfo::UTIME, utime as u64);
                write_u64(&mut bytes, siginfo::STIME, stime as u64);
            }
            SigFields::Timer {
                tid,
                overrun,
                value,
            } => {
                write_u32(&mut bytes, siginfo::TID, tid as u32);
                write_u32(&mut bytes, siginfo::OVERRUN, overrun as u32);
                write_u64(&mut bytes, siginfo::SIGVAL, value);
            }
        }
        bytes
    }
}

// The signal frame.

/// The general registers of an interrupted EL0 thread (Linux
/// `struct user_pt_regs`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UserRegs {
    /// x0 to x30; x29 is the frame pointer and x30 the link register.
    pub regs: [u64; 31],
    /// The user stack pointer (SP_EL0).
    pub sp: u64,
    /// Where user code resumes (ELR_EL1).
    pub pc: u64,
    /// The saved PSTATE (SPSR_EL1): NZCV flags, DAIF masks, mode.
    pub pstate: u64,
}

/// The FP/SIMD registers (Linux `struct user_fpsimd_state`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FpState {
    /// V0 to V31, the 128-bit SIMD&FP registers.
    pub vregs: [u128; 32],
    /// FPSR: the cumulative floating-point exception flags.
    pub fpsr: u32,
    /// FPCR: rounding mode and floating-point trap enables.
    pub fpcr: u32,
}

/// Byte offsets in `struct rt_sigframe { siginfo_t info; struct ucontext uc; }`,
/// the block at the handler's `sp`.
mod rt_sigframe {
    /// `info`: the `siginfo_t`, first in the frame (a handler's second
    /// argument).
    pub const INFO: usize = 0;
    /// `uc`: the `struct ucontext` right after it (a handler's third argument).
    pub const UC: usize = super::SIGINFO_SIZE;
    /// `uc_flags`: always 0.
    pub const UC_FLAGS: usize = UC;
    /// `uc_link`: always NULL.
    pub const UC_LINK: usize = UC + 8;
    /// `stack_t { void *ss_sp; int ss_flags; size_t ss_size; }`: 24 bytes,
    /// with 4 bytes of padding after the int.
    pub const UC_STACK_SP: usize = UC + 16;
    /// `uc_stack.ss_flags`.
    pub const UC_STACK_FLAGS: usize = UC + 24;
    /// `uc_stack.ss_size`, after the padding.
    pub const UC_STACK_SIZE: usize = UC + 32;
    /// The kernel's 8-byte mask, then padding up to the 128 bytes of glibc's
    /// 1024-bit `sigset_t`, so a C library's `ucontext_t` lines up with ours.
    pub const UC_SIGMASK: usize = UC + 40;
    /// `struct sigcontext`, 16-aligned because its `__reserved` area is.
    pub const UC_MCONTEXT: usize = (UC_SIGMASK + 128).next_multiple_of(16);
    /// `uc_mcontext.fault_address`, the first field of `struct sigcontext`.
    pub const FAULT_ADDRESS: usize = UC_MCONTEXT;
    /// `uc_mcontext.regs[31]`: x0 to x30, 8 bytes each.
    pub const REGS: usize = UC_MCONTEXT + 8;
    /// `uc_mcontext.sp`.
    pub const SP: usize = REGS + 31 * 8;
    /// `uc_mcontext.pc`.
    pub const PC: usize = SP + 8;
    /// `uc_mcontext.pstate`.
    pub const PSTATE: usize = PC + 8;
    /// The `__reserved` area: a list of 16-aligned records, each starting
    /// with an 8-byte `struct _aarch64_ctx { u32 magic; u32 size; }` header
    /// and the last one all zero.
    pub const RESERVED: usize = (PSTATE + 8).next_multiple_of(16);
    /// The length of `__reserved` in bytes (`__u8 __reserved[4096]`).
    pub const RESERVED_SIZE: usize = 4096;
    /// `sizeof(struct rt_sigframe)`.
    pub const SIZE: usize = RESERVED + RESERVED_SIZE;
}

/// Byte offsets in `struct fpsimd_context`.
mod fpsimd_context {
    /// `fpsr`, after the 8-byte `_aarch64_ctx` header.
    pub const FPSR: usize = 8;
    /// `fpcr`.
    pub const FPCR: usize = 12;
    /// `vregs[32]`: 16 bytes each, 16-aligned.
    pub const VREGS: usize = 16;
    /// `sizeof(struct fpsimd_context)`: 528 bytes, the `size` its header
    /// records.
    pub const SIZE: usize = VREGS + 32 * 16;
}

/// `sizeof(struct rt_sigframe)`: what `rt_sigreturn` reads at `sp`.
pub const RT_SIGFRAME_SIZE: usize = rt_sigframe::SIZE;
/// How much of an `rt_sigframe` holds the blocked mask and the registers,
/// all that [`sigreturn_regs`] reads: up to the end of `pstate`.
pub const RT_SIGFRAME_REGS_END: usize = rt_sigframe::PSTATE + 8;
/// The `{ fp, lr }` record pushed just above the `rt_sigframe`, so that a
/// debugger unwinding out of the handler reaches the interrupted code.
pub const FRAME_RECORD_SIZE: usize = 16;
/// Everything signal delivery writes: the `rt_sigframe`, then the frame
/// record.
pub const SIGFRAME_SIZE: usize = RT_SIGFRAME_SIZE + FRAME_RECORD_SIZE;

/// `_aarch64_ctx.magic` of the FP/SIMD record.
pub const FPSIMD_MAGIC: u32 = 0x4650_8001;
/// `_aarch64_ctx.magic` of the record carrying ESR_EL1 for a fault.
pub const ESR_MAGIC: u32 = 0x4553_5201;

/// `sizeof(struct _aarch64_ctx)`: the `{ magic, size }` header that starts
/// every record; the terminator is one all-zero header.
const CTX_HEADER_SIZE: usize = 8;
/// `sizeof(struct esr_context)`: the header, then the 64-bit `esr`.
const ESR_CONTEXT_SIZE: usize = 16;
/// A record's header and its start must stay 16-aligned.
const RECORD_ALIGN: usize = 16;

/// The smallest stack a handler's frame fits on, for `AT_MINSIGSTKSZ`
/// (Linux: `signal_minsigstksz`, the frame with every record this CPU
/// has, the frame record, and 16 bytes for aligning `sp`).
pub const SIGNAL_MINSIGSTKSZ: u64 =
    (RT_SIGFRAME_SIZE.next_multiple_of(16) + FRAME_RECORD_SIZE + 16) as u64;

/// A `stack_t`: an alternate signal stack as sigaltstack(2) and `uc_stack`
/// describe it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AltStack {
    /// `ss_sp`: the lowest address of the stack.
    pub sp: u64,
    /// `ss_flags`: [`SS_ONSTACK`], [`SS_DISABLE`], [`SS_AUTODISARM`].
    pub flags: u32,
    /// `ss_size`: its length in bytes.
    pub size: u64,
}

impl AltStack {
    /// No alternate stack.
    pub const DISABLED: AltStack = AltStack {
        sp: 0,
        flags: SS_DISABLE,
        size: 0,
    };
}

const _: () = assert!(rt_sigframe::RESERVED.is_multiple_of(RECORD_ALIGN));
const _: () = assert!(RT_SIGFRAME_SIZE.is_multiple_of(16));
// Our records and the terminator fit in `__reserved`, so we never need the
// `extra_context` that Linux uses to spill large SVE state past it.
const _: () = assert!(
    fpsimd_context::SIZE + ESR_CONTEXT_SIZE + CTX_HEADER_SIZE <= rt_sigframe::RESERVED_SIZE
);

/// One signal about to be delivered to a handler: the inputs of Linux's
/// `setup_rt_frame()`.
pub struct SignalDelivery<'a> {
    /// The signal number, the handler's first argument (x0).
    pub sig: u32,
    /// The disposition to run: handler, `SA_*` flags, restorer and mask.
    pub action: &'a SigAction,
    /// Copied into the frame only under SA_SIGINFO, like Linux.
    pub info: &'a [u8; SIGINFO_SIZE],
    /// The registers of the interrupted user code.
    pub regs: &'a UserRegs,
    /// The FP/SIMD registers of the interrupted code, saved in the frame's
    /// `fpsimd_context` record.
    pub fp: &'a FpState,
    /// The thread's last fault address (Linux `thread.fault_address`), or 0.
    pub fault_address: u64,
    /// ESR_EL1 of the fault that raised this signal (Linux
    /// `thread.fault_code`), recorded as an `esr_context`.
    pub esr: Option<u64>,
    /// The mask to reinstate at `rt_sigreturn`: the thread's blocked set from
    /// before the handler's own mask was added.
    pub saved_mask: SigSet,
    /// Where the handler returns without SA_RESTORER: a trampoline the kernel
    /// provides that calls `rt_sigreturn` (Linux: the vDSO's `sigtramp`).
    pub sigtramp: u64,
    /// What `uc_stack` records: the alternate stack, with the flags
    /// `sas_ss_flags()` gives for the interrupted `sp`.
    pub altstack: AltStack,
    /// The frame goes just below this: the interrupted `sp`, or the top of
    /// the alternate stack for an SA_ONSTACK handler (Linux: `sigsp`).
    pub stack_top: u64,
}

/// Where the frame goes and how the thread enters the handler.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SigFrame {
    /// User address for the [`SIGFRAME_SIZE`] bytes; it becomes the
    /// handler's `sp`.
    pub addr: u64,
    /// The registers to resume user space with.
    pub regs: UserRegs,
}

impl SignalDelivery<'_> {
    /// Linux `setup_rt_frame()`: fill `out` with the frame and say where it
    /// goes. The caller must check that all of `addr..addr + SIGFRAME_SIZE`
    /// is writable user memory (Linux's `access_ok`) and deliver SIGSEGV
    /// instead if not.
    pub fn setup_rt_frame(&self, out: &mut [u8; SIGFRAME_SIZE]) -> SigFrame {
        out.fill(0);
        let addr = get_sigframe(self.stack_top);
        let siginfo = self.action.flags & SA_SIGINFO != 0;

        write_u64(out, rt_sigframe::UC_FLAGS, 0);
        write_u64(out, rt_sigframe::UC_LINK, 0);
        // __save_altstack().
        write_u64(out, rt_sigframe::UC_STACK_SP, self.altstack.sp);
        write_u32(out, rt_sigframe::UC_STACK_FLAGS, self.altstack.flags);
        write_u64(out, rt_sigframe::UC_STACK_SIZE, self.altstack.size);
        self.setup_sigframe(out);
        if siginfo {
            out[rt_sigframe::INFO..rt_sigframe::INFO + SIGINFO_SIZE].copy_from_slice(self.info);
        }

        // setup_return(): enter the handler as if the interrupted code had
        // called it, returning to the trampoline with the frame record as
        // its caller's frame.
        let mut regs = *self.regs;
        regs.regs[0] = self.sig as u64;
        if siginfo {
            regs.regs[1] = addr + rt_sigframe::INFO as u64;
            regs.regs[2] = addr + rt_sigframe::UC as u64;
        }
        regs.sp = addr;
        regs.regs[29] = addr + RT_SIGFRAME_SIZE as u64;
        regs.regs[30] = if self.action.flags & SA_RESTORER != 0 {
            self.action.restorer
        } else {
            self.sigtramp
        };
        regs.pc = self.action.handler;
        SigFrame { addr, regs }
    }

    /// Linux `setup_sigframe()`: the saved registers, mask, records and
    /// frame record.
    fn setup_sigframe(&self, out: &mut [u8; SIGFRAME_SIZE]) {
        let regs = self.regs;
        write_u64(out, RT_SIGFRAME_SIZE, regs.regs[29]);
        write_u64(out, RT_SIGFRAME_SIZE + 8, regs.regs[30]);

        for (i, &reg) in regs.regs.iter().enumerate() {
            write_u64(out, rt_sigframe::REGS + 8 * i, reg);
        }
        write_u64(out, rt_sigframe::SP, regs.sp);
        write_u64(out, rt_sigframe::PC, regs.pc);
        write_u64(out, rt_sigframe::PSTATE, regs.pstate);
        write_u64(out, rt_sigframe::FAULT_ADDRESS, self.fault_address);
        write_u64(out, rt_sigframe::UC_SIGMASK, self.saved_mask);

        // The records, in the order setup_sigframe_layout() lays them out.
        let mut record = rt_sigframe::RESERVED;
        write_ctx_header(out, record, FPSIMD_MAGIC, fpsimd_context::SIZE);
        write_u32(out, record + fpsimd_context::FPSR, self.fp.fpsr);
        write_u32(out, record + fpsimd_context::FPCR, self.fp.fpcr);
        for (i, vreg) in self.fp.vregs.iter().enumerate() {
            let at = record + fpsimd_context::VREGS + 16 * i;
            out[at..at + 16].copy_from_slice(&vreg.to_le_bytes());
        }
        record += fpsimd_context::SIZE;

        if let Some(esr) = self.esr {
            write_ctx_header(out, record, ESR_MAGIC, ESR_CONTEXT_SIZE);
            write_u64(out, record + CTX_HEADER_SIZE, esr);
            record += ESR_CONTEXT_SIZE;
        }

        write_ctx_header(out, record, 0, 0);
    }
}

/// Linux `get_sigframe()`: the frame record goes 16-aligned just below the
/// interrupted `sp`, the `rt_sigframe` right below it. arm64 has no red
/// zone, so nothing above `sp` needs sparing. A hostile `sp` wraps around to
/// an address that no user mapping covers, so the caller's writability check
/// rejects it.
fn get_sigframe(sp: u64) -> u64 {
    let next_frame = sp.wrapping_sub(FRAME_RECORD_SIZE as u64) & !15;
    next_frame.wrapping_sub(RT_SIGFRAME_SIZE as u64)
}

/// What `rt_sigreturn` puts back.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RestoredState {
    /// The registers to resume user space with; `pstate` has been checked.
    pub regs: UserRegs,
    /// The thread's new blocked set, already without SIGKILL and SIGSTOP.
    pub blocked: SigSet,
    /// The FP/SIMD registers from the frame's `fpsimd_context` record.
    pub fp: FpState,
    /// `uc_stack`, which `rt_sigreturn` reinstates (Linux:
    /// `restore_altstack`).
    pub altstack: AltStack,
}

/// Why `rt_sigreturn` refused a frame. Linux answers each of these the same
/// way, with SIGSEGV; the reasons are for our tests and logs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BadFrame {
    /// `sp` is not 16-aligned, so it cannot point at a frame we built.
    UnalignedSp,
    /// The saved `pstate` would leave EL0, switch to AArch32 or mask
    /// exceptions.
    BadPstate,
    /// The `__reserved` records are malformed: unknown magic, bad size or
    /// alignment, a duplicate, or no terminator.
    BadRecord,
    /// No FP/SIMD record, which Linux requires on every CPU with FP/SIMD.
    NoFpsimd,
}

/// Linux `sys_rt_sigreturn()` and `restore_sigframe()`: check and decode the
/// [`RT_SIGFRAME_SIZE`] bytes the caller read from user memory at the
/// thread's `sp`. The caller also makes sure the syscall is not restarted
/// and returns `regs.regs[0]` from it, so that x0 survives the return.
pub fn parse_sigreturn(sp: u64, frame: &[u8; RT_SIGFRAME_SIZE]) -> Result<RestoredState, BadFrame> {
    if !sp.is_multiple_of(16) {
        return Err(BadFrame::UnalignedSp);
    }

    let (regs, _) = sigreturn_regs(frame);
    if valid_user_pstate(read_u64(frame, rt_sigframe::PSTATE)).is_none() {
        return Err(BadFrame::BadPstate);
    }

    let fpsimd = parse_user_sigframe(frame)?;
    let fp = FpState {
        vregs: core::array::from_fn(|i| read_u128(frame, fpsimd + fpsimd_context::VREGS + 16 * i)),
        fpsr: read_u32(frame, fpsimd + fpsimd_context::FPSR),
        fpcr: read_u32(frame, fpsimd + fpsimd_context::FPCR),
    };

    Ok(RestoredState {
        regs,
        blocked: read_u64(frame, rt_sigframe::UC_SIGMASK) & !SIG_KERNEL_ONLY_MASK,
        fp,
        altstack: AltStack {
            sp: read_u64(frame, rt_sigframe::UC_STACK_SP),
            flags: read_u32(frame, rt_sigframe::UC_STACK_FLAGS),
            size: read_u64(frame, rt_sigframe::UC_STACK_SIZE),
        },
    })
}

/// The registers and blocked mask Linux's `restore_sigframe` takes from a
/// frame before it checks anything else, so they stay even when the frame
/// is then refused (the SIGSEGV for it is about the restored `sp`): a
/// `pstate` that would not return to EL0 keeps only its NZCV flags
/// (Linux: `valid_native_regs`).
pub fn sigreturn_regs(frame: &[u8; RT_SIGFRAME_SIZE]) -> (UserRegs, u64) {
    let mut regs = UserRegs::default();
    for (i, reg) in regs.regs.iter_mut().enumerate() {
        *reg = read_u64(frame, rt_sigframe::REGS + 8 * i);
    }
    regs.sp = read_u64(frame, rt_sigframe::SP);
    regs.pc = read_u64(frame, rt_sigframe::PC);
    let pstate = read_u64(frame, rt_sigframe::PSTATE);
    regs.pstate = valid_user_pstate(pstate).unwrap_or(pstate & PSR_NZCV);
    let blocked = read_u64(frame, rt_sigframe::UC_SIGMASK) & !SIG_KERNEL_ONLY_MASK;
    (regs, blocked)
}

/// The N, Z, C and V condition flags, all a refused `pstate` keeps.
const PSR_NZCV: u64 = 0xf << 28;

/// `M[3:0]` of EL0, which always runs on SP_EL0 (Linux `PSR_MODE_EL0t`).
const PSR_MODE_EL0T: u64 = 0;
/// The D, A, I and F exception mask bits.
const PSR_DAIF: u64 = 0xf << 6;
/// Bits user space may not set: unallocated, or meaningful only to the
/// kernel (PAN, UAO, IL, ...). Linux's ptrace.c lists them the same way.
const SPSR_EL1_AARCH64_RES0_BITS: u64 =
    genmask(63, 32) | genmask(27, 26) | genmask(23, 22) | genmask(20, 13) | genmask(5, 5);

/// Linux `GENMASK(high, low)`: bits `low..=high` set, the rest clear.
const fn genmask(high: u32, low: u32) -> u64 {
    (u64::MAX >> (63 - high)) & (u64::MAX << low)
}

/// Linux `valid_native_regs()`: a user-supplied `pstate` must return to
/// AArch64 EL0 with all exceptions unmasked; anything else would hand user
/// space the kernel's privileges or stop its interrupts. Reserved bits are
/// cleared rather than refused.
fn valid_user_pstate(pstate: u64) -> Option<u64> {
    let pstate = pstate & !SPSR_EL1_AARCH64_RES0_BITS;
    let el0t = pstate & PSR_MODE_MASK == PSR_MODE_EL0T;
    (el0t && pstate & (PSR_MODE32_BIT | PSR_DAIF) == 0).then_some(pstate)
}

/// Linux `parse_user_sigframe()` plus the size check of
/// `read_fpsimd_context()`: walk the `__reserved` records and return the
/// frame offset of the FP/SIMD one. The ESR record is ours to write and user
/// space's to read, so it is skipped.
fn parse_user_sigframe(frame: &[u8; RT_SIGFRAME_SIZE]) -> Result<usize, BadFrame> {
    let limit = rt_sigframe::RESERVED_SIZE;
    let mut offset = 0;
    let mut fpsimd = None;
    loop {
        if limit - offset < CTX_HEADER_SIZE || !offset.is_multiple_of(RECORD_ALIGN) {
            return Err(BadFrame::BadRecord);
        }
        let at = rt_sigframe::RESERVED + offset;
        let magic = read_u32(frame, at);
        let size = read_u32(frame, at + 4) as usize;
        if size > limit - offset {
            return Err(BadFrame::BadRecord);
        }
        match magic {
            0 if size == 0 => break,
            FPSIMD_MAGIC if fpsimd.is_none() && size == fpsimd_context::SIZE => fpsimd = Some(at),
            // Any size will do, as long as the walk can step over it.
            ESR_MAGIC if size >= CTX_HEADER_SIZE => {}
            _ => return Err(BadFrame::BadRecord),
        }
        offset += size;
    }
    fpsimd.ok_or(BadFrame::NoFpsimd)
}

/// Write the `_aarch64_ctx` header of a record at byte `at`: its `magic`,
/// then its `size` in bytes, header included.
fn write_ctx_header(out: &mut [u8], at: usize, magic: u32, size: usize) {
    write_u32(out, at, magic);
    write_u32(out, at + 4, size as u32);
}

/// Store `value` little-endian at byte offset `at`.
fn write_u32(out: &mut [u8], at: usize, value: u32) {
    out[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// Store `value` little-endian at byte offset `at`.
fn write_u64(out: &mut [u8], at: usize, value: u64) {
    out[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Load the little-endian `u32` at byte offset `at`.
fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// Load the little-endian `u64` at byte offset `at`.
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Load the little-endian `u128` (one V register) at byte offset `at`.
fn read_u128(bytes: &[u8], at: usize) -> u128 {
    let mut word = [0; 16];
    word.copy_from_slice(&bytes[at..at + 16]);
    u128::from_le_bytes(word)
}

#[cfg(test)]
mod tests;
