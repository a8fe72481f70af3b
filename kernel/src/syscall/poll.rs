//! Readiness and event-file system calls (Linux: `fs/select.c` ppoll and
//! pselect6, `fs/eventpoll.c`, `fs/eventfd.c`, `fs/timerfd.c`,
//! `fs/signalfd.c`); the files themselves live in `fs/`.

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::fs::{file, install, me, O_CLOEXEC};
use super::SysResult;
use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::eventfd::{EventFd, EFD_SEMAPHORE};
use crate::fs::eventpoll::{epoll_of, EventPoll, EPOLL_CTL_DEL};
use crate::fs::poll::{
    file_poll, file_poll_wait, ns_to_ticks, ticks_to_ns, wait_ready, POLLERR, POLLHUP, POLLIN,
    POLLNVAL, POLLOUT, POLLPRI, POLLRDBAND, POLLRDNORM, POLLWRBAND, POLLWRNORM,
};
use crate::fs::signalfd::SignalFd;
use crate::fs::timerfd::{TimerFd, TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET};
use crate::fs::vfs::{File, Inode, InodeKind, NR_OPEN, O_NONBLOCK, O_RDWR};
use crate::mm::heap;
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::task::clock::{
    CLOCK_BOOTTIME, CLOCK_BOOTTIME_ALARM, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_REALTIME_ALARM,
};
use crate::task::signal_abi::{SIGSET_SIZE, SIG_KERNEL_ONLY_MASK};

/// Most pollfd entries one ppoll takes, whatever RLIMIT_NOFILE says: the
/// array is copied into the kernel (512 KiB at most).
const MAX_POLLFDS: usize = 65536;

/// A new open file for an anonymous-inode device: eventfd, epoll, timerfd,
/// signalfd (Linux: `anon_inode_getfile`, mode 0600, O_RDWR).
pub(super) fn anon_file(dev: Arc<dyn Device>, flags: u32) -> KResult<Arc<File>> {
    let inode = Inode::new(0o600, InodeKind::Device(dev));
    File::new(inode, O_RDWR | (flags & O_NONBLOCK))
}

/// The counter value a relative `struct timespec` at `uts` ends at; EINVAL
/// for a negative or non-normalized one (Linux: `poll_select_set_timeout`).
fn timeout_deadline(uts: usize) -> KResult<u64> {
    let ts: [i64; 2] = read_user(uts)?;
    if ts[0] < 0 || !(0..1_000_000_000).contains(&ts[1]) {
        return Err(Errno::EINVAL);
    }
    let ns = (ts[0] as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts[1] as u64);
    Ok(timer::counter().saturating_add(ns_to_ticks(ns)))
}

