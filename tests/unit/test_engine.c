// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_engine.c - the engine every host runs on: the one option table
 * (types, ranges, whole numbers, the messages), opening each kind of
 * machine, the sources' units, the simulated label, manual stepping under
 * a fake clock, and threads that publish and stop within a second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "engine_source.h"
#include "support.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define MACHINES TOP_SRCDIR "/sim/machines"

static double mono(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the option table ---- */

struct option_case {
        const char *key;
        struct engine_value value;
        int ret;
        const char *why; /* a part of the message, or NULL */
};

#define STR(s)                                                                                     \
        {                                                                                          \
                .type = ENGINE_VALUE_STRING, .string = (s)                                         \
        }
#define NUM(n)                                                                                     \
        {                                                                                          \
                .type = ENGINE_VALUE_NUMBER, .number = (n)                                         \
        }
#define BOOL(b)                                                                                    \
        {                                                                                          \
                .type = ENGINE_VALUE_BOOLEAN, .boolean = (b)                                       \
        }

static const struct option_case option_cases[] = {
    {"Frobnicate", STR("yes"), -ENOENT, "unknown option"},
    {"collectaer", BOOL(false), 0, NULL}, /* keys are case-insensitive, as collectd's */
    {"CollectAER", STR("yes"), -EINVAL, "takes exactly one boolean"},
    {"TraceClock", NUM(1e10), 0, NULL}, /* the highest plausible clock */
    {"TraceClock", NUM(250e6), 0, NULL},
    {"TraceClock", NUM(0), -EINVAL, "from 1e+06 to 1e+10"},
    /* Plausible clocks only: 1 MHz .. 10 GHz. */
    {"TraceClock", NUM(999999), -EINVAL, "from 1e+06 to 1e+10"},
    /* Huge values were converted unchecked (undefined; HighBandwidth... 1e30
     * became 0 and inverted the check). */
    {"TraceClock", NUM(1e300), -EINVAL, "must be a whole number from 1e+06 to 1e+10"},
    {"HighBandwidthThreshold", NUM(1e30), -EINVAL, "must be from 0 to 1e+15"},
    {"HighBandwidthThreshold", NUM(3938461538), 0, NULL},
    /* Fractions where a whole number is meant were silently truncated. */
    {"TraceBufferSize", NUM(16777216.9), -EINVAL, "must be a whole number"},
    {"TraceBufferSize", NUM(33554432), 0, NULL},
    {"MaxConcurrentTraces", NUM(1.5), -EINVAL, "whole number from 1 to 1024"},
    {"TopTalkers", NUM(-1), -EINVAL, "from 0 to 1000"},
    {"FluxUnit", NUM(0), -EINVAL, "must be from 1 to 4096"},
    /* A flux count of less than a byte is not plausible (1e-300 made every
     * bandwidth 0). */
    {"FluxUnit", NUM(1e-300), -EINVAL, "must be from 1 to 4096"},
    {"FluxUnit", NUM(16), 0, NULL},
    {"LatencyClock", NUM(NAN), -EINVAL, "must be from 1e+06 to 1e+10"},
    {"LatencyClock", NUM(2e10), -EINVAL, "must be from 1e+06 to 1e+10"},
    {"TraceTopRequesters", NUM(4096), 0, NULL},
    {"TraceTopRequesters", NUM(4097), -EINVAL, "from 0 to 4096"},
    {"MinReadRequestSize", NUM(384), -EINVAL, "power of two"},
    {"MinReadRequestSize", NUM(1024), 0, NULL},
    {"SimulateKernel", STR("7.0"), -EINVAL, "not one of 5.17, 6.2, 6.9, 6.12, 6.15"},
    {"MPSPolicy", STR("fast"), -EINVAL, "not one of tune_off"},
    {"Device", STR("0000:3g:00.0"), -EINVAL, "not a BDF pattern"},
    {"TraceTimeMode", STR("sometimes"), -EINVAL, "not delta or absolute"},
    {"TraceDirection", NUM(4), -EINVAL, "must be 0, 1, 2 or 3"},
    {"PCIDump", STR("/nonexistent/dump"), -EINVAL, "No such file or directory"},
    {"MachineDirectory", STR("/etc/passwd"), -EINVAL, "not a directory"},
};

static void test_option_table(void **state)
{
        struct engine_config cfg;
        int failed = 0;

        (void)state;
        assert_int_equal(engine_config_init(&cfg), 0);
        for (size_t i = 0; i < sizeof(option_cases) / sizeof(option_cases[0]); i++) {
                const struct option_case *c = &option_cases[i];
                char why[512] = "";
                int ret = engine_config_set(&cfg, c->key, &c->value, 1, why, sizeof(why));

                if (ret != c->ret || (c->why && !strstr(why, c->why))) {
                        print_message("# %s: %d \"%s\", expected %d \"%s\"\n", c->key, ret, why,
                                      c->ret, c->why ? c->why : "");
                        failed++;
                }
        }
        assert_int_equal(failed, 0);
        /* The accepted values landed where the sources read them. */
        assert_int_equal(cfg.trace.clock_hz, 250000000);
        assert_int_equal(cfg.trace.aux_bytes, 33554432);
        assert_true(cfg.pmu.flux_unit_bytes == 16);
        assert_false(cfg.monitor.collect_aer);
        assert_int_equal(cfg.monitor.audit.min_mrrs_bytes, 1024);
        engine_config_clear(&cfg);
}

static void test_option_values(void **state)
{
        struct engine_value bus[3] = {STR("uncore_iio_free_running_2"), NUM(0), STR("0000:15")};
        struct engine_value tune[2] = {STR("qos_tx_p"), NUM(2)};
        struct engine_value types[2] = {STR("posted"), STR("completion")};
        struct engine_config cfg;
        char why[512];

        (void)state;
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set(&cfg, "IIOStackBus", bus, 3, why, sizeof(why)), 0);
        assert_int_equal(cfg.iio.map_count, 1);
        assert_int_equal(cfg.iio.maps[0].bus, 0x15);
        bus[1].number = 0.5;
        assert_int_equal(engine_config_set(&cfg, "IIOStackBus", bus, 3, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "whole number from 0 to 255"));
        assert_int_equal(engine_config_set(&cfg, "Tune", tune, 2, why, sizeof(why)), 0);
        tune[1].number = 3;
        assert_int_equal(engine_config_set(&cfg, "Tune", tune, 2, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "qos_tx_p: 3 is not a level (0, 1 or 2; nothing is clamped)");
        assert_int_equal(engine_config_set(&cfg, "TraceType", types, 2, why, sizeof(why)), 0);
        assert_int_equal(cfg.trace.type_mask, 5);

        /* Checks across options name the options the user wrote. */
        assert_int_equal(
            engine_config_set_number(&cfg, "TraceBufferSize", 25165824, why, sizeof(why)), 0);
        assert_int_equal(engine_config_check(&cfg, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "TraceBufferSize 25165824: must be a power of two"));
        assert_int_equal(
            engine_config_set_number(&cfg, "TraceBufferSize", 16777216, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "TraceDuration", 20, why, sizeof(why)), 0);
        assert_int_equal(engine_config_check(&cfg, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "TraceDuration 20, TracePeriod 10"));
        assert_int_equal(engine_config_set_boolean(&cfg, "CollectTrace", false, why, sizeof(why)),
                         0);
        assert_int_equal(engine_config_check(&cfg, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_string(&cfg, "SimulateKernel", "6.9", why, sizeof(why)),
                         0);
        assert_int_equal(engine_config_check(&cfg, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "option SimulateKernel: only with Simulate");
        engine_config_clear(&cfg);
}

/* Every option has its reference text; the README is generated from it. */
static void test_option_docs(void **state)
{
        size_t count;
        const struct engine_option *o = engine_options(&count);

        (void)state;
        assert_true(count >= 45);
        for (size_t i = 0; i < count; i++) {
                assert_non_null(o[i].set);
                assert_true(o[i].value_text && *o[i].value_text);
                assert_true(o[i].default_text && *o[i].default_text);
                assert_true(o[i].help && strlen(o[i].help) > 10);
                assert_ptr_equal(engine_option_find(o[i].name), &o[i]);
        }
}

/* ---- the machine ---- */

static void simulate(struct engine_config *cfg, const char *machine)
{
        char why[256];

        assert_int_equal(engine_config_init(cfg), 0);
        assert_int_equal(engine_config_set_string(cfg, "Simulate", machine, why, sizeof(why)), 0);
        assert_int_equal(
            engine_config_set_string(cfg, "MachineDirectory", MACHINES, why, sizeof(why)), 0);
}

static void test_open_errors(void **state)
{
        struct engine_host host = {.log = capture_log, .manual = true};
        struct engine_config cfg;
        struct engine *e = NULL;
        char why[512] = "";

        (void)state;
        simulate(&cfg, "no-such-machine");
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), -ENOENT);
        assert_null(e);
        assert_non_null(strstr(why, "Simulate \"no-such-machine\""));
        assert_non_null(strstr(why, "no-such-machine.json"));
        engine_config_clear(&cfg);
}

struct seen {
        size_t sets, samples, unlabelled, from_threads;
        unsigned int sources;
};

static void count_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct seen *s = ctx;

        s->sets++;
        s->samples += set->count;
        if (unit) {
                s->sources |= engine_unit_source(unit);
                s->from_threads += engine_unit_source(unit) & ENGINE_SOURCE_HISI_PCIE ? 1 : 0;
        }
        for (size_t i = 0; i < set->count; i++) {
                const char *v = pcie_sample_label(&set->samples[i], "simulated");

                s->unlabelled += !v || strcmp(v, "kunpeng930-2p");
        }
}

