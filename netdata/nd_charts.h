/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nd_charts.h - the engine's samples as Netdata charts, in the plugins.d
 * protocol (CHART, CLABEL, CLABEL_COMMIT, DIMENSION, BEGIN, SET, END).
 *
 * Samples are mapped by their Prometheus name and labels through one table
 * (nd_charts_table.h, made from metrics/families.spec): the chart's
 * context (pcie.port_bandwidth...), which labels name the chart (one chart
 * per Root Port, per link, per PMU...) and which name its dimensions
 * (rx_mwr, current...), units, family, priority, and the factor that
 * makes the value an integer for SET with no precision lost
 * (the DIMENSION's divisor takes it back). A family the engine does not
 * publish (a detail-only one, a source that found nothing) is no chart; a
 * sample no row maps is left out.
 *
 * A chart is defined the first time one of its samples arrives, and again
 * when a new dimension appears (Netdata adds dimensions to a chart sent
 * again). Every interval, each chart with samples gets BEGIN/SET/END.
 */
#ifndef PCIESCOPE_ND_CHARTS_H
#define PCIESCOPE_ND_CHARTS_H

#include <stdio.h>

#include "sample.h"

struct nd_charts;

/* @update_every: the interval in seconds, written in every CHART line. */
struct nd_charts *nd_charts_new(int update_every);
void nd_charts_free(struct nd_charts *c);

/* Collects one finished set of samples for the next nd_charts_flush.
 * 0 or -ENOMEM (the samples that fit are kept). */
int nd_charts_add(struct nd_charts *c, const struct sample_set *set);

/* Writes the definitions of new charts and dimensions, then one
 * BEGIN/SET/END per chart that got samples since the last flush. Returns
 * 0, or -EIO when @out failed (Netdata has gone: the plugin exits). */
int nd_charts_flush(struct nd_charts *c, FILE *out);

/* Charts defined so far (tests). */
size_t nd_charts_count(const struct nd_charts *c);

#endif /* PCIESCOPE_ND_CHARTS_H */
