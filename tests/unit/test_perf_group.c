// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_perf_group.c - the perf group funnel without a kernel: the pure
 * group-read decoder (every read_format combination, every truncation, a
 * fuzz loop against an oracle), delta and scaling, and open/enable/read/close
 * through a fake perf_ops that records every call.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw_env.h"
#include "perf_group.h"

/* An enumerator in new headers, absent in old ones (see perf_group.c). */
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define F_GROUP   ((uint64_t)PERF_FORMAT_GROUP)
#define F_ENABLED ((uint64_t)PERF_FORMAT_TOTAL_TIME_ENABLED)
#define F_RUNNING ((uint64_t)PERF_FORMAT_TOTAL_TIME_RUNNING)
#define F_ID      ((uint64_t)PERF_FORMAT_ID)
#define F_LOST    ((uint64_t)PERF_FORMAT_LOST)
#define F_ALL     (F_GROUP | F_ENABLED | F_RUNNING | F_ID | F_LOST)
/* What perf_group_open gives every event. */
#define F_OPEN (F_GROUP | F_ENABLED | F_RUNNING)

/* The 16 read_formats with the GROUP bit: GROUP | (mask of the other four). */
static uint64_t group_format(unsigned mask)
{
        static const uint64_t bits[] = {F_ENABLED, F_RUNNING, F_ID, F_LOST};
        uint64_t f = F_GROUP;

        for (size_t b = 0; b < ARRAY_SIZE(bits); b++)
                if (mask & (1u << b))
                        f |= bits[b];
        return f;
}

/* ---- building group reads the way the kernel lays them out ---- */

struct sample {
        uint64_t nr, time_enabled, time_running;
        uint64_t value[PERF_GROUP_MAX], id[PERF_GROUP_MAX], lost[PERF_GROUP_MAX];
};

static void sample_fill(struct sample *s, uint64_t nr, uint64_t seed)
{
        memset(s, 0, sizeof(*s));
        s->nr = nr;
        s->time_enabled = 1000000000ull + seed;
        s->time_running = 500000000ull + seed;
        for (size_t i = 0; i < PERF_GROUP_MAX; i++) {
                s->value[i] = 0x1000000000ull * (i + 1) + seed;
                s->id[i] = 0xdd00 + i;
                s->lost[i] = 0xee00 + i;
        }
}

/* nr, [time_enabled], [time_running], then per event value, [id], [lost].
 * Writes at most @cap words (events beyond PERF_GROUP_MAX repeat the last
 * one); returns the words the layout needs. */
static size_t build(uint64_t *w, size_t cap, const struct sample *s, uint64_t fmt)
{
        size_t n = 0;

#define PUT(v)                                                                                     \
        do {                                                                                       \
                if (n < cap)                                                                       \
                        w[n] = (v);                                                                \
                n++;                                                                               \
        } while (0)
        PUT(s->nr);
        if (fmt & F_ENABLED)
                PUT(s->time_enabled);
        if (fmt & F_RUNNING)
                PUT(s->time_running);
        for (uint64_t i = 0; i < s->nr; i++) {
                size_t k = i < PERF_GROUP_MAX ? (size_t)i : PERF_GROUP_MAX - 1;

                PUT(s->value[k]);
                if (fmt & F_ID)
                        PUT(s->id[k]);
                if (fmt & F_LOST)
                        PUT(s->lost[k]);
        }
#undef PUT
        return n;
}

/*
 * @len bytes copied to the very end of a readable page, with a PROT_NONE
 * page right after: a decoder that reads one byte too far faults here
 * instead of passing by luck.
 */
struct guarded {
        unsigned char *map;
        size_t page;
        unsigned char *data;
};

