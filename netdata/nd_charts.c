// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nd_charts.c - samples to Netdata charts. See nd_charts.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_charts.h"
#include "pcie_families.h"

/* One row: how the samples of one Prometheus family become charts. */
struct nd_map {
        const struct pcie_family *fam; /* its samples */
        const char *need;              /* a label the sample must carry (Intel: "stack"), or NULL */
        const char
            *context; /* "port_bandwidth": context pcie.port_bandwidth, ids port_bandwidth_* */
        const char *title;
        const char *units;
        const char *family;
        const char *type;        /* line, area, stacked */
        const char *chart_by[2]; /* labels naming the chart; none: one chart */
        const char *dim_by[2];   /* labels naming the dimension; none: dim_name */
        const char *dim_name;
        /* SET round(value * scale); DIMENSION 1/divisor takes it back. The
         * scale keeps what the double holds that matters (milli-bytes/s,
         * picoseconds, nano-ratio), the divisor gives Netdata's units. */
        double scale;
        long long divisor;
        bool incremental; /* counters: Netdata makes the per-second rate */
        bool absent_zero; /* a dimension without a sample this interval is 0 (findings) */
};

/* Units and their factors, shared by the rows. */
#define BANDWIDTH .units = "KiB/s", .scale = 1e3, .divisor = 1024000       /* milli-bytes/s */
#define RATIO     .units = "percentage", .scale = 1e9, .divisor = 10000000 /* nano-ratio */
#define SECONDS   .units = "nanoseconds", .scale = 1e12, .divisor = 1000   /* picoseconds */
#define PLAIN     .scale = 1, .divisor = 1

/* A row with a `need` label the sample carries wins over the family's row
 * without one (Intel's "stack", the AMD data fabric's "root_complex");
 * otherwise the first row of the family. Detail-only families (raw PMU
 * counters, capacity, cycles, policies) are deliberately not here: the
 * chart set must not depend on them. */
