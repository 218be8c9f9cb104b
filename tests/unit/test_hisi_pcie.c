// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hisi_pcie.c - the hisi_pcie collector against the simulated
 * Kunpeng 930: discovery per kernel version, the window chooser, the
 * driver's rules in the simulated perf ops, values against the model's
 * ground truth (fitting and rotating plans, bursty phases), and error
 * injection. Time is a fake clock, so every check is exact and fast.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "hw_env.h"
#include "pcie_identity.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "sample.h"
#include "sim.h"
#include "support.h"

#define MACHINES     TOP_SRCDIR "/sim/machines"
#define TEST_MACHINE TOP_SRCDIR "/tests/fixtures/machines/pmu-test.json"

struct world {
        struct sim *sim;
        struct hw_env env;
        struct pcie_topo *topo;
        struct hisi_pcie_pmu *pmus;
        size_t count;
};

static void world_open(struct world *w, const char *machine, const char *kernel)
{
        struct sim_opts so = {.machine_dir = MACHINES, .kernel = kernel, .clock = fake_clock};
        struct pcie_topo_opts to = {0};
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        fake_now = 1000;
        int ret = sim_open(machine, &so, &w->sim, msg, sizeof(msg));

        if (ret)
                fail_msg("sim_open(%s): %s", machine, msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        assert_int_equal(pcie_topo_scan(&w->env, &to, &w->topo), 0);
        assert_int_equal(hisi_pcie_discover(&w->env, w->topo, &w->pmus, &w->count), 0);
}

static void world_close(struct world *w)
{
        hisi_pcie_free(w->pmus, w->count);
        pcie_topo_free(w->topo);
        sim_close(w->sim);
}

static double sim_time(void)
{
        return fake_now - 1000;
}

/* ---- pure parts ---- */

static void test_parse_name(void **state)
{
        unsigned int s, c;

        (void)state;
        assert_int_equal(hisi_pcie_parse_name("hisi_pcie0_core1", &s, &c), 0);
        assert_int_equal(s, 0);
        assert_int_equal(c, 1);
        assert_int_equal(hisi_pcie_parse_name("hisi_pcie12_core3", &s, &c), 0);
        assert_int_equal(s, 12);
        assert_int_equal(hisi_pcie_parse_name("hisi_pcie0_core1x", &s, &c), -EINVAL);
        assert_int_equal(hisi_pcie_parse_name("hisi_ptt0_1", &s, &c), -EINVAL);
        assert_int_equal(hisi_pcie_parse_name("hisi_pcie_core1", &s, &c), -EINVAL);
        assert_int_equal(hisi_pcie_pair_by_code(0x1005), HISI_TX_CPL_FLUX);
        assert_int_equal(hisi_pcie_pair_by_code(0x0804), HISI_RX_MRD_FLUX);
        assert_int_equal(hisi_pcie_pair_by_code(0x10804), HISI_PAIRS);
        assert_int_equal(hisi_pcie_port_bit(0x10), 0x1);
        assert_int_equal(hisi_pcie_port_bit(0x04), 0x100);
}

static void test_window_fits(void **state)
{
        struct hisi_pcie_plan_item items[5];
        size_t chosen[8], cursor = 0;

        (void)state;
        for (size_t i = 0; i < 5; i++)
                items[i].pair = (enum hisi_pcie_pair)i;
        for (int round = 0; round < 3; round++) {
                assert_int_equal(hisi_pcie_plan_window(items, 5, 8, true, &cursor, chosen), 5);
                for (size_t i = 0; i < 5; i++)
                        assert_int_equal(chosen[i], i);
        }
}

/* Every item gets the same number of turns over whole rotations, and no
 * window holds more than the slots (or, before 6.9, a pair twice). */
static void check_rotation(size_t n, size_t slots, bool strict, size_t pairs)
{
        struct hisi_pcie_plan_item items[64];
        size_t turns[64] = {0}, chosen[8], cursor = 0, rounds = 200;

        for (size_t i = 0; i < n; i++)
                items[i].pair = (enum hisi_pcie_pair)(i % pairs);
        for (size_t r = 0; r < rounds; r++) {
                bool seen[HISI_PAIRS] = {false};
                size_t k = hisi_pcie_plan_window(items, n, slots, strict, &cursor, chosen);

                assert_true(k >= 1 && k <= slots);
                for (size_t j = 0; j < k; j++) {
                        assert_true(chosen[j] < n);
                        if (j)
                                assert_true(chosen[j] > chosen[j - 1]);
                        if (!strict) {
                                assert_false(seen[items[chosen[j]].pair]);
                                seen[items[chosen[j]].pair] = true;
                        }
                        turns[chosen[j]]++;
                }
        }
        size_t lo = SIZE_MAX, hi = 0;

        for (size_t i = 0; i < n; i++) {
                lo = turns[i] < lo ? turns[i] : lo;
                hi = turns[i] > hi ? turns[i] : hi;
        }
        assert_true(lo > 0);
        assert_true(hi - lo <= 1 + hi / 10); /* fair to within a turn or two */
}

static void test_window_rotates(void **state)
{
        (void)state;
        check_rotation(26, 8, true, 9);
        check_rotation(9, 8, true, 9);
        check_rotation(40, 8, false, 9); /* before 6.9: one pair per window */
        check_rotation(12, 8, false, 3);
}

/* ---- discovery ---- */

static void check_discovery(const char *kernel)
{
        struct world w;
        const struct sim_machine *m;

        world_open(&w, "kunpeng930-2p", kernel);
        m = sim_machine(w.sim);
        assert_int_equal(w.count, m->core_count);
        for (size_t i = 0; i < w.count; i++) {
                const struct hisi_pcie_pmu *h = &w.pmus[i];
                const struct sim_core *core = NULL;

                for (size_t c = 0; c < m->core_count; c++)
                        if (m->cores[c].sicl == h->sicl && m->cores[c].id == h->core)
                                core = &m->cores[c];
                assert_non_null(core);
                assert_int_equal(h->cpu, core->cpu);
                assert_int_equal(h->port_count, core->port_count);
                for (size_t p = 0; p < core->port_count; p++) {
                        char bdf[32];

                        sim_device_bdf(&m->devices[core->ports[p]], bdf, sizeof(bdf));
                        assert_string_equal(h->ports[p].bdf, bdf);
                }
                assert_int_equal(h->has_range, !strcmp(kernel, "6.12"));
        }
        world_close(&w);
}

static void test_discovery_per_kernel(void **state)
{
        (void)state;
        check_discovery("6.12");
        check_discovery("6.9");
        check_discovery("6.2");
        check_discovery("5.17");
}

static void test_offered_pairs_per_kernel(void **state)
{
        struct world w;

        (void)state;
        world_open(&w, "kunpeng930-2p", "6.12");
        for (int p = 0; p < HISI_PAIRS; p++)
                assert_true(w.pmus[0].offered[p]);
        assert_true(w.pmus[0].strict_related);
        assert_true(w.pmus[0].has_len_mode);
        world_close(&w);

        world_open(&w, "kunpeng930-2p", "6.2");
        assert_true(w.pmus[0].offered[HISI_RX_MRD_FLUX]);
        assert_true(w.pmus[0].offered[HISI_TX_MRD_FLUX]);
        assert_false(w.pmus[0].offered[HISI_RX_MWR_FLUX]);
        assert_false(w.pmus[0].offered[HISI_TX_CPL_FLUX]);
        assert_false(w.pmus[0].strict_related);
        world_close(&w);

        /* 5.17 names 0x1005 rx_mrd_flux and 0x2004 tx_mrd_flux: by code
         * those are tx_cpl and rx_cpl, and are reported as such. */
        world_open(&w, "kunpeng930-2p", "5.17");
        assert_true(w.pmus[0].offered[HISI_TX_CPL_FLUX]);
        assert_true(w.pmus[0].renamed[HISI_TX_CPL_FLUX]);
        assert_string_equal(w.pmus[0].primary_event[HISI_TX_CPL_FLUX], "rx_mrd_flux");
        assert_true(w.pmus[0].offered[HISI_RX_CPL_FLUX]);
        assert_false(w.pmus[0].offered[HISI_RX_MRD_FLUX]);
        assert_false(w.pmus[0].has_len_mode);
        assert_non_null(strstr(log_text, "5.17"));
        world_close(&w);
}

static void assert_close(double got, double want, double rel, const char *what);

/* ---- the driver's rules, straight through the simulated ops ---- */

static int open_event(struct world *w, size_t core, uint64_t config, uint64_t config1,
                      uint64_t config2, int group_fd)
{
        struct perf_event_attr a = {.size = sizeof(a),
                                    .type = SIM_PMU_TYPE_BASE + (uint32_t)core,
                                    .config = config,
                                    .config1 = config1,
                                    .config2 = config2};

        return w->env.perf->open(w->env.perf->ctx, &a, -1, w->pmus[core].cpu, group_fd, 0);
}

static void test_driver_rules(void **state)
{
        struct world w;
        struct perf_event_attr a;
        const struct perf_ops *ops;
        uint16_t port;
        int fd, lead, fds[16];

        (void)state;
        world_open(&w, "kunpeng930-2p", "6.12");
        ops = w.env.perf;
        port = w.pmus[0].ports[0].bit;

        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = 4; /* a type that is not a simulated hisi_pcie PMU */
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_PMU_TYPE_BASE;
        a.config = 0x0104;
        a.config2 = port;
        a.sample_period = 1000;
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -EOPNOTSUPP);
        a.sample_period = 0;
        assert_int_equal(ops->open(ops->ctx, &a, 0, -1, -1, 0), -EOPNOTSUPP); /* task */
        assert_int_equal(ops->open(ops->ctx, &a, -1, -1, -1, 0), -EINVAL);    /* no cpu */
        a.exclude_kernel = 1;
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -EINVAL);
        /* Filter lengths above 10. */
        assert_int_equal(open_event(&w, 0, 0x0104, 11, port, -1), -EINVAL);
        assert_int_equal(open_event(&w, 0, 0x0104, 11 << 5, port, -1), -EINVAL);
        /* v6.9 on: a requester that is not below this core's ports. */
        assert_int_equal(open_event(&w, 0, 0x0104, 0, (uint64_t)0xfe00 << 16, -1), -EINVAL);
        assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 0);

        /* A pair with equal filters shares a slot: 8 pairs fit one group,
         * a ninth distinct slot does not. */
        lead = open_event(&w, 0, 0x0104, 1, port, -1);
        assert_true(lead >= 0);
        assert_true(open_event(&w, 0, 0x10104, 1, port, lead) >= 0);
        for (uint64_t t = 2; t <= 8; t++) {
                assert_true(open_event(&w, 0, 0x0104, t, port, lead) >= 0);
                assert_true(open_event(&w, 0, 0x10104, t, port, lead) >= 0);
        }
        assert_int_equal(open_event(&w, 0, 0x0104, 9, port, lead), -EINVAL);
        /* Another core's event cannot join the group. */
        assert_int_equal(open_event(&w, 1, 0x0104, 0, w.pmus[1].ports[0].bit, lead), -EINVAL);
        assert_int_equal(ops->close(ops->ctx, lead), 0);
        world_close(&w);

        /* Before 6.9 the BDF was not checked. */
        world_open(&w, "kunpeng930-2p", "6.2");
        fd = open_event(&w, 0, 0x0804, 0, (uint64_t)0xfe00 << 16, -1);
        assert_true(fd >= 0);
        w.env.perf->close(w.env.perf->ctx, fd);
        world_close(&w);

        /* Nine one-slot groups enabled at once: perf time-shares them, each
         * runs 8/9 of the time; with eight, all run all the time. */
        world_open(&w, "kunpeng930-2p", "6.12");
        ops = w.env.perf;
        port = w.pmus[0].ports[0].bit;
        for (int i = 0; i < 9; i++) {
                a = (struct perf_event_attr){.size = sizeof(a),
                                             .type = SIM_PMU_TYPE_BASE,
                                             .config = 0x0104,
                                             .config1 = (uint64_t)i + 1,
                                             .config2 = port,
                                             .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
                                                            PERF_FORMAT_TOTAL_TIME_RUNNING};
                fds[i] = ops->open(ops->ctx, &a, -1, w.pmus[0].cpu, -1, 0);
                assert_true(fds[i] >= 0);
        }
        fake_now += 3;
        for (int i = 0; i < 9; i++) {
                uint64_t buf[3]; /* value, enabled, running */

                assert_int_equal(ops->read(ops->ctx, fds[i], buf, sizeof(buf)),
                                 (ssize_t)sizeof(buf));
                assert_close((double)buf[1], 3e9, 1e-6, "time_enabled");
                assert_close((double)buf[2], 3e9 * 8 / 9, 1e-6, "time_running, 9 groups");
        }
        ops->close(ops->ctx, fds[8]);
        fake_now += 1;
        for (int i = 0; i < 8; i++) {
                uint64_t buf[3];

                assert_int_equal(ops->read(ops->ctx, fds[i], buf, sizeof(buf)),
                                 (ssize_t)sizeof(buf));
                assert_close((double)buf[2], 3e9 * 8 / 9 + 1e9, 1e-6, "time_running, 8 groups");
                ops->close(ops->ctx, fds[i]);
        }
        assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 0);
        world_close(&w);
}

