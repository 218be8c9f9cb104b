// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_dwc_pcie.c - the Synopsys DesignWare PCIe PMUs (dwc_rootport_*)
 * behind the source contract: one unit (and thread) for all of them, which
 * switches every Root Port's one counter between rx and tx in the middle
 * of each interval and publishes at its end (dwc_pcie.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwc_pcie.h"
#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "sample.h"

struct dwc_unit {
        struct dwc_pcie *d;
        const struct hw_env *env;
        struct engine_complaint read_error; /* a reading failed and was logged */
};

static bool dwc_enabled(const struct engine_config *cfg, bool dump)
{
        return cfg->collect_pmu && cfg->collect_dwc && !dump;
}

static void dwc_free(void *unit)
{
        struct dwc_unit *u = unit;

        dwc_pcie_free(u->d);
        free(u);
}

static int dwc_discover(struct engine_discovery *d)
{
        const struct engine_config *cfg = engine_discovery_config(d);
        struct dwc_unit *u;
        int err;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->env = engine_discovery_env(d);
        /* The collector keeps a pointer to the options: the configuration
         * outlives the engine. */
        err = dwc_pcie_discover(u->env, engine_discovery_topo(d), &cfg->dwc,
                                engine_discovery_interval(d), &u->d);
        if (err || !u->d) {
                free(u);
                return err;
        }
        return engine_discovery_add(d, u, "pcie dwc");
}

static int dwc_start(void *unit, double now)
{
        struct dwc_unit *u = unit;
        int err = dwc_pcie_start(u->d, now);

        if (err)
                return err; /* why was logged by the collector */
        hw_logf(u->env, HW_LOG_INFO,
                "dwc_pcie: counting %zu Root Ports, rx and tx in turn (one counter each)",
                dwc_pcie_port_count(u->d));
        return 0;
}

static int dwc_tick(void *unit, double now, struct sample_set *out)
{
        struct dwc_unit *u = unit;
        int read_err, published = dwc_pcie_tick(u->d, now, out, &read_err);

        if (published < 0)
                return published;
        if (read_err && read_err != -ENOMEM)
                engine_complain(u->env, &u->read_error, "dwc_pcie: reading counters: %s",
                                strerror(-read_err));
        else if (!read_err)
                engine_complaint_clear(u->env, &u->read_error, "dwc_pcie: reading counters again");
        return published;
}

static double dwc_next_tick(const void *unit)
{
        return dwc_pcie_next_tick(((const struct dwc_unit *)unit)->d);
}

static void dwc_stop(void *unit)
{
        dwc_pcie_stop(((struct dwc_unit *)unit)->d);
}

const struct engine_source engine_source_dwc_pcie = {
    .name = "dwc_pcie",
    .threaded = true,
    .enabled = dwc_enabled,
    .discover = dwc_discover,
    .start = dwc_start,
    .tick = dwc_tick,
    .next_tick = dwc_next_tick,
    .stop = dwc_stop,
    .free = dwc_free,
};
