// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_dwc_pcie.c - the simulated Synopsys DesignWare PCIe PMUs: sysfs
 * directories as the kernel's dwc_pcie_pmu writes them, and the counters
 * (sim_dwc_pcie.h says what they count and which opens fail).
 */
#define _GNU_SOURCE
#include "sim_dwc_pcie.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw_env.h"
#include "sim_events.h"
#include "sim_pmu_core.h"
#include "sim_traffic.h"

#define MAX_EVENTS 1024

/* ---- names and sysfs ---- */

static uint32_t port_id(const struct sim_machine *m, size_t i)
{
        const struct sim_device *d = &m->devices[m->dwc.ports[i]];
        uint32_t rid = sim_device_rid(d);

        return m->kernel >= SIM_KERNEL_6_12 ? (uint32_t)d->domain << 16 | rid : rid;
}

void sim_dwc_pmu_name(const struct sim_machine *m, size_t i, char *buf, size_t size)
{
        snprintf(buf, size, "dwc_rootport_%x", port_id(m, i));
}

/* Whether an earlier port took the same name (before 6.12: the same BDF
 * in another segment), so the kernel refused to register this one. */
static bool name_taken(const struct sim_machine *m, size_t i)
{
        for (size_t j = 0; j < i; j++)
                if (sim_dwc_has_pmu(m, j) && port_id(m, j) == port_id(m, i))
                        return true;
        return false;
}

struct dwc_event_name {
        const char *name, *lower; /* before 6.13, and from then on */
        uint16_t id;
        bool lane;
};

/* The driver's event attributes (names changed case and two typos were
 * fixed in 6.13; the ids did not change). */
static const struct dwc_event_name event_names[] = {
    {"one_cycle", "one_cycle", 0x00, false},
    {"TX_L0S", "tx_l0s", 0x01, false},
    {"RX_L0S", "rx_l0s", 0x02, false},
    {"L0", "l0", 0x03, false},
    {"L1", "l1", 0x04, false},
    {"L1_1", "l1_1", 0x05, false},
    {"L1_2", "l1_2", 0x06, false},
    {"CFG_RCVRY", "cfg_rcvry", 0x07, false},
    {"TX_RX_L0S", "tx_rx_l0s", 0x08, false},
    {"L1_AUX", "l1_aux", 0x09, false},
    {"Tx_PCIe_TLP_Data_Payload", "tx_pcie_tlp_data_payload", 0x20, false},
    {"Rx_PCIe_TLP_Data_Payload", "rx_pcie_tlp_data_payload", 0x21, false},
    {"Tx_CCIX_TLP_Data_Payload", "tx_ccix_tlp_data_payload", 0x22, false},
    {"Rx_CCIX_TLP_Data_Payload", "rx_ccix_tlp_data_payload", 0x23, false},
    {"tx_ack_dllp", "tx_ack_dllp", 0x600, true},
    {"tx_update_fc_dllp", "tx_update_fc_dllp", 0x601, true},
    {"rx_ack_dllp", "rx_ack_dllp", 0x602, true},
    {"rx_update_fc_dllp", "rx_update_fc_dllp", 0x603, true},
    {"rx_nulified_tlp", "rx_nullified_tlp", 0x604, true},
    {"tx_nulified_tlp", "tx_nullified_tlp", 0x605, true},
    {"rx_duplicate_tl", "rx_duplicate_tlp", 0x606, true},
    {"tx_memory_write", "tx_memory_write", 0x700, true},
    {"tx_memory_read", "tx_memory_read", 0x701, true},
    {"tx_completion_with_data", "tx_completion_with_data", 0x707, true},
    {"rx_memory_write", "rx_memory_write", 0x70B, true},
    {"rx_memory_read", "rx_memory_read", 0x70C, true},
    {"rx_completion_with_data", "rx_completion_with_data", 0x712, true},
    {"rx_atomic", "rx_atomic", 0x714, true},
};

