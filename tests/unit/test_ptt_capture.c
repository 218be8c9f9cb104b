// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ptt_capture.c - live PTT trace windows against the simulated
 * Kunpeng 930: PMU and filter discovery, refused configurations, the
 * driver's event_init and AUX mmap rules in the model, counts and latency
 * quantiles against the model's ground truth (both formats, directions 0-3),
 * AUX wrap-around, the driver's silent stop, EBUSY, the shared budget, the
 * PARTIAL record at disable, and no leaked fds or mappings. Time is a fake
 * clock: windows of simulated seconds run in milliseconds.
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
#include <sys/mman.h>

#include <cmocka.h>

#include "hw_env.h"
#include "perf_pmu.h"
#include "ptt_capture.h"
#include "sample.h"
#include "sim.h"
#include "sim_hisi_ptt.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

/* Core indexes of the machine (SICL 0: cores 0, 1, 2). */
#define CORE_CX7  0 /* hisi_ptt0_0: one x16 port, a busy dual-port NIC */
#define CORE_NVME 1 /* hisi_ptt0_1: four x4 bays */
#define CORE_PEX  2 /* hisi_ptt0_2: a switch with 4 NVMe */

struct world {
        struct sim *sim;
        struct sim_ptt *ptt;
        struct hw_env env;
};

