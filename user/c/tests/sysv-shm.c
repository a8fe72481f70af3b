/*
 * System V shared memory: shmget by key (IPC_PRIVATE, IPC_CREAT,
 * IPC_EXCL; SHM_HUGETLB with no huge pages reserved), shmat (anywhere,
 * at an address, SHM_RND, SHM_RDONLY), shmdt, shmctl's IPC_STAT, IPC_SET and IPC_RMID, with their errnos;
 * memory shared between attaches and across fork; and a shared futex in
 * a segment, which names the segment's page, not the address; the
 * kernel.shmmax and kernel.shmmni sysctls; a keyed segment found by an
 * unrelated program; its name in /proc/PID/maps and its line in
 * /proc/sysvipc/shm; huge folios when shmem_enabled says always; and
 * the permission bits, owner checks and SHM_LOCK against nobody. A static
 * glibc program: make test runs it on faultline, make test-linux on
 * Debian's Linux 6.12, and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* A key of our own, unlikely to be anyone else's. */
#define KEY 0x7e57f00d

static int attaches_share_one_segment(void)
{
	int id = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0600);
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	char *a = shmat(id, NULL, 0);
	char *b = shmat(id, NULL, 0);
	CHECK(a != (void *)-1 && b != (void *)-1 && a != b, "shmat: %p %p", a, b);
	int zero = a[0] == 0 && a[9999] == 0;
	strcpy(a, "hello");
	b[9999] = 7;
	int shared = strcmp(b, "hello") == 0 && a[9999] == 7;
	struct shmid_ds ds;
	int stat = shmctl(id, IPC_STAT, &ds);
	pid_t child = fork();
	if (child == 0) {
		strcpy(a, "child");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	int from_child = strcmp(b, "child") == 0;
	struct shmid_ds after_fork;
	shmctl(id, IPC_STAT, &after_fork);
	int dt = shmdt(a) + shmdt(b);
	int again = shmdt(b);
	int again_err = errno;
	int odd = shmdt(b + 1);
	int odd_err = errno;
	int rm = shmctl(id, IPC_RMID, NULL);
	int gone = shmctl(id, IPC_STAT, &ds);
	int gone_err = errno;
	CHECK(zero && shared, "the attaches do not share zeroed memory");
	CHECK(stat == 0 && ds.shm_segsz == 10000 && ds.shm_nattch == 2 && ds.shm_cpid == getpid() &&
		      ds.shm_lpid == getpid() && (ds.shm_perm.mode & 0777) == 0600 &&
		      ds.shm_perm.__key == IPC_PRIVATE,
	      "IPC_STAT: %d, size %zu, nattch %lu, cpid %d, lpid %d, mode %o", stat, ds.shm_segsz,
	      (unsigned long)ds.shm_nattch, ds.shm_cpid, ds.shm_lpid, ds.shm_perm.mode);
	CHECK(from_child, "a forked child's write is not seen");
	CHECK(after_fork.shm_nattch == 2, "after the child exited: nattch %lu",
	      (unsigned long)after_fork.shm_nattch);
	CHECK(dt == 0 && again == -1 && again_err == EINVAL, "shmdt twice: %d, then %d errno %d", dt,
	      again, again_err);
	CHECK(odd == -1 && odd_err == EINVAL, "shmdt of a misaligned address: %d, errno %d", odd,
	      odd_err);
	CHECK(rm == 0 && gone == -1 && gone_err == EINVAL, "IPC_RMID %d, then IPC_STAT %d errno %d",
	      rm, gone, gone_err);
	return 0;
}

