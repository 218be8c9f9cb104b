// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dwc_pcie.c - the Synopsys DesignWare PCIe PMUs: name to Root Port, the
 * rx/tx rotation of each port's one time-based counter, and the samples
 * (dwc_pcie.h says what the counter counts and how often it must be read).
 */
#include "dwc_pcie.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_env.h"
#include "pcie_families.h"
#include "pcie_link.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "perf_pmu.h"

/* ---- pure parts ---- */

int dwc_pcie_parse_name(const char *name, uint32_t *id, bool *has_segment)
{
        const size_t plen = sizeof(DWC_PCIE_PMU_PREFIX) - 1;
        unsigned long long v = 0;
        const char *p;

        if (!name || strncmp(name, DWC_PCIE_PMU_PREFIX, plen))
                return -EINVAL;
        p = name + plen;
        if (!*p)
                return -EINVAL;
        for (; *p; p++) {
                int digit = *p >= '0' && *p <= '9'   ? *p - '0'
                            : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                                                     : -1; /* the kernel prints %x */

                if (digit < 0 || v > 0xffffffffULL >> 4)
                        return -EINVAL;
                v = v << 4 | (unsigned int)digit;
        }
        *id = (uint32_t)v;
        *has_segment = v > 0xffff;
        return 0;
}

int dwc_pcie_match_port(uint32_t id, const struct pci_addr *ports, size_t count)
{
        uint16_t bdf = (uint16_t)(id & 0xffff);
        int found = -ENOENT;

        for (size_t i = 0; i < count; i++) {
                uint16_t rid = (uint16_t)(ports[i].bus << 8 | ports[i].dev << 3 | ports[i].func);

                if (rid != bdf)
                        continue;
                if (id > 0xffff) {
                        if (ports[i].domain == id >> 16)
                                return (int)i;
                        continue;
                }
                if (found >= 0)
                        return -EEXIST; /* the same BDF in two segments */
                found = (int)i;
        }
        return found;
}

double dwc_pcie_safe_read_seconds(unsigned int counter_bits, double bytes_per_second)
{
        if (bytes_per_second <= 0)
                bytes_per_second = DWC_PCIE_FASTEST_LINK_BYTES;
        if (counter_bits > 64)
                counter_bits = 64;
        return ldexp(1.0, (int)counter_bits) / bytes_per_second / 2;
}

double dwc_pcie_slice_seconds(double interval, double safe_read)
{
        double half = interval / 2;

        return safe_read > 0 && safe_read < half ? safe_read : half;
}

/* ---- the collector ---- */

struct dwc_count {
        struct perf_group *g;
        struct perf_group_reading last; /* the reading the next delta starts from */
        bool have_last;
        uint64_t bytes_total;   /* payload bytes counted since start */
        double running_seconds; /* counting time since start */
        double per_second;      /* the latest slice's rate */
        bool have_rate;
};

struct dwc_port {
        char pmu_name[PERF_PMU_NAME_MAX];
        struct perf_pmu *pmu;
        char bdf[PCI_BDF_LEN];
        uint64_t capacity; /* bytes/s per direction at the current speed/width */
        unsigned int mps;
        double safe_read; /* seconds */
        struct dwc_count dir[DWC_PCIE_DIRS];
};

struct dwc_pcie {
        const struct hw_env *env;
        const struct dwc_pcie_opts *opts;
        double interval, slice;
        size_t count;
        struct dwc_port *ports;
        bool started;
        enum dwc_pcie_dir counting; /* the direction every port counts now */
        double start_time, next_switch, next_publish;
        size_t counting_ports; /* ports whose counter is enabled */
        double cpu_seconds;    /* CPU time spent in start and tick */
};

/* CPU time of the calling thread (the collector runs on its own). */
static double thread_cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                return 0;
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const uint16_t event_of[DWC_PCIE_DIRS] = {DWC_PCIE_EVENT_RX_PAYLOAD,
                                                 DWC_PCIE_EVENT_TX_PAYLOAD};
static const char *const dir_name[DWC_PCIE_DIRS] = {"rx", "tx"};

/* Whether the PMU's events/ offers time-based event @eventid (by its
 * terms: the names changed case in v6.13, the ids did not). */
