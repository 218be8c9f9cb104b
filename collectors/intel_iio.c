// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * intel_iio.c - IIO free-running PCIe bandwidth per stack and part. See the
 * header.
 */
#include "intel_iio.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_env.h"
#include "iio_stackmap.h"
#include "pci_source.h"
#include "pcie_link.h"
#include "pcie_families.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "perf_pmu.h"
#include "sample.h"
#include "uncore_discovery.h"

#define PMU_PREFIX "uncore_iio_free_running_"

/* One part (x16/x8/x4 slice) of a stack on one socket. */
struct part {
        bool offered;  /* the kernel has bw_in_port<P> */
        int in_index;  /* in the group's values */
        int out_index; /* in the out group's values, -1 when not counted */
        double in_bpc; /* bytes per count */
        double out_bpc;
        char port[PCI_BDF_LEN]; /* Root Port BDF on a mapped stack, "" if none */
        uint64_t capacity;      /* its link's bytes/s per direction now, 0 if unknown */
        unsigned int mps;
        bool have_rate;
        double in_rate, out_rate;
        uint64_t in_counts, out_counts; /* since open */
};

/* Where a stack's root bus came from. */
enum stack_mapping { MAPPED_NOT, MAPPED_BY_KERNEL, MAPPED_BY_CONFIG, MAPPED_BY_REGISTERS };

static const char *mapping_name(enum stack_mapping m)
{
        switch (m) {
        case MAPPED_BY_KERNEL:
                return "kernel";
        case MAPPED_BY_CONFIG:
                return "config";
        case MAPPED_BY_REGISTERS:
                return "registers";
        case MAPPED_NOT:
                break;
        }
        return "unmapped";
}

/* One IIO stack (box) as seen from one socket. */
struct stack {
        char pmu[PERF_PMU_NAME_MAX];
        unsigned int box;
        enum stack_mapping mapping;
        uint32_t domain;
        uint8_t bus;
        const char *scale_source;                             /* "kernel" or "corrected" */
        struct perf_event_attr in_attrs[1 + INTEL_IIO_PARTS]; /* ioclk (if any) + bw_in */
        size_t in_count;
        int ioclk_index; /* -1 without ioclk */
        struct perf_event_attr out_attrs[INTEL_IIO_PARTS];
        size_t out_count;
        struct part parts[INTEL_IIO_PARTS];

        struct perf_group *in_group, *out_group;
        struct perf_group_reading in_last, out_last;
        bool have_last;
        double ioclk_hz;
        uint64_t ioclk_counts;
        bool gone; /* its PMU's driver was unbound: counters closed until it is back */
};

struct intel_iio_socket {
        const struct hw_env *env;
        const struct intel_iio_opts *opts;
        unsigned int id; /* physical package id */
        int cpu;         /* the PMU cpumask's CPU on this socket */
        char name[32];
        size_t stack_count;
        struct stack *stacks;
        bool started;
        double cpu_seconds;
};

struct intel_iio {
        struct intel_iio_opts opts;
        size_t socket_count;
        struct intel_iio_socket *sockets;
        /* The uncore's CPU bus registers, read once at discovery. */
        struct iio_stackmap regs;
        int regs_err; /* 0, or why there is no register mapping */
        char regs_why[160];
        unsigned int port_device0; /* device of part 0's Root Port */
};

void intel_iio_opts_default(struct intel_iio_opts *opts)
{
        memset(opts, 0, sizeof(*opts));
        opts->scale_fix = true;
        opts->bw_out = true;
}

int intel_iio_parse_bus(const char *text, uint32_t *domain, uint8_t *bus)
{
        unsigned int d = 0, b;
        char tail;

        if (sscanf(text, "%4x:%2x%c", &d, &b, &tail) == 2 && strchr(text, ':') == text + 4) {
                *domain = d;
                *bus = (uint8_t)b;
                return 0;
        }
        if (sscanf(text, "%2x%c", &b, &tail) == 1 && strlen(text) <= 2) {
                *domain = 0;
                *bus = (uint8_t)b;
                return 0;
        }
        return -EINVAL;
}

int intel_iio_bytes_per_count(double scale, const char *unit, double *bytes)
{
        static const struct {
                const char *name;
                double bytes;
        } units[] = {{"MiB", 1048576.0}, {"KiB", 1024.0}, {"MB", 1e6}, {"kB", 1e3},
                     {"B", 1.0},         {"Bytes", 1.0},  {"", 1.0}};

        *bytes = 0;
        if (!(scale > 0) || !isfinite(scale))
                return -EINVAL;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (!strcmp(unit, units[i].name)) {
                        *bytes = scale * units[i].bytes;
                        return 0;
                }
        }
        return -EINVAL;
}