static int keys_find_segments(void)
{
	int made = shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0640);
	CHECK(made >= 0, "shmget IPC_CREAT | IPC_EXCL: %s", strerror(errno));
	int found = shmget(KEY, 100, 0);
	int created_again = shmget(KEY, 4096, IPC_CREAT | 0600);
	int excl = shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600);
	int excl_err = errno;
	int bigger = shmget(KEY, 8192, 0);
	int bigger_err = errno;
	int none = shmget(KEY + 1, 4096, 0600);
	int none_err = errno;
	int empty = shmget(IPC_PRIVATE, 0, 0600);
	int empty_err = errno;
	int private2 = shmget(IPC_PRIVATE, 4096, 0600);
	/* No huge pages are reserved: SHM_HUGETLB finds none, and a size
	 * arm64 does not have is EINVAL. */
	int huge = shmget(IPC_PRIVATE, 2 << 20, SHM_HUGETLB | 0600);
	int huge_err = errno;
	int odd_huge = shmget(IPC_PRIVATE, 2 << 20, SHM_HUGETLB | (20 << 26) | 0600);
	int odd_huge_err = errno;
	/* Removed while attached: its key finds it no more, it lives on. */
	char *p = shmat(made, NULL, 0);
	int rm = shmctl(made, IPC_RMID, NULL);
	int by_key = shmget(KEY, 4096, 0);
	int by_key_err = errno;
	struct shmid_ds ds;
	int stat = shmctl(made, IPC_STAT, &ds);
	p[0] = 1;
	shmdt(p);
	int after = shmctl(made, IPC_STAT, &ds);
	int after_err = errno;
	shmctl(private2, IPC_RMID, NULL);
	CHECK(found == made && created_again == made, "by key: %d and %d, want %d", found,
	      created_again, made);
	CHECK(excl == -1 && excl_err == EEXIST, "IPC_EXCL on a key in use: %d, errno %d", excl,
	      excl_err);
	CHECK(bigger == -1 && bigger_err == EINVAL, "more than its size: %d, errno %d", bigger,
	      bigger_err);
	CHECK(none == -1 && none_err == ENOENT, "a key with none, no IPC_CREAT: %d, errno %d", none,
	      none_err);
	CHECK(empty == -1 && empty_err == EINVAL, "size 0: %d, errno %d", empty, empty_err);
	CHECK(private2 >= 0 && private2 != made, "IPC_PRIVATE makes a new one: %d", private2);
	CHECK(huge == -1 && huge_err == ENOMEM, "SHM_HUGETLB: %d, errno %d", huge, huge_err);
	CHECK(odd_huge == -1 && odd_huge_err == EINVAL, "SHM_HUGETLB of 1M pages: %d, errno %d",
	      odd_huge, odd_huge_err);
	CHECK(rm == 0 && by_key == -1 && by_key_err == ENOENT,
	      "after IPC_RMID the key finds %d, errno %d", by_key, by_key_err);
	CHECK(stat == 0 && ds.shm_perm.__key == IPC_PRIVATE && (ds.shm_perm.mode & SHM_DEST) &&
		      ds.shm_nattch == 1,
	      "removed but attached: %d, key %#x, mode %o, nattch %lu", stat, ds.shm_perm.__key,
	      ds.shm_perm.mode, (unsigned long)ds.shm_nattch);
	CHECK(after == -1 && after_err == EINVAL, "after the last detach: %d, errno %d", after,
	      after_err);
	return 0;
}