/* ---- values against ground truth ---- */

/* The sample of @metric with collectd's plugin_instance @instance and
 * type_instance @type_instance (by the spec's rules: pcie_identity.h). */
static const struct pcie_sample *find_sample(const struct sample_set *set, const char *metric,
                                             const char *instance, const char *type_instance)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                struct pcie_identity id;

                if (!strcmp(s->metric, metric) &&
                    !pcie_identity(s, set->samples, set->count, &id) &&
                    !strcmp(id.plugin_instance, instance) &&
                    !strcmp(id.type_instance, type_instance))
                        return s;
        }
        return NULL;
}

static void assert_close(double got, double want, double rel, const char *what)
{
        if (fabs(got - want) > rel * fabs(want) + 1e-9)
                fail_msg("%s: got %.6g, truth %.6g (%.3f%% off)", what, got, want,
                         want ? 100 * (got - want) / want : 0.0);
}

static const enum sim_tlp_class class_of[HISI_PAIRS] = {
    [HISI_RX_MWR_LATENCY] = SIM_RX_MWR, [HISI_RX_MRD_LATENCY] = SIM_RX_MRD,
    [HISI_TX_MRD_LATENCY] = SIM_TX_MRD, [HISI_RX_MWR_FLUX] = SIM_RX_MWR,
    [HISI_RX_MRD_FLUX] = SIM_RX_MRD,    [HISI_RX_CPL_FLUX] = SIM_RX_CPL,
    [HISI_TX_MWR_FLUX] = SIM_TX_MWR,    [HISI_TX_MRD_FLUX] = SIM_TX_MRD,
    [HISI_TX_CPL_FLUX] = SIM_TX_CPL,
};

