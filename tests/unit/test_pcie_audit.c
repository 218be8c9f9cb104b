// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pcie_audit.c - MPS/MRRS findings and the five kernel policies.
 *
 * Each scenario is a synthetic topology (fixture_cfg.h) with, for every
 * function, the MPS/MRRS the kernel would leave under each policy, worked
 * out by hand from drivers/pci/probe.c (pci_configure_mps,
 * pcie_bus_configure_settings) as summarised in kernel-facts §6.3, and the
 * exact set of findings expected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture_cfg.h"
#include "pcie_audit.h"

#define EP    PCI_EXP_TYPE_ENDPOINT
#define RP    PCI_EXP_TYPE_ROOT_PORT
#define USP   PCI_EXP_TYPE_UPSTREAM
#define DSP   PCI_EXP_TYPE_DOWNSTREAM
#define RCIEP PCI_EXP_TYPE_RC_END

/* Expected setting per policy, in enum pcie_policy order:
 * tune_off, default, safe, performance, peer2peer. */
struct expect_func {
        const char *bdf;
        unsigned int mps[PCIE_POLICY_COUNT];
        unsigned int mrrs[PCIE_POLICY_COUNT];
        bool set_failed[PCIE_POLICY_COUNT];
        unsigned int best_mps;
};

struct expect_finding {
        const char *bdf;
        enum pcie_finding_kind kind;
        enum pcie_severity severity;
        const char *other; /* NULL: none expected / not checked */
};

struct scenario {
        const char *name;
        enum pcie_policy in_force;
        struct fx_dev devs[8];
        size_t dev_count;
        struct expect_func funcs[8];
        size_t func_count;
        struct expect_finding findings[8];
        size_t finding_count;
        enum pcie_severity worst;
};

