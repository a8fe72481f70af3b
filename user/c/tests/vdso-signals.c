/*
 * The vDSO as glibc uses it: signal handlers return through the vDSO's
 * __kernel_rt_sigreturn (glibc on arm64 never sets SA_RESTORER), and
 * clock_gettime, gettimeofday and clock_getres run from the vDSO that
 * AT_SYSINFO_EHDR announces. And waiting for a signal with sigsuspend,
 * the SIGSEGV a forged signal frame gets, and the vDSO's getrandom. A static glibc program: make test runs it on
 * faultline, make test-linux on Debian's Linux 6.12, and the values it
 * expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile int handled, nested_seen, last_code;

static void count_signal(int sig)
{
	(void)sig;
	handled++;
}

static int a_handler_returns_to_the_interrupted_code(void)
{
	struct sigaction sa = { .sa_handler = count_signal }, old;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, &old) == 0, "sigaction: %s", strerror(errno));
	handled = 0;
	volatile long sum = 0;
	for (int i = 0; i < 3; i++) {
		sum += i;
		raise(SIGUSR1);
		sum += 10;
	}
	sigaction(SIGUSR1, &old, NULL);
	CHECK(handled == 3 && sum == 33, "handled %d, sum %ld; want 3 and 33", handled, sum);
	return 0;
}

static void with_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	last_code = si->si_code;
}

static void raise_inside(int sig)
{
	(void)sig;
	raise(SIGUSR1); /* blocked while this runs: delivered on return */
	nested_seen = handled;
}

static int siginfo_and_nested_handlers_return_too(void)
{
	struct sigaction info = { .sa_sigaction = with_info, .sa_flags = SA_SIGINFO };
	struct sigaction outer = { .sa_handler = raise_inside }, inner = { .sa_handler = count_signal };
	struct sigaction old1, old2;
	sigemptyset(&info.sa_mask);
	sigemptyset(&outer.sa_mask);
	sigaddset(&outer.sa_mask, SIGUSR1);
	sigemptyset(&inner.sa_mask);
	sigaction(SIGUSR2, &info, &old2);
	last_code = 0;
	raise(SIGUSR2);
	int code = last_code;
	sigaction(SIGUSR2, &outer, NULL);
	sigaction(SIGUSR1, &inner, &old1);
	handled = 0;
	nested_seen = -1;
	raise(SIGUSR2);
	int after = handled;
	sigaction(SIGUSR1, &old1, NULL);
	sigaction(SIGUSR2, &old2, NULL);
	CHECK(code == SI_TKILL, "raise's si_code %d, want SI_TKILL (%d)", code, SI_TKILL);
	CHECK(nested_seen == 0 && after == 1,
	      "the blocked signal ran %s the outer handler returned (seen %d, after %d)",
	      nested_seen ? "before" : "not after", nested_seen, after);
	return 0;
}

static char *volatile fixable;
static volatile uintptr_t fault_addr;

static void make_writable(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = (uintptr_t)si->si_addr;
	mprotect(fixable, 4096, PROT_READ | PROT_WRITE);
}

static int a_segv_handler_can_fix_the_fault_and_return(void)
{
	struct sigaction sa = { .sa_sigaction = make_writable, .sa_flags = SA_SIGINFO }, old;
	sigemptyset(&sa.sa_mask);
	fixable = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fixable != MAP_FAILED, "mmap: %s", strerror(errno));
	sigaction(SIGSEGV, &sa, &old);
	fixable[100] = 42; /* faults, the handler fixes it, the store runs again */
	sigaction(SIGSEGV, &old, NULL);
	int value = fixable[100];
	munmap(fixable, 4096);
	CHECK(fault_addr == (uintptr_t)fixable + 100, "si_addr %#lx, want %p + 100",
	      (unsigned long)fault_addr, (void *)fixable);
	CHECK(value == 42, "the retried store wrote %d", value);
	return 0;
}

