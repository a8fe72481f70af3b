/*
 * Who may do what: a process that drops to nobody (setgroups, setgid,
 * setuid) meets root's files' permission bits (a 0600 file, a 0700
 * directory, a sticky directory, chmod and chown of what it does not
 * own, O_NOATIME, exec without an execute bit for it), kill of a root
 * process, RLIMIT_MEMLOCK and RLIMIT_NPROC; root's access(2) asks with
 * the real ids; supplementary groups count for group bits; a
 * set-user-ID program runs as its owner; a set-group-ID directory hands
 * its group down; /proc/PID belongs to the process; a write by nobody
 * clears a file's set-ID bits. A static glibc program: make test runs it on
 * faultline, make test-linux on Debian's Linux 6.12, and the values it
 * expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define NOBODY 65534
#define DIR_ "/tmp/perm-test"

/* Runs `fn` in a child that has become nobody, all ids and no groups;
 * returns what it returned, its `why` passed up through a pipe. */
static int as_nobody(int (*fn)(void))
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		close(p[0]);
		int r = -1;
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			snprintf(why, sizeof(why), "dropping to nobody: %s", strerror(errno));
		else
			r = fn();
		if (write(p[1], why, strlen(why) + 1) < 0)
			_exit(2);
		_exit(r == 0 ? 0 : 1);
	}
	close(p[1]);
	char buf[sizeof(why)] = "";
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(p[0]);
	int status;
	waitpid(child, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", buf[0] ? buf : "the child died");
	return -1;
}

/* Root's tree the tests run in: a 0600 file, a 0700 directory holding a
 * file, a 0755 directory, and a sticky world-writable one holding a
 * file of root's. */
static void make_tree(void)
{
	mkdir(DIR_, 0755);
	chmod(DIR_, 0755);
	int fd = open(DIR_ "/secret", O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd >= 0) {
		if (write(fd, "root", 4) != 4)
			perror("write");
		close(fd);
	}
	mkdir(DIR_ "/private", 0700);
	close(open(DIR_ "/private/inside", O_CREAT | O_WRONLY, 0644));
	mkdir(DIR_ "/sticky", 0777);
	chmod(DIR_ "/sticky", 01777);
	close(open(DIR_ "/sticky/roots", O_CREAT | O_WRONLY, 0666));
	chmod(DIR_ "/sticky/roots", 0666);
	close(open(DIR_ "/public", O_CREAT | O_WRONLY, 0644));
	close(open("/tmp/perm-roots", O_CREAT | O_WRONLY, 0644));
}

/* errno after a call that must fail, or 0 if it succeeded. */
#define ERR(call) ((call) == -1 ? errno : 0)

static int files_keep_their_bits(void)
{
	int open_secret = ERR(open(DIR_ "/secret", O_RDONLY));
	int write_public = ERR(open(DIR_ "/public", O_WRONLY));
	int trunc_public = ERR(open(DIR_ "/public", O_RDONLY | O_TRUNC));
	int read_public = open(DIR_ "/public", O_RDONLY);
	int noatime = ERR(open(DIR_ "/public", O_RDONLY | O_NOATIME));
	int truncate_public = ERR(truncate(DIR_ "/public", 0));
	struct stat st;
	int stat_secret = stat(DIR_ "/secret", &st);
	CHECK(open_secret == EACCES, "open of root's 0600 file: %s", strerror(open_secret));
	CHECK(write_public == EACCES && trunc_public == EACCES && truncate_public == EACCES,
	      "writing root's 0644 file: %d %d %d", write_public, trunc_public, truncate_public);
	CHECK(read_public >= 0, "reading root's 0644 file: %s", strerror(errno));
	CHECK(noatime == EPERM, "O_NOATIME on another's file: %s", strerror(noatime));
	CHECK(stat_secret == 0 && st.st_uid == 0 && (st.st_mode & 0777) == 0600,
	      "stat of the 0600 file: %d uid %u mode %o", stat_secret, st.st_uid, st.st_mode);
	return 0;
}