/* Manual mode: nothing ticks until the host says so; then every unit due
 * publishes once, and the simulated label is on every sample. */
static void test_manual_steps(void **state)
{
        struct engine_host host = {.log = capture_log,
                                   .interval = 1,
                                   .clock = fake_clock,
                                   .manual = true,
                                   .label_simulated = true};
        struct engine_config cfg;
        struct seen seen = {0};
        struct engine *e;
        char why[512] = "";
        size_t started;

        (void)state;
        fake_now = 100;
        simulate(&cfg, "kunpeng930-2p");
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_string_equal(engine_simulated(e), "kunpeng930-2p");
        assert_int_equal(engine_start(e), 0);
        /* 2 SICLs x 3 PCIe cores, 6 PTT devices, one monitor, tune, inventory. */
        assert_int_equal(engine_unit_count(e, ENGINE_SOURCE_HISI_PCIE, &started), 6);
        assert_int_equal(started, 6);
        assert_int_equal(engine_unit_count(e, ENGINE_SOURCE_PTT, NULL), 6);
        assert_int_equal(engine_unit_count(e, ENGINE_SOURCE_MONITOR, NULL), 1);
        assert_int_equal(engine_unit_count(e, ENGINE_SOURCE_INTEL_IIO, NULL), 0);
        assert_true(engine_next_due(e) <= 101.0 && engine_next_due(e) >= 100.0);

        /* Before any tick only the read-time sources and the info. */
        assert_int_equal(engine_read(e, count_set, &seen), 0);
        assert_int_equal(seen.from_threads, 0);
        assert_true(seen.samples > 100);
        assert_int_equal(seen.unlabelled, 0);

        while (engine_next_due(e) <= 101.0) {
                fake_now = engine_next_due(e);
                engine_advance(e, fake_now);
        }
        memset(&seen, 0, sizeof(seen));
        assert_int_equal(engine_read(e, count_set, &seen), 0);
        assert_int_equal(seen.from_threads, 6);
        assert_true(seen.sources & ENGINE_SOURCE_PTT);
        assert_int_equal(seen.unlabelled, 0);
        /* A finished interval is handed once. */
        memset(&seen, 0, sizeof(seen));
        assert_int_equal(engine_read(e, count_set, &seen), 0);
        assert_int_equal(seen.from_threads, 0);
        engine_close(e);
        engine_config_clear(&cfg);
}

