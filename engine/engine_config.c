// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine_config.c - the option table and its setters. See engine_config.h.
 */
#include "engine_config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "calibration_file.h"
#include "pci_addr.h"
#include "sim.h"

#define OFF(field) offsetof(struct engine_config, field)

static int refuse(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t len, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static void *field(struct engine_config *c, const struct engine_option *o)
{
        return (char *)c + o->offset;
}

/* ---- plain setters: the kind was checked, store the value ---- */

static int set_bool(struct engine_config *c, const struct engine_option *o,
                    const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)n, (void)why, (void)len;
        *(bool *)field(c, o) = v->boolean;
        return 0;
}

static int set_string(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        char **dst = field(c, o), *copy = strdup(v->string);

        (void)n;
        if (!copy)
                return refuse(why, len, "out of memory");
        free(*dst);
        *dst = copy;
        return 0;
}

static int set_double(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)n, (void)why, (void)len;
        *(double *)field(c, o) = v->number;
        return 0;
}

/* The WHOLE/NUMBER checks have bounded the value, so these casts are
 * defined. */
static int set_u64(struct engine_config *c, const struct engine_option *o,
                   const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)n, (void)why, (void)len;
        *(uint64_t *)field(c, o) = (uint64_t)v->number;
        return 0;
}

static int set_uint(struct engine_config *c, const struct engine_option *o,
                    const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)n, (void)why, (void)len;
        *(unsigned int *)field(c, o) = (unsigned int)v->number;
        return 0;
}

static int set_size(struct engine_config *c, const struct engine_option *o,
                    const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)n, (void)why, (void)len;
        *(size_t *)field(c, o) = (size_t)v->number;
        return 0;
}

/* ---- setters that check more ---- */

static int set_device(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        int err = bdf_filter_add(&c->filter, v->string, !strcasecmp(o->name, "IgnoreDevice"));

        (void)n;
        if (err == -EINVAL)
                return refuse(why, len,
                              "not a BDF pattern like \"0000:3b:00.0\", \"3b:*.*\" or \"*:00.0\"");
        return err ? refuse(why, len, "%s", strerror(-err)) : 0;
}

static int set_endpoint(struct engine_config *c, const struct engine_option *o,
                        const struct engine_value *v, size_t n, char *why, size_t len)
{
        int err = bdf_filter_add(&c->endpoints, v->string, false);

        (void)o, (void)n;
        if (err)
                return refuse(why, len, "%s",
                              err == -EINVAL ? "not a BDF pattern" : strerror(-err));
        c->endpoints_given = true;
        return 0;
}

static int set_policy(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)o, (void)n;
        if (pcie_policy_parse(v->string, &c->monitor.policy))
                return refuse(why, len,
                              "not one of tune_off, default, safe, performance, peer2peer");
        c->monitor.policy_given = true;
        return 0;
}

static int set_min_mrrs(struct engine_config *c, const struct engine_option *o,
                        const struct engine_value *v, size_t n, char *why, size_t len)
{
        unsigned int bytes = (unsigned int)v->number;

        (void)o, (void)n;
        if (bytes & (bytes - 1))
                return refuse(why, len, "must be a power of two from 128 to 4096");
        c->monitor.audit.min_mrrs_bytes = bytes;
        return 0;
}

static int set_length_mode(struct engine_config *c, const struct engine_option *o,
                           const struct engine_value *v, size_t n, char *why, size_t len)
{
        static const char *const modes[] = {NULL, "payload", "header", "header+payload"};

        (void)o, (void)n;
        for (unsigned int m = 1; m <= 3; m++) {
                if (!strcasecmp(v->string, modes[m])) {
                        c->pmu.len_mode = m;
                        return 0;
                }
        }
        return refuse(why, len, "not one of payload, header, header+payload");
}

static int set_simulate_kernel(struct engine_config *c, const struct engine_option *o,
                               const struct engine_value *v, size_t n, char *why, size_t len)
{
        enum sim_kernel k;

        if (sim_kernel_parse(v->string, &k))
                return refuse(why, len, "not one of %s", sim_kernel_names());
        (void)o;
        return set_string(c, &(struct engine_option){.offset = OFF(simulate_kernel)}, v, n, why,
                          len);
}

/* AMDDFRootComplexBus 0 2 "0000:40" */
static int set_df_bus(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        struct amd_df_map *m = &c->amd_df.maps[c->amd_df.map_count];

        struct engine_value one[3];
        char bus[16];
        unsigned int sock, rc;
        int used = 0;

        (void)o;
        /* One text "SOCKET,RC,BUS" (--option, pcie.conf) is the same. */
        if (n == 1 && v[0].type == ENGINE_VALUE_STRING &&
            sscanf(v[0].string, "%u,%u,%15[0-9a-fA-F:]%n", &sock, &rc, bus, &used) == 3 &&
            !v[0].string[used]) {
                one[0] = (struct engine_value){.type = ENGINE_VALUE_NUMBER, .number = sock};
                one[1] = (struct engine_value){.type = ENGINE_VALUE_NUMBER, .number = rc};
                one[2] = (struct engine_value){.type = ENGINE_VALUE_STRING, .string = bus};
                v = one;
                n = 3;
        }
        if (n != 3 || v[0].type != ENGINE_VALUE_NUMBER || v[1].type != ENGINE_VALUE_NUMBER ||
            v[2].type != ENGINE_VALUE_STRING)
                return refuse(why, len,
                              "takes a socket, a root complex number and a root bus, e.g. "
                              "AMDDFRootComplexBus 0 2 \"0000:40\"");
        if (c->amd_df.map_count >= AMD_DF_MAX_MAPS)
                return refuse(why, len, "too many AMDDFRootComplexBus lines");
        if (!(v[0].number >= 0 && v[0].number <= 255) || v[0].number != floor(v[0].number))
                return refuse(why, len, "the socket must be a whole number from 0 to 255");
        if (!(v[1].number >= 0 && v[1].number < AMD_DF_ROOT_COMPLEXES) ||
            v[1].number != floor(v[1].number))
                return refuse(why, len, "the root complex must be a whole number from 0 to %d",
                              AMD_DF_ROOT_COMPLEXES - 1);
        if (amd_df_parse_bus(v[2].string, &m->domain, &m->bus))
                return refuse(why, len, "the root bus must be \"dddd:bb\" or \"bb\" in hex");
        m->socket = (unsigned int)v[0].number;
        m->rc = (unsigned int)v[1].number;
        m->calibrated = false;
        c->amd_df.map_count++;
        return 0;
}

