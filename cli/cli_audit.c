// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli_audit.c - the MPS/MRRS audit as `pciescope audit` and
 * `pciescope snapshot` (its audit.json) both run it: the scan and audit,
 * the exit status of the findings, and the report's JSON.
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

int cli_audit_exit_status(enum pcie_severity worst)
{
        if (worst == PCIE_SEV_CRITICAL)
                return CLI_EXIT_CRITICAL;
        return worst == PCIE_SEV_WARNING ? CLI_EXIT_WARNING : CLI_EXIT_OK;
}

json_object *cli_audit_report_json(const struct pcie_topo *topo, const struct pcie_audit *audit,
                                   const char *policy_source)
{
        json_object *root = json_object_new_object();
        json_object *findings = json_object_new_array();
        json_object *functions = json_object_new_array();
        json_object *summary = json_object_new_object();
        size_t counts[PCIE_SEV_CRITICAL + 1] = {0};

        json_object_object_add(root, "policy",
                               json_object_new_string(pcie_policy_name(pcie_audit_policy(audit))));
        json_object_object_add(root, "policy_source", json_object_new_string(policy_source));
        for (size_t i = 0; i < pcie_audit_finding_count(audit); i++) {
                const struct pcie_finding *f = pcie_audit_finding(audit, i);
                json_object *o = json_object_new_object();

                counts[f->severity]++;
                json_object_object_add(o, "bdf",
                                       json_object_new_string(pcie_topo_get(topo, f->func)->bdf));
                json_object_object_add(o, "kind",
                                       json_object_new_string(pcie_finding_kind_name(f->kind)));
                json_object_object_add(o, "severity",
                                       json_object_new_string(pcie_severity_name(f->severity)));
                json_object_object_add(
                    o, "other",
                    f->other == PCIE_TOPO_NONE
                        ? NULL
                        : json_object_new_string(pcie_topo_get(topo, f->other)->bdf));
                json_object_object_add(o, "message", json_object_new_string(f->message));
                json_object_array_add(findings, o);
        }
        for (size_t i = 0; i < pcie_topo_count(topo); i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);
                const struct pcie_func_audit *fa = pcie_audit_func(audit, i);
                json_object *o, *policies;

                if (!fa->audited)
                        continue;
                o = json_object_new_object();
                policies = json_object_new_object();
                json_object_object_add(o, "bdf", json_object_new_string(f->bdf));
                json_object_object_add(
                    o, "port_type", json_object_new_string(pcie_port_type_name(f->info.port_type)));
                json_object_object_add(o, "mpss_bytes",
                                       json_object_new_int((int)f->info.mpss_bytes));
                json_object_object_add(o, "mps_bytes", json_object_new_int((int)f->info.mps_bytes));
                json_object_object_add(o, "mrrs_bytes",
                                       json_object_new_int((int)f->info.mrrs_bytes));
                json_object_object_add(o, "best_mps_bytes",
                                       json_object_new_int((int)fa->best_mps_bytes));
                json_object_object_add(o, "payload_efficiency",
                                       json_object_new_double(fa->efficiency_current));
                json_object_object_add(o, "payload_efficiency_best",
                                       json_object_new_double(fa->efficiency_best));
                json_object_object_add(o, "worst_severity",
                                       json_object_new_string(pcie_severity_name(fa->worst)));
                for (int p = 0; p < PCIE_POLICY_COUNT; p++) {
                        const struct pcie_setting *s = &pcie_audit_settings(audit, p)[i];
                        json_object *ps = json_object_new_object();

                        json_object_object_add(ps, "mps_bytes",
                                               json_object_new_int((int)s->mps_bytes));
                        json_object_object_add(ps, "mrrs_bytes",
                                               json_object_new_int((int)s->mrrs_bytes));
                        json_object_object_add(ps, "set_failed",
                                               json_object_new_boolean(s->set_failed));
                        json_object_object_add(policies, pcie_policy_name(p), ps);
                }
                json_object_object_add(o, "policies", policies);
                json_object_array_add(functions, o);
        }
        json_object_object_add(summary, "critical",
                               json_object_new_int((int)counts[PCIE_SEV_CRITICAL]));
        json_object_object_add(summary, "warning",
                               json_object_new_int((int)counts[PCIE_SEV_WARNING]));
        json_object_object_add(summary, "info", json_object_new_int((int)counts[PCIE_SEV_INFO]));
        json_object_object_add(root, "findings", findings);
        json_object_object_add(root, "functions", functions);
        json_object_object_add(root, "summary", summary);
        json_object_object_add(root, "exit_status",
                               json_object_new_int(cli_audit_exit_status(pcie_audit_worst(audit))));
        return root;
}

/* Scans and audits: the tree, the findings and where the policy came
 * from. Returns 0, or -1 after saying why on stderr. */
int cli_audit_run(const struct cli_opts *opts, struct hw_env *env, struct pcie_topo **topo,
                  struct pcie_audit **audit, const char **policy_source)
{
        struct pcie_topo_opts topo_opts = {.names = false, .read_sysfs = false};
        static const char *const source_names[] = {
            [PCIE_POLICY_FROM_CONFIG] = "--policy",
            [PCIE_POLICY_FROM_CMDLINE] = "kernel command line",
            [PCIE_POLICY_FROM_DEFAULT] = "default",
        };
        enum pcie_policy policy;
        int err;

        *policy_source = source_names[pcie_policy_in_force(
            env, opts->cfg.monitor.policy_given ? &opts->cfg.monitor.policy : NULL, &policy)];
        if (cli_scan(opts, env, &topo_opts, topo))
                return -1;
        err = pcie_audit_run(*topo, policy, NULL, audit);
        if (err) {
                cli_error("audit failed: %s", strerror(-err));
                pcie_topo_free(*topo);
                return -1;
        }
        return 0;
}

char *cli_audit_json(const struct cli_opts *opts, struct hw_env *env)
{
        const char *policy_source;
        struct pcie_audit *audit;
        struct pcie_topo *topo;
        json_object *root;
        char *text;

        if (cli_audit_run(opts, env, &topo, &audit, &policy_source))
                return NULL;
        root = cli_audit_report_json(topo, audit, policy_source);
        /* as `audit --json` prints it, newline included */
        if (asprintf(&text, "%s\n",
                     json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
                text = NULL;
        json_object_put(root);
        pcie_audit_free(audit);
        pcie_topo_free(topo);
        return text;
}
