// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_perf.c - read() layouts shared by the simulated PMUs. See sim_perf.h.
 */
#include "sim_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

ssize_t sim_read_encode(uint64_t read_format, const struct sim_read_value *values, size_t count,
                        uint64_t enabled_ns, uint64_t running_ns, void *buf, size_t len)
{
        uint64_t words[3 + 2 * SIM_READ_MAX];
        size_t n = 0;

        if (count > SIM_READ_MAX || count == 0)
                return -E2BIG;
        if (read_format & PERF_FORMAT_GROUP)
                words[n++] = count;
        else
                words[n++] = values[0].value;
        if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                words[n++] = enabled_ns;
        if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                words[n++] = running_ns;
        if (read_format & PERF_FORMAT_GROUP) {
                for (size_t i = 0; i < count; i++) {
                        words[n++] = values[i].value;
                        if (read_format & PERF_FORMAT_ID)
                                words[n++] = values[i].id;
                }
        } else if (read_format & PERF_FORMAT_ID) {
                words[n++] = values[0].id;
        }
        if (len < n * sizeof(uint64_t))
                return -ENOSPC;
        memcpy(buf, words, n * sizeof(uint64_t));
        return (ssize_t)(n * sizeof(uint64_t));
}
