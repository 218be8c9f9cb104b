/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hisi_pcie_core.c - one PCIe core's counter plan, rotation and samples.
 * See hisi_pcie_core.h.
 */
#define _GNU_SOURCE
#include "hisi_pcie_core.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bdf_match.h"
#include "hw_env.h"
#include "pcie_families.h"
#include "pcie_link.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "sample.h"

/* TLP length buckets for the distribution: 2^n DW = 64..512 bytes. */
static const unsigned int length_thresholds[] = {4, 5, 6, 7};
#define LENGTH_BUCKETS (sizeof(length_thresholds) / sizeof(length_thresholds[0]))

enum scope { SCOPE_PORT, SCOPE_DEVICE, SCOPE_LENGTH };

struct measurement {
        enum hisi_pcie_pair pair;
        enum scope scope;
        struct hisi_pcie_filter filter;
        size_t port;              /* index in core->ports */
        size_t endpoint;          /* SCOPE_DEVICE: index in core->endpoints */
        unsigned int below_bytes; /* SCOPE_LENGTH: TLPs shorter than this */

        struct perf_group *group;
        bool enabled;
        struct perf_group_reading base; /* reading at enable or at the last tick */

        /* Estimates from the most recent window the measurement ran in. */
        bool have_rate;
        double primary_per_second;   /* flux or latency cycles per counting second */
        double secondary_per_second; /* time ticks or TLPs per counting second */
        bool have_ratio;
        double ratio; /* Δprimary / Δsecondary: cycles per TLP */
        /* Totals over all windows. */
        uint64_t primary_total, secondary_total;
        double running_seconds;
};

struct port_info {
        char bdf[PCI_BDF_LEN];
        uint16_t bit;
        uint64_t capacity; /* bytes/s per direction at the current speed/width */
        unsigned int mps;  /* the largest TLP payload on its link (pcie_topo_link_mps) */
};

struct endpoint_info {
        char bdf[PCI_BDF_LEN];
        uint16_t rid;
        size_t port;
        bool gone; /* its sysfs directory went (removed, its link failed) */
};

struct hisi_pcie_core {
        const struct hw_env *env;
        const struct hisi_pcie_pmu *pmu;
        struct hisi_pcie_opts opts;

        size_t port_count;
        struct port_info ports[HISI_PCIE_MAX_PORTS];
        size_t endpoint_count;
        struct endpoint_info *endpoints;

        size_t count;
        struct measurement *m;
        struct hisi_pcie_plan_item *items;
        size_t cursor;
        size_t window_count;
        size_t *window;

        bool started;
        double start_time;
        double cpu_seconds;
        char sicl[16], core[16], identifier[32], ports_label[HISI_PCIE_MAX_PORTS * PCI_BDF_LEN];
};

void hisi_pcie_opts_default(struct hisi_pcie_opts *opts)
{
        memset(opts, 0, sizeof(*opts));
        opts->flux_unit_bytes = 4;
        opts->latency_clock_hz = 1e9;
        opts->slots = 8;
        opts->len_mode = 3;
        opts->port_bandwidth = true;
        opts->latency = true;
        opts->tlp_length = true;
        opts->endpoints = true;
        opts->top_talkers = 5;
}

const char *hisi_pcie_core_name(const struct hisi_pcie_core *core)
{
        return core->pmu->name;
}

size_t hisi_pcie_core_measurements(const struct hisi_pcie_core *core)
{
        return core->count;
}

double hisi_pcie_core_cpu_seconds(const struct hisi_pcie_core *core)
{
        return core->cpu_seconds;
}

static double thread_cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                return 0;
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the window chooser ---- */

size_t hisi_pcie_plan_window(const struct hisi_pcie_plan_item *items, size_t count, size_t slots,
                             bool strict_related, size_t *cursor, size_t *chosen)
{
        size_t n = 0, first_skipped = SIZE_MAX, last_taken = 0;
        bool taken_pair[HISI_PAIRS] = {false};

        if (count == 0 || slots == 0)
                return 0;
        if (*cursor >= count)
                *cursor = 0;
        for (size_t k = 0; k < count && n < slots; k++) {
                size_t i = (*cursor + k) % count;
                enum hisi_pcie_pair pair = items[i].pair;

                /* Before 6.9 two events with one code cannot count at once,
                 * whatever their filters: let this one wait. */
                if (!strict_related && (unsigned int)pair < HISI_PAIRS && taken_pair[pair]) {
                        if (first_skipped == SIZE_MAX)
                                first_skipped = i;
                        continue;
                }
                if ((unsigned int)pair < HISI_PAIRS)
                        taken_pair[pair] = true;
                chosen[n++] = i;
                last_taken = i;
        }
        /* Next window starts at the first item that had to wait, else right
         * after the last one taken. */
        *cursor = first_skipped != SIZE_MAX ? first_skipped : (last_taken + 1) % count;
        /* Ascending order keeps enable/disable and output stable. */
        for (size_t a = 1; a < n; a++)
                for (size_t b = a; b > 0 && chosen[b - 1] > chosen[b]; b--) {
                        size_t t = chosen[b];

                        chosen[b] = chosen[b - 1];
                        chosen[b - 1] = t;
                }
        return n;
}

