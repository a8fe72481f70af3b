/*
 * Bad input that once crashed faultline or lost something, each answered
 * as Linux answers it: a huge mincore, brk(-1) and a brk past all memory,
 * a private mapping larger than RAM, execve with two million empty
 * arguments, a clone whose parent-TID pointer is bad (Linux ignores it:
 * the child is made, and reaped), clone(CLONE_VM|CLONE_SIGHAND|
 * CLONE_THREAD|CLONE_VFORK), the
 * kernel reading or writing a PROT_NONE page for the caller, a futex wake
 * after fork's copy-on-write moved the word, and mremap shrinking across
 * two mappings. A static glibc program: make test runs it on faultline,
 * make test-linux on Debian's Linux 6.12, whose answers are the expected
 * ones.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int mincore_of_a_huge_range_is_enomem(void)
{
	unsigned char vec[16];
	char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	errno = 0;
	int r = mincore(p, 1UL << 46, vec);
	CHECK(r == -1 && errno == ENOMEM, "mincore(64 TiB) = %d, errno %d", r, errno);
	CHECK(mincore(p, 4096, vec) == 0, "a page: %s", strerror(errno));
	munmap(p, 4096);
	return 0;
}

static int brk_minus_one_and_huge_brks_change_nothing(void)
{
	void *before = (void *)syscall(SYS_brk, 0);
	void *r1 = (void *)syscall(SYS_brk, -1L);
	void *r2 = (void *)syscall(SYS_brk, (char *)before + (100UL << 40));
	void *after = (void *)syscall(SYS_brk, 0);
	CHECK(r1 == before && r2 == before && after == before,
	      "brk %p: brk(-1) %p, brk(+100 TiB) %p, then %p", before, r1, r2, after);
	/* The program is still there to say so, and its heap grows. */
	void *grown = (void *)syscall(SYS_brk, (char *)before + 65536);
	CHECK(grown == (char *)before + 65536, "brk(+64K) = %p", grown);
	memset(before, 1, 65536);
	syscall(SYS_brk, before);
	return 0;
}

static int private_mapping_larger_than_ram_is_enomem(void)
{
	struct sysinfo si;
	CHECK(sysinfo(&si) == 0, "sysinfo");
	size_t ram = si.totalram * si.mem_unit;
	size_t huge = ram * 4;
	errno = 0;
	void *p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p == MAP_FAILED && errno == ENOMEM, "4x RAM private: %p, errno %d", p, errno);
	/* MAP_NORESERVE asks for no promise: the mapping is made. */
	p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED, "4x RAM with MAP_NORESERVE: %s", strerror(errno));
	munmap(p, huge);
	/* Read-only costs nothing either. */
	p = mmap(NULL, huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "4x RAM read-only: %s", strerror(errno));
	munmap(p, huge);
	return 0;
}

static int execve_with_two_million_empty_arguments_is_e2big(void)
{
	size_t n = 2 << 20;
	char **argv = calloc(n + 1, sizeof(char *));
	CHECK(argv, "calloc");
	for (size_t i = 0; i < n; i++)
		argv[i] = "";
	char *envp[] = { NULL };
	errno = 0;
	execve("/proc/self/exe", argv, envp);
	int e = errno;
	free(argv);
	CHECK(e == E2BIG, "execve returned, errno %d (want E2BIG)", e);
	return 0;
}

static int clone_with_a_bad_parent_tid_makes_a_child_that_is_reaped(void)
{
	errno = 0;
	long r = syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, 0, (void *)8, 0, 0);
	if (r == 0)
		_exit(7);
	CHECK(r > 0, "clone = %ld, errno %d", r, errno);
	int status = 0;
	pid_t w = waitpid(r, &status, 0);
	CHECK(w == r && WIFEXITED(status) && WEXITSTATUS(status) == 7, "waitpid = %d, status %#x", w,
	      status);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "another child is left");
	return 0;
}

