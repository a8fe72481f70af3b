/*
 * A system-call fuzzer, seeded and repeatable: random calls from the
 * kernel's own table (build/fuzz-syscalls.h, made from
 * kernel/src/syscall/mod.rs), each argument drawn from a dictionary of
 * values that break kernels: 0, -1, huge and misaligned sizes, NULL,
 * unmapped and kernel addresses, read-only and PROT_NONE buffers, and the
 * child's own fds, buffers and paths, so that calls also get deep.
 *
 * The calls run in forked children, PROCS at a time, each in a process
 * group of its own with a watchdog: a child still there after 3 s is
 * killed with its whole group, and one that cannot be killed is a hang.
 * The parent is a subreaper, so whatever a child's clone() leaves behind
 * comes back to it to be killed and reaped. Every so often, and at the
 * end, the parent checks the kernel still works (a fork, pipe and wait
 * round trip); at the end it checks that no process is left but itself
 * and its ancestors, and that free memory came back to within SLACK kB
 * of where it was. A kernel panic ends the machine, which the caller
 * sees.
 *
 *   fuzz [seed=N] [count=CALLS] [procs=P] [slack=KB] [verbose=1]
 *
 * Prints `fuzz: ... ok|FAILED` lines, then `N passed, M failed`. The same
 * seed makes the same children make the same calls (what the kernel
 * answers may still vary with timing). Dangerous calls are tamed rather
 * than left out: kill() and friends only reach the child itself,
 * prlimit64 and setpgid only the caller, paths only the child's own
 * directory (and a few read-only /proc and /sys files), exit() is not
 * called, execve never finds an executable, and a System V shared memory
 * segment is removed as soon as it is made.
 *
 * Now and then a child floods instead of calling once: thousands of tiny
 * non-blocking writes into a socket or pipe nobody reads (each must end
 * in EAGAIN, never in a kernel that grows its queue until it panics), or
 * readv/writev/sendmsg/vmsplice with up to IOV_MAX iovecs of huge
 * lengths.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-syscalls.h"

#define NIMPL (sizeof(implemented) / sizeof(implemented[0]))
#define CALLS_PER_CHILD 400
#define WATCHDOG_NS 3000000000L
#define KILL_GRACE_NS 5000000000L
#define MAX_PROCS 8
#define SLOTS_AT ((void *)0x500000000000UL)

/* --- a repeatable random source (splitmix64) --------------------------- */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

/* --- what a child has to offer its calls ------------------------------- */
/* One slot per running child, shared with the parent: the call it is in,
 * for the report if it hangs, and how many it made. */
struct slot {
	volatile long nr;
	volatile unsigned long args[6];
	volatile long calls;
};
static struct slot *slots;

static int fds[20];
/* The write ends of a socket or pipe of each kind, for the floods. */
static int sinks[8];
static int nsinks;
static int nfds;
static char *rw, *ro, *none; /* 64K read-write, 4K read-only, 4K PROT_NONE */
static char dir[64];
static char paths[12][80];
static char *longpath;

static unsigned long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000UL + ts.tv_nsec;
}

static void add_fd(int fd)
{
	if (fd >= 0 && nfds < (int)(sizeof(fds) / sizeof(fds[0])))
		fds[nfds++] = fd;
}

/* The child's world: its directory and files, every kind of fd the kernel
 * has, and buffers of each protection. */
