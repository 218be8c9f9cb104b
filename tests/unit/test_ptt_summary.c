// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ptt_summary.c - the PTT summariser: TLP mix by direction and kind,
 * payload histogram, top-N requesters with "other", request -> completion
 * latency (split completions, 10-bit tags, tag reuse, unmatched on both
 * sides, expiry), the log-linear histogram and its quantiles, time modes
 * with 11-bit and 32-bit wrap, coverage, and windows.
 *
 * Traces are built here entry by entry (SYNTHETIC: no captured data); every
 * expected number is worked out by hand in the comment next to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "ptt_summary.h"

/* ---- trace builders ---- */

#define DW0(fmt, type, len) ((uint32_t)(fmt) << 29 | (uint32_t)(type) << 24 | (uint32_t)(len))
#define T9                  (1u << 23)
#define T8                  (1u << 19)
#define REQ(rid, tag)       ((uint32_t)(rid) << 16 | (uint32_t)((tag)&0xff) << 8 | 0xff)
#define CPL1(st, bc)        ((uint32_t)0x0000 << 16 | (uint32_t)(st) << 13 | (uint32_t)(bc))
#define CPL2(rid, tag, la)  ((uint32_t)(rid) << 16 | (uint32_t)((tag)&0xff) << 8 | (uint32_t)(la))
/* The upper tag bits go in DW0. */
#define TAGHI(tag) (((tag)&0x200 ? T9 : 0) | ((tag)&0x100 ? T8 : 0))

#define MRD(rid, tag, len)      DW0(0, 0x00, len) | TAGHI(tag), REQ(rid, tag), 0x1000
#define MWR(rid, len)           DW0(2, 0x00, len), REQ(rid, 0), 0x2000
#define CPLD(rid, tag, len, bc) DW0(2, 0x0a, len) | TAGHI(tag), CPL1(0, bc), CPL2(rid, tag, 0)
#define CPL_UR(rid, tag)        DW0(0, 0x0a, 0) | TAGHI(tag), CPL1(1, 4), CPL2(rid, tag, 0)

struct trace {
        uint8_t buf[4096];
        size_t len;
};

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
}

/* One 4DW entry: the PCIe DW0 fields move to their PTT places. */
static void add4(struct trace *tr, uint32_t time, uint32_t h0, uint32_t h1, uint32_t h2)
{
        uint32_t dw0 = ((h0 >> 29) & 3) << 30 | ((h0 >> 24) & 0x1f) << 25 | ((h0 >> 23) & 1) << 24 |
                       ((h0 >> 19) & 1) << 23 | ((h0 >> 16) & 1) << 22 | (h0 & 0x3ff) << 11 |
                       (time & 0x7ff);

        assert_true(tr->len + 16 <= sizeof(tr->buf));
        put32(tr->buf + tr->len, dw0);
        put32(tr->buf + tr->len + 4, h1);
        put32(tr->buf + tr->len + 8, h2);
        put32(tr->buf + tr->len + 12, 0);
        tr->len += 16;
}

static void add8(struct trace *tr, uint32_t time, uint32_t h0, uint32_t h1, uint32_t h2)
{
        const uint32_t dw[8] = {0xffffffff, 0, h0, h1, h2, 0, 0, time};

        assert_true(tr->len + 32 <= sizeof(tr->buf));
        for (int i = 0; i < 8; i++)
                put32(tr->buf + tr->len + 4 * i, dw[i]);
        tr->len += 32;
}

static struct ptt_summary *new_summary(int direction, enum ptt_time_mode mode)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;

        ptt_summary_config_default(&cfg);
        cfg.direction = direction;
        cfg.time_mode = mode;
        s = ptt_summary_new(&cfg);
        assert_non_null(s);
        return s;
}

/* ---- histogram ---- */

static void test_hist_layout(void **state)
{
        static const struct {
                uint64_t v;
                unsigned int idx;
                uint64_t le;
        } rows[] = {
            {0, 0, 0},
            {3, 3, 3},
            {4, 4, 4},
            {7, 7, 7},
            {8, 8, 9},
            {9, 8, 9},
            {10, 9, 11},
            {15, 11, 15},
            {16, 12, 19},
            {100, 22, 111},
            {(1ull << 34) - 1, 131, (1ull << 34) - 1},
            {1ull << 34, 132, UINT64_MAX},
            {UINT64_MAX, 132, UINT64_MAX},
        };

        (void)state;
        assert_int_equal(PTT_HIST_BUCKETS, 133);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                unsigned int idx = ptt_hist_bucket_index(rows[i].v);

                if (idx != rows[i].idx || ptt_hist_bucket_le(idx) != rows[i].le)
                        fail_msg("value %llu: bucket %u le %llu, expected %u le %llu",
                                 (unsigned long long)rows[i].v, idx,
                                 (unsigned long long)ptt_hist_bucket_le(idx), rows[i].idx,
                                 (unsigned long long)rows[i].le);
        }
        /* Buckets tile the line: each le maps to its own bucket, le + 1 to
         * the next, and widths never exceed a quarter of the lower bound. */
        for (unsigned int i = 0; i + 1 < PTT_HIST_BUCKETS; i++) {
                uint64_t le = ptt_hist_bucket_le(i);
                uint64_t lo = i ? ptt_hist_bucket_le(i - 1) + 1 : 0;

                assert_int_equal(ptt_hist_bucket_index(le), i);
                assert_int_equal(ptt_hist_bucket_index(le + 1), i + 1);
                if (lo >= 4)
                        assert_true((le - lo + 1) * 4 <= lo);
        }
}

