/*
 * Process file descriptors (pidfds) and the calls around them, through
 * glibc and raw system calls: clone's CLONE_PIDFD, clone3 and its
 * argument checks and exit signals, pidfd_open, poll and epoll on a
 * pidfd, waitid(P_PIDFD) with a blocking and a non-blocking pidfd,
 * pidfd_send_signal, pidfd_getfd with kcmp, and setns with a pidfd. A
 * static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12, and the values it expects are Linux's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static volatile int got_thread_code;

static int pidfd_open(pid_t pid, unsigned flags)
{
	return syscall(SYS_pidfd_open, pid, flags);
}

static int pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, info, flags);
}

static int pidfd_getfd(int pidfd, int fd, unsigned flags)
{
	return syscall(SYS_pidfd_getfd, pidfd, fd, flags);
}

static int waitid_raw(int which, int id, siginfo_t *info, int options)
{
	return syscall(SYS_waitid, which, id, info, options, NULL);
}

static pid_t clone3_raw(struct clone_args *args, size_t size)
{
	return syscall(SYS_clone3, args, size);
}

/* A fork through the raw clone call, arm64's order: flags, stack,
 * parent_tid, tls, child_tid. */
static pid_t clone_raw(unsigned long flags, int *parent_tid)
{
	return syscall(SYS_clone, flags, 0, parent_tid, 0, 0);
}

/* Is the pidfd readable within MS milliseconds? Its revents, or -1. */
static int poll_pidfd(int pidfd, int ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n = poll(&p, 1, ms);
	return n < 0 ? -1 : n == 0 ? 0 : p.revents;
}

/* A child that waits for a byte on its pipe, then exits with CODE. */
static pid_t child_waiting(int *release, int code, int *pidfd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid_t pid = clone_raw(CLONE_PIDFD | SIGCHLD, pidfd);
	if (pid == 0) {
		char c;
		close(p[1]);
		read(p[0], &c, 1);
		_exit(code);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

static int pidfd_open_checks_its_arguments(void)
{
	errno = 0;
	CHECK(pidfd_open(-1, 0) == -1 && errno == EINVAL, "pid -1: %s", strerror(errno));
	CHECK(pidfd_open(0, 0) == -1 && errno == EINVAL, "pid 0: %s", strerror(errno));
	CHECK(pidfd_open(getpid(), 1) == -1 && errno == EINVAL, "flag 1: %s", strerror(errno));
	int fd = pidfd_open(getpid(), 0);
	CHECK(fd >= 0, "own pid: %s", strerror(errno));
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "not close-on-exec");
	int fl = fcntl(fd, F_GETFL);
	CHECK((fl & O_ACCMODE) == O_RDWR && !(fl & O_NONBLOCK), "flags %#x", fl);
	close(fd);
	fd = pidfd_open(getpid(), PIDFD_NONBLOCK);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK), "PIDFD_NONBLOCK: %s", strerror(errno));
	close(fd);
	/* A reaped child's PID names nothing. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK(pidfd_open(pid, 0) == -1 && errno == ESRCH, "reaped: %s", strerror(errno));
	return 0;
}

static void *sleeper(void *arg)
{
	pid_t *tid = arg;
	*tid = gettid();
	pause();
	return NULL;
}

static int a_threads_tid_is_no_process(void)
{
	pthread_t t;
	static volatile pid_t tid;
	CHECK(pthread_create(&t, NULL, sleeper, (void *)&tid) == 0, "pthread_create");
	while (!tid)
		sched_yield();
	int fd = pidfd_open(tid, 0);
	int e = errno;
	pthread_cancel(t);
	pthread_join(t, NULL);
	CHECK(fd == -1 && e == EINVAL, "thread %d: %d %s", tid, fd, strerror(e));
	return 0;
}

/* Sleeps until cancelled, signals or not. */
static void *pauser(void *arg)
{
	*(volatile pid_t *)arg = gettid();
	for (;;)
		pause();
	return NULL;
}

static volatile pid_t signalled_tid;
static void note_tid(int sig, siginfo_t *si, void *uc)
{
	signalled_tid = gettid();
	got_thread_code = si->si_code;
}

/* PIDFD_THREAD: a pidfd for one thread, signalled alone and readable
 * once that thread has gone. */
