/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptt_summary.h - summaries of PTT trace entries (layer (c) of the PTT
 * decoder; see docs/ptt.md).
 *
 * Fed entries one by one (or whole AUX buffers), the summariser keeps two
 * sets of statistics: the current window and the cumulative total since
 * creation. Memory is fixed at creation; every loop is bounded by the input
 * length or by a table size. Nothing here does I/O.
 *
 * Time. The Time field's clock and meaning are not documented (kernel-facts
 * open question 4). Two readings are supported:
 *   PTT_TIME_DELTA     each entry's Time is the ticks since the previous
 *                      entry. DEFAULT: the kernel doc's example shows a large
 *                      first value (0x4c033) followed by 2, 2, ..., which an
 *                      absolute counter cannot produce without wrapping
 *                      within a few entries; as a delta it reads naturally.
 *   PTT_TIME_ABSOLUTE  Time is a free-running counter of time_bits (11 for
 *                      4DW, 32 for 8DW) that wraps; consecutive entries are
 *                      assumed less than one wrap apart, so the forward
 *                      distance modulo 2^bits is the elapsed ticks.
 * Either way each entry gets a 64-bit monotonic tick count within the window
 * and latencies are differences of those.
 * clock_hz: ticks per second. DEFAULT 0 = unknown: latencies are reported
 * in ticks (unit "ticks"); a value converts them to nanoseconds.
 *
 * Direction. Entries carry no direction bit. The trace config's direction
 * (and the entry's format) tells it where the setting records one side only;
 * for 4DW direction 3 (outbound P/NP/CPL + inbound CPL-A) requests are
 * outbound and a completion that matches a recorded request is inbound; the
 * rest of the mixed settings count as PTT_DIR_UNKNOWN.
 *
 * Latency. Non-posted requests are matched to completions on requester ID +
 * 10-bit tag. Matching runs where the setting records both sides (4DW
 * direction 2 and 3) or the direction is not known (-1), unless configured
 * otherwise. Each request gets a latency to its first completion and to its
 * last (split completions count the Byte Count down; see tlp_cpl_is_last()).
 */
#ifndef PCIESCOPE_PTT_SUMMARY_H
#define PCIESCOPE_PTT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptt_entry.h"
#include "tlp.h"

enum ptt_time_mode {
        PTT_TIME_DELTA = 0, /* default */
        PTT_TIME_ABSOLUTE = 1,
};

enum ptt_match_mode {
        PTT_MATCH_AUTO = 0, /* default: on for 4DW dir 2/3 and unknown dir */
        PTT_MATCH_ON = 1,
        PTT_MATCH_OFF = 2,
};

enum ptt_dir {
        PTT_DIR_INBOUND = 0,
        PTT_DIR_OUTBOUND = 1,
        PTT_DIR_UNKNOWN = 2, /* a mixed setting that does not tell */
        PTT_DIR_COUNT
};

#define PTT_SUMMARY_DEFAULT_TOP_N       16
#define PTT_SUMMARY_DEFAULT_REQUESTERS  256 /* distinct requesters tracked */
#define PTT_SUMMARY_DEFAULT_OUTSTANDING 4096
#define PTT_SUMMARY_MAX_REQUESTERS      65535
#define PTT_SUMMARY_MAX_OUTSTANDING     (1u << 20)

struct ptt_summary_config {
        int direction;                /* trace config direction 0..3, or -1 unknown */
        enum ptt_time_mode time_mode; /* PTT_TIME_DELTA */
        uint64_t clock_hz;            /* 0: unknown, report ticks */
        enum ptt_match_mode match;    /* PTT_MATCH_AUTO */
        unsigned int max_requesters;  /* distinct requester IDs counted by
                                       * name per stats set; later ones go
                                       * to "other" (default 256) */
        unsigned int max_outstanding; /* non-posted requests awaiting a
                                       * completion (default 4096); when
                                       * full the older half by age expires */
};

/* Fills @cfg with the defaults above (direction -1). */
void ptt_summary_config_default(struct ptt_summary_config *cfg);

/* "delta"/"absolute" <-> enum. parse returns 0 or -EINVAL. */
const char *ptt_time_mode_name(enum ptt_time_mode mode);
int ptt_time_mode_parse(const char *s, enum ptt_time_mode *out);

/* "inbound", "outbound", "unknown". */
const char *ptt_dir_name(enum ptt_dir dir);

/* ---- histograms ---- */

/*
 * Log-linear histogram of tick values: values 0..3 have a bucket each; from
 * there each power of two [2^k, 2^(k+1)) (k = 2..33) is split into 4 equal
 * buckets (relative width <= 25%); the last bucket (+Inf) takes the rest.
 * Bucket i's inclusive upper bound is ptt_hist_bucket_le(i).
 */
#define PTT_HIST_SUB_BITS 2
#define PTT_HIST_SUB      (1u << PTT_HIST_SUB_BITS)
#define PTT_HIST_MAX_K    34 /* finite buckets cover 0 .. 2^34 - 1 */
#define PTT_HIST_BUCKETS  (PTT_HIST_SUB + (PTT_HIST_MAX_K - PTT_HIST_SUB_BITS) * PTT_HIST_SUB + 1)

struct ptt_hist {
        uint64_t bucket[PTT_HIST_BUCKETS]; /* per bucket, not cumulative */
        uint64_t count;
        uint64_t sum; /* exact sum of the values (saturating) */
        uint64_t max;
};

void ptt_hist_add(struct ptt_hist *h, uint64_t value);
unsigned int ptt_hist_bucket_index(uint64_t value);
/* Inclusive upper bound of bucket @i; UINT64_MAX for the +Inf bucket. */
uint64_t ptt_hist_bucket_le(unsigned int i);
/* Values <= ptt_hist_bucket_le(@i): the cumulative count Prometheus wants. */
uint64_t ptt_hist_cumulative(const struct ptt_hist *h, unsigned int i);
/*
 * ptt_hist_quantile - nearest rank: the upper bound of the bucket holding
 * the ceil(@q * count)-th smallest value (the exact max for the +Inf
 * bucket, and never above max). 0 for an empty histogram.
 */
uint64_t ptt_hist_quantile(const struct ptt_hist *h, double q);

/* Payload sizes: bucket i holds payloads <= ptt_payload_bucket_le(i) bytes:
 * 0 (no data), 4, 8, 16, ..., 4096. */
#define PTT_PAYLOAD_BUCKETS 12
uint32_t ptt_payload_bucket_le(unsigned int i);
unsigned int ptt_payload_bucket_index(uint32_t bytes);

/* ---- statistics ---- */

struct ptt_count {
        uint64_t tlps;
        uint64_t payload_bytes;
};

/* What went in, and what could not be used. Bytes and entries are counted
 * by the feed functions; lost/truncated are reported by the caller. */
struct ptt_coverage {
        uint64_t buffers;      /* ptt_summary_feed() calls */
        uint64_t bytes;        /* bytes fed */
        uint64_t entries;      /* entry slots seen (decoded or not) */
        uint64_t tlps;         /* entries whose TLP decoded and was counted */
        uint64_t empty;        /* all-zero slots (-ENOMSG) */
        uint64_t malformed;    /* bad entries (-EBADMSG) */
        uint64_t unknown_tlp;  /* entries whose TLP header did not decode */
        uint64_t tail_bytes;   /* bytes after the last whole entry of a buffer */
        uint64_t lost_bytes;   /* reported: data the capture lost */
        uint64_t truncated;    /* reported: AUX records flagged TRUNCATED */
        uint64_t partial;      /* reported: AUX records flagged PARTIAL */
        uint64_t gaps;         /* reported: ptt_summary_note_gap() calls */
        uint64_t by_format[2]; /* entries per enum ptt_format */
        uint64_t ticks;        /* span of the window's time base */
};

struct ptt_match_stats {
        bool enabled;
        uint64_t requests;              /* non-posted requests seen */
        uint64_t completions;           /* completions seen */
        uint64_t matched_first;         /* requests with a first completion */
        uint64_t matched_last;          /* requests whose last completion came */
        uint64_t unmatched_requests;    /* never completed: flushed, expired,
                                         * replaced on tag reuse or dropped */
        uint64_t incomplete_requests;   /* first completion seen, not the last */
        uint64_t unmatched_completions; /* no pending request with that ID+tag */
        uint64_t tag_reuse;             /* a new request while one with the same
                                         * ID+tag was pending */
        uint64_t expired;               /* evicted when the table was full */
};

struct ptt_req_table; /* per-requester counts, internal */

struct ptt_stats {
        struct ptt_coverage cov;
        struct ptt_count by_kind[PTT_DIR_COUNT][TLP_KIND_COUNT];
        uint64_t payload_hist[PTT_DIR_COUNT][PTT_PAYLOAD_BUCKETS];
        struct ptt_match_stats match;
        struct ptt_hist lat_first; /* request -> first completion, ticks */
        struct ptt_hist lat_last;  /* request -> last completion, ticks */
        struct ptt_req_table *req; /* see ptt_stats_requesters() */
};

/* One row of the per-requester breakdown. */
struct ptt_requester_row {
        bool other;            /* the "other" row: everything not listed */
        uint16_t requester_id; /* bus << 8 | devfn; 0 for "other" */
        struct ptt_count total;
        struct ptt_count by_kind[PTT_DIR_COUNT][TLP_KIND_COUNT];
};

/*
 * ptt_stats_requesters - the @top_n requesters with the most TLPs (ties:
 * lower ID first), then one "other" row with the rest (requesters beyond
 * @top_n and those that arrived after max_requesters were tracked), when it
 * is not empty. Writes at most @cap rows; returns the number of rows there
 * are (which may exceed @cap).
 */
size_t ptt_stats_requesters(const struct ptt_stats *st, unsigned int top_n,
                            struct ptt_requester_row *rows, size_t cap);

/* Sum of by_kind over kinds for @dir. */
struct ptt_count ptt_stats_dir_total(const struct ptt_stats *st, enum ptt_dir dir);

/* ---- the summariser ---- */

struct ptt_summary;

/* NULL with errno set (EINVAL for a bad config, ENOMEM). @cfg NULL: defaults. */
struct ptt_summary *ptt_summary_new(const struct ptt_summary_config *cfg);
void ptt_summary_free(struct ptt_summary *s);
const struct ptt_summary_config *ptt_summary_config(const struct ptt_summary *s);

/*
 * ptt_summary_reset - start over as ptt_summary_new(@cfg) would (@cfg NULL:
 * defaults): nothing counted, nothing pending, the new config in force. The
 * tables are kept where the new limits fit (no allocation, and only the
 * parts used are cleared), so a restarted trace costs no 400 KiB of fresh
 * zeroed memory. 0; -EINVAL for a bad config (@s unchanged); -ENOMEM
 * (@s can then only be freed).
 */
int ptt_summary_reset(struct ptt_summary *s, const struct ptt_summary_config *cfg);

/* Whether latency matching is on for entries of @fmt under this config. */
bool ptt_summary_matching(const struct ptt_summary *s, enum ptt_format fmt);

/*
 * ptt_summary_add_entry - count one decoded entry (window and total). An
 * entry whose TLP does not decode is counted as unknown_tlp and skipped.
 * Does not count coverage bytes (ptt_summary_feed does).
 */
void ptt_summary_add_entry(struct ptt_summary *s, const struct ptt_entry *e);

/*
 * ptt_summary_feed - one AUX buffer: detect its format (as perf), decode
 * every whole entry, count bad/empty slots and the tail, add the rest.
 * Returns the number of entries counted as TLPs. Bounded by @len / 16.
 */
size_t ptt_summary_feed(struct ptt_summary *s, const uint8_t *buf, size_t len);

/* Same with the format given (e.g. a buffer continuing an earlier one). */
size_t ptt_summary_feed_format(struct ptt_summary *s, const uint8_t *buf, size_t len,
                               enum ptt_format fmt);

/* Caller-reported capture losses (AUX flags, dropped bytes), both sets. */
void ptt_summary_note_lost(struct ptt_summary *s, uint64_t bytes);
void ptt_summary_note_truncated(struct ptt_summary *s);
void ptt_summary_note_partial(struct ptt_summary *s);

/*
 * ptt_summary_note_gap - data is missing at this point of the stream (a
 * TRUNCATED AUX record, lost bytes, a restarted trace). Requests still
 * pending are counted unmatched (or incomplete) and dropped, and the time
 * base restarts, so no latency and no delta spans the gap. The note_*
 * functions above only count.
 */
void ptt_summary_note_gap(struct ptt_summary *s);

/*
 * Windows. Each entry is counted once, into the current window.
 * ptt_summary_window_end() closes it: requests still pending count as
 * unmatched (or incomplete), the time base resets, and the window is added
 * to the total. Its stats stay readable until ptt_summary_window_start()
 * zeroes them, or until counting resumes (feeding after an end starts the
 * next window). ptt_summary_total() is every closed window plus the open
 * one: a snapshot built when called (call it again after feeding more; once
 * per report, not per entry).
 */
void ptt_summary_window_end(struct ptt_summary *s);
void ptt_summary_window_start(struct ptt_summary *s);

const struct ptt_stats *ptt_summary_window(const struct ptt_summary *s);
const struct ptt_stats *ptt_summary_total(const struct ptt_summary *s);

/* Ticks to nanoseconds with the configured clock; returns ticks unchanged
 * when clock_hz is 0. ptt_summary_time_unit() says which: "ns" or "ticks". */
double ptt_summary_ticks_to_unit(const struct ptt_summary *s, uint64_t ticks);
const char *ptt_summary_time_unit(const struct ptt_summary *s);

#endif /* PCIESCOPE_PTT_SUMMARY_H */
