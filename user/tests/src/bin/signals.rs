//! Signal tests: faults caught with the right si_code and si_addr and left
//! by siglongjmp; faults that must kill (default, blocked, ignored);
//! kill/tgkill delivery with the sender in siginfo; blocking and
//! unblocking; rt_sigaction's rules and flags; the signal frame (ucontext
//! registers that rt_sigreturn restores, FP/SIMD state saved around the
//! handler); SIGCHLD; and EINTR from blocking calls.
#![no_std]
#![no_main]

extern crate alloc;

use core::arch::asm;
use core::ptr::read_volatile;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::process::*;
use ulib::signal::*;
use ulib::start::{auxv, AT_UID};
use ulib::sync::futex_wait;
use ulib::test::TestResult;
use ulib::thread::{sched_yield, spawn};
use ulib::time::*;
use ulib::{check, check_eq, check_err, Errno};

ulib::tests!(
    segv_caught_with_address,
    repeated_faults_restore_mask,
    segv_default_kills,
    segv_blocked_still_kills,
    segv_ignored_still_kills,
    unhandled_usr1_kills,
    ignored_signal_is_dropped,
    kill_self_runs_handler,
    tgkill_self_runs_handler,
    tgkill_targets_thread,
    kill_and_tgkill_errors,
    blocked_signal_waits_for_unblock,
    sigprocmask_rules,
    sigkill_and_sigstop_cannot_be_caught,
    sigaction_returns_old_action,
    handler_runs_with_signal_blocked,
    sa_nodefer_and_sa_resethand,
    sigreturn_restores_edited_context,
    fp_registers_survive_handler,
    sigchld_reports_child,
    signal_interrupts_read,
    sa_restart_restarts_read,
    signal_interrupts_sleep_and_futex,
);

/// What the recording handler saw: count, then the last siginfo and tid.
static HITS: AtomicU32 = AtomicU32::new(0);
static LAST_SIGNO: AtomicI32 = AtomicI32::new(0);
static LAST_CODE: AtomicI32 = AtomicI32::new(0);
static LAST_PID: AtomicI32 = AtomicI32::new(0);
static LAST_UID: AtomicU32 = AtomicU32::new(0);
static LAST_STATUS: AtomicI32 = AtomicI32::new(0);
static LAST_TID: AtomicI32 = AtomicI32::new(0);
/// The blocked set as the handler saw it.
static MASK_IN_HANDLER: AtomicU64 = AtomicU64::new(0);

extern "C" fn record(_: i32, info: &SigInfo, _: &mut UContext) {
    LAST_SIGNO.store(info.si_signo, Ordering::SeqCst);
    LAST_CODE.store(info.si_code, Ordering::SeqCst);
    LAST_PID.store(info.pid(), Ordering::SeqCst);
    LAST_UID.store(info.uid(), Ordering::SeqCst);
    LAST_STATUS.store(info.status(), Ordering::SeqCst);
    LAST_TID.store(gettid(), Ordering::SeqCst);
    let mask = rt_sigprocmask(SIG_BLOCK, None).unwrap_or(0);
    MASK_IN_HANDLER.store(mask, Ordering::SeqCst);
    HITS.fetch_add(1, Ordering::SeqCst);
}

fn hits() -> u32 {
    HITS.load(Ordering::SeqCst)
}

fn segv_caught_with_address() -> TestResult {
    for addr in [0x10, 0x1234_5678, 0x10_0000_0008] {
        check_eq!(
            try_read(addr),
            Err(Fault {
                signo: SIGSEGV,
                code: SEGV_MAPERR,
                addr
            })
        );
    }
    Ok(())
}

fn repeated_faults_restore_mask() -> TestResult {
    let before = rt_sigprocmask(SIG_BLOCK, None)?;
    // While a SIGSEGV handler runs, SIGSEGV is blocked; jumping out must
    // unblock it, or the next fault would kill the process.
    for _ in 0..5 {
        check!(try_read(0x10).is_err());
    }
    check_eq!(rt_sigprocmask(SIG_BLOCK, None)?, before);
    Ok(())
}

