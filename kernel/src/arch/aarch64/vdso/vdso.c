/*
 * faultline's vDSO (Linux: arch/arm64/kernel/vdso/): a small ELF shared
 * object the kernel maps into every process and announces with
 * AT_SYSINFO_EHDR. glibc finds the clock functions in it by name and
 * version (LINUX_2.6.39, see vdso.lds) and calls them instead of system
 * calls; the kernel makes __kernel_rt_sigreturn the return address of
 * every signal handler installed without SA_RESTORER, which glibc never
 * sets on arm64.
 *
 * The clocks read the virtual counter at EL0 (CNTVCT_EL0, which the kernel
 * lets EL0 read) and its frequency (CNTFRQ_EL0). Every clock faultline has
 * counts from boot (CLOCK_REALTIME too: no RTC is read yet), so there is
 * no kernel data to read and no [vvar] page; an unknown clock falls back
 * to the system call, which says EINVAL. Built with the cross gcc by
 * kernel/build.rs: -fPIC, no libc, nothing that needs a relocation.
 */
#include <stddef.h>
#include <stdint.h>

struct timespec64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

struct timeval64 {
	int64_t tv_sec;
	int64_t tv_usec;
};

#define NSEC_PER_SEC 1000000000ull
#define NR_CLOCK_GETTIME 113
#define NR_CLOCK_GETRES 114
#define NR_RT_SIGRETURN 139

static uint64_t counter(void)
{
	uint64_t c;
	/* The isb keeps the read from being taken early (Linux:
	 * __arch_get_hw_counter). */
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(c)::"memory");
	return c;
}

static uint64_t frequency(void)
{
	uint64_t f;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
}

static long syscall2(long nr, long a, long b)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	return x0;
}

/* The clocks the kernel knows: REALTIME..BOOTTIME (0..7); the CPU-time
 * ones (2, 3) are the kernel's business. */
static int counter_clock(long clock)
{
	return clock >= 0 && clock <= 7 && clock != 2 && clock != 3;
}

/* Nanoseconds since boot, as the kernel's clock_gettime computes them:
 * whole seconds and the rest apart, so no 128-bit arithmetic. */
static void now(struct timespec64 *ts)
{
	uint64_t c = counter(), f = frequency();
	ts->tv_sec = (int64_t)(c / f);
	ts->tv_nsec = (int64_t)((c % f) * NSEC_PER_SEC / f);
}

int __kernel_clock_gettime(long clock, struct timespec64 *ts)
{
	if (!counter_clock(clock))
		return (int)syscall2(NR_CLOCK_GETTIME, clock, (long)ts);
	now(ts);
	return 0;
}

int __kernel_gettimeofday(struct timeval64 *tv, void *tz)
{
	if (tv) {
		struct timespec64 ts;
		now(&ts);
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	if (tz) {
		/* struct timezone: minutes west of Greenwich, DST type: UTC. */
		((int32_t *)tz)[0] = 0;
		((int32_t *)tz)[1] = 0;
	}
	return 0;
}

int __kernel_clock_getres(long clock, struct timespec64 *res)
{
	if (!counter_clock(clock))
		return (int)syscall2(NR_CLOCK_GETRES, clock, (long)res);
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = (int64_t)(NSEC_PER_SEC / frequency());
	}
	return 0;
}

/*
 * Where a signal handler returns: rt_sigreturn, with the frame the kernel
 * built at sp. Unwinders (libgcc's, gdb's) know a signal frame by exactly
 * these two instructions, so they must stay as they are (Linux:
 * sigtramp.S, which also carries CFI for the frame).
 */
__asm__(".text\n"
	".globl __kernel_rt_sigreturn\n"
	".type __kernel_rt_sigreturn, %function\n"
	"	nop\n" /* unwinders look one instruction before the return address */
	"__kernel_rt_sigreturn:\n"
	"	mov x8, #139\n"
	"	svc #0\n"
	".size __kernel_rt_sigreturn, . - __kernel_rt_sigreturn\n");