/* Threads: each unit publishes on its own schedule, and stop joins them
 * all within a second even with long intervals and PTT windows running. */
static void test_threads_stop_within_a_second(void **state)
{
        struct engine_host host = {.log = capture_log, .interval = 0.2, .label_simulated = true};
        struct engine_config cfg;
        struct seen seen = {0};
        struct engine *e;
        char why[512] = "";
        double t0, took;

        (void)state;
        simulate(&cfg, "kunpeng930-2p");
        assert_int_equal(engine_config_set_number(&cfg, "TracePeriod", 0.5, why, sizeof(why)), 0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        /* Up to 5 s on a loaded machine for the first publications. */
        for (int i = 0; i < 50 && seen.from_threads < 6; i++) {
                usleep(100000);
                engine_read(e, count_set, &seen);
        }
        assert_true(seen.from_threads >= 6);
        assert_int_equal(seen.unlabelled, 0);
        t0 = mono();
        engine_stop(e);
        took = mono() - t0;
        print_message("# engine_stop joined %zu units in %.3f s\n", engine_unit_count(e, ~0u, NULL),
                      took);
        assert_true(took < 1.0);
        engine_stop(e); /* idempotent */
        engine_close(e);
        engine_config_clear(&cfg);
}

/* A dump: no PMU sources (counters need the machine), the monitor reads. */
static void test_dump_has_no_counters(void **state)
{
        struct engine_host host = {.log = capture_log, .manual = true};
        struct engine_config cfg;
        struct seen seen = {0};
        struct engine *e;
        char why[512] = "";

        (void)state;
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "PCIDump",
                                                  TOP_SRCDIR "/tests/fixtures/synthetic/"
                                                             "downtrained.lspci-xxxx.txt",
                                                  why, sizeof(why)),
                         0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_null(engine_simulated(e));
        assert_null(engine_env(e)->sysfs_root);
        assert_int_equal(engine_start(e), 0);
        assert_int_equal(engine_unit_count(e,
                                           ENGINE_SOURCE_HISI_PCIE | ENGINE_SOURCE_PTT |
                                               ENGINE_SOURCE_INTEL_IIO | ENGINE_SOURCE_PTT_TUNE,
                                           NULL),
                         0);
        assert_int_equal(engine_read(e, count_set, &seen), 0);
        assert_true(seen.samples > 10);
        engine_close(e);
        engine_config_clear(&cfg);
}

