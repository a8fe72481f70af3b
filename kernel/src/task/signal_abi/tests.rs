//! Host tests of `signal_abi`.

use super::*;
use std::boxed::Box;

// Printed by a C program built with aarch64-linux-gnu-gcc against the
// Linux 6.1 uapi headers (asm/sigcontext.h, asm/ucontext.h,
// asm-generic/signal.h, asm-generic/siginfo.h) and run under
// qemu-aarch64; glibc's ucontext_t and siginfo_t agree.
const C_SIZEOF_SIGACTION: usize = 32;
const C_SIZEOF_SIGINFO: usize = 128;
const C_SI_PID: usize = 16;
const C_SI_UID: usize = 20;
const C_SI_STATUS: usize = 24;
const C_SI_UTIME: usize = 32;
const C_SI_STIME: usize = 40;
const C_SI_ADDR: usize = 16;
const C_UCONTEXT_UC_STACK: usize = 16;
const C_UCONTEXT_UC_SIGMASK: usize = 40;
const C_UCONTEXT_UC_MCONTEXT: usize = 176;
const C_SIZEOF_UCONTEXT: usize = 4560;
const C_STACK_T_SS_FLAGS: usize = 8;
const C_STACK_T_SS_SIZE: usize = 16;
const C_SIZEOF_SIGCONTEXT: usize = 4384;
const C_SIGCONTEXT_REGS: usize = 8;
const C_SIGCONTEXT_SP: usize = 256;
const C_SIGCONTEXT_PC: usize = 264;
const C_SIGCONTEXT_PSTATE: usize = 272;
const C_SIGCONTEXT_RESERVED: usize = 288;
const C_SIZEOF_FPSIMD_CONTEXT: usize = 528;
const C_FPSIMD_CONTEXT_VREGS: usize = 16;
const C_SIZEOF_ESR_CONTEXT: usize = 16;
const C_SIZEOF_RT_SIGFRAME: usize = 4688;
const C_RT_SIGFRAME_UC: usize = 128;
const C_RT_SIGFRAME_RESERVED: usize = 592;

#[test]
fn layout_matches_linux_headers() {
    assert_eq!(SIGACTION_SIZE, C_SIZEOF_SIGACTION);
    assert_eq!(SIGINFO_SIZE, C_SIZEOF_SIGINFO);
    assert_eq!(siginfo::PID, C_SI_PID);
    assert_eq!(siginfo::UID, C_SI_UID);
    assert_eq!(siginfo::STATUS, C_SI_STATUS);
    assert_eq!(siginfo::UTIME, C_SI_UTIME);
    assert_eq!(siginfo::STIME, C_SI_STIME);
    assert_eq!(siginfo::ADDR, C_SI_ADDR);

    let uc = rt_sigframe::UC;
    assert_eq!(uc, C_RT_SIGFRAME_UC);
    assert_eq!(rt_sigframe::UC_LINK - uc, 8);
    assert_eq!(rt_sigframe::UC_STACK_SP - uc, C_UCONTEXT_UC_STACK);
    assert_eq!(
        rt_sigframe::UC_STACK_FLAGS - rt_sigframe::UC_STACK_SP,
        C_STACK_T_SS_FLAGS
    );
    assert_eq!(
        rt_sigframe::UC_STACK_SIZE - rt_sigframe::UC_STACK_SP,
        C_STACK_T_SS_SIZE
    );
    assert_eq!(rt_sigframe::UC_SIGMASK - uc, C_UCONTEXT_UC_SIGMASK);
    assert_eq!(rt_sigframe::UC_MCONTEXT - uc, C_UCONTEXT_UC_MCONTEXT);
    assert_eq!(rt_sigframe::SIZE - uc, C_SIZEOF_UCONTEXT);

    let mc = rt_sigframe::UC_MCONTEXT;
    assert_eq!(rt_sigframe::FAULT_ADDRESS - mc, 0);
    assert_eq!(rt_sigframe::REGS - mc, C_SIGCONTEXT_REGS);
    assert_eq!(rt_sigframe::SP - mc, C_SIGCONTEXT_SP);
    assert_eq!(rt_sigframe::PC - mc, C_SIGCONTEXT_PC);
    assert_eq!(rt_sigframe::PSTATE - mc, C_SIGCONTEXT_PSTATE);
    assert_eq!(rt_sigframe::RESERVED - mc, C_SIGCONTEXT_RESERVED);
    assert_eq!(rt_sigframe::SIZE - mc, C_SIZEOF_SIGCONTEXT);

    assert_eq!(rt_sigframe::RESERVED, C_RT_SIGFRAME_RESERVED);
    assert_eq!(RT_SIGFRAME_SIZE, C_SIZEOF_RT_SIGFRAME);
    assert_eq!(fpsimd_context::SIZE, C_SIZEOF_FPSIMD_CONTEXT);
    assert_eq!(fpsimd_context::VREGS, C_FPSIMD_CONTEXT_VREGS);
    assert_eq!(ESR_CONTEXT_SIZE, C_SIZEOF_ESR_CONTEXT);
}

