// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_nvidia_pcie.c - simulated NVIDIA Grace PCIe PMUs behind the perf ops.
 * See sim_nvidia_pcie.h for the model.
 *
 * As in the IIO model, a counter is a pure function of time: what the
 * devices below the selected Root Ports moved since the model started,
 * integrated exactly from the workload phases and truncated. An event
 * remembers the counter at its last update and adds the difference while
 * it counts (itself and its leader enabled).
 */
#define _GNU_SOURCE
#include "sim_nvidia_pcie.h"
#include "sim_pmu_core.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "sim_events.h"
#include "sim_traffic.h"

#define MAX_EVENTS  1024
#define EV_CYCLES   (1ULL << 32)
#define EV_LAST     0xdu
#define FILTER_MASK ((1u << SIM_NV_PORT_BITS) - 1)
#define EVENT_MASK  ((1ULL << 33) - 1) /* event = config:0-32 */

enum nv_quantity {
        NV_RD_BYTES,
        NV_WR_BYTES,
        NV_TOTAL_BYTES,
        NV_RD_REQ,
        NV_WR_REQ,
        NV_TOTAL_REQ,
        NV_RD_CUM_OUTS
};

struct nv_event {
        struct sim_pmu_event e;
        size_t socket;
        bool cycles;
        unsigned int id, filter; /* event id (0..0xd known), root_port bits in effect */
        double retired;          /* counts of calibration loads dropped from the list */
        uint64_t value, base;
        double time_s;
};

/* A calibration load: DMA writes of @rate bytes/s in MPS-sized TLPs
 * through device @dev between t0 and t1. */
struct nv_load {
        size_t dev;
        double t0, t1, rate, tlp_bytes;
};
#define MAX_LOADS 32

struct sim_nvpcie {
        struct sim_pmu_core core;
        const struct sim_machine *m;
        double last;
        size_t load_count;
        struct nv_load loads[MAX_LOADS];
};

#define ev_at(p, slot) SIM_PMU_EVENT_AT(&(p)->core, slot, struct nv_event)

double sim_nvpcie_now(struct sim_nvpcie *p)
{
        return sim_pmu_core_now(&p->core);
}

/* ---- ground truth ---- */

/* @q per second of device @dev at workload scale 1 (both memories). */
static double device_quantity(const struct sim_machine *m, size_t dev, enum nv_quantity q,
                              double cycles_hz)
{
        struct sim_tlp_rates rd, rd_data, wr;

        if (!m->devices[dev].has_workload)
                return 0;
        sim_traffic_rates(m, dev, SIM_RX_MRD, &rd);
        sim_traffic_rates(m, dev, SIM_TX_CPL, &rd_data);
        sim_traffic_rates(m, dev, SIM_RX_MWR, &wr);
        switch (q) {
        case NV_RD_BYTES:
                return rd_data.payload_dw * 4;
        case NV_WR_BYTES:
                return wr.payload_dw * 4;
        case NV_TOTAL_BYTES:
                return (rd_data.payload_dw + wr.payload_dw) * 4;
        case NV_RD_REQ:
                return rd.tlps;
        case NV_WR_REQ:
                return wr.tlps;
        case NV_TOTAL_REQ:
                return rd.tlps + wr.tlps;
        case NV_RD_CUM_OUTS:
                /* Σ latency of the reads per second = mean outstanding
                 * reads; summed every cycle. */
                return rd.latency_ns * 1e-9 * cycles_hz;
        }
        return 0;
}

/* Whether device @dev is below Root Port @port. */
static bool below(const struct sim_machine *m, size_t dev, size_t port)
{
        return dev != port && m->devices[dev].has_workload && sim_machine_root_port(m, dev) == port;
}

void sim_truth_nv_port(const struct sim_nvpcie *p, size_t socket, size_t port, double t0, double t1,
                       struct sim_nv_truth *out)
{
        const struct sim_machine *m = p->m;
        double outs = 0;
        size_t rp;

        memset(out, 0, sizeof(*out));
        if (socket >= m->nvidia.socket_count || port >= m->nvidia.sockets[socket].port_count)
                return;
        rp = m->nvidia.sockets[socket].ports[port];
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double x;