/* Compares every port bandwidth and latency sample of @set with the model
 * over [t0, t1] (all workloads there are constant or the window is known). */
static size_t check_ports(struct world *w, size_t pmu, const struct sample_set *set, double t0,
                          double t1)
{
        const struct sim_machine *m = sim_machine(w->sim);
        size_t checked = 0;

        for (size_t p = 0; p < w->pmus[pmu].port_count; p++) {
                const char *bdf = w->pmus[pmu].ports[p].bdf;
                size_t dev = SIM_NONE;
                struct pci_addr a;

                assert_int_equal(pci_addr_parse(bdf, &a), 0);
                dev = sim_machine_find(m, (uint16_t)a.domain, a.bus, a.dev, a.func);
                assert_true(dev != SIM_NONE);
                for (int pair = 0; pair < HISI_PAIRS; pair++) {
                        const struct hisi_pcie_pair_info *pi = hisi_pcie_pair_info(pair);
                        struct sim_truth t;
                        const struct pcie_sample *s;
                        char what[128];

                        sim_truth_port(sim_pmu(w->sim), dev, class_of[pair], t0, t1, &t);
                        snprintf(what, sizeof(what), "%s %s %s", w->pmus[pmu].name, bdf, pi->name);
                        if (pi->bandwidth) {
                                s = find_sample(set, "pcie_port_bandwidth_bytes_per_second", bdf,
                                                pi->name);
                                if (!s)
                                        continue;
                                assert_close(s->gauge,
                                             (t.payload_bytes + t.header_bytes) / (t1 - t0), 0.01,
                                             what);
                        } else {
                                s = find_sample(set, "pcie_port_latency_seconds", bdf, pi->name);
                                if (!s)
                                        continue;
                                assert_true(t.tlps > 0);
                                assert_close(s->gauge, t.latency_ns / t.tlps / 1e9, 0.01, what);
                        }
                        checked++;
                }
        }
        return checked;
}

