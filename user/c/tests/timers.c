/*
 * Timers and clocks through glibc: alarm, setitimer/getitimer (REAL,
 * VIRTUAL, PROF), POSIX timers (signals with si_value, SIGEV_NONE,
 * SIGEV_THREAD_ID, SIGEV_THREAD, absolute times, intervals, overruns),
 * CPU-time clocks, times(), getrusage, clock_settime, and sigaltstack
 * with SA_ONSTACK (a stack overflow handled on the alternate stack).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long long ns_of(struct timespec t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return ns_of(t);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static volatile unsigned long sink;
static void busy_ms(long ms)
{
	long long end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	while (now_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

static volatile sig_atomic_t hits[65];
static volatile long last_value;
static volatile int last_code, last_overrun;
static volatile pid_t last_tid;

static void on_sig(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits[sig]++;
	last_code = si->si_code;
	last_value = (long)si->si_value.sival_ptr;
	last_overrun = si->si_overrun;
	last_tid = (pid_t)syscall(SYS_gettid);
}

static void catch(int sig)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(sig, &sa, NULL);
	hits[sig] = 0;
}

/* Waits up to `ms` for `sig` to have arrived `n` times. */
static int await(int sig, int n, long ms)
{
	for (long i = 0; i < ms && hits[sig] < n; i++)
		sleep_ms(1);
	return hits[sig] >= n;
}

static int alarm_delivers_sigalrm(void)
{
	catch(SIGALRM);
	long long t0 = now_ns(CLOCK_MONOTONIC);
	CHECK(alarm(1) == 0, "an alarm was pending");
	CHECK(await(SIGALRM, 1, 3000), "no SIGALRM");
	long long dt = now_ns(CLOCK_MONOTONIC) - t0;
	CHECK(dt >= 990000000LL && dt < 2500000000LL, "SIGALRM after %lld ns", dt);
	CHECK(alarm(0) == 0, "alarm still pending after firing");
	return 0;
}

static int alarm_returns_remaining(void)
{
	alarm(10);
	unsigned left = alarm(5);
	CHECK(left >= 9 && left <= 10, "alarm left %u", left);
	left = alarm(0);
	CHECK(left >= 4 && left <= 5, "alarm left %u", left);
	return 0;
}

static int setitimer_real_interval_rearms(void)
{
	catch(SIGALRM);
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	long long t0 = now_ns(CLOCK_MONOTONIC);
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer: %s", strerror(errno));
	int ok = await(SIGALRM, 5, 3000);
	long long dt = now_ns(CLOCK_MONOTONIC) - t0;
	struct itimerval cur;
	getitimer(ITIMER_REAL, &cur);
	struct itimerval off = { { 0, 0 }, { 0, 0 } }, old;
	setitimer(ITIMER_REAL, &off, &old);
	CHECK(ok, "only %d SIGALRMs", hits[SIGALRM]);
	CHECK(dt >= 95000000LL, "5 periods of 20 ms took %lld ns", dt);
	CHECK(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_usec == 20000, "interval %ld.%06ld",
	      (long)cur.it_interval.tv_sec, (long)cur.it_interval.tv_usec);
	CHECK(old.it_value.tv_sec == 0 && old.it_value.tv_usec > 0 && old.it_value.tv_usec <= 20000,
	      "old value %ld.%06ld", (long)old.it_value.tv_sec, (long)old.it_value.tv_usec);
	getitimer(ITIMER_REAL, &cur);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0, "still armed");
	return 0;
}

static int getitimer_counts_down(void)
{
	struct itimerval it = { { 0, 0 }, { 5, 0 } }, cur;
	setitimer(ITIMER_REAL, &it, NULL);
	sleep_ms(100);
	getitimer(ITIMER_REAL, &cur);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	long us = cur.it_value.tv_sec * 1000000L + cur.it_value.tv_usec;
	CHECK(us > 4000000 && us <= 4910000, "left %ld us after 100 ms of 5 s", us);
	return 0;
}

static int setitimer_errors(void)
{
	struct itimerval bad = { { 0, 0 }, { 0, 1000000 } };
	errno = 0;
	CHECK(setitimer(ITIMER_REAL, &bad, NULL) == -1 && errno == EINVAL, "usec 1000000");
	struct itimerval ok = { { 0, 0 }, { 0, 0 } };
	errno = 0;
	CHECK(setitimer(7, &ok, NULL) == -1 && errno == EINVAL, "which 7");
	errno = 0;
	CHECK(getitimer(7, &ok) == -1 && errno == EINVAL, "getitimer 7");
	return 0;
}

