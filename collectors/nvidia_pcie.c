// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvidia_pcie.c - PCIe traffic per Root Port through the NVIDIA Grace
 * PCIe PMU. See the header.
 */
#include "nvidia_pcie.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcie_families.h"
#include "hw_env.h"
#include "pcie_cfg.h"
#include "pcie_link.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "perf_pmu.h"

/* The events of one window, in group order (cycles leads). */
enum {
        EV_CYCLES,
        EV_RD_BYTES_LOC,
        EV_RD_BYTES_REM,
        EV_WR_BYTES_LOC,
        EV_WR_BYTES_REM,
        EV_RD_REQ_LOC,
        EV_RD_REQ_REM,
        EV_WR_REQ_LOC,
        EV_WR_REQ_REM,
        EV_RD_CUM_OUTS_LOC,
        EV_RD_CUM_OUTS_REM,
        EV_COUNT,
};
static const char *const event_names[EV_COUNT] = {
    "cycles",       "rd_bytes_loc",    "rd_bytes_rem",    "wr_bytes_loc",
    "wr_bytes_rem", "rd_req_loc",      "rd_req_rem",      "wr_req_loc",
    "wr_req_rem",   "rd_cum_outs_loc", "rd_cum_outs_rem",
};

const char *nvidia_pcie_mapping_name(enum nvidia_pcie_mapping m)
{
        static const char *const names[] = {"none", "default", "configured", "calibrated"};

        return (unsigned int)m < 4 ? names[m] : "none";
}

void nvidia_pcie_opts_default(struct nvidia_pcie_opts *opts)
{
        memset(opts, 0, sizeof(*opts));
}

int nvidia_pcie_opts_map(struct nvidia_pcie_opts *opts, unsigned int node, unsigned int bit,
                         const struct pci_addr *port, bool calibrated)
{
        struct nvidia_pcie_map *m = NULL;

        if (bit >= NVIDIA_PCIE_PORT_BITS)
                return -EINVAL;
        for (size_t i = 0; i < opts->map_count && !m; i++)
                if (opts->maps[i].node == node && opts->maps[i].bit == bit)
                        m = &opts->maps[i];
        if (!m) {
                if (opts->map_count >= NVIDIA_PCIE_MAX_MAPS)
                        return -ENOSPC;
                m = &opts->maps[opts->map_count++];
        }
        *m = (struct nvidia_pcie_map){
            .node = node, .bit = bit, .port = *port, .calibrated = calibrated};
        return 0;
}

int nvidia_pcie_parse_name(const char *name, unsigned int *node)
{
        const char *p = name;
        unsigned long v;
        char *end;

        if (strncmp(p, NVIDIA_PCIE_PREFIX, strlen(NVIDIA_PCIE_PREFIX)))
                return -EINVAL;
        p += strlen(NVIDIA_PCIE_PREFIX);
        if (*p < '0' || *p > '9' || (p[0] == '0' && p[1]))
                return -EINVAL;
        v = strtoul(p, &end, 10);
        if (*end || v > 4095)
                return -EINVAL;
        *node = (unsigned int)v;
        return 0;
}

int nvidia_pcie_latency(double cum_outs, double rd_req, double cycles, double elapsed_s,
                        double *seconds, double *cycles_per_read)
{
        *seconds = NAN;
        *cycles_per_read = NAN;
        if (!(rd_req > 0) || !(cycles > 0) || !(elapsed_s > 0) || !(cum_outs >= 0))
                return -EINVAL;
        *cycles_per_read = cum_outs / rd_req;
        /* The PMU clock is what its cycle counter says over the window. */
        *seconds = *cycles_per_read * elapsed_s / cycles;
        return 0;
}

int nvidia_pcie_next_bit(const bool mapped[NVIDIA_PCIE_PORT_BITS], int cursor)
{
        for (int k = 1; k <= NVIDIA_PCIE_PORT_BITS; k++) {
                int bit = ((cursor < 0 ? -1 : cursor) + k) % NVIDIA_PCIE_PORT_BITS;

                if (bit >= 0 && mapped[bit])
                        return bit;
        }
        return -1;
}

