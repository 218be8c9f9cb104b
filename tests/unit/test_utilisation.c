// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_utilisation.c - one definition of utilisation (pcie_util,
 * collectors/pcie_link.h) and links that carry no more than they can
 * (sim_traffic_backpressure):
 *
 * - the arithmetic: what a counter counts, the payload derived from it,
 *   raw and effective against the capacities, at every MPS and TLP size;
 * - the simulator slows a workload its links cannot carry down to what
 *   they carry, and its truth keeps what was asked;
 * - every simulated machine of every vendor, its workloads driven far past
 *   what its links carry (every flow × 40, and every device writing as
 *   fast as it can in MPS-sized TLPs), through the engine as every front
 *   end runs it: no utilisation ratio above 1 + UTIL_NOISE; a Root Port
 *   whose link is full of MPS-sized writes reads effective 1, and one
 *   carrying 90 % of that reads 0.9 (PCIeLinkSaturated's threshold).
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibration.h"
#include "engine.h"
#include "engine_config.h"
#include "pcie_link.h"
#include "sample.h"
#include "sim.h"
#include "sim_events.h"
#include "sim_traffic.h"
#include "support.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define MACHINES TOP_SRCDIR "/sim/machines"
#define FIXTURES TOP_SRCDIR "/tests/fixtures/machines"

/* Measurement noise the ratios may show (docs/metrics.md): counters count
 * whole units (a DW, 32 bytes), a rate is measured over its counter's own
 * window, and a rotating plan measures the parts of one direction in
 * different windows. */
#define UTIL_NOISE 0.005

/* ---- the arithmetic ---- */

static double capacity_16gt_x4(void)
{
        return (double)pcie_link_capacity_bytes(4, 4);
}

/* A link full of TLPs of @size bytes of payload (@size <= mps) with
 * @header bytes of header: payload and counted bytes per second. */
static void full_link(double cap, unsigned int size, unsigned int header, double *payload,
                      double *tlps)
{
        *tlps = cap / (size + header + PCIE_TLP_FRAMING_BYTES);
        *payload = *tlps * size;
}

static void test_formula(void **state)
{
        static const unsigned int mpss[] = {128, 256, 512, 1024, 4096};
        double cap = capacity_16gt_x4(), raw, eff;
        struct pcie_util u;

        (void)state;
        assert_true(fabs(cap - 7.8769e9) < 1e6);
        /* The case: 7.6e9 of 512-byte writes need more than that. */
        assert_true(7.6e9 * (512 + 24) / 512 > cap);

        for (size_t i = 0; i < sizeof(mpss) / sizeof(mpss[0]); i++) {
                unsigned int mps = mpss[i];

                for (unsigned int size = 4; size <= mps; size *= 2) {
                        static const unsigned int headers[] = {PCIE_TLP_REQUEST_HEADER_BYTES,
                                                               PCIE_TLP_COMPLETION_HEADER_BYTES};

                        for (int h = 0; h < 2; h++) {
                                double payload, tlps, counted;

                                full_link(cap, size, headers[h], &payload, &tlps);
                                counted = payload + tlps * headers[h];
                                /* Header and payload counted, TLPs counted:
                                 * the payload is exact. */
                                pcie_util_init(&u, (uint64_t)cap, mps);
                                pcie_util_add(&u, PCIE_COUNTS_HEADER_PAYLOAD, counted, true,
                                              headers[h], tlps);
                                assert_int_equal(pcie_util_ratios(&u, &raw, &eff), 0);
                                assert_true(raw < 1);
                                assert_true(eff <= 1 + 1e-12);
                                if (size == mps)
                                        assert_true(fabs(eff - 1) < 1e-9);
                                /* Without a TLP count: the most payload
                                 * those bytes hold, still at most 1. */
                                pcie_util_init(&u, (uint64_t)cap, mps);
                                pcie_util_add(&u, PCIE_COUNTS_HEADER_PAYLOAD, counted, true,
                                              headers[h], -1);
                                pcie_util_ratios(&u, &raw, &eff);
                                assert_true(eff <= 1 + 1e-12);
                                if (size == mps)
                                        assert_true(fabs(eff - 1) < 1e-9);
                                /* A payload counter (DWC, Intel, len_mode 1). */
                                pcie_util_init(&u, (uint64_t)cap, mps);
                                pcie_util_add(&u, PCIE_COUNTS_PAYLOAD, payload, true, headers[h],
                                              -1);
                                pcie_util_ratios(&u, &raw, &eff);
                                assert_true(raw < 1 && eff <= 1 + 1e-12);
                                if (size == mps)
                                        assert_true(fabs(eff - 1) < 1e-9);
                        }
                }
        }
        /* 90 % of what the link carries at MPS 256 reads 0.9, whatever the
         * counter counts; the old definition (counted header + payload
         * over a payload-only capacity) read 0.956 there (0.9 * 272/256),
         * and so fired at 85 % (0.9 * 256/272). */
        {
                double payload, tlps;

                full_link(cap, 256, 16, &payload, &tlps);
                pcie_util_init(&u, (uint64_t)cap, 256);
                pcie_util_add(&u, PCIE_COUNTS_HEADER_PAYLOAD, 0.9 * (payload + 16 * tlps), true, 16,
                              0.9 * tlps);
                pcie_util_ratios(&u, &raw, &eff);
                assert_true(fabs(eff - 0.9) < 1e-9);
                assert_true(
                    fabs(0.9 * (payload + 16 * tlps) / (cap * 256 / 280) - 0.9 * 272 / 256) < 1e-9);
        }
        /* Read requests carry no payload: raw only. Header-only counters
         * cannot say the payload of writes. */
        pcie_util_init(&u, (uint64_t)cap, 256);
        pcie_util_add(&u, PCIE_COUNTS_HEADER_PAYLOAD, 1e9, false, 16, -1);
        pcie_util_ratios(&u, &raw, &eff);
        assert_true(raw > 0.1 && eff == 0);
        pcie_util_add(&u, PCIE_COUNTS_HEADER, 1e8, true, 16, -1);
        pcie_util_ratios(&u, &raw, &eff);
        assert_true(isnan(eff));
        /* A TLP count from another window that disagrees stays possible. */
        assert_true(pcie_payload_bytes(PCIE_COUNTS_HEADER_PAYLOAD, 1000, true, 16, 1000, 256) == 0);
        assert_true(fabs(pcie_payload_bytes(PCIE_COUNTS_HEADER_PAYLOAD, 1000, true, 16, 0, 256) -
                         1000.0 * 256 / 272) < 1e-9);
        /* No capacity, no ratio. */
        pcie_util_init(&u, 0, 256);
        assert_int_equal(pcie_util_ratios(&u, &raw, &eff), -EINVAL);
}

/* ---- the simulator: back-pressure ---- */

static void test_backpressure(void **state)
{
        struct sim_opts opts = {.clock = fake_clock};
        double cap = capacity_16gt_x4();
        const struct sim_machine *m;
        struct sim_truth t;
        struct sim *sim;
        char msg[512];
        size_t over, ninety;

        (void)state;
        fake_now = 0;
        assert_int_equal(sim_open(FIXTURES "/saturated-x4.json", &opts, &sim, msg, sizeof(msg)), 0);
        m = sim_machine(sim);
        over = sim_machine_find(m, 0, 1, 0, 0);
        ninety = sim_machine_find(m, 0, 2, 0, 0);
        assert_true(over != SIM_NONE && ninety != SIM_NONE);
        /* Carried: what the link takes of 512-byte TLPs; asked: 7.6e9. */
        sim_truth_device(sim_pmu(sim), over, SIM_RX_MWR, 0, 10, &t);
        assert_true(fabs(t.payload_bytes / 10 - cap * 512 / 536) < 1e3);
        assert_true(fabs(t.offered_payload_bytes / 10 - 7.6e9) < 1e3);
        assert_true(fabs((t.payload_bytes + t.header_bytes + t.tlps * PCIE_TLP_FRAMING_BYTES) / 10 -
                         cap) < 1e3);
        /* The other link carries all it is asked. */
        sim_truth_device(sim_pmu(sim), ninety, SIM_RX_MWR, 0, 10, &t);
        assert_true(fabs(t.payload_bytes - t.offered_payload_bytes) < 1);
        assert_true(fabs(t.payload_bytes / 10 / (cap * 512 / 536) - 0.9) < 1e-3);
        assert_true(sim_traffic_carried_share(&m->devices[ninety].workload) == 1);
        assert_true(sim_traffic_carried_share(&m->devices[over].workload) < 0.991);
        sim_close(sim);
}

/* ---- every machine past saturation ---- */

enum override {
        OVER_SCALE, /* every flow × 40, mixes and phases kept */
        OVER_FULL,  /* every endpoint writes 1e11 bytes/s in 4 KiB requests */
        OVER_NINETY /* every endpoint writes 90 % of what OVER_FULL carried */
};

struct rewrite {
        enum override how;
        const struct sim_machine *full; /* OVER_NINETY: the OVER_FULL machine */
};

static json_object *dma_writes(double bytes_per_second)
{
        json_object *w = json_object_new_object(), *f = json_object_new_object();

        json_object_object_add(f, "bytes_per_second", json_object_new_double(bytes_per_second));
        json_object_object_add(f, "sizes", json_object_new_int(4096));
        json_object_object_add(w, "dma_write", f);
        return w;
}

static size_t find_bdf(const struct sim_machine *m, const char *bdf)
{
        for (size_t i = 0; i < m->device_count; i++) {
                char b[32];

                sim_device_bdf(&m->devices[i], b, sizeof(b));
                if (!strcmp(b, bdf) || !strcmp(b + 5, bdf))
                        return i;
        }
        return SIM_NONE;
}

static void walk(json_object *o, const struct rewrite *rw)
{
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        walk(json_object_array_get_idx(o, i), rw);
                return;
        }
        if (!json_object_is_type(o, json_type_object))
                return;
        json_object *w, *bdf;

        if (json_object_object_get_ex(o, "workload", &w)) {
                if (rw->how == OVER_SCALE) {
                        json_object_object_foreach(w, kind, flow)
                        {
                                json_object *b;

                                if (strcmp(kind, "phases") &&
                                    json_object_object_get_ex(flow, "bytes_per_second", &b))
                                        json_object_object_add(
                                            flow, "bytes_per_second",
                                            json_object_new_double(json_object_get_double(b) * 40));
                        }
                } else if (rw->how == OVER_FULL) {
                        json_object_object_add(o, "workload", dma_writes(1e11));
                } else {
                        size_t dev;

                        assert_true(json_object_object_get_ex(o, "bdf", &bdf));
                        dev = find_bdf(rw->full, json_object_get_string(bdf));
                        assert_true(dev != SIM_NONE);
                        json_object_object_add(o, "workload",
                                               dma_writes(0.9 * 1e11 *
                                                          sim_traffic_carried_share(
                                                              &rw->full->devices[dev].workload)));
                }
                return;
        }
        json_object_object_foreach(o, key, child)
        {
                (void)key;
                walk(child, rw);
        }
}

