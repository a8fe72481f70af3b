/*
 * Extended attributes as Linux 6.12's tmpfs keeps them: set, get, list
 * and remove by path, by link and by descriptor; ENODATA for a name not
 * set, the security./trusted./user. namespaces kept and any other
 * EOPNOTSUPP, XATTR_CREATE/XATTR_REPLACE, the size rules (ERANGE for a
 * short buffer or a bad name, E2BIG past 64K), user. attributes for
 * regular files and directories only, trusted. for CAP_SYS_ADMIN only,
 * and /proc keeping none. GNU ls asks every file for its attributes.
 * A static glibc program: make test runs it on faultline, make test-linux
 * on Debian's Linux 6.12; the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check.h"

/* A fresh empty file in /tmp (a tmpfs), named in `path`. */
static int scratch_file(char *path, size_t len, const char *name)
{
	snprintf(path, len, "/tmp/xattrs-%s", name);
	unlink(path);
	int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : -1;
}

static int a_new_file_has_none(void)
{
	char path[64], buf[64];
	CHECK(scratch_file(path, sizeof(path), "none") == 0, "create: %s", strerror(errno));
	errno = 0;
	ssize_t user = getxattr(path, "user.x", buf, sizeof(buf));
	int user_err = errno;
	errno = 0;
	ssize_t sec = lgetxattr(path, "security.selinux", buf, sizeof(buf));
	int sec_err = errno;
	errno = 0;
	ssize_t acl = getxattr(path, "system.posix_acl_access", buf, sizeof(buf));
	int acl_err = errno;
	ssize_t list = listxattr(path, buf, sizeof(buf));
	unlink(path);
	CHECK(user == -1 && user_err == ENODATA, "user.x: %zd errno %d, want ENODATA", user, user_err);
	CHECK(sec == -1 && sec_err == ENODATA, "security.selinux: %zd errno %d, want ENODATA", sec,
	      sec_err);
	CHECK(acl == -1 && acl_err == ENODATA, "posix_acl_access: %zd errno %d, want ENODATA", acl,
	      acl_err);
	CHECK(list == 0, "listxattr: %zd, want 0", list);
	return 0;
}

static int set_get_list_and_remove(void)
{
	char path[64], buf[128];
	CHECK(scratch_file(path, sizeof(path), "set") == 0, "create: %s", strerror(errno));
	CHECK(setxattr(path, "user.a", "1", 1, 0) == 0, "set user.a: %s", strerror(errno));
	CHECK(setxattr(path, "security.s", "", 0, 0) == 0, "set security.s: %s", strerror(errno));
	CHECK(setxattr(path, "user.b", "22", 2, 0) == 0, "set user.b: %s", strerror(errno));
	CHECK(setxattr(path, "trusted.t", "ttt", 3, 0) == 0, "set trusted.t: %s", strerror(errno));
	/* Whatever the order they were set in, tmpfs lists them by name,
	 * last first (its tree compares the other way round). */
	static const char want[] = "user.b,user.a,trusted.t,security.s";
	ssize_t need = listxattr(path, NULL, 0);
	ssize_t got = listxattr(path, buf, sizeof(buf));
	for (ssize_t i = 0; i + 1 < got; i++)
		if (buf[i] == 0)
			buf[i] = ',';
	CHECK(need == sizeof(want) && got == need && strcmp(buf, want) == 0,
	      "listxattr: size %zd, got %zd bytes: %s", need, got, buf);
	errno = 0;
	CHECK(listxattr(path, buf, 5) == -1 && errno == ERANGE, "short list: errno %d", errno);
	CHECK(getxattr(path, "user.b", NULL, 0) == 2, "user.b length: %s", strerror(errno));
	memset(buf, 0, sizeof(buf));
	CHECK(getxattr(path, "user.b", buf, sizeof(buf)) == 2 && memcmp(buf, "22", 2) == 0,
	      "user.b value: %s", strerror(errno));
	errno = 0;
	CHECK(getxattr(path, "user.b", buf, 1) == -1 && errno == ERANGE, "short value: errno %d",
	      errno);
	CHECK(getxattr(path, "security.s", buf, sizeof(buf)) == 0, "empty value: %s",
	      strerror(errno));
	CHECK(setxattr(path, "user.b", "333", 3, 0) == 0 &&
		      getxattr(path, "user.b", buf, sizeof(buf)) == 3,
	      "overwrite: %s", strerror(errno));
	CHECK(removexattr(path, "user.b") == 0, "remove: %s", strerror(errno));
	errno = 0;
	CHECK(getxattr(path, "user.b", buf, sizeof(buf)) == -1 && errno == ENODATA,
	      "after remove: errno %d", errno);
	errno = 0;
	CHECK(removexattr(path, "user.b") == -1 && errno == ENODATA, "remove again: errno %d",
	      errno);
	/* A rename keeps them; so does a link, which is the same inode. */
	char moved[80];
	snprintf(moved, sizeof(moved), "%s-moved", path);
	CHECK(rename(path, moved) == 0 && link(moved, path) == 0, "rename/link: %s",
	      strerror(errno));
	CHECK(getxattr(path, "user.a", buf, sizeof(buf)) == 1, "after rename: %s", strerror(errno));
	unlink(moved);
	unlink(path);
	return 0;
}

