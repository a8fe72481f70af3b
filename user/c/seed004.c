/*
 * Seed 004's measurement ("mm: use 64K folios for executable mappings"),
 * its table of file-backed mapped memory by folio size, taken on Debian's
 * own programs: python3 running a small script, bash running a coreutils
 * pipeline, gcc compiling and running a C file. A static glibc program, so
 * it maps none of the Debian libraries itself, and the same binary runs on
 * faultline (make bench) and on Linux 6.12 (make bench-linux):
 *
 *   - with exec=/align=, the program writes thp_exec_enabled and
 *     thp_mapping_align through sysfs, as the seed's steps set them,
 *     before any workload maps a library (without them they stay as the
 *     system has them, and the result line says what they were);
 *   - with fault_around=BYTES, it also writes fault_around_bytes (debugfs),
 *     to show what the folio size does to the fault count on its own;
 *   - each workload (a bash -c command line) runs once to fill the page
 *     cache, then once measured: its page faults (/proc/vmstat pgfault),
 *     its time (CLOCK_MONOTONIC: virtual ns under -icount), the user and
 *     system time of its processes (getrusage of the children: sampled at
 *     each kernel's tick, so only to its period, 10 ms on faultline and
 *     4 ms on Debian's Linux); then once more for the change in
 *     /proc/thpmaps, which sums every address space as it ends while
 *     /sys/kernel/mm/thpmaps/exited is 1, so it covers each process of the
 *     workload (that accounting walks each, so the timed run is without
 *     it; the page cache, and so the folios, are the same).
 *
 * The timed run of workload N (from 1) is window N for the TLB model
 * (tlb-mark.h; make bench TLB=1).
 *
 * One line per workload for scripts/bench-lib.sh's table:
 *
 *   result seed004 workload=NAME exec_enabled=0x2 mapping_align=0x0
 *       fault_around=65536 faults=N ns=N user_ns=N sys_ns=N file_kb=N
 *       file_4k=% file_16k=% file_32k=% file_64k_aligned=%
 *       file_64k_unaligned=% file_128k_up=%
 *       file_2m_pmd=% file_partial=% file_cont=% text_kb=N text_4k=% ...
 *
 * file_* are shares of all file-backed mapped memory (the seed's table),
 * text_* of that in executable mappings; *_cont is the share mapped with
 * the contiguous bit. Linux has neither the knobs (openEuler's) nor
 * /proc/thpmaps: there, `exec_enabled=none` and only faults and time.
 *
 *   seed004 [exec=0x2] [align=0x0] [fault_around=4096]    (--help says this)
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "proc.h"
#include "tlb-mark.h"

static const char work_py[] =
	"import json, re\n"
	"records = [{'id': i, 'name': f'item-{i}', 'tags': [str(i % 7), str(i % 11)]} for i in range(20000)]\n"
	"text = json.dumps(records)\n"
	"back = json.loads(text)\n"
	"words = re.findall(r'item-(\\d+)7\\b', text)\n"
	"print(len(back), len(words), sum(int(w) for w in words) % 1000)\n";

static const char work_c[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"struct node { struct node *next; char key[32]; long value; };\n"
	"static unsigned long hash(const char *s)\n"
	"{ unsigned long h = 5381; while (*s) h = h * 33 + (unsigned char)*s++; return h; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	enum { BUCKETS = 4096 };\n"
	"	static struct node *table[BUCKETS];\n"
	"	long n = argc > 1 ? atol(argv[1]) : 100000, found = 0;\n"
	"	for (long i = 0; i < n; i++) {\n"
	"		struct node *e = malloc(sizeof(*e));\n"
	"		snprintf(e->key, sizeof(e->key), \"key-%ld\", i * 7919 % n);\n"
	"		e->value = i;\n"
	"		unsigned long b = hash(e->key) % BUCKETS;\n"
	"		e->next = table[b];\n"
	"		table[b] = e;\n"
	"	}\n"
	"	for (long i = 0; i < n; i += 3) {\n"
	"		char key[32];\n"
	"		snprintf(key, sizeof(key), \"key-%ld\", i);\n"
	"		for (struct node *e = table[hash(key) % BUCKETS]; e; e = e->next)\n"
	"			found += strcmp(e->key, key) == 0;\n"
	"	}\n"
	"	printf(\"%ld\\n\", found);\n"
	"	return 0;\n"
	"}\n";

static const char *const workloads[][2] = {
	/* A fixed hash seed: Python's hashing, and so the instructions the
	 * script takes, would otherwise follow the random bytes each boot of
	 * each kernel happens to give it (about 0.5% either way). */
	{ "python3", "PYTHONHASHSEED=0 python3 /tmp/work.py" },
	{ "bash_coreutils", "seq 1 20000 | sort -rn | uniq | tail -3 | tr '\\n' ' ' && "
			    "ls -R /usr/lib/python3.11 | wc -l && "
			    "find /usr/include -name '*.h' | xargs cat | wc -l" },
	{ "gcc", "cd /tmp && gcc -O2 -o work work.c && ./work 50000" },
};

