// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_pace.c - the fleet rules of the sender (writer/rw_pace): full
 * jitter stays within [0, backoff) and is uniform there, a Retry-After is
 * never shortened and lengthened by at most a tenth, seeds differ between
 * hosts and runs; the send phase is a stable function of the host name and
 * a thousand names spread evenly over the period; the replay limiter lets
 * live data through unthrottled, drains a backlog at ReplayShare times the
 * live rate, starts without a burst after an outage, keeps the one stream's
 * order and loses nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "rw_pace.h"

#define N_DRAWS 200000

static void test_full_jitter_bounds_and_uniformity(void **state)
{
        static const double ceilings[] = {0.03, 0.96, 5, 300};
        struct rw_rng r;

        (void)state;
        rw_rng_seed(&r, 42);
        for (size_t c = 0; c < sizeof(ceilings) / sizeof(*ceilings); c++) {
                double cap = ceilings[c], sum = 0, lo = cap, hi = 0;
                unsigned bins[10] = {0};

                for (int i = 0; i < N_DRAWS; i++) {
                        double v = rw_jitter_full(&r, cap);

                        assert_true(v >= 0 && v < cap);
                        sum += v;
                        lo = v < lo ? v : lo;
                        hi = v > hi ? v : hi;
                        bins[(int)(v / cap * 10)]++;
                }
                /* Mean cap/2 within 1 %; the whole range is used; each
                 * tenth holds 10 % +- 0.5 % of the draws. */
                assert_true(fabs(sum / N_DRAWS - cap / 2) < cap * 0.01);
                assert_true(lo < cap * 0.001 && hi > cap * 0.999);
                for (int b = 0; b < 10; b++)
                        assert_true(bins[b] > N_DRAWS / 10 * 0.95 && bins[b] < N_DRAWS / 10 * 1.05);
        }
        assert_true(rw_jitter_full(&r, 0) == 0);
}

static void test_retry_after_spread(void **state)
{
        struct rw_rng r;
        double lo = 1e9, hi = 0;

        (void)state;
        rw_rng_seed(&r, 7);
        for (int i = 0; i < N_DRAWS; i++) {
                double v = rw_jitter_retry_after(&r, 30);

                /* Never shorter than the receiver asked; at most a tenth more. */
                assert_true(v >= 30 && v < 30 * (1 + RW_RETRY_AFTER_SPREAD));
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
        }
        assert_true(lo < 30.01 && hi > 32.99);
}

static void test_seeds(void **state)
{
        struct rw_rng a, b;

        (void)state;
        /* An injected seed repeats; hosts, pids and times give other ones. */
        rw_rng_seed(&a, 1234);
        rw_rng_seed(&b, 1234);
        for (int i = 0; i < 100; i++)
                assert_true(rw_rng_next(&a) == rw_rng_next(&b));
        assert_true(rw_seed_mix("host-0001", 100, 5) != rw_seed_mix("host-0002", 100, 5));
        assert_true(rw_seed_mix("host-0001", 100, 5) != rw_seed_mix("host-0001", 101, 5));
        assert_true(rw_seed_mix("host-0001", 100, 5) != rw_seed_mix("host-0001", 100, 6));
        /* 1,000 hosts that failed at the same instant: their first
         * retries spread evenly over the backoff (no tenth holds more
         * than 15 % of them). */
        {
                unsigned bins[10] = {0};

                for (int h = 0; h < 1000; h++) {
                        char name[32];

                        snprintf(name, sizeof(name), "host-%04d", h);
                        rw_rng_seed(&a, rw_seed_mix(name, 4242, 1700000000000000000ull));
                        bins[(int)(rw_jitter_full(&a, 5) / 5 * 10)]++;
                }
                for (int i = 0; i < 10; i++)
                        assert_true(bins[i] >= 50 && bins[i] <= 150);
        }
}

