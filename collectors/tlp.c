// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tlp.c - pure decoding of one PCIe TLP header (see tlp.h for the layout).
 */
#include "tlp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text_buf.h"

static uint32_t bits(uint32_t v, unsigned int hi, unsigned int lo)
{
        return (v >> lo) & ((hi - lo == 31) ? 0xffffffffu : ((1u << (hi - lo + 1)) - 1));
}

static const char *const kind_names[TLP_KIND_COUNT] = {
    [TLP_UNKNOWN] = "unknown", [TLP_MRD] = "MRd",           [TLP_MRDLK] = "MRdLk",
    [TLP_MWR] = "MWr",         [TLP_IORD] = "IORd",         [TLP_IOWR] = "IOWr",
    [TLP_CFGRD0] = "CfgRd0",   [TLP_CFGWR0] = "CfgWr0",     [TLP_CFGRD1] = "CfgRd1",
    [TLP_CFGWR1] = "CfgWr1",   [TLP_MSG] = "Msg",           [TLP_MSGD] = "MsgD",
    [TLP_CPL] = "Cpl",         [TLP_CPLD] = "CplD",         [TLP_CPLLK] = "CplLk",
    [TLP_CPLDLK] = "CplDLk",   [TLP_FETCHADD] = "FetchAdd", [TLP_SWAP] = "Swap",
    [TLP_CAS] = "CAS",         [TLP_DMWR] = "DMWr",
};

const char *tlp_kind_name(enum tlp_kind kind)
{
        if ((unsigned int)kind >= TLP_KIND_COUNT)
                return kind_names[TLP_UNKNOWN];
        return kind_names[kind];
}

enum tlp_kind tlp_kind_from_name(const char *name)
{
        if (!name)
                return TLP_UNKNOWN;
        for (unsigned int k = TLP_UNKNOWN + 1; k < TLP_KIND_COUNT; k++)
                if (strcmp(name, kind_names[k]) == 0)
                        return (enum tlp_kind)k;
        return TLP_UNKNOWN;
}

const uint8_t tlp_class_table[TLP_KIND_COUNT] = {
    [TLP_MRD] = TLP_CLASS_NON_POSTED,      [TLP_MRDLK] = TLP_CLASS_NON_POSTED,
    [TLP_IORD] = TLP_CLASS_NON_POSTED,     [TLP_IOWR] = TLP_CLASS_NON_POSTED,
    [TLP_CFGRD0] = TLP_CLASS_NON_POSTED,   [TLP_CFGWR0] = TLP_CLASS_NON_POSTED,
    [TLP_CFGRD1] = TLP_CLASS_NON_POSTED,   [TLP_CFGWR1] = TLP_CLASS_NON_POSTED,
    [TLP_FETCHADD] = TLP_CLASS_NON_POSTED, [TLP_SWAP] = TLP_CLASS_NON_POSTED,
    [TLP_CAS] = TLP_CLASS_NON_POSTED,      [TLP_DMWR] = TLP_CLASS_NON_POSTED,
    [TLP_CPL] = TLP_CLASS_COMPLETION,      [TLP_CPLD] = TLP_CLASS_COMPLETION,
    [TLP_CPLLK] = TLP_CLASS_COMPLETION,    [TLP_CPLDLK] = TLP_CLASS_COMPLETION,
    /* MWr, Msg, MsgD (and TLP_UNKNOWN): posted */
};

enum tlp_class tlp_kind_class(enum tlp_kind kind)
{
        if ((unsigned int)kind >= TLP_KIND_COUNT)
                return TLP_CLASS_POSTED;
        return (enum tlp_class)tlp_class_table[kind];
}

const char *tlp_class_name(enum tlp_class cls)
{
        switch (cls) {
        case TLP_CLASS_NON_POSTED:
                return "non_posted";
        case TLP_CLASS_COMPLETION:
                return "completion";
        default:
                return "posted";
        }
}

const char *tlp_cpl_status_name(unsigned int status)
{
        switch (status) {
        case TLP_CPL_SC:
                return "SC";
        case TLP_CPL_UR:
                return "UR";
        case TLP_CPL_CRS:
                return "CRS";
        case TLP_CPL_CA:
                return "CA";
        default:
                return "reserved";
        }
}

const char *tlp_msg_routing_name(unsigned int routing)
{
        static const char *const names[8] = {"to_rc", "by_addr", "by_id",    "broadcast",
                                             "local", "gather",  "reserved", "reserved"};
        return names[routing & 7];
}

