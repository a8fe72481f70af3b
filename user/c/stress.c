/*
 * A memory stress with a shadow model: workers (threads of this process,
 * and processes of their own) each own a memfd and a stretch of address
 * space, and at random map parts of the memfd shared and anonymous memory
 * privately, unmap, mprotect, madvise(MADV_DONTNEED), mremap, write and
 * read through the mappings and with pwrite/pread, ftruncate and punch
 * holes (fallocate), and let a child process write into the memfd and
 * die. Each worker keeps in its own memory what every byte must be (the
 * shadow) and checks each read against it: shared data survives unmaps,
 * DONTNEED and the death of the process that wrote it; private memory
 * reads as zeros after DONTNEED; a store to a PROT_READ page is SIGSEGV;
 * a touch past the end of the file in a shared mapping is SIGBUS, or
 * reads zeros where a large folio reaching past the end is mapped whole
 * (Linux's shmem exception); nothing is written past the end, whose
 * fate differs between kernels only in what POSIX leaves open.
 *
 * The run repeats under each setting of faultline's fault-path switches
 * (per-VMA locks, multi-page finish_fault, contpte, fault-around), of
 * shmem_enabled, and of the anonymous THP knob `enabled` (with it at
 * `always`, a quarter of the anonymous mappings start on a 2M boundary
 * and reach past the next, so their first touch maps a 2M folio with one
 * PMD, which the other operations then take apart), set through sysfs by
 * the program; on Linux, which has only the last three, the others are
 * skipped. The rounds run in a child;
 * once it has exited, free memory must be back where it was.
 *
 *   stress [seconds=N (each setting)] [workers=N] [seed=N] [only=SETTING]
 *
 * Prints `stress: SETTING ... ok|FAILED` lines, then `N passed, M failed`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

#define PAGE 4096UL
#define FILE_MAX (2UL << 20)  /* a worker's memfd grows up to 2M */
#define AREA (64UL << 20)     /* a worker's stretch of address space */
#define SLOTS 8               /* mappings a worker keeps at once */
#define SLOT_SPAN (AREA / SLOTS)
#define THP_SIZE (2UL << 20)  /* a PMD-mapped anonymous folio; fits a slot */
#define MAX_WORKERS 8

struct slot {
	char *addr;
	size_t len;
	int shared;    /* a view of the memfd at `off`; else anonymous */
	size_t off;
	int writable;
	unsigned char *anon; /* the shadow of an anonymous mapping */
};

struct worker {
	int id;
	uint64_t rng;
	int fd;
	size_t size;          /* the memfd's size */
	unsigned char *file;  /* the shadow of the memfd, FILE_MAX bytes */
	char *base;           /* its stretch of address space */
	struct slot slots[SLOTS];
	long ops, errors;
	char error[200];
};

/* The anonymous THP knob is `always` in this setting: map some anonymous
 * slots for PMD-mapped 2M folios. */
static int huge_anon;

static __thread sigjmp_buf *fault_jmp;
static __thread volatile int fault_sig;

static void on_fault(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	fault_sig = sig;
	if (fault_jmp)
		siglongjmp(*fault_jmp, 1);
	/* Not a touch of ours: say where, then die of it. */
	char msg[96];
	int n = snprintf(msg, sizeof(msg), "stress: signal %d at %p, code %d, outside a checked touch\n", sig,
			 info->si_addr, info->si_code);
	if (write(2, msg, n) < 0)
		_exit(3);
	static char maps[8192];
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t got = fd >= 0 ? read(fd, maps, sizeof(maps)) : 0;
	if (got > 0 && write(2, maps, got) < 0)
		_exit(3);
	signal(sig, SIG_DFL);
	raise(sig);
}

static uint64_t rnd(struct worker *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(struct worker *w, size_t n)
{
	return n ? rnd(w) % n : 0;
}

static void fail(struct worker *w, const char *fmt, ...)
{
	if (!w->errors++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->error, sizeof(w->error), fmt, ap);
		va_end(ap);
	}
}

/* Touches `p` (a write of `value` if `write`); returns the signal it took,
 * or 0, and the byte read in *got. */
