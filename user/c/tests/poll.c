/*
 * Readiness and event files through glibc: poll, ppoll, select, pselect
 * and pause (ppoll and pselect6 underneath), FIONREAD on a pipe, epoll
 * (level- and edge-triggered, one-shot, nested, timeouts and signals,
 * and fs.epoll.max_user_watches), eventfd, timerfd and signalfd. A second party (a forked child or a
 * thread) wakes the waits that need one. The values expected are Linux
 * 6.12's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A child that writes one byte to `fd` after `ms` milliseconds. */
static pid_t write_later(int fd, int ms)
{
	pid_t child = fork();
	if (child == 0) {
		sleep_ms(ms);
		_exit(write(fd, "x", 1) == 1 ? 0 : 1);
	}
	return child;
}

/* A child that sends `sig` to its parent after `ms` milliseconds. */
static pid_t signal_later(int sig, int ms)
{
	pid_t parent = getpid();
	pid_t child = fork();
	if (child == 0) {
		sleep_ms(ms);
		kill(parent, sig);
		_exit(0);
	}
	return child;
}

static int reap(pid_t child)
{
	int status = -1;
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static volatile sig_atomic_t handled;
static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

static void catch(int sig, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
	handled = 0;
}

static void block(int sig, int how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(how, &set, NULL);
}

static int poll_pipe_readable_after_write_writable_always(void)
{
	int p[2];
	pipe(p);
	struct pollfd fds[2] = { { p[0], POLLIN | POLLOUT, 0 }, { p[1], POLLIN | POLLOUT, 0 } };
	int empty = poll(fds, 2, 0);
	short r0 = fds[0].revents, w0 = fds[1].revents;
	write(p[1], "ab", 2);
	int full = poll(fds, 2, 0);
	short r1 = fds[0].revents;
	close(p[0]);
	close(p[1]);
	CHECK(empty == 1 && r0 == 0 && w0 == POLLOUT, "empty pipe: %d, read %#x, write %#x", empty,
	      r0, w0);
	CHECK(full == 2 && r1 == POLLIN, "after a write: %d, read end %#x", full, r1);
	return 0;
}

static int poll_pipe_hup_without_writers_err_without_readers(void)
{
	int a[2], b[2];
	pipe(a);
	pipe(b);
	write(a[1], "z", 1);
	close(a[1]);
	close(b[0]);
	struct pollfd fds[2] = { { a[0], POLLIN, 0 }, { b[1], POLLOUT, 0 } };
	int n = poll(fds, 2, 0);
	short with_data = fds[0].revents;
	char c;
	read(a[0], &c, 1);
	int m = poll(fds, 1, 0);
	short after = fds[0].revents;
	close(a[0]);
	close(b[1]);
	CHECK(n == 2, "poll returned %d", n);
	CHECK(with_data == (POLLIN | POLLHUP), "data and no writer: %#x", with_data);
	CHECK(fds[1].revents == (POLLOUT | POLLERR), "write end with no reader: %#x",
	      fds[1].revents);
	CHECK(m == 1 && after == POLLHUP, "drained read end with no writer: %d %#x", m, after);
	return 0;
}

static int poll_closed_fd_is_nval_negative_fd_ignored(void)
{
	int p[2];
	pipe(p);
	close(p[0]);
	struct pollfd fds[2] = { { p[0], POLLIN, 0x777 }, { -1, POLLIN, 0x777 } };
	int n = poll(fds, 2, 0);
	close(p[1]);
	CHECK(n == 1, "poll returned %d", n);
	CHECK(fds[0].revents == POLLNVAL, "closed fd: %#x", fds[0].revents);
	CHECK(fds[1].revents == 0, "fd -1: %#x", fds[1].revents);
	return 0;
}

static int poll_regular_file_is_always_ready(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	int m = memfd_create("poll", 0);
	struct pollfd fds[2] = { { fd, POLLIN | POLLOUT, 0 }, { m, POLLIN | POLLOUT, 0 } };
	int n = poll(fds, 2, -1);
	close(fd);
	close(m);
	CHECK(n == 2, "poll returned %d", n);
	CHECK(fds[1].revents == (POLLIN | POLLOUT), "a memfd: %#x", fds[1].revents);
	return 0;
}

static int poll_times_out(void)
{
	int p[2];
	pipe(p);
	struct pollfd fd = { p[0], POLLIN, 0 };
	long long t0 = now_ms();
	int n = poll(&fd, 1, 100);
	long long took = now_ms() - t0;
	close(p[0]);
	close(p[1]);
	CHECK(n == 0 && fd.revents == 0, "poll returned %d, revents %#x", n, fd.revents);
	CHECK(took >= 90 && took < 2000, "a 100 ms poll took %lld ms", took);
	return 0;
}

static int poll_woken_by_child_writer(void)
{
	int p[2];
	pipe(p);
	pid_t child = write_later(p[1], 50);
	struct pollfd fd = { p[0], POLLIN, 0 };
	int n = poll(&fd, 1, -1);
	int ok = reap(child);
	close(p[0]);
	close(p[1]);
	CHECK(n == 1 && fd.revents == POLLIN, "poll returned %d, revents %#x", n, fd.revents);
	CHECK(ok, "the child's write failed");
	return 0;
}

static void *write_after_50ms(void *arg)
{
	sleep_ms(50);
	uint64_t one = 1;
	write(*(int *)arg, &one, sizeof(one));
	return NULL;
}

static int poll_woken_by_thread_on_eventfd(void)
{
	int efd = eventfd(0, 0);
	pthread_t t;
	pthread_create(&t, NULL, write_after_50ms, &efd);
	struct pollfd fd = { efd, POLLIN, 0 };
	int n = poll(&fd, 1, 5000);
	pthread_join(t, NULL);
	close(efd);
	CHECK(n == 1 && fd.revents == POLLIN, "poll returned %d, revents %#x", n, fd.revents);
	return 0;
}

static int poll_interrupted_by_signal_even_with_sa_restart(void)
{
	int p[2];
	pipe(p);
	catch(SIGUSR1, SA_RESTART);
	pid_t child = signal_later(SIGUSR1, 50);
	struct pollfd fd = { p[0], POLLIN, 0 };
	int n = poll(&fd, 1, 5000);
	int e = errno;
	reap(child);
	close(p[0]);
	close(p[1]);
	signal(SIGUSR1, SIG_DFL);
	CHECK(n == -1 && e == EINTR, "poll returned %d (%s), want EINTR", n, strerror(e));
	CHECK(handled == 1, "the handler ran %d times", (int)handled);
	return 0;
}

static int ppoll_sigmask_lets_a_blocked_signal_in_then_restores(void)
{
	catch(SIGUSR1, 0);
	block(SIGUSR1, SIG_BLOCK);
	kill(getpid(), SIGUSR1);
	int before = handled;
	sigset_t empty, now;
	sigemptyset(&empty);
	struct timespec ts = { 5, 0 };
	int n = ppoll(NULL, 0, &ts, &empty);
	int e = errno;
	sigprocmask(SIG_SETMASK, NULL, &now);
	int still_blocked = sigismember(&now, SIGUSR1);
	block(SIGUSR1, SIG_UNBLOCK);
	signal(SIGUSR1, SIG_DFL);
	CHECK(before == 0, "the blocked signal was handled early");
	CHECK(n == -1 && e == EINTR, "ppoll returned %d (%s)", n, strerror(e));
	CHECK(handled == 1, "handler ran %d times", (int)handled);
	CHECK(still_blocked == 1, "SIGUSR1 is not blocked again after ppoll");
	return 0;
}

static int ppoll_timeout_and_bad_arguments(void)
{
	struct timespec bad = { 0, 1000000000 }, zero = { 0, 0 };
	int a = ppoll(NULL, 0, &bad, NULL);
	int ea = errno;
	int b = syscall(SYS_ppoll, 8, 1, &zero, NULL, 8);
	int eb = errno;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	int c = poll(NULL, rl.rlim_cur + 1, 0);
	int ec = errno;
	int d = ppoll(NULL, 0, &zero, NULL);
	sigset_t set;
	sigemptyset(&set);
	int f = syscall(SYS_ppoll, NULL, 0, &zero, &set, 4);
	int ef = errno;
	CHECK(a == -1 && ea == EINVAL, "tv_nsec 1e9: %d (%s)", a, strerror(ea));
	CHECK(b == -1 && eb == EFAULT, "a bad array: %d (%s)", b, strerror(eb));
	CHECK(c == -1 && ec == EINVAL, "nfds over RLIMIT_NOFILE: %d (%s)", c, strerror(ec));
	CHECK(d == 0, "a zero timeout: %d", d);
	CHECK(f == -1 && ef == EINVAL, "sigsetsize 4: %d (%s)", f, strerror(ef));
	return 0;
}

static int pause_returns_eintr_after_a_handler(void)
{
	catch(SIGUSR2, 0);
	pid_t child = signal_later(SIGUSR2, 50);
	int n = pause();
	int e = errno;
	reap(child);
	signal(SIGUSR2, SIG_DFL);
	CHECK(n == -1 && e == EINTR, "pause returned %d (%s)", n, strerror(e));
	CHECK(handled == 1, "handler ran %d times", (int)handled);
	return 0;
}

static int select_reports_ready_sets(void)
{
	int p[2];
	pipe(p);
	write(p[1], "x", 1);
	int fd = memfd_create("select", 0);
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &r);
	FD_SET(p[0], &w);
	FD_SET(p[1], &w);
	FD_SET(fd, &r);
	int maxfd = (fd > p[1] ? fd : p[1]) + 1;
	struct timeval tv = { 0, 0 };
	int n = select(maxfd, &r, &w, NULL, &tv);
	int rr = FD_ISSET(p[0], &r), rw = FD_ISSET(p[1], &r), wr = FD_ISSET(p[0], &w),
	    ww = FD_ISSET(p[1], &w), fr = FD_ISSET(fd, &r);
	close(fd);
	close(p[0]);
	close(p[1]);
	CHECK(n == 3, "select returned %d, want 3", n);
	CHECK(rr && !rw && !wr && ww && fr, "bits: read %d/%d write %d/%d file %d", rr, rw, wr, ww,
	      fr);
	return 0;
}

