// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_pmu.c - the performance monitoring parts of a machine
 * description: the HiSilicon PCIe cores with their PMU and PTT functions,
 * and the Intel uncore (sockets, the PMON discovery table and its units,
 * IIO stacks). Part of the machine reader (sim_machine.c; shared
 * declarations in machine_internal.h).
 */
#define _GNU_SOURCE
#include "machine_internal.h"
#include "iio_stackmap.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- HiSilicon PCIe cores: the PMU and PTT functions ---- */

static int parse_funcref(struct ctx *c, json_object *v, const char *path, struct funcref *ref)
{
        int r;

        if (!v)
                return 0;
        r = get_bdf(c, v, path, &ref->domain, &ref->bus, &ref->dev, &ref->fn);
        if (r)
                return r;
        ref->set = true;
        snprintf(ref->path, sizeof(ref->path), "%s", path);
        return 0;
}

int parse_core(struct ctx *c, json_object *o, const char *path, unsigned int sicl, int sicl_numa,
               int sicl_cpu)
{
        static const char *const keys[] = {"id",  "cpu", "identifier", "numa_node",
                                           "pmu", "ptt", "root_ports", NULL};
        struct sim_machine *m = c->m;
        struct sim_core *core;
        char p[PATH_LEN];
        json_object *v;
        size_t ci;
        int r;

        r = open_object(c, o, path, "a PCIe core", keys);
        if (r)
                return r;
        if (m->core_count >= SIM_MAX_CORES)
                return fail(c, path, "more than %d PCIe cores", SIM_MAX_CORES);
        ci = m->core_count++;
        core = &m->cores[ci];
        snprintf(c->core_path[ci], sizeof(c->core_path[ci]), "%s", path);
        core->sicl = sicl;
        core->pmu_function = SIM_NONE;
        core->ptt_function = SIM_NONE;

        const struct field id[] = {
            F_INT("id", core->id, 0, 0xffff,
                  .missing = "the core number in hisi_pcie<sicl>_core<id>"),
        };
        const struct field rest[] = {
            F_INT("numa_node", core->numa_node, -1, 1023),
            F_INT("cpu", core->cpu, 0, (long long)m->cpus - 1),
            F_HEX("identifier", core->identifier, 0xffffffffUL),
        };

        r = READ_FIELDS(c, o, path, id);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (size_t i = 0; i < ci; i++) {
                if (m->cores[i].sicl == sicl && m->cores[i].id == core->id)
                        return fail(c, p, "core %u is already described by %s", core->id,
                                    c->core_path[i]);
        }
        core->numa_node = sicl_numa;
        core->cpu = sicl_cpu < 0 ? 0 : sicl_cpu;
        core->identifier = c->identifier;
        r = READ_FIELDS(c, o, path, rest);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "pmu");
        r = parse_funcref(c, member(o, "pmu"), p, &c->pmu[ci]);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "ptt");
        r = parse_funcref(c, member(o, "ptt"), p, &c->ptt[ci]);
        if (r)
                return r;

        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the core's Root Ports, at least one)");
        struct placement ports = {.kind = SIM_ROOT_PORT,
                                  .parent = SIM_NONE,
                                  .core = ci,
                                  .numa = core->numa_node,
                                  .ports = core->ports,
                                  .port_count = &core->port_count};

        return read_array(c, v, p, MAX_PORTS, "empty: a PCIe core has at least one Root Port",
                          parse_placed, &ports);
}

static int resolve_funcref(struct ctx *c, struct funcref *ref, uint16_t want, size_t ci,
                           size_t *out)
{
        struct sim_machine *m = c->m;
        char bdf[16];
        size_t idx;

        *out = SIM_NONE;
        if (!ref->set)
                return 0;
        snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", ref->domain, ref->bus, ref->dev, ref->fn);
        idx = sim_machine_find(m, ref->domain, ref->bus, ref->dev, ref->fn);
        if (idx == SIM_NONE)
                return fail(c, ref->path, "no device %s is described (list it under \"rcieps\")",
                            bdf);
        if (m->devices[idx].kind != SIM_RCIEP || m->devices[idx].vendor != 0x19e5 ||
            m->devices[idx].device != want)
                return fail(c, ref->path,
                            "%s (%s) is not a 19e5:%04x RCiEP: the %s function of a core is a "
                            "HiSilicon Root Complex integrated endpoint",
                            bdf, c->info[idx].path, want, want == 0xa12d ? "PMU" : "PTT");
        for (size_t i = 0; i < ci; i++) {
                if (m->cores[i].pmu_function == idx || m->cores[i].ptt_function == idx)
                        return fail(c, ref->path, "%s is already the function of %s", bdf,
                                    c->core_path[i]);
        }
        m->devices[idx].core = ci;
        *out = idx;
        return 0;
}

