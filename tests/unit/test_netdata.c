// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_netdata.c - pcie.plugin's two pieces of its own: pcie.conf in
 * collectd's quoting through the engine's option table (types, escapes,
 * comments, the block wrapper, errors naming file, line, option and value)
 * and samples as plugins.d charts (contexts, dimensions, integer SET values
 * that keep the precision, labels, new dimensions, findings that go to 0,
 * families that are absent or unknown), and which pcie.conf is read: the
 * environment's directories, but Netdata's fixed ones when privileged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_config.h"
#include "nd_charts.h"
#include "nd_conf.h"
#include "pcie_families.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* ---- pcie.conf ---- */

static void test_split_types(void **state)
{
        struct nd_conf_line l;
        char why[256] = "";

        (void)state;
        assert_int_equal(nd_conf_split("  IIOStackBus \"uncore_iio_6\" 0 \"0000:37\" # note", &l,
                                       why, sizeof(why)),
                         0);
        assert_string_equal(l.key, "IIOStackBus");
        assert_int_equal(l.count, 3);
        assert_int_equal(l.values[0].type, ENGINE_VALUE_STRING);
        assert_string_equal(l.values[0].string, "uncore_iio_6");
        assert_int_equal(l.values[1].type, ENGINE_VALUE_NUMBER);
        assert_true(l.values[1].number == 0);
        assert_string_equal(l.values[2].string, "0000:37");

        assert_int_equal(nd_conf_split("CollectPMU off", &l, why, sizeof(why)), 0);
        assert_int_equal(l.values[0].type, ENGINE_VALUE_BOOLEAN);
        assert_false(l.values[0].boolean);
        assert_int_equal(nd_conf_split("TraceClock 1e8", &l, why, sizeof(why)), 0);
        assert_true(l.values[0].number == 1e8);
        /* A backslash keeps the next character, as in collectd. */
        assert_int_equal(nd_conf_split("Device \"a\\\"b\\\\c\"", &l, why, sizeof(why)), 0);
        assert_string_equal(l.values[0].string, "a\"b\\c");
        /* "inf" is a word, not a number; "#" inside quotes is no comment. */
        assert_int_equal(nd_conf_split("LengthMode inf \"x#y\"", &l, why, sizeof(why)), 0);
        assert_int_equal(l.values[0].type, ENGINE_VALUE_STRING);
        assert_string_equal(l.values[1].string, "x#y");
}

static void test_split_skips(void **state)
{
        static const char *const lines[] = {
            "", "   ", "# Simulate \"x\"", "<Plugin pcie>", "<Plugin \"pcie\">", "</Plugin>"};
        struct nd_conf_line l;
        char why[256] = "";

        (void)state;
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                assert_int_equal(nd_conf_split(lines[i], &l, why, sizeof(why)), 0);
                assert_null(l.key);
        }
}

static void test_split_errors(void **state)
{
        static const struct {
                const char *line, *why;
        } cases[] = {
            {"Simulate \"kunpeng930-2p", "unterminated quoted string"},
            {"\"Simulate\" \"x\"", "starts with an option name"},
            {"8 true", "starts with an option name"},
            {"<Plugin cpu>", "only option lines"},
            {"A 1 2 3 4 5 6 7 8 9", "more than 8 values"},
        };
        struct nd_conf_line l;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char why[256] = "";

                assert_int_equal(nd_conf_split(cases[i].line, &l, why, sizeof(why)), -EINVAL);
                assert_non_null(strstr(why, cases[i].why));
        }
}

static int load_text(const char *text, struct engine_config *cfg, char *why, size_t len)
{
        char path[] = "/tmp/test_netdata_XXXXXX";
        int fd = mkstemp(path), found = 0, err;

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        err = nd_conf_load(path, cfg, &found, why, len);
        assert_int_equal(found, 1);
        unlink(path);
        return err;
}

