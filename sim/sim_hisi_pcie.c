/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_hisi_pcie.c - simulated hisi_pcie PMUs behind the perf ops.
 *
 * Every fake fd is an event with a list of contributions: for each device
 * whose traffic the event's target and filters select, how fast the counter
 * would rise at workload scale 1. Whenever anything changes (an open, an
 * enable, a read...), all events are first advanced to "now": each running
 * event adds its contributions times the exact integral of its device's
 * workload scale, times the share of time it was scheduled. Between two
 * operations nothing changes, so the counts are exact.
 */
#define _GNU_SOURCE
#include "sim_hisi_pcie.h"
#include "sim_pmu_core.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "sim_events.h"

#define MAX_EVENTS   4096
#define EXTENDED_BIT 0x10000u

/* What a hardware event code counts (by code, not by the name a kernel
 * gives it: v5.17 named 0x1005 "rx_mrd_flux" though it counts tx_cpl). */
enum hw_kind { HW_NONE, HW_LATENCY, HW_BANDWIDTH };

struct hw_code {
        uint16_t code;
        enum sim_tlp_class cls;
        enum hw_kind kind;
};

static const struct hw_code hw_codes[] = {
    {0x0010, SIM_RX_MWR, HW_LATENCY},   {0x0210, SIM_RX_MRD, HW_LATENCY},
    {0x0011, SIM_TX_MRD, HW_LATENCY},   {0x0104, SIM_RX_MWR, HW_BANDWIDTH},
    {0x0804, SIM_RX_MRD, HW_BANDWIDTH}, {0x2004, SIM_RX_CPL, HW_BANDWIDTH},
    {0x0105, SIM_TX_MWR, HW_BANDWIDTH}, {0x0405, SIM_TX_MRD, HW_BANDWIDTH},
    {0x1005, SIM_TX_CPL, HW_BANDWIDTH},
};

static const struct hw_code *hw_code_find(uint32_t code)
{
        for (size_t i = 0; i < sizeof(hw_codes) / sizeof(hw_codes[0]); i++)
                if (hw_codes[i].code == (code & 0xffff))
                        return &hw_codes[i];
        return NULL;
}

/* A hisi_pcie event: the core's part, then the counter's. */
struct hp_event {
        struct sim_pmu_event e; /* contributions: counter increase per second at scale 1 */
        size_t core;
        unsigned int generation;   /* the PMU's binding it was opened on */
        uint32_t code;             /* attr.config bits 0-16 */
        uint64_t config1, config2; /* filters */
        double value;
        double enabled_ns, running_ns;
        double fixed_per_second; /* *_time: ticks regardless of traffic */
        size_t slots;            /* leaders: slots the group needs */
        double share;            /* leaders: share of time the group runs */
};

/* A calibration load (sim_pmu_add_load): a workload of DMA writes that
 * runs at full scale between t0 and t1. */
struct load {
        size_t dev;
        double t0, t1;
        struct sim_workload w;
};

struct sim_pmu {
        struct sim_pmu_core core; /* fd table, lock, clock, faults per core */
        const struct sim_machine *m;
        uint32_t type_base;
        double last; /* seconds since t0 of the last advance */
        size_t load_count;
        struct load loads[SIM_PMU_MAX_LOADS];
};

#define ev_at(p, slot) SIM_PMU_EVENT_AT(&(p)->core, slot, struct hp_event)

double sim_pmu_now(struct sim_pmu *p)
{
        return sim_pmu_core_now(&p->core);
}

/* ---- filters (config1/config2 as the format files lay them out) ---- */

static unsigned int thr_len(const struct hp_event *e)
{
        return e->config1 & 0xf;
}
static unsigned int thr_mode(const struct hp_event *e)
{
        return (e->config1 >> 4) & 1;
}
static unsigned int trig_len(const struct hp_event *e)
{
        return (e->config1 >> 5) & 0xf;
}
static unsigned int trig_mode(const struct hp_event *e)
{
        return (e->config1 >> 9) & 1;
}
static unsigned int len_mode_field(const struct hp_event *e)
{
        return (e->config1 >> 10) & 3;
}
static uint16_t port_mask(const struct hp_event *e)
{
        return e->config2 & 0xffff;
}
static uint16_t bdf_filter(const struct hp_event *e)
{
        return (e->config2 >> 16) & 0xffff;
}

