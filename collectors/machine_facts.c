// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_facts.c - what a snapshot reads of a machine. See machine_facts.h.
 */
#include "machine_facts.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"
#include "pci_source.h"
#include "perf_pmu.h"
#include "redact.h"
#include "uncore_discovery.h"

#define MISSING_MAX 32
#define CPUS_MAX    4096

struct machine_facts {
        struct md_facts f;
        struct md_function *fn;
        size_t fn_count, fn_cap;
        struct md_hisi_pmu *hisi;
        struct md_ptt *ptt;
        struct md_iio_box *boxes;
        struct md_socket *sockets;
        struct md_stack_bus *stack_buses;
        struct uncore_inventory *inv;
        char cmdline[8192]; /* room for markers longer than what they replace */
        char osrelease[128];
        char source[128];
        int redacted;
        size_t dsn_zeroed, vpd_zeroed; /* functions whose serial / VPD data was zeroed */
        size_t header_only;            /* functions with 64 config bytes (not root) */
        size_t short_cfg;              /* functions with 65..4095 (conventional PCI: 256) */
        size_t missing_count;
        char missing_what[MISSING_MAX][64];
        char missing_why[MISSING_MAX][200];
};

static void missing(struct machine_facts *mf, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void missing(struct machine_facts *mf, const char *what, const char *fmt, ...)
{
        va_list ap;

        if (mf->missing_count == MISSING_MAX)
                return;
        snprintf(mf->missing_what[mf->missing_count], sizeof(mf->missing_what[0]), "%s", what);
        va_start(ap, fmt);
        vsnprintf(mf->missing_why[mf->missing_count], sizeof(mf->missing_why[0]), fmt, ap);
        va_end(ap);
        mf->missing_count++;
}

/* A small sysfs file as a number (any base); false when absent or junk. */
static bool read_number(const struct hw_env *env, unsigned long long *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool read_number(const struct hw_env *env, unsigned long long *v, const char *fmt, ...)
{
        char buf[64];
        char *end;
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        n = hw_read_file_v(env, HW_SYSFS, buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n <= 0)
                return false;
        errno = 0;
        *v = strtoull(buf, &end, 0);
        return !errno && end != buf && (*end == '\n' || *end == '\0');
}

/* ---- PCI functions ---- */

static int visit_function(void *ctx, const struct pci_addr *addr, const uint8_t *cfg,
                          size_t cfg_len)
{
        struct machine_facts *mf = ctx;
        struct md_function *f;
        uint8_t *copy;

        if (mf->fn_count == mf->fn_cap) {
                size_t cap = mf->fn_cap ? 2 * mf->fn_cap : 64;
                struct md_function *nf = realloc(mf->fn, cap * sizeof(*nf));

                if (!nf)
                        return -ENOMEM;
                mf->fn = nf;
                mf->fn_cap = cap;
        }
        copy = malloc(cfg_len ? cfg_len : 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, cfg, cfg_len);
        /* Serial numbers never leave here: every user of these facts (the
         * lspci-xxxx.txt copy, the description) sees them zeroed. */
        {
                unsigned int gone = redact_cfg(copy, cfg_len);

                mf->dsn_zeroed += !!(gone & REDACT_CFG_DSN);
                mf->vpd_zeroed += !!(gone & REDACT_CFG_VPD);
        }
        f = &mf->fn[mf->fn_count++];
        *f = (struct md_function){.addr = *addr, .cfg = copy, .cfg_len = cfg_len, .numa_node = -1};
        mf->header_only += cfg_len <= 64;
        mf->short_cfg += cfg_len > 64 && cfg_len < 4096;
        return 0;
}

static int cmp_function(const void *a, const void *b)
{
        return pci_addr_compare(&((const struct md_function *)a)->addr,
                                &((const struct md_function *)b)->addr);
}

static void read_function_sysfs(const struct hw_env *env, struct md_function *f)
{
        static const enum aer_file files[] = {AER_DEV_CORRECTABLE, AER_DEV_FATAL, AER_DEV_NONFATAL};
        char bdf[PCI_BDF_LEN], text[4096];

        pci_addr_format(&f->addr, bdf);
        if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/numa_node", bdf) >
            0)
                f->numa_node = atoi(text);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                unsigned int bad;

                if (hw_read_file(env, HW_SYSFS, text, sizeof(text), "bus/pci/devices/%s/%s", bdf,
                                 aer_file_name(files[i])) <= 0)
                        continue;
                if (!aer_device_parse_file(&f->aer, files[i], text, &bad))
                        f->aer_known = true;
        }
}

