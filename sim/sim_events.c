// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_events.c - the event log of a simulated machine: the description's
 * `events` schedule, changes made at run time, and what follows from them
 * (which functions exist when). See sim_events.h.
 */
#include "sim_events.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_traffic.h"

#define MIN_PERIOD_S 1.0 /* every_s: at least a second, so integrals stay cheap */
#define MAX_TIME_S   1e9
#define PATH_LEN     160      /* "events[i].<key>" */
#define BASE_LEN     32       /* "events[i]" */
#define MAX_STEPS    10000000 /* segments one integral walks, a guard only */
#define BACK_STEPS   64       /* earlier occurrences of one add looked at */

static const char *const kind_names[SIM_EV_KINDS] = {
    [SIM_EV_REMOVE] = "remove",           [SIM_EV_ADD] = "add",
    [SIM_EV_CPU_OFFLINE] = "cpu_offline", [SIM_EV_CPU_ONLINE] = "cpu_online",
    [SIM_EV_PMU_UNBIND] = "pmu_unbind",   [SIM_EV_PMU_BIND] = "pmu_bind",
    [SIM_EV_PTT_STOP] = "ptt_stop",
};

const char *sim_event_kind_name(enum sim_event_kind k)
{
        return (unsigned int)k < SIM_EV_KINDS ? kind_names[k] : "?";
}

/* ---- the log ---- */

static pthread_mutex_t append_lock = PTHREAD_MUTEX_INITIALIZER;

size_t sim_events_count(const struct sim_machine *m)
{
        return __atomic_load_n(&m->event_count, __ATOMIC_ACQUIRE);
}

