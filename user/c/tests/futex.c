/*
 * Futexes as glibc uses them (pthread_join, mutexes, condition variables
 * with CLOCK_REALTIME deadlines, semaphores, rwlocks, barriers) and the
 * futex(2) operations underneath, called directly: WAIT and WAIT_BITSET
 * with their timeouts, WAKE_BITSET, CMP_REQUEUE and WAKE_OP, and their
 * errnos; and robust mutexes, which the kernel releases when their owner
 * dies (set_robust_list). A static glibc program: make test runs it on faultline, make
 * test-linux on Debian's Linux 6.12, and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long futex(uint32_t *uaddr, int op, uint32_t val, const void *timeout_or_val2,
		  uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout_or_val2, uaddr2, val3);
}

/* Milliseconds between two CLOCK_MONOTONIC readings. */
static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

static struct timespec realtime_in(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

static void *square(void *arg)
{
	return (void *)((intptr_t)arg * (intptr_t)arg);
}

static int pthread_join_returns_each_threads_value(void)
{
	pthread_t t[4];
	for (intptr_t i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, square, (void *)(i + 2)) == 0, "pthread_create");
	for (intptr_t i = 0; i < 4; i++) {
		void *ret;
		CHECK(pthread_join(t[i], &ret) == 0, "pthread_join");
		CHECK((intptr_t)ret == (i + 2) * (i + 2), "thread %ld returned %ld", (long)i,
		      (long)(intptr_t)ret);
	}
	return 0;
}

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *count_up(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&counter_lock);
		counter++;
		pthread_mutex_unlock(&counter_lock);
	}
	return NULL;
}

static int a_contended_mutex_loses_no_increment(void)
{
	pthread_t t[4];
	counter = 0;
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, count_up, NULL) == 0, "pthread_create");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(counter == 80000, "counter %ld, want 80000", counter);
	return 0;
}

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static int queued, released, woke;

static void *wait_for_release(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&queue_lock);
	queued++;
	while (!released)
		pthread_cond_wait(&queue_cond, &queue_lock);
	woke++;
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

static int a_broadcast_wakes_every_waiter(void)
{
	pthread_t t[3];
	queued = released = woke = 0;
	for (int i = 0; i < 3; i++)
		CHECK(pthread_create(&t[i], NULL, wait_for_release, NULL) == 0, "pthread_create");
	for (;;) {
		pthread_mutex_lock(&queue_lock);
		int all = queued == 3;
		pthread_mutex_unlock(&queue_lock);
		if (all)
			break;
		usleep(1000);
	}
	usleep(10000); /* let them sleep in the futex */
	pthread_mutex_lock(&queue_lock);
	released = 1;
	pthread_cond_broadcast(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(woke == 3, "%d of 3 woke", woke);
	return 0;
}

static int timed_waits_time_out_on_the_realtime_clock(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec t0, t1, deadline = realtime_in(60);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&m);
	int rc = pthread_cond_timedwait(&c, &m, &deadline);
	pthread_mutex_unlock(&m);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long cond_ms = ms_between(&t0, &t1);
	sem_t s;
	sem_init(&s, 0, 0);
	deadline = realtime_in(40);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int src = sem_timedwait(&s, &deadline), serr = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long sem_ms = ms_between(&t0, &t1);
	CHECK(rc == ETIMEDOUT, "pthread_cond_timedwait: %d, want ETIMEDOUT", rc);
	CHECK(cond_ms >= 59 && cond_ms < 2000, "the condvar waited %ld ms for 60", cond_ms);
	CHECK(src == -1 && serr == ETIMEDOUT, "sem_timedwait: %d, errno %d", src, serr);
	CHECK(sem_ms >= 39 && sem_ms < 2000, "the semaphore waited %ld ms for 40", sem_ms);
	return 0;
}

static sem_t items;
static int consumed;

