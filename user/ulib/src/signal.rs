//! Signals: numbers and names, the kernel's `siginfo_t` and `ucontext_t`,
//! rt_sigaction (always with an `SA_RESTORER` trampoline that calls
//! rt_sigreturn), rt_sigprocmask, kill and tgkill, and [`catch_fault`], which
//! runs a closure and turns a SIGSEGV or SIGBUS inside it into an `Err`
//! carrying the signal's `si_code` and `si_addr` (sigsetjmp/siglongjmp).

use crate::errno::Errno;
use crate::sys::*;
use crate::syscall;
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
pub use uapi::signal::{SA_NODEFER, SA_RESETHAND, SA_RESTART, SA_RESTORER, SA_SIGINFO};

// uapi's values, typed as this API takes them.
pub const SIGHUP: i32 = uapi::signal::SIGHUP as i32;
pub const SIGINT: i32 = uapi::signal::SIGINT as i32;
pub const SIGQUIT: i32 = uapi::signal::SIGQUIT as i32;
pub const SIGILL: i32 = uapi::signal::SIGILL as i32;
pub const SIGTRAP: i32 = uapi::signal::SIGTRAP as i32;
pub const SIGABRT: i32 = uapi::signal::SIGABRT as i32;
pub const SIGBUS: i32 = uapi::signal::SIGBUS as i32;
pub const SIGFPE: i32 = uapi::signal::SIGFPE as i32;
pub const SIGKILL: i32 = uapi::signal::SIGKILL as i32;
pub const SIGUSR1: i32 = uapi::signal::SIGUSR1 as i32;
pub const SIGSEGV: i32 = uapi::signal::SIGSEGV as i32;
pub const SIGUSR2: i32 = uapi::signal::SIGUSR2 as i32;
pub const SIGPIPE: i32 = uapi::signal::SIGPIPE as i32;
pub const SIGALRM: i32 = uapi::signal::SIGALRM as i32;
pub const SIGTERM: i32 = uapi::signal::SIGTERM as i32;
pub const SIGCHLD: i32 = uapi::signal::SIGCHLD as i32;
pub const SIGCONT: i32 = uapi::signal::SIGCONT as i32;
pub const SIGSTOP: i32 = uapi::signal::SIGSTOP as i32;
pub const SIGSYS: i32 = uapi::signal::SIGSYS as i32;

/// The name of signal `sig` ("SIGSEGV"), or "signal ?" for others.
pub fn signal_name(sig: i32) -> &'static str {
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
        SIGCHLD => "SIGCHLD",
        SIGCONT => "SIGCONT",
        SIGSTOP => "SIGSTOP",
        SIGSYS => "SIGSYS",
        _ => "signal ?",
    }
}

/// The bit for `sig` in a signal set (`sigset_t` is 64 bits on arm64).
pub const fn sigmask(sig: i32) -> u64 {
    1 << (sig - 1)
}

pub const SIG_DFL: usize = 0;
pub const SIG_IGN: usize = 1;

pub const SIG_BLOCK: u32 = uapi::signal::SIG_BLOCK as u32;
pub const SIG_UNBLOCK: u32 = uapi::signal::SIG_UNBLOCK as u32;
pub const SIG_SETMASK: u32 = uapi::signal::SIG_SETMASK as u32;

pub use uapi::signal::{BUS_ADRERR, CLD_EXITED, SEGV_ACCERR, SEGV_MAPERR, SI_TKILL, SI_USER};

/// `siginfo_t` (128 bytes). What follows the three ints depends on the
/// signal, so it is read through the accessors.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SigInfo {
    pub si_signo: i32,
    pub si_errno: i32,
    pub si_code: i32,
    _pad: i32,
    fields: [u64; 14],
}

const _: () = assert!(size_of::<SigInfo>() == 128);

impl SigInfo {
    /// The faulting address, for SIGSEGV, SIGBUS, SIGILL, SIGFPE.
    pub fn addr(&self) -> usize {
        self.fields[0] as usize
    }

