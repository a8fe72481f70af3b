/*
 * Process groups, sessions and job control through glibc: setpgid,
 * getpgid, getsid, setsid, kill to groups, stopping and continuing
 * children (SIGSTOP, SIGTSTP, SIGCONT, SIGKILL), what waitpid and waitid
 * report about them, SIGCHLD's si_code, SA_NOCLDSTOP, prctl and
 * priorities.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A child that waits to be signalled: it only sleeps. */
static pid_t spawn_sleeper(int own_group)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (own_group)
			setpgid(0, 0);
		for (;;)
			sleep_ms(1000);
	}
	if (pid > 0 && own_group)
		setpgid(pid, pid); /* both sides, as shells do, to avoid a race */
	return pid;
}

static int reap(pid_t pid)
{
	int status = 0;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

static int pgid_and_sid_inherited(void)
{
	/* Under Linux's kernel-started init both may be 0. */
	pid_t pgrp = getpgrp(), sid = getsid(0);
	CHECK(pgrp >= 0 && sid >= 0, "getpgrp %d getsid %d", pgrp, sid);
	CHECK(getpgid(0) == pgrp, "getpgid(0) %d", getpgid(0));
	CHECK(getpgid(getpid()) == pgrp, "getpgid(self)");
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		int ok = getpgrp() == pgrp && getsid(0) == sid;
		_exit(ok ? 0 : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	close(p[0]);
	close(p[1]);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child saw another group or session");
	return 0;
}

static int setpgid_makes_and_joins_groups(void)
{
	pid_t a = spawn_sleeper(1);
	CHECK(a > 0, "fork");
	CHECK(getpgid(a) == a, "child's group %d, wanted %d", getpgid(a), a);
	CHECK(getsid(a) == getsid(0), "child left the session");
	pid_t b = spawn_sleeper(0);
	CHECK(setpgid(b, a) == 0, "joining child's group: %s", strerror(errno));
	CHECK(getpgid(b) == a, "b's group %d", getpgid(b));
	/* And into a group of its own. */
	CHECK(setpgid(b, 0) == 0, "own group: %s", strerror(errno));
	CHECK(getpgid(b) == b, "b's group %d after setpgid(b, 0)", getpgid(b));
	reap(a);
	reap(b);
	return 0;
}

static int setpgid_errors(void)
{
	errno = 0;
	CHECK(setpgid(0, -1) == -1 && errno == EINVAL, "negative pgid: %s", strerror(errno));
	errno = 0;
	CHECK(setpgid(999999, 0) == -1 && errno == ESRCH, "unknown pid: %s", strerror(errno));
	errno = 0;
	/* init is not our child. */
	CHECK(setpgid(1, 0) == -1 && errno == ESRCH, "init: %s", strerror(errno));
	errno = 0;
	CHECK(getpgid(999999) == -1 && errno == ESRCH, "getpgid unknown");
	errno = 0;
	CHECK(getsid(999999) == -1 && errno == ESRCH, "getsid unknown");
	/* A group that does not exist in our session. */
	pid_t a = spawn_sleeper(0);
	errno = 0;
	CHECK(setpgid(a, 999998) == -1 && errno == EPERM, "nonexistent group: %s", strerror(errno));
	reap(a);
	return 0;
}

static int setpgid_after_exec_is_eacces(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		fcntl(p[1], F_SETFD, FD_CLOEXEC);
		/* A program that stays: ourselves with an argument. */
		char self[256];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		char *args[] = { self, "--sleep", NULL };
		execv(self, args);
		_exit(127);
	}
	close(p[1]);
	char c;
	/* EOF once the exec closed the write end. */
	CHECK(read(p[0], &c, 1) == 0, "exec did not happen");
	close(p[0]);
	errno = 0;
	int r = setpgid(pid, pid);
	int e = errno;
	reap(pid);
	CHECK(r == -1 && e == EACCES, "setpgid after exec: %d %s", r, strerror(e));
	return 0;
}

static int setsid_new_session(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		int res[4];
		res[0] = setsid();
		res[1] = getsid(0);
		res[2] = getpgrp();
		/* A session leader may not leave its group, nor start another. */
		errno = 0;
		res[3] = (setpgid(0, 0) == -1 && errno == EPERM) && (setsid() == -1 && errno == EPERM);
		write(p[1], res, sizeof(res));
		_exit(0);
	}
	int res[4];
	close(p[1]);
	CHECK(read(p[0], res, sizeof(res)) == sizeof(res), "read");
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(res[0] == pid && res[1] == pid && res[2] == pid, "setsid %d sid %d pgrp %d, pid %d",
	      res[0], res[1], res[2], pid);
	CHECK(res[3] == 1, "session leader could change group or session");
	return 0;
}

