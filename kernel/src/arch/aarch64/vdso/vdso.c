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
#define NR_GETRANDOM 278

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
	/* The kernel's random generator: a generation that changes whenever
	 * keys taken from it must be taken again (at every fork here), and
	 * whether it is ready at all (Linux: struct vdso_rng_data). */
	uint64_t rng_generation;
	uint32_t rng_ready;
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
	/* The monotonic clocks add nothing, so have nothing to read. */
	if (clock != CLOCK_REALTIME && clock != CLOCK_REALTIME_COARSE && clock != CLOCK_TAI)
		return 0;
	do {
		while ((seq = __atomic_load_n(&vd->seq, __ATOMIC_ACQUIRE)) & 1)
			;
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
 * getrandom(2) without a system call (Linux: lib/vdso/getrandom.c, with
 * the same calling convention): each thread hands in a state block it
 * allocated as the parameters query says, which holds a ChaCha20 key
 * taken from the kernel and keystream not yet given out. Every refill
 * replaces the key with keystream, so bytes given out cannot be worked
 * back to from the state. A new kernel generation (a fork anywhere, so a
 * copied state is never reused) makes the state take a fresh key; a state
 * in use (a signal handler calling in), flags this does not know or a
 * kernel not ready fall back to the system call.
 */
struct vgetrandom_opaque_params {
	uint32_t size_of_opaque_state;
	uint32_t mmap_prot;
	uint32_t mmap_flags;
	uint32_t reserved[13];
};

#define CHACHA_BLOCK 64
#define REFILL_BLOCKS 4
#define KEY_BYTES 32
#define STOCK_BYTES (REFILL_BLOCKS * CHACHA_BLOCK - KEY_BYTES)

struct vgetrandom_state {
	uint32_t key[KEY_BYTES / 4];
	uint8_t stock[STOCK_BYTES]; /* keystream not yet given out */
	uint64_t generation;	    /* the kernel's, when the key was taken */
	uint32_t used;		    /* bytes of stock given out */
	uint32_t busy;		    /* a call is using it */
};

#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_PRIVATE 0x02
#define MAP_ANONYMOUS 0x20
#define GRND_KNOWN 7 /* GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE */
#define PAGE 4096ul
#define MAX_RW_COUNT 0x7ffff000ul
#define EFAULT 14

static long syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}

static uint32_t rotl(uint32_t v, int n)
{
	return (v << n) | (v >> (32 - n));
}

#define QUARTER(a, b, c, d)                   \
	do {                                  \
		a += b, d = rotl(d ^ a, 16);  \
		c += d, b = rotl(b ^ c, 12);  \
		a += b, d = rotl(d ^ a, 8);   \
		c += d, b = rotl(b ^ c, 7);   \
	} while (0)

/* ChaCha20 (RFC 8439's rounds) of `key` with a 64-bit block counter and
 * a zero nonce: `n` blocks into `out`, from block 0. */
static void chacha20(uint8_t *out, const uint32_t *key, unsigned n)
{
	for (uint32_t block = 0; block < n; block++) {
		uint32_t in[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
		for (int i = 0; i < 8; i++)
			in[4 + i] = key[i];
		in[12] = block;
		uint32_t x[16];
		for (int i = 0; i < 16; i++)
			x[i] = in[i];
		for (int round = 0; round < 10; round++) {
			QUARTER(x[0], x[4], x[8], x[12]);
			QUARTER(x[1], x[5], x[9], x[13]);
			QUARTER(x[2], x[6], x[10], x[14]);
			QUARTER(x[3], x[7], x[11], x[15]);
			QUARTER(x[0], x[5], x[10], x[15]);
			QUARTER(x[1], x[6], x[11], x[12]);
			QUARTER(x[2], x[7], x[8], x[13]);
			QUARTER(x[3], x[4], x[9], x[14]);
		}
		for (int i = 0; i < 16; i++) {
			uint32_t w = x[i] + in[i];
			volatile uint8_t *o = out + block * CHACHA_BLOCK + 4 * i;
			o[0] = w, o[1] = w >> 8, o[2] = w >> 16, o[3] = w >> 24;
		}
	}
}

/* New keystream: the first KEY_BYTES become the next key, the rest the
 * stock. */
static void refill(struct vgetrandom_state *st)
{
	uint8_t fresh[REFILL_BLOCKS * CHACHA_BLOCK];
	chacha20(fresh, st->key, REFILL_BLOCKS);
	/* Byte by byte through volatile pointers: no memcpy or memset for the
	 * compiler to call, there being no library here. */
	volatile uint8_t *key = (volatile uint8_t *)st->key;
	volatile uint8_t *stock = st->stock;
	volatile uint8_t *wipe = fresh;
	for (unsigned i = 0; i < KEY_BYTES; i++)
		key[i] = fresh[i];
	for (unsigned i = 0; i < STOCK_BYTES; i++)
		stock[i] = fresh[KEY_BYTES + i];
	for (unsigned i = 0; i < sizeof(fresh); i++)
		wipe[i] = 0;
	st->used = 0;
}

long __kernel_getrandom(void *buf, unsigned long len, unsigned int flags, void *opaque,
			unsigned long opaque_len)
{
	const volatile struct vdso_data *vd = &_vdso_data;
	struct vgetrandom_state *st = opaque;

	if (opaque_len == ~0ul && !buf && !len && !flags) {
		struct vgetrandom_opaque_params *p = opaque;
		p->size_of_opaque_state = sizeof(*st);
		p->mmap_prot = PROT_READ | PROT_WRITE;
		p->mmap_flags = MAP_PRIVATE | MAP_ANONYMOUS;
		for (int i = 0; i < 13; i++)
			p->reserved[i] = 0;
		return 0;
	}
	/* A state across a page boundary could be half of two mappings. */
	if (((unsigned long)opaque & (PAGE - 1)) + sizeof(*st) > PAGE)
		return -EFAULT;
	if ((flags & ~GRND_KNOWN) || opaque_len != sizeof(*st) || !vd->rng_ready || st->busy)
		return syscall3(NR_GETRANDOM, (long)buf, (long)len, flags);
	if (!len)
		return 0;
	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	st->busy = 1;
	for (int tries = 0; tries < 2; tries++) {
		uint64_t generation = vd->rng_generation;
		if (st->generation != generation) {
			/* Recorded first: a fork during the call below leaves a
			 * state that must take a key again. */
			st->generation = generation;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (syscall3(NR_GETRANDOM, (long)st->key, KEY_BYTES, 0) != KEY_BYTES) {
				st->generation = 0;
				break;
			}
			st->used = STOCK_BYTES;
		}
		volatile uint8_t *out = buf;
		for (unsigned long done = 0; done < len;) {
			if (st->used == STOCK_BYTES)
				refill(st);
			while (st->used < STOCK_BYTES && done < len) {
				out[done++] = st->stock[st->used];
				st->stock[st->used++] = 0;
			}
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/* The kernel's generation moved meanwhile: these bytes may be a
		 * forked twin's; make them again. */
		if (st->generation == vd->rng_generation) {
			st->busy = 0;
			return (long)len;
		}
	}
	st->busy = 0;
	return syscall3(NR_GETRANDOM, (long)buf, (long)len, flags);
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
