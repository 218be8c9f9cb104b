// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * openmetrics.c - the collectd `openmetrics` write plugin: a scrape
 * endpoint that keeps every label.
 *
 * collectd's own write_prometheus knows three labels; this plugin names
 * and labels each value exactly as remote_write sends it (the same
 * rw_series_build over the same prom.* meta data), with the HELP and UNIT
 * of writer/prom_catalog, and serves the latest values at /metrics
 * (writer/om_http on writer/om_store). A value list collectd reports
 * missing leaves the page at once; one nobody updated for StalenessDelta
 * seconds leaves it at the next read interval.
 *
 *   <Plugin openmetrics>
 *     Listen "127.0.0.1"
 *     Port "9943"
 *   </Plugin>
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"
#include "collectd/core/daemon/utils_complain.h"

#include <errno.h>
#include <math.h>
#include <strings.h>

#include "cd_config.h"
#include "cd_series.h"
#include "om_http.h"
#include "om_store.h"
#include "rw_series.h"
#include "secret_file.h"

#define PLUGIN_NAME  "openmetrics"
#define DEFAULT_PORT 9943

static struct {
        char *listen, *cert, *key, *user, *password;
        double port, staleness, max_connections, max_per_client, timeout;
        bool config_failed;
        struct om_store *store;
        struct om_http *http;
} g = {.port = DEFAULT_PORT,
       .staleness = 300,
       .max_connections = 128,
       .max_per_client = OM_HTTP_DEFAULT_PER_CLIENT,
       .timeout = 10};

static void http_log(void *ctx, int level, const char *msg)
{
        (void)ctx;
        plugin_log(level, PLUGIN_NAME " plugin: %s", msg);
}

/* ---- configuration ----------------------------------------------------- */

static int config_fail(const oconfig_item_t *ci, const char *why)
{
        char value[256] = "";

        /* Never a password in the log. */
        if (!strcasecmp(ci->key, "BasicAuthPassword"))
                snprintf(value, sizeof(value), " (hidden)");
        else if (ci->values_num >= 1 && ci->values[0].type == OCONFIG_TYPE_STRING)
                snprintf(value, sizeof(value), " \"%s\"", ci->values[0].value.string);
        else if (ci->values_num >= 1 && ci->values[0].type == OCONFIG_TYPE_NUMBER)
                snprintf(value, sizeof(value), " %g", ci->values[0].value.number);
        ERROR(PLUGIN_NAME " plugin: option %s%s: %s", ci->key, value, why);
        g.config_failed = true;
        return -1;
}

/* A number in [min, max], whole where @whole; given as a number or a
 * string ("9943": collectd's Port convention). */
static int get_number(const oconfig_item_t *ci, double *out, double min, double max, bool whole)
{
        double v;
        char *end = NULL;

        if (ci->values_num != 1)
                return config_fail(ci, "want one value");
        if (ci->values[0].type == OCONFIG_TYPE_NUMBER) {
                v = ci->values[0].value.number;
        } else if (ci->values[0].type == OCONFIG_TYPE_STRING) {
                errno = 0;
                v = strtod(ci->values[0].value.string, &end);
                if (end == ci->values[0].value.string || *end || errno)
                        return config_fail(ci, "not a number");
        } else {
                return config_fail(ci, "want a number");
        }
        if (!isfinite(v) || v < min || v > max || (whole && v != floor(v))) {
                char why[128];

                snprintf(why, sizeof(why), "want a %snumber in %g..%g", whole ? "whole " : "", min,
                         max);
                return config_fail(ci, why);
        }
        *out = v;
        return 0;
}

/* The first line of a file (a password), without its line end: a file
 * that is not regular is refused, one others may read is warned about. */
