// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_om.c - the scrape page: content negotiation, number formatting,
 * both formats on every kind of family, escaping, a family claimed by two
 * kinds, the catalogue's order and units, and the store (put, drop,
 * expire, one rendering shared by concurrent scrapes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "om_format.h"
#include "om_store.h"
#include "prom_catalog.h"
#include "rw_series.h"

/* A packed series from "name" and label pairs (NULL-terminated). */
static char *packed(enum rw_kind kind, size_t *len, const char *name, ...)
{
        struct rw_labelset set;
        const char *k, *v;
        va_list ap;
        char *p;

        rw_labelset_init(&set);
        assert_int_equal(rw_labelset_add(&set, "__name__", name), 0);
        va_start(ap, name);
        while ((k = va_arg(ap, const char *))) {
                v = va_arg(ap, const char *);
                assert_int_equal(rw_labelset_add(&set, k, v), 0);
        }
        va_end(ap);
        rw_labelset_finish(&set);
        p = rw_series_pack(&set, kind, len);
        assert_non_null(p);
        return p;
}

static void put(struct om_store *st, const char *source, double value, double now, const char *help,
                enum rw_kind kind, const char *name, const char *k1, const char *v1, const char *k2,
                const char *v2)
{
        size_t len;
        char *p = packed(kind, &len, name, k1, v1, k2, v2, NULL);

        assert_int_equal(om_store_put(st, source, p, len, value, now, help), 0);
        free(p);
}

static char *page_text(struct om_store *st, enum om_format f)
{
        const struct om_page *p = om_store_page(st, f);
        char *s;

        assert_non_null(p);
        s = strndup(p->data, p->len);
        om_page_release(p);
        return s;
}

static void test_negotiate(void **state)
{
        (void)state;
        assert_int_equal(om_negotiate(NULL), OM_FORMAT_TEXT);
        assert_int_equal(om_negotiate("text/plain"), OM_FORMAT_TEXT);
        assert_int_equal(om_negotiate("*/*"), OM_FORMAT_TEXT);
        /* What Prometheus 2.42 sends. */
        assert_int_equal(om_negotiate("application/openmetrics-text;version=1.0.0,application/"
                                      "openmetrics-text;version=0.0.1;q=0.75,text/plain;version="
                                      "0.0.4;q=0.5,*/*;q=0.1"),
                         OM_FORMAT_OPENMETRICS);
        assert_int_equal(om_negotiate("application/openmetrics-text; version=1.0.0"),
                         OM_FORMAT_OPENMETRICS);
        /* Text preferred, or OpenMetrics refused with q=0. */
        assert_int_equal(om_negotiate("application/openmetrics-text;q=0.2, text/plain;q=0.9"),
                         OM_FORMAT_TEXT);
        assert_int_equal(om_negotiate("application/openmetrics-text;q=0"), OM_FORMAT_TEXT);
        assert_string_equal(om_content_type(OM_FORMAT_TEXT),
                            "text/plain; version=0.0.4; charset=utf-8");
        assert_non_null(strstr(om_content_type(OM_FORMAT_OPENMETRICS),
                               "application/openmetrics-text; version=1.0.0"));
}

static void test_values(void **state)
{
        char b[40];

        (void)state;
        om_format_value(b, sizeof(b), 0);
        assert_string_equal(b, "0");
        om_format_value(b, sizeof(b), 12345678901234.0);
        assert_string_equal(b, "12345678901234");
        om_format_value(b, sizeof(b), -3);
        assert_string_equal(b, "-3");
        om_format_value(b, sizeof(b), 0.1);
        assert_string_equal(b, "0.1");
        om_format_value(b, sizeof(b), 1e300);
        assert_string_equal(b, "1e+300");
        om_format_value(b, sizeof(b), 0.30000000000000004);
        assert_string_equal(b, "0.30000000000000004");
        om_format_value(b, sizeof(b), NAN);
        assert_string_equal(b, "NaN");
        om_format_value(b, sizeof(b), INFINITY);
        assert_string_equal(b, "+Inf");
        om_format_value(b, sizeof(b), -INFINITY);
        assert_string_equal(b, "-Inf");
        /* Every double reads back as itself. */
        srand(7);
        for (int i = 0; i < 100000; i++) {
                uint64_t bits =
                    ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand();
                double v;

                memcpy(&v, &bits, sizeof(v));
                if (!isfinite(v))
                        continue;
                om_format_value(b, sizeof(b), v);
                assert_true(strtod(b, NULL) == v);
        }
}

