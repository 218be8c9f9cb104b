/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_hisi_ptt.c - simulated PTT trace devices behind the perf ops. See
 * sim_hisi_ptt.h for the behaviour; this file is organised as
 *   sysfs   the PMU directories
 *   streams which workload flows a trace config records, and how fast
 *   entries building TLP headers and PTT entries, the time base
 *   buffer  the 4 MiB DMA buffer, AUX commits, PERF_RECORD_AUX, stops
 *   producer the arrival process and the ordering heap
 *   ops     perf_event_open rules, mmap/munmap, ioctl, close
 *   truth   what was generated, for tests
 */
#define _GNU_SOURCE
#include "sim_hisi_ptt.h"
#include "sim_pmu_core.h"
#include "sim_events.h"
#include "sim_hisi_pcie.h"
#include "sim_traffic.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw_env.h"

#define MAX_STREAMS   256
#define MAX_TAGSETS   64
#define MAX_MAPS      64
#define HEAP_MAX      (1u << 16) /* pending entries; beyond it the earliest goes out */
#define LAT_MAX       (1u << 22) /* truth latencies kept per trace */
#define PAGE          4096u
#define AUX_RECORD_SZ (sizeof(struct perf_event_header) + 3 * sizeof(uint64_t))

/* ---- small helpers ---- */

static bool is_pow2(uint64_t v)
{
        return v && !(v & (v - 1));
}

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
}