/* ---- PMUs ---- */

static int read_hisi(const struct hw_env *env, struct machine_facts *mf)
{
        char **names = NULL;
        int n = perf_pmu_list(env, "hisi_pcie", &names);
        size_t count = 0;

        if (n <= 0) {
                missing(mf, "hisi_pcie",
                        "no hisi_pcie PMUs (not a Kunpeng 920/930, or the driver "
                        "is not loaded)");
                perf_pmu_list_free(names);
                return 0;
        }
        mf->hisi = calloc((size_t)n, sizeof(*mf->hisi));
        if (!mf->hisi) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                struct md_hisi_pmu *p = &mf->hisi[count];
                struct perf_pmu *pmu;
                unsigned long long v;
                char text[64];

                if (sscanf(names[i], "hisi_pcie%u_core%u", &p->sicl, &p->core) != 2 ||
                    perf_pmu_load(env, names[i], &pmu))
                        continue;
                p->cpu = perf_pmu_cpu_count(pmu) ? perf_pmu_cpu(pmu, 0) : -1;
                p->event_count = (unsigned int)perf_pmu_event_count(pmu);
                p->has_len_mode = perf_pmu_format(pmu, "len_mode") != NULL;
                perf_pmu_free(pmu);
                if (read_number(env, &v, "bus/event_source/devices/%s/identifier", names[i])) {
                        p->has_identifier = true;
                        p->identifier = (uint32_t)v;
                }
                if (read_number(env, &v, "bus/event_source/devices/%s/bus", names[i])) {
                        p->has_bus = true;
                        p->bus = (unsigned int)v;
                }
                if (read_number(env, &v, "bus/event_source/devices/%s/bdf_min", names[i])) {
                        p->bdf_min = (uint32_t)v;
                        p->has_range =
                            read_number(env, &v, "bus/event_source/devices/%s/bdf_max", names[i]);
                        p->bdf_max = (uint32_t)v;
                }
                if (hw_read_file(env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/%s/events/rx_mrd_flux", names[i]) > 0)
                        p->old_mrd_codes = strstr(text, "0x1005") != NULL;
                count++;
        }
        perf_pmu_list_free(names);
        mf->f.hisi = mf->hisi;
        mf->f.hisi_count = count;
        return 0;
}

/* The PCI function a hisi_ptt device hangs off: on a real machine its
 * event_source entry is a link into that function's directory. */
static void ptt_function(const struct hw_env *env, const char *name, char *bdf)
{
        char rel[256], path[PATH_MAX], real[PATH_MAX];
        struct pci_addr a;
        char *slash;

        bdf[0] = '\0';
        snprintf(rel, sizeof(rel), "bus/event_source/devices/%s", name);
        if (hw_path(env, HW_SYSFS, path, sizeof(path), rel) || !realpath(path, real))
                return;
        slash = strrchr(real, '/');
        if (!slash)
                return;
        *slash = '\0';
        slash = strrchr(real, '/');
        if (slash && !pci_addr_parse(slash + 1, &a))
                pci_addr_format(&a, bdf);
}

static int read_ptt(const struct hw_env *env, struct machine_facts *mf)
{
        char **names = NULL;
        int n = perf_pmu_list(env, "hisi_ptt", &names);
        size_t count = 0;

        if (n <= 0) {
                missing(mf, "hisi_ptt", "no hisi_ptt devices");
                perf_pmu_list_free(names);
                return 0;
        }
        mf->ptt = calloc((size_t)n, sizeof(*mf->ptt));
        if (!mf->ptt) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                struct md_ptt *t = &mf->ptt[count];

                if (sscanf(names[i], "hisi_ptt%u_%u", &t->sicl, &t->core) != 2)
                        continue;
                ptt_function(env, names[i], t->bdf);
                count++;
        }
        perf_pmu_list_free(names);
        mf->f.ptt = mf->ptt;
        mf->f.ptt_count = count;
        return 0;
}