static int setsid_fails_for_group_leader(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		errno = 0;
		int r = setsid();
		int ok = r == -1 && errno == EPERM;
		write(p[1], &ok, sizeof(ok));
		_exit(0);
	}
	int ok = 0;
	close(p[1]);
	read(p[0], &ok, sizeof(ok));
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(ok, "setsid in a group leader did not fail with EPERM");
	return 0;
}

static int setpgid_across_sessions_eperm(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		char c = 1;
		write(p[1], &c, 1);
		for (;;)
			sleep_ms(1000);
	}
	char c;
	close(p[1]);
	read(p[0], &c, 1);
	close(p[0]);
	errno = 0;
	int r = setpgid(pid, getpgrp());
	int e = errno;
	reap(pid);
	CHECK(r == -1 && e == EPERM, "setpgid into another session: %d %s", r, strerror(e));
	return 0;
}

static int kill_group_reaches_every_member(void)
{
	pid_t a = spawn_sleeper(1);
	pid_t b = spawn_sleeper(0);
	CHECK(setpgid(b, a) == 0, "setpgid");
	CHECK(kill(-a, 0) == 0, "kill(-pgid, 0): %s", strerror(errno));
	CHECK(killpg(a, SIGTERM) == 0, "killpg: %s", strerror(errno));
	int sa, sb;
	CHECK(waitpid(a, &sa, 0) == a && waitpid(b, &sb, 0) == b, "waitpid");
	CHECK(WIFSIGNALED(sa) && WTERMSIG(sa) == SIGTERM, "a: %#x", sa);
	CHECK(WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM, "b: %#x", sb);
	errno = 0;
	CHECK(kill(-a, 0) == -1 && errno == ESRCH, "empty group still there");
	return 0;
}

static int kill_zero_signals_own_group(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		pid_t member = fork();
		if (member == 0) {
			for (;;)
				sleep_ms(1000);
		}
		signal(SIGUSR1, SIG_IGN);
		/* The whole group, us included (ignored here). */
		kill(0, SIGUSR1);
		int status = 0;
		waitpid(member, &status, 0);
		int ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1;
		write(p[1], &ok, sizeof(ok));
		_exit(0);
	}
	int ok = 0;
	close(p[1]);
	read(p[0], &ok, sizeof(ok));
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(ok, "kill(0) did not reach the other group member");
	return 0;
}

static int kill_errors(void)
{
	errno = 0;
	CHECK(kill(999999, 0) == -1 && errno == ESRCH, "unknown pid");
	errno = 0;
	CHECK(kill(-999999, SIGTERM) == -1 && errno == ESRCH, "unknown group");
	errno = 0;
	CHECK(kill(getpid(), 65) == -1 && errno == EINVAL, "bad signal");
	CHECK(kill(getpid(), 0) == 0, "kill(self, 0)");
	return 0;
}

