// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * amd_df.c - AMD data fabric (amd_df) upstream DMA beats per IO root
 * complex: event encoding, the rotation plan, and one collector per socket.
 * See amd_df.h for what the counters count and what is not known.
 */
#define _GNU_SOURCE
#include "amd_df.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_env.h"
#include "pcie_families.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "perf_pmu.h"
#include "sample.h"
#include "uncore_discovery.h"

#define PMU_NAME       "amd_df"
#define MAX_SOCKETS    AMD_DF_MAX_SOCKETS
#define MAX_MEASURES   (AMD_DF_ROOT_COMPLEXES * 2)
#define MAX_RC_BUSES   8
#define DEFAULT_COUNTS 8

void amd_df_opts_default(struct amd_df_opts *opts)
{
        memset(opts, 0, sizeof(*opts));
        opts->counters = DEFAULT_COUNTS;
        opts->split_locality = true;
        opts->detail = PCIE_DETAIL_DEFAULT;
}

int amd_df_opts_add_map(struct amd_df_opts *opts, const struct amd_df_map *m)
{
        if (m->socket > 255 || m->rc >= AMD_DF_ROOT_COMPLEXES)
                return -EINVAL;
        for (size_t i = 0; i < opts->map_count; i++) {
                const struct amd_df_map *o = &opts->maps[i];

                if (o->socket == m->socket && o->rc == m->rc && o->domain == m->domain &&
                    o->bus == m->bus && o->calibrated == m->calibrated)
                        return 0;
        }
        if (opts->map_count >= AMD_DF_MAX_MAPS)
                return -ENOSPC;
        opts->maps[opts->map_count++] = *m;
        return 0;
}

const char *amd_df_locality_name(enum amd_df_locality loc)
{
        switch (loc) {
        case AMD_DF_LOCAL:
                return "local";
        case AMD_DF_REMOTE:
                return "remote";
        case AMD_DF_ANY:
                return "any";
        }
        return NULL;
}

uint64_t amd_df_event_code(unsigned int rc)
{
        return 0x81fu + 0x40u * rc;
}

uint64_t amd_df_umask(enum amd_df_locality loc, enum amd_df_dir dir)
{
        /* Bits 11:10 choose the memory (01 local, 10 remote, 11 either);
         * bit 0 the direction (0 read, 1 write); 0x3fe is the rest of
         * the mask perf's list gives for all six. */
        uint64_t where = loc == AMD_DF_LOCAL ? 0x400 : loc == AMD_DF_REMOTE ? 0x800 : 0xc00;

        return where | 0x3fe | (dir == AMD_DF_WRITE ? 1 : 0);
}

int amd_df_event_attr(const struct perf_pmu *pmu, unsigned int rc, enum amd_df_locality loc,
                      enum amd_df_dir dir, struct perf_event_attr *attr)
{
        int err;

        if (rc >= AMD_DF_ROOT_COMPLEXES)
                return -EINVAL;
        memset(attr, 0, sizeof(*attr));
        attr->size = sizeof(*attr);
        attr->type = perf_pmu_type(pmu);
        err = perf_pmu_set(pmu, attr, "event", amd_df_event_code(rc));
        if (!err)
                err = perf_pmu_set(pmu, attr, "umask", amd_df_umask(loc, dir));
        return err;
}

size_t amd_df_plan_window(size_t count, size_t window, size_t *cursor, size_t *chosen)
{
        size_t n = 0, start;

        if (!count || !window)
                return 0;
        if (window >= count) {
                for (size_t i = 0; i < count; i++)
                        chosen[n++] = i;
                *cursor = 0;
                return n;
        }
        start = *cursor % count;
        /* Ascending output: the wrapped part first. */
        for (size_t i = 0; i < count; i++) {
                size_t off = (i + count - start) % count;

                if (off < window)
                        chosen[n++] = i;
        }
        *cursor = (start + window) % count;
        return n;
}

