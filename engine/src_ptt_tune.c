// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * src_ptt_tune.c - the HiSilicon PTT tune knobs behind the source
 * contract: the configured Tune values are applied at start (each
 * device's original value is kept and written back when the unit is
 * freed), and the knobs are read as gauges every interval. One unit per
 * machine, for every PTT device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"
#include "engine_source.h"
#include "hw_env.h"
#include "ptt_tune.h"

struct tune_unit {
        struct ptt_tuner *tuner;
        const struct engine_config *cfg;
        const struct hw_env *env;
};

static bool tune_enabled(const struct engine_config *cfg, bool dump)
{
        (void)cfg;
        return !dump; /* tune files live in the machine's own sysfs */
}

static void tune_free(void *unit)
{
        struct tune_unit *u = unit;

        ptt_tuner_free(u->tuner); /* puts the original values back */
        free(u);
}

static int tune_discover(struct engine_discovery *d)
{
        const struct hw_env *env = engine_discovery_env(d);
        struct tune_unit *u = calloc(1, sizeof(*u));
        int err;

        if (!u)
                return -ENOMEM;
        u->cfg = engine_discovery_config(d);
        u->env = env;
        err = ptt_tuner_new(env, &u->tuner);
        if (err) {
                hw_logf(env, HW_LOG_WARNING, "PTT tune files: %s", strerror(-err));
                free(u);
                return 0;
        }
        return engine_discovery_add(d, u, "pcie tune");
}

static int tune_start(void *unit, double now)
{
        struct tune_unit *u = unit;
        const struct engine_config *cfg = u->cfg;

        (void)now;
        if (cfg->tune_count && ptt_tuner_devices(u->tuner) == 0)
                hw_logf(u->env, HW_LOG_WARNING,
                        "Tune is configured but there is no HiSilicon PTT device (hisi_ptt*) "
                        "with tune files; nothing is changed");
        for (size_t i = 0; i < cfg->tune_count; i++)
                ptt_tuner_apply(u->tuner, cfg->tunes[i].knob, cfg->tunes[i].value);
        return 0;
}

static int tune_tick(void *unit, double now, struct sample_set *out)
{
        struct tune_unit *u = unit;

        (void)now;
        if (!u->cfg->collect_tune)
                return 0;
        ptt_tuner_samples(u->tuner, out);
        return 1;
}

static void tune_stop(void *unit)
{
        (void)unit;
}

const struct engine_source engine_source_ptt_tune = {
    .name = "ptt_tune",
    .threaded = false,
    .enabled = tune_enabled,
    .discover = tune_discover,
    .start = tune_start,
    .tick = tune_tick,
    .stop = tune_stop,
    .free = tune_free,
};
