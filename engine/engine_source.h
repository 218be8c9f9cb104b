/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine_source.h - the one contract every source of samples implements,
 * in the style of pciutils' struct pci_methods: a static table of
 * functions per kind of source, and the engine drives them all alike.
 *
 * A source discovers its units on the machine (one per PCIe core for the
 * hisi_pcie PMU, one per socket for Intel IIO, one per PTT device, one for
 * a machine-wide source such as the topology monitor) and the engine runs
 * each unit: start once, then tick whenever the unit says it is due. A
 * tick that finishes an interval fills a sample set, which the engine
 * hands to its host. Units of a threaded source run on a thread each;
 * the others tick on the host's read (they are cheap and read files).
 *
 * Errors are negative errno values; what went wrong is logged through the
 * env's log callback by the source (once, not every interval).
 */
#ifndef PCIESCOPE_ENGINE_SOURCE_H
#define PCIESCOPE_ENGINE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

struct engine_config;
struct engine_discovery;
struct sample_set;

struct engine_source {
        const char *name; /* "monitor", "hisi_pcie", "intel_iio", ... */
        /* One thread per unit (counters, trace windows), or ticked on the
         * host's read (files read in a few ms). */
        bool threaded;
        /* Whether @cfg asks for this source at all (CollectPMU...). */
        bool (*enabled)(const struct engine_config *cfg, bool dump);
        /* The checks of this source's options across lines; NULL: none.
         * 0 or -EINVAL with @why. */
        int (*check)(const struct engine_config *cfg, char *why, size_t whylen);
        /* Finds the units on the machine and adds each with
         * engine_discovery_add(); 0, or a negative errno that stops the
         * engine (-ENOMEM). A source with nothing to run adds nothing. */
        int (*discover)(struct engine_discovery *d);
        /* Opens what the unit needs (perf fds...). -EBUSY, -EMFILE,
         * -ENFILE, -EAGAIN: tried again after PMURetryInterval; another
         * error leaves the unit off (logged once by the unit). */
        int (*start)(void *unit, double now);
        /* Advances the unit to @now. Returns 1 when @out holds a finished
         * interval to publish, 0 when there is nothing to publish yet, or
         * a negative errno (the host's read fails while it lasts). */
        int (*tick)(void *unit, double now, struct sample_set *out);
        /* When the unit wants its next tick (monotonic seconds). */
        double (*next_tick)(const void *unit);
        /* Closes what start opened (the unit can start again). */
        void (*stop)(void *unit);
        /* Frees the unit (after stop). */
        void (*free)(void *unit);
};

/* ---- what discover() gets ---- */

struct hw_env;
struct pcie_topo;

const struct hw_env *engine_discovery_env(const struct engine_discovery *d);
const struct engine_config *engine_discovery_config(const struct engine_discovery *d);
/* The PCI topology scanned once for every source; NULL when it could not
 * be read (then sources that need it add nothing). */
const struct pcie_topo *engine_discovery_topo(const struct engine_discovery *d);
double engine_discovery_now(const struct engine_discovery *d);

/*
 * The topology the units follow without a restart: the monitor rescans the
 * bus at every read and publishes its scan when the set of functions
 * changed (a hot-plug, a surprise removal, a rescan), and at its first
 * scan; each publication bumps the generation (0: nothing published yet,
 * the units run on what discover() saw). A unit that plans per device
 * compares the generation with the one it planned from (one atomic load
 * per interval) and, when it moved, takes the lock, replans from the
 * topology (which it must not keep past the unlock) and unlocks. The
 * topology may be NULL (nothing published yet).
 */
struct engine_topology;
struct engine_topology *engine_discovery_topology(const struct engine_discovery *d);
/* The monitor: hands @topo over (freed by the engine) and bumps the generation. */
void engine_topology_publish(struct engine_topology *t, struct pcie_topo *topo);
unsigned long engine_topology_generation(const struct engine_topology *t);
const struct pcie_topo *engine_topology_lock(struct engine_topology *t, unsigned long *generation);
void engine_topology_unlock(struct engine_topology *t);
double engine_discovery_interval(const struct engine_discovery *d);
/* Whether the host asks for a baseline reading at start (engine_host). */
bool engine_discovery_baseline(const struct engine_discovery *d);
/* The machine's name when it is simulated, else NULL. */
const char *engine_discovery_simulated(const struct engine_discovery *d);

/* Adds a unit named @name (thread names: the first 15 bytes). 0 or -ENOMEM
 * (then the unit is freed with the source's free). */
int engine_discovery_add(struct engine_discovery *d, void *unit, const char *name);
/* Hands the engine something the units share (a PMU list, a budget): it is
 * freed with @release after every unit. 0 or -ENOMEM (then released now). */
int engine_discovery_own(struct engine_discovery *d, void *shared, void (*release)(void *));

/* ---- for units that publish every interval ---- */

/* When a unit is due: first one interval after its start, then every
 * interval; a unit that fell behind (suspend, overload) skips ahead to
 * now instead of bursting. */
struct engine_schedule {
        double interval, next;
};
void engine_schedule_start(struct engine_schedule *s, double interval, double now);
void engine_schedule_ticked(struct engine_schedule *s, double now);

/* ---- problems that last ---- */

/*
 * A problem that lasts (a counter that cannot be read, a PMU that went
 * away) is logged when it starts and once when it clears, not every
 * interval: collectd's c_complain()/c_release() pattern. Zero-initialised
 * means nothing shown yet.
 */
struct engine_complaint {
        bool shown;
};
/* Logs the message at WARNING unless this complaint is already shown. */
void engine_complain(const struct hw_env *env, struct engine_complaint *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* When the complaint was shown, logs the message at INFO and resets it. */
void engine_complaint_clear(const struct hw_env *env, struct engine_complaint *c, const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));

/* The sources, in the order their samples are handed to the host. */
extern const struct engine_source engine_source_monitor;
extern const struct engine_source engine_source_uncore;
extern const struct engine_source engine_source_ptt_tune;
extern const struct engine_source engine_source_hisi_pcie;
extern const struct engine_source engine_source_intel_iio;
extern const struct engine_source engine_source_ptt;
extern const struct engine_source engine_source_dwc_pcie;
extern const struct engine_source engine_source_amd_df;
extern const struct engine_source engine_source_nvidia_pcie;

#endif /* PCIESCOPE_ENGINE_SOURCE_H */
