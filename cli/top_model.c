// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * top_model.c - the rows of `pciescope top` from samples (see top_model.h).
 *
 * Everything is found by Prometheus name and labels, as docs/metrics.md
 * lists them, so the view shows what any host of the engine would publish:
 * the topology and link families of the monitor, the audit findings, the
 * AER counters, and the PMU families of the HiSilicon and Intel sources.
 */
#define _GNU_SOURCE
#include "top_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The families the view reads; every other sample is not kept. */
static const char *const wanted[] = {
    "pcie_device_info",
    "pcie_link_speed_transfers_per_second",
    "pcie_link_width_lanes",
    "pcie_link_up",
    "pcie_link_downtrained",
    "pcie_audit_finding",
    "pcie_aer_device_errors_total",
    "pcie_port_bandwidth_bytes_per_second",
    "pcie_iio_bw_out_estimate_bytes_per_second",
    "pcie_port_utilization_ratio",
    "pcie_port_latency_seconds",
    "pcie_device_bandwidth_bytes_per_second",
    "pcie_pmu_info",
};

struct unit_samples {
        char *name;
        struct sample_set set;
};

/* A function's AER totals of the previous build, for the deltas. */
struct prev_aer {
        char bdf[TOP_ID_LEN];
        uint64_t total[TOP_AERS];
};

/* A function while the rows are built. */
struct fn_tmp {
        struct top_function f;
        char root_port[TOP_ID_LEN];
        bool is_root_port;
        int finding_rank; /* 0 none, 1 info, 2 warning, 3 critical */
};

struct top_model {
        struct unit_samples *units;
        size_t unit_count;
        struct top_row *rows;
        size_t row_count;
        struct top_function *fns;
        size_t fn_count;
        struct prev_aer *prev;
        size_t prev_count;
        struct top_counts counts;
        enum top_sort key;
};

const char *top_sort_name(enum top_sort key)
{
        static const char *const names[] = {"port", "rx", "tx", "latency", "errors"};

        return key < TOP_SORT_COUNT ? names[key] : "?";
}

double top_row_bandwidth(const struct top_row *row, int dir)
{
        double sum = NAN;

        for (int t = 0; t < TOP_TLPS; t++)
                if (!isnan(row->bw[dir][t]))
                        sum = isnan(sum) ? row->bw[dir][t] : sum + row->bw[dir][t];
        return sum;
}

double top_row_latency(const struct top_row *row)
{
        double max = NAN;

        for (int i = 0; i < TOP_LATS; i++)
                if (!isnan(row->latency[i]) && (isnan(max) || row->latency[i] > max))
                        max = row->latency[i];
        return max;
}

uint64_t top_aer_delta_sum(const struct top_aer *aer)
{
        uint64_t sum = 0;

        if (aer->delta_known)
                for (int i = 0; i < TOP_AERS; i++)
                        sum += aer->delta[i];
        return sum;
}

static uint64_t aer_total_sum(const struct top_aer *aer)
{
        return aer->total[TOP_AER_COR] + aer->total[TOP_AER_NONFATAL] + aer->total[TOP_AER_FATAL];
}

void top_format_rate(char *buf, size_t len, double v)
{
        static const char units[] = "kMGTP";
        int u = -1;

        if (isnan(v) || v < 0) {
                snprintf(buf, len, "-");
                return;
        }
        while (v >= 999.95 && u < 4) {
                v /= 1000;
                u++;
        }
        /* Three digits at most: "15.6G", "239M". */
        if (u < 0)
                snprintf(buf, len, "%.0f", v);
        else if (v >= 99.95)
                snprintf(buf, len, "%.0f%c", v, units[u]);
        else
                snprintf(buf, len, "%.1f%c", v, units[u]);
}

struct top_model *top_model_new(void)
{
        struct top_model *m = calloc(1, sizeof(*m));

        return m;
}

void top_model_free(struct top_model *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->unit_count; i++) {
                free(m->units[i].name);
                sample_set_free(&m->units[i].set);
        }
        free(m->units);
        free(m->rows);
        free(m->fns);
        free(m->prev);
        free(m);
}

