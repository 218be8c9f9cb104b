// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_nvidia.c - the "nvidia" section of a machine description: the
 * NVIDIA Grace (Tegra241) sockets, each with its nvidia_pcie_pmu_<node>,
 * its CPUs, its Root Ports (with the devices below them) and the bit of
 * the PMU's root_port filter that selects each Root Port in the simulated
 * hardware. Format: docs/simulator.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine_internal.h"

#define DEF_NV_IDENTIFIER 0x2e10043bu /* PMIIDR as the sysfs file shows it (invented) */
#define DEF_NV_CYCLES_HZ  1e9
#define DEF_NV_COUNTERS   16u

/* "a-b" or "a": CPUs of the socket, which must exist. */
static int parse_cpus(struct ctx *c, json_object *v, const char *path, struct sim_nv_socket *s)
{
        char buf[32], *end;
        unsigned long a, b;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        if (buf[0] < '0' || buf[0] > '9')
                return fail(c, path, "\"%s\" is not one CPU range such as \"0-71\"", buf);
        a = strtoul(buf, &end, 10);
        b = a;
        if (*end == '-' && end[1] >= '0' && end[1] <= '9')
                b = strtoul(end + 1, &end, 10);
        if (*end)
                return fail(c, path, "\"%s\" is not one CPU range such as \"0-71\"", buf);
        if (a > b)
                return fail(c, path, "range %lu-%lu runs backwards", a, b);
        if (b >= c->m->cpus)
                return fail(c, path, "CPU %lu does not exist (the machine has %u CPUs)", b,
                            c->m->cpus);
        s->first_cpu = (unsigned int)a;
        s->cpu_count = (unsigned int)(b - a + 1);
        return 0;
}

/* One element of a socket's "root_ports": a Root Port with what is below. */
static int parse_nv_port(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        struct sim_nv_socket *s = arg;
        size_t idx = c->m->device_count;
        int r;

        (void)i;
        r = parse_device(c, o, path, SIM_ROOT_PORT, SIM_NONE, SIM_NONE, (int)s->node);
        if (!r)
                s->ports[s->port_count++] = idx;
        return r;
}

/* One element of a socket's "root_port_bits": the filter bit of the Root
 * Port at the same index. */
static int parse_nv_bit(struct ctx *c, json_object *v, const char *path, size_t i, void *arg)
{
        struct sim_nv_socket *s = arg;
        long long bit;
        int r = get_int(c, v, path, 0, SIM_NV_PORT_BITS - 1, &bit);

        if (r)
                return r;
        for (size_t k = 0; k < i; k++)
                if (s->bits[k] == (unsigned int)bit)
                        return fail(c, path, "bit %lld already selects root_ports[%zu]", bit, k);
        s->bits[i] = (unsigned int)bit;
        return 0;
}

/* read_array for arrays of scalars: each element through @fn. */
static int each_scalar(struct ctx *c, json_object *v, const char *path, size_t max,
                       int (*fn)(struct ctx *, json_object *, const char *, size_t, void *),
                       void *arg, size_t *count)
{
        char p[PATH_LEN];
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return fail(c, path, "expected an array, found %s", type_desc(v));
        n = json_object_array_length(v);
        if (n > max)
                return fail(c, path, "%zu elements, at most %zu", n, max);
        for (size_t i = 0; i < n; i++) {
                int r;

                path_idx(p, sizeof(p), path, i);
                r = fn(c, json_object_array_get_idx(v, i), p, i, arg);
                if (r)
                        return r;
        }
        *count = n;
        return 0;
}

static int parse_nv_socket(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"node",       "cpus",           "remote_share",
                                           "root_ports", "root_port_bits", NULL};
        struct sim_nvidia *nv = &c->m->nvidia;
        struct sim_nv_socket *s = &nv->sockets[index];
        const struct field fields[] = {
            F_INT("node", s->node, 0, 1023, .missing = "the NUMA node of the PMU's CPUs"),
            F_DOUBLE("remote_share", s->remote_share, 0, 1),
        };
        char p[PATH_LEN];
        json_object *v;
        size_t bits = 0;
        int r;

        (void)arg;
        nv->socket_count = index + 1;
        r = READ_OBJECT(c, o, path, "a Grace socket", keys, fields);
        if (r)
                return r;
        for (size_t i = 0; i < index; i++) {
                if (nv->sockets[i].node == s->node) {
                        path_key(p, sizeof(p), path, "node");
                        return fail(c, p, "node %u already has nvidia.sockets[%zu]", s->node, i);
                }
        }
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's CPUs, one range such as \"0-71\")");
        r = parse_cpus(c, v, p, s);
        if (r)
                return r;
        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's Root Ports)");
        r = read_array(c, v, p, SIM_NV_PORT_BITS, "empty: a socket has at least one Root Port",
                       parse_nv_port, s);
        if (r)
                return r;
        v = field_at(o, path, "root_port_bits", p, sizeof(p));
        if (!v) {
                /* Without a table the hardware follows the documented
                 * default of the collector: bit = the Root Port's segment
                 * less 16 x node. */
                for (size_t i = 0; i < s->port_count; i++) {
                        const struct sim_device *d = &c->m->devices[s->ports[i]];
                        unsigned int bit = (unsigned int)d->domain - 16 * s->node;

                        if (d->domain < 16 * s->node || bit >= SIM_NV_PORT_BITS)
                                return fail(c, p,
                                            "missing, and root_ports[%zu] on segment %04x is not "
                                            "one of the default segments %04x..%04x of node %u",
                                            i, d->domain, 16 * s->node, 16 * s->node + 9, s->node);
                        s->bits[i] = bit;
                }
                return 0;
        }
        r = each_scalar(c, v, p, SIM_NV_PORT_BITS, parse_nv_bit, s, &bits);
        if (!r && bits != s->port_count)
                return fail(c, p, "%zu bits for %zu Root Ports (one per root_ports element)", bits,
                            s->port_count);
        return r;
}

int parse_nvidia(struct ctx *c, json_object *o)
{
        static const char *const keys[] = {"identifier", "cycles_hz", "counters", "sockets", NULL};
        struct sim_nvidia *nv = &c->m->nvidia;
        const struct field fields[] = {
            F_HEX("identifier", nv->identifier, 0xffffffffUL),
            F_DOUBLE("cycles_hz", nv->cycles_hz, 1e6, 1e11),
            F_INT("counters", nv->counters, 1, 64),
        };
        json_object *v;
        int r;

        nv->identifier = DEF_NV_IDENTIFIER;
        nv->cycles_hz = DEF_NV_CYCLES_HZ;
        nv->counters = DEF_NV_COUNTERS;
        r = READ_OBJECT(c, o, "nvidia", "\"nvidia\"", keys, fields);
        if (r)
                return r;
        nv->present = true;
        v = member(o, "sockets");
        if (!v)
                return fail(c, "nvidia.sockets", "missing (at least one socket)");
        r = read_array(c, v, "nvidia.sockets", SIM_MAX_SOCKETS,
                       "empty: describe at least one socket", parse_nv_socket, NULL);
        for (size_t i = 0; !r && i < nv->socket_count; i++) {
                const struct sim_nv_socket *s = &nv->sockets[i];

                for (size_t k = 0; k < i; k++) {
                        const struct sim_nv_socket *t = &nv->sockets[k];

                        if (s->first_cpu < t->first_cpu + t->cpu_count &&
                            t->first_cpu < s->first_cpu + s->cpu_count)
                                return fail(c, "nvidia.sockets",
                                            "the CPUs of sockets[%zu] and [%zu] overlap", k, i);
                }
        }
        return r;
}
