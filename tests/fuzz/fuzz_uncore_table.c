// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_uncore_table.c - libFuzzer target: the Intel PMON discovery decoders
 * (uncore_table.h) on any bytes: the DVSEC walk and the BAR of a 4 KiB
 * configuration space image, a whole table image, and the CPU identity
 * text. A table is never trusted: nothing may be read past the image, and
 * what is reported must add up; checked here and turned into a crash.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uncore_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct uncore_dvsec dvsec;
        struct uncore_table table;
        unsigned int others = 0, family, model;
        uint64_t bar;
        char text[512];
        size_t n;
        int ret;

        /* As configuration space: the image is exactly what libpci read. */
        ret = uncore_find_pmon_dvsec(data, size, &dvsec, &others);
        if (ret == 0 && ((size_t)dvsec.offset + 12 > size || dvsec.bir > 7))
                __builtin_trap();
        if (ret == 0)
                uncore_bar_address(data, size, dvsec.bir, &bar);
        for (unsigned int bir = 0; bir < 8; bir++)
                uncore_bar_address(data, size, bir, &bar);

        /* As a table image (a copy of its own size, so ASan sees any
         * read past it). */
        {
                uint8_t *image = malloc(size ? size : 1);

                if (!image)
                        return 0;
                memcpy(image, data, size);
                ret = uncore_table_parse(image, size, &table);
                if (ret == 0) {
                        if (table.unit_count && !table.units)
                                __builtin_trap();
                        if (table.unit_count + table.invalid + table.skipped + table.truncated >
                            1024)
                                __builtin_trap(); /* max_units is 10 bits */
                        uncore_table_clear(&table);
                } else if (ret != -EBADMSG && ret != -ENOMEM) {
                        __builtin_trap();
                }
                free(image);
        }

        /* As modalias or /proc/cpuinfo text. */
        n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
        memcpy(text, data, n);
        text[n] = '\0';
        ret = uncore_cpu_id_parse(text, &family, &model);
        if (ret != 0 && (family || model))
                __builtin_trap();
        return 0;
}
