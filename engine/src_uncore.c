// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_uncore.c - the Intel uncore PMON discovery inventory behind the
 * source contract: the tables are read once (they are static) and their
 * samples handed to the host every interval. One unit per machine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "sample.h"
#include "uncore_discovery.h"

struct inventory_unit {
        struct uncore_inventory *inv;
        struct sample_set samples; /* computed once */
};

static bool uncore_enabled(const struct engine_config *cfg, bool dump)
{
        (void)dump; /* a dump's config space has the DVSECs too */
        return cfg->collect_uncore;
}

static void uncore_free(void *unit)
{
        struct inventory_unit *u = unit;

        uncore_inventory_free(u->inv);
        sample_set_free(&u->samples);
        free(u);
}

static int uncore_discover_units(struct engine_discovery *d)
{
        const struct hw_env *env = engine_discovery_env(d);
        struct inventory_unit *u = calloc(1, sizeof(*u));
        int err;

        if (!u)
                return -ENOMEM;
        err = uncore_discover(env, &u->inv);
        if (err) {
                hw_logf(env, HW_LOG_WARNING, "uncore discovery: %s", strerror(-err));
                free(u);
                return 0;
        }
        if (uncore_inventory_samples(u->inv, &u->samples))
                hw_logf(env, HW_LOG_WARNING, "uncore discovery: out of memory");
        else if (u->inv->source_count)
                hw_logf(env, HW_LOG_INFO, "uncore discovery: %zu PMON discovery table(s), %s",
                        u->inv->source_count, uncore_platform_name(u->inv->platform));
        return engine_discovery_add(d, u, "pcie uncore");
}

static int uncore_start(void *unit, double now)
{
        (void)unit, (void)now;
        return 0;
}

static int uncore_tick(void *unit, double now, struct sample_set *out)
{
        const struct inventory_unit *u = unit;

        (void)now;
        for (size_t i = 0; i < u->samples.count; i++)
                if (sample_set_add(out, &u->samples.samples[i]))
                        return -ENOMEM;
        return 1;
}

static void uncore_stop(void *unit)
{
        (void)unit;
}

const struct engine_source engine_source_uncore = {
    .name = "uncore",
    .threaded = false,
    .enabled = uncore_enabled,
    .discover = uncore_discover_units,
    .start = uncore_start,
    .tick = uncore_tick,
    .stop = uncore_stop,
    .free = uncore_free,
};
