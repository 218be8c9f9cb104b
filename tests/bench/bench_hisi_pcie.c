// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_hisi_pcie.c - CPU cost of the hisi_pcie collector per PCIe core per
 * interval, on the simulated kunpeng930-2p.
 *
 * Each core's collector ticks N times on this thread with a fake clock
 * advancing one second per interval (so nothing sleeps). Thread CPU time is
 * taken around every tick; the time spent inside the simulated perf ops is
 * measured separately and subtracted, because on hardware those are
 * syscalls into the driver, not our code. The baseline, measured in the
 * same run, is the least any collector must do: one group read per enabled
 * measurement per interval through the same ops.
 *
 * Goal (issue 3): <= 1 ms CPU per monitored PCIe core per 1 s interval.
 *
 * The same for the Intel IIO collector per socket on the simulated spr-2s
 * (every stack mapped, so utilisation is computed too); its baseline is one
 * group read per stack (ioclk + bw_in_port0..7), what any reader must do.
 *
 *   bench_hisi_pcie [MACHINE_DIR] [INTERVALS]
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "intel_iio.h"
#include "perf_pmu.h"
#include "hw_env.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "sample.h"
#include "sim.h"

static double fake_now = 1000;
static double ops_cpu; /* seconds spent inside the simulated perf ops */
static const struct perf_ops *inner;

static double fake_clock(void *ctx)
{
        (void)ctx;
        return fake_now;
}

static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A timing shim around the simulated ops. */
static int t_open(void *ctx, struct perf_event_attr *a, pid_t pid, int cpu, int g, unsigned long f)
{
        double t = cpu_now();
        int r = inner->open(ctx, a, pid, cpu, g, f);

        ops_cpu += cpu_now() - t;
        return r;
}

static ssize_t t_read(void *ctx, int fd, void *buf, size_t len)
{
        double t = cpu_now();
        ssize_t r = inner->read(ctx, fd, buf, len);

        ops_cpu += cpu_now() - t;
        return r;
}

static int t_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
        double t = cpu_now();
        int r = inner->ioctl(ctx, fd, req, arg);

        ops_cpu += cpu_now() - t;
        return r;
}

static int t_close(void *ctx, int fd)
{
        double t = cpu_now();
        int r = inner->close(ctx, fd);

        ops_cpu += cpu_now() - t;
        return r;
}

static void use_shim(struct hw_env *env, struct perf_ops *shim)
{
        inner = env->perf;
        *shim = *inner;
        shim->open = t_open;
        shim->read = t_read;
        shim->ioctl = t_ioctl;
        shim->close = t_close;
        env->perf = shim;
}

