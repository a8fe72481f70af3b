/*
 * File and metadata system calls through glibc: chmod, chown, timestamps
 * and utimensat, hard and symbolic links, mknod (FIFOs, device nodes),
 * fchdir, close_range, truncate, statfs, sendfile, copy_file_range,
 * flock, POSIX and OFD record locks, memfd seals, and the small memory
 * calls (mlock family, madvise MADV_FREE/DONTFORK/DONTDUMP, MAP_GROWSDOWN),
 * and reads and writes that run into an unmapped page.
 * The values expected are Linux 6.12's, as root. Everything happens on a
 * tmpfs this program mounts at /tmp/ft, so both kernels see the same
 * filesystem.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; newer than these glibc headers */
#endif

#define D "/tmp/ft"
#define TMPFS_MAGIC 0x01021994
#define PROC_SUPER_MAGIC 0x9fa0

/* -1 and errno, or 0, as one number: 0 or -errno. */
static int result(long rc)
{
	return rc >= 0 ? 0 : -errno;
}

static int make(const char *path, const char *data)
{
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (data && write(fd, data, strlen(data)) != (ssize_t)strlen(data)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct stat st_of(const char *path)
{
	struct stat st;
	memset(&st, 0, sizeof(st));
	stat(path, &st);
	return st;
}

static long long ns(struct timespec t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return ns(t);
}

/* Linux stamps inodes from the coarse clock, up to a tick behind. */
#define SLACK 50000000LL
static int near_now(struct timespec t, long long before, long long after)
{
	return ns(t) >= before - SLACK && ns(t) <= after + SLACK;
}

/* Sets atime and mtime to fixed old values. */
static int set_old_times(const char *path)
{
	struct timespec ts[2] = { { 1000, 500 }, { 2000, 700 } };
	return utimensat(AT_FDCWD, path, ts, 0);
}

static int setup(void)
{
	mkdir("/tmp", 01777);
	mkdir(D, 0755);
	CHECK(mount("tmpfs", D, "tmpfs", 0, "size=4m") == 0, "mount %s: %s", D, strerror(errno));
	return 0;
}

static int chmod_changes_permission_bits_only(void)
{
	int fd = make(D "/chmod", NULL);
	CHECK(fd >= 0, "create: %s", strerror(errno));
	CHECK(chmod(D "/chmod", 0640) == 0, "chmod: %s", strerror(errno));
	mode_t m1 = st_of(D "/chmod").st_mode;
	CHECK(fchmod(fd, 04755) == 0, "fchmod: %s", strerror(errno));
	mode_t m2 = st_of(D "/chmod").st_mode;
	CHECK(fchmodat(AT_FDCWD, D "/chmod", 0600, 0) == 0, "fchmodat: %s", strerror(errno));
	mode_t m3 = st_of(D "/chmod").st_mode;
	int missing = result(chmod(D "/nope", 0600));
	int badfd = result(fchmod(999, 0600));
	close(fd);
	CHECK(m1 == (S_IFREG | 0640), "after chmod 0640: %o", m1);
	CHECK(m2 == (S_IFREG | 04755), "after fchmod 04755: %o", m2);
	CHECK(m3 == (S_IFREG | 0600), "after fchmodat 0600: %o", m3);
	CHECK(missing == -ENOENT && badfd == -EBADF, "errors: %d %d", missing, badfd);
	return 0;
}

static int fchmodat2_flags(void)
{
	close(make(D "/c2", NULL));
	symlink("c2", D "/c2-link");
	int dir = open(D, O_RDONLY | O_DIRECTORY);
	int via_link = result(syscall(SYS_fchmodat2, AT_FDCWD, D "/c2-link", 0700, 0));
	mode_t m1 = st_of(D "/c2").st_mode;
	int nofollow =
		result(syscall(SYS_fchmodat2, AT_FDCWD, D "/c2-link", 0600, AT_SYMLINK_NOFOLLOW));
	int rel = result(syscall(SYS_fchmodat2, dir, "c2", 0604, 0));
	mode_t m2 = st_of(D "/c2").st_mode;
	int bad = result(syscall(SYS_fchmodat2, AT_FDCWD, D "/c2", 0600, 0x8));
	close(dir);
	CHECK(via_link == 0 && m1 == (S_IFREG | 0700), "through the link: %d, %o", via_link, m1);
	CHECK(nofollow == -EOPNOTSUPP, "a link itself: %d, want %d", nofollow, -EOPNOTSUPP);
	CHECK(rel == 0 && m2 == (S_IFREG | 0604), "relative to a dir fd: %d, %o", rel, m2);
	CHECK(bad == -EINVAL, "bad flags: %d", bad);
	return 0;
}

static int chown_records_owner_and_group(void)
{
	int fd = make(D "/own", NULL);
	CHECK(chown(D "/own", 1000, 2000) == 0, "chown: %s", strerror(errno));
	struct stat a = st_of(D "/own");
	CHECK(chown(D "/own", -1, 3000) == 0, "chown -1: %s", strerror(errno));
	struct stat b = st_of(D "/own");
	CHECK(fchown(fd, 5, -1) == 0, "fchown: %s", strerror(errno));
	struct stat c = st_of(D "/own");
	CHECK(fchownat(fd, "", 9, 10, AT_EMPTY_PATH) == 0, "AT_EMPTY_PATH: %s", strerror(errno));
	struct stat d = st_of(D "/own");
	int bad = result(fchownat(AT_FDCWD, D "/own", 0, 0, 0x8));
	close(fd);
	CHECK(a.st_uid == 1000 && a.st_gid == 2000, "chown: %u %u", a.st_uid, a.st_gid);
	CHECK(b.st_uid == 1000 && b.st_gid == 3000, "gid only: %u %u", b.st_uid, b.st_gid);
	CHECK(c.st_uid == 5 && c.st_gid == 3000, "fchown uid: %u %u", c.st_uid, c.st_gid);
	CHECK(d.st_uid == 9 && d.st_gid == 10, "fchownat \"\": %u %u", d.st_uid, d.st_gid);
	CHECK(bad == -EINVAL, "bad flags: %d", bad);
	return 0;
}

static int lchown_changes_the_link_itself(void)
{
	close(make(D "/lown", NULL));
	symlink("lown", D "/lown-link");
	CHECK(lchown(D "/lown-link", 7, 8) == 0, "lchown: %s", strerror(errno));
	struct stat l, t;
	lstat(D "/lown-link", &l);
	stat(D "/lown", &t);
	CHECK(S_ISLNK(l.st_mode) && l.st_uid == 7 && l.st_gid == 8, "the link: %o %u %u",
	      l.st_mode, l.st_uid, l.st_gid);
	CHECK(t.st_uid == 0 && t.st_gid == 0, "the target: %u %u", t.st_uid, t.st_gid);
	return 0;
}

static int chown_clears_setuid(void)
{
	close(make(D "/suid", NULL));
	chmod(D "/suid", 06755);
	chown(D "/suid", 1, 1);
	mode_t m = st_of(D "/suid").st_mode;
	CHECK(m == (S_IFREG | 0755), "mode after chown: %o, want %o", m, S_IFREG | 0755);
	return 0;
}

static int create_sets_all_three_times(void)
{
	long long before = now_ns();
	close(make(D "/times", NULL));
	long long after = now_ns();
	struct stat st = st_of(D "/times");
	CHECK(near_now(st.st_atim, before, after) && near_now(st.st_mtim, before, after) &&
		      near_now(st.st_ctim, before, after),
	      "times %lld %lld %lld, created between %lld and %lld", ns(st.st_atim),
	      ns(st.st_mtim), ns(st.st_ctim), before, after);
	return 0;
}

static int write_moves_mtime_and_ctime_not_atime(void)
{
	int fd = make(D "/wtimes", NULL);
	CHECK(set_old_times(D "/wtimes") == 0, "utimensat: %s", strerror(errno));
	long long before = now_ns();
	CHECK(write(fd, "x", 1) == 1, "write: %s", strerror(errno));
	long long after = now_ns();
	close(fd);
	struct stat st = st_of(D "/wtimes");
	CHECK(st.st_atim.tv_sec == 1000 && st.st_atim.tv_nsec == 500, "atime: %lld",
	      ns(st.st_atim));
	CHECK(near_now(st.st_mtim, before, after) && near_now(st.st_ctim, before, after),
	      "mtime %lld ctime %lld, not near %lld", ns(st.st_mtim), ns(st.st_ctim), before);
	return 0;
}

static int read_moves_an_older_atime(void)
{
	int fd = make(D "/rtimes", "data");
	struct timespec ts[2] = { { 1000, 0 }, { 2000, 0 } };
	futimens(fd, ts);
	long long before = now_ns();
	char buf[8];
	CHECK(pread(fd, buf, sizeof(buf), 0) == 4, "read: %s", strerror(errno));
	long long after = now_ns();
	close(fd);
	struct stat st = st_of(D "/rtimes");
	CHECK(near_now(st.st_atim, before, after), "atime %lld after a read (relatime)",
	      ns(st.st_atim));
	CHECK(st.st_mtim.tv_sec == 2000, "mtime moved: %lld", ns(st.st_mtim));
	return 0;
}

static int truncate_and_chmod_move_the_right_times(void)
{
	int fd = make(D "/ttimes", "abc");
	set_old_times(D "/ttimes");
	long long before = now_ns();
	CHECK(ftruncate(fd, 1) == 0, "ftruncate: %s", strerror(errno));
	struct stat t = st_of(D "/ttimes");
	set_old_times(D "/ttimes");
	fchmod(fd, 0600);
	long long after = now_ns();
	struct stat c = st_of(D "/ttimes");
	close(fd);
	CHECK(near_now(t.st_mtim, before, after) && near_now(t.st_ctim, before, after),
	      "ftruncate: mtime %lld ctime %lld", ns(t.st_mtim), ns(t.st_ctim));
	CHECK(c.st_mtim.tv_sec == 2000 && c.st_atim.tv_sec == 1000 &&
		      near_now(c.st_ctim, before, after),
	      "chmod: atime %lld mtime %lld ctime %lld", ns(c.st_atim), ns(c.st_mtim),
	      ns(c.st_ctim));
	return 0;
}

static int utimensat_omit_and_now(void)
{
	close(make(D "/ut", NULL));
	set_old_times(D "/ut");
	struct timespec omit_a[2] = { { 0, UTIME_OMIT }, { 3000, 9 } };
	CHECK(utimensat(AT_FDCWD, D "/ut", omit_a, 0) == 0, "omit atime: %s", strerror(errno));
	struct stat a = st_of(D "/ut");
	long long before = now_ns();
	struct timespec now_a[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	CHECK(utimensat(AT_FDCWD, D "/ut", now_a, 0) == 0, "now atime: %s", strerror(errno));
	long long after = now_ns();
	struct stat b = st_of(D "/ut");
	CHECK(a.st_atim.tv_sec == 1000 && a.st_atim.tv_nsec == 500, "atime omitted: %lld",
	      ns(a.st_atim));
	CHECK(a.st_mtim.tv_sec == 3000 && a.st_mtim.tv_nsec == 9, "mtime set: %lld",
	      ns(a.st_mtim));
	CHECK(near_now(b.st_atim, before, after) && b.st_mtim.tv_sec == 3000,
	      "UTIME_NOW atime %lld, mtime %lld", ns(b.st_atim), ns(b.st_mtim));
	return 0;
}

static int utimensat_errors(void)
{
	close(make(D "/ute", NULL));
	struct timespec bad_ns[2] = { { 0, 1000000000 }, { 0, 0 } };
	int ns_big = result(utimensat(AT_FDCWD, D "/ute", bad_ns, 0));
	int flags = result(utimensat(AT_FDCWD, D "/ute", NULL, 0x8));
	int missing = result(utimensat(AT_FDCWD, D "/nope", NULL, 0));
	int badfd = result(futimens(999, NULL));
	CHECK(ns_big == -EINVAL, "tv_nsec 1e9: %d", ns_big);
	CHECK(flags == -EINVAL, "bad flags: %d", flags);
	CHECK(missing == -ENOENT && badfd == -EBADF, "missing %d, bad fd %d", missing, badfd);
	return 0;
}

static int futimens_null_is_now(void)
{
	int fd = make(D "/fut", NULL);
	set_old_times(D "/fut");
	long long before = now_ns();
	CHECK(futimens(fd, NULL) == 0, "futimens: %s", strerror(errno));
	long long after = now_ns();
	close(fd);
	struct stat st = st_of(D "/fut");
	CHECK(near_now(st.st_atim, before, after) && near_now(st.st_mtim, before, after),
	      "atime %lld mtime %lld", ns(st.st_atim), ns(st.st_mtim));
	return 0;
}

static int utimensat_nofollow_sets_the_link(void)
{
	close(make(D "/utl", NULL));
	set_old_times(D "/utl");
	symlink("utl", D "/utl-link");
	struct timespec ts[2] = { { 4000, 0 }, { 5000, 0 } };
	CHECK(utimensat(AT_FDCWD, D "/utl-link", ts, AT_SYMLINK_NOFOLLOW) == 0, "utimensat: %s",
	      strerror(errno));
	struct stat l, t;
	lstat(D "/utl-link", &l);
	stat(D "/utl", &t);
	CHECK(l.st_mtim.tv_sec == 5000 && t.st_mtim.tv_sec == 2000, "link %lld, target %lld",
	      (long long)l.st_mtim.tv_sec, (long long)t.st_mtim.tv_sec);
	return 0;
}

static int directory_times_move_with_its_entries(void)
{
	mkdir(D "/dt", 0755);
	set_old_times(D "/dt");
	long long before = now_ns();
	close(make(D "/dt/f", NULL));
	long long after = now_ns();
	struct stat created = st_of(D "/dt");
	set_old_times(D "/dt");
	before = now_ns();
	unlink(D "/dt/f");
	after = now_ns();
	struct stat removed = st_of(D "/dt");
	CHECK(near_now(created.st_mtim, before - 1000000000LL, after),
	      "create: dir mtime %lld", ns(created.st_mtim));
	CHECK(near_now(removed.st_mtim, before, after) && near_now(removed.st_ctim, before, after),
	      "unlink: dir mtime %lld ctime %lld", ns(removed.st_mtim), ns(removed.st_ctim));
	return 0;
}

static int hard_links_count_names(void)
{
	close(make(D "/ha", "shared"));
	CHECK(link(D "/ha", D "/hb") == 0, "link: %s", strerror(errno));
	struct stat a = st_of(D "/ha"), b = st_of(D "/hb");
	CHECK(unlink(D "/ha") == 0, "unlink: %s", strerror(errno));
	struct stat left = st_of(D "/hb");
	char buf[16] = { 0 };
	int fd = open(D "/hb", O_RDONLY);
	read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 2 && b.st_nlink == 2, "ino %lu/%lu nlink %lu",
	      (unsigned long)a.st_ino, (unsigned long)b.st_ino, (unsigned long)a.st_nlink);
	CHECK(left.st_nlink == 1 && strcmp(buf, "shared") == 0, "after unlink: nlink %lu, '%s'",
	      (unsigned long)left.st_nlink, buf);
	return 0;
}

static int link_errors(void)
{
	mkdir(D "/ldir", 0755);
	close(make(D "/le", NULL));
	close(make(D "/le2", NULL));
	mkdir(D "/other", 0755);
	mount("tmpfs", D "/other", "tmpfs", 0, "size=64k");
	int dir = result(link(D "/ldir", D "/ldir2"));
	int missing = result(link(D "/nope", D "/nope2"));
	int exists = result(link(D "/le", D "/le2"));
	int xdev = result(link(D "/le", D "/other/le"));
	umount(D "/other");
	CHECK(dir == -EPERM, "a directory: %d, want %d", dir, -EPERM);
	CHECK(missing == -ENOENT, "missing: %d", missing);
	CHECK(exists == -EEXIST, "existing: %d", exists);
	CHECK(xdev == -EXDEV, "across mounts: %d, want %d", xdev, -EXDEV);
	return 0;
}

static int linkat_follow_and_empty_path(void)
{
	close(make(D "/lt", NULL));
	symlink("lt", D "/lt-sym");
	int nofollow = result(linkat(AT_FDCWD, D "/lt-sym", AT_FDCWD, D "/lt-l1", 0));
	int follow = result(linkat(AT_FDCWD, D "/lt-sym", AT_FDCWD, D "/lt-l2", AT_SYMLINK_FOLLOW));
	int fd = open(D "/lt", O_RDONLY);
	int empty = result(linkat(fd, "", AT_FDCWD, D "/lt-l3", AT_EMPTY_PATH));
	int bad = result(linkat(AT_FDCWD, D "/lt", AT_FDCWD, D "/lt-l4", 0x8));
	close(fd);
	struct stat l1, l2 = st_of(D "/lt-l2"), t = st_of(D "/lt");
	lstat(D "/lt-l1", &l1);
	CHECK(nofollow == 0 && S_ISLNK(l1.st_mode), "without follow: %d, mode %o", nofollow,
	      l1.st_mode);
	CHECK(follow == 0 && l2.st_ino == t.st_ino, "AT_SYMLINK_FOLLOW: %d", follow);
	CHECK(empty == 0 && t.st_nlink == 3, "AT_EMPTY_PATH: %d, nlink %lu", empty,
	      (unsigned long)t.st_nlink);
	CHECK(bad == -EINVAL, "bad flags: %d", bad);
	return 0;
}

static int symlinkat_and_readlink(void)
{
	int dir = open(D, O_RDONLY | O_DIRECTORY);
	int made = result(symlinkat("some/target", dir, "sl"));
	char buf[64] = { 0 };
	ssize_t n = readlink(D "/sl", buf, sizeof(buf));
	int again = result(symlinkat("x", dir, "sl"));
	int empty = result(symlink("", D "/sl-empty"));
	close(dir);
	CHECK(made == 0, "symlinkat: %d", made);
	CHECK(n == 11 && memcmp(buf, "some/target", 11) == 0, "readlink: %zd '%s'", n, buf);
	CHECK(again == -EEXIST, "again: %d", again);
	CHECK(empty == -ENOENT, "an empty target: %d", empty);
	return 0;
}

static int a_fifo_is_one_pipe_for_all_openers(void)
{
	CHECK(mkfifo(D "/fifo", 0600) == 0, "mkfifo: %s", strerror(errno));
	struct stat st = st_of(D "/fifo");
	int r = open(D "/fifo", O_RDONLY | O_NONBLOCK);
	int w = open(D "/fifo", O_WRONLY);
	CHECK(r >= 0 && w >= 0, "open: %d %d: %s", r, w, strerror(errno));
	CHECK(write(w, "through", 7) == 7, "write: %s", strerror(errno));
	char buf[16] = { 0 };
	ssize_t n = read(r, buf, sizeof(buf));
	close(w);
	ssize_t eof = read(r, buf, sizeof(buf));
	close(r);
	CHECK(S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0600, "mode %o", st.st_mode);
	CHECK(n == 7 && memcmp(buf, "through", 7) == 0, "read %zd", n);
	CHECK(eof == 0, "after the writer closed: %zd", eof);
	return 0;
}

static int mknod_regular_and_errors(void)
{
	int reg = result(mknod(D "/mreg", S_IFREG | 0640, 0));
	struct stat st = st_of(D "/mreg");
	int plain = result(mknod(D "/mreg0", 0640, 0));
	struct stat st0 = st_of(D "/mreg0");
	int dir = result(mknod(D "/mdir", S_IFDIR | 0755, 0));
	int exists = result(mknod(D "/mreg", S_IFREG | 0600, 0));
	int bad = result(mknod(D "/mbad", 0130000 | 0600, 0));
	CHECK(reg == 0 && st.st_mode == (S_IFREG | 0640) && st.st_size == 0, "S_IFREG: %d %o",
	      reg, st.st_mode);
	CHECK(plain == 0 && S_ISREG(st0.st_mode), "type 0: %d %o", plain, st0.st_mode);
	CHECK(dir == -EPERM, "S_IFDIR: %d, want %d", dir, -EPERM);
	CHECK(exists == -EEXIST, "existing: %d", exists);
	CHECK(bad == -EINVAL, "a bad type: %d, want %d", bad, -EINVAL);
	return 0;
}

static int a_device_node_without_a_driver(void)
{
	dev_t dev = makedev(60, 1);
	int made = result(mknod(D "/chr", S_IFCHR | 0600, dev));
	struct stat st = st_of(D "/chr");
	int opened = result(open(D "/chr", O_RDONLY));
	CHECK(made == 0, "mknod: %d", made);
	CHECK(S_ISCHR(st.st_mode) && st.st_rdev == dev, "mode %o rdev %lx", st.st_mode,
	      (unsigned long)st.st_rdev);
	CHECK(opened == -ENXIO, "open: %d, want %d", opened, -ENXIO);
	return 0;
}

static int fchdir_moves_the_cwd(void)
{
	mkdir(D "/cd", 0755);
	char old[256];
	getcwd(old, sizeof(old));
	int dir = open(D "/cd", O_RDONLY | O_DIRECTORY);
	int fd = make(D "/cd-file", NULL);
	int moved = result(fchdir(dir));
	char cwd[256] = { 0 };
	getcwd(cwd, sizeof(cwd));
	int notdir = result(fchdir(fd));
	int badfd = result(fchdir(999));
	chdir(old);
	close(dir);
	close(fd);
	CHECK(moved == 0 && strcmp(cwd, D "/cd") == 0, "fchdir: %d, cwd %s", moved, cwd);
	CHECK(notdir == -ENOTDIR && badfd == -EBADF, "errors: %d %d", notdir, badfd);
	return 0;
}

static int close_range_closes_or_marks(void)
{
	int fd = make(D "/cr", NULL);
	dup2(fd, 100);
	dup2(fd, 101);
	dup2(fd, 102);
	int closed = result(close_range(100, 101, 0));
	int f100 = result(fcntl(100, F_GETFD)), f102 = result(fcntl(102, F_GETFD));
	int marked = result(close_range(102, ~0U, CLOSE_RANGE_CLOEXEC));
	int flags102 = fcntl(102, F_GETFD);
	int backwards = result(close_range(10, 5, 0));
	int badflags = result(close_range(100, 200, 0x1));
	close(102);
	close(fd);
	CHECK(closed == 0 && f100 == -EBADF && f102 == 0, "close_range: %d, fd 100 %d, 102 %d",
	      closed, f100, f102);
	CHECK(marked == 0 && flags102 == FD_CLOEXEC, "CLOSE_RANGE_CLOEXEC: %d, flags %d", marked,
	      flags102);
	CHECK(backwards == -EINVAL && badflags == -EINVAL, "errors: %d %d", backwards, badflags);
	return 0;
}

static int truncate_by_path(void)
{
	close(make(D "/tr", "0123456789abcdef"));
	int cut = result(truncate(D "/tr", 10));
	off_t size = st_of(D "/tr").st_size;
	int grow = result(truncate(D "/tr", 8192));
	off_t grown = st_of(D "/tr").st_size;
	int dir = result(truncate(D, 0));
	int neg = result(truncate(D "/tr", -1));
	int missing = result(truncate(D "/nope", 0));
	CHECK(cut == 0 && size == 10, "truncate to 10: %d, size %ld", cut, (long)size);
	CHECK(grow == 0 && grown == 8192, "grow: %d, size %ld", grow, (long)grown);
	CHECK(dir == -EISDIR && neg == -EINVAL && missing == -ENOENT, "errors: %d %d %d", dir, neg,
	      missing);
	return 0;
}

static int statfs_of_a_sized_tmpfs(void)
{
	mkdir(D "/sfs", 0755);
	CHECK(mount("tmpfs", D "/sfs", "tmpfs", 0, "size=1m") == 0, "mount: %s", strerror(errno));
	struct statfs a, b, f;
	int r1 = result(statfs(D "/sfs", &a));
	char block[8192];
	memset(block, 'x', sizeof(block));
	int fd = make(D "/sfs/data", NULL);
	write(fd, block, sizeof(block));
	int r2 = result(statfs(D "/sfs", &b));
	int r3 = result(fstatfs(fd, &f));
	close(fd);
	umount(D "/sfs");
	CHECK(r1 == 0 && r2 == 0 && r3 == 0, "statfs: %d %d %d", r1, r2, r3);
	CHECK(a.f_type == TMPFS_MAGIC && a.f_bsize == 4096, "type %lx bsize %ld",
	      (long)a.f_type, (long)a.f_bsize);
	CHECK(a.f_blocks == 256 && a.f_bfree == 256 && a.f_bavail == 256, "blocks %lu free %lu",
	      (unsigned long)a.f_blocks, (unsigned long)a.f_bfree);
	CHECK(b.f_bfree == 254, "free after an 8K write: %lu", (unsigned long)b.f_bfree);
	CHECK(f.f_type == TMPFS_MAGIC && f.f_blocks == 256, "fstatfs: %lx %lu", (long)f.f_type,
	      (unsigned long)f.f_blocks);
	CHECK(a.f_namelen == 255, "namelen %ld", (long)a.f_namelen);
	return 0;
}

static int statfs_of_proc_and_errors(void)
{
	struct statfs p;
	int r = result(statfs("/proc", &p));
	int missing = result(statfs(D "/nope", &p));
	int badfd = result(fstatfs(999, &p));
	int fault = result(statfs(D, (struct statfs *)8));
	CHECK(r == 0 && p.f_type == PROC_SUPER_MAGIC, "/proc: %d, type %lx", r, (long)p.f_type);
	CHECK(missing == -ENOENT && badfd == -EBADF && fault == -EFAULT, "errors: %d %d %d",
	      missing, badfd, fault);
	return 0;
}

static int sendfile_copies_between_files(void)
{
	int in = make(D "/sf-in", "0123456789");
	int out = make(D "/sf-out", NULL);
	lseek(in, 0, SEEK_SET);
	off_t off = 2;
	ssize_t n = sendfile(out, in, &off, 5);
	off_t in_pos = lseek(in, 0, SEEK_CUR);
	ssize_t m = sendfile(out, in, NULL, 3);
	off_t in_pos2 = lseek(in, 0, SEEK_CUR);
	char buf[16] = { 0 };
	pread(out, buf, sizeof(buf) - 1, 0);
	close(in);
	close(out);
	CHECK(n == 5 && off == 7 && in_pos == 0, "with an offset: %zd, off %ld, pos %ld", n,
	      (long)off, (long)in_pos);
	CHECK(m == 3 && in_pos2 == 3, "at the position: %zd, pos %ld", m, (long)in_pos2);
	CHECK(strcmp(buf, "23456012") == 0, "output '%s'", buf);
	return 0;
}

static int sendfile_errors(void)
{
	close(make(D "/sfe", "abc"));
	int ro = open(D "/sfe", O_RDONLY);
	int wo = open(D "/sfe", O_WRONLY);
	int app = open(D "/sfe", O_WRONLY | O_APPEND);
	int to_ro = result(sendfile(ro, ro, NULL, 1));
	int from_wo = result(sendfile(wo, wo, NULL, 1));
	int to_append = result(sendfile(app, ro, NULL, 1));
	int badfd = result(sendfile(999, ro, NULL, 1));
	close(ro);
	close(wo);
	close(app);
	CHECK(to_ro == -EBADF && from_wo == -EBADF && badfd == -EBADF, "EBADF: %d %d %d", to_ro,
	      from_wo, badfd);
	CHECK(to_append == -EINVAL, "an O_APPEND output: %d, want %d", to_append, -EINVAL);
	return 0;
}

static int copy_file_range_copies_and_checks(void)
{
	int in = make(D "/cfr-in", "abcdefghij");
	int out = make(D "/cfr-out", "----------");
	loff_t oi = 3, oo = 1;
	ssize_t n = copy_file_range(in, &oi, out, &oo, 4, 0);
	char buf[16] = { 0 };
	pread(out, buf, 10, 0);
	int flags = result(copy_file_range(in, &oi, out, &oo, 1, 1));
	loff_t a = 0, b = 2;
	int overlap = result(copy_file_range(in, &a, in, &b, 4, 0));
	int dir = open(D, O_RDONLY | O_DIRECTORY);
	int isdir = result(copy_file_range(dir, NULL, out, NULL, 1, 0));
	close(dir);
	close(in);
	close(out);
	CHECK(n == 4 && oi == 7 && oo == 5, "copied %zd, offsets %ld %ld", n, (long)oi, (long)oo);
	CHECK(strcmp(buf, "-defg-----") == 0, "output '%s'", buf);
	CHECK(flags == -EINVAL && overlap == -EINVAL, "flags %d, overlap %d", flags, overlap);
	CHECK(isdir == -EISDIR, "a directory: %d", isdir);
	return 0;
}

static int flock_belongs_to_the_open_file(void)
{
	close(make(D "/fl", NULL));
	int a = open(D "/fl", O_RDWR), b = open(D "/fl", O_RDWR);
	int ex = result(flock(a, LOCK_EX));
	int other = result(flock(b, LOCK_SH | LOCK_NB));
	int d = dup(a);
	int same = result(flock(d, LOCK_EX | LOCK_NB));
	close(a);
	int still = result(flock(b, LOCK_EX | LOCK_NB));
	close(d);
	int freed = result(flock(b, LOCK_EX | LOCK_NB));
	int bad = result(flock(b, 0));
	close(b);
	CHECK(ex == 0 && other == -EWOULDBLOCK, "LOCK_EX then another file's LOCK_SH: %d %d", ex,
	      other);
	CHECK(same == 0 && still == -EWOULDBLOCK, "dup shares it: %d, after one close %d", same,
	      still);
	CHECK(freed == 0, "after the last close: %d", freed);
	CHECK(bad == -EINVAL, "op 0: %d", bad);
	return 0;
}

static int flock_shared_locks_coexist(void)
{
	close(make(D "/fls", NULL));
	int a = open(D "/fls", O_RDONLY), b = open(D "/fls", O_RDONLY);
	int sa = result(flock(a, LOCK_SH)), sb = result(flock(b, LOCK_SH | LOCK_NB));
	int ex = result(flock(a, LOCK_EX | LOCK_NB));
	flock(b, LOCK_UN);
	int ex2 = result(flock(a, LOCK_EX | LOCK_NB));
	close(a);
	close(b);
	CHECK(sa == 0 && sb == 0, "two LOCK_SH: %d %d", sa, sb);
	CHECK(ex == -EWOULDBLOCK && ex2 == 0, "upgrade while shared %d, alone %d", ex, ex2);
	return 0;
}

static int flock_waits_for_the_holder(void)
{
	close(make(D "/flw", NULL));
	int a = open(D "/flw", O_RDWR);
	flock(a, LOCK_EX);
	pid_t pid = fork();
	if (pid == 0) {
		int b = open(D "/flw", O_RDWR);
		long long t0 = now_ns();
		if (flock(b, LOCK_EX) != 0)
			_exit(2);
		_exit(now_ns() - t0 >= 50000000LL ? 0 : 3);
	}
	usleep(150000);
	flock(a, LOCK_UN);
	int status = 0;
	waitpid(pid, &status, 0);
	close(a);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	return 0;
}

static int lock_range(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

static int child_getlk(const char *path, off_t start, off_t len, struct flock *out)
{
	int p[2];
	pipe(p);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDWR);
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start,
				    .l_len = len };
		int rc = fcntl(fd, F_GETLK, &fl);
		int tries = lock_range(fd, F_SETLK, F_WRLCK, start, len) == 0 ? 0 : errno;
		write(p[1], &fl, sizeof(fl));
		write(p[1], &rc, sizeof(rc));
		write(p[1], &tries, sizeof(tries));
		_exit(0);
	}
	int rc = -1, tries = -1;
	read(p[0], out, sizeof(*out));
	read(p[0], &rc, sizeof(rc));
	read(p[0], &tries, sizeof(tries));
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(p[1]);
	return rc < 0 ? -1 : tries;
}

