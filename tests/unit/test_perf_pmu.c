// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_perf_pmu.c - the format/events/cpumask parsers, field packing into
 * perf_event_attr, and PMU loading from sysfs trees: the checked-in
 * SYNTHETIC fixtures under tests/fixtures/sysfs/pmu/ (see its README) and
 * temporary trees made here for the limits.
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
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw_env.h"
#include "perf_pmu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define FIXTURE_PMU TOP_SRCDIR "/tests/fixtures/sysfs/pmu"

#define PMU_BIG 5000 /* more than the one page a sysfs file holds */

/* ---- log capture ---- */

struct log_capture {
        int warnings, others;
        char text[8192]; /* all messages, one per line */
};

static void capture_log(void *ctx, enum hw_log_level level, const char *msg)
{
        struct log_capture *log = ctx;
        size_t used = strlen(log->text);

        if (level == HW_LOG_WARNING)
                log->warnings++;
        else
                log->others++;
        snprintf(log->text + used, sizeof(log->text) - used, "%s\n", msg);
}

/* Lines of the log that contain @needle. */
static int log_lines_with(const struct log_capture *log, const char *needle)
{
        int n = 0;

        for (const char *line = log->text; *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t)(nl - line) : strlen(line);

                if (memmem(line, len, needle, strlen(needle)))
                        n++;
                line += len + (nl ? 1 : 0);
        }
        return n;
}

static void fixture_env(struct hw_env *env, struct log_capture *log)
{
        struct stat st;

        /* The fixtures are part of the source tree and the dist: a missing
         * tree is a failure, not a skip. */
        assert_int_equal(stat(FIXTURE_PMU "/bus/event_source/devices", &st), 0);
        memset(env, 0, sizeof(*env));
        env->sysfs_root = FIXTURE_PMU;
        if (log) {
                memset(log, 0, sizeof(*log));
                env->log = capture_log;
                env->log_ctx = log;
        }
}

/* ---- perf_format_parse ---- */

struct format_row {
        const char *text;
        int ret;
        size_t count; /* compared when ret == 0 */
        struct perf_format_piece pieces[PERF_FORMAT_PIECES];
};

static const struct format_row format_rows[] = {
    {"config:0-16", 0, 1, {{PERF_CONFIG, 0, 16}}},
    {"config:0-16\n", 0, 1, {{PERF_CONFIG, 0, 16}}},
    {"config1:4", 0, 1, {{PERF_CONFIG1, 4, 4}}},
    {"config1:10-11\n", 0, 1, {{PERF_CONFIG1, 10, 11}}},
    {"config2:16-31\n", 0, 1, {{PERF_CONFIG2, 16, 31}}},
    {"config3:0-3", 0, 1, {{PERF_CONFIG3, 0, 3}}},
    {"config:0-7,32-35", 0, 2, {{PERF_CONFIG, 0, 7}, {PERF_CONFIG, 32, 35}}},
    /* Pieces in value order, not bit order. */
    {"config:32-35,0-7\n", 0, 2, {{PERF_CONFIG, 32, 35}, {PERF_CONFIG, 0, 7}}},
    {"config:0-63", 0, 1, {{PERF_CONFIG, 0, 63}}},
    {"config:63", 0, 1, {{PERF_CONFIG, 63, 63}}},
    {"config:5-5", 0, 1, {{PERF_CONFIG, 5, 5}}},
    {"config:007-08", 0, 1, {{PERF_CONFIG, 7, 8}}},
    {"config:0,2,4,6,8,10,12,14",
     0,
     8,
     {{PERF_CONFIG, 0, 0},
      {PERF_CONFIG, 2, 2},
      {PERF_CONFIG, 4, 4},
      {PERF_CONFIG, 6, 6},
      {PERF_CONFIG, 8, 8},
      {PERF_CONFIG, 10, 10},
      {PERF_CONFIG, 12, 12},
      {PERF_CONFIG, 14, 14}}},
    {"", -EINVAL},
    {"\n", -EINVAL},
    {"config", -EINVAL},
    {"config:", -EINVAL},
    {"config:\n", -EINVAL},
    {"config:-1", -EINVAL},
    {"config:1-", -EINVAL},
    {"config:8-4", -EINVAL},
    {"config:64", -EINVAL},
    {"config:0-64", -EINVAL},
    {"config:99999999999999999999999", -EINVAL},
    {"config:0-7,4-9", -EINVAL},
    {"config:1,1", -EINVAL},
    {"config:0-63,0", -EINVAL},
    {"config:0,2,4,6,8,10,12,14,16", -EINVAL},
    {"config0:0", -EINVAL},
    {"config4:0", -EINVAL},
    {"config12:0", -EINVAL},
    {"Config:0", -EINVAL},
    {" config:0", -EINVAL},
    {"config :0", -EINVAL},
    {"config: 0", -EINVAL},
    {"config:0 ", -EINVAL},
    {"config:0-7 junk", -EINVAL},
    {"config:0\n\n", -EINVAL},
    {"config:0\r\n", -EINVAL},
    {"config:0\nx", -EINVAL},
    {"config:0,", -EINVAL},
    {"config:,0", -EINVAL},
    {"config:+1", -EINVAL},
    {"config:0x1", -EINVAL},
    {"config:1--3", -EINVAL},
    {"config:0-7,config1:0-3", -EINVAL},
    {"config1=0-3", -EINVAL},
};

static void test_format_parse_table(void **state)
{
        int failed = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
                const struct format_row *r = &format_rows[i];
                struct perf_format fmt;
                int ret, bad = 0;

                memset(&fmt, 0xff, sizeof(fmt));
                snprintf(fmt.name, sizeof(fmt.name), "keep");
                ret = perf_format_parse(r->text, &fmt);
                if (ret != r->ret) {
                        bad++;
                } else if (ret == 0) {
                        bad += fmt.piece_count != r->count;
                        for (size_t p = 0; p < r->count && p < fmt.piece_count; p++)
                                bad += fmt.pieces[p].word != r->pieces[p].word ||
                                       fmt.pieces[p].lo != r->pieces[p].lo ||
                                       fmt.pieces[p].hi != r->pieces[p].hi;
                        bad += strcmp(fmt.name, "keep") != 0;
                }
                if (bad) {
                        print_message("# format '%s': returned %d (expected %d), %zu pieces\n",
                                      r->text, ret, r->ret, ret ? (size_t)0 : fmt.piece_count);
                        failed++;
                }
        }
        assert_int_equal(failed, 0);
}

/* ---- width, apply, extract ---- */

static struct perf_format parsed(const char *text)
{
        struct perf_format fmt;

        memset(&fmt, 0, sizeof(fmt));
        assert_int_equal(perf_format_parse(text, &fmt), 0);
        return fmt;
}

static void test_format_width(void **state)
{
        (void)state;
        assert_int_equal(perf_format_width(&(struct perf_format){0}), 0);
        {
                struct perf_format f = parsed("config:0-16");
                assert_int_equal(perf_format_width(&f), 17);
        }
        {
                struct perf_format f = parsed("config1:4");
                assert_int_equal(perf_format_width(&f), 1);
        }
        {
                struct perf_format f = parsed("config:0-7,32-35");
                assert_int_equal(perf_format_width(&f), 12);
        }
        {
                struct perf_format f = parsed("config:0-63");
                assert_int_equal(perf_format_width(&f), 64);
        }
}

