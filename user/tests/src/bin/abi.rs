//! ABI tests: what a program finds at entry (stack layout, auxv, loaded
//! segments, zeroed .bss), which registers a system call preserves, what
//! unknown and bad system calls return, and the small calls that report
//! on the system: uname, getrandom, prlimit64, getrusage, set_robust_list,
//! rseq, clone3, reboot.
#![no_std]
#![no_main]

extern crate alloc;

use core::arch::asm;
use core::ptr::read_volatile;
use core::sync::atomic::{AtomicU64, Ordering};
use faultline_user_tests::*;
use ulib::mm::PAGE_SIZE;
use ulib::process::*;
use ulib::signal::SIGSEGV;
use ulib::start::*;
use ulib::sys::*;
use ulib::syscall;
use ulib::system::*;
use ulib::test::TestResult;
use ulib::{check, check_eq, check_err, skip, Errno};

ulib::tests!(
    initial_stack_layout,
    auxv_describes_program,
    elf_header_is_mapped,
    data_and_bss_are_initialized,
    syscall_preserves_registers,
    syscall_preserves_fp_registers,
    unknown_syscall_is_enosys,
    bad_pointers_are_efault,
    kernel_addresses_fault,
    uname_fields,
    getrandom_fills_buffer,
    prlimit64_reads_limits,
    getrusage_reports_time,
    set_robust_list_accepts_head,
    rseq_registers_or_enosys,
    clone3_works_or_enosys,
    reboot_needs_magic,
);

extern "C" {
    /// The ELF header, as mapped by the kernel (defined by the linker).
    static __ehdr_start: [u8; 64];
    fn _start();
}

fn initial_stack_layout() -> TestResult {
    let sp = initial_sp();
    check_eq!(sp % 16, 0);
    // SAFETY: sp is where the kernel put argc, argv and envp.
    let (argc, argv0, argv_end) = unsafe {
        let argc = read_volatile(sp as *const usize);
        (
            argc,
            read_volatile((sp + 8) as *const usize),
            read_volatile((sp + 8 + 8 * argc) as *const usize),
        )
    };
    check_eq!(argc, ulib::args().len());
    check!(argc >= 1 && argv0 > sp, "argv[0] at {argv0:#x}");
    check_eq!(argv_end, 0);
    Ok(())
}

fn auxv_describes_program() -> TestResult {
    check_eq!(auxv(AT_PAGESZ), Some(PAGE_SIZE));
    check_eq!(auxv(AT_ENTRY), Some(_start as *const () as usize));
    // SAFETY: the ELF header is mapped (user.ld loads it with .rodata).
    let ehdr = unsafe { &__ehdr_start };
    let phoff = u64::from_le_bytes(ehdr[32..40].try_into().unwrap()) as usize;
    let phentsize = u16::from_le_bytes([ehdr[54], ehdr[55]]) as usize;
    let phnum = u16::from_le_bytes([ehdr[56], ehdr[57]]) as usize;
    check_eq!(auxv(AT_PHDR), Some(ehdr.as_ptr() as usize + phoff));
    check_eq!(auxv(AT_PHENT), Some(phentsize));
    check_eq!(auxv(AT_PHNUM), Some(phnum));
    let random = auxv(AT_RANDOM).unwrap_or(0);
    check!(random != 0, "no AT_RANDOM");
    // SAFETY: AT_RANDOM points at 16 readable bytes.
    let bytes = unsafe { read_volatile(random as *const [u8; 16]) };
    check!(bytes != [0; 16], "AT_RANDOM bytes are all zero");
    Ok(())
}

fn elf_header_is_mapped() -> TestResult {
    // SAFETY: as above.
    let ehdr = unsafe { &__ehdr_start };
    check_eq!(ehdr.as_ptr() as usize, 0x400000);
    check_eq!(&ehdr[..4], b"\x7fELF");
    // e_type ET_EXEC, e_machine EM_AARCH64.
    check_eq!(&ehdr[16..20], &[2, 0, 0xb7, 0]);
    Ok(())
}

/// In .data: the loader must copy it from the file.
static DATA: AtomicU64 = AtomicU64::new(0x0123_4567_89ab_cdef);
/// In .bss, right after .data and partly on its last page: the loader must
/// zero it, including the tail of that file-backed page.
static BSS: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

fn data_and_bss_are_initialized() -> TestResult {
    check_eq!(DATA.load(Ordering::Relaxed), 0x0123_4567_89ab_cdef);
    for (i, word) in BSS.iter().enumerate() {
        let value = word.load(Ordering::Relaxed);
        check!(value == 0, "BSS[{i}] is {value:#x}");
    }
    DATA.store(1, Ordering::Relaxed);
    BSS[1023].store(1, Ordering::Relaxed);
    check_eq!(BSS[1023].load(Ordering::Relaxed), 1);
    Ok(())
}