/// Writes the time left before `deadline` back to `uts`, as Linux does
/// for ppoll and pselect6 (`poll_select_finish`); a copy that faults is
/// ignored, as there.
fn write_remaining(uts: usize, deadline: u64) {
    let ns = ticks_to_ns(deadline.saturating_sub(timer::counter()));
    let _ = write_user(
        uts,
        &[(ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64],
    );
}

/// The signal mask for the call's duration (Linux: `set_user_sigmask`):
/// true if one was set.
fn set_user_sigmask(umask: usize, sigsetsize: usize) -> KResult<bool> {
    if umask == 0 {
        return Ok(false);
    }
    if sigsetsize != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let set: u64 = read_user(umask)?;
    let me = crate::task::current();
    let u = me.user.as_ref().ok_or(Errno::EINVAL)?;
    u.saved_sigmask
        .store(u.sigmask.load(Ordering::Acquire), Ordering::Relaxed);
    u.set_sigmask(set & !SIG_KERNEL_ONLY_MASK);
    Ok(true)
}

/// Puts the old mask back: now, or, when the call ends with EINTR, after
/// the signal's handler has run under the temporary one (Linux:
/// `restore_saved_sigmask_unless`).
fn restore_user_sigmask<T>(set: bool, result: &KResult<T>) {
    if !set {
        return;
    }
    let me = crate::task::current();
    let Some(u) = &me.user else { return };
    if matches!(result, Err(Errno::EINTR)) {
        u.restore_sigmask.store(true, Ordering::Relaxed);
        u.set_sigpending();
    } else {
        u.set_sigmask(u.saved_sigmask.load(Ordering::Relaxed));
    }
}

/// ppoll(2) (glibc's poll, ppoll and pause): POLLNVAL for a closed fd,
/// EINVAL for more entries than RLIMIT_NOFILE (Linux: `do_sys_poll`).
pub fn ppoll(ufds: usize, nfds: usize, uts: usize, umask: usize, sigsetsize: usize) -> SysResult {
    let deadline = if uts != 0 {
        timeout_deadline(uts)?
    } else {
        u64::MAX
    };
    let limit = me()?.rlimits.lock()[7][0].min(MAX_POLLFDS as u64) as usize;
    if nfds > limit {
        return Err(Errno::EINVAL);
    }
    // nfds is at most RLIMIT_NOFILE (NR_OPEN, 1024 at most): each of these
    // is a few pages, and still ENOMEM rather than a panic when short.
    let mut raw = heap::try_zeroed(nfds * 8)?;
    copy_from_user(&mut raw, ufds)?;
    let mut entries: Vec<(i32, u32)> = heap::try_vec(nfds)?;
    entries.extend(raw.chunks_exact(8).map(|e| {
        let fd = i32::from_ne_bytes([e[0], e[1], e[2], e[3]]);
        (fd, u16::from_ne_bytes([e[4], e[5]]) as u32)
    }));
    let mut revents: Vec<u32> = heap::try_vec(nfds)?;
    revents.resize(nfds, 0);
    let mut files: Vec<Option<Arc<File>>> = heap::try_vec(nfds)?;
    let masked = set_user_sigmask(umask, sigsetsize)?;
    let result = wait_ready(deadline, |w| {
        let p = me()?;
        {
            let table = p.files.lock();
            files.clear();
            files.extend(
                entries
                    .iter()
                    .map(|&(fd, _)| (fd >= 0).then(|| table.get(fd as usize).ok()).flatten()),
            );
        }
        let mut ready = 0;
        let mut recheck: Option<u64> = None;
        for (i, (&(fd, events), f)) in entries.iter().zip(&files).enumerate() {
            revents[i] = match f {
                _ if fd < 0 => 0,
                None => POLLNVAL,
                Some(f) => {
                    if let Some(r) = file_poll_wait(f, w) {
                        recheck = Some(recheck.map_or(r, |c| c.min(r)));
                    }
                    file_poll(f) & (events | POLLERR | POLLHUP)
                }
            };
            if revents[i] != 0 {
                ready += 1;
            }
        }
        Ok((ready, recheck))
    });
    restore_user_sigmask(masked, &result);
    let ready = result?;
    for (e, r) in raw.chunks_exact_mut(8).zip(&revents) {
        e[6..8].copy_from_slice(&(*r as u16).to_ne_bytes());
    }
    copy_to_user(ufds, &raw)?;
    if uts != 0 && deadline != u64::MAX {
        write_remaining(uts, deadline);
    }
    Ok(ready as i64)
}

/// The poll events that make an fd ready for select's read set (Linux:
/// `POLLIN_SET`).
const POLLIN_SET: u32 = POLLRDNORM | POLLRDBAND | POLLIN | POLLHUP | POLLERR;
/// The poll events that make an fd ready for select's write set (Linux:
/// `POLLOUT_SET`).
const POLLOUT_SET: u32 = POLLWRBAND | POLLWRNORM | POLLOUT | POLLERR;
/// The poll events that make an fd ready for select's exception set
/// (Linux: `POLLEX_SET`): urgent data.
const POLLEX_SET: u32 = POLLPRI;

/// One `fd_set` of `words` longs from user memory (all clear for NULL).
fn read_fd_set(uset: usize, words: usize) -> KResult<Vec<u64>> {
    let mut set = vec![0u64; words];
    if uset != 0 {
        let mut raw = vec![0u8; words * 8];
        copy_from_user(&mut raw, uset)?;
        for (w, b) in set.iter_mut().zip(raw.chunks_exact(8)) {
            let mut word = [0u8; 8];
            word.copy_from_slice(b);
            *w = u64::from_ne_bytes(word);
        }
    }
    Ok(set)
}

/// Writes `set` back over the `fd_set` at `uset`; nothing for NULL.
fn write_fd_set(uset: usize, set: &[u64]) -> KResult<()> {
    if uset == 0 {
        return Ok(());
    }
    let raw: Vec<u8> = set.iter().flat_map(|w| w.to_ne_bytes()).collect();
    copy_to_user(uset, &raw)
}

/// pselect6(2) (glibc's select and pselect): EBADF for a closed fd in a
/// set, `n` past the table's size cut down to it (Linux: `core_sys_select`,
/// `do_select`).
pub fn pselect6(n: i32, uin: usize, uout: usize, uex: usize, uts: usize, usig: usize) -> SysResult {
    if n < 0 {
        return Err(Errno::EINVAL);
    }
    let deadline = if uts != 0 {
        timeout_deadline(uts)?
    } else {
        u64::MAX
    };
    let (umask, sigsetsize) = if usig != 0 {
        let sig: [u64; 2] = read_user(usig)?;
        (sig[0] as usize, sig[1] as usize)
    } else {
        (0, 0)
    };
    let n = (n as usize).min(NR_OPEN);
    let words = n.div_ceil(64);
    let mut sets = [
        read_fd_set(uin, words)?,
        read_fd_set(uout, words)?,
        read_fd_set(uex, words)?,
    ];
    if !n.is_multiple_of(64) {
        for set in sets.iter_mut() {
            set[words - 1] &= (1u64 << (n % 64)) - 1;
        }
    }
    let mut results = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
    let masked = set_user_sigmask(umask, sigsetsize)?;
    let result = wait_ready(deadline, |w| {
        let p = me()?;
        let mut ready = 0;
        let mut recheck: Option<u64> = None;
        for r in results.iter_mut() {
            r.fill(0);
        }
        for fd in 0..n {
            let (word, bit) = (fd / 64, 1u64 << (fd % 64));
            let want = [0, 1, 2].map(|s| sets[s][word] & bit != 0);
            if !want.iter().any(|&b| b) {
                continue;
            }
            let f = p.files.lock().get(fd)?;
            if let Some(r) = file_poll_wait(&f, w) {
                recheck = Some(recheck.map_or(r, |c| c.min(r)));
            }
            let mask = file_poll(&f);
            for (s, class) in [POLLIN_SET, POLLOUT_SET, POLLEX_SET].iter().enumerate() {
                if want[s] && mask & class != 0 {
                    results[s][word] |= bit;
                    ready += 1;
                }
            }
        }
        Ok((ready, recheck))
    });
    restore_user_sigmask(masked, &result);
    let ready = result?;
    write_fd_set(uin, &results[0])?;
    write_fd_set(uout, &results[1])?;
    write_fd_set(uex, &results[2])?;
    if uts != 0 && deadline != u64::MAX {
        write_remaining(uts, deadline);
    }
    Ok(ready as i64)
}

/// epoll_create1(2): only EPOLL_CLOEXEC may be given.
pub fn epoll_create1(flags: u32) -> SysResult {
    if flags & !O_CLOEXEC != 0 {
        return Err(Errno::EINVAL);
    }
    install(anon_file(EventPoll::new(), 0)?, flags != 0)
}

/// Bytes of `struct epoll_event` on arm64: not packed, so the 64-bit data
/// sits at offset 8.
const EPOLL_EVENT_SIZE: usize = 16;
/// Most events one epoll_wait may ask for (Linux: `EP_MAX_EVENTS`).
const EP_MAX_EVENTS: i32 = i32::MAX / EPOLL_EVENT_SIZE as i32;

/// epoll_ctl(2) (Linux: `do_epoll_ctl`, in its order of checks).
pub fn epoll_ctl(epfd: i32, op: i32, fd: i32, uevent: usize) -> SysResult {
    let event = if op != EPOLL_CTL_DEL {
        let ev: [u64; 2] = read_user(uevent)?;
        Some((ev[0] as u32, ev[1]))
    } else {
        None
    };
    let ep_file = file(epfd)?;
    let target = file(fd)?;
    if !crate::fs::poll::file_can_poll(&target) {
        return Err(Errno::EPERM);
    }
    let ep = epoll_of(&ep_file).ok_or(Errno::EINVAL)?;
    if epfd == fd {
        return Err(Errno::EINVAL);
    }
    ep.ctl(op, fd, &target, event).map(|_| 0)
}

/// What epoll_pwait and epoll_pwait2 share (Linux: `do_epoll_wait`).
fn do_epoll_wait(
    epfd: i32,
    uevents: usize,
    maxevents: i32,
    deadline: u64,
    umask: usize,
    sigsetsize: usize,
) -> SysResult {
    if maxevents <= 0 || maxevents > EP_MAX_EVENTS {
        return Err(Errno::EINVAL);
    }
    let ep = epoll_of(&*file(epfd)?).ok_or(Errno::EINVAL)?;
    let masked = set_user_sigmask(umask, sigsetsize)?;
    let result = ep.wait(maxevents as usize, deadline);
    restore_user_sigmask(masked, &result);
    let events = result?;
    let mut raw = vec![0u8; events.len() * EPOLL_EVENT_SIZE];
    for (out, (ev, data)) in raw.chunks_exact_mut(EPOLL_EVENT_SIZE).zip(&events) {
        out[0..4].copy_from_slice(&ev.to_ne_bytes());
        out[8..16].copy_from_slice(&data.to_ne_bytes());
    }
    copy_to_user(uevents, &raw)?;
    Ok(events.len() as i64)
}

/// epoll_pwait(2) (glibc's epoll_wait too): `timeout` in milliseconds,
/// negative for none.
pub fn epoll_pwait(
    epfd: i32,
    uevents: usize,
    maxevents: i32,
    timeout: i32,
    umask: usize,
    sigsetsize: usize,
) -> SysResult {
    let deadline = if timeout < 0 {
        u64::MAX
    } else {
        timer::counter().saturating_add(ns_to_ticks(timeout as u64 * 1_000_000))
    };
    do_epoll_wait(epfd, uevents, maxevents, deadline, umask, sigsetsize)
}

/// epoll_pwait2(2): the timeout a `struct timespec`, NULL for none.
pub fn epoll_pwait2(
    epfd: i32,
    uevents: usize,
    maxevents: i32,
    uts: usize,
    umask: usize,
    sigsetsize: usize,
) -> SysResult {
    let deadline = if uts != 0 {
        timeout_deadline(uts)?
    } else {
        u64::MAX
    };
    do_epoll_wait(epfd, uevents, maxevents, deadline, umask, sigsetsize)
}

/// eventfd2(2): EFD_SEMAPHORE, EFD_NONBLOCK, EFD_CLOEXEC.
pub fn eventfd2(initval: u32, flags: u32) -> SysResult {
    if flags & !(EFD_SEMAPHORE | O_NONBLOCK | O_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let f = anon_file(EventFd::new(initval, flags), flags)?;
    install(f, flags & O_CLOEXEC != 0)
}

/// timerfd_create(2): the clocks Linux allows, TFD_NONBLOCK, TFD_CLOEXEC.
/// All of them run on the one counter here (see fs/timerfd.rs).
pub fn timerfd_create(clock: i32, flags: u32) -> SysResult {
    if flags & !(O_NONBLOCK | O_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    if !matches!(
        clock,
        CLOCK_REALTIME
            | CLOCK_MONOTONIC
            | CLOCK_BOOTTIME
            | CLOCK_REALTIME_ALARM
            | CLOCK_BOOTTIME_ALARM
    ) {
        return Err(Errno::EINVAL);
    }
    let realtime = matches!(clock, CLOCK_REALTIME | CLOCK_REALTIME_ALARM);
    install(
        anon_file(TimerFd::new(realtime), flags)?,
        flags & O_CLOEXEC != 0,
    )
}

/// The timerfd open at `fd`; EBADF if none is open there, EINVAL if it
/// is another kind of file.
fn timerfd_of(fd: i32) -> KResult<Arc<TimerFd>> {
    file(fd)?.device::<TimerFd>().ok_or(Errno::EINVAL)
}

/// A `timespec` (`[tv_sec, tv_nsec]`) in nanoseconds, saturating; EINVAL
/// for a negative time or `tv_nsec` outside 0..1e9.
fn valid_timespec(ts: &[i64]) -> KResult<u64> {
    if ts[0] < 0 || !(0..1_000_000_000).contains(&ts[1]) {
        return Err(Errno::EINVAL);
    }
    Ok((ts[0] as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts[1] as u64))
}

/// A `struct itimerspec` (interval, value) from ticks.
fn itimerspec(value: (u64, u64)) -> [i64; 4] {
    let (i, v) = (ticks_to_ns(value.0), ticks_to_ns(value.1));
    [
        (i / 1_000_000_000) as i64,
        (i % 1_000_000_000) as i64,
        (v / 1_000_000_000) as i64,
        (v % 1_000_000_000) as i64,
    ]
}

/// timerfd_settime(2): a zero value disarms; TFD_TIMER_ABSTIME takes the
/// value as a time on the clock (Linux: `do_timerfd_settime`).
pub fn timerfd_settime(fd: i32, flags: u32, unew: usize, uold: usize) -> SysResult {
    if flags & !(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) != 0 {
        return Err(Errno::EINVAL);
    }
    let new: [i64; 4] = read_user(unew)?;
    let interval = valid_timespec(&new[0..2])?;
    let value = valid_timespec(&new[2..4])?;
    let t = timerfd_of(fd)?;
    let first = match value {
        0 => None,
        _ if flags & TFD_TIMER_ABSTIME != 0 => {
            let clock = if t.realtime {
                CLOCK_REALTIME
            } else {
                CLOCK_MONOTONIC
            };
            Some(super::time::deadline_at_clock(clock, [new[2], new[3]])?)
        }
        v => Some(timer::counter().saturating_add(ns_to_ticks(v))),
    };
    let old = t.set(first, ns_to_ticks(interval));
    if uold != 0 {
        write_user(uold, &itimerspec(old))?;
    }
    Ok(0)
}

/// timerfd_gettime(2): the time to the next expiry and the interval.
pub fn timerfd_gettime(fd: i32, ucur: usize) -> SysResult {
    let t = timerfd_of(fd)?;
    write_user(ucur, &itimerspec(t.get())).map(|_| 0)
}

/// signalfd4(2): a new signalfd for `fd` -1, else a new mask for the
/// signalfd `fd` (Linux: `do_signalfd4`).
pub fn signalfd4(fd: i32, umask: usize, sizemask: usize, flags: u32) -> SysResult {
    if flags & !(O_NONBLOCK | O_CLOEXEC) != 0 || sizemask != SIGSET_SIZE {
        return Err(Errno::EINVAL);
    }
    let mask: u64 = read_user(umask)?;
    if fd == -1 {
        let f = anon_file(SignalFd::new(mask), flags)?;
        return install(f, flags & O_CLOEXEC != 0);
    }
    let sfd = file(fd)?.device::<SignalFd>().ok_or(Errno::EINVAL)?;
    sfd.set_mask(mask);
    Ok(fd as i64)
}