static int itimer_virtual_counts_user_time(void)
{
	catch(SIGVTALRM);
	struct itimerval it = { { 0, 0 }, { 0, 50000 } };
	CHECK(setitimer(ITIMER_VIRTUAL, &it, NULL) == 0, "setitimer: %s", strerror(errno));
	/* Sleeping uses no CPU time: nothing fires. */
	sleep_ms(150);
	int while_asleep = hits[SIGVTALRM];
	for (int i = 0; i < 300 && !hits[SIGVTALRM]; i++)
		busy_ms(10);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_VIRTUAL, &off, NULL);
	CHECK(while_asleep == 0, "SIGVTALRM while asleep");
	CHECK(hits[SIGVTALRM] == 1, "SIGVTALRM %d times", hits[SIGVTALRM]);
	return 0;
}

static int itimer_prof_fires(void)
{
	catch(SIGPROF);
	struct itimerval it = { { 0, 30000 }, { 0, 30000 } };
	CHECK(setitimer(ITIMER_PROF, &it, NULL) == 0, "setitimer");
	for (int i = 0; i < 300 && hits[SIGPROF] < 3; i++)
		busy_ms(10);
	struct itimerval off = { { 0, 0 }, { 0, 0 } }, old;
	setitimer(ITIMER_PROF, &off, &old);
	CHECK(hits[SIGPROF] >= 3, "SIGPROF %d times", hits[SIGPROF]);
	CHECK(old.it_interval.tv_usec == 30000, "interval %ld", (long)old.it_interval.tv_usec);
	return 0;
}

static int fork_child_has_no_timers(void)
{
	struct itimerval it = { { 0, 0 }, { 5, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval cur;
		getitimer(ITIMER_REAL, &cur);
		_exit(cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child inherited ITIMER_REAL");
	return 0;
}

static int exec_keeps_itimer_real(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval it = { { 0, 0 }, { 7, 0 } };
		setitimer(ITIMER_REAL, &it, NULL);
		char self[256];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		char *args[] = { self, "--show-itimer", NULL };
		execv(self, args);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "after exec: status %#x", st);
	return 0;
}

static int timer_signal_with_value(void)
{
	catch(SIGUSR1);
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	sev.sigev_value.sival_ptr = (void *)0x5eed;
	timer_t t;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create: %s", strerror(errno));
	struct itimerspec its = { { 0, 0 }, { 0, 30000000 } };
	long long t0 = now_ns(CLOCK_MONOTONIC);
	CHECK(timer_settime(t, 0, &its, NULL) == 0, "timer_settime: %s", strerror(errno));
	int ok = await(SIGUSR1, 1, 2000);
	long long dt = now_ns(CLOCK_MONOTONIC) - t0;
	struct itimerspec cur;
	timer_gettime(t, &cur);
	timer_delete(t);
	CHECK(ok, "no signal");
	CHECK(dt >= 29000000LL, "fired after %lld ns", dt);
	CHECK(last_code == SI_TIMER, "si_code %d", last_code);
	CHECK(last_value == 0x5eed, "si_value %#lx", last_value);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0, "one-shot still armed");
	return 0;
}

static int timer_interval_and_gettime(void)
{
	catch(SIGUSR2);
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	timer_t t;
	CHECK(timer_create(CLOCK_REALTIME, &sev, &t) == 0, "timer_create");
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } };
	timer_settime(t, 0, &its, NULL);
	int ok = await(SIGUSR2, 4, 3000);
	struct itimerspec cur, old;
	timer_gettime(t, &cur);
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	timer_settime(t, 0, &off, &old);
	timer_delete(t);
	CHECK(ok, "only %d expiries", hits[SIGUSR2]);
	CHECK(cur.it_interval.tv_nsec == 20000000, "interval %ld", cur.it_interval.tv_nsec);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 20000000,
	      "value %ld", cur.it_value.tv_nsec);
	CHECK(old.it_interval.tv_nsec == 20000000, "old interval %ld", old.it_interval.tv_nsec);
	return 0;
}