static int a_thread_pidfd_names_one_thread(void)
{
	pthread_t t;
	static volatile pid_t tid;
	CHECK(pthread_create(&t, NULL, pauser, (void *)&tid) == 0, "pthread_create");
	while (!tid)
		sched_yield();
	int fd = pidfd_open(tid, PIDFD_THREAD);
	CHECK(fd >= 0, "pidfd_open(tid, PIDFD_THREAD): %s", strerror(errno));
	struct sigaction sa = { .sa_sigaction = note_tid, .sa_flags = SA_SIGINFO };
	sigaction(SIGUSR2, &sa, NULL);
	signalled_tid = 0;
	CHECK(pidfd_send_signal(fd, SIGUSR2, NULL, 0) == 0, "signal: %s", strerror(errno));
	for (int i = 0; i < 1000 && !signalled_tid; i++)
		usleep(1000);
	CHECK(signalled_tid == tid && got_thread_code == SI_TKILL, "taken by %d (code %d), not %d",
	      signalled_tid, got_thread_code, tid);
	CHECK(poll_pidfd(fd, 0) == 0, "readable while the thread runs");
	pthread_cancel(t);
	pthread_join(t, NULL);
	int ev = poll_pidfd(fd, 5000);
	CHECK(ev == (POLLIN | POLLHUP), "after the thread went: %#x", ev);
	CHECK(pidfd_send_signal(fd, SIGUSR2, NULL, 0) == -1 && errno == ESRCH, "gone: %s",
	      strerror(errno));
	close(fd);
	/* The first thread's id with PIDFD_THREAD: the main thread. */
	fd = pidfd_open(getpid(), PIDFD_THREAD);
	CHECK(fd >= 0 && poll_pidfd(fd, 0) == 0, "main thread: %s", strerror(errno));
	close(fd);
	signal(SIGUSR2, SIG_DFL);
	return 0;
}

static int clone_pidfd_polls_readable_when_the_child_exits(void)
{
	int pidfd = -1, release;
	pid_t pid = child_waiting(&release, 3, &pidfd);
	CHECK(pid > 0 && pidfd >= 0, "clone: %s", strerror(errno));
	CHECK(fcntl(pidfd, F_GETFD) == FD_CLOEXEC, "CLONE_PIDFD's fd not close-on-exec");
	CHECK(poll_pidfd(pidfd, 50) == 0, "readable while the child runs");
	close(release);
	int ev = poll_pidfd(pidfd, 5000);
	CHECK(ev == POLLIN, "after exit: %#x", ev);
	/* Still readable, and a zombie until reaped. */
	CHECK(poll_pidfd(pidfd, 0) == POLLIN, "second poll");
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %#x", st);
	ev = poll_pidfd(pidfd, 0);
	CHECK(ev == (POLLIN | POLLHUP), "after the reap: %#x", ev);
	close(pidfd);
	return 0;
}

static int clone_pidfd_refuses_parent_settid(void)
{
	int word = -1;
	errno = 0;
	CHECK(clone_raw(CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, &word) == -1 && errno == EINVAL,
	      "PIDFD|PARENT_SETTID: %s", strerror(errno));
	/* A thread's pidfd is fine, but it needs somewhere to go. */
	CHECK(clone_raw(CLONE_PIDFD | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, NULL) == -1 &&
		      errno == EFAULT,
	      "PIDFD|THREAD without a pidfd word: %s", strerror(errno));
	return 0;
}

static int epoll_sees_a_pidfd_become_readable(void)
{
	int pidfd = -1, release;
	pid_t pid = child_waiting(&release, 0, &pidfd);
	CHECK(pid > 0, "clone: %s", strerror(errno));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = pidfd }, out;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev) == 0, "epoll_ctl: %s", strerror(errno));
	CHECK(epoll_wait(ep, &out, 1, 50) == 0, "ready too soon");
	close(release);
	int n = epoll_wait(ep, &out, 1, 5000);
	CHECK(n == 1 && out.events == EPOLLIN && out.data.fd == pidfd, "n %d events %#x", n,
	      out.events);
	close(ep);
	waitpid(pid, NULL, 0);
	close(pidfd);
	return 0;
}

