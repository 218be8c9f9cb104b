// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pcie_cfg.c - pcie_cfg_decode() and the bounded capability walks.
 *
 * Every configuration-space image is built here, byte by byte, from a small
 * declarative spec (SYNTHETIC: no captured data). Each decode row poisons the
 * output with 0xff first, so a field the decoder forgets to set shows up, and
 * a failure names the row and every field that differs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "pci_regs.h"
#include "pcie_cfg.h"

/* ---- image builders ---- */

static void put16(uint8_t *cfg, size_t off, uint16_t v)
{
        cfg[off] = (uint8_t)v;
        cfg[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *cfg, size_t off, uint32_t v)
{
        put16(cfg, off, (uint16_t)v);
        put16(cfg, off + 2, (uint16_t)(v >> 16));
}

#define LNKCAP(speed, width)  ((uint32_t)(speed) | (uint32_t)(width) << 4)
#define LNKSTA(speed, width)  ((uint16_t)((speed) | (width) << 4))
#define LNKSTA_DLL(sp, width) ((uint16_t)(LNKSTA(sp, width) | PCI_EXP_LNKSTA_DLLLA))
#define EXT_HDR(id, next)     ((uint32_t)(id) | 1u << 16 | (uint32_t)(next) << 20)
#define CAP_AT                0x40
#define PCI_CAP_ID_PM         0x01
#define PCI_CAP_ID_MSI        0x05
#define PCI_EXT_CAP_ID_DSN    0x0003
#define PCI_EXT_CAP_ID_VC     0x0002

struct pcie_spec {
        uint8_t type;            /* PCI_EXP_FLAGS_TYPE value */
        uint8_t version;         /* PCI_EXP_FLAGS_VERS */
        bool slot;               /* PCI_EXP_FLAGS_SLOT */
        uint8_t mpss, mps, mrrs; /* codes */
        uint32_t lnkcap;
        uint16_t lnksta;
        uint32_t sltcap;
        uint32_t lnkcap2; /* written for every version: v1 must ignore it */
};

struct img_spec {
        uint16_t vendor, device;
        uint32_t class_code;
        uint8_t header_type; /* register value, multifunction bit included */
        uint8_t buses[3];    /* primary, secondary, subordinate (type 1) */
        bool cap_list;       /* Status.CapList and a pointer to CAP_AT */
        bool pcie;           /* a PCIe capability at CAP_AT */
        struct pcie_spec cap;
        uint16_t aer_at; /* 0: no ext caps; 0x100: AER first; else DSN@0x100 -> AER@aer_at */
};

static void build_image(uint8_t *cfg, const struct img_spec *s)
{
        uint8_t type = s->header_type & PCI_HEADER_TYPE_MASK;

        memset(cfg, 0, PCI_CFG_SPACE_EXP_SIZE);
        put16(cfg, PCI_VENDOR_ID, s->vendor);
        put16(cfg, PCI_DEVICE_ID, s->device);
        put32(cfg, PCI_CLASS_REVISION, s->class_code << 8 | 0x01);
        cfg[PCI_HEADER_TYPE] = s->header_type;
        if (type == PCI_HEADER_TYPE_BRIDGE) {
                cfg[PCI_PRIMARY_BUS] = s->buses[0];
                cfg[PCI_SECONDARY_BUS] = s->buses[1];
                cfg[PCI_SUBORDINATE_BUS] = s->buses[2];
        }
        if (s->cap_list) {
                put16(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST);
                cfg[type == PCI_HEADER_TYPE_CARDBUS ? PCI_CB_CAPABILITY_LIST
                                                    : PCI_CAPABILITY_LIST] = CAP_AT;
        }
        if (s->pcie) {
                const struct pcie_spec *c = &s->cap;

                cfg[CAP_AT + PCI_CAP_LIST_ID] = PCI_CAP_ID_EXP;
                cfg[CAP_AT + PCI_CAP_LIST_NEXT] = 0;
                put16(cfg, CAP_AT + PCI_EXP_FLAGS,
                      (uint16_t)(c->version | c->type << PCI_EXP_FLAGS_TYPE_SHIFT |
                                 (c->slot ? PCI_EXP_FLAGS_SLOT : 0)));
                put32(cfg, CAP_AT + PCI_EXP_DEVCAP, c->mpss);
                put16(cfg, CAP_AT + PCI_EXP_DEVCTL,
                      (uint16_t)(c->mps << PCI_EXP_DEVCTL_PAYLOAD_SHIFT |
                                 c->mrrs << PCI_EXP_DEVCTL_READRQ_SHIFT));
                put32(cfg, CAP_AT + PCI_EXP_LNKCAP, c->lnkcap);
                put16(cfg, CAP_AT + PCI_EXP_LNKSTA, c->lnksta);
                put32(cfg, CAP_AT + PCI_EXP_SLTCAP, c->sltcap);
                put32(cfg, CAP_AT + PCI_EXP_LNKCAP2, c->lnkcap2);
        } else if (s->cap_list) {
                /* A lone PM capability, so the list is not empty. */
                cfg[CAP_AT + PCI_CAP_LIST_ID] = PCI_CAP_ID_PM;
        }
        if (s->aer_at == PCI_CFG_SPACE_SIZE) {
                put32(cfg, PCI_CFG_SPACE_SIZE, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0));
        } else if (s->aer_at) {
                put32(cfg, PCI_CFG_SPACE_SIZE, EXT_HDR(PCI_EXT_CAP_ID_DSN, s->aer_at));
                put32(cfg, s->aer_at, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0));
        }
}