int check_cores(struct ctx *c)
{
        struct sim_machine *m = c->m;
        char p[PATH_LEN], pb[16], qb[16];

        for (size_t ci = 0; ci < m->core_count; ci++) {
                struct sim_core *core = &m->cores[ci];
                int r;

                r = resolve_funcref(c, &c->pmu[ci], 0xa12d, ci, &core->pmu_function);
                if (!r)
                        r = resolve_funcref(c, &c->ptt[ci], 0xa12e, ci, &core->ptt_function);
                if (r)
                        return r;
                core->bdf_min = 0xffff;
                core->bdf_max = 0;
                for (size_t i = 0; i < core->port_count; i++) {
                        const struct sim_device *d = &m->devices[core->ports[i]];
                        uint16_t rid = sim_device_rid(d);

                        if (rid < core->bdf_min)
                                core->bdf_min = rid;
                        if (rid > core->bdf_max)
                                core->bdf_max = rid;
                        if (d->domain != m->devices[core->ports[0]].domain) {
                                path_key(p, sizeof(p), c->info[core->ports[i]].path, "bdf");
                                return fail(c, p, "all Root Ports of one core are in one domain");
                        }
                        for (size_t j = 0; j < i; j++) {
                                const struct sim_device *e = &m->devices[core->ports[j]];

                                if ((d->dev & 7) != (e->dev & 7))
                                        continue;
                                sim_device_bdf(d, pb, sizeof(pb));
                                sim_device_bdf(e, qb, sizeof(qb));
                                path_key(p, sizeof(p), c->info[core->ports[i]].path, "bdf");
                                return fail(c, p,
                                            "%s uses port bit %u (2 * (device 0x%02x & 7)), "
                                            "like %s in the same core: the PMU's port bitmap "
                                            "could not tell them apart",
                                            pb, 2 * (d->dev & 7), d->dev, qb);
                        }
                }
        }
        for (size_t b = 0; b < m->core_count; b++) {
                const struct sim_core *cb = &m->cores[b];

                for (size_t a = 0; a < b; a++) {
                        const struct sim_core *ca = &m->cores[a];

                        if (m->devices[ca->ports[0]].domain != m->devices[cb->ports[0]].domain ||
                            ca->bdf_max < cb->bdf_min || cb->bdf_max < ca->bdf_min)
                                continue;
                        path_key(p, sizeof(p), c->core_path[b], "root_ports");
                        return fail(c, p,
                                    "Root Port BDFs 0x%04x-0x%04x overlap 0x%04x-0x%04x of %s: "
                                    "each PMU covers one range (bdf_min..bdf_max)",
                                    cb->bdf_min, cb->bdf_max, ca->bdf_min, ca->bdf_max,
                                    c->core_path[a]);
                }
        }
        return 0;
}

/* ---- Intel uncore: sockets, the PMON discovery table, IIO stacks ---- */

#define DEF_IIO_IN_BYTES  32.0
#define DEF_IIO_OUT_BYTES 4.0
#define DEF_IOCLK_HZ      1e9
#define DISCOVERY_CLASS   0x088000u /* base system peripheral, "other" */
#define MAX_BAR_SIZE      0x100000u /* resource0 is written as a file of this size */
#define MAX_TABLE_UNITS   1023u     /* max_units is a 10-bit field */

/* A hex string of up to 64 bits. */
static int get_hex64(struct ctx *c, json_object *v, const char *path, uint64_t *out)
{
        const char *s;
        size_t digits = 0;
        unsigned long x;
        int r;

        if (json_object_is_type(v, json_type_string)) {
                s = json_object_get_string(v);
                if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                        s += 2;
                while (*s == '0' && s[1])
                        s++;
                for (; *s; s++)
                        digits++;
                if (digits > 16)
                        return fail(c, path, "\"%s\" is above 0xffffffffffffffff",
                                    json_object_get_string(v));
        }
        r = get_hex(c, v, path, (unsigned long)-1, &x);
        if (r)
                return r;
        *out = (uint64_t)x;
        return 0;
}

