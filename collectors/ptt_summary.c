// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptt_summary.c - TLP mixes, payload sizes, requesters and request ->
 * completion latency from PTT trace entries (see ptt_summary.h).
 */
#include "ptt_summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- names and options ---- */

void ptt_summary_config_default(struct ptt_summary_config *cfg)
{
        memset(cfg, 0, sizeof(*cfg));
        cfg->direction = -1;
        cfg->time_mode = PTT_TIME_DELTA;
        cfg->clock_hz = 0;
        cfg->match = PTT_MATCH_AUTO;
        cfg->max_requesters = PTT_SUMMARY_DEFAULT_REQUESTERS;
        cfg->max_outstanding = PTT_SUMMARY_DEFAULT_OUTSTANDING;
}

const char *ptt_time_mode_name(enum ptt_time_mode mode)
{
        return mode == PTT_TIME_ABSOLUTE ? "absolute" : "delta";
}

int ptt_time_mode_parse(const char *s, enum ptt_time_mode *out)
{
        if (s && strcmp(s, "delta") == 0) {
                *out = PTT_TIME_DELTA;
                return 0;
        }
        if (s && strcmp(s, "absolute") == 0) {
                *out = PTT_TIME_ABSOLUTE;
                return 0;
        }
        return -EINVAL;
}

const char *ptt_dir_name(enum ptt_dir dir)
{
        switch (dir) {
        case PTT_DIR_INBOUND:
                return "inbound";
        case PTT_DIR_OUTBOUND:
                return "outbound";
        default:
                return "unknown";
        }
}

/* ---- histograms ---- */

static inline unsigned int log2_floor(uint64_t v)
{
        return 63u - (unsigned int)__builtin_clzll(v);
}

/* Inline versions of the public functions: the per-entry path uses them. */
static inline unsigned int hist_bucket_index(uint64_t value)
{
        unsigned int k;

        if (value < PTT_HIST_SUB)
                return (unsigned int)value;
        k = log2_floor(value);
        if (k >= PTT_HIST_MAX_K)
                return PTT_HIST_BUCKETS - 1;
        /* value >> (k - SUB_BITS) lies in [SUB, 2 * SUB): its low bits pick
         * the sub-bucket within the octave. */
        return PTT_HIST_SUB + (k - PTT_HIST_SUB_BITS) * PTT_HIST_SUB +
               (unsigned int)((value >> (k - PTT_HIST_SUB_BITS)) & (PTT_HIST_SUB - 1));
}

static inline void hist_add(struct ptt_hist *h, uint64_t value)
{
        uint64_t sum;

        h->bucket[hist_bucket_index(value)]++;
        h->count++;
        h->sum = __builtin_add_overflow(h->sum, value, &sum) ? UINT64_MAX : sum;
        if (value > h->max)
                h->max = value;
}

unsigned int ptt_hist_bucket_index(uint64_t value)
{
        return hist_bucket_index(value);
}

uint64_t ptt_hist_bucket_le(unsigned int i)
{
        unsigned int k, sub;

        if (i < PTT_HIST_SUB)
                return i;
        if (i >= PTT_HIST_BUCKETS - 1)
                return UINT64_MAX;
        k = PTT_HIST_SUB_BITS + (i - PTT_HIST_SUB) / PTT_HIST_SUB;
        sub = (i - PTT_HIST_SUB) % PTT_HIST_SUB;
        return ((uint64_t)(PTT_HIST_SUB + sub + 1) << (k - PTT_HIST_SUB_BITS)) - 1;
}

void ptt_hist_add(struct ptt_hist *h, uint64_t value)
{
        hist_add(h, value);
}

uint64_t ptt_hist_cumulative(const struct ptt_hist *h, unsigned int i)
{
        uint64_t n = 0;

        for (unsigned int b = 0; b <= i && b < PTT_HIST_BUCKETS; b++)
                n += h->bucket[b];
        return n;
}

uint64_t ptt_hist_quantile(const struct ptt_hist *h, double q)
{
        uint64_t rank, seen = 0;

        if (!h->count)
                return 0;
        if (!(q > 0))
                q = 0;
        if (q > 1)
                q = 1;
        /* ceil without libm: round down, then up if anything was cut. */
        rank = (uint64_t)(q * (double)h->count);
        if ((double)rank < q * (double)h->count)
                rank++;
        if (rank < 1)
                rank = 1;
        if (rank > h->count)
                rank = h->count;
        for (unsigned int i = 0; i < PTT_HIST_BUCKETS; i++) {
                seen += h->bucket[i];
                if (seen >= rank) {
                        uint64_t le = ptt_hist_bucket_le(i);
                        return le < h->max ? le : h->max;
                }
        }
        return h->max;
}

uint32_t ptt_payload_bucket_le(unsigned int i)
{
        if (i == 0)
                return 0;
        if (i >= PTT_PAYLOAD_BUCKETS)
                i = PTT_PAYLOAD_BUCKETS - 1;
        return 4u << (i - 1);
}

/*
 * Bucket i >= 1 holds (2^i, 2^(i+1)] bytes: i = ceil(log2(bytes)) - 1, with
 * 1..4 bytes in bucket 1 (the | 3). A TLP carries at most 4096 bytes, so
 * the per-entry path needs no cap (bucket 11 at most); the public function
 * caps any other value.
 */
static inline unsigned int payload_bucket(uint32_t bytes)
{
        return bytes ? 31u - (unsigned int)__builtin_clz((bytes - 1) | 3u) : 0;
}

unsigned int ptt_payload_bucket_index(uint32_t bytes)
{
        unsigned int i = payload_bucket(bytes);

        return i < PTT_PAYLOAD_BUCKETS - 1 ? i : PTT_PAYLOAD_BUCKETS - 1;
}

/* ---- per-requester table ---- */

#define REQ_IDS 65536u

