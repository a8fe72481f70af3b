/*
 * The memory-management system calls on a process's own address space, as
 * Linux's selftests (mm/, memfd/, mincore/) use them: the VmFlags line of
 * /proc/self/smaps, mprotect of private file mappings, mseal, prctl's
 * memory-deny-write-execute, mremap (MREMAP_DONTUNMAP, growing in place),
 * MAP_DROPPABLE and MADV_WIPEONFORK, madvise over holes and its populate,
 * remove and pageout advice, mincore's and msync's argument checks,
 * memfd's exec seals and vm.memfd_noexec, O_TMPFILE, /proc files read
 * again after a rewind, and vm.max_map_count bounding the VMAs. The
 * values expected are Linux 6.12's, as root.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Newer than these glibc headers. */
#ifndef SYS_mseal
#define SYS_mseal 462
#endif
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_GET_MDWE 66
#endif
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#define PR_MDWE_NO_INHERIT 2
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x20
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x8
#define MFD_EXEC 0x10
#endif

#ifndef PROT_SEM
#define PROT_SEM 0x8 /* asm-generic/mman-common.h; glibc leaves it out */
#endif

#define PAGE 4096

/* -1 and errno, or 0, as one number: 0 or -errno. */
static int result(long rc)
{
	return rc >= 0 ? 0 : -errno;
}

static char *map_anon(size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* The whole text of a /proc file into buf. */
static void read_file(const char *path, char *buf, size_t size)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	size_t n = 0;
	ssize_t r;
	while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
}

static char smaps[1 << 18];

/*
 * The VmFlags of the VMA holding addr, into out ("" if none), and its
 * maps line's permissions into perm (4 characters) if perm is not NULL.
 */
static void vma_flags(void *addr, char *out, size_t size, char *perm)
{
	unsigned long a = (unsigned long)addr;
	out[0] = 0;
	read_file("/proc/self/smaps", smaps, sizeof(smaps));
	for (char *line = smaps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long start, end;
		char p[5];
		if (sscanf(line, "%lx-%lx %4s", &start, &end, p) != 3 || a < start || a >= end)
			continue;
		if (perm)
			memcpy(perm, p, 5);
		char *flags = strstr(line, "VmFlags: ");
		if (!flags)
			return;
		flags += strlen("VmFlags: ");
		size_t n = strcspn(flags, "\n");
		if (n >= size)
			n = size - 1;
		memcpy(out, flags, n);
		out[n] = 0;
		return;
	}
}

/* The VmFlags of each kind of mapping, letter for letter as Linux 6.12. */
static int smaps_vmflags_name_each_mapping(void)
{
	char f[256];
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me ac "), "private anonymous: '%s'", f);
	mlock(p, PAGE);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me lo ac "), "mlocked: '%s'", f);
	munlock(p, PAGE);
	mlock2(p, PAGE, MLOCK_ONFAULT);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me lo lf ac "), "MLOCK_ONFAULT: '%s'", f);
	munlock(p, PAGE);
	madvise(p, PAGE, MADV_DONTFORK);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me dc ac "), "MADV_DONTFORK: '%s'", f);
	madvise(p, PAGE, MADV_DOFORK);
	madvise(p, PAGE, MADV_RANDOM);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me rr ac "), "MADV_RANDOM: '%s'", f);
	madvise(p, PAGE, MADV_SEQUENTIAL);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me sr ac "), "MADV_SEQUENTIAL: '%s'", f);
	madvise(p, PAGE, MADV_NORMAL);
	madvise(p, PAGE, MADV_HUGEPAGE);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me ac hg "), "MADV_HUGEPAGE: '%s'", f);
	madvise(p, PAGE, MADV_NOHUGEPAGE);
	vma_flags(p, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me ac nh "), "MADV_NOHUGEPAGE: '%s'", f);
	/*
	 * mlock split the first page off before faulting it in, and a VMA
	 * that has had anonymous pages does not join one that has not: the
	 * rest has never had a page, so it is no longer accounted once it
	 * cannot be written.
	 */
	mprotect(p + 3 * PAGE, PAGE, PROT_NONE);
	vma_flags(p + 3 * PAGE, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "mr mw me "), "PROT_NONE, never touched: '%s'", f);
	munmap(p, 4 * PAGE);
	char *t = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	t[0] = 1;
	mprotect(t + PAGE, PAGE, PROT_NONE);
	vma_flags(t + PAGE, f, sizeof(f), NULL);
	munmap(t, 2 * PAGE);
	CHECK(!strcmp(f, "mr mw me ac "), "PROT_NONE after a store: '%s'", f);

	char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	vma_flags(s, f, sizeof(f), NULL);
	munmap(s, PAGE);
	CHECK(!strcmp(f, "rd wr sh mr mw me ms "), "shared anonymous: '%s'", f);
	char *n = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	vma_flags(n, f, sizeof(f), NULL);
	munmap(n, PAGE);
	CHECK(!strcmp(f, "rd wr mr mw me nr "), "MAP_NORESERVE: '%s'", f);
	char *st = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	vma_flags(st, f, sizeof(f), NULL);
	munmap(st, PAGE);
	CHECK(!strcmp(f, "rd wr mr mw me ac nh "), "MAP_STACK: '%s'", f);
	char *d = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);
	vma_flags(d, f, sizeof(f), NULL);
	munmap(d, PAGE);
	CHECK(!strcmp(f, "rd wr mr mw me nr wf dd dp "), "MAP_DROPPABLE: '%s'", f);
	char stack;
	vma_flags(&stack, f, sizeof(f), NULL);
	CHECK(!strcmp(f, "rd wr mr mw me gd ac "), "the stack: '%s'", f);
	return 0;
}