static void guard_init(struct guarded *g)
{
        g->page = (size_t)sysconf(_SC_PAGESIZE);
        g->map =
            mmap(NULL, 2 * g->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(g->map != MAP_FAILED);
        assert_int_equal(mprotect(g->map + g->page, g->page, PROT_NONE), 0);
}

static const void *guard_put(struct guarded *g, const void *src, size_t len)
{
        assert_true(len <= g->page);
        g->data = g->map + g->page - len;
        memcpy(g->data, src, len);
        return g->data;
}

static void guard_free(struct guarded *g)
{
        munmap(g->map, 2 * g->page);
}

static bool reading_is_zero(const struct perf_group_reading *r)
{
        static const struct perf_group_reading zero;

        return memcmp(r, &zero, sizeof(zero)) == 0;
}

static void check_reading(const struct perf_group_reading *r, const struct sample *s, uint64_t fmt)
{
        assert_int_equal(r->count, s->nr);
        assert_true(r->time_enabled == ((fmt & F_ENABLED) ? s->time_enabled : 0));
        assert_true(r->time_running == ((fmt & F_RUNNING) ? s->time_running : 0));
        for (size_t i = 0; i < r->count; i++)
                assert_true(r->values[i] == s->value[i]);
        for (size_t i = r->count; i < PERF_GROUP_MAX; i++)
                assert_true(r->values[i] == 0);
}

/* ---- perf_read_size ---- */

static void test_read_size(void **state)
{
        (void)state;
        for (unsigned mask = 0; mask < 16; mask++) {
                uint64_t fmt = group_format(mask);
                size_t head = 1 + !!(fmt & F_ENABLED) + !!(fmt & F_RUNNING);
                size_t per = 1 + !!(fmt & F_ID) + !!(fmt & F_LOST);

                for (size_t n = 0; n <= PERF_GROUP_MAX; n++)
                        assert_int_equal(perf_read_size(fmt, n), 8 * (head + n * per));
                assert_int_equal(perf_read_size(fmt, PERF_GROUP_MAX + 1), 0);
                assert_int_equal(perf_read_size(fmt, SIZE_MAX), 0);
                /* Without the GROUP bit there is no group read. */
                assert_int_equal(perf_read_size(fmt & ~F_GROUP, 2), 0);
                /* A bit whose layout is unknown: no size either. */
                assert_int_equal(perf_read_size(fmt | (1ull << 5), 2), 0);
                assert_int_equal(perf_read_size(fmt | (1ull << 63), 2), 0);
        }
        /* What perf_group_open reads with: nr, two times, one value each. */
        assert_int_equal(perf_read_size(F_OPEN, 2), 40);
        assert_int_equal(perf_read_size(F_ALL, 3), 24 + 3 * 24);
}

/* ---- perf_read_decode ---- */

static void test_decode_all_formats(void **state)
{
        static const uint64_t counts[] = {0, 1, 2, 3, 7, PERF_GROUP_MAX};
        uint64_t words[3 + 3 * PERF_GROUP_MAX + 4];
        struct perf_group_reading r;
        struct guarded g;

        (void)state;
        guard_init(&g);
        for (unsigned mask = 0; mask < 16; mask++) {
                uint64_t fmt = group_format(mask);

                for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
                        struct sample s;
                        size_t n, len;

                        sample_fill(&s, counts[c], mask);
                        n = build(words, ARRAY_SIZE(words), &s, fmt);
                        len = n * 8;
                        assert_int_equal(len, perf_read_size(fmt, counts[c]));
                        memset(&r, 0xa5, sizeof(r));
                        assert_int_equal(
                            perf_read_decode(guard_put(&g, words, len), len, fmt, counts[c], &r),
                            0);
                        check_reading(&r, &s, fmt);

                        /* Bytes after the group (a larger read) are ignored. */
                        words[n] = 0xbadbadbadull;
                        memset(&r, 0xa5, sizeof(r));
                        assert_int_equal(perf_read_decode(guard_put(&g, words, len + 8), len + 8,
                                                          fmt, counts[c], &r),
                                         0);
                        check_reading(&r, &s, fmt);

                        /* An unaligned buffer decodes the same. */
                        memset(&r, 0xa5, sizeof(r));
                        {
                                unsigned char odd[sizeof(words) + 1];

                                memcpy(odd + 1, words, len);
                                assert_int_equal(perf_read_decode(odd + 1, len, fmt, counts[c], &r),
                                                 0);
                        }
                        check_reading(&r, &s, fmt);
                }
        }
        guard_free(&g);
}

/* The layout spelled out word by word, as Documentation and the kernel's
 * perf_read_group() write it: the id and lost follow each value. */
static void test_decode_kernel_layout(void **state)
{
        static const uint64_t all[] = {
            2,      /* nr */
            900,    /* time_enabled */
            800,    /* time_running */
            111,    /* value 0 */
            0x1001, /* id 0 */
            5,      /* lost 0 */
            222,    /* value 1 */
            0x1002, /* id 1 */
            6,      /* lost 1 */
        };
        static const uint64_t running_id[] = {2, 800, 111, 0x1001, 222, 0x1002};
        static const uint64_t lost_only[] = {2, 111, 5, 222, 6};
        struct perf_group_reading r;

        (void)state;
        assert_int_equal(perf_read_decode(all, sizeof(all), F_ALL, 2, &r), 0);
        assert_int_equal(r.count, 2);
        assert_true(r.time_enabled == 900 && r.time_running == 800);
        assert_true(r.values[0] == 111 && r.values[1] == 222);

        assert_int_equal(
            perf_read_decode(running_id, sizeof(running_id), F_GROUP | F_RUNNING | F_ID, 2, &r), 0);
        assert_true(r.time_enabled == 0 && r.time_running == 800);
        assert_true(r.values[0] == 111 && r.values[1] == 222);

        assert_int_equal(perf_read_decode(lost_only, sizeof(lost_only), F_GROUP | F_LOST, 2, &r),
                         0);
        assert_true(r.time_enabled == 0 && r.time_running == 0);
        assert_true(r.values[0] == 111 && r.values[1] == 222);
}

