// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * golden_stream.c - the value stream the `pcie` plugin dispatches on a
 * simulated machine, under a fake clock, as text (one value a line):
 *
 *   golden_stream MACHINE KERNEL|- STEPS
 *
 * Every step is one collectd interval of 1 s: collector threads tick when
 * they are due (PTT devices at their window/poll times), then the read
 * callback's values follow in dispatch order. Each line holds what a write
 * plugin sees: the collectd identity, prom.name/prom.type, the labels
 * (sorted by name, simulated included) and the value. CPU-time values are
 * the collectors' own and differ run to run: shown as "cpu".
 *
 * Recorded before the engine refactor (issue 11) with the plugin's own
 * orchestration order; tests/integration/golden.sh compares the engine's
 * stream with it byte for byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "hw_env.h"
#include "intel_iio.h"
#include "pcie_monitor.h"
#include "pcie_topo.h"
#include "perf_pmu.h"
#include "ptt_capture.h"
#include "ptt_tune.h"
#include "sample_set.h"
#include "sim.h"
#include "uncore_discovery.h"

static double fake_now;

static double fake_clock(void *ctx)
{
        (void)ctx;
        return fake_now;
}

static void quiet_log(void *ctx, enum hw_log_level level, const char *msg)
{
        (void)ctx, (void)level, (void)msg;
}

static const char *machine_name;
static unsigned int step;

static int label_cmp(const void *a, const void *b)
{
        return strcmp(((const struct pcie_label *)a)->name, ((const struct pcie_label *)b)->name);
}

static int print_sample(void *ctx, const struct pcie_sample *s)
{
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS + 1];
        size_t n = 0;
        bool has_sim = false;

        (void)ctx;
        for (size_t i = 0; i < s->label_count; i++) {
                labels[n++] = s->labels[i];
                has_sim |= !strcmp(s->labels[i].name, "simulated");
        }
        if (!has_sim)
                labels[n++] = (struct pcie_label){"simulated", machine_name};
        qsort(labels, n, sizeof(labels[0]), label_cmp);
        printf("%u pcie/%s/%s/%s %s %s {", step, s->instance, s->type, s->type_instance,
               s->metric, pcie_metric_kind_name(s->kind));
        for (size_t i = 0; i < n; i++)
                printf("%s%s=\"%s\"", i ? "," : "", labels[i].name, labels[i].value);
        printf("} ");
        if (strstr(s->metric, "cpu_seconds"))
                printf("cpu\n");
        else if (s->kind == PCIE_METRIC_COUNTER)
                printf("%llu\n", (unsigned long long)s->counter);
        else
                printf("%.17g\n", s->gauge);
        return 0;
}

static void print_set(const struct sample_set *set)
{
        for (size_t i = 0; i < set->count; i++)
                print_sample(NULL, &set->samples[i]);
}

enum unit_kind { UNIT_HISI, UNIT_IIO, UNIT_PTT };

struct unit {
        enum unit_kind kind;
        void *c;
        double next;         /* hisi/iio: next tick; ptt: next publication */
        struct sample_set published;
        bool fresh;
};

static double unit_due(const struct unit *u)
{
        if (u->kind == UNIT_PTT) {
                double t = ptt_capture_next_tick(u->c);

                return t < u->next ? t : u->next;
        }
        return u->next;
}

static void unit_run(struct unit *u, double now)
{
        sample_set_clear(&u->published);
        if (u->kind == UNIT_HISI)
                hisi_pcie_core_tick(u->c, now, &u->published);
        else if (u->kind == UNIT_IIO)
                intel_iio_socket_tick(u->c, now, &u->published);
        else {
                if (now >= ptt_capture_next_tick(u->c))
                        ptt_capture_tick(u->c, now);
                if (now < u->next)
                        return;
                ptt_capture_samples(u->c, &u->published);
        }
        u->fresh = true;
        u->next += 1.0;
}

