// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli_util.c - what the pciescope commands share: the message on stderr,
 * the PCI scan with its error, the terminal check, the clock (real, or
 * virtual under test), counting intervals on the engine, and printing a
 * sample (a rate, its JSON). No command calls into another command's
 * file: what two of them need lives here or in another cli_*.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pci_source.h"
#include "pcie_topo.h"
#include "sample.h"

void cli_error(const char *fmt, ...)
{
        va_list ap;

        fputs("pciescope: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int cli_scan(const struct cli_opts *opts, struct hw_env *env,
             const struct pcie_topo_opts *topo_opts, struct pcie_topo **out)
{
        int err = pcie_topo_scan(env, topo_opts, out);

        if (!err)
                return 0;
        cli_error("cannot read the PCI devices from %s: %s%s%s",
                  opts->cfg.pci_dump ? opts->cfg.pci_dump : "this machine", strerror(-err),
                  *pci_source_error(env->pci) ? ": " : "", pci_source_error(env->pci));
        return -1;
}

int cli_check_terminal(const char *command, const char *instead)
{
        if (!isatty(STDOUT_FILENO)) {
                cli_error("%s: stdout is not a terminal%s%s", command, instead ? "; " : "",
                          instead ? instead : "");
                return -1;
        }
        if (!isatty(STDIN_FILENO)) {
                cli_error("%s: stdin is not a terminal: %s reads its keys from it", command,
                          command);
                return -1;
        }
        return 0;
}

/* PCIESCOPE_VIRTUAL_CLOCK (tests): time moves only when a command waits. */
static bool virtual_clock;
static double virtual_now;

double cli_virtual_clock(void *ctx)
{
        (void)ctx;
        return virtual_now;
}

void cli_use_virtual_clock(void)
{
        virtual_clock = true;
}

double cli_now(void)
{
        struct timespec ts;

        if (virtual_clock)
                return virtual_now;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cli_sleep_until(double deadline)
{
        double left = deadline - cli_now();

        if (virtual_clock) {
                if (left > 0)
                        virtual_now = deadline;
                return;
        }
        if (left > 0) {
                struct timespec ts = {.tv_sec = (time_t)left,
                                      .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};

                while (nanosleep(&ts, &ts) && errno == EINTR)
                        ;
        }
}

struct round_ctx {
        void (*round)(void *, unsigned int, const struct engine_unit *, const struct sample_set *);
        void *ctx;
        unsigned int n;
};

/* The engine's own samples (unit NULL: the simulation's info) are said on
 * stderr by the CLI already. */
static void cli_round_sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct round_ctx *r = ctx;

        if (unit)
                r->round(r->ctx, r->n, unit, set);
}

void cli_count(const struct cli_opts *opts, struct engine *e,
               void (*round)(void *ctx, unsigned int n, const struct engine_unit *unit,
                             const struct sample_set *set),
               void *ctx)
{
        struct round_ctx r = {round, ctx, 0};
        double start = cli_now();

        for (r.n = 1; r.n <= opts->count; r.n++) {
                double due;

                double end = start + r.n * opts->interval;

                /* Every tick a unit wants up to the interval's end, at its
                 * time (a unit may switch its counters within an
                 * interval), then the read. */
                while ((due = engine_next_due(e)) <= end) {
                        cli_sleep_until(due);
                        engine_advance(e, fmax(cli_now(), due));
                }
                cli_sleep_until(end);
                if (!opts->json)
                        printf("--- interval %u of %u (%.1f s)\n", r.n, opts->count,
                               opts->interval);
                engine_read(e, cli_round_sink, &r);
        }
}

void cli_print_rate(double bytes)
{
        if (bytes >= 1e9)
                printf("%8.2f GB/s", bytes / 1e9);
        else if (bytes >= 1e6)
                printf("%8.2f MB/s", bytes / 1e6);
        else
                printf("%8.2f kB/s", bytes / 1e3);
}

json_object *cli_sample_json(const struct pcie_sample *s)
{
        json_object *o = json_object_new_object(), *labels = json_object_new_object();

        json_object_object_add(o, "metric", json_object_new_string(s->metric));
        for (size_t i = 0; i < s->label_count; i++)
                json_object_object_add(labels, s->labels[i].name,
                                       json_object_new_string(s->labels[i].value));
        json_object_object_add(o, "labels", labels);
        if (s->kind == PCIE_METRIC_COUNTER)
                json_object_object_add(o, "value", json_object_new_uint64(s->counter));
        else
                json_object_object_add(o, "value", json_object_new_double(s->gauge));
        return o;
}