static int timer_absolute_time(void)
{
	catch(SIGUSR1);
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	timer_t t;
	CHECK(timer_create(CLOCK_REALTIME, &sev, &t) == 0, "timer_create");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	long long target = ns_of(now) + 50000000LL;
	struct itimerspec its = { { 0, 0 }, { target / 1000000000LL, target % 1000000000LL } };
	CHECK(timer_settime(t, TIMER_ABSTIME, &its, NULL) == 0, "settime abs: %s", strerror(errno));
	int ok = await(SIGUSR1, 1, 2000);
	long long at = now_ns(CLOCK_REALTIME);
	timer_delete(t);
	CHECK(ok, "no signal");
	CHECK(at >= target - 1000000, "fired %lld ns early", target - at);
	/* A time in the past fires at once. */
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create");
	hits[SIGUSR1] = 0;
	struct itimerspec past = { { 0, 0 }, { 0, 1 } };
	timer_settime(t, TIMER_ABSTIME, &past, NULL);
	ok = await(SIGUSR1, 1, 500);
	timer_delete(t);
	CHECK(ok, "a past absolute time did not fire");
	return 0;
}

static int timer_overrun_counts_missed(void)
{
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	catch(SIGUSR1);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	timer_t t;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create");
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	timer_settime(t, 0, &its, NULL);
	sleep_ms(200);
	/* Blocked: one signal pending, the rest overruns. */
	siginfo_t si;
	struct timespec zero = { 0, 0 };
	int sig = sigtimedwait(&set, &si, &zero);
	int ov = timer_getoverrun(t);
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	timer_settime(t, 0, &off, NULL);
	timer_delete(t);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(sig == SIGUSR1, "sigtimedwait %d: %s", sig, strerror(errno));
	CHECK(si.si_code == SI_TIMER, "si_code %d", si.si_code);
	CHECK(si.si_overrun >= 5 && si.si_overrun <= 25, "si_overrun %d", si.si_overrun);
	CHECK(ov == si.si_overrun, "timer_getoverrun %d, si_overrun %d", ov, si.si_overrun);
	return 0;
}

static int timer_sigev_none(void)
{
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_NONE;
	timer_t t;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create");
	struct itimerspec its = { { 0, 0 }, { 2, 0 } };
	timer_settime(t, 0, &its, NULL);
	sleep_ms(50);
	struct itimerspec cur;
	CHECK(timer_gettime(t, &cur) == 0, "gettime");
	timer_delete(t);
	long long left = ns_of(cur.it_value);
	CHECK(left > 1000000000LL && left < 1960000000LL, "left %lld", left);
	return 0;
}

static int timer_thread_id(void)
{
	catch(SIGUSR2);
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR2;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t t;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create: %s", strerror(errno));
	struct itimerspec its = { { 0, 0 }, { 0, 10000000 } };
	timer_settime(t, 0, &its, NULL);
	int ok = await(SIGUSR2, 1, 2000);
	timer_delete(t);
	CHECK(ok, "no signal");
	CHECK(last_tid == (pid_t)syscall(SYS_gettid), "delivered to %d", last_tid);
	errno = 0;
	sev._sigev_un._tid = 999999;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == -1 && errno == EINVAL, "unknown tid");
	return 0;
}

static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thr_cond = PTHREAD_COND_INITIALIZER;
static int thr_calls;
static long thr_value;
static void on_timer_thread(union sigval v)
{
	pthread_mutex_lock(&thr_lock);
	thr_calls++;
	thr_value = (long)v.sival_ptr;
	pthread_cond_signal(&thr_cond);
	pthread_mutex_unlock(&thr_lock);
}

static int timer_sigev_thread(void)
{
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = on_timer_thread;
	sev.sigev_value.sival_ptr = (void *)0xbeef;
	timer_t t;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "timer_create: %s", strerror(errno));
	struct itimerspec its = { { 0, 0 }, { 0, 20000000 } };
	timer_settime(t, 0, &its, NULL);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	pthread_mutex_lock(&thr_lock);
	while (thr_calls == 0)
		if (pthread_cond_timedwait(&thr_cond, &thr_lock, &until) != 0)
			break;
	int calls = thr_calls;
	long value = thr_value;
	pthread_mutex_unlock(&thr_lock);
	timer_delete(t);
	CHECK(calls == 1 && value == 0xbeef, "calls %d value %#lx", calls, value);
	return 0;
}

