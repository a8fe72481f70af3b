//! Signals: sending them, choosing one to deliver on the way back to user
//! space, running the default action or building a handler's frame, and
//! `rt_sigreturn` (Linux: `kernel/signal.c` `send_signal`, `get_signal`,
//! `force_sig_fault`; `arch/arm64/kernel/signal.c` `do_signal`,
//! `setup_rt_frame`, `sys_rt_sigreturn`). The frame layout itself lives in
//! `signal_abi.rs`.
//!
//! Job control (Linux: `prepare_signal`, `do_signal_stop`): a stop
//! signal's default action stops every thread of the process until SIGCONT
//! or SIGKILL; SIGCONT discards pending stop signals and a stop signal
//! pending SIGCONTs, when sent. The parent hears of both through SIGCHLD
//! and wait.
//!
//! Where we simplify: standard and real-time signals alike are pending at
//! most once; a stop is reported to the parent at once, not after every
//! thread has stopped; only SA_RESTART handlers, stops and ignored signals
//! restart an interrupted system call (the sleeps always return EINTR).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::arch::context::{fpsimd_load, fpsimd_save, FpsimdState};
use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use crate::mm::uaccess::{copy_from_user, copy_to_user};
use crate::task::exit::do_group_exit;
use crate::task::process::{Process, UserThread};
use crate::task::signal_abi::{
    default_action, parse_sigreturn, sigmask, signaled, sigreturn_regs, AltStack, DefaultAction,
    FpState, SigAction, SigFields, SigInfo, SignalDelivery, UserRegs, CLD_CONTINUED, CLD_DUMPED,
    CLD_EXITED, CLD_KILLED, CLD_STOPPED, MINSIGSTKSZ, NSIG, RT_SIGFRAME_REGS_END, RT_SIGFRAME_SIZE,
    SA_NOCLDSTOP, SA_NODEFER, SA_ONSTACK, SA_RESETHAND, SA_RESTART, SIGCHLD, SIGCONT,
    SIGFRAME_SIZE, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU, SIG_DFL, SIG_IGN, SIG_KERNEL_ONLY_MASK,
    SI_KERNEL, SI_TIMER, SI_TKILL, SI_USER, SS_AUTODISARM, SS_DISABLE, SS_ONSTACK,
};
pub use crate::task::signal_abi::{
    BUS_ADRALN, BUS_ADRERR, ILL_ILLOPC, SEGV_ACCERR, SEGV_MAPERR, SIGBUS, SIGILL, SIGKILL, SIGSEGV,
    SIGTRAP, TRAP_BRKPT,
};
use crate::task::{current, Thread};

/// Who sent a signal, for its siginfo.
#[derive(Copy, Clone)]
pub enum SigSource {
    /// The kernel on its own behalf (`SI_KERNEL`, pid and uid 0).
    Kernel,
    /// kill(2) from this PID and real user id.
    Kill(u32, u32),
    /// tgkill(2) from this PID and real user id.
    Tkill(u32, u32),
}

/// The `siginfo_t` a signal from `source` carries (Linux: what
/// `__send_signal` fills in from `SEND_SIG_PRIV` or a `kernel_siginfo`).
fn info_for(sig: u32, source: SigSource) -> SigInfo {
    match source {
        SigSource::Kernel => SigInfo::kill(sig, SI_KERNEL, 0, 0),
        SigSource::Kill(pid, uid) => SigInfo::kill(sig, SI_USER, pid as i32, uid),
        SigSource::Tkill(pid, uid) => SigInfo::kill(sig, SI_TKILL, pid as i32, uid),
    }
}

/// The process's action for `sig` now (Linux:
/// `sighand->action[sig - 1]`).
fn action(p: &Process, sig: u32) -> SigAction {
    p.actions.lock()[sig as usize - 1]
}

/// Would `sig` be thrown away on delivery? (Linux: `sig_handler_ignored`.)
fn ignored_action(act: &SigAction, sig: u32) -> bool {
    act.handler == SIG_IGN
        || (act.handler == SIG_DFL && matches!(default_action(sig), DefaultAction::Ignore))
}