/* Only the direction x kind counts are kept per TLP; totals are summed
 * when a report asks (slot_total), which keeps the per-entry path short. */
struct req_slot {
        uint16_t id;
        struct ptt_count by_kind[PTT_DIR_COUNT][TLP_KIND_COUNT];
};

struct ptt_req_table {
        unsigned int cap, n;
        unsigned int allocated; /* slots allocated (>= cap after a reset) */
        uint16_t *index;        /* requester ID -> slot + 1 (cap <= 65535); 0: none */
        struct req_slot *slot;
        struct req_slot other; /* requesters that found the table full */
};

static void req_table_free(struct ptt_req_table *t)
{
        if (!t)
                return;
        free(t->index);
        free(t->slot);
        free(t);
}

static struct ptt_req_table *req_table_new(unsigned int cap)
{
        struct ptt_req_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->cap = cap;
        t->allocated = cap;
        t->index = calloc(REQ_IDS, sizeof(*t->index));
        t->slot = calloc(cap, sizeof(*t->slot));
        if (!t->index || !t->slot) {
                req_table_free(t);
                return NULL;
        }
        return t;
}

static void req_table_reset(struct ptt_req_table *t)
{
        for (unsigned int i = 0; i < t->n; i++)
                t->index[t->slot[i].id] = 0;
        memset(t->slot, 0, (size_t)t->n * sizeof(*t->slot));
        memset(&t->other, 0, sizeof(t->other));
        t->n = 0;
}

/* An empty table of @cap slots: @t reset when its slots suffice (slots past
 * n are still zero), else a new one; NULL when that fails (@t freed). */
static struct ptt_req_table *req_table_renew(struct ptt_req_table *t, unsigned int cap)
{
        if (t && t->allocated >= cap) {
                req_table_reset(t);
                t->cap = cap;
                return t;
        }
        req_table_free(t);
        return req_table_new(cap);
}

static inline struct req_slot *req_table_get(struct ptt_req_table *t, uint16_t id)
{
        unsigned int at = t->index[id];

        if (at)
                return &t->slot[at - 1];
        if (t->n == t->cap)
                return &t->other;
        t->slot[t->n].id = id;
        t->index[id] = (uint16_t)++t->n;
        return &t->slot[t->n - 1];
}

static void slot_add(struct req_slot *dst, const struct req_slot *src)
{
        for (unsigned int d = 0; d < PTT_DIR_COUNT; d++)
                for (unsigned int k = 0; k < TLP_KIND_COUNT; k++) {
                        dst->by_kind[d][k].tlps += src->by_kind[d][k].tlps;
                        dst->by_kind[d][k].payload_bytes += src->by_kind[d][k].payload_bytes;
                }
}

static struct ptt_count slot_total(const struct req_slot *s)
{
        struct ptt_count c = {0, 0};

        for (unsigned int d = 0; d < PTT_DIR_COUNT; d++)
                for (unsigned int k = 0; k < TLP_KIND_COUNT; k++) {
                        c.tlps += s->by_kind[d][k].tlps;
                        c.payload_bytes += s->by_kind[d][k].payload_bytes;
                }
        return c;
}

/* Ranking order: more TLPs first, then the lower ID. */
static bool ranks_before(const struct req_slot *a, const struct req_slot *b)
{
        uint64_t ta = slot_total(a).tlps, tb = slot_total(b).tlps;

        if (ta != tb)
                return ta > tb;
        return a->id < b->id;
}

static void row_from_slot(struct ptt_requester_row *row, const struct req_slot *s, bool other)
{
        row->other = other;
        row->requester_id = other ? 0 : s->id;
        row->total = slot_total(s);
        memcpy(row->by_kind, s->by_kind, sizeof(row->by_kind));
}

size_t ptt_stats_requesters(const struct ptt_stats *st, unsigned int top_n,
                            struct ptt_requester_row *rows, size_t cap)
{
        const struct ptt_req_table *t = st->req;
        const struct req_slot *last = NULL;
        struct req_slot other;
        size_t nrows = 0;

        if (!t)
                return 0;
        other = t->other;
        other.id = 0;
        /* Selection without allocation: each round takes the best slot that
         * ranks after the previous pick. O(top_n * n), n <= max_requesters. */
        for (unsigned int r = 0; r < top_n && r < t->n; r++) {
                const struct req_slot *best = NULL;

                for (unsigned int i = 0; i < t->n; i++) {
                        const struct req_slot *c = &t->slot[i];

                        if (last && !ranks_before(last, c))
                                continue;
                        if (!best || ranks_before(c, best))
                                best = c;
                }
                if (!best)
                        break;
                if (nrows < cap)
                        row_from_slot(&rows[nrows], best, false);
                nrows++;
                last = best;
        }
        /* Everything that ranks after the last pick goes to "other". */
        for (unsigned int i = 0; i < t->n; i++)
                if (!last || ranks_before(last, &t->slot[i]))
                        slot_add(&other, &t->slot[i]);
        if (slot_total(&other).tlps) {
                if (nrows < cap)
                        row_from_slot(&rows[nrows], &other, true);
                nrows++;
        }
        return nrows;
}

struct ptt_count ptt_stats_dir_total(const struct ptt_stats *st, enum ptt_dir dir)
{
        struct ptt_count c = {0, 0};

        if ((unsigned int)dir >= PTT_DIR_COUNT)
                return c;
        for (unsigned int k = 0; k < TLP_KIND_COUNT; k++) {
                c.tlps += st->by_kind[dir][k].tlps;
                c.payload_bytes += st->by_kind[dir][k].payload_bytes;
        }
        return c;
}

/* ---- pending non-posted requests ---- */

/* Open addressing with linear probing, kept at most half full; deletion
 * shifts entries back so no tombstones build up. */
struct pending {
        uint32_t key1; /* (requester ID << 10 | tag) + 1; 0: empty */
        bool first_seen;
        uint64_t t_req;
};

