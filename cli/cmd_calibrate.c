/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_calibrate.c - `pciescope calibrate --device BDF`: the hidden units of
 * the HiSilicon PCIe PMU and PTT, measured with a known load (the engine's
 * calibrate.c), printed, and written to a calibration file every front end
 * reads (`CalibrationFile`, `--calibration`).
 */
#include "pciescope_config.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amd_df.h"
#include "calibrate.h"
#include "calibration_file.h"
#include "cli.h"
#include "hw_env.h"

/* The table's columns: wide enough for what calib_format() and the
 * verdicts print, whatever the numbers. */
#define W_UNIT    24
#define W_VALUE   14 /* a number of at most 11 characters and " Hz" */
#define W_SPREAD  10 /* at most 8 characters and " %" */
#define W_REPEATS 7  /* "32/32" */
#define W_VERDICT 15 /* "not measurable" */

/* One row: the unit, its value, spread, usable/asked repeats, verdict,
 * and the option it sets (or why it could not be measured, and which
 * repeats were dropped, on the next lines). */
static void print_value(const char *unit, const struct calib_value *v, const char *suffix,
                        const char *option)
{
        char num[32], value[48] = "-", spread[32] = "-", repeats[24], drops[200];

        if (isfinite(v->value))
                snprintf(value, sizeof(value), "%s%s", calib_format(v->value, 11, num, sizeof(num)),
                         suffix);
        if (v->repeats) {
                /* two decimals, or as many digits as fit */
                int n = snprintf(spread, sizeof(spread), "%.2f %%", v->spread * 100);

                if (n < 0 || n > W_SPREAD)
                        snprintf(spread, sizeof(spread), "%s %%",
                                 calib_format(v->spread * 100, W_SPREAD - 2, num, sizeof(num)));
        }
        snprintf(repeats, sizeof(repeats), "%zu/%zu", v->repeats, v->asked);
        printf("  %-*s %-*s %-*s %-*s %-*s %s\n", W_UNIT, unit, W_VALUE, value, W_SPREAD, spread,
               W_REPEATS, repeats, W_VERDICT, calib_verdict_name(v->verdict),
               v->verdict == CALIB_CONSISTENT ? option : "-");
        if (v->why[0])
                printf("  %-*s   %s\n", W_UNIT, "", v->why);
        calib_value_drops_text(v, drops, sizeof(drops));
        if (drops[0] && v->repeats) /* with no repeat left, why says it */
                printf("  %-*s   %s\n", W_UNIT, "", drops);
}

/* The root_port bit that selects the device's Root Port (a port map run). */
static void print_port_map(const struct calibration *c)
{
        char value[16] = "-", repeats[24], option[96];
        bool ok = c->port_map_verdict == CALIB_CONSISTENT;

        if (c->port_map_bit >= 0)
                snprintf(value, sizeof(value), "bit %d", c->port_map_bit);
        snprintf(repeats, sizeof(repeats), "%u/%u", c->port_map_agree, c->port_map_asked);
        snprintf(option, sizeof(option), "NvidiaPCIeRootPort %u %d \"%s\"", c->port_map_node,
                 c->port_map_bit, c->root_port);
        printf("  %-*s %-*s %-*s %-*s %-*s %s\n", W_UNIT, "root_port filter bit", W_VALUE, value,
               W_SPREAD, "-", W_REPEATS, repeats, W_VERDICT,
               calib_verdict_name(c->port_map_verdict), ok ? option : "-");
        if (c->port_map_why[0])
                printf("  %-*s   %s\n", W_UNIT, "", c->port_map_why);
}

/* The root complex that carries the device's root bus (AMD Turin). */
static void print_df_map(const struct calibration *c)
{
        char value[40] = "-", repeats[24], option[96], unit[40];
        bool ok = c->df_verdict == CALIB_CONSISTENT;

        if (c->df_socket >= 0 && c->df_rc >= 0)
                snprintf(value, sizeof(value), "socket %d io%d", c->df_socket, c->df_rc);
        snprintf(repeats, sizeof(repeats), "%u/%u", c->df_agree, c->df_asked);
        snprintf(option, sizeof(option), "AMDDFRootComplexBus %d %d \"%s\"", c->df_socket, c->df_rc,
                 c->df_root_bus);
        snprintf(unit, sizeof(unit), "root complex of %s", c->df_root_bus);
        printf("  %-*s %-*s %-*s %-*s %-*s %s\n", W_UNIT, unit, W_VALUE, value, W_SPREAD, "-",
               W_REPEATS, repeats, W_VERDICT, calib_verdict_name(c->df_verdict), ok ? option : "-");
        if (ok)
                printf("  %-*s   %s rose by %.4g bytes/s, the load's rate %.4g bytes/s\n", W_UNIT,
                       "", c->df_dir == AMD_DF_WRITE ? "upstream write" : "upstream read",
                       c->df_rise, c->df_load_rate);
        if (c->df_why[0])
                printf("  %-*s   %s\n", W_UNIT, "", c->df_why);
}

