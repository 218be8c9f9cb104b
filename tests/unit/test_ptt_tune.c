// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ptt_tune.c - the PTT tune files: names (the driver's, not the
 * seed's), refused values, reading as gauges, applying, restoring, and a
 * device whose file cannot be written. The sysfs tree is made here
 * (SYNTHETIC), in a temporary directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw_env.h"
#include "ptt_tune.h"
#include "sample.h"
#include "support.h"

static char root[64];
static void put(const char *rel, const char *text)
{
        char path[512], dir[600];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
        assert_int_equal(system(dir), 0);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static char *get(const char *rel)
{
        static char buf[64];
        char path[512];
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        return buf;
}

#define DEV "bus/event_source/devices/"

static int make_tree(void **state)
{
        static const char *const knobs[] = {"qos_tx_cpl", "qos_tx_np", "qos_tx_p",
                                            "rx_alloc_buf_level", "tx_alloc_buf_level"};
        char rel[256];

        (void)state;
        snprintf(root, sizeof(root), "/tmp/ptt-tune-XXXXXX");
        assert_non_null(mkdtemp(root));
        for (int d = 0; d < 2; d++) {
                snprintf(rel, sizeof(rel), DEV "hisi_ptt0_%d/type", d);
                put(rel, "42\n");
                for (int k = 0; k < 5; k++) {
                        snprintf(rel, sizeof(rel), DEV "hisi_ptt0_%d/tune/%s", d, knobs[k]);
                        put(rel, "1\n");
                }
        }
        /* Another PMU, not a PTT device. */
        put(DEV "hisi_pcie0_core0/type", "43\n");
        log_text[0] = '\0';
        return 0;
}

static int remove_tree(void **state)
{
        char cmd[128];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd);
}

static void env_of(struct hw_env *env, char *sys, size_t size)
{
        hw_env_init_system(env);
        snprintf(sys, size, "%s/sys", root);
        /* The tree lives directly under root: use it as the sysfs root. */
        env->sysfs_root = root;
        env->log = capture_log;
}

static void test_names_and_values(void **state)
{
        static const struct {
                double value;
                int ret;
        } rows[] = {{0, 0},         {1, 0},           {2, 0},
                    {3, -ERANGE},   {65535, -ERANGE}, {-1, -EINVAL},
                    {1.5, -EINVAL}, {NAN, -EINVAL},   {INFINITY, -EINVAL}};
        static const char *const bad_text[] = {"", "x", "1 2", "-1", "65536", "1\n\n", "1234567"};
        enum ptt_knob k;
        unsigned int v;

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                if (ptt_tune_value_check(rows[i].value) != rows[i].ret)
                        fail_msg("value %g: %d, want %d", rows[i].value,
                                 ptt_tune_value_check(rows[i].value), rows[i].ret);
        assert_int_equal(ptt_knob_parse("qos_tx_cpl", &k), 0);
        assert_int_equal(k, PTT_QOS_TX_CPL);
        assert_int_equal(ptt_knob_parse("tx_alloc_buf_level", &k), 0);
        assert_string_equal(ptt_knob_name(k), "tx_alloc_buf_level");
        /* The seed's names are not the driver's. */
        assert_int_equal(ptt_knob_parse("tx_path_rx_req_alloc_buf_level", &k), -ENOENT);
        assert_int_equal(ptt_knob_parse("qos_tx_dp", &k), -ENOENT);
        assert_int_equal(ptt_tune_parse("2\n", &v), 0);
        assert_int_equal(v, 2);
        assert_int_equal(ptt_tune_parse("65535", &v), 0);
        for (size_t i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++)
                if (ptt_tune_parse(bad_text[i], &v) != -EBADMSG)
                        fail_msg("\"%s\" parsed", bad_text[i]);
}

static double sample_value(const struct sample_set *set, const char *pmu, const char *knob)
{
        for (size_t i = 0; i < set->count; i++)
                if (!strcmp(pcie_sample_label(&set->samples[i], "pmu"), pmu) &&
                    !strcmp(pcie_sample_label(&set->samples[i], "knob"), knob))
                        return set->samples[i].gauge;
        return -1;
}

