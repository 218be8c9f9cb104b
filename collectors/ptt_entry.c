// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptt_entry.c - pure decoding of HiSilicon PTT trace entries (see
 * ptt_entry.h for the two layouts).
 */
#include "ptt_entry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "text_buf.h"

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t ptt_format_entry_size(enum ptt_format fmt)
{
        return fmt == PTT_FORMAT_8DW ? PTT_ENTRY_8DW_BYTES : PTT_ENTRY_4DW_BYTES;
}

const char *ptt_format_name(enum ptt_format fmt)
{
        switch (fmt) {
        case PTT_FORMAT_4DW:
                return "4DW";
        case PTT_FORMAT_8DW:
                return "8DW";
        default:
                return "unknown";
        }
}

static bool is_8dw_marker(uint32_t v)
{
        return (v & PTT_8DW_MARKER) == PTT_8DW_MARKER;
}

enum ptt_format ptt_format_detect(const uint8_t *buf, size_t len)
{
        if (!buf || len < 4)
                return PTT_FORMAT_4DW;
        return is_8dw_marker(get32(buf)) ? PTT_FORMAT_8DW : PTT_FORMAT_4DW;
}

/*
 * 4DW DW0 keeps only some DW0 fields and moves them around; put them back
 * where the PCIe header has them so the TLP layer sees an ordinary header.
 * Fmt[2] is 0: a header is never a prefix.
 */
static uint32_t rebuild_dw0(const struct ptt_entry *e)
{
        return (uint32_t)e->fmt2 << 29 | (uint32_t)e->type << 24 | (uint32_t)e->t9 << 23 |
               (uint32_t)e->t8 << 19 | (uint32_t)e->th << 16 | e->length;
}

static void decode_4dw(struct ptt_entry *e)
{
        uint32_t dw0 = e->raw[0];

        e->fmt2 = (uint8_t)(dw0 >> 30);
        e->type = (uint8_t)((dw0 >> 25) & 0x1f);
        e->t9 = (dw0 >> 24) & 1;
        e->t8 = (dw0 >> 23) & 1;
        e->th = (dw0 >> 22) & 1;
        e->so = (dw0 >> 21) & 1;
        e->length = (uint16_t)((dw0 >> 11) & 0x3ff);
        e->time = dw0 & 0x7ff;
        e->time_bits = PTT_4DW_TIME_BITS;
        e->hdr[0] = rebuild_dw0(e);
        e->hdr[1] = e->raw[1];
        e->hdr[2] = e->raw[2];
        e->hdr[3] = e->raw[3];
}

static void decode_8dw(struct ptt_entry *e)
{
        e->prefix = e->raw[1];
        for (unsigned int i = 0; i < 4; i++)
                e->hdr[i] = e->raw[2 + i];
        e->time = e->raw[7];
        e->time_bits = PTT_8DW_TIME_BITS;
}

int ptt_entry_decode(const uint8_t *buf, size_t len, enum ptt_format fmt, struct ptt_entry *out)
{
        size_t size = ptt_format_entry_size(fmt);
        size_t ndw = size / 4;
        uint32_t any = 0;

        memset(out, 0, sizeof(*out));
        out->format = fmt;
        if (fmt != PTT_FORMAT_4DW && fmt != PTT_FORMAT_8DW)
                return -EINVAL;
        if (!buf || len < size)
                return -ENODATA;
        for (size_t i = 0; i < ndw; i++) {
                out->raw[i] = get32(buf + 4 * i);
                any |= out->raw[i];
        }
        if (!any)
                return -ENOMSG;
        if (fmt == PTT_FORMAT_8DW) {
                if (!is_8dw_marker(out->raw[0]))
                        return -EBADMSG;
                decode_8dw(out);
        } else {
                decode_4dw(out);
        }
        return (int)size;
}

int ptt_entry_tlp(const struct ptt_entry *e, struct tlp *out)
{
        uint32_t dw[5];
        size_t n = 0;
        int ret;

        /* 8DW DW1 is 0 when the TLP had no prefix; a real prefix has Fmt 100
         * and is never 0. */
        if (e->format == PTT_FORMAT_8DW && e->prefix)
                dw[n++] = e->prefix;
        for (unsigned int i = 0; i < 4; i++)
                dw[n++] = e->hdr[i];
        ret = tlp_decode(dw, n, out);
        /* The entry has one place for a prefix and one for the header: a
         * prefix DW1 that is not a prefix, or a header DW0 that is one
         * (which tlp_decode would read as a second prefix), is malformed. */
        if (ret > 0 && out->nprefix != (n == 5 ? 1u : 0u)) {
                tlp_decode(e->hdr, 4, out);
                out->kind = TLP_UNKNOWN;
                ret = -EBADMSG;
        }
        if (e->format == PTT_FORMAT_4DW)
                out->dw0_partial = true;
        return ret;
}

