/*
 * Seed 000's measurement ("mm: map maximum pages possible in finish_fault"),
 * step for step as the patch's own program takes it, written for faultline
 * and built with aarch64-linux-gnu-gcc -static against glibc, so the same
 * binary runs on faultline (make bench) and on Linux 6.12 (make bench-linux):
 *
 *   - with --set-knobs, the program itself writes `always` to
 *     shmem_enabled and to hugepages-2048kB/shmem_enabled through sysfs,
 *     as the seed does (without it, it measures the system as set);
 *   - memfd_create, ftruncate to 2M, mmap the 2M MAP_SHARED;
 *   - one store, c[0] = 0, populates the 2M folio;
 *   - a SIZE-byte MAP_SHARED view at offset 0 (64K, or 32K to keep the
 *     contiguous bit out of it);
 *   - per iteration: clock_gettime, 8 stores 4K apart, clock_gettime, then
 *     MADV_DONTNEED of the view.
 *
 * It prints one line for scripts/bench-lib.sh's table:
 *
 *   result seed000 size=65536 ns_per_iter=N faults_per_iter=N.NN
 *       ptes_per_fault=N rss_kb=N shmem_pmd_kb=N realigned=0|1 [switches]
 *       shmem_enabled=KNOB shmem_2m=KNOB
 *
 * ns_per_iter is the seed's "total time taken by inner loop" divided by the
 * iterations; faults come from getrusage, read outside the timed part;
 * ptes_per_fault is the view's smaps Rss after one store; rss_kb and
 * shmem_pmd_kb are the 2M mapping's smaps Rss and ShmemPmdMapped after the
 * populating store; realigned says the program had to move the view to
 * an aligned address; the switches and knobs are the settings it ran
 * with. Knobs it set are put back as they were at the end. The loop is
 * window 1 for the TLB model (tlb-mark.h; make bench TLB=1).
 *
 *   seed000 [--set-knobs] [size=65536] [iters=1000]    (--help says this)
 */
#define _GNU_SOURCE
#include <assert.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "proc.h"
#include "tlb-mark.h"

#define PMDSIZE (1UL << 21)
#define PAGESIZE (1UL << 12)

static const char *const knobs[] = {
	THP "shmem_enabled",
	THP "hugepages-2048kB/shmem_enabled",
};
/* faultline's fault-path switches, named as the Rust benchmarks name them;
 * absent on Linux. */
static const char *const switches[][2] = {
	{ "multi_page", "/sys/kernel/mm/finish_fault/multi_page" },
	{ "contpte", "/sys/kernel/mm/contpte/enabled" },
	{ "fault_around_bytes", "/sys/kernel/debug/fault_around_bytes" },
	{ "vma_lock", "/sys/kernel/mm/vma_lock/enabled" },
	{ "hw_af", "/sys/kernel/mm/hw_af/enabled" },
	{ "hw_dirty", "/sys/kernel/mm/hw_dirty/enabled" },
	{ "tlbi_range", "/sys/kernel/mm/tlbi_range/enabled" },
};

static void die(const char *msg)
{
	fprintf(stderr, "seed000: %s: %s (errno=%d)\n", msg, strerror(errno), errno);
	exit(1);
}

static long minflt(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		die("getrusage");
	return ru.ru_minflt;
}

static long arg(int argc, char **argv, const char *key, long dflt)
{
	size_t klen = strlen(key);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], key, klen) == 0 && argv[i][klen] == '=')
			return strtol(argv[i] + klen + 1, NULL, 0);
	return dflt;
}