/* Writes machine file @in with its workloads rewritten to @out. */
static void rewrite(const char *in, const char *out, const struct rewrite *rw)
{
        json_object *top = json_object_from_file(in);

        assert_non_null(top);
        walk(top, rw);
        assert_int_equal(json_object_to_file_ext(out, top, JSON_C_TO_STRING_PLAIN), 0);
        json_object_put(top);
}

struct ratio {
        char key[160];
        double raw, eff;
        bool have_raw, have_eff;
};

struct seen {
        size_t count, samples;
        double worst;
        char worst_key[200];
        struct ratio r[256];
};

static void collect(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct seen *s = ctx;

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *x = &set->samples[i];
                /* A Root Port, or (AMD data fabric) the root bus of a
                 * mapped root complex. */
                const char *port = pcie_sample_label(x, "port") ? pcie_sample_label(x, "port")
                                                                : pcie_sample_label(x, "root_bus"),
                           *dir = pcie_sample_label(x, "direction"),
                           *cap = pcie_sample_label(x, "capacity");
                char key[160];
                size_t k;

                if (strcmp(x->metric, "pcie_port_utilization_ratio") || !port || !dir || !cap)
                        continue;
                s->samples++;
                if (x->gauge > s->worst) {
                        s->worst = x->gauge;
                        snprintf(s->worst_key, sizeof(s->worst_key), "%s %s %s", port, dir, cap);
                }
                snprintf(key, sizeof(key), "%s %s", port, dir);
                for (k = 0; k < s->count && strcmp(s->r[k].key, key); k++)
                        ;
                if (k == s->count) {
                        if (s->count == sizeof(s->r) / sizeof(s->r[0]))
                                continue;
                        snprintf(s->r[s->count++].key, sizeof(s->r[0].key), "%s", key);
                }
                if (!strcmp(cap, "raw")) {
                        s->r[k].raw = x->gauge;
                        s->r[k].have_raw = true;
                } else {
                        s->r[k].eff = x->gauge;
                        s->r[k].have_eff = true;
                }
        }
}

