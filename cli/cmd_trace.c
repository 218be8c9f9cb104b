// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_trace.c - `pciescope trace dump|report FILE`: off-line analysis of a
 * hisi_ptt recording (perf.data in file or pipe mode, or a raw AUX dump
 * with --raw).
 *
 * dump prints every dword perf's `perf report -D` prints, at the same
 * buffer offsets and in the same order, with the 4 bytes in memory order
 * (as perf 6.1 prints them) and our label, so the two outputs can be
 * compared line by line; a line starting with '#' before each entry gives
 * the decoded TLP. report feeds every buffer to the summariser and prints
 * the TLP mix, payload sizes, top requesters and latency histograms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "perf_data.h"
#include "ptt_entry.h"
#include "ptt_summary.h"
#include "tlp.h"

/* Inputs above this size get a progress bar when stderr is a terminal. */
#define PROGRESS_MIN_BYTES (32u << 20)
#define BAR_WIDTH          40

/* trace config fields (kernel-facts.md §2.2). */
#define PTT_CONFIG_DIRECTION(c) ((int)(((c) >> 20) & 0xf))
#define PTT_CONFIG_TYPE(c)      ((unsigned int)(((c) >> 24) & 0xff))
#define PTT_CONFIG_FORMAT(c)    ((unsigned int)(((c) >> 32) & 0xf))

struct progress {
        bool on;
        uint64_t total;
        int shown; /* last percentage printed */
};

static void progress_start(struct progress *p, uint64_t total)
{
        p->on = total >= PROGRESS_MIN_BYTES && isatty(STDERR_FILENO);
        p->total = total;
        p->shown = -1;
}

static void progress_update(struct progress *p, uint64_t done)
{
        int pct;

        if (!p->on || !p->total)
                return;
        pct = (int)(done * 100 / p->total);
        if (pct == p->shown)
                return;
        p->shown = pct;
        fprintf(stderr, "\r%3d%% [%-*.*s] %" PRIu64 " of %" PRIu64 " MiB", pct, BAR_WIDTH,
                pct * BAR_WIDTH / 100, "########################################", done >> 20,
                p->total >> 20);
}

static void progress_end(struct progress *p)
{
        if (p->on)
                fprintf(stderr, "\r%*s\r", BAR_WIDTH + 40, "");
}

/* ---- dump ---- */

struct dump_ctx {
        bool raw; /* a raw AUX dump: no AUXTRACE record to describe */
        struct progress progress;
        uint64_t entries, dwords;
};

/* One dword line in perf's layout: ".  %08x: " + the 4 bytes as "%02x "
 * + padding to column 46 + the label. Formatted by hand: printf was most
 * of a large dump's time. */
static void put_dword_line(size_t off, const uint8_t *d, const char *label)
{
        static const char hex[] = "0123456789abcdef";
        char line[256];
        size_t n = 0, len = strlen(label);

        line[n++] = '.';
        line[n++] = ' ';
        line[n++] = ' ';
        /* %08x, and more digits past 4 GiB (a raw dump can be that big). */
        int digits = 8;

        while (digits < 16 && (uint64_t)off >> (4 * digits))
                digits++;
        for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
                line[n++] = hex[((uint64_t)off >> shift) & 0xf];
        line[n++] = ':';
        for (int i = 0; i < 4; i++) {
                line[n++] = ' ';
                line[n++] = hex[d[i] >> 4];
                line[n++] = hex[d[i] & 0xf];
        }
        memset(line + n, ' ', 33);
        n += 33;
        if (len > sizeof(line) - n - 1)
                len = sizeof(line) - n - 1;
        memcpy(line + n, label, len);
        n += len;
        line[n++] = '\n';
        fwrite_unlocked(line, 1, n, stdout);
}