/* A tmpfs file of two pages of 'a', open read-only. */
static int readonly_file(void)
{
	char path[] = "/dev/shm/vm-calls-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	char data[2 * PAGE];
	memset(data, 'a', sizeof(data));
	write(fd, data, sizeof(data));
	close(fd);
	fd = open(path, O_RDONLY);
	unlink(path);
	return fd;
}

/*
 * A private mapping of a file open read-only may be made writable (ld.so
 * does so to relocate a program): the copy is private. A shared one may
 * not, and is shown shared though writes could never reach the file.
 */
static int private_readonly_file_mapping_may_become_writable(void)
{
	int fd = readonly_file();
	CHECK(fd >= 0, "a read-only tmpfs file: %s", strerror(errno));
	char *p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	char f[256], perm[5] = "";
	vma_flags(p, f, sizeof(f), NULL);
	int rw = result(mprotect(p, PAGE, PROT_READ | PROT_WRITE));
	if (rw == 0)
		p[0] = 'b';
	char back[1];
	pread(fd, back, 1, 0);
	char *s = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	char sf[256];
	vma_flags(s, sf, sizeof(sf), perm);
	int shared_rw = result(mprotect(s, PAGE, PROT_READ | PROT_WRITE));
	int shared_write = result(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
					   MAP_FAILED ? -1 : 0);
	munmap(p, 2 * PAGE);
	munmap(s, 2 * PAGE);
	close(fd);
	CHECK(!strcmp(f, "rd mr mw me "), "private read-only file: '%s'", f);
	CHECK(rw == 0 && p != MAP_FAILED, "mprotect(PROT_WRITE) of it: %d", rw);
	CHECK(back[0] == 'a', "the file changed to '%c'", back[0]);
	CHECK(!strcmp(sf, "rd mr me ms ") && !strcmp(perm, "r--s"),
	      "shared read-only file: '%s' %s", sf, perm);
	CHECK(shared_rw == -EACCES, "mprotect(PROT_WRITE) of the shared one: %d", shared_rw);
	CHECK(shared_write == -EACCES, "a writable shared mapping: %d", shared_write);
	return 0;
}

static int sys_mseal(void *p, size_t len, unsigned long flags)
{
	return result(syscall(SYS_mseal, p, len, flags));
}