int sim_events_append(struct sim_machine *m, const struct sim_event *e)
{
        int ret = 0;

        pthread_mutex_lock(&append_lock);
        size_t n = m->event_count;

        if (n >= SIM_EVENT_LOG) {
                ret = -ENOSPC;
        } else {
                m->events[n] = *e;
                __atomic_store_n(&m->event_count, n + 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&append_lock);
        return ret;
}

/* The latest occurrence of @e at or before @t, or -INFINITY. */
static double last_at(const struct sim_event *e, double t)
{
        if (!(t >= e->at_s))
                return -INFINITY;
        if (!(e->every_s > 0))
                return e->at_s;
        return e->at_s + floor((t - e->at_s) / e->every_s) * e->every_s;
}

/* The first occurrence of @e after @t, or INFINITY. */
static double next_after(const struct sim_event *e, double t)
{
        double k, next;

        if (t < e->at_s)
                return e->at_s;
        if (!(e->every_s > 0))
                return INFINITY;
        k = floor((t - e->at_s) / e->every_s) + 1;
        next = e->at_s + k * e->every_s;
        return next > t ? next : next + e->every_s; /* rounding */
}

static bool device_event(const struct sim_event *e)
{
        return e->kind == SIM_EV_REMOVE || e->kind == SIM_EV_ADD;
}

/* Whether @a is @dev or a bridge above it (parents come before children,
 * so the walk ends). */
static bool covers(const struct sim_machine *m, size_t a, size_t dev)
{
        for (size_t d = dev, steps = 0; d < m->device_count && steps <= m->device_count;
             d = m->devices[d].parent, steps++)
                if (d == a)
                        return true;
        return false;
}

double sim_events_next(const struct sim_machine *m, double t, bool pmus)
{
        size_t n = sim_events_count(m);
        double next = INFINITY;

        for (size_t i = 0; i < n; i++) {
                enum sim_event_kind k = m->events[i].kind;
                double x;

                if (pmus && k != SIM_EV_PMU_UNBIND && k != SIM_EV_PMU_BIND &&
                    k != SIM_EV_CPU_OFFLINE && k != SIM_EV_CPU_ONLINE)
                        continue;
                x = next_after(&m->events[i], t);

                if (x < next)
                        next = x;
        }
        return next;
}

bool sim_device_has_events(const struct sim_machine *m, size_t dev)
{
        size_t n = sim_events_count(m);

        for (size_t i = 0; i < n; i++)
                if (device_event(&m->events[i]) && covers(m, m->events[i].dev, dev))
                        return true;
        return false;
}

bool sim_device_present(const struct sim_machine *m, size_t dev, double t)
{
        size_t n = sim_events_count(m);

        if (dev >= m->device_count)
                return false;
        /* Every function on the path from the root bus must exist: the
         * latest event naming it or a bridge above it is not a removal. */
        for (size_t d = dev, steps = 0; d < m->device_count && steps <= m->device_count;
             d = m->devices[d].parent, steps++) {
                double best = -INFINITY;
                bool removed = false;

                for (size_t i = 0; i < n; i++) {
                        const struct sim_event *e = &m->events[i];
                        double at;

                        if (!device_event(e) || !covers(m, e->dev, d))
                                continue;
                        at = last_at(e, t);
                        if (at == -INFINITY || at < best)
                                continue;
                        best = at; /* a later entry wins a tie */
                        removed = e->kind == SIM_EV_REMOVE;
                }
                if (removed)
                        return false;
        }
        return true;
}

double sim_device_origin(const struct sim_machine *m, size_t dev, double t)
{
        size_t n = sim_events_count(m);
        double origin = 0;

        if (!sim_device_present(m, dev, t))
                return -1;
        for (size_t i = 0; i < n; i++) {
                const struct sim_event *e = &m->events[i];
                double at = last_at(e, t);

                if (e->kind != SIM_EV_ADD || !covers(m, e->dev, dev))
                        continue;
                /* The latest occurrence that brought the function back
                 * (absent just before, present just after). */
                for (int k = 0; k < BACK_STEPS && at > origin && at != -INFINITY; k++) {
                        if (sim_device_present(m, dev, at) &&
                            !sim_device_present(m, dev, at - 1e-6)) {
                                origin = at;
                                break;
                        }
                        if (!(e->every_s > 0) || at - e->every_s < e->at_s)
                                break;
                        at -= e->every_s;
                }
        }
        return origin;
}

/* The first change of any event that names @dev or a bridge above it,
 * after @t. */
static double next_change(const struct sim_machine *m, size_t dev, double t)
{
        size_t n = sim_events_count(m);
        double next = INFINITY;

        for (size_t i = 0; i < n; i++) {
                const struct sim_event *e = &m->events[i];

                if (device_event(e) && covers(m, e->dev, dev)) {
                        double x = next_after(e, t);

                        if (x < next)
                                next = x;
                }
        }
        return next;
}

static double present_integral(const struct sim_machine *m, size_t dev,
                               const struct sim_workload *w, double t0, double t1)
{
        double total = 0, a = t0;

        if (!(t1 > t0) || dev >= m->device_count)
                return 0;
        if (!sim_device_has_events(m, dev))
                return sim_traffic_integral(w, t0, t1);
        for (long steps = 0; a < t1 && steps < MAX_STEPS; steps++) {
                double b = next_change(m, dev, a);

                if (!(b < t1))
                        b = t1;
                if (sim_device_present(m, dev, a))
                        total += sim_traffic_integral(w, a, b);
                a = b;
        }
        return total;
}

double sim_device_traffic_integral(const struct sim_machine *m, size_t dev, double t0, double t1)
{
        if (dev >= m->device_count)
                return 0;
        return present_integral(m, dev, &m->devices[dev].workload, t0, t1);
}

double sim_device_offered_integral(const struct sim_machine *m, size_t dev, double t0, double t1)
{
        struct sim_workload w;

        if (dev >= m->device_count)
                return 0;
        w = m->devices[dev].workload;
        w.scale_cap = 0; /* what it asked, not what its links carried */
        return present_integral(m, dev, &w, t0, t1);
}

double sim_device_present_seconds(const struct sim_machine *m, size_t dev, double t0, double t1)
{
        return present_integral(m, dev, NULL, t0, t1);
}

/* How many times @e happened at or before @t. */
static double occurrences(const struct sim_event *e, double t)
{
        if (!(t >= e->at_s))
                return 0;
        if (!(e->every_s > 0))
                return 1;
        return floor((t - e->at_s) / e->every_s) + 1;
}

size_t sim_events_between(const struct sim_machine *m, double t0, double t1,
                          struct sim_event_at *out, size_t cap)
{
        size_t n = sim_events_count(m), k = 0;

        for (size_t i = 0; i < n; i++) {
                const struct sim_event *e = &m->events[i];

                for (double at = next_after(e, t0); at <= t1 && k < cap; at = next_after(e, at))
                        out[k++] = (struct sim_event_at){.at = at, .index = i};
        }
        /* In time order, the log's order within one instant (insertion
         * sort: a few entries). */
        for (size_t i = 1; i < k; i++) {
                struct sim_event_at x = out[i];
                size_t j = i;

                for (; j > 0 && (out[j - 1].at > x.at ||
                                 (out[j - 1].at == x.at && out[j - 1].index > x.index));
                     j--)
                        out[j] = out[j - 1];
                out[j] = x;
        }
        return k;
}

bool sim_pmu_bound(const struct sim_machine *m, size_t core, double t, unsigned int *generation)
{
        return sim_pmu_kind_bound(m, SIM_PMUK_HISI_PCIE, core, t, generation);
}

bool sim_pmu_kind_has_events(const struct sim_machine *m, enum sim_pmu_kind kind, size_t index)
{
        size_t n = sim_events_count(m);

        for (size_t i = 0; i < n; i++)
                if ((m->events[i].kind == SIM_EV_PMU_UNBIND ||
                     m->events[i].kind == SIM_EV_PMU_BIND) &&
                    m->events[i].pmu == kind && m->events[i].core == index)
                        return true;
        return false;
}

bool sim_pmu_kind_bound(const struct sim_machine *m, enum sim_pmu_kind kind, size_t core, double t,
                        unsigned int *generation)
{
        size_t n = sim_events_count(m);
        double best = -INFINITY, binds = 0;
        bool bound = true;

        for (size_t i = 0; i < n; i++) {
                const struct sim_event *e = &m->events[i];
                double at;

                if ((e->kind != SIM_EV_PMU_UNBIND && e->kind != SIM_EV_PMU_BIND) ||
                    e->pmu != kind || e->core != core)
                        continue;
                if (e->kind == SIM_EV_PMU_BIND)
                        binds += occurrences(e, t);
                at = last_at(e, t);
                if (at == -INFINITY || at < best)
                        continue;
                best = at;
                bound = e->kind == SIM_EV_PMU_BIND;
        }
        if (generation)
                *generation = binds > 1e9 ? 1000000000u : (unsigned int)binds;
        return bound;
}

bool sim_cpu_is_online(const struct sim_machine *m, unsigned int cpu, double t)
{
        size_t n = sim_events_count(m);
        double best = -INFINITY;
        bool online = true;

        if (cpu >= m->cpus)
                return false;
        for (size_t i = 0; i < n; i++) {
                const struct sim_event *e = &m->events[i];
                double at;

                if ((e->kind != SIM_EV_CPU_OFFLINE && e->kind != SIM_EV_CPU_ONLINE) ||
                    e->cpu != cpu)
                        continue;
                at = last_at(e, t);
                if (at == -INFINITY || at < best)
                        continue;
                best = at; /* a later entry wins a tie */
                online = e->kind == SIM_EV_CPU_ONLINE;
        }
        return online;
}

int sim_pmu_find(const struct sim_machine *m, const char *name, size_t *core)
{
        for (size_t i = 0; i < m->core_count; i++) {
                char buf[64];

                snprintf(buf, sizeof(buf), "hisi_pcie%u_core%u", m->cores[i].sicl, m->cores[i].id);
                if (!strcmp(buf, name)) {
                        *core = i;
                        return 0;
                }
        }
        return -ENODEV;
}

int sim_ptt_find(const struct sim_machine *m, const char *name, size_t *core)
{
        for (size_t i = 0; i < m->core_count; i++) {
                char buf[64];

                snprintf(buf, sizeof(buf), "hisi_ptt%u_%u", m->cores[i].sicl, m->cores[i].id);
                if (m->cores[i].ptt_function != SIM_NONE && !strcmp(buf, name)) {
                        *core = i;
                        return 0;
                }
        }
        return -ENODEV;
}

/* Whether some socket has an IIO stack with box id @box. */
static bool iio_box_exists(const struct sim_machine *m, unsigned int box)
{
        for (size_t i = 0; i < m->intel.socket_count; i++)
                for (size_t k = 0; k < m->intel.sockets[i].stack_count; k++)
                        if (m->intel.sockets[i].stacks[k].box_id == box)
                                return true;
        return false;
}

int sim_pmu_any_find(const struct sim_machine *m, const char *name, enum sim_pmu_kind *kind,
                     size_t *index)
{
        static const char iio[] = "uncore_iio_free_running_";
        unsigned int box;
        char tail;

        if (!sim_pmu_find(m, name, index)) {
                *kind = SIM_PMUK_HISI_PCIE;
                return 0;
        }
        if (!sim_ptt_find(m, name, index)) {
                *kind = SIM_PMUK_HISI_PTT;
                return 0;
        }
        if (!strncmp(name, iio, strlen(iio)) && name[strlen(iio)] >= '0' &&
            name[strlen(iio)] <= '9' && sscanf(name + strlen(iio), "%u%c", &box, &tail) == 1 &&
            box < 256 && iio_box_exists(m, box)) {
                *kind = SIM_PMUK_IIO;
                *index = box;
                return 0;
        }
        if (m->amd.present && !strcmp(name, "amd_df")) {
                *kind = SIM_PMUK_AMD_DF;
                *index = 0;
                return 0;
        }
        return -ENODEV;
}

/* ---- the description's `events` ---- */

struct parse {
        struct sim_machine *m;
        const char *origin;
        char *err;
        size_t errlen;
};

static int fail(struct parse *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parse *p, const char *path, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (p->err && p->errlen)
                snprintf(p->err, p->errlen, "%s: %s: %s", p->origin, path, msg);
        return -EINVAL;
}

static int get_number(struct parse *p, json_object *o, const char *base, const char *key, double lo,
                      double hi, double *out)
{
        char path[PATH_LEN];
        json_object *v;
        double x;

        snprintf(path, sizeof(path), "%s.%s", base, key);
        if (!json_object_object_get_ex(o, key, &v))
                return 1; /* absent */
        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return fail(p, path, "expected a number");
        x = json_object_get_double(v);
        if (!(x >= lo && x <= hi))
                return fail(p, path, "%g is out of range (%g..%g)", x, lo, hi);
        *out = x;
        return 0;
}

static int get_text(struct parse *p, json_object *o, const char *base, const char *key, char *buf,
                    size_t size)
{
        char path[PATH_LEN];
        json_object *v;
        const char *s;

        snprintf(path, sizeof(path), "%s.%s", base, key);
        if (!json_object_object_get_ex(o, key, &v))
                return 1;
        if (!json_object_is_type(v, json_type_string))
                return fail(p, path, "expected a string");
        s = json_object_get_string(v);
        if (strlen(s) >= size)
                return fail(p, path, "too long");
        snprintf(buf, size, "%s", s);
        return 0;
}

/* "dddd:bb:dd.f" or "bb:dd.f" of a function of @m. */
static int find_bdf(const struct sim_machine *m, const char *s, size_t *dev)
{
        unsigned int dom = 0, bus, d, fn;
        char tail;

        if (sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &d, &fn, &tail) != 4 &&
            (dom = 0, sscanf(s, "%2x:%2x.%1x%c", &bus, &d, &fn, &tail) != 3))
                return -EINVAL;
        if (d > 0x1f || fn > 7)
                return -EINVAL;
        *dev = sim_machine_find(m, (uint16_t)dom, (uint8_t)bus, (uint8_t)d, (uint8_t)fn);
        return *dev == SIM_NONE ? -ENODEV : 0;
}

