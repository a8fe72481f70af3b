//! The exec log, one instruction at a time: QEMU's `-d exec,nochain` line
//! for each instruction (under `-singlestep` every translation block is one
//! instruction), turned into counts.
//!
//! [`Tracer`] is a state machine over the stream of pcs. It knows when the
//! CPU enters the kernel from user space and why (a system call, which
//! one, a fault, an interrupt: the entry's class), keeps a shadow call
//! stack of the kernel's calls and returns, and counts every instruction
//! under (class, stack, pc). Counting restarts at each occurrence of the
//! iteration system call, so what it hands back covers whole iterations
//! only: what precedes the first and follows the last is boot and setup.

use std::collections::HashMap;

use crate::code::Branch;

/// Kernel addresses start here (TTBR1's half); user ones lie below.
pub const KERNEL_BASE: u64 = 0xffff_0000_0000_0000;

/// The offset in the vector table of a synchronous exception from EL0
/// (AArch64): a system call or a fault.
const EL0_SYNC: u64 = 0x400;
/// The offset of an IRQ from EL0.
const EL0_IRQ: u64 = 0x480;
/// The vector table's size: 16 entries of 0x80 bytes.
const VECTORS_SIZE: u64 = 0x800;
/// The size of one vector entry.
const VECTOR_ENTRY: u64 = 0x80;

/// The class every user instruction counts under.
pub const USER_CLASS: &str = "user";

/// The pc of one line of QEMU's exec log, and the CPU that ran it:
/// `Trace <cpu>: <host address> [<cs base>/<pc>/<flags>/<cflags>] <symbol>`
/// (QEMU 7.2). Any other line (QEMU's "Stopped execution of TB chain..."
/// notes) is None.
pub fn parse_exec_line(line: &[u8]) -> Option<(u32, u64)> {
    let rest = line.strip_prefix(b"Trace ")?;
    let colon = rest.iter().position(|&b| b == b':')?;
    let cpu = std::str::from_utf8(&rest[..colon]).ok()?.parse().ok()?;
    let fields = &rest[rest.iter().position(|&b| b == b'[')? + 1..];
    let pc_start = fields.iter().position(|&b| b == b'/')? + 1;
    let digits = fields.get(pc_start..pc_start + 16)?;
    let pc = u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()?;
    Some((cpu, pc))
}

/// The names of the system calls the benchmarks make (AArch64's generic
/// table); other numbers are shown as numbers.
pub fn syscall_name(nr: u64) -> Option<&'static str> {
    Some(match nr {
        46 => "ftruncate",
        47 => "fallocate",
        56 => "openat",
        57 => "close",
        63 => "read",
        64 => "write",
        67 => "pread64",
        68 => "pwrite64",
        93 => "exit",
        94 => "exit_group",
        98 => "futex",
        101 => "nanosleep",
        113 => "clock_gettime",
        124 => "sched_yield",
        165 => "getrusage",
        214 => "brk",
        215 => "munmap",
        220 => "clone",
        221 => "execve",
        222 => "mmap",
        226 => "mprotect",
        233 => "madvise",
        260 => "wait4",
        279 => "memfd_create",
        _ => return None,
    })
}

/// The class of a system-call entry: `sys <name>`, or `sys <nr>` for a
/// call without a name here, `sys None` for an `svc` whose number the
/// profiler could not find in the code.
pub fn syscall_class(nr: Option<u64>) -> String {
    match nr {
        Some(nr) => match syscall_name(nr) {
            Some(name) => format!("sys {name}"),
            None => format!("sys {nr}"),
        },
        None => "sys None".to_owned(),
    }
}

/// One level of the shadow call stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Frame {
    /// A call from the `bl`/`blr` at this pc.
    Call(u64),
    /// An exception taken in the kernel (an IRQ, a nested fault), from the
    /// instruction at this pc.
    Exception(u64),
}

