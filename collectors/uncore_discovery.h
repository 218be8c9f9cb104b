/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uncore_discovery.h - Intel uncore PMON self-discovery (Sapphire Rapids on).
 *
 * From the 4th generation Xeon on, every uncore PMON unit is listed in a
 * table that a PCI function publishes behind a DVSEC extended capability
 * (capability 0x23, DVSEC vendor 0x8086, DVSEC id 1). The DVSEC names a BAR
 * (BIR); at the BAR's base lies a global entry (type, stride, number of
 * units, access type) followed by one entry per unit: box type and id,
 * access type (MSR, MMIO or PCI config), box control address, counter count
 * and width, register offsets (kernel-facts §5.1-5.3).
 *
 * The scan through the seam: every Intel function's extended configuration
 * space (libpci) is searched for the PMON discovery DVSEC, and its table
 * is read from the device's sysfs resource<BIR> file with the MMIO ops,
 * read only: no register is ever written. The decoding is in
 * uncore_table.h (pure); the inventory becomes samples here.
 */
#ifndef PCIESCOPE_UNCORE_DISCOVERY_H
#define PCIESCOPE_UNCORE_DISCOVERY_H

#include <stddef.h>

#include "uncore_table.h"

struct hw_env;

/* The running CPU's family and model through the env: sysfs modalias,
 * else /proc/cpuinfo. 0, -ENOENT or -EBADMSG (both 0 then). */
int uncore_cpu_id(const struct hw_env *env, unsigned int *family, unsigned int *model);

/* ---- discovery through the seam ---- */

/* One discovery function with its table. */
struct uncore_source {
        struct pci_addr addr;
        uint16_t device_id;
        int numa_node; /* from sysfs, -1 when unknown */
        struct uncore_dvsec dvsec;
        uint64_t bar;
        uint64_t bar_size; /* from sysfs `resource`, 0 when unknown */
        int error;         /* 0, or why the table could not be read */
        char message[160]; /* the reason in words when error != 0 */
        struct uncore_table table;
};

struct uncore_inventory {
        enum uncore_platform platform;
        unsigned int cpu_family, cpu_model; /* 0 when unknown */
        size_t source_count;
        struct uncore_source *sources; /* sorted by address */
        unsigned int other_dvsecs;     /* non-discovery DVSECs passed over */
        unsigned int short_config;     /* Intel functions whose extended space was unreadable */
};

/*
 * uncore_discover - scan env->pci for PMON discovery DVSECs and read each
 * table through env->mmio from <sysfs>/bus/pci/devices/<bdf>/resource<BIR>.
 * A function whose table cannot be read stays in the list with ->error set
 * (and the reason logged once through the env); the others are unaffected.
 * Returns 0 (an inventory, possibly with no sources: not an Intel machine
 * with discovery), -ENODEV (env->pci is NULL), -EIO (the PCI scan failed),
 * or -ENOMEM.
 */
int uncore_discover(const struct hw_env *env, struct uncore_inventory **out);
void uncore_inventory_free(struct uncore_inventory *inv);

/* Number of valid units of box type @type over every source. */
size_t uncore_inventory_count(const struct uncore_inventory *inv, unsigned int type);

struct sample_set;

/*
 * uncore_inventory_samples - the inventory as metrics: one
 * pcie_uncore_discovery_info per discovery function (platform, BAR, unit
 * counts, error) and pcie_uncore_units per function, box type and access
 * type. Returns 0 or -ENOMEM.
 */
int uncore_inventory_samples(const struct uncore_inventory *inv, struct sample_set *out);

#endif /* PCIESCOPE_UNCORE_DISCOVERY_H */
