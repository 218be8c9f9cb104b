// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_ptt.c - HiSilicon PTT trace windows behind the source contract: one
 * unit (and thread) per hisi_ptt device. The capture asks for its own
 * ticks (a window's start, a poll every few ms while it runs, its end,
 * ptt_capture.h); its samples are published once per interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "perf_pmu.h"
#include "ptt_capture.h"

struct ptt_unit {
        struct ptt_capture *cap;
        const struct hw_env *env;
        double interval, next_publish;
        struct engine_complaint no_memory;
};

static bool ptt_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && cfg->collect_trace && !dump;
}

static void release_budget(void *shared)
{
        ptt_budget_free(shared);
}

static void ptt_free(void *unit)
{
        struct ptt_unit *u = unit;

        ptt_capture_free(u->cap);
        free(u);
}

static int add_devices(struct engine_discovery *d, char **names, size_t n)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        struct ptt_budget *budget;
        int err = ptt_budget_new(cfg->max_traces, &budget);

        if (!err)
                err = engine_discovery_own(d, budget, release_budget);
        for (size_t i = 0; i < n && !err; i++) {
                struct ptt_unit *u = calloc(1, sizeof(*u));
                char name[32], why[256] = "";

                if (!u)
                        return -ENOMEM;
                /* Windows are staggered over the period across devices. */
                err = ptt_capture_new(env, names[i], &cfg->trace, budget, (unsigned int)i,
                                      (unsigned int)n, engine_discovery_now(d), &u->cap, why,
                                      sizeof(why));
                if (err) {
                        hw_logf(env, HW_LOG_ERROR, "%s: no trace windows: %s", names[i],
                                why[0] ? why : strerror(-err));
                        free(u);
                        err = 0;
                        continue;
                }
                u->env = env;
                u->interval = engine_discovery_interval(d);
                snprintf(name, sizeof(name), "pcie ptt%u", (unsigned int)(i % 1000));
                err = engine_discovery_add(d, u, name);
        }
        if (!err)
                hw_logf(env, HW_LOG_INFO,
                        "PTT trace windows of %g s every %g s on %zu device(s), at most %u at "
                        "once",
                        cfg->trace.duration_s, cfg->trace.period_s, n, cfg->max_traces);
        return err;
}

static int ptt_discover(struct engine_discovery *d)
{
        char **names = NULL;
        int n = ptt_capture_list(engine_discovery_env(d), &names), err = 0;

        if (n > 0)
                err = add_devices(d, names, (size_t)n);
        perf_pmu_list_free(names);
        return err;
}

static int ptt_start(void *unit, double now)
{
        struct ptt_unit *u = unit;

        u->next_publish = now + u->interval;
        return 0;
}

static int ptt_tick(void *unit, double now, struct sample_set *out)
{
        struct ptt_unit *u = unit;

        if (now >= ptt_capture_next_tick(u->cap))
                ptt_capture_tick(u->cap, now); /* failures are counted and logged */
        if (now < u->next_publish)
                return 0;
        if (ptt_capture_samples(u->cap, out))
                engine_complain(u->env, &u->no_memory, "%s: out of memory for its samples",
                                ptt_capture_name(u->cap));
        else
                engine_complaint_clear(u->env, &u->no_memory, "%s: samples published again",
                                       ptt_capture_name(u->cap));
        u->next_publish += u->interval;
        if (now > u->next_publish)
                u->next_publish = now + u->interval;
        return 1;
}

static double ptt_next_tick(const void *unit)
{
        const struct ptt_unit *u = unit;
        double due = ptt_capture_next_tick(u->cap);

        return due < u->next_publish ? due : u->next_publish;
}

static void ptt_stop(void *unit)
{
        (void)unit; /* a running window is ended when the unit is freed */
}

const struct engine_source engine_source_ptt = {
    .name = "ptt",
    .threaded = true,
    .enabled = ptt_enabled,
    .discover = ptt_discover,
    .start = ptt_start,
    .tick = ptt_tick,
    .next_tick = ptt_next_tick,
    .stop = ptt_stop,
    .free = ptt_free,
};
