// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_series.c - naming of collectd value lists as Prometheus series:
 * write_prometheus' names and three labels for stock plugins, the pcie
 * plugin's meta data convention, label rules (sorted by byte order,
 * unique, no empty values, valid names), external labels, rename and drop
 * rules, the packed form, and the stale-marker registry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "rw_registry.h"
#include "rw_series.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Renders a finished set as name=value,... for comparison. */
static const char *render(const struct rw_labelset *s)
{
        static char buf[4096];
        size_t o = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < s->n; i++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s=%s", i ? "," : "",
                                      s->l[i].name, s->l[i].value);
        return buf;
}

static void test_collectd_names(void **state)
{
        static const struct {
                const char *plugin, *type, *ds;
                enum rw_ds_type t;
                const char *want;
        } rows[] = {
            {"cpu", "cpu", "value", RW_DS_DERIVE, "collectd_cpu_total"},
            {"memory", "memory", "value", RW_DS_GAUGE, "collectd_memory"},
            {"interface", "if_octets", "rx", RW_DS_DERIVE, "collectd_interface_if_octets_rx_total"},
            {"load", "load", "shortterm", RW_DS_GAUGE, "collectd_load_shortterm"},
            {"df", "df_complex", "value", RW_DS_GAUGE, "collectd_df_df_complex"},
            {"x", "counter", "value", RW_DS_COUNTER, "collectd_x_counter_total"},
            {"x", "absolute", "value", RW_DS_ABSOLUTE, "collectd_x_absolute"},
            {"pcie", "pcie_tlp_bytes", "value", RW_DS_DERIVE, "collectd_pcie_pcie_tlp_bytes_total"},
        };
        char buf[256];

        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                assert_true(rw_collectd_name(buf, sizeof(buf), rows[i].plugin, rows[i].type,
                                             rows[i].ds, rows[i].t) > 0);
                assert_string_equal(buf, rows[i].want);
        }
        assert_int_equal(rw_collectd_name(buf, 10, "interface", "if_octets", "rx", RW_DS_GAUGE),
                         -ENOSPC);
}

static void test_stock_labels(void **state)
{
        struct rw_labelset set;
        enum rw_kind kind;
        struct rw_vl vl = {.host = "h1",
                           .plugin = "cpu",
                           .plugin_instance = "0",
                           .type = "cpu",
                           .type_instance = "idle"};

        assert_int_equal(rw_series_build(&vl, "value", RW_DS_DERIVE, 1, NULL, NULL, &set, &kind),
                         0);
        assert_string_equal(render(&set),
                            "__name__=collectd_cpu_total,cpu=0,instance=h1,type=idle");
        assert_int_equal(kind, RW_KIND_COUNTER);

        /* No plugin instance: the type instance is named after the plugin. */
        vl = (struct rw_vl){.host = "h1",
                            .plugin = "memory",
                            .plugin_instance = "",
                            .type = "memory",
                            .type_instance = "used"};
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, NULL, NULL, &set, &kind), 0);
        assert_string_equal(render(&set), "__name__=collectd_memory,instance=h1,memory=used");
        assert_int_equal(kind, RW_KIND_GAUGE);

        /* Neither: only instance. A plugin name with '-'-free but odd
         * characters becomes a valid label/metric name. */
        vl = (struct rw_vl){.host = "h1",
                            .plugin = "my.plug",
                            .plugin_instance = "x",
                            .type = "gauge",
                            .type_instance = ""};
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, NULL, NULL, &set, &kind), 0);
        assert_string_equal(render(&set), "__name__=collectd_my_plug_gauge,instance=h1,my_plug=x");
}

