//! faultline: an AArch64 teaching kernel for the page-fault path.
//!
//! `kernel_main` is the boot story; read it first. `arch/aarch64/boot.S`
//! runs before it (EL2 -> EL1, boot page tables, MMU on) and every
//! secondary CPU enters at `secondary_main`.
#![no_std]
#![no_main]
#![deny(clippy::undocumented_unsafe_blocks)]
// Every item documented, private ones too: rustc's `missing_docs` sees
// nothing in a binary crate, whose items are never exported.
#![deny(clippy::missing_docs_in_private_items)]

extern crate alloc;

#[macro_use]
mod console;
mod arch;
mod cmdline;
mod config;
mod dtb;
mod errno;
mod fs;
mod ipc;
mod ktest;
mod mm;
mod net;
mod panic;
mod printk;
mod random;
mod switches;
mod sync;
mod syscall;
mod task;
mod ustr;
mod vmcoreinfo;

use arch::{cpu, cpufeature, gic, irq, mmu, psci, semihosting, smp, trap};
use cmdline::Cmdline;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use mm::addr::{phys_to_virt, virt_to_phys, PhysAddr, PAGE_SIZE};

use mm::{frame, kmap};

/// Where QEMU puts the DTB when it boots an ELF image (x0 is 0 then).
const DEFAULT_DTB: PhysAddr = PhysAddr(0x4000_0000);
/// Secondary CPUs' boot stacks (they become the CPUs' idle threads).
const SECONDARY_STACK_ORDER: usize = 4;

/// The boot CPU's story, from the MMU being on to the first thread.
#[no_mangle]
pub extern "C" fn kernel_main(dtb_pa: usize, boot_el: usize) -> ! {
    task::set_this_cpu(0);
    cpu::enable_fpsimd();
    trap::init_this_cpu();

    // 1. What machine is this? Everything comes from the device tree.
    let dtb_pa = if dtb_pa == 0 {
        DEFAULT_DTB
    } else {
        PhysAddr(dtb_pa as u64)
    };
    let mut info = read_dtb(dtb_pa);
    console::init(info.uart.base);
    if let (None, Some((base, size))) = (info.initrd, Cmdline(info.bootargs).initrd()) {
        info.initrd = Some(dtb::MemRegion {
            base: PhysAddr(base),
            size,
        });
    }

    // 2. Physical memory: every free frame into the buddy allocator.
    let (ram_start, ram_end) = ram_span(&info);
    let mut free = [(PhysAddr(0), PhysAddr(0)); 32];
    let image = kernel_image_range();
    let n = info.free_ranges(dtb_pa, &[image], &mut free);
    frame::init(ram_start, ram_end, &free[..n]);

    // 3. The kernel's own page tables: linear map in blocks, image W^X.
    let ram: alloc::vec::Vec<_> = info.memory.iter().map(|r| (r.base, r.end())).collect();
    let devices = device_ranges(&info);
    kmap::init(&ram, &devices);
    mmu::clear_ttbr0();
    if let Some(rtc) = info.rtc {
        arch::pl031::init(rtc.base);
    }
    if let Some(secs) = arch::pl031::read_seconds() {
        task::clock::init_realtime(secs);
    }

    random::seed(arch::timer::counter());

    // 4. What the MMU offers (before the other CPUs start, which turn on
    //    the same), interrupts, the tick, the scheduler, the other CPUs.
    cpufeature::init(&Cmdline(info.bootargs));
    cpufeature::enable_this_cpu();
    psci::init(info.psci);
    gic::init(&info.gic);
    task::init_this_cpu();
    irq::init_this_cpu(0, info.timer_virt_intid);
    smp::set_logical_map(&info.cpu_logical_map);
    SECONDARY_TIMER_INTID.store(info.timer_virt_intid, Relaxed);
    for cpu in 1..info.cpu_logical_map.len() {
        start_secondary(cpu);
    }

    print_banner(&info, boot_el);

    // 5. Files: a tmpfs root with /proc and /sys, the initrd unpacked into
    //    it, and the initrd's memory given back.
    let initrd = info.initrd.map(|r| {
        // SAFETY: the DTB's initrd range is RAM the page allocator was
        // kept away from; it is read here once, then freed below.
        unsafe { core::slice::from_raw_parts(phys_to_virt(r.base) as *const u8, r.size as usize) }
    });
    ipc::init();
    if let Some(done) = fs::init(Cmdline(info.bootargs), initrd) {
        println!(
            "  initramfs: {} entries unpacked, {} skipped{}",
            done.created,
            done.skipped,
            if done.error.is_some() {
                " (archive damaged)"
            } else {
                ""
            }
        );
    }
    task::exec::load_vdso();
    if let Some(r) = info.initrd {
        frame::free_boot_range(r.base.align_up(PAGE_SIZE), r.end().align_down(PAGE_SIZE));
    }

    // 6. The first thread runs the workload the command line asks for;
    //    this CPU becomes its idle loop.
    let cmdline = alloc::string::String::from(info.bootargs);
    fs::tty::start_console_input(info.uart_intid);
    task::spawn_on(0, move || run_workload(Cmdline(&cmdline)));
    cpu::local_irq_enable();
    task::start_idle_loop();
}

