//! faultline's pure logic, compiled for the host so `cargo test` can check it.
//!
//! Nothing lives here: every module below is a file of the kernel itself,
//! pulled in with `#[path]` at the same module path it has in the kernel, so
//! `crate::mm::addr` means the same thing in both builds. A file belongs in
//! this list only if it touches no hardware: no system registers, no
//! instructions, no MMIO (those stay under `kernel/src/arch/aarch64/`).
#![no_std]

extern crate alloc;

#[cfg(test)]
extern crate std;

#[path = "../../src/mm"]
pub mod mm {
    pub mod addr;
    pub mod buddy;
    pub mod fault_range;
    pub mod folio_index;
    pub mod truncate;
    pub mod huge_memory {
        pub mod anon;
        pub mod knobs;
        pub mod order;
        pub mod settings;
    }
    pub mod page;
    pub mod page_flags;
    pub mod pgtable;
    pub mod pmd_cache;
    pub mod slab;
    pub mod vma_tree;
}

#[path = "../../src/arch"]
pub mod arch {
    pub use self::aarch64::*;
    pub mod aarch64 {
        pub mod contpte;
        pub mod desc;
        pub mod esr;
        pub mod tlbi_range;
    }
}

#[path = "../../src/task"]
pub mod task {
    pub mod binfmt_script;
    pub mod cred;
    pub mod elf;
    pub mod sched_policy;
    pub mod signal_abi;
    pub mod stack;
}

#[path = "../../src/syscall"]
pub mod syscall {
    pub mod strace;
}

#[path = "../../src/cmdline.rs"]
pub mod cmdline;

#[path = "../../src/config.rs"]
pub mod config;

#[path = "../../src/ustr.rs"]
pub mod ustr;

#[path = "../../src/errno.rs"]
pub mod errno;

#[path = "../../src/dtb/mod.rs"]
pub mod dtb;

#[path = "../../src/fs"]
pub mod fs {
    pub mod cpio;
    pub mod procfs {
        pub mod options;
    }
    pub mod rtc {
        pub mod lib;
    }
    pub mod tty {
        pub mod n_tty;
    }
    pub mod tmpfs {
        pub mod huge;
    }
    pub mod vfs {
        pub mod permission;
    }
}
