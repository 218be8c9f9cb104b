/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_hisi_ptt.h - the HiSilicon PCIe Tune and Trace (PTT) devices of a
 * simulated machine, served through the seam's perf ops.
 *
 * One trace device per PCIe core that has a 19e5:a12e function, published
 * as bus/event_source/devices/hisi_ptt<sicl>_<core>/ (type, cpumask,
 * format/, root_port_filters/, requester_filters/, tune/) and opened like
 * the driver (kernel-facts §2): event_init's checks, one trace per device
 * (-EBUSY), the AUX protocol of §4.1 through the seam's mmap (the areas are
 * heap memory, not real mappings), and a producer that turns the machine's
 * workload into trace entries:
 *
 * - Entries are written into a 4 MiB "DMA buffer"; each full buffer is
 *   copied into the AUX area at aux_head, aux_head advances and a
 *   PERF_RECORD_AUX {aux_offset, 4 MiB, 0} goes into the data ring. Before
 *   the next buffer the model checks that 4 MiB are free between aux_head
 *   and aux_tail + aux_size; when not, the trace STOPS SILENTLY: the event
 *   stays enabled and nothing more arrives until DISABLE + ENABLE.
 * - DISABLE (and close) copies the partly filled buffer with a
 *   PERF_RECORD_AUX flagged PARTIAL; after a silent stop it emits one
 *   record {aux_head, 0, TRUNCATED} instead: data was dropped.
 * - Production happens inside the ops (open, read, ioctl, mmap, ...), which
 *   first bring the model up to the clock's now: a reader polls with a
 *   read() on the event, which on real hardware is harmless.
 *
 * Entries: TLPs of the devices below the filtered Root Port(s), or of the
 * one requester, in the classes the direction/format (§2.4) and type mask
 * select: DMA writes (inbound MWr, 64-bit), DMA reads (inbound MRd cut at
 * MRRS, outbound CplD split at MPS with Byte Count/Lower Address), MMIO
 * writes and reads (outbound MWr/MRd, 32-bit, requester = the Root Port,
 * inbound CplD). Tags count up per requester; 10-bit tags (256..1023) for
 * devices whose DMA read load is heavy (>= 2 GB/s on a Gen5 link). Arrival
 * times are a Poisson process following the workload's phases; latencies
 * come from the flow's latency distribution; split completions follow each
 * other at the link's MPS serialisation time. The Time field counts ticks of
 * the machine's hisi_pcie.ptt_clock_hz (default SIM_PTT_CLOCK_HZ): by
 * default a DELTA from the previous entry (the summariser's default
 * reading; 11 bits in 4DW, saturating at 2047), the first entry of a run
 * holding the absolute tick count (masked); with hisi_pcie.ptt_time
 * "absolute" the free-running tick counter, wrapping at the field's width.
 *
 * The workload of a busy port would need hundreds of MB/s of entries; the
 * model thins all streams alike so that at most rate_cap bytes of entries
 * are produced per simulated second (default SIM_PTT_DEFAULT_RATE_CAP).
 * The ground truth reports what was generated, after thinning.
 */
#ifndef PCIESCOPE_SIM_HISI_PTT_H
#define PCIESCOPE_SIM_HISI_PTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_hisi_pcie.h" /* sim_clock_fn */
#include "sim_machine.h"

struct perf_ops;

/* perf type of hisi_ptt<sicl>_<core>: SIM_PTT_TYPE_BASE + core index. */
#define SIM_PTT_TYPE_BASE 0x7a00
/* Fake fds of trace events (disjoint from hisi_pcie and IIO fds). */
#define SIM_PTT_FD_BASE 0x60000000

#define SIM_PTT_CHUNK            (4u << 20) /* one driver DMA buffer */
#define SIM_PTT_MIN_AUX          (16u << 20)
#define SIM_PTT_CLOCK_HZ         100e6 /* default Time field ticks: a MODEL ASSUMPTION */
#define SIM_PTT_DEFAULT_RATE_CAP (64.0 * 1024 * 1024)

struct sim_ptt;

/* The trace devices of @m (cores with a ptt_function). @m must outlive the
 * model; time 0 of the workload is the moment of creation. Returns 0 or
 * -ENOMEM. */
int sim_ptt_new(const struct sim_machine *m, uint32_t type_base, sim_clock_fn clock,
                void *clock_ctx, struct sim_ptt **out);
