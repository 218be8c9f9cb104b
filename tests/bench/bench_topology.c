// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_topology.c - a live sysfs scan of a SIMULATED machine of 1,008
 * functions (28 PCIe cores x 4 Root Ports, each with an 8-function
 * endpoint below), the way `pciescope topology` scans: libpci's sysfs
 * method over the simulated tree, the tree built, names looked up in
 * pci.ids and each function's numa_node read. Writing the tree (sim_open)
 * is not timed. Goal (issue 17): at most 50 ms; the best of 5 scans is
 * printed next to it.
 *
 *   bench_topology MACHINE_DIR_UNUSED
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw_env.h"
#include "pcie_topo.h"
#include "sim.h"

#define GOAL_MS 50.0

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 2 SICLs x 14 cores; a core's 4 Root Ports sit on one root bus (4 cores
 * per root bus, devices 8 * (core & 3) + 0, 2, 4, 6), each with one
 * endpoint of functions 0-7 on its own bus. Format: docs/simulator.md. */
static int write_machine(const char *path)
{
        FILE *f = fopen(path, "w");

        if (!f)
                return -1;
        fprintf(f, "{\"machine\": \"bench1008\", \"cpus\": 64, \"sicls\": [");
        for (int s = 0; s < 2; s++) {
                fprintf(f, "%s{\"id\": %d, \"numa_node\": %d, \"cores\": [", s ? "," : "", s, s);
                for (int c = 0; c < 14; c++) {
                        int g = s * 14 + c, root = (g / 4) * 0x20, grp = g % 4;

                        fprintf(f, "%s{\"id\": %d, \"root_ports\": [", c ? "," : "", c);
                        for (int r = 0; r < 4; r++) {
                                int sec = root + 1 + grp * 4 + r;

                                fprintf(f,
                                        "%s{\"bdf\": \"0000:%02x:%02x.0\", \"vendor\": \"0x19e5\", "
                                        "\"device\": \"0xa120\", \"link\": {\"max_speed\": "
                                        "\"16GT/s\", \"max_width\": 8}, \"children\": [",
                                        r ? "," : "", root, grp * 8 + r * 2);
                                for (int fn = 0; fn < 8; fn++)
                                        fprintf(f,
                                                "%s{\"bdf\": \"0000:%02x:00.%d\", \"vendor\": "
                                                "\"0x15b3\", \"device\": \"0x1021\", \"class\": "
                                                "\"0x020000\", \"link\": {\"max_speed\": "
                                                "\"16GT/s\", \"max_width\": 8}}",
                                                fn ? "," : "", sec, fn);
                                fprintf(f, "]}");
                        }
                        fprintf(f, "]}");
                }
                fprintf(f, "]}");
        }
        fprintf(f, "]}\n");
        return fclose(f);
}

int main(void)
{
        char dir[] = "/tmp/bench_topology.XXXXXX", path[64], msg[512] = "";
        struct sim_opts so = {0};
        struct pcie_topo_opts to = {.names = true, .read_sysfs = true};
        struct hw_env env;
        struct sim *sim;
        double best = 1e9;
        size_t count = 0;

        if (!mkdtemp(dir))
                return 1;
        snprintf(path, sizeof(path), "%s/bench1008.json", dir);
        if (write_machine(path)) {
                fprintf(stderr, "bench_topology: cannot write %s\n", path);
                return 1;
        }
        if (sim_open(path, &so, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "bench_topology: %s\n", msg);
                return 1;
        }
        hw_env_init_system(&env);
        if (sim_env(sim, &env)) {
                fprintf(stderr, "bench_topology: no simulated environment\n");
                return 1;
        }
        for (int r = 0; r < 5; r++) {
                struct pcie_topo *topo;
                double t0 = now(), t;

                if (pcie_topo_scan(&env, &to, &topo)) {
                        fprintf(stderr, "bench_topology: the scan failed\n");
                        return 1;
                }
                t = now() - t0;
                best = t < best ? t : best;
                count = pcie_topo_count(topo);
                pcie_topo_free(topo);
        }
        printf("live sysfs topology scan, SIMULATED machine of %zu functions (names, numa_node): "
               "%.1f ms (best of 5), goal <= %.0f ms: %s\n",
               count, best * 1e3, GOAL_MS, best * 1e3 <= GOAL_MS ? "met" : "NOT met");
        sim_close(sim);
        unlink(path);
        rmdir(dir);
        return 0;
}
