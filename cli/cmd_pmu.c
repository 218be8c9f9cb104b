// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_pmu.c - `pciescope pmu`: count with every per-port PCIe PMU
 * (hisi_pcie, dwc_rootport, nvidia_pcie_pmu) and the AMD data fabric for a
 * few intervals and print per-port (or per root complex) bandwidth,
 * utilisation and latency.
 *
 * It runs the engine the collectd plugin runs, with those sources only
 * (ENGINE_SOURCE_PORT_PMUS and amd_df) and in manual mode (every unit
 * ticks on this thread), and prints the samples each unit publishes.
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
        const char *v = pcie_sample_label(s, key);

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
        /* A PMU that counts a direction as a whole (tlp "all"). */
        const struct pcie_sample *all = find(set, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND, port,
                                             "direction", dir, "tlp", "all");

        printf("    %s ", dir);
        if (all) {
                printf(" all ");
                cli_print_rate(all->gauge);
        }
        for (size_t t = 0; t < 3 && !all; t++) {
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

/* Bandwidth counted per root complex rather than per Root Port (the
 * `root_complex` label), with the utilisation where it is mapped. */
static void print_root_complexes(const struct sample_set *set)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const char *rc = pcie_sample_label(s, "root_complex"),
                           *dir = pcie_sample_label(s, "direction");
                const char *loc = pcie_sample_label(s, "locality");

                if (s->family != PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND || !rc || !dir)
                        continue;
                printf("  root complex %-4s %-6s %s ", rc, loc ? loc : "", dir);
                cli_print_rate(s->gauge);
                for (size_t k = 0; k < set->count; k++) {
                        const struct pcie_sample *u = &set->samples[k];

                        if (u->family == PCIE_FAM_PORT_UTILIZATION_RATIO &&
                            has_label(u, "root_complex", rc) && has_label(u, "direction", dir) &&
                            has_label(u, "capacity", "raw") && loc && !strcmp(loc, "local"))
                                printf("   util %5.1f%% (%s)", u->gauge * 100,
                                       pcie_sample_label(u, "root_bus")
                                           ? pcie_sample_label(u, "root_bus")
                                           : "");
                }
                printf("\n");
        }
}

/* The mean coverage the PMU named @pmu reports (one value below full
 * detail, one per measurement at full), or -1; NULL: every PMU of the set. */
static double pmu_coverage(const struct sample_set *set, const char *pmu)
{
        double sum = 0;
        size_t n = 0;

        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family == PCIE_FAM_PMU_COVERAGE_RATIO &&
                    (!pmu || has_label(s, "pmu", pmu))) {
                        sum += s->gauge;
                        n++;
                }
        }
        return n ? sum / (double)n : -1;
}

/* One PMU of a unit's interval (a core of hisi_pcie, a Root Port of a
 * DesignWare PMU): its Root Ports (from pcie_pmu_info) and endpoints. */
static void print_pmu(const struct sample_set *set, const struct pcie_sample *info)
{
        const char *sicl = pcie_sample_label(info, "sicl"), *core = pcie_sample_label(info, "core");
        const char *node = pcie_sample_label(info, "node"); /* a PMU per socket (NVIDIA Grace) */
        const char *ports =
            pcie_sample_label(info, "ports") ? pcie_sample_label(info, "ports") : "";
        const char *pmu = pcie_sample_label(info, "pmu") ? pcie_sample_label(info, "pmu") : "";
        double coverage = pmu_coverage(set, pmu);
        size_t port_count = 0;
        char port[PCI_BDF_LEN], where[64] = "";

        for (const char *p = ports; *p; p++)
                port_count += p == ports || p[-1] == ',';
        if (node)
                snprintf(where, sizeof(where), " (node %s)", node);
        else if (sicl || core)
                snprintf(where, sizeof(where), " (SICL %s, core %s)", sicl ? sicl : "?",
                         core ? core : "?");
        printf("%s%s: %zu Root Port%s, counters cover %.0f%% of the time\n", pmu, where, port_count,
               port_count == 1 ? "" : "s", coverage < 0 ? 0.0 : 100 * coverage);
        for (const char *p = ports; *p;) {
                size_t len = strcspn(p, ",");

                snprintf(port, sizeof(port), "%.*s", (int)len, p);
                print_port(set, port);
                p += len + (p[len] == ',');
        }
}

static void print_table(const struct engine_unit *unit, const struct sample_set *set)
{
        bool any = false;

        for (size_t i = 0; i < set->count; i++) {
                if (set->samples[i].family == PCIE_FAM_PMU_INFO) {
                        print_pmu(set, &set->samples[i]);
                        any = true;
                }
        }
        if (!any && pmu_coverage(set, NULL) >= 0) {
                /* A PMU without Root Ports of its own (the AMD data fabric). */
                printf("%s: counters cover %.0f%% of the time\n", engine_unit_name(unit),
                       100 * pmu_coverage(set, NULL));
                print_root_complexes(set);
        } else if (!any) {
                printf("%s: no counters yet\n", engine_unit_name(unit));
        }
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family != PCIE_FAM_DEVICE_BANDWIDTH_BYTES_PER_SECOND)
                        continue;
                printf("  device %s %s_%s ", pcie_sample_label(s, "device"),
                       pcie_sample_label(s, "direction"), pcie_sample_label(s, "tlp"));
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

        if (engine_unit_count(e, ENGINE_SOURCE_PORT_PMUS | ENGINE_SOURCE_AMD_DF, &started) == 0) {
                cli_error("no PCIe PMU (hisi_pcie*, dwc_rootport_*, nvidia_pcie_pmu_*, amd_df) on "
                          "this machine; "
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
