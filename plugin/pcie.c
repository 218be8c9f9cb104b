// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie.c - the collectd `pcie` plugin: configuration, logging and dispatch.
 *
 * All the work is in collectors/ (pcie_monitor for topology, link, audit and
 * AER; hisi_pcie_core for the HiSilicon PCIe PMU counters); this file maps
 * collectd's configuration onto their options, collectd's logging onto the
 * seam's log callback, and their samples onto value lists. It also owns the
 * per-PCIe-core collector threads: each runs one hisi_pcie_core on its own
 * perf fds and publishes a finished interval that the read callback
 * dispatches.
 *
 * With `Simulate "<machine>"` the whole plugin runs on a simulated machine
 * (sim/): said at startup in the log, and in a `simulated` label on every
 * value.
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
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "bdf_match.h"
#include "hisi_pcie.h"
#include "hisi_pcie_core.h"
#include "intel_iio.h"
#include "ptt_capture.h"
#include "ptt_tune.h"
#include "hw_env.h"
#include "pci_source.h"
#include "perf_pmu.h"
#include "pcie_monitor.h"
#include "pcie_topo.h"
#include "pcie_types.h"
#include "sample_set.h"
#include "sim.h"
#include "uncore_discovery.h"

#define PLUGIN_NAME "pcie"

static struct {
        char *sysfs_root;
        char *proc_root;
        char *pci_dump;
        char *simulate;
        char *simulate_kernel;
        char *machine_dir;
        struct bdf_filter filter;
        struct pcie_monitor_opts opts;
        bool collect_pmu;
        struct hisi_pcie_opts pmu;
        struct bdf_filter endpoints;
        bool endpoints_given;
        double retry_seconds;
        bool collect_iio;
        struct intel_iio_opts iio;
        bool collect_uncore;
        bool collect_tune;
        bool collect_trace;
        struct ptt_capture_opts trace;
        unsigned int max_traces;
        size_t tune_count; /* Tune lines, applied in order at init */
        struct {
                enum ptt_knob knob;
                unsigned int value;
        } tunes[32];
        bool config_failed;
} conf;

static struct hw_env env;
static struct pcie_monitor *monitor;
static struct ptt_tuner *tuner;
static struct sim *sim;

/* What a collector thread runs: one hisi_pcie core, or one socket's Intel
 * IIO stacks. */
struct collector_ops {
        int (*start)(void *c, double now);
        int (*tick)(void *c, double now, struct sample_set *out);
        void (*stop)(void *c);
        const char *(*name)(const void *c);
        size_t (*measurements)(const void *c);
        void (*free)(void *c); /* NULL: owned elsewhere (IIO sockets) */
};

static int hisi_start(void *c, double now)
{
        return hisi_pcie_core_start(c, now);
}
static int hisi_tick(void *c, double now, struct sample_set *out)
{
        return hisi_pcie_core_tick(c, now, out);
}
static void hisi_stop(void *c)
{
        hisi_pcie_core_stop(c);
}
static const char *hisi_name(const void *c)
{
        return hisi_pcie_core_name(c);
}
static size_t hisi_measurements(const void *c)
{
        return hisi_pcie_core_measurements(c);
}
static void hisi_free(void *c)
{
        hisi_pcie_core_free(c);
}
static const struct collector_ops hisi_ops = {hisi_start, hisi_tick,         hisi_stop,
                                              hisi_name,  hisi_measurements, hisi_free};

static int iio_start(void *c, double now)
{
        return intel_iio_socket_start(c, now);
}
static int iio_tick(void *c, double now, struct sample_set *out)
{
        return intel_iio_socket_tick(c, now, out);
}
static void iio_stop(void *c)
{
        intel_iio_socket_stop(c);
}
static const char *iio_name(const void *c)
{
        return intel_iio_socket_name(c);
}
static size_t iio_measurements(const void *c)
{
        return intel_iio_socket_stacks(c);
}
static const struct collector_ops iio_ops = {iio_start, iio_tick,         iio_stop,
                                             iio_name,  iio_measurements, NULL};

/* A PTT device runs its own thread loop (ptt_thread_main); only its name
 * and its release go through the ops. */
static const char *ptt_name(const void *c)
{
        return ptt_capture_name(c);
}
static void ptt_free(void *c)
{
        ptt_capture_free(c);
}
static const struct collector_ops ptt_ops = {NULL, NULL, NULL, ptt_name, NULL, ptt_free};