/* ---- planning ---- */

static int plan_add(struct hisi_pcie_core *c, size_t *cap, const struct measurement *m)
{
        if (c->count == *cap) {
                size_t ncap = *cap ? 2 * *cap : 32;
                struct measurement *nm = realloc(c->m, ncap * sizeof(*nm));

                if (!nm)
                        return -ENOMEM;
                c->m = nm;
                *cap = ncap;
        }
        c->m[c->count++] = *m;
        return 0;
}

static bool is_endpoint(const struct pcie_function *f)
{
        return !f->info.is_bridge && f->info.vendor_id != 0xffff;
}

/* The PMU's port below which @f is, by address in @topo (the topology of
 * discovery or a later scan: indexes differ), or SIZE_MAX. */
static size_t port_of(const struct hisi_pcie_core *c, const struct pcie_topo *topo,
                      const struct pcie_function *f)
{
        const struct pcie_function *rp;

        if (f->root_port == PCIE_TOPO_NONE)
                return SIZE_MAX;
        rp = pcie_topo_get(topo, f->root_port);
        for (size_t i = 0; rp && i < c->pmu->port_count; i++)
                if (!pci_addr_compare(&c->pmu->ports[i].addr, &rp->addr))
                        return i;
        return SIZE_MAX;
}

/* The endpoints @topo shows below the PMU's ports (those the filter
 * selects), in the topology's order. */
static int collect_endpoints(const struct hisi_pcie_core *c, const struct pcie_topo *topo,
                             struct endpoint_info **out, size_t *count)
{
        struct endpoint_info *list = NULL;
        size_t n = 0, cap = 0;

        for (size_t t = 0; topo && t < pcie_topo_count(topo); t++) {
                const struct pcie_function *f = pcie_topo_get(topo, t);
                struct endpoint_info *e;
                size_t port;

                if (!is_endpoint(f))
                        continue;
                port = port_of(c, topo, f);
                if (port == SIZE_MAX)
                        continue;
                if (c->opts.endpoint_filter &&
                    !bdf_filter_selects(c->opts.endpoint_filter, &f->addr))
                        continue;
                if (n == cap) {
                        size_t ncap = cap ? 2 * cap : 16;
                        struct endpoint_info *ne = realloc(list, ncap * sizeof(*ne));

                        if (!ne) {
                                free(list);
                                return -ENOMEM;
                        }
                        list = ne;
                        cap = ncap;
                }
                e = &list[n++];
                memset(e, 0, sizeof(*e));
                snprintf(e->bdf, sizeof(e->bdf), "%s", f->bdf);
                e->rid = (uint16_t)(f->addr.bus << 8 | f->addr.dev << 3 | f->addr.func);
                e->port = port;
        }
        *out = list;
        *count = n;
        return 0;
}

static int collect_ports_and_endpoints(struct hisi_pcie_core *c, const struct pcie_topo *topo)
{
        const struct hisi_pcie_pmu *pmu = c->pmu;

        for (size_t i = 0; i < pmu->port_count; i++) {
                struct port_info *p = &c->ports[c->port_count++];
                const struct pcie_function *f =
                    topo ? pcie_topo_get(topo, pmu->ports[i].topo_index) : NULL;

                snprintf(p->bdf, sizeof(p->bdf), "%s", pmu->ports[i].bdf);
                p->bit = pmu->ports[i].bit;
                if (f && f->info.has_link && f->link_up)
                        p->capacity = f->capacity_current;
                p->mps = f ? pcie_topo_link_mps(topo, pmu->ports[i].topo_index) : 0;
        }
        return collect_endpoints(c, topo, &c->endpoints, &c->endpoint_count);
}