int amd_df_parse_bus(const char *text, uint32_t *domain, uint8_t *bus)
{
        unsigned int d = 0, b;
        int used = 0;

        if (!text || !*text)
                return -EINVAL;
        if (strchr(text, ':')) {
                if (sscanf(text, "%4x:%2x%n", &d, &b, &used) != 2 || text[used])
                        return -EINVAL;
        } else if (sscanf(text, "%2x%n", &b, &used) != 1 || text[used]) {
                return -EINVAL;
        }
        *domain = d;
        *bus = (uint8_t)b;
        return 0;
}

/* ---- calibration ---- */

int amd_df_identify_rc(const struct amd_df_rc_rates *rates, size_t n, double expected,
                       double tolerance, struct amd_df_rc_match *out)
{
        bool have_best = false;

        memset(out, 0, sizeof(*out));
        if (!n || !(expected > 0) || !(tolerance > 0) || !isfinite(expected))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                for (int k = 0; k < 2; k++)
                        if (!isfinite(rates[i].idle[k]) || !isfinite(rates[i].load[k]))
                                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                bool hit = false;
                enum amd_df_dir dir = AMD_DF_READ;
                double rise = 0;

                for (int k = 0; k < 2; k++) {
                        double r = rates[i].load[k] - rates[i].idle[k];

                        /* The closer of read and write when both rose by
                         * the load (one root complex all the same). */
                        if (fabs(r - expected) <= tolerance * expected &&
                            (!hit || fabs(r - expected) < fabs(rise - expected))) {
                                hit = true;
                                dir = (enum amd_df_dir)k;
                                rise = r;
                        }
                        /* The largest rise, for the message when none fits. */
                        if (!out->matches && (!have_best || r > out->rise)) {
                                have_best = true;
                                out->index = i;
                                out->dir = (enum amd_df_dir)k;
                                out->rise = r;
                        }
                }
                if (!hit)
                        continue;
                if (!out->matches) {
                        out->index = i;
                        out->dir = dir;
                        out->rise = rise;
                } else if (out->matches == 1) {
                        out->other = i;
                        out->other_dir = dir;
                        out->other_rise = rise;
                }
                out->matches++;
        }
        if (!out->matches)
                return -ENOENT;
        return out->matches > 1 ? -ENOTUNIQ : 0;
}

struct amd_df_probe {
        struct perf_group *group;
        struct perf_group_reading last;
};

int amd_df_probe_open(const struct hw_env *env, int cpu, unsigned int rc, struct amd_df_probe **out)
{
        struct perf_event_attr attrs[2];
        struct amd_df_probe *p = NULL;
        struct perf_pmu *pmu = NULL;
        int err;

        *out = NULL;
        if (rc >= AMD_DF_ROOT_COMPLEXES)
                return -EINVAL;
        err = perf_pmu_load(env, PMU_NAME, &pmu);
        if (!err)
                err = amd_df_event_attr(pmu, rc, AMD_DF_ANY, AMD_DF_READ, &attrs[0]);
        if (!err)
                err = amd_df_event_attr(pmu, rc, AMD_DF_ANY, AMD_DF_WRITE, &attrs[1]);
        p = err ? NULL : calloc(1, sizeof(*p));
        if (!err && !p)
                err = -ENOMEM;
        if (!err)
                err = perf_group_open(env, attrs, 2, cpu, &p->group, NULL);
        if (!err)
                err = perf_group_enable(p->group);
        if (!err)
                err = perf_group_read(p->group, &p->last);
        perf_pmu_free(pmu);
        if (err) {
                amd_df_probe_close(p);
                return err;
        }
        *out = p;
        return 0;
}

int amd_df_probe_read(struct amd_df_probe *p, double bytes_per_second[2])
{
        struct perf_group_reading now, d;
        double secs;
        int err = perf_group_read(p->group, &now);

        if (!err)
                err = perf_reading_delta(&now, &p->last, &d);
        if (err)
                return err;
        p->last = now;
        if (d.time_running < d.time_enabled)
                return -EBUSY;
        secs = (double)d.time_running / 1e9;
        for (int k = 0; k < 2; k++)
                bytes_per_second[k] = secs > 0 ? (double)d.values[k] * AMD_DF_BEAT_BYTES / secs : 0;
        return 0;
}

