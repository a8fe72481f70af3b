/*
 * Futexes as glibc uses them (pthread_join, mutexes, condition variables
 * with CLOCK_REALTIME deadlines, semaphores, rwlocks, barriers) and the
 * futex(2) operations underneath, called directly: WAIT and WAIT_BITSET
 * with their timeouts, WAKE_BITSET, CMP_REQUEUE and WAKE_OP, and their
 * errnos; robust mutexes, which the kernel releases when their owner
 * dies (set_robust_list); priority-inheritance locks (LOCK_PI, LOCK_PI2,
 * TRYLOCK_PI, UNLOCK_PI: the owner's TID in the word, FUTEX_WAITERS,
 * FUTEX_OWNER_DIED, the kernel handing the lock to the highest-priority
 * waiter) and glibc's PTHREAD_PRIO_INHERIT mutexes on them; the
 * requeue_pi pair (WAIT_REQUEUE_PI, CMP_REQUEUE_PI); futex_waitv; which
 * waits a signal handler restarts; and what an exiting or exec'ing
 * thread's robust and PI locks pass on.
 * A static glibc program: make test runs it on faultline, make
 * test-linux on Debian's Linux 6.12, and the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
	/* Linux 6.12 takes FUTEX_CLOCK_REALTIME only with WAIT_BITSET,
	 * WAIT_REQUEUE_PI and LOCK_PI2. */
	long rt_wait = futex(&word, FUTEX_WAIT_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &rel, NULL, 0);
	int rt_wait_err = errno;
	CHECK(rt_wait == -1 && rt_wait_err == ENOSYS, "WAIT with CLOCK_REALTIME: %ld, errno %d",
	      rt_wait, rt_wait_err);
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

static pid_t tid_of_caller(void)
{
	return syscall(SYS_gettid);
}