/* An integer member @key of @o: required unless @def is given (non-NULL). */
/* One entry of "units": a group of units (@arg: the socket). */
static int parse_unit_group(struct ctx *c, json_object *o, const char *path, size_t entry,
                            void *arg)
{
        static const char *const keys[] = {
            "type",     "access", "count",      "first_box_id", "ctl",           "ctl_step",
            "num_regs", "width",  "ctl_offset", "ctr_offset",   "status_offset", NULL};
        struct sim_socket *s = arg;
        struct sim_uncore_unit proto = {0};
        char p[PATH_LEN], pp[PATH_LEN], buf[16];
        json_object *v, *ctl;
        long long count = -1, first = 0;
        uint64_t base = 0, step = 0;
        struct sim_uncore_unit *units;
        const struct field type[] = {F_INT("type", proto.type, 0, 0xffff, .missing = "")};
        const struct field layout[] = {
            F_INT("num_regs", proto.num_regs, 0, 255, .missing = ""),
            F_INT("width", proto.width, 0, 255, .missing = ""),
            F_INT("ctl_offset", proto.ctl_offset, 0, 255, .missing = ""),
            F_INT("ctr_offset", proto.ctr_offset, 0, 255, .missing = ""),
            F_INT("status_offset", proto.status_offset, 0, 255),
            F_INT("first_box_id", first, 0, 0xffff),
            F_INT("count", count, 1, MAX_TABLE_UNITS),
        };
        int r;

        (void)entry;
        r = READ_OBJECT(c, o, path, "a group of discovery units", keys, type);
        if (r)
                return r;
        v = field_at(o, path, "access", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (\"MSR\", \"MMIO\" or \"PCI\")");
        r = get_string(c, v, p, buf, sizeof(buf));
        if (r && json_object_is_type(v, json_type_string))
                return fail(c, p, "expected \"MSR\", \"MMIO\" or \"PCI\"");
        if (r)
                return r;
        if (!strcmp(buf, "MSR"))
                proto.access = SIM_ACCESS_MSR;
        else if (!strcmp(buf, "MMIO"))
                proto.access = SIM_ACCESS_MMIO;
        else if (!strcmp(buf, "PCI"))
                proto.access = SIM_ACCESS_PCI;
        else
                return fail(c, p, "\"%s\": expected \"MSR\", \"MMIO\" or \"PCI\"", buf);
        r = READ_FIELDS(c, o, path, layout);
        if (r)
                return r;
        ctl = field_at(o, path, "ctl", p, sizeof(p));
        if (!ctl)
                return fail(c, p,
                            "missing (a list of box control addresses, or the first one with "
                            "\"count\" and \"ctl_step\")");
        if (json_object_is_type(ctl, json_type_array)) {
                size_t n = json_object_array_length(ctl);

                if (n == 0)
                        return fail(c, p, "empty list");
                if (member(o, "ctl_step")) {
                        path_key(pp, sizeof(pp), path, "ctl_step");
                        return fail(c, pp, "only with a single \"ctl\" start address");
                }
                if (count >= 0 && (size_t)count != n) {
                        path_key(pp, sizeof(pp), path, "count");
                        return fail(c, pp, "%lld, but \"ctl\" lists %zu addresses", count, n);
                }
                count = (long long)n;
        } else {
                r = get_hex64(c, ctl, p, &base);
                if (r)
                        return r;
                if (count < 0) {
                        path_key(pp, sizeof(pp), path, "count");
                        return fail(c, pp, "missing (how many boxes from the \"ctl\" start)");
                }
                v = field_at(o, path, "ctl_step", pp, sizeof(pp));
                if (!v && count > 1)
                        return fail(c, pp, "missing (address step from one box to the next)");
                if (v) {
                        r = get_hex64(c, v, pp, &step);
                        if (r)
                                return r;
                }
        }
        if (first + count - 1 > 0xffff)
                return fail(c, path, "box ids %lld..%lld exceed 0xffff", first, first + count - 1);
        if (s->unit_count + (size_t)count > MAX_TABLE_UNITS)
                return fail(c, path, "more than %u units in one table", MAX_TABLE_UNITS);
        units = realloc(s->units, (s->unit_count + (size_t)count) * sizeof(*units));
        if (!units)
                return -ENOMEM;
        s->units = units;
        for (long long i = 0; i < count; i++) {
                struct sim_uncore_unit *u = &s->units[s->unit_count];

                *u = proto;
                u->box_id = (uint16_t)(first + i);
                if (json_object_is_type(ctl, json_type_array)) {
                        path_idx(pp, sizeof(pp), p, (size_t)i);
                        r = get_hex64(c, json_object_array_get_idx(ctl, (size_t)i), pp, &u->ctl);
                        if (r)
                                return r;
                } else {
                        u->ctl = base + step * (uint64_t)i;
                }
                for (size_t j = 0; j < s->unit_count; j++) {
                        if (s->units[j].type == u->type && s->units[j].box_id == u->box_id)
                                return fail(c, path, "type %u box %u is already in the table",
                                            u->type, u->box_id);
                }
                s->unit_count++;
        }
        return 0;
}

static int check_stride(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (v < 3)
                return fail(c, path,
                            "%lld: a table entry is 3 u64s, the stride (in u64s) is at least 3",
                            (long long)v);
        return 0;
}

static int parse_other_dvsec(struct ctx *c, json_object *v, const char *path, size_t i, void *arg)
{
        struct sim_socket *s = arg;
        long long x;
        int r = get_int(c, v, path, 0, 0xffff, &x);

        (void)i;
        if (r)
                return r;
        if (x == 1)
                return fail(c, path,
                            "DVSEC id 1 is the PMON discovery DVSEC itself, which the simulator "
                            "places after these");
        s->other_dvsec_ids[s->other_dvsec_count++] = (uint16_t)x;
        return 0;
}

/* An Intel uncore function the loader adds itself (discovery, CPU bus
 * registers): an RC-integrated endpoint of class 0x088000 on a root bus. */
static void intel_rciep(struct sim_device *d, uint16_t domain, uint8_t bus, uint8_t dev, uint8_t fn,
                        uint16_t device, int numa)
{
        d->kind = SIM_RCIEP;
        d->domain = domain;
        d->bus = bus;
        d->dev = dev;
        d->fn = fn;
        d->vendor = 0x8086;
        d->device = device;
        d->class_code = DISCOVERY_CLASS;
        d->parent = SIM_NONE;
        d->core = SIM_NONE;
        d->numa_node = numa;
        d->mpss = d->mps = DEF_MPSS;
        d->mrrs = DEF_MRRS;
}

static int parse_discovery(struct ctx *c, json_object *o, const char *path, struct sim_socket *s)
{
        const struct field stride[] = {
            F_INT("stride", s->stride, 0, 255, .missing = "", .check = check_stride),
        };
        static const char *const keys[] = {"bdf",   "bar",          "bar_size", "stride",
                                           "units", "other_dvsecs", NULL};
        struct sim_machine *m = c->m;
        struct sim_device *d;
        char p[PATH_LEN], pp[PATH_LEN];
        uint16_t domain;
        uint8_t bus, dev, fn;
        json_object *v;
        size_t idx;
        int r;

        r = open_object(c, o, path, "\"discovery\"", keys);
        if (r)
                return r;
        v = field_at(o, path, "bdf", p, sizeof(p));
        if (!v)
                return fail(c, p,
                            "missing (the 8086:09a7 discovery function, e.g. \"0000:7e:00.1\")");
        r = get_bdf(c, v, p, &domain, &bus, &dev, &fn);
        if (r)
                return r;
        idx = sim_machine_find(m, domain, bus, dev, fn);
        if (idx != SIM_NONE)
                return fail(c, p, "duplicate BDF %s: already used by %s", json_object_get_string(v),
                            c->info[idx].path);
        r = new_device(c, path, &idx);
        if (r)
                return r;
        d = &m->devices[idx];
        intel_rciep(d, domain, bus, dev, fn, 0x09a7, s->numa_node);
        snprintf(d->name, sizeof(d->name), "pmon-discovery%u", s->id);
        s->discovery_function = idx;

        v = field_at(o, path, "bar", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the 64-bit BAR 0 address holding the table)");
        r = get_hex64(c, v, p, &s->bar);
        if (r)
                return r;
        v = field_at(o, path, "bar_size", pp, sizeof(pp));
        if (!v)
                return fail(c, pp, "missing (BAR 0 size, a power of two)");
        r = get_hex64(c, v, pp, &s->bar_size);
        if (r)
                return r;
        if (s->bar_size < 0x1000 || s->bar_size > MAX_BAR_SIZE || (s->bar_size & (s->bar_size - 1)))
                return fail(c, pp, "0x%llx: expected a power of two from 0x1000 to 0x%x",
                            (unsigned long long)s->bar_size, MAX_BAR_SIZE);
        if (s->bar == 0 || s->bar % s->bar_size)
                return fail(c, p, "0x%llx is not a BAR address aligned to its size 0x%llx",
                            (unsigned long long)s->bar, (unsigned long long)s->bar_size);
        r = READ_FIELDS(c, o, path, stride);
        if (r)
                return r;

        v = member(o, "other_dvsecs");
        if (v) {
                size_t max = sizeof(s->other_dvsec_ids) / sizeof(s->other_dvsec_ids[0]);

                path_key(p, sizeof(p), path, "other_dvsecs");
                r = read_array(c, v, p, max, NULL, parse_other_dvsec, s);
                if (r)
                        return r;
        }
        v = field_at(o, path, "units", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the table's unit entries, in groups)");
        r = read_array(c, v, p, MAX_TABLE_UNITS, NULL, parse_unit_group, s);
        if (r)
                return r;
        if ((s->unit_count + 1) * s->stride * 8 > s->bar_size) {
                path_key(pp, sizeof(pp), path, "bar_size");
                return fail(c, pp,
                            "0x%llx bytes cannot hold the table: %zu units + the global entry at "
                            "a stride of %u u64s need 0x%zx bytes",
                            (unsigned long long)s->bar_size, s->unit_count, s->stride,
                            (s->unit_count + 1) * s->stride * 8);
        }
        return 0;
}

/* The stack whose "root_ports" are being read, in its socket. */
struct stack_at {
        const struct sim_socket *s;
        struct sim_iio_stack *st;
};

static int parse_stack_port(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct stack_at *at = arg;
        struct sim_iio_stack *st = at->st;
        size_t idx = c->m->device_count;
        const struct sim_device *d;
        char bp[PATH_LEN];
        int r;

        (void)i;
        r = parse_device(c, o, path, SIM_ROOT_PORT, SIM_NONE, SIM_NONE, at->s->numa_node);
        if (r)
                return r;
        d = &c->m->devices[idx];
        path_key(bp, sizeof(bp), path, "bdf");
        if (d->domain != st->domain || d->bus != st->bus)
                return fail(c, bp,
                            "a Root Port of stack %u sits on the stack's bus %04x:%02x, not on "
                            "%04x:%02x",
                            st->box_id, st->domain, st->bus, d->domain, d->bus);
        if (d->dev < 1 || d->dev > 8 || d->fn != 0)
                return fail(c, bp,
                            "device %02x.%x: the Root Ports of an IIO stack are at devices 01..08, "
                            "function 0 (part = device - 1)",
                            d->dev, d->fn);
        st->ports[st->port_count++] = idx;
        return 0;
}

static int parse_stack(struct ctx *c, json_object *o, const char *path, struct sim_socket *s,
                       struct sim_iio_stack *st)
{
        static const char *const keys[] = {"box_id", "bus", "root_ports", NULL};
        struct sim_machine *m = c->m;
        char p[PATH_LEN];
        json_object *v;
        const struct field box[] = {F_INT("box_id", st->box_id, 0, 0xff, .missing = "")};
        const struct field bus[] = {
            F_HEX("bus", st->bus, 0xff, .missing = "the stack's root bus, e.g. \"0x15\""),
        };
        int r;

        r = READ_OBJECT(c, o, path, "an IIO stack", keys, box);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "box_id");
        for (size_t i = 0; i < s->stack_count; i++) {
                if (s->stacks[i].box_id == st->box_id)
                        return fail(c, p, "box %u is already a stack of this socket", st->box_id);
        }
        r = READ_FIELDS(c, o, path, bus);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "bus");
        st->domain = m->devices[s->discovery_function].domain;
        for (size_t si = 0; si < m->intel.socket_count; si++) {
                const struct sim_socket *o2 = &m->intel.sockets[si];

                for (size_t k = 0; k < o2->stack_count; k++) {
                        if (o2 != s && o2->stacks[k].domain == st->domain &&
                            o2->stacks[k].bus == st->bus)
                                return fail(c, p,
                                            "bus 0x%02x is also the bus of a stack of socket %u",
                                            st->bus, o2->id);
                }
        }
        for (size_t k = 0; k < s->stack_count; k++) {
                if (s->stacks[k].domain == st->domain && s->stacks[k].bus == st->bus)
                        return fail(c, p, "bus 0x%02x is also the bus of stack %u", st->bus,
                                    s->stacks[k].box_id);
        }
        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the stack's Root Ports; [] for none)");
        struct stack_at at = {s, st};

        return read_array(c, v, p, 8, NULL, parse_stack_port, &at);
}