/* The same store rendered in both formats. */
static struct om_store *sample_store(void)
{
        struct om_store *st = om_store_new();

        assert_non_null(st);
        put(st, "a", 7, 1, NULL, RW_KIND_COUNTER, "pcie_link_changes_total", "bdf", "0000:01:00.0",
            NULL, NULL);
        put(st, "a", 16, 1, NULL, RW_KIND_GAUGE, "pcie_link_width_lanes", "bdf", "0000:01:00.0",
            "state", "current");
        put(st, "a", 1, 1, NULL, RW_KIND_INFO, "pcie_device_info", "bdf", "0000:01:00.0",
            "device_name", "Quote \" back\\slash\nnewline");
        /* A histogram put in a scrambled order. */
        put(st, "h", 3, 1, NULL, RW_KIND_HISTOGRAM, "pcie_ptt_completion_latency_seconds_count",
            "pmu", "p0", NULL, NULL);
        put(st, "h", 3, 1, NULL, RW_KIND_HISTOGRAM, "pcie_ptt_completion_latency_seconds_bucket",
            "pmu", "p0", "le", "+Inf");
        put(st, "h", 2, 1, NULL, RW_KIND_HISTOGRAM, "pcie_ptt_completion_latency_seconds_bucket",
            "pmu", "p0", "le", "1e-06");
        put(st, "h", 1, 1, NULL, RW_KIND_HISTOGRAM, "pcie_ptt_completion_latency_seconds_bucket",
            "pmu", "p0", "le", "7e-08");
        put(st, "h", 0.5, 1, NULL, RW_KIND_HISTOGRAM, "pcie_ptt_completion_latency_seconds_sum",
            "pmu", "p0", NULL, NULL);
        /* Another plugin's value: its HELP comes from the writer. */
        put(st, "c", 0.25, 1, "collectd load plugin", RW_KIND_GAUGE, "collectd_load_shortterm",
            "instance", "h1", NULL, NULL);
        return st;
}

static void test_text(void **state)
{
        struct om_store *st = sample_store();
        char *t = page_text(st, OM_FORMAT_TEXT);
        const char *want =
            "# HELP collectd_load_shortterm collectd load plugin\n"
            "# TYPE collectd_load_shortterm gauge\n"
            "collectd_load_shortterm{instance=\"h1\"} 0.25\n"
            "# HELP pcie_device_info PCI function: IDs, class, port type, parent, Root Port, "
            "NUMA node and names\n"
            "# TYPE pcie_device_info gauge\n"
            "pcie_device_info{bdf=\"0000:01:00.0\",device_name=\"Quote \\\" "
            "back\\\\slash\\nnewline\"} 1\n"
            "# HELP pcie_link_changes_total Link speed or width changes seen (flaps, retrains)\n"
            "# TYPE pcie_link_changes_total counter\n"
            "pcie_link_changes_total{bdf=\"0000:01:00.0\"} 7\n"
            "# HELP pcie_link_width_lanes Link width: current (LNKSTA) or max (LNKCAP)\n"
            "# TYPE pcie_link_width_lanes gauge\n"
            "pcie_link_width_lanes{bdf=\"0000:01:00.0\",state=\"current\"} 16\n"
            "# HELP pcie_ptt_completion_latency_seconds Request to completion latency of traced "
            "non-posted requests (PTT)\n"
            "# TYPE pcie_ptt_completion_latency_seconds histogram\n"
            "pcie_ptt_completion_latency_seconds_bucket{le=\"7e-08\",pmu=\"p0\"} 1\n"
            "pcie_ptt_completion_latency_seconds_bucket{le=\"1e-06\",pmu=\"p0\"} 2\n"
            "pcie_ptt_completion_latency_seconds_bucket{le=\"+Inf\",pmu=\"p0\"} 3\n"
            "pcie_ptt_completion_latency_seconds_count{pmu=\"p0\"} 3\n"
            "pcie_ptt_completion_latency_seconds_sum{pmu=\"p0\"} 0.5\n";

        assert_string_equal(t, want);
        free(t);
        om_store_free(st);
}

