/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_cfg.h - pure decoding of one function's configuration space.
 *
 * Bytes in, struct out: no I/O, no allocation, no global state. The input is
 * whatever part of the configuration space could be read (64 bytes without
 * CAP_SYS_ADMIN, 256 for conventional PCI, 4096 for PCIe); fields that lie
 * beyond it are reported as unknown rather than guessed.
 */
#ifndef PCIESCOPE_PCIE_CFG_H
#define PCIESCOPE_PCIE_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Port types; the numbering follows PCI_EXP_FLAGS_TYPE where one exists. */
enum pcie_port_type {
        PCIE_PORT_ENDPOINT = 0x0,
        PCIE_PORT_LEGACY_ENDPOINT = 0x1,
        PCIE_PORT_ROOT_PORT = 0x4,
        PCIE_PORT_UPSTREAM = 0x5,
        PCIE_PORT_DOWNSTREAM = 0x6,
        PCIE_PORT_PCIE_TO_PCI_BRIDGE = 0x7,
        PCIE_PORT_PCI_TO_PCIE_BRIDGE = 0x8,
        PCIE_PORT_RC_ENDPOINT = 0x9,
        PCIE_PORT_RC_EVENT_COLLECTOR = 0xa,
        PCIE_PORT_UNKNOWN = 0x100, /* PCIe capability with a reserved type */
        PCIE_PORT_NONE = 0x101,    /* conventional PCI: no PCIe capability */
};

/* Raw link registers, kept as codes so nothing is lost in decoding. */
struct pcie_link_regs {
        uint8_t max_speed_code; /* LNKCAP[3:0] */
        uint8_t max_width;      /* LNKCAP[9:4] */
        uint8_t cur_speed_code; /* LNKSTA[3:0] */
        uint8_t cur_width;      /* LNKSTA[9:4] */
        uint8_t speed_vector;   /* LNKCAP2[7:1] as bits 1..7; 0 when absent */
        bool dll_link_active;   /* LNKSTA bit 13 (only meaningful if reported) */
};

struct pcie_func_info {
        uint16_t vendor_id;
        uint16_t device_id;
        uint32_t class_code; /* class << 16 | subclass << 8 | prog-if */
        uint8_t header_type; /* without the multi-function bit */
        bool multifunction;

        bool is_bridge; /* type 1 header */
        uint8_t primary_bus, secondary_bus, subordinate_bus;

        bool caps_readable; /* the capability list lies within the bytes we have */
        bool has_pcie;      /* a PCI Express capability was found and read */
        uint8_t pcie_cap;   /* its offset */
        uint8_t pcie_cap_version;
        enum pcie_port_type port_type;
        bool slot_implemented;
        bool hotplug_capable; /* SLTCAP HPC, only when a slot is implemented */

        unsigned int mpss_bytes; /* Max_Payload_Size Supported */
        unsigned int mps_bytes;  /* Max_Payload_Size */
        unsigned int mrrs_bytes; /* Max_Read_Request_Size */

        bool has_link; /* this port type carries link registers */
        struct pcie_link_regs link;

        uint16_t aer_cap; /* offset of the AER extended capability, 0 if none */
};

/* Error codes beyond errno, returned negated. */
#define PCIE_CFG_EGONE  (-19) /* -ENODEV: vendor ID all ones, the device is gone */
#define PCIE_CFG_ESHORT (-61) /* -ENODATA: fewer than 64 bytes */

/*
 * pcie_cfg_decode - decode the header and PCIe capability of one function.
 * @cfg: configuration space bytes from offset 0; @len: how many are valid.
 *
 * Returns 0, -ENODATA if @len < 64, -ENODEV if the function reads all ones.
 * A capability list that loops or points outside @len is cut where it goes
 * wrong; the fields found before that point are kept.
 */
int pcie_cfg_decode(const uint8_t *cfg, size_t len, struct pcie_func_info *out);

/*
 * pcie_cfg_find_cap - offset of the first standard capability with @id, or
 * -ENOENT. Bounded: each offset is visited at most once.
 */
int pcie_cfg_find_cap(const uint8_t *cfg, size_t len, uint8_t id);

/*
 * pcie_cfg_find_ext_cap - offset of the first extended capability with @id,
 * or -ENOENT. Needs @len > 256. Stops at an all-zero or all-ones header, a
 * pointer back below 0x100, or an offset seen before.
 */
int pcie_cfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id);

/* Payload/read-request encoding: 128 << code, code 0..5. */
unsigned int pcie_payload_code_to_bytes(unsigned int code);

/* "endpoint", "root_port", ... as used in JSON, metrics and reports. */
const char *pcie_port_type_name(enum pcie_port_type type);

/* Whether this port type sits at the downstream end of its link
 * (endpoints, upstream switch ports, bridges to PCI). */
bool pcie_port_is_upstream_facing(enum pcie_port_type type);

/* Whether this port type is a Root Port or switch downstream port. */
bool pcie_port_is_downstream_facing(enum pcie_port_type type);

#endif /* PCIESCOPE_PCIE_CFG_H */
