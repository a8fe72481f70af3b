//! Process tests: fork and copy-on-write (anonymous, file-backed private,
//! and shared memory), wait4 and its status encoding, zombies, vfork,
//! execve (arguments, environment, what survives it, and its errors), ids,
//! set_tid_address, and how exit and exit_group end threads and processes.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use core::ffi::CStr;
use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::mm::*;
use ulib::process::*;
use ulib::signal::*;
use ulib::test::{Scratch, TestError, TestResult};
use ulib::thread::spawn;
use ulib::time::sleep;
use ulib::{check, check_eq, check_err, Errno};

ulib::tests!(
    tests: [
        fork_returns_twice,
        fork_copies_anon_memory,
        cow_copies_while_shared_and_reuses_once_alone,
        fork_copies_globals_and_stack,
        fork_private_file_mapping,
        fork_shares_shared_anon,
        wait_status_exit_codes,
        wait_status_signals,
        wait4_errors,
        wait4_wnohang,
        wait4_any_child,
        many_children,
        zombie_until_reaped,
        vfork_execve_runs_child,
        execve_passes_args_and_env,
        execve_keeps_mask_and_ignored,
        execve_errors,
        ids_in_threads,
        set_tid_address_returns_tid,
        thread_exit_leaves_process,
        exit_group_from_thread,
    ],
    helpers: [exit_with, echo_args, show_signals],
);

fn fork_returns_twice() -> TestResult {
    let parent = getpid();
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        // Report what the child sees: its pid and its parent's.
        let report = format!("{} {}", getpid(), getppid());
        let _ = write(wr, report.as_bytes());
        exit_group(7);
    }
    close(wr)?;
    let report = read_to_end(rd)?;
    let (reaped, status) = wait4(pid, 0)?;
    check_eq!(reaped, pid);
    check_eq!(status.exit_code(), Some(7));
    check!(pid > 0 && pid != parent);
    check_eq!(report, format!("{pid} {parent}").into_bytes());
    Ok(())
}

fn fork_copies_anon_memory() -> TestResult {
    let page = map_anon(PAGE_SIZE)?;
    let word = page as *mut u32;
    // SAFETY: page is our own writable mapping (so for every access below).
    unsafe { write_volatile(word, 1) };
    let [go_rd, go_wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        // Wait until the parent has written its own value.
        let _ = read(go_rd, &mut [0u8; 1]);
        // SAFETY: as above.
        let seen = unsafe { read_volatile(word) };
        // SAFETY: as above.
        unsafe { write_volatile(word, 2) };
        // SAFETY: as above.
        let mine = unsafe { read_volatile(word) };
        exit_group(if seen == 1 && mine == 2 { 0 } else { 1 });
    }
    // SAFETY: as above.
    unsafe { write_volatile(word, 3) };
    write(go_wr, b"g")?;
    check_eq!(wait_for(pid)?.exit_code(), Some(0));
    // SAFETY: as above.
    check_eq!(unsafe { read_volatile(word) }, 3);
    Ok(())
}