static int create_and_replace_flags(void)
{
	char path[64], buf[8];
	CHECK(scratch_file(path, sizeof(path), "flags") == 0, "create: %s", strerror(errno));
	CHECK(setxattr(path, "user.x", "1", 1, XATTR_CREATE) == 0, "create: %s", strerror(errno));
	errno = 0;
	int again = setxattr(path, "user.x", "2", 1, XATTR_CREATE), again_err = errno;
	errno = 0;
	int missing = setxattr(path, "user.y", "2", 1, XATTR_REPLACE), missing_err = errno;
	int replaced = setxattr(path, "user.x", "3", 1, XATTR_REPLACE);
	ssize_t len = getxattr(path, "user.x", buf, sizeof(buf));
	errno = 0;
	int bad = setxattr(path, "user.x", "4", 1, 4), bad_err = errno;
	unlink(path);
	CHECK(again == -1 && again_err == EEXIST, "XATTR_CREATE on a set name: errno %d", again_err);
	CHECK(missing == -1 && missing_err == ENODATA, "XATTR_REPLACE on a missing name: errno %d",
	      missing_err);
	CHECK(replaced == 0 && len == 1 && buf[0] == '3', "XATTR_REPLACE: %d, value %c", replaced,
	      buf[0]);
	CHECK(bad == -1 && bad_err == EINVAL, "flags 4: errno %d, want EINVAL", bad_err);
	return 0;
}

static int names_and_sizes(void)
{
	char path[64], name[300];
	CHECK(scratch_file(path, sizeof(path), "names") == 0, "create: %s", strerror(errno));
	struct {
		const char *name;
		int err;
	} bad[] = {
		{ "foo.bar", EOPNOTSUPP },
		{ "user", EOPNOTSUPP },
		{ "user.", EINVAL },
		{ "system.other", EOPNOTSUPP },
		{ "", ERANGE },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		int r = setxattr(path, bad[i].name, "v", 1, 0);
		CHECK(r == -1 && errno == bad[i].err, "set %s: %d errno %d, want %d", bad[i].name, r,
		      errno, bad[i].err);
		errno = 0;
		r = getxattr(path, bad[i].name, name, sizeof(name));
		CHECK(r == -1 && errno == bad[i].err, "get %s: %d errno %d, want %d", bad[i].name, r,
		      errno, bad[i].err);
	}
	/* 255 bytes is the longest name, with the namespace. */
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = 0;
	CHECK(setxattr(path, name, "v", 1, 0) == 0, "255-byte name: %s", strerror(errno));
	name[255] = 'n';
	name[256] = 0;
	errno = 0;
	CHECK(setxattr(path, name, "v", 1, 0) == -1 && errno == ERANGE, "256-byte name: errno %d",
	      errno);
	char *big = calloc(1, 65537);
	CHECK(big, "calloc");
	int max = setxattr(path, "user.big", big, 65536, 0);
	int max_err = errno;
	errno = 0;
	int over = setxattr(path, "user.big", big, 65537, 0), over_err = errno;
	ssize_t back = getxattr(path, "user.big", big, 65537);
	free(big);
	unlink(path);
	CHECK(max == 0, "a 64K value: %s", strerror(max_err));
	CHECK(over == -1 && over_err == E2BIG, "64K + 1: errno %d, want E2BIG", over_err);
	CHECK(back == 65536, "64K value read back: %zd", back);
	return 0;
}

static int user_attributes_only_on_files_and_directories(void)
{
	char buf[16];
	const char *link_path = "/tmp/xattrs-link", *fifo = "/tmp/xattrs-fifo";
	unlink(link_path);
	unlink(fifo);
	CHECK(symlink("/tmp", link_path) == 0 && mkfifo(fifo, 0644) == 0, "symlink/mkfifo: %s",
	      strerror(errno));
	errno = 0;
	int link_set = lsetxattr(link_path, "user.x", "1", 1, 0), link_set_err = errno;
	errno = 0;
	ssize_t link_get = lgetxattr(link_path, "user.x", buf, sizeof(buf));
	int link_get_err = errno;
	int link_trusted = lsetxattr(link_path, "trusted.x", "1", 1, 0);
	ssize_t link_list = llistxattr(link_path, buf, sizeof(buf));
	errno = 0;
	int fifo_set = setxattr(fifo, "user.x", "1", 1, 0), fifo_set_err = errno;
	int dir_set = setxattr("/tmp", "user.faultline-test", "1", 1, 0);
	int dir_remove = removexattr("/tmp", "user.faultline-test");
	unlink(link_path);
	unlink(fifo);
	CHECK(link_set == -1 && link_set_err == EPERM, "user. on a link: %d errno %d, want EPERM",
	      link_set, link_set_err);
	CHECK(link_get == -1 && link_get_err == ENODATA, "user. read on a link: errno %d",
	      link_get_err);
	CHECK(link_trusted == 0 && link_list == 10, "trusted. on a link: %d, list %zd",
	      link_trusted, link_list);
	CHECK(fifo_set == -1 && fifo_set_err == EPERM, "user. on a FIFO: errno %d", fifo_set_err);
	CHECK(dir_set == 0 && dir_remove == 0, "user. on /tmp: %d %d", dir_set, dir_remove);
	return 0;
}