void amd_df_probe_close(struct amd_df_probe *p)
{
        if (!p)
                return;
        perf_group_close(p->group);
        free(p);
}

/* ---- the collector ---- */

struct measure {
        unsigned int rc;
        enum amd_df_locality loc;
        struct perf_event_attr attrs[2]; /* read, write */
        struct perf_group *group;
        struct perf_group_reading last;
        bool have_last, enabled;
        double running_s; /* counting time so far */
        double rate[2];   /* bytes/s of the last window that counted */
        bool have_rate;
        uint64_t beats[2]; /* counted so far */
};

struct rc_map {
        size_t bus_count;
        uint32_t domain[MAX_RC_BUSES];
        uint8_t bus[MAX_RC_BUSES];
        char buses[MAX_RC_BUSES * 9]; /* "0000:00 0000:20" */
        size_t configured;            /* buses from configuration lines */
        size_t ports;                 /* Root Ports with a link up below */
        uint64_t capacity;            /* their current capacities together */
        unsigned int mps;             /* the smallest MPS of those links */
};

struct amd_df_socket {
        const struct hw_env *env;
        const struct amd_df_opts *opts;
        char name[32];
        unsigned int id;
        int cpu;
        struct measure m[MAX_MEASURES];
        size_t count, window, cursor;
        struct rc_map rc[AMD_DF_ROOT_COMPLEXES];
        bool started, open_logged;
        double start_time;
        double cpu_seconds;
};

struct amd_df {
        size_t socket_count;
        struct amd_df_socket sockets[MAX_SOCKETS];
};

static double thread_cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                return 0;
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned int package_of(const struct hw_env *env, int cpu, unsigned int fallback)
{
        char text[32];
        unsigned int id;

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text),
                         "devices/system/cpu/cpu%d/topology/physical_package_id", cpu) > 0 &&
            sscanf(text, "%u", &id) == 1)
                return id;
        return fallback;
}

/* The Root Ports on the root buses of @map: their links together. */
static void map_links(struct rc_map *map, const struct pcie_topo *topo)
{
        size_t len = 0;

        map->ports = 0;
        map->capacity = 0;
        map->mps = 0;
        for (size_t b = 0; b < map->bus_count; b++)
                len += (size_t)snprintf(map->buses + len, sizeof(map->buses) - len, "%s%04x:%02x",
                                        b ? " " : "", (unsigned int)map->domain[b], map->bus[b]);
        for (size_t i = 0; topo && i < pcie_topo_count(topo); i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);
                unsigned int mps;
                bool mine = false;

                if (f->info.port_type != PCIE_PORT_ROOT_PORT || !f->link_up)
                        continue;
                for (size_t b = 0; b < map->bus_count && !mine; b++)
                        mine = f->addr.domain == map->domain[b] && f->addr.bus == map->bus[b];
                if (!mine || !f->capacity_current)
                        continue;
                map->ports++;
                map->capacity += f->capacity_current;
                /* The smallest MPS: effective is then an upper bound, as
                 * pcie_util's is for counts without TLP numbers. */
                mps = pcie_topo_link_mps(topo, i);
                if (mps && (!map->mps || mps < map->mps))
                        map->mps = mps;
        }
}

/* Whether map @i is used: a calibrated map is not when a configuration
 * line maps the same root bus (the configuration wins; where it names
 * another root complex, that is said once, at discovery). */
static bool map_used(const struct hw_env *env, const struct amd_df_opts *opts, size_t i, bool log)
{
        const struct amd_df_map *mp = &opts->maps[i];

        if (!mp->calibrated)
                return true;
        for (size_t k = 0; k < opts->map_count; k++) {
                const struct amd_df_map *o = &opts->maps[k];

                if (o->calibrated || o->domain != mp->domain || o->bus != mp->bus)
                        continue;
                if (log && (o->socket != mp->socket || o->rc != mp->rc))
                        hw_logf(env, HW_LOG_WARNING,
                                "%s: root bus %04x:%02x: the calibration file says socket %u "
                                "io%u, AMDDFRootComplexBus says socket %u io%u; the "
                                "configuration wins",
                                PMU_NAME, (unsigned int)mp->domain, mp->bus, mp->socket, mp->rc,
                                o->socket, o->rc);
                return false;
        }
        return true;
}