static void world_open(struct world *w)
{
        struct sim_opts so = {.machine_dir = MACHINES, .clock = fake_clock};
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        fake_now = 1000;
        if (sim_open("kunpeng930-2p", &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        w->ptt = sim_ptt(w->sim);
        assert_non_null(w->ptt);
        sim_ptt_keep_latencies(w->ptt, true); /* test_latency_* ask for them */
}

/* Every test ends here: nothing open, nothing mapped. */
static void world_close(struct world *w)
{
        assert_int_equal(sim_ptt_open_count(w->ptt), 0);
        assert_int_equal(sim_ptt_mapped_count(w->ptt), 0);
        sim_close(w->sim);
}

static void opts_ports(struct ptt_capture_opts *o, const char *port)
{
        ptt_capture_opts_default(o);
        o->root_port_count = 1;
        snprintf(o->root_ports[0], sizeof(o->root_ports[0]), "%s", port);
}

static struct ptt_capture *capture_new(struct world *w, const char *pmu,
                                       const struct ptt_capture_opts *o, struct ptt_budget *b,
                                       unsigned int index, unsigned int count)
{
        struct ptt_capture *c = NULL;
        char err[256] = "";
        int ret = ptt_capture_new(&w->env, pmu, o, b, index, count, fake_now, &c, err, sizeof(err));

        if (ret)
                fail_msg("ptt_capture_new(%s): %d %s", pmu, ret, err);
        return c;
}

static uint64_t windows_done(const struct ptt_capture *c)
{
        const struct ptt_capture_stats *st = ptt_capture_stats(c);
        uint64_t n = 0;

        for (int r = 0; r < PTT_WINDOW_RESULTS; r++)
                n += st->windows[r];
        return n;
}

/* Drives the capture at its own pace until one more window is done. */
static void run_window(struct ptt_capture *c)
{
        uint64_t before = windows_done(c);

        for (int guard = 0; guard < 100000 && windows_done(c) == before; guard++) {
                double next = ptt_capture_next_tick(c);

                if (next > fake_now)
                        fake_now = next;
                ptt_capture_tick(c, fake_now);
        }
        assert_true(windows_done(c) > before);
}

/* ---- discovery ---- */

static void test_discovery(void **state)
{
        struct world w;
        char **names = NULL;
        struct ptt_filter_entry *f = NULL;
        struct perf_pmu *pmu = NULL;
        int n;

        (void)state;
        world_open(&w);
        n = ptt_capture_list(&w.env, &names);
        assert_int_equal(n, 6); /* 2 SICLs x 3 cores, each with a PTT function */
        assert_string_equal(names[0], "hisi_ptt0_0");
        assert_string_equal(names[5], "hisi_ptt1_2");
        perf_pmu_list_free(names);

        assert_int_equal(perf_pmu_load(&w.env, "hisi_ptt0_2", &pmu), 0);
        assert_int_equal(perf_pmu_type(pmu), SIM_PTT_TYPE_BASE + CORE_PEX);
        assert_int_equal(perf_pmu_cpu_count(pmu), 1);
        assert_int_equal(perf_pmu_cpu(pmu, 0), sim_machine(w.sim)->cores[CORE_PEX].cpu);
        assert_non_null(perf_pmu_format(pmu, "filter"));
        assert_int_equal(perf_format_width(perf_pmu_format(pmu, "format")), 4);
        perf_pmu_free(pmu);

        /* 00:10.0 is slot 0x10: bit (16 & 7) * 2 = 0, so 0x80001. */
        n = ptt_capture_filters(&w.env, "hisi_ptt0_2", true, &f);
        assert_int_equal(n, 1);
        assert_string_equal(f[0].bdf, "0000:00:10.0");
        assert_int_equal(f[0].value, 0x80001);
        free(f);
        /* Four x4 ports at devices 08, 0a, 0c, 0e: bits 0, 4, 8, 12. */
        n = ptt_capture_filters(&w.env, "hisi_ptt0_1", true, &f);
        assert_int_equal(n, 4);
        assert_int_equal(f[1].value, 0x80010);
        assert_int_equal(f[3].value, 0x81000);
        free(f);
        /* The switch (up + 4 down) and 4 NVMe below 00:10.0. */
        n = ptt_capture_filters(&w.env, "hisi_ptt0_2", false, &f);
        assert_int_equal(n, 9);
        assert_string_equal(f[0].bdf, "0000:06:00.0");
        assert_string_equal(f[5].bdf, "0000:08:00.0");
        assert_int_equal(f[5].value, 0x00800);
        free(f);
        world_close(&w);
}

/* ---- refused configurations ---- */

static void expect_refused(struct world *w, const char *pmu, const struct ptt_capture_opts *o,
                           const char *reason)
{
        struct ptt_capture *c = NULL;
        char err[256] = "";

        assert_int_equal(
            ptt_capture_new(&w->env, pmu, o, NULL, 0, 1, fake_now, &c, err, sizeof(err)), -EINVAL);
        assert_null(c);
        if (!strstr(err, reason))
                fail_msg("reason \"%s\" does not mention \"%s\"", err, reason);
}

static void test_invalid_configs(void **state)
{
        struct world w;
        struct ptt_capture_opts o;

        (void)state;
        world_open(&w);
        opts_ports(&o, "0000:00:11.0");
        expect_refused(&w, "hisi_ptt0_2", &o, "not in root_port_filters");
        opts_ports(&o, "0000:00:08.0"); /* a port of another core */
        expect_refused(&w, "hisi_ptt0_2", &o, "not in root_port_filters");
        ptt_capture_opts_default(&o);
        o.requester_count = 2;
        strcpy(o.requesters[0], "0000:08:00.0");
        strcpy(o.requesters[1], "0000:09:00.0");
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceRequester: 2 given, only one per trace");
        o.requester_count = 1;
        strcpy(o.requesters[0], "0000:01:00.0"); /* below core 0, not core 2 */
        expect_refused(&w, "hisi_ptt0_2", &o, "not in requester_filters");
        opts_ports(&o, "00:10.0");
        o.type_mask = 0;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceType");
        o.type_mask = 8;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceType");
        opts_ports(&o, "00:10.0");
        o.direction = 4;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceDirection 4: must be 0, 1, 2 or 3");
        opts_ports(&o, "00:10.0");
        o.format = (enum ptt_format)2;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceFormat");
        opts_ports(&o, "00:10.0");
        o.aux_bytes = 24u << 20;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceBufferSize 25165824: must be a power of two");
        o.aux_bytes = 8u << 20;
        expect_refused(&w, "hisi_ptt0_2", &o, "16 MiB");
        opts_ports(&o, "00:10.0");
        o.duration_s = 20;
        expect_refused(&w, "hisi_ptt0_2", &o, "TraceDuration 20, TracePeriod 10");

        /* Accepted: the short BDF form, and the config word it builds. */
        opts_ports(&o, "00:10.0");
        o.direction = 3;
        o.type_mask = 6;
        o.format = PTT_FORMAT_8DW;
        struct ptt_capture *c = capture_new(&w, "hisi_ptt0_2", &o, NULL, 0, 1);

        assert_int_equal(ptt_capture_config(c), 0x80001ull | 3ull << 20 | 6ull << 24 | 1ull << 32);
        ptt_capture_free(c);
        world_close(&w);
}

/* Before Linux 6.5 there are no filter lists: values come from the BDFs. */
static void test_without_filter_lists(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        char cmd[4300];

        (void)state;
        world_open(&w);
        snprintf(cmd, sizeof(cmd), "rm -r '%s'/sys/bus/event_source/devices/hisi_ptt0_1/*_filters",
                 sim_root(w.sim));
        assert_int_equal(system(cmd), 0);
        ptt_capture_opts_default(&o);
        expect_refused(&w, "hisi_ptt0_1", &o, "name the Root Ports");
        opts_ports(&o, "0000:00:0c.0");
        c = capture_new(&w, "hisi_ptt0_1", &o, NULL, 0, 1);
        assert_int_equal(ptt_capture_config(c) & 0xfffff, 0x80100);
        assert_non_null(strstr(log_text, "not validated"));
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_OK], 1);
        ptt_capture_free(c);
        /* A port the device does not have: the open refuses it. */
        opts_ports(&o, "0000:00:0d.0"); /* bit 10: no port there */
        c = capture_new(&w, "hisi_ptt0_1", &o, NULL, 0, 1);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_ERROR], 1);
        assert_int_equal(ptt_capture_stats(c)->last_error, EINVAL);
        ptt_capture_free(c);
        world_close(&w);
}