/*
 * What the bandwidth counters add up, per kernel: v5.17 had no len_mode
 * and always set bit 34 of the control register (its "INIT_SET"), which is
 * len_mode 1, payload only; v6.2 to v6.11 still set bit 34, so 2 (header)
 * became 3; v6.12 writes the field as given. 0 is replaced by 3.
 */
static unsigned int effective_len_mode(const struct sim_pmu *p, const struct hp_event *e)
{
        unsigned int mode = len_mode_field(e);

        if (p->m->kernel == SIM_KERNEL_5_17)
                return 1;
        if (mode == 0)
                mode = 3;
        if (p->m->kernel < SIM_KERNEL_6_12)
                mode |= 1;
        return mode;
}

static uint16_t port_bit(const struct sim_device *d)
{
        return (uint16_t)(1u << (2 * (d->dev & 7)));
}

/* Whether device @dev's traffic of class @cls is selected by @e's target. */
static bool target_selects(const struct sim_pmu *p, const struct hp_event *e, size_t dev,
                           const struct sim_tlp_rates *r)
{
        const struct sim_machine *m = p->m;
        size_t port = sim_machine_root_port(m, dev);
        const struct sim_core *core = &m->cores[e->core];
        bool ours = false;

        if (port == SIM_NONE)
                return false;
        for (size_t i = 0; i < core->port_count; i++)
                ours |= core->ports[i] == port;
        if (!ours)
                return false;
        if (port_mask(e)) /* the port filter wins when both are set */
                return (port_mask(e) & port_bit(&m->devices[port])) != 0;
        /* Requester filter: DMA classes carry the device's own ID; CPU
         * requests and their completions carry the Root Port's. */
        if (r->device_is_requester)
                return sim_device_rid(&m->devices[dev]) == bdf_filter(e);
        return sim_device_rid(&m->devices[port]) == bdf_filter(e);
}

/* Rate of a bandwidth counter (flux, in flux units) from one device. */
static double flux_rate(const struct sim_pmu *p, const struct hp_event *e,
                        const struct sim_tlp_rates *r, enum sim_tlp_class cls)
{
        unsigned int mode = effective_len_mode(p, e);
        unsigned int thr = thr_len(e), trig = trig_len(e);
        double hdr = sim_tlp_header_dw(cls);
        double tlps = r->tlps, payload = r->payload_dw;

        if (trig) {
                /* Counting starts at the first TLP longer (mode 0) or shorter
                 * (mode 1) than the trigger; with steady traffic that is at
                 * once, or never if no such TLP ever comes. */
                double shorter = r->tlps_below[trig];
                double matching = trig_mode(e) ? shorter : r->tlps - shorter;

                if (matching <= 0)
                        return 0;
        }
        if (thr) {
                double below_t = r->tlps_below[thr], below_p = r->payload_below[thr];

                if (thr_mode(e)) { /* count TLPs shorter than 2^thr DW */
                        tlps = below_t;
                        payload = below_p;
                } else {
                        tlps -= below_t;
                        payload -= below_p;
                }
        }
        double dw = (mode & 1 ? payload : 0) + (mode & 2 ? tlps * hdr : 0);

        /* Flux counts in the machine's flux unit (4 bytes: one DW). */
        return dw * 4.0 / p->m->clocks.flux_unit_bytes;
}

/* How fast event @e (hardware code @hc, not *_time) rises from traffic
 * @r of class hc->cls of device @dev: 0 when its filters leave it out. */
static double event_rate(const struct sim_pmu *p, const struct hp_event *e,
                         const struct hw_code *hc, size_t dev, const struct sim_tlp_rates *r)
{
        if (r->tlps <= 0 || !target_selects(p, e, dev, r))
                return 0;
        if (hc->kind == HW_BANDWIDTH)
                return flux_rate(p, e, r, hc->cls);
        if (e->code & EXTENDED_BIT) /* *_cnt: TLPs */
                return r->tlps;
        /* *_latency: delay in cycles of the latency clock */
        return r->latency_ns * p->m->clocks.latency_clock_hz / 1e9;
}