static void test_format_apply_pieces(void **state)
{
        struct perf_format split = parsed("config:0-7,32-35");
        struct perf_format reversed = parsed("config:32-35,0-7");
        struct perf_format bdf = parsed("config2:16-31");
        struct perf_format bit = parsed("config1:4");
        struct perf_event_attr attr;

        (void)state;
        /* Low value bits into the first piece. */
        memset(&attr, 0, sizeof(attr));
        assert_int_equal(perf_format_apply(&split, 0xabc, &attr), 0);
        assert_true(attr.config == 0xa000000bcull);
        assert_true(perf_format_extract(&split, &attr) == 0xabc);
        memset(&attr, 0, sizeof(attr));
        assert_int_equal(perf_format_apply(&reversed, 0xabc, &attr), 0);
        assert_true(attr.config == 0xc000000abull);
        assert_true(perf_format_extract(&reversed, &attr) == 0xabc);

        /* The field's bits are cleared first; the others are kept. */
        memset(&attr, 0, sizeof(attr));
        attr.config = UINT64_MAX;
        attr.config1 = 0x5555;
        assert_int_equal(perf_format_apply(&split, 0, &attr), 0);
        assert_true(attr.config == ~0xf000000ffull);
        assert_true(attr.config1 == 0x5555);
        assert_int_equal(perf_format_apply(&split, 0x123, &attr), 0);
        assert_true(attr.config == (~0xf000000ffull | 0x100000023ull));

        /* -ERANGE leaves the attr alone. */
        assert_int_equal(perf_format_apply(&split, 0x1000, &attr), -ERANGE);
        assert_true(attr.config == (~0xf000000ffull | 0x100000023ull));
        assert_int_equal(perf_format_apply(&bit, 2, &attr), -ERANGE);
        assert_true(attr.config1 == 0x5555);
        assert_int_equal(perf_format_apply(&bdf, 0x10000, &attr), -ERANGE);
        assert_true(attr.config2 == 0);
        assert_int_equal(perf_format_apply(&bdf, UINT64_MAX, &attr), -ERANGE);

        /* One bit, and the top of the word. */
        assert_int_equal(perf_format_apply(&bit, 1, &attr), 0);
        assert_true(attr.config1 == 0x5555);
        assert_int_equal(perf_format_apply(&bit, 0, &attr), 0);
        assert_true(attr.config1 == 0x5545);
        assert_int_equal(perf_format_apply(&bdf, 0x3900, &attr), 0);
        assert_true(attr.config2 == 0x39000000ull);
        assert_true(perf_format_extract(&bdf, &attr) == 0x3900);
}

static void test_format_full_width(void **state)
{
        struct perf_format all = parsed("config:0-63");
        struct perf_format top = parsed("config:63");
        struct perf_event_attr attr;

        (void)state;
        memset(&attr, 0, sizeof(attr));
        assert_int_equal(perf_format_apply(&all, UINT64_MAX, &attr), 0);
        assert_true(attr.config == UINT64_MAX);
        assert_true(perf_format_extract(&all, &attr) == UINT64_MAX);
        assert_int_equal(perf_format_apply(&top, 0, &attr), 0);
        assert_true(attr.config == UINT64_MAX >> 1);
        assert_int_equal(perf_format_apply(&top, 1, &attr), 0);
        assert_true(attr.config == UINT64_MAX);
        assert_int_equal(perf_format_apply(&top, 2, &attr), -ERANGE);
}

/* Field by field: the structs have padding. */
static void assert_pieces_equal(const struct perf_format *a, const struct perf_format *b)
{
        assert_int_equal(a->piece_count, b->piece_count);
        for (size_t i = 0; i < a->piece_count && i < PERF_FORMAT_PIECES; i++) {
                assert_int_equal(a->pieces[i].word, b->pieces[i].word);
                assert_int_equal(a->pieces[i].lo, b->pieces[i].lo);
                assert_int_equal(a->pieces[i].hi, b->pieces[i].hi);
        }
}

/* A small deterministic PRNG (xorshift64*): the same cases every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1dull;
}

/* Bits of attr words a format covers, computed from its pieces. */
static void field_masks(const struct perf_format *f, uint64_t masks[4])
{
        memset(masks, 0, 4 * sizeof(masks[0]));
        for (size_t i = 0; i < f->piece_count; i++) {
                const struct perf_format_piece *p = &f->pieces[i];

                for (unsigned int b = p->lo; b <= p->hi; b++)
                        masks[p->word] |= 1ull << b;
        }
}

static void attr_words(const struct perf_event_attr *attr, uint64_t w[3])
{
        w[0] = attr->config;
        w[1] = attr->config1;
        w[2] = attr->config2;
}

/* apply then extract gives the value back, and no bit outside the field
 * moves, for random values and random surrounding bits. */
static void round_trip(const struct perf_format *f)
{
        unsigned int width = perf_format_width(f);
        uint64_t masks[4], before[3], after[3];

        field_masks(f, masks);
        for (int i = 0; i < 200; i++) {
                struct perf_event_attr attr;
                uint64_t value = rng();

                if (width < 64)
                        value &= (1ull << width) - 1;
                memset(&attr, 0, sizeof(attr));
                attr.config = rng();
                attr.config1 = rng();
                attr.config2 = rng();
                attr_words(&attr, before);
                assert_int_equal(perf_format_apply(f, value, &attr), 0);
                assert_true(perf_format_extract(f, &attr) == value);
                attr_words(&attr, after);
                for (int w = 0; w < 3; w++)
                        assert_true((before[w] & ~masks[w]) == (after[w] & ~masks[w]));
                /* The field's bits hold exactly the value's bits. */
                assert_int_equal(__builtin_popcountll(value),
                                 __builtin_popcountll(after[0] & masks[0]) +
                                     __builtin_popcountll(after[1] & masks[1]) +
                                     __builtin_popcountll(after[2] & masks[2]));
        }
}

static void test_format_round_trips(void **state)
{
        static const char *const texts[] = {
            "config:0-16",   "config1:0-3",      "config1:4",        "config1:10-11",
            "config2:0-15",  "config2:16-31",    "config:0-7,32-35", "config:36-47",
            "config:48-50",  "config:60-63,0-3", "config:0-63",      "config:1,3,5,7,9,11,13,15",
            "config1:63,0-1"};

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
                struct perf_format f = parsed(texts[i]);

                round_trip(&f);
        }
}

static void test_format_config3(void **state)
{
        struct perf_format f = parsed("config3:0-3");
        struct perf_event_attr attr;

        (void)state;
        memset(&attr, 0, sizeof(attr));
#ifdef PERF_ATTR_SIZE_VER8
        assert_int_equal(perf_format_apply(&f, 0x5, &attr), 0);
        assert_true(attr.config3 == 0x5);
        assert_true(perf_format_extract(&f, &attr) == 0x5);
#else
        /* This build's perf_event_attr has no config3 field. */
        assert_int_equal(perf_format_apply(&f, 0x5, &attr), -EOPNOTSUPP);
        assert_true(perf_format_extract(&f, &attr) == 0);
#endif
        assert_int_equal(perf_format_apply(&f, 0x10, &attr), -ERANGE);
        assert_true(attr.config == 0 && attr.config1 == 0 && attr.config2 == 0);
}

/* ---- perf_event_terms_parse ---- */

struct term {
        const char *name;
        uint64_t value;
        bool asked;
};

struct terms_row {
        const char *text;
        int ret;
        size_t count;
        struct term terms[PERF_EVENT_TERMS];
};

#define NAME63 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"

