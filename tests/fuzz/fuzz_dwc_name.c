// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_dwc_name.c - libFuzzer target: a dwc_rootport PMU name (a sysfs
 * directory name) to its Root Port: dwc_pcie_parse_name on any text, then
 * dwc_pcie_match_port against Root Ports built from the rest of the input.
 * What is found must be coherent (an id above 0xffff is an SBDF, a match
 * has the id's BDF, and the segment too for an SBDF); checked here and
 * turned into a crash so libFuzzer keeps the input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dwc_pcie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pci_addr ports[16];
        size_t n = 0, len;
        char name[80];
        uint32_t id;
        bool seg;
        int at;

        /* Up to 16 x 4 bytes: Root Ports (segment, bus, device, function),
         * until a '.'; after it, the name. */
        while (n < 16 && size >= 4 && data[0] != '.') {
                ports[n].domain = data[0];
                ports[n].bus = data[1];
                ports[n].dev = data[2] & 0x1f;
                ports[n].func = data[3] & 7;
                n++;
                data += 4;
                size -= 4;
        }
        if (size && data[0] == '.') {
                data++;
                size--;
        }
        len = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
        memcpy(name, data, len);
        name[len] = '\0';
        if (dwc_pcie_parse_name(name, &id, &seg))
                return 0;
        if (seg != (id > 0xffff))
                __builtin_trap();
        at = dwc_pcie_match_port(id, ports, n);
        if (at >= 0) {
                const struct pci_addr *p = &ports[at];

                if ((size_t)at >= n ||
                    (uint16_t)(p->bus << 8 | p->dev << 3 | p->func) != (id & 0xffff) ||
                    (seg && p->domain != id >> 16))
                        __builtin_trap();
        } else if (at != -ENOENT && at != -EEXIST) {
                __builtin_trap();
        }
        return 0;
}
