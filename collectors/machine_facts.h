/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine_facts.h - read, through the seam and only from the list below,
 * what `pciescope snapshot` keeps of a machine and machine_desc.h turns
 * into a simulator description: every function's configuration space, its
 * sysfs numa_node and aer_dev_* counts; the hisi_pcie, hisi_ptt and
 * uncore_iio PMUs; CPU sockets and the online CPUs; the kernel release and
 * command line; the Intel PMON discovery tables. Nothing is written;
 * nothing else is read. What redact.h removes is removed as it is read:
 * the configuration space is kept with its Device Serial Number and VPD
 * data zeroed, the command line with its addresses and secrets redacted.
 *
 * What is absent or unreadable is recorded (what, why) for the manifest.
 */
#ifndef PCIESCOPE_MACHINE_FACTS_H
#define PCIESCOPE_MACHINE_FACTS_H

#include <stddef.h>

#include "machine_desc.h"

struct hw_env;
struct machine_facts;

/*
 * machine_facts_read - gather the facts of @env. @stack_buses (IIOStackBus
 * of the configuration, may be NULL) and @source (words for the
 * description: "this machine", "simulated spr-2s") are copied. Returns 0,
 * -ENODEV (env->pci NULL), -EIO (the PCI scan failed: the reason in @why),
 * or -ENOMEM. Everything else missing is recorded, not an error.
 */
int machine_facts_read(const struct hw_env *env, const struct md_stack_bus *stack_buses,
                       size_t stack_bus_count, const char *source, struct machine_facts **out,
                       char *why, size_t whylen);
void machine_facts_free(struct machine_facts *mf);

const struct md_facts *machine_facts_get(const struct machine_facts *mf);

/* Things not collected and why ("no hisi_ptt devices", ...). */
size_t machine_facts_missing_count(const struct machine_facts *mf);
void machine_facts_missing(const struct machine_facts *mf, size_t i, const char **what,
                           const char **why);

/* How many values of the command line were redacted. */
int machine_facts_redacted(const struct machine_facts *mf);

/* How many functions had their Device Serial Number (@dsn) and VPD data
 * register (@vpd) zeroed. */
void machine_facts_cfg_redacted(const struct machine_facts *mf, size_t *dsn, size_t *vpd);

#endif /* PCIESCOPE_MACHINE_FACTS_H */
