/*
 * What a process learns about itself from the kernel as ordinary Linux
 * programs do: uname, /proc/self (a link to /proc/PID) and its files
 * (status, cmdline, environ, comm, maps, with mappings split and merged,
 * exe, cwd, fd/, task/, map_files/, /dev/zero's mappings),
 * /proc/thread-self, kthreadd at PID
 * 2, the system's /proc files (cpuinfo, mounts, stat, uptime, loadavg),
 * names of any bytes, statx, and execve of `#!`
 * scripts and of /proc/self/exe. A static glibc program: make test runs it
 * on faultline, make test-linux on Debian's Linux 6.12, and the values it
 * expects are Linux's.
 *
 * Run with --echo-args it prints its arguments, one per line, and exits:
 * the tests use it as a script interpreter and as a program to exec.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../proc.h"
#include "check.h"

static char self_path[PATH_MAX];
static char big[16384];

/* Runs PATH with ARGV and ENVP in a child; its stdout into OUT. Returns
 * the wait status, or -1 with errno (the child's execve errno) if exec
 * failed. */
static int run_capture(const char *path, char *const argv[], char *const envp[], char *out, size_t len)
{
	int pipefd[2], errpipe[2];
	if (pipe2(pipefd, O_CLOEXEC) || pipe2(errpipe, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		execve(path, argv, envp);
		int e = errno;
		write(errpipe[1], &e, sizeof(e));
		_exit(127);
	}
	close(pipefd[1]);
	close(errpipe[1]);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < len && (n = read(pipefd[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pipefd[0]);
	int e = 0;
	int failed = read(errpipe[0], &e, sizeof(e)) == sizeof(e);
	close(errpipe[0]);
	int status;
	waitpid(pid, &status, 0);
	if (failed) {
		errno = e;
		return -1;
	}
	return status;
}

static int uname_says_linux_and_a_version(void)
{
	struct utsname u;
	CHECK(uname(&u) == 0, "uname: %s", strerror(errno));
	CHECK(strcmp(u.sysname, "Linux") == 0, "sysname %s", u.sysname);
	CHECK(strcmp(u.machine, "aarch64") == 0, "machine %s", u.machine);
	int major = 0, minor = 0;
	CHECK(sscanf(u.release, "%d.%d", &major, &minor) == 2 && major >= 5,
	      "release %s is no Linux version", u.release);
	return 0;
}

static int proc_self_is_a_link_to_the_callers_directory(void)
{
	char link[64], want[64];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
	CHECK(n > 0, "readlink /proc/self: %s", strerror(errno));
	link[n] = 0;
	snprintf(want, sizeof(want), "%d", getpid());
	CHECK(strcmp(link, want) == 0, "/proc/self -> %s, pid %s", link, want);
	struct stat l, s;
	CHECK(lstat("/proc/self", &l) == 0 && S_ISLNK(l.st_mode), "lstat /proc/self is no link");
	CHECK(stat("/proc/self/", &s) == 0 && S_ISDIR(s.st_mode), "stat /proc/self/ is no directory");
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", getpid());
	CHECK(access(path, R_OK) == 0, "%s: %s", path, strerror(errno));
	return 0;
}

static int proc_lists_processes_and_a_child_goes_away(void)
{
	int fds[2];
	CHECK(pipe(fds) == 0, "pipe");
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(fds[1]);
		read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	char name[16], path[64], status[4096];
	snprintf(name, sizeof(name), "%d", child);
	int found = 0, self_found = 0;
	DIR *d = opendir("/proc");
	CHECK(d, "opendir /proc: %s", strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		found |= strcmp(e->d_name, name) == 0 && e->d_type == DT_DIR;
		self_found |= strcmp(e->d_name, "self") == 0 && e->d_type == DT_LNK;
	}
	closedir(d);
	snprintf(path, sizeof(path), "/proc/%d/status", child);
	int read_ok = read_file(path, status, sizeof(status)) == 0;
	char want[64];
	snprintf(want, sizeof(want), "\nPPid:\t%d\n", getpid());
	int ppid_ok = read_ok && strstr(status, want);
	close(fds[1]);
	waitpid(child, NULL, 0);
	CHECK(found, "no directory %s in /proc", name);
	CHECK(self_found, "no link self in /proc");
	CHECK(ppid_ok, "%s has no '%s'", path, want + 1);
	struct stat st;
	CHECK(stat(path, &st) == -1 && errno == ENOENT, "%s still there after the reap", path);
	return 0;
}

static int status_describes_the_caller(void)
{
	char buf[4096], want[64];
	CHECK(read_file("/proc/self/status", buf, sizeof(buf)) == 0, "read status");
	const char *lines[] = {"\nPid:\t%d\n", "\nTgid:\t%d\n", "\nPPid:\t%d\n"};
	int values[] = {getpid(), getpid(), getppid()};
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), lines[i], values[i]);
		CHECK(strstr(buf, want), "status has no '%s'", want + 1);
	}
	CHECK(strstr(buf, "\nThreads:\t1\n"), "status: Threads not 1");
	CHECK(strstr(buf, "\nUmask:\t0022\n"), "status: Umask not 0022");
	CHECK(strncmp(buf, "Name:\tproc-files\n", 17) == 0, "status starts '%.20s'", buf);
	CHECK(strstr(buf, "\nState:\tR (running)\n"), "status: State not running");
	long rss = -1;
	char *v = strstr(buf, "\nVmRSS:");
	CHECK(v && sscanf(v + 7, "%ld", &rss) == 1 && rss > 0, "VmRSS %ld", rss);
	char comm[64];
	CHECK(read_file("/proc/self/comm", comm, sizeof(comm)) == 0, "read comm");
	CHECK(strcmp(comm, "proc-files\n") == 0, "comm '%s'", comm);
	return 0;
}

