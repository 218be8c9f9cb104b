/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptt_capture.h - live trace windows of one HiSilicon PTT device
 * (`hisi_ptt<sicl>_<core>`), meant to run on that core's collector thread.
 *
 * Every Period the capture opens a trace on the device (CPU from `cpumask`,
 * disabled), maps the ring and a non-overwrite AUX area through the seam,
 * enables it, consumes the AUX data while Duration passes, then disables,
 * drains, unmaps and closes (kernel-facts §2.9, §4.1). The entries go to a
 * ptt_summary (TLP mix, payload sizes, requesters, request -> completion
 * latency); samples are cumulative over windows.
 *
 * Time is the caller's: ptt_capture_tick(now) is a state machine that never
 * sleeps; call it again at ptt_capture_next_tick(). While a window runs each
 * tick polls: a read() on the event (which also lets the simulator
 * produce), PERF_RECORD_AUX records from the data ring (TRUNCATED, PARTIAL),
 * the AUX bytes between aux_tail and aux_head, across the wrap-around.
 *
 * The driver stops the hardware SILENTLY when, after a 4 MiB buffer, less
 * than 4 MiB is free in the AUX area (the reader fell behind). The capture
 * detects it from the fill level it observes (used > aux_size - 4 MiB is
 * exactly the driver's stop condition), drains, and restarts the trace with
 * DISABLE + ENABLE; the window then counts as "stopped".
 *
 * Several devices share a struct ptt_budget: at most MaxConcurrentTraces
 * AUX areas are mapped at once; a window that gets none is skipped and
 * counted ("no_budget"). Windows are staggered: device i of n starts at
 * i * Period / n. EBUSY at open (another perf user owns the device) skips
 * the window, counts it ("busy") and is logged once.
 *
 * Nothing here prints, sleeps or exits; errors are negative errno values and
 * messages go through the env's log callback.
 */
#ifndef PCIESCOPE_PTT_CAPTURE_H
#define PCIESCOPE_PTT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptt_entry.h"
#include "ptt_summary.h"
#include "sample.h"

struct hw_env;
struct sample_set;

#define PTT_CAPTURE_MAX_PORTS      16
#define PTT_CAPTURE_MAX_REQUESTERS 4 /* room to say "only one" */
#define PTT_BDF_LEN                16
#define PTT_AUX_MIN                (16u << 20) /* the driver's 4 buffers of 4 MiB */
#define PTT_BUFFER_BYTES           (4u << 20)
/* Ticks per second of the Time field: not documented; the simulator's
 * assumption (100 MHz) is the default. */
#define PTT_CAPTURE_DEFAULT_CLOCK_HZ 100000000ull

struct ptt_capture_opts {
        /* Root Ports to trace ("0000:00:10.0" or "00:10.0"); none and no
         * requester: every port of root_port_filters/. */
        size_t root_port_count;
        char root_ports[PTT_CAPTURE_MAX_PORTS][PTT_BDF_LEN];
        /* Or one requester BDF (requester_filters/). More is refused. */
        size_t requester_count;
        char requesters[PTT_CAPTURE_MAX_REQUESTERS][PTT_BDF_LEN];
        unsigned int type_mask;       /* 1 posted, 2 non-posted, 4 completions: default 7 */
        int direction;                /* 0..3 (kernel-facts §2.4): default 2 */
        enum ptt_format format;       /* default 4DW */
        double duration_s;            /* window length: default 0.1 */
        double period_s;              /* window every: default 10 */
        double poll_s;                /* AUX polling while a window runs: default 0.01 */
        uint64_t aux_bytes;           /* power of two >= 16 MiB: default 16 MiB */
        unsigned int ring_pages;      /* data ring pages, a power of two: default 16 */
        enum ptt_time_mode time_mode; /* default delta (see ptt_summary.h) */
        uint64_t clock_hz;            /* > 0: default PTT_CAPTURE_DEFAULT_CLOCK_HZ */
        unsigned int top_n;           /* requesters by name: default 16 */
        enum pcie_detail detail;      /* which series (sample.h) */
};
void ptt_capture_opts_default(struct ptt_capture_opts *opts);

/*
 * ptt_capture_opts_check - the checks that need no device: type mask
 * non-zero and within 7, direction 0..3, format 4DW/8DW, AUX size a power
 * of two >= 16 MiB, ring pages a power of two, Duration > 0 and < Period,
 * clock_hz > 0, not both ports and a requester, at most one requester.
 * Returns 0 or -EINVAL with the reason in @err.
 */
int ptt_capture_opts_check(const struct ptt_capture_opts *opts, char *err, size_t errlen);

/* One file of root_port_filters/ or requester_filters/. */
struct ptt_filter_entry {
        char bdf[PTT_BDF_LEN]; /* as the file is named: dddd:bb:dd.f */
        uint32_t value;        /* its content: the config filter value */
};

/*
 * ptt_capture_filters - the files of @pmu's root_port_filters/ (@root_ports)
 * or requester_filters/, "multiselect" left out, sorted by BDF. *@out is
 * malloc'd (free()). Returns the count, or -ENOENT (no such directory: a
 * kernel before 6.5), -ENOMEM, -EBADMSG (a file that is no number).
 */
int ptt_capture_filters(const struct hw_env *env, const char *pmu, bool root_ports,
                        struct ptt_filter_entry **out);

/* Names of the hisi_ptt PMUs (perf_pmu_list with prefix "hisi_ptt"). */
int ptt_capture_list(const struct hw_env *env, char ***names);

/* ---- the shared budget of mapped AUX areas ---- */

struct ptt_budget;
/* @max: MaxConcurrentTraces (>= 1). Returns 0, -EINVAL or -ENOMEM. */
int ptt_budget_new(unsigned int max, struct ptt_budget **out);
void ptt_budget_free(struct ptt_budget *b);
bool ptt_budget_acquire(struct ptt_budget *b);
void ptt_budget_release(struct ptt_budget *b);
unsigned int ptt_budget_in_use(struct ptt_budget *b);

/* ---- one device's capture ---- */

enum ptt_window_result {
        PTT_WINDOW_OK,
        PTT_WINDOW_BUSY,      /* EBUSY at open: another perf user */
        PTT_WINDOW_NO_BUDGET, /* MaxConcurrentTraces reached */
        PTT_WINDOW_STOPPED,   /* the driver stopped silently; restarted */
        PTT_WINDOW_ERROR,     /* open/mmap/ioctl failed otherwise */
        PTT_WINDOW_RESULTS
};
/* "ok", "busy", "no_budget", "stopped", "error" */
const char *ptt_window_result_name(enum ptt_window_result r);

struct ptt_capture_stats {
        uint64_t windows[PTT_WINDOW_RESULTS];
        uint64_t restarts;     /* DISABLE + ENABLE after a silent stop */
        uint64_t trace_bytes;  /* AUX bytes consumed */
        uint64_t truncated;    /* PERF_RECORD_AUX with TRUNCATED */
        uint64_t partial;      /* PERF_RECORD_AUX with PARTIAL */
        uint64_t aux_records;  /* PERF_RECORD_AUX seen */
        uint64_t lost_bytes;   /* AUX bytes overwritten before they were read */
        int last_error;        /* errno of the last failed window, 0 */
        bool running;          /* a window is open now */
        double window_seconds; /* the last window, ENABLE to DISABLE as perf timed it; 0: unknown */
        /* Latency quantiles of the last window with matches, seconds;
         * [0] first, [1] last completion; q = 0.5, 0.9, 0.99. */
        bool have_quantiles;
        double quantile[2][3];
};

struct ptt_capture;

/*
 * ptt_capture_new - load @pmu_name, check @opts against the device (ports
 * and requester must be listed in its filter directories), and plan the
 * first window at @now + @index * period / @count. @budget may be NULL (no
 * limit) and must outlive the capture, as must @env. Opens nothing yet.
 * Returns 0, -EINVAL (reason in @err), -ENOENT (no such PMU, or its format
 * files lack filter/direction/type/format), -ENOMEM.
 */
int ptt_capture_new(const struct hw_env *env, const char *pmu_name,
                    const struct ptt_capture_opts *opts, struct ptt_budget *budget,
                    unsigned int index, unsigned int count, double now, struct ptt_capture **out,
                    char *err, size_t errlen);

/* Ends a running window (disable, drain, unmap, close) and frees. */
void ptt_capture_free(struct ptt_capture *c);

/*
 * ptt_capture_tick - advance at @now (seconds, monotonic): start a due
 * window, poll a running one, end it when Duration has passed. Returns 0,
 * or the negative errno of a window that failed this tick (counted, and
 * the next window is planned anyway).
 */
int ptt_capture_tick(struct ptt_capture *c, double now);

/*
 * ptt_capture_set_sink - @fn receives every whole entry the capture
 * consumes (@len a multiple of the entry size of @fmt), before the summary
 * counts it: `pciescope calibrate` reads the raw Time fields. NULL: none.
 */
typedef void (*ptt_capture_sink_fn)(void *ctx, const uint8_t *entries, size_t len,
                                    enum ptt_format fmt);
void ptt_capture_set_sink(struct ptt_capture *c, ptt_capture_sink_fn fn, void *ctx);

/* When the capture wants its next tick. */
double ptt_capture_next_tick(const struct ptt_capture *c);

/* The config word the trace is opened with (filter|direction|type|format). */
uint64_t ptt_capture_config(const struct ptt_capture *c);
const char *ptt_capture_name(const struct ptt_capture *c);
const struct ptt_capture_stats *ptt_capture_stats(const struct ptt_capture *c);
const struct ptt_summary *ptt_capture_summary(const struct ptt_capture *c);

/*
 * ptt_capture_samples - append the capture's samples (all with label `pmu`
 * and the extra label): pcie_ptt_tlps_total{direction,kind},
 * pcie_ptt_payload_bytes_total{direction,kind},
 * pcie_ptt_requester_tlps_total{requester,direction},
 * pcie_ptt_completion_latency_seconds_{bucket,sum,count}{completion},
 * pcie_ptt_completion_latency_quantile_seconds{completion,quantile},
 * pcie_ptt_unmatched_total{side}, pcie_ptt_tag_reuse_total,
 * pcie_ptt_windows_total{result}, pcie_ptt_restarts_total,
 * pcie_ptt_trace_bytes_total, pcie_ptt_entries_total,
 * pcie_ptt_malformed_total, pcie_ptt_truncated_total.
 * Returns 0 or -ENOMEM.
 */
int ptt_capture_samples(struct ptt_capture *c, struct sample_set *out);

#endif /* PCIESCOPE_PTT_CAPTURE_H */