static void test_hist_quantiles(void **state)
{
        struct ptt_hist h;

        (void)state;
        memset(&h, 0, sizeof(h));
        assert_int_equal(ptt_hist_quantile(&h, 0.5), 0);
        for (uint64_t v = 1; v <= 100; v++)
                ptt_hist_add(&h, v);
        assert_int_equal(h.count, 100);
        assert_int_equal(h.sum, 5050);
        assert_int_equal(h.max, 100);
        /* p50: the 50th value, 50, lies in [48, 55] -> 55. */
        assert_int_equal(ptt_hist_quantile(&h, 0.50), 55);
        /* p90: 90 lies in [80, 95] -> 95. */
        assert_int_equal(ptt_hist_quantile(&h, 0.90), 95);
        /* p99: 99 lies in [96, 111], capped at the max 100. */
        assert_int_equal(ptt_hist_quantile(&h, 0.99), 100);
        /* p10: 10 lies in [10, 11] -> 11. */
        assert_int_equal(ptt_hist_quantile(&h, 0.10), 11);
        /* Cumulative: values <= 55 are 55 of them, <= 3 three. */
        assert_int_equal(ptt_hist_cumulative(&h, ptt_hist_bucket_index(50)), 55);
        assert_int_equal(ptt_hist_cumulative(&h, 3), 3);
        assert_int_equal(ptt_hist_cumulative(&h, PTT_HIST_BUCKETS - 1), 100);

        memset(&h, 0, sizeof(h));
        ptt_hist_add(&h, 2);
        ptt_hist_add(&h, 2);
        ptt_hist_add(&h, 3);
        /* ranks: p50 -> ceil(1.5) = 2nd = 2; p99 -> 3rd = 3; q 0 -> 1st. */
        assert_int_equal(ptt_hist_quantile(&h, 0.5), 2);
        assert_int_equal(ptt_hist_quantile(&h, 0.99), 3);
        assert_int_equal(ptt_hist_quantile(&h, 0), 2);
        /* The +Inf bucket reports the exact max. */
        ptt_hist_add(&h, 1ull << 40);
        assert_int_equal(ptt_hist_quantile(&h, 1.0), 1ull << 40);
        /* The sum saturates instead of wrapping. */
        ptt_hist_add(&h, UINT64_MAX);
        assert_int_equal(h.sum, UINT64_MAX);
}

static void test_payload_buckets(void **state)
{
        static const struct {
                uint32_t bytes;
                unsigned int idx;
        } rows[] = {{0, 0},  {1, 1},  {4, 1},     {5, 2},    {8, 2},
                    {64, 5}, {65, 6}, {4096, 11}, {9000, 11}};

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                assert_int_equal(ptt_payload_bucket_index(rows[i].bytes), rows[i].idx);
        assert_int_equal(ptt_payload_bucket_le(0), 0);
        assert_int_equal(ptt_payload_bucket_le(1), 4);
        assert_int_equal(ptt_payload_bucket_le(11), 4096);
}

/* ---- matching ---- */

/*
 * 4DW direction 2 (both sides recorded, direction unknown per entry), delta
 * time. t is the running tick count; the first entry only sets the base.
 */
static void build_mixed(struct trace *tr)
{
        memset(tr, 0, sizeof(*tr));
        add4(tr, 100, MRD(0x0100, 0x005, 16));    /* t 0: request A, 64 bytes */
        add4(tr, 10, CPLD(0x0100, 0x005, 8, 64)); /* t 10: A first (32 of 64) */
        add4(tr, 5, CPLD(0x0100, 0x005, 8, 32));  /* t 15: A last */
        add4(tr, 1, MWR(0x0200, 32));             /* t 16: posted, 128 bytes */
        add4(tr, 2, MRD(0x0100, 0x205, 1));       /* t 18: B, 10-bit tag */
        add4(tr, 3, MRD(0x0100, 0x005, 1));       /* t 21: C, same low tag as B */
        add4(tr, 4, CPL_UR(0x0100, 0x205));       /* t 25: B done (UR), 7 */
        add4(tr, 1, CPLD(0x0100, 0x005, 1, 4));   /* t 26: C done, 5 */
        add4(tr, 1, MRD(0x0100, 0x005, 1));       /* t 27: D */
        add4(tr, 2, MRD(0x0100, 0x005, 1));       /* t 29: E reuses D's tag */
        add4(tr, 1, CPLD(0x0300, 0x009, 2, 8));   /* t 30: nobody asked */
}

static void test_match_mixed(void **state)
{
        struct ptt_summary *s = new_summary(2, PTT_TIME_DELTA);
        const struct ptt_stats *w;
        struct trace tr;

        (void)state;
        build_mixed(&tr);
        assert_true(ptt_summary_matching(s, PTT_FORMAT_4DW));
        assert_int_equal(ptt_summary_feed(s, tr.buf, tr.len), 11);
        w = ptt_summary_window(s);
        assert_true(w->match.enabled);
        assert_int_equal(w->match.requests, 5);    /* A B C D E */
        assert_int_equal(w->match.completions, 5); /* 2 for A, B, C, stray */
        assert_int_equal(w->match.matched_first, 3);
        assert_int_equal(w->match.matched_last, 3);
        assert_int_equal(w->match.tag_reuse, 1);
        assert_int_equal(w->match.unmatched_requests, 1); /* D, replaced by E */
        assert_int_equal(w->match.unmatched_completions, 1);
        /* first: A 10, B 7, C 5; last: A 15, B 7, C 5. */
        assert_int_equal(w->lat_first.count, 3);
        assert_int_equal(w->lat_first.sum, 22);
        assert_int_equal(w->lat_last.sum, 27);
        assert_int_equal(w->lat_last.max, 15);
        assert_int_equal(ptt_hist_quantile(&w->lat_first, 0.5), 7);
        assert_int_equal(ptt_hist_quantile(&w->lat_first, 0.99), 10); /* [10,11] capped */
        assert_int_equal(ptt_hist_quantile(&w->lat_last, 0.9), 15);   /* [14,15] */
        assert_int_equal(w->cov.ticks, 30);

        /* E is still pending: the window's end makes it unmatched. */
        ptt_summary_window_end(s);
        assert_int_equal(w->match.unmatched_requests, 2);
        assert_int_equal(ptt_summary_total(s)->match.unmatched_requests, 2);
        ptt_summary_free(s);
}