static void setup_child(void)
{
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);

	snprintf(dir, sizeof(dir), "/tmp/fuzz.%d", getpid());
	mkdir(dir, 0755);
	const char *names[] = { "f", "d", "new", "d/g", "fifo", "link" };
	for (int i = 0; i < 6; i++)
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, names[i]);
	strcpy(paths[6], "/proc/self/maps");
	strcpy(paths[7], "/sys/kernel/mm/transparent_hugepage/enabled");
	strcpy(paths[8], "/");
	strcpy(paths[9], "");
	strcpy(paths[10], "/nonexistent/x");
	snprintf(paths[11], sizeof(paths[11]), "%s/d/../f", dir);
	mkdir(paths[1], 0755);
	mkfifo(paths[4], 0644);
	symlink(paths[0], paths[5]);
	longpath = malloc(5000);
	memset(longpath, 'a', 4999);
	longpath[4999] = 0;

	int f = open(paths[0], O_RDWR | O_CREAT, 0644);
	if (write(f, "fuzz data\n", 10) < 0)
		_exit(2);
	add_fd(f);
	add_fd(open(paths[1], O_RDONLY | O_DIRECTORY));
	int p[2];
	if (pipe(p) == 0) {
		add_fd(p[0]);
		add_fd(p[1]);
	}
	if (pipe(p) == 0) {
		add_fd(p[0]);
		add_fd(p[1]);
		sinks[nsinks++] = p[1];
	}
	int s[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0) {
		add_fd(s[0]);
		add_fd(s[1]);
	}
	const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	for (int i = 0; i < 3; i++)
		if (socketpair(AF_UNIX, types[i], 0, s) == 0) {
			add_fd(s[0]);
			sinks[nsinks++] = s[1];
		}
	add_fd(socket(AF_UNIX, SOCK_DGRAM, 0));
	add_fd(eventfd(0, 0));
	add_fd(epoll_create1(0));
	add_fd(timerfd_create(CLOCK_MONOTONIC, 0));
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	add_fd(signalfd(-1, &mask, 0));
	add_fd(memfd_create("fuzz", MFD_ALLOW_SEALING));
	add_fd(open("/dev/zero", O_RDONLY));

	rw = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(rw, 0, 64 << 10);
}

/* --- the dictionary ---------------------------------------------------- */
static unsigned long a_number(void)
{
	static const unsigned long edges[] = {
		0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 100, 127, 128, 255, 256,
		511, 512, 4095, 4096, 4097, 8192, 65535, 65536, 0x200000, 0x7fffffff,
		0x80000000UL, 0xffffffffUL, 0x100000000UL, 1UL << 47, 1UL << 48,
		1UL << 62, 1UL << 63, ~0UL >> 1, ~0UL, ~0UL - 1, -4096UL, -100UL,
	};
	switch (below(4)) {
	case 0:
		return rnd();
	case 1:
		return (uint32_t)rnd();
	default:
		return edges[below(sizeof(edges) / sizeof(edges[0]))];
	}
}

static unsigned long a_pointer(void)
{
	switch (below(12)) {
	case 0:
		return 0;
	case 1:
		return 0x1000; /* unmapped */
	case 2:
		return 0xffff000040200000UL; /* the kernel's image */
	case 3:
		return 0xffff800000000000UL; /* kernel, nothing there */
	case 4:
		return (unsigned long)ro;
	case 5:
		return (unsigned long)none;
	case 6:
		return (unsigned long)rw + below(64 << 10); /* misaligned too */
	case 7:
		return (unsigned long)rw + (64 << 10) - below(16); /* at the end */
	case 8:
		return (unsigned long)rw + 16 * below(64);
	case 9:
		return (unsigned long)paths[below(12)];
	case 10:
		return (unsigned long)longpath;
	default:
		return (unsigned long)rw;
	}
}

static unsigned long a_fd(void)
{
	switch (below(6)) {
	case 0:
		return below(8);
	case 1:
		return (unsigned long)-1;
	case 2:
		return (unsigned long)(long)AT_FDCWD;
	case 3:
		return 1000;
	default:
		return nfds ? fds[below(nfds)] : 0;
	}
}

static unsigned long an_arg(void)
{
	switch (below(10)) {
	case 0: case 1: case 2:
		return a_fd();
	case 3: case 4: case 5: case 6:
		return a_pointer();
	default:
		return a_number();
	}
}

/* --- taming ------------------------------------------------------------ */
/* This process was made by a fuzzed clone. */
static int cloned;