int nvidia_pcie_identify_bit(const double idle[NVIDIA_PCIE_PORT_BITS],
                             const double load[NVIDIA_PCIE_PORT_BITS], double expected,
                             double tolerance)
{
        int found = -ENOENT;

        if (!(expected > 0) || !(tolerance > 0))
                return -EINVAL;
        for (int i = 0; i < NVIDIA_PCIE_PORT_BITS; i++) {
                /* Other traffic on other ports may come and go: only a
                 * rise the size of the load's is taken for it. */
                if (fabs(load[i] - idle[i] - expected) > tolerance * expected)
                        continue;
                if (found >= 0)
                        return -ENOTUNIQ;
                found = i;
        }
        return found;
}

/* ---- discovery ---- */

struct port {
        enum nvidia_pcie_mapping mapping;
        char bdf[PCI_BDF_LEN];
        uint64_t capacity; /* bytes/s per direction now, 0 if unknown */
        unsigned int mps;
        bool have_rate;
        double rd[2], wr[2];   /* bytes/s to local [0] and remote [1] memory */
        double rd_req, wr_req; /* requests/s */
        bool have_latency;
        double latency_s, latency_cycles;
        double counting_s;         /* seconds this port was counted since start */
        uint64_t totals[EV_COUNT]; /* raw counts since start */
};

struct nvidia_pcie_socket {
        const struct hw_env *env;
        const struct nvidia_pcie_opts *opts;
        struct perf_pmu *pmu;
        char name[PERF_PMU_NAME_MAX];
        char identifier[64];
        char node_text[12];
        char ports_label[NVIDIA_PCIE_PORT_BITS * PCI_BDF_LEN]; /* their BDFs, "a,b" */
        unsigned int node;
        int cpu;
        struct perf_event_attr attrs[NVIDIA_PCIE_PORT_BITS][EV_COUNT];
        struct port ports[NVIDIA_PCIE_PORT_BITS];
        size_t mapped;

        int bit; /* the port counting now, -1 before start */
        struct perf_group *group;
        struct perf_group_reading last;
        double start_time;
        bool started, open_error_shown;
        double cpu_seconds;
};

struct nvidia_pcie {
        size_t count;
        struct nvidia_pcie_socket *sockets;
};

static double thread_cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
                return 0;
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The Root Port at @a in @topo, or PCIE_TOPO_NONE. */
static size_t root_port_at(const struct pcie_topo *topo, const struct pci_addr *a)
{
        size_t i = pcie_topo_find(topo, a);

        if (i == PCIE_TOPO_NONE || pcie_topo_get(topo, i)->info.port_type != PCIE_PORT_ROOT_PORT)
                return PCIE_TOPO_NONE;
        return i;
}

/* The first Root Port on PCI segment @segment, or PCIE_TOPO_NONE. */
static size_t root_port_on_segment(const struct pcie_topo *topo, uint32_t segment)
{
        size_t best = PCIE_TOPO_NONE;

        for (size_t i = 0; i < pcie_topo_count(topo); i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);

                if (f->addr.domain != segment || f->info.port_type != PCIE_PORT_ROOT_PORT)
                        continue;
                if (best == PCIE_TOPO_NONE ||
                    pci_addr_compare(&f->addr, &pcie_topo_get(topo, best)->addr) < 0)
                        best = i;
        }
        return best;
}

/* Whether a configuration line of @m's node names @m's Root Port for
 * another bit (then it wins over the calibration file). */
static bool configured_elsewhere(const struct nvidia_pcie_socket *s,
                                 const struct nvidia_pcie_map *m)
{
        for (size_t k = 0; k < s->opts->map_count; k++) {
                const struct nvidia_pcie_map *o = &s->opts->maps[k];

                if (!o->calibrated && o->node == m->node && o->bit != m->bit &&
                    !pci_addr_compare(&o->port, &m->port))
                        return true;
        }
        return false;
}

/* Bit @bit's Root Port by default, unless a configured or calibrated line
 * of this node names that Root Port for another bit. */
static size_t default_port(const struct nvidia_pcie_socket *s, const struct pcie_topo *topo,
                           unsigned int bit)
{
        size_t i = root_port_on_segment(topo, nvidia_pcie_default_segment(s->node, bit));

        for (size_t k = 0; k < s->opts->map_count && i != PCIE_TOPO_NONE; k++) {
                const struct nvidia_pcie_map *m = &s->opts->maps[k];

                if (m->node == s->node &&
                    !pci_addr_compare(&m->port, &pcie_topo_get(topo, i)->addr))
                        return PCIE_TOPO_NONE;
        }
        return i;
}

