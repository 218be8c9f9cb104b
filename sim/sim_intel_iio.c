// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_intel_iio.c - simulated Intel uncore IIO free-running PMUs behind the
 * perf ops. See sim_intel_iio.h for the model.
 *
 * A free-running counter of the model is a pure function of time: the
 * bytes the devices below a part's Root Port moved since the model started
 * (integrated exactly from the workload phases), divided by the bytes per
 * count and truncated; ioclk is time times the clock rate, truncated. An
 * event remembers the counter value at its last update (base) and adds the
 * difference to its value whenever it was counting (itself and its leader
 * enabled). Every operation first brings all events up to now, so a
 * disabled event's value does not advance and counts are exact integers.
 */
#define _GNU_SOURCE
#include "sim_intel_iio.h"
#include "sim_pmu_core.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "iio_stackmap.h"
#include "sim_events.h"
#include <limits.h>
#include "sim_traffic.h"

#define MAX_EVENTS 4096
#define MAX_GROUP  64

enum iio_kind { IIO_IOCLK, IIO_BW_IN, IIO_BW_OUT };

/* An IIO event: the core's part (contributions in bytes per second at
 * workload scale 1), then the counter's. */
struct iio_event {
        struct sim_pmu_event e;
        size_t socket, stack;
        unsigned int box;
        enum iio_kind kind;
        unsigned int part;
        unsigned int generation; /* the PMU's binding it was opened on */
        uint64_t value;          /* counts while counting */
        uint64_t base;           /* counter reading at the last update */
        double time_s;           /* seconds counted (time_enabled == time_running) */
};

struct sim_iio {
        struct sim_pmu_core core; /* fd table, lock, clock */
        const struct sim_machine *m;
        double last; /* seconds since t0 of the last update */
};

#define ev_at(p, slot) SIM_PMU_EVENT_AT(&(p)->core, slot, struct iio_event)

double sim_iio_now(struct sim_iio *p)
{
        return sim_pmu_core_now(&p->core);
}

/* ---- ground truth ---- */

/* Device index of the Root Port of @part in a stack, or SIM_NONE. */
static size_t part_port(const struct sim_machine *m, const struct sim_iio_stack *st,
                        unsigned int part)
{
        for (size_t i = 0; i < st->port_count; i++) {
                if (m->devices[st->ports[i]].dev == part + 1)
                        return st->ports[i];
        }
        return SIM_NONE;
}

/* Payload bytes per second (scale 1) of device @dev: towards the host
 * (@in) or towards the device. */
static double device_rate(const struct sim_machine *m, size_t dev, bool in)
{
        enum sim_tlp_class a = in ? SIM_RX_MWR : SIM_TX_CPL;
        enum sim_tlp_class b = in ? SIM_RX_CPL : SIM_TX_MWR;
        struct sim_tlp_rates r;
        double dw;

        if (!m->devices[dev].has_workload)
                return 0;
        sim_traffic_rates(m, dev, a, &r);
        dw = r.payload_dw;
        sim_traffic_rates(m, dev, b, &r);
        dw += r.payload_dw;
        return dw * 4;
}

void sim_truth_iio_part(const struct sim_iio *p, size_t socket, size_t stack, unsigned int part,
                        double t0, double t1, double *in_bytes, double *out_bytes)
{
        const struct sim_machine *m = p->m;
        const struct sim_socket *s;
        size_t port;

        *in_bytes = 0;
        *out_bytes = 0;
        if (socket >= m->intel.socket_count || part > 7)
                return;
        s = &m->intel.sockets[socket];
        if (stack >= s->stack_count)
                return;
        port = part_port(m, &s->stacks[stack], part);
        if (port == SIM_NONE)
                return;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double integral;

                if (dev == port || !m->devices[dev].has_workload ||
                    sim_machine_root_port(m, dev) != port)
                        continue;
                integral = sim_device_traffic_integral(m, dev, t0, t1);
                *in_bytes += device_rate(m, dev, true) * integral;
                *out_bytes += device_rate(m, dev, false) * integral;
        }
}

