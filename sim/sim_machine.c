// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_machine.c - read and validate the JSON description of a simulated
 * machine (format: docs/simulator.md).
 *
 * The loader is strict on purpose: every key must be known, every number is
 * range-checked, every device states its BDF, and the topology must be one a
 * kernel could have enumerated (bus numbers nested, one device per link,
 * distinct port bits per PCIe core). Every error names the file, the JSON
 * path of the element and the problem. Nothing here writes files.
 *
 * This file is the top level (SICLs, injections, the machine, the public
 * functions); the rest of the reader is split by concern: machine_json.c
 * (JSON access, the field tables and the array walker), machine_pci.c (the
 * PCI tree), machine_pmu.c (PCIe cores with their PMU/PTT functions, the
 * Intel uncore) and machine_workload.c, sharing machine_internal.h.
 */
#define _GNU_SOURCE
#include "machine_internal.h"
#include "sim_events.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- SICLs, the machine ---- */

/* "0-31,64-95" into the owner map; *first receives the lowest CPU. */
static int parse_cpulist(struct ctx *c, json_object *v, const char *path, unsigned int sicl_index,
                         int *first)
{
        char buf[SIM_TEXT_MAX];
        const char *s = buf;
        unsigned int cpus = c->m->cpus;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        *first = -1;
        while (*s) {
                unsigned long a, b;
                char *end;

                if (*s < '0' || *s > '9')
                        return fail(c, path, "\"%s\" is not a CPU list such as \"0-31,64-95\"",
                                    buf);
                a = strtoul(s, &end, 10);
                b = a;
                s = end;
                if (*s == '-') {
                        s++;
                        if (*s < '0' || *s > '9')
                                return fail(c, path,
                                            "\"%s\" is not a CPU list such as \"0-31,64-95\"", buf);
                        b = strtoul(s, &end, 10);
                        s = end;
                }
                if (*s == ',' && s[1])
                        s++;
                else if (*s)
                        return fail(c, path, "\"%s\" is not a CPU list such as \"0-31,64-95\"",
                                    buf);
                if (a > b)
                        return fail(c, path, "range %lu-%lu runs backwards", a, b);
                if (b >= cpus)
                        return fail(c, path, "CPU %lu does not exist (the machine has %u CPUs)", b,
                                    cpus);
                for (unsigned long cpu = a; cpu <= b; cpu++) {
                        if (c->cpu_owner[cpu] && c->cpu_owner[cpu] != sicl_index + 1)
                                return fail(c, path, "CPU %lu is also listed by sicls[%u]", cpu,
                                            (unsigned int)c->cpu_owner[cpu] - 1);
                        c->cpu_owner[cpu] = (unsigned char)(sicl_index + 1);
                        if (*first < 0 || (int)cpu < *first)
                                *first = (int)cpu;
                }
        }
        if (*first < 0)
                return fail(c, path, "empty CPU list");
        return 0;
}

/* The SICL the cores of its "cores" array belong to. */
struct sicl_at {
        unsigned int id;
        int numa, first_cpu;
};

static int parse_sicl_core(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct sicl_at *at = arg;

        (void)i;
        return parse_core(c, o, path, at->id, at->numa, at->first_cpu);
}

static int parse_rcieps(struct ctx *c, json_object *v, const char *path, int numa)
{
        struct placement rc = {
            .kind = SIM_RCIEP, .parent = SIM_NONE, .core = SIM_NONE, .numa = numa};

        return read_array(c, v, path, SIM_MAX_DEVICES, NULL, parse_placed, &rc);
}

