/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvidia_pcie.h - PCIe traffic per Root Port on NVIDIA Grace (Tegra241:
 * GH200, GB200, Grace CPU Superchip) through the kernel's arm_cspmu PMU
 * `nvidia_pcie_pmu_<node>` (nvidia_cspmu backend), one per socket.
 *
 * The PMU counts device-initiated DMA of the Root Ports its `root_port`
 * filter (config1 bits 0-9, one bit per Root Port of the socket) selects:
 * rd_bytes (data the devices read from memory: tx, completions),
 * wr_bytes (data they write: rx, memory writes), their requests,
 * rd_cum_outs (outstanding reads summed every cycle), each to local
 * (`_loc`) or remote (`_rem`) memory, and `cycles`. CPU MMIO is not
 * counted. Bytes are payload.
 *
 * Per Root Port: the collector opens one group per interval with a
 * one-bit filter and rotates the bit across the mapped Root Ports, as the
 * hisi_pcie collector rotates its plan; every value carries its coverage.
 * The bit is always given: before Linux 6.14 a filter of 0 counts nothing
 * (the driver passed config1 through), from 6.14 it means every port.
 *
 * Which Root Port a bit selects is not published by the kernel. The
 * default: bit N is the Root Port on PCI segment 16 x node + N (Grace's
 * PCIe controllers C0..C9 each own a segment; an assumption, see
 * docs/metrics.md). `NvidiaPCIeRootPort` lines configure it, and
 * `pciescope calibrate` finds it with a known load (a calibration file
 * then supplies it). Each port says which in `pcie_pmu_port_info`'s
 * `mapping` label: "default", "configured" or "calibrated".
 *
 * Read latency: rd_cum_outs / rd_req is the mean number of PMU cycles a
 * read was outstanding (Little's law); the PMU's clock is cycles /
 * elapsed time of the same window, so the latency in seconds is
 * (rd_cum_outs / rd_req) x elapsed / cycles.
 */
#ifndef PCIESCOPE_NVIDIA_PCIE_H
#define PCIESCOPE_NVIDIA_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_addr.h"
#include "sample.h"

struct hw_env;
struct pcie_topo;
struct sample_set;

#define NVIDIA_PCIE_PREFIX    "nvidia_pcie_pmu_"
#define NVIDIA_PCIE_PORT_BITS 10
#define NVIDIA_PCIE_MAX_MAPS  64

enum nvidia_pcie_mapping {
        NVIDIA_MAP_NONE,       /* no Root Port for this bit */
        NVIDIA_MAP_DEFAULT,    /* segment 16 x node + bit */
        NVIDIA_MAP_CONFIGURED, /* NvidiaPCIeRootPort */
        NVIDIA_MAP_CALIBRATED, /* a calibration file */
};
/* "none", "default", "configured", "calibrated" */
const char *nvidia_pcie_mapping_name(enum nvidia_pcie_mapping m);

/* One bit -> Root Port: NvidiaPCIeRootPort <node> <bit> "<BDF>". */
struct nvidia_pcie_map {
        unsigned int node, bit;
        struct pci_addr port;
        bool calibrated; /* from a calibration file, not a configuration line */
};

struct nvidia_pcie_opts {
        size_t map_count;
        struct nvidia_pcie_map maps[NVIDIA_PCIE_MAX_MAPS];
        enum pcie_detail detail;
};
void nvidia_pcie_opts_default(struct nvidia_pcie_opts *opts);

/* Adds (or replaces: the same node and bit) a mapping. 0, -EINVAL (bit
 * out of range) or -ENOSPC. */
int nvidia_pcie_opts_map(struct nvidia_pcie_opts *opts, unsigned int node, unsigned int bit,
                         const struct pci_addr *port, bool calibrated);

/* ---- pure helpers ---- */

/* The <node> of "nvidia_pcie_pmu_<node>". 0 or -EINVAL. */
int nvidia_pcie_parse_name(const char *name, unsigned int *node);

/* The PCI segment of bit @bit's Root Port by default. */
static inline uint32_t nvidia_pcie_default_segment(unsigned int node, unsigned int bit)
{
        return 16 * node + bit;
}

/* Mean read latency in seconds of one window: @cum_outs and @rd_req
 * counted with @cycles over @elapsed_s seconds. -EINVAL (and NaN) when it
 * cannot be known: no reads, no cycles, no time. */
int nvidia_pcie_latency(double cum_outs, double rd_req, double cycles, double elapsed_s,
                        double *seconds, double *cycles_per_read);

/* The next mapped bit after @cursor (wrapping), or -1 when none is. */
int nvidia_pcie_next_bit(const bool mapped[NVIDIA_PCIE_PORT_BITS], int cursor);

/*
 * nvidia_pcie_identify_bit - which bit carried a known load: @idle[i] and
 * @load[i] are bytes per second bit i counted just before and during the
 * load, @expected the load's bytes per second. The one bit whose rise is
 * within @tolerance (relative) of @expected; a rise of another size (other
 * traffic coming and going) is not the load's. Returns the bit, -ENOENT
 * when no bit rose so, -ENOTUNIQ when several did, -EINVAL.
 */
int nvidia_pcie_identify_bit(const double idle[NVIDIA_PCIE_PORT_BITS],
                             const double load[NVIDIA_PCIE_PORT_BITS], double expected,
                             double tolerance);

/* ---- the collector ---- */

struct nvidia_pcie;        /* every PMU found */
struct nvidia_pcie_socket; /* one PMU's collector (a thread of its own) */

/*
 * nvidia_pcie_discover - find the nvidia_pcie_pmu_* PMUs and map their
 * bits to the Root Ports of @topo (options first, then the default).
 * Returns 0 with *@out NULL when there is none, 0 with a result, or
 * -ENOMEM. A PMU without events or format is logged and left out.
 */
int nvidia_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                         const struct nvidia_pcie_opts *opts, struct nvidia_pcie **out);
void nvidia_pcie_free(struct nvidia_pcie *nv);