static void test_load_through_option_table(void **state)
{
        struct engine_config cfg;
        char why[512] = "";
        int found = 1;

        (void)state;
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(load_text("<Plugin pcie>\n  MachineDirectory \"" TOP_SRCDIR
                                   "/sim/machines\"\n  Simulate \"kunpeng930-2p\"\n  CollectPMU "
                                   "false\n  TraceClock 100000000\n</Plugin>\n",
                                   &cfg, why, sizeof(why)),
                         0);
        assert_string_equal(cfg.simulate, "kunpeng930-2p");
        assert_false(cfg.collect_pmu);
        engine_config_clear(&cfg);

        /* The same checks as collectd's block, and the same messages. */
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(load_text("# x\nCollectPMU false\nTraceClock 0\n", &cfg, why, sizeof(why)),
                         -EINVAL);
        assert_non_null(strstr(why, ":3: option TraceClock 0: "));
        engine_config_clear(&cfg);

        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(load_text("Frobnicate \"yes\"\n", &cfg, why, sizeof(why)), -ENOENT);
        assert_non_null(strstr(why, ":1: option Frobnicate \"yes\": unknown option"));
        engine_config_clear(&cfg);

        /* Across lines: engine_config_check. */
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(load_text("SimulateKernel \"6.12\"\n", &cfg, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "SimulateKernel"));
        engine_config_clear(&cfg);

        /* No file: the defaults. */
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(nd_conf_load("/nonexistent/pcie.conf", &cfg, &found, why, sizeof(why)), 0);
        assert_int_equal(found, 0);
        engine_config_clear(&cfg);
}

/* ---- charts ---- */

static void add(struct sample_set *set, const char *metric, enum pcie_metric_kind kind,
                double value, const char *l1, const char *v1, const char *l2, const char *v2,
                const char *l3, const char *v3)
{
        /* A family the chart table does not know (one added to the spec
         * later) stands for itself. */
        static const struct pcie_family unknown = {.name = "pcie_something_new",
                                                   .kind = PCIE_METRIC_GAUGE};
        const struct pcie_family *family = pcie_family_find(metric);
        struct pcie_sample s;

        if (!family && !strcmp(metric, unknown.name))
                family = &unknown;
        assert_non_null(family);
        sample_init(&s, family);
        s.kind = kind;
        if (kind == PCIE_METRIC_COUNTER)
                s.counter = (uint64_t)value;
        else
                s.gauge = value;
        sample_label(&s, l1, v1);
        if (l2)
                sample_label(&s, l2, v2);
        if (l3)
                sample_label(&s, l3, v3);
        sample_label(&s, "simulated", "m");
        assert_int_equal(sample_set_add(set, &s), 0);
}

static char *flush(struct nd_charts *c)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        assert_non_null(f);
        assert_int_equal(nd_charts_flush(c, f), 0);
        fclose(f);
        return text;
}

