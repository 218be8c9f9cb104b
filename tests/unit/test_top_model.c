// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_top_model.c - the rows of `pciescope top` from samples: bandwidth by
 * TLP type, utilisation and latency on their port, link flags and audit
 * findings, AER deltas summed over a port and the functions below it, the
 * sort keys, Intel IIO parts with and without a port, and the rows of a
 * simulated machine run by the engine under a fake clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "pcie_families.h"
#include "support.h"
#include "top_model.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

/* Adds a sample: metric, value, then label name/value pairs up to NULL.
 * Counters (names ending in _total) take the value as an integer. */
static void add(struct sample_set *set, const char *metric, double value, ...)
{
        bool counter = strstr(metric, "_total") != NULL;
        struct pcie_sample s;
        const char *name;
        va_list ap;

        assert_non_null(pcie_family_find(metric));
        sample_init(&s, pcie_family_find(metric));
        s.kind = counter ? PCIE_METRIC_COUNTER : PCIE_METRIC_GAUGE;
        if (counter)
                s.counter = (uint64_t)value;
        else
                s.gauge = value;
        va_start(ap, value);
        while ((name = va_arg(ap, const char *)))
                sample_label(&s, name, va_arg(ap, const char *));
        va_end(ap);
        assert_int_equal(sample_set_add(set, &s), 0);
}

static void function(struct sample_set *set, const char *bdf, const char *type,
                     const char *root_port)
{
        add(set, "pcie_device_info", 1, "bdf", bdf, "port_type", type, "root_port", root_port,
            "device_name", type, NULL);
}

static void link(struct sample_set *set, const char *bdf, double gts, int width, bool down)
{
        add(set, "pcie_link_speed_transfers_per_second", gts * 1e9, "bdf", bdf, "state", "current",
            NULL);
        add(set, "pcie_link_speed_transfers_per_second", 32e9, "bdf", bdf, "state", "max", NULL);
        add(set, "pcie_link_width_lanes", width, "bdf", bdf, "state", "current", NULL);
        add(set, "pcie_link_width_lanes", 16, "bdf", bdf, "state", "max", NULL);
        add(set, "pcie_link_up", 1, "bdf", bdf, NULL);
        add(set, "pcie_link_downtrained", down, "bdf", bdf, NULL);
}

static void aer(struct sample_set *set, const char *bdf, double cor, double nonfatal)
{
        add(set, "pcie_aer_device_errors_total", cor, "bdf", bdf, "severity", "correctable", NULL);
        add(set, "pcie_aer_device_errors_total", nonfatal, "bdf", bdf, "severity", "nonfatal",
            NULL);
        add(set, "pcie_aer_device_errors_total", 0, "bdf", bdf, "severity", "fatal", NULL);
}

/* The monitor's view of a small machine: two Root Ports, A (00:00.0) with
 * an endpoint, B (00:08.0) downtrained with a switch and an endpoint that
 * has an MPS finding; an empty port C (00:0c.0); AER counts of @k. */
static void monitor(struct sample_set *set, double k)
{
        function(set, "0000:00:00.0", "root_port", "0000:00:00.0");
        function(set, "0000:01:00.0", "endpoint", "0000:00:00.0");
        function(set, "0000:00:08.0", "root_port", "0000:00:08.0");
        function(set, "0000:02:00.0", "upstream_port", "0000:00:08.0");
        function(set, "0000:04:00.0", "endpoint", "0000:00:08.0");
        function(set, "0000:00:0c.0", "root_port", "0000:00:0c.0");
        function(set, "0000:7e:00.1", "rc_integrated_endpoint", NULL);
        link(set, "0000:00:00.0", 32, 16, false);
        link(set, "0000:01:00.0", 32, 16, false);
        link(set, "0000:00:08.0", 16, 8, true);
        link(set, "0000:04:00.0", 16, 4, false);
        add(set, "pcie_audit_finding", 1, "bdf", "0000:04:00.0", "finding", "mps_above_partner",
            "severity", "critical", NULL);
        add(set, "pcie_audit_finding", 1, "bdf", "0000:01:00.0", "finding", "mrrs_small",
            "severity", "warning", NULL);
        aer(set, "0000:00:00.0", 1 * k, 0);
        aer(set, "0000:01:00.0", 2 * k, 0);
        aer(set, "0000:00:08.0", 0, 0);
        aer(set, "0000:04:00.0", 5 * k, 1 * k);
        aer(set, "0000:00:0c.0", 0, 0);
}