static void test_mix_and_payload(void **state)
{
        struct ptt_summary *s = new_summary(2, PTT_TIME_DELTA);
        const struct ptt_stats *w;
        struct ptt_count c;
        struct trace tr;

        (void)state;
        build_mixed(&tr);
        ptt_summary_feed(s, tr.buf, tr.len);
        w = ptt_summary_window(s);
        /* Direction 2 records both sides without saying which: unknown. */
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_MRD].tlps, 5);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_MRD].payload_bytes, 0);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_CPLD].tlps, 4);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_CPLD].payload_bytes, 32 + 32 + 4 + 8);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_CPL].tlps, 1);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_MWR].payload_bytes, 128);
        c = ptt_stats_dir_total(w, PTT_DIR_UNKNOWN);
        assert_int_equal(c.tlps, 11);
        assert_int_equal(c.payload_bytes, 204);
        assert_int_equal(ptt_stats_dir_total(w, PTT_DIR_INBOUND).tlps, 0);
        /* Payload sizes: 0 bytes x6 (5 MRd, Cpl), 4 x1, 8 x1, 32 x2, 128 x1. */
        assert_int_equal(w->payload_hist[PTT_DIR_UNKNOWN][0], 6);
        assert_int_equal(w->payload_hist[PTT_DIR_UNKNOWN][1], 1);
        assert_int_equal(w->payload_hist[PTT_DIR_UNKNOWN][2], 1);
        assert_int_equal(w->payload_hist[PTT_DIR_UNKNOWN][4], 2);
        assert_int_equal(w->payload_hist[PTT_DIR_UNKNOWN][6], 1);
        assert_int_equal(w->cov.entries, 11);
        assert_int_equal(w->cov.tlps, 11);
        assert_int_equal(w->cov.bytes, 176);
        assert_int_equal(w->cov.by_format[PTT_FORMAT_4DW], 11);
        ptt_summary_free(s);
}

static void test_requesters_top_n(void **state)
{
        struct ptt_summary *s = new_summary(2, PTT_TIME_DELTA);
        struct ptt_requester_row rows[4];
        struct trace tr;
        size_t n;

        (void)state;
        build_mixed(&tr);
        ptt_summary_feed(s, tr.buf, tr.len);
        /* 0x0100: 5 MRd + 2 CplD (A) + Cpl (B) + CplD (C) = 9; 0x0200: 1;
         * 0x0300: 1 (the stray completion is its requester's). */
        n = ptt_stats_requesters(ptt_summary_window(s), 1, rows, 4);
        assert_int_equal(n, 2);
        assert_false(rows[0].other);
        assert_int_equal(rows[0].requester_id, 0x0100);
        assert_int_equal(rows[0].total.tlps, 9);
        assert_int_equal(rows[0].by_kind[PTT_DIR_UNKNOWN][TLP_MRD].tlps, 5);
        assert_int_equal(rows[0].total.payload_bytes, 32 + 32 + 4);
        assert_true(rows[1].other);
        assert_int_equal(rows[1].total.tlps, 2);
        assert_int_equal(rows[1].total.payload_bytes, 128 + 8);
        assert_int_equal(rows[1].by_kind[PTT_DIR_UNKNOWN][TLP_MWR].tlps, 1);
        /* Top 2: the tie at 1 TLP goes to the lower ID. */
        n = ptt_stats_requesters(ptt_summary_window(s), 2, rows, 4);
        assert_int_equal(n, 3);
        assert_int_equal(rows[1].requester_id, 0x0200);
        assert_true(rows[2].other);
        assert_int_equal(rows[2].total.tlps, 1);
        /* Top 5: everyone listed, no "other" row. */
        n = ptt_stats_requesters(ptt_summary_window(s), 5, rows, 4);
        assert_int_equal(n, 3);
        assert_int_equal(rows[2].requester_id, 0x0300);
        assert_false(rows[2].other);
        /* cap smaller than the rows: counts them all, writes what fits. */
        assert_int_equal(ptt_stats_requesters(ptt_summary_window(s), 2, rows, 1), 3);
        /* top 0: all in "other". */
        n = ptt_stats_requesters(ptt_summary_window(s), 0, rows, 4);
        assert_int_equal(n, 1);
        assert_true(rows[0].other);
        assert_int_equal(rows[0].total.tlps, 11);
        ptt_summary_free(s);
}

static void test_requesters_bounded(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        struct ptt_requester_row rows[8];
        struct trace tr;
        uint64_t sum = 0;
        size_t n;

        (void)state;
        ptt_summary_config_default(&cfg);
        cfg.direction = 1;
        cfg.max_requesters = 4;
        s = ptt_summary_new(&cfg);
        assert_non_null(s);
        memset(&tr, 0, sizeof(tr));
        /* Requester r (1..10) writes r times: 55 TLPs. Only 1..4 get a slot
         * (first come); 5..10 (45 TLPs) land in the table's "other". */
        for (unsigned int r = 1; r <= 10; r++)
                for (unsigned int k = 0; k < r; k++)
                        add4(&tr, 1, MWR(r, 1));
        ptt_summary_feed(s, tr.buf, tr.len);
        n = ptt_stats_requesters(ptt_summary_window(s), 2, rows, 8);
        assert_int_equal(n, 3);
        assert_int_equal(rows[0].requester_id, 4);
        assert_int_equal(rows[0].total.tlps, 4);
        assert_int_equal(rows[1].requester_id, 3);
        assert_int_equal(rows[1].total.tlps, 3);
        assert_true(rows[2].other);
        assert_int_equal(rows[2].total.tlps, 45 + 2 + 1);
        assert_int_equal(rows[2].by_kind[PTT_DIR_OUTBOUND][TLP_MWR].tlps, 48);
        for (size_t i = 0; i < n; i++)
                sum += rows[i].total.tlps;
        assert_int_equal(sum, 55);
        ptt_summary_free(s);
}

/* Direction 3: requests outbound, matched completions inbound (CPL-A). */
static void test_direction_3(void **state)
{
        struct ptt_summary *s = new_summary(3, PTT_TIME_DELTA);
        const struct ptt_stats *w;
        struct trace tr;

        (void)state;
        memset(&tr, 0, sizeof(tr));
        add4(&tr, 0, MRD(0x0000, 0x010, 2));      /* t 0 */
        add4(&tr, 40, CPLD(0x0000, 0x010, 2, 8)); /* t 40: matched, inbound */
        add4(&tr, 1, CPLD(0x0500, 0x011, 1, 4));  /* t 41: unmatched, unknown */
        add4(&tr, 1, MWR(0x0000, 4));             /* t 42: outbound */
        ptt_summary_feed(s, tr.buf, tr.len);
        w = ptt_summary_window(s);
        assert_int_equal(w->by_kind[PTT_DIR_OUTBOUND][TLP_MRD].tlps, 1);
        assert_int_equal(w->by_kind[PTT_DIR_INBOUND][TLP_CPLD].tlps, 1);
        assert_int_equal(w->by_kind[PTT_DIR_INBOUND][TLP_CPLD].payload_bytes, 8);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_CPLD].tlps, 1);
        assert_int_equal(w->by_kind[PTT_DIR_OUTBOUND][TLP_MWR].payload_bytes, 16);
        assert_int_equal(w->lat_first.sum, 40);
        assert_int_equal(w->lat_last.sum, 40);
        assert_int_equal(w->match.unmatched_completions, 1);
        ptt_summary_free(s);
}

