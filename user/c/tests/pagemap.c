/*
 * What Linux's memory-management tools and tests read about a process's
 * memory, read as they read it: /proc/self/pagemap (which frame backs a
 * page, present, exclusively mapped, file or anonymous), /proc/kpageflags
 * and /proc/kpagecount (what a frame is: a large folio's head and tail
 * pages, THP, anonymous), /proc/PID/mem (another process's memory, and
 * writes past a read-only mapping as a debugger makes them), and what
 * fork's copy-on-write must keep apart, seen through them. A static glibc
 * program: make test runs it on faultline, make test-linux on Debian's
 * Linux 6.12, and the values it expects are Linux's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc.h"
#include "check.h"

#define PM_PFN(e) ((e) & ((1ULL << 55) - 1))
#define PM_EXCLUSIVE (1ULL << 56)
#define PM_FILE (1ULL << 61)
#define PM_PRESENT (1ULL << 63)
#define KPF_MMAP (1ULL << 11)
#define KPF_ANON (1ULL << 12)
#define KPF_COMPOUND_HEAD (1ULL << 15)
#define KPF_COMPOUND_TAIL (1ULL << 16)
#define KPF_NOPAGE (1ULL << 20)
#define KPF_THP (1ULL << 22)

static long page;

/* The pagemap entry of ADDR, or ~0 if it cannot be read. */
static uint64_t pagemap(const void *addr)
{
	uint64_t e = ~0ULL;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return e;
	if (pread(fd, &e, 8, (uintptr_t)addr / page * 8) != 8)
		e = ~0ULL;
	close(fd);
	return e;
}

/* The 8-byte entry of frame PFN in FILE (/proc/kpageflags or kpagecount). */
static uint64_t kpage(const char *file, uint64_t pfn)
{
	uint64_t e = ~0ULL;
	int fd = open(file, O_RDONLY);
	if (fd < 0)
		return e;
	if (pread(fd, &e, 8, pfn * 8) != 8)
		e = ~0ULL;
	close(fd);
	return e;
}

/* LEN bytes mapped private anonymous read-write at an address aligned to ALIGN. */
static char *map_aligned(size_t len, size_t align)
{
	char *p = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	char *start = (char *)(((uintptr_t)p + align - 1) & ~(align - 1));
	if (start > p)
		munmap(p, start - p);
	munmap(start + len, p + align - start);
	return start;
}

static int an_anonymous_page_is_present_once_touched_and_exclusive(void)
{
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	uint64_t before = pagemap(p);
	CHECK(before == 0, "untouched page's entry %#llx, want 0", (unsigned long long)before);
	p[0] = 1;
	uint64_t e = pagemap(p);
	CHECK(e & PM_PRESENT, "written page not present: %#llx", (unsigned long long)e);
	CHECK(e & PM_EXCLUSIVE, "a page only we map is not exclusive: %#llx", (unsigned long long)e);
	CHECK(!(e & PM_FILE), "an anonymous page says file: %#llx", (unsigned long long)e);
	CHECK(PM_PFN(e) != 0, "no frame number");
	uint64_t flags = kpage("/proc/kpageflags", PM_PFN(e));
	CHECK((flags & (KPF_ANON | KPF_MMAP)) == (KPF_ANON | KPF_MMAP), "kpageflags %#llx lack ANON|MMAP",
	      (unsigned long long)flags);
	CHECK(kpage("/proc/kpagecount", PM_PFN(e)) == 1, "kpagecount %llu, want 1",
	      (unsigned long long)kpage("/proc/kpagecount", PM_PFN(e)));
	munmap(p, page);
	CHECK(pagemap(p) == 0, "an unmapped page still has an entry");
	return 0;
}

static int after_fork_a_page_is_shared_until_written(void)
{
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	p[0] = 1;
	uint64_t pfn = PM_PFN(pagemap(p));
	int go[2], done[2];
	CHECK(pipe(go) == 0 && pipe(done) == 0, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		read(go[0], &c, 1);
		p[0] = 2; /* the child's own copy now */
		write(done[1], "x", 1);
		read(go[0], &c, 1);
		_exit(p[0] == 2 ? 0 : 1);
	}
	uint64_t e = pagemap(p);
	CHECK(PM_PFN(e) == pfn, "fork moved the parent's page");
	CHECK(!(e & PM_EXCLUSIVE), "a page two processes map is exclusive: %#llx", (unsigned long long)e);
	CHECK(kpage("/proc/kpagecount", pfn) == 2, "kpagecount %llu, want 2",
	      (unsigned long long)kpage("/proc/kpagecount", pfn));
	char c;
	write(go[1], "x", 1);
	read(done[0], &c, 1);
	e = pagemap(p);
	CHECK(PM_PFN(e) == pfn && (e & PM_EXCLUSIVE), "after the child's copy, parent's entry %#llx",
	      (unsigned long long)e);
	CHECK(p[0] == 1, "the child's write reached the parent");
	write(go[1], "x", 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child saw %#x", status);
	munmap(p, page);
	return 0;
}

static int after_the_other_holder_exits_a_write_keeps_the_frame(void)
{
	/* Copy-on-write reuses a page nobody else maps any more (Linux:
	 * wp_can_reuse_anon_folio): no copy, the same frame. */
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	p[0] = 1;
	uint64_t pfn = PM_PFN(pagemap(p));
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "waitpid: %s", strerror(errno));
	p[0] = 2;
	uint64_t e = pagemap(p);
	CHECK(PM_PFN(e) == pfn && (e & PM_EXCLUSIVE), "after the child exited, the write moved %#llx to %#llx",
	      (unsigned long long)pfn, (unsigned long long)e);
	munmap(p, page);
	return 0;
}

