/*
 * Anonymous transparent huge pages mapped by one PMD entry, seen as any
 * Linux program sees them: /proc/self/smaps' AnonHugePages, /proc/meminfo's
 * AnonHugePages, /proc/vmstat's thp_* counters, /proc/self/pagemap and
 * /proc/kpageflags. A first touch of a 2M-aligned 2M gets one 2M folio; a
 * munmap, mprotect, MADV_DONTNEED or mremap of part of it takes the PMD
 * apart into PTEs with every byte kept, while whole-2M operations keep it;
 * fork shares it copy-on-write; MADV_NOHUGEPAGE and the `enabled` knob
 * keep it away; MADV_COLLAPSE puts a split one back under one PMD; and
 * debugfs's split_huge_pages splits it into single pages.
 * A static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12, and the values it expects are Linux's. The
 * knobs are set from here through sysfs and put back at the end; the huge
 * zero page is turned off, as faultline has none, so that a read fault
 * allocates a THP on both.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "../proc.h"
#include "check.h"

#define KB 1024L
#define MB (1024 * KB)
#define PAGE (4 * KB)
#define THP_SIZE (2 * MB)

#define PM_PFN(e) ((e) & ((1ULL << 55) - 1))
#define PM_PRESENT (1ULL << 63)
#define KPF_ANON (1ULL << 12)
#define KPF_COMPOUND_HEAD (1ULL << 15)
#define KPF_COMPOUND_TAIL (1ULL << 16)
#define KPF_THP (1ULL << 22)
#define SPLIT "/sys/kernel/debug/split_huge_pages"
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1's; older glibc headers lack it */
#endif

/* The knobs this program sets, and what it sets them to before each test. */
static const char *const knobs[] = {
	THP "enabled",
	THP "hugepages-2048kB/enabled",
	THP "hugepages-64kB/enabled",
};
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

/* `enabled`, with 2M inheriting it and 64K off. */
static int set_enabled(const char *value)
{
	const char *values[NKNOBS] = { value, "inherit", "never" };
	for (size_t k = 0; k < NKNOBS; k++)
		CHECK(write_file(knobs[k], values[k]) == 0, "writing %s to %s: %s", values[k],
		      knobs[k], strerror(errno));
	return 0;
}

/* LEN bytes of private anonymous memory at a 2M-aligned address, its own
 * VMA (PROT_NONE neighbours, left in place, keep it from merging). */
static char *map_thp_aligned(size_t len)
{
	char *r = mmap(NULL, len + 2 * THP_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	char *at = (char *)(((uintptr_t)r + 2 * THP_SIZE - 1) & ~(THP_SIZE - 1));
	char *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The pagemap entry of ADDR, or 0 if it cannot be read. */
static uint64_t pagemap(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (uintptr_t)addr / PAGE * 8) != 8)
		e = 0;
	close(fd);
	return e;
}

/* The /proc/kpageflags entry of frame PFN, or ~0 if it cannot be read. */
static uint64_t kpageflags(uint64_t pfn)
{
	uint64_t e = ~0ULL;
	int fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0)
		return e;
	if (pread(fd, &e, 8, pfn * 8) != 8)
		e = ~0ULL;
	close(fd);
	return e;
}

/* The byte the pattern `fill` writes at offset OFF of a mapping: never
 * zero (a page of zeros may be dropped when a THP is split, as Linux maps
 * the zero page there), and different page by page. */
static char pattern(size_t off, int seed)
{
	return (char)(1 + (off / PAGE * 7 + seed) % 251);
}

/* Fills LEN bytes at P, a byte every 512, with `pattern`. */
static void fill(char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i += 512)
		p[i] = pattern(i, seed);
}

/* -1 if the LEN bytes at P hold what `fill` wrote FROM bytes into the
 * mapping, else the first offset that differs. */
