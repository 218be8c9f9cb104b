/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_amd_df.h - the AMD data fabric PMU (`amd_df`) of a simulated EPYC
 * 9005 (Turin) machine, served through the seam's perf ops.
 *
 * The tree: bus/event_source/devices/amd_df with `type`, `cpumask` (the
 * first CPU of each socket, as amd_uncore's per-package context does) and
 * `format/event` = config:0-7,32-37 and `format/umask` = config:8-15,24-27
 * (PerfMonV2; with `amd.narrow_umask` the 8-bit field of older kernels);
 * no `events/` (the kernel names no DF events; perf's JSON does), the CPU
 * topology files and /proc/cpuinfo (AuthenticAMD, the description's family
 * and model).
 *
 * Hardware model (ground truth): the event with code 0x81f + 0x40 * n and
 * unit mask 0x7fe / 0x7ff / 0xbfe / 0xbff / 0xffe / 0xfff counts one per
 * 64 bytes of DMA data of IO root complex n of the opening CPU's socket:
 * reads (0x?fe) are the completion data of the devices' DMA reads, writes
 * (0x?ff) the payload of their DMA writes; local takes (1 - remote_share)
 * of it, remote remote_share, either all. MMIO is not counted. Counts are
 * integrated from the workload model (with back-pressure) and truncated.
 * Other codes and masks are -EINVAL (the simulator knows no others).
 *
 * Scheduling: a socket has `amd.df_counters` counters; enabled groups are
 * placed in the order of their slots, a whole group or none (as perf's
 * group scheduling does), and an enabled event that found no counter has
 * time_enabled rising and time_running not (multiplexing).
 */
#ifndef PCIESCOPE_SIM_AMD_DF_H
#define PCIESCOPE_SIM_AMD_DF_H

#include <stddef.h>
#include <stdint.h>

#include "sim_hisi_pcie.h" /* sim_clock_fn */
#include "sim_machine.h"

struct perf_ops;

#define SIM_DF_TYPE 0x9100 /* perf type of amd_df: beyond the other models' ranges */

/* amd_df's perf type after its n-th `pmu_bind` (sim_events.h): SIM_DF_TYPE
 * + 1 + (n - 1) % 15, SIM_DF_TYPE before any; a revoked event (unbound
 * since it was opened) reads 0 bytes, as the other models' do. */
uint32_t sim_df_type_of(unsigned int generation);
#define SIM_DF_TYPE_COUNT 16
#define SIM_DF_FD_BASE    0x5c000000 /* fake fds: above the DesignWare model's, below PTT's */

struct sim_df;

int sim_df_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
               struct sim_df **out);
void sim_df_free(struct sim_df *p);
const struct perf_ops *sim_df_ops(struct sim_df *p);
size_t sim_df_open_count(struct sim_df *p);

/* A calibration load (sim.c's load ops): DMA writes of @bytes through
 * device @dev spread evenly over [@t0, @t1] (model time), counted by the
 * write beats of the root complex above it, split by its remote_share,
 * and in sim_truth_df while listed (the last 32 loads). 0, -EINVAL, or
 * -EBUSY (32 loads still running). */
int sim_df_add_load(struct sim_df *p, size_t dev, double bytes, double t0, double t1);
double sim_df_now(struct sim_df *p);

/* The amd_df directory, CPU topology and /proc/cpuinfo below @root. */
int sim_df_sysfs_write(const struct sim_machine *m, const char *root, char *errbuf, size_t errlen);
/* The amd_df directory alone, with perf type @type (a `pmu_bind`). */
int sim_df_sysfs_pmu_write(const struct sim_machine *m, const char *root, uint32_t type,
                           char *errbuf, size_t errlen);

/* Ground truth over [t0, t1]: bytes of DMA reads (@read) and writes of root
 * complex @rc_index on socket @socket (index into m->amd.sockets) to
 * local (@remote false) or remote memory. */
void sim_truth_df(const struct sim_df *p, size_t socket, unsigned int rc_index, bool remote,
                  double t0, double t1, double *read_bytes, double *write_bytes);

#endif /* PCIESCOPE_SIM_AMD_DF_H */
