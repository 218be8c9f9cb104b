// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_registry.c - identifier -> last series, a locked chained hash table.
 */
#include "rw_registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
        struct entry *next;
        uint64_t hash;
        char *key;
        size_t nslots;
        char **slots;
        size_t *lens;
};

struct rw_registry {
        pthread_mutex_t lock;
        struct entry **b;
        size_t nb, n;
};

static uint64_t hash_str(const char *s)
{
        uint64_t h = 1469598103934665603ULL;

        for (; *s; s++)
                h = (h ^ (uint8_t)*s) * 1099511628211ULL;
        return h;
}

struct rw_registry *rw_registry_new(void)
{
        struct rw_registry *r = calloc(1, sizeof(*r));

        if (!r)
                return NULL;
        r->nb = 1024;
        r->b = calloc(r->nb, sizeof(*r->b));
        if (!r->b) {
                free(r);
                return NULL;
        }
        pthread_mutex_init(&r->lock, NULL);
        return r;
}

static void entry_free(struct entry *e, bool keep_slots)
{
        if (!keep_slots) {
                for (size_t i = 0; i < e->nslots; i++)
                        free(e->slots[i]);
                free(e->slots);
        }
        free(e->lens);
        free(e->key);
        free(e);
}

void rw_registry_free(struct rw_registry *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->nb; i++)
                while (r->b[i]) {
                        struct entry *e = r->b[i];

                        r->b[i] = e->next;
                        entry_free(e, false);
                }
        free(r->b);
        pthread_mutex_destroy(&r->lock);
        free(r);
}

static void grow(struct rw_registry *r)
{
        size_t nb = r->nb * 2;
        struct entry **b = calloc(nb, sizeof(*b));

        if (!b)
                return; /* longer chains, still correct */
        for (size_t i = 0; i < r->nb; i++)
                while (r->b[i]) {
                        struct entry *e = r->b[i];

                        r->b[i] = e->next;
                        e->next = b[e->hash % nb];
                        b[e->hash % nb] = e;
                }
        free(r->b);
        r->b = b;
        r->nb = nb;
}

int rw_registry_note(struct rw_registry *r, const char *key, size_t slot, size_t nslots,
                     const char *series, size_t len)
{
        uint64_t h = hash_str(key);
        struct entry *e;
        int rc = 0;

        if (slot >= nslots)
                return -EINVAL;
        pthread_mutex_lock(&r->lock);
        for (e = r->b[h % r->nb]; e; e = e->next)
                if (e->hash == h && strcmp(e->key, key) == 0)
                        break;
        if (!e) {
                e = calloc(1, sizeof(*e));
                if (e) {
                        e->hash = h;
                        e->key = strdup(key);
                        e->slots = calloc(nslots, sizeof(*e->slots));
                        e->lens = calloc(nslots, sizeof(*e->lens));
                        e->nslots = nslots;
                }
                if (!e || !e->key || !e->slots || !e->lens) {
                        if (e) {
                                free(e->key);
                                free(e->slots);
                                free(e->lens);
                                free(e);
                        }
                        rc = -ENOMEM;
                        goto out;
                }
                e->next = r->b[h % r->nb];
                r->b[h % r->nb] = e;
                if (++r->n > r->nb * 2)
                        grow(r);
        }
        if (slot < e->nslots &&
            !(e->slots[slot] && e->lens[slot] == len && memcmp(e->slots[slot], series, len) == 0)) {
                char *copy = malloc(len);

                if (!copy) {
                        rc = -ENOMEM;
                        goto out;
                }
                memcpy(copy, series, len);
                free(e->slots[slot]);
                e->slots[slot] = copy;
                e->lens[slot] = len;
        }
out:
        pthread_mutex_unlock(&r->lock);
        return rc;
}

static void hand_over(struct rw_registry *r, struct entry **link, char ***slots, size_t *nslots)
{
        struct entry *e = *link;

        *link = e->next;
        r->n--;
        *slots = e->slots;
        *nslots = e->nslots;
        entry_free(e, true);
}

int rw_registry_take(struct rw_registry *r, const char *key, char ***slots, size_t *nslots)
{
        uint64_t h = hash_str(key);
        int rc = -ENOENT;

        pthread_mutex_lock(&r->lock);
        for (struct entry **l = &r->b[h % r->nb]; *l; l = &(*l)->next)
                if ((*l)->hash == h && strcmp((*l)->key, key) == 0) {
                        hand_over(r, l, slots, nslots);
                        rc = 0;
                        break;
                }
        pthread_mutex_unlock(&r->lock);
        return rc;
}

int rw_registry_take_any(struct rw_registry *r, char ***slots, size_t *nslots)
{
        int rc = -ENOENT;

        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < r->nb && rc; i++)
                if (r->b[i]) {
                        hand_over(r, &r->b[i], slots, nslots);
                        rc = 0;
                }
        pthread_mutex_unlock(&r->lock);
        return rc;
}

size_t rw_registry_size(struct rw_registry *r)
{
        size_t n;

        pthread_mutex_lock(&r->lock);
        n = r->n;
        pthread_mutex_unlock(&r->lock);
        return n;
}