/* The model's event_init and AUX rules, straight through the perf ops. */
static void test_driver_rules(void **state)
{
        struct world w;
        const struct perf_ops *ops;
        struct perf_event_attr a;
        int cpu, fd;
        void *ring = NULL, *aux = NULL;
        struct perf_event_mmap_page *pg;

        (void)state;
        world_open(&w);
        ops = w.env.perf;
        cpu = sim_machine(w.sim)->cores[CORE_PEX].cpu;
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = SIM_PTT_TYPE_BASE + CORE_PEX;
        a.disabled = 1;
        a.config = 0x80001 | 1ull << 20 | 7ull << 24;
        assert_int_equal(ops->open(ops->ctx, &a, -1, -1, -1, 0), -EOPNOTSUPP);
        assert_int_equal(ops->open(ops->ctx, &a, 1234, cpu, -1, 0), -EOPNOTSUPP);
        a.config = 0x80002 | 7ull << 24; /* bit 1: no such port */
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EINVAL);
        a.config = 0x00101 | 7ull << 24; /* requester 01:00.1 is on core 0 */
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EINVAL);
        a.config = 0x80001 | 4ull << 20 | 7ull << 24;
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EINVAL);
        a.config = 0x80001 | 9ull << 24;
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EINVAL);
        a.config = 0x80001 | 1ull << 24 | 2ull << 32;
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EINVAL);
        a.config = 0x80000 | 1ull << 24; /* an empty port mask passes */
        fd = ops->open(ops->ctx, &a, -1, cpu, -1, 0);
        assert_true(fd >= SIM_PTT_FD_BASE);
        /* One trace per device. */
        assert_int_equal(ops->open(ops->ctx, &a, -1, cpu, -1, 0), -EBUSY);

        /* Ring: 1 + 2^n pages; AUX: offset/size as announced, >= 16 MiB,
         * power of two, writable. */
        assert_int_equal(ops->mmap(ops->ctx, fd, 4 * 4096, PROT_READ | PROT_WRITE, 0, &ring),
                         -EINVAL);
        assert_int_equal(ops->mmap(ops->ctx, fd, 5 * 4096, PROT_READ | PROT_WRITE, 0, &ring), 0);
        pg = ring;
        assert_int_equal(pg->data_offset, 4096);
        assert_int_equal(pg->data_size, 4 * 4096);
        pg->aux_offset = 5 * 4096;
        pg->aux_size = 8u << 20;
        assert_int_equal(ops->mmap(ops->ctx, fd, 8u << 20, PROT_READ | PROT_WRITE, 5 * 4096, &aux),
                         -ENOMEM);
        pg->aux_size = 24u << 20;
        assert_int_equal(ops->mmap(ops->ctx, fd, 24u << 20, PROT_READ | PROT_WRITE, 5 * 4096, &aux),
                         -EINVAL);
        pg->aux_size = 16u << 20;
        assert_int_equal(ops->mmap(ops->ctx, fd, 16u << 20, PROT_READ | PROT_WRITE, 6 * 4096, &aux),
                         -EINVAL);
        assert_int_equal(ops->mmap(ops->ctx, fd, 16u << 20, PROT_READ, 5 * 4096, &aux), -ENOMEM);
        assert_int_equal(ops->mmap(ops->ctx, fd, 16u << 20, PROT_READ | PROT_WRITE, 5 * 4096, &aux),
                         0);
        assert_int_equal(sim_ptt_mapped_count(w.ptt), 2);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        /* Areas outlive the event until unmapped, as with the kernel. */
        assert_int_equal(sim_ptt_mapped_count(w.ptt), 2);
        assert_int_equal(ops->munmap(ops->ctx, aux, 16u << 20), 0);
        assert_int_equal(ops->munmap(ops->ctx, ring, 5 * 4096), 0);
        world_close(&w);
}

