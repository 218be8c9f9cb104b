// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_truth.c - print a simulated machine's ground truth per Root Port and
 * TLP class over [T0, T1] seconds, for the integration tests:
 *
 *   sim_truth MACHINE T0 T1
 *   -> "<port BDF> <class> <bytes/s incl. headers> <mean latency s or 0>"
 *   sim_truth MACHINE T0 T1 payload
 *   -> "<port BDF> <class> <payload bytes/s carried> <payload bytes/s asked>"
 *      (a workload asking more than its links carry is slowed down:
 *      sim_traffic_backpressure), and no IIO lines
 * and on Intel machines, per IIO stack part with a Root Port:
 *   -> "iio <socket id> <box id> <part> <port BDF> <inbound bytes/s> <constant>"
 * where constant is 1 when the part's rate is the same a while later (no
 * phases), so a test may compare it with any interval's value; and on AMD
 * machines, per IO root complex (local and remote memory together):
 *   -> "df <socket id> <root complex index> <DMA read bytes/s> <DMA write bytes/s>"
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "sim.h"
#include "sim_intel_iio.h"
#include "sim_amd_df.h"

/* One Root Port's lines: per TLP class, bytes/s and latency, or payload
 * carried and asked. */
static void print_port(struct sim *sim, size_t dev, double t0, double t1, bool payload)
{
        const struct sim_machine *m = sim_machine(sim);
        char bdf[32];

        sim_device_bdf(&m->devices[dev], bdf, sizeof(bdf));
        for (int cls = 0; cls < SIM_TLP_CLASSES; cls++) {
                struct sim_truth t;

                sim_truth_port(sim_pmu(sim), dev, cls, t0, t1, &t);
                if (payload) {
                        printf("%s %s %.6f %.6f\n", bdf, sim_tlp_class_name(cls),
                               t.payload_bytes / (t1 - t0), t.offered_payload_bytes / (t1 - t0));
                        continue;
                }
                printf("%s %s %.6f %.12f\n", bdf, sim_tlp_class_name(cls),
                       (t.payload_bytes + t.header_bytes) / (t1 - t0),
                       t.tlps > 0 ? t.latency_ns / t.tlps / 1e9 : 0.0);
        }
}

int main(int argc, char **argv)
{
        struct sim *sim;
        char msg[512] = "";
        double t0, t1;

        bool payload = argc == 5 && !strcmp(argv[4], "payload");

        if (argc != 4 && !payload) {
                fprintf(stderr, "usage: sim_truth MACHINE T0 T1 [payload]\n");
                return 2;
        }
        t0 = atof(argv[2]);
        t1 = atof(argv[3]);
        if (sim_open(argv[1], NULL, &sim, msg, sizeof(msg))) {
                fprintf(stderr, "sim_truth: %s\n", msg);
                return 1;
        }
        const struct sim_machine *m = sim_machine(sim);

        for (size_t c = 0; c < m->core_count; c++)
                for (size_t p = 0; p < m->cores[c].port_count; p++)
                        print_port(sim, m->cores[c].ports[p], t0, t1, payload);
        /* The DesignWare root complexes' and NVIDIA Grace's Root Ports: the
         * same truth (what the devices below moved does not depend on which
         * PMU counts it). */
        for (size_t p = 0; p < m->dwc.port_count; p++)
                print_port(sim, m->dwc.ports[p], t0, t1, payload);
        for (size_t si = 0; si < m->nvidia.socket_count; si++)
                for (size_t p = 0; p < m->nvidia.sockets[si].port_count; p++)
                        print_port(sim, m->nvidia.sockets[si].ports[p], t0, t1, payload);
        for (size_t si = 0; si < m->intel.socket_count && !payload; si++) {
                const struct sim_socket *so = &m->intel.sockets[si];

                for (size_t k = 0; k < so->stack_count; k++) {
                        const struct sim_iio_stack *st = &so->stacks[k];

                        for (size_t p = 0; p < st->port_count; p++) {
                                const struct sim_device *d = &m->devices[st->ports[p]];
                                unsigned int part = d->dev - 1u;
                                double in, out, in2, out2;
                                char bdf[32];

                                sim_device_bdf(d, bdf, sizeof(bdf));
                                sim_truth_iio_part(sim_iio(sim), si, k, part, t0, t1, &in, &out);
                                sim_truth_iio_part(sim_iio(sim), si, k, part, t0 + 7.3, t1 + 7.3,
                                                   &in2, &out2);
                                printf("iio %u %u %u %s %.6f %d\n", so->id, st->box_id, part, bdf,
                                       in / (t1 - t0), fabs(in - in2) <= 1e-9 * (in + 1));
                        }
                }
        }
        for (size_t si = 0; si < m->amd.socket_count; si++) {
                for (size_t k = 0; k < m->amd.sockets[si].rc_count; k++) {
                        unsigned int rc = m->amd.sockets[si].rcs[k].index;
                        double rd, wr, rd2, wr2;

                        sim_truth_df(sim_df(sim), si, rc, false, t0, t1, &rd, &wr);
                        sim_truth_df(sim_df(sim), si, rc, true, t0, t1, &rd2, &wr2);
                        printf("df %u %u %.6f %.6f\n", m->amd.sockets[si].id, rc,
                               (rd + rd2) / (t1 - t0), (wr + wr2) / (t1 - t0));
                }
        }
        sim_close(sim);
        return 0;
}