static double thread_cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                return 0;
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the uncore's CPU bus registers (iio_stackmap.h) ---- */

#define MAX_MSM 16
#define MAX_SAD 64

/* What the scan keeps of the functions that hold the registers. */
struct regs_scan {
        struct {
                struct pci_addr addr;
                uint8_t cfg[IIO_MSM_CFG_BYTES];
                size_t len;
        } msm[MAX_MSM];
        size_t msm_count;
        struct {
                struct pci_addr addr;
                uint8_t cfg[IIO_SAD_CONTROL_CFG + 4];
                size_t len;
        } sad[MAX_SAD];
        size_t sad_count;
        uint8_t pcu[IIO_PCU_CAPID4 + 4];
        size_t pcu_len;
        bool have_pcu;
};

static uint16_t cfg16(const uint8_t *cfg, size_t len, size_t off)
{
        return len >= off + 2 ? (uint16_t)(cfg[off] | cfg[off + 1] << 8) : 0xffff;
}

static size_t keep(uint8_t *dst, size_t size, const uint8_t *cfg, size_t len)
{
        size_t n = len < size ? len : size;

        memcpy(dst, cfg, n);
        return n;
}

static int regs_visit(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t cfg_len)
{
        struct regs_scan *sc = ctx;
        uint16_t device = cfg16(cfg, cfg_len, 2);

        if (cfg16(cfg, cfg_len, 0) != 0x8086)
                return 0;
        if (device == IIO_MSM_DEVICE_ID && sc->msm_count < MAX_MSM) {
                sc->msm[sc->msm_count].addr = *addr;
                sc->msm[sc->msm_count].len =
                    keep(sc->msm[sc->msm_count].cfg, IIO_MSM_CFG_BYTES, cfg, cfg_len);
                sc->msm_count++;
        } else if (device == IIO_PCU_CR3_DEVICE_ID && addr->dev == IIO_PCU_CR3_DEVICE &&
                   addr->func == IIO_PCU_CR3_FUNCTION && !sc->have_pcu) {
                sc->pcu_len = keep(sc->pcu, sizeof(sc->pcu), cfg, cfg_len);
                sc->have_pcu = true;
        } else if (addr->dev == 0 && addr->func == 0 && sc->sad_count < MAX_SAD) {
                /* Any Intel 00.0: PCM reads SAD_CONTROL_CFG there whatever its
                 * device id (0x09a2 on SPR). */
                sc->sad[sc->sad_count].addr = *addr;
                sc->sad[sc->sad_count].len =
                    keep(sc->sad[sc->sad_count].cfg, sizeof(sc->sad[0].cfg), cfg, cfg_len);
                sc->sad_count++;
        }
        return 0;
}

static const char *short_read(size_t len)
{
        return len <= 64 ? " (configuration space past the header needs root)" : "";
}

int intel_iio_read_stackmap(const struct hw_env *env, unsigned int family, unsigned int model,
                            struct iio_stackmap *map, char *why, size_t whylen)
{
        struct regs_scan *sc;
        int chop = IIO_CHOP_UNKNOWN, err;