static int put(const char *dir, const char *name, const char *text, char *errbuf, size_t errlen)
{
        char path[PATH_MAX];
        FILE *f;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
                snprintf(errbuf, errlen, "path too long below %s", dir);
                return -ENAMETOOLONG;
        }
        f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f)) {
                int err = errno ? errno : EIO;

                snprintf(errbuf, errlen, "cannot write %s: %s", path, strerror(err));
                return -err;
        }
        return 0;
}

static int mkdir_at(const char *path, char *errbuf, size_t errlen)
{
        if (mkdir(path, 0755) && errno != EEXIST) {
                int err = errno;

                snprintf(errbuf, errlen, "cannot create %s: %s", path, strerror(err));
                return -err;
        }
        return 0;
}

static int write_one(const struct sim_machine *m, const char *root, size_t i, char *errbuf,
                     size_t errlen)
{
        const struct sim_device *d = &m->devices[m->dwc.ports[i]];
        bool lower = m->kernel >= SIM_KERNEL_6_15;
        char name[64], bdf[16], dir[PATH_MAX], sub[PATH_MAX], link[PATH_MAX], text[96];
        int r;

        sim_dwc_pmu_name(m, i, name, sizeof(name));
        sim_device_bdf(d, bdf, sizeof(bdf));
        if ((size_t)snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s/%s", root, bdf, name) >=
                sizeof(dir) ||
            (size_t)snprintf(link, sizeof(link), "%s/sys/bus/event_source/devices/%s", root,
                             name) >= sizeof(link)) {
                snprintf(errbuf, errlen, "path too long below %s", root);
                return -ENAMETOOLONG;
        }
        r = mkdir_at(dir, errbuf, errlen);
        snprintf(text, sizeof(text), "%u\n", SIM_DWC_TYPE_BASE + (unsigned int)i);
        if (!r)
                r = put(dir, "type", text, errbuf, errlen);
        snprintf(text, sizeof(text), "%d\n", m->dwc.rcs[m->dwc.port_rc[i]].cpu);
        if (!r)
                r = put(dir, "cpumask", text, errbuf, errlen);
        if (!r && (size_t)snprintf(sub, sizeof(sub), "%s/format", dir) >= sizeof(sub))
                r = -ENAMETOOLONG;
        if (!r)
                r = mkdir_at(sub, errbuf, errlen);
        if (!r)
                r = put(sub, "eventid", "config:0-15\n", errbuf, errlen);
        if (!r)
                r = put(sub, "type", "config:16-19\n", errbuf, errlen);
        if (!r)
                r = put(sub, "lane", "config:20-27\n", errbuf, errlen);
        if (!r && (size_t)snprintf(sub, sizeof(sub), "%s/events", dir) >= sizeof(sub))
                r = -ENAMETOOLONG;
        if (!r)
                r = mkdir_at(sub, errbuf, errlen);
        for (size_t k = 0; !r && k < sizeof(event_names) / sizeof(event_names[0]); k++) {
                const struct dwc_event_name *e = &event_names[k];

                if (e->lane)
                        snprintf(text, sizeof(text), "eventid=0x%x,type=0x1,lane=?\n", e->id);
                else
                        snprintf(text, sizeof(text), "eventid=0x%x,type=0x0\n", e->id);
                r = put(sub, lower ? e->lower : e->name, text, errbuf, errlen);
        }
        /* The PMU's parent is the Root Port: event_source links to it. */
        if (!r &&
            (size_t)snprintf(sub, sizeof(sub), "../../pci/devices/%s/%s", bdf, name) >= sizeof(sub))
                r = -ENAMETOOLONG;
        if (!r && symlink(sub, link) && errno != EEXIST) {
                r = -errno;
                snprintf(errbuf, errlen, "cannot link %s: %s", link, strerror(errno));
        }
        return r;
}

int sim_dwc_sysfs_write(const struct sim_machine *m, const char *root, char *errbuf, size_t errlen)
{
        int r = 0;

        for (size_t i = 0; i < m->dwc.port_count && !r; i++)
                if (sim_dwc_has_pmu(m, i) && !name_taken(m, i))
                        r = write_one(m, root, i, errbuf, errlen);
        return r;
}

