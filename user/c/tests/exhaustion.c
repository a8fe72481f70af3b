/*
 * Running out of memory, as Linux handles it: a process that maps and
 * touches memory until there is none is killed by the OOM killer (SIGKILL,
 * counted in /proc/vmstat's oom_kill) and its memory comes back; filling
 * a tmpfs ends in ENOSPC, with data or with inodes (nr_inodes=); a fork bomb meets EAGAIN (or ENOMEM) and every
 * process it made is reaped; sockets and pipes nobody reads fill to EAGAIN
 * however small the writes; a pipe holds what F_SETPIPE_SZ sets, within
 * fs.pipe-max-size for all but root; and through it all the kernel keeps
 * working.
 * A static glibc program: make test runs it on faultline at several
 * memory sizes, make test-linux on Debian's Linux 6.12.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc.h"
#include "check.h"

/* Free memory is back to within this of where it was. */
#define SLACK_KB (2 << 10)

static int still_works(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(3);
	int status = 0;
	return c > 0 && waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 3;
}

static int a_memory_hog_is_killed_and_its_memory_comes_back(void)
{
	long free_before = meminfo_kb("MemFree");
	long kills = vmstat("oom_kill");
	pid_t hog = fork();
	if (hog == 0) {
		/* Chunks smaller than RAM, so every mmap is granted: touching
		 * them is what runs memory out. */
		for (;;) {
			size_t chunk = 16 << 20;
			char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(2);
			for (size_t i = 0; i < chunk; i += 4096)
				p[i] = 1;
		}
	}
	int status = 0;
	CHECK(hog > 0 && waitpid(hog, &status, 0) == hog, "fork/waitpid: %s", strerror(errno));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the hog ended with status %#x", status);
	CHECK(vmstat("oom_kill") > kills, "oom_kill %ld -> %ld", kills, vmstat("oom_kill"));
	CHECK(still_works(), "fork after the OOM kill");
	/* Linux keeps some of what the kill freed in per-CPU lists and
	 * caches for a while (it came back 3-10 MB short at 1G): eight times
	 * the slack, still a sliver of the hundreds of MB the hog took. */
	long free_after = meminfo_kb("MemFree");
	CHECK(free_after > free_before - 8 * SLACK_KB, "MemFree %ld kB -> %ld kB", free_before,
	      free_after);
	return 0;
}

