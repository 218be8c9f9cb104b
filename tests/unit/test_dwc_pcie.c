// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dwc_pcie.c - the Synopsys DesignWare PCIe PMU source (dwc_pcie.h)
 * and its simulated hardware (sim_dwc_pcie.h) on yitian710-1p:
 *
 * - the pure parts: PMU names of both schemes (SBDF from 6.12, BDF
 *   before), name to Root Port, the read bound from the counter width and
 *   the link rate, the slice length;
 * - the tree as the driver writes it per kernel (none before 6.8, BDF
 *   names and mixed-case events before 6.12/6.13, the name clash);
 * - the simulated driver's rules (groups, lanes, sampling, one counter
 *   per type shared in time);
 * - the collector on the machine under a fake clock: rx in the first half
 *   of every interval, tx in the second, each rate within 1 % of the
 *   ground truth of its slice, coverage 0.5, under both naming schemes
 *   (and a BDF name two segments share, resolved by the PMU's parent),
 *   and the saturated port's utilisation close to 1, never above.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dwc_pcie.h"
#include "hw_env.h"
#include "pcie_topo.h"
#include "sample.h"
#include "sim.h"
#include "sim_dwc_pcie.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"
#define ES       "sys/bus/event_source/devices/"

/* ---- pure parts ---- */

static void test_parse_name(void **state)
{
        static const struct {
                const char *name;
                int ret;
                uint32_t id;
                bool seg;
        } rows[] = {
            {"dwc_rootport_13018", 0, 0x13018, true}, /* 0001:30:03.0, the kernel doc's */
            {"dwc_rootport_3018", 0, 0x3018, false},  /* the same port before 6.12 */
            {"dwc_rootport_8", 0, 0x8, false},        /* 0000:00:01.0 */
            {"dwc_rootport_0", 0, 0, false},
            {"dwc_rootport_ffffffff", 0, 0xffffffff, true},
            {"dwc_rootport_100000000", -EINVAL},
            {"dwc_rootport_", -EINVAL},
            {"dwc_rootport_13O18", -EINVAL},
            {"dwc_rootport_1301A", -EINVAL}, /* the kernel prints lower case */
            {"dwc_rootport_-1", -EINVAL},
            {"dwc_rootport_0x10", -EINVAL},
            {"hisi_pcie0_core0", -EINVAL},
            {"dwc_rootport", -EINVAL},
            {"", -EINVAL},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                uint32_t id = 0xdead;
                bool seg = false;
                int ret = dwc_pcie_parse_name(rows[i].name, &id, &seg);

                if (ret != rows[i].ret)
                        fail_msg("%s: returned %d, want %d", rows[i].name, ret, rows[i].ret);
                if (!ret && (id != rows[i].id || seg != rows[i].seg))
                        fail_msg("%s: id %x seg %d", rows[i].name, id, seg);
        }
        assert_int_equal(dwc_pcie_parse_name(NULL, NULL, NULL), -EINVAL);
}

static void test_match_port(void **state)
{
        const struct pci_addr ports[] = {
            {0, 0x00, 1, 0}, {0, 0x00, 3, 0}, {1, 0x30, 3, 0}, {1, 0x00, 3, 0}, {2, 0x80, 0, 0},
        };
        const size_t n = sizeof(ports) / sizeof(ports[0]);

        (void)state;
        /* SBDF names: segment, bus and devfn must all match. */
        assert_int_equal(dwc_pcie_match_port(0x13018, ports, n), 2);
        assert_int_equal(dwc_pcie_match_port(0x10018, ports, n), 3);
        assert_int_equal(dwc_pcie_match_port(0x28000, ports, n), 4);
        assert_int_equal(dwc_pcie_match_port(0x23018, ports, n), -ENOENT);
        /* BDF names: any segment, if only one has it. */
        assert_int_equal(dwc_pcie_match_port(0x3018, ports, n), 2);
        assert_int_equal(dwc_pcie_match_port(0x8000, ports, n), 4);
        assert_int_equal(dwc_pcie_match_port(0x8, ports, n), 0);
        assert_int_equal(dwc_pcie_match_port(0x18, ports, n), -EEXIST); /* 0000 and 0001 */
        assert_int_equal(dwc_pcie_match_port(0x20, ports, n), -ENOENT);
        assert_int_equal(dwc_pcie_match_port(0x8, ports, 0), -ENOENT);
}

static void test_read_bound(void **state)
{
        /* Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 bytes per second. */
        double gen5x16 = 32e9 * 16 * 128.0 / 130.0 / 8;
        double s = dwc_pcie_safe_read_seconds(64, gen5x16);

        (void)state;
        /* 2^64 bytes at 63 GB/s: 9.3 years to wrap; half of it. */
        assert_true(fabs(s - 18446744073709551616.0 / gen5x16 / 2) < 1);
        assert_true(s > 4 * 365 * 86400.0);
        /* The fastest link Linux knows, when the port's is unknown. */
        assert_true(fabs(dwc_pcie_safe_read_seconds(64, 0) - 18446744073709551616.0 / 2.56e11 / 2) <
                    1);
        /* A 32-bit byte counter at the same rate would need a read every 34 ms. */
        assert_true(fabs(dwc_pcie_safe_read_seconds(32, gen5x16) - 4294967296.0 / gen5x16 / 2) <
                    1e-9);
        /* Slices: half the interval, never beyond the bound. */
        assert_true(dwc_pcie_slice_seconds(10, s) == 5);
        assert_true(dwc_pcie_slice_seconds(10, 2) == 2);
        assert_true(dwc_pcie_slice_seconds(1, 0) == 0.5);
}

/* ---- the simulated machine ---- */

struct world {
        struct sim *sim;
        struct hw_env env;
        const struct perf_ops *ops;
};

static void world_open(struct world *w, const char *kernel)
{
        struct sim_opts so = {.machine_dir = MACHINES, .kernel = kernel, .clock = fake_clock};
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        fake_now = 1000;
        if (sim_open("yitian710-1p", &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        w->ops = w->env.perf;
}

static char *slurp(const struct world *w, const char *rel)
{
        static char buf[4096];
        char path[1024];
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", sim_root(w->sim), rel);
        f = fopen(path, "r");
        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        return buf;
}

static void assert_file(const struct world *w, const char *rel, const char *want)
{
        const char *got = slurp(w, rel);

        if (!got)
                fail_msg("missing %s", rel);
        if (strcmp(got, want))
                fail_msg("%s: \"%s\", want \"%s\"", rel, got, want);
}

static void test_tree_per_kernel(void **state)
{
        struct world w;

        (void)state;
        world_open(&w, NULL); /* 6.12: SBDF names, mixed-case events */
        assert_file(&w, ES "dwc_rootport_13018/type", "29700\n"); /* 0x7400 + 4 */
        assert_file(&w, ES "dwc_rootport_13018/cpumask", "64\n");
        assert_file(&w, ES "dwc_rootport_8/cpumask", "0\n");
        assert_file(&w, ES "dwc_rootport_8/format/eventid", "config:0-15\n");
        assert_file(&w, ES "dwc_rootport_8/format/type", "config:16-19\n");
        assert_file(&w, ES "dwc_rootport_8/format/lane", "config:20-27\n");
        assert_file(&w, ES "dwc_rootport_8/events/Rx_PCIe_TLP_Data_Payload",
                    "eventid=0x21,type=0x0\n");
        assert_file(&w, ES "dwc_rootport_8/events/Tx_PCIe_TLP_Data_Payload",
                    "eventid=0x20,type=0x0\n");
        assert_file(&w, ES "dwc_rootport_8/events/rx_nulified_tlp",
                    "eventid=0x604,type=0x1,lane=?\n");
        /* The PMU's parent is the Root Port. */
        assert_file(&w, "sys/bus/pci/devices/0001:30:03.0/dwc_rootport_13018/type", "29700\n");
        assert_null(slurp(&w, ES "dwc_rootport_3018/type"));
        sim_close(w.sim);

        world_open(&w, "6.9"); /* BDF names */
        assert_file(&w, ES "dwc_rootport_3018/type", "29700\n");
        assert_null(slurp(&w, ES "dwc_rootport_13018/type"));
        sim_close(w.sim);

        world_open(&w, "6.15"); /* lower case, typos fixed */
        assert_file(&w, ES "dwc_rootport_13018/events/rx_pcie_tlp_data_payload",
                    "eventid=0x21,type=0x0\n");
        assert_file(&w, ES "dwc_rootport_13018/events/rx_nullified_tlp",
                    "eventid=0x604,type=0x1,lane=?\n");
        assert_null(slurp(&w, ES "dwc_rootport_13018/events/Rx_PCIe_TLP_Data_Payload"));
        sim_close(w.sim);

        world_open(&w, "6.2"); /* no driver yet */
        assert_null(slurp(&w, ES "dwc_rootport_8/type"));
        sim_close(w.sim);
}

static int open_event(struct world *w, uint32_t type, uint64_t config, int cpu, int group_fd,
                      bool sampling)
{
        struct perf_event_attr a;

        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = type;
        a.config = config;
        a.disabled = 1;
        a.sample_period = sampling ? 1000 : 0;
        a.read_format =
            PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        return w->ops->open(w->ops->ctx, &a, -1, cpu, group_fd, 0);
}

/* value, enabled, running of a lone event read as a group of one. */
static void read3(struct world *w, int fd, uint64_t out[3])
{
        uint64_t buf[8];

        assert_int_equal(w->ops->read(w->ops->ctx, fd, buf, sizeof(buf)), 4 * sizeof(uint64_t));
        assert_int_equal(buf[0], 1);
        out[0] = buf[3];
        out[1] = buf[1];
        out[2] = buf[2];
}

static void test_driver_rules(void **state)
{
        struct world w;
        uint32_t nic = 0x7400 + 0; /* 0000:00:01.0, x16 */
        uint64_t rx = 0x21, tx = 0x20, lane15 = 0x600 | 1ull << 16 | 15ull << 20;
        uint64_t a[3], b[3];
        double truth_rx, truth_tx;
        int f1, f2, f3;

        (void)state;
        world_open(&w, NULL);
        assert_int_equal(open_event(&w, 0x7400 + 40, rx, 0, -1, false), -ENOENT);
        assert_int_equal(open_event(&w, nic, rx, -1, -1, false), -EINVAL);
        assert_int_equal(open_event(&w, nic, rx, 0, -1, true), -EINVAL);
        assert_int_equal(open_event(&w, nic, 0x21 | 2ull << 16, 0, -1, false), -EINVAL);
        /* Lanes: 0..15 on an x16 port, 0..3 on an x4 one. */
        f3 = open_event(&w, nic, lane15, 0, -1, false);
        assert_true(f3 >= 0);
        assert_int_equal(open_event(&w, 0x7400 + 1, lane15, 0, -1, false), -EINVAL);
        /* A group leader must be a software event. */
        f1 = open_event(&w, nic, rx, 0, -1, false);
        assert_true(f1 >= 0);
        assert_int_equal(open_event(&w, nic, tx, 0, f1, false), -EINVAL);
        f2 = open_event(&w, nic, tx, 0, -1, false);
        assert_true(f2 >= 0);

        /* rx alone for 2 s: all of it counted, in 16-byte units. */
        assert_int_equal(w.ops->ioctl(w.ops->ctx, f1, PERF_EVENT_IOC_ENABLE, 0), 0);
        fake_now += 2;
        read3(&w, f1, a);
        sim_truth_dwc_port(sim_dwc(w.sim), 0, 0, 2, &truth_rx, &truth_tx);
        assert_int_equal(a[0] % 16, 0);
        assert_true(fabs((double)a[0] - truth_rx) < 16);
        assert_true(truth_tx > 0);
        assert_int_equal(a[1], 2000000000ull);
        assert_int_equal(a[2], 2000000000ull);
        /* rx and tx both on: they share the one time-based counter. */
        assert_int_equal(w.ops->ioctl(w.ops->ctx, f2, PERF_EVENT_IOC_ENABLE, 0), 0);
        fake_now += 2;
        read3(&w, f1, a);
        read3(&w, f2, b);
        assert_int_equal(a[1], 4000000000ull);
        assert_int_equal(a[2], 3000000000ull);
        assert_int_equal(b[1], 2000000000ull);
        assert_int_equal(b[2], 1000000000ull);
        assert_true(b[0] > 0);
        w.ops->close(w.ops->ctx, f1);
        w.ops->close(w.ops->ctx, f2);
        w.ops->close(w.ops->ctx, f3);
        assert_int_equal(sim_dwc_open_count(sim_dwc(w.sim)), 0);
        sim_close(w.sim);
}

/* ---- the collector ---- */

struct got {
        double rate[16][2];
        double util[16][2][2]; /* raw, effective */
        double coverage[16];
        char bdf[16][20];
        size_t ports, samples;
};

static size_t port_slot(struct got *g, const char *bdf)
{
        for (size_t i = 0; i < g->ports; i++)
                if (!strcmp(g->bdf[i], bdf))
                        return i;
        snprintf(g->bdf[g->ports], sizeof(g->bdf[0]), "%s", bdf);
        for (int k = 0; k < 2; k++)
                g->rate[g->ports][k] = g->util[g->ports][k][0] = g->util[g->ports][k][1] = -1;
        g->coverage[g->ports] = -1;
        return g->ports++;
}

static void take(struct got *g, const struct sample_set *set)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const char *port = pcie_sample_label(s, "port");
                const char *dir = pcie_sample_label(s, "direction");
                int k = dir && !strcmp(dir, "tx");

                g->samples++;
                if (!strcmp(s->metric, "pcie_port_bandwidth_bytes_per_second"))
                        g->rate[port_slot(g, port)][k] = s->gauge;
                else if (!strcmp(s->metric, "pcie_port_utilization_ratio"))
                        g->util[port_slot(g, port)][k]
                               [!strcmp(pcie_sample_label(s, "capacity"), "effective")] = s->gauge;
                else if (!strcmp(s->metric, "pcie_pmu_info"))
                        port_slot(g, pcie_sample_label(s, "ports"));
        }
        /* A PMU's coverage: the port its pcie_pmu_info names. */
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                /* the PMU's own (below full), not one per measurement */
                if (strcmp(s->metric, "pcie_pmu_coverage_ratio") || pcie_sample_label(s, "target"))
                        continue;
                for (size_t j = 0; j < set->count; j++)
                        if (!strcmp(set->samples[j].metric, "pcie_pmu_info") &&
                            !strcmp(pcie_sample_label(&set->samples[j], "pmu"),
                                    pcie_sample_label(s, "pmu")))
                                g->coverage[port_slot(
                                    g, pcie_sample_label(&set->samples[j], "ports"))] = s->gauge;
        }
}

