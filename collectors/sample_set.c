/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample_set.c - owned sample lists. See sample_set.h.
 */
#include "sample_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE 16384

struct sample_chunk {
        struct sample_chunk *next;
        size_t used, size;
        char data[];
};

/* Copies @s into the set's storage; NULL on allocation failure. */
static const char *store(struct sample_set *set, const char *s)
{
        size_t len = strlen(s) + 1;
        struct sample_chunk *c = set->chunks;

        if (!c || c->size - c->used < len) {
                size_t size = len > CHUNK_SIZE ? len : CHUNK_SIZE;

                c = malloc(sizeof(*c) + size);
                if (!c)
                        return NULL;
                c->used = 0;
                c->size = size;
                c->next = set->chunks;
                set->chunks = c;
        }
        char *dst = c->data + c->used;

        memcpy(dst, s, len);
        c->used += len;
        return dst;
}

int sample_set_add(struct sample_set *set, const struct pcie_sample *s)
{
        struct pcie_sample copy = *s;

        if (set->count == set->cap) {
                size_t cap = set->cap ? 2 * set->cap : 64;
                struct pcie_sample *grown = realloc(set->samples, cap * sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                set->samples = grown;
                set->cap = cap;
        }
        copy.metric = store(set, s->metric);
        copy.type = store(set, s->type);
        copy.instance = store(set, s->instance ? s->instance : "");
        copy.type_instance = store(set, s->type_instance ? s->type_instance : "");
        if (!copy.metric || !copy.type || !copy.instance || !copy.type_instance)
                return -ENOMEM;
        for (size_t i = 0; i < s->label_count && i < PCIE_SAMPLE_MAX_LABELS; i++) {
                copy.labels[i].name = store(set, s->labels[i].name);
                copy.labels[i].value = store(set, s->labels[i].value);
                if (!copy.labels[i].name || !copy.labels[i].value)
                        return -ENOMEM;
        }
        set->samples[set->count++] = copy;
        return 0;
}

void sample_set_clear(struct sample_set *set)
{
        struct sample_chunk *c = set->chunks;

        set->count = 0;
        if (!c)
                return;
        /* Keep the newest chunk for reuse, free the rest. */
        while (c->next) {
                struct sample_chunk *next = c->next->next;

                free(c->next);
                c->next = next;
        }
        c->used = 0;
}

void sample_set_free(struct sample_set *set)
{
        while (set->chunks) {
                struct sample_chunk *next = set->chunks->next;

                free(set->chunks);
                set->chunks = next;
        }
        free(set->samples);
        memset(set, 0, sizeof(*set));
}

void sample_set_swap(struct sample_set *a, struct sample_set *b)
{
        struct sample_set t = *a;

        *a = *b;
        *b = t;
}
