/*
 * The kernel log as dmesg reads it: syslog(2) (klogctl) and /dev/kmsg.
 * syslog's READ_ALL gives `<N>[SECONDS.MICROS] TEXT` lines from boot on;
 * /dev/kmsg gives one `PREFIX,SEQ,MICROS,-;TEXT` record per read, takes
 * a write as a record (`<N>` setting its level, facility LOG_USER), is
 * EINVAL for a buffer too small and EAGAIN past the end with O_NONBLOCK,
 * and seeks only to its start, end or first uncleared record; both need
 * CAP_SYSLOG to read (Debian's dmesg_restrict). A static glibc program:
 * make test runs it on faultline, make test-linux on Debian's Linux 6.12;
 * the values it expects are Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#include "check.h"

/* Is `line` (up to its newline) `<N>[SSSSS.UUUUUU] ...`? */
static int syslog_line_ok(const char *line)
{
	unsigned prefix;
	unsigned long sec, usec;
	int n = 0;
	return sscanf(line, "<%u>[%5lu.%6lu]%n", &prefix, &sec, &usec, &n) == 3 && n > 0 &&
	       line[n] == ' ';
}

static int syslog_reads_the_log_from_boot(void)
{
	int size = klogctl(10, NULL, 0);
	CHECK(size >= 4096, "SIZE_BUFFER: %d", size);
	char *buf = calloc(1, size + 1);
	CHECK(buf, "calloc");
	int n = klogctl(3, buf, size);
	int err = errno;
	int lines = 0, bad = 0;
	for (char *line = buf; n > 0 && line < buf + n && *line; lines++) {
		bad += !syslog_line_ok(line);
		char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	free(buf);
	CHECK(n > 0, "READ_ALL: %d errno %d", n, err);
	CHECK(lines >= 3 && bad == 0, "%d lines, %d not <N>[seconds] text", lines, bad);
	return 0;
}

static int syslog_checks_its_arguments(void)
{
	char buf[64];
	struct {
		int type, len;
		char *buf;
	} bad[] = {
		{ 3, sizeof(buf), NULL }, { 3, -1, buf }, { 2, -1, buf }, { 8, 0, NULL },
		{ 8, 9, NULL },		  { 11, 0, NULL }, { -1, 0, NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		int r = klogctl(bad[i].type, bad[i].buf, bad[i].len);
		CHECK(r == -1 && errno == EINVAL, "klogctl(%d, %s, %d): %d errno %d, want EINVAL",
		      bad[i].type, bad[i].buf ? "buf" : "NULL", bad[i].len, r, errno);
	}
	CHECK(klogctl(3, buf, 0) == 0, "READ_ALL of 0 bytes: %s", strerror(errno));
	CHECK(klogctl(9, NULL, 0) >= 0, "SIZE_UNREAD: %s", strerror(errno));
	CHECK(klogctl(0, NULL, 0) == 0 && klogctl(1, NULL, 0) == 0, "CLOSE/OPEN: %s",
	      strerror(errno));
	return 0;
}

static int kmsg_takes_a_record_and_gives_it_back(void)
{
	int fd = open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/kmsg: %s", strerror(errno));
	off_t end = lseek(fd, 0, SEEK_END);
	const char *msg = "<5>faultline-kmsg-test hello\n";
	ssize_t w = write(fd, msg, strlen(msg));
	/* Ours, or a record the kernel logged meanwhile, then ours. */
	char rec[512] = "";
	ssize_t r = 0;
	for (int i = 0; i < 50 && !strstr(rec, "faultline-kmsg-test"); i++) {
		r = read(fd, rec, sizeof(rec) - 1);
		rec[r > 0 ? r : 0] = 0;
	}
	unsigned prefix = 0;
	unsigned long long seq, usec;
	int body = 0;
	int parsed = r > 0 && sscanf(rec, "%u,%llu,%llu,-;%n", &prefix, &seq, &usec, &body) == 3;
	char drain[1024];
	ssize_t more;
	do {
		errno = 0;
		more = read(fd, drain, sizeof(drain));
	} while (more > 0);
	int more_err = errno;
	char big[1025];
	memset(big, 'x', sizeof(big));
	errno = 0;
	int big_err = write(fd, big, sizeof(big)) == -1 ? errno : 0;
	close(fd);
	char all[1 << 16];
	int n = klogctl(3, all, sizeof(all) - 1);
	all[n > 0 ? n : 0] = 0;
	CHECK(end == 0, "SEEK_END: %lld, want 0", (long long)end);
	CHECK(w == (ssize_t)strlen(msg), "write: %zd", w);
	CHECK(parsed && prefix == 13 && strcmp(rec + body, "faultline-kmsg-test hello\n") == 0,
	      "read %zd: \"%s\" (want prefix 13: LOG_USER, level 5)", r, rec);
	CHECK(more == -1 && more_err == EAGAIN, "past the end: %zd errno %d, want EAGAIN", more,
	      more_err);
	CHECK(big_err == EINVAL, "a 1025-byte write: errno %d, want EINVAL (one write, one "
	      "record of at most 1024 bytes)", big_err);
	CHECK(strstr(all, "<13>[") && strstr(all, "] faultline-kmsg-test hello\n"),
	      "not in syslog's READ_ALL");
	return 0;
}

static int kmsg_reads_whole_records_from_its_start(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	char small[4], rec[1024] = "";
	errno = 0;
	ssize_t tiny = read(fd, small, sizeof(small));
	int tiny_err = errno;
	errno = 0;
	off_t odd = lseek(fd, 1, SEEK_SET);
	int odd_err = errno;
	off_t start = lseek(fd, 0, SEEK_SET);
	ssize_t first = read(fd, rec, sizeof(rec) - 1);
	unsigned prefix;
	unsigned long long seq = 99, usec;
	int fields = first > 0 ? sscanf(rec, "%u,%llu,%llu,", &prefix, &seq, &usec) : 0;
	ssize_t second = read(fd, rec, sizeof(rec) - 1);
	unsigned long long seq2 = 0;
	int fields2 = second > 0 ? sscanf(rec, "%u,%llu,", &prefix, &seq2) : 0;
	close(fd);
	CHECK(tiny == -1 && tiny_err == EINVAL, "read of 4 bytes: %zd errno %d, want EINVAL", tiny,
	      tiny_err);
	CHECK(odd == -1 && odd_err == ESPIPE, "lseek to 1: %lld errno %d, want ESPIPE",
	      (long long)odd, odd_err);
	CHECK(start == 0 && fields == 3 && seq == 0, "from the start: record %llu (%d fields)", seq,
	      fields);
	CHECK(fields2 == 2 && seq2 == 1, "then record %llu", seq2);
	return 0;
}

/* As nobody: the number of the first step that goes otherwise than on
 * Linux, or 0. */
static int nobody_reads_the_log(const void *arg)
{
	char buf[64];
	(void)arg;
	errno = 0;
	if (klogctl(3, buf, sizeof(buf)) != -1 || errno != EPERM)
		return 11;
	errno = 0;
	if (open("/dev/kmsg", O_RDONLY) != -1 || errno != EPERM)
		return 12;
	/* Writing is for whom the file's mode lets (root). */
	errno = 0;
	if (open("/dev/kmsg", O_WRONLY) != -1 || errno != EACCES)
		return 13;
	return 0;
}

static int reading_needs_cap_syslog(void)
{
	int step = as_user(65534, nobody_reads_the_log, NULL);
	CHECK(step == 0,
	      "as nobody: step %d failed (11 syslog READ_ALL, 12 open for reading, 13 open for "
	      "writing, want EACCES)",
	      step);
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(syslog_reads_the_log_from_boot),
		TEST(syslog_checks_its_arguments),
		TEST(kmsg_takes_a_record_and_gives_it_back),
		TEST(kmsg_reads_whole_records_from_its_start),
		TEST(reading_needs_cap_syslog),
	};
	return run_tests("kmsg", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