#[test]
fn pstate_res0_mask_matches_linux() {
    assert_eq!(SPSR_EL1_AARCH64_RES0_BITS, 0xffff_ffff_0cdf_e020);
}

#[test]
fn signal_masks() {
    assert_eq!(sigmask(SIGHUP), 1);
    assert_eq!(sigmask(SIGKILL), 1 << 8);
    assert_eq!(sigmask(SIGRTMAX), 1 << 63);
    assert_eq!(SIG_KERNEL_ONLY_MASK, 0x0004_0100);
}

#[test]
fn default_actions_follow_man_7_signal() {
    use DefaultAction::*;
    assert_eq!(default_action(SIGHUP), Terminate);
    assert_eq!(default_action(SIGKILL), Terminate);
    assert_eq!(default_action(SIGPIPE), Terminate);
    assert_eq!(default_action(SIGSTKFLT), Terminate);
    assert_eq!(default_action(SIGSEGV), CoreDump);
    assert_eq!(default_action(SIGABRT), CoreDump);
    assert_eq!(default_action(SIGSYS), CoreDump);
    assert_eq!(default_action(SIGXFSZ), CoreDump);
    assert_eq!(default_action(SIGCHLD), Ignore);
    assert_eq!(default_action(SIGURG), Ignore);
    assert_eq!(default_action(SIGWINCH), Ignore);
    assert_eq!(default_action(SIGSTOP), Stop);
    assert_eq!(default_action(SIGTTOU), Stop);
    assert_eq!(default_action(SIGCONT), Continue);
    assert_eq!(default_action(SIGRTMIN), Terminate);
    assert_eq!(default_action(SIGRTMAX), Terminate);
}

#[test]
fn wait_statuses() {
    assert_eq!(exited(0), 0);
    assert_eq!(exited(3), 0x300);
    assert_eq!(exited(256 + 3), 0x300);
    assert_eq!(exited(-1), 0xff00);
    assert_eq!(signaled(SIGSEGV, true), 0x8b);
    assert_eq!(signaled(SIGKILL, false), 9);
}

#[test]
fn sigaction_bytes_round_trip() {
    let action = SigAction {
        handler: 0x40_1000,
        flags: SA_SIGINFO | SA_RESTORER | SA_RESTART | SA_RESETHAND,
        restorer: 0x40_2000,
        mask: sigmask(SIGUSR1) | sigmask(SIGRTMAX),
    };
    let bytes = action.to_bytes();
    assert_eq!(bytes[0..8], 0x40_1000u64.to_le_bytes());
    assert_eq!(bytes[8..16], 0x9400_0004u64.to_le_bytes());
    assert_eq!(bytes[16..24], 0x40_2000u64.to_le_bytes());
    assert_eq!(bytes[24..32], 0x8000_0000_0000_0200u64.to_le_bytes());
    assert_eq!(SigAction::from_bytes(&bytes), action);
    assert_eq!(SigAction::from_bytes(&[0; SIGACTION_SIZE]).handler, SIG_DFL);
}