static bool is_wanted(const char *metric)
{
        for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
                if (!strcmp(metric, wanted[i]))
                        return true;
        return false;
}

int top_model_update(struct top_model *m, const char *unit, const struct sample_set *set)
{
        struct sample_set fresh = SAMPLE_SET_INIT;
        struct unit_samples *u = NULL;

        for (size_t i = 0; i < set->count; i++)
                if (is_wanted(set->samples[i].metric) && sample_set_add(&fresh, &set->samples[i])) {
                        sample_set_free(&fresh);
                        return -ENOMEM;
                }
        for (size_t i = 0; i < m->unit_count && !u; i++)
                if (!strcmp(m->units[i].name, unit))
                        u = &m->units[i];
        if (!u) {
                struct unit_samples *grown =
                    realloc(m->units, (m->unit_count + 1) * sizeof(*m->units));
                char *name = strdup(unit);

                if (grown)
                        m->units = grown;
                if (!grown || !name) {
                        free(name);
                        sample_set_free(&fresh);
                        return -ENOMEM;
                }
                u = &m->units[m->unit_count++];
                u->name = name;
                memset(&u->set, 0, sizeof(u->set));
        }
        sample_set_swap(&u->set, &fresh);
        sample_set_free(&fresh);
        return 0;
}

/* ---- building the rows ---- */

static void copy(char *dst, size_t len, const char *src)
{
        snprintf(dst, len, "%s", src ? src : "");
}

static double sample_value(const struct pcie_sample *s)
{
        return s->kind == PCIE_METRIC_COUNTER ? (double)s->counter : s->gauge;
}

static void row_init(struct top_row *r, bool is_port, const char *id)
{
        memset(r, 0, sizeof(*r));
        r->is_port = is_port;
        copy(r->id, sizeof(r->id), id);
        for (int d = 0; d < TOP_DIRS; d++) {
                r->util[d] = NAN;
                for (int t = 0; t < TOP_TLPS; t++)
                        r->bw[d][t] = NAN;
        }
        for (int i = 0; i < TOP_LATS; i++)
                r->latency[i] = NAN;
}

struct build {
        struct fn_tmp *fns;
        size_t fn_count, fn_cap;
        struct top_row *rows;
        size_t row_count, row_cap;
};

static struct fn_tmp *find_fn(struct build *b, const char *bdf)
{
        if (!bdf)
                return NULL;
        for (size_t i = 0; i < b->fn_count; i++)
                if (!strcmp(b->fns[i].f.bdf, bdf))
                        return &b->fns[i];
        return NULL;
}

static struct top_row *find_row(struct build *b, const char *id)
{
        for (size_t i = 0; i < b->row_count; i++)
                if (!strcmp(b->rows[i].id, id))
                        return &b->rows[i];
        return NULL;
}

/* The row of @id, added when it is new. NULL: out of memory. */
static struct top_row *get_row(struct build *b, bool is_port, const char *id)
{
        struct top_row *r = find_row(b, id);

        if (r)
                return r;
        if (b->row_count == b->row_cap) {
                size_t cap = b->row_cap ? 2 * b->row_cap : 32;
                struct top_row *grown = realloc(b->rows, cap * sizeof(*grown));

                if (!grown)
                        return NULL;
                b->rows = grown;
                b->row_cap = cap;
        }
        r = &b->rows[b->row_count++];
        row_init(r, is_port, id);
        return r;
}