/* Runs every core for @ticks one-second intervals; returns the last sets. */
static void run_cores(struct world *w, const struct hisi_pcie_opts *opts, int ticks,
                      struct hisi_pcie_core **cores, struct sample_set *sets)
{
        for (size_t i = 0; i < w->count; i++) {
                assert_int_equal(hisi_pcie_core_new(&w->env, &w->pmus[i], w->topo, opts, &cores[i]),
                                 0);
                assert_int_equal(hisi_pcie_core_start(cores[i], fake_now), 0);
        }
        for (int t = 0; t < ticks; t++) {
                fake_now += 1;
                for (size_t i = 0; i < w->count; i++) {
                        sample_set_clear(&sets[i]);
                        assert_int_equal(hisi_pcie_core_tick(cores[i], fake_now, &sets[i]), 0);
                }
        }
}

static void stop_cores(struct world *w, struct hisi_pcie_core **cores, struct sample_set *sets)
{
        for (size_t i = 0; i < w->count; i++) {
                hisi_pcie_core_free(cores[i]);
                sample_set_free(&sets[i]);
        }
        assert_int_equal(sim_pmu_open_count(sim_pmu(w->sim)), 0);
}

/* No two samples of one interval may share a collectd identity or a
 * Prometheus series (collectd would drop one; Prometheus would reject it). */
