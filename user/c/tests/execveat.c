/*
 * execveat(2) and fexecve(3): a program named by a path relative to a
 * directory descriptor, or by a descriptor alone (AT_EMPTY_PATH), the
 * names the new program then goes by (AT_EXECFN, /proc/self/comm, a
 * script's argument), and every errno Linux gives a bad request; exec of
 * files that are no regular programs (a directory, a FIFO, a socket, a
 * file without an execute bit) is EACCES. A static glibc program: make
 * test runs it on faultline, make test-linux on Debian's Linux 6.12, and
 * the values it expects are Linux's.
 *
 * Run with --echo it prints its arguments, AT_EXECFN and its comm, one
 * per line, and exits 0: the tests exec it and read what it says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define DIR_ "/tmp/execveat-test"

static char self[PATH_MAX];
static char *const echo_argv[] = { "prog", "--echo", "a b", NULL };
static char *const envp[] = { "IN_TEST=1", NULL };

static int execveat_(int fd, const char *path, char *const argv[], int flags)
{
	return syscall(SYS_execveat, fd, path, argv, envp, flags);
}

/* Copies this program to PATH with MODE. */
static int copy_self(const char *path, mode_t mode)
{
	int in = open(self, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	char buf[65536];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return chmod(path, mode);
}

/* Runs execveat(FD, PATH, echo_argv, FLAGS) in a child; its output in
 * OUT. Returns 0 if the exec worked, else -1 with the child's errno. */
static int run(int fd, const char *path, int flags, char *out, size_t len)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execveat_(fd, path, echo_argv, flags);
		printf("errno %d\n", errno);
		fflush(stdout);
		_exit(99);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < len && (n = read(p[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 99) {
		errno = atoi(out + 6);
		return -1;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Did the exec that printed OUT start with ARGV0 and AT_EXECFN EXECFN
 * and comm COMM? */
static int said(const char *out, const char *argv0, const char *execfn, const char *comm)
{
	char want[512];
	snprintf(want, sizeof(want), "argv %s\nargv --echo\nargv a b\nenv IN_TEST=1\nexecfn %s\ncomm %s\n",
		 argv0, execfn, comm);
	return strcmp(out, want) == 0;
}

static int a_path_from_a_directory_descriptor(void)
{
	char out[1024];
	int dir = open(DIR_, O_DIRECTORY | O_RDONLY);
	int sub = open(DIR_ "/sub", O_DIRECTORY | O_RDONLY);
	CHECK(run(dir, "prog", 0, out, sizeof(out)) == 0, "dirfd + name: %s", strerror(errno));
	char execfn[64];
	snprintf(execfn, sizeof(execfn), "/dev/fd/%d/prog", dir);
	CHECK(said(out, "prog", execfn, "prog"), "dirfd + name said:\n%.400s", out);
	CHECK(run(sub, "../prog", 0, out, sizeof(out)) == 0, "../prog: %s", strerror(errno));
	CHECK(run(AT_FDCWD, DIR_ "/prog", 0, out, sizeof(out)) == 0, "AT_FDCWD: %s", strerror(errno));
	CHECK(said(out, "prog", DIR_ "/prog", "prog"), "absolute said:\n%.400s", out);
	/* An absolute path does not look at the descriptor at all. */
	CHECK(run(99, DIR_ "/prog", 0, out, sizeof(out)) == 0, "fd 99 + absolute: %s",
	      strerror(errno));
	CHECK(run(dir, "link", 0, out, sizeof(out)) == 0, "a symlink: %s", strerror(errno));
	close(dir);
	close(sub);
	return 0;
}

static int a_descriptor_alone_with_at_empty_path(void)
{
	char out[1024], execfn[64];
	int fd = open(DIR_ "/prog", O_RDONLY);
	lseek(fd, 10, SEEK_SET);
	CHECK(run(fd, "", AT_EMPTY_PATH, out, sizeof(out)) == 0, "fd: %s", strerror(errno));
	snprintf(execfn, sizeof(execfn), "/dev/fd/%d", fd);
	/* Named after the file itself, not "/dev/fd/N". */
	CHECK(said(out, "prog", execfn, "prog"), "fd said:\n%.400s", out);
	int path_fd = open(DIR_ "/prog", O_PATH);
	CHECK(run(path_fd, "", AT_EMPTY_PATH, out, sizeof(out)) == 0, "O_PATH fd: %s",
	      strerror(errno));
	int link_fd = open(DIR_ "/link", O_RDONLY);
	CHECK(run(link_fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, out, sizeof(out)) == 0,
	      "a symlink followed at open: %s", strerror(errno));
	/* A file removed while open still runs. */
	CHECK(copy_self(DIR_ "/gone", 0755) == 0, "copy");
	int gone = open(DIR_ "/gone", O_RDONLY);
	unlink(DIR_ "/gone");
	CHECK(run(gone, "", AT_EMPTY_PATH, out, sizeof(out)) == 0, "deleted: %s", strerror(errno));
	/* glibc's fexecve is execveat(fd, "", AT_EMPTY_PATH). */
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		fexecve(fd, echo_argv, envp);
		_exit(99);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fexecve: status %#x", st);
	close(fd);
	close(path_fd);
	close(link_fd);
	close(gone);
	return 0;
}

static int a_script_is_handed_the_dev_fd_name(void)
{
	char out[1024], want[64];
	int dir = open(DIR_, O_DIRECTORY | O_RDONLY);
	CHECK(run(dir, "script", 0, out, sizeof(out)) == 0, "script: %s", strerror(errno));
	snprintf(want, sizeof(want), "argv --echo\nargv /dev/fd/%d/script\nargv --echo\n", dir);
	CHECK(strncmp(out + strlen("argv ") + strlen(self) + 1, want, strlen(want)) == 0,
	      "script said:\n%.400s", out);
	/* Through a close-on-exec descriptor the interpreter could not open
	 * the script: refused up front. */
	int cloexec = open(DIR_, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	CHECK(run(cloexec, "script", 0, out, sizeof(out)) == -1 && errno == ENOENT,
	      "close-on-exec dirfd: %s", strerror(errno));
	int fd = open(DIR_ "/script", O_RDONLY | O_CLOEXEC);
	CHECK(run(fd, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == ENOENT,
	      "close-on-exec fd: %s", strerror(errno));
	/* An ELF needs no name after exec: fine through a close-on-exec fd. */
	int elf = open(DIR_ "/prog", O_RDONLY | O_CLOEXEC);
	CHECK(run(elf, "", AT_EMPTY_PATH, out, sizeof(out)) == 0, "close-on-exec ELF: %s",
	      strerror(errno));
	close(dir);
	close(cloexec);
	close(fd);
	close(elf);
	return 0;
}

static int bad_requests_get_linuxs_errnos(void)
{
	char out[256];
	int dir = open(DIR_, O_DIRECTORY | O_RDONLY);
	int fd = open(DIR_ "/prog", O_RDONLY);
	errno = 0;
	CHECK(run(fd, "", 0, out, sizeof(out)) == -1 && errno == ENOENT, "empty path: %s",
	      strerror(errno));
	CHECK(run(fd, NULL, AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EFAULT, "NULL: %s",
	      strerror(errno));
	CHECK(run(dir, "prog", 0xffff, out, sizeof(out)) == -1 && errno == EINVAL, "flags: %s",
	      strerror(errno));
	CHECK(run(dir, "link", AT_SYMLINK_NOFOLLOW, out, sizeof(out)) == -1 && errno == ELOOP,
	      "NOFOLLOW: %s", strerror(errno));
	CHECK(run(dir, "missing", 0, out, sizeof(out)) == -1 && errno == ENOENT, "missing: %s",
	      strerror(errno));
	CHECK(run(99, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EBADF, "fd 99: %s",
	      strerror(errno));
	CHECK(run(99, "prog", 0, out, sizeof(out)) == -1 && errno == EBADF, "fd 99 + name: %s",
	      strerror(errno));
	CHECK(run(fd, "prog", 0, out, sizeof(out)) == -1 && errno == ENOTDIR, "file as dirfd: %s",
	      strerror(errno));
	close(dir);
	close(fd);
	return 0;
}

static int only_regular_executable_files_run(void)
{
	char out[256];
	int dir = open(DIR_, O_DIRECTORY | O_RDONLY);
	errno = 0;
	CHECK(run(dir, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EACCES,
	      "a directory: %s", strerror(errno));
	CHECK(run(dir, "fifo", 0, out, sizeof(out)) == -1 && errno == EACCES, "a FIFO: %s",
	      strerror(errno));
	CHECK(run(dir, "plain", 0, out, sizeof(out)) == -1 && errno == EACCES, "mode 0644: %s",
	      strerror(errno));
	int plain = open(DIR_ "/plain", O_PATH);
	CHECK(run(plain, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EACCES,
	      "mode 0644 by fd: %s", strerror(errno));
	int sk = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(run(sk, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EACCES, "a socket: %s",
	      strerror(errno));
	int null = open("/dev/null", O_RDONLY);
	CHECK(run(null, "", AT_EMPTY_PATH, out, sizeof(out)) == -1 && errno == EACCES,
	      "a character device: %s", strerror(errno));
	close(dir);
	close(plain);
	close(sk);
	close(null);
	return 0;
}

static const struct test tests[] = {
	TEST(a_path_from_a_directory_descriptor),
	TEST(a_descriptor_alone_with_at_empty_path),
	TEST(a_script_is_handed_the_dev_fd_name),
	TEST(bad_requests_get_linuxs_errnos),
	TEST(only_regular_executable_files_run),
};

/* --echo: argv, the environment, AT_EXECFN and /proc/self/comm. */
static int echo(int argc, char **argv, char **env)
{
	for (int i = 0; i < argc; i++)
		printf("argv %s\n", argv[i]);
	for (char **e = env; *e; e++)
		printf("env %s\n", *e);
	printf("execfn %s\n", (char *)getauxval(AT_EXECFN));
	char comm[32] = "";
	int fd = open("/proc/self/comm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : 0;
	comm[n > 0 ? n : 0] = 0;
	printf("comm %s", comm);
	return 0;
}

int main(int argc, char **argv, char **env)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--echo") == 0)
			return echo(argc, argv, env);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	mkdir(DIR_, 0755);
	mkdir(DIR_ "/sub", 0755);
	if (copy_self(DIR_ "/prog", 0755) || copy_self(DIR_ "/plain", 0644))
		return 1;
	symlink(DIR_ "/prog", DIR_ "/link");
	mkfifo(DIR_ "/fifo", 0755);
	char script[PATH_MAX + 16];
	snprintf(script, sizeof(script), "#!%s --echo\n", self);
	int fd = open(DIR_ "/script", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	write(fd, script, strlen(script));
	close(fd);
	int failed = run_tests("execveat", tests, sizeof(tests) / sizeof(tests[0]));
	const char *files[] = { "prog", "plain", "link", "fifo", "script" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), DIR_ "/%s", files[i]);
		unlink(path);
	}
	rmdir(DIR_ "/sub");
	rmdir(DIR_);
	return failed;
}
