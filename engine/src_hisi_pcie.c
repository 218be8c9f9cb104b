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

struct hisi_unit {
        struct hisi_pcie_core *core;
        const struct hw_env *env;
        double interval;
        struct engine_schedule due;
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
                const struct hisi_pcie_pmu *pmu = &p->pmus[i];
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

static int hisi_tick(void *unit, double now, struct sample_set *out)
{
        struct hisi_unit *u = unit;
        int err = hisi_pcie_core_tick(u->core, now, out);

        if (err && err != -ENOMEM)
                hw_logf(u->env, HW_LOG_WARNING, "%s: reading counters: %s",
                        hisi_pcie_core_name(u->core), strerror(-err));
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