/* A HiSilicon PCIe core counting ports A and B, and port A's endpoint. */
static void pmu(struct sample_set *set)
{
        static const char *const tlp[] = {"mwr", "mrd", "cpl"};

        for (int t = 0; t < 3; t++) {
                add(set, "pcie_port_bandwidth_bytes_per_second", 1e9 * (t + 1), "pmu",
                    "hisi_pcie0_core0", "port", "0000:00:00.0", "direction", "rx", "tlp", tlp[t],
                    NULL);
                add(set, "pcie_port_bandwidth_bytes_per_second", 1e8 * (t + 1), "pmu",
                    "hisi_pcie0_core0", "port", "0000:00:00.0", "direction", "tx", "tlp", tlp[t],
                    NULL);
                add(set, "pcie_port_bandwidth_bytes_per_second", 2e8, "pmu", "hisi_pcie0_core0",
                    "port", "0000:00:08.0", "direction", "rx", "tlp", tlp[t], NULL);
                add(set, "pcie_port_bandwidth_bytes_per_second", 9e9, "pmu", "hisi_pcie0_core0",
                    "port", "0000:00:08.0", "direction", "tx", "tlp", tlp[t], NULL);
        }
        add(set, "pcie_port_utilization_ratio", 0.25, "pmu", "hisi_pcie0_core0", "port",
            "0000:00:00.0", "direction", "rx", "capacity", "raw", NULL);
        add(set, "pcie_port_utilization_ratio", 0.99, "pmu", "hisi_pcie0_core0", "port",
            "0000:00:00.0", "direction", "rx", "capacity", "effective", NULL);
        add(set, "pcie_port_latency_seconds", 200e-9, "pmu", "hisi_pcie0_core0", "port",
            "0000:00:00.0", "event", "rx_mwr", NULL);
        add(set, "pcie_port_latency_seconds", 900e-9, "pmu", "hisi_pcie0_core0", "port",
            "0000:00:08.0", "event", "tx_mrd", NULL);
        add(set, "pcie_device_bandwidth_bytes_per_second", 5e8, "pmu", "hisi_pcie0_core0", "device",
            "0000:01:00.0", "port", "0000:00:00.0", "direction", "rx", "tlp", "mwr", NULL);
        /* The empty port is the PMU's too, without any rate. */
        add(set, "pcie_pmu_info", 1, "pmu", "hisi_pcie0_core0", "ports",
            "0000:00:00.0,0000:00:08.0,0000:00:0c.0", NULL);
}

static const struct top_row *row(const struct top_model *m, const char *id)
{
        for (size_t i = 0; i < top_model_row_count(m); i++)
                if (!strcmp(top_model_row(m, i)->id, id))
                        return top_model_row(m, i);
        return NULL;
}

static void build(struct top_model *m, double k, bool with_pmu)
{
        struct sample_set mon = SAMPLE_SET_INIT, core = SAMPLE_SET_INIT;

        monitor(&mon, k);
        assert_int_equal(top_model_update(m, "monitor", &mon), 0);
        if (with_pmu) {
                pmu(&core);
                assert_int_equal(top_model_update(m, "hisi_pcie0_core0", &core), 0);
        }
        assert_int_equal(top_model_build(m), 0);
        sample_set_free(&mon);
        sample_set_free(&core);
}

/* Rows: one per Root Port (not the RCiEP), the values on their port, the
 * functions below each port, the flags of the port and below. */