static int the_vdso_is_an_elf_image_announced_by_the_auxv(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	CHECK(eh != NULL, "no AT_SYSINFO_EHDR");
	CHECK(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_type == ET_DYN &&
		      eh->e_machine == EM_AARCH64,
	      "not an aarch64 shared object: type %d machine %d", eh->e_type, eh->e_machine);
	/* Its dynamic symbols name __kernel_clock_gettime. */
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	const Elf64_Dyn *dyn = NULL;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)((const char *)eh + ph[i].p_offset);
	CHECK(dyn, "no PT_DYNAMIC");
	const char *strtab = NULL;
	size_t strsz = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)eh + dyn->d_un.d_ptr;
		if (dyn->d_tag == DT_STRSZ)
			strsz = dyn->d_un.d_val;
	}
	CHECK(strtab && strsz, "no string table");
	int found = 0, version = 0;
	for (size_t i = 0; i < strsz; i += strlen(strtab + i) + 1) {
		found |= strcmp(strtab + i, "__kernel_clock_gettime") == 0;
		version |= strcmp(strtab + i, "LINUX_2.6.39") == 0;
	}
	CHECK(found && version, "__kernel_clock_gettime %d, LINUX_2.6.39 %d", found, version);
	return 0;
}

/* The address of the vDSO's dynamic symbol NAME, or NULL (its DT_HASH
 * table says how many symbols there are). */
static void *vdso_symbol(const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	const Elf64_Dyn *dyn = NULL;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)((const char *)eh + ph[i].p_offset);
	const char *strtab = NULL;
	const Elf64_Sym *symtab = NULL;
	const uint32_t *hash = NULL;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)eh + dyn->d_un.d_ptr;
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const Elf64_Sym *)((const char *)eh + dyn->d_un.d_ptr);
		if (dyn->d_tag == DT_HASH)
			hash = (const uint32_t *)((const char *)eh + dyn->d_un.d_ptr);
	}
	if (!strtab || !symtab || !hash)
		return NULL;
	for (uint32_t i = 0; i < hash[1]; i++)
		if (symtab[i].st_shndx != SHN_UNDEF && strcmp(strtab + symtab[i].st_name, name) == 0)
			return (char *)eh + symtab[i].st_value;
	return NULL;
}

/* __kernel_getrandom's parameters query (Linux: struct
 * vgetrandom_opaque_params). */
struct vgetrandom_params {
	uint32_t size_of_opaque_state, mmap_prot, mmap_flags, reserved[13];
};

typedef long (*vgetrandom_fn)(void *, size_t, unsigned, void *, size_t);

/* getrandom through the vDSO: its parameters, a state mapped as they
 * say, bytes that differ call to call, and a forked child whose copy of
 * the state does not repeat its parent's bytes. */
static int the_vdso_gives_random_bytes_a_fork_does_not_repeat(void)
{
	vgetrandom_fn fn = (vgetrandom_fn)vdso_symbol("__kernel_getrandom");
	CHECK(fn, "no __kernel_getrandom");
	struct vgetrandom_params params;
	memset(&params, 0xff, sizeof(params));
	CHECK(fn(NULL, 0, 0, &params, ~0UL) == 0, "the parameters query failed");
	CHECK(params.size_of_opaque_state > 0 && params.size_of_opaque_state < 4096 &&
		      params.reserved[0] == 0 && params.reserved[12] == 0,
	      "parameters: size %u reserved %u", params.size_of_opaque_state, params.reserved[0]);
	char *page = mmap(NULL, 8192, params.mmap_prot, params.mmap_flags, -1, 0);
	CHECK(page != MAP_FAILED, "mmap as the parameters say: %s", strerror(errno));
	void *state = page;
	size_t size = params.size_of_opaque_state;
	uint8_t a[1263], b[1263];
	CHECK(fn(a, sizeof(a), 0, state, size) == sizeof(a), "first call");
	CHECK(fn(b, sizeof(b), 0, state, size) == sizeof(b), "second call");
	CHECK(memcmp(a, b, sizeof(a)) != 0, "the same bytes twice");
	CHECK(fn(a, 0, 0, state, size) == 0, "no bytes");
	/* Flags it does not know: the system call's answer. */
	CHECK(fn(a, 16, 0x100, state, size) == -EINVAL, "unknown flag");
	/* A state across a page boundary. */
	CHECK(fn(a, 16, 0, page + 4096 - 8, size) == -EFAULT, "a state across pages");
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		fn(a, 32, 0, state, size);
		write(p[1], a, 32);
		_exit(0);
	}
	fn(b, 32, 0, state, size);
	CHECK(read(p[0], a, 32) == 32, "the child's bytes");
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(p[1]);
	munmap(page, 8192);
	CHECK(memcmp(a, b, 32) != 0, "parent and child drew the same bytes");
	return 0;
}

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int the_clocks_agree_with_the_system_calls(void)
{
	struct timespec a, b, c, res, rt;
	struct timeval tv;
	clock_gettime(CLOCK_MONOTONIC, &a);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_MONOTONIC, &c);
	clock_gettime(CLOCK_REALTIME, &rt);
	gettimeofday(&tv, NULL);
	int getres = clock_getres(CLOCK_MONOTONIC, &res);
	int bad = clock_gettime(12345, &a), bad_err = errno;
	int64_t tv_ns = (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
	CHECK(ns(&a) <= ns(&b) && ns(&b) <= ns(&c), "out of order: %lld %lld %lld",
	      (long long)ns(&a), (long long)ns(&b), (long long)ns(&c));
	CHECK(tv_ns - ns(&rt) >= 0 && tv_ns - ns(&rt) < 1000000000,
	      "gettimeofday %lld ns from CLOCK_REALTIME", (long long)(tv_ns - ns(&rt)));
	CHECK(getres == 0 && res.tv_sec == 0 && res.tv_nsec > 0 && res.tv_nsec <= 1000,
	      "clock_getres: %d, %ld.%09ld", getres, (long)res.tv_sec, res.tv_nsec);
	CHECK(bad == -1 && bad_err == EINVAL, "an unknown clock: %d, errno %d", bad, bad_err);
	return 0;
}