static int exe_names_and_opens_the_program(void)
{
	char link[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
	CHECK(n > 0, "readlink: %s", strerror(errno));
	link[n] = 0;
	CHECK(link[0] == '/', "exe -> %.200s is not absolute", link);
	CHECK(strcmp(link + strlen(link) - 11, "/proc-files") == 0, "exe -> %.200s", link);
	struct stat a, b;
	CHECK(stat("/proc/self/exe", &a) == 0 && stat(link, &b) == 0, "stat: %s", strerror(errno));
	CHECK(a.st_ino == b.st_ino, "exe is inode %lu, %.200s is %lu", a.st_ino, link, b.st_ino);
	char magic[4];
	int fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0 && read(fd, magic, 4) == 4, "open exe: %s", strerror(errno));
	close(fd);
	CHECK(memcmp(magic, "\177ELF", 4) == 0, "exe is no ELF file");
	char cwd[PATH_MAX], cwd_link[PATH_MAX];
	n = readlink("/proc/self/cwd", cwd_link, sizeof(cwd_link) - 1);
	CHECK(n > 0 && getcwd(cwd, sizeof(cwd)), "cwd link: %s", strerror(errno));
	cwd_link[n] = 0;
	CHECK(strcmp(cwd, cwd_link) == 0, "cwd -> %.200s, getcwd %.200s", cwd_link, cwd);
	return 0;
}

static int cmdline_and_environ_hold_what_exec_was_given(void)
{
	char *argv[] = {"first", "--echo-args", "two words", "", "last", NULL};
	char *envp[] = {"A=1", "EMPTY=", NULL};
	char out[512];
	int st = run_capture("/proc/self/exe", argv, envp, out, sizeof(out));
	CHECK(st == 0, "exec of /proc/self/exe: status %d errno %s", st, strerror(errno));
	const char *want = "first\n--echo-args\ntwo words\n\nlast\nenv A=1\nenv EMPTY=\n"
			   "comm exe\n";
	CHECK(strcmp(out, want) == 0, "the child printed '%.200s'", out);
	return 0;
}

static int maps_shows_the_mappings_by_name(void)
{
	CHECK(read_file("/proc/self/maps", big, sizeof(big)) == 0, "read maps");
	char *anon = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED, "mmap");
	int local = 0;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR), stack = (unsigned long)&local;
	CHECK(read_file("/proc/self/maps", big, sizeof(big)) == 0, "read maps");
	munmap(anon, 3 * 4096);
	char want[64];
	snprintf(want, sizeof(want), "%lx-%lx r--p 00000000 00:00 0", (unsigned long)anon,
		 (unsigned long)anon + 3 * 4096);
	CHECK(strstr(big, want), "no line '%s' in maps", want);
	int stack_ok = 0, vdso_ok = 0, vvar_ok = 0, exe_ok = 0;
	for (char *line = strtok(big, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		size_t len = strlen(line);
		if (len > 8 && strcmp(line + len - 7, "[stack]") == 0)
			stack_ok = lo <= stack && stack < hi;
		if (len > 7 && strcmp(line + len - 6, "[vdso]") == 0)
			vdso_ok = lo == vdso && strstr(line, " r-xp ");
		if (len > 7 && strcmp(line + len - 6, "[vvar]") == 0)
			vvar_ok = hi <= vdso && strstr(line, " r--p ");
		if (strstr(line, " r-xp ") && strstr(line, "/proc-files"))
			exe_ok = lo <= (unsigned long)&maps_shows_the_mappings_by_name &&
				 (unsigned long)&maps_shows_the_mappings_by_name < hi;
	}
	CHECK(stack_ok, "no [stack] line holding %lx", stack);
	CHECK(vdso_ok, "no r-xp [vdso] line at %lx", vdso);
	CHECK(vvar_ok, "no r--p [vvar] line below the vDSO");
	CHECK(exe_ok, "no r-xp line of the program holding its code");
	return 0;
}