static int build_plan(struct hisi_pcie_core *c)
{
        const struct hisi_pcie_pmu *pmu = c->pmu;
        size_t cap = 0;
        int ret = 0;

        for (size_t p = 0; p < c->port_count && !ret; p++) {
                struct measurement m = {.scope = SCOPE_PORT, .port = p};

                m.filter.port = c->ports[p].bit;
                for (int pair = 0; pair < HISI_PAIRS && !ret; pair++) {
                        bool bw = hisi_pcie_pair_info(pair)->bandwidth;

                        if (!pmu->offered[pair] ||
                            (bw ? !c->opts.port_bandwidth : !c->opts.latency))
                                continue;
                        m.pair = pair;
                        m.filter.len_mode = bw ? c->opts.len_mode : 0;
                        ret = plan_add(c, &cap, &m);
                }
                if (c->opts.tlp_length && pmu->offered[HISI_RX_MWR_FLUX]) {
                        for (size_t b = 0; b < LENGTH_BUCKETS && !ret; b++) {
                                struct measurement l = m;

                                l.scope = SCOPE_LENGTH;
                                l.pair = HISI_RX_MWR_FLUX;
                                l.filter.len_mode = c->opts.len_mode;
                                l.filter.thr_len = length_thresholds[b];
                                l.filter.thr_mode = 1; /* shorter than the threshold */
                                l.below_bytes = 4u << length_thresholds[b];
                                ret = plan_add(c, &cap, &l);
                        }
                }
        }
        /* Endpoints: what the device moves as requester: its DMA writes
         * (rx_mwr) and the data its DMA reads bring back (tx_cpl). */
        static const enum hisi_pcie_pair device_pairs[] = {HISI_RX_MWR_FLUX, HISI_TX_CPL_FLUX};

        for (size_t e = 0; c->opts.endpoints && e < c->endpoint_count && !ret; e++) {
                for (size_t k = 0; k < 2 && !ret; k++) {
                        struct measurement m = {.scope = SCOPE_DEVICE,
                                                .pair = device_pairs[k],
                                                .port = c->endpoints[e].port,
                                                .endpoint = e};

                        if (!pmu->offered[m.pair])
                                continue;
                        m.filter.bdf = c->endpoints[e].rid;
                        m.filter.len_mode = c->opts.len_mode;
                        ret = plan_add(c, &cap, &m);
                }
        }
        return ret;
}

int hisi_pcie_core_new(const struct hw_env *env, const struct hisi_pcie_pmu *pmu,
                       const struct pcie_topo *topo, const struct hisi_pcie_opts *opts,
                       struct hisi_pcie_core **out)
{
        struct hisi_pcie_core *c = calloc(1, sizeof(*c));
        int ret;

        *out = NULL;
        if (!c)
                return -ENOMEM;
        c->env = env;
        c->pmu = pmu;
        c->opts = *opts;
        if (c->opts.slots == 0)
                c->opts.slots = 8;
        if (c->opts.flux_unit_bytes <= 0)
                c->opts.flux_unit_bytes = 4;
        if (c->opts.latency_clock_hz <= 0)
                c->opts.latency_clock_hz = 1e9;
        /* The basic detail publishes neither: leaving them out of the plan
         * gives the ports' measurements more of the 8 counter slots. */
        if (c->opts.detail < PCIE_DETAIL_DEFAULT)
                c->opts.tlp_length = c->opts.endpoints = false;
        snprintf(c->sicl, sizeof(c->sicl), "%u", pmu->sicl);
        snprintf(c->core, sizeof(c->core), "%u", pmu->core);
        snprintf(c->identifier, sizeof(c->identifier), "%#llx",
                 (unsigned long long)pmu->identifier);
        for (size_t i = 0; i < pmu->port_count; i++) {
                size_t len = strlen(c->ports_label);

                snprintf(c->ports_label + len, sizeof(c->ports_label) - len, "%s%s", i ? "," : "",
                         pmu->ports[i].bdf);
        }
        ret = collect_ports_and_endpoints(c, topo);
        if (!ret)
                ret = build_plan(c);
        if (!ret && c->count == 0)
                ret = -ENODATA;
        if (!ret) {
                c->items = calloc(c->count, sizeof(*c->items));
                c->window = calloc(c->opts.slots, sizeof(*c->window));
                if (!c->items || !c->window)
                        ret = -ENOMEM;
        }
        if (ret) {
                hisi_pcie_core_free(c);
                return ret;
        }
        for (size_t i = 0; i < c->count; i++)
                c->items[i].pair = c->m[i].pair;
        *out = c;
        return 0;
}

