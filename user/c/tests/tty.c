/*
 * The console as a terminal, through glibc's termios calls and the
 * ioctls a shell uses: settings (tcgetattr/tcsetattr), the window size,
 * a controlling terminal taken by a session leader (TIOCSCTTY), the
 * foreground process group (tcgetpgrp/tcsetpgrp), and the line
 * discipline, fed with TIOCSTI as if typed: line editing in canonical
 * mode, raw mode, ^C as SIGINT for the foreground group, and SIGTTIN or
 * EIO for a background reader. A static glibc program: make test runs it
 * on faultline, make test-linux on Debian's Linux 6.12 (as root, which
 * TIOCSTI needs there), with the console as fd 0.
 *
 * Each case that needs a controlling terminal runs in a child that
 * starts a session and takes the console, so the tests leave the
 * caller's terminal as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "check.h"

static struct termios saved;

/* Types TEXT into the terminal on fd 0. */
static int type_in(const char *text)
{
	for (const char *p = text; *p; p++)
		if (ioctl(0, TIOCSTI, p) != 0)
			return -1;
	return 0;
}

/* Runs BODY in a child that leads a new session with the console as its
 * controlling terminal and echo off; returns BODY's result. */
static int in_session(int (*body)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (setsid() < 0 || ioctl(0, TIOCSCTTY, 1) != 0) {
			printf("setsid/TIOCSCTTY: %s\n", strerror(errno));
			_exit(2);
		}
		struct termios t = saved;
		t.c_lflag &= ~ECHO;
		tcsetattr(0, TCSANOW, &t);
		tcflush(0, TCIFLUSH);
		int r = body();
		if (r != 0)
			printf("    (in the session: %s)\n", why);
		fflush(stdout);
		tcsetattr(0, TCSANOW, &saved);
		_exit(r == 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static int settings_read_back_as_set(void)
{
	struct termios t;
	CHECK(tcgetattr(0, &t) == 0, "tcgetattr: %s", strerror(errno));
	CHECK((t.c_lflag & (ICANON | ECHO | ISIG)) == (ICANON | ECHO | ISIG), "lflag %o", t.c_lflag);
	CHECK(t.c_iflag & ICRNL, "iflag %o has no ICRNL", t.c_iflag);
	CHECK(t.c_oflag & OPOST, "oflag %o has no OPOST", t.c_oflag);
	CHECK(t.c_cc[VINTR] == 3 && t.c_cc[VERASE] == 0177 && t.c_cc[VEOF] == 4 && t.c_cc[VSUSP] == 032,
	      "c_cc %d %d %d %d", t.c_cc[VINTR], t.c_cc[VERASE], t.c_cc[VEOF], t.c_cc[VSUSP]);
	struct termios raw = t;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 3;
	CHECK(tcsetattr(0, TCSADRAIN, &raw) == 0, "tcsetattr: %s", strerror(errno));
	struct termios back;
	tcgetattr(0, &back);
	tcsetattr(0, TCSANOW, &t);
	CHECK(!(back.c_lflag & (ICANON | ECHO | ISIG)) && back.c_cc[VMIN] == 3, "raw read back lflag %o vmin %d",
	      back.c_lflag, back.c_cc[VMIN]);
	CHECK(isatty(0) && !isatty(open("/dev/null", O_RDONLY)), "isatty");
	return 0;
}

static int window_size_reads_back(void)
{
	struct winsize old, set = {.ws_row = 31, .ws_col = 101}, got;
	CHECK(ioctl(0, TIOCGWINSZ, &old) == 0, "TIOCGWINSZ: %s", strerror(errno));
	CHECK(ioctl(0, TIOCSWINSZ, &set) == 0, "TIOCSWINSZ: %s", strerror(errno));
	ioctl(0, TIOCGWINSZ, &got);
	ioctl(0, TIOCSWINSZ, &old);
	CHECK(got.ws_row == 31 && got.ws_col == 101, "read back %dx%d", got.ws_row, got.ws_col);
	CHECK(ioctl(0, TIOCGWINSZ, (void *)8) == -1 && errno == EFAULT, "bad pointer: %s", strerror(errno));
	return 0;
}

static int no_session_no_controlling_terminal(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int pgrp = tcgetpgrp(0);
		_exit(pgrp == -1 && errno == ENOTTY ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tcgetpgrp in a new session did not fail ENOTTY");
	return 0;
}

static int leader_takes_the_terminal_body(void)
{
	CHECK(tcgetpgrp(0) == getpid(), "tcgetpgrp %d, pid %d", tcgetpgrp(0), getpid());
	CHECK(tcgetsid(0) == getpid(), "tcgetsid %d", tcgetsid(0));
	/* A member that leads no session may not take a terminal. */
	pid_t child = fork();
	if (child == 0)
		_exit(ioctl(0, TIOCSCTTY, 0) == -1 && errno == EPERM ? 0 : 1);
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "TIOCSCTTY from a non-leader did not fail EPERM");
	/* The foreground group can move to a group of this session, not
	 * to one of another. */
	child = fork();
	if (child == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(child, child);
	CHECK(tcsetpgrp(0, child) == 0, "tcsetpgrp(child): %s", strerror(errno));
	int fg = tcgetpgrp(0);
	signal(SIGTTOU, SIG_IGN);
	tcsetpgrp(0, getpid());
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(fg == child, "tcgetpgrp %d after tcsetpgrp(%d)", fg, child);
	CHECK(tcsetpgrp(0, 1) == -1 && errno == EPERM, "tcsetpgrp(init's group): %s", strerror(errno));
	return 0;
}

static int a_session_leader_takes_the_terminal(void)
{
	CHECK(in_session(leader_takes_the_terminal_body) == 0, "see above");
	return 0;
}

static int canonical_body(void)
{
	char buf[64] = {0};
	CHECK(type_in("ab\177c one two\027\n") == 0, "TIOCSTI: %s", strerror(errno));
	int avail = -1;
	ioctl(0, FIONREAD, &avail);
	CHECK(avail == 8, "FIONREAD %d, want 8", avail);
	ssize_t n = read(0, buf, sizeof(buf) - 1);
	CHECK(n == 8 && strcmp(buf, "ac one \n") == 0, "read %zd '%s'", n, buf);
	/* One read takes one line; ^D ends a line without a newline, and on
	 * an empty line reads as end of file. */
	type_in("first\nsecond\004\004");
	memset(buf, 0, sizeof(buf));
	n = read(0, buf, sizeof(buf) - 1);
	CHECK(n == 6 && strcmp(buf, "first\n") == 0, "first read %zd '%s'", n, buf);
	memset(buf, 0, sizeof(buf));
	n = read(0, buf, sizeof(buf) - 1);
	CHECK(n == 6 && strcmp(buf, "second") == 0, "second read %zd '%s'", n, buf);
	CHECK(read(0, buf, sizeof(buf)) == 0, "^D on an empty line is not end of file");
	/* ^U kills the line. */
	type_in("gone\025kept\n");
	memset(buf, 0, sizeof(buf));
	n = read(0, buf, sizeof(buf) - 1);
	CHECK(strcmp(buf, "kept\n") == 0, "after ^U '%s'", buf);
	return 0;
}

static int canonical_mode_edits_lines(void)
{
	CHECK(in_session(canonical_body) == 0, "see above");
	return 0;
}

static int raw_body(void)
{
	struct termios t;
	tcgetattr(0, &t);
	t.c_lflag &= ~(ICANON | ISIG);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	CHECK(tcsetattr(0, TCSANOW, &t) == 0, "tcsetattr");
	type_in("x\003\177");
	char buf[8] = {0};
	ssize_t n = read(0, buf, sizeof(buf));
	CHECK(n == 3 && memcmp(buf, "x\003\177", 3) == 0, "raw read %zd bytes %02x %02x %02x", n, buf[0], buf[1],
	      buf[2]);
	/* VMIN 0: a read returns at once, with nothing. */
	t.c_cc[VMIN] = 0;
	tcsetattr(0, TCSANOW, &t);
	CHECK(read(0, buf, sizeof(buf)) == 0, "VMIN 0 read did not return 0");
	/* O_NONBLOCK with nothing typed: EAGAIN. */
	t.c_cc[VMIN] = 1;
	tcsetattr(0, TCSANOW, &t);
	int flags = fcntl(0, F_GETFL);
	fcntl(0, F_SETFL, flags | O_NONBLOCK);
	n = read(0, buf, sizeof(buf));
	int e = errno;
	fcntl(0, F_SETFL, flags);
	CHECK(n == -1 && e == EAGAIN, "nonblocking read: %zd %s", n, strerror(e));
	return 0;
}

static int raw_mode_passes_bytes_at_once(void)
{
	CHECK(in_session(raw_body) == 0, "see above");
	return 0;
}

static volatile sig_atomic_t got_signal;
static void note_signal(int sig)
{
	got_signal = sig;
}

static int interrupt_body(void)
{
	struct sigaction sa = {.sa_handler = note_signal};
	sigaction(SIGINT, &sa, NULL);
	got_signal = 0;
	type_in("half");
	type_in("\003");
	CHECK(got_signal == SIGINT, "no SIGINT from ^C (got %d)", got_signal);
	/* ^C threw away the half-typed line. */
	type_in("whole\n");
	char buf[32] = {0};
	ssize_t n = read(0, buf, sizeof(buf) - 1);
	CHECK(n == 6 && strcmp(buf, "whole\n") == 0, "read %zd '%s'", n, buf);
	/* ^Z is SIGTSTP for the foreground group. */
	sigaction(SIGTSTP, &sa, NULL);
	got_signal = 0;
	type_in("\032");
	CHECK(got_signal == SIGTSTP, "no SIGTSTP from ^Z (got %d)", got_signal);
	return 0;
}

static int control_c_interrupts_the_foreground_group(void)
{
	CHECK(in_session(interrupt_body) == 0, "see above");
	return 0;
}

static int background_body(void)
{
	/* Reads through /dev/console never stop (Linux: job_control),
	 * so the readers use /dev/tty. */
	int tty = open("/dev/tty", O_RDONLY);
	CHECK(tty >= 0, "open /dev/tty: %s", strerror(errno));
	/* A child in its own group, not the foreground one. */
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		char c;
		/* Ignoring SIGTTIN: the read fails with EIO. */
		signal(SIGTTIN, SIG_IGN);
		ssize_t n = read(tty, &c, 1);
		if (!(n == -1 && errno == EIO))
			_exit(1);
		/* Catching it: the group gets SIGTTIN, the read EINTR. */
		struct sigaction sa = {.sa_handler = note_signal};
		sigaction(SIGTTIN, &sa, NULL);
		got_signal = 0;
		n = read(tty, &c, 1);
		_exit(n == -1 && errno == EINTR && got_signal == SIGTTIN ? 0 : 2);
	}
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "background reader: status %#x", status);
	/* With SIGTTIN's default action the reader stops. */
	child = fork();
	if (child == 0) {
		setpgid(0, 0);
		char c;
		read(tty, &c, 1);
		_exit(3);
	}
	setpgid(child, child);
	waitpid(child, &status, WUNTRACED);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(tty);
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTTIN, "default SIGTTIN: status %#x", status);
	return 0;
}

static int a_background_reader_gets_sigttin_or_eio(void)
{
	CHECK(in_session(background_body) == 0, "see above");
	return 0;
}

static const struct test tests[] = {
	TEST(settings_read_back_as_set),
	TEST(window_size_reads_back),
	TEST(no_session_no_controlling_terminal),
	TEST(a_session_leader_takes_the_terminal),
	TEST(canonical_mode_edits_lines),
	TEST(raw_mode_passes_bytes_at_once),
	TEST(control_c_interrupts_the_foreground_group),
	TEST(a_background_reader_gets_sigttin_or_eio),
};

int main(void)
{
	if (tcgetattr(0, &saved) != 0) {
		printf("glibc tty: fd 0 is no terminal: %s\n", strerror(errno));
		return 1;
	}
	int r = run_tests("tty", tests, sizeof(tests) / sizeof(tests[0]));
	tcsetattr(0, TCSANOW, &saved);
	return r;
}
