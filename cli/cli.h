/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - shared state of the pciescope command's subcommands.
 */
#ifndef PCIESCOPE_CLI_H
#define PCIESCOPE_CLI_H

#include <stdbool.h>

#include "hw_env.h"
#include "intel_iio.h"
#include "pcie_audit.h"
#include "ptt_summary.h"

struct cli_opts {
        const char *pci_dump;   /* --pci-dump FILE, or NULL for live access */
        const char *sysfs_root; /* --sysfs-root DIR */
        const char *proc_root;  /* --proc-root DIR */
        bool json;
        bool names;
        bool policy_given;
        enum pcie_policy policy;
        const char *simulate;      /* --simulate MACHINE: run on a simulated machine */
        const char *kernel;        /* --kernel VERSION of the simulated driver */
        const char *machine_dir;   /* --machine-dir DIR of named machines */
        double interval;           /* pmu: --interval seconds */
        unsigned int count;        /* pmu: --count intervals */
        struct intel_iio_opts iio; /* iio: --iio-stack-bus, --no-scale-fix */

        /* trace dump|report */
        bool trace_raw;                     /* --raw: FILE is a raw AUX dump */
        enum ptt_time_mode trace_time_mode; /* --time-mode */
        uint64_t trace_clock_hz;            /* --clock-hz, 0 = report ticks */
        unsigned int trace_top;             /* --top N requesters by name */
        uint64_t trace_max_size;            /* --max-size of a pipe/device input */
};

/* Exit statuses shared by the subcommands. */
enum {
        CLI_EXIT_OK = 0,
        CLI_EXIT_WARNING = 1,  /* audit: performance findings */
        CLI_EXIT_CRITICAL = 2, /* audit: critical findings */
        CLI_EXIT_ERROR = 3,    /* could not run: bad usage, unreadable input */
};

struct pcie_topo;
struct pcie_topo_opts;
/* Scans the PCI devices; on failure prints why and returns -1. */
int cli_scan(const struct cli_opts *opts, struct hw_env *env,
             const struct pcie_topo_opts *topo_opts, struct pcie_topo **out);

int cmd_topology(const struct cli_opts *opts, struct hw_env *env);
int cmd_audit(const struct cli_opts *opts, struct hw_env *env);
int cmd_pmu(const struct cli_opts *opts, struct hw_env *env);
int cmd_uncore(const struct cli_opts *opts, struct hw_env *env);
int cmd_iio(const struct cli_opts *opts, struct hw_env *env);
/* trace dump|report FILE: off-line, needs no PCI access (cmd_trace.c). */
int cmd_trace(const struct cli_opts *opts, int argc, char **argv);

/* Shared by the counting commands (cmd_pmu.c). */
struct json_object;
struct pcie_sample;
double cli_now(void); /* CLOCK_MONOTONIC seconds */
void cli_sleep_until(double deadline);
/* The value of label @name of @s, or NULL. */
const char *cli_label(const struct pcie_sample *s, const char *name);
/* "%8.2f GB/s" (or MB/s, kB/s) without a newline. */
void cli_print_rate(double bytes);
/* {"metric", "labels", "value"} of one sample. */
struct json_object *cli_sample_json(const struct pcie_sample *s);

/* Prints "pciescope: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PCIESCOPE_CLI_H */