int main(int argc, char **argv)
{
	static const char usage[] =
		"usage: seed000 [--set-knobs] [size=BYTES (>= 32768)] [iters=N]\n"
		"Seed 000's own steps: a 2M memfd mapped shared and populated by one store,\n"
		"a size-byte shared view of it (default 65536), then per iteration 8 stores\n"
		"4K apart between two clock reads, and MADV_DONTNEED (default 1000 times).\n"
		"--set-knobs: shmem_enabled and hugepages-2048kB/shmem_enabled to always\n"
		"while it runs, as the seed does; without it the system's settings stay.\n"
		"The result line ends with the switches and knobs it ran with.\n";
	int set_knobs = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		set_knobs |= strcmp(argv[i], "--set-knobs") == 0;
	}
	unsigned long size = arg(argc, argv, "size", 1 << 16);
	long iters = arg(argc, argv, "iters", 1000);
	if (size < 8 * PAGESIZE || iters < 1) {
		fputs(usage, stderr);
		return 2;
	}

	char saved[2][32];
	for (int k = 0; k < 2 && set_knobs; k++)
		if (knob_value(knobs[k], saved[k], sizeof(saved[k])) != 0 ||
		    write_file(knobs[k], "always") != 0)
			die(knobs[k]);
	char ran_with[2][32] = { "none", "none" };
	for (int k = 0; k < 2; k++)
		knob_value(knobs[k], ran_with[k], sizeof(ran_with[k]));

	int fd = memfd_create("willitscale-shmem", MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create");
	if (ftruncate(fd, PMDSIZE) != 0)
		die("ftruncate");
	char *c = mmap(NULL, PMDSIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		die("mmap PMDSIZE");
	/* The seed's check, for the PMD folio its knobs ask for. */
	if (set_knobs)
		assert(!((unsigned long)c & (PMDSIZE - 1)));

	/* allocate PMD shmem folio */
	c[0] = 0;
	long rss_kb = smaps_kb(c, "Rss");
	long pmd_kb = smaps_kb(c, "ShmemPmdMapped");

	char *ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ptr == MAP_FAILED)
		die("mmap view");
	/* The seed asserts the view is aligned to its size. Linux 6.12 places a
	 * mapping under 2M anywhere, so there (realigned=1) the view moves to
	 * an aligned address inside a PROT_NONE reservation; faultline aligns
	 * it itself (thp_mapping_align, realigned=0). */
	int realigned = ((unsigned long)ptr & (size - 1)) != 0;
	if (realigned) {
		munmap(ptr, size);
		char *r = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r == MAP_FAILED)
			die("mmap reservation");
		char *at = (char *)(((unsigned long)r + size - 1) & ~(size - 1));
		ptr = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (ptr == MAP_FAILED)
			die("mmap view at an aligned address");
	}
	assert(!((unsigned long)ptr & (size - 1)));

	/* The first clock read faults in the vDSO's data page ([vvar]): take
	 * it here, so the loop counts only the view's faults. */
	struct timespec warm;
	clock_gettime(CLOCK_MONOTONIC, &warm);
	long total_time_ns = 0, faults = 0;
	tlb_mark(TLB_BEGIN, 0);
	for (long i = 0; i < iters; i++) {
		struct timespec start, end;
		long f0 = minflt();
		if (clock_gettime(CLOCK_MONOTONIC, &start) != 0)
			die("clock_gettime start");
		for (int j = 0; j < 8; ++j)
			((volatile char *)ptr)[j * PAGESIZE] = 3;
		if (clock_gettime(CLOCK_MONOTONIC, &end) != 0)
			die("clock_gettime end");
		faults += minflt() - f0;
		total_time_ns += (end.tv_sec - start.tv_sec) * 1000000000L +
				 (end.tv_nsec - start.tv_nsec);
		if (madvise(ptr, size, MADV_DONTNEED) != 0)
			die("madvise");
	}
	tlb_mark(TLB_REPORT, 1);

	/* What one fault maps: the view's Rss after one store. */
	((volatile char *)ptr)[0] = 3;
	long ptes = smaps_kb(ptr, "Rss") / 4;

	long per_iter_x100 = faults * 100 / iters;
	printf("result seed000 size=%lu ns_per_iter=%ld faults_per_iter=%ld.%02ld ptes_per_fault=%ld"
	       " rss_kb=%ld shmem_pmd_kb=%ld realigned=%d",
	       size, total_time_ns / iters, per_iter_x100 / 100, per_iter_x100 % 100, ptes, rss_kb,
	       pmd_kb, realigned);
	for (size_t s = 0; s < sizeof(switches) / sizeof(switches[0]); s++) {
		char buf[32];
		if (read_file(switches[s][1], buf, sizeof(buf)) == 0)
			printf(" %s=%ld", switches[s][0], strtol(buf, NULL, 10));
	}
	printf(" shmem_enabled=%s shmem_2m=%s\n", ran_with[0], ran_with[1]);

	munmap(ptr, size);
	munmap(c, PMDSIZE);
	close(fd);
	for (int k = 0; k < 2 && set_knobs; k++)
		if (write_file(knobs[k], saved[k]) != 0)
			die(knobs[k]);
	return 0;
}