/* ---- the counters ---- */

struct dwc_event {
        struct sim_pmu_event e;
        size_t port;       /* index into m->dwc.ports */
        unsigned int type; /* 0 time-based, 1 lane */
        uint16_t id;
        double value; /* what the hardware counted, in bytes (or events) */
        double enabled_s, running_s;
};

struct sim_dwc {
        struct sim_pmu_core core;
        const struct sim_machine *m;
        double last;
};

#define ev_at(p, slot) SIM_PMU_EVENT_AT(&(p)->core, slot, struct dwc_event)

double sim_dwc_now(struct sim_dwc *p)
{
        return sim_pmu_core_now(&p->core);
}

/* Payload bytes per second (scale 1) of device @dev: received by its Root
 * Port (@rx: DMA writes, completions of CPU reads) or sent. */
static double device_rate(const struct sim_machine *m, size_t dev, bool rx)
{
        enum sim_tlp_class a = rx ? SIM_RX_MWR : SIM_TX_CPL;
        enum sim_tlp_class b = rx ? SIM_RX_CPL : SIM_TX_MWR;
        struct sim_tlp_rates r;
        double dw;

        if (!m->devices[dev].has_workload)
                return 0;
        sim_traffic_rates(m, dev, a, &r);
        dw = r.payload_dw;
        sim_traffic_rates(m, dev, b, &r);
        return (dw + r.payload_dw) * 4;
}

void sim_truth_dwc_port(const struct sim_dwc *p, size_t i, double t0, double t1, double *rx_bytes,
                        double *tx_bytes)
{
        const struct sim_machine *m = p->m;
        size_t port;

        *rx_bytes = 0;
        *tx_bytes = 0;
        if (i >= m->dwc.port_count)
                return;
        port = m->dwc.ports[i];
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double integral;

                if (dev == port || !m->devices[dev].has_workload ||
                    sim_machine_root_port(m, dev) != port)
                        continue;
                integral = sim_device_traffic_integral(m, dev, t0, t1);
                *rx_bytes += device_rate(m, dev, true) * integral;
                *tx_bytes += device_rate(m, dev, false) * integral;
        }
}

/* Enabled events of @type on the PMU of port @port (they share its one
 * counter). */
static size_t sharing(const struct sim_dwc *p, size_t port, unsigned int type)
{
        size_t n = 0;

        for (size_t i = 0; i < p->core.used_max; i++) {
                const struct dwc_event *e = ev_at(p, i);

                n += e->e.used && e->port == port && e->type == type &&
                     sim_pmu_core_counting(&p->core, &e->e);
        }
        return n;
}

static void update(struct sim_pmu_core *c)
{
        struct sim_dwc *p = c->owner;
        double now = sim_dwc_now(p);
        double t0 = p->last;

        if (now <= t0)
                return;
        for (size_t i = 0; i < c->used_max; i++) {
                struct dwc_event *e = ev_at(p, i);
                double share, x = 0;

                if (!e->e.used || !sim_pmu_core_counting(c, &e->e))
                        continue;
                share = 1.0 / (double)sharing(p, e->port, e->type);
                e->enabled_s += now - t0;
                e->running_s += (now - t0) * share;
                for (size_t k = 0; k < e->e.contrib_count; k++)
                        x += e->e.contrib[k].per_second *
                             sim_device_traffic_integral(p->m, e->e.contrib[k].dev, t0, now);
                e->value += x * share;
        }
        p->last = now;
}

static size_t port_of_type(const struct sim_machine *m, uint32_t type)
{
        size_t i = type - SIM_DWC_TYPE_BASE;

        if (type < SIM_DWC_TYPE_BASE || i >= m->dwc.port_count || !sim_dwc_has_pmu(m, i) ||
            name_taken(m, i))
                return SIZE_MAX;
        return i;
}