/* mseal's checks, and what a sealed mapping refuses (EPERM) and allows. */
static int mseal_refuses_changes(void)
{
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	char *ro = map_anon(PAGE, PROT_READ);
	munmap(p + 3 * PAGE, PAGE);
	int bad_flags = sys_mseal(p, PAGE, 1);
	int misaligned = sys_mseal(p + 1, PAGE, 0);
	int hole = sys_mseal(p, 4 * PAGE, 0);
	int unsealed = result(mprotect(p, PAGE, PROT_READ | PROT_WRITE));
	int empty = sys_mseal(p, 0, 0);
	int ok = sys_mseal(p + PAGE, PAGE, 0);
	char f[256];
	vma_flags(p + PAGE, f, sizeof(f), NULL);
	int mprotect_sealed = result(mprotect(p + PAGE, PAGE, PROT_READ));
	int mprotect_across = result(mprotect(p, 3 * PAGE, PROT_READ));
	char perm_before[5] = "", dummy[256];
	vma_flags(p, dummy, sizeof(dummy), perm_before);
	int munmap_sealed = result(munmap(p, 3 * PAGE));
	int mremap_sealed = result((long)mremap(p + PAGE, PAGE, 2 * PAGE, MREMAP_MAYMOVE));
	int fixed = result((long)mmap(p + PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				      -1, 0));
	int dontneed_rw = result(madvise(p + PAGE, PAGE, MADV_DONTNEED));
	int ro_sealed = sys_mseal(ro, PAGE, 0);
	int dontneed_ro = result(madvise(ro, PAGE, MADV_DONTNEED));
	int willneed_ro = result(madvise(ro, PAGE, MADV_WILLNEED));
	p[PAGE] = 1;
	CHECK(bad_flags == -EINVAL && misaligned == -EINVAL, "flags %d, misaligned %d", bad_flags,
	      misaligned);
	CHECK(hole == -ENOMEM && unsealed == 0, "over a hole: %d, and then unsealed: %d", hole,
	      unsealed);
	CHECK(empty == 0 && ok == 0, "empty %d, one page %d", empty, ok);
	CHECK(!strcmp(f, "rd wr mr mw me ac sl "), "sealed: '%s'", f);
	CHECK(mprotect_sealed == -EPERM, "mprotect: %d", mprotect_sealed);
	/* Linux changes the VMAs before the sealed one, then stops. */
	CHECK(mprotect_across == -EPERM && !strcmp(perm_before, "r--p"),
	      "mprotect across: %d, the page before is %s", mprotect_across, perm_before);
	CHECK(munmap_sealed == -EPERM && p[0] == 0, "munmap: %d", munmap_sealed);
	CHECK(mremap_sealed == -EPERM && fixed == -EPERM, "mremap %d, MAP_FIXED over it %d",
	      mremap_sealed, fixed);
	CHECK(dontneed_rw == 0, "MADV_DONTNEED of writable memory: %d", dontneed_rw);
	CHECK(ro_sealed == 0 && dontneed_ro == -EPERM && willneed_ro == 0,
	      "read-only: seal %d, MADV_DONTNEED %d, MADV_WILLNEED %d", ro_sealed, dontneed_ro,
	      willneed_ro);
	return 0;
}

/* In a child: exits with 0 if every step of MDWE behaved as on Linux. */
static int mdwe_child(void)
{
	if (prctl(PR_GET_MDWE, 0, 0, 0, 0) != 0)
		return 1;
	if (prctl(PR_SET_MDWE, PR_MDWE_NO_INHERIT, 0, 0, 0) != -1 || errno != EINVAL)
		return 2;
	if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 1) != -1 || errno != EINVAL)
		return 3;
	char *rw = map_anon(PAGE, PROT_READ | PROT_WRITE);
	if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0 ||
	    prctl(PR_GET_MDWE, 0, 0, 0, 0) != PR_MDWE_REFUSE_EXEC_GAIN)
		return 4;
	if (map_anon(PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != MAP_FAILED || errno != EACCES)
		return 5;
	char *rx = map_anon(PAGE, PROT_READ | PROT_EXEC);
	if (rx == MAP_FAILED || mprotect(rx, PAGE, PROT_READ) != 0 ||
	    mprotect(rx, PAGE, PROT_READ | PROT_EXEC) != -1 || errno != EACCES)
		return 6;
	if (mprotect(rw, PAGE, PROT_READ | PROT_EXEC) != -1 || errno != EACCES)
		return 7;
	if (prctl(PR_SET_MDWE, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 8;
	if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0)
		return 9;
	pid_t pid = fork();
	if (pid == 0)
		_exit(prctl(PR_GET_MDWE, 0, 0, 0, 0));
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PR_MDWE_REFUSE_EXEC_GAIN)
		return 10;
	return 0;
}

/* prctl(PR_SET_MDWE): no writable-and-executable memory, no gaining of
 * execute rights, for good, inherited at fork unless NO_INHERIT. */
static int mdwe_refuses_exec_gain(void)
{
	int status;
	pid_t pid = fork();
	if (pid == 0)
		_exit(mdwe_child());
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "step %d failed",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN | PR_MDWE_NO_INHERIT, 0, 0, 0))
			_exit(100);
		pid_t grandchild = fork();
		if (grandchild == 0)
			_exit(prctl(PR_GET_MDWE, 0, 0, 0, 0));
		int st;
		waitpid(grandchild, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 101);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "with NO_INHERIT, the child's PR_GET_MDWE: %d", WEXITSTATUS(status));
	return 0;
}

