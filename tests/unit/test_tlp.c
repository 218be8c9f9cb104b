// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tlp.c - tlp_decode() over every TLP kind, prefixes, 10-bit tags and
 * the reserved encodings.
 *
 * Every header is built here from its fields (SYNTHETIC: no captured data);
 * the expected values are written out by hand from the PCIe field layout,
 * not computed with the decoder's own shifts. The output is poisoned with
 * 0xff before each decode, every field is compared (a field a row does not
 * name must be 0), and a failure names the row and each field that differs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "tlp.h"

/* Header DW0 from its fields: Fmt, Type, Length plus optional flag bits. */
#define DW0(fmt, type, len) ((uint32_t)(fmt) << 29 | (uint32_t)(type) << 24 | (uint32_t)(len))
#define T9                  (1u << 23)
#define T8                  (1u << 19)
#define TC(x)               ((uint32_t)(x) << 20)
#define ATTR2               (1u << 18)
#define LN                  (1u << 17)
#define TH                  (1u << 16)
#define TD                  (1u << 15)
#define EP                  (1u << 14)
#define ATTR10(x)           ((uint32_t)(x) << 12)
#define AT(x)               ((uint32_t)(x) << 10)
/* Request DW1 and completion DW1/DW2. */
#define REQ(rid, tag, lbe, fbe)                                                                    \
        ((uint32_t)(rid) << 16 | (uint32_t)(tag) << 8 | (uint32_t)(lbe) << 4 | (uint32_t)(fbe))
#define CPL1(cid, st, bcm, bc)                                                                     \
        ((uint32_t)(cid) << 16 | (uint32_t)(st) << 13 | (uint32_t)(bcm) << 12 | (uint32_t)(bc))
#define CPL2(rid, tag, la) ((uint32_t)(rid) << 16 | (uint32_t)(tag) << 8 | (uint32_t)(la))
#define CFG(bus, dev, fn, ext, reg)                                                                \
        ((uint32_t)(bus) << 24 | (uint32_t)(dev) << 19 | (uint32_t)(fn) << 16 |                    \
         (uint32_t)(ext) << 8 | (uint32_t)(reg) << 2)
#define MSG1(rid, tag, code) ((uint32_t)(rid) << 16 | (uint32_t)(tag) << 8 | (uint32_t)(code))

struct row {
        const char *name;
        uint32_t dw[6];
        size_t ndw;
        int ret;
        struct tlp want; /* dw[] is checked against the input separately */
};