/// An ignored signal is discarded when sent, unless the receiver blocks it:
/// the action may change before it is unblocked (Linux: `sig_ignored`).
fn discard(p: &Process, sig: u32, blocked: bool) -> bool {
    sig != SIGKILL && !blocked && ignored_action(&action(p, sig), sig)
}

/// A signal for the whole process (kill(2)): any thread not blocking it may
/// take it. SIGKILL ends the process at once.
pub fn send_to_process(p: &Arc<Process>, sig: u32, source: SigSource) {
    queue_signal(p, sig, info_for(sig, source));
}

/// The signals a thread does not want delivered now: its mask, and what
/// rt_sigtimedwait waits for (Linux: `blocked` and `real_blocked`).
fn blocked_by(u: &UserThread) -> u64 {
    u.sigmask.load(Ordering::Acquire) | u.waiting_for.load(Ordering::Acquire)
}

/// The stop signals, SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU (Linux:
/// `SIG_KERNEL_STOP_MASK`), which a SIGCONT throws away and which throw
/// away a pending SIGCONT.
const STOP_MASK: u64 = sigmask(SIGSTOP) | sigmask(SIGTSTP) | sigmask(SIGTTIN) | sigmask(SIGTTOU);

/// Removes `mask` from every pending set of the process.
fn flush_pending(p: &Process, mask: u64) {
    p.shared_pending.fetch_and(!mask, Ordering::AcqRel);
    for t in p.live_threads() {
        if let Some(u) = &t.user {
            u.pending.fetch_and(!mask, Ordering::AcqRel);
        }
    }
}

/// What sending `sig` does before it is queued (Linux: `prepare_signal`):
/// a stop signal throws away pending SIGCONTs; SIGCONT throws away pending
/// stop signals and resumes a stopped process, whatever its action.
fn prepare_signal(p: &Arc<Process>, sig: u32) {
    if STOP_MASK & sigmask(sig) != 0 {
        flush_pending(p, sigmask(SIGCONT));
    } else if sig == SIGCONT {
        flush_pending(p, STOP_MASK);
        if p.set_stopped(false) {
            p.stop_report.store(0, Ordering::Release);
            p.continued_report.store(true, Ordering::Release);
            p.stop_wait.wake_all();
            notify_parent_cldstop(p, CLD_CONTINUED, SIGCONT);
        }
    }
}

/// SIGCHLD to the parent of `p`, which stopped (CLD_STOPPED) or continued
/// (CLD_CONTINUED), unless the parent set SA_NOCLDSTOP; its waiters wake
/// either way (Linux: `do_notify_parent_cldstop`).
fn notify_parent_cldstop(p: &Arc<Process>, code: i32, sig: u32) {
    let Some(parent) = p.parent() else { return };
    if action(&parent, SIGCHLD).flags & SA_NOCLDSTOP == 0 {
        let (utime, stime) = p.cputime();
        let info = SigInfo::child(
            code,
            p.pid as i32,
            0,
            sig as i32,
            (utime / CLOCK_TICK_NS) as i64,
            (stime / CLOCK_TICK_NS) as i64,
        );
        queue_signal(&parent, SIGCHLD, info);
    }
    parent.child_wait.wake_all();
}

/// Nanoseconds per `clock_t` tick (USER_HZ 100), for siginfo's times.
const CLOCK_TICK_NS: u64 = 10_000_000;

/// Queues `sig` with `info` for the whole process; false if it was
/// discarded (ignored). Job control and SIGKILL act here.
pub fn queue_signal(p: &Arc<Process>, sig: u32, info: SigInfo) -> bool {
    if sig == 0 {
        return false;
    }
    prepare_signal(p, sig);
    let threads = p.live_threads();
    let blocked = !threads.is_empty()
        && threads.iter().all(|t| {
            t.user
                .as_ref()
                .is_some_and(|u| blocked_by(u) & sigmask(sig) != 0)
        });
    if discard(p, sig, blocked) {
        return false;
    }
    if sig == SIGKILL && !p.exiting.swap(true, Ordering::AcqRel) {
        p.exit_status
            .store(signaled(SIGKILL, false) as u32, Ordering::Release);
    }
    p.shared_info.lock()[sig as usize - 1] = Some(info);
    p.shared_pending.fetch_or(sigmask(sig), Ordering::AcqRel);
    // One thread to take it; and the threads that block it, whose
    // signalfd reads and polls look for it (Linux: `signalfd_notify`).
    let target = target_thread(&threads, sig);
    for t in &threads {
        let blocks = t
            .user
            .as_ref()
            .is_some_and(|u| u.sigmask.load(Ordering::Acquire) & sigmask(sig) != 0);
        let chosen = target.as_ref().is_some_and(|c| Arc::ptr_eq(c, t));
        // Any thread may take it (or, for SIGKILL, leave).
        if let Some(u) = &t.user {
            u.set_sigpending();
        }
        if sig == SIGKILL || chosen || blocks {
            crate::task::wake_up(t);
        }
    }
    true
}