/// Runs `setup` then reads address 0x10 in a child; returns how it ended.
fn fault_in_child(setup: fn()) -> Result<WaitStatus, Errno> {
    in_child(|| {
        setup();
        // SAFETY: meant to fault.
        unsafe { read_volatile(0x10 as *const u8) as i32 }
    })
}

fn segv_default_kills() -> TestResult {
    check_eq!(fault_in_child(|| {})?.term_signal(), Some(SIGSEGV));
    Ok(())
}

fn segv_blocked_still_kills() -> TestResult {
    // A fault cannot wait: the kernel unblocks SIGSEGV and kills.
    let status = fault_in_child(|| {
        let _ = rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGSEGV)));
    })?;
    check_eq!(status.term_signal(), Some(SIGSEGV));
    Ok(())
}

fn segv_ignored_still_kills() -> TestResult {
    let status = fault_in_child(|| {
        let _ = sigaction(SIGSEGV, Disposition::Ignore, 0);
    })?;
    check_eq!(status.term_signal(), Some(SIGSEGV));
    Ok(())
}

fn unhandled_usr1_kills() -> TestResult {
    let status = in_child(|| {
        let _ = kill(getpid(), SIGUSR1);
        0
    })?;
    check_eq!(status.term_signal(), Some(SIGUSR1));
    Ok(())
}

fn ignored_signal_is_dropped() -> TestResult {
    // Unblocked and ignored: discarded at once.
    sigaction(SIGUSR1, Disposition::Ignore, 0)?;
    kill(getpid(), SIGUSR1)?;
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    check_eq!(hits(), 0);
    // Pending (blocked), then set to SIG_IGN: discarded by the sigaction.
    rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGUSR1)))?;
    kill(getpid(), SIGUSR1)?;
    sigaction(SIGUSR1, Disposition::Ignore, 0)?;
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    rt_sigprocmask(SIG_UNBLOCK, Some(sigmask(SIGUSR1)))?;
    check_eq!(hits(), 0);
    // Blocked and ignored when sent: Linux keeps it pending, because the
    // action may change before it is unblocked (kernel/signal.c,
    // sig_ignored()), so it reaches the handler installed meanwhile.
    rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGUSR2)))?;
    sigaction(SIGUSR2, Disposition::Ignore, 0)?;
    kill(getpid(), SIGUSR2)?;
    sigaction(SIGUSR2, Disposition::Handle(record), 0)?;
    rt_sigprocmask(SIG_UNBLOCK, Some(sigmask(SIGUSR2)))?;
    check_eq!(hits(), 1);
    Ok(())
}

fn kill_self_runs_handler() -> TestResult {
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    kill(getpid(), SIGUSR1)?;
    // Delivered before kill returns.
    check_eq!(hits(), 1);
    check_eq!(LAST_SIGNO.load(Ordering::SeqCst), SIGUSR1);
    check_eq!(LAST_CODE.load(Ordering::SeqCst), SI_USER);
    check_eq!(LAST_PID.load(Ordering::SeqCst), getpid());
    if let Some(uid) = auxv(AT_UID) {
        check_eq!(LAST_UID.load(Ordering::SeqCst), uid as u32);
    }
    Ok(())
}

fn tgkill_self_runs_handler() -> TestResult {
    sigaction(SIGUSR2, Disposition::Handle(record), 0)?;
    tgkill(getpid(), gettid(), SIGUSR2)?;
    check_eq!(hits(), 1);
    check_eq!(LAST_SIGNO.load(Ordering::SeqCst), SIGUSR2);
    check_eq!(LAST_CODE.load(Ordering::SeqCst), SI_TKILL);
    check_eq!(LAST_PID.load(Ordering::SeqCst), getpid());
    Ok(())
}

fn tgkill_targets_thread() -> TestResult {
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    // The main thread blocks SIGUSR1 so that only the target can take it.
    rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGUSR1)))?;
    let thread = spawn(|| {
        let _ = rt_sigprocmask(SIG_UNBLOCK, Some(sigmask(SIGUSR1)));
        let deadline = monotonic_nanos() + 5_000_000_000;
        while hits() == 0 && monotonic_nanos() < deadline {
            sched_yield();
        }
    })?;
    let tid = thread.tid();
    tgkill(getpid(), tid, SIGUSR1)?;
    thread.join();
    check_eq!(hits(), 1);
    check_eq!(LAST_TID.load(Ordering::SeqCst), tid);
    Ok(())
}