static const struct ratio *ratio_of(const struct seen *s, const char *port, const char *dir)
{
        char key[160];

        snprintf(key, sizeof(key), "%s %s", port, dir);
        for (size_t k = 0; k < s->count; k++)
                if (!strcmp(s->r[k].key, key))
                        return &s->r[k];
        return NULL;
}

/* Runs the engine on @path for 30 simulated seconds, FluxUnit the
 * machine's; every ratio it
 * publishes goes through collect(). */
static void run_engine(const char *path, const char *kernel, const char *len_mode, double flux_unit,
                       struct seen *seen)
{
        struct engine_host host = {
            .log = capture_log, .interval = 1, .clock = fake_clock, .manual = true};
        struct sim_machine *m;
        struct engine_config cfg;
        struct engine *e;
        char why[512] = "";

        assert_int_equal(sim_machine_load(path, &m, why, sizeof(why)), 0);
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Simulate", path, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_boolean(&cfg, "CollectTrace", false, why, sizeof(why)),
                         0);
        if (kernel)
                assert_int_equal(
                    engine_config_set_string(&cfg, "SimulateKernel", kernel, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "FluxUnit", flux_unit, why, sizeof(why)),
                         0);
        if (len_mode)
                assert_int_equal(
                    engine_config_set_string(&cfg, "LengthMode", len_mode, why, sizeof(why)), 0);
        /* Intel: map every stack to its bus (SPR kernels write no die files). */
        for (size_t s = 0; s < m->intel.socket_count; s++) {
                for (size_t k = 0; k < m->intel.sockets[s].stack_count; k++) {
                        const struct sim_iio_stack *st = &m->intel.sockets[s].stacks[k];
                        char pmu[64], bus[16];
                        struct engine_value v[3] = {
                            {.type = ENGINE_VALUE_STRING, .string = pmu},
                            {.type = ENGINE_VALUE_NUMBER, .number = m->intel.sockets[s].id},
                            {.type = ENGINE_VALUE_STRING, .string = bus}};

                        snprintf(pmu, sizeof(pmu), "uncore_iio_free_running_%u", st->box_id);
                        snprintf(bus, sizeof(bus), "%04x:%02x", st->domain, st->bus);
                        assert_int_equal(
                            engine_config_set(&cfg, "IIOStackBus", v, 3, why, sizeof(why)), 0);
                }
        }
        /* NVIDIA Grace: map every root_port bit as the machine's truth
         * says (grace-remap's is not the default). */
        for (size_t s = 0; s < m->nvidia.socket_count; s++) {
                for (size_t k = 0; k < m->nvidia.sockets[s].port_count; k++) {
                        char bdf[32];
                        struct engine_value v[3] = {
                            {.type = ENGINE_VALUE_NUMBER, .number = m->nvidia.sockets[s].node},
                            {.type = ENGINE_VALUE_NUMBER, .number = m->nvidia.sockets[s].bits[k]},
                            {.type = ENGINE_VALUE_STRING, .string = bdf}};

                        sim_device_bdf(&m->devices[m->nvidia.sockets[s].ports[k]], bdf,
                                       sizeof(bdf));
                        assert_int_equal(
                            engine_config_set(&cfg, "NvidiaPCIeRootPort", v, 3, why, sizeof(why)),
                            0);
                }
        }
        /* AMD: map every root complex to its bus (AMD publishes no map). */
        for (size_t si = 0; si < m->amd.socket_count; si++) {
                for (size_t k = 0; k < m->amd.sockets[si].rc_count; k++) {
                        const struct sim_amd_rc *rc = &m->amd.sockets[si].rcs[k];
                        char bus[16];
                        struct engine_value v[3] = {
                            {.type = ENGINE_VALUE_NUMBER, .number = m->amd.sockets[si].id},
                            {.type = ENGINE_VALUE_NUMBER, .number = rc->index},
                            {.type = ENGINE_VALUE_STRING, .string = bus}};

                        snprintf(bus, sizeof(bus), "%04x:%02x", rc->domain, rc->bus);
                        assert_int_equal(
                            engine_config_set(&cfg, "AMDDFRootComplexBus", v, 3, why, sizeof(why)),
                            0);
                }
        }
        sim_machine_free(m);
        fake_now = 1000;
        if (engine_open(&cfg, &host, &e, why, sizeof(why)))
                fail_msg("%s: %s", path, why);
        assert_int_equal(engine_start(e), 0);
        while (engine_next_due(e) <= 1030.0) {
                fake_now = engine_next_due(e);
                engine_advance(e, fake_now);
                assert_int_equal(engine_read(e, collect, seen), 0);
        }
        engine_close(e);
        engine_config_clear(&cfg);
}

