// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie.c - the collectd `pcie` plugin: collectd glue over the engine.
 *
 * All the work is in the engine (engine/: the option table, the machine,
 * the sources and their threads) and the collectors below it. This file
 * hands collectd's configuration to the engine's option table, collectd's
 * logging and threads to the engine's host callbacks, and the engine's
 * finished intervals to plugin_dispatch_values() as value lists, each
 * under the identity metrics/families.spec gives its family and labels
 * (pcie_identity.h).
 *
 * With `Simulate "<machine>"` the whole plugin runs on a simulated machine:
 * said at startup in the log, and in a `simulated` label on every value.
 *
 * Meta data convention (read by the remote_write plugin, see
 * docs/metrics.md): every value list carries
 *   "prom.name"          the Prometheus metric name (e.g. pcie_link_width_lanes)
 *   "prom.type"          "gauge", "counter", "info" or "histogram"
 *   "prom.label.<name>"  one string per label (bdf, state, severity, ...)
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"

#include "engine.h"
#include "pcie_identity.h"
#include "pcie_types.h"

#define PLUGIN_NAME "pcie"

static struct engine_config conf;
static bool conf_ready, config_failed;
static struct engine *engine;

static void plugin_log_adapter(void *ctx, enum hw_log_level level, const char *msg)
{
        static const int levels[] = {
            [HW_LOG_ERROR] = LOG_ERR, [HW_LOG_WARNING] = LOG_WARNING, [HW_LOG_NOTICE] = LOG_NOTICE,
            [HW_LOG_INFO] = LOG_INFO, [HW_LOG_DEBUG] = LOG_DEBUG,
        };

        (void)ctx;
        plugin_log(levels[level], PLUGIN_NAME " plugin: %s", msg);
}

/* ---- configuration ---------------------------------------------------- */

/* `option KEY VALUE: why` (the value only when the line has one). */
static void config_error(const oconfig_item_t *ci, const char *why)
{
        char value[256] = "";

        if (ci->values_num == 1 && ci->values[0].type == OCONFIG_TYPE_STRING)
                snprintf(value, sizeof(value), " \"%s\"", ci->values[0].value.string);
        else if (ci->values_num == 1 && ci->values[0].type == OCONFIG_TYPE_NUMBER)
                snprintf(value, sizeof(value), " %g", ci->values[0].value.number);
        else if (ci->values_num == 1 && ci->values[0].type == OCONFIG_TYPE_BOOLEAN)
                snprintf(value, sizeof(value), " %s",
                         ci->values[0].value.boolean ? "true" : "false");
        ERROR(PLUGIN_NAME " plugin: option %s%s: %s", ci->key, value, why);
}

/* One line of the block, through the engine's option table. */
static int config_item(const oconfig_item_t *ci)
{
        struct engine_value values[8];
        size_t n = 0;
        char why[512] = "";

        if (ci->values_num > (int)(sizeof(values) / sizeof(values[0]))) {
                config_error(ci, "too many values");
                return -1;
        }
        for (int i = 0; i < ci->values_num; i++) {
                const oconfig_value_t *v = &ci->values[i];

                if (v->type == OCONFIG_TYPE_STRING)
                        values[n++] = (struct engine_value){.type = ENGINE_VALUE_STRING,
                                                            .string = v->value.string};
                else if (v->type == OCONFIG_TYPE_NUMBER)
                        values[n++] = (struct engine_value){.type = ENGINE_VALUE_NUMBER,
                                                            .number = v->value.number};
                else
                        values[n++] = (struct engine_value){.type = ENGINE_VALUE_BOOLEAN,
                                                            .boolean = v->value.boolean};
        }
        if (engine_config_set(&conf, ci->key, values, n, why, sizeof(why))) {
                config_error(ci, why);
                return -1;
        }
        return 0;
}

static int pcie_config(oconfig_item_t *ci)
{
        char why[512] = "";

        for (int i = 0; i < ci->children_num; i++) {
                if (config_item(&ci->children[i])) {
                        config_failed = true;
                        return -1;
                }
        }
        if (engine_config_check(&conf, why, sizeof(why))) {
                ERROR(PLUGIN_NAME " plugin: %s", why);
                config_failed = true;
                return -1;
        }
        return 0;
}

/* ---- dispatch ---------------------------------------------------------- */

static int add_meta(meta_data_t *meta, const struct pcie_sample *s)
{
        int err = meta_data_add_string(meta, "prom.name", s->metric);

        if (!err)
                err = meta_data_add_string(meta, "prom.type", pcie_metric_kind_name(s->kind));
        for (size_t i = 0; i < s->label_count && !err; i++) {
                char key[DATA_MAX_NAME_LEN];

                snprintf(key, sizeof(key), "prom.label.%s", s->labels[i].name);
                err = meta_data_add_string(meta, key, s->labels[i].value);
        }
        return err;
}

