/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibrate.h - `pciescope calibrate`: settle the hidden units of the
 * HiSilicon PCIe PMU and PTT device of one endpoint's PCIe core by driving
 * a known load through the endpoint (the seam's load ops) while the PMU
 * and the trace device measure it (docs/real-hardware.md).
 *
 * Three phases, each repeated:
 *  1. flux: an idle window, then a load of known bytes; the endpoint's
 *     rx_mwr flux/time pair (its requester ID, payload only) counts both.
 *     -> bytes per flux count, the *_time clock.
 *  2. clock: 8DW trace windows of outbound TLPs at the endpoint's Root
 *     Port while a load runs; the raw Time fields.
 *     -> delta or free-running, ticks per second, the requester IDs that
 *        outbound requests carry.
 *  3. latency: 4DW windows of the endpoint's own requests and their
 *     completions (requester filter), with the Root Port's rx_mrd latency
 *     pair counting over the same window.
 *     -> the latency clock.
 * Every result comes with its spread over the repeats and a verdict.
 *
 * On an NVIDIA Grace machine (no hisi_pcie PMU, an nvidia_pcie_pmu_<node>
 * on the device's node) one phase instead, the port map: for every bit of
 * the PMU's root_port filter, an idle window and a load of known bytes
 * with only that bit counting; the bit whose count rises by the load is
 * the device's Root Port (nvidia_pcie_identify_bit), consistent when every
 * usable repeat names the same bit. The calibration file then maps it.
 *
 * On an AMD EPYC 9005 machine (an amd_df PMU of family 1Ah, neither of the
 * above) one phase too, the root complex map: for every root complex index
 * (all sockets at once), an idle window and a load of known bytes with
 * that index's read and write beats counting; the root complex whose read
 * or write rate rises by the load's rate (amd_df_identify_rc) carries the
 * device's root bus, consistent when every usable repeat names the same
 * one. One run maps one root bus (that of the device's Root Port); a root
 * complex with several root buses takes one run per bus.
 */
#ifndef PCIESCOPE_CALIBRATE_H
#define PCIESCOPE_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibration.h"

struct engine;

struct calibrate_opts {
        const char *device;     /* BDF of the endpoint */
        uint64_t bytes;         /* per flux load (default 1 GiB) */
        uint32_t io_size;       /* read size of the flux loads (default 1 MiB) */
        uint32_t trace_io_size; /* read size while tracing (default 4 KiB: many requests) */
        const char *command;    /* the load is this command (bytes: the user's figure) */
        /* Seconds one run of @command may take (CALIB_RUN_TIMEOUT_S): past
         * it, its process group is stopped and the load has failed. */
        double command_timeout_s;
        unsigned int repeats; /* default 5, at most CALIB_MAX_REPEATS */
        double idle_seconds;  /* idle window before each load (default 1) */
        double trace_seconds; /* each trace window (default 0.2) */
        double tolerance;     /* relative spread of a consistent result (CALIB_TOLERANCE) */
        /* The host's wait (the CLI's virtual clock moves only there); NULL:
         * nanosleep until the engine's clock reaches @deadline. */
        void (*sleep_until)(void *ctx, double deadline);
        void *sleep_ctx;
        /* Progress for a person at a terminal, or NULL. */
        void (*progress)(void *ctx, const char *step);
        void *progress_ctx;
};
void calibrate_opts_default(struct calibrate_opts *o);

#define CALIB_RUN_TIMEOUT_S 600.0

#define CALIB_MAX_OUTBOUND 8

struct calibration {
        char device[20], root_port[20], pmu[64], ptt[64]; /* BDFs: PCI_BDF_LEN */
        char load[96];       /* what made the load: "/dev/nvme0n1", "command", ... */
        uint64_t load_bytes; /* every load together */
        double load_seconds;
        struct calib_value flux_unit_bytes;
        struct calib_value time_clock_hz;
        struct calib_value ptt_clock_hz;
        struct calib_value latency_clock_hz;
        enum calib_time_mode ptt_time_mode;
        double ptt_rising_share; /* of the Time fields, all windows */
        char ptt_time_why[200];  /* when undecided */
        size_t outbound_count;
        struct {
                uint16_t requester_id;
                uint64_t tlps;
        } outbound[CALIB_MAX_OUTBOUND];
        char outbound_why[200]; /* when none was seen */
        char notes[400];        /* what the user should know (shared PMU, ...) */
        /* NVIDIA Grace: the root_port bit of @pmu that selects @root_port. */
        bool port_map;              /* this run looked for it */
        unsigned int port_map_node; /* the <node> of nvidia_pcie_pmu_<node> */
        int port_map_bit;           /* -1: not found (port_map_why) */
        enum calib_verdict port_map_verdict;
        unsigned int port_map_agree, port_map_asked; /* repeats naming port_map_bit / run */
        char port_map_why[200];
        /* AMD Turin: the root complex (socket, io<n>) that carries root bus
         * df_root_bus, the device's Root Port's bus. */
        bool df_map;
        char df_root_bus[8];          /* "0000:40" */
        int df_socket, df_rc;         /* -1: not found (df_why) */
        int df_dir;                   /* enum amd_df_dir that rose */
        double df_rise, df_load_rate; /* bytes/s: the median repeat's */
        enum calib_verdict df_verdict;
        unsigned int df_agree, df_asked; /* repeats naming it / run */
        char df_why[300];
};

/*
 * engine_calibrate - run the three phases on @e's machine (opened, not
 * started: calibrate owns the PMU and trace device meanwhile). Returns 0
 * with @out filled (verdicts say what could not be measured), or a
 * negative errno when nothing could be measured at all (no such device,
 * no hisi_pcie PMU covering it, no load possible here): @why says which.
 */
int engine_calibrate(struct engine *e, const struct calibrate_opts *o, struct calibration *out,
                     char *why, size_t whylen);

#endif /* PCIESCOPE_CALIBRATE_H */