static int posix_locks_conflict_across_processes(void)
{
	int fd = make(D "/pl", NULL);
	CHECK(lock_range(fd, F_SETLK, F_WRLCK, 0, 10) == 0, "F_SETLK: %s", strerror(errno));
	struct flock fl;
	int tries = child_getlk(D "/pl", 5, 1, &fl);
	struct flock free_fl;
	int free_tries = child_getlk(D "/pl", 10, 5, &free_fl);
	struct flock fl_bad = { .l_type = 7, .l_whence = SEEK_SET };
	int bad = result(fcntl(fd, F_SETLK, &fl_bad));
	struct flock fl_neg = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = -1 };
	int neg = result(fcntl(fd, F_SETLK, &fl_neg));
	close(fd);
	CHECK(tries == EAGAIN, "the child's F_SETLK: %d, want %d", tries, EAGAIN);
	CHECK(fl.l_type == F_WRLCK && fl.l_start == 0 && fl.l_len == 10 && fl.l_pid == getpid(),
	      "F_GETLK: type %d start %ld len %ld pid %d", fl.l_type, (long)fl.l_start,
	      (long)fl.l_len, fl.l_pid);
	CHECK(free_tries == 0 && free_fl.l_type == F_UNLCK, "a free range: %d, type %d",
	      free_tries, free_fl.l_type);
	CHECK(bad == -EINVAL && neg == -EINVAL, "bad type %d, negative start %d", bad, neg);
	return 0;
}

