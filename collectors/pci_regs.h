/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci_regs.h - the PCI/PCIe configuration-space registers pciescope reads.
 *
 * One place for every offset and bit field, named after the PCI Express Base
 * Specification and Linux's include/uapi/linux/pci_regs.h, so decoding code
 * never carries magic numbers. Offsets of PCIe-capability registers are
 * relative to the capability's own offset. Bit fields are indented one extra
 * space under their register.
 */
#ifndef PCIESCOPE_PCI_REGS_H
#define PCIESCOPE_PCI_REGS_H

/* Type 0/1 common header */
#define PCI_VENDOR_ID            0x00 /* 16 bits */
#define PCI_DEVICE_ID            0x02 /* 16 bits */
#define PCI_STATUS               0x06 /* 16 bits */
#define PCI_STATUS_CAP_LIST      0x0010
#define PCI_CLASS_REVISION       0x08 /* 32 bits: class << 8 | revision */
#define PCI_HEADER_TYPE          0x0e /* 8 bits */
#define PCI_HEADER_TYPE_MASK     0x7f
#define PCI_HEADER_TYPE_NORMAL   0
#define PCI_HEADER_TYPE_BRIDGE   1
#define PCI_HEADER_TYPE_CARDBUS  2
#define PCI_HEADER_MULTIFUNCTION 0x80
#define PCI_CAPABILITY_LIST      0x34 /* 8 bits, type 0 and 1 */
#define PCI_CB_CAPABILITY_LIST   0x14 /* CardBus */

/* Type 0 header: Base Address Registers */
#define PCI_BASE_ADDRESS_0             0x10 /* 6 dwords */
#define PCI_BASE_ADDRESS_SPACE_IO      0x01
#define PCI_BASE_ADDRESS_MEM_TYPE_MASK 0x06
#define PCI_BASE_ADDRESS_MEM_TYPE_64   0x04
#define PCI_STD_NUM_BARS               6

/* Type 1 (bridge) header */
#define PCI_PRIMARY_BUS     0x18
#define PCI_SECONDARY_BUS   0x19
#define PCI_SUBORDINATE_BUS 0x1a

/* Sizes of the configuration space regions */
#define PCI_CFG_SPACE_SIZE     256
#define PCI_CFG_SPACE_EXP_SIZE 4096
#define PCI_STD_HEADER_SIZE    64

/* Capability list (standard space) */
#define PCI_CAP_LIST_ID   0    /* 8 bits */
#define PCI_CAP_LIST_NEXT 1    /* 8 bits */
#define PCI_CAP_ID_EXP    0x10 /* PCI Express */

/* PCI Express capability */
#define PCI_EXP_FLAGS                0x02 /* 16 bits */
#define PCI_EXP_FLAGS_VERS           0x000f
#define PCI_EXP_FLAGS_TYPE           0x00f0
#define PCI_EXP_FLAGS_TYPE_SHIFT     4
#define PCI_EXP_FLAGS_SLOT           0x0100
#define PCI_EXP_DEVCAP               0x04 /* 32 bits */
#define PCI_EXP_DEVCAP_PAYLOAD       0x00000007
#define PCI_EXP_DEVCTL               0x08 /* 16 bits */
#define PCI_EXP_DEVCTL_PAYLOAD       0x00e0
#define PCI_EXP_DEVCTL_PAYLOAD_SHIFT 5
#define PCI_EXP_DEVCTL_READRQ        0x7000
#define PCI_EXP_DEVCTL_READRQ_SHIFT  12
#define PCI_EXP_LNKCAP               0x0c /* 32 bits */
#define PCI_EXP_LNKCAP_SLS           0x0000000f
#define PCI_EXP_LNKCAP_MLW           0x000003f0
#define PCI_EXP_LNKCAP_MLW_SHIFT     4
#define PCI_EXP_LNKSTA               0x12 /* 16 bits */
#define PCI_EXP_LNKSTA_CLS           0x000f
#define PCI_EXP_LNKSTA_NLW           0x03f0
#define PCI_EXP_LNKSTA_NLW_SHIFT     4
#define PCI_EXP_LNKSTA_DLLLA         0x2000
#define PCI_EXP_SLTCAP               0x14       /* 32 bits */
#define PCI_EXP_SLTCAP_HPC           0x00000040 /* Hot-Plug Capable */
#define PCI_EXP_LNKCAP2              0x2c       /* 32 bits, capability version 2 and later */
#define PCI_EXP_LNKCAP2_SLS          0x000000fe /* Supported Link Speeds Vector, bits 1..7 */
#define PCI_EXP_CAP_V1_SIZE          0x14       /* bytes up to LNKSTA in version 1 */
#define PCI_EXP_CAP_V2_SIZE          0x3c

/* PCI Express capability port types (PCI_EXP_FLAGS_TYPE) */
#define PCI_EXP_TYPE_ENDPOINT    0x0
#define PCI_EXP_TYPE_LEG_END     0x1
#define PCI_EXP_TYPE_ROOT_PORT   0x4
#define PCI_EXP_TYPE_UPSTREAM    0x5
#define PCI_EXP_TYPE_DOWNSTREAM  0x6
#define PCI_EXP_TYPE_PCI_BRIDGE  0x7 /* PCIe to PCI/PCI-X bridge */
#define PCI_EXP_TYPE_PCIE_BRIDGE 0x8 /* PCI/PCI-X to PCIe bridge */
#define PCI_EXP_TYPE_RC_END      0x9 /* Root Complex Integrated Endpoint */
#define PCI_EXP_TYPE_RC_EC       0xa /* Root Complex Event Collector */

/* Extended capabilities (offset 0x100 and up) */
#define PCI_EXT_CAP_ID(header)   ((header)&0x0000ffff)
#define PCI_EXT_CAP_NEXT(header) (((header) >> 20) & 0xffc)
#define PCI_EXT_CAP_ID_ERR       0x0001 /* Advanced Error Reporting */
#define PCI_EXT_CAP_ID_DVSEC     0x0023 /* Designated Vendor-Specific */
#define PCI_DVSEC_HEADER1        0x4    /* vendor [15:0], revision [19:16], length [31:20] */
#define PCI_DVSEC_HEADER2        0x8    /* DVSEC id [15:0] */

#endif /* PCIESCOPE_PCI_REGS_H */