#[test]
fn siginfo_layouts() {
    let kill = SigInfo::kill(SIGTERM, SI_TKILL, 42, 1000).to_bytes();
    assert_eq!(read_u32(&kill, 0), SIGTERM);
    assert_eq!(read_u32(&kill, 4), 0);
    assert_eq!(read_u32(&kill, 8) as i32, -6);
    assert_eq!(read_u32(&kill, C_SI_PID), 42);
    assert_eq!(read_u32(&kill, C_SI_UID), 1000);
    assert!(kill[24..].iter().all(|&b| b == 0));

    let fault = SigInfo::fault(SIGSEGV, SEGV_ACCERR, 0xdead_beef_0000).to_bytes();
    assert_eq!(read_u32(&fault, 0), SIGSEGV);
    assert_eq!(read_u32(&fault, 8), 2);
    assert_eq!(read_u64(&fault, C_SI_ADDR), 0xdead_beef_0000);

    let child = SigInfo::child(CLD_DUMPED, 7, 0, SIGSEGV as i32, 5, -1).to_bytes();
    assert_eq!(read_u32(&child, 0), SIGCHLD);
    assert_eq!(read_u32(&child, 8), 3);
    assert_eq!(read_u32(&child, C_SI_PID), 7);
    assert_eq!(read_u32(&child, C_SI_STATUS), SIGSEGV);
    assert_eq!(read_u64(&child, C_SI_UTIME), 5);
    assert_eq!(read_u64(&child, C_SI_STIME), u64::MAX);

    // siginfo_t's _timer: si_tid, si_overrun, then si_value (offsets
    // from <signal.h>: 16, 20, 24).
    let timer = SigInfo::timer(SIGALRM, 3, 2, 0x1234_5678_9abc).to_bytes();
    assert_eq!(read_u32(&timer, 8) as i32, -2);
    assert_eq!(read_u32(&timer, 16), 3);
    assert_eq!(read_u32(&timer, 20), 2);
    assert_eq!(read_u64(&timer, 24), 0x1234_5678_9abc);
}

#[test]
fn stop_and_continue_statuses() {
    // WIFSTOPPED: low byte 0x7f, WSTOPSIG the next; WIFCONTINUED 0xffff.
    assert_eq!(stopped(SIGSTOP), 0x137f);
    assert_eq!(stopped(SIGTSTP), 0x147f);
    assert_eq!(CONTINUED_STATUS, 0xffff);
}

fn sample_regs() -> UserRegs {
    UserRegs {
        regs: core::array::from_fn(|i| 0x1000 + i as u64),
        sp: 0x7fff_f000_1238,
        pc: 0x40_0abc,
        pstate: 0x6000_0000, // Z and C set, EL0t
    }
}

fn sample_fp() -> FpState {
    FpState {
        vregs: core::array::from_fn(|i| ((i as u128) << 100) | (0xabcd_0000 + i as u128)),
        fpsr: 0x0800_0010,
        fpcr: 0x0040_0000,
    }
}

const HANDLER: u64 = 0x40_1000;
const RESTORER: u64 = 0x40_2000;
const SIGTRAMP: u64 = 0xffff_0000_0000_0800;

struct Delivered {
    frame: SigFrame,
    bytes: Box<[u8; SIGFRAME_SIZE]>,
}

fn deliver(flags: u64, esr: Option<u64>) -> Delivered {
    let info = SigInfo::fault(SIGSEGV, SEGV_MAPERR, 0x10).to_bytes();
    let action = SigAction {
        handler: HANDLER,
        flags,
        restorer: RESTORER,
        mask: 0,
    };
    let regs = sample_regs();
    let fp = sample_fp();
    let delivery = SignalDelivery {
        sig: SIGSEGV,
        action: &action,
        info: &info,
        regs: &regs,
        fp: &fp,
        fault_address: 0x10,
        esr,
        saved_mask: sigmask(SIGUSR1) | sigmask(SIGRTMIN),
        sigtramp: SIGTRAMP,
        altstack: AltStack::DISABLED,
        stack_top: regs.sp,
    };
    let mut bytes = Box::new([0xaa; SIGFRAME_SIZE]);
    let frame = delivery.setup_rt_frame(&mut bytes);
    Delivered { frame, bytes }
}

