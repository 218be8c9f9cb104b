// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_pmu_core.c - the fd table, groups, enable/disable/reset and read()
 * shared by the simulated PMUs. See sim_pmu_core.h.
 */
#define _GNU_SOURCE
#include "sim_pmu_core.h"
#include "sim_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SERIAL_FDS 0x100000u /* distinct fds per slot with serial_fds */

static double monotonic_seconds(void *ctx)
{
        struct timespec ts;

        (void)ctx;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double sim_pmu_core_now(const struct sim_pmu_core *c)
{
        return c->clock(c->clock_ctx) - c->t0;
}

unsigned int sim_attr_excludes(const struct perf_event_attr *attr)
{
        return (attr->exclude_user ? SIM_EXCLUDE_USER : 0) |
               (attr->exclude_kernel ? SIM_EXCLUDE_KERNEL : 0) |
               (attr->exclude_hv ? SIM_EXCLUDE_HV : 0) |
               (attr->exclude_idle ? SIM_EXCLUDE_IDLE : 0) |
               (attr->exclude_host ? SIM_EXCLUDE_HOST : 0) |
               (attr->exclude_guest ? SIM_EXCLUDE_GUEST : 0);
}

/* ---- the table ---- */

static size_t slot_of(struct sim_pmu_core *c, const struct sim_pmu_event *ev)
{
        return (size_t)((const unsigned char *)ev - c->events) / c->model->event_size;
}

/* The open event behind @fd, or NULL. */
static struct sim_pmu_event *event_of(struct sim_pmu_core *c, int fd, size_t *slot)
{
        const struct sim_pmu_model *md = c->model;
        struct sim_pmu_event *ev;
        size_t i;

        if (fd < md->fd_base)
                return NULL;
        i = (size_t)((long)fd - md->fd_base) % md->event_cap;
        ev = sim_pmu_core_event(c, i);
        if (!ev->used || ev->fd != fd)
                return NULL;
        if (slot)
                *slot = i;
        return ev;
}

bool sim_pmu_core_counting(const struct sim_pmu_core *c, const struct sim_pmu_event *ev)
{
        const struct sim_pmu_event *lead = sim_pmu_core_event(c, ev->leader);

        return ev->used && ev->enabled && lead->used && lead->enabled;
}

size_t sim_pmu_core_group_size(const struct sim_pmu_core *c, size_t leader)
{
        size_t n = 0;

        for (size_t i = 0; i < c->used_max; i++) {
                const struct sim_pmu_event *ev = sim_pmu_core_event(c, i);

                n += ev->used && ev->leader == leader;
        }
        return n;
}

size_t sim_pmu_core_open_count(struct sim_pmu_core *c)
{
        size_t n = 0;

        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < c->used_max; i++)
                n += sim_pmu_core_event(c, i)->used;
        pthread_mutex_unlock(&c->lock);
        return n;
}

void sim_pmu_core_lock(struct sim_pmu_core *c)
{
        pthread_mutex_lock(&c->lock);
}

void sim_pmu_core_unlock(struct sim_pmu_core *c)
{
        pthread_mutex_unlock(&c->lock);
}

/* ---- faults ---- */

static bool take_fault(struct sim_fault *f, int *err)
{
        if (!f->active || f->count == 0)
                return false;
        if (f->count > 0)
                f->count--;
        *err = f->err;
        return true;
}

bool sim_pmu_core_fault(struct sim_pmu_core *c, size_t target, int *err)
{
        return (target < c->fault_targets && take_fault(&c->faults[target], err)) ||
               take_fault(&c->fault_any, err);
}

void sim_pmu_core_inject(struct sim_pmu_core *c, size_t target, int err, long count)
{
        struct sim_fault f = {.active = err != 0 && count != 0, .err = err, .count = count};

        pthread_mutex_lock(&c->lock);
        if (target == SIZE_MAX)
                c->fault_any = f;
        else if (target < c->fault_targets)
                c->faults[target] = f;
        pthread_mutex_unlock(&c->lock);
}

/* ---- perf ops ---- */

/* Every op on an fd: take the lock, bring the model up to now, find the
 * event (NULL: -EBADF). The caller unlocks. */
static struct sim_pmu_event *enter(struct sim_pmu_core *c, int fd, size_t *slot)
{
        pthread_mutex_lock(&c->lock);
        c->model->advance(c);
        return event_of(c, fd, slot);
}

/* The leader for @group_fd (checked against the candidate @ev), or an
 * errno in *@ret. */