static int timer_errors(void)
{
	timer_t t;
	errno = 0;
	CHECK(timer_create(99, NULL, &t) == -1 && errno == EINVAL, "bad clock");
	struct sigevent sev = { 0 };
	sev.sigev_notify = 77;
	errno = 0;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == -1 && errno == EINVAL, "bad notify");
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = 200;
	errno = 0;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == -1 && errno == EINVAL, "bad signal");
	sev.sigev_signo = SIGUSR1;
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t) == 0, "create");
	struct itimerspec bad = { { 0, 0 }, { 0, 1000000000 } };
	errno = 0;
	CHECK(timer_settime(t, 0, &bad, NULL) == -1 && errno == EINVAL, "nsec 1e9");
	timer_delete(t);
	struct itimerspec cur;
	errno = 0;
	CHECK(syscall(SYS_timer_gettime, 4242, &cur) == -1 && errno == EINVAL, "unknown timer");
	errno = 0;
	CHECK(syscall(SYS_timer_delete, 4242) == -1 && errno == EINVAL, "delete unknown");
	return 0;
}

static int cpu_clocks_follow_busy_not_sleep(void)
{
	long long p0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	sleep_ms(200);
	long long p1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	busy_ms(200);
	long long p2 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(p1 >= p0 && p1 - p0 < 50000000LL, "process clock moved %lld in a sleep", p1 - p0);
	CHECK(t1 - t0 < 50000000LL, "thread clock moved %lld in a sleep", t1 - t0);
	CHECK(p2 - p1 >= 150000000LL && p2 - p1 < 400000000LL, "process clock +%lld busy", p2 - p1);
	CHECK(t2 - t1 >= 150000000LL && t2 - t1 < 400000000LL, "thread clock +%lld busy", t2 - t1);
	struct timespec res;
	CHECK(clock_getres(CLOCK_PROCESS_CPUTIME_ID, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0,
	      "getres");
	return 0;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	busy_ms(200);
	return NULL;
}

static int cpu_clock_ids_of_process_and_thread(void)
{
	clockid_t pc, tc;
	CHECK(clock_getcpuclockid(getpid(), &pc) == 0, "clock_getcpuclockid");
	pthread_t th;
	pthread_create(&th, NULL, spin_thread, NULL);
	CHECK(pthread_getcpuclockid(th, &tc) == 0, "pthread_getcpuclockid");
	long long p0 = now_ns(pc), mine0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	sleep_ms(100);
	long long tmid = now_ns(tc);
	pthread_join(th, NULL);
	long long p1 = now_ns(pc), mine1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(tmid > 30000000LL, "the spinning thread's clock: %lld", tmid);
	CHECK(p1 - p0 >= 100000000LL, "process clock +%lld while a thread spun", p1 - p0);
	CHECK(mine1 - mine0 < 50000000LL, "our own thread clock moved %lld", mine1 - mine0);
	/* Another process's CPU clock. */
	pid_t pid = fork();
	if (pid == 0) {
		busy_ms(100);
		for (;;)
			sleep_ms(1000);
	}
	sleep_ms(300);
	clockid_t cc;
	CHECK(clock_getcpuclockid(pid, &cc) == 0, "child's clock id");
	long long c = now_ns(cc);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(c >= 50000000LL, "child's CPU clock %lld", c);
	return 0;
}

/* A timer on a CPU-time clock fires after that much CPU time, whatever
 * the wall clock says, and its signal goes to the thread burning it. */
static int cpu_clock_timers_fire_on_cpu_time(void)
{
	static const clockid_t clocks[] = { CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID };
	for (int i = 0; i < 2; i++) {
		catch(SIGUSR2);
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
		timer_t t;
		CHECK(timer_create(clocks[i], &sev, &t) == 0, "timer_create(%d): %s", clocks[i],
		      strerror(errno));
		struct itimerspec its = { .it_value = { 0, 100000000 } };
		CHECK(timer_settime(t, 0, &its, NULL) == 0, "settime: %s", strerror(errno));
		sleep_ms(300);
		int early = hits[SIGUSR2];
		struct itimerspec cur;
		timer_gettime(t, &cur);
		long long left = ns_of(cur.it_value);
		long long c0 = now_ns(clocks[i]);
		while (!hits[SIGUSR2] && now_ns(clocks[i]) - c0 < 2000000000LL)
			sink++;
		long long used = now_ns(clocks[i]) - c0;
		timer_delete(t);
		CHECK(!early, "clock %d: fired during a sleep", clocks[i]);
		CHECK(left > 50000000LL && left <= 100000000LL, "clock %d: %lld ns left after a sleep",
		      clocks[i], left);
		CHECK(hits[SIGUSR2] == 1 && used < 500000000LL, "clock %d: %d signals after %lld ns",
		      clocks[i], hits[SIGUSR2], used);
		CHECK(last_code == SI_TIMER && last_tid == gettid(), "code %d to thread %d", last_code,
		      last_tid);
	}
	return 0;
}

/* A periodic CPU-time timer whose signal is blocked counts the expiries
 * it missed, and hands them over with the signal. */
static int cpu_clock_timer_overruns(void)
{
	catch(SIGUSR2);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
	timer_t t;
	CHECK(timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) == 0, "create: %s", strerror(errno));
	struct itimerspec its = { { 0, 50000000 }, { 0, 50000000 } };
	timer_settime(t, 0, &its, NULL);
	long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 520000000LL)
		sink++;
	sigprocmask(SIG_SETMASK, &old, NULL);
	int overruns = timer_getoverrun(t);
	timer_delete(t);
	CHECK(hits[SIGUSR2] == 1, "%d signals", hits[SIGUSR2]);
	CHECK(last_overrun == 9 && overruns == 9, "overrun %d, getoverrun %d", last_overrun, overruns);
	return 0;
}