/// The frame mapping `addr`, from /proc/self/pagemap (bits 54:0 of its
/// entry; bit 63 says it is present).
fn frame_of(addr: usize) -> Result<u64, TestError> {
    let fd = open(c"/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0)?;
    let mut entry = [0u8; 8];
    let got = pread64(fd, &mut entry, addr / PAGE_SIZE * 8);
    close(fd)?;
    check_eq!(got?, 8);
    let entry = u64::from_le_bytes(entry);
    check!(entry >> 63 == 1);
    Ok(entry & ((1 << 55) - 1))
}

/// Copy-on-write after fork (Linux: `do_wp_page`): while the child
/// shares the page, the parent's write gets a copy on a new frame and the
/// child keeps the old contents; once the only other holder has gone, a
/// write reuses the page where it is, as nobody else maps it
/// (`wp_can_reuse_anon_folio`).
fn cow_copies_while_shared_and_reuses_once_alone() -> TestResult {
    let shared = map_anon(PAGE_SIZE)?;
    let s = shared as *mut u32;
    // SAFETY: our own writable mapping (so for every access below).
    unsafe { write_volatile(s, 1) };
    let shared_frame = frame_of(shared)?;
    let [go_rd, go_wr] = pipe2(O_CLOEXEC)?;
    let sharer = fork()?;
    if sharer == 0 {
        let _ = read(go_rd, &mut [0u8; 1]);
        // SAFETY: as above.
        exit_group(if unsafe { read_volatile(s) } == 1 {
            0
        } else {
            1
        });
    }
    // Made after the sharer left: only the leaver below ever maps it.
    let alone = map_anon(PAGE_SIZE)?;
    let a = alone as *mut u32;
    // SAFETY: as above.
    unsafe { write_volatile(a, 1) };
    let alone_frame = frame_of(alone)?;
    let leaver = fork()?;
    if leaver == 0 {
        exit_group(0);
    }
    check_eq!(wait_for(leaver)?.exit_code(), Some(0));
    // SAFETY: as above.
    unsafe { write_volatile(s, 2) };
    // SAFETY: as above.
    unsafe { write_volatile(a, 2) };
    check!(frame_of(shared)? != shared_frame);
    check_eq!(frame_of(alone)?, alone_frame);
    write(go_wr, b"g")?;
    check_eq!(wait_for(sharer)?.exit_code(), Some(0));
    Ok(())
}

static mut GLOBAL: u32 = 10;

fn fork_copies_globals_and_stack() -> TestResult {
    let mut local = 20u32;
    let local_ptr = &mut local as *mut u32;
    let status = in_child(|| {
        // SAFETY: only this process's copy is written.
        unsafe {
            write_volatile(&raw mut GLOBAL, 11);
            write_volatile(local_ptr, 21);
        }
        0
    })?;
    check_eq!(status.exit_code(), Some(0));
    // SAFETY: nothing else writes GLOBAL in this process.
    check_eq!(unsafe { read_volatile(&raw const GLOBAL) }, 10);
    // SAFETY: local is live.
    check_eq!(unsafe { read_volatile(local_ptr) }, 20);
    Ok(())
}

fn fork_private_file_mapping() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, &[b'f'; PAGE_SIZE])?;
    let fd = open(&path, O_RDONLY, 0)?;
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe { mmap(0, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) }?;
    try_write(addr, b'p').unwrap();
    let status = in_child(|| {
        let inherited = try_read(addr);
        let wrote = try_write(addr + 1, b'c');
        (inherited != Ok(b'p') || wrote.is_err()) as i32
    })?;
    check_eq!(status.exit_code(), Some(0));
    check_eq!(try_read(addr), Ok(b'p'));
    check_eq!(try_read(addr + 1), Ok(b'f'));
    check_eq!(&read_file(&path)?[..2], b"ff");
    Ok(())
}

fn fork_shares_shared_anon() -> TestResult {
    // SAFETY: a new mapping the kernel places.
    let addr = unsafe {
        mmap(
            0,
            PAGE_SIZE,
            PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS,
            -1,
            0,
        )
    }?;
    try_write(addr, 1).unwrap();
    let status = in_child(|| match try_read(addr) {
        Ok(1) => try_write(addr, 2).map_or(1, |_| 0),
        _ => 1,
    })?;
    check_eq!(status.exit_code(), Some(0));
    check_eq!(try_read(addr), Ok(2));
    Ok(())
}

fn wait_status_exit_codes() -> TestResult {
    for (code, want) in [(0, 0), (1, 1), (42, 42), (255, 255), (256 + 3, 3)] {
        let status = in_child(|| code)?;
        check_eq!(status.0, want << 8);
        check_eq!(status.exit_code(), Some(want));
        check_eq!(status.term_signal(), None);
    }
    Ok(())
}

fn wait_status_signals() -> TestResult {
    // A fault with the default action.
    let status = in_child(|| {
        // SAFETY: meant to fault.
        unsafe { read_volatile(0x10 as *const u8) as i32 }
    })?;
    check_eq!(status.term_signal(), Some(SIGSEGV));
    check_eq!(status.exit_code(), None);
    // Killed by its parent while asleep: SIGKILL and a terminating SIGTERM.
    for sig in [SIGKILL, SIGTERM] {
        let pid = fork()?;
        if pid == 0 {
            loop {
                sleep(Duration::from_secs(1));
            }
        }
        kill(pid, sig)?;
        let status = wait_for(pid)?;
        // Only the low 7 bits: 0x80 would mean a core dump.
        check_eq!(status.0 & 0x7f, sig);
        check_eq!(status.term_signal(), Some(sig));
    }
    Ok(())
}

fn wait4_errors() -> TestResult {
    check_err!(wait4(-1, 0), Errno::ECHILD);
    check_err!(wait4(1, 0), Errno::ECHILD);
    check_err!(wait4(-1, WNOHANG), Errno::ECHILD);
    let status = in_child(|| 0)?;
    check_eq!(status.exit_code(), Some(0));
    check_err!(wait4(-1, 0), Errno::ECHILD);
    check_err!(wait4(-1, 0x1000), Errno::EINVAL);
    Ok(())
}