static void assert_unique(const struct sample_set *set)
{
        struct pcie_identity *id = calloc(set->count ? set->count : 1, sizeof(*id));

        assert_non_null(id);
        for (size_t i = 0; i < set->count; i++)
                assert_int_equal(pcie_identity(&set->samples[i], set->samples, set->count, &id[i]),
                                 0);
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *a = &set->samples[i];

                for (size_t j = i + 1; j < set->count; j++) {
                        const struct pcie_sample *b = &set->samples[j];
                        bool same_labels = a->label_count == b->label_count;

                        if (!strcmp(a->family->collectd_type, b->family->collectd_type) &&
                            !strcmp(id[i].plugin_instance, id[j].plugin_instance) &&
                            !strcmp(id[i].type_instance, id[j].type_instance))
                                fail_msg("collectd identity twice: %s/%s/%s", id[i].plugin_instance,
                                         a->family->collectd_type, id[i].type_instance);
                        for (size_t l = 0; same_labels && l < a->label_count; l++)
                                same_labels = !strcmp(a->labels[l].name, b->labels[l].name) &&
                                              !strcmp(a->labels[l].value, b->labels[l].value);
                        if (same_labels && !strcmp(a->metric, b->metric))
                                fail_msg("series twice: %s (%s)", a->metric, id[i].type_instance);
                }
        }
        free(id);
}

/* Only the port pairs: fits in 8 slots per one-port core, no rotation. */
static void test_truth_fitting(void **state)
{
        struct hisi_pcie_core *cores[SIM_MAX_CORES];
        struct sample_set sets[SIM_MAX_CORES] = {0};
        struct hisi_pcie_opts opts;
        struct world w;
        size_t checked = 0;

        (void)state;
        world_open(&w, TEST_MACHINE, NULL);
        hisi_pcie_opts_default(&opts);
        opts.tlp_length = false;
        opts.endpoints = false;
        opts.latency = false;
        run_cores(&w, &opts, 3, cores, sets);
        for (size_t i = 0; i < w.count; i++) {
                const struct pcie_sample *cov = NULL;

                checked += check_ports(&w, i, &sets[i], sim_time() - 1, sim_time());
                /* Nothing rotated: every measurement counted all the time. */
                for (size_t k = 0; k < sets[i].count; k++)
                        if (!strcmp(sets[i].samples[k].metric, "pcie_pmu_coverage_ratio"))
                                cov = &sets[i].samples[k];
                assert_non_null(cov);
                assert_close(cov->gauge, 1.0, 1e-9, "coverage");
        }
        assert_true(checked >= 6);
        stop_cores(&w, cores, sets);
        world_close(&w);
}