/* One collector's thread. */
struct core_thread {
        const struct collector_ops *ops;
        void *core; /* the collector; hisi cores are owned here, IIO sockets by pmu_state.iio */
        pthread_t thread;
        bool thread_started;
        pthread_mutex_t lock; /* guards published, generation */
        struct sample_set published;
        unsigned long generation; /* bumped at every publication */
        unsigned long dispatched; /* generation the read callback sent last */
        struct sample_set work;   /* owned by the thread */
};

static struct {
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stop;
        double interval; /* seconds */
        struct hisi_pcie_pmu *pmus;
        size_t pmu_count;
        struct intel_iio *iio;
        struct core_thread *cores;
        size_t core_count;
        struct uncore_inventory *inventory;
        struct sample_set inventory_samples; /* computed once at init */
        struct ptt_budget *trace_budget;     /* MaxConcurrentTraces */
} pmu_state = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

/* IIOStackBus "uncore_iio_free_running_2" 0 "0000:15" */
static int config_stack_bus(const oconfig_item_t *ci)
{
        struct intel_iio_map *m = &conf.iio.maps[conf.iio.map_count];
        double socket;

        if (ci->values_num != 3 || ci->values[0].type != OCONFIG_TYPE_STRING ||
            ci->values[1].type != OCONFIG_TYPE_NUMBER || ci->values[2].type != OCONFIG_TYPE_STRING)
                return config_fail(ci, "takes a PMU name, a socket number and a root bus, e.g. "
                                       "IIOStackBus \"uncore_iio_free_running_2\" 0 \"0000:15\"");
        if (conf.iio.map_count >= INTEL_IIO_MAX_MAPS)
                return config_fail(ci, "too many IIOStackBus lines");
        socket = ci->values[1].value.number;
        if (!(socket >= 0 && socket <= 255) || socket != (double)(unsigned int)socket)
                return config_fail(ci, "the socket must be a whole number from 0 to 255");
        if (strncmp(ci->values[0].value.string, "uncore_iio_", 11) ||
            strlen(ci->values[0].value.string) >= sizeof(m->pmu))
                return config_fail(ci, "the PMU must be an uncore_iio_free_running_<N> or "
                                       "uncore_iio_<N> name");
        if (intel_iio_parse_bus(ci->values[2].value.string, &m->domain, &m->bus))
                return config_fail(ci, "the root bus must be \"dddd:bb\" or \"bb\" in hex");
        sstrncpy(m->pmu, ci->values[0].value.string, sizeof(m->pmu));
        m->socket = (unsigned int)socket;
        conf.iio.map_count++;
        return 0;
}

/* The PTT trace window options; the combination is checked once the whole
 * block is read (ptt_capture_opts_check). */
