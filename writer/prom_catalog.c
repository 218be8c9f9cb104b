// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prom_catalog.c - HELP and UNIT of pciescope's metric families (see the
 * header), from metrics/families.spec. Sorted by name: prom_catalog_find()
 * searches it by bisection, and test_om checks the order.
 */
#include "prom_catalog.h"

#include <stdlib.h>
#include <string.h>

/* One entry per family of metrics/families.spec, sorted by name: made at
 * build time by metrics/gen_families.awk. */
static const struct prom_family_doc catalog[] = {
#include "prom_catalog_table.h"
};

static int by_name(const void *key, const void *elem)
{
        return strcmp(key, ((const struct prom_family_doc *)elem)->name);
}

const struct prom_family_doc *prom_catalog_find(const char *name)
{
        return bsearch(name, catalog, sizeof(catalog) / sizeof(catalog[0]), sizeof(catalog[0]),
                       by_name);
}

const struct prom_family_doc *prom_catalog_all(size_t *n)
{
        *n = sizeof(catalog) / sizeof(catalog[0]);
        return catalog;
}
