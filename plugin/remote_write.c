// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * remote_write.c - the collectd `remote_write` plugin: configuration, the
 * write/flush/missing/shutdown callbacks and the self-metrics.
 *
 * Everything else is in writer/ (no collectd there): rw_series names and
 * labels a value list, rw_endpoint queues, spools and sends. This file only
 * maps collectd's types onto theirs. Write callbacks run on several collectd
 * threads at once; all they do is build the series and push them into each
 * endpoint's bounded queue, which never blocks for long.
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"
#include "collectd/core/daemon/utils_complain.h"

#include <errno.h>
#include <stdarg.h>
#include <strings.h>

#include "cd_config.h"
#include "cd_series.h"
#include "rw_encode.h"
#include "rw_endpoint.h"
#include "rw_http.h"
#include "rw_pace.h"
#include "rw_registry.h"
#include "rw_series.h"

#define PLUGIN_NAME "remote_write"

struct ep_conf {
        struct rw_endpoint_cfg cfg;
        /* Separately allocated: a label set points into its own arena, and
         * the array of endpoints moves when it grows. */
        struct rw_labelset *external;
        struct rw_rules *rules;
        struct rw_endpoint *ep; /* after init */
};

static struct {
        struct ep_conf *eps;
        size_t n;
        bool config_failed;
        bool self_metrics;
        bool stale_on_shutdown;
        struct rw_registry *registry;
} g = {.self_metrics = true, .stale_on_shutdown = true};

