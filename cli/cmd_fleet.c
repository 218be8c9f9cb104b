// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_fleet.c - `pciescope fleet`: a fleet of simulated hosts sending
 * their series by Prometheus Remote-Write through writer/'s sender, for
 * capacity planning, demos and fleet-scale tests (issue 27). A program of
 * its own, pciescope-fleet, which `pciescope fleet` runs (it links librw:
 * libcurl, protobuf-c, snappy, which no other command needs).
 *
 * How (docs/fleet.md says why): each machine description is first healed
 * of its own faults (fleet_heal.c) and checked to fire no alert
 * (base_fires_nothing); the real engine runs once per machine
 * type, and once per planted fault shape, on the simulated machine (a
 * fault is the shipped description changed: a link trained narrower, a
 * flap period, an MPS above the link partner's, AER counters that rise, a
 * device that fills its link), in manual mode under a fake clock, for one
 * cycle of CYCLE_STEPS intervals. Every sample it hands over is named by
 * writer/'s naming code (cli_series) exactly as the plugin's remote_write
 * and the exporter name it. That gives a template: the series set and, per interval of the
 * cycle, every gauge's value and every counter's increase. A host is a
 * template plus its own state: a name (instance), a starting point in the
 * cycle, a workload factor for its traffic gauges and its own counters,
 * which rise by the template's increases. Each interval a host's samples
 * (the template's labels with instance inserted in sorted place) go into
 * one of a few rw_endpoint queues (one sender thread each, libcurl, the
 * plugin's own sender), flushed as one request.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli_series.h"
#include "engine.h"
#include "fleet_heal.h"
#include "pcie_link.h"
#include "rw_endpoint.h"
#include "rw_http.h"
#include "rw_pace.h"
#include "rw_series.h"
#include "safe_file.h"

#ifndef PCIESCOPE_MACHINE_DIR
#define PCIESCOPE_MACHINE_DIR "/usr/share/pciescope/machines"
#endif

#define PROG        "pciescope fleet"
#define CYCLE_STEPS 30 /* intervals in one template cycle */
#define WARM_STEPS  2  /* intervals run before the cycle is recorded */
#define MAX_URLS    16
#define MAX_HEADERS 16
#define MAX_MIX     16
/* Every vendor's shipped machine; the two first ones, the longest
 * shipped, carry most of it (docs/fleet.md "The machine mix"). */
#define DEFAULT_MIX "kunpeng930-2p=4,spr-2s=3,turin-2p=1,yitian710-1p=1,grace-gh200=1"

enum fault_kind {
        FAULT_NONE = -1,
        FAULT_SATURATION,
        FAULT_DOWNTRAINED,
        FAULT_FLAPPING,
        FAULT_MPS,
        FAULT_AER_UNCORR,
        FAULT_AER_CORR,
        FAULT_NKINDS
};
static const char *const fault_names[FAULT_NKINDS] = {
    "saturation",   "downtrained",       "flapping",
    "mps_critical", "aer_uncorrectable", "aer_correctable_rate",
};

/* ---- small helpers ---- */

static void fleet_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fleet_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, PROG ": ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static double mono_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
        struct timespec ts;

        if (s <= 0)
                return;
        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
}

/* splitmix64: the seeded choices (machine mix, faults, phases, factors). */
static uint64_t rng_next(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
        return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static uint64_t fnv1a(const void *p, size_t n)
{
        const unsigned char *b = p;
        uint64_t h = 0xcbf29ce484222325ULL;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 0x100000001b3ULL;
        return h;
}

/* ---- templates: the engine's series and values over one cycle ---- */

struct tseries {
        char *packed; /* rw_series_pack of the labels without instance */
        size_t len;
        size_t ins; /* byte offset where instance="..." goes */
        bool counter;
        bool traffic; /* a bandwidth family: scaled by a host's workload factor */
};

struct template
{
        char machine[64];
        enum fault_kind kind;
        int target; /* candidate index, -1 for the base machine */
        size_t n, cap;
        struct tseries *s;
        size_t *hash; /* open addressing over s, 2 * cap slots, index + 1 */
        size_t hcap;
        double *raw;  /* [CYCLE_STEPS + 1][cap]: engine values, NAN absent */
        double *init; /* counters: the first value seen */
        size_t max_per_step;
        /* the fault, as the engine shows it */
        char port[32], bdf[32], direction[8];
        bool ok;
};

static const char *packed_get(const char *p, const char *name)
{
        size_t n = rw_packed_nlabels(p);
        const char *q = rw_packed_first(p);

        for (size_t i = 0; i < n; i++) {
                const char *v = q + strlen(q) + 1;

                if (!strcmp(q, name))
                        return v;
                q = v + strlen(v) + 1;
        }
        return NULL;
}

static size_t tmpl_lookup(struct template *t, const char *packed, size_t len, bool add)
{
        uint64_t h = fnv1a(packed, len);
        size_t slot = (size_t)(h % t->hcap);

        for (;;) {
                size_t i = t->hash[slot];

                if (!i)
                        break;
                if (t->s[i - 1].len == len && !memcmp(t->s[i - 1].packed, packed, len))
                        return i - 1;
                slot = (slot + 1) % t->hcap;
        }
        if (!add)
                return SIZE_MAX;
        if (t->n == t->cap) /* the caller sized it: never here */
                return SIZE_MAX;
        t->s[t->n].packed = malloc(len);
        if (!t->s[t->n].packed)
                return SIZE_MAX;
        memcpy(t->s[t->n].packed, packed, len);
        t->s[t->n].len = len;
        t->hash[slot] = ++t->n;
        return t->n - 1;
}

/* Where instance= goes: labels are sorted by name, byte order. */
static size_t instance_offset(const char *p)
{
        size_t n = rw_packed_nlabels(p);
        const char *q = rw_packed_first(p);

        for (size_t i = 0; i < n; i++) {
                const char *v = q + strlen(q) + 1;

                if (strcmp(q, "instance") > 0)
                        break;
                q = v + strlen(v) + 1;
        }
        return (size_t)(q - p);
}

static bool traffic_family(const char *name)
{
        return !strcmp(name, "pcie_port_bandwidth_bytes_per_second") ||
               !strcmp(name, "pcie_port_utilization_ratio") ||
               !strcmp(name, "pcie_port_tlp_length_bytes_per_second") ||
               !strcmp(name, "pcie_device_bandwidth_bytes_per_second") ||
               !strcmp(name, "pcie_iio_bw_out_estimate_bytes_per_second");
}

/* A host's series: the template's packed labels with instance inserted
 * (malloc'd: rw_endpoint_push takes it). */
static char *with_instance(const struct tseries *ts, const char *host, size_t hostlen)
{
        char *p = malloc(ts->len + 9 + hostlen + 1);

        if (!p)
                return NULL;
        memcpy(p, ts->packed, ts->ins);
        p[1] = (char)(rw_packed_nlabels(ts->packed) + 1);
        memcpy(p + ts->ins, "instance", 9);
        memcpy(p + ts->ins + 9, host, hostlen + 1);
        memcpy(p + ts->ins + 9 + hostlen + 1, ts->packed + ts->ins, ts->len - ts->ins);
        return p;
}

struct run_ctx {
        struct template *t;
        size_t step;
        int err;
};

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

static void collect(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct run_ctx *r = ctx;
        struct template *t = r->t;

        (void)unit;
        for (size_t i = 0; i < set->count && !r->err; i++) {
                const struct pcie_sample *s = &set->samples[i];
                struct rw_labelset ls;
                enum rw_kind kind;
                size_t len, k;
                char *packed;
                int rc = cli_series_of_sample(s, "", &ls, &kind);

                if (rc)
                        continue; /* dropped or unnamable: the plugin sends nothing either */
                packed = rw_series_pack(&ls, kind, &len);
                if (!packed) {
                        r->err = -ENOMEM;
                        return;
                }
                k = tmpl_lookup(t, packed, len, true);
                free(packed);
                if (k == SIZE_MAX) {
                        r->err = -ENOMEM;
                        return;
                }
                t->s[k].counter = s->kind == PCIE_METRIC_COUNTER ||
                                  s->kind == PCIE_METRIC_FLOAT_COUNTER ||
                                  s->kind == PCIE_METRIC_HISTOGRAM;
                t->s[k].traffic = traffic_family(s->metric);
                t->raw[r->step * t->cap + k] = cli_series_value(s);
        }
}

static void template_free(struct template *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                free(t->s[i].packed);
        free(t->s);
        free(t->hash);
        free(t->raw);
        free(t->init);
        free(t);
}

/* Runs the engine on the description @path (a file) at Detail default with
 * @interval seconds between reads, under a fake clock. */
static struct template *template_run(const char *path, const char *machine_dir, double interval,
                                     char *why, size_t whylen)
{
        struct engine_host host = {.log = quiet_log,
                                   .interval = interval,
                                   .clock = fake_clock,
                                   .manual = true,
                                   .label_simulated = true,
                                   .baseline_at_start = true};
        struct engine_config cfg;
        struct template *t = calloc(1, sizeof(*t));
        struct run_ctx r = {.t = t};
        struct engine *e = NULL;

        if (!t || engine_config_init(&cfg)) {
                free(t);
                snprintf(why, whylen, "out of memory");
                return NULL;
        }
        t->cap = 8192;
        t->hcap = 2 * t->cap + 1;
        t->s = calloc(t->cap, sizeof(*t->s));
        t->hash = calloc(t->hcap, sizeof(*t->hash));
        t->raw = malloc((CYCLE_STEPS + 1) * t->cap * sizeof(*t->raw));
        if (!t->s || !t->hash || !t->raw) {
                snprintf(why, whylen, "out of memory");
                goto fail;
        }
        for (size_t i = 0; i < (CYCLE_STEPS + 1) * t->cap; i++)
                t->raw[i] = NAN;
        if (engine_config_set_string(&cfg, "Simulate", path, why, whylen) ||
            (machine_dir &&
             engine_config_set_string(&cfg, "MachineDirectory", machine_dir, why, whylen)) ||
            engine_config_set_string(&cfg, "Detail", "default", why, whylen) ||
            engine_config_check(&cfg, why, whylen))
                goto fail;
        fake_now = 0;
        if (engine_open(&cfg, &host, &e, why, whylen))
                goto fail;
        if (engine_start(e)) {
                snprintf(why, whylen, "the engine did not start");
                goto fail;
        }
        for (size_t step = 1; step <= WARM_STEPS + CYCLE_STEPS + 1; step++) {
                double target = (double)step * interval, due;

                while ((due = engine_next_due(e)) <= target) {
                        fake_now = due;
                        engine_advance(e, due);
                }
                fake_now = target;
                r.step = step > WARM_STEPS ? step - WARM_STEPS - 1 : 0;
                if (step <= WARM_STEPS) {
                        /* warm-up: values thrown away, series kept */
                        engine_read(e, collect, &r);
                        for (size_t i = 0; i < t->cap; i++)
                                t->raw[i] = NAN;
                } else {
                        engine_read(e, collect, &r);
                }
                if (r.err) {
                        snprintf(why, whylen, "%s", strerror(-r.err));
                        goto fail;
                }
        }
        engine_close(e);
        e = NULL;
        t->init = malloc(t->n * sizeof(*t->init));
        if (!t->init) {
                snprintf(why, whylen, "out of memory");
                goto fail;
        }
        for (size_t i = 0; i < t->n; i++) {
                t->init[i] = 0;
                for (size_t k = 0; k <= CYCLE_STEPS; k++)
                        if (!isnan(t->raw[k * t->cap + i])) {
                                t->init[i] = t->raw[k * t->cap + i];
                                break;
                        }
                t->s[i].ins = instance_offset(t->s[i].packed);
        }
        for (size_t k = 1; k <= CYCLE_STEPS; k++) {
                size_t m = 0;

                for (size_t i = 0; i < t->n; i++)
                        m += !isnan(t->raw[k * t->cap + i]);
                if (m > t->max_per_step)
                        t->max_per_step = m;
        }
        /* The instance label goes where rw_series_named puts it: checked on
         * every series, so a host's names are the plugin's by construction. */
        for (size_t i = 0; i < t->n; i++) {
                char *mine = with_instance(&t->s[i], "fleet-check", strlen("fleet-check"));
                const char *q = rw_packed_first(t->s[i].packed);
                struct rw_labelset ls;
                size_t len;
                char *theirs;

                rw_labelset_init(&ls);
                for (size_t l = 0; l < rw_packed_nlabels(t->s[i].packed); l++) {
                        const char *v = q + strlen(q) + 1;

                        rw_labelset_add(&ls, q, v);
                        q = v + strlen(v) + 1;
                }
                rw_labelset_add(&ls, "instance", "fleet-check");
                rw_labelset_finish(&ls);
                theirs = rw_series_pack(&ls, rw_packed_kind(t->s[i].packed), &len);
                if (!mine || !theirs || len != t->s[i].len + 9 + strlen("fleet-check") + 1 ||
                    memcmp(mine, theirs, len)) {
                        snprintf(why, whylen, "internal error: instance label misplaced");
                        free(mine);
                        free(theirs);
                        goto fail;
                }
                free(mine);
                free(theirs);
        }
        engine_config_clear(&cfg);
        return t;
fail:
        engine_close(e);
        engine_config_clear(&cfg);
        template_free(t);
        return NULL;
}

/* The engine's value of series @name{l1=v1,l2=v2,l3=v3} at cycle step k
 * (0..CYCLE_STEPS); NAN when absent. NULL names match anything. */
static double tmpl_value(const struct template *t, size_t k, const char *name, const char *l1,
                         const char *v1, const char *l2, const char *v2, const char *l3,
                         const char *v3)
{
        for (size_t i = 0; i < t->n; i++) {
                const char *p = t->s[i].packed, *x;

                if (!(x = packed_get(p, "__name__")) || strcmp(x, name))
                        continue;
                if (l1 && (!(x = packed_get(p, l1)) || strcmp(x, v1)))
                        continue;
                if (l2 && (!(x = packed_get(p, l2)) || strcmp(x, v2)))
                        continue;
                if (l3 && (!(x = packed_get(p, l3)) || strcmp(x, v3)))
                        continue;
                return t->raw[k * t->cap + i];
        }
        return NAN;
}

/* ---- the healed base fires nothing ----
 *
 * The conditions of the shipped alerts (dashboards/alerts/pcie.rules.yml)
 * on a template's cycle, at workload factor 1, each as strict as the rule
 * or stricter: any interval counts where the rule averages or waits. */

/* @p as name{label="value",...}, for an error. */
static void series_text(const char *p, char *buf, size_t len)
{
        size_t n = rw_packed_nlabels(p), used;
        const char *q = rw_packed_first(p), *name = packed_get(p, "__name__");

        used = (size_t)snprintf(buf, len, "%s{", name ? name : "?");
        for (size_t i = 0; i < n && used < len; i++) {
                const char *v = q + strlen(q) + 1;

                if (strcmp(q, "__name__"))
                        used += (size_t)snprintf(buf + used, len - used, "%s%s=\"%s\"",
                                                 buf[used - 1] == '{' ? "" : ",", q, v);
                q = v + strlen(v) + 1;
        }
        if (used < len)
                snprintf(buf + used, len - used, "}");
}

/* @p's labels but __name__, "n=v," joined: what pairs two families' series. */
static void labels_key(const char *p, char *buf, size_t len)
{
        size_t n = rw_packed_nlabels(p), used = 0;
        const char *q = rw_packed_first(p);

        buf[0] = '\0';
        for (size_t i = 0; i < n && used < len; i++) {
                const char *v = q + strlen(q) + 1;

                if (strcmp(q, "__name__"))
                        used += (size_t)snprintf(buf + used, len - used, "%s=%s,", q, v);
                q = v + strlen(v) + 1;
        }
}

static bool named(const char *p, const char *name)
{
        const char *x = packed_get(p, "__name__");

        return x && !strcmp(x, name);
}

static bool label_is(const char *p, const char *label, const char *value)
{
        const char *x = packed_get(p, label);

        return x && !strcmp(x, value);
}

/* A counter's increase over the cycle (first to last value seen). */
static double cycle_rise(const struct template *t, size_t i)
{
        double first = NAN, last = NAN;

        for (size_t k = 0; k <= CYCLE_STEPS; k++) {
                double v = t->raw[k * t->cap + i];

                if (isnan(v))
                        continue;
                if (isnan(first))
                        first = v;
                last = v;
        }
        return isnan(first) ? 0 : last - first;
}

/* Per-pmu sums for the rules that aggregate by pmu. */
struct pmu_sum {
        char pmu[64];
        double a, b;
        bool seen;
};

static struct pmu_sum *pmu_slot(struct pmu_sum *s, size_t *n, size_t max, const char *pmu,
                                const char *extra)
{
        char key[64];

        snprintf(key, sizeof(key), "%s%s%s", pmu ? pmu : "", extra ? "/" : "", extra ? extra : "");
        for (size_t i = 0; i < *n; i++)
                if (!strcmp(s[i].pmu, key))
                        return &s[i];
        if (*n == max)
                return NULL;
        snprintf(s[*n].pmu, sizeof(s[*n].pmu), "%s", key);
        s[*n].a = s[*n].b = 0;
        s[*n].seen = false;
        return &s[(*n)++];
}

/* 0 when no alerting condition holds on @t; else -1 and @why names the
 * alert and the series. */
static int base_fires_nothing(const struct template *t, double interval, char *why, size_t len)
{
        static struct pmu_sum ptt[1024], win[256], cov[256];
        double span = CYCLE_STEPS * interval;
        size_t nptt = 0, nwin = 0;
        char text[384];

        for (size_t i = 0; i < t->n; i++) {
                const char *p = t->s[i].packed, *alert = NULL;
                double worst = NAN;

                if (named(p, "pcie_port_utilization_ratio") &&
                    label_is(p, "capacity", "effective")) {
                        for (size_t k = 1; k <= CYCLE_STEPS; k++)
                                if (t->raw[k * t->cap + i] > 0.9)
                                        alert = "PCIeLinkSaturated: above 0.9",
                                        worst = t->raw[k * t->cap + i];
                } else if (named(p, "pcie_link_downtrained")) {
                        for (size_t k = 1; k <= CYCLE_STEPS; k++)
                                if (t->raw[k * t->cap + i] == 1)
                                        alert = "PCIeLinkDowntrained: 1", worst = 1;
                } else if (named(p, "pcie_audit_finding") && label_is(p, "severity", "critical")) {
                        for (size_t k = 1; k <= CYCLE_STEPS; k++)
                                if (t->raw[k * t->cap + i] == 1)
                                        alert = "PCIeMPSMisconfigured: a critical finding",
                                        worst = 1;
                } else if (named(p, "pcie_link_changes_total")) {
                        if ((worst = cycle_rise(t, i)) > 0)
                                alert = "PCIeLinkFlapping: link changes";
                } else if (named(p, "pcie_aer_device_errors_total")) {
                        worst = cycle_rise(t, i);
                        if (label_is(p, "severity", "correctable")) {
                                if ((worst /= span) > 0.1)
                                        alert = "PCIeAERCorrectableErrorRate: above 0.1/s";
                        } else if (worst > 0) {
                                alert = "PCIeAERUncorrectableErrors: rising";
                        }
                } else if (named(p, "pcie_collector_cpu_seconds_total")) {
                        if ((worst = cycle_rise(t, i) / span) > 0.05)
                                alert = "PCIeCollectorCPUHigh: above 0.05 cores";
                } else if (named(p, "pcie_ptt_completion_latency_seconds_bucket") &&
                           label_is(p, "completion", "last") && packed_get(p, "le")) {
                        /* sum by (pmu, le): a = the bucket's count, b = le */
                        struct pmu_sum *s =
                            pmu_slot(ptt, &nptt, 1024, packed_get(p, "pmu"), packed_get(p, "le"));

                        if (s) {
                                s->a += cycle_rise(t, i);
                                s->b = strtod(packed_get(p, "le"), NULL);
                        }
                } else if (named(p, "pcie_ptt_windows_total")) {
                        struct pmu_sum *s = pmu_slot(win, &nwin, 256, packed_get(p, "pmu"), NULL);
                        const char *r = packed_get(p, "result");
                        double d = cycle_rise(t, i);

                        if (s) {
                                s->b += d;
                                if (r && (!strcmp(r, "busy") || !strcmp(r, "stopped") ||
                                          !strcmp(r, "error")))
                                        s->a += d;
                        }
                }
                if (alert) {
                        series_text(p, text, sizeof(text));
                        snprintf(why, len, "%s (%s %g)", alert, text, worst);
                        return -1;
                }
        }
        /* PCIePTTLatencyHigh: the p99 of each pmu's cycle above 100 us,
         * i.e. fewer than 99 % of its completions in the buckets up to
         * 100 us (the largest le at or below it) */
        for (size_t i = 0; i < nptt; i++) {
                double total = 0, below = 0, le_below = -1;
                size_t plen = strcspn(ptt[i].pmu, "/");

                for (size_t j = 0; j < nptt; j++) {
                        if (strncmp(ptt[j].pmu, ptt[i].pmu, plen) || ptt[j].pmu[plen] != '/')
                                continue;
                        if (isinf(ptt[j].b))
                                total = ptt[j].a;
                        else if (ptt[j].b <= 100e-6 && ptt[j].b > le_below)
                                le_below = ptt[j].b, below = ptt[j].a;
                }
                if (total > 0 && below < 0.99 * total) {
                        snprintf(why, len,
                                 "PCIePTTLatencyHigh: the p99 above 100 us "
                                 "(pcie_ptt_completion_latency_seconds_bucket{completion=\"last\","
                                 "pmu=\"%.*s\"}: %g of %g at or below 100 us)",
                                 (int)plen, ptt[i].pmu, below, total);
                        return -1;
                }
        }
        for (size_t i = 0; i < nwin; i++)
                if (win[i].b > 0 && win[i].a > 0.5 * win[i].b) {
                        snprintf(why, len,
                                 "PCIePTTWindowsFailing: %g of %g windows busy, stopped or in "
                                 "error (pcie_ptt_windows_total{pmu=\"%s\"})",
                                 win[i].a, win[i].b, win[i].pmu);
                        return -1;
                }
        /* PCIePMUCoverageLow, interval by interval: per pmu, the lowest
         * coverage (a) against half the highest counting/measurements (b) */
        for (size_t k = 1; k <= CYCLE_STEPS; k++) {
                size_t ncov = 0;

                for (size_t i = 0; i < t->n; i++) {
                        const char *p = t->s[i].packed;
                        double v = t->raw[k * t->cap + i];
                        struct pmu_sum *s;

                        if (isnan(v) || !packed_get(p, "pmu"))
                                continue;
                        if (named(p, "pcie_pmu_coverage_ratio")) {
                                s = pmu_slot(cov, &ncov, 256, packed_get(p, "pmu"), NULL);
                                if (s && (!s->seen || v < s->a))
                                        s->a = v;
                                if (s)
                                        s->seen = true;
                        } else if (named(p, "pcie_pmu_measurements_counting")) {
                                char key[512], other[512];

                                labels_key(p, key, sizeof(key));
                                for (size_t j = 0; j < t->n; j++) {
                                        double m = t->raw[k * t->cap + j];

                                        if (!named(t->s[j].packed, "pcie_pmu_measurements") ||
                                            !(m > 0))
                                                continue;
                                        labels_key(t->s[j].packed, other, sizeof(other));
                                        if (strcmp(key, other))
                                                continue;
                                        s = pmu_slot(cov, &ncov, 256, packed_get(p, "pmu"), NULL);
                                        if (s && v / m > s->b)
                                                s->b = v / m;
                                }
                        }
                }
                for (size_t i = 0; i < ncov; i++)
                        if (cov[i].seen && cov[i].a < 0.5 * cov[i].b) {
                                snprintf(why, len,
                                         "PCIePMUCoverageLow: coverage %g below half of %g "
                                         "(pcie_pmu_coverage_ratio{pmu=\"%s\"})",
                                         cov[i].a, cov[i].b, cov[i].pmu);
                                return -1;
                        }
        }
        return 0;
}

/* ---- machine descriptions and planted faults ---- */

struct candidate {
        json_object *port, *dev; /* a Root Port with exactly one endpoint below it */
};

static void find_candidates(json_object *o, struct candidate *c, size_t *n, size_t max)
{
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        find_candidates(json_object_array_get_idx(o, i), c, n, max);
                return;
        }
        if (!json_object_is_type(o, json_type_object))
                return;
        json_object_object_foreach(o, key, val)
        {
                if (!strcmp(key, "root_ports") && json_object_is_type(val, json_type_array)) {
                        for (size_t i = 0; i < json_object_array_length(val); i++) {
                                json_object *rp = json_object_array_get_idx(val, i), *ch, *dev,
                                            *kind, *link;

                                if (!json_object_object_get_ex(rp, "children", &ch) ||
                                    !json_object_is_type(ch, json_type_array) ||
                                    json_object_array_length(ch) != 1)
                                        continue;
                                dev = json_object_array_get_idx(ch, 0);
                                if (json_object_object_get_ex(dev, "kind", &kind) &&
                                    strcmp(json_object_get_string(kind), "endpoint"))
                                        continue;
                                if (!json_object_object_get_ex(dev, "link", &link))
                                        continue;
                                if (*n < max)
                                        c[(*n)++] = (struct candidate){rp, dev};
                        }
                } else {
                        find_candidates(val, c, n, max);
                }
        }
}

/* "01:00.0" or "0000:01:00.0" to the full form. */
static void full_bdf(const char *in, char *out, size_t len)
{
        if (in && strlen(in) == 7)
                snprintf(out, len, "0000:%s", in);
        else
                snprintf(out, len, "%s", in ? in : "");
}

/* Every flow of @dev's workload times @f; phases removed when @flat. */
static void scale_workload(json_object *dev, double f, bool flat)
{
        static const char *const flows[] = {"dma_write", "dma_read", "mmio_write", "mmio_read"};
        json_object *w, *flow, *bps;

        if (!json_object_object_get_ex(dev, "workload", &w))
                return;
        if (flat)
                json_object_object_del(w, "phases");
        for (size_t i = 0; i < 4; i++)
                if (json_object_object_get_ex(w, flows[i], &flow) &&
                    json_object_object_get_ex(flow, "bytes_per_second", &bps))
                        json_object_object_add(
                            flow, "bytes_per_second",
                            json_object_new_double(json_object_get_double(bps) * f));
}

static double flow_bps(json_object *dev, const char *flow)
{
        json_object *w, *fl, *bps;

        if (json_object_object_get_ex(dev, "workload", &w) &&
            json_object_object_get_ex(w, flow, &fl) &&
            json_object_object_get_ex(fl, "bytes_per_second", &bps))
                return json_object_get_double(bps);
        return 0;
}

static void set_aer(json_object *dev, const char *class, const char *counter, double per_second)
{
        json_object *aer, *cls, *c = json_object_new_object();

        if (!json_object_object_get_ex(dev, "aer", &aer) ||
            !json_object_is_type(aer, json_type_object)) {
                aer = json_object_new_object();
                json_object_object_add(dev, "aer", aer);
        }
        if (!json_object_object_get_ex(aer, class, &cls)) {
                cls = json_object_new_object();
                json_object_object_add(aer, class, cls);
        }
        json_object_object_add(c, "initial", json_object_new_int(0));
        json_object_object_add(c, "per_second", json_object_new_double(per_second));
        json_object_object_add(cls, counter, c);
}

static int width_down(int w)
{
        return w >= 32 ? 16 : w >= 16 ? 8 : w >= 8 ? 4 : w >= 4 ? 2 : 1;
}

struct fleet;

/* ---- the fleet ---- */

struct mix {
        char name[64];
        double weight;
        struct template *base;
        char *json; /* the shipped description */
        size_t ncand[FAULT_NKINDS];
};

struct host {
        char name[24];
        size_t namelen;
        struct template *t;
        size_t mix;
        size_t offset; /* starting step in the cycle */
        double factor; /* workload factor for traffic gauges */
        double *acc;   /* counters */
        struct rw_endpoint *ep;
        enum fault_kind fault;
};

struct fleet {
        /* options */
        unsigned long hosts;
        double duration, interval, fault_rate, start_offset;
        uint64_t seed;
        const char *urls[MAX_URLS];
        size_t n_urls;
        const char *headers[MAX_HEADERS];
        size_t n_headers;
        bool tenant_path;
        unsigned int tenants, connections;
        const char *truth, *machine_dir, *healed_dir;
        struct mix mix[MAX_MIX];
        size_t n_mix;
        /* state */
        struct template **tmpl; /* fault templates, built on demand */
        size_t n_tmpl;
        struct host *h;
        struct rw_endpoint **ep;
        struct rw_endpoint_cfg *cfg; /* an endpoint takes its strings over */
        size_t n_ep;
        char tmpdir[64];
        /* latency samples (ms), one per request */
        float *lat;
        size_t n_lat, cap_lat;
};

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        long n;

        if (!f)
                return NULL;
        if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (buf = malloc((size_t)n + 1))) {
                if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                        free(buf);
                        buf = NULL;
                } else {
                        buf[n] = '\0';
                }
        }
        fclose(f);
        return buf;
}

