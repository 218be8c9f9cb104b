// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uncore_discovery.c - Intel uncore PMON self-discovery. See the header.
 */
#include "uncore_discovery.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw_env.h"
#include "pci_regs.h"
#include "pcie_monitor.h"
#include "sample_set.h"

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

/* ---- discovery through the seam ---- */

int uncore_cpu_id_parse(const char *text, unsigned int *family, unsigned int *model)
{
        const char *p;

        *family = *model = 0;
        /* /sys/devices/system/cpu/modalias: "cpu:type:x86,ven0000fam0006mod008F:..." */
        p = strstr(text, "fam");
        if (!strncmp(text, "cpu:type:x86,", 13) && p) {
                unsigned int fam, mod;

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
        if (!p || sscanf(p + 1, "%u", family) != 1)
                return -EBADMSG;
        p = strstr(p, "\nmodel");
        while (p && p[6] != '\t' && p[6] != ' ' && p[6] != ':')
                p = strstr(p + 1, "\nmodel");
        if (!p || !(p = strchr(p + 1, ':')) || sscanf(p + 1, "%u", model) != 1)
                return -EBADMSG;
        return 0;
}

int uncore_cpu_id(const struct hw_env *env, unsigned int *family, unsigned int *model)
{
        char *text = malloc(HW_FILE_MAX);
        int err = -ENOENT;

        *family = *model = 0;
        if (!text)
                return -ENOMEM;
        /* modalias is there on every x86 kernel; cpuinfo is the fallback
         * (too long to read whole on big machines, where modalias exists). */
        if (hw_read_file(env, HW_SYSFS, text, HW_FILE_MAX, "devices/system/cpu/modalias") > 0)
                err = uncore_cpu_id_parse(text, family, model);
        if (err && hw_read_file(env, HW_PROCFS, text, HW_FILE_MAX, "cpuinfo") > 0)
                err = uncore_cpu_id_parse(text, family, model);
        free(text);
        return err;
}

/* A function found by the scan, before its table is read. */
struct candidate {
        struct pci_addr addr;
        uint16_t device_id;
        struct uncore_dvsec dvsec;
        int bar_err;
        uint64_t bar;
};

struct scan_ctx {
        struct uncore_inventory *inv;
        struct candidate *cand;
        size_t count, cap;
        int err;
};

static int visit(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t cfg_len)
{
        struct scan_ctx *sc = ctx;
        struct uncore_dvsec dvsec;
        struct candidate *c;
        int err;

        if (cfg_len < PCI_STD_HEADER_SIZE)
                return 0;
        err = uncore_find_pmon_dvsec(cfg, cfg_len, &dvsec, &sc->inv->other_dvsecs);
        if (err == -ENODATA && (get32(cfg, PCI_VENDOR_ID) & 0xffff) == UNCORE_INTEL_VENDOR)
                sc->inv->short_config++;
        if (err == -ENOENT || err == -ENODATA)
                return 0;
        /* PCM and the kernel look at Intel functions only. */
        if ((get32(cfg, PCI_VENDOR_ID) & 0xffff) != UNCORE_INTEL_VENDOR)
                return 0;
        if (sc->count == sc->cap) {
                size_t ncap = sc->cap ? sc->cap * 2 : 4;
                struct candidate *n = realloc(sc->cand, ncap * sizeof(*n));

                if (!n) {
                        sc->err = -ENOMEM;
                        return 1;
                }
                sc->cand = n;
                sc->cap = ncap;
        }
        c = &sc->cand[sc->count++];
        memset(c, 0, sizeof(*c));
        c->addr = *addr;
        c->device_id = (uint16_t)(get32(cfg, PCI_VENDOR_ID) >> 16);
        c->dvsec = dvsec;
        c->bar_err = err ? err : uncore_bar_address(cfg, cfg_len, dvsec.bir, &c->bar);
        return 0;
}

/* BAR @bir's size from sysfs `resource` ("start end flags" per line). */
static uint64_t resource_size(const struct hw_env *env, const char *bdf, unsigned int bir)
{
        char text[2048];
        const char *p = text;
        unsigned long long start, end, flags;

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/resource", bdf) <=
            0)
                return 0;
        for (unsigned int i = 0; i < bir && p; i++) {
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        if (!p || sscanf(p, "%llx %llx %llx", &start, &end, &flags) != 3 || end <= start)
                return 0;
        return end - start + 1;
}

static int numa_node_of(const struct hw_env *env, const char *bdf)
{
        char text[32];
        int node;

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/numa_node", bdf) <=
                0 ||
            sscanf(text, "%d", &node) != 1)
                return -1;
        return node;
}

static int fail_source(const struct hw_env *env, struct uncore_source *s, int err, const char *bdf,
                       const char *what)
{
        s->error = err;
        snprintf(s->message, sizeof(s->message), "%s", what);
        hw_logf(env, HW_LOG_WARNING, "uncore discovery: %s: %s", bdf, what);
        return err;
}