fn syscall_preserves_registers() -> TestResult {
    // x1..x7, x9..x17 and x20..x28 hold i * 0x0101_0101_0101_0101 across
    // getpid; all must come back unchanged. (x18 and x19 may be reserved
    // by the compiler, x29 is the frame pointer; x8 carries the number.)
    let mut regs = [0u64; 32];
    for (i, r) in regs.iter_mut().enumerate() {
        *r = i as u64 * 0x0101_0101_0101_0101;
    }
    let mut saved = regs;
    let pid: usize;
    // SAFETY: every register the block changes is declared; x20..x28 are
    // saved on the stack and restored around the call.
    unsafe {
        asm!(
            "stp x20, x21, [sp, #-80]!",
            "stp x22, x23, [sp, #16]",
            "stp x24, x25, [sp, #32]",
            "stp x26, x27, [sp, #48]",
            "str x28, [sp, #64]",
            "str x0, [sp, #72]",
            "ldp x1, x2, [x0, #8]",
            "ldp x3, x4, [x0, #24]",
            "ldp x5, x6, [x0, #40]",
            "ldr x7, [x0, #56]",
            "ldp x9, x10, [x0, #72]",
            "ldp x11, x12, [x0, #88]",
            "ldp x13, x14, [x0, #104]",
            "ldp x15, x16, [x0, #120]",
            "ldr x17, [x0, #136]",
            "ldp x20, x21, [x0, #160]",
            "ldp x22, x23, [x0, #176]",
            "ldp x24, x25, [x0, #192]",
            "ldp x26, x27, [x0, #208]",
            "ldr x28, [x0, #224]",
            "mov x8, #{getpid}",
            "svc #0",
            "ldr x8, [sp, #72]",
            "stp x1, x2, [x8, #8]",
            "stp x3, x4, [x8, #24]",
            "stp x5, x6, [x8, #40]",
            "str x7, [x8, #56]",
            "stp x9, x10, [x8, #72]",
            "stp x11, x12, [x8, #88]",
            "stp x13, x14, [x8, #104]",
            "stp x15, x16, [x8, #120]",
            "str x17, [x8, #136]",
            "stp x20, x21, [x8, #160]",
            "stp x22, x23, [x8, #176]",
            "stp x24, x25, [x8, #192]",
            "stp x26, x27, [x8, #208]",
            "str x28, [x8, #224]",
            "ldp x22, x23, [sp, #16]",
            "ldp x24, x25, [sp, #32]",
            "ldp x26, x27, [sp, #48]",
            "ldr x28, [sp, #64]",
            "ldp x20, x21, [sp], #80",
            getpid = const __NR_getpid,
            inlateout("x0") saved.as_mut_ptr() => pid,
            out("x1") _, out("x2") _, out("x3") _, out("x4") _, out("x5") _,
            out("x6") _, out("x7") _, out("x8") _, out("x9") _, out("x10") _,
            out("x11") _, out("x12") _, out("x13") _, out("x14") _, out("x15") _,
            out("x16") _, out("x17") _,
        );
    }
    check_eq!(pid as i32, getpid());
    for i in (1..=7).chain(9..=17).chain(20..=28) {
        check!(
            saved[i] == regs[i],
            "x{i} changed: {:#x} -> {:#x}",
            regs[i],
            saved[i]
        );
    }
    Ok(())
}