static int sigstop_then_sigcont(void)
{
	pid_t pid = spawn_sleeper(0);
	int status;
	CHECK(kill(pid, SIGSTOP) == 0, "kill");
	CHECK(waitpid(pid, &status, WUNTRACED) == pid, "waitpid WUNTRACED: %s", strerror(errno));
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP, "status %#x", status);
	/* Reported once per stop. */
	CHECK(waitpid(pid, &status, WUNTRACED | WNOHANG) == 0, "stop reported twice");
	CHECK(kill(pid, SIGCONT) == 0, "SIGCONT");
	CHECK(waitpid(pid, &status, WCONTINUED) == pid, "waitpid WCONTINUED: %s", strerror(errno));
	CHECK(WIFCONTINUED(status), "status %#x", status);
	CHECK(waitpid(pid, &status, WCONTINUED | WNOHANG) == 0, "continue reported twice");
	status = reap(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "end %#x", status);
	return 0;
}

static int stopped_child_does_not_run(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		unsigned char n = 0;
		for (;;) {
			write(p[1], &n, 1);
			n++;
			sleep_ms(5);
		}
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	unsigned char buf[256];
	sleep_ms(50);
	CHECK(kill(pid, SIGSTOP) == 0, "kill");
	int status;
	CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status), "not stopped");
	sleep_ms(30);
	while (read(p[0], buf, sizeof(buf)) > 0)
		;
	sleep_ms(100);
	ssize_t n = read(p[0], buf, sizeof(buf));
	CHECK(n == -1 && errno == EAGAIN, "a stopped child wrote %zd bytes", n);
	kill(pid, SIGCONT);
	sleep_ms(100);
	n = read(p[0], buf, sizeof(buf));
	close(p[0]);
	reap(pid);
	CHECK(n > 0, "the continued child did not run again");
	return 0;
}

static int sigkill_kills_stopped(void)
{
	pid_t pid = spawn_sleeper(0);
	int status;
	kill(pid, SIGSTOP);
	CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status), "not stopped");
	CHECK(kill(pid, SIGKILL) == 0, "SIGKILL");
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
	return 0;
}

static int sigtstp_stops_in_own_group(void)
{
	/* Its own group, not orphaned (we are its parent, in another group of
	 * the same session): SIGTSTP's default action stops it. */
	pid_t pid = spawn_sleeper(1);
	int status;
	CHECK(kill(pid, SIGTSTP) == 0, "kill");
	CHECK(waitpid(pid, &status, WUNTRACED) == pid, "waitpid");
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTSTP, "status %#x", status);
	kill(pid, SIGCONT);
	CHECK(waitpid(pid, &status, WCONTINUED) == pid && WIFCONTINUED(status), "not continued");
	reap(pid);
	return 0;
}

static volatile sig_atomic_t conts;
static void on_cont(int sig)
{
	(void)sig;
	conts++;
}

static int handled_sigcont_runs_handler(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGCONT, on_cont);
		close(p[0]);
		char c = 1;
		write(p[1], &c, 1);
		while (!conts)
			sleep_ms(5);
		c = 2;
		write(p[1], &c, 1);
		_exit(0);
	}
	close(p[1]);
	char c = 0;
	CHECK(read(p[0], &c, 1) == 1 && c == 1, "child did not start");
	int status;
	kill(pid, SIGSTOP);
	CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status), "not stopped");
	kill(pid, SIGCONT);
	CHECK(read(p[0], &c, 1) == 1 && c == 2, "handler did not run after the continue");
	close(p[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "exit %#x", status);
	return 0;
}

static volatile sig_atomic_t chld_code, chld_status, chld_pid;
static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
}

static int wait_for_chld(int code)
{
	for (int i = 0; i < 200 && chld_code != code; i++)
		sleep_ms(5);
	return chld_code == code;
}