static struct timespec clock_in(clockid_t clock, long ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* A thread that runs one PI operation on a word and reports. */
struct pi_op {
	uint32_t *word;
	int op;
	const struct timespec *timeout;
	uint32_t *word2;      /* WAIT_REQUEUE_PI's PI lock */
	int unlock;           /* unlock the lock (word2 if set) once held */
	volatile int started; /* set just before the call */
	pid_t tid;
	long rc;
	int err;
	uint32_t seen;        /* the lock word just after the call */
	long unlock_rc;
	int order;            /* the how-manyeth to get the lock */
};

static volatile int got_lock;

static void *pi_thread(void *arg)
{
	struct pi_op *p = arg;
	uint32_t *lock = p->word2 ? p->word2 : p->word;
	p->tid = tid_of_caller();
	p->started = 1;
	p->rc = futex(p->word, p->op, 0, p->timeout, p->word2, 0);
	p->err = errno;
	p->seen = *lock;
	if (p->rc == 0) {
		p->order = __atomic_add_fetch(&got_lock, 1, __ATOMIC_SEQ_CST);
		if (p->unlock)
			p->unlock_rc = futex(lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	}
	return NULL;
}

/* Starts a pi_thread and gives it time to sleep in the kernel. */
static void start_pi(pthread_t *t, struct pi_op *p)
{
	pthread_create(t, NULL, pi_thread, p);
	while (!p->started)
		usleep(1000);
	usleep(20000);
}

static int pi_lock_words_hold_the_owners_tid(void)
{
	uint32_t w = 0;
	pid_t me = tid_of_caller();
	long lock = futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	uint32_t held = w;
	long again = futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	int again_err = errno;
	long self_try = futex(&w, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	int self_try_err = errno;
	/* Another thread's trylock fails, and marks the word contended. */
	pthread_t t;
	struct pi_op other = { .word = &w, .op = FUTEX_TRYLOCK_PI_PRIVATE };
	pthread_create(&t, NULL, pi_thread, &other);
	pthread_join(t, NULL);
	uint32_t contended = w;
	struct pi_op stranger = { .word = &w, .op = FUTEX_UNLOCK_PI_PRIVATE };
	pthread_create(&t, NULL, pi_thread, &stranger);
	pthread_join(t, NULL);
	long unlock = futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	uint32_t freed = w;
	long unheld = futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	int unheld_err = errno;
	long rt = futex(&w, FUTEX_LOCK_PI_PRIVATE | FUTEX_CLOCK_REALTIME, 0, NULL, NULL, 0);
	int rt_err = errno;
	uint32_t ghost = 0x3ffffff0; /* a TID no thread has */
	long nobody = futex(&ghost, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	int nobody_err = errno;
	long odd = futex((uint32_t *)((char *)&w + 2), FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	int odd_err = errno;
	CHECK(lock == 0 && held == (uint32_t)me, "LOCK_PI of a free lock: %ld, word %#x, tid %#x",
	      lock, held, me);
	CHECK(again == -1 && again_err == EDEADLK, "LOCK_PI of a lock held: %ld, errno %d", again,
	      again_err);
	CHECK(self_try == -1 && self_try_err == EDEADLK, "TRYLOCK_PI of a lock held: %ld, errno %d",
	      self_try, self_try_err);
	CHECK(other.rc == -1 && other.err == EAGAIN, "another's TRYLOCK_PI: %ld, errno %d", other.rc,
	      other.err);
	CHECK(contended == (me | FUTEX_WAITERS), "after a failed TRYLOCK_PI: word %#x", contended);
	CHECK(stranger.rc == -1 && stranger.err == EPERM, "another's UNLOCK_PI: %ld, errno %d",
	      stranger.rc, stranger.err);
	CHECK(unlock == 0 && freed == 0, "UNLOCK_PI with nobody waiting: %ld, word %#x", unlock,
	      freed);
	CHECK(unheld == -1 && unheld_err == EPERM, "UNLOCK_PI of a free lock: %ld, errno %d", unheld,
	      unheld_err);
	CHECK(rt == -1 && rt_err == ENOSYS, "LOCK_PI with CLOCK_REALTIME: %ld, errno %d", rt, rt_err);
	CHECK(nobody == -1 && nobody_err == ESRCH && ghost == (0x3ffffff0 | FUTEX_WAITERS),
	      "LOCK_PI of a dead TID's lock: %ld, errno %d, word %#x", nobody, nobody_err, ghost);
	CHECK(odd == -1 && odd_err == EINVAL, "LOCK_PI of a misaligned word: %ld, errno %d", odd,
	      odd_err);
	return 0;
}

static int an_unlock_hands_the_pi_lock_to_its_waiter(void)
{
	uint32_t w = 0;
	pid_t me = tid_of_caller();
	futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pthread_t t;
	struct pi_op waiter = { .word = &w, .op = FUTEX_LOCK_PI_PRIVATE, .unlock = 1 };
	start_pi(&t, &waiter);
	uint32_t waited = w;
	long unlock = futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(waited == (me | FUTEX_WAITERS), "a waiter sleeping: word %#x", waited);
	CHECK(unlock == 0 && waiter.rc == 0, "UNLOCK_PI %ld, the waiter's LOCK_PI %ld errno %d",
	      unlock, waiter.rc, waiter.err);
	CHECK(waiter.seen == (waiter.tid | FUTEX_WAITERS), "handed over: word %#x, want %#x",
	      waiter.seen, waiter.tid | FUTEX_WAITERS);
	CHECK(waiter.unlock_rc == 0 && w == 0, "the new owner's unlock: %ld, word %#x",
	      waiter.unlock_rc, w);
	return 0;
}

static int pi_lock_deadlines_are_on_their_clocks(void)
{
	uint32_t w = 0;
	futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	/* LOCK_PI's deadline is CLOCK_REALTIME; LOCK_PI2's CLOCK_MONOTONIC
	 * unless FUTEX_CLOCK_REALTIME. */
	struct timespec rt = clock_in(CLOCK_REALTIME, 30);
	struct timespec mono = clock_in(CLOCK_MONOTONIC, 30);
	struct timespec rt2 = clock_in(CLOCK_REALTIME, 30);
	struct pi_op a = { .word = &w, .op = FUTEX_LOCK_PI_PRIVATE, .timeout = &rt };
	struct pi_op b = { .word = &w, .op = FUTEX_LOCK_PI2_PRIVATE, .timeout = &mono };
	struct pi_op c = { .word = &w, .op = FUTEX_LOCK_PI2_PRIVATE | FUTEX_CLOCK_REALTIME,
			   .timeout = &rt2 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t[3];
	pthread_create(&t[0], NULL, pi_thread, &a);
	pthread_create(&t[1], NULL, pi_thread, &b);
	pthread_create(&t[2], NULL, pi_thread, &c);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long unlock = futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	CHECK(a.rc == -1 && a.err == ETIMEDOUT, "LOCK_PI: %ld, errno %d", a.rc, a.err);
	CHECK(b.rc == -1 && b.err == ETIMEDOUT, "LOCK_PI2: %ld, errno %d", b.rc, b.err);
	CHECK(c.rc == -1 && c.err == ETIMEDOUT, "LOCK_PI2 realtime: %ld, errno %d", c.rc, c.err);
	CHECK(ms_between(&t0, &t1) >= 29, "timed out after %ld ms", ms_between(&t0, &t1));
	CHECK(unlock == 0 && w == 0, "the owner's unlock after: %ld, word %#x", unlock, w);
	return 0;
}

/* A thread of real-time priority PRIO running P. */
static int start_fifo(pthread_t *t, struct pi_op *p, int prio)
{
	pthread_attr_t attr;
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	int rc = pthread_attr_setschedparam(&attr, &sp);
	if (rc == 0)
		rc = pthread_create(t, &attr, pi_thread, p);
	pthread_attr_destroy(&attr);
	while (rc == 0 && !p->started)
		usleep(1000);
	usleep(20000);
	return rc;
}

static int the_highest_priority_waiter_gets_the_pi_lock_first(void)
{
	uint32_t w = 0;
	futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	got_lock = 0;
	pthread_t t[3];
	struct pi_op p[3];
	int prio[3] = { 5, 20, 10 };
	for (int i = 0; i < 3; i++) {
		p[i] = (struct pi_op){ .word = &w, .op = FUTEX_LOCK_PI_PRIVATE, .unlock = 1 };
		int rc = start_fifo(&t[i], &p[i], prio[i]);
		CHECK(rc == 0, "a SCHED_FIFO thread of priority %d: %s", prio[i], strerror(rc));
	}
	futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(p[1].order == 1 && p[2].order == 2 && p[0].order == 3,
	      "priorities 5, 20, 10 got the lock %dth, %dth, %dth (want 3, 1, 2)", p[0].order,
	      p[1].order, p[2].order);
	CHECK(w == 0, "word %#x at the end", w);
	return 0;
}

static volatile int pi_owner_ready;

static void *pi_lock_and_die(void *arg)
{
	futex(arg, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pi_owner_ready = 1;
	usleep(30000);
	return NULL; /* exits holding it */
}

static int a_dead_owners_pi_lock_passes_on_marked_owner_died(void)
{
	uint32_t w = 0;
	pi_owner_ready = 0;
	pthread_t t;
	pthread_create(&t, NULL, pi_lock_and_die, &w);
	while (!pi_owner_ready)
		usleep(1000);
	long lock = futex(&w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	uint32_t got = w;
	pthread_join(t, NULL);
	long unlock = futex(&w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pid_t me = tid_of_caller();
	CHECK(lock == 0, "LOCK_PI behind an owner that exits: %ld, errno %d", lock, errno);
	CHECK(got == (me | FUTEX_WAITERS | FUTEX_OWNER_DIED), "word %#x, want %#x", got,
	      me | FUTEX_WAITERS | FUTEX_OWNER_DIED);
	CHECK(unlock == 0 && w == 0, "unlock: %ld, word %#x", unlock, w);
	return 0;
}

static pthread_mutex_t pi_mutex;
static long pi_counter;

static void *count_up_pi(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&pi_mutex);
		pi_counter++;
		pthread_mutex_unlock(&pi_mutex);
	}
	return NULL;
}

static void *lock_pi_mutex_and_die(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pi_mutex);
	pi_owner_ready = 1;
	usleep(30000);
	return NULL;
}

static int glibc_priority_inheritance_mutexes_work(void)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&pi_mutex, &attr);
	pi_counter = 0;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, count_up_pi, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&pi_mutex);
	CHECK(pi_counter == 80000, "counter %ld, want 80000", pi_counter);
	/* A robust PI mutex whose owner dies: the waiter learns it. */
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&pi_mutex, &attr);
	pi_owner_ready = 0;
	pthread_create(&t[0], NULL, lock_pi_mutex_and_die, NULL);
	while (!pi_owner_ready)
		usleep(1000);
	int waited = pthread_mutex_lock(&pi_mutex);
	pthread_join(t[0], NULL);
	int consistent = pthread_mutex_consistent(&pi_mutex);
	pthread_mutex_unlock(&pi_mutex);
	int again = pthread_mutex_lock(&pi_mutex);
	pthread_mutex_unlock(&pi_mutex);
	CHECK(waited == EOWNERDEAD, "a waiter got %d, want EOWNERDEAD", waited);
	CHECK(consistent == 0 && again == 0, "consistent %d, relock %d", consistent, again);
	return 0;
}

static int requeue_pi_moves_waiters_onto_the_pi_lock(void)
{
	uint32_t cond = 0, lock = 0;
	pid_t me = tid_of_caller();
	pthread_t t;
	/* A free lock: the requeue takes it for the waiter and wakes it. */
	struct pi_op a = { .word = &cond, .op = FUTEX_WAIT_REQUEUE_PI_PRIVATE, .word2 = &lock,
			   .unlock = 1 };
	start_pi(&t, &a);
	long stale = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &lock, 1);
	int stale_err = errno;
	long two = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 2, (void *)0, &lock, 0);
	int two_err = errno;
	long same = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &cond, 0);
	int same_err = errno;
	long wake = futex(&cond, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	int wake_err = errno;
	long plain = futex(&cond, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)1, &lock, 0);
	int plain_err = errno;
	long took = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &lock, 0);
	pthread_join(t, NULL);
	CHECK(stale == -1 && stale_err == EAGAIN, "a stale value: %ld, errno %d", stale, stale_err);
	CHECK(two == -1 && two_err == EINVAL, "nr_wake 2: %ld, errno %d", two, two_err);
	CHECK(same == -1 && same_err == EINVAL, "onto the same word: %ld, errno %d", same, same_err);
	CHECK(wake == -1 && wake_err == EINVAL, "FUTEX_WAKE of a requeue_pi waiter: %ld, errno %d",
	      wake, wake_err);
	CHECK(plain == -1 && plain_err == EINVAL, "CMP_REQUEUE of one: %ld, errno %d", plain,
	      plain_err);
	CHECK(took == 1 && a.rc == 0 && a.seen == (uint32_t)a.tid,
	      "a free lock: requeue %ld, waiter %ld errno %d, word %#x (its tid %#x)", took, a.rc,
	      a.err, a.seen, a.tid);
	CHECK(a.unlock_rc == 0 && lock == 0, "its unlock: %ld, word %#x", a.unlock_rc, lock);
	/* A held lock: the waiter sleeps on it until the owner unlocks. */
	futex(&lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	struct pi_op b = { .word = &cond, .op = FUTEX_WAIT_REQUEUE_PI_PRIVATE, .word2 = &lock,
			   .unlock = 1, .rc = 9 };
	start_pi(&t, &b);
	long moved = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &lock, 0);
	usleep(20000);
	uint32_t queued = lock;
	int still = b.rc == 9; /* asleep on the lock now */
	long unlock = futex(&lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(moved == 1 && queued == (me | FUTEX_WAITERS) && still,
	      "a held lock: requeue %ld, word %#x, waiter %ld", moved, queued, still ? 9 : b.rc);
	CHECK(unlock == 0 && b.rc == 0 && b.seen == (b.tid | FUTEX_WAITERS),
	      "after the unlock: %ld, waiter %ld, word %#x", unlock, b.rc, b.seen);
	/* A plain waiter cannot be requeued to a PI lock: EINVAL, and a
	 * FUTEX_WAKE still finds it. */
	struct waiter c = { &cond, FUTEX_BITSET_MATCH_ANY, 9 };
	start_waiter(&t, &c);
	long mismatched = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &lock, 0);
	int mismatched_err = errno;
	long woke = futex(&cond, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(mismatched == -1 && mismatched_err == EINVAL && woke == 1 && c.rc == 0,
	      "a FUTEX_WAIT waiter: %ld errno %d, then FUTEX_WAKE %ld", mismatched, mismatched_err,
	      woke);
	return 0;
}

