// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uncore_table.c - Intel uncore PMON discovery: the pure decoders. See
 * uncore_table.h.
 */
#include "uncore_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci_regs.h"

static uint32_t get32(const uint8_t *p, size_t off)
{
        return (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 |
               (uint32_t)p[off + 3] << 24;
}

static uint64_t get64(const uint8_t *p, size_t off)
{
        return (uint64_t)get32(p, off) | (uint64_t)get32(p, off + 4) << 32;
}

static uint64_t bits(uint64_t v, unsigned int lo, unsigned int hi)
{
        unsigned int w = hi - lo + 1;

        return w >= 64 ? v : (v >> lo) & ((1ULL << w) - 1);
}

/* ---- DVSEC and BAR ---- */

int uncore_find_pmon_dvsec(const uint8_t *cfg, size_t len, struct uncore_dvsec *out,
                           unsigned int *others)
{
        /* One bit per dword of extended space: each header is visited once. */
        uint8_t seen[(PCI_CFG_SPACE_EXP_SIZE - PCI_CFG_SPACE_SIZE) / 4 / 8] = {0};
        size_t off = PCI_CFG_SPACE_SIZE;

        memset(out, 0, sizeof(*out));
        if (len > PCI_CFG_SPACE_EXP_SIZE)
                len = PCI_CFG_SPACE_EXP_SIZE;
        if (len <= PCI_CFG_SPACE_SIZE)
                return -ENODATA;
        while (off >= PCI_CFG_SPACE_SIZE && off + 4 <= len) {
                size_t slot = (off - PCI_CFG_SPACE_SIZE) / 4;
                uint32_t header = get32(cfg, off);

                if (header == 0 || header == 0xffffffffu || seen[slot / 8] & (1u << (slot % 8)))
                        break;
                seen[slot / 8] |= (uint8_t)(1u << (slot % 8));
                if (PCI_EXT_CAP_ID(header) == PCI_EXT_CAP_ID_DVSEC && off + 12 <= len) {
                        uint32_t h1 = get32(cfg, off + PCI_DVSEC_HEADER1);
                        uint16_t id = (uint16_t)get32(cfg, off + PCI_DVSEC_HEADER2);

                        if ((h1 & 0xffff) == UNCORE_INTEL_VENDOR && id == UNCORE_DVSEC_PMON_ID) {
                                out->offset = (uint16_t)off;
                                out->vendor = (uint16_t)h1;
                                out->revision = (uint8_t)bits(h1, 16, 19);
                                out->length = (uint16_t)bits(h1, 20, 31);
                                out->id = id;
                                if (off + 16 > len)
                                        return -EBADMSG;
                                out->bir_word = get32(cfg, off + 0xc);
                                out->bir = out->bir_word & 0x7;
                                /* The kernel insists the other bits are 0. */
                                if ((out->bir_word & ~0x7u) || out->bir >= PCI_STD_NUM_BARS)
                                        return -EBADMSG;
                                return 0;
                        }
                        if (others)
                                (*others)++;
                }
                off = PCI_EXT_CAP_NEXT(header);
        }
        return -ENOENT;
}

int uncore_bar_address(const uint8_t *cfg, size_t len, unsigned int bir, uint64_t *addr)
{
        size_t reg = PCI_BASE_ADDRESS_0 + 4 * (size_t)bir;
        uint32_t lo;
        uint64_t a;

        *addr = 0;
        if (len < PCI_STD_HEADER_SIZE)
                return -ENODATA;
        if (bir >= PCI_STD_NUM_BARS || (cfg[PCI_HEADER_TYPE] & PCI_HEADER_TYPE_MASK) != 0)
                return -EINVAL;
        lo = get32(cfg, reg);
        if (lo & PCI_BASE_ADDRESS_SPACE_IO)
                return -EINVAL;
        a = lo;
        if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64) {
                if (bir + 1 >= PCI_STD_NUM_BARS)
                        return -EINVAL;
                a |= (uint64_t)get32(cfg, reg + 4) << 32;
        }
        a &= ~(uint64_t)0xfff;
        if (!a)
                return -ENXIO;
        *addr = a;
        return 0;
}

const char *uncore_access_name(enum uncore_access a)
{
        switch (a) {
        case UNCORE_ACCESS_MSR:
                return "MSR";
        case UNCORE_ACCESS_MMIO:
                return "MMIO";
        case UNCORE_ACCESS_PCI:
                return "PCI";
        case UNCORE_ACCESS_NONE:
                break;
        }
        return "-";
}