/* A child that sends SIGUSR1 to this process after 20 ms. */
static pid_t signal_me_soon(void)
{
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
		usleep(20000);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	return child;
}

static int sigsuspend_waits_and_restores_the_mask(void)
{
	struct sigaction sa = { .sa_handler = count_signal, .sa_flags = SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	sigset_t usr1, before, empty, after;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&empty);
	sigprocmask(SIG_BLOCK, &usr1, &before);
	handled = 0;
	pid_t child = signal_me_soon();
	int rc = sigsuspend(&empty), err = errno;
	int ran = handled;
	waitpid(child, NULL, 0);
	sigprocmask(SIG_BLOCK, NULL, &after);
	int still_blocked = sigismember(&after, SIGUSR1);
	/* Already pending: sigsuspend returns at once. */
	raise(SIGUSR1);
	int pending_rc = sigsuspend(&empty), pending_err = errno;
	int pending_ran = handled;
	long bad = syscall(SYS_rt_sigsuspend, &empty, 4);
	int bad_err = errno;
	sigprocmask(SIG_SETMASK, &before, NULL);
	sigaction(SIGUSR1, &old, NULL);
	CHECK(rc == -1 && err == EINTR && ran == 1, "sigsuspend: %d, errno %d, handled %d", rc,
	      err, ran);
	CHECK(still_blocked == 1, "SIGUSR1 not blocked again after the handler");
	CHECK(pending_rc == -1 && pending_err == EINTR && pending_ran == 2,
	      "with the signal pending: %d, errno %d, handled %d", pending_rc, pending_err,
	      pending_ran);
	CHECK(bad == -1 && bad_err == EINVAL, "a 4-byte set: %ld, errno %d", bad, bad_err);
	return 0;
}

/* What a refused rt_sigreturn raises, as a SIGSEGV handler on the
 * alternate stack sees it: written to `report_fd` by the child that
 * tried. */
struct segv_report {
	int code;
	uintptr_t addr, sp;
};
static int report_fd = -1;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	struct segv_report r = { si->si_code, (uintptr_t)si->si_addr,
				 ((ucontext_t *)uc)->uc_mcontext.sp };
	write(report_fd, &r, sizeof(r));
	_exit(0);
}

static uintptr_t frame_sp;

/* Returns through a frame whose pstate asks for EL1h: refused. */
static void mangle_pstate(int sig, siginfo_t *si, void *ucp)
{
	ucontext_t *uc = ucp;
	(void)sig;
	(void)si;
	frame_sp = uc->uc_mcontext.sp;
	write(report_fd, (void *)&frame_sp, sizeof(frame_sp));
	uc->uc_mcontext.pstate = (uc->uc_mcontext.pstate & ~0xfULL) | 0x5;
}

/* rt_sigreturn with the stack pointer at `sp`. */
static void sigreturn_at(uintptr_t sp)
{
	__asm__ volatile("mov sp, %0\n\tmov x8, #139\n\tsvc #0" ::"r"(sp) : "x8", "memory");
}

static char altstack[65536];
static char scratch[65536];

/* In a child: rt_sigreturn through a frame with a bad pstate (0), at a
 * misaligned sp (1), or at an sp where nothing can be read (2). Returns
 * the sp the frame was at, and what the SIGSEGV handler was told in
 * `r`. */
