// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_amd_df.c - the AMD data fabric collector against the simulated
 * turin-2p: the event encoding (perf's Zen 5 list through the PMU's format
 * fields), the rotation plan, bandwidth per root complex and locality
 * against the model's ground truth with and without rotation, utilisation
 * only where a root complex is mapped, and no ratio above 1 on the
 * saturated one; for calibration, the decision which root complex carried
 * a known load, the probe's rates with a simulated load, and a calibrated
 * map (mapping="calibrated", a configuration line wins). Time is a fake
 * clock.
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

#include "amd_df.h"
#include "hw_env.h"
#include "pcie_topo.h"
#include "perf_pmu.h"
#include "sample.h"
#include "sim.h"
#include "sim_amd_df.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

struct world {
        struct sim *sim;
        struct hw_env env;
        struct pcie_topo *topo;
        struct amd_df *df;
        char tmp_machine[64];
};

/* turin-2p, or a copy of it with @from replaced by @to (NULL: as shipped);
 * the copy is removed by world_close. */
static void world_open_as(struct world *w, const char *from, const char *to)
{
        struct sim_opts so = {.machine_dir = MACHINES, .clock = fake_clock};
        struct pcie_topo_opts to_opts = {0};
        const char *machine = "turin-2p";
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        fake_now = 0;
        if (from) {
                static char text[1 << 17], out[(1 << 17) + 256];
                FILE *in = fopen(MACHINES "/turin-2p.json", "r"), *f;
                char *at;
                size_t n;
                int fd;

                assert_non_null(in);
                n = fread(text, 1, sizeof(text) - 1, in);
                fclose(in);
                text[n] = '\0';
                at = strstr(text, from);
                if (!at)
                        fail_msg("turin-2p.json has no %s to replace", from);
                snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to,
                         at + strlen(from));
                snprintf(w->tmp_machine, sizeof(w->tmp_machine), "/tmp/turin-XXXXXX.json");
                fd = mkstemps(w->tmp_machine, 5);
                assert_true(fd >= 0);
                f = fdopen(fd, "w");
                fputs(out, f);
                fclose(f);
                machine = w->tmp_machine;
        }
        if (sim_open(machine, &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        assert_int_equal(pcie_topo_scan(&w->env, &to_opts, &w->topo), 0);
}

static void world_open(struct world *w)
{
        world_open_as(w, NULL, NULL);
}

static void world_close(struct world *w)
{
        amd_df_free(w->df);
        pcie_topo_free(w->topo);
        sim_close(w->sim);
        if (w->tmp_machine[0])
                unlink(w->tmp_machine);
}

static const char *label_of(const struct pcie_sample *s, const char *name)
{
        for (size_t i = 0; i < s->label_count; i++)
                if (!strcmp(s->labels[i].name, name))
                        return s->labels[i].value;
        return NULL;
}

static void test_encoding(void **state)
{
        (void)state;
        assert_int_equal(amd_df_event_code(0), 0x81f);
        assert_int_equal(amd_df_event_code(7), 0x9df);
        assert_int_equal(amd_df_umask(AMD_DF_LOCAL, AMD_DF_READ), 0x7fe);
        assert_int_equal(amd_df_umask(AMD_DF_LOCAL, AMD_DF_WRITE), 0x7ff);
        assert_int_equal(amd_df_umask(AMD_DF_REMOTE, AMD_DF_READ), 0xbfe);
        assert_int_equal(amd_df_umask(AMD_DF_REMOTE, AMD_DF_WRITE), 0xbff);
        assert_int_equal(amd_df_umask(AMD_DF_ANY, AMD_DF_READ), 0xffe);
        assert_int_equal(amd_df_umask(AMD_DF_ANY, AMD_DF_WRITE), 0xfff);
}

/* The events through the simulated PMU's format files (the simulated
 * machine's tree is written once for this and the truth test). */
static void check_attrs(struct world *w)
{
        struct perf_event_attr attr;
        struct perf_pmu *pmu;

        assert_int_equal(perf_pmu_load(&w->env, "amd_df", &pmu), 0);
        /* io_0 local read: code 0x81f -> config[7:0] 0x1f, [37:32] 0x8;
         * umask 0x7fe -> config[15:8] 0xfe, [27:24] 0x7. */
        assert_int_equal(amd_df_event_attr(pmu, 0, AMD_DF_LOCAL, AMD_DF_READ, &attr), 0);
        assert_int_equal(attr.config, 0x80700fe1fULL);
        assert_int_equal(attr.type, SIM_DF_TYPE);
        assert_int_equal(amd_df_event_attr(pmu, 3, AMD_DF_REMOTE, AMD_DF_WRITE, &attr), 0);
        assert_int_equal(attr.config, (0x8ULL << 32) | (0xbULL << 24) | 0xff00 | 0xdf);
        assert_int_equal(amd_df_event_attr(pmu, 8, AMD_DF_LOCAL, AMD_DF_READ, &attr), -EINVAL);
        perf_pmu_free(pmu);
}

static void test_plan_and_parse(void **state)
{
        size_t chosen[16], cursor = 0, seen[16] = {0};
        uint32_t domain;
        uint8_t bus;

        (void)state;
        /* 16 measurements, 4 at a time: four windows cover each once. */
        for (int k = 0; k < 4; k++) {
                size_t n = amd_df_plan_window(16, 4, &cursor, chosen);

                assert_int_equal(n, 4);
                for (size_t i = 0; i < n; i++) {
                        if (i)
                                assert_true(chosen[i] > chosen[i - 1]);
                        seen[chosen[i]]++;
                }
        }
        for (size_t i = 0; i < 16; i++)
                assert_int_equal(seen[i], 1);
        /* A window that does not divide the count wraps around. */
        cursor = 14;
        assert_int_equal(amd_df_plan_window(16, 4, &cursor, chosen), 4);
        assert_int_equal(chosen[0], 0);
        assert_int_equal(chosen[1], 1);
        assert_int_equal(chosen[2], 14);
        assert_int_equal(chosen[3], 15);
        assert_int_equal(cursor, 2);
        /* Everything fits: all of them. */
        assert_int_equal(amd_df_plan_window(3, 8, &cursor, chosen), 3);
        assert_int_equal(amd_df_parse_bus("0000:60", &domain, &bus), 0);
        assert_int_equal(bus, 0x60);
        assert_int_equal(amd_df_parse_bus("a0", &domain, &bus), 0);
        assert_int_equal(domain, 0);
        assert_int_equal(bus, 0xa0);
        assert_int_equal(amd_df_parse_bus("0000:zz", &domain, &bus), -EINVAL);
        assert_int_equal(amd_df_parse_bus("", &domain, &bus), -EINVAL);
        assert_int_equal(amd_df_parse_bus("100", &domain, &bus), -EINVAL);
}

/* The simulated socket index of socket id @id. */
static size_t sim_socket(const struct sim_machine *m, unsigned int id)
{
        for (size_t i = 0; i < m->amd.socket_count; i++)
                if (m->amd.sockets[i].id == id)
                        return i;
        fail_msg("no simulated socket %u", id);
        return 0;
}

/*
 * Every bandwidth sample of @set against the truth over the window its
 * measurement counted in: with @window measurements at a time of 1 s
 * each, measurement i (rc * 2 + locality) counted in [w, w + 1] with
 * w = i / window. Returns how many carried traffic.
 */
static size_t check_truth(struct world *w, const struct sample_set *set, size_t window, double span)
{
        const struct sim_machine *m = sim_machine(w->sim);
        size_t busy = 0, seen = 0;

        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                unsigned int socket, rc;
                bool remote, any, rx;
                double rd, wr, rd2, wr2, truth, t0;
                size_t index;

                if (strcmp(s->metric, "pcie_port_bandwidth_bytes_per_second"))
                        continue;
                socket = (unsigned int)atoi(label_of(s, "socket"));
                rc = (unsigned int)atoi(label_of(s, "root_complex") + 2);
                remote = !strcmp(label_of(s, "locality"), "remote");
                any = !strcmp(label_of(s, "locality"), "any");
                rx = !strcmp(label_of(s, "direction"), "rx");
                index = any ? rc : rc * 2 + remote;
                t0 = (double)(index / window) * span;
                sim_truth_df(sim_df(w->sim), sim_socket(m, socket), rc, remote, t0, t0 + span, &rd,
                             &wr);
                if (any) {
                        sim_truth_df(sim_df(w->sim), sim_socket(m, socket), rc, true, t0, t0 + span,
                                     &rd2, &wr2);
                        rd += rd2;
                        wr += wr2;
                }
                truth = (rx ? wr : rd) / span;
                /* Whole beats: one beat of slack at each end. */
                if (fabs(s->gauge - truth) > 0.01 * truth + 2 * 64 / span)
                        fail_msg("socket %u io%u %s %s: %.0f B/s, truth %.0f B/s", socket, rc,
                                 label_of(s, "locality"), rx ? "rx" : "tx", s->gauge, truth);
                busy += truth > 0;
                seen++;
        }
        assert_true(seen > 0);
        return busy;
}