static int set_df_locality(struct engine_config *c, const struct engine_option *o,
                           const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)o, (void)n;
        if (strcmp(v->string, "split") && strcmp(v->string, "combined"))
                return refuse(why, len, "not split or combined");
        c->amd_df.split_locality = !strcmp(v->string, "split");
        return 0;
}

/* IIOStackBus "uncore_iio_free_running_2" 0 "0000:15" */
static int set_stack_bus(struct engine_config *c, const struct engine_option *o,
                         const struct engine_value *v, size_t n, char *why, size_t len)
{
        struct intel_iio_map *m = &c->iio.maps[c->iio.map_count];

        (void)o;
        if (n != 3 || v[0].type != ENGINE_VALUE_STRING || v[1].type != ENGINE_VALUE_NUMBER ||
            v[2].type != ENGINE_VALUE_STRING)
                return refuse(why, len,
                              "takes a PMU name, a socket number and a root bus, e.g. "
                              "IIOStackBus \"uncore_iio_free_running_2\" 0 \"0000:15\"");
        if (c->iio.map_count >= INTEL_IIO_MAX_MAPS)
                return refuse(why, len, "too many IIOStackBus lines");
        if (!(v[1].number >= 0 && v[1].number <= 255) || v[1].number != floor(v[1].number))
                return refuse(why, len, "the socket must be a whole number from 0 to 255");
        if (strncmp(v[0].string, "uncore_iio_", 11) || strlen(v[0].string) >= sizeof(m->pmu))
                return refuse(why, len,
                              "the PMU must be an uncore_iio_free_running_<N> or uncore_iio_<N> "
                              "name");
        if (intel_iio_parse_bus(v[2].string, &m->domain, &m->bus))
                return refuse(why, len, "the root bus must be \"dddd:bb\" or \"bb\" in hex");
        snprintf(m->pmu, sizeof(m->pmu), "%s", v[0].string);
        m->socket = (unsigned int)v[1].number;
        c->iio.map_count++;
        return 0;
}

/* NvidiaPCIeRootPort 0 3 "0003:00:00.0" */
static int set_nvidia_port(struct engine_config *c, const struct engine_option *o,
                           const struct engine_value *v, size_t n, char *why, size_t len)
{
        struct engine_value three[3];
        unsigned int node, bit;
        char bdf[24], tail;
        struct pci_addr a;

        (void)o;
        /* One string "node bit BDF": the form `--option` gives. */
        if (n == 1 && v[0].type == ENGINE_VALUE_STRING &&
            sscanf(v[0].string, "%u %u \"%19[^\"]\" %c", &node, &bit, bdf, &tail) != 4 &&
            (sscanf(v[0].string, "%u %u \"%19[^\"]\"", &node, &bit, bdf) == 3 ||
             sscanf(v[0].string, "%u %u %19s %c", &node, &bit, bdf, &tail) == 3)) {
                three[0] = (struct engine_value){.type = ENGINE_VALUE_NUMBER, .number = node};
                three[1] = (struct engine_value){.type = ENGINE_VALUE_NUMBER, .number = bit};
                three[2] = (struct engine_value){.type = ENGINE_VALUE_STRING, .string = bdf};
                v = three;
                n = 3;
        }
        if (n != 3 || v[0].type != ENGINE_VALUE_NUMBER || v[1].type != ENGINE_VALUE_NUMBER ||
            v[2].type != ENGINE_VALUE_STRING)
                return refuse(why, len,
                              "takes a node, a root_port bit and a Root Port, e.g. "
                              "NvidiaPCIeRootPort 0 3 \"0003:00:00.0\"");
        if (!(v[0].number >= 0 && v[0].number <= 4095) || v[0].number != floor(v[0].number))
                return refuse(why, len, "the node must be a whole number from 0 to 4095");
        if (!(v[1].number >= 0 && v[1].number < NVIDIA_PCIE_PORT_BITS) ||
            v[1].number != floor(v[1].number))
                return refuse(why, len, "the bit must be a whole number from 0 to %d",
                              NVIDIA_PCIE_PORT_BITS - 1);
        if (pci_addr_parse(v[2].string, &a))
                return refuse(why, len, "the Root Port must be a BDF such as \"0003:00:00.0\"");
        if (nvidia_pcie_opts_map(&c->nvidia, (unsigned int)v[0].number, (unsigned int)v[1].number,
                                 &a, false))
                return refuse(why, len, "too many NvidiaPCIeRootPort lines (%d)",
                              NVIDIA_PCIE_MAX_MAPS);
        return 0;
}

/* Tune "qos_tx_p" 2: refused (not clamped) unless a known knob and 0..2. */
static int set_tune(struct engine_config *c, const struct engine_option *o,
                    const struct engine_value *v, size_t n, char *why, size_t len)
{
        enum ptt_knob knob;

        (void)o;
        if (n != 2 || v[0].type != ENGINE_VALUE_STRING || v[1].type != ENGINE_VALUE_NUMBER)
                return refuse(why, len,
                              "takes a tune file name and a level 0, 1 or 2, e.g. "
                              "Tune \"qos_tx_p\" 2");
        if (ptt_knob_parse(v[0].string, &knob))
                return refuse(why, len, "\"%s\" is not a tune file (%s)", v[0].string,
                              ptt_knob_names());
        if (ptt_tune_value_check(v[1].number))
                return refuse(why, len, "%s: %g is not a level (0, 1 or 2; nothing is clamped)",
                              v[0].string, v[1].number);
        if (c->tune_count >= ENGINE_MAX_TUNES)
                return refuse(why, len, "too many Tune lines");
        c->tunes[c->tune_count].knob = knob;
        c->tunes[c->tune_count].value = (unsigned int)v[1].number;
        c->tune_count++;
        return 0;
}