/* Builds the contribution list of a new event. Returns 0 or -ENOMEM. */
static int build_contrib(struct sim_pmu *p, struct hp_event *e)
{
        const struct sim_machine *m = p->m;
        const struct hw_code *hc = hw_code_find(e->code);
        bool extended = e->code & EXTENDED_BIT;

        e->e.contrib_count = 0;
        e->fixed_per_second = 0;
        if (!hc)
                return 0; /* an unknown code counts nothing */
        if (hc->kind == HW_BANDWIDTH && extended) {
                /* *_time: counts the core clock whenever it counts. */
                e->fixed_per_second = m->clocks.time_clock_hz;
                return 0;
        }
        /* Latency counters have no requester filter on hardware: without a
         * port they see nothing. */
        if (hc->kind == HW_LATENCY && port_mask(e) == 0)
                return 0;
        e->e.contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->e.contrib));
        if (!e->e.contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                struct sim_tlp_rates r;
                double rate;

                if (!m->devices[dev].has_workload)
                        continue;
                sim_traffic_rates(m, dev, hc->cls, &r);
                rate = event_rate(p, e, hc, dev, &r);
                if (rate > 0)
                        e->e.contrib[e->e.contrib_count++] = (struct sim_contrib){dev, rate};
        }
        return 0;
}

/* ---- scheduling ---- */

/* Whether two events of one group share a slot (they are "related"). */
static bool related(const struct sim_pmu *p, const struct hp_event *a, const struct hp_event *b)
{
        if ((a->code & 0xffff) != (b->code & 0xffff))
                return false;
        if (p->m->kernel < SIM_KERNEL_6_9)
                return true; /* only the code was compared */
        return a->config1 == b->config1 && a->config2 == b->config2;
}

/* Slots a group needs: one per set of related events. @extra: an event
 * about to join (or NULL). */
static size_t group_slots(const struct sim_pmu *p, size_t leader, const struct hp_event *extra)
{
        const struct hp_event *members[64];
        size_t n = 0, slots = 0;

        for (size_t i = 0; i < p->core.used_max && n < 63; i++)
                if (ev_at(p, i)->e.used && ev_at(p, i)->e.leader == leader)
                        members[n++] = ev_at(p, i);
        if (extra)
                members[n++] = extra;
        for (size_t i = 0; i < n; i++) {
                bool shares = false;

                for (size_t j = 0; j < i && !shares; j++)
                        shares = related(p, members[i], members[j]);
                slots += !shares;
        }
        return slots;
}

static bool counting(const struct sim_pmu *p, const struct hp_event *e)
{
        return sim_pmu_core_counting(&p->core, &e->e);
}

/*
 * Share of time each counting group runs, recomputed after every change of
 * the event set (open, close, enable, disable). When the enabled groups of a
 * core need more than 8 slots, perf rotates them; fine-grained rotation
 * gives every group the same share. Before v6.9, two groups using the same
 * event code cannot be on the counters together either (add() fails), so
 * they share time too.
 */
static void update_shares(struct sim_pmu_core *c)
{
        struct sim_pmu *p = c->owner;
        size_t demand[SIM_MAX_CORES] = {0};

        for (size_t i = 0; i < c->used_max; i++) {
                struct hp_event *g = ev_at(p, i);

                if (g->e.used && g->e.leader == i) {
                        g->slots = group_slots(p, i, NULL);
                        if (counting(p, g))
                                demand[g->core] += g->slots;
                }
        }
        for (size_t i = 0; i < c->used_max; i++) {
                struct hp_event *g = ev_at(p, i);
                size_t conflicts = 1;

                if (!g->e.used || g->e.leader != i)
                        continue;
                for (size_t j = 0; j < c->used_max && p->m->kernel < SIM_KERNEL_6_9; j++) {
                        const struct hp_event *o = ev_at(p, j);

                        if (j != i && o->e.used && o->e.leader == j && o->core == g->core &&
                            counting(p, o) && (o->code & 0xffff) == (g->code & 0xffff))
                                conflicts++;
                }
                double share = demand[g->core] > SIM_PMU_SLOTS
                                   ? (double)SIM_PMU_SLOTS / (double)demand[g->core]
                                   : 1.0;

                g->share = fmin(share, 1.0 / (double)conflicts);
        }
}

/* Seconds of [a, b] that fall in [lo, hi]. */
static double overlap(double a, double b, double lo, double hi)
{
        double from = a > lo ? a : lo, to = b < hi ? b : hi;

        return to > from ? to - from : 0;
}