static int posix_unlock_splits_and_merges(void)
{
	int fd = make(D "/pls", NULL);
	lock_range(fd, F_SETLK, F_WRLCK, 0, 100);
	lock_range(fd, F_SETLK, F_UNLCK, 40, 20);
	struct flock low, mid, high, merged;
	child_getlk(D "/pls", 0, 100, &low);
	child_getlk(D "/pls", 45, 10, &mid);
	child_getlk(D "/pls", 70, 1, &high);
	lock_range(fd, F_SETLK, F_WRLCK, 100, 50);
	child_getlk(D "/pls", 70, 1, &merged);
	close(fd);
	CHECK(low.l_type == F_WRLCK && low.l_start == 0 && low.l_len == 40, "low: %d %ld %ld",
	      low.l_type, (long)low.l_start, (long)low.l_len);
	CHECK(mid.l_type == F_UNLCK, "the hole: %d", mid.l_type);
	CHECK(high.l_start == 60 && high.l_len == 40, "high: %ld %ld", (long)high.l_start,
	      (long)high.l_len);
	CHECK(merged.l_start == 60 && merged.l_len == 90, "merged: %ld %ld", (long)merged.l_start,
	      (long)merged.l_len);
	return 0;
}

static int posix_lock_goes_with_any_close(void)
{
	int fd = make(D "/plc", NULL);
	lock_range(fd, F_SETLK, F_WRLCK, 0, 0);
	struct flock held;
	child_getlk(D "/plc", 0, 1, &held);
	int other = open(D "/plc", O_RDONLY);
	close(other);
	struct flock after;
	child_getlk(D "/plc", 0, 1, &after);
	close(fd);
	CHECK(held.l_type == F_WRLCK && held.l_len == 0, "held: %d len %ld", held.l_type,
	      (long)held.l_len);
	CHECK(after.l_type == F_UNLCK, "after closing another fd of the file: %d", after.l_type);
	return 0;
}