/* ---- pcie_cfg_decode table ---- */

struct decode_row {
        const char *name;
        struct img_spec img;
        size_t len;
        int ret;
        struct pcie_func_info exp; /* compared only when ret == 0 */
};

/* A Gen3 x8 endpoint capability, reused with variations below. */
#define EP_CAP(t)                                                                                  \
        {                                                                                          \
                .type = (t), .version = 2, .mpss = 2, .mps = 1, .mrrs = 2, .lnkcap = LNKCAP(3, 8), \
                .lnksta = LNKSTA(3, 8), .lnkcap2 = 0x0e,                                           \
        }

static const struct decode_row decode_rows[] = {
    {
        .name = "endpoint, AER first in ext space",
        .img = {.vendor = 0x8086,
                .device = 0x10c9,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT),
                .aer_at = 0x100},
        .len = 4096,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x10c9,
                .class_code = 0x020000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0x0e},
                .aer_cap = 0x100},
    },
    {
        .name = "multifunction endpoint, AER second at 0x148, link x1 of x4",
        .img = {.vendor = 0x15b3,
                .device = 0x1007,
                .class_code = 0x020000,
                .header_type = PCI_HEADER_MULTIFUNCTION,
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_ENDPOINT,
                        .version = 2,
                        .mpss = 1,
                        .mps = 0,
                        .mrrs = 5,
                        .lnkcap = LNKCAP(2, 4),
                        .lnksta = LNKSTA(1, 1),
                        .lnkcap2 = 0x06},
                .aer_at = 0x148},
        .len = 4096,
        .exp = {.vendor_id = 0x15b3,
                .device_id = 0x1007,
                .class_code = 0x020000,
                .multifunction = true,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ENDPOINT,
                .mpss_bytes = 256,
                .mps_bytes = 128,
                .mrrs_bytes = 4096,
                .has_link = true,
                .link = {.max_speed_code = 2,
                         .max_width = 4,
                         .cur_speed_code = 1,
                         .cur_width = 1,
                         .speed_vector = 0x06},
                .aer_cap = 0x148},
    },
    {
        .name = "root port, bridge header, DLL active, no slot",
        .img = {.vendor = 0x8086,
                .device = 0x2f04,
                .class_code = 0x060400,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x00, 0x03, 0x05},
                .cap_list = true,
                .pcie = true,
                /* SLTCAP.HPC set but no slot: not hot-plug capable. */
                .cap = {.type = PCI_EXP_TYPE_ROOT_PORT,
                        .version = 2,
                        .mpss = 1,
                        .mps = 1,
                        .mrrs = 0,
                        .lnkcap = LNKCAP(3, 8),
                        .lnksta = LNKSTA_DLL(3, 8),
                        .sltcap = PCI_EXP_SLTCAP_HPC,
                        .lnkcap2 = 0x0e},
                .aer_at = 0x100},
        .len = 4096,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x2f04,
                .class_code = 0x060400,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x00,
                .secondary_bus = 0x03,
                .subordinate_bus = 0x05,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ROOT_PORT,
                .mpss_bytes = 256,
                .mps_bytes = 256,
                .mrrs_bytes = 128,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0x0e,
                         .dll_link_active = true},
                .aer_cap = 0x100},
    },
    {
        .name = "switch upstream port",
        .img = {.vendor = 0x10b5,
                .device = 0x8796,
                .class_code = 0x060400,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x01, 0x02, 0x06},
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_UPSTREAM,
                        .version = 2,
                        .mpss = 3,
                        .mps = 2,
                        .mrrs = 3,
                        .lnkcap = LNKCAP(4, 16),
                        .lnksta = LNKSTA(4, 16),
                        .lnkcap2 = 0x1e}},
        .len = 4096,
        .exp = {.vendor_id = 0x10b5,
                .device_id = 0x8796,
                .class_code = 0x060400,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x01,
                .secondary_bus = 0x02,
                .subordinate_bus = 0x06,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_UPSTREAM,
                .mpss_bytes = 1024,
                .mps_bytes = 512,
                .mrrs_bytes = 1024,
                .has_link = true,
                .link = {.max_speed_code = 4,
                         .max_width = 16,
                         .cur_speed_code = 4,
                         .cur_width = 16,
                         .speed_vector = 0x1e}},
    },
    {
        .name = "switch downstream port with a hot-plug slot, link down",
        .img = {.vendor = 0x10b5,
                .device = 0x8796,
                .class_code = 0x060400,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x02, 0x04, 0x04},
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_DOWNSTREAM,
                        .version = 2,
                        .slot = true,
                        .mpss = 3,
                        .mps = 2,
                        .mrrs = 2,
                        .lnkcap = LNKCAP(4, 4),
                        .lnksta = LNKSTA(1, 0),
                        .sltcap = PCI_EXP_SLTCAP_HPC | 0x1,
                        .lnkcap2 = 0x1e},
                .aer_at = 0x100},
        .len = 4096,
        .exp = {.vendor_id = 0x10b5,
                .device_id = 0x8796,
                .class_code = 0x060400,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x02,
                .secondary_bus = 0x04,
                .subordinate_bus = 0x04,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_DOWNSTREAM,
                .slot_implemented = true,
                .hotplug_capable = true,
                .mpss_bytes = 1024,
                .mps_bytes = 512,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 4,
                         .max_width = 4,
                         .cur_speed_code = 1,
                         .cur_width = 0,
                         .speed_vector = 0x1e},
                .aer_cap = 0x100},
    },
    {
        .name = "downstream port, slot without hot-plug",
        .img = {.vendor = 0x10b5,
                .device = 0x8796,
                .class_code = 0x060400,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x02, 0x05, 0x05},
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_DOWNSTREAM,
                        .version = 2,
                        .slot = true,
                        .mpss = 1,
                        .mps = 1,
                        .mrrs = 2,
                        .lnkcap = LNKCAP(3, 4),
                        .lnksta = LNKSTA(3, 4),
                        .sltcap = 0x1,
                        .lnkcap2 = 0x0e}},
        .len = 4096,
        .exp = {.vendor_id = 0x10b5,
                .device_id = 0x8796,
                .class_code = 0x060400,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x02,
                .secondary_bus = 0x05,
                .subordinate_bus = 0x05,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_DOWNSTREAM,
                .slot_implemented = true,
                .mpss_bytes = 256,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 4,
                         .cur_speed_code = 3,
                         .cur_width = 4,
                         .speed_vector = 0x0e}},
    },
    {
        .name = "RCiEP: no link registers even when the bytes are set",
        .img = {.vendor = 0x8086,
                .device = 0x0b25,
                .class_code = 0x088000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_RC_END),
                .aer_at = 0x100},
        .len = 4096,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x0b25,
                .class_code = 0x088000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_RC_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .aer_cap = 0x100},
    },
    {
        .name = "RCEC: no link registers, AER behind DSN",
        .img = {.vendor = 0x8086,
                .device = 0x0b23,
                .class_code = 0x080700,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_RC_EC),
                .aer_at = 0x200},
        .len = 4096,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x0b23,
                .class_code = 0x080700,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_RC_EVENT_COLLECTOR,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .aer_cap = 0x200},
    },
    {
        .name = "legacy endpoint",
        .img = {.vendor = 0x14e4,
                .device = 0x1639,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_LEG_END)},
        .len = 4096,
        .exp = {.vendor_id = 0x14e4,
                .device_id = 0x1639,
                .class_code = 0x020000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_LEGACY_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0x0e}},
    },
    {
        .name = "PCIe-to-PCI bridge",
        .img = {.vendor = 0x1b21,
                .device = 0x1080,
                .class_code = 0x060401,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x05, 0x06, 0x06},
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_PCI_BRIDGE,
                        .version = 2,
                        .mpss = 0,
                        .mps = 0,
                        .mrrs = 2,
                        .lnkcap = LNKCAP(1, 1),
                        .lnksta = LNKSTA(1, 1),
                        .lnkcap2 = 0x02}},
        .len = 4096,
        .exp = {.vendor_id = 0x1b21,
                .device_id = 0x1080,
                .class_code = 0x060401,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x05,
                .secondary_bus = 0x06,
                .subordinate_bus = 0x06,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_PCIE_TO_PCI_BRIDGE,
                .mpss_bytes = 128,
                .mps_bytes = 128,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 1,
                         .max_width = 1,
                         .cur_speed_code = 1,
                         .cur_width = 1,
                         .speed_vector = 0x02}},
    },
    {
        .name = "capability version 1: LNKCAP2 bytes ignored",
        .img = {.vendor = 0x8086,
                .device = 0x3408,
                .class_code = 0x060400,
                .header_type = PCI_HEADER_TYPE_BRIDGE,
                .buses = {0x00, 0x01, 0x01},
                .cap_list = true,
                .pcie = true,
                .cap = {.type = PCI_EXP_TYPE_ROOT_PORT,
                        .version = 1,
                        .mpss = 1,
                        .mps = 0,
                        .mrrs = 2,
                        .lnkcap = LNKCAP(2, 16),
                        .lnksta = LNKSTA(2, 16),
                        .lnkcap2 = 0xfe}},
        .len = 4096,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x3408,
                .class_code = 0x060400,
                .header_type = 1,
                .is_bridge = true,
                .primary_bus = 0x00,
                .secondary_bus = 0x01,
                .subordinate_bus = 0x01,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 1,
                .port_type = PCIE_PORT_ROOT_PORT,
                .mpss_bytes = 256,
                .mps_bytes = 128,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 2,
                         .max_width = 16,
                         .cur_speed_code = 2,
                         .cur_width = 16,
                         .speed_vector = 0}},
    },
    {
        .name = "reserved port type 3",
        .img = {.vendor = 0x1234,
                .device = 0x0003,
                .class_code = 0xff0000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(3),
                .aer_at = 0x100},
        .len = 4096,
        .exp = {.vendor_id = 0x1234,
                .device_id = 0x0003,
                .class_code = 0xff0000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_UNKNOWN,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .aer_cap = 0x100},
    },
    {
        .name = "reserved port type 0xf",
        .img = {.vendor = 0x1234,
                .device = 0x000f,
                .class_code = 0xff0000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(0xf)},
        .len = 4096,
        .exp = {.vendor_id = 0x1234,
                .device_id = 0x000f,
                .class_code = 0xff0000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_UNKNOWN,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512},
    },
    {
        .name = "conventional PCI: no capability list",
        .img = {.vendor = 0x8086,
                .device = 0x244e,
                .class_code = 0x060401,
                .header_type = PCI_HEADER_TYPE_BRIDGE | PCI_HEADER_MULTIFUNCTION,
                .buses = {0x00, 0x07, 0x07}},
        .len = 256,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x244e,
                .class_code = 0x060401,
                .header_type = 1,
                .multifunction = true,
                .is_bridge = true,
                .primary_bus = 0x00,
                .secondary_bus = 0x07,
                .subordinate_bus = 0x07,
                .caps_readable = true,
                .port_type = PCIE_PORT_NONE},
    },
    {
        .name = "conventional PCI: PM capability only",
        .img = {.vendor = 0x8086, .device = 0x2918, .class_code = 0x060100, .cap_list = true},
        .len = 256,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x2918,
                .class_code = 0x060100,
                .caps_readable = true,
                .port_type = PCIE_PORT_NONE},
    },
    {
        .name = "cfg_len 64: header only, PCIe capability out of reach",
        .img = {.vendor = 0x8086,
                .device = 0x10c9,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT),
                .aer_at = 0x100},
        .len = 64,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x10c9,
                .class_code = 0x020000,
                .port_type = PCIE_PORT_NONE},
    },
    {
        .name = "cfg_len 256: PCIe decoded, AER out of reach",
        .img = {.vendor = 0x8086,
                .device = 0x10c9,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT),
                .aer_at = 0x100},
        .len = 256,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x10c9,
                .class_code = 0x020000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0x0e}},
    },
    {
        .name = "cfg_len 0x50: PCIe capability cut before LNKSTA",
        .img = {.vendor = 0x8086,
                .device = 0x10c9,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)},
        .len = 0x50,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x10c9,
                .class_code = 0x020000,
                .caps_readable = true,
                .port_type = PCIE_PORT_NONE},
    },
    {
        .name = "cfg_len 0x60: LNKSTA readable, LNKCAP2 not",
        .img = {.vendor = 0x8086,
                .device = 0x10c9,
                .class_code = 0x020000,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)},
        .len = 0x60,
        .exp = {.vendor_id = 0x8086,
                .device_id = 0x10c9,
                .class_code = 0x020000,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0}},
    },
    {
        .name = "CardBus header: list pointer at 0x14",
        .img = {.vendor = 0x1180,
                .device = 0x0476,
                .class_code = 0x060700,
                .header_type = PCI_HEADER_TYPE_CARDBUS,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)},
        .len = 256,
        .exp = {.vendor_id = 0x1180,
                .device_id = 0x0476,
                .class_code = 0x060700,
                .header_type = 2,
                .caps_readable = true,
                .has_pcie = true,
                .pcie_cap = CAP_AT,
                .pcie_cap_version = 2,
                .port_type = PCIE_PORT_ENDPOINT,
                .mpss_bytes = 512,
                .mps_bytes = 256,
                .mrrs_bytes = 512,
                .has_link = true,
                .link = {.max_speed_code = 3,
                         .max_width = 8,
                         .cur_speed_code = 3,
                         .cur_width = 8,
                         .speed_vector = 0x0e}},
    },
    {
        .name = "vendor ffff: device gone",
        .img = {.vendor = 0xffff,
                .device = 0xffff,
                .class_code = 0xffffff,
                .cap_list = true,
                .pcie = true,
                .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)},
        .len = 4096,
        .ret = -ENODEV,
    },
    {
        .name = "63 bytes: too short",
        .img = {.vendor = 0x8086, .device = 0x10c9, .class_code = 0x020000},
        .len = 63,
        .ret = -ENODATA,
    },
    {
        .name = "0 bytes: too short",
        .img = {.vendor = 0x8086, .device = 0x10c9, .class_code = 0x020000},
        .len = 0,
        .ret = -ENODATA,
    },
};