static long pattern_at(const char *p, size_t from, size_t len, int seed)
{
	for (size_t i = 0; i < len; i += 512)
		if (p[i] != pattern(from + i, seed))
			return (long)i;
	return -1;
}

static sigjmp_buf segv_jump;

static void on_sigsegv(int sig)
{
	(void)sig;
	siglongjmp(segv_jump, 1);
}

/* Writes *P; 1 if that raised SIGSEGV. */
static int segv_on_write(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_sigsegv }, old;
	sigaction(SIGSEGV, &sa, &old);
	int segv = 0;
	if (sigsetjmp(segv_jump, 1))
		segv = 1;
	else
		*p = 1;
	sigaction(SIGSEGV, &old, NULL);
	return segv;
}

/* A first write into a 2M-aligned 2M maps one 2M folio with one PMD:
 * smaps and meminfo count it, vmstat counts the fault, and pagemap shows
 * 512 consecutive frames from a 2M-aligned one, the first a compound head
 * and the rest its tails, all THP. */
static int a_first_write_maps_a_whole_2m_folio(void)
{
	if (set_enabled("always"))
		return -1;
	long faults = vmstat("thp_fault_alloc"), huge = meminfo_kb("AnonHugePages");
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	p[PAGE + 5] = 1;
	long ahp = smaps_kb(p, "AnonHugePages"), rss = smaps_kb(p, "Rss");
	long more = meminfo_kb("AnonHugePages") - huge, fault = vmstat("thp_fault_alloc") - faults;
	uint64_t first = pagemap(p), last = pagemap(p + THP_SIZE - PAGE);
	uint64_t head = kpageflags(PM_PFN(first)), tail = kpageflags(PM_PFN(last));
	munmap(p, THP_SIZE);
	CHECK(ahp == 2048 && rss == 2048, "AnonHugePages %ld kB, Rss %ld kB; want 2048 and 2048",
	      ahp, rss);
	CHECK(more == 2048, "meminfo AnonHugePages grew by %ld kB, want 2048", more);
	CHECK(fault == 1, "thp_fault_alloc grew by %ld, want 1", fault);
	CHECK((first & PM_PRESENT) && (last & PM_PRESENT), "pagemap %#llx .. %#llx not present",
	      (unsigned long long)first, (unsigned long long)last);
	CHECK(PM_PFN(first) % 512 == 0 && PM_PFN(last) == PM_PFN(first) + 511,
	      "frames %#llx .. %#llx, want 512 in a row from a 2M-aligned one",
	      (unsigned long long)PM_PFN(first), (unsigned long long)PM_PFN(last));
	uint64_t bits = KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP | KPF_ANON;
	CHECK((head & bits) == (KPF_COMPOUND_HEAD | KPF_THP | KPF_ANON), "head's kpageflags %#llx",
	      (unsigned long long)head);
	CHECK((tail & bits) == (KPF_COMPOUND_TAIL | KPF_THP | KPF_ANON), "tail's kpageflags %#llx",
	      (unsigned long long)tail);
	return 0;
}

/* Without the huge zero page a read fault gets a 2M folio too, of zeros. */
static int a_first_read_maps_a_2m_folio_of_zeros(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	long zeros = 0;
	for (long i = 0; i < THP_SIZE; i += PAGE)
		zeros += ((volatile char *)p)[i] == 0;
	long ahp = smaps_kb(p, "AnonHugePages");
	munmap(p, THP_SIZE);
	CHECK(ahp == 2048, "AnonHugePages %ld kB, want 2048", ahp);
	CHECK(zeros == 512, "%ld of 512 pages read as zeros", zeros);
	return 0;
}

/* `never` gives none even with MADV_HUGEPAGE, `madvise` only with it, and
 * MADV_NOHUGEPAGE none under `always`: a fault then maps one page. */