static int add_function(struct build *b, const struct pcie_sample *s)
{
        const char *bdf = pcie_sample_label(s, "bdf"), *type = pcie_sample_label(s, "port_type");
        const char *name = pcie_sample_label(s, "device_name");
        struct fn_tmp *f;

        if (!bdf || find_fn(b, bdf))
                return 0;
        if (b->fn_count == b->fn_cap) {
                size_t cap = b->fn_cap ? 2 * b->fn_cap : 64;
                struct fn_tmp *grown = realloc(b->fns, cap * sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                b->fns = grown;
                b->fn_cap = cap;
        }
        f = &b->fns[b->fn_count++];
        memset(f, 0, sizeof(*f));
        copy(f->f.bdf, sizeof(f->f.bdf), bdf);
        copy(f->f.type, sizeof(f->f.type), type);
        copy(f->f.name, sizeof(f->f.name), name ? name : pcie_sample_label(s, "vendor_name"));
        copy(f->root_port, sizeof(f->root_port), pcie_sample_label(s, "root_port"));
        f->is_root_port = type && !strcmp(type, "root_port");
        f->f.bw[TOP_RX] = f->f.bw[TOP_TX] = NAN;
        return 0;
}

static int severity_rank(const char *severity)
{
        if (!severity)
                return 1;
        if (!strcmp(severity, "critical"))
                return 3;
        return !strcmp(severity, "warning") ? 2 : 1;
}

static int aer_index(const char *severity)
{
        if (!severity)
                return -1;
        if (!strcmp(severity, "correctable"))
                return TOP_AER_COR;
        if (!strcmp(severity, "nonfatal"))
                return TOP_AER_NONFATAL;
        return !strcmp(severity, "fatal") ? TOP_AER_FATAL : -1;
}

static int dir_index(const char *direction)
{
        if (!direction)
                return -1;
        if (!strcmp(direction, "rx"))
                return TOP_RX;
        return !strcmp(direction, "tx") ? TOP_TX : -1;
}

static int tlp_index(const char *tlp)
{
        static const char *const names[] = {"mwr", "mrd", "cpl", "all"};

        for (int t = 0; tlp && t < TOP_TLPS; t++)
                if (!strcmp(tlp, names[t]))
                        return t;
        return -1;
}

static int latency_index(const char *event)
{
        static const char *const names[] = {"rx_mwr", "rx_mrd", "tx_mrd"};

        for (int i = 0; event && i < TOP_LATS; i++)
                if (!strcmp(event, names[i]))
                        return i;
        return -1;
}

/* What a function's samples say about it: link, AER, findings, DMA. */
static void function_sample(struct build *b, const struct pcie_sample *s)
{
        const char *m = s->metric, *state = pcie_sample_label(s, "state");
        /* The PMU names an endpoint `device`; the monitor's families `bdf`. */
        bool dma = !strcmp(m, "pcie_device_bandwidth_bytes_per_second");
        struct fn_tmp *f = find_fn(b, pcie_sample_label(s, dma ? "device" : "bdf"));
        double v = sample_value(s);
        bool max = state && !strcmp(state, "max");

        if (!f)
                return;
        if (!strcmp(m, "pcie_link_speed_transfers_per_second")) {
                f->f.link.known = true;
                *(max ? &f->f.link.max_speed : &f->f.link.speed) = v;
        } else if (!strcmp(m, "pcie_link_width_lanes")) {
                f->f.link.known = true;
                *(max ? &f->f.link.max_width : &f->f.link.width) = (int)v;
        } else if (!strcmp(m, "pcie_link_up")) {
                f->f.link.up = v > 0;
        } else if (!strcmp(m, "pcie_link_downtrained")) {
                f->f.link.downtrained = v > 0;
        } else if (!strcmp(m, "pcie_audit_finding")) {
                const char *finding = pcie_sample_label(s, "finding");
                int rank = severity_rank(pcie_sample_label(s, "severity"));

                if (v <= 0 || !finding)
                        return;
                if (!strncmp(finding, "mps_", 4))
                        f->f.mps_finding = true;
                if (rank > f->finding_rank) {
                        f->finding_rank = rank;
                        copy(f->f.finding, sizeof(f->f.finding), finding);
                }
        } else if (!strcmp(m, "pcie_aer_device_errors_total")) {
                int i = aer_index(pcie_sample_label(s, "severity"));

                if (i >= 0) {
                        f->f.aer.known = true;
                        f->f.aer.total[i] = s->counter;
                }
        } else if (!strcmp(m, "pcie_device_bandwidth_bytes_per_second")) {
                int d = dir_index(pcie_sample_label(s, "direction"));

                if (d >= 0)
                        f->f.bw[d] = isnan(f->f.bw[d]) ? v : f->f.bw[d] + v;
        }
}

/* The row a PMU sample belongs to: its Root Port; on Intel an IIO stack
 * part that no port is mapped to; on AMD an IO root complex of the data
 * fabric (counted per root complex, never per port: its localities add up
 * in one row). */
static struct top_row *pmu_row(struct build *b, const struct pcie_sample *s)
{
        const char *port = pcie_sample_label(s, "port"), *socket = pcie_sample_label(s, "socket");
        const char *stack = pcie_sample_label(s, "stack"), *part = pcie_sample_label(s, "part");
        const char *root_complex = pcie_sample_label(s, "root_complex");
        char id[TOP_ID_LEN];
        struct top_row *r;

        if (port)
                r = get_row(b, true, port);
        else if (socket && stack && part) {
                snprintf(id, sizeof(id), "s%s iio%s p%s", socket, stack, part);
                r = get_row(b, false, id);
        } else if (socket && root_complex) {
                snprintf(id, sizeof(id), "s%s %s", socket, root_complex);
                r = get_row(b, false, id);
                if (r)
                        r->is_root_complex = true;
        } else
                return NULL;
        if (r && !*r->group) {
                const char *pmu = pcie_sample_label(s, "pmu");

                if (socket && stack)
                        snprintf(r->group, sizeof(r->group), "socket %s stack %s", socket, stack);
                else if (socket && root_complex)
                        snprintf(r->group, sizeof(r->group), "socket %s data fabric", socket);
                else
                        copy(r->group, sizeof(r->group), pmu);
        }
        return r;
}

static int port_sample(struct build *b, const struct pcie_sample *s)
{
        const char *m = s->metric;
        struct top_row *r;
        int d, i;

        if (strcmp(m, "pcie_port_bandwidth_bytes_per_second") &&
            strcmp(m, "pcie_iio_bw_out_estimate_bytes_per_second") &&
            strcmp(m, "pcie_port_utilization_ratio") && strcmp(m, "pcie_port_latency_seconds"))
                return 0;
        r = pmu_row(b, s);
        if (!r)
                return pcie_sample_label(s, "port") ? -ENOMEM : 0;
        d = dir_index(pcie_sample_label(s, "direction"));
        if (!strcmp(m, "pcie_port_latency_seconds")) {
                i = latency_index(pcie_sample_label(s, "event"));
                if (i >= 0)
                        r->latency[i] = s->gauge;
        } else if (!strcmp(m, "pcie_port_utilization_ratio")) {
                const char *capacity = pcie_sample_label(s, "capacity");

                if (d >= 0 && capacity && !strcmp(capacity, "raw"))
                        r->util[d] = s->gauge;
        } else if (d >= 0) {
                /* bw_out's estimate has no tlp label: all of them. */
                i = tlp_index(pcie_sample_label(s, "tlp"));
                i = i < 0 ? TOP_TLP_ALL : i;
                r->bw[d][i] = isnan(r->bw[d][i]) ? s->gauge : r->bw[d][i] + s->gauge;
        }
        return 0;
}

/* pcie_pmu_info's ports: a port the PMU counts is in its group even
 * before (or without) a rate, e.g. with its link down. */
static void pmu_info_sample(struct build *b, const struct pcie_sample *s)
{
        const char *ports = pcie_sample_label(s, "ports"), *pmu = pcie_sample_label(s, "pmu");
        char id[TOP_ID_LEN];

        if (!ports || !pmu)
                return;
        for (const char *p = ports; *p;) {
                size_t len = strcspn(p, ",");
                struct top_row *r;

                snprintf(id, sizeof(id), "%.*s", (int)len, p);
                r = find_row(b, id);
                if (r && !*r->group)
                        copy(r->group, sizeof(r->group), pmu);
                p += len + (p[len] == ',');
        }
}

static void aer_add(struct top_aer *sum, const struct top_aer *a)
{
        if (!a->known)
                return;
        sum->known = true;
        sum->delta_known |= a->delta_known;
        for (int i = 0; i < TOP_AERS; i++) {
                sum->total[i] += a->total[i];
                sum->delta[i] += a->delta[i];
        }
}

/* Deltas against the previous build; then this build becomes the
 * previous one. A counter that went down (the device came back) counts
 * from zero. */
static int aer_deltas(struct top_model *m, struct build *b)
{
        struct prev_aer *next = calloc(b->fn_count ? b->fn_count : 1, sizeof(*next));
        size_t n = 0;

        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i < b->fn_count; i++) {
                struct top_aer *a = &b->fns[i].f.aer;

                if (!a->known)
                        continue;
                for (size_t k = 0; k < m->prev_count; k++) {
                        if (strcmp(m->prev[k].bdf, b->fns[i].f.bdf))
                                continue;
                        a->delta_known = true;
                        for (int s = 0; s < TOP_AERS; s++)
                                a->delta[s] = a->total[s] >= m->prev[k].total[s]
                                                  ? a->total[s] - m->prev[k].total[s]
                                                  : a->total[s];
                }
                copy(next[n].bdf, sizeof(next[n].bdf), b->fns[i].f.bdf);
                memcpy(next[n].total, a->total, sizeof(a->total));
                n++;
        }
        free(m->prev);
        m->prev = next;
        m->prev_count = n;
        return 0;
}