/* splitmix64: small, fast, and reproducible per trace. */
static uint64_t rng_next(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) /* [0, 1) */
{
        return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double dist_pick(const struct sim_dist *d, uint64_t *rng, double fallback)
{
        double total = 0, x;

        for (size_t i = 0; i < d->count; i++)
                total += d->weight[i];
        if (!d->count || total <= 0)
                return fallback;
        x = rng_unit(rng) * total;
        for (size_t i = 0; i < d->count; i++) {
                if (x < d->weight[i])
                        return d->value[i];
                x -= d->weight[i];
        }
        return d->value[d->count - 1];
}

/* Workload scale at @t seconds (the phases repeat as a cycle). */
static double phase_scale(const struct sim_workload *w, double t)
{
        double cycle = 0;

        for (size_t i = 0; i < w->phase_count; i++)
                cycle += w->phases[i].duration;
        if (!w->phase_count || cycle <= 0)
                return sim_traffic_carried_scale(w, 1);
        t = fmod(t, cycle);
        if (t < 0)
                t += cycle;
        for (size_t i = 0; i < w->phase_count; i++) {
                if (t < w->phases[i].duration)
                        return sim_traffic_carried_scale(w, w->phases[i].scale);
                t -= w->phases[i].duration;
        }
        return sim_traffic_carried_scale(w, w->phases[w->phase_count - 1].scale);
}

/* The largest phase scale its links carry. */
static double max_scale(const struct sim_workload *w)
{
        return sim_traffic_carried_scale(w, sim_traffic_peak_scale(w));
}

/* Bytes per second of a link (after line coding). */
static double link_bytes_per_second(const struct sim_device *d)
{
        static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
        unsigned int sp = d->cur_speed < 7 ? d->cur_speed : 0;
        double eff = sp <= 2 ? 0.8 : 128.0 / 130.0;
        unsigned int width = d->cur_width ? d->cur_width : 1;

        return (sp ? gts[sp] : 2.5) * 1e9 * width * eff / 8;
}

/* ---- state ---- */

/* One workload flow of one device that the trace records some of. */
struct stream {
        size_t dev;
        enum sim_flow_kind kind;
        double weight; /* transactions per second at scale max_s, thinned */
        double max_s;  /* the device's largest phase scale */
        bool req_rec;  /* the request TLPs are recorded */
        bool cpl_rec;  /* the completions are recorded */
        uint16_t requester, completer;
        size_t tagset;
        unsigned int mps, mrrs;
        uint64_t gap; /* ticks between TLPs of one transaction */
        uint64_t addr_base;
        bool addr64;
};

/* A TLP waiting for its time (completions come after their requests). */
struct pending {
        uint64_t tick;
        uint32_t hdr[4];
        uint8_t dir, kind;
        uint16_t payload;
        bool has_latency;             /* the last completion of a fully recorded request */
        uint32_t lat_first, lat_last; /* ticks */
};

struct tagset {
        uint16_t rid;
        bool tag10;
        uint16_t next;
};

struct mapping {
        void *addr;
        size_t len;
        size_t dev; /* owning device, SIZE_MAX once its event closed */
        bool aux;
};

struct ptt_dev {
        bool present; /* the core has a PTT function */
        uint16_t port_mask;

        /* The event (one per device: slot = core index in the core's table). */
        uint64_t config;
        int cpu;
        bool enabled, running, stopped;  /* the driver's start/stop, not perf's flag */
        struct perf_event_mmap_page *pg; /* ring mapping, or NULL */
        uint8_t *aux;                    /* AUX mapping, or NULL */
        uint64_t aux_size;
        uint8_t *chunk; /* the DMA buffer */
        size_t fill;
        uint64_t aux_head, data_head;

        /* The producer. */
        size_t stream_count;
        struct stream streams[MAX_STREAMS];
        double weight_total;
        size_t tagset_count;
        struct tagset tagsets[MAX_TAGSETS];
        struct pending *heap;
        size_t heap_n, heap_cap;
        uint64_t rng;
        double t_next; /* next arrival, seconds since creation */
        bool have_prev;
        uint64_t prev_tick;
        bool time_absolute; /* the machine's hisi_pcie.ptt_time */

        struct sim_ptt_truth truth;
        bool keep_latencies; /* the model's setting when the event started */
        uint32_t *lat_first, *lat_last;
        size_t lat_n, lat_cap;
};

struct sim_ptt {
        struct sim_pmu_core core; /* fd table (slot = core index), lock, clock, faults */
        const struct sim_machine *m;
        uint32_t type_base;
        double rate_cap;
        struct ptt_dev *devs; /* per core */
        struct mapping maps[MAX_MAPS];
        bool keep_latencies; /* sim_ptt_keep_latencies */
        double advanced;     /* the clock at the last advance (driver stops after it) */
};

static double now_s(const struct sim_ptt *p)
{
        return sim_pmu_core_now(&p->core);
}

/* Whether core @ci's device has its event open. */
static bool dev_open(const struct sim_ptt *p, size_t ci)
{
        return sim_pmu_core_event(&p->core, ci)->used;
}

/* Ticks of the machine's Time field clock (hisi_pcie.ptt_clock_hz). */
static uint64_t ticks_of(const struct sim_ptt *p, double seconds)
{
        return seconds <= 0 ? 0 : (uint64_t)(seconds * p->m->clocks.ptt_clock_hz);
}

/* ---- config fields (format files: filter 0-19, direction 20-23, type
 * 24-31, format 32-35) ---- */

static uint32_t cfg_filter(uint64_t c)
{
        return (uint32_t)(c & 0xfffff);
}
static unsigned int cfg_direction(uint64_t c)
{
        return (unsigned int)((c >> 20) & 0xf);
}
static unsigned int cfg_type(uint64_t c)
{
        return (unsigned int)((c >> 24) & 0xff);
}
static unsigned int cfg_format(uint64_t c)
{
        return (unsigned int)((c >> 32) & 0xf);
}

static unsigned int port_bit(const struct sim_device *rp)
{
        return (rp->dev & 7u) * 2;
}

/* Whether device @dev sits below one of core @ci's Root Ports (not a port). */
static bool below_core(const struct sim_machine *m, size_t ci, size_t dev)
{
        size_t rp = sim_machine_root_port(m, dev);
        const struct sim_core *c = &m->cores[ci];

        if (rp == SIM_NONE || rp == dev)
                return false;
        for (size_t i = 0; i < c->port_count; i++)
                if (c->ports[i] == rp)
                        return true;
        return false;
}

/* ---- sysfs ---- */

struct out {
        char *err;
        size_t errlen;
};

static int fail(struct out *o, int err, const char *path)
{
        if (o->err && o->errlen)
                snprintf(o->err, o->errlen, "cannot create %s: %s", path, strerror(err));
        return -err;
}

/* "@a/@b" into @buf; -ENAMETOOLONG when it does not fit. */
static int join(struct out *o, char *buf, size_t size, const char *a, const char *b)
{
        int n = snprintf(buf, size, "%s/%s", a, b);

        return n < 0 || (size_t)n >= size ? fail(o, ENAMETOOLONG, a) : 0;
}

static int mk(struct out *o, const char *path)
{
        if (mkdir(path, 0755) && errno != EEXIST)
                return fail(o, errno, path);
        return 0;
}

static int put(struct out *o, const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put(struct out *o, const char *dir, const char *name, const char *fmt, ...)
{
        char path[PATH_MAX], text[128];
        va_list ap;
        FILE *f;
        int n, r = 0;

        if (join(o, path, sizeof(path), dir, name))
                return -ENAMETOOLONG;
        va_start(ap, fmt);
        n = vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        f = fopen(path, "we");
        if (!f)
                return fail(o, errno, path);
        if (fwrite(text, 1, (size_t)n, f) != (size_t)n)
                r = fail(o, EIO, path);
        if (fclose(f) && !r)
                r = fail(o, errno, path);
        return r;
}

void sim_ptt_name(const struct sim_machine *m, size_t core, char *buf, size_t size)
{
        if (!buf || !size)
                return;
        buf[0] = '\0';
        if (m && core < m->core_count)
                snprintf(buf, size, "hisi_ptt%u_%u", m->cores[core].sicl, m->cores[core].id);
}

static int write_filters(struct out *o, const struct sim_machine *m, size_t ci, const char *dir)
{
        const struct sim_core *c = &m->cores[ci];
        char sub[PATH_MAX], bdf[16];
        int r;

        r = join(o, sub, sizeof(sub), dir, "root_port_filters");
        if (!r)
                r = mk(o, sub);
        for (size_t i = 0; !r && i < c->port_count; i++) {
                const struct sim_device *rp = &m->devices[c->ports[i]];

                sim_device_bdf(rp, bdf, sizeof(bdf));
                r = put(o, sub, bdf, "0x%05lx\n", (1ul << 19) | (1ul << port_bit(rp)));
        }
        if (!r)
                r = put(o, sub, "multiselect", "1\n");
        if (r)
                return r;
        r = join(o, sub, sizeof(sub), dir, "requester_filters");
        if (!r)
                r = mk(o, sub);
        for (size_t dev = 0; !r && dev < m->device_count; dev++) {
                if (!below_core(m, ci, dev))
                        continue;
                sim_device_bdf(&m->devices[dev], bdf, sizeof(bdf));
                r = put(o, sub, bdf, "0x%05lx\n", (unsigned long)sim_device_rid(&m->devices[dev]));
        }
        return r ? r : put(o, sub, "multiselect", "0\n");
}

static int write_ptt_pmu(struct out *o, const struct sim_machine *m, const char *root, size_t ci,
                         uint32_t type)
{
        static const char *const formats[][2] = {{"filter", "config:0-19"},
                                                 {"direction", "config:20-23"},
                                                 {"type", "config:24-31"},
                                                 {"format", "config:32-35"}};
        static const char *const tune[] = {"qos_tx_cpl", "qos_tx_np", "qos_tx_p",
                                           "rx_alloc_buf_level", "tx_alloc_buf_level"};
        char name[64], base[PATH_MAX], dir[PATH_MAX], sub[PATH_MAX];
        int r;

        sim_ptt_name(m, ci, name, sizeof(name));
        r = join(o, base, sizeof(base), root, "sys/bus/event_source/devices");
        if (!r)
                r = join(o, dir, sizeof(dir), base, name);
        if (!r)
                r = mk(o, dir);
        if (!r)
                r = put(o, dir, "type", "%u\n", type);
        if (!r)
                r = put(o, dir, "cpumask", "%d\n", m->cores[ci].cpu);
        if (!r)
                r = join(o, sub, sizeof(sub), dir, "format");
        if (!r)
                r = mk(o, sub);
        for (size_t i = 0; !r && i < sizeof(formats) / sizeof(formats[0]); i++)
                r = put(o, sub, formats[i][0], "%s\n", formats[i][1]);
        if (!r)
                r = write_filters(o, m, ci, dir);
        if (!r)
                r = join(o, sub, sizeof(sub), dir, "tune");
        if (!r)
                r = mk(o, sub);
        /* Plain files a test or the plugin may overwrite; 1 as a default. */
        for (size_t i = 0; !r && i < sizeof(tune) / sizeof(tune[0]); i++)
                r = put(o, sub, tune[i], "%u\n", 1u);
        return r;
}

int sim_ptt_sysfs_write_one(const struct sim_machine *m, const char *root, size_t core,
                            uint32_t type)
{
        struct out o = {NULL, 0};

        if (!m || !root || core >= m->core_count || m->cores[core].ptt_function == SIM_NONE)
                return -EINVAL;
        return write_ptt_pmu(&o, m, root, core, type);
}

uint32_t sim_ptt_type_of(size_t core, unsigned int generation)
{
        return SIM_PTT_TYPE_BASE + (uint32_t)core +
               SIM_MAX_CORES * (uint32_t)(generation % SIM_PMU_GENERATIONS);
}

int sim_ptt_sysfs_write(const struct sim_machine *m, const char *root, uint32_t type_base,
                        char *errbuf, size_t errlen)
{
        struct out o = {errbuf, errlen};

        for (size_t i = 0; i < m->core_count; i++) {
                int r;

                if (m->cores[i].ptt_function == SIM_NONE)
                        continue;
                r = write_ptt_pmu(&o, m, root, i, type_base + (uint32_t)i);
                if (r)
                        return r;
        }
        return 0;
}

/* ---- streams ---- */

/* Which sim classes a config records (kernel-facts §2.4; inbound CPL-B,
 * the completions of peer-to-peer and remote DMA, does not occur in the
 * model; 8DW direction 0 is reserved and recorded like 4DW's). */
static bool class_recorded(uint64_t config, enum sim_tlp_class c)
{
        static const unsigned int type_bit[SIM_TLP_CLASSES] = {
            [SIM_RX_MWR] = 1, [SIM_RX_MRD] = 2, [SIM_RX_CPL] = 4,
            [SIM_TX_MWR] = 1, [SIM_TX_MRD] = 2, [SIM_TX_CPL] = 4,
        };
        bool outbound = c == SIM_TX_MWR || c == SIM_TX_MRD || c == SIM_TX_CPL;
        unsigned int dir = cfg_direction(config);
        bool dw8 = cfg_format(config) == 1;

        if (!(cfg_type(config) & type_bit[c]))
                return false;
        switch (dir) {
        case 0:
                return !outbound;
        case 1:
                return outbound;
        case 2:
                return (outbound && !dw8) || c == SIM_RX_MWR || c == SIM_RX_MRD;
        default:
                return (outbound && !dw8) || c == SIM_RX_CPL;
        }
}

static size_t tagset_of(struct ptt_dev *d, uint16_t rid, bool tag10)
{
        for (size_t i = 0; i < d->tagset_count; i++)
                if (d->tagsets[i].rid == rid)
                        return i;
        if (d->tagset_count == MAX_TAGSETS)
                return 0; /* shared: tags may collide, as a real tag pool would stall */
        d->tagsets[d->tagset_count] = (struct tagset){rid, tag10, tag10 ? 256 : 0};
        return d->tagset_count++;
}

static uint16_t next_tag(struct ptt_dev *d, size_t set)
{
        struct tagset *t = &d->tagsets[set];
        uint16_t tag = t->next;

        t->next =
            t->tag10 ? (uint16_t)(tag + 1 >= 1024 ? 256 : tag + 1) : (uint16_t)((tag + 1) & 0xff);
        return tag;
}

/* Heavy DMA readers on a Gen5 link use 10-bit tags (a model rule). */
static bool wants_tag10(const struct sim_device *dev)
{
        return dev->cur_speed >= 5 && dev->workload.flow[SIM_DMA_READ].bytes_per_second >= 2e9;
}

/* Recorded TLPs per transaction of size @bytes. */
static double entries_per_txn(const struct stream *s, double bytes)
{
        double n = 0;
        unsigned int cut = s->kind == SIM_DMA_READ || s->kind == SIM_MMIO_READ ? s->mrrs : s->mps;
        double reqs = ceil(bytes / (cut ? cut : 128));

        if (s->req_rec)
                n += reqs;
        if (s->cpl_rec)
                n += ceil(bytes / (s->mps ? s->mps : 128)) + reqs - 1;
        return n;
}

static void stream_classes(enum sim_flow_kind k, enum sim_tlp_class *req, enum sim_tlp_class *cpl)
{
        static const enum sim_tlp_class r[SIM_FLOW_KINDS] = {SIM_RX_MWR, SIM_RX_MRD, SIM_TX_MWR,
                                                             SIM_TX_MRD};
        static const enum sim_tlp_class c[SIM_FLOW_KINDS] = {SIM_TLP_CLASSES, SIM_TX_CPL,
                                                             SIM_TLP_CLASSES, SIM_RX_CPL};

        *req = r[k];
        *cpl = c[k];
}

/* Whether the trace's filter selects class @c of device @dev. A requester
 * filter sees the TLPs that carry the device's ID as requester. */
static bool filter_selects(const struct sim_ptt *p, const struct ptt_dev *d, size_t dev,
                           enum sim_tlp_class c)
{
        const struct sim_machine *m = p->m;
        uint32_t f = cfg_filter(d->config);
        struct sim_tlp_rates rates;

        if (f & (1u << 19)) {
                size_t rp = sim_machine_root_port(m, dev);

                return rp != SIM_NONE && (f & 0xffff & (1u << port_bit(&m->devices[rp])));
        }
        if (sim_device_rid(&m->devices[dev]) != (f & 0xffff))
                return false;
        sim_traffic_rates(m, dev, c, &rates);
        return rates.device_is_requester;
}

static void add_stream(struct sim_ptt *p, struct ptt_dev *d, size_t dev, enum sim_flow_kind k)
{
        const struct sim_machine *m = p->m;
        const struct sim_device *sd = &m->devices[dev];
        const struct sim_flow *f = &sd->workload.flow[k];
        const struct sim_device *rp = &m->devices[sim_machine_root_port(m, dev)];
        enum sim_tlp_class req, cpl;
        struct stream s = {.dev = dev, .kind = k};
        bool dma = k == SIM_DMA_WRITE || k == SIM_DMA_READ;
        double mean = sim_dist_mean(&f->size);

        if (f->bytes_per_second <= 0 || !f->size.count || mean <= 0 ||
            d->stream_count == MAX_STREAMS)
                return;
        stream_classes(k, &req, &cpl);
        s.req_rec = class_recorded(d->config, req) && filter_selects(p, d, dev, req);
        s.cpl_rec = cpl != SIM_TLP_CLASSES && class_recorded(d->config, cpl) &&
                    filter_selects(p, d, dev, cpl);
        if (!s.req_rec && !s.cpl_rec)
                return;
        s.max_s = max_scale(&sd->workload);
        s.weight = f->bytes_per_second / mean * s.max_s;
        s.requester = dma ? sim_device_rid(sd) : sim_device_rid(rp);
        s.completer = dma ? sim_device_rid(rp) : sim_device_rid(sd);
        s.tagset = tagset_of(d, s.requester, dma && wants_tag10(sd));
        s.mps = sd->mps ? sd->mps : 128;
        s.mrrs = sd->mrrs ? sd->mrrs : 512;
        s.gap = (uint64_t)ceil((s.mps + 24) / link_bytes_per_second(sd) * m->clocks.ptt_clock_hz);
        if (!s.gap)
                s.gap = 1;
        s.addr64 = dma;
        s.addr_base = dma ? 0x2000000000ull + ((uint64_t)dev << 32)
                          : 0xe0000000ull + ((uint64_t)(dev & 0x1ff) << 20);
        d->streams[d->stream_count++] = s;
}

/* Streams of the config, thinned so that entries stay under the cap. */
static void build_streams(struct sim_ptt *p, struct ptt_dev *d, size_t ci)
{
        const struct sim_machine *m = p->m;
        double natural = 0, cap, thin = 1;
        size_t esize = cfg_format(d->config) == 1 ? 32 : 16;

        d->stream_count = 0;
        d->tagset_count = 0;
        for (size_t dev = 0; dev < m->device_count; dev++) {
                if (!m->devices[dev].has_workload || !below_core(m, ci, dev))
                        continue;
                for (int k = 0; k < SIM_FLOW_KINDS; k++)
                        add_stream(p, d, dev, (enum sim_flow_kind)k);
        }
        for (size_t i = 0; i < d->stream_count; i++) {
                const struct stream *s = &d->streams[i];
                const struct sim_dist *sz = &m->devices[s->dev].workload.flow[s->kind].size;
                double per = 0, wsum = 0;

                for (size_t j = 0; j < sz->count; j++) {
                        per += sz->weight[j] * entries_per_txn(s, sz->value[j]);
                        wsum += sz->weight[j];
                }
                natural += s->weight * (wsum > 0 ? per / wsum : 0);
        }
        cap = p->rate_cap / (double)esize;
        if (natural > cap)
                thin = cap / natural;
        d->weight_total = 0;
        for (size_t i = 0; i < d->stream_count; i++) {
                d->streams[i].weight *= thin;
                d->weight_total += d->streams[i].weight;
        }
        d->truth.thin = thin;
}

/* ---- entries ---- */

static uint32_t dw0_of(unsigned int fmt, unsigned int type, uint16_t tag, unsigned int len_dw)
{
        return (uint32_t)fmt << 29 | (uint32_t)type << 24 | (uint32_t)((tag >> 9) & 1) << 23 |
               (uint32_t)((tag >> 8) & 1) << 19 | (len_dw & 0x3ff);
}

static void mem_request(struct pending *e, bool write, bool addr64, unsigned int len_dw,
                        uint16_t rid, uint16_t tag, uint64_t addr)
{
        unsigned int fmt = (write ? 2u : 0u) | (addr64 ? 1u : 0u);
        unsigned int lbe = len_dw > 1 ? 0xf : 0;

        e->hdr[0] = dw0_of(fmt, 0, tag, len_dw);
        e->hdr[1] = (uint32_t)rid << 16 | (uint32_t)(tag & 0xff) << 8 | lbe << 4 | 0xf;
        e->hdr[2] = addr64 ? (uint32_t)(addr >> 32) : (uint32_t)addr & ~3u;
        e->hdr[3] = addr64 ? (uint32_t)addr & ~3u : 0;
}

static void completion(struct pending *e, uint16_t completer, uint16_t rid, uint16_t tag,
                       unsigned int len_dw, unsigned int byte_count, uint64_t addr)
{
        e->hdr[0] = dw0_of(2, 0x0a, tag, len_dw);
        e->hdr[1] = (uint32_t)completer << 16 | (byte_count & 0xfff);
        e->hdr[2] = (uint32_t)rid << 16 | (uint32_t)(tag & 0xff) << 8 | (uint32_t)(addr & 0x7f);
        e->hdr[3] = 0;
}

/* The Time field: ticks since the previous entry, the first of a run
 * absolute; saturating at the field's width. With hisi_pcie.ptt_time
 * "absolute" it is instead the free-running tick counter, wrapping at the
 * field's width. */
static uint32_t time_field(struct ptt_dev *d, uint64_t tick, bool dw8)
{
        uint64_t max = dw8 ? 0xffffffffull : 0x7ffull;
        uint64_t v;

        if (d->time_absolute)
                return (uint32_t)(tick & max);
        if (!d->have_prev)
                v = tick & max;
        else
                v = tick > d->prev_tick ? tick - d->prev_tick : 0;
        if (d->have_prev && tick < d->prev_tick)
                tick = d->prev_tick; /* out of order (heap overflow): keep the base */
        d->have_prev = true;
        d->prev_tick = tick;
        return (uint32_t)(v > max ? max : v);
}

static void encode_entry(struct ptt_dev *d, const struct pending *e, uint8_t *out, bool dw8)
{
        uint32_t h0 = e->hdr[0], t = time_field(d, e->tick, dw8);

        if (dw8) {
                put32(out, 0xffffffffu);
                put32(out + 4, 0);
                for (int i = 0; i < 4; i++)
                        put32(out + 8 + 4 * i, e->hdr[i]);
                put32(out + 24, 0);
                put32(out + 28, t);
                return;
        }
        put32(out, (h0 >> 29 & 3) << 30 | (h0 >> 24 & 0x1f) << 25 | (h0 >> 23 & 1) << 24 |
                       (h0 >> 19 & 1) << 23 | (h0 >> 16 & 1) << 22 | (h0 & 0x3ff) << 11 |
                       (t & 0x7ff));
        for (int i = 1; i < 4; i++)
                put32(out + 4 * i, e->hdr[i]);
}

/* ---- buffer: DMA buffer -> AUX area, records, stops ---- */

static void ring_record(struct ptt_dev *d, uint64_t offset, uint64_t size, uint64_t flags)
{
        struct perf_event_mmap_page *pg = d->pg;
        uint8_t rec[AUX_RECORD_SZ], *data;
        struct perf_event_header h = {PERF_RECORD_AUX, 0, (uint16_t)AUX_RECORD_SZ};
        uint64_t body[3] = {offset, size, flags};
        uint64_t tail, dsize;

        if (!pg || !pg->data_size) {
                d->truth.lost_records++;
                return;
        }
        dsize = pg->data_size;
        tail = __atomic_load_n(&pg->data_tail, __ATOMIC_ACQUIRE);
        if (dsize - (d->data_head - tail) < sizeof(rec)) {
                d->truth.lost_records++;
                return;
        }
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), body, sizeof(body));
        data = (uint8_t *)pg + pg->data_offset;
        for (size_t i = 0; i < sizeof(rec); i++)
                data[(d->data_head + i) % dsize] = rec[i];
        d->data_head += sizeof(rec);
        __atomic_store_n(&pg->data_head, d->data_head, __ATOMIC_RELEASE);
        if (flags & PERF_AUX_FLAG_PARTIAL)
                d->truth.partial_records++;
        if (flags & PERF_AUX_FLAG_TRUNCATED)
                d->truth.truncated_records++;
}