/* @s of the interval @set (its identity may read another sample of it). */
static void dispatch_sample(const struct pcie_sample *s, const struct sample_set *set)
{
        value_list_t vl = VALUE_LIST_INIT;
        struct pcie_identity id;
        value_t value;
        int err;

        if (s->kind == PCIE_METRIC_COUNTER)
                value.derive = (derive_t)s->counter;
        /* FLOAT_COUNTER: a gauge to collectd, a counter in prom.type. */
        else
                value.gauge = s->gauge;
        vl.values = &value;
        vl.values_len = 1;
        sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
        /* No rule: empty instances, as a source without one always had. */
        pcie_identity(s, set->samples, set->count, &id);
        sstrncpy(vl.plugin_instance, id.plugin_instance, sizeof(vl.plugin_instance));
        sstrncpy(vl.type, s->family->collectd_type, sizeof(vl.type));
        sstrncpy(vl.type_instance, id.type_instance, sizeof(vl.type_instance));
        vl.meta = meta_data_create();
        if (!vl.meta || add_meta(vl.meta, s)) {
                /* Without meta the value still reads well through
                 * write_prometheus; only remote_write loses labels. */
                meta_data_destroy(vl.meta);
                vl.meta = NULL;
        }
        err = plugin_dispatch_values(&vl);
        meta_data_destroy(vl.meta);
        /* A failed dispatch of one value must not stop the others. */
        if (err)
                WARNING(PLUGIN_NAME " plugin: dispatching %s failed: %d", s->metric, err);
}

static void dispatch_set(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)ctx, (void)unit;
        for (size_t i = 0; i < set->count; i++)
                dispatch_sample(&set->samples[i], set);
}

/* Only a failed scan of the whole bus is an error; it is logged once by
 * the monitor, and collectd backs off while it lasts. No new interval of a
 * collector thread yet is not an error. */
static int pcie_read(void)
{
        return engine_read(engine, dispatch_set, NULL) ? -1 : 0;
}

/* ---- lifecycle --------------------------------------------------------- */

static int pcie_init(void)
{
        struct engine_host host = {.log = plugin_log_adapter,
                                   .interval = CDTIME_T_TO_DOUBLE(plugin_get_interval()),
                                   .thread_create = plugin_thread_create,
                                   .label_simulated = true,
                                   /* Intel IIO's free-running counters: the
                                    * first interval has rates too. */
                                   .baseline_at_start = true};
        char why[512] = "";
        int err;

        if (config_failed)
                return -1; /* the ERROR line was logged by the config callback */
        err = engine_open(&conf, &host, &engine, why, sizeof(why));
        if (err) {
                ERROR(PLUGIN_NAME " plugin: %s", why);
                return -1;
        }
        if (engine_simulated(engine))
                NOTICE(PLUGIN_NAME " plugin: SIMULATED machine \"%s\" (kernel %s): no hardware "
                                   "is read; every value is labelled simulated=\"%s\"; tree in %s",
                       engine_simulated(engine), engine_simulated_kernel(engine),
                       engine_simulated(engine), engine_simulated_root(engine));
        if (engine_start(engine)) {
                ERROR(PLUGIN_NAME " plugin: cannot start the collectors: out of memory");
                return -1;
        }
        return plugin_register_read(PLUGIN_NAME, pcie_read);
}

static int pcie_shutdown(void)
{
        engine_close(engine); /* joins the threads, restores the tune values */
        engine = NULL;
        engine_config_clear(&conf);
        return 0;
}

static void register_data_sets(void)
{
        for (const struct pcie_type_def *t = pcie_type_defs; t->name; t++) {
                data_source_t ds = {.type = t->ds_type, .min = t->min, .max = t->max};
                data_set_t set = {.ds_num = 1, .ds = &ds};

                sstrncpy(ds.name, "value", sizeof(ds.name));
                sstrncpy(set.type, t->name, sizeof(set.type));
                /* The daemon copies the data set. */
                plugin_register_data_set(&set);
        }
}

void module_register(void)
{
        if (!conf_ready)
                conf_ready = engine_config_init(&conf) == 0;
        register_data_sets();
        plugin_register_complex_config(PLUGIN_NAME, pcie_config);
        plugin_register_init(PLUGIN_NAME, pcie_init);
        plugin_register_shutdown(PLUGIN_NAME, pcie_shutdown);
}