static int posix_lock_goes_when_its_process_exits(void)
{
	int fd = make(D "/ple", NULL);
	int go[2], done[2];
	pipe(go);
	pipe(done);
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(D "/ple", O_RDWR);
		lock_range(cfd, F_SETLK, F_WRLCK, 0, 0);
		write(done[1], "l", 1);
		char c;
		read(go[0], &c, 1);
		_exit(0);
	}
	char c;
	read(done[0], &c, 1);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	fcntl(fd, F_GETLK, &fl);
	short held = fl.l_type;
	pid_t holder = fl.l_pid;
	write(go[1], "g", 1);
	waitpid(pid, NULL, 0);
	struct flock fl2 = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	fcntl(fd, F_GETLK, &fl2);
	close(fd);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	CHECK(held == F_WRLCK && holder == pid, "while the child lives: %d pid %d", held, holder);
	CHECK(fl2.l_type == F_UNLCK, "after it exited: %d", fl2.l_type);
	return 0;
}

static int setlkw_waits_until_the_lock_goes(void)
{
	int fd = make(D "/plw", NULL);
	int ready[2];
	pipe(ready);
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(D "/plw", O_RDWR);
		lock_range(cfd, F_SETLK, F_WRLCK, 0, 0);
		write(ready[1], "l", 1);
		usleep(150000);
		lock_range(cfd, F_SETLK, F_UNLCK, 0, 0);
		usleep(500000);
		_exit(0);
	}
	char c;
	read(ready[0], &c, 1);
	long long t0 = now_ns();
	int rc = result(lock_range(fd, F_SETLKW, F_WRLCK, 0, 0));
	long long waited = now_ns() - t0;
	waitpid(pid, NULL, 0);
	close(fd);
	close(ready[0]);
	close(ready[1]);
	CHECK(rc == 0, "F_SETLKW: %d", rc);
	CHECK(waited >= 50000000LL, "it waited only %lld ns", waited);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct kicker {
	pthread_t target;
};