static int select_closed_fd_is_ebadf(void)
{
	int p[2];
	pipe(p);
	close(p[1]);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[1], &r);
	struct timeval tv = { 0, 0 };
	int n = select(p[1] + 1, &r, NULL, NULL, &tv);
	int e = errno;
	int m = select(-1, NULL, NULL, NULL, &tv);
	int em = errno;
	close(p[0]);
	CHECK(n == -1 && e == EBADF, "select returned %d (%s)", n, strerror(e));
	CHECK(m == -1 && em == EINVAL, "nfds -1: %d (%s)", m, strerror(em));
	return 0;
}

static int select_timeout_clears_sets_and_leaves_zero(void)
{
	int p[2];
	pipe(p);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = { 0, 50000 };
	long long t0 = now_ms();
	int n = select(p[0] + 1, &r, NULL, NULL, &tv);
	long long took = now_ms() - t0;
	close(p[0]);
	close(p[1]);
	CHECK(n == 0, "select returned %d", n);
	CHECK(!FD_ISSET(p[0], &r), "the set was not cleared");
	CHECK(tv.tv_sec == 0 && tv.tv_usec == 0, "time left %ld.%06ld", (long)tv.tv_sec,
	      (long)tv.tv_usec);
	CHECK(took >= 40, "a 50 ms select took %lld ms", took);
	return 0;
}