static int check_u64(const char *row, const char *field, uint64_t got, uint64_t exp)
{
        if (got == exp)
                return 0;
        print_message("# row '%s': %s = %#llx, expected %#llx\n", row, field,
                      (unsigned long long)got, (unsigned long long)exp);
        return 1;
}

#define CHECK_FIELD(f) bad += check_u64(row, #f, (uint64_t)got->f, (uint64_t)exp->f)

/* Number of fields that differ, each one printed. */
static int compare_info(const char *row, const struct pcie_func_info *got,
                        const struct pcie_func_info *exp)
{
        int bad = 0;

        CHECK_FIELD(vendor_id);
        CHECK_FIELD(device_id);
        CHECK_FIELD(class_code);
        CHECK_FIELD(header_type);
        CHECK_FIELD(multifunction);
        CHECK_FIELD(is_bridge);
        CHECK_FIELD(primary_bus);
        CHECK_FIELD(secondary_bus);
        CHECK_FIELD(subordinate_bus);
        CHECK_FIELD(caps_readable);
        CHECK_FIELD(has_pcie);
        CHECK_FIELD(pcie_cap);
        CHECK_FIELD(pcie_cap_version);
        CHECK_FIELD(port_type);
        CHECK_FIELD(slot_implemented);
        CHECK_FIELD(hotplug_capable);
        CHECK_FIELD(mpss_bytes);
        CHECK_FIELD(mps_bytes);
        CHECK_FIELD(mrrs_bytes);
        CHECK_FIELD(has_link);
        CHECK_FIELD(link.max_speed_code);
        CHECK_FIELD(link.max_width);
        CHECK_FIELD(link.cur_speed_code);
        CHECK_FIELD(link.cur_width);
        CHECK_FIELD(link.speed_vector);
        CHECK_FIELD(link.dll_link_active);
        CHECK_FIELD(aer_cap);
        return bad;
}