static void start_all(struct world *w)
{
        for (size_t i = 0; i < amd_df_socket_count(w->df); i++)
                assert_int_equal(amd_df_socket_start(amd_df_socket_at(w->df, i), 0), 0);
}

static void tick_all(struct world *w, double now, struct sample_set *set)
{
        fake_now = now;
        for (size_t i = 0; i < amd_df_socket_count(w->df); i++)
                assert_int_equal(amd_df_socket_tick(amd_df_socket_at(w->df, i), now, set), 0);
}

static double gauge_of(const struct sample_set *set, const char *metric, const char *socket,
                       const char *rc, const char *direction, const char *capacity)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const char *c = label_of(s, "capacity");

                if (!strcmp(s->metric, metric) && !strcmp(label_of(s, "socket"), socket) &&
                    label_of(s, "root_complex") && !strcmp(label_of(s, "root_complex"), rc) &&
                    (!direction || !strcmp(label_of(s, "direction"), direction)) &&
                    (!capacity || (c && !strcmp(c, capacity))))
                        return s->gauge;
        }
        return NAN;
}

/* Every counter pair at once (64 counters): one window of 2 s. */
static void test_truth_all_at_once(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct amd_df_opts opts;
        struct world w;

        (void)state;
        world_open(&w);
        check_attrs(&w);
        amd_df_opts_default(&opts);
        opts.counters = 64;
        opts.detail = PCIE_DETAIL_FULL;
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        assert_non_null(w.df);
        assert_int_equal(amd_df_socket_count(w.df), 2);
        assert_int_equal(amd_df_socket_window(amd_df_socket_at(w.df, 0)), 16);
        start_all(&w);
        tick_all(&w, 2, &set);
        /* Moving: socket 0's io0, io1, io2 (both localities and
         * directions: 12) and io3 (local writes: 1); socket 1's io0 and
         * io1 (8). */
        assert_int_equal(check_truth(&w, &set, 16, 2), 21);
        /* Unmapped: no utilisation at all. */
        for (size_t i = 0; i < set.count; i++)
                assert_string_not_equal(set.samples[i].metric, "pcie_port_utilization_ratio");
        sample_set_free(&set);
        world_close(&w);
}

