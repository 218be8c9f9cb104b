/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.h - pciescope's collectd-free engine: every host (the collectd
 * plugin, the CLI's counting commands, and later Netdata, an exporter and a
 * terminal view) is thin glue over it.
 *
 * The engine takes one parsed configuration (engine_config.h), opens the
 * environment (this machine, an `lspci -xxxx` dump, or a simulated machine),
 * discovers the units of every source (engine_source.h), runs them (one
 * thread per unit of a threaded source, or stepped by the host under a
 * clock of its own) and hands each finished interval to the host as a
 * sample set through a callback. engine_stop() joins every thread within
 * a second.
 *
 *      engine_open()            the machine, said plainly when simulated
 *      engine_start()           discover and start every source
 *      engine_read(sink)        each interval: what is new, in a fixed order
 *      engine_stop()            join the threads, close the counters
 *      engine_close()
 */
#ifndef PCIESCOPE_ENGINE_H
#define PCIESCOPE_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine_config.h"
#include "hw_env.h"
#include "sample.h"

struct engine;
struct engine_source;

typedef double (*engine_clock_fn)(void *ctx);
typedef int (*engine_thread_create_fn)(pthread_t *thread, void *(*start)(void *), void *arg,
                                       const char *name);

/* Which sources a host runs (engine_host.sources); 0 means all. */
enum {
        ENGINE_SOURCE_MONITOR = 1u << 0,   /* topology, link, audit, AER */
        ENGINE_SOURCE_UNCORE = 1u << 1,    /* Intel PMON discovery inventory */
        ENGINE_SOURCE_PTT_TUNE = 1u << 2,  /* PTT tune knobs */
        ENGINE_SOURCE_HISI_PCIE = 1u << 3, /* HiSilicon PCIe PMU, per core */
        ENGINE_SOURCE_INTEL_IIO = 1u << 4, /* Intel IIO bandwidth, per socket */
        ENGINE_SOURCE_PTT = 1u << 5,       /* PTT trace windows, per device */
        ENGINE_SOURCE_DWC_PCIE = 1u << 6,  /* Synopsys DWC PCIe PMU, per Root Port */
        ENGINE_SOURCE_AMD_DF = 1u << 7,    /* AMD data fabric root complex DMA, per socket */
        /* NVIDIA Grace PCIe PMU, per socket */
        ENGINE_SOURCE_NVIDIA_PCIE = 1u << 8,
        /* The sources that count traffic per Root Port (`pciescope pmu`). */
        ENGINE_SOURCE_PORT_PMUS =
            ENGINE_SOURCE_HISI_PCIE | ENGINE_SOURCE_DWC_PCIE | ENGINE_SOURCE_NVIDIA_PCIE,
};

/* What the host gives the engine. */
struct engine_host {
        hw_log_fn log; /* every message of the engine and its sources */
        void *log_ctx;
        double interval; /* seconds between two publications of a unit */
        /* Monotonic seconds; NULL: CLOCK_MONOTONIC. A simulated machine
         * runs on the same clock, so a host can run it in fake time. */
        engine_clock_fn clock;
        void *clock_ctx;
        /* NULL: pthread_create. collectd's plugin_thread_create names the
         * thread and sets up its plugin context. */
        engine_thread_create_fn thread_create;
        /* No threads: units tick only in engine_advance(), on the host's
         * thread (the CLI's counting commands, tests under a fake clock). */
        bool manual;
        /* Add simulated="<machine>" to every sample of a simulated machine
         * (the collectd plugin: a value must never pass for the machine's). */
        bool label_simulated;
        unsigned int sources; /* ENGINE_SOURCE_* mask; 0: all */
        /* Free-running counters (Intel IIO) need two readings for a rate:
         * take the first at start, so the first interval has rates (every
         * host sets it). Off, the first interval publishes only what needs
         * no rate. */
        bool baseline_at_start;
};

/*
 * engine_open - open the machine @cfg names and prepare the sources; no
 * thread runs yet. @cfg must have passed engine_config_check() and must
 * outlive the engine. On failure @why says what could not be opened
 * (e.g. the simulated machine's file and problem). Returns 0, -ENOMEM,
 * or the errno of opening the machine.
 */
int engine_open(const struct engine_config *cfg, const struct engine_host *host,
                struct engine **out, char *why, size_t whylen);

/* The environment the sources run on (for hosts' one-off commands:
 * topology, audit, the uncore listing). */
struct hw_env *engine_env(struct engine *e);
/* Seconds on the host's clock (the one a simulated machine runs on). */
double engine_now(const struct engine *e);

/* The simulated machine's name and kernel, and where its tree lies; NULL
 * when the engine reads a real machine or a dump. */
const char *engine_simulated(const struct engine *e);
const char *engine_simulated_kernel(const struct engine *e);
const char *engine_simulated_root(const struct engine *e);

/*
 * engine_start - scan the topology once, discover the units of every
 * enabled source and start them (threads, or at once in manual mode).
 * A source that finds nothing, or a unit that cannot start, is logged and
 * left out; the others go on. Returns 0 or -ENOMEM.
 */
int engine_start(struct engine *e);

/* Units discovered for the sources of @mask (ENGINE_SOURCE_*), and how many
 * of them started (manual mode; threaded units count as started). */
size_t engine_unit_count(const struct engine *e, unsigned int mask, size_t *started);

/* A unit as the host sees it in the sink. */
struct engine_unit;
const char *engine_unit_name(const struct engine_unit *u);
/* The ENGINE_SOURCE_* bit of the unit's source. */
unsigned int engine_unit_source(const struct engine_unit *u);

/* Receives one finished interval of one unit (NULL for the engine's own
 * samples, such as pcie_simulation_info). The set is valid during the call. */
typedef void (*engine_sink_fn)(void *ctx, const struct engine_unit *unit,
                               const struct sample_set *set);

/*
 * engine_read - the host's interval: the simulation's info, then the
 * units in source order: non-threaded ones tick now, threaded ones hand
 * their newest finished interval once (nothing new is not an error).
 * Returns 0, or the first error of a non-threaded tick (the topology could
 * not be read at all: the host may back off).
 */
int engine_read(struct engine *e, engine_sink_fn sink, void *ctx);

/* Manual mode: when the next threaded unit is due, and tick every unit due
 * at or before @now (the host sets its clock to @now first). */
double engine_next_due(const struct engine *e);
void engine_advance(struct engine *e, double now);

/* Joins every thread (within a second) and stops every unit. Idempotent. */
void engine_stop(struct engine *e);

/* Stops, frees every unit and closes the machine. NULL is fine. */
void engine_close(struct engine *e);

#endif /* PCIESCOPE_ENGINE_H */
