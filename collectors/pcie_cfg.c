// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_cfg.c - pure decoding of one function's configuration space.
 */
#include "pcie_cfg.h"

#include <errno.h>
#include <string.h>

#include "pci_regs.h"

static uint16_t get16(const uint8_t *cfg, size_t off)
{
        return (uint16_t)(cfg[off] | cfg[off + 1] << 8);
}

static uint32_t get32(const uint8_t *cfg, size_t off)
{
        return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
               (uint32_t)cfg[off + 3] << 24;
}

unsigned int pcie_payload_code_to_bytes(unsigned int code)
{
        /* Codes 6 and 7 are reserved; report what the bits say anyway so a
         * broken device shows up as an absurd value rather than a silent 0. */
        return 128u << (code & 7);
}

int pcie_cfg_find_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
        bool visited[PCI_CFG_SPACE_SIZE / 4] = {false};
        size_t limit = len < PCI_CFG_SPACE_SIZE ? len : PCI_CFG_SPACE_SIZE;
        uint8_t ptr_reg;

        if (len < PCI_STD_HEADER_SIZE || !(get16(cfg, PCI_STATUS) & PCI_STATUS_CAP_LIST))
                return -ENOENT;
        ptr_reg = (cfg[PCI_HEADER_TYPE] & PCI_HEADER_TYPE_MASK) == PCI_HEADER_TYPE_CARDBUS
                      ? PCI_CB_CAPABILITY_LIST
                      : PCI_CAPABILITY_LIST;

        /* The low two bits of every pointer are reserved (pciutils masks them
         * too); a pointer into the header or past what we hold ends the walk. */
        for (size_t pos = cfg[ptr_reg] & ~3u; pos >= PCI_STD_HEADER_SIZE && pos + 2 <= limit;
             pos = cfg[pos + PCI_CAP_LIST_NEXT] & ~3u) {
                if (visited[pos / 4])
                        return -ENOENT;
                visited[pos / 4] = true;
                if (cfg[pos + PCI_CAP_LIST_ID] == 0xff)
                        return -ENOENT;
                if (cfg[pos + PCI_CAP_LIST_ID] == id)
                        return (int)pos;
        }
        return -ENOENT;
}

int pcie_cfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
        bool visited[(PCI_CFG_SPACE_EXP_SIZE - PCI_CFG_SPACE_SIZE) / 4] = {false};
        size_t limit = len < PCI_CFG_SPACE_EXP_SIZE ? len : PCI_CFG_SPACE_EXP_SIZE;

        for (size_t pos = PCI_CFG_SPACE_SIZE; pos >= PCI_CFG_SPACE_SIZE && pos + 4 <= limit;) {
                uint32_t header = get32(cfg, pos);

                if (header == 0 || header == 0xffffffffu)
                        return -ENOENT;
                if (visited[(pos - PCI_CFG_SPACE_SIZE) / 4])
                        return -ENOENT;
                visited[(pos - PCI_CFG_SPACE_SIZE) / 4] = true;
                if (PCI_EXT_CAP_ID(header) == id)
                        return (int)pos;
                pos = PCI_EXT_CAP_NEXT(header);
        }
        return -ENOENT;
}

static enum pcie_port_type port_type_from_flags(uint16_t flags)
{
        unsigned int type = (flags & PCI_EXP_FLAGS_TYPE) >> PCI_EXP_FLAGS_TYPE_SHIFT;

        switch (type) {
        case PCI_EXP_TYPE_ENDPOINT:
        case PCI_EXP_TYPE_LEG_END:
        case PCI_EXP_TYPE_ROOT_PORT:
        case PCI_EXP_TYPE_UPSTREAM:
        case PCI_EXP_TYPE_DOWNSTREAM:
        case PCI_EXP_TYPE_PCI_BRIDGE:
        case PCI_EXP_TYPE_PCIE_BRIDGE:
        case PCI_EXP_TYPE_RC_END:
        case PCI_EXP_TYPE_RC_EC:
                return (enum pcie_port_type)type;
        default:
                return PCIE_PORT_UNKNOWN;
        }
}

/* Which port types implement the link registers (PCIe Base Spec 7.5.3: all
 * but Root Complex Integrated Endpoints and Event Collectors). */
static bool port_type_has_link(enum pcie_port_type type)
{
        return type != PCIE_PORT_RC_ENDPOINT && type != PCIE_PORT_RC_EVENT_COLLECTOR &&
               type != PCIE_PORT_UNKNOWN && type != PCIE_PORT_NONE;
}