static int sigchld_reports_stop_and_continue(void)
{
	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, &old);
	chld_code = 0;
	pid_t pid = spawn_sleeper(0);
	kill(pid, SIGSTOP);
	int stopped = wait_for_chld(CLD_STOPPED);
	int st = chld_status, who = chld_pid;
	int status;
	waitpid(pid, &status, WUNTRACED);
	chld_code = 0;
	kill(pid, SIGCONT);
	int continued = wait_for_chld(CLD_CONTINUED);
	int cst = chld_status;
	chld_code = 0;
	kill(pid, SIGKILL);
	int killed = wait_for_chld(CLD_KILLED);
	waitpid(pid, &status, 0);
	sigaction(SIGCHLD, &old, NULL);
	CHECK(stopped && st == SIGSTOP && who == pid, "CLD_STOPPED: %d status %d pid %d", stopped,
	      st, who);
	CHECK(continued && cst == SIGCONT, "CLD_CONTINUED: %d status %d", continued, cst);
	CHECK(killed, "CLD_KILLED");
	return 0;
}

static int sa_nocldstop_silences_stops(void)
{
	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, &old);
	chld_code = 0;
	pid_t pid = spawn_sleeper(0);
	kill(pid, SIGSTOP);
	int status;
	waitpid(pid, &status, WUNTRACED);
	sleep_ms(50);
	int code_after_stop = chld_code;
	kill(pid, SIGCONT);
	waitpid(pid, &status, WCONTINUED);
	sleep_ms(50);
	int code_after_cont = chld_code;
	kill(pid, SIGKILL);
	int killed = wait_for_chld(CLD_KILLED);
	waitpid(pid, &status, 0);
	sigaction(SIGCHLD, &old, NULL);
	CHECK(code_after_stop == 0 && code_after_cont == 0, "SIGCHLD despite SA_NOCLDSTOP: %d %d",
	      code_after_stop, code_after_cont);
	CHECK(killed, "no SIGCHLD for the death");
	return 0;
}

static int waitid_exited(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(42);
	siginfo_t si;
	memset(&si, 0xff, sizeof(si));
	CHECK(waitid(P_PID, pid, &si, WEXITED) == 0, "waitid: %s", strerror(errno));
	CHECK(si.si_signo == SIGCHLD && si.si_code == CLD_EXITED, "signo %d code %d", si.si_signo,
	      si.si_code);
	CHECK(si.si_pid == pid && si.si_status == 42, "pid %d status %d", si.si_pid, si.si_status);
	errno = 0;
	CHECK(waitid(P_PID, pid, &si, WEXITED) == -1 && errno == ECHILD, "reaped twice");
	return 0;
}

static int waitid_killed_and_nowait(void)
{
	pid_t pid = spawn_sleeper(0);
	kill(pid, SIGTERM);
	siginfo_t si;
	CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0, "waitid WNOWAIT");
	CHECK(si.si_code == CLD_KILLED && si.si_status == SIGTERM, "code %d status %d", si.si_code,
	      si.si_status);
	/* Still there: WNOWAIT left it. */
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_ALL, 0, &si, WEXITED) == 0 && si.si_pid == pid, "second waitid");
	return 0;
}

static int waitid_stopped_and_continued(void)
{
	pid_t pid = spawn_sleeper(0);
	kill(pid, SIGSTOP);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, pid, &si, WSTOPPED) == 0, "waitid WSTOPPED");
	CHECK(si.si_code == CLD_STOPPED && si.si_status == SIGSTOP && si.si_pid == pid,
	      "code %d status %d", si.si_code, si.si_status);
	kill(pid, SIGCONT);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, pid, &si, WCONTINUED) == 0, "waitid WCONTINUED");
	CHECK(si.si_code == CLD_CONTINUED && si.si_status == SIGCONT, "code %d status %d",
	      si.si_code, si.si_status);
	reap(pid);
	return 0;
}

static int waitid_wnohang_and_errors(void)
{
	pid_t pid = spawn_sleeper(0);
	siginfo_t si;
	memset(&si, 0xff, sizeof(si));
	CHECK(waitid(P_PID, pid, &si, WEXITED | WNOHANG) == 0, "WNOHANG: %s", strerror(errno));
	CHECK(si.si_pid == 0 && si.si_signo == 0, "nothing to report, yet pid %d signo %d",
	      si.si_pid, si.si_signo);
	errno = 0;
	CHECK(waitid(P_PID, pid, &si, WNOHANG) == -1 && errno == EINVAL, "no state flags");
	errno = 0;
	CHECK(waitid(7, pid, &si, WEXITED) == -1 && errno == EINVAL, "bad idtype");
	reap(pid);
	errno = 0;
	CHECK(waitid(P_PID, pid, &si, WEXITED) == -1 && errno == ECHILD, "ECHILD");
	return 0;
}