/*
 * The Fmt/Type table (PCIe r6.0 table 2-3), indexed by Fmt << 5 | Type. Fmt
 * bit 0 is the header size (0: 3DW, 1: 4DW) and bit 1 says data follows;
 * every pair not listed is reserved (TLP_UNKNOWN). Messages are 4DW only,
 * I/O, configuration and completions 3DW only. TCfgRd/TCfgWr (Type 1 1011)
 * are gone; r6.0 reuses Fmt 01x of that Type for DMWr.
 */
const uint8_t tlp_kind_table[256] = {
    [0x00] = TLP_MRD,      [0x20] = TLP_MRD,      [0x40] = TLP_MWR,    [0x60] = TLP_MWR,
    [0x01] = TLP_MRDLK,    [0x21] = TLP_MRDLK,    [0x02] = TLP_IORD,   [0x42] = TLP_IOWR,
    [0x04] = TLP_CFGRD0,   [0x44] = TLP_CFGWR0,   [0x05] = TLP_CFGRD1, [0x45] = TLP_CFGWR1,
    [0x30] = TLP_MSG,      [0x31] = TLP_MSG,      [0x32] = TLP_MSG,    [0x33] = TLP_MSG,
    [0x34] = TLP_MSG,      [0x35] = TLP_MSG,      [0x36] = TLP_MSG,    [0x37] = TLP_MSG,
    [0x70] = TLP_MSGD,     [0x71] = TLP_MSGD,     [0x72] = TLP_MSGD,   [0x73] = TLP_MSGD,
    [0x74] = TLP_MSGD,     [0x75] = TLP_MSGD,     [0x76] = TLP_MSGD,   [0x77] = TLP_MSGD,
    [0x0a] = TLP_CPL,      [0x4a] = TLP_CPLD,     [0x0b] = TLP_CPLLK,  [0x4b] = TLP_CPLDLK,
    [0x4c] = TLP_FETCHADD, [0x6c] = TLP_FETCHADD, [0x4d] = TLP_SWAP,   [0x6d] = TLP_SWAP,
    [0x4e] = TLP_CAS,      [0x6e] = TLP_CAS,      [0x5b] = TLP_DMWR,   [0x7b] = TLP_DMWR,
};

static enum tlp_kind kind_of(unsigned int fmt, unsigned int type)
{
        return (enum tlp_kind)tlp_kind_table[(fmt & 7) << 5 | (type & 0x1f)];
}

static void decode_dw0(uint32_t v, struct tlp *t)
{
        t->fmt = (uint8_t)bits(v, 31, 29);
        t->type = (uint8_t)bits(v, 28, 24);
        t->tc = (uint8_t)bits(v, 22, 20);
        t->attr = (uint8_t)(bits(v, 18, 18) << 2 | bits(v, 13, 12));
        t->ln = bits(v, 17, 17);
        t->th = bits(v, 16, 16);
        t->td = bits(v, 15, 15);
        t->ep = bits(v, 14, 14);
        t->at = (uint8_t)bits(v, 11, 10);
        t->length_raw = (uint16_t)bits(v, 9, 0);
        t->length_dw = t->length_raw ? t->length_raw : 1024;
        t->has_data = t->fmt & 2;
        t->hdr_dw = (t->fmt & 1) ? 4 : 3;
}

static uint16_t tag10(uint32_t dw0, uint32_t tag8)
{
        return (uint16_t)(bits(dw0, 23, 23) << 9 | bits(dw0, 19, 19) << 8 | (tag8 & 0xff));
}

/* Address of memory-like requests (memory, I/O, atomics, DMWr). */
static void decode_addr(struct tlp *t)
{
        uint32_t low = t->hdr_dw == 4 ? t->dw[3] : t->dw[2];

        t->has_addr = true;
        t->addr = (uint64_t)(low & ~3u);
        if (t->hdr_dw == 4)
                t->addr |= (uint64_t)t->dw[2] << 32;
        t->ph = t->th ? (uint8_t)(low & 3) : 0;
}

static void decode_request_dw1(struct tlp *t)
{
        t->requester_id = (uint16_t)bits(t->dw[1], 31, 16);
        t->tag = tag10(t->dw[0], bits(t->dw[1], 15, 8));
        t->last_be = (uint8_t)bits(t->dw[1], 7, 4);
        t->first_be = (uint8_t)bits(t->dw[1], 3, 0);
}

