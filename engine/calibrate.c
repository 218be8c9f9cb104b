/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibrate.c - `pciescope calibrate`. See calibrate.h; the arithmetic is
 * collectors/calibration.c, the load the seam's load ops.
 */
#define _GNU_SOURCE
#include "calibrate.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd_df.h"
#include "engine.h"
#include "hisi_pcie.h"
#include "hw_env.h"
#include "nvidia_pcie.h"
#include "perf_pmu.h"
#include "pcie_topo.h"
#include "perf_group.h"
#include "ptt_capture.h"
#include "ptt_summary.h"

/* Copies @src into @dst of @size, cut if longer (messages, BDFs). */
static void set_text(char *dst, size_t size, const char *src)
{
        size_t n = strnlen(src, size - 1);

        memcpy(dst, src, n);
        dst[n] = '\0';
}
#define SET_TEXT(dst, src) set_text((dst), sizeof(dst), (src))

/* Share of the port's reads that must be the device's own for the
 * latency clock (the PMU's latency has no requester filter). */
#define CALIB_OWN_READS 0.98

/* How often a running load and trace are looked at. */
#define POLL_SECONDS 0.01

void calibrate_opts_default(struct calibrate_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->bytes = 1ull << 30;
        o->io_size = 1u << 20;
        o->trace_io_size = 4096;
        o->repeats = 5;
        o->idle_seconds = 1;
        o->trace_seconds = 0.2;
        o->tolerance = CALIB_TOLERANCE;
        o->command_timeout_s = CALIB_RUN_TIMEOUT_S;
}

/* What one calibration run holds while it runs. */
struct run {
        struct engine *e;
        const struct hw_env *env;
        const struct calibrate_opts *o;
        struct calibration *out;
        struct pcie_topo *topo;
        struct hisi_pcie_pmu *pmus;
        size_t pmu_count;
        const struct hisi_pcie_pmu *pmu;
        uint16_t port_bit;
        uint16_t rid;      /* the endpoint's requester ID */
        bool nvidia;       /* a Grace PCIe PMU covers the device: the port map phase */
        struct amd_df *df; /* an AMD Turin data fabric PMU: the root complex map phase */
        /* the load currently running */
        struct hw_load *load;
        char load_why[256];
        int load_error;
};

static void note(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct run *r, const char *fmt, ...)
{
        size_t used = strlen(r->out->notes);
        va_list ap;

        if (used + 2 >= sizeof(r->out->notes))
                return;
        if (used)
                r->out->notes[used++] = ' ';
        va_start(ap, fmt);
        vsnprintf(r->out->notes + used, sizeof(r->out->notes) - used, fmt, ap);
        va_end(ap);
}

