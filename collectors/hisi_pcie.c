/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hisi_pcie.c - hisi_pcie PMU pairs and discovery. See hisi_pcie.h.
 */
#include "hisi_pcie.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "pcie_topo.h"
#include "perf_pmu.h"

#define EXTENDED_BIT 0x10000u

static const struct hisi_pcie_pair_info pairs[HISI_PAIRS] = {
    [HISI_RX_MWR_LATENCY] = {"rx_mwr", "rx", "mwr", false, 0x0010, "rx_mwr_latency", "rx_mwr_cnt"},
    [HISI_RX_MRD_LATENCY] = {"rx_mrd", "rx", "mrd", false, 0x0210, "rx_mrd_latency", "rx_mrd_cnt"},
    [HISI_TX_MRD_LATENCY] = {"tx_mrd", "tx", "mrd", false, 0x0011, "tx_mrd_latency", "tx_mrd_cnt"},
    [HISI_RX_MWR_FLUX] = {"rx_mwr", "rx", "mwr", true, 0x0104, "rx_mwr_flux", "rx_mwr_time"},
    [HISI_RX_MRD_FLUX] = {"rx_mrd", "rx", "mrd", true, 0x0804, "rx_mrd_flux", "rx_mrd_time"},
    [HISI_RX_CPL_FLUX] = {"rx_cpl", "rx", "cpl", true, 0x2004, "rx_cpl_flux", "rx_cpl_time"},
    [HISI_TX_MWR_FLUX] = {"tx_mwr", "tx", "mwr", true, 0x0105, "tx_mwr_flux", "tx_mwr_time"},
    [HISI_TX_MRD_FLUX] = {"tx_mrd", "tx", "mrd", true, 0x0405, "tx_mrd_flux", "tx_mrd_time"},
    [HISI_TX_CPL_FLUX] = {"tx_cpl", "tx", "cpl", true, 0x1005, "tx_cpl_flux", "tx_cpl_time"},
};

const struct hisi_pcie_pair_info *hisi_pcie_pair_info(enum hisi_pcie_pair pair)
{
        return (unsigned int)pair < HISI_PAIRS ? &pairs[pair] : NULL;
}

enum hisi_pcie_pair hisi_pcie_pair_by_code(uint32_t code)
{
        for (int i = 0; i < HISI_PAIRS; i++)
                if (pairs[i].code == code)
                        return (enum hisi_pcie_pair)i;
        return HISI_PAIRS;
}

int hisi_pcie_parse_name(const char *name, unsigned int *sicl, unsigned int *core)
{
        unsigned int s, c;
        int used = 0;

        if (strncmp(name, "hisi_pcie", 9) != 0 || name[9] < '0' || name[9] > '9')
                return -EINVAL;
        if (sscanf(name, "hisi_pcie%u_core%u%n", &s, &c, &used) != 2 || name[used] != '\0')
                return -EINVAL;
        *sicl = s;
        *core = c;
        return 0;
}

/* The `config` value an event of this PMU is built from (its event code). */
static int event_code(const struct perf_pmu *pmu, const struct perf_pmu_event *ev, uint32_t *code)
{
        struct perf_event_attr attr;
        const struct perf_format *fmt = perf_pmu_format(pmu, "event");

        if (perf_pmu_event_attr(pmu, ev->name, &attr))
                return -ENOENT;
        *code = (uint32_t)(fmt ? perf_format_extract(fmt, &attr) : attr.config);
        return 0;
}

/*
 * Pairs: every event whose code is a known primary code, and the event
 * with the same code plus the extended bit. The kernel's names are kept
 * for logging; a name that says another pair (5.17) is noted.
 */
static void find_pairs(const struct hw_env *env, struct hisi_pcie_pmu *h)
{
        size_t n = perf_pmu_event_count(h->pmu);

        for (size_t i = 0; i < n; i++) {
                const struct perf_pmu_event *ev = perf_pmu_event_at(h->pmu, i);
                uint32_t code;
                enum hisi_pcie_pair pair;

                if (event_code(h->pmu, ev, &code) || (code & EXTENDED_BIT))
                        continue;
                pair = hisi_pcie_pair_by_code(code);
                if (pair == HISI_PAIRS)
                        continue;
                for (size_t j = 0; j < n; j++) {
                        const struct perf_pmu_event *sec = perf_pmu_event_at(h->pmu, j);
                        uint32_t sec_code;

                        if (event_code(h->pmu, sec, &sec_code) || sec_code != (code | EXTENDED_BIT))
                                continue;
                        h->offered[pair] = true;
                        snprintf(h->primary_event[pair], sizeof(h->primary_event[pair]), "%s",
                                 ev->name);
                        snprintf(h->secondary_event[pair], sizeof(h->secondary_event[pair]), "%s",
                                 sec->name);
                        h->renamed[pair] = strcmp(ev->name, pairs[pair].primary) != 0;
                        if (h->renamed[pair])
                                hw_logf(env, HW_LOG_NOTICE,
                                        "%s: the kernel names event %#x \"%s\", but that code "
                                        "counts %s (Linux 5.17 had these names swapped; fixed in "
                                        "6.2); reporting it as %s",
                                        h->name, code, ev->name, pairs[pair].primary,
                                        pairs[pair].name);
                        break;
                }
        }
        /* The v6.9 series added the four new pairs together with the rule
         * that only events with the same whole control value are related. */
        h->strict_related = h->offered[HISI_RX_MWR_FLUX] || h->offered[HISI_TX_MWR_FLUX] ||
                            h->offered[HISI_RX_CPL_FLUX];
}

