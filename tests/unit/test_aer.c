// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_aer.c - the aer_dev_* parser, pcie_monitor_read_aer() through a hw_env, and name
 * sanitising.
 *
 * pcie_monitor_read_aer() runs on sysfs trees made in a mkdtemp() directory here, so the
 * core assertions do not depend on the checked-in fixtures; the trees under
 * tests/fixtures/sysfs/ (SYNTHETIC, see its README) are read as well when
 * they are there.
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
#include <sys/stat.h>
#include <unistd.h>

#include "aer.h"
#include "hw_env.h"
#include "pcie_monitor.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define FIXTURE_SYSFS TOP_SRCDIR "/tests/fixtures/sysfs"

/* ---- aer_parse table ---- */

struct counter {
        const char *name;
        uint64_t count;
};

struct parse_row {
        const char *name;
        const char *text;
        int ret;
        unsigned int bad_line;
        /* Compared when ret == 0. */
        size_t count;
        struct counter counters[10];
        bool has_total;
        uint64_t total;
};

static const struct parse_row parse_rows[] = {
    {
        .name = "current kernel, unnamed bit 9",
        .text = "RxErr 3\nBadTLP 0\nBadDLLP 0\nRollover 0\ndev_cor_errs_bit[9] 2\nTimeout 0\n"
                "NonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 5\n",
        .count = 9,
        .counters = {{"RxErr", 3},
                     {"BadTLP", 0},
                     {"BadDLLP", 0},
                     {"Rollover", 0},
                     {"dev_cor_errs_bit[9]", 2},
                     {"Timeout", 0},
                     {"NonFatalErr", 0},
                     {"CorrIntErr", 0},
                     {"HeaderOF", 0}},
        .has_total = true,
        .total = 5,
    },
    {
        .name = "4.19 long names with spaces",
        .text = "Receiver Error 2\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\n"
                "Replay Timer Timeout 1\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\n"
                "Header Log Overflow 0\nTOTAL_ERR_COR 3\n",
        .count = 8,
        .counters = {{"Receiver Error", 2},
                     {"Bad TLP", 0},
                     {"Bad DLLP", 0},
                     {"RELAY_NUM Rollover", 0},
                     {"Replay Timer Timeout", 1},
                     {"Advisory Non-Fatal", 0},
                     {"Corrected Internal Error", 0},
                     {"Header Log Overflow", 0}},
        .has_total = true,
        .total = 3,
    },
    {
        .name = "trailing spaces, tabs and CRLF",
        .text = "RxErr 3  \r\nBadTLP\t 1\r\n  Bad  DLLP   4 \t\r\nTOTAL_ERR_COR 8\r\n",
        .count = 3,
        .counters = {{"RxErr", 3}, {"BadTLP", 1}, {"Bad  DLLP", 4}},
        .has_total = true,
        .total = 8,
    },
    {
        .name = "blank and whitespace-only lines",
        .text = "\nRxErr 1\n\n   \n\t\r\nTOTAL_ERR_COR 1\n\n",
        .count = 1,
        .counters = {{"RxErr", 1}},
        .has_total = true,
        .total = 1,
    },
    {
        .name = "no TOTAL line",
        .text = "Undefined 0\nDLP 7\n",
        .count = 2,
        .counters = {{"Undefined", 0}, {"DLP", 7}},
    },
    {
        .name = "TOTAL only",
        .text = "TOTAL_ERR_FATAL 7\n",
        .has_total = true,
        .total = 7,
    },
    {
        .name = "no final newline",
        .text = "RxErr 1\nTOTAL_ERR_COR 1",
        .count = 1,
        .counters = {{"RxErr", 1}},
        .has_total = true,
        .total = 1,
    },
    {
        .name = "empty text",
        .text = "",
    },
    {
        .name = "INT64_MAX and leading zeros",
        .text = "RxErr 9223372036854775807\nBadTLP 007\nTOTAL_ERR_COR 9223372036854775807\n",
        .count = 2,
        .counters = {{"RxErr", INT64_MAX}, {"BadTLP", 7}},
        .has_total = true,
        .total = INT64_MAX,
    },
    /* collectd's DERIVE is signed: 2^64-1 was published as -1. */
    {
        .name = "a count above INT64_MAX",
        .text = "RxErr 1\nBadTLP 18446744073709551615\n",
        .ret = -ERANGE,
        .bad_line = 2,
    },
    {
        .name = "a total above INT64_MAX",
        .text = "RxErr 1\nTOTAL_ERR_COR 9223372036854775808\n",
        .ret = -ERANGE,
        .bad_line = 2,
    },
    /* One name twice would be one collectd identity twice. */
    {
        .name = "a repeated name",
        .text = "RxErr 1\nBadTLP 2\nRxErr 3\n",
        .ret = -EBADMSG,
        .bad_line = 3,
    },
    {
        .name = "two names that read the same as a label",
        .text = "Bad TLP 1\nBad_TLP 2\n",
        .ret = -EBADMSG,
        .bad_line = 2,
    },
    {
        /* "TOTAL_ERR_" alone is a name, not a total. */
        .name = "bare TOTAL_ERR_ prefix",
        .text = "TOTAL_ERR_ 4\n",
        .count = 1,
        .counters = {{"TOTAL_ERR_", 4}},
    },
    {.name = "non-numeric count",
     .text = "RxErr 3\nBadTLP abc\nTOTAL_ERR_COR 3\n",
     .ret = -EBADMSG,
     .bad_line = 2},
    {.name = "name only",
     .text = "RxErr 3\nBadTLP 0\nBadDLLP\nRollover 0\n",
     .ret = -EBADMSG,
     .bad_line = 3},
    {.name = "count only", .text = "5\n", .ret = -EBADMSG, .bad_line = 1},
    {.name = "negative count", .text = "RxErr 0\nBadTLP -1\n", .ret = -EBADMSG, .bad_line = 2},
    {.name = "plus sign", .text = "RxErr +1\n", .ret = -EBADMSG, .bad_line = 1},
    {.name = "2^64 overflows",
     .text = "MalfTLP 18446744073709551616\n",
     .ret = -EBADMSG,
     .bad_line = 1},
    {.name = "far overflow",
     .text = "A 0\nB 0\nC 999999999999999999999999\n",
     .ret = -EBADMSG,
     .bad_line = 3},
    {.name = "trailing junk", .text = "UnsupReq 12abc\n", .ret = -EBADMSG, .bad_line = 1},
    {.name = "hex count", .text = "UnsupReq 0x10\n", .ret = -EBADMSG, .bad_line = 1},
    {.name = "fraction", .text = "UnsupReq 1.5\n", .ret = -EBADMSG, .bad_line = 1},
    {.name = "blank lines are counted", .text = "\n\nRxErr x\n", .ret = -EBADMSG, .bad_line = 3},
    {.name = "CRLF lines are counted", .text = "A 1\r\nB x\r\n", .ret = -EBADMSG, .bad_line = 2},
    {.name = "bad TOTAL count",
     .text = "A 1\nTOTAL_ERR_COR many\n",
     .ret = -EBADMSG,
     .bad_line = 2},
    {.name = "47-char name fits",
     .text = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstu 1\n",
     .count = 1,
     .counters = {{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstu", 1}}},
    {.name = "48-char name",
     .text = "X 0\nabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv 1\n",
     .ret = -E2BIG,
     .bad_line = 2},
    {.name = "100-char name",
     .text = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
             "aaaaaaaaaaaaaaa 1\n",
     .ret = -E2BIG,
     .bad_line = 1},
};

/* Number of differences, each printed. */
static int compare_list(const char *row, const struct aer_list *got, size_t count,
                        const struct counter *counters, bool has_total, uint64_t total)
{
        int bad = 0;

        if (got->count != count) {
                print_message("# row '%s': %zu counters, expected %zu\n", row, got->count, count);
                bad++;
        }
        for (size_t i = 0; i < count && i < got->count && i < AER_MAX_COUNTERS; i++) {
                const struct aer_counter *c = &got->counters[i];

                if (!memchr(c->name, '\0', sizeof(c->name)) || strcmp(c->name, counters[i].name) ||
                    c->count != counters[i].count) {
                        print_message("# row '%s': counter %zu = '%.*s' %llu, expected '%s' %llu\n",
                                      row, i, (int)sizeof(c->name), c->name,
                                      (unsigned long long)c->count, counters[i].name,
                                      (unsigned long long)counters[i].count);
                        bad++;
                }
        }
        if (got->has_total != has_total || (has_total && got->total != total)) {
                print_message("# row '%s': total %d/%llu, expected %d/%llu\n", row, got->has_total,
                              (unsigned long long)got->total, has_total, (unsigned long long)total);
                bad++;
        }
        return bad;
}

static struct aer_list parsed;

static void test_parse_table(void **state)
{
        int failed = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
                const struct parse_row *r = &parse_rows[i];
                unsigned int bad_line = 0xdeadbeef;
                int ret, bad = 0;

                memset(&parsed, 0xff, sizeof(parsed));
                ret = aer_parse(r->text, &parsed, &bad_line);
                if (ret != r->ret || bad_line != r->bad_line) {
                        print_message("# row '%s': returned %d at line %u, expected %d at line "
                                      "%u\n",
                                      r->name, ret, bad_line, r->ret, r->bad_line);
                        bad++;
                } else if (ret == 0) {
                        bad = compare_list(r->name, &parsed, r->count, r->counters, r->has_total,
                                           r->total);
                }
                failed += bad != 0;
        }
        assert_int_equal(failed, 0);
}

/* @lines lines "bit<i> 1" with distinct names, NUL-terminated; the caller
 * frees. */
static char *distinct_lines(size_t lines)
{
        char *text = malloc(24 * lines + 1);
        size_t len = 0;

        assert_non_null(text);
        for (size_t i = 0; i < lines; i++)
                len += (size_t)sprintf(text + len, "bit%zu 1\n", i);
        text[len] = '\0';
        return text;
}

/* @lines copies of @line, NUL-terminated; the caller frees. */
static char *repeat(const char *line, size_t lines)
{
        size_t len = strlen(line);
        char *text = malloc(len * lines + 1);

        assert_non_null(text);
        for (size_t i = 0; i < lines; i++)
                memcpy(text + i * len, line, len);
        text[len * lines] = '\0';
        return text;
}

static void test_parse_counter_limit(void **state)
{
        char *text;
        unsigned int bad_line;
        char line[32];
        size_t used = 0;

        (void)state;
        /* Exactly AER_MAX_COUNTERS counters plus a TOTAL: fine. */
        text = malloc(64 * (AER_MAX_COUNTERS + 2));
        assert_non_null(text);
        for (int i = 0; i < AER_MAX_COUNTERS; i++) {
                snprintf(line, sizeof(line), "bit%d %d\n", i, i * 3);
                memcpy(text + used, line, strlen(line));
                used += strlen(line);
        }
        memcpy(text + used, "TOTAL_ERR_COR 9\n", 17);
        assert_int_equal(aer_parse(text, &parsed, &bad_line), 0);
        assert_int_equal(parsed.count, AER_MAX_COUNTERS);
        assert_string_equal(parsed.counters[AER_MAX_COUNTERS - 1].name, "bit39");
        assert_int_equal(parsed.counters[AER_MAX_COUNTERS - 1].count, 39 * 3);
        assert_true(parsed.has_total);
        assert_int_equal(parsed.total, 9);
        assert_int_equal(bad_line, 0);

        /* One more counter line: -E2BIG on that line. */
        memcpy(text + used, "extra 1\nTOTAL_ERR_COR 9\n", 25);
        assert_int_equal(aer_parse(text, &parsed, &bad_line), -E2BIG);
        assert_int_equal(bad_line, AER_MAX_COUNTERS + 1);
        free(text);
}

/* A megabyte of valid lines ends at the counter limit, quickly; the same
 * line repeated ends at its first repetition. */
static void test_parse_megabyte(void **state)
{
        char *text = distinct_lines(1 << 16);
        unsigned int bad_line;

        (void)state;
        assert_int_equal(aer_parse(text, &parsed, &bad_line), -E2BIG);
        assert_int_equal(bad_line, AER_MAX_COUNTERS + 1);
        free(text);
        text = repeat("RxErr 1\n", 1 << 17);
        assert_int_equal(aer_parse(text, &parsed, &bad_line), -EBADMSG);
        assert_int_equal(bad_line, 2);
        free(text);

        /* One 1 MB line: a name far too long. */
        text = repeat("a", 1 << 20);
        text[(1 << 20) - 2] = ' ';
        text[(1 << 20) - 1] = '1';
        assert_int_equal(aer_parse(text, &parsed, &bad_line), -E2BIG);
        assert_int_equal(bad_line, 1);
        free(text);

        /* One 1 MB count: overflow, not a wrap-around. */
        text = repeat("9", 1 << 20);
        text[0] = 'x';
        text[1] = ' ';
        assert_int_equal(aer_parse(text, &parsed, &bad_line), -EBADMSG);
        assert_int_equal(bad_line, 1);
        free(text);
}

/* ---- sanitize ---- */

static void test_sanitize_name(void **state)
{
        static const struct {
                const char *in;
                size_t size;
                const char *out;
        } rows[] = {
            {"RxErr", 48, "RxErr"},
            {"Receiver Error", 48, "Receiver_Error"},
            {"dev_cor_errs_bit[9]", 48, "dev_cor_errs_bit9"},
            {"dev_fatal_errs_bit[27]", 48, "dev_fatal_errs_bit27"},
            {"RELAY_NUM Rollover", 48, "RELAY_NUM_Rollover"},
            {"Advisory Non-Fatal", 48, "Advisory_Non_Fatal"},
            {"a/b.c:d\te", 48, "a_b_c_d_e"},
            {"Fehl\xc3\xa4r", 48, "Fehl__r"},
            {"", 48, ""},
            {"Receiver Error", 6, "Recei"},
            {"Receiver Error", 1, ""},
            {"[]", 4, ""},
        };
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                char out[64];

                memset(out, 0xff, sizeof(out));
                aer_sanitize_name(rows[i].in, out, rows[i].size);
                if (!memchr(out, '\0', rows[i].size) || strcmp(out, rows[i].out)) {
                        print_message("# sanitize '%s' (size %zu): '%.*s', expected '%s'\n",
                                      rows[i].in, rows[i].size, (int)rows[i].size, out,
                                      rows[i].out);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);

        /* Size 0 writes nothing. */
        {
                char out[4] = {'x', 'y', 'z', 'w'};

                aer_sanitize_name("RxErr", out, 0);
                assert_memory_equal(out, "xyzw", 4);
        }
}

static void test_class_names(void **state)
{
        (void)state;
        assert_string_equal(aer_class_name(AER_CORRECTABLE), "correctable");
        assert_string_equal(aer_class_name(AER_FATAL), "fatal");
        assert_string_equal(aer_class_name(AER_NONFATAL), "nonfatal");
        assert_string_equal(aer_class_name(AER_CLASS_COUNT), "unknown");
}

/* ---- aer_read on a temporary sysfs tree ---- */

struct tree {
        char root[64];
        struct hw_env env;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
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

/* Writes @text (NULL: makes a directory) at @rel under the tree. */
static void put_file(const struct tree *t, const char *rel, const char *text, size_t len)
{
        char path[512], dir[512];
        char *slash;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", t->root, rel);
        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        *slash = '\0';
        mkdirs(dir);
        if (!text) {
                assert_int_equal(mkdir(path, 0755), 0);
                return;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t)len);
        close(fd);
}

static void put_text(const struct tree *t, const char *rel, const char *text)
{
        put_file(t, rel, text, strlen(text));
}

static int tree_setup(void **state)
{
        struct tree *t = calloc(1, sizeof(*t));

        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/test_aer.XXXXXX");
        if (!mkdtemp(t->root)) {
                free(t);
                return -1;
        }
        memset(&t->env, 0, sizeof(t->env));
        t->env.sysfs_root = t->root;
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

#define DEV "bus/pci/devices/0000:03:00.0/"
#define RP  "bus/pci/devices/0000:00:01.0/"

static const char cor_new[] = "RxErr 3\nBadTLP 0\nBadDLLP 0\nRollover 0\ndev_cor_errs_bit[9] 2\n"
                              "Timeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\n"
                              "TOTAL_ERR_COR 5\n";
static const char fatal_zero[] = "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\n"
                                 "TOTAL_ERR_FATAL 0\n";
static const char nonfatal_one[] = "Undefined 0\nDLP 0\nUnsupReq 1\nACSViol 0\n"
                                   "TOTAL_ERR_NONFATAL 1\n";

static struct aer_device dev;

static void test_read_endpoint(void **state)
{
        struct tree *t = *state;
        const char *what = "poison";
        unsigned int bad_line = 77;

        put_text(t, DEV "aer_dev_correctable", cor_new);
        put_text(t, DEV "aer_dev_fatal", fatal_zero);
        put_text(t, DEV "aer_dev_nonfatal", nonfatal_one);
        memset(&dev, 0xff, sizeof(dev));
        assert_int_equal(pcie_monitor_read_aer(&t->env, "0000:03:00.0", &dev, &what, &bad_line), 0);
        assert_null(what);
        assert_int_equal(bad_line, 0);
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                assert_true(dev.has_class[c]);
                assert_false(dev.has_rootport_total[c]);
        }
        assert_int_equal(dev.classes[AER_CORRECTABLE].count, 9);
        assert_string_equal(dev.classes[AER_CORRECTABLE].counters[4].name, "dev_cor_errs_bit[9]");
        assert_int_equal(dev.classes[AER_CORRECTABLE].counters[4].count, 2);
        assert_int_equal(dev.classes[AER_CORRECTABLE].total, 5);
        assert_int_equal(dev.classes[AER_FATAL].count, 6);
        assert_true(dev.classes[AER_FATAL].has_total);
        assert_int_equal(dev.classes[AER_FATAL].total, 0);
        assert_int_equal(dev.classes[AER_NONFATAL].count, 4);
        assert_string_equal(dev.classes[AER_NONFATAL].counters[2].name, "UnsupReq");
        assert_int_equal(dev.classes[AER_NONFATAL].counters[2].count, 1);
        assert_int_equal(dev.classes[AER_NONFATAL].total, 1);
}

static void test_read_root_port(void **state)
{
        struct tree *t = *state;
        const char *what = "poison";
        unsigned int bad_line = 77;

        put_text(t, RP "aer_dev_correctable", "RxErr 0\nTOTAL_ERR_COR 0\n");
        put_text(t, RP "aer_dev_fatal", fatal_zero);
        put_text(t, RP "aer_dev_nonfatal", "Undefined 0\nTOTAL_ERR_NONFATAL 0\n");
        put_text(t, RP "aer_rootport_total_err_cor", "5\n");
        put_text(t, RP "aer_rootport_total_err_fatal", "0\n");
        /* No final newline: still a number. */
        put_text(t, RP "aer_rootport_total_err_nonfatal", "9223372036854775807");
        memset(&dev, 0xff, sizeof(dev));
        assert_int_equal(pcie_monitor_read_aer(&t->env, "0000:00:01.0", &dev, &what, &bad_line), 0);
        assert_null(what);
        assert_int_equal(bad_line, 0);
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                assert_true(dev.has_class[c]);
                assert_true(dev.has_rootport_total[c]);
        }
        assert_int_equal(dev.rootport_total[AER_CORRECTABLE], 5);
        assert_int_equal(dev.rootport_total[AER_FATAL], 0);
        assert_true(dev.rootport_total[AER_NONFATAL] == INT64_MAX);
}

static void test_read_partial(void **state)
{
        struct tree *t = *state;
        const char *what = "poison";
        unsigned int bad_line = 77;

        /* Only the fatal file, and only one root-port total. */
        put_text(t, DEV "aer_dev_fatal", "Undefined 0\nDLP 2\n");
        put_text(t, DEV "aer_rootport_total_err_cor", "3\n");
        memset(&dev, 0xff, sizeof(dev));
        assert_int_equal(pcie_monitor_read_aer(&t->env, "0000:03:00.0", &dev, &what, &bad_line), 0);
        assert_null(what);
        assert_false(dev.has_class[AER_CORRECTABLE]);
        assert_true(dev.has_class[AER_FATAL]);
        assert_false(dev.has_class[AER_NONFATAL]);
        assert_false(dev.classes[AER_FATAL].has_total);
        assert_int_equal(dev.classes[AER_FATAL].count, 2);
        assert_int_equal(dev.classes[AER_FATAL].counters[1].count, 2);
        assert_true(dev.has_rootport_total[AER_CORRECTABLE]);
        assert_false(dev.has_rootport_total[AER_FATAL]);
        assert_false(dev.has_rootport_total[AER_NONFATAL]);
        assert_int_equal(dev.rootport_total[AER_CORRECTABLE], 3);
}

static void test_read_absent(void **state)
{
        struct tree *t = *state;
        struct hw_env no_sysfs = {0};
        const char *what = "poison";
        unsigned int bad_line = 77;

        /* A device directory without AER files. */
        put_text(t, "bus/pci/devices/0000:00:1d.0/vendor", "0x8086\n");
        assert_int_equal(pcie_monitor_read_aer(&t->env, "0000:00:1d.0", &dev, &what, &bad_line),
                         -ENOENT);
        assert_null(what);
        assert_int_equal(bad_line, 0);
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                assert_false(dev.has_class[c]);
                assert_false(dev.has_rootport_total[c]);
        }

        /* No such device at all. */
        what = "poison";
        assert_int_equal(pcie_monitor_read_aer(&t->env, "0000:7f:00.0", &dev, &what, &bad_line),
                         -ENOENT);
        assert_null(what);

        /* No sysfs root. */
        what = "poison";
        assert_int_equal(pcie_monitor_read_aer(&no_sysfs, "0000:00:1d.0", &dev, &what, &bad_line),
                         -ENOENT);
        assert_null(what);
}