static void test_meta_series(void **state)
{
        const char *names[] = {"bdf", "state", "zone", "__evil", "Upper"};
        const char *values[] = {"0000:3b:00.0", "current", "", "x", "u"};
        struct rw_labelset set;
        enum rw_kind kind;
        struct rw_vl vl = {.host = "h1",
                           .plugin = "pcie",
                           .plugin_instance = "0000:3b:00.0",
                           .type = "link_width_lanes",
                           .type_instance = "current",
                           .prom_name = "pcie_link_width_lanes",
                           .prom_type = "gauge",
                           .n_meta = 5,
                           .meta_names = names,
                           .meta_values = values};

        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, NULL, NULL, &set, &kind), 0);
        /* Byte order: 'U' < '_' < 'b'; the empty zone and the reserved
         * __evil are not sent. */
        assert_string_equal(render(&set), "Upper=u,__name__=pcie_link_width_lanes,bdf=0000:3b:00.0,"
                                          "instance=h1,state=current");
        assert_int_equal(kind, RW_KIND_GAUGE);

        vl.prom_type = "histogram";
        vl.prom_name = "pcie_latency_seconds_bucket";
        vl.n_meta = 0;
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, NULL, NULL, &set, &kind), 0);
        assert_int_equal(kind, RW_KIND_HISTOGRAM);

        /* Unknown prom.type: the data source type decides. */
        vl.prom_type = "nonsense";
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_DERIVE, 1, NULL, NULL, &set, &kind),
                         0);
        assert_int_equal(kind, RW_KIND_COUNTER);

        /* The convention is one data source per value list. */
        assert_int_equal(rw_series_build(&vl, "rx", RW_DS_DERIVE, 2, NULL, NULL, &set, &kind),
                         -EINVAL);
}

static void test_label_rules(void **state)
{
        struct rw_labelset s;

        rw_labelset_init(&s);
        assert_int_equal(rw_labelset_add(&s, "b", "1"), 0);
        assert_int_equal(rw_labelset_add(&s, "a", "1"), 0);
        assert_int_equal(rw_labelset_add(&s, "b", "2"), 0); /* later wins */
        assert_int_equal(rw_labelset_add(&s, "c", ""), 0);  /* skipped */
        assert_int_equal(rw_labelset_add(&s, "9lives", "x"), 0);
        assert_int_equal(rw_labelset_add(&s, "a-b", "y"), 0);
        assert_int_equal(rw_labelset_add(&s, "__x", "y"), -EINVAL);
        rw_labelset_finish(&s);
        assert_string_equal(render(&s), "_9lives=x,a=1,a_b=y,b=2");

        /* Bounded: at most RW_MAX_LABELS, values at most RW_MAX_VALUE_LEN. */
        rw_labelset_init(&s);
        for (int i = 0; i < RW_MAX_LABELS; i++) {
                char n[16];

                snprintf(n, sizeof(n), "l%d", i);
                assert_int_equal(rw_labelset_add(&s, n, "v"), 0);
        }
        assert_int_equal(rw_labelset_add(&s, "one_more", "v"), -ENOSPC);
        assert_true(s.overflow);
        {
                char *big = malloc(RW_MAX_VALUE_LEN + 2);

                memset(big, 'x', RW_MAX_VALUE_LEN + 1);
                big[RW_MAX_VALUE_LEN + 1] = '\0';
                rw_labelset_init(&s);
                assert_int_equal(rw_labelset_add(&s, "big", big), -EINVAL);
                free(big);
        }
}

static void test_names(void **state)
{
        char buf[64];

        assert_true(rw_valid_name("a:b_c", true));
        assert_false(rw_valid_name("a:b_c", false));
        assert_false(rw_valid_name("1a", true));
        assert_false(rw_valid_name("", true));
        assert_int_equal(rw_sanitize_name(buf, sizeof(buf), "1.x-y:z", false), 8);
        assert_string_equal(buf, "_1_x_y_z");
        assert_int_equal(rw_sanitize_name(buf, sizeof(buf), "a:b", true), 3);
        assert_string_equal(buf, "a:b");
        assert_int_equal(rw_sanitize_name(buf, 3, "abcdef", true), -ENOSPC);
}