/* Every length short of the full group is -EBADMSG, and never a read past
 * the buffer (the guard page would fault). */
static void test_decode_truncated(void **state)
{
        uint64_t words[3 + 3 * PERF_GROUP_MAX];
        struct perf_group_reading r;
        struct guarded g;

        (void)state;
        guard_init(&g);
        for (unsigned mask = 0; mask < 16; mask++) {
                uint64_t fmt = group_format(mask);

                for (uint64_t nr = 0; nr <= 4; nr++) {
                        struct sample s;
                        size_t full;

                        sample_fill(&s, nr, 0);
                        full = build(words, ARRAY_SIZE(words), &s, fmt) * 8;
                        for (size_t len = 0; len < full; len++) {
                                memset(&r, 0xa5, sizeof(r));
                                assert_int_equal(
                                    perf_read_decode(guard_put(&g, words, len), len, fmt, nr, &r),
                                    -EBADMSG);
                                assert_true(reading_is_zero(&r));
                        }
                        assert_int_equal(
                            perf_read_decode(guard_put(&g, words, full), full, fmt, nr, &r), 0);
                }
        }
        /* Nothing at all, even with a NULL buffer. */
        assert_int_equal(perf_read_decode(NULL, 0, F_OPEN, 1, &r), -EBADMSG);
        guard_free(&g);
}

static void test_decode_nr(void **state)
{
        uint64_t words[3 + 3 * PERF_GROUP_MAX];
        struct perf_group_reading r;
        struct sample s;
        size_t len;

        (void)state;
        sample_fill(&s, 3, 0);
        len = build(words, ARRAY_SIZE(words), &s, F_ALL) * 8;
        /* The buffer is fine, but not the group we asked about. */
        for (size_t expected = 0; expected <= PERF_GROUP_MAX + 1; expected++) {
                if (expected == 3)
                        continue;
                memset(&r, 0xa5, sizeof(r));
                assert_int_equal(perf_read_decode(words, len, F_ALL, expected, &r), -EBADMSG);
                assert_true(reading_is_zero(&r));
        }

        /* More events than a group holds: -E2BIG, whatever was expected and
         * before the length is looked at (the buffer is far too short). */
        for (uint64_t nr = PERF_GROUP_MAX + 1; nr < PERF_GROUP_MAX + 4; nr++) {
                words[0] = nr;
                assert_int_equal(perf_read_decode(words, len, F_ALL, 3, &r), -E2BIG);
                assert_int_equal(perf_read_decode(words, len, F_ALL, (size_t)nr, &r), -E2BIG);
                assert_int_equal(perf_read_decode(words, 8, F_OPEN, (size_t)nr, &r), -E2BIG);
        }
        words[0] = UINT64_MAX;
        assert_int_equal(perf_read_decode(words, 8, F_OPEN, 2, &r), -E2BIG);
        words[0] = 1ull << 32; /* would truncate to 0 in a 32-bit size_t */
        assert_int_equal(perf_read_decode(words, 8, F_OPEN, 0, &r), -E2BIG);

        /* PERF_GROUP_MAX itself is fine. */
        sample_fill(&s, PERF_GROUP_MAX, 0);
        len = build(words, ARRAY_SIZE(words), &s, F_OPEN) * 8;
        assert_int_equal(perf_read_decode(words, len, F_OPEN, PERF_GROUP_MAX, &r), 0);
        check_reading(&r, &s, F_OPEN);
}

static void test_decode_bad_format(void **state)
{
        static const uint64_t words[] = {1, 10, 10, 42, 7, 0, 0, 0};
        struct perf_group_reading r;

        (void)state;
        /* No GROUP bit: a single event's layout, not ours. */
        for (unsigned mask = 0; mask < 16; mask++) {
                memset(&r, 0xa5, sizeof(r));
                assert_int_equal(
                    perf_read_decode(words, sizeof(words), group_format(mask) & ~F_GROUP, 1, &r),
                    -EINVAL);
                assert_true(reading_is_zero(&r));
        }
        /* Bits beyond LOST would add fields we cannot place. */
        for (unsigned bit = 5; bit < 64; bit++)
                assert_int_equal(
                    perf_read_decode(words, sizeof(words), F_OPEN | (1ull << bit), 1, &r), -EINVAL);
}

/* A small xorshift: deterministic, so a failure replays. */
static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/*
 * Random bytes, lengths, formats and expectations, checked against an
 * oracle built from the layout rules: success exactly when the format is
 * known, nr <= PERF_GROUP_MAX, nr == expected and the buffer is long enough;
 * then every field comes from its offset.
 */