/* Keeps [*addr, *addr + *len) inside the child's buffers, if it starts in
 * one; false if it starts elsewhere. */
static int tame_range(unsigned long *addr, unsigned long *len)
{
	unsigned long a = *addr, r = (unsigned long)rw;
	if (a >= r && a < r + (64 << 10)) {
		*len %= r + (64 << 10) - a + 1;
		return 1;
	}
	if (a == (unsigned long)ro || a == (unsigned long)none) {
		*len %= 4097;
		return 1;
	}
	return 0;
}

/* Keeps a call inside the child: signals and limits reach only itself,
 * paths only its own directory. Returns 0 to skip the call. */
static int tame(long nr, unsigned long *a)
{
	pid_t self = getpid(), tid = syscall(SYS_gettid);
	switch (nr) {
	case SYS_exit:
	case SYS_exit_group:
		return 0;
	case SYS_kill: /* pid: itself or nobody (its group may be its parent's) */
		a[0] = below(2) ? (unsigned long)self : 999999;
		break;
	case SYS_tkill:
		a[0] = below(2) ? (unsigned long)tid : 999999;
		break;
	case SYS_tgkill:
		a[0] = self;
		a[1] = below(2) ? (unsigned long)tid : 999999;
		break;
	case SYS_setpgid: /* not into another's group: signals to it reach it */
		a[0] = below(2) ? 0 : (unsigned long)self;
		a[1] = below(2) ? 0 : (unsigned long)self;
		break;
	case SYS_prlimit64:
	case SYS_sched_setaffinity:
	case SYS_setpriority:
		a[nr == SYS_setpriority ? 1 : 0] = below(2) ? 0 : (unsigned long)self;
		break;
	case SYS_clone:
		/* A thread sharing the memory runs on from the syscall with a
		 * random stack and kills the child at once: mostly a process.
		 * A clone clones no more: each would double the child's
		 * processes with every clone after it. */
		if (cloned)
			return 0;
		if (below(4))
			a[0] &= ~(unsigned long)(CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_VFORK);
		break;
	case SYS_execve: /* nothing in the child's directory is executable */
		a[0] = (unsigned long)paths[below(6)];
		break;
	case SYS_mount:
	case SYS_umount2:
		a[nr == SYS_mount ? 1 : 0] = (unsigned long)paths[1];
		break;
	case SYS_rt_sigreturn: /* a random frame: the child would only crash */
		return 0;
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_madvise:
	case SYS_mremap:
	case SYS_msync:
	case SYS_mlock:
	case SYS_munlock:
	case SYS_mlock2:
	case SYS_mincore:
		/* Inside its own buffers, a range stays inside them; anything
		 * else is somewhere the child has nothing (or the kernel): it
		 * keeps its code, data and stack. */
		if (!tame_range(&a[0], &a[1]))
			a[0] = below(2) ? 0x1000 : 0xffff800000000000UL;
		break;
	case SYS_mmap: /* MAP_FIXED only over its own buffers */
		if (a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE) && !tame_range(&a[0], &a[1]))
			a[3] &= ~(unsigned long)(MAP_FIXED | MAP_FIXED_NOREPLACE);
		break;
	case SYS_rt_sigaction: /* keep the timer's signal */
		if (a[0] == SIGALRM)
			a[0] = SIGUSR2;
		break;
	case SYS_setitimer:
		if (a[0] == ITIMER_REAL)
			a[0] = ITIMER_VIRTUAL;
		break;
	}
	return 1;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A flood: many one-to-few-byte non-blocking writes into a sink nobody
 * reads, until EAGAIN (a kernel whose queue grows without bound runs out
 * of memory here); or one vectored call with IOV_MAX iovecs whose
 * lengths sum to far more than memory. */