/* ---- counters ---- */

/* The free-running counter of @e at @t seconds since creation. */
static uint64_t counter_at(const struct sim_iio *p, const struct iio_event *e, double t)
{
        const struct sim_intel *in = &p->m->intel;
        double x = 0;

        if (t <= 0)
                return 0;
        if (e->kind == IIO_IOCLK) {
                x = t * in->ioclk_hz;
        } else {
                for (size_t i = 0; i < e->e.contrib_count; i++)
                        x += e->e.contrib[i].per_second *
                             sim_device_traffic_integral(p->m, e->e.contrib[i].dev, 0, t);
                x /=
                    e->kind == IIO_BW_IN ? in->iio_in_bytes_per_count : in->iio_out_bytes_per_count;
        }
        return x <= 0 ? 0 : (uint64_t)floor(x);
}

/* Brings every event up to now. Call with the lock held. */
static void update(struct sim_pmu_core *c)
{
        struct sim_iio *p = c->owner;
        double now = sim_iio_now(p);
        double dt = now > p->last ? now - p->last : 0;

        for (size_t i = 0; i < c->used_max; i++) {
                struct iio_event *e = ev_at(p, i);
                uint64_t v;

                if (!e->e.used)
                        continue;
                v = counter_at(p, e, now);
                if (sim_pmu_core_counting(c, &e->e)) {
                        e->value += v > e->base ? v - e->base : 0;
                        e->time_s += dt;
                }
                e->base = v;
        }
        if (now > p->last)
                p->last = now;
}

static int build_contrib(struct sim_iio *p, struct iio_event *e)
{
        const struct sim_machine *m = p->m;
        const struct sim_iio_stack *st = &m->intel.sockets[e->socket].stacks[e->stack];
        size_t port;

        e->e.contrib_count = 0;
        if (e->kind == IIO_IOCLK)
                return 0;
        port = part_port(m, st, e->part);
        if (port == SIM_NONE)
                return 0; /* a part without a Root Port counts nothing */
        e->e.contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->e.contrib));
        if (!e->e.contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double rate;

                if (dev == port || !m->devices[dev].has_workload ||
                    sim_machine_root_port(m, dev) != port)
                        continue;
                rate = device_rate(m, dev, e->kind == IIO_BW_IN);
                if (rate > 0)
                        e->e.contrib[e->e.contrib_count++] = (struct sim_contrib){dev, rate};
        }
        return 0;
}

/* ---- the model's part of the perf ops (sim_pmu_core does the rest) ---- */

/* Socket of @cpu, or SIZE_MAX. */
static size_t socket_of_cpu(const struct sim_machine *m, int cpu)
{
        for (size_t i = 0; cpu >= 0 && i < m->intel.socket_count; i++) {
                const struct sim_socket *s = &m->intel.sockets[i];

                if ((unsigned int)cpu >= s->first_cpu &&
                    (unsigned int)cpu < s->first_cpu + s->cpu_count)
                        return i;
        }
        return SIZE_MAX;
}

/* Whether some socket has a stack with box id @box. */
static bool box_exists(const struct sim_machine *m, unsigned int box)
{
        for (size_t i = 0; i < m->intel.socket_count; i++)
                for (size_t k = 0; k < m->intel.sockets[i].stack_count; k++)
                        if (m->intel.sockets[i].stacks[k].box_id == box)
                                return true;
        return false;
}

uint32_t sim_iio_type_of(unsigned int box, unsigned int generation)
{
        if (!generation)
                return SIM_IIO_TYPE_BASE + box;
        return SIM_IIO_REBIND_BASE + box + 0x100 * ((generation - 1) % 15);
}