size_t nvidia_pcie_socket_count(const struct nvidia_pcie *nv);
struct nvidia_pcie_socket *nvidia_pcie_socket_at(struct nvidia_pcie *nv, size_t i);
const char *nvidia_pcie_socket_name(const struct nvidia_pcie_socket *s);
/* Root Ports mapped on this PMU. */
size_t nvidia_pcie_socket_ports(const struct nvidia_pcie_socket *s);
/* Bit @bit's Root Port and how it was mapped (NVIDIA_MAP_NONE: none). */
enum nvidia_pcie_mapping nvidia_pcie_socket_port(const struct nvidia_pcie_socket *s,
                                                 unsigned int bit, char bdf[PCI_BDF_LEN]);
unsigned int nvidia_pcie_socket_node(const struct nvidia_pcie_socket *s);

/* Opens the first mapped port's group on the PMU's CPU. The perf errno,
 * logged once with advice. */
int nvidia_pcie_socket_start(struct nvidia_pcie_socket *s, double now);
/* One interval: read the window, rotate to the next port, append the
 * samples. 0 or the read/open error (what could be published still is). */
int nvidia_pcie_socket_tick(struct nvidia_pcie_socket *s, double now, struct sample_set *out);
void nvidia_pcie_socket_stop(struct nvidia_pcie_socket *s);

/*
 * One bit's bytes for calibration: nvidia_pcie_bit_open counts the bytes
 * (read and write, local and remote) that bit @bit of PMU @pmu_name
 * selects, on the PMU's CPU; nvidia_pcie_bit_read gives bytes per second
 * since the open (or the previous read). 0 or a negative errno.
 */
struct nvidia_pcie_bit;
int nvidia_pcie_bit_open(const struct hw_env *env, const char *pmu_name, unsigned int bit,
                         struct nvidia_pcie_bit **out);
int nvidia_pcie_bit_read(struct nvidia_pcie_bit *b, double *bytes_per_second);
void nvidia_pcie_bit_close(struct nvidia_pcie_bit *b);

#endif /* PCIESCOPE_NVIDIA_PCIE_H */
