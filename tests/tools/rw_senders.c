// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_senders.c - N lightweight hosts, each one remote_write endpoint of
 * writer/ (the plugin's own sender, no collectd) with its own spool, for
 * the fleet-behaviour test and bench (remote_write_fleet.sh,
 * bench_rw_fleet.sh): every --interval s each host produces one sample of
 * each of its --series series, named
 *   rwsend_seq{instance="host-0007",series="012"}   (--name-prefix: "host-")
 * with the value k at tick k (1, 2, ...), so a receiver's copy can be
 * checked sample by sample against what was produced.
 *
 *   rw_senders --url URL --hosts N [--series S] [--interval S]
 *              [--duration S] [--drain S] [--spool-root DIR]
 *              [--batch-deadline S] [--max-backoff S] [--replay-share X]
 *              [--legacy] [--spread-collect] [--seed K] [--name-prefix P]
 *              [--header "Name: value"]... [--bearer-token-file F]
 *              [--retry429 0|1]
 *
 * All hosts produce at the same instant (the worst case: reads aligned to
 * the wall clock) unless --spread-collect. --legacy is the sender before
 * issue 27: no send phase, no jitter, no replay limit. After --duration the
 * hosts stop producing and get up to --drain s to send what is left.
 * stdout: one line a second,
 *   t <unix s> pushed <n> sent <n> dropped <n> retried <n> requests <n> failed <n> backlog <n>
 * (totals over the hosts; backlog = pushed - sent - dropped), then one JSON
 * object with the totals (dropped also by reason, "dropped_<reason>").
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "rw_encode.h"
#include "rw_endpoint.h"
#include "rw_pace.h"
#include "rw_series.h"

struct host {
        struct rw_endpoint *ep;
        char **series;
        size_t *len;
        uint64_t pushed;
        double collect_offset;
};

static double wall(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
        double d = t - wall();

        if (d > 0) {
                struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};

                nanosleep(&ts, NULL);
        }
}