static int filling_a_tmpfs_ends_in_enospc(void)
{
	mkdir("/tmp/full", 0755);
	CHECK(mount("none", "/tmp/full", "tmpfs", 0, "size=8m") == 0, "mount: %s", strerror(errno));
	int fd = open("/tmp/full/f", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	static char block[64 << 10];
	memset(block, 7, sizeof(block));
	long total = 0;
	ssize_t n;
	while ((n = write(fd, block, sizeof(block))) > 0)
		total += n;
	int e = errno;
	close(fd);
	unlink("/tmp/full/f");
	umount("/tmp/full");
	rmdir("/tmp/full");
	CHECK(n == -1 && e == ENOSPC, "write ended with %zd, errno %d", n, e);
	CHECK(total >= (6 << 20) && total <= (8 << 20), "wrote %ld bytes into 8M", total);
	return 0;
}

/* Empty files cost kernel memory too: nr_inodes= bounds them (the root
 * directory is one), and statfs counts them. */
static int a_tmpfs_runs_out_of_inodes(void)
{
	mkdir("/tmp/few", 0755);
	CHECK(mount("none", "/tmp/few", "tmpfs", 0, "nr_inodes=8") == 0, "mount: %s",
	      strerror(errno));
	struct statfs empty, full;
	statfs("/tmp/few", &empty);
	char path[64];
	int made = 0, err = 0;
	for (int i = 0; i < 20 && !err; i++) {
		snprintf(path, sizeof(path), "/tmp/few/%d", i);
		int r = i % 2 ? mkdir(path, 0755) : open(path, O_CREAT | O_WRONLY, 0644);
		if (r < 0)
			err = errno;
		else
			made++;
		if (r > 0)
			close(r);
	}
	statfs("/tmp/few", &full);
	/* An unlinked file's inode is back once its last descriptor closes. */
	int again = open("/tmp/few/0", O_RDONLY);
	unlink("/tmp/few/0");
	int while_open = open("/tmp/few/new", O_CREAT | O_WRONLY, 0644) == -1 ? errno : 0;
	close(again);
	int after = open("/tmp/few/new", O_CREAT | O_WRONLY, 0644);
	close(after);
	unlink("/tmp/few/new");
	for (int i = 1; i < made; i++) {
		snprintf(path, sizeof(path), "/tmp/few/%d", i);
		if (unlink(path))
			rmdir(path);
	}
	umount("/tmp/few");
	CHECK(empty.f_files == 8 && empty.f_ffree == 7, "statfs of the empty mount: %ld of %ld free",
	      (long)empty.f_ffree, (long)empty.f_files);
	CHECK(made == 7 && err == ENOSPC, "%d files and directories, then %s", made, strerror(err));
	CHECK(full.f_ffree == 0 && again >= 0, "statfs when full: %ld free", (long)full.f_ffree);
	CHECK(while_open == ENOSPC, "while the unlinked file is open: %s", strerror(while_open));
	CHECK(after >= 0, "once it is closed: %s", strerror(errno));

	/* Each extra name of a file takes one too. */
	CHECK(mount("none", "/tmp/few", "tmpfs", 0, "nr_inodes=3") == 0, "mount: %s",
	      strerror(errno));
	close(open("/tmp/few/f", O_CREAT | O_WRONLY, 0644));
	int second = link("/tmp/few/f", "/tmp/few/g");
	int third = link("/tmp/few/f", "/tmp/few/h") == -1 ? errno : 0;
	unlink("/tmp/few/g");
	int again_link = link("/tmp/few/f", "/tmp/few/h");
	unlink("/tmp/few/h");
	unlink("/tmp/few/f");
	umount("/tmp/few");
	rmdir("/tmp/few");
	CHECK(second == 0 && third == ENOSPC, "links under nr_inodes=3: %d, then %s", second,
	      strerror(third));
	CHECK(again_link == 0, "a link once one is gone: %s", strerror(errno));
	return 0;
}

static int a_fork_bomb_meets_eagain_and_all_is_reaped(void)
{
	long free_before = meminfo_kb("MemFree");
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t bomb = fork();
	if (bomb == 0) {
		/* Forks until fork fails, each child waiting to be killed; says
		 * how many and why it stopped. */
		setpgid(0, 0);
		close(p[0]);
		long n = 0;
		for (;;) {
			pid_t c = fork();
			if (c == 0) {
				pause();
				_exit(0);
			}
			if (c < 0)
				break;
			n++;
		}
		int e = errno;
		long msg[2] = { n, e };
		if (write(p[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	long msg[2] = { 0, 0 };
	ssize_t got = read(p[0], msg, sizeof(msg));
	close(p[0]);
	kill(-bomb, SIGKILL);
	int status;
	CHECK(waitpid(bomb, &status, 0) == bomb, "reaping the bomb");
	/* Its children were reparented to init, which reaps them: thousands
	 * of exits take a while. Wait while memory keeps coming back. */
	long last = 0;
	for (int still = 0; still < 30 && meminfo_kb("MemFree") < free_before - SLACK_KB; still++) {
		usleep(100000);
		long now = meminfo_kb("MemFree");
		if (now > last)
			still = 0;
		last = now;
	}
	CHECK(got == sizeof(msg), "the bomb said nothing");
	CHECK(msg[0] > 10, "only %ld forks", msg[0]);
	CHECK(msg[1] == EAGAIN || msg[1] == ENOMEM, "fork failed with errno %ld after %ld", msg[1], msg[0]);
	CHECK(still_works(), "fork after the bomb");
	long free_after = meminfo_kb("MemFree");
	CHECK(free_after > free_before - SLACK_KB, "MemFree %ld kB -> %ld kB", free_before, free_after);
	return 0;
}

static int unread_sockets_and_pipes_fill_to_eagain(void)
{
	enum { PAIRS = 100, PIPES = 50 };
	static int fds[PAIRS + PIPES][2];
	long free_before = meminfo_kb("MemFree");
	long sent = 0;
	int err = 0, made = 0;
	for (int i = 0; i < PAIRS + PIPES && !err; i++, made++) {
		int r = i < PAIRS ? socketpair(AF_UNIX, (i % 3 == 0   ? SOCK_STREAM
							 : i % 3 == 1 ? SOCK_DGRAM
								      : SOCK_SEQPACKET) |
								SOCK_NONBLOCK,
						    0, fds[i])
				  : pipe2(fds[i], O_NONBLOCK);
		if (r) {
			err = errno;
			break;
		}
		/* One-byte writes into sockets, pages into pipes, until full. */
		static char page[4096];
		size_t len = i < PAIRS ? 1 : sizeof(page);
		ssize_t n;
		while ((n = write(fds[i][i < PAIRS ? 0 : 1], page, len)) > 0)
			sent += n;
		if (errno != EAGAIN)
			err = errno;
	}
	int works = still_works();
	for (int i = 0; i < made; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	long free_after = meminfo_kb("MemFree");
	CHECK(!err, "filling %d of them: %s", made, strerror(err));
	CHECK(works, "fork with full sockets and pipes");
	CHECK(sent > PIPES * 4096L && sent < 64L << 20, "%ld bytes queued", sent);
	/* Linux frees socket buffers lazily (RCU, slab caches): twice the
	 * slack, still far below the megabytes that were queued. */
	CHECK(free_after > free_before - 2 * SLACK_KB, "MemFree %ld kB -> %ld kB", free_before,
	      free_after);
	return 0;
}

/* Bytes a non-blocking pipe takes before EAGAIN. */
static long fill(int fd)
{
	static char page[4096];
	long sent = 0;
	ssize_t n;
	while ((n = write(fd, page, sizeof(page))) > 0)
		sent += n;
	return sent;
}

/* As nobody: F_SETPIPE_SZ past fs.pipe-max-size is EPERM, up to it fine. */
static int nobody_sizes_a_pipe(void)
{
	int p[2];
	if (setgid(65534) || setuid(65534) || pipe(p))
		return 1;
	if (fcntl(p[0], F_SETPIPE_SZ, 2 << 20) != -1 || errno != EPERM)
		return 2;
	return fcntl(p[0], F_SETPIPE_SZ, 1 << 20) == 1 << 20 ? 0 : 3;
}

static int pipes_hold_what_f_setpipe_sz_sets(void)
{
	int p[2];
	CHECK(pipe2(p, O_NONBLOCK) == 0, "pipe2: %s", strerror(errno));
	int initial = fcntl(p[1], F_GETPIPE_SZ);
	int one = fcntl(p[1], F_SETPIPE_SZ, 1);
	long held = fill(p[1]);
	int odd = fcntl(p[0], F_SETPIPE_SZ, 5000);
	long more = fill(p[1]);
	int shrink = fcntl(p[0], F_SETPIPE_SZ, 4096);
	int shrink_err = errno;
	int huge = fcntl(p[0], F_SETPIPE_SZ, (1U << 31) + 1);
	int huge_err = errno;
	int root = fcntl(p[0], F_SETPIPE_SZ, 2 << 20);
	int file = fcntl(0, F_GETPIPE_SZ) == -1 ? errno : 0;
	close(p[0]);
	close(p[1]);
	CHECK(initial == 65536, "a new pipe holds %d", initial);
	CHECK(one == 4096 && held == 4096, "F_SETPIPE_SZ 1: %d, held %ld", one, held);
	CHECK(odd == 8192 && more == 4096, "F_SETPIPE_SZ 5000: %d, then %ld more", odd, more);
	CHECK(shrink == -1 && shrink_err == EBUSY, "shrinking below what it holds: %d %s", shrink,
	      strerror(shrink_err));
	CHECK(huge == -1 && huge_err == EINVAL, "past 2^31: %d %s", huge, strerror(huge_err));
	CHECK(root == 2 << 20, "root past pipe-max-size: %d", root);
	CHECK(file == EBADF, "F_GETPIPE_SZ of a terminal: %s", strerror(file));

	int fd = open("/proc/sys/fs/pipe-max-size", O_RDWR);
	char buf[32] = "";
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0, "reading pipe-max-size");
	CHECK(!strcmp(buf, "1048576\n"), "pipe-max-size: '%s'", buf);
	int zero = pwrite(fd, "0", 1, 0);
	char page[32] = "";
	pread(fd, page, sizeof(page) - 1, 0);
	int odd_max = pwrite(fd, "100000", 6, 0);
	memset(buf, 0, sizeof(buf));
	pread(fd, buf, sizeof(buf) - 1, 0);
	int past = pwrite(fd, "2147483649", 10, 0) == -1 ? errno : 0;
	CHECK(zero == 1 && !strcmp(page, "4096\n"), "0 rounds to '%s'", page);
	CHECK(odd_max == 6 && !strcmp(buf, "131072\n"), "100000 rounds to '%s'", buf);
	CHECK(past == EINVAL, "2^31 + 1: %s", strerror(past));
	CHECK(pwrite(fd, "1048576", 7, 0) == 7, "restoring: %s", strerror(errno));
	close(fd);

	pid_t child = fork();
	if (child == 0)
		_exit(nobody_sizes_a_pipe());
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody's check %d failed",
	      WEXITSTATUS(status));
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(a_memory_hog_is_killed_and_its_memory_comes_back),
		TEST(filling_a_tmpfs_ends_in_enospc),
		TEST(a_tmpfs_runs_out_of_inodes),
		TEST(a_fork_bomb_meets_eagain_and_all_is_reaped),
		TEST(unread_sockets_and_pipes_fill_to_eagain),
		TEST(pipes_hold_what_f_setpipe_sz_sets),
	};
	return run_tests("exhaustion", tests, sizeof(tests) / sizeof(tests[0]));
}
