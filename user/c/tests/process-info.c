/*
 * What a process asks about itself and its files through glibc: umask
 * (applied to new files and directories, inherited across fork), its ids
 * and groups, sysinfo, its CPU affinity and CPU count (and
 * /sys/devices/system/cpu/online, which glibc reads), gettimeofday, and
 * fsync/fdatasync/syncfs. A static glibc program: make test runs it on
 * faultline, make test-linux on Debian's Linux 6.12 (as root, like
 * faultline's processes), and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../proc.h"
#include "check.h"

static int umask_masks_new_files_and_is_inherited(void)
{
	mkdir("/tmp", 01777);
	mode_t boot = umask(027);
	int fd = open("/tmp/umask-file", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	int dir = mkdir("/tmp/umask-dir", 0777);
	struct stat f, d;
	int fs = fstat(fd, &f), ds = stat("/tmp/umask-dir", &d);
	close(fd);
	unlink("/tmp/umask-file");
	rmdir("/tmp/umask-dir");
	pid_t child = fork();
	if (child == 0)
		_exit(umask(0));
	int status = 0;
	waitpid(child, &status, 0);
	mode_t mine = umask(boot);
	CHECK(boot == 022, "the umask a program starts with: %03o, want 022", boot);
	CHECK(fd >= 0 && dir == 0 && fs == 0 && ds == 0, "create: %s", strerror(errno));
	CHECK((f.st_mode & 07777) == 0640, "a 0666 file under 027: %04o", f.st_mode & 07777);
	CHECK((d.st_mode & 07777) == 0750, "a 0777 directory under 027: %04o", d.st_mode & 07777);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 027, "the child's umask: %03o",
	      WEXITSTATUS(status));
	CHECK(mine == 027, "umask returned %03o, want 027", mine);
	return 0;
}

static int ids_and_groups_are_roots(void)
{
	uid_t r = 1, e = 1, s = 1;
	gid_t gr = 1, ge = 1, gs = 1;
	int u = getresuid(&r, &e, &s), g = getresgid(&gr, &ge, &gs);
	int groups = getgroups(0, NULL);
	long bad = syscall(SYS_getgroups, -1, NULL);
	int bad_err = errno;
	CHECK(u == 0 && r == 0 && e == 0 && s == 0, "getresuid: %d, %d %d %d", u, r, e, s);
	CHECK(g == 0 && gr == 0 && ge == 0 && gs == 0, "getresgid: %d, %d %d %d", g, gr, ge, gs);
	CHECK(groups == 0, "supplementary groups: %d, want 0", groups);
	CHECK(bad == -1 && bad_err == EINVAL, "getgroups(-1): %ld, errno %d", bad, bad_err);
	return 0;
}

static int sysinfo_agrees_with_meminfo(void)
{
	struct sysinfo si;
	CHECK(sysinfo(&si) == 0, "sysinfo: %s", strerror(errno));
	long total_kb = meminfo_kb("MemTotal");
	unsigned long long total = (unsigned long long)si.totalram * si.mem_unit;
	CHECK(si.mem_unit >= 1 && total == (unsigned long long)total_kb * 1024,
	      "totalram %llu bytes, MemTotal %ld kB", total, total_kb);
	CHECK(si.freeram > 0 && si.freeram < si.totalram, "freeram %lu of %lu", si.freeram,
	      si.totalram);
	CHECK(si.procs >= 1 && si.totalswap == 0, "procs %u, swap %lu", si.procs, si.totalswap);
	return 0;
}

static int the_affinity_mask_holds_every_online_cpu(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	long bytes = syscall(SYS_sched_getaffinity, 0, sizeof(set), &set);
	char small[4];
	long bad = syscall(SYS_sched_getaffinity, 0, sizeof(small), small);
	int bad_err = errno;
	int count = CPU_COUNT(&set);
	int contiguous = 1;
	for (int cpu = 0; cpu < count; cpu++)
		contiguous &= CPU_ISSET(cpu, &set) != 0;
	char online[32] = "", want[32];
	read_file("/sys/devices/system/cpu/online", online, sizeof(online));
	if (count == 1)
		snprintf(want, sizeof(want), "0\n");
	else
		snprintf(want, sizeof(want), "0-%d\n", count - 1);
	CHECK(bytes == 8, "sched_getaffinity returned %ld bytes, want 8", bytes);
	CHECK(strcmp(online, want) == 0, "/sys/devices/system/cpu/online \"%s\", want \"%s\"",
	      online, want);
	CHECK(count >= 1 && contiguous, "%d CPUs, contiguous %d", count, contiguous);
	CHECK(get_nprocs() == count, "get_nprocs %d, the mask %d", get_nprocs(), count);
	CHECK(bad == -1 && bad_err == EINVAL, "a 4-byte mask: %ld, errno %d", bad, bad_err);
	return 0;
}

static int gettimeofday_is_the_realtime_clock(void)
{
	struct timeval tv;
	struct timespec ts;
	struct {
		int minuteswest, dsttime;
	} tz = { 99, 99 };
	clock_gettime(CLOCK_REALTIME, &ts);
	long rc = syscall(SYS_gettimeofday, &tv, &tz);
	long long diff_us = ((long long)tv.tv_sec - ts.tv_sec) * 1000000 + tv.tv_usec -
			    ts.tv_nsec / 1000;
	CHECK(rc == 0, "gettimeofday: %s", strerror(errno));
	CHECK(diff_us >= 0 && diff_us < 1000000, "%lld us after CLOCK_REALTIME", diff_us);
	CHECK(tz.minuteswest == 0 && tz.dsttime == 0, "time zone %d, %d: want UTC",
	      tz.minuteswest, tz.dsttime);
	return 0;
}

static int fsync_succeeds_on_files_and_refuses_pipes(void)
{
	mkdir("/tmp", 01777);
	int fd = open("/tmp/fsync-file", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	int wrote = write(fd, "data", 4);
	int f = fsync(fd), d = fdatasync(fd), s = syncfs(fd);
	close(fd);
	unlink("/tmp/fsync-file");
	int p[2];
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	int on_pipe = fsync(p[0]), pipe_err = errno;
	close(p[0]);
	close(p[1]);
	int bad = fsync(-1), bad_err = errno;
	CHECK(wrote == 4 && f == 0 && d == 0 && s == 0, "fsync %d, fdatasync %d, syncfs %d", f, d,
	      s);
	CHECK(on_pipe == -1 && pipe_err == EINVAL, "fsync of a pipe: %d, errno %d", on_pipe,
	      pipe_err);
	CHECK(bad == -1 && bad_err == EBADF, "fsync(-1): %d, errno %d", bad, bad_err);
	return 0;
}

static const struct test tests[] = {
	TEST(umask_masks_new_files_and_is_inherited),
	TEST(ids_and_groups_are_roots),
	TEST(sysinfo_agrees_with_meminfo),
	TEST(the_affinity_mask_holds_every_online_cpu),
	TEST(gettimeofday_is_the_realtime_clock),
	TEST(fsync_succeeds_on_files_and_refuses_pipes),
};

int main(void)
{
	return run_tests("process-info", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