static void test_rows(void **state)
{
        struct top_model *m = top_model_new();
        const struct top_row *a, *b, *c;
        const struct top_function *f;
        struct top_counts n;

        (void)state;
        build(m, 1, true);
        assert_int_equal(top_model_row_count(m), 3);
        n = top_model_counts(m);
        assert_int_equal(n.ports, 3);
        assert_int_equal(n.measured, 2);
        assert_int_equal(n.unmapped, 0);

        a = row(m, "0000:00:00.0");
        b = row(m, "0000:00:08.0");
        c = row(m, "0000:00:0c.0");
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(c);
        assert_true(a->is_port);
        assert_string_equal(a->group, "hisi_pcie0_core0");
        assert_string_equal(c->group, "hisi_pcie0_core0"); /* from pcie_pmu_info */
        assert_true(fabs(a->bw[TOP_RX][TOP_TLP_MWR] - 1e9) < 1);
        assert_true(fabs(a->bw[TOP_RX][TOP_TLP_CPL] - 3e9) < 1);
        assert_true(isnan(a->bw[TOP_RX][TOP_TLP_ALL]));
        assert_true(fabs(top_row_bandwidth(a, TOP_RX) - 6e9) < 1);
        assert_true(fabs(top_row_bandwidth(a, TOP_TX) - 6e8) < 1);
        assert_true(isnan(top_row_bandwidth(c, TOP_RX)));
        /* The raw capacity's ratio, not the effective one. */
        assert_true(fabs(a->util[TOP_RX] - 0.25) < 1e-9);
        assert_true(isnan(a->util[TOP_TX]));
        assert_true(fabs(a->latency[TOP_LAT_RX_MWR] - 200e-9) < 1e-15);
        assert_true(isnan(a->latency[TOP_LAT_TX_MRD]));
        assert_true(fabs(top_row_latency(b) - 900e-9) < 1e-15);

        /* Links and flags: B downtrained, the MPS finding below B flags B,
         * the MRRS finding below A is A's worst finding but no MPS flag. */
        assert_true(a->link.known && a->link.up && !a->link.downtrained);
        assert_int_equal(a->link.width, 16);
        assert_true(fabs(a->link.speed - 32e9) < 1);
        assert_true(b->link.downtrained);
        assert_true(b->mps_finding);
        assert_string_equal(b->finding, "mps_above_partner");
        assert_false(a->mps_finding);
        assert_string_equal(a->finding, "mrrs_small");
        assert_false(c->link.known);

        /* Functions below their port, in topology order, with their DMA. */
        assert_int_equal(a->function_count, 1);
        f = top_model_function(m, a->first_function);
        assert_string_equal(f->bdf, "0000:01:00.0");
        assert_string_equal(f->type, "endpoint");
        assert_true(fabs(f->bw[TOP_RX] - 5e8) < 1);
        assert_true(isnan(f->bw[TOP_TX]));
        assert_int_equal(b->function_count, 2);
        assert_string_equal(top_model_function(m, b->first_function)->bdf, "0000:02:00.0");
        f = top_model_function(m, b->first_function + 1);
        assert_string_equal(f->bdf, "0000:04:00.0");
        assert_true(f->mps_finding);
        assert_false(f->link.downtrained);
        assert_int_equal(c->function_count, 0);
        top_model_free(m);
}

/* AER: no delta before a second build; then the errors since the previous
 * build, of the port and every function below it. */
static void test_aer_deltas(void **state)
{
        struct top_model *m = top_model_new();
        const struct top_row *a, *b;

        (void)state;
        build(m, 1, true);
        a = row(m, "0000:00:00.0");
        assert_true(a->aer.known);
        assert_false(a->aer.delta_known);
        assert_int_equal(a->aer.total[TOP_AER_COR], 3);
        assert_int_equal(top_aer_delta_sum(&a->aer), 0);

        build(m, 4, true);
        a = row(m, "0000:00:00.0");
        b = row(m, "0000:00:08.0");
        assert_true(a->aer.delta_known);
        /* A: 1+2 -> 4+8 correctable. B: 5 -> 20 correctable, 1 -> 4 nonfatal. */
        assert_int_equal(a->aer.delta[TOP_AER_COR], 9);
        assert_int_equal(a->aer.delta[TOP_AER_NONFATAL], 0);
        assert_int_equal(b->aer.delta[TOP_AER_COR], 15);
        assert_int_equal(b->aer.delta[TOP_AER_NONFATAL], 3);
        assert_int_equal(b->aer.delta[TOP_AER_FATAL], 0);
        assert_int_equal(b->aer.total[TOP_AER_COR], 20);
        assert_int_equal(top_model_function(m, b->first_function + 1)->aer.delta[TOP_AER_COR], 15);

        /* The same counts again: nothing new. A counter that went down (the
         * device came back) counts from zero. */
        build(m, 4, true);
        assert_int_equal(top_aer_delta_sum(&row(m, "0000:00:08.0")->aer), 0);
        build(m, 2, true);
        assert_int_equal(row(m, "0000:00:08.0")->aer.delta[TOP_AER_COR], 10);
        top_model_free(m);
}

