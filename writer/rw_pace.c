// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_pace.c - jitter, send phase and replay limiter of a fleet's sender.
 */
#include "rw_pace.h"

#include <math.h>

#define RATE_TAU_S 30.0 /* smoothing of the live rate */

void rw_rng_seed(struct rw_rng *r, uint64_t seed)
{
        r->s = seed;
}

uint64_t rw_rng_next(struct rw_rng *r)
{
        uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

double rw_rng_uniform(struct rw_rng *r)
{
        /* The top 53 bits: every double in [0, 1) a multiple of 2^-53. */
        return (double)(rw_rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t fmix64(uint64_t k)
{
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        k ^= k >> 33;
        k *= 0xc4ceb9fe1a85ec53ull;
        k ^= k >> 33;
        return k;
}

uint64_t rw_hash64(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;

        for (; s && *s; s++) {
                h ^= (unsigned char)*s;
                h *= 0x100000001b3ull;
        }
        return fmix64(h);
}

/* The salt keeps the shard independent of rw_phase_offset's use of the
 * same hash. */
#define SHARD_SALT 0x5ca1ab1e0ddba11ull

uint32_t rw_shard(const char *key, uint32_t n)
{
        uint64_t k = fmix64(rw_hash64(key) ^ SHARD_SALT);
        int64_t b = 0, j = 0;

        if (n < 2)
                return 0;
        /* Jump from bucket to bucket while the next jump stays below n;
         * each step is where the key would move as buckets are added. */
        while (j < (int64_t)n) {
                b = j;
                k = k * 2862933555777941757ull + 1;
                j = (int64_t)((double)(b + 1) * ((double)(1ull << 31) / (double)((k >> 33) + 1)));
        }
        return (uint32_t)b;
}

uint64_t rw_seed_mix(const char *host, uint64_t pid, uint64_t nanoseconds)
{
        return fmix64(rw_hash64(host) ^ fmix64(pid + 0x9e3779b97f4a7c15ull) ^ fmix64(nanoseconds));
}

double rw_jitter_full(struct rw_rng *r, double ceiling)
{
        return ceiling > 0 ? ceiling * rw_rng_uniform(r) : 0;
}

double rw_jitter_retry_after(struct rw_rng *r, double asked)
{
        return asked > 0 ? asked + asked * RW_RETRY_AFTER_SPREAD * rw_rng_uniform(r) : 0;
}

double rw_phase_offset(const char *host, double period)
{
        return period > 0 ? period * ((double)(rw_hash64(host) >> 11) * 0x1.0p-53) : 0;
}

double rw_phase_next(double after, double period, double offset)
{
        double k, t;

        if (!(period > 0))
                return after;
        k = floor((after - offset) / period) + 1;
        t = offset + k * period;
        /* Rounding at large clock values: never at or before `after`. */
        while (t <= after)
                t += period;
        while (t - period > after)
                t -= period;
        return t;
}

void rw_limiter_init(struct rw_limiter *l, double share, double max_request, double now)
{
        l->share = share;
        /* Two requests at once, while the live rate is learnt (the budget
         * fills at the smoothed rate, which starts at 0). */
        l->budget = 2 * max_request;
        l->burst_min = 2 * max_request;
        l->debt_max = max_request;
        l->rate = 0;
        l->ema = 0;
        l->weight = 0;
        l->last_time = now;
        l->last_send = now;
        l->failing = false;
}

static double cap(const struct rw_limiter *l)
{
        double c = (1 + l->share) * l->rate * 2 * RW_REPLAY_MAX_WAIT;

        return c > l->burst_min ? c : l->burst_min;
}

void rw_limiter_credit(struct rw_limiter *l, uint64_t live, double now)
{
        double dt = now - l->last_time;

        if (dt > 0) {
                double a = exp(-dt / RATE_TAU_S);

                l->ema = l->ema * a + (double)live * (1 - a) / dt;
                l->weight = l->weight * a + (1 - a);
                l->last_time = now;
        } else {
                l->ema += (double)live / RATE_TAU_S;
                dt = 0;
        }
        /* Divided by the weight of the time seen so far: a smoothing that
         * starts at 0 would take the live rate for a fraction of itself for
         * its first RATE_TAU_S and hold live data back after a start. */
        l->rate = l->weight > 0 ? l->ema / l->weight : 0;
        /* The credit flows at the smoothed rate, not in steps when samples
         * arrive: a fleet's hosts read at the same instant, and credit in
         * steps would release every host's next replay request at that
         * instant (a lockstep of its own). Flowing, each host's next
         * request waits for its own debt, from its own (jittered) last
         * send. */
        l->budget += (1 + l->share) * l->rate * dt;
        if (l->budget > cap(l))
                l->budget = cap(l);
        /* While the receiver fails, what arrives joins the backlog: no
         * credit is saved up for the moment it is back. */
        if (l->failing && l->budget > 0)
                l->budget = 0;
}

double rw_limiter_wait(const struct rw_limiter *l, double now)
{
        double left = RW_REPLAY_MAX_WAIT - (now - l->last_send), w;

        if (l->share <= 0 || l->budget > 0 || left <= 0)
                return 0;
        /* Until the live rate brings the budget above 0. */
        w = l->rate > 0 ? (1 - l->budget) / ((1 + l->share) * l->rate) : left;
        if (w > left)
                w = left;
        /* Looked at again each second: live samples may come sooner than
         * the smoothed rate says. */
        if (w > 1)
                w = 1;
        return w < 0.001 ? 0.001 : w;
}

void rw_limiter_charge(struct rw_limiter *l, uint32_t samples, double now)
{
        l->budget -= samples;
        if (l->budget < -l->debt_max)
                l->budget = -l->debt_max;
        l->last_send = now;
        l->failing = false;
}

void rw_limiter_failed(struct rw_limiter *l)
{
        if (l->budget > 0)
                l->budget = 0;
        l->failing = true;
}