static void test_decode_fuzz(void **state)
{
        uint64_t seed = 0x9e3779b97f4a7c15ull;
        unsigned char bytes[8 * (3 + 3 * PERF_GROUP_MAX) + 16];
        unsigned ok = 0, einval = 0, ebadmsg = 0, e2big = 0;
        struct guarded g;

        (void)state;
        guard_init(&g);
        for (int iter = 0; iter < 50000; iter++) {
                struct perf_group_reading r, again;
                uint64_t fmt, nr, x;
                size_t len, expected, need, off;
                const void *buf;
                int rc, want;

                for (size_t i = 0; i < sizeof(bytes); i += 8) {
                        x = rnd(&seed);
                        memcpy(bytes + i, &x, 8);
                }
                /* Mostly plausible nr and formats, sometimes anything. */
                x = rnd(&seed);
                nr = (x & 3) ? x % (PERF_GROUP_MAX + 3) : rnd(&seed);
                memcpy(bytes, &nr, 8);
                x = rnd(&seed);
                fmt = (x & 7) ? group_format((unsigned)(x >> 3) & 15) : (x >> 8) & 0x7f;
                x = rnd(&seed);
                expected = (x & 3) ? (size_t)nr : (size_t)(x >> 2) % (PERF_GROUP_MAX + 3);
                len = (size_t)(rnd(&seed) % (sizeof(bytes) + 1));

                buf = guard_put(&g, bytes, len);
                memset(&r, 0xa5, sizeof(r));
                rc = perf_read_decode(buf, len, fmt, expected, &r);

                need = perf_read_size(fmt, nr <= PERF_GROUP_MAX ? (size_t)nr : 0);
                if (!(fmt & F_GROUP) || (fmt & ~F_ALL))
                        want = -EINVAL;
                else if (len < 8)
                        want = -EBADMSG;
                else if (nr > PERF_GROUP_MAX)
                        want = -E2BIG;
                else if (nr != expected || len < need)
                        want = -EBADMSG;
                else
                        want = 0;
                if (rc != want)
                        print_message("# iter %d: fmt %#llx nr %llu expected %zu len %zu: %d, "
                                      "oracle %d\n",
                                      iter, (unsigned long long)fmt, (unsigned long long)nr,
                                      expected, len, rc, want);
                assert_int_equal(rc, want);

                if (rc) {
                        assert_true(reading_is_zero(&r));
                } else {
                        uint64_t v;

                        assert_int_equal(r.count, nr);
                        off = 8;
                        if (fmt & F_ENABLED) {
                                memcpy(&v, bytes + off, 8);
                                assert_true(r.time_enabled == v);
                                off += 8;
                        } else {
                                assert_true(r.time_enabled == 0);
                        }
                        if (fmt & F_RUNNING) {
                                memcpy(&v, bytes + off, 8);
                                assert_true(r.time_running == v);
                                off += 8;
                        } else {
                                assert_true(r.time_running == 0);
                        }
                        for (size_t i = 0; i < r.count; i++) {
                                memcpy(&v, bytes + off, 8);
                                assert_true(r.values[i] == v);
                                off += 8 * (1 + !!(fmt & F_ID) + !!(fmt & F_LOST));
                        }
                        assert_int_equal(off, need);
                        for (size_t i = r.count; i < PERF_GROUP_MAX; i++)
                                assert_true(r.values[i] == 0);
                }
                /* Pure: the same input gives the same answer. */
                memset(&again, 0x5a, sizeof(again));
                assert_int_equal(perf_read_decode(buf, len, fmt, expected, &again), rc);
                assert_memory_equal(&r, &again, sizeof(r));

                ok += rc == 0;
                einval += rc == -EINVAL;
                ebadmsg += rc == -EBADMSG;
                e2big += rc == -E2BIG;
        }
        guard_free(&g);
        /* The generator reaches every outcome, or the loop proves little. */
        print_message("# fuzz: %u ok, %u EINVAL, %u EBADMSG, %u E2BIG\n", ok, einval, ebadmsg,
                      e2big);
        assert_true(ok > 1000 && einval > 1000 && ebadmsg > 1000 && e2big > 1000);
}

/* ---- perf_reading_delta, perf_scale ---- */

static struct perf_group_reading reading(size_t count, uint64_t te, uint64_t tr, uint64_t base)
{
        struct perf_group_reading r;

        memset(&r, 0, sizeof(r));
        r.count = count;
        r.time_enabled = te;
        r.time_running = tr;
        for (size_t i = 0; i < count; i++)
                r.values[i] = base * (i + 1);
        return r;
}

