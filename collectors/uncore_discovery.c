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
#include "pcie_families.h"
#include "pci_regs.h"
#include "pci_source.h"
#include "sample.h"

/* ---- discovery through the seam ---- */

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
        unsigned int vendor;
        int err;

        if (cfg_len < PCI_STD_HEADER_SIZE)
                return 0;
        vendor = cfg[PCI_VENDOR_ID] | (unsigned int)cfg[PCI_VENDOR_ID + 1] << 8;
        err = uncore_find_pmon_dvsec(cfg, cfg_len, &dvsec, &sc->inv->other_dvsecs);
        if (err == -ENODATA && vendor == UNCORE_INTEL_VENDOR)
                sc->inv->short_config++;
        if (err == -ENOENT || err == -ENODATA)
                return 0;
        /* PCM and the kernel look at Intel functions only. */
        if (vendor != UNCORE_INTEL_VENDOR)
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
        c->device_id = (uint16_t)(cfg[PCI_DEVICE_ID] | cfg[PCI_DEVICE_ID + 1] << 8);
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
        /* libpci lists functions in no particular order. (No qsort() of
         * an empty list: its array may be NULL, undefined for qsort.) */
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

int uncore_inventory_samples(const struct uncore_inventory *inv, struct sample_set *out)
{
        struct sample_emitter em = {.set = out};
        int err = 0;

        for (size_t i = 0; i < inv->source_count && !err; i++) {
                const struct uncore_source *src = &inv->sources[i];
                const struct uncore_table *t = &src->table;
                char bdf[PCI_BDF_LEN], bar[24], units[16], invalid[16], skipped[16], trunc[16];
                struct pcie_sample s;

                pci_addr_format(&src->addr, bdf);
                snprintf(bar, sizeof(bar), "0x%llx", (unsigned long long)src->bar);
                snprintf(units, sizeof(units), "%zu", t->unit_count);
                snprintf(invalid, sizeof(invalid), "%zu", t->invalid);
                snprintf(skipped, sizeof(skipped), "%zu", t->skipped);
                snprintf(trunc, sizeof(trunc), "%zu", t->truncated);
                sample_init(&s, PCIE_FAM_UNCORE_DISCOVERY_INFO);
                s.gauge = 1;
                sample_label(&s, "discovery", bdf);
                sample_label(&s, "platform", uncore_platform_name(inv->platform));
                sample_label(&s, "bar", bar);
                sample_label(&s, "units", units);
                sample_label(&s, "invalid", invalid);
                sample_label(&s, "skipped", skipped);
                sample_label(&s, "truncated", trunc);
                sample_label(&s, "error", src->error ? src->message : "");
                err = sample_emit(&em, &s);

                /* Units per box type and access: a few dozen series at most. */
                for (size_t k = 0; k < t->unit_count && !err; k++) {
                        const struct uncore_unit *u = &t->units[k];
                        const char *name = uncore_box_type_name(inv->platform, u->type);
                        char type_id[8], type_name[24];
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
                        sample_init(&s, PCIE_FAM_UNCORE_UNITS);
                        s.gauge = (double)n;
                        sample_label(&s, "discovery", bdf);
                        sample_label(&s, "type", type_name);
                        sample_label(&s, "type_id", type_id);
                        sample_label(&s, "access", uncore_access_name(u->access));
                        err = sample_emit(&em, &s);
                }
        }
        return err;
}