static void *kick(void *arg)
{
	struct kicker *k = arg;
	usleep(150000);
	pthread_kill(k->target, SIGUSR1);
	return NULL;
}

static int setlkw_is_interruptible(void)
{
	int fd = make(D "/pli", NULL);
	int ready[2], go[2];
	pipe(ready);
	pipe(go);
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(D "/pli", O_RDWR);
		lock_range(cfd, F_SETLK, F_WRLCK, 0, 0);
		write(ready[1], "l", 1);
		char c;
		read(go[0], &c, 1);
		_exit(0);
	}
	char c;
	read(ready[0], &c, 1);
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigaction(SIGUSR1, &sa, &old);
	struct kicker k = { .target = pthread_self() };
	pthread_t t;
	pthread_create(&t, NULL, kick, &k);
	int rc = result(lock_range(fd, F_SETLKW, F_WRLCK, 0, 0));
	pthread_join(t, NULL);
	sigaction(SIGUSR1, &old, NULL);
	write(go[1], "g", 1);
	waitpid(pid, NULL, 0);
	close(fd);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	CHECK(rc == -EINTR, "F_SETLKW under a signal: %d, want %d", rc, -EINTR);
	return 0;
}

static int ofd_locks_belong_to_the_open_file(void)
{
	close(make(D "/ofd", NULL));
	int a = open(D "/ofd", O_RDWR), b = open(D "/ofd", O_RDWR);
	int la = result(lock_range(a, F_OFD_SETLK, F_WRLCK, 0, 10));
	int lb = result(lock_range(b, F_OFD_SETLK, F_WRLCK, 5, 1));
	int posix = result(lock_range(b, F_SETLK, F_RDLCK, 0, 1));
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	fcntl(b, F_OFD_GETLK, &fl);
	struct flock pid_set = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_pid = 1 };
	int bad_pid = result(fcntl(b, F_OFD_SETLK, &pid_set));
	close(a);
	int after = result(lock_range(b, F_OFD_SETLK, F_WRLCK, 5, 1));
	close(b);
	CHECK(la == 0 && lb == -EAGAIN, "two open files: %d %d", la, lb);
	CHECK(posix == -EAGAIN, "a POSIX lock against it: %d", posix);
	CHECK(fl.l_type == F_WRLCK && fl.l_pid == -1 && fl.l_len == 10, "F_OFD_GETLK: %d pid %d",
	      fl.l_type, fl.l_pid);
	CHECK(bad_pid == -EINVAL, "l_pid set: %d", bad_pid);
	CHECK(after == 0, "after the holder closed: %d", after);
	return 0;
}