static void map_ports(struct nvidia_pcie_socket *s, const struct pcie_topo *topo)
{
        size_t at = 0;

        for (unsigned int bit = 0; bit < NVIDIA_PCIE_PORT_BITS && topo; bit++) {
                struct port *p = &s->ports[bit];
                enum nvidia_pcie_mapping how = NVIDIA_MAP_DEFAULT;
                size_t i = PCIE_TOPO_NONE;
                bool listed = false;

                for (size_t k = 0; k < s->opts->map_count; k++) {
                        const struct nvidia_pcie_map *m = &s->opts->maps[k];

                        if (m->node != s->node || m->bit != bit)
                                continue;
                        listed = true;
                        how = m->calibrated ? NVIDIA_MAP_CALIBRATED : NVIDIA_MAP_CONFIGURED;
                        if (m->calibrated && configured_elsewhere(s, m)) {
                                i = PCIE_TOPO_NONE; /* a configuration line wins */
                                break;
                        }
                        i = root_port_at(topo, &m->port);
                        if (i == PCIE_TOPO_NONE) {
                                char bdf[PCI_BDF_LEN];

                                pci_addr_format(&m->port, bdf);
                                hw_logf(s->env, HW_LOG_WARNING,
                                        "%s: root_port bit %u is mapped to %s (%s), which is no "
                                        "Root Port here; the bit is not counted",
                                        s->name, bit, bdf, nvidia_pcie_mapping_name(how));
                        }
                }
                if (!listed)
                        i = default_port(s, topo, bit);
                if (i == PCIE_TOPO_NONE)
                        continue;
                const struct pcie_function *f = pcie_topo_get(topo, i);

                p->mapping = how;
                snprintf(p->bdf, sizeof(p->bdf), "%s", f->bdf);
                p->capacity = f->link_up ? f->capacity_current : 0;
                p->mps = pcie_topo_link_mps(topo, i);
                s->mapped++;
                at += (size_t)snprintf(s->ports_label + at, sizeof(s->ports_label) - at, "%s%s",
                                       at ? "," : "", p->bdf);
        }
}

static int add_pmu(struct nvidia_pcie *nv, const struct hw_env *env, const struct pcie_topo *topo,
                   const struct nvidia_pcie_opts *opts, const char *name)
{
        struct nvidia_pcie_socket *n, *s;
        struct perf_pmu *pmu = NULL;
        unsigned int node;
        char text[64];
        int err;

        if (nvidia_pcie_parse_name(name, &node))
                return 0; /* a name this collector does not know */
        err = perf_pmu_load(env, name, &pmu);
        if (err == -ENOMEM)
                return err;
        if (err || !perf_pmu_cpu_count(pmu) || !perf_pmu_format(pmu, "root_port")) {
                hw_logf(env, HW_LOG_WARNING, "%s: %s; not counted", name,
                        err ? strerror(-err) : "no cpumask or no root_port format");
                perf_pmu_free(pmu);
                return 0;
        }
        n = realloc(nv->sockets, (nv->count + 1) * sizeof(*n));
        if (!n) {
                perf_pmu_free(pmu);
                return -ENOMEM;
        }
        nv->sockets = n;
        s = &nv->sockets[nv->count];
        memset(s, 0, sizeof(*s));
        s->env = env;
        s->opts = opts;
        s->pmu = pmu;
        s->node = node;
        s->cpu = perf_pmu_cpu(pmu, 0);
        s->bit = -1;
        snprintf(s->name, sizeof(s->name), "%s", name);
        snprintf(s->node_text, sizeof(s->node_text), "%u", node);
        if (hw_read_file(env, HW_SYSFS, text, sizeof(text),
                         "bus/event_source/devices/%s/identifier", name) > 0) {
                text[strcspn(text, "\n")] = '\0';
                snprintf(s->identifier, sizeof(s->identifier), "%s", text);
        }
        for (unsigned int bit = 0; bit < NVIDIA_PCIE_PORT_BITS; bit++) {
                for (size_t e = 0; e < EV_COUNT; e++) {
                        struct perf_event_attr *a = &s->attrs[bit][e];

                        err = perf_pmu_event_attr(pmu, event_names[e], a);
                        if (!err)
                                err = perf_pmu_set(pmu, a, "root_port", 1u << bit);
                        if (err) {
                                hw_logf(env, HW_LOG_WARNING, "%s: event %s: %s; not counted", name,
                                        event_names[e], strerror(-err));
                                perf_pmu_free(pmu);
                                return 0;
                        }
                }
        }
        map_ports(s, topo);
        nv->count++;
        if (!s->mapped)
                hw_logf(env, HW_LOG_WARNING,
                        "%s: no root_port bit maps to a Root Port (default: the Root Port on "
                        "segment %04x + bit; see NvidiaPCIeRootPort)",
                        name, nvidia_pcie_default_segment(node, 0));
        return 0;
}

