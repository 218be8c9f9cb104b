/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cd_config.h - one option's value, of the type wanted, for the write
 * plugins (remote_write, openmetrics). Unlike cf_util_get_*() they log
 * nothing: the caller writes one ERROR line that names the block, the
 * option and the value. Each returns 0, or -1 when the option does not
 * hold exactly one value of that type.
 */
#ifndef PCIESCOPE_CD_CONFIG_H
#define PCIESCOPE_CD_CONFIG_H

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/configfile.h"

int cd_get_double(const oconfig_item_t *ci, double *out);
/* A copy of the string in *out (the old one freed). */
int cd_get_string(const oconfig_item_t *ci, char **out);
/* A boolean, or the strings cf_util_get_boolean() takes ("yes", "off"). */
int cd_get_bool(const oconfig_item_t *ci, bool *out);

#endif
