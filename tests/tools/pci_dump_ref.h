/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci_dump_ref.h - the reference for pci_source's own dump reader: libpci's
 * dump method, driven as pci_source drove it before issue 17, and the same
 * digest of what each hands over (functions in order, their address, the
 * bytes at the steps 64, 256, 4096, or the error). test_pci_source and the
 * fuzz_pci_dump target compare the two with it.
 */
#ifndef PCIESCOPE_PCI_DUMP_REF_H
#define PCIESCOPE_PCI_DUMP_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dump_digest {
        int ret;         /* 0, or -EIO with error set */
        size_t calls;    /* functions handed over (0 on an error) */
        uint64_t hash;   /* FNV-1a over address, length and bytes, in order */
        bool odd_length; /* a length other than 0, 64, 256, 4096 was handed over */
        char error[512];
};

/* libpci's dump method on @path. */
void dump_digest_libpci(const char *path, struct dump_digest *d);

/* pci_source_open_dump() + pci_source_scan() on @path; 0, or the negative
 * errno of the open. */
int dump_digest_ours(const char *path, struct dump_digest *d);

/* Both handed over the same, or failed with the same message. */
bool dump_digest_same(const struct dump_digest *a, const struct dump_digest *b);

#endif /* PCIESCOPE_PCI_DUMP_REF_H */