void hisi_pcie_core_stop(struct hisi_pcie_core *c)
{
        for (size_t i = 0; c && i < c->count; i++) {
                perf_group_close(c->m[i].group);
                c->m[i].group = NULL;
                c->m[i].enabled = false;
        }
        if (c) {
                c->started = false;
                c->window_count = 0;
        }
}

void hisi_pcie_core_free(struct hisi_pcie_core *c)
{
        if (!c)
                return;
        hisi_pcie_core_stop(c);
        free(c->m);
        free(c->items);
        free(c->window);
        free(c->endpoints);
        free(c);
}

/* ---- running ---- */

/* Enables the measurements of the next window, disables the others. */
static int apply_window(struct hisi_pcie_core *c)
{
        bool want[c->count ? c->count : 1];
        int ret = 0;

        memset(want, 0, sizeof(want));
        c->window_count = hisi_pcie_plan_window(c->items, c->count, c->opts.slots,
                                                c->pmu->strict_related, &c->cursor, c->window);
        for (size_t k = 0; k < c->window_count; k++)
                want[c->window[k]] = true;
        /* Disable first, so the enabled set never exceeds the slots. */
        for (size_t i = 0; i < c->count; i++) {
                struct measurement *m = &c->m[i];

                if (m->enabled && !want[i]) {
                        int err = perf_group_disable(m->group);

                        if (err && !ret)
                                ret = err;
                        m->enabled = false;
                }
        }
        for (size_t i = 0; i < c->count; i++) {
                struct measurement *m = &c->m[i];

                if (!m->enabled && want[i]) {
                        int err = perf_group_enable(m->group);

                        if (!err)
                                err = perf_group_read(m->group, &m->base);
                        if (err) {
                                if (!ret)
                                        ret = err;
                                continue;
                        }
                        m->enabled = true;
                }
        }
        return ret;
}

/* Opens @m's group (stopped); the error is logged. */
static int open_measurement(struct hisi_pcie_core *c, struct measurement *m)
{
        struct perf_event_attr attrs[2];
        int ret = hisi_pcie_pair_attrs(c->pmu, m->pair, &m->filter, attrs);

        if (ret) {
                hw_logf(c->env, HW_LOG_ERROR, "%s: cannot build the %s event: %s", c->pmu->name,
                        hisi_pcie_pair_info(m->pair)->name, strerror(-ret));
                return ret;
        }
        ret = perf_group_open(c->env, attrs, 2, c->pmu->cpu, &m->group, NULL);
        if (ret)
                hw_logf(c->env, HW_LOG_ERROR,
                        "%s: perf_event_open(%s, cpu %d): %s — %s; this core's counters "
                        "are not collected",
                        c->pmu->name, c->pmu->primary_event[m->pair], c->pmu->cpu, strerror(-ret),
                        perf_open_advice(ret));
        return ret;
}

int hisi_pcie_core_start(struct hisi_pcie_core *c, double now)
{
        double cpu0 = thread_cpu_seconds();
        int ret = 0;

        hisi_pcie_core_stop(c);
        for (size_t i = 0; i < c->count && !ret; i++)
                ret = open_measurement(c, &c->m[i]);
        if (!ret)
                ret = apply_window(c);
        if (ret) {
                hisi_pcie_core_stop(c);
        } else {
                c->started = true;
                c->start_time = now;
        }
        c->cpu_seconds += thread_cpu_seconds() - cpu0;
        return ret;
}

/* Whether @a (of the old plan) and @b (of the new) are the same measurement. */
static bool same_measurement(const struct hisi_pcie_core *c, const struct measurement *a,
                             const struct endpoint_info *old_endpoints, const struct measurement *b)
{
        if (a->pair != b->pair || a->scope != b->scope || a->port != b->port ||
            a->below_bytes != b->below_bytes)
                return false;
        return a->scope != SCOPE_DEVICE ||
               !strcmp(old_endpoints[a->endpoint].bdf, c->endpoints[b->endpoint].bdf);
}

/* Whether @bdf is one of the @n endpoints of @list. */
static bool listed(const struct endpoint_info *list, size_t n, const char *bdf)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(list[i].bdf, bdf))
                        return true;
        return false;
}