static int the_knobs_and_madvise_decide(void)
{
	struct { const char *enabled; int advice; long want; } cases[] = {
		{ "never", MADV_HUGEPAGE, 0 },
		{ "madvise", MADV_NORMAL, 0 },
		{ "madvise", MADV_HUGEPAGE, 2048 },
		{ "always", MADV_NOHUGEPAGE, 0 },
		{ "always", MADV_NORMAL, 2048 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		if (set_enabled(cases[c].enabled))
			return -1;
		char *p = map_thp_aligned(THP_SIZE);
		CHECK(p, "mmap: %s", strerror(errno));
		CHECK(madvise(p, THP_SIZE, cases[c].advice) == 0, "madvise: %s", strerror(errno));
		p[0] = 1;
		long ahp = smaps_kb(p, "AnonHugePages"), rss = smaps_kb(p, "Rss");
		munmap(p, THP_SIZE);
		long want_rss = cases[c].want ? 2048 : 4;
		CHECK(ahp == cases[c].want && rss == want_rss,
		      "enabled=%s, advice %d: AnonHugePages %ld kB, Rss %ld kB; want %ld and %ld",
		      cases[c].enabled, cases[c].advice, ahp, rss, cases[c].want, want_rss);
	}
	return 0;
}

/* munmap of the first page takes the PMD apart: the other 511 pages keep
 * their data, now under PTEs (and still pages of the one 2M folio). */
static int a_partial_munmap_keeps_the_rest(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 1);
	long splits = vmstat("thp_split_pmd");
	CHECK(munmap(p, PAGE) == 0, "munmap: %s", strerror(errno));
	char *q = p + PAGE;
	long ahp = smaps_kb(q, "AnonHugePages"), rss = smaps_kb(q, "Rss");
	long split = vmstat("thp_split_pmd") - splits;
	long bad = pattern_at(q, PAGE, THP_SIZE - PAGE, 1);
	uint64_t flags = kpageflags(PM_PFN(pagemap(q + 9 * PAGE)));
	munmap(q, THP_SIZE - PAGE);
	CHECK(ahp == 0 && rss == 2044, "AnonHugePages %ld kB, Rss %ld kB; want 0 and 2044", ahp,
	      rss);
	CHECK(split == 1, "thp_split_pmd grew by %ld, want 1", split);
	CHECK(bad < 0, "byte %ld after the unmapped page changed", bad);
	CHECK(flags & KPF_THP, "a page left mapped is no THP page (kpageflags %#llx)",
	      (unsigned long long)flags);
	return 0;
}

/* mprotect of one page in the middle splits the PMD: that page refuses a
 * write, the rest take them, nothing is lost. The whole 2M read-only and
 * back keeps the one PMD. */
static int mprotect_of_part_splits_of_the_whole_keeps(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 2);
	CHECK(mprotect(p, THP_SIZE, PROT_READ) == 0, "mprotect: %s", strerror(errno));
	long whole_ro = smaps_kb(p, "AnonHugePages");
	int segv_whole = segv_on_write(p + 100 * PAGE);
	CHECK(mprotect(p, THP_SIZE, PROT_READ | PROT_WRITE) == 0, "mprotect: %s", strerror(errno));
	long whole_rw = smaps_kb(p, "AnonHugePages");
	CHECK(mprotect(p + 7 * PAGE, PAGE, PROT_READ) == 0, "mprotect: %s", strerror(errno));
	long part = smaps_kb(p, "AnonHugePages");
	int segv_ro = segv_on_write(p + 7 * PAGE + 3);
	int segv_rw = segv_on_write(p + 8 * PAGE + 3);
	p[8 * PAGE + 3] = 0; /* as `fill` left it */
	long bad = pattern_at(p, 0, THP_SIZE, 2);
	munmap(p, THP_SIZE);
	CHECK(whole_ro == 2048 && whole_rw == 2048,
	      "AnonHugePages %ld and %ld kB after mprotect of the whole, want 2048", whole_ro,
	      whole_rw);
	CHECK(segv_whole, "a write to the read-only 2M did not fault");
	CHECK(part == 0, "AnonHugePages %ld kB after mprotect of a page, want 0", part);
	CHECK(segv_ro && !segv_rw, "SIGSEGV on write: read-only page %d, writable %d; want 1, 0",
	      segv_ro, segv_rw);
	CHECK(bad < 0, "byte %ld changed", bad);
	return 0;
}