static const struct {
        const char *name;
        const char *file; /* under DEV; NULL content: a directory */
        const char *content;
        int ret;
        unsigned int bad_line;
} bad_files[] = {
    {"bad count in the fatal file", "aer_dev_fatal",
     "Undefined 0\nDLP 0\nMalfTLP 18446744073709551616\nTOTAL_ERR_FATAL 0\n", -EBADMSG, 3},
    {"name without count", "aer_dev_nonfatal", "Undefined 0\nUnsupReq\n", -EBADMSG, 2},
    {"too many counters", "aer_dev_nonfatal", NULL, -E2BIG, AER_MAX_COUNTERS + 1},
    {"negative root-port total", "aer_rootport_total_err_nonfatal", "-1\n", -EBADMSG, 1},
    {"non-numeric root-port total", "aer_rootport_total_err_cor", "abc\n", -EBADMSG, 1},
    {"root-port total with junk", "aer_rootport_total_err_fatal", "5 x\n", -EBADMSG, 1},
    /* Found by fuzz_aer: a total above collectd's signed DERIVE. */
    {"root-port total above INT64_MAX", "aer_rootport_total_err_cor", "9966217342048039360\n",
     -ERANGE, 1},
    {"root-port total overflows", "aer_rootport_total_err_cor", "18446744073709551616\n", -EBADMSG,
     1},
};