static int read_secret_file(const oconfig_item_t *ci, char **out)
{
        char warn[512], why[512];
        char *secret = NULL;
        int rc;

        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                return config_fail(ci, "want a file name");
        rc = secret_file_read(ci->values[0].value.string, ci->key, SECRET_FILE_MAX, &secret, warn,
                              sizeof(warn), why, sizeof(why));
        if (rc) {
                ERROR(PLUGIN_NAME " plugin: option %s", why);
                g.config_failed = true;
                return -1;
        }
        if (*warn)
                WARNING(PLUGIN_NAME " plugin: option %s", warn);
        secret_free(*out);
        *out = secret;
        return 0;
}

static int om_config(oconfig_item_t *ci)
{
        for (int i = 0; i < ci->children_num; i++) {
                oconfig_item_t *c = &ci->children[i];
                int rc;

                if (!strcasecmp(c->key, "Listen"))
                        rc = cd_get_string(c, &g.listen) ? config_fail(c, "want an address") : 0;
                else if (!strcasecmp(c->key, "Port"))
                        rc = get_number(c, &g.port, 1, 65535, true);
                else if (!strcasecmp(c->key, "StalenessDelta"))
                        rc = get_number(c, &g.staleness, 1, 86400, false);
                else if (!strcasecmp(c->key, "MaxConnections"))
                        rc = get_number(c, &g.max_connections, 1, 10000, true);
                else if (!strcasecmp(c->key, "MaxConnectionsPerClient"))
                        rc = get_number(c, &g.max_per_client, 1, 10000, true);
                else if (!strcasecmp(c->key, "Timeout"))
                        rc = get_number(c, &g.timeout, 1, 3600, true);
                else if (!strcasecmp(c->key, "TLSCertFile"))
                        rc = cd_get_string(c, &g.cert) ? config_fail(c, "want a file name") : 0;
                else if (!strcasecmp(c->key, "TLSKeyFile"))
                        rc = cd_get_string(c, &g.key) ? config_fail(c, "want a file name") : 0;
                else if (!strcasecmp(c->key, "BasicAuthUser"))
                        rc = cd_get_string(c, &g.user) ? config_fail(c, "want a string") : 0;
                else if (!strcasecmp(c->key, "BasicAuthPassword"))
                        rc = cd_get_string(c, &g.password) ? config_fail(c, "want a string") : 0;
                else if (!strcasecmp(c->key, "BasicAuthPasswordFile"))
                        rc = read_secret_file(c, &g.password);
                else
                        rc = config_fail(c, "unknown option (see docs/exporter.md, "
                                            "openmetrics configuration reference)");
                if (rc)
                        return -1;
        }
        if (!g.cert != !g.key)
                return config_fail(ci, "TLSCertFile and TLSKeyFile go together");
        if (!g.user != !g.password)
                return config_fail(ci, "BasicAuthUser goes with BasicAuthPassword or "
                                       "BasicAuthPasswordFile");
        return 0;
}

/* ---- init, write, missing ---------------------------------------------- */

static void free_all(void)
{
        om_http_stop(g.http);
        g.http = NULL;
        om_store_free(g.store);
        g.store = NULL;
        free(g.listen);
        free(g.cert);
        free(g.key);
        free(g.user);
        secret_free(g.password);
        g.listen = g.cert = g.key = g.user = g.password = NULL;
}

static int om_init(void)
{
        struct om_http_cfg cfg = {
            .listen = g.listen,
            .port = (unsigned int)g.port,
            .tls_cert_file = g.cert,
            .tls_key_file = g.key,
            .auth_user = g.user,
            .auth_password = g.password,
            .max_connections = (unsigned int)g.max_connections,
            .max_per_client = (unsigned int)g.max_per_client,
            .timeout_s = (unsigned int)g.timeout,
            .name = "pciescope openmetrics (collectd)",
        };
        char err[512] = "";
        int rc;

        if (g.config_failed) {
                ERROR(PLUGIN_NAME " plugin: not started: the configuration has errors (see "
                                  "above)");
                return -1;
        }
        if (g.http)
                return 0; /* init runs again after a reload */
        g.store = om_store_new();
        if (!g.store)
                return -1;
        rc = om_http_start(&cfg, g.store, http_log, NULL, &g.http, err, sizeof(err));
        if (rc) {
                ERROR(PLUGIN_NAME " plugin: not started: %s", err);
                free_all();
                return -1;
        }
        return 0;
}

