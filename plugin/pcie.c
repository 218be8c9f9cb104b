// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie.c - the collectd `pcie` plugin: configuration, logging and dispatch.
 *
 * All the work is in collectors/ (pcie_monitor); this file only maps
 * collectd's configuration onto the monitor's options, collectd's logging
 * onto the seam's log callback, and the monitor's samples onto value lists.
 *
 * Meta data convention (read by the remote_write plugin, see
 * docs/metrics.md): every value list carries
 *   "prom.name"          the Prometheus metric name (e.g. pcie_link_width_lanes)
 *   "prom.type"          "gauge", "counter" or "info"
 *   "prom.label.<name>"  one string per label (bdf, state, severity, ...)
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"

#include <errno.h>
#include <sys/stat.h>

#include "bdf_match.h"
#include "hw_env.h"
#include "pci_source.h"
#include "pcie_monitor.h"
#include "pcie_types.h"

#define PLUGIN_NAME "pcie"

static struct {
        char *sysfs_root;
        char *proc_root;
        char *pci_dump;
        struct bdf_filter filter;
        struct pcie_monitor_opts opts;
        bool config_failed;
} conf;

static struct hw_env env;
static struct pcie_monitor *monitor;

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

static int config_fail(const oconfig_item_t *ci, const char *why)
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
        conf.config_failed = true;
        return -1;
}

static int config_string(const oconfig_item_t *ci, char **out)
{
        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                return config_fail(ci, "takes exactly one string argument");
        sfree(*out);
        *out = strdup(ci->values[0].value.string);
        return *out ? 0 : config_fail(ci, "out of memory");
}

static int config_bool(const oconfig_item_t *ci, bool *out)
{
        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_BOOLEAN)
                return config_fail(ci, "takes exactly one boolean argument (true or false)");
        *out = ci->values[0].value.boolean;
        return 0;
}

static int config_number(const oconfig_item_t *ci, double min, double *out)
{
        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_NUMBER)
                return config_fail(ci, "takes exactly one number");
        if (!(ci->values[0].value.number >= min))
                return config_fail(ci, "number out of range");
        *out = ci->values[0].value.number;
        return 0;
}

static int config_directory(const oconfig_item_t *ci, char **out)
{
        struct stat st;

        if (config_string(ci, out))
                return -1;
        if (stat(*out, &st) < 0)
                return config_fail(ci, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return config_fail(ci, "not a directory");
        return 0;
}

static int config_pattern(const oconfig_item_t *ci, bool exclude)
{
        int err;

        if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                return config_fail(ci, "takes exactly one string argument");
        err = bdf_filter_add(&conf.filter, ci->values[0].value.string, exclude);
        if (err == -EINVAL)
                return config_fail(ci, "not a BDF pattern like \"0000:3b:00.0\", \"3b:*.*\" or "
                                       "\"*:00.0\"");
        return err ? config_fail(ci, strerror(-err)) : 0;
}

static int pcie_config_item(const oconfig_item_t *ci)
{
        struct pcie_monitor_opts *o = &conf.opts;
        double number = 0;

        if (!strcasecmp(ci->key, "SysfsRoot"))
                return config_directory(ci, &conf.sysfs_root);
        if (!strcasecmp(ci->key, "ProcRoot"))
                return config_directory(ci, &conf.proc_root);
        if (!strcasecmp(ci->key, "PCIDump")) {
                struct stat st;

                if (config_string(ci, &conf.pci_dump))
                        return -1;
                if (stat(conf.pci_dump, &st) < 0)
                        return config_fail(ci, strerror(errno));
                return S_ISREG(st.st_mode) ? 0 : config_fail(ci, "not a regular file");
        }
        if (!strcasecmp(ci->key, "Device"))
                return config_pattern(ci, false);
        if (!strcasecmp(ci->key, "IgnoreDevice"))
                return config_pattern(ci, true);
        if (!strcasecmp(ci->key, "CollectLink"))
                return config_bool(ci, &o->collect_link);
        if (!strcasecmp(ci->key, "CollectAudit"))
                return config_bool(ci, &o->collect_audit);
        if (!strcasecmp(ci->key, "CollectAER"))
                return config_bool(ci, &o->collect_aer);
        if (!strcasecmp(ci->key, "CollectInfo"))
                return config_bool(ci, &o->collect_info);
        if (!strcasecmp(ci->key, "ResolveNames"))
                return config_bool(ci, &o->names);
        if (!strcasecmp(ci->key, "MPSPolicy")) {
                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(ci, "takes exactly one string argument");
                if (pcie_policy_parse(ci->values[0].value.string, &o->policy))
                        return config_fail(ci, "not one of tune_off, default, safe, "
                                               "performance, peer2peer");
                o->policy_given = true;
                return 0;
        }
        if (!strcasecmp(ci->key, "HighBandwidthThreshold")) {
                if (config_number(ci, 0, &number))
                        return -1;
                o->audit.high_bandwidth_bytes = (uint64_t)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "MinReadRequestSize")) {
                if (config_number(ci, 128, &number))
                        return -1;
                if (number > 4096 || ((unsigned int)number & ((unsigned int)number - 1)))
                        return config_fail(ci, "must be a power of two from 128 to 4096");
                o->audit.min_mrrs_bytes = (unsigned int)number;
                return 0;
        }
        return config_fail(ci, "unknown option");
}