static enum uncore_access access_of(uint64_t table1)
{
        unsigned int a = (unsigned int)bits(table1, 62, 63);

        return a <= UNCORE_ACCESS_PCI ? (enum uncore_access)a : UNCORE_ACCESS_NONE;
}

/* ---- table entries ---- */

int uncore_global_decode(const uint8_t *entry, struct uncore_global *out)
{
        uint64_t t1 = get64(entry, 0), ctl = get64(entry, 8), t3 = get64(entry, 16);

        memset(out, 0, sizeof(*out));
        if ((t1 == ~0ULL && ctl == ~0ULL) || (t1 == 0 && ctl == 0))
                return -EBADMSG;
        out->type = (uint8_t)bits(t1, 0, 7);
        out->stride = (uint8_t)bits(t1, 8, 15);
        out->max_units = (uint16_t)bits(t1, 16, 25);
        out->access = access_of(t1);
        out->ctl = ctl;
        out->status_offset = (uint8_t)bits(t3, 0, 7);
        out->num_status = (uint16_t)bits(t3, 8, 23);
        /* An entry is three words; a smaller stride would make entries
         * overlap, and stride 0 would read the global entry forever. */
        if (out->stride * 8u < UNCORE_ENTRY_BYTES || out->max_units == 0)
                return -EBADMSG;
        return 0;
}

enum uncore_unit_verdict uncore_unit_decode(const uint8_t *entry, struct uncore_unit *out)
{
        uint64_t t1 = get64(entry, 0), ctl = get64(entry, 8), t3 = get64(entry, 16);

        memset(out, 0, sizeof(*out));
        out->num_regs = (uint8_t)bits(t1, 0, 7);
        out->ctl_offset = (uint8_t)bits(t1, 8, 15);
        out->width = (uint8_t)bits(t1, 16, 23);
        out->ctr_offset = (uint8_t)bits(t1, 24, 31);
        out->status_offset = (uint8_t)bits(t1, 32, 39);
        out->access = access_of(t1);
        out->ctl = ctl;
        out->type = (uint16_t)bits(t3, 0, 15);
        out->box_id = (uint16_t)bits(t3, 16, 31);
        if (t1 == 0 || t1 == ~0ULL || ctl == 0 || ctl == ~0ULL || t3 == ~0ULL)
                return UNCORE_UNIT_INVALID;
        if (out->ctl_offset == 0 || out->ctr_offset == 0)
                return UNCORE_UNIT_SKIPPED;
        return UNCORE_UNIT_OK;
}

void uncore_unit_pci_location(const struct uncore_unit *u, struct pci_addr *addr,
                              unsigned int *offset)
{
        uint8_t devfn = (uint8_t)bits(u->ctl, 12, 19);

        addr->domain = (uint32_t)bits(u->ctl, 28, 30);
        addr->bus = (uint8_t)bits(u->ctl, 20, 27);
        addr->dev = devfn >> 3;
        addr->func = devfn & 7;
        *offset = (unsigned int)bits(u->ctl, 0, 11);
}

size_t uncore_table_bytes(const struct uncore_global *g)
{
        return ((size_t)g->max_units + 1) * g->stride * 8;
}

int uncore_table_parse(const uint8_t *image, size_t len, struct uncore_table *out)
{
        size_t stride;
        int err;

        memset(out, 0, sizeof(*out));
        if (len < UNCORE_ENTRY_BYTES)
                return -EBADMSG;
        err = uncore_global_decode(image, &out->global);
        if (err)
                return err;
        stride = (size_t)out->global.stride * 8;
        out->units = calloc(out->global.max_units, sizeof(*out->units));
        if (!out->units)
                return -ENOMEM;
        for (size_t i = 0; i < out->global.max_units; i++) {
                size_t off = (i + 1) * stride;
                struct uncore_unit u;

                if (off > len || len - off < UNCORE_ENTRY_BYTES) {
                        out->truncated = out->global.max_units - i;
                        break;
                }
                switch (uncore_unit_decode(image + off, &u)) {
                case UNCORE_UNIT_OK:
                        out->units[out->unit_count++] = u;
                        break;
                case UNCORE_UNIT_INVALID:
                        out->invalid++;
                        break;
                case UNCORE_UNIT_SKIPPED:
                        out->skipped++;
                        break;
                }
        }
        return 0;
}

