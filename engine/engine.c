// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine.c - the machine, the units of every source, their threads and the
 * hand-over of finished intervals to the host. See engine.h.
 */
#include "engine.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_source.h"
#include "pci_source.h"
#include "pcie_families.h"
#include "pcie_topo.h"
#include "sim.h"

/* The sources in the order their samples reach the host; bit i of a host's
 * mask selects sources[i]. */
static const struct engine_source *const sources[] = {
    &engine_source_monitor,   &engine_source_uncore,    &engine_source_ptt_tune,
    &engine_source_hisi_pcie, &engine_source_intel_iio, &engine_source_ptt,
    &engine_source_dwc_pcie,  &engine_source_amd_df,    &engine_source_nvidia_pcie,
};
#define SOURCE_COUNT (sizeof(sources) / sizeof(sources[0]))

struct engine_unit {
        struct engine *e;
        const struct engine_source *src;
        unsigned int source_bit;
        void *obj;
        char name[64];
        atomic_bool started; /* written by the unit's thread, read by the host */
        /* Threaded units: the thread, and the newest finished interval. */
        pthread_t thread;
        bool thread_started;
        pthread_mutex_t lock; /* guards published and generation */
        struct sample_set published;
        unsigned long generation; /* bumped at every publication */
        unsigned long handed;     /* the generation engine_read handed last */
        struct sample_set work;   /* owned by the unit's thread (or the host) */
        double thread_cpu;        /* CPU seconds of its thread, set when it ends */
};

struct owned {
        void *ptr;
        void (*release)(void *);
};

/* The monitor's latest scan, shared with the units that plan per device
 * (engine_source.h): swapped under the lock, its generation bumped. */
struct engine_topology {
        pthread_mutex_t lock;
        atomic_ulong generation;
        struct pcie_topo *topo;
};

struct engine {
        const struct engine_config *cfg;
        struct engine_host host;
        struct hw_env env;
        struct sim *sim;
        bool env_open;

        struct engine_unit **units; /* stable addresses: threads hold them */
        size_t unit_count, unit_cap;
        struct owned *owned;
        size_t owned_count, owned_cap;

        pthread_mutex_t lock; /* with wake: sleeping threads and stop */
        pthread_cond_t wake;
        atomic_bool stop;
        bool started, stopped;
        struct sample_set own; /* the engine's own samples (simulation info) */
        struct engine_topology topology;
};

struct engine_discovery {
        struct engine *e;
        const struct engine_source *src;
        unsigned int source_bit;
        struct pcie_topo *topo;
        bool topo_scanned;
};