static const struct row rows[] = {
    {"MRd 3DW",
     {DW0(0, 0x00, 4), REQ(0x0100, 0x1e, 0xf, 0xf), 0xfee01000},
     3,
     3,
     {.kind = TLP_MRD,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 0,
      .type = 0,
      .hdr_dw = 3,
      .length_dw = 4,
      .length_raw = 4,
      .requester_id = 0x0100,
      .tag = 0x1e,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0xfee01000}},
    {"MRd 4DW len 0 = 1024, 10-bit tag",
     {DW0(1, 0x00, 0) | T9 | T8, REQ(0x0300, 0x05, 0xf, 0xf), 0x00000004, 0x02810040},
     4,
     4,
     {.kind = TLP_MRD,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 1,
      .hdr_dw = 4,
      .length_dw = 1024,
      .length_raw = 0,
      .requester_id = 0x0300,
      .tag = 0x305,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0x402810040ull}},
    {"MRd T8 only",
     {DW0(0, 0x00, 1) | T8, REQ(0x0001, 0x80, 0, 0xf), 0x1000},
     3,
     3,
     {.kind = TLP_MRD,
      .cls = TLP_CLASS_NON_POSTED,
      .hdr_dw = 3,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0001,
      .tag = 0x180,
      .first_be = 0xf,
      .has_addr = true,
      .addr = 0x1000}},
    {"MRdLk 3DW",
     {DW0(0, 0x01, 1), REQ(0x0008, 0x01, 0, 0x3), 0x2000},
     3,
     3,
     {.kind = TLP_MRDLK,
      .cls = TLP_CLASS_NON_POSTED,
      .type = 1,
      .hdr_dw = 3,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0008,
      .tag = 1,
      .first_be = 0x3,
      .has_addr = true,
      .addr = 0x2000}},
    {"MWr 4DW (kernel doc example)",
     {0x60000001, 0x01001e0f, 0x00000004, 0x02810040},
     4,
     4,
     {.kind = TLP_MWR,
      .fmt = 3,
      .hdr_dw = 4,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0100,
      .tag = 0x1e,
      .first_be = 0xf,
      .last_be = 0,
      .has_addr = true,
      .addr = 0x402810040ull}},
    {"MWr 3DW with TH/PH, TC, attrs, TD, EP, AT, LN",
     {DW0(2, 0x00, 32) | TH | TC(5) | ATTR2 | ATTR10(2) | TD | EP | AT(1) | LN,
      REQ(0x1234, 0x42, 0xf, 0xf), 0x80000002},
     3,
     3,
     {.kind = TLP_MWR,
      .fmt = 2,
      .hdr_dw = 3,
      .has_data = true,
      .tc = 5,
      .attr = 6,
      .at = 1,
      .th = true,
      .td = true,
      .ep = true,
      .ln = true,
      .length_dw = 32,
      .length_raw = 32,
      .requester_id = 0x1234,
      .tag = 0x42,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0x80000000,
      .ph = 2}},
    {"IORd",
     {DW0(0, 0x02, 1), REQ(0x0010, 0x07, 0, 0x1), 0x00000cf8},
     3,
     3,
     {.kind = TLP_IORD,
      .cls = TLP_CLASS_NON_POSTED,
      .type = 2,
      .hdr_dw = 3,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0010,
      .tag = 7,
      .first_be = 1,
      .has_addr = true,
      .addr = 0xcf8}},
    {"IOWr",
     {DW0(2, 0x02, 1), REQ(0x0010, 0x08, 0, 0xc), 0x00000cfc},
     3,
     3,
     {.kind = TLP_IOWR,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 2,
      .type = 2,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0010,
      .tag = 8,
      .first_be = 0xc,
      .has_addr = true,
      .addr = 0xcfc}},
    {"CfgRd0",
     {DW0(0, 0x04, 1), REQ(0x0000, 0x10, 0, 0xf), CFG(1, 2, 3, 1, 0x10)},
     3,
     3,
     {.kind = TLP_CFGRD0,
      .cls = TLP_CLASS_NON_POSTED,
      .type = 4,
      .hdr_dw = 3,
      .length_dw = 1,
      .length_raw = 1,
      .tag = 0x10,
      .first_be = 0xf,
      .target_id = 0x0113,
      .cfg_reg = 0x140}},
    {"CfgWr0",
     {DW0(2, 0x04, 1), REQ(0x0000, 0x11, 0, 0xf), CFG(0, 0, 0, 0, 1)},
     3,
     3,
     {.kind = TLP_CFGWR0,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 2,
      .type = 4,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .tag = 0x11,
      .first_be = 0xf,
      .target_id = 0,
      .cfg_reg = 4}},
    {"CfgRd1",
     {DW0(0, 0x05, 1), REQ(0x0000, 0x12, 0, 0xf), CFG(0x80, 0x1f, 7, 0xf, 0x3f)},
     3,
     3,
     {.kind = TLP_CFGRD1,
      .cls = TLP_CLASS_NON_POSTED,
      .type = 5,
      .hdr_dw = 3,
      .length_dw = 1,
      .length_raw = 1,
      .tag = 0x12,
      .first_be = 0xf,
      .target_id = 0x80ff,
      .cfg_reg = 0xffc}},
    {"CfgWr1",
     {DW0(2, 0x05, 1), REQ(0x0000, 0x13, 0, 0x1), CFG(2, 0, 1, 0, 0x01)},
     3,
     3,
     {.kind = TLP_CFGWR1,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 2,
      .type = 5,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .tag = 0x13,
      .first_be = 1,
      .target_id = 0x0201,
      .cfg_reg = 4}},
    {"Msg to RC (ERR_COR)",
     {DW0(1, 0x10, 0), MSG1(0x0100, 0, 0x30), 0, 0},
     4,
     4,
     {.kind = TLP_MSG,
      .fmt = 1,
      .type = 0x10,
      .hdr_dw = 4,
      .length_dw = 1024,
      .length_raw = 0,
      .requester_id = 0x0100,
      .msg_code = 0x30,
      .msg_routing = TLP_ROUTE_TO_RC}},
    {"Msg by ID",
     {DW0(1, 0x12, 0), MSG1(0x0000, 3, 0x7f), 0x02000000, 0},
     4,
     4,
     {.kind = TLP_MSG,
      .fmt = 1,
      .type = 0x12,
      .hdr_dw = 4,
      .length_dw = 1024,
      .tag = 3,
      .msg_code = 0x7f,
      .msg_routing = TLP_ROUTE_BY_ID,
      .target_id = 0x0200}},
    {"Msg broadcast (PME_Turn_Off)",
     {DW0(1, 0x13, 0), MSG1(0x0000, 0, 0x19), 0, 0},
     4,
     4,
     {.kind = TLP_MSG,
      .fmt = 1,
      .type = 0x13,
      .hdr_dw = 4,
      .length_dw = 1024,
      .msg_code = 0x19,
      .msg_routing = TLP_ROUTE_BROADCAST}},
    {"Msg local",
     {DW0(1, 0x14, 0), MSG1(0x0200, 0, 0x14), 0, 0},
     4,
     4,
     {.kind = TLP_MSG,
      .fmt = 1,
      .type = 0x14,
      .hdr_dw = 4,
      .length_dw = 1024,
      .requester_id = 0x0200,
      .msg_code = 0x14,
      .msg_routing = TLP_ROUTE_LOCAL}},
    {"Msg gather (PME_TO_Ack)",
     {DW0(1, 0x15, 0), MSG1(0x0300, 0, 0x1b), 0, 0},
     4,
     4,
     {.kind = TLP_MSG,
      .fmt = 1,
      .type = 0x15,
      .hdr_dw = 4,
      .length_dw = 1024,
      .requester_id = 0x0300,
      .msg_code = 0x1b,
      .msg_routing = TLP_ROUTE_GATHER}},
    {"MsgD by address",
     {DW0(3, 0x11, 2), MSG1(0x0400, 9, 0x7e), 0x00000001, 0x00002000},
     4,
     4,
     {.kind = TLP_MSGD,
      .fmt = 3,
      .type = 0x11,
      .hdr_dw = 4,
      .has_data = true,
      .length_dw = 2,
      .length_raw = 2,
      .requester_id = 0x0400,
      .tag = 9,
      .msg_code = 0x7e,
      .msg_routing = TLP_ROUTE_BY_ADDR,
      .has_addr = true,
      .addr = 0x100002000ull}},
    {"Cpl UR",
     {DW0(0, 0x0a, 0), CPL1(0x0000, 1, 0, 4), CPL2(0x0100, 0x1e, 0)},
     3,
     3,
     {.kind = TLP_CPL,
      .cls = TLP_CLASS_COMPLETION,
      .type = 0x0a,
      .hdr_dw = 3,
      .length_dw = 1024,
      .requester_id = 0x0100,
      .tag = 0x1e,
      .completer_id = 0,
      .cpl_status = TLP_CPL_UR,
      .byte_count = 4}},
    {"CplD split, T9, lower address",
     {DW0(2, 0x0a, 16) | T9, CPL1(0x0010, 0, 0, 0x100), CPL2(0x0300, 0xff, 0x40)},
     3,
     3,
     {.kind = TLP_CPLD,
      .cls = TLP_CLASS_COMPLETION,
      .fmt = 2,
      .type = 0x0a,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 16,
      .length_raw = 16,
      .requester_id = 0x0300,
      .tag = 0x2ff,
      .completer_id = 0x0010,
      .byte_count = 0x100,
      .lower_addr = 0x40}},
    {"CplD byte count 0 = 4096, BCM, CA",
     {DW0(2, 0x0a, 8), CPL1(0xffff, 4, 1, 0), CPL2(0xfffe, 0x01, 0x7f)},
     3,
     3,
     {.kind = TLP_CPLD,
      .cls = TLP_CLASS_COMPLETION,
      .fmt = 2,
      .type = 0x0a,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 8,
      .length_raw = 8,
      .requester_id = 0xfffe,
      .tag = 1,
      .completer_id = 0xffff,
      .cpl_status = TLP_CPL_CA,
      .bcm = true,
      .byte_count = 4096,
      .lower_addr = 0x7f}},
    {"CplLk",
     {DW0(0, 0x0b, 0), CPL1(0x0001, 2, 0, 8), CPL2(0x0002, 3, 0)},
     3,
     3,
     {.kind = TLP_CPLLK,
      .cls = TLP_CLASS_COMPLETION,
      .type = 0x0b,
      .hdr_dw = 3,
      .length_dw = 1024,
      .requester_id = 2,
      .tag = 3,
      .completer_id = 1,
      .cpl_status = TLP_CPL_CRS,
      .byte_count = 8}},
    {"CplDLk",
     {DW0(2, 0x0b, 1), CPL1(0x0001, 0, 0, 4), CPL2(0x0002, 4, 4)},
     3,
     3,
     {.kind = TLP_CPLDLK,
      .cls = TLP_CLASS_COMPLETION,
      .fmt = 2,
      .type = 0x0b,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 2,
      .tag = 4,
      .completer_id = 1,
      .byte_count = 4,
      .lower_addr = 4}},
    {"FetchAdd 3DW",
     {DW0(2, 0x0c, 1), REQ(0x0500, 0x20, 0, 0xf), 0x00001000},
     3,
     3,
     {.kind = TLP_FETCHADD,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 2,
      .type = 0x0c,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0500,
      .tag = 0x20,
      .first_be = 0xf,
      .has_addr = true,
      .addr = 0x1000}},
    {"Swap 4DW",
     {DW0(3, 0x0d, 2), REQ(0x0500, 0x21, 0xf, 0xf), 0x00000002, 0x00000008},
     4,
     4,
     {.kind = TLP_SWAP,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 3,
      .type = 0x0d,
      .hdr_dw = 4,
      .has_data = true,
      .length_dw = 2,
      .length_raw = 2,
      .requester_id = 0x0500,
      .tag = 0x21,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0x200000008ull}},
    {"CAS 3DW",
     {DW0(2, 0x0e, 4), REQ(0x0500, 0x22, 0xf, 0xf), 0x00000010},
     3,
     3,
     {.kind = TLP_CAS,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 2,
      .type = 0x0e,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 4,
      .length_raw = 4,
      .requester_id = 0x0500,
      .tag = 0x22,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0x10}},
    {"DMWr 4DW",
     {DW0(3, 0x1b, 16), REQ(0x0600, 0x30, 0xf, 0xf), 0x1, 0x0},
     4,
     4,
     {.kind = TLP_DMWR,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 3,
      .type = 0x1b,
      .hdr_dw = 4,
      .has_data = true,
      .length_dw = 16,
      .length_raw = 16,
      .requester_id = 0x0600,
      .tag = 0x30,
      .first_be = 0xf,
      .last_be = 0xf,
      .has_addr = true,
      .addr = 0x100000000ull}},
    {"PASID prefix + MRd 4DW",
     {0x91812345, DW0(1, 0x00, 1), REQ(0x0700, 1, 0, 0xf), 0x00000001, 0x00000040},
     5,
     5,
     {.kind = TLP_MRD,
      .cls = TLP_CLASS_NON_POSTED,
      .fmt = 1,
      .hdr_dw = 4,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0700,
      .tag = 1,
      .first_be = 0xf,
      .has_addr = true,
      .addr = 0x100000040ull,
      .nprefix = 1,
      .prefix = {0x91812345},
      .has_pasid = true,
      .pasid = 0x12345,
      .pasid_priv = true}},
    {"local vendor prefix + PASID exec + MWr 3DW",
     {0x8e00abcd, 0x91400001, DW0(2, 0x00, 1), REQ(0x0700, 2, 0, 0xf), 0x00000080},
     5,
     5,
     {.kind = TLP_MWR,
      .fmt = 2,
      .hdr_dw = 3,
      .has_data = true,
      .length_dw = 1,
      .length_raw = 1,
      .requester_id = 0x0700,
      .tag = 2,
      .first_be = 0xf,
      .has_addr = true,
      .addr = 0x80,
      .nprefix = 2,
      .prefix = {0x8e00abcd, 0x91400001},
      .has_pasid = true,
      .pasid = 1,
      .pasid_exec = true}},
};