static int descriptor_calls(void)
{
	char path[64], buf[32];
	CHECK(scratch_file(path, sizeof(path), "fd") == 0, "create: %s", strerror(errno));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	int set = fsetxattr(fd, "user.fd", "abc", 3, 0);
	ssize_t get = fgetxattr(fd, "user.fd", buf, sizeof(buf));
	ssize_t list = flistxattr(fd, buf, sizeof(buf));
	int removed = fremovexattr(fd, "user.fd");
	ssize_t after = getxattr(path, "user.fd", buf, sizeof(buf));
	close(fd);
	errno = 0;
	ssize_t badf = fgetxattr(fd, "user.fd", buf, sizeof(buf));
	int badf_err = errno;
	unlink(path);
	CHECK(set == 0 && get == 3 && list == 8 && removed == 0 && after == -1,
	      "fsetxattr %d, fgetxattr %zd, flistxattr %zd, fremovexattr %d, then %zd", set, get,
	      list, removed, after);
	CHECK(badf == -1 && badf_err == EBADF, "closed fd: errno %d", badf_err);
	return 0;
}

static int proc_keeps_none(void)
{
	char buf[64];
	errno = 0;
	ssize_t get = getxattr("/proc/self/status", "user.x", buf, sizeof(buf));
	int get_err = errno;
	errno = 0;
	ssize_t sec = lgetxattr("/proc", "security.selinux", buf, sizeof(buf));
	int sec_err = errno;
	errno = 0;
	int set = setxattr("/proc/self/status", "security.x", "1", 1, 0), set_err = errno;
	ssize_t list = listxattr("/proc/self/status", buf, sizeof(buf));
	CHECK(get == -1 && get_err == EOPNOTSUPP, "get: %zd errno %d, want EOPNOTSUPP", get,
	      get_err);
	CHECK(sec == -1 && sec_err == EOPNOTSUPP, "/proc security.selinux: errno %d", sec_err);
	CHECK(set == -1 && set_err == EOPNOTSUPP, "set: errno %d", set_err);
	CHECK(list == 0, "listxattr: %zd, want 0", list);
	return 0;
}

/* As nobody, on the file at `arg` (0644, trusted.t and user.u set): the
 * number of the first step that goes otherwise than on Linux, or 0. */
static int nobody_on_the_file(const void *arg)
{
	const char *path = arg;
	char buf[64];
	errno = 0;
	if (getxattr(path, "trusted.t", buf, sizeof(buf)) != -1 || errno != ENODATA)
		return 11;
	errno = 0;
	if (setxattr(path, "trusted.n", "n", 1, 0) != -1 || errno != EPERM)
		return 12;
	/* Listed without trusted.t; user.u read, not written (0644). */
	if (listxattr(path, buf, sizeof(buf)) != 7 || memcmp(buf, "user.u", 7) != 0)
		return 13;
	if (getxattr(path, "user.u", buf, sizeof(buf)) != 1)
		return 14;
	errno = 0;
	if (setxattr(path, "user.u", "v", 1, 0) != -1 || errno != EACCES)
		return 15;
	return 0;
}

static int trusted_is_for_the_privileged(void)
{
	char path[64];
	CHECK(scratch_file(path, sizeof(path), "trusted") == 0, "create: %s", strerror(errno));
	CHECK(chmod(path, 0644) == 0 && setxattr(path, "trusted.t", "t", 1, 0) == 0 &&
		      setxattr(path, "user.u", "u", 1, 0) == 0,
	      "setup: %s", strerror(errno));
	int step = as_user(65534, nobody_on_the_file, path);
	unlink(path);
	CHECK(step == 0,
	      "as nobody: step %d failed (11 trusted read, 12 trusted write, 13 list, 14 user "
	      "read, 15 user write)",
	      step);
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(a_new_file_has_none),
		TEST(set_get_list_and_remove),
		TEST(create_and_replace_flags),
		TEST(names_and_sizes),
		TEST(user_attributes_only_on_files_and_directories),
		TEST(descriptor_calls),
		TEST(proc_keeps_none),
		TEST(trusted_is_for_the_privileged),
	};
	return run_tests("xattrs", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
