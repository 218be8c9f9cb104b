/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci_ids_ref.h - the reference for pci_source_names_for(): the names of
 * some functions looked up with only their part of a pci.ids file loaded,
 * against the same look-ups with libpci's load of the whole file (what
 * pci_source did before issue 17). test_pci_source and the fuzz_pci_ids
 * target compare the two with it.
 */
#ifndef PCIESCOPE_PCI_IDS_REF_H
#define PCIESCOPE_PCI_IDS_REF_H

#include <stddef.h>
#include <stdint.h>

enum ids_verdict {
        IDS_SAME,          /* every name the same */
        IDS_DIFFER,        /* a name differs: see the message */
        IDS_WHOLE_REFUSED, /* libpci refused the whole file: nothing to compare */
};

/*
 * The names of @ids (vendor << 16 | device) from the pci.ids file @path:
 * through pci_source_names_for() on one source, without it on another.
 * @part_out (may be NULL): pci_source_names_part() after the look-ups.
 * A difference is described in @why.
 */
enum ids_verdict ids_names_compare(const char *path, const uint32_t *ids, size_t n,
                                   size_t *part_out, char *why, size_t why_size);

/* Up to @max ids a pci.ids text names: each vendor line's ID with each
 * device line's below it (and the vendor alone, device 0xffff). */
size_t ids_from_text(const char *text, size_t len, uint32_t *ids, size_t max);

#endif /* PCIESCOPE_PCI_IDS_REF_H */
