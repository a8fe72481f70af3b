//! The /proc files read at a position on the live state rather than as text
//! made at open: a process's `pagemap`, `mem` and `syscall`, and the system's
//! `kpageflags` and `kpagecount` (Linux: `proc_pagemap_operations` in
//! `fs/proc/task_mmu.c`, `proc_mem_operations` in `fs/proc/base.c`, and
//! `fs/proc/page.c`). The memory side is `mm/pagemap.rs` and
//! `mm/remote.rs`.
//!
//! Where we simplify: the files reach the process's address space when
//! they are read, not the one it had when they were opened, so after an
//! exec an old descriptor sees the new program (Linux keeps the old `mm`).

use alloc::format;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use core::fmt::Write;

use crate::errno::{Errno, KResult};
use crate::fs::vfs::RawFile;
use crate::mm::mm_struct::Mm;
use crate::mm::pagemap::{self, PerFrame, ENTRY_BYTES};
use crate::mm::remote::{access_remote_vm, RemoteBuf};
use crate::task::process::Process;

/// Reads 64-bit entries from entry `offset / 8` on into `buf`, `fill`
/// making them a chunk at a time (it returns how many it made, fewer at
/// the end of the file); EINVAL unless offset and length are whole entries
/// (Linux: the `PM_ENTRY_BYTES` and `KPMMASK` checks).
fn read_entries(
    offset: u64,
    buf: &mut [u8],
    mut fill: impl FnMut(u64, &mut [u64]) -> usize,
) -> KResult<usize> {
    if !offset.is_multiple_of(ENTRY_BYTES as u64) || !buf.len().is_multiple_of(ENTRY_BYTES) {
        return Err(Errno::EINVAL);
    }
    let mut chunk = [0u64; 64];
    let mut done = 0;
    while done < buf.len() {
        let want = ((buf.len() - done) / ENTRY_BYTES).min(chunk.len());
        let first = offset / ENTRY_BYTES as u64 + (done / ENTRY_BYTES) as u64;
        let n = fill(first, &mut chunk[..want]);
        for (out, entry) in buf[done..].chunks_exact_mut(ENTRY_BYTES).zip(&chunk[..n]) {
            out.copy_from_slice(&entry.to_ne_bytes());
        }
        done += n * ENTRY_BYTES;
        if n < want {
            break;
        }
    }
    Ok(done)
}

/// `/proc/PID/pagemap`: an entry per virtual page (Linux: `pagemap_read`).
pub struct Pagemap(pub Weak<Process>);

impl Pagemap {
    /// The address space read; none once the process has gone or exited.
    fn mm(&self) -> Option<Arc<Mm>> {
        self.0.upgrade()?.mm()
    }
}

impl RawFile for Pagemap {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> KResult<usize> {
        let mm = self.mm();
        read_entries(offset, buf, |vpfn, out| {
            mm.as_ref()
                .map_or(0, |mm| pagemap::pagemap_read(mm, vpfn, out))
        })
    }
}

/// `/proc/kpageflags` or `/proc/kpagecount`: an entry per physical frame.
pub struct Kpage(pub PerFrame);

impl RawFile for Kpage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> KResult<usize> {
        read_entries(offset, buf, |pfn, out| {
            pagemap::kpage_read(self.0, pfn, out)
        })
    }
}

/// `/proc/PID/syscall`: the system call the process's first thread is in,
/// its number, six arguments, stack pointer and pc, made when read, so a
/// thread reading its own shows that read (Linux: `proc_pid_syscall`,
/// `task_current_syscall`); `running` for a thread on a CPU. Where we
/// simplify: a sleeping thread is taken to sleep in a system call (faultline's
/// threads also sleep in a page fault short of memory, rarely).
pub struct Syscall(pub Weak<Process>);

impl RawFile for Syscall {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> KResult<usize> {
        use crate::task::thread::State;
        let Some(p) = self.0.upgrade() else {
            return Ok(0);
        };
        let threads = p.live_threads();
        let Some(t) = threads.first() else {
            return Ok(0);
        };
        let current = Arc::ptr_eq(t, &crate::task::current());
        let text = if !current && t.state() != State::Blocked {
            String::from("running\n")
        } else {
            // The thread is in the kernel: the reader itself, or asleep.
            let tf = t.saved_user_regs();
            let mut s = format!("{}", tf.syscall_nr());
            for i in 0..6 {
                let _ = write!(s, " {:#x}", tf.arg(i));
            }
            let _ = writeln!(s, " {:#x} {:#x}", tf.sp(), tf.pc());
            s
        };
        let text = text.as_bytes();
        let start = (offset as usize).min(text.len());
        let n = buf.len().min(text.len() - start);
        buf[..n].copy_from_slice(&text[start..start + n]);
        Ok(n)
    }
}

/// `/proc/PID/mem`: the process's memory at the file position's address,
/// read and written as a debugger does, past the mappings' protection
/// (Linux: `mem_rw` with `FOLL_FORCE`). EIO where nothing at all could be
/// copied (an unmapped address); 0 once the process has no address space.
pub struct Mem(pub Weak<Process>);

impl Mem {
    /// Copies with the address space, if any; EIO if not a byte went.
    fn rw(&self, offset: u64, buf: RemoteBuf) -> KResult<usize> {
        let Some(mm) = self.0.upgrade().and_then(|p| p.mm()) else {
            return Ok(0);
        };
        let want = buf.len();
        let addr = usize::try_from(offset).map_err(|_| Errno::EIO)?;
        match access_remote_vm(&mm, addr, buf, true) {
            0 if want > 0 => Err(Errno::EIO),
            n => Ok(n),
        }
    }
}

impl RawFile for Mem {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> KResult<usize> {
        self.rw(offset, RemoteBuf::Read(buf))
    }

    fn is_writable(&self) -> bool {
        true
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> KResult<usize> {
        self.rw(offset, RemoteBuf::Write(data))
    }
}