impl Frame {
    /// Whether returning to `pc` leaves this frame: the instruction after
    /// the call, or (for an exception) the interrupted one or the next.
    fn returns_to(self, pc: u64) -> bool {
        match self {
            Frame::Call(site) => site + 4 == pc,
            Frame::Exception(at) => at + 4 == pc || at == pc,
        }
    }
}

/// An interned class name (index into [`Profile::classes`]).
pub type ClassId = usize;
/// An interned call stack (index into [`Profile::stacks`]).
pub type StackId = usize;

/// What the tracer needs from the images: the kernel's branches and
/// vectors, the user program's system-call sites and its names.
pub struct Code<'a> {
    /// Calls, returns and `eret`s of the kernel, by address.
    pub branches: &'a HashMap<u64, Branch>,
    /// The address of `exception_vectors`.
    pub vectors: u64,
    /// The user program's `svc`s and the numbers they load.
    pub syscalls: &'a HashMap<u64, Option<u64>>,
    /// Whether there is a user program to name faults in (else a fault
    /// is just `el0 sync`).
    pub has_user: bool,
    /// The user function containing a pc.
    pub user_symbol: &'a dyn Fn(u64) -> String,
}

/// What delimits an iteration and what else to measure.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Entries of this system call delimit the iterations.
    pub iter_syscall: u64,
    /// Only every K-th entry of it, from the first, is a boundary.
    pub every: u64,
    /// Instructions from one entry of this system call to the next are
    /// measured in pairs (1st-2nd, 3rd-4th, ...).
    pub span_syscall: u64,
}

/// Counts for a stretch of the stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Instructions by (class, kernel stack, pc).
    pub insns: HashMap<(ClassId, StackId, u64), u64>,
    /// Kernel entries by class.
    pub entries: HashMap<ClassId, u64>,
    /// Kernel entries by (class, user pc, instructions from the vector to
    /// the return to user space).
    pub entry_sizes: HashMap<(ClassId, u64, u64), u64>,
}

impl Counts {
    /// Adds `other`'s counts to these.
    fn add(&mut self, other: &Counts) {
        for (key, n) in &other.insns {
            *self.insns.entry(*key).or_default() += n;
        }
        for (key, n) in &other.entries {
            *self.entries.entry(*key).or_default() += n;
        }
        for (key, n) in &other.entry_sizes {
            *self.entry_sizes.entry(*key).or_default() += n;
        }
    }
}

/// Everything the tracer learnt from the stream.
#[derive(Debug)]
pub struct Profile {
    /// Whole iterations: boundaries seen, less one (-1 if none was seen).
    pub iterations: i64,
    /// The counts of those iterations, summed.
    pub total: Counts,
    /// Class names, by [`ClassId`].
    pub classes: Vec<String>,
    /// Kernel call stacks, outermost first, by [`StackId`].
    pub stacks: Vec<Vec<Frame>>,
    /// The span lengths measured, and how often each.
    pub spans: HashMap<u64, u64>,
    /// Instructions traced in all.
    pub instructions: u64,
    /// Returns that matched no frame of the shadow stack.
    pub unmatched_returns: u64,
    /// Instructions that ran on a CPU other than 0.
    pub other_cpu: u64,
}