static int set_trace_bdf(struct engine_config *c, const struct engine_option *o,
                         const struct engine_value *v, size_t n, char *why, size_t len)
{
        struct ptt_capture_opts *t = &c->trace;
        bool port = !strcasecmp(o->name, "TraceRootPort");
        size_t *count = port ? &t->root_port_count : &t->requester_count;
        size_t max = port ? PTT_CAPTURE_MAX_PORTS : PTT_CAPTURE_MAX_REQUESTERS;
        struct pci_addr a;

        (void)n;
        if (pci_addr_parse(v->string, &a))
                return refuse(why, len, "not a BDF such as \"0000:00:10.0\"");
        if (*count >= max)
                return refuse(why, len, "too many");
        pci_addr_format(&a, port ? t->root_ports[*count] : t->requesters[*count]);
        (*count)++;
        return 0;
}

static int set_trace_type(struct engine_config *c, const struct engine_option *o,
                          const struct engine_value *v, size_t n, char *why, size_t len)
{
        static const char *const types[] = {"posted", "non-posted", "completion"};
        unsigned int mask = 0;

        (void)o;
        for (size_t i = 0; i < n; i++) {
                size_t t = 0;

                while (t < 3 &&
                       (v[i].type != ENGINE_VALUE_STRING || strcasecmp(v[i].string, types[t])))
                        t++;
                if (t == 3)
                        return refuse(why, len,
                                      "takes \"posted\", \"non-posted\" and/or \"completion\"");
                mask |= 1u << t;
        }
        if (!mask)
                return refuse(why, len, "names no TLP type");
        c->trace.type_mask = mask;
        return 0;
}

static int set_trace_direction(struct engine_config *c, const struct engine_option *o,
                               const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)o;
        if (n != 1 || v->type != ENGINE_VALUE_NUMBER || !(v->number >= 0 && v->number <= 3) ||
            v->number != floor(v->number))
                return refuse(why, len, "must be 0, 1, 2 or 3 (see docs/configuration.md)");
        c->trace.direction = (int)v->number;
        return 0;
}

static int set_trace_format(struct engine_config *c, const struct engine_option *o,
                            const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)o, (void)n;
        if (!strcasecmp(v->string, "4DW"))
                c->trace.format = PTT_FORMAT_4DW;
        else if (!strcasecmp(v->string, "8DW"))
                c->trace.format = PTT_FORMAT_8DW;
        else
                return refuse(why, len, "takes \"4DW\" or \"8DW\"");
        return 0;
}

/* The ENGINE_UNIT_* bit of the option called @name, or 0. */
static unsigned int unit_bit(const char *name)
{
        if (!strcasecmp(name, "FluxUnit"))
                return ENGINE_UNIT_FLUX;
        if (!strcasecmp(name, "LatencyClock"))
                return ENGINE_UNIT_LATENCY_CLOCK;
        if (!strcasecmp(name, "TraceClock"))
                return ENGINE_UNIT_TRACE_CLOCK;
        if (!strcasecmp(name, "TraceTimeMode"))
                return ENGINE_UNIT_TIME_MODE;
        return 0;
}

/* Sets option @name from the calibration file unless the configuration
 * gave it. */
static int apply_unit(struct engine_config *c, const char *name, double number, const char *text,
                      char *why, size_t whylen)
{
        int err;

        if (c->units_given & unit_bit(name))
                return 0;
        c->applying_calibration = true;
        err = text ? engine_config_set_string(c, name, text, why, whylen)
                   : engine_config_set_number(c, name, number, why, whylen);
        c->applying_calibration = false;
        if (err) {
                char inner[256];

                snprintf(inner, sizeof(inner), "%s", why);
                if (text)
                        snprintf(why, whylen, "%s: %s \"%s\": %s", c->calibration_file, name, text,
                                 inner);
                else
                        snprintf(why, whylen, "%s: %s %.17g: %s", c->calibration_file, name, number,
                                 inner);
        }
        return err;
}

/* The file's root_port bit, unless a NvidiaPCIeRootPort line maps it. */
static int apply_port_map(struct engine_config *c, const struct calibration_units *u, char *why,
                          size_t whylen)
{
        struct pci_addr a;

        for (size_t i = 0; i < c->nvidia.map_count; i++) {
                const struct nvidia_pcie_map *m = &c->nvidia.maps[i];

                if (m->node == u->port_map_node && m->bit == u->port_map_bit && !m->calibrated)
                        return 0;
        }
        if (pci_addr_parse(u->port_map_port, &a) ||
            nvidia_pcie_opts_map(&c->nvidia, u->port_map_node, u->port_map_bit, &a, true)) {
                snprintf(why, whylen, "%s: nvidia_port_map: cannot map bit %u of node %u to %s",
                         c->calibration_file, u->port_map_bit, u->port_map_node, u->port_map_port);
                return -EINVAL;
        }
        return 0;
}

/* The file's root bus -> root complex; a AMDDFRootComplexBus line for the
 * same bus wins in the collector (amd_df.c), whatever the order. */
static int apply_df_map(struct engine_config *c, const struct calibration_units *u, char *why,
                        size_t whylen)
{
        struct amd_df_map m = {.socket = u->df_socket,
                               .rc = u->df_rc,
                               .domain = u->df_domain,
                               .bus = u->df_bus,
                               .calibrated = true};
        int err = amd_df_opts_add_map(&c->amd_df, &m);

        if (err)
                snprintf(why, whylen,
                         "%s: amd_df_root_complex: cannot map root bus %04x:%02x to socket %u "
                         "io%u: %s",
                         c->calibration_file, (unsigned int)u->df_domain, u->df_bus, u->df_socket,
                         u->df_rc,
                         err == -ENOSPC ? "too many root bus mappings (64)" : "out of range");
        return err;
}

