// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptt_capture.c - live PTT trace windows through the seam. See
 * ptt_capture.h; the AUX protocol is kernel-facts §4.1.
 */
#define _GNU_SOURCE
#include "ptt_capture.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw_env.h"
#include "pcie_families.h"
#include "perf_pmu.h"
#include "sample.h"

/* ---- options ---- */

void ptt_capture_opts_default(struct ptt_capture_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->type_mask = 7;
        o->direction = 2; /* 4DW: inbound requests with outbound completions */
        o->format = PTT_FORMAT_4DW;
        o->duration_s = 0.1;
        o->period_s = 10;
        o->poll_s = 0.01;
        o->aux_bytes = PTT_AUX_MIN;
        o->ring_pages = 16;
        o->time_mode = PTT_TIME_DELTA;
        o->clock_hz = PTT_CAPTURE_DEFAULT_CLOCK_HZ;
        o->top_n = PTT_SUMMARY_DEFAULT_TOP_N;
}

static bool is_pow2(uint64_t v)
{
        return v && !(v & (v - 1));
}

static int refuse(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* The messages name the options as users write them (the collectd block,
 * Netdata's pcie.conf) with the value that is wrong. */
int ptt_capture_opts_check(const struct ptt_capture_opts *o, char *err, size_t errlen)
{
        if (!o->type_mask || (o->type_mask & ~7u))
                return refuse(err, errlen,
                              "TraceType: %u is not a non-empty mask of 1 (posted), 2 "
                              "(non-posted), 4 (completions)",
                              o->type_mask);
        if (o->direction < 0 || o->direction > 3)
                return refuse(err, errlen, "TraceDirection %d: must be 0, 1, 2 or 3", o->direction);
        if (o->format != PTT_FORMAT_4DW && o->format != PTT_FORMAT_8DW)
                return refuse(err, errlen, "TraceFormat must be 4DW or 8DW");
        if (!is_pow2(o->aux_bytes) || o->aux_bytes < PTT_AUX_MIN)
                return refuse(err, errlen,
                              "TraceBufferSize %llu: must be a power of two of at least "
                              "16777216 (16 MiB: the driver needs 4 buffers of 4 MiB)",
                              (unsigned long long)o->aux_bytes);
        if (!is_pow2(o->ring_pages))
                return refuse(err, errlen, "the data ring's page count %u is not a power of two",
                              o->ring_pages);
        if (!(o->duration_s > 0) || !(o->period_s > o->duration_s))
                return refuse(err, errlen,
                              "TraceDuration %g, TracePeriod %g: the duration must be above 0 "
                              "and shorter than the period",
                              o->duration_s, o->period_s);
        if (!(o->poll_s > 0))
                return refuse(err, errlen, "the poll interval %g must be above 0", o->poll_s);
        if (!o->clock_hz)
                return refuse(err, errlen,
                              "TraceClock 0: must be above 0 (latencies are exported in seconds)");
        if (o->requester_count > 1)
                return refuse(err, errlen,
                              "TraceRequester: %zu given, only one per trace "
                              "(requester_filters/multiselect is 0)",
                              o->requester_count);
        if (o->requester_count && o->root_port_count)
                return refuse(err, errlen,
                              "TraceRootPort and TraceRequester: filter by Root Ports or by one "
                              "Requester, not both");
        if (o->root_port_count > PTT_CAPTURE_MAX_PORTS)
                return refuse(err, errlen, "TraceRootPort: %zu given, at most %d",
                              o->root_port_count, PTT_CAPTURE_MAX_PORTS);
        return 0;
}

/* ---- filters from sysfs ---- */

/* "0000:00:10.0" or "00:10.0" -> canonical "%04x:%02x:%02x.%d". */
static int bdf_canonical(const char *in, char *out, size_t size)
{
        unsigned int dom = 0, bus, dev, fn;
        char tail;

        if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4) {
                dom = 0;
                if (sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3)
                        return -EINVAL;
        }
        if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
                return -EINVAL;
        snprintf(out, size, "%04x:%02x:%02x.%u", dom, bus, dev, fn);
        return 0;
}

static int cmp_filter(const void *a, const void *b)
{
        return strcmp(((const struct ptt_filter_entry *)a)->bdf,
                      ((const struct ptt_filter_entry *)b)->bdf);
}

static int read_filter(const struct hw_env *env, const char *rel, const char *name,
                       struct ptt_filter_entry *e)
{
        char text[64], *end;
        unsigned long v;
        ssize_t n = hw_read_file(env, HW_SYSFS, text, sizeof(text), "%s/%s", rel, name);

        if (n < 0)
                return (int)n;
        errno = 0;
        v = strtoul(text, &end, 0);
        if (errno || end == text || v > 0xfffff)
                return -EBADMSG;
        snprintf(e->bdf, sizeof(e->bdf), "%s", name);
        e->value = (uint32_t)v;
        return 0;
}

struct filter_list {
        const struct hw_env *env;
        const char *rel;
        struct ptt_filter_entry *list;
        size_t n, cap;
};

static int filter_entry(void *ctx, const char *name)
{
        struct filter_list *fl = ctx;
        int err;

        if (name[0] == '.' || !strcmp(name, "multiselect") || strlen(name) >= PTT_BDF_LEN)
                return 0;
        if (fl->n == fl->cap) {
                size_t cap = fl->cap ? fl->cap * 2 : 16;
                struct ptt_filter_entry *g = realloc(fl->list, cap * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                fl->list = g;
                fl->cap = cap;
        }
        /* A filter file that does not read as a value is an error of the
         * whole list: the filters are the driver's, never guessed. */
        err = read_filter(fl->env, fl->rel, name, &fl->list[fl->n]);
        if (!err)
                fl->n++;
        return err;
}

int ptt_capture_filters(const struct hw_env *env, const char *pmu, bool root_ports,
                        struct ptt_filter_entry **out)
{
        char rel[256];
        struct filter_list fl = {.env = env, .rel = rel};
        struct ptt_filter_entry *list;
        size_t n;
        int err;

        *out = NULL;
        snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/%s", pmu,
                 root_ports ? "root_port_filters" : "requester_filters");
        err = hw_list_dir(env, HW_SYSFS, filter_entry, &fl, "%s", rel);
        list = fl.list;
        n = fl.n;
        if (err) {
                free(list);
                return err;
        }
        if (n)
                qsort(list, n, sizeof(*list), cmp_filter);
        *out = list;
        return (int)n;
}

int ptt_capture_list(const struct hw_env *env, char ***names)
{
        return perf_pmu_list(env, "hisi_ptt", names);
}

/* ---- budget ---- */

struct ptt_budget {
        pthread_mutex_t lock;
        unsigned int max, used;
};

int ptt_budget_new(unsigned int max, struct ptt_budget **out)
{
        struct ptt_budget *b;

        *out = NULL;
        if (!max)
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        pthread_mutex_init(&b->lock, NULL);
        b->max = max;
        *out = b;
        return 0;
}

void ptt_budget_free(struct ptt_budget *b)
{
        if (!b)
                return;
        pthread_mutex_destroy(&b->lock);
        free(b);
}

bool ptt_budget_acquire(struct ptt_budget *b)
{
        bool ok;

        pthread_mutex_lock(&b->lock);
        ok = b->used < b->max;
        if (ok)
                b->used++;
        pthread_mutex_unlock(&b->lock);
        return ok;
}

void ptt_budget_release(struct ptt_budget *b)
{
        pthread_mutex_lock(&b->lock);
        if (b->used)
                b->used--;
        pthread_mutex_unlock(&b->lock);
}

unsigned int ptt_budget_in_use(struct ptt_budget *b)
{
        unsigned int n;

        pthread_mutex_lock(&b->lock);
        n = b->used;
        pthread_mutex_unlock(&b->lock);
        return n;
}

const char *ptt_window_result_name(enum ptt_window_result r)
{
        static const char *const names[PTT_WINDOW_RESULTS] = {"ok", "busy", "no_budget", "stopped",
                                                              "error"};

        return (unsigned int)r < PTT_WINDOW_RESULTS ? names[r] : "unknown";
}

/* ---- the capture ---- */

struct ptt_capture {
        const struct hw_env *env;
        struct perf_pmu *pmu;
        struct ptt_capture_opts o;
        struct ptt_budget *budget;
        uint64_t config;
        int cpu;
        unsigned int domain; /* of the Root Ports: requester labels */
        struct ptt_summary *sum;
        struct ptt_capture_stats st;
        ptt_capture_sink_fn sink; /* raw entries, or NULL */
        void *sink_ctx;

        /* The window. */
        bool running, have_budget, window_stopped;
        /* The driver stopped a trace before its window ended (a TRUNCATED
         * record with room left): logged once, and once when windows are
         * whole again. */
        uint64_t truncated_at_start;
        bool driver_stop_logged;
        double next_start, window_end, last_poll;
        int fd;
        struct perf_event_mmap_page *pg;
        size_t ring_len;
        uint8_t *aux;
        uint8_t carry[PTT_ENTRY_8DW_BYTES];
        size_t carry_n;
        bool busy_logged, error_logged;
        bool gone_logged; /* the device's directory is gone (driver unbound) */
        int offline_cpu;  /* the CPU last found offline at an open (logged once), or -1 */
};

static size_t page_size(void)
{
        long p = sysconf(_SC_PAGESIZE);

        return p > 0 ? (size_t)p : 4096;
}

/* The BDF's numbers, or -EINVAL. */
static int bdf_numbers(const char *text, unsigned int *dom, unsigned int *bus, unsigned int *dev,
                       unsigned int *fn)
{
        char canon[PTT_BDF_LEN];

        if (bdf_canonical(text, canon, sizeof(canon)) ||
            sscanf(canon, "%x:%x:%x.%u", dom, bus, dev, fn) != 4)
                return -EINVAL;
        return 0;
}

/*
 * Kernels before 6.5 publish no filter lists: compute the value from the
 * BDFs as the driver reads it (kernel-facts §2.2), unvalidated; the open
 * still fails with -EINVAL for a port or requester the device does not know.
 */
static int filter_without_lists(struct ptt_capture *c, char *err, size_t errlen, uint32_t *value)
{
        unsigned int dom, bus, dev, fn;

        *value = 0;
        if (c->o.requester_count) {
                if (bdf_numbers(c->o.requesters[0], &dom, &bus, &dev, &fn))
                        return refuse(err, errlen, "TraceRequester %s is not a BDF",
                                      c->o.requesters[0]);
                c->domain = dom;
                *value = bus << 8 | dev << 3 | fn;
        } else if (!c->o.root_port_count) {
                return refuse(err, errlen,
                              "no root_port_filters/ (Linux before 6.5): name the Root Ports "
                              "with TraceRootPort");
        }
        for (size_t i = 0; i < c->o.root_port_count; i++) {
                if (bdf_numbers(c->o.root_ports[i], &dom, &bus, &dev, &fn))
                        return refuse(err, errlen, "TraceRootPort %s is not a BDF",
                                      c->o.root_ports[i]);
                c->domain = dom;
                *value |= 1u << 19 | 1u << ((dev & 7) * 2);
        }
        hw_logf(c->env, HW_LOG_NOTICE,
                "%s: no root_port_filters/ (Linux before 6.5): filters are not validated",
                perf_pmu_name(c->pmu));
        return 0;
}

/* The filter value of the options, checked against the device's lists. */
static int resolve_filter(struct ptt_capture *c, char *err, size_t errlen, uint32_t *value)
{
        struct ptt_filter_entry *ports = NULL, *reqs = NULL;
        int np, nr, ret = 0;
        char want[PTT_BDF_LEN], msg[160];
        const char *name = perf_pmu_name(c->pmu);

        np = ptt_capture_filters(c->env, name, true, &ports);
        if (np == -ENOENT)
                return filter_without_lists(c, err, errlen, value);
        if (np < 0) {
                snprintf(msg, sizeof(msg), "%s: cannot read root_port_filters/: %s", name,
                         strerror(-np));
                return refuse(err, errlen, "%s", msg);
        }
        if (np)
                sscanf(ports[0].bdf, "%x:", &c->domain);
        *value = 0;
        if (c->o.requester_count) {
                nr = ptt_capture_filters(c->env, name, false, &reqs);
                ret = nr < 0 ? nr : -EINVAL;
                if (!bdf_canonical(c->o.requesters[0], want, sizeof(want)))
                        for (int i = 0; i < nr; i++)
                                if (!strcmp(reqs[i].bdf, want)) {
                                        *value = reqs[i].value;
                                        ret = 0;
                                }
                if (ret) {
                        snprintf(msg, sizeof(msg), "%s: requester %s is not in requester_filters/",
                                 name, c->o.requesters[0]);
                        refuse(err, errlen, "%s", msg);
                }
        } else {
                for (size_t i = 0; i < c->o.root_port_count && !ret; i++) {
                        bool found = false;

                        if (!bdf_canonical(c->o.root_ports[i], want, sizeof(want)))
                                for (int j = 0; j < np; j++)
                                        if (!strcmp(ports[j].bdf, want)) {
                                                *value |= ports[j].value;
                                                found = true;
                                        }
                        if (!found) {
                                snprintf(msg, sizeof(msg),
                                         "%s: Root Port %s is not in root_port_filters/", name,
                                         c->o.root_ports[i]);
                                ret = refuse(err, errlen, "%s", msg);
                        }
                }
                for (int j = 0; j < np && !c->o.root_port_count; j++)
                        *value |= ports[j].value;
                if (!ret && !np)
                        ret = refuse(err, errlen, "the device lists no Root Port");
        }
        free(ports);
        free(reqs);
        return ret;
}

static int build_config(struct ptt_capture *c, uint32_t filter)
{
        struct perf_event_attr attr;
        int ret;

        memset(&attr, 0, sizeof(attr));
        ret = perf_pmu_set(c->pmu, &attr, "filter", filter);
        if (!ret)
                ret = perf_pmu_set(c->pmu, &attr, "direction", (uint64_t)c->o.direction);
        if (!ret)
                ret = perf_pmu_set(c->pmu, &attr, "type", c->o.type_mask);
        if (!ret)
                ret = perf_pmu_set(c->pmu, &attr, "format", (uint64_t)c->o.format);
        c->config = attr.config;
        return ret;
}

static int make_summary(struct ptt_capture *c)
{
        struct ptt_summary_config cfg;

        ptt_summary_config_default(&cfg);
        cfg.direction = c->o.direction;
        cfg.time_mode = c->o.time_mode;
        cfg.clock_hz = c->o.clock_hz;
        c->sum = ptt_summary_new(&cfg);
        return c->sum ? 0 : -errno;
}

int ptt_capture_new(const struct hw_env *env, const char *pmu_name,
                    const struct ptt_capture_opts *opts, struct ptt_budget *budget,
                    unsigned int index, unsigned int count, double now, struct ptt_capture **out,
                    char *err, size_t errlen)
{
        struct ptt_capture *c;
        uint32_t filter = 0;
        int ret;

        *out = NULL;
        if (err && errlen)
                err[0] = '\0';
        ret = ptt_capture_opts_check(opts, err, errlen);
        if (ret)
                return ret;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->env = env;
        c->o = *opts;
        c->budget = budget;
        c->fd = -1;
        ret = perf_pmu_load(env, pmu_name, &c->pmu);
        if (ret) {
                if (err && errlen)
                        snprintf(err, errlen, "%s: %s", pmu_name, strerror(-ret));
                goto fail;
        }
        c->cpu = perf_pmu_cpu_count(c->pmu) ? perf_pmu_cpu(c->pmu, 0) : 0;
        c->offline_cpu = -1;
        ret = resolve_filter(c, err, errlen, &filter);
        if (!ret) {
                ret = build_config(c, filter);
                if (ret && err && errlen)
                        snprintf(err, errlen, "%s: format files lack filter/direction/type/format",
                                 pmu_name);
        }
        if (!ret)
                ret = make_summary(c);
        if (ret)
                goto fail;
        if (c->o.type_mask & (c->o.type_mask - 1) && c->o.direction != 0)
                hw_logf(env, HW_LOG_NOTICE,
                        "%s: several TLP types with an outbound direction: the driver accepts it, "
                        "the documentation allows only one type for outbound traces",
                        pmu_name);
        c->next_start = now + (count ? c->o.period_s * (index % count) / count : 0);
        *out = c;
        return 0;
fail:
        ptt_capture_free(c);
        return ret == -ENOENT || ret == -ENOMEM ? ret : -EINVAL;
}

/* ---- AUX and data ring consumption ---- */

static void feed(struct ptt_capture *c, const uint8_t *buf, size_t len)
{
        size_t esize = ptt_format_entry_size(c->o.format), whole;

        /* Entries never straddle the 4 MiB buffers, but keep the reader
         * correct for any split. */
        if (c->carry_n) {
                size_t need = esize - c->carry_n, take = len < need ? len : need;

                memcpy(c->carry + c->carry_n, buf, take);
                c->carry_n += take;
                buf += take;
                len -= take;
                if (c->carry_n < esize)
                        return;
                if (c->sink)
                        c->sink(c->sink_ctx, c->carry, esize, c->o.format);
                ptt_summary_feed_format(c->sum, c->carry, esize, c->o.format);
                c->carry_n = 0;
        }
        whole = len - len % esize;
        if (whole && c->sink)
                c->sink(c->sink_ctx, buf, whole, c->o.format);
        if (whole)
                ptt_summary_feed_format(c->sum, buf, whole, c->o.format);
        memcpy(c->carry, buf + whole, len - whole);
        c->carry_n = len - whole;
}

/* Consumes aux_tail..aux_head. Returns the bytes that were in use before
 * (what the driver saw at its last commit). */
static uint64_t consume_aux(struct ptt_capture *c)
{
        uint64_t size = c->o.aux_bytes;
        uint64_t head = __atomic_load_n(&c->pg->aux_head, __ATOMIC_ACQUIRE);
        uint64_t tail = c->pg->aux_tail, used = head - tail, pos, first;

        if (used > size) { /* cannot happen in non-overwrite mode; be safe */
                c->st.lost_bytes += used - size;
                ptt_summary_note_lost(c->sum, used - size);
                tail = head - size;
                used = size;
        }
        pos = tail % size;
        first = size - pos < used ? size - pos : used;
        feed(c, c->aux + pos, first);
        feed(c, c->aux, used - first);
        c->st.trace_bytes += used;
        __atomic_store_n(&c->pg->aux_tail, head, __ATOMIC_RELEASE);
        return used;
}

static void ring_copy(const struct perf_event_mmap_page *pg, uint64_t at, void *dst, size_t n)
{
        const uint8_t *data = (const uint8_t *)pg + pg->data_offset;
        uint8_t *d = dst;

        for (size_t i = 0; i < n; i++)
                d[i] = data[(at + i) % pg->data_size];
}

static void on_aux_record(struct ptt_capture *c, uint64_t flags)
{
        c->st.aux_records++;
        if (flags & PERF_AUX_FLAG_TRUNCATED) {
                c->st.truncated++;
                ptt_summary_note_truncated(c->sum);
        }
        if (flags & PERF_AUX_FLAG_PARTIAL) {
                c->st.partial++;
                ptt_summary_note_partial(c->sum);
        }
}

/* Reads the records in the data ring (bounded by its size). */
static void drain_records(struct ptt_capture *c)
{
        struct perf_event_mmap_page *pg = c->pg;
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = pg->data_tail;

        if (!pg->data_size)
                return;
        while (head - tail >= sizeof(struct perf_event_header)) {
                struct perf_event_header h;
                uint64_t body[3];

                ring_copy(pg, tail, &h, sizeof(h));
                if (h.size < sizeof(h) || h.size > head - tail) {
                        tail = head; /* corrupt: skip what is there */
                        break;
                }
                if (h.type == PERF_RECORD_AUX && h.size >= sizeof(h) + sizeof(body)) {
                        ring_copy(pg, tail + sizeof(h), body, sizeof(body));
                        on_aux_record(c, body[2]);
                }
                tail += h.size;
        }
        __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---- windows ---- */

static void log_open_error(struct ptt_capture *c, int err)
{
        const char *name = perf_pmu_name(c->pmu);

        if (err == -EBUSY) {
                if (!c->busy_logged)
                        hw_logf(c->env, HW_LOG_WARNING,
                                "%s: device busy (another perf user owns the trace); windows are "
                                "skipped and counted until it is free",
                                name);
                c->busy_logged = true;
                return;
        }
        if (!c->error_logged)
                hw_logf(c->env, HW_LOG_ERROR, "%s: trace window failed: %s", name, strerror(-err));
        c->error_logged = true;
}

static void unmap_close(struct ptt_capture *c)
{
        const struct perf_ops *ops = c->env->perf;

        if (c->aux)
                ops->munmap(ops->ctx, c->aux, c->o.aux_bytes);
        if (c->pg)
                ops->munmap(ops->ctx, c->pg, c->ring_len);
        if (c->fd >= 0)
                ops->close(ops->ctx, c->fd);
        c->aux = NULL;
        c->pg = NULL;
        c->fd = -1;
        if (c->have_budget)
                ptt_budget_release(c->budget);
        c->have_budget = false;
}

static int open_and_map(struct ptt_capture *c)
{
        const struct perf_ops *ops = c->env->perf;
        struct perf_event_attr attr;
        size_t page = page_size();
        void *addr = NULL;
        int ret;

        memset(&attr, 0, sizeof(attr));
        attr.size = sizeof(attr);
        attr.type = perf_pmu_type(c->pmu);
        attr.config = c->config;
        attr.disabled = 1;
        /* perf's own clock of the window: from ENABLE to DISABLE. */
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        ret = ops->open(ops->ctx, &attr, -1, c->cpu, -1, 0);
        if (ret < 0)
                return ret;
        c->fd = ret;
        c->ring_len = (1 + (size_t)c->o.ring_pages) * page;
        ret = ops->mmap(ops->ctx, c->fd, c->ring_len, PROT_READ | PROT_WRITE, 0, &addr);
        if (ret)
                return ret;
        c->pg = addr;
        c->pg->aux_offset = (c->pg->data_offset + c->pg->data_size + page - 1) / page * page;
        c->pg->aux_size = c->o.aux_bytes;
        ret = ops->mmap(ops->ctx, c->fd, c->o.aux_bytes, PROT_READ | PROT_WRITE,
                        (off_t)c->pg->aux_offset, &addr);
        if (ret)
                return ret;
        c->aux = addr;
        return 0;
}

static void finish_window(struct ptt_capture *c, enum ptt_window_result r, double now)
{
        c->st.windows[r]++;
        c->running = false;
        c->st.running = false;
        c->next_start += c->o.period_s;
        while (c->next_start <= now) /* late ticks skip windows, uncounted */
                c->next_start += c->o.period_s;
}

/*
 * Before each window: the device as the kernel shows it now. Its driver
 * unbound, the directory is gone: logged once, no window until it is back
 * (-ENOENT). Bound again, it has a new perf type: logged once. Its CPU
 * gone offline, hisi_ptt_cpu_teardown() moved the cpumask to another CPU
 * of its node, and perf_event_open() on the old one fails (-ENODEV): the
 * next windows open on the new one, logged once per move.
 */
static int follow_device(struct ptt_capture *c)
{
        const char *name = perf_pmu_name(c->pmu);
        uint32_t type = perf_pmu_type(c->pmu);
        int ret = perf_pmu_reload_type(c->env, c->pmu);

        if (ret == -ENOENT) {
                if (!c->gone_logged)
                        hw_logf(c->env, HW_LOG_WARNING,
                                "%s: PTT device gone (its driver was unbound); no trace windows "
                                "until it is back",
                                name);
                c->gone_logged = true;
                return ret;
        }
        if (ret)
                return ret;
        if (c->gone_logged || perf_pmu_type(c->pmu) != type) {
                hw_logf(c->env, HW_LOG_INFO,
                        "%s: PTT device back (perf type %u); trace windows "
                        "again",
                        name, perf_pmu_type(c->pmu));
                c->gone_logged = false;
                c->error_logged = false;
        }
        ret = perf_pmu_reload_cpus(c->env, c->pmu);
        if (ret)
                return ret;
        if (perf_pmu_cpu_count(c->pmu) && perf_pmu_cpu(c->pmu, 0) != c->cpu) {
                hw_logf(c->env, HW_LOG_INFO,
                        "%s: cpumask moved from CPU %d to CPU %d (a CPU went offline); trace "
                        "windows open there",
                        name, c->cpu, perf_pmu_cpu(c->pmu, 0));
                c->cpu = perf_pmu_cpu(c->pmu, 0);
        }
        return 0;
}

static int start_window(struct ptt_capture *c, double now)
{
        const struct perf_ops *ops = c->env->perf;
        int ret;

        if (c->budget && !ptt_budget_acquire(c->budget)) {
                finish_window(c, PTT_WINDOW_NO_BUDGET, now);
                return 0;
        }
        c->have_budget = c->budget != NULL;
        ret = follow_device(c);
        if (ret) {
                unmap_close(c);
                c->st.last_error = -ret;
                finish_window(c, PTT_WINDOW_ERROR, now);
                return ret == -ENOENT ? 0 : ret;
        }
        ptt_summary_window_start(c->sum);
        c->carry_n = 0;
        c->window_stopped = false;
        c->truncated_at_start = c->st.truncated;
        ret = open_and_map(c);
        /* The CPU went offline (-ENODEV) or the driver was unbound
         * (-ENOENT) between reading the device and the open: read it again;
         * moved, the open is tried once more; gone, that is logged once and
         * the window is skipped, not an error. */
        if ((ret == -ENODEV || ret == -ENOENT) && c->fd < 0) {
                int again = follow_device(c);

                if (!again)
                        ret = open_and_map(c);
                else if (again == -ENOENT)
                        ret = again;
        }
        if (!ret)
                ret = ops->ioctl(ops->ctx, c->fd, PERF_EVENT_IOC_ENABLE, 0);
        if (ret) {
                unmap_close(c);
                ptt_summary_window_end(c->sum);
                c->st.last_error = -ret;
                /* -ENODEV twice: the CPU went offline, and the driver's
                 * cpumask did not show the move yet (its teardown runs as
                 * the CPU goes down). Not a fault: this window is skipped,
                 * the next opens where the cpumask then points. */
                if (ret == -ENODEV && c->fd < 0) {
                        if (c->offline_cpu != c->cpu)
                                hw_logf(c->env, HW_LOG_INFO,
                                        "%s: CPU %d went offline as a trace window opened; "
                                        "the window is skipped, the next opens where the "
                                        "cpumask moves",
                                        perf_pmu_name(c->pmu), c->cpu);
                        c->offline_cpu = c->cpu;
                } else if (!(ret == -ENOENT && c->gone_logged))
                        log_open_error(c, ret);
                finish_window(c, ret == -EBUSY ? PTT_WINDOW_BUSY : PTT_WINDOW_ERROR, now);
                return ret == -EBUSY ? 0 : ret;
        }
        c->running = true;
        c->st.running = true;
        c->window_end = now + c->o.duration_s;
        c->last_poll = now;
        return 0;
}

/* The driver stops for good when a commit leaves less than one buffer free:
 * seeing that fill level means no more data will come. */
static bool driver_stopped(const struct ptt_capture *c, uint64_t used)
{
        return used + PTT_BUFFER_BYTES > c->o.aux_bytes;
}

static int poll_window(struct ptt_capture *c, double now)
{
        const struct perf_ops *ops = c->env->perf;
        uint64_t count[4];
        uint64_t used;
        int ret = 0;

        c->last_poll = now;
        /* The count itself means nothing for a trace; the read is cheap
         * and lets a simulated device produce up to now. */
        ops->read(ops->ctx, c->fd, count, sizeof(count));
        drain_records(c);
        used = consume_aux(c);
        if (!driver_stopped(c, used))
                return 0;
        c->window_stopped = true;
        c->st.restarts++;
        ret = ops->ioctl(ops->ctx, c->fd, PERF_EVENT_IOC_DISABLE, 0);
        drain_records(c);
        consume_aux(c);
        if (!ret)
                ret = ops->ioctl(ops->ctx, c->fd, PERF_EVENT_IOC_ENABLE, 0);
        return ret;
}

static void quantiles(struct ptt_capture *c)
{
        const struct ptt_stats *w = ptt_summary_window(c->sum);
        const struct ptt_hist *h[2] = {&w->lat_first, &w->lat_last};
        static const double q[3] = {0.5, 0.9, 0.99};

        if (!w->lat_first.count)
                return;
        c->st.have_quantiles = true;
        for (int i = 0; i < 2; i++)
                for (int j = 0; j < 3; j++)
                        c->st.quantile[i][j] =
                            (double)ptt_hist_quantile(h[i], q[j]) / (double)c->o.clock_hz;
}

/* The window's length as perf measured it (value, time enabled, time
 * running), or 0 when the read does not say. */
static void window_length(struct ptt_capture *c)
{
        const struct perf_ops *ops = c->env->perf;
        uint64_t v[3] = {0, 0, 0};

        c->st.window_seconds = 0;
        if (ops->read(ops->ctx, c->fd, v, sizeof(v)) == (ssize_t)sizeof(v))
                c->st.window_seconds = (double)v[1] / 1e9;
}

static int end_window(struct ptt_capture *c, double now)
{
        const struct perf_ops *ops = c->env->perf;
        int ret = poll_window(c, now), ret2;
        /* TRUNCATED before our DISABLE: the driver stopped the trace on its
         * own, handing over what it had. (A device whose buffers ran out
         * says so only at DISABLE, with no data: not this.) */
        bool driver_stop = c->st.truncated > c->truncated_at_start;

        ret2 = ops->ioctl(ops->ctx, c->fd, PERF_EVENT_IOC_DISABLE, 0);
        window_length(c);
        drain_records(c);
        consume_aux(c);
        unmap_close(c);
        ptt_summary_window_end(c->sum);
        quantiles(c);
        if (!ret)
                ret = ret2;
        if (ret) {
                c->st.last_error = -ret;
                log_open_error(c, ret);
        }
        /* The window still ends on time, with what came before. */
        if (!ret && !c->window_stopped && driver_stop) {
                c->window_stopped = true;
                if (!c->driver_stop_logged)
                        hw_logf(c->env, HW_LOG_WARNING,
                                "%s: the driver stopped the trace before the window ended; this "
                                "window has the data up to then",
                                perf_pmu_name(c->pmu));
                c->driver_stop_logged = true;
        } else if (!ret && !c->window_stopped && c->driver_stop_logged) {
                hw_logf(c->env, HW_LOG_INFO, "%s: trace windows whole again",
                        perf_pmu_name(c->pmu));
                c->driver_stop_logged = false;
        }
        finish_window(c,
                      ret                 ? PTT_WINDOW_ERROR
                      : c->window_stopped ? PTT_WINDOW_STOPPED
                                          : PTT_WINDOW_OK,
                      now);
        return ret;
}

int ptt_capture_tick(struct ptt_capture *c, double now)
{
        int ret;

        if (!c->running) {
                if (now < c->next_start)
                        return 0;
                ret = start_window(c, now);
                if (ret || !c->running)
                        return ret;
        }
        if (now >= c->window_end)
                return end_window(c, now);
        ret = poll_window(c, now);
        if (ret) { /* the restart failed: close the window now */
                end_window(c, now);
                return ret;
        }
        return 0;
}

void ptt_capture_set_sink(struct ptt_capture *c, ptt_capture_sink_fn fn, void *ctx)
{
        c->sink = fn;
        c->sink_ctx = ctx;
}

double ptt_capture_next_tick(const struct ptt_capture *c)
{
        double poll;

        if (!c->running)
                return c->next_start;
        poll = c->last_poll + c->o.poll_s;
        return poll < c->window_end ? poll : c->window_end;
}

void ptt_capture_free(struct ptt_capture *c)
{
        if (!c)
                return;
        if (c->running) {
                const struct perf_ops *ops = c->env->perf;

                ops->ioctl(ops->ctx, c->fd, PERF_EVENT_IOC_DISABLE, 0);
        }
        unmap_close(c);
        ptt_summary_free(c->sum);
        perf_pmu_free(c->pmu);
        free(c);
}

uint64_t ptt_capture_config(const struct ptt_capture *c)
{
        return c->config;
}

const char *ptt_capture_name(const struct ptt_capture *c)
{
        return perf_pmu_name(c->pmu);
}

const struct ptt_capture_stats *ptt_capture_stats(const struct ptt_capture *c)
{
        return &c->st;
}

const struct ptt_summary *ptt_capture_summary(const struct ptt_capture *c)
{
        return c->sum;
}

/* ---- samples ---- */

struct emitter {
        const struct ptt_capture *c;
        struct sample_emitter out;
};

static struct pcie_sample base(const struct ptt_capture *c, const struct pcie_family *family)
{
        struct pcie_sample s;

        sample_init(&s, family);
        sample_label(&s, "pmu", perf_pmu_name(c->pmu));
        return s;
}

static void emit_counter(struct emitter *em, const struct pcie_family *family, uint64_t v)
{
        struct pcie_sample s = base(em->c, family);

        s.counter = v;
        sample_emit(&em->out, &s);
}

static void emit_mix(struct emitter *em, const struct ptt_stats *t)
{

        for (int d = 0; d < PTT_DIR_COUNT; d++) {
                for (int k = 1; k < TLP_KIND_COUNT; k++) {
                        const struct ptt_count *n = &t->by_kind[d][k];
                        const char *dir = ptt_dir_name((enum ptt_dir)d);
                        const char *kind = tlp_kind_name((enum tlp_kind)k);
                        struct pcie_sample s;

                        if (!n->tlps)
                                continue;
                        s = base(em->c, PCIE_FAM_PTT_TLPS_TOTAL);
                        sample_label(&s, "direction", dir);
                        sample_label(&s, "kind", kind);
                        s.counter = n->tlps;
                        sample_emit(&em->out, &s);
                        sample_set_family(&s, PCIE_FAM_PTT_PAYLOAD_BYTES_TOTAL);
                        s.counter = n->payload_bytes;
                        sample_emit(&em->out, &s);
                }
        }
}

static void emit_requesters(struct emitter *em, const struct ptt_stats *t)
{
        const struct ptt_capture *c = em->c;
        size_t cap = (size_t)c->o.top_n + 1, n;
        struct ptt_requester_row *rows = calloc(cap, sizeof(*rows));
        char bdf[PTT_BDF_LEN];

        if (!rows) {
                em->out.err = -ENOMEM;
                return;
        }
        n = ptt_stats_requesters(t, c->o.top_n, rows, cap);
        for (size_t i = 0; i < n && i < cap; i++) {
                const struct ptt_requester_row *r = &rows[i];

                if (r->other)
                        snprintf(bdf, sizeof(bdf), "other");
                else
                        snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%u", c->domain & 0xffff,
                                 r->requester_id >> 8, (r->requester_id >> 3) & 0x1f,
                                 r->requester_id & 7u);
                for (int d = 0; d < PTT_DIR_COUNT; d++) {
                        uint64_t sum = 0;
                        struct pcie_sample s;

                        for (int k = 0; k < TLP_KIND_COUNT; k++)
                                sum += r->by_kind[d][k].tlps;
                        if (!sum)
                                continue;
                        s = base(c, PCIE_FAM_PTT_REQUESTER_TLPS_TOTAL);
                        sample_label(&s, "requester", bdf);
                        sample_label(&s, "direction", ptt_dir_name((enum ptt_dir)d));
                        s.counter = sum;
                        sample_emit(&em->out, &s);
                }
        }
        free(rows);
}

/* Bucket bounds exported: the end of each power-of-two group from 8 to
 * 2^26 ticks (80 ns .. 0.67 s at 100 MHz), then +Inf: a fixed set of
 * series, coarser than the summariser's 25% buckets. */
#define LE_FIRST_GROUP 1
#define LE_LAST_GROUP  24

static void emit_hist(struct emitter *em, const struct ptt_hist *h, const char *which)
{
        const struct ptt_capture *c = em->c;
        double hz = (double)c->o.clock_hz;
        char le[32];
        struct pcie_sample s;

        for (unsigned int g = LE_FIRST_GROUP; g <= LE_LAST_GROUP + 1; g++) {
                bool inf = g > LE_LAST_GROUP;
                unsigned int i = inf ? PTT_HIST_BUCKETS - 1 : PTT_HIST_SUB * (g + 1) - 1;

                if (inf)
                        snprintf(le, sizeof(le), "+Inf");
                else
                        snprintf(le, sizeof(le), "%.9g", (double)ptt_hist_bucket_le(i) / hz);
                s = base(c, PCIE_FAM_PTT_COMPLETION_LATENCY_SECONDS);
                s.metric = PCIE_FAM_PTT_COMPLETION_LATENCY_SECONDS->bucket;
                sample_label(&s, "completion", which);
                sample_label(&s, "le", le);
                s.gauge = (double)ptt_hist_cumulative(h, i);
                sample_emit(&em->out, &s);
        }
        s = base(c, PCIE_FAM_PTT_COMPLETION_LATENCY_SECONDS);
        s.metric = PCIE_FAM_PTT_COMPLETION_LATENCY_SECONDS->sum;
        sample_label(&s, "completion", which);
        s.gauge = (double)h->sum / hz;
        sample_emit(&em->out, &s);
        s.metric = PCIE_FAM_PTT_COMPLETION_LATENCY_SECONDS->count;
        s.gauge = (double)h->count;
        sample_emit(&em->out, &s);
}

static void emit_latency(struct emitter *em, const struct ptt_stats *t)
{
        static const char *const which[2] = {"first", "last"};
        /* The label says percentile, not quantile: Prometheus keeps the
         * "quantile" label for summaries (promtool check metrics). */
        static const char *const pct[3] = {"50", "90", "99"};
        const struct ptt_capture *c = em->c;

        /* Below the full detail only the time to the completion that ends
         * a request (the same as the first one unless completions split):
         * one histogram per device. */
        int from = c->o.detail >= PCIE_DETAIL_FULL ? 0 : 1;

        if (!t->match.enabled)
                return;
        if (from == 0)
                emit_hist(em, &t->lat_first, which[0]);
        emit_hist(em, &t->lat_last, which[1]);
        for (int i = from; i < 2 && c->st.have_quantiles && c->o.detail >= PCIE_DETAIL_DEFAULT;
             i++) {
                for (int j = 0; j < 3; j++) {
                        struct pcie_sample s;

                        s = base(c, PCIE_FAM_PTT_COMPLETION_LATENCY_QUANTILE_SECONDS);
                        sample_label(&s, "completion", which[i]);
                        sample_label(&s, "percentile", pct[j]);
                        s.gauge = c->st.quantile[i][j];
                        sample_emit(&em->out, &s);
                }
        }
        {
                struct pcie_sample s = base(c, PCIE_FAM_PTT_UNMATCHED_TOTAL);

                sample_label(&s, "side", "request");
                s.counter = t->match.unmatched_requests + t->match.incomplete_requests;
                sample_emit(&em->out, &s);
                s = base(c, PCIE_FAM_PTT_UNMATCHED_TOTAL);
                sample_label(&s, "side", "completion");
                s.counter = t->match.unmatched_completions;
                sample_emit(&em->out, &s);
        }
        emit_counter(em, PCIE_FAM_PTT_TAG_REUSE_TOTAL, t->match.tag_reuse);
}

static void emit_coverage(struct emitter *em, const struct ptt_stats *t)
{
        const struct ptt_capture *c = em->c;

        for (int r = 0; r < PTT_WINDOW_RESULTS; r++) {
                const char *name = ptt_window_result_name((enum ptt_window_result)r);
                struct pcie_sample s;

                s = base(c, PCIE_FAM_PTT_WINDOWS_TOTAL);
                sample_label(&s, "result", name);
                s.counter = c->st.windows[r];
                sample_emit(&em->out, &s);
        }
        emit_counter(em, PCIE_FAM_PTT_RESTARTS_TOTAL, c->st.restarts);
        emit_counter(em, PCIE_FAM_PTT_TRACE_BYTES_TOTAL, c->st.trace_bytes);
        emit_counter(em, PCIE_FAM_PTT_ENTRIES_TOTAL, t->cov.entries);
        emit_counter(em, PCIE_FAM_PTT_MALFORMED_TOTAL, t->cov.malformed + t->cov.unknown_tlp);
        emit_counter(em, PCIE_FAM_PTT_TRUNCATED_TOTAL, c->st.truncated);
}

int ptt_capture_samples(struct ptt_capture *c, struct sample_set *out)
{
        struct emitter em = {.c = c, .out = {.set = out}};
        const struct ptt_stats *t = ptt_summary_total(c->sum);

        emit_mix(&em, t);
        if (c->o.detail >= PCIE_DETAIL_DEFAULT)
                emit_requesters(&em, t);
        emit_latency(&em, t);
        emit_coverage(&em, t);
        return em.out.err;
}