static int select_writes_back_the_time_left(void)
{
	int p[2];
	pipe(p);
	pid_t child = write_later(p[1], 100);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = { 5, 0 };
	int n = select(p[0] + 1, &r, NULL, NULL, &tv);
	reap(child);
	close(p[0]);
	close(p[1]);
	CHECK(n == 1 && FD_ISSET(p[0], &r), "select returned %d", n);
	CHECK(tv.tv_sec >= 3 && (tv.tv_sec < 4 || (tv.tv_sec == 4 && tv.tv_usec < 990000)),
	      "time left %ld.%06ld of 5 s after ~0.1 s", (long)tv.tv_sec, (long)tv.tv_usec);
	return 0;
}

static int pselect_sigmask_lets_a_blocked_signal_in(void)
{
	catch(SIGUSR1, 0);
	block(SIGUSR1, SIG_BLOCK);
	pid_t child = signal_later(SIGUSR1, 30);
	sigset_t empty, now;
	sigemptyset(&empty);
	struct timespec ts = { 5, 0 };
	int n = pselect(0, NULL, NULL, NULL, &ts, &empty);
	int e = errno;
	reap(child);
	sigprocmask(SIG_SETMASK, NULL, &now);
	int still = sigismember(&now, SIGUSR1);
	block(SIGUSR1, SIG_UNBLOCK);
	signal(SIGUSR1, SIG_DFL);
	CHECK(n == -1 && e == EINTR, "pselect returned %d (%s)", n, strerror(e));
	CHECK(handled == 1 && still == 1, "handled %d, blocked after %d", (int)handled, still);
	return 0;
}

static int fionread_counts_bytes_in_a_pipe(void)
{
	int p[2];
	pipe(p);
	int before = -1, after = -1;
	ioctl(p[0], FIONREAD, &before);
	write(p[1], "hello", 5);
	ioctl(p[0], FIONREAD, &after);
	close(p[0]);
	close(p[1]);
	CHECK(before == 0 && after == 5, "FIONREAD %d then %d", before, after);
	return 0;
}