static const struct terms_row terms_rows[] = {
    {"config=0x10010", 0, 1, {{"config", 0x10010}}},
    {"config=0x10010\n", 0, 1, {{"config", 0x10010}}},
    {"event=0x83,umask=0x04", 0, 2, {{"event", 0x83}, {"umask", 0x04}}},
    {"event=0xff,umask=0x20,", 0, 2, {{"event", 0xff}, {"umask", 0x20}}},
    {"event=0xff,umask=0x20,\n", 0, 2, {{"event", 0xff}, {"umask", 0x20}}},
    {"edge", 0, 1, {{"edge", 1}}},
    {"event=0x01,umask=0x01,edge\n", 0, 3, {{"event", 1}, {"umask", 1}, {"edge", 1}}},
    {"period=100,inv", 0, 2, {{"period", 100}, {"inv", 1}}},
    /* perf reads numbers without 0x as decimal, leading zeros too. */
    {"event=010", 0, 1, {{"event", 10}}},
    {"event=0", 0, 1, {{"event", 0}}},
    {"event=0XAB", 0, 1, {{"event", 0xab}}},
    {"ch_mask=0xFFF,fc_mask=7", 0, 2, {{"ch_mask", 0xfff}, {"fc_mask", 7}}},
    {"config=0xffffffffffffffff", 0, 1, {{"config", UINT64_MAX}}},
    {"config=18446744073709551615", 0, 1, {{"config", UINT64_MAX}}},
    {"_x=1", 0, 1, {{"_x", 1}}},
    {NAME63 "=2", 0, 1, {{NAME63, 2}}},
    {"a,b,c,d,e,f,g,h",
     0,
     8,
     {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}, {"g", 1}, {"h", 1}}},
    {"a,b,c,d,e,f,g,h,i", -EINVAL},
    {NAME63 "l=2", -EINVAL},
    {"", -EINVAL},
    {"\n", -EINVAL},
    {",", -EINVAL},
    {",event=1", -EINVAL},
    {"event=1,,umask=1", -EINVAL},
    {"event=", -EINVAL},
    {"event=\n", -EINVAL},
    {"event=0x", -EINVAL},
    {"event=0xg", -EINVAL},
    {"event=0x0x12", -EINVAL},
    {"event=-1", -EINVAL},
    {"event=+1", -EINVAL},
    {"event= 1", -EINVAL},
    {"event =1", -EINVAL},
    {"event=1 ", -EINVAL},
    {"event=1, umask=2", -EINVAL},
    {"event=1;umask=2", -EINVAL},
    {"event=1g", -EINVAL},
    {"event=1.5", -EINVAL},
    {"event==1", -EINVAL},
    {"=1", -EINVAL},
    {"1event=1", -EINVAL},
    {"ev-ent=1", -EINVAL},
    /* perf's parameterised events: the user gives "?" terms (dwc_pcie). */
    {"event=?", 0, 1, {{"event", 0, true}}},
    {"eventid=0x600,type=0x1,lane=?\n", 0, 3, {{"eventid", 0x600}, {"type", 1}, {"lane", 0, true}}},
    {"event=??", -EINVAL},
    {"event=?1", -EINVAL},
    {"event=0x10000000000000000", -EINVAL},
    {"event=18446744073709551616", -EINVAL},
    {"event=1\n\n", -EINVAL},
    {"event=1\r\n", -EINVAL},
    {"event=1,\n,", -EINVAL},
    {"event=1,,", -EINVAL},
};

static void test_terms_parse_table(void **state)
{
        int failed = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(terms_rows); i++) {
                const struct terms_row *r = &terms_rows[i];
                struct perf_pmu_event ev;
                int ret, bad = 0;

                memset(&ev, 0xff, sizeof(ev));
                snprintf(ev.name, sizeof(ev.name), "keep");
                snprintf(ev.unit, sizeof(ev.unit), "MiB");
                ev.scale = 2.5;
                ret = perf_event_terms_parse(r->text, &ev);
                if (ret != r->ret) {
                        bad++;
                } else if (ret == 0) {
                        bad += ev.term_count != r->count;
                        for (size_t t = 0; t < r->count && t < ev.term_count; t++)
                                bad += !memchr(ev.terms[t].name, '\0', PERF_PMU_NAME_MAX) ||
                                       strcmp(ev.terms[t].name, r->terms[t].name) ||
                                       ev.terms[t].value != r->terms[t].value ||
                                       ev.terms[t].asked != r->terms[t].asked;
                        bad += strcmp(ev.name, "keep") || strcmp(ev.unit, "MiB") || ev.scale != 2.5;
                }
                if (bad) {
                        print_message("# terms '%s': returned %d (expected %d)\n", r->text, ret,
                                      r->ret);
                        failed++;
                }
        }
        assert_int_equal(failed, 0);
}

/* ---- perf_cpu_list_parse ---- */

static void test_cpu_list_parse(void **state)
{
        static const struct {
                const char *text;
                int ret;
                int cpus[8];
        } rows[] = {
            {"0\n", 1, {0}},
            {"0,56\n", 2, {0, 56}},
            {"0-3,8,10-11", 7, {0, 1, 2, 3, 8, 10, 11}},
            {"5-5", 1, {5}},
            {"", 0},
            {"\n", 0},
            {"1048575", 1, {1048575}},
            {"3-1", -EINVAL},
            {"1,1", -EINVAL},
            {"2,1", -EINVAL},
            {"0-3,3", -EINVAL},
            {"0-3,2-5", -EINVAL},
            {"a", -EINVAL},
            {"-1", -EINVAL},
            {"+1", -EINVAL},
            {"0,", -EINVAL},
            {",0", -EINVAL},
            {"0 ", -EINVAL},
            {" 0", -EINVAL},
            {"0--1", -EINVAL},
            {"0x1", -EINVAL},
            {"1048576", -EINVAL},
            {"0-1048576", -EINVAL},
            {"99999999999999999999999", -EINVAL},
            {"0\n\n", -EINVAL},
        };
        int cpus[8];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                int ret;

                memset(cpus, 0xff, sizeof(cpus));
                ret = perf_cpu_list_parse(rows[i].text, cpus, ARRAY_SIZE(cpus));
                if (ret != rows[i].ret)
                        print_message("# cpu list '%s': %d, expected %d\n", rows[i].text, ret,
                                      rows[i].ret);
                assert_int_equal(ret, rows[i].ret);
                for (int c = 0; c < ret; c++)
                        assert_int_equal(cpus[c], rows[i].cpus[c]);
                /* Nothing written past the list. */
                for (int c = ret < 0 ? 0 : ret; c < 8; c++)
                        assert_int_equal(cpus[c], -1);
        }

        /* More CPUs than room: the count of all, the first @max filled. */
        memset(cpus, 0xff, sizeof(cpus));
        assert_int_equal(perf_cpu_list_parse("0-1048575", cpus, 4), 1048576);
        for (int c = 0; c < 4; c++)
                assert_int_equal(cpus[c], c);
        assert_int_equal(cpus[4], -1);
        assert_int_equal(perf_cpu_list_parse("2,4-6,9", cpus, 3), 5);
        assert_int_equal(cpus[0], 2);
        assert_int_equal(cpus[1], 4);
        assert_int_equal(cpus[2], 5);
        assert_int_equal(cpus[3], 3); /* from the call before */
        /* Counting only. */
        assert_int_equal(perf_cpu_list_parse("0-63,128-191\n", NULL, 0), 128);
        assert_int_equal(perf_cpu_list_parse("0", NULL, 1), -EINVAL);
}

/* ---- hisi_pcie fixture ---- */

static const struct {
        const char *name;
        uint64_t config;
} hisi_events[] = {
    {"rx_cpl_flux", 0x2004},  {"rx_cpl_time", 0x12004},  {"rx_mrd_cnt", 0x10210},
    {"rx_mrd_flux", 0x804},   {"rx_mrd_latency", 0x210}, {"rx_mrd_time", 0x10804},
    {"rx_mwr_cnt", 0x10010},  {"rx_mwr_flux", 0x104},    {"rx_mwr_latency", 0x10},
    {"rx_mwr_time", 0x10104}, {"tx_cpl_flux", 0x1005},   {"tx_cpl_time", 0x11005},
    {"tx_mrd_cnt", 0x10011},  {"tx_mrd_flux", 0x405},    {"tx_mrd_latency", 0x11},
    {"tx_mrd_time", 0x10405}, {"tx_mwr_flux", 0x105},    {"tx_mwr_time", 0x10105},
};

