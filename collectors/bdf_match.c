// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bdf_match.c - BDF patterns for Device/IgnoreDevice options.
 */
#include "bdf_match.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest value and printed width of each field. */
static const struct {
        unsigned long max;
        int width;
} fields[4] = {{0xffffffffu, 4}, {0xff, 2}, {0x1f, 2}, {0x7, 1}};

static bool has_wildcard(const char *s)
{
        return strpbrk(s, "*?") != NULL;
}

static int compile_field(const char *start, size_t len, int idx, char *out)
{
        if (!len || len > 8)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                char c = (char)tolower((unsigned char)start[i]);

                if (!isxdigit((unsigned char)c) && c != '*' && c != '?')
                        return -EINVAL;
                out[i] = c;
        }
        out[len] = '\0';
        if (!has_wildcard(out) && strtoul(out, NULL, 16) > fields[idx].max)
                return -EINVAL;
        return 0;
}

int bdf_pattern_compile(const char *text, struct bdf_pattern *out)
{
        const char *colon1 = strchr(text, ':');
        const char *colon2 = colon1 ? strchr(colon1 + 1, ':') : NULL;
        const char *dot = strrchr(text, '.');
        const char *bus_start;
        int err;

        memset(out, 0, sizeof(*out));
        if (!colon1 || !dot || dot < colon1 ||
            (colon2 && (dot < colon2 || strchr(colon2 + 1, ':'))))
                return -EINVAL;
        if (colon2) {
                err = compile_field(text, (size_t)(colon1 - text), 0, out->field[0]);
                if (err)
                        return err;
                bus_start = colon1 + 1;
                colon1 = colon2;
        } else {
                strcpy(out->field[0], "*");
                bus_start = text;
        }
        err = compile_field(bus_start, (size_t)(colon1 - bus_start), 1, out->field[1]);
        if (!err)
                err = compile_field(colon1 + 1, (size_t)(dot - colon1 - 1), 2, out->field[2]);
        if (!err)
                err = compile_field(dot + 1, strlen(dot + 1), 3, out->field[3]);
        return err;
}

static bool field_match(const char *pat, int idx, unsigned long value)
{
        char text[16];

        if (!has_wildcard(pat))
                return strtoul(pat, NULL, 16) == value;
        snprintf(text, sizeof(text), "%0*lx", fields[idx].width, value);
        return fnmatch(pat, text, 0) == 0;
}

bool bdf_pattern_match(const struct bdf_pattern *pat, const struct pci_addr *addr)
{
        return field_match(pat->field[0], 0, addr->domain) &&
               field_match(pat->field[1], 1, addr->bus) &&
               field_match(pat->field[2], 2, addr->dev) &&
               field_match(pat->field[3], 3, addr->func);
}

int bdf_filter_add(struct bdf_filter *f, const char *text, bool exclude)
{
        struct bdf_pattern pat, **list = exclude ? &f->exclude : &f->include;
        unsigned int *count = exclude ? &f->exclude_count : &f->include_count;
        struct bdf_pattern *grown;
        int err = bdf_pattern_compile(text, &pat);

        if (err)
                return err;
        grown = realloc(*list, (*count + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        grown[*count] = pat;
        *list = grown;
        (*count)++;
        return 0;
}

bool bdf_filter_selects(const struct bdf_filter *f, const struct pci_addr *addr)
{
        bool included = f->include_count == 0;

        for (unsigned int i = 0; i < f->include_count && !included; i++)
                included = bdf_pattern_match(&f->include[i], addr);
        if (!included)
                return false;
        for (unsigned int i = 0; i < f->exclude_count; i++)
                if (bdf_pattern_match(&f->exclude[i], addr))
                        return false;
        return true;
}

void bdf_filter_clear(struct bdf_filter *f)
{
        free(f->include);
        free(f->exclude);
        memset(f, 0, sizeof(*f));
}
