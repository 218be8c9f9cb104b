/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_monitor.h - what the `pcie` plugin does each interval, without
 * collectd: rescan the topology, track link changes, audit MPS/MRRS, read
 * AER counters, and hand every value to an emit callback as a neutral
 * sample (Prometheus-style name, labels, and the collectd identity it maps
 * to). plugin/ turns samples into value lists; tests check them directly.
 */
#ifndef PCIESCOPE_PCIE_MONITOR_H
#define PCIESCOPE_PCIE_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bdf_match.h"
#include "pcie_audit.h"

struct hw_env;

enum pcie_metric_kind {
        PCIE_METRIC_GAUGE,
        PCIE_METRIC_COUNTER, /* monotonic since the monitor started */
        PCIE_METRIC_INFO,    /* gauge with value 1 carrying labels */
        /* Monotonic, but fractional (seconds of CPU or counting time): the
         * value is in .gauge, collectd sees a gauge, Prometheus a counter. */
        PCIE_METRIC_FLOAT_COUNTER,
        /* One series of a Prometheus histogram: .metric ends in _bucket
         * (with an "le" label), _sum or _count; cumulative since the
         * collector started; the value is in .gauge (collectd sees a gauge,
         * prom.type says "histogram"). */
        PCIE_METRIC_HISTOGRAM,
};
/* "gauge", "counter" (both counter kinds), "info", "histogram" */
const char *pcie_metric_kind_name(enum pcie_metric_kind kind);

#define PCIE_SAMPLE_MAX_LABELS 12

struct pcie_label {
        const char *name;
        const char *value;
};

struct pcie_sample {
        const char *metric; /* Prometheus name, e.g. "pcie_link_width_lanes" */
        const char *type;   /* collectd type (a data set with one "value" source) */
        enum pcie_metric_kind kind;
        const char *instance;      /* collectd plugin_instance: a BDF, or "" */
        const char *type_instance; /* collectd type_instance, or "" */
        double gauge;              /* GAUGE and INFO */
        uint64_t counter;          /* COUNTER */
        size_t label_count;
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
};

/* Return non-zero to stop the sample (it is returned by
 * pcie_monitor_sample()). */
typedef int (*pcie_emit_fn)(void *ctx, const struct pcie_sample *sample);

struct pcie_monitor_opts {
        bool collect_link;
        bool collect_audit;
        bool collect_aer;
        bool collect_info;
        bool names;        /* resolve vendor/device names for the info metric */
        bool read_sysfs;   /* NUMA node and AER come from sysfs */
        bool policy_given; /* use .policy instead of the kernel command line */
        enum pcie_policy policy;
        struct pcie_audit_opts audit;
        const struct bdf_filter *filter; /* NULL: every function */
};
void pcie_monitor_opts_default(struct pcie_monitor_opts *opts);

struct pcie_monitor;

/* The env and filter must outlive the monitor. Returns 0 or -ENOMEM. */
int pcie_monitor_new(const struct hw_env *env, const struct pcie_monitor_opts *opts,
                     struct pcie_monitor **out);
void pcie_monitor_free(struct pcie_monitor *mon);

/* The policy the audit assumes, and whether it came from the command line
 * ("cmdline"), the configuration ("config") or the kernel default ("default"). */
enum pcie_policy pcie_monitor_policy(const struct pcie_monitor *mon, const char **source);

/*
 * pcie_monitor_sample - one interval. Returns 0, the emit callback's
 * non-zero value, or a negative errno when the topology could not be read
 * at all (-EIO: libpci's message is logged once through the env).
 */
int pcie_monitor_sample(struct pcie_monitor *mon, pcie_emit_fn emit, void *ctx);

/* Functions seen by the last sample, and how many were selected. */
size_t pcie_monitor_function_count(const struct pcie_monitor *mon, size_t *selected);

#endif /* PCIESCOPE_PCIE_MONITOR_H */