static int set_calibration_file(struct engine_config *c, const struct engine_option *o,
                                const struct engine_value *v, size_t n, char *why, size_t whylen)
{
        struct calibration_units u;
        int err = set_string(c, &(struct engine_option){.offset = OFF(calibration_file)}, v, n, why,
                             whylen);

        (void)o;
        if (err)
                return err;
        err = calibration_file_read(c->calibration_file, &u, why, whylen);
        if (!err && u.have_flux_unit)
                err = apply_unit(c, "FluxUnit", u.flux_unit_bytes, NULL, why, whylen);
        if (!err && u.have_latency_clock)
                err = apply_unit(c, "LatencyClock", u.latency_clock_hz, NULL, why, whylen);
        if (!err && u.have_trace_clock)
                err = apply_unit(c, "TraceClock", round(u.trace_clock_hz), NULL, why, whylen);
        if (!err && u.have_time_mode)
                err =
                    apply_unit(c, "TraceTimeMode", 0, ptt_time_mode_name(u.time_mode), why, whylen);
        if (!err && u.have_port_map)
                err = apply_port_map(c, &u, why, whylen);
        if (!err && u.have_df_map)
                err = apply_df_map(c, &u, why, whylen);
        return err;
}

static int set_time_mode(struct engine_config *c, const struct engine_option *o,
                         const struct engine_value *v, size_t n, char *why, size_t len)
{
        (void)o, (void)n;
        if (ptt_time_mode_parse(v->string, &c->trace.time_mode))
                return refuse(why, len, "not delta or absolute");
        return 0;
}

/* Detail: one level for every source (sample.h says what each keeps). */
static int set_detail(struct engine_config *c, const struct engine_option *o,
                      const struct engine_value *v, size_t n, char *why, size_t len)
{
        enum pcie_detail d;

        (void)o, (void)n;
        if (pcie_detail_parse(v->string, &d))
                return refuse(why, len, "not basic, default or full");
        c->detail = d;
        c->monitor.detail = d;
        c->pmu.detail = d;
        c->trace.detail = d;
        c->iio.detail = d;
        c->dwc.detail = d;
        c->amd_df.detail = d;
        c->nvidia.detail = d;
        return 0;
}

/* ---- the table ---- */

