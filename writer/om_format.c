// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * om_format.c - the scrape page (see the header).
 *
 * The two formats differ in few places, all here: OpenMetrics names a
 * counter's family without `_total` and an info metric's without `_info`,
 * has UNIT lines and the `info` type, escapes `"` in HELP, and ends with
 * `# EOF`. The text format names a counter family as its series and shows
 * an info metric as a gauge.
 */
#include "om_format.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prom_catalog.h"

const char *om_content_type(enum om_format f)
{
        return f == OM_FORMAT_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; "
                                            "charset=utf-8"
                                          : "text/plain; version=0.0.4; charset=utf-8";
}

/* The q= of one media range of an Accept header (1 when absent). */
static double media_quality(const char *range, size_t len)
{
        const char *q = NULL;

        for (size_t i = 0; i + 2 < len; i++)
                if (range[i] == ';') {
                        size_t j = i + 1;

                        while (j < len && range[j] == ' ')
                                j++;
                        if (j + 1 < len && (range[j] == 'q' || range[j] == 'Q') &&
                            range[j + 1] == '=')
                                q = range + j + 2;
                }
        return q ? strtod(q, NULL) : 1.0;
}

enum om_format om_negotiate(const char *accept)
{
        double om = 0, text = 0;

        while (accept && *accept) {
                size_t len = strcspn(accept, ",");
                const char *p = accept;

                while (*p == ' ' && p < accept + len)
                        p++;
                if (!strncasecmp(p, "application/openmetrics-text", 28)) {
                        double q = media_quality(accept, len);

                        om = q > om ? q : om;
                } else if (!strncasecmp(p, "text/plain", 10) || !strncmp(p, "*/*", 3)) {
                        double q = media_quality(accept, len);

                        text = q > text ? q : text;
                }
                accept += len;
                if (*accept == ',')
                        accept++;
        }
        return om > 0 && om >= text ? OM_FORMAT_OPENMETRICS : OM_FORMAT_TEXT;
}

bool om_accepts_gzip(const char *accept_encoding)
{
        const char *p = accept_encoding;

        while (p && *p) {
                size_t len = strcspn(p, ",");
                const char *t = p;

                while (t < p + len && *t == ' ')
                        t++;
                if (!strncasecmp(t, "gzip", 4) &&
                    (t[4] == ';' || t[4] == ',' || t[4] == ' ' || t[4] == '\0'))
                        return media_quality(p, len) > 0;
                p += len;
                if (*p == ',')
                        p++;
        }
        return false;
}

/* ---- keys ---------------------------------------------------------------- */