static int eventfd_adds_writes_and_read_takes_all(void)
{
	int fd = eventfd(2, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t v = 3, got = 0, again = 0;
	write(fd, &v, 8);
	v = 4;
	write(fd, &v, 8);
	ssize_t r = read(fd, &got, 8);
	ssize_t r2 = read(fd, &again, 8);
	int e = errno;
	int fdflags = fcntl(fd, F_GETFD), flflags = fcntl(fd, F_GETFL);
	close(fd);
	CHECK(r == 8 && got == 9, "read %zd bytes, value %llu, want 9", r,
	      (unsigned long long)got);
	CHECK(r2 == -1 && e == EAGAIN, "read at zero: %zd (%s)", r2, strerror(e));
	CHECK(fdflags == FD_CLOEXEC, "F_GETFD %#x", fdflags);
	CHECK((flflags & O_NONBLOCK) && (flflags & O_ACCMODE) == O_RDWR, "F_GETFL %#x", flflags);
	return 0;
}

static int eventfd_semaphore_reads_one_at_a_time(void)
{
	int fd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	uint64_t a = 0, b = 0, c = 0, d = 0;
	read(fd, &a, 8);
	read(fd, &b, 8);
	read(fd, &c, 8);
	ssize_t r = read(fd, &d, 8);
	int e = errno;
	close(fd);
	CHECK(a == 1 && b == 1 && c == 1, "reads %llu %llu %llu", (unsigned long long)a,
	      (unsigned long long)b, (unsigned long long)c);
	CHECK(r == -1 && e == EAGAIN, "fourth read %zd (%s)", r, strerror(e));
	return 0;
}

static int eventfd_sizes_overflow_and_flags(void)
{
	int fd = eventfd(0, EFD_NONBLOCK);
	uint32_t small = 1;
	uint64_t max = UINT64_MAX, big = UINT64_MAX - 1, one = 1;
	ssize_t shortw = write(fd, &small, 4);
	int e1 = errno;
	ssize_t maxw = write(fd, &max, 8);
	int e2 = errno;
	ssize_t bigw = write(fd, &big, 8);
	ssize_t over = write(fd, &one, 8);
	int e3 = errno;
	struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
	poll(&p, 1, 0);
	uint64_t got[2] = { 0, 0 };
	ssize_t shortr = read(fd, got, 4);
	int e4 = errno;
	ssize_t longr = read(fd, got, 16);
	int bad = eventfd(0, 0x10);
	int e5 = errno;
	close(fd);
	CHECK(shortw == -1 && e1 == EINVAL, "a 4-byte write: %zd (%s)", shortw, strerror(e1));
	CHECK(maxw == -1 && e2 == EINVAL, "writing 2^64-1: %zd (%s)", maxw, strerror(e2));
	CHECK(bigw == 8, "writing 2^64-2: %zd", bigw);
	CHECK(over == -1 && e3 == EAGAIN, "passing 2^64-2: %zd (%s)", over, strerror(e3));
	CHECK(p.revents == POLLIN, "a full counter polls %#x, want POLLIN only", p.revents);
	CHECK(shortr == -1 && e4 == EINVAL, "a 4-byte read: %zd (%s)", shortr, strerror(e4));
	CHECK(longr == 8 && got[0] == UINT64_MAX - 1, "a 16-byte read: %zd", longr);
	CHECK(bad == -1 && e5 == EINVAL, "unknown flag: %d (%s)", bad, strerror(e5));
	return 0;
}

static int eventfd_blocking_read_woken_by_thread(void)
{
	int fd = eventfd(0, 0);
	pthread_t t;
	pthread_create(&t, NULL, write_after_50ms, &fd);
	uint64_t v = 0;
	long long t0 = now_ms();
	ssize_t r = read(fd, &v, 8);
	long long took = now_ms() - t0;
	pthread_join(t, NULL);
	close(fd);
	CHECK(r == 8 && v == 1, "read %zd, value %llu", r, (unsigned long long)v);
	CHECK(took >= 30, "the read returned after %lld ms, before the write", took);
	return 0;
}

static int epoll_level_triggered_reports_data_until_drained(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int p[2];
	pipe(p);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1122334455667788ULL };
	int add = epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	struct epoll_event out[4];
	int none = epoll_wait(ep, out, 4, 0);
	write(p[1], "ab", 2);
	int first = epoll_wait(ep, out, 4, 0);
	uint64_t data = out[0].data.u64;
	uint32_t events = out[0].events;
	int second = epoll_wait(ep, out, 4, 0);
	char buf[2];
	read(p[0], buf, 2);
	int drained = epoll_wait(ep, out, 4, 0);
	int fdflags = fcntl(ep, F_GETFD);
	close(p[0]);
	close(p[1]);
	close(ep);
	CHECK(add == 0, "EPOLL_CTL_ADD: %s", strerror(errno));
	CHECK(none == 0, "an empty pipe: %d events", none);
	CHECK(first == 1 && events == EPOLLIN && data == 0x1122334455667788ULL,
	      "after a write: %d events, %#x, data %#llx", first, events,
	      (unsigned long long)data);
	CHECK(second == 1, "level-triggered again: %d", second);
	CHECK(drained == 0, "drained: %d", drained);
	CHECK(fdflags == FD_CLOEXEC, "EPOLL_CLOEXEC: F_GETFD %#x", fdflags);
	return 0;
}

static int epoll_edge_triggered_reports_each_new_write_once(void)
{
	int ep = epoll_create1(0);
	int p[2];
	pipe(p);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = p[0] };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	struct epoll_event out[2];
	write(p[1], "a", 1);
	int first = epoll_wait(ep, out, 2, 0);
	int again = epoll_wait(ep, out, 2, 0);
	write(p[1], "b", 1);
	int second = epoll_wait(ep, out, 2, 0);
	int fd = out[0].data.fd;
	int third = epoll_wait(ep, out, 2, 0);
	close(p[0]);
	close(p[1]);
	close(ep);
	CHECK(first == 1 && again == 0, "first write: %d, then %d", first, again);
	CHECK(second == 1 && fd == p[0] && third == 0, "second write: %d (fd %d), then %d", second,
	      fd, third);
	return 0;
}

static int epoll_oneshot_disarms_until_mod(void)
{
	int ep = epoll_create1(0);
	int p[2];
	pipe(p);
	write(p[1], "a", 1);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = 7 };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	struct epoll_event out[2];
	int first = epoll_wait(ep, out, 2, 0);
	int disarmed = epoll_wait(ep, out, 2, 0);
	int readd = epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	int e = errno;
	ev.data.u32 = 8;
	int mod = epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
	int rearmed = epoll_wait(ep, out, 2, 0);
	uint32_t data = out[0].data.u32;
	close(p[0]);
	close(p[1]);
	close(ep);
	CHECK(first == 1 && disarmed == 0, "one-shot: %d then %d", first, disarmed);
	CHECK(readd == -1 && e == EEXIST, "adding again: %d (%s)", readd, strerror(e));
	CHECK(mod == 0 && rearmed == 1 && data == 8, "after MOD: %d, data %u", rearmed, data);
	return 0;
}