static int build_socket(const struct hw_env *env, const struct perf_pmu *pmu,
                        const struct amd_df_opts *opts, const struct pcie_topo *topo,
                        struct amd_df_socket *s, unsigned int id, int cpu)
{
        static const enum amd_df_locality split[] = {AMD_DF_LOCAL, AMD_DF_REMOTE};
        static const enum amd_df_locality any[] = {AMD_DF_ANY};
        const enum amd_df_locality *locs = opts->split_locality ? split : any;
        size_t nloc = opts->split_locality ? 2 : 1;

        memset(s, 0, sizeof(*s));
        s->env = env;
        s->opts = opts;
        s->id = id;
        s->cpu = cpu;
        snprintf(s->name, sizeof(s->name), "amd_df-socket%u", id);
        for (unsigned int rc = 0; rc < AMD_DF_ROOT_COMPLEXES; rc++) {
                for (size_t l = 0; l < nloc; l++) {
                        struct measure *m = &s->m[s->count];
                        int err;

                        m->rc = rc;
                        m->loc = locs[l];
                        err = amd_df_event_attr(pmu, rc, m->loc, AMD_DF_READ, &m->attrs[0]);
                        if (!err)
                                err =
                                    amd_df_event_attr(pmu, rc, m->loc, AMD_DF_WRITE, &m->attrs[1]);
                        if (err)
                                return err;
                        s->count++;
                }
        }
        s->window = opts->counters / 2;
        if (s->window > s->count)
                s->window = s->count;
        for (size_t i = 0; i < opts->map_count; i++) {
                const struct amd_df_map *mp = &opts->maps[i];
                struct rc_map *map;

                if (mp->socket != id || mp->rc >= AMD_DF_ROOT_COMPLEXES ||
                    !map_used(env, opts, i, false))
                        continue;
                map = &s->rc[mp->rc];
                if (map->bus_count >= MAX_RC_BUSES)
                        continue;
                map->configured += !mp->calibrated;
                map->domain[map->bus_count] = mp->domain;
                map->bus[map->bus_count++] = mp->bus;
        }
        for (unsigned int rc = 0; rc < AMD_DF_ROOT_COMPLEXES; rc++)
                if (s->rc[rc].bus_count)
                        map_links(&s->rc[rc], topo);
        return 0;
}

int amd_df_discover(const struct hw_env *env, const struct pcie_topo *topo,
                    const struct amd_df_opts *opts, struct amd_df **out)
{
        struct perf_pmu *pmu = NULL;
        unsigned int family = 0, model = 0;
        struct amd_df *df;
        int err;

        *out = NULL;
        err = perf_pmu_load(env, PMU_NAME, &pmu);
        if (err == -ENOMEM)
                return err;
        if (err)
                return 0; /* no data fabric PMU: nothing to count */
        if (uncore_cpu_id(env, &family, &model) == -ENOMEM) {
                perf_pmu_free(pmu);
                return -ENOMEM;
        }
        if (family != AMD_DF_FAMILY) {
                /* The upstream IO beat events are named for family 1Ah
                 * only; on others the codes count something else. */
                hw_logf(env, HW_LOG_INFO,
                        "%s: CPU family %#x is not AMD family 1Ah (Zen 5): no upstream DMA events "
                        "known for it, root complex bandwidth off",
                        PMU_NAME, family);
                perf_pmu_free(pmu);
                return 0;
        }
        if (!perf_pmu_cpu_count(pmu)) {
                hw_logf(env, HW_LOG_WARNING, "%s: empty cpumask: no CPU counts the fabric",
                        PMU_NAME);
                perf_pmu_free(pmu);
                return 0;
        }
        df = calloc(1, sizeof(*df));
        if (!df) {
                perf_pmu_free(pmu);
                return -ENOMEM;
        }
        for (size_t i = 0; i < opts->map_count; i++)
                map_used(env, opts, i, true); /* says each disagreement once */
        for (size_t i = 0; i < perf_pmu_cpu_count(pmu) && df->socket_count < MAX_SOCKETS; i++) {
                int cpu = perf_pmu_cpu(pmu, i);
                unsigned int id = package_of(env, cpu, (unsigned int)i);

                err = build_socket(env, pmu, opts, topo, &df->sockets[df->socket_count], id, cpu);
                if (err) {
                        hw_logf(env, HW_LOG_WARNING,
                                "%s: cannot encode the upstream DMA events (%s): the format "
                                "fields event/umask need PerfMonV2's 14/12 bits (Linux 6.2 or "
                                "later); root complex bandwidth off",
                                PMU_NAME, strerror(-err));
                        break;
                }
                df->socket_count++;
        }
        perf_pmu_free(pmu);
        if (!df->socket_count) {
                free(df);
                return 0;
        }
        *out = df;
        return 0;
}