fn kill_and_tgkill_errors() -> TestResult {
    check_err!(kill(getpid(), 65), Errno::EINVAL);
    check_err!(kill(getpid(), -1), Errno::EINVAL);
    check_err!(tgkill(getpid(), gettid(), 65), Errno::EINVAL);
    check_err!(tgkill(getpid(), 0, SIGUSR1), Errno::EINVAL);
    // A pid that no longer exists: a reaped child's.
    let pid = fork()?;
    if pid == 0 {
        exit_group(0);
    }
    wait_for(pid)?;
    check_err!(kill(pid, SIGUSR1), Errno::ESRCH);
    check_err!(kill(pid, 0), Errno::ESRCH);
    check_err!(tgkill(pid, pid, SIGUSR1), Errno::ESRCH);
    // A thread that is not in the named process.
    check_err!(tgkill(getpid(), pid, SIGUSR1), Errno::ESRCH);
    // Signal 0 only checks that the target exists.
    kill(getpid(), 0)?;
    tgkill(getpid(), gettid(), 0)?;
    Ok(())
}

fn blocked_signal_waits_for_unblock() -> TestResult {
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    let old = rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGUSR1)))?;
    kill(getpid(), SIGUSR1)?;
    kill(getpid(), SIGUSR1)?;
    check_eq!(hits(), 0);
    // Unblocking delivers it before rt_sigprocmask returns, once: standard
    // signals do not queue.
    rt_sigprocmask(SIG_SETMASK, Some(old))?;
    check_eq!(hits(), 1);
    Ok(())
}

fn sigprocmask_rules() -> TestResult {
    let start = rt_sigprocmask(SIG_BLOCK, None)?;
    let a = sigmask(SIGUSR1);
    let b = sigmask(SIGUSR2);
    check_eq!(rt_sigprocmask(SIG_BLOCK, Some(a))?, start);
    check_eq!(rt_sigprocmask(SIG_BLOCK, Some(b))?, start | a);
    check_eq!(rt_sigprocmask(SIG_UNBLOCK, Some(a))?, start | a | b);
    check_eq!(rt_sigprocmask(SIG_SETMASK, Some(a))?, start | b);
    check_eq!(rt_sigprocmask(SIG_BLOCK, None)?, a);
    // SIGKILL and SIGSTOP are silently left out.
    rt_sigprocmask(SIG_SETMASK, Some(sigmask(SIGKILL) | sigmask(SIGSTOP) | b))?;
    check_eq!(rt_sigprocmask(SIG_BLOCK, None)?, b);
    check_err!(rt_sigprocmask(99, Some(a)), Errno::EINVAL);
    let mut old = 0u64;
    // SAFETY: the set size is wrong, so the kernel must refuse the call.
    let wrong_size = unsafe {
        ulib::syscall!(
            ulib::sys::__NR_rt_sigprocmask,
            SIG_BLOCK,
            0,
            &mut old as *mut u64,
            4
        )
    };
    check_err!(wrong_size, Errno::EINVAL);
    Ok(())
}

fn sigkill_and_sigstop_cannot_be_caught() -> TestResult {
    for sig in [SIGKILL, SIGSTOP] {
        check_err!(
            sigaction(sig, Disposition::Handle(record), 0),
            Errno::EINVAL
        );
        check_err!(sigaction(sig, Disposition::Ignore, 0), Errno::EINVAL);
        // Reading their action is allowed.
        // SAFETY: only reads.
        check_eq!(unsafe { rt_sigaction(sig, None) }?.sa_handler, SIG_DFL);
    }
    for sig in [0, 65, -1] {
        check_err!(sigaction(sig, Disposition::Ignore, 0), Errno::EINVAL);
    }
    Ok(())
}