static int lock_needs_the_access_mode(void)
{
	close(make(D "/plm", NULL));
	int ro = open(D "/plm", O_RDONLY);
	int wr = result(lock_range(ro, F_SETLK, F_WRLCK, 0, 1));
	int rd = result(lock_range(ro, F_SETLK, F_RDLCK, 0, 1));
	close(ro);
	CHECK(wr == -EBADF && rd == 0, "write lock on O_RDONLY: %d, read lock %d", wr, rd);
	return 0;
}

static int memfd_seals_grow_and_shrink(void)
{
	int fd = memfd_create("seals", MFD_ALLOW_SEALING);
	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	int none = fcntl(fd, F_GET_SEALS);
	write(fd, "12345678", 8);
	int add = result(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK));
	int seals = fcntl(fd, F_GET_SEALS);
	int grow = result(ftruncate(fd, 16));
	int shrink = result(ftruncate(fd, 4));
	int same = result(ftruncate(fd, 8));
	int inside = result(pwrite(fd, "ab", 2, 2));
	int past = result(pwrite(fd, "ab", 2, 7));
	int falloc = result(fallocate(fd, 0, 0, 64));
	close(fd);
	CHECK(none == 0, "seals at first: %d", none);
	CHECK(add == 0 && seals == (F_SEAL_GROW | F_SEAL_SHRINK), "added: %d, seals %#x", add,
	      seals);
	CHECK(grow == -EPERM && shrink == -EPERM && same == 0, "ftruncate: %d %d %d", grow,
	      shrink, same);
	CHECK(inside == 0 && past == -EPERM, "writes: inside %d, past the end %d", inside, past);
	CHECK(falloc == -EPERM, "fallocate past the end: %d", falloc);
	return 0;
}

