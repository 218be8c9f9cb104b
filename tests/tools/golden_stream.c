// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * golden_stream.c - the value stream the `pcie` plugin dispatches on a
 * simulated machine, under a fake clock, as text (one value a line):
 *
 *   golden_stream MACHINE KERNEL|- STEPS
 *
 * Every step is one collectd interval of 1 s: collector threads tick when
 * they are due (PTT devices at their window/poll times), then the read
 * callback's values follow in dispatch order. Each line holds what a write
 * plugin sees: the collectd identity, prom.name/prom.type, the labels
 * (sorted by name, simulated included) and the value. CPU-time values are
 * the collectors' own and differ run to run: shown as "cpu".
 *
 * The streams in tests/golden/ were recorded before the engine refactor
 * (issue 11) by this tool driving the collectors in the plugin's own
 * orchestration order; it now drives the engine the plugin runs on, in
 * manual mode under the fake clock, and tests/integration/golden.sh
 * compares the two byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static double fake_now;

static double fake_clock(void *ctx)
{
        (void)ctx;
        return fake_now;
}

static void quiet_log(void *ctx, enum hw_log_level level, const char *msg)
{
        (void)ctx, (void)level, (void)msg;
}

static unsigned int step;

static int label_cmp(const void *a, const void *b)
{
        return strcmp(((const struct pcie_label *)a)->name, ((const struct pcie_label *)b)->name);
}

static void print_sample(const struct pcie_sample *s)
{
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
        size_t n = s->label_count;

        memcpy(labels, s->labels, n * sizeof(labels[0]));
        qsort(labels, n, sizeof(labels[0]), label_cmp);
        printf("%u pcie/%s/%s/%s %s %s {", step, s->instance, s->type, s->type_instance, s->metric,
               pcie_metric_kind_name(s->kind));
        for (size_t i = 0; i < n; i++)
                printf("%s%s=\"%s\"", i ? "," : "", labels[i].name, labels[i].value);
        printf("} ");
        if (strstr(s->metric, "cpu_seconds"))
                printf("cpu\n");
        else if (s->kind == PCIE_METRIC_COUNTER)
                printf("%llu\n", (unsigned long long)s->counter);
        else
                printf("%.17g\n", s->gauge);
}

static void print_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)ctx, (void)unit;
        for (size_t i = 0; i < set->count; i++)
                print_sample(&set->samples[i]);
}

int main(int argc, char **argv)
{
        struct engine_host host = {.log = quiet_log,
                                   .interval = 1.0,
                                   .clock = fake_clock,
                                   .manual = true,
                                   .label_simulated = true};
        struct engine_config cfg;
        struct engine *e;
        char why[512] = "";
        unsigned int steps;

        if (argc != 4) {
                fprintf(stderr, "usage: golden_stream MACHINE KERNEL|- STEPS\n");
                return 2;
        }
        steps = (unsigned int)atoi(argv[3]);
        /* The plugin's configuration: Simulate, SimulateKernel, defaults. */
        if (engine_config_init(&cfg) ||
            engine_config_set_string(&cfg, "Simulate", argv[1], why, sizeof(why)) ||
            (strcmp(argv[2], "-") &&
             engine_config_set_string(&cfg, "SimulateKernel", argv[2], why, sizeof(why))) ||
            engine_config_check(&cfg, why, sizeof(why)) ||
            engine_open(&cfg, &host, &e, why, sizeof(why))) {
                fprintf(stderr, "golden_stream: %s\n", why);
                return 1;
        }
        /* Threads start: counters opened at t = 0, first tick at 1 s. */
        if (engine_start(e))
                return 1;
        for (step = 1; step <= steps; step++) {
                double target = step, due;

                /* Collector threads: everything due up to the read. */
                while ((due = engine_next_due(e)) <= target) {
                        fake_now = due;
                        engine_advance(e, due);
                }
                fake_now = target;
                engine_read(e, print_set, NULL); /* the read callback */
        }
        engine_close(e);
        engine_config_clear(&cfg);
        return 0;
}