struct pending_table {
        struct pending *e;
        struct pending *scratch; /* for expiry: survivors are rehashed here */
        uint32_t mask;
        unsigned int shift; /* 32 - log2(size): the hash's top bits index */
        unsigned int n, limit;
        /* Where the last request went: its first completion, often the
         * next TLP, is found there without hashing or probing (keys are
         * unique, so a key match there is the entry, wherever it moved). */
        uint32_t last_at;
};

static inline uint32_t match_key(uint16_t requester_id, uint16_t tag)
{
        return ((uint32_t)requester_id << 10 | (tag & 0x3ffu)) + 1;
}

static inline uint32_t home_of(const struct pending_table *p, uint32_t key1)
{
        return (key1 * 0x9e3779b1u) >> p->shift;
}

static inline uint32_t pending_find(const struct pending_table *p, uint32_t key1)
{
        uint32_t i = home_of(p, key1);

        /* Terminates: the table is never full (n <= limit <= size / 2). */
        while (p->e[i].key1 && p->e[i].key1 != key1)
                i = (i + 1) & p->mask;
        return i;
}

static void pending_delete(struct pending_table *p, uint32_t i)
{
        uint32_t j = i;

        for (;;) {
                uint32_t k;

                j = (j + 1) & p->mask;
                if (!p->e[j].key1)
                        break;
                k = home_of(p, p->e[j].key1);
                /* Leave e[j] if its home lies cyclically in (i, j]. */
                if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                        continue;
                p->e[i] = p->e[j];
                i = j;
        }
        p->e[i].key1 = 0;
        p->n--;
}

/* ---- merging statistics (window -> closed windows -> total view) ---- */

static void req_table_merge(struct ptt_req_table *dst, const struct ptt_req_table *src)
{
        for (unsigned int i = 0; i < src->n; i++)
                slot_add(req_table_get(dst, src->slot[i].id), &src->slot[i]);
        slot_add(&dst->other, &src->other);
}

static void req_table_copy(struct ptt_req_table *dst, const struct ptt_req_table *src)
{
        req_table_reset(dst);
        req_table_merge(dst, src);
}

static void hist_merge(struct ptt_hist *dst, const struct ptt_hist *src)
{
        for (unsigned int i = 0; i < PTT_HIST_BUCKETS; i++)
                dst->bucket[i] += src->bucket[i];
        dst->count += src->count;
        dst->sum = dst->sum + src->sum < dst->sum ? UINT64_MAX : dst->sum + src->sum;
        if (src->max > dst->max)
                dst->max = src->max;
}

/* dst += src, all but the requester tables. */
static void stats_merge_counts(struct ptt_stats *dst, const struct ptt_stats *src)
{
        struct ptt_coverage *c = &dst->cov;
        const struct ptt_coverage *o = &src->cov;
        struct ptt_match_stats *m = &dst->match;
        const struct ptt_match_stats *n = &src->match;

        c->buffers += o->buffers;
        c->bytes += o->bytes;
        c->entries += o->entries;
        c->tlps += o->tlps;
        c->empty += o->empty;
        c->malformed += o->malformed;
        c->unknown_tlp += o->unknown_tlp;
        c->tail_bytes += o->tail_bytes;
        c->lost_bytes += o->lost_bytes;
        c->truncated += o->truncated;
        c->partial += o->partial;
        c->gaps += o->gaps;
        c->by_format[0] += o->by_format[0];
        c->by_format[1] += o->by_format[1];
        c->ticks += o->ticks;
        for (unsigned int d = 0; d < PTT_DIR_COUNT; d++) {
                for (unsigned int k = 0; k < TLP_KIND_COUNT; k++) {
                        dst->by_kind[d][k].tlps += src->by_kind[d][k].tlps;
                        dst->by_kind[d][k].payload_bytes += src->by_kind[d][k].payload_bytes;
                }
                for (unsigned int b = 0; b < PTT_PAYLOAD_BUCKETS; b++)
                        dst->payload_hist[d][b] += src->payload_hist[d][b];
        }
        m->enabled |= n->enabled;
        m->requests += n->requests;
        m->completions += n->completions;
        m->matched_first += n->matched_first;
        m->matched_last += n->matched_last;
        m->unmatched_requests += n->unmatched_requests;
        m->incomplete_requests += n->incomplete_requests;
        m->unmatched_completions += n->unmatched_completions;
        m->tag_reuse += n->tag_reuse;
        m->expired += n->expired;
        hist_merge(&dst->lat_first, &src->lat_first);
        hist_merge(&dst->lat_last, &src->lat_last);
}

static void stats_zero(struct ptt_stats *st)
{
        struct ptt_req_table *req = st->req;

        req_table_reset(req);
        memset(st, 0, sizeof(*st));
        st->req = req;
}

/* ---- the summariser ---- */

/* The time base of the current window (see advance_time()). */
struct time_base {
        bool have_time;
        uint32_t prev_time;
        unsigned int prev_bits;
        uint64_t now; /* ticks since the window's first entry */
};

/*
 * Every entry is counted once, into the current window. Closing a window
 * adds it to `closed`; the total the caller reads is closed + the open
 * window, built on demand in `total` (so the per-entry path stays short).
 */
struct ptt_summary {
        struct ptt_summary_config cfg;
        struct ptt_stats window, closed, total;
        struct pending_table pend;
        size_t pend_allocated; /* entries of pend.e and pend.scratch */
        /* From the config, per format: matching on, and the direction of
         * [class][answered] (see direction_of()). */
        bool match_on[2];
        /* Where a TLP of [format][kind][answered] counts: its direction
         * (see direction_of()) as cell = dir * TLP_KIND_COUNT + kind of
         * by_kind in the low byte, and dir * PTT_PAYLOAD_BUCKETS, its row of
         * payload_hist, in the high byte; the per-entry path indexes both
         * arrays flat, with one load for both. */
        uint16_t cell_of[2][TLP_KIND_COUNT][2];