/* Index of @bdf in m->dwc.ports. */
static size_t dwc_index(const struct sim_machine *m, const char *bdf)
{
        char b[20];

        for (size_t i = 0; i < m->dwc.port_count; i++) {
                sim_device_bdf(&m->devices[m->dwc.ports[i]], b, sizeof(b));
                if (!strcmp(b, bdf))
                        return i;
        }
        return SIZE_MAX;
}

static void run_collector(const char *kernel)
{
        const struct dwc_pcie_opts opts = {.detail = PCIE_DETAIL_DEFAULT};
        struct pcie_topo_opts to = {0};
        struct sample_set set = SAMPLE_SET_INIT;
        struct pcie_topo *topo = NULL;
        struct dwc_pcie *d = NULL;
        const struct sim_machine *m;
        struct world w;
        int read_err;

        world_open(&w, kernel);
        m = sim_machine(w.sim);
        assert_int_equal(pcie_topo_scan(&w.env, &to, &topo), 0);
        log_text[0] = '\0';
        assert_int_equal(dwc_pcie_discover(&w.env, topo, &opts, 10, &d), 0);
        if (!d)
                fail_msg("nothing discovered: %s", log_text);
        assert_int_equal(dwc_pcie_port_count(d), 7); /* the empty bay too */
        assert_int_equal(dwc_pcie_start(d, fake_now), 0);
        for (int interval = 0; interval < 3; interval++) {
                struct got g = {0};
                double t0 = fake_now - 1000;

                /* Half-way: rx is read and tx starts; nothing published. */
                assert_true(dwc_pcie_next_tick(d) == fake_now + 5);
                fake_now += 5;
                assert_int_equal(dwc_pcie_tick(d, fake_now, &set, &read_err), 0);
                assert_int_equal(read_err, 0);
                assert_int_equal(set.count, 0);
                assert_true(dwc_pcie_next_tick(d) == fake_now + 5);
                fake_now += 5;
                assert_int_equal(dwc_pcie_tick(d, fake_now, &set, &read_err), 1);
                assert_int_equal(read_err, 0);
                take(&g, &set);
                sample_set_clear(&set);
                for (size_t p = 0; p < g.ports; p++) {
                        size_t i = dwc_index(m, g.bdf[p]);
                        double rx, tx, ignore;

                        assert_true(i != SIZE_MAX);
                        sim_truth_dwc_port(sim_dwc(w.sim), i, t0, t0 + 5, &rx, &ignore);
                        sim_truth_dwc_port(sim_dwc(w.sim), i, t0 + 5, t0 + 10, &ignore, &tx);
                        rx /= 5;
                        tx /= 5;
                        for (int k = 0; k < 2; k++) {
                                double want = k ? tx : rx;

                                if (g.rate[p][k] < 0)
                                        fail_msg("%s %s: no rate", g.bdf[p], k ? "tx" : "rx");
                                if (fabs(g.rate[p][k] - want) > 0.01 * want + 16)
                                        fail_msg("%s %s: %g B/s, truth %g", g.bdf[p],
                                                 k ? "tx" : "rx", g.rate[p][k], want);
                                if (g.util[p][k][0] > 1 || g.util[p][k][1] > 1.005)
                                        fail_msg("%s %s: utilisation %g / %g", g.bdf[p],
                                                 k ? "tx" : "rx", g.util[p][k][0], g.util[p][k][1]);
                        }
                        /* Each direction counted half of the time. */
                        if (fabs(g.coverage[p] - 0.5) > 0.01)
                                fail_msg("%s: coverage %g", g.bdf[p], g.coverage[p]);
                }
                assert_int_equal(g.ports, 7);
                /* The saturated E810 port reads close to full. */
                size_t nic = port_slot(&g, "0001:30:05.0");

                assert_true(g.util[nic][0][1] > 0.9);
                /* The empty bay: rates, but no capacity, no ratio. */
                size_t bay = port_slot(&g, "0001:30:07.0");

                assert_true(g.rate[bay][0] == 0 && g.util[bay][0][0] < 0);
        }
        dwc_pcie_free(d);
        sample_set_free(&set);
        pcie_topo_free(topo);
        assert_int_equal(sim_dwc_open_count(sim_dwc(w.sim)), 0);
        sim_close(w.sim);
}

