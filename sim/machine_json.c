// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_json.c - JSON access for the machine reader: messages that name
 * the file and the JSON path, typed values with range checks, tables of
 * plain fields (read_fields), one walker for arrays of objects
 * (read_array), and the text-level checks json-c does not make (line and
 * column of a syntax error, duplicate keys). Part of the machine reader
 * (sim_machine.c; shared declarations in machine_internal.h).
 */
#define _GNU_SOURCE
#include "machine_internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages and paths ---- */

int fail(struct ctx *c, const char *path, const char *fmt, ...)
{
        char msg[768];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (c->err && c->errlen) {
                if (path && *path)
                        snprintf(c->err, c->errlen, "%s: %s: %s", c->origin, path, msg);
                else
                        snprintf(c->err, c->errlen, "%s: %s", c->origin, msg);
        }
        return -EINVAL;
}

void pathf(char *out, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(out, size, fmt, ap);
        va_end(ap);
}

/* "<base>.<key>", or "<key>" at the top. */
void path_key(char *out, size_t size, const char *base, const char *key)
{
        if (*base)
                pathf(out, size, "%s.%s", base, key);
        else
                pathf(out, size, "%s", key);
}

void path_idx(char *out, size_t size, const char *base, size_t i)
{
        pathf(out, size, "%s[%zu]", base, i);
}

const char *type_desc(json_object *v)
{
        switch (json_object_get_type(v)) {
        case json_type_null:
                return "null";
        case json_type_boolean:
                return "a boolean";
        case json_type_double:
        case json_type_int:
                return "a number";
        case json_type_object:
                return "an object";
        case json_type_array:
                return "an array";
        case json_type_string:
                return "a string";
        }
        return "something else";
}

/* ---- generic typed access ---- */

/* The member, or NULL when absent or null. */
json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

int check_keys(struct ctx *c, json_object *o, const char *path, const char *what,
               const char *const *keys)
{
        json_object_object_foreach(o, key, val)
        {
                char known[512] = "";
                char kp[PATH_LEN];
                size_t used = 0;
                bool ok = false;

                (void)val;
                for (size_t i = 0; keys[i]; i++) {
                        if (!strcmp(key, keys[i])) {
                                ok = true;
                                break;
                        }
                }
                if (ok)
                        continue;
                for (size_t i = 0; keys[i] && used < sizeof(known); i++)
                        used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
                                                 i ? ", " : "", keys[i]);
                path_key(kp, sizeof(kp), path, key);
                return fail(c, kp, "unknown key for %s (known keys: %s)", what, known);
        }
        return 0;
}

int need_object(struct ctx *c, json_object *v, const char *path)
{
        if (!json_object_is_type(v, json_type_object))
                return fail(c, path, "expected an object, got %s", type_desc(v));
        return 0;
}

static int need_array(struct ctx *c, json_object *v, const char *path, size_t max)
{
        if (!json_object_is_type(v, json_type_array))
                return fail(c, path, "expected an array, got %s", type_desc(v));
        if (json_object_array_length(v) > max)
                return fail(c, path, "%zu entries, at most %zu are allowed",
                            json_object_array_length(v), max);
        return 0;
}

int get_int(struct ctx *c, json_object *v, const char *path, long long min, long long max,
            long long *out)
{
        long long x;

        if (json_object_is_type(v, json_type_int)) {
                x = (long long)json_object_get_int64(v);
                /* json-c keeps values above INT64_MAX as uint64. */
                if (x == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
                        return fail(c, path, "%s is out of range %lld..%lld",
                                    json_object_get_string(v), min, max);
        } else if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);

                if (!isfinite(d))
                        return fail(c, path, "expected an integer, got %s",
                                    json_object_get_string(v));
                if (d < (double)min || d > (double)max)
                        return fail(c, path, "%g is out of range %lld..%lld", d, min, max);
                x = (long long)d;
                if ((double)x != d)
                        return fail(c, path, "expected an integer, got %g", d);
        } else {
                return fail(c, path, "expected an integer, got %s", type_desc(v));
        }
        if (x < min || x > max)
                return fail(c, path, "%lld is out of range %lld..%lld", x, min, max);
        *out = x;
        return 0;
}

int get_double(struct ctx *c, json_object *v, const char *path, double min, double max, double *out)
{
        double d;

        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return fail(c, path, "expected a number, got %s", type_desc(v));
        d = json_object_get_double(v);
        if (!isfinite(d))
                return fail(c, path, "expected a finite number, got %s", json_object_get_string(v));
        if (d < min || d > max)
                return fail(c, path, "%g is out of range %g..%g", d, min, max);
        *out = d;
        return 0;
}

