/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top_model.h - what `pciescope top` shows, without the terminal: the
 * samples of one interval in, one row per Root Port (or per IIO stack part
 * that no Root Port is mapped to) out, with bandwidth, utilisation,
 * latency, link state flags, AER deltas since the previous interval, the
 * functions below each port, and an order by a sort key.
 *
 * Pure: no curses, no engine, no clock; cli/cmd_top.c feeds it and draws.
 *
 *      top_model_update(unit, set)   each sample set the engine hands over
 *      top_model_build()             each interval: rows, deltas, flags, order
 *
 * The model keeps the newest set of every unit, so a PMU whose interval
 * ends just after a refresh keeps its values on screen until its next one.
 */
#ifndef PCIESCOPE_TOP_MODEL_H
#define PCIESCOPE_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

enum top_sort {
        TOP_SORT_PORT,    /* PMU (group), then BDF */
        TOP_SORT_RX,      /* inbound bandwidth, most first */
        TOP_SORT_TX,      /* outbound bandwidth, most first */
        TOP_SORT_LATENCY, /* the highest of the port's latencies, first */
        TOP_SORT_ERRORS,  /* AER errors this interval, then since start */
        TOP_SORT_COUNT,
};
/* "port", "rx", "tx", "latency", "errors" */
const char *top_sort_name(enum top_sort key);

enum { TOP_RX, TOP_TX, TOP_DIRS };
/* The TLP types of pcie_port_bandwidth_bytes_per_second's `tlp` label;
 * Intel IIO counts all of them as one ("all"). */
enum { TOP_TLP_MWR, TOP_TLP_MRD, TOP_TLP_CPL, TOP_TLP_ALL, TOP_TLPS };
/* pcie_port_latency_seconds' `event`s. */
enum { TOP_LAT_RX_MWR, TOP_LAT_RX_MRD, TOP_LAT_TX_MRD, TOP_LATS };
/* AER severities (pcie_aer_device_errors_total's `severity`). */
enum { TOP_AER_COR, TOP_AER_NONFATAL, TOP_AER_FATAL, TOP_AERS };

#define TOP_ID_LEN   32
#define TOP_TEXT_LEN 64

/* A link as pcie_link_* says it; known is false for a function without a
 * PCIe link (or before the first interval). */
struct top_link {
        bool known, up, downtrained;
        double speed, max_speed; /* transfers/s */
        int width, max_width;
};

/* AER of a function, or summed over a port and the functions below it. */
struct top_aer {
        bool known;       /* the function(s) have AER counters */
        bool delta_known; /* counted in the previous interval too */
        uint64_t total[TOP_AERS];
        uint64_t delta[TOP_AERS]; /* since the previous interval */
};

/* A function below a Root Port (endpoints, switch ports). */
struct top_function {
        char bdf[TOP_ID_LEN];
        char type[TOP_ID_LEN]; /* port_type: endpoint, upstream_port... */
        char name[TOP_TEXT_LEN];
        struct top_link link;
        bool mps_finding;         /* an mps_* audit finding on it */
        char finding[TOP_ID_LEN]; /* its worst audit finding, or "" */
        double bw[TOP_DIRS];      /* pcie_device_bandwidth: NAN when not measured */
        struct top_aer aer;
};

struct top_row {
        /* false: an Intel IIO stack part without a Root Port ("unmapped"),
         * or an AMD IO root complex (is_root_complex). */
        bool is_port;
        bool is_root_complex;
        char id[TOP_ID_LEN];      /* the port's BDF, or "s0 iio2 p0" */
        char group[TOP_TEXT_LEN]; /* the PMU counting it, or "" */
        struct top_link link;
        bool mps_finding;                      /* an mps_* finding on the port or below */
        char finding[TOP_ID_LEN];              /* the worst audit finding there, or "" */
        double util[TOP_DIRS];                 /* raw capacity ratio; NAN: none */
        double bw[TOP_DIRS][TOP_TLPS];         /* bytes/s; NAN: none */
        double latency[TOP_LATS];              /* seconds; NAN: none */
        struct top_aer aer;                    /* the port and every function below it */
        size_t first_function, function_count; /* in top_model_function() */
};

/* The sum of a direction's bandwidth over its TLP types (NAN: none). */
double top_row_bandwidth(const struct top_row *row, int dir);
/* The highest of the row's latencies (NAN: none). */
double top_row_latency(const struct top_row *row);
/* AER errors of the interval (delta_known) or 0. */
uint64_t top_aer_delta_sum(const struct top_aer *aer);

struct top_model;

struct top_model *top_model_new(void);
void top_model_free(struct top_model *m);

/* Keeps what the view needs of @set (a copy) as the newest samples of
 * @unit (a unit's name; "" for the engine's own), in place of the ones
 * before. 0 or -ENOMEM (the unit's previous samples stay). */
int top_model_update(struct top_model *m, const char *unit, const struct sample_set *set);
/* Builds the rows from the newest samples of every unit, with the AER
 * deltas since the previous build, and sorts them. 0 or -ENOMEM (the
 * previous rows stay). */
int top_model_build(struct top_model *m);

void top_model_sort(struct top_model *m, enum top_sort key);
enum top_sort top_model_sort_key(const struct top_model *m);

/* Rows in the sort order. */
size_t top_model_row_count(const struct top_model *m);
const struct top_row *top_model_row(const struct top_model *m, size_t i);
/* Functions below the rows' ports (row->first_function ...). */
const struct top_function *top_model_function(const struct top_model *m, size_t i);

/* Counts of the last interval: Root Ports, Root Ports with bandwidth (a
 * PMU counts them), IIO parts without a port, and how many of those were
 * idle (no bytes either way) and are left out of the rows: a socket has
 * up to 8 parts per stack, most of them with nothing attached. */
struct top_counts {
        size_t ports, measured, unmapped, idle_unmapped;
        size_t root_complexes; /* AMD data fabric rows (idle ones hidden too) */
};
struct top_counts top_model_counts(const struct top_model *m);

/* "12.5G", "850M", "3.1k", "0", "-" (NAN): bytes/s in 5 characters. */
void top_format_rate(char *buf, size_t len, double bytes_per_second);

#endif /* PCIESCOPE_TOP_MODEL_H */