/// Would the thread `u` take `sig` now: it does not block it, or waits
/// for it in rt_sigtimedwait (Linux: `wants_signal`)?
fn wants_signal(u: &UserThread, sig: u32) -> bool {
    let blocked = u.sigmask.load(Ordering::Acquire) & !u.waiting_for.load(Ordering::Acquire);
    blocked & sigmask(sig) == 0
}

/// The one thread of `threads` (a process's) to wake for a signal sent to
/// the whole process: the calling thread if it is one of them and would
/// take it, sparing a sleeping one (what a timer on a busy thread's CPU
/// time wants), else the first that would; None if all block it (Linux:
/// `complete_signal`, with `send_sigqueue`'s preference for current).
fn target_thread(threads: &[Arc<Thread>], sig: u32) -> Option<Arc<Thread>> {
    let wants = |t: &Arc<Thread>| t.user.as_ref().is_some_and(|u| wants_signal(u, sig));
    let me = crate::task::current_ref();
    let me: &Thread = &me;
    threads
        .iter()
        .find(|t| core::ptr::eq(Arc::as_ptr(t), me) && wants(t))
        .cloned()
        .or_else(|| threads.iter().find(|t| wants(t)).cloned())
}

/// The exit signal `sig` (SIGCHLD, or what clone chose; 0 for none) to
/// a parent whose child `pid` ended with wait status `status` (Linux:
/// `do_notify_parent`): si_code says how, si_status the exit code or the
/// signal.
pub fn send_child_signal(parent: &Arc<Process>, sig: u32, pid: u32, status: u32) {
    if sig == 0 || sig > NSIG {
        return;
    }
    let (code, value) = match status & 0x7f {
        0 => (CLD_EXITED, (status >> 8) & 0xff),
        s if status & 0x80 != 0 => (CLD_DUMPED, s),
        s => (CLD_KILLED, s),
    };
    let info = SigInfo {
        signo: sig,
        ..SigInfo::child(code, pid as i32, 0, value as i32, 0, 0)
    };
    queue_signal(parent, sig, info);
}

/// A signal for one thread (tgkill(2)).
pub fn send_to_thread(t: &Arc<Thread>, sig: u32, source: SigSource) {
    queue_for_thread(t, sig, info_for(sig, source));
}

/// Queues `sig` with `info` for thread `t`; false if it was discarded.
pub fn queue_for_thread(t: &Arc<Thread>, sig: u32, info: SigInfo) -> bool {
    let Some(u) = &t.user else { return false };
    if sig == 0 {
        return false;
    }
    if sig == SIGKILL {
        return queue_signal(&u.process, sig, info);
    }
    prepare_signal(&u.process, sig);
    if discard(&u.process, sig, blocked_by(u) & sigmask(sig) != 0) {
        return false;
    }
    u.info.lock()[sig as usize - 1] = Some(info);
    u.pending.fetch_or(sigmask(sig), Ordering::AcqRel);
    u.set_sigpending();
    crate::task::wake_up(t);
    true
}

/// A signal for the calling thread (SIGPIPE on a broken pipe).
pub fn send_to_current(sig: u32) {
    let me = current();
    if me.user.is_some() {
        send_to_thread(&me, sig, SigSource::Kernel);
    }
}