/* "a-b" or "a": one contiguous range. */
/* One entry of a socket's "iio_stacks" (@arg: the socket). */
static int parse_socket_stack(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        struct sim_socket *s = arg;
        struct sim_iio_stack *st = &s->stacks[s->stack_count];
        bool covered = false;
        char p[PATH_LEN];
        int r;

        (void)i;
        memset(st, 0, sizeof(*st));
        r = parse_stack(c, o, path, s, st);
        if (r)
                return r;
        for (size_t u = 0; u < s->unit_count && !covered; u++)
                covered = s->units[u].type == 1 && s->units[u].box_id == st->box_id;
        if (!covered) {
                path_key(p, sizeof(p), path, "box_id");
                return fail(c, p,
                            "no IIO unit (type 1) with box id %u in this socket's discovery table",
                            st->box_id);
        }
        s->stack_count++;
        return 0;
}

static int parse_socket_cpus(struct ctx *c, json_object *v, const char *path, struct sim_socket *s)
{
        return parse_cpu_range(c, v, path, &s->first_cpu, &s->cpu_count);
}

/* "a-b" or "a": one contiguous range of existing CPUs. */
int parse_cpu_range(struct ctx *c, json_object *v, const char *path, unsigned int *first,
                    unsigned int *count)
{
        char buf[32], *end;
        unsigned long a, b;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        if (buf[0] < '0' || buf[0] > '9')
                goto bad;
        a = strtoul(buf, &end, 10);
        b = a;
        if (*end == '-') {
                if (end[1] < '0' || end[1] > '9')
                        goto bad;
                b = strtoul(end + 1, &end, 10);
        }
        if (*end)
                goto bad;
        if (a > b)
                return fail(c, path, "range %lu-%lu runs backwards", a, b);
        if (b >= c->m->cpus)
                return fail(c, path, "CPU %lu does not exist (the machine has %u CPUs)", b,
                            c->m->cpus);
        *first = (unsigned int)a;
        *count = (unsigned int)(b - a + 1);
        return 0;
bad:
        return fail(c, path, "\"%s\" is not one CPU range such as \"0-55\"", buf);
}