static double now_s(void)
{
        return CDTIME_T_TO_DOUBLE(cdtime());
}

static int om_write(const data_set_t *ds, const value_list_t *vl, user_data_t *ud)
{
        struct cd_series m;
        struct rw_labelset set;
        char help[DATA_MAX_NAME_LEN * 4];
        double now = now_s();

        (void)ud;
        if (!g.store || ds->ds_num != vl->values_len)
                return EINVAL;
        cd_series_read(vl, &m);
        for (size_t i = 0; i < ds->ds_num; i++) {
                enum rw_kind kind;
                size_t len;
                char *packed;
                int rc = rw_series_build(&m.vl, ds->ds[i].name, (enum rw_ds_type)ds->ds[i].type,
                                         ds->ds_num, NULL, NULL, &set, &kind);

                if (rc) {
                        static c_complain_t bad = C_COMPLAIN_INIT_STATIC;

                        c_complain(LOG_WARNING, &bad,
                                   PLUGIN_NAME " plugin: %s: cannot be named as a series (%s); "
                                               "such values are skipped",
                                   m.ident, STRERROR(-rc));
                        continue;
                }
                packed = rw_series_pack(&set, kind, &len);
                if (!packed)
                        continue;
                /* Families prom_catalog does not know (other plugins'):
                 * say where they come from, as write_prometheus does. */
                snprintf(help, sizeof(help), "collectd %s plugin, type %s, data source %s (%s)",
                         vl->plugin, vl->type, ds->ds[i].name, DS_TYPE_TO_STRING(ds->ds[i].type));
                rc = om_store_put(g.store, m.ident, packed, len,
                                  cd_value_double(vl->values[i], ds->ds[i].type), now, help);
                free(packed);
                if (rc) {
                        static c_complain_t nomem = C_COMPLAIN_INIT_STATIC;

                        c_complain(LOG_ERR, &nomem, PLUGIN_NAME " plugin: %s: %s", m.ident,
                                   STRERROR(-rc));
                }
        }
        cd_series_free(&m);
        return 0;
}

static int om_missing(const value_list_t *vl, user_data_t *ud)
{
        char key[6 * DATA_MAX_NAME_LEN];

        (void)ud;
        if (!g.store)
                return 0;
        cd_identifier(vl, key, sizeof(key));
        om_store_drop(g.store, key, INFINITY);
        return 0;
}

/* Each interval: what nobody updated for StalenessDelta leaves the page
 * (a value list whose plugin stopped without collectd noticing). */
static int om_read(void)
{
        if (g.store)
                om_store_expire(g.store, now_s() - g.staleness);
        return 0;
}

static int om_shutdown(void)
{
        if (g.http) {
                struct om_http_stats s;

                om_http_stats(g.http, &s);
                INFO(PLUGIN_NAME
                     " plugin: served %" PRIu64 " pages; refused %" PRIu64
                     " unknown paths, %" PRIu64 " other methods, %" PRIu64
                     " without credentials, %" PRIu64 " with bad framing headers, %" PRIu64
                     " connections past a limit; dropped %" PRIu64 " past their Timeout",
                     s.pages, s.not_found, s.bad_method, s.unauthorized, s.bad_request, s.refused,
                     s.timed_out);
        }
        free_all();
        return 0;
}

void module_register(void)
{
        plugin_register_complex_config(PLUGIN_NAME, om_config);
        plugin_register_init(PLUGIN_NAME, om_init);
        plugin_register_write(PLUGIN_NAME, om_write, NULL);
        plugin_register_missing(PLUGIN_NAME, om_missing, NULL);
        plugin_register_read(PLUGIN_NAME, om_read);
        plugin_register_shutdown(PLUGIN_NAME, om_shutdown);
}