static void test_delta(void **state)
{
        struct perf_group_reading before = reading(3, 1000, 900, 100);
        struct perf_group_reading now = reading(3, 3000, 2500, 250);
        struct perf_group_reading d, copy;

        (void)state;
        memset(&d, 0xa5, sizeof(d));
        assert_int_equal(perf_reading_delta(&now, &before, &d), 0);
        assert_int_equal(d.count, 3);
        assert_true(d.time_enabled == 2000 && d.time_running == 1600);
        assert_true(d.values[0] == 150 && d.values[1] == 300 && d.values[2] == 450);
        for (size_t i = 3; i < PERF_GROUP_MAX; i++)
                assert_true(d.values[i] == 0);

        /* The same reading twice: all zero but the count. */
        assert_int_equal(perf_reading_delta(&now, &now, &d), 0);
        assert_int_equal(d.count, 3);
        assert_true(d.time_enabled == 0 && d.values[2] == 0);

        /* The result may overwrite either input. */
        copy = now;
        assert_int_equal(perf_reading_delta(&copy, &before, &copy), 0);
        assert_true(copy.values[1] == 300 && copy.time_enabled == 2000);
        copy = before;
        assert_int_equal(perf_reading_delta(&now, &copy, &copy), 0);
        assert_true(copy.values[2] == 450 && copy.time_running == 1600);

        /* Full 64-bit range. */
        before = reading(1, 0, 0, 0);
        now = reading(1, UINT64_MAX, UINT64_MAX, UINT64_MAX);
        assert_int_equal(perf_reading_delta(&now, &before, &d), 0);
        assert_true(d.values[0] == UINT64_MAX && d.time_enabled == UINT64_MAX);
}

static void test_delta_backwards(void **state)
{
        struct perf_group_reading before = reading(3, 1000, 900, 100);
        struct perf_group_reading now, d;

        (void)state;
        /* Each of the values going back: a reset between the reads. */
        for (size_t i = 0; i < 3; i++) {
                now = reading(3, 2000, 1800, 200);
                now.values[i] = before.values[i] - 1;
                memset(&d, 0xa5, sizeof(d));
                assert_int_equal(perf_reading_delta(&now, &before, &d), -ERANGE);
                assert_true(reading_is_zero(&d));
        }
        /* Times going back: a different group. */
        now = reading(3, 999, 900, 200);
        memset(&d, 0xa5, sizeof(d));
        assert_int_equal(perf_reading_delta(&now, &before, &d), -ERANGE);
        assert_true(reading_is_zero(&d));
        now = reading(3, 2000, 899, 200);
        assert_int_equal(perf_reading_delta(&now, &before, &d), -ERANGE);
        assert_true(reading_is_zero(&d));
        /* A different number of events: a different group. */
        now = reading(2, 2000, 1800, 200);
        assert_int_equal(perf_reading_delta(&now, &before, &d), -ERANGE);
        assert_true(reading_is_zero(&d));
        /* Values beyond count do not matter. */
        now = reading(3, 2000, 1800, 200);
        before.values[5] = 99;
        assert_int_equal(perf_reading_delta(&now, &before, &d), 0);
        assert_true(d.values[5] == 0);
        /* A count no decode gives is refused, not walked past the array. */
        now.count = before.count = PERF_GROUP_MAX + 1;
        memset(&d, 0xa5, sizeof(d));
        assert_int_equal(perf_reading_delta(&now, &before, &d), -EINVAL);
        assert_true(reading_is_zero(&d));
}

static void test_scale(void **state)
{
        (void)state;
        /* Never ran: 0, not a division by zero. */
        assert_true(perf_scale(12345, 1000, 0) == 0.0);
        assert_true(perf_scale(0, 0, 0) == 0.0);
        assert_true(perf_scale(UINT64_MAX, UINT64_MAX, 0) == 0.0);
        /* Ran the whole time: the value itself. */
        assert_true(perf_scale(12345, 1000, 1000) == 12345.0);
        assert_true(perf_scale(0, 1000, 1000) == 0.0);
        /* Ran half the time: twice the count. */
        assert_true(perf_scale(500, 2000, 1000) == 1000.0);
        assert_true(perf_scale(3, 4, 3) == 4.0);
        /* Large values whose product overflows 64 bits. */
        assert_true(perf_scale(1ull << 60, 1ull << 40, 1ull << 38) == (double)(1ull << 62));
        {
                double v = perf_scale(UINT64_MAX, 3000000000000ull, 1000000000000ull);

                assert_true(v > 5.5e19 && v < 5.6e19);
        }
}

/* ---- a fake perf_ops ---- */

enum op { OP_OPEN, OP_READ, OP_IOCTL, OP_CLOSE };

struct call {
        enum op op;
        int fd; /* returned by open; the fd acted on otherwise */
        struct perf_event_attr attr;
        pid_t pid;
        int cpu, group_fd;
        unsigned long flags, request, arg;
        size_t len;
};

struct fake {
        struct call calls[64];
        size_t ncalls;
        int next_fd;
        size_t opens;
        size_t fail_open_at; /* index of the open that fails; SIZE_MAX: none */
        int open_err;
        int ioctl_err;
        /* What read() delivers: @read_data bytes, returning @read_ret. */
        unsigned char read_data[512];
        size_t read_avail;
        ssize_t read_ret;
};

static struct call *record(struct fake *f, enum op op)
{
        struct call *c;

        assert_true(f->ncalls < ARRAY_SIZE(f->calls));
        c = &f->calls[f->ncalls++];
        memset(c, 0, sizeof(*c));
        c->op = op;
        return c;
}