/* Which clocks have timers: the COARSE and RAW clocks have none. */
static int timers_on_the_other_clocks(void)
{
	timer_t t;
	errno = 0;
	CHECK(timer_create(CLOCK_MONOTONIC_RAW, NULL, &t) == -1 && errno == EOPNOTSUPP,
	      "MONOTONIC_RAW: %s", strerror(errno));
	CHECK(timer_create(CLOCK_REALTIME_COARSE, NULL, &t) == -1 && errno == EOPNOTSUPP,
	      "REALTIME_COARSE: %s", strerror(errno));
	CHECK(timer_create(10, NULL, &t) == -1 && errno == EINVAL, "clock 10: %s", strerror(errno));
	static const clockid_t clocks[] = { CLOCK_TAI, CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM };
	for (int i = 0; i < 3; i++) {
		catch(SIGUSR2);
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
		CHECK(timer_create(clocks[i], &sev, &t) == 0, "clock %d: %s", clocks[i], strerror(errno));
		struct timespec now;
		clock_gettime(clocks[i], &now);
		/* 50 ms ahead, as an absolute time on that clock. */
		struct itimerspec its = { .it_value = now };
		its.it_value.tv_nsec += 50000000;
		if (its.it_value.tv_nsec >= 1000000000) {
			its.it_value.tv_sec++;
			its.it_value.tv_nsec -= 1000000000;
		}
		long long t0 = now_ns(CLOCK_MONOTONIC);
		CHECK(timer_settime(t, TIMER_ABSTIME, &its, NULL) == 0, "settime: %s", strerror(errno));
		int fired = await(SIGUSR2, 1, 2000);
		long long dt = now_ns(CLOCK_MONOTONIC) - t0;
		timer_delete(t);
		CHECK(fired && dt >= 45000000LL && dt < 1000000000LL, "clock %d: fired %d after %lld ns",
		      clocks[i], fired, dt);
	}
	return 0;
}

/* CLOCK_TAI is CLOCK_REALTIME plus adjtimex's TAI offset; the ALARM
 * clocks read as their plain twins; all of them sleep. */
static int tai_and_alarm_clocks(void)
{
	struct timex tx = { 0 };
	int state = adjtimex(&tx);
	CHECK(state >= 0, "adjtimex: %s", strerror(errno));
	long long real0 = now_ns(CLOCK_REALTIME), tai = now_ns(CLOCK_TAI);
	long long real1 = now_ns(CLOCK_REALTIME), off = tx.tai * 1000000000LL;
	CHECK(real0 + off <= tai && tai <= real1 + off, "TAI %lld not between %lld and %lld", tai,
	      real0 + off, real1 + off);
	long long d = now_ns(CLOCK_REALTIME_ALARM) - now_ns(CLOCK_REALTIME);
	CHECK(d > -50000000LL && d <= 0, "REALTIME_ALARM - REALTIME = %lld", d);
	d = now_ns(CLOCK_BOOTTIME_ALARM) - now_ns(CLOCK_BOOTTIME);
	CHECK(d > -50000000LL && d <= 0, "BOOTTIME_ALARM - BOOTTIME = %lld", d);
	static const clockid_t clocks[] = { CLOCK_TAI, CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM };
	for (int i = 0; i < 3; i++) {
		struct timespec res, nap = { 0, 20000000 };
		CHECK(clock_getres(clocks[i], &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0,
		      "getres %d", clocks[i]);
		long long t0 = now_ns(CLOCK_MONOTONIC);
		CHECK(clock_nanosleep(clocks[i], 0, &nap, NULL) == 0, "sleep on %d", clocks[i]);
		CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 20000000LL, "short sleep on %d", clocks[i]);
	}
	return 0;
}

