// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cd_config.c - value getters for the write plugins' configuration (see
 * the header).
 */
#include "cd_config.h"

#include <strings.h>

int cd_get_double(const oconfig_item_t *ci, double *out)
{
        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_NUMBER)
                return -1;
        *out = ci->values[0].value.number;
        return 0;
}

int cd_get_string(const oconfig_item_t *ci, char **out)
{
        char *s;

        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                return -1;
        s = strdup(ci->values[0].value.string);
        if (!s)
                return -1;
        free(*out);
        *out = s;
        return 0;
}

int cd_get_bool(const oconfig_item_t *ci, bool *out)
{
        const char *v;

        if (ci->values_num != 1)
                return -1;
        if (ci->values[0].type == OCONFIG_TYPE_BOOLEAN) {
                *out = ci->values[0].value.boolean;
                return 0;
        }
        if (ci->values[0].type != OCONFIG_TYPE_STRING)
                return -1;
        /* What cf_util_get_boolean() accepts as strings. */
        v = ci->values[0].value.string;
        if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on")) {
                *out = true;
                return 0;
        }
        if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off")) {
                *out = false;
                return 0;
        }
        return -1;
}