int main(int argc, char **argv)
{
        struct sim_opts so = {.clock = fake_clock};
        struct pcie_monitor_opts mopts;
        struct hisi_pcie_opts popts;
        struct intel_iio_opts iopts;
        struct ptt_capture_opts topts;
        struct pcie_topo_opts topo_opts = {.names = false, .read_sysfs = false};
        struct pcie_topo *topo = NULL;
        struct pcie_monitor *mon = NULL;
        struct uncore_inventory *inv = NULL;
        struct sample_set inv_samples = SAMPLE_SET_INIT, tune_set = SAMPLE_SET_INIT;
        struct ptt_tuner *tuner = NULL;
        struct hisi_pcie_pmu *pmus = NULL;
        struct intel_iio *iio = NULL;
        struct ptt_budget *budget = NULL;
        struct unit units[256];
        size_t nunits = 0, pmu_count = 0;
        char **ptt_names = NULL;
        struct bdf_filter filter = {0};
        struct hw_env env;
        struct sim *sim;
        char msg[512] = "";
        unsigned int steps;
        int nptt;

        if (argc != 4) {
                fprintf(stderr, "usage: golden_stream MACHINE KERNEL|- STEPS\n");
                return 2;
        }
        so.kernel = strcmp(argv[2], "-") ? argv[2] : NULL;
        steps = (unsigned int)atoi(argv[3]);
        if (sim_open(argv[1], &so, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "golden_stream: %s\n", msg);
                return 1;
        }
        machine_name = sim_machine(sim)->name;
        hw_env_init_system(&env);
        env.log = quiet_log;
        if (sim_env(sim, &env))
                return 1;

        /* pcie_init(): monitor, uncore inventory, tune, PMU threads. */
        pcie_monitor_opts_default(&mopts);
        mopts.read_sysfs = true;
        mopts.filter = &filter;
        if (pcie_monitor_new(&env, &mopts, &mon))
                return 1;
        if (!uncore_discover(&env, &inv))
                uncore_inventory_samples(inv, "simulated", machine_name, &inv_samples);
        ptt_tuner_new(&env, &tuner);

        hisi_pcie_opts_default(&popts);
        intel_iio_opts_default(&iopts);
        iopts.extra_label_name = "simulated";
        iopts.extra_label_value = machine_name;
        ptt_capture_opts_default(&topts);
        topts.extra_label_name = "simulated";
        topts.extra_label_value = machine_name;
        if (pcie_topo_scan(&env, &topo_opts, &topo))
                return 1;
        if (hisi_pcie_discover(&env, topo, &pmus, &pmu_count))
                pmu_count = 0;
        intel_iio_discover(&env, topo, &iopts, &iio);
        nptt = ptt_capture_list(&env, &ptt_names);
        for (size_t i = 0; i < pmu_count; i++) {
                struct hisi_pcie_core *core;

                if (hisi_pcie_core_new(&env, &pmus[i], topo, &popts, &core))
                        continue;
                units[nunits++] = (struct unit){UNIT_HISI, core, 0, SAMPLE_SET_INIT, false};
        }
        for (size_t i = 0; i < intel_iio_socket_count(iio); i++)
                units[nunits++] = (struct unit){UNIT_IIO, intel_iio_socket_at(iio, i), 0,
                                                SAMPLE_SET_INIT, false};
        if (nptt > 0 && ptt_budget_new(1, &budget))
                return 1;
        for (int i = 0; i < nptt; i++) {
                struct ptt_capture *cap;

                if (ptt_capture_new(&env, ptt_names[i], &topts, budget, (unsigned int)i,
                                    (unsigned int)nptt, fake_now, &cap, msg, sizeof(msg)))
                        continue;
                units[nunits++] = (struct unit){UNIT_PTT, cap, 0, SAMPLE_SET_INIT, false};
        }
        perf_pmu_list_free(ptt_names);
        pcie_topo_free(topo);
        /* Threads start: counters opened at t = 0, first tick at 1 s. */
        for (size_t i = 0; i < nunits; i++) {
                if (units[i].kind == UNIT_HISI)
                        hisi_pcie_core_start(units[i].c, fake_now);
                else if (units[i].kind == UNIT_IIO)
                        intel_iio_socket_start(units[i].c, fake_now);
                units[i].next = fake_now + 1.0;
        }

        for (step = 1; step <= steps; step++) {
                double target = step;

                /* Collector threads: everything due up to the read. */
                for (;;) {
                        double due = 1e300;
                        size_t which = 0;

                        for (size_t i = 0; i < nunits; i++) {
                                double d = unit_due(&units[i]);

                                if (d < due) {
                                        due = d;
                                        which = i;
                                }
                        }
                        if (due > target)
                                break;
                        fake_now = due;
                        unit_run(&units[which], due);
                }
                fake_now = target;
                /* pcie_read() */
                sim_refresh(sim);
                printf("%u pcie/simulated/simulation_info/%s pcie_simulation_info info "
                       "{kernel=\"%s\",machine=\"%s\",simulated=\"%s\"} 1\n",
                       step, machine_name, sim_kernel_name(sim_machine(sim)->kernel), machine_name,
                       machine_name);
                pcie_monitor_sample(mon, print_sample, NULL);
                print_set(&inv_samples);
                sample_set_clear(&tune_set);
                ptt_tuner_samples(tuner, "simulated", machine_name, &tune_set);
                print_set(&tune_set);
                for (size_t i = 0; i < nunits; i++) {
                        if (!units[i].fresh)
                                continue;
                        print_set(&units[i].published);
                        units[i].fresh = false;
                }
        }

        for (size_t i = 0; i < nunits; i++) {
                if (units[i].kind == UNIT_HISI)
                        hisi_pcie_core_free(units[i].c);
                else if (units[i].kind == UNIT_PTT)
                        ptt_capture_free(units[i].c);
                sample_set_free(&units[i].published);
        }
        intel_iio_free(iio);
        hisi_pcie_free(pmus, pmu_count);
        ptt_budget_free(budget);
        ptt_tuner_free(tuner);
        uncore_inventory_free(inv);
        sample_set_free(&inv_samples);
        sample_set_free(&tune_set);
        pcie_monitor_free(mon);
        sim_close(sim);
        return 0;
}