static const struct nd_map maps[] = {
    {.fam = PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND,
     .need = "stack",
     .context = "iio_bandwidth",
     .title = "Inbound PCIe bandwidth per IIO stack",
     .family = "iio",
     .type = "stacked",
     .chart_by = {"socket", "stack"},
     .dim_by = {"part", "direction"},
     BANDWIDTH},
    {.fam = PCIE_FAM_PORT_UTILIZATION_RATIO,
     .need = "stack",
     .context = "iio_utilization",
     .title = "PCIe link utilisation per IIO stack",
     .family = "iio",
     .type = "line",
     .chart_by = {"socket", "stack"},
     .dim_by = {"part", "capacity"},
     RATIO},
    {.fam = PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND,
     .context = "port_bandwidth",
     .title = "PCIe Root Port bandwidth by direction and TLP type",
     .family = "bandwidth",
     .type = "stacked",
     .chart_by = {"port"},
     .dim_by = {"direction", "tlp"},
     BANDWIDTH},
    {.fam = PCIE_FAM_PORT_UTILIZATION_RATIO,
     .context = "port_utilization",
     .title = "PCIe Root Port link utilisation",
     .family = "bandwidth",
     .type = "line",
     .chart_by = {"port"},
     .dim_by = {"direction", "capacity"},
     RATIO},
    {.fam = PCIE_FAM_PORT_LATENCY_SECONDS,
     .context = "port_latency",
     .title = "PCIe Root Port TLP latency",
     .family = "latency",
     .type = "line",
     .chart_by = {"port"},
     .dim_by = {"event"},
     SECONDS},
    {.fam = PCIE_FAM_DEVICE_BANDWIDTH_BYTES_PER_SECOND,
     .context = "device_bandwidth",
     .title = "PCIe endpoint bandwidth (top talkers)",
     .family = "bandwidth",
     .type = "stacked",
     .chart_by = {"device"},
     .dim_by = {"direction", "tlp"},
     BANDWIDTH},
    {.fam = PCIE_FAM_LINK_SPEED_TRANSFERS_PER_SECOND,
     .context = "link_speed",
     .title = "PCIe link speed",
     .units = "GT/s",
     .family = "link",
     .type = "line",
     .chart_by = {"bdf"},
     .dim_by = {"state"},
     .scale = 1,
     .divisor = 1000000000},
    {.fam = PCIE_FAM_LINK_WIDTH_LANES,
     .context = "link_width",
     .title = "PCIe link width",
     .units = "lanes",
     .family = "link",
     .type = "line",
     .chart_by = {"bdf"},
     .dim_by = {"state"},
     PLAIN},
    {.fam = PCIE_FAM_LINK_DOWNTRAINED,
     .context = "link_downtrained",
     .title = "PCIe link trained below what both ends support",
     .units = "boolean",
     .family = "link",
     .type = "line",
     .chart_by = {"bdf"},
     .dim_name = "downtrained",
     PLAIN},
    {.fam = PCIE_FAM_AUDIT_FINDING,
     .context = "mps_mrrs_findings",
     .title = "PCIe MPS/MRRS audit findings",
     .units = "findings",
     .family = "audit",
     .type = "line",
     .chart_by = {"bdf"},
     .dim_by = {"finding"},
     PLAIN,
     .absent_zero = true},
    {.fam = PCIE_FAM_AER_DEVICE_ERRORS_TOTAL,
     .context = "aer_errors",
     .title = "PCIe AER errors by severity",
     .units = "errors/s",
     .family = "aer",
     .type = "line",
     .chart_by = {"bdf"},
     .dim_by = {"severity"},
     PLAIN,
     .incremental = true},
    {.fam = PCIE_FAM_PTT_TLPS_TOTAL,
     .context = "ptt_tlps",
     .title = "PCIe TLP mix (PTT trace windows)",
     .units = "TLPs/s",
     .family = "ptt",
     .type = "stacked",
     .chart_by = {"pmu"},
     .dim_by = {"direction", "kind"},
     PLAIN,
     .incremental = true},
    {.fam = PCIE_FAM_PTT_COMPLETION_LATENCY_QUANTILE_SECONDS,
     .context = "ptt_latency",
     .title = "PCIe request to completion latency quantiles (PTT)",
     .family = "ptt",
     .type = "line",
     .chart_by = {"pmu"},
     .dim_by = {"completion", "percentile"},
     SECONDS},
    /* CPU nanoseconds per second / 10^7: percent of one CPU. */
    {.fam = PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL,
     .context = "collector_cpu",
     .title = "CPU time of the pciescope collector threads",
     .units = "percentage",
     .family = "plugin",
     .type = "stacked",
     .dim_by = {"pmu", "socket"},
     .scale = 1e9,
     .divisor = 10000000,
     .incremental = true},
    /* Counted per IO root complex, not per Root Port (AMD data fabric). */
    {.fam = PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND,
     .need = "root_complex",
     .context = "root_complex_bandwidth",
     .title = "PCIe DMA bandwidth per IO root complex",
     .family = "bandwidth",
     .type = "stacked",
     .chart_by = {"socket", "root_complex"},
     .dim_by = {"locality", "direction"},
     BANDWIDTH},
    {.fam = PCIE_FAM_PORT_UTILIZATION_RATIO,
     .need = "root_complex",
     .context = "root_complex_utilization",
     .title = "PCIe link utilisation per IO root complex",
     .family = "bandwidth",
     .type = "line",
     .chart_by = {"socket", "root_complex"},
     .dim_by = {"direction", "capacity"},
     RATIO},
};

#define ND_LABELS 6

struct nd_dim {
        char id[96];
        long long value;
        bool set;     /* has a value this interval */
        bool defined; /* sent in a DIMENSION line */
};