int hisi_pcie_core_update(struct hisi_pcie_core *c, const struct pcie_topo *topo)
{
        struct endpoint_info *old_endpoints = c->endpoints, *fresh = NULL;
        size_t old_endpoint_count = c->endpoint_count, fresh_count = 0, old_count = c->count;
        struct measurement *old = c->m;
        struct hisi_pcie_plan_item *items;
        bool *carried;
        size_t added = 0;
        int ret;

        if (!topo || !c->opts.endpoints)
                return 0; /* the ports' measurements do not depend on it */
        ret = collect_endpoints(c, topo, &fresh, &fresh_count);
        if (ret)
                return ret;
        /* Nothing came or went below this core: the plan stands. */
        if (fresh_count == old_endpoint_count) {
                bool same = true;

                for (size_t i = 0; i < fresh_count && same; i++)
                        same = !strcmp(fresh[i].bdf, old_endpoints[i].bdf);
                if (same) {
                        free(fresh);
                        return 0;
                }
        }
        carried = calloc(old_count ? old_count : 1, sizeof(*carried));
        if (!carried) {
                free(fresh);
                return -ENOMEM;
        }
        c->m = NULL;
        c->count = 0;
        c->endpoints = fresh;
        c->endpoint_count = fresh_count;
        ret = build_plan(c);
        items = ret ? NULL : calloc(c->count ? c->count : 1, sizeof(*items));
        if (!items) {
                /* Out of memory: the old plan goes on. */
                free(c->m);
                free(fresh);
                free(carried);
                c->m = old;
                c->count = old_count;
                c->endpoints = old_endpoints;
                c->endpoint_count = old_endpoint_count;
                return -ENOMEM;
        }
        /* What was measured before goes on: its group, its baseline and
         * totals, so its values neither reset nor jump. */
        for (size_t i = 0; i < c->count; i++) {
                struct measurement *m = &c->m[i];

                for (size_t o = 0; o < old_count; o++) {
                        if (carried[o] || !same_measurement(c, &old[o], old_endpoints, m))
                                continue;
                        struct measurement keep = *m;

                        *m = old[o];
                        m->endpoint = keep.endpoint;
                        carried[o] = true;
                        break;
                }
        }
        /* What is gone is closed: its series stop (go stale). */
        for (size_t o = 0; o < old_count; o++)
                if (!carried[o])
                        perf_group_close(old[o].group);
        /* What is new is opened, stopped: the next window enables it, and
         * it has a rate one interval later. One that cannot be opened is
         * left out of the plan. */
        size_t n = 0;

        for (size_t i = 0; i < c->count; i++) {
                struct measurement *m = &c->m[i];

                if (c->started && !m->group && open_measurement(c, m))
                        continue;
                c->m[n++] = *m;
        }
        c->count = n;
        for (size_t e = 0; e < c->endpoint_count; e++) {
                const struct endpoint_info *ep = &c->endpoints[e];

                if (listed(old_endpoints, old_endpoint_count, ep->bdf))
                        continue;
                added++;
                hw_logf(c->env, HW_LOG_INFO,
                        "%s: %s appeared below Root Port %s; its bandwidth is counted from now on",
                        c->pmu->name, ep->bdf, c->ports[ep->port].bdf);
        }
        free(c->items);
        c->items = items;
        for (size_t i = 0; i < c->count; i++)
                c->items[i].pair = c->m[i].pair;
        /* The window is what is enabled now; the next tick reads it and
         * rotates or enables the new measurements. */
        c->window_count = 0;
        for (size_t i = 0; i < c->count && c->window_count < c->opts.slots; i++)
                if (c->m[i].enabled)
                        c->window[c->window_count++] = i;
        if (c->cursor >= c->count)
                c->cursor = 0;
        free(old);
        free(old_endpoints);
        free(carried);
        return (int)added;
}

/* Takes the delta since the base reading into the measurement's estimates. */
static int take_reading(struct measurement *m)
{
        struct perf_group_reading now, d;
        int ret = perf_group_read(m->group, &now);

        if (ret)
                return ret;
        ret = perf_reading_delta(&now, &m->base, &d);
        m->base = now;
        if (ret || d.time_running == 0)
                return ret == -ERANGE ? 0 : ret; /* did not run, or counters reset: skip */
        double running = (double)d.time_running / 1e9;

        m->primary_total += d.values[0];
        m->secondary_total += d.values[1];
        m->running_seconds += running;
        m->primary_per_second = (double)d.values[0] / running;
        m->secondary_per_second = (double)d.values[1] / running;
        m->have_rate = true;
        if (d.values[1]) {
                m->ratio = (double)d.values[0] / (double)d.values[1];
                m->have_ratio = true;
        } else {
                m->have_ratio = false; /* no TLPs: no latency to report */
        }
        return 0;
}