/* The number of /proc/self/maps lines meeting [start, end). */
static int maps_lines(char *start, char *end)
{
	static char maps[1 << 16];
	read_file("/proc/self/maps", maps, sizeof(maps));
	int n = 0;
	for (char *line = maps; *line;) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < (unsigned long)end &&
		    e > (unsigned long)start)
			n++;
		char *next = strchr(line, '\n');
		if (!next)
			break;
		line = next + 1;
	}
	return n;
}

/*
 * MREMAP_DONTUNMAP moves the pages and leaves the old mapping empty; a
 * mapping grows in place into a free page and joins the one after it.
 */
static int mremap_dontunmap_and_growing_in_place(void)
{
	char *p = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	p[0] = 1;
	p[PAGE] = 2;
	int unequal = result((long)mremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP));
	int nomove = result((long)mremap(p, 2 * PAGE, 2 * PAGE, MREMAP_DONTUNMAP));
	char *q = mremap(p, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	CHECK(q != MAP_FAILED, "MREMAP_DONTUNMAP: %s", strerror(errno));
	int moved = q[0] == 1 && q[PAGE] == 2;
	int emptied = p[0] == 0 && p[PAGE] == 0;
	munmap(p, 2 * PAGE);
	munmap(q, 2 * PAGE);

	char *r = map_anon(3 * PAGE, PROT_READ | PROT_WRITE);
	r[0] = 3;
	munmap(r + PAGE, PAGE);
	int before = maps_lines(r, r + 3 * PAGE);
	char *grown = mremap(r, PAGE, 2 * PAGE, 0);
	int after = maps_lines(r, r + 3 * PAGE);
	int kept = grown == r ? grown[0] : -1;
	munmap(r, 3 * PAGE);
	CHECK(unequal == -EINVAL && nomove == -EINVAL, "lengths differ %d, no MREMAP_MAYMOVE %d",
	      unequal, nomove);
	CHECK(moved && emptied, "moved %d, old range empty %d", moved, emptied);
	CHECK(grown == r && kept == 3, "growing in place gave %p for %p", (void *)grown,
	      (void *)r);
	CHECK(before == 2 && after == 1, "VMAs before %d, after %d", before, after);
	return 0;
}

/*
 * MAP_DROPPABLE memory may be dropped (MADV_PAGEOUT does it now) and is
 * empty in a forked child; MADV_WIPEONFORK gives the latter to private
 * anonymous memory only.
 */
static int droppable_and_wipeonfork(void)
{
	char *d = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);
	CHECK(d != MAP_FAILED, "MAP_DROPPABLE: %s", strerror(errno));
	memset(d, 'A', 2 * PAGE);
	int child_sees = -1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(d[0]);
	int status;
	waitpid(pid, &status, 0);
	child_sees = WEXITSTATUS(status);
	int pageout = result(madvise(d, 2 * PAGE, MADV_PAGEOUT));
	int dropped = d[0] == 0 && d[PAGE] == 0;
	int keep = result(madvise(d, 2 * PAGE, MADV_KEEPONFORK));
	munmap(d, 2 * PAGE);
	int locked = result((long)mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				       MAP_DROPPABLE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0));

	char *w = map_anon(PAGE, PROT_READ | PROT_WRITE);
	w[0] = 9;
	int wipe = result(madvise(w, PAGE, MADV_WIPEONFORK));
	pid = fork();
	if (pid == 0)
		_exit(w[0]);
	waitpid(pid, &status, 0);
	int wiped = WEXITSTATUS(status);
	int kept_here = w[0];
	char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int shared = result(madvise(s, PAGE, MADV_WIPEONFORK));
	munmap(w, PAGE);
	munmap(s, PAGE);
	CHECK(child_sees == 0, "a child read %d from droppable memory", child_sees);
	CHECK(pageout == 0 && dropped, "MADV_PAGEOUT %d, dropped %d", pageout, dropped);
	CHECK(keep == -EINVAL, "MADV_KEEPONFORK on droppable memory: %d", keep);
	CHECK(locked == -EINVAL, "MAP_DROPPABLE | MAP_LOCKED: %d", locked);
	CHECK(wipe == 0 && wiped == 0 && kept_here == 9, "MADV_WIPEONFORK %d: child %d, parent %d",
	      wipe, wiped, kept_here);
	CHECK(shared == -EINVAL, "MADV_WIPEONFORK on shared memory: %d", shared);
	return 0;
}

/* madvise acts on every VMA of the range and answers a hole with ENOMEM
 * at the end; the populate advice faults in, refusing what the VMA
 * forbids; MADV_REMOVE punches the file behind a shared mapping. */