/* Root Ports of @m whose link is the one its devices' writes fill: every
 * function below sits on the port's own link with the link's MPS (the
 * largest on it). @fn is called with the port's BDF. */
static size_t check_full_ports(const struct sim_machine *m, const struct seen *seen, double want,
                               const char *what)
{
        size_t checked = 0;

        for (size_t p = 0; p < m->device_count; p++) {
                const struct sim_device *rp = &m->devices[p];
                unsigned int mps = rp->mps;
                bool direct = true, any = false;
                char bdf[32];

                if (rp->kind != SIM_ROOT_PORT || !rp->cur_width)
                        continue;
                for (size_t i = p + 1; i < m->device_count; i++) {
                        if (sim_machine_root_port(m, i) != p)
                                continue;
                        any = true;
                        direct &= m->devices[i].parent == p && m->devices[i].kind == SIM_ENDPOINT;
                        if (m->devices[i].mps > mps)
                                mps = m->devices[i].mps;
                }
                for (size_t i = p + 1; i < m->device_count && direct; i++)
                        if (sim_machine_root_port(m, i) == p)
                                direct &= m->devices[i].mps == mps && m->devices[i].has_workload;
                if (!any || !direct)
                        continue;
                sim_device_bdf(rp, bdf, sizeof(bdf));
                const struct ratio *r = ratio_of(seen, bdf, "rx");

                /* AMD: a root complex whose only Root Port this is reads
                 * as the port. */
                for (size_t si = 0; !r && si < m->amd.socket_count; si++) {
                        for (size_t k = 0; k < m->amd.sockets[si].rc_count; k++) {
                                const struct sim_amd_rc *rc = &m->amd.sockets[si].rcs[k];

                                if (rc->port_count != 1 || rc->ports[0] != p)
                                        continue;
                                snprintf(bdf, sizeof(bdf), "%04x:%02x", rc->domain, rc->bus);
                                r = ratio_of(seen, bdf, "rx");
                        }
                }

                if (!r)
                        continue; /* a port no PMU counts (an unmapped part) */
                if (!r->have_eff || fabs(r->eff - want) > UTIL_NOISE)
                        fail_msg("%s: %s %s rx effective %g, want %g", m->name, what, bdf, r->eff,
                                 want);
                checked++;
        }
        return checked;
}