/* Plants fault @kind on candidate @idx of @m's description, runs the engine
 * on it, and checks the engine shows the fault; NULL when it does not (the
 * caller tries another candidate). */
static struct template *fault_template(struct fleet *F, struct mix *m, enum fault_kind kind,
                                       size_t idx)
{
        struct candidate c[64];
        size_t n = 0;
        json_object *top = json_tokener_parse(m->json);
        struct template *t = NULL;
        char path[256], why[512], port[32], bdf[32];
        double target = 0.95;

        if (!top)
                return NULL;
        find_candidates(top, c, &n, 64);
        if (idx >= n) {
                json_object_put(top);
                return NULL;
        }
        full_bdf(fleet_jstr(c[idx].port, "bdf"), port, sizeof(port));
        full_bdf(fleet_jstr(c[idx].dev, "bdf"), bdf, sizeof(bdf));
        for (int attempt = 0; attempt < 3; attempt++) {
                json_object *link = NULL, *dev = c[idx].dev, *rp = c[idx].port;

                json_object_object_get_ex(dev, "link", &link);
                switch (kind) {
                case FAULT_SATURATION: {
                        /* inbound writes that fill the port's link: capacity and
                         * MPS as the engine reports them on the healthy machine */
                        double raw = tmpl_value(m->base, 1, "pcie_link_capacity_bytes_per_second",
                                                "bdf", port, "state", "current", NULL, NULL);
                        double mps = tmpl_value(m->base, 1, "pcie_max_payload_size_bytes", "bdf",
                                                port, NULL, NULL, NULL, NULL);
                        double want, have;
                        json_object *w, *flow;

                        if (!(raw > 0) || !(mps > 0) ||
                            isnan(tmpl_value(m->base, 1, "pcie_port_utilization_ratio", "port",
                                             port, "direction", "rx", "capacity", "effective")))
                                goto out;
                        want = target * raw * mps / (mps + 24) - flow_bps(dev, "mmio_read");
                        if (!json_object_object_get_ex(dev, "workload", &w)) {
                                w = json_object_new_object();
                                json_object_object_add(dev, "workload", w);
                        }
                        json_object_object_del(w, "phases");
                        if (!json_object_object_get_ex(w, "dma_write", &flow)) {
                                flow = json_object_new_object();
                                json_object_object_add(w, "dma_write", flow);
                        }
                        have = want > 0 ? want : 0;
                        json_object_object_add(flow, "bytes_per_second",
                                               json_object_new_double(have));
                        break;
                }
                case FAULT_DOWNTRAINED: {
                        int w = fleet_jint(link, "width", 0), mw = fleet_jint(link, "max_width", 0),
                            pw = 0;
                        json_object *plink;

                        if (json_object_object_get_ex(rp, "link", &plink))
                                pw = fleet_jint(plink, "max_width", 0);
                        if (!w)
                                w = pw && pw < mw ? pw : mw;
                        if (w < 2)
                                goto out;
                        json_object_object_add(link, "width", json_object_new_int(width_down(w)));
                        json_object_object_del(link, "flap_period_s");
                        json_object_object_del(link, "flap_width");
                        scale_workload(dev, 0.4, false);
                        break;
                }
                case FAULT_FLAPPING:
                        json_object_object_add(link, "flap_period_s",
                                               json_object_new_double(5 * F->interval));
                        break;
                case FAULT_MPS: {
                        int mpss = fleet_jint(dev, "mpss", 0);
                        const char *cmd = fleet_jstr(top, "cmdline");
                        char buf[600];

                        if (mpss < 256)
                                goto out;
                        snprintf(buf, sizeof(buf), "%s pci=pcie_bus_tune_off",
                                 cmd ? cmd : "BOOT_IMAGE=/vmlinuz root=/dev/mapper/root ro");
                        if (!cmd || !strstr(cmd, "pci=pcie_bus_tune_off"))
                                json_object_object_add(top, "cmdline", json_object_new_string(buf));
                        json_object_object_add(rp, "mps", json_object_new_int(128));
                        json_object_object_add(dev, "mps",
                                               json_object_new_int(mpss > 512 ? 512 : mpss));
                        break;
                }
                case FAULT_AER_UNCORR:
                        set_aer(dev, "nonfatal", "CmpltTO", 0.05);
                        break;
                case FAULT_AER_CORR:
                        set_aer(dev, "correctable", "RxErr", 1.0);
                        break;
                default:
                        goto out;
                }
                snprintf(path, sizeof(path), "%s/%s-%s-%zu.json", F->tmpdir, m->name,
                         fault_names[kind], idx);
                if (json_object_to_file_ext(path, top, JSON_C_TO_STRING_PLAIN))
                        goto out;
                t = template_run(path, F->machine_dir, F->interval, why, sizeof(why));
                unlink(path);
                if (!t)
                        goto out; /* the simulator refused the description */
                snprintf(t->machine, sizeof(t->machine), "%s", m->name);
                t->kind = kind;
                t->target = (int)idx;
                snprintf(t->port, sizeof(t->port), "%s", port);
                snprintf(t->bdf, sizeof(t->bdf), "%s", bdf);
                /* What the engine shows must be the fault. */
                t->ok = true;
                for (size_t k = 1; k <= CYCLE_STEPS && t->ok; k++) {
                        double v;

                        switch (kind) {
                        case FAULT_SATURATION:
                                v = tmpl_value(t, k, "pcie_port_utilization_ratio", "port", port,
                                               "direction", "rx", "capacity", "effective");
                                if (!(v > 0.92 && v <= 1.0)) {
                                        t->ok = false;
                                        if (v > 0 && attempt < 2)
                                                target *= 0.955 / v;
                                }
                                snprintf(t->direction, sizeof(t->direction), "rx");
                                t->bdf[0] = '\0';
                                break;
                        case FAULT_DOWNTRAINED:
                                v = tmpl_value(t, k, "pcie_link_downtrained", "bdf", bdf, NULL,
                                               NULL, NULL, NULL);
                                t->ok =
                                    v == 1 && tmpl_value(t, k, "pcie_link_width_lanes", "bdf", bdf,
                                                         "state", "current", NULL, NULL) <
                                                  tmpl_value(t, k, "pcie_link_width_lanes", "bdf",
                                                             bdf, "state", "max", NULL, NULL);
                                break;
                        case FAULT_FLAPPING:
                                t->ok = tmpl_value(t, CYCLE_STEPS, "pcie_link_changes_total", "bdf",
                                                   bdf, NULL, NULL, NULL, NULL) -
                                            tmpl_value(t, 0, "pcie_link_changes_total", "bdf", bdf,
                                                       NULL, NULL, NULL, NULL) >=
                                        4;
                                break;
                        case FAULT_MPS: {
                                /* the critical finding, on whichever end the audit names */
                                bool found = false;

                                for (size_t i = 0; i < t->n && !found; i++) {
                                        const char *p = t->s[i].packed, *x, *b;

                                        if ((x = packed_get(p, "__name__")) &&
                                            !strcmp(x, "pcie_audit_finding") &&
                                            (x = packed_get(p, "severity")) &&
                                            !strcmp(x, "critical") && t->raw[k * t->cap + i] == 1 &&
                                            (b = packed_get(p, "bdf"))) {
                                                found = true;
                                                snprintf(t->bdf, sizeof(t->bdf), "%s", b);
                                        }
                                }
                                t->ok = found;
                                break;
                        }
                        case FAULT_AER_UNCORR:
                        case FAULT_AER_CORR: {
                                const char *sev =
                                    kind == FAULT_AER_CORR ? "correctable" : "nonfatal";
                                double rise =
                                    tmpl_value(t, CYCLE_STEPS, "pcie_aer_device_errors_total",
                                               "bdf", bdf, "severity", sev, NULL, NULL) -
                                    tmpl_value(t, 0, "pcie_aer_device_errors_total", "bdf", bdf,
                                               "severity", sev, NULL, NULL);

                                t->ok = kind == FAULT_AER_CORR
                                            ? rise / (CYCLE_STEPS * F->interval) > 0.5
                                            : rise >= 1;
                                break;
                        }
                        default:
                                t->ok = false;
                        }
                }
                if (t->ok || kind != FAULT_SATURATION)
                        break;
                template_free(t);
                t = NULL;
                /* again with the measured ratio corrected: a fresh tree */
                json_object_put(top);
                top = json_tokener_parse(m->json);
                n = 0;
                find_candidates(top, c, &n, 64);
        }
out:
        json_object_put(top);
        if (t && !t->ok) {
                template_free(t);
                t = NULL;
        }
        return t;
}