/* What the calibration loads add to event @e over [t0, t1] (at share 1). */
static double load_increase(const struct sim_pmu *p, const struct hp_event *e, double t0, double t1)
{
        const struct hw_code *hc = hw_code_find(e->code);
        double sum = 0;

        if (!hc || (hc->kind == HW_BANDWIDTH && (e->code & EXTENDED_BIT)))
                return 0; /* *_time ticks regardless of traffic */
        if (hc->kind == HW_LATENCY && port_mask(e) == 0)
                return 0;
        for (size_t i = 0; i < p->load_count; i++) {
                const struct load *l = &p->loads[i];
                double secs = overlap(t0, t1, l->t0, l->t1);
                struct sim_tlp_rates r;

                if (secs <= 0)
                        continue;
                sim_traffic_workload_rates(&p->m->devices[l->dev], &l->w, true, hc->cls, &r);
                sum += event_rate(p, e, hc, l->dev, &r) * secs;
        }
        return sum;
}

/* Brings every counting event up to now. Call with the lock held. */
static void advance(struct sim_pmu_core *c)
{
        struct sim_pmu *p = c->owner;
        double now = sim_pmu_now(p);
        double dt = now - p->last;

        if (dt <= 0)
                return;
        for (size_t i = 0; i < c->used_max; i++) {
                struct hp_event *e = ev_at(p, i);

                if (!counting(p, e))
                        continue;
                double share = ev_at(p, e->e.leader)->share;

                e->enabled_ns += dt * 1e9;
                e->running_ns += dt * share * 1e9;
                e->value += e->fixed_per_second * dt * share;
                for (size_t k = 0; k < e->e.contrib_count; k++)
                        e->value +=
                            e->e.contrib[k].per_second * share *
                            sim_device_traffic_integral(p->m, e->e.contrib[k].dev, p->last, now);
                e->value += load_increase(p, e, p->last, now) * share;
        }
        p->last = now;
}

/* ---- the model's part of the perf ops (sim_pmu_core does the rest) ---- */

/* The driver's filter check (hisi_pcie_pmu_valid_filter). */
static bool valid_filter(const struct sim_pmu *p, const struct hp_event *e)
{
        const struct sim_core *core = &p->m->cores[e->core];

        if (thr_len(e) > 10 || trig_len(e) > 10)
                return false;
        if (p->m->kernel >= SIM_KERNEL_6_9 && port_mask(e) == 0) {
                /* The requester must sit below one of this core's ports. */
                uint16_t bdf = bdf_filter(e);

                for (size_t dev = 0; dev < p->m->device_count; dev++) {
                        size_t port = sim_machine_root_port(p->m, dev);

                        if (port == SIM_NONE || sim_device_rid(&p->m->devices[dev]) != bdf)
                                continue;
                        uint16_t rp = sim_device_rid(&p->m->devices[port]);

                        if (rp >= core->bdf_min && rp <= core->bdf_max)
                                return true;
                }
                return false;
        }
        return true;
}

/* hisi_pcie_pmu_event_init and the perf core's target checks. */
static int hisi_pcie_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr,
                                pid_t pid, int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        struct sim_pmu *p = c->owner;
        struct hp_event *e = (struct hp_event *)ev;
        int err = 0;

        uint32_t off = attr->type - p->type_base;
        unsigned int generation;

        (void)slot;
        if (attr->type < p->type_base || off % SIM_MAX_CORES >= p->m->core_count ||
            off / SIM_MAX_CORES >= SIM_PMU_GENERATIONS)
                return -ENOENT; /* not ours: perf would try the next PMU */
        e->core = off % SIM_MAX_CORES;
        /* An unbound PMU's type is no longer in the kernel's idr, nor is
         * the type of an earlier binding. */
        if (!sim_pmu_bound(p->m, e->core, p->last, &generation) ||
            generation % SIM_PMU_GENERATIONS != off / SIM_MAX_CORES)
                return -ENOENT;
        e->generation = generation;
        if (sim_pmu_core_fault(c, e->core, &err))
                return -err;
        /* perf core: all tasks on no CPU, or a CPU that does not exist. */
        if ((pid == -1 && cpu < 0) || (cpu >= 0 && (unsigned int)cpu >= p->m->cpus))
                return -EINVAL;
        /* No check of @cpu being online: event_init sets event->cpu to the
         * PMU's cpumask CPU, and perf_event_open() checks that one. */
        if (attr->sample_period || attr->freq || pid != -1)
                return -EOPNOTSUPP;
        e->code = (uint32_t)(attr->config & 0x1ffff);
        e->config1 = attr->config1;
        e->config2 = attr->config2;
        return valid_filter(p, e) ? 0 : -EINVAL;
}