void amd_df_free(struct amd_df *df)
{
        if (!df)
                return;
        for (size_t i = 0; i < df->socket_count; i++)
                amd_df_socket_stop(&df->sockets[i]);
        free(df);
}

size_t amd_df_socket_count(const struct amd_df *df)
{
        return df ? df->socket_count : 0;
}

struct amd_df_socket *amd_df_socket_at(struct amd_df *df, size_t i)
{
        return df && i < df->socket_count ? &df->sockets[i] : NULL;
}

const char *amd_df_socket_name(const struct amd_df_socket *s)
{
        return s->name;
}

unsigned int amd_df_socket_id(const struct amd_df_socket *s)
{
        return s->id;
}

int amd_df_socket_cpu(const struct amd_df_socket *s)
{
        return s->cpu;
}

int amd_df_pmu_type(const struct hw_env *env, uint32_t *type)
{
        struct perf_pmu *pmu = NULL;
        int err = perf_pmu_load(env, PMU_NAME, &pmu);

        if (!err)
                *type = perf_pmu_type(pmu);
        perf_pmu_free(pmu);
        return err;
}

uint32_t amd_df_socket_type(const struct amd_df_socket *s)
{
        return s->count ? s->m[0].attrs[0].type : 0;
}

void amd_df_socket_set_type(struct amd_df_socket *s, uint32_t type)
{
        for (size_t i = 0; i < s->count; i++)
                s->m[i].attrs[0].type = s->m[i].attrs[1].type = type;
}

size_t amd_df_socket_measurements(const struct amd_df_socket *s)
{
        return s->count;
}

size_t amd_df_socket_window(const struct amd_df_socket *s)
{
        return s->window;
}

double amd_df_socket_cpu_seconds(const struct amd_df_socket *s)
{
        return s->cpu_seconds;
}

void amd_df_socket_stop(struct amd_df_socket *s)
{
        for (size_t i = 0; i < s->count; i++) {
                perf_group_close(s->m[i].group);
                s->m[i].group = NULL;
                s->m[i].enabled = false;
                s->m[i].have_last = false;
        }
        s->started = false;
}

/* Enables the next window and disables the rest. */
static int rotate(struct amd_df_socket *s)
{
        size_t chosen[MAX_MEASURES], n;
        bool want[MAX_MEASURES] = {false};
        int ret = 0;

        n = amd_df_plan_window(s->count, s->window, &s->cursor, chosen);
        for (size_t i = 0; i < n; i++)
                want[chosen[i]] = true;
        /* Disable first, so the counters are free for the next window. */
        for (size_t i = 0; i < s->count; i++) {
                if (s->m[i].enabled && !want[i]) {
                        int err = perf_group_disable(s->m[i].group);

                        if (err && !ret)
                                ret = err;
                        s->m[i].enabled = false;
                }
        }
        for (size_t i = 0; i < s->count; i++) {
                if (!s->m[i].enabled && want[i]) {
                        int err = perf_group_enable(s->m[i].group);

                        if (err && !ret)
                                ret = err;
                        s->m[i].enabled = !err;
                }
        }
        return ret;
}

