// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * golden_stream.c - the value stream the `pcie` plugin dispatches on a
 * simulated machine, under a fake clock, as text (one value a line):
 *
 *   golden_stream [--series|--series-list|--identity-check] MACHINE KERNEL|- STEPS
 *                 [Option=value...]
 *
 * Every step is one collectd interval of 1 s: collector threads tick when
 * they are due (PTT devices at their window/poll times), then the read
 * callback's values follow in dispatch order. Each line holds what a write
 * plugin sees: the collectd identity, prom.name/prom.type, the labels
 * (sorted by name, simulated included) and the value. CPU-time values are
 * the collectors' own and differ run to run: shown as "cpu".
 *
 * The streams in tests/golden/ were recorded before the engine refactor
 * (issue 11) by this tool driving the collectors in the plugin's own
 * orchestration order; it now drives the engine the plugin runs on, in
 * manual mode under the fake clock, and tests/integration/golden.sh
 * compares the two byte for byte.
 *
 * Options of the plugin's block follow as Option=value (Detail=full,
 * TracePeriod=2). With --series the tool prints, instead of the stream,
 * how many distinct series (name and labels, as a TSDB counts them) each
 * metric family had over the run, then "total N": the series budget of
 * docs/metrics.md (tests/integration/series_budget.sh). --series-list
 * prints the series themselves as Prometheus' /api/v1/series lists them.
 * --identity-check checks that every sample has a collectd identity by the
 * rules of metrics/families.spec and that no interval has one twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "pcie_identity.h"

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

static unsigned int step;

static int label_cmp(const void *a, const void *b)
{
        return strcmp(((const struct pcie_label *)a)->name, ((const struct pcie_label *)b)->name);
}

/* @s of the interval @set, as the plugin dispatches it. */
static void print_sample(const struct pcie_sample *s, const struct sample_set *set)
{
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
        size_t n = s->label_count;
        struct pcie_identity id;

        pcie_identity(s, set->samples, set->count, &id);
        memcpy(labels, s->labels, n * sizeof(labels[0]));
        qsort(labels, n, sizeof(labels[0]), label_cmp);
        printf("%u pcie/%s/%s/%s %s %s {", step, id.plugin_instance, s->family->collectd_type,
               id.type_instance, s->metric, pcie_metric_kind_name(s->kind));
        for (size_t i = 0; i < n; i++)
                printf("%s%s=\"%s\"", i ? "," : "", labels[i].name, labels[i].value);
        printf("} ");
        if (strstr(s->metric, "cpu_seconds"))
                printf("cpu\n");
        else if (s->kind == PCIE_METRIC_COUNTER)
                printf("%llu\n", (unsigned long long)s->counter);
        else
                printf("%.17g\n", s->gauge);
}

/* --identity-check: every sample has a collectd identity by the spec's
 * rules, and no two samples of one interval share one (collectd would
 * take the second for a new value of the first). */
struct identity_check {
        unsigned long samples, without, twice;
        char **keys;
        size_t count, cap;
};

static int key_cmp(const void *a, const void *b);

static void check_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct identity_check *c = ctx;

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                struct pcie_identity id;
                char key[3 * PCIE_IDENTITY_LEN];

                c->samples++;
                if (pcie_identity(s, set->samples, set->count, &id)) {
                        if (c->without++ < 10)
                                printf("no identity: %s\n", s->metric);
                        continue;
                }
                snprintf(key, sizeof(key), "%s/%s/%s", id.plugin_instance, s->family->collectd_type,
                         id.type_instance);
                if (c->count == c->cap) {
                        c->cap = c->cap ? 2 * c->cap : 4096;
                        c->keys = realloc(c->keys, c->cap * sizeof(*c->keys));
                        if (!c->keys)
                                abort();
                }
                if (!(c->keys[c->count++] = strdup(key)))
                        abort();
        }
}

/* The end of an interval: its identities twice. */
static void check_interval(struct identity_check *c)
{
        qsort(c->keys, c->count, sizeof(*c->keys), key_cmp);
        for (size_t i = 1; i < c->count; i++)
                if (!strcmp(c->keys[i], c->keys[i - 1]) && c->twice++ < 10)
                        printf("twice in interval %u: pcie/%s\n", step, c->keys[i]);
        for (size_t i = 0; i < c->count; i++)
                free(c->keys[i]);
        c->count = 0;
}

static void print_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)ctx, (void)unit;
        for (size_t i = 0; i < set->count; i++)
                print_sample(&set->samples[i], set);
}

/* --series: every distinct series seen, as Prometheus' /api/v1/series
 * lists one: "__name__=<name>,<label>=<value>..." sorted by label name. */
struct series_list {
        char **keys;
        size_t count, cap;
};

static void series_key(const struct pcie_sample *s, char *key, size_t len)
{
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
        size_t n = s->label_count, used;

        memcpy(labels, s->labels, n * sizeof(labels[0]));
        qsort(labels, n, sizeof(labels[0]), label_cmp);
        used = (size_t)snprintf(key, len, "__name__=%s", s->metric);
        for (size_t i = 0; i < n && used < len; i++)
                used += (size_t)snprintf(key + used, len - used, ",%s=%s", labels[i].name,
                                         labels[i].value);
}

