// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cd_series.c - collectd value lists for writer/rw_series (see the header).
 */
#include "cd_series.h"

void cd_identifier(const value_list_t *vl, char *buf, size_t n)
{
        snprintf(buf, n, "%s/%s-%s/%s-%s", vl->host, vl->plugin, vl->plugin_instance, vl->type,
                 vl->type_instance);
}

void cd_series_read(const value_list_t *vl, struct cd_series *s)
{
        char **toc = NULL;
        int n = 0;

        memset(s, 0, sizeof(*s));
        if (vl->meta)
                n = meta_data_toc(vl->meta, &toc);
        for (int i = 0; i < n; i++) {
                const char *k = toc[i];

                if (meta_data_type(vl->meta, k) != MD_TYPE_STRING)
                        ;
                else if (!strcmp(k, "prom.name"))
                        meta_data_get_string(vl->meta, k, &s->name);
                else if (!strcmp(k, "prom.type"))
                        meta_data_get_string(vl->meta, k, &s->type);
                else if (!strncmp(k, "prom.label.", 11) && s->n < CD_MAX_META &&
                         meta_data_get_string(vl->meta, k, &s->values[s->n]) == 0) {
                        s->keys[s->n] = toc[i];
                        s->label_names[s->n] = toc[i] + 11;
                        toc[i] = NULL; /* kept in keys */
                        s->n++;
                }
                free(toc[i]);
        }
        free(toc);
        s->vl = (struct rw_vl){
            .host = vl->host,
            .plugin = vl->plugin,
            .plugin_instance = vl->plugin_instance,
            .type = vl->type,
            .type_instance = vl->type_instance,
            .prom_name = s->name,
            .prom_type = s->type,
            .n_meta = s->n,
            .meta_names = s->label_names,
            .meta_values = (const char *const *)s->values,
        };
        cd_identifier(vl, s->ident, sizeof(s->ident));
}

void cd_series_free(struct cd_series *s)
{
        free(s->name);
        free(s->type);
        for (size_t i = 0; i < s->n; i++) {
                free(s->keys[i]);
                free(s->values[i]);
        }
}

double cd_value_double(value_t v, int ds_type)
{
        switch (ds_type) {
        case DS_TYPE_COUNTER:
                return (double)v.counter;
        case DS_TYPE_DERIVE:
                return (double)v.derive;
        case DS_TYPE_ABSOLUTE:
                return (double)v.absolute;
        default:
                return v.gauge;
        }
}
