// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perf_group.c - open, drive and read a perf event group through the
 * hw_env seam, and decode what the kernel's group read() returns.
 *
 * The decoder is pure and strictly bounded: the buffer comes from the kernel
 * (or a test double, or the simulator), and a wrong read_format or a short
 * read must turn into an errno, never into a read past the buffer.
 */
#include "perf_group.h"
#include "hw_env.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/*
 * PERF_FORMAT_LOST (Linux 6.0) is an enumerator, not a macro, so its presence
 * cannot be tested with the preprocessor. Defining the macro after the
 * header is harmless either way: with a new header it shadows the enumerator
 * with the same value, with an old one it supplies the missing bit.
 */
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

/* The read_format bits whose layout we know; any other bit would add
 * fields we cannot place, so it is refused rather than misdecoded. */
#define KNOWN_FORMAT                                                                               \
        (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |     \
         PERF_FORMAT_ID | PERF_FORMAT_LOST)

/* What every group we open reads with. */
#define GROUP_FORMAT                                                                               \
        (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

struct perf_group {
        /* The ops, not the env: the env may be a caller's stack variable. */
        const struct perf_ops *ops;
        size_t count;
        int fds[PERF_GROUP_MAX]; /* fds[0] is the leader */
        bool enabled;
};

/* u64 words per event in a group read: value, [id], [lost]. */
static size_t words_per_event(uint64_t read_format)
{
        return 1 + !!(read_format & PERF_FORMAT_ID) + !!(read_format & PERF_FORMAT_LOST);
}

/* u64 words before the first event: nr, [time_enabled], [time_running]. */
static size_t header_words(uint64_t read_format)
{
        return 1 + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
               !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

/* 0 for what no group read can be (no GROUP bit, unknown bits, more events
 * than a group holds), so a caller never sizes a buffer from nonsense. */
size_t perf_read_size(uint64_t read_format, size_t count)
{
        if (!(read_format & PERF_FORMAT_GROUP) || (read_format & ~(uint64_t)KNOWN_FORMAT) ||
            count > PERF_GROUP_MAX)
                return 0;
        return (header_words(read_format) + count * words_per_event(read_format)) *
               sizeof(uint64_t);
}

/* Takes the next u64 if it lies wholly inside the buffer. *@off <= @len
 * always holds, so the subtraction cannot wrap. The buffer need not be
 * aligned (memcpy). */
static bool take_u64(const unsigned char *p, size_t len, size_t *off, uint64_t *v)
{
        if (len - *off < sizeof(*v))
                return false;
        memcpy(v, p + *off, sizeof(*v));
        *off += sizeof(*v);
        return true;
}

int perf_read_decode(const void *buf, size_t len, uint64_t read_format, size_t expected,
                     struct perf_group_reading *out)
{
        const unsigned char *p = buf;
        struct perf_group_reading r;
        size_t off = 0;
        uint64_t nr, skip;

        /* On any error the caller sees a zeroed reading, not a half one. */
        memset(out, 0, sizeof(*out));
        memset(&r, 0, sizeof(r));
        if (!(read_format & PERF_FORMAT_GROUP) || (read_format & ~(uint64_t)KNOWN_FORMAT))
                return -EINVAL;
        if (!p && len)
                return -EINVAL;
        if (!take_u64(p, len, &off, &nr))
                return -EBADMSG;
        if (nr > PERF_GROUP_MAX)
                return -E2BIG;
        if (nr != expected)
                return -EBADMSG;
        r.count = (size_t)nr;
        if ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
            !take_u64(p, len, &off, &r.time_enabled))
                return -EBADMSG;
        if ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
            !take_u64(p, len, &off, &r.time_running))
                return -EBADMSG;
        for (size_t i = 0; i < r.count; i++) {
                if (!take_u64(p, len, &off, &r.values[i]))
                        return -EBADMSG;
                /* The id and the lost count are laid out but not kept. */
                if ((read_format & PERF_FORMAT_ID) && !take_u64(p, len, &off, &skip))
                        return -EBADMSG;
                if ((read_format & PERF_FORMAT_LOST) && !take_u64(p, len, &off, &skip))
                        return -EBADMSG;
        }
        *out = r;
        return 0;
}

int perf_reading_delta(const struct perf_group_reading *now,
                       const struct perf_group_reading *before, struct perf_group_reading *delta)
{
        struct perf_group_reading d;
        int err = 0;

        /* Built aside and stored last, so @delta may alias an input. */
        memset(&d, 0, sizeof(d));
        if (now->count > PERF_GROUP_MAX || before->count > PERF_GROUP_MAX) {
                /* A count no decode gives: not a reading at all. */
                err = -EINVAL;
        } else if (now->count != before->count || now->time_enabled < before->time_enabled ||
                   now->time_running < before->time_running) {
                /* Time going back, or another number of events: not the
                 * same group, or not the same life of it. */
                err = -ERANGE;
        } else {
                d.count = now->count;
                d.time_enabled = now->time_enabled - before->time_enabled;
                d.time_running = now->time_running - before->time_running;
                for (size_t i = 0; i < d.count && !err; i++) {
                        if (now->values[i] < before->values[i])
                                err = -ERANGE; /* reset between the reads */
                        else
                                d.values[i] = now->values[i] - before->values[i];
                }
        }
        if (err)
                memset(&d, 0, sizeof(d));
        *delta = d;
        return err;
}