/* adjtimex: the NTP state of an unsynchronised clock, a TAI offset that
 * moves CLOCK_TAI, and a step of CLOCK_REALTIME. */
static int adjtimex_reads_and_sets_the_ntp_state(void)
{
	struct timex tx = { 0 };
	int state = adjtimex(&tx);
	CHECK(state == TIME_ERROR && (tx.status & STA_UNSYNC), "state %d status %#x", state,
	      tx.status);
	CHECK(tx.tick == 10000 && tx.tolerance == 32768000 && tx.precision == 1,
	      "tick %ld tolerance %ld precision %ld", tx.tick, tx.tolerance, tx.precision);
	CHECK(tx.freq == 0 && tx.offset == 0, "freq %ld offset %ld", tx.freq, tx.offset);
	int old_tai = tx.tai;
	struct timex set = { .modes = ADJ_TAI, .constant = 37 };
	CHECK(adjtimex(&set) >= 0 && set.tai == 37, "ADJ_TAI: %s, tai %d", strerror(errno), set.tai);
	long long d = now_ns(CLOCK_TAI) - now_ns(CLOCK_REALTIME);
	set = (struct timex){ .modes = ADJ_TAI, .constant = old_tai };
	adjtimex(&set);
	CHECK(d > 36950000000LL && d <= 37000000000LL, "TAI - REALTIME %lld with offset 37", d);
	long long r0 = now_ns(CLOCK_REALTIME);
	struct timex step = { .modes = ADJ_SETOFFSET, .time = { 5, 0 } };
	CHECK(adjtimex(&step) >= 0, "ADJ_SETOFFSET: %s", strerror(errno));
	long long r1 = now_ns(CLOCK_REALTIME);
	step.time.tv_sec = -5;
	adjtimex(&step);
	CHECK(r1 - r0 >= 5000000000LL && r1 - r0 < 5050000000LL, "stepped by %lld", r1 - r0);
	struct timex bad = { .modes = ADJ_TICK, .tick = 5 };
	errno = 0;
	CHECK(adjtimex(&bad) == -1 && errno == EINVAL, "tick 5: %s", strerror(errno));
	bad = (struct timex){ .modes = ADJ_SETOFFSET, .time = { 0, 1000000 } };
	CHECK(adjtimex(&bad) == -1 && errno == EINVAL, "usec 1e6: %s", strerror(errno));
	CHECK(clock_adjtime(CLOCK_MONOTONIC, &tx) == -1 && errno == EOPNOTSUPP,
	      "CLOCK_MONOTONIC: %s", strerror(errno));
	CHECK(clock_adjtime(10, &tx) == -1 && errno == EINVAL, "clock 10: %s", strerror(errno));
	return 0;
}

static int times_and_getrusage(void)
{
	struct tms t0, t1;
	clock_t r0 = times(&t0);
	busy_ms(200);
	clock_t r1 = times(&t1);
	long hz = sysconf(_SC_CLK_TCK);
	CHECK(hz == 100, "CLK_TCK %ld", hz);
	CHECK(r1 - r0 >= 18 && r1 - r0 <= 40, "elapsed %ld ticks", (long)(r1 - r0));
	long used = (t1.tms_utime + t1.tms_stime) - (t0.tms_utime + t0.tms_stime);
	CHECK(used >= 14 && used <= 40, "CPU %ld ticks for 200 ms busy", used);
	struct rusage self, thread;
	CHECK(getrusage(RUSAGE_SELF, &self) == 0 && getrusage(RUSAGE_THREAD, &thread) == 0,
	      "getrusage");
	long self_us = self.ru_utime.tv_sec * 1000000L + self.ru_utime.tv_usec +
		       self.ru_stime.tv_sec * 1000000L + self.ru_stime.tv_usec;
	CHECK(self_us >= 150000, "RUSAGE_SELF %ld us", self_us);
	CHECK(self.ru_utime.tv_usec < 1000000 && thread.ru_utime.tv_sec >= 0, "timeval range");
	errno = 0;
	CHECK(getrusage(5, &self) == -1 && errno == EINVAL, "bad who");
	return 0;
}

