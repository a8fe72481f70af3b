//! The Linux AArch64 system-call interface (Linux: `arch/arm64/kernel/
//! syscall.c`, numbers from `include/uapi/asm-generic/unistd.h`). `svc #0`
//! with the number in x8 and arguments in x0-x5 lands in `syscall()`, which
//! dispatches to one function per call, grouped by area in the files
//! beside this one. A result is returned in x0: the value, or -errno.
//! Unimplemented calls return ENOSYS, logged once each under `strace`.
//! No `unsafe` here: user memory is reached through `mm::uaccess`.
#![deny(unsafe_code)]

mod fs;
mod futex;
mod ipc;
mod mm;
mod mount;
mod net;
mod poll;
mod proc;
mod signal;
mod strace;
mod syslog;
mod time;

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `strace` on the kernel command line: log every system call and its
/// result, for following what a program does.
pub static STRACE: AtomicBool = AtomicBool::new(false);

use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};
use uapi::unistd::*;

/// Every call's result: a non-negative value or an errno.
pub type SysResult = KResult<i64>;

/// Most bytes one read, write, sendfile or getrandom moves (Linux:
/// `MAX_RW_COUNT`, INT_MAX rounded down to a page).
pub const MAX_RW_COUNT: usize = 0x7fff_f000;

/// Calls logged as unimplemented already (one bit per number below 1024).
static LOGGED: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];

/// The calling process's memory, for `strace` to show strings from.
struct Uaccess;

impl strace::UserMemory for Uaccess {
    fn string(&self, addr: u64) -> Option<alloc::vec::Vec<u8>> {
        crate::mm::uaccess::strncpy_bytes_from_user(addr as usize, 4096).ok()
    }
    fn bytes(&self, addr: u64, len: usize) -> Option<alloc::vec::Vec<u8>> {
        let mut buf = alloc::vec![0; len];
        crate::mm::uaccess::copy_from_user(&mut buf, addr as usize).ok()?;
        Some(buf)
    }
}

/// Which file an extended-attribute call names: each comes as the path
/// call `base`, then its `l` (link itself) and `f` (descriptor) twins.
fn xattr_target(nr: usize, base: usize, arg: u64) -> fs::xattr::Target {
    match nr - base {
        0 => fs::xattr::Target::Path(arg as usize),
        1 => fs::xattr::Target::LinkPath(arg as usize),
        _ => fs::xattr::Target::Fd(arg as i32),
    }
}

/// Under strace, logs once per number that system call `nr` is not
/// implemented and got ENOSYS.
fn log_enosys(nr: usize) {
    // Programs probe for calls and fall back (glibc: rseq, clone3...), so
    // the line is for someone following one with `strace`.
    if !STRACE.load(Ordering::Relaxed) {
        return;
    }
    if nr < 1024 {
        let bit = 1 << (nr % 64);
        if LOGGED[nr / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return;
        }
    }
    println!("syscall: {} not implemented (ENOSYS)", nr);
}

