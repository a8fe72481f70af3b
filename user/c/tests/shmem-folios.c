/*
 * Large shmem folios on writes and on faults, checked the way any Linux
 * program can see them: /proc/meminfo's ShmemHugePages, /proc/self/smaps'
 * Rss and ShmemPmdMapped, st_blocks, the per-size counters in
 * /sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/stats/, and the
 * signals a bad access gets. A static glibc program: make test runs it on
 * faultline, make test-linux on Debian's Linux 6.12, and the values it
 * expects are the ones Linux 6.12 gives. The knobs are set from here
 * through sysfs, as the seeds set them, and put back at the end.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "../proc.h"
#include "check.h"

#define KB 1024L
#define MB (1024 * KB)
#define PAGE (4 * KB)

static const char *const knobs[] = {
	THP "shmem_enabled",
	THP "hugepages-64kB/shmem_enabled",
	THP "hugepages-2048kB/shmem_enabled",
};
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

/* Sets the top-level, 64K and 2M shmem_enabled knobs. */
static int set_knobs(const char *top, const char *k64, const char *k2m)
{
	const char *values[NKNOBS] = { top, k64, k2m };
	for (size_t k = 0; k < NKNOBS; k++)
		CHECK(write_file(knobs[k], values[k]) == 0, "writing %s to %s: %s", values[k],
		      knobs[k], strerror(errno));
	return 0;
}

static long stat_counter(const char *size, const char *name)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), THP "hugepages-%s/stats/%s", size, name);
	return read_file(path, buf, sizeof(buf)) == 0 ? strtol(buf, NULL, 10) : -1;
}

static long blocks(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_blocks : -1;
}

/* A shared mapping of FD, or MAP_SHARED|MAP_ANONYMOUS for fd -1, of LEN
 * bytes at an address aligned to ALIGN (a PROT_NONE reservation first, as
 * programs that need alignment do). */
