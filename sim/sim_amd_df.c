// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_amd_df.c - the simulated AMD data fabric PMU. See sim_amd_df.h for
 * the model.
 *
 * A counter of the model is a pure function of time (the beats its root
 * complex moved since creation, integrated exactly from the workload
 * phases); an event adds the difference since its last update whenever it
 * held a counter. Every operation first brings all events up to now, with
 * the counters placed as they were since the previous operation.
 */
#define _GNU_SOURCE
#include "sim_amd_df.h"
#include "sim_pmu_core.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hw_env.h"
#include "sim_events.h"
#include "sim_sysfs.h"
#include "sim_traffic.h"

#define MAX_EVENTS 1024
#define MAX_GROUP  8
#define BEAT       64.0

enum df_loc { DF_LOCAL, DF_REMOTE, DF_ANY };

struct df_event {
        struct sim_pmu_event e;
        size_t socket;
        size_t rc; /* index into the socket's rcs, SIZE_MAX: no such root complex */
        enum df_loc loc;
        bool write;
        bool running;            /* held a counter since the last update */
        unsigned int generation; /* the PMU's binding it was opened on */
        double retired;          /* bytes of calibration loads dropped from the list */
        uint64_t value, base;
        double enabled_s, running_s;
};

/* A calibration load: DMA writes of @rate bytes/s through device @dev
 * between t0 and t1. */
struct df_load {
        size_t dev;
        double t0, t1, rate;
};
#define MAX_LOADS 32

struct sim_df {
        struct sim_pmu_core core;
        const struct sim_machine *m;
        double last;
        size_t load_count;
        struct df_load loads[MAX_LOADS];
};

#define ev_at(p, slot) SIM_PMU_EVENT_AT(&(p)->core, slot, struct df_event)

double sim_df_now(struct sim_df *p)
{
        return sim_pmu_core_now(&p->core);
}

/* ---- ground truth ---- */

/* DMA bytes per second (scale 1) of @dev: its DMA writes' payload, or the
 * completion data of its DMA reads. */
static double dma_rate(const struct sim_machine *m, size_t dev, bool write)
{
        struct sim_tlp_rates r;

        if (!m->devices[dev].has_workload)
                return 0;
        sim_traffic_rates(m, dev, write ? SIM_RX_MWR : SIM_TX_CPL, &r);
        return r.payload_dw * 4;
}

static bool below_rc(const struct sim_machine *m, const struct sim_amd_rc *rc, size_t dev)
{
        size_t port = sim_machine_root_port(m, dev);

        for (size_t k = 0; port != SIM_NONE && port != dev && k < rc->port_count; k++)
                if (rc->ports[k] == port)
                        return true;
        return false;
}

static double share_of(const struct sim_amd_rc *rc, enum df_loc loc)
{
        return loc == DF_ANY ? 1 : loc == DF_REMOTE ? rc->remote_share : 1 - rc->remote_share;
}

/* Bytes load @l moved through @rc's memory of @loc up to @t (its DMA
 * writes: nothing for reads). */
static double load_bytes_at(const struct sim_machine *m, const struct sim_amd_rc *rc,
                            enum df_loc loc, bool write, const struct df_load *l, double t)
{
        double span = (t < l->t1 ? t : l->t1) - l->t0;

        if (!write || span <= 0 || !below_rc(m, rc, l->dev))
                return 0;
        return l->rate * span * share_of(rc, loc);
}

void sim_truth_df(const struct sim_df *p, size_t socket, unsigned int rc_index, bool remote,
                  double t0, double t1, double *read_bytes, double *write_bytes)
{
        const struct sim_machine *m = p->m;
        const struct sim_amd_rc *rc = NULL;

        *read_bytes = *write_bytes = 0;
        if (socket >= m->amd.socket_count)
                return;
        for (size_t k = 0; k < m->amd.sockets[socket].rc_count; k++)
                if (m->amd.sockets[socket].rcs[k].index == rc_index)
                        rc = &m->amd.sockets[socket].rcs[k];
        if (!rc)
                return;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double share = share_of(rc, remote ? DF_REMOTE : DF_LOCAL), integral;

                if (!m->devices[dev].has_workload || !below_rc(m, rc, dev))
                        continue;
                integral = sim_device_traffic_integral(m, dev, t0, t1);
                *read_bytes += dma_rate(m, dev, false) * integral * share;
                *write_bytes += dma_rate(m, dev, true) * integral * share;
        }
        /* Calibration loads still listed (the last MAX_LOADS). */
        for (size_t i = 0; i < p->load_count; i++) {
                enum df_loc loc = remote ? DF_REMOTE : DF_LOCAL;

                *write_bytes += load_bytes_at(m, rc, loc, true, &p->loads[i], t1) -
                                load_bytes_at(m, rc, loc, true, &p->loads[i], t0);
        }
}

