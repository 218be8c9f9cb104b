// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_remote_write.c - `make bench` (never a timed test):
 *   1. encode + snappy-compress throughput on one core (thread CPU time),
 *      with and without metadata, for series shaped like the pcie
 *      plugin's (7 labels);
 *   2. with a receiver URL as argument: send throughput through one
 *      endpoint (queue, encoding, libcurl) against that local receiver,
 *      in samples/s of wall time and CPU per sample of this process.
 * Goal (issue 5): >= 1 M samples/s encode+compress on one core.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rw_encode.h"
#include "rw_endpoint.h"
#include "rw_series.h"

#define NSERIES 20000
#define BATCH   2000

static double clock_s(clockid_t id)
{
        struct timespec t;

        clock_gettime(id, &t);
        return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double process_cpu(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
}

static char *make_series(int i)
{
        static const char *const dirs[] = {"rx", "tx"};
        static const char *const tlps[] = {"mwr", "mrd", "cpl"};
        struct rw_labelset s;
        char bdf[32], port[32];

        snprintf(bdf, sizeof(bdf), "0000:%02x:%02x.%d", (i / 256) % 256, (i / 8) % 32, i % 8);
        snprintf(port, sizeof(port), "0000:%02x:00.0", (i / 256) % 256);
        rw_labelset_init(&s);
        rw_labelset_add(&s, "__name__", "pcie_port_bandwidth_bytes_total");
        rw_labelset_add(&s, "bdf", bdf);
        rw_labelset_add(&s, "root_port", port);
        rw_labelset_add(&s, "direction", dirs[i % 2]);
        rw_labelset_add(&s, "tlp", tlps[i % 3]);
        rw_labelset_add(&s, "pmu", "hisi_pcie0_core1");
        rw_labelset_add(&s, "instance", "node-0042.example.net");
        rw_labelset_finish(&s);
        return rw_series_pack(&s, RW_KIND_COUNTER, NULL);
}

static void bench_encode(struct rw_sample *s, bool metadata)
{
        struct rw_encoder *e = rw_encoder_new(metadata);
        const uint8_t *out;
        size_t len, raw, total = 0, bytes = 0, rawb = 0;
        double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID), dt;

        do {
                for (size_t off = 0; off < NSERIES; off += BATCH) {
                        if (rw_encode(e, s + off, BATCH, &out, &len, &raw)) {
                                fprintf(stderr, "encode failed\n");
                                exit(1);
                        }
                        total += BATCH;
                        bytes += len;
                        rawb += raw;
                }
                dt = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        } while (dt < 2.0);
        printf("encode+compress (%s metadata): %.2f M samples/s on one core, %.0f ns/sample, "
               "%.1f bytes/sample on the wire (%.1f before snappy); goal >= 1 M/s: %s\n",
               metadata ? "with" : "without", total / dt / 1e6, dt / total * 1e9,
               (double)bytes / total, (double)rawb / total, total / dt >= 1e6 ? "met" : "NOT met");
        rw_encoder_free(e);
}

static void blog(void *ctx, int level, const char *fmt, ...)
{
        (void)ctx;
        (void)level;
        (void)fmt;
}

static void bench_send(const char *url, struct rw_sample *s)
{
        struct rw_endpoint_cfg c;
        struct rw_endpoint *ep;
        struct rw_endpoint_stats st;
        char err[512];
        const size_t total = 1000000;
        double w0, c0, w, cpu;

        rw_endpoint_cfg_init(&c);
        c.name = strdup("bench");
        c.url = strdup(url);
        c.queue_capacity = 200000;
        c.batch_deadline = 0.05;
        c.timeout = 30;
        if (rw_endpoint_new(&c, "pciescope-remote-write/bench", blog, NULL, &ep, err,
                            sizeof(err)) ||
            rw_endpoint_start(ep)) {
                fprintf(stderr, "endpoint: %s\n", err);
                exit(1);
        }
        w0 = clock_s(CLOCK_MONOTONIC);
        c0 = process_cpu();
        for (size_t i = 0; i < total; i++) {
                const char *src = s[i % NSERIES].series, *p = rw_packed_first(src);
                struct rw_sample x = {NULL, (double)i,
                                      1700000000000 + (int64_t)(i / NSERIES) * 1000};
                size_t len = 2;

                for (size_t k = 0; k < 2 * rw_packed_nlabels(src); k++) {
                        len += strlen(p) + 1;
                        p += strlen(p) + 1;
                }
                /* What a write callback does per value: one packed copy. */
                x.series = malloc(len);
                memcpy(x.series, src, len);
                while (rw_endpoint_push(ep, &x) == -ENOSPC) {
                        x.series = malloc(len);
                        memcpy(x.series, s[i % NSERIES].series, len);
                        usleep(200);
                }
        }
        do {
                usleep(2000);
                rw_endpoint_get_stats(ep, &st);
        } while (st.samples_sent + st.samples_failed < total &&
                 clock_s(CLOCK_MONOTONIC) - w0 < 120);
        w = clock_s(CLOCK_MONOTONIC) - w0;
        cpu = process_cpu() - c0;
        printf("send to %s: %zu samples in %.2f s = %.0f k samples/s, %llu requests, "
               "%.0f ns CPU/sample in this process (queue, encode, libcurl), %llu failed, %llu "
               "dropped (queue full, retried)\n",
               url, (size_t)st.samples_sent, w, st.samples_sent / w / 1e3,
               (unsigned long long)st.requests, cpu / total * 1e9,
               (unsigned long long)st.samples_failed,
               (unsigned long long)st.dropped[RW_DROP_QUEUE_FULL]);
        rw_endpoint_stop(ep);
}

int main(int argc, char **argv)
{
        struct rw_sample *s = calloc(NSERIES, sizeof(*s));

        for (int i = 0; i < NSERIES; i++)
                s[i] = (struct rw_sample){make_series(i), i * 1.5, 1700000000000 + i};
        bench_encode(s, false);
        bench_encode(s, true);
        if (argc > 1)
                bench_send(argv[1], s);
        for (int i = 0; i < NSERIES; i++)
                free(s[i].series);
        free(s);
        return 0;
}
