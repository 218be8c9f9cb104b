// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_hisi_pcie.c - the HiSilicon PCIe PMU behind the source contract: one
 * unit (and thread) per PCIe core, each counting with its own perf fds
 * (hisi_pcie_core.h) and publishing once per interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "hw_env.h"
#include "perf_pmu.h"
#include "sample.h"

struct hisi_unit {
        struct hisi_pcie_core *core;
        struct hisi_pcie_pmu *pmu; /* in the source's shared list; this unit's own */
        const struct hw_env *env;
        double interval;
        struct engine_schedule due;
        bool pmu_gone;                      /* unbound: waiting for it to be bound again */
        struct engine_complaint read_error; /* a reading failed and was logged */
        struct engine_topology *topology;   /* the monitor's scans */
        unsigned long topology_generation;  /* the one the plan follows */
};

/* The PMUs found: the cores point into them. */
struct hisi_pmus {
        struct hisi_pcie_pmu *pmus;
        size_t count;
};

static bool hisi_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && !dump; /* counters need the machine itself */
}

static void release_pmus(void *shared)
{
        struct hisi_pmus *p = shared;

        hisi_pcie_free(p->pmus, p->count);
        free(p);
}

static void hisi_free(void *unit)
{
        struct hisi_unit *u = unit;

        hisi_pcie_core_free(u->core);
        free(u);
}

static int hisi_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        const struct pcie_topo *topo = engine_discovery_topo(d);
        struct hisi_pcie_opts opts = cfg->pmu;
        struct hisi_pmus *p;
        int err;

        if (!topo)
                return 0;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        if (hisi_pcie_discover(env, topo, &p->pmus, &p->count))
                p->count = 0;
        err = engine_discovery_own(d, p, release_pmus);
        if (err)
                return err;
        opts.endpoint_filter = cfg->endpoints_given ? &cfg->endpoints : NULL;
        for (size_t i = 0; i < p->count && !err; i++) {
                struct hisi_pcie_pmu *pmu = &p->pmus[i];
                struct hisi_unit *u = calloc(1, sizeof(*u));
                char name[32];

                if (!u)
                        return -ENOMEM;
                err = hisi_pcie_core_new(env, pmu, topo, &opts, &u->core);
                if (err) {
                        hw_logf(env, HW_LOG_WARNING, "%s: nothing to count (%s)", pmu->name,
                                err == -ENODATA ? "no Root Port or no known event"
                                                : strerror(-err));
                        free(u);
                        err = 0;
                        continue;
                }
                u->env = env;
                u->pmu = pmu;
                u->topology = engine_discovery_topology(d);
                u->topology_generation = engine_topology_generation(u->topology);
                u->interval = engine_discovery_interval(d);
                snprintf(name, sizeof(name), "pcie s%uc%u", pmu->sicl, pmu->core);
                err = engine_discovery_add(d, u, name);
        }
        return err;
}

static int hisi_start(void *unit, double now)
{
        struct hisi_unit *u = unit;
        int err = hisi_pcie_core_start(u->core, now);

        if (err)
                return err; /* why was logged by the core */
        engine_schedule_start(&u->due, u->interval, now);
        hw_logf(u->env, HW_LOG_INFO, "%s: counting %zu measurements", hisi_pcie_core_name(u->core),
                hisi_pcie_core_measurements(u->core));
        return 0;
}

/*
 * Whether a failed reading means the PMU went away: its driver was unbound
 * (perf_pmu_unregister() revokes the open events: read() gives 0 bytes,
 * ioctl() -ENODEV) and its directory is gone, or it was bound again with a
 * new perf type already. Then its counters are closed, logged once.
 */
static bool pmu_went(struct hisi_unit *u)
{
        uint32_t type = perf_pmu_type(u->pmu->pmu);
        int err = perf_pmu_reload_type(u->env, u->pmu->pmu);

        if (!err && perf_pmu_type(u->pmu->pmu) == type)
                return false;
        hw_logf(u->env, HW_LOG_WARNING,
                "%s: PMU gone (its driver was unbound%s); its counters stop until it is back",
                hisi_pcie_core_name(u->core), err ? "" : " and bound again");
        hisi_pcie_core_stop(u->core);
        u->pmu_gone = true;
        return true;
}

