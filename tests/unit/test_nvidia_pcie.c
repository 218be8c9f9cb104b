// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_nvidia_pcie.c - the NVIDIA Grace PCIe PMU collector against the
 * simulated grace-gh200 and grace-remap: per Root Port bandwidth, requests
 * and read latency vs the model's ground truth while the one-port window
 * rotates, on a kernel before 6.14 (the root_port filter must be given)
 * and after (0 means every port), the default and a configured bit map,
 * and the small pure helpers. Time is a fake clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw_env.h"
#include "nvidia_pcie.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "perf_pmu.h"
#include "sample.h"
#include "sim.h"
#include "sim_nvidia_pcie.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"
#define FIXTURES TOP_SRCDIR "/tests/fixtures/machines"

struct world {
        struct sim *sim;
        struct hw_env env;
        struct pcie_topo *topo;
        struct nvidia_pcie *nv;
        struct nvidia_pcie_opts opts;
};

static void world_open(struct world *w, const char *machine, const char *kernel)
{
        struct sim_opts so = {.machine_dir = MACHINES, .kernel = kernel, .clock = fake_clock};
        struct pcie_topo_opts to = {0};
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        fake_now = 0;
        if (sim_open(machine, &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        assert_int_equal(pcie_topo_scan(&w->env, &to, &w->topo), 0);
        nvidia_pcie_opts_default(&w->opts);
        w->opts.detail = PCIE_DETAIL_FULL;
}

static void world_discover(struct world *w)
{
        assert_int_equal(nvidia_pcie_discover(&w->env, w->topo, &w->opts, &w->nv), 0);
        assert_non_null(w->nv);
}

static void world_close(struct world *w)
{
        nvidia_pcie_free(w->nv);
        pcie_topo_free(w->topo);
        sim_close(w->sim);
}

static const char *label_of(const struct pcie_sample *s, const char *name)
{
        for (size_t i = 0; i < s->label_count; i++)
                if (!strcmp(s->labels[i].name, name))
                        return s->labels[i].value;
        return NULL;
}

/* The value of @metric for @port with @key = @value, or NAN. */
static double value_of(const struct sample_set *set, const char *metric, const char *port,
                       const char *key, const char *value)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const char *p = label_of(s, "port"), *v = key ? label_of(s, key) : NULL;

                if (!p)
                        p = label_of(s, "target"); /* the raw counters' name for it */
                if (strcmp(s->metric, metric) || !p || strcmp(p, port))
                        continue;
                if (key && (!v || strcmp(v, value)))
                        continue;
                return s->gauge;
        }
        return NAN;
}

/* Index of Root Port @bdf in m->nvidia.sockets[*socket].ports. */
static size_t sim_port(const struct sim_machine *m, const char *bdf, size_t *socket)
{
        char b[32];

        for (size_t i = 0; i < m->nvidia.socket_count; i++)
                for (size_t k = 0; k < m->nvidia.sockets[i].port_count; k++) {
                        sim_device_bdf(&m->devices[m->nvidia.sockets[i].ports[k]], b, sizeof(b));
                        if (!strcmp(b, bdf)) {
                                *socket = i;
                                return k;
                        }
                }
        fail_msg("no simulated Root Port %s", bdf);
        return 0;
}

static void close_to(double got, double truth, double rel, double abs_slack, const char *what,
                     const char *port)
{
        if (!(fabs(got - truth) <= rel * fabs(truth) + abs_slack))
                fail_msg("%s %s: %.6g, truth %.6g", port, what, got, truth);
}

/* Runs socket @si for @ticks one-second intervals; after each, the port
 * whose window just ended (the rotation's order: bits ascending) is
 * compared with the truth of that second. Returns the ports checked. */
