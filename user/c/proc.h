/*
 * What the glibc programs in user/c/ read and set: sysfs knobs and the
 * fields of /proc/self/smaps, /proc/meminfo and /proc/vmstat, the way any
 * Linux program reads them (no faultline interface). Header-only, so each
 * program stays one static binary built from one .c file.
 */
#ifndef FAULTLINE_PROC_H
#define FAULTLINE_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THP "/sys/kernel/mm/transparent_hugepage/"

/* The whole of a small file into BUF (NUL-terminated); -1 if unreadable. */
static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Writes VALUE to a sysfs knob; -1 (errno set) if it could not. */
static inline int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	int saved = errno;
	close(fd);
	errno = saved;
	return n < 0 ? -1 : 0;
}

/* The word in [brackets] of a shmem_enabled file, its current value, into
 * OUT; -1 if there is none. */
static inline int knob_value(const char *path, char *out, size_t len)
{
	char buf[256];
	if (read_file(path, buf, sizeof(buf)) != 0)
		return -1;
	char *open_b = strchr(buf, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;
	if (!close_b || (size_t)(close_b - open_b) > len)
		return -1;
	memcpy(out, open_b + 1, close_b - open_b - 1);
	out[close_b - open_b - 1] = 0;
	return 0;
}

/* The number after "KEY:" (or "KEY " for SEP ' ') on a line of FILE whose
 * lines start with KEY; -1 if there is no such line. */
static inline long keyed_value(const char *file, const char *key, char sep)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	char line[256];
	size_t klen = strlen(key);
	long value = -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == sep) {
			value = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return value;
}

/* A /proc/meminfo field, in kB. */
static inline long meminfo_kb(const char *field)
{
	return keyed_value("/proc/meminfo", field, ':');
}

/* A /proc/vmstat counter. */
static inline long vmstat(const char *counter)
{
	return keyed_value("/proc/vmstat", counter, ' ');
}

/* FIELD (in kB) of the mapping starting at ADDR, from /proc/self/smaps;
 * -1 if the mapping or the field is not there. */
static inline long smaps_kb(const void *addr, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512], head[32];
	snprintf(head, sizeof(head), "%08lx-", (unsigned long)addr);
	size_t flen = strlen(field);
	long kb = -1;
	int inside = 0;
	while (fgets(line, sizeof(line), f)) {
		char *dash = strchr(line, '-'), *space = strchr(line, ' ');
		/* A mapping's header line starts with its "start-end" range. */
		if (dash && space && dash < space)
			inside = strncmp(line, head, strlen(head)) == 0;
		else if (inside && strncmp(line, field, flen) == 0 && line[flen] == ':')
			kb = strtol(line + flen + 1, NULL, 10);
	}
	fclose(f);
	return kb;
}

#endif