static void die(const char *msg)
{
	fprintf(stderr, "seed004: %s: %s (errno=%d)\n", msg, strerror(errno), errno);
	exit(1);
}

static const char *arg(int argc, char **argv, const char *key, const char *dflt)
{
	size_t klen = strlen(key);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], key, klen) == 0 && argv[i][klen] == '=')
			return argv[i] + klen + 1;
	return dflt;
}

static unsigned long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000UL + ts.tv_nsec;
}

/* A getrusage time in ns. */
static long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000L + tv.tv_usec * 1000L;
}

/* Runs CMD with bash, its output discarded; its wait status. */
static int run(const char *cmd)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	return status;
}

/* Has /proc/thpmaps count each address space as it goes (faultline's). */
#define THPMAPS_EXITED "/sys/kernel/mm/thpmaps/exited"

/* A /proc/thpmaps line, in kB (0 if absent). */
static long thp(const char *label)
{
	long kb = keyed_value("/proc/thpmaps", label, ':');
	return kb < 0 ? 0 : kb;
}

/* The /proc/thpmaps lines a row is made of, for one kind. */
enum { RSS, PMD, PARTIAL, CONT, A16, A32, A64, A128, A256, A512, A1024, A2048, U16, U32, U64, U128,
       U256, U512, U1024, U2048, NLINES };

static void read_lines(const char *kind, long out[NLINES])
{
	static const char *const sizes[] = { "16", "32", "64", "128", "256", "512", "1024", "2048" };
	char label[64];
	snprintf(label, sizeof(label), "%s-rss", kind);
	out[RSS] = thp(label);
	snprintf(label, sizeof(label), "%s-thp-pmd-aligned-2048kB", kind);
	out[PMD] = thp(label);
	snprintf(label, sizeof(label), "%s-thp-pte-partial", kind);
	out[PARTIAL] = thp(label);
	snprintf(label, sizeof(label), "%s-cont-pte-aligned-64kB", kind);
	out[CONT] = thp(label);
	for (int i = 0; i < 8; i++) {
		snprintf(label, sizeof(label), "%s-thp-pte-aligned-%skB", kind, sizes[i]);
		out[A16 + i] = thp(label);
		snprintf(label, sizeof(label), "%s-thp-pte-unaligned-%skB", kind, sizes[i]);
		out[U16 + i] = thp(label);
	}
}

static long pct(long part, long total)
{
	return total > 0 ? (part * 100 + total / 2) / total : 0;
}

/* " KIND_kb=N KIND_4k=% ...": the shares of KIND's memory, from the change
 * D in its lines. */
static int shares(char *out, size_t len, const char *kind, const long d[NLINES])
{
	long total = d[RSS], k16 = d[A16] + d[U16], k32 = d[A32] + d[U32], big = 0;
	for (int i = A128; i <= A2048; i++)
		big += d[i] + d[U16 + (i - A16)];
	long small = total - (k16 + k32 + d[A64] + d[U64] + big + d[PMD] + d[PARTIAL]);
	return snprintf(out, len,
			" %s_kb=%ld %s_4k=%ld %s_16k=%ld %s_32k=%ld %s_64k_aligned=%ld %s_64k_unaligned=%ld"
			" %s_128k_up=%ld %s_2m_pmd=%ld %s_partial=%ld %s_cont=%ld",
			kind, total, kind, pct(small, total), kind, pct(k16, total), kind, pct(k32, total), kind,
			pct(d[A64], total), kind, pct(d[U64], total), kind, pct(big, total), kind,
			pct(d[PMD], total), kind, pct(d[PARTIAL], total), kind, pct(d[CONT], total));
}