static void *consume(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		sem_wait(&items);
		__atomic_fetch_add(&consumed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int semaphores_pass_every_post(void)
{
	pthread_t t[2];
	consumed = 0;
	sem_init(&items, 0, 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, consume, NULL) == 0, "pthread_create");
	for (int i = 0; i < 200; i++) {
		sem_post(&items);
		if (i % 50 == 0)
			usleep(500);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int left;
	sem_getvalue(&items, &left);
	CHECK(consumed == 200 && left == 0, "consumed %d, %d left", consumed, left);
	return 0;
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t barrier;
static long shared_pair[2];
static int torn;

static void *rw_worker(void *arg)
{
	intptr_t writer = (intptr_t)arg;
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < 5000; i++) {
		if (writer) {
			pthread_rwlock_wrlock(&rw);
			shared_pair[0]++;
			shared_pair[1]++;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			if (shared_pair[0] != shared_pair[1])
				__atomic_store_n(&torn, 1, __ATOMIC_RELAXED);
			pthread_rwlock_unlock(&rw);
		}
	}
	return NULL;
}

static int rwlocks_and_barriers_keep_writers_alone(void)
{
	pthread_t t[4];
	torn = 0;
	shared_pair[0] = shared_pair[1] = 0;
	pthread_barrier_init(&barrier, NULL, 4);
	for (intptr_t i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, rw_worker, (void *)(intptr_t)(i < 2)) == 0, "pthread_create");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	CHECK(!torn, "a reader saw a half-done write");
	CHECK(shared_pair[0] == 10000, "writes %ld, want 10000", shared_pair[0]);
	return 0;
}

static int futex_waits_check_the_word_and_time_out(void)
{
	uint32_t word = 1;
	struct timespec rel = { 0, 30 * 1000000 }, t0, t1, bad = { 0, 1000000000 };
	long again = futex(&word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	int again_err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long timed = futex(&word, FUTEX_WAIT_PRIVATE, 1, &rel, NULL, 0);
	int timed_err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long waited = ms_between(&t0, &t1);
	struct timespec abs_rt = realtime_in(30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long bitset = futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &abs_rt,
			    NULL, FUTEX_BITSET_MATCH_ANY);
	int bitset_err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long waited_abs = ms_between(&t0, &t1);
	long empty = futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, NULL, NULL, 0);
	int empty_err = errno;
	long badts = futex(&word, FUTEX_WAIT_PRIVATE, 1, &bad, NULL, 0);
	int badts_err = errno;
	long rt_wake = futex(&word, FUTEX_WAKE_PRIVATE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0);
	int rt_wake_err = errno;
	long unaligned = futex((uint32_t *)((char *)&word + 1), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	int unaligned_err = errno;
	long nowhere = futex((uint32_t *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	int nowhere_err = errno;
	long none = futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	CHECK(again == -1 && again_err == EAGAIN, "a changed word: %ld, errno %d", again, again_err);
	CHECK(timed == -1 && timed_err == ETIMEDOUT && waited >= 29,
	      "relative timeout: %ld, errno %d, %ld ms", timed, timed_err, waited);
	CHECK(bitset == -1 && bitset_err == ETIMEDOUT && waited_abs >= 29,
	      "absolute CLOCK_REALTIME timeout: %ld, errno %d, %ld ms", bitset, bitset_err,
	      waited_abs);
	CHECK(empty == -1 && empty_err == EINVAL, "an empty bitset: %ld, errno %d", empty,
	      empty_err);
	CHECK(badts == -1 && badts_err == EINVAL, "tv_nsec 1e9: %ld, errno %d", badts, badts_err);
	CHECK(rt_wake == -1 && rt_wake_err == ENOSYS, "WAKE with CLOCK_REALTIME: %ld, errno %d",
	      rt_wake, rt_wake_err);
	CHECK(unaligned == -1 && unaligned_err == EINVAL, "an unaligned word: %ld, errno %d",
	      unaligned, unaligned_err);
	CHECK(nowhere == -1 && nowhere_err == EFAULT, "an unmapped word: %ld, errno %d", nowhere,
	      nowhere_err);
	CHECK(none == 0, "waking nobody: %ld", none);
	return 0;
}

static uint32_t word1, word2;

struct waiter {
	uint32_t *word;
	uint32_t bitset;
	long rc;
};

static void *futex_waiter(void *arg)
{
	struct waiter *w = arg;
	w->rc = futex(w->word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, w->bitset);
	return NULL;
}

/* Starts a thread waiting on W and gives it time to sleep there. */
static void start_waiter(pthread_t *t, struct waiter *w)
{
	pthread_create(t, NULL, futex_waiter, w);
	usleep(20000);
}

static int bitset_requeue_and_wake_op_wake_whom_they_should(void)
{
	pthread_t t[3];
	struct waiter w[3] = { { &word1, 1, 9 }, { &word1, 2, 9 }, { &word1, 2, 9 } };
	word1 = word2 = 0;
	for (int i = 0; i < 3; i++)
		start_waiter(&t[i], &w[i]);
	/* Bitset 1 wakes only the first waiter. */
	long bits = futex(&word1, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 1);
	pthread_join(t[0], NULL);
	/* CMP_REQUEUE: a stale value is EAGAIN; then wake none, move both. */
	long stale = futex(&word1, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)2, &word2, 7);
	int stale_err = errno;
	long moved = futex(&word1, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)2, &word2, 0);
	long on_old = futex(&word1, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0);
	/* WAKE_OP: word2 += 5 (old 0), then wake on word2 since old == 0. */
	uint32_t op = FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0);
	long op_woke = futex(&word1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)10, &word2, op);
	for (int i = 1; i < 3; i++)
		pthread_join(t[i], NULL);
	uint32_t op2 = FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0);
	long op_none = futex(&word1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)10, &word2, op2);
	long bad_op = futex(&word1, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &word2, 0xf0000000u);
	int bad_op_err = errno;
	CHECK(bits == 1 && w[0].rc == 0, "WAKE_BITSET 1: woke %ld, first waiter %ld", bits,
	      w[0].rc);
	CHECK(stale == -1 && stale_err == EAGAIN, "CMP_REQUEUE, stale: %ld, errno %d", stale,
	      stale_err);
	CHECK(moved == 2 && on_old == 0, "CMP_REQUEUE moved %ld (want 2), then %ld woke on the "
	      "old word (want 0)", moved, on_old);
	CHECK(op_woke == 2 && w[1].rc == 0 && w[2].rc == 0, "WAKE_OP woke %ld, want 2", op_woke);
	CHECK(word2 == 6 && op_none == 0, "word2 %u (want 6), a failed compare woke %ld", word2,
	      op_none);
	CHECK(bad_op == -1 && bad_op_err == ENOSYS, "an unknown op: %ld, errno %d", bad_op,
	      bad_op_err);
	return 0;
}