/* ---- samples ---- */

struct emitter {
        struct hisi_pcie_core *c;
        struct sample_emitter out;
};

static struct pcie_sample base_sample(const struct hisi_pcie_core *c,
                                      const struct pcie_family *family)
{
        struct pcie_sample s;

        sample_init(&s, family);
        sample_label(&s, "pmu", c->pmu->name);
        return s;
}

static double bytes_per_second(const struct hisi_pcie_core *c, const struct measurement *m)
{
        return m->primary_per_second * c->opts.flux_unit_bytes;
}

static const char *target_of(const struct hisi_pcie_core *c, const struct measurement *m)
{
        return m->scope == SCOPE_DEVICE ? c->endpoints[m->endpoint].bdf : c->ports[m->port].bdf;
}

/* The share of the time since start that @m counted (1 when the plan fits
 * the slots; less while measurements rotate). */
static double coverage(const struct measurement *m, double elapsed)
{
        double r = elapsed > 0 ? m->running_seconds / elapsed : 0;

        return r > 1 ? 1 : r;
}

/* The raw counters of one measurement, so users can recompute anything
 * (the full detail only). */
static void emit_raw(struct emitter *em, const struct measurement *m, double elapsed)
{
        const struct hisi_pcie_core *c = em->c;
        const struct hisi_pcie_pair_info *pi = hisi_pcie_pair_info(m->pair);
        const char *target = target_of(c, m);
        char below[16] = "";
        struct pcie_sample s;

        /* The primary event's name ("rx_mwr_flux", "rx_mwr_latency") keeps
         * a port's bandwidth and latency pairs of one TLP type apart. */
        if (m->scope == SCOPE_LENGTH)
                snprintf(below, sizeof(below), "%u", m->below_bytes);
        /* Primary and secondary counts. */
        s = base_sample(c, pi->bandwidth ? PCIE_FAM_PMU_FLUX_TOTAL
                                         : PCIE_FAM_PMU_LATENCY_CYCLES_TOTAL);
        sample_label(&s, "target", target);
        sample_label(&s, "event", pi->primary);
        if (below[0])
                sample_label(&s, "shorter_than_bytes", below);
        s.counter = m->primary_total;
        sample_emit(&em->out, &s);
        sample_set_family(&s, pi->bandwidth ? PCIE_FAM_PMU_TIME_TOTAL : PCIE_FAM_PMU_TLPS_TOTAL);
        s.counter = m->secondary_total;
        sample_emit(&em->out, &s);
        sample_set_family(&s, PCIE_FAM_PMU_COUNTING_SECONDS_TOTAL);
        s.gauge = m->running_seconds;
        sample_emit(&em->out, &s);
        sample_set_family(&s, PCIE_FAM_PMU_COVERAGE_RATIO);
        s.gauge = coverage(m, elapsed);
        sample_emit(&em->out, &s);
}

/*
 * What the flux counters add up of a TLP: the kernel's len_mode as it
 * reaches the hardware. Linux 5.17 has no len_mode field and counts
 * payload only; before 6.12 (no bdf_min/bdf_max) the driver always sets
 * bit 34, so "header" counts header and payload.
 */
static enum pcie_counts flux_counts(const struct hisi_pcie_core *c)
{
        if (!c->pmu->has_len_mode || c->opts.len_mode == 1)
                return PCIE_COUNTS_PAYLOAD;
        if (c->opts.len_mode == 2 && c->pmu->has_range)
                return PCIE_COUNTS_HEADER;
        return PCIE_COUNTS_HEADER_PAYLOAD;
}

/* TLPs per second of a bandwidth pair on @port, where the PMU counts
 * them: only inbound MWr has a TLP count (rx_mwr_cnt, the latency pair's
 * second event); -1 for the others. */
static double port_tlps(const struct hisi_pcie_core *c, size_t port, enum hisi_pcie_pair pair)
{
        if (pair != HISI_RX_MWR_FLUX)
                return -1;
        for (size_t i = 0; i < c->count; i++) {
                const struct measurement *m = &c->m[i];

                if (m->port == port && m->scope == SCOPE_PORT && m->pair == HISI_RX_MWR_LATENCY &&
                    m->have_rate)
                        return m->secondary_per_second;
        }
        return -1;
}