static int memfd_seal_write(void)
{
	int fd = memfd_create("sealw", MFD_ALLOW_SEALING);
	ftruncate(fd, 4096);
	int add = result(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	int w = result(write(fd, "x", 1));
	void *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int rw_err = rw == MAP_FAILED ? -errno : 0;
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	int ro_ok = ro != MAP_FAILED;
	int prot = ro_ok ? result(mprotect(ro, 4096, PROT_READ | PROT_WRITE)) : 0;
	void *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	int priv_ok = priv != MAP_FAILED;
	int punch = result(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
	if (ro_ok)
		munmap(ro, 4096);
	if (priv_ok)
		munmap(priv, 4096);
	close(fd);
	CHECK(add == 0 && w == -EPERM, "F_SEAL_WRITE: %d, write %d", add, w);
	CHECK(rw_err == -EPERM, "a writable shared mapping: %d, want %d", rw_err, -EPERM);
	CHECK(ro_ok && prot == -EACCES, "read-only shared %d, mprotect to write %d", ro_ok, prot);
	CHECK(priv_ok, "a private writable mapping: %s", strerror(errno));
	CHECK(punch == -EPERM, "punching a hole: %d", punch);
	return 0;
}

static int seal_write_is_busy_while_mapped_writable(void)
{
	int fd = memfd_create("sealb", MFD_ALLOW_SEALING);
	ftruncate(fd, 4096);
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	p[0] = 'q';
	int busy = result(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	munmap(p, 4096);
	int ok = result(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	close(fd);
	CHECK(busy == -EBUSY, "while mapped: %d, want %d", busy, -EBUSY);
	CHECK(ok == 0, "after munmap: %d", ok);
	return 0;
}

static int seal_future_write_keeps_old_mappings(void)
{
	int fd = memfd_create("sealf", MFD_ALLOW_SEALING);
	ftruncate(fd, 4096);
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int add = result(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE));
	p[0] = 'z';
	char c = 0;
	pread(fd, &c, 1, 0);
	int w = result(write(fd, "x", 1));
	void *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int q_err = q == MAP_FAILED ? -errno : 0;
	munmap(p, 4096);
	close(fd);
	CHECK(add == 0, "F_SEAL_FUTURE_WRITE: %d", add);
	CHECK(c == 'z', "a store through the old mapping read back as %d", c);
	CHECK(w == -EPERM && q_err == -EPERM, "write %d, new mapping %d", w, q_err);
	return 0;
}

static int seal_seal_and_unsealable_files(void)
{
	int fd = memfd_create("seals2", MFD_ALLOW_SEALING);
	int unknown = result(fcntl(fd, F_ADD_SEALS, 0x100));
	fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL);
	int sealed = result(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
	close(fd);
	int plain = memfd_create("plain", 0);
	int plain_seals = fcntl(plain, F_GET_SEALS);
	int plain_add = result(fcntl(plain, F_ADD_SEALS, F_SEAL_GROW));
	close(plain);
	int p[2];
	pipe(p);
	int pipe_seals = result(fcntl(p[0], F_GET_SEALS));
	close(p[0]);
	close(p[1]);
	CHECK(unknown == -EINVAL, "an unknown seal: %d", unknown);
	CHECK(sealed == -EPERM, "after F_SEAL_SEAL: %d", sealed);
	CHECK(plain_seals == F_SEAL_SEAL && plain_add == -EPERM,
	      "without MFD_ALLOW_SEALING: seals %d, add %d", plain_seals, plain_add);
	CHECK(pipe_seals == -EINVAL, "a pipe: %d", pipe_seals);
	return 0;
}

static int mincore_count(void *p, size_t len)
{
	unsigned char vec[64];
	if (mincore(p, len, vec) != 0)
		return -1;
	int n = 0;
	for (size_t i = 0; i < len / 4096; i++)
		n += vec[i] & 1;
	return n;
}

static int mlock_populates_and_checks_ranges(void)
{
	size_t len = 8 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int before = mincore_count(p, len);
	int locked = result(mlock(p + 100, 2 * 4096));
	int after = mincore_count(p, len);
	int unlocked = result(munlock(p, len));
	munmap(p + 4 * 4096, 4 * 4096);
	int hole = result(mlock(p, len));
	int hole_un = result(munlock(p, len));
	int zero = result(mlock(p, 0));
	munmap(p, len);
	CHECK(before == 0, "resident before: %d", before);
	CHECK(locked == 0 && after == 3, "mlock of 2 pages from +100: %d, resident %d", locked,
	      after);
	CHECK(unlocked == 0, "munlock: %d", unlocked);
	CHECK(hole == -ENOMEM && hole_un == -ENOMEM, "over a hole: %d %d", hole, hole_un);
	CHECK(zero == 0, "zero length: %d", zero);
	return 0;
}

static int mlock2_onfault_and_flags(void)
{
	size_t len = 4 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int onfault = result(mlock2(p, len, MLOCK_ONFAULT));
	int resident = mincore_count(p, len);
	int plain = result(mlock2(p, len, 0));
	int populated = mincore_count(p, len);
	int bad = result(mlock2(p, len, 2));
	munlock(p, len);
	munmap(p, len);
	CHECK(onfault == 0 && resident == 0, "MLOCK_ONFAULT: %d, resident %d", onfault, resident);
	CHECK(plain == 0 && populated == 4, "mlock2(0): %d, resident %d", plain, populated);
	CHECK(bad == -EINVAL, "bad flags: %d", bad);
	return 0;
}

static int mlockall_future_locks_new_mappings(void)
{
	int bad0 = result(mlockall(0));
	int bad_onfault = result(mlockall(MCL_ONFAULT));
	int bad_bits = result(mlockall(8));
	int future = result(mlockall(MCL_FUTURE));
	size_t len = 4 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int resident = mincore_count(p, len);
	int undo = result(munlockall());
	char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int resident_q = mincore_count(q, len);
	munmap(p, len);
	munmap(q, len);
	CHECK(bad0 == -EINVAL && bad_onfault == -EINVAL && bad_bits == -EINVAL,
	      "bad flags: %d %d %d", bad0, bad_onfault, bad_bits);
	CHECK(future == 0 && resident == 4, "MCL_FUTURE: %d, a new mapping's resident pages %d",
	      future, resident);
	CHECK(undo == 0 && resident_q == 0, "munlockall: %d, then %d resident", undo, resident_q);
	return 0;
}

static int madvise_free_private_anonymous_only(void)
{
	size_t len = 2 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 7, len);
	int freed = result(madvise(p, len, MADV_FREE));
	int left = p[0];
	p[1] = 9;
	int kept = p[1];
	char *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int shared = result(madvise(s, len, MADV_FREE));
	munmap(p, len);
	munmap(s, len);
	CHECK(freed == 0 && (left == 7 || left == 0), "MADV_FREE: %d, then %d", freed, left);
	CHECK(kept == 9, "a store after MADV_FREE read back %d", kept);
	CHECK(shared == -EINVAL, "shared memory: %d, want %d", shared, -EINVAL);
	return 0;
}

/* Forks a child that reads p[0]: its exit status, or the signal it died of. */
static int child_reads(volatile char *p)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(p[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

static int madvise_dontfork_leaves_the_child_without_it(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 42;
	int dontfork = result(madvise(p, 4096, MADV_DONTFORK));
	int in_child = child_reads(p);
	int dofork = result(madvise(p, 4096, MADV_DOFORK));
	int back = child_reads(p);
	munmap(p, 4096);
	CHECK(dontfork == 0 && in_child == -SIGSEGV, "MADV_DONTFORK: %d, child %d", dontfork,
	      in_child);
	CHECK(dofork == 0 && back == 42, "MADV_DOFORK: %d, child %d", dofork, back);
	return 0;
}

static int madvise_dump_hints_and_growsdown(void)
{
	char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
	CHECK(p != MAP_FAILED, "MAP_GROWSDOWN: %s", strerror(errno));
	for (int i = 0; i < 4; i++)
		p[i * 4096] = (char)i + 1;
	int sum = p[0] + p[4096] + p[2 * 4096] + p[3 * 4096];
	int dontdump = result(madvise(p, 4 * 4096, MADV_DONTDUMP));
	int dodump = result(madvise(p, 4 * 4096, MADV_DODUMP));
	munmap(p, 4 * 4096);
	int unmapped = result(madvise(p, 4096, MADV_DONTDUMP));
	CHECK(sum == 10, "the mapping's stores read back as %d", sum);
	CHECK(dontdump == 0 && dodump == 0, "MADV_DONTDUMP %d, MADV_DODUMP %d", dontdump, dodump);
	CHECK(unmapped == -ENOMEM, "unmapped: %d", unmapped);
	return 0;
}

/* A store below a MAP_GROWSDOWN mapping grows it down to that page, as
 * Linux's expand_stack does; the child reports the maps line it sees. */
static int growsdown_mapping_grows_on_a_fault_below(void)
{
	/* 4M of free space, then the mapping at its top 64K. */
	char *area = mmap(NULL, 4 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED, "reserve: %s", strerror(errno));
	munmap(area, 4 << 20);
	char *top = area + (4 << 20) - 65536;
	char *p = mmap(top, 65536, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED, -1, 0);
	CHECK(p == top, "MAP_GROWSDOWN at %p: %s", (void *)top, strerror(errno));
	char *below = p - 5 * 4096 + 100;
	pid_t pid = fork();
	if (pid == 0) {
		*below = 7;
		char maps[16384], want[64];
		int fd = open("/proc/self/maps", O_RDONLY);
		ssize_t n = read(fd, maps, sizeof(maps) - 1);
		maps[n > 0 ? n : 0] = 0;
		snprintf(want, sizeof(want), "%lx-%lx rw-p", (unsigned long)(p - 5 * 4096),
			 (unsigned long)(p + 65536));
		_exit(*below == 7 && strstr(maps, want) ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	munmap(p, 65536);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "store 5 pages below: child status %#x (grown VMA not in maps, or SIGSEGV)", status);
	return 0;
}

/*
 * A read whose buffer runs into an unmapped page returns what landed before
 * the hole (Linux: copy_to_iter's short copy) from a file and /dev/zero;
 * Linux's arm64 copy may stop up to a cache line short of the hole, so only
 * "some, and no more than fits" is asserted. A pipe is different: a short
 * copy of its first buffer takes nothing, EFAULT, and every byte stays in
 * the pipe (pipe_read).
 */
static int read_stops_at_a_missing_page(void)
{
	enum { LEN = 3000, FITS = 1000 };
	char *area = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED, "mmap: %s", strerror(errno));
	munmap(area + 4096, 4096);
	char *buf = area + 4096 - FITS, data[LEN], rest[LEN];
	for (int i = 0; i < LEN; i++)
		data[i] = (char)(i * 7 + 1);

	int fd = make(D "/short-read", NULL);
	CHECK(fd >= 0 && write(fd, data, LEN) == LEN, "file: %s", strerror(errno));
	ssize_t n = pread(fd, buf, LEN, 0);
	CHECK(n > 0 && n <= FITS && memcmp(buf, data, n) == 0, "file: %zd (errno %d), want 1..%d",
	      n, errno, FITS);
	close(fd);
	unlink(D "/short-read");

	int p[2];
	CHECK(pipe(p) == 0 && write(p[1], data, LEN) == LEN, "pipe: %s", strerror(errno));
	errno = 0;
	n = read(p[0], buf, LEN);
	CHECK(n == -1 && errno == EFAULT, "pipe: %zd (errno %d), want EFAULT", n, errno);
	ssize_t left = read(p[0], rest, LEN);
	CHECK(left == LEN && memcmp(rest, data, LEN) == 0,
	      "pipe kept %zd bytes after a read that failed, want all %d", left, LEN);
	close(p[0]);
	close(p[1]);

	memset(buf, 0x55, FITS);
	int zero = open("/dev/zero", O_RDONLY);
	n = read(zero, buf, LEN);
	close(zero);
	CHECK(n > 0 && n <= FITS && buf[0] == 0 && buf[n - 1] == 0,
	      "/dev/zero: %zd (errno %d), want 1..%d zeros", n, errno, FITS);
	munmap(area, 4096);
	return 0;
}

/*
 * readv and writev whose second buffer is not mapped move the first one's
 * bytes and report them, not EFAULT (do_loop_readv_writev stops at the
 * error once something moved).
 */
static int readv_writev_stop_at_a_bad_buffer(void)
{
	int fd = make(D "/iov", "0123456789abcdef");
	CHECK(fd >= 0, "create: %s", strerror(errno));
	char first[10] = { 0 };
	struct iovec iov[2] = { { first, sizeof(first) }, { (void *)16, 6 } };
	lseek(fd, 0, SEEK_SET);
	ssize_t n = readv(fd, iov, 2);
	CHECK(n == 10 && memcmp(first, "0123456789", 10) == 0, "readv: %zd (errno %d), want 10",
	      n, errno);
	struct iovec out[2] = { { "ABCDEFGHIJ", 10 }, { (void *)16, 6 } };
	lseek(fd, 0, SEEK_SET);
	n = writev(fd, out, 2);
	CHECK(n == 10, "writev: %zd (errno %d), want 10", n, errno);
	char back[17] = { 0 };
	CHECK(pread(fd, back, 16, 0) == 16 && strcmp(back, "ABCDEFGHIJabcdef") == 0,
	      "file holds %s", back);
	close(fd);
	unlink(D "/iov");
	return 0;
}

static int teardown(void)
{
	CHECK(umount(D) == 0, "umount %s: %s", D, strerror(errno));
	rmdir(D);
	return 0;
}

static const struct test tests[] = {
	TEST(setup),
	TEST(chmod_changes_permission_bits_only),
	TEST(fchmodat2_flags),
	TEST(chown_records_owner_and_group),
	TEST(lchown_changes_the_link_itself),
	TEST(chown_clears_setuid),
	TEST(create_sets_all_three_times),
	TEST(write_moves_mtime_and_ctime_not_atime),
	TEST(read_moves_an_older_atime),
	TEST(truncate_and_chmod_move_the_right_times),
	TEST(utimensat_omit_and_now),
	TEST(utimensat_errors),
	TEST(futimens_null_is_now),
	TEST(utimensat_nofollow_sets_the_link),
	TEST(directory_times_move_with_its_entries),
	TEST(hard_links_count_names),
	TEST(link_errors),
	TEST(linkat_follow_and_empty_path),
	TEST(symlinkat_and_readlink),
	TEST(a_fifo_is_one_pipe_for_all_openers),
	TEST(mknod_regular_and_errors),
	TEST(a_device_node_without_a_driver),
	TEST(fchdir_moves_the_cwd),
	TEST(close_range_closes_or_marks),
	TEST(truncate_by_path),
	TEST(statfs_of_a_sized_tmpfs),
	TEST(statfs_of_proc_and_errors),
	TEST(sendfile_copies_between_files),
	TEST(sendfile_errors),
	TEST(copy_file_range_copies_and_checks),
	TEST(flock_belongs_to_the_open_file),
	TEST(flock_shared_locks_coexist),
	TEST(flock_waits_for_the_holder),
	TEST(posix_locks_conflict_across_processes),
	TEST(posix_unlock_splits_and_merges),
	TEST(posix_lock_goes_with_any_close),
	TEST(posix_lock_goes_when_its_process_exits),
	TEST(setlkw_waits_until_the_lock_goes),
	TEST(setlkw_is_interruptible),
	TEST(ofd_locks_belong_to_the_open_file),
	TEST(lock_needs_the_access_mode),
	TEST(memfd_seals_grow_and_shrink),
	TEST(memfd_seal_write),
	TEST(seal_write_is_busy_while_mapped_writable),
	TEST(seal_future_write_keeps_old_mappings),
	TEST(seal_seal_and_unsealable_files),
	TEST(mlock_populates_and_checks_ranges),
	TEST(mlock2_onfault_and_flags),
	TEST(mlockall_future_locks_new_mappings),
	TEST(madvise_free_private_anonymous_only),
	TEST(madvise_dontfork_leaves_the_child_without_it),
	TEST(madvise_dump_hints_and_growsdown),
	TEST(growsdown_mapping_grows_on_a_fault_below),
	TEST(read_stops_at_a_missing_page),
	TEST(readv_writev_stop_at_a_bad_buffer),
	TEST(teardown),
};

int main(void)
{
	return run_tests("files", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