static int get_bool(struct ctx *c, json_object *v, const char *path, bool *out)
{
        if (!json_object_is_type(v, json_type_boolean))
                return fail(c, path, "expected true or false, got %s", type_desc(v));
        *out = json_object_get_boolean(v);
        return 0;
}

/* A string of at most @size - 1 bytes without NUL characters. */
int get_string(struct ctx *c, json_object *v, const char *path, char *buf, size_t size)
{
        const char *s;
        int len;

        if (!json_object_is_type(v, json_type_string))
                return fail(c, path, "expected a string, got %s", type_desc(v));
        s = json_object_get_string(v);
        len = json_object_get_string_len(v);
        if (len < 0 || strlen(s) != (size_t)len)
                return fail(c, path, "the string contains a NUL character");
        if ((size_t)len >= size)
                return fail(c, path, "the string is %d bytes long, at most %zu are allowed", len,
                            size - 1);
        memcpy(buf, s, (size_t)len + 1);
        return 0;
}

int hexval(char ch)
{
        if (ch >= '0' && ch <= '9')
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

/* A hex string ("0x19e5" or "19e5") up to @max. */
int get_hex(struct ctx *c, json_object *v, const char *path, unsigned long max, unsigned long *out)
{
        char buf[32];
        const char *p = buf;
        unsigned long x = 0;
        int r;

        if (!json_object_is_type(v, json_type_string))
                return fail(c, path, "expected a hex string such as \"0x1234\", got %s",
                            type_desc(v));
        r = get_string(c, v, path, buf, sizeof(buf));
        if (r)
                return r;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
                p += 2;
        if (!*p)
                return fail(c, path, "\"%s\" is not a hex number", buf);
        for (; *p; p++) {
                int h = hexval(*p);

                if (h < 0)
                        return fail(c, path, "\"%s\" is not a hex number", buf);
                x = x * 16 + (unsigned long)h;
                if (x > max)
                        return fail(c, path, "\"%s\" is above 0x%lx", buf, max);
        }
        *out = x;
        return 0;
}

/* ---- the schema helper: one table row per plain field ---- */

/* An in-range integer into a destination of @size bytes. */
static void store_int(void *out, size_t size, long long x)
{
        switch (size) {
        case 1:
                *(uint8_t *)out = (uint8_t)x;
                break;
        case 2:
                *(uint16_t *)out = (uint16_t)x;
                break;
        case 4:
                *(uint32_t *)out = (uint32_t)x;
                break;
        default:
                *(uint64_t *)out = (uint64_t)x;
                break;
        }
}

int read_field(struct ctx *c, json_object *v, const char *path, const struct field *f)
{
        unsigned long hex = 0;
        long long x = 0;
        double d;
        int r;

        switch (f->kind) {
        case FIELD_INT:
                r = get_int(c, v, path, f->min, f->max, &x);
                if (!r)
                        store_int(f->out, f->size, x);
                d = (double)x;
                break;
        case FIELD_HEX:
                r = get_hex(c, v, path, (unsigned long)f->max, &hex);
                if (!r)
                        store_int(f->out, f->size, (long long)hex);
                d = (double)hex;
                break;
        case FIELD_DOUBLE:
                r = get_double(c, v, path, f->dmin, f->dmax, f->out);
                d = r ? 0 : *(double *)f->out;
                break;
        case FIELD_BOOL:
                return get_bool(c, v, path, f->out);
        default:
                return get_string(c, v, path, f->out, f->size);
        }
        if (!r && f->check)
                r = f->check(c, path, d, f->arg);
        return r;
}

/* The member @key of @o (NULL: absent), with its JSON path in @p. */
json_object *field_at(json_object *o, const char *base, const char *key, char *p, size_t size)
{
        path_key(p, size, base, key);
        return member(o, key);
}

/* Reads the fields of @o (the object at @path) in table order. */
int read_fields(struct ctx *c, json_object *o, const char *path, const struct field *f, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char p[PATH_LEN];
                json_object *v = field_at(o, path, f[i].key, p, sizeof(p));
                int r;

                if (!v) {
                        if (f[i].missing && *f[i].missing)
                                return fail(c, p, "missing (%s)", f[i].missing);
                        if (f[i].missing)
                                return fail(c, p, "missing");
                        continue;
                }
                r = read_field(c, v, p, &f[i]);
                if (r)
                        return r;
                if (f[i].given)
                        *f[i].given = true;
        }
        return 0;
}