static int epoll_ctl_and_wait_errors(void)
{
	int ep = epoll_create1(0);
	int p[2];
	pipe(p);
	int file = memfd_create("epoll", 0);
	struct epoll_event ev = { .events = EPOLLIN };
	struct epoll_event out[1];
	int r1 = epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
	int e1 = errno;
	int r2 = epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL);
	int e2 = errno;
	int r3 = epoll_ctl(ep, EPOLL_CTL_ADD, file, &ev);
	int e3 = errno;
	int r4 = epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev);
	int e4 = errno;
	int r5 = epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev);
	int e5 = errno;
	int r6 = epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &ev);
	int e6 = errno;
	int r7 = epoll_ctl(ep, 99, p[0], &ev);
	int e7 = errno;
	int r8 = epoll_wait(ep, out, 0, 0);
	int e8 = errno;
	int r9 = epoll_wait(p[0], out, 1, 0);
	int e9 = errno;
	int r10 = epoll_ctl(ep, EPOLL_CTL_ADD, p[0], (struct epoll_event *)8);
	int e10 = errno;
	int r11 = epoll_create1(1);
	int e11 = errno;
	close(file);
	close(p[0]);
	close(p[1]);
	close(ep);
	CHECK(r1 == -1 && e1 == ENOENT, "MOD of a missing fd: %d (%s)", r1, strerror(e1));
	CHECK(r2 == -1 && e2 == ENOENT, "DEL of a missing fd: %d (%s)", r2, strerror(e2));
	CHECK(r3 == -1 && e3 == EPERM, "a regular file: %d (%s)", r3, strerror(e3));
	CHECK(r4 == -1 && e4 == EINVAL, "itself: %d (%s)", r4, strerror(e4));
	CHECK(r5 == -1 && e5 == EBADF, "a bad fd: %d (%s)", r5, strerror(e5));
	CHECK(r6 == -1 && e6 == EINVAL, "epfd not an epoll: %d (%s)", r6, strerror(e6));
	CHECK(r7 == -1 && e7 == EINVAL, "op 99: %d (%s)", r7, strerror(e7));
	CHECK(r8 == -1 && e8 == EINVAL, "maxevents 0: %d (%s)", r8, strerror(e8));
	CHECK(r9 == -1 && e9 == EINVAL, "waiting on a pipe: %d (%s)", r9, strerror(e9));
	CHECK(r10 == -1 && e10 == EFAULT, "a bad event: %d (%s)", r10, strerror(e10));
	CHECK(r11 == -1 && e11 == EINVAL, "epoll_create1(1): %d (%s)", r11, strerror(e11));
	return 0;
}

static int epoll_wait_woken_by_thread_and_times_out(void)
{
	int ep = epoll_create1(0);
	int efd = eventfd(0, 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 42 };
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	struct epoll_event out[1];
	long long t0 = now_ms();
	int timeout = epoll_wait(ep, out, 1, 60);
	long long took = now_ms() - t0;
	pthread_t t;
	pthread_create(&t, NULL, write_after_50ms, &efd);
	int woken = epoll_wait(ep, out, 1, 5000);
	pthread_join(t, NULL);
	close(efd);
	close(ep);
	CHECK(timeout == 0 && took >= 50, "timeout: %d after %lld ms", timeout, took);
	CHECK(woken == 1 && out[0].data.u32 == 42 && out[0].events == EPOLLIN,
	      "woken: %d data %u events %#x", woken, out[0].data.u32, out[0].events);
	return 0;
}

static int epoll_pwait_interrupted_by_signal(void)
{
	int ep = epoll_create1(0);
	catch(SIGUSR1, SA_RESTART);
	pid_t child = signal_later(SIGUSR1, 50);
	struct epoll_event out[1];
	int n = epoll_wait(ep, out, 1, 5000);
	int e = errno;
	reap(child);
	signal(SIGUSR1, SIG_DFL);
	close(ep);
	CHECK(n == -1 && e == EINTR, "epoll_wait returned %d (%s)", n, strerror(e));
	CHECK(handled == 1, "handler ran %d times", (int)handled);
	return 0;
}

static int epoll_drops_an_item_when_its_file_closes(void)
{
	int ep = epoll_create1(0);
	int p[2];
	pipe(p);
	struct epoll_event ev = { .events = EPOLLOUT };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev);
	struct epoll_event out[1];
	int before = epoll_wait(ep, out, 1, 0);
	close(p[1]);
	int after = epoll_wait(ep, out, 1, 0);
	int del = epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL);
	int e = errno;
	close(p[0]);
	close(ep);
	CHECK(before == 1 && after == 0, "before close %d, after %d", before, after);
	CHECK(del == -1 && e == EBADF, "DEL of the closed fd: %d (%s)", del, strerror(e));
	return 0;
}

static int epoll_small_maxevents_rotates_through_ready_items(void)
{
	int ep = epoll_create1(0);
	int e[3];
	for (int i = 0; i < 3; i++) {
		e[i] = eventfd(1, 0);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 1u << i };
		epoll_ctl(ep, EPOLL_CTL_ADD, e[i], &ev);
	}
	unsigned seen = 0;
	int total = 0;
	for (int i = 0; i < 3; i++) {
		struct epoll_event out[1];
		total += epoll_wait(ep, out, 1, 0);
		seen |= out[0].data.u32;
	}
	for (int i = 0; i < 3; i++)
		close(e[i]);
	close(ep);
	CHECK(total == 3 && seen == 7, "three waits of one event saw %#x (%d events)", seen, total);
	return 0;
}

