/*
 * access(2)/faccessat(2) and mount(2)/umount2(2) of a tmpfs, through
 * glibc, as programs use them. A static glibc program: make test runs it on
 * faultline, make test-linux on Debian's Linux 6.12 (as root, like
 * faultline's processes), and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

/* -1 and errno, or 0, as one number: 0 or -errno. */
static int result(int rc)
{
	return rc == 0 ? 0 : -errno;
}

static int make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

static int access_follows_root_permissions(void)
{
	mkdir("/tmp", 01777);
	CHECK(make_file("/tmp/access-plain", 0644) == 0, "create: %s", strerror(errno));
	CHECK(make_file("/tmp/access-exec", 0755) == 0, "create: %s", strerror(errno));
	int dir_x = result(access("/", X_OK));
	int proc_r = result(access("/proc/self/smaps", R_OK));
	int plain_rw = result(access("/tmp/access-plain", R_OK | W_OK));
	int plain_x = result(access("/tmp/access-plain", X_OK));
	int exec_x = result(faccessat(AT_FDCWD, "/tmp/access-exec", X_OK, AT_EACCESS));
	int missing = result(access("/tmp/no-such-file", F_OK));
	int bad_mode = result(access("/", 8));
	unlink("/tmp/access-plain");
	unlink("/tmp/access-exec");
	CHECK(dir_x == 0 && proc_r == 0 && plain_rw == 0, "allowed: %d %d %d", dir_x, proc_r,
	      plain_rw);
	CHECK(plain_x == -EACCES, "X_OK on a 0644 file: %d, want %d", plain_x, -EACCES);
	CHECK(exec_x == 0, "X_OK on a 0755 file: %d", exec_x);
	CHECK(missing == -ENOENT, "a missing file: %d, want %d", missing, -ENOENT);
	CHECK(bad_mode == -EINVAL, "mode 8: %d, want %d", bad_mode, -EINVAL);
	return 0;
}

static int a_tmpfs_mount_covers_a_directory_until_umount(void)
{
	const char *dir = "/tmp/mount-here";
	mkdir("/tmp", 01777);
	CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir: %s", strerror(errno));
	CHECK(make_file("/tmp/mount-here/under", 0644) == 0, "create: %s", strerror(errno));
	CHECK(mount("tmpfs", dir, "tmpfs", 0, "size=1M") == 0, "mount: %s", strerror(errno));
	int hidden = result(access("/tmp/mount-here/under", F_OK));
	int made = make_file("/tmp/mount-here/over", 0644);
	mkdir("/tmp/plain-dir", 0755);
	int not_a_mount = result(umount2("/tmp/plain-dir", 0));
	rmdir("/tmp/plain-dir");
	int unmounted = result(umount2(dir, 0));
	int back = result(access("/tmp/mount-here/under", F_OK));
	int gone = result(access("/tmp/mount-here/over", F_OK));
	int twice = result(umount2(dir, 0));
	int bad_type = result(mount("none", dir, "nosuchfs", 0, NULL));
	int no_dir = result(mount("tmpfs", "/tmp/no-such-dir", "tmpfs", 0, NULL));
	int bad_size = result(mount("tmpfs", dir, "tmpfs", 0, "size=lots"));
	unlink("/tmp/mount-here/under");
	rmdir(dir);
	CHECK(hidden == -ENOENT, "the covered file: %d, want %d", hidden, -ENOENT);
	CHECK(made == 0, "a file on the new mount: %s", strerror(errno));
	CHECK(not_a_mount == -EINVAL, "umount2 of a plain directory: %d, want %d", not_a_mount,
	      -EINVAL);
	CHECK(unmounted == 0 && back == 0 && gone == -ENOENT,
	      "umount2: %d; the covered file %d, the mount's %d; want 0, 0, %d", unmounted, back,
	      gone, -ENOENT);
	CHECK(twice == -EINVAL, "a second umount2: %d, want %d", twice, -EINVAL);
	CHECK(bad_type == -ENODEV, "an unknown type: %d, want %d", bad_type, -ENODEV);
	CHECK(no_dir == -ENOENT, "a missing target: %d, want %d", no_dir, -ENOENT);
	CHECK(bad_size == -EINVAL, "size=lots: %d, want %d", bad_size, -EINVAL);
	return 0;
}

static const struct test tests[] = {
	TEST(access_follows_root_permissions),
	TEST(a_tmpfs_mount_covers_a_directory_until_umount),
};

int main(void)
{
	return run_tests("access-mount", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