static int config_trace(const oconfig_item_t *ci)
{
        struct ptt_capture_opts *t = &conf.trace;
        double number = 0;

        if (!strcasecmp(ci->key, "CollectTrace"))
                return config_bool(ci, &conf.collect_trace);
        if (!strcasecmp(ci->key, "TraceRootPort") || !strcasecmp(ci->key, "TraceRequester")) {
                bool port = !strcasecmp(ci->key, "TraceRootPort");
                size_t *count = port ? &t->root_port_count : &t->requester_count;
                size_t max = port ? PTT_CAPTURE_MAX_PORTS : PTT_CAPTURE_MAX_REQUESTERS;
                struct pci_addr a;

                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(ci, "takes one BDF such as \"0000:00:10.0\"");
                if (pci_addr_parse(ci->values[0].value.string, &a))
                        return config_fail(ci, "not a BDF such as \"0000:00:10.0\"");
                if (*count >= max)
                        return config_fail(ci, "too many");
                pci_addr_format(&a, port ? t->root_ports[*count] : t->requesters[*count]);
                (*count)++;
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceType")) {
                t->type_mask = 0;
                for (int i = 0; i < ci->values_num; i++) {
                        const char *v = ci->values[i].type == OCONFIG_TYPE_STRING
                                            ? ci->values[i].value.string
                                            : "";

                        if (!strcasecmp(v, "posted"))
                                t->type_mask |= 1;
                        else if (!strcasecmp(v, "non-posted"))
                                t->type_mask |= 2;
                        else if (!strcasecmp(v, "completion"))
                                t->type_mask |= 4;
                        else
                                return config_fail(ci, "takes \"posted\", \"non-posted\" and/or "
                                                       "\"completion\"");
                }
                return t->type_mask ? 0 : config_fail(ci, "names no TLP type");
        }
        if (!strcasecmp(ci->key, "TraceDirection")) {
                if (config_number(ci, 0, &number))
                        return -1;
                if (number > 3 || number != (double)(int)number)
                        return config_fail(ci, "must be 0, 1, 2 or 3 (see the README)");
                t->direction = (int)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceFormat")) {
                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(ci, "takes \"4DW\" or \"8DW\"");
                if (!strcasecmp(ci->values[0].value.string, "4DW"))
                        t->format = PTT_FORMAT_4DW;
                else if (!strcasecmp(ci->values[0].value.string, "8DW"))
                        t->format = PTT_FORMAT_8DW;
                else
                        return config_fail(ci, "takes \"4DW\" or \"8DW\"");
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceDuration"))
                return config_number(ci, 0.001, &t->duration_s);
        if (!strcasecmp(ci->key, "TracePeriod"))
                return config_number(ci, 0.01, &t->period_s);
        if (!strcasecmp(ci->key, "TraceBufferSize")) {
                if (config_number(ci, 1, &number))
                        return -1;
                if (number > (double)(1ULL << 34))
                        return config_fail(ci, "at most 16 GiB");
                t->aux_bytes = (uint64_t)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "MaxConcurrentTraces")) {
                if (config_number(ci, 1, &number))
                        return -1;
                if (number > 1024 || number != (double)(unsigned int)number)
                        return config_fail(ci, "must be a whole number from 1 to 1024");
                conf.max_traces = (unsigned int)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceTimeMode")) {
                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING ||
                    ptt_time_mode_parse(ci->values[0].value.string, &t->time_mode))
                        return config_fail(ci, "takes \"delta\" or \"absolute\"");
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceClock")) {
                if (config_number(ci, 1, &number))
                        return -1;
                t->clock_hz = (uint64_t)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "TraceTopRequesters")) {
                if (config_number(ci, 0, &number))
                        return -1;
                if (number > 1000 || number != (double)(unsigned int)number)
                        return config_fail(ci, "must be a whole number from 0 to 1000");
                t->top_n = (unsigned int)number;
                return 0;
        }
        return config_fail(ci, "unknown option");
}