fn sigaction_returns_old_action() -> TestResult {
    // SAFETY: only reads the current action.
    let initial = unsafe { rt_sigaction(SIGUSR1, None) }?;
    check_eq!(initial.sa_handler, SIG_DFL);
    sigaction(SIGUSR1, Disposition::Handle(record), SA_RESTART)?;
    // SAFETY: as above.
    let got = unsafe { rt_sigaction(SIGUSR1, None) }?;
    check_eq!(got.sa_handler, record as extern "C" fn(_, _, _) as usize);
    check_eq!(
        got.sa_flags & (SA_SIGINFO | SA_RESTORER | SA_RESTART),
        SA_SIGINFO | SA_RESTORER | SA_RESTART
    );
    check!(got.sa_restorer != 0);
    sigaction(SIGUSR1, Disposition::Default, 0)?;
    Ok(())
}

fn handler_runs_with_signal_blocked() -> TestResult {
    sigaction(SIGUSR1, Disposition::Handle(record), 0)?;
    let before = rt_sigprocmask(SIG_BLOCK, None)?;
    kill(getpid(), SIGUSR1)?;
    check_eq!(hits(), 1);
    check_eq!(
        MASK_IN_HANDLER.load(Ordering::SeqCst),
        before | sigmask(SIGUSR1)
    );
    // rt_sigreturn put the old mask back.
    check_eq!(rt_sigprocmask(SIG_BLOCK, None)?, before);
    Ok(())
}

fn sa_nodefer_and_sa_resethand() -> TestResult {
    sigaction(
        SIGUSR1,
        Disposition::Handle(record),
        SA_NODEFER | SA_RESETHAND,
    )?;
    let before = rt_sigprocmask(SIG_BLOCK, None)?;
    kill(getpid(), SIGUSR1)?;
    check_eq!(hits(), 1);
    check_eq!(MASK_IN_HANDLER.load(Ordering::SeqCst), before);
    // SAFETY: only reads the current action.
    check_eq!(unsafe { rt_sigaction(SIGUSR1, None) }?.sa_handler, SIG_DFL);
    Ok(())
}

/// Set by edit_context: what it found in the saved context.
static SAVED_PC: AtomicUsize = AtomicUsize::new(0);
static SAVED_FAULT: AtomicUsize = AtomicUsize::new(0);
static SAVED_X19: AtomicUsize = AtomicUsize::new(0);

/// Skips the faulting instruction and puts 0x1234 in x0: the saved
/// registers are what rt_sigreturn loads.
extern "C" fn edit_context(_: i32, _: &SigInfo, context: &mut UContext) {
    let mc = &mut context.uc_mcontext;
    SAVED_PC.store(mc.pc as usize, Ordering::SeqCst);
    SAVED_FAULT.store(mc.fault_address as usize, Ordering::SeqCst);
    SAVED_X19.store(mc.regs[19] as usize, Ordering::SeqCst);
    mc.regs[0] = 0x1234;
    mc.pc += 4;
}

fn sigreturn_restores_edited_context() -> TestResult {
    sigaction(SIGSEGV, Disposition::Handle(edit_context), 0)?;
    let (x0, x19, pc): (usize, usize, usize);
    // SAFETY: the load faults and the handler resumes after it; x19 is
    // restored as it was.
    unsafe {
        asm!(
            "mov x9, x19",
            "movz x19, #0xbeef",
            "adr {pc}, 1f",
            "1: ldr x0, [{bad}]",
            "mov {x19}, x19",
            "mov x19, x9",
            bad = in(reg) 0x18usize,
            pc = out(reg) pc,
            x19 = out(reg) x19,
            out("x0") x0,
            out("x9") _,
        );
    }
    check_eq!(x0, 0x1234);
    check_eq!(x19, 0xbeef);
    check_eq!(SAVED_PC.load(Ordering::SeqCst), pc);
    check_eq!(SAVED_FAULT.load(Ordering::SeqCst), 0x18);
    check_eq!(SAVED_X19.load(Ordering::SeqCst), 0xbeef);
    Ok(())
}