/* "#  entry %" PRIu64 " at %08zx: %s\n", by hand as put_dword_line(). */
static void put_entry_line(uint64_t number, size_t off, const char *desc)
{
        static const char hex[] = "0123456789abcdef";
        char line[320], num[20];
        size_t n = 0, k = 0, len = strlen(desc);
        int digits = 8;

        memcpy(line, "#  entry ", 9);
        n = 9;
        do {
                num[k++] = (char)('0' + number % 10);
                number /= 10;
        } while (number);
        while (k)
                line[n++] = num[--k];
        memcpy(line + n, " at ", 4);
        n += 4;
        while (digits < 16 && (uint64_t)off >> (4 * digits))
                digits++;
        for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
                line[n++] = hex[((uint64_t)off >> shift) & 0xf];
        line[n++] = ':';
        line[n++] = ' ';
        if (len > sizeof(line) - n - 1)
                len = sizeof(line) - n - 1;
        memcpy(line + n, desc, len);
        n += len;
        line[n++] = '\n';
        fwrite_unlocked(line, 1, n, stdout);
}

/* stdout's buffer while dumping; static, as stdout outlives the call. */
static char dump_outbuf[1u << 20];

/* Prints the entry at @off; returns the dwords shown. */
static unsigned int dump_entry(const uint8_t *p, size_t off, enum ptt_format fmt, uint64_t number)
{
        unsigned int shown = 0;
        struct ptt_entry e;
        char label[160], desc[256];
        size_t dws = ptt_format_entry_size(fmt) / 4;
        int r = ptt_entry_decode(p + off, dws * 4, fmt, &e);

        if (r > 0)
                ptt_entry_desc(&e, desc, sizeof(desc));
        else
                snprintf(desc, sizeof(desc), "%s", ptt_strerror(r));
        put_entry_line(number, off, desc);
        for (unsigned int i = 0; i < dws; i++) {
                const uint8_t *d = p + off + 4 * i;

                if (!ptt_dword_shown_by_perf(fmt, i))
                        continue;
                /* Only 4DW DW0 has a label with values; the rest are
                 * ptt_dword_perf_label()'s fixed labels, used as they are. */
                if (fmt == PTT_FORMAT_4DW && i == 0) {
                        if (ptt_dword_perf_label(&e, i, label, sizeof(label)) < 0)
                                snprintf(label, sizeof(label), "%s", ptt_dword_label(fmt, i));
                        put_dword_line(off + 4 * i, d, label);
                } else {
                        put_dword_line(off + 4 * i, d, ptt_dword_label(fmt, i));
                }
                shown++;
        }
        return shown;
}

static int dump_buffer(void *ctx, const struct perf_data_buffer *b)
{
        struct dump_ctx *dc = ctx;
        enum ptt_format fmt = ptt_format_detect(b->bytes, b->size);
        size_t esize = ptt_format_entry_size(fmt);
        size_t whole = (size_t)(b->size - b->size % esize);

        if (!dc->raw)
                printf("\nAUXTRACE buffer %u at byte %#" PRIx64 ": size %#" PRIx64
                       "  offset %#" PRIx64 "  ref %#" PRIx64 "  idx %u  tid %d  cpu %d\n",
                       b->number, b->record_offset, b->size, b->aux_offset, b->reference, b->idx,
                       (int)b->tid, (int)b->cpu);
        else
                printf("\nraw AUX data: %" PRIu64 " bytes\n", b->size);
        printf(". ... HISI PTT data: size %zu bytes (%s, %zu entries)\n", whole,
               ptt_format_name(fmt), whole / esize);
        for (size_t off = 0; off < whole; off += esize) {
                dc->dwords += dump_entry(b->bytes, off, fmt, dc->entries++);
                if ((off & 0xfffff) == 0)
                        progress_update(&dc->progress, b->data_offset + off);
        }
        progress_update(&dc->progress, b->data_offset + b->size);
        if (whole < b->size)
                printf("#  %" PRIu64 " bytes after the last whole entry (not shown, as perf)\n",
                       b->size - whole);
        return 0;
}

/* ---- report ---- */

struct report_ctx {
        struct ptt_summary *sum;
        struct progress progress;
};

static int report_buffer(void *ctx, const struct perf_data_buffer *b)
{
        struct report_ctx *rc = ctx;
        /* Feed in 1 MiB slices so the progress bar moves on big buffers;
         * a slice boundary falls on an entry boundary of either format. */
        enum ptt_format fmt = ptt_format_detect(b->bytes, b->size);
        uint64_t slice = 1u << 20;

        for (uint64_t off = 0; off < b->size; off += slice) {
                uint64_t n = b->size - off < slice ? b->size - off : slice;

                ptt_summary_feed_format(rc->sum, b->bytes + off, (size_t)n, fmt);
                progress_update(&rc->progress, b->data_offset + off + n);
        }
        return 0;
}

