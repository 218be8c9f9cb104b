/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_perf.h - what every simulated PMU answers alike: the bytes of a
 * read() on a perf event in the layout its read_format asks for.
 */
#ifndef PCIESCOPE_SIM_PERF_H
#define PCIESCOPE_SIM_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One event's count and id, as a read reports them. */
struct sim_read_value {
        uint64_t value;
        uint64_t id;
};

#define SIM_READ_MAX 64 /* events in one group read */

/*
 * sim_read_encode - lay out a read() answer as the kernel does: with
 * PERF_FORMAT_GROUP { nr, [enabled], [running], { value, [id] } * nr } for
 * the @count values (leader first), else { value, [enabled], [running],
 * [id] } for values[0]. Returns the byte count, or -ENOSPC when @len is too
 * short (the kernel's answer), or -E2BIG beyond SIM_READ_MAX values.
 */
ssize_t sim_read_encode(uint64_t read_format, const struct sim_read_value *values, size_t count,
                        uint64_t enabled_ns, uint64_t running_ns, void *buf, size_t len);

#endif /* PCIESCOPE_SIM_PERF_H */