static int touch(char *p, int write, unsigned char value, unsigned char *got)
{
	sigjmp_buf jmp;
	fault_sig = 0;
	if (sigsetjmp(jmp, 1)) {
		fault_jmp = NULL;
		return fault_sig;
	}
	fault_jmp = &jmp;
	if (write)
		*(volatile char *)p = value;
	else
		*got = *(volatile unsigned char *)p;
	fault_jmp = NULL;
	return 0;
}

/* Puts back the PROT_NONE reservation over `len` bytes at `at`: a hole
 * in the worker's stretch would let malloc's own mmaps land there, under a
 * later MAP_FIXED. */
static void reserve(char *at, size_t len)
{
	mmap(at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

static void unmap_slot(struct worker *w, struct slot *s)
{
	if (!s->addr)
		return;
	if (munmap(s->addr, s->len) != 0)
		fail(w, "munmap: %s", strerror(errno));
	reserve(s->addr, s->len);
	free(s->anon);
	memset(s, 0, sizeof(*s));
}

static void map_slot(struct worker *w, int i)
{
	struct slot *s = &w->slots[i];
	unmap_slot(w, s);
	char *at = w->base + i * SLOT_SPAN;
	/* 64K-aligned starts and lengths now and then, for large folios and
	 * contiguous blocks. */
	size_t len = below(w, 2) ? PAGE * (1 + below(w, 64)) : (64 << 10) * (1 + below(w, 4));
	s->shared = below(w, 2);
	s->writable = below(w, 4) != 0;
	int prot = PROT_READ | (s->writable ? PROT_WRITE : 0);
	if (s->shared) {
		s->off = below(w, 2) ? PAGE * below(w, FILE_MAX / PAGE) : (64 << 10) * below(w, 32);
		if (s->off + len > FILE_MAX)
			len = FILE_MAX - s->off;
		if (!len)
			return;
		if (mmap(at, len, prot, MAP_SHARED | MAP_FIXED, w->fd, s->off) != at) {
			fail(w, "mmap shared: %s", strerror(errno));
			return;
		}
	} else {
		if (huge_anon && below(w, 4) == 0) {
			/* From a 2M boundary, 2M and up to 64 pages more. */
			at = (char *)(((uintptr_t)at + THP_SIZE - 1) & ~(THP_SIZE - 1));
			len = THP_SIZE + PAGE * below(w, 64);
		}
		if (mmap(at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at) {
			fail(w, "mmap anon: %s", strerror(errno));
			return;
		}
		s->anon = calloc(1, len);
	}
	s->addr = at;
	s->len = len;
}

/* A read past the end of the file: SIGBUS, or zeros. */
#define SIGBUS_OR_ZERO -1

/* What byte `i` of a slot must hold, and whether touching it must fault. */
static int expected(struct worker *w, struct slot *s, size_t i, unsigned char *want)
{
	if (!s->shared) {
		*want = s->anon[i];
		return 0;
	}
	size_t at = s->off + i;
	*want = at < w->size ? w->file[at] : 0;
	return at >= (w->size + PAGE - 1) / PAGE * PAGE ? SIGBUS_OR_ZERO : 0;
}

static void check_slot_byte(struct worker *w, struct slot *s, size_t i)
{
	unsigned char want = 0, got = 0;
	int sig_want = expected(w, s, i, &want);
	int sig = touch(s->addr + i, 0, 0, &got);
	if (sig_want == SIGBUS_OR_ZERO)
		sig_want = sig == SIGBUS ? SIGBUS : 0;
	if (sig != sig_want)
		fail(w, "read at +%#zx of a %s slot: signal %d, want %d", i, s->shared ? "shared" : "anon",
		     sig, sig_want);
	else if (!sig && got != want)
		fail(w, "read at +%#zx of a %s slot (file %#zx): %#x, want %#x", i,
		     s->shared ? "shared" : "anon", s->shared ? s->off + i : 0, got, want);
}

static void write_slot(struct worker *w, struct slot *s)
{
	size_t i = below(w, s->len), n = 1 + below(w, 3 * PAGE);
	unsigned char v = rnd(w);
	for (size_t k = i; k < s->len && k < i + n; k += 1 + below(w, 512)) {
		if (s->shared && s->off + k >= w->size)
			return; /* not past the end (see the top) */
		int sig_want = s->writable ? 0 : SIGSEGV;
		int sig = touch(s->addr + k, 1, v, NULL);
		if (sig != sig_want) {
			fail(w, "write at +%#zx of a %s %s slot: signal %d, want %d", k,
			     s->writable ? "writable" : "read-only", s->shared ? "shared" : "anon", sig, sig_want);
			return;
		}
		if (sig)
			return;
		if (s->shared)
			w->file[s->off + k] = v;
		else
			s->anon[k] = v;
	}
}

static void step(struct worker *w)
{
	struct slot *s = &w->slots[below(w, SLOTS)];
	int i = s - w->slots;
	w->ops++;
	switch (below(w, 14)) {
	case 0:
	case 1:
		map_slot(w, i);
		break;
	case 2:
		unmap_slot(w, s);
		break;
	case 3: /* mprotect, and the shadow's idea of writability */
		if (s->addr) {
			s->writable = !s->writable;
			if (mprotect(s->addr, s->len, PROT_READ | (s->writable ? PROT_WRITE : 0)) != 0)
				fail(w, "mprotect: %s", strerror(errno));
		}
		break;
	case 4: /* DONTNEED: shared data stays, private memory reads zeros */
		if (s->addr) {
			size_t from = below(w, s->len / PAGE) * PAGE, len = PAGE * (1 + below(w, 16));
			if (from + len > s->len)
				len = s->len - from;
			if (madvise(s->addr + from, len, MADV_DONTNEED) != 0)
				fail(w, "madvise: %s", strerror(errno));
			else if (!s->shared)
				memset(s->anon + from, 0, len);
		}
		break;
	case 5: /* mremap an anonymous slot to the next free slot, or shrink */
		if (s->addr && !s->shared) {
			int to = (i + 1) % SLOTS;
			size_t new_len = PAGE * (1 + below(w, 64));
			if (w->slots[to].addr)
				unmap_slot(w, &w->slots[to]);
			char *at = w->base + to * SLOT_SPAN;
			void *r = mremap(s->addr, s->len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, at);
			if (r != at) {
				fail(w, "mremap: %s", strerror(errno));
				break;
			}
			reserve(s->addr, s->len); /* mremap left a hole there */
			unsigned char *anon = calloc(1, new_len);
			memcpy(anon, s->anon, new_len < s->len ? new_len : s->len);
			free(s->anon);
			w->slots[to] = (struct slot){ at, new_len, 0, 0, s->writable, anon };
			memset(s, 0, sizeof(*s));
		}
		break;
	case 6:
	case 7:
		if (s->addr)
			write_slot(w, s);
		break;
	case 8:
	case 9:
		if (s->addr)
			for (int k = 0; k < 8; k++)
				check_slot_byte(w, s, below(w, s->len));
		break;
	case 10: { /* pwrite, then pread back */
		size_t off = below(w, FILE_MAX - 8192), n = 1 + below(w, 8192);
		unsigned char buf[8192];
		for (size_t k = 0; k < n; k++)
			buf[k] = rnd(w);
		if (pwrite(w->fd, buf, n, off) != (ssize_t)n) {
			fail(w, "pwrite: %s", strerror(errno));
			break;
		}
		if (off > w->size)
			memset(w->file + w->size, 0, off - w->size);
		memcpy(w->file + off, buf, n);
		if (off + n > w->size)
			w->size = off + n;
		off = below(w, w->size);
		n = 1 + below(w, 8192);
		ssize_t got = pread(w->fd, buf, n, off);
		size_t want = off + n <= w->size ? n : w->size - off;
		if (got != (ssize_t)want || memcmp(buf, w->file + off, want))
			fail(w, "pread %zu at %#zx: %zd bytes, or not the data", n, off, got);
		break;
	}
	case 11: { /* ftruncate: the tail goes, or zeros come */
		size_t size = below(w, 2) ? below(w, FILE_MAX) : FILE_MAX;
		if (ftruncate(w->fd, size) != 0) {
			fail(w, "ftruncate: %s", strerror(errno));
			break;
		}
		if (size > w->size)
			memset(w->file + w->size, 0, size - w->size);
		w->size = size;
		break;
	}
	case 12: { /* punch a hole: zeros, same size */
		size_t off = below(w, FILE_MAX), len = 1 + below(w, 256 << 10);
		if (fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) != 0) {
			fail(w, "punch: %s", strerror(errno));
			break;
		}
		if (off < w->size)
			memset(w->file + off, 0, (off + len < w->size ? off + len : w->size) - off);
		break;
	}
	case 13: { /* a child writes into the memfd through its own mapping and dies */
		size_t off = below(w, FILE_MAX - PAGE), n = 1 + below(w, PAGE);
		unsigned char v = rnd(w);
		if (off + n > w->size)
			break;
		pid_t c = fork();
		if (c == 0) {
			char *p = mmap(NULL, FILE_MAX, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
			if (p == MAP_FAILED)
				_exit(1);
			memset(p + off, v, n);
			raise(SIGKILL); /* dies, not exits: the data must stay */
		}
		int status;
		if (c < 0 || waitpid(c, &status, 0) != c || !WIFSIGNALED(status)) {
			fail(w, "the writing child: %s", strerror(errno));
			break;
		}
		memset(w->file + off, v, n);
		break;
	}
	}
}

/* Everything the worker still maps, checked a last time. */
static void check_all(struct worker *w)
{
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &w->slots[i];
		for (size_t k = 0; s->addr && k < s->len; k += 1 + below(w, 300))
			check_slot_byte(w, s, k);
		unmap_slot(w, s);
	}
	unsigned char buf[4096];
	for (size_t off = 0; off < w->size; off += sizeof(buf)) {
		size_t n = w->size - off < sizeof(buf) ? w->size - off : sizeof(buf);
		if (pread(w->fd, buf, n, off) != (ssize_t)n || memcmp(buf, w->file + off, n)) {
			fail(w, "the memfd differs near %#zx at the end", off);
			break;
		}
	}
}

static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	w->fd = memfd_create("stress", 0);
	w->file = calloc(1, FILE_MAX);
	w->size = 0;
	if (w->fd < 0 || !w->file) {
		fail(w, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	while (now() < deadline && !w->errors)
		for (int k = 0; k < 64; k++)
			step(w);
	check_all(w);
	close(w->fd);
	free(w->file);
	return NULL;
}

/* One round with every worker: half threads of this process (one address
 * space, each its own stretch), half processes. Returns the errors. */
static long round_of(int workers, double seconds, uint64_t seed, char *report, size_t len)
{
	static struct worker ws[MAX_WORKERS];
	char *area = mmap(NULL, AREA * MAX_WORKERS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED) {
		snprintf(report, len, "no address space: %s", strerror(errno));
		return 1;
	}
	struct worker *shared = mmap(NULL, sizeof(ws), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	deadline = now() + seconds;
	pthread_t threads[MAX_WORKERS];
	pid_t procs[MAX_WORKERS];
	for (int i = 0; i < workers; i++) {
		struct worker *w = &shared[i];
		*w = (struct worker){ .id = i, .rng = seed * 7919 + i, .base = area + i * AREA };
		if (i % 2 == 0) {
			pthread_create(&threads[i], NULL, work, w);
		} else {
			procs[i] = fork();
			if (procs[i] == 0) {
				work(w);
				_exit(0);
			}
		}
	}
	long errors = 0, ops = 0;
	report[0] = 0;
	for (int i = 0; i < workers; i++) {
		struct worker *w = &shared[i];
		int status = 0;
		if (i % 2 == 0)
			pthread_join(threads[i], NULL);
		else if (waitpid(procs[i], &status, 0) != procs[i] || !WIFEXITED(status) || WEXITSTATUS(status))
			fail(w, "worker process ended with status %#x", status);
		ops += w->ops;
		errors += w->errors;
		if (w->errors && !report[0])
			snprintf(report, len, "worker %d (%s): %s", i, i % 2 ? "process" : "thread", w->error);
	}
	if (!errors)
		snprintf(report, len, "%ld operations, %d workers", ops, workers);
	munmap(shared, sizeof(ws));
	munmap(area, AREA * MAX_WORKERS);
	return errors;
}

static const char *const switch_files[] = {
	"/sys/kernel/mm/vma_lock/enabled",
	"/sys/kernel/mm/finish_fault/multi_page",
	"/sys/kernel/mm/contpte/enabled",
};
#define FAULT_AROUND "/sys/kernel/debug/fault_around_bytes"

int main(int argc, char **argv)
{
	long seconds = 5, workers = 4, seed = 1;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "only=", 5))
			only = argv[i] + 5;
		sscanf(argv[i], "seconds=%ld", &seconds);
		sscanf(argv[i], "workers=%ld", &workers);
		sscanf(argv[i], "seed=%ld", &seed);
	}
	if (workers < 1 || workers > MAX_WORKERS)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_NODEFER | SA_SIGINFO };
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	char saved_shmem[32], saved_anon[32];
	knob_value(THP "shmem_enabled", saved_shmem, sizeof(saved_shmem));
	knob_value(THP "enabled", saved_anon, sizeof(saved_anon));
	int faultline = access(switch_files[0], F_OK) == 0;
	/* The settings: everything on; each faultline switch off alone;
	 * fault-around off; all with large shmem folios; and with PMD-mapped
	 * anonymous ones. */
	struct {
		const char *name;
		int off;
		const char *around, *shmem, *anon;
	} settings[] = {
		{ "all_switches_on", -1, "65536", "never", "never" },
		{ "per_vma_locks_off", 0, "65536", "never", "never" },
		{ "multi_page_finish_fault_off", 1, "65536", "never", "never" },
		{ "contpte_off", 2, "65536", "always", "never" },
		{ "fault_around_off", -1, "4096", "never", "never" },
		{ "large_shmem_folios", -1, "65536", "always", "never" },
		{ "large_anon_folios", -1, "65536", "never", "always" },
	};
	int n = sizeof(settings) / sizeof(settings[0]);
	long free_before = meminfo_kb("MemFree");
	int fds[2];
	if (pipe(fds) != 0)
		return 2;
	pid_t rounds = fork();
	if (rounds == 0) {
		int passed = 0, failed = 0;
		for (int k = 0; k < n; k++) {
			if ((settings[k].off >= 0 && !faultline) || (only && strcmp(only, settings[k].name)))
				continue;
			for (int s = 0; s < 3 && faultline; s++)
				write_file(switch_files[s], s == settings[k].off ? "0" : "1");
			write_file(FAULT_AROUND, settings[k].around);
			write_file(THP "shmem_enabled", settings[k].shmem);
			write_file(THP "enabled", settings[k].anon);
			huge_anon = strcmp(settings[k].anon, "always") == 0;
			char report[300];
			long errors = round_of(workers, seconds, seed + k, report, sizeof(report));
			printf("stress: %s ... %s: %s\n", settings[k].name, errors ? "FAILED" : "ok", report);
			errors ? failed++ : passed++;
		}
		int counts[2] = { passed, failed };
		_exit(write(fds[1], counts, sizeof(counts)) != sizeof(counts));
	}
	close(fds[1]);
	int counts[2] = { 0, 1 };
	if (read(fds[0], counts, sizeof(counts)) != sizeof(counts))
		printf("stress: the rounds ended early\n");
	waitpid(rounds, NULL, 0);
	int passed = counts[0], failed = counts[1];
	for (int s = 0; s < 3 && faultline; s++)
		write_file(switch_files[s], "1");
	write_file(FAULT_AROUND, "65536");
	write_file(THP "shmem_enabled", saved_shmem);
	write_file(THP "enabled", saved_anon);

	long free_after = meminfo_kb("MemFree");
	for (int i = 0; i < 30 && free_after < free_before - 512; i++) {
		usleep(100000);
		free_after = meminfo_kb("MemFree");
	}
	int back = free_after >= free_before - 512;
	printf("stress: memory_comes_back ... %s: MemFree %ld kB before, %ld kB after\n", back ? "ok" : "FAILED",
	       free_before, free_after);
	back ? passed++ : failed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
