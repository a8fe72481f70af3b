//! Arm semihosting: the only way to hand QEMU an exit code (needs
//! `-semihosting-config enable=on,target=native`; see qemu-run.sh).
//! Arm "Semihosting for AArch32 and AArch64", SYS_EXIT (0x18).

/// The semihosting operation, passed in x0: SYS_EXIT (0x18), report an
/// exit to the debugger, here QEMU.
const SYS_EXIT: u64 = 0x18;
/// The reason SYS_EXIT reports, the parameter block's first word:
/// ADP_Stopped_ApplicationExit, a normal exit whose status is the second.
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x20026;

/// Ends the QEMU process with `code` as its exit status.
pub fn exit(code: u32) -> ! {
    let block = [ADP_STOPPED_APPLICATION_EXIT, code as u64];
    // SAFETY: HLT #0xF000 is the AArch64 semihosting trap; QEMU reads the
    // two-word parameter block and terminates.
    unsafe {
        core::arch::asm!("hlt #0xf000", in("x0") SYS_EXIT, in("x1") block.as_ptr(), options(nostack));
    }
    loop {
        super::cpu::wait_for_interrupt();
    }
}