static const char *const labels_4dw[4] = {"Fields", "Header DW1", "Header DW2", "Header DW3"};
static const char *const labels_8dw[8] = {"Marker",     "Prefix",     "Header DW0", "Header DW1",
                                          "Header DW2", "Header DW3", "Reserved",   "Time"};

const char *ptt_dword_label(enum ptt_format fmt, unsigned int index)
{
        if (fmt == PTT_FORMAT_4DW)
                return index < 4 ? labels_4dw[index] : NULL;
        if (fmt == PTT_FORMAT_8DW)
                return index < 8 ? labels_8dw[index] : NULL;
        return NULL;
}

bool ptt_dword_shown_by_perf(enum ptt_format fmt, unsigned int index)
{
        if (fmt == PTT_FORMAT_4DW)
                return index < 4;
        if (fmt == PTT_FORMAT_8DW)
                return index < 8 && index != 0 && index != 6;
        return false;
}

/* "Format %x Type %x T9 %x T8 %x TH %x SO %x Length %x Time %x" */
static int label_4dw_fields(const struct ptt_entry *e, char *buf, size_t len)
{
        struct text_buf o = {buf, buf ? len : 0, 0};

        text_put(&o, "Format ", 7);
        text_hex(&o, e->fmt2, 0);
        text_put(&o, " Type ", 6);
        text_hex(&o, e->type, 0);
        text_put(&o, " T9 ", 4);
        text_hex(&o, e->t9, 0);
        text_put(&o, " T8 ", 4);
        text_hex(&o, e->t8, 0);
        text_put(&o, " TH ", 4);
        text_hex(&o, e->th, 0);
        text_put(&o, " SO ", 4);
        text_hex(&o, e->so, 0);
        text_put(&o, " Length ", 8);
        text_hex(&o, e->length, 0);
        text_put(&o, " Time ", 6);
        text_hex(&o, e->time, 0);
        return text_len(&o);
}

int ptt_dword_perf_label(const struct ptt_entry *e, unsigned int index, char *buf, size_t len)
{
        const char *label = ptt_dword_label(e->format, index);

        if (buf && len)
                buf[0] = '\0';
        if (!label)
                return -EINVAL;
        if (e->format == PTT_FORMAT_4DW && index == 0)
                return label_4dw_fields(e, buf, len);
        return snprintf(buf, buf ? len : 0, "%s", label);
}

int ptt_entry_desc(const struct ptt_entry *e, char *buf, size_t len)
{
        struct tlp t;
        char tlp_text[256];
        size_t len_or_0 = buf ? len : 0;

        if (buf && len)
                buf[0] = '\0';
        if (ptt_entry_tlp(e, &t) > 0) {
                /* "%s time %#x%s %s" */
                struct text_buf o = {buf, len_or_0, 0};
                const char *name = ptt_format_name(e->format);

                tlp_desc(&t, tlp_text, sizeof(tlp_text));
                text_put(&o, name, strlen(name));
                text_put(&o, " time ", 6);
                text_hex_alt(&o, e->time);
                if (e->so)
                        text_put(&o, " so", 3);
                text_put(&o, " ", 1);
                text_put(&o, tlp_text, strlen(tlp_text));
                return text_len(&o);
        }
        if (e->format == PTT_FORMAT_8DW)
                return snprintf(buf, len_or_0, "8DW bad: %08x %08x %08x %08x %08x %08x %08x %08x",
                                e->raw[0], e->raw[1], e->raw[2], e->raw[3], e->raw[4], e->raw[5],
                                e->raw[6], e->raw[7]);
        return snprintf(buf, len_or_0, "%s bad: %08x %08x %08x %08x", ptt_format_name(e->format),
                        e->raw[0], e->raw[1], e->raw[2], e->raw[3]);
}

const char *ptt_strerror(int err)
{
        switch (err) {
        case -ENODATA:
                return "need more data";
        case -ENOMSG:
                return "empty (all-zero) entry";
        case -EBADMSG:
                return "malformed entry or TLP header";
        case -EINVAL:
                return "invalid argument";
        case 0:
                return "success";
        default:
                return err > 0 ? "success" : "unknown error";
        }
}
