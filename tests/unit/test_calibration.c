// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_calibration.c - `pciescope calibrate` below the CLI: the arithmetic
 * (collectors/calibration.c), the calibration file and the CalibrationFile
 * option (engine/calibration_file.c, engine_config.c), the simulated load
 * (sim_pmu_add_load through the seam), the live load op on this machine's
 * disk, and engine_calibrate on simulated machines whose hidden units
 * differ from the defaults.
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
#include <dirent.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "calibrate.h"
#include "calibration.h"
#include "calibration_file.h"
#include "engine.h"
#include "engine_config.h"
#include "hw_env.h"
#include "support.h"

#ifndef TEST_MACHINE_DIR
#error "TEST_MACHINE_DIR must name tests/fixtures/machines"
#endif
#ifndef SIM_MACHINE_DIR
#error "SIM_MACHINE_DIR must name sim/machines"
#endif

/* ---- the arithmetic ---- */

static void test_value_verdicts(void **state)
{
        struct calib_value v;
        char text[200];

        (void)state;
        calib_value_init(&v, "");
        calib_value_finish(&v, 0.02, 5);
        assert_int_equal(v.verdict, CALIB_NOT_MEASURABLE);
        assert_string_equal(v.why, "not measured");
        assert_true(isnan(v.value));

        /* Three usable repeats of five: consistent; the two that gave no
         * number are counted as dropped, with the reason. */
        calib_value_init(&v, "");
        calib_value_add(&v, 100);
        calib_value_add(&v, NAN); /* dropped */
        calib_value_add(&v, -3);  /* dropped */
        calib_value_add(&v, 101);
        calib_value_add(&v, 99.5);
        calib_value_finish(&v, 0.02, 5);
        assert_int_equal(v.repeats, 3);
        assert_int_equal(v.dropped, 2);
        assert_int_equal(v.asked, 5);
        assert_float_equal(v.value, 100, 1e-12); /* the median */
        assert_float_equal(v.spread, 1.5 / 100, 1e-12);
        assert_int_equal(v.verdict, CALIB_CONSISTENT);
        assert_string_equal(v.why, "");
        calib_value_drops_text(&v, text, sizeof(text));
        assert_string_equal(text, "2 of 5 repeats dropped: 2 the counts gave no number (nothing "
                                  "added, or no time)");

        /* The same three of six asked: not more than half. */
        calib_value_init(&v, "");
        calib_value_add(&v, 100);
        calib_value_add(&v, 101);
        calib_value_add(&v, 99.5);
        calib_value_drop(&v, "load too small (under 64 MiB moved)");
        calib_value_drop(&v, "the load failed");
        calib_value_drop(&v, "load too small (under 64 MiB moved)");
        calib_value_finish(&v, 0.02, 6);
        assert_int_equal(v.verdict, CALIB_NOT_MEASURABLE);
        assert_float_equal(v.value, 100, 1e-12); /* kept, for people */
        assert_string_equal(v.why, "only 3 usable repeats of 6: at least 3, and more than half, "
                                   "are needed; 3 of 6 repeats dropped: 2 load too small (under "
                                   "64 MiB moved), 1 the load failed");

        /* One repeat, or two that agree exactly, are not a consistent value. */
        for (int n = 1; n <= 2; n++) {
                calib_value_init(&v, "");
                for (int i = 0; i < n; i++)
                        calib_value_add(&v, 16);
                calib_value_finish(&v, 0.02, (size_t)n);
                assert_int_equal(v.verdict, CALIB_NOT_MEASURABLE);
                assert_float_equal(v.spread, 0, 0);
                assert_non_null(strstr(v.why, n == 1 ? "only 1 usable repeat of 1: at least 3"
                                                     : "only 2 usable repeats of 2: at least 3"));
        }

        /* More distinct reasons than kept: the last holds the rest. */
        calib_value_init(&v, "");
        calib_value_drop(&v, "a");
        calib_value_drop(&v, "b");
        calib_value_drop(&v, "c");
        calib_value_drop(&v, "d");
        calib_value_drop(&v, "e");
        calib_value_drop(&v, "a");
        calib_value_finish(&v, 0.02, 6);
        assert_string_equal(v.why, "6 of 6 repeats dropped: 2 a, 1 b, 1 c, 2 other reasons");

        calib_value_init(&v, "");
        calib_value_add(&v, 4);
        calib_value_add(&v, 4.4);
        calib_value_add(&v, 4.2);
        calib_value_finish(&v, 0.02, 3);
        assert_float_equal(v.value, 4.2, 1e-12);
        assert_int_equal(v.verdict, CALIB_INCONSISTENT);
        assert_non_null(strstr(v.why, "differ by 9.5 %"));
        assert_string_equal(calib_verdict_name(CALIB_NOT_MEASURABLE), "not measurable");

        /* Outside the plausible range: not measurable, and says so. */
        calib_value_init(&v, "");
        for (int i = 0; i < 3; i++)
                calib_value_add(&v, 0.001);
        calib_value_finish(&v, 0.02, 3);
        assert_int_equal(v.verdict, CALIB_CONSISTENT);
        calib_value_check_range(&v, CALIB_FLUX_UNIT_MIN, CALIB_FLUX_UNIT_MAX, "bytes per count");
        assert_int_equal(v.verdict, CALIB_NOT_MEASURABLE);
        assert_non_null(
            strstr(v.why, "0.001 is outside the plausible range 1..4096 bytes per count"));
}