static void order(const struct top_model *m, const char *first, const char *second,
                  const char *third)
{
        assert_int_equal(top_model_row_count(m), 3);
        assert_string_equal(top_model_row(m, 0)->id, first);
        assert_string_equal(top_model_row(m, 1)->id, second);
        assert_string_equal(top_model_row(m, 2)->id, third);
}

/* Every sort key, and the key survives a rebuild. */
static void test_sort(void **state)
{
        struct top_model *m = top_model_new();

        (void)state;
        build(m, 1, true);
        build(m, 3, true);
        assert_int_equal(top_model_sort_key(m), TOP_SORT_PORT);
        order(m, "0000:00:00.0", "0000:00:08.0", "0000:00:0c.0");
        top_model_sort(m, TOP_SORT_RX); /* 6e9, 6e8, none */
        order(m, "0000:00:00.0", "0000:00:08.0", "0000:00:0c.0");
        top_model_sort(m, TOP_SORT_TX); /* 6e8 < 2.7e10 */
        order(m, "0000:00:08.0", "0000:00:00.0", "0000:00:0c.0");
        top_model_sort(m, TOP_SORT_LATENCY); /* 900 ns > 200 ns */
        order(m, "0000:00:08.0", "0000:00:00.0", "0000:00:0c.0");
        top_model_sort(m, TOP_SORT_ERRORS); /* 12 > 6 > 0 */
        order(m, "0000:00:08.0", "0000:00:00.0", "0000:00:0c.0");
        build(m, 3, true); /* no new errors: then by the totals */
        assert_int_equal(top_model_sort_key(m), TOP_SORT_ERRORS);
        order(m, "0000:00:08.0", "0000:00:00.0", "0000:00:0c.0");
        assert_string_equal(top_sort_name(TOP_SORT_LATENCY), "latency");
        assert_string_equal(top_sort_name(TOP_SORT_ERRORS), "errors");
        top_model_free(m);
}

/* A unit's newest samples replace its previous ones; without a PMU the
 * rows are there with link and AER, and nothing is measured. */
static void test_units(void **state)
{
        struct top_model *m = top_model_new();
        struct sample_set empty = SAMPLE_SET_INIT;

        (void)state;
        build(m, 1, false);
        assert_int_equal(top_model_row_count(m), 3);
        assert_int_equal(top_model_counts(m).measured, 0);
        assert_true(row(m, "0000:00:08.0")->link.downtrained);
        assert_string_equal(row(m, "0000:00:00.0")->group, "");

        build(m, 1, true);
        assert_int_equal(top_model_counts(m).measured, 2);
        /* The core publishes nothing new: its last interval stays. */
        assert_int_equal(top_model_build(m), 0);
        assert_int_equal(top_model_counts(m).measured, 2);
        /* An empty interval of the core replaces it. */
        assert_int_equal(top_model_update(m, "hisi_pcie0_core0", &empty), 0);
        assert_int_equal(top_model_build(m), 0);
        assert_int_equal(top_model_counts(m).measured, 0);
        top_model_free(m);
}

/* Intel IIO: a part with a port lands on the port (tlp "all", bw_out as
 * tx); parts without one are rows of their own, the idle ones left out. */
