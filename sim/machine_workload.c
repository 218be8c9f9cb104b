// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_workload.c - the workload of an endpoint in a machine
 * description: its flows (rate, size and latency distributions) and the
 * phases of its cycle. Part of the machine reader (sim_machine.c; shared
 * declarations in machine_internal.h).
 */
#define _GNU_SOURCE
#include "machine_internal.h"
#include "sim_traffic.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- workloads ---- */

static const char *const flow_keys[SIM_FLOW_KINDS] = {"dma_write", "dma_read", "mmio_write",
                                                      "mmio_read"};

/* A number (one value, weight 1) or [[value, weight], ...]. */
static int parse_dist(struct ctx *c, json_object *v, const char *path, double max, const char *unit,
                      struct sim_dist *d)
{
        char p[PATH_LEN], pp[PATH_LEN];
        size_t n;
        int r;

        if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
                d->count = 1;
                d->weight[0] = 1;
                r = get_double(c, v, path, 0, max, &d->value[0]);
                if (r)
                        return r;
                if (d->value[0] <= 0)
                        return fail(c, path, "%g %s: must be above 0", d->value[0], unit);
                return 0;
        }
        if (!json_object_is_type(v, json_type_array))
                return fail(c, path, "expected a number or [[%s, weight], ...], got %s", unit,
                            type_desc(v));
        n = json_object_array_length(v);
        if (n == 0 || n > SIM_DIST_MAX)
                return fail(c, path, "%zu points: 1 to %d are allowed", n, SIM_DIST_MAX);
        for (size_t i = 0; i < n; i++) {
                json_object *pt = json_object_array_get_idx(v, i);

                path_idx(p, sizeof(p), path, i);
                if (!json_object_is_type(pt, json_type_array) || json_object_array_length(pt) != 2)
                        return fail(c, p, "expected a pair [%s, weight]", unit);
                path_idx(pp, sizeof(pp), p, 0);
                r = get_double(c, json_object_array_get_idx(pt, 0), pp, 0, max, &d->value[i]);
                if (r)
                        return r;
                if (d->value[i] <= 0)
                        return fail(c, pp, "%g %s: must be above 0", d->value[i], unit);
                path_idx(pp, sizeof(pp), p, 1);
                r = get_double(c, json_object_array_get_idx(pt, 1), pp, 0, 1e12, &d->weight[i]);
                if (r)
                        return r;
                if (d->weight[i] <= 0)
                        return fail(c, pp, "weight %g: must be above 0", d->weight[i]);
        }
        d->count = n;
        return 0;
}

static void dist_one(struct sim_dist *d, double value)
{
        memset(d, 0, sizeof(*d));
        d->count = 1;
        d->value[0] = value;
        d->weight[0] = 1;
}

static int parse_flow(struct ctx *c, json_object *o, const char *path, struct sim_flow *f)
{
        static const char *const keys[] = {"bytes_per_second", "sizes", "latency_ns", NULL};
        const struct field fields[] = {F_DOUBLE("bytes_per_second", f->bytes_per_second, 0, 1e12)};
        char p[PATH_LEN];
        json_object *v;
        int r;

        r = READ_OBJECT(c, o, path, "a flow", keys, fields);
        if (r)
                return r;
        v = field_at(o, path, "sizes", p, sizeof(p));
        if (v) {
                r = parse_dist(c, v, p, 64.0 * 1024 * 1024, "bytes", &f->size);
                if (r)
                        return r;
                for (size_t i = 0; i < f->size.count; i++) {
                        if (f->size.value[i] != (double)(long long)f->size.value[i])
                                return fail(c, p, "%g bytes: sizes are whole bytes",
                                            f->size.value[i]);
                }
        }
        v = field_at(o, path, "latency_ns", p, sizeof(p));
        if (v) {
                r = parse_dist(c, v, p, 1e9, "ns", &f->latency);
                if (r)
                        return r;
        }
        return 0;
}

static int check_seconds(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        return v <= 0 ? fail(c, path, "%g s: must be above 0", v) : 0;
}

static int parse_phase(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        static const char *const keys[] = {"duration_s", "scale", NULL};
        struct sim_workload *w = arg;
        const struct field fields[] = {
            F_DOUBLE("duration_s", w->phases[i].duration, 0, 1e6, .missing = "seconds, above 0",
                     .check = check_seconds),
            F_DOUBLE("scale", w->phases[i].scale, 0, 1000,
                     .missing = "multiplies every flow, >= 0"),
        };

        return READ_OBJECT(c, o, path, "a phase", keys, fields);
}

int parse_workload(struct ctx *c, json_object *o, const char *path, struct sim_workload *w)
{
        static const char *const keys[] = {"dma_write", "dma_read", "mmio_write",
                                           "mmio_read", "phases",   NULL};
        static const double def_size[SIM_FLOW_KINDS] = {4096, 4096, 8, 4};
        static const double def_latency[SIM_FLOW_KINDS] = {300, 1000, 100, 1000};
        char p[PATH_LEN];
        json_object *v;
        int r;

        r = open_object(c, o, path, "a workload", keys);
        if (r)
                return r;
        for (int k = 0; k < SIM_FLOW_KINDS; k++) {
                w->flow[k].bytes_per_second = 0;
                dist_one(&w->flow[k].size, def_size[k]);
                dist_one(&w->flow[k].latency, def_latency[k]);
                v = member(o, flow_keys[k]);
                if (!v)
                        continue;
                path_key(p, sizeof(p), path, flow_keys[k]);
                r = parse_flow(c, v, p, &w->flow[k]);
                if (r)
                        return r;
        }
        v = field_at(o, path, "phases", p, sizeof(p));
        if (v) {
                r = read_array(c, v, p, SIM_PHASES_MAX, NULL, parse_phase, w);
                if (r)
                        return r;
                w->phase_count = json_object_array_length(v);
        }
        return 0;
}

/* Traffic needs a link; more than the links carry is scaled down
 * (sim_traffic_backpressure), as a real link's flow control does. */
int check_workloads(struct ctx *c)
{
        struct sim_machine *m = c->m;
        char p[PATH_LEN];

        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                bool busy = false;

                for (int k = 0; k < SIM_FLOW_KINDS && d->has_workload; k++)
                        busy |= d->workload.flow[k].bytes_per_second > 0;
                path_key(p, sizeof(p), c->info[i].path, "workload");
                if (d->cur_width == 0 && busy)
                        return fail(c, p, "traffic on a device whose link is down");
        }
        sim_traffic_backpressure(m);
        return 0;
}