/* ---- windows against the truth ---- */

static uint64_t summary_kind(const struct ptt_stats *st, int dir, enum tlp_kind k)
{
        if (dir >= 0)
                return st->by_kind[dir][k].tlps;
        return st->by_kind[0][k].tlps + st->by_kind[1][k].tlps + st->by_kind[2][k].tlps;
}

/* Counts are exact: every generated entry reaches the reader (no loss in
 * these windows), and the decoder must count each once. */
static void check_counts(const struct ptt_capture *c, const struct sim_ptt_truth *t, int dir,
                         int truth_dir)
{
        const struct ptt_stats *st = ptt_summary_window(ptt_capture_summary(c));
        static const enum tlp_kind kinds[SIM_PTT_KINDS] = {TLP_MWR, TLP_MRD, TLP_CPLD};

        for (int k = 0; k < SIM_PTT_KINDS; k++) {
                uint64_t want =
                    truth_dir >= 0 ? t->tlps[truth_dir][k] : t->tlps[0][k] + t->tlps[1][k];

                assert_int_equal(summary_kind(st, dir, kinds[k]), want);
        }
        assert_int_equal(st->cov.entries, t->entries);
        assert_int_equal(st->cov.malformed + st->cov.unknown_tlp, 0);
        assert_int_equal(ptt_capture_stats(c)->trace_bytes, t->aux_bytes);
}

static void window_counts(int direction, enum ptt_format fmt, int sum_dir, int truth_dir)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;

        world_open(&w);
        opts_ports(&o, "0000:00:00.0");
        o.direction = direction;
        o.format = fmt;
        o.duration_s = 0.2;
        c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_OK], 1);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_CX7, &t), 0);
        assert_true(t.entries > 100000); /* busy: well over one 4 MiB buffer */
        assert_true(t.chunks >= 1);
        check_counts(c, &t, sum_dir, truth_dir);
        assert_int_equal(ptt_capture_stats(c)->partial, 1);
        ptt_capture_free(c);
        world_close(&w);
}

static void test_window_inbound_4dw(void **state)
{
        (void)state;
        window_counts(0, PTT_FORMAT_4DW, PTT_DIR_INBOUND, SIM_PTT_INBOUND);
}

static void test_window_outbound_8dw(void **state)
{
        (void)state;
        window_counts(1, PTT_FORMAT_8DW, PTT_DIR_OUTBOUND, SIM_PTT_OUTBOUND);
}

static void test_window_inbound_8dw(void **state)
{
        (void)state;
        /* 8DW direction 2: inbound P, NP (and CPL-B, absent in the model). */
        window_counts(2, PTT_FORMAT_8DW, PTT_DIR_INBOUND, SIM_PTT_INBOUND);
}

/*
 * Latency quantiles: the summariser reports the upper bound of the
 * log-linear bucket (<= 25% wide) holding the nearest-rank value, and ticks
 * are 10 ns, so the estimate must lie in [truth, 1.25 * truth + 10 ns]. The
 * model's latency distributions are discrete with the quantiles away from
 * the steps, so the few requests at the window's edges cannot move them.
 */
static void check_quantile(double est_s, double truth_ns)
{
        double est_ns = est_s * 1e9;

        if (!(truth_ns > 0) || est_ns < truth_ns - 0.5 || est_ns > truth_ns * 1.25 + 10.5)
                fail_msg("quantile %.1f ns vs truth %.1f ns", est_ns, truth_ns);
}

