/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nd_charts_table.h - pcie.plugin's chart table: how the samples of one
 * Prometheus family become Netdata charts. The rows (nd_charts_table.c)
 * are made at build time from the chart stanzas of metrics/families.spec
 * by metrics/gen_families.awk, in the spec's order: a chart's priority is
 * its place, and nd_charts.c picks a row whose need label the sample
 * carries before its family's row without one.
 */
#ifndef PCIESCOPE_ND_CHARTS_TABLE_H
#define PCIESCOPE_ND_CHARTS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "sample.h"

struct nd_map {
        const struct pcie_family *fam; /* its samples */
        const char *need;              /* a label the sample must carry (Intel: "stack"), or NULL */
        const char
            *context; /* "port_bandwidth": context pcie.port_bandwidth, ids port_bandwidth_* */
        const char *title;
        const char *units;
        const char *family;
        const char *type;        /* line, area, stacked */
        const char *chart_by[2]; /* labels naming the chart; none: one chart */
        const char *dim_by[2];   /* labels naming the dimension; none: dim_name */
        const char *dim_name;
        /* SET round(value * scale); DIMENSION 1/divisor takes it back. The
         * scale keeps what the double holds that matters (milli-bytes/s,
         * picoseconds, nano-ratio), the divisor gives Netdata's units. */
        double scale;
        long long divisor;
        bool incremental; /* counters: Netdata makes the per-second rate */
        bool absent_zero; /* a dimension without a sample this interval is 0 (findings) */
};

extern const struct nd_map nd_maps[];
extern const size_t nd_maps_len;

#endif /* PCIESCOPE_ND_CHARTS_TABLE_H */