static int waitid_by_group(void)
{
	pid_t a = spawn_sleeper(1);
	pid_t other = spawn_sleeper(0);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	kill(a, SIGTERM);
	CHECK(waitid(P_PGID, a, &si, WEXITED) == 0 && si.si_pid == a, "P_PGID got %d", si.si_pid);
	reap(other);
	return 0;
}

static int waitpid_negative_pgid(void)
{
	pid_t a = spawn_sleeper(1);
	pid_t b = spawn_sleeper(0);
	/* b, in our group, is not a member of a's. */
	kill(b, SIGTERM);
	sleep_ms(50);
	int status;
	CHECK(waitpid(-a, &status, WNOHANG) == 0, "waitpid(-pgid) took another group's child");
	kill(a, SIGTERM);
	CHECK(waitpid(-a, &status, 0) == a, "waitpid(-pgid)");
	CHECK(waitpid(0, &status, 0) == b, "waitpid(0) for our own group");
	return 0;
}

static int exit_status_in_wait4_rusage(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		/* Burn some CPU to show up in the rusage. */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
		_exit(3);
	}
	int status;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	CHECK(wait4(pid, &status, 0, &ru) == pid, "wait4");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %#x", status);
	long us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
		  ru.ru_stime.tv_usec;
	CHECK(us >= 50000 && us < 5000000, "child's CPU time %ld us", us);
	struct rusage ch;
	getrusage(RUSAGE_CHILDREN, &ch);
	long cus = (ch.ru_utime.tv_sec + ch.ru_stime.tv_sec) * 1000000L + ch.ru_utime.tv_usec +
		   ch.ru_stime.tv_usec;
	CHECK(cus >= us, "RUSAGE_CHILDREN %ld < %ld", cus, us);
	return 0;
}

static int prctl_name(void)
{
	char name[16] = { 0 };
	CHECK(prctl(PR_GET_NAME, name) == 0, "PR_GET_NAME");
	CHECK(strcmp(name, "jobs") == 0, "comm is '%s'", name);
	CHECK(prctl(PR_SET_NAME, "a-rather-long-thread-name") == 0, "PR_SET_NAME");
	memset(name, 0, sizeof(name));
	prctl(PR_GET_NAME, name);
	CHECK(strcmp(name, "a-rather-long-t") == 0, "truncated to 15: '%s'", name);
	prctl(PR_SET_NAME, "jobs");
	errno = 0;
	CHECK(prctl(9999, 0, 0, 0, 0) == -1 && errno == EINVAL, "unknown option");
	return 0;
}

static int prctl_pdeathsig_and_dumpable(void)
{
	int sig = -1;
	CHECK(prctl(PR_GET_PDEATHSIG, &sig) == 0 && sig == 0, "default %d", sig);
	CHECK(prctl(PR_SET_PDEATHSIG, SIGUSR1) == 0, "set");
	CHECK(prctl(PR_GET_PDEATHSIG, &sig) == 0 && sig == SIGUSR1, "got %d", sig);
	errno = 0;
	CHECK(prctl(PR_SET_PDEATHSIG, 99) == -1 && errno == EINVAL, "bad signal");
	prctl(PR_SET_PDEATHSIG, 0);
	CHECK(prctl(PR_GET_DUMPABLE) == 1, "dumpable %d", prctl(PR_GET_DUMPABLE));
	CHECK(prctl(PR_SET_DUMPABLE, 0) == 0 && prctl(PR_GET_DUMPABLE) == 0, "set 0");
	prctl(PR_SET_DUMPABLE, 1);
	errno = 0;
	CHECK(prctl(PR_SET_DUMPABLE, 5) == -1 && errno == EINVAL, "dumpable 5");
	return 0;
}