/* The box of perf type @type (either binding's range), or UINT_MAX. */
static unsigned int box_of_type(uint32_t type)
{
        if (type >= SIM_IIO_TYPE_BASE && type - SIM_IIO_TYPE_BASE <= 0xff)
                return type - SIM_IIO_TYPE_BASE;
        if (type >= SIM_IIO_REBIND_BASE && type - SIM_IIO_REBIND_BASE < 0x100 * 15)
                return (type - SIM_IIO_REBIND_BASE) & 0xff;
        return UINT_MAX;
}

/* perf_pmu_unregister() since the event was opened: revoked (read() gives
 * 0 bytes, ioctl() -ENODEV), as for the hisi_pcie PMUs. */
static bool iio_revoked(struct sim_pmu_core *c, const struct sim_pmu_event *ev)
{
        const struct sim_iio *p = c->owner;
        const struct iio_event *e = (const struct iio_event *)ev;
        unsigned int generation;

        return !sim_pmu_kind_bound(p->m, SIM_PMUK_IIO, e->box, p->last, &generation) ||
               generation != e->generation;
}

/* The uncore driver's event_init and the perf core's target checks. */
static int iio_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                          int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        const struct sim_machine *m = ((struct sim_iio *)c->owner)->m;
        struct iio_event *e = (struct iio_event *)ev;
        unsigned int event, umask;

        (void)slot;
        unsigned int generation;

        e->box = box_of_type(attr->type);
        if (e->box == UINT_MAX || !box_exists(m, e->box))
                return -ENOENT; /* not one of ours: perf would try the next PMU */
        /* An unbound PMU's type is no longer in the kernel's idr, nor is
         * the type of an earlier binding (sim_events.h). */
        if (!sim_pmu_kind_bound(m, SIM_PMUK_IIO, e->box, sim_iio_now(c->owner), &generation) ||
            sim_iio_type_of(e->box, generation) != attr->type)
                return -ENOENT;
        e->generation = generation;
        /* perf core: all tasks on no CPU, or a CPU that does not exist;
         * uncore: no task events, no sampling, a CPU of a die with the box. */
        if (pid != -1 || cpu < 0 || (unsigned int)cpu >= m->cpus || attr->sample_period ||
            attr->freq)
                return -EINVAL;
        /* No check of @cpu being online: uncore_pmu_event_init() sets
         * event->cpu to the die's collecting CPU (box->cpu), and
         * perf_event_open() checks that one. */
        e->socket = socket_of_cpu(m, cpu);
        if (e->socket == SIZE_MAX)
                return -EINVAL;
        e->stack = SIZE_MAX;
        for (size_t k = 0; k < m->intel.sockets[e->socket].stack_count; k++)
                if (m->intel.sockets[e->socket].stacks[k].box_id == e->box)
                        e->stack = k;
        if (e->stack == SIZE_MAX)
                return -EINVAL; /* no such box on this CPU's die */
        event = attr->config & 0xff;
        umask = (attr->config >> 8) & 0xff;
        if (event != 0xff)
                return -EINVAL; /* free-running PMUs have no programmable counters */
        if (umask == 0x10) {
                e->kind = IIO_IOCLK;
        } else if (umask >= 0x20 && umask <= 0x27) {
                e->kind = IIO_BW_IN;
                e->part = umask - 0x20;
        } else if (umask >= 0x30 && umask <= 0x37) {
                e->kind = IIO_BW_OUT;
                e->part = umask - 0x30;
        } else {
                return -EINVAL;
        }
        /* PERF_PMU_CAP_NO_EXCLUDE, checked before the group here */
        return sim_attr_excludes(attr) ? -EINVAL : 0;
}

/* One PMU (box) on one socket, at most MAX_GROUP events. */
static bool iio_can_join(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                         const struct sim_pmu_event *ev)
{
        const struct iio_event *l = (const struct iio_event *)leader;
        const struct iio_event *e = (const struct iio_event *)ev;

        return l->box == e->box && l->socket == e->socket &&
               sim_pmu_core_group_size(c, leader->leader) < MAX_GROUP;
}

static int iio_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot)
{
        struct sim_iio *p = c->owner;
        struct iio_event *e = (struct iio_event *)ev;
        int ret;

        (void)slot;
        ret = build_contrib(p, e);
        if (!ret)
                e->base = counter_at(p, e, p->last);
        return ret;
}