/// The state machine: feed it every traced pc in order with [`Tracer::step`].
pub struct Tracer<'a> {
    /// What the images say about the pcs.
    code: Code<'a>,
    /// What delimits an iteration.
    window: Window,
    /// The counts since the last boundary.
    current: Counts,
    /// The counts of the whole iterations so far.
    total: Counts,
    /// Class names, by id.
    classes: Vec<String>,
    /// Class ids, by name.
    class_ids: HashMap<String, ClassId>,
    /// Call stacks, by id.
    stacks: Vec<Vec<Frame>>,
    /// Stack ids, by stack.
    stack_ids: HashMap<Vec<Frame>, StackId>,
    /// The shadow call stack of the current kernel entry.
    stack: Vec<Frame>,
    /// Its id, until it changes.
    stack_id: Option<StackId>,
    /// The class of the current kernel entry.
    class: ClassId,
    /// The class of user instructions.
    user_class: ClassId,
    /// The id of the empty stack, which user instructions have.
    empty_stack: StackId,
    /// The instruction before the current one.
    prev_pc: u64,
    /// Whether it was the kernel's.
    prev_kernel: bool,
    /// Instructions since the current kernel entry began.
    entry_len: u64,
    /// The user pc the current kernel entry came from.
    entry_user_pc: u64,
    /// Boundaries seen, less one.
    iterations: i64,
    /// Entries of the iteration system call so far.
    iter_seen: u64,
    /// Entries of the span system call so far.
    span_seen: u64,
    /// Where (in instructions traced) the open span began.
    span_start: u64,
    /// The span lengths measured, and how often each.
    spans: HashMap<u64, u64>,
    /// Instructions traced so far.
    instructions: u64,
    /// Returns that matched no frame.
    unmatched_returns: u64,
    /// Instructions run by CPUs other than 0.
    other_cpu: u64,
}

impl<'a> Tracer<'a> {
    /// A tracer at power-on: in the kernel, class `boot`.
    pub fn new(code: Code<'a>, window: Window) -> Self {
        let mut tracer = Tracer {
            code,
            window,
            current: Counts::default(),
            total: Counts::default(),
            classes: Vec::new(),
            class_ids: HashMap::new(),
            stacks: Vec::new(),
            stack_ids: HashMap::new(),
            stack: Vec::new(),
            stack_id: None,
            class: 0,
            user_class: 0,
            empty_stack: 0,
            prev_pc: 0,
            prev_kernel: true,
            entry_len: 0,
            entry_user_pc: 0,
            iterations: -1,
            iter_seen: 0,
            span_seen: 0,
            span_start: 0,
            spans: HashMap::new(),
            instructions: 0,
            unmatched_returns: 0,
            other_cpu: 0,
        };
        tracer.class = tracer.class_id("boot");
        tracer.user_class = tracer.class_id(USER_CLASS);
        tracer.empty_stack = tracer.intern_stack(Vec::new());
        tracer
    }

    /// The id of class `name`, made on first use.
    fn class_id(&mut self, name: &str) -> ClassId {
        if let Some(&id) = self.class_ids.get(name) {
            return id;
        }
        self.classes.push(name.to_owned());
        self.class_ids
            .insert(name.to_owned(), self.classes.len() - 1);
        self.classes.len() - 1
    }

    /// The id of `stack`, made on first use.
    fn intern_stack(&mut self, stack: Vec<Frame>) -> StackId {
        if let Some(&id) = self.stack_ids.get(&stack) {
            return id;
        }
        self.stacks.push(stack.clone());
        self.stack_ids.insert(stack, self.stacks.len() - 1);
        self.stacks.len() - 1
    }

    /// Counts the instruction at `pc`, run by `cpu`.
    pub fn step(&mut self, cpu: u32, pc: u64) {
        self.instructions += 1;
        if cpu != 0 {
            self.other_cpu += 1;
        }
        if pc >= KERNEL_BASE {
            if self.prev_kernel {
                self.follow_kernel(pc);
            } else {
                self.enter_kernel(pc);
            }
            let stack = match self.stack_id {
                Some(id) => id,
                None => {
                    let id = self.intern_stack(self.stack.clone());
                    self.stack_id = Some(id);
                    id
                }
            };
            *self
                .current
                .insns
                .entry((self.class, stack, pc))
                .or_default() += 1;
            self.entry_len += 1;
            self.prev_kernel = true;
        } else {
            if self.prev_kernel && self.entry_len > 0 {
                let key = (self.class, self.entry_user_pc, self.entry_len);
                *self.current.entry_sizes.entry(key).or_default() += 1;
                self.entry_len = 0;
            }
            let key = (self.user_class, self.empty_stack, pc);
            *self.current.insns.entry(key).or_default() += 1;
            self.prev_kernel = false;
        }
        self.prev_pc = pc;
    }