/* Single-direction settings: no matching (a completion there answers a
 * request the trace does not record), the direction is known. */
static void test_single_direction(void **state)
{
        static const struct {
                int direction;
                bool eight_dw;
                enum ptt_dir dir;
        } rows[] = {
            {0, false, PTT_DIR_INBOUND}, {1, false, PTT_DIR_OUTBOUND}, {1, true, PTT_DIR_OUTBOUND},
            {2, true, PTT_DIR_INBOUND},  {3, true, PTT_DIR_INBOUND},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct ptt_summary *s = new_summary(rows[i].direction, PTT_TIME_DELTA);
                const struct ptt_stats *w;
                struct trace tr;

                memset(&tr, 0, sizeof(tr));
                if (rows[i].eight_dw) {
                        add8(&tr, 0, MRD(0x0100, 1, 1));
                        add8(&tr, 5, CPLD(0x0100, 1, 1, 4));
                } else {
                        add4(&tr, 0, MRD(0x0100, 1, 1));
                        add4(&tr, 5, CPLD(0x0100, 1, 1, 4));
                }
                assert_false(
                    ptt_summary_matching(s, rows[i].eight_dw ? PTT_FORMAT_8DW : PTT_FORMAT_4DW));
                assert_int_equal(ptt_summary_feed(s, tr.buf, tr.len), 2);
                w = ptt_summary_window(s);
                assert_false(w->match.enabled);
                assert_int_equal(w->match.requests, 0);
                assert_int_equal(w->match.unmatched_completions, 0);
                assert_int_equal(w->lat_first.count, 0);
                if (w->by_kind[rows[i].dir][TLP_MRD].tlps != 1 ||
                    w->by_kind[rows[i].dir][TLP_CPLD].tlps != 1)
                        fail_msg("row %zu: not counted as %s", i, ptt_dir_name(rows[i].dir));
                ptt_summary_free(s);
        }
}

static void test_match_override(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        struct trace tr;

        (void)state;
        memset(&tr, 0, sizeof(tr));
        add4(&tr, 0, MRD(0x0100, 1, 1));
        add4(&tr, 5, CPLD(0x0100, 1, 1, 4));
        ptt_summary_config_default(&cfg);
        cfg.direction = 0;
        cfg.match = PTT_MATCH_ON;
        s = ptt_summary_new(&cfg);
        ptt_summary_feed(s, tr.buf, tr.len);
        assert_int_equal(ptt_summary_window(s)->lat_last.sum, 5);
        ptt_summary_free(s);

        cfg.direction = 2;
        cfg.match = PTT_MATCH_OFF;
        s = ptt_summary_new(&cfg);
        ptt_summary_feed(s, tr.buf, tr.len);
        assert_int_equal(ptt_summary_window(s)->lat_last.count, 0);
        ptt_summary_free(s);

        /* Unknown direction (raw dumps): matching on, direction unknown. */
        s = new_summary(-1, PTT_TIME_DELTA);
        ptt_summary_feed(s, tr.buf, tr.len);
        assert_int_equal(ptt_summary_window(s)->lat_last.sum, 5);
        assert_int_equal(ptt_summary_window(s)->by_kind[PTT_DIR_UNKNOWN][TLP_MRD].tlps, 1);
        ptt_summary_free(s);
}

/* ---- time ---- */

static void test_time_modes_4dw_wrap(void **state)
{
        struct ptt_summary *abs_s = new_summary(2, PTT_TIME_ABSOLUTE);
        struct ptt_summary *del_s = new_summary(2, PTT_TIME_DELTA);
        struct trace tr;

        (void)state;
        memset(&tr, 0, sizeof(tr));
        add4(&tr, 2040, MRD(0x0100, 1, 1));  /* absolute: base */
        add4(&tr, 2047, MWR(0x0100, 1));     /* +7 */
        add4(&tr, 3, CPLD(0x0100, 1, 1, 4)); /* 2047 -> 3 wraps 11 bits: +4 */
        ptt_summary_feed(abs_s, tr.buf, tr.len);
        ptt_summary_feed(del_s, tr.buf, tr.len);
        /* absolute: 7 + 4 = 11 ticks; delta: 2047 + 3 = 2050 ticks. */
        assert_int_equal(ptt_summary_window(abs_s)->lat_last.sum, 11);
        assert_int_equal(ptt_summary_window(abs_s)->cov.ticks, 11);
        assert_int_equal(ptt_summary_window(del_s)->lat_last.sum, 2050);
        ptt_summary_free(abs_s);
        ptt_summary_free(del_s);
}

static void test_time_absolute_8dw_wrap(void **state)
{
        struct ptt_summary *s = new_summary(-1, PTT_TIME_ABSOLUTE);
        struct trace tr;

        (void)state;
        memset(&tr, 0, sizeof(tr));
        add8(&tr, 0xfffffff0u, MRD(0x0100, 0x3ff, 1));     /* 10-bit tag 0x3ff */
        add8(&tr, 0x00000010u, CPLD(0x0100, 0x3ff, 1, 4)); /* +0x20 across 2^32 */
        ptt_summary_feed(s, tr.buf, tr.len);
        assert_int_equal(ptt_summary_window(s)->lat_last.sum, 0x20);
        assert_int_equal(ptt_summary_window(s)->cov.by_format[PTT_FORMAT_8DW], 2);
        ptt_summary_free(s);
}