static uint8_t image[PCI_CFG_SPACE_EXP_SIZE];

static void test_decode_table(void **state)
{
        int failed_rows = 0;

        (void)state;
        for (size_t i = 0; i < sizeof(decode_rows) / sizeof(decode_rows[0]); i++) {
                const struct decode_row *r = &decode_rows[i];
                struct pcie_func_info got;
                int ret, bad = 0;

                build_image(image, &r->img);
                memset(&got, 0xff, sizeof(got));
                ret = pcie_cfg_decode(image, r->len, &got);
                if (ret != r->ret) {
                        print_message("# row '%s': returned %d, expected %d\n", r->name, ret,
                                      r->ret);
                        bad++;
                } else if (ret == 0) {
                        bad = compare_info(r->name, &got, &r->exp);
                }
                if (bad)
                        failed_rows++;
        }
        assert_int_equal(failed_rows, 0);
}

/* Every payload code through the decoder, in both DEVCTL fields and DEVCAP. */
static void test_decode_payload_codes(void **state)
{
        static const unsigned int bytes[] = {128, 256, 512, 1024, 2048, 4096};

        (void)state;
        for (unsigned int code = 0; code < 6; code++) {
                struct img_spec s = {.vendor = 0x1234,
                                     .device = 0x5678,
                                     .cap_list = true,
                                     .pcie = true,
                                     .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)};
                struct pcie_func_info got;

                s.cap.mpss = (uint8_t)code;
                s.cap.mps = (uint8_t)code;
                s.cap.mrrs = (uint8_t)(5 - code);
                build_image(image, &s);
                memset(&got, 0xff, sizeof(got));
                assert_int_equal(pcie_cfg_decode(image, 4096, &got), 0);
                if (got.mpss_bytes != bytes[code] || got.mps_bytes != bytes[code] ||
                    got.mrrs_bytes != bytes[5 - code])
                        print_message("# code %u: mpss %u mps %u mrrs %u\n", code, got.mpss_bytes,
                                      got.mps_bytes, got.mrrs_bytes);
                assert_int_equal(got.mpss_bytes, bytes[code]);
                assert_int_equal(got.mps_bytes, bytes[code]);
                assert_int_equal(got.mrrs_bytes, bytes[5 - code]);
                assert_int_equal(pcie_payload_code_to_bytes(code), bytes[code]);
        }
}

