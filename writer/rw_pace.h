/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_pace.h - when a sender of a fleet sends (pure: no clock, no I/O; the
 * caller passes the time). Three rules keep a thousand hosts from acting as
 * one:
 *
 *  - Full jitter on retry backoff (the AWS "full jitter" rule): a retry
 *    waits a random time in [0, min(MaxBackoff, MinBackoff * 2^n)), drawn
 *    from a generator of its own seeded from the host name, the process id
 *    and the time, so hosts that failed at the same instant do not retry at
 *    the same instant. A receiver's Retry-After is honoured as asked (never
 *    shorter) plus a random 0 to RW_RETRY_AFTER_SPREAD of it, so one 503
 *    with "Retry-After: 30" to every host does not bring them back in the
 *    same second.
 *
 *  - A send phase per host: batches leave at the instants where
 *    (wall clock - offset) is a multiple of BatchDeadline, the offset a
 *    stable hash of the host name. A restart keeps it; a fleet's names
 *    spread evenly over the period.
 *
 *  - A bounded replay rate: after an outage the endpoint sends at most
 *    (1 + ReplayShare) times the rate samples arrive, until its backlog is
 *    gone. Live samples never wait for replay budget (each arriving sample
 *    brings its own), the backlog shrinks at ReplayShare times the live
 *    rate. The limiter is a gate in front of the one ordered stream (the
 *    spool, or the queue), never a second queue: nothing is reordered, so
 *    every series stays in timestamp order by construction.
 */
#ifndef PCIESCOPE_RW_PACE_H
#define PCIESCOPE_RW_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* A Retry-After pause is lengthened by a random 0..10 % of itself. */
#define RW_RETRY_AFTER_SPREAD 0.1

/* ReplayShare: default and upper bound. */
#define RW_REPLAY_SHARE_DEFAULT 1.0
#define RW_REPLAY_SHARE_MAX     1000.0
/* With no live samples arriving, the backlog still moves: one request at
 * least this often (s). */
#define RW_REPLAY_MAX_WAIT 10.0

/* splitmix64: small, fast, good enough for spreading retries. */
struct rw_rng {
        uint64_t s;
};

void rw_rng_seed(struct rw_rng *r, uint64_t seed);
uint64_t rw_rng_next(struct rw_rng *r);
/* Uniform in [0, 1). */
double rw_rng_uniform(struct rw_rng *r);

/* FNV-1a over the text, then a 64-bit finaliser (every bit of the name
 * reaches every bit of the hash). A stable function: the same name gives
 * the same phase on every build and every machine. */
uint64_t rw_hash64(const char *s);
/* Which of n receivers a host sends to (0..n-1; 0 when n < 2): jump
 * consistent hashing (Lamping and Veach, "A Fast, Minimal Memory,
 * Consistent Hash Algorithm", 2014) of the name's hash, salted so that it
 * is independent of the host's send phase. Each receiver gets 1/n of the
 * names, and going from n to n + 1 receivers moves only the 1/(n + 1) that
 * the new one takes; a stable function like rw_hash64. */
uint32_t rw_shard(const char *key, uint32_t n);

/* A seed that differs between hosts and between runs of one host: the
 * host name's hash mixed with `pid` and `nanoseconds` (the caller's
 * getpid() and clock). */
uint64_t rw_seed_mix(const char *host, uint64_t pid, uint64_t nanoseconds);

/* Full jitter: uniform in [0, ceiling). */
double rw_jitter_full(struct rw_rng *r, double ceiling);
/* A Retry-After pause: `asked` + uniform [0, RW_RETRY_AFTER_SPREAD * asked). */
double rw_jitter_retry_after(struct rw_rng *r, double asked);

/* The host's offset in [0, period): its name's hash scaled to the period. */
double rw_phase_offset(const char *host, double period);
/* The first instant t > `after` with (t - offset) a whole multiple of
 * period (all in seconds of the same clock, wall time for a phase that
 * survives restarts and lines up across hosts). */
double rw_phase_next(double after, double period, double offset);

/* The replay limiter: a budget of samples. It fills at 1 + share times the
 * live rate (smoothed over 30 s, so that it flows between the instants
 * samples arrive); a request may go while the budget is positive and costs its
 * samples (the budget may go negative: a request is never split). The
 * budget is capped (at two requests, or 20 s of credit at the live rate)
 * and a failed request empties it and saves up nothing until one goes:
 * no credit piles up while the receiver is down, to turn into a burst when
 * it is back. share 0: no limit. */
struct rw_limiter {
        double share;
        double budget;
        double burst_min; /* the cap is at least this (two requests) */
        double debt_max;  /* the budget never goes below -debt_max */
        double rate;      /* live samples/s, smoothed (for the wait estimate) */
        double ema;       /* the smoothing's running sum, and the weight of */
        double weight;    /* the time it has seen: rate = ema / weight */
        double last_time; /* of the last credit */
        double last_send; /* of the last charge */
        bool failing;     /* since a failed request, until one goes */
};

/* `max_request`: the most samples one request holds (MaxSamplesPerSend). */
void rw_limiter_init(struct rw_limiter *l, double share, double max_request, double now);
/* `live` samples arrived since the last call (the rate and the credit). */
void rw_limiter_credit(struct rw_limiter *l, uint64_t live, double now);
/* 0 when a request may go now, else how long to wait before asking again
 * (an estimate from the smoothed live rate, at most 1 s: more live samples
 * may come sooner). A request goes at least every RW_REPLAY_MAX_WAIT. */
double rw_limiter_wait(const struct rw_limiter *l, double now);
/* A request of `samples` went (sent or dropped, not retried). */
void rw_limiter_charge(struct rw_limiter *l, uint32_t samples, double now);
/* A request must be retried: the receiver is down or refusing. The credit
 * of the samples that arrive meanwhile is not saved up (they join the
 * backlog), so the end of an outage starts at the paced rate, not with a
 * burst. */
void rw_limiter_failed(struct rw_limiter *l);

#endif