/* Same PMU, and the group still fits the 8 counters. */
static bool hisi_pcie_can_join(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                               const struct sim_pmu_event *ev)
{
        const struct hp_event *l = (const struct hp_event *)leader;
        const struct hp_event *e = (const struct hp_event *)ev;

        return l->core == e->core && group_slots(c->owner, leader->leader, e) <= SIM_PMU_SLOTS;
}

static int hisi_pcie_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot)
{
        (void)slot;
        return build_contrib(c->owner, (struct hp_event *)ev);
}

static uint64_t u64_of(double v)
{
        return v <= 0 ? 0 : (uint64_t)floor(v);
}

static void hisi_pcie_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                             struct sim_pmu_report *out)
{
        const struct hp_event *e = (const struct hp_event *)ev;

        (void)c;
        out->value = u64_of(e->value);
        out->enabled_ns = u64_of(e->enabled_ns);
        out->running_ns = u64_of(e->running_ns);
}

static void hisi_pcie_reset(struct sim_pmu_core *c, struct sim_pmu_event *ev)
{
        (void)c;
        ((struct hp_event *)ev)->value = 0;
}

/* perf_pmu_unregister() since the event was opened (sim_events.h). */
static bool hisi_pcie_revoked(struct sim_pmu_core *c, const struct sim_pmu_event *ev)
{
        const struct sim_pmu *p = c->owner;
        const struct hp_event *e = (const struct hp_event *)ev;
        unsigned int generation;

        return !sim_pmu_bound(p->m, e->core, p->last, &generation) || generation != e->generation;
}

uint32_t sim_pmu_type_of(uint32_t type_base, size_t core, unsigned int generation)
{
        return type_base + (uint32_t)core +
               SIM_MAX_CORES * (uint32_t)(generation % SIM_PMU_GENERATIONS);
}

static const struct sim_pmu_model hisi_pcie_model = {
    .event_size = sizeof(struct hp_event),
    .event_cap = MAX_EVENTS,
    .fd_base = SIM_FD_BASE,
    .groups = true,
    .refused_excludes = SIM_EXCLUDE_ALL,
    .advance = advance,
    .revoked = hisi_pcie_revoked,
    .event_init = hisi_pcie_event_init,
    .can_join = hisi_pcie_can_join,
    .start = hisi_pcie_start,
    .report = hisi_pcie_report,
    .reset = hisi_pcie_reset,
    .changed = update_shares,
};

/* ---- life cycle and ground truth ---- */