/* One entry of "intel.sockets". */
static int parse_socket(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"id",        "numa_node",  "cpus",
                                           "discovery", "iio_stacks", NULL};
        struct sim_intel *in = &c->m->intel;
        struct sim_socket *s = &in->sockets[index];
        const struct field id[] = {F_INT("id", s->id, 0, 255, .missing = "")};
        const struct field numa[] = {F_INT("numa_node", s->numa_node, -1, 1023, .missing = "")};
        char p[PATH_LEN];
        json_object *v;
        int r;

        in->socket_count =
            index + 1; /* counted before it is read: sim_machine_free frees its units */
        s->discovery_function = SIM_NONE;
        s->msm_function = s->pcu_function = SIM_NONE;
        for (size_t k = 0; k < SIM_MAX_IIO_STACKS; k++)
                s->sad_function[k] = SIM_NONE;
        r = READ_OBJECT(c, o, path, "a socket", keys, id);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (size_t i = 0; i < index; i++) {
                if (in->sockets[i].id == s->id)
                        return fail(c, p, "socket %u is already described by intel.sockets[%zu]",
                                    s->id, i);
        }
        r = READ_FIELDS(c, o, path, numa);
        if (r)
                return r;
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's CPUs, one range such as \"0-55\")");
        r = parse_socket_cpus(c, v, p, s);
        if (r)
                return r;
        for (size_t i = 0; i < index; i++) {
                const struct sim_socket *o2 = &in->sockets[i];

                if (s->first_cpu < o2->first_cpu + o2->cpu_count &&
                    o2->first_cpu < s->first_cpu + s->cpu_count)
                        return fail(c, p, "CPUs overlap those of intel.sockets[%zu]", i);
        }
        v = field_at(o, path, "discovery", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the PMON discovery function and its table)");
        r = parse_discovery(c, v, p, s);
        if (r)
                return r;
        v = field_at(o, path, "iio_stacks", p, sizeof(p));
        if (v)
                return read_array(c, v, p, SIM_MAX_IIO_STACKS, NULL, parse_socket_stack, s);
        return 0;
}