double perf_scale(uint64_t value, uint64_t time_enabled, uint64_t time_running)
{
        if (!time_running)
                return 0;
        /* In double: value * enabled overflows u64 within hours at GHz. */
        return (double)value * ((double)time_enabled / (double)time_running);
}

/* Members first, newest first, then the leader: the reverse of opening, so
 * the leader never goes while a member still points at it. */
static void close_fds(const struct perf_ops *ops, const int *fds, size_t n)
{
        while (n--)
                ops->close(ops->ctx, fds[n]);
}

/*
 * *@failed is set to @count up front, one past the last index, meaning "no
 * event failed" for success and for errors that are not a perf_event_open
 * (bad arguments, -ENOMEM); an open failure overwrites it with its index.
 */
int perf_group_open(const struct hw_env *env, const struct perf_event_attr *attrs, size_t count,
                    int cpu, struct perf_group **out, size_t *failed)
{
        const struct perf_ops *ops;
        struct perf_group *g;

        if (failed)
                *failed = count;
        if (out)
                *out = NULL;
        if (!env || !env->perf || !env->perf->open || !attrs || !out || !count ||
            count > PERF_GROUP_MAX)
                return -EINVAL;
        ops = env->perf;
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->ops = ops;

        for (size_t i = 0; i < count; i++) {
                /* A copy: the caller's attrs stay const and reusable. */
                struct perf_event_attr attr = attrs[i];
                int fd;

                attr.read_format = GROUP_FORMAT;
                /* Only the leader starts disabled; members enabled "follow"
                 * it, so enabling the leader starts all at once. */
                attr.disabled = i == 0;
                fd = ops->open(ops->ctx, &attr, -1, cpu, i ? g->fds[0] : -1, PERF_FLAG_FD_CLOEXEC);
                if (fd < 0) {
                        close_fds(ops, g->fds, i);
                        free(g);
                        if (failed)
                                *failed = i;
                        return fd;
                }
                g->fds[i] = fd;
        }
        g->count = count;
        *out = g;
        return 0;
}

/* Whole-group ioctls: PERF_IOC_FLAG_GROUP applies them to every member. */
static int group_ioctl(struct perf_group *g, unsigned long request)
{
        if (!g)
                return -EINVAL;
        return g->ops->ioctl(g->ops->ctx, g->fds[0], request, PERF_IOC_FLAG_GROUP);
}

int perf_group_enable(struct perf_group *g)
{
        int err = group_ioctl(g, PERF_EVENT_IOC_ENABLE);

        if (!err)
                g->enabled = true;
        return err;
}

int perf_group_disable(struct perf_group *g)
{
        int err = group_ioctl(g, PERF_EVENT_IOC_DISABLE);

        if (!err)
                g->enabled = false;
        return err;
}

int perf_group_reset(struct perf_group *g)
{
        return group_ioctl(g, PERF_EVENT_IOC_RESET);
}

int perf_group_read(struct perf_group *g, struct perf_group_reading *out)
{
        uint64_t buf[3 + PERF_GROUP_MAX]; /* nr, two times, one value each */
        size_t size;
        ssize_t n;

        memset(out, 0, sizeof(*out));
        if (!g)
                return -EINVAL;
        size = perf_read_size(GROUP_FORMAT, g->count);
        n = g->ops->read(g->ops->ctx, g->fds[0], buf, size);
        if (n < 0)
                return (int)n;
        /* More than asked for is a broken read op; decoding it would read
         * past @buf. */
        if ((size_t)n > size)
                return -EBADMSG;
        /* Any nr but ours, even one no group can have (-E2BIG from the
         * decoder), is the same fault here: not the group we opened. */
        return perf_read_decode(buf, (size_t)n, GROUP_FORMAT, g->count, out) ? -EBADMSG : 0;
}

size_t perf_group_count(const struct perf_group *g)
{
        return g ? g->count : 0;
}

bool perf_group_enabled(const struct perf_group *g)
{
        return g && g->enabled;
}

void perf_group_close(struct perf_group *g)
{
        if (!g)
                return;
        close_fds(g->ops, g->fds, g->count);
        free(g);
}

const char *perf_open_advice(int err)
{
        switch (err) {
        case -EACCES:
        case -EPERM:
                return "permission denied: run collectd as root, or grant CAP_PERFMON and set "
                       "kernel.perf_event_paranoid to 0 or less";
        case -EBUSY:
                return "the PMU is busy: another tool (perf stat?) holds its counters; retrying "
                       "later";
        case -EMFILE:
        case -ENFILE:
                return "too many open files: raise the file limit (LimitNOFILE= in the collectd "
                       "unit) or count fewer events";
        case -ENOENT:
        case -ENODEV:
                return "the PMU is gone (driver unloaded or device removed)";
        case -EINVAL:
                return "the kernel rejected the event's filters (see the PMU's format/ files)";
        case -EOPNOTSUPP:
                return "the PMU does not support this kind of event";
        default:
                return "perf_event_open failed";
        }
}