static int clone3_makes_a_child_with_a_pidfd(void)
{
	int pidfd = -1;
	pid_t ptid = 0;
	struct clone_args args = {
		.flags = CLONE_PIDFD | CLONE_PARENT_SETTID,
		.pidfd = (uintptr_t)&pidfd,
		.parent_tid = (uintptr_t)&ptid,
		.exit_signal = SIGCHLD,
	};
	pid_t pid = clone3_raw(&args, sizeof(args));
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0, "clone3: %s", strerror(errno));
	CHECK(ptid == pid && pidfd >= 0, "parent_tid %d pidfd %d", ptid, pidfd);
	siginfo_t si = { 0 };
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WEXITED) == 0, "waitid: %s", strerror(errno));
	CHECK(si.si_signo == SIGCHLD && si.si_code == CLD_EXITED && si.si_pid == pid &&
		      si.si_status == 7,
	      "signo %d code %d pid %d status %d", si.si_signo, si.si_code, si.si_pid, si.si_status);
	close(pidfd);
	/* The first version of the struct, 64 bytes, is enough. */
	pid = clone3_raw(&(struct clone_args){ .exit_signal = SIGCHLD }, 64);
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid, "64 bytes: %s", strerror(errno));
	return 0;
}

static int clone3_checks_its_arguments(void)
{
	struct {
		struct clone_args a;
		char more[64];
	} big = { .a.exit_signal = SIGCHLD };
	struct clone_args a = { .exit_signal = SIGCHLD };
	errno = 0;
	CHECK(clone3_raw(&a, 63) == -1 && errno == EINVAL, "63 bytes: %s", strerror(errno));
	CHECK(clone3_raw(&a, 4097) == -1 && errno == E2BIG, "4097 bytes: %s", strerror(errno));
	big.more[10] = 1;
	CHECK(clone3_raw(&big.a, sizeof(big)) == -1 && errno == E2BIG, "nonzero tail: %s",
	      strerror(errno));
	a.exit_signal = 65;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "exit signal 65: %s",
	      strerror(errno));
	a.exit_signal = 0;
	a.flags = SIGCHLD;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "CSIGNAL in flags: %s",
	      strerror(errno));
	a.flags = 0;
	a.stack = (uintptr_t)&big;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "stack without size: %s",
	      strerror(errno));
	a.stack = 0;
	a.stack_size = 4096;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "size without stack: %s",
	      strerror(errno));
	a.stack_size = 0;
	a.flags = CLONE_SIGHAND | CLONE_VM | CLONE_CLEAR_SIGHAND;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "SIGHAND|CLEAR_SIGHAND: %s",
	      strerror(errno));
	a.flags = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
	a.exit_signal = SIGCHLD;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "thread with exit signal: %s",
	      strerror(errno));
	a.flags = 1ULL << 40;
	a.exit_signal = 0;
	CHECK(clone3_raw(&a, sizeof(a)) == -1 && errno == EINVAL, "unknown flag: %s",
	      strerror(errno));
	return 0;
}

static volatile sig_atomic_t usr1_from;
static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	usr1_from = si->si_pid;
}

static int the_exit_signal_is_what_clone3_asked_for(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
	sigaction(SIGUSR1, &sa, NULL);
	usr1_from = 0;
	pid_t pid = clone3_raw(&(struct clone_args){ .exit_signal = SIGUSR1 }, sizeof(struct clone_args));
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0, "clone3: %s", strerror(errno));
	/* Not a SIGCHLD child: plain waits pass it by, __WALL and __WCLONE see it. */
	for (int i = 0; i < 500 && usr1_from != pid; i++)
		usleep(10000);
	CHECK(usr1_from == pid, "SIGUSR1 from %d, not %d", usr1_from, pid);
	errno = 0;
	CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD, "plain wait: %s",
	      strerror(errno));
	CHECK(waitpid(pid, NULL, __WCLONE) == pid, "__WCLONE: %s", strerror(errno));
	/* Exit signal 0: no signal at all, and __WALL reaps it. */
	pid = clone3_raw(&(struct clone_args){ .exit_signal = 0 }, sizeof(struct clone_args));
	if (pid == 0)
		_exit(0);
	CHECK(waitpid(pid, NULL, __WALL) == pid, "__WALL: %s", strerror(errno));
	signal(SIGUSR1, SIG_DFL);
	return 0;
}

static volatile sig_atomic_t handled;
static void on_handled(int sig)
{
	handled = 1;
}

