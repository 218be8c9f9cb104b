/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hisi_pcie_core.h - the collector of one PCIe core's hisi_pcie PMU.
 *
 * A core's collector owns a counter plan: a list of measurements, each one
 * event pair with one filter (a Root Port, an endpoint's requester ID, or a
 * TLP length threshold), opened as its own perf group so the pair's halves
 * always start and stop together. A PMU has 8 slots; a pair with equal
 * filters takes one. When the plan needs more, the collector rotates: each
 * interval a window of measurements that fits is enabled, the others wait,
 * and every value carries its coverage (counting time over elapsed time).
 *
 * hisi_pcie_core_tick() is one interval: read, convert, rotate, and fill a
 * sample_set. It is meant to run on a thread of its own (the plugin's
 * per-core threads); one core's collector is never shared between threads.
 */
#ifndef PCIESCOPE_HISI_PCIE_CORE_H
#define PCIESCOPE_HISI_PCIE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hisi_pcie.h"
#include "sample.h"

struct hw_env;
struct pcie_topo;
struct sample_set;
struct bdf_filter;

struct hisi_pcie_opts {
        double flux_unit_bytes;  /* bytes per flux count: FluxUnit, default 4 (one DW) */
        double latency_clock_hz; /* clock of the latency cycles: LatencyClock, default 1e9 */
        unsigned int slots;      /* counter slots per PMU, 8 */
        unsigned int len_mode;   /* 1 payload, 2 header, 3 both (default) */
        bool port_bandwidth;     /* the flux pairs per Root Port */
        bool latency;            /* the latency pairs per Root Port */
        bool tlp_length;         /* rx_mwr bandwidth below 64/128/256/512 bytes per port */
        bool endpoints;          /* per-endpoint bandwidth (bdf filter) */
        const struct bdf_filter *endpoint_filter; /* NULL: every endpoint, top talkers shown */
        size_t top_talkers;                       /* endpoints published without a filter */
        enum pcie_detail detail;                  /* which series (sample.h) */
};
void hisi_pcie_opts_default(struct hisi_pcie_opts *opts);

/* One measurement of the plan, for the window chooser. */
struct hisi_pcie_plan_item {
        enum hisi_pcie_pair pair;
};

/*
 * hisi_pcie_plan_window - choose the measurements of the next window: up to
 * @slots of them, round-robin from *@cursor. With @strict_related false
 * (kernels before 6.9, where the driver relates events by code alone), no
 * two chosen items may use the same pair. Writes the chosen indexes to
 * @chosen (room for @slots) in ascending order and advances *@cursor so
 * that every item gets its turn. Returns how many were chosen. Pure.
 */
size_t hisi_pcie_plan_window(const struct hisi_pcie_plan_item *items, size_t count, size_t slots,
                             bool strict_related, size_t *cursor, size_t *chosen);

struct hisi_pcie_core;

/*
 * hisi_pcie_core_new - plan the measurements of @pmu (which must outlive
 * the collector) for the devices @topo shows below its Root Ports (link
 * capacity and MPS are copied; @topo may be freed afterwards). Opens
 * nothing yet. Returns 0, -ENOMEM, or -ENODATA when the plan is empty
 * (no offered pair, or no port).
 */
int hisi_pcie_core_new(const struct hw_env *env, const struct hisi_pcie_pmu *pmu,
                       const struct pcie_topo *topo, const struct hisi_pcie_opts *opts,
                       struct hisi_pcie_core **out);
void hisi_pcie_core_free(struct hisi_pcie_core *core);

/*
 * hisi_pcie_core_start - open every measurement's group and enable the
 * first window. @now: seconds on a monotonic clock. On failure everything
 * opened is closed and the perf_event_open errno is returned (-EACCES,
 * -EBUSY, -EMFILE, -ENOENT, -EINVAL...) with a one-line explanation of what
 * to do logged through the env.
 */
int hisi_pcie_core_start(struct hisi_pcie_core *core, double now);

/*
 * hisi_pcie_core_tick - one interval at @now: read the enabled groups,
 * update estimates, rotate, and append this core's samples to @out.
 * Returns 0, or a negative errno when reading failed (the samples of what
 * could be read are still appended).
 */
int hisi_pcie_core_tick(struct hisi_pcie_core *core, double now, struct sample_set *out);

/*
 * hisi_pcie_core_update - follow the endpoints @topo (a later scan of the
 * same machine) shows below the core's Root Ports: a new one gets its
 * measurements (opened stopped if the core is started; rates from the
 * interval after the next window enables them), logged once; those gone
 * are closed (their series stop); every other measurement goes on with its
 * group, baseline and totals. Call it between two ticks. Returns how many
 * endpoints were added, or -ENOMEM (the old plan goes on).
 */
int hisi_pcie_core_update(struct hisi_pcie_core *c, const struct pcie_topo *topo);

/* Closes all groups (the collector can be started again). */
void hisi_pcie_core_stop(struct hisi_pcie_core *core);

/* Plan size, and CPU seconds spent in start/tick so far (thread CPU time). */
size_t hisi_pcie_core_measurements(const struct hisi_pcie_core *core);
double hisi_pcie_core_cpu_seconds(const struct hisi_pcie_core *core);
const char *hisi_pcie_core_name(const struct hisi_pcie_core *core);

#endif /* PCIESCOPE_HISI_PCIE_CORE_H */