static void window_latency(int direction, unsigned int type_mask, double duration)
{
        static const double q[3] = {0.5, 0.9, 0.99};
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;
        const struct ptt_stats *st;
        const struct ptt_capture_stats *cs;

        world_open(&w);
        opts_ports(&o, "0000:00:00.0");
        o.direction = direction;
        o.type_mask = type_mask;
        o.duration_s = duration;
        c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
        run_window(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_CX7, &t), 0);
        st = ptt_summary_window(ptt_capture_summary(c));
        cs = ptt_capture_stats(c);
        assert_true(t.requests_matched > 100);
        assert_int_equal(st->match.matched_last, t.requests_matched);
        assert_true(cs->have_quantiles);
        for (int last = 0; last < 2; last++)
                for (int j = 0; j < 3; j++)
                        check_quantile(cs->quantile[last][j],
                                       sim_ptt_truth_latency_quantile(w.ptt, CORE_CX7, last, q[j]));
        check_counts(c, &t, -1, -1);
        ptt_capture_free(c);
        world_close(&w);
}

static void test_latency_direction2(void **state)
{
        (void)state;
        /* Inbound DMA read requests, outbound split completions. */
        window_latency(2, 2 | 4, 0.1);
}

static void test_latency_direction3(void **state)
{
        (void)state;
        /* Outbound MMIO reads, inbound CPL-A; rare, so a longer window. */
        window_latency(3, 2 | 4, 1.0);
}

/* One requester: only TLPs carrying its ID (its DMA and the completions of
 * its reads), and its reads still match their completions. */
static void test_requester_filter(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;
        struct ptt_requester_row rows[4];
        const struct ptt_stats *st;

        (void)state;
        world_open(&w);
        ptt_capture_opts_default(&o);
        o.requester_count = 1;
        strcpy(o.requesters[0], "0000:08:00.0");
        c = capture_new(&w, "hisi_ptt0_2", &o, NULL, 0, 1);
        assert_int_equal(ptt_capture_config(c) & 0xfffff, 0x00800);
        run_window(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_PEX, &t), 0);
        st = ptt_summary_window(ptt_capture_summary(c));
        assert_int_equal(ptt_stats_requesters(st, 4, rows, 4), 1);
        assert_int_equal(rows[0].requester_id, 0x0800);
        assert_true(t.tlps[SIM_PTT_INBOUND][SIM_PTT_MWR] > 0);
        assert_true(t.tlps[SIM_PTT_OUTBOUND][SIM_PTT_CPLD] > 0);
        assert_int_equal(t.tlps[SIM_PTT_OUTBOUND][SIM_PTT_MWR], 0); /* MMIO: the port's ID */
        assert_int_equal(st->match.matched_last, t.requests_matched);
        assert_true(t.requests_matched > 0);
        check_counts(c, &t, -1, -1);
        ptt_capture_free(c);
        world_close(&w);
}

/* ---- the AUX protocol ---- */

static void test_wrap_around(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;
        const struct ptt_capture_stats *cs;

        (void)state;
        world_open(&w);
        opts_ports(&o, "0000:00:00.0");
        o.direction = 0;
        o.duration_s = 0.7; /* ~45 MiB at the model's 64 MiB/s: 2.8 x AUX */
        o.poll_s = 0.1;     /* ~6.4 MiB per poll: reads span the end of the area */
        c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
        run_window(c);
        cs = ptt_capture_stats(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_CX7, &t), 0);
        assert_true(t.aux_bytes > 2ull * o.aux_bytes);
        assert_true(t.chunks >= 10);
        assert_int_equal(t.stops, 0);
        assert_int_equal(cs->restarts, 0);
        assert_int_equal(cs->windows[PTT_WINDOW_OK], 1);
        assert_int_equal(cs->aux_records, t.chunks + 1); /* + the PARTIAL at disable */
        check_counts(c, &t, PTT_DIR_INBOUND, SIM_PTT_INBOUND);
        ptt_capture_free(c);
        world_close(&w);
}