/* One entry of "sicls" (@arg: the SICL ids so far). */
static int parse_sicl(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        unsigned int *ids = arg;
        static const char *const keys[] = {"id", "numa_node", "cpus", "cores", "rcieps", NULL};
        char p[PATH_LEN];
        json_object *v;
        int first_cpu = -1;
        long long id, numa;
        const struct field fid[] = {
            F_INT("id", id, 0, 0xffff, .missing = "the <sicl> in hisi_pcie<sicl>_core<core>"),
        };
        const struct field fnuma[] = {
            F_INT("numa_node", numa, -1, 1023,
                  .missing = "the NUMA node its devices report, -1 for none"),
        };
        int r;

        r = READ_OBJECT(c, o, path, "a SICL", keys, fid);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (unsigned int i = 0; i < index; i++) {
                if (ids[i] == (unsigned int)id)
                        return fail(c, p, "SICL %lld is already described by sicls[%u]", id, i);
        }
        ids[index] = (unsigned int)id;
        r = READ_FIELDS(c, o, path, fnuma);
        if (r)
                return r;
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (v) {
                r = parse_cpulist(c, v, p, index, &first_cpu);
                if (r)
                        return r;
        }
        v = field_at(o, path, "cores", p, sizeof(p));
        if (v) {
                struct sicl_at at = {(unsigned int)id, (int)numa, first_cpu};

                r = read_array(c, v, p, SIM_MAX_CORES, NULL, parse_sicl_core, &at);
                if (r)
                        return r;
        }
        v = field_at(o, path, "rcieps", p, sizeof(p));
        if (v) {
                r = parse_rcieps(c, v, p, (int)numa);
                if (r)
                        return r;
        }
        return 0;
}

static const struct {
        const char *name;
        int err;
} errno_names[] = {
    {"EPERM", EPERM},   {"ENOENT", ENOENT}, {"EIO", EIO},       {"ENXIO", ENXIO},
    {"E2BIG", E2BIG},   {"EBADF", EBADF},   {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},
    {"EACCES", EACCES}, {"EFAULT", EFAULT}, {"EBUSY", EBUSY},   {"ENODEV", ENODEV},
    {"EINVAL", EINVAL}, {"EMFILE", EMFILE}, {"ENOSPC", ENOSPC}, {"EOPNOTSUPP", EOPNOTSUPP},
    {"ENOSYS", ENOSYS},
};

static int check_count(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (v == 0)
                return fail(c, path, "0 would inject nothing: -1 (always) or a positive count");
        return 0;
}

/* One entry of "inject". */
static int parse_injection(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"pmu", "errno", "count", NULL};
        struct sim_injection *inj = &c->m->injections[index];
        const struct field count[] = {
            F_INT("count", inj->count, -1, 1000000000, .check = check_count),
        };
        char p[PATH_LEN], buf[32];
        json_object *v;
        long long x;
        int r;

        r = open_object(c, o, path, "an injection", keys);
        if (r)
                return r;
        v = field_at(o, path, "pmu", p, sizeof(p));
        if (v) {
                r = get_string(c, v, p, inj->pmu, sizeof(inj->pmu));
                if (r)
                        return r;
                if (inj->pmu[0]) {
                        bool found = false;

                        for (size_t i = 0; i < c->m->core_count && !found; i++) {
                                const struct sim_core *core = &c->m->cores[i];

                                snprintf(buf, sizeof(buf), "hisi_pcie%u_core%u", core->sicl,
                                         core->id);
                                found = !strcmp(buf, inj->pmu);
                        }
                        if (!found)
                                return fail(c, p,
                                            "no PMU \"%s\" on this machine (the PMU of SICL s, "
                                            "core c is hisi_pcie<s>_core<c>)",
                                            inj->pmu);
                }
        }
        v = field_at(o, path, "errno", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (e.g. \"EACCES\")");
        if (json_object_is_type(v, json_type_string)) {
                r = get_string(c, v, p, buf, sizeof(buf));
                if (r)
                        return r;
                inj->err = 0;
                for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
                        if (!strcmp(buf, errno_names[i].name))
                                inj->err = errno_names[i].err;
                }
                if (!inj->err)
                        return fail(c, p,
                                    "\"%s\" is not an errno name this simulator knows (EPERM, "
                                    "EACCES, ENOENT, EINVAL, EOPNOTSUPP, EBUSY, EAGAIN, ENODEV, "
                                    "EMFILE, ENOSPC, ENOMEM, E2BIG, EIO, ...)",
                                    buf);
        } else {
                r = get_int(c, v, p, 1, 4095, &x);
                if (r)
                        return r;
                inj->err = (int)x;
        }
        inj->count = -1;
        r = READ_FIELDS(c, o, path, count);
        if (!r)
                c->m->injection_count++;
        return r;
}

static int check_above_0(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        return v <= 0 ? fail(c, path, "must be above 0") : 0;
}