static const struct engine_option options[] = {
    {.name = "SysfsRoot",
     .kind = ENGINE_OPT_DIRECTORY,
     .set = set_string,
     .offset = OFF(sysfs_root),
     .value_text = "directory",
     .default_text = "`/sys`",
     .help = "sysfs root: PCI config files (`bus/pci/devices/*/config`), `numa_node`, AER "
             "statistics. For tests and containers with the host's sysfs mounted elsewhere."},
    {.name = "ProcRoot",
     .kind = ENGINE_OPT_DIRECTORY,
     .set = set_string,
     .offset = OFF(proc_root),
     .value_text = "directory",
     .default_text = "`/proc`",
     .help = "procfs root: `cmdline` for the MPS/MRRS policy in force."},
    {.name = "PCIDump",
     .kind = ENGINE_OPT_FILE,
     .set = set_string,
     .offset = OFF(pci_dump),
     .value_text = "file",
     .default_text = "unset",
     .help = "read configuration space from an `lspci -x/-xxx/-xxxx` dump instead of this machine "
             "(libpci dump method). sysfs/procfs are then used only if `SysfsRoot`/`ProcRoot` are "
             "given."},
    {.name = "Device",
     .kind = ENGINE_OPT_STRING,
     .set = set_device,
     .value_text = "BDF pattern",
     .default_text = "all",
     .help = "only report these functions (repeatable). Pattern: `[domain:]bus:dev.func`, each "
             "field hex, `*`, or with `?` per digit: `\"0000:3b:00.0\"`, `\"3b:*.*\"`, "
             "`\"*:00.0\"`. Without a domain, any domain matches."},
    {.name = "IgnoreDevice",
     .kind = ENGINE_OPT_STRING,
     .set = set_device,
     .value_text = "BDF pattern",
     .default_text = "none",
     .help = "never report these functions (repeatable; wins over `Device`). The audit still sees "
             "the whole tree."},
    {.name = "Detail",
     .kind = ENGINE_OPT_STRING,
     .set = set_detail,
     .value_text = "`basic`, `default`, `full`",
     .default_text = "`default`",
     .help = "how many series to publish "
             "([docs/metrics.md](metrics.md#series-budget-and-the-detail-option) has "
             "the budget of each level): `basic` what the alert rules and the fleet overview "
             "need; `default` adds per-endpoint bandwidth, TLP length, PTT requesters and "
             "quantiles, AER counters per error type once they have counted, and the MPS policy "
             "predictions that differ from the configured MPS (at most 1,500 series on a "
             "2-socket Kunpeng 930); `full` every series: raw PMU and IIO counters, coverage per "
             "measurement, every AER type and policy, MPS supported/path best, payload "
             "efficiency, maximum link capacity, the first-completion latency histogram."},
    {.name = "CollectLink",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(monitor.collect_link),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "link speed, width, capacity, up, downtrained, changes."},
    {.name = "CollectAudit",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(monitor.collect_audit),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "MPS/MRRS values, findings, per-policy MPS, payload efficiency, the policy in force."},
    {.name = "CollectAER",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(monitor.collect_aer),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "AER counters from sysfs (kernel 4.19+)."},
    {.name = "CollectInfo",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(monitor.collect_info),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "`pcie_device_info` with ids, names, port type, parent, Root Port, NUMA node."},
    {.name = "ResolveNames",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(monitor.names),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "vendor/device names from pci.ids (libpci)."},
    {.name = "MPSPolicy",
     .kind = ENGINE_OPT_STRING,
     .set = set_policy,
     .value_text = "`tune_off`, `default`, `safe`, `performance`, `peer2peer`",
     .default_text = "from `cmdline`",
     .help = "audit as if this policy were in force (e.g. for a dump from another machine)."},
    {.name = "HighBandwidthThreshold",
     .kind = ENGINE_OPT_NUMBER,
     .min = 0,
     .max = 1e15,
     .set = set_u64,
     .offset = OFF(monitor.audit.high_bandwidth_bytes),
     .value_text = "bytes/s",
     .default_text = "`3938461538` (8 GT/s x4)",
     .help = "endpoints whose maximum link capacity per direction reaches this are flagged when "
             "MRRS < `MinReadRequestSize`."},
    {.name = "MinReadRequestSize",
     .kind = ENGINE_OPT_WHOLE,
     .min = 128,
     .max = 4096,
     .set = set_min_mrrs,
     .value_text = "bytes, power of two 128..4096",
     .default_text = "`512`",
     .help = "the MRRS below which a high-bandwidth endpoint gets a warning."},
    {.name = "CollectPMU",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_pmu),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "count with the HiSilicon PCIe PMUs (`hisi_pcie<sicl>_core<core>`), one collector "
             "thread per PCIe core. Off by itself when there is no such PMU, and with `PCIDump`."},
    {.name = "PMUPortBandwidth",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(pmu.port_bandwidth),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "per Root Port: the flux/time pairs rx/tx × mwr/mrd/cpl the kernel offers (6 on Linux "
             "6.9+, 2 on 6.2, 2 renamed ones on 5.17)."},
    {.name = "PMULatency",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(pmu.latency),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "per Root Port: average latency of inbound MWr, inbound MRd (device DMA reads) and "
             "outbound MRd (CPU MMIO reads)."},
    {.name = "PMUTLPLength",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(pmu.tlp_length),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "per Root Port: inbound MWr bandwidth of TLPs shorter than 64, 128, 256 and 512 bytes "
             "(`thr_len`/`thr_mode` filters)."},
    {.name = "PMUEndpoints",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(pmu.endpoints),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "per endpoint (requester `bdf` filter): DMA writes (`rx_mwr`) and the data of DMA "
             "reads (`tx_cpl`)."},
    {.name = "Endpoint",
     .kind = ENGINE_OPT_STRING,
     .set = set_endpoint,
     .value_text = "BDF pattern",
     .default_text = "all",
     .help = "measure only these endpoints (repeatable) and publish all of them; without it every "
             "endpoint below the PMU's ports is measured in rotation and the `TopTalkers` busiest "
             "are published."},
    {.name = "TopTalkers",
     .kind = ENGINE_OPT_WHOLE,
     .min = 0,
     .max = 1000,
     .set = set_size,
     .offset = OFF(pmu.top_talkers),
     .value_text = "0..1000",
     .default_text = "`5`",
     .help = "endpoints published per PCIe core when no `Endpoint` is given."},
    {.name = "FluxUnit",
     .kind = ENGINE_OPT_NUMBER,
     .min = CALIB_FLUX_UNIT_MIN,
     .max = CALIB_FLUX_UNIT_MAX,
     .set = set_double,
     .offset = OFF(pmu.flux_unit_bytes),
     .value_text = "bytes, 1..4096",
     .default_text = "`4`",
     .help =
         "bytes per `*_flux` count. Undocumented by HiSilicon; one DW is our assumption (the "
         "length filters count in DW). With `Detail \"full\"` the raw counters are exported "
         "too, so a different unit can be applied later. The range is what is plausible: a count "
         "of at least a byte and at most one 4096-byte payload (from a `CalibrationFile` "
         "too)."},
    {.name = "LatencyClock",
     .kind = ENGINE_OPT_NUMBER,
     .min = CALIB_CLOCK_MIN_HZ,
     .max = CALIB_CLOCK_MAX_HZ,
     .set = set_double,
     .offset = OFF(pmu.latency_clock_hz),
     .value_text = "Hz, 1e6..1e10",
     .default_text = "`1000000000`",
     .help =
         "clock of the `*_latency` cycles, to turn them into seconds. Undocumented; with "
         "`Detail \"full\"` the cycles are exported too (`pcie_port_latency_cycles`). The range "
         "is what is plausible for a clock of PCIe logic, 1 MHz to 10 GHz (from a "
         "`CalibrationFile` too)."},
    {.name = "CalibrationFile",
     .kind = ENGINE_OPT_FILE,
     .set = set_calibration_file,
     .value_text = "file",
     .default_text = "none",
     .help = "a file written by `pciescope calibrate` on this machine: its consistent results set "
             "`FluxUnit`, `LatencyClock`, `TraceClock` and `TraceTimeMode`, a Grace `root_port` "
             "bit's Root Port or an AMD root bus's IO root complex; any of these options given "
             "explicitly wins, wherever it stands. Repeatable: the maps of several files add up "
             "(one run per Root Port or root bus). See "
             "[docs/real-hardware.md](real-hardware.md)."},
    {.name = "LengthMode",
     .kind = ENGINE_OPT_STRING,
     .set = set_length_mode,
     .value_text = "`payload`, `header`, `header+payload`",
     .default_text = "`header+payload`",
     .help = "what the bandwidth counters add up (`len_mode`, Linux 6.2+; before 6.12 `header` "
             "counts header+payload, a driver limitation). With `header` counted alone (6.12+) "
             "no payload is known, so `capacity=\"effective\"` utilisation is not published "
             "([metrics.md](metrics.md#utilisation-one-definition-for-every-vendor))."},
    {.name = "PMURetryInterval",
     .kind = ENGINE_OPT_NUMBER,
     .min = 1,
     .max = 86400,
     .set = set_double,
     .offset = OFF(retry_seconds),
     .value_text = "seconds",
     .default_text = "`30`",
     .help = "when a core's counters are busy (EBUSY: another perf user) or the file limit is hit "
             "(EMFILE), try again after this long."},
    {.name = "Simulate",
     .kind = ENGINE_OPT_STRING,
     .set = set_string,
     .offset = OFF(simulate),
     .value_text = "machine name or file",
     .default_text = "unset",
     .help = "run the whole plugin on a SIMULATED machine (see "
             "[docs/simulator.md](simulator.md)): `kunpeng930-2p`, `kunpeng930-misconfig`, or "
             "a description file. Logged at startup; every value gets the label "
             "`simulated=\"<machine>\"` and `pcie_simulation_info` is published. Not combinable "
             "with `SysfsRoot`/`ProcRoot`/`PCIDump`."},
    {.name = "SimulateKernel",
     .kind = ENGINE_OPT_STRING,
     .set = set_simulate_kernel,
     .value_text = "`5.17`, `6.2`, `6.9`, `6.12`, `6.15`",
     .default_text = "the description's",
     .help = "which kernel's drivers the simulation publishes and enforces (hisi_pcie event sets; "
             "Intel IIO scale and `bw_out` events)."},
    {.name = "CollectIIO",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_iio),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "count PCIe bandwidth with the Intel uncore IIO free-running PMUs "
             "(`uncore_iio_free_running_<N>`), one collector thread per socket. Off by itself when "
             "there is no such PMU, and with `PCIDump`."},
    {.name = "CollectDWCPCIe",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_dwc),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "count Root Port payload bandwidth with the Synopsys DesignWare PCIe PMUs "
             "(`dwc_rootport_<sbdf>`, Linux 6.8 on: Alibaba Yitian 710 and other DWC servers), one "
             "collector thread for all; rx and tx take turns on each port's one counter, half an "
             "interval each. Off by itself when there is no such PMU, and with `PCIDump`."},
    {.name = "IIOStackBus",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_stack_bus,
     .value_text = "PMU name, socket, root bus",
     .default_text = "none",
     .help =
         "`IIOStackBus \"uncore_iio_free_running_2\" 0 \"0000:15\"`: the root bus of an IIO stack "
         "on a socket (physical package id), where neither `die<N>` files nor the uncore's CPU "
         "bus registers map it, or to correct them (Sapphire Rapids on). Part P of the stack is "
         "then the Root Port at device P+1 of that bus. The PMU may also be named "
         "`uncore_iio_<N>`. Repeatable (64). Overrides a `die<N>` file and the registers."},
    {.name = "IIOScaleFix",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(iio.scale_fix),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "where the kernel's `bw_in_port*` scale says 4 bytes per count on a CPU that counts "
             "32 (SPR, EMR, ICX, SNR before the v6.15 fix 506f981ab40f), use 32 and log a NOTICE. "
             "`false` keeps the kernel's scale."},
    {.name = "IIOBandwidthOut",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(iio.bw_out),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "publish `bw_out_port*` estimates where the kernel still offers them (before v6.15; "
             "the kernel then dropped them because the step depends on the request size)."},
    {.name = "CollectAMDDF",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_amd_df),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "count upstream DMA bytes per IO root complex with the AMD data fabric PMU "
             "(`amd_df`, EPYC 9005 / family 1Ah), one collector thread per socket. Off by itself "
             "on other CPUs, without the PMU, and with `PCIDump`."},
    {.name = "AMDDFRootComplexBus",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_df_bus,
     .value_text = "socket, root complex, root bus",
     .default_text = "none",
     .help = "`AMDDFRootComplexBus 0 2 \"0000:40\"` (or the one text `\"0,2,0000:40\"`, as "
             "`--option` takes it): PCI root bus `0000:40` belongs to IO root "
             "complex 2 of socket 0 (AMD does not publish this mapping: take it from the PPR or "
             "from a known load, [metrics.md](metrics.md#amd-data-fabric-root-complexes)). A "
             "mapped root complex gets `root_bus` and a utilisation against the links of its "
             "Root Ports. Repeatable (64; several buses per root complex). A `CalibrationFile` "
             "from `pciescope calibrate` can supply it (one root bus per file); a line here for "
             "the same root bus wins. `pcie_df_root_complex_info{mapping=...}` says which "
             "mapping each root complex uses."},
    {.name = "AMDDFCounters",
     .kind = ENGINE_OPT_WHOLE,
     .min = 2,
     .max = 64,
     .set = set_uint,
     .offset = OFF(amd_df.counters),
     .value_text = "2..64",
     .default_text = "`8`",
     .help = "data fabric counters pciescope may hold per socket (each measurement takes two: "
             "read and write beats). Fewer than the measurements: they rotate every interval and "
             "`pcie_pmu_coverage_ratio` says how much of the time each counted. The fabric's "
             "counters are shared with DRAM and xGMI tools."},
    {.name = "AMDDFLocality",
     .kind = ENGINE_OPT_STRING,
     .set = set_df_locality,
     .value_text = "`split`, `combined`",
     .default_text = "`split`",
     .help = "`split` counts DMA to local and to remote memory apart (label `locality`: 16 "
             "measurements per socket); `combined` counts both with one pair (`locality=\"any\"`, "
             "8 measurements, twice the coverage)."},
    {.name = "CollectNvidiaPCIe",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_nvidia),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "count DMA bytes, requests and read latency per Root Port with the NVIDIA Grace "
             "PCIe PMUs (`nvidia_pcie_pmu_<node>`), one collector thread per socket, one Root Port "
             "per interval in turn. Off by itself when there is no such PMU, with `PCIDump`, and "
             "with `CollectPMU false`."},
    {.name = "NvidiaPCIeRootPort",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_nvidia_port,
     .value_text = "node, bit, Root Port",
     .default_text = "bit N is the Root Port on PCI segment 16 x node + N",
     .help = "`NvidiaPCIeRootPort 0 3 \"0003:00:00.0\"`: the Root Port that bit 3 of "
             "`nvidia_pcie_pmu_0`'s `root_port` filter selects (the kernel does not publish the "
             "table). Repeatable (64); a bit named here is not mapped by the default; a "
             "`CalibrationFile` from `pciescope calibrate` can supply it. "
             "`pcie_pmu_port_info{mapping=...}` says which mapping each port uses. "
             "`--option 'NvidiaPCIeRootPort=0 3 0003:00:00.0'` on the command line."},
    {.name = "CollectUncoreInventory",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_uncore),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "read the Intel PMON discovery tables once at start and publish them as "
             "`pcie_uncore_discovery_info` and `pcie_uncore_units` (needs root; nothing on other "
             "machines)."},
    {.name = "Tune",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_tune,
     .value_text = "tune file name, level",
     .default_text = "none",
     .help = "`Tune \"qos_tx_p\" 2`: set a HiSilicon PTT tune knob on every `hisi_ptt*` device at "
             "start: `qos_tx_cpl`, `qos_tx_np`, `qos_tx_p` (weights of outbound completions, "
             "non-posted and posted TLPs), `rx_alloc_buf_level`, `tx_alloc_buf_level` (buffer "
             "watermarks for inbound and outbound requests), level 0, 1 or 2 (the hardware's rough "
             "levels; HiSilicon advises keeping the defaults in most cases). A negative, "
             "fractional or larger value, or another name (the seed document's `qos_tx_dp`, "
             "`tx_path_*_alloc_buf_level` are not the driver's), fails the configuration: nothing "
             "is clamped. Each device's original value is read first and written back at shutdown. "
             "Repeatable (32). Nothing is written unless configured."},
    {.name = "CollectTune",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_tune),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "read the five tune files of every PTT device each interval as `pcie_ptt_tune`."},
    {.name = "CollectTrace",
     .kind = ENGINE_OPT_BOOLEAN,
     .set = set_bool,
     .offset = OFF(collect_trace),
     .value_text = "boolean",
     .default_text = "`true`",
     .help = "short trace windows on every HiSilicon PTT device (`hisi_ptt<sicl>_<core>`), one "
             "collector thread per device, decoded into the `pcie_ptt_*` metrics. Off by itself "
             "when there is no such device, and with `PCIDump`."},
    {.name = "TraceRootPort",
     .kind = ENGINE_OPT_STRING,
     .set = set_trace_bdf,
     .value_text = "BDF",
     .default_text = "all ports",
     .help = "trace the TLPs of this Root Port (repeatable, 16; checked against the device's "
             "`root_port_filters/`; a device that does not cover it logs an ERROR and stays off, "
             "the others go on)."},
    {.name = "TraceRequester",
     .kind = ENGINE_OPT_STRING,
     .set = set_trace_bdf,
     .value_text = "BDF",
     .default_text = "none",
     .help = "trace one requester instead of ports (checked against `requester_filters/`); only "
             "one: the hardware filters one requester at a time."},
    {.name = "TraceType",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_trace_type,
     .value_text = "`posted`, `non-posted`, `completion` (one or more)",
     .default_text = "all three",
     .help = "TLP types to record (the doc allows one type for outbound traces; the driver accepts "
             "several, which is logged as a NOTICE)."},
    {.name = "TraceDirection",
     .kind = ENGINE_OPT_SPECIAL,
     .set = set_trace_direction,
     .value_text = "0..3",
     .default_text = "`2`",
     .help = "the driver's direction setting: 4DW 0 inbound P/NP/CPL, 1 outbound, 2 outbound + "
             "inbound P/NP/CPL-B (DMA reads and their completions: latency matching), 3 outbound + "
             "inbound CPL-A (CPU reads and their completions); 8DW 1 outbound, 2 inbound CPL-B "
             "side, 3 inbound CPL-A (one side only: no matching)."},
    {.name = "TraceFormat",
     .kind = ENGINE_OPT_STRING,
     .set = set_trace_format,
     .value_text = "`4DW`, `8DW`",
     .default_text = "`4DW`",
     .help = "entry format (8DW keeps the whole header and the TLP prefix; 4DW halves the data and "
             "keeps an 11-bit time)."},
    {.name = "TraceDuration",
     .kind = ENGINE_OPT_NUMBER,
     .min = 0.001,
     .max = 3600,
     .set = set_double,
     .offset = OFF(trace.duration_s),
     .value_text = "seconds",
     .default_text = "`0.1`",
     .help = "length of a window."},
    {.name = "TracePeriod",
     .kind = ENGINE_OPT_NUMBER,
     .min = 0.01,
     .max = 86400,
     .set = set_double,
     .offset = OFF(trace.period_s),
     .value_text = "seconds",
     .default_text = "`10`",
     .help = "a window every this long per device, staggered across devices (device i of n starts "
             "at i·Period/n)."},
    {.name = "TraceBufferSize",
     .kind = ENGINE_OPT_WHOLE,
     .min = 1,
     .max = 17179869184.0,
     .set = set_u64,
     .offset = OFF(trace.aux_bytes),
     .value_text = "bytes",
     .default_text = "`16777216`",
     .help = "the AUX area: a power of two, at least 16 MiB (the driver's 4 buffers of 4 MiB). "
             "Counts against the locked-memory limit unless root."},
    {.name = "MaxConcurrentTraces",
     .kind = ENGINE_OPT_WHOLE,
     .min = 1,
     .max = 1024,
     .set = set_uint,
     .offset = OFF(max_traces),
     .value_text = "count",
     .default_text = "`1`",
     .help = "at most this many AUX areas mapped at once over all devices (memory bound); a window "
             "that finds none free is skipped and counted (`result=\"no_budget\"`)."},
    {.name = "TraceTimeMode",
     .kind = ENGINE_OPT_STRING,
     .set = set_time_mode,
     .value_text = "`delta`, `absolute`",
     .default_text = "`delta`",
     .help = "how the entries' undocumented Time field counts: ticks since the previous entry (the "
             "kernel doc's example: a large first value, then 2, 2...) or a free-running counter "
             "(11 bits in 4DW, 32 in 8DW, wraps handled). See [docs/ptt.md](ptt.md)."},
    {.name = "TraceClock",
     .kind = ENGINE_OPT_WHOLE,
     .min = CALIB_CLOCK_MIN_HZ,
     .max = CALIB_CLOCK_MAX_HZ,
     .set = set_u64,
     .offset = OFF(trace.clock_hz),
     .value_text = "Hz, 1e6..1e10",
     .default_text = "`100000000`",
     .help = "ticks per second of the Time field (undocumented; 100 MHz is an assumption, also the "
             "simulator's); latencies in seconds scale with it. The range is what is plausible for "
             "a clock of PCIe logic, 1 MHz to 10 GHz (from a `CalibrationFile` too)."},
    {.name = "TraceTopRequesters",
     .kind = ENGINE_OPT_WHOLE,
     .min = 0,
     .max = 4096,
     .set = set_uint,
     .offset = OFF(trace.top_n),
     .value_text = "0..4096",
     .default_text = "`16`",
     .help = "requesters published by BDF per device, the rest as `other` (bounded label "
             "cardinality)."},
    {.name = "MachineDirectory",
     .kind = ENGINE_OPT_DIRECTORY,
     .set = set_string,
     .offset = OFF(machine_dir),
     .value_text = "directory",
     .default_text = "`/usr/share/pciescope/machines`",
     .help = "where `Simulate` looks up machine names."},
};