static int clone3_clear_sighand_resets_handlers(void)
{
	signal(SIGUSR2, on_handled);
	signal(SIGPIPE, SIG_IGN);
	struct clone_args a = { .flags = CLONE_CLEAR_SIGHAND, .exit_signal = SIGCHLD };
	pid_t pid = clone3_raw(&a, sizeof(a));
	if (pid == 0) {
		struct sigaction old;
		sigaction(SIGUSR2, NULL, &old);
		int dfl = old.sa_handler == SIG_DFL;
		sigaction(SIGPIPE, NULL, &old);
		_exit(dfl && old.sa_handler == SIG_IGN ? 0 : 1);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child saw status %#x", st);
	return 0;
}

static int waitid_on_a_pidfd(void)
{
	siginfo_t si;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	errno = 0;
	CHECK(waitid_raw(P_PIDFD, null, &si, WEXITED) == -1 && errno == EBADF, "/dev/null: %s",
	      strerror(errno));
	close(null);
	CHECK(waitid_raw(P_PIDFD, -1, &si, WEXITED) == -1 && errno == EINVAL, "fd -1: %s",
	      strerror(errno));
	int self = pidfd_open(getpid(), PIDFD_NONBLOCK);
	CHECK(waitid_raw(P_PIDFD, self, &si, WEXITED) == -1 && errno == ECHILD, "own pidfd: %s",
	      strerror(errno));
	close(self);

	int pidfd = -1, release;
	pid_t pid = child_waiting(&release, 5, &pidfd);
	int nb = pidfd_open(pid, PIDFD_NONBLOCK);
	CHECK(nb >= 0, "pidfd_open: %s", strerror(errno));
	CHECK(waitid_raw(P_PIDFD, nb, &si, WEXITED) == -1 && errno == EAGAIN,
	      "non-blocking, running: %s", strerror(errno));
	memset(&si, 0xff, sizeof(si));
	CHECK(waitid_raw(P_PIDFD, nb, &si, WEXITED | WNOHANG) == 0 && si.si_pid == 0,
	      "WNOHANG: %s pid %d", strerror(errno), si.si_pid);
	close(release);
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == pid &&
		      si.si_status == 5,
	      "WNOWAIT: %s", strerror(errno));
	CHECK(waitid_raw(P_PIDFD, nb, &si, WEXITED) == 0 && si.si_code == CLD_EXITED, "reap: %s",
	      strerror(errno));
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WEXITED) == -1 && errno == ECHILD, "reaped: %s",
	      strerror(errno));
	close(nb);
	close(pidfd);
	return 0;
}

static int waitid_sees_stop_and_continue_through_a_pidfd(void)
{
	int pidfd = -1;
	pid_t pid = clone_raw(CLONE_PIDFD | SIGCHLD, &pidfd);
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	siginfo_t si;
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WSTOPPED) == 0 && si.si_code == CLD_STOPPED &&
		      si.si_status == SIGSTOP,
	      "stopped: %s code %d", strerror(errno), si.si_code);
	CHECK(pidfd_send_signal(pidfd, SIGCONT, NULL, 0) == 0, "SIGCONT: %s", strerror(errno));
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WCONTINUED) == 0 && si.si_code == CLD_CONTINUED,
	      "continued: code %d", si.si_code);
	CHECK(waitid_raw(P_PIDFD, pidfd, &si, WEXITED) == 0 && si.si_code == CLD_EXITED,
	      "exited: code %d", si.si_code);
	close(pidfd);
	return 0;
}

static volatile sig_atomic_t got_code, got_pid, got_value;
static void on_info(int sig, siginfo_t *si, void *uc)
{
	got_code = si->si_code;
	got_pid = si->si_pid;
	got_value = si->si_value.sival_int;
}

