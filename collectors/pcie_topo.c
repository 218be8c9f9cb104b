// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_topo.c - build the PCI(e) tree from scanned functions.
 */
#include "pcie_topo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "pci_regs.h"

/* Where a function goes in address order: its address packed so that
 * integer order is pci_addr_compare()'s, and its place in funcs. */
struct sort_key {
        uint64_t addr;
        size_t at;
};

struct pcie_topo {
        struct pcie_function *funcs;
        struct sort_key *keys; /* one per function, grown with funcs */
        size_t count, capacity;
        size_t truncated;
        size_t duplicates;
};

struct pcie_topo *pcie_topo_new(void)
{
        return calloc(1, sizeof(struct pcie_topo));
}

void pcie_topo_free(struct pcie_topo *topo)
{
        if (!topo)
                return;
        free(topo->funcs);
        free(topo->keys);
        free(topo);
}

int pcie_topo_add(struct pcie_topo *topo, const struct pci_addr *addr, const uint8_t *cfg,
                  size_t cfg_len)
{
        struct pcie_function *f;
        int err;

        if (topo->count == topo->capacity) {
                size_t cap = topo->capacity ? topo->capacity * 2 : 64;
                struct pcie_function *grown = realloc(topo->funcs, cap * sizeof(*grown));
                struct sort_key *keys;

                if (!grown)
                        return -ENOMEM;
                topo->funcs = grown;
                keys = realloc(topo->keys, cap * sizeof(*keys));
                if (!keys)
                        return -ENOMEM;
                topo->keys = keys;
                topo->capacity = cap;
        }
        f = &topo->funcs[topo->count];
        memset(f, 0, sizeof(*f));
        f->addr = *addr;
        pci_addr_format(addr, f->bdf);
        f->cfg_len = cfg_len;
        f->numa_node = PCIE_NUMA_UNKNOWN;
        err = pcie_cfg_decode(cfg, cfg_len, &f->info);
        /* A function that reads all ones has gone away between listing and
         * reading (hot unplug, VF disable): leave it out. One we could not
         * read at all is kept so that it still shows up, without PCIe data. */
        if (err == -ENODEV)
                return 0;
        if (cfg_len < PCI_CFG_SPACE_SIZE)
                topo->truncated++;
        topo->count++;
        return 0;
}

static uint64_t addr_key(const struct pci_addr *a)
{
        return (uint64_t)a->domain << 24 | (uint64_t)a->bus << 16 | (uint64_t)a->dev << 8 | a->func;
}