static void progress(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(struct run *r, const char *fmt, ...)
{
        char text[200];
        va_list ap;

        if (!r->o->progress)
                return;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        r->o->progress(r->o->progress_ctx, text);
}

static double now(const struct run *r)
{
        return engine_now(r->e);
}

static void wait_until(struct run *r, double deadline)
{
        if (r->o->sleep_until) {
                r->o->sleep_until(r->o->sleep_ctx, deadline);
                return;
        }
        for (double left = deadline - now(r); left > 0; left = deadline - now(r)) {
                struct timespec ts = {.tv_sec = (time_t)left,
                                      .tv_nsec = (long)((left - floor(left)) * 1e9)};

                nanosleep(&ts, NULL);
        }
}

/* ---- the load ---- */

static int load_start(struct run *r, uint32_t io_size, uint64_t bytes)
{
        struct hw_load_request req = {.bytes = bytes,
                                      .io_size = io_size,
                                      .command = r->o->command,
                                      .timeout_s = r->o->command_timeout_s};
        int ret;

        /* A command that ran past its time limit is not run again. */
        if (r->load_error == -ETIMEDOUT)
                return r->load_error;
        SET_TEXT(req.bdf, r->out->device);
        ret = r->env->load->start(r->env->load->ctx, &req, &r->load, r->load_why,
                                  sizeof(r->load_why));
        if (ret)
                r->load_error = ret;
        return ret;
}

/* 0 running (or none), 1 just ended (counted), < 0 failed. */
static int load_poll(struct run *r)
{
        struct hw_load_result res = {0};
        int ret;

        if (!r->load)
                return 0;
        ret =
            r->env->load->poll(r->env->load->ctx, r->load, &res, r->load_why, sizeof(r->load_why));
        if (ret == 0)
                return 0;
        r->env->load->release(r->env->load->ctx, r->load);
        r->load = NULL;
        if (ret < 0) {
                r->load_error = ret;
                return ret;
        }
        r->out->load_bytes += res.bytes;
        r->out->load_seconds += res.seconds;
        SET_TEXT(r->out->load, res.what);
        return 1;
}

/* Runs one load of @bytes to its end. Returns what it moved, or 0. */
static uint64_t load_run(struct run *r, uint32_t io_size, uint64_t bytes)
{
        uint64_t before = r->out->load_bytes;
        int ret = load_start(r, io_size, bytes);

        while (!ret) {
                wait_until(r, now(r) + POLL_SECONDS);
                ret = load_poll(r);
        }
        return ret == 1 ? r->out->load_bytes - before : 0;
}

static void load_stop(struct run *r)
{
        if (r->load) {
                r->env->load->release(r->env->load->ctx, r->load);
                r->load = NULL;
        }
}

/* ---- the machine ---- */

/* The Grace PCIe PMU of @dev's node (or the only one when the node is not
 * known): calibrate then maps its root_port bits. */
static bool find_nvidia(struct run *r, const struct pcie_function *dev)
{
        char **names = NULL;
        unsigned int node, found = 0;
        bool any = false;

        if (perf_pmu_list(r->env, NVIDIA_PCIE_PREFIX, &names) <= 0) {
                perf_pmu_list_free(names);
                return false;
        }
        for (size_t i = 0; names[i]; i++) {
                if (nvidia_pcie_parse_name(names[i], &node))
                        continue;
                if (dev->numa_node >= 0 ? (int)node == dev->numa_node : !any) {
                        found = node;
                        any = true;
                        SET_TEXT(r->out->pmu, names[i]);
                }
        }
        perf_pmu_list_free(names);
        if (!any)
                return false;
        r->nvidia = true;
        r->out->port_map = true;
        r->out->port_map_node = found;
        return true;
}

/* An AMD family 1Ah data fabric PMU: calibrate then finds which root
 * complex carries @port's root bus. */
static bool find_amd(struct run *r, const struct pcie_function *port)
{
        struct amd_df_opts opts;

        amd_df_opts_default(&opts);
        if (amd_df_discover(r->env, NULL, &opts, &r->df) || !r->df)
                return false;
        r->out->df_map = true;
        SET_TEXT(r->out->pmu, "amd_df");
        snprintf(r->out->df_root_bus, sizeof(r->out->df_root_bus), "%04x:%02x",
                 (unsigned int)port->addr.domain & 0xffff, port->addr.bus);
        return true;
}

static int find_parts(struct run *r, char *why, size_t whylen)
{
        struct pcie_topo_opts topts = {.names = false, .read_sysfs = true};
        const struct pcie_function *dev, *port;
        struct pci_addr addr;
        size_t di;
        int ret;

        if (!r->env->load) {
                snprintf(why, whylen,
                         "no load can be made on this machine view (an lspci dump or a copied "
                         "sysfs tree): run calibrate on the machine itself");
                return -EOPNOTSUPP;
        }
        if (pci_addr_parse(r->o->device, &addr)) {
                snprintf(why, whylen, "--device %s: not a PCI address (dddd:bb:dd.f)",
                         r->o->device);
                return -EINVAL;
        }
        pci_addr_format(&addr, r->out->device);
        ret = pcie_topo_scan(r->env, &topts, &r->topo);
        if (ret) {
                snprintf(why, whylen, "cannot read the PCI topology: %s", strerror(-ret));
                return ret;
        }
        di = pcie_topo_find(r->topo, &addr);
        if (di == PCIE_TOPO_NONE) {
                snprintf(why, whylen, "%s: no such PCI function", r->out->device);
                return -ENODEV;
        }
        dev = pcie_topo_get(r->topo, di);
        if (dev->root_port == PCIE_TOPO_NONE || dev->root_port == di) {
                snprintf(why, whylen,
                         "%s is not below a Root Port: calibrate needs an endpoint that moves "
                         "data (an NVMe drive, a NIC)",
                         r->out->device);
                return -ENODEV;
        }
        port = pcie_topo_get(r->topo, dev->root_port);
        SET_TEXT(r->out->root_port, port->bdf);
        r->rid = (uint16_t)(addr.bus << 8 | addr.dev << 3 | addr.func);
        ret = hisi_pcie_discover(r->env, r->topo, &r->pmus, &r->pmu_count);
        if (ret) {
                snprintf(why, whylen, "cannot list the hisi_pcie PMUs: %s", strerror(-ret));
                return ret;
        }
        for (size_t i = 0; i < r->pmu_count && !r->pmu; i++)
                for (size_t p = 0; p < r->pmus[i].port_count; p++)
                        if (r->pmus[i].ports[p].topo_index == dev->root_port) {
                                r->pmu = &r->pmus[i];
                                r->port_bit = r->pmus[i].ports[p].bit;
                        }
        if (!r->pmu && find_nvidia(r, dev))
                return 0;
        if (!r->pmu && find_amd(r, port))
                return 0;
        if (!r->pmu) {
                snprintf(why, whylen,
                         "no hisi_pcie PMU covers %s's Root Port %s: calibrate settles the units "
                         "of the HiSilicon Kunpeng 930 PCIe PMU and PTT, the Root Port map of an "
                         "NVIDIA Grace PCIe PMU and the root complex map of an AMD EPYC 9005 "
                         "data fabric PMU (amd_df), and found none of them",
                         r->out->device, port->bdf);
                return -ENODEV;
        }
        SET_TEXT(r->out->pmu, r->pmu->name);
        snprintf(r->out->ptt, sizeof(r->out->ptt), "hisi_ptt%u_%u", r->pmu->sicl, r->pmu->core);
        return 0;
}

/* Opens @pair of the PMU with @filter as one enabled group. */
static int open_pair(struct run *r, enum hisi_pcie_pair pair, const struct hisi_pcie_filter *filter,
                     struct perf_group **g, char *why, size_t whylen)
{
        const struct hisi_pcie_pair_info *pi = hisi_pcie_pair_info(pair);
        struct perf_event_attr attrs[2];
        int ret;

        if (!r->pmu->offered[pair]) {
                /* Before Linux 6.9 the driver offers only rx_mrd and tx_mrd
                 * flux and three latency pairs. */
                snprintf(why, whylen,
                         "%s: this kernel's hisi_pcie driver offers no %s/%s pair (Linux 6.9 "
                         "or later does), so the load's traffic cannot be counted here",
                         r->pmu->name, pi->primary, pi->secondary);
                return -ENOENT;
        }
        ret = hisi_pcie_pair_attrs(r->pmu, pair, filter, attrs);

        if (!ret)
                ret = perf_group_open(r->env, attrs, 2, r->pmu->cpu, g, NULL);
        if (!ret)
                ret = perf_group_enable(*g);
        if (ret)
                snprintf(why, whylen, "%s: cannot count %s: %s (%s)", r->pmu->name, pi->name,
                         strerror(-ret), perf_open_advice(ret));
        return ret;
}

/* The change of @g since *@base, and *@base moved on. -ERANGE: went back. */
static int take(struct perf_group *g, struct perf_group_reading *base,
                struct perf_group_reading *delta)
{
        struct perf_group_reading cur;
        int ret = perf_group_read(g, &cur);

        if (!ret)
                ret = perf_reading_delta(&cur, base, delta);
        if (!ret || ret == -ERANGE)
                *base = cur;
        return ret;
}

/* ---- phase 1: bytes per flux count, the time clock ---- */

#define LOAD_TOO_SMALL_BYTES  "load too small (under 64 MiB moved)"
#define LOAD_TOO_SMALL_COUNTS "load too small (under 1000 flux counts added)"
#define LOAD_TOO_SMALL_TIME   "load too small (under 1000 time counts)"
_Static_assert(CALIB_MIN_LOAD_BYTES == 64ull << 20 && CALIB_MIN_COUNTS == 1000 &&
                   CALIB_MIN_READS == 100,
               "the messages name these minimums");

static void drop_both(struct calibration *c, const char *why)
{
        calib_value_drop(&c->flux_unit_bytes, why);
        calib_value_drop(&c->time_clock_hz, why);
}

/* Whether every repeat of @v was dropped for a load too small. */
static bool too_small(const struct calib_value *v)
{
        size_t n = 0;

        for (size_t i = 0; i < CALIB_MAX_DROP_REASONS && v->drops[i].why; i++)
                if (!strncmp(v->drops[i].why, "load too small", 14))
                        n += v->drops[i].count;
        return n && n == v->dropped;
}

static void phase_flux(struct run *r)
{
        struct calibration *c = r->out;
        struct hisi_pcie_filter filter = {.bdf = r->rid, .len_mode = 1}; /* payload only */
        struct perf_group *g = NULL;
        struct perf_group_reading base, idle, load;
        char why[300];
        bool shared = false;

        if (open_pair(r, HISI_RX_MWR_FLUX, &filter, &g, why, sizeof(why))) {
                SET_TEXT(c->flux_unit_bytes.why, why);
                SET_TEXT(c->time_clock_hz.why, why);
                return;
        }
        perf_group_read(g, &base);
        for (unsigned int i = 0; i < r->o->repeats; i++) {
                uint64_t bytes;

                progress(r, "flux %u/%u: idle %.1f s, then %llu bytes", i + 1, r->o->repeats,
                         r->o->idle_seconds, (unsigned long long)r->o->bytes);
                take(g, &base, &idle); /* restart the base at the window's start */
                wait_until(r, now(r) + r->o->idle_seconds);
                if (take(g, &base, &idle)) {
                        drop_both(c, "the counters could not be read");
                        continue;
                }
                bytes = load_run(r, r->o->io_size, r->o->bytes);
                if (!bytes) {
                        drop_both(c, "the load failed");
                        if (r->load_error == -ETIMEDOUT)
                                break;
                        continue;
                }
                if (take(g, &base, &load)) {
                        drop_both(c, "the counters could not be read");
                        continue;
                }
                /* Another perf user multiplexed the counters: counts are
                 * missing for part of the load. */
                if (idle.time_running < idle.time_enabled ||
                    load.time_running < load.time_enabled) {
                        shared = true;
                        drop_both(c, "the PMU was shared with another perf user");
                        continue;
                }
                double idle_s = (double)idle.time_running / 1e9;
                double load_s = (double)load.time_running / 1e9;
                double added = calib_flux_added((double)load.values[0], load_s,
                                                (double)idle.values[0], idle_s);
                double ticks = (double)idle.values[1] + (double)load.values[1];

                /* The *_time clock over the whole repeat, idle and load. */
                if (ticks < CALIB_MIN_COUNTS)
                        calib_value_drop(&c->time_clock_hz, LOAD_TOO_SMALL_TIME);
                else
                        calib_value_add(&c->time_clock_hz, calib_rate(ticks, idle_s + load_s));
                if (bytes < CALIB_MIN_LOAD_BYTES)
                        calib_value_drop(&c->flux_unit_bytes, LOAD_TOO_SMALL_BYTES);
                else if (added > 0 && added < CALIB_MIN_COUNTS)
                        calib_value_drop(&c->flux_unit_bytes, LOAD_TOO_SMALL_COUNTS);
                else
                        calib_value_add(&c->flux_unit_bytes,
                                        calib_flux_unit(bytes, (double)load.values[0], load_s,
                                                        (double)idle.values[0], idle_s));
        }
        perf_group_close(g);
        if (shared)
                note(r, "The PMU was shared with another perf user (the pcie plugin?) during some "
                        "repeats; they were left out. Stop it while calibrating.");
        if (r->load_error)
                snprintf(c->flux_unit_bytes.why, sizeof(c->flux_unit_bytes.why),
                         "the load failed: %.160s", r->load_why);
        else if (!c->flux_unit_bytes.repeats && too_small(&c->flux_unit_bytes))
                snprintf(c->flux_unit_bytes.why, sizeof(c->flux_unit_bytes.why),
                         "load too small: every repeat moved under %llu MiB or added under %d "
                         "flux counts (give more --bytes)",
                         CALIB_MIN_LOAD_BYTES >> 20, CALIB_MIN_COUNTS);
        else if (!c->flux_unit_bytes.repeats && c->flux_unit_bytes.dropped)
                ; /* the dropped repeats say why */
        else if (!c->flux_unit_bytes.repeats)
                snprintf(c->flux_unit_bytes.why, sizeof(c->flux_unit_bytes.why),
                         "the load added no rx_mwr flux counts for requester %s: the device did "
                         "not DMA-write, or the PMU does not see it",
                         c->device);
}

/* ---- trace windows (phases 2 and 3) ---- */

struct window {
        struct calib_time_obs obs;
        double seconds; /* enable to disable */
        /* phase 3: the port's latency pair, the port's and the device's
         * rx_mrd flux, over the window */
        struct perf_group_reading pmu[3];
        bool have_pmu;
        struct ptt_hist lat_first; /* request -> first completion, ticks */
        bool gap; /* the driver stopped or lost data: the Time fields have a hole */
        uint64_t outbound_tlps[CALIB_MAX_OUTBOUND];
        uint16_t outbound_rid[CALIB_MAX_OUTBOUND];
        size_t outbound_count;
};

static void time_sink(void *ctx, const uint8_t *p, size_t len, enum ptt_format fmt)
{
        struct window *w = ctx;
        size_t size = ptt_format_entry_size(fmt);

        for (size_t off = 0; off + size <= len; off += size) {
                const uint8_t *e = p + off;
                uint32_t t;

                if (fmt == PTT_FORMAT_8DW)
                        t = (uint32_t)e[28] | (uint32_t)e[29] << 8 | (uint32_t)e[30] << 16 |
                            (uint32_t)e[31] << 24;
                else
                        t = ((uint32_t)e[0] | (uint32_t)e[1] << 8) & 0x7ff;
                calib_time_obs_add(&w->obs, t);
        }
}

/* The outbound requests' requester IDs of a window (completions carry
 * the device's ID as requester: left out). */
static void take_outbound(struct window *w, const struct ptt_stats *st)
{
        struct ptt_requester_row rows[CALIB_MAX_OUTBOUND + 1];
        size_t n = ptt_stats_requesters(st, CALIB_MAX_OUTBOUND, rows, CALIB_MAX_OUTBOUND + 1);

        for (size_t i = 0; i < n && i < CALIB_MAX_OUTBOUND + 1; i++) {
                uint64_t req = 0;

                if (rows[i].other)
                        continue;
                for (int k = 0; k < TLP_KIND_COUNT; k++)
                        if (k != TLP_CPL && k != TLP_CPLD && k != TLP_CPLLK && k != TLP_CPLDLK)
                                req += rows[i].by_kind[PTT_DIR_OUTBOUND][k].tlps;
                if (req && w->outbound_count < CALIB_MAX_OUTBOUND) {
                        w->outbound_rid[w->outbound_count] = rows[i].requester_id;
                        w->outbound_tlps[w->outbound_count++] = req;
                }
        }
}

/*
 * One trace window of @topts with a load running all along (restarted
 * when it ends) and, when @g is given, the latency pair read at the
 * window's start and end. Returns 0, or a negative errno with @why.
 */
static int trace_window(struct run *r, const struct ptt_capture_opts *topts, struct perf_group **g,
                        size_t ng, struct window *w, char *why, size_t whylen)
{
        struct ptt_capture *cap = NULL;
        struct perf_group_reading base[3] = {0};
        double start = now(r), on = 0;
        char err[256] = "";
        int ret;

        ret =
            ptt_capture_new(r->env, r->out->ptt, topts, NULL, 0, 1, start, &cap, err, sizeof(err));
        if (ret) {
                snprintf(why, whylen, "%s: %s", r->out->ptt, err[0] ? err : strerror(-ret));
                return ret;
        }
        ptt_capture_set_sink(cap, time_sink, w);
        ret = load_start(r, r->o->trace_io_size, r->o->command ? r->o->bytes : (uint64_t)1 << 40);
        if (ret)
                snprintf(why, whylen, "the load failed: %.200s", r->load_why);
        for (int state = 0; !ret && state < 2;) {
                double t = now(r);

                ret = ptt_capture_tick(cap, t);
                if (ret)
                        break;
                bool running = ptt_capture_stats(cap)->running;

                if (state == 0 && running) {
                        on = t;
                        for (size_t k = 0; k < ng; k++)
                                perf_group_read(g[k], &base[k]);
                        state = 1;
                } else if (state == 1 && !running) {
                        /* perf's time from ENABLE to DISABLE; our ticks
                         * around them if it does not say. */
                        w->seconds = ptt_capture_stats(cap)->window_seconds;
                        if (!(w->seconds > 0))
                                w->seconds = t - on;
                        w->have_pmu = ng > 0;
                        for (size_t k = 0; k < ng; k++)
                                w->have_pmu &= !take(g[k], &base[k], &w->pmu[k]);
                        state = 2;
                        break;
                }
                if (state == 0 && t > start + 2) {
                        snprintf(why, whylen, "%s: the trace window did not start (%s)",
                                 r->out->ptt,
                                 strerror(ptt_capture_stats(cap)->last_error ?: ETIMEDOUT));
                        ret = -ETIMEDOUT;
                        break;
                }
                if (load_poll(r) == 1 && !r->o->command)
                        load_start(r, r->o->trace_io_size, (uint64_t)1 << 40);
                if (r->load_error) {
                        snprintf(why, whylen, "the load failed: %.200s", r->load_why);
                        ret = r->load_error;
                        break;
                }
                double next = ptt_capture_next_tick(cap);

                wait_until(r, next < t + POLL_SECONDS ? next : t + POLL_SECONDS);
        }
        load_stop(r);
        if (!ret) {
                const struct ptt_stats *st = ptt_summary_window(ptt_capture_summary(cap));
                const struct ptt_capture_stats *cs = ptt_capture_stats(cap);

                w->lat_first = st->lat_first;
                w->gap = cs->restarts || cs->truncated || cs->lost_bytes;
                take_outbound(w, st);
        } else if (!why[0]) {
                snprintf(why, whylen, "%s: %s", r->out->ptt, strerror(-ret));
        }
        ptt_capture_free(cap);
        return ret;
}

static void trace_defaults(struct run *r, struct ptt_capture_opts *t)
{
        ptt_capture_opts_default(t);
        t->duration_s = r->o->trace_seconds;
        t->period_s = 3600; /* one window per capture */
        t->top_n = CALIB_MAX_OUTBOUND;
}

/* ---- phase 2: the PTT clock, its time mode, outbound requester IDs ---- */

static void add_outbound(struct calibration *c, const struct window *w)
{
        for (size_t i = 0; i < w->outbound_count; i++) {
                size_t k = 0;

                while (k < c->outbound_count && c->outbound[k].requester_id != w->outbound_rid[i])
                        k++;
                if (k == c->outbound_count) {
                        if (k == CALIB_MAX_OUTBOUND)
                                continue;
                        c->outbound[k].requester_id = w->outbound_rid[i];
                        c->outbound_count++;
                }
                c->outbound[k].tlps += w->outbound_tlps[i];
        }
}

static void phase_clock(struct run *r)
{
        struct calibration *c = r->out;
        struct ptt_capture_opts t;
        struct window *w = calloc(r->o->repeats, sizeof(*w));
        uint64_t rising = 0, pairs = 0;
        enum calib_time_mode mode = CALIB_TIME_UNDECIDED;
        char why[300] = "";
        unsigned int done = 0;

        if (!w) {
                snprintf(c->ptt_clock_hz.why, sizeof(c->ptt_clock_hz.why), "out of memory");
                return;
        }
        trace_defaults(r, &t);
        t.format = PTT_FORMAT_8DW; /* a 32-bit Time field */
        t.direction = 1;           /* outbound P, NP, CPL */
        SET_TEXT(t.root_ports[0], c->root_port);
        t.root_port_count = 1;
        for (unsigned int i = 0; i < r->o->repeats; i++) {
                progress(r, "PTT clock %u/%u: %.2f s of 8DW outbound entries at %s", i + 1,
                         r->o->repeats, r->o->trace_seconds, c->root_port);
                calib_time_obs_init(&w[i].obs, 32);
                why[0] = '\0';
                if (trace_window(r, &t, NULL, 0, &w[i], why, sizeof(why)))
                        break;
                done++;
                rising += w[i].obs.rising;
                pairs += w[i].obs.moved;
                add_outbound(c, &w[i]);
                enum calib_time_mode m = calib_time_mode_of(&w[i].obs);

                mode = i == 0 ? m : (m == mode ? mode : CALIB_TIME_UNDECIDED);
        }
        c->ptt_rising_share = pairs ? (double)rising / (double)pairs : 0;
        c->ptt_time_mode = done ? mode : CALIB_TIME_UNDECIDED;
        if (!done) {
                SET_TEXT(c->ptt_time_why, why);
        } else if (done < CALIB_MIN_REPEATS || 2 * done <= r->o->repeats) {
                c->ptt_time_mode = mode = CALIB_TIME_UNDECIDED;
                snprintf(c->ptt_time_why, sizeof(c->ptt_time_why),
                         "only %u trace window%s of %u: at least %d, and more than half, are "
                         "needed%s%.100s",
                         done, done == 1 ? "" : "s", r->o->repeats, CALIB_MIN_REPEATS,
                         why[0] ? "; " : "", why);
        } else if (pairs == 0) {
                snprintf(c->ptt_time_why, sizeof(c->ptt_time_why),
                         "the %u trace windows held no outbound TLPs at %s: nothing to time (an "
                         "idle device and port)",
                         done, c->root_port);
        } else if (mode == CALIB_TIME_UNDECIDED) {
                snprintf(c->ptt_time_why, sizeof(c->ptt_time_why),
                         "%llu neighbouring Time fields that differ: neither a free-running "
                         "counter (>= 90 %% rise) nor deltas (<= 75 %%), or too few (< 100 per "
                         "window), or the windows disagree",
                         (unsigned long long)pairs);
        }
        for (unsigned int i = 0; i < done && mode != CALIB_TIME_UNDECIDED; i++) {
                if (w[i].gap) { /* a restarted trace: its span misses the hole */
                        note(r,
                             "PTT clock window %u was cut by a driver stop (the reader fell "
                             "behind) and left out.",
                             i + 1);
                        calib_value_drop(&c->ptt_clock_hz, "cut by a driver stop");
                        continue;
                }
                calib_value_add(&c->ptt_clock_hz,
                                calib_rate((double)calib_time_span(&w[i].obs, mode), w[i].seconds));
        }
        if (!c->ptt_clock_hz.repeats)
                snprintf(c->ptt_clock_hz.why, sizeof(c->ptt_clock_hz.why), "%s",
                         done ? "the time mode could not be decided (see ptt_time)" : why);
        if (!c->outbound_count)
                snprintf(c->outbound_why, sizeof(c->outbound_why), "%s",
                         done ? "no outbound request was traced at the Root Port" : why);
        free(w);
}

/* ---- phase 3: the latency clock ---- */

static void phase_latency(struct run *r, double ptt_hz)
{
        struct calibration *c = r->out;
        struct hisi_pcie_filter port = {.port = r->port_bit}, dev = {.bdf = r->rid};
        struct ptt_capture_opts t;
        struct perf_group *g[3] = {NULL, NULL, NULL};
        char why[300] = "";
        double share = 1;

        if (!(ptt_hz > 0)) {
                SET_TEXT(c->latency_clock_hz.why,
                         "needs a consistent PTT clock, which could not be measured");
                return;
        }
        /* The port's latency pair counts the reads of every function below
         * the port; the two rx_mrd flux pairs tell how much of them were
         * the device's own (the trace sees only those). */
        if (open_pair(r, HISI_RX_MRD_LATENCY, &port, &g[0], why, sizeof(why)) ||
            open_pair(r, HISI_RX_MRD_FLUX, &port, &g[1], why, sizeof(why)) ||
            open_pair(r, HISI_RX_MRD_FLUX, &dev, &g[2], why, sizeof(why))) {
                SET_TEXT(c->latency_clock_hz.why, why);
                for (int k = 0; k < 3; k++)
                        if (g[k])
                                perf_group_close(g[k]);
                return;
        }
        trace_defaults(r, &t);
        t.format = PTT_FORMAT_4DW;
        t.direction = 2; /* both sides: requests and their completions */
        t.time_mode = c->ptt_time_mode == CALIB_TIME_ABSOLUTE ? PTT_TIME_ABSOLUTE : PTT_TIME_DELTA;
        t.clock_hz = (uint64_t)llround(ptt_hz);
        SET_TEXT(t.requesters[0], c->device);
        t.requester_count = 1;
        for (unsigned int i = 0; i < r->o->repeats; i++) {
                struct window w;

                progress(r, "latency %u/%u: %.2f s of %s's reads and their completions", i + 1,
                         r->o->repeats, r->o->trace_seconds, c->device);
                memset(&w, 0, sizeof(w));
                calib_time_obs_init(&w.obs, 11);
                why[0] = '\0';
                if (trace_window(r, &t, g, 3, &w, why, sizeof(why)))
                        break;
                if (!w.have_pmu) {
                        calib_value_drop(&c->latency_clock_hz, "the counters could not be read");
                        continue;
                }
                if (w.pmu[1].values[0] == 0 || w.pmu[0].values[1] < CALIB_MIN_READS ||
                    w.lat_first.count < CALIB_MIN_READS) {
                        calib_value_drop(&c->latency_clock_hz,
                                         "load too small (under 100 reads counted or traced)");
                        continue;
                }
                share = (double)w.pmu[2].values[0] / (double)w.pmu[1].values[0];
                if (share < CALIB_OWN_READS) {
                        snprintf(c->latency_clock_hz.why, sizeof(c->latency_clock_hz.why),
                                 "other functions below %s made %.1f %% of its reads: the PMU's "
                                 "latency is theirs too. Calibrate a device alone below its "
                                 "Root Port, or keep the others idle",
                                 c->root_port, (1 - share) * 100);
                        calib_value_drop(&c->latency_clock_hz,
                                         "other functions below the Root Port read too");
                        continue;
                }
                calib_value_add(&c->latency_clock_hz,
                                calib_latency_clock(
                                    (double)w.pmu[0].values[0], (double)w.pmu[0].values[1],
                                    (double)w.lat_first.sum, (double)w.lat_first.count, ptt_hz));
        }
        for (int k = 0; k < 3; k++)
                perf_group_close(g[k]);
        if (!c->latency_clock_hz.repeats && !c->latency_clock_hz.why[0])
                SET_TEXT(c->latency_clock_hz.why,
                         why[0] ? why
                                : "no read of the device was completed in the trace while the "
                                  "PMU counted rx_mrd latency: the device made no DMA reads");
}

/* ---- the port map (NVIDIA Grace) ---- */

/* Bit @bit's bytes per second over an idle window and over a load of
 * o->bytes through the device. 0, or -EAGAIN when the load failed. */
static int sweep_bit(struct run *r, unsigned int bit, double *idle, double *load, double *expected)
{
        struct nvidia_pcie_bit *b = NULL;
        double t0;
        uint64_t bytes;
        int ret = nvidia_pcie_bit_open(r->env, r->out->pmu, bit, &b);

        if (ret)
                return ret;
        wait_until(r, now(r) + r->o->idle_seconds);
        ret = nvidia_pcie_bit_read(b, idle);
        t0 = now(r);
        bytes = ret ? 0 : load_run(r, r->o->io_size, r->o->bytes);
        if (!ret && bytes)
                ret = nvidia_pcie_bit_read(b, load);
        nvidia_pcie_bit_close(b);
        if (!ret && !bytes)
                ret = -EAGAIN;
        if (!ret)
                *expected = (double)bytes / (now(r) - t0);
        return ret;
}

static void phase_port_map(struct run *r)
{
        struct calibration *c = r->out;
        int named[CALIB_MAX_REPEATS];
        unsigned int usable = 0;

        c->port_map_bit = -1;
        c->port_map_asked = r->o->repeats;
        c->port_map_verdict = CALIB_NOT_MEASURABLE;
        for (unsigned int k = 0; k < r->o->repeats; k++) {
                double idle[NVIDIA_PCIE_PORT_BITS], load[NVIDIA_PCIE_PORT_BITS], rate = 0;
                double expected = 0;
                int ret = 0, bit;

                progress(r, "port map %u/%u: a load through %s with each root_port bit of %s",
                         k + 1, r->o->repeats, c->device, c->pmu);
                for (unsigned int b = 0; b < NVIDIA_PCIE_PORT_BITS && !ret; b++) {
                        ret = sweep_bit(r, b, &idle[b], &load[b], &rate);
                        expected += rate / NVIDIA_PCIE_PORT_BITS;
                }
                if (ret) {
                        snprintf(c->port_map_why, sizeof(c->port_map_why), "%.60s: %.130s", c->pmu,
                                 ret == -EAGAIN ? r->load_why : strerror(-ret));
                        if (ret != -EAGAIN)
                                break; /* the PMU cannot count: no repeat will */
                        continue;
                }
                bit = nvidia_pcie_identify_bit(idle, load, expected, r->o->tolerance);
                if (bit < 0) {
                        snprintf(c->port_map_why, sizeof(c->port_map_why),
                                 bit == -ENOTUNIQ ? "several root_port bits rose by the load"
                                                  : "no root_port bit rose by the load (%.3g "
                                                    "bytes/s)",
                                 expected);
                        continue;
                }
                named[usable++] = bit;
        }
        if (!usable)
                return;
        c->port_map_bit = named[0];
        for (unsigned int k = 0; k < usable; k++)
                c->port_map_agree += named[k] == named[0];
        c->port_map_verdict = c->port_map_agree == usable ? CALIB_CONSISTENT : CALIB_INCONSISTENT;
        if (c->port_map_verdict == CALIB_INCONSISTENT)
                snprintf(c->port_map_why, sizeof(c->port_map_why),
                         "the repeats named different root_port bits");
        /* A dropped repeat does not undo the rest: its why stays. */
}

/* ---- the root complex map (AMD Turin) ---- */

#define DF_MAX_RATES (AMD_DF_ROOT_COMPLEXES * AMD_DF_MAX_SOCKETS)

/* Root complex @rc of every socket: bytes per second over an idle window
 * and over a load of o->bytes through the device, into @rates (one per
 * socket); *@load_rate: the load's bytes per second. 0, -EAGAIN when the
 * load failed, -EBUSY when the counters were shared, or what perf said. */
static int sweep_rc(struct run *r, unsigned int rc, struct amd_df_rc_rates *rates,
                    double *load_rate)
{
        size_t n = amd_df_socket_count(r->df);
        struct amd_df_probe *p[AMD_DF_MAX_SOCKETS] = {NULL};
        uint64_t bytes = 0;
        double t0;
        int ret = 0;

        for (size_t i = 0; i < n && !ret; i++) {
                const struct amd_df_socket *s = amd_df_socket_at(r->df, i);

                rates[i] = (struct amd_df_rc_rates){.socket = amd_df_socket_id(s), .rc = rc};
                ret = amd_df_probe_open(r->env, amd_df_socket_cpu(s), rc, &p[i]);
        }
        if (!ret)
                wait_until(r, now(r) + r->o->idle_seconds);
        for (size_t i = 0; i < n && !ret; i++)
                ret = amd_df_probe_read(p[i], rates[i].idle);
        t0 = now(r);
        if (!ret)
                bytes = load_run(r, r->o->io_size, r->o->bytes);
        for (size_t i = 0; i < n && !ret && bytes; i++)
                ret = amd_df_probe_read(p[i], rates[i].load);
        for (size_t i = 0; i < n; i++)
                amd_df_probe_close(p[i]);
        if (!ret && !bytes)
                ret = -EAGAIN;
        if (!ret)
                *load_rate = (double)bytes / (now(r) - t0);
        return ret;
}

static const char *dir_name(int dir)
{
        return dir == AMD_DF_WRITE ? "write" : "read";
}

/* Why a repeat named no root complex, with the numbers. */
static void df_refusal(struct run *r, unsigned int k, int ret, const struct amd_df_rc_rates *rates,
                       const struct amd_df_rc_match *m, double load_rate)
{
        struct calibration *c = r->out;
        const struct amd_df_rc_rates *a = &rates[m->index], *b = &rates[m->other];
        int at = snprintf(c->df_why, sizeof(c->df_why), "repeat %u of %u: ", k + 1, r->o->repeats);
        char *why = c->df_why + at;
        size_t left = sizeof(c->df_why) - (size_t)at;

        if (ret == -ENOENT)
                snprintf(why, left,
                         "no root complex rose by the load's %.3g bytes/s (within %.3g %%): the "
                         "largest rise was socket %u io%u %s %+.3g bytes/s (%.0f %% of the load)",
                         load_rate, r->o->tolerance * 100, a->socket, a->rc, dir_name(m->dir),
                         m->rise, m->rise / load_rate * 100);
        else if (ret == -ENOTUNIQ)
                snprintf(why, left,
                         "socket %u io%u (%s %+.3g bytes/s) and socket %u io%u (%s %+.3g bytes/s) "
                         "both rose by the load's %.3g bytes/s (within %.3g %%): other traffic "
                         "moved with the load; run again when the machine is quieter",
                         a->socket, a->rc, dir_name(m->dir), m->rise, b->socket, b->rc,
                         dir_name(m->other_dir), m->other_rise, load_rate, r->o->tolerance * 100);
        else
                snprintf(why, left, "the load's rate %.3g bytes/s: %s", load_rate, strerror(-ret));
}

static void phase_df_map(struct run *r)
{
        struct calibration *c = r->out;
        int named[CALIB_MAX_REPEATS];
        unsigned int usable = 0;

        c->df_socket = c->df_rc = -1;
        c->df_asked = r->o->repeats;
        c->df_verdict = CALIB_NOT_MEASURABLE;
        for (unsigned int k = 0; k < r->o->repeats; k++) {
                struct amd_df_rc_rates rates[DF_MAX_RATES];
                struct amd_df_rc_match m;
                size_t n = 0, sockets = amd_df_socket_count(r->df);
                double load_rate = 0, rate = 0;
                int ret = 0;

                progress(r,
                         "root complex map %u/%u: a load through %s with each root complex "
                         "of %s counting",
                         k + 1, r->o->repeats, c->device, c->pmu);
                for (unsigned int rc = 0; rc < AMD_DF_ROOT_COMPLEXES && !ret; rc++) {
                        ret = sweep_rc(r, rc, &rates[n], &rate);
                        n += sockets;
                        load_rate += rate / AMD_DF_ROOT_COMPLEXES;
                }
                if (ret) {
                        snprintf(c->df_why, sizeof(c->df_why), "repeat %u of %u: %s: %.200s", k + 1,
                                 r->o->repeats, c->pmu,
                                 ret == -EAGAIN ? r->load_why
                                 : ret == -EBUSY
                                     ? "the data fabric counters did not count all the time "
                                       "(another perf user holds them)"
                                     : strerror(-ret));
                        if (ret != -EAGAIN && ret != -EBUSY)
                                break; /* the PMU cannot count: no repeat will */
                        if (r->load_error == -ETIMEDOUT)
                                break;
                        continue;
                }
                ret = amd_df_identify_rc(rates, n, load_rate, r->o->tolerance, &m);
                if (ret) {
                        df_refusal(r, k, ret, rates, &m, load_rate);
                        continue;
                }
                named[usable] =
                    (int)(rates[m.index].socket * AMD_DF_ROOT_COMPLEXES + rates[m.index].rc);
                if (!usable) {
                        c->df_dir = (int)m.dir;
                        c->df_rise = m.rise;
                        c->df_load_rate = load_rate;
                }
                usable++;
        }
        if (!usable)
                return;
        c->df_socket = named[0] / AMD_DF_ROOT_COMPLEXES;
        c->df_rc = named[0] % AMD_DF_ROOT_COMPLEXES;
        for (unsigned int k = 0; k < usable; k++)
                c->df_agree += named[k] == named[0];
        c->df_verdict = c->df_agree == usable ? CALIB_CONSISTENT : CALIB_INCONSISTENT;
        if (c->df_verdict == CALIB_INCONSISTENT)
                snprintf(c->df_why, sizeof(c->df_why),
                         "the repeats named different root complexes");
        else
                note(r,
                     "This maps root bus %s only (the Root Port of %s): a root complex can hold "
                     "several root buses; calibrate a device below each other root bus, one "
                     "run and one file each.",
                     c->df_root_bus, c->device);
}

int engine_calibrate(struct engine *e, const struct calibrate_opts *o, struct calibration *out,
                     char *why, size_t whylen)
{
        struct run r = {.e = e, .env = engine_env(e), .o = o, .out = out};
        int ret;

        memset(out, 0, sizeof(*out));
        calib_value_init(&out->flux_unit_bytes, "");
        calib_value_init(&out->time_clock_hz, "");
        calib_value_init(&out->ptt_clock_hz, "");
        calib_value_init(&out->latency_clock_hz, "");
        out->ptt_time_mode = CALIB_TIME_UNDECIDED;
        if (!o->device || o->repeats < CALIB_MIN_REPEATS || o->repeats > CALIB_MAX_REPEATS ||
            o->bytes == 0) {
                snprintf(why, whylen, "calibrate needs a device, bytes and %d..%d repeats",
                         CALIB_MIN_REPEATS, CALIB_MAX_REPEATS);
                return -EINVAL;
        }
        ret = find_parts(&r, why, whylen);
        if (!ret && r.nvidia) {
                phase_port_map(&r);
        } else if (!ret && r.df) {
                phase_df_map(&r);
        } else if (!ret) {
                phase_flux(&r);
                phase_clock(&r);
                calib_value_finish(&out->ptt_clock_hz, o->tolerance, o->repeats);
                calib_value_check_range(&out->ptt_clock_hz, CALIB_CLOCK_MIN_HZ, CALIB_CLOCK_MAX_HZ,
                                        "Hz");
                /* Only a PTT clock that the repeats agree on times the
                 * latency phase. */
                phase_latency(&r, out->ptt_clock_hz.verdict == CALIB_CONSISTENT
                                      ? out->ptt_clock_hz.value
                                      : NAN);
                calib_value_finish(&out->flux_unit_bytes, o->tolerance, o->repeats);
                calib_value_finish(&out->time_clock_hz, o->tolerance, o->repeats);
                calib_value_finish(&out->latency_clock_hz, o->tolerance, o->repeats);
                calib_value_check_range(&out->flux_unit_bytes, CALIB_FLUX_UNIT_MIN,
                                        CALIB_FLUX_UNIT_MAX, "bytes per count");
                calib_value_check_range(&out->time_clock_hz, CALIB_CLOCK_MIN_HZ, CALIB_CLOCK_MAX_HZ,
                                        "Hz");
                calib_value_check_range(&out->latency_clock_hz, CALIB_CLOCK_MIN_HZ,
                                        CALIB_CLOCK_MAX_HZ, "Hz");
        }
        load_stop(&r);
        hisi_pcie_free(r.pmus, r.pmu_count);
        amd_df_free(r.df);
        pcie_topo_free(r.topo);
        return ret;
}
