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
#include "sim_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_env.h"
#include "sim_traffic.h"

#define MAX_EVENTS 4096
#define MAX_GROUP  64

enum iio_kind { IIO_IOCLK, IIO_BW_IN, IIO_BW_OUT };

struct contrib {
        size_t dev;
        double bytes_per_second; /* at workload scale 1 */
};

struct iio_event {
        bool used;
        size_t socket, stack;
        unsigned int box;
        enum iio_kind kind;
        unsigned int part;
        uint64_t read_format;
        size_t leader; /* index of the group leader (self for a leader) */
        bool enabled;
        uint64_t value; /* counts while counting */
        uint64_t base;  /* counter reading at the last update */
        double time_s;  /* seconds counted (time_enabled == time_running) */
        size_t contrib_count;
        struct contrib *contrib;
};

struct sim_iio {
        const struct sim_machine *m;
        sim_clock_fn clock;
        void *clock_ctx;
        double t0;   /* clock at creation */
        double last; /* seconds since t0 of the last update */
        pthread_mutex_t lock;
        struct perf_ops ops;
        size_t used_max; /* events[used_max..] are all unused */
        struct iio_event *events;
};

static double monotonic_seconds(void *ctx)
{
        struct timespec ts;

        (void)ctx;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double sim_iio_now(struct sim_iio *p)
{
        return p->clock(p->clock_ctx) - p->t0;
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
                integral = sim_traffic_integral(&m->devices[dev].workload, t0, t1);
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
                for (size_t i = 0; i < e->contrib_count; i++) {
                        const struct sim_device *d = &p->m->devices[e->contrib[i].dev];

                        x += e->contrib[i].bytes_per_second *
                             sim_traffic_integral(&d->workload, 0, t);
                }
                x /=
                    e->kind == IIO_BW_IN ? in->iio_in_bytes_per_count : in->iio_out_bytes_per_count;
        }
        return x <= 0 ? 0 : (uint64_t)floor(x);
}

static bool counting(const struct sim_iio *p, const struct iio_event *e)
{
        return e->used && e->enabled && p->events[e->leader].used && p->events[e->leader].enabled;
}

/* Brings every event up to now. Call with the lock held. */
static void update(struct sim_iio *p)
{
        double now = sim_iio_now(p);
        double dt = now > p->last ? now - p->last : 0;

        for (size_t i = 0; i < p->used_max; i++) {
                struct iio_event *e = &p->events[i];
                uint64_t c;

                if (!e->used)
                        continue;
                c = counter_at(p, e, now);
                if (counting(p, e)) {
                        e->value += c > e->base ? c - e->base : 0;
                        e->time_s += dt;
                }
                e->base = c;
        }
        if (now > p->last)
                p->last = now;
}

static int build_contrib(struct sim_iio *p, struct iio_event *e)
{
        const struct sim_machine *m = p->m;
        const struct sim_iio_stack *st = &m->intel.sockets[e->socket].stacks[e->stack];
        size_t port;

        e->contrib_count = 0;
        if (e->kind == IIO_IOCLK)
                return 0;
        port = part_port(m, st, e->part);
        if (port == SIM_NONE)
                return 0; /* a part without a Root Port counts nothing */
        e->contrib = calloc(m->device_count ? m->device_count : 1, sizeof(*e->contrib));
        if (!e->contrib)
                return -ENOMEM;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                double rate;

                if (dev == port || !m->devices[dev].has_workload ||
                    sim_machine_root_port(m, dev) != port)
                        continue;
                rate = device_rate(m, dev, e->kind == IIO_BW_IN);
                if (rate > 0)
                        e->contrib[e->contrib_count++] = (struct contrib){dev, rate};
        }
        return 0;
}

/* ---- perf ops ---- */

static struct iio_event *event_of(struct sim_iio *p, int fd)
{
        long i = (long)fd - SIM_IIO_FD_BASE;

        if (fd < SIM_IIO_FD_BASE || i >= MAX_EVENTS || !p->events[i].used)
                return NULL;
        return &p->events[i];
}

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

static size_t group_size(const struct sim_iio *p, size_t leader)
{
        size_t n = 0;

        for (size_t i = 0; i < p->used_max; i++)
                n += p->events[i].used && p->events[i].leader == leader;
        return n;
}