/* The Intel IIO collector, one socket at a time. */
static int bench_iio(const char *dir, int intervals)
{
        static const struct {
                const char *pmu;
                unsigned int socket;
                uint8_t bus;
        } maps[] = {{"uncore_iio_free_running_2", 0, 0x15},
                    {"uncore_iio_free_running_4", 0, 0x26},
                    {"uncore_iio_free_running_6", 0, 0x37},
                    {"uncore_iio_free_running_2", 1, 0x97},
                    {"uncore_iio_free_running_4", 1, 0xa8}};
        struct sim_opts so = {.machine_dir = dir, .clock = fake_clock};
        struct pcie_topo_opts to = {0};
        struct intel_iio_opts opts;
        struct intel_iio *iio = NULL;
        struct pcie_topo *topo;
        struct perf_ops shim;
        struct hw_env env;
        struct sim *sim;
        char msg[512] = "";
        double worst = 0;

        if (sim_open("spr-2s", &so, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "bench: %s\n", msg);
                return 1;
        }
        hw_env_init_system(&env);
        intel_iio_opts_default(&opts);
        for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
                snprintf(opts.maps[i].pmu, sizeof(opts.maps[i].pmu), "%s", maps[i].pmu);
                opts.maps[i].socket = maps[i].socket;
                opts.maps[i].bus = maps[i].bus;
                opts.map_count++;
        }
        if (sim_env(sim, &env) || pcie_topo_scan(&env, &to, &topo) ||
            intel_iio_discover(&env, topo, &opts, &iio) || !iio) {
                fprintf(stderr, "bench: cannot set up the simulated spr-2s\n");
                return 1;
        }
        use_shim(&env, &shim);
        printf("\nSIMULATED spr-2s: %zu sockets, %zu IIO stacks (%zu mapped), %d intervals each\n",
               intel_iio_socket_count(iio), intel_iio_stack_count(iio), intel_iio_mapped_count(iio),
               intervals);
        printf("%-18s %6s %12s %12s %12s %8s\n", "socket", "stacks", "total us", "ours us",
               "baseline us", "ratio");
        for (size_t i = 0; i < intel_iio_socket_count(iio); i++) {
                struct intel_iio_socket *sock = intel_iio_socket_at(iio, i);
                struct sample_set set = SAMPLE_SET_INIT;
                struct perf_group *groups[16];
                double total = 0, ours = 0, base = 0;
                size_t n = 0, stacks = intel_iio_socket_stacks(sock);
                char **names = NULL;
                int cpu = -1, count;

                if (intel_iio_socket_start(sock, fake_now)) {
                        fprintf(stderr, "bench: %s did not start\n", intel_iio_socket_name(sock));
                        return 1;
                }
                for (int t = 0; t < intervals; t++) {
                        fake_now += 1;
                        sample_set_clear(&set);
                        double ops0 = ops_cpu, c0 = cpu_now();

                        intel_iio_socket_tick(sock, fake_now, &set);
                        double spent = cpu_now() - c0;

                        total += spent;
                        ours += spent - (ops_cpu - ops0);
                }
                intel_iio_socket_stop(sock);

                /* Baseline: one 9-event group per stack of this socket,
                 * read once per interval. */
                count = perf_pmu_list(&env, "uncore_iio_free_running_", &names);
                for (int k = 0; k < count && n < stacks && n < 16; k++) {
                        struct perf_event_attr attrs[9];
                        struct perf_pmu *pmu;
                        size_t a = 0;

                        if (perf_pmu_load(&env, names[k], &pmu))
                                continue;
                        /* The socket's CPU is the i-th of the cpumask when
                         * the PMU has a box on every socket. */
                        cpu = perf_pmu_cpu(pmu, i < perf_pmu_cpu_count(pmu) ? i : 0);
                        if (i >= perf_pmu_cpu_count(pmu)) {
                                perf_pmu_free(pmu);
                                continue;
                        }
                        if (!perf_pmu_event_attr(pmu, "ioclk", &attrs[a]))
                                a++;
                        for (int p = 0; p < 8; p++) {
                                char ev[32];

                                snprintf(ev, sizeof(ev), "bw_in_port%d", p);
                                if (!perf_pmu_event_attr(pmu, ev, &attrs[a]))
                                        a++;
                        }
                        if (perf_group_open(&env, attrs, a, cpu, &groups[n], NULL) == 0) {
                                perf_group_enable(groups[n]);
                                n++;
                        }
                        perf_pmu_free(pmu);
                }
                perf_pmu_list_free(names);
                for (int t = 0; t < intervals; t++) {
                        struct perf_group_reading r;

                        fake_now += 1;
                        double ops0 = ops_cpu, c0 = cpu_now();

                        for (size_t g = 0; g < n; g++)
                                perf_group_read(groups[g], &r);
                        base += (cpu_now() - c0) - (ops_cpu - ops0);
                }
                for (size_t g = 0; g < n; g++)
                        perf_group_close(groups[g]);

                double per_total = total / intervals * 1e6, per_ours = ours / intervals * 1e6;
                double per_base = base / intervals * 1e6;

                printf("%-18s %6zu %12.1f %12.1f %12.2f %8.1f\n", intel_iio_socket_name(sock),
                       stacks, per_total, per_ours, per_base,
                       per_base > 0 ? per_ours / per_base : 0);
                worst = per_ours > worst ? per_ours : worst;
                sample_set_free(&set);
        }
        printf("IIO collector CPU per socket per interval: worst %.1f us; goal <= 1000 us: %s "
               "(worst/goal = %.3f)\n",
               worst, worst <= 1000 ? "met" : "MISSED", worst / 1000);
        intel_iio_free(iio);
        pcie_topo_free(topo);
        sim_close(sim);
        return 0;
}

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : sim_default_machine_dir();
        int intervals = argc > 2 ? atoi(argv[2]) : 300;
        struct sim_opts so = {.machine_dir = dir, .clock = fake_clock};
        struct pcie_topo_opts to = {0};
        struct hisi_pcie_pmu *pmus;
        struct pcie_topo *topo;
        struct hisi_pcie_opts opts;
        struct perf_ops shim;
        struct hw_env env;
        struct sim *sim;
        char msg[512] = "";
        size_t count;

        if (intervals < 10)
                intervals = 10;
        if (sim_open("kunpeng930-2p", &so, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "bench: %s\n", msg);
                return 1;
        }
        hw_env_init_system(&env);
        if (sim_env(sim, &env) || pcie_topo_scan(&env, &to, &topo) ||
            hisi_pcie_discover(&env, topo, &pmus, &count) || count == 0) {
                fprintf(stderr, "bench: cannot set up the simulated machine\n");
                return 1;
        }
        use_shim(&env, &shim);
        hisi_pcie_opts_default(&opts);

        printf("SIMULATED kunpeng930-2p: %zu PCIe cores, %d one-second intervals each\n", count,
               intervals);
        printf("%-18s %6s %12s %12s %12s %8s\n", "core", "plan", "total us", "ours us",
               "baseline us", "ratio");
        double worst = 0, sum_ours = 0;

        for (size_t i = 0; i < count; i++) {
                struct hisi_pcie_core *core;
                struct sample_set set = SAMPLE_SET_INIT;
                double total = 0, ours = 0, base = 0;
                size_t planned;

                if (hisi_pcie_core_new(&env, &pmus[i], topo, &opts, &core) ||
                    hisi_pcie_core_start(core, fake_now)) {
                        fprintf(stderr, "bench: %s did not start\n", pmus[i].name);
                        return 1;
                }
                for (int t = 0; t < intervals; t++) {
                        fake_now += 1;
                        sample_set_clear(&set);
                        double ops0 = ops_cpu, c0 = cpu_now();

                        hisi_pcie_core_tick(core, fake_now, &set);
                        double spent = cpu_now() - c0;

                        total += spent;
                        ours += spent - (ops_cpu - ops0);
                }
                planned = hisi_pcie_core_measurements(core);
                hisi_pcie_core_free(core);

                /* Baseline: open the same number of pairs that one window
                 * holds and read each once per interval, nothing else. */
                struct perf_group *groups[8];
                size_t n = 0;

                for (int pair = 0; pair < HISI_PAIRS && n < 8; pair++) {
                        struct hisi_pcie_filter f = {.port = pmus[i].ports[0].bit};
                        struct perf_event_attr attrs[2];

                        if (hisi_pcie_pair_attrs(&pmus[i], pair, &f, attrs) == 0 &&
                            perf_group_open(&env, attrs, 2, pmus[i].cpu, &groups[n], NULL) == 0) {
                                perf_group_enable(groups[n]);
                                n++;
                        }
                }
                for (int t = 0; t < intervals; t++) {
                        struct perf_group_reading r;

                        fake_now += 1;
                        double ops0 = ops_cpu, c0 = cpu_now();

                        for (size_t g = 0; g < n; g++)
                                perf_group_read(groups[g], &r);
                        base += (cpu_now() - c0) - (ops_cpu - ops0);
                }
                for (size_t g = 0; g < n; g++)
                        perf_group_close(groups[g]);

                double per_total = total / intervals * 1e6, per_ours = ours / intervals * 1e6;
                double per_base = base / intervals * 1e6;

                printf("%-18s %6zu %12.1f %12.1f %12.2f %8.1f\n", pmus[i].name, planned, per_total,
                       per_ours, per_base, per_base > 0 ? per_ours / per_base : 0);
                worst = per_ours > worst ? per_ours : worst;
                sum_ours += per_ours;
                sample_set_free(&set);
        }
        printf("collector CPU per core per interval: mean %.1f us, worst %.1f us; goal <= 1000 us: "
               "%s (worst/goal = %.3f)\n",
               sum_ours / (double)count, worst, worst <= 1000 ? "met" : "MISSED", worst / 1000);
        hisi_pcie_free(pmus, count);
        pcie_topo_free(topo);
        sim_close(sim);
        return bench_iio(dir, intervals);
}