    /// The first kernel instruction after user ones: a new entry, whose
    /// class the vector and the user instruction before it tell.
    fn enter_kernel(&mut self, pc: u64) {
        let class = match pc.wrapping_sub(self.code.vectors) {
            EL0_SYNC => match self.code.syscalls.get(&self.prev_pc) {
                Some(&nr) => {
                    self.count_syscall(nr);
                    syscall_class(nr)
                }
                None if self.code.has_user => {
                    format!("fault in {}", (self.code.user_symbol)(self.prev_pc))
                }
                None => "el0 sync".to_owned(),
            },
            EL0_IRQ => "irq".to_owned(),
            _ => "el0 other".to_owned(),
        };
        self.class = self.class_id(&class);
        *self.current.entries.entry(self.class).or_default() += 1;
        self.stack.clear();
        self.stack_id = Some(self.empty_stack);
        self.entry_len = 0;
        self.entry_user_pc = self.prev_pc;
    }

    /// A system call's entry: spans and iteration boundaries.
    fn count_syscall(&mut self, nr: Option<u64>) {
        if nr == Some(self.window.span_syscall) {
            self.span_seen += 1;
            if self.span_seen % 2 == 1 {
                self.span_start = self.instructions;
            } else {
                *self
                    .spans
                    .entry(self.instructions - self.span_start)
                    .or_default() += 1;
            }
        }
        if nr == Some(self.window.iter_syscall) {
            self.iter_seen += 1;
            if (self.iter_seen - 1).is_multiple_of(self.window.every) {
                if self.iterations >= 0 {
                    self.total.add(&self.current);
                }
                self.current = Counts::default();
                self.iterations += 1;
            }
        }
    }

    /// A kernel instruction after a kernel one: the previous instruction's
    /// call, return or eret moves the shadow stack, and arriving at a
    /// vector means an exception taken in the kernel.
    fn follow_kernel(&mut self, pc: u64) {
        let branch = self.code.branches.get(&self.prev_pc).copied();
        match branch {
            Some(Branch::Call) => {
                self.stack.push(Frame::Call(self.prev_pc));
                self.stack_id = None;
            }
            Some(Branch::Return) => {
                if self.stack.last().is_some_and(|f| *f == Frame::Call(pc - 4)) {
                    self.stack.pop();
                } else if let Some(depth) = self.stack.iter().rposition(|f| f.returns_to(pc)) {
                    // A switch to another task's stack, or a return that
                    // skips frames: unwind to the frame it returns from.
                    self.stack.truncate(depth);
                } else {
                    self.stack.clear();
                    self.unmatched_returns += 1;
                }
                self.stack_id = None;
            }
            Some(Branch::ExceptionReturn) => {
                let exception = self
                    .stack
                    .iter()
                    .rposition(|f| matches!(f, Frame::Exception(_)));
                self.stack.truncate(exception.unwrap_or(0));
                self.stack_id = None;
            }
            None => {}
        }
        let offset = pc.wrapping_sub(self.code.vectors);
        if offset < VECTORS_SIZE
            && offset.is_multiple_of(VECTOR_ENTRY)
            && branch != Some(Branch::Call)
        {
            self.stack.push(Frame::Exception(self.prev_pc));
            self.stack_id = None;
        }
    }

