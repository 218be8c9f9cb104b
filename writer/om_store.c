// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * om_store.c - latest values and the shared page (see the header).
 *
 * A chained hash table on the packed series finds a series in a put; the
 * page order (om_key_compare) is rebuilt by one sort only when series come
 * or go, not when values change. Each entry is one allocation: the packed
 * series, then its source and HELP fallback strings.
 */
#include "om_store.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct entry {
        struct entry *next; /* hash chain */
        uint64_t hash;
        size_t len;
        char *source; /* in this allocation */
        char *help;   /* in this allocation, or NULL */
        double value, updated;
        struct om_key key;
        char series[]; /* packed */
};

struct page {
        struct om_page pub;
        atomic_int refs;
        struct om_buf buf;
};

struct om_store {
        pthread_mutex_t lock;
        struct entry **buckets;
        size_t nbuckets, n;
        /* Page order; rebuilt when series came or went. */
        struct entry **order;
        bool order_stale;
        /* The pages rendered since the last change, per format, and
         * their gzip-compressed forms. */
        struct page *page[2], *gzip[2];
        size_t last_len[2]; /* the size of the last page: the next one's buffer */
};

static uint64_t fnv1a(const char *s, size_t len)
{
        uint64_t h = 14695981039346656037ULL;

        for (size_t i = 0; i < len; i++)
                h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
        return h;
}

struct om_store *om_store_new(void)
{
        struct om_store *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        st->nbuckets = 1024;
        st->buckets = calloc(st->nbuckets, sizeof(*st->buckets));
        if (!st->buckets) {
                free(st);
                return NULL;
        }
        pthread_mutex_init(&st->lock, NULL);
        return st;
}

static void page_unref(struct page *p)
{
        if (p && atomic_fetch_sub(&p->refs, 1) == 1) {
                om_buf_free(&p->buf);
                free(p);
        }
}

void om_page_release(const struct om_page *page)
{
        /* pub is the first member of struct page. */
        page_unref((struct page *)page);
}

/* The page changed: the next scrape renders anew. Under the lock. */
static void invalidate(struct om_store *st)
{
        for (int f = 0; f < 2; f++) {
                page_unref(st->page[f]);
                page_unref(st->gzip[f]);
                st->page[f] = st->gzip[f] = NULL;
        }
}

void om_store_free(struct om_store *st)
{
        if (!st)
                return;
        invalidate(st);
        for (size_t i = 0; i < st->nbuckets; i++)
                for (struct entry *e = st->buckets[i], *next; e; e = next) {
                        next = e->next;
                        free(e);
                }
        free(st->buckets);
        free(st->order);
        pthread_mutex_destroy(&st->lock);
        free(st);
}

static void grow(struct om_store *st)
{
        size_t n = st->nbuckets * 2;
        struct entry **b = calloc(n, sizeof(*b));

        if (!b)
                return; /* longer chains, still correct */
        for (size_t i = 0; i < st->nbuckets; i++)
                for (struct entry *e = st->buckets[i], *next; e; e = next) {
                        next = e->next;
                        e->next = b[e->hash % n];
                        b[e->hash % n] = e;
                }
        free(st->buckets);
        st->buckets = b;
        st->nbuckets = n;
}

int om_store_put(struct om_store *st, const char *source, const char *series, size_t len,
                 double value, double now, const char *help)
{
        uint64_t h = fnv1a(series, len);
        struct entry *e;
        int err = 0;

        pthread_mutex_lock(&st->lock);
        for (e = st->buckets[h % st->nbuckets]; e; e = e->next)
                if (e->hash == h && e->len == len && !memcmp(e->series, series, len))
                        break;
        if (!e) {
                size_t ls = strlen(source) + 1, lh = help ? strlen(help) + 1 : 0;

                e = malloc(sizeof(*e) + len + ls + lh);
                if (!e) {
                        err = -ENOMEM;
                        goto out;
                }
                memcpy(e->series, series, len);
                e->source = memcpy(e->series + len, source, ls);
                e->help = help ? memcpy(e->series + len + ls, help, lh) : NULL;
                e->len = len;
                e->hash = h;
                err = om_key_init(&e->key, e->series);
                if (err) {
                        free(e);
                        goto out;
                }
                e->next = st->buckets[h % st->nbuckets];
                st->buckets[h % st->nbuckets] = e;
                st->n++;
                st->order_stale = true;
                if (st->n > st->nbuckets)
                        grow(st);
        }
        if (e->value != value || st->order_stale)
                invalidate(st);
        e->value = value;
        e->updated = now;
out:
        pthread_mutex_unlock(&st->lock);
        return err;
}

/* Removes the entries of @source (NULL: any) put before @before. Under
 * the lock. A series another source took over stays with its first: two
 * sources of one series are a configuration mistake, and the series goes
 * when its first source does. */
static size_t remove_if(struct om_store *st, const char *source, double before)
{
        size_t gone = 0;

        for (size_t i = 0; i < st->nbuckets; i++)
                for (struct entry **pe = &st->buckets[i]; *pe;) {
                        struct entry *e = *pe;

                        if (e->updated < before && (!source || !strcmp(e->source, source))) {
                                *pe = e->next;
                                free(e);
                                gone++;
                        } else {
                                pe = &e->next;
                        }
                }
        if (gone) {
                st->n -= gone;
                st->order_stale = true;
                invalidate(st);
        }
        return gone;
}

size_t om_store_drop(struct om_store *st, const char *source, double before)
{
        size_t gone = 0;

        pthread_mutex_lock(&st->lock);
        gone = remove_if(st, source, before);
        pthread_mutex_unlock(&st->lock);
        return gone;
}

