//! The Linux AArch64 system-call interface (Linux: `arch/arm64/kernel/
//! syscall.c`, numbers from `include/uapi/asm-generic/unistd.h`). `svc #0`
//! with the number in x8 and arguments in x0-x5 lands in `syscall()`, which
//! dispatches to one function per call, grouped by area in the files
//! beside this one. A result is returned in x0: the value, or -errno.
//! Unimplemented calls return ENOSYS, logged once each under `strace`.

mod fs;
mod futex;
mod ipc;
pub use fs::console_files;
mod mm;
mod mount;
mod net;
mod poll;
mod proc;
mod signal;
mod time;
pub use time::uptime_ns;

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `strace` on the kernel command line: log every system call and its
/// result, for following what a program does.
pub static STRACE: AtomicBool = AtomicBool::new(false);

use crate::arch::trap::TrapFrame;
use crate::errno::{Errno, KResult};

/// Every call's result: a non-negative value or an errno.
pub type SysResult = KResult<i64>;

/// Most bytes one read, write, sendfile or getrandom moves (Linux:
/// `MAX_RW_COUNT`, INT_MAX rounded down to a page).
pub const MAX_RW_COUNT: usize = 0x7fff_f000;

/// Calls logged as unimplemented already (one bit per number below 1024).
static LOGGED: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];

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

