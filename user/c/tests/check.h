/*
 * The test runner the glibc test programs share: each test returns 0 or,
 * through CHECK, -1 with the reason in `why`; run_tests prints
 * `glibc PROGRAM: NAME ... ok` (or `... FAILED: why`) per test, then
 * `N passed, M failed`, and returns the failure count.
 */
#ifndef FAULTLINE_CHECK_H
#define FAULTLINE_CHECK_H

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static char why[512];

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			snprintf(why, sizeof(why), __VA_ARGS__); \
			return -1;                               \
		}                                                \
	} while (0)

struct test {
	const char *name;
	int (*run)(void);
};
#define TEST(name) { #name, name }

static inline int run_tests(const char *program, const struct test *tests, size_t n)
{
	int passed = 0, failed = 0;
	for (size_t t = 0; t < n; t++) {
		why[0] = 0;
		if (tests[t].run() == 0) {
			passed++;
			printf("glibc %s: %s ... ok\n", program, tests[t].name);
		} else {
			failed++;
			printf("glibc %s: %s ... FAILED: %s\n", program, tests[t].name, why);
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}

/* Runs `body(arg)` in a child whose every user id is `uid` (nobody is
 * 65534), and gives its result: 0, or the number `body` returned for the
 * step that failed; 100 if the ids could not be set, -1 if the child did
 * not exit. */
static inline int as_user(uid_t uid, int (*body)(const void *), const void *arg)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(setresuid(uid, uid, uid) != 0 ? 100 : body(arg));
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#endif