static int iio_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                    unsigned long flags)
{
        struct sim_iio *p = ctx;
        const struct sim_machine *m = p->m;
        struct iio_event ev = {0}, *leader = NULL;
        unsigned int box, event, umask;
        size_t slot = SIZE_MAX;
        int ret;

        (void)flags;
        if (!attr)
                return -EFAULT;
        pthread_mutex_lock(&p->lock);
        update(p);
        if (attr->type < SIM_IIO_TYPE_BASE || attr->type - SIM_IIO_TYPE_BASE > 0xff ||
            !box_exists(m, attr->type - SIM_IIO_TYPE_BASE)) {
                ret = -ENOENT; /* not one of ours: perf would try the next PMU */
                goto out;
        }
        box = attr->type - SIM_IIO_TYPE_BASE;
        /* perf core: all tasks on no CPU, or a CPU that does not exist;
         * uncore: no task events, no sampling, a CPU of a die with the box. */
        if (pid != -1 || cpu < 0 || (unsigned int)cpu >= m->cpus || attr->sample_period ||
            attr->freq) {
                ret = -EINVAL;
                goto out;
        }
        ev.socket = socket_of_cpu(m, cpu);
        if (ev.socket == SIZE_MAX) {
                ret = -EINVAL;
                goto out;
        }
        ev.stack = SIZE_MAX;
        for (size_t k = 0; k < m->intel.sockets[ev.socket].stack_count; k++)
                if (m->intel.sockets[ev.socket].stacks[k].box_id == box)
                        ev.stack = k;
        if (ev.stack == SIZE_MAX) {
                ret = -EINVAL; /* no such box on this CPU's die */
                goto out;
        }
        event = attr->config & 0xff;
        umask = (attr->config >> 8) & 0xff;
        if (event != 0xff) {
                ret = -EINVAL; /* free-running PMUs have no programmable counters */
                goto out;
        }
        if (umask == 0x10) {
                ev.kind = IIO_IOCLK;
        } else if (umask >= 0x20 && umask <= 0x27) {
                ev.kind = IIO_BW_IN;
                ev.part = umask - 0x20;
        } else if (umask >= 0x30 && umask <= 0x37) {
                ev.kind = IIO_BW_OUT;
                ev.part = umask - 0x30;
        } else {
                ret = -EINVAL;
                goto out;
        }
        /* PERF_PMU_CAP_NO_EXCLUDE */
        if (attr->exclude_user || attr->exclude_kernel || attr->exclude_hv || attr->exclude_idle ||
            attr->exclude_host || attr->exclude_guest) {
                ret = -EINVAL;
                goto out;
        }
        if (group_fd != -1) {
                leader = event_of(p, group_fd);
                if (!leader) {
                        /* Another PMU's event (a hisi_pcie fd) cannot lead. */
                        ret = group_fd >= SIM_FD_BASE ? -EINVAL : -EBADF;
                        goto out;
                }
                if (leader->leader != (size_t)(leader - p->events) || leader->box != box ||
                    leader->socket != ev.socket || group_size(p, leader->leader) >= MAX_GROUP) {
                        ret = -EINVAL;
                        goto out;
                }
        }
        for (size_t i = 0; i < MAX_EVENTS; i++) {
                if (!p->events[i].used) {
                        slot = i;
                        break;
                }
        }
        if (slot == SIZE_MAX) {
                ret = -EMFILE;
                goto out;
        }
        ev.box = box;
        ev.read_format = attr->read_format;
        ev.enabled = !attr->disabled;
        ev.leader = leader ? (size_t)(leader - p->events) : slot;
        ret = build_contrib(p, &ev);
        if (ret)
                goto out;
        ev.used = true;
        ev.base = counter_at(p, &ev, p->last);
        p->events[slot] = ev;
        if (slot >= p->used_max)
                p->used_max = slot + 1;
        ret = SIM_IIO_FD_BASE + (int)slot;
out:
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static uint64_t ns_of(double s)
{
        return s <= 0 ? 0 : (uint64_t)floor(s * 1e9);
}

static ssize_t iio_read(void *ctx, int fd, void *buf, size_t len)
{
        struct sim_iio *p = ctx;
        struct sim_read_value values[SIM_READ_MAX];
        const struct iio_event *e, *lead;
        size_t nr = 0;
        ssize_t ret;

        pthread_mutex_lock(&p->lock);
        update(p);
        e = event_of(p, fd);
        if (!e) {
                pthread_mutex_unlock(&p->lock);
                return -EBADF;
        }
        lead = e->read_format & PERF_FORMAT_GROUP ? &p->events[e->leader] : e;
        if (e->read_format & PERF_FORMAT_GROUP) {
                /* Leader first, then the members in creation order. */
                for (size_t pass = 0; pass < 2; pass++) {
                        for (size_t i = 0; i < p->used_max && nr < MAX_GROUP; i++) {
                                const struct iio_event *x = &p->events[i];

                                if (!x->used || x->leader != e->leader ||
                                    (pass == 0) != (i == e->leader))
                                        continue;
                                values[nr++] = (struct sim_read_value){x->value, i};
                        }
                }
        } else {
                values[nr++] = (struct sim_read_value){e->value, (uint64_t)(e - p->events)};
        }
        /* Free-running: never multiplexed, running == enabled. */
        ret = sim_read_encode(e->read_format, values, nr, ns_of(lead->time_s), ns_of(lead->time_s),
                              buf, len);
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static int iio_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        struct sim_iio *p = ctx;
        struct iio_event *e;
        int ret = 0;

        pthread_mutex_lock(&p->lock);
        update(p);
        e = event_of(p, fd);
        if (!e) {
                ret = -EBADF;
                goto out;
        }
        if (request != PERF_EVENT_IOC_ENABLE && request != PERF_EVENT_IOC_DISABLE &&
            request != PERF_EVENT_IOC_RESET) {
                ret = -ENOTTY;
                goto out;
        }
        for (size_t i = 0; i < p->used_max; i++) {
                struct iio_event *t = &p->events[i];
                bool hit =
                    t == e || (arg & PERF_IOC_FLAG_GROUP && t->used && t->leader == e->leader &&
                               e->leader == (size_t)(e - p->events));

                if (!hit)
                        continue;
                if (request == PERF_EVENT_IOC_ENABLE)
                        t->enabled = true;
                else if (request == PERF_EVENT_IOC_DISABLE)
                        t->enabled = false;
                else
                        t->value = 0;
        }
out:
        pthread_mutex_unlock(&p->lock);
        return ret;
}

static int iio_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        (void)ctx, (void)fd, (void)len, (void)prot, (void)offset;
        *addr = NULL;
        return -ENODEV; /* counting-only PMU */
}