static void test_apply_and_restore(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct ptt_tuner *t;
        struct hw_env env;
        char sys[128];

        (void)state;
        env_of(&env, sys, sizeof(sys));
        put(DEV "hisi_ptt0_1/tune/qos_tx_p", "0\n");
        assert_int_equal(ptt_tuner_new(&env, &t), 0);
        assert_int_equal(ptt_tuner_devices(t), 2);

        /* Nothing is written that was not configured. */
        assert_int_equal(ptt_tuner_samples(t, &set), 0);
        assert_int_equal(set.count, 10);
        assert_true(sample_value(&set, "hisi_ptt0_1", "qos_tx_p") == 0);
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/qos_tx_p"), "1\n");

        assert_int_equal(ptt_tuner_apply(t, PTT_QOS_TX_P, 2), 0);
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/qos_tx_p"), "2");
        assert_string_equal(get(DEV "hisi_ptt0_1/tune/qos_tx_p"), "2");
        assert_non_null(strstr(log_text, "hisi_ptt0_1: tune/qos_tx_p set to 2 (was 0"));
        /* A second change keeps the first original. */
        assert_int_equal(ptt_tuner_apply(t, PTT_QOS_TX_P, 1), 0);
        sample_set_clear(&set);
        assert_int_equal(ptt_tuner_samples(t, &set), 0);
        assert_true(sample_value(&set, "hisi_ptt0_0", "qos_tx_p") == 1);
        assert_int_equal(set.samples[0].label_count, 2); /* pmu, knob */
        /* Out of range is refused, not clamped; nothing written. */
        assert_int_equal(ptt_tuner_apply(t, PTT_QOS_TX_P, 3), -EINVAL);
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/qos_tx_p"), "1");

        ptt_tuner_free(t); /* restores */
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/qos_tx_p"), "1");
        assert_string_equal(get(DEV "hisi_ptt0_1/tune/qos_tx_p"), "0");
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/qos_tx_np"), "1\n"); /* untouched */
        sample_set_free(&set);
}

static void test_failures(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct ptt_tuner *t;
        struct hw_env env;
        char sys[128], path[256];

        (void)state;
        env_of(&env, sys, sizeof(sys));
        /* Device 1's knob cannot be written (a directory in its place);
         * device 0's knob reads garbage. */
        snprintf(path, sizeof(path), "%s/" DEV "hisi_ptt0_1/tune/rx_alloc_buf_level", root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkdir(path, 0755), 0);
        put(DEV "hisi_ptt0_0/tune/tx_alloc_buf_level", "busy\n");
        assert_int_equal(ptt_tuner_new(&env, &t), 0);
        assert_int_not_equal(ptt_tuner_apply(t, PTT_RX_ALLOC_BUF_LEVEL, 2), 0);
        assert_non_null(strstr(log_text, "hisi_ptt0_1: cannot set tune/rx_alloc_buf_level to 2"));
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/rx_alloc_buf_level"), "2");
        /* The unreadable knobs are left out, not reported as 0. */
        assert_int_equal(ptt_tuner_samples(t, &set), 0);
        assert_int_equal(set.count, 8);
        assert_true(sample_value(&set, "hisi_ptt0_0", "tx_alloc_buf_level") < 0);
        log_text[0] = '\0';
        assert_int_equal(ptt_tuner_restore(t), 0);
        assert_string_equal(get(DEV "hisi_ptt0_0/tune/rx_alloc_buf_level"), "1");
        /* Only the device that changed is restored, and only once. */
        assert_null(strstr(log_text, "hisi_ptt0_1"));
        assert_int_equal(ptt_tuner_restore(t), 0);
        ptt_tuner_free(t);
        sample_set_free(&set);

        /* No PTT device at all: an empty tuner. */
        env.sysfs_root = "/nonexistent-pciescope";
        assert_int_equal(ptt_tuner_new(&env, &t), 0);
        assert_int_equal(ptt_tuner_devices(t), 0);
        ptt_tuner_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_names_and_values),
            cmocka_unit_test_setup_teardown(test_apply_and_restore, make_tree, remove_tree),
            cmocka_unit_test_setup_teardown(test_failures, make_tree, remove_tree),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