static void test_iio(void **state)
{
        struct top_model *m = top_model_new();
        struct sample_set set = SAMPLE_SET_INIT;
        const struct top_row *r;

        (void)state;
        function(&set, "0000:15:01.0", "root_port", "0000:15:01.0");
        add(&set, "pcie_port_bandwidth_bytes_per_second", 4e9, "pmu", "uncore_iio_free_running_2",
            "socket", "0", "stack", "2", "part", "0", "port", "0000:15:01.0", "direction", "rx",
            "tlp", "all", NULL);
        add(&set, "pcie_iio_bw_out_estimate_bytes_per_second", 1e9, "pmu",
            "uncore_iio_free_running_2", "socket", "0", "stack", "2", "part", "0", "port",
            "0000:15:01.0", "direction", "tx", NULL);
        add(&set, "pcie_port_utilization_ratio", 0.1, "pmu", "uncore_iio_free_running_2", "socket",
            "0", "stack", "2", "part", "0", "port", "0000:15:01.0", "direction", "rx", "capacity",
            "raw", NULL);
        add(&set, "pcie_port_bandwidth_bytes_per_second", 7e9, "pmu", "uncore_iio_free_running_4",
            "socket", "1", "stack", "4", "part", "2", "direction", "rx", "tlp", "all", NULL);
        add(&set, "pcie_port_bandwidth_bytes_per_second", 0, "pmu", "uncore_iio_free_running_4",
            "socket", "1", "stack", "4", "part", "3", "direction", "rx", "tlp", "all", NULL);
        assert_int_equal(top_model_update(m, "iio-socket0", &set), 0);
        assert_int_equal(top_model_build(m), 0);

        assert_int_equal(top_model_row_count(m), 2);
        assert_int_equal(top_model_counts(m).unmapped, 2);
        assert_int_equal(top_model_counts(m).idle_unmapped, 1);
        assert_int_equal(top_model_counts(m).measured, 1);
        r = top_model_row(m, 0); /* ports first */
        assert_string_equal(r->id, "0000:15:01.0");
        assert_string_equal(r->group, "socket 0 stack 2");
        assert_true(fabs(r->bw[TOP_RX][TOP_TLP_ALL] - 4e9) < 1);
        assert_true(fabs(top_row_bandwidth(r, TOP_TX) - 1e9) < 1);
        assert_true(fabs(r->util[TOP_RX] - 0.1) < 1e-9);
        r = top_model_row(m, 1);
        assert_false(r->is_port);
        assert_string_equal(r->id, "s1 iio4 p2");
        assert_string_equal(r->group, "socket 1 stack 4");
        top_model_sort(m, TOP_SORT_RX);
        assert_string_equal(top_model_row(m, 0)->id, "s1 iio4 p2");
        sample_set_free(&set);
        top_model_free(m);
}

/* AMD data fabric: an IO root complex is a row of its own (no port), its
 * local and remote bandwidth add up, and a mapped one has a utilisation. */
static void test_root_complexes(void **state)
{
        struct top_model *m = top_model_new();
        struct sample_set set = SAMPLE_SET_INIT;
        const struct top_row *r;

        (void)state;
        add(&set, "pcie_port_bandwidth_bytes_per_second", 5e9, "pmu", "amd_df", "socket", "0",
            "root_complex", "io3", "locality", "local", "direction", "rx", "tlp", "all", NULL);
        add(&set, "pcie_port_bandwidth_bytes_per_second", 1e9, "pmu", "amd_df", "socket", "0",
            "root_complex", "io3", "locality", "remote", "direction", "rx", "tlp", "all", NULL);
        add(&set, "pcie_port_utilization_ratio", 0.9, "pmu", "amd_df", "socket", "0",
            "root_complex", "io3", "root_bus", "0000:60", "direction", "rx", "capacity", "raw",
            NULL);
        add(&set, "pcie_port_bandwidth_bytes_per_second", 2e9, "pmu", "amd_df", "socket", "1",
            "root_complex", "io0", "locality", "local", "direction", "tx", "tlp", "all", NULL);
        assert_int_equal(top_model_update(m, "amd_df-socket0", &set), 0);
        assert_int_equal(top_model_build(m), 0);

        assert_int_equal(top_model_row_count(m), 2);
        assert_int_equal(top_model_counts(m).root_complexes, 2);
        assert_int_equal(top_model_counts(m).unmapped, 0);
        top_model_sort(m, TOP_SORT_RX);
        r = top_model_row(m, 0);
        assert_false(r->is_port);
        assert_true(r->is_root_complex);
        assert_string_equal(r->id, "s0 io3");
        assert_string_equal(r->group, "socket 0 data fabric");
        assert_true(fabs(r->bw[TOP_RX][TOP_TLP_ALL] - 6e9) < 1);
        assert_true(fabs(r->util[TOP_RX] - 0.9) < 1e-9);
        r = top_model_row(m, 1);
        assert_string_equal(r->id, "s1 io0");
        assert_true(fabs(top_row_bandwidth(r, TOP_TX) - 2e9) < 1);
        assert_true(isnan(r->util[TOP_TX]));
        sample_set_free(&set);
        top_model_free(m);
}

static void test_format_rate(void **state)
{
        static const struct {
                double v;
                const char *text;
        } cases[] = {{0, "0"},          {999, "999"},      {1000, "1.0k"},     {15.64e9, "15.6G"},
                     {238.6e6, "239M"}, {99.96e6, "100M"}, {999.97e6, "1.0G"}, {NAN, "-"},
                     {-1, "-"},         {2e15, "2.0P"}};
        char buf[16];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                top_format_rate(buf, sizeof(buf), cases[i].v);
                assert_string_equal(buf, cases[i].text);
                assert_true(strlen(buf) <= 5);
        }
}