/* Lines of /proc/self/maps overlapping [p, p + len), and how many of them
 * are the heap. */
static int maps_lines(const char *p, size_t len, int *heap)
{
	if (read_file("/proc/self/maps", big, sizeof(big)) != 0)
		return -1;
	int n = 0;
	*heap = 0;
	for (char *line = strtok(big, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		n += lo < (unsigned long)p + len && (unsigned long)p < hi;
		*heap += strstr(line, "[heap]") != NULL;
	}
	return n;
}

/* Changing part of a mapping splits it, and changing it back joins the parts
 * again (Linux: vma_modify's merge), as /proc/self/maps shows; a heap grown
 * page by page stays one mapping. */
static int a_change_splits_a_mapping_and_changing_back_merges_it(void)
{
	const size_t page = 4096, len = 16 * page;
	int heap;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 7, len);
	int whole = maps_lines(p, len, &heap);
	mprotect(p + 4 * page, page, PROT_READ);
	int split = maps_lines(p, len, &heap);
	mprotect(p + 4 * page, page, PROT_READ | PROT_WRITE);
	int back = maps_lines(p, len, &heap);
	for (size_t i = 0; i < 16; i += 2)
		madvise(p + i * page, page, MADV_DONTFORK);
	int advised = maps_lines(p, len, &heap);
	madvise(p, len, MADV_DOFORK);
	int undone = maps_lines(p, len, &heap);
	int intact = p[0] == 7 && p[len - 1] == 7 && p[4 * page] == 7;
	munmap(p, len);
	for (int i = 0; i < 64; i++)
		sbrk(page);
	maps_lines(p, 0, &heap);
	CHECK(whole == 1 && split == 3 && back == 1, "maps lines: %d, split %d, back %d", whole,
	      split, back);
	CHECK(advised == 16 && undone == 1, "every other page advised: %d lines, undone %d",
	      advised, undone);
	CHECK(intact, "the data moved with the mappings");
	CHECK(heap == 1, "a heap grown by 64 sbrk calls: %d [heap] lines", heap);
	return 0;
}

/* The maps line of the mapping holding `addr`: offset, device, inode and
 * name (empty if none); 0 if found. */
static int maps_entry(void *addr, unsigned long *offset, unsigned *maj, unsigned *min,
		      unsigned long *ino, char *name, size_t name_len)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -1;
	while (f && found && fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		int n = 0;
		if (sscanf(line, "%lx-%lx %*4s %lx %x:%x %lu%n", &start, &end, offset, maj, min, ino,
			   &n) < 6 ||
		    (unsigned long)addr < start || (unsigned long)addr >= end)
			continue;
		char *p = line + n;
		while (*p == ' ')
			p++;
		p[strcspn(p, "\n")] = 0;
		snprintf(name, name_len, "%s", p);
		found = 0;
	}
	if (f)
		fclose(f);
	return found;
}

static int maps_names_shared_memory_and_offsets_as_linux(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long off, ino;
	unsigned maj, min;
	char name[256];
	/* Private anonymous memory shows offset 0 even when its start went. */
	char *anon = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	CHECK(anon != MAP_FAILED && munmap(anon, 2 * page) == 0, "mmap/munmap: %s",
	      strerror(errno));
	CHECK(maps_entry(anon + 2 * page, &off, &maj, &min, &ino, name, sizeof(name)) == 0,
	      "private anonymous: no line");
	munmap(anon + 2 * page, 2 * page);
	CHECK(off == 0 && maj == 0 && min == 0 && ino == 0 && !name[0],
	      "private anonymous: offset %lx, %02x:%02x, inode %lu, name \"%s\"", off, maj, min,
	      ino, name);
	/* Shared anonymous memory is a deleted /dev/zero of the internal tmpfs. */
	char *shared = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	CHECK(shared != MAP_FAILED && munmap(shared, page) == 0, "shared: %s", strerror(errno));
	int got = maps_entry(shared + page, &off, &maj, &min, &ino, name, sizeof(name));
	munmap(shared + page, 3 * page);
	CHECK(got == 0 && !strcmp(name, "/dev/zero (deleted)") && off == (unsigned long)page &&
		      ino != 0,
	      "shared anonymous: offset %lx, inode %lu, name \"%s\"", off, ino, name);
	/* A memfd: its name, its file offset, its device and inode. */
	int fd = memfd_create("maps-test", MFD_CLOEXEC);
	struct stat st;
	CHECK(fd >= 0 && ftruncate(fd, 4 * page) == 0 && fstat(fd, &st) == 0, "memfd: %s",
	      strerror(errno));
	char *m = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 2 * page);
	CHECK(m != MAP_FAILED, "mmap memfd: %s", strerror(errno));
	got = maps_entry(m, &off, &maj, &min, &ino, name, sizeof(name));
	munmap(m, 2 * page);
	close(fd);
	CHECK(got == 0 && !strcmp(name, "/memfd:maps-test (deleted)") &&
		      off == (unsigned long)(2 * page),
	      "memfd: offset %lx, name \"%s\"", off, name);
	CHECK(maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino,
	      "memfd: %02x:%02x inode %lu, stat says %02x:%02x inode %lu", maj, min, ino,
	      major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
	/* The vDSO is no file's. */
	got = maps_entry((void *)getauxval(AT_SYSINFO_EHDR), &off, &maj, &min, &ino, name,
			 sizeof(name));
	CHECK(got == 0 && !strcmp(name, "[vdso]") && off == 0 && maj == 0 && min == 0 && ino == 0,
	      "[vdso]: offset %lx, %02x:%02x, inode %lu, name \"%s\"", off, maj, min, ino, name);
	return 0;
}