/* Every description in the two directories, at its own kernel, and these
 * other kernels and length modes too. @full_ports: the machine has Root
 * Ports that a device below fills on its own, so the 1.000 and 0.900
 * checks must find some (a new machine is checked wherever it has them). */
struct variant {
        const char *machine;
        const char *kernel;   /* SimulateKernel, or NULL */
        const char *len_mode; /* LengthMode, or NULL */
};

static const struct variant variants[] = {
    {"kunpeng930-2p", "5.17", NULL}, /* payload only, no rx_mwr_flux */
    {"kunpeng930-2p", "6.9", "payload"},
    {"kunpeng930-2p", "6.9", "header"}, /* before 6.12: header + payload */
    {"kunpeng930-2p", NULL, "header"},  /* 6.12: headers only */
    {"spr-2s", "6.15", NULL},
};

static const char *const full_port_machines[] = {
    "kunpeng930-2p",   "kunpeng930-misconfig", "spr-2s",   "saturated-x4", "pmu-test",
    "alert-scenarios", "yitian710-1p",         "turin-2p", "grace-gh200",
};

static void run_case(const char *dir, const char *file, const char *kernel, const char *len_mode)
{
        char path[512], scaled[512], full[512], ninety[512], why[512], name[128];
        struct sim_machine *fm;
        struct seen *seen = calloc(3, sizeof(*seen));
        struct rewrite rw = {.how = OVER_SCALE};
        bool must = false;
        double unit;

        assert_non_null(seen);
        snprintf(path, sizeof(path), "%s", file);
        snprintf(name, sizeof(name), "%s", strrchr(file, '/') + 1);
        name[strcspn(name, ".")] = '\0';
        snprintf(scaled, sizeof(scaled), "%s/scaled-%s.json", dir, name);
        snprintf(full, sizeof(full), "%s/full-%s.json", dir, name);
        snprintf(ninety, sizeof(ninety), "%s/ninety-%s.json", dir, name);
        rewrite(path, scaled, &rw);
        rw.how = OVER_FULL;
        rewrite(path, full, &rw);
        assert_int_equal(sim_machine_load(full, &fm, why, sizeof(why)), 0);
        /* The plugin's options must match the machine's clocks. */
        unit = fm->clocks.flux_unit_bytes;
        if (unit < CALIB_FLUX_UNIT_MIN || unit > CALIB_FLUX_UNIT_MAX) {
                print_message("%s: FluxUnit cannot be its %g bytes: not run\n", name, unit);
                goto out;
        }
        rw = (struct rewrite){.how = OVER_NINETY, .full = fm};
        rewrite(path, ninety, &rw);
        run_engine(scaled, kernel, len_mode, unit, &seen[0]);
        run_engine(full, kernel, len_mode, unit, &seen[1]);
        run_engine(ninety, kernel, len_mode, unit, &seen[2]);
        for (int k = 0; k < 3; k++) {
                print_message("%s%s%s%s%s: %zu ratios, the largest %.4f (%s)\n", name,
                              kernel ? " kernel " : "", kernel ? kernel : "",
                              len_mode ? " length mode " : "", len_mode ? len_mode : "",
                              seen[k].samples, seen[k].worst, seen[k].worst_key);
                if (seen[k].worst > 1 + UTIL_NOISE)
                        fail_msg("%s: %s reads %g", name, seen[k].worst_key, seen[k].worst);
        }
        for (size_t i = 0; i < sizeof(full_port_machines) / sizeof(full_port_machines[0]); i++)
                must |= !strcmp(name, full_port_machines[i]);
        /* 5.17 has no rx_mwr_flux; headers alone (6.12 on) say no
         * payload, so no effective ratio. Elsewhere a port full of
         * MPS-sized writes must read 1.000, and one at 90 % 0.900. */
        if ((kernel && !strcmp(kernel, "5.17")) ||
            (len_mode && !strcmp(len_mode, "header") && !kernel))
                goto out;
        size_t n1 = check_full_ports(fm, &seen[1], 1.0, "full");
        size_t n9 = check_full_ports(fm, &seen[2], 0.9, "90 %");

        if (must) {
                assert_true(seen[1].samples > 0);
                assert_true(n1 > 0 && n9 > 0);
        }
out:
        sim_machine_free(fm);
        unlink(scaled);
        unlink(full);
        unlink(ninety);
        free(seen);
}