static void test_openmetrics(void **state)
{
        struct om_store *st = sample_store();
        char *t = page_text(st, OM_FORMAT_OPENMETRICS);

        (void)state;
        /* Counter and info families lose their suffix, HELP escapes '"',
         * UNIT where the name ends with it, # EOF last. */
        assert_non_null(strstr(t, "# TYPE pcie_link_changes counter\n"
                                  "pcie_link_changes_total{bdf=\"0000:01:00.0\"} 7\n"));
        assert_non_null(strstr(t, "# TYPE pcie_device info\npcie_device_info{"));
        assert_non_null(strstr(t, "# TYPE pcie_link_width_lanes gauge\n"
                                  "# UNIT pcie_link_width_lanes lanes\n"));
        assert_non_null(strstr(t, "# TYPE pcie_ptt_completion_latency_seconds histogram\n"
                                  "# UNIT pcie_ptt_completion_latency_seconds seconds\n"
                                  "pcie_ptt_completion_latency_seconds_bucket{le=\"7e-08\""));
        assert_null(strstr(t, "# UNIT pcie_link_changes"));
        assert_null(strstr(t, "# UNIT collectd"));
        assert_int_equal(strcmp(t + strlen(t) - 6, "# EOF\n"), 0);
        free(t);
        om_store_free(st);
}

static void test_help_escaping(void **state)
{
        struct om_store *st = om_store_new();
        char *t;

        (void)state;
        put(st, "s", 1, 1, "a \"b\" c\\d\ne", RW_KIND_GAUGE, "x_y", NULL, NULL, NULL, NULL);
        t = page_text(st, OM_FORMAT_TEXT);
        assert_string_equal(t, "# HELP x_y a \"b\" c\\\\d\\ne\n# TYPE x_y gauge\nx_y 1\n");
        free(t);
        t = page_text(st, OM_FORMAT_OPENMETRICS);
        assert_string_equal(t,
                            "# HELP x_y a \\\"b\\\" c\\\\d\\ne\n# TYPE x_y gauge\nx_y 1\n# EOF\n");
        free(t);
        om_store_free(st);
}

/* Two kinds claiming one family: the page keeps the first, so it parses;
 * an OpenMetrics counter not named _total is unknown. */
static void test_conflicts(void **state)
{
        struct om_store *st = om_store_new();
        char *t;

        (void)state;
        put(st, "s", 1, 1, NULL, RW_KIND_COUNTER, "foo_total", NULL, NULL, NULL, NULL);
        put(st, "s", 2, 1, NULL, RW_KIND_GAUGE, "foo", NULL, NULL, NULL, NULL);
        put(st, "s", 3, 1, NULL, RW_KIND_COUNTER, "bar", NULL, NULL, NULL, NULL);
        t = page_text(st, OM_FORMAT_OPENMETRICS);
        assert_string_equal(t,
                            "# TYPE bar unknown\nbar 3\n# TYPE foo counter\nfoo_total 1\n# EOF\n");
        free(t);
        t = page_text(st, OM_FORMAT_TEXT);
        /* The text format has room for both (different names). */
        assert_string_equal(t, "# TYPE bar counter\nbar 3\n# TYPE foo_total counter\n"
                               "foo_total 1\n# TYPE foo gauge\nfoo 2\n");
        free(t);
        om_store_free(st);
}