/* Rejected input: the error, and the raw fields still reported. */
struct bad_row {
        const char *name;
        uint32_t dw[6];
        size_t ndw;
        int ret;
        uint8_t fmt, type;
};

static const struct bad_row bad_rows[] = {
    {"Fmt 101 reserved", {DW0(5, 0x00, 1), 0, 0, 0}, 4, -EBADMSG, 5, 0},
    {"Fmt 111 reserved", {0xffffffff, 0, 0, 0}, 4, -EBADMSG, 7, 0x1f},
    {"4DW IORd", {DW0(1, 0x02, 1), 0, 0, 0}, 4, -EBADMSG, 1, 2},
    {"4DW IOWr", {DW0(3, 0x02, 1), 0, 0, 0}, 4, -EBADMSG, 3, 2},
    {"4DW CfgRd0", {DW0(1, 0x04, 1), 0, 0, 0}, 4, -EBADMSG, 1, 4},
    {"4DW CfgWr1", {DW0(3, 0x05, 1), 0, 0, 0}, 4, -EBADMSG, 3, 5},
    {"3DW Msg", {DW0(0, 0x10, 0), 0, 0, 0}, 4, -EBADMSG, 0, 0x10},
    {"3DW MsgD", {DW0(2, 0x15, 1), 0, 0, 0}, 4, -EBADMSG, 2, 0x15},
    {"4DW Cpl", {DW0(1, 0x0a, 0), 0, 0, 0}, 4, -EBADMSG, 1, 0x0a},
    {"4DW CplDLk", {DW0(3, 0x0b, 1), 0, 0, 0}, 4, -EBADMSG, 3, 0x0b},
    {"MRdLk with data", {DW0(2, 0x01, 1), 0, 0, 0}, 4, -EBADMSG, 2, 1},
    {"FetchAdd without data", {DW0(0, 0x0c, 1), 0, 0, 0}, 4, -EBADMSG, 0, 0x0c},
    {"Swap without data", {DW0(1, 0x0d, 1), 0, 0, 0}, 4, -EBADMSG, 1, 0x0d},
    {"CAS without data", {DW0(0, 0x0e, 1), 0, 0, 0}, 4, -EBADMSG, 0, 0x0e},
    {"TCfgRd (deprecated, reserved)", {DW0(0, 0x1b, 1), 0, 0, 0}, 4, -EBADMSG, 0, 0x1b},
    {"Type 00011 reserved", {DW0(0, 0x03, 1), 0, 0, 0}, 4, -EBADMSG, 0, 3},
    {"Type 11111 reserved", {DW0(3, 0x1f, 1), 0, 0, 0}, 4, -EBADMSG, 3, 0x1f},
    {"5 prefixes",
     {0x91000000, 0x91000000, 0x91000000, 0x91000000, 0x91000000, 0},
     6,
     -EBADMSG,
     4,
     0},
    {"4DW header cut at 3", {DW0(1, 0x00, 1), 0, 0}, 3, -ENODATA, 1, 0},
    {"3DW header cut at 2", {DW0(0, 0x00, 1), 0}, 2, -ENODATA, 0, 0},
    {"prefix only", {0x91000001}, 1, -ENODATA, 0, 0},
    {"nothing", {0}, 0, -ENODATA, 0, 0},
};