fn rt_sigframe_of(bytes: &[u8; SIGFRAME_SIZE]) -> [u8; RT_SIGFRAME_SIZE] {
    let mut frame = [0; RT_SIGFRAME_SIZE];
    frame.copy_from_slice(&bytes[..RT_SIGFRAME_SIZE]);
    frame
}

#[test]
fn frame_sits_below_sp_with_the_record_on_top() {
    let sp = sample_regs().sp;
    let Delivered { frame, .. } = deliver(SA_SIGINFO, None);
    let record = (sp - 16) & !15;
    assert_eq!(frame.addr, record - C_SIZEOF_RT_SIGFRAME as u64);
    assert_eq!(frame.addr % 16, 0);
    assert!(frame.addr + SIGFRAME_SIZE as u64 <= sp);
    assert_eq!(
        get_sigframe(0x8000),
        0x8000 - 16 - C_SIZEOF_RT_SIGFRAME as u64
    );
}

#[test]
fn handler_entry_registers() {
    let interrupted = sample_regs();
    let Delivered { frame, .. } = deliver(SA_SIGINFO | SA_RESTORER, None);
    let regs = frame.regs;
    assert_eq!(regs.regs[0], SIGSEGV as u64);
    assert_eq!(regs.regs[1], frame.addr);
    assert_eq!(regs.regs[2], frame.addr + C_RT_SIGFRAME_UC as u64);
    assert_eq!(regs.regs[3..29], interrupted.regs[3..29]);
    assert_eq!(regs.regs[29], frame.addr + C_SIZEOF_RT_SIGFRAME as u64);
    assert_eq!(regs.regs[30], RESTORER);
    assert_eq!(regs.sp, frame.addr);
    assert_eq!(regs.pc, HANDLER);
    assert_eq!(regs.pstate, interrupted.pstate);

    let Delivered { frame, bytes } = deliver(0, None);
    assert_eq!(frame.regs.regs[1..3], interrupted.regs[1..3]);
    assert_eq!(frame.regs.regs[30], SIGTRAMP);
    assert!(bytes[..C_SIZEOF_SIGINFO].iter().all(|&b| b == 0));
}

#[test]
fn frame_contents() {
    let regs = sample_regs();
    let Delivered { bytes, .. } = deliver(SA_SIGINFO, None);
    let b = &bytes[..];
    assert_eq!(
        b[..C_SIZEOF_SIGINFO],
        SigInfo::fault(SIGSEGV, SEGV_MAPERR, 0x10).to_bytes()
    );

    let uc = C_RT_SIGFRAME_UC;
    assert_eq!(read_u64(b, uc), 0, "uc_flags");
    assert_eq!(read_u64(b, uc + 8), 0, "uc_link");
    assert_eq!(
        read_u32(b, uc + C_UCONTEXT_UC_STACK + C_STACK_T_SS_FLAGS),
        2
    );
    assert_eq!(read_u64(b, uc + C_UCONTEXT_UC_SIGMASK), 0x8000_0200);

    let mc = uc + C_UCONTEXT_UC_MCONTEXT;
    assert_eq!(read_u64(b, mc), 0x10, "fault_address");
    assert_eq!(read_u64(b, mc + C_SIGCONTEXT_REGS + 8 * 30), regs.regs[30]);
    assert_eq!(read_u64(b, mc + C_SIGCONTEXT_SP), regs.sp);
    assert_eq!(read_u64(b, mc + C_SIGCONTEXT_PC), regs.pc);
    assert_eq!(read_u64(b, mc + C_SIGCONTEXT_PSTATE), regs.pstate);

    let fpsimd = C_RT_SIGFRAME_RESERVED;
    assert_eq!(read_u32(b, fpsimd), 0x4650_8001);
    assert_eq!(read_u32(b, fpsimd + 4), 528);
    assert_eq!(read_u32(b, fpsimd + 8), sample_fp().fpsr);
    assert_eq!(read_u32(b, fpsimd + 12), sample_fp().fpcr);
    assert_eq!(read_u128(b, fpsimd + 16 + 16 * 31), sample_fp().vregs[31]);
    let end = fpsimd + C_SIZEOF_FPSIMD_CONTEXT;
    assert_eq!(read_u64(b, end), 0, "terminator");

    let record = C_SIZEOF_RT_SIGFRAME;
    assert_eq!(read_u64(b, record), regs.regs[29], "frame record fp");
    assert_eq!(read_u64(b, record + 8), regs.regs[30], "frame record lr");
}