static int compare_keys(const void *a, const void *b)
{
        const struct sort_key *x = a, *y = b;

        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * Put the functions in address order, those at one address in the order
 * they were added: the duplicate rule below needs that, and qsort()
 * promises no stability (glibc's merge sort happened to give it; its
 * quicksort fallback and other C libraries do not). The 16-byte keys are
 * sorted, with the insertion order as the last key, then each function
 * moves once, along the cycles of the permutation.
 */
static void sort_functions(struct pcie_topo *topo)
{
        struct sort_key *k = topo->keys;
        struct pcie_function held;

        for (size_t i = 0; i < topo->count; i++) {
                k[i].addr = addr_key(&topo->funcs[i].addr);
                k[i].at = i;
        }
        qsort(k, topo->count, sizeof(*k), compare_keys);
        /* Place i takes funcs[k[i].at]; a finished place gets k[i].at = i. */
        for (size_t i = 0; i < topo->count; i++) {
                size_t j = i;

                if (k[i].at == i)
                        continue;
                held = topo->funcs[i];
                while (k[j].at != i) {
                        size_t from = k[j].at;

                        topo->funcs[j] = topo->funcs[from];
                        k[j].at = j;
                        j = from;
                }
                topo->funcs[j] = held;
                k[j].at = j;
        }
}

/* Index of the bridge in @domain whose secondary bus is @bus. Among several
 * (broken firmware), the first in address order wins, as in lspci -t. */
static size_t find_bridge_to(const struct pcie_topo *topo, uint32_t domain, uint8_t bus,
                             size_t self)
{
        for (size_t i = 0; i < topo->count; i++) {
                const struct pcie_function *b = &topo->funcs[i];

                if (i != self && b->addr.domain == domain && b->info.is_bridge &&
                    b->info.secondary_bus == bus && b->info.secondary_bus != 0)
                        return i;
        }
        return PCIE_TOPO_NONE;
}

/*
 * Each function's parent: find_bridge_to() for every function, without its
 * scan of every function for each (quadratic: 1.1 M steps on 1,060
 * functions). The functions are sorted, so a domain is one range; in it the
 * first bridge in address order to each bus is kept in a table. Only a
 * bridge to its own bus (broken firmware) needs the scan, for the next one.
 */
static void link_parents_in(struct pcie_topo *topo, size_t lo, size_t hi)
{
        size_t first[256];

        for (unsigned int b = 0; b < 256; b++)
                first[b] = PCIE_TOPO_NONE;
        for (size_t i = lo; i < hi; i++) {
                const struct pcie_function *b = &topo->funcs[i];

                if (b->info.is_bridge && b->info.secondary_bus != 0 &&
                    first[b->info.secondary_bus] == PCIE_TOPO_NONE)
                        first[b->info.secondary_bus] = i;
        }
        for (size_t i = lo; i < hi; i++) {
                struct pcie_function *f = &topo->funcs[i];

                f->parent = first[f->addr.bus];
                if (f->parent == i)
                        f->parent = find_bridge_to(topo, f->addr.domain, f->addr.bus, i);
        }
}

static void link_parents(struct pcie_topo *topo)
{
        for (size_t lo = 0, hi; lo < topo->count; lo = hi) {
                for (hi = lo + 1;
                     hi < topo->count && topo->funcs[hi].addr.domain == topo->funcs[lo].addr.domain;
                     hi++)
                        ;
                link_parents_in(topo, lo, hi);
        }

        /* Depth, root bus and Root Port follow the parent chain. The chain
         * is bounded by the function count so a cycle of bridges (corrupt
         * bus numbers) cannot loop forever: we cut it where it repeats. */
        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];
                size_t cur = i, steps = 0;

                f->root_port = PCIE_TOPO_NONE;
                f->root_bus = f->addr.bus;
                while (cur != PCIE_TOPO_NONE && steps <= topo->count) {
                        const struct pcie_function *c = &topo->funcs[cur];

                        if (f->root_port == PCIE_TOPO_NONE &&
                            c->info.port_type == PCIE_PORT_ROOT_PORT)
                                f->root_port = cur;
                        f->root_bus = c->addr.bus;
                        cur = c->parent;
                        steps++;
                }
                if (cur != PCIE_TOPO_NONE) {
                        /* Cycle: treat this function as sitting on a root bus. */
                        f->parent = PCIE_TOPO_NONE;
                        f->root_bus = f->addr.bus;
                        steps = 1;
                }
                f->depth = steps ? (unsigned int)(steps - 1) : 0;
        }
}

/* The link partner of an upstream-facing function is its parent port; a
 * downstream-facing port's partner is the first function below it with a
 * link (function 0 of the device in the slot). */
static void link_partners(struct pcie_topo *topo)
{
        for (size_t i = 0; i < topo->count; i++)
                topo->funcs[i].partner = PCIE_TOPO_NONE;
        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];
                struct pcie_function *p;

                if (!f->info.has_link || !pcie_port_is_upstream_facing(f->info.port_type) ||
                    f->parent == PCIE_TOPO_NONE)
                        continue;
                p = &topo->funcs[f->parent];
                if (!p->info.has_link || !pcie_port_is_downstream_facing(p->info.port_type))
                        continue;
                f->partner = f->parent;
                if (p->partner == PCIE_TOPO_NONE)
                        p->partner = i;
        }
}