/* Copies @len bytes of the mapped table into @buf with 8-byte reads. */
static int copy_region(const struct hw_env *env, const struct mmio_region *r, uint8_t *buf,
                       size_t len)
{
        for (size_t off = 0; off + 8 <= len; off += 8) {
                uint64_t v;
                int err = env->mmio->read64(env->mmio->ctx, r, off, &v);

                if (err)
                        return err;
                for (int b = 0; b < 8; b++)
                        buf[off + (size_t)b] = (uint8_t)(v >> (8 * b));
        }
        return 0;
}

/* Maps @len bytes of the table, copies them into a new buffer. */
static int read_table_bytes(const struct hw_env *env, const char *path, size_t len, uint8_t **out)
{
        struct mmio_region *r = NULL;
        uint8_t *buf;
        int err;

        *out = NULL;
        len &= ~(size_t)7;
        buf = calloc(1, len ? len : 8);
        if (!buf)
                return -ENOMEM;
        err = env->mmio->map(env->mmio->ctx, path, 0, len, &r);
        if (!err) {
                err = copy_region(env, r, buf, len);
                env->mmio->unmap(env->mmio->ctx, r);
        }
        if (err) {
                free(buf);
                return err;
        }
        *out = buf;
        return 0;
}

static void read_source(const struct hw_env *env, const struct candidate *c,
                        struct uncore_source *s)
{
        char bdf[PCI_BDF_LEN], rel[96], path[4096], why[160];
        struct uncore_global g;
        size_t first, want;
        uint8_t *image;
        int err;

        pci_addr_format(&c->addr, bdf);
        s->addr = c->addr;
        s->device_id = c->device_id;
        s->dvsec = c->dvsec;
        s->bar = c->bar;
        s->numa_node = numa_node_of(env, bdf);
        if (c->bar_err) {
                snprintf(why, sizeof(why),
                         c->bar_err == -EBADMSG ? "PMON discovery DVSEC at 0x%03x has a bad BIR "
                                                  "dword 0x%08x"
                                                : "PMON discovery DVSEC at 0x%03x names BAR %u, "
                                                  "which is not a usable memory BAR",
                         c->dvsec.offset,
                         c->bar_err == -EBADMSG ? c->dvsec.bir_word : c->dvsec.bir);
                fail_source(env, s, c->bar_err, bdf, why);
                return;
        }
        if (!env->mmio) {
                fail_source(env, s, -ENODEV, bdf, "no MMIO access in this environment");
                return;
        }
        s->bar_size = resource_size(env, bdf, c->dvsec.bir);
        snprintf(rel, sizeof(rel), "bus/pci/devices/%s/resource%u", bdf, c->dvsec.bir);
        err = hw_path(env, HW_SYSFS, path, sizeof(path), rel);
        if (err) {
                fail_source(env, s, err, bdf, "no sysfs root to map the table from");
                return;
        }
        /* The global entry first: it says how long the table is. */
        first = s->bar_size && s->bar_size < 4096 ? (size_t)s->bar_size : 4096;
        err = read_table_bytes(env, path, first, &image);
        if (!err) {
                err = uncore_global_decode(image, &g);
                free(image);
                if (err) {
                        fail_source(env, s, err, bdf,
                                    "no discovery table at the BAR's base (global entry "
                                    "empty, or stride/unit count invalid)");
                        return;
                }
        }
        if (err) {
                snprintf(why, sizeof(why), "cannot map %s: %s%s", rel, strerror(-err),
                         err == -EACCES || err == -EPERM ? " (reading the table needs root)" : "");
                fail_source(env, s, err, bdf, why);
                return;
        }
        want = uncore_table_bytes(&g);
        if (s->bar_size && want > s->bar_size)
                want = (size_t)s->bar_size; /* parsed as truncated below */
        err = read_table_bytes(env, path, want, &image);
        if (err) {
                snprintf(why, sizeof(why), "cannot read %zu table bytes from %s: %s", want, rel,
                         strerror(-err));
                fail_source(env, s, err, bdf, why);
                return;
        }
        err = uncore_table_parse(image, want, &s->table);
        free(image);
        if (err) {
                fail_source(env, s, err, bdf, "the discovery table does not parse");
                return;
        }
        if (s->table.truncated)
                hw_logf(env, HW_LOG_WARNING,
                        "uncore discovery: %s: the table lists %u units but the BAR holds only "
                        "%zu bytes; %zu units left out",
                        bdf, g.max_units, want, s->table.truncated);
}

static int candidate_compare(const void *a, const void *b)
{
        return pci_addr_compare(&((const struct candidate *)a)->addr,
                                &((const struct candidate *)b)->addr);
}