/* One function that holds CPU bus registers, at a place the description
 * does not name (so a clash is reported at "intel.stack_registers"). */
static int register_function(struct ctx *c, uint16_t domain, uint8_t bus, uint8_t dev, uint8_t fn,
                             uint16_t device, int numa, const char *name, size_t *out)
{
        struct sim_device *d;
        size_t idx = sim_machine_find(c->m, domain, bus, dev, fn);
        int r;

        if (idx != SIM_NONE)
                return fail(c, "intel.stack_registers",
                            "%04x:%02x:%02x.%x is where the simulator puts the %s function "
                            "(8086:%04x), but %s is there",
                            domain, bus, dev, fn, name, device, c->info[idx].path);
        r = new_device(c, "intel.stack_registers", &idx);
        if (r)
                return r;
        d = &c->m->devices[idx];
        intel_rciep(d, domain, bus, dev, fn, device, numa);
        snprintf(d->name, sizeof(d->name), "%s", name);
        *out = idx;
        return 0;
}

/* The functions Intel PCM reads the stack mapping from, consistent with the
 * sockets' stacks: each stack's box has a CPU bus id in the CPU's table
 * (iio_stackmap.h), which the MSM function maps to the stack's bus. */
static int add_stack_registers(struct ctx *c)
{
        struct sim_intel *in = &c->m->intel;
        enum iio_layout layout = iio_layout_of(6, in->cpu_model, (enum iio_chop)in->chop);
        char name[SIM_NAME_MAX];
        int r = 0;

        if (layout == IIO_LAYOUT_UNKNOWN)
                return fail(c, "intel.stack_registers",
                            "true, but Intel PCM has no CPU bus table for model %u (143 SPR, 207 "
                            "EMR, 173 GNR, 175 SRF)",
                            in->cpu_model);
        for (size_t i = 0; i < in->socket_count && !r; i++) {
                struct sim_socket *s = &in->sockets[i];
                const struct sim_device *disc = &c->m->devices[s->discovery_function];

                for (size_t k = 0; k < s->stack_count && !r; k++) {
                        int cpubus = iio_layout_cpubus(layout, s->stacks[k].box_id);

                        if (cpubus < 0)
                                return fail(c, "intel.stack_registers",
                                            "socket %u's stack box %u is no IIO stack of the %s "
                                            "CPU bus table",
                                            s->id, s->stacks[k].box_id, iio_layout_name(layout));
                        s->cpubus[k] = (unsigned int)cpubus;
                        snprintf(name, sizeof(name), "sad%u-iio%u", s->id, s->stacks[k].box_id);
                        r = register_function(c, s->stacks[k].domain, s->stacks[k].bus, 0, 0,
                                              IIO_SAD_DEVICE_ID, s->numa_node, name,
                                              &s->sad_function[k]);
                }
                snprintf(name, sizeof(name), "msm%u", s->id);
                if (!r)
                        r = register_function(c, disc->domain, disc->bus, 3, 0, IIO_MSM_DEVICE_ID,
                                              s->numa_node, name, &s->msm_function);
                snprintf(name, sizeof(name), "pcu-cr3-%u", s->id);
                if (!r)
                        r = register_function(c, disc->domain, disc->bus, IIO_PCU_CR3_DEVICE,
                                              IIO_PCU_CR3_FUNCTION, IIO_PCU_CR3_DEVICE_ID,
                                              s->numa_node, name, &s->pcu_function);
        }
        return r;
}

