// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_iio_stackmap.c - libFuzzer target: the IIO stack map decoder on any
 * configuration bytes (the CPU bus registers come from hardware, or from an
 * lspci dump a user names).
 *
 * The first byte picks the layout and how many bytes are "readable"; the
 * rest is one MSM function's configuration space, whose decoded CPU buses
 * are added for two packages (the second in the same domain, so clashes are
 * exercised). What is added must be coherent: every stack's box is the
 * layout's for its CPU bus, its bus is the register's, no two stacks share
 * a root bus; checked here and turned into a crash so libFuzzer keeps the
 * input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "iio_stackmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct iio_stackmap map;
        static uint8_t cfg[4096];
        static const size_t lens[] = {0, 64, 256, 0x1cf, 0x1d0, 4096};
        struct iio_cpubus cb;
        unsigned int package;
        char why[160];
        size_t len;
        int chop, err;

        if (size < 1)
                return 0;
        memset(cfg, 0, sizeof(cfg));
        memcpy(cfg, data + 1, size - 1 < sizeof(cfg) ? size - 1 : sizeof(cfg));
        len = lens[(data[0] >> 3) % (sizeof(lens) / sizeof(lens[0]))];
        memset(&map, 0, sizeof(map));
        map.layout = (enum iio_layout)(data[0] % 5);
        (void)iio_chop_decode(cfg, len, &chop);
        (void)iio_package_decode(cfg, len, &package);
        err = iio_cpubus_decode(cfg, len, &cb);
        if (err)
                return 0;
        if (iio_cpubus_first(&cb) < 0)
                __builtin_trap();
        for (unsigned int p = 0; p < 2; p++)
                (void)iio_stackmap_add(&map, p, 0, &cb, why, sizeof(why));
        for (size_t i = 0; i < map.count; i++) {
                const struct iio_stack_root *r = &map.stacks[i];

                if (iio_layout_box(map.layout, r->cpubus) != (int)r->box ||
                    r->bus != cb.bus[r->cpubus] || !(cb.valid >> r->cpubus & 1))
                        __builtin_trap();
                for (size_t k = 0; k < i; k++)
                        if (map.stacks[k].bus == r->bus)
                                __builtin_trap();
        }
        return 0;
}
