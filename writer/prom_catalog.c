// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prom_catalog.c - HELP and UNIT of pciescope's metric families (see the
 * header), from metrics/families.spec. Sorted by name: prom_catalog_find()
 * searches it by bisection, and test_om checks the order.
 */
#include "prom_catalog.h"

#include <stdlib.h>
#include <string.h>

static int by_name(const void *key, const void *elem)
{
        return strcmp(key, ((const struct prom_family_doc *)elem)->name);
}

const struct prom_family_doc *prom_catalog_find(const char *name)
{
        return bsearch(name, prom_catalog_table, prom_catalog_table_len,
                       sizeof(prom_catalog_table[0]), by_name);
}

const struct prom_family_doc *prom_catalog_all(size_t *n)
{
        *n = prom_catalog_table_len;
        return prom_catalog_table;
}