static double unit_of(const struct ptt_summary *s, uint64_t ticks)
{
        return ptt_summary_ticks_to_unit(s, ticks);
}

static void print_bar(uint64_t n, uint64_t max)
{
        int w = max ? (int)((n * BAR_WIDTH + max - 1) / max) : 0;

        printf(" |%-*.*s| %" PRIu64 "\n", BAR_WIDTH, w, "########################################",
               n);
}

static void print_hist(const struct ptt_summary *s, const struct ptt_hist *h, const char *what)
{
        unsigned int lo = PTT_HIST_BUCKETS, hi = 0;
        uint64_t max = 0;

        printf("latency %s (%s): matched %" PRIu64, what, ptt_summary_time_unit(s), h->count);
        if (!h->count) {
                printf("\n");
                return;
        }
        printf(", p50 %.0f, p90 %.0f, p99 %.0f, max %.0f, mean %.1f\n",
               unit_of(s, ptt_hist_quantile(h, 0.5)), unit_of(s, ptt_hist_quantile(h, 0.9)),
               unit_of(s, ptt_hist_quantile(h, 0.99)), unit_of(s, h->max),
               unit_of(s, h->sum) / (double)h->count);
        for (unsigned int i = 0; i < PTT_HIST_BUCKETS; i++) {
                if (!h->bucket[i])
                        continue;
                lo = i < lo ? i : lo;
                hi = i;
                max = h->bucket[i] > max ? h->bucket[i] : max;
        }
        for (unsigned int i = lo; i <= hi; i++) {
                if (i + 1 == PTT_HIST_BUCKETS)
                        printf("  %12s", "+Inf");
                else
                        printf("  <= %9.0f", unit_of(s, ptt_hist_bucket_le(i)));
                print_bar(h->bucket[i], max);
        }
}

static void requester_name(const struct ptt_requester_row *r, char *buf, size_t len)
{
        if (r->other)
                snprintf(buf, len, "other");
        else
                snprintf(buf, len, "%02x:%02x.%x", r->requester_id >> 8,
                         (r->requester_id >> 3) & 0x1f, r->requester_id & 7);
}

/* The requester rows (top N + other); NULL on allocation failure. */
static struct ptt_requester_row *requester_rows(const struct ptt_stats *st, unsigned int top,
                                                size_t *n)
{
        size_t cap = (size_t)top + 1;
        struct ptt_requester_row *rows = calloc(cap, sizeof(*rows));

        *n = 0;
        if (!rows)
                return NULL;
        *n = ptt_stats_requesters(st, top, rows, cap);
        if (*n > cap)
                *n = cap;
        return rows;
}

static void print_coverage(const struct ptt_stats *st, const struct perf_data_info *info)
{
        const struct ptt_coverage *c = &st->cov;

        printf("coverage: %" PRIu64 " buffers, %" PRIu64 " bytes, %" PRIu64 " entries (4DW %" PRIu64
               ", 8DW %" PRIu64 "), %" PRIu64 " TLPs; %" PRIu64 " empty, %" PRIu64
               " malformed, %" PRIu64 " unknown TLPs, %" PRIu64 " tail bytes\n",
               info->buffers, c->bytes, c->entries, c->by_format[PTT_FORMAT_4DW],
               c->by_format[PTT_FORMAT_8DW], c->tlps, c->empty, c->malformed, c->unknown_tlp,
               c->tail_bytes);
        printf("capture: %" PRIu64 " AUX records (%" PRIu64 " truncated, %" PRIu64
               " partial, %" PRIu64 " collision), %" PRIu64 " lost records, %" PRIu64
               " AUXTRACE errors\n",
               info->aux_records, info->aux_truncated, info->aux_partial, info->aux_collision,
               info->lost_records, info->auxtrace_errors);
}

