//! The user page tables as text, for `/proc/PID/ptdump` (Linux:
//! `mm/ptdump.c` and `arch/arm64/mm/ptdump.c`, which dump the kernel's
//! tables through debugfs; faultline dumps a process's user tables, where
//! the fault path's work shows).

use alloc::string::String;
use core::fmt::Write;

use crate::arch::desc::Pte;
use crate::mm::addr::USER_TOP;
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Level};

/// The user page tables of `mm` as text, one line per run of entries that
/// map consecutive frames with the same attributes (faultline's
/// `/proc/self/ptdump`):
/// `start-end level pa=... perms [cont] [young] [dirty]`.
pub fn ptdump(mm: &Mm) -> String {
    let mut out = String::new();
    let mut run: Option<(usize, usize, Level, u64, Pte)> = None;
    let flush = |out: &mut String, run: &(usize, usize, Level, u64, Pte)| {
        let (start, end, level, pa, pte) = *run;
        let prot = pte.prot();
        let level = match level {
            Level::Pmd => "PMD",
            Level::Pud => "PUD",
            _ => "PTE",
        };
        let _ = writeln!(
            out,
            "{:012x}-{:012x} {} pa={:x} {}{}{} user{}{}{}",
            start,
            end,
            level,
            pa,
            if prot.is_user_readable() { 'r' } else { '-' },
            if prot.is_user_writable() { 'w' } else { '-' },
            if prot.is_user_exec() { 'x' } else { '-' },
            if pte.is_contiguous() { " cont" } else { "" },
            if pte.is_young() { " young" } else { "" },
            if pte.is_dirty() { " dirty" } else { "" },
        );
    };
    let _ptl = mm.page_table_lock.lock();
    pgtable::for_each_leaf(&mm, mm.pgd, 0, USER_TOP, &mut |va, level, pte| {
        let size = level.size();
        let extends = matches!(&run, Some((s, end, l, pa, p)) if *end == va && *l == level
            && p.prot() == pte.prot() && pa + (*end - *s) as u64 == pte.addr().0);
        if extends {
            if let Some(r) = &mut run {
                r.1 += size;
            }
        } else {
            if let Some(r) = &run {
                flush(&mut out, r);
            }
            run = Some((va, va + size, level, pte.addr().0, pte));
        }
    });
    if let Some(r) = &run {
        flush(&mut out, r);
    }
    out
}
