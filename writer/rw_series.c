// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_series.c - collectd value lists and named series to Prometheus
 * series (see rw_series.h).
 */
#include "rw_series.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rw_labelset_init(struct rw_labelset *set)
{
        set->n = 0;
        set->used = 0;
        set->overflow = false;
}

static bool name_char_ok(char c, bool first, bool metric)
{
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
                return true;
        if (metric && c == ':')
                return true;
        return !first && c >= '0' && c <= '9';
}

bool rw_valid_name(const char *s, bool metric)
{
        if (!s || !*s)
                return false;
        for (size_t i = 0; s[i]; i++)
                if (!name_char_ok(s[i], i == 0, metric))
                        return false;
        return true;
}

int rw_sanitize_name(char *dst, size_t size, const char *src, bool metric)
{
        size_t o = 0;

        if (!src || !*src)
                return -EINVAL;
        /* A leading digit would be valid later on: keep it behind a '_'. */
        if (src[0] >= '0' && src[0] <= '9') {
                if (size < 2)
                        return -ENOSPC;
                dst[o++] = '_';
        }
        for (size_t i = 0; src[i]; i++) {
                if (o + 1 >= size)
                        return -ENOSPC;
                dst[o] = name_char_ok(src[i], o == 0, metric) ? src[i] : '_';
                o++;
        }
        dst[o] = '\0';
        return (int)o;
}

static char *arena_put(struct rw_labelset *set, const char *s, size_t len)
{
        char *p;

        if (len + 1 > RW_LABEL_ARENA - set->used)
                return NULL;
        p = set->arena + set->used;
        memcpy(p, s, len);
        p[len] = '\0';
        set->used += len + 1;
        return p;
}

/* The length of the UTF-8 sequence at @s (of @n bytes), or 0 where it is
 * not valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
                return 0;
        return len;
}

/* @value with every byte that is not part of valid UTF-8 replaced by
 * U+FFFD, into @out (3 * RW_MAX_VALUE_LEN + 1 bytes). Receivers refuse a
 * whole request, and scrapers a whole page, for one invalid label value. */
static size_t utf8_repair(const char *value, size_t vlen, char *out)
{
        const unsigned char *s = (const unsigned char *)value;
        size_t o = 0;

        for (size_t i = 0; i < vlen;) {
                size_t k = utf8_sequence(s + i, vlen - i);

                if (k) {
                        memcpy(out + o, s + i, k);
                        o += k;
                        i += k;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                }
        }
        out[o] = '\0';
        return o;
}

int rw_labelset_add(struct rw_labelset *set, const char *name, const char *value)
{
        char clean[256], repaired[3 * RW_MAX_VALUE_LEN + 1];
        bool is_name;
        int len;
        size_t vlen;
        char *n, *v;

        if (!value || !*value)
                return 0; /* empty values are never sent */
        is_name = strcmp(name, "__name__") == 0;
        len = is_name ? (int)strlen(name) : rw_sanitize_name(clean, sizeof(clean), name, false);
        if (len < 0)
                return len;
        if (!is_name && clean[0] == '_' && clean[1] == '_')
                return -EINVAL; /* reserved for the receiver */
        vlen = strnlen(value, RW_MAX_VALUE_LEN + 1);
        if (vlen > RW_MAX_VALUE_LEN)
                return -EINVAL;
        if (set->n >= RW_MAX_LABELS) {
                set->overflow = true;
                return -ENOSPC;
        }
        for (size_t i = 0; i < vlen; i++)
                if ((unsigned char)value[i] >= 0x80) {
                        vlen = utf8_repair(value, vlen, repaired);
                        value = repaired;
                        break;
                }
        n = arena_put(set, is_name ? name : clean, (size_t)len);
        v = n ? arena_put(set, value, vlen) : NULL;
        if (!v) {
                set->overflow = true;
                return -ENOSPC;
        }
        set->l[set->n].name = n;
        set->l[set->n].value = v;
        set->n++;
        return 0;
}

const char *rw_labelset_get(const struct rw_labelset *set, const char *name)
{
        for (size_t i = set->n; i-- > 0;)
                if (strcmp(set->l[i].name, name) == 0)
                        return set->l[i].value;
        return NULL;
}

