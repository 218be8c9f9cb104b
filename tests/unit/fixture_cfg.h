/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fixture_cfg.h - build small synthetic topologies for unit tests.
 *
 * Each struct fx_dev row describes one function in the terms of the PCIe
 * registers (port type, MPSS/MPS/MRRS, link, bridge bus numbers); fx_topo()
 * turns the rows into configuration-space images and feeds them through the
 * same pcie_topo builder the scan uses. SYNTHETIC: hand-made, not captured.
 */
#ifndef PCIESCOPE_TEST_FIXTURE_CFG_H
#define PCIESCOPE_TEST_FIXTURE_CFG_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci_regs.h"
#include "pci_source.h"
#include "pcie_topo.h"

#define FX_NO_PCIE (-1)

struct fx_dev {
        const char *bdf;
        int type;                     /* PCI_EXP_TYPE_*, or FX_NO_PCIE */
        unsigned int mpss, mps, mrrs; /* bytes */
        int secondary, subordinate;   /* > 0: a type 1 bridge header */
        bool hotplug;                 /* slot implemented + hot-plug capable */
        unsigned int max_speed, max_width, cur_speed, cur_width; /* codes, lanes; 0: defaults */
};

static inline unsigned int fx_code(unsigned int bytes)
{
        unsigned int code = 0;

        while ((128u << code) < bytes)
                code++;
        return code;
}

static inline void fx_put16(uint8_t *c, size_t off, uint16_t v)
{
        c[off] = (uint8_t)v;
        c[off + 1] = (uint8_t)(v >> 8);
}

static inline void fx_put32(uint8_t *c, size_t off, uint32_t v)
{
        fx_put16(c, off, (uint16_t)v);
        fx_put16(c, off + 2, (uint16_t)(v >> 16));
}

/* Builds a 4096-byte image for one row. */
static inline void fx_build(const struct fx_dev *d, uint8_t *cfg)
{
        const size_t cap = 0x40;
        unsigned int max_speed = d->max_speed ? d->max_speed : 3;
        unsigned int max_width = d->max_width ? d->max_width : 4;

        memset(cfg, 0, PCI_CFG_SPACE_EXP_SIZE);
        fx_put16(cfg, PCI_VENDOR_ID, 0x1234);
        fx_put16(cfg, PCI_DEVICE_ID, 0x5678);
        fx_put32(cfg, PCI_CLASS_REVISION, d->secondary > 0 ? 0x06040000u : 0x02000000u);
        if (d->secondary > 0) {
                cfg[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_BRIDGE;
                cfg[PCI_SECONDARY_BUS] = (uint8_t)d->secondary;
                cfg[PCI_SUBORDINATE_BUS] = (uint8_t)d->subordinate;
        }
        if (d->type == FX_NO_PCIE)
                return;
        fx_put16(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST);
        cfg[PCI_CAPABILITY_LIST] = (uint8_t)cap;
        cfg[cap] = PCI_CAP_ID_EXP;
        cfg[cap + 1] = 0;
        fx_put16(cfg, cap + PCI_EXP_FLAGS,
                 (uint16_t)(2 | d->type << 4 | (d->hotplug ? PCI_EXP_FLAGS_SLOT : 0)));
        fx_put32(cfg, cap + PCI_EXP_DEVCAP, fx_code(d->mpss));
        fx_put16(cfg, cap + PCI_EXP_DEVCTL,
                 (uint16_t)(fx_code(d->mps) << 5 | fx_code(d->mrrs) << 12));
        fx_put32(cfg, cap + PCI_EXP_LNKCAP, max_speed | max_width << 4);
        /* No current speed given: trained at the maximum. A current speed
         * with width 0 is a link that is down. */
        fx_put16(cfg, cap + PCI_EXP_LNKSTA,
                 (uint16_t)(d->cur_speed ? d->cur_speed | d->cur_width << 4
                                         : max_speed | max_width << 4));
        if (d->hotplug)
                fx_put32(cfg, cap + PCI_EXP_SLTCAP, PCI_EXP_SLTCAP_HPC);
        fx_put32(cfg, cap + PCI_EXP_LNKCAP2, ((1u << (max_speed + 1)) - 2));
}

/* NULL on a bad BDF in the table (a bug in the test). */
static inline struct pcie_topo *fx_topo(const struct fx_dev *devs, size_t n)
{
        static uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        struct pcie_topo *topo = pcie_topo_new();

        for (size_t i = 0; i < n && topo; i++) {
                struct pci_addr addr;

                if (pci_addr_parse(devs[i].bdf, &addr)) {
                        pcie_topo_free(topo);
                        return NULL;
                }
                fx_build(&devs[i], cfg);
                if (pcie_topo_add(topo, &addr, cfg, sizeof(cfg))) {
                        pcie_topo_free(topo);
                        return NULL;
                }
        }
        if (topo)
                pcie_topo_finish(topo);
        return topo;
}

/* Writes the rows as an `lspci -xxxx` text dump (libpci's dump format).
 * Returns 0 or -1. */
static inline int fx_write_dump(const char *path, const struct fx_dev *devs, size_t n)
{
        static uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        FILE *f = fopen(path, "w");

        if (!f)
                return -1;
        for (size_t i = 0; i < n; i++) {
                fx_build(&devs[i], cfg);
                fprintf(f, "%s Synthetic device\n", devs[i].bdf);
                for (size_t off = 0; off < sizeof(cfg); off += 16) {
                        fprintf(f, "%02zx:", off);
                        for (size_t b = 0; b < 16; b++)
                                fprintf(f, " %02x", cfg[off + b]);
                        fputc('\n', f);
                }
                fputc('\n', f);
        }
        return fclose(f) ? -1 : 0;
}

static inline size_t fx_index(const struct pcie_topo *topo, const char *bdf)
{
        struct pci_addr addr;

        if (pci_addr_parse(bdf, &addr))
                return PCIE_TOPO_NONE;
        return pcie_topo_find(topo, &addr);
}

#endif /* PCIESCOPE_TEST_FIXTURE_CFG_H */
