// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_pmu.c - `pciescope pmu`: count with every hisi_pcie PMU for a few
 * intervals and print per-port bandwidth, utilisation and latency.
 *
 * It runs the engine the collectd plugin runs, with the hisi_pcie source
 * only and in manual mode (every core ticks on this thread), and prints
 * the samples each core publishes.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pci_addr.h"
#include "pcie_families.h"
#include "sample.h"

/* Whether label @key of @s is @value. */
static bool has_label(const struct pcie_sample *s, const char *key, const char *value)
{
        const char *v = cli_label(s, key);

        return v && !strcmp(v, value);
}

/* The sample of @family for @port with labels @k1 = @v1 and @k2 = @v2 (a
 * NULL key matches any), or NULL. */
static const struct pcie_sample *find(const struct sample_set *set,
                                      const struct pcie_family *family, const char *port,
                                      const char *k1, const char *v1, const char *k2,
                                      const char *v2)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family != family || !has_label(s, "port", port))
                        continue;
                if ((k1 && !has_label(s, k1, v1)) || (k2 && !has_label(s, k2, v2)))
                        continue;
                return s;
        }
        return NULL;
}

static void print_direction(const struct sample_set *set, const char *port, const char *dir)
{
        static const char *const tlps[] = {"mwr", "mrd", "cpl"};

        printf("    %s ", dir);
        for (size_t t = 0; t < 3; t++) {
                const struct pcie_sample *s = find(set, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND,
                                                   port, "direction", dir, "tlp", tlps[t]);

                printf(" %s ", tlps[t]);
                if (s)
                        cli_print_rate(s->gauge);
                else
                        printf("%13s", "-");
        }
        const struct pcie_sample *raw =
            find(set, PCIE_FAM_PORT_UTILIZATION_RATIO, port, "direction", dir, "capacity", "raw");

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
                    find(set, PCIE_FAM_PORT_LATENCY_SECONDS, port, "event", events[i], NULL, NULL);

                if (s) {
                        printf("  %s %.0f ns", events[i], s->gauge * 1e9);
                        any = true;
                }
        }
        printf("%s\n", any ? "" : "  -");
}

/* One core's interval: its Root Ports (from pcie_pmu_info) and endpoints. */
static void print_table(const struct engine_unit *unit, const struct sample_set *set)
{
        const char *pmu = engine_unit_name(unit), *sicl = "?", *core = "?", *ports = "";
        double coverage = 0;
        size_t n = 0, port_count = 0;
        char port[PCI_BDF_LEN];

        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family == PCIE_FAM_PMU_COVERAGE_RATIO) {
                        coverage += s->gauge;
                        n++;
                } else if (s->family == PCIE_FAM_PMU_INFO) {
                        pmu = cli_label(s, "pmu") ? cli_label(s, "pmu") : pmu;
                        sicl = cli_label(s, "sicl") ? cli_label(s, "sicl") : "?";
                        core = cli_label(s, "core") ? cli_label(s, "core") : "?";
                        ports = cli_label(s, "ports") ? cli_label(s, "ports") : "";
                }
        }
        for (const char *p = ports; *p; p++)
                port_count += p == ports || p[-1] == ',';
        printf("%s (SICL %s, core %s): %zu Root Port%s, counters cover %.0f%% of the time\n", pmu,
               sicl, core, port_count, port_count == 1 ? "" : "s",
               n ? 100 * coverage / (double)n : 0.0);
        for (const char *p = ports; *p;) {
                size_t len = strcspn(p, ",");

                snprintf(port, sizeof(port), "%.*s", (int)len, p);
                print_port(set, port);
                p += len + (p[len] == ',');
        }
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family != PCIE_FAM_DEVICE_BANDWIDTH_BYTES_PER_SECOND)
                        continue;
                printf("  device %s %s_%s ", cli_label(s, "device"), cli_label(s, "direction"),
                       cli_label(s, "tlp"));
                cli_print_rate(s->gauge);
                printf("\n");
        }
}

struct pmu_print {
        const struct cli_opts *opts;
        json_object *all;
};

static void pmu_round(void *ctx, unsigned int n, const struct engine_unit *unit,
                      const struct sample_set *set)
{
        struct pmu_print *pp = ctx;

        if (!pp->opts->json) {
                print_table(unit, set);
                return;
        }
        for (size_t k = 0; n == pp->opts->count && k < set->count; k++)
                json_object_array_add(pp->all, cli_sample_json(&set->samples[k]));
}

int cmd_pmu(const struct cli_opts *opts, struct engine *e)
{
        struct pmu_print pp = {opts, NULL};
        size_t started;

        if (engine_unit_count(e, ENGINE_SOURCE_HISI_PCIE, &started) == 0) {
                cli_error("no HiSilicon PCIe PMU (hisi_pcie*) on this machine; "
                          "`pciescope pmu --simulate kunpeng930-2p` shows a simulated one "
                          "(on Intel Xeon: `pciescope iio`)");
                return CLI_EXIT_ERROR;
        }
        if (!started) {
                cli_error("no PMU could be started");
                return CLI_EXIT_ERROR;
        }
        pp.all = opts->json ? json_object_new_array() : NULL;
        cli_count(opts, e, pmu_round, &pp);
        if (pp.all) {
                printf("%s\n", json_object_to_json_string_ext(pp.all, JSON_C_TO_STRING_PRETTY));
                json_object_put(pp.all);
        }
        return CLI_EXIT_OK;
}