/* ---- bounded capability walks ---- */

/* Header with the capability list bit and a first pointer; no caps yet. */
static void bare_image(uint8_t *cfg, uint8_t first)
{
        memset(cfg, 0, PCI_CFG_SPACE_EXP_SIZE);
        put16(cfg, PCI_VENDOR_ID, 0x1234);
        put16(cfg, PCI_DEVICE_ID, 0x5678);
        put16(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST);
        cfg[PCI_CAPABILITY_LIST] = first;
}

static void add_cap(uint8_t *cfg, uint8_t at, uint8_t id, uint8_t next)
{
        cfg[at + PCI_CAP_LIST_ID] = id;
        cfg[at + PCI_CAP_LIST_NEXT] = next;
}

/* A minimal v2 endpoint PCIe capability at @at. */
static void add_exp_cap(uint8_t *cfg, uint8_t at, uint8_t next)
{
        add_cap(cfg, at, PCI_CAP_ID_EXP, next);
        put16(cfg, at + PCI_EXP_FLAGS, 2 | PCI_EXP_TYPE_ENDPOINT << PCI_EXP_FLAGS_TYPE_SHIFT);
        put32(cfg, at + PCI_EXP_LNKCAP, LNKCAP(3, 4));
        put16(cfg, at + PCI_EXP_LNKSTA, LNKSTA(3, 4));
}

