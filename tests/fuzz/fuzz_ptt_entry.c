// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_ptt_entry.c - libFuzzer target: a whole AUX buffer through format
 * detection, ptt_entry_decode(), ptt_entry_tlp() and every printer, the way
 * `pciescope trace dump` walks it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptt_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The summariser's fast path (tlp_decode_brief on DW0-DW2, prefix checked
 * apart) must agree with ptt_entry_tlp() + tlp_decode(). */
static void check_brief(const struct ptt_entry *e)
{
        struct tlp t;
        struct tlp_brief b;
        int full = ptt_entry_tlp(e, &t);
        bool bad_prefix = e->format == PTT_FORMAT_8DW && e->prefix && e->prefix >> 29 != 4;
        int brief = tlp_decode_brief(e->hdr[0], e->hdr[1], e->hdr[2], &b);

        if ((full > 0) != (!bad_prefix && brief == 0))
                __builtin_trap();
        if (full > 0 && (b.kind != t.kind || b.cls != t.cls || b.requester_id != t.requester_id ||
                         b.tag != t.tag || b.payload_bytes != tlp_payload_bytes(&t) ||
                         b.last != tlp_cpl_is_last(&t)))
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        enum ptt_format fmt = ptt_format_detect(data, size);
        size_t step = ptt_format_entry_size(fmt), off = 0, rounds = 0;
        char text[512];

        /* The walk must advance by one entry every time, whatever it says. */
        while (off < size) {
                struct ptt_entry e;
                struct tlp t;
                int ret = ptt_entry_decode(data + off, size - off, fmt, &e);

                if (++rounds > size / 16 + 1)
                        __builtin_trap();
                if (ret == -ENODATA) {
                        if (size - off >= step)
                                __builtin_trap();
                        break;
                }
                if (ret > 0 && (size_t)ret != step)
                        __builtin_trap();
                if (ret < 0 && ret != -ENOMSG && ret != -EBADMSG)
                        __builtin_trap();
                if (ret > 0)
                        check_brief(&e);
                (void)ptt_entry_tlp(&e, &t);
                for (unsigned int i = 0; i < 8; i++) {
                        if (ptt_dword_perf_label(&e, i, text, sizeof(text)) >= (int)sizeof(text))
                                __builtin_trap();
                        (void)ptt_dword_label(fmt, i);
                        (void)ptt_dword_shown_by_perf(fmt, i);
                }
                if (ptt_entry_desc(&e, text, sizeof(text)) < 0 || strlen(text) >= sizeof(text))
                        __builtin_trap();
                (void)ptt_entry_desc(&e, text, 7);
                (void)ptt_strerror(ret);
                off += step;
        }
        return 0;
}