#define CHECK(field)                                                                               \
        do {                                                                                       \
                if (got->field != want->field) {                                                   \
                        print_message("# %s: " #field " %#llx, expected %#llx\n", name,            \
                                      (unsigned long long)got->field,                              \
                                      (unsigned long long)want->field);                            \
                        bad++;                                                                     \
                }                                                                                  \
        } while (0)

static int compare(const char *name, const struct tlp *got, const struct tlp *want)
{
        int bad = 0;

        CHECK(kind);
        CHECK(cls);
        CHECK(fmt);
        CHECK(type);
        CHECK(hdr_dw);
        CHECK(has_data);
        CHECK(tc);
        CHECK(attr);
        CHECK(at);
        CHECK(th);
        CHECK(td);
        CHECK(ep);
        CHECK(ln);
        CHECK(dw0_partial);
        CHECK(length_dw);
        CHECK(length_raw);
        CHECK(requester_id);
        CHECK(tag);
        CHECK(first_be);
        CHECK(last_be);
        CHECK(has_addr);
        CHECK(addr);
        CHECK(ph);
        CHECK(target_id);
        CHECK(cfg_reg);
        CHECK(msg_code);
        CHECK(msg_routing);
        CHECK(completer_id);
        CHECK(cpl_status);
        CHECK(bcm);
        CHECK(byte_count);
        CHECK(lower_addr);
        CHECK(nprefix);
        CHECK(has_pasid);
        CHECK(pasid);
        CHECK(pasid_exec);
        CHECK(pasid_priv);
        for (unsigned int i = 0; i < TLP_MAX_PREFIXES; i++)
                CHECK(prefix[i]);
        if (bad) {
                char text[256];

                tlp_desc(got, text, sizeof(text));
                print_message("# %s: decoded as: %s\n", name, text);
        }
        return bad;
}