static int attach_addresses_and_modes(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int id = shmget(IPC_PRIVATE, 2 * page, 0600);
	char *hole = mmap(NULL, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 4 * page);
	char *at = shmat(id, hole, 0);
	char *taken = shmat(id, hole, 0);
	int taken_err = errno;
	char *remap = shmat(id, hole, SHM_REMAP);
	char *odd = shmat(id, hole + 2 * page + 1, 0);
	int odd_err = errno;
	char *rnd = shmat(id, hole + 2 * page + 1, SHM_RND);
	char *ro = shmat(id, NULL, SHM_RDONLY);
	char *bad = shmat(id + 1000, NULL, 0);
	int bad_err = errno;
	char *neg = shmat(-1, NULL, 0);
	int neg_err = errno;
	char *remap_any = shmat(id, NULL, SHM_REMAP);
	int remap_any_err = errno;
	at[5] = 42;
	int seen = rnd != (void *)-1 && rnd[5] == 42 && ro != (void *)-1 && ro[5] == 42;
	/* IPC_SET changes the mode's permission bits only. */
	struct shmid_ds ds;
	shmctl(id, IPC_STAT, &ds);
	ds.shm_perm.mode = 0444 | SHM_DEST;
	int set = shmctl(id, IPC_SET, &ds);
	shmctl(id, IPC_STAT, &ds);
	int unknown = shmctl(id, 99, &ds);
	int unknown_err = errno;
	int badptr = shmctl(id, IPC_STAT, (struct shmid_ds *)8);
	int badptr_err = errno;
	shmdt(at);
	shmdt(rnd);
	shmdt(ro);
	shmctl(id, IPC_RMID, NULL);
	CHECK(at == hole, "shmat at %p: %p", hole, at);
	CHECK(taken == (void *)-1 && taken_err == EINVAL, "at a taken address: %p, errno %d", taken,
	      taken_err);
	CHECK(remap == hole, "SHM_REMAP over it: %p", remap);
	CHECK(odd == (void *)-1 && odd_err == EINVAL, "a misaligned address: %p, errno %d", odd,
	      odd_err);
	CHECK(rnd == hole + 2 * page, "SHM_RND: %p, want %p", rnd, hole + 2 * page);
	CHECK(seen, "SHM_RND and SHM_RDONLY attaches do not see the data");
	CHECK(bad == (void *)-1 && bad_err == EINVAL && neg == (void *)-1 && neg_err == EINVAL,
	      "bad ids: errno %d and %d", bad_err, neg_err);
	CHECK(remap_any == (void *)-1 && remap_any_err == EINVAL,
	      "SHM_REMAP without an address: %p, errno %d", remap_any, remap_any_err);
	CHECK(set == 0 && (ds.shm_perm.mode & 07777) == 0444, "IPC_SET: %d, mode %o", set,
	      ds.shm_perm.mode);
	CHECK(unknown == -1 && unknown_err == EINVAL, "command 99: %d, errno %d", unknown,
	      unknown_err);
	CHECK(badptr == -1 && badptr_err == EFAULT, "IPC_STAT to an unmapped buffer: %d, errno %d",
	      badptr, badptr_err);
	return 0;
}

/* A shared futex in a segment is named by the segment's page: a waiter
 * in a child and a waker in the parent at another address meet. */