/* ---- counters ---- */

static uint64_t counter_at(const struct sim_df *p, const struct df_event *e, double t)
{
        double x = 0;

        if (t <= 0)
                return 0;
        for (size_t i = 0; i < e->e.contrib_count; i++)
                x += e->e.contrib[i].per_second *
                     sim_device_traffic_integral(p->m, e->e.contrib[i].dev, 0, t);
        if (e->rc != SIZE_MAX) {
                const struct sim_amd_rc *rc = &p->m->amd.sockets[e->socket].rcs[e->rc];

                x += e->retired;
                for (size_t i = 0; i < p->load_count; i++)
                        x += load_bytes_at(p->m, rc, e->loc, e->write, &p->loads[i], t);
        }
        x /= BEAT;
        return x <= 0 ? 0 : (uint64_t)floor(x);
}

/* Places the enabled groups on each socket's counters, in slot order. */
static void schedule(struct sim_df *p)
{
        struct sim_pmu_core *c = &p->core;
        unsigned int used[SIM_MAX_SOCKETS] = {0};

        for (size_t i = 0; i < c->used_max; i++) {
                struct df_event *e = ev_at(p, i);

                if (e->e.used)
                        e->running = false;
        }
        for (size_t i = 0; i < c->used_max; i++) {
                struct df_event *l = ev_at(p, i);
                size_t n;

                if (!l->e.used || l->e.leader != i || !sim_pmu_core_counting(c, &l->e))
                        continue;
                n = sim_pmu_core_group_size(c, i);
                if (used[l->socket] + n > p->m->amd.df_counters)
                        continue; /* waits: the whole group or none */
                used[l->socket] += (unsigned int)n;
                for (size_t k = i; k < c->used_max; k++) {
                        struct df_event *e = ev_at(p, k);

                        if (e->e.used && e->e.leader == i)
                                e->running = true;
                }
        }
}

static void update(struct sim_pmu_core *c)
{
        struct sim_df *p = c->owner;
        double now = sim_df_now(p);
        double dt = now > p->last ? now - p->last : 0;

        for (size_t i = 0; i < c->used_max; i++) {
                struct df_event *e = ev_at(p, i);
                uint64_t v;

                if (!e->e.used)
                        continue;
                v = counter_at(p, e, now);
                if (sim_pmu_core_counting(c, &e->e))
                        e->enabled_s += dt;
                if (e->running) {
                        e->value += v > e->base ? v - e->base : 0;
                        e->running_s += dt;
                }
                e->base = v;
        }
        if (now > p->last)
                p->last = now;
}

static void changed(struct sim_pmu_core *c)
{
        schedule(c->owner);
}

static int build_contrib(struct sim_df *p, struct df_event *e)
{
        const struct sim_machine *m = p->m;
        const struct sim_amd_rc *rc;

        e->e.contrib_count = 0;
        if (e->rc == SIZE_MAX)
                return 0; /* a root complex with nothing on it counts nothing */
        rc = &m->amd.sockets[e->socket].rcs[e->rc];
        e->e.contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->e.contrib));
        if (!e->e.contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double rate;

                if (!m->devices[dev].has_workload || !below_rc(m, rc, dev))
                        continue;
                rate = dma_rate(m, dev, e->write) * share_of(rc, e->loc);
                if (rate > 0)
                        e->e.contrib[e->e.contrib_count++] = (struct sim_contrib){dev, rate};
        }
        return 0;
}

