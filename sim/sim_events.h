/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_events.h - hardware that changes while a simulated machine runs:
 * a function (or a whole subtree below a bridge) removed by surprise and
 * added back by a rescan, with ground truth.
 *
 * Every change is an entry of the machine's event log (struct sim_event in
 * sim_machine.h): first the description's `events` schedule, then what a
 * caller changes at run time (sim_device_remove ...), each with its time.
 * Whether a function exists at time t is a pure function of that log, so
 * the traffic it carried, the counts a PMU filtered to it shows and its
 * AER counters are exact, whenever the simulation is touched; sim_refresh
 * (sim.h) brings the tree up to now (directories gone and back).
 *
 * Rules (docs/simulator.md, "events"): a function exists at t unless the
 * latest event at or before t that names it or a bridge above it is a
 * removal, and its parent exists. A rescan (add) of a bridge brings back
 * everything below it. A function that comes back is a new pci_dev: its
 * AER counters start from 0 (the description's `initial` counts were the
 * boot's). A removed function carries no traffic.
 */
#ifndef PCIESCOPE_SIM_EVENTS_H
#define PCIESCOPE_SIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sim_machine.h"

struct sim;
struct json_object;

/* "remove", "add", "cpu_offline", ... */
const char *sim_event_kind_name(enum sim_event_kind k);

/*
 * sim_events_parse - read a description's `events` array (the loader
 * calls it once the devices and cores are known). Strict: an unknown key,
 * a key the kind does not take, a missing one, an unknown BDF or PMU is
 * an error "<origin>: events[i].<key>: <problem>" in @err. 0 or -EINVAL.
 */
int sim_events_parse(struct sim_machine *m, struct json_object *events, const char *origin,
                     char *err, size_t errlen);

/* The events in the log now (schedule and run-time changes). */
size_t sim_events_count(const struct sim_machine *m);

/* When the next change after @t happens (INFINITY: none); with @pmus,
 * the next change of a PMU directory: a bind, an unbind, or a CPU going
 * offline or online (cpumasks move). */
double sim_events_next(const struct sim_machine *m, double t, bool pmus);

/* The occurrences of the log's events in (@t0, @t1], in time order (at
 * most @cap): what a stateful change (a CPU going offline) replays. */
struct sim_event_at {
        double at;
        size_t index; /* into m->events */
};
size_t sim_events_between(const struct sim_machine *m, double t0, double t1,
                          struct sim_event_at *out, size_t cap);

/* Whether device @dev exists @t seconds after start. */
bool sim_device_present(const struct sim_machine *m, size_t dev, double t);

/* When device @dev's current pci_dev appeared: 0 when it has been there
 * since start, the time of the rescan that brought it back, or -1 when it
 * is absent at @t. */
double sim_device_origin(const struct sim_machine *m, size_t dev, double t);

/* Integral over [@t0, @t1] of device @dev's workload phase scale, counted
 * only while it exists (sim_traffic_integral otherwise). With no workload
 * phases: the seconds it existed. */
double sim_device_traffic_integral(const struct sim_machine *m, size_t dev, double t0, double t1);

/* The same without back-pressure (sim_traffic_backpressure): what the
 * workload asked for, where sim_device_traffic_integral is what its
 * links carried. */
double sim_device_offered_integral(const struct sim_machine *m, size_t dev, double t0, double t1);

/* Seconds device @dev existed in [@t0, @t1]. */
double sim_device_present_seconds(const struct sim_machine *m, size_t dev, double t0, double t1);

/* Whether any event names device @dev or a bridge above it (the others
 * take the fast path: always present). */
bool sim_device_has_events(const struct sim_machine *m, size_t dev);

/*
 * sim_pmu_bound - whether core @core's hisi_pcie PMU is registered at @t
 * (no `pmu_unbind` since its last `pmu_bind`), and in *@generation how
 * many times it was bound again by then (its perf type changes with each:
 * sim_pmu_type_of()).
 */
bool sim_pmu_bound(const struct sim_machine *m, size_t core, double t, unsigned int *generation);
/* The same for any PMU a `pmu_unbind` can name: @kind, and @index (core
 * index, or the IIO box id). */
bool sim_pmu_kind_bound(const struct sim_machine *m, enum sim_pmu_kind kind, size_t index, double t,
                        unsigned int *generation);
/* Whether any `pmu_unbind` / `pmu_bind` names that PMU. */
bool sim_pmu_kind_has_events(const struct sim_machine *m, enum sim_pmu_kind kind, size_t index);
/* The PMU named @name, of any kind: "hisi_pcie<s>_core<c>",
 * "hisi_ptt<s>_<c>", "uncore_iio_free_running_<box>" or "amd_df" (an AMD
 * machine). 0 or -ENODEV. */
int sim_pmu_any_find(const struct sim_machine *m, const char *name, enum sim_pmu_kind *kind,
                     size_t *index);

/* Whether CPU @cpu is online @t seconds after start: no `cpu_offline` of
 * it since its last `cpu_online` (a pure function of the log, so a PMU
 * model's event_init can refuse an offline CPU as perf_event_open() does:
 * -ENODEV). */
bool sim_cpu_is_online(const struct sim_machine *m, unsigned int cpu, double t);

/* ---- run-time changes of a running simulation (sim.h) ---- */

/*
 * sim_device_remove - surprise removal of function @bdf ("dddd:bb:dd.f")
 * and of everything below it, now: its sysfs directories go away as the
 * kernel's pci_stop_and_remove_bus_device() removes them, libpci no longer
 * lists it, it carries no traffic, a PMU event filtered to it counts
 * nothing further. sim_device_add - a rescan brings it (and what is below
 * it) back, its AER counters from 0. Both record the change in the log and
 * refresh the tree. 0, -ENODEV (no such function), -ENOSPC (log full).
 */
int sim_device_remove(struct sim *s, const char *bdf);
int sim_device_add(struct sim *s, const char *bdf);

/*
 * sim_pmu_unbind - the PMU @pmu ("hisi_pcie<sicl>_core<core>",
 * "hisi_ptt<sicl>_<core>", "uncore_iio_free_running_<box>" or "amd_df") loses its
 * driver now: perf_pmu_unregister() takes its directory under
 * bus/event_source/devices away and revokes its open events (read()
 * returns 0 bytes, ioctl() -ENODEV, as since Linux 6.15); its perf type
 * opens nothing (-ENOENT). sim_pmu_bind - bound again: a fresh directory
 * with a new perf type (an Intel IIO PMU: sim_iio_type_of(); amd_df:
 * sim_df_type_of(); its new events count from 0). 0, -ENODEV (no such PMU), -ENOSPC.
 */
int sim_pmu_unbind(struct sim *s, const char *pmu);
/* The core index of PTT device @name ("hisi_ptt<sicl>_<core>"). 0 or
 * -ENODEV. */
int sim_ptt_find(const struct sim_machine *m, const char *name, size_t *core);
/* The core index of hisi_pcie PMU @name. 0 or -ENODEV. */
int sim_pmu_find(const struct sim_machine *m, const char *name, size_t *core);
int sim_pmu_bind(struct sim *s, const char *pmu);

/*
 * sim_cpu_down / sim_cpu_up - CPU @cpu goes offline (online) now, as
 * `cpu_offline` (`cpu_online`) does: every PMU whose cpumask holds it moves
 * to another CPU of its die (hisi_pcie, hisi_ptt, Intel IIO), open events
 * count on, opening on it fails with -ENODEV. 0, -ENODEV (no such CPU),
 * -ENOSPC.
 */
int sim_cpu_down(struct sim *s, unsigned int cpu);
int sim_cpu_up(struct sim *s, unsigned int cpu);

/* Appends @e to @m's log (thread-safe against readers). 0 or -ENOSPC. */
int sim_events_append(struct sim_machine *m, const struct sim_event *e);

#endif /* PCIESCOPE_SIM_EVENTS_H */