struct nd_chart {
        const struct nd_map *map;
        char id[192];
        int priority;
        struct {
                char name[32], value[96];
        } labels[ND_LABELS];
        size_t label_count;
        struct nd_dim *dims;
        size_t dim_count, dim_cap;
        bool defined, updated;
};

struct nd_charts {
        int update_every;
        struct nd_chart *charts;
        size_t count, cap;
        size_t last; /* a set's samples come chart by chart: look here first */
};

struct nd_charts *nd_charts_new(int update_every)
{
        struct nd_charts *c = calloc(1, sizeof(*c));

        if (c)
                c->update_every = update_every;
        return c;
}

void nd_charts_free(struct nd_charts *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->count; i++)
                free(c->charts[i].dims);
        free(c->charts);
        free(c);
}

size_t nd_charts_count(const struct nd_charts *c)
{
        return c->count;
}

/* Room for one label's part of an id: its name and value. */
#define ND_ID_PART 192

/* Netdata ids: letters, digits and '_' (a BDF 0000:3b:00.0 -> 0000_3b_00_0). */
static void append_id(char *buf, size_t len, const char *part)
{
        size_t n = strlen(buf);

        if (n && n + 1 < len)
                buf[n++] = '_';
        for (; *part && n + 1 < len; part++)
                buf[n++] = (*part >= 'a' && *part <= 'z') || (*part >= 'A' && *part <= 'Z') ||
                                   (*part >= '0' && *part <= '9')
                               ? *part
                               : '_';
        buf[n] = '\0';
}

/* A row whose label the sample carries first (wherever it is in the table),
 * then the family's row without one. */
static const struct nd_map *map_of(const struct pcie_sample *s)
{
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
                        if (maps[i].fam == s->family &&
                            (pass ? !maps[i].need
                                  : maps[i].need && pcie_sample_label(s, maps[i].need)))
                                return &maps[i];
        return NULL;
}

static void add_label(struct nd_chart *ch, const char *name, const char *value)
{
        if (!value || !*value || ch->label_count == ND_LABELS)
                return;
        for (size_t i = 0; i < ch->label_count; i++)
                if (!strcmp(ch->labels[i].name, name))
                        return;
        snprintf(ch->labels[ch->label_count].name, sizeof(ch->labels[0].name), "%s", name);
        snprintf(ch->labels[ch->label_count].value, sizeof(ch->labels[0].value), "%s", value);
        /* The protocol quotes with '; a label value never holds one. */
        for (char *q = ch->labels[ch->label_count].value; (q = strchr(q, '\''));)
                *q = '_';
        ch->label_count++;
}

/* The chart's labels: what names it, the PMU with its SICL and core
 * (hisi_pcie<sicl>_core<core>), and simulated="<machine>". */
static void chart_labels(struct nd_chart *ch, const struct pcie_sample *s)
{
        const char *pmu = pcie_sample_label(s, "pmu");
        unsigned int sicl, core;

        for (size_t i = 0; i < 2 && ch->map->chart_by[i]; i++)
                add_label(ch, ch->map->chart_by[i], pcie_sample_label(s, ch->map->chart_by[i]));
        if (!ch->map->chart_by[0])
                pmu = NULL; /* one chart for every PMU */
        add_label(ch, "pmu", pmu);
        if (pmu && sscanf(pmu, "hisi_pcie%u_core%u", &sicl, &core) == 2) {
                char v[16];

                snprintf(v, sizeof(v), "%u", sicl);
                add_label(ch, "sicl", v);
                snprintf(v, sizeof(v), "%u", core);
                add_label(ch, "core", v);
        }
        add_label(ch, "simulated", pcie_sample_label(s, "simulated"));
}

/* Appends the values of labels @by to @buf; a missing label is @absent
 * (NULL: left out). With @named, a value that starts with a digit gets its
 * label's name in front ("part" "0" -> part0): a dimension shows its id as
 * its name, and "0_rx" says nothing where "part0_rx" does. */