static int madvise_holes_populate_and_remove(void)
{
	char *p = map_anon(3 * PAGE, PROT_READ | PROT_WRITE);
	p[0] = 1;
	p[2 * PAGE] = 2;
	munmap(p + PAGE, PAGE);
	int hole = result(madvise(p, 3 * PAGE, MADV_DONTNEED));
	int both = p[0] == 0 && p[2 * PAGE] == 0;
	munmap(p, 3 * PAGE);

	char *ro = map_anon(2 * PAGE, PROT_READ);
	int write_ro = result(madvise(ro, 2 * PAGE, MADV_POPULATE_WRITE));
	int read_ro = result(madvise(ro, 2 * PAGE, MADV_POPULATE_READ));
	unsigned char vec[2];
	mincore(ro, 2 * PAGE, vec);
	munmap(ro + PAGE, PAGE);
	int past = result(madvise(ro, 2 * PAGE, MADV_POPULATE_READ));
	munmap(ro, PAGE);

	char *s = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(s, 5, 2 * PAGE);
	int removed = result(madvise(s, PAGE, MADV_REMOVE));
	int zeroed = s[0] == 0 && s[PAGE] == 5;
	munmap(s, 2 * PAGE);
	char *a = map_anon(PAGE, PROT_READ | PROT_WRITE);
	int remove_anon = result(madvise(a, PAGE, MADV_REMOVE));
	munmap(a, PAGE);
	int bad = result(madvise(p, PAGE, 1000));
	CHECK(hole == -ENOMEM && both, "MADV_DONTNEED over a hole: %d, both sides dropped %d",
	      hole, both);
	CHECK(write_ro == -EINVAL && read_ro == 0 && (vec[0] & 1),
	      "populate read-only memory: write %d, read %d", write_ro, read_ro);
	CHECK(past == -ENOMEM, "populate past the mapping: %d", past);
	CHECK(removed == 0 && zeroed, "MADV_REMOVE %d, zeroed %d", removed, zeroed);
	CHECK(remove_anon == -EINVAL, "MADV_REMOVE of private memory: %d", remove_anon);
	CHECK(bad == -EINVAL, "unknown advice: %d", bad);
	return 0;
}

/*
 * mmap's flag checks in Linux's order: MAP_PRIVATE and MAP_SHARED ignore
 * flags they do not know, MAP_SHARED_VALIDATE refuses them; and a new
 * mapping joins an alike neighbour.
 */
static int mmap_flags_and_merging(void)
{
	int memfd = memfd_create("m", 0);
	ftruncate(memfd, PAGE);
	char *unknown = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | 0x200000, -1, 0);
	int ignored = unknown == MAP_FAILED ? -errno : 0;
	int validate = result((long)mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE | 0x200000,
					 memfd, 0));
	char *valid = mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE, memfd, 0);
	int validate_anon = result((long)mmap(NULL, PAGE, PROT_READ,
					      MAP_SHARED_VALIDATE | MAP_ANONYMOUS, -1, 0));
	int offset_first = result((long)mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, -1, 1));
	int no_fd = result((long)mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, -1, 0));
	int grows_file = result((long)mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_GROWSDOWN,
					   memfd, 0));
	int huge_len = result((long)map_anon((size_t)-1, PROT_READ));
	close(memfd);
	munmap(unknown, PAGE);
	munmap(valid, PAGE);

	char *p = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	munmap(p + PAGE, PAGE);
	char *q = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	int joined = maps_lines(p, p + 2 * PAGE);
	munmap(p, 2 * PAGE);
	CHECK(ignored == 0, "an unknown flag with MAP_PRIVATE: %d", ignored);
	CHECK(validate == -EOPNOTSUPP && valid != MAP_FAILED, "MAP_SHARED_VALIDATE: %d, plain %s",
	      validate, valid == MAP_FAILED ? strerror(errno) : "ok");
	CHECK(validate_anon == -EINVAL, "MAP_SHARED_VALIDATE of anonymous memory: %d",
	      validate_anon);
	CHECK(offset_first == -EINVAL && no_fd == -EBADF, "bad offset and fd %d, bad fd %d",
	      offset_first, no_fd);
	CHECK(grows_file == -EINVAL, "MAP_GROWSDOWN of a file: %d", grows_file);
	CHECK(huge_len == -ENOMEM, "a length that wraps: %d", huge_len);
	CHECK(q == p + PAGE && joined == 1, "MAP_FIXED_NOREPLACE %p for %p, VMAs %d", (void *)q,
	      (void *)(p + PAGE), joined);
	return 0;
}