static bool offers(const struct perf_pmu *pmu, uint16_t eventid)
{
        for (size_t i = 0; i < perf_pmu_event_count(pmu); i++) {
                const struct perf_pmu_event *ev = perf_pmu_event_at(pmu, i);
                bool id = false, type = true;

                for (size_t t = 0; t < ev->term_count; t++) {
                        if (!strcmp(ev->terms[t].name, "eventid"))
                                id = ev->terms[t].value == eventid;
                        else if (!strcmp(ev->terms[t].name, "type"))
                                type = ev->terms[t].value == DWC_PCIE_TIME_BASED_TYPE;
                }
                if (id && type)
                        return true;
        }
        return false;
}

/* The Root Ports of @topo, as addresses (the index into @topo in @index). */
static size_t root_ports(const struct pcie_topo *topo, struct pci_addr *addrs, size_t *index,
                         size_t max)
{
        size_t n = 0;

        for (size_t t = 0; t < pcie_topo_count(topo) && n < max; t++) {
                const struct pcie_function *f = pcie_topo_get(topo, t);

                if (f->info.port_type != PCIE_PORT_ROOT_PORT)
                        continue;
                addrs[n] = f->addr;
                index[n++] = t;
        }
        return n;
}

/* A BDF-only name that two segments share: the PMU's parent is its Root
 * Port, so its directory is below that port's. */
static int match_by_parent(const struct hw_env *env, const char *name, uint32_t id,
                           const struct pcie_topo *topo, const size_t *index, size_t count)
{
        int found = -ENOENT;
        char text[16];

        for (size_t i = 0; i < count; i++) {
                const struct pcie_function *f = pcie_topo_get(topo, index[i]);

                if ((uint16_t)(f->addr.bus << 8 | f->addr.dev << 3 | f->addr.func) != id)
                        continue;
                if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/%s/type",
                                 f->bdf, name) > 0)
                        found = (int)i;
        }
        return found;
}

#define MAX_PORTS 256

/* Maps PMU @name to a Root Port and fills @p. 0, -ENOENT (logged), -ENOMEM. */
static int add_port(struct dwc_pcie *d, const char *name, const struct pcie_topo *topo,
                    const struct pci_addr *addrs, const size_t *index, size_t nports)
{
        const struct hw_env *env = d->env;
        struct dwc_port *p = &d->ports[d->count];
        const struct pcie_function *f;
        bool has_segment;
        uint32_t id;
        int at, err;

        if (dwc_pcie_parse_name(name, &id, &has_segment)) {
                hw_logf(env, HW_LOG_WARNING, "%s: not a dwc_rootport_<hex> name; left out", name);
                return -ENOENT;
        }
        at = dwc_pcie_match_port(id, addrs, nports);
        if (at == -EEXIST)
                at = match_by_parent(env, name, id, topo, index, nports);
        if (at < 0) {
                hw_logf(env, HW_LOG_WARNING,
                        "%s: no Root Port %s%02x:%02x.%x in the PCI tree; its counter is left out",
                        name, has_segment ? "with segment, bus, device " : "at bus, device ",
                        (id >> 8) & 0xff, (id >> 3) & 0x1f, id & 7);
                return -ENOENT;
        }
        err = perf_pmu_load(env, name, &p->pmu);
        if (err == -ENOMEM)
                return err;
        if (err) {
                hw_logf(env, HW_LOG_WARNING, "%s: cannot read the PMU: %s", name, strerror(-err));
                return -ENOENT;
        }
        if (!offers(p->pmu, DWC_PCIE_EVENT_RX_PAYLOAD) ||
            !offers(p->pmu, DWC_PCIE_EVENT_TX_PAYLOAD) || !perf_pmu_format(p->pmu, "eventid") ||
            !perf_pmu_format(p->pmu, "type") || !perf_pmu_cpu_count(p->pmu)) {
                hw_logf(env, HW_LOG_WARNING,
                        "%s: no Rx/Tx_PCIe_TLP_Data_Payload events (eventid 0x21/0x20, type 0), "
                        "eventid/type formats or cpumask; left out",
                        name);
                perf_pmu_free(p->pmu);
                p->pmu = NULL;
                return -ENOENT;
        }
        f = pcie_topo_get(topo, index[at]);
        snprintf(p->pmu_name, sizeof(p->pmu_name), "%s", name);
        snprintf(p->bdf, sizeof(p->bdf), "%s", f->bdf);
        if (f->info.has_link && f->link_up)
                p->capacity = f->capacity_current;
        p->mps = pcie_topo_link_mps(topo, index[at]);
        p->safe_read = dwc_pcie_safe_read_seconds(
            64, f->capacity_max ? (double)f->capacity_max : DWC_PCIE_FASTEST_LINK_BYTES);
        d->count++;
        return 0;
}