/* A fault template of @kind for a host of @m, cached: candidates are tried
 * from a seeded start until the engine shows the fault. */
static struct template *fault_for(struct fleet *F, size_t mi, enum fault_kind kind, uint64_t *rng)
{
        struct mix *m = &F->mix[mi];
        size_t n = m->ncand[kind], start;

        if (!n)
                return NULL;
        start = (size_t)(rng_next(rng) % n);
        for (size_t i = 0; i < n; i++) {
                size_t idx = (start + i) % n;
                struct template *t = NULL, **grown;

                for (size_t j = 0; j < F->n_tmpl; j++)
                        if (F->tmpl[j]->kind == kind && F->tmpl[j]->target == (int)idx &&
                            !strcmp(F->tmpl[j]->machine, m->name))
                                t = F->tmpl[j];
                if (t)
                        return t;
                t = fault_template(F, m, kind, idx);
                if (!t)
                        continue;
                grown = realloc(F->tmpl, (F->n_tmpl + 1) * sizeof(*grown));
                if (!grown) {
                        template_free(t);
                        return NULL;
                }
                F->tmpl = grown;
                F->tmpl[F->n_tmpl++] = t;
                return t;
        }
        m->ncand[kind] = 0; /* none works: this machine cannot show it */
        return NULL;
}