/// A signal caused by the instruction the thread just ran (Linux:
/// `force_sig_fault`): it cannot be blocked or ignored away, so a blocked
/// or ignored one is unblocked and reset to its default (death).
pub fn force_fault_signal(sig: u32, code: i32, addr: u64) {
    let me = current();
    let Some(u) = &me.user else { return };
    let mut actions = u.process.actions.lock();
    let blocked = u.sigmask.load(Ordering::Relaxed) & sigmask(sig) != 0;
    if blocked || actions[sig as usize - 1].handler == SIG_IGN {
        actions[sig as usize - 1].handler = SIG_DFL;
        u.sigmask.fetch_and(!sigmask(sig), Ordering::Relaxed);
    }
    drop(actions);
    u.info.lock()[sig as usize - 1] = Some(SigInfo::fault(sig, code, addr));
    u.pending.fetch_or(sigmask(sig), Ordering::AcqRel);
    u.set_sigpending();
}

/// The signals pending for `u`, its own and its process's, that it does
/// not block: what delivery may take.
fn deliverable(u: &UserThread) -> u64 {
    (u.pending.load(Ordering::Acquire) | u.process.shared_pending.load(Ordering::Acquire))
        & !u.sigmask.load(Ordering::Acquire)
}

/// Does the calling thread ignore or block `sig`? (Linux: `is_ignored` ||
/// `sigismember(&current->blocked, sig)`, which the terminal checks before
/// it stops a background reader with SIGTTIN.)
pub fn ignored_or_blocked(sig: u32) -> bool {
    match &current().user {
        Some(u) => {
            u.sigmask.load(Ordering::Acquire) & sigmask(sig) != 0
                || action(&u.process, sig).handler == SIG_IGN
        }
        None => true,
    }
}

/// Does the current thread have a signal to take, a stop to join or a
/// process to leave? Interruptible waits end early when it does.
pub fn signal_pending() -> bool {
    current().user.as_ref().is_some_and(pending_for)
}

/// `signal_pending` for the thread `u`.
fn pending_for(u: &UserThread) -> bool {
    deliverable(u) != 0
        || u.process.exiting.load(Ordering::Acquire)
        || u.process.stopped.load(Ordering::Acquire)
}

/// Takes the lowest deliverable signal: thread-directed first.
fn dequeue(u: &UserThread) -> Option<(u32, SigInfo)> {
    dequeue_from(u, deliverable(u))
}

/// Takes the calling thread's lowest pending signal in `mask`, blocked or
/// not (Linux: `dequeue_signal`, as signalfd's read calls it).
pub fn dequeue_signal(mask: u64) -> Option<SigInfo> {
    let me = current();
    let u = me.user.as_ref()?;
    dequeue_from(u, mask).map(|(_, info)| info)
}

/// Takes the lowest pending signal of `set`, thread-directed first (Linux:
/// `dequeue_signal`); a POSIX timer's signal picks up its overrun count.
pub fn dequeue_from(u: &UserThread, set: u64) -> Option<(u32, SigInfo)> {
    let set = set
        & (u.pending.load(Ordering::Acquire) | u.process.shared_pending.load(Ordering::Acquire));
    let (sig, mut info) = take_pending(u, set)?;
    if let SigFields::Timer { tid, overrun, .. } = &mut info.fields {
        if info.code == SI_TIMER {
            *overrun = crate::task::timers::timer_signal_dequeued(&u.process, *tid);
        }
    }
    Some((sig, info))
}

/// Takes the lowest signal of `set`, from the thread's own pending set if
/// it is there, else from the process's.
fn take_pending(u: &UserThread, set: u64) -> Option<(u32, SigInfo)> {
    if set == 0 {
        return None;
    }
    let sig = set.trailing_zeros() + 1;
    let bit = sigmask(sig);
    if u.pending.fetch_and(!bit, Ordering::AcqRel) & bit != 0 {
        let info = u.info.lock()[sig as usize - 1].take();
        return Some((
            sig,
            info.unwrap_or_else(|| info_for(sig, SigSource::Kernel)),
        ));
    }
    if u.process.shared_pending.fetch_and(!bit, Ordering::AcqRel) & bit == 0 {
        // Another thread took it first.
        return None;
    }
    let info = u.process.shared_info.lock()[sig as usize - 1].take();
    Some((
        sig,
        info.unwrap_or_else(|| info_for(sig, SigSource::Kernel)),
    ))
}

