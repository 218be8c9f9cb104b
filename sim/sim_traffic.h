/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_traffic.h - the TLPs a simulated device's workload puts on its link.
 *
 * A workload says what a device does in application terms (DMA writes of
 * 4 KiB at 3 GB/s, doorbell writes of 8 bytes...). This module turns it
 * into TLP streams as the Root Port sees them, per TLP class (inbound and
 * outbound MWr, MRd, CplD): TLPs per second, payload and header DW per
 * second, latency per second, and how much of it falls below each power of
 * two TLP length (the hisi_pcie threshold filter). Requests are split by
 * the device's MPS (writes, completions) and MRRS (read requests), which is
 * what makes a small MPS cost bandwidth in the model as on hardware.
 *
 * The workload's phases scale all rates over time; sim_traffic_integral()
 * gives the exact integral of the scale over an interval, so counts over
 * real elapsed time are exact, not sampled.
 */
#ifndef PCIESCOPE_SIM_TRAFFIC_H
#define PCIESCOPE_SIM_TRAFFIC_H

#include "sim_machine.h"

/* TLP classes as the hisi_pcie PMU names them (rx = towards the host). */
enum sim_tlp_class {
        SIM_RX_MWR,
        SIM_RX_MRD,
        SIM_RX_CPL,
        SIM_TX_MWR,
        SIM_TX_MRD,
        SIM_TX_CPL,
        SIM_TLP_CLASSES,
};
/* "rx_mwr", ... */
const char *sim_tlp_class_name(enum sim_tlp_class c);

#define SIM_LEN_BUCKETS 11 /* thresholds 2^0 .. 2^10 DW */

/* Per second at workload scale 1. */
struct sim_tlp_rates {
        double tlps;
        double payload_dw;
        double header_dw;
        double latency_ns; /* sum of per-TLP latencies (latency classes only) */
        /* TLPs and payload DW of TLPs whose Length field is < 2^n DW. */
        double tlps_below[SIM_LEN_BUCKETS];
        double payload_below[SIM_LEN_BUCKETS];
        /* Whether the requester of this class is the device itself (DMA)
         * rather than the host (so a `bdf` filter on the device sees it). */
        bool device_is_requester;
};

/* Header size in DW of a TLP of class @c (64-bit addressing). */
unsigned int sim_tlp_header_dw(enum sim_tlp_class c);

/* Rates of class @c for device @dev (all zero when it has no workload). */
void sim_traffic_rates(const struct sim_machine *m, size_t dev, enum sim_tlp_class c,
                       struct sim_tlp_rates *out);

/* The same for workload @w on device @d (its MPS and MRRS cut the
 * requests); all zero unless @active. The calibration load of a
 * simulated machine (sim_load.h) is such a workload. */
void sim_traffic_workload_rates(const struct sim_device *d, const struct sim_workload *w,
                                bool active, enum sim_tlp_class c, struct sim_tlp_rates *out);

/* Integral of the device's phase scale over [t0, t1] seconds since start
 * (t1 - t0 for a workload without phases), each phase at most the
 * workload's scale_cap: what the links carried. Pure, exact. */
double sim_traffic_integral(const struct sim_workload *w, double t0, double t1);
/* The same without the cap: what the workload asked for. */
double sim_traffic_offered_integral(const struct sim_workload *w, double t0, double t1);

/*
 * sim_traffic_backpressure - sets every workload's scale_cap so that no
 * link direction carries more than its raw capacity (speed × width after
 * encoding) counting every TLP's payload, header, sequence/framing and LCRC
 * (PCIE_TLP_FRAMING_BYTES) at the TLP sizes the device's MPS and MRRS
 * give: a link's flow control makes the devices wait, so a workload that
 * asks more is carried at the most the links take, as on hardware. Links
 * are settled from the leaves up; the devices sharing one (below a switch)
 * are slowed by one factor, reckoned with all of them at their peak phase
 * scale, and a device's flows all together (its reads wait with its
 * writes). The loader calls it; DLLPs are not modelled.
 */
void sim_traffic_backpressure(struct sim_machine *m);

/* The highest phase scale a workload asks (1 without phases), and
 * @scale as its links carry it (at most scale_cap). */
double sim_traffic_peak_scale(const struct sim_workload *w);
double sim_traffic_carried_scale(const struct sim_workload *w, double scale);

/* The share of its peak a workload is carried at: 1, or scale_cap / the
 * highest phase scale when its links hold it back. */
double sim_traffic_carried_share(const struct sim_workload *w);

#endif /* PCIESCOPE_SIM_TRAFFIC_H */