static bool ends_with(const char *s, size_t len, const char *suffix)
{
        size_t n = strlen(suffix);

        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

int om_key_init(struct om_key *k, const char *series)
{
        const char *p = rw_packed_first(series), *le = NULL;
        size_t nl = rw_packed_nlabels(series), len, cut = 0;

        memset(k, 0, sizeof(*k));
        k->kind = rw_packed_kind(series);
        for (size_t i = 0; i < nl; i++) {
                const char *v = p + strlen(p) + 1;

                if (!strcmp(p, "__name__"))
                        k->name = v;
                else if (!strcmp(p, "le"))
                        le = v;
                p = v + strlen(v) + 1;
        }
        if (!k->name || !rw_valid_name(k->name, true))
                return -EINVAL;
        len = strlen(k->name);
        if (len > 1000)
                return -ENOSPC;
        switch (k->kind) {
        case RW_KIND_HISTOGRAM:
                if (ends_with(k->name, len, "_bucket"))
                        cut = 7;
                else if (ends_with(k->name, len, "_count"))
                        cut = 6, k->rank = 1;
                else if (ends_with(k->name, len, "_sum"))
                        cut = 4, k->rank = 2;
                else /* not a histogram series after all */
                        k->kind = RW_KIND_UNKNOWN;
                if (cut && k->rank == 0)
                        k->le = !le ? NAN : strcmp(le, "+Inf") ? strtod(le, NULL) : INFINITY;
                k->family_len = k->doc_len = (unsigned short)(len - cut);
                return 0;
        case RW_KIND_COUNTER:
                cut = ends_with(k->name, len, "_total") ? 6 : 0;
                break;
        case RW_KIND_INFO:
                cut = ends_with(k->name, len, "_info") ? 5 : 0;
                break;
        default:
                break;
        }
        k->doc_len = (unsigned short)len;
        k->family_len = (unsigned short)(len - cut);
        return 0;
}

/* Compares two names' prefixes of the given lengths. */
static int prefix_compare(const char *a, size_t la, const char *b, size_t lb)
{
        int c = memcmp(a, b, la < lb ? la : lb);

        return c ? c : (la > lb) - (la < lb);
}

/* Compares the labels of two series other than __name__ and le. */
static int group_compare(const char *a, const char *b)
{
        size_t na = rw_packed_nlabels(a), nb = rw_packed_nlabels(b);
        const char *pa = rw_packed_first(a), *pb = rw_packed_first(b);

        for (;;) {
                int c;

                while (na && (!strcmp(pa, "__name__") || !strcmp(pa, "le"))) {
                        pa += strlen(pa) + 1;
                        pa += strlen(pa) + 1;
                        na--;
                }
                while (nb && (!strcmp(pb, "__name__") || !strcmp(pb, "le"))) {
                        pb += strlen(pb) + 1;
                        pb += strlen(pb) + 1;
                        nb--;
                }
                if (!na || !nb)
                        return (na > 0) - (nb > 0);
                c = strcmp(pa, pb);
                if (c)
                        return c;
                pa += strlen(pa) + 1;
                pb += strlen(pb) + 1;
                c = strcmp(pa, pb);
                if (c)
                        return c;
                pa += strlen(pa) + 1;
                pb += strlen(pb) + 1;
                na--;
                nb--;
        }
}

int om_key_compare(const struct om_key *a, const char *sa, const struct om_key *b, const char *sb)
{
        int c = prefix_compare(a->name, a->family_len, b->name, b->family_len);

        if (c)
                return c;
        if (a->kind != b->kind)
                return a->kind < b->kind ? -1 : 1;
        c = prefix_compare(a->name, a->doc_len, b->name, b->doc_len);
        if (c)
                return c;
        c = group_compare(sa, sb);
        if (c)
                return c;
        if (a->rank != b->rank)
                return a->rank < b->rank ? -1 : 1;
        if (a->le != b->le && !(isnan(a->le) && isnan(b->le)))
                return isnan(a->le) ? 1 : isnan(b->le) ? -1 : a->le < b->le ? -1 : 1;
        return strcmp(a->name, b->name);
}

/* ---- output -------------------------------------------------------------- */

void om_buf_free(struct om_buf *b)
{
        free(b->data);
        memset(b, 0, sizeof(*b));
}

static bool reserve(struct om_buf *b, size_t more)
{
        if (b->failed)
                return false;
        if (b->len + more > b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                char *d;

                while (cap < b->len + more)
                        cap *= 2;
                d = realloc(b->data, cap);
                if (!d) {
                        b->failed = true;
                        return false;
                }
                b->data = d;
                b->cap = cap;
        }
        return true;
}

static void put(struct om_buf *b, const char *s, size_t n)
{
        if (reserve(b, n)) {
                memcpy(b->data + b->len, s, n);
                b->len += n;
        }
}

static void puts_(struct om_buf *b, const char *s)
{
        put(b, s, strlen(s));
}

/* Label values and HELP: backslash and newline escaped, and the double
 * quote where @quote (label values; HELP in OpenMetrics). */
static void put_escaped(struct om_buf *b, const char *s, bool quote)
{
        const char *run = s;

        for (; *s; s++) {
                const char *esc = *s == '\\'           ? "\\\\"
                                  : *s == '\n'         ? "\\n"
                                  : *s == '"' && quote ? "\\\""
                                                       : NULL;

                if (esc) {
                        put(b, run, (size_t)(s - run));
                        puts_(b, esc);
                        run = s + 1;
                }
        }
        put(b, run, (size_t)(s - run));
}

int om_format_value(char *dst, size_t size, double v)
{
        if (isnan(v))
                return snprintf(dst, size, "NaN");
        if (isinf(v))
                return snprintf(dst, size, v > 0 ? "+Inf" : "-Inf");
        /* Whole numbers (counters, most gauges) as integers: short and
         * exact below 2^53. */
        if (v == floor(v) && fabs(v) < 9007199254740992.0)
                return snprintf(dst, size, "%lld", (long long)v);
        for (int prec = 15; prec <= 17; prec++) {
                int n = snprintf(dst, size, "%.*g", prec, v);

                if (prec == 17 || strtod(dst, NULL) == v)
                        return n;
        }
        return 0; /* not reached */
}

static const char *type_name(const struct om_key *k, enum om_format f)
{
        bool om = f == OM_FORMAT_OPENMETRICS;

        switch (k->kind) {
        case RW_KIND_COUNTER:
                /* OpenMetrics counters are named _total; one that is not
                 * goes as unknown rather than break the page. */
                return !om || k->family_len < k->doc_len ? "counter" : "unknown";
        case RW_KIND_GAUGE:
                return "gauge";
        case RW_KIND_HISTOGRAM:
                return "histogram";
        case RW_KIND_INFO:
                return om && k->family_len < k->doc_len ? "info" : "gauge";
        default:
                return om ? "unknown" : "untyped";
        }
}

static void put_header(struct om_buf *b, const struct om_item *it, enum om_format f)
{
        const struct om_key *k = it->key;
        size_t fl = f == OM_FORMAT_OPENMETRICS ? k->family_len : k->doc_len;
        char doc_family[1024];
        const struct prom_family_doc *doc;
        const char *help;

        memcpy(doc_family, k->name, k->doc_len);
        doc_family[k->doc_len] = '\0';
        doc = prom_catalog_find(doc_family);
        help = doc ? doc->help : it->help;
        if (help && *help) {
                puts_(b, "# HELP ");
                put(b, k->name, fl);
                puts_(b, " ");
                put_escaped(b, help, f == OM_FORMAT_OPENMETRICS);
                puts_(b, "\n");
        }
        puts_(b, "# TYPE ");
        put(b, k->name, fl);
        puts_(b, " ");
        puts_(b, type_name(k, f));
        puts_(b, "\n");
        if (f == OM_FORMAT_OPENMETRICS && doc && *doc->unit) {
                size_t ul = strlen(doc->unit);

                /* OpenMetrics: the unit must end the family's name. */
                if (fl > ul && k->name[fl - ul - 1] == '_' &&
                    !memcmp(k->name + fl - ul, doc->unit, ul)) {
                        puts_(b, "# UNIT ");
                        put(b, k->name, fl);
                        puts_(b, " ");
                        puts_(b, doc->unit);
                        puts_(b, "\n");
                }
        }
}

static void put_series(struct om_buf *b, const struct om_item *it)
{
        const char *p = rw_packed_first(it->series);
        size_t nl = rw_packed_nlabels(it->series);
        bool first = true;
        char value[40];
        int n;

        puts_(b, it->key->name);
        for (size_t i = 0; i < nl; i++) {
                const char *v = p + strlen(p) + 1;

                if (strcmp(p, "__name__")) {
                        puts_(b, first ? "{" : ",");
                        puts_(b, p);
                        puts_(b, "=\"");
                        put_escaped(b, v, true);
                        puts_(b, "\"");
                        first = false;
                }
                p = v + strlen(v) + 1;
        }
        if (!first)
                puts_(b, "}");
        n = om_format_value(value, sizeof(value), it->value);
        puts_(b, " ");
        put(b, value, (size_t)n);
        puts_(b, "\n");
}

long om_render(const struct om_item *items, size_t n, enum om_format f, struct om_buf *out)
{
        const struct om_key *head = NULL; /* the current family's first */
        bool om = f == OM_FORMAT_OPENMETRICS;
        long left_out = 0;

        for (size_t i = 0; i < n; i++) {
                const struct om_key *k = items[i].key;

                if (head && !prefix_compare(k->name, om ? k->family_len : k->doc_len, head->name,
                                            om ? head->family_len : head->doc_len)) {
                        /* Same family: the same kind and series naming,
                         * or left out. */
                        if (k->kind != head->kind ||
                            prefix_compare(k->name, k->doc_len, head->name, head->doc_len)) {
                                left_out++;
                                continue;
                        }
                } else {
                        head = k;
                        put_header(out, &items[i], f);
                }
                put_series(out, &items[i]);
        }
        if (om)
                puts_(out, "# EOF\n");
        /* NUL-terminated for readers that want a string (not counted). */
        if (reserve(out, 1))
                out->data[out->len] = '\0';
        return out->failed ? -ENOMEM : left_out;
}
