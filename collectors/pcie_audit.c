// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_audit.c - MPS/MRRS audit and the kernel's five policies.
 */
#include "pcie_audit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie_link.h"
#include "pcie_topo.h"

static const char *const policy_names[PCIE_POLICY_COUNT] = {
    [PCIE_POLICY_TUNE_OFF] = "tune_off",   [PCIE_POLICY_DEFAULT] = "default",
    [PCIE_POLICY_SAFE] = "safe",           [PCIE_POLICY_PERFORMANCE] = "performance",
    [PCIE_POLICY_PEER2PEER] = "peer2peer",
};

/* The option names the kernel's pci= parser accepts (drivers/pci/pci.c). */
static const char *const policy_options[PCIE_POLICY_COUNT] = {
    [PCIE_POLICY_TUNE_OFF] = "pcie_bus_tune_off",   [PCIE_POLICY_DEFAULT] = "",
    [PCIE_POLICY_SAFE] = "pcie_bus_safe",           [PCIE_POLICY_PERFORMANCE] = "pcie_bus_perf",
    [PCIE_POLICY_PEER2PEER] = "pcie_bus_peer2peer",
};

static const char *const policy_params[PCIE_POLICY_COUNT] = {
    [PCIE_POLICY_TUNE_OFF] = "pci=pcie_bus_tune_off",
    [PCIE_POLICY_DEFAULT] = "",
    [PCIE_POLICY_SAFE] = "pci=pcie_bus_safe",
    [PCIE_POLICY_PERFORMANCE] = "pci=pcie_bus_perf",
    [PCIE_POLICY_PEER2PEER] = "pci=pcie_bus_peer2peer",
};

const char *pcie_policy_name(enum pcie_policy policy)
{
        return policy < PCIE_POLICY_COUNT ? policy_names[policy] : "unknown";
}

const char *pcie_policy_param(enum pcie_policy policy)
{
        return policy < PCIE_POLICY_COUNT ? policy_params[policy] : "";
}

int pcie_policy_parse(const char *name, enum pcie_policy *out)
{
        for (int p = 0; p < PCIE_POLICY_COUNT; p++) {
                if (!strcmp(name, policy_names[p])) {
                        *out = (enum pcie_policy)p;
                        return 0;
                }
        }
        return -EINVAL;
}

/* Applies one comma-separated `pci=` value; returns 1 if it named a policy. */
static int apply_pci_options(const char *val, size_t len, enum pcie_policy *out)
{
        int found = 0;

        while (len) {
                const char *comma = memchr(val, ',', len);
                size_t opt_len = comma ? (size_t)(comma - val) : len;

                for (int p = 0; p < PCIE_POLICY_COUNT; p++) {
                        size_t n = strlen(policy_options[p]);

                        if (n && opt_len == n && !memcmp(val, policy_options[p], n)) {
                                *out = (enum pcie_policy)p;
                                found = 1;
                        }
                }
                if (!comma)
                        break;
                len -= opt_len + 1;
                val = comma + 1;
        }
        return found;
}

int pcie_policy_from_cmdline(const char *cmdline, enum pcie_policy *out)
{
        const char *p = cmdline;
        int found = 0;

        *out = PCIE_POLICY_DEFAULT;
        while (*p) {
                size_t len;

                while (*p == ' ' || *p == '\t' || *p == '\n')
                        p++;
                len = strcspn(p, " \t\n");
                /* Everything after a bare "--" goes to init, not the kernel. */
                if (len == 2 && !strncmp(p, "--", 2))
                        break;
                if (len > 4 && !strncmp(p, "pci=", 4))
                        found |= apply_pci_options(p + 4, len - 4, out);
                p += len;
        }
        return found;
}

const char *pcie_severity_name(enum pcie_severity sev)
{
        switch (sev) {
        case PCIE_SEV_OK:
                return "ok";
        case PCIE_SEV_INFO:
                return "info";
        case PCIE_SEV_WARNING:
                return "warning";
        case PCIE_SEV_CRITICAL:
                return "critical";
        }
        return "unknown";
}

const char *pcie_finding_kind_name(enum pcie_finding_kind kind)
{
        static const char *const names[PCIE_FINDING_KIND_COUNT] = {
            [PCIE_FINDING_MPS_ABOVE_PARTNER] = "mps_above_partner",
            [PCIE_FINDING_MPS_ABOVE_MPSS] = "mps_above_mpss",
            [PCIE_FINDING_MPS_BELOW_PATH] = "mps_below_path",
            [PCIE_FINDING_MRRS_BELOW_MPS] = "mrrs_below_mps",
            [PCIE_FINDING_MRRS_SMALL] = "mrrs_small",
            [PCIE_FINDING_MRRS_ABOVE_MPS_PERF] = "mrrs_above_mps_perf",
        };
        return kind < PCIE_FINDING_KIND_COUNT ? names[kind] : "unknown";
}