/* The default 8 counters: 4 measurements at a time, each counted once in
 * four intervals, each against the truth of its own second. */
static void test_truth_rotating(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct amd_df_opts opts;
        struct world w;

        (void)state;
        world_open(&w);
        amd_df_opts_default(&opts);
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        assert_int_equal(amd_df_socket_window(amd_df_socket_at(w.df, 0)), 4);
        assert_int_equal(amd_df_socket_measurements(amd_df_socket_at(w.df, 0)), 16);
        start_all(&w);
        for (int t = 1; t <= 3; t++) {
                tick_all(&w, t, &set);
                sample_set_free(&set);
        }
        tick_all(&w, 4, &set);
        assert_true(check_truth(&w, &set, 4, 1) >= 10);
        for (size_t i = 0; i < set.count; i++) {
                const struct pcie_sample *s = &set.samples[i];

                if (!strcmp(s->metric, "pcie_pmu_coverage_ratio"))
                        assert_true(fabs(s->gauge - 0.25) < 1e-6);
        }
        sample_set_free(&set);
        world_close(&w);
}

/* local and remote counted together: 8 measurements, 4 at a time. */
static void test_truth_combined(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct amd_df_opts opts;
        struct world w;

        (void)state;
        world_open(&w);
        amd_df_opts_default(&opts);
        opts.split_locality = false;
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        assert_int_equal(amd_df_socket_measurements(amd_df_socket_at(w.df, 0)), 8);
        start_all(&w);
        tick_all(&w, 1, &set);
        sample_set_free(&set);
        tick_all(&w, 2, &set);
        assert_true(check_truth(&w, &set, 4, 1) >= 5);
        sample_set_free(&set);
        world_close(&w);
}