static void test_phase_stable_and_spread(void **state)
{
        unsigned bins[10] = {0};

        (void)state;
        /* The same name, the same phase: on every call, every run and every
         * build (the hash is pinned: changing it moves every host of a
         * fleet at the next upgrade). */
        assert_true(rw_hash64("pciescope") == rw_hash64("pciescope"));
        assert_true(rw_hash64("pciescope") == 0x02e753ad604fee52ull);
        assert_true(rw_phase_offset("host-0001/vm", 5) == rw_phase_offset("host-0001/vm", 5));
        assert_true(rw_phase_offset("host-0001/vm", 5) != rw_phase_offset("host-0002/vm", 5));
        for (int h = 0; h < 1000; h++) {
                char name[32];
                double o;

                snprintf(name, sizeof(name), "host-%04d/vm", h);
                o = rw_phase_offset(name, 5);
                assert_true(o >= 0 && o < 5);
                bins[(int)(o / 5 * 10)]++;
        }
        /* Even: 100 a tenth expected, none outside 70..130. */
        for (int i = 0; i < 10; i++)
                assert_true(bins[i] >= 70 && bins[i] <= 130);
}

/* The receiver of a host: stable (pinned values), even over a fleet's
 * names, and consistent: adding a receiver moves only the hosts it takes. */
static void test_shard_even_and_consistent(void **state)
{
        enum { N = 10000 };
        static const uint32_t sizes[] = {2, 3, 5, 16};
        char name[32];

        (void)state;
        /* Pinned: a change would move hosts between receivers at the next
         * upgrade (remote_write_tenancy.sh computes these independently). */
        assert_int_equal(rw_shard("fleet-00001", 3), 2);
        assert_int_equal(rw_shard("fleet-00090", 3), 0);
        assert_int_equal(rw_shard("fleet-00002", 16), 12);
        assert_int_equal(rw_shard("pciescope", 1000), 64);
        assert_int_equal(rw_shard("fleet-00001", 1), 0);
        assert_int_equal(rw_shard("fleet-00001", 0), 0);
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                uint32_t n = sizes[z], count[16] = {0}, moved = 0, lo = N, hi = 0;

                for (int i = 1; i <= N; i++) {
                        uint32_t a, b;

                        snprintf(name, sizeof(name), "fleet-%05d", i);
                        a = rw_shard(name, n);
                        b = rw_shard(name, n + 1);
                        assert_true(a < n && b < n + 1);
                        count[a]++;
                        /* A host moves only to the new receiver. */
                        if (a != b) {
                                assert_int_equal(b, n);
                                moved++;
                        }
                }
                for (uint32_t k = 0; k < n; k++) {
                        lo = count[k] < lo ? count[k] : lo;
                        hi = count[k] > hi ? count[k] : hi;
                }
                /* As even as random: each count within 4 standard
                 * deviations of the binomial (N, 1/n), sd/mean =
                 * sqrt((n - 1) / N): 4 % at n = 2, 15 % at n = 16. */
                {
                        double mean = (double)N / n, sd = sqrt(mean * (1 - 1.0 / n));

                        assert_true(hi <= mean + 4 * sd && lo >= mean - 4 * sd);
                }
                /* About N/(n+1) move. */
                assert_true(moved > (uint32_t)(N / (n + 1) * 0.85) &&
                            moved < (uint32_t)(N / (n + 1) * 1.15));
        }
}

static void test_phase_next(void **state)
{
        static const double afters[] = {0, 0.5, 1.25, 1.2500001, 1e9 + 0.3, 1.8e9 + 4.9999};

        (void)state;
        for (size_t i = 0; i < sizeof(afters) / sizeof(*afters); i++) {
                double t = rw_phase_next(afters[i], 5, 1.25), k = (t - 1.25) / 5;

                assert_true(t > afters[i]);
                assert_true(t - 5 <= afters[i]);
                assert_true(fabs(k - round(k)) < 1e-6);
        }
        assert_true(rw_phase_next(1.25, 5, 1.25) == 6.25);
        assert_true(rw_phase_next(3, 0, 1) == 3);
}

/* ---- the replay limiter, in a model of the endpoint ---------------------
 * One host: every `interval` s `per_push` live samples arrive and become one
 * record at the end of the ordered stream (the spool). The receiver is down
 * in [down_from, down_to); a failed request is retried after 1 s, ungated
 * (the endpoint's rule). The model steps by 10 ms. */