static int clock_settime_realtime(void)
{
	struct timespec before, set, after, mono_err = { 0, 0 };
	clock_gettime(CLOCK_REALTIME, &before);
	CHECK(before.tv_sec > 1600000000, "realtime %ld is not from an RTC", (long)before.tv_sec);
	set = before;
	set.tv_sec += 3600;
	CHECK(clock_settime(CLOCK_REALTIME, &set) == 0, "settime: %s", strerror(errno));
	clock_gettime(CLOCK_REALTIME, &after);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	/* Put it back before checking. */
	struct timespec back = after;
	back.tv_sec -= 3600;
	clock_settime(CLOCK_REALTIME, &back);
	long long d = ns_of(after) - ns_of(set);
	CHECK(d >= 0 && d < 100000000LL, "realtime after set is off by %lld", d);
	CHECK(tv.tv_sec >= set.tv_sec && tv.tv_sec <= set.tv_sec + 1, "gettimeofday %ld",
	      (long)tv.tv_sec);
	errno = 0;
	CHECK(clock_settime(CLOCK_MONOTONIC, &mono_err) == -1 && errno == EINVAL, "monotonic");
	struct timespec bad = { 0, 2000000000 };
	errno = 0;
	CHECK(clock_settime(CLOCK_REALTIME, &bad) == -1 && errno == EINVAL, "bad nsec");
	return 0;
}

static int vdso_realtime_agrees_with_syscall(void)
{
	for (int i = 0; i < 5; i++) {
		struct timespec v, s, v2;
		clock_gettime(CLOCK_REALTIME, &v);
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &s);
		clock_gettime(CLOCK_REALTIME, &v2);
		CHECK(ns_of(v) <= ns_of(s) && ns_of(s) <= ns_of(v2), "vdso %lld syscall %lld vdso %lld",
		      ns_of(v), ns_of(s), ns_of(v2));
	}
	return 0;
}

static void *volatile handler_sp;
static volatile int handler_flags;
static void on_usr1_alt(int sig)
{
	(void)sig;
	int local;
	handler_sp = &local;
	stack_t cur;
	sigaltstack(NULL, &cur);
	handler_flags = cur.ss_flags;
}

static int sigaltstack_runs_onstack_handlers(void)
{
	static char stack[64 * 1024];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack), .ss_flags = 0 }, old;
	CHECK(sigaltstack(&ss, &old) == 0, "sigaltstack: %s", strerror(errno));
	CHECK(old.ss_flags == SS_DISABLE, "old flags %d", old.ss_flags);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_usr1_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	char *sp = (char *)handler_sp;
	int flags = handler_flags;
	stack_t now;
	sigaltstack(NULL, &now);
	/* Without SA_ONSTACK the handler stays on the normal stack. */
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	char *sp2 = (char *)handler_sp;
	stack_t dis = { .ss_flags = SS_DISABLE };
	sigaltstack(&dis, NULL);
	signal(SIGUSR1, SIG_DFL);
	CHECK(sp > stack && sp < stack + sizeof(stack), "handler ran at %p, stack %p", sp, stack);
	CHECK(flags == SS_ONSTACK, "flags in the handler %d", flags);
	CHECK(now.ss_flags == 0 && now.ss_sp == stack && now.ss_size == sizeof(stack),
	      "after: flags %d", now.ss_flags);
	CHECK(!(sp2 > stack && sp2 < stack + sizeof(stack)), "no SA_ONSTACK, yet on the alt stack");
	return 0;
}

static int sigaltstack_errors(void)
{
	static char small[4096];
	stack_t ss = { .ss_sp = small, .ss_size = sizeof(small), .ss_flags = 0 };
	errno = 0;
	CHECK(sigaltstack(&ss, NULL) == -1 && errno == ENOMEM, "below MINSIGSTKSZ: %s",
	      strerror(errno));
	static char big[16384];
	stack_t bad = { .ss_sp = big, .ss_size = sizeof(big), .ss_flags = 12345 };
	errno = 0;
	CHECK(sigaltstack(&bad, NULL) == -1 && errno == EINVAL, "bad flags");
	errno = 0;
	CHECK(sigaltstack((stack_t *)8, NULL) == -1 && errno == EFAULT, "bad pointer");
	return 0;
}