    /// The sending process, for kill/tgkill and SIGCHLD.
    pub fn pid(&self) -> i32 {
        self.fields[0] as u32 as i32
    }

    /// The sender's real uid, for kill/tgkill and SIGCHLD.
    pub fn uid(&self) -> u32 {
        (self.fields[0] >> 32) as u32
    }

    /// The child's exit code or signal, for SIGCHLD.
    pub fn status(&self) -> i32 {
        self.fields[1] as u32 as i32
    }
}

/// `struct sigcontext`: the registers at the moment the signal arrived.
/// rt_sigreturn restores them, so a handler may change them.
#[repr(C, align(16))]
pub struct SigContext {
    pub fault_address: u64,
    pub regs: [u64; 31],
    pub sp: u64,
    pub pc: u64,
    pub pstate: u64,
    /// The kernel aligns `reserved` to 16 bytes.
    _pad: u64,
    /// Records such as the FP/SIMD registers (`fpsimd_context`).
    pub reserved: [u8; 4096],
}

/// `stack_t`.
#[repr(C)]
pub struct SigStack {
    pub ss_sp: usize,
    pub ss_flags: i32,
    pub ss_size: usize,
}

/// `ucontext_t`, the third argument of an `SA_SIGINFO` handler.
#[repr(C)]
pub struct UContext {
    pub uc_flags: u64,
    pub uc_link: usize,
    pub uc_stack: SigStack,
    pub uc_sigmask: u64,
    /// glibc's sigset_t is 1024 bits; the kernel reserves room for it.
    _unused: [u8; 128 - 8],
    pub uc_mcontext: SigContext,
}

const _: () = assert!(offset_of!(UContext, uc_mcontext) == 176);
const _: () = assert!(offset_of!(SigContext, reserved) == 288);

/// A handler that gets the signal's details (`SA_SIGINFO`).
pub type Handler = extern "C" fn(sig: i32, info: &SigInfo, context: &mut UContext);

/// The kernel's `struct sigaction` (not libc's: the mask comes last).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct SigAction {
    pub sa_handler: usize,
    pub sa_flags: u64,
    pub sa_restorer: usize,
    pub sa_mask: u64,
}

// The return address of every handler: rt_sigreturn restores the context
// the kernel saved on the stack before calling the handler.
core::arch::global_asm!(
    ".globl __ulib_sigreturn",
    ".type __ulib_sigreturn, %function",
    "__ulib_sigreturn:",
    "mov x8, #{sigreturn}",
    "svc #0",
    sigreturn = const __NR_rt_sigreturn,
);

extern "C" {
    fn __ulib_sigreturn() -> !;
}

/// rt_sigaction(2): installs `new` (if given) for `sig` and returns the old
/// action.
///
/// # Safety
/// `new.sa_handler` must be `SIG_DFL`, `SIG_IGN` or a function of the right
/// type, and `sa_restorer` must call rt_sigreturn.
pub unsafe fn rt_sigaction(sig: i32, new: Option<&SigAction>) -> Result<SigAction, Errno> {
    let mut old = SigAction::default();
    let new = new.map_or(ptr::null(), |a| a as *const SigAction);
    syscall!(
        __NR_rt_sigaction,
        sig,
        new,
        &mut old as *mut SigAction,
        size_of::<u64>()
    )?;
    Ok(old)
}

/// What to do with a signal.
#[derive(Clone, Copy)]
pub enum Disposition {
    Default,
    Ignore,
    Handle(Handler),
}

