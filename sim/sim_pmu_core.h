/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_pmu_core.h - what every simulated PMU does alike, so that a model
 * (sim_hisi_pcie, sim_intel_iio, sim_hisi_ptt) writes only what is its own.
 *
 * The core owns the model's lock and clock, the table of fake file
 * descriptors, event groups, perf_event_open's common steps, ENABLE /
 * DISABLE / RESET (with PERF_IOC_FLAG_GROUP), read() in the layout the
 * read_format asks for (sim_perf.h), close, fault injection and the perf
 * ops themselves. Every op takes the lock and first lets the model bring
 * itself up to the clock's now (advance), so answers are exact between two
 * operations.
 *
 * A model describes itself with a struct sim_pmu_model: its event size (its
 * event struct starts with a struct sim_pmu_event), fd numbering, and hooks
 * for what differs: event_init (the driver's checks), can_join (group
 * rules), start (counting model, buffers), report (count and times of a
 * read), and optional enable/disable/reset/changed/release/mmap/munmap.
 *
 * perf_event_open runs these steps, in this order (each answer is the
 * kernel's for that step):
 *   NULL attr -EFAULT; a model without groups: group_fd != -1 -EINVAL;
 *   lock, advance; event_init; the group leader (-EBADF, or -EINVAL for
 *   another PMU's fd) and can_join (-EINVAL); refused exclude bits
 *   (-EINVAL); a free slot (-EMFILE) or the model's fixed slot (-EBUSY);
 *   start; changed.
 */
#ifndef PCIESCOPE_SIM_PMU_CORE_H
#define PCIESCOPE_SIM_PMU_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw_env.h"
#include "sim_hisi_pcie.h" /* sim_clock_fn */

struct perf_event_attr;

/* exclude_* bits of perf_event_attr, as sim_pmu_model.refused_excludes. */
enum {
        SIM_EXCLUDE_USER = 1u << 0,
        SIM_EXCLUDE_KERNEL = 1u << 1,
        SIM_EXCLUDE_HV = 1u << 2,
        SIM_EXCLUDE_IDLE = 1u << 3,
        SIM_EXCLUDE_HOST = 1u << 4,
        SIM_EXCLUDE_GUEST = 1u << 5,
        SIM_EXCLUDE_ALL = (1u << 6) - 1, /* PERF_PMU_CAP_NO_EXCLUDE */
};

/* The exclude_* bits @attr sets (SIM_EXCLUDE_*). */
unsigned int sim_attr_excludes(const struct perf_event_attr *attr);

/* What every event starts with; a model's event struct embeds it first. */
struct sim_pmu_event {
        bool used;
        bool enabled; /* perf's view: ENABLE/DISABLE, attr.disabled */
        int fd;
        size_t leader; /* slot of the group leader (own slot for a leader) */
        uint64_t read_format;
        /* Counting models: how fast the event rises per device, at workload
         * scale 1 (unit is the model's). Freed by the core on close. */
        size_t contrib_count;
        struct sim_contrib {
                size_t dev;
                double per_second;
        } * contrib;
};

/* One read answer of an event: its count and id (the core presets id to
 * the slot), and for a leader (or a lone event) the times. */
struct sim_pmu_report {
        uint64_t value, id;
        uint64_t enabled_ns, running_ns;
};

/* A fault for perf_event_open: the next @count opens fail with -@err
 * (count -1: all of them). */
struct sim_fault {
        bool active;
        int err;
        long count;
};

struct sim_pmu_core;

struct sim_pmu_model {
        size_t event_size; /* sizeof the model's event struct */
        size_t event_cap;  /* slots in the fd table */
        int fd_base;       /* fd of slot i: fd_base + i (see serial_fds) */
        /* fd_base + (serial % 0x100000) * event_cap + slot, serial counting
         * opens: a stale fd of a reopened slot is -EBADF, not the new event. */
        bool serial_fds;
        bool groups; /* false: group_fd != -1 is -EINVAL, reads are never group reads */
        /* Another PMU's fd as group_fd: >= this is -EINVAL, below it -EBADF
         * (0: always -EBADF). */
        int foreign_group_fd_min;
        unsigned int refused_excludes; /* SIM_EXCLUDE_* answered -EINVAL */

        /* Bring the model up to now (lock held). */
        void (*advance)(struct sim_pmu_core *c);
        /*
         * The driver's event_init: check @attr, fill the model's part of
         * @ev (the core fills read_format and enabled). *@slot may be set to
         * the one slot this event must take (else the first free one).
         * Returns 0 or the negative errno perf_event_open answers.
         */
        int (*event_init)(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                          int cpu, struct sim_pmu_event *ev, size_t *slot);
        /* Whether @ev may join the group of @leader (a leader). */
        bool (*can_join)(struct sim_pmu_core *c, const struct sim_pmu_event *leader,
                         const struct sim_pmu_event *ev);
        /* The event takes @slot (ev->leader and fd set): contributions,
         * buffers. Returns 0 or a negative errno (the open fails). */
        int (*start)(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot);
        /* Fill @out->value (and times) for a read. */
        void (*report)(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                       struct sim_pmu_report *out);
        /* Optional: ENABLE / DISABLE of one event (after ev->enabled is
         * set), RESET, and close (before the slot is cleared). */
        void (*enable)(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot, bool on);
        void (*reset)(struct sim_pmu_core *c, struct sim_pmu_event *ev);
        void (*release)(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot);
        /* Optional: the event set or an enable state changed (scheduling). */
        void (*changed)(struct sim_pmu_core *c);
        /* Optional: the event's PMU was unregistered since it was opened
         * (perf_pmu_unregister() marks it REVOKED: read() returns 0 bytes,
         * ioctl() -ENODEV, until it is closed). */
        bool (*revoked)(struct sim_pmu_core *c, const struct sim_pmu_event *ev);
        /* Optional: mmap of an event (without: -ENODEV, nothing to map) and
         * munmap (without: -EINVAL). */
        int (*mmap)(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t slot, size_t len,
                    int prot, off_t offset, void **addr);
        int (*munmap)(struct sim_pmu_core *c, void *addr, size_t len);
};

struct sim_pmu_core {
        const struct sim_pmu_model *model;
        void *owner; /* the model's state */
        sim_clock_fn clock;
        void *clock_ctx;
        double t0; /* clock at creation */
        pthread_mutex_t lock;
        struct perf_ops ops; /* ctx = the core */
        unsigned int serial; /* opens so far (serial_fds) */
        size_t used_max;     /* slots [used_max..] are all unused */
        unsigned char *events;
        unsigned char *scratch; /* the event being opened */
        size_t fault_targets;
        struct sim_fault fault_any;
        struct sim_fault *faults; /* per target (a core, a device) */
};

/*
 * sim_pmu_core_init - set @c up for @model (static storage) with owner
 * @owner, reading @clock (NULL: CLOCK_MONOTONIC) once now for time 0, with
 * @fault_targets per-target fault slots. Returns 0 or -ENOMEM (then
 * sim_pmu_core_fini is still safe).
 */
int sim_pmu_core_init(struct sim_pmu_core *c, const struct sim_pmu_model *model, void *owner,
                      sim_clock_fn clock, void *clock_ctx, size_t fault_targets);
/* Frees the table (and every event's contributions) and the lock. */
void sim_pmu_core_fini(struct sim_pmu_core *c);

/* Seconds since creation on the core's clock. */
double sim_pmu_core_now(const struct sim_pmu_core *c);

static inline struct sim_pmu_event *sim_pmu_core_event(const struct sim_pmu_core *c, size_t slot)
{
        return (struct sim_pmu_event *)(c->events + slot * c->model->event_size);
}

/* Slot @slot as the model's event type @type. */
#define SIM_PMU_EVENT_AT(c, slot, type) ((type *)sim_pmu_core_event((c), (slot)))

/* Whether @ev counts now: it and its leader are open and enabled. */
bool sim_pmu_core_counting(const struct sim_pmu_core *c, const struct sim_pmu_event *ev);
/* Events in the group of leader slot @leader. */
size_t sim_pmu_core_group_size(const struct sim_pmu_core *c, size_t leader);
/* Open events (takes the lock). */
size_t sim_pmu_core_open_count(struct sim_pmu_core *c);

/* Faults: @target SIZE_MAX means any target. */
void sim_pmu_core_inject(struct sim_pmu_core *c, size_t target, int err, long count);
/* In event_init (lock held): whether a fault for @target (or any) fires;
 * *@err receives its errno. */
bool sim_pmu_core_fault(struct sim_pmu_core *c, size_t target, int *err);

/* The model's lock, for the model's own entry points (advance is theirs). */
void sim_pmu_core_lock(struct sim_pmu_core *c);
void sim_pmu_core_unlock(struct sim_pmu_core *c);

#endif /* PCIESCOPE_SIM_PMU_CORE_H */