static size_t run_and_check(struct world *w, size_t si, unsigned int ticks)
{
        struct nvidia_pcie_socket *s = nvidia_pcie_socket_at(w->nv, si);
        const struct sim_machine *m = sim_machine(w->sim);
        char order[NVIDIA_PCIE_PORT_BITS][PCI_BDF_LEN];
        size_t n = 0, checked = 0;

        for (unsigned int b = 0; b < NVIDIA_PCIE_PORT_BITS; b++)
                if (nvidia_pcie_socket_port(s, b, order[n]) != NVIDIA_MAP_NONE)
                        n++;
        assert_true(n > 0);
        /* The model's clock only goes forward: each run starts where the last ended. */
        double t0 = fake_now;

        assert_int_equal(nvidia_pcie_socket_start(s, t0), 0);
        for (unsigned int t = 1; t <= ticks; t++) {
                struct sample_set set = SAMPLE_SET_INIT;
                const char *port = order[(t - 1) % n];
                struct sim_nv_truth truth;
                size_t sock, k;

                fake_now = t0 + t;
                assert_int_equal(nvidia_pcie_socket_tick(s, t0 + t, &set), 0);
                k = sim_port(m, port, &sock);
                sim_truth_nv_port(sim_nvpcie(w->sim), sock, k, t0 + t - 1, t0 + t, &truth);
                close_to(value_of(&set, "pcie_port_bandwidth_bytes_per_second", port, "tlp", "mwr"),
                         truth.wr_bytes, 0.01, 2, "rx mwr B/s", port);
                close_to(value_of(&set, "pcie_port_bandwidth_bytes_per_second", port, "tlp", "cpl"),
                         truth.rd_bytes, 0.01, 2, "tx cpl B/s", port);
                close_to(value_of(&set, "pcie_port_requests_per_second", port, "tlp", "mrd"),
                         truth.rd_req, 0.01, 2, "read requests/s", port);
                close_to(value_of(&set, "pcie_port_requests_per_second", port, "tlp", "mwr"),
                         truth.wr_req, 0.01, 2, "write requests/s", port);
                if (truth.rd_req > 0)
                        close_to(
                            value_of(&set, "pcie_port_latency_seconds", port, "event", "rx_mrd"),
                            truth.rd_latency_s, 0.01, 1e-9, "read latency", port);
                /* local + remote = all, in the remote share of the socket */
                close_to(value_of(&set, "pcie_port_memory_bandwidth_bytes_per_second", port,
                                  "memory", "remote"),
                         truth.wr_bytes * m->nvidia.sockets[sock].remote_share, 0.01, 2,
                         "remote rx B/s", port);
                /* Coverage: the port's windows so far over the time, one in n. */
                close_to(value_of(&set, "pcie_pmu_coverage_ratio", port, NULL, NULL),
                         (double)((t - 1) / n + 1) / t, 1e-6, 0, "coverage", port);
                checked++;
                sample_set_free(&set);
        }
        nvidia_pcie_socket_stop(s);
        return checked;
}

static void test_truth(const char *kernel)
{
        struct world w;

        world_open(&w, "grace-gh200", kernel);
        world_discover(&w);
        assert_int_equal(nvidia_pcie_socket_count(w.nv), 2);
        assert_int_equal(nvidia_pcie_socket_ports(nvidia_pcie_socket_at(w.nv, 0)), 4);
        assert_int_equal(nvidia_pcie_socket_ports(nvidia_pcie_socket_at(w.nv, 1)), 3);
        assert_int_equal(run_and_check(&w, 0, 9), 9);
        assert_int_equal(run_and_check(&w, 1, 7), 7);
        assert_int_equal(sim_nvpcie_open_count(sim_nvpcie(w.sim)), 0);
        world_close(&w);
}

static void test_truth_612(void **state)
{
        (void)state;
        test_truth("6.12");
}

static void test_truth_615(void **state)
{
        (void)state;
        test_truth("6.15");
}

/* The saturated, downtrained ConnectX-7 reads a utilisation near 1, never
 * above; the others well below. */
static void test_saturated_port(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct nvidia_pcie_socket *s;
        struct world w;
        double eff;

        (void)state;
        world_open(&w, "grace-gh200", NULL);
        world_discover(&w);
        s = nvidia_pcie_socket_at(w.nv, 1);
        assert_int_equal(nvidia_pcie_socket_start(s, 0), 0);
        for (unsigned int t = 1; t <= 3; t++) {
                sample_set_free(&set);
                fake_now = t;
                assert_int_equal(nvidia_pcie_socket_tick(s, t, &set), 0);
        }
        eff =
            value_of(&set, "pcie_port_utilization_ratio", "0012:00:00.0", "capacity", "effective");
        assert_true(eff > 0.95 && eff <= 1.0 + 1e-9);
        assert_true(value_of(&set, "pcie_port_utilization_ratio", "0012:00:00.0", "capacity",
                             "raw") <= 1.0);
        assert_true(value_of(&set, "pcie_port_utilization_ratio", "0010:00:00.0", "capacity",
                             "effective") < 0.5);
        sample_set_free(&set);
        nvidia_pcie_socket_stop(s);
        world_close(&w);
}