const struct engine_option *engine_options(size_t *count)
{
        *count = sizeof(options) / sizeof(options[0]);
        return options;
}

const struct engine_option *engine_option_find(const char *name)
{
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
                if (!strcasecmp(options[i].name, name))
                        return &options[i];
        return NULL;
}

int engine_config_init(struct engine_config *c)
{
        memset(c, 0, sizeof(*c));
        pcie_monitor_opts_default(&c->monitor);
        hisi_pcie_opts_default(&c->pmu);
        c->collect_pmu = true;
        c->retry_seconds = 30;
        c->collect_iio = true;
        intel_iio_opts_default(&c->iio);
        c->collect_amd_df = true;
        amd_df_opts_default(&c->amd_df);
        c->collect_nvidia = true;
        nvidia_pcie_opts_default(&c->nvidia);
        c->collect_uncore = true;
        c->collect_dwc = true;
        c->collect_tune = true;
        c->collect_trace = true;
        ptt_capture_opts_default(&c->trace);
        c->max_traces = 1;
        return 0;
}

void engine_config_clear(struct engine_config *c)
{
        free(c->sysfs_root);
        free(c->proc_root);
        free(c->pci_dump);
        free(c->simulate);
        free(c->simulate_kernel);
        free(c->machine_dir);
        free(c->calibration_file);
        bdf_filter_clear(&c->filter);
        bdf_filter_clear(&c->endpoints);
        memset(c, 0, sizeof(*c));
}

