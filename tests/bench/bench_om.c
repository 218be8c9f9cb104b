// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_om.c - `make bench-om` (part of `make bench`; never a timed test):
 * the CPU one scrape costs the host, for a page of 5,000 series shaped
 * like the pcie plugin's (6-7 labels, values with fractions).
 *
 *   render     a value changed since the last scrape: the page is written
 *              again (text and OpenMetrics)
 *   reorder    series came or went: sorted again, then written
 *   gzip       the rendered page compressed (Prometheus asks for gzip)
 *   shared     nothing changed: a concurrent scrape takes the page made
 *              for the one before
 *   baseline   the same 5,000 lines written with one snprintf each (no
 *              HELP/TYPE, no escaping): the cost of printing the numbers
 *
 * Goal (issue 16): a 5,000-series page renders in under 20 ms of CPU.
 * Printed as ratios to the goal and to the baseline of the same run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "om_store.h"
#include "rw_series.h"

#define NSERIES 5000
#define ROUNDS  41

static double cpu_ms(void)
{
        struct timespec t;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return (double)t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(*v), by_double);
        return v[n / 2];
}

struct series {
        char *packed;
        size_t len;
        char line[512]; /* for the baseline */
};

static void make_series(struct series *s, int i)
{
        static const char *const fam[] = {
            "pcie_port_bandwidth_bytes_per_second", "pcie_device_bandwidth_bytes_per_second",
            "pcie_link_width_lanes", "pcie_aer_errors_total", "pcie_port_utilization_ratio"};
        static const char *const dir[] = {"rx", "tx"}, *const tlp[] = {"mwr", "mrd", "cpl"};
        struct rw_labelset set;
        char bdf[32], pmu[32], port[32];

        snprintf(bdf, sizeof(bdf), "0000:%02x:%02x.%d", (i / 64) % 256, (i / 8) % 32, i % 8);
        snprintf(pmu, sizeof(pmu), "hisi_pcie%d_core%d", i % 2, (i / 2) % 3);
        snprintf(port, sizeof(port), "0000:%02x:00.0", (i / 40) % 256);
        rw_labelset_init(&set);
        rw_labelset_add(&set, "__name__", fam[i % 5]);
        rw_labelset_add(&set, "bdf", bdf);
        rw_labelset_add(&set, "pmu", pmu);
        rw_labelset_add(&set, "port", port);
        rw_labelset_add(&set, "direction", dir[i % 2]);
        rw_labelset_add(&set, "tlp", tlp[i % 3]);
        rw_labelset_add(&set, "simulated", "kunpeng930-2p");
        rw_labelset_finish(&set);
        s->packed = rw_series_pack(&set, i % 5 == 3 ? RW_KIND_COUNTER : RW_KIND_GAUGE, &s->len);
        snprintf(s->line, sizeof(s->line),
                 "%s{bdf=\"%s\",direction=\"%s\",pmu=\"%s\",port=\"%s\",simulated=\"%s\","
                 "tlp=\"%s\"}",
                 fam[i % 5], bdf, dir[i % 2], pmu, port, "kunpeng930-2p", tlp[i % 3]);
}

static double value(int i, int round)
{
        return (i % 5 == 3) ? (double)(i * 7 + round) : 1e9 / (i + 1) * (1 + round * 1e-3);
}

int main(void)
{
        static struct series s[NSERIES];
        struct om_store *st = om_store_new();
        double t_render[2][ROUNDS], t_reorder[ROUNDS], t_shared[ROUNDS], t_base[ROUNDS];
        double t_gzip[ROUNDS];
        size_t gzip_len = 0;
        size_t page_len = 0;
        char *buf = malloc(4 << 20);

        if (!st || !buf)
                return 1;
        for (int i = 0; i < NSERIES; i++) {
                make_series(&s[i], i);
                om_store_put(st, "bench", s[i].packed, s[i].len, value(i, 0), 0, NULL);
        }
        for (int r = 0; r < ROUNDS; r++) {
                for (int f = 0; f < 2; f++) {
                        const struct om_page *p;
                        double t;

                        /* one value changes: the next scrape renders */
                        om_store_put(st, "bench", s[r].packed, s[r].len, value(r, r + 1 + f), r,
                                     NULL);
                        t = cpu_ms();
                        p = om_store_page(st, (enum om_format)f);
                        t_render[f][r] = cpu_ms() - t;
                        page_len = p->len;
                        om_page_release(p);
                        t = cpu_ms();
                        p = om_store_page(st, (enum om_format)f);
                        if (f == 0)
                                t_shared[r] = cpu_ms() - t;
                        om_page_release(p);
                        if (f == 0) {
                                /* what a Prometheus scrape costs on top */
                                t = cpu_ms();
                                p = om_store_page_gzip(st, OM_FORMAT_TEXT);
                                t_gzip[r] = cpu_ms() - t;
                                gzip_len = p->len;
                                om_page_release(p);
                        }
                }
                {
                        const struct om_page *p;
                        double t;

                        /* a series goes and comes back: sorted again */
                        om_store_drop(st, "bench", INFINITY);
                        for (int i = 0; i < NSERIES; i++)
                                om_store_put(st, "bench", s[i].packed, s[i].len, value(i, r), r,
                                             NULL);
                        t = cpu_ms();
                        p = om_store_page(st, OM_FORMAT_TEXT);
                        t_reorder[r] = cpu_ms() - t;
                        om_page_release(p);
                }
                {
                        size_t o = 0;
                        double t = cpu_ms();

                        for (int i = 0; i < NSERIES; i++)
                                o += (size_t)snprintf(buf + o, (4 << 20) - o, "%s %.17g\n",
                                                      s[i].line, value(i, r));
                        t_base[r] = cpu_ms() - t;
                        if (o == 0)
                                return 1;
                }
        }
        {
                double text = median(t_render[0], ROUNDS), om = median(t_render[1], ROUNDS);
                double reorder = median(t_reorder, ROUNDS), shared = median(t_shared, ROUNDS);
                double base = median(t_base, ROUNDS), gz = median(t_gzip, ROUNDS);

                printf("bench_om: %d series, a %zu-byte page, median of %d rounds, CPU of one "
                       "thread\n",
                       NSERIES, page_len, ROUNDS);
                printf("  render (text)         %7.2f ms   %.2f of the 20 ms goal   %.2fx the "
                       "snprintf baseline\n",
                       text, text / 20, text / base);
                printf("  render (OpenMetrics)  %7.2f ms   %.2f of the 20 ms goal   %.2fx the "
                       "snprintf baseline\n",
                       om, om / 20, om / base);
                printf("  + gzip (Prometheus)   %7.2f ms   %.2f of the 20 ms goal with the "
                       "render; %zu bytes (%.1fx smaller)\n",
                       gz, (text + gz) / 20, gzip_len, (double)page_len / (double)gzip_len);
                printf("  reorder + render      %7.2f ms   %.2f of the 20 ms goal\n", reorder,
                       reorder / 20);
                printf("  shared page           %7.3f ms   (a concurrent scrape)\n", shared);
                printf("  baseline: snprintf    %7.2f ms   (the same lines, one call each)\n",
                       base);
        }
        for (int i = 0; i < NSERIES; i++)
                free(s[i].packed);
        om_store_free(st);
        free(buf);
        return 0;
}
