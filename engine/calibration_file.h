/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibration_file.h - the file `pciescope calibrate` writes and every
 * front end reads (`CalibrationFile`, `--calibration`): the hidden units of
 * one machine's HiSilicon PMU and PTT, so nobody transcribes numbers into
 * four options. JSON; docs/real-hardware.md describes it key by key.
 *
 * Only results whose verdict is "consistent" are applied; an option the
 * user writes explicitly wins over the file (engine_config.c).
 */
#ifndef PCIESCOPE_CALIBRATION_FILE_H
#define PCIESCOPE_CALIBRATION_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"
#include "ptt_summary.h"

struct json_object;

#define CALIBRATION_FORMAT    1 /* "pciescope_calibration" */
#define CALIBRATION_MAX_BYTES (1u << 20)

/* What a file settles: the values with a consistent verdict. */
struct calibration_units {
        bool have_flux_unit, have_latency_clock, have_trace_clock, have_time_mode;
        double flux_unit_bytes;       /* FluxUnit */
        double latency_clock_hz;      /* LatencyClock */
        double trace_clock_hz;        /* TraceClock */
        enum ptt_time_mode time_mode; /* TraceTimeMode */
        /* NVIDIA Grace: root_port bit port_map_bit of nvidia_pcie_pmu_<node>
         * selects Root Port port_map_port (a consistent port map only). */
        bool have_port_map;
        unsigned int port_map_node, port_map_bit;
        char port_map_port[20];
        /* AMD Turin: root bus df_domain:df_bus belongs to IO root complex
         * df_rc of socket df_socket (a consistent root complex map only). */
        bool have_df_map;
        unsigned int df_socket, df_rc;
        uint32_t df_domain;
        uint8_t df_bus;
};

/* The calibration as JSON (the file's content and `calibrate --json`).
 * @machine: what was calibrated, for people ("SIMULATED kunpeng930-2p").
 * The host adds "pciescope_version". */
struct json_object *calibration_json(const struct calibration *c, const char *machine);

/* Writes @o (pretty) to @path, mode 0644: through a new temporary file of
 * a fresh name in @path's directory (mkostemp: nothing planted at a
 * predictable name is followed), then rename. 0 or a negative errno with
 * @why naming the file. */
int calibration_file_write(struct json_object *o, const char *path, char *why, size_t whylen);

/* Whether calibration_file_write() could create @path (a temporary file
 * is made in its directory and removed): checked before measuring. 0 or
 * a negative errno with @why naming the file. */
int calibration_file_check(const char *path, char *why, size_t whylen);

/*
 * calibration_file_read - parse @path. Returns 0, or -ENOENT/-EACCES/...
 * (cannot read), -EFBIG (over CALIBRATION_MAX_BYTES), -EBADMSG (not a
 * calibration file: @why names the key or the JSON error and where).
 */
int calibration_file_read(const char *path, struct calibration_units *u, char *why, size_t whylen);

/* The same for text already in memory (@name for messages; fuzzed). */
int calibration_parse(const char *text, size_t len, const char *name, struct calibration_units *u,
                      char *why, size_t whylen);

#endif /* PCIESCOPE_CALIBRATION_FILE_H */