static int json_file(const struct dirent *e)
{
        size_t n = strlen(e->d_name);

        return n > 5 && !strcmp(e->d_name + n - 5, ".json");
}

static void test_every_machine_past_saturation(void **state)
{
        static const char *const dirs[] = {MACHINES, FIXTURES};
        char dir[256], file[512];
        size_t machines = 0;

        (void)state;
        snprintf(dir, sizeof(dir), "%s/pciescope-util-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(dir));
        for (size_t d = 0; d < 2; d++) {
                struct dirent **list;
                int n = scandir(dirs[d], &list, json_file, alphasort);

                assert_true(n > 0);
                for (int i = 0; i < n; i++) {
                        snprintf(file, sizeof(file), "%s/%s", dirs[d], list[i]->d_name);
                        run_case(dir, file, NULL, NULL);
                        machines++;
                        free(list[i]);
                }
                free(list);
        }
        assert_true(machines >= 9);
        for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
                snprintf(file, sizeof(file), "%s/%s.json", MACHINES, variants[v].machine);
                run_case(dir, file, variants[v].kernel, variants[v].len_mode);
        }
        rmdir(dir);
}

int main(void)
{
        /* 27 simulated trees are written and removed: in memory where the
         * machine has it (a tenth of the time on a busy disk). */
        if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
                setenv("TMPDIR", "/dev/shm", 0);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_formula),
            cmocka_unit_test(test_backpressure),
            cmocka_unit_test(test_every_machine_past_saturation),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
