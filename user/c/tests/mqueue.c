/*
 * POSIX message queues: mq_open's names, flags and attributes (with the
 * fs.mqueue sysctls and RLIMIT_MSGQUEUE behind them), messages received
 * highest priority first, the size and descriptor errnos, O_NONBLOCK and
 * absolute timeouts, senders and receivers waiting on each other across
 * fork, mq_notify's one-shot signal, poll, a queue that outlives its
 * name, and a queue's mode and owner against nobody. A static glibc program: make test runs it on faultline, make
 * test-linux on Debian's Linux 6.12, and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define NAME "/faultline-mq-test"

/* A fresh queue named NAME: `maxmsg` messages of `msgsize` bytes, or the
 * defaults if both are 0. */
static mqd_t fresh(int oflag, long maxmsg, long msgsize)
{
	struct mq_attr a = { .mq_maxmsg = maxmsg, .mq_msgsize = msgsize };
	mq_unlink(NAME);
	return mq_open(NAME, O_CREAT | O_EXCL | oflag, 0600, maxmsg || msgsize ? &a : NULL);
}

/* The CLOCK_REALTIME time `ms` milliseconds from now. */
static struct timespec in_ms(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* The first line of a /proc/sys file, as a number; -1 if unreadable. */
static long sysctl(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

static int write_sysctl(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	int r = write(fd, value, strlen(value)) < 0 ? -1 : 0;
	close(fd);
	return r;
}

static int names_flags_and_defaults(void)
{
	mqd_t q = fresh(O_RDWR, 0, 0);
	CHECK(q >= 0, "mq_open O_CREAT|O_EXCL: %s", strerror(errno));
	struct mq_attr a;
	CHECK(mq_getattr(q, &a) == 0, "mq_getattr: %s", strerror(errno));
	CHECK(a.mq_maxmsg == 10 && a.mq_msgsize == 8192 && a.mq_curmsgs == 0 && a.mq_flags == 0,
	      "default attributes %ld %ld %ld %ld", a.mq_maxmsg, a.mq_msgsize, a.mq_curmsgs,
	      a.mq_flags);
	int fdflags = fcntl(q, F_GETFD);
	CHECK(fdflags == FD_CLOEXEC, "a queue descriptor's F_GETFD is %d, not FD_CLOEXEC", fdflags);
	errno = 0;
	CHECK(mq_open(NAME, O_CREAT | O_EXCL | O_RDWR, 0600, NULL) < 0 && errno == EEXIST,
	      "O_EXCL on a taken name: %s", strerror(errno));
	mqd_t again = mq_open(NAME, O_RDONLY);
	CHECK(again >= 0, "opening it again: %s", strerror(errno));
	mq_close(again);
	errno = 0;
	CHECK(mq_open(NAME, O_RDWR | O_WRONLY) < 0 && errno == EINVAL,
	      "access mode 3: %s", strerror(errno));
	/* The kernel's names have no slash: glibc strips the first one. */
	errno = 0;
	CHECK(syscall(SYS_mq_open, "", O_CREAT | O_RDWR, 0600, NULL) < 0 && errno == ENOENT,
	      "an empty name: %s", strerror(errno));
	static const char *const bad[] = { ".", "..", "a/b" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		long r = syscall(SYS_mq_open, bad[i], O_CREAT | O_RDWR, 0600, NULL);
		CHECK(r < 0 && errno == EACCES, "name \"%s\": %ld %s", bad[i], r, strerror(errno));
	}
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	errno = 0;
	CHECK(syscall(SYS_mq_open, longname, O_CREAT | O_RDWR, 0600, NULL) < 0 &&
		      errno == ENAMETOOLONG,
	      "a 299-byte name: %s", strerror(errno));
	errno = 0;
	CHECK(syscall(SYS_mq_open, "faultline-mq-x", O_RDWR, 0, (void *)8) < 0 && errno == EFAULT,
	      "a bad attr pointer without O_CREAT: %s", strerror(errno));
	CHECK(mq_unlink(NAME) == 0, "mq_unlink: %s", strerror(errno));
	errno = 0;
	CHECK(mq_unlink(NAME) < 0 && errno == ENOENT, "second mq_unlink: %s", strerror(errno));
	errno = 0;
	CHECK(mq_open(NAME, O_RDWR) < 0 && errno == ENOENT, "open of an unlinked name: %s",
	      strerror(errno));
	mq_close(q);
	return 0;
}

static int attributes_and_their_limits(void)
{
	CHECK(sysctl("/proc/sys/fs/mqueue/msg_max") == 10, "fs.mqueue.msg_max %ld",
	      sysctl("/proc/sys/fs/mqueue/msg_max"));
	CHECK(sysctl("/proc/sys/fs/mqueue/msgsize_max") == 8192, "fs.mqueue.msgsize_max");
	CHECK(sysctl("/proc/sys/fs/mqueue/queues_max") == 256, "fs.mqueue.queues_max");
	CHECK(sysctl("/proc/sys/fs/mqueue/msg_default") == 10, "fs.mqueue.msg_default");
	CHECK(sysctl("/proc/sys/fs/mqueue/msgsize_default") == 8192, "fs.mqueue.msgsize_default");
	CHECK(write_sysctl("/proc/sys/fs/mqueue/msg_max", "0") < 0 && errno == EINVAL,
	      "msg_max of 0 was taken");
	CHECK(write_sysctl("/proc/sys/fs/mqueue/msgsize_max", "127") < 0 && errno == EINVAL,
	      "msgsize_max of 127 was taken");
	struct { long maxmsg, msgsize; int err; } cases[] = {
		{ 0, 16, EINVAL }, { 4, 0, EINVAL }, { -1, 16, EINVAL },
		/* Over fs.mqueue.msg_max, but root has CAP_SYS_RESOURCE. */
		{ 20, 16, 0 },
		{ 65537, 16, EINVAL }, { 4, (16 << 20) + 1, EINVAL },
		/* Within the hard limits, over RLIMIT_MSGQUEUE's 819200 bytes. */
		{ 1000, 8192, EMFILE },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		errno = 0;
		mqd_t q = fresh(O_RDWR, cases[i].maxmsg, cases[i].msgsize);
		int err = q < 0 ? errno : 0;
		if (q >= 0)
			mq_close(q);
		CHECK(err == cases[i].err, "maxmsg %ld msgsize %ld: %s, not %s", cases[i].maxmsg,
		      cases[i].msgsize, strerror(err), strerror(cases[i].err));
	}
	struct rlimit r;
	CHECK(getrlimit(RLIMIT_MSGQUEUE, &r) == 0 && r.rlim_cur == 819200,
	      "RLIMIT_MSGQUEUE %lu", (unsigned long)r.rlim_cur);
	/* A lower limit is obeyed at once: default queues take 82880 bytes. */
	struct rlimit low = { 100000, r.rlim_max };
	CHECK(setrlimit(RLIMIT_MSGQUEUE, &low) == 0, "setrlimit: %s", strerror(errno));
	mqd_t one = fresh(O_RDWR, 0, 0);
	int err = 0;
	mqd_t two = mq_open(NAME "2", O_CREAT | O_RDWR, 0600, NULL);
	if (two < 0)
		err = errno;
	setrlimit(RLIMIT_MSGQUEUE, &r);
	mq_unlink(NAME "2");
	CHECK(one >= 0 && two < 0 && err == EMFILE, "two default queues under 100000 bytes: %s",
	      strerror(err));
	mq_close(one);
	mq_unlink(NAME);
	return 0;
}

static int highest_priority_first_and_sizes(void)
{
	mqd_t q = fresh(O_RDWR, 8, 64);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	static const struct { const char *text; unsigned prio; } sent[] = {
		{ "one", 1 }, { "five", 5 }, { "three", 3 }, { "five again", 5 }, { "zero", 0 },
	};
	for (unsigned i = 0; i < 5; i++)
		CHECK(mq_send(q, sent[i].text, strlen(sent[i].text), sent[i].prio) == 0,
		      "mq_send %s: %s", sent[i].text, strerror(errno));
	struct mq_attr a;
	mq_getattr(q, &a);
	CHECK(a.mq_curmsgs == 5, "curmsgs %ld after 5 sends", a.mq_curmsgs);
	static const char *const order[] = { "five", "five again", "three", "one", "zero" };
	static const unsigned prios[] = { 5, 5, 3, 1, 0 };
	for (unsigned i = 0; i < 5; i++) {
		char buf[64];
		unsigned prio = 99;
		ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
		CHECK(n == (ssize_t)strlen(order[i]) && memcmp(buf, order[i], n) == 0 &&
			      prio == prios[i],
		      "receive %u: %zd bytes, priority %u, wanted %s", i, n, prio, order[i]);
	}
	char big[65] = { 0 };
	errno = 0;
	CHECK(mq_send(q, big, 65, 0) < 0 && errno == EMSGSIZE, "65 bytes into 64: %s",
	      strerror(errno));
	CHECK(mq_send(q, big, 0, 0) == 0, "an empty message: %s", strerror(errno));
	errno = 0;
	CHECK(mq_receive(q, big, 63, NULL) < 0 && errno == EMSGSIZE, "a 63-byte buffer: %s",
	      strerror(errno));
	CHECK(mq_receive(q, big, 64, NULL) == 0, "the empty message back: %s", strerror(errno));
	errno = 0;
	CHECK(mq_send(q, "x", 1, 32768) < 0 && errno == EINVAL, "priority 32768: %s",
	      strerror(errno));
	CHECK(mq_send(q, "x", 1, 32767) == 0, "priority 32767: %s", strerror(errno));
	CHECK(mq_receive(q, big, 64, NULL) == 1, "the message of priority 32767");
	mq_close(q);

	mqd_t ro = mq_open(NAME, O_RDONLY), wo = mq_open(NAME, O_WRONLY);
	CHECK(ro >= 0 && wo >= 0, "reopen: %s", strerror(errno));
	errno = 0;
	CHECK(mq_send(ro, "x", 1, 0) < 0 && errno == EBADF, "send on O_RDONLY: %s",
	      strerror(errno));
	errno = 0;
	CHECK(mq_receive(wo, big, 64, NULL) < 0 && errno == EBADF, "receive on O_WRONLY: %s",
	      strerror(errno));
	int p[2];
	pipe(p);
	errno = 0;
	CHECK(mq_send(p[1], "x", 1, 0) < 0 && errno == EBADF, "send on a pipe: %s",
	      strerror(errno));
	errno = 0;
	CHECK(mq_getattr(p[0], &a) < 0 && errno == EBADF, "mq_getattr on a pipe: %s",
	      strerror(errno));
	errno = 0;
	CHECK(mq_send(wo, "x", 1, 0) == 0 &&
		      mq_receive(ro, big, 64, (unsigned *)8) < 0 && errno == EFAULT,
	      "a bad priority pointer: %s", strerror(errno));
	mq_getattr(ro, &a);
	CHECK(a.mq_curmsgs == 0, "a message whose copy faulted is still there (%ld)",
	      a.mq_curmsgs);
	close(p[0]);
	close(p[1]);
	mq_close(ro);
	mq_close(wo);
	mq_unlink(NAME);
	return 0;
}

static int nonblocking_and_timeouts(void)
{
	mqd_t q = fresh(O_RDWR | O_NONBLOCK, 2, 16);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	char buf[16];
	errno = 0;
	CHECK(mq_receive(q, buf, 16, NULL) < 0 && errno == EAGAIN, "empty, O_NONBLOCK: %s",
	      strerror(errno));
	CHECK(mq_send(q, "a", 1, 0) == 0 && mq_send(q, "b", 1, 0) == 0, "two sends");
	errno = 0;
	CHECK(mq_send(q, "c", 1, 0) < 0 && errno == EAGAIN, "full, O_NONBLOCK: %s",
	      strerror(errno));
	struct mq_attr a, old;
	mq_getattr(q, &a);
	CHECK(a.mq_flags == O_NONBLOCK && a.mq_curmsgs == 2, "flags %lx curmsgs %ld", a.mq_flags,
	      a.mq_curmsgs);
	struct mq_attr bad = { .mq_flags = O_APPEND };
	errno = 0;
	CHECK(mq_setattr(q, &bad, NULL) < 0 && errno == EINVAL, "mq_setattr O_APPEND: %s",
	      strerror(errno));
	struct mq_attr blocking = { .mq_flags = 0, .mq_maxmsg = 99 };
	CHECK(mq_setattr(q, &blocking, &old) == 0 && old.mq_flags == O_NONBLOCK &&
		      old.mq_maxmsg == 2,
	      "mq_setattr: %s", strerror(errno));
	mq_getattr(q, &a);
	CHECK(a.mq_flags == 0 && a.mq_maxmsg == 2, "after mq_setattr: flags %lx maxmsg %ld",
	      a.mq_flags, a.mq_maxmsg);
	CHECK((fcntl(q, F_GETFL) & O_NONBLOCK) == 0, "F_GETFL still shows O_NONBLOCK");

	/* Full and blocking: the send waits for its deadline. */
	struct timespec t = in_ms(50);
	long long start = mono_ms();
	errno = 0;
	CHECK(mq_timedsend(q, "c", 1, 0, &t) < 0 && errno == ETIMEDOUT, "timed send: %s",
	      strerror(errno));
	CHECK(mono_ms() - start >= 45, "the timed send came back after %lld ms",
	      mono_ms() - start);
	/* A message there is taken whatever the deadline; a bad timespec is
	 * EINVAL all the same. */
	struct timespec past = { 1, 0 }, invalid = { 0, 1000000000 };
	errno = 0;
	CHECK(mq_timedreceive(q, buf, 16, NULL, &invalid) < 0 && errno == EINVAL,
	      "tv_nsec 1e9: %s", strerror(errno));
	CHECK(mq_timedreceive(q, buf, 16, NULL, &past) == 1 && buf[0] == 'a',
	      "a deadline in the past with a message there: %s", strerror(errno));
	CHECK(mq_receive(q, buf, 16, NULL) == 1 && buf[0] == 'b', "second message");
	t = in_ms(50);
	start = mono_ms();
	errno = 0;
	CHECK(mq_timedreceive(q, buf, 16, NULL, &t) < 0 && errno == ETIMEDOUT,
	      "timed receive: %s", strerror(errno));
	CHECK(mono_ms() - start >= 45, "the timed receive came back after %lld ms",
	      mono_ms() - start);
	mq_close(q);
	mq_unlink(NAME);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int senders_and_receivers_wait_for_each_other(void)
{
	mqd_t q = fresh(O_RDWR, 1, 16);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	pid_t child = fork();
	if (child == 0) {
		usleep(50000);
		mq_send(q, "hello", 5, 7);
		/* Full now: this waits for the parent's second receive. */
		mq_send(q, "again", 5, 1);
		_exit(0);
	}
	char buf[16];
	unsigned prio;
	long long start = mono_ms();
	ssize_t n = mq_receive(q, buf, 16, &prio);
	CHECK(n == 5 && memcmp(buf, "hello", 5) == 0 && prio == 7,
	      "the child's message: %zd %s", n, strerror(errno));
	CHECK(mono_ms() - start >= 40, "the receive did not wait for the child");
	usleep(50000);
	n = mq_receive(q, buf, 16, &prio);
	CHECK(n == 5 && memcmp(buf, "again", 5) == 0 && prio == 1, "second message: %zd", n);
	int status;
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status), "child");

	/* A signal with a handler and no SA_RESTART ends a wait with EINTR. */
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = { .it_value = { 0, 50000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	n = mq_receive(q, buf, 16, NULL);
	int err = errno;
	sigaction(SIGALRM, &old, NULL);
	CHECK(n < 0 && err == EINTR, "a receive interrupted by SIGALRM: %zd %s", n, strerror(err));
	mq_close(q);
	mq_unlink(NAME);
	return 0;
}

static volatile sig_atomic_t got;
static siginfo_t got_info;

static void on_usr1(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)uc;
	got_info = *info;
	got++;
}

static int notify_signals_once_on_an_empty_queue(void)
{
	mqd_t q = fresh(O_RDWR, 4, 16);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO }, old;
	sigaction(SIGUSR1, &sa, &old);
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1,
			       .sigev_value.sival_int = 42 };
	CHECK(mq_notify(q, &ev) == 0, "mq_notify: %s", strerror(errno));
	errno = 0;
	CHECK(mq_notify(q, &ev) < 0 && errno == EBUSY, "registering twice: %s", strerror(errno));
	struct sigevent bad = { .sigev_notify = 99 };
	errno = 0;
	CHECK(mq_notify(q, &bad) < 0 && errno == EINVAL, "sigev_notify 99: %s", strerror(errno));
	bad.sigev_notify = SIGEV_SIGNAL;
	bad.sigev_signo = 65;
	errno = 0;
	CHECK(mq_notify(q, &bad) < 0 && errno == EINVAL, "signal 65: %s", strerror(errno));

	got = 0;
	pid_t child = fork();
	if (child == 0) {
		mq_send(q, "x", 1, 0);
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	for (int i = 0; i < 100 && !got; i++)
		usleep(1000);
	CHECK(got == 1, "%d notifications for a message on an empty queue", (int)got);
	CHECK(got_info.si_signo == SIGUSR1 && got_info.si_code == SI_MESGQ &&
		      got_info.si_pid == child && got_info.si_uid == getuid() &&
		      got_info.si_value.sival_int == 42,
	      "siginfo: signo %d code %d pid %d (child %d) uid %d value %d", got_info.si_signo,
	      got_info.si_code, got_info.si_pid, child, got_info.si_uid,
	      got_info.si_value.sival_int);
	/* One shot: the next message, and one to a queue that is not empty,
	 * send nothing. */
	mq_send(q, "y", 1, 0);
	CHECK(mq_notify(q, &ev) == 0, "registering again: %s", strerror(errno));
	mq_send(q, "z", 1, 0);
	usleep(20000);
	CHECK(got == 1, "a message to a non-empty queue notified");
	/* A null sigevent takes the registration back. */
	CHECK(mq_notify(q, NULL) == 0, "unregister: %s", strerror(errno));
	char buf[16];
	struct timespec past = { 1, 0 };
	while (mq_timedreceive(q, buf, 16, NULL, &past) >= 0)
		;
	mq_send(q, "w", 1, 0);
	usleep(20000);
	CHECK(got == 1, "a notification after mq_notify(NULL)");
	/* SIGEV_NONE registers and sends nothing. */
	mq_receive(q, buf, 16, NULL);
	ev.sigev_notify = SIGEV_NONE;
	CHECK(mq_notify(q, &ev) == 0, "SIGEV_NONE: %s", strerror(errno));
	errno = 0;
	CHECK(mq_notify(q, &ev) < 0 && errno == EBUSY, "SIGEV_NONE holds the registration");
	mq_send(q, "v", 1, 0);
	usleep(20000);
	CHECK(got == 1, "SIGEV_NONE sent a signal");
	CHECK(mq_notify(q, &ev) == 0, "SIGEV_NONE is spent by the message: %s", strerror(errno));
	sigaction(SIGUSR1, &old, NULL);
	mq_close(q);
	mq_unlink(NAME);
	return 0;
}

static int poll_and_a_queue_without_a_name(void)
{
	mqd_t q = fresh(O_RDWR, 1, 16);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	struct pollfd p = { .fd = q, .events = POLLIN | POLLOUT };
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLOUT, "empty queue revents %x", p.revents);
	CHECK(mq_unlink(NAME) == 0, "mq_unlink: %s", strerror(errno));
	/* Unlinked, the queue lives on while a descriptor holds it. */
	CHECK(mq_send(q, "kept", 4, 0) == 0, "send after unlink: %s", strerror(errno));
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLIN, "full queue revents %x", p.revents);
	mqd_t other = mq_open(NAME, O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
	CHECK(other >= 0, "the name is free again: %s", strerror(errno));
	struct mq_attr a;
	mq_getattr(other, &a);
	CHECK(a.mq_curmsgs == 0, "the new queue holds %ld messages", a.mq_curmsgs);
	char buf[16];
	CHECK(mq_receive(q, buf, 16, NULL) == 4 && memcmp(buf, "kept", 4) == 0,
	      "the unlinked queue's message");
	mq_close(other);
	mq_close(q);
	mq_unlink(NAME);
	return 0;
}