/* Mapped root complexes get a utilisation against their links; the
 * saturated one reads about 1 and none reads above 1. */
static void test_utilisation_mapped(void **state)
{
        struct sample_set set = SAMPLE_SET_INIT;
        struct amd_df_opts opts;
        struct world w;
        double eff, raw;

        (void)state;
        world_open(&w);
        amd_df_opts_default(&opts);
        opts.counters = 64;
        opts.maps[opts.map_count++] = (struct amd_df_map){0, 3, 0, 0x60};
        opts.maps[opts.map_count++] = (struct amd_df_map){0, 1, 0, 0x40};
        opts.maps[opts.map_count++] = (struct amd_df_map){1, 0, 0, 0x80};
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        start_all(&w);
        for (int t = 1; t <= 60; t++) {
                tick_all(&w, t, &set);
                for (size_t i = 0; i < set.count; i++) {
                        const struct pcie_sample *s = &set.samples[i];

                        if (!strcmp(s->metric, "pcie_port_utilization_ratio") &&
                            s->gauge > 1 + 1e-6)
                                fail_msg("t=%d %s %s %s: %.4f", t, label_of(s, "root_complex"),
                                         label_of(s, "direction"), label_of(s, "capacity"),
                                         s->gauge);
                }
                if (t < 60)
                        sample_set_free(&set);
        }
        eff = gauge_of(&set, "pcie_port_utilization_ratio", "0", "io3", "rx", "effective");
        raw = gauge_of(&set, "pcie_port_utilization_ratio", "0", "io3", "rx", "raw");
        assert_true(eff > 0.97 && eff <= 1 + 1e-6);
        assert_true(raw > 0.85 && raw < eff);
        assert_true(gauge_of(&set, "pcie_port_utilization_ratio", "0", "io1", "rx", "effective") <
                    0.9);
        /* io0 of socket 0 is not mapped: no ratio. */
        assert_true(isnan(gauge_of(&set, "pcie_port_utilization_ratio", "0", "io0", "rx", NULL)));
        sample_set_free(&set);
        world_close(&w);
}

/* A kernel whose umask field is 8 bits (no PerfMonV2 DF format) cannot
 * express the 12-bit masks, and another CPU family has other events at
 * these codes: nothing is counted, and the log says why. */
static void test_not_counted(void **state)
{
        struct amd_df_opts opts;
        struct world w;

        (void)state;
        amd_df_opts_default(&opts);
        world_open_as(&w, "\"df_counters\": 16,", "\"df_counters\": 16, \"narrow_umask\": true,");
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        assert_null(w.df);
        assert_non_null(strstr(log_text, "PerfMonV2"));
        world_close(&w);
        world_open_as(&w, "\"cpu_family\": \"0x1a\"", "\"cpu_family\": \"0x19\"");
        assert_int_equal(amd_df_discover(&w.env, w.topo, &opts, &w.df), 0);
        assert_null(w.df);
        assert_non_null(strstr(log_text, "family 0x19"));
        world_close(&w);
}

/* Four root complexes with background traffic; @rc's @dir rises by @rise. */
static void rates_with(struct amd_df_rc_rates r[4], size_t rc, int dir, double rise)
{
        for (size_t i = 0; i < 4; i++)
                r[i] = (struct amd_df_rc_rates){.socket = (unsigned int)i / 2,
                                                .rc = (unsigned int)i % 2,
                                                .idle = {1e9 * (double)i, 3e9},
                                                .load = {1e9 * (double)i, 3e9}};
        r[rc].load[dir] += rise;
}