/// Finds and parses the DTB at `pa` (Linux's `setup_machine_fdt`); an
/// unreadable one exits QEMU with status 2, as there is no console yet.
fn read_dtb(pa: PhysAddr) -> dtb::BootInfo<'static> {
    let va = phys_to_virt(pa);
    // SAFETY: the boot map covers RAM, where QEMU placed the DTB; its
    // header says how long it is, and the kernel never writes to it.
    let header = unsafe { core::slice::from_raw_parts(va as *const u8, 64) };
    let Some(size) = dtb::total_size(header) else {
        semihosting::exit(2);
    };
    // SAFETY: as for the header: the blob QEMU placed, `size` bytes long.
    let blob = unsafe { core::slice::from_raw_parts(va as *const u8, size) };
    dtb::parse(blob).unwrap_or_else(|_| semihosting::exit(2))
}

/// The physical span from the lowest to the highest RAM address, holes
/// included: what `mem_map` must cover.
fn ram_span(info: &dtb::BootInfo) -> (PhysAddr, PhysAddr) {
    let start = info.memory.iter().map(|r| r.base).min().expect("no RAM");
    let end = info.memory.iter().map(|r| r.end()).max().expect("no RAM");
    (start, end)
}

/// The kernel image's physical range, `.text` through `.bss`, kept away
/// from the page allocator (Linux's `memblock_reserve` of `_text`..`_end`).
fn kernel_image_range() -> (PhysAddr, PhysAddr) {
    let img = kmap::image_layout();
    (virt_to_phys(img.text.0), virt_to_phys(img.data.1))
}

/// The MMIO ranges (UART, GIC, RTC) the kernel map must map as device
/// memory, each as (start, end) physical addresses.
fn device_ranges(info: &dtb::BootInfo) -> alloc::vec::Vec<(PhysAddr, PhysAddr)> {
    let r = |m: dtb::MemRegion| (m.base, m.end());
    let mut v = match info.gic {
        dtb::GicInfo::V2 { dist, cpu_if } => alloc::vec![r(info.uart), r(dist), r(cpu_if)],
        dtb::GicInfo::V3 { dist, redist } => alloc::vec![r(info.uart), r(dist), r(redist)],
    };
    v.extend(info.rtc.map(r));
    v
}

/// The virtual timer's interrupt ID, from the DTB, for secondary CPUs to
/// enable in `secondary_main`.
static SECONDARY_TIMER_INTID: AtomicU32 = AtomicU32::new(0);
/// One boot record per CPU (stack top, TTBR1, CPU number) that
/// `start_secondary` fills and the CPU reads as it comes up (as Linux's
/// `secondary_data`).
static SECONDARY_BOOT: [smp::SecondaryBoot; crate::config::NR_CPUS] =
    [const { smp::SecondaryBoot::new() }; crate::config::NR_CPUS];