/* Each bad file in an otherwise good device: the error, the file named,
 * the line. */
static void test_read_bad_files(void **state)
{
        struct tree *t = *state;
        char *many = distinct_lines(AER_MAX_COUNTERS + 5);
        int failed = 0;

        for (size_t i = 0; i < ARRAY_SIZE(bad_files); i++) {
                char dir[64], rel[128];
                const char *what = NULL;
                unsigned int bad_line = 0;
                int ret;

                snprintf(dir, sizeof(dir), "bus/pci/devices/0000:%02zx:00.0/", i + 0x10);
                snprintf(rel, sizeof(rel), "%saer_dev_correctable", dir);
                put_text(t, rel, cor_new);
                snprintf(rel, sizeof(rel), "%saer_dev_fatal", dir);
                put_text(t, rel, fatal_zero);
                snprintf(rel, sizeof(rel), "%saer_dev_nonfatal", dir);
                put_text(t, rel, nonfatal_one);
                snprintf(rel, sizeof(rel), "%s%s", dir, bad_files[i].file);
                put_text(t, rel, bad_files[i].content ? bad_files[i].content : many);

                snprintf(dir, sizeof(dir), "0000:%02zx:00.0", i + 0x10);
                ret = pcie_monitor_read_aer(&t->env, dir, &dev, &what, &bad_line);
                if (ret != bad_files[i].ret || !what || strcmp(what, bad_files[i].file) ||
                    bad_line != bad_files[i].bad_line) {
                        print_message("# row '%s': %d, what '%s', line %u; expected %d, '%s', "
                                      "%u\n",
                                      bad_files[i].name, ret, what ? what : "(null)", bad_line,
                                      bad_files[i].ret, bad_files[i].file, bad_files[i].bad_line);
                        failed++;
                }
        }
        free(many);
        assert_int_equal(failed, 0);
}