static void test_hisi_pcie(void **state)
{
        static const char *const fields[] = {"bdf",     "event",    "len_mode", "port",
                                             "thr_len", "thr_mode", "trig_len", "trig_mode"};
        struct log_capture log;
        struct hw_env env;
        struct perf_pmu *pmu = (struct perf_pmu *)&env; /* poison */
        struct perf_event_attr attr;
        uint64_t v;

        (void)state;
        fixture_env(&env, &log);
        assert_int_equal(perf_pmu_load(&env, "hisi_pcie0_core1", &pmu), 0);
        assert_non_null(pmu);
        assert_int_equal(log.warnings + log.others, 0);
        assert_string_equal(perf_pmu_name(pmu), "hisi_pcie0_core1");
        assert_int_equal(perf_pmu_type(pmu), 43);
        assert_int_equal(perf_pmu_cpu_count(pmu), 1);
        assert_int_equal(perf_pmu_cpu(pmu, 0), 0);
        assert_int_equal(perf_pmu_cpu(pmu, 1), -1);

        /* Formats, in name order. */
        assert_int_equal(perf_pmu_format_count(pmu), ARRAY_SIZE(fields));
        for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
                assert_string_equal(perf_pmu_format_at(pmu, i)->name, fields[i]);
        assert_null(perf_pmu_format_at(pmu, ARRAY_SIZE(fields)));
        assert_int_equal(perf_format_width(perf_pmu_format(pmu, "event")), 17);
        assert_int_equal(perf_pmu_format(pmu, "len_mode")->pieces[0].word, PERF_CONFIG1);
        assert_int_equal(perf_pmu_format(pmu, "len_mode")->pieces[0].lo, 10);
        assert_int_equal(perf_pmu_format(pmu, "len_mode")->pieces[0].hi, 11);
        assert_null(perf_pmu_format(pmu, "umask"));

        /* Every event, in name order, with its code in config. */
        assert_int_equal(perf_pmu_event_count(pmu), ARRAY_SIZE(hisi_events));
        for (size_t i = 0; i < ARRAY_SIZE(hisi_events); i++) {
                const struct perf_pmu_event *ev = perf_pmu_event_at(pmu, i);

                assert_string_equal(ev->name, hisi_events[i].name);
                assert_int_equal(ev->term_count, 1);
                assert_string_equal(ev->terms[0].name, "config");
                assert_true(ev->scale == 1.0);
                assert_string_equal(ev->unit, "");
                assert_false(ev->per_pkg);
                assert_false(ev->snapshot);
                memset(&attr, 0xff, sizeof(attr));
                assert_int_equal(perf_pmu_event_attr(pmu, hisi_events[i].name, &attr), 0);
                assert_true(attr.config == hisi_events[i].config);
                assert_int_equal(attr.type, 43);
                assert_int_equal(attr.size, sizeof(attr));
                assert_true(attr.config1 == 0 && attr.config2 == 0);
                assert_true(attr.sample_period == 0 && attr.read_format == 0);
        }
        assert_null(perf_pmu_event_at(pmu, ARRAY_SIZE(hisi_events)));

        /* rx_mwr_cnt and the filters. */
        assert_int_equal(perf_pmu_event_attr(pmu, "rx_mwr_cnt", &attr), 0);
        assert_true(attr.config == 0x10010);
        assert_true(perf_format_extract(perf_pmu_format(pmu, "event"), &attr) == 0x10010);
        assert_int_equal(perf_pmu_set(pmu, &attr, "port", 0x101), 0);
        assert_true(attr.config2 == 0x101);
        assert_int_equal(perf_pmu_event_attr(pmu, "rx_mwr_flux", &attr), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "bdf", 0x3900), 0);
        assert_true(attr.config2 == 0x39000000ull);
        assert_int_equal(perf_pmu_set(pmu, &attr, "port", 0x101), 0);
        assert_true(attr.config2 == 0x39000101ull);
        assert_int_equal(perf_pmu_set(pmu, &attr, "len_mode", 3), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "thr_len", 10), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "thr_mode", 1), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "trig_len", 4), 0);
        assert_true(attr.config1 == (3ull << 10 | 4ull << 5 | 1ull << 4 | 10));
        assert_int_equal(perf_pmu_set(pmu, &attr, "port", 0x10000), -ERANGE);
        assert_int_equal(perf_pmu_set(pmu, &attr, "thr_mode", 2), -ERANGE);
        assert_int_equal(perf_pmu_set(pmu, &attr, "len_mode", 4), -ERANGE);
        assert_int_equal(perf_pmu_set(pmu, &attr, "umask", 1), -ENOENT);
        assert_true(attr.config == 0x104 && attr.config2 == 0x39000101ull);
        assert_int_equal(perf_pmu_event_attr(pmu, "rx_mwr_bogus", &attr), -ENOENT);
        assert_null(perf_pmu_event(pmu, "rx_mwr_bogus"));

        /* Numeric attribute files. */
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "identifier", &v), 0);
        assert_true(v == 0x30);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "bus", &v), 0);
        assert_true(v == 0);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "bdf_min", &v), 0);
        assert_true(v == 0x40);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "bdf_max", &v), 0);
        assert_true(v == 0x78);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "type", &v), 0);
        assert_true(v == 43);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "no_such_file", &v), -ENOENT);
        assert_int_equal(perf_pmu_read_u64(&env, pmu, "../uncore_iio_0/type", &v), -EINVAL);
        perf_pmu_free(pmu);
}

/* ---- Intel-uncore-like fixtures ---- */

static void test_uncore_free_running(void **state)
{
        struct log_capture log;
        struct hw_env env;
        struct perf_pmu *pmu;
        const struct perf_pmu_event *ev;
        struct perf_event_attr attr;

        (void)state;
        fixture_env(&env, &log);
        assert_int_equal(perf_pmu_load(&env, "uncore_iio_free_running_0", &pmu), 0);
        assert_int_equal(log.warnings, 0);
        assert_int_equal(perf_pmu_type(pmu), 28);
        assert_int_equal(perf_pmu_cpu_count(pmu), 2);
        assert_int_equal(perf_pmu_cpu(pmu, 0), 0);
        assert_int_equal(perf_pmu_cpu(pmu, 1), 56);
        /* .scale and .unit are not events of their own. */
        assert_int_equal(perf_pmu_event_count(pmu), 3);
        assert_null(perf_pmu_event(pmu, "bw_in_port0.scale"));
        assert_null(perf_pmu_event(pmu, "bw_in_port0.unit"));

        ev = perf_pmu_event(pmu, "bw_in_port0");
        assert_non_null(ev);
        assert_true(ev->scale == 3.814697265625e-6);
        assert_string_equal(ev->unit, "MiB");
        assert_false(ev->per_pkg);
        assert_int_equal(perf_pmu_event_attr(pmu, "bw_in_port0", &attr), 0);
        assert_true(attr.config == (0xff | 0x20 << 8));
        assert_int_equal(attr.type, 28);
        assert_int_equal(perf_pmu_event_attr(pmu, "bw_in_port1", &attr), 0);
        assert_true(attr.config == (0xff | 0x21 << 8));

        ev = perf_pmu_event(pmu, "ioclk");
        assert_true(ev->scale == 1.0);
        assert_string_equal(ev->unit, "");
        assert_int_equal(perf_pmu_event_attr(pmu, "ioclk", &attr), 0);
        assert_true(attr.config == 0x10ff);
        perf_pmu_free(pmu);
}

