/*
 * The device files and scratch file systems a Linux program expects:
 * /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom with their
 * read and write semantics, /dev/tty and /dev/console as character
 * devices, and tmpfs on /tmp (mkstemp) and /dev/shm (glibc's shm_open).
 * A static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12 (whose init mounts devtmpfs and the two tmpfs, as
 * a distribution's does), and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"

static int is_char_device(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

static int null_zero_and_full_behave_as_on_linux(void)
{
	char buf[64];
	memset(buf, 'x', sizeof(buf));
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int zero = open("/dev/zero", O_RDWR | O_CLOEXEC);
	int full = open("/dev/full", O_RDWR | O_CLOEXEC);
	CHECK(null >= 0 && zero >= 0 && full >= 0, "open: %s", strerror(errno));
	ssize_t null_r = read(null, buf, sizeof(buf)), null_w = write(null, "abc", 3);
	ssize_t zero_r = read(zero, buf, sizeof(buf));
	int zeros = 1;
	for (size_t i = 0; i < sizeof(buf); i++)
		zeros &= buf[i] == 0;
	ssize_t zero_w = write(zero, "abc", 3);
	memset(buf, 'x', sizeof(buf));
	ssize_t full_r = read(full, buf, 8);
	ssize_t full_w = write(full, "abc", 3);
	int full_err = errno;
	close(null);
	close(zero);
	close(full);
	CHECK(null_r == 0 && null_w == 3, "/dev/null: read %zd, write %zd", null_r, null_w);
	CHECK(zero_r == sizeof(buf) && zeros && zero_w == 3, "/dev/zero: read %zd, zeros %d, "
	      "write %zd", zero_r, zeros, zero_w);
	CHECK(full_r == 8 && buf[0] == 0 && full_w == -1 && full_err == ENOSPC,
	      "/dev/full: read %zd, write %zd errno %d", full_r, full_w, full_err);
	CHECK(is_char_device("/dev/null") && is_char_device("/dev/zero") &&
		      is_char_device("/dev/full") && is_char_device("/dev/tty") &&
		      is_char_device("/dev/console"),
	      "not all character devices");
	return 0;
}

static int urandom_and_random_give_fresh_bytes(void)
{
	unsigned char a[64], b[64];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	int rfd = open("/dev/random", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && rfd >= 0, "open: %s", strerror(errno));
	ssize_t na = read(fd, a, sizeof(a)), nb = read(rfd, b, sizeof(b));
	close(fd);
	close(rfd);
	int nonzero = 0;
	for (size_t i = 0; i < sizeof(a); i++)
		nonzero |= a[i];
	CHECK(na == sizeof(a) && nb == sizeof(b), "reads %zd and %zd", na, nb);
	CHECK(nonzero && memcmp(a, b, sizeof(a)) != 0, "64 random bytes twice alike or zero");
	return 0;
}

static int tmp_and_dev_shm_are_writable_tmpfs(void)
{
	char path[] = "/tmp/devices-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	ssize_t w = write(fd, "temporary", 9);
	close(fd);
	unlink(path);
	int shm = shm_open("/devices-test", O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(shm >= 0, "shm_open: %s", strerror(errno));
	int sized = ftruncate(shm, 4096);
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	strcpy(p, "shared");
	char back[8] = { 0 };
	ssize_t r = pread(shm, back, 6, 0);
	munmap(p, 4096);
	close(shm);
	struct stat st;
	int there = stat("/dev/shm/devices-test", &st) == 0;
	int unlinked = shm_unlink("/devices-test");
	CHECK(w == 9, "write to /tmp: %zd", w);
	CHECK(sized == 0 && r == 6 && strcmp(back, "shared") == 0, "shm read back %zd \"%s\"", r,
	      back);
	CHECK(there && unlinked == 0, "/dev/shm/devices-test: %d, shm_unlink %d", there,
	      unlinked);
	return 0;
}

static int device_numbers_are_linuxs(void)
{
	static const struct {
		const char *path;
		unsigned major, minor;
	} want[] = {
		{ "/dev/null", 1, 3 },	 { "/dev/zero", 1, 5 },	  { "/dev/full", 1, 7 },
		{ "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 },
		{ "/dev/console", 5, 1 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct stat st;
		CHECK(stat(want[i].path, &st) == 0, "stat %s: %s", want[i].path, strerror(errno));
		CHECK(major(st.st_rdev) == want[i].major && minor(st.st_rdev) == want[i].minor,
		      "%s is %u:%u, want %u:%u", want[i].path, major(st.st_rdev), minor(st.st_rdev),
		      want[i].major, want[i].minor);
	}
	return 0;
}

static int a_node_made_by_mknod_opens_its_driver(void)
{
	const char *null = "/tmp/devices-null", *none = "/tmp/devices-none";
	unlink(null);
	unlink(none);
	CHECK(mknod(null, S_IFCHR | 0666, makedev(1, 3)) == 0 &&
		      mknod(none, S_IFCHR | 0666, makedev(1, 200)) == 0,
	      "mknod: %s", strerror(errno));
	struct stat st;
	int st_ok = stat(null, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
	char buf[4];
	int fd = open(null, O_RDWR | O_CLOEXEC);
	ssize_t w = fd >= 0 ? write(fd, "abc", 3) : -1;
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	errno = 0;
	int nofd = open(none, O_RDWR | O_CLOEXEC);
	int no_err = errno;
	if (nofd >= 0)
		close(nofd);
	unlink(null);
	unlink(none);
	CHECK(st_ok, "the node's stat");
	CHECK(fd >= 0 && w == 3 && r == 0, "a 1:3 node: open %d, write %zd, read %zd", fd, w, r);
	CHECK(nofd == -1 && no_err == ENXIO, "a 1:200 node: open %d errno %d, want ENXIO", nofd,
	      no_err);
	return 0;
}

static const struct test tests[] = {
	TEST(null_zero_and_full_behave_as_on_linux),
	TEST(urandom_and_random_give_fresh_bytes),
	TEST(tmp_and_dev_shm_are_writable_tmpfs),
	TEST(device_numbers_are_linuxs),
	TEST(a_node_made_by_mknod_opens_its_driver),
};

int main(void)
{
	return run_tests("devices", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
