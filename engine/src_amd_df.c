// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_amd_df.c - AMD data fabric upstream DMA bandwidth per IO root
 * complex behind the source contract: one unit (and thread) per socket,
 * reading and rotating its amd_df counter groups (amd_df.h) once per
 * interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "amd_df.h"
#include "sample.h"

struct df_unit {
        struct amd_df_socket *socket; /* owned by the shared amd_df */
        const struct hw_env *env;
        double interval;
        struct engine_schedule due;
        struct engine_complaint read_error;
        bool pmu_gone; /* unbound: waiting for it to be bound again */
};

static bool df_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && cfg->collect_amd_df && !dump;
}

static void release_df(void *shared)
{
        amd_df_free(shared);
}

static void df_free(void *unit)
{
        free(unit);
}

static int df_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        const struct pcie_topo *topo = engine_discovery_topo(d);
        struct amd_df *df = NULL;
        int err;

        if (!topo)
                return 0;
        /* The collectors keep a pointer to the options: the configuration
         * outlives the engine. */
        err = amd_df_discover(env, topo, &cfg->amd_df, &df);
        if (err == -ENOMEM)
                return err;
        if (!df)
                return 0;
        err = engine_discovery_own(d, df, release_df);
        for (size_t i = 0; i < amd_df_socket_count(df) && !err; i++) {
                struct df_unit *u = calloc(1, sizeof(*u));
                char name[32];

                if (!u)
                        return -ENOMEM;
                u->socket = amd_df_socket_at(df, i);
                u->env = env;
                u->interval = engine_discovery_interval(d);
                snprintf(name, sizeof(name), "pcie df%u", amd_df_socket_id(u->socket));
                err = engine_discovery_add(d, u, name);
        }
        return err;
}

static int df_start(void *unit, double now)
{
        struct df_unit *u = unit;
        int err = amd_df_socket_start(u->socket, now);

        if (err)
                return err;
        /* No baseline reading: a new group counts from 0, and a tick
         * here would rotate the first window away before it counted. */
        engine_schedule_start(&u->due, u->interval, now);
        hw_logf(u->env, HW_LOG_INFO, "%s: %zu measurements, %zu counting at a time",
                amd_df_socket_name(u->socket), amd_df_socket_measurements(u->socket),
                amd_df_socket_window(u->socket));
        return 0;
}

/*
 * Whether a failed reading means the PMU went away: its driver was unbound
 * (perf_pmu_unregister() revokes the open events: read() gives 0 bytes)
 * and its directory is gone, or it was bound again with a new perf type
 * already. Then the socket's counters are closed, logged once.
 */
static bool pmu_went(struct df_unit *u)
{
        uint32_t type;
        int err = amd_df_pmu_type(u->env, &type);

        if (!err && type == amd_df_socket_type(u->socket))
                return false;
        hw_logf(u->env, HW_LOG_WARNING,
                "%s: PMU gone (its driver was unbound%s); its counters stop until it is back",
                amd_df_socket_name(u->socket), err ? "" : " and bound again");
        amd_df_socket_stop(u->socket);
        u->pmu_gone = true;
        return true;
}

/* A PMU that went: opened again once its directory is back, with the perf
 * type it has now (the first interval after that has no rates yet). */
static void pmu_back(struct df_unit *u, double now)
{
        uint32_t type;

        if (amd_df_pmu_type(u->env, &type))
                return;
        amd_df_socket_set_type(u->socket, type);
        if (amd_df_socket_start(u->socket, now))
                return;
        u->pmu_gone = false;
        u->read_error.shown = false;
        hw_logf(u->env, HW_LOG_INFO, "%s: PMU back (perf type %u); counting %zu measurements again",
                amd_df_socket_name(u->socket), type, amd_df_socket_measurements(u->socket));
}

static int df_tick(void *unit, double now, struct sample_set *out)
{
        struct df_unit *u = unit;
        int err;

        if (u->pmu_gone) {
                pmu_back(u, now);
                engine_schedule_ticked(&u->due, now);
                return 0; /* nothing to publish: its series go stale */
        }
        err = amd_df_socket_tick(u->socket, now, out);
        if (err && err != -ENOMEM && pmu_went(u)) {
                sample_set_clear(out);
                engine_schedule_ticked(&u->due, now);
                return 0;
        }
        if (err && err != -ENOMEM)
                engine_complain(u->env, &u->read_error, "%s: reading counters: %s",
                                amd_df_socket_name(u->socket), strerror(-err));
        else if (!err)
                engine_complaint_clear(u->env, &u->read_error, "%s: reading counters again",
                                       amd_df_socket_name(u->socket));
        engine_schedule_ticked(&u->due, now);
        return 1;
}

static double df_next_tick(const void *unit)
{
        return ((const struct df_unit *)unit)->due.next;
}

static void df_stop(void *unit)
{
        amd_df_socket_stop(((struct df_unit *)unit)->socket);
}

const struct engine_source engine_source_amd_df = {
    .name = "amd_df",
    .threaded = true,
    .enabled = df_enabled,
    .discover = df_discover,
    .start = df_start,
    .tick = df_tick,
    .next_tick = df_next_tick,
    .stop = df_stop,
    .free = df_free,
};