static int directories_guard_their_names(void)
{
	int lookup = ERR(open(DIR_ "/private/inside", O_RDONLY));
	struct stat st;
	int stat_inside = ERR(stat(DIR_ "/private/inside", &st));
	int list = ERR(open(DIR_ "/private", O_RDONLY | O_DIRECTORY));
	int cd = ERR(chdir(DIR_ "/private"));
	int create = ERR(open(DIR_ "/mine", O_CREAT | O_WRONLY, 0644));
	int mk = ERR(mkdir(DIR_ "/mydir", 0755));
	int rm = ERR(unlink(DIR_ "/public"));
	int mv = ERR(rename(DIR_ "/public", DIR_ "/sticky/moved"));
	CHECK(lookup == EACCES && stat_inside == EACCES,
	      "a name in a 0700 directory: open %d stat %d", lookup, stat_inside);
	CHECK(list == EACCES && cd == EACCES, "listing and entering it: %d %d", list, cd);
	CHECK(create == EACCES && mk == EACCES, "making names in a 0755 directory: %d %d", create,
	      mk);
	CHECK(rm == EACCES && mv == EACCES, "removing and moving a name there: %d %d", rm, mv);
	return 0;
}

static int the_sticky_bit_protects_others_names(void)
{
	int fd = open(DIR_ "/sticky/nobodys", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "creating in the sticky directory: %s", strerror(errno));
	struct stat st;
	fstat(fd, &st);
	close(fd);
	CHECK(st.st_uid == NOBODY && st.st_gid == NOBODY, "the new file is %u:%u", st.st_uid,
	      st.st_gid);
	int rm_roots = ERR(unlink(DIR_ "/sticky/roots"));
	int mv_roots = ERR(rename(DIR_ "/sticky/roots", DIR_ "/sticky/mine"));
	int write_roots = open(DIR_ "/sticky/roots", O_WRONLY);
	int mv_own = ERR(rename(DIR_ "/sticky/nobodys", DIR_ "/sticky/renamed"));
	int rm_own = ERR(unlink(DIR_ "/sticky/renamed"));
	CHECK(rm_roots == EPERM && mv_roots == EPERM, "root's name in a sticky directory: %d %d",
	      rm_roots, mv_roots);
	CHECK(write_roots >= 0, "root's 0666 file there is still writable: %s", strerror(errno));
	CHECK(mv_own == 0 && rm_own == 0, "its own name: rename %d unlink %d", mv_own, rm_own);
	/* /tmp itself is such a directory. */
	struct stat tmp;
	stat("/tmp", &tmp);
	int rm_tmp = ERR(unlink("/tmp/perm-roots"));
	CHECK((tmp.st_mode & 07777) == 01777, "/tmp has mode %o", tmp.st_mode & 07777);
	CHECK(rm_tmp == EPERM, "root's file in /tmp: %s", strerror(rm_tmp));
	return 0;
}

static int only_the_owner_changes_modes_and_owners(void)
{
	int chmod_roots = ERR(chmod(DIR_ "/public", 0666));
	int chown_roots = ERR(chown(DIR_ "/public", NOBODY, NOBODY));
	int fd = open("/tmp/perm-nobody", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "a file of its own in /tmp: %s", strerror(errno));
	int chmod_own = ERR(fchmod(fd, 0600));
	int give_away = ERR(fchown(fd, 0, -1));
	int to_root_group = ERR(fchown(fd, -1, 0));
	int keep = ERR(fchown(fd, NOBODY, NOBODY));
	int times = ERR(utimensat(AT_FDCWD, DIR_ "/public", NULL, 0));
	struct timespec old[2] = { { 1, 0 }, { 1, 0 } };
	int set_times = ERR(utimensat(AT_FDCWD, DIR_ "/sticky/roots", old, 0));
	int touch = ERR(utimensat(AT_FDCWD, DIR_ "/sticky/roots", NULL, 0));
	close(fd);
	unlink("/tmp/perm-nobody");
	CHECK(chmod_roots == EPERM && chown_roots == EPERM, "chmod/chown of root's file: %d %d",
	      chmod_roots, chown_roots);
	CHECK(chmod_own == 0 && keep == 0, "chmod/chown of its own: %d %d", chmod_own, keep);
	CHECK(give_away == EPERM && to_root_group == EPERM, "giving its file away: %d %d",
	      give_away, to_root_group);
	CHECK(times == EACCES, "touching a file it may not write: %s", strerror(times));
	CHECK(set_times == EPERM && touch == 0,
	      "times of a writable file of root's: set %d, now %d", set_times, touch);
	return 0;
}

static int exec_needs_an_execute_bit_for_the_caller(void)
{
	char *argv[] = { "perm", NULL };
	execv(DIR_ "/rootonly", argv);
	int rootonly = errno;
	execv(DIR_ "/private/inside", argv);
	int hidden = errno;
	CHECK(rootonly == EACCES, "exec of a 0700 program of root's: %s", strerror(rootonly));
	CHECK(hidden == EACCES, "exec through a 0700 directory: %s", strerror(hidden));
	return 0;
}