        bool window_open; /* entries counted since the last window end */
        struct time_base tb;
};

static enum ptt_dir direction_of(const struct ptt_summary *s, enum ptt_format fmt,
                                 enum tlp_class cls, bool answered);

/* The per-entry decisions that depend only on the config, made once. */
static void precompute(struct ptt_summary *s)
{
        for (int f = 0; f < 2; f++) {
                s->match_on[f] = ptt_summary_matching(s, (enum ptt_format)f);
                for (unsigned int k = 0; k < TLP_KIND_COUNT; k++)
                        for (int a = 0; a < 2; a++) {
                                unsigned int d =
                                    direction_of(s, (enum ptt_format)f, tlp_kind_class(k), a);

                                s->cell_of[f][k][a] = (uint16_t)((d * PTT_PAYLOAD_BUCKETS) << 8 |
                                                                 (d * TLP_KIND_COUNT + k));
                        }
        }
}

static int check_config(const struct ptt_summary_config *c)
{
        if (c->direction < -1 || c->direction > 3)
                return -EINVAL;
        if (c->time_mode != PTT_TIME_DELTA && c->time_mode != PTT_TIME_ABSOLUTE)
                return -EINVAL;
        if (c->match != PTT_MATCH_AUTO && c->match != PTT_MATCH_ON && c->match != PTT_MATCH_OFF)
                return -EINVAL;
        if (c->max_requesters > PTT_SUMMARY_MAX_REQUESTERS)
                return -EINVAL;
        if (c->max_outstanding > PTT_SUMMARY_MAX_OUTSTANDING)
                return -EINVAL;
        return 0;
}

void ptt_summary_free(struct ptt_summary *s)
{
        if (!s)
                return;
        req_table_free(s->window.req);
        req_table_free(s->closed.req);
        req_table_free(s->total.req);
        free(s->pend.e);
        free(s->pend.scratch);
        free(s);
}

/* Sizes @s for its config, reusing the tables it holds where they are big
 * enough; everything else in @s is zero. -ENOMEM: @s can only be freed. */
static int summary_init(struct ptt_summary *s)
{
        size_t size = 16;
        unsigned int bits = 4;

        if (!s->cfg.max_requesters)
                s->cfg.max_requesters = PTT_SUMMARY_DEFAULT_REQUESTERS;
        if (!s->cfg.max_outstanding)
                s->cfg.max_outstanding = PTT_SUMMARY_DEFAULT_OUTSTANDING;
        /* At most half full: probes stay short, and at the default 4096
         * outstanding the table is 128 KiB (a quarter full it was 256 KiB,
         * twice the L2 traffic for the same probes). */
        while (size < 2 * (size_t)s->cfg.max_outstanding) {
                size *= 2;
                bits++;
        }
        s->pend.mask = (uint32_t)size - 1;
        s->pend.shift = 32 - bits;
        s->pend.limit = s->cfg.max_outstanding;
        if (s->pend_allocated >= size) {
                memset(s->pend.e, 0, size * sizeof(*s->pend.e));
                memset(s->pend.scratch, 0, size * sizeof(*s->pend.scratch));
        } else {
                free(s->pend.e);
                free(s->pend.scratch);
                s->pend.e = calloc(size, sizeof(*s->pend.e));
                s->pend.scratch = calloc(size, sizeof(*s->pend.scratch));
                s->pend_allocated = size;
        }
        s->window.req = req_table_renew(s->window.req, s->cfg.max_requesters);
        s->closed.req = req_table_renew(s->closed.req, s->cfg.max_requesters);
        s->total.req = req_table_renew(s->total.req, s->cfg.max_requesters);
        if (!s->pend.e || !s->pend.scratch || !s->window.req || !s->closed.req || !s->total.req)
                return -ENOMEM;
        precompute(s);
        return 0;
}

struct ptt_summary *ptt_summary_new(const struct ptt_summary_config *cfg)
{
        struct ptt_summary *s;

        s = calloc(1, sizeof(*s));
        if (!s) {
                errno = ENOMEM;
                return NULL;
        }
        if (cfg)
                s->cfg = *cfg;
        else
                ptt_summary_config_default(&s->cfg);
        if (check_config(&s->cfg)) {
                free(s);
                errno = EINVAL;
                return NULL;
        }
        if (summary_init(s)) {
                ptt_summary_free(s);
                errno = ENOMEM;
                return NULL;
        }
        return s;
}

int ptt_summary_reset(struct ptt_summary *s, const struct ptt_summary_config *cfg)
{
        struct ptt_summary_config c;
        struct ptt_summary keep = *s;

        if (cfg)
                c = *cfg;
        else
                ptt_summary_config_default(&c);
        if (check_config(&c))
                return -EINVAL;
        /* What ptt_summary_new() would start from: all zero but the
         * config, with the allocations kept for summary_init() to reuse. */
        memset(s, 0, sizeof(*s));
        s->cfg = c;
        s->pend.e = keep.pend.e;
        s->pend.scratch = keep.pend.scratch;
        s->pend_allocated = keep.pend_allocated;
        s->window.req = keep.window.req;
        s->closed.req = keep.closed.req;
        s->total.req = keep.total.req;
        return summary_init(s);
}

const struct ptt_summary_config *ptt_summary_config(const struct ptt_summary *s)
{
        return &s->cfg;
}

bool ptt_summary_matching(const struct ptt_summary *s, enum ptt_format fmt)
{
        switch (s->cfg.match) {
        case PTT_MATCH_ON:
                return true;
        case PTT_MATCH_OFF:
                return false;
        default:
                return s->cfg.direction < 0 ||
                       (fmt == PTT_FORMAT_4DW && (s->cfg.direction == 2 || s->cfg.direction == 3));
        }
}