static int fd_links_name_open_files(void)
{
	int null = open("/dev/null", O_RDONLY);
	int p[2];
	CHECK(null >= 0 && pipe(p) == 0, "open: %s", strerror(errno));
	char path[64], link[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", null);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(strcmp(link, "/dev/null") == 0, "%s -> %s", path, link);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	struct stat st;
	fstat(p[0], &st);
	char want[64];
	snprintf(want, sizeof(want), "pipe:[%lu]", st.st_ino);
	CHECK(strcmp(link, want) == 0, "%s -> %s, want %s", path, link, want);
	int seen = 0;
	DIR *d = opendir("/proc/self/fd");
	CHECK(d, "opendir: %s", strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && (fd == null || fd == p[0] || fd == p[1] || fd == 0))
			seen++;
	}
	closedir(d);
	close(null);
	close(p[0]);
	close(p[1]);
	CHECK(seen == 4, "/proc/self/fd lists %d of fds 0, %d, %d, %d", seen, null, p[0], p[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", null);
	CHECK(readlink(path, link, sizeof(link)) == -1 && errno == ENOENT, "closed fd still listed");
	return 0;
}

static int an_fd_link_reopens_an_unlinked_file(void)
{
	int fd = open("/tmp/proc-files-unlinked", O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK(fd >= 0, "create: %s", strerror(errno));
	CHECK(write(fd, "kept", 4) == 4, "write");
	unlink("/tmp/proc-files-unlinked");
	char path[64], buf[8] = {0};
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int again = open(path, O_RDONLY);
	CHECK(again >= 0, "open %s: %s", path, strerror(errno));
	int n = read(again, buf, sizeof(buf) - 1);
	close(again);
	close(fd);
	CHECK(n == 4 && strcmp(buf, "kept") == 0, "read %d bytes '%s'", n, buf);
	return 0;
}

static int cpuinfo_mounts_and_uptime_describe_the_system(void)
{
	CHECK(read_file("/proc/cpuinfo", big, sizeof(big)) == 0, "read cpuinfo");
	int cpus = 0;
	for (char *p = big; (p = strstr(p, "processor\t: ")); p++)
		cpus++;
	CHECK(cpus == sysconf(_SC_NPROCESSORS_ONLN), "cpuinfo lists %d CPUs of %ld", cpus,
	      sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(strstr(big, "\nFeatures\t: fp asimd"), "cpuinfo has no fp asimd features");
	CHECK(strstr(big, "\nCPU implementer\t: 0x41\n"), "cpuinfo: implementer not Arm");
	CHECK(read_file("/proc/mounts", big, sizeof(big)) == 0, "read mounts");
	CHECK(strstr(big, " /tmp tmpfs rw"), "mounts has no /tmp tmpfs: %.300s", big);
	CHECK(strstr(big, "proc /proc proc rw"), "mounts has no /proc");
	char buf[128];
	double up = -1, idle = -1;
	struct timespec boot;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	CHECK(read_file("/proc/uptime", buf, sizeof(buf)) == 0 && sscanf(buf, "%lf %lf", &up, &idle) == 2,
	      "uptime '%s'", buf);
	double since = boot.tv_sec + boot.tv_nsec / 1e9;
	CHECK(up > 0 && up <= since + 0.02 && up > since - 1, "uptime %.2f, CLOCK_BOOTTIME %.2f", up, since);
	CHECK(idle >= 0, "idle %.2f", idle);
	int running = 0, total = 0;
	CHECK(read_file("/proc/loadavg", buf, sizeof(buf)) == 0 &&
		      sscanf(buf, "%*f %*f %*f %d/%d", &running, &total) == 2,
	      "loadavg '%s'", buf);
	CHECK(running >= 1 && total >= running, "loadavg %d/%d", running, total);
	return 0;
}

/* The "cpu" line's user, system and idle ticks, and btime, of /proc/stat. */
static int read_stat(long long *user, long long *sys, long long *idle, long long *btime, int *cpus)
{
	if (read_file("/proc/stat", big, sizeof(big)) != 0)
		return -1;
	if (sscanf(big, "cpu  %lld %*d %lld %lld", user, sys, idle) != 3)
		return -1;
	*cpus = 0;
	for (char *p = big; (p = strstr(p, "\ncpu")); p++)
		(*cpus)++;
	char *b = strstr(big, "\nbtime ");
	return b && sscanf(b + 7, "%lld", btime) == 1 ? 0 : -1;
}

static int proc_stat_counts_cpu_time(void)
{
	long long u0, s0, i0, u1, s1, i1, btime;
	int cpus;
	CHECK(read_stat(&u0, &s0, &i0, &btime, &cpus) == 0, "parse /proc/stat: %.200s", big);
	CHECK(cpus == sysconf(_SC_NPROCESSORS_ONLN), "%d cpuN lines for %ld CPUs", cpus,
	      sysconf(_SC_NPROCESSORS_ONLN));
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	volatile unsigned long spin = 0;
	do {
		for (int i = 0; i < 100000; i++)
			spin++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 300);
	CHECK(read_stat(&u1, &s1, &i1, &btime, &cpus) == 0, "parse /proc/stat again");
	CHECK(u1 - u0 >= 15, "300 ms of user work added %lld user ticks", u1 - u0);
	CHECK(s1 >= s0 && i1 >= i0, "system or idle ticks went back");
	struct timespec boot;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	long long drift = btime + boot.tv_sec - time(NULL);
	CHECK(drift >= -2 && drift <= 2, "btime %lld + uptime %ld is %lld s from now", btime, boot.tv_sec, drift);
	return 0;
}

static int write_script(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0755);
	if (fd < 0)
		return -1;
	int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

static int a_script_runs_under_its_interpreter(void)
{
	char text[PATH_MAX + 64];
	snprintf(text, sizeof(text), "#!%s  --echo-args  \nignored\n", self_path);
	CHECK(write_script("/tmp/proc-files-script", text) == 0, "write script");
	char *argv[] = {"called-so", "a", "b c", NULL};
	char *envp[] = {NULL};
	char out[1024], want[PATH_MAX + 128];
	int st = run_capture("/tmp/proc-files-script", argv, envp, out, sizeof(out));
	CHECK(st == 0, "script: status %d errno %s", st, strerror(errno));
	snprintf(want, sizeof(want), "%s\n--echo-args\n/tmp/proc-files-script\na\nb c\ncomm proc-files-scri\n",
		 self_path);
	CHECK(strcmp(out, want) == 0, "the interpreter printed '%.200s'", out);
	/* A script whose interpreter is itself a script: both run. */
	CHECK(write_script("/tmp/proc-files-outer", "#!/tmp/proc-files-script x\n") == 0, "write outer");
	st = run_capture("/tmp/proc-files-outer", argv, envp, out, sizeof(out));
	snprintf(want, sizeof(want), "%s\n--echo-args\n/tmp/proc-files-script\nx\n/tmp/proc-files-outer\na\nb c\n",
		 self_path);
	CHECK(st == 0 && strncmp(out, want, strlen(want)) == 0, "nested: status %d, '%.200s'", st, out);
	unlink("/tmp/proc-files-outer");
	unlink("/tmp/proc-files-script");
	return 0;
}

static int bad_scripts_fail_as_on_linux(void)
{
	char *argv[] = {"x", NULL};
	char *envp[] = {NULL};
	char out[64];
	CHECK(write_script("/tmp/proc-files-bad", "#!/no/such/interpreter\n") == 0, "write");
	int st = run_capture("/tmp/proc-files-bad", argv, envp, out, sizeof(out));
	CHECK(st == -1 && errno == ENOENT, "missing interpreter: %d %s", st, strerror(errno));
	CHECK(write_script("/tmp/proc-files-bad", "#!\n") == 0, "write");
	st = run_capture("/tmp/proc-files-bad", argv, envp, out, sizeof(out));
	CHECK(st == -1 && errno == ENOEXEC, "empty #!: %d %s", st, strerror(errno));
	/* Five scripts, each the next one's interpreter, then the program:
	 * runs. Scripts in a cycle: ELOOP. */
	char name[64], text[PATH_MAX + 64];
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "/tmp/proc-files-loop%d", i);
		if (i < 4)
			snprintf(text, sizeof(text), "#!/tmp/proc-files-loop%d\n", i + 1);
		else
			snprintf(text, sizeof(text), "#!%s --echo-args\n", self_path);
		CHECK(write_script(name, text) == 0, "write %s", name);
	}
	char chain_out[2048];
	int chain = run_capture("/tmp/proc-files-loop0", argv, envp, chain_out, sizeof(chain_out));
	int chain_errno = errno;
	CHECK(write_script("/tmp/proc-files-loop4", "#!/tmp/proc-files-loop0\n") == 0, "write");
	st = run_capture("/tmp/proc-files-loop0", argv, envp, out, sizeof(out));
	int e = errno;
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "/tmp/proc-files-loop%d", i);
		unlink(name);
	}
	unlink("/tmp/proc-files-bad");
	CHECK(chain == 0 && strstr(chain_out, "/tmp/proc-files-loop0\n"), "5 scripts deep: %d %s",
	      chain, strerror(chain_errno));
	CHECK(st == -1 && e == ELOOP, "scripts in a cycle: %d %s", st, strerror(e));
	return 0;
}