static void print_text(const struct ptt_summary *s, const struct perf_data_info *info,
                       unsigned int top)
{
        const struct ptt_stats *st = ptt_summary_total(s);
        const struct ptt_match_stats *m = &st->match;
        struct ptt_requester_row *rows;
        char name[32];
        size_t n;

        print_coverage(st, info);
        printf("\nTLPs by direction and kind:\n  %-9s %-9s %10s %14s\n", "direction", "kind",
               "TLPs", "payload bytes");
        for (int d = 0; d < PTT_DIR_COUNT; d++)
                for (int k = 0; k < TLP_KIND_COUNT; k++)
                        if (st->by_kind[d][k].tlps)
                                printf("  %-9s %-9s %10" PRIu64 " %14" PRIu64 "\n", ptt_dir_name(d),
                                       tlp_kind_name(k), st->by_kind[d][k].tlps,
                                       st->by_kind[d][k].payload_bytes);
        for (int d = 0; d < PTT_DIR_COUNT; d++) {
                uint64_t max = 0, any = 0;

                for (unsigned int i = 0; i < PTT_PAYLOAD_BUCKETS; i++) {
                        any += st->payload_hist[d][i];
                        max = st->payload_hist[d][i] > max ? st->payload_hist[d][i] : max;
                }
                if (!any)
                        continue;
                printf("\npayload sizes, %s:\n", ptt_dir_name(d));
                for (unsigned int i = 0; i < PTT_PAYLOAD_BUCKETS; i++) {
                        printf("  <= %4u B", ptt_payload_bucket_le(i));
                        print_bar(st->payload_hist[d][i], max);
                }
        }
        rows = requester_rows(st, top, &n);
        printf("\ntop requesters:\n  %-9s %10s %14s  by kind\n", "requester", "TLPs",
               "payload bytes");
        for (size_t i = 0; rows && i < n; i++) {
                requester_name(&rows[i], name, sizeof(name));
                printf("  %-9s %10" PRIu64 " %14" PRIu64 " ", name, rows[i].total.tlps,
                       rows[i].total.payload_bytes);
                for (int d = 0; d < PTT_DIR_COUNT; d++)
                        for (int k = 0; k < TLP_KIND_COUNT; k++)
                                if (rows[i].by_kind[d][k].tlps)
                                        printf(" %s %" PRIu64, tlp_kind_name(k),
                                               rows[i].by_kind[d][k].tlps);
                printf("\n");
        }
        free(rows);
        printf("\nrequest matching: %s; %" PRIu64 " requests, %" PRIu64 " completions, %" PRIu64
               " unmatched requests, %" PRIu64 " incomplete, %" PRIu64
               " unmatched completions, %" PRIu64 " tag reuses\n",
               m->enabled ? "on" : "off (the direction setting records one side)", m->requests,
               m->completions, m->unmatched_requests, m->incomplete_requests,
               m->unmatched_completions, m->tag_reuse);
        print_hist(s, &st->lat_first, "to the first completion");
        print_hist(s, &st->lat_last, "to the last completion");
}

static json_object *json_u64(uint64_t v)
{
        return json_object_new_uint64(v);
}

static json_object *json_hist(const struct ptt_summary *s, const struct ptt_hist *h)
{
        json_object *o = json_object_new_object(), *b = json_object_new_array();

        json_object_object_add(o, "matched", json_u64(h->count));
        json_object_object_add(o, "p50",
                               json_object_new_double(unit_of(s, ptt_hist_quantile(h, 0.5))));
        json_object_object_add(o, "p90",
                               json_object_new_double(unit_of(s, ptt_hist_quantile(h, 0.9))));
        json_object_object_add(o, "p99",
                               json_object_new_double(unit_of(s, ptt_hist_quantile(h, 0.99))));
        json_object_object_add(o, "max", json_object_new_double(unit_of(s, h->max)));
        json_object_object_add(o, "sum", json_object_new_double(unit_of(s, h->sum)));
        json_object_object_add(o, "count", json_u64(h->count));
        /* Cumulative, Prometheus style; only buckets where the count grows,
         * plus +Inf (the rest are implied). */
        for (unsigned int i = 0; i < PTT_HIST_BUCKETS; i++) {
                json_object *e;

                if (!h->bucket[i] && i + 1 < PTT_HIST_BUCKETS)
                        continue;
                e = json_object_new_object();
                if (i + 1 == PTT_HIST_BUCKETS)
                        json_object_object_add(e, "le", json_object_new_string("+Inf"));
                else
                        json_object_object_add(
                            e, "le", json_object_new_double(unit_of(s, ptt_hist_bucket_le(i))));
                json_object_object_add(e, "count", json_u64(ptt_hist_cumulative(h, i)));
                json_object_array_add(b, e);
        }
        json_object_object_add(o, "buckets", b);
        return o;
}

