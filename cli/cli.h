/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - shared state of the pciescope command's subcommands.
 */
#ifndef PCIESCOPE_CLI_H
#define PCIESCOPE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "pcie_audit.h"
#include "ptt_summary.h"

/* The words after the command's name (trace: SUBCOMMAND FILE; help:
 * COMMAND): one more than any command takes, so that it is refused. */
#define CLI_ARGS_MAX 3

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
        /* snapshot */
        const char *snapshot_out;         /* -o, --output FILE.tar.gz */
        const char *snapshot_description; /* --description FILE: machine.json here too */
        bool snapshot_trace;              /* --trace: a short PTT window per device */

        /* the words after the command's name (trace: dump|report FILE) */
        char *args[CLI_ARGS_MAX];
        unsigned int argc;
        bool markdown;                   /* options, help: --markdown */
        unsigned int plugin_top_talkers; /* exporter: the plugin's TopTalkers */
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
struct json_object;
struct pcie_sample;
struct calibration;
struct pcie_audit;

/* ---- the commands (cli_handler, commands.h), one file each ---- */
int cmd_topology(const struct cli_opts *opts, struct engine *e);
int cmd_audit(const struct cli_opts *opts, struct engine *e);
int cmd_uncore(const struct cli_opts *opts, struct engine *e);
/* The counting commands run the engine (manual mode, on this thread). */
int cmd_pmu(const struct cli_opts *opts, struct engine *e);
int cmd_iio(const struct cli_opts *opts, struct engine *e);
/* top: the live view (cmd_top.c) on the monitor and PMU sources. Its
 * prepare takes the engine's messages while the screen is its own, and
 * every endpoint a PMU measures (the view lists them under their port). */
int cmd_top(const struct cli_opts *opts, struct engine *e);
int cmd_top_prepare(struct cli_opts *opts, struct engine_host *host);
/* trace dump|report FILE: off-line, needs no PCI access (cmd_trace.c). */
int cmd_trace_dump(const struct cli_opts *opts, struct engine *e);
int cmd_trace_report(const struct cli_opts *opts, struct engine *e);
int cmd_exporter(const struct cli_opts *opts, struct engine *e);
/* The plugin's defaults (Detail "default", its TopTalkers): a fleet's. */
int cmd_exporter_prepare(struct cli_opts *opts, struct engine_host *host);
/* calibrate --device BDF: the hidden PMU/PTT units (cmd_calibrate.c). */
int cmd_calibrate(const struct cli_opts *opts, struct engine *e);
/* snapshot (cmd_snapshot.c): an archive of what reproduces this machine. */
int cmd_snapshot(const struct cli_opts *opts, struct engine *e);
/* options [--markdown]: the engine's option table (cmd_options.c). */
int cmd_options(const struct cli_opts *opts, struct engine *e);
/* help [COMMAND [SUBCOMMAND]], completion bash (cmd_help.c). */
int cmd_help(const struct cli_opts *opts, struct engine *e);
int cmd_completion(const struct cli_opts *opts, struct engine *e);

/* ---- shared by the commands (cli_util.c): no cmd_*.c calls another ---- */

/* Prints "pciescope: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Scans the PCI devices; on failure prints why and returns -1. */
int cli_scan(const struct cli_opts *opts, struct hw_env *env,
             const struct pcie_topo_opts *topo_opts, struct pcie_topo **out);
/* 0 when stdin and stdout are terminals, else -1 after saying so for
 * @command (and what to use @instead, when not NULL). */
int cli_check_terminal(const char *command, const char *instead);
double cli_now(void); /* CLOCK_MONOTONIC seconds */
/* With PCIESCOPE_VIRTUAL_CLOCK set and --simulate, time moves only when a
 * command waits (cli_sleep_until), so runs are repeatable in tests. */
void cli_use_virtual_clock(void);
double cli_virtual_clock(void *ctx); /* a sim_clock_fn */
void cli_sleep_until(double deadline);
/* Runs @e's started units for opts->count intervals of opts->interval
 * after a first one at start (round 0), calling @round for each. */
void cli_count(const struct cli_opts *opts, struct engine *e,
               void (*round)(void *ctx, unsigned int n, const struct engine_unit *unit,
                             const struct sample_set *set),
               void *ctx);
/* "%8.2f GB/s" (or MB/s, kB/s) without a newline. */
void cli_print_rate(double bytes);
/* {"metric", "labels", "value"} of one sample. */
struct json_object *cli_sample_json(const struct pcie_sample *s);

/* ---- the audit, for audit and snapshot (cli_audit.c) ---- */

/* Scans and audits: the tree, the findings and where the policy came
 * from. Returns 0, or -1 after saying why on stderr. */
int cli_audit_run(const struct cli_opts *opts, struct hw_env *env, struct pcie_topo **topo,
                  struct pcie_audit **audit, const char **policy_source);
/* 0, 1 or 2 by the worst finding (CLI_EXIT_*). */
int cli_audit_exit_status(enum pcie_severity worst);
struct json_object *cli_audit_report_json(const struct pcie_topo *topo,
                                          const struct pcie_audit *audit,
                                          const char *policy_source);
/* `audit --json`'s text (malloc'd), or NULL after saying why on stderr. */
char *cli_audit_json(const struct cli_opts *opts, struct hw_env *env);

/* ---- a calibration run, for calibrate and snapshot (cli_calibrate.c) ---- */

/* The calibration --device, --bytes, --run, --repeat ask for, and its JSON
 * (the file's content, with pciescope_version) in *@json (the caller puts
 * it). -1 after saying why on stderr. */
int cli_calibrate_run(const struct cli_opts *opts, struct engine *e, struct calibration *c,
                      struct json_object **json);

#endif /* PCIESCOPE_CLI_H */
