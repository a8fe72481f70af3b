/*
 * What a clock read costs a program: glibc's clock_gettime(CLOCK_MONOTONIC)
 * (through the vDSO when the kernel maps one) against the same read as a
 * system call. Under make bench's -icount one virtual nanosecond is one
 * instruction, so ns_per_call is the instructions of one call, loop
 * included. A static glibc program: make bench-linux runs the same binary
 * on Linux 6.12.
 *
 *   clock_gettime [iters=N]
 * prints `result clock_gettime calls=N vdso=0|1 vdso_ns_per_call=...
 * syscall_ns_per_call=...` and exits 0 if every read succeeded and time
 * never went backwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long ns(struct timespec t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = 100000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			puts("usage: clock_gettime [iters=N]\n"
			     "What a clock read costs: glibc's clock_gettime(CLOCK_MONOTONIC) (the\n"
			     "vDSO where the kernel maps one) against the system call, 200*N reads\n"
			     "each (default 100000). It sets no knobs.");
			return 0;
		}
		if (strncmp(argv[i], "iters=", 6) == 0)
			calls = atol(argv[i] + 6) * 200;
	}
	struct timespec start, end, t, last = {0, 0};
	int ok = 1;
	/* The timed loops do nothing but read; what they read is checked
	 * afterwards, alternating the two ways, so time never goes back. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < calls; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
	clock_gettime(CLOCK_MONOTONIC, &end);
	long long vdso = (ns(end) - ns(start)) / calls;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < calls; i++)
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
	clock_gettime(CLOCK_MONOTONIC, &end);
	long long sys = (ns(end) - ns(start)) / calls;
	for (int i = 0; i < 1000; i++) {
		ok &= clock_gettime(CLOCK_MONOTONIC, &t) == 0 && ns(t) >= ns(last);
		last = t;
		ok &= syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t) == 0 && ns(t) >= ns(last);
		last = t;
	}
	printf("result clock_gettime calls=%ld vdso=%d vdso_ns_per_call=%lld syscall_ns_per_call=%lld\n", calls,
	       getauxval(AT_SYSINFO_EHDR) != 0, vdso, sys);
	return ok ? 0 : 1;
}