/* Files that cannot be read as a whole: too big for the reader, or not a
 * file. The error is the reader's, and `what` names the file. */
static void test_read_unreadable(void **state)
{
        struct tree *t = *state;
        char *big = repeat("RxErr 1\n", 1 << 17);
        const char *what = NULL;
        unsigned int bad_line = 99;
        int ret;

        put_text(t, DEV "aer_dev_correctable", big);
        free(big);
        ret = pcie_monitor_read_aer(&t->env, "0000:03:00.0", &dev, &what, &bad_line);
        assert_int_equal(ret, -EFBIG);
        assert_non_null(what);
        assert_string_equal(what, "aer_dev_correctable");

        what = NULL;
        put_file(t, RP "aer_dev_fatal", NULL, 0);
        ret = pcie_monitor_read_aer(&t->env, "0000:00:01.0", &dev, &what, &bad_line);
        assert_true(ret < 0 && ret != -ENOENT);
        assert_non_null(what);
        assert_string_equal(what, "aer_dev_fatal");
}

/* ---- the checked-in trees (tests/fixtures/sysfs) ---- */

static bool fixture_tree(struct hw_env *env, const char *name, char *root, size_t size)
{
        struct stat st;

        snprintf(root, size, "%s/%s", FIXTURE_SYSFS, name);
        if (stat(root, &st) || !S_ISDIR(st.st_mode)) {
                print_message("# %s not found; the core cases use temporary trees\n", root);
                return false;
        }
        memset(env, 0, sizeof(*env));
        env->sysfs_root = root;
        return true;
}