static int fd_names_are_plain_decimal_numbers(void)
{
	const char *bad[] = { "/proc/self/fd/00", "/proc/self/fd/+0", "/proc/self/fd/0 ", "/proc/self/fd/-0",
			      "/proc/self/fd/4294967296", "/proc/self/fd/0x0" };
	struct stat st;
	CHECK(lstat("/proc/self/fd/0", &st) == 0 && S_ISLNK(st.st_mode), "fd 0 is no link");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(lstat(bad[i], &st) == -1 && errno == ENOENT, "%s: errno %d, want ENOENT", bad[i], errno);
	DIR *d = opendir("/proc/self/fd");
	CHECK(d, "opendir: %s", strerror(errno));
	struct dirent *e = readdir(d);
	CHECK(e && strcmp(e->d_name, ".") == 0 && e->d_type == DT_DIR, "first entry is not .");
	e = readdir(d);
	CHECK(e && strcmp(e->d_name, "..") == 0 && e->d_type == DT_DIR, "second entry is not ..");
	e = readdir(d);
	CHECK(e && e->d_type == DT_LNK, "an fd entry is not a link");
	closedir(d);
	return 0;
}

static char thread_link[64];

static void *read_thread_self(void *arg)
{
	(void)arg;
	ssize_t n = readlink("/proc/thread-self", thread_link, sizeof(thread_link) - 1);
	thread_link[n > 0 ? n : 0] = 0;
	return (void *)(long)syscall(SYS_gettid);
}