/* mprotect changes VMA by VMA: a hole stops it after what came before. */
static int mprotect_stops_at_a_hole(void)
{
	char *p = map_anon(3 * PAGE, PROT_READ | PROT_WRITE);
	munmap(p + PAGE, PAGE);
	int hole = result(mprotect(p, 3 * PAGE, PROT_READ));
	char f[256], first[5] = "", last[5] = "";
	vma_flags(p, f, sizeof(f), first);
	vma_flags(p + 2 * PAGE, f, sizeof(f), last);
	int sem = result(mprotect(p, PAGE, PROT_READ | PROT_SEM));
	int bad = result(mprotect(p, PAGE, 0x40));
	int both = result(mprotect(p, PAGE, PROT_READ | PROT_GROWSDOWN | PROT_GROWSUP));
	int up = result(mprotect(p, PAGE, PROT_READ | PROT_GROWSUP));
	munmap(p, 3 * PAGE);
	CHECK(hole == -ENOMEM && !strcmp(first, "r--p") && !strcmp(last, "rw-p"),
	      "over a hole: %d, first %s, last %s", hole, first, last);
	CHECK(sem == 0 && bad == -EINVAL, "PROT_SEM %d, unknown bit %d", sem, bad);
	CHECK(both == -EINVAL && up == -EINVAL, "GROWSDOWN|GROWSUP %d, GROWSUP %d", both, up);
	return 0;
}

/* mincore's checks in Linux's order, and munmap's and msync's. */
static int mincore_munmap_msync_checks(void)
{
	unsigned char vec[4];
	char *p = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	p[0] = 1;
	int empty = result(mincore(NULL, 0, vec));
	int unmapped = result(mincore(NULL, PAGE, vec));
	int misaligned = result(mincore(p + 1, PAGE, vec));
	int too_long = result(mincore(p, -1, vec));
	int no_vec = result(mincore(p, PAGE, NULL));
	int ok = result(mincore(p, 2 * PAGE, vec));
	int in = vec[0] & 1, out = vec[1] & 1;
	munmap(p + PAGE, PAGE);
	memset(vec, 7, sizeof(vec));
	int hole = result(mincore(p, 2 * PAGE, vec));
	int stored = vec[0];
	int munmap_zero = result(munmap(p, 0));
	int munmap_high = result(munmap((void *)(1UL << 50), PAGE));
	int msync_hole = result(msync(p, 2 * PAGE, MS_SYNC));
	int msync_async = result(msync(p, 2 * PAGE, MS_ASYNC));
	mlock(p, PAGE);
	int invalidate = result(msync(p, PAGE, MS_INVALIDATE));
	munmap(p, PAGE);
	CHECK(empty == 0 && unmapped == -ENOMEM, "empty %d, unmapped %d", empty, unmapped);
	CHECK(misaligned == -EINVAL && too_long == -ENOMEM && no_vec == -EFAULT,
	      "misaligned %d, length -1 %d, NULL vector %d", misaligned, too_long, no_vec);
	CHECK(ok == 0 && in && !out, "mincore %d: %d %d", ok, in, out);
	CHECK(hole == -ENOMEM && stored == 1, "over a hole %d, the first page's byte %d", hole,
	      stored);
	CHECK(munmap_zero == -EINVAL && munmap_high == -EINVAL, "munmap: length 0 %d, high %d",
	      munmap_zero, munmap_high);
	CHECK(msync_hole == -ENOMEM && msync_async == -ENOMEM, "msync over a hole: %d %d",
	      msync_hole, msync_async);
	CHECK(invalidate == -EBUSY, "MS_INVALIDATE of locked memory: %d", invalidate);
	return 0;
}

/* F_SEAL_EXEC on an executable memfd seals writes too; MFD_EXEC and
 * MFD_NOEXEC_SEAL, and vm.memfd_noexec choosing between them. */