/* ---- Policy simulation ------------------------------------------------ */

static unsigned int mpss_code(const struct pcie_function *f)
{
        unsigned int code = 0;

        while ((128u << code) < f->info.mpss_bytes && code < 7)
                code++;
        return code;
}

/* pcie_set_mps(): refuses values above the device's MPSS. */
static bool set_mps(const struct pcie_function *f, struct pcie_setting *s, unsigned int mps)
{
        if (mps < 128 || mps > 4096 || mps > f->info.mpss_bytes) {
                s->set_failed = true;
                return false;
        }
        s->mps_bytes = mps;
        return true;
}

/* One policy applied to a topology: the kernel's two configuration steps
 * (pci_configure_mps per device, then pcie_bus_configure_settings per bus)
 * walked over our copy of the tree. */
struct policy_walk {
        const struct pcie_topo *topo;
        enum pcie_policy policy;
        struct pcie_setting *s;
        size_t n;
};

static const struct pcie_function *fn(const struct policy_walk *sim, size_t i)
{
        return pcie_topo_get(sim->topo, i);
}

static bool is_pcie(const struct policy_walk *sim, size_t i)
{
        return i != PCIE_TOPO_NONE && fn(sim, i)->info.has_pcie;
}

/* Step A: pci_configure_mps() as each device is added. */
static void step_a(struct policy_walk *sim, size_t i)
{
        const struct pcie_function *dev = fn(sim, i);
        size_t b = dev->parent;
        unsigned int mps, p_mps;

        if (!dev->info.has_pcie)
                return;
        if (dev->info.port_type == PCIE_PORT_RC_ENDPOINT) {
                set_mps(dev, &sim->s[i],
                        sim->policy == PCIE_POLICY_PEER2PEER ? 128 : dev->info.mpss_bytes);
                return;
        }
        if (!is_pcie(sim, b))
                return;
        mps = sim->s[i].mps_bytes;
        p_mps = sim->s[b].mps_bytes;
        if (mps == p_mps || sim->policy != PCIE_POLICY_DEFAULT)
                return; /* TUNE_OFF only warns; SAFE/PERF/P2P wait for step B */
        if (dev->info.mpss_bytes < p_mps && fn(sim, b)->info.port_type == PCIE_PORT_ROOT_PORT) {
                set_mps(fn(sim, b), &sim->s[b], dev->info.mpss_bytes);
                p_mps = sim->s[b].mps_bytes;
        }
        set_mps(dev, &sim->s[i], p_mps);
}

/* Devices in the order the kernel adds them: all functions of a bus first,
 * then each bridge's secondary bus, depth first (pci_scan_child_bus). */
static void enumerate(struct policy_walk *sim, size_t parent, uint32_t domain, uint8_t bus)
{
        for (size_t i = 0; i < sim->n; i++)
                if (fn(sim, i)->parent == parent &&
                    (parent != PCIE_TOPO_NONE ||
                     (fn(sim, i)->addr.domain == domain && fn(sim, i)->addr.bus == bus)))
                        step_a(sim, i);
        for (size_t i = 0; i < sim->n; i++)
                if (fn(sim, i)->parent == parent && fn(sim, i)->info.is_bridge &&
                    (parent != PCIE_TOPO_NONE ||
                     (fn(sim, i)->addr.domain == domain && fn(sim, i)->addr.bus == bus)))
                        enumerate(sim, i, 0, 0);
}

/* Pre-order walk of the hierarchy below @top, as pci_walk_bus() does:
 * a bridge is visited before the devices behind it. */
static void walk_below(struct policy_walk *sim, size_t top,
                       void (*cb)(struct policy_walk *, size_t, void *), void *data)
{
        for (size_t i = 0; i < sim->n; i++) {
                if (fn(sim, i)->parent != top)
                        continue;
                cb(sim, i, data);
                if (fn(sim, i)->info.is_bridge)
                        walk_below(sim, i, cb, data);
        }
}