static uintptr_t forged_return(int how, struct segv_report *r)
{
	int pfd[2];
	if (pipe(pfd))
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		report_fd = pfd[1];
		stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
		sigaltstack(&ss, NULL);
		struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK };
		sigaction(SIGSEGV, &sa, NULL);
		struct sigaction mangle = { .sa_sigaction = mangle_pstate, .sa_flags = SA_SIGINFO };
		sigaction(SIGUSR1, &mangle, NULL);
		if (how == 0) {
			raise(SIGUSR1);
		} else {
			frame_sp = ((uintptr_t)scratch + sizeof(scratch) / 2) | 3;
			if (how == 2) {
				char *hole = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
						  -1, 0);
				munmap(hole, 65536);
				frame_sp = (uintptr_t)hole + 4096;
			}
			write(report_fd, &frame_sp, sizeof(frame_sp));
			sigreturn_at(frame_sp);
		}
		_exit(1);
	}
	close(pfd[1]);
	uintptr_t sp = 0;
	memset(r, 0, sizeof(*r));
	if (read(pfd[0], &sp, sizeof(sp)) != sizeof(sp) || read(pfd[0], r, sizeof(*r)) != sizeof(*r))
		sp = 0;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return sp;
}

/*
 * A signal sent while blocked waits; the call that unblocks it delivers
 * it on its own way back to user space, before the next instruction, as
 * on Linux (set_current_blocked recomputes TIF_SIGPENDING). The raw
 * system call leaves no other kernel entry in between.
 */
static int unblocking_a_pending_signal_delivers_it_on_return(void)
{
	struct sigaction sa = { .sa_handler = count_signal }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, &old);
	sigset_t usr2, before;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, &before);
	handled = 0;
	raise(SIGUSR2);
	int while_blocked = handled;
	long rc = syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &usr2, NULL, 8);
	int after_unblock = handled;
	sigprocmask(SIG_SETMASK, &before, NULL);
	sigaction(SIGUSR2, &old, NULL);
	CHECK(while_blocked == 0, "a blocked signal was handled");
	CHECK(rc == 0 && after_unblock == 1, "rt_sigprocmask: %ld, handled %d after it", rc,
	      after_unblock);
	return 0;
}

static int a_refused_sigreturn_raises_sigsegv_as_linux_does(void)
{
	struct segv_report r;
	/* Registers restored, then refused: about the restored sp. */
	uintptr_t sp = forged_return(0, &r);
	CHECK(sp != 0, "no SIGSEGV for a bad pstate");
	CHECK(r.code == SEGV_ACCERR && r.addr == sp && r.sp == sp,
	      "bad pstate: code %d addr %#lx handler sp %#lx, frame sp %#lx", r.code,
	      (unsigned long)r.addr, (unsigned long)r.sp, (unsigned long)sp);
	/* Refused before any read: about the sp as it was. */
	sp = forged_return(1, &r);
	CHECK(sp != 0, "no SIGSEGV for a misaligned sp");
	CHECK(r.code == SEGV_ACCERR && r.addr == sp && r.sp == sp,
	      "misaligned: code %d addr %#lx handler sp %#lx, sp %#lx", r.code,
	      (unsigned long)r.addr, (unsigned long)r.sp, (unsigned long)sp);
	/* Unreadable: the registers come back as 0, sp included, and the
	 * SIGSEGV is about address 0, below mappings: SEGV_ACCERR. */
	sp = forged_return(2, &r);
	CHECK(sp != 0, "no SIGSEGV for an unreadable frame");
	CHECK(r.code == SEGV_ACCERR && r.addr == 0 && r.sp == 0,
	      "unreadable: code %d addr %#lx handler sp %#lx, frame at %#lx", r.code,
	      (unsigned long)r.addr, (unsigned long)r.sp, (unsigned long)sp);
	return 0;
}

static const struct test tests[] = {
	TEST(a_handler_returns_to_the_interrupted_code),
	TEST(siginfo_and_nested_handlers_return_too),
	TEST(a_segv_handler_can_fix_the_fault_and_return),
	TEST(the_vdso_is_an_elf_image_announced_by_the_auxv),
	TEST(the_clocks_agree_with_the_system_calls),
	TEST(sigsuspend_waits_and_restores_the_mask),
	TEST(unblocking_a_pending_signal_delivers_it_on_return),
	TEST(a_refused_sigreturn_raises_sigsegv_as_linux_does),
	TEST(the_vdso_gives_random_bytes_a_fork_does_not_repeat),
};

int main(void)
{
	return run_tests("vdso-signals", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
