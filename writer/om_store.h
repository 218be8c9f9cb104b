/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * om_store.h - the latest value of every series a scrape page shows, and
 * the page itself (no collectd, no I/O).
 *
 * Writers (collectd's write callbacks, the exporter's engine reader) put
 * values; the HTTP server's threads take pages. One mutex guards the
 * store and is held only for a hash update or for rendering: a page of
 * 5,000 series renders in a few milliseconds, and a page is rendered at
 * most once per change of the store, so a crowd of concurrent scrapes
 * shares one rendering (pages are reference counted).
 *
 * Each series remembers its source (a collectd identifier, an engine
 * unit) and when it was last put, so that a host can take away exactly
 * what a source no longer reports: all of it (collectd's "missing"), what
 * it did not put in its latest interval (the exporter), or what nobody
 * refreshed for a while (StalenessDelta).
 */
#ifndef PCIESCOPE_OM_STORE_H
#define PCIESCOPE_OM_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "om_format.h"

struct om_store;

struct om_store *om_store_new(void);
void om_store_free(struct om_store *st);

/*
 * om_store_put - sets packed series @series (@len bytes, rw_series_pack)
 * to @value, put by @source at time @now (seconds, the caller's clock).
 * @help is the HELP text for a family prom_catalog does not know (NULL:
 * none); copied once. 0, -EINVAL (no __name__), -ENOMEM.
 */
int om_store_put(struct om_store *st, const char *source, const char *series, size_t len,
                 double value, double now, const char *help);

/* Removes the series of @source last put before @before (INFINITY: all of
 * them). Returns how many went. */
size_t om_store_drop(struct om_store *st, const char *source, double before);

/* Removes every series last put before @before. Returns how many went. */
size_t om_store_expire(struct om_store *st, double before);

size_t om_store_size(struct om_store *st);

/* A rendered page; read-only, shared. */
struct om_page {
        const char *data;
        size_t len;
        enum om_format format;
        bool gzip; /* data is a gzip member of the page */
};

/* The current page in @f (rendered now, or the one rendered since the
 * last change). Hand it back with om_page_release. NULL on -ENOMEM. */
const struct om_page *om_store_page(struct om_store *st, enum om_format f);
void om_page_release(const struct om_page *page);

/* The current page in @f, gzip-compressed (compressed outside the store's
 * lock, once per change, shared like the plain page). NULL on -ENOMEM. */
const struct om_page *om_store_page_gzip(struct om_store *st, enum om_format f);

#endif