        memset(map, 0, sizeof(*map));
        why[0] = '\0';
        if (!env->pci) {
                snprintf(why, whylen, "no PCI configuration space in this environment");
                return -ENODEV;
        }
        if (iio_layout_of(family, model, IIO_CHOP_XCC) == IIO_LAYOUT_UNKNOWN) {
                snprintf(why, whylen, "no CPU bus table for family %u model 0x%x", family, model);
                return -EINVAL;
        }
        sc = calloc(1, sizeof(*sc));
        if (!sc)
                return -ENOMEM;
        err = pci_source_scan(env->pci, regs_visit, sc);
        if (err) {
                snprintf(why, whylen, "PCI scan failed: %s", pci_source_error(env->pci));
                goto out;
        }
        if (!sc->msm_count) {
                snprintf(why, whylen,
                         "they are absent: no MSM function (PCI 8086:%04x) in configuration space",
                         IIO_MSM_DEVICE_ID);
                err = -ENOENT;
                goto out;
        }
        if (iio_layout_needs_chop(family, model)) {
                err = sc->have_pcu ? iio_chop_decode(sc->pcu, sc->pcu_len, &chop) : -ENOENT;
                if (err) {
                        snprintf(why, whylen, "the die layout (XCC or MCC) is unknown: %s%s",
                                 !sc->have_pcu    ? "no PCU CR3 function (PCI 8086:325b at device "
                                                    "1e.3)"
                                 : err == -ERANGE ? "CAPID4 has an unknown chop"
                                                  : "CAPID4 (0x94) of the PCU CR3 function is "
                                                    "unreadable",
                                 sc->have_pcu ? short_read(sc->pcu_len) : "");
                        goto out;
                }
        }
        map->layout = iio_layout_of(family, model, (enum iio_chop)chop);
        for (size_t i = 0; i < sc->msm_count && !err; i++) {
                char bdf[PCI_BDF_LEN], reason[128];
                struct iio_cpubus cb;
                unsigned int package = 0;
                int first;
                size_t k;

                pci_addr_format(&sc->msm[i].addr, bdf);
                err = iio_cpubus_decode(sc->msm[i].cfg, sc->msm[i].len, &cb);
                if (err) {
                        snprintf(why, whylen, "%s: CPUBUSNO registers %s%s", bdf,
                                 err == -ENOENT ? "mark no bus valid" : "are unreadable",
                                 short_read(sc->msm[i].len));
                        break;
                }
                first = iio_cpubus_first(&cb);
                for (k = 0; k < sc->sad_count; k++)
                        if (sc->sad[k].addr.domain == sc->msm[i].addr.domain &&
                            sc->sad[k].addr.bus == first)
                                break;
                err = k < sc->sad_count
                          ? iio_package_decode(sc->sad[k].cfg, sc->sad[k].len, &package)
                          : -ENOENT;
                if (err) {
                        snprintf(why, whylen,
                                 "%s: the package of its CPU buses is unknown: SAD_CONTROL_CFG "
                                 "of %04x:%02x:00.0 is %s",
                                 bdf, (unsigned int)sc->msm[i].addr.domain, first,
                                 err == -ENOENT ? "not there" : "unreadable");
                        break;
                }
                err = iio_stackmap_add(map, package, sc->msm[i].addr.domain, &cb, reason,
                                       sizeof(reason));
                if (err)
                        snprintf(why, whylen, "%s: %s", bdf, reason);
        }
out:
        if (err)
                map->count = 0;
        free(sc);
        return err;
}

/* ---- discovery ---- */

/* The fix (kernel v6.15, 506f981ab40f) applies to these CPUs. */
static bool counts_32_bytes(unsigned int family, unsigned int model)
{
        return family == 6 && (model == 0x8f || model == 0xcf || /* SPR, EMR */
                               model == 0x6a || model == 0x6c || /* ICX */
                               model == 0x86);                   /* SNR */
}

static int package_of(const struct hw_env *env, int cpu, unsigned int fallback)
{
        char text[32];
        unsigned int id;

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text),
                         "devices/system/cpu/cpu%d/topology/physical_package_id", cpu) > 0 &&
            sscanf(text, "%u", &id) == 1)
                return (int)id;
        return (int)fallback;
}

static struct intel_iio_socket *socket_for(struct intel_iio *iio, const struct hw_env *env,
                                           unsigned int id, int cpu)
{
        struct intel_iio_socket *n;

        for (size_t i = 0; i < iio->socket_count; i++)
                if (iio->sockets[i].id == id)
                        return &iio->sockets[i];
        n = realloc(iio->sockets, (iio->socket_count + 1) * sizeof(*n));
        if (!n)
                return NULL;
        iio->sockets = n;
        n = &iio->sockets[iio->socket_count++];
        memset(n, 0, sizeof(*n));
        n->env = env;
        n->opts = &iio->opts;
        n->id = id;
        n->cpu = cpu;
        snprintf(n->name, sizeof(n->name), "iio-socket%u", id);
        return n;
}

static const struct intel_iio_map *config_map(const struct intel_iio_opts *opts, unsigned int box,
                                              unsigned int socket)
{
        char free_name[64], prog_name[64];

        snprintf(free_name, sizeof(free_name), PMU_PREFIX "%u", box);
        snprintf(prog_name, sizeof(prog_name), "uncore_iio_%u", box);
        for (size_t i = 0; i < opts->map_count; i++) {
                const struct intel_iio_map *m = &opts->maps[i];

                if (m->socket == socket &&
                    (!strcmp(m->pmu, free_name) || !strcmp(m->pmu, prog_name)))
                        return m;
        }
        return NULL;
}

/* The die<N> file of the programmable PMU of the same box: "dddd:bb". */
static bool die_file_bus(const struct hw_env *env, unsigned int box, size_t die, uint32_t *domain,
                         uint8_t *bus)
{
        char text[32];

        if (hw_read_file(env, HW_SYSFS, text, sizeof(text),
                         "bus/event_source/devices/uncore_iio_%u/die%zu", box, die) <= 0)
                return false;
        text[strcspn(text, "\n")] = '\0';
        return intel_iio_parse_bus(text, domain, bus) == 0;
}