static int parse_top(struct ctx *c, json_object *top)
{
        static const char *const keys[] = {"machine", "description", "kernel", "cpus",
                                           "cmdline", "hisi_pcie",   "sicls",  "rcieps",
                                           "inject",  "intel",       "events", "root_complexes",
                                           "amd",     "nvidia",      NULL};
        static const char *const pmu_keys[] = {"flux_unit_bytes",
                                               "time_clock_hz",
                                               "latency_clock_hz",
                                               "identifier",
                                               "ptt_clock_hz",
                                               "ptt_time",
                                               NULL};
        static const char *const kernels[] = {"5.17", "6.2", "6.9", "6.12", "6.15"};
        struct sim_machine *m = c->m;
        const struct field name[] = {F_STRING("machine", m->name, .missing = "the machine's name")};
        const struct field description[] = {F_STRING("description", m->description)};
        const struct field cpus_cmdline[] = {
            F_INT("cpus", m->cpus, 1, MAX_CPUS, .missing = "number of online CPUs"),
            F_STRING("cmdline", m->cmdline),
        };
        char ptt_time[16] = "delta";
        const struct field clocks[] = {
            F_DOUBLE("flux_unit_bytes", m->clocks.flux_unit_bytes, 0, 4096, .check = check_above_0),
            F_DOUBLE("time_clock_hz", m->clocks.time_clock_hz, 1, 1e11),
            F_DOUBLE("latency_clock_hz", m->clocks.latency_clock_hz, 1, 1e11),
            F_HEX("identifier", c->identifier, 0xffffffffUL),
            F_DOUBLE("ptt_clock_hz", m->clocks.ptt_clock_hz, 1, 1e11),
            F_STRING("ptt_time", ptt_time),
        };
        unsigned int sicl_ids[MAX_SICLS];
        char buf[16];
        json_object *v;
        int r;

        r = open_object(c, top, "", "the machine", keys);
        if (r)
                return r;
        r = READ_FIELDS(c, top, "", name);
        if (r)
                return r;
        if (!m->name[0])
                return fail(c, "machine", "empty name");
        r = READ_FIELDS(c, top, "", description);
        if (r)
                return r;
        m->kernel = DEF_KERNEL;
        v = member(top, "kernel");
        if (v) {
                bool found = false;

                r = get_string(c, v, "kernel", buf, sizeof(buf));
                if (r && json_object_is_type(v, json_type_string))
                        return fail(c, "kernel",
                                    "unknown kernel (expected \"5.17\", \"6.2\", \"6.9\", "
                                    "\"6.12\" or \"6.15\")");
                if (r)
                        return r;
                for (int k = 0; k < (int)(sizeof(kernels) / sizeof(kernels[0])); k++) {
                        if (!strcmp(buf, kernels[k])) {
                                m->kernel = (enum sim_kernel)k;
                                found = true;
                        }
                }
                if (!found)
                        return fail(c, "kernel",
                                    "\"%s\" is not a kernel this simulator knows (\"5.17\", "
                                    "\"6.2\", \"6.9\", \"6.12\" or \"6.15\")",
                                    buf);
        }
        snprintf(m->cmdline, sizeof(m->cmdline), "%s", DEF_CMDLINE);
        r = READ_FIELDS(c, top, "", cpus_cmdline);
        if (r)
                return r;
        if (strchr(m->cmdline, '\n'))
                return fail(c, "cmdline", "a kernel command line is one line");

        m->clocks.flux_unit_bytes = DEF_FLUX_UNIT;
        m->clocks.time_clock_hz = DEF_TIME_CLOCK_HZ;
        m->clocks.latency_clock_hz = DEF_LATENCY_CLOCK_HZ;
        m->clocks.ptt_clock_hz = DEF_PTT_CLOCK_HZ;
        c->identifier = DEF_IDENTIFIER;
        v = member(top, "hisi_pcie");
        if (v) {
                r = READ_OBJECT(c, v, "hisi_pcie", "\"hisi_pcie\"", pmu_keys, clocks);
                if (r)
                        return r;
        }
        if (strcmp(ptt_time, "delta") && strcmp(ptt_time, "absolute"))
                return fail(c, "hisi_pcie.ptt_time", "\"%s\" is neither \"delta\" nor \"absolute\"",
                            ptt_time);
        m->clocks.ptt_time_absolute = !strcmp(ptt_time, "absolute");

        v = member(top, "sicls");
        if (!v && !member(top, "intel") && !member(top, "root_complexes") && !member(top, "amd") &&
            !member(top, "nvidia"))
                return fail(c, "sicls",
                            "missing (the IO dies with their PCIe cores; \"root_complexes\" for "
                            "DesignWare Root Ports; or \"intel\" for an Intel machine, \"amd\" "
                            "for an AMD one, \"nvidia\" for a Grace machine)");
        r = v ? read_array(c, v, "sicls", MAX_SICLS, "empty: describe at least one SICL",
                           parse_sicl, sicl_ids)
              : 0;
        if (r)
                return r;
        v = member(top, "rcieps");
        if (v) {
                r = parse_rcieps(c, v, "rcieps", -1);
                if (r)
                        return r;
        }
        v = member(top, "intel");
        if (v) {
                r = parse_intel(c, v);
                if (r)
                        return r;
        }
        v = member(top, "root_complexes");
        if (v) {
                r = parse_dwc(c, v);
                if (r)
                        return r;
        }
        v = member(top, "amd");
        if (v) {
                if (member(top, "intel"))
                        return fail(c, "amd", "a machine is either \"intel\" or \"amd\"");
                r = parse_amd(c, v);
                if (r)
                        return r;
        }
        v = member(top, "nvidia");
        if (v) {
                r = parse_nvidia(c, v);
                if (r)
                        return r;
        }

        r = compute_buses(c);
        if (!r)
                r = resolve_links(c);
        if (!r)
                r = check_cores(c);
        if (!r)
                r = check_workloads(c);
        if (r)
                return r;

        v = member(top, "inject");
        if (v) {
                r = read_array(c, v, "inject", MAX_INJECTIONS, NULL, parse_injection, NULL);
                if (r)
                        return r;
        }
        _Static_assert(sizeof(m->cpu_sicl) == sizeof(c->cpu_owner), "one entry per CPU");
        memcpy(m->cpu_sicl, c->cpu_owner, sizeof(m->cpu_sicl));
        v = member(top, "events");
        if (v)
                return sim_events_parse(m, v, c->origin, c->err, c->errlen);
        return 0;
}

