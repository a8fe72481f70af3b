/*
 * /dev/rtc0, the hardware clock (QEMU virt's PL031) as Linux's RTC class
 * device: reading and setting its calendar time, one opener at a time,
 * the periodic interrupt rate's bounds, periodic and update interrupts
 * counted by read(2) and seen by poll(2), and the read sizes and ioctls
 * it refuses. A static glibc program: make test runs it on faultline,
 * make test-linux on Debian's Linux 6.12, and the values it expects are
 * Linux's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The test's descriptor: each test opens its own, closing one a failed
 * test left open, as the device takes one opener at a time. */
static int fd = -1;

static int reopen(void)
{
	if (fd >= 0)
		close(fd);
	fd = open("/dev/rtc0", O_RDONLY);
	return fd;
}

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static time_t rtc_seconds(void)
{
	struct rtc_time rt;
	if (ioctl(fd, RTC_RD_TIME, &rt) != 0)
		return -1;
	struct tm tm = { .tm_sec = rt.tm_sec, .tm_min = rt.tm_min, .tm_hour = rt.tm_hour,
			 .tm_mday = rt.tm_mday, .tm_mon = rt.tm_mon, .tm_year = rt.tm_year };
	return timegm(&tm);
}

static int the_time_is_the_wall_clocks(void)
{
	CHECK(reopen() >= 0, "open /dev/rtc0: %s", strerror(errno));
	struct rtc_time rt;
	CHECK(ioctl(fd, RTC_RD_TIME, &rt) == 0, "RTC_RD_TIME: %s", strerror(errno));
	time_t rtc = rtc_seconds(), now = time(NULL);
	CHECK(rtc - now <= 2 && now - rtc <= 2, "the RTC says %ld, time() %ld", (long)rtc,
	      (long)now);
	struct tm g;
	time_t at = timegm(&(struct tm){ .tm_sec = rt.tm_sec, .tm_min = rt.tm_min,
					  .tm_hour = rt.tm_hour, .tm_mday = rt.tm_mday,
					  .tm_mon = rt.tm_mon, .tm_year = rt.tm_year });
	gmtime_r(&at, &g);
	/* Linux 6.12's RTC counts tm_yday from 1 (rtc_time64_to_tm). */
	CHECK(rt.tm_wday == g.tm_wday && rt.tm_yday == g.tm_yday + 1 && rt.tm_isdst == 0,
	      "wday %d yday %d isdst %d, gmtime says %d %d", rt.tm_wday, rt.tm_yday,
	      rt.tm_isdst, g.tm_wday, g.tm_yday);
	errno = 0;
	CHECK(open("/dev/rtc0", O_RDONLY) < 0 && errno == EBUSY, "a second open: %s",
	      strerror(errno));
	close(fd);
	fd = open("/dev/rtc0", O_RDONLY);
	CHECK(fd >= 0, "open after close: %s", strerror(errno));
	return 0;
}

static int setting_the_time(void)
{
	CHECK(reopen() >= 0, "open: %s", strerror(errno));
	/* 2030-01-01 00:00:00 UTC. */
	struct rtc_time at = { .tm_mday = 1, .tm_mon = 0, .tm_year = 130 };
	time_t before = time(NULL);
	CHECK(ioctl(fd, RTC_SET_TIME, &at) == 0, "RTC_SET_TIME: %s", strerror(errno));
	time_t got = rtc_seconds();
	struct rtc_time bad = at;
	bad.tm_mon = 12;
	errno = 0;
	int e1 = ioctl(fd, RTC_SET_TIME, &bad) < 0 ? errno : 0;
	bad = at;
	bad.tm_mon = 1;
	bad.tm_mday = 29;
	errno = 0;
	int e2 = ioctl(fd, RTC_SET_TIME, &bad) < 0 ? errno : 0;
	/* 2107 is past the PL031's 32 bits of seconds. */
	bad = at;
	bad.tm_year = 207;
	errno = 0;
	int e3 = ioctl(fd, RTC_SET_TIME, &bad) < 0 ? errno : 0;
	errno = 0;
	int e4 = ioctl(fd, RTC_SET_TIME, (void *)8) < 0 ? errno : 0;
	/* Back to the wall clock's time. */
	time_t now = time(NULL);
	struct tm g;
	gmtime_r(&now, &g);
	struct rtc_time back = { .tm_sec = g.tm_sec, .tm_min = g.tm_min, .tm_hour = g.tm_hour,
				 .tm_mday = g.tm_mday, .tm_mon = g.tm_mon, .tm_year = g.tm_year };
	int restored = ioctl(fd, RTC_SET_TIME, &back);
	time_t after = rtc_seconds();
	close(fd);
	CHECK(got >= 1893456000 && got <= 1893456002, "set to 1893456000, read back %ld",
	      (long)got);
	CHECK(e1 == EINVAL && e2 == EINVAL, "month 12: %s; 2030-02-29: %s", strerror(e1),
	      strerror(e2));
	CHECK(e3 == ERANGE, "the year 2107: %s", strerror(e3));
	CHECK(e4 == EFAULT, "a bad pointer: %s", strerror(e4));
	CHECK(restored == 0 && after - before >= 0 && after - before <= 3,
	      "restoring the time: %d, %ld s off", restored, (long)(after - before));
	return 0;
}