static void test_uncore_programmable(void **state)
{
        struct log_capture log;
        struct hw_env env;
        struct perf_pmu *pmu;
        const struct perf_pmu_event *ev;
        struct perf_event_attr attr;

        (void)state;
        fixture_env(&env, &log);
        assert_int_equal(perf_pmu_load(&env, "uncore_iio_0", &pmu), 0);
        assert_int_equal(log.warnings, 0);
        assert_int_equal(perf_pmu_type(pmu), 29);
        assert_int_equal(perf_pmu_format_count(pmu), 10);
        assert_int_equal(perf_pmu_event_count(pmu), 3);

        ev = perf_pmu_event(pmu, "data_req_of_cpu_mem_read_part0");
        assert_non_null(ev);
        assert_int_equal(ev->term_count, 4);
        assert_true(ev->per_pkg);
        assert_false(ev->snapshot);
        assert_true(ev->scale == 4.0);
        assert_string_equal(ev->unit, "Bytes");
        assert_int_equal(perf_pmu_event_attr(pmu, ev->name, &attr), 0);
        assert_true(attr.config == (0x83ull | 0x04ull << 8 | 0x01ull << 36 | 0x07ull << 48));

        /* A bare term means 1. */
        assert_int_equal(perf_pmu_event_attr(pmu, "clockticks", &attr), 0);
        assert_true(attr.config == (0x01ull | 0x01ull << 8 | 1ull << 18));
        ev = perf_pmu_event(pmu, "occupancy");
        assert_true(ev->snapshot);
        assert_false(ev->per_pkg);

        /* Fields in every word, and the two-piece one. */
        assert_int_equal(perf_pmu_set(pmu, &attr, "event_ext", 0xabc), 0);
        assert_true(attr.config == (0xa000000bcull | 0x01ull << 8 | 1ull << 18));
        assert_int_equal(perf_pmu_set(pmu, &attr, "event_ext", 0x1000), -ERANGE);
        assert_int_equal(perf_pmu_set(pmu, &attr, "filter_tid", 0x1ff), 0);
        assert_true(attr.config1 == 0x1ff);
        assert_int_equal(perf_pmu_set(pmu, &attr, "filter_tid", 0x200), -ERANGE);
        assert_int_equal(perf_pmu_set(pmu, &attr, "filter_opc", 0x5a), 0);
        assert_true(attr.config2 == 0x5a);
        assert_int_equal(perf_pmu_set(pmu, &attr, "thresh", 0xfff), 0);
        assert_true(perf_format_extract(perf_pmu_format(pmu, "thresh"), &attr) == 0xfff);
        assert_true((attr.config >> 24 & 0xfff) == 0xfff);
        assert_int_equal(perf_pmu_set(pmu, &attr, "fc_mask", 8), -ERANGE);
        perf_pmu_free(pmu);
}

/* ---- listing ---- */

static void test_list(void **state)
{
        static const char *const all[] = {"broken_notype",
                                          "broken_pmu0",
                                          "broken_type",
                                          "hisi_pcie0_core1",
                                          "uncore_iio_0",
                                          "uncore_iio_1",
                                          "uncore_iio_free_running_0"};
        struct hw_env env, none = {0};
        char **names;

        (void)state;
        fixture_env(&env, NULL);
        assert_int_equal(perf_pmu_list(&env, "uncore_iio", &names), 3);
        assert_string_equal(names[0], "uncore_iio_0");
        assert_string_equal(names[1], "uncore_iio_1");
        assert_string_equal(names[2], "uncore_iio_free_running_0");
        assert_null(names[3]);
        perf_pmu_list_free(names);

        assert_int_equal(perf_pmu_list(&env, "", &names), ARRAY_SIZE(all));
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                assert_string_equal(names[i], all[i]);
        assert_null(names[ARRAY_SIZE(all)]);
        perf_pmu_list_free(names);

        assert_int_equal(perf_pmu_list(&env, NULL, &names), ARRAY_SIZE(all));
        perf_pmu_list_free(names);

        assert_int_equal(perf_pmu_list(&env, "hisi_pcie", &names), 1);
        assert_string_equal(names[0], "hisi_pcie0_core1");
        perf_pmu_list_free(names);

        assert_int_equal(perf_pmu_list(&env, "arm_cmn", &names), 0);
        assert_non_null(names);
        assert_null(names[0]);
        perf_pmu_list_free(names);

        /* No devices directory, no sysfs root. */
        env.sysfs_root = FIXTURE_PMU "/bus";
        names = (char **)&env;
        assert_int_equal(perf_pmu_list(&env, "", &names), -ENOENT);
        assert_null(names);
        assert_int_equal(perf_pmu_list(&none, "", &names), -ENOENT);
        perf_pmu_list_free(NULL);
}

/* ---- broken fixtures ---- */

static void test_broken(void **state)
{
        static const char *const bad_files[] = {"broken_pmu0/cpumask",
                                                "broken_pmu0/format/bad_range",
                                                "broken_pmu0/format/bad_word",
                                                "broken_pmu0/format/bad_junk",
                                                "broken_pmu0/format/overlap",
                                                "broken_pmu0/format/hi64",
                                                "broken_pmu0/events/junk_event",
                                                "broken_pmu0/events/space_event",
                                                "broken_pmu0/events/bad_scale_event.scale"};
        struct log_capture log;
        struct hw_env env;
        struct perf_pmu *pmu;
        struct perf_event_attr attr;

        (void)state;
        fixture_env(&env, &log);
        assert_int_equal(perf_pmu_load(&env, "broken_pmu0", &pmu), 0);
        /* One warning per bad file, each naming it by its full path. */
        assert_int_equal(log.warnings, ARRAY_SIZE(bad_files));
        assert_int_equal(log.others, 0);
        for (size_t i = 0; i < ARRAY_SIZE(bad_files); i++) {
                char path[512];

                snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s: ", FIXTURE_PMU,
                         bad_files[i]);
                if (log_lines_with(&log, path) != 1)
                        print_message("# no single warning for %s in:\n%s", path, log.text);
                assert_int_equal(log_lines_with(&log, path), 1);
        }
        assert_int_equal(log_lines_with(&log, "perf PMU broken_pmu0: "), ARRAY_SIZE(bad_files));
        assert_int_equal(log_lines_with(&log, "orphan"), 0);

        /* The good parts survive. */
        assert_int_equal(perf_pmu_type(pmu), 50);
        assert_int_equal(perf_pmu_cpu_count(pmu), 0);
        assert_int_equal(perf_pmu_format_count(pmu), 2);
        assert_string_equal(perf_pmu_format_at(pmu, 0)->name, "event");
        assert_string_equal(perf_pmu_format_at(pmu, 1)->name, "umask");
        assert_int_equal(perf_pmu_event_count(pmu), 3);
        assert_string_equal(perf_pmu_event_at(pmu, 0)->name, "ok_event");
        assert_string_equal(perf_pmu_event_at(pmu, 1)->name, "too_wide_event");
        assert_string_equal(perf_pmu_event_at(pmu, 2)->name, "unknown_field_event");
        assert_null(perf_pmu_event(pmu, "orphan"));
        assert_null(perf_pmu_event(pmu, "bad_scale_event"));
        assert_int_equal(perf_pmu_event_attr(pmu, "ok_event", &attr), 0);
        assert_true(attr.config == 1);
        assert_int_equal(perf_pmu_event_attr(pmu, "unknown_field_event", &attr), -ENOENT);
        assert_int_equal(perf_pmu_event_attr(pmu, "too_wide_event", &attr), -ERANGE);
        perf_pmu_free(pmu);

        /* `type` missing or not a number: the PMU cannot be used. */
        pmu = (struct perf_pmu *)&env;
        assert_int_equal(perf_pmu_load(&env, "broken_notype", &pmu), -EBADMSG);
        assert_null(pmu);
        assert_int_equal(perf_pmu_load(&env, "broken_type", &pmu), -EBADMSG);
        assert_null(pmu);
}