struct sim {
        double share, interval, down_from, down_to, end;
        unsigned per_push;
        double max_request; /* MaxSamplesPerSend (0: 2000) */
        /* results */
        unsigned sent_records, requests_in_first_s, max_per_10s_after;
        double max_latency;  /* the longest a record waited, outside the outage */
        double caught_up_at; /* the first instant the stream was empty after down_to */
        int last_seq;
        bool in_order;
        unsigned long long sent_samples, pushed_samples;
};

#define MAX_REC 100000

static void simulate(struct sim *s)
{
        static int fifo[MAX_REC];
        static unsigned fifo_samples[MAX_REC];
        static double fifo_at[MAX_REC];
        static double sent_at[MAX_REC];
        size_t head = 0, tail = 0, nsent = 0;
        struct rw_limiter l;
        double next_push = 0.001, retry_at = -1;
        int seq = 0;
        uint64_t live = 0;
        bool retrying = false;

        rw_limiter_init(&l, s->share, s->max_request > 0 ? s->max_request : 2000, 0);
        s->last_seq = -1;
        s->in_order = true;
        s->caught_up_at = -1;
        for (long step = 0; step * 0.01 < s->end; step++) {
                double now = step * 0.01;
                bool down = now >= s->down_from && now < s->down_to;

                if (now >= next_push) {
                        fifo_at[tail] = now;
                        fifo[tail] = seq++;
                        fifo_samples[tail++] = s->per_push;
                        live += s->per_push;
                        s->pushed_samples += s->per_push;
                        next_push += s->interval;
                }
                rw_limiter_credit(&l, live, now);
                live = 0;
                if (head == tail) {
                        if (now >= s->down_to && s->caught_up_at < 0 && s->sent_records > 0)
                                s->caught_up_at = now;
                        continue;
                }
                if (retrying && now < retry_at)
                        continue;
                if (!retrying && rw_limiter_wait(&l, now) > 0)
                        continue;
                if (down) {
                        retrying = true;
                        retry_at = now + 1;
                        rw_limiter_failed(&l);
                        continue;
                }
                retrying = false;
                rw_limiter_charge(&l, fifo_samples[head], now);
                if (fifo[head] <= s->last_seq)
                        s->in_order = false;
                s->last_seq = fifo[head];
                s->sent_samples += fifo_samples[head];
                if (now - fifo_at[head] > s->max_latency)
                        s->max_latency = now - fifo_at[head];
                sent_at[nsent++] = now;
                s->sent_records++;
                head++;
        }
        /* Requests in the first second after the receiver came back, and
         * the most in any 10 s window after it. */
        for (size_t i = 0; i < nsent; i++) {
                unsigned n = 0;

                if (sent_at[i] < s->down_to)
                        continue;
                if (sent_at[i] < s->down_to + 1)
                        s->requests_in_first_s++;
                for (size_t j = i; j < nsent && sent_at[j] < sent_at[i] + 10; j++)
                        n++;
                if (n > s->max_per_10s_after)
                        s->max_per_10s_after = n;
        }
}

static void test_limiter_steady_is_unthrottled(void **state)
{
        struct sim s = {.share = 1,
                        .interval = 10,
                        .per_push = 1300,
                        .down_from = 1e9,
                        .down_to = 1e9,
                        .end = 600};

        (void)state;
        simulate(&s);
        /* Every record left within one step of arriving (60 pushes, 60
         * sent), from the first one on. */
        assert_int_equal(s.sent_records, 60);
        assert_true(s.max_latency < 0.015);
        assert_true(s.in_order);
        assert_true(s.sent_samples == s.pushed_samples);
}

/* Small requests from the start (MaxSamplesPerSend 1, two samples a
 * second): the budget the limiter starts with is two samples, so from the
 * third on live data leaves only as fast as the learnt live rate allows. A
 * smoothing that took its first seconds for a fraction of the rate held a
 * fresh sender's live data back for about a minute. */