static void decode_body(struct tlp *t)
{
        switch (t->kind) {
        case TLP_CPL:
        case TLP_CPLD:
        case TLP_CPLLK:
        case TLP_CPLDLK:
                t->completer_id = (uint16_t)bits(t->dw[1], 31, 16);
                t->cpl_status = (uint8_t)bits(t->dw[1], 15, 13);
                t->bcm = bits(t->dw[1], 12, 12);
                t->byte_count = (uint16_t)bits(t->dw[1], 11, 0);
                if (!t->byte_count)
                        t->byte_count = 4096;
                t->requester_id = (uint16_t)bits(t->dw[2], 31, 16);
                t->tag = tag10(t->dw[0], bits(t->dw[2], 15, 8));
                t->lower_addr = (uint8_t)bits(t->dw[2], 6, 0);
                break;
        case TLP_MSG:
        case TLP_MSGD:
                t->requester_id = (uint16_t)bits(t->dw[1], 31, 16);
                t->tag = tag10(t->dw[0], bits(t->dw[1], 15, 8));
                t->msg_code = (uint8_t)bits(t->dw[1], 7, 0);
                t->msg_routing = (uint8_t)(t->type & 7);
                if (t->msg_routing == TLP_ROUTE_BY_ADDR) {
                        decode_addr(t);
                        t->ph = 0;
                } else if (t->msg_routing == TLP_ROUTE_BY_ID) {
                        t->target_id = (uint16_t)bits(t->dw[2], 31, 16);
                }
                break;
        case TLP_CFGRD0:
        case TLP_CFGWR0:
        case TLP_CFGRD1:
        case TLP_CFGWR1:
                decode_request_dw1(t);
                t->target_id = (uint16_t)bits(t->dw[2], 31, 16);
                t->cfg_reg = (uint16_t)(bits(t->dw[2], 11, 2) << 2);
                break;
        default: /* memory, I/O, atomics, DMWr */
                decode_request_dw1(t);
                decode_addr(t);
                break;
        }
}

/* PCIe r5.0 figure 6-20: PMR 23, ER 22, PASID [19:0]. */
static void decode_prefix(struct tlp *t, uint32_t p)
{
        bool end_end = bits(p, 28, 28);

        t->prefix[t->nprefix++] = p;
        if (end_end && bits(p, 27, 24) == TLP_PREFIX_E_PASID) {
                t->has_pasid = true;
                t->pasid = bits(p, 19, 0);
                t->pasid_priv = bits(p, 23, 23);
                t->pasid_exec = bits(p, 22, 22);
        }
}

int tlp_decode(const uint32_t *dw, size_t ndw, struct tlp *out)
{
        size_t i = 0;

        memset(out, 0, sizeof(*out));
        if (!dw)
                return ndw ? -EINVAL : -ENODATA;
        /* Prefixes first; bounded by TLP_MAX_PREFIXES + 1 iterations. */
        while (i < ndw && bits(dw[i], 31, 29) == TLP_FMT_PREFIX) {
                if (out->nprefix == TLP_MAX_PREFIXES) {
                        out->dw[0] = dw[i];
                        out->fmt = TLP_FMT_PREFIX;
                        return -EBADMSG;
                }
                decode_prefix(out, dw[i]);
                i++;
        }
        if (i >= ndw)
                return -ENODATA;
        decode_dw0(dw[i], out);
        out->dw[0] = dw[i];
        for (size_t k = 1; k < 4 && i + k < ndw; k++)
                out->dw[k] = dw[i + k];
        if (out->fmt > TLP_FMT_4DW_DATA)
                return -EBADMSG;
        if (ndw - i < out->hdr_dw)
                return -ENODATA;
        if (out->hdr_dw == 3)
                out->dw[3] = 0;
        out->kind = kind_of(out->fmt, out->type);
        if (out->kind == TLP_UNKNOWN)
                return -EBADMSG;
        out->cls = tlp_kind_class(out->kind);
        decode_body(out);
        return (int)(i + out->hdr_dw);
}

uint32_t tlp_payload_bytes(const struct tlp *t)
{
        return t->has_data ? (uint32_t)t->length_dw * 4 : 0;
}

