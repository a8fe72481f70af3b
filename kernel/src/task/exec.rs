//! execve(2): replace the calling process's program with an ELF from the
//! file system (Linux: `fs/exec.c` `do_execve`, `begin_new_exec`;
//! `fs/binfmt_elf.c` `load_elf_binary`). The ELF headers are parsed by
//! `elf.rs`, the first stack laid out by `stack.rs`; this file builds the
//! new address space from them and switches the process over. Segments
//! are mapped from the page cache, never copied. A dynamically linked
//! program (`PT_INTERP`) gets its interpreter, glibc's `ld.so`, mapped
//! too, and starts there, with `AT_BASE` and `AT_ENTRY` saying where each
//! is; ld.so then maps the libraries itself with mmap.
//!
//! Where we simplify: no address randomisation (Linux with `norandmaps`);
//! the stack is a fixed 8 MiB VMA; a multi-threaded process may not exec
//! (EAGAIN; Linux kills the other threads first).

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use crate::arch::context::{fpsimd_load, write_tpidr_el0};
use crate::arch::trap::TrapFrame;
use crate::arch::vdso;
use crate::errno::{Errno, KResult};
use crate::fs::vfs::permission::MAY_EXEC;
use crate::fs::vfs::{self, Inode, InodeKind};
use crate::mm::addr::{align_up, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::mm_struct::{Mm, MMAP_BOTTOM, MMAP_TOP};
use crate::mm::remote::copy_to_mm;
use crate::mm::vma::{
    Vma, VM_ACCOUNT, VM_DATA_DEFAULT_FLAGS, VM_DONTEXPAND, VM_EXEC, VM_GROWSDOWN, VM_MAYEXEC,
    VM_MAYREAD, VM_MAYWRITE, VM_READ, VM_WRITE,
};
use crate::task::binfmt_script;
use crate::task::cred::Cred;
use crate::task::elf::{self, LoadPlan, PHENT_SIZE};
use crate::task::process::{ExecImage, Process};
use crate::task::signal_abi::{SIGNAL_MINSIGSTKSZ, SIG_DFL, SIG_IGN};
use crate::task::stack::{self, ExecArgs};
pub use uapi::fcntl::{AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_NOFOLLOW};
use uapi::hwcap::{HWCAP_ASIMD, HWCAP_FP};

/// Top of the user stack (Linux: `STACK_TOP`, minus randomisation).
pub const STACK_TOP: usize = 0x0000_ffff_ffff_0000;
/// Size of the user stack VMA below [`STACK_TOP`], in bytes (8 MiB), and
/// the default soft `RLIMIT_STACK` (Linux: `_STK_LIM`); the arguments and
/// environment may take a quarter of it.
pub const STACK_SIZE: usize = 8 << 20;
/// Where a static-pie is loaded (Linux: `ELF_ET_DYN_BASE`, 2/3 of the space).
const ET_DYN_BASE: u64 = 0x0000_aaaa_aaaa_0000;
/// AT_PLATFORM (Linux arm64: `ELF_PLATFORM`).
const ELF_PLATFORM: &[u8] = b"aarch64";

/// The vDSO image as a file on the internal tmpfs: exec maps it like any
/// read-only file, so faults, fork and munmap need nothing of their own
/// for it (Linux maps its pages through a `vm_special_mapping`).
static VDSO: spin::Once<Arc<Inode>> = spin::Once::new();

/// Writes the vDSO into its file, once at boot, so its page is the
/// kernel's from the start rather than the first process's.
pub fn load_vdso() {
    VDSO.call_once(|| {
        let file = crate::fs::tmpfs::memfd_create("[vdso]", 0).expect("a file for the vDSO");
        file.write(vdso::IMAGE).expect("the vDSO in the page cache");
        file.inode.clone()
    });
    crate::task::clock::init_vvar();
}

/// Maps the vDSO read-only and executable at the top of the mmap area, as
/// Linux's `arch_setup_additional_pages` does; returns where.
fn map_vdso(mm: &Arc<Mm>, m: &mut crate::mm::mm_struct::MmMap) -> KResult<usize> {
    let len = align_up(vdso::IMAGE.len(), PAGE_SIZE);
    // The data page ([vvar]) comes first, the image right after it, where
    // the vDSO's `_vdso_data` expects it (Linux: `__setup_additional_pages`).
    let area = m
        .vmas
        .get_unmapped_area(PAGE_SIZE + len, PAGE_SIZE, None, MMAP_BOTTOM, MMAP_TOP)
        .ok_or(Errno::ENOMEM)?;
    let vvar = crate::task::clock::vvar_inode().ok_or(Errno::ENOEXEC)?;
    map(
        mm,
        m,
        area,
        area + PAGE_SIZE,
        Vma::new(VM_READ | VM_MAYREAD | VM_DONTEXPAND, Some(vvar), 0),
    )?;
    let start = area + PAGE_SIZE;
    let inode = VDSO.get().ok_or(Errno::ENOEXEC)?.clone();
    map(
        mm,
        m,
        start,
        start + len,
        Vma::new(
            VM_READ | VM_EXEC | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC | VM_DONTEXPAND,
            Some(inode),
            0,
        ),
    )?;
    Ok(start)
}

/// What a loaded image starts with.
pub struct Loaded {
    /// The new address space: segments, stack, vDSO, with the first stack
    /// already written.
    pub mm: Arc<Mm>,
    /// The first user instruction: the program's entry point, or its
    /// interpreter's.
    pub entry: u64,
    /// The initial stack pointer, at argc (from [`stack::create_elf_tables`]).
    pub sp: u64,
    /// What /proc shows of the new program (path, file, argv, envp).
    pub exe: Arc<ExecImage>,
    /// The new program's name (Linux: `__set_task_comm` from
    /// `bprm->filename`: for a script, the script's name).
    pub comm: [u8; crate::task::process::TASK_COMM_LEN],
    /// The credentials it runs with: the caller's, changed by the set-ID
    /// bits of the ELF file (for a script, its interpreter's, as Linux
    /// ignores a script's own).
    pub cred: Cred,
}

/// The file of an executable `inode` (Linux: `open_exec`, which wants a
/// regular file with an execute bit).
fn exec_file(inode: &Inode) -> KResult<&crate::fs::tmpfs::ShmemFile> {
    inode.permission(MAY_EXEC)?;
    match &inode.kind {
        InodeKind::File(f) if inode.mode() & 0o111 != 0 => Ok(f),
        _ => Err(Errno::EACCES),
    }
}

/// The load plan of the ELF file `f`, read from its headers alone
/// (Linux: `load_elf_binary`'s and `load_elf_interp`'s reads).
fn elf_plan(f: &crate::fs::tmpfs::ShmemFile) -> KResult<LoadPlan> {
    elf::parse(f.size(), &mut |offset, buf| {
        f.read_at(offset, buf).unwrap_or(0)
    })
    .map_err(|_| Errno::ENOEXEC)
}

/// Inserts `vma` over `[start, end)` in the new address space and links it
/// to its file; an empty range maps nothing. ENOEXEC if it overlaps a
/// mapping already there (Linux: `vm_mmap` in `elf_map`).
fn map(
    mm: &Arc<Mm>,
    map: &mut crate::mm::mm_struct::MmMap,
    start: usize,
    end: usize,
    vma: Vma,
) -> KResult<()> {
    if start < end {
        vma.register_with_file(mm);
        map.vmas
            .insert(start, end, Arc::new(vma))
            .map_err(|_| Errno::ENOEXEC)?;
    }
    Ok(())
}

/// `#!` scripts that may run one another before ELOOP (Linux:
/// `exec_binprm`, which allows depth 0 to 5 of binfmt rewrites).
const MAX_SCRIPT_DEPTH: usize = 5;

/// The program an exec runs and the names it goes by (Linux: what
/// `alloc_bprm` keeps in `struct linux_binprm`).
pub struct ExecTarget {
    /// The file, opened for exec (`bprm->file`).
    inode: Arc<Inode>,
    /// `bprm->filename`: the path as given, or `/dev/fd/N[/path]` for a
    /// path relative to a descriptor, which a script's interpreter is
    /// handed and AT_EXECFN points at.
    filename: alloc::string::String,
    /// The new program's name (Linux: `__set_task_comm` from the last
    /// component of `filename`, or of the file itself for an empty path).
    comm: [u8; crate::task::process::TASK_COMM_LEN],
    /// `filename` names a close-on-exec descriptor, gone once the program
    /// runs, so a script's interpreter could not open it (Linux:
    /// `BINPRM_FLAGS_PATH_INACCESSIBLE`).
    path_inaccessible: bool,
    /// The caller's credentials, which exec changes (Linux: `bprm->cred`
    /// before `bprm_creds_from_file`).
    cred: Cred,
}

/// Opens the program execveat(2) names for exec (Linux: `alloc_bprm`,
/// `do_open_execat`): `path` from `dirfd` (AT_FDCWD: the working
/// directory; ignored for an absolute path), or with AT_EMPTY_PATH and an
/// empty path the file `dirfd` is open on, O_PATH or not. EINVAL for
/// other flags, ENOENT for an empty path without AT_EMPTY_PATH, EBADF or
/// ENOTDIR for a bad `dirfd`, ELOOP for a symbolic link under
/// AT_SYMLINK_NOFOLLOW, EACCES for anything but a regular file with an
/// execute bit.
pub fn open_execat(p: &Process, dirfd: i32, path: &str, flags: u32) -> KResult<ExecTarget> {
    // Linux copies the name in (`getname_uflags`) before it looks at the
    // flags: an empty one is refused there.
    if path.is_empty() && flags & AT_EMPTY_PATH == 0 {
        return Err(Errno::ENOENT);
    }
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let fd_file = |fd: i32| {
        let fd = usize::try_from(fd).map_err(|_| Errno::EBADF)?;
        p.files.lock().get(fd)
    };
    let inode = if path.is_empty() {
        match dirfd {
            AT_FDCWD => p.cwd.lock().clone(),
            fd => fd_file(fd)?.inode.clone(),
        }
    } else {
        let start = if path.starts_with('/') {
            vfs::root()
        } else if dirfd == AT_FDCWD {
            p.cwd.lock().clone()
        } else {
            let dir = fd_file(dirfd)?.inode.clone();
            dir.dir()?;
            dir
        };
        vfs::lookup(&start, path, flags & AT_SYMLINK_NOFOLLOW == 0)?
    };
    if matches!(inode.kind, InodeKind::Symlink(_) | InodeKind::MagicLink(_)) {
        return Err(Errno::ELOOP);
    }
    exec_file(&inode)?;
    let by_fd = dirfd != AT_FDCWD && !path.starts_with('/');
    let filename = match (by_fd, path.is_empty()) {
        (false, _) => alloc::string::String::from(path),
        (true, true) => alloc::format!("/dev/fd/{}", dirfd),
        (true, false) => alloc::format!("/dev/fd/{}/{}", dirfd, path),
    };
    // An empty path names the program by the file itself (Linux:
    // `comm_from_dentry`); where it is linked nowhere any more, by its
    // descriptor.
    let comm = match (by_fd && path.is_empty()).then(|| vfs::find_path(&inode)) {
        Some(Some(linked)) => crate::task::process::comm_of_path(&linked),
        _ => crate::task::process::comm_of_path(&filename),
    };
    let path_inaccessible = by_fd && p.files.lock().cloexec(dirfd as usize).unwrap_or(false);
    Ok(ExecTarget {
        inode,
        filename,
        comm,
        path_inaccessible,
        cred: p.cred.lock().clone(),
    })
}

/// Builds a new address space holding the program `target` with its
/// first stack (Linux: `bprm_execve` -> `search_binary_handler`, which
/// tries `load_script` and `load_elf_binary` up to `start_thread`).
pub fn load(
    cwd: &Arc<Inode>,
    target: &ExecTarget,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
) -> KResult<Loaded> {
    load_binary(cwd, &target.inode, &target.filename, target, argv, envp, 0)
}

/// `load` of the file `inode`, which goes by `interp` (`bprm->interp`:
/// the program's name, then each interpreter's), after `depth` `#!`
/// lines.
fn load_binary(
    cwd: &Arc<Inode>,
    inode: &Arc<Inode>,
    interp: &str,
    target: &ExecTarget,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
    depth: usize,
) -> KResult<Loaded> {
    if inode.is_dir() {
        return Err(Errno::EACCES);
    }
    let file = exec_file(inode)?;
    let mut head = [0u8; binfmt_script::BINPRM_BUF_SIZE];
    let got = file.read_at(0, &mut head)?;
    if let Some(shebang) = binfmt_script::parse(&head[..got]) {
        // Linux: `load_script`. The interpreter gets the script's path in
        // place of argv[0], which must still name it once the program runs.
        let shebang = shebang.map_err(|_| Errno::ENOEXEC)?;
        if target.path_inaccessible {
            return Err(Errno::ENOENT);
        }
        if depth == MAX_SCRIPT_DEPTH {
            return Err(Errno::ELOOP);
        }
        let name = core::str::from_utf8(shebang.interp).map_err(|_| Errno::ENOEXEC)?;
        let mut script_argv = vec![shebang.interp.to_vec()];
        script_argv.extend(shebang.arg.map(<[u8]>::to_vec));
        script_argv.push(interp.as_bytes().to_vec());
        script_argv.extend(argv.iter().skip(1).cloned());
        let next = vfs::lookup(cwd, name, true)?;
        return load_binary(cwd, &next, name, target, &script_argv, envp, depth + 1);
    }
    let path = if depth == 0 {
        vfs::find_path(inode).unwrap_or_else(|| target.filename.clone())
    } else {
        vfs::realpath(cwd, interp)?
    };
    let exe = ExecImage {
        path,
        file: Some(inode.clone()),
        cmdline: argv
            .iter()
            .flat_map(|a| a.iter().copied().chain([0]))
            .collect(),
        environ: envp
            .iter()
            .flat_map(|e| e.iter().copied().chain([0]))
            .collect(),
    };
    let mut plan = elf_plan(file)?;
    let owner = inode.owner();
    let cred = target.cred.exec(owner.mode, (owner.uid, owner.gid));
    // A dynamically linked program's interpreter (Linux: opened by path,
    // relative to the caller's directory if relative, and never itself
    // given an interpreter).
    let interp = match &plan.interp {
        Some(name) => {
            let name = core::str::from_utf8(name).map_err(|_| Errno::ENOEXEC)?;
            let inode = vfs::lookup(cwd, name, true)?;
            let interp_plan = elf_plan(exec_file(&inode)?)?;
            Some((inode, interp_plan))
        }
        None => None,
    };
    if plan.is_dyn {
        // Linux's ELF_ET_DYN_BASE, aligned down to the segments' p_align.
        plan = plan
            .with_base(ET_DYN_BASE & !(plan.align - 1))
            .map_err(|_| Errno::ENOEXEC)?;
    }
    let mm = Mm::new()?;
    if let Some(old) = crate::task::current_mm() {
        mm.inherit_flags(&old);
    }
    let mut zero_tails = Vec::new();
    let (vdso, interp_base);
    {
        let mut m = mm.mmap_write_lock();
        let brk = map_segments(&mm, &mut m, inode, &plan, &mut zero_tails)?;
        // Linux: VM_STACK_FLAGS, and the accounting of private memory.
        let stack_flags = VM_DATA_DEFAULT_FLAGS | VM_GROWSDOWN | VM_ACCOUNT;
        map(
            &mm,
            &mut m,
            STACK_TOP - STACK_SIZE,
            STACK_TOP,
            Vma::anon(stack_flags),
        )?;
        m.start_brk = brk;
        m.brk = brk;
        // The interpreter where an mmap of its whole span would go, then
        // the vDSO, in Linux's order (`load_elf_interp`, then
        // `arch_setup_additional_pages`).
        interp_base = match &interp {
            Some((inode, interp_plan)) => {
                let base = interp_area(&m, interp_plan)?;
                let moved = interp_plan.with_base(base).map_err(|_| Errno::ENOEXEC)?;
                map_segments(&mm, &mut m, inode, &moved, &mut zero_tails)?;
                Some((base, moved.entry))
            }
            None => None,
        };
        vdso = map_vdso(&mm, &mut m)?;
        m.vdso = vdso;
    }
    for (addr, len) in zero_tails {
        copy_to_mm(&mm, addr, &vec![0u8; len])?;
    }

    let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
    let envp: Vec<&[u8]> = envp.iter().map(|e| e.as_slice()).collect();
    let mut random = [0u8; 16];
    crate::random::fill(&mut random);
    // Linux's order (`create_elf_tables`, arm64's ARCH_DLINFO first).
    let auxv = [
        (stack::AT_SYSINFO_EHDR, vdso as u64),
        (stack::AT_MINSIGSTKSZ, SIGNAL_MINSIGSTKSZ),
        (stack::AT_HWCAP, HWCAP_FP | HWCAP_ASIMD),
        (stack::AT_PAGESZ, PAGE_SIZE as u64),
        (stack::AT_CLKTCK, crate::task::HZ),
        (stack::AT_PHDR, plan.phdr_vaddr),
        (stack::AT_PHENT, PHENT_SIZE as u64),
        (stack::AT_PHNUM, plan.phnum as u64),
        (stack::AT_BASE, interp_base.map_or(0, |(base, _)| base)),
        (stack::AT_FLAGS, 0),
        (stack::AT_ENTRY, plan.entry),
        (stack::AT_UID, cred.uid as u64),
        (stack::AT_EUID, cred.euid as u64),
        (stack::AT_GID, cred.gid as u64),
        (stack::AT_EGID, cred.egid as u64),
        (stack::AT_SECURE, cred.secure_exec() as u64),
    ];
    let args = ExecArgs {
        argv: &argv,
        envp: &envp,
        execfn: target.filename.as_bytes(),
        random,
        hwcap2: 0,
        platform: ELF_PLATFORM,
        auxv: &auxv,
    };
    let initial = stack::create_elf_tables(STACK_TOP as u64, STACK_SIZE / 4, &args)
        .map_err(|_| Errno::E2BIG)?;
    copy_to_mm(&mm, initial.sp as usize, &initial.bytes)?;
    Ok(Loaded {
        mm,
        // A dynamically linked program starts in its interpreter.
        entry: interp_base.map_or(plan.entry, |(_, entry)| entry),
        sp: initial.sp,
        exe: Arc::new(exe),
        comm: target.comm,
        cred,
    })
}

/// Maps the `PT_LOAD` segments of `plan` from `inode` (Linux: `elf_map`
/// of each, then `padzero` and `set_brk`): file pages as private file
/// mappings, sharing the page cache until written; the rest of the last
/// file page and the pages beyond as zeroed memory (`.bss`), the first
/// to be zeroed by the caller from `zero_tails`. Returns the end of the
/// last segment, where the heap starts.
fn map_segments(
    mm: &Arc<Mm>,
    m: &mut crate::mm::mm_struct::MmMap,
    inode: &Arc<Inode>,
    plan: &LoadPlan,
    zero_tails: &mut Vec<(usize, usize)>,
) -> KResult<usize> {
    let mut end = 0;
    for seg in &plan.segments {
        // As mmap(MAP_PRIVATE) makes them: any right may be added later
        // (ld.so makes text writable to relocate it), private writable
        // memory is accounted. `.bss` is brk-like memory (Linux:
        // `vm_brk_flags`): readable and writable.
        let exec = if seg.prot.exec { VM_EXEC } else { 0 };
        let flags = if seg.prot.read { VM_READ } else { 0 }
            | if seg.prot.write {
                VM_WRITE | VM_ACCOUNT
            } else {
                0
            }
            | exec
            | VM_MAYREAD
            | VM_MAYWRITE
            | VM_MAYEXEC;
        let start = seg.vaddr as usize & !(PAGE_SIZE - 1);
        let file_end = align_up((seg.vaddr + seg.filesz) as usize, PAGE_SIZE);
        let mem_end = align_up((seg.vaddr + seg.memsz) as usize, PAGE_SIZE);
        let file_vma = Vma::new(flags, Some(inode.clone()), seg.offset >> PAGE_SHIFT);
        map(mm, m, start, file_end, file_vma)?;
        let bss = VM_DATA_DEFAULT_FLAGS | VM_ACCOUNT | exec;
        map(mm, m, file_end, mem_end, Vma::anon(bss))?;
        let tail = (seg.vaddr + seg.filesz) as usize;
        if seg.memsz > seg.filesz && !tail.is_multiple_of(PAGE_SIZE) {
            zero_tails.push((tail, (file_end.min(mem_end)) - tail));
        }
        end = end.max(mem_end);
    }
    Ok(end)
}

/// Where the interpreter goes: a free area for the span of its segments,
/// chosen as mmap would choose it for that file (Linux: `load_elf_interp`
/// maps the whole span at the address `get_unmapped_area` gives, then
/// each segment into it).
fn interp_area(m: &crate::mm::mm_struct::MmMap, plan: &LoadPlan) -> KResult<u64> {
    let first = plan.segments.first().ok_or(Errno::ENOEXEC)?;
    let last = plan.segments.last().ok_or(Errno::ENOEXEC)?;
    let low = first.vaddr as usize & !(PAGE_SIZE - 1);
    let span = align_up((last.vaddr + last.memsz) as usize, PAGE_SIZE) - low;
    let offset = first.offset as usize & !(PAGE_SIZE - 1);
    let at = crate::mm::mmap::unmapped_area(m, span, None, true, offset)?;
    Ok((at - low) as u64)
}

/// Makes `loaded` the program of `process` (Linux: `begin_new_exec` and
/// `start_thread`): new address space, close-on-exec files closed, caught
/// signals reset, registers set to start at the entry point.
pub fn commit(process: &Arc<Process>, loaded: Loaded, tf: &mut TrapFrame) {
    // The robust futexes and PI locks the old program held pass on, read
    // in its address space, and its robust list is forgotten (Linux:
    // `exec_mm_release` before `exec_mmap` switches).
    if let Some(u) = &crate::task::current().user {
        crate::task::futex::exec_release(u);
    }
    // The process takes the new address space before this CPU switches to
    // it: a thread preempted in between is switched back in with
    // `process.mm`, so the old one, freed just below, is never live again.
    let old = process.mm.replace(Some(loaded.mm.clone()));
    loaded.mm.activate();
    drop(old);
    // Before the close-on-exec files go: a parent told of the exec by a
    // pipe closing must find setpgid refused (Linux clears PF_FORKNOEXEC
    // in `begin_new_exec` before `do_close_on_exec`).
    process.did_exec.store(true, Ordering::Release);
    process.files.lock().close_on_exec();
    for a in process.actions.lock().iter_mut() {
        if a.handler != SIG_IGN {
            a.handler = SIG_DFL;
        }
    }
    *process.exe.lock() = loaded.exe;
    // Linux: `begin_new_exec`: a program that changes who runs it may not
    // be dumped or looked into by the caller's old self.
    let dumpable = if loaded.cred.secure_exec() { 0 } else { 1 };
    process.dumpable.store(dumpable, Ordering::Release);
    *process.cred.lock() = loaded.cred;
    crate::task::timers::on_exec(process);
    if let Some(u) = &crate::task::current().user {
        *u.comm.lock() = loaded.comm;
        *u.altstack.lock() = crate::task::signal_abi::AltStack::DISABLED;
        crate::task::process::release_vfork_parent(u);
    }
    *tf = TrapFrame::new_user(loaded.entry, loaded.sp);
    write_tpidr_el0(0);
    fpsimd_load(&Default::default());
}

/// A new process running `path`, with no parent and the console as fds
/// 0-2: how the kernel starts init (and how its tests start programs).
pub fn spawn_process(path: &str, argv: &[Vec<u8>], envp: &[Vec<u8>]) -> KResult<Arc<Process>> {
    let root = vfs::root();
    let inode = vfs::lookup(&root, path, true)?;
    exec_file(&inode)?;
    let target = ExecTarget {
        inode,
        filename: alloc::string::String::from(path),
        comm: crate::task::process::comm_of_path(path),
        path_inaccessible: false,
        cred: Cred::root(),
    };
    let loaded = load(&root, &target, argv, envp)?;
    let files = console_on_rootfs()?;
    let pid = crate::task::process::alloc_pid();
    let actions = [Default::default(); crate::task::signal_abi::NSIG as usize];
    let process = Process::new_with_pid(
        pid,
        loaded.mm,
        files,
        root,
        alloc::sync::Weak::new(),
        actions,
    );
    *process.exe.lock() = loaded.exe;
    let frame = TrapFrame::new_user(loaded.entry, loaded.sp);
    let user = crate::task::process::UserThread::new(process.clone(), pid, 0);
    *user.comm.lock() = loaded.comm;
    crate::task::spawn_user(crate::task::process::next_cpu(), user, frame, 0)
        .ok_or(Errno::ENOMEM)?;
    Ok(process)
}

/// execve(2) and execveat(2) for the calling thread, once the program
/// was opened (`open_execat`) and the arguments copied in.
pub fn execve(
    tf: &mut TrapFrame,
    target: &ExecTarget,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
) -> KResult<()> {
    let process = crate::task::current_process().ok_or(Errno::EINVAL)?;
    if process.live_threads().len() > 1 {
        return Err(Errno::EAGAIN);
    }
    let cwd = process.cwd.lock().clone();
    let loaded = load(&cwd, target, argv, envp)?;
    commit(&process, loaded, tf);
    Ok(())
}

/// init's fds 0, 1 and 2: the console, opened for reading, then twice for
/// writing (Linux: `console_on_rootfs`).
fn console_on_rootfs() -> KResult<vfs::FdTable> {
    let inode = vfs::lookup(&vfs::root(), "/dev/console", true)?;
    let mut files = vfs::FdTable::new();
    for flags in [vfs::O_RDONLY, vfs::O_WRONLY, vfs::O_WRONLY] {
        files.install(vfs::File::new(inode.clone(), flags)?)?;
    }
    Ok(files)
}
