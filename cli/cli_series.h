/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli_series.h - a sample's Prometheus series, for the front ends that
 * speak Prometheus without collectd (`pciescope exporter`, `pciescope
 * fleet`).
 *
 * The name and labels are the sample's own (its family's series name and
 * its labels), made into a series by writer/'s rw_series_named: the same
 * code that names the pcie plugin's value lists for remote_write and the
 * openmetrics plugin, so the three hosts send the same series.
 */
#ifndef PCIESCOPE_CLI_SERIES_H
#define PCIESCOPE_CLI_SERIES_H

#include "rw_series.h"
#include "sample.h"

/* The Prometheus kind of a sample of kind @kind (both counter kinds are
 * counters). */
enum rw_kind cli_series_kind(enum pcie_metric_kind kind);
/* @s's label set (including __name__) and kind, with instance=@instance
 * ("" for none). 0, 1 when a rule dropped it, or negative errno (a name
 * that cannot be made valid, too many labels). */
int cli_series_of_sample(const struct pcie_sample *s, const char *instance, struct rw_labelset *out,
                         enum rw_kind *kind);
/* @s's value as a double (a COUNTER's integer, every other kind's gauge). */
double cli_series_value(const struct pcie_sample *s);

#endif