/* The table's numbers fit their columns, however large or small. */
static void test_format(void **state)
{
        static const struct {
                double x;
                int width;
                const char *text;
        } cases[] = {
            {16, 11, "16"},
            {249995675.4, 11, "2.49996e+08"},
            {1e300, 11, "1e+300"},
            {-1.234567e-300, 11, "-1.235e-300"},
            {-1.234567e-300, 8, "-1e-300"},
            {123456789012.0, 8, "1.23e+11"},
            {0.00123456789, 8, "0.001235"},
            {1.5e-7, 8, "1.5e-07"},
            {1e302, 8, "1e+302"},
            {NAN, 8, "-"},
            {INFINITY, 8, "inf"},
        };
        char buf[32];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                calib_format(cases[i].x, cases[i].width, buf, sizeof(buf));
                if (strcmp(buf, cases[i].text) || (int)strlen(buf) > cases[i].width)
                        fail_msg("case %zu: %g in %d: \"%s\", not \"%s\"", i, cases[i].x,
                                 cases[i].width, buf, cases[i].text);
        }
}

static void test_estimators(void **state)
{
        (void)state;
        /* 1 GiB in 16-byte counts, over a baseline of 1000 counts/s for 0.5 s */
        assert_float_equal(calib_flux_unit(1ull << 30, (1u << 26) + 500.0, 0.5, 2000, 2), 16, 1e-9);
        assert_float_equal(calib_flux_unit(4096, 1024, 1, 0, 0), 4, 1e-12); /* no idle window */
        assert_true(isnan(calib_flux_unit(4096, 100, 1, 200, 1)));          /* nothing added */
        assert_true(isnan(calib_flux_unit(0, 100, 1, 0, 1)));               /* no bytes */
        assert_true(isnan(calib_flux_unit(4096, 100, 0, 0, 1)));            /* did not run */
        assert_float_equal(calib_rate(2e8, 1), 2e8, 0);
        assert_true(isnan(calib_rate(5, 0)));
        /* 1000 TLPs of 400 cycles; the trace: 1000 requests of 200 ticks
         * at 250 MHz = 800 ns each: 400 cycles / 800 ns = 500 MHz. */
        assert_float_equal(calib_latency_clock(4e5, 1000, 2e5, 1000, 250e6), 500e6, 1e-3);
        assert_true(isnan(calib_latency_clock(4e5, 0, 2e5, 1000, 250e6)));
        assert_true(isnan(calib_latency_clock(4e5, 1000, 2e5, 1000, 0)));
}

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rng32(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (uint32_t)rng_state;
}