/* Root Ports of a mapped stack: part P at device P + @device0 of the root
 * bus (1 on SPR/EMR, 2 on Xeon 6: iio_stackmap.h). */
static void map_parts(struct stack *st, const struct pcie_topo *topo, unsigned int device0)
{
        for (unsigned int p = 0; p < INTEL_IIO_PARTS && topo; p++) {
                struct pci_addr a = {
                    .domain = st->domain, .bus = st->bus, .dev = (uint8_t)(p + device0)};
                size_t i = pcie_topo_find(topo, &a);
                const struct pcie_function *f;

                if (i == PCIE_TOPO_NONE)
                        continue;
                f = pcie_topo_get(topo, i);
                if (f->info.port_type != PCIE_PORT_ROOT_PORT)
                        continue;
                snprintf(st->parts[p].port, sizeof(st->parts[p].port), "%s", f->bdf);
                st->parts[p].capacity = f->link_up ? f->capacity_current : 0;
                st->parts[p].mps = pcie_topo_link_mps(topo, i);
        }
}

/* Events, scales and attrs of one PMU; the same for every socket. */
static int build_stack(const struct hw_env *env, const struct perf_pmu *pmu, unsigned int box,
                       bool fix, const struct intel_iio_opts *opts, struct stack *st)
{
        char ev[PERF_PMU_NAME_MAX];
        bool corrected = false;

        memset(st, 0, sizeof(*st));
        snprintf(st->pmu, sizeof(st->pmu), "%s", perf_pmu_name(pmu));
        st->box = box;
        st->ioclk_index = -1;
        if (perf_pmu_event(pmu, "ioclk") && !perf_pmu_event_attr(pmu, "ioclk", &st->in_attrs[0]))
                st->ioclk_index = (int)st->in_count++;
        for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++) {
                struct part *pt = &st->parts[p];
                const struct perf_pmu_event *e;

                pt->out_index = -1;
                snprintf(ev, sizeof(ev), "bw_in_port%u", p);
                e = perf_pmu_event(pmu, ev);
                if (!e)
                        continue;
                if (intel_iio_bytes_per_count(e->scale, e->unit, &pt->in_bpc)) {
                        hw_logf(env, HW_LOG_WARNING,
                                "%s: %s has scale %g and unit \"%s\", which do not give bytes; "
                                "left out",
                                st->pmu, ev, e->scale, e->unit);
                        continue;
                }
                if (fix && fabs(pt->in_bpc - 4.0) < 1e-6) {
                        pt->in_bpc = 32.0;
                        corrected = true;
                }
                if (perf_pmu_event_attr(pmu, ev, &st->in_attrs[st->in_count]))
                        continue;
                pt->offered = true;
                pt->in_index = (int)st->in_count++;

                snprintf(ev, sizeof(ev), "bw_out_port%u", p);
                e = perf_pmu_event(pmu, ev);
                if (!opts->bw_out || !e ||
                    intel_iio_bytes_per_count(e->scale, e->unit, &pt->out_bpc))
                        continue;
                if (perf_pmu_event_attr(pmu, ev, &st->out_attrs[st->out_count]))
                        continue;
                pt->out_index = (int)st->out_count++;
        }
        st->scale_source = corrected ? "corrected" : "kernel";
        if (corrected)
                hw_logf(env, HW_LOG_NOTICE,
                        "%s: the kernel's bw_in scale says 4 bytes per count; this CPU counts 32 "
                        "(kernel fix 506f981ab40f, v6.15): using 32 (IIOScaleFix false keeps "
                        "the kernel's scale)",
                        st->pmu);
        return st->in_count > (st->ioclk_index >= 0 ? 1u : 0u) ? 0 : -ENOENT;
}