static void test_decode_table(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
                const struct row *row = &rows[r];
                struct tlp got;
                int ret;

                memset(&got, 0xff, sizeof(got));
                ret = tlp_decode(row->dw, row->ndw, &got);
                if (ret != row->ret) {
                        print_message("# %s: returned %d, expected %d\n", row->name, ret, row->ret);
                        bad++;
                        continue;
                }
                bad += compare(row->name, &got, &row->want);
                /* The header dwords come back as given (no prefixes; 0 past 3DW). */
                for (unsigned int i = 0; i < 4; i++) {
                        uint32_t in = i < row->want.hdr_dw ? row->dw[row->want.nprefix + i] : 0;

                        if (got.dw[i] != in) {
                                print_message("# %s: dw[%u] %#x, expected %#x\n", row->name, i,
                                              got.dw[i], in);
                                bad++;
                        }
                }
        }
        assert_int_equal(bad, 0);
}

static void test_decode_rejects(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t r = 0; r < sizeof(bad_rows) / sizeof(bad_rows[0]); r++) {
                const struct bad_row *row = &bad_rows[r];
                struct tlp got;
                char text[200];
                int ret;

                memset(&got, 0xff, sizeof(got));
                ret = tlp_decode(row->dw, row->ndw, &got);
                if (ret != row->ret || got.kind != TLP_UNKNOWN || got.fmt != row->fmt ||
                    got.type != row->type) {
                        print_message(
                            "# %s: ret %d kind %d fmt %u type %#x, expected %d 0 %u %#x\n",
                            row->name, ret, got.kind, got.fmt, got.type, row->ret, row->fmt,
                            row->type);
                        bad++;
                        continue;
                }
                /* A rejected header still renders, as raw dwords. */
                tlp_desc(&got, text, sizeof(text));
                if (!strstr(text, "unknown")) {
                        print_message("# %s: desc '%s' lacks 'unknown'\n", row->name, text);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

/* The summariser's fast path agrees with the full decoder on every row,
 * good or bad, and on every Fmt/Type pair with a few field patterns. */
static int brief_mismatch(const uint32_t *hdr, size_t ndw)
{
        struct tlp full;
        struct tlp_brief b;
        uint32_t d[3] = {hdr[0], ndw > 1 ? hdr[1] : 0, ndw > 2 ? hdr[2] : 0};
        int ret_full = tlp_decode(hdr, ndw, &full);
        int ret_brief = tlp_decode_brief(d[0], d[1], d[2], &b);

        if (ret_full == -ENODATA)
                return 0; /* the brief path always has three dwords */
        if ((ret_full > 0) != (ret_brief == 0))
                return 1;
        if (ret_full <= 0)
                return b.kind != TLP_UNKNOWN;
        return b.kind != full.kind || b.cls != full.cls || b.requester_id != full.requester_id ||
               b.tag != full.tag || b.payload_bytes != tlp_payload_bytes(&full) ||
               b.last != tlp_cpl_is_last(&full);
}

static void test_brief_matches_full(void **state)
{
        static const uint32_t patterns[][3] = {
            {0, 0, 0},
            {0x00a8813f, 0xffffffff, 0xffffffff},
            {0x008803ff, 0x12345fff, 0xabcd1243},
            {0x00000001, 0x00002004, 0x01001e03},
        };
        int bad = 0;

        (void)state;
        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
                if (rows[r].want.nprefix == 0 && brief_mismatch(rows[r].dw, rows[r].ndw)) {
                        print_message("# brief differs: %s\n", rows[r].name);
                        bad++;
                }
        for (size_t r = 0; r < sizeof(bad_rows) / sizeof(bad_rows[0]); r++)
                if (bad_rows[r].fmt != TLP_FMT_PREFIX && bad_rows[r].ndw >= 3 &&
                    brief_mismatch(bad_rows[r].dw, bad_rows[r].ndw)) {
                        print_message("# brief differs: %s\n", bad_rows[r].name);
                        bad++;
                }
        for (uint32_t ft = 0; ft < 256; ft++)
                for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
                        uint32_t hdr[4] = {ft << 24 | patterns[p][0], patterns[p][1],
                                           patterns[p][2], 0};

                        if (ft >> 5 == TLP_FMT_PREFIX)
                                continue; /* prefixes: the brief path takes none */
                        if (brief_mismatch(hdr, 4)) {
                                print_message("# brief differs: fmt/type %#x pattern %zu\n", ft, p);
                                bad++;
                        }
                }
        assert_int_equal(bad, 0);
}

/* Every defined kind is reachable from exactly the Fmt/Type pairs the spec
 * lists: count the pairs per kind over all 256. */
static void test_fmt_type_census(void **state)
{
        static const unsigned int want[TLP_KIND_COUNT] = {
            [TLP_MRD] = 2,    [TLP_MRDLK] = 2,  [TLP_MWR] = 2,    [TLP_IORD] = 1,
            [TLP_IOWR] = 1,   [TLP_CFGRD0] = 1, [TLP_CFGWR0] = 1, [TLP_CFGRD1] = 1,
            [TLP_CFGWR1] = 1, [TLP_MSG] = 8,    [TLP_MSGD] = 8,   [TLP_CPL] = 1,
            [TLP_CPLD] = 1,   [TLP_CPLLK] = 1,  [TLP_CPLDLK] = 1, [TLP_FETCHADD] = 2,
            [TLP_SWAP] = 2,   [TLP_CAS] = 2,    [TLP_DMWR] = 2,
        };
        unsigned int got[TLP_KIND_COUNT] = {0};

        (void)state;
        for (uint32_t ft = 0; ft < 256; ft++) {
                uint32_t hdr[4] = {ft << 24 | 1, 0, 0, 0};
                struct tlp t;

                /* Fmt 100 is a prefix: what follows it is another header. */
                if (ft >> 5 != TLP_FMT_PREFIX && tlp_decode(hdr, 4, &t) > 0)
                        got[t.kind]++;
        }
        for (int k = TLP_UNKNOWN + 1; k < TLP_KIND_COUNT; k++)
                if (got[k] != want[k])
                        fail_msg("%s: %u Fmt/Type pairs, expected %u", tlp_kind_name(k), got[k],
                                 want[k]);
}

static void test_decode_null(void **state)
{
        struct tlp got;

        (void)state;
        assert_int_equal(tlp_decode(NULL, 0, &got), -ENODATA);
        assert_int_equal(tlp_decode(NULL, 4, &got), -EINVAL);
}

static void test_kind_names(void **state)
{
        int bad = 0;

        (void)state;
        for (int k = TLP_UNKNOWN + 1; k < TLP_KIND_COUNT; k++) {
                const char *name = tlp_kind_name((enum tlp_kind)k);

                if (!name || strcmp(name, "unknown") == 0 || (int)tlp_kind_from_name(name) != k) {
                        print_message("# kind %d: name '%s' does not round-trip\n", k,
                                      name ? name : "(null)");
                        bad++;
                }
                for (int j = TLP_UNKNOWN + 1; j < k; j++)
                        if (strcmp(name, tlp_kind_name((enum tlp_kind)j)) == 0)
                                bad++;
        }
        assert_int_equal(bad, 0);
        assert_string_equal(tlp_kind_name(TLP_UNKNOWN), "unknown");
        assert_string_equal(tlp_kind_name((enum tlp_kind)99), "unknown");
        assert_int_equal(tlp_kind_from_name("nope"), TLP_UNKNOWN);
        assert_int_equal(tlp_kind_from_name(NULL), TLP_UNKNOWN);
        assert_string_equal(tlp_kind_name(TLP_CPLDLK), "CplDLk");
        assert_string_equal(tlp_cpl_status_name(4), "CA");
        assert_string_equal(tlp_cpl_status_name(3), "reserved");
        assert_string_equal(tlp_msg_routing_name(2), "by_id");
        assert_string_equal(tlp_class_name(TLP_CLASS_NON_POSTED), "non_posted");
}

static void test_classes(void **state)
{
        static const struct {
                enum tlp_kind kind;
                enum tlp_class cls;
        } want[] = {
            {TLP_MRD, TLP_CLASS_NON_POSTED},    {TLP_MRDLK, TLP_CLASS_NON_POSTED},
            {TLP_MWR, TLP_CLASS_POSTED},        {TLP_IORD, TLP_CLASS_NON_POSTED},
            {TLP_IOWR, TLP_CLASS_NON_POSTED},   {TLP_CFGRD0, TLP_CLASS_NON_POSTED},
            {TLP_CFGWR0, TLP_CLASS_NON_POSTED}, {TLP_CFGRD1, TLP_CLASS_NON_POSTED},
            {TLP_CFGWR1, TLP_CLASS_NON_POSTED}, {TLP_MSG, TLP_CLASS_POSTED},
            {TLP_MSGD, TLP_CLASS_POSTED},       {TLP_CPL, TLP_CLASS_COMPLETION},
            {TLP_CPLD, TLP_CLASS_COMPLETION},   {TLP_CPLLK, TLP_CLASS_COMPLETION},
            {TLP_CPLDLK, TLP_CLASS_COMPLETION}, {TLP_FETCHADD, TLP_CLASS_NON_POSTED},
            {TLP_SWAP, TLP_CLASS_NON_POSTED},   {TLP_CAS, TLP_CLASS_NON_POSTED},
            {TLP_DMWR, TLP_CLASS_NON_POSTED},
        };

        (void)state;
        assert_int_equal(sizeof(want) / sizeof(want[0]), TLP_KIND_COUNT - 1);
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                assert_int_equal(tlp_kind_class(want[i].kind), want[i].cls);
}

/* Decode a completion from its fields for the is-last rows. */
static struct tlp cpl(unsigned int fmt, unsigned int len, unsigned int status, unsigned int bc,
                      unsigned int la)
{
        uint32_t dw[3] = {DW0(fmt, 0x0a, len), CPL1(0x0001, status, 0, bc), CPL2(0x0100, 1, la)};
        struct tlp t;

        assert_int_equal(tlp_decode(dw, 3, &t), 3);
        return t;
}

static void test_cpl_is_last(void **state)
{
        static const struct {
                unsigned int fmt, len, status, bc, la;
                bool last;
        } rows_last[] = {
            {2, 16, 0, 256, 0, false},  /* 64 bytes of 256 remaining: more to come */
            {2, 16, 0, 64, 0, true},    /* the last 64 */
            {2, 16, 0, 65, 0, false},   /* one byte more than it carries */
            {2, 16, 0, 62, 0x42, true}, /* starts 2 bytes into the first DW: 62 carried */
            {2, 16, 0, 63, 0x42, false}, {2, 1, 0, 4, 0, true},
            {2, 1024, 0, 0, 0, true}, /* bc 0 = 4096, 1024 DW carry 4096 */
            {0, 0, 0, 4, 0, true},    /* no data: e.g. a write's completion */
            {0, 0, 1, 128, 0, true},  /* UR ends the request */
            {2, 4, 4, 512, 0, true},  /* CA with data still ends it */
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows_last) / sizeof(rows_last[0]); i++) {
                struct tlp t = cpl(rows_last[i].fmt, rows_last[i].len & 0x3ff, rows_last[i].status,
                                   rows_last[i].bc, rows_last[i].la);

                if (tlp_cpl_is_last(&t) != rows_last[i].last)
                        fail_msg("row %zu: is_last %d", i, !rows_last[i].last);
        }
        /* A request is never a "last completion". */
        {
                uint32_t dw[3] = {DW0(0, 0, 1), REQ(1, 1, 0, 0xf), 0};
                struct tlp t;

                assert_int_equal(tlp_decode(dw, 3, &t), 3);
                assert_false(tlp_cpl_is_last(&t));
        }
}

