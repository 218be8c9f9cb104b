// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_calibration_file.c - libFuzzer target: the calibration file as
 * CalibrationFile and --calibration read it (calibration_parse()).
 *
 * Invariants (a violation traps): the result is 0 or -EBADMSG; on 0 every
 * unit marked present is finite and above 0 and the time mode is one of
 * the two; a root complex map has a socket 0..255 and a root complex
 * 0..7; on an error nothing is marked present and the message names the
 * file.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibration_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct calibration_units u;
        char why[512] = "";
        int rc = calibration_parse((const char *)data, size, "fuzz.json", &u, why, sizeof(why));

        if (rc != 0 && rc != -EBADMSG && rc != -ENOMEM)
                __builtin_trap();
        if (rc == 0) {
                if (u.have_flux_unit && !(isfinite(u.flux_unit_bytes) && u.flux_unit_bytes > 0))
                        __builtin_trap();
                if (u.have_latency_clock &&
                    !(isfinite(u.latency_clock_hz) && u.latency_clock_hz > 0))
                        __builtin_trap();
                if (u.have_trace_clock && !(isfinite(u.trace_clock_hz) && u.trace_clock_hz > 0))
                        __builtin_trap();
                if (u.have_time_mode && u.time_mode != PTT_TIME_DELTA &&
                    u.time_mode != PTT_TIME_ABSOLUTE)
                        __builtin_trap();
                if (u.have_df_map && (u.df_socket > 255 || u.df_rc > 7))
                        __builtin_trap();
        } else if (rc == -EBADMSG) {
                if (u.have_flux_unit || u.have_latency_clock || u.have_trace_clock ||
                    u.have_time_mode || u.have_df_map || strncmp(why, "fuzz.json: ", 11))
                        __builtin_trap();
        }
        return 0;
}