static int signals_need_the_same_user(void)
{
	int init = ERR(kill(1, 0));
	int term = ERR(kill(1, SIGTERM));
	int self = ERR(kill(getpid(), 0));
	int group = ERR(kill(-1, 0));
	CHECK(init == EPERM && term == EPERM, "kill of root's init: %d %d", init, term);
	CHECK(self == 0, "kill of itself: %s", strerror(self));
	/* kill(-1) signals what it may and, finding others, says nothing
	 * of those it may not. */
	CHECK(group == 0, "kill(-1, 0) as nobody: %s", strerror(group));
	return 0;
}

static int rlimit_memlock_bounds_mlock(void)
{
	struct rlimit def;
	getrlimit(RLIMIT_MEMLOCK, &def);
	CHECK(def.rlim_cur == 8 << 20, "RLIMIT_MEMLOCK starts at %lu", (unsigned long)def.rlim_cur);
	struct rlimit small = { 64 << 10, 64 << 10 };
	CHECK(setrlimit(RLIMIT_MEMLOCK, &small) == 0, "setrlimit: %s", strerror(errno));
	char *p = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	int over = ERR(mlock(p, 128 << 10));
	int within = ERR(mlock(p, 32 << 10));
	int again = ERR(mlock(p, 48 << 10)); /* 32K already locked: 48K in all */
	int past = ERR(mlock(p + (48 << 10), 32 << 10));
	int all = ERR(mlockall(MCL_CURRENT));
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_MEMLOCK, &none);
	int zero = ERR(mlock(p, 4096));
	CHECK(over == ENOMEM, "mlock of 128K under 64K: %s", strerror(over));
	CHECK(within == 0 && again == 0, "mlock within the limit: %d %d", within, again);
	CHECK(past == ENOMEM, "mlock past it with 48K locked: %s", strerror(past));
	CHECK(all == ENOMEM, "mlockall(MCL_CURRENT): %s", strerror(all));
	CHECK(zero == EPERM, "mlock with RLIMIT_MEMLOCK 0: %s", strerror(zero));
	return 0;
}

static int rlimit_nproc_bounds_fork(void)
{
	struct rlimit one = { 1, 1 };
	CHECK(setrlimit(RLIMIT_NPROC, &one) == 0, "setrlimit: %s", strerror(errno));
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	int err = errno;
	if (child > 0)
		waitpid(child, NULL, 0);
	CHECK(child == -1 && err == EAGAIN, "fork over RLIMIT_NPROC 1: %d %s", child,
	      strerror(err));
	return 0;
}

static int status_shows_the_ids(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strstr(buf, "\nUid:\t65534\t65534\t65534\t65534\n"), "no nobody Uid line");
	CHECK(strstr(buf, "\nGid:\t65534\t65534\t65534\t65534\n"), "no nobody Gid line");
	CHECK(strstr(buf, "\nGroups:\t \n"), "supplementary groups left");
	CHECK(strstr(buf, "\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"),
	      "capabilities left");
	gid_t groups[4];
	CHECK(getgroups(4, groups) == 0, "getgroups: %d", getgroups(4, groups));
	/* Having changed ids, it may not be dumped: /proc/PID is root's.
	 * Made dumpable again, /proc/PID belongs to its effective ids. */
	struct stat st;
	int dumpable = prctl(PR_GET_DUMPABLE);
	int roots = stat("/proc/self/pagemap", &st) == 0 && st.st_uid == 0;
	int refused = ERR(open("/proc/self/pagemap", O_RDONLY));
	prctl(PR_SET_DUMPABLE, 1);
	int own = stat("/proc/self/pagemap", &st);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	int inits = ERR(open("/proc/1/mem", O_RDONLY));
	CHECK(dumpable == 0 && roots && refused == EACCES,
	      "after setuid: dumpable %d, root's /proc %d, open %s", dumpable, roots,
	      strerror(refused));
	CHECK(own == 0 && st.st_uid == NOBODY && st.st_gid == NOBODY, "/proc/self/pagemap is %u:%u",
	      st.st_uid, st.st_gid);
	CHECK(pagemap >= 0, "opening its own pagemap: %s", strerror(errno));
	CHECK(inits == EACCES, "opening init's mem: %s", strerror(inits));
	/* Its own fd directory (0500) it may list; init's it may not. */
	int own_fds = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
	int init_fds = ERR(open("/proc/1/fd", O_RDONLY | O_DIRECTORY));
	struct stat fdst;
	stat("/proc/self/fd", &fdst);
	CHECK(own_fds >= 0 && init_fds == EACCES && (fdst.st_mode & 07777) == 0500,
	      "/proc/self/fd %d (mode %o), /proc/1/fd %s", own_fds, fdst.st_mode & 07777,
	      strerror(init_fds));
	CHECK(setgroups(0, NULL) == -1 && errno == EPERM, "setgroups as nobody");
	return 0;
}

