/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cd_series.h - what both write plugins (remote_write, openmetrics) need
 * from a collectd value list to name its series with writer/rw_series:
 * the prom.* meta data, the identity as strings, and the values as
 * doubles. Only the collectd side lives here; the naming is rw_series'.
 */
#ifndef PCIESCOPE_CD_SERIES_H
#define PCIESCOPE_CD_SERIES_H

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

#include "rw_series.h"

#define CD_MAX_META 64

/* A value list's prom.* meta data and identity, ready for
 * rw_series_build(). Strings are malloc'ed; cd_series_free(). */
struct cd_series {
        struct rw_vl vl;
        char *name, *type;
        size_t n;
        char *keys[CD_MAX_META];
        char *values[CD_MAX_META];
        const char *label_names[CD_MAX_META];
        char ident[6 * DATA_MAX_NAME_LEN]; /* host/plugin-inst/type-inst */
};

void cd_series_read(const value_list_t *vl, struct cd_series *s);
void cd_series_free(struct cd_series *s);

/* collectd's identifier of @vl (the key of its "missing" notification). */
void cd_identifier(const value_list_t *vl, char *buf, size_t n);

/* A value of any data source type as a double. */
double cd_value_double(value_t v, int ds_type);

#endif