static int load_one(const struct hw_env *env, const char *name, struct hisi_pcie_pmu *h)
{
        uint64_t v;
        int ret;

        memset(h, 0, sizeof(*h));
        snprintf(h->name, sizeof(h->name), "%s", name);
        if (hisi_pcie_parse_name(name, &h->sicl, &h->core))
                return -EINVAL;
        ret = perf_pmu_load(env, name, &h->pmu);
        if (ret)
                return ret;
        h->cpu = perf_pmu_cpu_count(h->pmu) ? perf_pmu_cpu(h->pmu, 0) : -1;
        if (!perf_pmu_read_u64(env, h->pmu, "identifier", &v))
                h->identifier = v;
        if (!perf_pmu_read_u64(env, h->pmu, "bdf_min", &v) && v <= 0xffff) {
                h->bdf_min = (uint16_t)v;
                if (!perf_pmu_read_u64(env, h->pmu, "bdf_max", &v) && v <= 0xffff) {
                        h->bdf_max = (uint16_t)v;
                        h->has_range = h->bdf_min <= h->bdf_max;
                }
        }
        if (!perf_pmu_read_u64(env, h->pmu, "bus", &v) && v <= 0xff)
                h->bus = (uint8_t)v;
        else if (h->has_range)
                h->bus = (uint8_t)(h->bdf_min >> 8);
        else
                return -EBADMSG; /* neither a range nor a bus: cannot place it */
        h->has_len_mode = perf_pmu_format(h->pmu, "len_mode") != NULL;
        find_pairs(env, h);
        return 0;
}

static void add_port(struct hisi_pcie_pmu *h, const struct pcie_function *f, size_t index)
{
        struct hisi_pcie_port *p;

        if (h->port_count == HISI_PCIE_MAX_PORTS)
                return;
        p = &h->ports[h->port_count++];
        p->addr = f->addr;
        snprintf(p->bdf, sizeof(p->bdf), "%s", f->bdf);
        p->bit = hisi_pcie_port_bit(f->addr.dev);
        p->topo_index = index;
}

static bool is_root_port(const struct pcie_function *f)
{
        return f->info.has_pcie && f->info.port_type == PCIE_PORT_ROOT_PORT;
}

/*
 * Before 6.12 a PMU only says its bus. PMUs on the same bus are told apart
 * by device-number blocks of 8 (the port bitmap covers device & 7), taken
 * in core order: the lowest core gets the lowest occupied block.
 */
static void map_by_bus(const struct hw_env *env, struct hisi_pcie_pmu *pmus, size_t count,
                       const struct pcie_topo *topo)
{
        for (size_t i = 0; i < count; i++) {
                struct hisi_pcie_pmu *h = &pmus[i];
                size_t rank = 0, sharing = 0;
                unsigned int blocks[32], nblocks = 0;

                if (h->has_range)
                        continue;
                for (size_t j = 0; j < count; j++) {
                        if (pmus[j].has_range || pmus[j].bus != h->bus)
                                continue;
                        sharing++;
                        if (pmus[j].sicl < h->sicl ||
                            (pmus[j].sicl == h->sicl && pmus[j].core < h->core))
                                rank++;
                }
                /* Occupied blocks of Root Ports on this bus, ascending. */
                for (size_t t = 0; t < pcie_topo_count(topo); t++) {
                        const struct pcie_function *f = pcie_topo_get(topo, t);
                        unsigned int b = f->addr.dev / 8;
                        bool seen = false;

                        if (!is_root_port(f) || f->addr.bus != h->bus)
                                continue;
                        for (unsigned int k = 0; k < nblocks; k++)
                                seen |= blocks[k] == b;
                        if (!seen && nblocks < 32)
                                blocks[nblocks++] = b;
                }
                for (unsigned int a = 0; a < nblocks; a++)
                        for (unsigned int b = a + 1; b < nblocks; b++)
                                if (blocks[b] < blocks[a]) {
                                        unsigned int t = blocks[a];

                                        blocks[a] = blocks[b];
                                        blocks[b] = t;
                                }
                for (size_t t = 0; t < pcie_topo_count(topo); t++) {
                        const struct pcie_function *f = pcie_topo_get(topo, t);

                        if (!is_root_port(f) || f->addr.bus != h->bus)
                                continue;
                        if (sharing > 1 && (rank >= nblocks || f->addr.dev / 8 != blocks[rank]))
                                continue;
                        add_port(h, f, t);
                }
                if (sharing > 1)
                        hw_logf(env, HW_LOG_NOTICE,
                                "%s: this kernel publishes no bdf_min/bdf_max and %zu PMUs share "
                                "bus %02x; assuming it covers Root Ports %02x:%02x-%02x (Linux "
                                "6.12 makes this exact)",
                                h->name, sharing, h->bus, h->bus,
                                rank < nblocks ? blocks[rank] * 8 : 0,
                                rank < nblocks ? blocks[rank] * 8 + 7 : 0);
        }
}