static struct sim_pmu_event *group_leader(struct sim_pmu_core *c, int group_fd,
                                          const struct sim_pmu_event *ev, int *ret)
{
        const struct sim_pmu_model *md = c->model;
        struct sim_pmu_event *leader = event_of(c, group_fd, NULL);

        if (!leader) {
                /* Another PMU's event cannot lead this one. */
                *ret = md->foreign_group_fd_min && group_fd >= md->foreign_group_fd_min ? -EINVAL
                                                                                        : -EBADF;
                return NULL;
        }
        if (leader->leader != slot_of(c, leader) || !md->can_join(c, leader, ev)) {
                *ret = -EINVAL;
                return NULL;
        }
        return leader;
}

/* Steps after event_init: leader, exclude bits, slot, start. Lock held. */
static int open_locked(struct sim_pmu_core *c, struct perf_event_attr *attr, pid_t pid, int cpu,
                       int group_fd)
{
        const struct sim_pmu_model *md = c->model;
        struct sim_pmu_event *ev = (struct sim_pmu_event *)c->scratch, *leader = NULL;
        size_t slot = SIZE_MAX;
        int ret;

        memset(c->scratch, 0, md->event_size);
        ev->read_format = attr->read_format;
        ev->enabled = !attr->disabled;
        ret = md->event_init(c, attr, pid, cpu, ev, &slot);
        if (ret)
                return ret;
        if (group_fd != -1) {
                leader = group_leader(c, group_fd, ev, &ret);
                if (!leader)
                        return ret;
        }
        if (sim_attr_excludes(attr) & md->refused_excludes)
                return -EINVAL;
        if (slot != SIZE_MAX) {
                if (sim_pmu_core_event(c, slot)->used)
                        return -EBUSY; /* PERF_PMU_CAP_EXCLUSIVE */
        } else {
                for (size_t i = 0; i < md->event_cap && slot == SIZE_MAX; i++)
                        if (!sim_pmu_core_event(c, i)->used)
                                slot = i;
                if (slot == SIZE_MAX)
                        return -EMFILE;
        }
        ev->leader = leader ? slot_of(c, leader) : slot;
        ev->fd = md->fd_base + (int)slot;
        if (md->serial_fds)
                ev->fd += (int)((c->serial++ % SERIAL_FDS) * md->event_cap);
        ret = md->start(c, ev, slot);
        if (ret) {
                free(ev->contrib);
                if (md->serial_fds)
                        c->serial--;
                return ret;
        }
        ev->used = true;
        memcpy(sim_pmu_core_event(c, slot), ev, md->event_size);
        if (slot >= c->used_max)
                c->used_max = slot + 1;
        if (md->changed)
                md->changed(c);
        return sim_pmu_core_event(c, slot)->fd;
}

static int core_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
        struct sim_pmu_core *c = ctx;
        int ret;

        (void)flags;
        if (!attr)
                return -EFAULT;
        if (!c->model->groups && group_fd != -1)
                return -EINVAL; /* the model does not group its events */
        pthread_mutex_lock(&c->lock);
        c->model->advance(c);
        ret = open_locked(c, attr, pid, cpu, group_fd);
        pthread_mutex_unlock(&c->lock);
        return ret;
}

static ssize_t core_read(void *ctx, int fd, void *buf, size_t len)
{
        struct sim_pmu_core *c = ctx;
        const struct sim_pmu_model *md = c->model;
        struct sim_read_value values[SIM_READ_MAX];
        struct sim_pmu_report lead = {0}, r;
        const struct sim_pmu_event *e;
        uint64_t format;
        size_t nr = 0, slot;
        ssize_t ret;

        e = enter(c, fd, &slot);
        if (!e) {
                pthread_mutex_unlock(&c->lock);
                return -EBADF;
        }
        if (md->revoked && md->revoked(c, e)) {
                pthread_mutex_unlock(&c->lock);
                return 0; /* __perf_read(): end of file for a REVOKED event */
        }
        format = md->groups ? e->read_format : e->read_format & ~(uint64_t)PERF_FORMAT_GROUP;
        if (format & PERF_FORMAT_GROUP) {
                /* Leader first, then the members in creation order. */
                for (size_t pass = 0; pass < 2; pass++) {
                        for (size_t i = 0; i < c->used_max && nr < SIM_READ_MAX; i++) {
                                const struct sim_pmu_event *m = sim_pmu_core_event(c, i);

                                if (!m->used || m->leader != e->leader ||
                                    (pass == 0) != (i == e->leader))
                                        continue;
                                r = (struct sim_pmu_report){.id = i};
                                md->report(c, m, &r);
                                values[nr++] = (struct sim_read_value){r.value, r.id};
                                if (i == e->leader)
                                        lead = r;
                        }
                }
        } else {
                lead = (struct sim_pmu_report){.id = slot};
                md->report(c, e, &lead);
                values[nr++] = (struct sim_read_value){lead.value, lead.id};
        }
        ret = sim_read_encode(format, values, nr, lead.enabled_ns, lead.running_ns, buf, len);
        pthread_mutex_unlock(&c->lock);
        return ret;
}