/* ---- problems that last ---- */

struct complaint_log {
        int warnings, infos;
        char last[256];
};

static void count_log(void *ctx, enum hw_log_level level, const char *msg)
{
        struct complaint_log *l = ctx;

        if (level == HW_LOG_WARNING)
                l->warnings++;
        else if (level == HW_LOG_INFO)
                l->infos++;
        snprintf(l->last, sizeof(l->last), "%s", msg);
}

/* A lasting problem is logged when it starts and when it clears, never
 * once per interval; a second spell is logged again. */
static void test_complaint_logged_once_until_cleared(void **state)
{
        struct complaint_log seen = {0};
        struct hw_env env = {.log = count_log, .log_ctx = &seen};
        struct engine_complaint c = {0};

        (void)state;
        engine_complaint_clear(&env, &c, "nothing to clear");
        assert_int_equal(seen.infos, 0);
        for (int i = 0; i < 5; i++)
                engine_complain(&env, &c, "core %d: reading counters: %s", 3, "No such device");
        assert_int_equal(seen.warnings, 1);
        assert_string_equal(seen.last, "core 3: reading counters: No such device");
        engine_complaint_clear(&env, &c, "core %d: reading counters again", 3);
        engine_complaint_clear(&env, &c, "core %d: reading counters again", 3);
        assert_int_equal(seen.infos, 1);
        assert_string_equal(seen.last, "core 3: reading counters again");
        engine_complain(&env, &c, "core %d: reading counters: %s", 3, "Input/output error");
        assert_int_equal(seen.warnings, 2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_option_table),
            cmocka_unit_test(test_option_values),
            cmocka_unit_test(test_option_docs),
            cmocka_unit_test(test_open_errors),
            cmocka_unit_test(test_manual_steps),
            cmocka_unit_test(test_threads_stop_within_a_second),
            cmocka_unit_test(test_dump_has_no_counters),
            cmocka_unit_test(test_complaint_logged_once_until_cleared),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
