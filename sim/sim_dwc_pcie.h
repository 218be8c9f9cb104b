/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_dwc_pcie.h - the Synopsys DesignWare PCIe PMUs (dwc_pcie_pmu,
 * `dwc_rootport_<sbdf>`) of a simulated machine's root complexes, served
 * through the seam's perf ops, and their sysfs directories.
 *
 * Each Root Port with the driver's vendor (sim_dwc_has_pmu) has one PMU
 * with the driver's two counters: the time-based one (type 0: LTSSM
 * residency group 0x00..0x09, payload group 0x20..0x23) and the lane event
 * counter (type 1). Payload events count the bytes of TLP payload the port
 * receives (0x21: DMA-write data and completions of CPU reads, towards the
 * host) or sends (0x20: completions of DMA reads and CPU writes), in whole
 * 16-byte units as the hardware does, times 16 as the driver reports them.
 * LTSSM, CCIX and lane events are accepted and count 0 (not modelled).
 *
 * perf_event_open follows the driver: -ENOENT for a type that is no
 * simulated dwc PMU, -EINVAL for sampling, a task target or no CPU,
 * exclude bits, a type field above 1, a lane at or beyond the port's
 * width, or any group (a group leader must be a software event). When
 * more events of one type are enabled on a PMU than its one counter,
 * they share it in time as perf's rotation does (time_running below
 * time_enabled).
 */
#ifndef PCIESCOPE_SIM_DWC_PCIE_H
#define PCIESCOPE_SIM_DWC_PCIE_H

#include <stddef.h>
#include <stdint.h>

#include "sim_hisi_pcie.h" /* sim_clock_fn */
#include "sim_machine.h"

struct perf_ops;

/* perf type of the PMU of m->dwc.ports[i]: SIM_DWC_TYPE_BASE + i. */
#define SIM_DWC_TYPE_BASE 0x7400 /* free between hisi_pcie (0x7000) and IIO (0x7800) */
/* Fake file descriptors of this model: between the IIO's and the PTT's. */
#define SIM_DWC_FD_BASE 0x58000000

/* The PMU name of Root Port m->dwc.ports[@i] under @m's kernel into @buf:
 * the SBDF from 6.12, the BDF alone before. */
void sim_dwc_pmu_name(const struct sim_machine *m, size_t i, char *buf, size_t size);

/* Writes every PMU directory below @root (the tree sim_sysfs_write made):
 * under the Root Port's device directory, linked from
 * bus/event_source/devices. Before 6.12 a second port with the same BDF
 * in another segment gets none (the kernel's name clash). 0 or -errno,
 * with @errbuf. */
int sim_dwc_sysfs_write(const struct sim_machine *m, const char *root, char *errbuf, size_t errlen);

struct sim_dwc;
/* The model of @m (m->dwc.port_count > 0). Same clock as the other models
 * so all agree. 0 or -ENOMEM / -EINVAL. */
int sim_dwc_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                struct sim_dwc **out);
void sim_dwc_free(struct sim_dwc *p);
const struct perf_ops *sim_dwc_ops(struct sim_dwc *p);
size_t sim_dwc_open_count(struct sim_dwc *p);
double sim_dwc_now(struct sim_dwc *p);

/* Ground truth over [t0, t1] seconds since creation: payload bytes Root
 * Port m->dwc.ports[@i] received (towards the host) and sent. */
void sim_truth_dwc_port(const struct sim_dwc *p, size_t i, double t0, double t1, double *rx_bytes,
                        double *tx_bytes);

#endif /* PCIESCOPE_SIM_DWC_PCIE_H */