int parse_intel(struct ctx *c, json_object *o)
{
        static const char *const keys[] = {"cpu_model",
                                           "iio_in_bytes_per_count",
                                           "iio_out_bytes_per_count",
                                           "ioclk_hz",
                                           "die_files",
                                           "stack_registers",
                                           "chop",
                                           "sockets",
                                           NULL};
        struct sim_intel *in = &c->m->intel;
        char chop[8] = "xcc";
        const struct field fields[] = {
            F_INT("cpu_model", in->cpu_model, 0, 255, .missing = ""),
            F_DOUBLE("iio_in_bytes_per_count", in->iio_in_bytes_per_count, 1, 65536),
            F_DOUBLE("iio_out_bytes_per_count", in->iio_out_bytes_per_count, 1, 65536),
            F_DOUBLE("ioclk_hz", in->ioclk_hz, 1, 1e11),
            F_BOOL("die_files", in->die_files),
            F_BOOL("stack_registers", in->stack_registers),
            F_STRING("chop", chop),
        };
        json_object *v;
        int r;

        in->iio_in_bytes_per_count = DEF_IIO_IN_BYTES;
        in->iio_out_bytes_per_count = DEF_IIO_OUT_BYTES;
        in->ioclk_hz = DEF_IOCLK_HZ;
        r = READ_OBJECT(c, o, "intel", "\"intel\"", keys, fields);
        if (r)
                return r;
        if (strcmp(chop, "xcc") && strcmp(chop, "mcc"))
                return fail(c, "intel.chop", "\"%s\" is neither \"xcc\" nor \"mcc\"", chop);
        in->chop = !strcmp(chop, "xcc") ? IIO_CHOP_XCC : IIO_CHOP_MCC;
        in->present = true;
        v = member(o, "sockets");
        if (!v)
                return fail(c, "intel.sockets", "missing (at least one socket)");
        r = read_array(c, v, "intel.sockets", SIM_MAX_SOCKETS,
                       "empty: describe at least one socket", parse_socket, NULL);
        if (!r && in->stack_registers)
                r = add_stack_registers(c);
        return r;
}