static void append_labels(char *buf, size_t len, const char *const by[2],
                          const struct pcie_sample *s, const char *absent, bool named)
{
        for (size_t i = 0; i < 2 && by[i]; i++) {
                const char *v = pcie_sample_label(s, by[i]);
                char part[ND_ID_PART];

                if (!v && !absent)
                        continue;
                if (v && named && *v >= '0' && *v <= '9') {
                        snprintf(part, sizeof(part), "%s%s", by[i], v);
                        v = part;
                }
                append_id(buf, len, v ? v : absent);
        }
}

/* @arr with room for one more element of @size bytes at index @count
 * (*@cap grown when it had none), or NULL (then @arr is unchanged). */
static void *room_for_one(void *arr, size_t *cap, size_t count, size_t size)
{
        size_t n = *cap ? 2 * *cap : 16;
        void *p;

        if (count < *cap)
                return arr;
        p = realloc(arr, n * size);
        if (p)
                *cap = n;
        return p;
}

static struct nd_chart *chart_of(struct nd_charts *c, const struct nd_map *m,
                                 const struct pcie_sample *s)
{
        char id[sizeof(c->charts[0].id)] = "";
        struct nd_chart *ch;

        append_id(id, sizeof(id), m->context);
        append_labels(id, sizeof(id), m->chart_by, s, "none", false);
        if (c->last < c->count && !strcmp(c->charts[c->last].id, id))
                return &c->charts[c->last];
        for (size_t i = 0; i < c->count; i++)
                if (!strcmp(c->charts[i].id, id))
                        return &c->charts[c->last = i];
        ch = room_for_one(c->charts, &c->cap, c->count, sizeof(*ch));
        if (!ch)
                return NULL;
        c->charts = ch;
        ch = &c->charts[c->count];
        memset(ch, 0, sizeof(*ch));
        ch->map = m;
        memcpy(ch->id, id, sizeof(id));
        ch->priority = 70000 + 10 * (int)(m - maps);
        chart_labels(ch, s);
        c->last = c->count++;
        return ch;
}

static struct nd_dim *dim_of(struct nd_chart *ch, const struct pcie_sample *s)
{
        char id[sizeof(ch->dims[0].id)] = "";
        struct nd_dim *d;

        if (!ch->map->dim_by[0])
                append_id(id, sizeof(id), ch->map->dim_name);
        append_labels(id, sizeof(id), ch->map->dim_by, s, NULL, true);
        if (!id[0])
                append_id(id, sizeof(id), "value");
        for (size_t i = 0; i < ch->dim_count; i++)
                if (!strcmp(ch->dims[i].id, id))
                        return &ch->dims[i];
        d = room_for_one(ch->dims, &ch->dim_cap, ch->dim_count, sizeof(*d));
        if (!d)
                return NULL;
        ch->dims = d;
        memset(&ch->dims[ch->dim_count], 0, sizeof(ch->dims[0]));
        memcpy(ch->dims[ch->dim_count].id, id, sizeof(id));
        ch->defined = false; /* sent again with the new dimension */
        return &ch->dims[ch->dim_count++];
}

/* The integer SET value; false for a value Netdata cannot store. */
static bool set_value(const struct nd_map *m, const struct pcie_sample *s, long long *out)
{
        double v;

        if (s->kind == PCIE_METRIC_COUNTER) {
                *out = s->counter > (uint64_t)INT64_MAX ? INT64_MAX : (long long)s->counter;
                return true;
        }
        v = s->gauge * m->scale;
        if (!isfinite(v) || fabs(v) >= 9.2e18)
                return false;
        *out = llround(v);
        return true;
}

