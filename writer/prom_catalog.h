/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prom_catalog.h - the HELP text and unit of every metric family pciescope
 * publishes, for every output that carries them: the remote_write
 * metadata and the OpenMetrics/Prometheus text page.
 *
 * A family is named as docs/metrics.md names it: the series name, with
 * `_total` for counters and `_info` for info metrics; a histogram by the
 * name without `_bucket`/`_sum`/`_count` (rw_family_name()). The unit is
 * the OpenMetrics unit, always a suffix of the name ("seconds", "bytes",
 * "bytes_per_second", ...), or "" where the value is a plain count.
 * The table is made from metrics/families.spec at build time, as are the
 * tables of docs/metrics.md, so the two cannot disagree.
 */
#ifndef PCIESCOPE_PROM_CATALOG_H
#define PCIESCOPE_PROM_CATALOG_H

#include <stddef.h>

struct prom_family_doc {
        const char *name;
        const char *unit; /* "" when none */
        const char *help; /* one line, no newline */
};

/* One entry per family of metrics/families.spec, sorted by name: made at
 * build time by metrics/gen_families.awk (prom_catalog_table.c). */
extern const struct prom_family_doc prom_catalog_table[];
extern const size_t prom_catalog_table_len;

/* The entry for family @name, or NULL (a family of another plugin). */
const struct prom_family_doc *prom_catalog_find(const char *name);

/* The whole table, sorted by name (for the consistency test). */
const struct prom_family_doc *prom_catalog_all(size_t *n);

#endif