static int pidfd_send_signal_signals_and_checks(void)
{
	struct sigaction sa = { .sa_sigaction = on_info, .sa_flags = SA_SIGINFO };
	sigaction(SIGUSR1, &sa, NULL);
	int self = pidfd_open(getpid(), 0);
	got_code = 99;
	CHECK(pidfd_send_signal(self, SIGUSR1, NULL, 0) == 0, "to self: %s", strerror(errno));
	CHECK(got_code == SI_USER && got_pid == getpid(), "code %d pid %d", got_code, got_pid);
	/* A caller's own siginfo: SI_QUEUE and a value, to itself. */
	siginfo_t info = { .si_signo = SIGUSR1, .si_code = SI_QUEUE };
	info.si_pid = getpid();
	info.si_value.sival_int = 42;
	CHECK(pidfd_send_signal(self, SIGUSR1, &info, 0) == 0, "SI_QUEUE: %s", strerror(errno));
	CHECK(got_code == SI_QUEUE && got_value == 42, "code %d value %d", got_code, got_value);
	errno = 0;
	CHECK(pidfd_send_signal(self, SIGUSR2, &info, 0) == -1 && errno == EINVAL,
	      "signo mismatch: %s", strerror(errno));
	CHECK(pidfd_send_signal(self, SIGUSR1, NULL, 8) == -1 && errno == EINVAL, "flag 8: %s",
	      strerror(errno));
	CHECK(pidfd_send_signal(self, SIGUSR1, NULL, 3) == -1 && errno == EINVAL, "two flags: %s",
	      strerror(errno));
	CHECK(pidfd_send_signal(self, 65, NULL, 0) == -1 && errno == EINVAL, "signal 65: %s",
	      strerror(errno));
	int null = open("/dev/null", O_RDONLY);
	CHECK(pidfd_send_signal(null, SIGUSR1, NULL, 0) == -1 && errno == EBADF, "/dev/null: %s",
	      strerror(errno));
	close(null);
	close(self);
	signal(SIGUSR1, SIG_DFL);

	int pidfd = -1, release;
	pid_t pid = child_waiting(&release, 0, &pidfd);
	/* Another process may not be sent a siginfo that claims to be the kernel's or kill's. */
	info.si_code = SI_USER;
	CHECK(pidfd_send_signal(pidfd, SIGUSR1, &info, 0) == -1 && errno == EPERM,
	      "SI_USER to another: %s", strerror(errno));
	CHECK(pidfd_send_signal(pidfd, 0, NULL, 0) == 0, "signal 0: %s", strerror(errno));
	CHECK(pidfd_send_signal(pidfd, SIGKILL, NULL, 0) == 0, "SIGKILL: %s", strerror(errno));
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "status %#x", st);
	CHECK(pidfd_send_signal(pidfd, 0, NULL, 0) == -1 && errno == ESRCH, "reaped: %s",
	      strerror(errno));
	close(release);
	close(pidfd);
	return 0;
}

static int pidfd_getfd_copies_a_childs_file(void)
{
	int sk[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sk) == 0, "socketpair");
	pid_t pid = fork();
	if (pid == 0) {
		close(sk[0]);
		int m = memfd_create("getfd", 0);
		write(sk[1], &m, sizeof(m));
		char c;
		while (read(sk[1], &c, 1) == 1) {
			if (c == 'P')
				prctl(PR_SET_DUMPABLE, 0);
			write(sk[1], &c, 1);
		}
		_exit(0);
	}
	close(sk[1]);
	int remote;
	CHECK(read(sk[0], &remote, sizeof(remote)) == sizeof(remote), "child's fd");
	int pidfd = pidfd_open(pid, 0);
	errno = 0;
	CHECK(pidfd_getfd(pidfd, remote, 1) == -1 && errno == EINVAL, "flags 1: %s", strerror(errno));
	CHECK(pidfd_getfd(pidfd, 111, 0) == -1 && errno == EBADF, "fd 111: %s", strerror(errno));
	int fd = pidfd_getfd(pidfd, remote, 0);
	CHECK(fd >= 0, "getfd: %s", strerror(errno));
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "not close-on-exec");
	CHECK(syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, fd, remote) == 0, "kcmp says another file");
	int dup_of_other = open("/dev/null", O_RDONLY);
	long other = syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, dup_of_other, remote);
	CHECK(other == 1 || other == 2, "kcmp of different files: %ld", other);
	CHECK(syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, 1000, remote) == -1 && errno == EBADF,
	      "kcmp fd 1000: %s", strerror(errno));
	close(dup_of_other);
	close(fd);
	/* Root may look into a process that is not dumpable. */
	char c = 'P';
	write(sk[0], &c, 1);
	read(sk[0], &c, 1);
	fd = pidfd_getfd(pidfd, remote, 0);
	CHECK(fd >= 0, "not dumpable: %s", strerror(errno));
	close(fd);
	/* Gone: ESRCH, whether a zombie or reaped. */
	kill(pid, SIGKILL);
	CHECK(poll_pidfd(pidfd, 5000) == POLLIN, "exit not seen");
	CHECK(pidfd_getfd(pidfd, remote, 0) == -1 && errno == ESRCH, "zombie: %s", strerror(errno));
	waitpid(pid, NULL, 0);
	CHECK(pidfd_getfd(pidfd, remote, 0) == -1 && errno == ESRCH, "reaped: %s", strerror(errno));
	close(pidfd);
	close(sk[0]);
	return 0;
}