static void test_payload_bytes(void **state)
{
        uint32_t mwr[3] = {DW0(2, 0, 0), REQ(1, 1, 0xf, 0xf), 0};
        uint32_t mrd[3] = {DW0(0, 0, 16), REQ(1, 1, 0xf, 0xf), 0};
        struct tlp t;

        (void)state;
        assert_int_equal(tlp_decode(mwr, 3, &t), 3);
        assert_int_equal(tlp_payload_bytes(&t), 4096);
        assert_int_equal(tlp_decode(mrd, 3, &t), 3);
        assert_int_equal(tlp_payload_bytes(&t), 0); /* a read carries no data */
}

static void test_desc(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
                struct tlp t;
                char text[256], small[8];
                int n, m;

                assert_int_equal(tlp_decode(rows[r].dw, rows[r].ndw, &t), rows[r].ret);
                n = tlp_desc(&t, text, sizeof(text));
                if (n <= 0 || (size_t)n >= sizeof(text) || !strstr(text, tlp_kind_name(t.kind))) {
                        print_message("# %s: desc '%s'\n", rows[r].name, text);
                        bad++;
                }
                /* Truncation: same length reported, buffer still a string. */
                memset(small, 'x', sizeof(small));
                m = tlp_desc(&t, small, sizeof(small));
                if (m != n || small[sizeof(small) - 1] != '\0' ||
                    strncmp(small, text, sizeof(small) - 1) != 0) {
                        print_message("# %s: truncated desc '%s' (%d vs %d)\n", rows[r].name, small,
                                      m, n);
                        bad++;
                }
                if (tlp_desc(&t, NULL, 0) != n)
                        bad++;
        }
        assert_int_equal(bad, 0);
}