static void test_silent_stop(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;
        const struct ptt_capture_stats *cs;
        struct sample_set set = SAMPLE_SET_INIT;
        bool seen = false;

        (void)state;
        world_open(&w);
        opts_ports(&o, "0000:00:00.0");
        o.direction = 0;
        o.duration_s = 1.0;
        o.poll_s = 0.6; /* 38 MiB between polls: the driver stops at 16 */
        c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
        run_window(c);
        cs = ptt_capture_stats(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_CX7, &t), 0);
        assert_true(t.stops >= 1);
        assert_int_equal(cs->restarts, t.stops);
        assert_int_equal(cs->windows[PTT_WINDOW_STOPPED], 1);
        assert_int_equal(cs->truncated, t.truncated_records);
        assert_true(cs->truncated >= 1);
        /* Data after the restart arrived: more than one full AUX area. */
        assert_true(cs->trace_bytes > o.aux_bytes);
        check_counts(c, &t, PTT_DIR_INBOUND, SIM_PTT_INBOUND);
        assert_int_equal(ptt_capture_samples(c, &set), 0);
        for (size_t i = 0; i < set.count; i++)
                if (!strcmp(set.samples[i].metric, "pcie_ptt_windows_total") &&
                    !strcmp(set.samples[i].labels[1].value, "stopped"))
                        seen = set.samples[i].counter == 1;
        assert_true(seen);
        sample_set_free(&set);
        ptt_capture_free(c);
        world_close(&w);
}

static void test_partial_at_disable(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sim_ptt_truth t;
        const struct ptt_capture_stats *cs;

        (void)state;
        world_open(&w);
        opts_ports(&o, "0000:00:10.0");
        o.duration_s = 0.01; /* ~0.6 MiB: never a full buffer */
        c = capture_new(&w, "hisi_ptt0_2", &o, NULL, 0, 1);
        run_window(c);
        cs = ptt_capture_stats(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_PEX, &t), 0);
        assert_int_equal(t.chunks, 0);
        assert_true(t.entries > 0);
        assert_int_equal(t.partial_records, 1);
        assert_int_equal(cs->aux_records, 1);
        assert_int_equal(cs->partial, 1);
        assert_int_equal(cs->trace_bytes, t.entries * PTT_ENTRY_4DW_BYTES);
        ptt_capture_free(c);
        world_close(&w);
}

/* ---- sharing the device and the memory ---- */

static void test_busy(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        const struct perf_ops *ops;
        struct perf_event_attr a;
        int fd;

        (void)state;
        world_open(&w);
        ops = w.env.perf;
        opts_ports(&o, "0000:00:10.0");
        o.period_s = 1;
        c = capture_new(&w, "hisi_ptt0_2", &o, NULL, 0, 1);
        /* Another perf user holds the device. */
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = SIM_PTT_TYPE_BASE + CORE_PEX;
        a.config = 0x80001 | 1ull << 20 | 1ull << 24;
        a.disabled = 1;
        fd = ops->open(ops->ctx, &a, -1, sim_machine(w.sim)->cores[CORE_PEX].cpu, -1, 0);
        assert_true(fd >= 0);
        run_window(c);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_BUSY], 2);
        assert_int_equal(ptt_capture_stats(c)->last_error, EBUSY);
        /* Logged once, not per window. */
        char *first = strstr(log_text, "busy");

        assert_non_null(first);
        assert_null(strstr(first + 1, "busy"));
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_OK], 1);
        /* The injection hook gives the same. */
        sim_ptt_inject(w.ptt, CORE_PEX, EBUSY, 1);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_BUSY], 3);
        run_window(c);
        assert_int_equal(ptt_capture_stats(c)->windows[PTT_WINDOW_OK], 2);
        ptt_capture_free(c);
        world_close(&w);
}

/* Ticks two captures together at the earlier of their wishes. */
static void run_pair(struct ptt_capture *a, struct ptt_capture *b, double until)
{
        for (int guard = 0; guard < 100000 && fake_now < until; guard++) {
                double na = ptt_capture_next_tick(a), nb = ptt_capture_next_tick(b);
                double next = na < nb ? na : nb;

                if (next > until)
                        break;
                fake_now = next > fake_now ? next : fake_now + 1e-3;
                ptt_capture_tick(a, fake_now);
                ptt_capture_tick(b, fake_now);
        }
}

