/*
 * The dirty state of shared file pages, as /proc/self/smaps shows it. A
 * page read through a writable MAP_SHARED mapping is mapped clean; its
 * first write makes it dirty. Where the CPU manages the dirty state
 * (FEAT_HAFDBS with TCR_EL1.HD) the MMU does that with no fault; where it
 * does not, that write faults once and the kernel does it (Linux: the
 * writable entry is read-only with PTE_DBM set, and handle_pte_fault's
 * pte_mkdirty). Either way the state survives munmap into the page cache.
 *
 * faultline's switch /sys/kernel/mm/hw_dirty/enabled says which; Linux has
 * none, and its expected values are those of a CPU without the feature, as
 * make test-linux boots it (cortex-a72). A static glibc program: make test
 * runs it on faultline, make test-linux on Linux 6.12.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "feature.h"

#define PAGE 4096L
#define PAGES 16
static const char knob[] = "/sys/kernel/mm/hw_dirty/enabled";

/* Minor faults this process has taken so far. */
static long minflt(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : -1;
}

/* A new memfd of PAGES pages, none of them cached yet; -1 on failure. */
static int empty_file(void)
{
	int fd = memfd_create("dirty", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, PAGES * PAGE) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads page 0 of a fresh file through a writable shared mapping, then
 * writes it: clean before, dirty after, with one fault for the write
 * exactly where the MMU leaves the dirty state to the kernel (HW says
 * the MMU keeps it). */
static int read_then_write(int hw)
{
	int fd = empty_file();
	CHECK(fd >= 0, "memfd: %s", strerror(errno));
	char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(((volatile char *)p)[0] == 0, "a hole reads non-zero");
	long rss = smaps_kb(p, "Rss");
	CHECK(rss == 4, "Rss %ld kB after reading one page, want 4", rss);
	long clean = smaps_kb(p, "Private_Clean"), dirty = smaps_kb(p, "Private_Dirty");
	CHECK(clean == 4 && dirty == 0, "after a read: Private_Clean %ld, Private_Dirty %ld kB; want 4 and 0",
	      clean, dirty);
	long before = minflt();
	((volatile char *)p)[0] = 'w';
	long faults = minflt() - before;
	CHECK(faults == (hw ? 0 : 1), "the first write took %ld faults, want %d (%s)", faults, hw ? 0 : 1,
	      hw ? "the MMU sets the dirty state" : "the kernel sets the dirty state");
	clean = smaps_kb(p, "Private_Clean");
	dirty = smaps_kb(p, "Private_Dirty");
	CHECK(clean == 0 && dirty == 4, "after a write: Private_Clean %ld, Private_Dirty %ld kB; want 0 and 4",
	      clean, dirty);
	/* A second write finds the page dirty already. */
	before = minflt();
	((volatile char *)p)[1] = 'x';
	CHECK(minflt() == before, "the second write faulted");
	munmap(p, PAGES * PAGE);
	return 0;
}

/* Pages 0 and 3 read, page 3 then written, then the mapping goes: a new
 * read-only mapping finds page 3 dirty (unmapping handed the entry's dirty
 * state to the page cache) and page 0 clean. */
static int dirty_state_survives_munmap(void)
{
	int fd = empty_file();
	CHECK(fd >= 0, "memfd: %s", strerror(errno));
	char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(((volatile char *)p)[0] == 0 && ((volatile char *)p)[3 * PAGE] == 0, "holes read non-zero");
	((volatile char *)p)[3 * PAGE] = 'd';
	munmap(p, PAGES * PAGE);
	char *q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 3 * PAGE);
	char *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(q != MAP_FAILED && r != MAP_FAILED, "mmap again: %s", strerror(errno));
	CHECK(((volatile char *)q)[0] == 'd', "page 3 lost its write");
	CHECK(((volatile char *)r)[0] == 0, "page 0 changed");
	long dirty = smaps_kb(q, "Private_Dirty"), clean = smaps_kb(r, "Private_Clean");
	CHECK(dirty == 4, "page 3 mapped again: Private_Dirty %ld kB, want 4", dirty);
	CHECK(clean == 4, "page 0 mapped again: Private_Clean %ld kB, want 4", clean);
	munmap(q, PAGE);
	munmap(r, PAGE);
	return 0;
}

/* Each CPU follows the switch at its next tick: wait a few. */
static int first_write_is_seen_by_the_mmu_or_the_kernel(void)
{
	return with_feature_switch(knob, read_then_write, 50000);
}

int main(void)
{
	static const struct test tests[] = {
		TEST(first_write_is_seen_by_the_mmu_or_the_kernel),
		TEST(dirty_state_survives_munmap),
	};
	return run_tests("dirty", tests, sizeof(tests) / sizeof(tests[0]));
}