/// Entry from `handle_el0_sync` for `svc #0`. The arms use Linux's names
/// for the numbers (`__NR_openat`), lower case and all.
#[allow(non_upper_case_globals)]
pub fn syscall(tf: &mut TrapFrame) {
    let nr = tf.syscall_nr();
    let a = [
        tf.arg(0),
        tf.arg(1),
        tf.arg(2),
        tf.arg(3),
        tf.arg(4),
        tf.arg(5),
    ];
    let traced = STRACE
        .load(Ordering::Relaxed)
        .then(|| strace::entry(&Uaccess, nr, &a));
    let result = match nr {
        // Files (fs.rs).
        __NR_getcwd => fs::getcwd(a[0] as usize, a[1] as usize),
        __NR_dup => fs::file::dup(a[0] as i32),
        __NR_dup3 => fs::file::dup3(a[0] as i32, a[1] as i32, a[2] as u32),
        __NR_fcntl => fs::file::fcntl(a[0] as i32, a[1] as u32, a[2]),
        __NR_ioctl => fs::file::ioctl(a[0] as i32, a[1] as u32, a[2] as usize),
        __NR_flock => fs::file::flock(a[0] as i32, a[1] as u32),
        __NR_mknodat => fs::namei::mknodat(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        __NR_mkdirat => fs::namei::mkdirat(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_unlinkat => fs::namei::unlinkat(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_symlinkat => fs::namei::symlinkat(a[0] as usize, a[1] as i32, a[2] as usize),
        __NR_linkat => fs::namei::linkat(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_renameat => {
            fs::namei::renameat2(a[0] as i32, a[1] as usize, a[2] as i32, a[3] as usize, 0)
        }
        __NR_umount2 => mount::umount2(a[0] as usize, a[1] as u32),
        __NR_mount => mount::mount(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3],
            a[4] as usize,
        ),
        __NR_statfs => fs::stat::statfs(a[0] as usize, a[1] as usize),
        __NR_fstatfs => fs::stat::fstatfs(a[0] as i32, a[1] as usize),
        __NR_truncate => fs::open::truncate(a[0] as usize, a[1] as i64),
        __NR_ftruncate => fs::open::ftruncate(a[0] as i32, a[1] as i64),
        __NR_fallocate => fs::open::fallocate(a[0] as i32, a[1] as u32, a[2] as i64, a[3] as i64),
        __NR_faccessat => fs::open::faccessat2(a[0] as i32, a[1] as usize, a[2] as u32, 0),
        __NR_chdir => fs::open::chdir(a[0] as usize),
        __NR_fchdir => fs::open::fchdir(a[0] as i32),
        __NR_fchmod => fs::open::fchmod(a[0] as i32, a[1] as u32),
        __NR_fchmodat => fs::open::fchmodat2(a[0] as i32, a[1] as usize, a[2] as u32, 0),
        __NR_fchownat => fs::open::fchownat(
            a[0] as i32,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as u32,
        ),
        __NR_fchown => fs::open::fchown(a[0] as i32, a[1] as u32, a[2] as u32),
        __NR_openat => fs::open::openat(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        __NR_close => fs::open::close(a[0] as i32),
        __NR_pipe2 => fs::pipe2(a[0] as usize, a[1] as u32),
        __NR_getdents64 => fs::getdents64(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_lseek => fs::read_write::lseek(a[0] as i32, a[1] as i64, a[2] as u32),
        __NR_read => fs::read_write::read(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_write => fs::read_write::write(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_readv => fs::read_write::readv(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_writev => fs::read_write::writev(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_vmsplice => {
            fs::read_write::vmsplice(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32)
        }
        __NR_pread64 => {
            fs::read_write::pread64(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as i64)
        }
        __NR_pwrite64 => {
            fs::read_write::pwrite64(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as i64)
        }
        __NR_sendfile => {
            fs::read_write::sendfile(a[0] as i32, a[1] as i32, a[2] as usize, a[3] as usize)
        }
        __NR_readlinkat => {
            fs::stat::readlinkat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize)
        }
        __NR_newfstatat => {
            fs::stat::newfstatat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32)
        }
        __NR_fstat => fs::stat::fstat(a[0] as i32, a[1] as usize),
        __NR_setxattr | __NR_lsetxattr | __NR_fsetxattr => fs::xattr::setxattr(
            xattr_target(nr, __NR_setxattr, a[0]),
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_getxattr | __NR_lgetxattr | __NR_fgetxattr => fs::xattr::getxattr(
            xattr_target(nr, __NR_getxattr, a[0]),
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
        ),
        __NR_listxattr | __NR_llistxattr | __NR_flistxattr => fs::xattr::listxattr(
            xattr_target(nr, __NR_listxattr, a[0]),
            a[1] as usize,
            a[2] as usize,
        ),
        __NR_removexattr | __NR_lremovexattr | __NR_fremovexattr => {
            fs::xattr::removexattr(xattr_target(nr, __NR_removexattr, a[0]), a[1] as usize)
        }
        __NR_fsync | __NR_fdatasync => fs::fsync(a[0] as i32),
        __NR_utimensat => fs::utimensat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        __NR_umask => fs::open::umask(a[0] as u32),
        __NR_syncfs => fs::syncfs(a[0] as i32),
        __NR_renameat2 => fs::namei::renameat2(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_memfd_create => fs::memfd_create(a[0] as usize, a[1] as u32),
        __NR_statx => fs::stat::statx(
            a[0] as i32,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as usize,
        ),
        __NR_copy_file_range => fs::read_write::copy_file_range(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
            a[5] as u32,
        ),
        __NR_close_range => fs::file::close_range(a[0] as u32, a[1] as u32, a[2] as u32),
        __NR_move_mount => mount::move_mount(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_fsopen => mount::fsopen(a[0] as usize, a[1] as u32),
        __NR_fsconfig => mount::fsconfig(
            a[0] as i32,
            a[1] as u32,
            a[2] as usize,
            a[3] as usize,
            a[4] as i32,
        ),
        __NR_fsmount => mount::fsmount(a[0] as i32, a[1] as u32, a[2] as u32),
        __NR_faccessat2 => {
            fs::open::faccessat2(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32)
        }
        __NR_fchmodat2 => fs::open::fchmodat2(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        // Readiness and event files (poll.rs).
        __NR_eventfd2 => poll::eventfd2(a[0] as u32, a[1] as u32),
        __NR_epoll_create1 => poll::epoll_create1(a[0] as u32),
        __NR_epoll_ctl => poll::epoll_ctl(a[0] as i32, a[1] as i32, a[2] as i32, a[3] as usize),
        __NR_epoll_pwait => poll::epoll_pwait(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as i32,
            a[4] as usize,
            a[5] as usize,
        ),
        __NR_pselect6 => poll::pselect6(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
            a[5] as usize,
        ),
        __NR_ppoll => poll::ppoll(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
        ),
        __NR_signalfd4 => poll::signalfd4(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        __NR_timerfd_create => poll::timerfd_create(a[0] as i32, a[1] as u32),
        __NR_timerfd_settime => {
            poll::timerfd_settime(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize)
        }
        __NR_timerfd_gettime => poll::timerfd_gettime(a[0] as i32, a[1] as usize),
        __NR_epoll_pwait2 => poll::epoll_pwait2(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
            a[5] as usize,
        ),
        // Sockets (net.rs).
        __NR_socket => net::socket(a[0] as i32, a[1] as i32, a[2] as i32),
        __NR_socketpair => net::socketpair(a[0] as i32, a[1] as i32, a[2] as i32, a[3] as usize),
        __NR_bind => net::bind(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_listen => net::listen(a[0] as i32, a[1] as i32),
        __NR_accept => net::accept4(a[0] as i32, a[1] as usize, a[2] as usize, 0),
        __NR_connect => net::connect(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_getsockname => net::getsockname(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_getpeername => net::getpeername(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_sendto => net::sendto(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
            a[5] as u32,
        ),
        __NR_recvfrom => net::recvfrom(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
            a[5] as usize,
        ),
        __NR_setsockopt => net::setsockopt(
            a[0] as i32,
            a[1] as i32,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_getsockopt => net::getsockopt(
            a[0] as i32,
            a[1] as i32,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
        ),
        __NR_shutdown => net::shutdown(a[0] as i32, a[1] as i32),
        __NR_sendmsg => net::sendmsg(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_recvmsg => net::recvmsg(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_accept4 => net::accept4(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        // Processes and threads (proc.rs).
        __NR_exit => proc::exit(a[0] as i32),
        __NR_exit_group => proc::exit_group(a[0] as i32),
        __NR_waitid => proc::waitid(
            a[0] as i32,
            a[1] as i32,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        __NR_set_tid_address => proc::set_tid_address(a[0] as usize),
        __NR_unshare => proc::unshare(a[0]),
        __NR_futex => futex::futex(
            a[0] as usize,
            a[1] as u32,
            a[2] as u32,
            a[3] as usize,
            a[4] as usize,
            a[5] as u32,
        ),
        __NR_set_robust_list => futex::set_robust_list(a[0] as usize, a[1] as usize),
        __NR_get_robust_list => futex::get_robust_list(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_mq_open => ipc::mq_open(a[0] as usize, a[1] as u32, a[2] as u32, a[3] as usize),
        __NR_mq_unlink => ipc::mq_unlink(a[0] as usize),
        __NR_mq_timedsend => ipc::mq_timedsend(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        __NR_mq_timedreceive => ipc::mq_timedreceive(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
        ),
        __NR_mq_notify => ipc::mq_notify(a[0] as i32, a[1] as usize),
        __NR_mq_getsetattr => ipc::mq_getsetattr(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_shmget => ipc::shmget(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_shmctl => ipc::shmctl(a[0] as i32, a[1] as i32, a[2] as usize),
        __NR_shmat => ipc::shmat(a[0] as i32, a[1] as usize, a[2] as u32),
        __NR_shmdt => ipc::shmdt(a[0] as usize),
        __NR_futex_waitv => futex::futex_waitv(
            a[0] as usize,
            a[1] as u32,
            a[2] as u32,
            a[3] as usize,
            a[4] as i32,
        ),
        __NR_reboot => proc::reboot(a[0] as u32, a[1] as u32, a[2] as u32),
        __NR_sched_setparam => proc::sched_setparam(a[0] as i32, a[1] as usize),
        __NR_sched_setscheduler => {
            proc::sched_setscheduler(a[0] as i32, a[1] as i32, a[2] as usize)
        }
        __NR_sched_getscheduler => proc::sched_getscheduler(a[0] as i32),
        __NR_sched_getparam => proc::sched_getparam(a[0] as i32, a[1] as usize),
        __NR_sched_setaffinity => {
            proc::sched_setaffinity(a[0] as i32, a[1] as usize, a[2] as usize)
        }
        __NR_sched_getaffinity => {
            proc::sched_getaffinity(a[0] as i32, a[1] as usize, a[2] as usize)
        }
        __NR_sched_yield => proc::sched_yield(),
        __NR_sched_get_priority_max => proc::sched_get_priority_max(a[0] as i32),
        __NR_sched_get_priority_min => proc::sched_get_priority_min(a[0] as i32),
        __NR_setpriority => proc::setpriority(a[0] as i32, a[1] as i32, a[2] as i32),
        __NR_getpriority => proc::getpriority(a[0] as i32, a[1] as i32),
        __NR_times => proc::times(a[0] as usize),
        __NR_setpgid => proc::setpgid(a[0] as i32, a[1] as i32),
        __NR_getpgid => proc::getpgid(a[0] as i32),
        __NR_getsid => proc::getsid(a[0] as i32),
        __NR_setsid => proc::setsid(),
        __NR_uname => proc::uname(a[0] as usize),
        __NR_syslog => syslog::syslog(a[0] as i32, a[1] as usize, a[2] as i32),
        __NR_prctl => proc::prctl(a[0] as i32, a[1], [a[2], a[3], a[4]]),
        __NR_getrlimit | __NR_prlimit64 => proc::prlimit64(nr, a),
        __NR_setrlimit => proc::setrlimit(a[0], a[1] as usize),
        __NR_getrusage => proc::getrusage(a[0] as i32, a[1] as usize),
        __NR_getresuid | __NR_getresgid => {
            proc::getresid(nr, a[0] as usize, a[1] as usize, a[2] as usize)
        }
        __NR_setregid | __NR_setreuid => proc::setreid(nr, a[0] as u32, a[1] as u32),
        __NR_setgid | __NR_setuid => proc::setid(nr, a[0] as u32),
        __NR_setresuid | __NR_setresgid => {
            proc::setresid(nr, a[0] as u32, a[1] as u32, a[2] as u32)
        }
        __NR_setfsuid | __NR_setfsgid => proc::setfsid(nr, a[0] as u32),
        __NR_getgroups => proc::getgroups(a[0] as i32, a[1] as usize),
        __NR_setgroups => proc::setgroups(a[0] as i32, a[1] as usize),
        __NR_capget => proc::capget(a[0] as usize, a[1] as usize),
        __NR_capset => proc::capset(a[0] as usize, a[1] as usize),
        __NR_getpid => proc::getpid(),
        __NR_getppid => proc::getppid(),
        __NR_getuid | __NR_geteuid | __NR_getgid | __NR_getegid => proc::getid(nr),
        __NR_gettid => proc::gettid(),
        __NR_sysinfo => proc::sysinfo(a[0] as usize),
        __NR_clone => proc::clone(tf, a[0], a[1], a[2] as usize, a[3], a[4] as usize),
        __NR_execve => proc::execve(tf, a[0] as usize, a[1] as usize, a[2] as usize),
        __NR_execveat => proc::execveat(
            tf,
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as u32,
        ),
        __NR_wait4 => proc::wait4(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as usize),
        __NR_getrandom => proc::getrandom(a[0] as usize, a[1] as usize, a[2] as u32),
        __NR_setns => proc::setns(a[0] as i32, a[1] as i32),
        __NR_kcmp => proc::kcmp(a[0] as i32, a[1] as i32, a[2] as i32, a[3], a[4]),
        __NR_pidfd_open => proc::pidfd_open(a[0] as i32, a[1] as u32),
        __NR_clone3 => proc::clone3(tf, a[0] as usize, a[1] as usize),
        __NR_pidfd_getfd => proc::pidfd_getfd(a[0] as i32, a[1] as i32, a[2] as u32),
        // Memory (mm.rs).
        __NR_brk => mm::brk(a[0] as usize),
        __NR_munmap => mm::munmap(a[0] as usize, a[1] as usize),
        __NR_mremap => mm::mremap(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        __NR_mmap => mm::mmap(
            a[0] as usize,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as i32,
            a[5] as i64,
        ),
        __NR_mprotect => mm::mprotect(a[0] as usize, a[1] as usize, a[2] as u32),
        __NR_msync => mm::msync(a[0] as usize, a[1] as usize, a[2] as u32),
        __NR_mlock => mm::mlock(a[0] as usize, a[1] as usize),
        __NR_munlock => mm::munlock(a[0] as usize, a[1] as usize),
        __NR_mlockall => mm::mlockall(a[0] as u32),
        __NR_munlockall => mm::munlockall(),
        __NR_mincore => mm::mincore(a[0] as usize, a[1] as usize, a[2] as usize),
        __NR_madvise => mm::madvise(a[0] as usize, a[1] as usize, a[2] as u32),
        __NR_mlock2 => mm::mlock2(a[0] as usize, a[1] as usize, a[2] as u32),
        __NR_mseal => mm::mseal(a[0] as usize, a[1] as usize, a[2]),
        // Signals (signal.rs).
        __NR_kill => signal::kill(a[0] as i32, a[1] as i32),
        __NR_tkill => signal::tkill(a[0] as i32, a[1] as i32),
        __NR_tgkill => signal::tgkill(a[0] as i32, a[1] as i32, a[2] as i32),
        __NR_sigaltstack => signal::sigaltstack(tf, a[0] as usize, a[1] as usize),
        __NR_rt_sigsuspend => signal::rt_sigsuspend(a[0] as usize, a[1] as usize),
        __NR_rt_sigaction => {
            signal::rt_sigaction(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize)
        }
        __NR_rt_sigprocmask => {
            signal::rt_sigprocmask(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize)
        }
        __NR_rt_sigtimedwait => {
            signal::rt_sigtimedwait(a[0] as usize, a[1] as usize, a[2] as usize, a[3] as usize)
        }
        __NR_pidfd_send_signal => {
            signal::pidfd_send_signal(a[0] as i32, a[1] as i32, a[2] as usize, a[3] as u32)
        }
        __NR_rt_sigreturn => {
            crate::task::signal::sigreturn(tf);
            // x0 is what the frame restored: leave it.
            return;
        }
        // Time (time.rs).
        __NR_nanosleep => time::nanosleep(a[0] as usize, a[1] as usize),
        __NR_getitimer => time::getitimer(a[0] as i32, a[1] as usize),
        __NR_setitimer => time::setitimer(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_timer_create => time::timer_create(a[0] as i32, a[1] as usize, a[2] as usize),
        __NR_timer_gettime => time::timer_gettime(a[0] as i32, a[1] as usize),
        __NR_timer_getoverrun => time::timer_getoverrun(a[0] as i32),
        __NR_timer_settime => {
            time::timer_settime(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize)
        }
        __NR_timer_delete => time::timer_delete(a[0] as i32),
        __NR_clock_settime => time::clock_settime(a[0] as i32, a[1] as usize),
        __NR_clock_gettime => time::clock_gettime(a[0] as i32, a[1] as usize),
        __NR_clock_getres => time::clock_getres(a[0] as i32, a[1] as usize),
        __NR_clock_nanosleep => {
            time::clock_nanosleep(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize)
        }
        __NR_gettimeofday => time::gettimeofday(a[0] as usize, a[1] as usize),
        __NR_adjtimex => time::adjtimex(a[0] as usize),
        __NR_clock_adjtime => time::clock_adjtime(a[0] as i32, a[1] as usize),
        _ => {
            log_enosys(nr);
            Err(Errno::ENOSYS)
        }
    };
    // Sleeps, futex waits with a deadline, sigsuspend, sigtimedwait, poll,
    // select and epoll_wait report EINTR even under SA_RESTART, as on
    // Linux. The rest, and ERESTARTSYS, run again after an SA_RESTART
    // handler or none, and are EINTR otherwise.
    let restartable = match result {
        Err(Errno::ERESTARTSYS) => true,
        Err(Errno::EINTR) => !matches!(nr, 22 | 72 | 73 | 98 | 101 | 115 | 133 | 137 | 441),
        _ => false,
    };
    let result = result.map_err(|e| match e {
        Errno::ERESTARTSYS => Errno::EINTR,
        e => e,
    });
    // execve rewrote the registers: it returns 0 in the new program's x0.
    let ret = match result {
        Ok(v) => v,
        Err(e) => e.as_neg(),
    };
    if restartable {
        if let Some(u) = &crate::task::current().user {
            u.restart_x0.store(a[0], Ordering::Relaxed);
            u.restart_pending.store(true, Ordering::Relaxed);
            u.set_sigpending();
        }
    }
    if let Some(given) = traced {
        let tid = crate::task::current().user.as_ref().map_or(0, |u| u.tid);
        println!(
            "{}",
            strace::line(&Uaccess, &given, tid, nr, &a, ret as i64)
        );
    }
    // Back to the svc with the first argument back, to run again once the
    // signal that interrupted it is handled, handler or not (Linux: arm64's
    // `do_signal` on -ERESTARTNOINTR).
    if result == Err(Errno::ERESTARTNOINTR) {
        tf.set_reg(0, a[0]);
        tf.set_pc(tf.pc() - 4);
        return;
    }
    tf.set_return(ret);
}
