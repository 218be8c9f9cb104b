// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli_calibrate.c - one calibration run (the engine's calibrate.c behind
 * --device, --bytes, --run, --repeat) and its JSON, as `pciescope
 * calibrate` writes it to a file and `pciescope snapshot --device` puts it
 * in the archive.
 */
#include "pciescope_config.h"

#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "calibration_file.h"
#include "cli.h"
#include "hw_env.h"

/* SIGINT, SIGTERM or SIGHUP while a --run command runs: its process group
 * (not ours, so a terminal's Ctrl-C misses it) is killed, then the signal
 * ends us as it would have (SA_RESETHAND). */
static void on_fatal_signal(int sig)
{
        hw_load_kill_commands();
        raise(sig);
}

static void show_progress(void *ctx, const char *step)
{
        (void)ctx;
        fprintf(stderr, "pciescope calibrate: %s\n", step);
}

static void sleep_until(void *ctx, double deadline)
{
        (void)ctx;
        cli_sleep_until(deadline);
}

int cli_calibrate_run(const struct cli_opts *opts, struct engine *e, struct calibration *c,
                      struct json_object **json)
{
        struct calibrate_opts co;
        char why[512] = "", machine[160] = "";

        if (!opts->calib_device) {
                cli_error("calibrate: --device BDF is required (the endpoint to load: an NVMe "
                          "drive's controller, e.g. 0000:01:00.0)");
                return -1;
        }
        if (opts->calib_command && !opts->calib_bytes) {
                cli_error("calibrate: --run needs --bytes N, what the command moves through the "
                          "device");
                return -1;
        }
        if (opts->calib_run_timeout && !opts->calib_command) {
                cli_error("calibrate: --run-timeout is the time limit of a --run command: give "
                          "--run too");
                return -1;
        }
        calibrate_opts_default(&co);
        co.device = opts->calib_device;
        co.command = opts->calib_command;
        if (opts->calib_run_timeout)
                co.command_timeout_s = opts->calib_run_timeout;
        if (opts->calib_bytes)
                co.bytes = opts->calib_bytes;
        if (opts->calib_repeats)
                co.repeats = opts->calib_repeats;
        co.sleep_until = sleep_until;
        if (isatty(STDERR_FILENO))
                co.progress = show_progress;
        struct sigaction sa = {.sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND}, old[3];
        static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
        int ret;

        for (int i = 0; i < 3 && co.command; i++)
                sigaction(sigs[i], &sa, &old[i]);
        ret = engine_calibrate(e, &co, c, why, sizeof(why));
        for (int i = 0; i < 3 && co.command; i++)
                sigaction(sigs[i], &old[i], NULL);
        if (ret) {
                cli_error("calibrate: %s", why);
                return -1;
        }
        if (engine_simulated(e))
                snprintf(machine, sizeof(machine), "SIMULATED machine %s", engine_simulated(e));
        *json = calibration_json(c, machine[0] ? machine : NULL);
        json_object_object_add(*json, "pciescope_version", json_object_new_string(PACKAGE_VERSION));
        return 0;
}