/* What nobody writes into a set-ID file of root's loses its set-ID bits;
 * set-group-ID stays only without group execute, in the writer's group. */
static int writes_clear_set_id_bits(void)
{
	const char *paths[] = { DIR_ "/suid-data", DIR_ "/sgid-data", DIR_ "/sgid-lock",
				DIR_ "/sgid-other" };
	const mode_t want[] = { 0777, 0777, 02767, 0767 };
	for (int i = 0; i < 4; i++) {
		int fd = open(paths[i], O_WRONLY);
		CHECK(fd >= 0 && write(fd, "x", 1) == 1, "writing %s: %s", paths[i], strerror(errno));
		close(fd);
		struct stat st;
		stat(paths[i], &st);
		CHECK((st.st_mode & 07777) == want[i], "%s is %o after the write, not %o", paths[i],
		      st.st_mode & 07777, want[i]);
	}
	return 0;
}

static int as_nobody_files(void) { return as_nobody(files_keep_their_bits); }
static int as_nobody_dirs(void) { return as_nobody(directories_guard_their_names); }
static int as_nobody_sticky(void) { return as_nobody(the_sticky_bit_protects_others_names); }
static int as_nobody_owner(void) { return as_nobody(only_the_owner_changes_modes_and_owners); }
static int as_nobody_exec(void) { return as_nobody(exec_needs_an_execute_bit_for_the_caller); }
static int as_nobody_kill(void) { return as_nobody(signals_need_the_same_user); }
static int as_nobody_mlock(void) { return as_nobody(rlimit_memlock_bounds_mlock); }
static int as_nobody_nproc(void) { return as_nobody(rlimit_nproc_bounds_fork); }
static int as_nobody_status(void) { return as_nobody(status_shows_the_ids); }

static int set_id_bits_go_with_a_write(void)
{
	const char *paths[] = { DIR_ "/suid-data", DIR_ "/sgid-data", DIR_ "/sgid-lock",
				DIR_ "/sgid-other" };
	const mode_t modes[] = { 04777, 02777, 02767, 02767 };
	for (int i = 0; i < 4; i++) {
		close(open(paths[i], O_CREAT | O_WRONLY, 0600));
		/* sgid-lock is in nobody's group, sgid-other in root's. */
		if (i == 2)
			chown(paths[i], 0, NOBODY);
		chmod(paths[i], modes[i]);
	}
	/* Root writing keeps them (CAP_FSETID). */
	int fd = open(paths[0], O_WRONLY);
	int wrote = write(fd, "r", 1);
	close(fd);
	struct stat st;
	stat(paths[0], &st);
	int r = as_nobody(writes_clear_set_id_bits);
	for (int i = 0; i < 4; i++)
		unlink(paths[i]);
	CHECK(wrote == 1 && (st.st_mode & 07777) == 04777, "root's write left mode %o",
	      st.st_mode & 07777);
	return r;
}

/* access(2) answers for the real ids, AT_EACCESS for the effective. */
static int nobody_as_real_root_as_effective(void)
{
	if (setresuid(NOBODY, 0, 0))
		return -1;
	int real = ERR(access(DIR_ "/secret", R_OK));
	int effective = ERR(faccessat(AT_FDCWD, DIR_ "/secret", R_OK, AT_EACCESS));
	int exists = ERR(access(DIR_ "/secret", F_OK));
	int opened = open(DIR_ "/secret", O_RDONLY);
	CHECK(real == EACCES, "access for a real nobody: %s", strerror(real));
	CHECK(effective == 0 && exists == 0, "AT_EACCESS / F_OK: %d %d", effective, exists);
	CHECK(opened >= 0, "open as effective root: %s", strerror(errno));
	return 0;
}

