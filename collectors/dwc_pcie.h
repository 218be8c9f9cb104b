/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dwc_pcie.h - the Synopsys DesignWare PCIe PMU (Linux's dwc_pcie_pmu,
 * v6.8 on): one PMU per Root Port with a RAS D.E.S. capability, named
 * `dwc_rootport_<hex>` after its Root Port (SBDF from v6.12, the BDF
 * alone before), on Alibaba Yitian 710 and other DWC-based servers.
 *
 * What it counts: the time-based analysis counter (one per Root Port,
 * 64 bits, no overflow interrupt) counts TLP payload in 16-byte units; the
 * driver multiplies events 0x20..0x23 by 16, so perf reads bytes of
 * payload, without headers, framing or DLLPs. Event 0x21
 * (Rx_PCIe_TLP_Data_Payload) is what the Root Port receives (towards the
 * host: DMA writes and completions of CPU reads), 0x20 what it sends.
 *
 * One counter means rx and tx cannot count at once. The collector splits
 * every interval into two slices and counts rx in the first, tx in the
 * second (its own rotation, so perf never multiplexes behind its back);
 * each direction's rate is its bytes over its counting time and its
 * coverage the counting time over the time elapsed (about 0.5).
 *
 * How often it must read: the driver's count is 64 bits of bytes and it
 * takes (now - prev) modulo 2^64, so one read per 2^64 bytes is enough.
 * At the fastest link Linux knows (64 GT/s x32, about 256 GB/s per
 * direction) that is 2^64 / 2.56e11 s = 833 days; dwc_pcie_safe_read_seconds
 * computes the bound for a port's own link, and a slice is never longer
 * than half of it.
 */
#ifndef PCIESCOPE_DWC_PCIE_H
#define PCIESCOPE_DWC_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_addr.h"
#include "sample.h"

struct hw_env;
struct pcie_topo;
struct sample_set;

#define DWC_PCIE_PMU_PREFIX "dwc_rootport_"

/* The time-based events the collector uses (format `type` 0). */
#define DWC_PCIE_EVENT_TX_PAYLOAD 0x20
#define DWC_PCIE_EVENT_RX_PAYLOAD 0x21
#define DWC_PCIE_TIME_BASED_TYPE  0

enum dwc_pcie_dir { DWC_PCIE_RX, DWC_PCIE_TX, DWC_PCIE_DIRS };

/*
 * dwc_pcie_parse_name - the Root Port a PMU is named after:
 * "dwc_rootport_13018" is segment 1, bus 0x30, devfn 0x18 (v6.12 on);
 * "dwc_rootport_3018" (before v6.12) has no segment. *@id gets the number,
 * *@has_segment whether it can hold one (above 0xffff: the SBDF form; at
 * or below, either form in segment 0 or a BDF-only name). 0 or -EINVAL
 * (not a dwc_rootport name, not hex, above 32 bits). Pure.
 */
int dwc_pcie_parse_name(const char *name, uint32_t *id, bool *has_segment);

/*
 * dwc_pcie_match_port - which of @ports (@count Root Ports) PMU id @id
 * names. An id above 0xffff must match segment, bus and devfn; one at or
 * below matches the BDF in any segment (the pre-6.12 name). Returns the
 * index, -ENOENT (none), or -EEXIST (a BDF-only name that more than one
 * segment has: resolve by the PMU's parent). Pure.
 */
int dwc_pcie_match_port(uint32_t id, const struct pci_addr *ports, size_t count);

/*
 * dwc_pcie_safe_read_seconds - the longest time between two reads of a
 * counter of @counter_bits bits that counts bytes, for a link moving at
 * most @bytes_per_second, with a margin of 2: half the time to wrap.
 * @bytes_per_second 0 or below takes DWC_PCIE_FASTEST_LINK_BYTES. Pure.
 */
#define DWC_PCIE_FASTEST_LINK_BYTES 2.56e11 /* 64 GT/s x32 per direction */
double dwc_pcie_safe_read_seconds(unsigned int counter_bits, double bytes_per_second);

/*
 * dwc_pcie_slice_seconds - how long one direction counts per interval:
 * half of @interval, never longer than @safe_read seconds. Pure.
 */
double dwc_pcie_slice_seconds(double interval, double safe_read);

/* The collector of every dwc_rootport PMU of the machine. */
struct dwc_pcie_opts {
        enum pcie_detail detail; /* which series (sample.h) */
};

struct dwc_pcie;

/*
 * dwc_pcie_discover - load every dwc_rootport_* PMU, map each to its Root
 * Port in @topo (link capacity and MPS copied), find its rx and tx payload
 * events by event id and type, and plan the rotation for @interval
 * seconds. @opts must outlive the collector. A PMU that names no Root
 * Port, or lacks the events, is logged once and left out. Returns 0 with
 * *@out NULL when there is nothing to count, 0, or -ENOMEM.
 */
int dwc_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                      const struct dwc_pcie_opts *opts, double interval, struct dwc_pcie **out);
void dwc_pcie_free(struct dwc_pcie *d);

/* Opens every port's rx and tx events (stopped) and enables rx. On
 * failure everything is closed and the errno returned, logged once. */
int dwc_pcie_start(struct dwc_pcie *d, double now);

/*
 * dwc_pcie_tick - at the end of the rx slice, read rx and switch every
 * port to tx (returns 0: nothing to publish); at the end of the interval,
 * read tx, switch back to rx and append the interval's samples to @out
 * (returns 1). *@read_err gets 0 or the first failed read's errno (what
 * could be read is still published); -ENODEV when not started.
 */
int dwc_pcie_tick(struct dwc_pcie *d, double now, struct sample_set *out, int *read_err);
/* When dwc_pcie_tick wants to run next (monotonic seconds). */
double dwc_pcie_next_tick(const struct dwc_pcie *d);
void dwc_pcie_stop(struct dwc_pcie *d);

size_t dwc_pcie_port_count(const struct dwc_pcie *d);

#endif /* PCIESCOPE_DWC_PCIE_H */