void rw_labelset_finish(struct rw_labelset *set)
{
        size_t o = 0;

        /* Insertion sort, stable, so equal names keep the order they were
         * added in and the last one can win; sets are small. */
        for (size_t i = 1; i < set->n; i++) {
                struct rw_label x = set->l[i];
                size_t j = i;

                while (j > 0 && strcmp(set->l[j - 1].name, x.name) > 0) {
                        set->l[j] = set->l[j - 1];
                        j--;
                }
                set->l[j] = x;
        }
        for (size_t i = 0; i < set->n; i++) {
                if (i + 1 < set->n && strcmp(set->l[i].name, set->l[i + 1].name) == 0)
                        continue;
                set->l[o++] = set->l[i];
        }
        set->n = o;
}

int rw_collectd_name(char *dst, size_t size, const char *plugin, const char *type,
                     const char *ds_name, enum rw_ds_type ds_type)
{
        const char *fields[5];
        size_t n = 0, o = 0;

        fields[n++] = "collectd";
        if (strcmp(plugin, type) != 0)
                fields[n++] = plugin;
        fields[n++] = type;
        if (strcmp(ds_name, "value") != 0)
                fields[n++] = ds_name;
        if (ds_type == RW_DS_COUNTER || ds_type == RW_DS_DERIVE)
                fields[n++] = "total";
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(dst + o, size - o, "%s%s", i ? "_" : "", fields[i]);

                if (w < 0 || (size_t)w >= size - o)
                        return -ENOSPC;
                o += (size_t)w;
        }
        return (int)o;
}

int rw_kind_parse(const char *s, enum rw_kind *kind)
{
        static const struct {
                const char *name;
                enum rw_kind kind;
        } map[] = {{"gauge", RW_KIND_GAUGE},
                   {"counter", RW_KIND_COUNTER},
                   {"info", RW_KIND_INFO},
                   {"histogram", RW_KIND_HISTOGRAM}};

        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
                if (strcmp(s, map[i].name) == 0) {
                        *kind = map[i].kind;
                        return 0;
                }
        return -EINVAL;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
        size_t sl = strlen(suffix);

        return len > sl && memcmp(s + len - sl, suffix, sl) == 0;
}

int rw_family_name(char *dst, size_t size, const char *name, enum rw_kind kind)
{
        size_t len = strlen(name);

        if (kind == RW_KIND_HISTOGRAM) {
                static const char *const suffixes[] = {"_bucket", "_sum", "_count"};

                for (size_t i = 0; i < 3; i++)
                        if (ends_with(name, len, suffixes[i])) {
                                len -= strlen(suffixes[i]);
                                break;
                        }
        }
        if (len + 1 > size)
                return -ENOSPC;
        memcpy(dst, name, len);
        dst[len] = '\0';
        return (int)len;
}

/* ---- rules ------------------------------------------------------------- */

struct rw_rename {
        char *from, *to;
};

struct rw_rules {
        regex_t *drop_metric;
        size_t n_drop_metric;
        struct rw_rename *rename_metric, *rename_label;
        size_t n_rename_metric, n_rename_label;
        char **drop_label;
        size_t n_drop_label;
};

struct rw_rules *rw_rules_new(void)
{
        return calloc(1, sizeof(struct rw_rules));
}

void rw_rules_free(struct rw_rules *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_drop_metric; i++)
                regfree(&r->drop_metric[i]);
        free(r->drop_metric);
        for (size_t i = 0; i < r->n_rename_metric; i++) {
                free(r->rename_metric[i].from);
                free(r->rename_metric[i].to);
        }
        free(r->rename_metric);
        for (size_t i = 0; i < r->n_rename_label; i++) {
                free(r->rename_label[i].from);
                free(r->rename_label[i].to);
        }
        free(r->rename_label);
        for (size_t i = 0; i < r->n_drop_label; i++)
                free(r->drop_label[i]);
        free(r->drop_label);
        free(r);
}

/* What regcomp expands: a bound {m,n} copies its operand max(m, n) times.
 * Beyond this many copied characters glibc takes seconds (a{0,255} x 110:
 * 4.6 s); metric names need nowhere near it. */
#define REGEX_MAX_COPIES 1000

/* Where the last atom (a character, a bracket expression or a group)
 * started, and whether a group holds a repetition. */
struct re_scan {
        size_t atom;   /* offset of the last atom; SIZE_MAX: none */
        bool atom_rep; /* the last atom is a group holding a repetition */
        bool after_rep;
        size_t copies;
};