static uint64_t ns_of(double s)
{
        return s <= 0 ? 0 : (uint64_t)floor(s * 1e9);
}

static void iio_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                       struct sim_pmu_report *out)
{
        const struct iio_event *e = (const struct iio_event *)ev;

        (void)c;
        out->value = e->value;
        /* Free-running: never multiplexed, running == enabled. */
        out->enabled_ns = ns_of(e->time_s);
        out->running_ns = ns_of(e->time_s);
}

static void iio_reset(struct sim_pmu_core *c, struct sim_pmu_event *ev)
{
        (void)c;
        ((struct iio_event *)ev)->value = 0;
}

static const struct sim_pmu_model iio_model = {
    .event_size = sizeof(struct iio_event),
    .event_cap = MAX_EVENTS,
    .fd_base = SIM_IIO_FD_BASE,
    .groups = true,
    .foreign_group_fd_min = SIM_FD_BASE,
    .refused_excludes = SIM_EXCLUDE_ALL,
    .advance = update,
    .event_init = iio_event_init,
    .can_join = iio_can_join,
    .start = iio_start,
    .report = iio_report,
    .reset = iio_reset,
    .revoked = iio_revoked,
};

/* ---- life cycle ---- */

int sim_iio_new(const struct sim_machine *m, sim_clock_fn clock, void *clock_ctx,
                struct sim_iio **out)
{
        struct sim_iio *p;

        *out = NULL;
        if (!m || !m->intel.present)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->m = m;
        if (sim_pmu_core_init(&p->core, &iio_model, p, clock, clock_ctx, 0)) {
                sim_iio_free(p);
                return -ENOMEM;
        }
        *out = p;
        return 0;
}

void sim_iio_free(struct sim_iio *p)
{
        if (!p)
                return;
        sim_pmu_core_fini(&p->core);
        free(p);
}

const struct perf_ops *sim_iio_ops(struct sim_iio *p)
{
        return &p->core.ops;
}

size_t sim_iio_open_count(struct sim_iio *p)
{
        return sim_pmu_core_open_count(&p->core);
}

/* ---- the CPU bus registers in configuration space ---- */

static void put_le32(uint8_t *cfg, size_t off, uint32_t v)
{
        for (unsigned int b = 0; b < 4; b++)
                cfg[off + b] = (uint8_t)(v >> (8 * b));
}

/* CPUBUSNO_VALID and CPUBUSNO0..7 of socket @s's MSM function. */
static void msm_registers(const struct sim_socket *s, uint8_t *cfg)
{
        uint32_t valid = 0, busno[8] = {0};

        for (size_t k = 0; k < s->stack_count; k++) {
                unsigned int c = s->cpubus[k];

                valid |= 1u << c;
                busno[c / 4] |= (uint32_t)s->stacks[k].bus << (8 * (c % 4));
        }
        put_le32(cfg, IIO_MSM_CPUBUSNO_VALID, valid);
        for (unsigned int i = 0; i < 8; i++)
                put_le32(cfg, (i < 4 ? IIO_MSM_CPUBUSNO0 : IIO_MSM_CPUBUSNO4) + (i % 4) * 4,
                         busno[i]);
}

void sim_iio_register_config(const struct sim_machine *m, size_t idx, uint8_t *cfg)
{
        for (size_t i = 0; m->intel.stack_registers && i < m->intel.socket_count; i++) {
                const struct sim_socket *s = &m->intel.sockets[i];

                if (idx == s->msm_function)
                        msm_registers(s, cfg);
                if (idx == s->pcu_function)
                        put_le32(cfg, IIO_PCU_CAPID4, m->intel.chop << 6);
                for (size_t k = 0; k < s->stack_count; k++)
                        if (idx == s->sad_function[k])
                                put_le32(cfg, IIO_SAD_CONTROL_CFG, s->id & 0xf);
        }
}