/* Tune "qos_tx_p" 2: refused (not clamped) unless a known knob and 0..2. */
static int config_tune(const oconfig_item_t *ci)
{
        char why[160];
        enum ptt_knob knob;

        if (ci->values_num != 2 || ci->values[0].type != OCONFIG_TYPE_STRING ||
            ci->values[1].type != OCONFIG_TYPE_NUMBER)
                return config_fail(ci, "takes a tune file name and a level 0, 1 or 2, e.g. "
                                       "Tune \"qos_tx_p\" 2");
        if (ptt_knob_parse(ci->values[0].value.string, &knob)) {
                snprintf(why, sizeof(why), "\"%s\" is not a tune file (%s)",
                         ci->values[0].value.string, ptt_knob_names());
                return config_fail(ci, why);
        }
        if (ptt_tune_value_check(ci->values[1].value.number)) {
                snprintf(why, sizeof(why), "%s: %g is not a level (0, 1 or 2; nothing is clamped)",
                         ci->values[0].value.string, ci->values[1].value.number);
                return config_fail(ci, why);
        }
        if (conf.tune_count >= sizeof(conf.tunes) / sizeof(conf.tunes[0]))
                return config_fail(ci, "too many Tune lines");
        conf.tunes[conf.tune_count].knob = knob;
        conf.tunes[conf.tune_count].value = (unsigned int)ci->values[1].value.number;
        conf.tune_count++;
        return 0;
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
        if (!strcasecmp(ci->key, "Simulate"))
                return config_string(ci, &conf.simulate);
        if (!strcasecmp(ci->key, "SimulateKernel")) {
                if (config_string(ci, &conf.simulate_kernel))
                        return -1;
                if (strcmp(conf.simulate_kernel, "5.17") && strcmp(conf.simulate_kernel, "6.2") &&
                    strcmp(conf.simulate_kernel, "6.9") && strcmp(conf.simulate_kernel, "6.12") &&
                    strcmp(conf.simulate_kernel, "6.15"))
                        return config_fail(ci, "not one of 5.17, 6.2, 6.9, 6.12, 6.15");
                return 0;
        }
        if (!strcasecmp(ci->key, "MachineDirectory"))
                return config_directory(ci, &conf.machine_dir);
        if (!strcasecmp(ci->key, "CollectPMU"))
                return config_bool(ci, &conf.collect_pmu);
        if (!strcasecmp(ci->key, "PMUPortBandwidth"))
                return config_bool(ci, &conf.pmu.port_bandwidth);
        if (!strcasecmp(ci->key, "PMULatency"))
                return config_bool(ci, &conf.pmu.latency);
        if (!strcasecmp(ci->key, "PMUTLPLength"))
                return config_bool(ci, &conf.pmu.tlp_length);
        if (!strcasecmp(ci->key, "PMUEndpoints"))
                return config_bool(ci, &conf.pmu.endpoints);
        if (!strcasecmp(ci->key, "Endpoint")) {
                int err;

                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(ci, "takes exactly one string argument");
                err = bdf_filter_add(&conf.endpoints, ci->values[0].value.string, false);
                if (err)
                        return config_fail(ci,
                                           err == -EINVAL ? "not a BDF pattern" : strerror(-err));
                conf.endpoints_given = true;
                return 0;
        }
        if (!strcasecmp(ci->key, "TopTalkers")) {
                if (config_number(ci, 0, &number))
                        return -1;
                if (number > 1000 || number != (double)(size_t)number)
                        return config_fail(ci, "must be a whole number from 0 to 1000");
                conf.pmu.top_talkers = (size_t)number;
                return 0;
        }
        if (!strcasecmp(ci->key, "FluxUnit")) {
                if (config_number(ci, 0, &number))
                        return -1;
                if (number <= 0 || number > 4096)
                        return config_fail(ci,
                                           "bytes per flux count must be above 0 and at most 4096");
                conf.pmu.flux_unit_bytes = number;
                return 0;
        }
        if (!strcasecmp(ci->key, "LatencyClock")) {
                if (config_number(ci, 1, &number))
                        return -1;
                conf.pmu.latency_clock_hz = number;
                return 0;
        }
        if (!strcasecmp(ci->key, "LengthMode")) {
                static const char *const modes[] = {NULL, "payload", "header", "header+payload"};

                if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
                        return config_fail(ci, "takes exactly one string argument");
                for (unsigned int m = 1; m <= 3; m++) {
                        if (!strcasecmp(ci->values[0].value.string, modes[m])) {
                                conf.pmu.len_mode = m;
                                return 0;
                        }
                }
                return config_fail(ci, "not one of payload, header, header+payload");
        }
        if (!strcasecmp(ci->key, "PMURetryInterval")) {
                if (config_number(ci, 1, &number))
                        return -1;
                conf.retry_seconds = number;
                return 0;
        }
        if (!strcasecmp(ci->key, "CollectIIO"))
                return config_bool(ci, &conf.collect_iio);
        if (!strcasecmp(ci->key, "IIOScaleFix"))
                return config_bool(ci, &conf.iio.scale_fix);
        if (!strcasecmp(ci->key, "IIOBandwidthOut"))
                return config_bool(ci, &conf.iio.bw_out);
        if (!strcasecmp(ci->key, "IIOStackBus"))
                return config_stack_bus(ci);
        if (!strncasecmp(ci->key, "Trace", 5) || !strcasecmp(ci->key, "CollectTrace") ||
            !strcasecmp(ci->key, "MaxConcurrentTraces"))
                return config_trace(ci);
        if (!strcasecmp(ci->key, "Tune"))
                return config_tune(ci);
        if (!strcasecmp(ci->key, "CollectTune"))
                return config_bool(ci, &conf.collect_tune);
        if (!strcasecmp(ci->key, "CollectUncoreInventory"))
                return config_bool(ci, &conf.collect_uncore);
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
        if (conf.simulate && (conf.sysfs_root || conf.proc_root || conf.pci_dump)) {
                ERROR(PLUGIN_NAME " plugin: option Simulate \"%s\": cannot be combined with "
                                  "SysfsRoot, ProcRoot or PCIDump (the simulation brings its own)",
                      conf.simulate);
                conf.config_failed = true;
                return -1;
        }
        if (conf.collect_trace) {
                char why[256] = "";

                if (ptt_capture_opts_check(&conf.trace, why, sizeof(why))) {
                        ERROR(PLUGIN_NAME " plugin: PTT trace options: %s", why);
                        conf.config_failed = true;
                        return -1;
                }
        }
        if (conf.simulate_kernel && !conf.simulate) {
                ERROR(PLUGIN_NAME " plugin: option SimulateKernel: only with Simulate");
                conf.config_failed = true;
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
        /* Never pass a simulation off as the machine: every value says so. */
        if (!err && sim)
                err = meta_data_add_string(meta, "prom.label.simulated", sim_machine(sim)->name);
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
        /* FLOAT_COUNTER: a gauge to collectd, a counter in prom.type. */
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

/* Sends each core's newest finished interval, once. No new interval yet is
 * not an error (collectd would back the read interval off). */
static void dispatch_pmu_snapshots(void)
{
        for (size_t i = 0; i < pmu_state.core_count; i++) {
                struct core_thread *ct = &pmu_state.cores[i];

                pthread_mutex_lock(&ct->lock);
                if (ct->generation != ct->dispatched) {
                        for (size_t k = 0; k < ct->published.count; k++)
                                dispatch_sample(NULL, &ct->published.samples[k]);
                        ct->dispatched = ct->generation;
                }
                pthread_mutex_unlock(&ct->lock);
        }
}

static void dispatch_simulation_info(void)
{
        const struct sim_machine *m = sim_machine(sim);
        struct pcie_sample s = {.metric = "pcie_simulation_info",
                                .type = "simulation_info",
                                .kind = PCIE_METRIC_INFO,
                                .instance = "simulated",
                                .type_instance = m->name,
                                .gauge = 1};

        s.labels[s.label_count++] = (struct pcie_label){"machine", m->name};
        s.labels[s.label_count++] = (struct pcie_label){"kernel", sim_kernel_name(m->kernel)};
        dispatch_sample(NULL, &s);
}

/* The PTT tune knobs as gauges (read from the driver every interval). */
static void dispatch_tune(void)
{
        struct sample_set set = SAMPLE_SET_INIT;

        ptt_tuner_samples(tuner, sim ? "simulated" : NULL, sim ? sim_machine(sim)->name : NULL,
                          &set);
        for (size_t i = 0; i < set.count; i++)
                dispatch_sample(NULL, &set.samples[i]);
        sample_set_free(&set);
}

/* Finds the PTT devices and applies the configured Tune values (each
 * device's original value is kept and written back at shutdown). */
static int tune_start(void)
{
        int err = ptt_tuner_new(&env, &tuner);

        if (err) {
                WARNING(PLUGIN_NAME " plugin: PTT tune files: %s", STRERROR(-err));
                return 0;
        }
        if (conf.tune_count && ptt_tuner_devices(tuner) == 0)
                WARNING(PLUGIN_NAME " plugin: Tune is configured but there is no HiSilicon PTT "
                                    "device (hisi_ptt*) with tune files; nothing is changed");
        for (size_t i = 0; i < conf.tune_count; i++)
                ptt_tuner_apply(tuner, conf.tunes[i].knob, conf.tunes[i].value);
        return 0;
}

static int pcie_read(void)
{
        int err;

        if (sim) {
                sim_refresh(sim); /* AER counts that rise with time */
                dispatch_simulation_info();
        }
        err = pcie_monitor_sample(monitor, dispatch_sample, NULL);
        for (size_t i = 0; i < pmu_state.inventory_samples.count; i++)
                dispatch_sample(NULL, &pmu_state.inventory_samples.samples[i]);
        if (tuner && conf.collect_tune)
                dispatch_tune();
        dispatch_pmu_snapshots();
        /* Only a failed scan of the whole bus is an error; it is logged
         * once by the monitor, and collectd backs off while it lasts. */
        return err ? -1 : 0;
}

/* ---- per-core collector threads ---------------------------------------- */

static double monotonic_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until @deadline (monotonic seconds) or shutdown; true = stop. */
static bool wait_until(double deadline)
{
        struct timespec ts = {.tv_sec = (time_t)deadline,
                              .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9)};
        bool stop;

        pthread_mutex_lock(&pmu_state.lock);
        while (!pmu_state.stop && monotonic_now() < deadline)
                if (pthread_cond_timedwait(&pmu_state.wake, &pmu_state.lock, &ts) == ETIMEDOUT)
                        break;
        stop = pmu_state.stop;
        pthread_mutex_unlock(&pmu_state.lock);
        return stop;
}

static bool retryable(int err)
{
        return err == -EBUSY || err == -EMFILE || err == -ENFILE || err == -EAGAIN;
}

static void *core_thread_main(void *arg)
{
        struct core_thread *ct = arg;
        const char *name = ct->ops->name(ct->core);
        double next = monotonic_now();
        int err;

        /* Open the counters; on EBUSY/EMFILE try again later, on anything
         * else this core stays off (the reason was logged once). */
        for (;;) {
                err = ct->ops->start(ct->core, monotonic_now());
                if (!err)
                        break;
                if (!retryable(err))
                        return NULL;
                if (wait_until(monotonic_now() + conf.retry_seconds))
                        return NULL;
        }
        INFO(PLUGIN_NAME " plugin: %s: counting %zu measurements", name,
             ct->ops->measurements(ct->core));
        for (;;) {
                next += pmu_state.interval;
                if (wait_until(next))
                        break;
                sample_set_clear(&ct->work);
                err = ct->ops->tick(ct->core, monotonic_now(), &ct->work);
                if (err && err != -ENOMEM)
                        WARNING(PLUGIN_NAME " plugin: %s: reading counters: %s", name,
                                STRERROR(-err));
                pthread_mutex_lock(&ct->lock);
                sample_set_swap(&ct->work, &ct->published);
                ct->generation++;
                pthread_mutex_unlock(&ct->lock);
                /* Fell behind (suspend, overload): skip, do not burst. */
                if (monotonic_now() > next + pmu_state.interval)
                        next = monotonic_now();
        }
        ct->ops->stop(ct->core);
        return NULL;
}

/* A PTT device: ticks when the capture asks (window start, polls every
 * few ms while a window runs, window end) and publishes its samples once
 * per collectd interval. */
static void *ptt_thread_main(void *arg)
{
        struct core_thread *ct = arg;
        double next_publish = monotonic_now() + pmu_state.interval;

        for (;;) {
                double due = ptt_capture_next_tick(ct->core), now;

                if (wait_until(due < next_publish ? due : next_publish))
                        break;
                now = monotonic_now();
                if (now >= ptt_capture_next_tick(ct->core))
                        ptt_capture_tick(ct->core, now); /* failures are counted and logged */
                if (now < next_publish)
                        continue;
                sample_set_clear(&ct->work);
                if (ptt_capture_samples(ct->core, &ct->work))
                        WARNING(PLUGIN_NAME " plugin: %s: out of memory for its samples",
                                ptt_capture_name(ct->core));
                pthread_mutex_lock(&ct->lock);
                sample_set_swap(&ct->work, &ct->published);
                ct->generation++;
                pthread_mutex_unlock(&ct->lock);
                next_publish += pmu_state.interval;
                if (now > next_publish)
                        next_publish = now + pmu_state.interval;
        }
        return NULL;
}

static void pmu_stop(void)
{
        pthread_mutex_lock(&pmu_state.lock);
        pmu_state.stop = true;
        pthread_cond_broadcast(&pmu_state.wake);
        pthread_mutex_unlock(&pmu_state.lock);
        for (size_t i = 0; i < pmu_state.core_count; i++) {
                struct core_thread *ct = &pmu_state.cores[i];

                if (ct->thread_started)
                        pthread_join(ct->thread, NULL);
                if (ct->ops->free)
                        ct->ops->free(ct->core);
                sample_set_free(&ct->published);
                sample_set_free(&ct->work);
                pthread_mutex_destroy(&ct->lock);
        }
        free(pmu_state.cores);
        pmu_state.cores = NULL;
        pmu_state.core_count = 0;
        hisi_pcie_free(pmu_state.pmus, pmu_state.pmu_count);
        pmu_state.pmus = NULL;
        pmu_state.pmu_count = 0;
        intel_iio_free(pmu_state.iio);
        pmu_state.iio = NULL;
        uncore_inventory_free(pmu_state.inventory);
        pmu_state.inventory = NULL;
        ptt_budget_free(pmu_state.trace_budget);
        pmu_state.trace_budget = NULL;
        sample_set_free(&pmu_state.inventory_samples);
}

static void start_thread(struct core_thread *ct, const struct collector_ops *ops, void *core,
                         const char *tname, void *(*thread_main)(void *))
{
        ct->ops = ops;
        ct->core = core;
        pthread_mutex_init(&ct->lock, NULL);
        pmu_state.core_count++;
        if (plugin_thread_create(&ct->thread, thread_main, ct, tname) == 0)
                ct->thread_started = true;
        else
                ERROR(PLUGIN_NAME " plugin: %s: cannot start its collector thread",
                      ops->name(core));
}

/* The Intel uncore inventory, read once (the table is static). */
static void uncore_start(void)
{
        const char *extra = sim ? sim_machine(sim)->name : NULL;
        int err = uncore_discover(&env, &pmu_state.inventory);

        if (err) {
                WARNING(PLUGIN_NAME " plugin: uncore discovery: %s", STRERROR(-err));
                return;
        }
        if (uncore_inventory_samples(pmu_state.inventory, extra ? "simulated" : NULL, extra,
                                     &pmu_state.inventory_samples))
                WARNING(PLUGIN_NAME " plugin: uncore discovery: out of memory");
        else if (pmu_state.inventory->source_count)
                INFO(PLUGIN_NAME " plugin: uncore discovery: %zu PMON discovery table(s), %s",
                     pmu_state.inventory->source_count,
                     uncore_platform_name(pmu_state.inventory->platform));
}

/* Finds the hisi_pcie PMUs and the Intel IIO PMUs, plans each PCIe core or
 * socket and starts its thread. */
static int pmu_start(void)
{
        struct pcie_topo_opts topo_opts = {.names = false, .read_sysfs = false};
        struct pcie_topo *topo = NULL;
        pthread_condattr_t attr;
        char **ptt_names = NULL;
        size_t sockets, ptts = 0;
        int err;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&pmu_state.wake, &attr);
        pthread_condattr_destroy(&attr);
        pmu_state.stop = false;
        pmu_state.interval = CDTIME_T_TO_DOUBLE(plugin_get_interval());

        err = pcie_topo_scan(&env, &topo_opts, &topo);
        if (err) {
                ERROR(PLUGIN_NAME " plugin: PMU counters off: cannot read the PCI topology: %s",
                      STRERROR(-err));
                return 0;
        }
        err = hisi_pcie_discover(&env, topo, &pmu_state.pmus, &pmu_state.pmu_count);
        if (err)
                pmu_state.pmu_count = 0;
        if (conf.collect_iio) {
                conf.iio.extra_label_name = sim ? "simulated" : NULL;
                conf.iio.extra_label_value = sim ? sim_machine(sim)->name : NULL;
                err = intel_iio_discover(&env, topo, &conf.iio, &pmu_state.iio);
                if (err == -ENOMEM) {
                        pcie_topo_free(topo);
                        return err;
                }
        }
        sockets = intel_iio_socket_count(pmu_state.iio);
        if (conf.collect_trace) {
                int n = ptt_capture_list(&env, &ptt_names);

                ptts = n > 0 ? (size_t)n : 0;
        }
        if (pmu_state.pmu_count == 0 && sockets == 0 && ptts == 0) {
                INFO(PLUGIN_NAME " plugin: no HiSilicon PCIe PMU (hisi_pcie*), no PTT device "
                                 "(hisi_ptt*) and no Intel IIO free-running PMU found; PMU "
                                 "counters off");
                perf_pmu_list_free(ptt_names);
                pcie_topo_free(topo);
                return 0;
        }
        pmu_state.cores = calloc(pmu_state.pmu_count + sockets + ptts, sizeof(*pmu_state.cores));
        if (!pmu_state.cores) {
                perf_pmu_list_free(ptt_names);
                pcie_topo_free(topo);
                return -ENOMEM;
        }
        conf.pmu.endpoint_filter = conf.endpoints_given ? &conf.endpoints : NULL;
        for (size_t i = 0; i < pmu_state.pmu_count; i++) {
                const struct hisi_pcie_pmu *pmu = &pmu_state.pmus[i];
                struct hisi_pcie_core *core;
                char tname[16];

                err = hisi_pcie_core_new(&env, pmu, topo, &conf.pmu, &core);
                if (err) {
                        WARNING(PLUGIN_NAME " plugin: %s: nothing to count (%s)", pmu->name,
                                err == -ENODATA ? "no Root Port or no known event"
                                                : STRERROR(-err));
                        continue;
                }
                snprintf(tname, sizeof(tname), "pcie s%uc%u", pmu->sicl, pmu->core);
                start_thread(&pmu_state.cores[pmu_state.core_count], &hisi_ops, core, tname,
                             core_thread_main);
        }
        for (size_t i = 0; i < sockets; i++) {
                struct intel_iio_socket *sock = intel_iio_socket_at(pmu_state.iio, i);
                char tname[16];

                snprintf(tname, sizeof(tname), "pcie iio%u", intel_iio_socket_id(sock));
                start_thread(&pmu_state.cores[pmu_state.core_count], &iio_ops, sock, tname,
                             core_thread_main);
        }
        if (ptts && ptt_budget_new(conf.max_traces, &pmu_state.trace_budget)) {
                perf_pmu_list_free(ptt_names);
                pcie_topo_free(topo);
                return -ENOMEM;
        }
        conf.trace.extra_label_name = sim ? "simulated" : NULL;
        conf.trace.extra_label_value = sim ? sim_machine(sim)->name : NULL;
        for (size_t i = 0; i < ptts; i++) {
                struct ptt_capture *cap;
                char tname[16], why[256] = "";

                /* Windows are staggered over the period across devices. */
                err = ptt_capture_new(&env, ptt_names[i], &conf.trace, pmu_state.trace_budget,
                                      (unsigned int)i, (unsigned int)ptts, monotonic_now(), &cap,
                                      why, sizeof(why));
                if (err) {
                        ERROR(PLUGIN_NAME " plugin: %s: no trace windows: %s", ptt_names[i],
                              why[0] ? why : STRERROR(-err));
                        continue;
                }
                snprintf(tname, sizeof(tname), "pcie ptt%u", (unsigned int)(i % 1000));
                start_thread(&pmu_state.cores[pmu_state.core_count], &ptt_ops, cap, tname,
                             ptt_thread_main);
        }
        if (ptts)
                INFO(PLUGIN_NAME " plugin: PTT trace windows of %g s every %g s on %zu device(s), "
                                 "at most %u at once",
                     conf.trace.duration_s, conf.trace.period_s, ptts, conf.max_traces);
        perf_pmu_list_free(ptt_names);
        pcie_topo_free(topo);
        return 0;
}