                if (!below(m, dev, rp))
                        continue;
                x = sim_device_traffic_integral(m, dev, t0, t1);
                out->rd_bytes += device_quantity(m, dev, NV_RD_BYTES, 1) * x;
                out->wr_bytes += device_quantity(m, dev, NV_WR_BYTES, 1) * x;
                out->rd_req += device_quantity(m, dev, NV_RD_REQ, 1) * x;
                out->wr_req += device_quantity(m, dev, NV_WR_REQ, 1) * x;
                outs += device_quantity(m, dev, NV_RD_CUM_OUTS, 1) * x; /* seconds */
        }
        out->rd_latency_s = out->rd_req > 0 ? outs / out->rd_req : 0;
}

/* ---- counters ---- */

/* Bit of the Root Port above @dev on socket @s, or -1. */
static int bit_of(const struct sim_machine *m, const struct sim_nv_socket *s, size_t dev)
{
        size_t rp = sim_machine_root_port(m, dev);

        for (size_t k = 0; k < s->port_count; k++)
                if (s->ports[k] == rp && rp != dev)
                        return (int)s->bits[k];
        return -1;
}

/* What load @l adds to @e up to @t: it is DMA writes. */
static double load_at(const struct sim_nvpcie *p, const struct nv_event *e, const struct nv_load *l,
                      double t)
{
        const struct sim_nv_socket *s = &p->m->nvidia.sockets[e->socket];
        bool bytes = e->id == 2 || e->id == 3 || e->id == 4 || e->id == 5;
        bool reqs = e->id == 8 || e->id == 9 || e->id == 0xa || e->id == 0xb;
        int bit = bit_of(p->m, s, l->dev);
        double span = (t < l->t1 ? t : l->t1) - l->t0;

        if ((!bytes && !reqs) || bit < 0 || !(e->filter & 1u << bit) || span <= 0)
                return 0;
        return l->rate * span / (bytes ? 1 : l->tlp_bytes) *
               (e->id & 1 ? s->remote_share : 1 - s->remote_share);
}

static double loads_at(const struct sim_nvpcie *p, const struct nv_event *e, double t)
{
        double x = e->retired;

        for (size_t i = 0; i < p->load_count; i++)
                x += load_at(p, e, &p->loads[i], t);
        return x;
}

static uint64_t counter_at(const struct sim_nvpcie *p, const struct nv_event *e, double t)
{
        double x = 0;

        if (t <= 0)
                return 0;
        if (e->cycles) {
                x = t * p->m->nvidia.cycles_hz;
        } else {
                for (size_t i = 0; i < e->e.contrib_count; i++)
                        x += e->e.contrib[i].per_second *
                             sim_device_traffic_integral(p->m, e->e.contrib[i].dev, 0, t);
                x += loads_at(p, e, t);
        }
        return x <= 0 ? 0 : (uint64_t)floor(x);
}

static void update(struct sim_pmu_core *c)
{
        struct sim_nvpcie *p = c->owner;
        double now = sim_nvpcie_now(p);
        double dt = now > p->last ? now - p->last : 0;

        for (size_t i = 0; i < c->used_max; i++) {
                struct nv_event *e = ev_at(p, i);
                uint64_t v;

                if (!e->e.used)
                        continue;
                v = counter_at(p, e, now);
                if (sim_pmu_core_counting(c, &e->e)) {
                        e->value += v > e->base ? v - e->base : 0;
                        e->time_s += dt;
                }
                e->base = v;
        }
        if (now > p->last)
                p->last = now;
}