/* Keys each kind takes beside at_s, kind and every_s. */
static const char *kind_key(enum sim_event_kind k)
{
        switch (k) {
        case SIM_EV_REMOVE:
        case SIM_EV_ADD:
                return "bdf";
        case SIM_EV_CPU_OFFLINE:
        case SIM_EV_CPU_ONLINE:
                return "cpu";
        case SIM_EV_PMU_UNBIND:
        case SIM_EV_PMU_BIND:
        case SIM_EV_PTT_STOP:
                return "pmu";
        case SIM_EV_KINDS:
                break;
        }
        return "";
}

/* Whether the simulator models @k yet. */
static bool kind_supported(enum sim_event_kind k)
{
        return k < SIM_EV_KINDS;
}

static int parse_event(struct parse *p, json_object *o, const char *path, struct sim_event *e)
{
        static const char *const keys[] = {"at_s", "kind", "every_s", "bdf", "cpu", "pmu", NULL};
        char kpath[PATH_LEN], text[64];
        int r;

        if (!json_object_is_type(o, json_type_object))
                return fail(p, path, "expected an object {\"at_s\": ..., \"kind\": ...}");
        json_object_object_foreach(o, key, val)
        {
                bool known = false;

                (void)val;
                for (size_t i = 0; keys[i]; i++)
                        known = known || !strcmp(key, keys[i]);
                if (!known) {
                        snprintf(kpath, sizeof(kpath), "%s.%s", path, key);
                        return fail(p, kpath,
                                    "unknown key (an event has at_s, kind, every_s and, by kind, "
                                    "bdf, cpu or pmu)");
                }
        }
        memset(e, 0, sizeof(*e));
        e->dev = SIM_NONE;
        e->core = SIM_NONE;
        r = get_text(p, o, path, "kind", text, sizeof(text));
        snprintf(kpath, sizeof(kpath), "%s.kind", path);
        if (r > 0)
                return fail(p, kpath, "missing (\"remove\", \"add\", ...)");
        if (r)
                return r;
        e->kind = SIM_EV_KINDS;
        for (int k = 0; k < SIM_EV_KINDS; k++)
                if (!strcmp(text, kind_names[k]))
                        e->kind = (enum sim_event_kind)k;
        if (e->kind == SIM_EV_KINDS)
                return fail(p, kpath,
                            "\"%s\" is not a kind of event (remove, add, cpu_offline, "
                            "cpu_online, pmu_unbind, pmu_bind, ptt_stop)",
                            text);
        if (!kind_supported(e->kind))
                return fail(p, kpath, "\"%s\" is not simulated yet", text);
        r = get_number(p, o, path, "at_s", 0, MAX_TIME_S, &e->at_s);
        if (r > 0) {
                snprintf(kpath, sizeof(kpath), "%s.at_s", path);
                return fail(p, kpath, "missing (seconds after the machine starts)");
        }
        if (r)
                return r;
        r = get_number(p, o, path, "every_s", MIN_PERIOD_S, MAX_TIME_S, &e->every_s);
        if (r < 0)
                return r;
        for (size_t i = 3; keys[i]; i++) {
                json_object *v;

                if (strcmp(keys[i], kind_key(e->kind)) &&
                    json_object_object_get_ex(o, keys[i], &v)) {
                        snprintf(kpath, sizeof(kpath), "%s.%s", path, keys[i]);
                        return fail(p, kpath, "a \"%s\" event takes \"%s\", not \"%s\"", text,
                                    kind_key(e->kind), keys[i]);
                }
        }
        snprintf(kpath, sizeof(kpath), "%s.%s", path, kind_key(e->kind));
        if (e->kind == SIM_EV_CPU_OFFLINE || e->kind == SIM_EV_CPU_ONLINE) {
                double cpu;

                r = get_number(p, o, path, "cpu", 0, p->m->cpus - 1, &cpu);
                if (r > 0)
                        return fail(p, kpath, "missing (a CPU number)");
                if (r)
                        return r;
                if (cpu != floor(cpu))
                        return fail(p, kpath, "%g is not a CPU number", cpu);
                e->cpu = (unsigned int)cpu;
                return 0;
        }
        if (e->kind == SIM_EV_PTT_STOP) {
                r = get_text(p, o, path, "pmu", text, sizeof(text));
                if (r > 0)
                        return 0; /* every PTT device */
                if (r)
                        return r;
                if (sim_ptt_find(p->m, text, &e->core))
                        return fail(p, kpath,
                                    "no PTT device \"%s\" on this machine (the PTT of SICL s, "
                                    "core c is hisi_ptt<s>_<c>, on a core with a \"ptt\" "
                                    "function)",
                                    text);
                return 0;
        }
        if (e->kind == SIM_EV_PMU_UNBIND || e->kind == SIM_EV_PMU_BIND) {
                r = get_text(p, o, path, "pmu", text, sizeof(text));
                if (r > 0)
                        return fail(p, kpath,
                                    "missing (the PMU: \"hisi_pcie<sicl>_core<core>\", "
                                    "\"hisi_ptt<sicl>_<core>\", "
                                    "\"uncore_iio_free_running_<box>\" or \"amd_df\")");
                if (r)
                        return r;
                if (sim_pmu_any_find(p->m, text, &e->pmu, &e->core))
                        return fail(p, kpath,
                                    "no PMU \"%s\" on this machine (the hisi_pcie PMU of SICL s, "
                                    "core c is hisi_pcie<s>_core<c>, its PTT device "
                                    "hisi_ptt<s>_<c>; an Intel IIO stack's is "
                                    "uncore_iio_free_running_<box>, the AMD data fabric's "
                                    "amd_df)",
                                    text);
                return 0;
        }
        r = get_text(p, o, path, "bdf", text, sizeof(text));
        if (r > 0)
                return fail(p, kpath, "missing (the function, \"dddd:bb:dd.f\")");
        if (r)
                return r;
        r = find_bdf(p->m, text, &e->dev);
        if (r == -EINVAL)
                return fail(p, kpath, "\"%s\" is not a BDF: expected \"dddd:bb:dd.f\"", text);
        if (r)
                return fail(p, kpath, "no function %s on this machine", text);
        return 0;
}

int sim_events_parse(struct sim_machine *m, json_object *events, const char *origin, char *err,
                     size_t errlen)
{
        struct parse p = {
            .m = m, .origin = origin ? origin : "<string>", .err = err, .errlen = errlen};
        char path[BASE_LEN];
        size_t n;

        if (!json_object_is_type(events, json_type_array))
                return fail(&p, "events", "expected an array of events");
        n = json_object_array_length(events);
        if (n > SIM_MAX_EVENTS)
                return fail(&p, "events", "%zu events, at most %d", n, SIM_MAX_EVENTS);
        for (size_t i = 0; i < n; i++) {
                struct sim_event e;
                int r;

                snprintf(path, sizeof(path), "events[%zu]", i);
                r = parse_event(&p, json_object_array_get_idx(events, i), path, &e);
                if (r)
                        return r;
                m->events[m->event_count++] = e;
        }
        m->schedule_count = m->event_count;
        return 0;
}
