/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h - a running simulated machine: its description, its sysfs/procfs
 * tree in a temporary directory, and its PMUs behind perf ops, bundled as
 * a hw_env the collectors run on unchanged.
 *
 * Used by the plugin (Simulate "kunpeng930-2p"), the CLI (--simulate) and
 * the tests. Whoever uses it says so: a simulation is never passed off as
 * the machine it runs on.
 */
#ifndef PCIESCOPE_SIM_H
#define PCIESCOPE_SIM_H

#include <stddef.h>

#include "sim_hisi_pcie.h"
#include "sim_machine.h"

struct hw_env;
struct sim_iio;
struct sim_nvpcie;
struct sim_ptt;

/* perf type of the first simulated PMU: far above the kernel's dynamic
 * types, so a real PMU is never confused with a simulated one. */
#define SIM_PMU_TYPE_BASE 0x7000

struct sim_opts {
        const char *machine_dir; /* where named machines live; NULL: built-in default */
        const char *kernel;      /* override the description's kernel ("5.17"...), or NULL */
        const char *tmp_dir;     /* parent of the tree; NULL: $TMPDIR or /tmp */
        sim_clock_fn clock;      /* NULL: CLOCK_MONOTONIC */
        void *clock_ctx;
};

struct sim;

/*
 * sim_open - load @name_or_path (a machine name such as "kunpeng930-2p",
 * looked up as <machine_dir>/<name>.json, or a path containing '/'), write
 * its tree and start its PMU model. @errbuf receives a message naming the
 * file and problem. Returns 0, -ENOENT, -EINVAL, -ENOMEM or an I/O errno.
 */
int sim_open(const char *name_or_path, const struct sim_opts *opts, struct sim **out, char *errbuf,
             size_t errlen);

/* Removes the tree and frees everything. */
void sim_close(struct sim *s);

/*
 * sim_env - point @env at the simulation: sysfs and procfs roots, perf ops
 * (one set serving both the hisi_pcie and the Intel IIO models: opens are
 * routed by perf type, everything else by fake fd range),
 * and a libpci source reading the tree's config files (which sim_close
 * closes). The log callback of @env is left alone. Returns 0 or the errno
 * of opening the PCI source.
 */
int sim_env(struct sim *s, struct hw_env *env);

/* Brings time-dependent files (AER counts) up to now. */
int sim_refresh(struct sim *s);

/* CPU seconds the callers' threads spent inside the simulation's perf
 * calls, and (@refresh, if not NULL) in sim_refresh: work a real machine's
 * kernel and hardware would do, so a host can tell the simulator's cost
 * from the collectors'. */
double sim_cpu_seconds(const struct sim *s, double *refresh);

const struct sim_machine *sim_machine(const struct sim *s);
struct sim_pmu *sim_pmu(struct sim *s);
/* The Intel IIO model, or NULL when the machine has no Intel part. */
struct sim_iio *sim_iio(struct sim *s);
/* The AMD data fabric model (sim_amd_df.h), or NULL without one. */
struct sim_df *sim_df(struct sim *s);
/* The DesignWare PCIe PMU model, or NULL without DesignWare Root Ports. */
struct sim_dwc;
struct sim_dwc *sim_dwc(struct sim *s);
/* The Grace PCIe PMU model, or NULL on a machine without one. */
struct sim_nvpcie *sim_nvpcie(struct sim *s);
/* The PTT trace model (sim_hisi_ptt.h). */
struct sim_ptt *sim_ptt(struct sim *s);
const char *sim_root(const struct sim *s); /* the tree's top directory */

/* The kernel versions whose drivers are simulated: "5.17" -> SIM_KERNEL_5_17.
 * 0 or -EINVAL. */
int sim_kernel_parse(const char *text, enum sim_kernel *out);
/* "5.17, 6.2, 6.9, 6.12, 6.15", for messages and docs. */
const char *sim_kernel_names(void);

/* Default directory of named machines (the installed pkgdatadir/machines). */
const char *sim_default_machine_dir(void);

#endif /* PCIESCOPE_SIM_H */