static void lg(void *ctx, int level, const char *fmt, ...)
{
        static atomic_int said;
        va_list ap;

        (void)ctx;
        /* The first few lines only: a thousand hosts say the same. */
        if (level > RW_LOG_WARNING || atomic_fetch_add(&said, 1) >= 20)
                return;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static volatile sig_atomic_t stop_now;

static void on_term(int sig)
{
        (void)sig;
        stop_now = 1;
}

static void totals(struct host *h, int n, struct rw_endpoint_stats *sum, uint64_t *pushed)
{
        memset(sum, 0, sizeof(*sum));
        *pushed = 0;
        for (int i = 0; i < n; i++) {
                struct rw_endpoint_stats st;

                rw_endpoint_get_stats(h[i].ep, &st);
                sum->samples_sent += st.samples_sent;
                sum->samples_retried += st.samples_retried;
                sum->requests += st.requests;
                sum->requests_failed += st.requests_failed;
                sum->spool_bytes += st.spool_bytes;
                for (int r = 0; r < RW_DROP_NREASONS; r++)
                        sum->dropped[r] += st.dropped[r];
                *pushed += h[i].pushed;
        }
}

static uint64_t dropped(const struct rw_endpoint_stats *s)
{
        uint64_t d = 0;

        for (int r = 0; r < RW_DROP_NREASONS; r++)
                d += s->dropped[r];
        return d;
}

static void report(struct host *h, int n, FILE *out)
{
        struct rw_endpoint_stats s;
        uint64_t pushed;

        totals(h, n, &s, &pushed);
        fprintf(out,
                "t %.3f pushed %" PRIu64 " sent %" PRIu64 " dropped %" PRIu64 " retried %" PRIu64
                " requests %" PRIu64 " failed %" PRIu64 " backlog %" PRId64 "\n",
                wall(), pushed, s.samples_sent, dropped(&s), s.samples_retried, s.requests,
                s.requests_failed, (int64_t)(pushed - s.samples_sent - dropped(&s)));
        fflush(out);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"url", required_argument, NULL, 'u'},
            {"hosts", required_argument, NULL, 'n'},
            {"series", required_argument, NULL, 's'},
            {"interval", required_argument, NULL, 'i'},
            {"duration", required_argument, NULL, 'd'},
            {"drain", required_argument, NULL, 'D'},
            {"spool-root", required_argument, NULL, 'r'},
            {"batch-deadline", required_argument, NULL, 'b'},
            {"max-backoff", required_argument, NULL, 'm'},
            {"replay-share", required_argument, NULL, 'R'},
            {"legacy", no_argument, NULL, 'L'},
            {"spread-collect", no_argument, NULL, 'S'},
            {"seed", required_argument, NULL, 'k'},
            {"name-prefix", required_argument, NULL, 'p'},
            {"header", required_argument, NULL, 'H'},
            {"bearer-token-file", required_argument, NULL, 'T'},
            {"retry429", required_argument, NULL, 'Q'},
            {NULL, 0, NULL, 0},
        };
        const char *url = NULL, *spool_root = NULL, *prefix = "host-", *token = NULL;
        const char *headers[8];
        size_t nheaders = 0;
        int retry429 = -1;
        int nhosts = 10, nseries = 10, c;
        double interval = 10, duration = 60, drain = 60, bd = 5, max_backoff = 5, share = -1;
        bool legacy = false, spread = false;
        uint64_t seed = 1;
        struct host *h;
        struct rw_rng rng;
        double t0, next_report;
        uint64_t tick = 0;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'u':
                        url = optarg;
                        break;
                case 'n':
                        nhosts = atoi(optarg);
                        break;
                case 's':
                        nseries = atoi(optarg);
                        break;
                case 'i':
                        interval = atof(optarg);
                        break;
                case 'd':
                        duration = atof(optarg);
                        break;
                case 'D':
                        drain = atof(optarg);
                        break;
                case 'r':
                        spool_root = optarg;
                        break;
                case 'b':
                        bd = atof(optarg);
                        break;
                case 'm':
                        max_backoff = atof(optarg);
                        break;
                case 'R':
                        share = atof(optarg);
                        break;
                case 'L':
                        legacy = true;
                        break;
                case 'S':
                        spread = true;
                        break;
                case 'k':
                        seed = strtoull(optarg, NULL, 0);
                        break;
                case 'p':
                        prefix = optarg;
                        break;
                case 'H':
                        if (nheaders == sizeof(headers) / sizeof(headers[0])) {
                                fprintf(stderr, "rw_senders: at most 8 --header\n");
                                return 2;
                        }
                        headers[nheaders++] = optarg;
                        break;
                case 'T':
                        token = optarg;
                        break;
                case 'Q':
                        retry429 = atoi(optarg) != 0;
                        break;
                default:
                        fprintf(stderr, "usage: see the header of tests/tools/rw_senders.c\n");
                        return 2;
                }
        }
        if (!url || nhosts < 1 || nseries < 1 || !(interval > 0)) {
                fprintf(stderr, "rw_senders: --url, --hosts >= 1, --series >= 1 needed\n");
                return 2;
        }
        signal(SIGTERM, on_term);
        signal(SIGINT, on_term);
        signal(SIGPIPE, SIG_IGN);
        rw_rng_seed(&rng, seed);
        h = calloc((size_t)nhosts, sizeof(*h));
        if (spool_root)
                mkdir(spool_root, 0755);
        for (int i = 0; i < nhosts; i++) {
                struct rw_endpoint_cfg cfg;
                char name[128], err[512] = "", dir[1024];

                snprintf(name, sizeof(name), "%s%04d", prefix, i);
                rw_endpoint_cfg_init(&cfg);
                cfg.name = strdup("fleet");
                cfg.url = strdup(url);
                cfg.host = strdup(name);
                cfg.batch_deadline = bd;
                cfg.max_backoff = max_backoff;
                cfg.min_backoff = max_backoff < 0.03 ? max_backoff : 0.03;
                cfg.queue_capacity = (size_t)nseries * 64 > 2000 ? (size_t)nseries * 64 : 2000;
                cfg.metadata = false;
                cfg.spool_fsync = false;
                if (nheaders) {
                        cfg.headers = calloc(nheaders, sizeof(char *));
                        for (size_t k = 0; k < nheaders; k++)
                                cfg.headers[k] = strdup(headers[k]);
                        cfg.n_headers = nheaders;
                }
                if (token)
                        cfg.bearer_token_file = strdup(token);
                if (retry429 >= 0)
                        cfg.retry429 = retry429;
                if (share >= 0)
                        cfg.replay_share = share;
                if (legacy) {
                        cfg.send_phase = false;
                        cfg.backoff_jitter = false;
                        cfg.replay_share = 0;
                }
                if (spool_root) {
                        snprintf(dir, sizeof(dir), "%s/%s", spool_root, name);
                        cfg.spool_dir = strdup(dir);
                }
                if (rw_endpoint_new(&cfg, "rw_senders/0", lg, NULL, &h[i].ep, err, sizeof(err)) ||
                    rw_endpoint_start(h[i].ep)) {
                        fprintf(stderr, "rw_senders: host %s: %s\n", name, err);
                        return 1;
                }
                h[i].series = calloc((size_t)nseries, sizeof(char *));
                h[i].len = calloc((size_t)nseries, sizeof(size_t));
                for (int s = 0; s < nseries; s++) {
                        struct rw_labelset set;
                        char sn[16];

                        snprintf(sn, sizeof(sn), "%03d", s);
                        rw_labelset_init(&set);
                        rw_labelset_add(&set, "__name__", "rwsend_seq");
                        rw_labelset_add(&set, "instance", name);
                        rw_labelset_add(&set, "series", sn);
                        rw_labelset_finish(&set);
                        h[i].series[s] = rw_series_pack(&set, RW_KIND_COUNTER, &h[i].len[s]);
                }
                h[i].collect_offset = spread ? rw_rng_uniform(&rng) * interval : 0;
        }
        /* Ticks on the wall clock's interval boundaries (as aligned reads). */
        t0 = (double)((int64_t)(wall() / interval) + 1) * interval;
        next_report = t0;
        while (!stop_now) {
                double tk = t0 + (double)tick * interval;

                if (tk >= t0 + duration)
                        break;
                for (int i = 0; i < nhosts && !stop_now; i++) {
                        double at = tk + h[i].collect_offset;

                        while (wall() < at && !stop_now) {
                                if (wall() >= next_report) {
                                        report(h, nhosts, stdout);
                                        next_report += 1;
                                }
                                sleep_until(at < next_report ? at : next_report);
                        }
                        for (int s = 0; s < nseries; s++) {
                                struct rw_sample smp;

                                smp.series = malloc(h[i].len[s]);
                                memcpy(smp.series, h[i].series[s], h[i].len[s]);
                                smp.value = (double)(tick + 1);
                                smp.ts_ms = (int64_t)(at * 1000);
                                /* A full queue counts it as dropped. */
                                rw_endpoint_push(h[i].ep, &smp);
                                h[i].pushed++;
                        }
                }
                tick++;
                /* Between ticks: the report each second. */
                while (!stop_now && wall() < t0 + (double)tick * interval &&
                       t0 + (double)tick * interval < t0 + duration) {
                        if (wall() >= next_report) {
                                report(h, nhosts, stdout);
                                next_report += 1;
                        }
                        sleep_until(next_report < t0 + (double)tick * interval
                                        ? next_report
                                        : t0 + (double)tick * interval);
                }
        }
        /* Drain: up to --drain s for every backlog to reach 0. */
        {
                double until = wall() + drain;

                while (wall() < until && !stop_now) {
                        struct rw_endpoint_stats s;
                        uint64_t pushed;

                        totals(h, nhosts, &s, &pushed);
                        if (pushed == s.samples_sent + dropped(&s))
                                break;
                        if (wall() >= next_report) {
                                report(h, nhosts, stdout);
                                next_report += 1;
                        }
                        sleep_until(wall() + 0.2);
                }
                report(h, nhosts, stdout);
        }
        {
                struct rw_endpoint_stats s;
                uint64_t pushed;
                struct rusage ru;

                totals(h, nhosts, &s, &pushed);
                getrusage(RUSAGE_SELF, &ru);
                printf("{\"cpu_s\": %.1f, ",
                       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
                printf("\"hosts\": %d, \"series\": %d, \"ticks\": %" PRIu64 ", \"pushed\": %" PRIu64
                       ", \"sent\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"retried\": %" PRIu64
                       ", \"requests\": %" PRIu64 ", \"failed\": %" PRIu64,
                       nhosts, nseries, tick, pushed, s.samples_sent, dropped(&s),
                       s.samples_retried, s.requests, s.requests_failed);
                for (int r = 0; r < RW_DROP_NREASONS; r++)
                        printf(", \"dropped_%s\": %" PRIu64, rw_drop_reason_name(r), s.dropped[r]);
                printf("}\n");
                fflush(stdout);
        }
        for (int i = 0; i < nhosts; i++)
                rw_endpoint_begin_stop(h[i].ep);
        for (int i = 0; i < nhosts; i++) {
                rw_endpoint_stop(h[i].ep);
                for (int s = 0; s < nseries; s++)
                        free(h[i].series[s]);
                free(h[i].series);
                free(h[i].len);
        }
        free(h);
        return 0;
}