/* One raw event with root_port = @filter: its bytes per second. */
static double raw_rate(struct world *w, unsigned int filter)
{
        struct perf_event_attr attr;
        struct perf_group *g = NULL;
        struct perf_group_reading r0, r1, d;
        struct perf_pmu *pmu = NULL;

        assert_int_equal(perf_pmu_load(&w->env, "nvidia_pcie_pmu_0", &pmu), 0);
        assert_int_equal(perf_pmu_event_attr(pmu, "wr_bytes_loc", &attr), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "root_port", filter), 0);
        assert_int_equal(perf_group_open(&w->env, &attr, 1, perf_pmu_cpu(pmu, 0), &g, NULL), 0);
        assert_int_equal(perf_group_enable(g), 0);
        assert_int_equal(perf_group_read(g, &r0), 0);
        fake_now += 1;
        assert_int_equal(perf_group_read(g, &r1), 0);
        assert_int_equal(perf_reading_delta(&r1, &r0, &d), 0);
        perf_group_close(g);
        perf_pmu_free(pmu);
        return (double)d.values[0] / ((double)d.time_running / 1e9);
}

/* Before 6.14 a zero root_port counts nothing; from 6.14 every port. */
static void test_filter_kernels(void **state)
{
        struct world w;
        double all, one;

        (void)state;
        world_open(&w, "grace-gh200", "6.12");
        assert_true(raw_rate(&w, 0x3ff) > 1e9);
        assert_true(raw_rate(&w, 0) == 0);
        world_close(&w);
        world_open(&w, "grace-gh200", "6.15");
        all = raw_rate(&w, 0x3ff);
        one = raw_rate(&w, 1);
        assert_true(one > 0 && all > one);
        close_to(raw_rate(&w, 0), all, 1e-6, 2, "root_port=0 on 6.15", "socket 0");
        world_close(&w);
}

/* perf_event_open answers as arm_cspmu does. */
static void test_open_rules(void **state)
{
        const struct perf_ops *ops;
        struct perf_event_attr attr, cyc;
        struct perf_pmu *pmu = NULL;
        int fds[20], leader, n = 0;
        struct world w;

        (void)state;
        world_open(&w, "grace-gh200", NULL);
        ops = w.env.perf;
        assert_int_equal(perf_pmu_load(&w.env, "nvidia_pcie_pmu_1", &pmu), 0);
        assert_int_equal(perf_pmu_event_attr(pmu, "rd_bytes_loc", &attr), 0);
        assert_int_equal(perf_pmu_set(pmu, &attr, "root_port", 1), 0);
        assert_int_equal(perf_pmu_event_attr(pmu, "cycles", &cyc), 0);
        assert_int_equal(cyc.config, 1ULL << 32);
        attr.sample_period = 1000;
        assert_int_equal(ops->open(ops->ctx, &attr, -1, 72, -1, 0), -EOPNOTSUPP);
        attr.sample_period = 0;
        assert_int_equal(ops->open(ops->ctx, &attr, 1234, 72, -1, 0), -EINVAL); /* a task */
        assert_int_equal(ops->open(ops->ctx, &attr, -1, 0, -1, 0), -EINVAL);    /* node 0's CPU */
        attr.exclude_kernel = 1;
        assert_int_equal(ops->open(ops->ctx, &attr, -1, 72, -1, 0), -EINVAL);
        attr.exclude_kernel = 0;
        /* A group: the cycle counter and `counters` (16) event counters. */
        leader = ops->open(ops->ctx, &cyc, -1, 80, -1, 0);
        assert_true(leader >= 0);
        for (n = 0; n < 16; n++) {
                fds[n] = ops->open(ops->ctx, &attr, -1, 80, leader, 0);
                assert_true(fds[n] >= 0);
        }
        assert_int_equal(ops->open(ops->ctx, &attr, -1, 80, leader, 0), -EINVAL);
        for (int i = 0; i < n; i++)
                ops->close(ops->ctx, fds[i]);
        ops->close(ops->ctx, leader);
        assert_int_equal(sim_nvpcie_open_count(sim_nvpcie(w.sim)), 0);
        perf_pmu_free(pmu);
        world_close(&w);
}

/* grace-remap's true table differs from the default: by default C0 reads
 * nothing (bit 0 selects no Root Port) and C2 reads the GPU's traffic
 * (C9's); a configured bit reads C0's own. */