/* ---- public API ---- */

const char *sim_kernel_name(enum sim_kernel k)
{
        switch (k) {
        case SIM_KERNEL_5_17:
                return "5.17";
        case SIM_KERNEL_6_2:
                return "6.2";
        case SIM_KERNEL_6_9:
                return "6.9";
        case SIM_KERNEL_6_12:
                return "6.12";
        case SIM_KERNEL_6_15:
                return "6.15";
        }
        return "unknown";
}

double sim_dist_mean(const struct sim_dist *d)
{
        double sum = 0, wsum = 0;

        if (!d)
                return 0;
        for (size_t i = 0; i < d->count && i < SIM_DIST_MAX; i++) {
                sum += d->value[i] * d->weight[i];
                wsum += d->weight[i];
        }
        return wsum > 0 ? sum / wsum : 0;
}

void sim_machine_free(struct sim_machine *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->intel.socket_count && i < SIM_MAX_SOCKETS; i++)
                free(m->intel.sockets[i].units);
        free(m->devices);
        free(m);
}

size_t sim_machine_find(const struct sim_machine *m, uint16_t domain, uint8_t bus, uint8_t dev,
                        uint8_t fn)
{
        if (!m)
                return SIM_NONE;
        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];

                if (d->domain == domain && d->bus == bus && d->dev == dev && d->fn == fn)
                        return i;
        }
        return SIM_NONE;
}

void sim_device_bdf(const struct sim_device *d, char *buf, size_t size)
{
        if (!buf || !size)
                return;
        snprintf(buf, size, "%04x:%02x:%02x.%x", d->domain, d->bus, d->dev & 0x1f, d->fn & 7);
}

size_t sim_machine_root_port(const struct sim_machine *m, size_t dev)
{
        size_t hops = 0;

        if (!m || dev >= m->device_count)
                return SIM_NONE;
        while (dev != SIM_NONE && hops++ <= m->device_count) {
                if (m->devices[dev].kind == SIM_ROOT_PORT)
                        return dev;
                dev = m->devices[dev].parent;
        }
        return SIM_NONE;
}

