// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pci_ids_ref.c - see pci_ids_ref.h.
 */
#include "pci_ids_ref.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pci_source.h"

/* Any source will do for names: they come from pci.ids alone. */
#define NO_DUMP "/dev/null"

static int hex4(const char *s, size_t left)
{
        int v = 0;

        if (left < 4)
                return -1;
        for (int i = 0; i < 4; i++) {
                char c = s[i];
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;

                if (d < 0)
                        return -1;
                v = v << 4 | d;
        }
        return v;
}

size_t ids_from_text(const char *text, size_t len, uint32_t *ids, size_t max)
{
        size_t n = 0;
        int vendor = -1;

        for (size_t at = 0; at < len && n < max;) {
                const char *line = text + at, *nl = memchr(line, '\n', len - at);
                size_t left = nl ? (size_t)(nl - line) : len - at;
                int id;

                at += left + 1;
                if (left > 1 && line[0] == '\t' && line[1] != '\t') {
                        id = hex4(line + 1, left - 1);
                        if (vendor >= 0 && id >= 0)
                                ids[n++] = (uint32_t)vendor << 16 | (uint32_t)id;
                } else if (left && line[0] != '\t' && line[0] != '#' && line[0] != ' ' &&
                           line[0] != '\r') {
                        /* A vendor line, or a lettered block (no vendor). */
                        vendor = hex4(line, left);
                        if (vendor >= 0)
                                ids[n++] = (uint32_t)vendor << 16 | 0xffffu;
                }
        }
        return n;
}

static bool open_names(const char *path, struct pci_source **src)
{
        *src = NULL;
        return !pci_source_open_dump(NO_DUMP, src) && !pci_source_set_ids_file(*src, path);
}

enum ids_verdict ids_names_compare(const char *path, const uint32_t *ids, size_t n,
                                   size_t *part_out, char *why, size_t why_size)
{
        struct pci_source *part, *whole;
        enum ids_verdict v = IDS_SAME;
        char pv[128], pd[128], wv[128], wd[128];

        why[0] = '\0';
        if (!open_names(path, &part) || !open_names(path, &whole)) {
                snprintf(why, why_size, "cannot open a source");
                pci_source_close(part);
                pci_source_close(whole);
                return IDS_DIFFER;
        }
        if (pci_source_names_for(part, ids, n)) {
                snprintf(why, why_size, "pci_source_names_for failed");
                v = IDS_DIFFER;
        }
        for (size_t i = 0; i < n && v == IDS_SAME; i++) {
                uint16_t vendor = (uint16_t)(ids[i] >> 16), device = (uint16_t)ids[i];

                pci_source_names(part, vendor, device, pv, sizeof(pv), pd, sizeof(pd));
                pci_source_names(whole, vendor, device, wv, sizeof(wv), wd, sizeof(wd));
                if (pci_source_error(whole)[0]) {
                        snprintf(why, why_size, "%s", pci_source_error(whole));
                        v = IDS_WHOLE_REFUSED;
                        break;
                }
                if (strcmp(pv, wv) || strcmp(pd, wd)) {
                        snprintf(why, why_size,
                                 "%04x:%04x: part \"%s\" \"%s\", whole \"%s\" \"%s\"", vendor,
                                 device, pv, pd, wv, wd);
                        v = IDS_DIFFER;
                }
        }
        if (part_out)
                *part_out = pci_source_names_part(part);
        pci_source_close(part);
        pci_source_close(whole);
        return v;
}