static void test_fixture_aer_new(void **state)
{
        char root[1024];
        struct hw_env env;
        const char *what;
        unsigned int bad_line;

        (void)state;
        if (!fixture_tree(&env, "aer-new", root, sizeof(root)))
                skip();
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:03:00.0", &dev, &what, &bad_line), 0);
        assert_int_equal(dev.classes[AER_CORRECTABLE].count, 9);
        assert_string_equal(dev.classes[AER_CORRECTABLE].counters[0].name, "RxErr");
        assert_int_equal(dev.classes[AER_CORRECTABLE].counters[0].count, 3);
        assert_string_equal(dev.classes[AER_CORRECTABLE].counters[4].name, "dev_cor_errs_bit[9]");
        assert_int_equal(dev.classes[AER_CORRECTABLE].counters[4].count, 2);
        assert_int_equal(dev.classes[AER_CORRECTABLE].total, 5);
        assert_true(dev.classes[AER_FATAL].has_total);
        assert_int_equal(dev.classes[AER_FATAL].total, 0);
        assert_int_equal(dev.classes[AER_NONFATAL].total, 0);
        assert_false(dev.has_rootport_total[AER_CORRECTABLE]);

        assert_int_equal(pcie_monitor_read_aer(&env, "0000:04:00.0", &dev, &what, &bad_line), 0);
        assert_int_equal(dev.classes[AER_NONFATAL].total, 1);
        assert_int_equal(dev.classes[AER_CORRECTABLE].total, 0);

        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:01.0", &dev, &what, &bad_line), 0);
        for (int c = 0; c < AER_CLASS_COUNT; c++)
                assert_true(dev.has_rootport_total[c]);
        assert_int_equal(dev.rootport_total[AER_CORRECTABLE], 5);
        assert_int_equal(dev.rootport_total[AER_FATAL], 0);
        assert_int_equal(dev.rootport_total[AER_NONFATAL], 1);

        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:1d.0", &dev, &what, &bad_line),
                         -ENOENT);
        assert_null(what);
}