static void test_identify_rc(void **state)
{
        struct amd_df_rc_rates r[4];
        struct amd_df_rc_match m;

        (void)state;
        /* A device writing memory (an NVMe read): the write rate rises. */
        rates_with(r, 2, AMD_DF_WRITE, 2e9);
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), 0);
        assert_int_equal(m.index, 2);
        assert_int_equal(m.dir, AMD_DF_WRITE);
        assert_true(fabs(m.rise - 2e9) < 1);
        assert_int_equal(m.matches, 1);
        /* A device reading memory, 1.5 % off: still within 2 %. */
        rates_with(r, 1, AMD_DF_READ, 2.03e9);
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), 0);
        assert_int_equal(m.index, 1);
        assert_int_equal(m.dir, AMD_DF_READ);
        /* Other traffic coming and going elsewhere is not the load. */
        rates_with(r, 3, AMD_DF_WRITE, 2e9);
        r[0].load[AMD_DF_WRITE] += 9e9;
        r[1].load[AMD_DF_READ] -= 1e9;
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), 0);
        assert_int_equal(m.index, 3);
        /* 5 % more than the load: none; the answer names the largest rise. */
        rates_with(r, 2, AMD_DF_WRITE, 2.1e9);
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), -ENOENT);
        assert_int_equal(m.index, 2);
        assert_int_equal(m.dir, AMD_DF_WRITE);
        assert_true(fabs(m.rise - 2.1e9) < 1);
        assert_int_equal(m.matches, 0);
        /* ... and within a tolerance of 10 % it is the one. */
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.10, &m), 0);
        /* Nothing rose at all. */
        rates_with(r, 0, AMD_DF_READ, 0);
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), -ENOENT);
        assert_true(fabs(m.rise) < 1);
        /* Two root complexes rose by the load: several, both named. */
        rates_with(r, 1, AMD_DF_WRITE, 2e9);
        r[3].load[AMD_DF_READ] += 2.01e9;
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), -ENOTUNIQ);
        assert_int_equal(m.index, 1);
        assert_int_equal(m.other, 3);
        assert_int_equal(m.other_dir, AMD_DF_READ);
        assert_int_equal(m.matches, 2);
        /* Read and write of one root complex both rose: one root complex,
         * the closer direction. */
        rates_with(r, 2, AMD_DF_WRITE, 2.02e9);
        r[2].load[AMD_DF_READ] += 2.001e9;
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), 0);
        assert_int_equal(m.index, 2);
        assert_int_equal(m.dir, AMD_DF_READ);
        /* Nothing to decide with. */
        assert_int_equal(amd_df_identify_rc(r, 0, 2e9, 0.02, &m), -EINVAL);
        assert_int_equal(amd_df_identify_rc(r, 4, 0, 0.02, &m), -EINVAL);
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0, &m), -EINVAL);
        r[1].idle[AMD_DF_READ] = NAN;
        assert_int_equal(amd_df_identify_rc(r, 4, 2e9, 0.02, &m), -EINVAL);
}

/* The probe of one root complex: the model's truth, plus a calibration
 * load's DMA writes on the root complex above the device only. */
static void test_probe_with_load(void **state)
{
        const struct sim_machine *m;
        struct amd_df_probe *io1, *io2, *bad = NULL;
        double r1[2], r2[2], rd, wr, rd2, wr2;
        struct world w;
        size_t nvme0;

        (void)state;
        world_open(&w);
        m = sim_machine(w.sim);
        nvme0 = sim_machine_find(m, 0, 0x41, 0, 0);
        assert_int_not_equal(nvme0, SIM_NONE);
        assert_int_equal(amd_df_probe_open(&w.env, 0, 1, &io1), 0);
        assert_int_equal(amd_df_probe_open(&w.env, 0, 2, &io2), 0);
        assert_int_equal(amd_df_probe_open(&w.env, 0, 8, &bad), -EINVAL);
        assert_null(bad);
        fake_now = 1;
        assert_int_equal(amd_df_probe_read(io1, r1), 0);
        assert_int_equal(amd_df_probe_read(io2, r2), 0);
        assert_int_equal(sim_df_add_load(sim_df(w.sim), nvme0, 2e9, 1, 2), 0);
        fake_now = 2;
        assert_int_equal(amd_df_probe_read(io1, r1), 0);
        assert_int_equal(amd_df_probe_read(io2, r2), 0);
        sim_truth_df(sim_df(w.sim), sim_socket(m, 0), 1, false, 1, 2, &rd, &wr);
        sim_truth_df(sim_df(w.sim), sim_socket(m, 0), 1, true, 1, 2, &rd2, &wr2);
        /* The truth holds the load while it is listed. */
        assert_true(fabs(r1[AMD_DF_WRITE] - (wr + wr2)) <= 1e-3 * (wr + wr2) + 128);
        assert_true(fabs(r1[AMD_DF_READ] - (rd + rd2)) <= 1e-3 * (rd + rd2) + 128);
        assert_true(wr + wr2 > 13e9 + 2e9 - 1e6); /* three NVMe drives' 13 GB/s and the load */
        sim_truth_df(sim_df(w.sim), sim_socket(m, 0), 2, false, 1, 2, &rd, &wr);
        sim_truth_df(sim_df(w.sim), sim_socket(m, 0), 2, true, 1, 2, &rd2, &wr2);
        assert_true(fabs(r2[AMD_DF_WRITE] - (wr + wr2)) <= 1e-3 * (wr + wr2) + 128);
        amd_df_probe_close(io1);
        amd_df_probe_close(io2);
        world_close(&w);
}

