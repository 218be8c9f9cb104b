// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_monitor.c - the topology monitor behind the source contract: PCI
 * topology, link speed/width and changes, MPS/MRRS audit and AER counters
 * (pcie_monitor.h), read on the host's interval. One unit per machine.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine_source.h"
#include "engine_config.h"
#include "hw_env.h"
#include "pci_source.h"
#include "pcie_monitor.h"
#include "pciescope_config.h"

/* The monitor, and where its scans go when the functions changed. */
struct monitor_unit {
        struct pcie_monitor *mon;
        struct engine_topology *topology;
};

static bool monitor_enabled(const struct engine_config *cfg, bool dump)
{
        (void)cfg, (void)dump;
        return true; /* what it reports is chosen by Collect* inside */
}

static int monitor_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        const struct hw_env *env = engine_discovery_env(d);
        struct pcie_monitor_opts opts = cfg->monitor;
        const char *simulated = engine_discovery_simulated(d), *source;
        struct pcie_monitor *mon;
        struct monitor_unit *u;
        enum pcie_policy policy;
        int err;

        opts.read_sysfs = env->sysfs_root != NULL;
        opts.filter = &cfg->filter;
        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        err = pcie_monitor_new(env, &opts, &mon);
        if (err) {
                free(u);
                return err;
        }
        u->mon = mon;
        u->topology = engine_discovery_topology(d);
        policy = pcie_monitor_policy(mon, &source);
        hw_logf(env, HW_LOG_INFO,
                "pciescope %s reading %s PCI devices%s%s (sysfs %s); MPS policy %s (%s)",
                PACKAGE_VERSION,
                cfg->pci_dump ? "dumped"
                : simulated   ? "the SIMULATED machine's"
                              : "this machine's",
                cfg->pci_dump ? " from " : "", cfg->pci_dump ? cfg->pci_dump : "",
                env->sysfs_root ? env->sysfs_root : "not used", pcie_policy_name(policy), source);
        return engine_discovery_add(d, u, "pcie monitor");
}

static int monitor_start(void *unit, double now)
{
        (void)unit, (void)now;
        return 0;
}

static int add_to_set(void *ctx, const struct pcie_sample *s)
{
        return sample_set_add(ctx, s);
}

/* 1 with the interval's samples, or -EIO & co when the bus could not be
 * read at all (logged once by the monitor). */
static int monitor_tick(void *unit, double now, struct sample_set *out)
{
        struct monitor_unit *u = unit;
        int err = pcie_monitor_sample(u->mon, add_to_set, out);
        struct pcie_topo *changed = pcie_monitor_take_topology(u->mon);

        (void)now;
        /* Functions came or went: the units that plan per device follow. */
        if (changed)
                engine_topology_publish(u->topology, changed);
        return err < 0 ? err : 1;
}

static void monitor_stop(void *unit)
{
        (void)unit;
}

static void monitor_free(void *unit)
{
        struct monitor_unit *u = unit;

        pcie_monitor_free(u->mon);
        free(u);
}

const struct engine_source engine_source_monitor = {
    .name = "monitor",
    .threaded = false,
    .enabled = monitor_enabled,
    .discover = monitor_discover,
    .start = monitor_start,
    .tick = monitor_tick,
    .stop = monitor_stop,
    .free = monitor_free,
};