static int by_bdf(const void *a, const void *b)
{
        return strcmp(((const struct dwc_port *)a)->bdf, ((const struct dwc_port *)b)->bdf);
}

int dwc_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                      const struct dwc_pcie_opts *opts, double interval, struct dwc_pcie **out)
{
        struct pci_addr *addrs = NULL;
        size_t *index = NULL, nports, n = 0;
        struct dwc_pcie *d = NULL;
        char **names = NULL;
        int err;

        *out = NULL;
        if (!topo || interval <= 0)
                return 0;
        err = perf_pmu_list(env, DWC_PCIE_PMU_PREFIX, &names);
        if (err < 0)
                return err == -ENOMEM ? err : 0;
        err = 0;
        while (names && names[n])
                n++;
        if (!n) {
                perf_pmu_list_free(names);
                return 0;
        }
        addrs = calloc(MAX_PORTS, sizeof(*addrs));
        index = calloc(MAX_PORTS, sizeof(*index));
        d = calloc(1, sizeof(*d));
        if (d)
                d->ports = calloc(n, sizeof(*d->ports));
        if (!addrs || !index || !d || !d->ports) {
                err = -ENOMEM;
                goto done;
        }
        d->env = env;
        d->opts = opts;
        d->interval = interval;
        nports = root_ports(topo, addrs, index, MAX_PORTS);
        for (size_t i = 0; i < n && !err; i++) {
                err = add_port(d, names[i], topo, addrs, index, nports);
                if (err == -ENOENT)
                        err = 0;
        }
        if (err)
                goto done;
        qsort(d->ports, d->count, sizeof(*d->ports), by_bdf);
        d->slice = interval / 2;
        for (size_t i = 0; i < d->count; i++)
                d->slice = dwc_pcie_slice_seconds(interval, d->ports[i].safe_read) < d->slice
                               ? dwc_pcie_slice_seconds(interval, d->ports[i].safe_read)
                               : d->slice;
done:
        free(addrs);
        free(index);
        perf_pmu_list_free(names);
        if (err || !d->count) {
                dwc_pcie_free(d);
                return err;
        }
        *out = d;
        return 0;
}

void dwc_pcie_stop(struct dwc_pcie *d)
{
        if (!d)
                return;
        for (size_t i = 0; i < d->count; i++) {
                for (int k = 0; k < DWC_PCIE_DIRS; k++) {
                        perf_group_close(d->ports[i].dir[k].g);
                        d->ports[i].dir[k].g = NULL;
                        d->ports[i].dir[k].have_last = false;
                }
        }
        d->started = false;
}

void dwc_pcie_free(struct dwc_pcie *d)
{
        if (!d)
                return;
        dwc_pcie_stop(d);
        for (size_t i = 0; d->ports && i < d->count; i++)
                perf_pmu_free(d->ports[i].pmu);
        free(d->ports);
        free(d);
}

static int open_count(const struct hw_env *env, struct dwc_port *p, enum dwc_pcie_dir dir)
{
        struct perf_event_attr attr;
        int err;

        memset(&attr, 0, sizeof(attr));
        attr.size = sizeof(attr);
        attr.type = perf_pmu_type(p->pmu);
        err = perf_pmu_set(p->pmu, &attr, "eventid", event_of[dir]);
        if (!err)
                err = perf_pmu_set(p->pmu, &attr, "type", DWC_PCIE_TIME_BASED_TYPE);
        if (!err)
                err = perf_group_open(env, &attr, 1, perf_pmu_cpu(p->pmu, 0), &p->dir[dir].g, NULL);
        return err;
}

/* Enables direction @dir on every port (the other one is off). */
static int enable_all(struct dwc_pcie *d, enum dwc_pcie_dir dir)
{
        int ret = 0;

        d->counting = dir;
        d->counting_ports = 0;
        for (size_t i = 0; i < d->count; i++) {
                int err = perf_group_enable(d->ports[i].dir[dir].g);

                if (err && !ret)
                        ret = err;
                d->counting_ports += !err;
        }
        return ret;
}