static void decode_pcie_cap(const uint8_t *cfg, size_t len, size_t cap, struct pcie_func_info *out)
{
        uint16_t flags, devctl, lnksta;
        uint32_t devcap, lnkcap;

        /* The capability lives in standard space: registers that would lie
         * past 0xff belong to extended capabilities, never to this one. */
        if (len > PCI_CFG_SPACE_SIZE)
                len = PCI_CFG_SPACE_SIZE;

        /* Version 1 capabilities end after the slot registers; we need at
         * least up to LNKSTA to say anything useful. */
        if (cap + PCI_EXP_CAP_V1_SIZE > len)
                return;

        flags = get16(cfg, cap + PCI_EXP_FLAGS);
        devcap = get32(cfg, cap + PCI_EXP_DEVCAP);
        devctl = get16(cfg, cap + PCI_EXP_DEVCTL);

        out->has_pcie = true;
        out->pcie_cap = (uint8_t)cap;
        out->pcie_cap_version = flags & PCI_EXP_FLAGS_VERS;
        out->port_type = port_type_from_flags(flags);
        out->mpss_bytes = pcie_payload_code_to_bytes(devcap & PCI_EXP_DEVCAP_PAYLOAD);
        out->mps_bytes = pcie_payload_code_to_bytes((devctl & PCI_EXP_DEVCTL_PAYLOAD) >>
                                                    PCI_EXP_DEVCTL_PAYLOAD_SHIFT);
        out->mrrs_bytes = pcie_payload_code_to_bytes((devctl & PCI_EXP_DEVCTL_READRQ) >>
                                                     PCI_EXP_DEVCTL_READRQ_SHIFT);

        out->slot_implemented = flags & PCI_EXP_FLAGS_SLOT;
        if (out->slot_implemented && cap + PCI_EXP_SLTCAP + 4 <= len)
                out->hotplug_capable = get32(cfg, cap + PCI_EXP_SLTCAP) & PCI_EXP_SLTCAP_HPC;

        if (!port_type_has_link(out->port_type))
                return;
        lnkcap = get32(cfg, cap + PCI_EXP_LNKCAP);
        lnksta = get16(cfg, cap + PCI_EXP_LNKSTA);
        out->has_link = true;
        out->link.max_speed_code = lnkcap & PCI_EXP_LNKCAP_SLS;
        out->link.max_width = (lnkcap & PCI_EXP_LNKCAP_MLW) >> PCI_EXP_LNKCAP_MLW_SHIFT;
        out->link.cur_speed_code = lnksta & PCI_EXP_LNKSTA_CLS;
        out->link.cur_width = (lnksta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT;
        out->link.dll_link_active = lnksta & PCI_EXP_LNKSTA_DLLLA;
        /* LNKCAP2 exists from capability version 2 on (PCIe 3.0 made the
         * vector mandatory); a zero vector means "use LNKCAP". */
        if (out->pcie_cap_version >= 2 && cap + PCI_EXP_LNKCAP2 + 4 <= len)
                out->link.speed_vector = get32(cfg, cap + PCI_EXP_LNKCAP2) & PCI_EXP_LNKCAP2_SLS;
}

int pcie_cfg_decode(const uint8_t *cfg, size_t len, struct pcie_func_info *out)
{
        int cap;

        memset(out, 0, sizeof(*out));
        out->port_type = PCIE_PORT_NONE;
        if (len < PCI_STD_HEADER_SIZE)
                return -ENODATA;
        out->vendor_id = get16(cfg, PCI_VENDOR_ID);
        out->device_id = get16(cfg, PCI_DEVICE_ID);
        if (out->vendor_id == 0xffff)
                return -ENODEV;
        out->class_code = get32(cfg, PCI_CLASS_REVISION) >> 8;
        out->header_type = cfg[PCI_HEADER_TYPE] & PCI_HEADER_TYPE_MASK;
        out->multifunction = cfg[PCI_HEADER_TYPE] & PCI_HEADER_MULTIFUNCTION;
        if (out->header_type == PCI_HEADER_TYPE_BRIDGE) {
                out->is_bridge = true;
                out->primary_bus = cfg[PCI_PRIMARY_BUS];
                out->secondary_bus = cfg[PCI_SECONDARY_BUS];
                out->subordinate_bus = cfg[PCI_SUBORDINATE_BUS];
        }

        /* Capabilities live past the 64-byte header; without them we know
         * the identity but nothing about PCIe. */
        out->caps_readable = len > PCI_STD_HEADER_SIZE;
        cap = pcie_cfg_find_cap(cfg, len, PCI_CAP_ID_EXP);
        if (cap >= 0)
                decode_pcie_cap(cfg, len, (size_t)cap, out);

        if (out->has_pcie) {
                int aer = pcie_cfg_find_ext_cap(cfg, len, PCI_EXT_CAP_ID_ERR);

                if (aer > 0)
                        out->aer_cap = (uint16_t)aer;
        }
        return 0;
}

const char *pcie_port_type_name(enum pcie_port_type type)
{
        switch (type) {
        case PCIE_PORT_ENDPOINT:
                return "endpoint";
        case PCIE_PORT_LEGACY_ENDPOINT:
                return "legacy_endpoint";
        case PCIE_PORT_ROOT_PORT:
                return "root_port";
        case PCIE_PORT_UPSTREAM:
                return "upstream_port";
        case PCIE_PORT_DOWNSTREAM:
                return "downstream_port";
        case PCIE_PORT_PCIE_TO_PCI_BRIDGE:
                return "pcie_to_pci_bridge";
        case PCIE_PORT_PCI_TO_PCIE_BRIDGE:
                return "pci_to_pcie_bridge";
        case PCIE_PORT_RC_ENDPOINT:
                return "rc_integrated_endpoint";
        case PCIE_PORT_RC_EVENT_COLLECTOR:
                return "rc_event_collector";
        case PCIE_PORT_NONE:
                return "pci";
        case PCIE_PORT_UNKNOWN:
                break;
        }
        return "unknown";
}

bool pcie_port_is_upstream_facing(enum pcie_port_type type)
{
        return type == PCIE_PORT_ENDPOINT || type == PCIE_PORT_LEGACY_ENDPOINT ||
               type == PCIE_PORT_UPSTREAM || type == PCIE_PORT_PCIE_TO_PCI_BRIDGE;
}

bool pcie_port_is_downstream_facing(enum pcie_port_type type)
{
        /* A PCI-to-PCIe bridge's PCIe side faces downstream too. */
        return type == PCIE_PORT_ROOT_PORT || type == PCIE_PORT_DOWNSTREAM ||
               type == PCIE_PORT_PCI_TO_PCIE_BRIDGE;
}
