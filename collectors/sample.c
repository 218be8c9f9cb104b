/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.c - samples, sample sets and the emitter kit. See sample.h.
 */
#include "sample.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHUNK_SIZE 16384

const char *pcie_detail_name(enum pcie_detail detail)
{
        switch (detail) {
        case PCIE_DETAIL_BASIC:
                return "basic";
        case PCIE_DETAIL_DEFAULT:
                return "default";
        case PCIE_DETAIL_FULL:
                return "full";
        }
        return "?";
}

int pcie_detail_parse(const char *name, enum pcie_detail *out)
{
        static const enum pcie_detail levels[] = {PCIE_DETAIL_BASIC, PCIE_DETAIL_DEFAULT,
                                                  PCIE_DETAIL_FULL};

        for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
                if (!strcasecmp(name, pcie_detail_name(levels[i]))) {
                        *out = levels[i];
                        return 0;
                }
        }
        return -EINVAL;
}

const char *pcie_metric_kind_name(enum pcie_metric_kind kind)
{
        switch (kind) {
        case PCIE_METRIC_GAUGE:
                return "gauge";
        case PCIE_METRIC_COUNTER:
        case PCIE_METRIC_FLOAT_COUNTER:
                return "counter";
        case PCIE_METRIC_INFO:
                return "info";
        case PCIE_METRIC_HISTOGRAM:
                return "histogram";
        }
        return "gauge";
}

const char *pcie_sample_label(const struct pcie_sample *s, const char *name)
{
        for (size_t i = 0; i < s->label_count; i++)
                if (!strcmp(s->labels[i].name, name))
                        return s->labels[i].value;
        return NULL;
}

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
        if (!copy.metric)
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

void sample_set_add_label(struct sample_set *set, const char *name, const char *value)
{
        for (size_t i = 0; i < set->count; i++)
                sample_label(&set->samples[i], name, value);
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

/* ---- the emitter kit ---- */

void sample_init(struct pcie_sample *s, const struct pcie_family *family)
{
        memset(s, 0, sizeof(*s));
        sample_set_family(s, family);
}

void sample_set_family(struct pcie_sample *s, const struct pcie_family *family)
{
        s->family = family;
        s->metric = family->name;
        s->kind = family->kind;
}

void sample_label(struct pcie_sample *s, const char *name, const char *value)
{
        if (value && *value && s->label_count < PCIE_SAMPLE_MAX_LABELS)
                s->labels[s->label_count++] = (struct pcie_label){name, value};
}

int sample_emit(struct sample_emitter *em, const struct pcie_sample *s)
{
        int err = em->set ? sample_set_add(em->set, s) : em->fn(em->ctx, s);

        if (err && !em->err)
                em->err = err;
        return err;
}
