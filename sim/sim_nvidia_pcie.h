/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_nvidia_pcie.h - the NVIDIA Grace (Tegra241) PCIe PMUs of a simulated
 * machine, `nvidia_pcie_pmu_<node>` (arm_cspmu with its nvidia backend),
 * served through the seam's perf ops.
 *
 * Hardware model (ground truth), per socket: an event counts the traffic
 * of the Root Ports whose bit is set in its root_port filter (config1
 * bits 0-9), with the socket's true bit table (sim_nv_socket.bits), which
 * need not be the collector's default. Device-initiated DMA only:
 *   rd_bytes_*      payload of the completions of the devices' memory reads
 *   wr_bytes_*      payload of the devices' memory writes
 *   total_bytes_*   both
 *   rd_req_*, wr_req_*, total_req_*  the devices' read / write requests (TLPs)
 *   rd_cum_outs_*   outstanding reads summed every cycle (Little's law:
 *                   read requests/s x read latency x cycles_hz)
 *   cycles          the PMU clock (nvidia.cycles_hz)
 * `_loc` is the share 1 - remote_share of each, `_rem` remote_share.
 * CPU MMIO is not counted. Counts are integrated from the workload model
 * exactly and truncated to whole counts; counters never stop while
 * enabled and are never multiplexed (time_enabled == time_running).
 *
 * perf_event_open follows arm_cspmu: -ENOENT for a type that is no
 * simulated Grace PMU; -EINVAL for a task event (pid != -1), a CPU that is
 * not one of the socket's (associated_cpus), exclude bits; -EOPNOTSUPP for
 * sampling; -EINVAL for a group mixing PMUs or needing more than
 * `counters` event counters plus the cycle counter. Before Linux 6.14
 * (kernels "6.12" and older here) the filter is config1 as given, and
 * root_port=0 counts nothing; from 6.14 on ("6.15") a zero filter selects
 * every Root Port.
 */
#ifndef PCIESCOPE_SIM_NVIDIA_PCIE_H
#define PCIESCOPE_SIM_NVIDIA_PCIE_H

#include <stddef.h>
#include <stdint.h>

#include "sim_hisi_pcie.h" /* sim_clock_fn */
#include "sim_machine.h"

struct perf_ops;

/* perf type of the PMU of nvidia.sockets[i]: SIM_NV_TYPE_BASE + i (above
 * the other models' ranges, the IIO rebinds' included). */
#define SIM_NV_TYPE_BASE 0x9000
/* Fake file descriptors of this model: above the PTT model's. */
#define SIM_NV_FD_BASE 0x68000000

struct sim_nvpcie;

int sim_nvpcie_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                   struct sim_nvpcie **out);
void sim_nvpcie_free(struct sim_nvpcie *p);
const struct perf_ops *sim_nvpcie_ops(struct sim_nvpcie *p);
size_t sim_nvpcie_open_count(struct sim_nvpcie *p);
/* A calibration load (`pciescope calibrate`): @bytes of DMA writes by
 * device @dev between @t0 and @t1 (model seconds), counted by every event
 * whose filter selects the device's Root Port. 0, -EINVAL or -EBUSY. */
int sim_nvpcie_add_load(struct sim_nvpcie *p, size_t dev, double bytes, double t0, double t1);
double sim_nvpcie_now(struct sim_nvpcie *p);

/* Ground truth over [t0, t1] seconds since creation for Root Port @port
 * (index into m->nvidia.sockets[@socket].ports): DMA read and write
 * payload bytes (local + remote), read requests, and the mean read
 * latency in seconds (0 without reads). */
struct sim_nv_truth {
        double rd_bytes, wr_bytes, rd_req, wr_req, rd_latency_s;
};
void sim_truth_nv_port(const struct sim_nvpcie *p, size_t socket, size_t port, double t0, double t1,
                       struct sim_nv_truth *out);

#endif /* PCIESCOPE_SIM_NVIDIA_PCIE_H */