/* The contributions of an event of @id with root_port @filter. */
static int build_contrib(struct sim_nvpcie *p, struct nv_event *e, unsigned int id,
                         unsigned int filter)
{
        static const enum nv_quantity quantity[] = {
            NV_RD_BYTES,    NV_RD_BYTES,  NV_WR_BYTES,    NV_WR_BYTES,    NV_TOTAL_BYTES,
            NV_TOTAL_BYTES, NV_RD_REQ,    NV_RD_REQ,      NV_WR_REQ,      NV_WR_REQ,
            NV_TOTAL_REQ,   NV_TOTAL_REQ, NV_RD_CUM_OUTS, NV_RD_CUM_OUTS,
        };
        const struct sim_machine *m = p->m;
        const struct sim_nv_socket *s = &m->nvidia.sockets[e->socket];
        double share;

        e->e.contrib_count = 0;
        if (e->cycles || id > EV_LAST)
                return 0; /* an unknown event id counts nothing */
        share = id & 1 ? s->remote_share : 1 - s->remote_share;
        e->e.contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->e.contrib));
        if (!e->e.contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                for (size_t k = 0; k < s->port_count; k++) {
                        double rate;

                        if (!(filter & 1u << s->bits[k]) || !below(m, dev, s->ports[k]))
                                continue;
                        rate = device_quantity(m, dev, quantity[id], m->nvidia.cycles_hz) * share;
                        if (rate > 0)
                                e->e.contrib[e->e.contrib_count++] =
                                    (struct sim_contrib){dev, rate};
                }
        }
        return 0;
}

static size_t socket_of_type(const struct sim_machine *m, uint32_t type)
{
        if (type < SIM_NV_TYPE_BASE || type - SIM_NV_TYPE_BASE >= m->nvidia.socket_count)
                return SIZE_MAX;
        return type - SIM_NV_TYPE_BASE;
}

static int nv_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                         int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        struct sim_nvpcie *p = c->owner;
        const struct sim_machine *m = p->m;
        struct nv_event *e = (struct nv_event *)ev;
        const struct sim_nv_socket *s;
        uint64_t id = attr->config & EVENT_MASK;
        unsigned int filter = (unsigned int)(attr->config1 & FILTER_MASK);
        int err;

        (void)slot;
        e->socket = socket_of_type(m, attr->type);
        if (e->socket == SIZE_MAX)
                return -ENOENT;
        s = &m->nvidia.sockets[e->socket];
        if (sim_pmu_core_fault(c, e->socket, &err))
                return -err;
        if (attr->sample_period || attr->freq)
                return -EOPNOTSUPP; /* "Sampling not supported" */
        if (pid != -1 || cpu < 0)
                return -EINVAL; /* "Per-task mode not supported" */
        if ((unsigned int)cpu < s->first_cpu || (unsigned int)cpu >= s->first_cpu + s->cpu_count)
                return -EINVAL; /* not one of associated_cpus */
        if (sim_attr_excludes(attr))
                return -EINVAL;
        e->cycles = id == EV_CYCLES;
        /* Linux 6.14 made a zero filter select every port; before, the
         * filter went to the hardware as given and 0 counted nothing. */
        if (!filter && m->kernel >= SIM_KERNEL_6_15)
                filter = FILTER_MASK;
        e->id = e->cycles || id > EV_LAST ? UINT32_MAX : (unsigned int)id;
        e->filter = filter;
        return 0; /* contributions once it has its slot (start): a refused open frees nothing */
}

/* Counters the group of @leader uses, by kind. */
static void group_use(struct sim_pmu_core *c, size_t leader, unsigned int *events,
                      unsigned int *cycles)
{
        struct sim_nvpcie *p = c->owner;

        *events = *cycles = 0;
        for (size_t i = 0; i < c->used_max; i++) {
                const struct nv_event *e = ev_at(p, i);

                if (!e->e.used || e->e.leader != leader)
                        continue;
                if (e->cycles)
                        (*cycles)++;
                else
                        (*events)++;
        }
}

/* arm_cspmu_validate_group: one PMU, and the group fits the counters (the
 * cycle counter takes `cycles`, every other event a general counter). */
static bool nv_can_join(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                        const struct sim_pmu_event *ev)
{
        const struct nv_event *l = (const struct nv_event *)leader;
        const struct nv_event *e = (const struct nv_event *)ev;
        unsigned int events, cycles;

        if (l->socket != e->socket)
                return false;
        group_use(c, leader->leader, &events, &cycles);
        if (e->cycles)
                return cycles == 0 ||
                       events + cycles < ((struct sim_nvpcie *)c->owner)->m->nvidia.counters;
        return events + (cycles > 1 ? cycles - 1 : 0) <
               ((struct sim_nvpcie *)c->owner)->m->nvidia.counters;
}

