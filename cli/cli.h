/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - shared state of the pciescope command's subcommands.
 */
#ifndef PCIESCOPE_CLI_H
#define PCIESCOPE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "ptt_summary.h"

struct cli_opts {
        /* The machine and the collectors' options, checked by the engine's
         * option table like the plugin's: --pci-dump is PCIDump, --policy
         * MPSPolicy, --simulate Simulate, --iio-stack-bus IIOStackBus... */
        struct engine_config cfg;
        bool json;
        bool names;         /* topology: --no-names */
        double interval;    /* pmu, iio: --interval seconds */
        unsigned int count; /* pmu, iio: --count intervals */

        /* trace dump|report (checked with the Trace* options' ranges) */
        bool trace_raw;                     /* --raw: FILE is a raw AUX dump */
        enum ptt_time_mode trace_time_mode; /* --time-mode */
        uint64_t trace_clock_hz;            /* --clock-hz, 0 = report ticks */
        unsigned int trace_top;             /* --top N requesters by name */
        uint64_t trace_max_size;            /* --max-size of a pipe/device input */

        /* exporter */
        const char *listen;             /* --listen ADDR:PORT */
        const char *tls_cert, *tls_key; /* --tls-cert, --tls-key */
        const char *auth_user;          /* --basic-auth-user */
        const char *auth_password_file; /* --basic-auth-password-file */
        const char *instance;           /* --instance: an instance label */
        unsigned int max_connections;   /* --max-connections, 0: the default */
        unsigned int max_per_client;    /* --max-connections-per-client */
        unsigned int timeout_s;         /* --timeout seconds */
        bool detail_given;              /* --detail was on the command line */

        /* calibrate */
        const char *calib_device;   /* --device BDF */
        const char *calib_output;   /* --output FILE */
        const char *calib_command;  /* --run COMMAND */
        uint64_t calib_bytes;       /* --bytes N, 0: the default */
        unsigned int calib_repeats; /* --repeat N, 0: the default */
        double calib_run_timeout;   /* --run-timeout S, 0: the default */
        /* snapshot (issue 18) */
        const char *snapshot_out;         /* -o, --output FILE.tar.gz */
        const char *snapshot_description; /* --description FILE: machine.json here too */
        bool snapshot_trace;              /* --trace: a short PTT window per device */
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
int cmd_uncore(const struct cli_opts *opts, struct hw_env *env);
/* The counting commands run the engine (manual mode, on this thread). */
int cmd_pmu(const struct cli_opts *opts, struct engine *e);
int cmd_iio(const struct cli_opts *opts, struct engine *e);
/* top: the live view (cmd_top.c) on the monitor and PMU sources; it
 * refuses (-1, said on stderr) when stdin or stdout is not a terminal, and
 * takes the engine's messages while the screen is its own. */
int cmd_top(const struct cli_opts *opts, struct engine *e);
int cmd_top_check_terminal(void);
void cmd_top_log(void *ctx, enum hw_log_level level, const char *msg);
/* Runs @e's started units for opts->count intervals of opts->interval
 * after a first one at start (round 0), calling @round for each. */
void cli_count(const struct cli_opts *opts, struct engine *e,
               void (*round)(void *ctx, unsigned int n, const struct engine_unit *unit,
                             const struct sample_set *set),
               void *ctx);
/* trace dump|report FILE: off-line, needs no PCI access (cmd_trace.c). */
int cmd_trace(const struct cli_opts *opts, int argc, char **argv);
int cmd_exporter(const struct cli_opts *opts);
/* calibrate --device BDF: the hidden PMU/PTT units (cmd_calibrate.c). */
int cmd_calibrate(const struct cli_opts *opts, struct engine *e);
/* The calibration --device, --bytes, --run, --repeat ask for, and its JSON
 * (the file's content, with pciescope_version) in *@json (the caller puts
 * it). -1 after saying why on stderr. Also `snapshot --device`. */
struct calibration;
struct json_object;
int cli_calibrate_run(const struct cli_opts *opts, struct engine *e, struct calibration *c,
                      struct json_object **json);
/* snapshot (cmd_snapshot.c): an archive of what reproduces this machine. */
int cmd_snapshot(const struct cli_opts *opts, struct engine *e);
/* `audit --json`'s text (malloc'd), or NULL after saying why on stderr. */
char *cli_audit_json(const struct cli_opts *opts, struct hw_env *env);

/* Shared by the counting commands (cmd_pmu.c). */
struct json_object;
struct pcie_sample;
double cli_now(void); /* CLOCK_MONOTONIC seconds */
/* With PCIESCOPE_VIRTUAL_CLOCK set and --simulate, time moves only when a
 * command waits (cli_sleep_until), so runs are repeatable in tests. */
void cli_use_virtual_clock(void);
double cli_virtual_clock(void *ctx); /* a sim_clock_fn */
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