static void derive_links(struct pcie_topo *topo)
{
        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];
                const struct pcie_link_regs *partner = NULL;

                if (!f->info.has_link)
                        continue;
                if (f->partner != PCIE_TOPO_NONE)
                        partner = &topo->funcs[f->partner].info.link;
                f->link_up = pcie_link_is_up(&f->info.link);
                /* An empty slot or port with nothing below it has no
                 * partner to train against: not downtrained. */
                f->downtrained = pcie_link_is_downtrained(&f->info.link, partner) &&
                                 !(pcie_port_is_downstream_facing(f->info.port_type) && !partner);
                f->speed_vector = pcie_link_speed_vector(&f->info.link);
                f->common_max = pcie_link_common_max(&f->info.link, partner);
                f->capacity_current = f->link_up
                                          ? pcie_link_capacity_bytes(f->info.link.cur_speed_code,
                                                                     f->info.link.cur_width)
                                          : 0;
                f->capacity_max = pcie_link_capacity_bytes(pcie_speed_vector_max(f->speed_vector),
                                                           f->info.link.max_width);
        }
}

void pcie_topo_finish(struct pcie_topo *topo)
{
        size_t kept = 0;

        /* No functions: keys is still NULL, which qsort() must not get
         * even with a count of 0 (UBSan: nonnull-attribute). */
        if (topo->count > 1)
                sort_functions(topo);
        /* Drop repeated addresses (a dump may list a device twice); the
         * first one read wins, as with libpci's own lookups. */
        for (size_t i = 0; i < topo->count; i++) {
                if (kept && !pci_addr_compare(&topo->funcs[kept - 1].addr, &topo->funcs[i].addr)) {
                        topo->duplicates++;
                        continue;
                }
                topo->funcs[kept++] = topo->funcs[i];
        }
        topo->count = kept;
        link_parents(topo);
        link_partners(topo);
        derive_links(topo);
}

size_t pcie_topo_count(const struct pcie_topo *topo)
{
        return topo->count;
}

const struct pcie_function *pcie_topo_get(const struct pcie_topo *topo, size_t index)
{
        return index < topo->count ? &topo->funcs[index] : NULL;
}

struct pcie_function *pcie_topo_at(struct pcie_topo *topo, size_t index)
{
        return index < topo->count ? &topo->funcs[index] : NULL;
}

unsigned int pcie_topo_link_mps(const struct pcie_topo *topo, size_t port)
{
        unsigned int mps = 0;

        for (size_t i = 0; topo && port < topo->count && i < topo->count; i++) {
                const struct pcie_function *f = &topo->funcs[i];

                if (f->root_port == port && f->info.has_pcie && f->info.mps_bytes > mps)
                        mps = f->info.mps_bytes;
        }
        return mps;
}

size_t pcie_topo_find(const struct pcie_topo *topo, const struct pci_addr *addr)
{
        size_t lo = 0, hi = topo->count;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = pci_addr_compare(&topo->funcs[mid].addr, addr);

                if (!c)
                        return mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return PCIE_TOPO_NONE;
}

size_t pcie_topo_truncated(const struct pcie_topo *topo)
{
        return topo->truncated;
}

size_t pcie_topo_duplicates(const struct pcie_topo *topo)
{
        return topo->duplicates;
}

static int add_visitor(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t len)
{
        return pcie_topo_add(ctx, addr, cfg, len);
}

static int read_numa_node(const struct hw_env *env, const char *bdf)
{
        char buf[32];
        char *end;
        long v;

        if (hw_read_file(env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s/numa_node", bdf) <= 0)
                return PCIE_NUMA_UNKNOWN;
        v = strtol(buf, &end, 10);
        if (end == buf || v < 0 || v > 65535)
                return PCIE_NUMA_UNKNOWN;
        return (int)v;
}

static int read_width(const struct hw_env *env, const char *bdf, const char *name, uint8_t *width)
{
        char text[32], *end;
        long w;

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/%s", bdf, name) <=
            0)
                return -ENOENT;
        w = strtol(text, &end, 10);
        if (end == text || (*end && *end != '\n') || w < 0 || w > 32)
                return -EINVAL;
        *width = (uint8_t)w;
        return 0;
}

static int read_speed(const struct hw_env *env, const char *bdf, const char *name, uint8_t *code)
{
        char text[64];

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/%s", bdf, name) <=
            0)
                return -ENOENT;
        return pcie_speed_code_parse(text, code);
}

