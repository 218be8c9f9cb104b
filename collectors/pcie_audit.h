/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_audit.h - MPS/MRRS audit and the kernel's five MPS/MRRS policies.
 *
 * Findings compare each function's Max_Payload_Size and Max_Read_Request_Size
 * with its capability, its link partner and its path to the Root Port. The
 * policy simulation replays, on this very topology, what Linux would set
 * under each `pcie_bus_config` value: step A per device at enumeration
 * (pci_configure_mps) then step B per Root Port hierarchy
 * (pcie_bus_configure_settings), as described in kernel-facts §6.3 and
 * drivers/pci/probe.c. The current register values stand in for what the
 * firmware left, since that is what the kernel would start from after a
 * rescan.
 */
#ifndef PCIESCOPE_PCIE_AUDIT_H
#define PCIESCOPE_PCIE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pcie_topo;

enum pcie_policy {
        PCIE_POLICY_TUNE_OFF,
        PCIE_POLICY_DEFAULT,
        PCIE_POLICY_SAFE,
        PCIE_POLICY_PERFORMANCE,
        PCIE_POLICY_PEER2PEER,
        PCIE_POLICY_COUNT,
};

/* "tune_off", "default", "safe", "performance", "peer2peer" */
const char *pcie_policy_name(enum pcie_policy policy);
/* The boot parameter that selects it ("pci=pcie_bus_safe"), or "" for default. */
const char *pcie_policy_param(enum pcie_policy policy);
/* Parses a policy name as written by pcie_policy_name(); -EINVAL otherwise. */
int pcie_policy_parse(const char *name, enum pcie_policy *out);

/*
 * pcie_policy_from_cmdline - the policy the kernel command line selects.
 * Looks at every `pci=` parameter (comma-separated options, later ones win,
 * as the kernel parses them in order). Returns 1 if one was given, 0 if the
 * default applies (*out = PCIE_POLICY_DEFAULT; a kernel built with another
 * CONFIG_PCIE_BUS_* default is not visible from here).
 */
int pcie_policy_from_cmdline(const char *cmdline, enum pcie_policy *out);

struct pcie_setting {
        unsigned int mps_bytes;
        unsigned int mrrs_bytes;
        bool set_failed; /* the kernel would try and fail (value above MPSS) */
};

/*
 * pcie_policy_simulate - what the kernel would set under @policy.
 * @out receives one entry per function of @topo (same order). Functions
 * without PCIe keep zeroes.
 */
void pcie_policy_simulate(const struct pcie_topo *topo, enum pcie_policy policy,
                          struct pcie_setting *out);

enum pcie_severity {
        PCIE_SEV_OK,
        PCIE_SEV_INFO,
        PCIE_SEV_WARNING, /* performance */
        PCIE_SEV_CRITICAL,
};
const char *pcie_severity_name(enum pcie_severity sev);

enum pcie_finding_kind {
        PCIE_FINDING_MPS_ABOVE_PARTNER,   /* critical: Malformed TLP risk */
        PCIE_FINDING_MPS_ABOVE_MPSS,      /* critical */
        PCIE_FINDING_MPS_BELOW_PATH,      /* performance */
        PCIE_FINDING_MRRS_BELOW_MPS,      /* performance */
        PCIE_FINDING_MRRS_SMALL,          /* performance: < 512 on a fast link */
        PCIE_FINDING_MRRS_ABOVE_MPS_PERF, /* info, under pci=pcie_bus_perf */
        PCIE_FINDING_KIND_COUNT,
};
/* "mps_above_partner", ... (stable: used as a metric label) */
const char *pcie_finding_kind_name(enum pcie_finding_kind kind);

struct pcie_finding {
        size_t func;  /* index into the topology */
        size_t other; /* the partner or path device involved, or PCIE_TOPO_NONE */
        enum pcie_finding_kind kind;
        enum pcie_severity severity;
        char message[256];
};

struct pcie_audit_opts {
        /* An endpoint whose maximum link capacity (bytes/s per direction)
         * reaches this is "high bandwidth" for the MRRS < 512 rule. */
        uint64_t high_bandwidth_bytes;
        /* The MRRS below which a high-bandwidth endpoint is flagged. */
        unsigned int min_mrrs_bytes;
};
/* Defaults: high bandwidth from 8 GT/s x4 up (3.938 GB/s), MRRS 512. */
void pcie_audit_opts_default(struct pcie_audit_opts *opts);

struct pcie_func_audit {
        bool audited;                /* has PCIe registers */
        unsigned int best_mps_bytes; /* largest MPS its path to the Root Port allows */
        double efficiency_current;   /* payload efficiency at the current MPS */
        double efficiency_best;      /* at best_mps_bytes */
        enum pcie_severity worst;
        unsigned int finding_count[PCIE_SEV_CRITICAL + 1];
};

struct pcie_audit;

/* Returns 0 or -ENOMEM. */
int pcie_audit_run(const struct pcie_topo *topo, enum pcie_policy in_force,
                   const struct pcie_audit_opts *opts, struct pcie_audit **out);
void pcie_audit_free(struct pcie_audit *audit);

enum pcie_policy pcie_audit_policy(const struct pcie_audit *audit);
size_t pcie_audit_finding_count(const struct pcie_audit *audit);
const struct pcie_finding *pcie_audit_finding(const struct pcie_audit *audit, size_t i);
const struct pcie_func_audit *pcie_audit_func(const struct pcie_audit *audit, size_t func);
/* Per-function settings under @policy (same order as the topology). */
const struct pcie_setting *pcie_audit_settings(const struct pcie_audit *audit,
                                               enum pcie_policy policy);
/* The most severe finding, PCIE_SEV_OK if none. */
enum pcie_severity pcie_audit_worst(const struct pcie_audit *audit);

#endif /* PCIESCOPE_PCIE_AUDIT_H */
