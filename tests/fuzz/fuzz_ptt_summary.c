// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_ptt_summary.c - libFuzzer target: random bytes through decode and
 * the summariser, with a configuration taken from the first bytes (small
 * tables, so expiry and the "other" requester row are reached), windows
 * ended and started, and every result read back.
 *
 * The three summaries live across inputs and start each one with
 * ptt_summary_reset() (test_ptt_summary's test_reset shows a reset one
 * counts as a new one): a new one is ~400 KiB of zeroed requester indexes,
 * which under ASan cost an mmap, page faults and an munmap per input and
 * held this target to ~200 execs/s.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptt_summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_back(const struct ptt_stats *st)
{
        static struct ptt_requester_row rows[8];
        size_t n = ptt_stats_requesters(st, 4, rows, 8);
        uint64_t sum = 0;

        if (n > 5)
                __builtin_trap();
        for (size_t i = 0; i < n; i++)
                sum += rows[i].total.tlps;
        if (sum != st->cov.tlps)
                __builtin_trap();
        for (int which = 0; which < 2; which++) {
                const struct ptt_hist *h = which ? &st->lat_last : &st->lat_first;
                uint64_t p50 = ptt_hist_quantile(h, 0.5), p99 = ptt_hist_quantile(h, 0.99);

                if (p50 > p99 || p99 > h->max ||
                    ptt_hist_cumulative(h, PTT_HIST_BUCKETS - 1) != h->count)
                        __builtin_trap();
        }
        if (st->match.matched_last > st->match.matched_first ||
            st->match.matched_first > st->match.requests)
                __builtin_trap();
}

/* The in-place feed path and entry-by-entry adding agree. */
static struct ptt_summary *reuse(struct ptt_summary **s, const struct ptt_summary_config *cfg)
{
        if (!*s)
                *s = ptt_summary_new(cfg);
        else if (ptt_summary_reset(*s, cfg))
                __builtin_trap();
        if (!*s)
                __builtin_trap();
        return *s;
}

static void check_paths_agree(const struct ptt_summary_config *cfg, const uint8_t *data,
                              size_t size)
{
        static struct ptt_summary *sa, *sb;
        struct ptt_summary *a = reuse(&sa, cfg), *b = reuse(&sb, cfg);
        enum ptt_format fmt = ptt_format_detect(data, size);
        size_t step = ptt_format_entry_size(fmt);
        const struct ptt_stats *x, *y;

        ptt_summary_feed(a, data, size);
        for (size_t off = 0; off + step <= size; off += step) {
                struct ptt_entry e;

                if (ptt_entry_decode(data + off, size - off, fmt, &e) > 0)
                        ptt_summary_add_entry(b, &e);
        }
        x = ptt_summary_window(a);
        y = ptt_summary_window(b);
        if (memcmp(x->by_kind, y->by_kind, sizeof(x->by_kind)) ||
            memcmp(&x->match, &y->match, sizeof(x->match)) ||
            memcmp(&x->lat_first, &y->lat_first, sizeof(x->lat_first)) ||
            memcmp(&x->lat_last, &y->lat_last, sizeof(x->lat_last)) || x->cov.tlps != y->cov.tlps ||
            x->cov.unknown_tlp != y->cov.unknown_tlp || x->cov.ticks != y->cov.ticks)
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct ptt_summary *kept;
        struct ptt_summary_config cfg;
        struct ptt_summary *s;
        uint64_t first_window;
        size_t split;

        if (size < 4)
                return 0;
        ptt_summary_config_default(&cfg);
        cfg.direction = (int)(data[0] % 5) - 1;
        cfg.time_mode = (data[1] & 1) ? PTT_TIME_ABSOLUTE : PTT_TIME_DELTA;
        cfg.match = (enum ptt_match_mode)((data[1] >> 1) % 3);
        cfg.clock_hz = (data[1] & 0x80) ? 100000000 : 0;
        cfg.max_requesters = 1 + data[2] % 8;
        cfg.max_outstanding = 1 + data[3] % 16;
        s = reuse(&kept, &cfg);
        data += 4;
        size -= 4;
        /* Two buffers; the second may continue the first's format. */
        split = size / 2;
        ptt_summary_feed(s, data, split);
        if (data[-1] & 1)
                ptt_summary_note_gap(s);
        ptt_summary_feed_format(s, data + split, size - split, ptt_format_detect(data, split));
        read_back(ptt_summary_window(s));
        ptt_summary_window_end(s);
        first_window = ptt_summary_window(s)->cov.tlps;
        ptt_summary_window_start(s);
        ptt_summary_feed(s, data + split, size - split);
        ptt_summary_note_lost(s, size);
        read_back(ptt_summary_total(s));
        ptt_summary_window_end(s);
        read_back(ptt_summary_window(s));
        read_back(ptt_summary_total(s));
        /* The total is the sum of the windows. */
        if (ptt_summary_total(s)->cov.tlps != first_window + ptt_summary_window(s)->cov.tlps)
                __builtin_trap();
        (void)ptt_summary_ticks_to_unit(s, ptt_summary_total(s)->cov.ticks);
        check_paths_agree(&cfg, data, size);
        return 0;
}