static int load_mix(struct fleet *F)
{
        const char *dir = F->machine_dir;
        char why[512], path[PATH_MAX];

        if (!dir) {
                dir = getenv("PCIESCOPE_MACHINE_DIR");
                if (!dir || !*dir)
                        dir = PCIESCOPE_MACHINE_DIR;
        }
        for (size_t i = 0; i < F->n_mix; i++) {
                struct mix *m = &F->mix[i];
                struct candidate c[64];
                struct fleet_heal_counts H = {0};
                size_t n = 0;
                json_object *top;
                char *text, healed[PATH_MAX + 64];

                snprintf(path, sizeof(path), "%s/%s.json", dir, m->name);
                text = read_text(path);
                if (!text) {
                        fleet_error("--mix %s: cannot read %s: %s (--machine-dir DIR)", m->name,
                                    path, strerror(errno));
                        return -1;
                }
                top = json_tokener_parse(text);
                free(text);
                if (!top) {
                        fleet_error("%s: not a machine description (docs/simulator.md)", path);
                        return -1;
                }
                /* the healthy base: what every host without a planted fault
                 * runs, and what the faults are planted in */
                fleet_heal_description(top, &H);
                m->json = strdup(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PLAIN));
                snprintf(healed, sizeof(healed), "%s/%s.json",
                         F->healed_dir ? F->healed_dir : F->tmpdir, m->name);
                if (!m->json || json_object_to_file_ext(healed, top, JSON_C_TO_STRING_PLAIN)) {
                        fleet_error("%s: cannot write the healed description: %s", healed,
                                    m->json ? json_util_get_last_err() : "out of memory");
                        json_object_put(top);
                        return -1;
                }
                find_candidates(top, c, &n, 64);
                json_object_put(top);
                m->base = template_run(healed, F->machine_dir, F->interval, why, sizeof(why));
                if (!F->healed_dir)
                        unlink(healed);
                if (!m->base) {
                        fleet_error("%s (healed): %s", path, why);
                        return -1;
                }
                snprintf(m->base->machine, sizeof(m->base->machine), "%s", m->name);
                m->base->kind = FAULT_NONE;
                m->base->target = -1;
                if (base_fires_nothing(m->base, F->interval, why, sizeof(why))) {
                        fleet_error("%s: an alert would fire on its healed description, beside "
                                    "the planted faults: %s",
                                    m->name, why);
                        return -1;
                }
                for (int k = 0; k < FAULT_NKINDS; k++)
                        m->ncand[k] = n;
                fprintf(stderr,
                        PROG ": %s: %zu series at Detail default (engine, %g s intervals); "
                             "healed: %u links retrained, %u flaps, %u MPS, %u AER, %u link "
                             "directions' traffic\n",
                        m->name, m->base->max_per_step, F->interval, H.links, H.flaps, H.mps, H.aer,
                        H.traffic);
        }
        return 0;
}