/* The link as the kernel's sysfs files show it (4.13 and later); false
 * when a file is missing or says nothing usable. */
static bool read_sysfs_link(const struct hw_env *env, const char *bdf, struct pcie_link_regs *out)
{
        struct pcie_link_regs l = {0};

        if (read_speed(env, bdf, "max_link_speed", &l.max_speed_code) || !l.max_speed_code ||
            read_width(env, bdf, "max_link_width", &l.max_width) || !l.max_width ||
            read_speed(env, bdf, "current_link_speed", &l.cur_speed_code) ||
            read_width(env, bdf, "current_link_width", &l.cur_width))
                return false;
        *out = l;
        return true;
}

/*
 * Without CAP_SYS_ADMIN the kernel shows a reader only the 64-byte header
 * of config space: no PCI Express capability, so no link registers. The
 * sysfs link files are world-readable and say the same speeds and widths.
 * The port types are in the capability too, so the other end of each link
 * is found from the tree: a function's link leads to its parent bridge,
 * except for a bridge at an even depth below a root bus (a switch's
 * downstream port: its parent is the switch's upstream port, inside the
 * switch), whose link leads to its first child. Conventional PCI bridges
 * below PCIe ports would confuse this; they are rare on machines that
 * have PCIe links to watch.
 */
static void sysfs_links(const struct hw_env *env, struct pcie_topo *topo)
{
        bool any = false;

        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];

                if (f->info.has_pcie || f->cfg_len >= PCI_CFG_SPACE_SIZE ||
                    !read_sysfs_link(env, f->bdf, &f->info.link))
                        continue;
                f->info.has_link = true;
                f->link_from_sysfs = true;
                any = true;
        }
        if (!any)
                return;
        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];
                struct pcie_function *p;

                if (!f->link_from_sysfs || f->parent == PCIE_TOPO_NONE)
                        continue;
                p = &topo->funcs[f->parent];
                if (!p->link_from_sysfs || (f->info.is_bridge && f->depth % 2 == 0))
                        continue;
                f->partner = f->parent;
                if (p->partner == PCIE_TOPO_NONE)
                        p->partner = i;
        }
        derive_links(topo);
}

/* Tell the source whose names are coming (pci_source_names_for(): only
 * their lines of pci.ids are loaded). Without memory for the list, the
 * look-ups load the whole of it, as they would anyway. */
static void names_for_functions(struct pci_source *src, const struct pcie_topo *topo)
{
        uint32_t *ids;

        if (!topo->count)
                return; /* no names to look up */
        ids = malloc(topo->count * sizeof(*ids));
        if (!ids)
                return;
        for (size_t i = 0; i < topo->count; i++)
                ids[i] =
                    (uint32_t)topo->funcs[i].info.vendor_id << 16 | topo->funcs[i].info.device_id;
        (void)pci_source_names_for(src, ids, topo->count);
        free(ids);
}

int pcie_topo_scan(const struct hw_env *env, const struct pcie_topo_opts *opts,
                   struct pcie_topo **out)
{
        struct pcie_topo *topo;
        int err;

        if (!env->pci)
                return -ENODEV;
        topo = pcie_topo_new();
        if (!topo)
                return -ENOMEM;
        err = pci_source_scan(env->pci, add_visitor, topo);
        if (err) {
                pcie_topo_free(topo);
                return err;
        }
        pcie_topo_finish(topo);
        if (opts && opts->names)
                names_for_functions(env->pci, topo);
        if (opts && opts->read_sysfs && topo->truncated)
                sysfs_links(env, topo);
        for (size_t i = 0; i < topo->count; i++) {
                struct pcie_function *f = &topo->funcs[i];

                if (opts && opts->read_sysfs)
                        f->numa_node = read_numa_node(env, f->bdf);
                if (opts && opts->names)
                        pci_source_names(env->pci, f->info.vendor_id, f->info.device_id,
                                         f->vendor_name, sizeof(f->vendor_name), f->device_name,
                                         sizeof(f->device_name));
        }
        *out = topo;
        return 0;
}