/* Everything at once: rotation across intervals; each estimate still
 * matches (constant workloads), and coverage says how much was counted. */
static void test_truth_rotating(void **state)
{
        struct hisi_pcie_core *cores[SIM_MAX_CORES];
        struct sample_set sets[SIM_MAX_CORES] = {0};
        struct hisi_pcie_opts opts;
        struct world w;
        size_t checked = 0, rotating = 0;

        (void)state;
        world_open(&w, TEST_MACHINE, NULL);
        hisi_pcie_opts_default(&opts);
        run_cores(&w, &opts, 12, cores, sets);
        for (size_t i = 0; i < w.count; i++) {
                size_t planned = hisi_pcie_core_measurements(cores[i]);

                assert_unique(&sets[i]);
                if (w.pmus[i].core == 2)
                        continue; /* the bursty core: covered by test_truth_phases */
                checked += check_ports(&w, i, &sets[i], 0, 1);
                if (planned <= 8)
                        continue;
                rotating++;
                for (size_t k = 0; k < sets[i].count; k++) {
                        const struct pcie_sample *s = &sets[i].samples[k];

                        if (!strcmp(s->metric, "pcie_pmu_counting_seconds_total")) {
                                /* Whole windows only: never multiplexed by perf. */
                                assert_close(s->gauge, round(s->gauge), 1e-6, "whole windows");
                                assert_true(s->gauge >= 1);
                        }
                        if (!strcmp(s->metric, "pcie_pmu_coverage_ratio"))
                                assert_true(s->gauge > 0 && s->gauge < 1);
                }
        }
        assert_true(rotating > 0);
        assert_true(checked >= 9);
        stop_cores(&w, cores, sets);
        world_close(&w);
}

/* Bursty phases: each interval's estimate follows the workload. */
static void test_truth_phases(void **state)
{
        struct hisi_pcie_core *cores[SIM_MAX_CORES];
        struct sample_set sets[SIM_MAX_CORES] = {0};
        struct hisi_pcie_opts opts;
        struct world w;
        size_t checked = 0;

        (void)state;
        world_open(&w, TEST_MACHINE, NULL);
        hisi_pcie_opts_default(&opts);
        opts.tlp_length = false;
        opts.endpoints = false;
        opts.latency = false;
        for (size_t i = 0; i < w.count; i++) {
                assert_int_equal(hisi_pcie_core_new(&w.env, &w.pmus[i], w.topo, &opts, &cores[i]),
                                 0);
                assert_int_equal(hisi_pcie_core_start(cores[i], fake_now), 0);
        }
        for (int t = 0; t < 7; t++) {
                fake_now += 0.5 + 0.25 * (t % 3); /* uneven intervals on purpose */
                for (size_t i = 0; i < w.count; i++) {
                        double before = sim_time() - (0.5 + 0.25 * (t % 3));

                        sample_set_clear(&sets[i]);
                        assert_int_equal(hisi_pcie_core_tick(cores[i], fake_now, &sets[i]), 0);
                        checked += check_ports(&w, i, &sets[i], before, sim_time());
                }
        }
        assert_true(checked > 0);
        stop_cores(&w, cores, sets);
        world_close(&w);
}