static void test_fixture_aer_old(void **state)
{
        char root[1024];
        struct hw_env env;
        const char *what;
        unsigned int bad_line;
        const struct aer_list *cor = &dev.classes[AER_CORRECTABLE];

        (void)state;
        if (!fixture_tree(&env, "aer-old", root, sizeof(root)))
                skip();
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:03:00.0", &dev, &what, &bad_line), 0);
        assert_int_equal(cor->count, 8);
        assert_string_equal(cor->counters[0].name, "Receiver Error");
        assert_int_equal(cor->counters[0].count, 2);
        assert_string_equal(cor->counters[3].name, "RELAY_NUM Rollover");
        assert_string_equal(cor->counters[4].name, "Replay Timer Timeout");
        assert_int_equal(cor->counters[4].count, 1);
        assert_int_equal(cor->total, 3);
        assert_true(dev.classes[AER_FATAL].has_total);

        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:01.0", &dev, &what, &bad_line), 0);
        assert_int_equal(dev.rootport_total[AER_CORRECTABLE], 3);
        assert_int_equal(dev.rootport_total[AER_NONFATAL], 0);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:1d.0", &dev, &what, &bad_line),
                         -ENOENT);
}

static void test_fixture_bad(void **state)
{
        char root[1024];
        struct hw_env env;
        const char *what;
        unsigned int bad_line;

        (void)state;
        if (!fixture_tree(&env, "bad", root, sizeof(root)))
                skip();
        /* "BadTLP abc" on line 2. */
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:01.0", &dev, &what, &bad_line),
                         -EBADMSG);
        assert_non_null(what);
        assert_string_equal(what, "aer_dev_correctable");
        assert_int_equal(bad_line, 2);
        /* "BadDLLP" without a count on line 3. */
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:03:00.0", &dev, &what, &bad_line),
                         -EBADMSG);
        assert_non_null(what);
        assert_string_equal(what, "aer_dev_correctable");
        assert_int_equal(bad_line, 3);
        /* TOTAL only; no final newline; whitespace only: all valid. */
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:04:00.0", &dev, &what, &bad_line), 0);
        assert_int_equal(dev.classes[AER_CORRECTABLE].count, 0);
        assert_true(dev.classes[AER_CORRECTABLE].has_total);
        assert_int_equal(dev.classes[AER_CORRECTABLE].total, 7);
        assert_true(dev.classes[AER_FATAL].has_total);
        assert_int_equal(dev.classes[AER_FATAL].count, 18);
        assert_true(dev.has_class[AER_NONFATAL]);
        assert_int_equal(dev.classes[AER_NONFATAL].count, 0);
        assert_false(dev.classes[AER_NONFATAL].has_total);
}

int main(void)
{
        const struct CMUnitTest test_aer[] = {
            cmocka_unit_test(test_parse_table),
            cmocka_unit_test(test_parse_counter_limit),
            cmocka_unit_test(test_parse_megabyte),
            cmocka_unit_test(test_sanitize_name),
            cmocka_unit_test(test_class_names),
            cmocka_unit_test_setup_teardown(test_read_endpoint, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_root_port, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_partial, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_absent, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_bad_files, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_unreadable, tree_setup, tree_teardown),
            cmocka_unit_test(test_fixture_aer_new),
            cmocka_unit_test(test_fixture_aer_old),
            cmocka_unit_test(test_fixture_bad),
        };

        return cmocka_run_group_tests(test_aer, NULL, NULL);
}