    /// The counts of the whole iterations, and what else was seen.
    pub fn finish(self) -> Profile {
        Profile {
            iterations: self.iterations,
            total: self.total,
            classes: self.classes,
            stacks: self.stacks,
            spans: self.spans,
            instructions: self.instructions,
            unmatched_returns: self.unmatched_returns,
            other_cpu: self.other_cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_qemu_exec_lines() {
        assert_eq!(
            parse_exec_line(
                b"Trace 0: 0x7fb9d0000100 [0000000000004000/0000000040200000/00000121/ff000201] \n"
            ),
            Some((0, 0x4020_0000))
        );
        assert_eq!(
            parse_exec_line(
                b"Trace 3: 0x7fb9d01fd180 [0000000000004000/ffff00004024c2a0/00000121/ff000201] _ZN9faultline2mm4fault\n"
            ),
            Some((3, 0xffff_0000_4024_c2a0))
        );
        assert_eq!(
            parse_exec_line(b"Trace 12: 0x1 [0/0000000000402a10/0/0]"),
            Some((12, 0x402a10))
        );
        for line in [
            &b"Stopped execution of TB chain before 0x7fb9d01fd180 [ffff00004024c2a0] sym\n"[..],
            b"Trace 0: 0x7fb9d0000100 [0000000000004000/00000000402000\n",
            b"Trace x: 0x7fb9d0000100 [0000000000004000/0000000040200000/00000121/ff000201]",
            b"Trace 0: 0x7fb9d0000100 [0000000000004000/00000000402000zz/00000121/ff000201]",
            b"Trace 0 0x7fb9d0000100",
            b"",
        ] {
            assert_eq!(
                parse_exec_line(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn classes_system_calls_by_name_or_number() {
        assert_eq!(syscall_class(Some(233)), "sys madvise");
        assert_eq!(syscall_class(Some(113)), "sys clock_gettime");
        assert_eq!(syscall_class(Some(172)), "sys 172");
        assert_eq!(syscall_class(None), "sys None");
    }

    /// The vector table of the synthetic kernel.
    const V: u64 = 0xffff_0000_4000_0000;
    /// A kernel function that calls another at `G`.
    const F: u64 = 0xffff_0000_4010_0000;
    /// A leaf kernel function: returns at once.
    const G: u64 = 0xffff_0000_4020_0000;
    /// The user program: `svc`s of madvise and clock_gettime, one of an
    /// unknown number, and a load that faults.
    const SVC_MADVISE: u64 = 0x1004;
    const SVC_CLOCK: u64 = 0x2004;
    const SVC_UNKNOWN: u64 = 0x2804;
    const USER_LOAD: u64 = 0x3000;

    /// The synthetic kernel's branches: the EL0 sync vector calls F, which
    /// calls G and returns; G returns; the vector then erets.
    fn branches() -> HashMap<u64, Branch> {
        HashMap::from([
            (V + 0x404, Branch::Call),
            (V + 0x408, Branch::ExceptionReturn),
            (V + 0x484, Branch::ExceptionReturn),
            (V + 0x284, Branch::ExceptionReturn),
            (F + 4, Branch::Call),
            (F + 8, Branch::Return),
            (G, Branch::Return),
        ])
    }

    /// The user program's system calls, by their `svc`'s pc.
    fn syscalls() -> HashMap<u64, Option<u64>> {
        HashMap::from([
            (SVC_MADVISE, Some(233)),
            (SVC_CLOCK, Some(113)),
            (SVC_UNKNOWN, None),
        ])
    }

    /// A system call (or fault) from the user instruction at `user_pc`,
    /// through F and G: 7 kernel instructions, then back to user space.
    fn entry(user_pc: u64) -> Vec<u64> {
        vec![
            user_pc,
            V + 0x400,
            V + 0x404,
            F,
            F + 4,
            G,
            F + 8,
            V + 0x408,
            user_pc + 4,
        ]
    }

    /// What a tracer makes of `pcs`, all on CPU 0.
    fn run(window: Window, has_user: bool, pcs: &[u64]) -> Profile {
        let branches = branches();
        let syscalls = syscalls();
        let user_symbol = |pc: u64| format!("ufn{:x}", pc >> 12);
        let mut tracer = Tracer::new(
            Code {
                branches: &branches,
                vectors: V,
                syscalls: &syscalls,
                has_user,
                user_symbol: &user_symbol,
            },
            window,
        );
        for &pc in pcs {
            tracer.step(0, pc);
        }
        tracer.finish()
    }

    const MADVISE_ITERATIONS: Window = Window {
        iter_syscall: 233,
        every: 1,
        span_syscall: 113,
    };

    /// The count of (class, stack, pc), 0 if never counted.
    fn count(profile: &Profile, class: &str, stack: &[Frame], pc: u64) -> u64 {
        let class = profile.classes.iter().position(|c| c == class);
        let stack = profile.stacks.iter().position(|s| s == stack);
        match (class, stack) {
            (Some(class), Some(stack)) => profile
                .total
                .insns
                .get(&(class, stack, pc))
                .copied()
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// Entries of `class`, 0 if none.
    fn entries(profile: &Profile, class: &str) -> u64 {
        let Some(class) = profile.classes.iter().position(|c| c == class) else {
            return 0;
        };
        profile.total.entries.get(&class).copied().unwrap_or(0)
    }

    #[test]
    fn counts_whole_iterations_only() {
        // Boot (kernel code, class boot), then three madvise calls with a
        // fault between each: two whole iterations; the setup before the
        // first madvise and what follows the last are not counted.
        let mut pcs = vec![F, F + 0x10, F + 0x14];
        for _ in 0..3 {
            pcs.extend(entry(USER_LOAD));
            pcs.extend(entry(SVC_MADVISE));
        }
        pcs.extend(entry(USER_LOAD));
        let profile = run(MADVISE_ITERATIONS, true, &pcs);
        assert_eq!(profile.iterations, 2);
        assert_eq!(profile.instructions, pcs.len() as u64);
        assert_eq!(entries(&profile, "sys madvise"), 2);
        // The fault after the last madvise is past the window.
        assert_eq!(entries(&profile, "fault in ufn3"), 2);
        assert_eq!(entries(&profile, "boot"), 0);
        assert_eq!(count(&profile, "boot", &[], F + 0x10), 0);
        // Every kernel instruction of each entry, under its stack.
        let via_f = [Frame::Call(V + 0x404)];
        let via_g = [Frame::Call(V + 0x404), Frame::Call(F + 4)];
        assert_eq!(count(&profile, "sys madvise", &[], V + 0x400), 2);
        assert_eq!(count(&profile, "sys madvise", &via_f, F), 2);
        assert_eq!(count(&profile, "sys madvise", &via_g, G), 2);
        assert_eq!(count(&profile, "sys madvise", &via_f, F + 8), 2);
        assert_eq!(count(&profile, "sys madvise", &[], V + 0x408), 2);
        assert_eq!(count(&profile, "fault in ufn3", &via_g, G), 2);
        assert_eq!(count(&profile, USER_CLASS, &[], SVC_MADVISE + 4), 2);
        assert_eq!(profile.unmatched_returns, 0);
        // Each entry ran 7 kernel instructions, from its user pc.
        let madvise = profile.classes.iter().position(|c| c == "sys madvise");
        assert_eq!(
            profile
                .total
                .entry_sizes
                .get(&(madvise.unwrap(), SVC_MADVISE, 7)),
            Some(&2)
        );
        let total: u64 = profile.total.insns.values().sum();
        assert_eq!(total, 2 * 2 * entry(0).len() as u64);
    }

    #[test]
    fn every_kth_occurrence_is_a_boundary() {
        let mut pcs = Vec::new();
        for _ in 0..5 {
            pcs.extend(entry(SVC_MADVISE));
        }
        let every_2 = Window {
            every: 2,
            ..MADVISE_ITERATIONS
        };
        let profile = run(every_2, true, &pcs);
        // Boundaries at the 1st, 3rd and 5th call.
        assert_eq!(profile.iterations, 2);
        assert_eq!(entries(&profile, "sys madvise"), 4);
        assert_eq!(run(MADVISE_ITERATIONS, true, &pcs[..9]).iterations, 0);
        assert_eq!(run(MADVISE_ITERATIONS, true, &[]).iterations, -1);
    }

    #[test]
    fn classes_entries_from_user_space() {
        let mut pcs = entry(SVC_MADVISE);
        pcs.extend(entry(SVC_UNKNOWN));
        pcs.extend(entry(USER_LOAD));
        // An IRQ and an SError from EL0.
        pcs.extend([0x5000, V + 0x480, V + 0x484, 0x5004]);
        pcs.extend([0x5008, V + 0x580, V + 0x584]);
        pcs.extend(entry(SVC_MADVISE));
        let profile = run(MADVISE_ITERATIONS, true, &pcs);
        assert_eq!(profile.iterations, 1);
        assert_eq!(entries(&profile, "sys None"), 1);
        assert_eq!(entries(&profile, "fault in ufn3"), 1);
        assert_eq!(entries(&profile, "irq"), 1);
        assert_eq!(entries(&profile, "el0 other"), 1);
        // Without a user program, a fault is only an EL0 sync exception.
        let profile = run(MADVISE_ITERATIONS, false, &pcs);
        assert_eq!(entries(&profile, "el0 sync"), 1);
    }

    #[test]
    fn nested_exceptions_and_unusual_returns() {
        let mut pcs = entry(SVC_MADVISE);
        pcs.extend([
            USER_LOAD,
            V + 0x400,
            V + 0x404,
            F,
            // An IRQ taken in F: the EL1 IRQ vector; its eret returns to F.
            V + 0x280,
            V + 0x284,
            F + 4,
            G,
            // G returns to neither caller: the stack starts over.
            V + 0x900,
        ]);
        // A return skipping a frame: from G straight back to the vector.
        pcs.extend([V + 0x404, F, F + 4, G, V + 0x408]);
        pcs.extend([0x6000]);
        pcs.extend(entry(SVC_MADVISE));
        let profile = run(MADVISE_ITERATIONS, true, &pcs);
        assert_eq!(profile.iterations, 1);
        let class = "fault in ufn3";
        let f = [Frame::Call(V + 0x404)];
        let irq = [Frame::Call(V + 0x404), Frame::Exception(F)];
        assert_eq!(count(&profile, class, &irq, V + 0x280), 1);
        assert_eq!(count(&profile, class, &irq, V + 0x284), 1);
        // Once after the IRQ, once on the second way through.
        assert_eq!(count(&profile, class, &f, F + 4), 2);
        assert_eq!(count(&profile, class, &[], V + 0x900), 1);
        assert_eq!(profile.unmatched_returns, 1);
        // G's return to the vector unwinds both frames at once.
        assert_eq!(count(&profile, class, &[], V + 0x408), 1);
        assert_eq!(profile.unmatched_returns, 1);
    }

    #[test]
    fn spans_pair_up_entries() {
        let mut pcs = entry(SVC_MADVISE);
        pcs.extend(entry(SVC_CLOCK));
        pcs.extend([0x2008, 0x200c, 0x2010]);
        pcs.extend(entry(SVC_CLOCK));
        pcs.extend(entry(SVC_CLOCK));
        pcs.extend(entry(SVC_MADVISE));
        let profile = run(MADVISE_ITERATIONS, true, &pcs);
        // From the first clock entry to the second: 8 + 3 + 1 instructions.
        assert_eq!(profile.spans, HashMap::from([(12, 1)]));
        assert_eq!(entries(&profile, "sys clock_gettime"), 3);
    }

    #[test]
    fn counts_instructions_of_other_cpus() {
        let branches = branches();
        let syscalls = syscalls();
        let user_symbol = |_: u64| String::new();
        let mut tracer = Tracer::new(
            Code {
                branches: &branches,
                vectors: V,
                syscalls: &syscalls,
                has_user: false,
                user_symbol: &user_symbol,
            },
            MADVISE_ITERATIONS,
        );
        tracer.step(0, F);
        tracer.step(1, F + 4);
        tracer.step(2, F + 8);
        assert_eq!(tracer.finish().other_cpu, 2);
    }
}