/* Latency pairs and the TLP length buckets against the model. */
static void test_truth_latency_and_length(void **state)
{
        struct hisi_pcie_core *cores[SIM_MAX_CORES];
        struct sample_set sets[SIM_MAX_CORES] = {0};
        struct hisi_pcie_opts opts;
        struct world w;
        size_t checked = 0, buckets = 0;

        (void)state;
        world_open(&w, TEST_MACHINE, NULL);
        hisi_pcie_opts_default(&opts);
        opts.port_bandwidth = false;
        opts.endpoints = false;
        run_cores(&w, &opts, 8, cores, sets);
        for (size_t i = 0; i < w.count; i++) {
                if (w.pmus[i].core == 2)
                        continue; /* the bursty core: covered by test_truth_phases */
                checked += check_ports(&w, i, &sets[i], 0, 1);
                for (size_t k = 0; k < sets[i].count; k++) {
                        const struct pcie_sample *s = &sets[i].samples[k];

                        char bigger[64];
                        const struct pcie_sample *b;

                        if (strcmp(s->metric, "pcie_port_tlp_length_bytes_per_second"))
                                continue;
                        buckets++;
                        /* Cumulative buckets: TLPs shorter than 2N bytes
                         * include those shorter than N. */
                        const char *port = pcie_sample_label(s, "port");
                        unsigned int below =
                            (unsigned int)atoi(pcie_sample_label(s, "shorter_than_bytes"));

                        snprintf(bigger, sizeof(bigger), "rx_mwr-lt%u", 2 * below);
                        b = find_sample(&sets[i], s->metric, port, bigger);
                        if (b)
                                assert_true(b->gauge >= s->gauge);
                        /* nvme0 writes 64-byte TLPs (10% of its requests):
                         * the bucket below 128 bytes holds them. */
                        if (!strcmp(port, "0000:00:00.0") && below == 128)
                                assert_true(s->gauge > 0);
                        if (!strcmp(port, "0000:00:00.0") && below == 64)
                                assert_true(s->gauge == 0);
                }
        }
        assert_true(checked >= 3);
        assert_true(buckets >= 4);
        stop_cores(&w, cores, sets);
        world_close(&w);
}

/* ---- errors ---- */

static void test_injected_errors(void **state)
{
        static const struct {
                int err;
                const char *advice;
        } cases[] = {
            {EACCES, "perf_event_paranoid"},
            {EBUSY, "busy"},
            {EMFILE, "LimitNOFILE"},
            {EINVAL, "filters"},
            {ENOENT, "gone"},
            {EOPNOTSUPP, "support"},
        };
        (void)state;

        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                struct hisi_pcie_core *core0, *core1;
                struct hisi_pcie_opts opts;
                struct world w;

                world_open(&w, "kunpeng930-2p", NULL);
                hisi_pcie_opts_default(&opts);
                /* Fail the third open of core 0: some groups are open then. */
                sim_pmu_inject(sim_pmu(w.sim), 0, 0, 0);
                assert_int_equal(hisi_pcie_core_new(&w.env, &w.pmus[0], w.topo, &opts, &core0), 0);
                assert_int_equal(hisi_pcie_core_new(&w.env, &w.pmus[1], w.topo, &opts, &core1), 0);
                sim_pmu_inject(sim_pmu(w.sim), 0, cases[c].err, -1);
                assert_int_equal(hisi_pcie_core_start(core0, fake_now), -cases[c].err);
                assert_non_null(strstr(log_text, cases[c].advice));
                assert_non_null(strstr(log_text, w.pmus[0].name));
                assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 0);
                /* The other core is not affected. */
                assert_int_equal(hisi_pcie_core_start(core1, fake_now), 0);
                assert_true(sim_pmu_open_count(sim_pmu(w.sim)) > 0);
                /* Once the fault is gone, core 0 starts (EBUSY retry). */
                sim_pmu_inject(sim_pmu(w.sim), 0, 0, 0);
                assert_int_equal(hisi_pcie_core_start(core0, fake_now), 0);
                hisi_pcie_core_free(core0);
                hisi_pcie_core_free(core1);
                assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 0);
                world_close(&w);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_name),
            cmocka_unit_test(test_window_fits),
            cmocka_unit_test(test_window_rotates),
            cmocka_unit_test(test_discovery_per_kernel),
            cmocka_unit_test(test_offered_pairs_per_kernel),
            cmocka_unit_test(test_driver_rules),
            cmocka_unit_test(test_truth_fitting),
            cmocka_unit_test(test_truth_rotating),
            cmocka_unit_test(test_truth_phases),
            cmocka_unit_test(test_truth_latency_and_length),
            cmocka_unit_test(test_injected_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