/// Starts `cpu` and waits (bounded) until it is online.
fn start_secondary(cpu: usize) {
    let stack = frame::alloc_pages(SECONDARY_STACK_ORDER).expect("secondary stack");
    let record = &SECONDARY_BOOT[cpu];
    let stack_top = phys_to_virt(stack) + (PAGE_SIZE << SECONDARY_STACK_ORDER);
    record.stack_top.store(stack_top as u64, Relaxed);
    record.ttbr1.store(kmap::kernel_pgd().0, Relaxed);
    record.cpu.store(cpu as u64, Relaxed);
    if let Err(e) = smp::boot_secondary(cpu, record) {
        println!("smp: CPU {} failed to start: PSCI: {}", cpu, e);
        return;
    }
    let deadline = arch::timer::counter() + arch::timer::frequency();
    while !task::cpu_online(cpu) {
        if arch::timer::counter() > deadline {
            println!("smp: CPU {} did not come online", cpu);
            return;
        }
        core::hint::spin_loop();
    }
}

/// Every secondary CPU's story: its own vectors, TTBR0 and GIC interface,
/// then its idle loop.
#[no_mangle]
pub extern "C" fn secondary_main(record: &smp::SecondaryBoot) -> ! {
    let cpu = record.cpu.load(Relaxed) as usize;
    task::set_this_cpu(cpu);
    cpu::enable_fpsimd();
    trap::init_this_cpu();
    cpufeature::enable_this_cpu();
    mmu::clear_ttbr0();
    task::init_this_cpu();
    irq::init_this_cpu(cpu, SECONDARY_TIMER_INTID.load(Relaxed));
    cpu::local_irq_enable();
    task::start_idle_loop();
}

/// Prints the boot banner: RAM, CPUs, GIC version, the kernel map's block
/// and page counts, and the command line.
fn print_banner(info: &dtb::BootInfo, boot_el: usize) {
    let ram: u64 = info.memory.iter().map(|r| r.size).sum();
    let (blocks_1g, blocks_2m, pages) = kmap::leaf_counts();
    println!("faultline {} on QEMU virt", env!("CARGO_PKG_VERSION"));
    println!(
        "  RAM {} MiB ({} MiB free), CPUs online: {}, GICv{}, entered at EL{}",
        ram >> 20,
        (frame::free_stats().free_pages * PAGE_SIZE) >> 20,
        task::nr_cpus_online(),
        gic::version(),
        boot_el
    );
    println!(
        "  page tables: 4K granule, 48-bit VA, 4 levels; kernel in TTBR1: {} x 1G + {} x 2M blocks, {} x 4K pages (image W^X); {}-bit ASIDs for TTBR0",
        blocks_1g, blocks_2m, pages, mmu::asid_bits()
    );
    println!("  MMU features in use: {}", cpufeature::describe());
    if info.nr_cpus_ignored > 0 {
        println!(
            "  {} CPUs beyond the first {} ignored",
            info.nr_cpus_ignored,
            crate::config::NR_CPUS
        );
    }
    println!("  command line: \"{}\"", info.bootargs);
}

