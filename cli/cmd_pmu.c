// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_pmu.c - `pciescope pmu`: count with every hisi_pcie PMU for a few
 * intervals and print per-port bandwidth, utilisation and latency.
 *
 * It runs the same per-core collectors as the collectd plugin, one after
 * the other on this thread, and prints the samples they produce.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "pcie_topo.h"
#include "sample_set.h"

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

const char *cli_label(const struct pcie_sample *s, const char *name)
{
        for (size_t i = 0; i < s->label_count; i++)
                if (!strcmp(s->labels[i].name, name))
                        return s->labels[i].value;
        return NULL;
}

/* The sample of @metric for @port with label @key = @value, or NULL. */
static const struct pcie_sample *find(const struct sample_set *set, const char *metric,
                                      const char *port, const char *key, const char *value)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const char *p = cli_label(s, "port"), *v = key ? cli_label(s, key) : NULL;

                if (strcmp(s->metric, metric) || !p || strcmp(p, port))
                        continue;
                if (key && (!v || strcmp(v, value)))
                        continue;
                return s;
        }
        return NULL;
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

static void print_direction(const struct sample_set *set, const char *port, const char *dir)
{
        static const char *const tlps[] = {"mwr", "mrd", "cpl"};
        char key[16];

        printf("    %s ", dir);
        for (size_t t = 0; t < 3; t++) {
                const struct pcie_sample *s = NULL;

                snprintf(key, sizeof(key), "%s_%s", dir, tlps[t]);
                for (size_t i = 0; i < set->count && !s; i++) {
                        const struct pcie_sample *c = &set->samples[i];
                        const char *p = cli_label(c, "port");

                        if (!strcmp(c->metric, "pcie_port_bandwidth_bytes_per_second") && p &&
                            !strcmp(p, port) && !strcmp(c->type_instance, key))
                                s = c;
                }
                printf(" %s ", tlps[t]);
                if (s)
                        cli_print_rate(s->gauge);
                else
                        printf("%13s", "-");
        }
        const struct pcie_sample *raw = NULL;
        char ti[32];

        snprintf(ti, sizeof(ti), "%s-raw", dir);
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *c = &set->samples[i];
                const char *p = cli_label(c, "port");

                if (!strcmp(c->metric, "pcie_port_utilization_ratio") && p && !strcmp(p, port) &&
                    !strcmp(c->type_instance, ti))
                        raw = c;
        }
        if (raw)
                printf("   util %5.1f%%", raw->gauge * 100);
        printf("\n");
}

static void print_port(const struct sample_set *set, const char *port)
{
        static const char *const events[] = {"rx_mwr", "rx_mrd", "tx_mrd"};
        bool any = false;

        printf("  port %s\n", port);
        print_direction(set, port, "rx");
        print_direction(set, port, "tx");
        printf("    latency");
        for (size_t i = 0; i < 3; i++) {
                const struct pcie_sample *s =
                    find(set, "pcie_port_latency_seconds", port, "event", events[i]);

                if (s) {
                        printf("  %s %.0f ns", events[i], s->gauge * 1e9);
                        any = true;
                }
        }
        printf("%s\n", any ? "" : "  -");
}

static void print_table(const struct hisi_pcie_pmu *pmu, const struct sample_set *set)
{
        double coverage = 0;
        size_t n = 0;

        for (size_t i = 0; i < set->count; i++) {
                if (!strcmp(set->samples[i].metric, "pcie_pmu_coverage_ratio")) {
                        coverage += set->samples[i].gauge;
                        n++;
                }
        }
        printf("%s (SICL %u, core %u): %zu Root Port%s, counters cover %.0f%% of the time\n",
               pmu->name, pmu->sicl, pmu->core, pmu->port_count, pmu->port_count == 1 ? "" : "s",
               n ? 100 * coverage / (double)n : 0.0);
        for (size_t p = 0; p < pmu->port_count; p++)
                print_port(set, pmu->ports[p].bdf);
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (strcmp(s->metric, "pcie_device_bandwidth_bytes_per_second"))
                        continue;
                printf("  device %s %s ", cli_label(s, "device"), s->type_instance);
                cli_print_rate(s->gauge);
                printf("\n");
        }
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

int cmd_pmu(const struct cli_opts *opts, struct hw_env *env)
{
        struct pcie_topo_opts topo_opts = {.names = false, .read_sysfs = false};
        struct hisi_pcie_opts pmu_opts;
        struct pcie_topo *topo;
        struct hisi_pcie_pmu *pmus = NULL;
        struct hisi_pcie_core **cores;
        struct sample_set set = SAMPLE_SET_INIT;
        size_t count = 0, started = 0;
        int status = CLI_EXIT_OK;

        if (cli_scan(opts, env, &topo_opts, &topo))
                return CLI_EXIT_ERROR;
        if (hisi_pcie_discover(env, topo, &pmus, &count) || count == 0) {
                cli_error("no HiSilicon PCIe PMU (hisi_pcie*) on this machine; "
                          "`pciescope pmu --simulate kunpeng930-2p` shows a simulated one "
                          "(on Intel Xeon: `pciescope iio`)");
                pcie_topo_free(topo);
                hisi_pcie_free(pmus, count);
                return CLI_EXIT_ERROR;
        }
        hisi_pcie_opts_default(&pmu_opts);
        pmu_opts.top_talkers = 3;
        cores = calloc(count, sizeof(*cores));
        double start = cli_now();

        for (size_t i = 0; cores && i < count; i++) {
                if (hisi_pcie_core_new(env, &pmus[i], topo, &pmu_opts, &cores[i]))
                        continue;
                if (hisi_pcie_core_start(cores[i], cli_now())) {
                        hisi_pcie_core_free(cores[i]); /* why was logged */
                        cores[i] = NULL;
                        continue;
                }
                started++;
        }
        pcie_topo_free(topo);
        if (!started) {
                cli_error("no PMU could be started");
                status = CLI_EXIT_ERROR;
        }
        json_object *all = opts->json ? json_object_new_array() : NULL;

        for (unsigned int round = 1; started && round <= opts->count; round++) {
                cli_sleep_until(start + round * opts->interval);
                if (!opts->json)
                        printf("--- interval %u of %u (%.1f s)\n", round, opts->count,
                               opts->interval);
                for (size_t i = 0; i < count; i++) {
                        if (!cores[i])
                                continue;
                        sample_set_clear(&set);
                        hisi_pcie_core_tick(cores[i], cli_now(), &set);
                        if (!opts->json) {
                                print_table(&pmus[i], &set);
                                continue;
                        }
                        for (size_t k = 0; round == opts->count && k < set.count; k++)
                                json_object_array_add(all, cli_sample_json(&set.samples[k]));
                }
        }
        if (all) {
                printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY));
                json_object_put(all);
        }
        for (size_t i = 0; cores && i < count; i++)
                hisi_pcie_core_free(cores[i]);
        free(cores);
        sample_set_free(&set);
        hisi_pcie_free(pmus, count);
        return status;
}