int nvidia_pcie_discover(const struct hw_env *env, const struct pcie_topo *topo,
                         const struct nvidia_pcie_opts *opts, struct nvidia_pcie **out)
{
        struct nvidia_pcie *nv;
        char **names = NULL;
        int err;

        *out = NULL;
        err = perf_pmu_list(env, NVIDIA_PCIE_PREFIX, &names);
        if (err == -ENOMEM)
                return err;
        if (err <= 0 || !names || !names[0]) {
                perf_pmu_list_free(names);
                return 0;
        }
        nv = calloc(1, sizeof(*nv));
        if (!nv) {
                perf_pmu_list_free(names);
                return -ENOMEM;
        }
        err = 0;
        for (size_t i = 0; names[i] && !err; i++)
                err = add_pmu(nv, env, topo, opts, names[i]);
        perf_pmu_list_free(names);
        if (err || !nv->count) {
                nvidia_pcie_free(nv);
                return err;
        }
        *out = nv;
        return 0;
}

void nvidia_pcie_free(struct nvidia_pcie *nv)
{
        if (!nv)
                return;
        for (size_t i = 0; i < nv->count; i++) {
                nvidia_pcie_socket_stop(&nv->sockets[i]);
                perf_pmu_free(nv->sockets[i].pmu);
        }
        free(nv->sockets);
        free(nv);
}

size_t nvidia_pcie_socket_count(const struct nvidia_pcie *nv)
{
        return nv ? nv->count : 0;
}

struct nvidia_pcie_socket *nvidia_pcie_socket_at(struct nvidia_pcie *nv, size_t i)
{
        return i < nv->count ? &nv->sockets[i] : NULL;
}

const char *nvidia_pcie_socket_name(const struct nvidia_pcie_socket *s)
{
        return s->name;
}

size_t nvidia_pcie_socket_ports(const struct nvidia_pcie_socket *s)
{
        return s->mapped;
}

unsigned int nvidia_pcie_socket_node(const struct nvidia_pcie_socket *s)
{
        return s->node;
}

enum nvidia_pcie_mapping nvidia_pcie_socket_port(const struct nvidia_pcie_socket *s,
                                                 unsigned int bit, char bdf[PCI_BDF_LEN])
{
        if (bit >= NVIDIA_PCIE_PORT_BITS || s->ports[bit].mapping == NVIDIA_MAP_NONE) {
                bdf[0] = '\0';
                return NVIDIA_MAP_NONE;
        }
        snprintf(bdf, PCI_BDF_LEN, "%s", s->ports[bit].bdf);
        return s->ports[bit].mapping;
}

/* ---- counting ---- */

static bool mapped_bits(const struct nvidia_pcie_socket *s, bool mapped[NVIDIA_PCIE_PORT_BITS])
{
        bool any = false;

        for (unsigned int b = 0; b < NVIDIA_PCIE_PORT_BITS; b++) {
                mapped[b] = s->ports[b].mapping != NVIDIA_MAP_NONE;
                any |= mapped[b];
        }
        return any;
}

/* Opens and enables bit @bit's group; the window starts now. */
static int open_window(struct nvidia_pcie_socket *s, int bit)
{
        int err;

        perf_group_close(s->group);
        s->group = NULL;
        s->bit = bit;
        for (size_t e = 0; e < EV_COUNT; e++)
                s->attrs[bit][e].type = perf_pmu_type(s->pmu);
        err = perf_group_open(s->env, s->attrs[bit], EV_COUNT, s->cpu, &s->group, NULL);
        if (!err)
                err = perf_group_enable(s->group);
        if (!err)
                err = perf_group_read(s->group, &s->last);
        if (err) {
                if (!s->open_error_shown)
                        hw_logf(s->env, HW_LOG_ERROR,
                                "%s: perf_event_open(root_port bit %d, cpu %d): %s — %s; its "
                                "PCIe traffic is not counted",
                                s->name, bit, s->cpu, strerror(-err), perf_open_advice(err));
                s->open_error_shown = true;
                perf_group_close(s->group);
                s->group = NULL;
        }
        return err;
}

