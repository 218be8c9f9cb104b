// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_bdf_pattern.c - libFuzzer target: BDF patterns (Device,
 * IgnoreDevice, Endpoint) and PCI addresses as users write them. A pattern
 * that compiles matches the address it was written from when that is a
 * plain address; an address that parses formats and parses back to itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bdf_match.h"
#include "pci_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct bdf_pattern pat;
        struct pci_addr a, b;
        char text[64], back[PCI_BDF_LEN];
        size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

        memcpy(text, data, n);
        text[n] = '\0';
        if (pci_addr_parse(text, &a) == 0) {
                pci_addr_format(&a, back);
                if (pci_addr_parse(back, &b) || pci_addr_compare(&a, &b))
                        __builtin_trap();
                /* Its own address as a pattern selects it. */
                if (bdf_pattern_compile(back, &pat) || !bdf_pattern_match(&pat, &a))
                        __builtin_trap();
        }
        if (bdf_pattern_compile(text, &pat) == 0) {
                struct pci_addr probe = {0};

                for (size_t i = 0; i < 4; i++)
                        if (!memchr(pat.field[i], '\0', sizeof(pat.field[i])))
                                __builtin_trap();
                bdf_pattern_match(&pat, &probe);
        }
        return 0;
}
