// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * golden_stream.c - the value stream the `pcie` plugin dispatches on a
 * simulated machine, under a fake clock, as text (one value a line):
 *
 *   golden_stream [--series|--series-list] MACHINE KERNEL|- STEPS [Option=value...]
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

static void print_sample(const struct pcie_sample *s)
{
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
        size_t n = s->label_count;

        memcpy(labels, s->labels, n * sizeof(labels[0]));
        qsort(labels, n, sizeof(labels[0]), label_cmp);
        printf("%u pcie/%s/%s/%s %s %s {", step, s->instance, s->family->collectd_type,
               s->type_instance, s->metric, pcie_metric_kind_name(s->kind));
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

/* --identity-check: the identity the spec's rules derive against the one
 * the source set, sample by sample. */
static unsigned long identity_compared, identity_differ;

static void check_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)ctx, (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                struct pcie_identity id;
                int err = pcie_identity(s, set->samples, set->count, &id);

                identity_compared++;
                if (!err && !strcmp(id.plugin_instance, s->instance) &&
                    !strcmp(id.type_instance, s->type_instance))
                        continue;
                if (identity_differ++ < 20)
                        printf("differs: %s %s/%s, rules say %s/%s (%d)\n", s->metric, s->instance,
                               s->type_instance, id.plugin_instance, id.type_instance, err);
        }
}

static void print_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)ctx, (void)unit;
        for (size_t i = 0; i < set->count; i++)
                print_sample(&set->samples[i]);
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
                        "usage: golden_stream [--series|--series-list] MACHINE KERNEL|- STEPS "
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
                engine_read(e,
                            check_identity ? check_set
                            : count_series ? collect_set
                                           : print_set,
                            &series);
        }
        if (count_series)
                print_series(&series, list_series);
        if (check_identity)
                printf("identity: %lu samples compared, %lu differ\n", identity_compared,
                       identity_differ);
        engine_close(e);
        engine_config_clear(&cfg);
        return check_identity && identity_differ ? 1 : 0;
}