static void test_time_mode(void **state)
{
        struct calib_time_obs o;
        uint64_t tick = 0xfffff000ull, span = 0;

        (void)state;
        /* A free-running 32-bit counter that wraps, some entries on one tick. */
        calib_time_obs_init(&o, 32);
        for (int i = 0; i < 5000; i++) {
                uint32_t gap = i % 7 == 0 ? 0 : 1 + rng32() % 300;

                tick += gap;
                if (i)
                        span += gap;
                calib_time_obs_add(&o, (uint32_t)tick);
        }
        assert_int_equal(calib_time_mode_of(&o), CALIB_TIME_ABSOLUTE);
        assert_true(calib_time_rising_share(&o) > 0.99);
        assert_int_equal(calib_time_span(&o, CALIB_TIME_ABSOLUTE), span);

        /* Deltas: random gaps (their sum is the span, the first left out). */
        calib_time_obs_init(&o, 32);
        span = 0;
        for (int i = 0; i < 5000; i++) {
                uint32_t gap = i == 0 ? 0x4c033 : 1 + rng32() % 300;

                if (i)
                        span += gap;
                calib_time_obs_add(&o, gap);
        }
        assert_int_equal(calib_time_mode_of(&o), CALIB_TIME_DELTA);
        assert_true(calib_time_rising_share(&o) < 0.6);
        assert_int_equal(calib_time_span(&o, CALIB_TIME_DELTA), span);

        /* The kernel doc's example: a large first value, then 2, 2, 2...
         * Equal neighbours say nothing: too little to decide. */
        calib_time_obs_init(&o, 32);
        calib_time_obs_add(&o, 0x4c033);
        for (int i = 0; i < 1000; i++)
                calib_time_obs_add(&o, 2);
        assert_int_equal(calib_time_mode_of(&o), CALIB_TIME_UNDECIDED);

        /* An 11-bit counter wraps every 2048 ticks: still rising. */
        calib_time_obs_init(&o, 11);
        tick = 0;
        for (int i = 0; i < 3000; i++) {
                tick += 1 + rng32() % 500;
                calib_time_obs_add(&o, (uint32_t)tick);
        }
        assert_int_equal(calib_time_mode_of(&o), CALIB_TIME_ABSOLUTE);
        /* Too few entries. */
        calib_time_obs_init(&o, 32);
        for (int i = 0; i < 50; i++)
                calib_time_obs_add(&o, (uint32_t)i * 10);
        assert_int_equal(calib_time_mode_of(&o), CALIB_TIME_UNDECIDED);
}

/* ---- the file ---- */

static const char good_file[] =
    "{\"pciescope_calibration\": 1, \"device\": \"0000:01:00.0\",\n"
    " \"flux_unit_bytes\": {\"value\": 16, \"verdict\": \"consistent\", \"spread\": 0},\n"
    " \"time_clock_hz\": {\"value\": 2e8, \"verdict\": \"consistent\"},\n"
    " \"latency_clock_hz\": {\"value\": 5.2e8, \"verdict\": \"inconsistent\"},\n"
    " \"ptt_clock_hz\": {\"value\": 249996000.4, \"verdict\": \"consistent\"},\n"
    " \"ptt_time_mode\": {\"value\": \"absolute\", \"verdict\": \"consistent\"}}\n\n";