struct feed {
        struct top_model *m;
        struct sample_set all; /* the monitor's samples, for the expectations */
};

static void feed(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct feed *f = ctx;

        if (!unit)
                return;
        assert_int_equal(top_model_update(f->m, engine_unit_name(unit), set), 0);
        if (engine_unit_source(unit) == ENGINE_SOURCE_MONITOR) {
                sample_set_clear(&f->all);
                for (size_t i = 0; i < set->count; i++)
                        assert_int_equal(sample_set_add(&f->all, &set->samples[i]), 0);
        }
}

/* The value of @metric for @bdf in @set (-1: none). */
static double value_of(const struct sample_set *set, const char *metric, const char *bdf)
{
        for (size_t i = 0; i < set->count; i++) {
                const char *b = pcie_sample_label(&set->samples[i], "bdf");

                if (!strcmp(set->samples[i].metric, metric) && b && !strcmp(b, bdf))
                        return set->samples[i].gauge;
        }
        return -1;
}

/* The samples of a simulated machine, as `pciescope top` runs the engine:
 * a row for every Root Port the monitor reports, bandwidth on the ports a
 * PMU counts after one interval, and the flags where the audit and the
 * link family put them. */
static void test_simulated_machine(void **state)
{
        struct engine_host host = {.log = capture_log,
                                   .interval = 1,
                                   .clock = fake_clock,
                                   .manual = true,
                                   .baseline_at_start = true,
                                   .sources = ENGINE_SOURCE_MONITOR | ENGINE_SOURCE_HISI_PCIE |
                                              ENGINE_SOURCE_INTEL_IIO};
        struct engine_config cfg;
        struct feed f = {top_model_new(), SAMPLE_SET_INIT};
        struct engine *e;
        char why[512] = "";
        size_t root_ports = 0, downtrained = 0, busy = 0;

        (void)state;
        fake_now = 100;
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(
            engine_config_set_string(&cfg, "Simulate", "kunpeng930-misconfig", why, sizeof(why)),
            0);
        assert_int_equal(
            engine_config_set_string(&cfg, "MachineDirectory", MACHINES, why, sizeof(why)), 0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        assert_int_equal(engine_read(e, feed, &f), 0);
        while (engine_next_due(e) <= 101.0) {
                fake_now = engine_next_due(e);
                engine_advance(e, fake_now);
        }
        assert_int_equal(engine_read(e, feed, &f), 0);
        assert_int_equal(top_model_build(f.m), 0);

        /* The Root Ports and their downtrained links as the monitor said
         * them; each must be a row with that flag. */
        for (size_t i = 0; i < f.all.count; i++) {
                const struct pcie_sample *s = &f.all.samples[i];
                const char *type = pcie_sample_label(s, "port_type"), *bdf;
                const struct top_row *r;

                if (strcmp(s->metric, "pcie_device_info") || !type || strcmp(type, "root_port"))
                        continue;
                bdf = pcie_sample_label(s, "bdf");
                r = row(f.m, bdf);
                assert_non_null(r);
                root_ports++;
                assert_int_equal(r->link.downtrained,
                                 value_of(&f.all, "pcie_link_downtrained", bdf) > 0);
                downtrained += r->link.downtrained;
                busy += top_row_bandwidth(r, TOP_RX) > 0;
        }
        assert_int_equal(top_model_counts(f.m).ports, root_ports);
        assert_int_equal(top_model_row_count(f.m), root_ports);
        assert_true(root_ports >= 2);
        assert_true(downtrained >= 1); /* the misconfigured machine's point */
        assert_true(busy >= 1);        /* rates after one interval */
        sample_set_free(&f.all);
        top_model_free(f.m);
        engine_close(e);
        engine_config_clear(&cfg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rows),        cmocka_unit_test(test_aer_deltas),
            cmocka_unit_test(test_sort),        cmocka_unit_test(test_units),
            cmocka_unit_test(test_iio),         cmocka_unit_test(test_root_complexes),
            cmocka_unit_test(test_format_rate), cmocka_unit_test(test_simulated_machine),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