/* An unanswered request leaves the table: never completed, or only partly. */
static void count_unanswered(struct ptt_summary *s, const struct pending *p, bool expired)
{
        struct ptt_match_stats *m = &s->window.match;

        if (p->first_seen)
                m->incomplete_requests++;
        else
                m->unmatched_requests++;
        if (expired)
                m->expired++;
}

/*
 * Make room by expiring the older half by age: every entry at least half as
 * old as the oldest goes. That always frees the oldest entry, so an insert
 * never fails, and a steady stream of unanswerable requests (completions the
 * setting does not record) costs O(1) amortised. Rare: kept out of line so
 * the per-entry path stays small.
 */
static __attribute__((noinline)) void pending_expire(struct ptt_summary *s, uint64_t now)
{
        struct pending_table *p = &s->pend;
        uint64_t oldest = 0, cut;
        struct pending *tmp;

        for (uint32_t i = 0; i <= p->mask; i++)
                if (p->e[i].key1 && now - p->e[i].t_req > oldest)
                        oldest = now - p->e[i].t_req;
        cut = oldest / 2 + (oldest & 1);
        memset(p->scratch, 0, ((size_t)p->mask + 1) * sizeof(*p->scratch));
        tmp = p->e;
        p->e = p->scratch;
        p->scratch = tmp;
        p->n = 0;
        for (uint32_t i = 0; i <= p->mask; i++) {
                const struct pending *old = &p->scratch[i];
                uint32_t at;

                if (!old->key1)
                        continue;
                if (now - old->t_req >= cut) {
                        count_unanswered(s, old, true);
                        continue;
                }
                at = pending_find(p, old->key1);
                p->e[at] = *old;
                p->n++;
        }
}

/* A non-posted request: remember it by ID + tag. Always inlined, as count_tlp(). */
static inline __attribute__((always_inline)) void
on_request(struct ptt_summary *s, const struct tlp_brief *t, uint64_t now)
{
        uint32_t key1 = match_key(t->requester_id, t->tag);
        uint32_t at = pending_find(&s->pend, key1);
        struct pending *p = &s->pend.e[at];

        s->window.match.requests++;
        if (p->key1) {
                /* The old request never saw its (last) completion. */
                s->window.match.tag_reuse++;
                count_unanswered(s, p, false);
                p->first_seen = false;
                p->t_req = now;
                s->pend.last_at = at;
                return;
        }
        if (s->pend.n >= s->pend.limit) {
                pending_expire(s, now);
                at = pending_find(&s->pend, key1);
                p = &s->pend.e[at];
        }
        s->pend.last_at = at;
        p->key1 = key1;
        p->first_seen = false;
        p->t_req = now;
        s->pend.n++;
}

/* Returns whether the completion answered a recorded request. */
static inline __attribute__((always_inline)) bool
on_completion(struct ptt_summary *s, const struct tlp_brief *t, uint64_t now, uint32_t *at_out)
{
        uint32_t key1 = match_key(t->requester_id, t->tag), at = s->pend.last_at;
        struct pending *p;
        struct ptt_stats *st = &s->window;
        uint64_t latency;

        if (s->pend.e[at].key1 != key1)
                at = pending_find(&s->pend, key1);
        p = &s->pend.e[at];

        *at_out = at;
        st->match.completions++;
        if (!p->key1) {
                st->match.unmatched_completions++;
                return false;
        }
        latency = now - p->t_req;
        if (!p->first_seen) {
                p->first_seen = true;
                st->match.matched_first++;
                hist_add(&st->lat_first, latency);
        }
        if (t->last) {
                st->match.matched_last++;
                hist_add(&st->lat_last, latency);
                pending_delete(&s->pend, at);
        }
        return true;
}

/*
 * Advance the window's tick count by this entry's Time (see the header).
 * Inline, on a time base the feed loops keep in registers: every entry
 * takes it, and through memory it would be a store-to-load chain from each
 * entry to the next.
 */
static inline void advance_time(struct time_base *tb, enum ptt_time_mode mode, uint32_t time,
                                unsigned int time_bits)
{
        uint32_t wrap_mask = time_bits >= 32 ? 0xffffffffu : (1u << time_bits) - 1;

        if (!tb->have_time || time_bits != tb->prev_bits) {
                /* The first entry (or a change of width) only sets the base:
                 * its delta is from an entry we never saw. */
                tb->have_time = true;
                tb->prev_time = time;
                tb->prev_bits = time_bits;
                return;
        }
        if (mode == PTT_TIME_DELTA)
                tb->now += time;
        else
                tb->now += (uint64_t)((time - tb->prev_time) & wrap_mask);
        tb->prev_time = time;
}

static enum ptt_dir direction_of(const struct ptt_summary *s, enum ptt_format fmt,
                                 enum tlp_class cls, bool answered)
{
        int d = s->cfg.direction;

        if (d < 0)
                return PTT_DIR_UNKNOWN;
        if (fmt == PTT_FORMAT_8DW) {
                if (d == 1)
                        return PTT_DIR_OUTBOUND;
                return d == 0 ? PTT_DIR_UNKNOWN : PTT_DIR_INBOUND;
        }
        switch (d) {
        case 0:
                return PTT_DIR_INBOUND;
        case 1:
                return PTT_DIR_OUTBOUND;
        case 3:
                /* Inbound only CPL-A is recorded: any request is outbound,
                 * and a completion of a recorded (outbound) request inbound. */
                if (cls != TLP_CLASS_COMPLETION)
                        return PTT_DIR_OUTBOUND;
                return answered ? PTT_DIR_INBOUND : PTT_DIR_UNKNOWN;
        default:
                return PTT_DIR_UNKNOWN;
        }
}

/*
 * A split read's completions follow one another: while the last entry was a
 * matched completion with more to come, an entry with the same header but
 * for Time, Byte Count, Status and Lower Address (same Fmt/Type, Length,
 * requester and tag) hits the same pending request (not first, still
 * there: nothing came between), requester row and counters. The feed loops
 * keep where those are, skip the decode and look-ups for such entries, and
 * count them into the cells when the run ends (run_flush()).
 */