/* ---- sending ---- */

static void ep_log(void *ctx, int level, const char *fmt, ...)
{
        va_list ap;

        (void)ctx;
        if (level > RW_LOG_WARNING)
                return;
        fprintf(stderr, PROG ": ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static int endpoints_start(struct fleet *F, size_t max_series)
{
        size_t per = F->connections, groups = F->n_urls * (F->tenant_path ? F->tenants : 1);
        size_t hosts_per_ep;

        if (per * groups > F->hosts)
                per = (F->hosts + groups - 1) / groups;
        if (!per)
                per = 1;
        F->n_ep = per * groups;
        F->ep = calloc(F->n_ep, sizeof(*F->ep));
        F->cfg = calloc(F->n_ep, sizeof(*F->cfg));
        if (!F->ep || !F->cfg)
                return -1;
        for (size_t i = 0; i < F->n_ep; i++)
                rw_endpoint_cfg_init(&F->cfg[i]);
        hosts_per_ep = (F->hosts + F->n_ep - 1) / F->n_ep;
        for (size_t g = 0; g < groups; g++) {
                for (size_t j = 0; j < per; j++) {
#define c (F->cfg[g * per + j])
                        char err[512], name[64];
                        size_t u = g % F->n_urls;

                        snprintf(name, sizeof(name), "fleet-%zu", g * per + j);
                        c.name = strdup(name);
                        if (F->tenant_path) {
                                size_t len = strlen(F->urls[u]) + 64;
                                int base = (int)strlen(F->urls[u]);

                                if (base && F->urls[u][base - 1] == '/')
                                        base--;
                                c.url = malloc(len);
                                if (c.url)
                                        snprintf(c.url, len,
                                                 "%.*s/insert/%zu/prometheus/api/v1/write", base,
                                                 F->urls[u], g / F->n_urls + 1);
                        } else {
                                c.url = strdup(F->urls[u]);
                        }
                        c.headers = calloc(F->n_headers + 1, sizeof(*c.headers));
                        for (size_t i = 0; c.headers && i < F->n_headers; i++)
                                c.headers[c.n_headers++] = strdup(F->headers[i]);
                        c.max_samples_per_send = max_series;
                        c.batch_deadline = 1;
                        /* six intervals of every host on the connection: a
                         * slow receiver delays them as it would real hosts;
                         * an outage longer than that drops (queue_full), as a
                         * host without SpoolDir does once its queue is full.
                         * About 220 bytes a queued sample, only while queued. */
                        c.queue_capacity = hosts_per_ep * max_series * 6;
                        c.retry429 = true;
                        if (!c.name || !c.url || !c.headers) {
                                fleet_error("out of memory");
                                return -1;
                        }
                        if (rw_endpoint_new(&c, "pciescope-fleet/" PCIESCOPE_VERSION, ep_log, NULL,
                                            &F->ep[g * per + j], err, sizeof(err))) {
                                fleet_error("%s", err);
                                return -1;
                        }
#undef c
                }
        }
        for (size_t i = 0; i < F->n_ep; i++)
                if (rw_endpoint_start(F->ep[i])) {
                        fleet_error("cannot start a sender thread");
                        return -1;
                }
        /* host -> endpoint: URL by jump consistent hashing of the name
         * (rw_shard: the spread over several receivers, even, and adding
         * one moves only the hosts it takes), tenant likewise, connection
         * by index */
        for (size_t i = 0; i < F->hosts; i++) {
                struct host *h = &F->h[i];
                char key[sizeof(h->name) + 8];
                size_t u = rw_shard(h->name, (uint32_t)F->n_urls), t = 0;

                /* The tenant by a key of its own, so that it does not
                 * follow the URL. (The high bits of FNV-1a alone do not
                 * change with the last character of a name: fleet-00001
                 * to fleet-00006 all fell in one tenant.) */
                if (F->tenant_path) {
                        snprintf(key, sizeof(key), "tenant:%s", h->name);
                        t = rw_shard(key, F->tenants);
                }

                h->ep = F->ep[(t * F->n_urls + u) * per + i % per];
        }
        return 0;
}

/* One interval of host @h at cycle position @k: its samples into its
 * endpoint's queue, then a flush (one request). Returns the samples. */
static size_t host_send(struct host *h, size_t k, int64_t ts_ms, uint64_t *failed)
{
        const struct template *t = h->t;
        size_t j = (k + h->offset) % CYCLE_STEPS, sent = 0;
        const double *now = &t->raw[(j + 1) * t->cap], *prev = &t->raw[j * t->cap];

        for (size_t i = 0; i < t->n; i++) {
                struct rw_sample s;
                double v = now[i];

                if (isnan(v))
                        continue;
                if (t->s[i].counter) {
                        if (!isnan(prev[i]) && v >= prev[i])
                                h->acc[i] += v - prev[i];
                        v = h->acc[i];
                } else if (t->s[i].traffic) {
                        v *= h->factor;
                }
                s.series = with_instance(&t->s[i], h->name, h->namelen);
                s.value = v;
                s.ts_ms = ts_ms;
                if (!s.series) {
                        (*failed)++;
                        continue;
                }
                /* -ENOSPC is counted (queue_full) and frees the series */
                if (rw_endpoint_push(h->ep, &s) == 0)
                        sent++;
        }
        rw_endpoint_flush(h->ep);
        return sent;
}

/* ---- statistics ---- */

struct totals {
        uint64_t sent, retried, failed, dropped, requests, requests_failed, queued;
        double send_seconds;
};

static void totals(struct fleet *F, struct totals *T, uint64_t *drop_by_reason)
{
        memset(T, 0, sizeof(*T));
        for (size_t i = 0; i < F->n_ep; i++) {
                struct rw_endpoint_stats st;

                rw_endpoint_get_stats(F->ep[i], &st);
                T->sent += st.samples_sent;
                T->retried += st.samples_retried;
                T->failed += st.samples_failed;
                for (int r = 0; r < RW_DROP_NREASONS; r++) {
                        T->dropped += st.dropped[r];
                        if (drop_by_reason)
                                drop_by_reason[r] += st.dropped[r];
                }
                T->requests += st.requests;
                T->requests_failed += st.requests_failed;
                T->queued += st.queue_length;
                T->send_seconds += st.send_seconds_total;
        }
}

/* Per endpoint: requests and send time seen so far, for the latencies. */
struct ep_seen {
        uint64_t requests;
        double seconds;
};

static void poll_latency(struct fleet *F, struct ep_seen *seen)
{
        for (size_t i = 0; i < F->n_ep; i++) {
                struct rw_endpoint_stats st;
                uint64_t ok;

                rw_endpoint_get_stats(F->ep[i], &st);
                ok = st.requests - st.requests_failed;
                if (ok > seen[i].requests) {
                        uint64_t n = ok - seen[i].requests;
                        /* one request: its own latency; several since the last
                         * look: their mean, once each */
                        double each = n == 1
                                          ? st.last_send_seconds
                                          : (st.send_seconds_total - seen[i].seconds) / (double)n;

                        for (uint64_t r = 0; r < n; r++) {
                                if (F->n_lat == F->cap_lat) {
                                        size_t cap = F->cap_lat ? 2 * F->cap_lat : 4096;
                                        float *l = realloc(F->lat, cap * sizeof(*l));

                                        if (!l)
                                                break;
                                        F->lat = l;
                                        F->cap_lat = cap;
                                }
                                F->lat[F->n_lat++] = (float)(each * 1e3);
                        }
                        seen[i].requests = ok;
                        seen[i].seconds = st.send_seconds_total;
                }
        }
}

static int float_cmp(const void *a, const void *b)
{
        float x = *(const float *)a, y = *(const float *)b;

        return x < y ? -1 : x > y;
}

static double quantile(float *v, size_t n, double q)
{
        size_t i;

        if (!n)
                return NAN;
        i = (size_t)ceil(q * (double)n);
        return v[i ? i - 1 : 0];
}

static double cpu_seconds(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- truth ---- */

static int write_truth(struct fleet *F)
{
        json_object *top = json_object_new_object(), *faults = json_object_new_array(),
                    *hosts = json_object_new_object();
        const char *text;
        int rc;

        json_object_object_add(top, "hosts", json_object_new_int64((int64_t)F->hosts));
        json_object_object_add(top, "seed", json_object_new_uint64(F->seed));
        json_object_object_add(top, "interval", json_object_new_double(F->interval));
        for (size_t i = 0; i < F->hosts; i++) {
                struct host *h = &F->h[i];
                json_object *f;

                json_object_object_add(hosts, h->name, json_object_new_string(F->mix[h->mix].name));
                if (h->fault == FAULT_NONE)
                        continue;
                f = json_object_new_object();
                json_object_object_add(f, "instance", json_object_new_string(h->name));
                json_object_object_add(f, "kind", json_object_new_string(fault_names[h->fault]));
                json_object_object_add(f, "machine", json_object_new_string(h->t->machine));
                if (h->t->port[0])
                        json_object_object_add(f, "port", json_object_new_string(h->t->port));
                if (h->t->bdf[0])
                        json_object_object_add(f, "bdf", json_object_new_string(h->t->bdf));
                if (h->t->direction[0])
                        json_object_object_add(f, "direction",
                                               json_object_new_string(h->t->direction));
                json_object_array_add(faults, f);
        }
        json_object_object_add(top, "faults", faults);
        json_object_object_add(top, "machines", hosts);
        text =
            json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
        rc = safe_file_write(F->truth, text, strlen(text), 0644);
        json_object_put(top);
        if (rc)
                fleet_error("--truth %s: %s", F->truth, strerror(-rc));
        return rc;
}

/* ---- the hosts ---- */

static int make_hosts(struct fleet *F)
{
        uint64_t rng = F->seed * 0x9e3779b97f4a7c15ULL + 1;
        size_t nfault = (size_t)llround((double)F->hosts * F->fault_rate);
        size_t *order;
        double wsum = 0;
        int kind0;

        F->h = calloc(F->hosts, sizeof(*F->h));
        order = malloc(F->hosts * sizeof(*order));
        if (!F->h || !order) {
                free(order);
                return -1;
        }
        for (size_t m = 0; m < F->n_mix; m++)
                wsum += F->mix[m].weight;
        for (size_t i = 0; i < F->hosts; i++) {
                struct host *h = &F->h[i];
                double x = rng_unit(&rng) * wsum;
                size_t m = 0;

                while (m + 1 < F->n_mix && x >= F->mix[m].weight) {
                        x -= F->mix[m].weight;
                        m++;
                }
                h->namelen = (size_t)snprintf(h->name, sizeof(h->name), "fleet-%05zu", i + 1);
                h->mix = m;
                h->t = F->mix[m].base;
                h->offset = (size_t)(rng_next(&rng) % CYCLE_STEPS);
                h->factor = 0.5 + 0.5 * rng_unit(&rng);
                h->fault = FAULT_NONE;
                order[i] = i;
        }
        /* the faulty hosts: a seeded draw; kinds in turn from a seeded
         * start, so that every kind is planted once there are six faults */
        for (size_t i = F->hosts; i > 1; i--) {
                size_t j = (size_t)(rng_next(&rng) % i), x = order[i - 1];

                order[i - 1] = order[j];
                order[j] = x;
        }
        kind0 = (int)(rng_next(&rng) % FAULT_NKINDS);
        /* Fault f has kind kind0 + f (in turn); it goes to the first host of
         * the seeded order, not yet faulty, whose machine can show it (no
         * per-port utilisation on turin-2p: no saturation there); a kind no
         * host can show gives way to the next. */
        for (size_t f = 0, planted = 0; f < nfault && planted < F->hosts; f++) {
                bool done = false;

                for (int k = 0; k < FAULT_NKINDS && !done; k++) {
                        enum fault_kind kind =
                            (enum fault_kind)((kind0 + (int)f + k) % FAULT_NKINDS);

                        for (size_t p = 0; p < F->hosts && !done; p++) {
                                struct host *h = &F->h[order[p]];
                                struct template *t;

                                if (h->fault != FAULT_NONE || !F->mix[h->mix].ncand[kind])
                                        continue;
                                t = fault_for(F, h->mix, kind, &rng);
                                if (!t)
                                        continue;
                                h->t = t;
                                h->fault = kind;
                                if (kind == FAULT_SATURATION)
                                        h->factor = 1;
                                done = true;
                                planted++;
                        }
                }
                if (!done) {
                        fprintf(stderr, PROG ": no more faults could be planted (%zu of %zu)\n",
                                planted, nfault);
                        break;
                }
        }
        free(order);
        for (size_t i = 0; i < F->hosts; i++) {
                struct host *h = &F->h[i];

                h->acc = malloc(h->t->n * sizeof(*h->acc));
                if (!h->acc)
                        return -1;
                memcpy(h->acc, h->t->init, h->t->n * sizeof(*h->acc));
        }
        return 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
        fprintf(f,
                "usage: pciescope fleet --hosts N --duration SECONDS --url URL [--url URL ...]\n"
                "                       [--interval S] [--seed K] [--header \"Name: value\"]...\n"
                "                       [--tenant-path [--tenants N]] [--truth FILE]\n"
                "                       [--fault-rate R] [--start-offset S] [--mix NAME=W,...]\n"
                "                       [--connections N] [--machine-dir DIR] [--healed-dir DIR]\n"
                "Simulated hosts send the series of the pcie plugin at Detail default\n"
                "by Prometheus Remote-Write 1.0 (see docs/fleet.md). Every value is\n"
                "SIMULATED. The default mix is %s: every vendor's\n"
                "shipped machine, each healed of its own faults (the fleet's faults are\n"
                "the planted ones, --truth).\n",
                DEFAULT_MIX);
}

static int parse_number(const char *flag, const char *arg, double min, double max, double *out)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(arg, &end);
        if (errno || end == arg || *end || !(v >= min && v <= max)) {
                fleet_error("%s %s: a number from %g to %g", flag, arg, min, max);
                return -1;
        }
        *out = v;
        return 0;
}

static int parse_mix(struct fleet *F, const char *arg)
{
        char *copy = strdup(arg), *save = NULL, *tok;
        int rc = 0;

        if (!copy)
                return -1;
        F->n_mix = 0;
        for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(tok, '=');
                double w = 1;

                if (eq) {
                        *eq = '\0';
                        rc = parse_number("--mix weight", eq + 1, 0.001, 1e6, &w);
                }
                if (!rc && (!*tok || strchr(tok, '/') || strlen(tok) >= sizeof(F->mix[0].name) ||
                            F->n_mix == MAX_MIX)) {
                        fleet_error("--mix %s: want NAME=WEIGHT,... (machine names, at most %d)",
                                    arg, MAX_MIX);
                        rc = -1;
                }
                if (!rc) {
                        snprintf(F->mix[F->n_mix].name, sizeof(F->mix[0].name), "%s", tok);
                        F->mix[F->n_mix++].weight = w;
                }
        }
        if (!rc && !F->n_mix) {
                fleet_error("--mix %s: no machine", arg);
                rc = -1;
        }
        free(copy);
        return rc;
}

static int parse_args(struct fleet *F, int argc, char **argv)
{
        enum {
                O_HOSTS = 256,
                O_DURATION,
                O_URL,
                O_INTERVAL,
                O_SEED,
                O_HEADER,
                O_TENANT_PATH,
                O_TENANTS,
                O_TRUTH,
                O_FAULT_RATE,
                O_START_OFFSET,
                O_MIX,
                O_CONNECTIONS,
                O_MACHINE_DIR,
                O_HEALED_DIR,
                O_HELP
        };
        static const struct option opts[] = {
            {"hosts", required_argument, NULL, O_HOSTS},
            {"duration", required_argument, NULL, O_DURATION},
            {"url", required_argument, NULL, O_URL},
            {"interval", required_argument, NULL, O_INTERVAL},
            {"seed", required_argument, NULL, O_SEED},
            {"header", required_argument, NULL, O_HEADER},
            {"tenant-path", no_argument, NULL, O_TENANT_PATH},
            {"tenants", required_argument, NULL, O_TENANTS},
            {"truth", required_argument, NULL, O_TRUTH},
            {"fault-rate", required_argument, NULL, O_FAULT_RATE},
            {"start-offset", required_argument, NULL, O_START_OFFSET},
            {"mix", required_argument, NULL, O_MIX},
            {"connections", required_argument, NULL, O_CONNECTIONS},
            {"machine-dir", required_argument, NULL, O_MACHINE_DIR},
            {"healed-dir", required_argument, NULL, O_HEALED_DIR},
            {"help", no_argument, NULL, O_HELP},
            {0},
        };
        bool have_hosts = false, have_duration = false, have_tenants = false;
        double v;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case O_HOSTS:
                        if (parse_number("--hosts", optarg, 1, 100000, &v) || v != floor(v)) {
                                if (v != floor(v))
                                        fleet_error("--hosts %s: a whole number", optarg);
                                return -1;
                        }
                        F->hosts = (unsigned long)v;
                        have_hosts = true;
                        break;
                case O_DURATION:
                        if (parse_number("--duration", optarg, 1, 31 * 86400.0, &F->duration))
                                return -1;
                        have_duration = true;
                        break;
                case O_URL:
                        if (F->n_urls == MAX_URLS) {
                                fleet_error("--url: at most %d", MAX_URLS);
                                return -1;
                        }
                        if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8)) {
                                fleet_error("--url %s: an http:// or https:// URL", optarg);
                                return -1;
                        }
                        F->urls[F->n_urls++] = optarg;
                        break;
                case O_INTERVAL:
                        if (parse_number("--interval", optarg, 1, 3600, &F->interval))
                                return -1;
                        break;
                case O_SEED: {
                        char *end;

                        errno = 0;
                        F->seed = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || *optarg == '-') {
                                fleet_error("--seed %s: a whole number from 0 to %llu", optarg,
                                            (unsigned long long)UINT64_MAX);
                                return -1;
                        }
                        break;
                }
                case O_HEADER:
                        if (F->n_headers == MAX_HEADERS) {
                                fleet_error("--header: at most %d", MAX_HEADERS);
                                return -1;
                        }
                        if (!strchr(optarg, ':') || *optarg == ':') {
                                fleet_error("--header %s: want \"Name: value\"", optarg);
                                return -1;
                        }
                        F->headers[F->n_headers++] = optarg;
                        break;
                case O_TENANT_PATH:
                        F->tenant_path = true;
                        break;
                case O_TENANTS:
                        if (parse_number("--tenants", optarg, 1, 1000, &v))
                                return -1;
                        F->tenants = (unsigned int)v;
                        have_tenants = true;
                        break;
                case O_TRUTH:
                        F->truth = optarg;
                        break;
                case O_FAULT_RATE:
                        if (parse_number("--fault-rate", optarg, 0, 1, &F->fault_rate))
                                return -1;
                        break;
                case O_START_OFFSET:
                        if (parse_number("--start-offset", optarg, 0, 7 * 86400.0,
                                         &F->start_offset))
                                return -1;
                        break;
                case O_MIX:
                        if (parse_mix(F, optarg))
                                return -1;
                        break;
                case O_CONNECTIONS:
                        if (parse_number("--connections", optarg, 1, 1024, &v))
                                return -1;
                        F->connections = (unsigned int)v;
                        break;
                case O_MACHINE_DIR:
                        F->machine_dir = optarg;
                        break;
                case O_HEALED_DIR:
                        F->healed_dir = optarg;
                        break;
                case 'h':
                case O_HELP:
                        usage(stdout);
                        exit(0);
                default:
                        usage(stderr);
                        return -1;
                }
        }
        if (optind < argc) {
                fleet_error("unexpected argument '%s'", argv[optind]);
                return -1;
        }
        if (!have_hosts || !have_duration || !F->n_urls) {
                fleet_error("--hosts, --duration and --url are required (try --help)");
                return -1;
        }
        if (have_tenants && !F->tenant_path) {
                fleet_error("--tenants goes with --tenant-path");
                return -1;
        }
        return 0;
}