static void emit_port_values(struct emitter *em, size_t port)
{
        const struct hisi_pcie_core *c = em->c;
        const struct port_info *p = &c->ports[port];
        struct pcie_util util[2];
        bool dir_have[2] = {false, false};

        pcie_util_init(&util[0], p->capacity, p->mps);
        pcie_util_init(&util[1], p->capacity, p->mps);

        for (size_t i = 0; i < c->count; i++) {
                const struct measurement *m = &c->m[i];
                const struct hisi_pcie_pair_info *pi = hisi_pcie_pair_info(m->pair);
                struct pcie_sample s;

                if (m->port != port || m->scope == SCOPE_DEVICE || !m->have_rate)
                        continue;
                if (m->scope == SCOPE_LENGTH) {
                        char below[16];

                        snprintf(below, sizeof(below), "%u", m->below_bytes);
                        s = base_sample(c, PCIE_FAM_PORT_TLP_LENGTH_BYTES_PER_SECOND);
                        sample_label(&s, "port", p->bdf);
                        sample_label(&s, "event", pi->name);
                        sample_label(&s, "shorter_than_bytes", below);
                        s.gauge = bytes_per_second(c, m);
                        sample_emit(&em->out, &s);
                } else if (pi->bandwidth) {
                        int dir = pi->direction[0] == 't';

                        s = base_sample(c, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND);
                        sample_label(&s, "port", p->bdf);
                        sample_label(&s, "direction", pi->direction);
                        sample_label(&s, "tlp", pi->tlp);
                        s.gauge = bytes_per_second(c, m);
                        sample_emit(&em->out, &s);
                        pcie_util_add(&util[dir], flux_counts(c), s.gauge, strcmp(pi->tlp, "mrd"),
                                      strcmp(pi->tlp, "cpl") ? PCIE_TLP_REQUEST_HEADER_BYTES
                                                             : PCIE_TLP_COMPLETION_HEADER_BYTES,
                                      port_tlps(c, port, m->pair));
                        dir_have[dir] = true;
                } else if (m->have_ratio) {
                        s = base_sample(c, PCIE_FAM_PORT_LATENCY_SECONDS);
                        sample_label(&s, "port", p->bdf);
                        sample_label(&s, "event", pi->name);
                        s.gauge = m->ratio / c->opts.latency_clock_hz;
                        sample_emit(&em->out, &s);
                        if (c->opts.detail < PCIE_DETAIL_FULL)
                                continue; /* the same value in the PMU's clock */
                        sample_set_family(&s, PCIE_FAM_PORT_LATENCY_CYCLES);
                        s.gauge = m->ratio;
                        sample_emit(&em->out, &s);
                }
        }
        /* Utilisation per direction against the link's raw capacity and
         * against what it can carry at its MPS (pcie_util, pcie_link.h). */
        for (int dir = 0; dir < 2 && p->capacity; dir++) {
                static const char *const names[2] = {"rx", "tx"};
                struct pcie_sample s;

                if (!dir_have[dir])
                        continue;
                s = base_sample(c, PCIE_FAM_PORT_UTILIZATION_RATIO);
                sample_label(&s, "port", p->bdf);
                sample_label(&s, "direction", names[dir]);
                pcie_util_emit(&util[dir], &s, &em->out);
        }
}

/* Endpoint bandwidth of the device with the latest estimates. */
static double endpoint_bytes(const struct hisi_pcie_core *c, size_t e)
{
        double sum = 0;

        for (size_t i = 0; i < c->count; i++)
                if (c->m[i].scope == SCOPE_DEVICE && c->m[i].endpoint == e && c->m[i].have_rate)
                        sum += bytes_per_second(c, &c->m[i]);
        return sum;
}

/* Without an endpoint filter only the top talkers are published. */
static bool endpoint_published(const struct hisi_pcie_core *c, size_t e)
{
        double mine = endpoint_bytes(c, e);
        size_t above = 0;

        if (c->endpoints[e].gone)
                return false;
        if (c->opts.endpoint_filter)
                return true;
        for (size_t o = 0; o < c->endpoint_count; o++) {
                double theirs = endpoint_bytes(c, o);

                above += theirs > mine || (theirs == mine && o < e);
        }
        return above < c->opts.top_talkers;
}