static void test_family(void **state)
{
        char buf[64];

        rw_family_name(buf, sizeof(buf), "x_seconds_bucket", RW_KIND_HISTOGRAM);
        assert_string_equal(buf, "x_seconds");
        rw_family_name(buf, sizeof(buf), "x_seconds_sum", RW_KIND_HISTOGRAM);
        assert_string_equal(buf, "x_seconds");
        rw_family_name(buf, sizeof(buf), "x_seconds_count", RW_KIND_HISTOGRAM);
        assert_string_equal(buf, "x_seconds");
        rw_family_name(buf, sizeof(buf), "x_count", RW_KIND_GAUGE);
        assert_string_equal(buf, "x_count");
}

static void test_external_and_rules(void **state)
{
        struct rw_labelset ext, set;
        struct rw_rules *r = rw_rules_new();
        enum rw_kind kind;
        char err[128];
        struct rw_vl vl = {.host = "h1",
                           .plugin = "cpu",
                           .plugin_instance = "0",
                           .type = "cpu",
                           .type_instance = "idle"};

        rw_labelset_init(&ext);
        rw_labelset_add(&ext, "cluster", "c1");
        rw_labelset_add(&ext, "instance", "ext"); /* the series' own wins */
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_DERIVE, 1, &ext, NULL, &set, &kind),
                         0);
        assert_string_equal(render(&set),
                            "__name__=collectd_cpu_total,cluster=c1,cpu=0,instance=h1,type=idle");

        assert_int_equal(rw_rules_rename_metric(r, "collectd_cpu_total", "node_cpu_total"), 0);
        assert_int_equal(rw_rules_rename_label(r, "type", "mode"), 0);
        assert_int_equal(rw_rules_drop_label(r, "cpu"), 0);
        assert_int_equal(rw_rules_drop_metric(r, "collectd_memory.*", err, sizeof(err)), 0);
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_DERIVE, 1, &ext, r, &set, &kind), 0);
        assert_string_equal(render(&set),
                            "__name__=node_cpu_total,cluster=c1,instance=h1,mode=idle");

        vl = (struct rw_vl){.host = "h1",
                            .plugin = "memory",
                            .plugin_instance = "",
                            .type = "memory",
                            .type_instance = "used"};
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, &ext, r, &set, &kind), 1);
        /* Anchored: a prefix match is not a match. */
        vl.plugin = "xmemory";
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, &ext, r, &set, &kind), 0);

        assert_int_equal(rw_rules_drop_metric(r, "([", err, sizeof(err)), -EINVAL);
        assert_true(err[0] != '\0');
        assert_int_equal(rw_rules_rename_label(r, "a", "__name__"), -EINVAL);
        assert_int_equal(rw_rules_rename_metric(r, "a", "1bad"), -EINVAL);
        assert_int_equal(rw_rules_drop_label(r, "__name__"), -EINVAL);
        rw_rules_free(r);
}

/* Patterns glibc's regcomp needs exponential time for are refused with the
 * reason (found by fuzz_rw_config: DropMetric "tyS++++++++++++++++++++..."
 * hung the configuration for hours); everyday ones still load. */
/* A series named by the caller is labelled by the code that labels a value
 * list with prom.* meta data: the same set for the same parts, external
 * labels under its own, rules after, instance from the caller. */