static int fake_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
        struct fake *f = ctx;
        struct call *c = record(f, OP_OPEN);

        c->attr = *attr;
        c->pid = pid;
        c->cpu = cpu;
        c->group_fd = group_fd;
        c->flags = flags;
        if (f->opens++ == f->fail_open_at) {
                c->fd = f->open_err;
                return f->open_err;
        }
        c->fd = f->next_fd++;
        return c->fd;
}

static ssize_t fake_read(void *ctx, int fd, void *buf, size_t len)
{
        struct fake *f = ctx;
        struct call *c = record(f, OP_READ);

        c->fd = fd;
        c->len = len;
        memcpy(buf, f->read_data, f->read_avail < len ? f->read_avail : len);
        return f->read_ret;
}

static int fake_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        struct fake *f = ctx;
        struct call *c = record(f, OP_IOCTL);

        c->fd = fd;
        c->request = request;
        c->arg = arg;
        return f->ioctl_err;
}

static int fake_close(void *ctx, int fd)
{
        struct fake *f = ctx;

        record(f, OP_CLOSE)->fd = fd;
        return 0;
}

static int fake_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        fail_msg("perf_group does not mmap");
        return -ENOSYS;
}

static int fake_munmap(void *ctx, void *addr, size_t len)
{
        fail_msg("perf_group does not munmap");
        return -ENOSYS;
}

struct rig {
        struct fake fake;
        struct perf_ops ops;
        struct hw_env env;
        struct perf_event_attr attrs[PERF_GROUP_MAX + 1];
};

static int rig_setup(void **state)
{
        struct rig *r = calloc(1, sizeof(*r));

        if (!r)
                return -1;
        r->fake.next_fd = 100;
        r->fake.fail_open_at = SIZE_MAX;
        r->ops = (struct perf_ops){.open = fake_open,
                                   .read = fake_read,
                                   .ioctl = fake_ioctl,
                                   .mmap = fake_mmap,
                                   .munmap = fake_munmap,
                                   .close = fake_close,
                                   .ctx = &r->fake};
        r->env.perf = &r->ops;
        for (size_t i = 0; i < ARRAY_SIZE(r->attrs); i++) {
                struct perf_event_attr *a = &r->attrs[i];

                a->type = PERF_TYPE_RAW;
                a->size = sizeof(*a);
                a->config = 0xc0de00 + i;
                /* Whatever the caller set is overridden. */
                a->read_format = PERF_FORMAT_ID;
                a->disabled = i % 2;
        }
        *state = r;
        return 0;
}

static int rig_teardown(void **state)
{
        free(*state);
        return 0;
}

/* Opens @n events on @cpu; asserts success. */
static struct perf_group *rig_open(struct rig *r, size_t n, int cpu)
{
        struct perf_group *g = NULL;
        size_t failed = 12345;

        assert_int_equal(perf_group_open(&r->env, r->attrs, n, cpu, &g, &failed), 0);
        assert_non_null(g);
        assert_int_equal(failed, n);
        return g;
}

static void test_open_attrs(void **state)
{
        struct rig *r = *state;
        struct perf_event_attr saved[4];
        struct perf_group *g;

        memcpy(saved, r->attrs, sizeof(saved));
        g = rig_open(r, 4, 5);
        assert_int_equal(perf_group_count(g), 4);
        assert_false(perf_group_enabled(g));
        assert_int_equal(r->fake.ncalls, 4);
        for (size_t i = 0; i < 4; i++) {
                const struct call *c = &r->fake.calls[i];

                assert_int_equal(c->op, OP_OPEN);
                assert_true(c->attr.read_format == F_OPEN);
                /* The group starts stopped; members follow the leader. */
                assert_int_equal(c->attr.disabled, i == 0);
                /* Everything else is the caller's. */
                assert_true(c->attr.config == 0xc0de00 + i);
                assert_int_equal(c->attr.type, PERF_TYPE_RAW);
                assert_int_equal(c->attr.size, sizeof(c->attr));
                assert_int_equal(c->pid, -1);
                assert_int_equal(c->cpu, 5);
                assert_int_equal(c->group_fd, i == 0 ? -1 : 100);
                assert_int_equal(c->flags, PERF_FLAG_FD_CLOEXEC);
        }
        /* The caller's attrs are copied, not written. */
        assert_memory_equal(saved, r->attrs, sizeof(saved));
        perf_group_close(g);

        /* A lone leader, and the largest group. */
        r->fake.ncalls = 0;
        g = rig_open(r, 1, 0);
        assert_int_equal(r->fake.calls[0].group_fd, -1);
        assert_int_equal(r->fake.calls[0].attr.disabled, 1);
        perf_group_close(g);
        r->fake.ncalls = 0;
        g = rig_open(r, PERF_GROUP_MAX, 3);
        assert_int_equal(perf_group_count(g), PERF_GROUP_MAX);
        assert_int_equal(r->fake.ncalls, PERF_GROUP_MAX);
        /* Every member points at the leader. */
        for (size_t i = 1; i < PERF_GROUP_MAX; i++)
                assert_int_equal(r->fake.calls[i].group_fd, r->fake.calls[0].fd);
        perf_group_close(g);
}