static void test_load_absent_and_bad_names(void **state)
{
        struct hw_env env, none = {0};
        struct perf_pmu *pmu = (struct perf_pmu *)&env;
        char long_name[PERF_PMU_NAME_MAX + 1];

        (void)state;
        fixture_env(&env, NULL);
        assert_int_equal(perf_pmu_load(&env, "hisi_pcie9_core9", &pmu), -ENOENT);
        assert_null(pmu);
        assert_int_equal(perf_pmu_load(&none, "hisi_pcie0_core1", &pmu), -ENOENT);
        assert_int_equal(perf_pmu_load(&env, "", &pmu), -EINVAL);
        assert_int_equal(perf_pmu_load(&env, "..", &pmu), -EINVAL);
        assert_int_equal(perf_pmu_load(&env, "../devices/hisi_pcie0_core1", &pmu), -EINVAL);
        memset(long_name, 'a', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        assert_int_equal(perf_pmu_load(&env, long_name, &pmu), -EINVAL);
        assert_null(pmu);
        perf_pmu_free(NULL);
}

/* ---- temporary trees for the limits ---- */

struct tree {
        char root[64];
        struct hw_env env;
        struct log_capture log;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int tree_setup(void **state)
{
        struct tree *t = calloc(1, sizeof(*t));

        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/test_perf_pmu.XXXXXX");
        if (!mkdtemp(t->root)) {
                free(t);
                return -1;
        }
        t->env.sysfs_root = t->root;
        t->env.log = capture_log;
        t->env.log_ctx = &t->log;
        *state = t;
        return 0;
}

static int tree_teardown(void **state)
{
        struct tree *t = *state;

        nftw(t->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(t);
        return 0;
}

static void mkdirs(const char *path)
{
        char tmp[512];

        snprintf(tmp, sizeof(tmp), "%s", path);
        for (char *p = tmp + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                mkdir(tmp, 0755);
                *p = '/';
        }
        mkdir(tmp, 0755);
}

/* Writes @text at devices/@rel; NULL makes a directory. */
static void put(const struct tree *t, const char *rel, const char *text)
{
        char path[512];
        char *slash;
        int fd;

        snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", t->root, rel);
        if (!text) {
                mkdirs(path);
                return;
        }
        slash = strrchr(path, '/');
        *slash = '\0';
        mkdirs(path);
        *slash = '/';
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static void test_format_limit(void **state)
{
        struct tree *t = *state;
        struct perf_pmu *pmu;
        char rel[128];

        put(t, "many/type", "7\n");
        for (int i = 0; i < PERF_PMU_MAX_FORMATS; i++) {
                snprintf(rel, sizeof(rel), "many/format/f%02d", i);
                put(t, rel, "config:0\n");
        }
        /* Bad files do not count against the limit. */
        put(t, "many/format/zz_bad", "config:x\n");
        assert_int_equal(perf_pmu_load(&t->env, "many", &pmu), 0);
        assert_int_equal(perf_pmu_format_count(pmu), PERF_PMU_MAX_FORMATS);
        assert_string_equal(perf_pmu_format_at(pmu, 0)->name, "f00");
        assert_string_equal(perf_pmu_format_at(pmu, PERF_PMU_MAX_FORMATS - 1)->name, "f63");
        assert_int_equal(t->log.warnings, 1);
        perf_pmu_free(pmu);

        put(t, "many/format/one_more", "config:1\n");
        assert_int_equal(perf_pmu_load(&t->env, "many", &pmu), -E2BIG);
        assert_null(pmu);
}

static void test_event_limit(void **state)
{
        struct tree *t = *state;
        struct perf_pmu *pmu;
        char rel[128];

        put(t, "lots/type", "8\n");
        put(t, "lots/format/event", "config:0-15\n");
        for (int i = 0; i < PERF_PMU_MAX_EVENTS; i++) {
                char text[32];

                snprintf(rel, sizeof(rel), "lots/events/e%03d", i);
                snprintf(text, sizeof(text), "event=%d\n", i);
                put(t, rel, text);
        }
        assert_int_equal(perf_pmu_load(&t->env, "lots", &pmu), 0);
        assert_int_equal(perf_pmu_event_count(pmu), PERF_PMU_MAX_EVENTS);
        for (int i = 0; i < PERF_PMU_MAX_EVENTS; i += 73) {
                struct perf_event_attr attr;

                snprintf(rel, sizeof(rel), "e%03d", i);
                assert_string_equal(perf_pmu_event_at(pmu, (size_t)i)->name, rel);
                assert_int_equal(perf_pmu_event_attr(pmu, rel, &attr), 0);
                assert_true(attr.config == (uint64_t)i);
        }
        perf_pmu_free(pmu);

        put(t, "lots/events/one_more", "event=1\n");
        assert_int_equal(perf_pmu_load(&t->env, "lots", &pmu), -E2BIG);
}

static void test_tree_odd_files(void **state)
{
        struct tree *t = *state;
        struct perf_pmu *pmu;
        char big[PMU_BIG];
        const struct perf_pmu_event *ev;

        /* `cpus` when there is no `cpumask` (hybrid core PMUs). */
        put(t, "odd/type", "9\n");
        put(t, "odd/cpus", "0-3,8\n");
        put(t, "odd/format/event", "config:0-7\n");
        /* A directory, and a file larger than a sysfs page. */
        put(t, "odd/format/subdir", NULL);
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        put(t, "odd/events/huge", big);
        /* A unit too long, a negative scale, a good event with both. */
        put(t, "odd/events/long_unit", "event=1\n");
        put(t, "odd/events/long_unit.unit", "abcdefghijklmnopqrstuvwxyzabcdefg\n");
        put(t, "odd/events/neg_scale", "event=2\n");
        put(t, "odd/events/neg_scale.scale", "-1.0\n");
        put(t, "odd/events/zero_scale", "event=3\n");
        put(t, "odd/events/zero_scale.scale", "0\n");
        put(t, "odd/events/hexfloat", "event=3\n");
        put(t, "odd/events/hexfloat.scale", "0x1p-3\n");
        put(t, "odd/events/good", "event=4\n");
        put(t, "odd/events/good.scale", "0.5\n");
        put(t, "odd/events/good.unit", "Joules\n");
        put(t, "odd/events/.hidden", "event=5\n");
        assert_int_equal(perf_pmu_load(&t->env, "odd", &pmu), 0);
        assert_int_equal(perf_pmu_cpu_count(pmu), 5);
        assert_int_equal(perf_pmu_cpu(pmu, 4), 8);
        assert_int_equal(perf_pmu_format_count(pmu), 1);
        assert_int_equal(perf_pmu_event_count(pmu), 1);
        ev = perf_pmu_event_at(pmu, 0);
        assert_string_equal(ev->name, "good");
        assert_true(ev->scale == 0.5);
        assert_string_equal(ev->unit, "Joules");
        assert_int_equal(t->log.warnings, 6);
        assert_int_equal(log_lines_with(&t->log, "/odd/format/subdir: "), 1);
        assert_int_equal(log_lines_with(&t->log, "/odd/events/huge: "), 1);
        assert_int_equal(log_lines_with(&t->log, "/odd/events/long_unit.unit: "), 1);
        assert_int_equal(log_lines_with(&t->log, "/odd/events/neg_scale.scale: "), 1);
        assert_int_equal(log_lines_with(&t->log, "/odd/events/hexfloat.scale: "), 1);
        assert_int_equal(log_lines_with(&t->log, "/odd/events/zero_scale.scale: "), 1);
        perf_pmu_free(pmu);

        /* No format/ or events/ at all: a PMU with only a type. */
        put(t, "bare/type", "0x2a\n");
        assert_int_equal(perf_pmu_load(&t->env, "bare", &pmu), 0);
        assert_int_equal(perf_pmu_type(pmu), 42);
        assert_int_equal(perf_pmu_format_count(pmu), 0);
        assert_int_equal(perf_pmu_event_count(pmu), 0);
        assert_int_equal(perf_pmu_cpu_count(pmu), 0);
        assert_null(perf_pmu_event_at(pmu, 0));
        perf_pmu_free(pmu);

        /* A config3 term: applied where perf_event_attr has the field. */
        put(t, "c3/type", "10\n");
        put(t, "c3/format/ext", "config3:0-7\n");
        put(t, "c3/events/direct", "config=0x1,config3=0x2\n");
        put(t, "c3/events/via_field", "config=0x1,ext=0x3\n");
        assert_int_equal(perf_pmu_load(&t->env, "c3", &pmu), 0);
        assert_int_equal(perf_pmu_format_count(pmu), 1);
        {
                struct perf_event_attr attr;

#ifdef PERF_ATTR_SIZE_VER8
                assert_int_equal(perf_pmu_event_attr(pmu, "direct", &attr), 0);
                assert_true(attr.config == 1 && attr.config3 == 2);
                assert_int_equal(perf_pmu_event_attr(pmu, "via_field", &attr), 0);
                assert_true(attr.config == 1 && attr.config3 == 3);
#else
                assert_int_equal(perf_pmu_event_attr(pmu, "direct", &attr), -EOPNOTSUPP);
                assert_int_equal(perf_pmu_event_attr(pmu, "via_field", &attr), -EOPNOTSUPP);
                assert_true(attr.config == 1);
#endif
        }
        perf_pmu_free(pmu);

        /* A file where the PMU directory would be. */
        put(t, "afile", "x\n");
        assert_int_equal(perf_pmu_load(&t->env, "afile", &pmu), -ENOENT);

        /* A type beyond 32 bits. */
        put(t, "wide/type", "4294967296\n");
        assert_int_equal(perf_pmu_load(&t->env, "wide", &pmu), -EBADMSG);
}

/* ---- fuzzing the pure parsers ---- */

static const char fuzz_alphabet[] = "config123:-,=0x0123456789abcdefABCDEF_evntumsk \n\r\t;+.";

static const char *const fuzz_seeds[] = {
    "config:0-16\n",
    "config1:0-3",
    "config2:16-31",
    "config:0-7,32-35",
    "config3:63",
    "config=0x10010\n",
    "event=0x83,umask=0x04",
    "event=0xff,umask=0x20,",
    "edge,inv,thresh=0x5",
    "0-3,8,10-11\n",
    "0,56",
    "1048575",
};

/* Up to 4 random edits (replace, insert, delete) of a seed. */
static size_t fuzz_mutate(char *buf, size_t size)
{
        const char *seed = fuzz_seeds[rng() % ARRAY_SIZE(fuzz_seeds)];
        int edits = 1 + (int)(rng() % 4);
        size_t len = strlen(seed);

        memcpy(buf, seed, len);
        for (int e = 0; e < edits; e++) {
                size_t at = len ? rng() % len : 0;
                char c = rng() % 8 ? fuzz_alphabet[rng() % (sizeof(fuzz_alphabet) - 1)]
                                   : (char)(rng() % 255 + 1);

                switch (rng() % 3) {
                case 0:
                        if (len)
                                buf[at] = c;
                        break;
                case 1:
                        if (len + 1 < size) {
                                memmove(buf + at + 1, buf + at, len - at);
                                buf[at] = c;
                                len++;
                        }
                        break;
                default:
                        if (len) {
                                memmove(buf + at, buf + at + 1, len - at - 1);
                                len--;
                        }
                }
        }
        return len;
}

/* What a grammar-made string should parse to, decided by the generator
 * itself (not by the code under test). */
struct verdict {
        enum { V_NONE, V_FORMAT, V_CPUS } kind;
        bool valid;
        struct perf_format fmt; /* V_FORMAT */
        int cpu_total;          /* V_CPUS */
        int cpus[16];
};

/* A format text from the grammar, with bit numbers a little past 63,
 * backward ranges, overlaps and too many pieces mixed in. */
static size_t fuzz_format(char *buf, size_t size, struct verdict *v)
{
        static const char *const words[] = {"", "1", "2", "3", "4"};
        unsigned int word = (unsigned int)(rng() % 5);
        size_t pieces = 1 + rng() % 9, n;
        uint64_t used = 0;

        v->kind = V_FORMAT;
        v->valid = word < 4 && pieces <= PERF_FORMAT_PIECES;
        v->fmt.piece_count = pieces;
        n = (size_t)snprintf(buf, size, "config%s:", words[word]);
        for (size_t i = 0; i < pieces; i++) {
                unsigned int lo = (unsigned int)(rng() % 68), hi = lo + (unsigned int)(rng() % 9);
                uint64_t mask = 0;

                if (rng() % 8 == 0 && lo > 2)
                        hi = lo - 1 - (unsigned int)(rng() % 2);
                if (hi == lo && rng() % 2)
                        n += (size_t)snprintf(buf + n, size - n, "%s%u", i ? "," : "", lo);
                else
                        n += (size_t)snprintf(buf + n, size - n, "%s%u-%u", i ? "," : "", lo, hi);
                if (lo > hi || hi > 63) {
                        v->valid = false;
                        continue;
                }
                for (unsigned int b = lo; b <= hi; b++)
                        mask |= 1ull << b;
                if (used & mask)
                        v->valid = false;
                used |= mask;
                if (i < PERF_FORMAT_PIECES)
                        v->fmt.pieces[i] = (struct perf_format_piece){(enum perf_config_word)word,
                                                                      (uint8_t)lo, (uint8_t)hi};
        }
        if (rng() % 4 == 0)
                n += (size_t)snprintf(buf + n, size - n, "\n");
        return n;
}

/* A CPU list from the grammar, sometimes out of order, overlapping or
 * beyond the highest CPU number. */
static size_t fuzz_cpus(char *buf, size_t size, struct verdict *v)
{
        size_t ranges = 1 + rng() % 6, n = 0, filled = 0;
        int64_t prev = -1, cur = (int64_t)(rng() % 4);

        v->kind = V_CPUS;
        v->valid = true;
        v->cpu_total = 0;
        for (size_t i = 0; i < ranges; i++) {
                int64_t lo = cur + (int64_t)(rng() % 5) - 1, hi;

                if (rng() % 12 == 0)
                        lo += (int64_t)(rng() % 1100000);
                if (lo < 0)
                        lo = 0;
                hi = rng() % 3 ? lo + (int64_t)(rng() % 6) : lo;
                if (rng() % 10 == 0)
                        hi = lo - 1;
                if (hi == lo && rng() % 2)
                        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "",
                                              (long long)lo);
                else
                        n += (size_t)snprintf(buf + n, size - n, "%s%lld-%lld", i ? "," : "",
                                              (long long)lo, (long long)hi);
                if (hi < lo || lo <= prev || hi > 1048575) {
                        v->valid = false;
                } else {
                        for (int64_t c = lo; c <= hi && filled < 16; c++)
                                v->cpus[filled++] = (int)c;
                        v->cpu_total += (int)(hi - lo + 1);
                }
                prev = hi > prev ? hi : prev;
                cur = hi + 1;
        }
        if (rng() % 4 == 0)
                n += (size_t)snprintf(buf + n, size - n, "\n");
        return n;
}

/* One fuzz input: random text, random bytes, a mutated seed, or a
 * grammar-made format or CPU list that comes with its verdict. */
static size_t fuzz_string(char *buf, size_t size, struct verdict *v)
{
        size_t len = 0;

        memset(v, 0, sizeof(*v));
        switch (rng() % 5) {
        case 0:
                len = rng() % (size - 1);
                for (size_t i = 0; i < len; i++)
                        buf[i] = fuzz_alphabet[rng() % (sizeof(fuzz_alphabet) - 1)];
                break;
        case 1:
                len = rng() % (size - 1);
                for (size_t i = 0; i < len; i++)
                        buf[i] = (char)(rng() % 255 + 1);
                break;
        case 2:
                len = fuzz_mutate(buf, size);
                break;
        case 3:
                len = fuzz_format(buf, size, v);
                break;
        default:
                len = fuzz_cpus(buf, size, v);
        }
        buf[len] = '\0';
        return len;
}

/* An accepted format is well formed, and printing it and parsing that
 * again gives the same pieces. */
static void check_accepted_format(const char *text, const struct perf_format *f)
{
        char again[256];
        struct perf_format g;
        uint64_t used = 0;
        unsigned int width = 0;
        size_t n = 0;

        assert_true(f->piece_count >= 1 && f->piece_count <= PERF_FORMAT_PIECES);
        for (size_t i = 0; i < f->piece_count; i++) {
                const struct perf_format_piece *p = &f->pieces[i];
                uint64_t mask = 0;

                assert_true(p->word >= PERF_CONFIG && p->word <= PERF_CONFIG3);
                assert_true(p->word == f->pieces[0].word);
                assert_true(p->lo <= p->hi && p->hi <= 63);
                for (unsigned int b = p->lo; b <= p->hi; b++)
                        mask |= 1ull << b;
                assert_true((used & mask) == 0);
                used |= mask;
                width += p->hi - p->lo + 1u;
        }
        assert_int_equal(perf_format_width(f), width);
        assert_int_equal(__builtin_popcountll(used), width);
        /* The text began with the word's name. */
        assert_true(!strncmp(text, "config", 6));

        n = (size_t)snprintf(again, sizeof(again),
                             "config%s:", (const char *[]){"", "1", "2", "3"}[f->pieces[0].word]);
        for (size_t i = 0; i < f->piece_count; i++)
                n += (size_t)snprintf(again + n, sizeof(again) - n, "%s%u-%u", i ? "," : "",
                                      f->pieces[i].lo, f->pieces[i].hi);
        memset(&g, 0, sizeof(g));
        assert_int_equal(perf_format_parse(again, &g), 0);
        assert_pieces_equal(&g, f);
        if (f->pieces[0].word != PERF_CONFIG3)
                round_trip(f);
}

static void check_accepted_terms(const char *text, const struct perf_pmu_event *ev)
{
        assert_true(ev->term_count >= 1 && ev->term_count <= PERF_EVENT_TERMS);
        for (size_t i = 0; i < ev->term_count; i++) {
                const char *name = ev->terms[i].name;
                size_t len = strnlen(name, PERF_PMU_NAME_MAX);

                assert_true(len >= 1 && len < PERF_PMU_NAME_MAX);
                assert_true(strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
                                         "0123456789") == len);
                /* Every name appears in the text. */
                assert_non_null(strstr(text, name));
        }
}

static void check_accepted_cpus(int n, const int *cpus, size_t max)
{
        for (int i = 0; i < n && (size_t)i < max; i++) {
                assert_true(cpus[i] >= 0 && cpus[i] <= 1048575);
                if (i)
                        assert_true(cpus[i] > cpus[i - 1]);
        }
}

static void test_fuzz_parsers(void **state)
{
        int accepted[3] = {0}, judged = 0;

        (void)state;
        rng_state = 0x0123456789abcdefull;
        for (int iter = 0; iter < 8000; iter++) {
                char buf[160];
                struct verdict v;
                size_t len = fuzz_string(buf, sizeof(buf), &v);
                /* An exact-size copy, so a read past the NUL leaves the
                 * allocation (visible under ASan/valgrind). */
                char *text = malloc(len + 1);
                struct perf_format fmt;
                struct perf_pmu_event ev;
                int cpus[16];
                int ret, n;

                assert_non_null(text);
                memcpy(text, buf, len + 1);
                memset(&fmt, 0, sizeof(fmt));
                ret = perf_format_parse(text, &fmt);
                assert_true(ret == 0 || ret == -EINVAL);
                if (ret == 0) {
                        check_accepted_format(text, &fmt);
                        accepted[0]++;
                }
                if (v.kind == V_FORMAT) {
                        if (ret != (v.valid ? 0 : -EINVAL))
                                print_message("# format '%s': %d\n", text, ret);
                        assert_int_equal(ret, v.valid ? 0 : -EINVAL);
                        if (v.valid)
                                assert_pieces_equal(&fmt, &v.fmt);
                        judged++;
                }

                memset(&ev, 0, sizeof(ev));
                ret = perf_event_terms_parse(text, &ev);
                assert_true(ret == 0 || ret == -EINVAL);
                if (ret == 0) {
                        check_accepted_terms(text, &ev);
                        accepted[1]++;
                }

                memset(cpus, 0xff, sizeof(cpus));
                n = perf_cpu_list_parse(text, cpus, ARRAY_SIZE(cpus));
                assert_true(n >= 0 || n == -EINVAL);
                if (n >= 0) {
                        check_accepted_cpus(n, cpus, ARRAY_SIZE(cpus));
                        /* Counting alone gives the same number. */
                        assert_int_equal(perf_cpu_list_parse(text, NULL, 0), n);
                        accepted[2]++;
                }
                if (v.kind == V_CPUS) {
                        if (n != (v.valid ? v.cpu_total : -EINVAL))
                                print_message("# cpu list '%s': %d\n", text, n);
                        assert_int_equal(n, v.valid ? v.cpu_total : -EINVAL);
                        for (int i = 0; v.valid && i < n && i < 16; i++)
                                assert_int_equal(cpus[i], v.cpus[i]);
                        judged++;
                }
                free(text);
        }
        print_message("# fuzz: accepted %d formats, %d term lists, %d cpu lists of 8000; "
                      "%d judged against the generator\n",
                      accepted[0], accepted[1], accepted[2], judged);
        /* The generators must reach the accepting paths, or the checks
         * above never ran. */
        assert_true(accepted[0] > 100);
        assert_true(accepted[1] > 100);
        assert_true(accepted[2] > 100);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_format_parse_table),
            cmocka_unit_test(test_format_width),
            cmocka_unit_test(test_format_apply_pieces),
            cmocka_unit_test(test_format_full_width),
            cmocka_unit_test(test_format_round_trips),
            cmocka_unit_test(test_format_config3),
            cmocka_unit_test(test_terms_parse_table),
            cmocka_unit_test(test_cpu_list_parse),
            cmocka_unit_test(test_hisi_pcie),
            cmocka_unit_test(test_uncore_free_running),
            cmocka_unit_test(test_uncore_programmable),
            cmocka_unit_test(test_list),
            cmocka_unit_test(test_broken),
            cmocka_unit_test(test_load_absent_and_bad_names),
            cmocka_unit_test_setup_teardown(test_format_limit, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_event_limit, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_tree_odd_files, tree_setup, tree_teardown),
            cmocka_unit_test(test_fuzz_parsers),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