static void test_named_series(void **state)
{
        static const char *const names[] = {"port", "9bad-name", "empty", "__x", "instance"};
        static const char *const values[] = {"p0", "1", "", "2", "own"};
        struct rw_vl vl = {.host = "h1",
                           .plugin = "pcie",
                           .prom_name = "pcie_port_utilization_ratio",
                           .prom_type = "gauge",
                           .n_meta = ARRAY_SIZE(names),
                           .meta_names = names,
                           .meta_values = values};
        struct rw_labelset ext, mine, theirs;
        struct rw_rules *r = rw_rules_new();
        enum rw_kind kind;
        char want[4096];

        (void)state;
        rw_labelset_init(&ext);
        rw_labelset_add(&ext, "cluster", "c1");
        rw_labelset_add(&ext, "port", "ext"); /* the series' own wins */
        assert_int_equal(
            rw_series_named(vl.prom_name, vl.n_meta, names, values, "h1", &ext, NULL, &mine), 0);
        assert_string_equal(render(&mine), "_9bad_name=1,__name__=pcie_port_utilization_ratio,"
                                           "cluster=c1,instance=h1,port=p0");
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, &ext, NULL, &theirs, &kind),
                         0);
        snprintf(want, sizeof(want), "%s", render(&theirs));
        assert_string_equal(render(&mine), want);
        /* No instance: the series' own instance label stays. */
        assert_int_equal(
            rw_series_named(vl.prom_name, vl.n_meta, names, values, "", NULL, NULL, &mine), 0);
        assert_string_equal(rw_labelset_get(&mine, "instance"), "own");

        assert_int_equal(rw_rules_rename_label(r, "port", "pcie_port"), 0);
        assert_int_equal(rw_rules_rename_metric(r, "pcie_port_utilization_ratio", "util"), 0);
        assert_int_equal(
            rw_series_named(vl.prom_name, vl.n_meta, names, values, "h1", &ext, r, &mine), 0);
        assert_int_equal(rw_series_build(&vl, "value", RW_DS_GAUGE, 1, &ext, r, &theirs, &kind), 0);
        snprintf(want, sizeof(want), "%s", render(&theirs));
        assert_string_equal(render(&mine), want);
        assert_string_equal(rw_labelset_get(&mine, "__name__"), "util");
        assert_string_equal(rw_labelset_get(&mine, "pcie_port"), "p0");
        assert_int_equal(rw_rules_drop_metric(r, "util", want, sizeof(want)), 0);
        assert_int_equal(rw_series_named(vl.prom_name, 0, NULL, NULL, "h1", NULL, r, &mine), 1);
        /* A name that cannot be made valid. */
        assert_int_equal(rw_series_named("", 0, NULL, NULL, "h1", NULL, NULL, &mine), -EINVAL);
        rw_rules_free(r);
}

static void test_drop_metric_cost(void **state)
{
        static const char *const refused[] = {
            "a++",                            /* 2 in a row: 20 took 8 s */
            "tyS++++++++++++++++++++elfMeic", /* the fuzzer's input */
            "a*?",
            "a{2}{3}",
            "a+{1,2}",
            "x.*+", /* POSIX: undefined */
            "(a+)+",
            "((a*){0,10}){0,10}",                 /* 11 s */
            "(((((a|b+|c*)+)?)*){0,10}x{0,100})", /* 86 s */
            "((x)(y|z*))*",                       /* held deeper down */
            "a{0,255}a{0,255}a{0,255}a{0,255}",   /* 110 of them: 4.6 s */
            "(abcdefghijk){100}",                 /* 1,100 characters copied */
        };
        static const char *const accepted[] = {
            "collectd_memory.*",
            "pcie_(link|aer)_.*",
            "(foo|bar)+_baz?",
            "a{2,5}b{0,3}",
            "x[+*?]+",
            "[]a+]*",
            "[[:alpha:]+]+",
            "\\++",
            "a{1000}",
            "(ab)*(cd)+(ef)?",
            "a{2}b",
            "((a)(b|c))",
        };
        struct rw_rules *r = rw_rules_new();
        char err[256];

        (void)state;
        assert_non_null(r);
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                err[0] = '\0';
                if (rw_rules_drop_metric(r, refused[i], err, sizeof(err)) != -EINVAL)
                        fail_msg("accepted: %s", refused[i]);
                assert_true(strstr(err, "offset") || strstr(err, "characters"));
        }
        for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
                if (rw_rules_drop_metric(r, accepted[i], err, sizeof(err)))
                        fail_msg("refused: %s: %s", accepted[i], err);
        rw_rules_free(r);
}