/* pcie_find_smpss() */
static void find_smpss(struct policy_walk *sim, size_t i, void *data)
{
        const struct pcie_function *dev = fn(sim, i);
        unsigned int *smpss = data;

        if (!dev->info.has_pcie)
                return;
        /* Devices hot-added later could not be changed, so a hot-plug
         * capable bridge below the Root Port forces 128 bytes. */
        if (dev->info.hotplug_capable && dev->info.port_type != PCIE_PORT_ROOT_PORT)
                *smpss = 0;
        if (*smpss > mpss_code(dev))
                *smpss = mpss_code(dev);
}

/* pcie_bus_configure_set(): pcie_write_mps() then pcie_write_mrrs(). */
static void configure_set(struct policy_walk *sim, size_t i, void *data)
{
        const struct pcie_function *dev = fn(sim, i);
        struct pcie_setting *s = &sim->s[i];
        unsigned int mps = 128u << *(unsigned int *)data;

        if (!dev->info.has_pcie)
                return;
        if (sim->policy == PCIE_POLICY_PERFORMANCE) {
                mps = dev->info.mpss_bytes;
                /* Only upstream traffic needs matching: downstream TLPs are
                 * kept small by MRRS = MPS (the kernel's comment). */
                if (dev->info.port_type != PCIE_PORT_ROOT_PORT && is_pcie(sim, dev->parent) &&
                    sim->s[dev->parent].mps_bytes < mps)
                        mps = sim->s[dev->parent].mps_bytes;
        }
        set_mps(dev, s, mps);
        if (sim->policy == PCIE_POLICY_PERFORMANCE)
                s->mrrs_bytes = s->mps_bytes;
}

/* Step B: pcie_bus_configure_settings() for each bridge on a root bus. */
static void step_b(struct policy_walk *sim)
{
        if (sim->policy != PCIE_POLICY_SAFE && sim->policy != PCIE_POLICY_PERFORMANCE &&
            sim->policy != PCIE_POLICY_PEER2PEER)
                return;
        for (size_t top = 0; top < sim->n; top++) {
                const struct pcie_function *self = fn(sim, top);
                unsigned int smpss = 0;

                if (self->parent != PCIE_TOPO_NONE || !self->info.is_bridge || !self->info.has_pcie)
                        continue;
                if (sim->policy == PCIE_POLICY_SAFE) {
                        smpss = mpss_code(self);
                        find_smpss(sim, top, &smpss);
                        walk_below(sim, top, find_smpss, &smpss);
                }
                configure_set(sim, top, &smpss);
                walk_below(sim, top, configure_set, &smpss);
        }
}

void pcie_policy_simulate(const struct pcie_topo *topo, enum pcie_policy policy,
                          struct pcie_setting *out)
{
        struct policy_walk sim = {
            .topo = topo, .policy = policy, .s = out, .n = pcie_topo_count(topo)};

        for (size_t i = 0; i < sim.n; i++) {
                const struct pcie_function *f = fn(&sim, i);

                out[i] = (struct pcie_setting){0};
                if (f->info.has_pcie) {
                        out[i].mps_bytes = f->info.mps_bytes;
                        out[i].mrrs_bytes = f->info.mrrs_bytes;
                }
        }
        /* Root buses: those of functions without a parent, once each. */
        for (size_t i = 0; i < sim.n; i++) {
                const struct pcie_function *f = fn(&sim, i);
                bool first = true;

                if (f->parent != PCIE_TOPO_NONE)
                        continue;
                for (size_t j = 0; j < i && first; j++)
                        if (fn(&sim, j)->parent == PCIE_TOPO_NONE &&
                            fn(&sim, j)->addr.domain == f->addr.domain &&
                            fn(&sim, j)->addr.bus == f->addr.bus)
                                first = false;
                if (first)
                        enumerate(&sim, PCIE_TOPO_NONE, f->addr.domain, f->addr.bus);
        }
        step_b(&sim);
}

/* ---- Findings --------------------------------------------------------- */

struct pcie_audit {
        enum pcie_policy policy;
        struct pcie_finding *findings;
        size_t finding_count, finding_cap;
        struct pcie_func_audit *funcs;
        struct pcie_setting *settings[PCIE_POLICY_COUNT];
        enum pcie_severity worst;
};

void pcie_audit_opts_default(struct pcie_audit_opts *opts)
{
        opts->high_bandwidth_bytes = pcie_link_capacity_bytes(3, 4);
        opts->min_mrrs_bytes = 512;
}