static int thread_self_and_task_name_each_thread(void)
{
	char link[64], want[64];
	ssize_t n = readlink("/proc/thread-self", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(want, sizeof(want), "%d/task/%d", getpid(), getpid());
	CHECK(strcmp(link, want) == 0, "thread-self -> %s, want %s", link, want);
	pthread_t t;
	void *tid;
	CHECK(pthread_create(&t, NULL, read_thread_self, NULL) == 0, "pthread_create");
	pthread_join(t, &tid);
	snprintf(want, sizeof(want), "%d/task/%ld", getpid(), (long)tid);
	CHECK(strcmp(thread_link, want) == 0, "a thread's thread-self -> %s, want %s", thread_link, want);
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	struct stat a, b;
	snprintf(want, sizeof(want), "/proc/thread-self/fd/%d", fd);
	CHECK(stat(want, &a) == 0 && fstat(fd, &b) == 0, "stat %s: %s", want, strerror(errno));
	CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev, "%s is another file", want);
	close(fd);
	DIR *d = opendir("/proc/self/task");
	CHECK(d, "opendir task: %s", strerror(errno));
	int mine = 0, others = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			atoi(e->d_name) == getpid() ? mine++ : others++;
	closedir(d);
	CHECK(mine == 1 && others == 0, "task/ lists %d of ours and %d others", mine, others);
	snprintf(want, sizeof(want), "/proc/self/task/%d/status", getpid());
	CHECK(access(want, R_OK) == 0, "%s: %s", want, strerror(errno));
	return 0;
}

