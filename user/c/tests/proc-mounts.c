/*
 * /proc mounted again: each instance a file system of its own (st_dev),
 * its options (hidepid=, gid=, subset=pid) checked, shown in /proc/mounts
 * and obeyed for an unprivileged process; and the new mount API, fsopen,
 * fsconfig, fsmount and move_mount, making a /proc and a tmpfs. A static
 * glibc program: make test runs it on faultline, make test-linux on
 * Debian's Linux 6.12 (as root, like faultline's processes), and the values
 * it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* The new mount API's numbers (linux/mount.h), for glibcs without them. */
#define FSCONFIG_SET_FLAG_ 0
#define FSCONFIG_SET_STRING_ 1
#define FSCONFIG_SET_BINARY_ 2
#define FSCONFIG_CMD_CREATE_ 6
#define MOVE_MOUNT_F_EMPTY_PATH_ 4

static int fsopen_(const char *fs, unsigned flags)
{
	return syscall(SYS_fsopen, fs, flags);
}

static int fsconfig_(int fd, unsigned cmd, const char *key, const void *value, int aux)
{
	return syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static int fsmount_(int fd, unsigned flags, unsigned attrs)
{
	return syscall(SYS_fsmount, fd, flags, attrs);
}

static int move_mount_(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
	return syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

/* -1 and errno, or 0, as one number: 0 or -errno. */
static int result(long rc)
{
	return rc >= 0 ? 0 : -errno;
}

/* A new empty directory under /tmp, its name in `dir`. */
static int new_dir(char dir[32])
{
	strcpy(dir, "/tmp/procmnt.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static dev_t dev_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_dev : (dev_t)-1;
}

/* Does /proc/mounts have the line `line`? */
static int mounts_has(const char *line)
{
	char buf[256];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;
	while (f && fgets(buf, sizeof(buf), f))
		if (strncmp(buf, line, strlen(line)) == 0 && buf[strlen(line)] == '\n')
			found = 1;
	if (f)
		fclose(f);
	return found;
}

/* One line of mountinfo, split into the fields df and findmnt read. */
struct info {
	int id, parent;
	unsigned major, minor;
	char root[128], point[128], type[32];
};

/* Reads /proc/self/mountinfo into `out` (at most `max` lines); the count,
 * or -1 if a line lacks the ` - ` separator or a field. */
static int read_mountinfo(struct info *out, int max)
{
	char line[512];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int n = 0;
	while (f && n < max && fgets(line, sizeof(line), f)) {
		struct info *m = &out[n];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%d %d %u:%u %127s %127s", &m->id, &m->parent, &m->major,
				    &m->minor, m->root, m->point) != 6 ||
		    sscanf(dash + 3, "%31s", m->type) != 1) {
			n = -1;
			break;
		}
		n++;
	}
	if (f)
		fclose(f);
	return f ? n : -1;
}

/* The line for mount point `point`, or NULL. */
static struct info *find_point(struct info *all, int n, const char *point)
{
	for (int i = n - 1; i >= 0; i--)
		if (strcmp(all[i].point, point) == 0)
			return &all[i];
	return NULL;
}

static int mountinfo_agrees_with_mounts_and_stat(void)
{
	static struct info all[64];
	int n = read_mountinfo(all, 64);
	CHECK(n > 0, "/proc/self/mountinfo: %d lines", n);
	for (int i = 0; i < n; i++) {
		struct stat st;
		CHECK(stat(all[i].point, &st) == 0, "stat %s: %s", all[i].point, strerror(errno));
		CHECK(major(st.st_dev) == all[i].major && minor(st.st_dev) == all[i].minor,
		      "%s: mountinfo says %u:%u, stat %u:%u", all[i].point, all[i].major,
		      all[i].minor, major(st.st_dev), minor(st.st_dev));
		int parent_known = 0;
		for (int j = 0; j < n; j++)
			parent_known |= all[j].id == all[i].parent;
		CHECK(parent_known || all[i].parent == all[i].id, "%s: parent %d is no mount",
		      all[i].point, all[i].parent);
		char line[256];
		FILE *f = fopen("/proc/self/mounts", "r");
		int listed = 0;
		while (f && fgets(line, sizeof(line), f)) {
			char point[128], type[32];
			if (sscanf(line, "%*s %127s %31s", point, type) == 2)
				listed |= !strcmp(point, all[i].point) && !strcmp(type, all[i].type);
		}
		if (f)
			fclose(f);
		CHECK(listed, "%s (%s) not in /proc/self/mounts", all[i].point, all[i].type);
	}
	CHECK(find_point(all, n, "/") && find_point(all, n, "/proc"), "no / or /proc line");
	return 0;
}

static int a_new_mount_shows_under_its_parent(void)
{
	static struct info all[64];
	char d[32];
	CHECK(new_dir(d) == 0, "mkdtemp: %s", strerror(errno));
	CHECK(mount("none", d, "tmpfs", 0, "size=1m") == 0, "mount: %s", strerror(errno));
	int n = read_mountinfo(all, 64);
	struct info *m = n > 0 ? find_point(all, n, d) : NULL;
	struct info *tmp = n > 0 ? find_point(all, n, "/tmp") : NULL;
	struct info *root = n > 0 ? find_point(all, n, "/") : NULL;
	int parent = m ? m->parent : -1, id = m ? m->id : -1;
	int want_parent = tmp ? tmp->id : root ? root->id : -2;
	char type[32] = "";
	if (m)
		strcpy(type, m->type);
	umount(d);
	n = read_mountinfo(all, 64);
	int gone = n > 0 && !find_point(all, n, d);
	rmdir(d);
	CHECK(id > 0 && !strcmp(type, "tmpfs"), "%s: id %d, type %s", d, id, type);
	CHECK(parent == want_parent, "parent %d, want %d (the mount holding %s)", parent,
	      want_parent, d);
	CHECK(gone, "still listed after umount");
	return 0;
}

static int two_procs_are_two_file_systems(void)
{
	char a[32], b[32], path[96], line[128];
	CHECK(new_dir(a) == 0 && new_dir(b) == 0, "mkdtemp: %s", strerror(errno));
	CHECK(mount("proc", a, "proc", 0, "hidepid=1") == 0, "mount proc hidepid=1: %s",
	      strerror(errno));
	CHECK(mount("proc", b, "proc", 0, "hidepid=2") == 0, "mount proc hidepid=2: %s",
	      strerror(errno));
	snprintf(path, sizeof(path), "%s/meminfo", a);
	dev_t da = dev_of(path);
	snprintf(path, sizeof(path), "%s/meminfo", b);
	dev_t db = dev_of(path);
	dev_t boot = dev_of("/proc/meminfo");
	CHECK(da != (dev_t)-1 && db != (dev_t)-1, "meminfo missing in a new /proc");
	CHECK(da != db && da != boot && db != boot, "st_dev %lx %lx and /proc's %lx",
	      (long)da, (long)db, (long)boot);
	/* Everything in an instance is on its device, made-up entries too. */
	snprintf(path, sizeof(path), "%s/%d/status", a, getpid());
	CHECK(dev_of(path) == da, "%s on %lx, not %lx", path, (long)dev_of(path), (long)da);
	snprintf(path, sizeof(path), "%s/self", b);
	char self[32] = "", want[32];
	readlink(path, self, sizeof(self) - 1);
	snprintf(want, sizeof(want), "%d", getpid());
	CHECK(strcmp(self, want) == 0, "%s reads %s", path, self);
	snprintf(line, sizeof(line), "proc %s proc rw,relatime,hidepid=noaccess 0 0", a);
	CHECK(mounts_has(line), "/proc/mounts lacks \"%s\"", line);
	snprintf(line, sizeof(line), "proc %s proc rw,relatime,hidepid=invisible 0 0", b);
	CHECK(mounts_has(line), "/proc/mounts lacks \"%s\"", line);
	CHECK(umount(a) == 0 && umount(b) == 0, "umount: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/meminfo", a);
	CHECK(access(path, F_OK) < 0 && errno == ENOENT, "meminfo still there after umount");
	CHECK(!mounts_has(line), "/proc/mounts still has \"%s\"", line);
	rmdir(a);
	rmdir(b);
	return 0;
}

static int bad_options_and_types(void)
{
	char d[32];
	CHECK(new_dir(d) == 0, "mkdtemp: %s", strerror(errno));
	static const char *const bad[] = { "hidepid=3", "hidepid=visible", "subset=sys", "bogus",
					   "gid=x" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = result(mount("proc", d, "proc", 0, bad[i]));
		if (r == 0)
			umount(d);
		CHECK(r == -EINVAL, "proc with %s: %s", bad[i], strerror(-r));
	}
	CHECK(result(mount("none", d, "nosuchfs", 0, NULL)) == -ENODEV, "type nosuchfs: %s",
	      strerror(errno));
	rmdir(d);
	return 0;
}

static int subset_pid_has_processes_only(void)
{
	char d[32], path[96];
	CHECK(new_dir(d) == 0, "mkdtemp: %s", strerror(errno));
	CHECK(mount("proc", d, "proc", 0, "subset=pid") == 0, "mount: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/meminfo", d);
	int meminfo = access(path, F_OK);
	snprintf(path, sizeof(path), "%s/%d/maps", d, getpid());
	int maps = access(path, R_OK);
	snprintf(path, sizeof(path), "%s/self", d);
	int self = access(path, F_OK);
	int others = 0;
	DIR *dir = opendir(d);
	struct dirent *e;
	while (dir && (e = readdir(dir)))
		if (!(e->d_name[0] >= '0' && e->d_name[0] <= '9') && strcmp(e->d_name, ".") &&
		    strcmp(e->d_name, "..") && strcmp(e->d_name, "self") &&
		    strcmp(e->d_name, "thread-self"))
			others++;
	if (dir)
		closedir(dir);
	umount(d);
	rmdir(d);
	CHECK(meminfo < 0 && maps == 0 && self == 0, "meminfo %d, own maps %d, self %d", meminfo,
	      maps, self);
	CHECK(others == 0, "%d entries that are no process, self or thread-self", others);
	return 0;
}

/* In a child that drops to uid and gid 65534 (group `group` if not 0 for
 * its fsgid): 1 if it sees DIR/1, 0 if not; 2 if it does not see its own. */
static int nobody_sees_init(const char *dir, gid_t group)
{
	pid_t child = fork();
	if (child == 0) {
		gid_t gid = group ? group : 65534;
		if (setresgid(gid, gid, gid) || setresuid(65534, 65534, 65534))
			_exit(3);
		char path[96];
		snprintf(path, sizeof(path), "%s/%d", dir, getpid());
		if (access(path, F_OK) != 0)
			_exit(2);
		snprintf(path, sizeof(path), "%s/1", dir);
		_exit(access(path, F_OK) == 0 ? 1 : 0);
	}
	int status;
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

static int hidepid_invisible_hides_what_one_cannot_trace(void)
{
	char d[32];
	CHECK(new_dir(d) == 0, "mkdtemp: %s", strerror(errno));
	CHECK(mount("proc", d, "proc", 0, "hidepid=invisible") == 0, "mount: %s",
	      strerror(errno));
	int as_root = access(strcat(strcpy((char[64]){ 0 }, d), "/1"), F_OK);
	int seen = nobody_sees_init(d, 0);
	int seen_boot = nobody_sees_init("/proc", 0);
	umount(d);
	CHECK(mount("proc", d, "proc", 0, "hidepid=2,gid=4242") == 0, "mount with gid: %s",
	      strerror(errno));
	int seen_group = nobody_sees_init(d, 4242);
	umount(d);
	rmdir(d);
	CHECK(as_root == 0, "root does not see init's directory");
	CHECK(seen == 0, "nobody under hidepid=invisible: %d (1: sees init's)", seen);
	CHECK(seen_boot == 1, "nobody in /proc: %d (0: does not see init's)", seen_boot);
	CHECK(seen_group == 1, "nobody in the gid= group: %d (0: does not see init's)",
	      seen_group);
	return 0;
}

static int fsconfig_checks_each_option(void)
{
	int fd = fsopen_("proc", 0);
	CHECK(fd >= 0, "fsopen proc: %s", strerror(errno));
	int two = 2;
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_BINARY_, "hidepid", &two, sizeof(two))) ==
		      -EINVAL,
	      "hidepid as a blob: %s", strerror(errno));
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_FLAG_, "hidepid", NULL, 0)) == -EINVAL,
	      "hidepid as a flag: %s", strerror(errno));
	CHECK(fsconfig_(fd, FSCONFIG_SET_STRING_, "hidepid", "2", 0) == 0, "hidepid 2: %s",
	      strerror(errno));
	CHECK(fsconfig_(fd, FSCONFIG_SET_STRING_, "hidepid", "invisible", 0) == 0,
	      "hidepid invisible: %s", strerror(errno));
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_STRING_, "hidepid", "3", 0)) == -EINVAL,
	      "hidepid 3: %s", strerror(errno));
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_STRING_, "nosuchkey", "1", 0)) == -EINVAL,
	      "an unknown key: %s", strerror(errno));
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_STRING_, NULL, "1", 0)) == -EINVAL,
	      "no key: %s", strerror(errno));
	CHECK(result(fsconfig_(fd, 99, NULL, NULL, 0)) == -EOPNOTSUPP, "command 99: %s",
	      strerror(errno));
	CHECK(result(fsmount_(fd, 0, 0)) == -EINVAL, "fsmount before create: %s",
	      strerror(errno));
	/* Each refusal left its message, as Linux words it. */
	static const char *const said[] = {
		"e proc: Bad value for 'hidepid'\n",
		"e proc: Bad value for 'hidepid'\n",
		"e proc: unknown value of hidepid - 3\n\n",
		"e proc: Unknown parameter 'nosuchkey'\n",
	};
	char buf[128];
	errno = 0;
	CHECK(read(fd, buf, 8) < 0 && errno == EMSGSIZE, "a read too short for a message: %s",
	      strerror(errno));
	for (unsigned i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		CHECK(n > 0 && strcmp(buf, said[i]) == 0, "message %u: \"%s\", not \"%s\"", i, buf,
		      said[i]);
	}
	errno = 0;
	CHECK(read(fd, buf, sizeof(buf)) < 0 && errno == ENODATA, "no messages left: %s",
	      strerror(errno));
	CHECK(fsconfig_(fd, FSCONFIG_SET_STRING_, "source", "a", 0) == 0, "source: %s",
	      strerror(errno));
	CHECK(result(fsconfig_(fd, FSCONFIG_SET_STRING_, "source", "b", 0)) == -EINVAL,
	      "a second source: %s", strerror(errno));
	close(fd);
	int p[2];
	pipe(p);
	CHECK(result(fsconfig_(p[0], FSCONFIG_SET_STRING_, "hidepid", "2", 0)) == -EINVAL,
	      "fsconfig on a pipe: %s", strerror(errno));
	close(p[0]);
	close(p[1]);
	CHECK(result(fsconfig_(-1, FSCONFIG_CMD_CREATE_, NULL, NULL, 0)) == -EINVAL,
	      "fd -1: %s", strerror(errno));
	CHECK(result(fsopen_("nosuchfs", 0)) == -ENODEV, "fsopen nosuchfs: %s", strerror(errno));
	CHECK(result(fsopen_("proc", 2)) == -EINVAL, "fsopen flags 2: %s", strerror(errno));
	return 0;
}