/* The checks of the option's kind, before its setter runs. */
static int check_kind(const struct engine_option *o, const struct engine_value *v, size_t n,
                      char *why, size_t len)
{
        struct stat st;

        if (o->kind == ENGINE_OPT_SPECIAL)
                return 0;
        if (o->kind == ENGINE_OPT_BOOLEAN) {
                if (n != 1 || v->type != ENGINE_VALUE_BOOLEAN)
                        return refuse(why, len,
                                      "takes exactly one boolean argument (true or false)");
                return 0;
        }
        if (o->kind == ENGINE_OPT_NUMBER || o->kind == ENGINE_OPT_WHOLE) {
                bool whole = o->kind == ENGINE_OPT_WHOLE;

                if (n != 1 || v->type != ENGINE_VALUE_NUMBER)
                        return refuse(why, len, "takes exactly one number");
                /* NaN and infinities fail every comparison below. */
                if (!(o->min_exclusive ? v->number > o->min : v->number >= o->min) ||
                    !(v->number <= o->max) || (whole && v->number != floor(v->number)))
                        return refuse(why, len, "must be %s%s %g%s %g",
                                      whole ? "a whole number " : "",
                                      o->min_exclusive ? "above" : "from", o->min,
                                      o->min_exclusive ? " and at most" : " to", o->max);
                return 0;
        }
        if (n != 1 || v->type != ENGINE_VALUE_STRING)
                return refuse(why, len, "takes exactly one string argument");
        if (o->kind == ENGINE_OPT_DIRECTORY || o->kind == ENGINE_OPT_FILE) {
                if (stat(v->string, &st) < 0)
                        return refuse(why, len, "%s", strerror(errno));
                if (o->kind == ENGINE_OPT_DIRECTORY && !S_ISDIR(st.st_mode))
                        return refuse(why, len, "not a directory");
                if (o->kind == ENGINE_OPT_FILE && !S_ISREG(st.st_mode))
                        return refuse(why, len, "not a regular file");
        }
        return 0;
}