/* A PMU that went: opened again once its directory is back, with the perf
 * type it has now (the first interval after that has no rates yet). */
static void pmu_back(struct hisi_unit *u, double now)
{
        if (perf_pmu_reload_type(u->env, u->pmu->pmu) || hisi_pcie_core_start(u->core, now))
                return;
        u->pmu_gone = false;
        u->read_error.shown = false;
        hw_logf(u->env, HW_LOG_INFO, "%s: PMU back (perf type %u); counting %zu measurements again",
                hisi_pcie_core_name(u->core), perf_pmu_type(u->pmu->pmu),
                hisi_pcie_core_measurements(u->core));
}

/* A PMU's cpumask moves when its CPU goes offline; the kernel migrates the
 * open events along (perf_pmu_migrate_context()), so they count on: only
 * later opens need the new CPU. Logged once per move. */
static void follow_cpumask(struct hisi_unit *u)
{
        char text[64], *end;
        long cpu;

        if (hw_read_file(u->env, HW_SYSFS, text, sizeof(text),
                         "bus/event_source/devices/%s/cpumask", u->pmu->name) <= 0)
                return;
        cpu = strtol(text, &end, 10);
        if (end == text || cpu < 0 || cpu > 1000000 || (int)cpu == u->pmu->cpu)
                return; /* empty: no CPU online for it; the next move says */
        hw_logf(u->env, HW_LOG_INFO,
                "%s: cpumask moved from CPU %d to CPU %ld (a CPU went offline); the kernel "
                "moved its counters along",
                hisi_pcie_core_name(u->core), u->pmu->cpu, cpu);
        u->pmu->cpu = (int)cpu;
}

/* Functions came or went (the monitor's generation moved): the plan
 * follows the endpoints below this core's ports, without a restart. */
static void follow_topology(struct hisi_unit *u)
{
        unsigned long generation = engine_topology_generation(u->topology);
        const struct pcie_topo *topo;

        if (generation == u->topology_generation)
                return;
        topo = engine_topology_lock(u->topology, &generation);
        if (hisi_pcie_core_update(u->core, topo) >= 0)
                u->topology_generation = generation; /* else: tried again next time */
        engine_topology_unlock(u->topology);
}

static int hisi_tick(void *unit, double now, struct sample_set *out)
{
        struct hisi_unit *u = unit;
        int err;

        follow_topology(u);
        if (u->pmu_gone) {
                pmu_back(u, now);
                engine_schedule_ticked(&u->due, now);
                return 0; /* nothing to publish: its series go stale */
        }
        err = hisi_pcie_core_tick(u->core, now, out);
        if (err && err != -ENOMEM && pmu_went(u)) {
                sample_set_clear(out);
                engine_schedule_ticked(&u->due, now);
                return 0;
        }
        if (err && err != -ENOMEM)
                engine_complain(u->env, &u->read_error, "%s: reading counters: %s",
                                hisi_pcie_core_name(u->core), strerror(-err));
        else if (!err)
                engine_complaint_clear(u->env, &u->read_error, "%s: reading counters again",
                                       hisi_pcie_core_name(u->core));
        follow_cpumask(u);
        engine_schedule_ticked(&u->due, now);
        return 1;
}

static double hisi_next_tick(const void *unit)
{
        return ((const struct hisi_unit *)unit)->due.next;
}

static void hisi_stop(void *unit)
{
        hisi_pcie_core_stop(((struct hisi_unit *)unit)->core);
}

const struct engine_source engine_source_hisi_pcie = {
    .name = "hisi_pcie",
    .threaded = true,
    .enabled = hisi_enabled,
    .discover = hisi_discover,
    .start = hisi_start,
    .tick = hisi_tick,
    .next_tick = hisi_next_tick,
    .stop = hisi_stop,
    .free = hisi_free,
};
