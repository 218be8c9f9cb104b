/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * om_format.h - series and their latest values to a scrape page: the
 * Prometheus text format 0.0.4 or OpenMetrics 1.0.0 (no collectd, no I/O).
 *
 * Series are the packed label sets of rw_series.h, named and labelled
 * exactly as remote_write sends them; HELP and UNIT come from
 * prom_catalog.h. A page is grouped by metric family: one HELP/TYPE (and
 * in OpenMetrics UNIT) block, then its series; a histogram's series go
 * bucket by bucket in rising `le`, then _count and _sum. Where two kinds
 * claim one family name, the first (in page order) keeps it and the other
 * series are left out, so the page always parses.
 */
#ifndef PCIESCOPE_OM_FORMAT_H
#define PCIESCOPE_OM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "rw_series.h"

enum om_format {
        OM_FORMAT_TEXT,        /* text/plain; version=0.0.4 */
        OM_FORMAT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

/* The Content-Type of a page in @f. */
const char *om_content_type(enum om_format f);
/* Whether an Accept-Encoding header accepts gzip (q above zero). */
bool om_accepts_gzip(const char *accept_encoding);
/* The format a scraper asks for in its Accept header (NULL: text).
 * OpenMetrics when it accepts application/openmetrics-text with a
 * quality above zero and at least that of text/plain. */
enum om_format om_negotiate(const char *accept);

/*
 * What the page needs to know of a series, computed once when the series
 * is first stored. Both family names are prefixes of the series name:
 * the OpenMetrics family (without _total for a counter, _info for an info
 * metric, _bucket/_sum/_count for a histogram) and the family as
 * prom_catalog and the text format name it (only the histogram suffix
 * off).
 */
struct om_key {
        const char *name; /* __name__, inside the packed series */
        unsigned short family_len, doc_len;
        enum rw_kind kind; /* a histogram series without suffix: UNKNOWN */
        int rank;          /* histogram: 0 bucket, 1 count, 2 sum */
        double le;         /* histogram bucket bound */
};

/* Fills @k for packed series @series. -EINVAL without a valid __name__,
 * -ENOSPC when the name is over 1,000 bytes. */
int om_key_init(struct om_key *k, const char *series);

/* Page order of two series with their keys (qsort-style result). */
int om_key_compare(const struct om_key *a, const char *sa, const struct om_key *b, const char *sb);

/* A growing output buffer; on allocation failure it stops growing and
 * sets failed (the page is then refused as a whole). */
struct om_buf {
        char *data;
        size_t len, cap;
        bool failed;
};
void om_buf_free(struct om_buf *b);

/* One series on the page. */
struct om_item {
        const char *series; /* packed (rw_series_pack) */
        const struct om_key *key;
        double value;
        const char *help; /* NULL: from prom_catalog, else a fallback */
};

/*
 * om_render - appends the page of @n items, already in om_key_compare
 * order, to @out. Returns the number of series left out because their
 * family name was taken by another kind, or -ENOMEM.
 */
long om_render(const struct om_item *items, size_t n, enum om_format f, struct om_buf *out);

/* Writes @v as the text formats want it: shortest form that reads back
 * the same double, "NaN", "+Inf", "-Inf". Returns the length. */
int om_format_value(char *dst, size_t size, double v);

#endif