static int kcmp_compares_what_processes_share(void)
{
	pid_t me = getpid();
	CHECK(syscall(SYS_kcmp, me, me, KCMP_VM, 0, 0) == 0, "own VM");
	CHECK(syscall(SYS_kcmp, me, me, KCMP_FILES, 0, 0) == 0, "own files");
	int fd = dup(1);
	CHECK(syscall(SYS_kcmp, me, me, KCMP_FILE, 1, fd) == 0, "dup'd fd");
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	long vm = syscall(SYS_kcmp, me, pid, KCMP_VM, 0, 0);
	long back = syscall(SYS_kcmp, pid, me, KCMP_VM, 0, 0);
	long files = syscall(SYS_kcmp, me, pid, KCMP_FILES, 0, 0);
	long inherited = syscall(SYS_kcmp, me, pid, KCMP_FILE, 1, 1);
	long bad = syscall(SYS_kcmp, me, pid, 99, 0, 0);
	int e = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK((vm == 1 && back == 2) || (vm == 2 && back == 1), "VM order %ld %ld", vm, back);
	CHECK(files == 1 || files == 2, "fd tables: %ld", files);
	CHECK(inherited == 0, "an inherited file: %ld", inherited);
	CHECK(bad == -1 && e == EINVAL, "type 99: %ld %s", bad, strerror(e));
	CHECK(syscall(SYS_kcmp, me, pid, KCMP_VM, 0, 0) == -1 && errno == ESRCH, "gone: %s",
	      strerror(errno));
	return 0;
}

static int setns_takes_a_pidfd_and_mount_namespace(void)
{
	int m = memfd_create("ns", 0);
	errno = 0;
	CHECK(setns(m, 0) == -1 && errno == EINVAL, "memfd: %s", strerror(errno));
	close(m);
	int pidfd = -1, release;
	pid_t pid = child_waiting(&release, 0, &pidfd);
	CHECK(setns(pidfd, 0) == -1 && errno == EINVAL, "no flags: %s", strerror(errno));
	CHECK(setns(pidfd, CLONE_VM) == -1 && errno == EINVAL, "CLONE_VM: %s", strerror(errno));
	/* Joining the mount namespace one is in moves to its root. */
	CHECK(chdir("/tmp") == 0, "chdir");
	CHECK(setns(pidfd, CLONE_NEWNS) == 0, "CLONE_NEWNS: %s", strerror(errno));
	char cwd[64];
	CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0, "cwd %s", cwd);
	close(release);
	waitpid(pid, NULL, 0);
	CHECK(setns(pidfd, CLONE_NEWNS) == -1 && errno == ESRCH, "reaped: %s", strerror(errno));
	close(pidfd);
	return 0;
}

static const struct test tests[] = {
	TEST(pidfd_open_checks_its_arguments),
	TEST(a_threads_tid_is_no_process),
	TEST(a_thread_pidfd_names_one_thread),
	TEST(clone_pidfd_polls_readable_when_the_child_exits),
	TEST(clone_pidfd_refuses_parent_settid),
	TEST(epoll_sees_a_pidfd_become_readable),
	TEST(clone3_makes_a_child_with_a_pidfd),
	TEST(clone3_checks_its_arguments),
	TEST(the_exit_signal_is_what_clone3_asked_for),
	TEST(clone3_clear_sighand_resets_handlers),
	TEST(waitid_on_a_pidfd),
	TEST(waitid_sees_stop_and_continue_through_a_pidfd),
	TEST(pidfd_send_signal_signals_and_checks),
	TEST(pidfd_getfd_copies_a_childs_file),
	TEST(kcmp_compares_what_processes_share),
	TEST(setns_takes_a_pidfd_and_mount_namespace),
};

int main(void)
{
	return run_tests("pidfd", tests, sizeof(tests) / sizeof(tests[0]));
}