static json_object *json_tlps(const struct ptt_stats *st, unsigned int top)
{
        json_object *a = json_object_new_array();
        struct ptt_requester_row *rows;
        char name[32];
        size_t n;

        rows = requester_rows(st, top, &n);
        for (size_t i = 0; rows && i < n; i++) {
                requester_name(&rows[i], name, sizeof(name));
                for (int d = 0; d < PTT_DIR_COUNT; d++) {
                        for (int k = 0; k < TLP_KIND_COUNT; k++) {
                                const struct ptt_count *c = &rows[i].by_kind[d][k];
                                json_object *o;

                                if (!c->tlps)
                                        continue;
                                o = json_object_new_object();
                                json_object_object_add(o, "direction",
                                                       json_object_new_string(ptt_dir_name(d)));
                                json_object_object_add(o, "kind",
                                                       json_object_new_string(tlp_kind_name(k)));
                                json_object_object_add(o, "requester",
                                                       json_object_new_string(name));
                                json_object_object_add(o, "count", json_u64(c->tlps));
                                json_object_object_add(o, "payload_bytes",
                                                       json_u64(c->payload_bytes));
                                json_object_array_add(a, o);
                        }
                }
        }
        free(rows);
        return a;
}

static json_object *json_report(const char *path, const struct ptt_summary *s,
                                const struct perf_data_info *info, unsigned int top)
{
        const struct ptt_stats *st = ptt_summary_total(s);
        const struct ptt_coverage *c = &st->cov;
        const struct ptt_match_stats *m = &st->match;
        const struct ptt_summary_config *cfg = ptt_summary_config(s);
        json_object *o = json_object_new_object(), *in = json_object_new_object();
        json_object *cov = json_object_new_object(), *lat = json_object_new_object();
        json_object *ph = json_object_new_object();

        json_object_object_add(in, "file", json_object_new_string(path));
        json_object_object_add(in, "kind", json_object_new_string(perf_data_kind_name(info->kind)));
        json_object_object_add(in, "bytes", json_u64(info->input_size));
        json_object_object_add(in, "direction", json_object_new_int(cfg->direction));
        json_object_object_add(in, "time_mode",
                               json_object_new_string(ptt_time_mode_name(cfg->time_mode)));
        json_object_object_add(in, "clock_hz", json_u64(cfg->clock_hz));
        json_object_object_add(o, "input", in);
        json_object_object_add(o, "entries", json_u64(c->entries));
        json_object_object_add(cov, "buffers", json_u64(info->buffers));
        json_object_object_add(cov, "bytes", json_u64(c->bytes));
        json_object_object_add(cov, "entries_4dw", json_u64(c->by_format[PTT_FORMAT_4DW]));
        json_object_object_add(cov, "entries_8dw", json_u64(c->by_format[PTT_FORMAT_8DW]));
        json_object_object_add(cov, "tlps", json_u64(c->tlps));
        json_object_object_add(cov, "empty", json_u64(c->empty));
        json_object_object_add(cov, "malformed", json_u64(c->malformed));
        json_object_object_add(cov, "unknown_tlp", json_u64(c->unknown_tlp));
        json_object_object_add(cov, "tail_bytes", json_u64(c->tail_bytes));
        json_object_object_add(cov, "aux_records", json_u64(info->aux_records));
        json_object_object_add(cov, "truncated", json_u64(info->aux_truncated));
        json_object_object_add(cov, "partial", json_u64(info->aux_partial));
        json_object_object_add(cov, "lost_records", json_u64(info->lost_records));
        json_object_object_add(o, "coverage", cov);
        json_object_object_add(o, "tlps", json_tlps(st, top));
        for (int d = 0; d < PTT_DIR_COUNT; d++) {
                json_object *b = json_object_new_array();
                uint64_t any = 0;

                for (unsigned int i = 0; i < PTT_PAYLOAD_BUCKETS; i++) {
                        json_object *e = json_object_new_object();

                        any += st->payload_hist[d][i];
                        json_object_object_add(e, "le", json_u64(ptt_payload_bucket_le(i)));
                        json_object_object_add(e, "count", json_u64(st->payload_hist[d][i]));
                        json_object_array_add(b, e);
                }
                if (any)
                        json_object_object_add(ph, ptt_dir_name(d), b);
                else
                        json_object_put(b);
        }
        json_object_object_add(o, "payload_sizes", ph);
        json_object_object_add(lat, "unit", json_object_new_string(ptt_summary_time_unit(s)));
        json_object_object_add(lat, "enabled", json_object_new_boolean(m->enabled));
        json_object_object_add(lat, "matched", json_u64(m->matched_first));
        json_object_object_add(lat, "requests", json_u64(m->requests));
        json_object_object_add(lat, "completions", json_u64(m->completions));
        json_object_object_add(lat, "unmatched_requests", json_u64(m->unmatched_requests));
        json_object_object_add(lat, "incomplete_requests", json_u64(m->incomplete_requests));
        json_object_object_add(lat, "unmatched_completions", json_u64(m->unmatched_completions));
        json_object_object_add(lat, "tag_reuse", json_u64(m->tag_reuse));
        json_object_object_add(lat, "first", json_hist(s, &st->lat_first));
        json_object_object_add(lat, "last", json_hist(s, &st->lat_last));
        json_object_object_add(o, "latency", lat);
        return o;
}