/* Open fails at event k: the k opened before are closed, members newest
 * first and the leader last, and nothing else is called. */
static void test_open_fails_at_k(void **state)
{
        struct rig *r = *state;

        for (size_t k = 0; k < 5; k++) {
                struct perf_group *g = NULL;
                size_t failed = 999;
                int fds[5];

                r->fake.ncalls = 0;
                r->fake.opens = 0;
                r->fake.fail_open_at = k;
                r->fake.open_err = -EMFILE;
                assert_int_equal(perf_group_open(&r->env, r->attrs, 5, 2, &g, &failed), -EMFILE);
                assert_null(g);
                assert_int_equal(failed, k);
                assert_int_equal(r->fake.ncalls, (k + 1) + k);
                for (size_t i = 0; i <= k; i++) {
                        assert_int_equal(r->fake.calls[i].op, OP_OPEN);
                        fds[i] = r->fake.calls[i].fd;
                }
                assert_int_equal(fds[k], -EMFILE);
                for (size_t j = 0; j < k; j++) {
                        const struct call *c = &r->fake.calls[k + 1 + j];

                        assert_int_equal(c->op, OP_CLOSE);
                        assert_int_equal(c->fd, fds[k - 1 - j]);
                }
        }
        /* The errno is passed on as given; failed may be NULL. */
        r->fake.opens = 0;
        r->fake.fail_open_at = 1;
        r->fake.open_err = -ENOENT;
        {
                struct perf_group *g = NULL;

                assert_int_equal(perf_group_open(&r->env, r->attrs, 2, 0, &g, NULL), -ENOENT);
                assert_null(g);
        }
}

static void test_open_args(void **state)
{
        struct rig *r = *state;
        struct perf_group *g = NULL;
        struct hw_env no_perf = {0};
        size_t failed = 999;

        assert_int_equal(perf_group_open(&r->env, r->attrs, 0, 0, &g, &failed), -EINVAL);
        assert_int_equal(failed, 0);
        assert_int_equal(perf_group_open(&r->env, r->attrs, PERF_GROUP_MAX + 1, 0, &g, &failed),
                         -EINVAL);
        assert_int_equal(failed, PERF_GROUP_MAX + 1);
        assert_int_equal(perf_group_open(NULL, r->attrs, 2, 0, &g, NULL), -EINVAL);
        assert_int_equal(perf_group_open(&no_perf, r->attrs, 2, 0, &g, NULL), -EINVAL);
        assert_int_equal(perf_group_open(&r->env, NULL, 2, 0, &g, NULL), -EINVAL);
        assert_int_equal(perf_group_open(&r->env, r->attrs, 2, 0, NULL, NULL), -EINVAL);
        assert_null(g);
        /* Nothing reached the ops. */
        assert_int_equal(r->fake.ncalls, 0);
}

static void test_ioctls(void **state)
{
        static const struct {
                int (*fn)(struct perf_group *);
                unsigned long request;
                bool enabled_after;
        } rows[] = {
            {perf_group_enable, PERF_EVENT_IOC_ENABLE, true},
            {perf_group_reset, PERF_EVENT_IOC_RESET, true},
            {perf_group_disable, PERF_EVENT_IOC_DISABLE, false},
            {perf_group_reset, PERF_EVENT_IOC_RESET, false},
            {perf_group_enable, PERF_EVENT_IOC_ENABLE, true},
        };
        struct rig *r = *state;
        struct perf_group *g = rig_open(r, 3, 1);
        int leader = r->fake.calls[0].fd;

        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                const struct call *c;

                r->fake.ncalls = 0;
                assert_int_equal(rows[i].fn(g), 0);
                assert_int_equal(r->fake.ncalls, 1);
                c = &r->fake.calls[0];
                assert_int_equal(c->op, OP_IOCTL);
                assert_int_equal(c->fd, leader);
                assert_int_equal(c->request, rows[i].request);
                assert_int_equal(c->arg, PERF_IOC_FLAG_GROUP);
                assert_int_equal(perf_group_enabled(g), rows[i].enabled_after);
        }

        /* A failing ioctl is passed on and the state stays as it was. */
        r->fake.ioctl_err = -ENODEV;
        assert_int_equal(perf_group_disable(g), -ENODEV);
        assert_true(perf_group_enabled(g));
        assert_int_equal(perf_group_reset(g), -ENODEV);
        r->fake.ioctl_err = 0;
        assert_int_equal(perf_group_disable(g), 0);
        r->fake.ioctl_err = -EBADF;
        assert_int_equal(perf_group_enable(g), -EBADF);
        assert_false(perf_group_enabled(g));

        assert_int_equal(perf_group_enable(NULL), -EINVAL);
        assert_int_equal(perf_group_disable(NULL), -EINVAL);
        assert_int_equal(perf_group_reset(NULL), -EINVAL);
        perf_group_close(g);
}