/* The port's own state, then the functions below it in topology order. */
static int port_functions(struct build *b, struct top_row *r, struct top_function **fns,
                          size_t *count, size_t *cap)
{
        struct fn_tmp *own = find_fn(b, r->id);
        int rank = 0;

        r->first_function = *count;
        if (own) {
                r->link = own->f.link;
                r->mps_finding = own->f.mps_finding;
                copy(r->finding, sizeof(r->finding), own->f.finding);
                rank = own->finding_rank;
                aer_add(&r->aer, &own->f.aer);
        }
        for (size_t i = 0; i < b->fn_count; i++) {
                struct fn_tmp *f = &b->fns[i];

                if (strcmp(f->root_port, r->id) || !strcmp(f->f.bdf, r->id))
                        continue;
                if (*count == *cap) {
                        size_t grown_cap = *cap ? 2 * *cap : 64;
                        struct top_function *grown = realloc(*fns, grown_cap * sizeof(*grown));

                        if (!grown)
                                return -ENOMEM;
                        *fns = grown;
                        *cap = grown_cap;
                }
                (*fns)[(*count)++] = f->f;
                r->mps_finding |= f->f.mps_finding;
                if (f->finding_rank > rank) {
                        rank = f->finding_rank;
                        copy(r->finding, sizeof(r->finding), f->f.finding);
                }
                aer_add(&r->aer, &f->f.aer);
        }
        r->function_count = *count - r->first_function;
        return 0;
}