/// Sets the disposition of `sig`. A handler gets `SA_SIGINFO` and the
/// restorer added to `flags`, and an empty `sa_mask` (the signal itself is
/// still blocked while it runs, unless `SA_NODEFER`).
pub fn sigaction(sig: i32, disposition: Disposition, flags: u64) -> Result<(), Errno> {
    let (handler, flags) = match disposition {
        Disposition::Default => (SIG_DFL, flags),
        Disposition::Ignore => (SIG_IGN, flags),
        Disposition::Handle(f) => (f as usize, flags | SA_SIGINFO),
    };
    let action = SigAction {
        sa_handler: handler,
        sa_flags: flags | SA_RESTORER,
        sa_restorer: __ulib_sigreturn as unsafe extern "C" fn() -> ! as usize,
        sa_mask: 0,
    };
    // SAFETY: the handler has the SA_SIGINFO signature and the restorer
    // calls rt_sigreturn.
    unsafe { rt_sigaction(sig, Some(&action)) }.map(drop)
}

/// rt_sigprocmask(2): changes the blocked set by `how` with `set` (if
/// given) and returns the old set.
pub fn rt_sigprocmask(how: u32, set: Option<u64>) -> Result<u64, Errno> {
    let mut old = 0u64;
    let set_ptr = set.as_ref().map_or(ptr::null(), |s| s as *const u64);
    // SAFETY: the kernel reads one sigset from set_ptr (or none) and writes
    // one into old.
    unsafe {
        syscall!(
            __NR_rt_sigprocmask,
            how,
            set_ptr,
            &mut old as *mut u64,
            size_of::<u64>()
        )
    }?;
    Ok(old)
}

pub fn kill(pid: i32, sig: i32) -> Result<(), Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_kill, pid, sig) }.map(drop)
}

/// Sends `sig` to thread `tid` of process `tgid`.
pub fn tgkill(tgid: i32, tid: i32, sig: i32) -> Result<(), Errno> {
    // SAFETY: no memory is passed.
    unsafe { syscall!(__NR_tgkill, tgid, tid, sig) }.map(drop)
}

/// A SIGSEGV or SIGBUS caught by [`catch_fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub signo: i32,
    pub code: i32,
    pub addr: usize,
}

/// The callee-saved state `__ulib_try` saves and `__ulib_longjmp` restores:
/// x19..x28, x29 (fp), x30 (lr), sp, d8..d15.
#[repr(C)]
struct JmpBuf([u64; 22]);

/// One active `catch_fault`: where to jump back to, the signal mask to
/// restore there, and what the handler saw.
struct Catcher {
    buf: JmpBuf,
    mask: u64,
    fault: Fault,
}

/// The innermost active catcher (this is not per thread: one thread at a
/// time may use catch_fault).
static CATCHER: AtomicPtr<Catcher> = AtomicPtr::new(ptr::null_mut());

// __ulib_try(buf, f, data) saves the callee-saved registers in buf and
// returns f(data)'s way out: 0 when f returns. __ulib_longjmp(buf) restores
// them and so returns from that same __ulib_try call a second time, with 1.
// Both halves are assembly, so Rust code only ever sees an ordinary call
// that returns once.
core::arch::global_asm!(
    ".globl __ulib_try",
    ".type __ulib_try, %function",
    "__ulib_try:",
    "stp x19, x20, [x0, #0]",
    "stp x21, x22, [x0, #16]",
    "stp x23, x24, [x0, #32]",
    "stp x25, x26, [x0, #48]",
    "stp x27, x28, [x0, #64]",
    "stp x29, x30, [x0, #80]",
    "mov x9, sp",
    "str x9, [x0, #96]",
    "stp d8, d9, [x0, #104]",
    "stp d10, d11, [x0, #120]",
    "stp d12, d13, [x0, #136]",
    "stp d14, d15, [x0, #152]",
    "stp x29, x30, [sp, #-16]!",
    "mov x29, sp",
    "mov x0, x2",
    "blr x1",
    "ldp x29, x30, [sp], #16",
    "mov x0, #0",
    "ret",
    "",
    ".globl __ulib_longjmp",
    ".type __ulib_longjmp, %function",
    "__ulib_longjmp:",
    "ldp x19, x20, [x0, #0]",
    "ldp x21, x22, [x0, #16]",
    "ldp x23, x24, [x0, #32]",
    "ldp x25, x26, [x0, #48]",
    "ldp x27, x28, [x0, #64]",
    "ldp x29, x30, [x0, #80]",
    "ldr x9, [x0, #96]",
    "mov sp, x9",
    "ldp d8, d9, [x0, #104]",
    "ldp d10, d11, [x0, #120]",
    "ldp d12, d13, [x0, #136]",
    "ldp d14, d15, [x0, #152]",
    "mov x0, #1",
    "ret",
);

