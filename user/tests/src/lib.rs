//! Helpers shared by the test programs in `src/bin/`: probing memory for
//! faults, running code in a child process, exec'ing the test's own binary,
//! and small file utilities.
#![no_std]

extern crate alloc;

use alloc::ffi::CString;
use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::CStr;
use core::ptr::{read_volatile, write_volatile};
use ulib::fs::*;
use ulib::process::*;
use ulib::signal::{catch_fault, Fault};
use ulib::test::{TestError, TestResult};
use ulib::Errno;

/// Reads the byte at `addr`, or reports the fault that reading raised.
pub fn try_read(addr: usize) -> Result<u8, Fault> {
    // SAFETY: the closure owns nothing, and a fault only abandons it.
    unsafe { catch_fault(|| read_volatile(addr as *const u8)) }
}

/// Writes `value` at `addr`, or reports the fault that writing raised.
pub fn try_write(addr: usize, value: u8) -> Result<(), Fault> {
    // SAFETY: as for try_read; tests only write to memory they mapped for
    // the purpose, or that must fault.
    unsafe { catch_fault(|| write_volatile(addr as *mut u8, value)) }
}

/// Runs `f` in a forked child, which exits with what `f` returns, and
/// returns how the child ended.
pub fn in_child(f: impl FnOnce() -> i32) -> Result<WaitStatus, Errno> {
    match fork()? {
        0 => exit_group(f()),
        pid => wait_for(pid),
    }
}

/// The path this program was started with (argv[0]), to exec it again.
pub fn own_path() -> CString {
    CString::new(ulib::args().next().unwrap_or("")).unwrap()
}

/// Runs `path` with `argv` and `envp` in a child whose stdout is a pipe;
/// returns its wait status and what it printed.
pub fn run_capture(
    path: &CStr,
    argv: &[&CStr],
    envp: &[&CStr],
) -> Result<(WaitStatus, String), Errno> {
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        let _ = dup3(wr, 1, 0);
        execve(path, argv, envp);
        exit_group(127);
    }
    close(wr)?;
    let output = read_to_end(rd);
    close(rd)?;
    Ok((wait_for(pid)?, String::from_utf8_lossy(&output?).into()))
}

/// `own_path() --helper NAME ARGS...` with an empty environment, captured.
pub fn run_helper(name: &str, args: &[&str]) -> Result<(WaitStatus, String), Errno> {
    let path = own_path();
    let mut argv = Vec::from([path.clone(), CString::from(c"--helper")]);
    argv.push(CString::new(name).unwrap());
    argv.extend(args.iter().map(|a| CString::new(*a).unwrap()));
    let argv: Vec<&CStr> = argv.iter().map(|a| a.as_c_str()).collect();
    run_capture(&path, &argv, &[])
}

/// Reads from `fd` until end of file.
pub fn read_to_end(fd: i32) -> Result<Vec<u8>, Errno> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match read(fd, &mut buf) {
            Ok(0) => return Ok(data),
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
}

/// Creates (or truncates) `path` with mode 0644 and writes `data` to it.
pub fn write_file(path: &CStr, data: &[u8]) -> Result<(), Errno> {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)?;
    let written = write(fd, data);
    close(fd)?;
    match written? {
        n if n == data.len() => Ok(()),
        _ => Err(Errno::EIO),
    }
}

/// The whole contents of `path`.
pub fn read_file(path: &CStr) -> Result<Vec<u8>, Errno> {
    let fd = open(path, O_RDONLY | O_CLOEXEC, 0)?;
    let data = read_to_end(fd);
    close(fd)?;
    data
}

/// The value of `key` in `/proc/vmstat`.
pub fn vmstat(key: &str) -> Result<u64, Errno> {
    Ok(vmstats(&[key])?[0])
}

/// The values of `keys` in `/proc/vmstat`, from one read of it.
pub fn vmstats(keys: &[&str]) -> Result<Vec<u64>, Errno> {
    let text = read_file(c"/proc/vmstat")?;
    let text = core::str::from_utf8(&text).map_err(|_| Errno::EIO)?;
    keys.iter()
        .map(|key| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
                .ok_or(Errno::ENOENT)
        })
        .collect()
}

/// A byte pattern that differs from page to page and from byte to byte.
pub fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 12)) as u8
}

/// Runs `child` in new child processes (each must exit 0) and checks that
/// one gives back every page table and frame it used. The kernel keeps
/// some memory it grew for earlier children (its heap, structures made
/// lazily), and frees a dead thread's stack only once that thread's CPU has
/// switched away: so children run until one leaves the counts as it found
/// them, and then two more must too. faultline only.
pub fn children_give_back_memory(child: impl Fn() -> i32) -> TestResult {
    let settled = || -> Result<Vec<u64>, TestError> {
        let status = in_child(&child)?;
        if status.exit_code() != Some(0) {
            return Err(TestError::Failed(alloc::format!("child ended {status:?}")));
        }
        ulib::time::sleep(core::time::Duration::from_millis(20));
        Ok(vmstats(&["nr_page_table_pages", "nr_free_pages"])?)
    };
    let mut before = settled()?;
    for _ in 0..6 {
        let now = settled()?;
        if now == before {
            break;
        }
        before = now;
    }
    for _ in 0..2 {
        let after = settled()?;
        if after[0] != before[0] || after[1] < before[1] {
            let why = alloc::format!("page tables, free frames: {before:?} -> {after:?}");
            return Err(TestError::Failed(why));
        }
    }
    Ok(())
}
