/*
 * Known page-table layouts for the TLB model (tools/tlb, `./qemu-run.sh
 * --tlb`): scripts/test-tlb.sh boots this under QEMU 10 with the plugin and
 * checks the misses it reports against what each layout must cost.
 *
 * Each layout is 16 pages:
 *   1  16 scattered 4K pages (one per 64K block, so no run can be
 *      contiguous)
 *   2  one 64K shmem folio mapped by 16 PTEs with the contiguous bit,
 *      each page
 *   3  a 2M shmem folio mapped by one PMD block, 16 pages 128K apart
 *      (a contiguous-bit run would cover only one of them)
 *   4  layout 2 with /sys/kernel/mm/contpte/enabled at 0: 16 plain PTEs
 * and for each: prefault, empty the model's TLBs, start counting, 4 rounds
 * of one load per page in order, report with the layout's number. The
 * loop's addresses live in registers, so the window's only data accesses
 * are those 64 loads. Then
 *   5  layout 2, one round, MADV_DONTNEED (the kernel's TLBI must take
 *      the block's entry out of the model), one round again: 2 misses.
 *   6  one page of code run at one address, unmapped, and run again at
 *      another: QEMU runs the same translation there (it translates
 *      position-independently), and the model must see the fetch at the
 *      new address, where a walk finds it (the log's faulted=0).
 *
 * The windows are tlb-mark.h's.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "proc.h"
#include "tlb-mark.h"

#define PAGE 4096UL
#define CONT (16 * PAGE)
#define PMD (1UL << 21)

static void die(const char *msg)
{
	fprintf(stderr, "tlb-layouts: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void one_round(char *base, unsigned long stride)
{
	for (int i = 0; i < 16; i++)
		(void)((volatile char *)base)[i * stride];
}

static void prefault(char *base, unsigned long stride)
{
	for (int i = 0; i < 16; i++)
		((volatile char *)base)[i * stride] = 1;
	tlb_mark(TLB_FLUSH, 0);
}

/* Prefaults, then counts 4 rounds over the 16 pages at BASE + i * STRIDE. */
static void sweep(int label, char *base, unsigned long stride)
{
	prefault(base, stride);
	tlb_mark(TLB_BEGIN, 0);
	for (int r = 0; r < 4; r++)
		one_round(base, stride);
	tlb_mark(TLB_REPORT, label);
	printf("layout %d at %p, stride %lu\n", label, base, stride);
}

/* SIZE bytes of address space aligned to SIZE, PROT_NONE. */
static char *reserve(unsigned long size)
{
	char *r = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		die("mmap reservation");
	return (char *)(((unsigned long)r + size - 1) & ~(size - 1));
}

/* A SIZE-byte shmem file mapped at a SIZE-aligned address. */
static char *shmem(unsigned long size)
{
	int fd = memfd_create("tlb-layout", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, size) != 0)
		die("memfd");
	char *p = mmap(reserve(size), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap shmem");
	close(fd);
	return p;
}

int main(void)
{
	char *scattered = reserve(16 * CONT);
	for (int i = 0; i < 16; i++)
		if (mmap(scattered + i * CONT, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			die("mmap a scattered page");
	sweep(1, scattered, CONT);

	if (write_file(THP "hugepages-64kB/shmem_enabled", "always") != 0)
		die("hugepages-64kB/shmem_enabled");
	sweep(2, shmem(CONT), PAGE);

	if (write_file(THP "hugepages-2048kB/shmem_enabled", "always") != 0)
		die("hugepages-2048kB/shmem_enabled");
	sweep(3, shmem(PMD), PMD / 16);
	write_file(THP "hugepages-2048kB/shmem_enabled", "never");

	if (write_file("/sys/kernel/mm/contpte/enabled", "0") != 0)
		die("contpte/enabled");
	sweep(4, shmem(CONT), PAGE);
	write_file("/sys/kernel/mm/contpte/enabled", "1");

	char *block = shmem(CONT);
	prefault(block, PAGE);
	tlb_mark(TLB_BEGIN, 0);
	one_round(block, PAGE);
	if (madvise(block, CONT, MADV_DONTNEED) != 0)
		die("madvise");
	one_round(block, PAGE);
	tlb_mark(TLB_REPORT, 5);
	printf("layout 5 at %p: a round, MADV_DONTNEED, a round\n", block);

	int fd = memfd_create("tlb-code", MFD_CLOEXEC);
	static const unsigned ret_insn = 0xd65f03c0;
	if (fd < 0 || pwrite(fd, &ret_insn, 4, 0) != 4 || ftruncate(fd, PAGE) != 0)
		die("memfd for code");
	void *first = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	void *second = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (first == MAP_FAILED || second == MAP_FAILED)
		die("mmap code");
	((void (*)(void))first)();
	munmap(first, PAGE);
	tlb_mark(TLB_FLUSH, 0);
	tlb_mark(TLB_BEGIN, 0);
	((void (*)(void))second)();
	tlb_mark(TLB_REPORT, 6);
	printf("layout 6: code at %p, then at %p\n", first, second);
	return 0;
}