extern "C" {
    fn __ulib_try(buf: *mut JmpBuf, f: extern "C" fn(*mut c_void), data: *mut c_void) -> i32;
    fn __ulib_longjmp(buf: *const JmpBuf) -> !;
}

/// Calls the closure in `slot.0` and stores its result in `slot.1`.
extern "C" fn call_closure<F: FnOnce() -> R, R>(slot: *mut c_void) {
    // SAFETY: catch_fault passes a pointer to its (Option<F>, Option<R>).
    let slot = unsafe { &mut *(slot as *mut (Option<F>, Option<R>)) };
    if let Some(f) = slot.0.take() {
        slot.1 = Some(f());
    }
}

/// The SIGSEGV/SIGBUS handler of catch_fault: record the fault, restore the
/// signal mask from before the fault (the kernel blocked the signal for the
/// handler), and jump back into catch_fault.
extern "C" fn on_fault(sig: i32, info: &SigInfo, _context: &mut UContext) {
    let catcher = CATCHER.load(Ordering::Acquire);
    if catcher.is_null() {
        // Not ours: fall back to the default action, which the faulting
        // instruction meets again as soon as this handler returns.
        let _ = sigaction(sig, Disposition::Default, 0);
        return;
    }
    // SAFETY: a non-null CATCHER points at the Catcher of the catch_fault
    // call still running below this handler on the stack.
    unsafe {
        (*catcher).fault = Fault {
            signo: info.si_signo,
            code: info.si_code,
            addr: info.addr(),
        };
        let _ = rt_sigprocmask(SIG_SETMASK, Some((*catcher).mask));
        __ulib_longjmp(&(*catcher).buf)
    }
}

/// Runs `f`; if it raises SIGSEGV or SIGBUS, returns the signal, `si_code`
/// and `si_addr` instead of its result. The signal mask is restored and the
/// previous SIGSEGV/SIGBUS actions are put back either way.
///
/// # Safety
/// A fault abandons `f` midway, as siglongjmp does: its locals are not
/// dropped, so it must not hold locks or own anything whose destructor
/// matters. Only one thread at a time may use catch_fault.
pub unsafe fn catch_fault<F: FnOnce() -> R, R>(f: F) -> Result<R, Fault> {
    let mut catcher = Catcher {
        buf: JmpBuf([0; 22]),
        mask: rt_sigprocmask(SIG_BLOCK, None).expect("rt_sigprocmask"),
        fault: Fault {
            signo: 0,
            code: 0,
            addr: 0,
        },
    };
    let old_segv = install_fault_handler(SIGSEGV);
    let old_bus = install_fault_handler(SIGBUS);
    let outer = CATCHER.swap(&mut catcher, Ordering::AcqRel);
    let mut slot: (Option<F>, Option<R>) = (Some(f), None);
    let jumped = __ulib_try(
        &mut catcher.buf,
        call_closure::<F, R>,
        &mut slot as *mut _ as *mut c_void,
    );
    CATCHER.store(outer, Ordering::Release);
    let _ = rt_sigaction(SIGSEGV, Some(&old_segv));
    let _ = rt_sigaction(SIGBUS, Some(&old_bus));
    match (jumped, slot.1) {
        (0, Some(result)) => Ok(result),
        _ => Err(catcher.fault),
    }
}

fn install_fault_handler(sig: i32) -> SigAction {
    // SAFETY: reading the current action writes only into the result.
    let old = unsafe { rt_sigaction(sig, None) }.expect("rt_sigaction");
    sigaction(sig, Disposition::Handle(on_fault), 0).expect("rt_sigaction");
    old
}