fn wait4_wnohang() -> TestResult {
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        let _ = read(rd, &mut [0u8; 1]);
        exit_group(5);
    }
    check_eq!(wait4(pid, WNOHANG)?.0, 0);
    write(wr, b"x")?;
    loop {
        match wait4(pid, WNOHANG)? {
            (0, _) => sleep(Duration::from_millis(1)),
            (reaped, status) => {
                check_eq!(reaped, pid);
                check_eq!(status.exit_code(), Some(5));
                return Ok(());
            }
        }
    }
}

fn wait4_any_child() -> TestResult {
    let a = fork()?;
    if a == 0 {
        exit_group(1);
    }
    let b = fork()?;
    if b == 0 {
        exit_group(2);
    }
    let mut reaped = [wait4(-1, 0)?, wait4(-1, 0)?];
    reaped.sort_by_key(|(pid, _)| *pid);
    let mut want = [(a, 1), (b, 2)];
    want.sort();
    check_eq!(
        reaped.map(|(pid, st)| (pid, st.exit_code().unwrap_or(-1))),
        want
    );
    Ok(())
}

fn many_children() -> TestResult {
    let pids: Vec<i32> = (0..32)
        .map(|i| match fork() {
            Ok(0) => exit_group(i),
            pid => pid,
        })
        .collect::<Result<_, _>>()?;
    for (i, pid) in pids.iter().enumerate().rev() {
        check_eq!(wait_for(*pid)?.exit_code(), Some(i as i32));
    }
    let mut sorted = pids.clone();
    sorted.sort();
    sorted.dedup();
    check_eq!(sorted.len(), 32);
    Ok(())
}

fn zombie_until_reaped() -> TestResult {
    let pid = fork()?;
    if pid == 0 {
        exit_group(0);
    }
    sleep(Duration::from_millis(20));
    // A zombie still exists for kill(pid, 0)...
    kill(pid, 0)?;
    check_eq!(wait_for(pid)?.exit_code(), Some(0));
    // ...until its parent has reaped it.
    check_err!(kill(pid, 0), Errno::ESRCH);
    Ok(())
}

/// `exit_with CODE`: exits with CODE.
fn exit_with(args: &[&str]) -> i32 {
    args.first().and_then(|a| a.parse().ok()).unwrap_or(99)
}

/// `echo_args ...`: prints its arguments and $FOO, separated by '|'.
fn echo_args(args: &[&str]) -> i32 {
    let me = ulib::args().next().unwrap_or("");
    ulib::print!("{me}|");
    for arg in args {
        ulib::print!("{arg}|");
    }
    ulib::println!("{}", ulib::env("FOO").unwrap_or("<unset>"));
    0
}

/// `show_signals`: prints whether SIGUSR1 is blocked and the dispositions
/// of SIGUSR1 (handled before exec) and SIGUSR2 (ignored before exec).
fn show_signals(_: &[&str]) -> i32 {
    let mask = rt_sigprocmask(SIG_BLOCK, None).unwrap_or(0);
    // SAFETY: only reads the current actions.
    let (usr1, usr2) = unsafe {
        (
            rt_sigaction(SIGUSR1, None).map_or(99, |a| a.sa_handler),
            rt_sigaction(SIGUSR2, None).map_or(99, |a| a.sa_handler),
        )
    };
    let blocked = mask & sigmask(SIGUSR1) != 0;
    ulib::println!("blocked={blocked} usr1={usr1} usr2={usr2}");
    0
}

fn vfork_execve_runs_child() -> TestResult {
    let path = own_path();
    let argv = [path.as_c_str(), c"--helper", c"exit_with", c"37"];
    let pid = vfork_execve(&path, &argv, &[])?;
    check_eq!(wait_for(pid)?.exit_code(), Some(37));
    let missing = c"/nonexistent/program";
    let pid = vfork_execve(missing, &[missing], &[])?;
    check_eq!(wait_for(pid)?.exit_code(), Some(127));
    Ok(())
}

fn execve_passes_args_and_env() -> TestResult {
    let path = own_path();
    let argv = [
        path.as_c_str(),
        c"--helper",
        c"echo_args",
        c"one",
        c"two words",
        c"",
    ];
    let (status, output) = run_capture(&path, &argv, &[c"A=1", c"FOO=bar baz"])?;
    check_eq!(status.exit_code(), Some(0));
    let want = format!("{}|one|two words||bar baz\n", path.to_str().unwrap());
    check_eq!(output, want);
    Ok(())
}