fn syscall_preserves_fp_registers() -> TestResult {
    let values: [u64; 32] = core::array::from_fn(|i| 0x1111_1111_1111_1111 * (i as u64 % 15 + 1));
    let mut after = [0u64; 32];
    // SAFETY: the block loads d0..d31 (the low halves of v0..v31), calls
    // getpid and stores them back; all are declared clobbered.
    unsafe {
        asm!(
            "ldp d0, d1, [{src}, #0]", "ldp d2, d3, [{src}, #16]",
            "ldp d4, d5, [{src}, #32]", "ldp d6, d7, [{src}, #48]",
            "ldp d8, d9, [{src}, #64]", "ldp d10, d11, [{src}, #80]",
            "ldp d12, d13, [{src}, #96]", "ldp d14, d15, [{src}, #112]",
            "ldp d16, d17, [{src}, #128]", "ldp d18, d19, [{src}, #144]",
            "ldp d20, d21, [{src}, #160]", "ldp d22, d23, [{src}, #176]",
            "ldp d24, d25, [{src}, #192]", "ldp d26, d27, [{src}, #208]",
            "ldp d28, d29, [{src}, #224]", "ldp d30, d31, [{src}, #240]",
            "mov x8, #{getpid}",
            "svc #0",
            "stp d0, d1, [{dst}, #0]", "stp d2, d3, [{dst}, #16]",
            "stp d4, d5, [{dst}, #32]", "stp d6, d7, [{dst}, #48]",
            "stp d8, d9, [{dst}, #64]", "stp d10, d11, [{dst}, #80]",
            "stp d12, d13, [{dst}, #96]", "stp d14, d15, [{dst}, #112]",
            "stp d16, d17, [{dst}, #128]", "stp d18, d19, [{dst}, #144]",
            "stp d20, d21, [{dst}, #160]", "stp d22, d23, [{dst}, #176]",
            "stp d24, d25, [{dst}, #192]", "stp d26, d27, [{dst}, #208]",
            "stp d28, d29, [{dst}, #224]", "stp d30, d31, [{dst}, #240]",
            src = in(reg) values.as_ptr(),
            dst = in(reg) after.as_mut_ptr(),
            getpid = const __NR_getpid,
            out("x0") _, out("x8") _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _,
            out("v5") _, out("v6") _, out("v7") _, out("v8") _, out("v9") _,
            out("v10") _, out("v11") _, out("v12") _, out("v13") _, out("v14") _,
            out("v15") _, out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _, out("v24") _,
            out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
            out("v30") _, out("v31") _,
        );
    }
    for i in 0..32 {
        check!(
            after[i] == values[i],
            "d{i} changed: {:#x} -> {:#x}",
            values[i],
            after[i]
        );
    }
    Ok(())
}

fn unknown_syscall_is_enosys() -> TestResult {
    for nr in [1000, 0xffff, 1 << 20] {
        // SAFETY: no kernel implements these numbers.
        check_err!(unsafe { syscall!(nr) }, Errno::ENOSYS);
    }
    Ok(())
}

fn bad_pointers_are_efault() -> TestResult {
    for bad in [0x10usize, 0xffff_0000_4020_0000] {
        // SAFETY: the kernel must refuse the bad address and write
        // nothing anywhere.
        unsafe {
            check_err!(syscall!(__NR_uname, bad), Errno::EFAULT);
            check_err!(syscall!(__NR_getrandom, bad, 16, 0), Errno::EFAULT);
            check_err!(syscall!(__NR_clock_gettime, 1, bad), Errno::EFAULT);
            check_err!(syscall!(__NR_getrusage, RUSAGE_SELF, bad), Errno::EFAULT);
            check_err!(syscall!(__NR_write, 1, bad, 16), Errno::EFAULT);
            check_err!(
                syscall!(__NR_prlimit64, 0, RLIMIT_STACK, 0, bad),
                Errno::EFAULT
            );
            check_err!(syscall!(__NR_rt_sigprocmask, 0, bad, 0, 8), Errno::EFAULT);
            // qemu 7.2 ignores a bad nanosleep pointer.
            if !running_on_qemu_user() {
                check_err!(syscall!(__NR_nanosleep, bad, 0), Errno::EFAULT);
            }
        }
    }
    Ok(())
}

fn kernel_addresses_fault() -> TestResult {
    // faultline's kernel image and linear map, and the top of the address
    // space: user code must fault there, never read kernel memory.
    for addr in [0xffff_0000_4020_0000, 0xffff_8000_0000_0000, usize::MAX - 7] {
        match try_read(addr) {
            Err(fault) => check_eq!(fault.signo, SIGSEGV),
            Ok(byte) => check!(false, "read {byte:#x} at {addr:#x}"),
        }
    }
    Ok(())
}

fn uname_fields() -> TestResult {
    let uts = uname()?;
    for (name, value) in [
        ("sysname", field(&uts.sysname)),
        ("release", field(&uts.release)),
        ("version", field(&uts.version)),
        ("machine", field(&uts.machine)),
    ] {
        check!(!value.is_empty(), "uname {name} is empty");
    }
    check_eq!(field(&uts.machine), "aarch64");
    Ok(())
}

fn getrandom_fills_buffer() -> TestResult {
    let mut a = [0u8; 64];
    let mut b = [0u8; 64];
    check_eq!(getrandom(&mut a, 0)?, 64);
    check_eq!(getrandom(&mut b, GRND_NONBLOCK)?, 64);
    check!(a != b && a != [0; 64], "getrandom returned the same bytes");
    check_eq!(getrandom(&mut [], 0)?, 0);
    check_err!(getrandom(&mut a, 0x100), Errno::EINVAL);
    Ok(())
}

