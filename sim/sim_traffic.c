/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_traffic.c - workload to TLP streams. See sim_traffic.h.
 */
#include "sim_traffic.h"

#include <math.h>
#include <string.h>

const char *sim_tlp_class_name(enum sim_tlp_class c)
{
        static const char *const names[SIM_TLP_CLASSES] = {
            [SIM_RX_MWR] = "rx_mwr", [SIM_RX_MRD] = "rx_mrd", [SIM_RX_CPL] = "rx_cpl",
            [SIM_TX_MWR] = "tx_mwr", [SIM_TX_MRD] = "tx_mrd", [SIM_TX_CPL] = "tx_cpl",
        };
        return (unsigned int)c < SIM_TLP_CLASSES ? names[c] : "?";
}

unsigned int sim_tlp_header_dw(enum sim_tlp_class c)
{
        /* Memory requests with 64-bit addresses carry a 4 DW header,
         * completions a 3 DW one. */
        return c == SIM_RX_CPL || c == SIM_TX_CPL ? 3 : 4;
}

/*
 * Adds @req_per_s requests of @bytes each, split into TLPs of at most
 * @chunk bytes. @payload: whether the TLPs carry the data (MWr, CplD) or only
 * ask for it (MRd, whose Length field still says how much). @latency_ns:
 * mean latency per TLP, 0 for classes without one.
 */
static void add_split(struct sim_tlp_rates *r, double req_per_s, double bytes, unsigned int chunk,
                      bool payload, double latency_ns)
{
        double left = bytes;

        if (req_per_s <= 0 || bytes <= 0 || chunk == 0)
                return;
        while (left > 0) {
                double part = left > chunk ? chunk : left;
                double len_dw = ceil(part / 4);

                r->tlps += req_per_s;
                r->latency_ns += req_per_s * latency_ns;
                if (payload)
                        r->payload_dw += req_per_s * len_dw;
                for (unsigned int n = 0; n < SIM_LEN_BUCKETS; n++) {
                        if (len_dw < (double)(1u << n)) {
                                r->tlps_below[n] += req_per_s;
                                if (payload)
                                        r->payload_below[n] += req_per_s * len_dw;
                        }
                }
                left -= part;
        }
}

/*
 * The flow feeding class @c, and how its requests are cut: @chunk is the
 * largest TLP, @payload whether this class carries the bytes, @latency
 * whether this class is where the flow's latency is measured.
 */
static const struct sim_flow *flow_for(const struct sim_device *d, const struct sim_workload *w,
                                       enum sim_tlp_class c, unsigned int *chunk, bool *payload,
                                       bool *latency, bool *device_requester)
{
        enum sim_flow_kind kind;

        *payload = true;
        *latency = false;
        *chunk = d->mps;
        switch (c) {
        case SIM_RX_MWR: /* DMA write data */
                kind = SIM_DMA_WRITE;
                *latency = true;
                *device_requester = true;
                break;
        case SIM_RX_MRD: /* DMA read requests, cut by MRRS */
                kind = SIM_DMA_READ;
                *chunk = d->mrrs;
                *payload = false;
                *latency = true;
                *device_requester = true;
                break;
        case SIM_TX_CPL: /* data returned for DMA reads: the device is the requester */
                kind = SIM_DMA_READ;
                *device_requester = true;
                break;
        case SIM_TX_MWR: /* CPU writes to BARs */
                kind = SIM_MMIO_WRITE;
                *device_requester = false;
                break;
        case SIM_TX_MRD: /* CPU reads of BARs */
                kind = SIM_MMIO_READ;
                *chunk = d->mrrs;
                *payload = false;
                *latency = true;
                *device_requester = false;
                break;
        case SIM_RX_CPL: /* the device's answers to CPU reads */
                kind = SIM_MMIO_READ;
                *device_requester = false;
                break;
        default:
                return NULL;
        }
        return &w->flow[kind];
}

void sim_traffic_rates(const struct sim_machine *m, size_t dev, enum sim_tlp_class c,
                       struct sim_tlp_rates *out)
{
        memset(out, 0, sizeof(*out));
        if (dev >= m->device_count)
                return;
        sim_traffic_workload_rates(&m->devices[dev], &m->devices[dev].workload,
                                   m->devices[dev].has_workload, c, out);
}

void sim_traffic_workload_rates(const struct sim_device *d, const struct sim_workload *w,
                                bool active, enum sim_tlp_class c, struct sim_tlp_rates *out)
{
        const struct sim_flow *f;
        unsigned int chunk;
        bool payload, latency, requester = false;
        double mean_size, weights = 0, lat;

        memset(out, 0, sizeof(*out));
        f = flow_for(d, w, c, &chunk, &payload, &latency, &requester);
        out->device_is_requester = requester;
        if (!f || !active || f->bytes_per_second <= 0 || f->size.count == 0)
                return;
        mean_size = sim_dist_mean(&f->size);
        if (mean_size <= 0)
                return;
        for (size_t i = 0; i < f->size.count; i++)
                weights += f->size.weight[i];
        lat = latency && f->latency.count ? sim_dist_mean(&f->latency) : 0;
        /* Requests per second so that the data rate is bytes_per_second. */
        for (size_t i = 0; i < f->size.count; i++) {
                double req = f->bytes_per_second / mean_size * f->size.weight[i] / weights;

                add_split(out, req, f->size.value[i], chunk, payload, lat);
        }
        out->header_dw = out->tlps * sim_tlp_header_dw(c);
}

double sim_traffic_integral(const struct sim_workload *w, double t0, double t1)
{
        double cycle = 0, total = 0, full = 0;

        if (t1 <= t0)
                return 0;
        if (!w || w->phase_count == 0)
                return t1 - t0;
        for (size_t i = 0; i < w->phase_count; i++) {
                cycle += w->phases[i].duration;
                full += w->phases[i].duration * w->phases[i].scale;
        }
        if (cycle <= 0)
                return t1 - t0;

        /* Whole cycles first, then walk the phases over the remainder. */
        double cycles = floor((t1 - t0) / cycle);
        double start = fmod(t0, cycle);
        double left = (t1 - t0) - cycles * cycle;

        total = cycles * full;
        if (start < 0)
                start += cycle;
        /* The remainder is shorter than a cycle, so two passes over the
         * phases always cover it; the bound guards against rounding. */
        for (size_t i = 0, steps = 0; left > 0 && steps < 2 * w->phase_count + 2;
             i = (i + 1) % w->phase_count, steps++) {
                double dur = w->phases[i].duration;

                if (start >= dur) { /* before the interval starts */
                        start -= dur;
                        continue;
                }
                double take = dur - start < left ? dur - start : left;

                total += take * w->phases[i].scale;
                left -= take;
                start = 0;
        }
        return total;
}