/* One tick of a collector with @opts after 2 s: its samples in @set. */
static void collect(struct world *w, const struct amd_df_opts *opts, struct sample_set *set)
{
        assert_int_equal(amd_df_discover(&w->env, w->topo, opts, &w->df), 0);
        start_all(w);
        tick_all(w, 2, set);
}

static const char *info_label(const struct sample_set *set, const char *socket, const char *rc,
                              const char *label)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (!strcmp(s->metric, "pcie_df_root_complex_info") &&
                    !strcmp(label_of(s, "socket"), socket) &&
                    !strcmp(label_of(s, "root_complex"), rc))
                        return label_of(s, label);
        }
        return NULL;
}

static void test_calibrated_map(void **state)
{
        const struct amd_df_map cal = {0, 1, 0, 0x40, true};
        struct sample_set set = SAMPLE_SET_INIT;
        struct amd_df_opts opts;
        struct world w;

        (void)state;
        /* The file alone: io1 mapped, calibrated, with a utilisation. */
        world_open(&w);
        amd_df_opts_default(&opts);
        opts.counters = 64;
        assert_int_equal(amd_df_opts_add_map(&opts, &cal), 0);
        assert_int_equal(amd_df_opts_add_map(&opts, &cal), 0); /* not repeated */
        assert_int_equal(opts.map_count, 1);
        collect(&w, &opts, &set);
        assert_string_equal(info_label(&set, "0", "io1", "mapping"), "calibrated");
        assert_string_equal(info_label(&set, "0", "io1", "root_buses"), "0000:40");
        assert_string_equal(info_label(&set, "0", "io2", "mapping"), "none");
        assert_false(isnan(gauge_of(&set, "pcie_port_utilization_ratio", "0", "io1", "rx", "raw")));
        sample_set_free(&set);
        world_close(&w);

        /* A configuration line for the same bus elsewhere wins, said once. */
        world_open(&w);
        assert_int_equal(amd_df_opts_add_map(&opts, &(struct amd_df_map){0, 2, 0, 0x40, false}), 0);
        collect(&w, &opts, &set);
        assert_string_equal(info_label(&set, "0", "io1", "mapping"), "none");
        assert_string_equal(info_label(&set, "0", "io2", "mapping"), "configured");
        assert_true(isnan(gauge_of(&set, "pcie_port_utilization_ratio", "0", "io1", "rx", NULL)));
        assert_non_null(strstr(log_text,
                               "root bus 0000:40: the calibration file says socket 0 io1, "
                               "AMDDFRootComplexBus says socket 0 io2"));
        assert_null(
            strstr(strstr(log_text, "the calibration file says") + 1, "the calibration file says"));
        sample_set_free(&set);
        world_close(&w);

        /* A configuration line that agrees: configured, nothing said. */
        world_open(&w);
        opts.maps[1].rc = 1;
        collect(&w, &opts, &set);
        assert_string_equal(info_label(&set, "0", "io1", "mapping"), "configured");
        assert_null(strstr(log_text, "calibration file says"));
        sample_set_free(&set);
        world_close(&w);

        /* Out of range, and full. */
        assert_int_equal(amd_df_opts_add_map(&opts, &(struct amd_df_map){0, 8, 0, 0x40, true}),
                         -EINVAL);
        opts.map_count = AMD_DF_MAX_MAPS;
        assert_int_equal(amd_df_opts_add_map(&opts, &(struct amd_df_map){1, 1, 0, 0xa0, true}),
                         -ENOSPC);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_encoding),          cmocka_unit_test(test_plan_and_parse),
            cmocka_unit_test(test_truth_all_at_once), cmocka_unit_test(test_truth_rotating),
            cmocka_unit_test(test_truth_combined),    cmocka_unit_test(test_utilisation_mapped),
            cmocka_unit_test(test_not_counted),       cmocka_unit_test(test_identify_rc),
            cmocka_unit_test(test_probe_with_load),   cmocka_unit_test(test_calibrated_map),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