static void test_file_parse(void **state)
{
        struct calibration_units u;
        char why[512];

        (void)state;
        assert_int_equal(
            calibration_parse(good_file, strlen(good_file), "f.json", &u, why, sizeof(why)), 0);
        assert_true(u.have_flux_unit);
        assert_float_equal(u.flux_unit_bytes, 16, 0);
        assert_false(u.have_latency_clock); /* inconsistent: not applied */
        assert_true(u.have_trace_clock);
        assert_true(u.have_time_mode);
        assert_int_equal(u.time_mode, PTT_TIME_ABSOLUTE);

        /* The root complex of a root bus (AMD Turin): applied when
         * consistent, the other keys for people. */
        static const char df_file[] =
            "{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"root_bus\": "
            "\"0001:40\", \"socket\": 1, \"root_complex\": 7, \"direction\": \"write\", "
            "\"verdict\": \"consistent\", \"repeats\": 5, \"asked\": 5}}";
        assert_int_equal(
            calibration_parse(df_file, strlen(df_file), "f.json", &u, why, sizeof(why)), 0);
        assert_true(u.have_df_map);
        assert_int_equal(u.df_socket, 1);
        assert_int_equal(u.df_rc, 7);
        assert_int_equal(u.df_domain, 1);
        assert_int_equal(u.df_bus, 0x40);
        static const char df_none[] =
            "{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"root_bus\": "
            "\"0000:40\", \"socket\": null, \"root_complex\": null, \"verdict\": \"not "
            "measurable\", \"why\": \"no root complex rose\"}}";
        assert_int_equal(
            calibration_parse(df_none, strlen(df_none), "f.json", &u, why, sizeof(why)), 0);
        assert_false(u.have_df_map);

        static const struct {
                const char *text, *why;
        } bad[] = {
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": []}",
             "amd_df_root_complex: not an object"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"socket\": 0}}",
             "amd_df_root_complex: no \"verdict\" string"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"verdict\": "
             "\"consistent\", \"socket\": 256, \"root_complex\": 1, \"root_bus\": \"0000:40\"}}",
             "amd_df_root_complex: a consistent map needs a \"socket\" 0..255"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"verdict\": "
             "\"consistent\", \"socket\": 0, \"root_complex\": 8, \"root_bus\": \"0000:40\"}}",
             "amd_df_root_complex: a consistent map needs a \"root_complex\" 0..7"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"verdict\": "
             "\"consistent\", \"socket\": 0, \"root_complex\": 1, \"root_bus\": \"40\"}}",
             "amd_df_root_complex: a consistent map needs a \"root_bus\" dddd:bb"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"verdict\": "
             "\"consistent\", \"socket\": 0, \"root_complex\": 1, \"root_bus\": \"0000:4g\"}}",
             "amd_df_root_complex: a consistent map needs a \"root_bus\" dddd:bb"},
            {"{\"pciescope_calibration\": 1, \"amd_df_root_complex\": {\"verdict\": "
             "\"consistent\", \"socket\": 0, \"root_complex\": \"1\", \"root_bus\": \"0000:40\"}}",
             "amd_df_root_complex: a consistent map needs a \"root_complex\" 0..7"},
            {"", "byte 0: JSON syntax error"},
            {"{\"pciescope_calibration\": 1,}", "JSON syntax error"},
            {"{\"pciescope_calibration\": 1} x", "byte 29: JSON syntax error"},
            {"[1]", "not a JSON object"},
            {"{\"device\": \"x\"}", "pciescope_calibration: missing or not 1"},
            {"{\"pciescope_calibration\": 2}", "pciescope_calibration: missing or not 1"},
            {"{\"pciescope_calibration\": 1, \"flux_unit\": {}}", "flux_unit: unknown key"},
            {"{\"pciescope_calibration\": 1, \"flux_unit_bytes\": 4}",
             "flux_unit_bytes: not an object"},
            {"{\"pciescope_calibration\": 1, \"flux_unit_bytes\": {\"value\": 4}}",
             "flux_unit_bytes: no \"verdict\" string"},
            {"{\"pciescope_calibration\": 1, \"flux_unit_bytes\": {\"value\": \"4\", "
             "\"verdict\": \"consistent\"}}",
             "flux_unit_bytes: a consistent value must be a number"},
            {"{\"pciescope_calibration\": 1, \"ptt_clock_hz\": {\"value\": -1, "
             "\"verdict\": \"consistent\"}}",
             "ptt_clock_hz: the value must be a number above 0"},
            {"{\"pciescope_calibration\": 1, \"ptt_time_mode\": {\"value\": \"tick\"}}",
             "ptt_time_mode: value must be"},
            {"{\"pciescope_calibration\": 1, \"flux_unit_bytes\": {\"value\": 1e-300, "
             "\"verdict\": \"consistent\"}}",
             "flux_unit_bytes: value 1e-300 is outside the plausible range 1..4096 bytes per "
             "count"},
            {"{\"pciescope_calibration\": 1, \"flux_unit_bytes\": {\"value\": 4097, "
             "\"verdict\": \"consistent\"}}",
             "flux_unit_bytes: value 4097 is outside the plausible range 1..4096"},
            {"{\"pciescope_calibration\": 1, \"latency_clock_hz\": {\"value\": 999999, "
             "\"verdict\": \"consistent\"}}",
             "latency_clock_hz: value 999999 is outside the plausible range 1e+06..1e+10 Hz"},
            {"{\"pciescope_calibration\": 1, \"ptt_clock_hz\": {\"value\": 2e10, "
             "\"verdict\": \"consistent\"}}",
             "ptt_clock_hz: value 20000000000 is outside the plausible range 1e+06..1e+10 Hz"},
            {"{\"pciescope_calibration\": 1, \"time_clock_hz\": {\"value\": 1, "
             "\"verdict\": \"consistent\"}}",
             "time_clock_hz: value 1 is outside the plausible range 1e+06..1e+10 Hz"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int ret;

                why[0] = '\0';
                ret = calibration_parse(bad[i].text, strlen(bad[i].text), "f.json", &u, why,
                                        sizeof(why));
                if (ret != -EBADMSG)
                        fail_msg("case %zu: %d (%s)", i, ret, why);
                if (!strstr(why, bad[i].why) || strncmp(why, "f.json: ", 8))
                        fail_msg("case %zu: \"%s\" does not say \"%s\"", i, why, bad[i].why);
                assert_false(u.have_flux_unit || u.have_trace_clock || u.have_time_mode ||
                             u.have_df_map);
        }
        assert_int_equal(calibration_file_read("/nonexistent/c.json", &u, why, sizeof(why)),
                         -ENOENT);
        assert_non_null(strstr(why, "/nonexistent/c.json"));
        assert_int_equal(calibration_file_read("/dev/zero", &u, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "not a regular file"));
}