static int requeue_pi_waits_check_and_time_out(void)
{
	uint32_t cond = 0, lock = 0;
	struct timespec mono = clock_in(CLOCK_MONOTONIC, 30);
	long timed = futex(&cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, &mono, &lock, 0);
	int timed_err = errno;
	struct timespec rt = clock_in(CLOCK_REALTIME, 30);
	long timed_rt = futex(&cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &rt,
			      &lock, 0);
	int timed_rt_err = errno;
	long changed = futex(&cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 1, NULL, &lock, 0);
	int changed_err = errno;
	long same = futex(&cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, NULL, &cond, 0);
	int same_err = errno;
	long none = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)5, &lock, 0);
	CHECK(timed == -1 && timed_err == ETIMEDOUT, "CLOCK_MONOTONIC deadline: %ld, errno %d",
	      timed, timed_err);
	CHECK(timed_rt == -1 && timed_rt_err == ETIMEDOUT, "CLOCK_REALTIME deadline: %ld, errno %d",
	      timed_rt, timed_rt_err);
	CHECK(changed == -1 && changed_err == EAGAIN, "a changed word: %ld, errno %d", changed,
	      changed_err);
	CHECK(same == -1 && same_err == EINVAL, "onto itself: %ld, errno %d", same, same_err);
	CHECK(none == 0 && lock == 0, "requeueing nobody: %ld, word %#x", none, lock);
	return 0;
}