static double monotonic_now(void *ctx)
{
        struct timespec ts;

        (void)ctx;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_of(const struct engine *e)
{
        return e->host.clock(e->host.clock_ctx);
}

static void quiet_log(void *ctx, enum hw_log_level level, const char *msg)
{
        (void)ctx, (void)level, (void)msg;
}

/* ---- the machine ---- */

static int open_machine(struct engine *e, char *why, size_t whylen)
{
        const struct engine_config *cfg = e->cfg;
        int err;

        hw_env_init_system(&e->env);
        e->env.log = e->host.log;
        e->env.log_ctx = e->host.log_ctx;
        if (cfg->simulate) {
                struct sim_opts so = {.machine_dir = cfg->machine_dir,
                                      .kernel = cfg->simulate_kernel,
                                      .clock = e->host.clock,
                                      .clock_ctx = e->host.clock_ctx};
                char msg[512] = "";

                err = sim_open(cfg->simulate, &so, &e->sim, msg, sizeof(msg));
                if (!err)
                        err = sim_env(e->sim, &e->env);
                if (err)
                        snprintf(why, whylen, "Simulate \"%s\": %s", cfg->simulate,
                                 msg[0] ? msg : strerror(-err));
                return err;
        }
        if (cfg->sysfs_root)
                e->env.sysfs_root = cfg->sysfs_root;
        if (cfg->proc_root)
                e->env.proc_root = cfg->proc_root;
        /* A load reads this machine's disks: only where the machine read
         * is this one (not a dump, not a copied sysfs tree). */
        if (cfg->pci_dump || strcmp(e->env.sysfs_root, "/sys"))
                e->env.load = NULL;
        if (cfg->pci_dump) {
                /* A dump describes another machine: this machine's sysfs
                 * and procfs say nothing about it unless named explicitly. */
                e->env.sysfs_root = cfg->sysfs_root;
                e->env.proc_root = cfg->proc_root;
                err = pci_source_open_dump(cfg->pci_dump, &e->env.pci);
        } else {
                err = pci_source_open_live(e->env.sysfs_root, &e->env.pci);
        }
        if (err)
                snprintf(why, whylen, "cannot set up PCI access: %s", strerror(-err));
        return err;
}

int engine_open(const struct engine_config *cfg, const struct engine_host *host,
                struct engine **out, char *why, size_t whylen)
{
        struct engine *e = calloc(1, sizeof(*e));
        pthread_condattr_t attr;
        int err;

        *out = NULL;
        if (!e) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        e->cfg = cfg;
        e->host = *host;
        if (!e->host.clock)
                e->host.clock = monotonic_now;
        if (!e->host.log)
                e->host.log = quiet_log;
        if (!(e->host.interval > 0))
                e->host.interval = 10;
        pthread_mutex_init(&e->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&e->wake, &attr);
        pthread_condattr_destroy(&attr);
        atomic_init(&e->stop, false);
        pthread_mutex_init(&e->topology.lock, NULL);
        atomic_init(&e->topology.generation, 0);
        err = open_machine(e, why, whylen);
        if (err) {
                engine_close(e);
                return err;
        }
        e->env_open = true;
        *out = e;
        return 0;
}

struct hw_env *engine_env(struct engine *e)
{
        return &e->env;
}

double engine_now(const struct engine *e)
{
        return now_of(e);
}

const char *engine_simulated(const struct engine *e)
{
        return e->sim ? sim_machine(e->sim)->name : NULL;
}

const char *engine_simulated_kernel(const struct engine *e)
{
        return e->sim ? sim_kernel_name(sim_machine(e->sim)->kernel) : NULL;
}

const char *engine_simulated_root(const struct engine *e)
{
        return e->sim ? sim_root(e->sim) : NULL;
}

/* ---- discovery ---- */

const struct hw_env *engine_discovery_env(const struct engine_discovery *d)
{
        return &d->e->env;
}

const struct engine_config *engine_discovery_config(const struct engine_discovery *d)
{
        return d->e->cfg;
}

const struct pcie_topo *engine_discovery_topo(const struct engine_discovery *d)
{
        struct engine_discovery *md = (struct engine_discovery *)d;

        if (!md->topo_scanned) {
                struct pcie_topo_opts opts = {.names = false, .read_sysfs = false};
                int err = pcie_topo_scan(&d->e->env, &opts, &md->topo);

                md->topo_scanned = true;
                if (err) {
                        md->topo = NULL;
                        hw_logf(&d->e->env, HW_LOG_ERROR,
                                "PMU counters off: cannot read the PCI topology: %s",
                                strerror(-err));
                }
        }
        return d->topo;
}

struct engine_topology *engine_discovery_topology(const struct engine_discovery *d)
{
        return &d->e->topology;
}

void engine_topology_publish(struct engine_topology *t, struct pcie_topo *topo)
{
        struct pcie_topo *old;

        pthread_mutex_lock(&t->lock);
        old = t->topo;
        t->topo = topo;
        atomic_fetch_add(&t->generation, 1);
        pthread_mutex_unlock(&t->lock);
        pcie_topo_free(old);
}

unsigned long engine_topology_generation(const struct engine_topology *t)
{
        return atomic_load(&((struct engine_topology *)t)->generation);
}

const struct pcie_topo *engine_topology_lock(struct engine_topology *t, unsigned long *generation)
{
        pthread_mutex_lock(&t->lock);
        *generation = atomic_load(&t->generation);
        return t->topo;
}

void engine_topology_unlock(struct engine_topology *t)
{
        pthread_mutex_unlock(&t->lock);
}

double engine_discovery_now(const struct engine_discovery *d)
{
        return now_of(d->e);
}

double engine_discovery_interval(const struct engine_discovery *d)
{
        return d->e->host.interval;
}

bool engine_discovery_baseline(const struct engine_discovery *d)
{
        return d->e->host.baseline_at_start;
}

const char *engine_discovery_simulated(const struct engine_discovery *d)
{
        return engine_simulated(d->e);
}

int engine_discovery_add(struct engine_discovery *d, void *unit, const char *name)
{
        struct engine *e = d->e;
        struct engine_unit *u;

        if (e->unit_count == e->unit_cap) {
                size_t cap = e->unit_cap ? 2 * e->unit_cap : 16;
                struct engine_unit **grown = realloc(e->units, cap * sizeof(*grown));

                if (!grown) {
                        d->src->free(unit);
                        return -ENOMEM;
                }
                e->units = grown;
                e->unit_cap = cap;
        }
        u = calloc(1, sizeof(*u));
        if (!u) {
                d->src->free(unit);
                return -ENOMEM;
        }
        u->e = e;
        u->src = d->src;
        u->source_bit = d->source_bit;
        u->obj = unit;
        snprintf(u->name, sizeof(u->name), "%s", name);
        pthread_mutex_init(&u->lock, NULL);
        e->units[e->unit_count++] = u;
        return 0;
}

int engine_discovery_own(struct engine_discovery *d, void *shared, void (*release)(void *))
{
        struct engine *e = d->e;

        if (e->owned_count == e->owned_cap) {
                size_t cap = e->owned_cap ? 2 * e->owned_cap : 8;
                struct owned *grown = realloc(e->owned, cap * sizeof(*grown));

                if (!grown) {
                        release(shared);
                        return -ENOMEM;
                }
                e->owned = grown;
                e->owned_cap = cap;
        }
        e->owned[e->owned_count++] = (struct owned){shared, release};
        return 0;
}

void engine_schedule_start(struct engine_schedule *s, double interval, double now)
{
        s->interval = interval;
        s->next = now + interval;
}

void engine_schedule_ticked(struct engine_schedule *s, double now)
{
        s->next += s->interval;
        if (now > s->next + s->interval)
                s->next = now;
}

void engine_complain(const struct hw_env *env, struct engine_complaint *c, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        if (c->shown)
                return;
        c->shown = true;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        hw_logf(env, HW_LOG_WARNING, "%s", msg);
}

void engine_complaint_clear(const struct hw_env *env, struct engine_complaint *c, const char *fmt,
                            ...)
{
        char msg[1024];
        va_list ap;

        if (!c->shown)
                return;
        c->shown = false;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        hw_logf(env, HW_LOG_INFO, "%s", msg);
}

/* ---- running units ---- */

/* Sleeps until @deadline (the engine's clock) or stop; true = stop. */
static bool wait_until(struct engine *e, double deadline)
{
        bool stop;

        pthread_mutex_lock(&e->lock);
        while (!atomic_load(&e->stop) && now_of(e) < deadline) {
                double left = deadline - now_of(e);
                struct timespec ts;

                /* The condition variable waits on CLOCK_MONOTONIC. */
                clock_gettime(CLOCK_MONOTONIC, &ts);
                ts.tv_sec += (time_t)left;
                ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                if (pthread_cond_timedwait(&e->wake, &e->lock, &ts) == ETIMEDOUT)
                        break;
        }
        stop = atomic_load(&e->stop);
        pthread_mutex_unlock(&e->lock);
        return stop;
}

/* Ticks @u and publishes what it finished. */
static void run_tick(struct engine_unit *u, double now)
{
        struct engine *e = u->e;
        int r;

        sample_set_clear(&u->work);
        r = u->src->tick(u->obj, now, &u->work);
        if (r <= 0)
                return;
        if (e->host.label_simulated && e->sim)
                sample_set_add_label(&u->work, "simulated", sim_machine(e->sim)->name);
        pthread_mutex_lock(&u->lock);
        sample_set_swap(&u->work, &u->published);
        u->generation++;
        pthread_mutex_unlock(&u->lock);
}

static bool retryable(int err)
{
        return err == -EBUSY || err == -EMFILE || err == -ENFILE || err == -EAGAIN;
}

/* The thread's CPU time, kept for the account engine_stop() gives. */
static void *thread_done(struct engine_unit *u)
{
        struct timespec ts;

        if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                u->thread_cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
        return NULL;
}

static void *unit_thread(void *arg)
{
        struct engine_unit *u = arg;
        struct engine *e = u->e;

        /* On EBUSY/EMFILE try again later; on anything else this unit
         * stays off (its reason was logged once). */
        for (;;) {
                int err = u->src->start(u->obj, now_of(e));

                if (!err)
                        break;
                if (!retryable(err))
                        return thread_done(u);
                if (wait_until(e, now_of(e) + e->cfg->retry_seconds))
                        return thread_done(u);
        }
        u->started = true;
        while (!wait_until(e, u->src->next_tick(u->obj)))
                run_tick(u, now_of(e));
        u->src->stop(u->obj);
        u->started = false;
        return thread_done(u);
}

static int discover_all(struct engine *e)
{
        struct engine_discovery d = {.e = e};
        int err = 0;

        for (size_t i = 0; i < SOURCE_COUNT && !err; i++) {
                const struct engine_source *src = sources[i];

                if (e->host.sources && !(e->host.sources & (1u << i)))
                        continue;
                if (!src->enabled(e->cfg, e->cfg->pci_dump != NULL))
                        continue;
                d.src = src;
                d.source_bit = 1u << i;
                err = src->discover(&d);
        }
        pcie_topo_free(d.topo);
        return err;
}

static size_t threaded_units(const struct engine *e)
{
        size_t n = 0;

        for (size_t i = 0; i < e->unit_count; i++)
                n += e->units[i]->src->threaded;
        return n;
}

int engine_start(struct engine *e)
{
        int err;

        if (e->started)
                return 0;
        e->started = true;
        err = discover_all(e);
        if (err)
                return err;
        if (e->cfg->collect_pmu && !e->cfg->pci_dump && threaded_units(e) == 0 &&
            (!e->host.sources ||
             (e->host.sources & (ENGINE_SOURCE_PORT_PMUS | ENGINE_SOURCE_INTEL_IIO |
                                 ENGINE_SOURCE_PTT | ENGINE_SOURCE_AMD_DF))))
                hw_logf(&e->env, HW_LOG_INFO,
                        "no HiSilicon PCIe PMU (hisi_pcie*), no PTT device (hisi_ptt*), no "
                        "Intel IIO free-running PMU, no DesignWare PCIe PMU (dwc_rootport_*), "
                        "no AMD data fabric PMU (amd_df) and no NVIDIA Grace PCIe PMU found; "
                        "PMU counters off");
        for (size_t i = 0; i < e->unit_count; i++) {
                struct engine_unit *u = e->units[i];

                if (!u->src->threaded || e->host.manual) {
                        u->started = u->src->start(u->obj, now_of(e)) == 0;
                        continue;
                }
                if (e->host.thread_create)
                        err = e->host.thread_create(&u->thread, unit_thread, u, u->name);
                else
                        err = pthread_create(&u->thread, NULL, unit_thread, u);
                if (err)
                        hw_logf(&e->env, HW_LOG_ERROR, "%s: cannot start its collector thread",
                                u->name);
                else
                        u->thread_started = true;
        }
        return 0;
}

size_t engine_unit_count(const struct engine *e, unsigned int mask, size_t *started)
{
        size_t n = 0, s = 0;

        for (size_t i = 0; i < e->unit_count; i++) {
                const struct engine_unit *u = e->units[i];

                if (!(u->source_bit & mask))
                        continue;
                n++;
                s += u->thread_started || u->started; /* a thread sets started itself */
        }
        if (started)
                *started = s;
        return n;
}

const char *engine_unit_name(const struct engine_unit *u)
{
        return u->name;
}

unsigned int engine_unit_source(const struct engine_unit *u)
{
        return u->source_bit;
}

static void simulation_info(struct engine *e, engine_sink_fn sink, void *ctx)
{
        const struct sim_machine *m = sim_machine(e->sim);
        struct pcie_sample s;

        sample_init(&s, PCIE_FAM_SIMULATION_INFO);
        sample_label(&s, "machine", m->name);
        sample_label(&s, "kernel", sim_kernel_name(m->kernel));
        s.gauge = 1;
        sample_set_clear(&e->own);
        if (sample_set_add(&e->own, &s))
                return;
        if (e->host.label_simulated)
                sample_set_add_label(&e->own, "simulated", m->name);
        sink(ctx, NULL, &e->own);
}

int engine_read(struct engine *e, engine_sink_fn sink, void *ctx)
{
        int ret = 0;

        if (e->sim) {
                sim_refresh(e->sim); /* AER counts that rise with time */
                simulation_info(e, sink, ctx);
        }
        for (size_t i = 0; i < e->unit_count; i++) {
                struct engine_unit *u = e->units[i];

                if (!u->src->threaded) {
                        int r;

                        if (!u->started)
                                continue;
                        sample_set_clear(&u->work);
                        r = u->src->tick(u->obj, now_of(e), &u->work);
                        if (r < 0 && !ret)
                                ret = r;
                        if (r <= 0)
                                continue;
                        if (e->host.label_simulated && e->sim)
                                sample_set_add_label(&u->work, "simulated",
                                                     sim_machine(e->sim)->name);
                        sink(ctx, u, &u->work);
                        continue;
                }
                pthread_mutex_lock(&u->lock);
                if (u->generation != u->handed) {
                        sink(ctx, u, &u->published);
                        u->handed = u->generation;
                }
                pthread_mutex_unlock(&u->lock);
        }
        return ret;
}

double engine_next_due(const struct engine *e)
{
        double due = 1e300;

        for (size_t i = 0; i < e->unit_count; i++) {
                const struct engine_unit *u = e->units[i];

                if (u->src->threaded && u->started) {
                        double t = u->src->next_tick(u->obj);

                        if (t < due)
                                due = t;
                }
        }
        return due;
}

void engine_advance(struct engine *e, double now)
{
        for (size_t i = 0; i < e->unit_count; i++) {
                struct engine_unit *u = e->units[i];

                if (u->src->threaded && u->started && u->src->next_tick(u->obj) <= now)
                        run_tick(u, now);
        }
}

void engine_stop(struct engine *e)
{
        if (!e || e->stopped)
                return;
        e->stopped = true;
        pthread_mutex_lock(&e->lock);
        atomic_store(&e->stop, true);
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->lock);
        double threads_cpu = 0;
        size_t threads = 0;

        for (size_t i = 0; i < e->unit_count; i++) {
                struct engine_unit *u = e->units[i];

                if (u->thread_started) {
                        pthread_join(u->thread, NULL);
                        u->thread_started = false;
                        threads_cpu += u->thread_cpu;
                        threads++;
                } else if (u->started) {
                        u->src->stop(u->obj);
                        u->started = false;
                }
        }
        /* What the simulator cost, apart from what is measured: the
         * collector threads' CPU includes the time they spent inside the
         * simulated perf calls (the kernel's and the hardware's work on a
         * real machine). */
        if (e->sim) {
                double refresh, perf = sim_cpu_seconds(e->sim, &refresh);

                hw_logf(&e->env, HW_LOG_INFO,
                        "SIMULATED machine %s: %zu collector threads used %.3f s of CPU, %.3f s "
                        "of it inside the simulated perf calls; refreshing the simulated tree "
                        "took %.3f s",
                        sim_machine(e->sim)->name, threads, threads_cpu, perf, refresh);
        }
}

void engine_close(struct engine *e)
{
        if (!e)
                return;
        engine_stop(e);
        for (size_t i = 0; i < e->unit_count; i++) {
                struct engine_unit *u = e->units[i];

                u->src->free(u->obj);
                sample_set_free(&u->published);
                sample_set_free(&u->work);
                pthread_mutex_destroy(&u->lock);
                free(u);
        }
        free(e->units);
        /* Shared state last: units point into it. */
        for (size_t i = e->owned_count; i-- > 0;)
                e->owned[i].release(e->owned[i].ptr);
        free(e->owned);
        sample_set_free(&e->own);
        if (e->sim)
                sim_close(e->sim); /* closes the PCI source it opened */
        else
                pci_source_close(e->env.pci);
        pcie_topo_free(e->topology.topo);
        pthread_mutex_destroy(&e->topology.lock);
        pthread_cond_destroy(&e->wake);
        pthread_mutex_destroy(&e->lock);
        free(e);
}