/* ---- the model's part of the perf ops ---- */

static size_t socket_of_cpu(const struct sim_machine *m, int cpu)
{
        for (size_t i = 0; cpu >= 0 && i < m->amd.socket_count; i++) {
                const struct sim_amd_socket *s = &m->amd.sockets[i];

                if ((unsigned int)cpu >= s->first_cpu &&
                    (unsigned int)cpu < s->first_cpu + s->cpu_count)
                        return i;
        }
        return SIZE_MAX;
}

/* Event code and unit mask from config with the PerfMonV2 layout. */
static void decode(uint64_t config, unsigned int *code, unsigned int *umask)
{
        *code = (unsigned int)((config & 0xff) | ((config >> 32) & 0x3f) << 8);
        *umask = (unsigned int)(((config >> 8) & 0xff) | ((config >> 24) & 0xf) << 8);
}

uint32_t sim_df_type_of(unsigned int generation)
{
        return generation ? SIM_DF_TYPE + 1 + (generation - 1) % (SIM_DF_TYPE_COUNT - 1)
                          : SIM_DF_TYPE;
}

/* perf_pmu_unregister() since the event was opened: revoked (read() gives
 * 0 bytes, ioctl() -ENODEV), as for the hisi_pcie and IIO PMUs. */
static bool df_revoked(struct sim_pmu_core *c, const struct sim_pmu_event *ev)
{
        const struct sim_df *p = c->owner;
        const struct df_event *e = (const struct df_event *)ev;
        unsigned int generation;

        return !sim_pmu_kind_bound(p->m, SIM_PMUK_AMD_DF, 0, p->last, &generation) ||
               generation != e->generation;
}

static int df_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                         int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        struct sim_df *p = c->owner;
        const struct sim_machine *m = p->m;
        struct df_event *e = (struct df_event *)ev;
        unsigned int code, umask, n, generation;

        (void)slot;
        /* An unbound PMU's type is no longer in the kernel's idr, nor is
         * an old one after a new binding. */
        if (!sim_pmu_kind_bound(m, SIM_PMUK_AMD_DF, 0, sim_df_now(p), &generation) ||
            sim_df_type_of(generation) != attr->type)
                return -ENOENT;
        e->generation = generation;
        /* amd_uncore_event_init: no sampling, no task events, a CPU. */
        if (pid != -1 || cpu < 0 || (unsigned int)cpu >= m->cpus || attr->sample_period ||
            attr->freq)
                return -EINVAL;
        e->socket = socket_of_cpu(m, cpu);
        if (e->socket == SIZE_MAX)
                return -EINVAL;
        decode(attr->config, &code, &umask);
        if (code < 0x81f || (code - 0x81f) % 0x40 || (n = (code - 0x81f) / 0x40) >= 8)
                return -EINVAL;
        switch (umask) {
        case 0x7fe:
        case 0x7ff:
                e->loc = DF_LOCAL;
                break;
        case 0xbfe:
        case 0xbff:
                e->loc = DF_REMOTE;
                break;
        case 0xffe:
        case 0xfff:
                e->loc = DF_ANY;
                break;
        default:
                return -EINVAL;
        }
        e->write = umask & 1;
        e->rc = SIZE_MAX;
        for (size_t k = 0; k < m->amd.sockets[e->socket].rc_count; k++)
                if (m->amd.sockets[e->socket].rcs[k].index == n)
                        e->rc = k;
        return sim_attr_excludes(attr) ? -EINVAL : 0;
}

static bool df_can_join(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                        const struct sim_pmu_event *ev)
{
        const struct df_event *l = (const struct df_event *)leader;
        const struct df_event *e = (const struct df_event *)ev;
        const struct sim_df *p = c->owner;
        size_t n = sim_pmu_core_group_size(c, leader->leader);

        /* A group larger than the counters can never be scheduled: the
         * driver's validation refuses it. */
        return l->socket == e->socket && n < MAX_GROUP && n < p->m->amd.df_counters;
}

static int df_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot)
{
        struct sim_df *p = c->owner;
        struct df_event *e = (struct df_event *)ev;
        int ret;

        (void)slot;
        ret = build_contrib(p, e);
        if (!ret)
                e->base = counter_at(p, e, p->last);
        return ret;
}