static void collect_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct series_list *l = ctx;
        char key[2048];

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                series_key(&set->samples[i], key, sizeof(key));
                if (l->count == l->cap) {
                        size_t cap = l->cap ? 2 * l->cap : 4096;
                        char **keys = realloc(l->keys, cap * sizeof(*keys));

                        if (!keys)
                                abort();
                        l->keys = keys;
                        l->cap = cap;
                }
                if (!(l->keys[l->count++] = strdup(key)))
                        abort();
        }
}

static int key_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Families in name order with their distinct series, then the total; or
 * (@list) the distinct series themselves. */
static void print_series(struct series_list *l, bool list)
{
        const size_t skip = strlen("__name__=");
        size_t total = 0;

        qsort(l->keys, l->count, sizeof(*l->keys), key_cmp);
        for (size_t i = 0; i < l->count;) {
                const char *name = l->keys[i] + skip;
                size_t name_len = strcspn(name, ","), series = 0, j = i;

                for (; j < l->count && strcspn(l->keys[j] + skip, ",") == name_len &&
                       !strncmp(l->keys[j] + skip, name, name_len);
                     j++) {
                        if (j > i && !strcmp(l->keys[j], l->keys[j - 1]))
                                continue;
                        series++;
                        if (list)
                                printf("%s\n", l->keys[j]);
                }
                if (!list)
                        printf("%.*s %zu\n", (int)name_len, name, series);
                total += series;
                i = j;
        }
        if (!list)
                printf("total %zu\n", total);
        for (size_t i = 0; i < l->count; i++)
                free(l->keys[i]);
        free(l->keys);
}

/* Option=value: a number, true/false, or a string, as collectd types it. */
static int set_option(struct engine_config *cfg, const char *arg, char *why, size_t whylen)
{
        char key[64], *end;
        const char *eq = strchr(arg, '='), *value;
        double number;

        if (!eq || (size_t)(eq - arg) >= sizeof(key)) {
                snprintf(why, whylen, "expected Option=value");
                return -EINVAL;
        }
        memcpy(key, arg, (size_t)(eq - arg));
        key[eq - arg] = 0;
        value = eq + 1;
        errno = 0;
        number = strtod(value, &end);
        if (*value && !*end && !errno)
                return engine_config_set_number(cfg, key, number, why, whylen);
        if (!strcmp(value, "true") || !strcmp(value, "false"))
                return engine_config_set_boolean(cfg, key, !strcmp(value, "true"), why, whylen);
        return engine_config_set_string(cfg, key, value, why, whylen);
}

int main(int argc, char **argv)
{
        struct engine_host host = {.log = quiet_log,
                                   .interval = 1.0,
                                   .clock = fake_clock,
                                   .manual = true,
                                   .label_simulated = true,
                                   .baseline_at_start = true}; /* as the plugin */
        struct engine_config cfg;
        struct series_list series = {0};
        struct identity_check idc = {0};
        bool check_identity = argc > 1 && !strcmp(argv[1], "--identity-check");
        bool list_series = argc > 1 && !strcmp(argv[1], "--series-list");
        bool count_series = list_series || (argc > 1 && !strcmp(argv[1], "--series"));
        struct engine *e;
        char why[512] = "";
        unsigned int steps;

        if (count_series || check_identity)
                argc--, argv++;
        if (argc < 4) {
                fprintf(stderr,
                        "usage: golden_stream [--series|--series-list|--identity-check] MACHINE "
                        "KERNEL|- STEPS "
                        "[Option=value...]\n");
                return 2;
        }
        steps = (unsigned int)atoi(argv[3]);
        /* The plugin's configuration: Simulate, SimulateKernel, options. */
        if (engine_config_init(&cfg) ||
            engine_config_set_string(&cfg, "Simulate", argv[1], why, sizeof(why)) ||
            (strcmp(argv[2], "-") &&
             engine_config_set_string(&cfg, "SimulateKernel", argv[2], why, sizeof(why)))) {
                fprintf(stderr, "golden_stream: %s\n", why);
                return 1;
        }
        for (int i = 4; i < argc; i++) {
                if (set_option(&cfg, argv[i], why, sizeof(why))) {
                        fprintf(stderr, "golden_stream: %s: %s\n", argv[i], why);
                        return 1;
                }
        }
        if (engine_config_check(&cfg, why, sizeof(why)) ||
            engine_open(&cfg, &host, &e, why, sizeof(why))) {
                fprintf(stderr, "golden_stream: %s\n", why);
                return 1;
        }
        /* Threads start: counters opened at t = 0, first tick at 1 s. */
        if (engine_start(e))
                return 1;
        for (step = 1; step <= steps; step++) {
                double target = step, due;

                /* Collector threads: everything due up to the read. */
                while ((due = engine_next_due(e)) <= target) {
                        fake_now = due;
                        engine_advance(e, due);
                }
                fake_now = target;
                /* the read callback */
                if (check_identity) {
                        engine_read(e, check_set, &idc);
                        check_interval(&idc);
                } else {
                        engine_read(e, count_series ? collect_set : print_set, &series);
                }
        }
        if (count_series)
                print_series(&series, list_series);
        if (check_identity)
                printf("identity: %lu samples, %lu without one, %lu twice in an interval\n",
                       idc.samples, idc.without, idc.twice);
        engine_close(e);
        engine_config_clear(&cfg);
        free(idc.keys);
        return check_identity && (idc.without || idc.twice) ? 1 : 0;
}