/// On every return to user space: leave if the process is exiting, else
/// act on one pending signal (Linux: `do_signal` / `get_signal`), if the
/// thread's `sigpending` flag says there may be something to do (Linux:
/// `exit_to_user_mode_loop`'s test of `_TIF_SIGPENDING`).
#[inline(always)] // nearly always one load that finds nothing to do
pub fn do_signal(tf: &mut TrapFrame) {
    let current = crate::task::current_ref();
    if let Some(u) = &current.user {
        if u.sigpending.load(Ordering::Relaxed) {
            do_signal_work(tf);
        }
    }
}

/// Has the thread `u` a signal it does not block, an exit or a stop to
/// join, or a system call or mask to put back?
fn signal_work(u: &UserThread) -> bool {
    pending_for(u)
        || u.restart_pending.load(Ordering::Relaxed)
        || u.restore_sigmask.load(Ordering::Relaxed)
}

/// `do_signal` with its flag up. Out of line: its frame is large.
#[cold]
#[inline(never)]
fn do_signal_work(tf: &mut TrapFrame) {
    {
        let current = crate::task::current_ref();
        let Some(u) = &current.user else { return };
        // Down before looking: work made from now on raises it again, and
        // the acquire sees the work of whoever raised it so far.
        if !u.sigpending.swap(false, Ordering::Acquire) || !signal_work(u) {
            return;
        }
    }
    // Decide with the thread's references held, die without them: a
    // thread that exits never returns here to drop them.
    if let Some(status) = get_signal(tf) {
        do_group_exit(status);
    }
    if let Some(u) = &crate::task::current_ref().user {
        // rt_sigsuspend ended, and no handler's frame took its old mask
        // (the signal was ignored, or another thread took it): put it back.
        if u.restore_sigmask.swap(false, Ordering::Relaxed) {
            u.sigmask
                .store(u.saved_sigmask.load(Ordering::Relaxed), Ordering::Release);
        }
        // One signal is delivered per return; the next waits for the next.
        if signal_work(u) {
            u.set_sigpending();
        }
    }
}

/// Acts on pending signals until one is handled or none is left; returns
/// a wait status if one kills (Linux: `get_signal`).
fn get_signal(tf: &mut TrapFrame) -> Option<u32> {
    let me = current();
    let u = me.user.as_ref()?;
    let restart = u
        .restart_pending
        .swap(false, Ordering::Relaxed)
        .then(|| u.restart_x0.load(Ordering::Relaxed));
    // Run the interrupted call again (Linux: -ERESTARTSYS when no handler
    // runs, or one with SA_RESTART): back to the svc, first argument back.
    let restart_call = |tf: &mut TrapFrame| {
        if let Some(x0) = restart {
            tf.set_reg(0, x0);
            tf.set_pc(tf.pc() - 4);
        }
    };
    loop {
        if u.process.exiting.load(Ordering::Acquire) {
            return Some(u.process.exit_status.load(Ordering::Acquire));
        }
        if u.process.stopped.load(Ordering::Acquire) {
            do_signal_stop(&u.process);
            continue;
        }
        let Some((sig, info)) = dequeue(u) else {
            restart_call(tf);
            return None;
        };
        let act = action(&u.process, sig);
        // No core files are written, so no wait status has the core flag.
        match act.handler {
            SIG_IGN => continue,
            SIG_DFL => match default_action(sig) {
                DefaultAction::Terminate => return Some(signaled(sig, false) as u32),
                DefaultAction::CoreDump => {
                    report_fatal(u, sig, &info, tf);
                    return Some(signaled(sig, false) as u32);
                }
                DefaultAction::Stop => {
                    // The terminal's stops do nothing to an orphaned group:
                    // no one is left to continue it (POSIX; Linux:
                    // `is_current_pgrp_orphaned`).
                    let pgid = u.process.pgid.load(Ordering::Acquire);
                    if sig != SIGSTOP && crate::task::process::is_orphaned_pgrp(pgid) {
                        continue;
                    }
                    if u.process.set_stopped(true) {
                        u.process.stop_report.store(sig, Ordering::Release);
                        u.process.continued_report.store(false, Ordering::Release);
                        // Each thread joins the stop on its way out.
                        for t in u.process.live_threads() {
                            if let Some(other) = &t.user {
                                other.set_sigpending();
                            }
                            crate::task::wake_up(&t);
                        }
                        notify_parent_cldstop(&u.process, CLD_STOPPED, sig);
                    }
                    continue;
                }
                DefaultAction::Ignore | DefaultAction::Continue => continue,
            },
            _ => {
                if act.flags & SA_RESTART != 0 {
                    restart_call(tf);
                }
                // No room for the frame: Linux forces SIGSEGV, which kills.
                return setup_frame(u, tf, sig, &act, &info)
                    .is_err()
                    .then_some(signaled(SIGSEGV, false) as u32);
            }
        }
    }
}

