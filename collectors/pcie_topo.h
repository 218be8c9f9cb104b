/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_topo.h - the PCI(e) tree: every function, its port type, its parent
 * bridge, its Root Port and host bridge, and its link partner.
 *
 * The tree is built from bus numbers alone (a function's parent is the
 * bridge whose secondary bus is the function's bus), as `lspci -t` does, so
 * that it works the same on a live machine and on an `lspci -xxxx` dump.
 */
#ifndef PCIESCOPE_PCIE_TOPO_H
#define PCIESCOPE_PCIE_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_source.h"
#include "pcie_cfg.h"
#include "pcie_link.h"

struct hw_env;

#define PCIE_TOPO_NONE    ((size_t)-1)
#define PCIE_NUMA_UNKNOWN (-1)
#define PCIE_NAME_LEN     128

struct pcie_function {
        struct pci_addr addr;
        char bdf[PCI_BDF_LEN];
        size_t cfg_len; /* readable config bytes: 0, 64, 256 or 4096 */
        struct pcie_func_info info;

        size_t parent;      /* index of the parent bridge, PCIE_TOPO_NONE on a root bus */
        size_t root_port;   /* index of the Root Port above (or self), or PCIE_TOPO_NONE */
        size_t partner;     /* index of the other end of the link, or PCIE_TOPO_NONE */
        unsigned int depth; /* 0 on a root bus */
        uint8_t root_bus;   /* bus number of the hierarchy's root bus */

        int numa_node; /* PCIE_NUMA_UNKNOWN when not known */
        char vendor_name[PCIE_NAME_LEN];
        char device_name[PCIE_NAME_LEN];

        /* Derived link view, valid when info.has_link. */
        bool link_from_sysfs; /* config space too short: the link from sysfs */
        bool link_up;
        bool downtrained;
        uint8_t speed_vector; /* supported speeds (LNKCAP2 or derived) */
        struct pcie_link_common common_max;
        uint64_t capacity_current; /* bytes/s per direction */
        uint64_t capacity_max;     /* at this function's own max speed/width */
};

struct pcie_topo;

/* Build options. */
struct pcie_topo_opts {
        bool names;      /* look up vendor/device names (pci.ids) */
        bool read_sysfs; /* read numa_node from the env's sysfs root */
};

/*
 * pcie_topo_scan - scan env->pci and build the tree.
 * Returns 0, -ENODEV if env->pci is NULL, -EIO from libpci (message in
 * pci_source_error()), or -ENOMEM.
 */
int pcie_topo_scan(const struct hw_env *env, const struct pcie_topo_opts *opts,
                   struct pcie_topo **out);

/* Builder used by the scan and by tests: add raw functions, then finish. */
struct pcie_topo *pcie_topo_new(void);
int pcie_topo_add(struct pcie_topo *topo, const struct pci_addr *addr, const uint8_t *cfg,
                  size_t cfg_len);
/* Sorts functions, links parents, root ports and partners, derives links. */
void pcie_topo_finish(struct pcie_topo *topo);

void pcie_topo_free(struct pcie_topo *topo);

size_t pcie_topo_count(const struct pcie_topo *topo);
const struct pcie_function *pcie_topo_get(const struct pcie_topo *topo, size_t index);
/* Mutable access for the scan and tests (names, NUMA). */
struct pcie_function *pcie_topo_at(struct pcie_topo *topo, size_t index);
/* Index of the function with this address, or PCIE_TOPO_NONE. */
size_t pcie_topo_find(const struct pcie_topo *topo, const struct pci_addr *addr);

/*
 * pcie_topo_link_mps - the largest TLP payload Root Port @port's link
 * carries: its MPS, or a larger MPS configured on a function below it (a
 * sender's MPS sets its TLPs' size; the audit reports the mismatch). 0 when
 * none is known.
 */
unsigned int pcie_topo_link_mps(const struct pcie_topo *topo, size_t port);

/* Functions whose configuration space could not be read in full, and how
 * many duplicate addresses were dropped (dumps may repeat a device). */
size_t pcie_topo_truncated(const struct pcie_topo *topo);
size_t pcie_topo_duplicates(const struct pcie_topo *topo);

#endif /* PCIESCOPE_PCIE_TOPO_H */