void sim_ptt_free(struct sim_ptt *p);

/* The perf ops serving the model (ctx = @p); thread-safe. */
const struct perf_ops *sim_ptt_ops(struct sim_ptt *p);

/* Whether @addr is the start of an area this model handed out (munmap
 * routing). */
bool sim_ptt_owns(struct sim_ptt *p, const void *addr);

/* "hisi_ptt<sicl>_<core>" of core @core ("" when out of range). */
void sim_ptt_name(const struct sim_machine *m, size_t core, char *buf, size_t size);

/*
 * sim_ptt_sysfs_write - the PMU directories under @root/sys (a tree that
 * sim_sysfs_write made): type @type_base + core index, cpumask, format/,
 * root_port_filters/, requester_filters/, tune/. Returns 0 or a negative
 * errno with @errbuf naming the path.
 */
/* Core @core's PTT device alone, with perf type @type (bound again: a
 * fresh directory, a new type). 0 or a negative errno. */
int sim_ptt_sysfs_write_one(const struct sim_machine *m, const char *root, size_t core,
                            uint32_t type);
/* The perf type of core @core's PTT device in its @generation-th binding. */
uint32_t sim_ptt_type_of(size_t core, unsigned int generation);

int sim_ptt_sysfs_write(const struct sim_machine *m, const char *root, uint32_t type_base,
                        char *errbuf, size_t errlen);

/* The next @count opens on core @core (SIZE_MAX: any) fail with -@err
 * (e.g. EBUSY: another perf user owns the device); count -1 = all. */
void sim_ptt_inject(struct sim_ptt *p, size_t core, int err, long count);

/* Bytes of entries per simulated second at most (> 0). */
void sim_ptt_set_rate_cap(struct sim_ptt *p, double bytes_per_second);

/* Open events and mapped areas (tests check nothing leaks). */
size_t sim_ptt_open_count(struct sim_ptt *p);
size_t sim_ptt_mapped_count(struct sim_ptt *p);

/* Brings every trace up to the clock's now. */
void sim_ptt_advance(struct sim_ptt *p);

/* ---- ground truth ---- */

enum sim_ptt_kind { SIM_PTT_MWR, SIM_PTT_MRD, SIM_PTT_CPLD, SIM_PTT_KINDS };
enum sim_ptt_dir { SIM_PTT_INBOUND, SIM_PTT_OUTBOUND, SIM_PTT_DIRS };

struct sim_ptt_truth {
        uint64_t tlps[SIM_PTT_DIRS][SIM_PTT_KINDS];
        uint64_t payload_bytes[SIM_PTT_DIRS][SIM_PTT_KINDS];
        uint64_t entries;         /* written into the DMA buffer */
        uint64_t aux_bytes;       /* copied into the AUX area */
        uint64_t chunks;          /* full 4 MiB buffers committed */
        uint64_t stops;           /* silent stops (no room for a buffer) */
        uint64_t partial_records; /* PERF_RECORD_AUX with PARTIAL */
        uint64_t truncated_records;
        uint64_t lost_records;     /* records that did not fit the data ring */
        uint64_t requests_matched; /* non-posted requests with all completions recorded */
        double thin;               /* share of the workload generated (rate cap) */
};

/*
 * sim_ptt_truth - what core @core's device generated since the last open
 * of its event (or sim_ptt_truth_reset). Returns 0 or -ENOENT (no trace
 * device on that core).
 */
int sim_ptt_truth(struct sim_ptt *p, size_t core, struct sim_ptt_truth *out);
void sim_ptt_truth_reset(struct sim_ptt *p, size_t core);

/*
 * sim_ptt_keep_latencies - keep every matched request's true latencies for
 * sim_ptt_truth_latency_quantile (a test's question; off by default: they
 * take 8 bytes a request, megabytes a window, and a simulated machine under
 * the plugin must not add memory a real one would not have).
 */
void sim_ptt_keep_latencies(struct sim_ptt *p, bool on);

/*
 * sim_ptt_truth_latency_quantile - the @q quantile (nearest rank) of the
 * true request -> first (@last false) or last completion latencies, in
 * nanoseconds, of the requests whose request and completions were all
 * recorded (sim_ptt_keep_latencies). Returns a negative value when there
 * are none.
 */
double sim_ptt_truth_latency_quantile(struct sim_ptt *p, size_t core, bool last, double q);

#endif /* PCIESCOPE_SIM_HISI_PTT_H */