int dwc_pcie_start(struct dwc_pcie *d, double now)
{
        int err = 0;

        if (d->started)
                return 0;
        for (size_t i = 0; i < d->count && !err; i++) {
                for (int k = 0; k < DWC_PCIE_DIRS && !err; k++) {
                        err = open_count(d->env, &d->ports[i], (enum dwc_pcie_dir)k);
                        if (err)
                                hw_logf(d->env, HW_LOG_ERROR, "%s: cannot open %s payload: %s",
                                        d->ports[i].pmu_name, dir_name[k], perf_open_advice(err));
                }
        }
        if (!err)
                err = enable_all(d, DWC_PCIE_RX);
        if (err) {
                dwc_pcie_stop(d);
                return err;
        }
        d->cpu_seconds = 0;
        d->started = true;
        d->start_time = now;
        d->next_publish = now + d->interval;
        d->next_switch = now + d->slice;
        return 0;
}

/* Reads direction @dir of port @p and disables it: the slice's bytes over
 * its counting time. A slice that did not count (the counter was taken by
 * someone else: -ENOSPC in the driver's add) leaves no rate. */
static int take_slice(struct dwc_port *p, enum dwc_pcie_dir dir)
{
        struct dwc_count *c = &p->dir[dir];
        struct perf_group_reading now, delta;
        double running;
        int err;

        err = perf_group_disable(c->g);
        if (!err)
                err = perf_group_read(c->g, &now);
        c->have_rate = false;
        if (err)
                return err;
        if (c->have_last && !perf_reading_delta(&now, &c->last, &delta)) {
                running = (double)delta.time_running / 1e9;
                if (running > 0) {
                        c->bytes_total += delta.values[0];
                        c->running_seconds += running;
                        c->per_second = (double)delta.values[0] / running;
                        c->have_rate = true;
                }
        } else if (!c->have_last && now.time_running > 0) {
                /* The first slice: counted from open. */
                running = (double)now.time_running / 1e9;
                c->bytes_total += now.values[0];
                c->running_seconds += running;
                c->per_second = (double)now.values[0] / running;
                c->have_rate = true;
        }
        c->last = now;
        c->have_last = true;
        return 0;
}

static int take_all(struct dwc_pcie *d, enum dwc_pcie_dir dir)
{
        int ret = 0;

        for (size_t i = 0; i < d->count; i++) {
                int err = take_slice(&d->ports[i], dir);

                if (err && !ret)
                        ret = err;
        }
        return ret;
}

static struct pcie_sample port_sample(const struct dwc_port *p, const struct pcie_family *family)
{
        struct pcie_sample s;

        sample_init(&s, family);
        sample_label(&s, "pmu", p->pmu_name);
        return s;
}

static double coverage(const struct dwc_count *c, double elapsed)
{
        double r = elapsed > 0 ? c->running_seconds / elapsed : 0;

        return r > 1 ? 1 : r;
}

