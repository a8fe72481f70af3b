//! How memory is mapped, folio by folio: the summary Linux's
//! `tools/mm/thpmaps --rollup --cont 64K --inc-empty` prints, which seed
//! 004's table of file memory by folio size comes from. thpmaps works it
//! out in user space from `/proc/PID/pagemap` and `/proc/kpageflags`;
//! faultline reads its own page tables, so the contiguous line counts
//! entries that really have the contiguous bit (thpmaps counts blocks that
//! could have it).
//!
//! - `/proc/PID/thpmaps`: one process's address space now;
//! - `/proc/thpmaps`: every address space as it was when torn down (at
//!   exit, or at exec for the old one) while `/sys/kernel/mm/thpmaps/exited`
//!   is 1, summed, so a benchmark reads it before and after a workload of
//!   short-lived processes and takes the difference.
//!
//! A run of entries mapping one large folio (order 2 and up) page after
//! page is the folio `aligned` if it maps all of it at a virtual address
//! aligned to its size, `unaligned` if all of it elsewhere, `partial`
//! otherwise; a PMD block is `pmd-aligned`; runs end at VMA boundaries,
//! as thpmaps walks VMA by VMA. Each file starts with the totals the
//! percentages are of, `anon-rss` and `file-rss` (faultline's own lines;
//! thpmaps takes them from smaps). Files are page cache here, as thpmaps
//! counts them (tmpfs included). The `text-` lines are faultline's too:
//! the file memory of executable mappings alone, which seed 004 is about.

use alloc::string::String;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::mm::addr::{PAGE_SIZE, PMD_SIZE};
use crate::mm::folio::{is_zero_pfn, Folio};
use crate::mm::mm_struct::Mm;
use crate::mm::smaps::for_each_mapping;
use crate::mm::vma::VM_EXEC;

/// The largest folio order reported (2M).
const PMD_ORDER: usize = 9;
/// The contiguous block the `cont` line is about (arm64's 16 x 4K).
const CONT_KB: usize = 64;

/// Bytes by how they are mapped, for anonymous or file memory.
#[derive(Default, Clone, Copy)]
struct Kind {
    /// Bytes mapped in all (`anon-rss`, `file-rss`, `text-rss`): what the
    /// percentages are of.
    rss: u64,
    /// Bytes mapped by PMD blocks (`*-thp-pmd-aligned-2048kB`).
    pmd: u64,
    /// By order: bytes of folios mapped whole, page by page, at a virtual
    /// address aligned to their size (`*-thp-pte-aligned-<N>kB`).
    aligned: [u64; PMD_ORDER + 1],
    /// By order: bytes of folios mapped whole, page by page, at an address not
    /// aligned to their size (`*-thp-pte-unaligned-<N>kB`).
    unaligned: [u64; PMD_ORDER + 1],
    /// Bytes of large folios only partly mapped in a run (`*-thp-pte-partial`).
    partial: u64,
    /// Bytes mapped by contiguous-bit entries (`*-cont-pte-aligned-64kB`).
    cont: u64,
}

/// One address space's summary, or a sum of them.
#[derive(Default, Clone, Copy)]
pub struct Summary {
    /// Anonymous memory (`anon-` lines).
    anon: Kind,
    /// Page-cache memory, tmpfs included (`file-` lines).
    file: Kind,
    /// The part of `file` in executable mappings.
    text: Kind,
}

impl Summary {
    /// The kinds a mapping of anonymous memory, or of a file in an
    /// executable mapping or not, counts in.
    fn kinds(&mut self, anon: bool, exec: bool) -> impl Iterator<Item = &mut Kind> {
        let (first, text) = match anon {
            true => (&mut self.anon, None),
            false => (&mut self.file, exec.then_some(&mut self.text)),
        };
        core::iter::once(first).chain(text)
    }
}

/// Entries mapping one folio page after page, in address order.
struct Run {
    /// The folio's head frame: a run continues only within one folio.
    head_pfn: usize,
    /// The folio's order: how many pages mapping it whole takes.
    order: u8,
    /// Whether the folio is anonymous: which `Kind`s the run counts in.
    anon: bool,
    /// Whether the VMA is executable: a file run also counts in `text`.
    exec: bool,
    /// Address and page of the folio of the first entry.
    start_va: usize,
    /// The page of the folio the run's first entry maps.
    first_page: usize,
    /// Entries (pages) in the run so far.
    pages: usize,
}

impl Summary {
    /// The summary of `mm` now (under its locks).
    pub fn of(mm: &Mm) -> Summary {
        let map = mm.mmap_lock_readonly();
        let _ptl = mm.page_table_lock.lock();
        let mut s = Summary::default();
        for (start, end, vma) in map.vmas.iter() {
            s.add_vma(mm, start, end, vma.flags & VM_EXEC != 0);
        }
        s
    }