static void emit_endpoints(struct emitter *em, double elapsed)
{
        const struct hisi_pcie_core *c = em->c;

        for (size_t i = 0; i < c->count; i++) {
                const struct measurement *m = &c->m[i];
                const struct hisi_pcie_pair_info *pi = hisi_pcie_pair_info(m->pair);
                const struct endpoint_info *e;
                struct pcie_sample s;

                if (m->scope != SCOPE_DEVICE || !m->have_rate ||
                    !endpoint_published(c, m->endpoint))
                        continue;
                e = &c->endpoints[m->endpoint];
                s = base_sample(c, PCIE_FAM_DEVICE_BANDWIDTH_BYTES_PER_SECOND);
                sample_label(&s, "device", e->bdf);
                sample_label(&s, "port", c->ports[e->port].bdf);
                sample_label(&s, "direction", pi->direction);
                sample_label(&s, "tlp", pi->tlp);
                s.gauge = bytes_per_second(c, m);
                sample_emit(&em->out, &s);
                if (c->opts.detail >= PCIE_DETAIL_FULL)
                        emit_raw(em, m, elapsed);
        }
}

static void emit_core(struct emitter *em, double elapsed)
{
        const struct hisi_pcie_core *c = em->c;
        struct pcie_sample s;

        s = base_sample(c, PCIE_FAM_PMU_INFO);
        sample_label(&s, "sicl", c->sicl);
        sample_label(&s, "core", c->core);
        sample_label(&s, "identifier", c->identifier);
        sample_label(&s, "ports", c->ports_label);
        s.gauge = 1;
        sample_emit(&em->out, &s);

        s = base_sample(c, PCIE_FAM_PMU_MEASUREMENTS);
        s.gauge = (double)c->count;
        sample_emit(&em->out, &s);
        sample_set_family(&s, PCIE_FAM_PMU_MEASUREMENTS_COUNTING);
        s.gauge = (double)c->window_count;
        sample_emit(&em->out, &s);

        if (c->opts.detail >= PCIE_DETAIL_FULL) {
                for (size_t i = 0; i < c->count; i++)
                        if (c->m[i].scope != SCOPE_DEVICE && c->m[i].have_rate)
                                emit_raw(em, &c->m[i], elapsed);
                return;
        }
        /* Below full, coverage is the core's: its worst measurement. */
        double worst = 2;

        for (size_t i = 0; i < c->count; i++)
                if (c->m[i].have_rate && coverage(&c->m[i], elapsed) < worst)
                        worst = coverage(&c->m[i], elapsed);
        if (worst > 1)
                return; /* nothing has counted yet */
        s = base_sample(c, PCIE_FAM_PMU_COVERAGE_RATIO);
        s.gauge = worst;
        sample_emit(&em->out, &s);
}

/* An endpoint removed by surprise (or whose link failed) leaves sysfs: its
 * series stop (its filter counts nothing) until it is back, and the
 * monitor logs the change. */
static void mark_gone_endpoints(struct hisi_pcie_core *c)
{
        char buf[16];

        if (!c->env->sysfs_root)
                return;
        for (size_t e = 0; e < c->endpoint_count; e++)
                c->endpoints[e].gone =
                    hw_read_file(c->env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s/vendor",
                                 c->endpoints[e].bdf) == -ENOENT;
}

int hisi_pcie_core_tick(struct hisi_pcie_core *c, double now, struct sample_set *out)
{
        double cpu0 = thread_cpu_seconds();
        struct emitter em = {.c = c, .out = {.set = out}};
        struct pcie_sample s;
        int ret = 0;

        if (!c->started)
                return -ENODEV;
        for (size_t k = 0; k < c->window_count; k++) {
                int err = take_reading(&c->m[c->window[k]]);

                if (err && !ret)
                        ret = err;
        }
        /* Rotate only when the plan does not fit; otherwise the groups keep
         * counting and the next tick reads on from here. */
        if (c->window_count < c->count) {
                int err = apply_window(c);

                if (err && !ret)
                        ret = err;
        }
        double elapsed = now - c->start_time;

        mark_gone_endpoints(c);
        for (size_t p = 0; p < c->port_count; p++)
                emit_port_values(&em, p);
        emit_endpoints(&em, elapsed);
        emit_core(&em, elapsed);

        c->cpu_seconds += thread_cpu_seconds() - cpu0;
        s = base_sample(c, PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL);
        s.gauge = c->cpu_seconds;
        sample_emit(&em.out, &s);
        return ret ? ret : em.out.err;
}