static void test_budget(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *a, *b;
        struct ptt_budget *budget;

        (void)state;
        world_open(&w);
        assert_int_equal(ptt_budget_new(0, &budget), -EINVAL);
        assert_int_equal(ptt_budget_new(1, &budget), 0);
        ptt_capture_opts_default(&o);
        o.period_s = 1;
        /* Not staggered (each thinks it is alone): they collide. */
        a = capture_new(&w, "hisi_ptt0_0", &o, budget, 0, 1);
        b = capture_new(&w, "hisi_ptt0_1", &o, budget, 0, 1);
        run_pair(a, b, fake_now + 2.95);
        assert_int_equal(ptt_capture_stats(a)->windows[PTT_WINDOW_OK], 3);
        assert_int_equal(ptt_capture_stats(b)->windows[PTT_WINDOW_NO_BUDGET], 3);
        assert_int_equal(ptt_capture_stats(b)->windows[PTT_WINDOW_OK], 0);
        assert_int_equal(ptt_budget_in_use(budget), 0);
        ptt_capture_free(a);
        ptt_capture_free(b);
        /* Staggered by index: both get their windows. */
        a = capture_new(&w, "hisi_ptt0_0", &o, budget, 0, 2);
        b = capture_new(&w, "hisi_ptt0_1", &o, budget, 1, 2);
        run_pair(a, b, fake_now + 2.95);
        assert_int_equal(ptt_capture_stats(a)->windows[PTT_WINDOW_OK], 3);
        assert_int_equal(ptt_capture_stats(b)->windows[PTT_WINDOW_OK], 3);
        assert_int_equal(ptt_capture_stats(b)->windows[PTT_WINDOW_NO_BUDGET], 0);
        ptt_capture_free(a);
        ptt_capture_free(b);
        assert_int_equal(ptt_budget_in_use(budget), 0);
        ptt_budget_free(budget);
        world_close(&w);
}

/* ---- samples ---- */

static const struct pcie_sample *find(const struct sample_set *set, const char *metric,
                                      const char *label, const char *value)
{
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (strcmp(s->metric, metric))
                        continue;
                for (size_t l = 0; l < s->label_count; l++)
                        if (!strcmp(s->labels[l].name, label) && !strcmp(s->labels[l].value, value))
                                return s;
        }
        return NULL;
}

static void test_samples(void **state)
{
        struct world w;
        struct ptt_capture_opts o;
        struct ptt_capture *c;
        struct sample_set set = SAMPLE_SET_INIT;
        const struct pcie_sample *s;
        struct sim_ptt_truth t;
        double prev = -1;
        uint64_t first_total;

        (void)state;
        world_open(&w);
        opts_ports(&o, "0000:00:00.0");
        o.direction = 2;
        o.period_s = 1;
        o.detail = PCIE_DETAIL_FULL;
        c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
        run_window(c);
        assert_int_equal(sim_ptt_truth(w.ptt, CORE_CX7, &t), 0);
        assert_int_equal(ptt_capture_samples(c, &set), 0);
        s = find(&set, "pcie_ptt_tlps_total", "kind", "MRd");
        assert_non_null(s);
        assert_int_equal(s->kind, PCIE_METRIC_COUNTER);
        assert_string_equal(s->labels[0].value, "hisi_ptt0_0");
        /* Direction 2 mixes sides: the summariser cannot tell them apart. */
        assert_string_equal(s->labels[1].value, "unknown");
        assert_int_equal(s->counter, t.tlps[SIM_PTT_INBOUND][SIM_PTT_MRD] +
                                         t.tlps[SIM_PTT_OUTBOUND][SIM_PTT_MRD]);
        first_total = s->counter;
        assert_non_null(find(&set, "pcie_ptt_requester_tlps_total", "requester", "0000:01:00.0"));
        /* Cumulative buckets never decrease and end at _count. */
        for (size_t i = 0; i < set.count; i++) {
                const struct pcie_sample *b = &set.samples[i];

                if (strcmp(b->metric, "pcie_ptt_completion_latency_seconds_bucket") ||
                    strcmp(b->labels[1].value, "first"))
                        continue;
                assert_int_equal(b->kind, PCIE_METRIC_HISTOGRAM);
                assert_true(b->gauge >= prev);
                prev = b->gauge;
        }
        s = find(&set, "pcie_ptt_completion_latency_seconds_count", "completion", "first");
        assert_non_null(s);
        assert_true(s->gauge == prev && prev > 0);
        assert_non_null(
            find(&set, "pcie_ptt_completion_latency_quantile_seconds", "percentile", "99"));
        assert_non_null(find(&set, "pcie_ptt_unmatched_total", "side", "completion"));
        s = find(&set, "pcie_ptt_windows_total", "result", "ok");
        assert_non_null(s);
        assert_int_equal(s->counter, 1);
        s = find(&set, "pcie_ptt_trace_bytes_total", "pmu", "hisi_ptt0_0");
        assert_non_null(s);
        assert_int_equal(s->counter, t.aux_bytes);
        /* A second window adds to the counters. */
        run_window(c);
        sample_set_clear(&set);
        assert_int_equal(ptt_capture_samples(c, &set), 0);
        s = find(&set, "pcie_ptt_tlps_total", "kind", "MRd");
        assert_non_null(s);
        assert_true(s->counter > first_total);
        sample_set_free(&set);
        ptt_capture_free(c);
        world_close(&w);
}