static int memfd_exec_seals_and_noexec_sysctl(void)
{
	int x = memfd_create("x", MFD_ALLOW_SEALING | MFD_EXEC);
	int x_seal = result(fcntl(x, F_ADD_SEALS, F_SEAL_EXEC));
	int x_seals = fcntl(x, F_GET_SEALS);
	int x_write = result(write(x, "a", 1));
	int n = memfd_create("n", MFD_ALLOW_SEALING);
	fchmod(n, 0644);
	fcntl(n, F_ADD_SEALS, F_SEAL_EXEC);
	int n_seals = fcntl(n, F_GET_SEALS);
	int chmod_x = result(fchmod(n, 0755));
	int noexec = memfd_create("ne", MFD_NOEXEC_SEAL);
	int ne_seals = fcntl(noexec, F_GET_SEALS);
	struct stat st;
	fstat(noexec, &st);
	int both = result(memfd_create("b", MFD_EXEC | MFD_NOEXEC_SEAL));
	/* A page size without MFD_HUGETLB is EINVAL everywhere; with it, a
	 * hugetlbfs file where Linux has hugetlbfs (Debian's does), ENOSYS
	 * where it has not (faultline, as Linux built without it). */
	int size_alone = result(memfd_create("s", 21u << 26));
	int huge = result(memfd_create("h", MFD_HUGETLB | (21u << 26)));
	if (huge >= 0)
		close(huge);
	close(x);
	close(n);
	close(noexec);

	char old[16];
	read_file("/proc/sys/vm/memfd_noexec", old, sizeof(old));
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY);
	int set1 = result(write(fd, "1", 1));
	int d1 = memfd_create("d1", 0);
	int d1_seals = fcntl(d1, F_GET_SEALS);
	int set2 = result(pwrite(fd, "2", 1, 0));
	int d2 = memfd_create("d2", 0);
	int d2_seals = fcntl(d2, F_GET_SEALS);
	int d2x = result(memfd_create("d2x", MFD_EXEC));
	int d2n = memfd_create("d2n", MFD_NOEXEC_SEAL);
	int set3 = result(pwrite(fd, "3", 1, 0));
	pwrite(fd, old, strlen(old), 0);
	close(fd);
	close(d1);
	close(d2);
	close(d2n);
	char min_addr[32];
	read_file("/proc/sys/vm/mmap_min_addr", min_addr, sizeof(min_addr));
	CHECK(x_seal == 0 && x_seals == 0x3e && x_write == -EPERM,
	      "F_SEAL_EXEC on mode 0777: %d, seals %#x, write %d", x_seal, x_seals, x_write);
	CHECK(n_seals == F_SEAL_EXEC && chmod_x == -EPERM, "on mode 0644: seals %#x, chmod %d",
	      n_seals, chmod_x);
	CHECK(ne_seals == F_SEAL_EXEC && (st.st_mode & 0777) == 0666,
	      "MFD_NOEXEC_SEAL: seals %#x, mode %o", ne_seals, st.st_mode & 0777);
	CHECK(both == -EINVAL, "MFD_EXEC | MFD_NOEXEC_SEAL: %d", both);
	CHECK(size_alone == -EINVAL && (huge >= 0 || huge == -ENOSYS),
	      "a huge page size alone: %d; with MFD_HUGETLB: %d", size_alone, huge);
	CHECK(!strcmp(old, "0\n"), "vm.memfd_noexec at first: '%s'", old);
	CHECK(set1 == 0 && d1 >= 0 && d1_seals == F_SEAL_EXEC, "at 1: %d, seals %#x", set1,
	      d1_seals);
	CHECK(set2 == 0 && d2 >= 0 && d2_seals == F_SEAL_EXEC && d2x == -EACCES && d2n >= 0,
	      "at 2: %d, no flag %d (seals %#x), MFD_EXEC %d, MFD_NOEXEC_SEAL %d", set2, d2,
	      d2_seals, d2x, d2n);
	CHECK(set3 == -EINVAL, "writing 3: %d", set3);
	CHECK(!strcmp(min_addr, "4096\n"), "vm.mmap_min_addr: '%s'", min_addr);
	return 0;
}

/* O_TMPFILE: an unnamed file in a tmpfs directory, written through. */
static int o_tmpfile_makes_an_unnamed_file(void)
{
	int fd = open("/dev/shm", O_TMPFILE | O_RDWR, 0600);
	CHECK(fd >= 0, "O_TMPFILE in /dev/shm: %s", strerror(errno));
	int wrote = write(fd, "abc", 3);
	char back[3] = "";
	pread(fd, back, 3, 0);
	struct stat st;
	fstat(fd, &st);
	close(fd);
	int rdonly = result(open("/dev/shm", O_TMPFILE | O_RDONLY, 0600));
	int creat = result(open("/dev/shm", O_TMPFILE | O_CREAT | O_RDWR, 0600));
	int notdir = result(open("/proc/self/maps", O_TMPFILE | O_RDWR, 0600));
	CHECK(wrote == 3 && !memcmp(back, "abc", 3), "wrote %d, read back %.3s", wrote, back);
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode);
	CHECK(rdonly == -EINVAL && creat == -EINVAL, "O_RDONLY %d, O_CREAT %d", rdonly, creat);
	CHECK(notdir == -ENOTDIR, "a file, not a directory: %d", notdir);
	return 0;
}