static void test_mapping(void **state)
{
        const struct sim_machine *m;
        struct nvidia_pcie_socket *s;
        struct sample_set set = SAMPLE_SET_INIT;
        struct sim_nv_truth c0, c2, c9;
        struct pci_addr a;
        char bdf[PCI_BDF_LEN];
        struct world w;
        size_t sock;

        (void)state;
        world_open(&w, FIXTURES "/grace-remap.json", NULL);
        m = sim_machine(w.sim);
        world_discover(&w);
        s = nvidia_pcie_socket_at(w.nv, 0);
        assert_int_equal(nvidia_pcie_socket_port(s, 0, bdf), NVIDIA_MAP_DEFAULT);
        assert_string_equal(bdf, "0000:00:00.0");
        assert_int_equal(nvidia_pcie_socket_start(s, 0), 0);
        fake_now = 1; /* bit 0's window: C0 by default */
        assert_int_equal(nvidia_pcie_socket_tick(s, 1, &set), 0);
        sim_truth_nv_port(sim_nvpcie(w.sim), 0, sim_port(m, "0000:00:00.0", &sock), 0, 1, &c0);
        assert_true(c0.wr_bytes > 1e8);
        assert_true(value_of(&set, "pcie_port_bandwidth_bytes_per_second", "0000:00:00.0", "tlp",
                             "mwr") == 0);
        sample_set_free(&set);
        fake_now = 2; /* bit 2's window: C2 by default, truly C9 */
        assert_int_equal(nvidia_pcie_socket_tick(s, 2, &set), 0);
        sim_truth_nv_port(sim_nvpcie(w.sim), 0, sim_port(m, "0002:00:00.0", &sock), 1, 2, &c2);
        sim_truth_nv_port(sim_nvpcie(w.sim), 0, sim_port(m, "0009:00:00.0", &sock), 1, 2, &c9);
        close_to(
            value_of(&set, "pcie_port_bandwidth_bytes_per_second", "0002:00:00.0", "tlp", "cpl"),
            c9.rd_bytes, 0.01, 2, "default map", "0002:00:00.0");
        assert_true(fabs(c2.rd_bytes - c9.rd_bytes) > 0.1 * c9.rd_bytes);
        sample_set_free(&set);
        nvidia_pcie_free(w.nv);
        w.nv = NULL;

        assert_int_equal(pci_addr_parse("0000:00:00.0", &a), 0);
        assert_int_equal(nvidia_pcie_opts_map(&w.opts, 0, 3, &a, false), 0);
        world_discover(&w);
        s = nvidia_pcie_socket_at(w.nv, 0);
        assert_int_equal(nvidia_pcie_socket_port(s, 3, bdf), NVIDIA_MAP_CONFIGURED);
        assert_string_equal(bdf, "0000:00:00.0");
        /* the default no longer gives C0 to bit 0 */
        assert_int_equal(nvidia_pcie_socket_port(s, 0, bdf), NVIDIA_MAP_NONE);
        /* bits 2 (C2 by default), 3 (C0 as configured), 6, 9: C0 counts second */
        assert_int_equal(nvidia_pcie_socket_start(s, 2), 0);
        fake_now = 3;
        assert_int_equal(nvidia_pcie_socket_tick(s, 3, &set), 0);
        sample_set_free(&set);
        fake_now = 4;
        assert_int_equal(nvidia_pcie_socket_tick(s, 4, &set), 0);
        sim_truth_nv_port(sim_nvpcie(w.sim), 0, sim_port(m, "0000:00:00.0", &sock), 3, 4, &c0);
        close_to(
            value_of(&set, "pcie_port_bandwidth_bytes_per_second", "0000:00:00.0", "tlp", "mwr"),
            c0.wr_bytes, 0.01, 2, "configured map", "0000:00:00.0");
        for (size_t i = 0; i < set.count; i++)
                if (!strcmp(set.samples[i].metric, "pcie_pmu_port_info") &&
                    !strcmp(label_of(&set.samples[i], "port"), "0000:00:00.0"))
                        assert_string_equal(label_of(&set.samples[i], "mapping"), "configured");
        sample_set_free(&set);
        world_close(&w);
}

