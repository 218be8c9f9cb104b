/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci_addr.h - the address of a PCI function (domain:bus:device.function),
 * on its own so that pure code (BDF patterns, decoders) can name functions
 * without pulling in PCI access.
 */
#ifndef PCIESCOPE_PCI_ADDR_H
#define PCIESCOPE_PCI_ADDR_H

#include <stdint.h>

struct pci_addr {
        uint32_t domain;
        uint8_t bus, dev, func;
};

/* "dddd:bb:dd.f"; @out must hold PCI_BDF_LEN bytes. */
#define PCI_BDF_LEN 20
void pci_addr_format(const struct pci_addr *addr, char *out);
/* Parses "dddd:bb:dd.f" or "bb:dd.f" (domain 0). 0 or -EINVAL. */
int pci_addr_parse(const char *s, struct pci_addr *addr);
/* Orders by domain, bus, device, function. */
int pci_addr_compare(const struct pci_addr *a, const struct pci_addr *b);

#endif /* PCIESCOPE_PCI_ADDR_H */