/// Overwrites every FP/SIMD register and FPCR's rounding mode.
extern "C" fn clobber_fp(_: i32, _: &SigInfo, _: &mut UContext) {
    // SAFETY: only registers change; the kernel must restore them.
    unsafe {
        asm!(
            "movi v0.16b, #0xee", "movi v1.16b, #0xee", "movi v2.16b, #0xee",
            "movi v3.16b, #0xee", "movi v4.16b, #0xee", "movi v5.16b, #0xee",
            "movi v6.16b, #0xee", "movi v7.16b, #0xee", "movi v8.16b, #0xee",
            "movi v9.16b, #0xee", "movi v10.16b, #0xee", "movi v11.16b, #0xee",
            "movi v12.16b, #0xee", "movi v13.16b, #0xee", "movi v14.16b, #0xee",
            "movi v15.16b, #0xee", "movi v16.16b, #0xee", "movi v17.16b, #0xee",
            "movi v18.16b, #0xee", "movi v19.16b, #0xee", "movi v20.16b, #0xee",
            "movi v21.16b, #0xee", "movi v22.16b, #0xee", "movi v23.16b, #0xee",
            "movi v24.16b, #0xee", "movi v25.16b, #0xee", "movi v26.16b, #0xee",
            "movi v27.16b, #0xee", "movi v28.16b, #0xee", "movi v29.16b, #0xee",
            "movi v30.16b, #0xee", "movi v31.16b, #0xee",
            "mov {t}, #0xc00000",
            "msr fpcr, {t}",
            t = out(reg) _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _,
            out("v5") _, out("v6") _, out("v7") _, out("v8") _, out("v9") _,
            out("v10") _, out("v11") _, out("v12") _, out("v13") _, out("v14") _,
            out("v15") _, out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _, out("v24") _,
            out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
            out("v30") _, out("v31") _,
        );
    }
    HITS.fetch_add(1, Ordering::SeqCst);
}

fn fp_registers_survive_handler() -> TestResult {
    sigaction(SIGUSR1, Disposition::Handle(clobber_fp), 0)?;
    let pattern: [u8; 512] = core::array::from_fn(|i| (i * 7 + 3) as u8);
    let mut after = [0u8; 512];
    let fpcr: usize;
    // SAFETY: the block loads all 32 vector registers, sends itself
    // SIGUSR1 with kill (x8/x0/x1 only), and stores them back; it restores
    // FPCR to the value it read.
    unsafe {
        asm!(
            "mrs x10, fpcr",
            "mov x11, #0x400000",
            "msr fpcr, x11",
            "ld1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{src}], #64",
            "ld1 {{v4.16b, v5.16b, v6.16b, v7.16b}}, [{src}], #64",
            "ld1 {{v8.16b, v9.16b, v10.16b, v11.16b}}, [{src}], #64",
            "ld1 {{v12.16b, v13.16b, v14.16b, v15.16b}}, [{src}], #64",
            "ld1 {{v16.16b, v17.16b, v18.16b, v19.16b}}, [{src}], #64",
            "ld1 {{v20.16b, v21.16b, v22.16b, v23.16b}}, [{src}], #64",
            "ld1 {{v24.16b, v25.16b, v26.16b, v27.16b}}, [{src}], #64",
            "ld1 {{v28.16b, v29.16b, v30.16b, v31.16b}}, [{src}], #64",
            "mov x0, {pid}",
            "mov x1, #{sig}",
            "mov x8, #{kill}",
            "svc #0",
            "mrs {fpcr}, fpcr",
            "msr fpcr, x10",
            "st1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{dst}], #64",
            "st1 {{v4.16b, v5.16b, v6.16b, v7.16b}}, [{dst}], #64",
            "st1 {{v8.16b, v9.16b, v10.16b, v11.16b}}, [{dst}], #64",
            "st1 {{v12.16b, v13.16b, v14.16b, v15.16b}}, [{dst}], #64",
            "st1 {{v16.16b, v17.16b, v18.16b, v19.16b}}, [{dst}], #64",
            "st1 {{v20.16b, v21.16b, v22.16b, v23.16b}}, [{dst}], #64",
            "st1 {{v24.16b, v25.16b, v26.16b, v27.16b}}, [{dst}], #64",
            "st1 {{v28.16b, v29.16b, v30.16b, v31.16b}}, [{dst}], #64",
            src = inout(reg) pattern.as_ptr() => _,
            dst = inout(reg) after.as_mut_ptr() => _,
            pid = in(reg) getpid() as usize,
            fpcr = out(reg) fpcr,
            sig = const SIGUSR1,
            kill = const ulib::sys::__NR_kill,
            out("x0") _, out("x1") _, out("x8") _, out("x10") _, out("x11") _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _,
            out("v5") _, out("v6") _, out("v7") _, out("v8") _, out("v9") _,
            out("v10") _, out("v11") _, out("v12") _, out("v13") _, out("v14") _,
            out("v15") _, out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _, out("v24") _,
            out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
            out("v30") _, out("v31") _,
        );
    }
    check_eq!(hits(), 1);
    for (i, (a, b)) in pattern.iter().zip(after.iter()).enumerate() {
        check!(
            a == b,
            "byte {} of v{} changed: {a:#x} -> {b:#x}",
            i % 16,
            i / 16
        );
    }
    check_eq!(fpcr, 0x400000);
    Ok(())
}