fn prlimit64_reads_limits() -> TestResult {
    let stack = prlimit64(0, RLIMIT_STACK, None)?;
    check!(stack.cur > 0 && stack.cur <= stack.max, "{stack:?}");
    let nofile = prlimit64(0, RLIMIT_NOFILE, None)?;
    check!(nofile.cur >= 64, "{nofile:?}");
    // Lowering the soft limit is always allowed, and reads back.
    let lower = Rlimit {
        cur: 32,
        max: nofile.max,
    };
    check_eq!(prlimit64(0, RLIMIT_NOFILE, Some(&lower))?, nofile);
    check_eq!(prlimit64(getpid(), RLIMIT_NOFILE, None)?, lower);
    check_err!(prlimit64(0, 999, None), Errno::EINVAL);
    Ok(())
}

fn getrusage_reports_time() -> TestResult {
    let before = getrusage(RUSAGE_SELF)?;
    let mut x = 0u64;
    for i in 0..2_000_000u64 {
        x = core::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    let after = getrusage(RUSAGE_SELF)?;
    let total = |r: &Rusage| {
        (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1_000_000
            + r.ru_utime.tv_usec
            + r.ru_stime.tv_usec
    };
    check!(total(&after) >= total(&before));
    check!(after.ru_utime.tv_usec < 1_000_000 && after.ru_stime.tv_usec < 1_000_000);
    check!(getrusage(RUSAGE_CHILDREN).is_ok());
    check_err!(getrusage(99), Errno::EINVAL);
    Ok(())
}

fn set_robust_list_accepts_head() -> TestResult {
    static mut HEAD: RobustListHead = RobustListHead {
        list: 0,
        futex_offset: 0,
        list_op_pending: 0,
    };
    let head = &raw mut HEAD;
    // An empty list points at itself.
    // SAFETY: HEAD is static, so valid until the thread exits.
    unsafe {
        (*head).list = head as usize;
        match set_robust_list(head, size_of::<RobustListHead>()) {
            Err(Errno::ENOSYS) if running_on_qemu_user() => {
                skip!("qemu-user does not implement set_robust_list")
            }
            result => result?,
        }
        check_err!(set_robust_list(head, 8), Errno::EINVAL);
    }
    Ok(())
}

/// `struct rseq` (the first 32 bytes), aligned as the kernel requires.
#[repr(C, align(32))]
struct Rseq {
    cpu_id_start: u32,
    cpu_id: u32,
    rseq_cs: u64,
    flags: u32,
    _pad: [u32; 3],
}

fn rseq_registers_or_enosys() -> TestResult {
    static mut AREA: Rseq = Rseq {
        cpu_id_start: 0,
        cpu_id: u32::MAX,
        rseq_cs: 0,
        flags: 0,
        _pad: [0; 3],
    };
    // SAFETY: AREA is static, so it outlives the registration.
    let ret = unsafe { syscall!(__NR_rseq, &raw mut AREA, 32, 0, 0x5305_3053) };
    match ret {
        // Registered: the kernel fills in the CPU on return to user.
        // SAFETY: the kernel writes cpu_id; this only reads it.
        Ok(0) => check!(unsafe { read_volatile(&raw const AREA.cpu_id) } < 4096),
        Err(Errno::ENOSYS) => {}
        other => check!(false, "rseq: {other:?}"),
    }
    Ok(())
}

fn clone3_works_or_enosys() -> TestResult {
    // A clone_args smaller than its first version: EINVAL where clone3
    // exists, ENOSYS where it does not; no process is created either way.
    let args = [0u64; 8];
    // SAFETY: the kernel only reads args, and refuses the size.
    let ret = unsafe { syscall!(__NR_clone3, args.as_ptr(), 16) };
    check!(
        matches!(ret, Err(Errno::EINVAL) | Err(Errno::ENOSYS)),
        "clone3: {ret:?}"
    );
    Ok(())
}

fn reboot_needs_magic() -> TestResult {
    // Wrong magic: refused whoever asks (EPERM first where unprivileged).
    let ret = reboot(0x1234, LINUX_REBOOT_MAGIC2, LINUX_REBOOT_CMD_POWER_OFF);
    check!(
        matches!(ret, Err(Errno::EINVAL) | Err(Errno::EPERM)),
        "reboot: {ret:?}"
    );
    let ret = reboot(LINUX_REBOOT_MAGIC1, 0x1234, LINUX_REBOOT_CMD_POWER_OFF);
    check!(
        matches!(ret, Err(Errno::EINVAL) | Err(Errno::EPERM)),
        "reboot: {ret:?}"
    );
    Ok(())
}