static int pdeathsig_fires_when_parent_dies(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t mid = fork();
	if (mid == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			char c = 1;
			write(p[1], &c, 1);
			for (;;)
				sleep_ms(1000);
		}
		char c;
		read(p[0], &c, 1);
		/* Tell the test who to watch, then die. */
		write(p[1], &grandchild, sizeof(grandchild));
		_exit(0);
	}
	close(p[1]);
	waitpid(mid, NULL, 0);
	pid_t gc = 0;
	CHECK(read(p[0], &gc, sizeof(gc)) == sizeof(gc), "read");
	close(p[0]);
	int gone = 0;
	for (int i = 0; i < 200 && !gone; i++) {
		if (kill(gc, 0) == -1 && errno == ESRCH)
			gone = 1;
		else
			sleep_ms(10);
	}
	CHECK(gone, "grandchild %d survived its parent", gc);
	return 0;
}

static int priorities(void)
{
	errno = 0;
	CHECK(getpriority(PRIO_PROCESS, 0) == 0 && errno == 0, "default nice %d",
	      getpriority(PRIO_PROCESS, 0));
	pid_t pid = fork();
	if (pid == 0) {
		if (setpriority(PRIO_PROCESS, 0, 7) != 0)
			_exit(1);
		pid_t gc = fork();
		if (gc == 0)
			_exit(getpriority(PRIO_PROCESS, 0) == 7 ? 0 : 2);
		int st;
		waitpid(gc, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 3);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "nice not kept or inherited: %#x", st);
	CHECK(getpriority(PRIO_PROCESS, 0) == 0, "the child's nice leaked");
	errno = 0;
	CHECK(getpriority(PRIO_PROCESS, 999999) == -1 && errno == ESRCH, "unknown pid");
	errno = 0;
	CHECK(getpriority(77, 0) == -1 && errno == EINVAL, "bad which");
	return 0;
}

static int sched_queries(void)
{
	CHECK(sched_getscheduler(0) == SCHED_OTHER, "policy %d", sched_getscheduler(0));
	struct sched_param sp = { .sched_priority = 5 };
	CHECK(sched_getparam(0, &sp) == 0 && sp.sched_priority == 0, "param %d", sp.sched_priority);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "setaffinity: %s", strerror(errno));
	errno = 0;
	CHECK(sched_getscheduler(999999) == -1 && errno == ESRCH, "unknown pid");
	return 0;
}

static const struct test tests[] = {
	TEST(pgid_and_sid_inherited),
	TEST(setpgid_makes_and_joins_groups),
	TEST(setpgid_errors),
	TEST(setpgid_after_exec_is_eacces),
	TEST(setsid_new_session),
	TEST(setsid_fails_for_group_leader),
	TEST(setpgid_across_sessions_eperm),
	TEST(kill_group_reaches_every_member),
	TEST(kill_zero_signals_own_group),
	TEST(kill_errors),
	TEST(sigstop_then_sigcont),
	TEST(stopped_child_does_not_run),
	TEST(sigkill_kills_stopped),
	TEST(sigtstp_stops_in_own_group),
	TEST(handled_sigcont_runs_handler),
	TEST(sigchld_reports_stop_and_continue),
	TEST(sa_nocldstop_silences_stops),
	TEST(waitid_exited),
	TEST(waitid_killed_and_nowait),
	TEST(waitid_stopped_and_continued),
	TEST(waitid_wnohang_and_errors),
	TEST(waitid_by_group),
	TEST(waitpid_negative_pgid),
	TEST(exit_status_in_wait4_rusage),
	TEST(prctl_name),
	TEST(prctl_pdeathsig_and_dumpable),
	TEST(pdeathsig_fires_when_parent_dies),
	TEST(priorities),
	TEST(sched_queries),
};

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--sleep") == 0) {
		for (;;)
			sleep_ms(1000);
	}
	return run_tests("jobs", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