struct die_ctx {
        const struct hw_env *env;
        unsigned int box;
        struct md_iio_box *b;
};

static int visit_die(void *ctx, const char *name)
{
        struct die_ctx *d = ctx;
        unsigned int socket, domain, bus;
        char text[64];

        if (d->b->die_count == MD_MAX_DIES || sscanf(name, "die%u", &socket) != 1 ||
            hw_read_file(d->env, HW_SYSFS, text, sizeof(text),
                         "bus/event_source/devices/uncore_iio_%u/%s", d->box, name) <= 0 ||
            sscanf(text, "%x:%x", &domain, &bus) != 2 || bus > 0xff)
                return 0;
        d->b->die_socket[d->b->die_count] = socket;
        d->b->die_bus[d->b->die_count] = (struct pci_addr){.domain = domain, .bus = (uint8_t)bus};
        d->b->die_count++;
        return 0;
}

static int read_iio(const struct hw_env *env, struct machine_facts *mf)
{
        static const char prefix[] = "uncore_iio_free_running_";
        char **names = NULL;
        int n = perf_pmu_list(env, prefix, &names);
        size_t count = 0;

        if (n <= 0) {
                missing(mf, "uncore_iio",
                        "no uncore_iio_free_running PMUs (not an Intel server "
                        "CPU, or the driver is not loaded)");
                perf_pmu_list_free(names);
                return 0;
        }
        mf->boxes = calloc((size_t)n, sizeof(*mf->boxes));
        if (!mf->boxes) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                struct md_iio_box *b = &mf->boxes[count];
                struct perf_pmu *pmu;
                struct die_ctx d = {.env = env, .b = b};

                if (sscanf(names[i] + sizeof(prefix) - 1, "%u", &b->box) != 1 ||
                    perf_pmu_load(env, names[i], &pmu))
                        continue;
                for (size_t k = 0; k < perf_pmu_cpu_count(pmu) && k < 64; k++)
                        b->cpus[b->cpu_count++] = perf_pmu_cpu(pmu, k);
                b->bw_out = perf_pmu_event(pmu, "bw_out_port0") != NULL;
                perf_pmu_free(pmu);
                d.box = b->box;
                hw_list_dir(env, HW_SYSFS, visit_die, &d, "bus/event_source/devices/uncore_iio_%u",
                            b->box);
                count++;
        }
        perf_pmu_list_free(names);
        mf->f.boxes = mf->boxes;
        mf->f.box_count = count;
        return 0;
}

/* ---- CPUs and sockets ---- */