int uncore_discover(const struct hw_env *env, struct uncore_inventory **out)
{
        struct scan_ctx sc = {0};
        struct uncore_inventory *inv;
        int err;

        *out = NULL;
        if (!env->pci)
                return -ENODEV;
        inv = calloc(1, sizeof(*inv));
        if (!inv)
                return -ENOMEM;
        sc.inv = inv;
        err = pci_source_scan(env->pci, visit, &sc);
        if (sc.err)
                err = sc.err;
        if (err) {
                free(sc.cand);
                free(inv);
                return err < 0 ? err : -EIO;
        }
        uncore_cpu_id(env, &inv->cpu_family, &inv->cpu_model);
        inv->platform = uncore_platform_of(inv->cpu_family, inv->cpu_model);
        if (sc.count) {
                inv->sources = calloc(sc.count, sizeof(*inv->sources));
                if (!inv->sources) {
                        free(sc.cand);
                        free(inv);
                        return -ENOMEM;
                }
        }
        /* libpci lists functions in no particular order. (qsort wants a
         * valid pointer even for 0 elements: cand is NULL then.) */
        if (sc.count > 1)
                qsort(sc.cand, sc.count, sizeof(*sc.cand), candidate_compare);
        for (size_t i = 0; i < sc.count; i++)
                read_source(env, &sc.cand[i], &inv->sources[inv->source_count++]);
        free(sc.cand);
        *out = inv;
        return 0;
}

void uncore_inventory_free(struct uncore_inventory *inv)
{
        if (!inv)
                return;
        for (size_t i = 0; i < inv->source_count; i++)
                uncore_table_clear(&inv->sources[i].table);
        free(inv->sources);
        free(inv);
}

size_t uncore_inventory_count(const struct uncore_inventory *inv, unsigned int type)
{
        size_t n = 0;

        for (size_t i = 0; i < inv->source_count; i++)
                for (size_t k = 0; k < inv->sources[i].table.unit_count; k++)
                        n += inv->sources[i].table.units[k].type == type;
        return n;
}

static void add_label(struct pcie_sample *s, const char *name, const char *value)
{
        if (value && *value && s->label_count < PCIE_SAMPLE_MAX_LABELS)
                s->labels[s->label_count++] = (struct pcie_label){name, value};
}

int uncore_inventory_samples(const struct uncore_inventory *inv, const char *extra_name,
                             const char *extra_value, struct sample_set *out)
{
        int err = 0;

        for (size_t i = 0; i < inv->source_count && !err; i++) {
                const struct uncore_source *src = &inv->sources[i];
                const struct uncore_table *t = &src->table;
                char bdf[PCI_BDF_LEN], bar[24], units[16], invalid[16], skipped[16], trunc[16];
                struct pcie_sample s = {.metric = "pcie_uncore_discovery_info",
                                        .type = "uncore_info",
                                        .kind = PCIE_METRIC_INFO,
                                        .gauge = 1};

                pci_addr_format(&src->addr, bdf);
                snprintf(bar, sizeof(bar), "0x%llx", (unsigned long long)src->bar);
                snprintf(units, sizeof(units), "%zu", t->unit_count);
                snprintf(invalid, sizeof(invalid), "%zu", t->invalid);
                snprintf(skipped, sizeof(skipped), "%zu", t->skipped);
                snprintf(trunc, sizeof(trunc), "%zu", t->truncated);
                s.instance = bdf;
                s.type_instance = "discovery";
                add_label(&s, "discovery", bdf);
                add_label(&s, "platform", uncore_platform_name(inv->platform));
                add_label(&s, "bar", bar);
                add_label(&s, "units", units);
                add_label(&s, "invalid", invalid);
                add_label(&s, "skipped", skipped);
                add_label(&s, "truncated", trunc);
                add_label(&s, "error", src->error ? src->message : "");
                if (extra_name)
                        add_label(&s, extra_name, extra_value);
                err = sample_set_add(out, &s);

                /* Units per box type and access: a few dozen series at most. */
                for (size_t k = 0; k < t->unit_count && !err; k++) {
                        const struct uncore_unit *u = &t->units[k];
                        const char *name = uncore_box_type_name(inv->platform, u->type);
                        char type_id[8], type_name[24], ti[48];
                        size_t n = 0;
                        bool first = true;

                        for (size_t j = 0; j < t->unit_count; j++) {
                                if (t->units[j].type != u->type || t->units[j].access != u->access)
                                        continue;
                                first = first && j >= k;
                                n++;
                        }
                        if (!first)
                                continue;
                        snprintf(type_id, sizeof(type_id), "%u", u->type);
                        snprintf(type_name, sizeof(type_name), "%s", name ? name : "");
                        if (!name)
                                snprintf(type_name, sizeof(type_name), "type_%u", u->type);
                        snprintf(ti, sizeof(ti), "%s-%s", type_name, uncore_access_name(u->access));
                        s = (struct pcie_sample){.metric = "pcie_uncore_units",
                                                 .type = "uncore_units",
                                                 .kind = PCIE_METRIC_GAUGE,
                                                 .instance = bdf,
                                                 .type_instance = ti,
                                                 .gauge = (double)n};
                        add_label(&s, "discovery", bdf);
                        add_label(&s, "type", type_name);
                        add_label(&s, "type_id", type_id);
                        add_label(&s, "access", uncore_access_name(u->access));
                        if (extra_name)
                                add_label(&s, extra_name, extra_value);
                        err = sample_set_add(out, &s);
                }
        }
        return err;
}