int amd_df_socket_start(struct amd_df_socket *s, double now)
{
        double cpu0 = thread_cpu_seconds();
        int err = 0;

        for (size_t i = 0; i < s->count && !err; i++) {
                struct measure *m = &s->m[i];

                err = perf_group_open(s->env, m->attrs, 2, s->cpu, &m->group, NULL);
                /* A new group reads 0: the first window's rate needs no
                 * reading of its own. After a stop (the PMU went and came
                 * back) nothing of the old groups is published again. */
                memset(&m->last, 0, sizeof(m->last));
                m->last.count = 2;
                m->have_rate = false;
                m->running_s = 0;
                m->have_last = !err;
        }
        if (!err)
                err = rotate(s);
        if (err) {
                if (!s->open_logged)
                        hw_logf(s->env, HW_LOG_ERROR,
                                "%s: cannot open the %s counters on CPU %d: %s", s->name, PMU_NAME,
                                s->cpu, perf_open_advice(err));
                s->open_logged = true;
                amd_df_socket_stop(s);
                return err;
        }
        s->started = true;
        s->start_time = now;
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        return 0;
}

/* Reads one enabled measurement: counts and counting time of its window. */
static int read_measure(struct measure *m)
{
        struct perf_group_reading now, d;
        int err = perf_group_read(m->group, &now);

        if (err)
                return err;
        if (m->have_last && !perf_reading_delta(&now, &m->last, &d) && d.time_running > 0) {
                double seconds = (double)d.time_running / 1e9;

                for (int k = 0; k < 2; k++)
                        m->rate[k] = (double)d.values[k] * AMD_DF_BEAT_BYTES / seconds;
                m->running_s += seconds;
                m->have_rate = true;
        }
        m->beats[0] = now.values[0];
        m->beats[1] = now.values[1];
        m->last = now;
        m->have_last = true;
        return 0;
}

static double coverage(const struct measure *m, double elapsed)
{
        double r = elapsed > 0 ? m->running_s / elapsed : 0;

        return r > 1 ? 1 : r;
}

struct emitter {
        const struct amd_df_socket *s;
        struct sample_emitter out;
        char socket[12];
};

static struct pcie_sample base(struct emitter *em, const struct pcie_family *family)
{
        struct pcie_sample s;

        sample_init(&s, family);
        sample_label(&s, "pmu", PMU_NAME);
        sample_label(&s, "socket", em->socket);
        return s;
}

static void emit_root_complex(struct emitter *em, unsigned int rc)
{
        const struct amd_df_socket *s = em->s;
        const struct rc_map *map = &s->rc[rc];
        double rx = 0, tx = 0;
        bool all = true, any = false;
        char name[8];
        struct pcie_sample x;

        snprintf(name, sizeof(name), "io%u", rc);
        x = base(em, PCIE_FAM_DF_ROOT_COMPLEX_INFO);
        sample_label(&x, "root_complex", name);
        sample_label(&x, "root_buses", map->buses);
        /* calibrated: every root bus of it from a calibration file */
        sample_label(&x, "mapping",
                     !map->bus_count   ? "none"
                     : map->configured ? "configured"
                                       : "calibrated");
        x.gauge = 1;
        sample_emit(&em->out, &x);

        for (size_t i = 0; i < s->count; i++) {
                const struct measure *m = &s->m[i];
                const char *loc = amd_df_locality_name(m->loc);

                if (m->rc != rc)
                        continue;
                if (!m->have_rate) {
                        all = false;
                        continue;
                }
                any = true;
                tx += m->rate[AMD_DF_READ];
                rx += m->rate[AMD_DF_WRITE];
                for (int k = 0; k < 2; k++) {
                        const char *dir = k == AMD_DF_WRITE ? "rx" : "tx";

                        x = base(em, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND);
                        sample_label(&x, "root_complex", name);
                        sample_label(&x, "locality", loc);
                        sample_label(&x, "direction", dir);
                        sample_label(&x, "tlp", "all");
                        x.gauge = m->rate[k];
                        sample_emit(&em->out, &x);
                        if (s->opts->detail < PCIE_DETAIL_FULL)
                                continue;
                        x = base(em, PCIE_FAM_DF_BEATS_TOTAL);
                        sample_label(&x, "root_complex", name);
                        sample_label(&x, "locality", loc);
                        sample_label(&x, "direction", dir);
                        x.counter = m->beats[k];
                        sample_emit(&em->out, &x);
                }
        }
        /* Utilisation needs every locality of the root complex and a
         * capacity: the links of the root buses it is mapped to. */
        if (!any || !all || !map->capacity)
                return;
        for (int k = 0; k < 2; k++) {
                const char *dir = k == AMD_DF_WRITE ? "rx" : "tx";
                struct pcie_util u;

                /* Data beats only: DMA writes arrive as 4DW requests, DMA
                 * read data leaves as completions (3DW headers). */
                pcie_util_init(&u, map->capacity, map->mps);
                pcie_util_add(&u, PCIE_COUNTS_PAYLOAD, k == AMD_DF_WRITE ? rx : tx, true,
                              k == AMD_DF_WRITE ? PCIE_TLP_REQUEST_HEADER_BYTES
                                                : PCIE_TLP_COMPLETION_HEADER_BYTES,
                              -1);
                x = base(em, PCIE_FAM_PORT_UTILIZATION_RATIO);
                sample_label(&x, "root_complex", name);
                sample_label(&x, "root_bus", map->buses);
                sample_label(&x, "direction", dir);
                pcie_util_emit(&u, &x, &em->out);
        }
}

