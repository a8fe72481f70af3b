/*
 * Credentials: the set*id calls' rules, what they do to the capability
 * sets, what exec makes of both, and a process that is not dumpable
 * keeping its files from one without CAP_SYS_PTRACE (pidfd_getfd). A
 * static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12, and the values it expects are Linux's. Every
 * change happens in a child, which reports by its exit status.
 *
 * Run with --ids it prints its ids, AT_UID/AT_EUID and its capability
 * sets, one line, and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char self[4096];

/* The effective and permitted sets, 64 bits each. */
static void caps(uint64_t *effective, uint64_t *permitted)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };
	syscall(SYS_capget, &h, d);
	*effective = d[0].effective | (uint64_t)d[1].effective << 32;
	*permitted = d[0].permitted | (uint64_t)d[1].permitted << 32;
}

/* Runs FN in a child; its exit status (0: passed), or -1. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define FAIL_IF(cond, n) \
	do {             \
		if (cond)  \
			return n; \
	} while (0)

static int drop_and_regain_effective(void)
{
	uint64_t e, p, e0, p0;
	caps(&e0, &p0);
	FAIL_IF(seteuid(65534) != 0, 1);
	uid_t r, ef, s;
	getresuid(&r, &ef, &s);
	FAIL_IF(r != 0 || ef != 65534 || s != 0 || geteuid() != 65534 || getuid() != 0, 2);
	caps(&e, &p);
	/* The effective set empties; the permitted one stays. */
	FAIL_IF(e != 0 || p != p0, 3);
	/* Back to the real id, which it holds: allowed, and the caps return. */
	FAIL_IF(seteuid(0) != 0, 4);
	caps(&e, &p);
	FAIL_IF(e != p0, 5);
	return 0;
}

static int the_effective_id_follows_seteuid_and_back(void)
{
	int r = in_child(drop_and_regain_effective);
	CHECK(r == 0, "child failed at step %d", r);
	return 0;
}

static int leave_root_for_good(void)
{
	FAIL_IF(setgid(100) != 0 || getgid() != 100 || getegid() != 100, 1);
	FAIL_IF(setuid(1000) != 0, 2);
	uid_t r, e, s;
	getresuid(&r, &e, &s);
	FAIL_IF(r != 1000 || e != 1000 || s != 1000, 3);
	uint64_t ef, p;
	caps(&ef, &p);
	FAIL_IF(ef != 0 || p != 0, 4);
	errno = 0;
	FAIL_IF(setuid(0) != -1 || errno != EPERM, 5);
	FAIL_IF(seteuid(0) != -1 || errno != EPERM, 6);
	FAIL_IF(setgid(0) != -1 || errno != EPERM, 7);
	/* Its own ids are fine. */
	FAIL_IF(setresuid(-1, 1000, -1) != 0 || setreuid(1000, 1000) != 0, 8);
	FAIL_IF(syscall(SYS_setuid, -1) != -1 || errno != EINVAL, 9);
	/* setfsuid: the old id back; one it may not take is ignored. */
	FAIL_IF(setfsuid(0) != 1000 || setfsuid(-1) != 1000, 10);
	return 0;
}

static int setuid_leaves_root_for_good(void)
{
	int r = in_child(leave_root_for_good);
	CHECK(r == 0, "child failed at step %d", r);
	return 0;
}

static int setreuid_and_setresuid(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setreuid(1000, 2000) != 0)
			_exit(1);
		uid_t r, e, s;
		getresuid(&r, &e, &s);
		/* A new real id saves the new effective one. */
		if (r != 1000 || e != 2000 || s != 2000)
			_exit(2);
		/* Now unprivileged: only ids it holds. */
		if (setresuid(2000, 1000, -1) != 0 || setresuid(3000, -1, -1) != -1 || errno != EPERM)
			_exit(3);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	return 0;
}

/* Exec's output of --ids into OUT. */
static int exec_ids(char *out, size_t len)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (seteuid(65534))
			_exit(1);
		execl(self, self, "--ids", NULL);
		_exit(2);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int exec_keeps_ids_and_recomputes_caps(void)
{
	char out[256];
	CHECK(exec_ids(out, sizeof(out)) == 0, "exec failed");
	/* Real root, effective nobody: the saved id follows the effective
	 * one, everything permitted, nothing effective. */
	CHECK(strcmp(out, "ids 0 65534 65534 at 0 65534 caps 0 1ffffffffff\n") == 0, "exec said %s",
	      out);
	return 0;
}

static int a_process_not_dumpable_keeps_its_files_from_non_root(void)
{
	int ready[2], go[2];
	CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe");
	pid_t target = fork();
	if (target == 0) {
		prctl(PR_SET_DUMPABLE, 0);
		char c;
		write(ready[1], "r", 1);
		read(go[0], &c, 1);
		_exit(0);
	}
	char c;
	read(ready[0], &c, 1);
	int pidfd = syscall(SYS_pidfd_open, target, 0);
	pid_t pid = fork();
	if (pid == 0) {
		int root_ok = syscall(SYS_pidfd_getfd, pidfd, 0, 0) >= 0;
		if (seteuid(65534))
			_exit(1);
		int fd = syscall(SYS_pidfd_getfd, pidfd, 0, 0);
		_exit(!root_ok ? 2 : fd != -1 ? 3 : errno != EPERM ? 4 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	write(go[1], "x", 1);
	waitpid(target, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(pidfd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed at step %d", WEXITSTATUS(st));
	return 0;
}

static const struct test tests[] = {
	TEST(the_effective_id_follows_seteuid_and_back),
	TEST(setuid_leaves_root_for_good),
	TEST(setreuid_and_setresuid),
	TEST(exec_keeps_ids_and_recomputes_caps),
	TEST(a_process_not_dumpable_keeps_its_files_from_non_root),
};

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--ids") == 0) {
		uid_t r, e, s;
		getresuid(&r, &e, &s);
		uint64_t ef, p;
		caps(&ef, &p);
		printf("ids %u %u %u at %lu %lu caps %llx %llx\n", r, e, s, getauxval(AT_UID),
		       getauxval(AT_EUID), (unsigned long long)ef, (unsigned long long)p);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	return run_tests("creds", tests, sizeof(tests) / sizeof(tests[0]));
}