bool tlp_cpl_is_last(const struct tlp *t)
{
        uint32_t carried;

        if (t->cls != TLP_CLASS_COMPLETION)
                return false;
        if (!t->has_data || t->cpl_status != TLP_CPL_SC)
                return true;
        /* The first DW of a completion starts at Lower Address mod 4, so the
         * bytes it carries are the payload less that offset. */
        carried = (uint32_t)t->length_dw * 4 - (t->lower_addr & 3u);
        return t->byte_count <= carried;
}

static void desc_bdf(struct text_buf *sb, const char *name, uint16_t id)
{
        /* " %s %02x:%02x.%u" */
        text_put(sb, " ", 1);
        text_str(sb, name);
        text_put(sb, " ", 1);
        text_hex(sb, id >> 8, 2);
        text_put(sb, ":", 1);
        text_hex(sb, (id >> 3) & 0x1f, 2);
        text_put(sb, ".", 1);
        text_dec(sb, id & 7u);
}

static void desc_dw0(struct text_buf *sb, const struct tlp *t)
{
        /* "%s %uDW len %u" */
        text_str(sb, tlp_kind_name(t->kind));
        text_put(sb, " ", 1);
        text_dec(sb, t->hdr_dw);
        text_put(sb, "DW len ", 7);
        text_dec(sb, t->length_dw);
        if (!t->dw0_partial)
                text_printf(sb, " tc %u attr %u at %u%s%s", t->tc, t->attr, t->at,
                            t->td ? " td" : "", t->ep ? " ep" : "");
        if (t->th)
                text_printf(sb, " th ph %u", t->ph);
}

int tlp_desc(const struct tlp *t, char *buf, size_t len)
{
        struct text_buf sb = {buf, len, 0};

        if (buf && len)
                buf[0] = '\0';
        if (!buf)
                sb.len = 0;
        for (unsigned int i = 0; i < t->nprefix && i < TLP_MAX_PREFIXES; i++)
                text_printf(&sb, "prefix %08x ", t->prefix[i]);
        if (t->has_pasid)
                text_printf(&sb, "pasid %05x%s%s ", t->pasid, t->pasid_priv ? " priv" : "",
                            t->pasid_exec ? " exec" : "");
        if (t->kind == TLP_UNKNOWN || (unsigned int)t->kind >= TLP_KIND_COUNT) {
                text_printf(&sb, "unknown fmt %u type %02x dw %08x %08x %08x %08x", t->fmt, t->type,
                            t->dw[0], t->dw[1], t->dw[2], t->dw[3]);
                return (int)sb.pos;
        }
        desc_dw0(&sb, t);
        switch (t->cls) {
        case TLP_CLASS_COMPLETION:
                desc_bdf(&sb, "cpl", t->completer_id);
                /* " %s%s bc %u", then " tag %03x la %02x" */
                text_put(&sb, " ", 1);
                text_str(&sb, tlp_cpl_status_name(t->cpl_status));
                if (t->bcm)
                        text_put(&sb, " bcm", 4);
                text_put(&sb, " bc ", 4);
                text_dec(&sb, t->byte_count);
                desc_bdf(&sb, "req", t->requester_id);
                text_put(&sb, " tag ", 5);
                text_hex(&sb, t->tag, 3);
                text_put(&sb, " la ", 4);
                text_hex(&sb, t->lower_addr, 2);
                break;
        default:
                desc_bdf(&sb, "req", t->requester_id);
                text_put(&sb, " tag ", 5);
                text_hex(&sb, t->tag, 3);
                if (t->kind == TLP_MSG || t->kind == TLP_MSGD) {
                        text_printf(&sb, " code %02x route %s", t->msg_code,
                                    tlp_msg_routing_name(t->msg_routing));
                        if (t->msg_routing == TLP_ROUTE_BY_ID)
                                desc_bdf(&sb, "to", t->target_id);
                } else {
                        text_put(&sb, " be ", 4);
                        text_hex(&sb, t->last_be, 1);
                        text_put(&sb, "/", 1);
                        text_hex(&sb, t->first_be, 1);
                }
                if (t->kind >= TLP_CFGRD0 && t->kind <= TLP_CFGWR1) {
                        desc_bdf(&sb, "to", t->target_id);
                        text_printf(&sb, " reg %03x", t->cfg_reg);
                }
                if (t->has_addr) {
                        /* " addr %#llx": no 0x before a 0 */
                        text_put(&sb, t->addr ? " addr 0x" : " addr ", t->addr ? 8 : 6);
                        text_hex(&sb, t->addr, 1);
                }
                break;
        }
        return (int)sb.pos;
}