int top_model_build(struct top_model *m)
{
        struct build b = {0};
        struct top_function *fns = NULL;
        size_t fn_count = 0, fn_cap = 0;
        int err = 0;

        /* Functions first (pcie_device_info), so every other family finds
         * its function whatever the order of the units. */
        for (size_t u = 0; u < m->unit_count && !err; u++)
                for (size_t i = 0; i < m->units[u].set.count && !err; i++)
                        if (!strcmp(m->units[u].set.samples[i].metric, "pcie_device_info"))
                                err = add_function(&b, &m->units[u].set.samples[i]);
        for (size_t i = 0; i < b.fn_count && !err; i++)
                if (b.fns[i].is_root_port && !get_row(&b, true, b.fns[i].f.bdf))
                        err = -ENOMEM;
        for (size_t u = 0; u < m->unit_count && !err; u++) {
                const struct sample_set *set = &m->units[u].set;

                for (size_t i = 0; i < set->count && !err; i++) {
                        function_sample(&b, &set->samples[i]);
                        err = port_sample(&b, &set->samples[i]);
                }
        }
        for (size_t u = 0; u < m->unit_count && !err; u++)
                for (size_t i = 0; i < m->units[u].set.count; i++)
                        if (!strcmp(m->units[u].set.samples[i].metric, "pcie_pmu_info"))
                                pmu_info_sample(&b, &m->units[u].set.samples[i]);
        if (!err)
                err = aer_deltas(m, &b);
        for (size_t i = 0; i < b.row_count && !err; i++)
                if (b.rows[i].is_port)
                        err = port_functions(&b, &b.rows[i], &fns, &fn_count, &fn_cap);
        free(b.fns);
        if (err) {
                free(b.rows);
                free(fns);
                return err;
        }
        free(m->rows);
        free(m->fns);
        m->rows = b.rows;
        m->fns = fns;
        m->fn_count = fn_count;
        memset(&m->counts, 0, sizeof(m->counts));
        m->row_count = 0;
        for (size_t i = 0; i < b.row_count; i++) {
                const struct top_row *r = &b.rows[i];
                bool measured =
                    !isnan(top_row_bandwidth(r, TOP_RX)) || !isnan(top_row_bandwidth(r, TOP_TX));

                m->counts.ports += r->is_port;
                m->counts.measured += r->is_port && measured;
                m->counts.unmapped += !r->is_port && !r->is_root_complex;
                m->counts.root_complexes += r->is_root_complex;
                if (!r->is_port && !(top_row_bandwidth(r, TOP_RX) > 0) &&
                    !(top_row_bandwidth(r, TOP_TX) > 0)) {
                        m->counts.idle_unmapped += !r->is_root_complex;
                        continue;
                }
                m->rows[m->row_count++] = *r;
        }
        top_model_sort(m, m->key);
        return 0;
}