/* ---- lifecycle --------------------------------------------------------- */

static int pcie_init(void)
{
        int err;

        if (conf.config_failed)
                return -1; /* the ERROR line was logged by the config callback */

        hw_env_init_system(&env);
        env.log = plugin_log_adapter;
        if (conf.simulate) {
                struct sim_opts so = {.machine_dir = conf.machine_dir,
                                      .kernel = conf.simulate_kernel};
                char msg[512] = "";

                err = sim_open(conf.simulate, &so, &sim, msg, sizeof(msg));
                if (!err)
                        err = sim_env(sim, &env);
                if (err) {
                        ERROR(PLUGIN_NAME " plugin: Simulate \"%s\": %s", conf.simulate,
                              msg[0] ? msg : STRERROR(-err));
                        return -1;
                }
                NOTICE(PLUGIN_NAME " plugin: SIMULATED machine \"%s\" (kernel %s): no hardware "
                                   "is read; every value is labelled simulated=\"%s\"; tree in %s",
                       sim_machine(sim)->name, sim_kernel_name(sim_machine(sim)->kernel),
                       sim_machine(sim)->name, sim_root(sim));
                err = 0;
        } else if (conf.sysfs_root)
                env.sysfs_root = conf.sysfs_root;
        if (conf.proc_root)
                env.proc_root = conf.proc_root;
        if (sim) {
                /* sim_env() opened the PCI source on the simulated tree. */
        } else if (conf.pci_dump) {
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
                     PCIESCOPE_VERSION,
                     conf.pci_dump ? "dumped"
                     : sim         ? "the SIMULATED machine's"
                                   : "this machine's",
                     conf.pci_dump ? " from " : "", conf.pci_dump ? conf.pci_dump : "",
                     env.sysfs_root ? env.sysfs_root : "not used", pcie_policy_name(policy),
                     source);
        }
        /* PMUs need sysfs and perf on the machine itself; a dump has neither. */
        if (conf.collect_uncore)
                uncore_start();
        if (!conf.pci_dump)
                tune_start();
        if (conf.collect_pmu && !conf.pci_dump && pmu_start() < 0) {
                ERROR(PLUGIN_NAME " plugin: cannot start the PMU collectors: out of memory");
                return -1;
        }
        return plugin_register_read(PLUGIN_NAME, pcie_read);
}

static int pcie_shutdown(void)
{
        pmu_stop();
        ptt_tuner_free(tuner); /* puts the original tune values back */
        tuner = NULL;
        pcie_monitor_free(monitor);
        monitor = NULL;
        if (sim) {
                sim_close(sim); /* closes the PCI source it opened */
                sim = NULL;
        } else {
                pci_source_close(env.pci);
        }
        env.pci = NULL;
        bdf_filter_clear(&conf.endpoints);
        sfree(conf.simulate);
        sfree(conf.simulate_kernel);
        sfree(conf.machine_dir);
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
        hisi_pcie_opts_default(&conf.pmu);
        conf.collect_pmu = true;
        conf.retry_seconds = 30;
        conf.collect_iio = true;
        intel_iio_opts_default(&conf.iio);
        conf.collect_uncore = true;
        conf.collect_tune = true;
        conf.collect_trace = true;
        ptt_capture_opts_default(&conf.trace);
        conf.max_traces = 1;
        register_data_sets();
        plugin_register_complex_config(PLUGIN_NAME, pcie_config);
        plugin_register_init(PLUGIN_NAME, pcie_init);
        plugin_register_shutdown(PLUGIN_NAME, pcie_shutdown);
}