static int iio_munmap(void *ctx, void *addr, size_t len)
{
        (void)ctx, (void)addr, (void)len;
        return -EINVAL;
}

static int iio_close(void *ctx, int fd)
{
        struct sim_iio *p = ctx;
        struct iio_event *e;
        int ret = 0;

        pthread_mutex_lock(&p->lock);
        update(p);
        e = event_of(p, fd);
        if (!e) {
                ret = -EBADF;
        } else {
                free(e->contrib);
                memset(e, 0, sizeof(*e));
        }
        pthread_mutex_unlock(&p->lock);
        return ret;
}

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
        p->events = calloc(MAX_EVENTS, sizeof(*p->events));
        if (!p->events) {
                free(p);
                return -ENOMEM;
        }
        p->m = m;
        p->clock = clock ? clock : monotonic_seconds;
        p->clock_ctx = clock_ctx;
        p->t0 = p->clock(p->clock_ctx);
        pthread_mutex_init(&p->lock, NULL);
        p->ops = (struct perf_ops){
            .open = iio_open,
            .read = iio_read,
            .ioctl = iio_ioctl,
            .mmap = iio_mmap,
            .munmap = iio_munmap,
            .close = iio_close,
            .ctx = p,
        };
        *out = p;
        return 0;
}

void sim_iio_free(struct sim_iio *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < MAX_EVENTS; i++)
                free(p->events[i].contrib);
        pthread_mutex_destroy(&p->lock);
        free(p->events);
        free(p);
}

const struct perf_ops *sim_iio_ops(struct sim_iio *p)
{
        return &p->ops;
}

size_t sim_iio_open_count(struct sim_iio *p)
{
        size_t n = 0;

        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < p->used_max; i++)
                n += p->events[i].used;
        pthread_mutex_unlock(&p->lock);
        return n;
}