static void emit_plan(struct emitter *em, double elapsed)
{
        const struct amd_df_socket *s = em->s;
        double worst = 2;
        size_t counting = 0;
        struct pcie_sample x;

        x = base(em, PCIE_FAM_PMU_MEASUREMENTS);
        x.gauge = (double)s->count;
        sample_emit(&em->out, &x);
        for (size_t i = 0; i < s->count; i++)
                counting += s->m[i].enabled;
        sample_set_family(&x, PCIE_FAM_PMU_MEASUREMENTS_COUNTING);
        x.gauge = (double)counting;
        sample_emit(&em->out, &x);
        for (size_t i = 0; i < s->count; i++) {
                const struct measure *m = &s->m[i];
                char target[8];

                if (!m->have_rate)
                        continue;
                if (coverage(m, elapsed) < worst)
                        worst = coverage(m, elapsed);
                if (s->opts->detail < PCIE_DETAIL_FULL)
                        continue;
                snprintf(target, sizeof(target), "io%u", m->rc);
                x = base(em, PCIE_FAM_PMU_COVERAGE_RATIO);
                sample_label(&x, "target", target);
                sample_label(&x, "event", amd_df_locality_name(m->loc));
                x.gauge = coverage(m, elapsed);
                sample_emit(&em->out, &x);
        }
        if (worst > 1 || s->opts->detail >= PCIE_DETAIL_FULL)
                return;
        /* Below full, the socket's worst measurement (min by pmu, socket
         * is the same at every level). */
        x = base(em, PCIE_FAM_PMU_COVERAGE_RATIO);
        x.gauge = worst;
        sample_emit(&em->out, &x);
}

int amd_df_socket_tick(struct amd_df_socket *s, double now, struct sample_set *out)
{
        double cpu0 = thread_cpu_seconds();
        struct emitter em = {.s = s, .out = {.set = out}};
        struct pcie_sample cs;
        int ret = 0;

        snprintf(em.socket, sizeof(em.socket), "%u", s->id);
        if (s->started) {
                for (size_t i = 0; i < s->count; i++) {
                        int err;

                        if (!s->m[i].enabled)
                                continue;
                        err = read_measure(&s->m[i]);
                        if (err && !ret)
                                ret = err;
                }
                /* Rates come from the window that just ended; the next
                 * window starts now. */
                if (s->window < s->count) {
                        int err = rotate(s);

                        if (err && !ret)
                                ret = err;
                }
                for (unsigned int rc = 0; rc < AMD_DF_ROOT_COMPLEXES; rc++)
                        emit_root_complex(&em, rc);
                emit_plan(&em, now - s->start_time);
        }
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        sample_init(&cs, PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL);
        sample_label(&cs, "pmu", PMU_NAME);
        sample_label(&cs, "socket", em.socket);
        cs.gauge = s->cpu_seconds;
        sample_emit(&em.out, &cs);
        return ret ? ret : em.out.err;
}
