/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_registry.h - the series last sent for each collectd identifier, so a
 * stale marker can be sent for exactly those series when collectd reports
 * the identifier missing (its "missing" value list carries no meta data,
 * so the names of meta-named series cannot be rebuilt from it) and at
 * shutdown.
 */
#ifndef PCIESCOPE_RW_REGISTRY_H
#define PCIESCOPE_RW_REGISTRY_H

#include <stddef.h>

struct rw_registry;

struct rw_registry *rw_registry_new(void);
void rw_registry_free(struct rw_registry *r);
/* Remembers packed series `slot` (of nslots) for key; copies it only when
 * it differs from what is stored. 0 or -ENOMEM. */
int rw_registry_note(struct rw_registry *r, const char *key, size_t slot, size_t nslots,
                     const char *series, size_t len);
/* Removes key; hands its slots (NULL where never set) to the caller, who
 * frees each and the array. -ENOENT when unknown. */
int rw_registry_take(struct rw_registry *r, const char *key, char ***slots, size_t *nslots);
/* Removes one entry, any; -ENOENT when empty. */
int rw_registry_take_any(struct rw_registry *r, char ***slots, size_t *nslots);
size_t rw_registry_size(struct rw_registry *r);

#endif