int nvidia_pcie_socket_start(struct nvidia_pcie_socket *s, double now)
{
        bool mapped[NVIDIA_PCIE_PORT_BITS];
        double cpu0 = thread_cpu_seconds();
        int err;

        nvidia_pcie_socket_stop(s);
        if (!mapped_bits(s, mapped))
                return -ENODATA;
        err = open_window(s, nvidia_pcie_next_bit(mapped, -1));
        if (err)
                return err;
        s->start_time = now;
        s->started = true;
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        return 0;
}

void nvidia_pcie_socket_stop(struct nvidia_pcie_socket *s)
{
        perf_group_close(s->group);
        s->group = NULL;
        s->started = false;
        for (unsigned int b = 0; b < NVIDIA_PCIE_PORT_BITS; b++) {
                s->ports[b].have_rate = false;
                s->ports[b].have_latency = false;
        }
}

/* The window's counts into the port's rates. */
static int read_window(struct nvidia_pcie_socket *s)
{
        struct perf_group_reading now, d;
        struct port *p = &s->ports[s->bit];
        double secs;
        int err = perf_group_read(s->group, &now);

        if (!err)
                err = perf_reading_delta(&now, &s->last, &d);
        if (err)
                return err;
        s->last = now;
        secs = (double)d.time_running / 1e9;
        if (!(secs > 0))
                return 0;
        for (size_t e = 0; e < EV_COUNT; e++)
                p->totals[e] += d.values[e];
        p->counting_s += secs;
        p->rd[0] = (double)d.values[EV_RD_BYTES_LOC] / secs;
        p->rd[1] = (double)d.values[EV_RD_BYTES_REM] / secs;
        p->wr[0] = (double)d.values[EV_WR_BYTES_LOC] / secs;
        p->wr[1] = (double)d.values[EV_WR_BYTES_REM] / secs;
        p->rd_req = (double)(d.values[EV_RD_REQ_LOC] + d.values[EV_RD_REQ_REM]) / secs;
        p->wr_req = (double)(d.values[EV_WR_REQ_LOC] + d.values[EV_WR_REQ_REM]) / secs;
        p->have_rate = true;
        p->have_latency = !nvidia_pcie_latency(
            (double)(d.values[EV_RD_CUM_OUTS_LOC] + d.values[EV_RD_CUM_OUTS_REM]),
            (double)(d.values[EV_RD_REQ_LOC] + d.values[EV_RD_REQ_REM]),
            (double)d.values[EV_CYCLES], secs, &p->latency_s, &p->latency_cycles);
        return 0;
}

/* ---- samples ---- */

static struct pcie_sample base(const struct nvidia_pcie_socket *s, const struct pcie_family *family)
{
        struct pcie_sample x;

        sample_init(&x, family);
        sample_label(&x, "pmu", s->name);
        return x;
}

static double coverage(const struct nvidia_pcie_socket *s, const struct port *p, double elapsed)
{
        double r = elapsed > 0 ? p->counting_s / elapsed : 0;

        (void)s;
        return r > 1 ? 1 : r;
}