static char tmp_dir[64];

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void test_option(void **state)
{
        struct engine_config c;
        char path[128], why[512];

        (void)state;
        snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/test_calibration.XXXXXX");
        assert_non_null(mkdtemp(tmp_dir));
        snprintf(path, sizeof(path), "%s/c.json", tmp_dir);
        write_text(path, good_file);

        /* The file sets what it settles; the rest keeps its default. */
        assert_int_equal(engine_config_init(&c), 0);
        assert_int_equal(engine_config_set_string(&c, "CalibrationFile", path, why, sizeof(why)),
                         0);
        assert_float_equal(c.pmu.flux_unit_bytes, 16, 0);
        assert_float_equal(c.pmu.latency_clock_hz, 1e9, 0);
        assert_int_equal(c.trace.clock_hz, 249996000);
        assert_int_equal(c.trace.time_mode, PTT_TIME_ABSOLUTE);
        engine_config_clear(&c);

        /* An explicit option wins, before or after the file. */
        assert_int_equal(engine_config_init(&c), 0);
        assert_int_equal(engine_config_set_number(&c, "FluxUnit", 8, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_string(&c, "CalibrationFile", path, why, sizeof(why)),
                         0);
        assert_int_equal(engine_config_set_string(&c, "TraceTimeMode", "delta", why, sizeof(why)),
                         0);
        assert_float_equal(c.pmu.flux_unit_bytes, 8, 0);
        assert_int_equal(c.trace.time_mode, PTT_TIME_DELTA);
        assert_int_equal(c.trace.clock_hz, 249996000);
        engine_config_clear(&c);

        /* A value outside the plausible range names the file, key, value
         * and range. */
        write_text(path, "{\"pciescope_calibration\": 1, \"flux_unit_bytes\": {\"value\": 1e6, "
                         "\"verdict\": \"consistent\"}}");
        assert_int_equal(engine_config_init(&c), 0);
        assert_int_not_equal(
            engine_config_set_string(&c, "CalibrationFile", path, why, sizeof(why)), 0);
        assert_non_null(strstr(why, path));
        assert_non_null(
            strstr(why, "flux_unit_bytes: value 1000000 is outside the plausible range 1..4096"));
        engine_config_clear(&c);

        /* The options take the same ranges. */
        assert_int_equal(engine_config_init(&c), 0);
        assert_int_not_equal(engine_config_set_number(&c, "FluxUnit", 1e-300, why, sizeof(why)), 0);
        assert_non_null(strstr(why, "must be from 1 to 4096"));
        assert_int_not_equal(engine_config_set_number(&c, "LatencyClock", 1e11, why, sizeof(why)),
                             0);
        assert_int_not_equal(engine_config_set_number(&c, "TraceClock", 999999, why, sizeof(why)),
                             0);
        assert_int_equal(engine_config_set_number(&c, "FluxUnit", 1, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&c, "LatencyClock", 1e10, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&c, "TraceClock", 1e6, why, sizeof(why)), 0);
        engine_config_clear(&c);

        /* Not a file. */
        assert_int_equal(engine_config_init(&c), 0);
        assert_int_not_equal(
            engine_config_set_string(&c, "CalibrationFile", tmp_dir, why, sizeof(why)), 0);
        engine_config_clear(&c);
        unlink(path);
        rmdir(tmp_dir);
}

/* ---- a simulated machine ---- */

struct sim_run {
        struct engine_config cfg;
        struct engine *e;
};

static void fake_sleep(void *ctx, double deadline)
{
        (void)ctx;
        if (deadline > fake_now)
                fake_now = deadline;
}

static void open_sim(struct sim_run *s, const char *dir, const char *machine)
{
        struct engine_host host = {.clock = fake_clock, .manual = true, .log = capture_log};
        char why[512] = "", path[PATH_MAX];

        fake_now = 1000;
        snprintf(path, sizeof(path), "%s/%s.json", dir, machine);
        assert_int_equal(engine_config_init(&s->cfg), 0);
        assert_int_equal(engine_config_set_string(&s->cfg, "Simulate", path, why, sizeof(why)), 0);
        if (engine_open(&s->cfg, &host, &s->e, why, sizeof(why)))
                fail_msg("%s", why);
}

static void close_sim(struct sim_run *s)
{
        engine_close(s->e);
        engine_config_clear(&s->cfg);
}

static void calibrate(struct sim_run *s, const char *device, struct calibration *c)
{
        struct calibrate_opts o;
        char why[512] = "";

        calibrate_opts_default(&o);
        o.device = device;
        o.repeats = 3;
        o.bytes = 256u << 20;
        o.sleep_until = fake_sleep;
        if (engine_calibrate(s->e, &o, c, why, sizeof(why)))
                fail_msg("%s", why);
}

static void assert_within(const struct calib_value *v, double truth, const char *what)
{
        if (v->verdict != CALIB_CONSISTENT || !(fabs(v->value / truth - 1) <= 0.02))
                fail_msg("%s: %g (%s, %s), truth %g", what, v->value,
                         calib_verdict_name(v->verdict), v->why, truth);
}

/* Every hidden unit differs from the defaults and is recovered within 2 %. */
static void test_sim_odd_units(void **state)
{
        struct sim_run s;
        struct calibration c;

        (void)state;
        open_sim(&s, TEST_MACHINE_DIR, "calib-odd-units");
        calibrate(&s, "0000:01:00.0", &c);
        assert_within(&c.flux_unit_bytes, 16, "flux unit");
        assert_within(&c.time_clock_hz, 200e6, "time clock");
        assert_within(&c.ptt_clock_hz, 250e6, "PTT clock");
        assert_within(&c.latency_clock_hz, 500e6, "latency clock");
        assert_int_equal(c.ptt_time_mode, CALIB_TIME_ABSOLUTE);
        assert_string_equal(c.root_port, "0000:00:00.0");
        assert_string_equal(c.pmu, "hisi_pcie0_core0");
        assert_string_equal(c.ptt, "hisi_ptt0_0");
        /* Outbound requests carry the Root Port's ID (the simulator's rule). */
        assert_int_equal(c.outbound_count, 1);
        assert_int_equal(c.outbound[0].requester_id, 0x0000);
        assert_true(c.outbound[0].tlps > 1000);
        assert_int_equal(c.load_bytes, 3 * (256u << 20));
        close_sim(&s);
}

/* The defaults, on a shipped machine (deltas, 100 MHz). */
static void test_sim_defaults(void **state)
{
        struct sim_run s;
        struct calibration c;

        (void)state;
        open_sim(&s, SIM_MACHINE_DIR, "kunpeng930-2p");
        calibrate(&s, "0000:02:00.0", &c);
        assert_within(&c.flux_unit_bytes, 4, "flux unit");
        assert_within(&c.time_clock_hz, 100e6, "time clock");
        assert_within(&c.ptt_clock_hz, 100e6, "PTT clock");
        assert_within(&c.latency_clock_hz, 1e9, "latency clock");
        assert_int_equal(c.ptt_time_mode, CALIB_TIME_DELTA);
        assert_int_equal(c.outbound_count, 1);
        assert_int_equal(c.outbound[0].requester_id, 0x0040); /* 00:08.0 */
        close_sim(&s);
}

/* Other readers below the port: the latency clock is refused with the
 * reason, the rest still measured. */
static void test_sim_shared_port(void **state)
{
        struct sim_run s;
        struct calibration c;

        (void)state;
        open_sim(&s, SIM_MACHINE_DIR, "kunpeng930-misconfig");
        calibrate(&s, "0000:04:00.0", &c);
        assert_within(&c.flux_unit_bytes, 4, "flux unit");
        assert_int_equal(c.latency_clock_hz.verdict, CALIB_NOT_MEASURABLE);
        assert_non_null(strstr(c.latency_clock_hz.why, "other functions below 0000:00:08.0"));
        close_sim(&s);
}

static void test_sim_refusals(void **state)
{
        struct sim_run s;
        struct calibrate_opts o;
        struct calibration c;
        char why[512];
        static const struct {
                const char *machine, *device, *why;
        } cases[] = {
            {"kunpeng930-2p", "0000:55:00.0", "0000:55:00.0: no such PCI function"},
            {"kunpeng930-2p", "0000:00:08.0", "is not below a Root Port"},
            {"kunpeng930-2p", "zz", "not a PCI address"},
            {"spr-2s", "0000:16:00.0", "no hisi_pcie PMU covers"},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                open_sim(&s, SIM_MACHINE_DIR, cases[i].machine);
                calibrate_opts_default(&o);
                o.device = cases[i].device;
                o.sleep_until = fake_sleep;
                why[0] = '\0';
                assert_int_not_equal(engine_calibrate(s.e, &o, &c, why, sizeof(why)), 0);
                if (!strstr(why, cases[i].why))
                        fail_msg("case %zu: \"%s\" does not say \"%s\"", i, why, cases[i].why);
                close_sim(&s);
        }
        /* A command that fails: every unit that needs the load says so. */
        open_sim(&s, SIM_MACHINE_DIR, "kunpeng930-2p");
        calibrate_opts_default(&o);
        o.device = "0000:02:00.0";
        o.command = "exit 3";
        o.repeats = 3;
        o.sleep_until = fake_sleep;
        assert_int_equal(engine_calibrate(s.e, &o, &c, why, sizeof(why)), 0);
        assert_int_equal(c.flux_unit_bytes.verdict, CALIB_NOT_MEASURABLE);
        assert_non_null(strstr(c.flux_unit_bytes.why, "the command exited with status 3"));
        close_sim(&s);
}

/* ---- the live load op: a command (the disk reads: test_hw_load.c) ---- */

/* Processes whose command line starts with @marker, zombies left out
 * (*@zombies: how many of those). */
static int count_marked(const char *marker, int *zombies)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        int n = 0;

        assert_non_null(d);
        *zombies = 0;
        while ((de = readdir(d))) {
                char path[300], buf[4096], state = 0;
                size_t len;
                FILE *f;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                f = fopen(path, "r");
                if (!f)
                        continue;
                len = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                for (size_t i = 0; i < len; i++)
                        if (!buf[i])
                                buf[i] = ' ';
                buf[len] = '\0';
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                f = fopen(path, "r");
                if (f) {
                        if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
                                state = 0;
                        fclose(f);
                }
                if (strncmp(buf, marker, strlen(marker)))
                        continue;
                if (state == 'Z')
                        (*zombies)++;
                else
                        n++;
        }
        closedir(d);
        return n;
}

