// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli_series.c - a sample's Prometheus series (see cli_series.h).
 */
#include "cli_series.h"

enum rw_kind cli_series_kind(enum pcie_metric_kind kind)
{
        switch (kind) {
        case PCIE_METRIC_COUNTER:
        case PCIE_METRIC_FLOAT_COUNTER:
                return RW_KIND_COUNTER;
        case PCIE_METRIC_INFO:
                return RW_KIND_INFO;
        case PCIE_METRIC_HISTOGRAM:
                return RW_KIND_HISTOGRAM;
        case PCIE_METRIC_GAUGE:
                break;
        }
        return RW_KIND_GAUGE;
}

int cli_series_of_sample(const struct pcie_sample *s, const char *instance, struct rw_labelset *out,
                         enum rw_kind *kind)
{
        const char *names[PCIE_SAMPLE_MAX_LABELS], *values[PCIE_SAMPLE_MAX_LABELS];
        size_t n =
            s->label_count < PCIE_SAMPLE_MAX_LABELS ? s->label_count : PCIE_SAMPLE_MAX_LABELS;

        for (size_t i = 0; i < n; i++) {
                names[i] = s->labels[i].name;
                values[i] = s->labels[i].value;
        }
        *kind = cli_series_kind(s->kind);
        return rw_series_named(s->metric, n, names, values, instance, NULL, NULL, out);
}

double cli_series_value(const struct pcie_sample *s)
{
        return s->kind == PCIE_METRIC_COUNTER ? (double)s->counter : s->gauge;
}