static int a_shared_futex_in_a_segment_meets_across_processes(void)
{
	int id = shmget(IPC_PRIVATE, 4096, 0600);
	uint32_t *child_view = shmat(id, NULL, 0);
	uint32_t *parent_view = shmat(id, NULL, 0);
	child_view[0] = 0;
	child_view[1] = 0;
	pid_t child = fork();
	if (child == 0) {
		__atomic_store_n(&child_view[1], 1, __ATOMIC_SEQ_CST);
		long rc = syscall(SYS_futex, &child_view[0], FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(rc == 0 ? 0 : 1);
	}
	while (!__atomic_load_n(&parent_view[1], __ATOMIC_SEQ_CST))
		usleep(1000);
	long woke = 0;
	for (int i = 0; i < 200 && woke == 0; i++) {
		usleep(5000);
		woke = syscall(SYS_futex, &parent_view[0], FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	int status = -1;
	waitpid(child, &status, 0);
	shmdt(child_view);
	shmdt(parent_view);
	shmctl(id, IPC_RMID, NULL);
	CHECK(woke == 1, "the parent's wake woke %ld", woke);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's wait (status %#x)",
	      status);
	return 0;
}

/* The text of a /proc/sys file, or "" if it cannot be read. */
static void read_sysctl(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* kernel.shmmax and kernel.shmmni: Linux's defaults, and a smaller shmmax
 * refuses a larger segment until it is put back. */
static int shmmax_and_shmmni_limit_segments(void)
{
	char max[32], mni[32];
	read_sysctl("/proc/sys/kernel/shmmax", max, sizeof(max));
	read_sysctl("/proc/sys/kernel/shmmni", mni, sizeof(mni));
	CHECK(!strcmp(max, "18446744073692774399\n"), "shmmax: '%s'", max);
	CHECK(!strcmp(mni, "4096\n"), "shmmni: '%s'", mni);
	int fd = open("/proc/sys/kernel/shmmax", O_WRONLY);
	CHECK(fd >= 0 && write(fd, "4096", 4) == 4, "writing shmmax: %s", strerror(errno));
	int big = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
	int big_errno = errno;
	int small = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	CHECK(pwrite(fd, max, strlen(max), 0) == (ssize_t)strlen(max), "restoring shmmax");
	close(fd);
	int again = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
	shmctl(small, IPC_RMID, NULL);
	shmctl(again, IPC_RMID, NULL);
	CHECK(big == -1 && big_errno == EINVAL, "8192 bytes over shmmax 4096: %d", big);
	CHECK(small >= 0 && again >= 0, "within shmmax: %d, after restoring: %d", small, again);
	return 0;
}


/* The key the exec'd copy of this program looks for. */
#define KEY2 0x7e57f00e

/* What the exec'd copy does: finds KEY2's segment, checks the parent's
 * words and answers. */
static int attach_by_key(void)
{
	int id = shmget(KEY2, 0, 0);
	if (id < 0)
		return 2;
	char *p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return 3;
	if (strcmp(p, "from the parent"))
		return 4;
	strcpy(p, "from the other program");
	return shmdt(p) ? 5 : 0;
}

static int a_keyed_segment_meets_another_program(void)
{
	int id = shmget(KEY2, 65536, IPC_CREAT | 0600);
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1, "shmat: %s", strerror(errno));
	strcpy(p, "from the parent");
	pid_t child = fork();
	if (child == 0) {
		char *argv[] = { "sysv-shm", "--attach", NULL };
		execv("/proc/self/exe", argv);
		_exit(9);
	}
	int status;
	waitpid(child, &status, 0);
	int answer = strcmp(p, "from the other program");
	shmdt(p);
	shmctl(id, IPC_RMID, NULL);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other program exited %d",
	      WEXITSTATUS(status));
	CHECK(answer == 0, "its answer: '%s'", p);
	return 0;
}

/* Reads all of `path` into `buf`. */
static void slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	ssize_t n;
	while (fd >= 0 && got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = 0;
	if (fd >= 0)
		close(fd);
}

static int segments_show_in_maps_and_sysvipc(void)
{
	static char buf[65536];
	int id = shmget(KEY + 1, 8192, IPC_CREAT | IPC_EXCL | 0640);
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	char *p = shmat(id, NULL, 0);
	p[0] = 1;
	slurp("/proc/self/maps", buf, sizeof(buf));
	char name[64];
	snprintf(name, sizeof(name), "/SYSV%08x (deleted)\n", KEY + 1);
	int in_maps = strstr(buf, name) != NULL;
	slurp("/proc/sysvipc/shm", buf, sizeof(buf));
	char line[128];
	snprintf(line, sizeof(line), "\n%10d %10d   640                  8192 %5d %5d      1     0     0     0     0 ",
		 KEY + 1, id, getpid(), getpid());
	int header = !strncmp(buf, "       key      shmid perms                  size  cpid  lpid nattch   uid", 74);
	int listed = strstr(buf, line) != NULL;
	shmdt(p);
	shmctl(id, IPC_RMID, NULL);
	CHECK(in_maps, "no %s in /proc/self/maps", name);
	CHECK(header && listed, "/proc/sysvipc/shm lacks %.100s", line + 1);
	return 0;
}

/* ShmemHugePages in /proc/meminfo, in kB. */
static long shmem_huge_kb(void)
{
	static char buf[8192];
	slurp("/proc/meminfo", buf, sizeof(buf));
	char *at = strstr(buf, "ShmemHugePages:");
	return at ? atol(at + strlen("ShmemHugePages:")) : -1;
}

static int segments_take_huge_folios_as_shmem_enabled_allows(void)
{
	const char *knob = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
	char old[128];
	slurp(knob, old, sizeof(old));
	char *chosen = strchr(old, '[');
	CHECK(chosen, "no choice in '%s'", old);
	*strchr(chosen, ']') = 0;
	int fd = open(knob, O_WRONLY);
	CHECK(fd >= 0 && write(fd, "always", 6) == 6, "writing always: %s", strerror(errno));
	long before = shmem_huge_kb();
	int id = shmget(IPC_PRIVATE, 4 << 20, IPC_CREAT | 0600);
	char *p = shmat(id, NULL, 0);
	for (int i = 0; p != (void *)-1 && i < 4 << 20; i += 4096)
		p[i] = 1;
	long during = shmem_huge_kb();
	shmdt(p);
	shmctl(id, IPC_RMID, NULL);
	long after = shmem_huge_kb();
	if (pwrite(fd, chosen + 1, strlen(chosen + 1), 0) < 0)
		perror("restoring shmem_enabled");
	close(fd);
	CHECK(id >= 0 && p != (void *)-1, "a 4M segment: %s", strerror(errno));
	CHECK(during - before == 4096, "ShmemHugePages %ld kB, then %ld kB", before, during);
	CHECK(after == before, "ShmemHugePages %ld kB once removed, %ld before", after, before);
	return 0;
}

/* As nobody, against a 0600 segment of root's. */
static int nobody_meets_a_private_segment(int id)
{
	int shm_id_of_key = id;
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 10;
	struct shmid_ds ds;
	if (shmat(id, NULL, 0) != (void *)-1 || errno != EACCES)
		return 1;
	if (shmctl(id, IPC_STAT, &ds) != -1 || errno != EACCES)
		return 2;
	if (shmctl(id, IPC_RMID, NULL) != -1 || errno != EPERM)
		return 3;
	/* Asking for no access finds it; asking to read does not. */
	if (shmget(KEY + 2, 0, 0) != shm_id_of_key || shmget(KEY + 2, 0, 0400) != -1 ||
	    errno != EACCES)
		return 4;
	if (shmctl(id, SHM_LOCK, NULL) != -1 || errno != EPERM)
		return 5;
	int mine = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (mine < 0 || shmctl(mine, IPC_STAT, &ds) || ds.shm_perm.uid != 65534 ||
	    ds.shm_perm.cuid != 65534 || ds.shm_perm.gid != 65534)
		return 6;
	return shmctl(mine, IPC_RMID, NULL) ? 7 : 0;
}

static int permissions_guard_segments(void)
{
	int id = shmget(KEY + 2, 4096, IPC_CREAT | IPC_EXCL | 0600);
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	pid_t child = fork();
	if (child == 0)
		_exit(nobody_meets_a_private_segment(id));
	int status;
	waitpid(child, &status, 0);
	int lock = shmctl(id, SHM_LOCK, NULL);
	struct shmid_ds ds;
	shmctl(id, IPC_STAT, &ds);
	int locked = ds.shm_perm.mode;
	int unlock = shmctl(id, SHM_UNLOCK, NULL);
	shmctl(id, IPC_STAT, &ds);
	shmctl(id, IPC_RMID, NULL);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody's check %d failed",
	      WEXITSTATUS(status));
	CHECK(lock == 0 && (locked & SHM_LOCKED), "SHM_LOCK: %d mode %o", lock, locked);
	CHECK(unlock == 0 && !(ds.shm_perm.mode & SHM_LOCKED), "SHM_UNLOCK: %d mode %o", unlock,
	      ds.shm_perm.mode);
	return 0;
}

static const struct test tests[] = {
	TEST(attaches_share_one_segment),
	TEST(keys_find_segments),
	TEST(attach_addresses_and_modes),
	TEST(a_shared_futex_in_a_segment_meets_across_processes),
	TEST(shmmax_and_shmmni_limit_segments),
	TEST(a_keyed_segment_meets_another_program),
	TEST(segments_show_in_maps_and_sysvipc),
	TEST(segments_take_huge_folios_as_shmem_enabled_allows),
	TEST(permissions_guard_segments),
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--attach"))
		return attach_by_key();
	return run_tests("sysv-shm", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