static void test_cap_self_loop(void **state)
{
        struct pcie_func_info info;

        (void)state;
        bare_image(image, 0x40);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0x40);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_PM), 0x40);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);
        memset(&info, 0xff, sizeof(info));
        assert_int_equal(pcie_cfg_decode(image, 256, &info), 0);
        assert_false(info.has_pcie);
        assert_int_equal(info.port_type, PCIE_PORT_NONE);
}

static void test_cap_two_cycle(void **state)
{
        struct pcie_func_info info;

        (void)state;
        bare_image(image, 0x40);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0x50);
        add_cap(image, 0x50, PCI_CAP_ID_MSI, 0x40);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_MSI), 0x50);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);

        /* The PCIe capability found before the loop is kept. */
        bare_image(image, 0x40);
        add_exp_cap(image, 0x40, 0x80);
        add_cap(image, 0x80, PCI_CAP_ID_PM, 0x40);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), 0x40);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_MSI), -ENOENT);
        memset(&info, 0xff, sizeof(info));
        assert_int_equal(pcie_cfg_decode(image, 256, &info), 0);
        assert_true(info.has_pcie);
        assert_int_equal(info.pcie_cap, 0x40);
        assert_int_equal(info.link.max_width, 4);
}

static void test_cap_next_into_header(void **state)
{
        (void)state;
        /* 0x20 holds an EXP id (inside BAR4): followed, it would be found. */
        bare_image(image, 0x40);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0x20);
        image[0x20] = PCI_CAP_ID_EXP;
        image[0x21] = 0x00;
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_PM), 0x40);

        /* The same for the first pointer. */
        bare_image(image, 0x20);
        image[0x20] = PCI_CAP_ID_EXP;
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);
}