static int nv_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot)
{
        struct sim_nvpcie *p = c->owner;
        struct nv_event *e = (struct nv_event *)ev;

        int ret;

        (void)slot;
        ret = build_contrib(p, e, e->id, e->filter);
        if (!ret)
                e->base = counter_at(p, e, p->last);
        return ret;
}

static uint64_t ns_of(double s)
{
        return s <= 0 ? 0 : (uint64_t)floor(s * 1e9);
}

static void nv_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                      struct sim_pmu_report *out)
{
        const struct nv_event *e = (const struct nv_event *)ev;

        (void)c;
        out->value = e->value;
        out->enabled_ns = ns_of(e->time_s);
        out->running_ns = ns_of(e->time_s);
}

static void nv_reset(struct sim_pmu_core *c, struct sim_pmu_event *ev)
{
        (void)c;
        ((struct nv_event *)ev)->value = 0;
}

static const struct sim_pmu_model nv_model = {
    .event_size = sizeof(struct nv_event),
    .event_cap = MAX_EVENTS,
    .fd_base = SIM_NV_FD_BASE,
    .groups = true,
    .foreign_group_fd_min = SIM_FD_BASE,
    .refused_excludes = SIM_EXCLUDE_ALL,
    .advance = update,
    .event_init = nv_event_init,
    .can_join = nv_can_join,
    .start = nv_start,
    .report = nv_report,
    .reset = nv_reset,
};

int sim_nvpcie_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                   struct sim_nvpcie **out)
{
        struct sim_nvpcie *p;

        *out = NULL;
        if (!m || !m->nvidia.present)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->m = m;
        if (sim_pmu_core_init(&p->core, &nv_model, p, clock, clock_ctx, m->nvidia.socket_count)) {
                sim_nvpcie_free(p);
                return -ENOMEM;
        }
        *out = p;
        return 0;
}

void sim_nvpcie_free(struct sim_nvpcie *p)
{
        if (!p)
                return;
        sim_pmu_core_fini(&p->core);
        free(p);
}

const struct perf_ops *sim_nvpcie_ops(struct sim_nvpcie *p)
{
        return &p->core.ops;
}

int sim_nvpcie_add_load(struct sim_nvpcie *p, size_t dev, double bytes, double t0, double t1)
{
        const struct sim_device *d;
        int ret = 0;

        if (dev >= p->m->device_count || !(bytes > 0) || !(t1 > t0))
                return -EINVAL;
        d = &p->m->devices[dev];
        sim_pmu_core_lock(&p->core);
        update(&p->core); /* what came before counts without the load */
        if (p->load_count >= MAX_LOADS) {
                /* Full: a load that has ended makes room (its counts are in
                 * the counters already). */
                size_t oldest = 0;

                for (size_t i = 1; i < p->load_count; i++)
                        if (p->loads[i].t1 < p->loads[oldest].t1)
                                oldest = i;
                if (p->loads[oldest].t1 > p->last) {
                        ret = -EBUSY;
                } else {
                        /* Its counts stay in the counters of the open events. */
                        for (size_t i = 0; i < p->core.used_max; i++) {
                                struct nv_event *e = ev_at(p, i);

                                if (e->e.used)
                                        e->retired += load_at(p, e, &p->loads[oldest], p->last);
                        }
                        p->loads[oldest] = p->loads[--p->load_count];
                }
        }
        if (!ret)
                p->loads[p->load_count++] =
                    (struct nv_load){.dev = dev,
                                     .t0 = t0,
                                     .t1 = t1,
                                     .rate = bytes / (t1 - t0),
                                     .tlp_bytes = d->mps ? (double)d->mps : 256};
        sim_pmu_core_unlock(&p->core);
        return ret;
}

size_t sim_nvpcie_open_count(struct sim_nvpcie *p)
{
        return sim_pmu_core_open_count(&p->core);
}
