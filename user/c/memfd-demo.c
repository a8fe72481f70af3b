/*
 * A static glibc program, built with aarch64-linux-gnu-gcc -static, that
 * runs unchanged on faultline and on Linux: memfd_create, ftruncate, mmap,
 * madvise, clock_gettime and printf. make test runs it on both (Linux under
 * qemu-aarch64) and checks the outputs are the same.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);

	int fd = memfd_create("demo", 0);
	if (fd < 0 || ftruncate(fd, 1 << 20) != 0) {
		perror("memfd");
		return 1;
	}
	char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int i = 0; i < 256; i++)
		p[i * 4096] = (char)i;
	strcpy(p + 100, "hello from a shared mapping");

	/* Dropping the pages of a shared file mapping keeps the file's data. */
	if (madvise(p, 1 << 20, MADV_DONTNEED) != 0) {
		perror("madvise");
		return 1;
	}
	long sum = 0;
	for (int i = 0; i < 256; i++)
		sum += (unsigned char)p[i * 4096];
	char buf[64] = { 0 };
	if (pread(fd, buf, sizeof(buf) - 1, 100) < 0) {
		perror("pread");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int forward = t1.tv_sec > t0.tv_sec || (t1.tv_sec == t0.tv_sec && t1.tv_nsec >= t0.tv_nsec);

	printf("sum of first bytes: %ld\n", sum);
	printf("read back: %s\n", buf);
	printf("clock moved forward: %s\n", forward ? "yes" : "no");
	printf("%.3f is pi, printed with glibc's printf\n", 3.14159);
	munmap(p, 1 << 20);
	close(fd);
	return 0;
}
