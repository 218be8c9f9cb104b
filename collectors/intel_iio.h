/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * intel_iio.h - PCIe bandwidth per IIO stack and part on Intel Xeon
 * (Sapphire Rapids on) through the kernel's uncore free-running PMUs.
 *
 * The kernel publishes one PMU per IIO box, `uncore_iio_free_running_<N>`,
 * for every socket at once: its cpumask holds one CPU per socket, and an
 * event opened on that CPU counts that socket's box. The events are
 * `bw_in_port0..7` (data the devices of part 0..7 send towards the host),
 * `bw_out_port0..7` (until v6.15, which removed them as unscalable) and
 * `ioclk`, with `.scale`/`.unit` files that give bytes per count; the
 * scale changed in v6.15 (4 to 32 bytes), so it is read, never assumed.
 * Counting through perf rather than MSRs lets pciescope run next to perf,
 * PCM in perf mode and other tools.
 *
 * Mapping stacks to PCIe: the kernel tells which root bus an IIO stack owns
 * only through `die<N>` files in uncore_iio_<N> (SKX, ICX, SNR); SPR and
 * later have none. A stack is mapped from the configuration (IIOStackBus,
 * which always wins), else from those files, else from the uncore's CPU
 * bus registers in PCI configuration space, as Intel PCM maps them
 * (iio_stackmap.h); otherwise it is published by stack and part only. On a
 * mapped stack part P is the Root Port at device P + 1 of the stack's root
 * bus (P + 2 on Xeon 6), when one is there.
 *
 * One collector per socket (intel_iio_socket), meant for a thread of its
 * own, as hisi_pcie_core is per PCIe core.
 */
#ifndef PCIESCOPE_INTEL_IIO_H
#define PCIESCOPE_INTEL_IIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_source.h"
#include "sample.h"

struct hw_env;
struct iio_stackmap;
struct pcie_topo;
struct sample_set;

#define INTEL_IIO_PARTS    8
#define INTEL_IIO_MAX_MAPS 64

/* IIOStackBus "<pmu>" <socket> "<domain>:<bus>" from the configuration. */
struct intel_iio_map {
        char pmu[64]; /* "uncore_iio_free_running_2" (or "uncore_iio_2") */
        unsigned int socket;
        uint32_t domain;
        uint8_t bus;
};

struct intel_iio_opts {
        /* Kernels before the v6.15 fix (and stable backports) say 4 bytes
         * per count on SPR/EMR/ICX/SNR, where the hardware counts 32: with
         * scale_fix the collector uses 32 there and says so once. */
        bool scale_fix;
        bool bw_out; /* publish bw_out_port* estimates where the kernel offers them */
        size_t map_count;
        struct intel_iio_map maps[INTEL_IIO_MAX_MAPS];
        enum pcie_detail detail; /* which series (sample.h) */
};
void intel_iio_opts_default(struct intel_iio_opts *opts);

/* Parses "dddd:bb" or "bb" (hex). 0 or -EINVAL. */
int intel_iio_parse_bus(const char *text, uint32_t *domain, uint8_t *bus);

/*
 * intel_iio_bytes_per_count - bytes one count of an event stands for, from
 * its sysfs scale and unit ("MiB", "KiB", "MB", "kB", "B", "Bytes" or "").
 * Returns 0, or -EINVAL for an unknown unit or a scale <= 0.
 */
int intel_iio_bytes_per_count(double scale, const char *unit, double *bytes);

/*
 * intel_iio_read_stackmap - the IIO stack to root bus mapping of a CPU of
 * @family/@model from the uncore's CPU bus registers in PCI configuration
 * space (iio_stackmap.h), read once through the env's libpci access.
 * Returns 0 with @map filled, or a negative errno with a sentence in @why:
 * -ENOENT when the registers are absent (no MSM function: an older CPU, a
 * VM, an lspci dump of another machine), -EINVAL for a CPU without a
 * table, -ENODATA when they cannot be read (no root), -EBADMSG when they
 * are inconsistent, -ENODEV without PCI access, -ENOMEM.
 */
int intel_iio_read_stackmap(const struct hw_env *env, unsigned int family, unsigned int model,
                            struct iio_stackmap *map, char *why, size_t whylen);

struct intel_iio;        /* everything found */
struct intel_iio_socket; /* one socket's collector */

/*
 * intel_iio_discover - find the uncore_iio_free_running_* PMUs, their
 * sockets, events, scales and stack mappings (@topo: the PCI tree, for
 * Root Ports and their links; may be NULL). Logs through the env what it
 * could not map and why. Returns 0 with *@out NULL when there is no such
 * PMU, 0 with a result, -ENOMEM, or -EBADMSG when every PMU found was
 * unusable (each one logged).
 */
int intel_iio_discover(const struct hw_env *env, const struct pcie_topo *topo,
                       const struct intel_iio_opts *opts, struct intel_iio **out);
void intel_iio_free(struct intel_iio *iio);

size_t intel_iio_socket_count(const struct intel_iio *iio);
struct intel_iio_socket *intel_iio_socket_at(struct intel_iio *iio, size_t i);

/* Stacks over all sockets, and how many of them are mapped to a root bus. */
size_t intel_iio_stack_count(const struct intel_iio *iio);
size_t intel_iio_mapped_count(const struct intel_iio *iio);

/* "iio-socket0" */
const char *intel_iio_socket_name(const struct intel_iio_socket *s);
unsigned int intel_iio_socket_id(const struct intel_iio_socket *s);
size_t intel_iio_socket_stacks(const struct intel_iio_socket *s);

/*
 * intel_iio_socket_start - open and enable every stack's events on the
 * socket's CPU. On failure everything is closed, the reason and what to do
 * are logged once, and the perf_event_open errno is returned.
 */
int intel_iio_socket_start(struct intel_iio_socket *s, double now);

/*
 * intel_iio_socket_tick - read every stack at @now (monotonic seconds) and
 * append the socket's samples to @out: bytes/s per part since the previous
 * tick (nothing on the first), utilisation of mapped ports, raw counts.
 * Returns 0 or the first read error (other stacks are still read).
 */
int intel_iio_socket_tick(struct intel_iio_socket *s, double now, struct sample_set *out);

void intel_iio_socket_stop(struct intel_iio_socket *s);

/* CPU seconds spent in start/tick (thread CPU time). */
double intel_iio_socket_cpu_seconds(const struct intel_iio_socket *s);

#endif /* PCIESCOPE_INTEL_IIO_H */