/* Whether @p starts a bound "{m}", "{m,}" or "{m,n}" (else regcomp decides
 * what it is): its largest count in *count, its length in *len. */
static bool bound_at(const char *p, size_t *count, size_t *len)
{
        size_t m = 0, n = 0, i = 1;
        bool comma = false, digits = false;

        for (; p[i] && p[i] != '}'; i++) {
                if (p[i] == ',' && !comma) {
                        comma = true;
                } else if (p[i] >= '0' && p[i] <= '9') {
                        size_t *v = comma ? &n : &m;

                        *v = *v > 100000 ? *v : *v * 10 + (size_t)(p[i] - '0');
                        digits = true;
                } else {
                        return false;
                }
        }
        if (p[i] != '}' || !digits)
                return false;
        *count = m > n ? m : n;
        *len = i + 1;
        return true;
}

/* The length of the bracket expression at @p ("]" first is a member;
 * "[:alpha:]", "[.x.]", "[=x=]" inside); to the end when unclosed. */
static size_t bracket_len(const char *p)
{
        size_t j = 1;

        j += p[j] == '^';
        j += p[j] == ']';
        while (p[j] && p[j] != ']') {
                const char *close = NULL;

                if (p[j] == '[' && p[j + 1] && strchr(":.=", p[j + 1])) {
                        char end[3] = {p[j + 1], ']', '\0'};

                        close = strstr(p + j + 2, end);
                }
                j = close ? (size_t)(close - p) + 2 : j + 1;
        }
        return p[j] ? j + 1 : j;
}

/*
 * glibc's regcomp takes time exponential in the repetitions stacked on one
 * another: "a+++++++++++++++++++++" (20) takes 8 s, 30 hours, and so do
 * repeated groups holding repetitions ("((a*){0,10}){0,10}" 11 s) and large
 * bounds (see REGEX_MAX_COPIES). The configuration would hang at load, so
 * such patterns are refused: two repetition operators in a row (POSIX
 * leaves their meaning undefined), a repetition of a group that holds one,
 * and bounds copying more than REGEX_MAX_COPIES characters in all. 0 or
 * -EINVAL with the reason in @err.
 */
static int regex_check_cost(const char *re, char *err, size_t errlen)
{
        struct re_scan sc = {.atom = SIZE_MAX};
        size_t open[64], depth = 0;
        bool holds_rep[64 + 1] = {false}; /* [depth]: the open group holds one */

        for (size_t i = 0; re[i];) {
                char c = re[i];
                size_t len = 1, count = 0;

                if (c == '*' || c == '+' || c == '?' ||
                    (c == '{' && bound_at(re + i, &count, &len))) {
                        if (sc.after_rep) {
                                snprintf(err, errlen,
                                         "two repetition operators in a row at offset %zu "
                                         "(undefined in POSIX, and exponential to compile)",
                                         i);
                                return -EINVAL;
                        }
                        if (sc.atom != SIZE_MAX && sc.atom_rep) {
                                snprintf(err, errlen,
                                         "a repeated group holds a repetition (offset %zu): "
                                         "exponential to compile",
                                         i);
                                return -EINVAL;
                        }
                        if (c == '{' && sc.atom != SIZE_MAX) {
                                sc.copies += count * (i - sc.atom);
                                if (sc.copies > REGEX_MAX_COPIES) {
                                        snprintf(err, errlen,
                                                 "bounds copy more than %d characters "
                                                 "(offset %zu)",
                                                 REGEX_MAX_COPIES, i);
                                        return -EINVAL;
                                }
                        }
                        holds_rep[depth] = true;
                        sc.after_rep = true;
                        i += len;
                        continue;
                }
                sc.after_rep = false;
                if (c == '(') {
                        if (depth == sizeof(open) / sizeof(open[0])) {
                                snprintf(err, errlen, "groups nested more than %zu deep",
                                         sizeof(open) / sizeof(open[0]));
                                return -EINVAL;
                        }
                        open[depth++] = i;
                        holds_rep[depth] = false;
                        sc.atom = SIZE_MAX;
                } else if (c == ')' && depth) {
                        sc.atom = open[--depth];
                        sc.atom_rep = holds_rep[depth + 1];
                        holds_rep[depth] |= holds_rep[depth + 1];
                } else if (c == '|' || c == '^' || c == '$') {
                        sc.atom = SIZE_MAX;
                } else {
                        sc.atom = i;
                        sc.atom_rep = false;
                        if (c == '\\' && re[i + 1]) {
                                len = 2;
                        } else if (c == '[') {
                                len = bracket_len(re + i);
                        }
                }
                i += len;
        }
        return 0;
}