static int epoll_nested_in_poll_and_epoll(void)
{
	int inner = epoll_create1(0), outer = epoll_create1(0);
	int efd = eventfd(0, 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 1 };
	epoll_ctl(inner, EPOLL_CTL_ADD, efd, &ev);
	ev.data.u32 = 2;
	int nest = epoll_ctl(outer, EPOLL_CTL_ADD, inner, &ev);
	int loop = epoll_ctl(inner, EPOLL_CTL_ADD, outer, &ev);
	int eloop = errno;
	struct pollfd p = { inner, POLLIN, 0 };
	int idle = poll(&p, 1, 0);
	pthread_t t;
	pthread_create(&t, NULL, write_after_50ms, &efd);
	int woken = poll(&p, 1, 5000);
	short rev = p.revents;
	pthread_join(t, NULL);
	struct epoll_event out[1];
	int o = epoll_wait(outer, out, 1, 0);
	close(efd);
	close(inner);
	close(outer);
	CHECK(nest == 0, "nesting: %s", strerror(errno));
	CHECK(loop == -1 && eloop == ELOOP, "a loop: %d (%s)", loop, strerror(eloop));
	CHECK(idle == 0 && woken == 1 && rev == POLLIN, "poll on the epoll fd: %d then %d (%#x)",
	      idle, woken, rev);
	CHECK(o == 1 && out[0].data.u32 == 2, "the outer epoll: %d, data %u", o, out[0].data.u32);
	return 0;
}

static int timerfd_one_shot_expires_once(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = { { 0, 0 }, { 0, 50000000 } };
	int s = timerfd_settime(fd, 0, &its, NULL);
	struct itimerspec cur;
	timerfd_gettime(fd, &cur);
	long long t0 = now_ms();
	uint64_t n = 0;
	ssize_t r = read(fd, &n, 8);
	long long took = now_ms() - t0;
	struct itimerspec after;
	timerfd_gettime(fd, &after);
	struct pollfd p = { fd, POLLIN, 0 };
	int ready = poll(&p, 1, 0);
	close(fd);
	CHECK(s == 0, "settime: %s", strerror(errno));
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
		      cur.it_value.tv_nsec <= 50000000,
	      "remaining %ld.%09ld", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
	CHECK(r == 8 && n == 1, "read %zd, %llu expirations", r, (unsigned long long)n);
	CHECK(took >= 40 && took < 2000, "the read waited %lld ms for a 50 ms timer", took);
	CHECK(after.it_value.tv_sec == 0 && after.it_value.tv_nsec == 0, "disarmed after: %ld",
	      after.it_value.tv_nsec);
	CHECK(ready == 0, "readable again after the read");
	return 0;
}

static int timerfd_interval_counts_expirations(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	uint64_t n = 0;
	ssize_t early = read(fd, &n, 8);
	int e = errno;
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } };
	timerfd_settime(fd, 0, &its, NULL);
	sleep_ms(110);
	ssize_t r = read(fd, &n, 8);
	struct itimerspec cur;
	timerfd_gettime(fd, &cur);
	struct itimerspec off = { { 0, 0 }, { 0, 0 } }, old;
	timerfd_settime(fd, 0, &off, &old);
	int fdflags = fcntl(fd, F_GETFD);
	close(fd);
	CHECK(early == -1 && e == EAGAIN, "an unarmed timer: %zd (%s)", early, strerror(e));
	CHECK(r == 8 && n >= 4 && n <= 7, "%llu expirations of 20 ms in 110 ms",
	      (unsigned long long)n);
	CHECK(cur.it_interval.tv_nsec == 20000000, "interval %ld", cur.it_interval.tv_nsec);
	CHECK(old.it_interval.tv_nsec == 20000000 && old.it_value.tv_nsec <= 20000000,
	      "the old value: %ld/%ld", old.it_interval.tv_nsec, old.it_value.tv_nsec);
	CHECK(fdflags == FD_CLOEXEC, "TFD_CLOEXEC: %#x", fdflags);
	return 0;
}

static int timerfd_absolute_realtime_in_epoll(void)
{
	int fd = timerfd_create(CLOCK_REALTIME, 0);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 5 };
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct itimerspec its = { { 0, 0 }, { now.tv_sec, now.tv_nsec } };
	its.it_value.tv_nsec += 50000000;
	if (its.it_value.tv_nsec >= 1000000000) {
		its.it_value.tv_sec++;
		its.it_value.tv_nsec -= 1000000000;
	}
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
	struct epoll_event out[1];
	int before = epoll_wait(ep, out, 1, 0);
	long long t0 = now_ms();
	int n = epoll_wait(ep, out, 1, 5000);
	long long took = now_ms() - t0;
	uint64_t count = 0;
	read(fd, &count, 8);
	close(ep);
	close(fd);
	CHECK(before == 0, "ready before the time: %d", before);
	CHECK(n == 1 && out[0].data.u32 == 5 && count == 1, "epoll %d, %llu expirations", n,
	      (unsigned long long)count);
	CHECK(took >= 30 && took < 2000, "woke after %lld ms for a 50 ms deadline", took);
	return 0;
}

