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
#include "sample.h"

struct hw_env;
struct pcie_topo;

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
        enum pcie_detail detail;         /* which series (sample.h) */
};
void pcie_monitor_opts_default(struct pcie_monitor_opts *opts);

/* Where the MPS policy the audit assumes comes from. */
enum pcie_policy_source {
        PCIE_POLICY_FROM_CONFIG,  /* the user said so (option, --policy) */
        PCIE_POLICY_FROM_CMDLINE, /* pci=pcie_bus_* on the kernel command line */
        PCIE_POLICY_FROM_DEFAULT, /* neither: the kernel's default */
};

/*
 * pcie_policy_in_force - the MPS policy to audit against: @given when not
 * NULL, else the one /proc/cmdline (through the env) selects, else the
 * kernel default. The one place the policy is decided for every host.
 */
enum pcie_policy_source pcie_policy_in_force(const struct hw_env *env,
                                             const enum pcie_policy *given, enum pcie_policy *out);

struct aer_device;
/*
 * pcie_monitor_read_aer - read a device's AER files below the env's sysfs
 * root and parse them (aer.h). Returns 0 if at least one file was read,
 * -ENOENT if the device has none (no AER capability, kernel older than
 * 4.19, or no sysfs), or the first read/parse error; @what receives the
 * file name that failed.
 */
int pcie_monitor_read_aer(const struct hw_env *env, const char *bdf, struct aer_device *out,
                          const char **what, unsigned int *bad_line);

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
/*
 * The topology of the last pcie_monitor_sample() whose functions differed
 * from the scan before (one came or went), or of the first scan, handed
 * over to the caller (pcie_topo_free); NULL when nothing changed since the
 * last call. Units that plan per device replan from it without a restart.
 */
struct pcie_topo *pcie_monitor_take_topology(struct pcie_monitor *mon);

size_t pcie_monitor_function_count(const struct pcie_monitor *mon, size_t *selected);

#endif /* PCIESCOPE_PCIE_MONITOR_H */