#define RUN_NONE 0xffffffffu

struct split_run {
        bool live;
        size_t n; /* completions of the run not yet added to the cells */
        /* 4DW: PTT DW0 without Time; 8DW: the TLP's DW0, with the
         * entry's first dword and prefix dword in keym and keyp. DW2
         * without Lower Address, or RUN_NONE (no DW2 >> 8 is) when not
         * live: the loop tests only the keys. */
        uint32_t key0, key2, keym, keyp;
        uint32_t at; /* the pending request */
        uint32_t bytes;
        struct ptt_count *win, *slot; /* by_kind cells of window and requester */
        uint64_t *hist;               /* payload_hist cell */
};

/* Add the run's completions counted so far to its cells. */
static inline void run_flush(struct ptt_summary *s, struct split_run *run)
{
        if (!run->n)
                return;
        s->window.match.completions += run->n;
        run->win->tlps += run->n;
        run->win->payload_bytes += (uint64_t)run->n * run->bytes;
        *run->hist += run->n;
        run->slot->tlps += run->n;
        run->slot->payload_bytes += (uint64_t)run->n * run->bytes;
        run->n = 0;
}

/*
 * Count one decoded TLP of format @f8 (1: 8DW) seen at tick @now: match it,
 * then add it to the window's mix, payload histogram and its requester's
 * row. The caller counts cov.tlps and match.enabled (per buffer in the feed
 * loops). This is the per-entry path: always inlined, so each feed loop
 * gets its own copy with the format constant (at -O2 GCC would otherwise
 * call it, with its three callers, and keep everything in memory).
 */
static inline __attribute__((always_inline)) void count_tlp(struct ptt_summary *s,
                                                            const struct tlp_brief *t,
                                                            unsigned int f8, uint64_t now,
                                                            struct split_run *run)
{
        struct ptt_stats *st = &s->window;
        struct req_slot *slot = req_table_get(st->req, t->requester_id);
        /* by_kind and payload_hist as flat arrays, for cell_of. */
        struct ptt_count *win_cell = &st->by_kind[0][0], *slot_cell = &slot->by_kind[0][0];
        uint64_t *hist_cell = &st->payload_hist[0][0];
        bool answered = false;
        unsigned int cell;
        uint32_t at = 0;

        if (s->match_on[f8]) {
                if (t->cls == TLP_CLASS_NON_POSTED)
                        on_request(s, t, now);
                else if (t->cls == TLP_CLASS_COMPLETION)
                        answered = on_completion(s, t, now, &at);
        }
        cell = s->cell_of[f8][t->kind][answered];
        win_cell += cell & 0xff;
        slot_cell += cell & 0xff;
        hist_cell += (cell >> 8) + payload_bucket(t->payload_bytes);
        /* Interleaved: as pairs GCC would add each cell with SSE, costlier
         * than the scalar adds here. */
        win_cell->tlps++;
        slot_cell->tlps++;
        (*hist_cell)++;
        win_cell->payload_bytes += t->payload_bytes;
        slot_cell->payload_bytes += t->payload_bytes;
        if (run) {
                /* A matched completion with more to come opens a run. */
                run_flush(s, run);
                run->live = answered && !t->last;
                if (!run->live)
                        return;
                run->at = at;
                run->bytes = t->payload_bytes;
                run->win = win_cell;
                run->hist = hist_cell;
                run->slot = slot_cell;
        }
}

/*
 * The next completion of a run (see struct split_run): the same counts as
 * count_tlp() would make, from the run's cells. Only whether it is the last
 * completion (tlp_cpl_is_last() for a completion with data: the run's
 * completions carry data) depends on this entry.
 */
static inline __attribute__((always_inline)) void count_run_next(struct ptt_summary *s,
                                                                 struct split_run *run,
                                                                 uint32_t dw1, uint32_t dw2,
                                                                 uint64_t now)
{
        struct ptt_stats *st = &s->window;
        unsigned int bc = dw1 & 0xfff;

        run->n++;
        if (((dw1 >> 13) & 7) != TLP_CPL_SC || (bc ? bc : 4096u) <= run->bytes - (dw2 & 3u)) {
                run_flush(s, run);
                st->match.matched_last++;
                hist_add(&st->lat_last, now - s->pend.e[run->at].t_req);
                pending_delete(&s->pend, run->at);
                run->live = false;
                run->key2 = RUN_NONE;
        }
}

/* Counting after a window's end starts the next window (the closed one is
 * already part of the total). */
static void ensure_open(struct ptt_summary *s)
{
        if (s->window_open)
                return;
        stats_zero(&s->window);
        s->window_open = true;
}

