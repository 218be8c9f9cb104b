/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_intel_iio.h - the Intel uncore IIO free-running PMUs of a simulated
 * Sapphire Rapids class machine, served through the seam's perf ops.
 *
 * Linux publishes one PMU per IIO box id, `uncore_iio_free_running_<box>`,
 * serving every socket: its `cpumask` holds one CPU per socket, and an
 * event opened on a CPU counts the box of that CPU's socket. The counters
 * run freely (never stopped, never multiplexed): perf reports the count
 * since the event was opened, and time_enabled == time_running.
 *
 * Hardware model (ground truth): bw_in_port<part> counts one per
 * `intel.iio_in_bytes_per_count` bytes (32 on SPR, as the kernel's v6.15 fix
 * says) of data the devices below the part's Root Port send towards the
 * host: payload of inbound memory writes (DMA writes) plus inbound
 * completion data (answers to the CPU's MMIO reads). bw_out_port<part>
 * counts one per `intel.iio_out_bytes_per_count` bytes (a model assumption)
 * of data towards the devices: completion data of DMA reads plus payload of
 * MMIO writes. ioclk counts at `intel.ioclk_hz`. Counts are integrated from
 * the workload model exactly and truncated to whole counts.
 *
 * perf_event_open follows the kernel's uncore driver: -ENOENT for a type
 * that is no simulated IIO PMU, -EINVAL for a task target (pid != -1), a
 * CPU outside every socket, sampling, exclude bits, an unknown event/umask,
 * or a group mixing PMUs; -EOPNOTSUPP never. Groups of events of one PMU
 * (one socket) are allowed and read together.
 */
#ifndef PCIESCOPE_SIM_INTEL_IIO_H
#define PCIESCOPE_SIM_INTEL_IIO_H

#include <stddef.h>
#include <stdint.h>

#include "sim_hisi_pcie.h" /* sim_clock_fn */
#include "sim_machine.h"

struct perf_ops;

/* perf type of uncore_iio_free_running_<box>: SIM_IIO_TYPE_BASE + box id.
 * Programmable uncore_iio_<box> PMUs (written to sysfs, not counted) use
 * SIM_IIO_TYPE_BASE + 0x100 + box id. */
#define SIM_IIO_TYPE_BASE 0x7800
/* uncore_iio_free_running_<box> bound again (`pmu_bind`, sim_events.h) for
 * the n-th time: SIM_IIO_REBIND_BASE + box + 0x100 * ((n - 1) % 15). */
#define SIM_IIO_REBIND_BASE 0x7e00
uint32_t sim_iio_type_of(unsigned int box, unsigned int generation);
/* Fake file descriptors of this model: disjoint from sim_hisi_pcie's. */
#define SIM_IIO_FD_BASE 0x50000000

struct sim_iio;

/* The model of @m (m->intel.present). @clock NULL: CLOCK_MONOTONIC; time 0
 * of the workload is the moment of creation (use the same clock as the
 * hisi_pcie model so both agree). Returns 0 or -ENOMEM. */
int sim_iio_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                struct sim_iio **out);
void sim_iio_free(struct sim_iio *p);

/* The perf ops serving the model (ctx = @p); thread-safe. */
const struct perf_ops *sim_iio_ops(struct sim_iio *p);

/* Open file descriptors (tests check nothing leaks). */
size_t sim_iio_open_count(struct sim_iio *p);

/* Seconds since creation on the model's clock. */
double sim_iio_now(struct sim_iio *p);

/* Ground truth over [t0, t1] seconds since creation: bytes towards the host
 * (in) and towards the devices (out) through part @part (0..7) of stack
 * @stack (index into m->intel.sockets[@socket].stacks). Zero for a part
 * without a Root Port. */
void sim_truth_iio_part(const struct sim_iio *p, size_t socket, size_t stack, unsigned int part,
                        double t0, double t1, double *in_bytes, double *out_bytes);

/*
 * sim_iio_register_config - the CPU bus registers in the configuration
 * space image of device @idx when it is one of the functions that hold them
 * (struct sim_socket: MSM, PCU CR3, 00.0 of a stack bus), consistent with
 * the description's stacks: CPUBUSNO_VALID has the bit of each stack's CPU
 * bus id, CPUBUSNO0..7 its root bus, CAPID4 the chop, SAD_CONTROL_CFG the
 * socket id (collectors/iio_stackmap.h has the offsets and sources).
 */
void sim_iio_register_config(const struct sim_machine *m, size_t idx, uint8_t *cfg);

#endif /* PCIESCOPE_SIM_INTEL_IIO_H */
