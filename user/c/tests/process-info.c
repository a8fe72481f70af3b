/*
 * What a process asks about itself and its files through glibc: umask
 * (applied to new files and directories, inherited across fork), its ids
 * and groups, its capabilities (capget, capset) and no_new_privs, its
 * resource limits (inherited across fork),
 * sysinfo, its CPU affinity and CPU count (and /sys/devices/system/cpu/
 * online, which glibc reads, and the per-CPU directories), gettimeofday,
 * fsync/fdatasync/syncfs, and its minor faults as getrusage and wait4
 * count them. A static glibc program: make test runs it
 * on faultline, make test-linux on Debian's Linux 6.12 (as root, like
 * faultline's processes), and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <string.h>
#include <sys/mman.h>
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

/* setrlimit's soft and hard limits pass to a child at fork, as POSIX
 * and Linux's copy_process have them (a shell's ulimit relies on it). */
static int resource_limits_are_inherited(void)
{
	struct rlimit saved, lowered = {.rlim_cur = 123, .rlim_max = 456};
	getrlimit(RLIMIT_NOFILE, &saved);
	int set = setrlimit(RLIMIT_NOFILE, &lowered);
	int pipefd[2];
	pipe(pipefd);
	pid_t child = fork();
	if (child == 0) {
		struct rlimit got = {0};
		getrlimit(RLIMIT_NOFILE, &got);
		write(pipefd[1], &got, sizeof(got));
		_exit(0);
	}
	struct rlimit got = {0};
	ssize_t n = read(pipefd[0], &got, sizeof(got));
	waitpid(child, NULL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	/* Root may raise the hard limit again. */
	setrlimit(RLIMIT_NOFILE, &saved);
	CHECK(set == 0, "setrlimit: %s", strerror(errno));
	CHECK(n == sizeof(got) && got.rlim_cur == 123 && got.rlim_max == 456,
	      "the child's RLIMIT_NOFILE: %ld %lu %lu, want 123 456", (long)n,
	      (unsigned long)got.rlim_cur, (unsigned long)got.rlim_max);
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

/* capget(2), as libcap calls it: root holds every capability Linux 6.12
 * knows (0..40) effective and permitted, none inheritable. */
static int root_holds_every_capability(void)
{
	struct {
		unsigned int version;
		int pid;
	} probe = { 0, 0 }, bad = { 0, 0 }, v3 = { 0x20080522, 0 }, v1 = { 0x19980330, 0 },
	  neg = { 0x20080522, -1 }, none = { 0x20080522, 999999 };
	struct {
		unsigned int effective, permitted, inheritable;
	} caps[2], one[2];
	memset(one, 0x5a, sizeof(one));
	long p = syscall(SYS_capget, &probe, NULL);
	long b = syscall(SYS_capget, &bad, caps);
	int b_err = errno;
	long c = syscall(SYS_capget, &v3, caps);
	long o = syscall(SYS_capget, &v1, one);
	long n = syscall(SYS_capget, &neg, caps);
	int n_err = errno;
	long e = syscall(SYS_capget, &none, caps);
	int e_err = errno;
	long f = syscall(SYS_capget, (void *)8, caps);
	int f_err = errno;
	CHECK(p == 0 && probe.version == 0x20080522, "probe: %ld, version %#x", p, probe.version);
	CHECK(b == -1 && b_err == EINVAL && bad.version == 0x20080522,
	      "an unknown version: %ld, errno %d, version %#x", b, b_err, bad.version);
	CHECK(c == 0, "capget: %s", strerror(errno));
	CHECK(caps[0].effective == 0xffffffff && caps[0].permitted == 0xffffffff &&
		      caps[0].inheritable == 0,
	      "low: effective %#x permitted %#x inheritable %#x", caps[0].effective,
	      caps[0].permitted, caps[0].inheritable);
	CHECK(caps[1].effective == 0x1ff && caps[1].permitted == 0x1ff && caps[1].inheritable == 0,
	      "high: effective %#x permitted %#x inheritable %#x", caps[1].effective,
	      caps[1].permitted, caps[1].inheritable);
	CHECK(o == 0 && one[0].effective == 0xffffffff && one[1].effective == 0x5a5a5a5a,
	      "version 1: %ld, %#x, then %#x", o, one[0].effective, one[1].effective);
	CHECK(n == -1 && n_err == EINVAL, "pid -1: %ld, errno %d", n, n_err);
	CHECK(e == -1 && e_err == ESRCH, "no such pid: %ld, errno %d", e, e_err);
	CHECK(f == -1 && f_err == EFAULT, "a bad header: %ld, errno %d", f, f_err);
	return 0;
}

/* capset(2) in a child, as a program dropping privileges does: a set may
 * shrink, never grow back, and is the process's own. */
static int capset_drops_and_cannot_regain(void)
{
	pid_t child = fork();
	if (child == 0) {
		struct {
			unsigned int version;
			int pid;
		} hdr = { 0x20080522, 0 }, other = { 0x20080522, 1 };
		struct {
			unsigned int effective, permitted, inheritable;
		} caps[2], now[2];
		if (syscall(SYS_capget, &hdr, caps) != 0)
			_exit(1);
		caps[0].effective &= ~(1u << 21); /* CAP_SYS_ADMIN */
		caps[0].permitted &= ~(1u << 21);
		if (syscall(SYS_capset, &hdr, caps) != 0)
			_exit(2);
		if (syscall(SYS_capget, &hdr, now) != 0 || now[0].effective != caps[0].effective ||
		    now[0].permitted != caps[0].permitted || now[1].permitted != 0x1ff)
			_exit(3);
		caps[0].permitted |= 1u << 21;
		if (syscall(SYS_capset, &hdr, caps) != -1 || errno != EPERM)
			_exit(4);
		caps[0].permitted &= ~(1u << 21);
		caps[0].effective |= 1u << 21;
		if (syscall(SYS_capset, &hdr, caps) != -1 || errno != EPERM)
			_exit(5);
		caps[0].effective &= ~(1u << 21);
		if (syscall(SYS_capset, &other, caps) != -1 || errno != EPERM)
			_exit(6);
		if (syscall(SYS_capset, &hdr, (void *)8) != -1 || errno != EFAULT)
			_exit(7);
		_exit(0);
	}
	int status = -1;
	waitpid(child, &status, 0);
	struct {
		unsigned int version;
		int pid;
	} hdr = { 0x20080522, 0 };
	struct {
		unsigned int effective, permitted, inheritable;
	} mine[2];
	long rc = syscall(SYS_capget, &hdr, mine);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child's capset steps: failed at step %d", WEXITSTATUS(status));
	CHECK(rc == 0 && mine[0].effective == 0xffffffff, "the parent's sets: %ld, %#x", rc,
	      mine[0].effective);
	return 0;
}

/* PR_SET_NO_NEW_PRIVS, as sandboxes and stress-ng set it: one way, and
 * inherited by children. */
static int no_new_privs_is_one_way_and_inherited(void)
{
	int before = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	pid_t child = fork();
	if (child == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) != -1 || errno != EINVAL)
			_exit(1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(2);
		if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
			_exit(3);
		if (prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0) != -1 || errno != EINVAL)
			_exit(4);
		pid_t grandchild = fork();
		if (grandchild == 0)
			_exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 5);
		int status = -1;
		waitpid(grandchild, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	int status = -1;
	waitpid(child, &status, 0);
	int after = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	CHECK(before == 0 && after == 0, "the parent's flag: %d, then %d", before, after);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed at step %d",
	      WEXITSTATUS(status));
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

/* The per-CPU sysfs directories that stress-ng and lscpu count CPUs by,
 * and the possible/present lists glibc's get_nprocs_conf reads. */
static int every_cpu_has_a_sysfs_directory(void)
{
	int count = get_nprocs();
	char want[32], possible[32] = "", present[32] = "";
	if (count == 1)
		snprintf(want, sizeof(want), "0\n");
	else
		snprintf(want, sizeof(want), "0-%d\n", count - 1);
	read_file("/sys/devices/system/cpu/possible", possible, sizeof(possible));
	read_file("/sys/devices/system/cpu/present", present, sizeof(present));
	CHECK(strcmp(possible, want) == 0, "possible \"%s\", want \"%s\"", possible, want);
	CHECK(strcmp(present, want) == 0, "present \"%s\", want \"%s\"", present, want);
	CHECK(get_nprocs_conf() == count, "get_nprocs_conf %d, want %d", get_nprocs_conf(),
	      count);
	int dirs = 0;
	DIR *d = opendir("/sys/devices/system/cpu");
	CHECK(d != NULL, "opendir: %s", strerror(errno));
	for (struct dirent *e; (e = readdir(d));)
		dirs += strncmp(e->d_name, "cpu", 3) == 0 && e->d_name[3] >= '0' &&
			e->d_name[3] <= '9';
	closedir(d);
	CHECK(dirs == count, "%d cpuN directories, want %d", dirs, count);
	for (int cpu = 0; cpu < count; cpu++) {
		char path[64], online[8] = "";
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		read_file(path, online, sizeof(online));
		CHECK(strcmp(online, "1\n") == 0, "%s: \"%s\"", path, online);
	}
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

/* Pages each faulting side below writes: one minor fault apiece. */
#define FAULT_PAGES 64

/* Writes FAULT_PAGES pages of a new private mapping, each with a fault of
 * its own: small folios only, so no fault maps more than its page. */
static void *fault_in_pages(void *unused)
{
	(void)unused;
	long len = FAULT_PAGES * 4096L;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (long off = 0; off < len; off += 4096)
		p[off] = 1;
	munmap(p, len);
	return NULL;
}

static int minor_faults_count_per_thread_and_for_children(void)
{
	struct rusage self0, self1, thread0, thread1, waited, children;
	getrusage(RUSAGE_SELF, &self0);
	getrusage(RUSAGE_THREAD, &thread0);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, fault_in_pages, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	getrusage(RUSAGE_THREAD, &thread1);
	getrusage(RUSAGE_SELF, &self1);
	/* The exited thread's faults stay the process's; they were never the
	 * calling thread's. */
	CHECK(self1.ru_minflt - self0.ru_minflt >= FAULT_PAGES, "RUSAGE_SELF grew by %ld",
	      self1.ru_minflt - self0.ru_minflt);
	CHECK(thread1.ru_minflt - thread0.ru_minflt < FAULT_PAGES / 2,
	      "RUSAGE_THREAD grew by %ld while another thread faulted",
	      thread1.ru_minflt - thread0.ru_minflt);
	pid_t pid = fork();
	if (pid == 0) {
		fault_in_pages(NULL);
		_exit(0);
	}
	CHECK(wait4(pid, NULL, 0, &waited) == pid, "wait4: %s", strerror(errno));
	CHECK(waited.ru_minflt >= FAULT_PAGES, "wait4's ru_minflt %ld", waited.ru_minflt);
	getrusage(RUSAGE_CHILDREN, &children);
	CHECK(children.ru_minflt >= waited.ru_minflt, "RUSAGE_CHILDREN's ru_minflt %ld < %ld",
	      children.ru_minflt, waited.ru_minflt);
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
	TEST(root_holds_every_capability),
	TEST(capset_drops_and_cannot_regain),
	TEST(no_new_privs_is_one_way_and_inherited),
	TEST(resource_limits_are_inherited),
	TEST(sysinfo_agrees_with_meminfo),
	TEST(the_affinity_mask_holds_every_online_cpu),
	TEST(every_cpu_has_a_sysfs_directory),
	TEST(gettimeofday_is_the_realtime_clock),
	TEST(fsync_succeeds_on_files_and_refuses_pipes),
	TEST(minor_faults_count_per_thread_and_for_children),
};

int main(void)
{
	return run_tests("process-info", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