static void emit_port(struct sample_emitter *em, const struct dwc_pcie *d, const struct dwc_port *p,
                      double elapsed)
{
        struct pcie_sample s;

        s = port_sample(p, PCIE_FAM_PMU_INFO);
        sample_label(&s, "ports", p->bdf);
        s.gauge = 1;
        sample_emit(em, &s);
        for (int k = 0; k < DWC_PCIE_DIRS; k++) {
                const struct dwc_count *c = &p->dir[k];
                struct pcie_util u;

                if (!c->have_rate)
                        continue; /* not measured: absent, not zero */
                s = port_sample(p, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND);
                sample_label(&s, "port", p->bdf);
                sample_label(&s, "direction", dir_name[k]);
                sample_label(&s, "tlp", "all");
                s.gauge = c->per_second;
                sample_emit(em, &s);
                if (!p->capacity)
                        continue;
                /* Payload only. Towards the host it is mostly DMA writes
                 * (4DW request headers), towards the device mostly the
                 * completions of DMA reads (3DW headers). */
                pcie_util_init(&u, p->capacity, p->mps);
                pcie_util_add(&u, PCIE_COUNTS_PAYLOAD, c->per_second, true,
                              k == DWC_PCIE_RX ? PCIE_TLP_REQUEST_HEADER_BYTES
                                               : PCIE_TLP_COMPLETION_HEADER_BYTES,
                              -1);
                s = port_sample(p, PCIE_FAM_PORT_UTILIZATION_RATIO);
                sample_label(&s, "port", p->bdf);
                sample_label(&s, "direction", dir_name[k]);
                pcie_util_emit(&u, &s, em);
        }
        if (d->opts->detail >= PCIE_DETAIL_FULL) {
                for (int k = 0; k < DWC_PCIE_DIRS; k++) {
                        const struct dwc_count *c = &p->dir[k];
                        const char *event = k == DWC_PCIE_RX ? "rx_pcie_tlp_data_payload"
                                                             : "tx_pcie_tlp_data_payload";

                        s = port_sample(p, PCIE_FAM_PMU_COUNTING_SECONDS_TOTAL);
                        sample_label(&s, "target", p->bdf);
                        sample_label(&s, "event", event);
                        s.gauge = c->running_seconds;
                        sample_emit(em, &s);
                        sample_set_family(&s, PCIE_FAM_PMU_COVERAGE_RATIO);
                        s.gauge = coverage(c, elapsed);
                        sample_emit(em, &s);
                }
                return;
        }
        /* Below full, the PMU's coverage: its worse direction. */
        double rx = coverage(&p->dir[DWC_PCIE_RX], elapsed);
        double tx = coverage(&p->dir[DWC_PCIE_TX], elapsed);

        s = port_sample(p, PCIE_FAM_PMU_COVERAGE_RATIO);
        s.gauge = rx < tx ? rx : tx;
        sample_emit(em, &s);
}

static void emit_all(struct dwc_pcie *d, double now, struct sample_set *out, int *err)
{
        struct sample_emitter em = {.set = out};
        double elapsed = now - d->start_time;
        struct pcie_sample s;

        for (size_t i = 0; i < d->count; i++)
                emit_port(&em, d, &d->ports[i], elapsed);
        /* One thread counts every port: its CPU time under one name. */
        sample_init(&s, PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL);
        sample_label(&s, "pmu", "dwc_rootport");
        s.gauge = d->cpu_seconds;
        sample_emit(&em, &s);
        if (em.err && !*err)
                *err = em.err;
}

int dwc_pcie_tick(struct dwc_pcie *d, double now, struct sample_set *out, int *read_err)
{
        double cpu0 = thread_cpu_seconds();
        int err;

        *read_err = 0;
        if (!d->started)
                return -ENODEV;
        if (d->counting == DWC_PCIE_RX && now >= d->next_switch && now < d->next_publish) {
                err = take_all(d, DWC_PCIE_RX);
                int e2 = enable_all(d, DWC_PCIE_TX);

                d->next_switch = d->next_publish + d->slice; /* of the next interval */
                *read_err = err ? err : e2;
                d->cpu_seconds += thread_cpu_seconds() - cpu0;
                return 0;
        }
        if (now < d->next_publish)
                return 0;
        /* The end of an interval (or a late tick that missed the switch:
         * then rx counted all along and tx has no rate this time). */
        err = take_all(d, d->counting);
        if (d->counting == DWC_PCIE_RX)
                for (size_t i = 0; i < d->count; i++)
                        d->ports[i].dir[DWC_PCIE_TX].have_rate = false;
        int e2 = enable_all(d, DWC_PCIE_RX);

        if (!err)
                err = e2;
        /* A collector that fell behind (suspend, overload) skips ahead. */
        d->next_publish += d->interval;
        if (d->next_publish <= now)
                d->next_publish = now + d->interval;
        d->next_switch = d->next_publish - d->interval + d->slice;
        d->cpu_seconds += thread_cpu_seconds() - cpu0;
        emit_all(d, now, out, &err);
        *read_err = err;
        return 1;
}

double dwc_pcie_next_tick(const struct dwc_pcie *d)
{
        return d->counting == DWC_PCIE_RX && d->next_switch < d->next_publish ? d->next_switch
                                                                              : d->next_publish;
}

size_t dwc_pcie_port_count(const struct dwc_pcie *d)
{
        return d ? d->count : 0;
}