size_t om_store_expire(struct om_store *st, double before)
{
        size_t gone;

        pthread_mutex_lock(&st->lock);
        gone = remove_if(st, NULL, before);
        pthread_mutex_unlock(&st->lock);
        return gone;
}

size_t om_store_size(struct om_store *st)
{
        size_t n;

        pthread_mutex_lock(&st->lock);
        n = st->n;
        pthread_mutex_unlock(&st->lock);
        return n;
}

static int by_page_order(const void *a, const void *b)
{
        const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;

        return om_key_compare(&x->key, x->series, &y->key, y->series);
}

/* Sorts the entries into page order. Under the lock. */
static int build_order(struct om_store *st)
{
        struct entry **o = realloc(st->order, (st->n ? st->n : 1) * sizeof(*o));
        size_t k = 0;

        if (!o)
                return -ENOMEM;
        st->order = o;
        for (size_t i = 0; i < st->nbuckets; i++)
                for (struct entry *e = st->buckets[i]; e; e = e->next)
                        o[k++] = e;
        if (k)
                qsort(o, k, sizeof(*o), by_page_order);
        st->order_stale = false;
        return 0;
}

static struct page *render(struct om_store *st, enum om_format f)
{
        struct page *p = calloc(1, sizeof(*p));
        struct om_item *items = malloc((st->n ? st->n : 1) * sizeof(*items));
        size_t hint = st->last_len[f == OM_FORMAT_OPENMETRICS];
        long rc;

        if (!p || !items)
                goto fail;
        /* Pages change little between scrapes: one allocation of the last
         * page's size (and some) instead of doubling up from 4 KiB. */
        if (hint) {
                p->buf.cap = hint + hint / 8 + 4096;
                p->buf.data = malloc(p->buf.cap);
                if (!p->buf.data)
                        p->buf.cap = 0;
        }
        for (size_t i = 0; i < st->n; i++) {
                const struct entry *e = st->order[i];

                items[i] = (struct om_item){
                    .series = e->series, .key = &e->key, .value = e->value, .help = e->help};
        }
        rc = om_render(items, st->n, f, &p->buf);
        if (rc < 0)
                goto fail;
        st->last_len[f == OM_FORMAT_OPENMETRICS] = p->buf.len;
        free(items);
        p->pub.data = p->buf.data ? p->buf.data : "";
        p->pub.len = p->buf.len;
        p->pub.format = f;
        atomic_init(&p->refs, 1); /* the store's */
        return p;
fail:
        if (p)
                om_buf_free(&p->buf);
        free(p);
        free(items);
        return NULL;
}

const struct om_page *om_store_page(struct om_store *st, enum om_format f)
{
        struct page *p = NULL;
        int i = f == OM_FORMAT_OPENMETRICS;

        pthread_mutex_lock(&st->lock);
        if (st->order_stale && build_order(st))
                goto out;
        if (!st->page[i])
                st->page[i] = render(st, f);
        p = st->page[i];
        if (p)
                atomic_fetch_add(&p->refs, 1); /* the caller's */
out:
        pthread_mutex_unlock(&st->lock);
        return p ? &p->pub : NULL;
}

/* A gzip member of @plain (level 1: a scrape's CPU matters more than the
 * last few percent of size), or NULL on -ENOMEM. */
static struct page *gzip_page(const struct om_page *plain)
{
        struct page *p = calloc(1, sizeof(*p));
        z_stream zs = {0};
        int rc = Z_MEM_ERROR;

        if (!p || deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
                free(p);
                return NULL;
        }
        p->buf.cap = deflateBound(&zs, plain->len);
        p->buf.data = malloc(p->buf.cap);
        if (p->buf.data) {
                zs.next_in = (Bytef *)plain->data;
                zs.avail_in = (uInt)plain->len;
                zs.next_out = (Bytef *)p->buf.data;
                zs.avail_out = (uInt)p->buf.cap;
                rc = deflate(&zs, Z_FINISH);
                p->buf.len = zs.total_out;
        }
        deflateEnd(&zs);
        if (!p->buf.data || rc != Z_STREAM_END) {
                om_buf_free(&p->buf);
                free(p);
                return NULL;
        }
        p->pub.data = p->buf.data;
        p->pub.len = p->buf.len;
        p->pub.format = plain->format;
        p->pub.gzip = true;
        atomic_init(&p->refs, 1);
        return p;
}

const struct om_page *om_store_page_gzip(struct om_store *st, enum om_format f)
{
        int i = f == OM_FORMAT_OPENMETRICS;
        const struct om_page *plain;
        struct page *gz;

        pthread_mutex_lock(&st->lock);
        gz = st->gzip[i];
        if (gz)
                atomic_fetch_add(&gz->refs, 1);
        pthread_mutex_unlock(&st->lock);
        if (gz)
                return &gz->pub;
        /* Compressed outside the lock: writers do not wait for it. */
        plain = om_store_page(st, f);
        if (!plain)
                return NULL;
        gz = gzip_page(plain);
        if (gz) {
                pthread_mutex_lock(&st->lock);
                /* Kept for the next scrape while the page is still current. */
                if (&st->page[i]->pub == plain && !st->gzip[i]) {
                        st->gzip[i] = gz;
                        atomic_fetch_add(&gz->refs, 1);
                }
                pthread_mutex_unlock(&st->lock);
        }
        om_page_release(plain);
        return gz ? &gz->pub : NULL;
}