static int add_pmu(struct intel_iio *iio, const struct hw_env *env, const struct pcie_topo *topo,
                   const char *name, bool fix)
{
        struct perf_pmu *pmu = NULL;
        struct stack proto;
        unsigned int box;
        char tail;
        int err;

        if (sscanf(name + strlen(PMU_PREFIX), "%u%c", &box, &tail) != 1)
                return -EINVAL;
        err = perf_pmu_load(env, name, &pmu);
        if (err) {
                hw_logf(env, HW_LOG_WARNING, "%s: cannot read the PMU: %s", name, strerror(-err));
                return err;
        }
        err = build_stack(env, pmu, box, fix, &iio->opts, &proto);
        if (err) {
                hw_logf(env, HW_LOG_WARNING, "%s: no usable bw_in_port event; left out", name);
        } else if (perf_pmu_cpu_count(pmu) == 0) {
                hw_logf(env, HW_LOG_WARNING, "%s: no cpumask, so no CPU to count on; left out",
                        name);
                err = -ENOENT;
        }
        /* One copy of the stack per socket in the cpumask. */
        for (size_t k = 0; !err && k < perf_pmu_cpu_count(pmu); k++) {
                int cpu = perf_pmu_cpu(pmu, k);
                unsigned int id = (unsigned int)package_of(env, cpu, (unsigned int)k);
                struct intel_iio_socket *sock = socket_for(iio, env, id, cpu);
                const struct intel_iio_map *m;
                const struct iio_stack_root *r;
                struct stack *st, *n;

                if (!sock) {
                        err = -ENOMEM;
                        break;
                }
                n = realloc(sock->stacks, (sock->stack_count + 1) * sizeof(*n));
                if (!n) {
                        err = -ENOMEM;
                        break;
                }
                sock->stacks = n;
                st = &n[sock->stack_count++];
                *st = proto;
                st->mapping = MAPPED_NOT;
                m = config_map(&iio->opts, box, id);
                r = iio->regs_err ? NULL : iio_stackmap_find(&iio->regs, id, box);
                if (m) {
                        /* The configuration wins over what the hardware says. */
                        st->domain = m->domain;
                        st->bus = m->bus;
                        st->mapping = MAPPED_BY_CONFIG;
                        if (r && (r->domain != m->domain || r->bus != m->bus))
                                hw_logf(env, HW_LOG_NOTICE,
                                        "%s: socket %u: IIOStackBus says %04x:%02x, the CPU bus "
                                        "registers say %04x:%02x; using the configuration",
                                        name, id, (unsigned int)m->domain, m->bus,
                                        (unsigned int)r->domain, r->bus);
                } else if (die_file_bus(env, box, k, &st->domain, &st->bus)) {
                        st->mapping = MAPPED_BY_KERNEL;
                } else if (r) {
                        st->domain = r->domain;
                        st->bus = r->bus;
                        st->mapping = MAPPED_BY_REGISTERS;
                }
                if (st->mapping != MAPPED_NOT)
                        map_parts(st, topo, iio->port_device0);
        }
        perf_pmu_free(pmu);
        return err;
}

int intel_iio_discover(const struct hw_env *env, const struct pcie_topo *topo,
                       const struct intel_iio_opts *opts, struct intel_iio **out)
{
        unsigned int family = 0, model = 0;
        struct intel_iio *iio;
        char **names = NULL;
        size_t usable = 0;
        bool fix;
        int n, err = 0;

        *out = NULL;
        n = perf_pmu_list(env, PMU_PREFIX, &names);
        if (n <= 0) {
                perf_pmu_list_free(names);
                return n == 0 || n == -ENOENT ? 0 : n;
        }
        iio = calloc(1, sizeof(*iio));
        if (!iio) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        iio->opts = *opts;
        uncore_cpu_id(env, &family, &model);
        fix = opts->scale_fix && counts_32_bytes(family, model);
        iio->regs_err = intel_iio_read_stackmap(env, family, model, &iio->regs, iio->regs_why,
                                                sizeof(iio->regs_why));
        iio->port_device0 = iio_layout_port_device0(
            iio->regs_err ? iio_layout_of(family, model, IIO_CHOP_XCC) : iio->regs.layout);
        for (int i = 0; i < n && err != -ENOMEM; i++) {
                err = add_pmu(iio, env, topo, names[i], fix);
                usable += err == 0;
        }
        perf_pmu_list_free(names);
        if (err == -ENOMEM || usable == 0) {
                intel_iio_free(iio);
                return err == -ENOMEM ? err : -EBADMSG;
        }
        /* Said once, at discovery, and only where it costs a mapping. */
        if (intel_iio_mapped_count(iio) < intel_iio_stack_count(iio))
                hw_logf(env, HW_LOG_INFO,
                        "intel iio: %zu of %zu IIO stacks mapped to a root bus; the kernel has "
                        "no IIO-to-bus mapping (die<N> files) on Sapphire Rapids and later, and "
                        "the uncore's CPU bus registers %s%s%s; the others are published by "
                        "stack and part (IIOStackBus maps them)",
                        intel_iio_mapped_count(iio), intel_iio_stack_count(iio),
                        iio->regs_err ? "were not used (" : "do not name them",
                        iio->regs_err ? iio->regs_why : "", iio->regs_err ? ")" : "");
        *out = iio;
        return 0;
}