static void flood(void)
{
	if (!nsinks)
		return;
	int which = below(nsinks);
	int fd = sinks[which];
	/* Cut short anything that blocks, as a single call is. */
	struct itimerval t = { .it_value = { 0, 20000 } };
	setitimer(ITIMER_REAL, &t, NULL);
	if (below(2)) {
		fcntl(fd, F_SETFL, O_NONBLOCK);
		/* Pages into the pipe (sinks[0]), bytes into the sockets: each
		 * fills within the 2,000 writes. */
		size_t len = which == 0 ? 4096 : 1 + below(8);
		for (int i = 0; i < 2000; i++)
			if (write(fd, rw, len) < 0)
				break;
		return;
	}
	static struct iovec iov[1024];
	int n = 1 + below(1024);
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = below(4) ? rw : (void *)a_pointer();
		iov[i].iov_len = below(2) ? 64 << 10 : (size_t)1 << (40 + below(23));
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = n };
	switch (below(4)) {
	case 0:
		writev(fd, iov, n);
		break;
	case 1:
		sendmsg(fd, &msg, MSG_DONTWAIT);
		break;
	case 2:
		vmsplice(fd, iov, n, SPLICE_F_NONBLOCK);
		break;
	default:
		readv(fds[below(nfds)], iov, n);
		break;
	}
}

/* One child's life: CALLS_PER_CHILD calls, each cut short by SIGALRM
 * after 20 ms if it blocks (unless the fuzzing took that away). */
static void child(struct slot *me, uint64_t seed)
{
	setpgid(0, 0);
	pid_t self = getpid();
	rng_state = seed;
	setup_child();
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	for (int i = 0; i < CALLS_PER_CHILD; i++) {
		if (!below(100)) {
			me->nr = -1;
			flood();
			me->calls++;
			continue;
		}
		long nr = below(20) ? implemented[below(NIMPL)] : (long)below(500);
		unsigned long a[6];
		for (int j = 0; j < 6; j++)
			a[j] = an_arg();
		if (!tame(nr, a))
			continue;
		me->nr = nr;
		for (int j = 0; j < 6; j++)
			me->args[j] = a[j];
		struct itimerval t = { .it_value = { 0, 20000 } };
		setitimer(ITIMER_REAL, &t, NULL);
		long rc = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		/* A System V segment outlives its maker (as on Linux): have it
		 * go with the child's mappings, so free memory comes back. */
		if (nr == SYS_shmget && rc >= 0)
			shmctl(rc, IPC_RMID, NULL);
		me->calls++;
		if (!cloned && getpid() != self) {
			/* A process the call made: its own calls from here. */
			cloned = 1;
			rng_state ^= (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
		}
	}
	_exit(0);
}

/* --- the parent's checks ----------------------------------------------- */
static int passed, failed;
static int verbose;

static void result(const char *name, int ok, const char *detail)
{
	printf("fuzz: %s ... %s%s%s\n", name, ok ? "ok" : "FAILED", ok || !detail ? "" : ": ", ok || !detail ? "" : detail);
	fflush(stdout);
	ok ? passed++ : failed++;
}

/* fork, pipe and wait still work: a child writes a byte and exits 7. */
static int round_trip(void)
{
	int p[2];
	if (pipe(p) != 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		_exit(7);
	}
	char c = 0;
	int status = 0;
	int ok = pid > 0 && read(p[0], &c, 1) == 1 && c == 'x' && waitpid(pid, &status, 0) == pid &&
		 WIFEXITED(status) && WEXITSTATUS(status) == 7;
	close(p[0]);
	close(p[1]);
	return ok;
}

/* What /proc says of a process: its State and Threads lines. */
static void describe(pid_t pid, char *out, size_t len)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	out[0] = 0;
	if (n <= 0) {
		snprintf(out, len, "gone from /proc");
		return;
	}
	buf[n] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "State:", 6) || !strncmp(line, "Threads:", 8)) {
			size_t used = strlen(out);
			snprintf(out + used, len - used, "%s%s", used ? ", " : "", line);
		}
}

