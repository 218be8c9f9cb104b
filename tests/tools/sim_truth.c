// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_truth.c - print a simulated machine's ground truth per Root Port and
 * TLP class over [T0, T1] seconds, for the integration tests:
 *
 *   sim_truth MACHINE T0 T1
 *   -> "<port BDF> <class> <bytes/s incl. headers> <mean latency s or 0>"
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

int main(int argc, char **argv)
{
        struct sim *sim;
        char msg[512] = "";
        double t0, t1;

        if (argc != 4) {
                fprintf(stderr, "usage: sim_truth MACHINE T0 T1\n");
                return 2;
        }
        t0 = atof(argv[2]);
        t1 = atof(argv[3]);
        if (sim_open(argv[1], NULL, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "sim_truth: %s\n", msg);
                return 1;
        }
        const struct sim_machine *m = sim_machine(sim);

        for (size_t c = 0; c < m->core_count; c++) {
                for (size_t p = 0; p < m->cores[c].port_count; p++) {
                        size_t dev = m->cores[c].ports[p];
                        char bdf[32];

                        sim_device_bdf(&m->devices[dev], bdf, sizeof(bdf));
                        for (int cls = 0; cls < SIM_TLP_CLASSES; cls++) {
                                struct sim_truth t;

                                sim_truth_port(sim_pmu(sim), dev, cls, t0, t1, &t);
                                printf("%s %s %.6f %.12f\n", bdf, sim_tlp_class_name(cls),
                                       (t.payload_bytes + t.header_bytes) / (t1 - t0),
                                       t.tlps > 0 ? t.latency_ns / t.tlps / 1e9 : 0.0);
                        }
                }
        }
        sim_close(sim);
        return 0;
}