static int dwc_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                          int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        const struct sim_machine *m = ((struct sim_dwc *)c->owner)->m;
        struct dwc_event *e = (struct dwc_event *)ev;
        unsigned int lane;

        (void)slot;
        e->port = port_of_type(m, attr->type);
        if (e->port == SIZE_MAX)
                return -ENOENT;
        if (attr->sample_period || attr->freq || pid != -1 || cpu < 0 ||
            (unsigned int)cpu >= m->cpus)
                return -EINVAL;
        e->id = (uint16_t)(attr->config & 0xffff);
        e->type = (unsigned int)(attr->config >> 16) & 0xf;
        lane = (unsigned int)(attr->config >> 20) & 0xff;
        if (e->type > 1)
                return -EINVAL;
        if (e->type == 1 && lane >= m->devices[m->dwc.ports[e->port]].max_width)
                return -EINVAL;
        return sim_attr_excludes(attr) ? -EINVAL : 0;
}

/* A group leader must be a software event: no dwc event leads another. */
static bool dwc_can_join(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                         const struct sim_pmu_event *ev)
{
        (void)c;
        (void)leader;
        (void)ev;
        return false;
}

static int dwc_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot)
{
        struct sim_dwc *p = c->owner;
        const struct sim_machine *m = p->m;
        struct dwc_event *e = (struct dwc_event *)ev;
        size_t port = m->dwc.ports[e->port];
        bool rx = e->id == 0x21;

        (void)slot;
        e->value = 0;
        e->enabled_s = 0;
        e->running_s = 0;
        e->e.contrib_count = 0;
        if (e->type != 0 || (e->id != 0x20 && e->id != 0x21))
                return 0; /* LTSSM, CCIX and lane events: not modelled, count 0 */
        e->e.contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->e.contrib));
        if (!e->e.contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double rate;

                if (dev == port || !m->devices[dev].has_workload ||
                    sim_machine_root_port(m, dev) != port)
                        continue;
                rate = device_rate(m, dev, rx);
                if (rate > 0)
                        e->e.contrib[e->e.contrib_count++] = (struct sim_contrib){dev, rate};
        }
        return 0;
}

static uint64_t ns_of(double s)
{
        return s <= 0 ? 0 : (uint64_t)floor(s * 1e9);
}

static void dwc_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                       struct sim_pmu_report *out)
{
        const struct dwc_event *e = (const struct dwc_event *)ev;

        (void)c;
        /* Whole 16-byte units, times 16 as the driver reports them. */
        out->value = e->value <= 0 ? 0 : (uint64_t)floor(e->value / 16) * 16;
        out->enabled_ns = ns_of(e->enabled_s);
        out->running_ns = ns_of(e->running_s);
}

static void dwc_reset(struct sim_pmu_core *c, struct sim_pmu_event *ev)
{
        (void)c;
        ((struct dwc_event *)ev)->value = 0;
}

static const struct sim_pmu_model dwc_model = {
    .event_size = sizeof(struct dwc_event),
    .event_cap = MAX_EVENTS,
    .fd_base = SIM_DWC_FD_BASE,
    .groups = true,
    .foreign_group_fd_min = SIM_FD_BASE,
    .refused_excludes = SIM_EXCLUDE_ALL,
    .advance = update,
    .event_init = dwc_event_init,
    .can_join = dwc_can_join,
    .start = dwc_start,
    .report = dwc_report,
    .reset = dwc_reset,
};

int sim_dwc_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                struct sim_dwc **out)
{
        struct sim_dwc *p;

        *out = NULL;
        if (!m || !m->dwc.port_count)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->m = m;
        if (sim_pmu_core_init(&p->core, &dwc_model, p, clock, clock_ctx, 0)) {
                sim_dwc_free(p);
                return -ENOMEM;
        }
        *out = p;
        return 0;
}

void sim_dwc_free(struct sim_dwc *p)
{
        if (!p)
                return;
        sim_pmu_core_fini(&p->core);
        free(p);
}

const struct perf_ops *sim_dwc_ops(struct sim_dwc *p)
{
        return &p->core.ops;
}

size_t sim_dwc_open_count(struct sim_dwc *p)
{
        return sim_pmu_core_open_count(&p->core);
}