static long meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The ppid of `pid`, from /proc/PID/stat; 0 if it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY);
	ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	char *close_paren = strrchr(buf, ')');
	int ppid = 0;
	if (!close_paren || sscanf(close_paren + 2, "%*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* Is `pid` a kernel thread (/proc/PID/status's `Kthread: 1`, Linux's
 * kthreadd at PID 2 among them)? Those are no strays. */
static int is_kthread(pid_t pid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, "Kthread:\t1\n") != NULL;
}

/* Processes other than this one, its ancestors and kernel threads, from
 * /proc: up to `max` of their pids into `pids`, all of them into `names`. */
static int strays(pid_t *pids, int max, char *names, size_t len)
{
	int n = 0;
	names[0] = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		pid_t pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		int ancestor = 0;
		for (pid_t p = getpid(); p > 0 && !ancestor; p = parent_of(p))
			ancestor = p == pid;
		if (ancestor || is_kthread(pid))
			continue;
		if (n < max)
			pids[n] = pid;
		n++;
		size_t used = strlen(names);
		snprintf(names + used, len - used, " %d", pid);
	}
	if (d)
		closedir(d);
	return n;
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char sub[600];
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
			umount2(sub, MNT_DETACH);
			remove_tree(sub);
		} else {
			unlink(sub);
		}
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static void remove_fuzz_dirs(void)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "fuzz.", 5)) {
			char path[300];
			snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
			umount2(path, MNT_DETACH);
			remove_tree(path);
		}
	if (d)
		closedir(d);
}

static long arg(int argc, char **argv, const char *key, long dflt)
{
	size_t klen = strlen(key);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], key, klen) == 0 && argv[i][klen] == '=')
			return strtol(argv[i] + klen + 1, NULL, 0);
	return dflt;
}

struct running {
	pid_t pid;
	int index;
	unsigned long started, killed;
};