static uint64_t aux_free(const struct ptt_dev *d)
{
        uint64_t tail = __atomic_load_n(&d->pg->aux_tail, __ATOMIC_ACQUIRE);
        uint64_t used = d->aux_head - tail;

        return used >= d->aux_size ? 0 : d->aux_size - used;
}

/* Copies the DMA buffer's @n bytes to the AUX area and commits them. */
static void aux_commit(struct ptt_dev *d, size_t n, uint64_t flags)
{
        uint64_t pos = d->aux_head % d->aux_size;

        if (pos + n <= d->aux_size) {
                memcpy(d->aux + pos, d->chunk, n);
        } else {
                memcpy(d->aux + pos, d->chunk, d->aux_size - pos);
                memcpy(d->aux, d->chunk + (d->aux_size - pos), n - (d->aux_size - pos));
        }
        ring_record(d, d->aux_head, n, flags);
        d->aux_head += n;
        __atomic_store_n(&d->pg->aux_head, d->aux_head, __ATOMIC_RELEASE);
        d->truth.aux_bytes += n;
        memset(d->chunk, 0, n); /* the driver zeroes the buffer it copied */
        d->fill = 0;
}

static void silent_stop(struct ptt_dev *d)
{
        d->running = false;
        d->stopped = true;
        d->heap_n = 0;
        d->truth.stops++;
}