static int map_files_link_each_mapped_file(void)
{
	int fd = open("/tmp/proc-files-mapped", O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "create: %s", strerror(errno));
	char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	char name[96], link[256];
	snprintf(name, sizeof(name), "/proc/self/map_files/%lx-%lx", (unsigned long)p, (unsigned long)p + 4096);
	ssize_t n = readlink(name, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(strcmp(link, "/tmp/proc-files-mapped") == 0, "%s -> %s", name, link);
	int again = open(name, O_RDONLY);
	struct stat a, b;
	CHECK(again >= 0 && fstat(again, &a) == 0 && fstat(fd, &b) == 0 && a.st_ino == b.st_ino,
	      "opening %s: %s", name, strerror(errno));
	close(again);
	snprintf(name, sizeof(name), "/proc/self/map_files/0%lx-%lx", (unsigned long)p, (unsigned long)p + 4096);
	CHECK(readlink(name, link, sizeof(link)) == -1 && errno == ENOENT, "a leading zero found a mapping");
	snprintf(name, sizeof(name), "/proc/self/map_files/%lx-%lx", (unsigned long)p, (unsigned long)p + 8192);
	CHECK(readlink(name, link, sizeof(link)) == -1 && errno == ENOENT, "a wrong end found a mapping");
	munmap(p, 4096);
	close(fd);
	unlink("/tmp/proc-files-mapped");
	return 0;
}

/* /dev/zero maps anonymous memory: private pages are the process's own,
 * shared ones are seen across fork; a private mapping is named by the
 * device in maps and map_files. /dev/null cannot be mapped. */
static int dev_zero_maps_anonymous_memory(void)
{
	int fd = open("/dev/zero", O_RDWR);
	CHECK(fd >= 0, "open /dev/zero: %s", strerror(errno));
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	char *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED && s != MAP_FAILED, "mmap /dev/zero: %s", strerror(errno));
	CHECK(p[0] == 0 && p[4096] == 0 && s[0] == 0, "not zeros");
	p[0] = 7;
	pid_t child = fork();
	if (child == 0) {
		p[0] = 9;
		s[0] = 42;
		_exit(0);
	}
	int status;
	CHECK(waitpid(child, &status, 0) == child, "waitpid");
	CHECK(p[0] == 7, "the child's private write reached the parent: %d", p[0]);
	CHECK(s[0] == 42, "the child's shared write is lost: %d", s[0]);

	char name[96], link[256];
	snprintf(name, sizeof(name), "/proc/self/map_files/%lx-%lx", (unsigned long)p, (unsigned long)p + 8192);
	ssize_t n = readlink(name, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(strcmp(link, "/dev/zero") == 0, "%s -> %s", name, link);
	int again = open(name, O_RDONLY);
	struct stat a, b;
	CHECK(again >= 0 && fstat(again, &a) == 0 && fstat(fd, &b) == 0 && a.st_ino == b.st_ino,
	      "opening %s: %s", name, strerror(errno));
	close(again);
	CHECK(read_file("/proc/self/maps", big, sizeof(big)) == 0, "read maps");
	size_t len = strlen(big);
	char start[32];
	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	char *line = memmem(big, len, start, strlen(start));
	char *eol = line ? strchr(line, '\n') : NULL;
	CHECK(line && eol && eol - line > 9 && memcmp(eol - 9, "/dev/zero", 9) == 0,
	      "no /dev/zero line for %s in maps", start);
	munmap(p, 8192);
	munmap(s, 4096);
	close(fd);

	int null = open("/dev/null", O_RDWR);
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, null, 0) == MAP_FAILED && errno == ENODEV,
	      "mmap /dev/null: %s", strerror(errno));
	close(null);
	return 0;
}

