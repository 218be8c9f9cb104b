// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_pci_ids.c - libFuzzer target, differential: a pci.ids file (any
 * bytes) and the names of the functions it lists, looked up with only
 * their part of the file loaded (pci_source_names_for(), issue 17) and
 * with libpci's load of the whole file (the reference).
 *
 * Invariant: wherever libpci loads the whole file, every vendor and device
 * name is the same; where it refuses the whole (a parse error, a duplicate
 * entry) there is nothing to compare, only that neither side crashes,
 * leaks or hangs. The ids asked for are those the text itself lists
 * (pci_ids_ref.c) and a few fixed ones.
 *
 * The input goes to a file (libpci reads pci.ids from a path), on
 * /dev/shm when there is one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "pci_ids_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char path[64];
        uint32_t ids[72];
        char why[512];
        size_t n;
        FILE *f;

        if (!path[0])
                snprintf(path, sizeof(path), "%s/fuzz_pci_ids.%d",
                         access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
        f = fopen(path, "wb");
        if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
                fprintf(stderr, "fuzz_pci_ids: cannot write %s\n", path);
                __builtin_trap();
        }
        n = ids_from_text((const char *)data, size, ids, 64);
        ids[n++] = 0x00010001u;
        ids[n++] = 0x8086100eu;
        ids[n++] = 0xffffffffu;
        if (ids_names_compare(path, ids, n, NULL, why, sizeof(why)) == IDS_DIFFER) {
                fprintf(stderr, "fuzz_pci_ids: %s\n", why);
                __builtin_trap();
        }
        unlink(path);
        return 0;
}