static int timerfd_errors(void)
{
	int a = timerfd_create(12345, 0);
	int ea = errno;
	int b = timerfd_create(CLOCK_MONOTONIC, 0x10);
	int eb = errno;
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec bad = { { 0, 0 }, { 0, 1000000000 } };
	int c = timerfd_settime(fd, 0, &bad, NULL);
	int ec = errno;
	struct itimerspec ok = { { 0, 0 }, { 1, 0 } };
	int d = timerfd_settime(fd, 0x100, &ok, NULL);
	int ed = errno;
	uint32_t small;
	ssize_t r = read(fd, &small, 4);
	int er = errno;
	int p[2];
	pipe(p);
	int f = timerfd_settime(p[0], 0, &ok, NULL);
	int ef = errno;
	close(p[0]);
	close(p[1]);
	close(fd);
	CHECK(a == -1 && ea == EINVAL, "clock 12345: %d (%s)", a, strerror(ea));
	CHECK(b == -1 && eb == EINVAL, "flag 0x10: %d (%s)", b, strerror(eb));
	CHECK(c == -1 && ec == EINVAL, "tv_nsec 1e9: %d (%s)", c, strerror(ec));
	CHECK(d == -1 && ed == EINVAL, "settime flag 0x100: %d (%s)", d, strerror(ed));
	CHECK(r == -1 && er == EINVAL, "a 4-byte read: %zd (%s)", r, strerror(er));
	CHECK(f == -1 && ef == EINVAL, "a pipe: %d (%s)", f, strerror(ef));
	return 0;
}

static int signalfd_reads_a_blocked_pending_signal(void)
{
	block(SIGUSR1, SIG_BLOCK);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	struct pollfd p = { fd, POLLIN, 0 };
	int idle = poll(&p, 1, 0);
	kill(getpid(), SIGUSR1);
	int ready = poll(&p, 1, 0);
	short rev = p.revents;
	struct signalfd_siginfo si;
	memset(&si, 0, sizeof(si));
	ssize_t r = read(fd, &si, sizeof(si));
	ssize_t again = read(fd, &si, sizeof(si));
	int e = errno;
	char small[64];
	ssize_t shortr = read(fd, small, sizeof(small));
	int es = errno;
	int still = poll(&p, 1, 0);
	close(fd);
	block(SIGUSR1, SIG_UNBLOCK);
	CHECK(sizeof(si) == 128, "sizeof(struct signalfd_siginfo) %zu", sizeof(si));
	CHECK(idle == 0 && ready == 1 && rev == POLLIN, "poll: %d then %d (%#x)", idle, ready, rev);
	CHECK(r == 128 && si.ssi_signo == SIGUSR1 && si.ssi_code == SI_USER &&
		      si.ssi_pid == (uint32_t)getpid(),
	      "read %zd: signo %u code %d pid %u", r, si.ssi_signo, si.ssi_code, si.ssi_pid);
	CHECK(again == -1 && e == EAGAIN, "a second read: %zd (%s)", again, strerror(e));
	CHECK(shortr == -1 && es == EINVAL, "a 64-byte read: %zd (%s)", shortr, strerror(es));
	CHECK(still == 0, "still readable after the read");
	return 0;
}