static double mono(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs @command with @timeout_s to its end; its poll result, how long it
 * took and *@why. */
static int run_command(const char *command, double timeout_s, double *took, char *why,
                       size_t whylen)
{
        struct hw_load_request req = {
            .bytes = 1u << 20, .command = command, .timeout_s = timeout_s};
        struct hw_load_result res = {0};
        struct hw_load *l;
        double t0 = mono();
        int ret;

        snprintf(req.bdf, sizeof(req.bdf), "0000:00:00.0");
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, whylen), 0);
        while (!(ret = load_ops_system.poll(NULL, l, &res, why, whylen)))
                usleep(1000);
        load_ops_system.release(NULL, l);
        *took = mono() - t0;
        return ret;
}

/* A command that ignores SIGTERM, or leaves a grandchild that does, is
 * stopped whole: on its time limit and at its end, within the limit and
 * the grace period, with nothing left running. */
static void test_live_command_group(void **state)
{
        char why[512] = "", cmd[256];
        double took;
        int zombies, ret;

        (void)state;
        /* Ignores SIGTERM, runs past its 0.5 s. */
        ret = run_command("trap '' TERM; sleep 1000.4241; :", 0.5, &took, why, sizeof(why));
        assert_int_equal(ret, -ETIMEDOUT);
        assert_non_null(strstr(why, "ran past its time limit of 0.5 s (--run-timeout)"));
        if (!(took >= 0.5 && took < 0.5 + HW_LOAD_KILL_GRACE_S + 1.5))
                fail_msg("stopped after %.2f s", took);
        assert_int_equal(count_marked("sleep 1000.4241", &zombies), 0);

        /* A child that forks a grandchild ignoring SIGTERM, and waits. */
        ret = run_command("sh -c \"trap '' TERM; sleep 1000.4242 & wait\" & wait", 0.5, &took, why,
                          sizeof(why));
        assert_int_equal(ret, -ETIMEDOUT);
        if (!(took < 0.5 + HW_LOAD_KILL_GRACE_S + 1.5))
                fail_msg("stopped after %.2f s", took);
        assert_int_equal(count_marked("sleep 1000.4242", &zombies), 0);

        /* Ends at once, leaving a grandchild that ignores SIGTERM behind:
         * a success, and the grandchild is stopped too. */
        snprintf(cmd, sizeof(cmd), "(trap '' TERM; exec sleep 1000.4243) & exit 0");
        ret = run_command(cmd, 0, &took, why, sizeof(why));
        assert_int_equal(ret, 1);
        if (!(took < HW_LOAD_KILL_GRACE_S + 1.5))
                fail_msg("stopped after %.2f s", took);
        assert_int_equal(count_marked("sleep 1000.4243", &zombies), 0);

        /* A command that ends by itself, in time, is not held up. */
        ret = run_command("sleep 0.1", 5, &took, why, sizeof(why));
        assert_int_equal(ret, 1);
        if (!(took < 1))
                fail_msg("took %.2f s", took);

        /* Released while running: the whole group is stopped. */
        {
                struct hw_load_request req = {.bytes = 1u << 20,
                                              .command = "sleep 1000.4244 & trap '' TERM; wait"};
                struct hw_load_result res = {0};
                struct hw_load *l;

                snprintf(req.bdf, sizeof(req.bdf), "0000:00:00.0");
                assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), 0);
                usleep(100000);
                ret = load_ops_system.poll(NULL, l, &res, why, sizeof(why));
                int running = count_marked("sleep 1000.4244", &zombies);

                load_ops_system.release(NULL, l); /* before any assertion can leave */
                assert_int_equal(ret, 0);
                assert_int_equal(running, 1);
                assert_int_equal(count_marked("sleep 1000.4244", &zombies), 0);
        }
}