static void test_clock(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        enum ptt_time_mode mode;

        (void)state;
        s = new_summary(-1, PTT_TIME_DELTA);
        assert_string_equal(ptt_summary_time_unit(s), "ticks");
        assert_true(ptt_summary_ticks_to_unit(s, 7) == 7.0);
        ptt_summary_free(s);
        ptt_summary_config_default(&cfg);
        cfg.clock_hz = 250000000; /* 4 ns per tick */
        s = ptt_summary_new(&cfg);
        assert_string_equal(ptt_summary_time_unit(s), "ns");
        assert_true(ptt_summary_ticks_to_unit(s, 7) == 28.0);
        ptt_summary_free(s);

        assert_int_equal(ptt_time_mode_parse("absolute", &mode), 0);
        assert_int_equal(mode, PTT_TIME_ABSOLUTE);
        assert_int_equal(ptt_time_mode_parse("delta", &mode), 0);
        assert_int_equal(mode, PTT_TIME_DELTA);
        assert_int_equal(ptt_time_mode_parse("Delta", &mode), -EINVAL);
        assert_int_equal(ptt_time_mode_parse(NULL, &mode), -EINVAL);
        assert_string_equal(ptt_time_mode_name(PTT_TIME_ABSOLUTE), "absolute");
        assert_string_equal(ptt_time_mode_name(PTT_TIME_DELTA), "delta");
}

/* ---- bounds, coverage, windows ---- */

static void test_expiry(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        const struct ptt_stats *w;
        struct trace tr;

        (void)state;
        ptt_summary_config_default(&cfg);
        cfg.direction = 2;
        cfg.max_outstanding = 4;
        s = ptt_summary_new(&cfg);
        assert_non_null(s);
        memset(&tr, 0, sizeof(tr));
        for (unsigned int tag = 0; tag < 6; tag++)
                add4(&tr, 1, MRD(0x0100, tag, 1)); /* t = tag */
        /* At t 4 the table (tags 0-3, ages 4..1) is full: the oldest age is
         * 4, so ages >= 2 go (tags 0, 1, 2); tags 3, 4, 5 remain. */
        add4(&tr, 1, CPLD(0x0100, 3, 1, 4)); /* t 6: latency 3 */
        add4(&tr, 1, CPLD(0x0100, 0, 1, 4)); /* t 7: tag 0 expired */
        ptt_summary_feed(s, tr.buf, tr.len);
        w = ptt_summary_window(s);
        assert_int_equal(w->match.expired, 3);
        assert_int_equal(w->match.unmatched_requests, 3);
        assert_int_equal(w->match.matched_last, 1);
        assert_int_equal(w->lat_last.sum, 3);
        assert_int_equal(w->match.unmatched_completions, 1);
        ptt_summary_window_end(s);
        assert_int_equal(w->match.unmatched_requests, 5); /* + tags 4, 5 */
        ptt_summary_free(s);
}

/* Many requests that are never answered stay within the bound. */
static void test_expiry_stream(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        static struct trace tr;

        (void)state;
        ptt_summary_config_default(&cfg);
        cfg.direction = 3;
        cfg.max_outstanding = 8;
        s = ptt_summary_new(&cfg);
        for (int round = 0; round < 10; round++) {
                memset(&tr, 0, sizeof(tr));
                for (unsigned int i = 0; i < 256; i++)
                        add4(&tr, 1, MRD(0x0100 + round, i, 1));
                ptt_summary_feed(s, tr.buf, tr.len);
        }
        ptt_summary_window_end(s);
        assert_int_equal(ptt_summary_window(s)->match.requests, 2560);
        assert_int_equal(ptt_summary_window(s)->match.unmatched_requests, 2560);
        assert_true(ptt_summary_window(s)->match.expired >= 2560 - 8);
        ptt_summary_free(s);
}

static void test_coverage(void **state)
{
        struct ptt_summary *s = new_summary(-1, PTT_TIME_DELTA);
        const struct ptt_stats *w;
        struct trace tr;

        (void)state;
        memset(&tr, 0, sizeof(tr));
        add8(&tr, 0, MWR(0x0100, 1));
        add8(&tr, 1, MWR(0x0100, 1));
        put32(tr.buf + 32, 0x12345678);      /* the 2nd entry loses its marker */
        tr.len += 32;                        /* an all-zero slot */
        add8(&tr, 1, DW0(0, 0x03, 1), 0, 0); /* reserved Type: unknown TLP */
        add8(&tr, 1, MWR(0x0100, 2));
        tr.len += 5; /* stray tail bytes (zero) */
        assert_int_equal(ptt_summary_feed(s, tr.buf, tr.len), 2);
        ptt_summary_note_lost(s, 4096);
        ptt_summary_note_truncated(s);
        ptt_summary_note_partial(s);
        w = ptt_summary_window(s);
        assert_int_equal(w->cov.buffers, 1);
        assert_int_equal(w->cov.bytes, 5 * 32 + 5);
        assert_int_equal(w->cov.entries, 5);
        assert_int_equal(w->cov.tlps, 2);
        assert_int_equal(w->cov.malformed, 1);
        assert_int_equal(w->cov.empty, 1);
        assert_int_equal(w->cov.unknown_tlp, 1);
        assert_int_equal(w->cov.tail_bytes, 5);
        assert_int_equal(w->cov.lost_bytes, 4096);
        assert_int_equal(w->cov.truncated, 1);
        assert_int_equal(w->cov.partial, 1);
        assert_int_equal(w->by_kind[PTT_DIR_UNKNOWN][TLP_MWR].payload_bytes, 12);

        /* A buffer that is too short for one entry is all tail. */
        assert_int_equal(ptt_summary_feed(s, tr.buf, 20), 0);
        assert_int_equal(w->cov.tail_bytes, 5 + 20);
        assert_int_equal(ptt_summary_feed(s, NULL, 100), 0);
        assert_int_equal(w->cov.buffers, 3);
        ptt_summary_free(s);
}

/* A gap (lost data) ends every pending request and restarts the time base:
 * no latency spans it, and the missing time is not guessed. */