/// Sleeps while the process is stopped, until SIGCONT or SIGKILL (Linux:
/// `do_signal_stop`'s `schedule()` in TASK_STOPPED).
fn do_signal_stop(p: &Process) {
    p.stop_wait
        .wait_until(|| !p.stopped.load(Ordering::Acquire) || p.exiting.load(Ordering::Acquire));
}

/// A process killed by a fault leaves a line on the console (Linux:
/// `show_unhandled_signals`' "segfault at ..." in the kernel log).
fn report_fatal(u: &UserThread, sig: u32, info: &SigInfo, tf: &TrapFrame) {
    let addr = match info.fields {
        crate::task::signal_abi::SigFields::Fault { addr } => addr,
        _ => 0,
    };
    println!(
        "{}[{}]: unhandled {} code {} at {:#x}, pc {:#x}, lr {:#x}, sp {:#x}",
        u.process.exe.lock().path.as_str(),
        u.tid,
        crate::task::signal_abi::signal_name(sig),
        info.code,
        addr,
        tf.pc(),
        tf.arg(30),
        tf.sp()
    );
}

/// The interrupted user registers in the signal frame's form (Linux:
/// `struct user_pt_regs`, the start of `pt_regs`).
fn regs_of(tf: &TrapFrame) -> UserRegs {
    let mut regs = UserRegs {
        sp: tf.sp(),
        pc: tf.pc(),
        pstate: tf.pstate(),
        ..UserRegs::default()
    };
    for (i, r) in regs.regs.iter_mut().enumerate() {
        *r = tf.arg(i);
    }
    regs
}

/// The FP/SIMD registers in the signal frame's form (Linux:
/// `struct user_fpsimd_state`); FPSR and FPCR keep only their 32 bits.
fn fp_of(s: &FpsimdState) -> FpState {
    FpState {
        vregs: s.vregs,
        fpsr: s.fpsr as u32,
        fpcr: s.fpcr as u32,
    }
}

/// Where a handler without SA_RESTORER returns: the vDSO's
/// `__kernel_rt_sigreturn` in this process (Linux: `setup_return`, with
/// `VDSO_SYMBOL(current->mm->context.vdso, sigtramp)`); 0 without a vDSO.
fn sigtramp() -> u64 {
    static OFFSET: spin::Once<u64> = spin::Once::new();
    let offset = *OFFSET.call_once(|| {
        crate::arch::vdso::symbol_offset("__kernel_rt_sigreturn").expect("the vDSO has it")
    });
    match crate::task::current_mm().map(|mm| mm.mmap_lock_readonly().vdso) {
        Some(base) if base != 0 => base as u64 + offset,
        _ => 0,
    }
}