#[test]
fn fault_frames_carry_the_esr_record() {
    let Delivered { bytes, .. } = deliver(SA_SIGINFO, Some(0x9200_0047));
    let esr = C_RT_SIGFRAME_RESERVED + C_SIZEOF_FPSIMD_CONTEXT;
    assert_eq!(read_u32(&bytes[..], esr), 0x4553_5201);
    assert_eq!(read_u32(&bytes[..], esr + 4), 16);
    assert_eq!(read_u64(&bytes[..], esr + 8), 0x9200_0047);
    assert_eq!(
        read_u64(&bytes[..], esr + C_SIZEOF_ESR_CONTEXT),
        0,
        "terminator"
    );
}

#[test]
fn sigreturn_restores_what_delivery_saved() {
    for esr in [None, Some(0x9200_0047)] {
        let Delivered { frame, bytes } = deliver(SA_SIGINFO, esr);
        let restored = parse_sigreturn(frame.addr, &rt_sigframe_of(&bytes)).unwrap();
        assert_eq!(restored.regs, sample_regs());
        assert_eq!(restored.fp, sample_fp());
        assert_eq!(restored.blocked, sigmask(SIGUSR1) | sigmask(SIGRTMIN));
    }
}

/// A frame as delivered, ready for a test to corrupt.
fn good_frame() -> (u64, [u8; RT_SIGFRAME_SIZE]) {
    let Delivered { frame, bytes } = deliver(SA_SIGINFO, None);
    (frame.addr, rt_sigframe_of(&bytes))
}

const FPSIMD_AT: usize = C_RT_SIGFRAME_RESERVED;
const END_AT: usize = FPSIMD_AT + C_SIZEOF_FPSIMD_CONTEXT;

#[test]
fn sigreturn_keeps_sigkill_and_sigstop_unblocked() {
    let (sp, mut frame) = good_frame();
    write_u64(&mut frame, rt_sigframe::UC_SIGMASK, u64::MAX);
    let restored = parse_sigreturn(sp, &frame).unwrap();
    assert_eq!(restored.blocked, !SIG_KERNEL_ONLY_MASK);
}

#[test]
fn sigreturn_rejects_unaligned_sp() {
    let (sp, frame) = good_frame();
    assert_eq!(parse_sigreturn(sp + 8, &frame), Err(BadFrame::UnalignedSp));
}

#[test]
fn sigreturn_checks_pstate() {
    let (sp, frame) = good_frame();
    let with_pstate = |pstate: u64| {
        let mut frame = frame;
        write_u64(&mut frame, rt_sigframe::PSTATE, pstate);
        parse_sigreturn(sp, &frame).map(|r| r.regs.pstate)
    };
    assert_eq!(with_pstate(0x5), Err(BadFrame::BadPstate), "EL1h");
    assert_eq!(with_pstate(0x4), Err(BadFrame::BadPstate), "EL1t");
    assert_eq!(with_pstate(0x10), Err(BadFrame::BadPstate), "AArch32");
    assert_eq!(with_pstate(0x80), Err(BadFrame::BadPstate), "IRQs masked");
    assert_eq!(with_pstate(0x3c0), Err(BadFrame::BadPstate), "DAIF");
    // NZCV survives; PAN, IL and the upper word are cleared, not refused.
    assert_eq!(with_pstate(0xf000_0000), Ok(0xf000_0000));
    assert_eq!(
        with_pstate(1 << 40 | 1 << 22 | 1 << 20 | 0x2000_0000),
        Ok(0x2000_0000)
    );
}