/* The fake read delivers this group read of three events. */
static size_t put_read(struct fake *f, uint64_t nr)
{
        const uint64_t words[] = {nr, 5000, 4000, 11, 22, 33};

        memcpy(f->read_data, words, sizeof(words));
        f->read_avail = sizeof(words);
        f->read_ret = sizeof(words);
        return sizeof(words);
}

static void test_read(void **state)
{
        struct rig *r = *state;
        struct perf_group *g = rig_open(r, 3, 0);
        struct perf_group_reading rd;
        size_t full;

        full = put_read(&r->fake, 3);
        r->fake.ncalls = 0;
        memset(&rd, 0xa5, sizeof(rd));
        assert_int_equal(perf_group_read(g, &rd), 0);
        assert_int_equal(r->fake.ncalls, 1);
        assert_int_equal(r->fake.calls[0].op, OP_READ);
        assert_int_equal(r->fake.calls[0].fd, 100);
        assert_int_equal(r->fake.calls[0].len, perf_read_size(F_OPEN, 3));
        assert_int_equal(r->fake.calls[0].len, full);
        assert_int_equal(rd.count, 3);
        assert_true(rd.time_enabled == 5000 && rd.time_running == 4000);
        assert_true(rd.values[0] == 11 && rd.values[1] == 22 && rd.values[2] == 33);

        /* Every short read. */
        for (size_t n = 0; n < full; n++) {
                r->fake.read_ret = (ssize_t)n;
                memset(&rd, 0xa5, sizeof(rd));
                assert_int_equal(perf_group_read(g, &rd), -EBADMSG);
                assert_true(reading_is_zero(&rd));
        }
        /* A read op claiming more than it was given room for. */
        r->fake.read_ret = (ssize_t)full + 8;
        assert_int_equal(perf_group_read(g, &rd), -EBADMSG);
        assert_true(reading_is_zero(&rd));
        /* The kernel's errno. */
        r->fake.read_ret = -EIO;
        memset(&rd, 0xa5, sizeof(rd));
        assert_int_equal(perf_group_read(g, &rd), -EIO);
        assert_true(reading_is_zero(&rd));
        /* Not our group: a wrong nr is -EBADMSG, even one too large for
         * any group (the decoder's -E2BIG). */
        put_read(&r->fake, 2);
        assert_int_equal(perf_group_read(g, &rd), -EBADMSG);
        put_read(&r->fake, 4);
        assert_int_equal(perf_group_read(g, &rd), -EBADMSG);
        put_read(&r->fake, 17);
        assert_int_equal(perf_group_read(g, &rd), -EBADMSG);
        assert_true(reading_is_zero(&rd));

        assert_int_equal(perf_group_read(NULL, &rd), -EINVAL);
        perf_group_close(g);
}

static void test_close(void **state)
{
        struct rig *r = *state;
        struct perf_group *g = rig_open(r, 4, 0);
        int fds[4];

        for (size_t i = 0; i < 4; i++)
                fds[i] = r->fake.calls[i].fd;
        r->fake.ncalls = 0;
        perf_group_close(g);
        /* Members first (newest first), then the leader. */
        assert_int_equal(r->fake.ncalls, 4);
        for (size_t i = 0; i < 4; i++) {
                assert_int_equal(r->fake.calls[i].op, OP_CLOSE);
                assert_int_equal(r->fake.calls[i].fd, fds[3 - i]);
        }
        r->fake.ncalls = 0;
        perf_group_close(NULL);
        assert_int_equal(r->fake.ncalls, 0);
        assert_int_equal(perf_group_count(NULL), 0);
        assert_false(perf_group_enabled(NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_read_size),
            cmocka_unit_test(test_decode_all_formats),
            cmocka_unit_test(test_decode_kernel_layout),
            cmocka_unit_test(test_decode_truncated),
            cmocka_unit_test(test_decode_nr),
            cmocka_unit_test(test_decode_bad_format),
            cmocka_unit_test(test_decode_fuzz),
            cmocka_unit_test(test_delta),
            cmocka_unit_test(test_delta_backwards),
            cmocka_unit_test(test_scale),
            cmocka_unit_test_setup_teardown(test_open_attrs, rig_setup, rig_teardown),
            cmocka_unit_test_setup_teardown(test_open_fails_at_k, rig_setup, rig_teardown),
            cmocka_unit_test_setup_teardown(test_open_args, rig_setup, rig_teardown),
            cmocka_unit_test_setup_teardown(test_ioctls, rig_setup, rig_teardown),
            cmocka_unit_test_setup_teardown(test_read, rig_setup, rig_teardown),
            cmocka_unit_test_setup_teardown(test_close, rig_setup, rig_teardown),
        };

        return cmocka_run_group_tests_name("perf_group", tests, NULL, NULL);
}