/* A /proc file read again from the start shows what is there now, as
 * seq_file does for a reader that rewinds (mremap_test's maps reader). */
static int proc_file_reread_after_rewind(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[256];
	fgets(line, sizeof(line), f);
	char *p = map_anon(PAGE, PROT_READ);
	char want[32];
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	rewind(f);
	int found = 0;
	while (fgets(line, sizeof(line), f))
		found |= !strncmp(line, want, strlen(want));
	fclose(f);
	munmap(p, PAGE);
	CHECK(found, "the new mapping %s is missing after rewind", want);
	return 0;
}

/* How many VMAs the process has: the lines of /proc/self/maps. */
static int vma_count(void)
{
	read_file("/proc/self/maps", smaps, sizeof(smaps));
	int n = 0;
	for (char *c = smaps; *c; c++)
		n += *c == '\n';
	return n;
}

/* vm.max_map_count: cuts (mprotect), a hole in the middle (munmap) and
 * mremap's move stop at it with ENOMEM; mmap may go one past. */
static int max_map_count_bounds_the_vmas(void)
{
	char def[32];
	read_file("/proc/sys/vm/max_map_count", def, sizeof(def));
	char *base = map_anon(64 * PAGE, PROT_NONE);
	/* Shared, so that no cut in `base` can merge with it. */
	char *big = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/sys/vm/max_map_count", O_WRONLY);
	CHECK(fd >= 0 && base != MAP_FAILED && big != MAP_FAILED, "setting up: %s",
	      strerror(errno));
	char value[32];
	int limit = vma_count() + 8;
	snprintf(value, sizeof(value), "%d", limit);
	CHECK(write(fd, value, strlen(value)) > 0, "writing max_map_count: %s", strerror(errno));
	/* Page by page, alternating protections: each cut makes one VMA. */
	int cuts = 0, cut_err = 0;
	for (int i = 0; i < 32 && !cut_err; i++) {
		if (mprotect(base + i * PAGE, PAGE, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE))
			cut_err = errno;
		else
			cuts++;
	}
	int at_limit = vma_count();
	int hole = result(munmap(big + 2 * PAGE, PAGE));
	int move = result((long)mremap(big, PAGE, 2 * PAGE, MREMAP_MAYMOVE));
	char *one = mmap(NULL, PAGE, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *two = mmap(NULL, PAGE, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int two_err = two == MAP_FAILED ? errno : 0;
	int restored = pwrite(fd, def, strlen(def), 0) > 0;
	close(fd);
	int then = result(munmap(big + 2 * PAGE, PAGE));
	munmap(base, 64 * PAGE);
	munmap(big, 8 * PAGE);
	if (one != MAP_FAILED)
		munmap(one, PAGE);
	if (two != MAP_FAILED)
		munmap(two, PAGE);
	CHECK(!strcmp(def, "65530\n"), "vm.max_map_count: '%s'", def);
	CHECK(cuts == 8 && cut_err == ENOMEM && at_limit == limit,
	      "%d cuts then %s, %d VMAs under a limit of %d", cuts, strerror(cut_err), at_limit,
	      limit);
	CHECK(hole == -ENOMEM && move == -ENOMEM, "at the limit: munmap hole %d, mremap %d", hole,
	      move);
	CHECK(one != MAP_FAILED && two == MAP_FAILED && two_err == ENOMEM,
	      "mmap at the limit: %p, then %p (%s)", one, two, strerror(two_err));
	CHECK(restored && then == 0, "after restoring: %d %d", restored, then);
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(smaps_vmflags_name_each_mapping),
		TEST(private_readonly_file_mapping_may_become_writable),
		TEST(mseal_refuses_changes),
		TEST(mdwe_refuses_exec_gain),
		TEST(mremap_dontunmap_and_growing_in_place),
		TEST(droppable_and_wipeonfork),
		TEST(madvise_holes_populate_and_remove),
		TEST(mmap_flags_and_merging),
		TEST(mprotect_stops_at_a_hole),
		TEST(mincore_munmap_msync_checks),
		TEST(memfd_exec_seals_and_noexec_sysctl),
		TEST(o_tmpfile_makes_an_unnamed_file),
		TEST(proc_file_reread_after_rewind),
		TEST(max_map_count_bounds_the_vmas),
	};
	return run_tests("vm-calls", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