static void test_cap_list_edges(void **state)
{
        (void)state;
        /* Low two pointer bits are reserved and masked. */
        bare_image(image, 0x43);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0x53);
        add_exp_cap(image, 0x50, 0);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), 0x50);

        /* No Status.CapList: the pointer is not followed. */
        put16(image, PCI_STATUS, 0);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);

        /* An id of 0xff (a vanished device inside the list) ends the walk. */
        bare_image(image, 0x40);
        add_cap(image, 0x40, 0xff, 0x50);
        add_exp_cap(image, 0x50, 0);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);

        /* A capability beyond the bytes we hold is not read. */
        bare_image(image, 0x40);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0x80);
        add_exp_cap(image, 0x80, 0);
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), 0x80);
        assert_int_equal(pcie_cfg_find_cap(image, 0x80, PCI_CAP_ID_EXP), -ENOENT);
        assert_int_equal(pcie_cfg_find_cap(image, 64, PCI_CAP_ID_PM), -ENOENT);

        /* Pointers never leave standard space, even with 4096 bytes. */
        bare_image(image, 0x40);
        add_cap(image, 0x40, PCI_CAP_ID_PM, 0xfc);
        add_cap(image, 0xfc, PCI_CAP_ID_MSI, 0);
        assert_int_equal(pcie_cfg_find_cap(image, 4096, PCI_CAP_ID_MSI), 0xfc);
}

/* A chain of 48 capabilities (the kernel's TTL) is walked to its end. */
static void test_cap_long_chain(void **state)
{
        (void)state;
        bare_image(image, 0x40);
        for (unsigned int at = 0x40; at < 0x100; at += 4)
                add_cap(image, (uint8_t)at, 0x09, (uint8_t)(at + 4 < 0x100 ? at + 4 : 0));
        image[0xfc] = PCI_CAP_ID_MSI;
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_MSI), 0xfc);
        /* Close the ring: still finite, and nothing new found. */
        image[0xfd] = 0x40;
        assert_int_equal(pcie_cfg_find_cap(image, 256, PCI_CAP_ID_EXP), -ENOENT);
}

static void test_ext_cap_walks(void **state)
{
        (void)state;
        memset(image, 0, sizeof(image));

        /* AER after DSN and VC. */
        put32(image, 0x100, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x148));
        put32(image, 0x148, EXT_HDR(PCI_EXT_CAP_ID_VC, 0x400));
        put32(image, 0x400, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_ERR), 0x400);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_VC), 0x148);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DVSEC), -ENOENT);
        /* Needs more than 256 bytes; a cap beyond len is not read. */
        assert_int_equal(pcie_cfg_find_ext_cap(image, 256, PCI_EXT_CAP_ID_DSN), -ENOENT);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 0x400, PCI_EXT_CAP_ID_ERR), -ENOENT);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 0x404, PCI_EXT_CAP_ID_ERR), 0x400);

        /* The last dword of the space. */
        put32(image, 0x400, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0xffc));
        put32(image, 0xffc, EXT_HDR(PCI_EXT_CAP_ID_DVSEC, 0));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DVSEC), 0xffc);
}

static void test_ext_cap_loop(void **state)
{
        (void)state;
        memset(image, 0, sizeof(image));
        put32(image, 0x100, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0x148));
        put32(image, 0x148, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x100));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DSN), 0x148);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DVSEC), -ENOENT);

        /* A header pointing at itself. */
        put32(image, 0x148, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x148));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DVSEC), -ENOENT);
}

static void test_ext_cap_all_ones_and_zero(void **state)
{
        (void)state;
        memset(image, 0, sizeof(image));
        /* All-ones header at 0x100: nothing, not even id 0xffff. */
        put32(image, 0x100, 0xffffffffu);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, 0xffff), -ENOENT);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_ERR), -ENOENT);

        /* All-ones further down the chain. */
        put32(image, 0x100, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x140));
        put32(image, 0x140, 0xffffffffu);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DSN), 0x100);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, 0xffff), -ENOENT);

        /* All-zero header at 0x100: no extended capabilities, even when
         * something that looks like AER sits further up. */
        put32(image, 0x100, 0);
        put32(image, 0x140, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_ERR), -ENOENT);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, 0), -ENOENT);
}

