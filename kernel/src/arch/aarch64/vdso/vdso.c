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
 * lets EL0 read) and its frequency (CNTFRQ_EL0). The monotonic clocks
 * count from boot; CLOCK_REALTIME adds the offset the kernel keeps in its
 * data page ([vvar], mapped read-only one page below this image; layout
 * in kernel/src/task/clock.rs), under a sequence count, and CLOCK_TAI
 * the TAI offset too. The CPU-time
 * clocks and unknown ones fall back to the system call. Built with the
 * cross gcc by kernel/build.rs: -fPIC, no libc, nothing that needs a
 * relocation.
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

/* The kernel's data page (Linux: struct vdso_data): odd `seq` while the
 * kernel rewrites it. */
struct vdso_data {
	uint32_t seq;
	uint32_t pad;
	int64_t realtime_offset;
	/* ns = (counter * mult) >> 32, as the kernel's counter_to_ns
	 * (task/clock.rs, Linux: the clocksource's mult and shift). */
	uint64_t mult;
	/* CLOCK_TAI - CLOCK_REALTIME, in seconds. */
	int64_t tai_offset;
};
#define MULT_SHIFT 32
extern const struct vdso_data _vdso_data __attribute__((visibility("hidden")));

#define CLOCK_REALTIME 0
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_TAI 11

/* The clocks read here: REALTIME..BOOTTIME (0..7) and TAI (11); the
 * CPU-time ones (2, 3) and the ALARM ones are the kernel's business, as
 * in Linux's vDSO. */
static int counter_clock(long clock)
{
	return (clock >= 0 && clock <= 7 && clock != 2 && clock != 3) || clock == CLOCK_TAI;
}

static uint64_t monotonic_ns(void)
{
	/* One 64x64->128 multiply (mul, umulh) and a shift: no division. */
	uint64_t mult = ((const volatile struct vdso_data *)&_vdso_data)->mult;
	return (uint64_t)(((unsigned __int128)counter() * mult) >> MULT_SHIFT);
}

/* What `clock` adds to the monotonic clock, read consistently (Linux:
 * vdso_read_begin/retry). */
static int64_t offset(long clock)
{
	const volatile struct vdso_data *vd = &_vdso_data;
	uint32_t seq;
	int64_t off;
	do {
		while ((seq = __atomic_load_n(&vd->seq, __ATOMIC_ACQUIRE)) & 1)
			;
		off = 0;
		if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI)
			off = vd->realtime_offset;
		if (clock == CLOCK_TAI)
			off += vd->tai_offset * (int64_t)NSEC_PER_SEC;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (vd->seq != seq);
	return off;
}

static void now(long clock, struct timespec64 *ts)
{
	int64_t ns = (int64_t)monotonic_ns() + offset(clock);
	/* Floor division: a clock set before 1970 has negative seconds and a
	 * non-negative tv_nsec. */
	ts->tv_sec = ns / (int64_t)NSEC_PER_SEC;
	ts->tv_nsec = ns % (int64_t)NSEC_PER_SEC;
	if (ts->tv_nsec < 0) {
		ts->tv_sec -= 1;
		ts->tv_nsec += NSEC_PER_SEC;
	}
}

int __kernel_clock_gettime(long clock, struct timespec64 *ts)
{
	if (!counter_clock(clock))
		return (int)syscall2(NR_CLOCK_GETTIME, clock, (long)ts);
	now(clock, ts);
	return 0;
}

int __kernel_gettimeofday(struct timeval64 *tv, void *tz)
{
	if (tv) {
		struct timespec64 ts;
		now(CLOCK_REALTIME, &ts);
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