static void test_charts(void **state)
{
        struct nd_charts *c = nd_charts_new(2);
        struct sample_set set = SAMPLE_SET_INIT;
        char *out;

        (void)state;
        add(&set, "pcie_port_bandwidth_bytes_per_second", PCIE_METRIC_GAUGE, 1234567.891, "pmu",
            "hisi_pcie1_core2", "port", "0000:40:00.0", "direction", "rx");
        set.samples[0].labels[set.samples[0].label_count++] = (struct pcie_label){"tlp", "mwr"};
        add(&set, "pcie_port_utilization_ratio", PCIE_METRIC_GAUGE, 0.123456789, "port",
            "0000:40:00.0", "direction", "rx", "capacity", "raw");
        add(&set, "pcie_link_speed_transfers_per_second", PCIE_METRIC_GAUGE, 2.5e9, "bdf",
            "0000:01:00.0", "state", "current", NULL, NULL);
        add(&set, "pcie_aer_device_errors_total", PCIE_METRIC_COUNTER, 12, "bdf", "0000:01:00.0",
            "severity", "correctable", NULL, NULL);
        add(&set, "pcie_audit_finding", PCIE_METRIC_GAUGE, 1, "bdf", "0000:01:00.0", "finding",
            "mps_above_partner", "severity", "critical");
        /* Detail-only and unknown families are no chart. */
        add(&set, "pcie_pmu_flux_total", PCIE_METRIC_COUNTER, 5, "pmu", "x", NULL, NULL, NULL,
            NULL);
        add(&set, "pcie_something_new", PCIE_METRIC_GAUGE, 5, "bdf", "x", NULL, NULL, NULL, NULL);
        assert_int_equal(nd_charts_add(c, &set), 0);
        assert_int_equal(nd_charts_count(c), 5);
        out = flush(c);
        /* Context, units, family, the interval; labels incl. sicl/core. */
        assert_non_null(strstr(out, "CHART pcie.port_bandwidth_0000_40_00_0 '' 'PCIe Root Port "
                                    "bandwidth by direction and TLP type' 'KiB/s' 'bandwidth' "
                                    "'pcie.port_bandwidth' stacked 70020 2 "));
        assert_non_null(strstr(out, "CLABEL 'port' '0000:40:00.0' 1\nCLABEL 'pmu' "
                                    "'hisi_pcie1_core2' 1\nCLABEL 'sicl' '1' 1\nCLABEL 'core' "
                                    "'2' 1\nCLABEL 'simulated' 'm' 1\nCLABEL_COMMIT\n"));
        /* Integers that keep the value: milli-bytes/s, nano-ratio, T/s. */
        assert_non_null(strstr(out, "DIMENSION rx_mwr '' absolute 1 1024000\n"));
        assert_non_null(strstr(out, "SET rx_mwr = 1234567891\n"));
        assert_non_null(strstr(out, "SET rx_raw = 123456789\n"));
        assert_non_null(strstr(out, "DIMENSION rx_raw '' absolute 1 10000000\n"));
        assert_non_null(strstr(out, "SET current = 2500000000\n"));
        assert_non_null(strstr(out, "DIMENSION correctable '' incremental 1 1\n"));
        assert_non_null(strstr(out, "SET correctable = 12\n"));
        assert_non_null(strstr(out, "BEGIN pcie.mps_mrrs_findings_0000_01_00_0\nSET "
                                    "mps_above_partner = 1\nEND\n"));
        assert_null(strstr(out, "flux"));
        assert_null(strstr(out, "something"));
        free(out);
        sample_set_clear(&set);

        /* An Intel stack: a numeric label value in a dimension id gets its
         * label's name (part0_rx, not 0_rx); chart ids stay as they were. */
        add(&set, "pcie_port_bandwidth_bytes_per_second", PCIE_METRIC_GAUGE, 1000, "socket", "0",
            "stack", "2", "part", "0");
        set.samples[set.count - 1].labels[set.samples[set.count - 1].label_count++] =
            (struct pcie_label){"direction", "rx"};
        assert_int_equal(nd_charts_add(c, &set), 0);
        out = flush(c);
        assert_non_null(strstr(out, "CHART pcie.iio_bandwidth_0_2 "));
        assert_non_null(strstr(out, "DIMENSION part0_rx '' absolute 1 1024000\n"));
        assert_non_null(strstr(out, "SET part0_rx = 1000000\n"));
        assert_null(strstr(out, " 0_rx"));
        free(out);

        /* Next interval: a new dimension re-sends its chart; a finding that
         * is gone is 0; a chart without samples gets no BEGIN. */
        sample_set_clear(&set);
        add(&set, "pcie_link_speed_transfers_per_second", PCIE_METRIC_GAUGE, 16e9, "bdf",
            "0000:01:00.0", "state", "max", NULL, NULL);
        assert_int_equal(nd_charts_add(c, &set), 0);
        out = flush(c);
        assert_non_null(strstr(out, "CHART pcie.link_speed_0000_01_00_0 "));
        assert_non_null(strstr(out, "DIMENSION current '' absolute 1 1000000000\nDIMENSION max "));
        assert_non_null(strstr(out, "SET max = 16000000000\n"));
        assert_null(strstr(out, "SET current"));
        assert_non_null(strstr(out, "SET mps_above_partner = 0\n"));
        assert_null(strstr(out, "BEGIN pcie.port_bandwidth"));
        free(out);
        sample_set_free(&set);
        nd_charts_free(c);
}