static void test_ext_cap_next_below_0x100(void **state)
{
        (void)state;
        memset(image, 0, sizeof(image));
        /* 0xc0 holds what would read as an AER header. */
        put32(image, 0xc0, EXT_HDR(PCI_EXT_CAP_ID_ERR, 0));
        put32(image, 0x100, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x0c0));
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_DSN), 0x100);
        assert_int_equal(pcie_cfg_find_ext_cap(image, 4096, PCI_EXT_CAP_ID_ERR), -ENOENT);
}

/* decode() must not hang or lose the PCIe data on a looping ext chain. */
static void test_decode_with_bad_ext_chain(void **state)
{
        struct img_spec s = {.vendor = 0x1234,
                             .device = 0x5678,
                             .cap_list = true,
                             .pcie = true,
                             .cap = EP_CAP(PCI_EXP_TYPE_ENDPOINT)};
        struct pcie_func_info info;

        (void)state;
        build_image(image, &s);
        put32(image, 0x100, EXT_HDR(PCI_EXT_CAP_ID_DSN, 0x148));
        put32(image, 0x148, EXT_HDR(PCI_EXT_CAP_ID_VC, 0x100));
        memset(&info, 0xff, sizeof(info));
        assert_int_equal(pcie_cfg_decode(image, 4096, &info), 0);
        assert_true(info.has_pcie);
        assert_int_equal(info.aer_cap, 0);
        assert_int_equal(info.link.max_speed_code, 3);
}

/* ---- names and predicates ---- */

static const struct {
        enum pcie_port_type type;
        const char *name;
        bool up, down;
} port_rows[] = {
    {PCIE_PORT_ENDPOINT, "endpoint", true, false},
    {PCIE_PORT_LEGACY_ENDPOINT, "legacy_endpoint", true, false},
    {PCIE_PORT_ROOT_PORT, "root_port", false, true},
    {PCIE_PORT_UPSTREAM, "upstream_port", true, false},
    {PCIE_PORT_DOWNSTREAM, "downstream_port", false, true},
    {PCIE_PORT_PCIE_TO_PCI_BRIDGE, "pcie_to_pci_bridge", true, false},
    {PCIE_PORT_PCI_TO_PCIE_BRIDGE, "pci_to_pcie_bridge", false, true},
    {PCIE_PORT_RC_ENDPOINT, "rc_integrated_endpoint", false, false},
    {PCIE_PORT_RC_EVENT_COLLECTOR, "rc_event_collector", false, false},
    {PCIE_PORT_UNKNOWN, "unknown", false, false},
    {PCIE_PORT_NONE, "pci", false, false},
    {(enum pcie_port_type)0x2, "unknown", false, false},
    {(enum pcie_port_type)0xb, "unknown", false, false},
};

static void test_port_type_names_and_facing(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < sizeof(port_rows) / sizeof(port_rows[0]); i++) {
                const char *name = pcie_port_type_name(port_rows[i].type);
                bool up = pcie_port_is_upstream_facing(port_rows[i].type);
                bool down = pcie_port_is_downstream_facing(port_rows[i].type);

                if (!name || strcmp(name, port_rows[i].name) || up != port_rows[i].up ||
                    down != port_rows[i].down) {
                        print_message("# type %#x: name '%s' up %d down %d, expected '%s' %d %d\n",
                                      (unsigned int)port_rows[i].type, name ? name : "(null)", up,
                                      down, port_rows[i].name, port_rows[i].up, port_rows[i].down);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

int main(void)
{
        const struct CMUnitTest test_pcie_cfg[] = {
            cmocka_unit_test(test_decode_table),
            cmocka_unit_test(test_decode_payload_codes),
            cmocka_unit_test(test_cap_self_loop),
            cmocka_unit_test(test_cap_two_cycle),
            cmocka_unit_test(test_cap_next_into_header),
            cmocka_unit_test(test_cap_list_edges),
            cmocka_unit_test(test_cap_long_chain),
            cmocka_unit_test(test_ext_cap_walks),
            cmocka_unit_test(test_ext_cap_loop),
            cmocka_unit_test(test_ext_cap_all_ones_and_zero),
            cmocka_unit_test(test_ext_cap_next_below_0x100),
            cmocka_unit_test(test_decode_with_bad_ext_chain),
            cmocka_unit_test(test_port_type_names_and_facing),
        };

        return cmocka_run_group_tests(test_pcie_cfg, NULL, NULL);
}