static size_t count_metric(const struct sample_set *set, const char *metric, const char *label,
                           const char *value)
{
        size_t n = 0;

        for (size_t i = 0; i < set->count; i++) {
                const char *v = pcie_sample_label(&set->samples[i], label);

                n += !strcmp(set->samples[i].metric, metric) && v && !strcmp(v, value);
        }
        return n;
}

/* Below full: the latency histogram to the last completion only; basic
 * also leaves out requesters and quantiles. */
static void test_samples_detail(void **state)
{
        static const enum pcie_detail levels[3] = {PCIE_DETAIL_BASIC, PCIE_DETAIL_DEFAULT,
                                                   PCIE_DETAIL_FULL};
        const char *bucket = "pcie_ptt_completion_latency_seconds_bucket";
        const char *quantile = "pcie_ptt_completion_latency_quantile_seconds";
        const char *requester = "pcie_ptt_requester_tlps_total";

        (void)state;
        for (int i = 0; i < 3; i++) {
                struct sample_set set = SAMPLE_SET_INIT;
                struct ptt_capture_opts o;
                struct ptt_capture *c;
                struct world w;

                world_open(&w);
                opts_ports(&o, "0000:00:00.0");
                o.direction = 2;
                o.period_s = 1;
                o.detail = levels[i];
                c = capture_new(&w, "hisi_ptt0_0", &o, NULL, 0, 1);
                run_window(c);
                assert_int_equal(ptt_capture_samples(c, &set), 0);
                assert_int_equal(count_metric(&set, bucket, "completion", "last"), 25);
                assert_int_equal(count_metric(&set, bucket, "completion", "first"),
                                 levels[i] == PCIE_DETAIL_FULL ? 25 : 0);
                assert_int_equal(count_metric(&set, quantile, "completion", "last"),
                                 levels[i] == PCIE_DETAIL_BASIC ? 0 : 3);
                assert_int_equal(count_metric(&set, quantile, "completion", "first"),
                                 levels[i] == PCIE_DETAIL_FULL ? 3 : 0);
                assert_true((count_metric(&set, requester, "pmu", "hisi_ptt0_0") > 0) ==
                            (levels[i] != PCIE_DETAIL_BASIC));
                assert_int_equal(count_metric(&set, "pcie_ptt_windows_total", "result", "ok"), 1);
                sample_set_free(&set);
                ptt_capture_free(c);
                world_close(&w);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_discovery),
            cmocka_unit_test(test_invalid_configs),
            cmocka_unit_test(test_without_filter_lists),
            cmocka_unit_test(test_driver_rules),
            cmocka_unit_test(test_window_inbound_4dw),
            cmocka_unit_test(test_window_outbound_8dw),
            cmocka_unit_test(test_window_inbound_8dw),
            cmocka_unit_test(test_latency_direction2),
            cmocka_unit_test(test_latency_direction3),
            cmocka_unit_test(test_requester_filter),
            cmocka_unit_test(test_wrap_around),
            cmocka_unit_test(test_silent_stop),
            cmocka_unit_test(test_partial_at_disable),
            cmocka_unit_test(test_busy),
            cmocka_unit_test(test_budget),
            cmocka_unit_test(test_samples),
            cmocka_unit_test(test_samples_detail),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
