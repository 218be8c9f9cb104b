// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptt_tune.c - read, set and restore the PTT tune files. See the header.
 */
#include "ptt_tune.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "pcie_families.h"
#include "perf_pmu.h"
#include "sample.h"

#define PMU_DIR "bus/event_source/devices"

static const char *const knob_names[PTT_KNOBS] = {
    [PTT_QOS_TX_CPL] = "qos_tx_cpl",
    [PTT_QOS_TX_NP] = "qos_tx_np",
    [PTT_QOS_TX_P] = "qos_tx_p",
    [PTT_RX_ALLOC_BUF_LEVEL] = "rx_alloc_buf_level",
    [PTT_TX_ALLOC_BUF_LEVEL] = "tx_alloc_buf_level",
};

const char *ptt_knob_name(enum ptt_knob knob)
{
        return knob < PTT_KNOBS ? knob_names[knob] : "unknown";
}

const char *ptt_knob_names(void)
{
        return "qos_tx_cpl, qos_tx_np, qos_tx_p, rx_alloc_buf_level, tx_alloc_buf_level";
}

int ptt_knob_parse(const char *name, enum ptt_knob *out)
{
        for (int k = 0; k < PTT_KNOBS; k++) {
                if (!strcmp(name, knob_names[k])) {
                        *out = (enum ptt_knob)k;
                        return 0;
                }
        }
        return -ENOENT;
}

int ptt_tune_value_check(double value)
{
        if (!isfinite(value) || value < 0 || value != floor(value))
                return -EINVAL;
        return value > PTT_TUNE_MAX ? -ERANGE : 0;
}

int ptt_tune_parse(const char *text, unsigned int *value)
{
        unsigned long v = 0;
        size_t digits = 0;

        while (text[digits] >= '0' && text[digits] <= '9' && digits < 6) {
                v = v * 10 + (unsigned long)(text[digits] - '0');
                digits++;
        }
        if (!digits || v > 0xffff || (text[digits] && strcmp(text + digits, "\n")))
                return -EBADMSG;
        *value = (unsigned int)v;
        return 0;
}

/* One knob of one device: what it read, and what to put back. */
struct knob_state {
        bool changed;
        unsigned int original;
};

struct ptt_device {
        char pmu[PERF_PMU_NAME_MAX];
        struct knob_state knobs[PTT_KNOBS];
};

struct ptt_tuner {
        const struct hw_env *env;
        size_t count;
        struct ptt_device *devices;
};

static int read_knob(const struct ptt_tuner *t, const struct ptt_device *d, enum ptt_knob k,
                     unsigned int *value)
{
        char text[32];
        ssize_t n = hw_read_file(t->env, HW_SYSFS, text, sizeof(text), PMU_DIR "/%s/tune/%s",
                                 d->pmu, knob_names[k]);

        if (n < 0)
                return (int)n;
        return ptt_tune_parse(text, value);
}

static int write_knob(const struct ptt_tuner *t, const struct ptt_device *d, enum ptt_knob k,
                      unsigned int value)
{
        char text[16];

        snprintf(text, sizeof(text), "%u", value);
        return hw_write_file(t->env, HW_SYSFS, text, PMU_DIR "/%s/tune/%s", d->pmu, knob_names[k]);
}

int ptt_tuner_new(const struct hw_env *env, struct ptt_tuner **out)
{
        struct ptt_tuner *t;
        char **names = NULL;
        int n;

        *out = NULL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->env = env;
        n = perf_pmu_list(env, "hisi_ptt", &names);
        if (n == -ENOENT)
                n = 0;
        if (n < 0) {
                free(t);
                return n;
        }
        t->devices = calloc(n ? (size_t)n : 1, sizeof(*t->devices));
        if (!t->devices) {
                perf_pmu_list_free(names);
                free(t);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                struct ptt_device *d = &t->devices[t->count];
                char text[32];

                snprintf(d->pmu, sizeof(d->pmu), "%s", names[i]);
                /* Only devices whose driver has tune files (every hisi_ptt). */
                if (hw_read_file(env, HW_SYSFS, text, sizeof(text), PMU_DIR "/%s/tune/%s", d->pmu,
                                 knob_names[0]) == -ENOENT)
                        continue;
                t->count++;
        }
        perf_pmu_list_free(names);
        *out = t;
        return 0;
}

size_t ptt_tuner_devices(const struct ptt_tuner *t)
{
        return t ? t->count : 0;
}

int ptt_tuner_apply(struct ptt_tuner *t, enum ptt_knob knob, unsigned int value)
{
        int ret = 0;

        if (knob >= PTT_KNOBS || value > PTT_TUNE_MAX)
                return -EINVAL;
        for (size_t i = 0; i < t->count; i++) {
                struct ptt_device *d = &t->devices[i];
                struct knob_state *ks = &d->knobs[knob];
                unsigned int before;
                int err = ks->changed ? 0 : read_knob(t, d, knob, &before);

                if (!err)
                        err = write_knob(t, d, knob, value);
                if (err) {
                        hw_logf(t->env, HW_LOG_ERROR, "%s: cannot set tune/%s to %u: %s", d->pmu,
                                knob_names[knob], value, strerror(-err));
                        if (!ret)
                                ret = err;
                        continue;
                }
                /* Keep the value from before the first change only. */
                if (!ks->changed) {
                        ks->original = before;
                        ks->changed = true;
                }
                hw_logf(t->env, HW_LOG_INFO, "%s: tune/%s set to %u (was %u; restored at shutdown)",
                        d->pmu, knob_names[knob], value, ks->original);
        }
        return ret;
}

int ptt_tuner_samples(struct ptt_tuner *t, struct sample_set *out)
{
        struct sample_emitter em = {.set = out};

        for (size_t i = 0; i < t->count; i++) {
                const struct ptt_device *d = &t->devices[i];

                for (int k = 0; k < PTT_KNOBS; k++) {
                        struct pcie_sample s;
                        unsigned int value;

                        /* An unreadable knob (timeout in the driver) is
                         * left out this interval, not reported as 0. */
                        if (read_knob(t, d, (enum ptt_knob)k, &value))
                                continue;
                        sample_init(&s, PCIE_FAM_PTT_TUNE);
                        sample_label(&s, "pmu", d->pmu);
                        sample_label(&s, "knob", knob_names[k]);
                        s.gauge = value;
                        if (sample_emit(&em, &s))
                                return -ENOMEM;
                }
        }
        return 0;
}

int ptt_tuner_restore(struct ptt_tuner *t)
{
        int ret = 0;

        for (size_t i = 0; t && i < t->count; i++) {
                struct ptt_device *d = &t->devices[i];

                for (int k = 0; k < PTT_KNOBS; k++) {
                        struct knob_state *ks = &d->knobs[k];
                        int err;

                        if (!ks->changed)
                                continue;
                        err = write_knob(t, d, (enum ptt_knob)k, ks->original);
                        ks->changed = false;
                        if (err) {
                                hw_logf(t->env, HW_LOG_ERROR,
                                        "%s: cannot restore tune/%s to %u: %s", d->pmu,
                                        knob_names[k], ks->original, strerror(-err));
                                if (!ret)
                                        ret = err;
                        } else {
                                hw_logf(t->env, HW_LOG_INFO, "%s: tune/%s restored to %u", d->pmu,
                                        knob_names[k], ks->original);
                        }
                }
        }
        return ret;
}

void ptt_tuner_free(struct ptt_tuner *t)
{
        if (!t)
                return;
        ptt_tuner_restore(t);
        free(t->devices);
        free(t);
}