static void test_pure(void **state)
{
        bool mapped[NVIDIA_PCIE_PORT_BITS] = {false};
        double idle[NVIDIA_PCIE_PORT_BITS] = {0}, load[NVIDIA_PCIE_PORT_BITS] = {0};
        struct nvidia_pcie_opts o;
        struct pci_addr a = {0};
        unsigned int node = 99;
        double sec, cyc;

        (void)state;
        assert_int_equal(nvidia_pcie_parse_name("nvidia_pcie_pmu_0", &node), 0);
        assert_int_equal(node, 0);
        assert_int_equal(nvidia_pcie_parse_name("nvidia_pcie_pmu_17", &node), 0);
        assert_int_equal(node, 17);
        assert_int_equal(nvidia_pcie_parse_name("nvidia_pcie_pmu_", &node), -EINVAL);
        assert_int_equal(nvidia_pcie_parse_name("nvidia_pcie_pmu_01", &node), -EINVAL);
        assert_int_equal(nvidia_pcie_parse_name("nvidia_pcie_pmu_1x", &node), -EINVAL);
        assert_int_equal(nvidia_pcie_parse_name("nvidia_nvlink_c2c0_pmu_0", &node), -EINVAL);
        assert_int_equal(nvidia_pcie_default_segment(1, 9), 0x19);

        /* 2000 reads outstanding 1000 cycles each at 1 GHz over 2 s: 1 us */
        assert_int_equal(nvidia_pcie_latency(2e6, 2000, 2e9, 2.0, &sec, &cyc), 0);
        close_to(cyc, 1000, 1e-12, 0, "cycles", "-");
        close_to(sec, 1e-6, 1e-12, 0, "seconds", "-");
        /* the clock comes from the cycles: at 500 MHz the same cycles are 2 us */
        assert_int_equal(nvidia_pcie_latency(2e6, 2000, 1e9, 2.0, &sec, &cyc), 0);
        close_to(sec, 2e-6, 1e-12, 0, "seconds", "-");
        assert_int_equal(nvidia_pcie_latency(5, 0, 1e9, 1, &sec, &cyc), -EINVAL);
        assert_true(isnan(sec));
        assert_int_equal(nvidia_pcie_latency(5, 1, 0, 1, &sec, &cyc), -EINVAL);

        assert_int_equal(nvidia_pcie_next_bit(mapped, -1), -1);
        mapped[2] = mapped[6] = true;
        assert_int_equal(nvidia_pcie_next_bit(mapped, -1), 2);
        assert_int_equal(nvidia_pcie_next_bit(mapped, 2), 6);
        assert_int_equal(nvidia_pcie_next_bit(mapped, 6), 2);
        mapped[2] = false;
        assert_int_equal(nvidia_pcie_next_bit(mapped, 6), 6);

        idle[3] = 1e9;
        load[3] = 3e9;
        load[5] = 9e9; /* other traffic came: not the load's size */
        assert_int_equal(nvidia_pcie_identify_bit(idle, load, 2e9, 0.1), 3);
        load[7] = 2.05e9;
        assert_int_equal(nvidia_pcie_identify_bit(idle, load, 2e9, 0.1), -ENOTUNIQ);
        load[7] = 0;
        load[3] = 1e9;
        assert_int_equal(nvidia_pcie_identify_bit(idle, load, 2e9, 0.1), -ENOENT);
        assert_int_equal(nvidia_pcie_identify_bit(idle, load, 0, 0.1), -EINVAL);

        nvidia_pcie_opts_default(&o);
        assert_int_equal(nvidia_pcie_opts_map(&o, 0, 10, &a, false), -EINVAL);
        assert_int_equal(nvidia_pcie_opts_map(&o, 0, 1, &a, true), 0);
        assert_int_equal(nvidia_pcie_opts_map(&o, 0, 1, &a, false), 0); /* replaces */
        assert_int_equal(o.map_count, 1);
        assert_false(o.maps[0].calibrated);
        for (unsigned int i = 1; i < NVIDIA_PCIE_MAX_MAPS; i++)
                assert_int_equal(nvidia_pcie_opts_map(&o, i, 0, &a, false), 0);
        assert_int_equal(nvidia_pcie_opts_map(&o, 9999, 0, &a, false), -ENOSPC);
        assert_string_equal(nvidia_pcie_mapping_name(NVIDIA_MAP_CALIBRATED), "calibrated");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pure),           cmocka_unit_test(test_truth_612),
            cmocka_unit_test(test_truth_615),      cmocka_unit_test(test_saturated_port),
            cmocka_unit_test(test_filter_kernels), cmocka_unit_test(test_mapping),
            cmocka_unit_test(test_open_rules),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
