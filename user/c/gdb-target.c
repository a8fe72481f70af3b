/*
 * The program make test's gdb stage (scripts/gdb-test.sh) stops in, to
 * check gdb's helpers (scripts/gdb/faultline/) against what the kernel
 * itself reports at the same moment. It maps 512K of shared anonymous
 * memory at MARK_SHMEM (64K shmem folios: hugepages-64kB/shmem_enabled is
 * set to always through sysfs) and a private page at MARK_ANON, then
 * prints blocks of what /proc says, each between `@@begin NAME` and
 * `@@end NAME`: maps and ptdump (its own), init-maps (/proc/1/maps) and
 * vmstat. Then it stores at a marker address, where gdb waits with
 * fl-break-fault:
 *
 *   @@pid N
 *   blocks, tagged "before"; the first store at MARK_SHMEM (gdb stop 1:
 *     the helpers must show what the blocks show), then one at
 *     MARK_SHMEM_LEAF1, a page the page cache keeps past its first 64;
 *   blocks, tagged "after"; the first store at MARK_ANON (gdb stop 2: the
 *     64K block at MARK_SHMEM is now mapped with the contiguous bit);
 *   @@done
 *
 * Nothing between reading /proc and the store changes the address space:
 * the blocks go out with write(2) from buffers touched beforehand. A
 * second thread (`@@busy TID`) makes system calls without pause meanwhile,
 * on the other CPU, each of them entering the exception vector gdb's
 * fault breakpoint sits on: gdb must stop for the store only, and
 * stepping must not be disturbed. It writes no memory once started, so
 * the address space stays as /proc showed it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "proc.h"

#define MARK_SHMEM ((char *)0x7e0000000000UL)
#define MARK_SHMEM_LEAF1 (MARK_SHMEM + (256 << 10))
#define MARK_ANON ((char *)0x7e0000100000UL)
#define KNOB THP "hugepages-64kB/shmem_enabled"

static const char *const files[][2] = {
	{ "maps", "/proc/self/maps" },
	{ "ptdump", "/proc/self/ptdump" },
	{ "init-maps", "/proc/1/maps" },
	{ "vmstat", "/proc/vmstat" },
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char text[NFILES][16384];
static char line[128];

static void die(const char *msg)
{
	fprintf(stderr, "gdb-target: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		die("write");
}

/* Reads every file first, then prints them all: the reads are the moment
 * gdb's helpers are compared with. */
static void report(const char *when)
{
	for (size_t i = 0; i < NFILES; i++)
		if (read_file(files[i][1], text[i], sizeof(text[i])) != 0)
			die(files[i][1]);
	for (size_t i = 0; i < NFILES; i++) {
		snprintf(line, sizeof(line), "@@begin %s %s\n", files[i][0], when);
		say(line);
		say(text[i]);
		snprintf(line, sizeof(line), "@@end %s %s\n", files[i][0], when);
		say(line);
	}
}

static volatile int busy_tid;

static void *busy(void *arg)
{
	(void)arg;
	busy_tid = syscall(SYS_gettid);
	for (;;)
		syscall(SYS_getppid);
	return NULL;
}

int main(void)
{
	char saved[32];
	if (knob_value(KNOB, saved, sizeof(saved)) != 0 || write_file(KNOB, "always") != 0)
		die(KNOB);
	if (mmap(MARK_SHMEM, 512 << 10, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MARK_SHMEM)
		die("mmap MARK_SHMEM");
	if (mmap(MARK_ANON, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MARK_ANON)
		die("mmap MARK_ANON");
	/* The buffers, and the stack below us, are mapped before anything is
	 * read: snprintf and write must not fault once the reports start. */
	memset(text, 1, sizeof(text));
	pthread_t thread;
	if (pthread_create(&thread, NULL, busy, NULL) != 0)
		die("pthread_create");
	while (!busy_tid)
		;
	snprintf(line, sizeof(line), "@@pid %d\n@@busy %d\n", getpid(), busy_tid);
	say(line);

	report("before");
	*(volatile char *)MARK_SHMEM = 1;
	*(volatile char *)MARK_SHMEM_LEAF1 = 1;
	report("after");
	*(volatile char *)MARK_ANON = 1;

	if (write_file(KNOB, saved) != 0)
		die(KNOB);
	say("@@done\n");
	exit(0); /* and the busy thread with it */
}