/* ---- order ---- */

/* Port order: Root Ports before unmapped IIO parts, then by group (the
 * ports no PMU counts last), then by id. */
static int port_order(const struct top_row *a, const struct top_row *b)
{
        int c;

        if (a->is_port != b->is_port)
                return a->is_port ? -1 : 1;
        if (!*a->group != !*b->group)
                return *a->group ? -1 : 1;
        c = strcmp(a->group, b->group);
        return c ? c : strcmp(a->id, b->id);
}

/* Larger first, a missing value (NAN) last. */
static int descending(double a, double b)
{
        if (isnan(a) || isnan(b))
                return isnan(a) - isnan(b);
        return a > b ? -1 : a < b;
}

static int compare_rows(const void *pa, const void *pb, void *ctx)
{
        const struct top_row *a = pa, *b = pb;
        enum top_sort key = *(const enum top_sort *)ctx;
        int c = 0;

        switch (key) {
        case TOP_SORT_RX:
        case TOP_SORT_TX: {
                int d = key == TOP_SORT_RX ? TOP_RX : TOP_TX;

                c = descending(top_row_bandwidth(a, d), top_row_bandwidth(b, d));
                break;
        }
        case TOP_SORT_LATENCY:
                c = descending(top_row_latency(a), top_row_latency(b));
                break;
        case TOP_SORT_ERRORS:
                c = descending((double)top_aer_delta_sum(&a->aer),
                               (double)top_aer_delta_sum(&b->aer));
                if (!c)
                        c = descending((double)aer_total_sum(&a->aer),
                                       (double)aer_total_sum(&b->aer));
                break;
        default:
                break;
        }
        return c ? c : port_order(a, b);
}

void top_model_sort(struct top_model *m, enum top_sort key)
{
        m->key = key < TOP_SORT_COUNT ? key : TOP_SORT_PORT;
        if (m->row_count)
                qsort_r(m->rows, m->row_count, sizeof(*m->rows), compare_rows, &m->key);
}

enum top_sort top_model_sort_key(const struct top_model *m)
{
        return m->key;
}

size_t top_model_row_count(const struct top_model *m)
{
        return m->row_count;
}

const struct top_row *top_model_row(const struct top_model *m, size_t i)
{
        return i < m->row_count ? &m->rows[i] : NULL;
}

const struct top_function *top_model_function(const struct top_model *m, size_t i)
{
        return i < m->fn_count ? &m->fns[i] : NULL;
}

struct top_counts top_model_counts(const struct top_model *m)
{
        return m->counts;
}
