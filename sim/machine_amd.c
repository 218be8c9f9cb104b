// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_amd.c - the "amd" part of a machine description: sockets, their
 * IO root complexes (the io_<n> of the data fabric PMU's events) with root
 * buses and Root Ports, and the fabric PMU's counters (docs/simulator.md).
 */
#include <string.h>

#include "machine_internal.h"

#define DEF_DF_COUNTERS 16

struct rc_at {
        const struct sim_amd_socket *s;
        struct sim_amd_rc *rc;
};

static int parse_rc_port(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct rc_at *at = arg;
        struct sim_amd_rc *rc = at->rc;
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
        if (d->domain != rc->domain || d->bus != rc->bus)
                return fail(c, bp,
                            "a Root Port of root complex %u sits on its root bus %04x:%02x, not on "
                            "%04x:%02x",
                            rc->index, rc->domain, rc->bus, d->domain, d->bus);
        rc->ports[rc->port_count++] = idx;
        return 0;
}

/* The root bus is taken by another root complex of any socket. */
static int bus_taken(struct ctx *c, const char *path, const struct sim_amd_rc *rc)
{
        const struct sim_amd *amd = &c->m->amd;

        for (size_t si = 0; si < amd->socket_count; si++) {
                const struct sim_amd_socket *s = &amd->sockets[si];

                for (size_t k = 0; k < s->rc_count; k++)
                        if (&s->rcs[k] != rc && s->rcs[k].domain == rc->domain &&
                            s->rcs[k].bus == rc->bus)
                                return fail(c, path,
                                            "bus %04x:%02x is also the root bus of root complex "
                                            "%u of socket %u",
                                            rc->domain, rc->bus, s->rcs[k].index, s->id);
        }
        return 0;
}

static int parse_rc(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        static const char *const keys[] = {"index",        "domain",     "bus",
                                           "remote_share", "root_ports", NULL};
        struct sim_amd_socket *s = arg;
        struct sim_amd_rc *rc = &s->rcs[s->rc_count];
        const struct field fields[] = {
            F_INT("index", rc->index, 0, SIM_AMD_ROOT_COMPLEXES - 1,
                  .missing = "the n of the io_<n> events"),
            F_HEX("domain", rc->domain, 0xffff),
            F_HEX("bus", rc->bus, 0xff, .missing = "the root complex's root bus, e.g. \"0x40\""),
            F_DOUBLE("remote_share", rc->remote_share, 0, 1),
        };
        char p[PATH_LEN];
        json_object *v;
        int r;

        (void)i;
        memset(rc, 0, sizeof(*rc));
        r = READ_OBJECT(c, o, path, "a root complex", keys, fields);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "index");
        for (size_t k = 0; k < s->rc_count; k++)
                if (s->rcs[k].index == rc->index)
                        return fail(c, p, "root complex %u is already described on this socket",
                                    rc->index);
        path_key(p, sizeof(p), path, "bus");
        s->rc_count++; /* counted before its ports: they are found through it */
        r = bus_taken(c, p, rc);
        if (r)
                return r;
        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the root complex's Root Ports; [] for none)");
        struct rc_at at = {s, rc};

        return read_array(c, v, p, ARRAY_SIZE(rc->ports), NULL, parse_rc_port, &at);
}

static int parse_amd_socket(struct ctx *c, json_object *o, const char *path, size_t index,
                            void *arg)
{
        static const char *const keys[] = {"id", "numa_node", "cpus", "root_complexes", NULL};
        struct sim_amd *amd = &c->m->amd;
        struct sim_amd_socket *s = &amd->sockets[index];
        const struct field fields[] = {
            F_INT("id", s->id, 0, 255, .missing = ""),
            F_INT("numa_node", s->numa_node, -1, 1023, .missing = ""),
        };
        char p[PATH_LEN];
        json_object *v;
        int r;

        (void)arg;
        memset(s, 0, sizeof(*s));
        amd->socket_count = index + 1;
        r = READ_OBJECT(c, o, path, "a socket", keys, fields);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (size_t i = 0; i < index; i++)
                if (amd->sockets[i].id == s->id)
                        return fail(c, p, "socket %u is already described by amd.sockets[%zu]",
                                    s->id, i);
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's CPUs, one range such as \"0-95\")");
        r = parse_cpu_range(c, v, p, &s->first_cpu, &s->cpu_count);
        if (r)
                return r;
        for (size_t i = 0; i < index; i++) {
                const struct sim_amd_socket *o2 = &amd->sockets[i];

                if (s->first_cpu < o2->first_cpu + o2->cpu_count &&
                    o2->first_cpu < s->first_cpu + s->cpu_count)
                        return fail(c, p, "CPUs overlap those of amd.sockets[%zu]", i);
        }
        v = field_at(o, path, "root_complexes", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's IO root complexes)");
        return read_array(c, v, p, SIM_AMD_ROOT_COMPLEXES, NULL, parse_rc, s);
}

int parse_amd(struct ctx *c, json_object *o)
{
        static const char *const keys[] = {"cpu_family",   "cpu_model", "df_counters",
                                           "narrow_umask", "sockets",   NULL};
        struct sim_amd *amd = &c->m->amd;
        const struct field fields[] = {
            F_HEX("cpu_family", amd->cpu_family, 0xff, .missing = "e.g. \"0x1a\" (Zen 5)"),
            F_HEX("cpu_model", amd->cpu_model, 0xff, .missing = ""),
            F_INT("df_counters", amd->df_counters, 1, 64),
            F_BOOL("narrow_umask", amd->narrow_umask),
        };
        json_object *v;
        int r;

        amd->df_counters = DEF_DF_COUNTERS;
        r = READ_OBJECT(c, o, "amd", "\"amd\"", keys, fields);
        if (r)
                return r;
        amd->present = true;
        v = member(o, "sockets");
        if (!v)
                return fail(c, "amd.sockets", "missing (at least one socket)");
        return read_array(c, v, "amd.sockets", SIM_MAX_SOCKETS,
                          "empty: describe at least one socket", parse_amd_socket, NULL);
}