static void emit_port(const struct nvidia_pcie_socket *s, struct sample_emitter *em,
                      unsigned int bit, double elapsed)
{
        static const char *const memory[2] = {"local", "remote"};
        const struct port *p = &s->ports[bit];
        struct pcie_util util[2];
        struct pcie_sample x;
        char bits[4];

        snprintf(bits, sizeof(bits), "%u", bit);
        x = base(s, PCIE_FAM_PMU_PORT_INFO);
        sample_label(&x, "port", p->bdf);
        sample_label(&x, "bit", bits);
        sample_label(&x, "mapping", nvidia_pcie_mapping_name(p->mapping));
        x.gauge = 1;
        sample_emit(em, &x);
        if (!p->have_rate)
                return;
        /* wr_bytes: the devices' memory writes (rx, MWr); rd_bytes: the
         * data of their reads (tx, completions). Payload only. */
        x = base(s, PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND);
        sample_label(&x, "port", p->bdf);
        sample_label(&x, "direction", "rx");
        sample_label(&x, "tlp", "mwr");
        x.gauge = p->wr[0] + p->wr[1];
        sample_emit(em, &x);
        x.labels[x.label_count - 2].value = "tx";
        x.labels[x.label_count - 1].value = "cpl";
        x.gauge = p->rd[0] + p->rd[1];
        sample_emit(em, &x);

        pcie_util_init(&util[0], p->capacity, p->mps);
        pcie_util_init(&util[1], p->capacity, p->mps);
        pcie_util_add(&util[0], PCIE_COUNTS_PAYLOAD, p->wr[0] + p->wr[1], true,
                      PCIE_TLP_REQUEST_HEADER_BYTES, p->wr_req);
        pcie_util_add(&util[1], PCIE_COUNTS_PAYLOAD, p->rd[0] + p->rd[1], true,
                      PCIE_TLP_COMPLETION_HEADER_BYTES, -1);
        for (int dir = 0; dir < 2 && p->capacity; dir++) {
                static const char *const names[2] = {"rx", "tx"};

                x = base(s, PCIE_FAM_PORT_UTILIZATION_RATIO);
                sample_label(&x, "port", p->bdf);
                sample_label(&x, "direction", names[dir]);
                pcie_util_emit(&util[dir], &x, em);
        }
        if (p->have_latency) {
                x = base(s, PCIE_FAM_PORT_LATENCY_SECONDS);
                sample_label(&x, "port", p->bdf);
                sample_label(&x, "event", "rx_mrd");
                x.gauge = p->latency_s;
                sample_emit(em, &x);
                if (s->opts->detail >= PCIE_DETAIL_FULL) {
                        sample_set_family(&x, PCIE_FAM_PORT_LATENCY_CYCLES);
                        x.gauge = p->latency_cycles;
                        sample_emit(em, &x);
                }
        }
        if (s->opts->detail < PCIE_DETAIL_DEFAULT)
                goto full;
        /* Requests per second, and the bandwidth by memory (local or remote). */
        x = base(s, PCIE_FAM_PORT_REQUESTS_PER_SECOND);
        sample_label(&x, "port", p->bdf);
        sample_label(&x, "direction", "rx");
        sample_label(&x, "tlp", "mwr");
        x.gauge = p->wr_req;
        sample_emit(em, &x);
        x.labels[x.label_count - 1].value = "mrd";
        x.gauge = p->rd_req;
        sample_emit(em, &x);
        for (int m = 0; m < 2; m++) {
                x = base(s, PCIE_FAM_PORT_MEMORY_BANDWIDTH_BYTES_PER_SECOND);
                sample_label(&x, "port", p->bdf);
                sample_label(&x, "direction", "rx");
                sample_label(&x, "tlp", "mwr");
                sample_label(&x, "memory", memory[m]);
                x.gauge = p->wr[m];
                sample_emit(em, &x);
                x.labels[x.label_count - 3].value = "tx";
                x.labels[x.label_count - 2].value = "cpl";
                x.gauge = p->rd[m];
                sample_emit(em, &x);
        }
full:
        if (s->opts->detail < PCIE_DETAIL_FULL)
                return;
        for (size_t e = 0; e < EV_COUNT; e++) {
                x = base(s, PCIE_FAM_PMU_COUNTS_TOTAL);
                sample_label(&x, "target", p->bdf);
                sample_label(&x, "event", event_names[e]);
                x.counter = p->totals[e];
                sample_emit(em, &x);
        }
        x = base(s, PCIE_FAM_PMU_COUNTING_SECONDS_TOTAL);
        sample_label(&x, "target", p->bdf);
        sample_label(&x, "event", "root_port");
        x.gauge = p->counting_s;
        sample_emit(em, &x);
        sample_set_family(&x, PCIE_FAM_PMU_COVERAGE_RATIO);
        x.gauge = coverage(s, p, elapsed);
        sample_emit(em, &x);
}

