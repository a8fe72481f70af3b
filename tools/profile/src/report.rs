//! From counts to the report: every counted kernel pc gets its full stack
//! of function names (the shadow stack's call sites and the pc, each with
//! its inline frames), and from those the per-class, per-bucket, exclusive
//! (self) and inclusive counts, per iteration; and the folded stacks that
//! flamegraph.pl reads.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::hash::Hash;

use crate::symbols::{short, Symbols};
use crate::trace::{Frame, Profile, Window, KERNEL_BASE, USER_CLASS};

/// The areas of the kernel the report sums instructions by: an instruction
/// lands in the first bucket one of whose patterns its innermost function
/// name contains; if none matches, the next function out is tried, and so
/// on; `other` if no frame matches.
const BUCKETS: &[(&str, &[&str])] = &[
    (
        "spinlock/irqsave",
        &["sync::spinlock", "spin::mutex", "local_irq", "spin::relax"],
    ),
    (
        "mutex (mmap_lock)",
        &["sync::mutex", "WaitQueue", "wait_until", "wake_all"],
    ),
    (
        "TLB flush/barriers",
        &["flush_tlb", "publish_table_writes", "mmu::"],
    ),
    (
        "heap alloc/free",
        &[
            "__rust_alloc",
            "__rust_dealloc",
            "__rust_realloc",
            "heap::",
            "RawVec",
            "raw_vec",
            "alloc::alloc",
            "GlobalAlloc",
            "linked_list",
            "talc",
            "buddy_system_allocator",
            "Heap",
        ],
    ),
    ("folio ref/mapcount", &["folio::"]),
    ("contpte/set_ptes", &["contpte::", "set_pte_range"]),
    ("page-table walk", &["pgtable::"]),
    (
        "page-cache lookup",
        &["filemap::", "folio_index", "fault_folio", "file_folio"],
    ),
    ("vma lookup", &["vma_tree::", "VmaTree", "vma_lock::"]),
    (
        "vmstat/rusage counters",
        &["vmstat", "count_minor_fault", "rusage"],
    ),
    ("zap_range", &["zap_range", "flush_user_range"]),
    (
        "fault logic",
        &["mm::fault::", "fault_range::", "aarch64::fault::"],
    ),
    ("madvise/mmap logic", &["mm::mmap::"]),
    ("clock", &["clock", "timer", "time::"]),
    ("signals/exit_to_user", &["exit_to_user", "signal::"]),
    (
        "current task/mm",
        &[
            "current_mm",
            "current_ref",
            "current_process",
            "sched::current",
            "percpu",
            "cpu_id",
        ],
    ),
    ("syscall dispatch", &["syscall::"]),
    (
        "trap entry/exit (asm+rust)",
        &[
            "exception_vectors",
            "ret_from_exception",
            "handle_el0",
            "handle_el1",
            "trap::",
        ],
    ),
];

/// The bucket of an instruction whose stack is `names`, outermost first.
pub fn bucket(names: &[String]) -> &'static str {
    for name in names.iter().rev() {
        for (bucket, patterns) in BUCKETS {
            if patterns.iter().any(|p| name.contains(p)) {
                return bucket;
            }
        }
    }
    "other"
}

/// How many of each entry to list in the per-class sections.
const ENTRY_SIZES_SHOWN: usize = 6;
/// How many span lengths to list.
const SPANS_SHOWN: usize = 8;

/// What to print, and how much of it.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The iteration and span system calls, as traced.
    pub window: Window,
    /// How many functions each top list shows.
    pub top: usize,
}

/// The finished report.
#[derive(Debug, PartialEq, Eq)]
pub enum Report {
    /// Fewer than two iteration boundaries were seen: only this line.
    NoIteration(String),
    /// The report's text, the folded stacks ("class;f1;f2;... count",
    /// largest first) and the kernel instructions by pc ("class;pc
    /// count"), summed over all the iterations.
    Done {
        /// The report, one line per line, without a final newline.
        text: String,
        /// flamegraph.pl's input, one stack per line.
        folded: String,
        /// Counts by instruction, to read beside `objdump -d`.
        pcs: String,
    },
}