static void test_limiter_fresh_start_is_unthrottled(void **state)
{
        struct sim s = {.share = 1,
                        .interval = 0.5,
                        .per_push = 1,
                        .max_request = 1,
                        .down_from = 1e9,
                        .down_to = 1e9,
                        .end = 60};

        (void)state;
        simulate(&s);
        assert_true(s.max_latency < 0.5);
        assert_true(s.sent_samples + 1 >= s.pushed_samples);
        assert_true(s.in_order);
}

static void test_limiter_replay_rate_and_order(void **state)
{
        static const double shares[] = {0.25, 0.5, 1, 2};

        (void)state;
        for (size_t i = 0; i < sizeof(shares) / sizeof(*shares); i++) {
                /* 130 samples/s live, as a host of 1,300 series at 10 s; a
                 * 300 s outage. */
                struct sim s = {.share = shares[i],
                                .interval = 10,
                                .per_push = 1300,
                                .down_from = 60,
                                .down_to = 360,
                                .end = 360 + 300 / shares[i] + 120};
                double catch_up, want = 300 / shares[i];

                simulate(&s);
                catch_up = s.caught_up_at - s.down_to;
                print_message("share %.2f: caught up %.0f s after the outage (model %.0f s), "
                              "first second %u requests, at most %u requests per 10 s\n",
                              s.share, catch_up, want, s.requests_in_first_s, s.max_per_10s_after);
                /* Catch-up takes outage / share, within one interval and
                 * 10 %; order holds; nothing lost; no burst: the first
                 * second after the outage sends the retry only (what arrived
                 * while it failed saved up no credit),
                 * no 10 s window more than (1 + share) intervals' worth
                 * plus that one. */
                assert_true(s.caught_up_at > 0);
                assert_true(fabs(catch_up - want) <= want * 0.1 + s.interval);
                assert_true(s.in_order);
                assert_true(s.sent_samples == s.pushed_samples);
                assert_true(s.requests_in_first_s <= 1);
                assert_true(s.max_per_10s_after <= (unsigned)ceil(1 + s.share) + 1);
        }
}

static void test_limiter_off_replays_at_once(void **state)
{
        struct sim s = {.share = 0,
                        .interval = 10,
                        .per_push = 1300,
                        .down_from = 60,
                        .down_to = 360,
                        .end = 400};

        (void)state;
        simulate(&s);
        /* The old behaviour: the whole backlog (30 records) in the first
         * second. */
        assert_true(s.requests_in_first_s >= 30);
        assert_true(s.in_order);
        assert_true(s.sent_samples == s.pushed_samples);
}

static void test_limiter_moves_without_live_data(void **state)
{
        struct rw_limiter l;

        (void)state;
        rw_limiter_init(&l, 1, 2000, 0);
        /* The two requests a new limiter lets go, and one more. */
        rw_limiter_charge(&l, 2000, 0);
        rw_limiter_charge(&l, 2000, 0);
        rw_limiter_charge(&l, 650, 0);
        /* No live samples: a request at least every RW_REPLAY_MAX_WAIT. */
        assert_true(rw_limiter_wait(&l, 1) > 0);
        assert_true(rw_limiter_wait(&l, 1) <= 1);
        assert_true(rw_limiter_wait(&l, RW_REPLAY_MAX_WAIT) == 0);
        /* The debt is bounded: a request is never split, nor is one
         * request's debt carried for ever. */
        rw_limiter_charge(&l, 100000, 10);
        assert_true(l.budget >= -2000);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_jitter_bounds_and_uniformity),
            cmocka_unit_test(test_retry_after_spread),
            cmocka_unit_test(test_seeds),
            cmocka_unit_test(test_phase_stable_and_spread),
            cmocka_unit_test(test_phase_next),
            cmocka_unit_test(test_shard_even_and_consistent),
            cmocka_unit_test(test_limiter_steady_is_unthrottled),
            cmocka_unit_test(test_limiter_fresh_start_is_unthrottled),
            cmocka_unit_test(test_limiter_replay_rate_and_order),
            cmocka_unit_test(test_limiter_off_replays_at_once),
            cmocka_unit_test(test_limiter_moves_without_live_data),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