int nvidia_pcie_socket_tick(struct nvidia_pcie_socket *s, double now, struct sample_set *out)
{
        struct sample_emitter em = {.set = out};
        bool mapped[NVIDIA_PCIE_PORT_BITS];
        double cpu0 = thread_cpu_seconds(), elapsed, worst = 2;
        struct pcie_sample x;
        int ret = 0;

        if (!s->started)
                return -ENODEV;
        if (s->group)
                ret = read_window(s);
        mapped_bits(s, mapped);
        /* Rotate: the next mapped port counts over the next interval. */
        if (s->mapped > 1 || !s->group) {
                int err = open_window(s, nvidia_pcie_next_bit(mapped, s->bit));

                if (err && !ret)
                        ret = err;
        }
        elapsed = now - s->start_time;
        for (unsigned int b = 0; b < NVIDIA_PCIE_PORT_BITS; b++) {
                if (!mapped[b])
                        continue;
                emit_port(s, &em, b, elapsed);
                if (s->ports[b].have_rate && coverage(s, &s->ports[b], elapsed) < worst)
                        worst = coverage(s, &s->ports[b], elapsed);
        }
        x = base(s, PCIE_FAM_PMU_INFO);
        sample_label(&x, "node", s->node_text);
        sample_label(&x, "identifier", s->identifier);
        sample_label(&x, "ports", s->ports_label);
        x.gauge = 1;
        sample_emit(&em, &x);
        x = base(s, PCIE_FAM_PMU_MEASUREMENTS);
        x.gauge = (double)s->mapped;
        sample_emit(&em, &x);
        sample_set_family(&x, PCIE_FAM_PMU_MEASUREMENTS_COUNTING);
        x.gauge = s->group ? 1 : 0;
        sample_emit(&em, &x);
        if (s->opts->detail < PCIE_DETAIL_FULL && worst <= 1) {
                x = base(s, PCIE_FAM_PMU_COVERAGE_RATIO);
                x.gauge = worst;
                sample_emit(&em, &x);
        }
        s->cpu_seconds += thread_cpu_seconds() - cpu0;
        x = base(s, PCIE_FAM_COLLECTOR_CPU_SECONDS_TOTAL);
        x.gauge = s->cpu_seconds;
        sample_emit(&em, &x);
        return ret ? ret : em.err;
}

/* ---- one bit, for calibration ---- */

struct nvidia_pcie_bit {
        struct perf_group *group;
        struct perf_group_reading last;
};

int nvidia_pcie_bit_open(const struct hw_env *env, const char *pmu_name, unsigned int bit,
                         struct nvidia_pcie_bit **out)
{
        static const char *const names[] = {"rd_bytes_loc", "rd_bytes_rem", "wr_bytes_loc",
                                            "wr_bytes_rem"};
        struct perf_event_attr attrs[4];
        struct nvidia_pcie_bit *b;
        struct perf_pmu *pmu = NULL;
        int err;

        *out = NULL;
        if (bit >= NVIDIA_PCIE_PORT_BITS)
                return -EINVAL;
        err = perf_pmu_load(env, pmu_name, &pmu);
        if (!err && !perf_pmu_cpu_count(pmu))
                err = -ENODEV;
        for (size_t i = 0; i < 4 && !err; i++) {
                err = perf_pmu_event_attr(pmu, names[i], &attrs[i]);
                if (!err)
                        err = perf_pmu_set(pmu, &attrs[i], "root_port", 1u << bit);
        }
        b = err ? NULL : calloc(1, sizeof(*b));
        if (!err && !b)
                err = -ENOMEM;
        if (!err)
                err = perf_group_open(env, attrs, 4, perf_pmu_cpu(pmu, 0), &b->group, NULL);
        if (!err)
                err = perf_group_enable(b->group);
        if (!err)
                err = perf_group_read(b->group, &b->last);
        perf_pmu_free(pmu);
        if (err) {
                nvidia_pcie_bit_close(b);
                return err;
        }
        *out = b;
        return 0;
}

int nvidia_pcie_bit_read(struct nvidia_pcie_bit *b, double *bytes_per_second)
{
        struct perf_group_reading now, d;
        double secs, sum = 0;
        int err = perf_group_read(b->group, &now);

        if (!err)
                err = perf_reading_delta(&now, &b->last, &d);
        if (err)
                return err;
        b->last = now;
        secs = (double)d.time_running / 1e9;
        for (size_t i = 0; i < d.count; i++)
                sum += (double)d.values[i];
        *bytes_per_second = secs > 0 ? sum / secs : 0;
        return 0;
}

void nvidia_pcie_bit_close(struct nvidia_pcie_bit *b)
{
        if (!b)
                return;
        perf_group_close(b->group);
        free(b);
}