static int signalfd_mask_update_and_blocking_read(void)
{
	block(SIGUSR1, SIG_BLOCK);
	block(SIGUSR2, SIG_BLOCK);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	int fd = signalfd(-1, &set, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	int same = signalfd(fd, &set, 0);
	pid_t child = signal_later(SIGUSR2, 50);
	struct signalfd_siginfo si;
	memset(&si, 0, sizeof(si));
	ssize_t r = read(fd, &si, sizeof(si));
	reap(child);
	kill(getpid(), SIGUSR1);
	struct pollfd p = { fd, POLLIN, 0 };
	int usr1 = poll(&p, 1, 0);
	int p2[2];
	pipe(p2);
	int notsfd = signalfd(p2[0], &set, 0);
	int e1 = errno;
	int badsize = syscall(SYS_signalfd4, -1, &set, 4, 0);
	int e2 = errno;
	close(p2[0]);
	close(p2[1]);
	/* Take the SIGUSR1 left pending through a second signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	int drain = signalfd(-1, &set, SFD_NONBLOCK);
	struct signalfd_siginfo si1;
	memset(&si1, 0, sizeof(si1));
	ssize_t r1 = read(drain, &si1, sizeof(si1));
	close(drain);
	close(fd);
	block(SIGUSR1, SIG_UNBLOCK);
	block(SIGUSR2, SIG_UNBLOCK);
	CHECK(same == fd, "updating the mask returned %d, want %d", same, fd);
	CHECK(r == 128 && si.ssi_signo == SIGUSR2, "the blocking read: %zd, signo %u", r,
	      si.ssi_signo);
	CHECK(usr1 == 0, "SIGUSR1, no longer in the mask, made it readable");
	CHECK(r1 == 128 && si1.ssi_signo == SIGUSR1, "the second signalfd: %zd, signo %u", r1,
	      si1.ssi_signo);
	CHECK(notsfd == -1 && e1 == EINVAL, "a pipe fd: %d (%s)", notsfd, strerror(e1));
	CHECK(badsize == -1 && e2 == EINVAL, "sizemask 4: %d (%s)", badsize, strerror(e2));
	return 0;
}

static int epoll_pwait2_timeout_and_pwait_sigmask(void)
{
	int ep = epoll_create1(0);
	struct epoll_event out[1];
	struct timespec ts = { 0, 50000000 };
	long long t0 = now_ms();
	int n = epoll_pwait2(ep, out, 1, &ts, NULL);
	long long took = now_ms() - t0;
	catch(SIGUSR2, 0);
	block(SIGUSR2, SIG_BLOCK);
	kill(getpid(), SIGUSR2);
	sigset_t empty, now;
	sigemptyset(&empty);
	int m = epoll_pwait(ep, out, 1, 5000, &empty);
	int e = errno;
	sigprocmask(SIG_SETMASK, NULL, &now);
	int still = sigismember(&now, SIGUSR2);
	block(SIGUSR2, SIG_UNBLOCK);
	signal(SIGUSR2, SIG_DFL);
	close(ep);
	CHECK(n == 0 && took >= 40 && took < 2000, "epoll_pwait2 of 50 ms: %d after %lld ms", n,
	      took);
	CHECK(m == -1 && e == EINTR, "epoll_pwait with the signal let in: %d (%s)", m,
	      strerror(e));
	CHECK(handled == 1 && still == 1, "handled %d, blocked again %d", (int)handled, still);
	return 0;
}

/* Adds pipes' read ends to a new epoll instance until it fails; the
 * count, errno in *err. */
static int add_until_refused(int *err, int *ep)
{
	*ep = epoll_create1(0);
	int n = 0;
	*err = 0;
	for (int i = 0; i < 8 && !*err; i++) {
		int p[2];
		if (pipe(p))
			return -1;
		struct epoll_event ev = { .events = EPOLLIN };
		if (epoll_ctl(*ep, EPOLL_CTL_ADD, p[0], &ev))
			*err = errno;
		else
			n++;
		close(p[1]);
		/* p[0] stays open: its item with it. */
	}
	return n;
}

/* fs.epoll.max_user_watches bounds the items a user has in all its
 * epoll instances; closing an instance gives its items back. */
static int epoll_watches_are_bounded_per_user(void)
{
	const char *knob = "/proc/sys/fs/epoll/max_user_watches";
	char old[32] = "";
	int fd = open(knob, O_RDWR);
	CHECK(fd >= 0 && read(fd, old, sizeof(old) - 1) > 0, "reading %s: %s", knob,
	      strerror(errno));
	CHECK(pwrite(fd, "3", 1, 0) == 1, "writing 3: %s", strerror(errno));
	int err, err2, ep, ep2;
	int first = add_until_refused(&err, &ep);
	close(ep);
	int second = add_until_refused(&err2, &ep2);
	close(ep2);
	pwrite(fd, old, strlen(old), 0);
	close(fd);
	CHECK(atol(old) > 1000, "max_user_watches was %s", old);
	CHECK(first == 3 && err == ENOSPC, "%d items, then %s", first, strerror(err));
	CHECK(second == 3 && err2 == ENOSPC, "after closing: %d items, then %s", second,
	      strerror(err2));
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(poll_pipe_readable_after_write_writable_always),
		TEST(poll_pipe_hup_without_writers_err_without_readers),
		TEST(poll_closed_fd_is_nval_negative_fd_ignored),
		TEST(poll_regular_file_is_always_ready),
		TEST(poll_times_out),
		TEST(poll_woken_by_child_writer),
		TEST(poll_woken_by_thread_on_eventfd),
		TEST(poll_interrupted_by_signal_even_with_sa_restart),
		TEST(ppoll_sigmask_lets_a_blocked_signal_in_then_restores),
		TEST(ppoll_timeout_and_bad_arguments),
		TEST(pause_returns_eintr_after_a_handler),
		TEST(select_reports_ready_sets),
		TEST(select_closed_fd_is_ebadf),
		TEST(select_timeout_clears_sets_and_leaves_zero),
		TEST(select_writes_back_the_time_left),
		TEST(pselect_sigmask_lets_a_blocked_signal_in),
		TEST(fionread_counts_bytes_in_a_pipe),
		TEST(eventfd_adds_writes_and_read_takes_all),
		TEST(eventfd_semaphore_reads_one_at_a_time),
		TEST(eventfd_sizes_overflow_and_flags),
		TEST(eventfd_blocking_read_woken_by_thread),
		TEST(epoll_level_triggered_reports_data_until_drained),
		TEST(epoll_edge_triggered_reports_each_new_write_once),
		TEST(epoll_oneshot_disarms_until_mod),
		TEST(epoll_ctl_and_wait_errors),
		TEST(epoll_wait_woken_by_thread_and_times_out),
		TEST(epoll_pwait_interrupted_by_signal),
		TEST(epoll_drops_an_item_when_its_file_closes),
		TEST(epoll_small_maxevents_rotates_through_ready_items),
		TEST(epoll_nested_in_poll_and_epoll),
		TEST(epoll_pwait2_timeout_and_pwait_sigmask),
		TEST(timerfd_one_shot_expires_once),
		TEST(timerfd_interval_counts_expirations),
		TEST(timerfd_absolute_realtime_in_epoll),
		TEST(timerfd_errors),
		TEST(signalfd_reads_a_blocked_pending_signal),
		TEST(signalfd_mask_update_and_blocking_read),
		TEST(epoll_watches_are_bounded_per_user),
	};
	return run_tests("poll", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
