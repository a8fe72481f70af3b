/*
 * System V shared memory: shmget by key (IPC_PRIVATE, IPC_CREAT,
 * IPC_EXCL; SHM_HUGETLB with no huge pages reserved), shmat (anywhere,
 * at an address, SHM_RND, SHM_RDONLY), shmdt, shmctl's IPC_STAT, IPC_SET and IPC_RMID, with their errnos;
 * memory shared between attaches and across fork; and a shared futex in
 * a segment, which names the segment's page, not the address; the
 * kernel.shmmax and kernel.shmmni sysctls. A static
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

static const struct test tests[] = {
	TEST(attaches_share_one_segment),
	TEST(keys_find_segments),
	TEST(attach_addresses_and_modes),
	TEST(a_shared_futex_in_a_segment_meets_across_processes),
	TEST(shmmax_and_shmmni_limit_segments),
};

int main(void)
{
	return run_tests("sysv-shm", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