int engine_config_set(struct engine_config *c, const char *key, const struct engine_value *v,
                      size_t n, char *why, size_t whylen)
{
        const struct engine_option *o = engine_option_find(key);
        int err;

        if (!o) {
                snprintf(why, whylen, "unknown option");
                return -ENOENT;
        }
        err = check_kind(o, v, n, why, whylen);
        if (!err)
                err = o->set(c, o, v, n, why, whylen);
        /* A unit the configuration gives wins over a calibration file. */
        if (!err && !c->applying_calibration)
                c->units_given |= unit_bit(o->name);
        return err;
}

int engine_config_set_string(struct engine_config *c, const char *key, const char *value, char *why,
                             size_t whylen)
{
        struct engine_value v = {.type = ENGINE_VALUE_STRING, .string = value};

        return engine_config_set(c, key, &v, 1, why, whylen);
}

int engine_config_set_number(struct engine_config *c, const char *key, double value, char *why,
                             size_t whylen)
{
        struct engine_value v = {.type = ENGINE_VALUE_NUMBER, .number = value};

        return engine_config_set(c, key, &v, 1, why, whylen);
}

int engine_config_set_boolean(struct engine_config *c, const char *key, bool value, char *why,
                              size_t whylen)
{
        struct engine_value v = {.type = ENGINE_VALUE_BOOLEAN, .boolean = value};

        return engine_config_set(c, key, &v, 1, why, whylen);
}

int engine_config_check(const struct engine_config *c, char *why, size_t whylen)
{
        if (c->simulate && (c->sysfs_root || c->proc_root || c->pci_dump))
                return refuse(why, whylen,
                              "option Simulate \"%s\": cannot be combined with SysfsRoot, "
                              "ProcRoot or PCIDump (the simulation brings its own)",
                              c->simulate);
        if (c->collect_trace) {
                char trace_why[256] = "";

                if (ptt_capture_opts_check(&c->trace, trace_why, sizeof(trace_why)))
                        return refuse(why, whylen, "PTT trace options: %s", trace_why);
        }
        if (c->simulate_kernel && !c->simulate)
                return refuse(why, whylen, "option SimulateKernel: only with Simulate");
        return 0;
}

void engine_options_markdown(void (*write)(void *ctx, const char *text), void *ctx)
{
        char line[4096];

        write(ctx, "| option | argument | default | meaning |\n|---|---|---|---|\n");
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
                snprintf(line, sizeof(line), "| `%s` | %s | %s | %s |\n", options[i].name,
                         options[i].value_text, options[i].default_text, options[i].help);
                write(ctx, line);
        }
}