/// Builds the handler's frame on the user stack and points the registers
/// at the handler (Linux: `setup_rt_frame`).
fn setup_frame(
    u: &UserThread,
    tf: &mut TrapFrame,
    sig: u32,
    act: &SigAction,
    info: &SigInfo,
) -> KResult<()> {
    let regs = regs_of(tf);
    let fp = fp_of(&fpsimd_save());
    // The mask the handler's return restores: after rt_sigsuspend, the
    // one it replaced (Linux: `sigmask_to_save`).
    let saved_mask = if u.restore_sigmask.swap(false, Ordering::Relaxed) {
        u.saved_sigmask.load(Ordering::Relaxed)
    } else {
        u.sigmask.load(Ordering::Acquire)
    };
    let fault_address = match info.fields {
        crate::task::signal_abi::SigFields::Fault { addr } => addr,
        _ => 0,
    };
    // The alternate stack (Linux: `sigsp`, `__save_altstack`): an
    // SA_ONSTACK handler moves onto it unless the thread is already there.
    let (altstack, stack_top) = {
        let mut alt = u.altstack.lock();
        let saved = AltStack {
            flags: sas_ss_flags(&alt, tf.sp()) | (alt.flags & SS_AUTODISARM),
            ..*alt
        };
        let top = if act.flags & SA_ONSTACK != 0 && saved.flags & !SS_AUTODISARM == 0 {
            alt.sp.wrapping_add(alt.size)
        } else {
            tf.sp()
        };
        if alt.flags & SS_AUTODISARM != 0 {
            *alt = AltStack::DISABLED;
        }
        (saved, top)
    };
    let delivery = SignalDelivery {
        sig,
        action: act,
        info: &info.to_bytes(),
        regs: &regs,
        fp: &fp,
        fault_address,
        esr: None,
        saved_mask,
        sigtramp: sigtramp(),
        altstack,
        stack_top,
    };
    let mut bytes = alloc::boxed::Box::new([0u8; SIGFRAME_SIZE]);
    let frame = delivery.setup_rt_frame(&mut bytes);
    copy_to_user(frame.addr as usize, &bytes[..])?;
    for i in 0..31 {
        tf.set_reg(i, frame.regs.regs[i]);
    }
    tf.set_sp(frame.regs.sp);
    tf.set_pc(frame.regs.pc);
    tf.set_pstate(frame.regs.pstate);
    let mut mask = saved_mask | act.mask;
    if act.flags & SA_NODEFER == 0 {
        mask |= sigmask(sig);
    }
    u.set_sigmask(mask & !SIG_KERNEL_ONLY_MASK);
    if act.flags & SA_RESETHAND != 0 {
        u.process.actions.lock()[sig as usize - 1].handler = SIG_DFL;
    }
    Ok(())
}

/// rt_sigreturn(2): put back what the frame at `sp` saved (Linux:
/// `sys_rt_sigreturn`, `restore_sigframe`). A frame refused after its
/// registers were restored raises SIGSEGV about the restored `sp` (0 if
/// they could not be read); one refused before, misaligned or not in the
/// user range, about its own.
pub fn sigreturn(tf: &mut TrapFrame) {
    let me = current();
    let Some(u) = &me.user else { return };
    let frame_sp = tf.sp();
    let in_range = (frame_sp as usize)
        .checked_add(RT_SIGFRAME_SIZE)
        .is_some_and(|end| end <= crate::mm::addr::USER_TOP);
    if !frame_sp.is_multiple_of(16) || !in_range {
        notify_segfault(frame_sp);
        return;
    }
    let mut bytes = alloc::boxed::Box::new([0u8; RT_SIGFRAME_SIZE]);
    // The mask and registers come back first, whatever the checks say;
    // what cannot be read comes back as 0 (Linux: `__get_user_error`).
    let head = &mut bytes[..RT_SIGFRAME_REGS_END];
    let head_read = copy_from_user(head, frame_sp as usize).is_ok();
    if !head_read {
        head.fill(0);
    }
    let (regs, blocked) = sigreturn_regs(&bytes);
    for i in 0..31 {
        tf.set_reg(i, regs.regs[i]);
    }
    tf.set_sp(regs.sp);
    tf.set_pc(regs.pc);
    tf.set_pstate(regs.pstate);
    if head_read {
        u.set_sigmask(blocked);
    }
    let tail = &mut bytes[RT_SIGFRAME_REGS_END..];
    let tail_read = copy_from_user(tail, frame_sp as usize + RT_SIGFRAME_REGS_END).is_ok();
    let parsed = parse_sigreturn(frame_sp, &bytes).ok();
    let Some(r) = parsed.filter(|_| head_read && tail_read) else {
        notify_segfault(regs.sp);
        return;
    };
    // Linux's `restore_altstack`: put back the stack the frame recorded
    // (what SS_AUTODISARM took away); refused, silently, while on it.
    let _ = set_altstack(u, r.altstack, frame_sp);
    fpsimd_load(&FpsimdState {
        vregs: r.fp.vregs,
        fpsr: r.fp.fpsr as u64,
        fpcr: r.fp.fpcr as u64,
    });
}

