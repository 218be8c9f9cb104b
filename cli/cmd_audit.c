// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_audit.c - `pciescope audit`: MPS/MRRS findings and the five policies.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "pcie_monitor.h"
#include "pcie_audit.h"
#include "pcie_link.h"
#include "pcie_topo.h"

static void print_report(const struct pcie_topo *topo, const struct pcie_audit *audit,
                         const char *policy_source)
{
        size_t n = pcie_topo_count(topo), counts[PCIE_SEV_CRITICAL + 1] = {0};
        enum pcie_policy in_force = pcie_audit_policy(audit);

        printf("MPS/MRRS policy in force: %s (%s%s%s)\n\n", pcie_policy_name(in_force),
               policy_source, *pcie_policy_param(in_force) ? ", " : "",
               pcie_policy_param(in_force));

        printf("Findings:\n");
        for (int sev = PCIE_SEV_CRITICAL; sev >= PCIE_SEV_INFO; sev--) {
                for (size_t i = 0; i < pcie_audit_finding_count(audit); i++) {
                        const struct pcie_finding *f = pcie_audit_finding(audit, i);

                        if ((int)f->severity != sev)
                                continue;
                        counts[sev]++;
                        printf("  %-8s %s  %s (%s)\n", pcie_severity_name(f->severity),
                               pcie_topo_get(topo, f->func)->bdf, f->message,
                               pcie_finding_kind_name(f->kind));
                }
        }
        if (!pcie_audit_finding_count(audit))
                printf("  none\n");

        printf("\nPer function (bytes; efficiency = payload / (payload + %d bytes TLP "
               "overhead)):\n",
               PCIE_TLP_OVERHEAD_BYTES);
        printf("  %-14s %-22s %5s %5s %5s %5s %6s %6s  %s\n", "BDF", "type", "MPSS", "MPS", "best",
               "MRRS", "eff", "best", "MPS/MRRS under tune_off default safe perf p2p");
        for (size_t i = 0; i < n; i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);
                const struct pcie_func_audit *fa = pcie_audit_func(audit, i);

                if (!fa->audited)
                        continue;
                printf("  %-14s %-22s %5u %5u %5u %5u %5.1f%% %5.1f%% ", f->bdf,
                       pcie_port_type_name(f->info.port_type), f->info.mpss_bytes,
                       f->info.mps_bytes, fa->best_mps_bytes, f->info.mrrs_bytes,
                       100.0 * fa->efficiency_current, 100.0 * fa->efficiency_best);
                for (int p = 0; p < PCIE_POLICY_COUNT; p++) {
                        const struct pcie_setting *s = &pcie_audit_settings(audit, p)[i];

                        printf(" %u/%u%s", s->mps_bytes, s->mrrs_bytes, s->set_failed ? "!" : "");
                }
                putchar('\n');
        }
        printf("  (\"!\": the kernel would try a value above the device's MPSS and fail)\n");
        printf("\nSummary: %zu critical, %zu warning, %zu info\n", counts[PCIE_SEV_CRITICAL],
               counts[PCIE_SEV_WARNING], counts[PCIE_SEV_INFO]);
}

int cmd_audit(const struct cli_opts *opts, struct engine *e)
{
        struct hw_env *env = engine_env(e);
        const char *policy_source;
        struct pcie_audit *audit;
        struct pcie_topo *topo;
        int status;

        if (cli_audit_run(opts, env, &topo, &audit, &policy_source))
                return CLI_EXIT_ERROR;
        if (opts->json) {
                json_object *root = cli_audit_report_json(topo, audit, policy_source);

                puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(root);
        } else {
                print_report(topo, audit, policy_source);
        }
        if (pcie_topo_truncated(topo))
                fprintf(stderr,
                        "pciescope: %zu function(s) with truncated configuration space were not "
                        "audited (run as root)\n",
                        pcie_topo_truncated(topo));
        status = cli_audit_exit_status(pcie_audit_worst(audit));
        pcie_audit_free(audit);
        pcie_topo_free(topo);
        return status;
}