static uint64_t ns_of(double s)
{
        return s <= 0 ? 0 : (uint64_t)floor(s * 1e9);
}

static void df_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                      struct sim_pmu_report *out)
{
        const struct df_event *e = (const struct df_event *)ev;

        (void)c;
        out->value = e->value;
        out->enabled_ns = ns_of(e->enabled_s);
        out->running_ns = ns_of(e->running_s);
}

static void df_reset(struct sim_pmu_core *c, struct sim_pmu_event *ev)
{
        (void)c;
        ((struct df_event *)ev)->value = 0;
}

static const struct sim_pmu_model df_model = {
    .event_size = sizeof(struct df_event),
    .event_cap = MAX_EVENTS,
    .fd_base = SIM_DF_FD_BASE,
    .groups = true,
    .foreign_group_fd_min = SIM_FD_BASE,
    .refused_excludes = SIM_EXCLUDE_ALL,
    .advance = update,
    .revoked = df_revoked,
    .event_init = df_event_init,
    .can_join = df_can_join,
    .start = df_start,
    .report = df_report,
    .reset = df_reset,
    .changed = changed,
};

int sim_df_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
               struct sim_df **out)
{
        struct sim_df *p;

        *out = NULL;
        if (!m || !m->amd.present)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->m = m;
        if (sim_pmu_core_init(&p->core, &df_model, p, clock, clock_ctx, 0)) {
                sim_df_free(p);
                return -ENOMEM;
        }
        *out = p;
        return 0;
}

void sim_df_free(struct sim_df *p)
{
        if (!p)
                return;
        sim_pmu_core_fini(&p->core);
        free(p);
}

const struct perf_ops *sim_df_ops(struct sim_df *p)
{
        return &p->core.ops;
}

int sim_df_add_load(struct sim_df *p, size_t dev, double bytes, double t0, double t1)
{
        int ret = 0;

        if (dev >= p->m->device_count || !(bytes > 0) || !(t1 > t0))
                return -EINVAL;
        sim_pmu_core_lock(&p->core);
        update(&p->core); /* what came before counts without the load */
        if (p->load_count >= MAX_LOADS) {
                /* Full: a load that has ended makes room (its bytes stay in
                 * the open events as retired). */
                size_t oldest = 0;

                for (size_t i = 1; i < p->load_count; i++)
                        if (p->loads[i].t1 < p->loads[oldest].t1)
                                oldest = i;
                if (p->loads[oldest].t1 > p->last) {
                        ret = -EBUSY;
                } else {
                        for (size_t i = 0; i < p->core.used_max; i++) {
                                struct df_event *e = ev_at(p, i);

                                if (e->e.used && e->rc != SIZE_MAX)
                                        e->retired += load_bytes_at(
                                            p->m, &p->m->amd.sockets[e->socket].rcs[e->rc], e->loc,
                                            e->write, &p->loads[oldest], p->last);
                        }
                        p->loads[oldest] = p->loads[--p->load_count];
                }
        }
        if (!ret)
                p->loads[p->load_count++] =
                    (struct df_load){.dev = dev, .t0 = t0, .t1 = t1, .rate = bytes / (t1 - t0)};
        sim_pmu_core_unlock(&p->core);
        return ret;
}

size_t sim_df_open_count(struct sim_df *p)
{
        return sim_pmu_core_open_count(&p->core);
}

/* ---- the tree ---- */

static int mkdirs(const char *root, const char *rel, char *errbuf, size_t errlen)
{
        char path[PATH_MAX];

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
                return -ENAMETOOLONG;
        for (char *s = path + strlen(root) + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(path, 0755) && errno != EEXIST)
                        goto fail;
                *s = '/';
        }
        if (mkdir(path, 0755) && errno != EEXIST)
                goto fail;
        return 0;
fail:
        snprintf(errbuf, errlen, "%s: cannot create: %s", path, strerror(errno));
        return -errno;
}