static pthread_mutex_t robust;
static volatile int robust_held;

static void *lock_and_die(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	robust_held = 1;
	usleep(30000); /* long enough for the main thread to wait on it */
	return NULL;   /* dies holding it */
}

/* A private wake names the futex by address alone and never touches the
 * page: on memory just unmapped it wakes nobody (glibc aborts with "The
 * futex facility returned an unexpected error code" on anything else). A
 * shared wake needs the page, a wait needs the word: EFAULT. */
static int a_private_wake_on_unmapped_memory_wakes_nobody(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	munmap(p, page);
	long priv = syscall(SYS_futex, p, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	int priv_err = errno;
	long shared = syscall(SYS_futex, p, FUTEX_WAKE, 1, NULL, NULL, 0);
	int shared_err = errno;
	long wait = syscall(SYS_futex, p, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	int wait_err = errno;
	long odd = syscall(SYS_futex, (char *)p + 2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	int odd_err = errno;
	CHECK(priv == 0, "a private wake: %ld, errno %d", priv, priv_err);
	CHECK(shared == -1 && shared_err == EFAULT, "a shared wake: %ld, errno %d", shared,
	      shared_err);
	CHECK(wait == -1 && wait_err == EFAULT, "a wait: %ld, errno %d", wait, wait_err);
	CHECK(odd == -1 && odd_err == EINVAL, "a misaligned wake: %ld, errno %d", odd, odd_err);
	return 0;
}

static int a_robust_mutex_passes_on_when_its_owner_dies(void)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &attr);
	robust_held = 0;
	pthread_t t;
	CHECK(pthread_create(&t, NULL, lock_and_die, NULL) == 0, "pthread_create");
	while (!robust_held)
		usleep(1000);
	/* Waits in the kernel until the owner's death releases it. */
	int waited = pthread_mutex_lock(&robust);
	pthread_join(t, NULL);
	int consistent = pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);
	int again = pthread_mutex_lock(&robust);
	pthread_mutex_unlock(&robust);
	/* An owner that exits while nobody waits: the next lock learns it. */
	CHECK(pthread_create(&t, NULL, lock_and_die, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	int later = pthread_mutex_lock(&robust);
	pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);
	struct robust_list_head *head = NULL;
	size_t len = 0;
	long got = syscall(SYS_get_robust_list, 0, &head, &len);
	long bad = syscall(SYS_set_robust_list, head, 8);
	int bad_err = errno;
	CHECK(waited == EOWNERDEAD, "a waiter got %d, want EOWNERDEAD (%d)", waited, EOWNERDEAD);
	CHECK(consistent == 0 && again == 0, "consistent %d, relock %d", consistent, again);
	CHECK(later == EOWNERDEAD, "after an unwatched death: %d, want EOWNERDEAD", later);
	CHECK(got == 0 && head != NULL && len == sizeof(*head),
	      "get_robust_list: %ld, head %p, len %zu", got, (void *)head, len);
	CHECK(bad == -1 && bad_err == EINVAL, "set_robust_list of 8 bytes: %ld, errno %d", bad,
	      bad_err);
	return 0;
}

static const struct test tests[] = {
	TEST(pthread_join_returns_each_threads_value),
	TEST(a_contended_mutex_loses_no_increment),
	TEST(a_broadcast_wakes_every_waiter),
	TEST(timed_waits_time_out_on_the_realtime_clock),
	TEST(semaphores_pass_every_post),
	TEST(rwlocks_and_barriers_keep_writers_alone),
	TEST(futex_waits_check_the_word_and_time_out),
	TEST(bitset_requeue_and_wake_op_wake_whom_they_should),
	TEST(a_private_wake_on_unmapped_memory_wakes_nobody),
	TEST(a_robust_mutex_passes_on_when_its_owner_dies),
};

int main(void)
{
	return run_tests("futex", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
