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
#include "sim_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_env.h"

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

struct contrib {
        size_t dev;
        double per_second; /* counter increase per second at scale 1 */
};

struct sim_event {
        bool used;
        size_t core;
        uint32_t code;             /* attr.config bits 0-16 */
        uint64_t config1, config2; /* filters */
        uint64_t read_format;
        size_t leader; /* index of the group leader (self for a leader) */
        bool enabled;
        double value;
        double enabled_ns, running_ns;
        double fixed_per_second; /* *_time: ticks regardless of traffic */
        size_t slots;            /* leaders: slots the group needs */
        double share;            /* leaders: share of time the group runs */
        size_t contrib_count;
        struct contrib *contrib;
};

struct injection {
        bool active;
        int err;
        long count;
};

struct sim_pmu {
        const struct sim_machine *m;
        uint32_t type_base;
        sim_clock_fn clock;
        void *clock_ctx;
        double t0;   /* clock at creation */
        double last; /* seconds since t0 of the last advance */
        pthread_mutex_t lock;
        struct perf_ops ops;
        struct injection inject_any;
        struct injection *inject; /* per core */
        size_t event_cap;
        size_t used_max; /* events[used_max..] are all unused */
        struct sim_event *events;
};

static double monotonic_seconds(void *ctx)
{
        struct timespec ts;

        (void)ctx;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double sim_pmu_now(struct sim_pmu *p)
{
        return p->clock(p->clock_ctx) - p->t0;
}

/* ---- filters (config1/config2 as the format files lay them out) ---- */

static unsigned int thr_len(const struct sim_event *e)
{
        return e->config1 & 0xf;
}
static unsigned int thr_mode(const struct sim_event *e)
{
        return (e->config1 >> 4) & 1;
}
static unsigned int trig_len(const struct sim_event *e)
{
        return (e->config1 >> 5) & 0xf;
}
static unsigned int trig_mode(const struct sim_event *e)
{
        return (e->config1 >> 9) & 1;
}
static unsigned int len_mode_field(const struct sim_event *e)
{
        return (e->config1 >> 10) & 3;
}
static uint16_t port_mask(const struct sim_event *e)
{
        return e->config2 & 0xffff;
}
static uint16_t bdf_filter(const struct sim_event *e)
{
        return (e->config2 >> 16) & 0xffff;
}

/*
 * What the bandwidth counters add up, per kernel: v5.17 had no len_mode
 * and always set bit 34 of the control register (its "INIT_SET"), which is
 * len_mode 1, payload only; v6.2 to v6.11 still set bit 34, so 2 (header)
 * became 3; v6.12 writes the field as given. 0 is replaced by 3.
 */
static unsigned int effective_len_mode(const struct sim_pmu *p, const struct sim_event *e)
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
static bool target_selects(const struct sim_pmu *p, const struct sim_event *e, size_t dev,
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
static double flux_rate(const struct sim_pmu *p, const struct sim_event *e,
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

/* Builds the contribution list of a new event. Returns 0 or -ENOMEM. */
static int build_contrib(struct sim_pmu *p, struct sim_event *e)
{
        const struct sim_machine *m = p->m;
        const struct hw_code *hc = hw_code_find(e->code);
        bool extended = e->code & EXTENDED_BIT;

        e->contrib_count = 0;
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
        e->contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->contrib));
        if (!e->contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                struct sim_tlp_rates r;
                double rate;

                if (!m->devices[dev].has_workload)
                        continue;
                sim_traffic_rates(m, dev, hc->cls, &r);
                if (r.tlps <= 0 || !target_selects(p, e, dev, &r))
                        continue;
                if (hc->kind == HW_BANDWIDTH)
                        rate = flux_rate(p, e, &r, hc->cls);
                else if (extended) /* *_cnt: TLPs */
                        rate = r.tlps;
                else /* *_latency: delay in cycles of the latency clock */
                        rate = r.latency_ns * m->clocks.latency_clock_hz / 1e9;
                if (rate > 0)
                        e->contrib[e->contrib_count++] = (struct contrib){dev, rate};
        }
        return 0;
}

/* ---- scheduling ---- */

/* Whether two events of one group share a slot (they are "related"). */
static bool related(const struct sim_pmu *p, const struct sim_event *a, const struct sim_event *b)
{
        if ((a->code & 0xffff) != (b->code & 0xffff))
                return false;
        if (p->m->kernel < SIM_KERNEL_6_9)
                return true; /* only the code was compared */
        return a->config1 == b->config1 && a->config2 == b->config2;
}

/* Slots a group needs: one per set of related events. @extra: an event
 * about to join (or NULL). */
static size_t group_slots(const struct sim_pmu *p, size_t leader, const struct sim_event *extra)
{
        const struct sim_event *members[64];
        size_t n = 0, slots = 0;

        for (size_t i = 0; i < p->used_max && n < 63; i++)
                if (p->events[i].used && p->events[i].leader == leader)
                        members[n++] = &p->events[i];
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

static bool counting(const struct sim_pmu *p, const struct sim_event *e)
{
        return e->used && e->enabled && p->events[e->leader].used && p->events[e->leader].enabled;
}

/*
 * Share of time each counting group runs, recomputed after every change of
 * the event set (open, close, enable, disable). When the enabled groups of a
 * core need more than 8 slots, perf rotates them; fine-grained rotation
 * gives every group the same share. Before v6.9, two groups using the same
 * event code cannot be on the counters together either (add() fails), so
 * they share time too.
 */
static void update_shares(struct sim_pmu *p)
{
        size_t demand[SIM_MAX_CORES] = {0};

        for (size_t i = 0; i < p->used_max; i++) {
                struct sim_event *g = &p->events[i];

                if (g->used && g->leader == i) {
                        g->slots = group_slots(p, i, NULL);
                        if (counting(p, g))
                                demand[g->core] += g->slots;
                }
        }
        for (size_t i = 0; i < p->used_max; i++) {
                struct sim_event *g = &p->events[i];
                size_t conflicts = 1;

                if (!g->used || g->leader != i)
                        continue;
                for (size_t j = 0; j < p->used_max && p->m->kernel < SIM_KERNEL_6_9; j++) {
                        const struct sim_event *o = &p->events[j];

                        if (j != i && o->used && o->leader == j && o->core == g->core &&
                            counting(p, o) && (o->code & 0xffff) == (g->code & 0xffff))
                                conflicts++;
                }
                double share = demand[g->core] > SIM_PMU_SLOTS
                                   ? (double)SIM_PMU_SLOTS / (double)demand[g->core]
                                   : 1.0;

                g->share = fmin(share, 1.0 / (double)conflicts);
        }
}

/* Brings every counting event up to now. Call with the lock held. */
static void advance(struct sim_pmu *p)
{
        double now = sim_pmu_now(p);
        double dt = now - p->last;

        if (dt <= 0)
                return;
        for (size_t i = 0; i < p->used_max; i++) {
                struct sim_event *e = &p->events[i];

                if (!counting(p, e))
                        continue;
                double share = p->events[e->leader].share;

                e->enabled_ns += dt * 1e9;
                e->running_ns += dt * share * 1e9;
                e->value += e->fixed_per_second * dt * share;
                for (size_t c = 0; c < e->contrib_count; c++) {
                        const struct sim_device *d = &p->m->devices[e->contrib[c].dev];

                        e->value += e->contrib[c].per_second * share *
                                    sim_traffic_integral(&d->workload, p->last, now);
                }
        }
        p->last = now;
}

/* ---- perf ops ---- */

static struct sim_event *event_of(struct sim_pmu *p, int fd)
{
        long i = (long)fd - SIM_FD_BASE;

        if (fd < SIM_FD_BASE || i >= (long)p->event_cap || !p->events[i].used)
                return NULL;
        return &p->events[i];
}

static bool consume_injection(struct injection *inj, int *err)
{
        if (!inj->active || inj->count == 0)
                return false;
        if (inj->count > 0)
                inj->count--;
        *err = inj->err;
        return true;
}

/* The driver's filter check (hisi_pcie_pmu_valid_filter). */
static bool valid_filter(const struct sim_pmu *p, const struct sim_event *e)
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

static int sim_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                    unsigned long flags)
{
        struct sim_pmu *p = ctx;
        struct sim_event ev = {0}, *leader = NULL;
        size_t core, slot = SIZE_MAX;
        int err = 0, ret;

        (void)flags;
        if (!attr)
                return -EFAULT;
        pthread_mutex_lock(&p->lock);
        advance(p);
        if (attr->type < p->type_base || attr->type - p->type_base >= p->m->core_count) {
                ret = -ENOENT; /* not ours: perf would try the next PMU */
                goto out;
        }
        core = attr->type - p->type_base;
        if (consume_injection(&p->inject[core], &err) || consume_injection(&p->inject_any, &err)) {
                ret = -err;
                goto out;
        }
        /* perf core: all tasks on no CPU, or a CPU that does not exist. */
        if ((pid == -1 && cpu < 0) || (cpu >= 0 && (unsigned int)cpu >= p->m->cpus)) {
                ret = -EINVAL;
                goto out;
        }
        if (attr->sample_period || attr->freq || pid != -1) {
                ret = -EOPNOTSUPP;
                goto out;
        }
        ev.core = core;
        ev.code = (uint32_t)(attr->config & 0x1ffff);
        ev.config1 = attr->config1;
        ev.config2 = attr->config2;
        ev.read_format = attr->read_format;
        ev.enabled = !attr->disabled;
        if (!valid_filter(p, &ev)) {
                ret = -EINVAL;
                goto out;
        }
        if (group_fd != -1) {
                leader = event_of(p, group_fd);
                if (!leader) {
                        ret = -EBADF;
                        goto out;
                }
                if (leader->leader != (size_t)(leader - p->events) || leader->core != core ||
                    group_slots(p, leader->leader, &ev) > SIM_PMU_SLOTS) {
                        ret = -EINVAL; /* not a leader, other PMU, or too many slots */
                        goto out;
                }
        }
        /* PERF_PMU_CAP_NO_EXCLUDE */
        if (attr->exclude_user || attr->exclude_kernel || attr->exclude_hv || attr->exclude_idle ||
            attr->exclude_host || attr->exclude_guest) {
                ret = -EINVAL;
                goto out;
        }
        for (size_t i = 0; i < p->event_cap; i++) {
                if (!p->events[i].used) {
                        slot = i;
                        break;
                }
        }
        if (slot == SIZE_MAX) {
                ret = -EMFILE;
                goto out;
        }
        ev.leader = leader ? (size_t)(leader - p->events) : slot;
        ret = build_contrib(p, &ev);
        if (ret)
                goto out;
        ev.used = true;
        p->events[slot] = ev;
        if (slot >= p->used_max)
                p->used_max = slot + 1;
        update_shares(p);
        ret = SIM_FD_BASE + (int)slot;
out:
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static uint64_t u64_of(double v)
{
        return v <= 0 ? 0 : (uint64_t)floor(v);
}

static ssize_t sim_read(void *ctx, int fd, void *buf, size_t len)
{
        struct sim_pmu *p = ctx;
        struct sim_read_value values[SIM_READ_MAX];
        const struct sim_event *e, *lead;
        size_t nr = 0;
        ssize_t ret;

        pthread_mutex_lock(&p->lock);
        advance(p);
        e = event_of(p, fd);
        if (!e) {
                pthread_mutex_unlock(&p->lock);
                return -EBADF;
        }
        lead = e->read_format & PERF_FORMAT_GROUP ? &p->events[e->leader] : e;
        if (e->read_format & PERF_FORMAT_GROUP) {
                /* Leader first, then the members in creation order. */
                for (size_t pass = 0; pass < 2; pass++) {
                        for (size_t i = 0; i < p->used_max && nr < SIM_READ_MAX; i++) {
                                const struct sim_event *m = &p->events[i];

                                if (!m->used || m->leader != e->leader ||
                                    (pass == 0) != (i == e->leader))
                                        continue;
                                values[nr++] = (struct sim_read_value){u64_of(m->value), i};
                        }
                }
        } else {
                values[nr++] = (struct sim_read_value){u64_of(e->value), (uint64_t)(e - p->events)};
        }
        ret = sim_read_encode(e->read_format, values, nr, u64_of(lead->enabled_ns),
                              u64_of(lead->running_ns), buf, len);
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static int sim_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        struct sim_pmu *p = ctx;
        struct sim_event *e;
        int ret = 0;

        pthread_mutex_lock(&p->lock);
        advance(p);
        e = event_of(p, fd);
        if (!e) {
                ret = -EBADF;
                goto out;
        }
        for (size_t i = 0; i < p->used_max; i++) {
                struct sim_event *t = &p->events[i];
                bool hit =
                    t == e || (arg & PERF_IOC_FLAG_GROUP && t->used && t->leader == e->leader &&
                               e->leader == (size_t)(e - p->events));

                if (!hit)
                        continue;
                switch (request) {
                case PERF_EVENT_IOC_ENABLE:
                        t->enabled = true;
                        break;
                case PERF_EVENT_IOC_DISABLE:
                        t->enabled = false;
                        break;
                case PERF_EVENT_IOC_RESET:
                        t->value = 0;
                        break;
                default:
                        ret = -ENOTTY;
                        goto out;
                }
        }
        update_shares(p);
out:
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static int sim_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        (void)ctx, (void)fd, (void)len, (void)prot, (void)offset;
        *addr = NULL;
        return -ENODEV; /* counting-only PMU: nothing to map in this model */
}

static int sim_munmap(void *ctx, void *addr, size_t len)
{
        (void)ctx, (void)addr, (void)len;
        return -EINVAL;
}

static int sim_close(void *ctx, int fd)
{
        struct sim_pmu *p = ctx;
        struct sim_event *e;
        int ret = 0;

        pthread_mutex_lock(&p->lock);
        advance(p);
        e = event_of(p, fd);
        if (!e) {
                ret = -EBADF;
        } else {
                free(e->contrib);
                memset(e, 0, sizeof(*e));
                update_shares(p);
        }
        pthread_mutex_unlock(&p->lock);
        return ret;
}

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
        p->clock = clock ? clock : monotonic_seconds;
        p->clock_ctx = clock_ctx;
        p->t0 = p->clock(p->clock_ctx);
        p->event_cap = MAX_EVENTS;
        p->events = calloc(p->event_cap, sizeof(*p->events));
        p->inject = calloc(m->core_count ? m->core_count : 1, sizeof(*p->inject));
        if (!p->events || !p->inject) {
                sim_pmu_free(p);
                return -ENOMEM;
        }
        pthread_mutex_init(&p->lock, NULL);
        p->ops = (struct perf_ops){
            .open = sim_open,
            .read = sim_read,
            .ioctl = sim_ioctl,
            .mmap = sim_mmap,
            .munmap = sim_munmap,
            .close = sim_close,
            .ctx = p,
        };
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
        if (p->events) {
                for (size_t i = 0; i < p->event_cap; i++)
                        free(p->events[i].contrib);
                pthread_mutex_destroy(&p->lock);
        }
        free(p->events);
        free(p->inject);
        free(p);
}

const struct perf_ops *sim_pmu_ops(struct sim_pmu *p)
{
        return &p->ops;
}

void sim_pmu_inject(struct sim_pmu *p, size_t core, int err, long count)
{
        struct injection inj = {.active = err != 0 && count != 0, .err = err, .count = count};

        pthread_mutex_lock(&p->lock);
        if (core == SIZE_MAX)
                p->inject_any = inj;
        else if (core < p->m->core_count)
                p->inject[core] = inj;
        pthread_mutex_unlock(&p->lock);
}

size_t sim_pmu_open_count(struct sim_pmu *p)
{
        size_t n = 0;

        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < p->used_max; i++)
                n += p->events[i].used;
        pthread_mutex_unlock(&p->lock);
        return n;
}

static void truth_add(const struct sim_pmu *p, size_t dev, enum sim_tlp_class c, double t0,
                      double t1, struct sim_truth *out)
{
        const struct sim_device *d = &p->m->devices[dev];
        struct sim_tlp_rates r;
        double s;

        if (!d->has_workload)
                return;
        sim_traffic_rates(p->m, dev, c, &r);
        s = sim_traffic_integral(&d->workload, t0, t1);
        out->tlps += r.tlps * s;
        out->payload_bytes += r.payload_dw * 4 * s;
        out->header_bytes += r.header_dw * 4 * s;
        out->latency_ns += r.latency_ns * s;
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