/// SIGSEGV for a bad user address the kernel found (a refused signal
/// frame at `addr`): SEGV_MAPERR if no mapping lies at or above it, else
/// SEGV_ACCERR (Linux: `arm64_notify_segfault`, whose `find_vma` finds the
/// first mapping ending above `addr`).
fn notify_segfault(addr: u64) {
    let mapped = crate::task::current_mm().is_some_and(|mm| {
        mm.mmap_lock_readonly()
            .vmas
            .find_from(addr as usize)
            .is_some()
    });
    let code = if mapped { SEGV_ACCERR } else { SEGV_MAPERR };
    force_fault_signal(SIGSEGV, code, addr);
}

/// rt_sigaction(2) on the current process.
pub fn sigaction(sig: u32, new: Option<SigAction>) -> KResult<SigAction> {
    if sig == 0 || sig > NSIG || (new.is_some() && SIG_KERNEL_ONLY_MASK & sigmask(sig) != 0) {
        return Err(Errno::EINVAL);
    }
    let p = crate::task::current_process().ok_or(Errno::EINVAL)?;
    let mut actions = p.actions.lock();
    let old = actions[sig as usize - 1];
    if let Some(mut a) = new {
        a.mask &= !SIG_KERNEL_ONLY_MASK;
        actions[sig as usize - 1] = a;
        // Setting an ignoring action discards what is pending (POSIX).
        if ignored_action(&a, sig) {
            let bit = sigmask(sig);
            p.shared_pending.fetch_and(!bit, Ordering::AcqRel);
            for t in p.live_threads() {
                if let Some(u) = &t.user {
                    u.pending.fetch_and(!bit, Ordering::AcqRel);
                }
            }
        }
    }
    Ok(old)
}

/// Is `sp` on the alternate stack `alt` (Linux: `on_sig_stack`)?
pub fn on_sig_stack(alt: &AltStack, sp: u64) -> bool {
    sp > alt.sp && sp - alt.sp <= alt.size
}

/// SS_DISABLE, SS_ONSTACK or 0 for a thread with `alt` at `sp` (Linux:
/// `sas_ss_flags`).
pub fn sas_ss_flags(alt: &AltStack, sp: u64) -> u32 {
    if alt.size == 0 {
        SS_DISABLE
    } else if on_sig_stack(alt, sp) {
        SS_ONSTACK
    } else {
        0
    }
}

/// The thread's alternate stack as sigaltstack(2) reports it.
pub fn get_altstack(u: &UserThread, sp: u64) -> AltStack {
    let alt = *u.altstack.lock();
    AltStack {
        flags: sas_ss_flags(&alt, sp) | (alt.flags & SS_AUTODISARM),
        ..alt
    }
}

/// sigaltstack(2)'s change (Linux: `do_sigaltstack`): EPERM while running
/// on the current one, EINVAL for unknown flags, ENOMEM below MINSIGSTKSZ.
pub fn set_altstack(u: &UserThread, new: AltStack, sp: u64) -> KResult<()> {
    let mut alt = u.altstack.lock();
    if *alt == new {
        return Ok(());
    }
    if on_sig_stack(&alt, sp) {
        return Err(Errno::EPERM);
    }
    let mode = new.flags & !SS_AUTODISARM;
    if !matches!(mode, 0 | SS_ONSTACK | SS_DISABLE) {
        return Err(Errno::EINVAL);
    }
    if mode == SS_DISABLE {
        *alt = AltStack {
            sp: 0,
            size: 0,
            flags: new.flags,
        };
        return Ok(());
    }
    if new.size < MINSIGSTKSZ {
        return Err(Errno::ENOMEM);
    }
    *alt = new;
    Ok(())
}