static char thread_stack[64 << 10] __attribute__((aligned(16)));
static volatile int thread_ran;

static int vfork_thread(void *arg)
{
	(void)arg;
	thread_ran = 1;
	syscall(SYS_exit, 0); /* this thread only */
	return 0;
}

static int clone_vfork_thread_returns_when_the_thread_exits(void)
{
	int flags = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_VFORK;
	int tid = clone(vfork_thread, thread_stack + sizeof(thread_stack), flags, NULL);
	CHECK(tid > 0, "clone: %s", strerror(errno));
	CHECK(thread_ran, "returned before the thread ran (vfork waits for it)");
	return 0;
}

static int kernel_does_not_touch_prot_none_memory(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	strcpy(p, "secret");
	CHECK(mprotect(p, 4096, PROT_NONE) == 0, "mprotect");
	int fds[2];
	CHECK(pipe(fds) == 0, "pipe");
	errno = 0;
	ssize_t w = write(fds[1], p, 7);
	int we = errno;
	char buf[8] = "xxxxxxx";
	CHECK(write(fds[1], buf, 7) == 7, "write a real buffer");
	errno = 0;
	ssize_t r = read(fds[0], p, 7);
	int re = errno;
	close(fds[0]);
	close(fds[1]);
	CHECK(w == -1 && we == EFAULT, "write from PROT_NONE = %zd, errno %d", w, we);
	CHECK(r == -1 && re == EFAULT, "read into PROT_NONE = %zd, errno %d", r, re);
	CHECK(mprotect(p, 4096, PROT_READ) == 0 && !strcmp(p, "secret"), "the page changed");
	munmap(p, 4096);
	return 0;
}

static int futex_word;
static volatile int waiting;

static void *futex_waiter(void *arg)
{
	(void)arg;
	struct timespec ts = { 5, 0 };
	waiting = 1;
	long r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	return (void *)(r == 0 ? 0L : (long)errno);
}

static int futex_wake_after_fork_moved_the_word(void)
{
	/* A fork makes the word's page copy-on-write in this process too; the
	 * store below then gives it a new frame while the thread waits. */
	futex_word = 0;
	waiting = 0;
	pthread_t t;
	CHECK(pthread_create(&t, NULL, futex_waiter, NULL) == 0, "pthread_create");
	while (!waiting)
		;
	usleep(100000); /* into the wait */
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	long woke = syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	void *res;
	pthread_join(t, &res);
	CHECK(woke == 1 && res == 0, "wake woke %ld; the wait ended with errno %ld", woke, (long)res);
	return 0;
}

static int mremap_shrinks_across_two_mappings(void)
{
	char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	/* Two mappings: the second half read-only. */
	CHECK(mprotect(p + 2 * 4096, 2 * 4096, PROT_READ) == 0, "mprotect");
	p[0] = 5;
	void *r = mremap(p, 4 * 4096, 4096, 0);
	CHECK(r == p, "mremap shrink = %p (errno %d)", r, errno);
	unsigned char vec[4];
	CHECK(mincore(p, 4096, vec) == 0 && p[0] == 5, "the first page");
	errno = 0;
	CHECK(mincore(p + 4096, 4096, vec) == -1 && errno == ENOMEM, "the rest is still mapped");
	munmap(p, 4096);
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(mincore_of_a_huge_range_is_enomem),
		TEST(brk_minus_one_and_huge_brks_change_nothing),
		TEST(private_mapping_larger_than_ram_is_enomem),
		TEST(execve_with_two_million_empty_arguments_is_e2big),
		TEST(clone_with_a_bad_parent_tid_makes_a_child_that_is_reaped),
		TEST(clone_vfork_thread_returns_when_the_thread_exits),
		TEST(kernel_does_not_touch_prot_none_memory),
		TEST(futex_wake_after_fork_moved_the_word),
		TEST(mremap_shrinks_across_two_mappings),
	};
	return run_tests("robustness", tests, sizeof(tests) / sizeof(tests[0]));
}
