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
#include "nd_charts_table.h"

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

/* The sample's row of the chart table (nd_maps[], made from the chart
 * stanzas of metrics/families.spec): a row whose `need` label the sample
 * carries first, wherever it is in the table (Intel's "stack", the AMD
 * data fabric's "root_complex"), then the family's row without one.
 * Detail-only families (raw PMU counters, capacity, cycles, policies) have
 * no row: the chart set must not depend on them. */
static const struct nd_map *map_of(const struct pcie_sample *s)
{
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < nd_maps_len; i++)
                        if (nd_maps[i].fam == s->family &&
                            (pass ? !nd_maps[i].need
                                  : nd_maps[i].need && pcie_sample_label(s, nd_maps[i].need)))
                                return &nd_maps[i];
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
        ch->priority = 70000 + 10 * (int)(m - nd_maps);
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