fn sigchld_reports_child() -> TestResult {
    sigaction(SIGCHLD, Disposition::Handle(record), 0)?;
    let pid = fork()?;
    if pid == 0 {
        exit_group(5);
    }
    check_eq!(wait_for(pid)?.exit_code(), Some(5));
    let deadline = monotonic_nanos() + 2_000_000_000;
    while hits() == 0 && monotonic_nanos() < deadline {
        sched_yield();
    }
    check_eq!(hits(), 1);
    check_eq!(LAST_SIGNO.load(Ordering::SeqCst), SIGCHLD);
    check_eq!(LAST_CODE.load(Ordering::SeqCst), CLD_EXITED);
    check_eq!(LAST_PID.load(Ordering::SeqCst), pid);
    check_eq!(LAST_STATUS.load(Ordering::SeqCst), 5);
    Ok(())
}

/// Forks a child that blocks in `block` with a SIGUSR1 handler installed
/// with `flags`. Once the child says it is ready, the parent gives it 30 ms
/// to block, sends SIGUSR1, waits 30 ms more and writes a byte to the
/// child's pipe. Returns the child's exit status: what `block` returned.
fn interrupt_child(flags: u64, block: fn(i32) -> i32) -> Result<WaitStatus, Errno> {
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    let [ready_rd, ready_wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        let _ = sigaction(SIGUSR1, Disposition::Handle(record), flags);
        let _ = write(ready_wr, b"r");
        exit_group(block(rd));
    }
    close(ready_wr)?;
    read(ready_rd, &mut [0u8; 1])?;
    sleep(Duration::from_millis(30));
    kill(pid, SIGUSR1)?;
    sleep(Duration::from_millis(30));
    write(wr, b"x")?;
    wait_for(pid)
}

/// Exit codes of the blocking calls below.
const GOT_EINTR: i32 = 10;
const GOT_DATA: i32 = 11;

fn blocking_read(fd: i32) -> i32 {
    match read(fd, &mut [0u8; 1]) {
        Err(Errno::EINTR) if hits() == 1 => GOT_EINTR,
        Ok(1) if hits() == 1 => GOT_DATA,
        _ => 1,
    }
}

fn signal_interrupts_read() -> TestResult {
    let status = interrupt_child(0, blocking_read)?;
    check_eq!(status.exit_code(), Some(GOT_EINTR));
    Ok(())
}

fn sa_restart_restarts_read() -> TestResult {
    let status = interrupt_child(SA_RESTART, blocking_read)?;
    check_eq!(status.exit_code(), Some(GOT_DATA));
    Ok(())
}

fn signal_interrupts_sleep_and_futex() -> TestResult {
    // nanosleep and futex wait fail with EINTR even under SA_RESTART.
    let status = interrupt_child(SA_RESTART, |_| {
        match nanosleep(&Duration::from_secs(10).into()) {
            Err(Errno::EINTR) if hits() == 1 => GOT_EINTR,
            _ => 1,
        }
    })?;
    check_eq!(status.exit_code(), Some(GOT_EINTR));
    let status = interrupt_child(SA_RESTART, |_| {
        let word = AtomicU32::new(0);
        let timeout = Timespec::from(Duration::from_secs(10));
        match futex_wait(&word, 0, Some(&timeout), 0) {
            Err(Errno::EINTR) if hits() == 1 => GOT_EINTR,
            _ => 1,
        }
    })?;
    check_eq!(status.exit_code(), Some(GOT_EINTR));
    Ok(())
}