int nd_charts_add(struct nd_charts *c, const struct sample_set *set)
{
        int err = 0;

        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                const struct nd_map *m = map_of(s);
                struct nd_chart *ch;
                struct nd_dim *d;
                long long v;

                if (!m || !set_value(m, s, &v))
                        continue;
                ch = chart_of(c, m, s);
                d = ch ? dim_of(ch, s) : NULL;
                if (!d) {
                        err = -ENOMEM;
                        continue;
                }
                d->value = v;
                d->set = true;
                ch->updated = true;
        }
        return err;
}

static void define_chart(const struct nd_charts *c, struct nd_chart *ch, FILE *out)
{
        const struct nd_map *m = ch->map;

        fprintf(out, "CHART pcie.%s '' '%s' '%s' '%s' 'pcie.%s' %s %d %d '' 'pcie.plugin' '%s'\n",
                ch->id, m->title, m->units, m->family, m->context, m->type, ch->priority,
                c->update_every, m->family);
        for (size_t i = 0; i < ch->label_count; i++)
                fprintf(out, "CLABEL '%s' '%s' 1\n", ch->labels[i].name, ch->labels[i].value);
        fprintf(out, "CLABEL_COMMIT\n");
        for (size_t i = 0; i < ch->dim_count; i++) {
                fprintf(out, "DIMENSION %s '' %s 1 %lld\n", ch->dims[i].id,
                        m->incremental ? "incremental" : "absolute", m->divisor);
                ch->dims[i].defined = true;
        }
        ch->defined = true;
}

int nd_charts_flush(struct nd_charts *c, FILE *out)
{
        for (size_t i = 0; i < c->count; i++) {
                struct nd_chart *ch = &c->charts[i];

                /* Findings are 0 once gone: their chart goes on with zeros. */
                if (!ch->updated && !(ch->map->absent_zero && ch->defined))
                        continue;
                if (!ch->defined)
                        define_chart(c, ch, out);
                fprintf(out, "BEGIN pcie.%s\n", ch->id);
                for (size_t k = 0; k < ch->dim_count; k++) {
                        struct nd_dim *d = &ch->dims[k];

                        if (d->set || ch->map->absent_zero)
                                fprintf(out, "SET %s = %lld\n", d->id, d->set ? d->value : 0);
                        d->set = false;
                }
                fprintf(out, "END\n");
                ch->updated = false;
        }
        if (fflush(out) || ferror(out))
                return -EIO;
        return 0;
}

/* Whether space-separated @list holds "pcie.@context". */
static bool context_listed(const char *list, const char *context)
{
        size_t n = strlen(context);

        for (const char *p = list; *p;) {
                size_t len = strcspn(p, " ");

                if (len == n + 5 && !strncmp(p, "pcie.", 5) && !strncmp(p + 5, context, n))
                        return true;
                p += len + (p[len] == ' ');
        }
        return false;
}

int nd_charts_check_families(char *why, size_t len)
{
        const size_t rows = sizeof(maps) / sizeof(maps[0]);

        /* Every row's context is one metrics/families.spec gives its family... */
        for (size_t i = 0; i < rows; i++) {
                if (!context_listed(maps[i].fam->netdata, maps[i].context)) {
                        snprintf(why, len, "%s: chart context pcie.%s is not the spec's (\"%s\")",
                                 maps[i].fam->name, maps[i].context, maps[i].fam->netdata);
                        return -1;
                }
        }
        /* ...and every context the spec gives has its row. */
        for (size_t f = 0; f < PCIE_FAMILY_COUNT; f++) {
                const char *list = pcie_families[f].netdata;
                size_t found = 0, listed = 0;

                for (const char *p = list; *p; listed++)
                        p += strcspn(p, " ") + (p[strcspn(p, " ")] == ' ');
                for (size_t i = 0; i < rows; i++)
                        found += maps[i].fam == &pcie_families[f];
                if (found != listed) {
                        snprintf(
                            why, len,
                            "%s: the spec gives %zu chart context(s) (\"%s\"), the chart table %zu",
                            pcie_families[f].name, listed, list, found);
                        return -1;
                }
        }
        return 0;
}