static void test_gap(void **state)
{
        struct ptt_summary *s = new_summary(2, PTT_TIME_DELTA);
        const struct ptt_stats *w = ptt_summary_window(s);
        struct trace a, b;

        (void)state;
        memset(&a, 0, sizeof(a));
        add4(&a, 0, MRD(0x0100, 1, 1)); /* t 0 */
        add4(&a, 5, MWR(0x0100, 1));    /* t 5 */
        memset(&b, 0, sizeof(b));
        add4(&b, 3, CPLD(0x0100, 1, 1, 4)); /* after the gap: new base, t 5 */
        add4(&b, 2, MRD(0x0100, 2, 1));     /* t 7 */
        add4(&b, 4, CPLD(0x0100, 2, 1, 4)); /* t 11: latency 4 */
        ptt_summary_feed(s, a.buf, a.len);
        ptt_summary_note_gap(s);
        ptt_summary_feed(s, b.buf, b.len);
        assert_int_equal(w->cov.gaps, 1);
        assert_int_equal(w->match.unmatched_requests, 1);
        assert_int_equal(w->match.unmatched_completions, 1);
        assert_int_equal(w->lat_last.count, 1);
        assert_int_equal(w->lat_last.sum, 4);
        assert_int_equal(w->cov.ticks, 11);
        ptt_summary_window_end(s);
        assert_int_equal(ptt_summary_total(s)->cov.gaps, 1);
        ptt_summary_free(s);
}

static void test_windows(void **state)
{
        struct ptt_summary *s = new_summary(2, PTT_TIME_DELTA);
        struct ptt_requester_row rows[4];
        struct trace a, b;

        (void)state;
        memset(&a, 0, sizeof(a));
        add4(&a, 0, MRD(0x0100, 1, 1));
        add4(&a, 3, MWR(0x0200, 1));
        memset(&b, 0, sizeof(b));
        add4(&b, 0, CPLD(0x0100, 1, 1, 4)); /* the old window's request is gone */
        add4(&b, 9, MWR(0x0300, 1));

        ptt_summary_feed(s, a.buf, a.len);
        ptt_summary_window_end(s);
        assert_int_equal(ptt_summary_window(s)->cov.tlps, 2);
        assert_int_equal(ptt_summary_window(s)->match.unmatched_requests, 1);
        ptt_summary_window_start(s);
        assert_int_equal(ptt_summary_window(s)->cov.tlps, 0);
        assert_int_equal(ptt_stats_requesters(ptt_summary_window(s), 4, rows, 4), 0);
        ptt_summary_feed(s, b.buf, b.len);
        ptt_summary_window_end(s);

        assert_int_equal(ptt_summary_window(s)->cov.tlps, 2);
        assert_int_equal(ptt_summary_window(s)->match.unmatched_completions, 1);
        assert_int_equal(ptt_summary_window(s)->match.unmatched_requests, 0);
        assert_int_equal(ptt_summary_window(s)->cov.ticks, 9);
        assert_int_equal(ptt_stats_requesters(ptt_summary_window(s), 4, rows, 4), 2);
        assert_int_equal(rows[0].requester_id, 0x0100);
        assert_int_equal(rows[1].requester_id, 0x0300);

        assert_int_equal(ptt_summary_total(s)->cov.tlps, 4);
        assert_int_equal(ptt_summary_total(s)->cov.ticks, 3 + 9);
        assert_int_equal(ptt_summary_total(s)->match.unmatched_requests, 1);
        assert_int_equal(ptt_summary_total(s)->match.unmatched_completions, 1);
        assert_int_equal(ptt_stats_requesters(ptt_summary_total(s), 4, rows, 4), 3);

        /* Starting a window without ending the last one ends it first. */
        ptt_summary_feed(s, a.buf, a.len);
        ptt_summary_window_start(s);
        assert_int_equal(ptt_summary_total(s)->match.unmatched_requests, 2);
        ptt_summary_free(s);
}

/* ptt_summary_feed() decodes slots in place; decoding each entry with
 * ptt_entry_decode() and adding it must give the same statistics. */
static void feed_by_entries(struct ptt_summary *s, const uint8_t *buf, size_t len)
{
        enum ptt_format fmt = ptt_format_detect(buf, len);
        size_t step = ptt_format_entry_size(fmt);

        for (size_t off = 0; off + step <= len; off += step) {
                struct ptt_entry e;

                if (ptt_entry_decode(buf + off, len - off, fmt, &e) > 0)
                        ptt_summary_add_entry(s, &e);
        }
}

static void assert_same_stats(const struct ptt_stats *a, const struct ptt_stats *b)
{
        assert_memory_equal(a->by_kind, b->by_kind, sizeof(a->by_kind));
        assert_memory_equal(a->payload_hist, b->payload_hist, sizeof(a->payload_hist));
        assert_memory_equal(&a->lat_first, &b->lat_first, sizeof(a->lat_first));
        assert_memory_equal(&a->lat_last, &b->lat_last, sizeof(a->lat_last));
        assert_memory_equal(&a->match, &b->match, sizeof(a->match));
        assert_int_equal(a->cov.tlps, b->cov.tlps);
        assert_int_equal(a->cov.unknown_tlp, b->cov.unknown_tlp);
        assert_int_equal(a->cov.ticks, b->cov.ticks);
        assert_memory_equal(a->cov.by_format, b->cov.by_format, sizeof(a->cov.by_format));
}

static void test_feed_equals_entries(void **state)
{
        struct trace t4, t8;

        (void)state;
        build_mixed(&t4);
        memset(&t8, 0, sizeof(t8));
        add8(&t8, 7, MRD(0x0100, 0x3ff, 4));
        add8(&t8, 9, CPLD(0x0100, 0x3ff, 2, 16));
        add8(&t8, 1, DW0(0, 0x03, 1), 0, 0); /* reserved type */
        add8(&t8, 2, CPLD(0x0100, 0x3ff, 2, 8));
        add8(&t8, 2, MWR(0x0200, 2));
        put32(t8.buf + 4 * 32 + 4, 0x40000000); /* DW1 not a prefix */
        add8(&t8, 3, MWR(0x0200, 3));
        put32(t8.buf + 5 * 32 + 4, 0x91000007); /* a PASID prefix */
        t8.len += 32;                           /* empty slot */
        for (int mode = 0; mode < 2; mode++) {
                struct ptt_summary *a = new_summary(-1, (enum ptt_time_mode)mode);
                struct ptt_summary *b = new_summary(-1, (enum ptt_time_mode)mode);

                ptt_summary_feed(a, t4.buf, t4.len);
                feed_by_entries(b, t4.buf, t4.len);
                ptt_summary_feed(a, t8.buf, t8.len);
                feed_by_entries(b, t8.buf, t8.len);
                assert_same_stats(ptt_summary_window(a), ptt_summary_window(b));
                /* 11 + 6 entries; unknown: the reserved type and DW1. */
                assert_int_equal(ptt_summary_window(a)->cov.tlps, 11 + 4);
                assert_int_equal(ptt_summary_window(a)->cov.unknown_tlp, 2);
                ptt_summary_free(a);
                ptt_summary_free(b);
        }
}