/// The entries of `map`, largest count first (ties by key, so the report
/// is the same from run to run).
fn most_common<K: Ord + Clone>(map: &HashMap<K, u64>) -> Vec<(K, u64)> {
    let mut entries: Vec<_> = map.iter().map(|(k, v)| (k.clone(), *v)).collect();
    entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    entries
}

/// Adds `n` to `key`'s count.
fn bump<K: Hash + Eq>(map: &mut HashMap<K, u64>, key: K, n: u64) {
    *map.entry(key).or_default() += n;
}

/// Names each counted pc through `symbols` and writes the report.
pub fn report(profile: &Profile, symbols: &dyn Symbols, settings: Settings) -> Report {
    let window = settings.window;
    if profile.iterations <= 0 {
        return Report::NoIteration(format!(
            "profile: syscall {} seen {} times: no whole iteration ({} instructions traced)",
            window.iter_syscall,
            profile.iterations + 1,
            profile.instructions
        ));
    }
    let n = profile.iterations as f64;

    // Each distinct kernel pc's functions, innermost first, looked up once.
    let mut pcs = HashSet::new();
    for &(_, stack, pc) in profile.total.insns.keys() {
        if pc >= KERNEL_BASE {
            pcs.insert(pc);
            for frame in &profile.stacks[stack] {
                if let Frame::Call(site) = frame {
                    pcs.insert(*site);
                }
            }
        }
    }
    let chains: HashMap<u64, Vec<String>> = pcs
        .into_iter()
        .map(|pc| {
            let mut chain: Vec<String> = symbols
                .inline_frames(pc)
                .iter()
                .filter(|name| *name != "??")
                .map(|name| short(name))
                .collect();
            if chain.is_empty() {
                chain.push(short(
                    &symbols.kernel_symbol(pc).unwrap_or_else(|| "??".into()),
                ));
            }
            (pc, chain)
        })
        .collect();
    // The whole stack of an instruction, outermost first.
    let full_stack = |stack: &[Frame], pc: u64| -> Vec<String> {
        let mut names = Vec::new();
        for frame in stack {
            match frame {
                Frame::Exception(_) => names.push("<exception>".to_owned()),
                Frame::Call(site) => names.extend(chains[site].iter().rev().cloned()),
            }
        }
        names.extend(chains[&pc].iter().rev().cloned());
        names
    };

    let class_name = |id: usize| profile.classes[id].as_str();
    let mut class_total: HashMap<&str, u64> = HashMap::new();
    let mut exclusive: HashMap<&str, HashMap<String, u64>> = HashMap::new();
    let mut inclusive: HashMap<&str, HashMap<String, u64>> = HashMap::new();
    let mut buckets: HashMap<&str, HashMap<&str, u64>> = HashMap::new();
    let mut all_exclusive: HashMap<String, u64> = HashMap::new();
    let mut symbol_exclusive: HashMap<String, u64> = HashMap::new();
    let mut folded: HashMap<String, u64> = HashMap::new();
    let mut by_pc: HashMap<String, u64> = HashMap::new();
    for (&(class, stack, pc), &v) in &profile.total.insns {
        let c = class_name(class);
        bump(&mut class_total, c, v);
        if pc < KERNEL_BASE {
            let name = format!("user:{}", symbols.user_symbol(pc));
            bump(exclusive.entry(c).or_default(), name.clone(), v);
            bump(inclusive.entry(c).or_default(), name.clone(), v);
            bump(&mut all_exclusive, name.clone(), v);
            bump(&mut symbol_exclusive, name.clone(), v);
            bump(buckets.entry(c).or_default(), "user code", v);
            bump(&mut folded, format!("{USER_CLASS};{name}"), v);
            continue;
        }
        bump(&mut by_pc, format!("{};{pc:#x}", c.replace(' ', "_")), v);
        let names = full_stack(&profile.stacks[stack], pc);
        let innermost = names.last().cloned().unwrap_or_default();
        bump(exclusive.entry(c).or_default(), innermost.clone(), v);
        bump(&mut all_exclusive, innermost, v);
        let symbol = symbols.kernel_symbol(pc).unwrap_or_else(|| "??".into());
        bump(&mut symbol_exclusive, short(&symbol), v);
        let distinct: HashSet<&String> = names.iter().collect();
        for name in distinct {
            bump(inclusive.entry(c).or_default(), name.clone(), v);
        }
        bump(buckets.entry(c).or_default(), bucket(&names), v);
        let frames: Vec<String> = names
            .iter()
            .map(|name| name.replace(';', ",").replace(' ', "_"))
            .collect();
        bump(&mut folded, format!("{c};{}", frames.join(";")), v);
    }
    let entries: HashMap<&str, u64> = profile
        .total
        .entries
        .iter()
        .map(|(&class, &e)| (class_name(class), e))
        .collect();

    let all: u64 = class_total.values().sum();
    let per = |v: u64| format!("{:9.1}", v as f64 / n);
    let mut o = String::new();
    // Writing to a String cannot fail.
    let mut p = |line: String| {
        let _ = writeln!(o, "{line}");
    };
    p(format!(
        "iterations: {} (between {} boundaries: every {}. syscall {}); traced {} instructions in all; unmatched returns {}",
        profile.iterations,
        profile.iterations + 1,
        window.every,
        window.iter_syscall,
        profile.instructions,
        profile.unmatched_returns
    ));
    if profile.other_cpu > 0 {
        p(format!(
            "WARNING: {} instructions ran on CPUs other than 0; the stack tracking assumes one CPU: use --smp 1",
            profile.other_cpu
        ));
    }
    p(format!("per iteration: {:.1} instructions", all as f64 / n));
    if !profile.spans.is_empty() {
        let count: u64 = profile.spans.values().sum();
        let sum: u64 = profile.spans.iter().map(|(len, k)| len * k).sum();
        let lengths: Vec<String> = most_common(&profile.spans)
            .iter()
            .take(SPANS_SHOWN)
            .map(|(len, k)| format!("{len}x{k}"))
            .collect();
        p(format!(
            "span from entry of syscall {} to the next (pairs 1-2, 3-4, ...; the benchmarks' timed window when NR is clock_gettime): mean {:.1}; lengths: {}",
            window.span_syscall,
            sum as f64 / count as f64,
            lengths.join(", ")
        ));
    }
    p(String::new());
    p("== per class: entries and instructions per iteration, per entry ==".into());
    let classes = most_common(&class_total);
    for &(c, v) in &classes {
        let e = entries.get(c).copied().unwrap_or(0);
        let per_entry = if e > 0 {
            format!("  instr/entry {:8.1}", v as f64 / e as f64)
        } else {
            String::new()
        };
        p(format!(
            "  {c:24} entries/iter {:6.2}  instr/iter {}{per_entry}",
            e as f64 / n,
            per(v)
        ));
    }
    for &(c, v) in &classes {
        if c == USER_CLASS {
            continue;
        }
        // A class never entered from user space (boot) counts per iteration.
        let e = entries.get(c).copied().filter(|&e| e > 0);
        let e = e.map_or(n, |e| e as f64);
        p(String::new());
        p(format!(
            "== class \"{c}\": {:.1} instructions per entry ({:.2} entries/iteration) ==",
            v as f64 / e,
            e / n
        ));
        p("  entry sizes (instructions from vector to eret; user pc; entries/iteration):".into());
        let sizes: HashMap<(u64, u64), u64> = profile
            .total
            .entry_sizes
            .iter()
            .filter(|((class, _, _), _)| class_name(*class) == c)
            .map(|(&(_, upc, len), &k)| ((upc, len), k))
            .collect();
        for ((upc, len), k) in most_common(&sizes).into_iter().take(ENTRY_SIZES_SHOWN) {
            let name = if upc < KERNEL_BASE {
                symbols.user_symbol(upc)
            } else {
                String::new()
            };
            p(format!(
                "    {len:8}  from {upc:#x} {name}  {:.2}/iter",
                k as f64 / n
            ));
        }
        p("  buckets (innermost matching frame), per entry:".into());
        for (b, bv) in most_common(&buckets[c]) {
            p(format!(
                "    {b:30} {:8.1}  {:5.1}%",
                bv as f64 / e,
                100.0 * bv as f64 / v as f64
            ));
        }
        p("  inclusive, per entry (top):".into());
        for (f, fv) in most_common(&inclusive[c]).into_iter().take(settings.top) {
            p(format!("    {:8.1}  {f}", fv as f64 / e));
        }
        p("  self, per entry (top):".into());
        for (f, fv) in most_common(&exclusive[c]).into_iter().take(settings.top) {
            p(format!("    {:8.1}  {f}", fv as f64 / e));
        }
    }
    p(String::new());
    p(format!(
        "== top {} functions overall (self, inline-aware), per iteration ==",
        settings.top
    ));
    for (f, fv) in most_common(&all_exclusive).into_iter().take(settings.top) {
        p(format!(
            "  {}  {:5.1}%  {f}",
            per(fv),
            100.0 * fv as f64 / all as f64
        ));
    }
    p(String::new());
    p(format!(
        "== top {} symbols overall (self, by ELF symbol: inlined code counts in its caller) ==",
        settings.top
    ));
    for (f, fv) in most_common(&symbol_exclusive)
        .into_iter()
        .take(settings.top)
    {
        p(format!(
            "  {}  {:5.1}%  {f}",
            per(fv),
            100.0 * fv as f64 / all as f64
        ));
    }
    let text = o.trim_end_matches('\n').to_owned();
    let mut stacks = String::new();
    for (stack, count) in most_common(&folded) {
        let _ = writeln!(stacks, "{stack} {count}");
    }
    let mut pcs = String::new();
    for (class_pc, count) in most_common(&by_pc) {
        let _ = writeln!(pcs, "{class_pc} {count}");
    }
    Report::Done {
        text,
        folded: stacks,
        pcs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Counts;

    #[test]
    fn buckets_by_the_innermost_matching_frame() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            bucket(&names(&["exception_vectors", "mm::fault::do_page_fault"])),
            "fault logic"
        );
        // The innermost frame that matches anything wins, not the first
        // bucket in the list.
        assert_eq!(
            bucket(&names(&[
                "sync::spinlock::SpinLock::lock",
                "mm::folio::Folio::get",
                "core::ptr::write"
            ])),
            "folio ref/mapcount"
        );
        // Within one frame, the first bucket in the list wins.
        assert_eq!(
            bucket(&names(&["mm::fault::flush_tlb_page"])),
            "TLB flush/barriers"
        );
        // arm64's fault.c is fault logic, its `do_current_fault` no lookup
        // of the current task; the per-VMA lock is the VMA lookup's.
        assert_eq!(
            bucket(&names(&["arch::aarch64::fault::do_current_fault"])),
            "fault logic"
        );
        assert_eq!(
            bucket(&names(&["mm::vma_lock::lock_vma_under_rcu"])),
            "vma lookup"
        );
        assert_eq!(
            bucket(&names(&["do_current_fault", "task::sched::current_ref"])),
            "current task/mm"
        );
        assert_eq!(bucket(&names(&["core::ptr::write"])), "other");
        assert_eq!(bucket(&[]), "other");
    }

    /// The synthetic kernel: the vectors, F (calls G from F + 4) and G
    /// (with an inlined spin lock).
    const V: u64 = 0xffff_0000_4000_0000;
    const F: u64 = 0xffff_0000_4010_0000;
    const G: u64 = 0xffff_0000_4020_0000;

    /// Names for the synthetic kernel.
    struct FakeSymbols;

    impl Symbols for FakeSymbols {
        fn inline_frames(&self, pc: u64) -> Vec<String> {
            let frames: &[&str] = match pc {
                F | 0xffff_0000_4010_0004 => &["faultline::mm::fault::do_page_fault"],
                G => &[
                    "faultline::sync::spinlock::SpinLock::lock",
                    "faultline::mm::fault::handle pte",
                ],
                _ if pc > G => &["??"],
                _ => &[],
            };
            frames.iter().map(|s| s.to_string()).collect()
        }

        fn kernel_symbol(&self, pc: u64) -> Option<String> {
            Some(
                match pc {
                    _ if pc < F => "exception_vectors",
                    _ if pc < G => "faultline::mm::fault::do_page_fault",
                    _ => "faultline::mm::fault::handle pte",
                }
                .to_owned(),
            )
        }

        fn user_symbol(&self, _: u64) -> String {
            "main".to_owned()
        }
    }

    const SETTINGS: Settings = Settings {
        window: Window {
            iter_syscall: 233,
            every: 1,
            span_syscall: 113,
        },
        top: 30,
    };

    /// Two iterations of: one madvise entry of 6 kernel instructions
    /// (1 in the vector, 2 in F, 3 in G), and 4 user instructions.
    fn profile() -> Profile {
        let via_f = vec![Frame::Call(V + 0x404)];
        let via_g = vec![Frame::Call(V + 0x404), Frame::Call(F + 4)];
        Profile {
            iterations: 2,
            total: Counts {
                insns: HashMap::from([
                    ((2, 0, V + 0x400), 2),
                    ((2, 1, F), 4),
                    ((2, 2, G), 6),
                    ((1, 0, 0x1000), 8),
                ]),
                entries: HashMap::from([(2, 2)]),
                entry_sizes: HashMap::from([((2, 0x1004, 6), 2)]),
            },
            classes: vec!["boot".into(), USER_CLASS.into(), "sys madvise".into()],
            stacks: vec![Vec::new(), via_f, via_g],
            spans: HashMap::new(),
            instructions: 1000,
            unmatched_returns: 3,
            other_cpu: 0,
        }
    }

    /// The text and folded stacks of a finished report.
    fn done(report: Report) -> (String, String) {
        match report {
            Report::Done { text, folded, .. } => (text, folded),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn counts_per_class_bucket_and_function() {
        let (text, folded) = done(report(&profile(), &FakeSymbols, SETTINGS));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "iterations: 2 (between 3 boundaries: every 1. syscall 233); traced 1000 instructions in all; unmatched returns 3",
                "per iteration: 10.0 instructions",
                "",
            ]
        );
        let section = |title: &str| -> Vec<&str> {
            let start = lines.iter().position(|l| *l == title).unwrap() + 1;
            lines[start..]
                .iter()
                .take_while(|l| l.starts_with("    "))
                .copied()
                .collect()
        };
        assert!(text.contains(
            "\n  sys madvise              entries/iter   1.00  instr/iter       6.0  instr/entry      6.0\n"
        ));
        assert!(text
            .contains("\n  user                     entries/iter   0.00  instr/iter       4.0\n"));
        assert!(text.contains(
            "\n== class \"sys madvise\": 6.0 instructions per entry (1.00 entries/iteration) ==\n"
        ));
        assert_eq!(
            section(
                "  entry sizes (instructions from vector to eret; user pc; entries/iteration):"
            ),
            ["           6  from 0x1004 main  1.00/iter"]
        );
        assert_eq!(
            section("  buckets (innermost matching frame), per entry:"),
            [
                "    spinlock/irqsave                    3.0   50.0%",
                "    fault logic                         2.0   33.3%",
                "    trap entry/exit (asm+rust)          1.0   16.7%",
            ]
        );
        assert_eq!(
            section("  inclusive, per entry (top):"),
            [
                "         6.0  exception_vectors",
                "         5.0  mm::fault::do_page_fault",
                "         3.0  mm::fault::handle pte",
                "         3.0  sync::spinlock::SpinLock::lock",
            ]
        );
        assert_eq!(
            section("  self, per entry (top):"),
            [
                "         3.0  sync::spinlock::SpinLock::lock",
                "         2.0  mm::fault::do_page_fault",
                "         1.0  exception_vectors",
            ]
        );
        let tail = |title: &str| -> Vec<&str> {
            let start = lines.iter().position(|l| l.starts_with(title)).unwrap() + 1;
            lines[start..]
                .iter()
                .take_while(|l| !l.is_empty())
                .copied()
                .collect()
        };
        assert_eq!(
            tail("== top 30 functions overall"),
            [
                "        4.0   40.0%  user:main",
                "        3.0   30.0%  sync::spinlock::SpinLock::lock",
                "        2.0   20.0%  mm::fault::do_page_fault",
                "        1.0   10.0%  exception_vectors",
            ]
        );
        // By ELF symbol, G's inlined lock counts in G.
        assert_eq!(
            tail("== top 30 symbols overall"),
            [
                "        4.0   40.0%  user:main",
                "        3.0   30.0%  mm::fault::handle pte",
                "        2.0   20.0%  mm::fault::do_page_fault",
                "        1.0   10.0%  exception_vectors",
            ]
        );
        // Spaces in names become underscores; the class keeps its own.
        assert_eq!(
            folded,
            "user;user:main 8\n\
             sys madvise;exception_vectors;mm::fault::do_page_fault;mm::fault::handle_pte;sync::spinlock::SpinLock::lock 6\n\
             sys madvise;exception_vectors;mm::fault::do_page_fault 4\n\
             sys madvise;exception_vectors 2\n"
        );
    }

    #[test]
    fn counts_kernel_instructions_by_pc() {
        let Report::Done { pcs, .. } = report(&profile(), &FakeSymbols, SETTINGS) else {
            panic!("no report");
        };
        // Kernel pcs only, largest first; the class's space becomes _.
        assert_eq!(
            pcs,
            format!(
                "sys_madvise;{G:#x} 6\nsys_madvise;{F:#x} 4\nsys_madvise;{:#x} 2\n",
                V + 0x400
            )
        );
    }

    #[test]
    fn exceptions_and_unknown_frames() {
        let mut profile = profile();
        profile.stacks.push(vec![
            Frame::Call(V + 0x404),
            Frame::Exception(F),
            Frame::Call(V + 0x284),
        ]);
        profile.total.insns = HashMap::from([((2, 3, G + 0x40), 2)]);
        profile.spans = HashMap::from([(100, 3), (110, 1)]);
        profile.other_cpu = 5;
        let (text, folded) = done(report(&profile, &FakeSymbols, SETTINGS));
        // DWARF's `??` falls back on the symbol table.
        assert_eq!(
            folded,
            "sys madvise;exception_vectors;<exception>;exception_vectors;mm::fault::handle_pte 2\n"
        );
        // The pc's own function is the innermost: what the self counts show.
        assert!(text.contains("  self, per entry (top):\n         1.0  mm::fault::handle pte\n"));
        assert!(text.contains("WARNING: 5 instructions ran on CPUs other than 0"));
        assert!(text.contains("clock_gettime): mean 102.5; lengths: 100x3, 110x1\n"));
    }

    #[test]
    fn no_whole_iteration() {
        let mut profile = profile();
        profile.iterations = 0;
        assert_eq!(
            report(&profile, &FakeSymbols, SETTINGS),
            Report::NoIteration(
                "profile: syscall 233 seen 1 times: no whole iteration (1000 instructions traced)"
                    .into()
            )
        );
    }
}
