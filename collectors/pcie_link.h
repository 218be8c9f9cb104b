/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_link.h - link speed encodings, raw capacity and downtraining.
 *
 * Pure functions over struct pcie_link_regs (see pcie_cfg.h).
 */
#ifndef PCIESCOPE_PCIE_LINK_H
#define PCIESCOPE_PCIE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcie_cfg.h"
#include "sample.h"

#define PCIE_SPEED_CODE_MAX 7 /* 1..6 defined, 7 = 128 GT/s (proposed) */

/* GT/s for a speed code (1 = 2.5 ... 6 = 64); 0.0 for reserved codes. */
double pcie_speed_gts(unsigned int code);

/*
 * pcie_speed_code_parse - the speed code of a sysfs link speed text, as
 * the kernel writes current_link_speed and max_link_speed: "16.0 GT/s PCIe"
 * (5.7 and later), "8 GT/s", "2.5 GT/s" (older), "Unknown" (code 0: link
 * down). A trailing newline is fine. Returns 0, or -EINVAL for anything
 * else.
 */
int pcie_speed_code_parse(const char *text, uint8_t *code);

/*
 * Raw usable bandwidth of one direction of a link, in bytes per second,
 * after line encoding: 8b/10b for 2.5 and 5 GT/s, 128b/130b for 8 to 32 GT/s,
 * and 1:1 for 64 GT/s FLIT mode (as the kernel counts it; FEC/CRC overhead
 * inside flits is ignored). 0 for a reserved code or a zero width.
 */
uint64_t pcie_link_capacity_bytes(unsigned int speed_code, unsigned int width);

/*
 * The supported-speeds vector (bit N set = speed code N supported): LNKCAP2's
 * vector where the device has one, otherwise every speed from 2.5 GT/s up to
 * LNKCAP's max speed (pre-3.0 devices support all lower speeds).
 */
uint8_t pcie_link_speed_vector(const struct pcie_link_regs *regs);

/* Highest speed code set in a vector, 0 if none. */
unsigned int pcie_speed_vector_max(uint8_t vector);

/* Link trained: a known current speed and a non-zero width. */
bool pcie_link_is_up(const struct pcie_link_regs *regs);

/* The best the two ends of a link can both do. @partner may be NULL, then
 * only @self's capabilities count. */
struct pcie_link_common {
        unsigned int speed_code;
        unsigned int width;
};
struct pcie_link_common pcie_link_common_max(const struct pcie_link_regs *self,
                                             const struct pcie_link_regs *partner);

/* Up, and running slower or narrower than both ends support. */
bool pcie_link_is_downtrained(const struct pcie_link_regs *self,
                              const struct pcie_link_regs *partner);

/*
 * TLP payload efficiency: payload / (payload + per-TLP overhead). The
 * overhead is PCIE_TLP_OVERHEAD_BYTES: a 4DW header (16), sequence number and
 * framing (4 at 8 GT/s and up: STP token; 1+2+1 at 2.5/5 GT/s) and LCRC (4),
 * no ECRC, no prefixes. DLLP traffic (ACKs, flow control) is not counted.
 */
#define PCIE_TLP_OVERHEAD_BYTES 24
double pcie_payload_efficiency(unsigned int payload_bytes);

/* The parts of that overhead: a memory request's 4DW header, a
 * completion's 3DW header, and what every TLP adds on the wire besides
 * its header (sequence number and framing, 4; LCRC, 4). */
#define PCIE_TLP_REQUEST_HEADER_BYTES    16
#define PCIE_TLP_COMPLETION_HEADER_BYTES 12
#define PCIE_TLP_FRAMING_BYTES           (PCIE_TLP_OVERHEAD_BYTES - PCIE_TLP_REQUEST_HEADER_BYTES)

/*
 * Utilisation of one direction of a link: the one definition every source
 * (hisi_pcie, Intel IIO, ...) uses, so that the ratios of all vendors mean
 * the same. A source adds each counter's rate with what the counter counts
 * of a TLP; then
 *
 *   raw       = the bytes the counters count / the raw capacity (speed ×
 *               width after encoding): never above 1, since no counter
 *               counts framing and LCRC;
 *   effective = payload / what the link carries of payload at MPS-sized
 *               TLPs, per kind of TLP: Σ payload_i × (MPS + header_i +
 *               framing) / MPS / raw capacity, i.e. each kind's payload
 *               against raw × MPS / (MPS + its per-TLP overhead: 24 bytes
 *               for a 4DW request, 20 for a completion). 1 is a link full
 *               of MPS-sized TLPs; smaller TLPs fill it below 1.
 *
 * The payload of a counter that counts headers too is its count less the
 * headers of the TLPs counted, where a TLP count is known; where it is not,
 * the most payload those bytes can hold (every TLP MPS-sized): an upper
 * bound, so effective may read high for small TLPs but stays at most 1 on
 * a saturated link. A counter that counts headers only leaves the payload
 * unknown (effective then NaN).
 */
enum pcie_counts {
        PCIE_COUNTS_PAYLOAD,        /* data only */
        PCIE_COUNTS_HEADER,         /* headers only */
        PCIE_COUNTS_HEADER_PAYLOAD, /* header and data of each TLP */
};

struct pcie_util {
        double capacity;  /* raw bytes/s of the direction */
        unsigned int mps; /* largest TLP payload the link carries, 0: unknown */
        double counted;   /* bytes/s the counters counted */
        double wire;      /* payload bytes/s weighted by (MPS + overhead) / MPS */
        bool payload_unknown;
};

void pcie_util_init(struct pcie_util *u, uint64_t capacity, unsigned int mps);

/*
 * pcie_payload_bytes - the payload in @counted bytes (per second, or in
 * all) of a counter that counts @what, of TLPs with headers of
 * @header_bytes that carry data (@data: MWr, CplD) or not (MRd), @tlps of
 * them (negative: not counted), at most @mps bytes each (0: unknown).
 * NaN when it cannot be known (headers only, of TLPs with data).
 */
double pcie_payload_bytes(enum pcie_counts what, double counted, bool data,
                          unsigned int header_bytes, double tlps, unsigned int mps);

/* Adds one counter's rate (arguments as pcie_payload_bytes). */
void pcie_util_add(struct pcie_util *u, enum pcie_counts what, double counted, bool data,
                   unsigned int header_bytes, double tlps);

/* The two ratios; effective is NaN when a payload was unknown. -EINVAL
 * (both NaN) without a capacity. */
int pcie_util_ratios(const struct pcie_util *u, double *raw, double *effective);

/*
 * pcie_util_emit - the ratios as pcie_port_utilization_ratio samples: @s
 * (of that family, with every label but capacity) goes out with
 * capacity="raw", then with capacity="effective" unless the payload is
 * unknown. -EINVAL, nothing emitted, without a capacity; else 0 or
 * sample_emit's failure.
 */
int pcie_util_emit(const struct pcie_util *u, struct pcie_sample *s, struct sample_emitter *em);

/*
 * Tracks link state across samples to count changes of speed or width
 * (flaps, retrains, downtraining at run time).
 */
struct pcie_link_tracker {
        bool seen;
        uint8_t speed_code;
        uint8_t width;
        uint64_t changes;
};
/* Returns true if this sample differs from the previous one. */
bool pcie_link_tracker_update(struct pcie_link_tracker *t, const struct pcie_link_regs *regs);

#endif /* PCIESCOPE_PCIE_LINK_H */
