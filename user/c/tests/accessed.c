/*
 * The access flag as a process sees it, in /proc/self/smaps' Referenced:
 * fault-around maps the 64K around a read fault from the page cache, and
 * where the CPU sets the access flag itself (FEAT_HAFDBS) the pages it
 * maps ahead of need start old, so only those used count (Linux:
 * set_pte_range's prefault test, arch_wants_old_prefaulted_pte). Without
 * it they are mapped young: Referenced is the whole window.
 *
 * faultline's switch /sys/kernel/mm/hw_af/enabled says which; Linux has
 * none, and its expected values here are those of a CPU without the
 * feature, as make test-linux boots it (cortex-a72). A static glibc
 * program: make test runs it on faultline, make test-linux on Linux 6.12.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "feature.h"

#define PAGE 4096L
#define WINDOW (16 * PAGE)
static const char knob[] = "/sys/kernel/mm/hw_af/enabled";

/* A file of 16 pages in the page cache, mapped read-only at a 64K-aligned
 * address (one fault-around window); NULL on failure. */
static char *cached_window(void)
{
	int fd = memfd_create("accessed", MFD_CLOEXEC);
	static char data[WINDOW];
	memset(data, 'a', sizeof(data));
	if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
		return NULL;
	char *r = mmap(NULL, 2 * WINDOW, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	char *at = (char *)(((unsigned long)r + WINDOW - 1) & ~(WINDOW - 1));
	char *p = mmap(at, WINDOW, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Reads page 0 (one fault, fault-around maps the window) and then page 5,
 * and checks Referenced after each: OLD says the prefaulted pages start
 * old. */
static int touch_and_check(int old)
{
	char *p = cached_window();
	CHECK(p, "mapping the window: %s", strerror(errno));
	CHECK(((volatile char *)p)[0] == 'a', "page 0 reads wrong");
	long first = smaps_kb(p, "Referenced");
	CHECK(smaps_kb(p, "Rss") == WINDOW / 1024, "fault-around mapped %ld kB, not 64", smaps_kb(p, "Rss"));
	CHECK(first == (old ? 4 : 64), "Referenced %ld kB after one read, want %d (prefaulted pages %s)",
	      first, old ? 4 : 64, old ? "old" : "young");
	CHECK(((volatile char *)p)[5 * PAGE] == 'a', "page 5 reads wrong");
	long second = smaps_kb(p, "Referenced");
	CHECK(second == (old ? 8 : 64), "Referenced %ld kB after reading page 5 too, want %d", second,
	      old ? 8 : 64);
	munmap(p, WINDOW);
	return 0;
}

static int referenced_counts_what_was_used_where_the_cpu_marks_it(void)
{
	return with_feature_switch(knob, touch_and_check, 0);
}

int main(void)
{
	static const struct test tests[] = {
		TEST(referenced_counts_what_was_used_where_the_cpu_marks_it),
	};
	return run_tests("accessed", tests, sizeof(tests) / sizeof(tests[0]));
}