/* MADV_DONTNEED of half: that half reads back zeros, the other keeps its
 * data. */
static int madv_dontneed_of_half_zeros_only_that_half(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 3);
	CHECK(madvise(p + MB, MB, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
	long rss = smaps_kb(p, "Rss");
	long bad = pattern_at(p, 0, MB, 3);
	long nonzero = 0;
	for (long i = MB; i < THP_SIZE; i += 512)
		nonzero += p[i] != 0;
	munmap(p, THP_SIZE);
	CHECK(rss == 1024, "Rss %ld kB after dropping half, want 1024", rss);
	CHECK(bad < 0, "byte %ld of the kept half changed", bad);
	CHECK(nonzero == 0, "%ld bytes of the dropped half are not zero", nonzero);
	return 0;
}

/* mremap of a whole aligned 2M to an aligned place moves the PMD; of half
 * of one, the PMD comes apart. The data moves with it either way. */
static int mremap_moves_a_whole_pmd_and_splits_a_half(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE), *to = map_thp_aligned(THP_SIZE);
	CHECK(p && to, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 4);
	char *q = mremap(p, THP_SIZE, THP_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	CHECK(q == to, "mremap: %s", strerror(errno));
	long moved = smaps_kb(q, "AnonHugePages");
	long bad = pattern_at(q, 0, THP_SIZE, 4);
	char *half = map_thp_aligned(MB);
	CHECK(half, "mmap: %s", strerror(errno));
	char *h = mremap(q + MB, MB, MB, MREMAP_MAYMOVE | MREMAP_FIXED, half);
	CHECK(h == half, "mremap: %s", strerror(errno));
	long left = smaps_kb(q, "AnonHugePages");
	long bad_low = pattern_at(q, 0, MB, 4), bad_high = pattern_at(h, MB, MB, 4);
	munmap(q, MB);
	munmap(h, MB);
	CHECK(moved == 2048, "AnonHugePages %ld kB after moving the whole 2M, want 2048", moved);
	CHECK(bad < 0, "byte %ld changed moving the whole 2M", bad);
	CHECK(left == 0, "AnonHugePages %ld kB after moving half away, want 0", left);
	CHECK(bad_low < 0 && bad_high < 0, "bytes %ld (kept half) / %ld (moved half) changed",
	      bad_low, bad_high);
	return 0;
}

/* After fork parent and child share the 2M folio, counted once in
 * meminfo; the child's write copies a page for it alone, and the parent's
 * data stays; once the child has gone, the parent's write reuses the
 * folio in place, PMD and all. */
static int fork_shares_a_pmd_copy_on_write(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	long huge = meminfo_kb("AnonHugePages");
	fill(p, THP_SIZE, 5);
	long before = meminfo_kb("AnonHugePages") - huge;
	int pipefd[2];
	CHECK(pipe(pipefd) == 0, "pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child == 0) {
		/* The child: reports what it saw, writes, exits. */
		long r[4] = { smaps_kb(p, "AnonHugePages"), meminfo_kb("AnonHugePages") - huge,
			      pattern_at(p, 0, THP_SIZE, 5), 0 };
		p[3 * PAGE] = 99;
		r[3] = smaps_kb(p, "AnonHugePages");
		write(pipefd[1], r, sizeof(r));
		_exit(0);
	}
	long r[4] = { -1, -1, -1, -1 };
	read(pipefd[0], r, sizeof(r));
	waitpid(child, NULL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	long kept = pattern_at(p, 0, THP_SIZE, 5);
	long ahp_before = smaps_kb(p, "AnonHugePages");
	p[5 * PAGE] = 42;
	long ahp_after = smaps_kb(p, "AnonHugePages");
	munmap(p, THP_SIZE);
	CHECK(before == 2048, "meminfo AnonHugePages grew by %ld kB, want 2048", before);
	CHECK(r[0] == 2048 && r[1] == 2048,
	      "in the child: AnonHugePages %ld kB, meminfo's grew by %ld kB; want 2048 for both",
	      r[0], r[1]);
	CHECK(r[2] < 0, "the child saw byte %ld changed", r[2]);
	CHECK(r[3] == 0, "the child's write left AnonHugePages %ld kB, want 0", r[3]);
	CHECK(kept < 0, "the child's write reached the parent (byte %ld)", kept);
	CHECK(ahp_before == 2048 && ahp_after == 2048,
	      "the parent's AnonHugePages %ld kB, then %ld kB after its write; want 2048",
	      ahp_before, ahp_after);
	return 0;
}

/* split_huge_pages in debugfs splits the PMD and the folio: single pages,
 * no THP, the data where it was; for a range of a process, and with `1`
 * for every process. */
static int debugfs_split_huge_pages_splits_to_single_pages(void)
{
	if (access(SPLIT, W_OK) != 0)
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE);
	CHECK(p, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 6);
	long ahp = smaps_kb(p, "AnonHugePages");
	char cmd[80];
	snprintf(cmd, sizeof(cmd), "%d,%p,%p,0", getpid(), (void *)p, (void *)(p + THP_SIZE));
	int written = write_file(SPLIT, cmd) == 0;
	int err = errno;
	long after = smaps_kb(p, "AnonHugePages"), rss = smaps_kb(p, "Rss");
	uint64_t head = kpageflags(PM_PFN(pagemap(p))), other = kpageflags(PM_PFN(pagemap(p + 9 * PAGE)));
	long bad = pattern_at(p, 0, THP_SIZE, 6);
	munmap(p, THP_SIZE);
	/* `1` alone: every THP of every process. */
	char *q = map_thp_aligned(THP_SIZE);
	CHECK(q, "mmap: %s", strerror(errno));
	fill(q, THP_SIZE, 8);
	long whole = smaps_kb(q, "AnonHugePages");
	int all = write_file(SPLIT, "1") == 0;
	int all_err = errno;
	long none = smaps_kb(q, "AnonHugePages");
	long bad_all = pattern_at(q, 0, THP_SIZE, 8);
	munmap(q, THP_SIZE);
	CHECK(ahp == 2048, "AnonHugePages %ld kB before, want 2048", ahp);
	CHECK(written, "writing %s: %s", SPLIT, strerror(err));
	CHECK(after == 0 && rss == 2048, "after: AnonHugePages %ld kB, Rss %ld kB; want 0, 2048",
	      after, rss);
	uint64_t bits = KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP;
	CHECK(!(head & bits) && !(other & bits), "kpageflags %#llx, %#llx: still compound",
	      (unsigned long long)head, (unsigned long long)other);
	CHECK(bad < 0, "byte %ld changed", bad);
	CHECK(all, "writing 1: %s", strerror(all_err));
	CHECK(whole == 2048 && none == 0,
	      "AnonHugePages %ld kB, then %ld kB after writing 1; want 2048, then 0", whole, none);
	CHECK(bad_all < 0, "byte %ld changed splitting everything", bad_all);
	return 0;
}

/* MADV_COLLAPSE maps a PTE-mapped 2M with one PMD again, every byte
 * copied; not where nothing is mapped, nor where fork shares every page
 * read-only (nothing would gain): EINVAL. */
static int madv_collapse_maps_a_split_2m_with_a_pmd_again(void)
{
	if (set_enabled("always"))
		return -1;
	char *p = map_thp_aligned(THP_SIZE), *empty = map_thp_aligned(THP_SIZE);
	CHECK(p && empty, "mmap: %s", strerror(errno));
	fill(p, THP_SIZE, 7);
	CHECK(mprotect(p + PAGE, PAGE, PROT_READ) == 0 &&
		      mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE) == 0,
	      "mprotect: %s", strerror(errno));
	long split = smaps_kb(p, "AnonHugePages"), allocs = vmstat("thp_collapse_alloc");
	int collapsed = madvise(p, THP_SIZE, MADV_COLLAPSE);
	int err = errno;
	long ahp = smaps_kb(p, "AnonHugePages"), alloc = vmstat("thp_collapse_alloc") - allocs;
	long bad = pattern_at(p, 0, THP_SIZE, 7);
	int none = madvise(empty, THP_SIZE, MADV_COLLAPSE), none_err = errno;
	/* Shared with a child: PTE-mapped, every entry read-only. */
	CHECK(mprotect(p + PAGE, PAGE, PROT_READ) == 0 &&
		      mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE) == 0,
	      "mprotect: %s", strerror(errno));
	int pipefd[2];
	CHECK(pipe(pipefd) == 0, "pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child == 0) {
		char c;
		read(pipefd[0], &c, 1);
		_exit(0);
	}
	int shared = madvise(p, THP_SIZE, MADV_COLLAPSE), shared_err = errno;
	write(pipefd[1], "x", 1);
	waitpid(child, NULL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(p, THP_SIZE);
	munmap(empty, THP_SIZE);
	CHECK(split == 0, "AnonHugePages %ld kB after mprotect of a page, want 0", split);
	CHECK(collapsed == 0, "MADV_COLLAPSE: %s", strerror(err));
	CHECK(ahp == 2048, "AnonHugePages %ld kB after MADV_COLLAPSE, want 2048", ahp);
	CHECK(alloc == 1, "thp_collapse_alloc grew by %ld, want 1", alloc);
	CHECK(bad < 0, "byte %ld changed", bad);
	CHECK(none == -1 && none_err == EINVAL, "MADV_COLLAPSE of nothing: %d (%s), want EINVAL",
	      none, strerror(none_err));
	CHECK(shared == -1 && shared_err == EINVAL,
	      "MADV_COLLAPSE of a 2M fork shares: %d (%s), want EINVAL", shared,
	      strerror(shared_err));
	return 0;
}