#[test]
fn a_refused_frame_still_restores_its_registers() {
    let (_, mut frame) = good_frame();
    write_u64(&mut frame, rt_sigframe::PSTATE, 0xf000_0005);
    let (regs, blocked) = sigreturn_regs(&frame);
    assert_eq!(regs.sp, sample_regs().sp);
    assert_eq!(regs.pc, sample_regs().pc);
    // EL1h refused: back to EL0t, the flags kept.
    assert_eq!(regs.pstate, 0xf000_0000);
    assert_eq!(blocked, sigmask(SIGUSR1) | sigmask(SIGRTMIN));
}

#[test]
fn sigreturn_rejects_bad_fpsimd_record() {
    let (sp, frame) = good_frame();

    let mut bad_magic = frame;
    write_u32(&mut bad_magic, FPSIMD_AT, 0x4650_8002);
    assert_eq!(parse_sigreturn(sp, &bad_magic), Err(BadFrame::BadRecord));

    // Linux wants exactly sizeof(struct fpsimd_context), no less.
    let mut wrong_size = frame;
    write_u32(&mut wrong_size, FPSIMD_AT + 4, 512);
    assert_eq!(parse_sigreturn(sp, &wrong_size), Err(BadFrame::BadRecord));

    let mut duplicate = frame;
    duplicate.copy_within(FPSIMD_AT..END_AT, END_AT);
    assert_eq!(parse_sigreturn(sp, &duplicate), Err(BadFrame::BadRecord));

    let mut missing = frame;
    write_ctx_header(&mut missing, FPSIMD_AT, 0, 0);
    assert_eq!(parse_sigreturn(sp, &missing), Err(BadFrame::NoFpsimd));
}

#[test]
fn sigreturn_rejects_broken_record_list() {
    let (sp, frame) = good_frame();
    let reserved_end = C_RT_SIGFRAME_RESERVED + 4096;

    // Records all the way to the end of __reserved, none of them null.
    let mut unterminated = frame;
    for at in (END_AT..reserved_end).step_by(16) {
        write_ctx_header(&mut unterminated, at, ESR_MAGIC, 16);
    }
    assert_eq!(parse_sigreturn(sp, &unterminated), Err(BadFrame::BadRecord));

    let mut sized_terminator = frame;
    write_ctx_header(&mut sized_terminator, END_AT, 0, 16);
    assert_eq!(
        parse_sigreturn(sp, &sized_terminator),
        Err(BadFrame::BadRecord)
    );

    // A zero-sized record would have the walk spin on the spot forever.
    let mut empty_record = frame;
    write_ctx_header(&mut empty_record, END_AT, ESR_MAGIC, 0);
    assert_eq!(parse_sigreturn(sp, &empty_record), Err(BadFrame::BadRecord));

    let mut misaligned = frame;
    write_ctx_header(&mut misaligned, END_AT, ESR_MAGIC, 12);
    assert_eq!(parse_sigreturn(sp, &misaligned), Err(BadFrame::BadRecord));

    let mut overrun = frame;
    write_ctx_header(&mut overrun, END_AT, ESR_MAGIC, 4096);
    assert_eq!(parse_sigreturn(sp, &overrun), Err(BadFrame::BadRecord));

    // An ESR record of any sane size is stepped over.
    let mut long_esr = frame;
    write_ctx_header(&mut long_esr, END_AT, ESR_MAGIC, 32);
    write_ctx_header(&mut long_esr, END_AT + 32, 0, 0);
    assert!(parse_sigreturn(sp, &long_esr).is_ok());
}