void ptt_summary_add_entry(struct ptt_summary *s, const struct ptt_entry *e)
{
        struct ptt_coverage *cov = &s->window.cov;
        unsigned int f8 = e->format == PTT_FORMAT_8DW;
        uint32_t prefix = f8 ? e->prefix : 0;
        struct tlp_brief t;

        ensure_open(s);
        advance_time(&s->tb, s->cfg.time_mode, e->time, e->time_bits);
        /* A non-zero 8DW prefix dword must be a prefix (Fmt 100), as in
         * ptt_entry_tlp(). */
        if ((prefix && prefix >> 29 != TLP_FMT_PREFIX) ||
            tlp_decode_brief(e->hdr[0], e->hdr[1], e->hdr[2], &t)) {
                cov->unknown_tlp++;
        } else {
                count_tlp(s, &t, f8, s->tb.now, NULL);
                cov->tlps++;
                s->window.match.enabled |= s->match_on[f8];
        }
        cov->entries++;
        cov->by_format[f8]++;
        cov->ticks = s->tb.now;
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* What a feed loop counted in one buffer, added to the coverage once. */
struct feed_tally {
        size_t tlps, empty, bad, unknown;
};

/* Whether @tb already has a base for entries of @time_bits: then every
 * entry only adds its ticks (advance_time_set()). */
static inline bool time_base_set(const struct time_base *tb, unsigned int time_bits)
{
        return tb->have_time && tb->prev_bits == time_bits;
}

/* advance_time() once time_base_set(): the feed loops take the first-entry
 * test out of the loop, and get @mode as a constant. */
static inline __attribute__((always_inline)) void advance_time_set(struct time_base *tb,
                                                                   enum ptt_time_mode mode,
                                                                   uint32_t time,
                                                                   unsigned int time_bits)
{
        uint32_t wrap_mask = time_bits >= 32 ? 0xffffffffu : (1u << time_bits) - 1;

        /* Only the absolute mode reads prev_time (and the mode is fixed). */
        if (mode == PTT_TIME_DELTA) {
                tb->now += time;
        } else {
                tb->now += (uint64_t)((time - tb->prev_time) & wrap_mask);
                tb->prev_time = time;
        }
}

/*
 * One 4DW entry. Same results as ptt_entry_decode() + add_entry (the unit
 * tests and the fuzz target compare them), without building the entry: the
 * PTT DW0 holds Fmt[1:0], Type, T9, T8 and Length at other positions than
 * PCIe DW0, and its bits [31:25] are exactly Fmt << 5 | Type (Fmt[2] is
 * never set), so the fields go to the decoder without a remap. DW3 holds
 * only address bits, which no summary uses. @base_set: time_base_set()
 * holds (a constant in each loop).
 */
static inline __attribute__((always_inline)) void
step_4dw(struct ptt_summary *s, const uint8_t *p, struct time_base *tb, enum ptt_time_mode mode,
         bool base_set, struct feed_tally *n, struct split_run *run)
{
        uint32_t d0 = get32(p), d1 = get32(p + 4), d2 = get32(p + 8);
        struct tlp_brief t;

        /* A run's DW0 is not 0: such an entry is not empty. */
        if (base_set && (d0 & ~0x7ffu) == run->key0 && d2 >> 8 == run->key2) {
                advance_time_set(tb, mode, d0 & 0x7ff, PTT_4DW_TIME_BITS);
                count_run_next(s, run, d1, d2, tb->now);
                return;
        }
        if (!(d0 | d1 | d2 | get32(p + 12))) {
                n->empty++;
                return;
        }
        if (base_set)
                advance_time_set(tb, mode, d0 & 0x7ff, PTT_4DW_TIME_BITS);
        else
                advance_time(tb, mode, d0 & 0x7ff, PTT_4DW_TIME_BITS);
        if (tlp_decode_brief_fields(d0 >> 25, (d0 >> 11) & 0x3ff, (d0 >> 23) & 3, d1, d2, &t)) {
                n->unknown++;
                return;
        }
        count_tlp(s, &t, 0, tb->now, run);
        run->key0 = d0 & ~0x7ffu;
        run->key2 = run->live ? d2 >> 8 : RUN_NONE;
}

/* One 8DW entry: the header dwords are stored as PCIe draws them. A run's
 * next completion has the same first dword, prefix and DW0 as the one that
 * opened it (which passed every check below), and DW2 but for Lower
 * Address; only its DW1 (status, byte count) and Time differ. */
static inline __attribute__((always_inline)) void
step_8dw(struct ptt_summary *s, const uint8_t *p, struct time_base *tb, enum ptt_time_mode mode,
         bool base_set, struct feed_tally *n, struct split_run *run)
{
        uint32_t d0 = get32(p), prefix, h0, h2;
        struct tlp_brief t;

        if (base_set && get32(p + 16) >> 8 == run->key2 && get32(p + 8) == run->key0 &&
            d0 == run->keym && get32(p + 4) == run->keyp) {
                advance_time_set(tb, mode, get32(p + 28), PTT_8DW_TIME_BITS);
                count_run_next(s, run, get32(p + 12), get32(p + 16), tb->now);
                return;
        }
        if ((d0 & PTT_8DW_MARKER) != PTT_8DW_MARKER) {
                for (unsigned int k = 4; k < PTT_ENTRY_8DW_BYTES; k += 4)
                        d0 |= get32(p + k);
                n->empty += !d0;
                n->bad += !!d0;
                return;
        }
        if (base_set)
                advance_time_set(tb, mode, get32(p + 28), PTT_8DW_TIME_BITS);
        else
                advance_time(tb, mode, get32(p + 28), PTT_8DW_TIME_BITS);
        /* A non-zero prefix dword must be a prefix (Fmt 100), as in
         * ptt_entry_tlp(). */
        prefix = get32(p + 4);
        h0 = get32(p + 8);
        h2 = get32(p + 16);
        if ((prefix && prefix >> 29 != TLP_FMT_PREFIX) ||
            tlp_decode_brief(h0, get32(p + 12), h2, &t)) {
                n->unknown++;
                return;
        }
        count_tlp(s, &t, 1, tb->now, run);
        run->key0 = h0;
        run->keym = d0;
        run->keyp = prefix;
        run->key2 = run->live ? h2 >> 8 : RUN_NONE;
}

/* One entry of format @f8 (see step_4dw() and step_8dw()). */
static inline __attribute__((always_inline)) void step(struct ptt_summary *s, const uint8_t *p,
                                                       unsigned int f8, struct time_base *tb,
                                                       enum ptt_time_mode mode, bool base_set,
                                                       struct feed_tally *n, struct split_run *run)
{
        if (f8)
                step_8dw(s, p, tb, mode, base_set, n, run);
        else
                step_4dw(s, p, tb, mode, base_set, n, run);
}

/*
 * The feed loop of format @f8: entries up to the one that sets the time
 * base take the general step, the rest one of two loops with the time mode
 * a constant. Every entry that is neither empty, malformed nor unknown is
 * a TLP; the caller counts those from the tally.
 */
static inline __attribute__((always_inline)) void feed_loop(struct ptt_summary *s, const uint8_t *p,
                                                            size_t slots, unsigned int f8,
                                                            struct feed_tally *n)
{
        size_t esize = f8 ? PTT_ENTRY_8DW_BYTES : PTT_ENTRY_4DW_BYTES, i = 0;
        unsigned int time_bits = f8 ? PTT_8DW_TIME_BITS : PTT_4DW_TIME_BITS;
        struct split_run run = {.live = false, .n = 0, .key2 = RUN_NONE};
        enum ptt_time_mode mode = s->cfg.time_mode;
        struct time_base tb = s->tb;

        for (; i < slots && !time_base_set(&tb, time_bits); i++)
                step(s, p + i * esize, f8, &tb, mode, false, n, &run);
        if (mode == PTT_TIME_DELTA)
                for (; i < slots; i++)
                        step(s, p + i * esize, f8, &tb, PTT_TIME_DELTA, true, n, &run);
        else
                for (; i < slots; i++)
                        step(s, p + i * esize, f8, &tb, PTT_TIME_ABSOLUTE, true, n, &run);
        run_flush(s, &run);
        s->tb = tb;
}

static void feed_4dw(struct ptt_summary *s, const uint8_t *p, size_t slots, struct feed_tally *n)
{
        feed_loop(s, p, slots, 0, n);
}

static void feed_8dw(struct ptt_summary *s, const uint8_t *p, size_t slots, struct feed_tally *n)
{
        feed_loop(s, p, slots, 1, n);
}

size_t ptt_summary_feed_format(struct ptt_summary *s, const uint8_t *buf, size_t len,
                               enum ptt_format fmt)
{
        struct feed_tally n = {0, 0, 0, 0};
        size_t size, slots;
        struct ptt_stats *st;

        if (fmt != PTT_FORMAT_8DW)
                fmt = PTT_FORMAT_4DW;
        if (!buf)
                len = 0;
        size = ptt_format_entry_size(fmt);
        /* Whole entries only: at most len / 16 iterations whatever the
         * bytes say. */
        slots = len / size;
        ensure_open(s);
        if (fmt == PTT_FORMAT_8DW)
                feed_8dw(s, buf, slots, &n);
        else
                feed_4dw(s, buf, slots, &n);
        n.tlps = slots - n.empty - n.bad - n.unknown;
        st = &s->window;
        st->cov.buffers++;
        st->cov.bytes += len;
        st->cov.entries += slots;
        st->cov.tlps += n.tlps;
        st->cov.empty += n.empty;
        st->cov.malformed += n.bad;
        st->cov.unknown_tlp += n.unknown;
        st->cov.by_format[fmt] += slots - n.empty - n.bad;
        st->cov.tail_bytes += len - slots * size;
        st->cov.ticks = s->tb.now;
        if (n.tlps && s->match_on[fmt == PTT_FORMAT_8DW])
                st->match.enabled = true;
        return n.tlps;
}

size_t ptt_summary_feed(struct ptt_summary *s, const uint8_t *buf, size_t len)
{
        return ptt_summary_feed_format(s, buf, len, ptt_format_detect(buf, len));
}

void ptt_summary_note_lost(struct ptt_summary *s, uint64_t bytes)
{
        ensure_open(s);
        s->window.cov.lost_bytes += bytes;
}

void ptt_summary_note_truncated(struct ptt_summary *s)
{
        ensure_open(s);
        s->window.cov.truncated++;
}

void ptt_summary_note_partial(struct ptt_summary *s)
{
        ensure_open(s);
        s->window.cov.partial++;
}

/* Pending requests leave as unanswered; the next entry sets a new time
 * base. The ticks counted so far stay (the window's span is what was seen). */
static void break_stream(struct ptt_summary *s)
{
        struct pending_table *p = &s->pend;

        for (uint32_t i = 0; i <= p->mask; i++) {
                if (!p->e[i].key1)
                        continue;
                count_unanswered(s, &p->e[i], false);
                p->e[i].key1 = 0;
        }
        p->n = 0;
        s->tb.have_time = false;
}

void ptt_summary_note_gap(struct ptt_summary *s)
{
        ensure_open(s);
        s->window.cov.gaps++;
        break_stream(s);
}

void ptt_summary_window_end(struct ptt_summary *s)
{
        if (!s->window_open)
                return;
        break_stream(s);
        stats_merge_counts(&s->closed, &s->window);
        req_table_merge(s->closed.req, s->window.req);
        s->tb.now = 0;
        s->window_open = false;
}

void ptt_summary_window_start(struct ptt_summary *s)
{
        ptt_summary_window_end(s);
        stats_zero(&s->window);
}

const struct ptt_stats *ptt_summary_window(const struct ptt_summary *s)
{
        return &s->window;
}

const struct ptt_stats *ptt_summary_total(const struct ptt_summary *s)
{
        /* The view is a cache inside the summariser; building it does not
         * change what the summariser has counted, so a const caller may. */
        struct ptt_summary *m = (struct ptt_summary *)s;
        struct ptt_req_table *req = m->total.req;

        m->total = m->closed;
        m->total.req = req;
        req_table_copy(req, m->closed.req);
        if (m->window_open) {
                stats_merge_counts(&m->total, &m->window);
                req_table_merge(req, m->window.req);
        }
        return &m->total;
}

double ptt_summary_ticks_to_unit(const struct ptt_summary *s, uint64_t ticks)
{
        if (!s->cfg.clock_hz)
                return (double)ticks;
        return (double)ticks * 1e9 / (double)s->cfg.clock_hz;
}

const char *ptt_summary_time_unit(const struct ptt_summary *s)
{
        return s->cfg.clock_hz ? "ns" : "ticks";
}