/* The driver's check before the next buffer (hisi_ptt_update_aux). */
static bool room_for_chunk(const struct ptt_dev *d)
{
        return aux_free(d) >= SIM_PTT_CHUNK &&
               d->aux_size - d->aux_head % d->aux_size >= SIM_PTT_CHUNK;
}

static void emit_entry(struct ptt_dev *d, const struct pending *e)
{
        bool dw8 = cfg_format(d->config) == 1;
        size_t esize = dw8 ? 32 : 16;

        encode_entry(d, e, d->chunk + d->fill, dw8);
        d->fill += esize;
        d->truth.entries++;
        d->truth.tlps[e->dir][e->kind]++;
        d->truth.payload_bytes[e->dir][e->kind] += e->payload;
        if (e->has_latency && !d->keep_latencies) {
                d->truth.requests_matched++;
        } else if (e->has_latency && d->lat_n < LAT_MAX) {
                if (d->lat_n == d->lat_cap) {
                        size_t cap = d->lat_cap ? d->lat_cap * 2 : 4096;
                        uint32_t *a = realloc(d->lat_first, cap * sizeof(*a));
                        uint32_t *b = a ? realloc(d->lat_last, cap * sizeof(*b)) : NULL;

                        if (a)
                                d->lat_first = a;
                        if (b)
                                d->lat_last = b;
                        if (a && b)
                                d->lat_cap = cap;
                }
                if (d->lat_n < d->lat_cap) {
                        d->lat_first[d->lat_n] = e->lat_first;
                        d->lat_last[d->lat_n++] = e->lat_last;
                        d->truth.requests_matched++;
                }
        }
        if (d->fill < SIM_PTT_CHUNK)
                return;
        aux_commit(d, SIM_PTT_CHUNK, 0);
        d->truth.chunks++;
        if (!room_for_chunk(d))
                silent_stop(d);
}