static int mprotect_after_fork_does_not_share_a_written_page(void)
{
	/* Making a page writable again must not skip the copy fork needs. */
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 'a', page);
	int ready[2], go[2];
	CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		write(ready[1], "x", 1);
		read(go[0], &c, 1);
		_exit(p[0] == 'a' && p[page - 1] == 'a' ? 0 : 1);
	}
	char c;
	read(ready[0], &c, 1);
	CHECK(mprotect(p, page, PROT_READ) == 0 && mprotect(p, page, PROT_READ | PROT_WRITE) == 0,
	      "mprotect: %s", strerror(errno));
	memset(p, 'b', page);
	write(go[1], "x", 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child saw the parent's write");
	munmap(p, page);
	return 0;
}

static int a_shared_memory_page_is_a_file_page(void)
{
	int fd = memfd_create("pm", 0);
	CHECK(fd >= 0 && ftruncate(fd, page) == 0, "memfd: %s", strerror(errno));
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	p[0] = 1;
	uint64_t e = pagemap(p);
	CHECK((e & (PM_PRESENT | PM_FILE)) == (PM_PRESENT | PM_FILE), "shmem entry %#llx",
	      (unsigned long long)e);
	uint64_t flags = kpage("/proc/kpageflags", PM_PFN(e));
	CHECK(!(flags & KPF_ANON) && (flags & KPF_MMAP), "shmem kpageflags %#llx", (unsigned long long)flags);
	munmap(p, page);
	close(fd);
	return 0;
}

static int a_64k_anonymous_folio_is_a_thp_of_consecutive_frames(void)
{
	const char *knob = THP "hugepages-64kB/enabled";
	char old[32];
	CHECK(knob_value(knob, old, sizeof(old)) == 0, "reading %s", knob);
	CHECK(write_file(knob, "always") == 0, "setting %s: %s", knob, strerror(errno));
	char *p = map_aligned(64 << 10, 64 << 10);
	int bad = p == NULL;
	if (!bad)
		p[0] = 1; /* one touch faults in the whole 64K folio */
	write_file(knob, old);
	CHECK(!bad, "mmap: %s", strerror(errno));
	uint64_t first = PM_PFN(pagemap(p));
	CHECK(first % 16 == 0, "the folio's first frame %#llx is not 64K-aligned", (unsigned long long)first);
	for (int i = 1; i < 16; i++) {
		uint64_t e = pagemap(p + i * page);
		CHECK((e & PM_PRESENT) && PM_PFN(e) == first + i, "page %d: entry %#llx, want frame %#llx", i,
		      (unsigned long long)e, (unsigned long long)(first + i));
	}
	uint64_t head = kpage("/proc/kpageflags", first), tail = kpage("/proc/kpageflags", first + 5);
	uint64_t bits = KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP | KPF_ANON;
	CHECK((head & bits) == (KPF_COMPOUND_HEAD | KPF_THP | KPF_ANON), "head's kpageflags %#llx",
	      (unsigned long long)head);
	CHECK((tail & bits) == (KPF_COMPOUND_TAIL | KPF_THP | KPF_ANON), "tail's kpageflags %#llx",
	      (unsigned long long)tail);
	munmap(p, 64 << 10);
	return 0;
}

