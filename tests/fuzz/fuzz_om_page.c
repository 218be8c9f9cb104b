// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_om_page.c - libFuzzer target: the scrape page on any input. The
 * first line is a scraper's Accept header (om_negotiate); each further
 * line "KIND NAME VALUE LABEL=VALUE..." puts a series (named by
 * rw_series_build from prom.* meta data, as the plugin names them, through
 * rw_series_named, as the exporter names them; a label value may hold any
 * byte but NUL) into a store, which renders both formats.
 *
 * Invariants (a violation traps): every line of a page is valid UTF-8 and
 * a comment or a sample starting with a metric name, there are no more
 * sample lines than series (some are left out for a family conflict),
 * and an OpenMetrics page ends with "# EOF".
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "om_store.h"
#include "rw_series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An implementation of its own, not the writer's: RFC 3629 by its table. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                unsigned char c = s[i];
                size_t len = c < 0x80         ? 1
                             : (c >> 5) == 6  ? 2
                             : (c >> 4) == 14 ? 3
                             : (c >> 3) == 30 ? 4
                                              : 0;
                uint32_t cp;

                if (!len || i + len > n)
                        return false;
                cp = len == 1 ? c : c & (0x7f >> len);
                for (size_t k = 1; k < len; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (s[i + k] & 0x3f);
                }
                if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += len;
        }
        return true;
}

/* Checks one page; returns its number of sample lines. */
static size_t check_page(const struct om_page *p, enum om_format f)
{
        size_t samples = 0;
        const char *s = p->data, *end = p->data + p->len;

        if (f == OM_FORMAT_OPENMETRICS && (p->len < 6 || memcmp(end - 6, "# EOF\n", 6)))
                __builtin_trap();
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));

                if (!nl)
                        __builtin_trap(); /* every line ends */
                if (!valid_utf8((const unsigned char *)s, (size_t)(nl - s)))
                        __builtin_trap();
                if (*s != '#') {
                        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
                              *s == ':'))
                                __builtin_trap();
                        samples++;
                }
                s = nl + 1;
        }
        return samples;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* One store for every input, as the plugin's lives for the daemon:
         * each input ends with om_store_drop emptying it (checked below), so
         * the next one starts from an empty store that has been used. */
        static struct om_store *st;
        char *in = malloc(size + 1), *line, *save = NULL, *accept;
        size_t n = 0;

        if (!st)
                st = om_store_new();
        if (!in || !st)
                goto out;
        memcpy(in, data, size);
        in[size] = '\0';
        accept = strtok_r(in, "\n", &save);
        if (accept)
                (void)om_negotiate(accept);
        while ((line = strtok_r(NULL, "\n", &save)) && n < 200) {
                static const char *const kinds[] = {"gauge", "counter", "info", "histogram", NULL};
                const char *names[16], *values[16];
                struct rw_vl vl = {.host = "h",
                                   .plugin = "p",
                                   .type = "t",
                                   .meta_names = names,
                                   .meta_values = values};
                struct rw_labelset set;
                enum rw_kind kind;
                char *w, *s2 = NULL, *k = strtok_r(line, " ", &s2), *value;
                size_t len;
                char *packed;

                vl.prom_name = strtok_r(NULL, " ", &s2);
                value = strtok_r(NULL, " ", &s2);
                if (!k || !vl.prom_name || !value)
                        continue;
                vl.prom_type = kinds[(unsigned char)*k % 5];
                while ((w = strtok_r(NULL, " ", &s2)) && vl.n_meta < 16) {
                        char *eq = strchr(w, '=');

                        if (eq) {
                                *eq = '\0';
                                names[vl.n_meta] = w;
                                values[vl.n_meta++] = eq + 1;
                        }
                }
                /* As the plugin and the exporter name a sample. */
                if (rw_series_build(&vl, "value", RW_DS_GAUGE, 1, NULL, NULL, &set, &kind))
                        continue;
                packed = rw_series_pack(&set, kind, &len);
                if (packed && om_store_put(st, "src", packed, len, strtod(value, NULL), 1,
                                           *k & 1 ? "help \"x\"\\" : NULL) == 0)
                        n++;
                free(packed);
        }
        for (int f = 0; f < 2; f++) {
                const struct om_page *p = om_store_page(st, (enum om_format)f);

                if (!p)
                        continue;
                if (check_page(p, (enum om_format)f) > om_store_size(st))
                        __builtin_trap();
                om_page_release(p);
        }
        if (om_store_size(st) > n) /* a series put twice is one */
                __builtin_trap();
        om_store_drop(st, "src", INFINITY);
        if (om_store_size(st) != 0)
                __builtin_trap();
out:
        free(in);
        return 0;
}
