/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_hisi_pcie.h - the hisi_pcie PMUs of a simulated machine, served
 * through the seam's perf ops.
 *
 * perf_event_open on a simulated PMU follows the driver of the machine's
 * kernel (kernel-facts §1.6, §1.7): -ENOENT for a type that is no hisi_pcie
 * PMU, -EOPNOTSUPP for sampling or a task target, -EINVAL for exclude bits,
 * bad filters, a BDF outside the core (v6.9 on), mixed-PMU or oversized
 * groups. A pair (main + extended counter) whose control values match in one
 * group shares a slot; a PMU has 8 slots, and when the enabled groups need
 * more, all of them are time-shared (time_running < time_enabled) as perf's
 * rotation does. Counts are integrated from the workload model over the
 * clock's elapsed time, exactly.
 *
 * The same model answers ground-truth questions in application units
 * (bytes, TLPs, nanoseconds) for tests.
 */
#ifndef PCIESCOPE_SIM_HISI_PCIE_H
#define PCIESCOPE_SIM_HISI_PCIE_H

#include <stdint.h>

#include "sim_machine.h"
#include "sim_traffic.h"

struct perf_ops;

#define SIM_PMU_SLOTS 8
/* Fake file descriptors start here, far above real ones, so a mix-up
 * with a real fd fails loudly (-EBADF) instead of touching a file. */
#define SIM_FD_BASE 0x40000000

/* Seconds on some monotonic clock. */
typedef double (*sim_clock_fn)(void *ctx);

struct sim_pmu;

/*
 * sim_pmu_new - the PMUs of @m, one per core, with perf types
 * @type_base + core index (as written by sim_sysfs_write). @clock NULL
 * means CLOCK_MONOTONIC. Time 0 of the workload is the moment of creation.
 * @m must outlive the model. Returns 0 or -ENOMEM.
 */
int sim_pmu_new(const struct sim_machine *m, uint32_t type_base, sim_clock_fn clock,
                void *clock_ctx, struct sim_pmu **out);
void sim_pmu_free(struct sim_pmu *p);

/* The perf ops serving the model (ctx = @p); thread-safe. */
const struct perf_ops *sim_pmu_ops(struct sim_pmu *p);

/* Seconds since creation on the model's clock. */
double sim_pmu_now(struct sim_pmu *p);

/*
 * sim_pmu_inject - make the next @count perf_event_open calls on core
 * @core (SIZE_MAX: any core) fail with -@err; count -1 = all of them.
 * Replaces an earlier injection for the same core.
 */
void sim_pmu_inject(struct sim_pmu *p, size_t core, int err, long count);

/*
 * sim_pmu_add_load - the calibration load of a simulated machine (the
 * hw_env load op, `pciescope calibrate`): device @dev DMA-writes @bytes
 * into host memory in requests of @io_size bytes (split at its MPS),
 * evenly over [@t0, @t1] seconds since creation, on top of its workload.
 * The counters see it like any traffic (filters, len_mode, thresholds),
 * and the ground truth below includes the last SIM_PMU_MAX_LOADS loads.
 * Returns 0, -EINVAL (bad device, no bytes, t1 <= t0, io_size 0) or
 * -EBUSY (that many loads still running).
 */
#define SIM_PMU_MAX_LOADS 64
int sim_pmu_add_load(struct sim_pmu *p, size_t dev, double bytes, unsigned int io_size, double t0,
                     double t1);

/* File descriptors currently open (tests check nothing leaks). */
size_t sim_pmu_open_count(struct sim_pmu *p);

/* Ground truth over [t0, t1] seconds since creation, in application units. */
/* A PMU bound again (sim_events.h) gets a new perf type: the first is
 * type_base + core, the n-th rebind type_base + core + SIM_MAX_CORES *
 * (n % SIM_PMU_GENERATIONS). */
#define SIM_PMU_GENERATIONS 16
uint32_t sim_pmu_type_of(uint32_t type_base, size_t core, unsigned int generation);

struct sim_truth {
        /* What the links carried (a workload asking more than its links
         * take is slowed down: sim_traffic_backpressure). */
        double tlps;
        double payload_bytes;
        double header_bytes;
        double latency_ns; /* sum over TLPs; divide by tlps for the mean */
        /* What the workloads (and calibration loads) asked for. */
        double offered_tlps;
        double offered_payload_bytes;
        double offered_header_bytes;
};

/* Traffic of class @c of device @dev (an endpoint). */
void sim_truth_device(const struct sim_pmu *p, size_t dev, enum sim_tlp_class c, double t0,
                      double t1, struct sim_truth *out);
/* Traffic of class @c of every device below Root Port @port (a device index). */
void sim_truth_port(const struct sim_pmu *p, size_t port, enum sim_tlp_class c, double t0,
                    double t1, struct sim_truth *out);

#endif /* PCIESCOPE_SIM_HISI_PCIE_H */