static int compare_pmus(const void *a, const void *b)
{
        const struct hisi_pcie_pmu *x = a, *y = b;

        if (x->sicl != y->sicl)
                return x->sicl < y->sicl ? -1 : 1;
        return x->core < y->core ? -1 : x->core > y->core;
}

int hisi_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                       struct hisi_pcie_pmu **out, size_t *count)
{
        char **names = NULL;
        int n = perf_pmu_list(env, "hisi_pcie", &names);
        struct hisi_pcie_pmu *pmus;
        size_t used = 0;

        *out = NULL;
        *count = 0;
        if (n <= 0) {
                perf_pmu_list_free(names);
                return n == -ENOMEM ? -ENOMEM : 0; /* no event_source dir: no PMUs */
        }
        pmus = calloc((size_t)n, sizeof(*pmus));
        if (!pmus) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                unsigned int s, c;
                int ret;

                if (hisi_pcie_parse_name(names[i], &s, &c))
                        continue; /* e.g. a PTT or another PMU with this prefix */
                ret = load_one(env, names[i], &pmus[used]);
                if (ret) {
                        hw_logf(env, HW_LOG_WARNING, "%s: cannot read the PMU in sysfs: %s",
                                names[i], strerror(-ret));
                        perf_pmu_free(pmus[used].pmu);
                        continue;
                }
                used++;
        }
        perf_pmu_list_free(names);
        qsort(pmus, used, sizeof(*pmus), compare_pmus);

        for (size_t i = 0; i < used && topo; i++) {
                struct hisi_pcie_pmu *h = &pmus[i];

                if (!h->has_range)
                        continue;
                for (size_t t = 0; t < pcie_topo_count(topo); t++) {
                        const struct pcie_function *f = pcie_topo_get(topo, t);
                        uint16_t rid =
                            (uint16_t)(f->addr.bus << 8 | f->addr.dev << 3 | f->addr.func);

                        if (is_root_port(f) && rid >= h->bdf_min && rid <= h->bdf_max)
                                add_port(h, f, t);
                }
        }
        if (topo)
                map_by_bus(env, pmus, used, topo);
        *out = pmus;
        *count = used;
        return 0;
}

void hisi_pcie_free(struct hisi_pcie_pmu *pmus, size_t count)
{
        for (size_t i = 0; pmus && i < count; i++)
                perf_pmu_free(pmus[i].pmu);
        free(pmus);
}

static int set_filters(const struct hisi_pcie_pmu *h, const struct hisi_pcie_filter *f,
                       struct perf_event_attr *attr)
{
        int ret = 0;

        if (f->port)
                ret = perf_pmu_set(h->pmu, attr, "port", f->port);
        else
                ret = perf_pmu_set(h->pmu, attr, "bdf", f->bdf);
        if (!ret && f->thr_len) {
                ret = perf_pmu_set(h->pmu, attr, "thr_len", f->thr_len);
                if (!ret)
                        ret = perf_pmu_set(h->pmu, attr, "thr_mode", f->thr_mode);
        }
        if (!ret && f->len_mode && h->has_len_mode)
                ret = perf_pmu_set(h->pmu, attr, "len_mode", f->len_mode);
        return ret;
}

int hisi_pcie_pair_attrs(const struct hisi_pcie_pmu *h, enum hisi_pcie_pair pair,
                         const struct hisi_pcie_filter *filter, struct perf_event_attr *attrs)
{
        int ret;

        if ((unsigned int)pair >= HISI_PAIRS || !h->offered[pair])
                return -ENOENT;
        ret = perf_pmu_event_attr(h->pmu, h->primary_event[pair], &attrs[0]);
        if (!ret)
                ret = perf_pmu_event_attr(h->pmu, h->secondary_event[pair], &attrs[1]);
        if (!ret)
                ret = set_filters(h, filter, &attrs[0]);
        if (!ret)
                ret = set_filters(h, filter, &attrs[1]);
        return ret;
}