static void test_collector_sbdf_names(void **state)
{
        (void)state;
        run_collector(NULL);
}

static void test_collector_bdf_names(void **state)
{
        (void)state;
        run_collector("6.9");
}

/* Before 6.12 two segments with the same Root Port BDF clash: the first
 * port's PMU takes the name, the second gets none, and the collector must
 * map the name to the port the PMU hangs below, not to the first match. */
static const char clash_machine[] =
    "{\"machine\": \"clash\", \"kernel\": \"6.9\", \"cpus\": 4,\n"
    " \"root_complexes\": [\n"
    "  {\"id\": 0, \"numa_node\": 0, \"cpu\": 0, \"root_ports\": [\n"
    "   {\"bdf\": \"0001:30:03.0\", \"vendor\": \"0x1ded\", \"device\": \"0x8000\",\n"
    "    \"link\": {\"max_speed\": \"32GT/s\", \"max_width\": 4}, \"secondary\": 49}]},\n"
    "  {\"id\": 1, \"numa_node\": 0, \"cpu\": 1, \"root_ports\": [\n"
    "   {\"bdf\": \"0000:30:03.0\", \"vendor\": \"0x1ded\", \"device\": \"0x8000\",\n"
    "    \"link\": {\"max_speed\": \"32GT/s\", \"max_width\": 4}, \"secondary\": 49}]}]}\n";

