/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_traffic.c - workload to TLP streams. See sim_traffic.h.
 */
#include "sim_traffic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcie_link.h"

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

double sim_traffic_carried_scale(const struct sim_workload *w, double scale)
{
        return w->scale_cap > 0 && scale > w->scale_cap ? w->scale_cap : scale;
}

static double carried(const struct sim_workload *w, double scale, bool offered)
{
        return offered ? scale : sim_traffic_carried_scale(w, scale);
}

static double integral(const struct sim_workload *w, double t0, double t1, bool offered)
{
        double cycle = 0, total = 0, full = 0;

        if (t1 <= t0)
                return 0;
        if (!w || w->phase_count == 0)
                return (t1 - t0) * (w ? carried(w, 1, offered) : 1);
        for (size_t i = 0; i < w->phase_count; i++) {
                cycle += w->phases[i].duration;
                full += w->phases[i].duration * carried(w, w->phases[i].scale, offered);
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

                total += take * carried(w, w->phases[i].scale, offered);
                left -= take;
                start = 0;
        }
        return total;
}

double sim_traffic_integral(const struct sim_workload *w, double t0, double t1)
{
        return integral(w, t0, t1, false);
}

double sim_traffic_offered_integral(const struct sim_workload *w, double t0, double t1)
{
        return integral(w, t0, t1, true);
}

/* ---- back-pressure ---- */

/* Bytes per second (at scale 1) device @d puts on the wire towards the
 * host (@dir 0) or towards the device (1): payload, header, and the
 * framing and LCRC every TLP adds. */
static double wire_rate(const struct sim_device *d, int dir)
{
        static const enum sim_tlp_class classes[2][3] = {{SIM_RX_MWR, SIM_RX_MRD, SIM_RX_CPL},
                                                         {SIM_TX_MWR, SIM_TX_MRD, SIM_TX_CPL}};
        double bytes = 0;

        for (int k = 0; k < 3; k++) {
                struct sim_tlp_rates r;

                sim_traffic_workload_rates(d, &d->workload, d->has_workload, classes[dir][k], &r);
                bytes += r.payload_dw * 4 + r.header_dw * 4 + r.tlps * PCIE_TLP_FRAMING_BYTES;
        }
        return bytes;
}

double sim_traffic_peak_scale(const struct sim_workload *w)
{
        double peak = w->phase_count ? 0 : 1;

        for (size_t i = 0; i < w->phase_count; i++)
                if (w->phases[i].scale > peak)
                        peak = w->phases[i].scale;
        return peak;
}

static bool below(const struct sim_machine *m, size_t dev, size_t port)
{
        for (size_t p = m->devices[dev].parent; p != SIM_NONE; p = m->devices[p].parent)
                if (p == port)
                        return true;
        return false;
}

void sim_traffic_backpressure(struct sim_machine *m)
{
        double *peak = calloc(m->device_count ? m->device_count : 1, sizeof(*peak));
        double(*wire)[2] = calloc(m->device_count ? m->device_count : 1, sizeof(*wire));

        if (!peak || !wire) {
                free(peak);
                free(wire);
                return;
        }
        for (size_t i = 0; i < m->device_count; i++) {
                struct sim_device *d = &m->devices[i];

                d->workload.scale_cap = 0;
                if (!d->has_workload)
                        continue;
                peak[i] = sim_traffic_peak_scale(&d->workload);
                wire[i][0] = wire_rate(d, 0);
                wire[i][1] = wire_rate(d, 1);
        }
        /* Parents come before their children: backwards, every link (the
         * one below a port) is settled after the links below it, with the
         * traffic they let through. Every device sharing it is assumed at
         * its peak, so no link is ever asked for more than it carries. */
        for (size_t port = m->device_count; port-- > 0;) {
                const struct sim_device *p = &m->devices[port];
                double cap = (double)pcie_link_capacity_bytes(p->cur_speed, p->cur_width);
                double ask[2] = {0, 0}, f[2];

                if ((p->kind != SIM_ROOT_PORT && p->kind != SIM_SWITCH_DOWN) || !(cap > 0))
                        continue;
                for (size_t i = port + 1; i < m->device_count; i++)
                        if (peak[i] > 0 && below(m, i, port))
                                for (int dir = 0; dir < 2; dir++)
                                        ask[dir] += wire[i][dir] * peak[i];
                for (int dir = 0; dir < 2; dir++)
                        f[dir] = ask[dir] > cap ? cap / ask[dir] : 1;
                if (f[0] >= 1 && f[1] >= 1)
                        continue;
                for (size_t i = port + 1; i < m->device_count; i++) {
                        double fi = 1;

                        if (!(peak[i] > 0) || !below(m, i, port))
                                continue;
                        for (int dir = 0; dir < 2; dir++)
                                if (wire[i][dir] > 0 && f[dir] < fi)
                                        fi = f[dir];
                        peak[i] *= fi;
                }
        }
        for (size_t i = 0; i < m->device_count; i++) {
                struct sim_workload *w = &m->devices[i].workload;

                if (m->devices[i].has_workload && peak[i] < sim_traffic_peak_scale(w))
                        w->scale_cap = peak[i] > 0 ? peak[i] : 1e-300;
        }
        free(peak);
        free(wire);
}

double sim_traffic_carried_share(const struct sim_workload *w)
{
        double peak = sim_traffic_peak_scale(w);

        return w->scale_cap > 0 && peak > w->scale_cap ? w->scale_cap / peak : 1;
}