static void test_catalog(void **state)
{
        size_t n;
        const struct prom_family_doc *c = prom_catalog_all(&n);

        (void)state;
        assert_true(n > 50);
        for (size_t i = 0; i < n; i++) {
                size_t ln = strlen(c[i].name), lu = strlen(c[i].unit), fl = ln;

                if (i)
                        assert_true(strcmp(c[i - 1].name, c[i].name) < 0);
                assert_ptr_equal(prom_catalog_find(c[i].name), &c[i]);
                assert_non_null(c[i].help);
                assert_true(*c[i].help && !strchr(c[i].help, '\n'));
                /* The unit ends the OpenMetrics family name. */
                if (ln > 6 && !strcmp(c[i].name + ln - 6, "_total"))
                        fl -= 6;
                if (*c[i].unit) {
                        if (!(fl > lu && c[i].name[fl - lu - 1] == '_' &&
                              !strncmp(c[i].name + fl - lu, c[i].unit, lu)))
                                fail_msg("%s: unit %s is not its suffix", c[i].name, c[i].unit);
                }
        }
        assert_null(prom_catalog_find("pcie_no_such_family"));
}

static void test_store(void **state)
{
        struct om_store *st = sample_store();
        const struct om_page *a, *b, *c;

        (void)state;
        assert_int_equal(om_store_size(st), 9);
        /* Nothing changed: the same rendering for every scrape. */
        a = om_store_page(st, OM_FORMAT_TEXT);
        b = om_store_page(st, OM_FORMAT_TEXT);
        assert_ptr_equal(a, b);
        /* The same value again changes nothing; a new one does. */
        put(st, "a", 16, 2, NULL, RW_KIND_GAUGE, "pcie_link_width_lanes", "bdf", "0000:01:00.0",
            "state", "current");
        c = om_store_page(st, OM_FORMAT_TEXT);
        assert_ptr_equal(a, c);
        om_page_release(c);
        put(st, "a", 8, 3, NULL, RW_KIND_GAUGE, "pcie_link_width_lanes", "bdf", "0000:01:00.0",
            "state", "current");
        c = om_store_page(st, OM_FORMAT_TEXT);
        assert_ptr_not_equal(a, c);
        assert_non_null(strstr(c->data, "state=\"current\"} 8\n"));
        /* Pages outlive the change and the store. */
        assert_non_null(strstr(a->data, "state=\"current\"} 16\n"));
        om_page_release(a);
        om_page_release(b);

        /* drop: a source's series put before a time, or all of them. */
        assert_int_equal(om_store_drop(st, "a", 2), 2); /* changes, info at t=1 */
        assert_int_equal(om_store_size(st), 7);
        assert_int_equal(om_store_drop(st, "h", INFINITY), 5);
        assert_int_equal(om_store_drop(st, "nobody", INFINITY), 0);
        assert_int_equal(om_store_size(st), 2);
        /* expire: what nobody put since. */
        assert_int_equal(om_store_expire(st, 2), 1); /* collectd_load at t=1 */
        assert_int_equal(om_store_size(st), 1);
        om_page_release(c);
        c = om_store_page(st, OM_FORMAT_TEXT);
        assert_string_equal(c->data, "# HELP pcie_link_width_lanes Link width: current (LNKSTA) "
                                     "or max (LNKCAP)\n# TYPE pcie_link_width_lanes gauge\n"
                                     "pcie_link_width_lanes{bdf=\"0000:01:00.0\",state="
                                     "\"current\"} 8\n");
        om_store_free(st);
        om_page_release(c);
}