static int pcie_config(oconfig_item_t *ci)
{
        for (int i = 0; i < ci->children_num; i++)
                if (pcie_config_item(&ci->children[i]))
                        return -1;
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

static int dispatch_sample(void *ctx, const struct pcie_sample *s)
{
        value_list_t vl = VALUE_LIST_INIT;
        value_t value;
        int err;

        (void)ctx;
        if (s->kind == PCIE_METRIC_COUNTER)
                value.derive = (derive_t)s->counter;
        else
                value.gauge = s->gauge;
        vl.values = &value;
        vl.values_len = 1;
        sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
        sstrncpy(vl.plugin_instance, s->instance, sizeof(vl.plugin_instance));
        sstrncpy(vl.type, s->type, sizeof(vl.type));
        sstrncpy(vl.type_instance, s->type_instance, sizeof(vl.type_instance));
        vl.meta = meta_data_create();
        if (!vl.meta || add_meta(vl.meta, s)) {
                /* Without meta the value still reads well through
                 * write_prometheus; only remote_write loses labels. */
                meta_data_destroy(vl.meta);
                vl.meta = NULL;
        }
        err = plugin_dispatch_values(&vl);
        meta_data_destroy(vl.meta);
        if (err)
                WARNING(PLUGIN_NAME " plugin: dispatching %s failed: %d", s->metric, err);
        /* A failed dispatch of one value must not stop the others. */
        return 0;
}

static int pcie_read(void)
{
        int err = pcie_monitor_sample(monitor, dispatch_sample, NULL);

        /* Only a failed scan of the whole bus is an error; it is logged
         * once by the monitor, and collectd backs off while it lasts. */
        return err ? -1 : 0;
}

/* ---- lifecycle --------------------------------------------------------- */

static int pcie_init(void)
{
        int err;

        if (conf.config_failed)
                return -1; /* the ERROR line was logged by the config callback */

        hw_env_init_system(&env);
        env.log = plugin_log_adapter;
        if (conf.sysfs_root)
                env.sysfs_root = conf.sysfs_root;
        if (conf.proc_root)
                env.proc_root = conf.proc_root;
        if (conf.pci_dump) {
                /* A dump describes another machine: use sysfs/procfs trees
                 * only when the configuration names them explicitly. */
                if (!conf.sysfs_root)
                        env.sysfs_root = NULL;
                if (!conf.proc_root)
                        env.proc_root = NULL;
                err = pci_source_open_dump(conf.pci_dump, &env.pci);
        } else {
                err = pci_source_open_live(env.sysfs_root, &env.pci);
        }
        if (err) {
                ERROR(PLUGIN_NAME " plugin: cannot set up PCI access: %s", STRERROR(-err));
                return -1;
        }
        conf.opts.read_sysfs = env.sysfs_root != NULL;
        conf.opts.filter = &conf.filter;
        err = pcie_monitor_new(&env, &conf.opts, &monitor);
        if (err) {
                ERROR(PLUGIN_NAME " plugin: cannot start: %s", STRERROR(-err));
                return -1;
        }
        {
                const char *source;
                enum pcie_policy policy = pcie_monitor_policy(monitor, &source);

                INFO(PLUGIN_NAME " plugin: pciescope %s reading %s PCI devices%s%s (sysfs %s); "
                                 "MPS policy %s (%s)",
                     PCIESCOPE_VERSION, conf.pci_dump ? "dumped" : "this machine's",
                     conf.pci_dump ? " from " : "", conf.pci_dump ? conf.pci_dump : "",
                     env.sysfs_root ? env.sysfs_root : "not used", pcie_policy_name(policy),
                     source);
        }
        return plugin_register_read(PLUGIN_NAME, pcie_read);
}

static int pcie_shutdown(void)
{
        pcie_monitor_free(monitor);
        monitor = NULL;
        pci_source_close(env.pci);
        env.pci = NULL;
        bdf_filter_clear(&conf.filter);
        sfree(conf.sysfs_root);
        sfree(conf.proc_root);
        sfree(conf.pci_dump);
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
        pcie_monitor_opts_default(&conf.opts);
        register_data_sets();
        plugin_register_complex_config(PLUGIN_NAME, pcie_config);
        plugin_register_init(PLUGIN_NAME, pcie_init);
        plugin_register_shutdown(PLUGIN_NAME, pcie_shutdown);
}
