/*
 * Named pipes as Linux 6.12 opens them (fs/pipe.c's fifo_open): an open
 * for reading waits for a writer and one for writing waits for a reader;
 * with O_NONBLOCK a reader opens at once and a writer without a reader
 * fails with ENXIO; O_RDWR never waits; a signal ends the wait with EINTR
 * (no SA_RESTART); the data goes when the last file closes. The shell's
 * `mkfifo f; (echo hi >f &); cat f` depends on the first two.
 * A static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12; the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *fifo = "/tmp/fifo-test";

static int make_fifo(void)
{
	unlink(fifo);
	return mkfifo(fifo, 0644);
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Forks a child that sleeps `ms`, then opens the FIFO with `flags` and,
 * if writing, writes `text`; returns its pid. */
static pid_t late_opener(int ms, int flags, const char *text)
{
	pid_t pid = fork();
	if (pid == 0) {
		usleep(ms * 1000);
		int fd = open(fifo, flags);
		if (fd < 0)
			_exit(1);
		if (text && write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			_exit(2);
		close(fd);
		_exit(0);
	}
	return pid;
}

static int exit_status(pid_t pid)
{
	int status = -1;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static int a_reader_waits_for_a_writer(void)
{
	CHECK(make_fifo() == 0, "mkfifo: %s", strerror(errno));
	long start = now_ms();
	pid_t child = late_opener(200, O_WRONLY, "through fifo");
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	long waited = now_ms() - start;
	char buf[32] = "";
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	int status = exit_status(child);
	if (fd >= 0)
		close(fd);
	unlink(fifo);
	CHECK(fd >= 0 && waited >= 150, "open: fd %d after %ld ms, want a wait for the writer", fd,
	      waited);
	CHECK(n == 12 && strcmp(buf, "through fifo") == 0 && status == 0, "read %zd \"%s\", "
	      "writer exit %d", n, buf, status);
	return 0;
}

static int a_writer_waits_for_a_reader(void)
{
	CHECK(make_fifo() == 0, "mkfifo: %s", strerror(errno));
	long start = now_ms();
	pid_t child = late_opener(200, O_RDONLY, NULL);
	int fd = open(fifo, O_WRONLY | O_CLOEXEC);
	long waited = now_ms() - start;
	int status = exit_status(child);
	if (fd >= 0)
		close(fd);
	unlink(fifo);
	CHECK(fd >= 0 && waited >= 150, "open: fd %d after %ld ms, want a wait for the reader", fd,
	      waited);
	CHECK(status == 0, "reader exit %d", status);
	return 0;
}

static int nonblocking_opens(void)
{
	CHECK(make_fifo() == 0, "mkfifo: %s", strerror(errno));
	errno = 0;
	int lone_writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	int lone_err = errno;
	int reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char buf[8];
	ssize_t alone = reader >= 0 ? read(reader, buf, sizeof(buf)) : -2;
	int writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	errno = 0;
	ssize_t empty = reader >= 0 ? read(reader, buf, sizeof(buf)) : -2;
	int empty_err = errno;
	ssize_t w = writer >= 0 ? write(writer, "ab", 2) : -2;
	ssize_t got = reader >= 0 ? read(reader, buf, sizeof(buf)) : -2;
	if (writer >= 0)
		close(writer);
	ssize_t eof = reader >= 0 ? read(reader, buf, sizeof(buf)) : -2;
	if (reader >= 0)
		close(reader);
	unlink(fifo);
	CHECK(lone_writer == -1 && lone_err == ENXIO, "writer with no reader: %d errno %d, "
	      "want ENXIO", lone_writer, lone_err);
	CHECK(reader >= 0 && alone == 0, "reader with no writer: fd %d, read %zd (want 0)", reader,
	      alone);
	CHECK(writer >= 0 && empty == -1 && empty_err == EAGAIN, "empty with a writer: %zd errno "
	      "%d", empty, empty_err);
	CHECK(w == 2 && got == 2 && eof == 0, "write %zd, read %zd, then %zd", w, got, eof);
	return 0;
}

static int read_write_never_waits_and_data_goes_at_last_close(void)
{
	CHECK(make_fifo() == 0, "mkfifo: %s", strerror(errno));
	int fd = open(fifo, O_RDWR | O_CLOEXEC);
	char buf[8] = "";
	ssize_t w = fd >= 0 ? write(fd, "xy", 2) : -2;
	ssize_t r = fd >= 0 ? read(fd, buf, 1) : -2;
	if (fd >= 0)
		close(fd);
	fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	errno = 0;
	ssize_t left = fd >= 0 ? read(fd, buf, sizeof(buf)) : -2;
	int left_err = errno;
	if (fd >= 0)
		close(fd);
	unlink(fifo);
	CHECK(w == 2 && r == 1 && buf[0] == 'x', "O_RDWR: write %zd, read %zd", w, r);
	CHECK(left == -1 && left_err == EAGAIN, "after the last close: read %zd errno %d, want "
	      "EAGAIN (the \"y\" gone)", left, left_err);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int a_signal_ends_the_wait(void)
{
	CHECK(make_fifo() == 0, "mkfifo: %s", strerror(errno));
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	sigaction(SIGALRM, &sa, &old);
	alarm(1);
	errno = 0;
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	int err = errno;
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	if (fd >= 0)
		close(fd);
	/* The interrupted opener is no reader: a writer still finds none. */
	errno = 0;
	int writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	int writer_err = errno;
	if (writer >= 0)
		close(writer);
	unlink(fifo);
	CHECK(fd == -1 && err == EINTR, "open: %d errno %d, want EINTR", fd, err);
	CHECK(writer == -1 && writer_err == ENXIO, "then a writer: %d errno %d, want ENXIO",
	      writer, writer_err);
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(a_reader_waits_for_a_writer),
		TEST(a_writer_waits_for_a_reader),
		TEST(nonblocking_opens),
		TEST(read_write_never_waits_and_data_goes_at_last_close),
		TEST(a_signal_ends_the_wait),
	};
	return run_tests("fifo", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