static void test_desc_fields(void **state)
{
        uint32_t cpl_dw[3] = {DW0(2, 0x0a, 16) | T9, CPL1(0x0010, 0, 0, 0x100),
                              CPL2(0x0300, 0xff, 0x40)};
        uint32_t cfg_dw[3] = {DW0(0, 0x04, 1), REQ(0x0000, 0x10, 0, 0xf), CFG(1, 2, 3, 1, 0x10)};
        struct tlp t;
        char text[256];

        (void)state;
        assert_int_equal(tlp_decode(cpl_dw, 3, &t), 3);
        tlp_desc(&t, text, sizeof(text));
        assert_non_null(strstr(text, "CplD"));
        assert_non_null(strstr(text, "cpl 00:02.0"));
        assert_non_null(strstr(text, "req 03:00.0"));
        assert_non_null(strstr(text, "tag 2ff"));
        assert_non_null(strstr(text, "bc 256"));
        assert_int_equal(tlp_decode(cfg_dw, 3, &t), 3);
        tlp_desc(&t, text, sizeof(text));
        assert_non_null(strstr(text, "to 01:02.3"));
        assert_non_null(strstr(text, "reg 140"));
}

/* ---- tlp_desc() against the printf version it replaced ----
 * tlp_desc() formats by hand now (a trace dump describes millions of TLPs);
 * the reference below is the snprintf() code it had before, kept verbatim.
 * Random headers of every Fmt/Type, with and without prefixes, and every
 * buffer length from 0 up: the same text, truncation and return value. */
/* Appends to a caller buffer; once it is full, only the length grows. */
struct ref_sbuf {
        char *buf;
        size_t len;
        size_t pos;
};