static volatile int handled;

static void count_signal(int sig)
{
	(void)sig;
	handled++;
}

/* A signal with a handler (no SA_RESTART) restarts LOCK_PI and a
 * WAIT_REQUEUE_PI not yet requeued; once requeued, it ends the wait
 * with EAGAIN. */
static int signals_restart_pi_waits(void)
{
	struct sigaction sa = { .sa_handler = count_signal };
	sigaction(SIGUSR1, &sa, NULL);
	handled = 0;
	uint32_t cond = 0, lock = 0;
	futex(&lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pthread_t t;
	struct pi_op a = { .word = &lock, .op = FUTEX_LOCK_PI_PRIVATE, .unlock = 1 };
	start_pi(&t, &a);
	pthread_kill(t, SIGUSR1);
	usleep(20000);
	int first = handled;
	futex(&lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(first == 1 && a.rc == 0, "LOCK_PI after a handler: %ld, errno %d, handled %d", a.rc,
	      a.err, first);
	futex(&lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	struct pi_op b = { .word = &cond, .op = FUTEX_WAIT_REQUEUE_PI_PRIVATE, .word2 = &lock };
	start_pi(&t, &b);
	pthread_kill(t, SIGUSR1);
	usleep(20000);
	long moved = futex(&cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (void *)0, &lock, 0);
	usleep(20000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	long unlock = futex(&lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	signal(SIGUSR1, SIG_DFL);
	CHECK(moved == 1, "the waiter went back to waiting after the first signal: requeue %ld",
	      moved);
	CHECK(b.rc == -1 && b.err == EAGAIN && handled == 3,
	      "a signal after the requeue: %ld, errno %d, handled %d", b.rc, b.err, handled);
	CHECK(unlock == 0 && lock == 0, "unlock: %ld, word %#x", unlock, lock);
	return 0;
}

static long waitv(struct futex_waitv *w, unsigned n, unsigned flags, const struct timespec *to,
		  clockid_t clock)
{
	return syscall(SYS_futex_waitv, w, n, flags, to, clock);
}

struct waitv_call {
	struct futex_waitv *w;
	unsigned n;
	long rc;
	int err;
	volatile int started; /* set just before the call */
};

static void *waitv_thread(void *arg)
{
	struct waitv_call *c = arg;
	struct timespec to = clock_in(CLOCK_MONOTONIC, 5000);
	c->started = 1;
	c->rc = waitv(c->w, c->n, 0, &to, CLOCK_MONOTONIC);
	c->err = errno;
	return NULL;
}

static int futex_waitv_wakes_on_any_word(void)
{
	static uint32_t words[3];
	struct futex_waitv w[3];
	for (int i = 0; i < 3; i++) {
		words[i] = 0;
		w[i] = (struct futex_waitv){ .val = 0, .uaddr = (uintptr_t)&words[i],
					     .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	}
	w[2].flags = FUTEX_32; /* a shared one among them */
	pthread_t t;
	struct waitv_call c = { w, 3, 9, 0 };
	pthread_create(&t, NULL, waitv_thread, &c);
	usleep(20000);
	long woke = futex(&words[1], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(woke == 1 && c.rc == 1, "a wake on word 1: woke %ld, waitv returned %ld errno %d",
	      woke, c.rc, c.err);
	c.rc = 9;
	pthread_create(&t, NULL, waitv_thread, &c);
	usleep(20000);
	woke = futex(&words[2], FUTEX_WAKE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(woke == 1 && c.rc == 2, "a shared wake on word 2: woke %ld, waitv returned %ld",
	      woke, c.rc);
	struct timespec t0, t1, rt = clock_in(CLOCK_REALTIME, 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long timed = waitv(w, 3, 0, &rt, CLOCK_REALTIME);
	int timed_err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	words[2] = 1;
	long changed = waitv(w, 3, 0, NULL, 0);
	int changed_err = errno;
	words[2] = 0;
	CHECK(timed == -1 && timed_err == ETIMEDOUT && ms_between(&t0, &t1) >= 29,
	      "a CLOCK_REALTIME deadline: %ld, errno %d, %ld ms", timed, timed_err,
	      ms_between(&t0, &t1));
	CHECK(changed == -1 && changed_err == EAGAIN, "a changed word: %ld, errno %d", changed,
	      changed_err);
	return 0;
}

static int futex_waitv_checks_its_arguments(void)
{
	static uint32_t word;
	struct futex_waitv w = { .val = 0, .uaddr = (uintptr_t)&word,
				 .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	struct timespec to = clock_in(CLOCK_MONOTONIC, 1000);
	static struct futex_waitv many[FUTEX_WAITV_MAX + 1];
	struct {
		const char *what;
		struct futex_waitv entry;
		unsigned n, flags;
		clockid_t clock;
		int nullv;
		int want;
	} cases[] = {
		{ "syscall flags", w, 1, 1, CLOCK_MONOTONIC, 0, EINVAL },
		{ "no words", w, 0, 0, CLOCK_MONOTONIC, 0, EINVAL },
		{ "129 words", w, FUTEX_WAITV_MAX + 1, 0, CLOCK_MONOTONIC, 0, EINVAL },
		{ "a NULL array", w, 1, 0, CLOCK_MONOTONIC, 1, EINVAL },
		{ "CLOCK_TAI", w, 1, 0, CLOCK_TAI, 0, EINVAL },
		{ "no size", { 0, (uintptr_t)&word, FUTEX_PRIVATE_FLAG, 0 }, 1, 0, CLOCK_MONOTONIC, 0,
		  EINVAL },
		{ "a 64-bit size", { 0, (uintptr_t)&word, 3, 0 }, 1, 0, CLOCK_MONOTONIC, 0, EINVAL },
		{ "an unknown flag", { 0, (uintptr_t)&word, FUTEX_32 | 64, 0 }, 1, 0, CLOCK_MONOTONIC,
		  0, EINVAL },
		{ "__reserved", { 0, (uintptr_t)&word, FUTEX_32, 1 }, 1, 0, CLOCK_MONOTONIC, 0,
		  EINVAL },
		{ "a value over 32 bits", { 1ull << 32, (uintptr_t)&word, FUTEX_32, 0 }, 1, 0,
		  CLOCK_MONOTONIC, 0, EINVAL },
		{ "a misaligned word", { 0, (uintptr_t)&word + 1, FUTEX_32, 0 }, 1, 0,
		  CLOCK_MONOTONIC, 0, EINVAL },
		{ "a NULL word", { 0, 0, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 }, 1, 0, CLOCK_MONOTONIC, 0,
		  EFAULT },
		{ "an unmapped shared word", { 0, 8, FUTEX_32, 0 }, 1, 0, CLOCK_MONOTONIC, 0,
		  EFAULT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct futex_waitv *v = cases[i].nullv ? NULL : many;
		for (unsigned k = 0; k <= FUTEX_WAITV_MAX; k++)
			many[k] = cases[i].entry;
		long rc = waitv(v, cases[i].n, cases[i].flags, &to, cases[i].clock);
		int err = errno;
		CHECK(rc == -1 && err == cases[i].want, "%s: %ld, errno %d (want %d)", cases[i].what,
		      rc, err, cases[i].want);
	}
	long unreadable = waitv((struct futex_waitv *)8, 1, 0, &to, CLOCK_MONOTONIC);
	int unreadable_err = errno;
	CHECK(unreadable == -1 && unreadable_err == EFAULT, "an unreadable array: %ld, errno %d",
	      unreadable, unreadable_err);
	/* Every word is named before any is read: a shared word that cannot
	 * be is EFAULT even after one that differs; a private one needs no
	 * page to be named, so the differing word decides. */
	static uint32_t one = 1;
	struct futex_waitv two[2] = {
		{ .val = 0, .uaddr = (uintptr_t)&one, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG },
		{ .val = 0, .uaddr = 8, .flags = FUTEX_32 },
	};
	long shared = waitv(two, 2, 0, &to, CLOCK_MONOTONIC);
	int shared_err = errno;
	two[1].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
	long private = waitv(two, 2, 0, &to, CLOCK_MONOTONIC);
	int private_err = errno;
	CHECK(shared == -1 && shared_err == EFAULT,
	      "an unmapped shared word after one that differs: %ld, errno %d", shared, shared_err);
	CHECK(private == -1 && private_err == EAGAIN,
	      "an unmapped private word after one that differs: %ld, errno %d", private,
	      private_err);
	return 0;
}

/* One FUTEX_WAIT or WAIT_BITSET on restart_word in a thread. */
struct wait_call {
	int op;
	const struct timespec *deadline;
	volatile int started; /* set just before the call */
	long rc;
	int err;
};

static uint32_t restart_word;

static void *wait_call_thread(void *arg)
{
	struct wait_call *c = arg;
	c->started = 1;
	c->rc = futex(&restart_word, c->op, 0, c->deadline, NULL, FUTEX_BITSET_MATCH_ANY);
	c->err = errno;
	return NULL;
}

/* Starts FN(ARG) in a thread, sends it SIGUSR1 once it sleeps, and
 * returns a while after the handler has run. */
static pthread_t interrupted(void *(*fn)(void *), void *arg, volatile int *started)
{
	pthread_t t;
	handled = 0;
	pthread_create(&t, NULL, fn, arg);
	while (!*started)
		usleep(1000);
	usleep(20000);
	pthread_kill(t, SIGUSR1);
	while (!handled)
		usleep(1000);
	usleep(20000);
	return t;
}

/* A wait without a deadline runs again after an SA_RESTART handler
 * (Linux: -ERESTARTSYS), one with a deadline ends with EINTR
 * (-ERESTART_RESTARTBLOCK); futex_waitv's deadline is absolute, so it
 * runs again even with one. Without SA_RESTART every wait ends with
 * EINTR. */
static int signals_restart_untimed_futex_waits(void)
{
	struct sigaction sa = { .sa_handler = count_signal, .sa_flags = SA_RESTART };
	sigaction(SIGUSR1, &sa, NULL);
	restart_word = 0;
	struct wait_call plain = { .op = FUTEX_WAIT_PRIVATE, .rc = 9 };
	pthread_t t = interrupted(wait_call_thread, &plain, &plain.started);
	long plain_asleep = plain.rc == 9;
	long plain_woke = futex(&restart_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	struct wait_call bitset = { .op = FUTEX_WAIT_BITSET_PRIVATE, .rc = 9 };
	t = interrupted(wait_call_thread, &bitset, &bitset.started);
	long bitset_asleep = bitset.rc == 9;
	long bitset_woke = futex(&restart_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	struct timespec later = clock_in(CLOCK_MONOTONIC, 5000), t0, t1;
	struct wait_call timed = { .op = FUTEX_WAIT_BITSET_PRIVATE, .deadline = &later, .rc = 9 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	t = interrupted(wait_call_thread, &timed, &timed.started);
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	static uint32_t words[2];
	struct futex_waitv w[2];
	for (int i = 0; i < 2; i++)
		w[i] = (struct futex_waitv){ .val = 0, .uaddr = (uintptr_t)&words[i],
					     .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	struct waitv_call v = { w, 2, 9, 0, 0 };
	t = interrupted(waitv_thread, &v, &v.started);
	long waitv_asleep = v.rc == 9;
	long waitv_woke = futex(&words[1], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	struct wait_call intr = { .op = FUTEX_WAIT_PRIVATE, .rc = 9 };
	t = interrupted(wait_call_thread, &intr, &intr.started);
	pthread_join(t, NULL);
	signal(SIGUSR1, SIG_DFL);
	CHECK(plain_asleep && plain_woke == 1 && plain.rc == 0,
	      "FUTEX_WAIT after an SA_RESTART handler: asleep %ld, woke %ld, returned %ld errno %d",
	      plain_asleep, plain_woke, plain.rc, plain.err);
	CHECK(bitset_asleep && bitset_woke == 1 && bitset.rc == 0,
	      "WAIT_BITSET after an SA_RESTART handler: asleep %ld, woke %ld, returned %ld errno %d",
	      bitset_asleep, bitset_woke, bitset.rc, bitset.err);
	CHECK(timed.rc == -1 && timed.err == EINTR && ms_between(&t0, &t1) < 2000,
	      "a wait with a deadline: %ld, errno %d after %ld ms", timed.rc, timed.err,
	      ms_between(&t0, &t1));
	CHECK(waitv_asleep && waitv_woke == 1 && v.rc == 1,
	      "futex_waitv after an SA_RESTART handler: asleep %ld, woke %ld, returned %ld errno %d",
	      waitv_asleep, waitv_woke, v.rc, v.err);
	CHECK(intr.rc == -1 && intr.err == EINTR, "without SA_RESTART: %ld, errno %d", intr.rc,
	      intr.err);
	return 0;
}

/* A PI lock on a robust list (bit 0 of the pointer to it: a PI lock). */
static struct {
	struct robust_list_head head;
	struct robust_list entry;
	uint32_t word;
} exiting_owner;

/* Sets exiting_owner's list up and, unless ROBUST is -1, starts a vfork
 * child that takes its PI lock, on the list if ROBUST, and exits holding
 * it. */
static pid_t lock_pi_in_a_vfork_child(int robust)
{
	exiting_owner.word = 0;
	exiting_owner.head.list.next = (struct robust_list *)((uintptr_t)&exiting_owner.entry | 1);
	exiting_owner.entry.next = &exiting_owner.head.list;
	exiting_owner.head.futex_offset = offsetof(typeof(exiting_owner), word) -
					  offsetof(typeof(exiting_owner), entry);
	exiting_owner.head.list_op_pending = NULL;
	if (robust < 0)
		return 0;
	pid_t child = vfork();
	if (child == 0) {
		if (robust)
			syscall(SYS_set_robust_list, &exiting_owner.head, sizeof(exiting_owner.head));
		syscall(SYS_futex, &exiting_owner.word, FUTEX_LOCK_PI, 0, NULL, NULL, 0);
		_exit(0);
	}
	return child;
}

static volatile int race_locked;

/* Takes the PI lock on exiting_owner's robust list and exits. */
static void *lock_pi_robustly_and_exit(void *arg)
{
	(void)arg;
	syscall(SYS_set_robust_list, &exiting_owner.head, sizeof(exiting_owner.head));
	futex(&exiting_owner.word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	race_locked = 1;
	return NULL;
}

/* A thread's futexes are released before vfork's parent goes on and
 * before its TID is gone (Linux: futex_exit_release, then mm_release):
 * the parent finds its robust PI lock marked FUTEX_OWNER_DIED and takes
 * it; a lock not on its list names a thread that is gone: ESRCH. A
 * locker that meets an owner on its way out waits until the owner's
 * robust list is released (Linux: FUTEX_STATE_EXITING), never ESRCH:
 * tried 300 times, at different moments of the exit. */
static int a_pi_lock_passes_on_once_its_owner_has_exited(void)
{
	pid_t me = tid_of_caller();
	int status;
	pid_t child = lock_pi_in_a_vfork_child(1);
	long lock = futex(&exiting_owner.word, FUTEX_LOCK_PI, 0, NULL, NULL, 0);
	int lock_err = errno;
	uint32_t got = exiting_owner.word;
	long unlock = futex(&exiting_owner.word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0);
	uint32_t freed = exiting_owner.word;
	waitpid(child, &status, 0);
	child = lock_pi_in_a_vfork_child(0);
	long orphan = futex(&exiting_owner.word, FUTEX_LOCK_PI, 0, NULL, NULL, 0);
	int orphan_err = errno;
	uint32_t left = exiting_owner.word;
	waitpid(child, &status, 0);
	int raced = 0, race_err = 0;
	for (int i = 0; i < 300 && !raced; i++) {
		lock_pi_in_a_vfork_child(-1); /* just the list, no child */
		race_locked = 0;
		pthread_t t;
		pthread_create(&t, NULL, lock_pi_robustly_and_exit, NULL);
		while (!race_locked)
			;
		for (volatile int k = 0; k < (i % 50) * 200; k++)
			;
		long rc = futex(&exiting_owner.word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
		race_err = errno;
		pthread_join(t, NULL);
		raced = rc != 0 || (exiting_owner.word & FUTEX_TID_MASK) != (uint32_t)me;
		futex(&exiting_owner.word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	}
	CHECK(lock == 0 && got == (me | FUTEX_OWNER_DIED),
	      "a robust lock: %ld, errno %d, word %#x (want %#x)", lock, lock_err, got,
	      me | FUTEX_OWNER_DIED);
	CHECK(unlock == 0 && freed == 0, "its unlock: %ld, word %#x", unlock, freed);
	CHECK(orphan == -1 && orphan_err == ESRCH && left == ((uint32_t)child | FUTEX_WAITERS),
	      "a lock on no list: %ld, errno %d, word %#x (want %#x)", orphan, orphan_err, left,
	      (uint32_t)child | FUTEX_WAITERS);
	CHECK(!raced, "a lock whose owner was exiting: errno %d, word %#x", race_err,
	      exiting_owner.word);
	return 0;
}

/* execve releases the robust futexes of the thread that runs it, as an
 * exit would (Linux: futex_exec_release): a lock word shared with the
 * parent that held the child's TID says FUTEX_OWNER_DIED once the child
 * has run another program. */
static int execve_releases_robust_futexes(void)
{
	struct {
		struct robust_list_head head;
		struct robust_list entry;
		uint32_t word;
	} *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(r != MAP_FAILED, "mmap: %s", strerror(errno));
	char self[256];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	pid_t child = fork();
	if (child == 0) {
		r->head.list.next = &r->entry;
		r->entry.next = &r->head.list;
		r->head.futex_offset = offsetof(typeof(*r), word) - offsetof(typeof(*r), entry);
		r->head.list_op_pending = NULL;
		r->word = syscall(SYS_gettid); /* held */
		syscall(SYS_set_robust_list, &r->head, sizeof(r->head));
		char *args[] = { self, "--exit", NULL };
		execv(self, args);
		_exit(127);
	}
	int status;
	waitpid(child, &status, 0);
	uint32_t word = r->word;
	munmap(r, 4096);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's exec: status %#x",
	      status);
	CHECK(word == FUTEX_OWNER_DIED, "the lock word after the exec: %#x (child %d)", word, child);
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
	TEST(pi_lock_words_hold_the_owners_tid),
	TEST(an_unlock_hands_the_pi_lock_to_its_waiter),
	TEST(pi_lock_deadlines_are_on_their_clocks),
	TEST(the_highest_priority_waiter_gets_the_pi_lock_first),
	TEST(a_dead_owners_pi_lock_passes_on_marked_owner_died),
	TEST(glibc_priority_inheritance_mutexes_work),
	TEST(requeue_pi_moves_waiters_onto_the_pi_lock),
	TEST(requeue_pi_waits_check_and_time_out),
	TEST(signals_restart_pi_waits),
	TEST(futex_waitv_wakes_on_any_word),
	TEST(futex_waitv_checks_its_arguments),
	TEST(signals_restart_untimed_futex_waits),
	TEST(a_pi_lock_passes_on_once_its_owner_has_exited),
	TEST(execve_releases_robust_futexes),
};

int main(int argc, char **argv)
{
	/* The program execve_releases_robust_futexes runs. */
	if (argc > 1 && strcmp(argv[1], "--exit") == 0)
		return 0;
	return run_tests("futex", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