static char *map_aligned(int fd, size_t len, size_t align)
{
	char *r = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	char *at = (char *)(((uintptr_t)r + align - 1) & ~(align - 1));
	munmap(r, len + align);
	int flags = MAP_SHARED | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0);
	char *p = mmap(at, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* One write() of 4M to a memfd with shmem_enabled=always: two 2M folios. */
static int one_4m_write_makes_two_2m_folios(void)
{
	if (set_knobs("always", "never", "inherit"))
		return -1;
	char *buf = malloc(4 * MB);
	CHECK(buf, "malloc");
	memset(buf, 0x5a, 4 * MB);
	long before = meminfo_kb("ShmemHugePages");
	int fd = memfd_create("write", MFD_CLOEXEC);
	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	ssize_t n = write(fd, buf, 4 * MB);
	long huge = meminfo_kb("ShmemHugePages") - before, b = blocks(fd);
	char back[16] = { 0 };
	ssize_t r = pread(fd, back, sizeof(back), 3 * MB - 8);
	close(fd);
	long left = meminfo_kb("ShmemHugePages") - before;
	free(buf);
	CHECK(n == 4 * MB, "write returned %zd", n);
	CHECK(huge == 4096, "ShmemHugePages grew by %ld kB, want 4096", huge);
	CHECK(b == 8192, "st_blocks %ld, want 8192", b);
	CHECK(r == sizeof(back) && back[0] == 0x5a && back[15] == 0x5a, "read back wrong");
	CHECK(left == 0, "ShmemHugePages %+ld kB after close, want 0", left);
	return 0;
}

/* Seed 000's populating store: one store through a 2M shared mapping of an
 * empty memfd allocates a 2M folio, and a PMD block maps it. */
static int a_store_through_a_2m_mapping_maps_one_pmd(void)
{
	if (set_knobs("always", "never", "always"))
		return -1;
	long before = meminfo_kb("ShmemHugePages");
	int fd = memfd_create("store", MFD_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 2 * MB) == 0, "memfd: %s", strerror(errno));
	char *c = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(c != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(((uintptr_t)c & (2 * MB - 1)) == 0, "2M mapping at %p, not 2M-aligned", c);
	c[0] = 0;
	long rss = smaps_kb(c, "Rss"), pmd = smaps_kb(c, "ShmemPmdMapped");
	long huge = meminfo_kb("ShmemHugePages") - before;
	munmap(c, 2 * MB);
	close(fd);
	CHECK(rss == 2048 && pmd == 2048, "Rss %ld kB, ShmemPmdMapped %ld kB, want 2048 and 2048",
	      rss, pmd);
	CHECK(huge == 2048, "ShmemHugePages grew by %ld kB, want 2048", huge);
	return 0;
}

/* hugepages-64kB/shmem_enabled=always: a fault on shared anonymous memory
 * allocates a 64K folio and maps all of it (with the contiguous bit on
 * faultline, whose smaps says so in ContPTE; Linux shows no such line). */
static int faults_on_shared_anonymous_memory_get_64k_folios(void)
{
	if (set_knobs("never", "always", "never"))
		return -1;
	long allocs = stat_counter("64kB", "shmem_alloc");
	CHECK(allocs >= 0, "no hugepages-64kB/stats/shmem_alloc");
	char *p = map_aligned(-1, 256 * KB, 64 * KB);
	CHECK(p, "mmap: %s", strerror(errno));
	p[5 * PAGE] = 1;
	long rss = smaps_kb(p, "Rss"), cont = smaps_kb(p, "ContPTE");
	long one = stat_counter("64kB", "shmem_alloc") - allocs;
	for (int block = 1; block < 4; block++)
		p[block * 64 * KB + PAGE] = 1;
	long all = smaps_kb(p, "Rss"), four = stat_counter("64kB", "shmem_alloc") - allocs;
	int kept = p[5 * PAGE] == 1 && p[5 * PAGE + 1] == 0;
	munmap(p, 256 * KB);
	CHECK(rss == 64 && one == 1, "after one store: Rss %ld kB, %ld 64K folios; want 64 and 1",
	      rss, one);
	/* faultline has its contpte switch in sysfs, and a ContPTE line. */
	int faultline = access("/sys/kernel/mm/contpte/enabled", F_OK) == 0;
	CHECK(faultline ? cont == 64 : cont == -1, "ContPTE %ld kB, want %s", cont,
	      faultline ? "64" : "no such line, as on Linux");
	CHECK(all == 256 && four == 4, "after four: Rss %ld kB, %ld 64K folios; want 256 and 4",
	      all, four);
	CHECK(kept, "the stored bytes did not read back");
	return 0;
}

/* The 2M range around a fault already caches a page: the new folio must
 * not overlap it, so the fault gets a small one and no PMD. */
static int a_hole_beside_cached_pages_gets_a_small_folio(void)
{
	if (set_knobs("never", "never", "inherit"))
		return -1;
	int fd = memfd_create("beside", MFD_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 2 * MB) == 0, "memfd: %s", strerror(errno));
	CHECK(pwrite(fd, "x", 1, 1 * MB) == 1, "pwrite: %s", strerror(errno));
	if (set_knobs("always", "never", "inherit"))
		return -1;
	char *c = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(c != MAP_FAILED, "mmap: %s", strerror(errno));
	c[0] = 1;
	long rss = smaps_kb(c, "Rss"), pmd = smaps_kb(c, "ShmemPmdMapped"), b = blocks(fd);
	int data = c[1 * MB] == 'x';
	munmap(c, 2 * MB);
	close(fd);
	CHECK(rss == 4 && pmd == 0, "Rss %ld kB, ShmemPmdMapped %ld kB, want 4 and 0", rss, pmd);
	CHECK(b == 16, "st_blocks %ld, want 16 (two 4K pages)", b);
	CHECK(data, "the written byte did not read back");
	return 0;
}

/* A tmpfs mount with room for one 2M folio and a little more: the first
 * 2M fault gets the 2M folio, the next finds no room for another and falls
 * back to a page. */
static int a_full_mount_falls_back_to_small_folios(void)
{
	const char *dir = "/tmp/shmem-folios";
	mkdir("/tmp", 01777);
	CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir: %s", strerror(errno));
	CHECK(mount("tmpfs", dir, "tmpfs", 0, "huge=always,size=3M") == 0, "mount: %s",
	      strerror(errno));
	long before = meminfo_kb("ShmemHugePages"), fallbacks = vmstat("thp_file_fallback");
	int fd = open("/tmp/shmem-folios/f", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 4 * MB) == 0, "file: %s", strerror(errno));
	char *c = map_aligned(fd, 4 * MB, 2 * MB);
	CHECK(c, "mmap: %s", strerror(errno));
	c[0] = 1;
	c[2 * MB] = 2;
	long rss = smaps_kb(c, "Rss"), pmd = smaps_kb(c, "ShmemPmdMapped"), b = blocks(fd);
	long huge = meminfo_kb("ShmemHugePages") - before;
	long fell = vmstat("thp_file_fallback") - fallbacks;
	munmap(c, 4 * MB);
	close(fd);
	unlink("/tmp/shmem-folios/f");
	int unmounted = umount2(dir, 0) == 0;
	rmdir(dir);
	CHECK(pmd == 2048 && rss == 2052, "Rss %ld kB, ShmemPmdMapped %ld kB, want 2052 and 2048",
	      rss, pmd);
	CHECK(b == 4104, "st_blocks %ld, want 4104 (2M + 4K)", b);
	CHECK(huge == 2048, "ShmemHugePages grew by %ld kB, want 2048", huge);
	CHECK(fell == 0, "thp_file_fallback grew by %ld, want 0 (an accounting failure is no "
		       "allocation fallback)", fell);
	CHECK(unmounted, "umount2: %s", strerror(errno));
	return 0;
}