/*
 * Split reads, the case the feed loops take a short path for (struct
 * split_run in ptt_summary.c): a request, then its completions one after
 * another, in both formats, with what may break a run put in at random: a
 * failed status, a byte count that ends early, another tag or requester,
 * an empty slot, an unknown TLP, and in 8DW another first dword (with the
 * marker or without) or prefix (valid or not). Fed in place and entry by entry, the statistics
 * agree.
 */
static uint32_t split_rng = 2026;

static uint32_t split_rnd(void)
{
        split_rng = split_rng * 1103515245u + 12345u;
        return split_rng >> 8;
}

static void build_splits(struct trace *tr, bool eight)
{
        memset(tr, 0, sizeof(*tr));
        while (tr->len + 12 * (eight ? 32 : 16) <= sizeof(tr->buf)) {
                unsigned int tag = split_rnd() % 1024, rid = 0x100 + split_rnd() % 4;
                unsigned int parts = 1 + split_rnd() % 6, bc = parts * 16;
                uint32_t h[3] = {MRD(rid, tag, bc / 4)};

                if (eight)
                        add8(tr, 1 + split_rnd() % 5, h[0], h[1], h[2]);
                else
                        add4(tr, 1 + split_rnd() % 5, h[0], h[1], h[2]);
                for (unsigned int k = 0; k < parts; k++, bc -= 16) {
                        uint32_t c[3] = {CPLD(rid, tag, 4, bc)};
                        size_t at = tr->len;

                        switch (split_rnd() % 24) {
                        case 0:
                                c[1] = CPL1(1 + split_rnd() % 3, bc); /* not SC */
                                break;
                        case 1:
                                c[1] = CPL1(0, 16); /* ends early */
                                break;
                        case 2:
                                c[2] = CPL2(rid, tag ^ 1, 0);
                                break;
                        case 3:
                                c[2] = CPL2(rid + 1, tag, 0);
                                break;
                        case 4:
                                tr->len += eight ? 32 : 16; /* an empty slot */
                                break;
                        case 5:
                                c[0] = DW0(0, 0x03, 1); /* reserved type */
                                break;
                        default:
                                break;
                        }
                        if (eight) {
                                add8(tr, 1 + split_rnd() % 7, c[0], c[1], c[2]);
                                switch (split_rnd() % 16) {
                                case 0:
                                        put32(tr->buf + at + 4, 0x91000007); /* a prefix */
                                        break;
                                case 1:
                                        put32(tr->buf + at + 4, 0x40000000); /* not one */
                                        break;
                                case 2:
                                        /* the marker with other low bits, or none */
                                        put32(tr->buf + at,
                                              split_rnd() & 1 ? 0xfffff801 : 0x7ffff800);
                                        break;
                                default:
                                        break;
                                }
                        } else {
                                add4(tr, 1 + split_rnd() % 7, c[0], c[1], c[2]);
                        }
                }
        }
}

static void test_feed_equals_entries_splits(void **state)
{
        (void)state;
        for (int round = 0; round < 200; round++) {
                bool eight = round & 1;
                struct trace t;
                int direction = eight ? -1 : (round & 2 ? 3 : -1);
                struct ptt_summary *a = new_summary(direction, (enum ptt_time_mode)(round % 4 < 2));
                struct ptt_summary *b = new_summary(direction, (enum ptt_time_mode)(round % 4 < 2));
                size_t cut;

                build_splits(&t, eight);
                /* Two buffers, cut at an entry: a run may span them. */
                cut = (split_rnd() % (t.len / (eight ? 32 : 16))) * (eight ? 32 : 16);
                ptt_summary_feed(a, t.buf, cut);
                ptt_summary_feed_format(a, t.buf + cut, t.len - cut,
                                        eight ? PTT_FORMAT_8DW : PTT_FORMAT_4DW);
                feed_by_entries(b, t.buf, t.len);
                assert_same_stats(ptt_summary_window(a), ptt_summary_window(b));
                assert_true(ptt_summary_window(a)->match.matched_last > 0);
                ptt_summary_free(a);
                ptt_summary_free(b);
        }
}

/* A trace that leaves requests pending, fills small requester tables and
 * expires entries: what a reset must not carry over. */
static void build_busy(struct trace *tr)
{
        build_mixed(tr);
        for (unsigned int r = 1; r <= 12; r++) {
                add4(tr, 3, MRD(r, r, 2));
                add4(tr, 1, MWR(r, r));
        }
        add4(tr, 2, CPLD(5, 5, 2, 8));
}

static void assert_same_summary(struct ptt_summary *a, struct ptt_summary *b)
{
        struct ptt_requester_row ra[16], rb[16];
        size_t na, nb;

        assert_memory_equal(ptt_summary_config(a), ptt_summary_config(b),
                            sizeof(struct ptt_summary_config));
        assert_same_stats(ptt_summary_window(a), ptt_summary_window(b));
        assert_memory_equal(&ptt_summary_window(a)->cov, &ptt_summary_window(b)->cov,
                            sizeof(struct ptt_coverage));
        assert_same_stats(ptt_summary_total(a), ptt_summary_total(b));
        na = ptt_stats_requesters(ptt_summary_total(a), 8, ra, 16);
        nb = ptt_stats_requesters(ptt_summary_total(b), 8, rb, 16);
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na && i < 16; i++) {
                assert_int_equal(ra[i].other, rb[i].other);
                assert_int_equal(ra[i].requester_id, rb[i].requester_id);
                assert_memory_equal(ra[i].by_kind, rb[i].by_kind, sizeof(ra[i].by_kind));
        }
}

