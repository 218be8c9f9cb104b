// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_intel_iio.c - Intel IIO PCIe bandwidth behind the source contract:
 * one unit (and thread) per socket, reading the free-running counters of
 * every IIO stack on it (intel_iio.h) once per interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "intel_iio.h"
#include "sample.h"

struct iio_unit {
        struct intel_iio_socket *socket; /* owned by the shared intel_iio */
        const struct hw_env *env;
        double interval;
        struct engine_schedule due;
        bool baseline; /* read once at start: the first interval has rates */
        struct engine_complaint read_error;
};

static bool iio_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && cfg->collect_iio && !dump;
}

static void release_iio(void *shared)
{
        intel_iio_free(shared);
}

static void iio_free(void *unit)
{
        free(unit);
}

static int iio_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        const struct pcie_topo *topo = engine_discovery_topo(d);
        struct intel_iio *iio = NULL;
        int err;

        if (!topo)
                return 0;
        /* The collectors keep a pointer to the options: the configuration
         * outlives the engine. */
        err = intel_iio_discover(env, topo, &cfg->iio, &iio);
        if (err == -ENOMEM)
                return err;
        if (!iio)
                return 0;
        err = engine_discovery_own(d, iio, release_iio);
        for (size_t i = 0; i < intel_iio_socket_count(iio) && !err; i++) {
                struct iio_unit *u = calloc(1, sizeof(*u));
                char name[32];

                if (!u)
                        return -ENOMEM;
                u->socket = intel_iio_socket_at(iio, i);
                u->env = env;
                u->interval = engine_discovery_interval(d);
                u->baseline = engine_discovery_baseline(d);
                snprintf(name, sizeof(name), "pcie iio%u", intel_iio_socket_id(u->socket));
                err = engine_discovery_add(d, u, name);
        }
        return err;
}

static int iio_start(void *unit, double now)
{
        struct iio_unit *u = unit;
        int err = intel_iio_socket_start(u->socket, now);

        if (err)
                return err;
        if (u->baseline) {
                struct sample_set scratch = SAMPLE_SET_INIT;

                intel_iio_socket_tick(u->socket, now, &scratch);
                sample_set_free(&scratch);
        }
        engine_schedule_start(&u->due, u->interval, now);
        hw_logf(u->env, HW_LOG_INFO, "%s: counting %zu measurements",
                intel_iio_socket_name(u->socket), intel_iio_socket_stacks(u->socket));
        return 0;
}

static int iio_tick(void *unit, double now, struct sample_set *out)
{
        struct iio_unit *u = unit;
        int err = intel_iio_socket_tick(u->socket, now, out);

        if (err && err != -ENOMEM)
                engine_complain(u->env, &u->read_error, "%s: reading counters: %s",
                                intel_iio_socket_name(u->socket), strerror(-err));
        else if (!err)
                engine_complaint_clear(u->env, &u->read_error, "%s: reading counters again",
                                       intel_iio_socket_name(u->socket));
        engine_schedule_ticked(&u->due, now);
        return 1;
}

static double iio_next_tick(const void *unit)
{
        return ((const struct iio_unit *)unit)->due.next;
}

static void iio_stop(void *unit)
{
        intel_iio_socket_stop(((struct iio_unit *)unit)->socket);
}

const struct engine_source engine_source_intel_iio = {
    .name = "intel_iio",
    .threaded = true,
    .enabled = iio_enabled,
    .discover = iio_discover,
    .start = iio_start,
    .tick = iio_tick,
    .next_tick = iio_next_tick,
    .stop = iio_stop,
    .free = iio_free,
};
