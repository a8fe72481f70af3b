/*
 * Scheduling policies and real-time priorities as a thread sets and reads
 * them: sched_setscheduler, sched_setparam, sched_getscheduler,
 * sched_getparam, sched_get_priority_max/min, with their errnos;
 * SCHED_RESET_ON_FORK; and glibc's threads created with an explicit
 * SCHED_FIFO policy. Run as root, which may set any. A static glibc
 * program: make test runs it on faultline, make test-linux on Debian's
 * Linux 6.12, and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* The raw calls: glibc's wrappers add nothing, but say so. */
static long setscheduler(pid_t pid, int policy, const struct sched_param *p)
{
	return syscall(SYS_sched_setscheduler, pid, policy, p);
}

static long getscheduler(pid_t pid)
{
	return syscall(SYS_sched_getscheduler, pid);
}

static int priority_ranges_are_linuxs(void)
{
	struct {
		int policy, max, min;
	} want[] = {
		{ SCHED_OTHER, 0, 0 }, { SCHED_FIFO, 99, 1 }, { SCHED_RR, 99, 1 },
		{ SCHED_BATCH, 0, 0 }, { SCHED_IDLE, 0, 0 },  { 6 /* DEADLINE */, 0, 0 },
		{ 7 /* EXT */, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int max = sched_get_priority_max(want[i].policy);
		int min = sched_get_priority_min(want[i].policy);
		CHECK(max == want[i].max && min == want[i].min, "policy %d: max %d, min %d",
		      want[i].policy, max, min);
	}
	int bad = sched_get_priority_max(4);
	int bad_err = errno;
	int neg = sched_get_priority_min(-1);
	int neg_err = errno;
	CHECK(bad == -1 && bad_err == EINVAL, "policy 4: %d, errno %d", bad, bad_err);
	CHECK(neg == -1 && neg_err == EINVAL, "policy -1: %d, errno %d", neg, neg_err);
	return 0;
}

static int a_thread_keeps_the_policy_it_is_given(void)
{
	struct sched_param p = { .sched_priority = 10 }, got = { .sched_priority = -1 };
	long before = getscheduler(0);
	long set = setscheduler(0, SCHED_FIFO, &p);
	long policy = getscheduler(0);
	sched_getparam(0, &got);
	int fifo_prio = got.sched_priority;
	p.sched_priority = 20;
	long setparam = sched_setparam(0, &p);
	sched_getparam(getpid(), &got);
	int param_prio = got.sched_priority;
	p.sched_priority = 3;
	long rr = setscheduler(0, SCHED_RR, &p);
	long rr_policy = getscheduler(0);
	p.sched_priority = 0;
	long back = setscheduler(0, SCHED_OTHER, &p);
	sched_getparam(0, &got);
	long after = getscheduler(0);
	CHECK(before == SCHED_OTHER, "a new program's policy: %ld", before);
	CHECK(set == 0 && policy == SCHED_FIFO && fifo_prio == 10,
	      "SCHED_FIFO 10: %ld, then policy %ld priority %d", set, policy, fifo_prio);
	CHECK(setparam == 0 && param_prio == 20, "sched_setparam 20: %ld, then priority %d",
	      setparam, param_prio);
	CHECK(rr == 0 && rr_policy == SCHED_RR, "SCHED_RR 3: %ld, then policy %ld", rr, rr_policy);
	CHECK(back == 0 && after == SCHED_OTHER && got.sched_priority == 0,
	      "back to SCHED_OTHER: %ld, policy %ld, priority %d", back, after,
	      got.sched_priority);
	return 0;
}

static int bad_policies_and_priorities_are_refused(void)
{
	struct {
		const char *what;
		pid_t pid;
		int policy, prio;
		int null;
		int want;
	} cases[] = {
		{ "SCHED_FIFO 0", 0, SCHED_FIFO, 0, 0, EINVAL },
		{ "SCHED_FIFO 100", 0, SCHED_FIFO, 100, 0, EINVAL },
		{ "SCHED_RR -1", 0, SCHED_RR, -1, 0, EINVAL },
		{ "SCHED_OTHER 5", 0, SCHED_OTHER, 5, 0, EINVAL },
		{ "SCHED_BATCH 1", 0, SCHED_BATCH, 1, 0, EINVAL },
		{ "SCHED_DEADLINE", 0, 6, 0, 0, EINVAL },
		{ "policy 4", 0, 4, 0, 0, EINVAL },
		{ "policy -1", 0, -1, 0, 0, EINVAL },
		{ "pid -1", -1, SCHED_OTHER, 0, 0, EINVAL },
		{ "a NULL param", 0, SCHED_OTHER, 0, 1, EINVAL },
		{ "no such pid", 0x3ffffff0, SCHED_OTHER, 0, 0, ESRCH },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sched_param p = { .sched_priority = cases[i].prio };
		long rc = setscheduler(cases[i].pid, cases[i].policy, cases[i].null ? NULL : &p);
		int err = errno;
		CHECK(rc == -1 && err == cases[i].want, "%s: %ld, errno %d (want %d)", cases[i].what,
		      rc, err, cases[i].want);
	}
	struct sched_param p = { .sched_priority = 1 };
	long param = sched_setparam(0, &p); /* SCHED_OTHER takes only 0 */
	int param_err = errno;
	long unmapped = syscall(SYS_sched_setparam, 0, (void *)8);
	int unmapped_err = errno;
	long get_none = syscall(SYS_sched_getparam, 0, NULL);
	int get_none_err = errno;
	long get_neg = getscheduler(-5);
	int get_neg_err = errno;
	long get_nobody = getscheduler(0x3ffffff0);
	int get_nobody_err = errno;
	CHECK(param == -1 && param_err == EINVAL, "sched_setparam 1 under SCHED_OTHER: %ld, errno %d",
	      param, param_err);
	CHECK(unmapped == -1 && unmapped_err == EFAULT, "an unmapped param: %ld, errno %d",
	      unmapped, unmapped_err);
	CHECK(get_none == -1 && get_none_err == EINVAL, "sched_getparam NULL: %ld, errno %d",
	      get_none, get_none_err);
	CHECK(get_neg == -1 && get_neg_err == EINVAL, "sched_getscheduler(-5): %ld, errno %d",
	      get_neg, get_neg_err);
	CHECK(get_nobody == -1 && get_nobody_err == ESRCH, "no such pid: %ld, errno %d", get_nobody,
	      get_nobody_err);
	return 0;
}

static int reset_on_fork_gives_children_sched_other(void)
{
	struct sched_param p = { .sched_priority = 5 };
	long set = setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p);
	long mine = getscheduler(0);
	pid_t child = fork();
	if (child == 0) {
		struct sched_param c;
		sched_getparam(0, &c);
		_exit(getscheduler(0) == SCHED_OTHER && c.sched_priority == 0 ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	/* Without the flag, a child inherits both. */
	setscheduler(0, SCHED_FIFO, &p);
	child = fork();
	if (child == 0) {
		struct sched_param c;
		sched_getparam(0, &c);
		_exit(getscheduler(0) == SCHED_FIFO && c.sched_priority == 5 ? 0 : 1);
	}
	int inherited = -1;
	waitpid(child, &inherited, 0);
	p.sched_priority = 0;
	setscheduler(0, SCHED_OTHER, &p);
	CHECK(set == 0 && mine == (SCHED_FIFO | SCHED_RESET_ON_FORK),
	      "SCHED_FIFO | SCHED_RESET_ON_FORK: %ld, then %#lx", set, mine);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child did not start as SCHED_OTHER 0 (status %#x)", status);
	CHECK(WIFEXITED(inherited) && WEXITSTATUS(inherited) == 0,
	      "the child did not inherit SCHED_FIFO 5 (status %#x)", inherited);
	return 0;
}

static void *report_policy(void *arg)
{
	int *out = arg;
	struct sched_param p;
	pthread_getschedparam(pthread_self(), &out[0], &p);
	out[1] = p.sched_priority;
	out[2] = getscheduler(0);
	return NULL;
}

static int threads_start_with_an_explicit_fifo_policy(void)
{
	pthread_attr_t attr;
	struct sched_param p = { .sched_priority = 7 };
	pthread_attr_init(&attr);
	int inherit = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	int policy = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	int param = pthread_attr_setschedparam(&attr, &p);
	int seen[3] = { -1, -1, -1 };
	pthread_t t;
	int created = pthread_create(&t, &attr, report_policy, seen);
	if (created == 0)
		pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	CHECK(inherit == 0 && policy == 0 && param == 0, "attributes: %d %d %d (%s)", inherit,
	      policy, param, strerror(param));
	CHECK(created == 0, "pthread_create: %s", strerror(created));
	CHECK(seen[0] == SCHED_FIFO && seen[1] == 7 && seen[2] == SCHED_FIFO,
	      "the thread runs as policy %d priority %d (kernel says %d)", seen[0], seen[1],
	      seen[2]);
	long main_policy = getscheduler(0);
	CHECK(main_policy == SCHED_OTHER, "the creator stays SCHED_OTHER: %ld", main_policy);
	return 0;
}

static const struct test tests[] = {
	TEST(priority_ranges_are_linuxs),
	TEST(a_thread_keeps_the_policy_it_is_given),
	TEST(bad_policies_and_priorities_are_refused),
	TEST(reset_on_fork_gives_children_sched_other),
	TEST(threads_start_with_an_explicit_fifo_policy),
};

int main(void)
{
	return run_tests("sched-policy", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