/* A reset summary counts exactly as a new one with the same config, when
 * its tables shrink (reused) and when they grow (reallocated). */
static void test_reset(void **state)
{
        static const struct {
                int direction;
                enum ptt_time_mode mode;
                unsigned int requesters, outstanding;
        } cfgs[] = {
            {2, PTT_TIME_DELTA, 300, 64}, /* first: what reset starts from */
            {1, PTT_TIME_ABSOLUTE, 4, 2}, /* smaller: tables kept */
            {-1, PTT_TIME_DELTA, 2, 4},
            {3, PTT_TIME_DELTA, 1000, 8192}, /* larger: tables replaced */
            {2, PTT_TIME_DELTA, 0, 0},       /* the defaults */
        };
        struct ptt_summary_config cfg;
        struct ptt_summary *s = NULL;
        struct trace tr;

        (void)state;
        build_busy(&tr);
        for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
                struct ptt_summary *fresh;

                ptt_summary_config_default(&cfg);
                cfg.direction = cfgs[i].direction;
                cfg.time_mode = cfgs[i].mode;
                cfg.max_requesters = cfgs[i].requesters;
                cfg.max_outstanding = cfgs[i].outstanding;
                if (!s) {
                        s = ptt_summary_new(&cfg);
                        assert_non_null(s);
                } else {
                        assert_int_equal(ptt_summary_reset(s, &cfg), 0);
                }
                fresh = ptt_summary_new(&cfg);
                assert_non_null(fresh);
                assert_same_summary(s, fresh);
                for (int round = 0; round < 2; round++) {
                        ptt_summary_feed(s, tr.buf, tr.len);
                        ptt_summary_feed(fresh, tr.buf, tr.len);
                        assert_same_summary(s, fresh);
                        ptt_summary_window_end(s);
                        ptt_summary_window_end(fresh);
                }
                assert_same_summary(s, fresh);
                assert_true(ptt_summary_total(s)->cov.tlps > 0);
                ptt_summary_free(fresh);
                /* Left with an open window and requests pending. */
                ptt_summary_feed(s, tr.buf, tr.len);
        }
        /* A bad config is refused and changes nothing. */
        cfg.direction = 4;
        assert_int_equal(ptt_summary_reset(s, &cfg), -EINVAL);
        assert_int_equal(ptt_summary_config(s)->direction, 2);
        assert_true(ptt_summary_total(s)->cov.tlps > 0);
        /* NULL: the defaults, as ptt_summary_new(NULL). */
        assert_int_equal(ptt_summary_reset(s, NULL), 0);
        assert_int_equal(ptt_summary_config(s)->direction, -1);
        assert_int_equal(ptt_summary_total(s)->cov.tlps, 0);
        ptt_summary_free(s);
}

static void test_config(void **state)
{
        struct ptt_summary_config cfg;
        struct ptt_summary *s;

        (void)state;
        ptt_summary_config_default(&cfg);
        assert_int_equal(cfg.direction, -1);
        assert_int_equal(cfg.time_mode, PTT_TIME_DELTA);
        assert_int_equal(cfg.clock_hz, 0);
        assert_int_equal(cfg.match, PTT_MATCH_AUTO);
        cfg.direction = 4;
        errno = 0;
        assert_null(ptt_summary_new(&cfg));
        assert_int_equal(errno, EINVAL);
        ptt_summary_config_default(&cfg);
        cfg.time_mode = (enum ptt_time_mode)5;
        assert_null(ptt_summary_new(&cfg));
        ptt_summary_config_default(&cfg);
        cfg.max_outstanding = PTT_SUMMARY_MAX_OUTSTANDING + 1;
        assert_null(ptt_summary_new(&cfg));
        ptt_summary_config_default(&cfg);
        cfg.max_requesters = PTT_SUMMARY_MAX_REQUESTERS + 1;
        assert_null(ptt_summary_new(&cfg));
        ptt_summary_config_default(&cfg);
        cfg.match = (enum ptt_match_mode)3;
        assert_null(ptt_summary_new(&cfg));
        ptt_summary_config_default(&cfg);
        cfg.max_requesters = 0; /* 0: the default */
        cfg.max_outstanding = 0;
        s = ptt_summary_new(&cfg);
        assert_non_null(s);
        assert_int_equal(ptt_summary_config(s)->max_requesters, PTT_SUMMARY_DEFAULT_REQUESTERS);
        assert_int_equal(ptt_summary_config(s)->max_outstanding, PTT_SUMMARY_DEFAULT_OUTSTANDING);
        ptt_summary_free(s);
        s = ptt_summary_new(NULL);
        assert_non_null(s);
        ptt_summary_free(s);
        ptt_summary_free(NULL);
        assert_string_equal(ptt_dir_name(PTT_DIR_INBOUND), "inbound");
        assert_string_equal(ptt_dir_name(PTT_DIR_OUTBOUND), "outbound");
        assert_string_equal(ptt_dir_name(PTT_DIR_UNKNOWN), "unknown");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hist_layout),
            cmocka_unit_test(test_hist_quantiles),
            cmocka_unit_test(test_payload_buckets),
            cmocka_unit_test(test_match_mixed),
            cmocka_unit_test(test_mix_and_payload),
            cmocka_unit_test(test_requesters_top_n),
            cmocka_unit_test(test_requesters_bounded),
            cmocka_unit_test(test_direction_3),
            cmocka_unit_test(test_single_direction),
            cmocka_unit_test(test_match_override),
            cmocka_unit_test(test_time_modes_4dw_wrap),
            cmocka_unit_test(test_time_absolute_8dw_wrap),
            cmocka_unit_test(test_clock),
            cmocka_unit_test(test_expiry),
            cmocka_unit_test(test_expiry_stream),
            cmocka_unit_test(test_coverage),
            cmocka_unit_test(test_gap),
            cmocka_unit_test(test_windows),
            cmocka_unit_test(test_feed_equals_entries),
            cmocka_unit_test(test_feed_equals_entries_splits),
            cmocka_unit_test(test_config),
            cmocka_unit_test(test_reset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
