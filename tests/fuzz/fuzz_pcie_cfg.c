// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_pcie_cfg.c - libFuzzer target: a function's configuration space
 * (any bytes, any length up to 4096) through pcie_cfg_decode() and the
 * capability walks pcie_cfg_find_cap() / pcie_cfg_find_ext_cap() for the
 * ids in the input's first bytes and the ones the decoder itself uses.
 *
 * Invariants: every offset returned lies within the bytes given (a
 * standard capability's header below 256, an extended one at or above
 * 0x100, whole); the decoder's capability offsets too; a walk terminates
 * (loops are cut: libFuzzer's timeout catches a hang).
 */
#include <stddef.h>
#include <stdint.h>

#include "pcie_cfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint8_t std_ids[] = {0x01, 0x05, 0x10, 0x11};
        static const uint16_t ext_ids[] = {0x0001, 0x000b, 0x0023, 0x0025};
        struct pcie_func_info fi;
        int off;

        if (pcie_cfg_decode(data, size, &fi) == 0) {
                if (fi.has_pcie && ((size_t)fi.pcie_cap + 2 > size || fi.pcie_cap < 0x34))
                        __builtin_trap();
                if (fi.aer_cap && (fi.aer_cap < 0x100 || (size_t)fi.aer_cap + 4 > size))
                        __builtin_trap();
        }
        for (size_t i = 0; i < sizeof(std_ids) + 1; i++) {
                uint8_t id = i < sizeof(std_ids) ? std_ids[i] : (size ? data[0] : 0);

                off = pcie_cfg_find_cap(data, size, id);
                if (off >= 0 && ((size_t)off + 2 > size || off >= 256 || data[off] != id))
                        __builtin_trap();
        }
        for (size_t i = 0; i < sizeof(ext_ids) / sizeof(*ext_ids) + 1; i++) {
                uint16_t id = i < sizeof(ext_ids) / sizeof(*ext_ids)
                                  ? ext_ids[i]
                                  : (uint16_t)(size > 1 ? data[0] | data[1] << 8 : 0);

                off = pcie_cfg_find_ext_cap(data, size, id);
                if (off >= 0 && (off < 0x100 || (size_t)off + 4 > size ||
                                 (uint16_t)(data[off] | data[off + 1] << 8) != id))
                        __builtin_trap();
        }
        return 0;
}