static int read_cpus(const struct hw_env *env, struct machine_facts *mf, bool sockets)
{
        char *text = malloc(HW_FILE_MAX);
        int *cpus = calloc(CPUS_MAX, sizeof(*cpus));
        int *node = calloc(CPUS_MAX, sizeof(*node));
        int n = -1, ret = 0;

        if (!text || !cpus || !node) {
                ret = -ENOMEM;
                goto out;
        }
        if (hw_read_file(env, HW_SYSFS, text, HW_FILE_MAX, "devices/system/cpu/online") > 0)
                n = perf_cpu_list_parse(text, cpus, CPUS_MAX);
        if (n <= 0) {
                missing(mf, "CPUs", "devices/system/cpu/online unreadable");
                goto out;
        }
        if (n > CPUS_MAX)
                n = CPUS_MAX;
        mf->f.cpus = (unsigned int)cpus[n - 1] + 1;
        for (int i = 0; i < CPUS_MAX; i++)
                node[i] = -1;
        {
                bool any = false;

                for (int k = 0; k < 1024; k++) {
                        int list[CPUS_MAX];
                        int m;

                        if (hw_read_file(env, HW_SYSFS, text, HW_FILE_MAX,
                                         "devices/system/node/node%d/cpulist", k) <= 0)
                                continue;
                        any = true;
                        m = perf_cpu_list_parse(text, list, CPUS_MAX);
                        for (int j = 0; j < m && j < CPUS_MAX; j++)
                                if (list[j] >= 0 && list[j] < CPUS_MAX)
                                        node[list[j]] = k;
                }
                if (!any)
                        missing(mf, "NUMA layout", "no devices/system/node/node*/cpulist");
        }
        if (!sockets)
                goto out;
        mf->sockets = calloc(64, sizeof(*mf->sockets));
        if (!mf->sockets) {
                ret = -ENOMEM;
                goto out;
        }
        for (int i = 0; i < n; i++) {
                unsigned long long id;
                size_t s;

                if (!read_number(env, &id, "devices/system/cpu/cpu%d/topology/physical_package_id",
                                 cpus[i]))
                        continue;
                for (s = 0; s < mf->f.socket_count && mf->sockets[s].id != id; s++)
                        ;
                if (s == mf->f.socket_count) {
                        if (s == 64)
                                continue;
                        mf->sockets[s] = (struct md_socket){.id = (unsigned int)id,
                                                            .first_cpu = cpus[i],
                                                            .last_cpu = cpus[i],
                                                            .contiguous = true,
                                                            .numa_node = node[cpus[i]]};
                        mf->f.socket_count++;
                }
                if (node[cpus[i]] >= 0 && node[cpus[i]] < 64)
                        mf->sockets[s].numa_mask |= 1ull << node[cpus[i]];
                if (cpus[i] == mf->sockets[s].first_cpu)
                        continue; /* the run starts here */
                if (cpus[i] == mf->sockets[s].last_cpu + 1 && mf->sockets[s].contiguous)
                        mf->sockets[s].last_cpu = cpus[i];
                else
                        mf->sockets[s].contiguous = false;
        }
        /* By id, as the description lists them. */
        for (size_t a = 0; a < mf->f.socket_count; a++)
                for (size_t b = a + 1; b < mf->f.socket_count; b++)
                        if (mf->sockets[b].id < mf->sockets[a].id) {
                                struct md_socket t = mf->sockets[a];

                                mf->sockets[a] = mf->sockets[b];
                                mf->sockets[b] = t;
                        }
        mf->f.sockets = mf->sockets;
        if (!mf->f.socket_count)
                missing(mf, "CPU sockets",
                        "no devices/system/cpu/cpu*/topology/"
                        "physical_package_id");
out:
        free(text);
        free(cpus);
        free(node);
        return ret;
}

static void read_proc(const struct hw_env *env, struct machine_facts *mf)
{
        char raw[4096];
        ssize_t n = hw_read_file(env, HW_PROCFS, raw, sizeof(raw), "cmdline");
        int r;

        if (n > 0) {
                while (n > 0 && (raw[n - 1] == '\n' || raw[n - 1] == ' '))
                        raw[--n] = '\0';
                r = redact_cmdline(raw, mf->cmdline, sizeof(mf->cmdline));
                if (r >= 0) {
                        mf->redacted = r;
                        mf->f.cmdline = mf->cmdline;
                } else {
                        missing(mf, "kernel command line", "too long to redact");
                }
        } else {
                missing(mf, "kernel command line", "/proc/cmdline unreadable: %s",
                        strerror((int)-n));
        }
        n = hw_read_file(env, HW_PROCFS, mf->osrelease, sizeof(mf->osrelease),
                         "sys/kernel/osrelease");
        if (n > 0) {
                mf->osrelease[strcspn(mf->osrelease, "\n")] = '\0';
                mf->f.osrelease = mf->osrelease;
        } else {
                missing(mf, "kernel release", "/proc/sys/kernel/osrelease unreadable: %s",
                        strerror((int)-n));
        }
}