static void test_charts_output_error(void **state)
{
        struct nd_charts *c = nd_charts_new(1);
        FILE *f = fopen("/dev/full", "we");

        (void)state;
        if (!f) {
                nd_charts_free(c);
                skip();
        }
        setvbuf(f, NULL, _IONBF, 0);
        struct sample_set set = SAMPLE_SET_INIT;

        add(&set, "pcie_link_width_lanes", PCIE_METRIC_GAUGE, 8, "bdf", "0000:01:00.0", "state",
            "current", NULL, NULL);
        assert_int_equal(nd_charts_add(c, &set), 0);
        assert_int_equal(nd_charts_flush(c, f), -EIO);
        fclose(f);
        sample_set_free(&set);
        nd_charts_free(c);
}

/* ---- which pcie.conf: the environment's dirs unless privileged ---- */

static char env_user[512], env_stock[512];
static int env_calls;

static char *fake_env(const char *name)
{
        env_calls++;
        if (!strcmp(name, "NETDATA_USER_CONFIG_DIR"))
                return env_user[0] ? env_user : NULL;
        if (!strcmp(name, "NETDATA_STOCK_CONFIG_DIR"))
                return env_stock[0] ? env_stock : NULL;
        return NULL;
}

static void test_conf_path(void **state)
{
        char dir[] = "/tmp/test_netdata_XXXXXX", user[64], stock[64], path[4096], file[128];
        FILE *f;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(user, sizeof(user), "%s/user", dir);
        snprintf(stock, sizeof(stock), "%s/stock", dir);
        assert_int_equal(mkdir(user, 0700), 0);
        assert_int_equal(mkdir(stock, 0700), 0);
        snprintf(env_user, sizeof(env_user), "%s", user);
        snprintf(env_stock, sizeof(env_stock), "%s", stock);

        /* Unprivileged: the environment's dirs; the stock file when the user has none. */
        snprintf(file, sizeof(file), "%s/pcie.conf", stock);
        assert_non_null(f = fopen(file, "w"));
        fclose(f);
        assert_int_equal(nd_conf_path(path, sizeof(path), false, fake_env), 0);
        assert_string_equal(path, file);
        snprintf(file, sizeof(file), "%s/pcie.conf", user);
        assert_non_null(f = fopen(file, "w"));
        fclose(f);
        assert_int_equal(nd_conf_path(path, sizeof(path), false, fake_env), 0);
        assert_string_equal(path, file);

        /* Privileged: the environment is not even asked; the fixed dirs. */
        env_calls = 0;
        assert_int_equal(nd_conf_path(path, sizeof(path), true, fake_env), 0);
        assert_int_equal(env_calls, 0);
        assert_null(strstr(path, dir));
        assert_true(!strcmp(path, ND_USER_CONFIG_DIR "/pcie.conf") ||
                    !strcmp(path, ND_STOCK_CONFIG_DIR "/pcie.conf"));
        env_user[0] = 0;
        env_stock[0] = 0;

        /* Unset or empty: the fixed dirs as well. */
        assert_int_equal(nd_conf_path(path, sizeof(path), false, fake_env), 0);
        assert_null(strstr(path, dir));

        /* A dir that does not fit is refused, not cut. */
        memset(env_user, 'a', sizeof(env_user) - 1);
        env_user[0] = '/';
        env_user[sizeof(env_user) - 1] = 0;
        assert_int_equal(nd_conf_path(path, 64, false, fake_env), -ENAMETOOLONG);
        env_user[0] = 0;

        unlink(file);
        snprintf(file, sizeof(file), "%s/pcie.conf", stock);
        unlink(file);
        rmdir(user);
        rmdir(stock);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_split_types),  cmocka_unit_test(test_split_skips),
            cmocka_unit_test(test_split_errors), cmocka_unit_test(test_load_through_option_table),
            cmocka_unit_test(test_charts),       cmocka_unit_test(test_charts_output_error),
            cmocka_unit_test(test_conf_path),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