int sim_machine_parse(const char *json, const char *origin, struct sim_machine **out, char *errbuf,
                      size_t errlen)
{
        struct ctx *c;
        struct json_tokener *tok;
        json_object *top;
        size_t len, end;
        int r;

        if (errbuf && errlen)
                errbuf[0] = '\0';
        if (!out)
                return -EINVAL;
        *out = NULL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->origin = origin ? origin : "<string>";
        c->err = errbuf;
        c->errlen = errlen;
        if (!json) {
                r = fail(c, "", "no text");
                free(c);
                return r;
        }
        len = strlen(json);
        if (len > FILE_MAX_BYTES) {
                r = fail(c, "", "%zu bytes is too large for a machine description", len);
                free(c);
                return r;
        }
        tok = json_tokener_new();
        if (!tok) {
                free(c);
                return -ENOMEM;
        }
        top = json_tokener_parse_ex(tok, json, (int)len);
#if defined(JSON_C_VERSION_NUM) && JSON_C_VERSION_NUM >= ((0 << 16) | (15 << 8))
        end = json_tokener_get_parse_end(tok);
#else
        end = (size_t)tok->char_offset;
#endif
        if (!top) {
                enum json_tokener_error jerr = json_tokener_get_error(tok);
                unsigned int line, col;

                line_col(json, end, &line, &col);
                if (jerr == json_tokener_continue)
                        r = fail(c, "",
                                 "line %u, column %u: JSON syntax error: unexpected end of "
                                 "the text (unclosed object, array or string)",
                                 line, col);
                else
                        r = fail(c, "", "line %u, column %u: JSON syntax error: %s", line, col,
                                 json_tokener_error_desc(jerr));
                json_tokener_free(tok);
                free(c);
                return r;
        }
        json_tokener_free(tok);
        end = skip_blank(json, end, len);
        if (end < len) {
                unsigned int line, col;

                line_col(json, end, &line, &col);
                r = fail(c, "",
                         "line %u, column %u: JSON syntax error: text after the top-level "
                         "object",
                         line, col);
                json_object_put(top);
                free(c);
                return r;
        }
        c->m = calloc(1, sizeof(*c->m));
        if (!c->m) {
                json_object_put(top);
                free(c);
                return -ENOMEM;
        }
        r = check_duplicate_keys(c, json, len);
        if (!r)
                r = parse_top(c, top);
        json_object_put(top);
        free(c->info);
        if (r) {
                if (r == -ENOMEM && errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: out of memory", c->origin);
                sim_machine_free(c->m);
        } else {
                *out = c->m;
        }
        free(c);
        return r;
}

int sim_machine_load(const char *path, struct sim_machine **out, char *errbuf, size_t errlen)
{
        FILE *f;
        char *text = NULL;
        size_t len = 0, cap = 0;
        int r;

        if (errbuf && errlen)
                errbuf[0] = '\0';
        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!path) {
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "no file name");
                return -EINVAL;
        }
        f = fopen(path, "r");
        if (!f) {
                r = errno;
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: %s", path, strerror(r));
                return r == ENOENT ? -ENOENT : r == ENOMEM ? -ENOMEM : -EINVAL;
        }
        for (;;) {
                size_t got;

                if (len + 1 >= cap) {
                        char *t;

                        if (cap > FILE_MAX_BYTES) {
                                fclose(f);
                                free(text);
                                if (errbuf && errlen)
                                        snprintf(errbuf, errlen,
                                                 "%s: larger than %u bytes: not a machine "
                                                 "description",
                                                 path, FILE_MAX_BYTES);
                                return -EINVAL;
                        }
                        cap = cap ? cap * 2 : 65536;
                        t = realloc(text, cap);
                        if (!t) {
                                fclose(f);
                                free(text);
                                return -ENOMEM;
                        }
                        text = t;
                }
                got = fread(text + len, 1, cap - len - 1, f);
                len += got;
                if (got == 0)
                        break;
        }
        r = ferror(f) ? errno : 0;
        fclose(f);
        if (r) {
                free(text);
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: %s", path, strerror(r ? r : EIO));
                return -EINVAL;
        }
        text[len] = '\0';
        if (strlen(text) != len) {
                unsigned int line, col;

                line_col(text, strlen(text), &line, &col);
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: line %u, column %u: NUL byte in the text",
                                 path, line, col);
                free(text);
                return -EINVAL;
        }
        r = sim_machine_parse(text, path, out, errbuf, errlen);
        free(text);
        return r;
}