int main(int argc, char **argv)
{
	long seed = arg(argc, argv, "seed", 1);
	long count = arg(argc, argv, "count", 100000);
	int procs = arg(argc, argv, "procs", 4);
	long slack_kb = arg(argc, argv, "slack", 512);
	verbose = arg(argc, argv, "verbose", 0);
	if (procs < 1 || procs > MAX_PROCS) {
		fprintf(stderr, "fuzz: procs=1..%d\n", MAX_PROCS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Far below anything the children map (top down) or point at, so
	 * their fuzzed writes do not land in it. */
	slots = mmap(SLOTS_AT, sizeof(struct slot) * MAX_PROCS, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	/* Warm up what the parent itself needs, then take the baseline. */
	result("round_trip_before", round_trip(), NULL);
	long free_before = meminfo_kb("MemFree");

	struct running run[MAX_PROCS] = { 0 };
	long calls = 0, children = 0, watchdog_kills = 0, signalled = 0;
	int hangs = 0, broken = 0, setup_failed = 0;
	char detail[600];
	unsigned long start = now_ns();
	for (;;) {
		int active = 0;
		for (int s = 0; s < procs; s++) {
			struct running *r = &run[s];
			/* Children until the calls they make reach `count`. */
			long coming = 0;
			for (int t = 0; t < procs; t++)
				coming += run[t].pid ? CALLS_PER_CHILD : 0;
			if (r->pid || calls + coming >= count)
				continue;
			slots[s] = (struct slot){ 0 };
			r->index = children++;
			r->started = now_ns();
			r->killed = 0;
			r->pid = fork();
			if (r->pid == 0)
				child(&slots[s], (uint64_t)seed * 1000003 + r->index);
			if (r->pid < 0) {
				r->pid = 0;
				broken++;
			}
		}
		/* Children that ended, and orphans of their clones (we are a
		 * subreaper, so those come to us too). */
		int status;
		pid_t got;
		while ((got = waitpid(-1, &status, WNOHANG)) > 0)
			for (int s = 0; s < procs; s++) {
				struct running *r = &run[s];
				if (r->pid != got)
					continue;
				/* A child's count is its own memory: trust it only so far. */
				calls += slots[s].calls > CALLS_PER_CHILD ? CALLS_PER_CHILD : slots[s].calls;
				if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
					signalled++;
				if (verbose)
					printf("fuzz: child %d (seed %ld) made %ld calls, status %#x\n", r->index,
					       seed, slots[s].calls, status);
				r->pid = 0;
				/* Nothing of a child outlives it: its group goes too,
				 * and its files, which would fill /tmp over a long run. */
				kill(-got, SIGKILL);
				char own[64];
				snprintf(own, sizeof(own), "/tmp/fuzz.%d", got);
				umount2(own, MNT_DETACH);
				remove_tree(own);
				/* A child that could not set up made no calls: so will
				 * the next, for ever. */
				if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && ++setup_failed > 100)
					goto done;
				if (r->index % 16 == 0 && !round_trip())
					broken++;
			}
		unsigned long now = now_ns();
		for (int s = 0; s < procs; s++) {
			struct running *r = &run[s];
			if (!r->pid)
				continue;
			active++;
			if (!r->killed && now - r->started > WATCHDOG_NS) {
				kill(-r->pid, SIGKILL);
				kill(r->pid, SIGKILL);
				r->killed = now;
				watchdog_kills++;
			} else if (r->killed && now - r->killed > KILL_GRACE_NS) {
				hangs++;
				char state[200];
				describe(r->pid, state, sizeof(state));
				snprintf(detail, sizeof(detail),
					 "child %d (seed %ld, pid %d: %s) outlives SIGKILL; last call %ld (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)",
					 r->index, seed, r->pid, state, slots[s].nr, slots[s].args[0], slots[s].args[1],
					 slots[s].args[2], slots[s].args[3], slots[s].args[4], slots[s].args[5]);
				result("hang", 0, detail);
				r->pid = 0;
			}
		}
		if (!active && calls >= count)
			break;
		usleep(1000);
	}
done:;
	unsigned long took = now_ns() - start;

	/* Whatever a child left running: kill it, reap it. */
	pid_t pids[64];
	char names[512];
	int left;
	for (int tries = 0; tries < 50 && (left = strays(pids, 64, names, sizeof(names))); tries++) {
		for (int i = 0; i < left && i < 64; i++)
			kill(pids[i], SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(100000);
	}
	left = strays(pids, 64, names, sizeof(names));
	remove_fuzz_dirs();

	printf("fuzz: seed %ld: %ld calls in %ld children, %ld cut off by the watchdog, %ld ended by a signal, %lu ms\n",
	       seed, calls, children, watchdog_kills, signalled, took / 1000000);
	snprintf(detail, sizeof(detail), "%d forks or round trips failed", broken);
	result("kernel_still_forks_pipes_waits", !broken && round_trip(), detail);
	snprintf(detail, sizeof(detail), "%d children could not set up", setup_failed);
	result("children_could_set_up", setup_failed <= 100, detail);
	snprintf(detail, sizeof(detail), "%d children outlived SIGKILL", hangs);
	result("every_child_ended", !hangs, detail);
	snprintf(detail, sizeof(detail), "still there:%s", names);
	result("no_process_left_behind", !left, detail);

	/* Memory freed late (the heap's, the page cache of removed files) has
	 * had its chance: give the kernel a moment, then compare. */
	long free_after = meminfo_kb("MemFree");
	for (int i = 0; i < 20 && free_before - free_after > slack_kb; i++) {
		usleep(100000);
		free_after = meminfo_kb("MemFree");
	}
	snprintf(detail, sizeof(detail), "MemFree %ld kB before, %ld kB after (%+ld kB; slack %ld kB)", free_before,
		 free_after, free_after - free_before, slack_kb);
	result("memory_comes_back", free_before - free_after <= slack_kb, detail);
	printf("fuzz: %s\n", detail);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