/* fsopen, fsconfig the options, create, fsmount and move_mount at `dir`. */
static int new_api_mount(const char *type, const char *key, const char *value, const char *dir)
{
	int fd = fsopen_(type, 1 /* FSOPEN_CLOEXEC */);
	if (fd < 0 || fsconfig_(fd, FSCONFIG_SET_STRING_, key, value, 0) ||
	    fsconfig_(fd, FSCONFIG_CMD_CREATE_, NULL, NULL, 0))
		return -1;
	if (result(fsconfig_(fd, FSCONFIG_SET_STRING_, key, value, 0)) != -EBUSY)
		return -2;
	int mfd = fsmount_(fd, 0, 0);
	close(fd);
	if (mfd < 0)
		return -3;
	int r = move_mount_(mfd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH_);
	close(mfd);
	return r ? -4 : 0;
}

static int fsmount_and_move_mount_attach(void)
{
	char d[32], path[96], line[128];
	CHECK(new_dir(d) == 0, "mkdtemp: %s", strerror(errno));
	int r = new_api_mount("proc", "hidepid", "2", d);
	CHECK(r == 0, "proc through the new API: step %d: %s", r, strerror(errno));
	snprintf(path, sizeof(path), "%s/meminfo", d);
	dev_t dev = dev_of(path);
	CHECK(dev != (dev_t)-1 && dev != dev_of("/proc/meminfo"), "the new /proc's meminfo");
	/* No source was given: Linux shows `none`. */
	snprintf(line, sizeof(line), "none %s proc rw,relatime,hidepid=invisible 0 0", d);
	CHECK(mounts_has(line), "/proc/mounts lacks \"%s\"", line);
	CHECK(umount(d) == 0, "umount: %s", strerror(errno));

	r = new_api_mount("tmpfs", "size", "1m", d);
	CHECK(r == 0, "tmpfs through the new API: step %d: %s", r, strerror(errno));
	struct statfs sf;
	CHECK(statfs(d, &sf) == 0 && sf.f_blocks == 256, "statfs: %ld blocks",
	      (long)sf.f_blocks);
	snprintf(path, sizeof(path), "%s/file", d);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0 && write(fd, "hi", 2) == 2, "a file on the new tmpfs: %s", strerror(errno));
	close(fd);
	CHECK(umount(d) == 0, "umount tmpfs: %s", strerror(errno));
	CHECK(access(path, F_OK) < 0, "the tmpfs file is still there after umount");
	/* A directory that is no mount's root cannot be moved. */
	char plain[32];
	CHECK(new_dir(plain) == 0, "mkdtemp: %s", strerror(errno));
	CHECK(result(move_mount_(AT_FDCWD, plain, AT_FDCWD, d, 0)) == -EINVAL,
	      "moving a plain directory: %s", strerror(errno));
	rmdir(plain);
	rmdir(d);
	return 0;
}

static const struct test tests[] = {
	TEST(two_procs_are_two_file_systems),
	TEST(bad_options_and_types),
	TEST(subset_pid_has_processes_only),
	TEST(hidepid_invisible_hides_what_one_cannot_trace),
	TEST(fsconfig_checks_each_option),
	TEST(fsmount_and_move_mount_attach),
	TEST(mountinfo_agrees_with_mounts_and_stat),
	TEST(a_new_mount_shows_under_its_parent),
};

int main(void)
{
	return run_tests("proc-mounts", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