void intel_iio_free(struct intel_iio *iio)
{
        if (!iio)
                return;
        for (size_t i = 0; i < iio->socket_count; i++) {
                intel_iio_socket_stop(&iio->sockets[i]);
                free(iio->sockets[i].stacks);
        }
        free(iio->sockets);
        free(iio);
}

size_t intel_iio_socket_count(const struct intel_iio *iio)
{
        return iio ? iio->socket_count : 0;
}

struct intel_iio_socket *intel_iio_socket_at(struct intel_iio *iio, size_t i)
{
        return i < intel_iio_socket_count(iio) ? &iio->sockets[i] : NULL;
}

size_t intel_iio_stack_count(const struct intel_iio *iio)
{
        size_t n = 0;

        for (size_t i = 0; i < intel_iio_socket_count(iio); i++)
                n += iio->sockets[i].stack_count;
        return n;
}

size_t intel_iio_mapped_count(const struct intel_iio *iio)
{
        size_t n = 0;

        for (size_t i = 0; i < intel_iio_socket_count(iio); i++)
                for (size_t k = 0; k < iio->sockets[i].stack_count; k++)
                        n += iio->sockets[i].stacks[k].mapping != MAPPED_NOT;
        return n;
}

const char *intel_iio_socket_name(const struct intel_iio_socket *s)
{
        return s->name;
}

unsigned int intel_iio_socket_id(const struct intel_iio_socket *s)
{
        return s->id;
}

size_t intel_iio_socket_stacks(const struct intel_iio_socket *s)
{
        return s->stack_count;
}

double intel_iio_socket_cpu_seconds(const struct intel_iio_socket *s)
{
        return s->cpu_seconds;
}

/* ---- counting ---- */

void intel_iio_socket_stop(struct intel_iio_socket *s)
{
        for (size_t i = 0; i < s->stack_count; i++) {
                struct stack *st = &s->stacks[i];

                perf_group_close(st->in_group);
                perf_group_close(st->out_group);
                st->in_group = st->out_group = NULL;
                st->have_last = false;
                for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++)
                        st->parts[p].have_rate = false;
        }
        s->started = false;
}

static int open_group(struct intel_iio_socket *s, const struct stack *st,
                      const struct perf_event_attr *attrs, size_t count, struct perf_group **g)
{
        int err = perf_group_open(s->env, attrs, count, s->cpu, g, NULL);

        if (!err)
                err = perf_group_enable(*g);
        if (err)
                hw_logf(s->env, HW_LOG_ERROR,
                        "%s: perf_event_open(%s, cpu %d): %s — %s; socket %u's IIO bandwidth is "
                        "not collected",
                        st->pmu, st->pmu, s->cpu, strerror(-err), perf_open_advice(err), s->id);
        return err;
}

int intel_iio_socket_start(struct intel_iio_socket *s, double now)
{
        double cpu0 = thread_cpu_seconds();
        int err = 0;

        (void)now;
        intel_iio_socket_stop(s);
        for (size_t i = 0; i < s->stack_count && !err; i++) {
                struct stack *st = &s->stacks[i];

                err = open_group(s, st, st->in_attrs, st->in_count, &st->in_group);
                if (!err && st->out_count)
                        err = open_group(s, st, st->out_attrs, st->out_count, &st->out_group);
        }
        if (err)
                intel_iio_socket_stop(s);
        else
                s->started = true;
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        return err;
}

/* The perf type in the PMU's `type` file now, or a negative errno
 * (-ENOENT: the directory is gone, its driver unbound). */
static int64_t pmu_type_now(const struct hw_env *env, const char *pmu)
{
        char text[32], *end;
        unsigned long long v;
        ssize_t n = hw_read_file(env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/%s/type", pmu);

        if (n < 0)
                return n;
        v = strtoull(text, &end, 10);
        if (end == text || v > UINT32_MAX)
                return -EBADMSG;
        return (int64_t)v;
}

static void close_stack(struct stack *st)
{
        perf_group_close(st->in_group);
        perf_group_close(st->out_group);
        st->in_group = st->out_group = NULL;
        st->have_last = false;
        for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++)
                st->parts[p].have_rate = false;
}

/*
 * Whether a failed reading means the stack's PMU went away: its driver was
 * unbound (perf_pmu_unregister() revokes the open events: read() gives 0
 * bytes) and its directory is gone, or it was bound again with a new perf
 * type already. Then its counters are closed, logged once; the stack's
 * series stop (they go stale) until it is back.
 */