static void writer_log(void *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void writer_log(void *ctx, int level, const char *fmt, ...)
{
        char msg[2048];
        va_list ap;

        (void)ctx;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        plugin_log(level, "%s", msg);
}

/* ---- configuration ----------------------------------------------------- */

static int config_fail(const oconfig_item_t *ci, const char *endpoint, const char *why)
{
        char value[256] = "", url[200];

        /* Never a password in the log: a URL's user information is hidden,
         * in URL and in any value that looks like a URL (a misspelt key). */
        if (ci->values_num >= 1 && ci->values[0].type == OCONFIG_TYPE_STRING) {
                const char *v = ci->values[0].value.string;

                if (!strcasecmp(ci->key, "URL") || strstr(v, "://"))
                        v = rw_redact_url(v, url, sizeof(url));
                snprintf(value, sizeof(value), " \"%s\"", v);
        } else if (ci->values_num >= 1 && ci->values[0].type == OCONFIG_TYPE_NUMBER)
                snprintf(value, sizeof(value), " %g", ci->values[0].value.number);
        ERROR(PLUGIN_NAME " plugin: Endpoint \"%s\": option %s%s: %s", endpoint, ci->key, value,
              why);
        g.config_failed = true;
        return -1;
}

static int two_strings(const oconfig_item_t *ci, const char **a, const char **b)
{
        if (ci->values_num != 2 || ci->values[0].type != OCONFIG_TYPE_STRING ||
            ci->values[1].type != OCONFIG_TYPE_STRING)
                return -1;
        *a = ci->values[0].value.string;
        *b = ci->values[1].value.string;
        return 0;
}

static int get_size(const oconfig_item_t *ci, size_t *out, double min, double max)
{
        double d;

        /* Range first: converting a negative or huge double is undefined. */
        if (cd_get_double(ci, &d) || !(d >= min && d <= max) || d != (double)(uint64_t)d)
                return -1;
        *out = (size_t)d;
        return 0;
}

static int get_seconds(const oconfig_item_t *ci, double *out)
{
        double d;

        if (cd_get_double(ci, &d) || !(d >= 0))
                return -1;
        *out = d;
        return 0;
}

static int endpoint_option(struct ep_conf *e, oconfig_item_t *c)
{
        struct rw_endpoint_cfg *cfg = &e->cfg;
        const char *name = cfg->name;
        const char *a, *b;
        char err[256];
        int rc;

        if (!strcasecmp(c->key, "URL"))
                return cd_get_string(c, &cfg->url) ? config_fail(c, name, "want a string") : 0;
        if (!strcasecmp(c->key, "Timeout"))
                return get_seconds(c, &cfg->timeout) ? config_fail(c, name, "want seconds") : 0;
        if (!strcasecmp(c->key, "BasicAuth")) {
                if (two_strings(c, &a, &b))
                        return config_fail(c, name, "want a user name and a password file");
                /* Given twice: the last one counts (no leak). */
                free(cfg->user);
                free(cfg->password_file);
                cfg->user = strdup(a);
                cfg->password_file = strdup(b);
                return cfg->user && cfg->password_file ? 0 : config_fail(c, name, "out of memory");
        }
        if (!strcasecmp(c->key, "BearerTokenFile"))
                return cd_get_string(c, &cfg->bearer_token_file)
                           ? config_fail(c, name, "want a file name")
                           : 0;
        if (!strcasecmp(c->key, "Header")) {
                char **grown = realloc(cfg->headers, (cfg->n_headers + 1) * sizeof(*grown));

                if (!grown)
                        return config_fail(c, name, "out of memory");
                cfg->headers = grown;
                grown[cfg->n_headers] = NULL;
                if (cd_get_string(c, &grown[cfg->n_headers]))
                        return config_fail(c, name, "want \"Name: value\"");
                cfg->n_headers++;
                return 0;
        }
        if (!strcasecmp(c->key, "CACert"))
                return cd_get_string(c, &cfg->cacert) ? config_fail(c, name, "want a file") : 0;
        if (!strcasecmp(c->key, "ClientCert"))
                return cd_get_string(c, &cfg->client_cert) ? config_fail(c, name, "want a file")
                                                           : 0;
        if (!strcasecmp(c->key, "ClientKey"))
                return cd_get_string(c, &cfg->client_key) ? config_fail(c, name, "want a file") : 0;
        if (!strcasecmp(c->key, "VerifyPeer"))
                return cd_get_bool(c, &cfg->verify_peer) ? config_fail(c, name, "want a boolean")
                                                         : 0;
        if (!strcasecmp(c->key, "MaxSamplesPerSend"))
                return get_size(c, &cfg->max_samples_per_send, 1, 1e6)
                           ? config_fail(c, name, "want an integer 1..1000000")
                           : 0;
        if (!strcasecmp(c->key, "BatchDeadline"))
                return get_seconds(c, &cfg->batch_deadline) ? config_fail(c, name, "want seconds")
                                                            : 0;
        if (!strcasecmp(c->key, "QueueCapacity"))
                return get_size(c, &cfg->queue_capacity, 1, 1e8)
                           ? config_fail(c, name, "want an integer 1..100000000")
                           : 0;
        if (!strcasecmp(c->key, "SendPhase"))
                return cd_get_bool(c, &cfg->send_phase) ? config_fail(c, name, "want a boolean")
                                                        : 0;
        if (!strcasecmp(c->key, "ReplayShare")) {
                double d;

                if (cd_get_double(c, &d) || !(d >= 0 && d <= RW_REPLAY_SHARE_MAX))
                        return config_fail(c, name, "want a number from 0 (no limit) to 1000");
                cfg->replay_share = d;
                return 0;
        }
        if (!strcasecmp(c->key, "MinBackoff"))
                return get_seconds(c, &cfg->min_backoff) ? config_fail(c, name, "want seconds") : 0;
        if (!strcasecmp(c->key, "MaxBackoff"))
                return get_seconds(c, &cfg->max_backoff) ? config_fail(c, name, "want seconds") : 0;
        if (!strcasecmp(c->key, "RetryAfterMax"))
                return get_seconds(c, &cfg->retry_after_max) ? config_fail(c, name, "want seconds")
                                                             : 0;
        if (!strcasecmp(c->key, "Retry429"))
                return cd_get_bool(c, &cfg->retry429) ? config_fail(c, name, "want a boolean") : 0;
        if (!strcasecmp(c->key, "SpoolDir"))
                return cd_get_string(c, &cfg->spool_dir) ? config_fail(c, name, "want a directory")
                                                         : 0;
        if (!strcasecmp(c->key, "SpoolMaxBytes")) {
                size_t v;

                if (get_size(c, &v, 1 << 20, 1e15))
                        return config_fail(c, name, "want bytes, at least 1048576");
                cfg->spool_max_bytes = v;
                return 0;
        }
        if (!strcasecmp(c->key, "SpoolMaxAge"))
                return get_seconds(c, &cfg->spool_max_age) ? config_fail(c, name, "want seconds")
                                                           : 0;
        if (!strcasecmp(c->key, "SpoolFsync"))
                return cd_get_bool(c, &cfg->spool_fsync) ? config_fail(c, name, "want a boolean")
                                                         : 0;
        if (!strcasecmp(c->key, "SendMetadata"))
                return cd_get_bool(c, &cfg->metadata) ? config_fail(c, name, "want a boolean") : 0;
        if (!strcasecmp(c->key, "ExternalLabel")) {
                if (two_strings(c, &a, &b))
                        return config_fail(c, name, "want a label name and a value");
                if (!rw_valid_name(a, false) || !strncmp(a, "__", 2))
                        return config_fail(c, name, "not a valid label name");
                if (rw_labelset_add(e->external, a, b))
                        return config_fail(c, name, "too many or too long external labels");
                return 0;
        }
        if (!strcasecmp(c->key, "RenameMetric") || !strcasecmp(c->key, "RenameLabel")) {
                bool metric = !strcasecmp(c->key, "RenameMetric");

                if (two_strings(c, &a, &b))
                        return config_fail(c, name, "want the old and the new name");
                rc = metric ? rw_rules_rename_metric(e->rules, a, b)
                            : rw_rules_rename_label(e->rules, a, b);
                return rc ? config_fail(c, name, "not valid (reserved or invalid name)") : 0;
        }
        if (!strcasecmp(c->key, "DropMetric")) {
                if (c->values_num != 1 || c->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(c, name, "want a regular expression");
                err[0] = '\0';
                if (rw_rules_drop_metric(e->rules, c->values[0].value.string, err, sizeof(err)))
                        return config_fail(c, name, err[0] ? err : "bad regular expression");
                return 0;
        }
        if (!strcasecmp(c->key, "DropLabel")) {
                if (c->values_num != 1 || c->values[0].type != OCONFIG_TYPE_STRING ||
                    rw_rules_drop_label(e->rules, c->values[0].value.string))
                        return config_fail(c, name, "want a valid label name");
                return 0;
        }
        return config_fail(c, name, "unknown option");
}

static int config_endpoint(oconfig_item_t *ci)
{
        struct ep_conf *grown, *e;

        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING ||
            !*ci->values[0].value.string) {
                ERROR(PLUGIN_NAME " plugin: <Endpoint> needs one name: <Endpoint \"name\">");
                g.config_failed = true;
                return -1;
        }
        for (size_t i = 0; i < g.n; i++)
                if (!strcmp(g.eps[i].cfg.name, ci->values[0].value.string)) {
                        ERROR(PLUGIN_NAME " plugin: Endpoint \"%s\" is configured twice",
                              ci->values[0].value.string);
                        g.config_failed = true;
                        return -1;
                }
        grown = realloc(g.eps, (g.n + 1) * sizeof(*grown));
        if (!grown)
                return -1;
        g.eps = grown;
        e = &g.eps[g.n++];
        memset(e, 0, sizeof(*e));
        rw_endpoint_cfg_init(&e->cfg);
        e->cfg.name = strdup(ci->values[0].value.string);
        e->rules = rw_rules_new();
        e->external = malloc(sizeof(*e->external));
        if (!e->cfg.name || !e->rules || !e->external)
                return -1;
        rw_labelset_init(e->external);
        for (int i = 0; i < ci->children_num; i++)
                if (endpoint_option(e, &ci->children[i]))
                        return -1;
        return 0;
}

static int rw_config(oconfig_item_t *ci)
{
        for (int i = 0; i < ci->children_num; i++) {
                oconfig_item_t *c = &ci->children[i];
                int rc;

                if (!strcasecmp(c->key, "Endpoint"))
                        rc = config_endpoint(c);
                else if (!strcasecmp(c->key, "SelfMetrics"))
                        rc = cd_get_bool(c, &g.self_metrics);
                else if (!strcasecmp(c->key, "StaleOnShutdown"))
                        rc = cd_get_bool(c, &g.stale_on_shutdown);
                else {
                        ERROR(PLUGIN_NAME " plugin: unknown option %s (want Endpoint, "
                                          "SelfMetrics or StaleOnShutdown)",
                              c->key);
                        g.config_failed = true;
                        return -1;
                }
                if (rc) {
                        if (strcasecmp(c->key, "Endpoint"))
                                ERROR(PLUGIN_NAME " plugin: option %s: want a boolean", c->key);
                        g.config_failed = true;
                        return -1;
                }
        }
        return 0;
}

/* ---- init and shutdown ------------------------------------------------- */

static void free_confs(void)
{
        /* All endpoints flush at once: the shutdown takes one Timeout. */
        for (size_t i = 0; i < g.n; i++)
                rw_endpoint_begin_stop(g.eps[i].ep);
        for (size_t i = 0; i < g.n; i++) {
                if (g.eps[i].ep)
                        rw_endpoint_stop(g.eps[i].ep); /* owns and frees cfg */
                else
                        rw_endpoint_cfg_free(&g.eps[i].cfg);
                rw_rules_free(g.eps[i].rules);
                free(g.eps[i].external);
        }
        free(g.eps);
        g.eps = NULL;
        g.n = 0;
        rw_registry_free(g.registry);
        g.registry = NULL;
}

static int rw_init(void)
{
        size_t started = 0;

        if (g.config_failed) {
                ERROR(PLUGIN_NAME " plugin: not started: the configuration has errors (see above)");
                free_confs();
                return -1;
        }
        if (g.n == 0) {
                ERROR(PLUGIN_NAME " plugin: no <Endpoint> configured");
                return -1;
        }
        g.registry = rw_registry_new();
        if (!g.registry)
                return -1;
        for (size_t i = 0; i < g.n; i++) {
                struct ep_conf *e = &g.eps[i];
                char err[512] = "";
                int rc;

                /* The send phase and the jitter's seed come from the
                 * host's name (collectd's Hostname), so a restart keeps
                 * the phase and a fleet spreads. */
                if (!e->cfg.host && hostname_g)
                        e->cfg.host = strdup(hostname_g);
                rc = rw_endpoint_new(&e->cfg, "pciescope-remote-write/" PCIESCOPE_VERSION,
                                     writer_log, NULL, &e->ep, err, sizeof(err));

                /* One endpoint that cannot start (a credential file gone,
                 * ...) is logged and left out; the others run. */
                if (rc) {
                        ERROR(PLUGIN_NAME " plugin: Endpoint \"%s\": %s; this endpoint does not "
                                          "run",
                              e->cfg.name, err);
                        e->ep = NULL;
                        continue;
                }
                /* The endpoint owns the strings now. */
                memset(&e->cfg, 0, sizeof(e->cfg));
                rc = rw_endpoint_start(e->ep);
                if (rc) {
                        ERROR(PLUGIN_NAME " plugin: Endpoint \"%s\": cannot start the sender: %s; "
                                          "this endpoint does not run",
                              rw_endpoint_name(e->ep), STRERROR(-rc));
                        rw_endpoint_stop(e->ep);
                        e->ep = NULL;
                        continue;
                }
                started++;
        }
        if (!started) {
                ERROR(PLUGIN_NAME " plugin: not started: no endpoint could start (see above)");
                free_confs();
                return -1;
        }
        if (started < g.n)
                INFO(PLUGIN_NAME " plugin: %zu endpoint(s) started, %zu could not (see above)",
                     started, g.n - started);
        else
                INFO(PLUGIN_NAME " plugin: %zu endpoint(s) started", started);
        return 0;
}

/* ---- write, missing ---------------------------------------------------- */

static int rw_write(const data_set_t *ds, const value_list_t *vl, user_data_t *ud)
{
        struct rw_labelset set;
        struct cd_series m;
        int64_t ts = (int64_t)CDTIME_T_TO_MS(vl->time);

        (void)ud;
        if (ds->ds_num != vl->values_len)
                return EINVAL;
        cd_series_read(vl, &m);
        for (size_t e = 0; e < g.n; e++) {
                if (!g.eps[e].ep)
                        continue; /* could not start */
                for (size_t i = 0; i < ds->ds_num; i++) {
                        enum rw_kind kind;
                        struct rw_sample s;
                        size_t len;
                        int rc = rw_series_build(&m.vl, ds->ds[i].name,
                                                 (enum rw_ds_type)ds->ds[i].type, ds->ds_num,
                                                 g.eps[e].external, g.eps[e].rules, &set, &kind);

                        if (rc == 1)
                                continue; /* dropped by a rule */
                        if (rc) {
                                static c_complain_t bad = C_COMPLAIN_INIT_STATIC;

                                c_complain(LOG_WARNING, &bad,
                                           PLUGIN_NAME " plugin: %s: cannot be named as a "
                                                       "series (%s); such values are skipped",
                                           m.ident, STRERROR(-rc));
                                continue;
                        }
                        s.series = rw_series_pack(&set, kind, &len);
                        if (!s.series)
                                continue;
                        s.value = cd_value_double(vl->values[i], ds->ds[i].type);
                        s.ts_ms = ts;
                        rw_registry_note(g.registry, m.ident, e * ds->ds_num + i, g.n * ds->ds_num,
                                         s.series, len);
                        rw_endpoint_push(g.eps[e].ep, &s);
                }
        }
        cd_series_free(&m);
        return 0;
}

/* Sends the stale marker for each series of one identifier. */
static void send_stale(char **slots, size_t nslots, int64_t ts)
{
        size_t per_ep = g.n ? nslots / g.n : 0;

        for (size_t i = 0; i < nslots; i++) {
                struct rw_sample s = {.series = slots[i], .value = rw_stale_nan(), .ts_ms = ts};

                if (slots[i] && per_ep && g.eps[i / per_ep].ep)
                        rw_endpoint_push(g.eps[i / per_ep].ep, &s); /* takes the series */
                else
                        free(slots[i]);
        }
        free(slots);
}

static int rw_missing(const value_list_t *vl, user_data_t *ud)
{
        char key[6 * DATA_MAX_NAME_LEN];
        char **slots;
        size_t n;

        (void)ud;
        if (!g.registry)
                return 0;
        cd_identifier(vl, key, sizeof(key));
        /* 1 ms after the series' last value (collectd passes its time), not
         * now: collectd judges a series missing by its cache, which a value
         * still in its write queue has not reached yet. Stamped now, the
         * marker would come before that value, and Prometheus refuses the
         * value as out of order, with every other sample of its request. */
        if (rw_registry_take(g.registry, key, &slots, &n) == 0)
                send_stale(slots, n,
                           vl->time ? (int64_t)CDTIME_T_TO_MS(vl->time) + 1
                                    : (int64_t)CDTIME_T_TO_MS(cdtime()));
        return 0;
}

static int rw_flush(cdtime_t timeout, const char *ident, user_data_t *ud)
{
        (void)timeout;
        (void)ident;
        (void)ud;
        for (size_t i = 0; i < g.n; i++)
                if (g.eps[i].ep)
                        rw_endpoint_flush(g.eps[i].ep);
        return 0;
}

static int rw_shutdown(void)
{
        char **slots;
        size_t n;

        if (g.registry && g.stale_on_shutdown) {
                int64_t now = (int64_t)CDTIME_T_TO_MS(cdtime());

                while (rw_registry_take_any(g.registry, &slots, &n) == 0)
                        send_stale(slots, n, now);
        }
        free_confs();
        return 0;
}

/* ---- self-metrics ------------------------------------------------------ */

static void dispatch_self(const char *endpoint, const char *type, const char *type_instance,
                          const char *prom_name, const char *prom_type, const char *reason,
                          value_t v)
{
        value_list_t vl = VALUE_LIST_INIT;

        vl.values = &v;
        vl.values_len = 1;
        sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
        sstrncpy(vl.plugin_instance, endpoint, sizeof(vl.plugin_instance));
        sstrncpy(vl.type, type, sizeof(vl.type));
        sstrncpy(vl.type_instance, type_instance, sizeof(vl.type_instance));
        vl.meta = meta_data_create();
        if (vl.meta) {
                meta_data_add_string(vl.meta, "prom.name", prom_name);
                meta_data_add_string(vl.meta, "prom.type", prom_type);
                meta_data_add_string(vl.meta, "prom.label.endpoint", endpoint);
                if (reason)
                        meta_data_add_string(vl.meta, "prom.label.reason", reason);
        }
        plugin_dispatch_values(&vl);
        meta_data_destroy(vl.meta);
}

static void counter(const char *ep, const char *ti, const char *name, uint64_t v)
{
        dispatch_self(ep, "derive", ti, name, "counter", NULL, (value_t){.derive = (derive_t)v});
}

static void gauge(const char *ep, const char *ti, const char *name, double v)
{
        dispatch_self(ep, "gauge", ti, name, "gauge", NULL, (value_t){.gauge = v});
}

static int rw_read(void)
{
        for (size_t i = 0; i < g.n; i++) {
                struct rw_endpoint_stats st;
                const char *ep;

                if (!g.eps[i].ep)
                        continue;
                ep = rw_endpoint_name(g.eps[i].ep);
                rw_endpoint_get_stats(g.eps[i].ep, &st);
                counter(ep, "samples_sent", "remote_write_samples_sent_total", st.samples_sent);
                counter(ep, "samples_failed", "remote_write_samples_failed_total",
                        st.samples_failed);
                counter(ep, "samples_retried", "remote_write_samples_retried_total",
                        st.samples_retried);
                counter(ep, "requests", "remote_write_requests_total", st.requests);
                counter(ep, "requests_failed", "remote_write_requests_failed_total",
                        st.requests_failed);
                for (int r = 0; r < RW_DROP_NREASONS; r++) {
                        char ti[64];

                        snprintf(ti, sizeof(ti), "dropped-%s", rw_drop_reason_name(r));
                        dispatch_self(ep, "derive", ti, "remote_write_samples_dropped_total",
                                      "counter", rw_drop_reason_name(r),
                                      (value_t){.derive = (derive_t)st.dropped[r]});
                }
                gauge(ep, "queue_length", "remote_write_queue_length", (double)st.queue_length);
                gauge(ep, "spool_bytes", "remote_write_spool_bytes", (double)st.spool_bytes);
                gauge(ep, "spool_disk_bytes", "remote_write_spool_disk_bytes",
                      (double)st.spool_disk_bytes);
                counter(ep, "spool_errors", "remote_write_spool_errors_total", st.spool_errors);
                counter(ep, "retry_after_pauses", "remote_write_retry_after_pauses_total",
                        st.retry_after_pauses);
                gauge(ep, "last_send_duration", "remote_write_last_send_duration_seconds",
                      st.last_send_seconds);
                dispatch_self(ep, "gauge", "send_duration_total",
                              "remote_write_send_duration_seconds_total", "counter", NULL,
                              (value_t){.gauge = st.send_seconds_total});
                gauge(ep, "last_success", "remote_write_last_success_timestamp_seconds",
                      (double)st.last_success_ms / 1000.0);
        }
        return 0;
}

static int rw_init_read(void)
{
        int rc = rw_init();

        if (rc == 0 && g.self_metrics)
                plugin_register_read(PLUGIN_NAME, rw_read);
        return rc;
}

void module_register(void)
{
        plugin_register_complex_config(PLUGIN_NAME, rw_config);
        plugin_register_init(PLUGIN_NAME, rw_init_read);
        plugin_register_write(PLUGIN_NAME, rw_write, NULL);
        plugin_register_flush(PLUGIN_NAME, rw_flush, NULL);
        plugin_register_missing(PLUGIN_NAME, rw_missing, NULL);
        plugin_register_shutdown(PLUGIN_NAME, rw_shutdown);
}