static const struct test tests[] = {
	TEST(a_first_write_maps_a_whole_2m_folio),
	TEST(a_first_read_maps_a_2m_folio_of_zeros),
	TEST(the_knobs_and_madvise_decide),
	TEST(a_partial_munmap_keeps_the_rest),
	TEST(mprotect_of_part_splits_of_the_whole_keeps),
	TEST(madv_dontneed_of_half_zeros_only_that_half),
	TEST(mremap_moves_a_whole_pmd_and_splits_a_half),
	TEST(fork_shares_a_pmd_copy_on_write),
	TEST(madv_collapse_maps_a_split_2m_with_a_pmd_again),
	TEST(debugfs_split_huge_pages_splits_to_single_pages),
};

int main(void)
{
	char saved[NKNOBS][32], zero[16] = "1";
	for (size_t k = 0; k < NKNOBS; k++)
		if (knob_value(knobs[k], saved[k], sizeof(saved[k])) != 0) {
			printf("anon-thp: cannot read %s\n", knobs[k]);
			return 1;
		}
	read_file(THP "use_zero_page", zero, sizeof(zero));
	write_file(THP "use_zero_page", "0");
	int failed = run_tests("anon-thp", tests, sizeof(tests) / sizeof(tests[0]));
	for (size_t k = 0; k < NKNOBS; k++)
		write_file(knobs[k], saved[k]);
	write_file(THP "use_zero_page", zero);
	return failed != 0;
}
