// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cli_series.c - a sample's Prometheus series (cli/cli_series.c over
 * writer/'s rw_series_named): the label set a sample gets, and that it is
 * the one rw_series_build gives the pcie plugin's value list of the same
 * sample (prom.name, prom.type, prom.label.*, host), which is how the
 * exporter and the fleet named samples before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "cli_series.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

static struct pcie_sample sample(const char *metric, enum pcie_metric_kind kind, size_t n,
                                 const struct pcie_label *labels)
{
        struct pcie_sample s = {.metric = metric, .kind = kind, .label_count = n};

        if (n) /* memcpy's source may not be NULL, even for 0 bytes */
                memcpy(s.labels, labels, n * sizeof(*labels));
        return s;
}

/* The pcie plugin's value list of @s, as the exporter and the fleet built
 * it before they named samples directly. */
static int as_value_list(const struct pcie_sample *s, const char *host, struct rw_labelset *out,
                         enum rw_kind *kind)
{
        const char *names[PCIE_SAMPLE_MAX_LABELS], *values[PCIE_SAMPLE_MAX_LABELS];
        struct rw_vl vl = {
            .host = host,
            .plugin = "pcie",
            .prom_name = s->metric,
            .prom_type = pcie_metric_kind_name(s->kind),
            .n_meta = s->label_count,
            .meta_names = names,
            .meta_values = values,
        };

        for (size_t i = 0; i < s->label_count; i++) {
                names[i] = s->labels[i].name;
                values[i] = s->labels[i].value;
        }
        return rw_series_build(&vl, "value",
                               s->kind == PCIE_METRIC_COUNTER ? RW_DS_DERIVE : RW_DS_GAUGE, 1, NULL,
                               NULL, out, kind);
}

static void test_sample_labels(void **state)
{
        static const struct pcie_label labels[] = {
            {"port", "0000:00:01.0"},
            {"direction", "rx"},
            {"9-bad.name", "x"}, /* made valid: _9_bad_name */
            {"empty", ""},       /* never sent */
            {"__reserved", "y"}, /* left out, the rest still goes */
            {"instance", "own"}, /* the host's instance wins */
        };
        struct pcie_sample s =
            sample("pcie_port_bandwidth_bytes_per_second", PCIE_METRIC_GAUGE, 6, labels);
        struct rw_labelset set;
        enum rw_kind kind = RW_KIND_UNKNOWN;

        (void)state;
        assert_int_equal(cli_series_of_sample(&s, "h1", &set, &kind), 0);
        assert_int_equal(kind, RW_KIND_GAUGE);
        assert_string_equal(render(&set), "_9_bad_name=x,__name__=pcie_port_bandwidth_bytes_per_"
                                          "second,direction=rx,instance=h1,port=0000:00:01.0");
        /* No instance: the sample's own instance label stays. */
        assert_int_equal(cli_series_of_sample(&s, "", &set, &kind), 0);
        assert_string_equal(rw_labelset_get(&set, "instance"), "own");
        /* A name that is not valid is made valid, one that is empty is refused. */
        s = sample("pcie-x.y", PCIE_METRIC_COUNTER, 0, NULL);
        assert_int_equal(cli_series_of_sample(&s, "h1", &set, &kind), 0);
        assert_int_equal(kind, RW_KIND_COUNTER);
        assert_string_equal(render(&set), "__name__=pcie_x_y,instance=h1");
        s = sample("", PCIE_METRIC_GAUGE, 0, NULL);
        assert_int_equal(cli_series_of_sample(&s, "h1", &set, &kind), -EINVAL);
}

static void test_kinds(void **state)
{
        (void)state;
        assert_int_equal(cli_series_kind(PCIE_METRIC_GAUGE), RW_KIND_GAUGE);
        assert_int_equal(cli_series_kind(PCIE_METRIC_COUNTER), RW_KIND_COUNTER);
        assert_int_equal(cli_series_kind(PCIE_METRIC_FLOAT_COUNTER), RW_KIND_COUNTER);
        assert_int_equal(cli_series_kind(PCIE_METRIC_INFO), RW_KIND_INFO);
        assert_int_equal(cli_series_kind(PCIE_METRIC_HISTOGRAM), RW_KIND_HISTOGRAM);
}

static void test_same_as_value_list(void **state)
{
        static const struct pcie_label port[] = {{"port", "0000:00:01.0"}, {"direction", "tx"}};
        static const struct pcie_label info[] = {
            {"bdf", "0000:01:00.0"}, {"vendor", "Acme \xff"}, {"driver", ""}, {"a b", "1"}};
        static const struct pcie_label le[] = {{"le", "+Inf"}, {"port", "p0"}};
        struct pcie_label many[PCIE_SAMPLE_MAX_LABELS];
        char names[PCIE_SAMPLE_MAX_LABELS][8];
        struct pcie_sample rows[] = {
            sample("pcie_port_utilization_ratio", PCIE_METRIC_GAUGE, 2, port),
            sample("pcie_aer_device_errors_total", PCIE_METRIC_COUNTER, 2, port),
            sample("pcie_cpu_seconds_total", PCIE_METRIC_FLOAT_COUNTER, 0, NULL),
            sample("pcie_device_info", PCIE_METRIC_INFO, 4, info),
            sample("pcie_port_latency_seconds_bucket", PCIE_METRIC_HISTOGRAM, 2, le),
            sample("", PCIE_METRIC_GAUGE, 0, NULL),
            sample("pcie_many", PCIE_METRIC_GAUGE, 0, NULL),
        };
        static const char *const hosts[] = {"", "h1", "host \xc3\xa9"};

        (void)state;
        for (size_t i = 0; i < PCIE_SAMPLE_MAX_LABELS; i++) {
                snprintf(names[i], sizeof(names[i]), "l%zu", i);
                many[i] = (struct pcie_label){names[i], "v"};
        }
        rows[ARRAY_SIZE(rows) - 1] =
            sample("pcie_many", PCIE_METRIC_GAUGE, PCIE_SAMPLE_MAX_LABELS, many);
        for (size_t h = 0; h < ARRAY_SIZE(hosts); h++)
                for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                        struct rw_labelset mine, theirs;
                        enum rw_kind mk = RW_KIND_UNKNOWN, tk = RW_KIND_UNKNOWN;
                        int rc = cli_series_of_sample(&rows[i], hosts[h], &mine, &mk);
                        char want[4096];

                        if (!*rows[i].metric) {
                                /* The value list named such a sample as a
                                 * stock collectd_pcie_* series; a sample
                                 * without a name has none. */
                                assert_int_equal(rc, -EINVAL);
                                continue;
                        }
                        assert_int_equal(as_value_list(&rows[i], hosts[h], &theirs, &tk), rc);
                        assert_int_equal(mk, tk);
                        snprintf(want, sizeof(want), "%s", render(&theirs));
                        assert_string_equal(render(&mine), want);
                }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sample_labels),
            cmocka_unit_test(test_kinds),
            cmocka_unit_test(test_same_as_value_list),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