static const struct scenario scenarios[] = {
    {
        .name = "switch with an MPS mismatch behind it and a hot-plug slot",
        .in_force = PCIE_POLICY_DEFAULT,
        .devs =
            {
                {"0000:00:01.0", RP, 512, 256, 512, 1, 4, false},
                {"0000:01:00.0", USP, 512, 256, 512, 2, 4, false},
                {"0000:02:00.0", DSP, 512, 256, 512, 3, 3, false},
                {"0000:02:01.0", DSP, 512, 256, 512, 4, 4, true},
                {"0000:03:00.0", EP, 512, 512, 512, 0, 0, false},
                {"0000:04:00.0", EP, 256, 128, 128, 0, 0, false},
            },
        .dev_count = 6,
        .funcs =
            {
                {"0000:00:01.0", {256, 256, 128, 512, 128}, {512, 512, 512, 512, 512}, {0}, 512},
                {"0000:01:00.0", {256, 256, 128, 512, 128}, {512, 512, 512, 512, 512}, {0}, 512},
                {"0000:02:00.0", {256, 256, 128, 512, 128}, {512, 512, 512, 512, 512}, {0}, 512},
                {"0000:02:01.0", {256, 256, 128, 512, 128}, {512, 512, 512, 512, 512}, {0}, 512},
                {"0000:03:00.0", {512, 256, 128, 512, 128}, {512, 512, 512, 512, 512}, {0}, 512},
                {"0000:04:00.0", {128, 256, 128, 256, 128}, {128, 128, 128, 256, 128}, {0}, 256},
            },
        .func_count = 6,
        .findings =
            {
                {"0000:03:00.0", PCIE_FINDING_MPS_ABOVE_PARTNER, PCIE_SEV_CRITICAL, "0000:02:00.0"},
                {"0000:02:01.0", PCIE_FINDING_MPS_ABOVE_PARTNER, PCIE_SEV_CRITICAL, "0000:04:00.0"},
                {"0000:04:00.0", PCIE_FINDING_MPS_BELOW_PATH, PCIE_SEV_WARNING, "0000:00:01.0"},
                {"0000:04:00.0", PCIE_FINDING_MRRS_SMALL, PCIE_SEV_WARNING, NULL},
            },
        .finding_count = 4,
        .worst = PCIE_SEV_CRITICAL,
    },
    {
        .name = "RC-integrated endpoint and a two-function device with different MPSS",
        .in_force = PCIE_POLICY_DEFAULT,
        .devs =
            {
                {"0000:00:05.0", RCIEP, 256, 128, 512, 0, 0, false},
                {"0000:00:07.0", RP, 256, 256, 512, 6, 6, false},
                {"0000:06:00.0", EP, 256, 256, 512, 0, 0, false},
                {"0000:06:00.1", EP, 128, 128, 512, 0, 0, false},
            },
        .dev_count = 4,
        .funcs =
            {
                /* Step A gives RC-integrated endpoints their MPSS in every mode,
                 * TUNE_OFF included, and 128 under PEER2PEER. */
                {"0000:00:05.0", {256, 256, 256, 256, 128}, {512, 512, 512, 512, 512}, {0}, 256},
                /* DEFAULT lowers the Root Port to function 1's MPSS, leaving
                 * function 0 at 256 above it: the kernel's own mismatch. */
                {"0000:00:07.0", {256, 128, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:06:00.0", {256, 256, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:06:00.1", {128, 128, 128, 128, 128}, {512, 512, 512, 128, 512}, {0}, 128},
            },
        .func_count = 4,
        .findings =
            {
                {"0000:00:07.0", PCIE_FINDING_MPS_ABOVE_PARTNER, PCIE_SEV_CRITICAL, "0000:06:00.1"},
                {"0000:00:05.0", PCIE_FINDING_MPS_BELOW_PATH, PCIE_SEV_WARNING, NULL},
            },
        .finding_count = 2,
        .worst = PCIE_SEV_CRITICAL,
    },
    {
        .name = "MPS above MPSS, MRRS above MPS under pcie_bus_perf",
        .in_force = PCIE_POLICY_PERFORMANCE,
        .devs =
            {
                {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false},
                {"0000:01:00.0", EP, 128, 256, 1024, 0, 0, false},
            },
        .dev_count = 2,
        .funcs =
            {
                {"0000:00:01.0", {256, 256, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:01:00.0",
                 {256, 256, 128, 128, 128},
                 {1024, 1024, 1024, 128, 1024},
                 {0},
                 128},
            },
        .func_count = 2,
        .findings =
            {
                {"0000:01:00.0", PCIE_FINDING_MPS_ABOVE_MPSS, PCIE_SEV_CRITICAL, NULL},
                {"0000:01:00.0", PCIE_FINDING_MRRS_ABOVE_MPS_PERF, PCIE_SEV_INFO, NULL},
            },
        .finding_count = 2,
        .worst = PCIE_SEV_CRITICAL,
    },
    {
        .name = "DEFAULT cannot raise a device behind a switch above its MPSS",
        .in_force = PCIE_POLICY_DEFAULT,
        .devs =
            {
                {"0000:00:01.0", RP, 256, 256, 512, 1, 3, false},
                {"0000:01:00.0", USP, 256, 256, 512, 2, 3, false},
                {"0000:02:00.0", DSP, 256, 256, 512, 3, 3, false},
                {"0000:03:00.0", EP, 128, 128, 128, 0, 0, false},
            },
        .dev_count = 4,
        .funcs =
            {
                {"0000:00:01.0", {256, 256, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:01:00.0", {256, 256, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:02:00.0", {256, 256, 128, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                /* Not a Root Port above it, so DEFAULT tries 256 and fails. */
                {"0000:03:00.0",
                 {128, 128, 128, 128, 128},
                 {128, 128, 128, 128, 128},
                 {false, true, false, false, false},
                 128},
            },
        .func_count = 4,
        .findings =
            {
                {"0000:02:00.0", PCIE_FINDING_MPS_ABOVE_PARTNER, PCIE_SEV_CRITICAL, "0000:03:00.0"},
                {"0000:03:00.0", PCIE_FINDING_MRRS_SMALL, PCIE_SEV_WARNING, NULL},
            },
        .finding_count = 2,
        .worst = PCIE_SEV_CRITICAL,
    },
    {
        .name = "healthy: everything at the best setting",
        .in_force = PCIE_POLICY_SAFE,
        .devs =
            {
                {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false},
                {"0000:01:00.0", EP, 256, 256, 512, 0, 0, false},
            },
        .dev_count = 2,
        .funcs =
            {
                {"0000:00:01.0", {256, 256, 256, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
                {"0000:01:00.0", {256, 256, 256, 256, 128}, {512, 512, 512, 256, 512}, {0}, 256},
            },
        .func_count = 2,
        .finding_count = 0,
        .worst = PCIE_SEV_OK,
    },
};

static void check_settings(const struct scenario *sc, const struct pcie_topo *topo,
                           const struct pcie_audit *audit)
{
        for (size_t i = 0; i < sc->func_count; i++) {
                const struct expect_func *e = &sc->funcs[i];
                size_t idx = fx_index(topo, e->bdf);

                assert_int_not_equal(idx, PCIE_TOPO_NONE);
                assert_int_equal(pcie_audit_func(audit, idx)->best_mps_bytes, e->best_mps);
                for (int p = 0; p < PCIE_POLICY_COUNT; p++) {
                        const struct pcie_setting *s = &pcie_audit_settings(audit, p)[idx];

                        if (s->mps_bytes != e->mps[p] || s->mrrs_bytes != e->mrrs[p] ||
                            s->set_failed != e->set_failed[p])
                                fail_msg("%s: %s under %s: got MPS %u MRRS %u%s, expected MPS %u "
                                         "MRRS %u%s",
                                         sc->name, e->bdf, pcie_policy_name(p), s->mps_bytes,
                                         s->mrrs_bytes, s->set_failed ? " (set failed)" : "",
                                         e->mps[p], e->mrrs[p],
                                         e->set_failed[p] ? " (set failed)" : "");
                }
        }
}

static void check_findings(const struct scenario *sc, const struct pcie_topo *topo,
                           const struct pcie_audit *audit)
{
        size_t n = pcie_audit_finding_count(audit);

        for (size_t i = 0; i < n; i++) {
                const struct pcie_finding *f = pcie_audit_finding(audit, i);
                bool expected = false;

                for (size_t j = 0; j < sc->finding_count && !expected; j++) {
                        const struct expect_finding *e = &sc->findings[j];

                        expected = f->func == fx_index(topo, e->bdf) && f->kind == e->kind &&
                                   f->severity == e->severity &&
                                   (!e->other || f->other == fx_index(topo, e->other));
                }
                if (!expected)
                        fail_msg("%s: unexpected finding on %s: %s %s: %s", sc->name,
                                 pcie_topo_get(topo, f->func)->bdf, pcie_severity_name(f->severity),
                                 pcie_finding_kind_name(f->kind), f->message);
                assert_true(strlen(f->message) > 10);
        }
        if (n != sc->finding_count)
                fail_msg("%s: %zu findings, expected %zu", sc->name, n, sc->finding_count);
        assert_int_equal(pcie_audit_worst(audit), sc->worst);
}

static void test_scenarios(void **state)
{
        (void)state;
        for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
                const struct scenario *sc = &scenarios[s];
                struct pcie_topo *topo = fx_topo(sc->devs, sc->dev_count);
                struct pcie_audit *audit = NULL;

                assert_non_null(topo);
                assert_int_equal(pcie_audit_run(topo, sc->in_force, NULL, &audit), 0);
                assert_int_equal(pcie_audit_policy(audit), sc->in_force);
                check_settings(sc, topo, audit);
                check_findings(sc, topo, audit);
                pcie_audit_free(audit);
                pcie_topo_free(topo);
        }
}

/* The hot-plug rule of SAFE applies below the Root Port only. */
static void test_safe_hotplug_root_port_exempt(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:00:01.0", RP, 512, 256, 512, 1, 1, true},
            {"0000:01:00.0", EP, 512, 256, 512, 0, 0, false},
        };
        struct pcie_topo *topo = fx_topo(devs, 2);
        struct pcie_setting s[2];

        (void)state;
        assert_non_null(topo);
        pcie_policy_simulate(topo, PCIE_POLICY_SAFE, s);
        assert_int_equal(s[0].mps_bytes, 512);
        assert_int_equal(s[1].mps_bytes, 512);
        pcie_topo_free(topo);
}

/* Conventional PCI functions are left alone by every policy and audit. */
static void test_non_pcie_untouched(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:00:1e.0", FX_NO_PCIE, 0, 0, 0, 5, 5, false},
            {"0000:05:00.0", FX_NO_PCIE, 0, 0, 0, 0, 0, false},
        };
        struct pcie_topo *topo = fx_topo(devs, 2);
        struct pcie_audit *audit;

        (void)state;
        assert_non_null(topo);
        assert_int_equal(pcie_audit_run(topo, PCIE_POLICY_PERFORMANCE, NULL, &audit), 0);
        assert_int_equal(pcie_audit_finding_count(audit), 0);
        for (int p = 0; p < PCIE_POLICY_COUNT; p++)
                assert_int_equal(pcie_audit_settings(audit, p)[1].mps_bytes, 0);
        assert_false(pcie_audit_func(audit, 1)->audited);
        pcie_audit_free(audit);
        pcie_topo_free(topo);
}

/* The MRRS threshold and the "high bandwidth" cut-off are options. */
static void test_mrrs_options(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false, 3, 1, 3, 1},
            {"0000:01:00.0", EP, 256, 256, 256, 0, 0, false, 3, 1, 3, 1},
        };
        struct pcie_topo *topo = fx_topo(devs, 2);
        struct pcie_audit_opts opts;
        struct pcie_audit *audit;

        (void)state;
        assert_non_null(topo);
        pcie_audit_opts_default(&opts);
        /* 8 GT/s x1 is below the default cut-off: no finding. */
        assert_int_equal(pcie_audit_run(topo, PCIE_POLICY_DEFAULT, &opts, &audit), 0);
        assert_int_equal(pcie_audit_finding_count(audit), 0);
        pcie_audit_free(audit);
        opts.high_bandwidth_bytes = 500000000;
        assert_int_equal(pcie_audit_run(topo, PCIE_POLICY_DEFAULT, &opts, &audit), 0);
        assert_int_equal(pcie_audit_finding_count(audit), 1);
        assert_int_equal(pcie_audit_finding(audit, 0)->kind, PCIE_FINDING_MRRS_SMALL);
        pcie_audit_free(audit);
        opts.min_mrrs_bytes = 256;
        assert_int_equal(pcie_audit_run(topo, PCIE_POLICY_DEFAULT, &opts, &audit), 0);
        assert_int_equal(pcie_audit_finding_count(audit), 0);
        pcie_audit_free(audit);
        pcie_topo_free(topo);
}

static void test_cmdline(void **state)
{
        static const struct {
                const char *cmdline;
                int found;
                enum pcie_policy policy;
        } rows[] = {
            {"", 0, PCIE_POLICY_DEFAULT},
            {"BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet", 0, PCIE_POLICY_DEFAULT},
            {"quiet pci=pcie_bus_perf\n", 1, PCIE_POLICY_PERFORMANCE},
            {"pci=noaer,pcie_bus_safe", 1, PCIE_POLICY_SAFE},
            {"pci=pcie_bus_safe pci=pcie_bus_peer2peer", 1, PCIE_POLICY_PEER2PEER},
            {"pci=pcie_bus_peer2peer,pcie_bus_tune_off", 1, PCIE_POLICY_TUNE_OFF},
            {"pci=noaer", 0, PCIE_POLICY_DEFAULT},
            {"pci=pcie_bus_performance", 0, PCIE_POLICY_DEFAULT}, /* not a kernel option */
            {"xpci=pcie_bus_safe", 0, PCIE_POLICY_DEFAULT},
            {"quiet -- pci=pcie_bus_safe", 0, PCIE_POLICY_DEFAULT}, /* init's argument */
            {"pci=,,pcie_bus_perf,", 1, PCIE_POLICY_PERFORMANCE},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                enum pcie_policy p = PCIE_POLICY_COUNT;
                int found = pcie_policy_from_cmdline(rows[i].cmdline, &p);

                if (found != rows[i].found || p != rows[i].policy)
                        fail_msg("cmdline \"%s\": got %d/%s, expected %d/%s", rows[i].cmdline,
                                 found, pcie_policy_name(p), rows[i].found,
                                 pcie_policy_name(rows[i].policy));
        }
}

static void test_names(void **state)
{
        enum pcie_policy p;

        (void)state;
        for (int i = 0; i < PCIE_POLICY_COUNT; i++) {
                assert_int_equal(pcie_policy_parse(pcie_policy_name(i), &p), 0);
                assert_int_equal(p, i);
        }
        assert_int_equal(pcie_policy_parse("perf", &p), -EINVAL);
        assert_string_equal(pcie_policy_param(PCIE_POLICY_PERFORMANCE), "pci=pcie_bus_perf");
        assert_string_equal(pcie_policy_param(PCIE_POLICY_DEFAULT), "");
        for (int k = 0; k < PCIE_FINDING_KIND_COUNT; k++)
                assert_string_not_equal(pcie_finding_kind_name(k), "unknown");
        assert_string_equal(pcie_severity_name(PCIE_SEV_CRITICAL), "critical");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scenarios),
            cmocka_unit_test(test_safe_hotplug_root_port_exempt),
            cmocka_unit_test(test_non_pcie_untouched),
            cmocka_unit_test(test_mrrs_options),
            cmocka_unit_test(test_cmdline),
            cmocka_unit_test(test_names),
        };

        return cmocka_run_group_tests_name("pcie_audit", tests, NULL, NULL);
}
