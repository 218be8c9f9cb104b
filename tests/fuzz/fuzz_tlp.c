// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_tlp.c - libFuzzer target: tlp_decode() and tlp_desc() on any dwords.
 *
 * The input is read as little-endian dwords (the way PTT stores them). The
 * decoder must never read past @ndw, and what it reports must be coherent:
 * checked here and turned into a crash so libFuzzer keeps the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t dw[8];
        size_t ndw = size / 4 < 8 ? size / 4 : 8;
        struct tlp t;
        char text[64];
        int ret, n;

        for (size_t i = 0; i < ndw; i++)
                dw[i] = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
                        (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
        ret = tlp_decode(ndw ? dw : NULL, ndw, &t);
        if (ret > 0 &&
            ((size_t)ret > ndw || t.kind == TLP_UNKNOWN || t.kind >= TLP_KIND_COUNT ||
             (t.hdr_dw != 3 && t.hdr_dw != 4) || t.length_dw < 1 || t.length_dw > 1024 ||
             t.nprefix > TLP_MAX_PREFIXES || (size_t)ret != t.nprefix + (size_t)t.hdr_dw))
                __builtin_trap();
        if (ret <= 0 && t.kind != TLP_UNKNOWN)
                __builtin_trap();
        if (ret > 0 && t.cls == TLP_CLASS_COMPLETION && (t.byte_count < 1 || t.byte_count > 4096))
                __builtin_trap();
        /* The description is cut, never overrun, and reports its length. */
        n = tlp_desc(&t, text, sizeof(text));
        if (n < 0 || strlen(text) >= sizeof(text) ||
            (n < (int)sizeof(text) && strlen(text) != (size_t)n))
                __builtin_trap();
        (void)tlp_cpl_is_last(&t);
        (void)tlp_payload_bytes(&t);
        (void)tlp_kind_name(t.kind);
        return 0;
}