static int pid_2_is_kthreadd_and_we_are_no_kernel_thread(void)
{
	char buf[4096];
	CHECK(read_file("/proc/2/status", buf, sizeof(buf)) == 0, "/proc/2/status: %s", strerror(errno));
	CHECK(strstr(buf, "Kthread:\t1\n"), "/proc/2 is no kernel thread:\n%.400s", buf);
	CHECK(read_file("/proc/self/status", buf, sizeof(buf)) == 0, "/proc/self/status");
	CHECK(strstr(buf, "Kthread:\t0\n"), "we are a kernel thread:\n%.400s", buf);
	CHECK(read_file("/proc/2/stat", buf, sizeof(buf)) == 0, "/proc/2/stat");
	unsigned long flags = 0;
	CHECK(sscanf(buf, "2 (kthreadd) S %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & 0x00200000),
	      "kthreadd's stat: %.400s", buf);
	DIR *d = opendir("/proc/2/fd");
	CHECK(d, "opendir /proc/2/fd: %s", strerror(errno));
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	CHECK(n == 2, "a kernel thread has %d fd entries, want . and ..", n);
	return 0;
}

static int names_of_any_bytes_go_in_and_come_back(void)
{
	const char name[] = "/tmp/\xff\x80name\xc3";
	int fd = open(name, O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK(fd >= 0, "create a name that is no UTF-8: %s", strerror(errno));
	close(fd);
	struct stat st;
	CHECK(stat(name, &st) == 0, "stat: %s", strerror(errno));
	CHECK(stat("/tmp/\xfe", &st) == -1 && errno == ENOENT, "a missing name: errno %d, want ENOENT", errno);
	int found = 0;
	DIR *d = opendir("/tmp");
	struct dirent *e;
	while (d && (e = readdir(d)))
		found += strcmp(e->d_name, name + 5) == 0;
	if (d)
		closedir(d);
	CHECK(found == 1, "getdents does not give the name's bytes back");
	CHECK(symlink(name, "/tmp/proc-files-link") == 0, "symlink: %s", strerror(errno));
	char target[64];
	ssize_t n = readlink("/tmp/proc-files-link", target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	unlink("/tmp/proc-files-link");
	CHECK(strcmp(target, name) == 0, "readlink changed the bytes");
	CHECK(unlink(name) == 0, "unlink: %s", strerror(errno));
	return 0;
}

static int statx_reports_what_stat_does(void)
{
	struct statx sx;
	struct stat st;
	CHECK(statx(AT_FDCWD, "/proc/self/exe", 0, STATX_BASIC_STATS, &sx) == 0, "statx: %s", strerror(errno));
	CHECK(stat("/proc/self/exe", &st) == 0, "stat: %s", strerror(errno));
	CHECK((sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS, "mask %#x", sx.stx_mask);
	CHECK(sx.stx_ino == st.st_ino && sx.stx_size == (unsigned long long)st.st_size &&
		      sx.stx_mode == st.st_mode && sx.stx_nlink == st.st_nlink,
	      "statx and stat disagree");
	CHECK(makedev(sx.stx_dev_major, sx.stx_dev_minor) == st.st_dev, "device %u:%u", sx.stx_dev_major,
	      sx.stx_dev_minor);
	CHECK(statx(AT_FDCWD, "/proc/self/exe", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
		      S_ISLNK(sx.stx_mode),
	      "AT_SYMLINK_NOFOLLOW did not stat the link");
	CHECK(statx(AT_FDCWD, "/", 0x6000, STATX_BASIC_STATS, &sx) == -1 && errno == EINVAL,
	      "both sync flags: errno %d", errno);
	return 0;
}

static int uptime_read_again_at_0_moves_on(void)
{
	int fd = open("/proc/uptime", O_RDONLY);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	char a[64] = "", b[64] = "";
	CHECK(pread(fd, a, sizeof(a) - 1, 0) > 0, "pread: %s", strerror(errno));
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	CHECK(pread(fd, b, sizeof(b) - 1, 0) > 0, "pread: %s", strerror(errno));
	close(fd);
	CHECK(atof(b) > atof(a), "a second pread at 0 gave the old %s", b);
	return 0;
}

static const struct test tests[] = {
	TEST(uname_says_linux_and_a_version),
	TEST(proc_self_is_a_link_to_the_callers_directory),
	TEST(proc_lists_processes_and_a_child_goes_away),
	TEST(status_describes_the_caller),
	TEST(exe_names_and_opens_the_program),
	TEST(cmdline_and_environ_hold_what_exec_was_given),
	TEST(maps_shows_the_mappings_by_name),
	TEST(a_change_splits_a_mapping_and_changing_back_merges_it),
	TEST(maps_names_shared_memory_and_offsets_as_linux),
	TEST(fd_links_name_open_files),
	TEST(an_fd_link_reopens_an_unlinked_file),
	TEST(fd_names_are_plain_decimal_numbers),
	TEST(thread_self_and_task_name_each_thread),
	TEST(map_files_link_each_mapped_file),
	TEST(dev_zero_maps_anonymous_memory),
	TEST(pid_2_is_kthreadd_and_we_are_no_kernel_thread),
	TEST(names_of_any_bytes_go_in_and_come_back),
	TEST(statx_reports_what_stat_does),
	TEST(uptime_read_again_at_0_moves_on),
	TEST(cpuinfo_mounts_and_uptime_describe_the_system),
	TEST(proc_stat_counts_cpu_time),
	TEST(a_script_runs_under_its_interpreter),
	TEST(bad_scripts_fail_as_on_linux),
};

/* --echo-args: argv, then the environment, then /proc/self/comm. */
static int echo_args(int argc, char **argv, char **envp)
{
	for (int i = 0; i < argc; i++)
		printf("%s\n", argv[i]);
	for (char **e = envp; *e; e++)
		printf("env %s\n", *e);
	char comm[32];
	if (read_file("/proc/self/comm", comm, sizeof(comm)) == 0)
		printf("comm %s", comm);
	return 0;
}

int main(int argc, char **argv, char **envp)
{
	if (argc > 1 && strcmp(argv[1], "--echo-args") == 0)
		return echo_args(argc, argv, envp);
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	self_path[n > 0 ? n : 0] = 0;
	return run_tests("proc-files", tests, sizeof(tests) / sizeof(tests[0]));
}
