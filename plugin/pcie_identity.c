// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_identity.c - a sample's collectd identity from its family and
 * labels (see the header; the templates are described in the header of
 * metrics/families.spec).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pcie_identity.h"

#define NOT_APPLICABLE 1
#define REF_MAX        128

struct out_text {
        char *buf;
        size_t len, used;
};

static int put(struct out_text *o, const char *s, size_t n)
{
        if (o->used + n >= o->len)
                return -ENAMETOOLONG;
        memcpy(o->buf + o->used, s, n);
        o->used += n;
        o->buf[o->used] = 0;
        return 0;
}

/* The sample of family @family in @interval whose label @key has @value. */
static const struct pcie_sample *companion(const char *family, size_t family_len, const char *key,
                                           const char *value, const struct pcie_sample *interval,
                                           size_t count)
{
        for (size_t i = 0; i < count; i++) {
                const struct pcie_sample *c = &interval[i];
                const char *v;

                if (strlen(c->family->name) != family_len ||
                    strncmp(c->family->name, family, family_len))
                        continue;
                v = pcie_sample_label(c, key);
                if (v && !strcmp(v, value))
                        return c;
        }
        return NULL;
}

/* "FAMILY[key=name]" or "FAMILY[key=name].label": the value of label of
 * the companion (the key's value for a presence test), or NULL. */
static int join(const char *ref, const struct pcie_sample *s, const struct pcie_sample *interval,
                size_t count, const char **value)
{
        const char *open = strchr(ref, '['), *eq = strchr(ref, '='), *close = strchr(ref, ']');
        char key[REF_MAX], own[REF_MAX];
        const struct pcie_sample *c;
        const char *mine;

        if (!open || !eq || !close || eq < open || close < eq ||
            (close[1] && (close[1] != '.' || !close[2])))
                return -EINVAL;
        snprintf(key, sizeof(key), "%.*s", (int)(eq - open - 1), open + 1);
        snprintf(own, sizeof(own), "%.*s", (int)(close - eq - 1), eq + 1);
        mine = pcie_sample_label(s, own);
        c = mine ? companion(ref, (size_t)(open - ref), key, mine, interval, count) : NULL;
        *value = !c ? NULL : close[1] ? pcie_sample_label(c, close + 2) : mine;
        return 0;
}

/* What a histogram's series adds to its family's name: bucket, sum, count. */
static const char *series_suffix(const struct pcie_sample *s)
{
        size_t n = strlen(s->family->name);

        if (!s->metric || strncmp(s->metric, s->family->name, n) || s->metric[n] != '_')
                return NULL;
        return s->metric + n + 1;
}

/* One {reference}: appends its value to @o. */
static int reference(const char *ref, const struct pcie_sample *s,
                     const struct pcie_sample *interval, size_t count, struct out_text *o)
{
        const char *eq = strchr(ref, '='), *value;
        int err;

        if (ref[0] == '@') {
                if (strcmp(ref, "@series"))
                        return -EINVAL;
                value = series_suffix(s);
        } else if (ref[0] == '?' || strchr(ref, '[')) {
                err = join(ref + (ref[0] == '?'), s, interval, count, &value);
                if (err || !value)
                        return err ? err : NOT_APPLICABLE;
                if (ref[0] == '?')
                        return 0;
        } else if (eq) {
                /* name=value, or name=prefix* */
                char name[REF_MAX];
                size_t want = strlen(eq + 1);
                bool prefix = want && eq[want] == '*';

                snprintf(name, sizeof(name), "%.*s", (int)(eq - ref), ref);
                value = pcie_sample_label(s, name);
                if (!value)
                        return NOT_APPLICABLE;
                if (prefix ? strncmp(value, eq + 1, want - 1) : strcmp(value, eq + 1))
                        return NOT_APPLICABLE;
                return 0;
        } else {
                value = pcie_sample_label(s, ref);
        }
        if (!value || !*value)
                return NOT_APPLICABLE;
        return put(o, value, strlen(value));
}

int pcie_identity_expand(const char *template, const struct pcie_sample *s,
                         const struct pcie_sample *interval, size_t count, char *out, size_t len)
{
        struct out_text o = {.buf = out, .len = len};
        const char *p = template;

        if (!len)
                return -ENAMETOOLONG;
        out[0] = 0;
        while (*p) {
                const char *open = strchr(p, '{'), *close;
                char ref[REF_MAX];
                int err;

                if (!open)
                        return put(&o, p, strlen(p));
                err = put(&o, p, (size_t)(open - p));
                close = strchr(open, '}');
                if (err || !close || (size_t)(close - open) >= sizeof(ref))
                        return err ? err : -EINVAL;
                snprintf(ref, sizeof(ref), "%.*s", (int)(close - open - 1), open + 1);
                err = reference(ref, s, interval, count, &o);
                if (err)
                        return err;
                p = close + 1;
        }
        return 0;
}

int pcie_identity(const struct pcie_sample *s, const struct pcie_sample *interval, size_t count,
                  struct pcie_identity *out)
{
        const struct pcie_identity_rule *r = NULL;
        ptrdiff_t id = s->family - pcie_families;
        int err = -ENOENT;

        if (id >= 0 && id < PCIE_FAMILY_COUNT)
                r = pcie_identity_rules[id];
        for (; r && r->instance; r++) {
                err = pcie_identity_expand(r->instance, s, interval, count, out->plugin_instance,
                                           sizeof(out->plugin_instance));
                if (!err)
                        err = pcie_identity_expand(r->type_instance, s, interval, count,
                                                   out->type_instance, sizeof(out->type_instance));
                if (err != NOT_APPLICABLE)
                        break;
                err = -ENOENT;
        }
        if (err)
                out->plugin_instance[0] = out->type_instance[0] = 0;
        return err;
}