static void write_work(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0)
		die(path);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs("usage: seed004 [exec=0x2] [align=0x0] [fault_around=BYTES]\n"
			      "Seed 004's table of file-backed mapped memory by folio size, on Debian's\n"
			      "python3, bash with coreutils and gcc (each run once to fill the page\n"
			      "cache, then measured). exec= and align= set thp_exec_enabled and\n"
			      "thp_mapping_align, fault_around= sets fault_around_bytes, for the run;\n"
			      "knobs not given stay as the system has them. Each result line says\n"
			      "the settings it ran with.\n",
			      stdout);
			return 0;
		}
	const char *exec_enabled = arg(argc, argv, "exec", NULL);
	const char *mapping_align = arg(argc, argv, "align", NULL);
	const char *fault_around = arg(argc, argv, "fault_around", NULL);
	static const char around_knob[] = "/sys/kernel/debug/fault_around_bytes";
	if (fault_around && write_file(around_knob, fault_around) != 0)
		die("setting fault_around_bytes");
	char around[32] = "none";
	if (read_file(around_knob, around, sizeof(around)) == 0)
		around[strcspn(around, "\n")] = 0;
	char exec_now[32] = "none", align_now[32] = "none";
	if (access(THP "thp_exec_enabled", F_OK) == 0) {
		if ((exec_enabled && write_file(THP "thp_exec_enabled", exec_enabled) != 0) ||
		    (mapping_align && write_file(THP "thp_mapping_align", mapping_align) != 0))
			die("setting the knobs");
		read_file(THP "thp_exec_enabled", exec_now, sizeof(exec_now));
		read_file(THP "thp_mapping_align", align_now, sizeof(align_now));
		exec_now[strcspn(exec_now, "\n")] = align_now[strcspn(align_now, "\n")] = 0;
	}
	exec_enabled = exec_now;
	mapping_align = align_now;
	int have_thpmaps = access("/proc/thpmaps", R_OK) == 0;
	write_work("/tmp/work.py", work_py);
	write_work("/tmp/work.c", work_c);
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (size_t w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
		const char *name = workloads[w][0], *cmd = workloads[w][1];
		run(cmd);
		long before[2][NLINES], after[2][NLINES], d[NLINES];
		long faults = vmstat("pgfault");
		struct rusage ru0, ru1;
		getrusage(RUSAGE_CHILDREN, &ru0);
		unsigned long t0 = now_ns();
		tlb_mark(TLB_BEGIN, 0);
		int status = run(cmd);
		tlb_mark(TLB_REPORT, w + 1);
		unsigned long t1 = now_ns();
		getrusage(RUSAGE_CHILDREN, &ru1);
		faults = vmstat("pgfault") - faults;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fprintf(stderr, "seed004: %s: status %#x\n", name, status);
		char line[1024];
		int n = snprintf(line, sizeof(line), "result seed004 workload=%s exec_enabled=%s mapping_align=%s"
			" fault_around=%s faults=%ld ns=%lu user_ns=%ld sys_ns=%ld", name, exec_enabled,
			mapping_align, around, faults, t1 - t0, tv_ns(ru1.ru_utime) - tv_ns(ru0.ru_utime),
			tv_ns(ru1.ru_stime) - tv_ns(ru0.ru_stime));
		if (have_thpmaps) {
			/* The shares, from one more run counted as each address
			 * space goes: the count walks every one, so the timed run
			 * goes without it. The page cache is as the timed run had
			 * it, so the folios are the same. */
			if (write_file(THPMAPS_EXITED, "1") != 0)
				die("turning on " THPMAPS_EXITED);
			read_lines("file", before[0]);
			read_lines("text", before[1]);
			run(cmd);
			read_lines("file", after[0]);
			read_lines("text", after[1]);
			write_file(THPMAPS_EXITED, "0");
			for (int k = 0; k < 2; k++) {
				for (int i = 0; i < NLINES; i++)
					d[i] = after[k][i] - before[k][i];
				n += shares(line + n, sizeof(line) - n, k ? "text" : "file", d);
			}
		}
		printf("%s\n", line);
	}
	unlink("/tmp/work.py");
	unlink("/tmp/work.c");
	unlink("/tmp/work");
	return 0;
}
