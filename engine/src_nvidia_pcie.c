// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_nvidia_pcie.c - the NVIDIA Grace PCIe PMU behind the source
 * contract: one unit (and thread) per nvidia_pcie_pmu_<node>, rotating
 * its one-port window across the Root Ports once per interval
 * (nvidia_pcie.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "nvidia_pcie.h"
#include "sample.h"

struct nv_unit {
        struct nvidia_pcie_socket *socket; /* owned by the shared nvidia_pcie */
        const struct hw_env *env;
        double interval;
        struct engine_schedule due;
        struct engine_complaint read_error;
};

static bool nv_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && cfg->collect_nvidia && !dump;
}

static void release_nv(void *shared)
{
        nvidia_pcie_free(shared);
}

static void nv_free(void *unit)
{
        free(unit);
}

static int nv_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        const struct pcie_topo *topo = engine_discovery_topo(d);
        struct nvidia_pcie *nv = NULL;
        int err;

        if (!topo)
                return 0;
        err = nvidia_pcie_discover(env, topo, &cfg->nvidia, &nv);
        if (err == -ENOMEM)
                return err;
        if (!nv)
                return 0;
        err = engine_discovery_own(d, nv, release_nv);
        for (size_t i = 0; i < nvidia_pcie_socket_count(nv) && !err; i++) {
                struct nvidia_pcie_socket *s = nvidia_pcie_socket_at(nv, i);
                struct nv_unit *u;
                char name[32];

                if (!nvidia_pcie_socket_ports(s))
                        continue; /* logged by discovery */
                u = calloc(1, sizeof(*u));
                if (!u)
                        return -ENOMEM;
                u->socket = s;
                u->env = env;
                u->interval = engine_discovery_interval(d);
                snprintf(name, sizeof(name), "pcie nv%u", nvidia_pcie_socket_node(s));
                err = engine_discovery_add(d, u, name);
        }
        return err;
}

static int nv_start(void *unit, double now)
{
        struct nv_unit *u = unit;
        int err = nvidia_pcie_socket_start(u->socket, now);

        if (err)
                return err; /* logged by the collector */
        engine_schedule_start(&u->due, u->interval, now);
        hw_logf(u->env, HW_LOG_INFO, "%s: counting %zu Root Ports, one per interval",
                nvidia_pcie_socket_name(u->socket), nvidia_pcie_socket_ports(u->socket));
        return 0;
}

static int nv_tick(void *unit, double now, struct sample_set *out)
{
        struct nv_unit *u = unit;
        int err = nvidia_pcie_socket_tick(u->socket, now, out);

        if (err && err != -ENOMEM)
                engine_complain(u->env, &u->read_error, "%s: reading counters: %s",
                                nvidia_pcie_socket_name(u->socket), strerror(-err));
        else if (!err)
                engine_complaint_clear(u->env, &u->read_error, "%s: reading counters again",
                                       nvidia_pcie_socket_name(u->socket));
        engine_schedule_ticked(&u->due, now);
        return 1;
}

static double nv_next_tick(const void *unit)
{
        return ((const struct nv_unit *)unit)->due.next;
}

static void nv_stop(void *unit)
{
        nvidia_pcie_socket_stop(((struct nv_unit *)unit)->socket);
}

const struct engine_source engine_source_nvidia_pcie = {
    .name = "nvidia_pcie",
    .threaded = true,
    .enabled = nv_enabled,
    .discover = nv_discover,
    .start = nv_start,
    .tick = nv_tick,
    .next_tick = nv_next_tick,
    .stop = nv_stop,
    .free = nv_free,
};