/// Entry from `handle_el0_sync` for `svc #0`.
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
    let result = match nr {
        // Files (fs.rs).
        17 => fs::getcwd(a[0] as usize, a[1] as usize),
        23 => fs::dup(a[0] as i32),
        24 => fs::dup3(a[0] as i32, a[1] as i32, a[2] as u32),
        25 => fs::fcntl(a[0] as i32, a[1] as u32, a[2]),
        29 => fs::ioctl(a[0] as i32, a[1] as u32, a[2] as usize),
        32 => fs::flock(a[0] as i32, a[1] as u32),
        33 => fs::mknodat(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        34 => fs::mkdirat(a[0] as i32, a[1] as usize, a[2] as u32),
        35 => fs::unlinkat(a[0] as i32, a[1] as usize, a[2] as u32),
        36 => fs::symlinkat(a[0] as usize, a[1] as i32, a[2] as usize),
        37 => fs::linkat(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        38 => fs::renameat2(a[0] as i32, a[1] as usize, a[2] as i32, a[3] as usize, 0),
        39 => mount::umount2(a[0] as usize, a[1] as u32),
        40 => mount::mount(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3],
            a[4] as usize,
        ),
        43 => fs::statfs(a[0] as usize, a[1] as usize),
        44 => fs::fstatfs(a[0] as i32, a[1] as usize),
        45 => fs::truncate(a[0] as usize, a[1] as i64),
        46 => fs::ftruncate(a[0] as i32, a[1] as i64),
        47 => fs::fallocate(a[0] as i32, a[1] as u32, a[2] as i64, a[3] as i64),
        48 => fs::faccessat2(a[0] as i32, a[1] as usize, a[2] as u32, 0),
        49 => fs::chdir(a[0] as usize),
        50 => fs::fchdir(a[0] as i32),
        52 => fs::fchmod(a[0] as i32, a[1] as u32),
        53 => fs::fchmodat2(a[0] as i32, a[1] as usize, a[2] as u32, 0),
        54 => fs::fchownat(
            a[0] as i32,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as u32,
        ),
        55 => fs::fchown(a[0] as i32, a[1] as u32, a[2] as u32),
        56 => fs::openat(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        57 => fs::close(a[0] as i32),
        59 => fs::pipe2(a[0] as usize, a[1] as u32),
        61 => fs::getdents64(a[0] as i32, a[1] as usize, a[2] as usize),
        62 => fs::lseek(a[0] as i32, a[1] as i64, a[2] as u32),
        63 => fs::read(a[0] as i32, a[1] as usize, a[2] as usize),
        64 => fs::write(a[0] as i32, a[1] as usize, a[2] as usize),
        65 => fs::readv(a[0] as i32, a[1] as usize, a[2] as usize),
        66 => fs::writev(a[0] as i32, a[1] as usize, a[2] as usize),
        75 => fs::vmsplice(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        67 => fs::pread64(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as i64),
        68 => fs::pwrite64(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as i64),
        71 => fs::sendfile(a[0] as i32, a[1] as i32, a[2] as usize, a[3] as usize),
        78 => fs::readlinkat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize),
        79 => fs::newfstatat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        80 => fs::fstat(a[0] as i32, a[1] as usize),
        82 | 83 => fs::fsync(a[0] as i32),
        88 => fs::utimensat(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        166 => fs::umask(a[0] as u32),
        267 => fs::syncfs(a[0] as i32),
        276 => fs::renameat2(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        279 => fs::memfd_create(a[0] as usize, a[1] as u32),
        291 => fs::statx(
            a[0] as i32,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as usize,
        ),
        285 => fs::copy_file_range(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
            a[5] as u32,
        ),
        436 => fs::close_range(a[0] as u32, a[1] as u32, a[2] as u32),
        429 => mount::move_mount(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        430 => mount::fsopen(a[0] as usize, a[1] as u32),
        431 => mount::fsconfig(
            a[0] as i32,
            a[1] as u32,
            a[2] as usize,
            a[3] as usize,
            a[4] as i32,
        ),
        432 => mount::fsmount(a[0] as i32, a[1] as u32, a[2] as u32),
        439 => fs::faccessat2(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        452 => fs::fchmodat2(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as u32),
        // Readiness and event files (poll.rs).
        19 => poll::eventfd2(a[0] as u32, a[1] as u32),
        20 => poll::epoll_create1(a[0] as u32),
        21 => poll::epoll_ctl(a[0] as i32, a[1] as i32, a[2] as i32, a[3] as usize),
        22 => poll::epoll_pwait(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as i32,
            a[4] as usize,
            a[5] as usize,
        ),
        72 => poll::pselect6(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
            a[5] as usize,
        ),
        73 => poll::ppoll(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
        ),
        74 => poll::signalfd4(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        85 => poll::timerfd_create(a[0] as i32, a[1] as u32),
        86 => poll::timerfd_settime(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize),
        87 => poll::timerfd_gettime(a[0] as i32, a[1] as usize),
        441 => poll::epoll_pwait2(
            a[0] as i32,
            a[1] as usize,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
            a[5] as usize,
        ),
        // Sockets (net.rs).
        198 => net::socket(a[0] as i32, a[1] as i32, a[2] as i32),
        199 => net::socketpair(a[0] as i32, a[1] as i32, a[2] as i32, a[3] as usize),
        200 => net::bind(a[0] as i32, a[1] as usize, a[2] as u32),
        201 => net::listen(a[0] as i32, a[1] as i32),
        202 => net::accept4(a[0] as i32, a[1] as usize, a[2] as usize, 0),
        203 => net::connect(a[0] as i32, a[1] as usize, a[2] as u32),
        204 => net::getsockname(a[0] as i32, a[1] as usize, a[2] as usize),
        205 => net::getpeername(a[0] as i32, a[1] as usize, a[2] as usize),
        206 => net::sendto(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
            a[5] as u32,
        ),
        207 => net::recvfrom(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
            a[5] as usize,
        ),
        208 => net::setsockopt(
            a[0] as i32,
            a[1] as i32,
            a[2] as i32,
            a[3] as usize,
            a[4] as u32,
        ),
        209 => net::getsockopt(
            a[0] as i32,
            a[1] as i32,
            a[2] as i32,
            a[3] as usize,
            a[4] as usize,
        ),
        210 => net::shutdown(a[0] as i32, a[1] as i32),
        211 => net::sendmsg(a[0] as i32, a[1] as usize, a[2] as u32),
        212 => net::recvmsg(a[0] as i32, a[1] as usize, a[2] as u32),
        242 => net::accept4(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as u32),
        // Processes and threads (proc.rs).
        93 => proc::exit(a[0] as i32),
        94 => proc::exit_group(a[0] as i32),
        95 => proc::waitid(
            a[0] as i32,
            a[1] as i32,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        96 => proc::set_tid_address(a[0] as usize),
        97 => proc::unshare(a[0]),
        98 => futex::futex(
            a[0] as usize,
            a[1] as u32,
            a[2] as u32,
            a[3] as usize,
            a[4] as usize,
            a[5] as u32,
        ),
        99 => futex::set_robust_list(a[0] as usize, a[1] as usize),
        100 => futex::get_robust_list(a[0] as i32, a[1] as usize, a[2] as usize),
        180 => ipc::mq_open(a[0] as usize, a[1] as u32, a[2] as u32, a[3] as usize),
        181 => ipc::mq_unlink(a[0] as usize),
        182 => ipc::mq_timedsend(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        183 => ipc::mq_timedreceive(
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as usize,
        ),
        184 => ipc::mq_notify(a[0] as i32, a[1] as usize),
        185 => ipc::mq_getsetattr(a[0] as i32, a[1] as usize, a[2] as usize),
        194 => ipc::shmget(a[0] as i32, a[1] as usize, a[2] as u32),
        195 => ipc::shmctl(a[0] as i32, a[1] as i32, a[2] as usize),
        196 => ipc::shmat(a[0] as i32, a[1] as usize, a[2] as u32),
        197 => ipc::shmdt(a[0] as usize),
        449 => futex::futex_waitv(
            a[0] as usize,
            a[1] as u32,
            a[2] as u32,
            a[3] as usize,
            a[4] as i32,
        ),
        142 => proc::reboot(a[0] as u32, a[1] as u32, a[2] as u32),
        118 => proc::sched_setparam(a[0] as i32, a[1] as usize),
        119 => proc::sched_setscheduler(a[0] as i32, a[1] as i32, a[2] as usize),
        120 => proc::sched_getscheduler(a[0] as i32),
        121 => proc::sched_getparam(a[0] as i32, a[1] as usize),
        122 => proc::sched_setaffinity(a[0] as i32, a[1] as usize, a[2] as usize),
        123 => proc::sched_getaffinity(a[0] as i32, a[1] as usize, a[2] as usize),
        124 => proc::sched_yield(),
        125 => proc::sched_get_priority_max(a[0] as i32),
        126 => proc::sched_get_priority_min(a[0] as i32),
        140 => proc::setpriority(a[0] as i32, a[1] as i32, a[2] as i32),
        141 => proc::getpriority(a[0] as i32, a[1] as i32),
        153 => proc::times(a[0] as usize),
        154 => proc::setpgid(a[0] as i32, a[1] as i32),
        155 => proc::getpgid(a[0] as i32),
        156 => proc::getsid(a[0] as i32),
        157 => proc::setsid(),
        160 => proc::uname(a[0] as usize),
        167 => proc::prctl(a[0] as i32, a[1], [a[2], a[3], a[4]]),
        163 | 261 => proc::prlimit64(nr, a),
        164 => proc::setrlimit(a[0], a[1] as usize),
        165 => proc::getrusage(a[0] as i32, a[1] as usize),
        148 | 150 => proc::getresid(nr, a[0] as usize, a[1] as usize, a[2] as usize),
        143 | 145 => proc::setreid(nr, a[0] as u32, a[1] as u32),
        144 | 146 => proc::setid(nr, a[0] as u32),
        147 | 149 => proc::setresid(nr, a[0] as u32, a[1] as u32, a[2] as u32),
        151 | 152 => proc::setfsid(nr, a[0] as u32),
        158 => proc::getgroups(a[0] as i32, a[1] as usize),
        159 => proc::setgroups(a[0] as i32, a[1] as usize),
        90 => proc::capget(a[0] as usize, a[1] as usize),
        91 => proc::capset(a[0] as usize, a[1] as usize),
        172 => proc::getpid(),
        173 => proc::getppid(),
        174..=177 => proc::getid(nr),
        178 => proc::gettid(),
        179 => proc::sysinfo(a[0] as usize),
        220 => proc::clone(tf, a[0], a[1], a[2] as usize, a[3], a[4] as usize),
        221 => proc::execve(tf, a[0] as usize, a[1] as usize, a[2] as usize),
        281 => proc::execveat(
            tf,
            a[0] as i32,
            a[1] as usize,
            a[2] as usize,
            a[3] as usize,
            a[4] as u32,
        ),
        260 => proc::wait4(a[0] as i32, a[1] as usize, a[2] as u32, a[3] as usize),
        278 => proc::getrandom(a[0] as usize, a[1] as usize, a[2] as u32),
        268 => proc::setns(a[0] as i32, a[1] as i32),
        272 => proc::kcmp(a[0] as i32, a[1] as i32, a[2] as i32, a[3], a[4]),
        434 => proc::pidfd_open(a[0] as i32, a[1] as u32),
        435 => proc::clone3(tf, a[0] as usize, a[1] as usize),
        438 => proc::pidfd_getfd(a[0] as i32, a[1] as i32, a[2] as u32),
        // Memory (mm.rs).
        214 => mm::brk(a[0] as usize),
        215 => mm::munmap(a[0] as usize, a[1] as usize),
        216 => mm::mremap(
            a[0] as usize,
            a[1] as usize,
            a[2] as usize,
            a[3] as u32,
            a[4] as usize,
        ),
        222 => mm::mmap(
            a[0] as usize,
            a[1] as usize,
            a[2] as u32,
            a[3] as u32,
            a[4] as i32,
            a[5] as i64,
        ),
        226 => mm::mprotect(a[0] as usize, a[1] as usize, a[2] as u32),
        227 => mm::msync(a[0] as usize, a[1] as usize, a[2] as u32),
        228 => mm::mlock(a[0] as usize, a[1] as usize),
        229 => mm::munlock(a[0] as usize, a[1] as usize),
        230 => mm::mlockall(a[0] as u32),
        231 => mm::munlockall(),
        232 => mm::mincore(a[0] as usize, a[1] as usize, a[2] as usize),
        233 => mm::madvise(a[0] as usize, a[1] as usize, a[2] as u32),
        284 => mm::mlock2(a[0] as usize, a[1] as usize, a[2] as u32),
        462 => mm::mseal(a[0] as usize, a[1] as usize, a[2]),
        // Signals (signal.rs).
        129 => signal::kill(a[0] as i32, a[1] as i32),
        130 => signal::tkill(a[0] as i32, a[1] as i32),
        131 => signal::tgkill(a[0] as i32, a[1] as i32, a[2] as i32),
        132 => signal::sigaltstack(tf, a[0] as usize, a[1] as usize),
        133 => signal::rt_sigsuspend(a[0] as usize, a[1] as usize),
        134 => signal::rt_sigaction(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize),
        135 => signal::rt_sigprocmask(a[0] as i32, a[1] as usize, a[2] as usize, a[3] as usize),
        137 => signal::rt_sigtimedwait(a[0] as usize, a[1] as usize, a[2] as usize, a[3] as usize),
        424 => signal::pidfd_send_signal(a[0] as i32, a[1] as i32, a[2] as usize, a[3] as u32),
        139 => {
            crate::task::signal::sigreturn(tf);
            // x0 is what the frame restored: leave it.
            return;
        }
        // Time (time.rs).
        101 => time::nanosleep(a[0] as usize, a[1] as usize),
        102 => time::getitimer(a[0] as i32, a[1] as usize),
        103 => time::setitimer(a[0] as i32, a[1] as usize, a[2] as usize),
        107 => time::timer_create(a[0] as i32, a[1] as usize, a[2] as usize),
        108 => time::timer_gettime(a[0] as i32, a[1] as usize),
        109 => time::timer_getoverrun(a[0] as i32),
        110 => time::timer_settime(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize),
        111 => time::timer_delete(a[0] as i32),
        112 => time::clock_settime(a[0] as i32, a[1] as usize),
        113 => time::clock_gettime(a[0] as i32, a[1] as usize),
        114 => time::clock_getres(a[0] as i32, a[1] as usize),
        115 => time::clock_nanosleep(a[0] as i32, a[1] as u32, a[2] as usize, a[3] as usize),
        169 => time::gettimeofday(a[0] as usize, a[1] as usize),
        171 => time::adjtimex(a[0] as usize),
        266 => time::clock_adjtime(a[0] as i32, a[1] as usize),
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
        }
    }
    if STRACE.load(Ordering::Relaxed) {
        let tid = crate::task::current().user.as_ref().map_or(0, |u| u.tid);
        println!(
            "[{}] {}({:#x}, {:#x}, {:#x}, {:#x}) = {:#x}",
            tid, nr, a[0], a[1], a[2], a[3], ret
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