static int core_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        struct sim_pmu_core *c = ctx;
        const struct sim_pmu_model *md = c->model;
        struct sim_pmu_event *e;
        size_t slot;
        int ret = 0;

        e = enter(c, fd, &slot);
        if (!e) {
                ret = -EBADF;
                goto out;
        }
        if (md->revoked && md->revoked(c, e)) {
                ret = -ENODEV; /* _perf_ioctl() on a REVOKED event */
                goto out;
        }
        if (request != PERF_EVENT_IOC_ENABLE && request != PERF_EVENT_IOC_DISABLE &&
            request != PERF_EVENT_IOC_RESET) {
                ret = -ENOTTY;
                goto out;
        }
        for (size_t i = 0; i < c->used_max; i++) {
                struct sim_pmu_event *t = sim_pmu_core_event(c, i);
                bool hit = t == e || (arg & PERF_IOC_FLAG_GROUP && t->used &&
                                      t->leader == e->leader && e->leader == slot);

                if (!hit)
                        continue;
                if (request == PERF_EVENT_IOC_RESET) {
                        if (md->reset)
                                md->reset(c, t);
                        continue;
                }
                t->enabled = request == PERF_EVENT_IOC_ENABLE;
                if (md->enable)
                        md->enable(c, t, i, t->enabled);
        }
        if (md->changed)
                md->changed(c);
out:
        pthread_mutex_unlock(&c->lock);
        return ret;
}

static int core_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        struct sim_pmu_core *c = ctx;
        struct sim_pmu_event *e;
        size_t slot;
        int ret;

        *addr = NULL;
        if (!c->model->mmap)
                return -ENODEV; /* counting-only PMU: nothing to map */
        e = enter(c, fd, &slot);
        ret = e ? c->model->mmap(c, e, slot, len, prot, offset, addr) : -EBADF;
        pthread_mutex_unlock(&c->lock);
        return ret;
}

static int core_munmap(void *ctx, void *addr, size_t len)
{
        struct sim_pmu_core *c = ctx;
        int ret;

        if (!c->model->munmap)
                return -EINVAL; /* it never mapped anything */
        pthread_mutex_lock(&c->lock);
        c->model->advance(c);
        ret = c->model->munmap(c, addr, len);
        pthread_mutex_unlock(&c->lock);
        return ret;
}

static int core_close(void *ctx, int fd)
{
        struct sim_pmu_core *c = ctx;
        size_t slot;
        struct sim_pmu_event *e = enter(c, fd, &slot);

        if (e) {
                if (c->model->release)
                        c->model->release(c, e, slot);
                free(e->contrib);
                memset(e, 0, c->model->event_size);
                if (c->model->changed)
                        c->model->changed(c);
        }
        pthread_mutex_unlock(&c->lock);
        return e ? 0 : -EBADF;
}

/* ---- life cycle ---- */

int sim_pmu_core_init(struct sim_pmu_core *c, const struct sim_pmu_model *model, void *owner,
                      sim_clock_fn clock, void *clock_ctx, size_t fault_targets)
{
        memset(c, 0, sizeof(*c));
        c->model = model;
        c->owner = owner;
        c->clock = clock ? clock : monotonic_seconds;
        c->clock_ctx = clock_ctx;
        c->t0 = c->clock(c->clock_ctx);
        c->fault_targets = fault_targets;
        pthread_mutex_init(&c->lock, NULL);
        c->ops = (struct perf_ops){
            .open = core_open,
            .read = core_read,
            .ioctl = core_ioctl,
            .mmap = core_mmap,
            .munmap = core_munmap,
            .close = core_close,
            .ctx = c,
        };
        c->events = calloc(model->event_cap, model->event_size);
        c->scratch = calloc(1, model->event_size);
        c->faults = calloc(fault_targets ? fault_targets : 1, sizeof(*c->faults));
        if (!c->events || !c->scratch || !c->faults)
                return -ENOMEM;
        return 0;
}

void sim_pmu_core_fini(struct sim_pmu_core *c)
{
        if (!c->model)
                return;
        for (size_t i = 0; c->events && i < c->model->event_cap; i++)
                free(sim_pmu_core_event(c, i)->contrib);
        pthread_mutex_destroy(&c->lock);
        free(c->events);
        free(c->scratch);
        free(c->faults);
        c->model = NULL;
}
