/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf_group.h - counting perf events as one group, through the seam.
 *
 * This is the single funnel every counter in pciescope goes through: open a
 * leader and its members with perf_event_open (via env->perf, so the real
 * syscall, a test double or the simulated machine serve it), enable, read
 * with PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, disable,
 * close. The members of a group are scheduled together by the kernel, so
 * ratios between them (flux/time, latency/count) need no scaling; values
 * against wall-clock time do when the PMU was oversubscribed
 * (time_running < time_enabled).
 */
#ifndef PCIESCOPE_PERF_GROUP_H
#define PCIESCOPE_PERF_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_env;
struct perf_event_attr;

#define PERF_GROUP_MAX 16 /* events in one group */

/* One read of a group. Values are the raw counts since open (or the last
 * reset); times are nanoseconds. */
struct perf_group_reading {
        size_t count;
        uint64_t values[PERF_GROUP_MAX];
        uint64_t time_enabled;
        uint64_t time_running;
};

/*
 * perf_read_decode - decode the buffer a read() on a group leader returned
 * with @read_format (PERF_FORMAT_GROUP required; TOTAL_TIME_ENABLED,
 * TOTAL_TIME_RUNNING, ID and LOST honoured). @len is the byte count read.
 * Returns 0, -EINVAL (no GROUP bit), -EBADMSG (buffer shorter than its own
 * `nr` says, or nr != @expected) or -E2BIG (nr > PERF_GROUP_MAX).
 * Absent times read as 0.
 */
int perf_read_decode(const void *buf, size_t len, uint64_t read_format, size_t expected,
                     struct perf_group_reading *out);

/* Bytes a group read needs for @count events with @read_format. */
size_t perf_read_size(uint64_t read_format, size_t count);

/*
 * Difference of two readings of the same group (@now - @before). Returns
 * 0, or -ERANGE when any value or time went backwards (counter reset or a
 * different group), leaving @delta zeroed.
 */
int perf_reading_delta(const struct perf_group_reading *now,
                       const struct perf_group_reading *before, struct perf_group_reading *delta);

/* value * enabled / running: the multiplexing estimate of a count over the
 * enabled time. Returns 0 when running is 0 (the event never ran). */
double perf_scale(uint64_t value, uint64_t time_enabled, uint64_t time_running);

struct perf_group; /* opaque */

/*
 * perf_group_open - open @count events (attrs[0] is the leader) on @cpu for
 * all tasks (pid -1), as a group. The function copies each attr and sets
 * read_format = GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING and
 * disabled = 1 on the leader (members follow the leader), so the group
 * starts stopped. On any failure the events already opened are closed and
 * the negative errno of the failing perf_event_open is returned; *@failed
 * (if not NULL) receives the index of the event that failed.
 * Returns 0, -EINVAL (count 0 or > PERF_GROUP_MAX), -ENOMEM, or the errno.
 */
int perf_group_open(const struct hw_env *env, const struct perf_event_attr *attrs, size_t count,
                    int cpu, struct perf_group **out, size_t *failed);

/* PERF_EVENT_IOC_ENABLE / DISABLE / RESET on the leader with
 * PERF_IOC_FLAG_GROUP. Return 0 or a negative errno. */
int perf_group_enable(struct perf_group *g);
int perf_group_disable(struct perf_group *g);
int perf_group_reset(struct perf_group *g);

/* One read() of the leader, decoded. Returns 0, a negative errno from the
 * read, or -EBADMSG (short read, wrong nr). */
int perf_group_read(struct perf_group *g, struct perf_group_reading *out);

size_t perf_group_count(const struct perf_group *g);
bool perf_group_enabled(const struct perf_group *g);

/* Closes every fd (members first, then the leader) and frees @g; NULL is
 * fine. */
void perf_group_close(struct perf_group *g);

/* What to do about a perf_event_open error, in words for a log line
 * ("permission denied: run collectd as root, or grant CAP_PERFMON ..."). */
const char *perf_open_advice(int err);

#endif /* PCIESCOPE_PERF_GROUP_H */