static int put(const char *root, const char *dir, const char *name, const char *text, char *errbuf,
               size_t errlen)
{
        int r = sim_sysfs_put(root, dir, name, text);

        if (r)
                snprintf(errbuf, errlen, "%s/%s/%s: cannot write: %s", root, dir, name,
                         strerror(-r));
        return r;
}

int sim_df_sysfs_pmu_write(const struct sim_machine *m, const char *root, uint32_t type,
                           char *errbuf, size_t errlen)
{
        const struct sim_amd *amd = &m->amd;
        const char *pmu = "sys/bus/event_source/devices/amd_df";
        char text[64], mask[256] = "";
        size_t len = 0;
        int r;

        r = mkdirs(root, "sys/bus/event_source/devices/amd_df/format", errbuf, errlen);
        if (r)
                return r;
        snprintf(text, sizeof(text), "%u\n", type);
        r = put(root, pmu, "type", text, errbuf, errlen);
        for (size_t i = 0; i < amd->socket_count; i++)
                len += (size_t)snprintf(mask + len, sizeof(mask) - len, "%s%u", i ? "," : "",
                                        amd->sockets[i].first_cpu);
        snprintf(mask + len, sizeof(mask) - len, "\n");
        if (!r)
                r = put(root, pmu, "cpumask", mask, errbuf, errlen);
        if (!r)
                r = put(root, "sys/bus/event_source/devices/amd_df/format", "event",
                        "config:0-7,32-37\n", errbuf, errlen);
        if (!r)
                r = put(root, "sys/bus/event_source/devices/amd_df/format", "umask",
                        amd->narrow_umask ? "config:8-15\n" : "config:8-15,24-27\n", errbuf,
                        errlen);
        return r;
}

int sim_df_sysfs_write(const struct sim_machine *m, const char *root, char *errbuf, size_t errlen)
{
        const struct sim_amd *amd = &m->amd;
        char dir[128], text[64];
        size_t len, cap;
        char *info;
        int r;

        r = sim_df_sysfs_pmu_write(m, root, SIM_DF_TYPE, errbuf, errlen);
        for (size_t i = 0; !r && i < amd->socket_count; i++) {
                const struct sim_amd_socket *s = &amd->sockets[i];

                for (unsigned int cpu = s->first_cpu; !r && cpu < s->first_cpu + s->cpu_count;
                     cpu++) {
                        snprintf(dir, sizeof(dir), "sys/devices/system/cpu/cpu%u/topology", cpu);
                        r = mkdirs(root, dir, errbuf, errlen);
                        snprintf(text, sizeof(text), "%u\n", s->id);
                        if (!r)
                                r = put(root, dir, "physical_package_id", text, errbuf, errlen);
                        if (!r)
                                r = put(root, dir, "die_id", "0\n", errbuf, errlen);
                }
        }
        if (r)
                return r;
        snprintf(text, sizeof(text), "cpu:type:x86,ven0002fam%04Xmod%04X:feature:,0000\n",
                 amd->cpu_family, amd->cpu_model);
        r = put(root, "sys/devices/system/cpu", "modalias", text, errbuf, errlen);
        if (r)
                return r;
        cap = (size_t)m->cpus * 200 + 1;
        info = malloc(cap);
        if (!info)
                return -ENOMEM;
        len = 0;
        info[0] = '\0';
        for (unsigned int cpu = 0; cpu < m->cpus; cpu++) {
                unsigned int pkg = 0;

                for (size_t i = 0; i < amd->socket_count; i++)
                        if (cpu >= amd->sockets[i].first_cpu &&
                            cpu < amd->sockets[i].first_cpu + amd->sockets[i].cpu_count)
                                pkg = amd->sockets[i].id;
                len += (size_t)snprintf(info + len, cap - len,
                                        "processor\t: %u\nvendor_id\t: AuthenticAMD\n"
                                        "cpu family\t: %u\nmodel\t\t: %u\n"
                                        "model name\t: AMD EPYC (SIMULATED)\n"
                                        "physical id\t: %u\n\n",
                                        cpu, amd->cpu_family, amd->cpu_model, pkg);
                if (len >= cap)
                        len = cap - 1;
        }
        r = put(root, "proc", "cpuinfo", info, errbuf, errlen);
        free(info);
        return r;
}