/* ---- the command ---- */

static void no_data(const char *path, const struct perf_data_info *info)
{
        if (info->kind == PERF_DATA_FILE && !info->data_size)
                cli_error("%s: no PTT data: the header's data section is empty (was perf record "
                          "killed before it wrote the header?)",
                          path);
        else
                cli_error("%s: no PTT data (no AUXTRACE record)", path);
}

static int walk_error(const char *path, int err, const struct perf_data_error *pe)
{
        if (err == -EINVAL && !pe->msg[0])
                cli_error("%s: %s", path, strerror(-err));
        else
                cli_error("%s: byte offset %" PRIu64 " (%#" PRIx64 "): %s", path, pe->offset,
                          pe->offset, pe->msg);
        return CLI_EXIT_ERROR;
}

/* A perf.data without AUXTRACE_INFO recorded no trace at all (cpu-clock,
 * cycles...): say so instead of printing an empty report. */
static int not_a_trace(const char *path, const struct perf_data_info *info)
{
        cli_error("%s: not a PCIe trace recording: no AUXTRACE_INFO record in %" PRIu64
                  " records (record with -e hisi_ptt<sicl>_<core>/...; --raw for AUX bytes)",
                  path, info->records);
        return CLI_EXIT_ERROR;
}

static int open_input(const struct cli_opts *opts, const char *path, struct perf_data_map *map)
{
        uint64_t max = opts->trace_max_size ? opts->trace_max_size : PERF_DATA_DEFAULT_MAX_SIZE;
        int err = perf_data_map_max(path, max, map);

        if (err == -EFBIG) {
                cli_error("%s: more than %" PRIu64 " bytes from a pipe, device or stdin "
                          "(--max-size; a regular file has no limit)",
                          path, max);
                return -1;
        }
        if (err) {
                cli_error("%s: %s", path, strerror(-err));
                return -1;
        }
        return 0;
}

static int trace_dump(const struct cli_opts *opts, const char *path)
{
        struct perf_data_map map;
        struct perf_data_info info;
        struct perf_data_error pe;
        struct dump_ctx dc;
        int err;

        memset(&dc, 0, sizeof(dc));
        dc.raw = opts->trace_raw;
        /* Gigabytes of text: 1 MiB writes instead of stdio's 4 KiB (glibc
         * takes the size only with a buffer). */
        setvbuf(stdout, dump_outbuf, _IOFBF, sizeof(dump_outbuf));
        if (open_input(opts, path, &map))
                return CLI_EXIT_ERROR;
        progress_start(&dc.progress, map.len);
        err =
            perf_data_walk(map.data, map.len, opts->trace_raw ? PERF_DATA_RAW_AUX : PERF_DATA_AUTO,
                           dump_buffer, &dc, &info, &pe);
        progress_end(&dc.progress);
        fflush(stdout);
        perf_data_unmap(&map);
        if (err)
                return walk_error(path, err, &pe);
        if (info.kind != PERF_DATA_RAW_AUX && !info.auxtrace_info)
                return not_a_trace(path, &info);
        printf("\n# %s (%s): %" PRIu64 " buffers, %" PRIu64 " entries, %" PRIu64 " dwords shown\n",
               path, perf_data_kind_name(info.kind), info.buffers, dc.entries, dc.dwords);
        if (!info.buffers)
                no_data(path, &info);
        return CLI_EXIT_OK;
}