static void test_bdf_clash_by_parent(void **state)
{
        const struct dwc_pcie_opts opts = {.detail = PCIE_DETAIL_DEFAULT};
        struct sim_opts so = {.clock = fake_clock};
        struct sample_set set = SAMPLE_SET_INIT;
        struct pcie_topo_opts to = {0};
        struct pcie_topo *topo = NULL;
        struct dwc_pcie *d = NULL;
        char path[] = "/tmp/dwc-clash-XXXXXX.json", msg[512] = "";
        struct hw_env env;
        struct sim *sim;
        int fd, read_err;
        bool found = false;

        (void)state;
        fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, clash_machine, sizeof(clash_machine) - 1),
                         (ssize_t)sizeof(clash_machine) - 1);
        close(fd);
        fake_now = 1000;
        if (sim_open(path, &so, &sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        unlink(path);
        hw_env_init_system(&env);
        env.log = capture_log;
        assert_int_equal(sim_env(sim, &env), 0);
        assert_int_equal(pcie_topo_scan(&env, &to, &topo), 0);
        assert_int_equal(dwc_pcie_discover(&env, topo, &opts, 2, &d), 0);
        assert_non_null(d);
        assert_int_equal(dwc_pcie_port_count(d), 1);
        assert_int_equal(dwc_pcie_start(d, fake_now), 0);
        fake_now += 1;
        assert_int_equal(dwc_pcie_tick(d, fake_now, &set, &read_err), 0);
        fake_now += 1;
        assert_int_equal(dwc_pcie_tick(d, fake_now, &set, &read_err), 1);
        for (size_t i = 0; i < set.count; i++) {
                if (strcmp(set.samples[i].metric, "pcie_pmu_info"))
                        continue;
                assert_string_equal(pcie_sample_label(&set.samples[i], "pmu"), "dwc_rootport_3018");
                assert_string_equal(pcie_sample_label(&set.samples[i], "ports"), "0001:30:03.0");
                found = true;
        }
        assert_true(found);
        dwc_pcie_free(d);
        sample_set_free(&set);
        pcie_topo_free(topo);
        sim_close(sim);
}

static void test_no_pmu_before_6_8(void **state)
{
        const struct dwc_pcie_opts opts = {0};
        struct pcie_topo_opts to = {0};
        struct pcie_topo *topo = NULL;
        struct dwc_pcie *d = (struct dwc_pcie *)1;
        struct world w;

        (void)state;
        world_open(&w, "6.2");
        assert_int_equal(pcie_topo_scan(&w.env, &to, &topo), 0);
        assert_int_equal(dwc_pcie_discover(&w.env, topo, &opts, 10, &d), 0);
        assert_null(d);
        pcie_topo_free(topo);
        sim_close(w.sim);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_name),          cmocka_unit_test(test_match_port),
            cmocka_unit_test(test_read_bound),          cmocka_unit_test(test_tree_per_kernel),
            cmocka_unit_test(test_driver_rules),        cmocka_unit_test(test_collector_sbdf_names),
            cmocka_unit_test(test_collector_bdf_names), cmocka_unit_test(test_bdf_clash_by_parent),
            cmocka_unit_test(test_no_pmu_before_6_8),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