static volatile int eperm_seen;
static char eperm_stack[32768];
static void on_usr2_change(int sig)
{
	(void)sig;
	stack_t other = { .ss_sp = eperm_stack, .ss_size = 16384, .ss_flags = 0 };
	eperm_seen = sigaltstack(&other, NULL) == -1 && errno == EPERM;
}

static int sigaltstack_eperm_while_on_it(void)
{
	stack_t ss = { .ss_sp = eperm_stack, .ss_size = sizeof(eperm_stack), .ss_flags = 0 };
	sigaltstack(&ss, NULL);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_usr2_change;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	eperm_seen = 0;
	raise(SIGUSR2);
	stack_t dis = { .ss_flags = SS_DISABLE };
	sigaltstack(&dis, NULL);
	signal(SIGUSR2, SIG_DFL);
	CHECK(eperm_seen, "changing the stack while on it did not fail with EPERM");
	return 0;
}

static sigjmp_buf overflow_jmp;
static void *volatile overflow_addr;
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	overflow_addr = si->si_addr;
	siglongjmp(overflow_jmp, 1);
}

static volatile int max_depth = 1 << 30;
static int __attribute__((noinline)) recurse(volatile char *prev, int depth)
{
	volatile char buf[1024];
	buf[0] = (char)depth;
	buf[1023] = prev ? prev[0] : 0;
	if (depth >= max_depth)
		return 0;
	return recurse(buf, depth + 1) + buf[0];
}

/* glibc's sigaltstack test, in spirit: a thread overflows its stack into
 * the guard page, and the SIGSEGV handler runs on the alternate stack. */
static void *overflow_thread(void *arg)
{
	(void)arg;
	static char alt[64 * 1024];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	sigaltstack(&ss, NULL);
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(overflow_jmp, 1) == 0)
		recurse(NULL, 0);
	return (void *)1;
}

static int stack_overflow_handled_on_altstack(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 128 * 1024);
		pthread_t th;
		void *ret = NULL;
		pthread_create(&th, &attr, overflow_thread, NULL);
		pthread_join(th, &ret);
		_exit(ret == (void *)1 && overflow_addr != NULL ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "overflow not handled: status %#x", st);
	return 0;
}

static const struct test tests[] = {
	TEST(alarm_delivers_sigalrm),
	TEST(alarm_returns_remaining),
	TEST(setitimer_real_interval_rearms),
	TEST(getitimer_counts_down),
	TEST(setitimer_errors),
	TEST(itimer_virtual_counts_user_time),
	TEST(itimer_prof_fires),
	TEST(fork_child_has_no_timers),
	TEST(exec_keeps_itimer_real),
	TEST(timer_signal_with_value),
	TEST(timer_interval_and_gettime),
	TEST(timer_absolute_time),
	TEST(timer_overrun_counts_missed),
	TEST(timer_sigev_none),
	TEST(timer_thread_id),
	TEST(timer_sigev_thread),
	TEST(timer_errors),
	TEST(cpu_clocks_follow_busy_not_sleep),
	TEST(cpu_clock_ids_of_process_and_thread),
	TEST(cpu_clock_timers_fire_on_cpu_time),
	TEST(cpu_clock_timer_overruns),
	TEST(timers_on_the_other_clocks),
	TEST(tai_and_alarm_clocks),
	TEST(adjtimex_reads_and_sets_the_ntp_state),
	TEST(times_and_getrusage),
	TEST(clock_settime_realtime),
	TEST(vdso_realtime_agrees_with_syscall),
	TEST(sigaltstack_runs_onstack_handlers),
	TEST(sigaltstack_errors),
	TEST(sigaltstack_eperm_while_on_it),
	TEST(stack_overflow_handled_on_altstack),
};

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--show-itimer") == 0) {
		struct itimerval cur;
		getitimer(ITIMER_REAL, &cur);
		return cur.it_value.tv_sec >= 5 && cur.it_value.tv_sec <= 7 ? 0 : 1;
	}
	return run_tests("timers", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