static int access_uses_the_real_ids(void)
{
	pid_t child = fork();
	if (child == 0)
		_exit(nobody_as_real_root_as_effective() == 0 ? 0 : 1);
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "see the child");
	int root_x = ERR(access(DIR_ "/public", X_OK));
	CHECK(root_x == EACCES, "root's X_OK on a file no one may run: %s", strerror(root_x));
	return 0;
}

/* A group in the supplementary list opens a 0060 file of that group. */
static int groups_count_for_group_bits(void)
{
	int fd = open(DIR_ "/group", O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(fd >= 0, "creating: %s", strerror(errno));
	fchown(fd, 0, 4242);
	fchmod(fd, 0060);
	close(fd);
	pid_t child = fork();
	if (child == 0) {
		gid_t g[2] = { 4242, 100 };
		if (setgroups(2, g) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		gid_t got[4];
		int n = getgroups(4, got);
		int fd = open(DIR_ "/group", O_RDWR);
		_exit(n == 2 && got[0] + got[1] == 4342 && fd >= 0 ? 0 : 1);
	}
	int status;
	waitpid(child, &status, 0);
	unlink(DIR_ "/group");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited %d",
	      WEXITSTATUS(status));
	return 0;
}

/* A set-group-ID directory gives new files its group, new directories
 * its group and the bit. */
static int a_set_group_id_directory_hands_down_its_group(void)
{
	mkdir(DIR_ "/shared", 0777);
	chown(DIR_ "/shared", 0, 4242);
	chmod(DIR_ "/shared", 02777);
	close(open(DIR_ "/shared/f", O_CREAT | O_WRONLY, 0644));
	mkdir(DIR_ "/shared/d", 0755);
	struct stat f, d;
	int sf = stat(DIR_ "/shared/f", &f), sd = stat(DIR_ "/shared/d", &d);
	unlink(DIR_ "/shared/f");
	rmdir(DIR_ "/shared/d");
	rmdir(DIR_ "/shared");
	CHECK(sf == 0 && f.st_gid == 4242, "the file's group: %u", f.st_gid);
	CHECK(sd == 0 && d.st_gid == 4242 && (d.st_mode & 02000), "the directory: %u %o",
	      d.st_gid, d.st_mode);
	return 0;
}

/* This program, copied set-user-ID root, run by nobody: it runs as
 * euid 0, real 65534, and tells by its exit status. */
static int a_set_user_id_program_runs_as_its_owner(void)
{
	pid_t child = fork();
	if (child == 0) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		char *argv[] = { "suid", "--ids", NULL };
		execv(DIR_ "/suid", argv);
		_exit(4);
	}
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the set-user-ID copy exited %d (1: wrong ids, 3: setuid, 4: exec)",
	      WEXITSTATUS(status));
	return 0;
}

/* Copies /proc/self/exe to `path` with `mode`. */
static void copy_self(const char *path, mode_t mode)
{
	int in = open("/proc/self/exe", O_RDONLY);
	int out = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0700);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	close(in);
	close(out);
	chmod(path, mode);
}

static const struct test tests[] = {
	TEST(as_nobody_files),
	TEST(as_nobody_dirs),
	TEST(as_nobody_sticky),
	TEST(as_nobody_owner),
	TEST(as_nobody_exec),
	TEST(as_nobody_kill),
	TEST(as_nobody_mlock),
	TEST(as_nobody_nproc),
	TEST(as_nobody_status),
	TEST(set_id_bits_go_with_a_write),
	TEST(access_uses_the_real_ids),
	TEST(groups_count_for_group_bits),
	TEST(a_set_group_id_directory_hands_down_its_group),
	TEST(a_set_user_id_program_runs_as_its_owner),
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--ids")) {
		uid_t r, e, s;
		getresuid(&r, &e, &s);
		return r == NOBODY && e == 0 && s == 0 && getauxval(AT_SECURE) == 1 ? 0 : 1;
	}
	make_tree();
	copy_self(DIR_ "/rootonly", 0700);
	copy_self(DIR_ "/suid", 04755);
	int failed = run_tests("permissions", tests, sizeof(tests) / sizeof(tests[0]));
	const char *names[] = { "secret", "private/inside", "private", "sticky/roots", "sticky",
				"public", "rootonly", "suid" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[128];
		snprintf(path, sizeof(path), DIR_ "/%s", names[i]);
		if (unlink(path))
			rmdir(path);
	}
	rmdir(DIR_);
	unlink("/tmp/perm-roots");
	return failed != 0;
}