static void test_bad_series(void **state)
{
        struct om_store *st = om_store_new();
        struct rw_labelset set;
        size_t len;
        char *p;

        (void)state;
        rw_labelset_init(&set);
        rw_labelset_add(&set, "job", "x");
        rw_labelset_finish(&set);
        p = rw_series_pack(&set, RW_KIND_GAUGE, &len);
        assert_int_equal(om_store_put(st, "s", p, len, 1, 1, NULL), -EINVAL);
        free(p);
        assert_int_equal(om_store_size(st), 0);
        om_store_free(st);
}

static void test_gzip(void **state)
{
        struct om_store *st = sample_store();
        const struct om_page *plain, *gz, *again;
        char out[8192];
        z_stream zs = {0};

        (void)state;
        assert_true(om_accepts_gzip("gzip"));
        assert_true(om_accepts_gzip("deflate, gzip;q=0.5, br"));
        assert_false(om_accepts_gzip(NULL));
        assert_false(om_accepts_gzip("identity"));
        assert_false(om_accepts_gzip("gzip;q=0"));
        assert_false(om_accepts_gzip("gzipx"));

        plain = om_store_page(st, OM_FORMAT_TEXT);
        gz = om_store_page_gzip(st, OM_FORMAT_TEXT);
        assert_true(gz->gzip && !plain->gzip);
        assert_true(gz->len < plain->len);
        /* A gzip member that inflates to the page. */
        assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
        zs.next_in = (Bytef *)gz->data;
        zs.avail_in = (uInt)gz->len;
        zs.next_out = (Bytef *)out;
        zs.avail_out = sizeof(out);
        assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
        assert_int_equal(zs.total_out, plain->len);
        assert_memory_equal(out, plain->data, plain->len);
        inflateEnd(&zs);
        /* Compressed once per change. */
        again = om_store_page_gzip(st, OM_FORMAT_TEXT);
        assert_ptr_equal(again, gz);
        om_page_release(again);
        put(st, "a", 9, 5, NULL, RW_KIND_GAUGE, "pcie_link_width_lanes", "bdf", "0000:01:00.0",
            "state", "current");
        again = om_store_page_gzip(st, OM_FORMAT_TEXT);
        assert_ptr_not_equal(again, gz);
        om_page_release(again);
        om_page_release(gz);
        om_page_release(plain);
        om_store_free(st);
}

/* Many series: grows the table, keeps every one, renders in order. */
static void test_many(void **state)
{
        struct om_store *st = om_store_new();
        const struct om_page *pg;
        char bdf[32];
        size_t lines = 0;

        (void)state;
        for (int i = 0; i < 5000; i++) {
                snprintf(bdf, sizeof(bdf), "0000:%02x:%02x.%d", i / 256, (i / 8) % 32, i % 8);
                put(st, "s", i, 1, NULL, RW_KIND_GAUGE, "pcie_link_width_lanes", "bdf", bdf,
                    "state", "current");
        }
        assert_int_equal(om_store_size(st), 5000);
        pg = om_store_page(st, OM_FORMAT_TEXT);
        for (size_t i = 0; i < pg->len; i++)
                lines += pg->data[i] == '\n';
        assert_int_equal(lines, 5002);
        assert_non_null(strstr(pg->data, "{bdf=\"0000:00:00.0\",state=\"current\"} 0\n"
                                         "pcie_link_width_lanes{bdf=\"0000:00:00.1\""));
        om_page_release(pg);
        om_store_free(st);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_negotiate),     cmocka_unit_test(test_values),
            cmocka_unit_test(test_text),          cmocka_unit_test(test_openmetrics),
            cmocka_unit_test(test_help_escaping), cmocka_unit_test(test_conflicts),
            cmocka_unit_test(test_catalog),       cmocka_unit_test(test_store),
            cmocka_unit_test(test_bad_series),    cmocka_unit_test(test_many),
            cmocka_unit_test(test_gzip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