    /// Counts the entries of `[start, end)`, one VMA.
    fn add_vma(&mut self, mm: &Mm, start: usize, end: usize, exec: bool) {
        let mut run: Option<Run> = None;
        for_each_mapping(mm, start, end, &mut |va, pte, bytes| {
            if is_zero_pfn(pte.addr().pfn()) {
                return; // no one's memory
            }
            // SAFETY: for_each_mapping's entries are read under their locks.
            let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
            let anon = folio.is_anon();
            for k in self.kinds(anon, exec) {
                k.rss += bytes as u64;
                if bytes == PMD_SIZE {
                    k.pmd += bytes as u64;
                } else if pte.is_contiguous() {
                    k.cont += bytes as u64;
                }
            }
            if bytes == PMD_SIZE || folio.order() < 2 {
                return;
            }
            let page = pte.addr().pfn() - folio.pfn();
            let continues = run.as_ref().is_some_and(|r| {
                r.head_pfn == folio.pfn()
                    && va == r.start_va + r.pages * PAGE_SIZE
                    && page == r.first_page + r.pages
            });
            if continues {
                if let Some(r) = run.as_mut() {
                    r.pages += 1;
                }
                return;
            }
            if let Some(done) = run.take() {
                self.close(done);
            }
            run = Some(Run {
                head_pfn: folio.pfn(),
                order: folio.order(),
                anon,
                exec,
                start_va: va,
                first_page: page,
                pages: 1,
            });
        });
        if let Some(done) = run {
            self.close(done);
        }
    }

    /// Counts a finished run.
    fn close(&mut self, r: Run) {
        let nr = 1usize << r.order;
        let bytes = (r.pages * PAGE_SIZE) as u64;
        for k in self.kinds(r.anon, r.exec) {
            if r.first_page != 0 || r.pages != nr {
                k.partial += bytes;
            } else if r.start_va.is_multiple_of(nr * PAGE_SIZE) {
                k.aligned[r.order as usize] += bytes;
            } else {
                k.unaligned[r.order as usize] += bytes;
            }
        }
    }

    /// thpmaps' rollup lines (`label: value kB (percent)`), after the two
    /// totals.
    pub fn show(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, label: &str, bytes: u64, total: Option<u64>| {
            let kb = bytes / 1024;
            let pad = 32usize.saturating_sub(label.len() + 1);
            let _ = write!(out, "{label}:{:pad$}{kb:8} kB", "");
            if let Some(total) = total.filter(|&t| t > 0) {
                let _ = write!(out, " ({:3}%)", (bytes * 100 + total / 2) / total);
            }
            out.push('\n');
        };
        line(&mut out, "anon-rss", self.anon.rss, None);
        line(&mut out, "file-rss", self.file.rss, None);
        line(&mut out, "text-rss", self.text.rss, None);
        let kinds = [
            ("anon", &self.anon),
            ("file", &self.file),
            ("text", &self.text),
        ];
        let pmd_kb = (PMD_SIZE / 1024) as u64;
        for (name, k) in kinds {
            let label = alloc::format!("{name}-thp-pmd-aligned-{pmd_kb}kB");
            line(&mut out, &label, k.pmd, Some(k.rss));
        }
        for (name, k) in kinds {
            for (what, by_order) in [("aligned", &k.aligned), ("unaligned", &k.unaligned)] {
                for (order, &bytes) in by_order.iter().enumerate().skip(2) {
                    let kb = (PAGE_SIZE << order) / 1024;
                    let label = alloc::format!("{name}-thp-pte-{what}-{kb}kB");
                    line(&mut out, &label, bytes, Some(k.rss));
                }
            }
            let label = alloc::format!("{name}-thp-pte-partial");
            line(&mut out, &label, k.partial, Some(k.rss));
        }
        for (name, k) in kinds {
            let label = alloc::format!("{name}-cont-pte-aligned-{CONT_KB}kB");
            line(&mut out, &label, k.cont, Some(k.rss));
        }
        out
    }
}

/// How many numbers a `Summary` holds, in its order (anon, file, text;
/// rss, pmd, partial, cont, and one aligned and one unaligned count per
/// order).
const FIELDS: usize = 3 * (4 + 2 * (PMD_ORDER + 1));
/// The `/proc/thpmaps` totals, one counter per field in `FIELDS`' order,
/// added to by `account_exit`.
static EXITED: [AtomicU64; FIELDS] = [const { AtomicU64::new(0) }; FIELDS];

/// A `Kind`'s counters in `EXITED`'s order: rss, pmd, partial, cont, then
/// aligned and unaligned by order.
fn fields(k: &mut Kind) -> impl Iterator<Item = &mut u64> {
    [&mut k.rss, &mut k.pmd, &mut k.partial, &mut k.cont]
        .into_iter()
        .chain(k.aligned.iter_mut())
        .chain(k.unaligned.iter_mut())
}

/// Does `/proc/thpmaps` add up each address space as it is torn down
/// (`/sys/kernel/mm/thpmaps/exited`)? Off unless asked for: the summary
/// walks every entry of the dying address space, as much again as tearing
/// it down, which no exit or exec should pay for a measurement nobody
/// takes. seed004 turns it on for the run it takes its shares from, and
/// off for the ones it times.
pub static COUNT_EXITED: AtomicBool = AtomicBool::new(false);

/// Adds `mm`, about to be torn down, to `/proc/thpmaps`, if it is counting.
pub fn account_exit(mm: &Mm) {
    if !COUNT_EXITED.load(Ordering::Relaxed) {
        return;
    }
    let mut s = Summary::of(mm);
    let all = fields(&mut s.anon)
        .chain(fields(&mut s.file))
        .chain(fields(&mut s.text));
    for (total, &mut value) in EXITED.iter().zip(all) {
        if value != 0 {
            total.fetch_add(value, Ordering::Relaxed);
        }
    }
}

/// `/proc/thpmaps`.
pub fn exited() -> String {
    let mut s = Summary::default();
    let all = fields(&mut s.anon)
        .chain(fields(&mut s.file))
        .chain(fields(&mut s.text));
    for (total, value) in EXITED.iter().zip(all) {
        *value = total.load(Ordering::Relaxed);
    }
    s.show()
}