/// What `make run` and `make test` boot into, chosen on the command line:
/// `ktest` runs the in-kernel tests verbosely (`ktest=NAME` only those
/// whose name contains NAME, e.g. `ktest=vma_lock`); otherwise user space starts
/// with `/init` from the initrd, given the words after `--` as arguments
/// (as Linux passes them), and without an `/init` the kernel runs a quiet
/// self-check. `panic=test` panics on
/// purpose, `panic=fault` takes an unexpected kernel data abort and
/// `panic=console` panics while holding the console lock (to see and test
/// the crash reports); `show=PATH[,PATH...]` prints files, e.g. a /proc or
/// /sys file; the default is a quiet self-check.
fn run_workload(cmdline: Cmdline) {
    switches::apply_cmdline(&cmdline);
    match cmdline.get("panic") {
        Some("test") => forced_panic(),
        Some("fault") => forced_fault(),
        Some("console") => println!("{}", PanicsWhenPrinted),
        _ => {}
    }
    for path in cmdline.get("show").into_iter().flat_map(|p| p.split(',')) {
        show_file(path);
    }
    let only = cmdline.get("ktest");
    let verbose = cmdline.has("ktest") || only.is_some();
    syscall::STRACE.store(cmdline.has("strace"), core::sync::atomic::Ordering::Relaxed);
    if !verbose && fs::vfs::lookup(&fs::vfs::root(), "/init", true).is_ok() {
        let args = cmdline.0.split_once(" -- ").map_or("", |(_, a)| a);
        let argv: alloc::vec::Vec<_> = core::iter::once("/init")
            .chain(args.split_ascii_whitespace())
            .map(|a| a.as_bytes().to_vec())
            .collect();
        match start_init(argv) {
            Ok(()) => return,
            Err(e) => panic!("could not start /init: {:?}", e),
        }
    }
    let (passed, failed) = ktest::run_all(verbose, only);
    if let (Some(part), 0) = (only, passed + failed) {
        println!("ktest: no test's name contains {:?}", part);
        semihosting::exit(1);
    }
    if verbose {
        println!("{} passed, {} failed", passed, failed);
    } else {
        println!("self-check: {} passed, {} failed", passed, failed);
    }
    if failed > 0 {
        semihosting::exit(1);
    }
    println!("faultline: powering off");
    psci::system_off();
}

/// Prints a file, like `cat`, under a `==> path <==` header.
fn show_file(path: &str) {
    println!("==> {} <==", path);
    let file = match fs::vfs::open(&fs::vfs::root(), path, fs::vfs::O_RDONLY, 0) {
        Ok(f) => f,
        Err(e) => return println!("{:?}", e),
    };
    let mut buf = [0u8; 512];
    while let Ok(n @ 1..) = file.read(&mut buf) {
        print!("{}", alloc::string::String::from_utf8_lossy(&buf[..n]));
    }
}

/// `panic=test`: panics on purpose, to exercise the panic handler's
/// report and backtrace.
#[inline(never)]
fn forced_panic() -> ! {
    panic!("forced by the panic=test command-line option");
}

/// Starts `/init`, with the console as fds 0-2 (Linux: `kernel_init` ->
/// `run_init_process`).
fn start_init(argv: alloc::vec::Vec<alloc::vec::Vec<u8>>) -> errno::KResult<()> {
    let env = [b"HOME=/".to_vec(), b"TERM=linux".to_vec()];
    let init = task::exec::spawn_process("/init", &argv, &env)?;
    task::process::set_init(&init);
    Ok(())
}

/// PID 1 has exited: the machine powers off, and QEMU's exit status says
/// how init ended (its exit code, or 128 + the signal that killed it).
pub fn init_exited(status: u32) -> ! {
    let code = if status & 0x7f == 0 {
        (status >> 8) & 0xff
    } else {
        128 + (status & 0x7f)
    };
    println!("faultline: init exited with status {}, powering off", code);
    if code == 0 {
        psci::system_off();
    }
    semihosting::exit(code);
}

/// `panic=console`: a value whose `Display` panics halfway through a line,
/// so the panic handler must print while this CPU holds the console lock.
struct PanicsWhenPrinted;

impl core::fmt::Display for PanicsWhenPrinted {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        f.write_str("half a line, then ")?;
        panic!("forced by panic=console, inside println!");
    }
}

/// `panic=fault`: reads address 0, so the kernel data abort path must report
/// the fault and panic.
#[inline(never)]
fn forced_fault() -> ! {
    // SAFETY: deliberately not: address 0 is unmapped, and the data abort
    // must be reported and end in a panic.
    let v = unsafe { core::ptr::read_volatile(core::hint::black_box(0usize) as *const u64) };
    unreachable!("read {:#x} from address 0", v);
}