int rw_rules_drop_metric(struct rw_rules *r, const char *regex, char *err, size_t errlen)
{
        char anchored[1024];
        regex_t *grown;
        int rc;

        if (snprintf(anchored, sizeof(anchored), "^(%s)$", regex) >= (int)sizeof(anchored)) {
                snprintf(err, errlen, "regular expression too long");
                return -EINVAL;
        }
        if (regex_check_cost(regex, err, errlen))
                return -EINVAL;
        grown = realloc(r->drop_metric, (r->n_drop_metric + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        r->drop_metric = grown;
        rc = regcomp(&grown[r->n_drop_metric], anchored, REG_EXTENDED | REG_NOSUB);
        if (rc) {
                regerror(rc, &grown[r->n_drop_metric], err, errlen);
                regfree(&grown[r->n_drop_metric]);
                return -EINVAL;
        }
        r->n_drop_metric++;
        return 0;
}

static int add_rename(struct rw_rename **list, size_t *n, const char *from, const char *to,
                      bool metric)
{
        struct rw_rename *grown;

        if (!rw_valid_name(from, metric) || !rw_valid_name(to, metric))
                return -EINVAL;
        grown = realloc(*list, (*n + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        *list = grown;
        grown[*n].from = strdup(from);
        grown[*n].to = strdup(to);
        if (!grown[*n].from || !grown[*n].to) {
                free(grown[*n].from);
                free(grown[*n].to);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

int rw_rules_rename_metric(struct rw_rules *r, const char *from, const char *to)
{
        return add_rename(&r->rename_metric, &r->n_rename_metric, from, to, true);
}

int rw_rules_rename_label(struct rw_rules *r, const char *from, const char *to)
{
        if (strncmp(to, "__", 2) == 0 || strncmp(from, "__", 2) == 0)
                return -EINVAL;
        return add_rename(&r->rename_label, &r->n_rename_label, from, to, false);
}

int rw_rules_drop_label(struct rw_rules *r, const char *name)
{
        char **grown;

        if (!rw_valid_name(name, false) || strcmp(name, "__name__") == 0)
                return -EINVAL;
        grown = realloc(r->drop_label, (r->n_drop_label + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        r->drop_label = grown;
        grown[r->n_drop_label] = strdup(name);
        if (!grown[r->n_drop_label])
                return -ENOMEM;
        r->n_drop_label++;
        return 0;
}

/* Renames and drops labels in place (before the set is sorted). */
static void apply_label_rules(const struct rw_rules *r, struct rw_labelset *set)
{
        size_t o = 0;

        for (size_t i = 0; i < set->n; i++) {
                bool drop = false;

                for (size_t k = 0; k < r->n_rename_label; k++)
                        if (strcmp(set->l[i].name, r->rename_label[k].from) == 0) {
                                set->l[i].name = r->rename_label[k].to;
                                break;
                        }
                for (size_t k = 0; k < r->n_drop_label && !drop; k++)
                        drop = strcmp(set->l[i].name, r->drop_label[k]) == 0;
                if (!drop)
                        set->l[o++] = set->l[i];
        }
        set->n = o;
}

static const char *renamed_metric(const struct rw_rules *r, const char *name)
{
        for (size_t k = 0; r && k < r->n_rename_metric; k++)
                if (strcmp(name, r->rename_metric[k].from) == 0)
                        return r->rename_metric[k].to;
        return name;
}

static bool metric_dropped(const struct rw_rules *r, const char *name)
{
        for (size_t k = 0; r && k < r->n_drop_metric; k++)
                if (regexec(&r->drop_metric[k], name, 0, NULL, 0) == 0)
                        return true;
        return false;
}

/* ---- value list or named series to labels ------------------------------ */

/*
 * The one way a series gets its labels, whatever it came from: external
 * labels first (the series' own win over them), then its own (a reserved
 * or oversized one is left out, the rest of the series still goes), then
 * instance=@instance, the label rules, the metric rules, and __name__.
 * @name is a valid metric name. Returns 1 when a rule dropped the series,
 * 0 when built, negative errno.
 */
static int build_series(const char *name, size_t n, const char *const *names,
                        const char *const *values, const char *instance,
                        const struct rw_labelset *external, const struct rw_rules *rules,
                        struct rw_labelset *out)
{
        const char *final;
        int err;

        rw_labelset_init(out);
        for (size_t i = 0; external && i < external->n; i++) {
                err = rw_labelset_add(out, external->l[i].name, external->l[i].value);
                if (err)
                        return err;
        }
        for (size_t i = 0; i < n; i++)
                if (rw_labelset_add(out, names[i], values[i]) == -ENOSPC)
                        return -ENOSPC;
        if (rw_labelset_add(out, "instance", instance) == -ENOSPC)
                return -ENOSPC;
        if (rules)
                apply_label_rules(rules, out);
        final = renamed_metric(rules, name);
        if (metric_dropped(rules, final))
                return 1;
        err = rw_labelset_add(out, "__name__", final);
        if (err)
                return err;
        rw_labelset_finish(out);
        return 0;
}

int rw_series_named(const char *metric, size_t n, const char *const *names,
                    const char *const *values, const char *instance,
                    const struct rw_labelset *external, const struct rw_rules *rules,
                    struct rw_labelset *out)
{
        char name[512];
        int err;

        rw_labelset_init(out);
        err = rw_sanitize_name(name, sizeof(name), metric, true);
        if (err < 0)
                return err;
        return build_series(name, n, names, values, instance, external, rules, out);
}

int rw_series_build(const struct rw_vl *vl, const char *ds_name, enum rw_ds_type ds_type,
                    size_t ds_num, const struct rw_labelset *external, const struct rw_rules *rules,
                    struct rw_labelset *out, enum rw_kind *kind)
{
        const char *names[2], *values[2];
        bool has_pi = vl->plugin_instance && *vl->plugin_instance;
        char name[512];
        size_t n = 0;
        int err;

        if (vl->prom_name && *vl->prom_name) {
                /* Our pcie plugin's convention: one data source per list. */
                if (ds_num != 1)
                        return -EINVAL;
                if (!vl->prom_type || rw_kind_parse(vl->prom_type, kind))
                        *kind = ds_type == RW_DS_GAUGE ? RW_KIND_GAUGE : RW_KIND_COUNTER;
                return rw_series_named(vl->prom_name, vl->n_meta, vl->meta_names, vl->meta_values,
                                       vl->host, external, rules, out);
        }
        rw_labelset_init(out);
        err = rw_collectd_name(name, sizeof(name), vl->plugin, vl->type, ds_name, ds_type);
        if (err < 0)
                return err;
        /* The parts are collectd identifiers: make them valid. */
        err = rw_sanitize_name(name, sizeof(name), name, true);
        if (err < 0)
                return err;
        *kind = ds_type == RW_DS_GAUGE ? RW_KIND_GAUGE : RW_KIND_COUNTER;
        /* Exactly write_prometheus' labels: <plugin>=<plugin_instance>, and
         * type=<type_instance> (named <plugin> without a plugin instance). */
        if (has_pi) {
                names[n] = vl->plugin;
                values[n++] = vl->plugin_instance;
        }
        if (vl->type_instance && *vl->type_instance) {
                names[n] = has_pi ? "type" : vl->plugin;
                values[n++] = vl->type_instance;
        }
        return build_series(name, n, names, values, vl->host, external, rules, out);
}

char *rw_series_pack(const struct rw_labelset *set, enum rw_kind kind, size_t *len)
{
        size_t total = 2;
        char *p, *o;

        for (size_t i = 0; i < set->n; i++)
                total += strlen(set->l[i].name) + strlen(set->l[i].value) + 2;
        p = malloc(total);
        if (!p)
                return NULL;
        p[0] = (char)kind;
        p[1] = (char)set->n; /* RW_MAX_LABELS fits a byte */
        o = p + 2;
        for (size_t i = 0; i < set->n; i++) {
                size_t a = strlen(set->l[i].name) + 1, b = strlen(set->l[i].value) + 1;

                memcpy(o, set->l[i].name, a);
                o += a;
                memcpy(o, set->l[i].value, b);
                o += b;
        }
        if (len)
                *len = total;
        return p;
}