int machine_facts_read(const struct hw_env *env, const struct md_stack_bus *stack_buses,
                       size_t stack_bus_count, const char *source, struct machine_facts **out,
                       char *why, size_t whylen)
{
        struct machine_facts *mf;
        int ret;

        *out = NULL;
        if (!env->pci) {
                snprintf(why, whylen, "no PCI access");
                return -ENODEV;
        }
        mf = calloc(1, sizeof(*mf));
        if (!mf)
                return -ENOMEM;
        snprintf(mf->source, sizeof(mf->source), "%s", source ? source : "a machine");
        mf->f.source = mf->source;
        ret = pci_source_scan(env->pci, visit_function, mf);
        if (ret) {
                snprintf(why, whylen, "%s",
                         ret == -EIO ? pci_source_error(env->pci) : strerror(-ret));
                goto fail;
        }
        for (size_t i = 0; i < mf->fn_count; i++)
                read_function_sysfs(env, &mf->fn[i]);
        mf->f.functions = mf->fn;
        mf->f.function_count = mf->fn_count;
        qsort(mf->fn, mf->fn_count, sizeof(*mf->fn), cmp_function);
        if (mf->header_only)
                missing(mf, "configuration space",
                        "%zu of %zu functions truncated to 64 bytes: not root (run as root for "
                        "capabilities, links and MPS)",
                        mf->header_only, mf->fn_count);
        if (mf->short_cfg)
                missing(mf, "extended configuration space",
                        "%zu of %zu functions give fewer than 4096 bytes (256: conventional PCI "
                        "or no extended space)",
                        mf->short_cfg, mf->fn_count);
        ret = read_hisi(env, mf);
        if (!ret)
                ret = read_ptt(env, mf);
        if (!ret)
                ret = read_iio(env, mf);
        if (ret)
                goto fail;
        ret = uncore_discover(env, &mf->inv);
        if (ret == -ENOMEM)
                goto fail;
        if (!ret) {
                mf->f.uncore = mf->inv;
                mf->f.cpu_model = mf->inv->cpu_model;
                if (!mf->inv->source_count)
                        missing(mf, "Intel PMON discovery", "no discovery function");
        }
        ret = read_cpus(env, mf, mf->f.box_count || (mf->inv && mf->inv->source_count));
        if (ret)
                goto fail;
        read_proc(env, mf);
        if (stack_bus_count) {
                mf->stack_buses = calloc(stack_bus_count, sizeof(*stack_buses));
                if (!mf->stack_buses) {
                        ret = -ENOMEM;
                        goto fail;
                }
                memcpy(mf->stack_buses, stack_buses, stack_bus_count * sizeof(*stack_buses));
                mf->f.stack_buses = mf->stack_buses;
                mf->f.stack_bus_count = stack_bus_count;
        }
        *out = mf;
        return 0;
fail:
        machine_facts_free(mf);
        return ret;
}

void machine_facts_free(struct machine_facts *mf)
{
        if (!mf)
                return;
        for (size_t i = 0; i < mf->fn_count; i++)
                free((void *)mf->fn[i].cfg);
        free(mf->fn);
        free(mf->hisi);
        free(mf->ptt);
        free(mf->boxes);
        free(mf->sockets);
        free(mf->stack_buses);
        uncore_inventory_free(mf->inv);
        free(mf);
}

const struct md_facts *machine_facts_get(const struct machine_facts *mf)
{
        return &mf->f;
}

size_t machine_facts_missing_count(const struct machine_facts *mf)
{
        return mf->missing_count;
}

void machine_facts_missing(const struct machine_facts *mf, size_t i, const char **what,
                           const char **why)
{
        *what = mf->missing_what[i];
        *why = mf->missing_why[i];
}

int machine_facts_redacted(const struct machine_facts *mf)
{
        return mf->redacted;
}

void machine_facts_cfg_redacted(const struct machine_facts *mf, size_t *dsn, size_t *vpd)
{
        *dsn = mf->dsn_zeroed;
        *vpd = mf->vpd_zeroed;
}