static bool stack_went(struct intel_iio_socket *s, struct stack *st)
{
        int64_t type = pmu_type_now(s->env, st->pmu);

        if (type >= 0 && (uint32_t)type == st->in_attrs[0].type)
                return false;
        hw_logf(s->env, HW_LOG_WARNING,
                "%s: PMU gone (its driver was unbound%s); socket %u's counters of it stop until it "
                "is back",
                st->pmu, type >= 0 ? " and bound again" : "", s->id);
        close_stack(st);
        st->gone = true;
        return true;
}

/* A stack whose PMU went: opened again once its directory is back, with the
 * perf type it has now. Its free-running counters start from 0 again (new
 * events): the first reading is a new baseline, so no rate until the next,
 * and never a negative one. */
static void stack_back(struct intel_iio_socket *s, struct stack *st)
{
        int64_t type = pmu_type_now(s->env, st->pmu);
        int err;

        if (type < 0)
                return;
        for (size_t i = 0; i < st->in_count; i++)
                st->in_attrs[i].type = (uint32_t)type;
        for (size_t i = 0; i < st->out_count; i++)
                st->out_attrs[i].type = (uint32_t)type;
        err = perf_group_open(s->env, st->in_attrs, st->in_count, s->cpu, &st->in_group, NULL);
        if (!err)
                err = perf_group_enable(st->in_group);
        if (!err && st->out_count) {
                err = perf_group_open(s->env, st->out_attrs, st->out_count, s->cpu, &st->out_group,
                                      NULL);
                if (!err)
                        err = perf_group_enable(st->out_group);
        }
        if (err) {
                close_stack(st);
                return; /* tried again at the next interval */
        }
        st->gone = false;
        hw_logf(s->env, HW_LOG_INFO, "%s: PMU back (perf type %u); socket %u counts it again",
                st->pmu, (unsigned int)type, s->id);
}

/* Reads the stack's groups and turns the deltas into rates. */
static int read_stack(struct stack *st)
{
        struct perf_group_reading in, out = {0}, din, dout = {0};
        double seconds;
        int err;

        err = perf_group_read(st->in_group, &in);
        if (!err && st->out_group)
                err = perf_group_read(st->out_group, &out);
        if (err)
                return err;
        if (st->have_last && !perf_reading_delta(&in, &st->in_last, &din) &&
            (!st->out_group || !perf_reading_delta(&out, &st->out_last, &dout)) &&
            din.time_enabled > 0) {
                /* Free-running: the counters ran all of the enabled time. */
                seconds = (double)din.time_enabled / 1e9;
                for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++) {
                        struct part *pt = &st->parts[p];

                        if (!pt->offered)
                                continue;
                        pt->in_rate = (double)din.values[pt->in_index] * pt->in_bpc / seconds;
                        pt->out_rate = pt->out_index >= 0 ? (double)dout.values[pt->out_index] *
                                                                pt->out_bpc / seconds
                                                          : 0;
                        pt->have_rate = true;
                }
                if (st->ioclk_index >= 0)
                        st->ioclk_hz = (double)din.values[st->ioclk_index] / seconds;
        }
        for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++) {
                struct part *pt = &st->parts[p];

                if (!pt->offered)
                        continue;
                pt->in_counts = in.values[pt->in_index];
                if (pt->out_index >= 0)
                        pt->out_counts = out.values[pt->out_index];
        }
        if (st->ioclk_index >= 0)
                st->ioclk_counts = in.values[st->ioclk_index];
        st->in_last = in;
        st->out_last = out;
        st->have_last = true;
        return 0;
}

struct emitter {
        const struct intel_iio_socket *s;
        struct sample_emitter out;
        char socket[12];
};

static struct pcie_sample base(struct emitter *em, const struct stack *st,
                               const struct pcie_family *family)
{
        struct pcie_sample s;

        sample_init(&s, family);
        sample_label(&s, "pmu", st->pmu);
        sample_label(&s, "socket", em->socket);
        return s;
}

/* A sample of one part: the stack's labels plus stack, part and port. */
static struct pcie_sample part_sample(struct emitter *em, const struct stack *st,
                                      const struct pcie_family *family, const char *box,
                                      const char *part, const char *port)
{
        struct pcie_sample s = base(em, st, family);

        sample_label(&s, "stack", box);
        sample_label(&s, "part", part);
        sample_label(&s, "port", port);
        return s;
}