static int periodic_rate_bounds(void)
{
	CHECK(reopen() >= 0, "open: %s", strerror(errno));
	unsigned long rate = 0;
	CHECK(ioctl(fd, RTC_IRQP_READ, &rate) == 0 && rate >= 1 && rate <= 8192,
	      "RTC_IRQP_READ: %s, %lu", strerror(errno), rate);
	static const long bad[] = { 0, 8193, -1 };
	for (unsigned i = 0; i < 3; i++) {
		errno = 0;
		CHECK(ioctl(fd, RTC_IRQP_SET, bad[i]) < 0 && errno == EINVAL, "rate %ld: %s",
		      bad[i], strerror(errno));
	}
	CHECK(ioctl(fd, RTC_IRQP_SET, 8192UL) == 0, "rate 8192 as root: %s", strerror(errno));
	CHECK(ioctl(fd, RTC_IRQP_SET, 16UL) == 0 && ioctl(fd, RTC_IRQP_READ, &rate) == 0 &&
		      rate == 16,
	      "rate 16 read back as %lu", rate);
	errno = 0;
	CHECK(ioctl(fd, _IO('p', 0x7f)) < 0 && errno == ENOTTY, "an unknown ioctl: %s",
	      strerror(errno));
	close(fd);
	return 0;
}

static int periodic_interrupts_are_counted(void)
{
	CHECK(reopen() >= 0, "open: %s", strerror(errno));
	CHECK(ioctl(fd, RTC_IRQP_SET, 64UL) == 0 && ioctl(fd, RTC_PIE_ON, 0) == 0,
	      "64 Hz on: %s", strerror(errno));
	unsigned long data = 0;
	long long start = mono_ms();
	unsigned long total = 0;
	for (int i = 0; i < 16; i++) {
		CHECK(read(fd, &data, sizeof(data)) == sizeof(data), "read: %s", strerror(errno));
		CHECK((data & 0xff) == (RTC_PF | RTC_IRQF) && data >> 8 >= 1,
		      "read %d gave %#lx", i, data);
		total += data >> 8;
	}
	long long took = mono_ms() - start;
	/* 16 interrupts at 64 Hz: a quarter second, less the first wait. */
	CHECK(took >= 200 && took < 2000, "16 interrupts at 64 Hz took %lld ms", took);
	CHECK(total >= 16 && total <= 16 + took * 64 / 1000 + 2, "%lu interrupts in %lld ms",
	      total, took);
	/* Unread interrupts add up: 150 ms is about 9 of them. */
	usleep(150000);
	CHECK(read(fd, &data, sizeof(data)) == sizeof(data) && data >> 8 >= 5,
	      "after 150 ms unread: %#lx", data);
	unsigned int small = 0;
	CHECK(read(fd, &small, 4) == 4 && (small & 0xff) == (RTC_PF | RTC_IRQF),
	      "a 4-byte read: %#x", small);
	char two[2];
	errno = 0;
	CHECK(read(fd, two, 2) < 0 && errno == EINVAL, "a 2-byte read: %s", strerror(errno));
	CHECK(ioctl(fd, RTC_PIE_OFF, 0) == 0, "RTC_PIE_OFF: %s", strerror(errno));
	/* Any interrupt that came before RTC_PIE_OFF is still there to read. */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	read(fd, &data, sizeof(data));
	errno = 0;
	CHECK(read(fd, &data, sizeof(data)) < 0 && errno == EAGAIN,
	      "O_NONBLOCK with interrupts off: %s", strerror(errno));
	close(fd);
	return 0;
}

static int update_interrupts_and_poll(void)
{
	CHECK(reopen() >= 0, "open: %s", strerror(errno));
	struct pollfd p = { .fd = fd, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0, "poll with nothing on: %d", p.revents);
	CHECK(ioctl(fd, RTC_UIE_ON, 0) == 0, "RTC_UIE_ON: %s", strerror(errno));
	unsigned long data = 0;
	CHECK(read(fd, &data, sizeof(data)) == sizeof(data) &&
		      (data & 0xff) == (RTC_UF | RTC_IRQF) && data >> 8 == 1,
	      "first update: %#lx", data);
	time_t first = rtc_seconds();
	long long start = mono_ms();
	CHECK(read(fd, &data, sizeof(data)) == sizeof(data) && data >> 8 == 1,
	      "second update: %#lx", data);
	long long took = mono_ms() - start;
	time_t second = rtc_seconds();
	CHECK(took > 700 && took < 1500, "a second of updates took %lld ms", took);
	CHECK(second == first + 1, "the RTC went from %ld to %ld", (long)first, (long)second);
	CHECK(ioctl(fd, RTC_UIE_OFF, 0) == 0, "RTC_UIE_OFF: %s", strerror(errno));
	CHECK(ioctl(fd, RTC_IRQP_SET, 32UL) == 0 && ioctl(fd, RTC_PIE_ON, 0) == 0,
	      "32 Hz on: %s", strerror(errno));
	start = mono_ms();
	CHECK(poll(&p, 1, 2000) == 1 && p.revents == POLLIN, "poll: revents %#x", p.revents);
	took = mono_ms() - start;
	CHECK(took < 500, "poll at 32 Hz took %lld ms", took);
	close(fd);
	return 0;
}

static const struct test tests[] = {
	TEST(the_time_is_the_wall_clocks),
	TEST(setting_the_time),
	TEST(periodic_rate_bounds),
	TEST(periodic_interrupts_are_counted),
	TEST(update_interrupts_and_poll),
};

int main(void)
{
	return run_tests("rtc", tests, sizeof(tests) / sizeof(tests[0])) != 0;
}
