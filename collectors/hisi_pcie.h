/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hisi_pcie.h - the HiSilicon PCIe PMU (Hip09, driver hisi_pcie_pmu):
 * its event pairs, and finding each PMU's Root Ports.
 *
 * One PMU per PCIe core, named hisi_pcie<sicl>_core<core>. Every
 * measurement is a pair of events sharing one of the 8 counter slots: a
 * latency sum with its TLP count, or a traffic volume ("flux") with a time
 * count. Pairs are identified by the hardware code the kernel publishes in
 * events/, not by the event's name: Linux 5.17 published two codes under
 * the wrong names (fixed in 6.2), and vendor kernels ship other lists.
 */
#ifndef PCIESCOPE_HISI_PCIE_H
#define PCIESCOPE_HISI_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_source.h"

struct hw_env;
struct perf_pmu;
struct pcie_topo;
struct perf_event_attr;

enum hisi_pcie_pair {
        HISI_RX_MWR_LATENCY, /* inbound MWr: delay sum / TLPs */
        HISI_RX_MRD_LATENCY, /* inbound MRd (device DMA reads): delay / TLPs */
        HISI_TX_MRD_LATENCY, /* outbound MRd (CPU MMIO reads): delay / TLPs */
        HISI_RX_MWR_FLUX,    /* device writes host memory */
        HISI_RX_MRD_FLUX,    /* device read requests */
        HISI_RX_CPL_FLUX,    /* completions for CPU reads */
        HISI_TX_MWR_FLUX,    /* CPU writes to the device */
        HISI_TX_MRD_FLUX,    /* CPU read requests */
        HISI_TX_CPL_FLUX,    /* data returned for device reads */
        HISI_PAIRS,
};

struct hisi_pcie_pair_info {
        const char *name;      /* "rx_mwr" */
        const char *direction; /* "rx" (towards the host) or "tx" */
        const char *tlp;       /* "mwr", "mrd", "cpl" */
        bool bandwidth;        /* flux/time pair (else latency/count) */
        uint16_t code;         /* hardware code of the primary event */
        const char *primary;   /* the name Linux >= 6.2 gives it, "rx_mwr_flux" */
        const char *secondary; /* "rx_mwr_time" */
};

const struct hisi_pcie_pair_info *hisi_pcie_pair_info(enum hisi_pcie_pair pair);

/* The pair whose primary event has hardware code @code (bit 16 clear), or
 * HISI_PAIRS. */
enum hisi_pcie_pair hisi_pcie_pair_by_code(uint32_t code);

/* Root Port bit in the `port` bitmap: 2 * (device & 7). */
static inline uint16_t hisi_pcie_port_bit(uint8_t dev)
{
        return (uint16_t)(1u << (2 * (dev & 7)));
}

#define HISI_PCIE_MAX_PORTS 8

/* One PMU as discovered. */
struct hisi_pcie_pmu {
        char name[64];
        unsigned int sicl, core;
        struct perf_pmu *pmu; /* owned */
        int cpu;              /* cpumask CPU to open events on */
        uint64_t identifier;
        bool has_range; /* bdf_min/bdf_max present (Linux 6.12 on) */
        uint16_t bdf_min, bdf_max;
        uint8_t bus;
        bool has_len_mode;
        bool strict_related; /* v6.9 rules: related events by whole control value */

        /* Pairs the running kernel offers and the events that carry them. */
        bool offered[HISI_PAIRS];
        char primary_event[HISI_PAIRS][64];
        char secondary_event[HISI_PAIRS][64];
        bool renamed[HISI_PAIRS]; /* the kernel's name says another pair */

        size_t port_count;
        struct hisi_pcie_port {
                struct pci_addr addr;
                char bdf[PCI_BDF_LEN];
                uint16_t bit;
                size_t topo_index; /* index in the topology, or (size_t)-1 */
        } ports[HISI_PCIE_MAX_PORTS];
};

/* Parses "hisi_pcie<sicl>_core<core>". Returns 0 or -EINVAL. */
int hisi_pcie_parse_name(const char *name, unsigned int *sicl, unsigned int *core);

/*
 * hisi_pcie_discover - find every hisi_pcie PMU under the env's sysfs root,
 * read its events and formats, and map it to the Root Ports of @topo it
 * covers: those with BDF in [bdf_min, bdf_max] (Linux 6.12 on), else the
 * Root Ports on its `bus`; PMUs that share a bus on older kernels split it
 * by blocks of 8 device numbers (the width of the port bitmap), in core
 * order — logged as a guess. A PMU that cannot be read is logged and left
 * out. *@out is an array the caller frees with hisi_pcie_free(); @count
 * may be 0. Returns 0, or -ENOMEM.
 */
int hisi_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                       struct hisi_pcie_pmu **out, size_t *count);
void hisi_pcie_free(struct hisi_pcie_pmu *pmus, size_t count);

/* Filters of one measurement. */
struct hisi_pcie_filter {
        uint16_t port; /* port bitmap; 0 = use bdf */
        uint16_t bdf;  /* requester ID */
        unsigned int thr_len, thr_mode;
        unsigned int len_mode; /* 0: leave the field alone */
};

/*
 * hisi_pcie_pair_attrs - the two attrs of @pair with @filter (identical
 * filters, so the pair shares one slot). Returns 0, -ENOENT (pair not
 * offered, or a filter field missing on this kernel) or -ERANGE.
 */
int hisi_pcie_pair_attrs(const struct hisi_pcie_pmu *pmu, enum hisi_pcie_pair pair,
                         const struct hisi_pcie_filter *filter, struct perf_event_attr *attrs);

#endif /* PCIESCOPE_HISI_PCIE_H */