static int trace_report(const struct cli_opts *opts, const char *path)
{
        struct ptt_summary_config cfg;
        struct perf_data_map map;
        struct perf_data_info info;
        struct perf_data_error pe;
        struct report_ctx rc;
        const struct perf_data_attr *attr;
        int err, status = CLI_EXIT_OK;

        memset(&rc, 0, sizeof(rc));
        if (open_input(opts, path, &map))
                return CLI_EXIT_ERROR;
        /* A first pass without a callback finds the trace config (in pipe
         * mode it may come late) and every error before any output. */
        err =
            perf_data_walk(map.data, map.len, opts->trace_raw ? PERF_DATA_RAW_AUX : PERF_DATA_AUTO,
                           NULL, NULL, &info, &pe);
        if (err || (info.kind != PERF_DATA_RAW_AUX && !info.auxtrace_info)) {
                perf_data_unmap(&map);
                return err ? walk_error(path, err, &pe) : not_a_trace(path, &info);
        }
        ptt_summary_config_default(&cfg);
        attr = perf_data_ptt_attr(&info);
        if (attr)
                cfg.direction = PTT_CONFIG_DIRECTION(attr->config);
        cfg.time_mode = opts->trace_time_mode;
        cfg.clock_hz = opts->trace_clock_hz;
        rc.sum = ptt_summary_new(&cfg);
        if (!rc.sum) {
                cli_error("cannot set up the summary: %s", strerror(errno));
                perf_data_unmap(&map);
                return CLI_EXIT_ERROR;
        }
        progress_start(&rc.progress, map.len);
        err = perf_data_walk(map.data, map.len, info.kind, report_buffer, &rc, &info, &pe);
        progress_end(&rc.progress);
        if (err) {
                status = walk_error(path, err, &pe);
                goto out;
        }
        for (uint64_t i = 0; i < info.aux_truncated; i++)
                ptt_summary_note_truncated(rc.sum);
        for (uint64_t i = 0; i < info.aux_partial; i++)
                ptt_summary_note_partial(rc.sum);
        ptt_summary_window_end(rc.sum);
        if (opts->json) {
                json_object *o = json_report(path, rc.sum, &info, opts->trace_top);

                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
                json_object_put(o);
        } else {
                if (info.kind == PERF_DATA_RAW_AUX)
                        printf("%s (raw AUX dump): ", path);
                else
                        printf("%s (perf.data, %s mode): ", path, perf_data_kind_name(info.kind));
                if (attr)
                        printf("hisi_ptt PMU type %u, config %#" PRIx64
                               " (direction %d, type %#x, format %s)\n",
                               attr->type, attr->config, PTT_CONFIG_DIRECTION(attr->config),
                               PTT_CONFIG_TYPE(attr->config),
                               PTT_CONFIG_FORMAT(attr->config) ? "8DW" : "4DW");
                else
                        printf("trace config not recorded (direction unknown)\n");
                printf("time: %s; ", ptt_time_mode_name(cfg.time_mode));
                if (cfg.clock_hz)
                        printf("clock %" PRIu64 " Hz, latencies in ns\n", cfg.clock_hz);
                else
                        printf("clock unknown, latencies in ticks (see --clock-hz)\n");
                print_text(rc.sum, &info, opts->trace_top);
        }
        if (!info.buffers)
                no_data(path, &info);
out:
        ptt_summary_free(rc.sum);
        perf_data_unmap(&map);
        return status;
}

/* The dispatcher chose the sub-command and checked that FILE is there. */
int cmd_trace_dump(const struct cli_opts *opts, struct engine *e)
{
        (void)e;
        return trace_dump(opts, opts->args[0]);
}

int cmd_trace_report(const struct cli_opts *opts, struct engine *e)
{
        (void)e;
        return trace_report(opts, opts->args[0]);
}