/* Label values are valid UTF-8 on the way out: a receiver refuses a whole
 * request (and a scraper a whole page) for one invalid value. */
static void test_utf8_values(void **state)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"plain", "plain"},
            {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
             "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
            {"a\xff"
             "b",
             "a\xef\xbf\xbd"
             "b"},                                                    /* not a lead byte */
            {"\xc3", "\xef\xbf\xbd"},                                 /* cut short */
            {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                 /* overlong '/' */
            {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate */
            {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
            {"tab\there", "tab\there"}, /* control characters are valid */
        };
        struct rw_labelset set;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                rw_labelset_init(&set);
                assert_int_equal(rw_labelset_add(&set, "v", cases[i].in), 0);
                assert_string_equal(rw_labelset_get(&set, "v"), cases[i].out);
        }
}

static void test_pack(void **state)
{
        struct rw_labelset s;
        size_t len;
        char *p;
        const char *w;

        rw_labelset_init(&s);
        rw_labelset_add(&s, "__name__", "m");
        rw_labelset_add(&s, "a", "1");
        rw_labelset_finish(&s);
        p = rw_series_pack(&s, RW_KIND_COUNTER, &len);
        assert_non_null(p);
        assert_int_equal(len, 2 + sizeof("__name__") + sizeof("m") + sizeof("a") + sizeof("1"));
        assert_int_equal(rw_packed_kind(p), RW_KIND_COUNTER);
        assert_int_equal(rw_packed_nlabels(p), 2);
        w = rw_packed_first(p);
        assert_string_equal(w, "__name__");
        w += strlen(w) + 1;
        assert_string_equal(w, "m");
        free(p);
}

static void test_registry(void **state)
{
        struct rw_registry *r = rw_registry_new();
        char **slots;
        size_t n;
        char key[32];

        assert_int_equal(rw_registry_note(r, "h/p-i/t-x", 1, 2, "abc", 4), 0);
        assert_int_equal(rw_registry_note(r, "h/p-i/t-x", 1, 2, "abc", 4), 0);
        assert_int_equal(rw_registry_note(r, "h/p-i/t-x", 1, 2, "abd", 4), 0);
        assert_int_equal(rw_registry_note(r, "h/p-i/t-x", 2, 2, "abd", 4), -EINVAL);
        /* Enough keys to make it grow. */
        for (int i = 0; i < 5000; i++) {
                snprintf(key, sizeof(key), "k%d", i);
                assert_int_equal(rw_registry_note(r, key, 0, 1, "s", 2), 0);
        }
        assert_int_equal(rw_registry_size(r), 5001);
        assert_int_equal(rw_registry_take(r, "h/p-i/t-x", &slots, &n), 0);
        assert_int_equal(n, 2);
        assert_null(slots[0]);
        assert_string_equal(slots[1], "abd");
        free(slots[1]);
        free(slots);
        assert_int_equal(rw_registry_take(r, "h/p-i/t-x", &slots, &n), -ENOENT);
        assert_int_equal(rw_registry_take_any(r, &slots, &n), 0);
        free(slots[0]);
        free(slots);
        assert_int_equal(rw_registry_size(r), 4999);
        rw_registry_free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_collectd_names),
            cmocka_unit_test(test_stock_labels),
            cmocka_unit_test(test_meta_series),
            cmocka_unit_test(test_label_rules),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_family),
            cmocka_unit_test(test_external_and_rules),
            cmocka_unit_test(test_named_series),
            cmocka_unit_test(test_drop_metric_cost),
            cmocka_unit_test(test_pack),
            cmocka_unit_test(test_utf8_values),
            cmocka_unit_test(test_registry),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