/* ---- root complexes of Synopsys DesignWare Root Ports ---- */

bool sim_dwc_has_pmu(const struct sim_machine *m, size_t i)
{
        uint16_t vendor;

        if (i >= m->dwc.port_count || m->kernel < SIM_KERNEL_6_9)
                return false; /* dwc_pcie_pmu is there from 6.8 */
        vendor = m->devices[m->dwc.ports[i]].vendor;
        /* Alibaba and (from the 6.12 fix) Qualcomm; Ampere from 6.13. */
        return vendor == 0x1ded || (vendor == 0x17cb && m->kernel >= SIM_KERNEL_6_12) ||
               (vendor == 0x1def && m->kernel >= SIM_KERNEL_6_15);
}

/* One entry of "root_complexes". */
static int parse_dwc_rc(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"id", "numa_node", "cpu", "root_ports", NULL};
        struct sim_dwc_desc *dwc = &c->m->dwc;
        struct sim_dwc_rc *rc = &dwc->rcs[index];
        size_t ports[MAX_PORTS], count = 0;
        char p[PATH_LEN];
        json_object *v;
        int r;
        const struct field fields[] = {
            F_INT("id", rc->id, 0, 0xffff, .missing = "the root complex number"),
            F_INT("numa_node", rc->numa_node, -1, 1023,
                  .missing = "the NUMA node its devices report, -1 for none"),
            F_INT("cpu", rc->cpu, 0, (long long)c->m->cpus - 1,
                  .missing = "the CPU its PMUs' cpumask shows (the node's first)"),
        };

        (void)arg;
        r = READ_OBJECT(c, o, path, "a root complex", keys, fields);
        if (r)
                return r;
        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the root complex's Root Ports, at least one)");
        struct placement place = {.kind = SIM_ROOT_PORT,
                                  .parent = SIM_NONE,
                                  .core = SIM_NONE,
                                  .numa = rc->numa_node,
                                  .ports = ports,
                                  .port_count = &count};

        r = read_array(c, v, p, MAX_PORTS, "empty: a root complex has at least one Root Port",
                       parse_placed, &place);
        if (r)
                return r;
        for (size_t i = 0; i < count; i++) {
                if (dwc->port_count >= SIM_MAX_DWC_PORTS)
                        return fail(c, p, "more than %d Root Ports in all root complexes",
                                    SIM_MAX_DWC_PORTS);
                dwc->ports[dwc->port_count] = ports[i];
                dwc->port_rc[dwc->port_count++] = index;
        }
        dwc->rc_count = index + 1;
        return 0;
}

int parse_dwc(struct ctx *c, json_object *v)
{
        return read_array(c, v, "root_complexes", SIM_MAX_DWC_RCS,
                          "empty: describe at least one root complex", parse_dwc_rc, NULL);
}