int sim_pmu_new(const struct sim_machine *m, uint32_t type_base, sim_clock_fn clock,
                void *clock_ctx, struct sim_pmu **out)
{
        struct sim_pmu *p = calloc(1, sizeof(*p));

        *out = NULL;
        if (!p)
                return -ENOMEM;
        p->m = m;
        p->type_base = type_base;
        if (sim_pmu_core_init(&p->core, &hisi_pcie_model, p, clock, clock_ctx, m->core_count)) {
                sim_pmu_free(p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->injection_count; i++) {
                const struct sim_injection *inj = &m->injections[i];
                size_t core = SIZE_MAX;

                for (size_t c = 0; c < m->core_count && inj->pmu[0]; c++) {
                        char name[SIM_NAME_MAX];

                        snprintf(name, sizeof(name), "hisi_pcie%u_core%u", m->cores[c].sicl,
                                 m->cores[c].id);
                        if (!strcmp(name, inj->pmu))
                                core = c;
                }
                if (!inj->pmu[0] || core != SIZE_MAX)
                        sim_pmu_inject(p, core, inj->err, inj->count);
        }
        *out = p;
        return 0;
}

void sim_pmu_free(struct sim_pmu *p)
{
        if (!p)
                return;
        sim_pmu_core_fini(&p->core);
        free(p);
}

const struct perf_ops *sim_pmu_ops(struct sim_pmu *p)
{
        return &p->core.ops;
}

int sim_pmu_add_load(struct sim_pmu *p, size_t dev, double bytes, unsigned int io_size, double t0,
                     double t1)
{
        const struct sim_device *d;
        struct load l = {.dev = dev, .t0 = t0, .t1 = t1};
        struct sim_flow *f = &l.w.flow[SIM_DMA_WRITE];
        int ret = 0;

        if (dev >= p->m->device_count || !(bytes > 0) || !(t1 > t0) || io_size == 0)
                return -EINVAL;
        d = &p->m->devices[dev];
        f->bytes_per_second = bytes / (t1 - t0);
        f->size.count = 1;
        f->size.value[0] = io_size;
        f->size.weight[0] = 1;
        /* The RC's commit delay of the device's own DMA writes, when its
         * workload says; else a typical one. */
        if (d->has_workload && d->workload.flow[SIM_DMA_WRITE].latency.count)
                f->latency = d->workload.flow[SIM_DMA_WRITE].latency;
        else
                f->latency = (struct sim_dist){.count = 1, .value = {800}, .weight = {1}};
        sim_pmu_core_lock(&p->core);
        advance(&p->core); /* what came before counts without the load */
        if (p->load_count < SIM_PMU_MAX_LOADS) {
                p->loads[p->load_count++] = l;
        } else {
                /* Full: the load that ended first makes room (its counts
                 * are in the counters; only its ground truth goes). */
                size_t oldest = 0;

                for (size_t i = 1; i < p->load_count; i++)
                        if (p->loads[i].t1 < p->loads[oldest].t1)
                                oldest = i;
                if (p->loads[oldest].t1 > p->last)
                        ret = -EBUSY;
                else
                        p->loads[oldest] = l;
        }
        sim_pmu_core_unlock(&p->core);
        return ret;
}

void sim_pmu_inject(struct sim_pmu *p, size_t core, int err, long count)
{
        sim_pmu_core_inject(&p->core, core, err, count);
}

size_t sim_pmu_open_count(struct sim_pmu *p)
{
        return sim_pmu_core_open_count(&p->core);
}

/* Adds rates @r for @s seconds at scale 1 carried, @offered asked. */
static void truth_rates(const struct sim_tlp_rates *r, double s, double offered,
                        struct sim_truth *out)
{
        out->tlps += r->tlps * s;
        out->payload_bytes += r->payload_dw * 4 * s;
        out->header_bytes += r->header_dw * 4 * s;
        out->latency_ns += r->latency_ns * s;
        out->offered_tlps += r->tlps * offered;
        out->offered_payload_bytes += r->payload_dw * 4 * offered;
        out->offered_header_bytes += r->header_dw * 4 * offered;
}

static void truth_add(const struct sim_pmu *p, size_t dev, enum sim_tlp_class c, double t0,
                      double t1, struct sim_truth *out)
{
        const struct sim_device *d = &p->m->devices[dev];
        struct sim_tlp_rates r;

        for (size_t i = 0; i < p->load_count; i++) {
                const struct load *l = &p->loads[i];

                if (l->dev != dev)
                        continue;
                double secs = overlap(t0, t1, l->t0, l->t1);

                sim_traffic_workload_rates(d, &l->w, true, c, &r);
                truth_rates(&r, secs, secs, out);
        }
        if (!d->has_workload)
                return;
        sim_traffic_rates(p->m, dev, c, &r);
        truth_rates(&r, sim_device_traffic_integral(p->m, dev, t0, t1),
                    sim_device_offered_integral(p->m, dev, t0, t1), out);
}

void sim_truth_device(const struct sim_pmu *p, size_t dev, enum sim_tlp_class c, double t0,
                      double t1, struct sim_truth *out)
{
        memset(out, 0, sizeof(*out));
        if (dev < p->m->device_count)
                truth_add(p, dev, c, t0, t1, out);
}

void sim_truth_port(const struct sim_pmu *p, size_t port, enum sim_tlp_class c, double t0,
                    double t1, struct sim_truth *out)
{
        memset(out, 0, sizeof(*out));
        for (size_t dev = 0; dev < p->m->device_count; dev++)
                if (dev != port && sim_machine_root_port(p->m, dev) == port)
                        truth_add(p, dev, c, t0, t1, out);
}