static void emit_stack(struct emitter *em, const struct stack *st)
{
        char box[12], root_bus[16], bpc[24];
        struct pcie_sample s;

        snprintf(box, sizeof(box), "%u", st->box);
        snprintf(root_bus, sizeof(root_bus), "%04x:%02x", (unsigned int)st->domain, st->bus);

        /* What is known about the stack: mapping and scale. */
        snprintf(bpc, sizeof(bpc), "%g", st->parts[0].offered ? st->parts[0].in_bpc : 0.0);
        s = base(em, st, PCIE_FAM_IIO_STACK_INFO);
        sample_label(&s, "stack", box);
        sample_label(&s, "root_bus", st->mapping != MAPPED_NOT ? root_bus : "");
        sample_label(&s, "mapping", mapping_name(st->mapping));
        sample_label(&s, "bytes_per_count", bpc);
        sample_label(&s, "scale", st->scale_source);
        s.gauge = 1;
        sample_emit(&em->out, &s);

        for (unsigned int p = 0; p < INTEL_IIO_PARTS; p++) {
                const struct part *pt = &st->parts[p];
                char part[4], event[16];

                if (!pt->offered)
                        continue;
                snprintf(part, sizeof(part), "%u", p);
                if (pt->have_rate) {
                        s = part_sample(em, st, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND, box, part,
                                        pt->port);
                        sample_label(&s, "direction", "rx");
                        sample_label(&s, "tlp", "all");
                        s.gauge = pt->in_rate;
                        sample_emit(&em->out, &s);
                        if (pt->port[0] && pt->capacity) {
                                /* bw_in counts the data of inbound TLPs,
                                 * no headers: DMA writes (4DW headers)
                                 * and the far smaller completions of CPU
                                 * reads. */
                                struct pcie_util u;

                                pcie_util_init(&u, pt->capacity, pt->mps);
                                pcie_util_add(&u, PCIE_COUNTS_PAYLOAD, pt->in_rate, true,
                                              PCIE_TLP_REQUEST_HEADER_BYTES, -1);
                                s = part_sample(em, st, PCIE_FAM_PORT_UTILIZATION_RATIO, box, part,
                                                pt->port);
                                sample_label(&s, "direction", "rx");
                                pcie_util_emit(&u, &s, &em->out);
                        }
                        /* An estimate: not for the basic detail. */
                        if (pt->out_index >= 0 && em->s->opts->detail >= PCIE_DETAIL_DEFAULT) {
                                s = part_sample(em, st,
                                                PCIE_FAM_IIO_BW_OUT_ESTIMATE_BYTES_PER_SECOND, box,
                                                part, pt->port);
                                sample_label(&s, "direction", "tx");
                                s.gauge = pt->out_rate;
                                sample_emit(&em->out, &s);
                        }
                }
                if (em->s->opts->detail < PCIE_DETAIL_FULL)
                        continue; /* raw counts: the full detail */
                snprintf(event, sizeof(event), "bw_in_port%u", p);
                s = part_sample(em, st, PCIE_FAM_IIO_COUNTS_TOTAL, box, part, NULL);
                sample_label(&s, "event", event);
                s.counter = pt->in_counts;
                sample_emit(&em->out, &s);
        }
        if (st->ioclk_index >= 0 && em->s->opts->detail >= PCIE_DETAIL_FULL) {
                s = base(em, st, PCIE_FAM_IIO_COUNTS_TOTAL);
                sample_label(&s, "stack", box);
                sample_label(&s, "event", "ioclk");
                s.counter = st->ioclk_counts;
                sample_emit(&em->out, &s);
        }
}

int intel_iio_socket_tick(struct intel_iio_socket *s, double now, struct sample_set *out)
{
        double cpu0 = thread_cpu_seconds();
        struct emitter em = {.s = s, .out = {.set = out}};
        struct pcie_sample cs;
        int ret = 0;

        (void)now;
        snprintf(em.socket, sizeof(em.socket), "%u", s->id);
        for (size_t i = 0; i < s->stack_count && s->started; i++) {
                struct stack *st = &s->stacks[i];
                int err;

                if (st->gone) {
                        stack_back(s, st);
                        if (st->gone)
                                continue; /* nothing to publish: its series go stale */
                }
                err = read_stack(st);
                if (err && stack_went(s, st))
                        continue;
                if (err && !ret)
                        ret = err;
                if (!err)
                        emit_stack(&em, st);
        }
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        sample_init(&cs, PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL);
        sample_label(&cs, "pmu", "uncore_iio_free_running");
        sample_label(&cs, "socket", em.socket);
        cs.gauge = s->cpu_seconds;
        sample_emit(&em.out, &cs);
        return ret ? ret : em.out.err;
}