static sigjmp_buf bus_jump;
static volatile int bus_code;
static void *volatile bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	bus_code = si->si_code;
	bus_addr = si->si_addr;
	siglongjmp(bus_jump, 1);
}

/* Reads *P; 1 if that raised SIGBUS. */
static int bus_on_read(volatile char *p)
{
	bus_code = 0;
	bus_addr = NULL;
	if (sigsetjmp(bus_jump, 1))
		return 1;
	(void)*p;
	return 0;
}

/* An 8K memfd mapped 4M under shmem_enabled=always: the first store gets a
 * 2M folio mapped whole by a PMD (Linux maps shmem PMDs across i_size), so
 * the rest of that 2M reads as zeros; past the folio, SIGBUS as ever. */
static int sigbus_beyond_eof_is_unchanged(void)
{
	if (set_knobs("always", "never", "inherit"))
		return -1;
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO }, old;
	sigaction(SIGBUS, &sa, &old);
	int fd = memfd_create("eof", MFD_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 8 * KB) == 0, "memfd: %s", strerror(errno));
	char *c = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(c != MAP_FAILED, "mmap: %s", strerror(errno));
	c[0] = 1;
	long pmd = smaps_kb(c, "ShmemPmdMapped");
	int inside = bus_on_read(c + 1 * MB);
	int past = bus_on_read(c + 2 * MB + 5 * PAGE);
	int code = bus_code;
	void *addr = bus_addr;
	munmap(c, 4 * MB);
	close(fd);
	sigaction(SIGBUS, &old, NULL);
	CHECK(pmd == 2048, "ShmemPmdMapped %ld kB, want 2048", pmd);
	CHECK(!inside, "SIGBUS inside the PMD-mapped folio, past i_size");
	CHECK(past && code == BUS_ADRERR && addr == c + 2 * MB + 5 * PAGE,
	      "past the folio: SIGBUS %d, si_code %d, si_addr %p; want 1, %d, %p", past, code,
	      addr, BUS_ADRERR, c + 2 * MB + 5 * PAGE);
	return 0;
}

/* write() copies straight from the caller's buffer: a buffer that runs
 * into unmapped memory gives a short count, one that is not there at all
 * EFAULT, and the kernel half EFAULT too. */
static int writes_from_bad_buffers_are_short_or_efault(void)
{
	if (set_knobs("never", "never", "inherit"))
		return -1;
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 'b', PAGE);
	munmap(p + PAGE, PAGE);
	int fd = memfd_create("badbuf", MFD_CLOEXEC);
	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	ssize_t shortw = write(fd, p + PAGE - 100, 200);
	ssize_t none = syscall(SYS_write, fd, (void *)8, 10);
	int none_err = errno;
	ssize_t kernel = syscall(SYS_write, fd, (void *)0xffffffffffff0000ul, 10);
	int kernel_err = errno;
	long b = blocks(fd);
	struct stat st;
	fstat(fd, &st);
	close(fd);
	munmap(p, PAGE);
	CHECK(shortw == 100, "a buffer running into a hole: %zd, want 100", shortw);
	CHECK(none == -1 && none_err == EFAULT, "an unmapped buffer: %zd, errno %d", none,
	      none_err);
	CHECK(kernel == -1 && kernel_err == EFAULT, "a kernel address: %zd, errno %d", kernel,
	      kernel_err);
	CHECK(st.st_size == 100 && b == 8, "size %ld, st_blocks %ld; want 100 and 8",
	      (long)st.st_size, b);
	return 0;
}

static const struct test tests[] = {
	TEST(one_4m_write_makes_two_2m_folios),
	TEST(a_store_through_a_2m_mapping_maps_one_pmd),
	TEST(faults_on_shared_anonymous_memory_get_64k_folios),
	TEST(a_hole_beside_cached_pages_gets_a_small_folio),
	TEST(a_full_mount_falls_back_to_small_folios),
	TEST(sigbus_beyond_eof_is_unchanged),
	TEST(writes_from_bad_buffers_are_short_or_efault),
};

int main(void)
{
	char saved[NKNOBS][32];
	for (size_t k = 0; k < NKNOBS; k++)
		if (knob_value(knobs[k], saved[k], sizeof(saved[k])) != 0) {
			printf("shmem-folios: cannot read %s\n", knobs[k]);
			return 1;
		}
	int failed = run_tests("shmem-folios", tests, sizeof(tests) / sizeof(tests[0]));
	for (size_t k = 0; k < NKNOBS; k++)
		write_file(knobs[k], saved[k]);
	return failed != 0;
}
