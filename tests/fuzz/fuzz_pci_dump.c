// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_pci_dump.c - libFuzzer target, differential: an `lspci -xxxx` dump
 * (any bytes) read by pci_source's own dump reader and by libpci's dump
 * method, the reference it replaced (issue 17: libpci's per-byte sscanf()
 * was most of a large scan).
 *
 * Invariants: both give the same functions in the same order, with the
 * same bytes at the same steps (64, 256, 4096), or both fail with the same
 * message; ours hands over at most 4096 bytes in those steps and ends.
 * Inputs with an offset of 2^31 or more are only read by ours: libpci
 * stores such an offset as a negative index and writes before its buffer
 * (ours refuses it, see pci_source.c), so there is nothing to compare.
 *
 * The input goes to a file (the reader's interface is a path), on
 * /dev/shm when there is one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pci_dump_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An offset libpci would store as a negative index: 8 hex digits and ':'
 * at a line's start, the first digit 8 or more. */
static bool has_negative_offset(const uint8_t *data, size_t size)
{
        for (size_t i = 0; i + 9 <= size; i++) {
                size_t k;

                if (i && data[i - 1] != '\n')
                        continue;
                for (k = 0; k < 9 && i + k < size &&
                            strchr("0123456789abcdefABCDEF", data[i + k]) && data[i + k];
                     k++)
                        ;
                if (k == 8 && data[i + 8] == ':' && strchr("89abcdefABCDEF", data[i]))
                        return true;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char path[64];
        struct dump_digest ours, theirs;
        FILE *f;

        if (!path[0])
                snprintf(path, sizeof(path), "%s/fuzz_pci_dump.%d",
                         access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
        f = fopen(path, "wb");
        if (!f)
                __builtin_trap();
        if (size && fwrite(data, 1, size, f) != size)
                __builtin_trap();
        fclose(f);
        if (dump_digest_ours(path, &ours) || ours.odd_length)
                __builtin_trap();
        if (!has_negative_offset(data, size)) {
                dump_digest_libpci(path, &theirs);
                if (!dump_digest_same(&ours, &theirs)) {
                        fprintf(stderr,
                                "fuzz_pci_dump: ours %d, %zu functions, %016llx, \"%s\"; "
                                "libpci %d, %zu, %016llx, \"%s\"\n",
                                ours.ret, ours.calls, (unsigned long long)ours.hash, ours.error,
                                theirs.ret, theirs.calls, (unsigned long long)theirs.hash,
                                theirs.error);
                        __builtin_trap();
                }
        }
        unlink(path);
        return 0;
}