/* Root's 0644 queue, seen by nobody: readable, not writable, and not
 * its to unlink (the names live in a sticky directory). */
static int modes_and_owners_bind_queues(void)
{
	mqd_t q = fresh(O_RDWR, 0, 0);
	CHECK(q >= 0, "mq_open: %s", strerror(errno));
	fchmod(q, 0644);
	pid_t child = fork();
	if (child == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(10);
		mqd_t ro = mq_open(NAME, O_RDONLY);
		if (ro < 0)
			_exit(1);
		if (mq_open(NAME, O_WRONLY) != -1 || errno != EACCES)
			_exit(2);
		/* The kernel's EPERM, which glibc's mq_unlink makes EACCES. */
		if (mq_unlink(NAME) != -1 || errno != EACCES)
			_exit(3);
		mqd_t mine = mq_open(NAME "-nobody", O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
		_exit(mine >= 0 && mq_unlink(NAME "-nobody") == 0 ? 0 : 4);
	}
	int status;
	waitpid(child, &status, 0);
	mq_close(q);
	int gone = mq_unlink(NAME);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody's check %d failed",
	      WEXITSTATUS(status));
	CHECK(gone == 0, "root unlinking its queue: %s", strerror(errno));
	return 0;
}

static const struct test tests[] = {
	TEST(names_flags_and_defaults),
	TEST(attributes_and_their_limits),
	TEST(highest_priority_first_and_sizes),
	TEST(nonblocking_and_timeouts),
	TEST(senders_and_receivers_wait_for_each_other),
	TEST(notify_signals_once_on_an_empty_queue),
	TEST(poll_and_a_queue_without_a_name),
	TEST(modes_and_owners_bind_queues),
};

int main(void)
{
	return run_tests("mqueue", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
