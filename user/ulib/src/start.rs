//! Process entry. The kernel starts a program at `_start` with sp pointing
//! at the initial stack it built (Linux's `create_elf_tables`):
//!
//! ```text
//! sp -> argc
//!       argv[0] .. argv[argc - 1], NULL
//!       envp[0] .. envp[n - 1], NULL
//!       auxv: (AT_* key, value) pairs, ending with (AT_NULL, 0)
//! ```
//!
//! No register but sp is defined at entry. `_start` hands sp to Rust, which
//! records where the three arrays are, calls the program's `main` (named with
//! [`entry!`](crate::entry!)) and ends the process with its return value.

use crate::process::exit_group;
use core::ffi::{c_char, CStr};
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

// uapi's values, typed as this API takes them.
pub const AT_NULL: usize = uapi::auxvec::AT_NULL as usize;
pub const AT_PHDR: usize = uapi::auxvec::AT_PHDR as usize;
pub const AT_PHENT: usize = uapi::auxvec::AT_PHENT as usize;
pub const AT_PHNUM: usize = uapi::auxvec::AT_PHNUM as usize;
pub const AT_PAGESZ: usize = uapi::auxvec::AT_PAGESZ as usize;
pub const AT_ENTRY: usize = uapi::auxvec::AT_ENTRY as usize;
pub const AT_UID: usize = uapi::auxvec::AT_UID as usize;
pub const AT_RANDOM: usize = uapi::auxvec::AT_RANDOM as usize;
pub const AT_SYSINFO_EHDR: usize = uapi::auxvec::AT_SYSINFO_EHDR as usize;

/// The initial stack pointer, as `_start` found it.
static INITIAL_SP: AtomicUsize = AtomicUsize::new(0);
static ARGC: AtomicUsize = AtomicUsize::new(0);
static ARGV: AtomicPtr<*const c_char> = AtomicPtr::new(core::ptr::null_mut());
static ENVP: AtomicPtr<*const c_char> = AtomicPtr::new(core::ptr::null_mut());
static AUXV: AtomicPtr<usize> = AtomicPtr::new(core::ptr::null_mut());

core::arch::global_asm!(
    ".globl _start",
    ".type _start, %function",
    "_start:",
    // Zero fp and lr so a stack walk stops here.
    "mov x29, xzr",
    "mov x30, xzr",
    "mov x0, sp",
    "bl {start}",
    start = sym start_rust,
);

extern "Rust" {
    /// The program's main, defined by `entry!`.
    fn __ulib_main(args: Args) -> i32;
}

/// Records the layout of the initial stack, then runs `main`.
///
/// # Safety
/// `sp` must be the stack pointer the kernel started the process with.
unsafe extern "C" fn start_rust(sp: *const usize) -> ! {
    // The reads below follow the layout in the module documentation, which
    // the kernel guarantees.
    let argc = *sp;
    let argv = sp.add(1) as *mut *const c_char;
    let envp = argv.add(argc + 1);
    let mut end = envp;
    while !(*end).is_null() {
        end = end.add(1);
    }
    INITIAL_SP.store(sp as usize, Ordering::Relaxed);
    ARGC.store(argc, Ordering::Relaxed);
    ARGV.store(argv, Ordering::Relaxed);
    ENVP.store(envp, Ordering::Relaxed);
    AUXV.store(end.add(1) as *mut usize, Ordering::Relaxed);
    // entry! defines __ulib_main with exactly this signature.
    exit_group(__ulib_main(args()))
}

/// Names the function that runs as the program's main:
/// `ulib::entry!(main);` with `fn main(args: ulib::Args) -> i32`. The
/// process exits with the value it returns.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[no_mangle]
        fn __ulib_main(args: $crate::Args) -> i32 {
            $main(args)
        }
    };
}

/// The command-line arguments, argv[0] first. An argument that is not UTF-8
/// reads as "\u{FFFD}".
#[derive(Clone)]
pub struct Args {
    next: usize,
    end: usize,
}

impl Iterator for Args {
    type Item = &'static str;

    fn next(&mut self) -> Option<&'static str> {
        if self.next == self.end {
            return None;
        }
        // SAFETY: next < argc, and the kernel put argc pointers to
        // NUL-terminated strings at argv.
        let arg = unsafe { CStr::from_ptr(*ARGV.load(Ordering::Relaxed).add(self.next)) };
        self.next += 1;
        Some(arg.to_str().unwrap_or("\u{FFFD}"))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.next, Some(self.end - self.next))
    }
}

impl ExactSizeIterator for Args {}

/// The arguments the program was started with.
pub fn args() -> Args {
    Args {
        next: 0,
        end: ARGC.load(Ordering::Relaxed),
    }
}

/// The environment as `NAME=value` C strings.
pub fn environ() -> impl Iterator<Item = &'static CStr> {
    let envp = ENVP.load(Ordering::Relaxed);
    let mut i = 0;
    core::iter::from_fn(move || {
        if envp.is_null() {
            return None;
        }
        // SAFETY: envp is the NULL-terminated array the kernel built; `i`
        // never passes the NULL.
        let entry = unsafe { *envp.add(i) };
        if entry.is_null() {
            return None;
        }
        i += 1;
        // SAFETY: a non-NULL envp entry points at a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(entry) })
    })
}

/// The value of environment variable `name`, if set and UTF-8.
pub fn env(name: &str) -> Option<&'static str> {
    environ().find_map(|entry| {
        let entry = entry.to_str().ok()?;
        let (key, value) = entry.split_once('=')?;
        (key == name).then_some(value)
    })
}

/// The value of auxiliary vector entry `key` (`AT_PAGESZ`, ...), if present.
pub fn auxv(key: usize) -> Option<usize> {
    let mut entry = AUXV.load(Ordering::Relaxed) as *const usize;
    if entry.is_null() {
        return None;
    }
    loop {
        // SAFETY: the auxv is a list of (key, value) pairs that ends with
        // AT_NULL, and the loop stops there.
        let (k, v) = unsafe { (*entry, *entry.add(1)) };
        if k == AT_NULL {
            return None;
        }
        if k == key {
            return Some(v);
        }
        // SAFETY: this pair was not AT_NULL, so another follows.
        entry = unsafe { entry.add(2) };
    }
}

/// The stack pointer the kernel started the process with.
pub fn initial_sp() -> usize {
    INITIAL_SP.load(Ordering::Relaxed)
}