static int reads_must_be_whole_entries_and_stop_at_the_end(void)
{
	uint64_t buf[2];
	int fd = open("/proc/self/pagemap", O_RDONLY);
	CHECK(fd >= 0, "open pagemap: %s", strerror(errno));
	errno = 0;
	CHECK(pread(fd, buf, 8, 4) == -1 && errno == EINVAL, "unaligned offset: errno %d", errno);
	CHECK(pread(fd, buf, 12, 0) == -1 && errno == EINVAL, "unaligned length: errno %d", errno);
	/* Past the top of user space: nothing more to read. */
	CHECK(pread(fd, buf, 16, (1ULL << 48) / page * 8) == 0, "pagemap past the top of user space");
	close(fd);
	fd = open("/proc/kpageflags", O_RDONLY);
	CHECK(fd >= 0, "open kpageflags: %s", strerror(errno));
	/* Frame 0 is no RAM on QEMU's virt machine: no page there. */
	CHECK(pread(fd, buf, 8, 0) == 8 && buf[0] == KPF_NOPAGE, "frame 0's flags %#llx",
	      (unsigned long long)buf[0]);
	CHECK(pread(fd, buf, 8, 1ULL << 40) == 0, "kpageflags far past the end of RAM");
	close(fd);
	return 0;
}

static int proc_pid_mem_reads_and_writes_another_process(void)
{
	static volatile int value = 41;
	int ready[2], go[2];
	CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		value = 42;
		write(ready[1], "x", 1);
		read(go[0], &c, 1);
		_exit(value == 43 ? 0 : 1);
	}
	char c, path[64];
	read(ready[0], &c, 1);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	int v = 0;
	CHECK(pread(fd, &v, sizeof(v), (uintptr_t)&value) == sizeof(v) && v == 42, "read %d, want 42", v);
	v = 43;
	CHECK(pwrite(fd, &v, sizeof(v), (uintptr_t)&value) == sizeof(v), "write: %s", strerror(errno));
	close(fd);
	CHECK(value == 41, "the child's memory is ours");
	write(go[1], "x", 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child did not see 43");
	return 0;
}

static int proc_self_mem_writes_past_read_only_into_a_private_copy(void)
{
	char name[] = "/tmp/pagemap-XXXXXX";
	int file = mkstemp(name);
	CHECK(file >= 0, "mkstemp: %s", strerror(errno));
	unlink(name);
	CHECK(write(file, "file", 4) == 4, "write: %s", strerror(errno));
	char *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, file, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	int fd = open("/proc/self/mem", O_RDWR);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	CHECK(pwrite(fd, "FORCE", 5, (uintptr_t)p) == 5, "forced write: %s", strerror(errno));
	CHECK(memcmp(p, "FORCE", 5) == 0, "the mapping reads %.5s", p);
	char back[5];
	CHECK(pread(file, back, 4, 0) == 4 && memcmp(back, "file", 4) == 0, "the write reached the file");
	CHECK(!(pagemap(p) & PM_FILE), "the written page is still the file's");
	/* Nothing mapped: EIO. */
	char *hole = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, page);
	errno = 0;
	CHECK(pread(fd, back, 1, (uintptr_t)hole) == -1 && errno == EIO, "read of a hole: errno %d", errno);
	close(fd);
	munmap(p, page);
	close(file);
	return 0;
}

static int vmsplice_moves_what_a_pipe_holds(void)
{
	size_t len = 128 << 10;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 'v', len);
	int fds[2];
	CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
	struct iovec iov = { p, len };
	/* A pipe takes 16 pages; vmsplice stops there rather than wait. */
	ssize_t n = vmsplice(fds[1], &iov, 1, 0);
	CHECK(n == 16 * page, "vmsplice moved %zd, want %ld", n, 16 * page);
	char buf[64];
	CHECK(read(fds[0], buf, sizeof(buf)) == sizeof(buf) && buf[0] == 'v', "read: %s", strerror(errno));
	errno = 0;
	int null = open("/dev/null", O_WRONLY);
	CHECK(vmsplice(null, &iov, 1, 0) == -1 && errno == EBADF, "vmsplice to no pipe: errno %d", errno);
	close(null);
	CHECK(vmsplice(fds[1], &iov, 1, 0x10) == -1 && errno == EINVAL, "an unknown flag: errno %d", errno);
	munmap(p, len);
	return 0;
}

static const struct test tests[] = {
	TEST(an_anonymous_page_is_present_once_touched_and_exclusive),
	TEST(after_fork_a_page_is_shared_until_written),
	TEST(after_the_other_holder_exits_a_write_keeps_the_frame),
	TEST(mprotect_after_fork_does_not_share_a_written_page),
	TEST(a_shared_memory_page_is_a_file_page),
	TEST(a_64k_anonymous_folio_is_a_thp_of_consecutive_frames),
	TEST(reads_must_be_whole_entries_and_stop_at_the_end),
	TEST(proc_pid_mem_reads_and_writes_another_process),
	TEST(proc_self_mem_writes_past_read_only_into_a_private_copy),
	TEST(vmsplice_moves_what_a_pipe_holds),
};

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	return run_tests("pagemap", tests, sizeof(tests) / sizeof(tests[0]));
}