void uncore_table_clear(struct uncore_table *t)
{
        free(t->units);
        memset(t, 0, sizeof(*t));
}

/* ---- platforms ---- */

enum uncore_platform uncore_platform_of(unsigned int family, unsigned int model)
{
        if (family != 6)
                return UNCORE_PLATFORM_UNKNOWN;
        switch (model) {
        case 0x8f: /* Sapphire Rapids */
        case 0xcf: /* Emerald Rapids */
                return UNCORE_PLATFORM_SPR;
        case 0xad: /* Granite Rapids */
        case 0xae: /* Granite Rapids D */
        case 0xaf: /* Sierra Forest */
        case 0xdd: /* Clearwater Forest */
                return UNCORE_PLATFORM_GNR;
        default:
                return UNCORE_PLATFORM_UNKNOWN;
        }
}

const char *uncore_platform_name(enum uncore_platform p)
{
        switch (p) {
        case UNCORE_PLATFORM_SPR:
                return "SPR/EMR";
        case UNCORE_PLATFORM_GNR:
                return "GNR/SRF";
        case UNCORE_PLATFORM_UNKNOWN:
                break;
        }
        return "unknown";
}

const char *uncore_box_type_name(enum uncore_platform p, unsigned int type)
{
        /* kernel-facts §5.3; types 5 on SPR and the gaps have no name. */
        static const char *const spr[] = {"CHA", "IIO", "IRP",   "M2PCIe", "PCU",
                                          NULL,  "IMC", "M2M",   "UPI",    "M3UPI",
                                          NULL,  "MDF", "CXLCM", "CXLDP",  "HBM"};
        static const char *const gnr[] = {"CHA",   "IIO",   "IRP",     NULL,      "PCU",   "UBOX",
                                          "IMC",   "M2M",   "UPI",     NULL,      NULL,    NULL,
                                          "CXLCM", "CXLDP", NULL,      "B2HOT",   "B2CMI", "B2CXL",
                                          "B2UPI", NULL,    "MDF_SBO", "PCIEX16", "PCIEX8"};
        /* Where the platform is not known only the names both agree on. */
        static const char *const common[] = {"CHA", "IIO", "IRP", NULL, "PCU", NULL,    "IMC",
                                             NULL,  "UPI", NULL,  NULL, NULL,  "CXLCM", "CXLDP"};
        const char *const *names = common;
        size_t n = sizeof(common) / sizeof(common[0]);

        if (p == UNCORE_PLATFORM_SPR) {
                names = spr;
                n = sizeof(spr) / sizeof(spr[0]);
        } else if (p == UNCORE_PLATFORM_GNR) {
                names = gnr;
                n = sizeof(gnr) / sizeof(gnr[0]);
                /* GNR has no M2M at 7: the kernel's GNR table leaves it out. */
                if (type == 7)
                        return NULL;
        }
        return type < n ? names[type] : NULL;
}

/* ---- CPU identity ---- */

int uncore_cpu_id_parse(const char *text, unsigned int *family, unsigned int *model)
{
        unsigned int fam, mod;
        const char *p;

        /* Both stay 0 unless both were read (a half-read cpuinfo must not
         * pass for family 6, model 0). */
        *family = *model = 0;
        /* /sys/devices/system/cpu/modalias: "cpu:type:x86,ven0000fam0006mod008F:..." */
        p = strstr(text, "fam");
        if (!strncmp(text, "cpu:type:x86,", 13) && p) {
                if (sscanf(p, "fam%4xmod%4x", &fam, &mod) != 2)
                        return -EBADMSG;
                *family = fam;
                *model = mod;
                return 0;
        }
        /* /proc/cpuinfo: the first processor's "cpu family" and "model". */
        p = strstr(text, "\ncpu family");
        if (!p && !strncmp(text, "cpu family", 10))
                p = text - 1;
        if (!p)
                return -EBADMSG;
        p = strchr(p + 1, ':');
        if (!p || sscanf(p + 1, "%u", &fam) != 1)
                return -EBADMSG;
        p = strstr(p, "\nmodel");
        while (p && p[6] != '\t' && p[6] != ' ' && p[6] != ':')
                p = strstr(p + 1, "\nmodel");
        if (!p || !(p = strchr(p + 1, ':')) || sscanf(p + 1, "%u", &mod) != 1)
                return -EBADMSG;
        *family = fam;
        *model = mod;
        return 0;
}