extern "C" fn ignore(_: i32, _: &SigInfo, _: &mut UContext) {}

fn execve_keeps_mask_and_ignored() -> TestResult {
    // Handlers cannot survive exec (their code is gone) and reset to the
    // default; ignored signals stay ignored, and the mask is kept.
    sigaction(SIGUSR1, Disposition::Handle(ignore), 0)?;
    sigaction(SIGUSR2, Disposition::Ignore, 0)?;
    rt_sigprocmask(SIG_BLOCK, Some(sigmask(SIGUSR1)))?;
    let (status, output) = run_helper("show_signals", &[])?;
    check_eq!(status.exit_code(), Some(0));
    check_eq!(
        output,
        format!("blocked=true usr1={SIG_DFL} usr2={SIG_IGN}\n")
    );
    Ok(())
}

/// execve's error for `path` (run in a child, in case it succeeds).
fn exec_error(path: &CStr) -> Result<Errno, Errno> {
    let status = in_child(|| execve(path, &[path], &[]).0)?;
    Ok(Errno(status.exit_code().unwrap_or(-1)))
}

fn execve_errors() -> TestResult {
    let scratch = Scratch::new()?;
    check_eq!(exec_error(&scratch.path("missing"))?, Errno::ENOENT);
    check_eq!(exec_error(scratch.dir())?, Errno::EACCES);
    let plain = scratch.path("plain");
    write_file(&plain, b"not executable")?;
    check_eq!(exec_error(&plain)?, Errno::EACCES);
    // Executable files that are not programs: garbage, and an ELF header
    // for a machine that is not aarch64 (e_machine 0x1234).
    let garbage = scratch.path("garbage");
    let mut elf = alloc::vec![0u8; 128];
    elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    elf[16] = 2; // ET_EXEC
    elf[18..20].copy_from_slice(&0x1234u16.to_le_bytes());
    let wrong_machine = scratch.path("wrong-machine");
    for (path, data) in [(&garbage, &[0x5au8; 200][..]), (&wrong_machine, &elf[..])] {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o755)?;
        write(fd, data)?;
        close(fd)?;
        check_eq!(exec_error(path)?, Errno::ENOEXEC);
    }
    let status = in_child(|| {
        // SAFETY: the kernel must refuse the bad path pointer.
        let ret = unsafe { ulib::syscall!(ulib::sys::__NR_execve, 0x10, 0, 0) };
        ret.err().map_or(0, |e| e.0)
    })?;
    check_eq!(Errno(status.exit_code().unwrap_or(-1)), Errno::EFAULT);
    Ok(())
}

fn ids_in_threads() -> TestResult {
    let pid = getpid();
    check_eq!(gettid(), pid);
    check!(getppid() > 0 && getppid() != pid);
    let thread = spawn(move || (getpid(), gettid(), getppid()))?;
    let tid = thread.tid();
    let (their_pid, their_tid, their_ppid) = thread.join().unwrap();
    check_eq!(their_pid, pid);
    check_eq!(their_tid, tid);
    check!(tid != pid);
    check_eq!(their_ppid, getppid());
    Ok(())
}

fn set_tid_address_returns_tid() -> TestResult {
    static WORD: AtomicU32 = AtomicU32::new(1);
    // SAFETY: WORD is static, so valid until this process exits.
    let tid = unsafe { set_tid_address(WORD.as_ptr() as *mut i32) };
    check_eq!(tid, gettid());
    // The kernel only writes the word when the thread exits.
    check_eq!(WORD.load(Ordering::Relaxed), 1);
    Ok(())
}

fn thread_exit_leaves_process() -> TestResult {
    let status = in_child(|| {
        let thread = spawn(|| -> u32 { exit(3) });
        match thread.map(|t| t.join()) {
            // The thread ended without returning, and this one runs on.
            Ok(None) => 0,
            _ => 1,
        }
    })?;
    check_eq!(status.exit_code(), Some(0));
    Ok(())
}

fn exit_group_from_thread() -> TestResult {
    let status = in_child(|| {
        let _ = spawn(|| {
            sleep(Duration::from_millis(10));
            exit_group(42)
        });
        // Would exit 1 if exit_group did not end this thread too.
        sleep(Duration::from_secs(5));
        1
    })?;
    check_eq!(status.exit_code(), Some(42));
    Ok(())
}
