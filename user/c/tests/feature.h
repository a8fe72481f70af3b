/*
 * Runs a test of one of faultline's switches for a CPU feature (hw_af,
 * hw_dirty: /sys/kernel/mm/NAME/enabled) with the switch as the boot left
 * it, then off, then on, where the CPU refuses 1 with EINVAL if it lacks
 * the feature, and puts it back. Linux has no such file: there the test
 * runs once, as on a CPU without the feature (make test-linux boots
 * cortex-a72).
 */
#ifndef FAULTLINE_FEATURE_H
#define FAULTLINE_FEATURE_H

#include "../proc.h"
#include "check.h"

/* BODY(on) with KNOB as found, off, and on; SETTLE_US after each write,
 * for switches each CPU follows at its next tick. */
static inline int with_feature_switch(const char *knob, int (*body)(int on), useconds_t settle_us)
{
	char was[8];
	if (read_file(knob, was, sizeof(was)) != 0)
		return body(0);
	if (body(was[0] == '1') != 0)
		return -1;
	CHECK(write_file(knob, "0") == 0, "writing 0 to %s: %s", knob, strerror(errno));
	usleep(settle_us);
	int off = body(0);
	int on;
	if (write_file(knob, "1") == 0) {
		usleep(settle_us);
		on = body(1);
	} else {
		char now[8];
		CHECK(errno == EINVAL, "writing 1 to %s: %s, want EINVAL or success", knob, strerror(errno));
		CHECK(read_file(knob, now, sizeof(now)) == 0 && now[0] == '0', "refused, yet %s reads %s", knob,
		      now);
		on = 0;
	}
	write_file(knob, was[0] == '1' ? "1" : "0");
	usleep(settle_us);
	return off || on ? -1 : 0;
}

#endif