static atomic_bool stop_requested;
static void on_signal(int sig)
{
        (void)sig;
        atomic_store(&stop_requested, true);
}

int main(int argc, char **argv)
{
        struct fleet F = {
            .interval = 10, .seed = 1, .fault_rate = 0.03, .tenants = 2, .connections = 32};
        struct sigaction sa = {.sa_handler = on_signal};
        uint64_t drops[RW_DROP_NREASONS] = {0}, make_failed = 0;
        struct ep_seen *seen = NULL;
        struct totals T, last;
        size_t max_series = 0, ticks, sent_interval = 0, hosts_interval = 0;
        uint64_t pushed = 0;
        double t0, w0, cpu0, last_report, end_live;
        int status = 1;

        /* `pciescope [global options] fleet ARGS`: ours start after "fleet" */
        for (int i = 1; i < argc; i++)
                if (!strcmp(argv[i], "fleet")) {
                        argv[i] = argv[0];
                        argv += i;
                        argc -= i;
                        break;
                }
        if (parse_mix(&F, DEFAULT_MIX) || parse_args(&F, argc, argv))
                return 3;
        snprintf(F.tmpdir, sizeof(F.tmpdir), "%s/pciescope-fleet-XXXXXX",
                 getenv("TMPDIR") && *getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 32
                     ? getenv("TMPDIR")
                     : "/tmp");
        if (!mkdtemp(F.tmpdir)) {
                fleet_error("%s: %s", F.tmpdir, strerror(errno));
                return 3;
        }
        fprintf(stderr,
                PROG ": %lu SIMULATED hosts, seed %llu, every %g s for %g s, fault rate %g\n",
                F.hosts, (unsigned long long)F.seed, F.interval, F.duration, F.fault_rate);
        if (load_mix(&F) || make_hosts(&F))
                goto out;
        rmdir(F.tmpdir);
        for (size_t i = 0; i < F.n_tmpl; i++)
                if (F.tmpl[i]->max_per_step > max_series)
                        max_series = F.tmpl[i]->max_per_step;
        for (size_t m = 0; m < F.n_mix; m++)
                if (F.mix[m].base->max_per_step > max_series)
                        max_series = F.mix[m].base->max_per_step;
        if (F.truth && write_truth(&F))
                goto out;
        {
                size_t nf = 0;

                for (size_t i = 0; i < F.hosts; i++)
                        nf += F.h[i].fault != FAULT_NONE;
                fprintf(stderr, PROG ": %zu hosts carry a planted fault (%zu fault shapes run)\n",
                        nf, F.n_tmpl);
        }
        if (rw_global_init()) {
                fleet_error("libcurl did not initialise");
                goto out;
        }
        if (endpoints_start(&F, max_series))
                goto out;
        fprintf(stderr, PROG ": %zu connections", F.n_ep);
        for (size_t i = 0; i < F.n_ep; i++)
                if (!i || strcmp(F.cfg[i].url, F.cfg[i - 1].url)) {
                        char red[512];

                        fprintf(stderr, "%s %s", i ? "," : " to",
                                rw_redact_url(F.cfg[i].url, red, sizeof(red)));
                }
        fputc('\n', stderr);
        seen = calloc(F.n_ep, sizeof(*seen));
        if (!seen)
                goto out;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        /* Simulated time starts start_offset s in the past: what lies
         * before now is sent as fast as the receivers take it, in order. */
        ticks = (size_t)ceil((F.start_offset + F.duration) / F.interval);
        t0 = mono_now();
        w0 = wall_now() - F.start_offset;
        end_live = t0 + F.duration;
        cpu0 = cpu_seconds();
        last_report = t0;
        memset(&last, 0, sizeof(last));
        for (size_t k = 0; k < ticks && !atomic_load(&stop_requested); k++) {
                for (size_t i = 0; i < F.hosts && !atomic_load(&stop_requested); i++) {
                        struct host *h = &F.h[i];
                        double sim =
                            (double)k * F.interval + F.interval * (double)i / (double)F.hosts;
                        double due = t0 + sim - F.start_offset, now;

                        if (sim - F.start_offset >= F.duration)
                                continue;
                        while ((now = mono_now()) < due && !atomic_load(&stop_requested)) {
                                poll_latency(&F, seen);
                                nap(due - now > 0.005 ? 0.005 : due - now);
                        }
                        /* history: wait for room, a live host would not */
                        if (due < now - F.interval) {
                                struct rw_endpoint_stats st;

                                for (;;) {
                                        rw_endpoint_get_stats(h->ep, &st);
                                        if (st.queue_length < 4 * max_series ||
                                            atomic_load(&stop_requested))
                                                break;
                                        poll_latency(&F, seen);
                                        nap(0.002);
                                }
                        }
                        {
                                size_t n = host_send(h, k, (int64_t)llround((w0 + sim) * 1e3),
                                                     &make_failed);

                                sent_interval += n;
                                pushed += n;
                        }
                        hosts_interval++;
                }
                /* progress, once per interval */
                {
                        double now = mono_now(), dt = now - last_report;

                        poll_latency(&F, seen);
                        totals(&F, &T, NULL);
                        fprintf(stderr,
                                PROG ": t=%.0fs hosts sending %zu/%lu, %.0f samples/s sent "
                                     "(%zu queued this interval), errors %llu (requests failed "
                                     "%llu, samples dropped %llu), queue %llu\n",
                                now - t0, hosts_interval, F.hosts,
                                dt > 0 ? (double)(T.sent - last.sent) / dt : 0.0, sent_interval,
                                (unsigned long long)(T.requests_failed - last.requests_failed +
                                                     T.dropped - last.dropped),
                                (unsigned long long)(T.requests_failed - last.requests_failed),
                                (unsigned long long)(T.dropped - last.dropped),
                                (unsigned long long)T.queued);
                        last = T;
                        last_report = now;
                        sent_interval = hosts_interval = 0;
                }
        }
        while (mono_now() < end_live && !atomic_load(&stop_requested)) {
                poll_latency(&F, seen);
                nap(0.005);
        }
        /* drain: what is queued goes out (each endpoint within its timeout) */
        for (size_t i = 0; i < F.n_ep; i++)
                rw_endpoint_flush(F.ep[i]);
        /* until every sample pushed is sent or dropped (a request in
         * flight included), at most 30 s */
        for (int i = 0; i < 600 && !atomic_load(&stop_requested); i++) {
                totals(&F, &T, NULL);
                poll_latency(&F, seen);
                if (T.sent + T.dropped >= pushed)
                        break;
                nap(0.05);
        }
        poll_latency(&F, seen);
        {
                double cpu = cpu_seconds() - cpu0, wall = mono_now() - t0;
                char reasons[512] = "";
                size_t used = 0;
                uint64_t unsent;

                for (size_t i = 0; i < F.n_ep; i++)
                        rw_endpoint_begin_stop(F.ep[i]);
                /* stats before the endpoints go away */
                totals(&F, &T, drops);
                /* what is neither sent nor dropped yet is lost with the
                 * shutdown (retried in vain, or still queued) */
                unsent = pushed > T.sent + T.dropped ? pushed - T.sent - T.dropped : 0;
                for (int r = 0; r < RW_DROP_NREASONS; r++)
                        if (drops[r] && r != RW_DROP_SHUTDOWN && used < sizeof(reasons))
                                used += (size_t)snprintf(reasons + used, sizeof(reasons) - used,
                                                         " %s %llu", rw_drop_reason_name(r),
                                                         (unsigned long long)drops[r]);
                drops[RW_DROP_SHUTDOWN] += unsent;
                if (drops[RW_DROP_SHUTDOWN] && used < sizeof(reasons))
                        used += (size_t)snprintf(reasons + used, sizeof(reasons) - used,
                                                 " unsent at the end %llu",
                                                 (unsigned long long)drops[RW_DROP_SHUTDOWN]);
                qsort(F.lat, F.n_lat, sizeof(*F.lat), float_cmp);
                fprintf(stderr,
                        PROG ": summary: %lu hosts, %.0f s: samples sent %llu, dropped %llu%s%s%s, "
                             "retried %llu, failed %llu; requests %llu (%llu failed); send latency "
                             "p50 %.1f ms, p99 %.1f ms; sender CPU %.2f s (%.3f cores)\n",
                        F.hosts, wall, (unsigned long long)T.sent,
                        (unsigned long long)(T.dropped + make_failed + unsent), used ? " (" : "",
                        used ? reasons + 1 : "", used ? ")" : "", (unsigned long long)T.retried,
                        (unsigned long long)T.failed, (unsigned long long)T.requests,
                        (unsigned long long)T.requests_failed, quantile(F.lat, F.n_lat, 0.5),
                        quantile(F.lat, F.n_lat, 0.99), cpu, wall > 0 ? cpu / wall : 0.0);
                status = T.dropped + make_failed + unsent ? 1 : 0;
        }
out:
        for (size_t i = 0; F.ep && i < F.n_ep; i++)
                if (F.ep[i])
                        rw_endpoint_stop(F.ep[i]);
        for (size_t i = 0; F.cfg && i < F.n_ep; i++)
                if (!F.ep || !F.ep[i]) /* an endpoint owns its configuration's strings */
                        rw_endpoint_cfg_free(&F.cfg[i]);
        free(F.cfg);
        free(F.ep);
        free(seen);
        free(F.lat);
        rmdir(F.tmpdir);
        for (size_t i = 0; F.h && i < F.hosts; i++)
                free(F.h[i].acc);
        free(F.h);
        for (size_t i = 0; i < F.n_tmpl; i++)
                template_free(F.tmpl[i]);
        free(F.tmpl);
        for (size_t m = 0; m < F.n_mix; m++) {
                template_free(F.mix[m].base);
                free(F.mix[m].json);
        }
        return status == 1 && !F.ep ? 3 : status;
}