/* ---- producer: ordering heap and arrivals ---- */

static void heap_swap(struct pending *a, struct pending *b)
{
        struct pending t = *a;

        *a = *b;
        *b = t;
}

static void heap_pop(struct ptt_dev *d, struct pending *out)
{
        size_t i = 0;

        *out = d->heap[0];
        d->heap[0] = d->heap[--d->heap_n];
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;

                if (l < d->heap_n && d->heap[l].tick < d->heap[m].tick)
                        m = l;
                if (r < d->heap_n && d->heap[r].tick < d->heap[m].tick)
                        m = r;
                if (m == i)
                        break;
                heap_swap(&d->heap[i], &d->heap[m]);
                i = m;
        }
}

/* Emits every pending entry due before @tick, in time order. */
static void flush_before(struct ptt_dev *d, uint64_t tick)
{
        struct pending e;

        while (d->running && d->heap_n && d->heap[0].tick < tick) {
                heap_pop(d, &e);
                emit_entry(d, &e);
        }
}

static void heap_push(struct ptt_dev *d, const struct pending *e)
{
        size_t i;

        if (d->heap_n == d->heap_cap) {
                size_t cap = d->heap_cap ? d->heap_cap * 2 : 1024;
                struct pending *h = cap <= HEAP_MAX ? realloc(d->heap, cap * sizeof(*h)) : NULL;

                if (h) {
                        d->heap = h;
                        d->heap_cap = cap;
                } else {
                        struct pending out; /* full: the earliest goes out now */

                        heap_pop(d, &out);
                        if (d->running)
                                emit_entry(d, &out);
                }
        }
        i = d->heap_n++;
        d->heap[i] = *e;
        while (i && d->heap[(i - 1) / 2].tick > d->heap[i].tick) {
                heap_swap(&d->heap[i], &d->heap[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
}

static void push_tlp(struct ptt_dev *d, struct pending *e, uint64_t tick, enum sim_ptt_dir dir,
                     enum sim_ptt_kind kind, unsigned int payload)
{
        e->tick = tick;
        e->dir = (uint8_t)dir;
        e->kind = (uint8_t)kind;
        e->payload = (uint16_t)payload;
        heap_push(d, e);
}

static void gen_write(struct ptt_dev *d, const struct stream *s, uint64_t t0, unsigned int bytes,
                      uint64_t addr)
{
        enum sim_ptt_dir dir = s->kind == SIM_DMA_WRITE ? SIM_PTT_INBOUND : SIM_PTT_OUTBOUND;

        for (unsigned int done = 0, i = 0; done < bytes; i++) {
                unsigned int part = bytes - done < s->mps ? bytes - done : s->mps;
                unsigned int len_dw = (part + 3) / 4;
                struct pending e = {0};

                mem_request(&e, true, s->addr64, len_dw, s->requester, 0, addr + done);
                push_tlp(d, &e, t0 + i * s->gap, dir, SIM_PTT_MWR, len_dw * 4);
                done += part;
        }
}

/* One read request of @part bytes at @addr issued at @t and its
 * completions, split at MPS boundaries @lat ticks later. */
static void gen_read_request(struct ptt_dev *d, const struct stream *s, uint64_t t,
                             unsigned int part, uint64_t addr, uint64_t lat)
{
        bool dma = s->kind == SIM_DMA_READ;
        enum sim_ptt_dir req_dir = dma ? SIM_PTT_INBOUND : SIM_PTT_OUTBOUND;
        uint16_t tag = next_tag(d, s->tagset);
        unsigned int ncpl = (part + s->mps - 1) / s->mps;
        struct pending e = {0};

        if (s->req_rec) {
                mem_request(&e, false, s->addr64, (part + 3) / 4, s->requester, tag, addr);
                push_tlp(d, &e, t, req_dir, SIM_PTT_MRD, 0);
        }
        if (!s->cpl_rec)
                return;
        for (unsigned int k = 0, done = 0; k < ncpl; k++) {
                unsigned int piece = part - done < s->mps ? part - done : s->mps;
                unsigned int len_dw = (piece + 3) / 4;
                struct pending c = {0};

                completion(&c, s->completer, s->requester, tag, len_dw, part - done, addr + done);
                if (k == ncpl - 1 && s->req_rec) {
                        c.has_latency = true;
                        c.lat_first = (uint32_t)lat;
                        c.lat_last = (uint32_t)(lat + (ncpl - 1) * s->gap);
                }
                push_tlp(d, &c, t + lat + k * s->gap,
                         req_dir == SIM_PTT_INBOUND ? SIM_PTT_OUTBOUND : SIM_PTT_INBOUND,
                         SIM_PTT_CPLD, len_dw * 4);
                done += piece;
        }
}

static void gen_read(const struct sim_ptt *p, struct ptt_dev *d, const struct sim_flow *f,
                     const struct stream *s, uint64_t t0, unsigned int bytes, uint64_t addr)
{
        for (unsigned int done = 0, i = 0; done < bytes; i++) {
                unsigned int part = bytes - done < s->mrrs ? bytes - done : s->mrrs;
                double ns = dist_pick(&f->latency, &d->rng, 500);
                uint64_t lat = (uint64_t)llround(ns * p->m->clocks.ptt_clock_hz / 1e9);

                gen_read_request(d, s, t0 + i * s->gap, part, addr + done, lat ? lat : 1);
                done += part;
        }
}

static void gen_transaction(struct sim_ptt *p, struct ptt_dev *d, const struct stream *s, double t)
{
        const struct sim_flow *f = &p->m->devices[s->dev].workload.flow[s->kind];
        unsigned int bytes = (unsigned int)dist_pick(&f->size, &d->rng, 64);
        uint64_t t0 = ticks_of(p, t), addr;

        if (!bytes)
                bytes = 4;
        if (s->addr64) /* host memory: 4 KiB aligned buffers in a 1 GiB pool */
                addr = s->addr_base + (rng_next(&d->rng) % (1u << 18)) * 4096;
        else /* registers in the BAR: 64-byte aligned */
                addr = s->addr_base + (rng_next(&d->rng) % 256) * 64;
        if (s->kind == SIM_DMA_WRITE || s->kind == SIM_MMIO_WRITE)
                gen_write(d, s, t0, bytes, addr);
        else
                gen_read(p, d, f, s, t0, bytes, addr);
}

static const struct stream *pick_stream(struct ptt_dev *d)
{
        double x = rng_unit(&d->rng) * d->weight_total;

        for (size_t i = 0; i < d->stream_count; i++) {
                if (x < d->streams[i].weight)
                        return &d->streams[i];
                x -= d->streams[i].weight;
        }
        return d->stream_count ? &d->streams[d->stream_count - 1] : NULL;
}

static void schedule_next(struct ptt_dev *d, double from)
{
        d->t_next =
            d->weight_total > 0 ? from - log(1 - rng_unit(&d->rng)) / d->weight_total : INFINITY;
}

/* Brings one running trace up to @now: arrivals thinned by each device's
 * phase scale (a non-homogeneous Poisson process). */
static void produce(struct sim_ptt *p, struct ptt_dev *d, double now)
{
        while (d->running && d->t_next < now) {
                double t = d->t_next;
                const struct stream *s;

                flush_before(d, ticks_of(p, t));
                if (!d->running)
                        break;
                s = pick_stream(d);
                /* A removed function (sim_events.h) sends no more TLPs. */
                if (s &&
                    rng_unit(&d->rng) * s->max_s <
                        phase_scale(&p->m->devices[s->dev].workload, t) &&
                    sim_device_present(p->m, s->dev, t))
                        gen_transaction(p, d, s, t);
                schedule_next(d, t);
        }
        if (d->running)
                flush_before(d, ticks_of(p, now));
}

/* The first `ptt_stop` of core @core's device in (@t0, @t1] (sim_events.h),
 * or INFINITY. */
static double driver_stop_at(const struct sim_ptt *p, size_t core, double t0, double t1)
{
        struct sim_event_at at[16];
        size_t n = sim_events_between(p->m, t0, t1, at, sizeof(at) / sizeof(at[0]));

        for (size_t k = 0; k < n; k++) {
                const struct sim_event *e = &p->m->events[at[k].index];

                if (e->kind == SIM_EV_PTT_STOP && (e->core == SIM_NONE || e->core == core))
                        return at[k].at;
                /* Its driver unbound: perf_pmu_unregister() stops the
                 * trace in progress as the driver's stop does. */
                if (e->kind == SIM_EV_PMU_UNBIND && e->pmu == SIM_PMUK_HISI_PTT && e->core == core)
                        return at[k].at;
        }
        return INFINITY;
}

static void advance_locked(struct sim_pmu_core *c)
{
        struct sim_ptt *p = c->owner;
        double now = now_s(p);

        for (size_t i = 0; i < p->m->core_count; i++) {
                struct ptt_dev *d = &p->devs[i];
                double stop;

                if (!dev_open(p, i) || !d->running)
                        continue;
                /* The driver stops a trace in progress (a `ptt_stop`
                 * event): what came before it is traced, the buffer in
                 * progress is handed over flagged TRUNCATED
                 * (perf_aux_output_flag()), then the device stops as when
                 * its buffers ran out. */
                stop = driver_stop_at(p, i, p->advanced, now);
                if (stop <= now) {
                        produce(p, d, stop);
                        if (!d->running)
                                continue;
                        if (d->fill && d->pg)
                                aux_commit(d, d->fill, PERF_AUX_FLAG_TRUNCATED);
                        silent_stop(d);
                        continue;
                }
                produce(p, d, now);
        }
        p->advanced = now;
}

void sim_ptt_advance(struct sim_ptt *p)
{
        sim_pmu_core_lock(&p->core);
        advance_locked(&p->core);
        sim_pmu_core_unlock(&p->core);
}

/* ---- start / stop ---- */

/* Whether @cpu is on the die of @home (the device's cpumask CPU at boot):
 * hisi_ptt_pmu_add() traces only from a CPU of the device's node, and
 * after a CPU offline the cpumask names another CPU of it. Without the
 * die's CPU list, only @home itself. */
static bool same_die(const struct sim_machine *m, int cpu, int home)
{
        if (cpu == home)
                return true;
        if (cpu < 0 || home < 0 || (unsigned int)cpu >= m->cpus || (unsigned int)home >= m->cpus)
                return false;
        return m->cpu_sicl[cpu] && m->cpu_sicl[cpu] == m->cpu_sicl[home];
}

/* ENABLE: the driver's start. It needs the AUX area and room for a buffer
 * (the model's reading of perf_aux_output_begin); otherwise no trace runs,
 * silently. */
static void trace_start(struct sim_ptt *p, struct ptt_dev *d, size_t ci)
{
        d->enabled = true;
        d->stopped = false;
        d->running = false;
        if (!d->pg || !d->aux || !d->chunk)
                return;
        if (!same_die(p->m, d->cpu, p->m->cores[ci].cpu))
                return; /* a CPU off the device's node: add() does nothing */
        d->heap_n = 0;
        d->have_prev = false;
        d->fill = 0;
        build_streams(p, d, ci);
        if (aux_free(d) < SIM_PTT_CHUNK) {
                silent_stop(d);
                return;
        }
        d->running = true;
        schedule_next(d, now_s(p));
}

/* DISABLE: the driver copies the partly filled buffer; after a silent stop
 * the model reports the loss once. */
static void trace_stop(struct ptt_dev *d)
{
        if (!d->enabled)
                return;
        if (d->running && d->fill)
                aux_commit(d, d->fill, PERF_AUX_FLAG_PARTIAL);
        else if (d->stopped && d->pg)
                ring_record(d, d->aux_head, 0, PERF_AUX_FLAG_TRUNCATED);
        d->enabled = false;
        d->running = false;
        d->stopped = false;
        d->heap_n = 0;
}

/* ---- the model's part of the perf ops (sim_pmu_core does the rest) ---- */

/* The event as the core keeps it: its attr until start hands it to the
 * device. */
struct ptt_event {
        struct sim_pmu_event e;
        uint64_t config;
        int cpu;
        /* perf's enabled time (read_format TOTAL_TIME_ENABLED/RUNNING):
         * from ENABLE to DISABLE, whatever the driver did meanwhile. */
        bool on;
        double on_since, on_total;
};

static bool known_requester(const struct sim_machine *m, size_t ci, uint32_t rid)
{
        for (size_t dev = 0; dev < m->device_count; dev++)
                if (below_core(m, ci, dev) && sim_device_rid(&m->devices[dev]) == rid)
                        return true;
        return false;
}

/* hisi_ptt_pmu_event_init's checks (kernel-facts §2.3). */
static int check_config(const struct sim_ptt *p, size_t ci, uint64_t config)
{
        const struct ptt_dev *d = &p->devs[ci];
        uint32_t f = cfg_filter(config);
        unsigned int type = cfg_type(config);

        if (f & (1u << 19)) {
                if ((f & 0xffff) & ~(uint32_t)d->port_mask)
                        return -EINVAL;
        } else if (!known_requester(p->m, ci, f & 0xffff)) {
                return -EINVAL;
        }
        if (cfg_direction(config) > 3)
                return -EINVAL;
        if (!type || (type & ~7u))
                return -EINVAL;
        if (cfg_format(config) > 1)
                return -EINVAL;
        return 0;
}

/* The event of core @ci's device takes slot @ci (-EBUSY while open:
 * PERF_PMU_CAP_EXCLUSIVE, one trace per device). */
static int ptt_event_init(struct sim_pmu_core *c, const struct perf_event_attr *attr, pid_t pid,
                          int cpu, struct sim_pmu_event *ev, size_t *slot)
{
        struct sim_ptt *p = c->owner;
        struct ptt_event *e = (struct ptt_event *)ev;
        size_t ci;
        int err = 0;

        uint32_t off = attr->type - p->type_base;
        unsigned int generation;

        if (attr->type < p->type_base || off / SIM_MAX_CORES >= SIM_PMU_GENERATIONS ||
            off % SIM_MAX_CORES >= p->m->core_count || !p->devs[off % SIM_MAX_CORES].present)
                return -ENOENT;
        ci = off % SIM_MAX_CORES;
        /* An unbound device's type is no longer in the kernel's idr, nor is
         * the type of an earlier binding (sim_events.h). */
        if (!sim_pmu_kind_bound(p->m, SIM_PMUK_HISI_PTT, ci, now_s(p), &generation) ||
            generation % SIM_PMU_GENERATIONS != off / SIM_MAX_CORES)
                return -ENOENT;
        if (sim_pmu_core_fault(c, ci, &err))
                return -err;
        if (cpu >= 0 && (unsigned int)cpu >= p->m->cpus)
                return -EINVAL;
        if (cpu < 0 || pid != -1)
                return -EOPNOTSUPP;
        /* hisi_ptt_pmu_event_init() keeps event->cpu: perf_event_open()
         * on an offline CPU fails there (the hisi_pcie and uncore drivers
         * rewrite it to their cpumask CPU, so theirs open). */
        if (!sim_cpu_is_online(p->m, (unsigned int)cpu, now_s(p)))
                return -ENODEV;
        *slot = ci;
        e->config = attr->config;
        e->cpu = cpu;
        return check_config(p, ci, attr->config);
}

/*
 * Pages the kernel would allocate for a mapping or a trace: taken with mmap
 * and given back with munmap, so the process holds them only while the
 * area exists. From malloc, a freed 16 MiB area stays in the allocator's
 * arena (glibc raises its mmap threshold after the first such free), and
 * the daemon's RSS would carry the simulator's history instead of the
 * collector's memory. Fresh pages are zeroed, as the kernel's are.
 */
static void *pages_alloc(size_t len)
{
        void *addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        return addr == MAP_FAILED ? NULL : addr;
}

static void pages_free(void *addr, size_t len)
{
        if (addr)
                munmap(addr, len);
}

static int ptt_start(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t ci)
{
        struct sim_ptt *p = c->owner;
        const struct ptt_event *e = (const struct ptt_event *)ev;
        struct ptt_dev *d = &p->devs[ci];

        /* The driver's DMA buffers are kernel memory it keeps; the
         * simulator's stand-in exists only while the event does. */
        d->chunk = pages_alloc(SIM_PTT_CHUNK);
        if (!d->chunk)
                return -ENOMEM;
        d->config = e->config;
        d->cpu = e->cpu;
        d->pg = NULL;
        d->aux = NULL;
        d->aux_size = 0;
        d->aux_head = d->data_head = 0;
        d->rng = 0x5eed0000ull + ci * 7919 + c->serial;
        memset(&d->truth, 0, sizeof(d->truth));
        d->lat_n = 0;
        d->keep_latencies = p->keep_latencies;
        ((struct ptt_event *)ev)->on = ev->enabled;
        ((struct ptt_event *)ev)->on_since = now_s(p);
        ((struct ptt_event *)ev)->on_total = 0;
        if (ev->enabled)
                trace_start(p, d, ci);
        return 0;
}

/* A trace event counts nothing: a read answers 0 (the data is in the AUX
 * area). */
static void ptt_report(struct sim_pmu_core *c, const struct sim_pmu_event *ev,
                       struct sim_pmu_report *out)
{
        const struct ptt_event *e = (const struct ptt_event *)ev;
        double on = e->on_total + (e->on ? now_s(c->owner) - e->on_since : 0);

        *out = (struct sim_pmu_report){0};
        out->enabled_ns = out->running_ns = on > 0 ? (uint64_t)(on * 1e9) : 0;
}

static void ptt_enable(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t ci, bool on)
{
        struct sim_ptt *p = c->owner;
        struct ptt_dev *d = &p->devs[ci];

        struct ptt_event *e = (struct ptt_event *)ev;

        if (on && !e->on) {
                e->on = true;
                e->on_since = now_s(p);
        } else if (!on && e->on) {
                e->on = false;
                e->on_total += now_s(p) - e->on_since;
        }
        if (!on)
                trace_stop(d);
        else if (!d->enabled)
                trace_start(p, d, ci);
}

static struct mapping *new_mapping(struct sim_ptt *p, size_t len, size_t dev, bool aux)
{
        for (size_t i = 0; i < MAX_MAPS; i++) {
                struct mapping *m = &p->maps[i];

                if (m->addr)
                        continue;
                /* Untouched pages cost nothing, which keeps tests fast. */
                m->addr = pages_alloc(len);
                if (!m->addr)
                        return NULL;
                m->len = len;
                m->dev = dev;
                m->aux = aux;
                return m;
        }
        return NULL;
}

static int map_ring(struct sim_ptt *p, struct ptt_dev *d, size_t ci, size_t len, void **addr)
{
        size_t pages = len / PAGE;
        struct mapping *m;

        if (d->pg || len % PAGE || pages < 1 || (pages > 1 && !is_pow2(pages - 1)))
                return -EINVAL;
        m = new_mapping(p, len, ci, false);
        if (!m)
                return -ENOMEM;
        d->pg = m->addr;
        d->pg->data_offset = PAGE;
        d->pg->data_size = len - PAGE;
        *addr = m->addr;
        return 0;
}

/* The AUX area: the perf core's checks (-EINVAL), then the driver's
 * setup_aux, whose refusal (overwrite mode, under 16 MiB) rb_alloc_aux
 * turns into -ENOMEM. */
static int map_aux(struct sim_ptt *p, struct ptt_dev *d, size_t ci, size_t len, int prot,
                   off_t offset, void **addr)
{
        struct perf_event_mmap_page *pg = d->pg;
        struct mapping *m;

        if (!pg || d->aux)
                return -EINVAL;
        if ((uint64_t)offset != pg->aux_offset || len != pg->aux_size || len % PAGE ||
            pg->aux_offset < pg->data_offset + pg->data_size || pg->aux_offset % PAGE ||
            !is_pow2(len / PAGE))
                return -EINVAL;
        if (!(prot & PROT_WRITE) || len < SIM_PTT_MIN_AUX)
                return -ENOMEM;
        m = new_mapping(p, len, ci, true);
        if (!m)
                return -ENOMEM;
        d->aux = m->addr;
        d->aux_size = len;
        *addr = m->addr;
        return 0;
}

static int ptt_mmap(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t ci, size_t len,
                    int prot, off_t offset, void **addr)
{
        struct sim_ptt *p = c->owner;
        struct ptt_dev *d = &p->devs[ci];

        (void)ev;
        if (offset == 0)
                return map_ring(p, d, ci, len, addr);
        return map_aux(p, d, ci, len, prot, offset, addr);
}

static int ptt_munmap(struct sim_pmu_core *c, void *addr, size_t len)
{
        struct sim_ptt *p = c->owner;

        for (size_t i = 0; i < MAX_MAPS; i++) {
                struct mapping *m = &p->maps[i];

                if (!m->addr || m->addr != addr)
                        continue;
                if (m->len != len)
                        return -EINVAL;
                if (m->dev != SIZE_MAX) { /* the producer loses its target */
                        struct ptt_dev *d = &p->devs[m->dev];

                        if (m->aux)
                                d->aux = NULL;
                        else
                                d->pg = NULL;
                        d->running = false;
                }
                pages_free(m->addr, m->len);
                memset(m, 0, sizeof(*m));
                return 0;
        }
        return -EINVAL;
}

/* close: the driver stops the trace; areas stay valid until munmap, as
 * with the kernel. */
static void ptt_release(struct sim_pmu_core *c, struct sim_pmu_event *ev, size_t ci)
{
        struct sim_ptt *p = c->owner;
        struct ptt_dev *d = &p->devs[ci];

        (void)ev;
        trace_stop(d);
        for (size_t i = 0; i < MAX_MAPS; i++)
                if (p->maps[i].addr && p->maps[i].dev == ci)
                        p->maps[i].dev = SIZE_MAX;
        pages_free(d->chunk, SIM_PTT_CHUNK);
        d->chunk = NULL;
        d->pg = NULL;
        d->aux = NULL;
}

static const struct sim_pmu_model ptt_model = {
    .event_size = sizeof(struct ptt_event),
    .event_cap = SIM_MAX_CORES,
    .fd_base = SIM_PTT_FD_BASE,
    .serial_fds = true,
    .groups = false,
    .refused_excludes = SIM_EXCLUDE_USER | SIM_EXCLUDE_KERNEL | SIM_EXCLUDE_HV | SIM_EXCLUDE_IDLE,
    .advance = advance_locked,
    .event_init = ptt_event_init,
    .start = ptt_start,
    .report = ptt_report,
    .enable = ptt_enable,
    .release = ptt_release,
    .mmap = ptt_mmap,
    .munmap = ptt_munmap,
};

/* ---- life cycle ---- */

int sim_ptt_new(const struct sim_machine *m, uint32_t type_base, sim_clock_fn clock,
                void *clock_ctx, struct sim_ptt **out)
{
        struct sim_ptt *p = calloc(1, sizeof(*p));

        *out = NULL;
        if (!p)
                return -ENOMEM;
        p->devs = calloc(m->core_count ? m->core_count : 1, sizeof(*p->devs));
        p->m = m;
        p->type_base = type_base;
        if (!p->devs ||
            sim_pmu_core_init(&p->core, &ptt_model, p, clock, clock_ctx, m->core_count)) {
                sim_ptt_free(p);
                return -ENOMEM;
        }
        p->rate_cap = SIM_PTT_DEFAULT_RATE_CAP;
        for (size_t ci = 0; ci < m->core_count; ci++) {
                const struct sim_core *c = &m->cores[ci];
                struct ptt_dev *d = &p->devs[ci];

                d->present = c->ptt_function != SIM_NONE;
                d->time_absolute = m->clocks.ptt_time_absolute;
                for (size_t i = 0; i < c->port_count; i++)
                        d->port_mask |= (uint16_t)(1u << port_bit(&m->devices[c->ports[i]]));
        }
        *out = p;
        return 0;
}

void sim_ptt_free(struct sim_ptt *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < MAX_MAPS; i++)
                pages_free(p->maps[i].addr, p->maps[i].len);
        for (size_t ci = 0; p->devs && ci < p->m->core_count; ci++) {
                pages_free(p->devs[ci].chunk, SIM_PTT_CHUNK);
                free(p->devs[ci].heap);
                free(p->devs[ci].lat_first);
                free(p->devs[ci].lat_last);
        }
        sim_pmu_core_fini(&p->core);
        free(p->devs);
        free(p);
}

const struct perf_ops *sim_ptt_ops(struct sim_ptt *p)
{
        return &p->core.ops;
}

bool sim_ptt_owns(struct sim_ptt *p, const void *addr)
{
        bool found = false;

        sim_pmu_core_lock(&p->core);
        for (size_t i = 0; i < MAX_MAPS && !found; i++)
                found = addr && p->maps[i].addr == addr;
        sim_pmu_core_unlock(&p->core);
        return found;
}

void sim_ptt_inject(struct sim_ptt *p, size_t core, int err, long count)
{
        sim_pmu_core_inject(&p->core, core, err, count);
}

void sim_ptt_set_rate_cap(struct sim_ptt *p, double bytes_per_second)
{
        sim_pmu_core_lock(&p->core);
        if (bytes_per_second > 0)
                p->rate_cap = bytes_per_second;
        sim_pmu_core_unlock(&p->core);
}

size_t sim_ptt_open_count(struct sim_ptt *p)
{
        return sim_pmu_core_open_count(&p->core);
}

size_t sim_ptt_mapped_count(struct sim_ptt *p)
{
        size_t n = 0;

        sim_pmu_core_lock(&p->core);
        for (size_t i = 0; i < MAX_MAPS; i++)
                n += p->maps[i].addr != NULL;
        sim_pmu_core_unlock(&p->core);
        return n;
}

/* ---- truth ---- */

int sim_ptt_truth(struct sim_ptt *p, size_t core, struct sim_ptt_truth *out)
{
        memset(out, 0, sizeof(*out));
        if (core >= p->m->core_count || !p->devs[core].present)
                return -ENOENT;
        sim_pmu_core_lock(&p->core);
        advance_locked(&p->core);
        *out = p->devs[core].truth;
        sim_pmu_core_unlock(&p->core);
        return 0;
}

void sim_ptt_truth_reset(struct sim_ptt *p, size_t core)
{
        if (core >= p->m->core_count)
                return;
        sim_pmu_core_lock(&p->core);
        advance_locked(&p->core);
        memset(&p->devs[core].truth, 0, sizeof(p->devs[core].truth));
        p->devs[core].lat_n = 0;
        sim_pmu_core_unlock(&p->core);
}

void sim_ptt_keep_latencies(struct sim_ptt *p, bool on)
{
        sim_pmu_core_lock(&p->core);
        p->keep_latencies = on;
        sim_pmu_core_unlock(&p->core);
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

double sim_ptt_truth_latency_quantile(struct sim_ptt *p, size_t core, bool last, double q)
{
        double ret = -1;
        uint32_t *copy;
        size_t n, rank;

        if (core >= p->m->core_count)
                return -1;
        sim_pmu_core_lock(&p->core);
        n = p->devs[core].lat_n;
        copy = n ? malloc(n * sizeof(*copy)) : NULL;
        if (copy) {
                memcpy(copy, last ? p->devs[core].lat_last : p->devs[core].lat_first,
                       n * sizeof(*copy));
                qsort(copy, n, sizeof(*copy), cmp_u32);
                rank = (size_t)ceil(q * (double)n);
                rank = rank ? rank - 1 : 0;
                ret = copy[rank < n ? rank : n - 1] * (1e9 / p->m->clocks.ptt_clock_hz);
        }
        sim_pmu_core_unlock(&p->core);
        free(copy);
        return ret;
}