static void test_live_command(void **state)
{
        struct hw_load_request req = {.bytes = 1u << 20, .io_size = 4096, .command = "true"};
        struct hw_load_result res = {0};
        struct hw_load *l;
        char why[512] = "";
        int ret;

        (void)state;
        snprintf(req.bdf, sizeof(req.bdf), "0000:00:00.0");
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), 0);
        while (!(ret = load_ops_system.poll(NULL, l, &res, why, sizeof(why))))
                usleep(1000);
        assert_int_equal(ret, 1);
        assert_int_equal(res.bytes, 1u << 20); /* the user's figure */
        assert_string_equal(res.what, "command");
        load_ops_system.release(NULL, l);

        req.command = "exit 3";
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), 0);
        while (!(ret = load_ops_system.poll(NULL, l, &res, why, sizeof(why))))
                usleep(1000);
        assert_int_equal(ret, -ECHILD);
        assert_non_null(strstr(why, "exited with status 3"));
        load_ops_system.release(NULL, l);

        /* Released while running: stopped, no zombie left behind. */
        req.command = "sleep 30";
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), 0);
        assert_int_equal(load_ops_system.poll(NULL, l, &res, why, sizeof(why)), 0);
        load_ops_system.release(NULL, l);

        /* Reads need a device with a disk, and whole 4 KiB reads. */
        req.command = NULL;
        snprintf(req.bdf, sizeof(req.bdf), "0000:ff:1f.7");
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), -ENODEV);
        assert_non_null(strstr(why, "no block device has 0000:ff:1f.7"));
        req.io_size = 1000;
        assert_int_equal(load_ops_system.start(NULL, &req, &l, why, sizeof(why)), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_value_verdicts),  cmocka_unit_test(test_format),
            cmocka_unit_test(test_estimators),      cmocka_unit_test(test_time_mode),
            cmocka_unit_test(test_file_parse),      cmocka_unit_test(test_option),
            cmocka_unit_test(test_sim_odd_units),   cmocka_unit_test(test_sim_defaults),
            cmocka_unit_test(test_sim_shared_port), cmocka_unit_test(test_sim_refusals),
            cmocka_unit_test(test_live_command),    cmocka_unit_test(test_live_command_group),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