/* @o must be an object with only @keys (@what names it in the message). */
int open_object(struct ctx *c, json_object *o, const char *path, const char *what,
                const char *const *keys)
{
        int r = need_object(c, o, path);

        return r ? r : check_keys(c, o, path, what, keys);
}

/* open_object, then its plain fields. */
int read_object(struct ctx *c, json_object *o, const char *path, const char *what,
                const char *const *keys, const struct field *f, size_t n)
{
        int r = open_object(c, o, path, what, keys);

        return r ? r : read_fields(c, o, path, f, n);
}

/* @v (at @path) must be an array of at most @max entries, and not empty
 * when @empty is given (the message for an empty one); @fn reads each
 * element in order, and the first error stops the walk. */
int read_array(struct ctx *c, json_object *v, const char *path, size_t max, const char *empty,
               each_fn *fn, void *arg)
{
        char p[PATH_LEN];
        int r = need_array(c, v, path, max);

        if (r)
                return r;
        if (empty && json_object_array_length(v) == 0)
                return fail(c, path, "%s", empty);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                path_idx(p, sizeof(p), path, i);
                r = fn(c, json_object_array_get_idx(v, i), p, i, arg);
                if (r)
                        return r;
        }
        return 0;
}

/* ---- text level: syntax errors, duplicate keys ---- */

void line_col(const char *text, size_t off, unsigned int *line, unsigned int *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && text[i]; i++) {
                if (text[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else {
                        (*col)++;
                }
        }
}

/* Skips blanks and comments; returns the offset of the next token. */
size_t skip_blank(const char *s, size_t i, size_t len)
{
        while (i < len) {
                if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
                        i++;
                } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
                        while (i < len && s[i] != '\n')
                                i++;
                } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
                        i += 2;
                        while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
                                i++;
                        i = i + 2 < len ? i + 2 : len;
                } else {
                        break;
                }
        }
        return i;
}

#define SCAN_DEPTH 64

struct scan_key {
        size_t start, len;
        unsigned int level;
};

/*
 * json-c keeps the last of two equal keys in one object without a word; a
 * description with a repeated key is a typo that must not pass. The text has
 * already been parsed, so this scanner only tracks strings, comments and
 * nesting.
 */
int check_duplicate_keys(struct ctx *c, const char *s, size_t len)
{
        struct scan_key *keys = NULL;
        size_t nkeys = 0, cap = 0;
        bool is_obj[SCAN_DEPTH];
        bool expect_key[SCAN_DEPTH];
        unsigned int depth = 0;
        int ret = 0;

        for (size_t i = skip_blank(s, 0, len); i < len; i = skip_blank(s, i, len)) {
                char ch = s[i];

                if (ch == '{' || ch == '[') {
                        if (depth >= SCAN_DEPTH)
                                break; /* json-c refused deeper nesting already */
                        is_obj[depth] = ch == '{';
                        expect_key[depth] = ch == '{';
                        depth++;
                        i++;
                } else if (ch == '}' || ch == ']') {
                        while (nkeys && keys[nkeys - 1].level == depth)
                                nkeys--;
                        if (depth)
                                depth--;
                        i++;
                } else if (ch == ',') {
                        if (depth && is_obj[depth - 1])
                                expect_key[depth - 1] = true;
                        i++;
                } else if (ch == '"' || ch == '\'') {
                        size_t start = ++i;

                        while (i < len && s[i] != ch) {
                                if (s[i] == '\\' && i + 1 < len)
                                        i++;
                                i++;
                        }
                        if (depth && is_obj[depth - 1] && expect_key[depth - 1]) {
                                size_t klen = i - start;

                                expect_key[depth - 1] = false;
                                for (size_t k = nkeys; k-- > 0 && keys[k].level == depth;) {
                                        if (keys[k].len == klen &&
                                            !memcmp(s + keys[k].start, s + start, klen)) {
                                                unsigned int line, col;

                                                line_col(s, start - 1, &line, &col);
                                                ret = fail(c, "",
                                                           "line %u, column %u: key \"%.*s\" "
                                                           "appears twice in one object",
                                                           line, col, (int)klen, s + start);
                                                goto out;
                                        }
                                }
                                if (nkeys == cap) {
                                        struct scan_key *nk;

                                        cap = cap ? cap * 2 : 64;
                                        nk = realloc(keys, cap * sizeof(*nk));
                                        if (!nk) {
                                                ret = -ENOMEM;
                                                goto out;
                                        }
                                        keys = nk;
                                }
                                keys[nkeys].start = start;
                                keys[nkeys].len = klen;
                                keys[nkeys].level = depth;
                                nkeys++;
                        }
                        i++;
                } else {
                        i++;
                }
        }
out:
        free(keys);
        return ret;
}