/* @machine: the simulated machine's name, or NULL. */
static void print_text(const struct calibration *c, const char *path, const char *machine)
{
        char option[64];
        const char *mode = c->ptt_time_mode == CALIB_TIME_ABSOLUTE ? "absolute"
                           : c->ptt_time_mode == CALIB_TIME_DELTA  ? "delta"
                                                                   : NULL;

        printf("Calibration of %s (Root Port %s, %s%s%s)%s%s\n", c->device, c->root_port, c->pmu,
               c->ptt[0] ? ", " : "", c->ptt, machine ? " on the SIMULATED machine " : "",
               machine ? machine : "");
        printf("Load: %s, %.3g GB in %.3g s\n\n", c->load[0] ? c->load : "none",
               (double)c->load_bytes / 1e9, c->load_seconds);
        printf("  %-*s %-*s %-*s %-*s %-*s %s\n", W_UNIT, "unit", W_VALUE, "value", W_SPREAD,
               "spread", W_REPEATS, "repeats", W_VERDICT, "verdict", "sets");
        if (c->port_map) {
                print_port_map(c);
                goto tail;
        }
        if (c->df_map) {
                print_df_map(c);
                goto tail;
        }
        snprintf(option, sizeof(option), "FluxUnit %.6g", c->flux_unit_bytes.value);
        print_value("bytes per flux count", &c->flux_unit_bytes, " B", option);
        print_value("*_time clock", &c->time_clock_hz, " Hz", "(raw counters only)");
        snprintf(option, sizeof(option), "TraceClock %.0f", c->ptt_clock_hz.value);
        print_value("PTT Time clock", &c->ptt_clock_hz, " Hz", option);
        snprintf(option, sizeof(option), "LatencyClock %.6g", c->latency_clock_hz.value);
        print_value("latency clock", &c->latency_clock_hz, " Hz", option);
        printf("  %-*s %-*s %-*s %-*s %-*s %s%s%s\n", W_UNIT, "PTT Time field", W_VALUE,
               mode ? mode : "-", W_SPREAD, "-", W_REPEATS, "-", W_VERDICT,
               mode ? "consistent" : "not measurable", mode ? "TraceTimeMode \"" : "-",
               mode ? mode : "", mode ? "\"" : "");
        if (c->ptt_time_why[0])
                printf("  %-*s   %s\n", W_UNIT, "", c->ptt_time_why);
        else
                printf("  %-*s   %.0f %% of neighbouring Time fields rise\n", W_UNIT, "",
                       c->ptt_rising_share * 100);
        printf("  %-*s", W_UNIT, "outbound requester IDs");
        for (size_t i = 0; i < c->outbound_count; i++)
                printf(" %02x:%02x.%u (%llu TLPs)", c->outbound[i].requester_id >> 8,
                       (c->outbound[i].requester_id >> 3) & 0x1f, c->outbound[i].requester_id & 7u,
                       (unsigned long long)c->outbound[i].tlps);
        printf("%s%s\n", c->outbound_count ? "" : " - ", c->outbound_why);
tail:
        if (c->notes[0])
                printf("\nNote: %s\n", c->notes);
        if (path)
                printf("\nWritten to %s: give it as CalibrationFile \"%s\" in <Plugin pcie>, or "
                       "--calibration %s to pciescope.\n",
                       path, path, path);
}

static bool all_consistent(const struct calibration *c)
{
        if (c->port_map)
                return c->port_map_verdict == CALIB_CONSISTENT;
        if (c->df_map)
                return c->df_verdict == CALIB_CONSISTENT;
        return c->flux_unit_bytes.verdict == CALIB_CONSISTENT &&
               c->time_clock_hz.verdict == CALIB_CONSISTENT &&
               c->ptt_clock_hz.verdict == CALIB_CONSISTENT &&
               c->latency_clock_hz.verdict == CALIB_CONSISTENT &&
               c->ptt_time_mode != CALIB_TIME_UNDECIDED;
}

int cmd_calibrate(const struct cli_opts *opts, struct engine *e)
{
        struct calibration c;
        json_object *o;
        char why[512] = "";
        const char *path = opts->calib_output ? opts->calib_output : "pciescope-calibration.json";

        /* Before measuring: a minute of loads for a file that cannot be
         * written is lost. */
        if (opts->calib_device && calibration_file_check(path, why, sizeof(why))) {
                cli_error("calibrate: cannot write the calibration file: %s", why);
                return CLI_EXIT_ERROR;
        }
        if (cli_calibrate_run(opts, e, &c, &o))
                return CLI_EXIT_ERROR;
        if (calibration_file_write(o, path, why, sizeof(why))) {
                cli_error("calibrate: cannot write the calibration file: %s", why);
                json_object_put(o);
                return CLI_EXIT_ERROR;
        }
        if (opts->json)
                printf("%s\n", json_object_to_json_string_ext(
                                   o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        else
                print_text(&c, path, engine_simulated(e) ? engine_simulated(e) : NULL);
        json_object_put(o);
        return all_consistent(&c) ? CLI_EXIT_OK : CLI_EXIT_WARNING;
}