static int add_finding(struct pcie_audit *a, size_t func, size_t other, enum pcie_finding_kind kind,
                       enum pcie_severity sev, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int add_finding(struct pcie_audit *a, size_t func, size_t other, enum pcie_finding_kind kind,
                       enum pcie_severity sev, const char *fmt, ...)
{
        struct pcie_finding *f;
        va_list ap;

        if (a->finding_count == a->finding_cap) {
                size_t cap = a->finding_cap ? a->finding_cap * 2 : 16;
                struct pcie_finding *grown = realloc(a->findings, cap * sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                a->findings = grown;
                a->finding_cap = cap;
        }
        f = &a->findings[a->finding_count++];
        f->func = func;
        f->other = other;
        f->kind = kind;
        f->severity = sev;
        va_start(ap, fmt);
        vsnprintf(f->message, sizeof(f->message), fmt, ap);
        va_end(ap);
        a->funcs[func].finding_count[sev]++;
        if (sev > a->funcs[func].worst)
                a->funcs[func].worst = sev;
        if (sev > a->worst)
                a->worst = sev;
        return 0;
}

static bool is_requester_endpoint(const struct pcie_function *f)
{
        return f->info.port_type == PCIE_PORT_ENDPOINT ||
               f->info.port_type == PCIE_PORT_LEGACY_ENDPOINT ||
               f->info.port_type == PCIE_PORT_RC_ENDPOINT;
}

/* Smallest MPSS from this function up to its Root Port (or the top of its
 * PCIe hierarchy): the largest MPS every link on the way can carry. */
static unsigned int path_mps(const struct pcie_topo *topo, size_t i)
{
        const struct pcie_function *f = pcie_topo_get(topo, i);
        unsigned int best = f->info.mpss_bytes;
        size_t steps = 0;

        if (f->info.port_type == PCIE_PORT_RC_ENDPOINT)
                return best;
        for (size_t cur = f->parent; cur != PCIE_TOPO_NONE && steps < pcie_topo_count(topo);
             steps++) {
                const struct pcie_function *p = pcie_topo_get(topo, cur);

                if (!p->info.has_pcie)
                        break;
                if (p->info.mpss_bytes < best)
                        best = p->info.mpss_bytes;
                if (p->info.port_type == PCIE_PORT_ROOT_PORT)
                        break;
                cur = p->parent;
        }
        return best;
}

static int audit_link(struct pcie_audit *a, const struct pcie_topo *topo, size_t i)
{
        const struct pcie_function *f = pcie_topo_get(topo, i);
        const struct pcie_function *p;

        if (f->partner == PCIE_TOPO_NONE || !pcie_port_is_upstream_facing(f->info.port_type))
                return 0;
        p = pcie_topo_get(topo, f->partner);
        if (!p->info.has_pcie || f->info.mps_bytes == p->info.mps_bytes)
                return 0;
        /* Whichever end has the larger MPS may send TLPs the other end
         * rejects as Malformed. */
        if (f->info.mps_bytes > p->info.mps_bytes)
                return add_finding(a, i, f->partner, PCIE_FINDING_MPS_ABOVE_PARTNER,
                                   PCIE_SEV_CRITICAL,
                                   "MPS %u larger than link partner %s's MPS %u: Malformed TLP "
                                   "risk",
                                   f->info.mps_bytes, p->bdf, p->info.mps_bytes);
        return add_finding(a, f->partner, i, PCIE_FINDING_MPS_ABOVE_PARTNER, PCIE_SEV_CRITICAL,
                           "MPS %u larger than link partner %s's MPS %u: Malformed TLP risk",
                           p->info.mps_bytes, f->bdf, f->info.mps_bytes);
}

static int audit_function(struct pcie_audit *a, const struct pcie_topo *topo,
                          const struct pcie_audit_opts *opts, size_t i)
{
        const struct pcie_function *f = pcie_topo_get(topo, i);
        struct pcie_func_audit *fa = &a->funcs[i];
        int err;

        if (!f->info.has_pcie)
                return 0;
        fa->audited = true;
        fa->best_mps_bytes = path_mps(topo, i);
        fa->efficiency_current = pcie_payload_efficiency(f->info.mps_bytes);
        fa->efficiency_best = pcie_payload_efficiency(fa->best_mps_bytes);

        if (f->info.mps_bytes > f->info.mpss_bytes) {
                err = add_finding(a, i, PCIE_TOPO_NONE, PCIE_FINDING_MPS_ABOVE_MPSS,
                                  PCIE_SEV_CRITICAL,
                                  "MPS %u above the %u bytes the device supports (MPSS)",
                                  f->info.mps_bytes, f->info.mpss_bytes);
                if (err)
                        return err;
        }
        err = audit_link(a, topo, i);
        if (err || !is_requester_endpoint(f))
                return err;

        if (f->info.mps_bytes < fa->best_mps_bytes) {
                err = add_finding(a, i, f->root_port, PCIE_FINDING_MPS_BELOW_PATH, PCIE_SEV_WARNING,
                                  "MPS %u below the %u bytes its whole path supports: payload "
                                  "efficiency %.1f%% instead of %.1f%%",
                                  f->info.mps_bytes, fa->best_mps_bytes,
                                  100.0 * fa->efficiency_current, 100.0 * fa->efficiency_best);
                if (err)
                        return err;
        }
        if (f->info.mrrs_bytes < f->info.mps_bytes) {
                err =
                    add_finding(a, i, PCIE_TOPO_NONE, PCIE_FINDING_MRRS_BELOW_MPS, PCIE_SEV_WARNING,
                                "MRRS %u below MPS %u: DMA reads come back in smaller "
                                "completions than the link allows",
                                f->info.mrrs_bytes, f->info.mps_bytes);
                if (err)
                        return err;
        }
        if (f->info.mrrs_bytes < opts->min_mrrs_bytes && f->info.has_link &&
            f->capacity_max >= opts->high_bandwidth_bytes) {
                err = add_finding(a, i, PCIE_TOPO_NONE, PCIE_FINDING_MRRS_SMALL, PCIE_SEV_WARNING,
                                  "MRRS %u below %u on a %.1f GB/s link: more read requests "
                                  "in flight for the same throughput",
                                  f->info.mrrs_bytes, opts->min_mrrs_bytes,
                                  (double)f->capacity_max / 1e9);
                if (err)
                        return err;
        }
        if (a->policy == PCIE_POLICY_PERFORMANCE && f->info.mrrs_bytes > f->info.mps_bytes) {
                err = add_finding(a, i, PCIE_TOPO_NONE, PCIE_FINDING_MRRS_ABOVE_MPS_PERF,
                                  PCIE_SEV_INFO,
                                  "MRRS %u above MPS %u under pci=pcie_bus_perf, which expects "
                                  "MRRS <= MPS (a driver raised it)",
                                  f->info.mrrs_bytes, f->info.mps_bytes);
        }
        return err;
}

void pcie_audit_free(struct pcie_audit *audit)
{
        if (!audit)
                return;
        for (int p = 0; p < PCIE_POLICY_COUNT; p++)
                free(audit->settings[p]);
        free(audit->funcs);
        free(audit->findings);
        free(audit);
}

int pcie_audit_run(const struct pcie_topo *topo, enum pcie_policy in_force,
                   const struct pcie_audit_opts *opts, struct pcie_audit **out)
{
        size_t n = pcie_topo_count(topo);
        struct pcie_audit_opts defaults;
        struct pcie_audit *a;
        int err = 0;

        if (!opts) {
                pcie_audit_opts_default(&defaults);
                opts = &defaults;
        }
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->policy = in_force;
        a->funcs = calloc(n ? n : 1, sizeof(*a->funcs));
        for (int p = 0; p < PCIE_POLICY_COUNT; p++)
                a->settings[p] = calloc(n ? n : 1, sizeof(struct pcie_setting));
        for (int p = 0; p < PCIE_POLICY_COUNT; p++)
                if (!a->settings[p])
                        err = -ENOMEM;
        if (!a->funcs || err) {
                pcie_audit_free(a);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n && !err; i++)
                err = audit_function(a, topo, opts, i);
        if (err) {
                pcie_audit_free(a);
                return err;
        }
        for (int p = 0; p < PCIE_POLICY_COUNT; p++)
                pcie_policy_simulate(topo, (enum pcie_policy)p, a->settings[p]);
        *out = a;
        return 0;
}

enum pcie_policy pcie_audit_policy(const struct pcie_audit *audit)
{
        return audit->policy;
}

size_t pcie_audit_finding_count(const struct pcie_audit *audit)
{
        return audit->finding_count;
}

const struct pcie_finding *pcie_audit_finding(const struct pcie_audit *audit, size_t i)
{
        return i < audit->finding_count ? &audit->findings[i] : NULL;
}

const struct pcie_func_audit *pcie_audit_func(const struct pcie_audit *audit, size_t func)
{
        return &audit->funcs[func];
}

const struct pcie_setting *pcie_audit_settings(const struct pcie_audit *audit,
                                               enum pcie_policy policy)
{
        return policy < PCIE_POLICY_COUNT ? audit->settings[policy] : NULL;
}

enum pcie_severity pcie_audit_worst(const struct pcie_audit *audit)
{
        return audit->worst;
}