static void ref_sb_printf(struct ref_sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ref_sb_printf(struct ref_sbuf *sb, const char *fmt, ...)
{
        va_list ap;
        size_t room = sb->pos < sb->len ? sb->len - sb->pos : 0;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(room ? sb->buf + sb->pos : NULL, room, fmt, ap);
        va_end(ap);
        if (n > 0)
                sb->pos += (size_t)n;
}

static void ref_desc_bdf(struct ref_sbuf *sb, const char *name, uint16_t id)
{
        ref_sb_printf(sb, " %s %02x:%02x.%u", name, id >> 8, (id >> 3) & 0x1f, id & 7u);
}

static void ref_desc_dw0(struct ref_sbuf *sb, const struct tlp *t)
{
        ref_sb_printf(sb, "%s %uDW len %u", tlp_kind_name(t->kind), t->hdr_dw, t->length_dw);
        if (!t->dw0_partial)
                ref_sb_printf(sb, " tc %u attr %u at %u%s%s", t->tc, t->attr, t->at,
                              t->td ? " td" : "", t->ep ? " ep" : "");
        if (t->th)
                ref_sb_printf(sb, " th ph %u", t->ph);
}

static int ref_tlp_desc(const struct tlp *t, char *buf, size_t len)
{
        struct ref_sbuf sb = {buf, len, 0};

        if (buf && len)
                buf[0] = '\0';
        if (!buf)
                sb.len = 0;
        for (unsigned int i = 0; i < t->nprefix && i < TLP_MAX_PREFIXES; i++)
                ref_sb_printf(&sb, "prefix %08x ", t->prefix[i]);
        if (t->has_pasid)
                ref_sb_printf(&sb, "pasid %05x%s%s ", t->pasid, t->pasid_priv ? " priv" : "",
                              t->pasid_exec ? " exec" : "");
        if (t->kind == TLP_UNKNOWN || (unsigned int)t->kind >= TLP_KIND_COUNT) {
                ref_sb_printf(&sb, "unknown fmt %u type %02x dw %08x %08x %08x %08x", t->fmt,
                              t->type, t->dw[0], t->dw[1], t->dw[2], t->dw[3]);
                return (int)sb.pos;
        }
        ref_desc_dw0(&sb, t);
        switch (t->cls) {
        case TLP_CLASS_COMPLETION:
                ref_desc_bdf(&sb, "cpl", t->completer_id);
                ref_sb_printf(&sb, " %s%s bc %u", tlp_cpl_status_name(t->cpl_status),
                              t->bcm ? " bcm" : "", t->byte_count);
                ref_desc_bdf(&sb, "req", t->requester_id);
                ref_sb_printf(&sb, " tag %03x la %02x", t->tag, t->lower_addr);
                break;
        default:
                ref_desc_bdf(&sb, "req", t->requester_id);
                ref_sb_printf(&sb, " tag %03x", t->tag);
                if (t->kind == TLP_MSG || t->kind == TLP_MSGD) {
                        ref_sb_printf(&sb, " code %02x route %s", t->msg_code,
                                      tlp_msg_routing_name(t->msg_routing));
                        if (t->msg_routing == TLP_ROUTE_BY_ID)
                                ref_desc_bdf(&sb, "to", t->target_id);
                } else {
                        ref_sb_printf(&sb, " be %x/%x", t->last_be, t->first_be);
                }
                if (t->kind >= TLP_CFGRD0 && t->kind <= TLP_CFGWR1) {
                        ref_desc_bdf(&sb, "to", t->target_id);
                        ref_sb_printf(&sb, " reg %03x", t->cfg_reg);
                }
                if (t->has_addr)
                        ref_sb_printf(&sb, " addr %#llx", (unsigned long long)t->addr);
                break;
        }
        return (int)sb.pos;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd32(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng >> 16);
}

static void test_desc_matches_printf(void **state)
{
        char ours[300], ref[300];

        (void)state;
        for (int round = 0; round < 200000; round++) {
                uint32_t dw[6];
                size_t ndw = 4 + rnd32() % 3;
                struct tlp t;
                size_t lens[] = {sizeof(ours), 0, 1, 2, 5, 17, 40, 64, 80, 100};
                size_t len = lens[round % 10 < 3 ? round % 10 : 0];

                for (size_t i = 0; i < ndw; i++)
                        dw[i] = rnd32();
                /* A fair share of zeros in fields printed with %#llx. */
                if (round % 5 == 0)
                        dw[ndw - 1] = dw[ndw - 2] = 0;
                if (round % 7 == 0)
                        dw[0] &= 0x7fffffffu; /* no prefix */
                if (round % 11 == 0)
                        len = 1 + rnd32() % 120;
                tlp_decode(dw, ndw, &t);
                if (round % 3 == 0)
                        t.dw0_partial = !t.dw0_partial;
                memset(ours, 'X', sizeof(ours));
                memset(ref, 'X', sizeof(ref));
                assert_int_equal(tlp_desc(&t, len ? ours : NULL, len),
                                 ref_tlp_desc(&t, len ? ref : NULL, len));
                assert_memory_equal(ours, ref, sizeof(ours));
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_decode_table),    cmocka_unit_test(test_decode_rejects),
            cmocka_unit_test(test_decode_null),     cmocka_unit_test(test_kind_names),
            cmocka_unit_test(test_classes),         cmocka_unit_test(test_cpl_is_last),
            cmocka_unit_test(test_payload_bytes),   cmocka_unit_test(test_desc),
            cmocka_unit_test(test_desc_fields),     cmocka_unit_test(test_brief_matches_full),
            cmocka_unit_test(test_fmt_type_census), cmocka_unit_test(test_desc_matches_printf),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
